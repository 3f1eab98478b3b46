/*
 * defrag_index.c - the sweep's owner index (see defrag_internal.h).
 *
 * Chunks hold up to CHUNK owners each, sorted; the chunks themselves are
 * in block order, so the owners are sorted from the first chunk's first to
 * the last chunk's last.  A search is two binary searches: the first chunk
 * whose last owner ends after the block, then the owner in it.  Adding to
 * a full chunk splits it in two halves; a chunk left empty is dropped.
 * Chunks are never merged: a sweep only shrinks its index as members are
 * placed, and a sparse chunk costs no more than a search step.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/inode.h"
#include "defrag_internal.h"
#include "fs_internal.h"

#define CHUNK 256u
/* Bulk loading leaves room in each chunk, so the first adds do not split. */
#define LOAD_FILL (CHUNK * 3u / 4u)

struct ext4fs__owner_chunk {
	size_t n;
	struct ext4fs__owner e[CHUNK];
};

static uint64_t end_of(const struct ext4fs__owner *e)
{
	return e->pblk + e->len;
}

static int by_block(const void *a, const void *b)
{
	const struct ext4fs__owner *x = a, *y = b;

	return x->pblk < y->pblk ? -1 : x->pblk > y->pblk;
}

static int overlap(struct ext4fs_fs *fs, const struct ext4fs__owner *a, const struct ext4fs__owner *b)
{
	return ext4fs__fs_fail(fs, EXT4FS_E_BLOCK_STATE,
			       "block %llu belongs to inodes %u and %u: check the file system first",
			       (unsigned long long)b->pblk, a->ino, b->ino);
}

/* A new chunk at position at of the list.  NULL when out of memory. */
static struct ext4fs__owner_chunk *chunk_insert(struct ext4fs__owner_index *ix, size_t at)
{
	struct ext4fs__owner_chunk *c, **grown;

	if (!(grown = ext4fs_array_grow(ix->chunks, &ix->cap, ix->nchunks + 1, sizeof(*ix->chunks), 16)))
		return NULL;
	ix->chunks = grown;
	if (!(c = malloc(sizeof(*c))))
		return NULL;
	c->n = 0;
	memmove(&ix->chunks[at + 1], &ix->chunks[at], (ix->nchunks - at) * sizeof(*ix->chunks));
	ix->chunks[at] = c;
	ix->nchunks++;
	return c;
}

int ext4fs__owners_load(struct ext4fs_fs *fs, struct ext4fs__owner_index *ix, struct ext4fs__owner *all, size_t n)
{
	if (n)
		qsort(all, n, sizeof(*all), by_block);
	for (size_t i = 1; i < n; i++)
		if (end_of(&all[i - 1]) > all[i].pblk)
			return overlap(fs, &all[i - 1], &all[i]);
	for (size_t i = 0; i < n; i += LOAD_FILL) {
		size_t k = n - i < LOAD_FILL ? n - i : LOAD_FILL;
		struct ext4fs__owner_chunk *c = chunk_insert(ix, ix->nchunks);

		if (!c)
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the block owners");
		memcpy(c->e, &all[i], k * sizeof(*all));
		c->n = k;
		ix->count += k;
	}
	return 0;
}

/* The first chunk whose last owner ends after blk (nchunks when none). */
static size_t chunk_after(const struct ext4fs__owner_index *ix, uint64_t blk)
{
	size_t lo = 0, hi = ix->nchunks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ext4fs__owner_chunk *c = ix->chunks[mid];

		if (end_of(&c->e[c->n - 1]) <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* In chunk c, the first owner that ends after blk (c->n when none). */
static size_t owner_after(const struct ext4fs__owner_chunk *c, uint64_t blk)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (end_of(&c->e[mid]) <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ext4fs__owner *ext4fs__owners_after(const struct ext4fs__owner_index *ix, uint64_t blk)
{
	size_t ci = chunk_after(ix, blk);

	return ci < ix->nchunks ? &ix->chunks[ci]->e[owner_after(ix->chunks[ci], blk)] : NULL;
}

int ext4fs__owners_add(struct ext4fs_fs *fs, struct ext4fs__owner_index *ix, const struct ext4fs__owner *e)
{
	size_t ci = chunk_after(ix, e->pblk), at;
	struct ext4fs__owner_chunk *c;
	const struct ext4fs__owner *next = NULL, *prev = NULL;

	if (ci == ix->nchunks && ci > 0)
		ci--;   /* after every owner: the last chunk takes it */
	if (ix->nchunks == 0) {
		if (!chunk_insert(ix, 0))
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the block owners");
		ci = 0;
	}
	c = ix->chunks[ci];
	at = owner_after(c, e->pblk);
	if (at < c->n)
		next = &c->e[at];
	else if (ci + 1 < ix->nchunks)
		next = &ix->chunks[ci + 1]->e[0];
	if (at > 0)
		prev = &c->e[at - 1];
	else if (ci > 0)
		prev = &ix->chunks[ci - 1]->e[ix->chunks[ci - 1]->n - 1];
	if (next && next->pblk < end_of(e))
		return overlap(fs, next, e);
	if (prev && end_of(prev) > e->pblk)
		return overlap(fs, prev, e);
	if (c->n == CHUNK) {
		/* Split: the upper half goes to a new chunk after this one. */
		struct ext4fs__owner_chunk *upper = chunk_insert(ix, ci + 1);

		if (!upper)
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the block owners");
		upper->n = CHUNK / 2;
		memcpy(upper->e, &c->e[CHUNK / 2], (CHUNK / 2) * sizeof(*c->e));
		c->n = CHUNK / 2;
		if (at > CHUNK / 2) {
			c = upper;
			at -= CHUNK / 2;
		}
	}
	memmove(&c->e[at + 1], &c->e[at], (c->n - at) * sizeof(*c->e));
	c->e[at] = *e;
	c->n++;
	ix->count++;
	return 0;
}

int ext4fs__owners_remove(struct ext4fs_fs *fs, struct ext4fs__owner_index *ix, const struct ext4fs__owner *e)
{
	size_t ci = chunk_after(ix, e->pblk), at;
	struct ext4fs__owner_chunk *c;

	if (ci < ix->nchunks) {
		c = ix->chunks[ci];
		at = owner_after(c, e->pblk);
		if (at < c->n && c->e[at].pblk == e->pblk && c->e[at].len == e->len && c->e[at].ino == e->ino) {
			memmove(&c->e[at], &c->e[at + 1], (c->n - at - 1) * sizeof(*c->e));
			ix->count--;
			if (--c->n == 0) {
				free(c);
				memmove(&ix->chunks[ci], &ix->chunks[ci + 1], (ix->nchunks - ci - 1) * sizeof(*ix->chunks));
				ix->nchunks--;
			}
			return 0;
		}
	}
	return ext4fs__fs_fail(fs, EXT4FS_E_BLOCK_STATE, "inode %u's blocks %llu-%llu are not where the sweep saw them",
			       e->ino, (unsigned long long)e->pblk, (unsigned long long)(end_of(e) - 1));
}

void ext4fs__owners_free(struct ext4fs__owner_index *ix)
{
	for (size_t i = 0; i < ix->nchunks; i++)
		free(ix->chunks[i]);
	free(ix->chunks);
	memset(ix, 0, sizeof(*ix));
}

struct gathering {
	uint32_t ino;
	struct ext4fs__owners_list *list;
};

static int gather_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct gathering *g = arg;
	struct ext4fs__owners_list *l = g->list;
	struct ext4fs__owner *last = l->n ? &l->v[l->n - 1] : NULL, *grown;
	int map = v->kind != EXT4FS_BLOCK_DATA;

	if (v->count == 0)
		return 0;
	if (last && last->ino == g->ino && !map && !last->map && last->pblk + last->len == v->pblk &&
	    last->lblk + last->len == v->lblk) {
		last->len += v->count;
		return 0;
	}
	if (!(grown = ext4fs_array_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v), 64)))
		return EXT4FS_E_NO_MEMORY;
	l->v = grown;
	l->v[l->n++] = (struct ext4fs__owner){ v->pblk, map ? 1 : v->count, v->lblk, g->ino, map };
	return 0;
}

int ext4fs__owners_gather(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs__owners_list *list)
{
	struct gathering g = { ino, list };
	struct ext4fs_inode inode;
	int err = ext4fs_inode_read(fs, ino, &inode);

	if (!err)
		err = ext4fs_block_iterate(fs, ino, &inode, 0, gather_visit, &g);
	if (err == EXT4FS_E_NO_MEMORY)
		err = ext4fs__fs_fail(fs, err, "no memory for the block owners");
	return err;
}
