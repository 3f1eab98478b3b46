/*
 * xattr_refs.c - counting the inodes that name each extended-attribute
 * block (see xattr_refs.h), and checking the blocks' reference counts.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "e4fsck.h"
#include "problem.h"
#include "problems.h"
#include "xattr_refs.h"

#define XATTR_MAGIC 0xEA020000U

static size_t slot_of(const struct xattr_table *t, uint64_t blk)
{
	uint64_t h = blk * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h ^ (h >> 31)) & (t->cap - 1);
}

static struct xattr_ref *slot_for(const struct xattr_table *t, uint64_t blk)
{
	size_t i = slot_of(t, blk);

	while (t->slots[i].blk && t->slots[i].blk != blk)
		i = (i + 1) & (t->cap - 1);
	return &t->slots[i];
}

static int grow(struct xattr_table *t)
{
	struct xattr_table bigger = { calloc(t->cap ? t->cap * 2 : 256, sizeof(struct xattr_ref)),
				      t->cap ? t->cap * 2 : 256, t->used };

	if (!bigger.slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].blk)
			*slot_for(&bigger, t->slots[i].blk) = t->slots[i];
	free(t->slots);
	*t = bigger;
	return 0;
}

int xattr_table_add(struct xattr_table *t, uint64_t blk, uint32_t refs, uint32_t ino)
{
	if ((t->used + 1) * 2 > t->cap && grow(t))
		return -1;
	struct xattr_ref *r = slot_for(t, blk);
	if (r->blk) {
		r->refs += refs;
		if (ino < r->first_ino)
			r->first_ino = ino;
		return 0;
	}
	*r = (struct xattr_ref){ blk, refs, ino };
	t->used++;
	return 0;
}

int xattr_table_merge(struct xattr_table *dst, const struct xattr_table *src)
{
	for (size_t i = 0; i < src->cap; i++)
		if (src->slots[i].blk &&
		    xattr_table_add(dst, src->slots[i].blk, src->slots[i].refs, src->slots[i].first_ino))
			return -1;
	return 0;
}

void xattr_table_free(struct xattr_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int xattr_refcounts_check(struct e4fsck *ctx)
{
	const struct xattr_table *t = &ctx->xattrs;
	unsigned char *buf = malloc(ctx->geo->block_size);

	if (!buf) {
		fsck_fatal(ctx, "out of memory checking extended attribute blocks");
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		const struct xattr_ref *r = &t->slots[i];
		struct problem_ctx pctx = { .blk = r->blk, .ino = r->first_ino };
		if (!r->blk)
			continue;
		if (ext4fs_block_read(ctx->fs, r->blk, buf) || le32(buf) != XATTR_MAGIC) {
			fix_problem(ctx, PR_1_READ_EA_BLOCK, &pctx);
			continue;
		}
		uint32_t refcount = le32(buf + 4);
		if (refcount != r->refs) {
			pctx.num = r->refs;
			pctx.num2 = refcount;
			fix_problem(ctx, PR_1_EXTATTR_REFCOUNT, &pctx);
		}
	}
	free(buf);
	return 0;
}
