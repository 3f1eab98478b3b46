/*
 * xattr_refs.c - counting the inodes that name each extended-attribute
 * block (see xattr_refs.h); the blocks themselves are checked in
 * xattr_check.c.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "xattr_refs.h"

static size_t slot_of(const struct xattr_table *t, uint64_t blk)
{
	uint64_t h = blk * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h ^ (h >> 31)) & (t->cap - 1);
}

static struct xattr_ref *slot_for(const struct xattr_table *t, uint64_t blk)
{
	size_t i = slot_of(t, blk);

	while (t->slots[i].in_use && t->slots[i].blk != blk)
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
		if (t->slots[i].in_use)
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
	if (r->in_use) {
		r->refs += refs;
		if (ino < r->first_ino)
			r->first_ino = ino;
		return 0;
	}
	*r = (struct xattr_ref){ .in_use = 1, .blk = blk, .refs = refs, .first_ino = ino };
	t->used++;
	return 0;
}

int xattr_table_merge(struct xattr_table *dst, const struct xattr_table *src)
{
	for (size_t i = 0; i < src->cap; i++)
		if (src->slots[i].in_use &&
		    xattr_table_add(dst, src->slots[i].blk, src->slots[i].refs, src->slots[i].first_ino))
			return -1;
	return 0;
}

void xattr_table_free(struct xattr_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

struct xattr_ref *xattr_table_find(const struct xattr_table *t, uint64_t blk)
{
	if (!t->cap)
		return NULL;
	struct xattr_ref *r = slot_for(t, blk);
	return r->in_use ? r : NULL;
}
