/*
 * xattr_check.c - extended-attribute blocks, as e2fsck checks them in pass
 * 1: each block the first time an inode names it, in inode order, and the
 * blocks' reference counts against the inodes naming them (counted in
 * ctx->xattrs, xattr_refs.c).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/codec.h"
#include "ext4fs/errors.h"
#include "ext4fs/xattr.h"
#include "clusters.h"
#include "context.h"
#include "problem.h"
#include "problems.h"
#include "xattr_check.h"

/* Parts of the block already accounted for, to catch entries and values that overlap. */
struct regions {
	struct { uint32_t start, end; } *part;
	size_t n;
	uint32_t size;
};

/* Claim [start, start + len): 1 when it overlaps a claimed part or leaves the block. */
static int region_taken(struct regions *r, uint32_t start, uint32_t len)
{
	uint64_t end = (uint64_t)start + len;

	if (end > r->size)
		return 1;
	for (size_t i = 0; i < r->n; i++)
		if (start < r->part[i].end && end > r->part[i].start)
			return 1;
	r->part[r->n].start = start;
	r->part[r->n].end = (uint32_t)end;
	r->n++;
	return 0;
}

#define XH_SIZE EXT4FS_XATTR_HEADER_SIZE
#define XE_SIZE EXT4FS_XATTR_ENTRY_SIZE

static int write_block(struct e4fsck *ctx, uint64_t blk, unsigned char *buf)
{
	if (ctx->geo->has_metadata_csum)
		ext4fs_xattr_header_csum_set(buf, ext4fs_xattr_block_csum(ctx->fs, blk, buf));
	int err = ext4fs_block_write(ctx->fs, blk, buf);
	if (err) {
		fsck_fatal(ctx, "%s while writing extended attribute block %llu: %s", ext4fs_strerror(err),
			   (unsigned long long)blk, ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/* Ask about code; 1 on a yes.  After preen mode stopped, nothing more is asked (-1). */
static int ask(struct e4fsck *ctx, uint32_t code, const struct problem_ctx *pctx)
{
	if (ctx->aborted)
		return -1;
	int yes = fix_problem(ctx, code, pctx);

	return ctx->aborted ? -1 : yes;
}

int xattr_block_check(struct e4fsck *ctx, uint32_t ino, uint64_t blk)
{
	struct xattr_ref *ref = xattr_table_find(&ctx->xattrs, blk);
	uint32_t bs = ctx->geo->block_size;
	struct problem_ctx pctx = { .ino = ino, .blk = blk };
	struct regions reg = { .size = bs };
	unsigned char *buf;
	/* EA inodes the entries name: counted once the block is kept (a shared block names each once). */
	uint32_t *inums;
	size_t ninums = 0;
	int keep = 0, rc = -1;

	if (ref && ref->checked)
		return 1;
	buf = malloc(bs);
	reg.part = malloc((bs / 4 + 2) * sizeof(*reg.part));
	inums = malloc((bs / XE_SIZE + 1) * sizeof(*inums));
	if (!buf || !reg.part || !inums) {
		fsck_fatal(ctx, "out of memory checking extended attribute blocks");
		goto out;
	}
	if (ext4fs_block_read(ctx->fs, blk, buf)) {
		if (ask(ctx, PR_1_READ_EA_BLOCK, &pctx) > 0)
			goto drop;
		memset(buf, 0, bs);
	}
	/* As e2fsck's reader: a block with a bad header is not checksummed. */
	struct ext4fs_xattr_header head;
	ext4fs_xattr_header_decode(buf, &head);
	int csum_bad = ctx->geo->has_metadata_csum && head.magic == EXT4FS_XATTR_MAGIC && head.blocks == 1 &&
		       head.checksum != ext4fs_xattr_block_csum(ctx->fs, blk, buf);
	if (head.magic != EXT4FS_XATTR_MAGIC && ask(ctx, PR_1_BAD_EA_BLOCK, &pctx) > 0)
		goto drop;
	if (head.blocks != 1 && ask(ctx, PR_1_EA_MULTI_BLOCK, &pctx) > 0)
		goto drop;
	region_taken(&reg, 0, XH_SIZE);
	uint32_t off = XH_SIZE;
	uint64_t value_blocks = 0;
	/* Each step claims at least four bytes, so the walk ends within the block. */
	while (off + 4 <= bs && !ext4fs_xattr_entry_is_end(buf + off) && !ctx->aborted) {
		unsigned char *e = buf + off;
		uint32_t len = (XE_SIZE + e[0] + 3) & ~3U;
		if (region_taken(&reg, off, len)) {
			if (ask(ctx, PR_1_EA_ALLOC_COLLISION, &pctx) > 0)
				goto drop;
			break;
		}
		/* Past the collision test, the entry's 16 bytes lie inside the block. */
		struct ext4fs_xattr_entry_head eh;
		ext4fs_xattr_entry_head_decode(e, &eh);
		if (eh.name_index == 0) {
			if (ask(ctx, PR_1_EA_BAD_NAME, &pctx) > 0)
				goto drop;
			break;
		}
		uint32_t value_offs = eh.value_offs, value_size = eh.value_size;
		if (!eh.value_inum) {
			if ((uint64_t)value_offs + value_size > bs) {
				if (ask(ctx, PR_1_EA_BAD_VALUE, &pctx) > 0)
					goto drop;
				break;
			}
			if (value_size && region_taken(&reg, value_offs, (value_size + 3) & ~3U) &&
			    ask(ctx, PR_1_EA_ALLOC_COLLISION, &pctx) > 0)
				goto drop;
			uint32_t want = ext4fs_xattr_entry_hash(e + XE_SIZE, eh.name_len, buf + value_offs, value_size, 0);
			uint32_t want_signed =
				ext4fs_xattr_entry_hash(e + XE_SIZE, eh.name_len, buf + value_offs, value_size, 1);
			uint32_t have = eh.hash;
			if (have != want && have != want_signed) {
				pctx.num = have;
				if (ask(ctx, PR_1_ATTR_HASH, &pctx) > 0)
					goto drop;
				ext4fs_xattr_entry_hash_set(e, want);
			}
		} else {
			value_blocks += cluster_value_blocks(bs, ext4fs_geom(ctx->fs)->cluster_ratio, value_size);
			inums[ninums++] = eh.value_inum;
		}
		off += len;
	}
	if (!ctx->aborted && region_taken(&reg, off, 4) && ask(ctx, PR_1_EA_ALLOC_COLLISION, &pctx) > 0)
		goto drop;
	/* Only a block that passed everything else gets its checksum fixed. */
	if (!ctx->aborted && csum_bad && ask(ctx, PR_1_EA_BLOCK_ONLY_CSUM_INVALID, &pctx) > 0 &&
	    write_block(ctx, blk, buf))
		goto out;
	if (ref) {
		ref->checked = 1;
		ref->stated = head.refcount;
		ref->value_blocks = value_blocks;
	}
	for (size_t k = 0; k < ninums; k++)
		if (xattr_table_add(&ctx->ea_inode_refs, inums[k], 1, ino)) {
			fsck_fatal(ctx, "out of memory counting EA inode references");
			goto out;
		}
	keep = 1;
drop:
	rc = keep;
out:
	free(inums);
	free(reg.part);
	free(buf);
	return rc;
}

static int cmp_blk(const void *a, const void *b)
{
	const struct xattr_ref *x = *(const struct xattr_ref *const *)a, *y = *(const struct xattr_ref *const *)b;

	return x->blk < y->blk ? -1 : x->blk > y->blk;
}

/*
 * As e2fsck: in block order, first the blocks whose count is too high, then
 * those named by more inodes than they count.
 */
int xattr_refcounts_check(struct e4fsck *ctx)
{
	const struct xattr_table *t = &ctx->xattrs;
	unsigned char *buf = malloc(ctx->geo->block_size);
	struct xattr_ref **order = malloc((t->used ? t->used : 1) * sizeof(*order));
	size_t n = 0;
	int rc = -1;

	if (!buf || !order) {
		fsck_fatal(ctx, "out of memory checking extended attribute blocks");
		goto out;
	}
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].in_use && t->slots[i].checked && t->slots[i].refs)
			order[n++] = &t->slots[i];
	qsort(order, n, sizeof(*order), cmp_blk);
	for (int too_many = 0; too_many < 2; too_many++) {
		for (size_t i = 0; i < n && !ctx->aborted; i++) {
			const struct xattr_ref *r = order[i];
			struct problem_ctx pctx = { .blk = r->blk, .num = r->refs, .num2 = r->stated };
			/* The count as the check read it: the block is read again only to fix it. */
			if (r->stated == r->refs || (r->stated > r->refs) == too_many)
				continue;
			if (fix_problem(ctx, PR_1_EXTATTR_REFCOUNT, &pctx) && !ext4fs_block_read(ctx->fs, r->blk, buf)) {
				ext4fs_xattr_header_refcount_set(buf, r->refs);
				if (write_block(ctx, r->blk, buf))
					goto out;
			}
		}
	}
	rc = 0;
out:
	free(order);
	free(buf);
	return rc;
}
