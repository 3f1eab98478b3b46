/*
 * extent_write.c - changing extent trees: inserting mappings (merged with
 * their neighbours), removing ranges, converting unwritten extents.
 *
 * Every change follows one pattern.  Walk from the root to the leaf that
 * covers a logical block (the path), rebuild that leaf's extents in a
 * scratch array (replace some, merge neighbours), and store the array if it
 * fits.  When it does not, make room and start again from the root: split
 * the leaf, or first the highest full node on the path whose parent has a
 * free slot, or, when every node up to the root is full, move the root's
 * entries into a new block and make the root an index over it (the tree
 * grows by one level).  Each round frees a slot on the path, so an edit
 * takes at most a few rounds.
 *
 * Invariants kept by every change (e2fsck checks them):
 *  - an index entry's key equals the first key of its child, so when a
 *    node's first entry changes the keys above it follow;
 *  - a tree block has eh_max = (block_size - 12) / 12 and, with
 *    metadata_csum, the crc32c tail right after those eh_max entries;
 *  - no node but the root is empty: an emptied node is freed and its index
 *    entry removed; an emptied tree is an empty leaf in the inode again,
 *    and a root with one child whose entries fit in the inode absorbs it;
 *  - an extent is at most 32768 blocks long, 32767 when unwritten, and
 *    written and unwritten extents are never merged.
 *
 * Tree blocks are allocated near the data they map and counted in
 * i_blocks.  A new node is written before the parent that points to it;
 * data blocks are freed only after the leaf that mapped them is written.
 * The root lives in *inode, which the caller writes (blockmap_internal.h).
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/crc.h"
#include "ext4fs/extent.h"
#include "extent_write_internal.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define EH_SIZE 12
#define ENTRY_SIZE 12
#define ROOT_MAX ((60 - EH_SIZE) / ENTRY_SIZE)
#define LBLK_LIMIT (1ULL << 32)
/* Rounds of room-making one edit may need: one per level, one new root, and slack. */
#define MAX_ROUNDS (2 * EXT4FS_EXTENT_MAX_DEPTH + 4)

struct ext {
	uint32_t lblk;
	uint32_t len;
	uint64_t pblk;
	int unwritten;
};

struct level {
	unsigned char *node;   /* the root: inode->i_block; else one of the tree's buffers */
	uint64_t blk;          /* the node's block; level 0 (the root) has none and keeps 0 */
	unsigned entries, max, depth;
	int pos;               /* index: entry followed; leaf: last extent starting at or before
				  the block sought, -1 when none does */
	uint64_t lo, hi;       /* logical range the node covers */
};

struct tree {
	struct ext4fs_fs *fs;
	uint32_t ino;
	struct ext4fs_inode *inode;
	uint32_t seed;             /* metadata_csum seed of the inode */
	uint32_t bs;
	unsigned cap;              /* entries a tree block holds */
	unsigned depth;            /* of the path last found */
	struct level lv[EXT4FS_EXTENT_MAX_DEPTH + 1];
	unsigned char *blocks;     /* one buffer per level below the root, and a scratch node */
	struct ext *ext, *tmp;     /* a leaf decoded, and rebuilt: cap + 4 entries each */
	uint64_t goal;             /* where new tree blocks should go (near the data) */
	unsigned alloc_flags;      /* EXT4FS_ALLOC_USE_RESERVED is passed on to tree blocks */
	int dirty;                 /* *inode changed */
};

/* -- on-disk entries -- */

static unsigned char *entry_at(unsigned char *node, unsigned i)
{
	return node + EH_SIZE + (size_t)i * ENTRY_SIZE;
}

static uint32_t key_at(unsigned char *node, unsigned i)
{
	return le32_load(entry_at(node, i));
}

static uint64_t idx_child(const unsigned char *e)
{
	return ((uint64_t)le16_load(e + 8) << 32) | le32_load(e + 4);
}

static void idx_store(unsigned char *e, uint32_t key, uint64_t child)
{
	le32_store(e, key);
	le32_store(e + 4, (uint32_t)child);
	le16_store(e + 8, (uint16_t)(child >> 32));
	le16_store(e + 10, 0);
}

static void ext_decode(struct ext *x, const unsigned char *e)
{
	uint16_t raw = le16_load(e + 4);

	x->lblk = le32_load(e);
	x->unwritten = raw > EXT4FS_EXTENT_INIT_MAX_LEN;
	x->len = x->unwritten ? raw - EXT4FS_EXTENT_INIT_MAX_LEN : raw;
	x->pblk = ((uint64_t)le16_load(e + 6) << 32) | le32_load(e + 8);
}

static void ext_encode(unsigned char *e, const struct ext *x)
{
	le32_store(e, x->lblk);
	le16_store(e + 4, (uint16_t)(x->unwritten ? x->len + EXT4FS_EXTENT_INIT_MAX_LEN : x->len));
	le16_store(e + 6, (uint16_t)(x->pblk >> 32));
	le32_store(e + 8, (uint32_t)x->pblk);
}

static uint64_t ext_end(const struct ext *x)
{
	return (uint64_t)x->lblk + x->len;
}

static void header_store(unsigned char *node, unsigned entries, unsigned max, unsigned depth)
{
	le16_store(node, EXT4FS_EXTENT_MAGIC);
	le16_store(node + 2, (uint16_t)entries);
	le16_store(node + 4, (uint16_t)max);
	le16_store(node + 6, (uint16_t)depth);
}

static void set_entries(struct level *l, unsigned n)
{
	l->entries = n;
	le16_store(l->node + 2, (uint16_t)n);
}

static unsigned char *level_buf(struct tree *t, unsigned level)
{
	return t->blocks + (size_t)(level - 1) * t->bs;
}

static unsigned char *scratch_buf(struct tree *t)
{
	return t->blocks + (size_t)EXT4FS_EXTENT_MAX_DEPTH * t->bs;
}

/* -- the tree handle -- */

static int tree_open(struct tree *t, struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		     unsigned alloc_flags)
{
	memset(t, 0, sizeof(*t));
	t->fs = fs;
	t->ino = ino;
	t->inode = inode;
	t->bs = fs->geom.block_size;
	t->cap = (t->bs - EH_SIZE) / ENTRY_SIZE;
	t->seed = ext4fs_inode_csum_seed(fs, ino, inode->i_generation);
	t->alloc_flags = alloc_flags & EXT4FS_ALLOC_USE_RESERVED;
	t->blocks = malloc((size_t)(EXT4FS_EXTENT_MAX_DEPTH + 1) * t->bs);
	t->ext = malloc(2 * (t->cap + 4) * sizeof(*t->ext));
	if (!t->blocks || !t->ext) {
		free(t->blocks);
		free(t->ext);
		t->blocks = NULL;
		t->ext = NULL;
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to change the extent tree of inode %u", ino);
	}
	t->tmp = t->ext + t->cap + 4;
	return 0;
}

/* Tell the caller whether *inode changed; free the buffers.  Returns err. */
static int tree_close(struct tree *t, int err, int *dirty)
{
	*dirty |= t->dirty;
	free(t->blocks);
	free(t->ext);
	return err;
}

/* -- reading and writing nodes -- */

static const char *node_name(uint64_t blk, char *buf, size_t size)
{
	if (!blk)
		return "in the inode";
	snprintf(buf, size, "at block %llu", (unsigned long long)blk);
	return buf;
}

/*
 * Check the node in node (at block blk, 0 for the root) and describe it in
 * level: header against capacity and the depth expected (-1: any), the
 * checksum, keys ascending inside [lo, hi), extents inside the file system
 * and not overlapping, children inside the file system.
 */
static int node_load(struct tree *t, unsigned level, uint64_t blk, unsigned char *node,
		     unsigned capacity, int want_depth, uint64_t lo, uint64_t hi)
{
	struct ext4fs_fs *fs = t->fs;
	struct level *l = &t->lv[level];
	unsigned magic = le16_load(node);
	uint64_t prev_end = lo;
	char nb[48];

	l->node = node;
	l->blk = blk;
	l->entries = le16_load(node + 2);
	l->max = le16_load(node + 4);
	l->depth = le16_load(node + 6);
	l->pos = -1;
	l->lo = lo;
	l->hi = hi;
	if (magic != EXT4FS_EXTENT_MAGIC || l->max == 0 || l->max > capacity || l->entries > l->max ||
	    (want_depth < 0 ? l->depth > EXT4FS_EXTENT_MAX_DEPTH : l->depth != (unsigned)want_depth))
		return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_HEADER,
				       "inode %u: extent node %s has a bad header (magic 0x%04x, %u entries of %u, depth %u)",
				       t->ino, node_name(blk, nb, sizeof(nb)), magic, l->entries, l->max, l->depth);
	/* The root is told by its level, not by blk: a block number is what disk supplies. */
	if (level > 0 && fs->geom.has_metadata_csum && fs_csum_strict(fs)) {
		size_t tail = EH_SIZE + (size_t)ENTRY_SIZE * l->max;
		if (tail + 4 <= t->bs) {
			uint32_t want = ext4fs_crc32c(t->seed, node, tail);
			if (le32_load(node + tail) != want)
				return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CSUM,
						       "inode %u: extent block %llu checksum is 0x%08x, should be 0x%08x",
						       t->ino, (unsigned long long)blk, le32_load(node + tail), want);
		}
	}
	for (unsigned i = 0; i < l->entries; i++) {
		const unsigned char *e = entry_at(node, i);
		uint32_t key = le32_load(e);

		if (key < prev_end || key >= hi)
			return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
					       "inode %u: extent node %s entry %u starts at logical block %u, out of order or outside %llu-%llu",
					       t->ino, node_name(blk, nb, sizeof(nb)), i, key,
					       (unsigned long long)lo, (unsigned long long)hi - 1);
		if (l->depth == 0) {
			struct ext x;
			ext_decode(&x, e);
			if (x.len == 0 || ext_end(&x) > hi || !ext4fs_block_ptr_valid(fs, x.pblk) ||
			    x.len > fs->geom.blocks_count - x.pblk)
				return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
						       "inode %u: extent at logical block %u (node %s) maps %u blocks from %llu, outside its range or the file system",
						       t->ino, key, node_name(blk, nb, sizeof(nb)), x.len,
						       (unsigned long long)x.pblk);
			prev_end = ext_end(&x);
		} else {
			uint64_t child = idx_child(e);
			if (!ext4fs_block_ptr_valid(fs, child) || child <= fs->geom.first_data_block)
				return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
						       "inode %u: extent index %s points to block %llu outside the file system",
						       t->ino, node_name(blk, nb, sizeof(nb)), (unsigned long long)child);
			prev_end = (uint64_t)key + 1;
		}
	}
	return 0;
}

static int root_load(struct tree *t)
{
	int err = node_load(t, 0, 0, t->inode->i_block, ROOT_MAX, -1, 0, LBLK_LIMIT);

	if (!err)
		t->depth = t->lv[0].depth;
	return err;
}

/* Read the child that index entry i of the node at level points to into level + 1. */
static int child_load(struct tree *t, unsigned level, unsigned i)
{
	struct level *l = &t->lv[level];
	const unsigned char *e = entry_at(l->node, i);
	uint64_t child = idx_child(e);
	uint64_t hi = i + 1 < l->entries ? key_at(l->node, i + 1) : l->hi;
	unsigned char *buf = level_buf(t, level + 1);
	int err = ext4fs_block_read(t->fs, child, buf);

	if (err)
		return ext4fs__fs_fail(t->fs, err, "inode %u: reading extent block %llu: %s", t->ino,
				       (unsigned long long)child, ext4fs_strerror(err));
	l->pos = (int)i;
	return node_load(t, level + 1, child, buf, t->cap, (int)l->depth - 1, le32_load(e), hi);
}

/*
 * Find the path to logical block lblk: at each index level the last entry
 * whose key is at or below lblk (the first entry when none is); in the leaf
 * the last extent starting at or before lblk.
 */
static int find_path(struct tree *t, uint32_t lblk)
{
	struct level *leaf;
	int err = root_load(t);

	if (err)
		return err;
	for (unsigned level = 0; level < t->depth; level++) {
		struct level *l = &t->lv[level];
		unsigned i = 0;
		char nb[48];

		if (l->entries == 0)
			return ext4fs__fs_fail(t->fs, EXT4FS_E_EXTENT_CORRUPT,
					       "inode %u: extent index node %s is empty", t->ino,
					       node_name(l->blk, nb, sizeof(nb)));
		while (i + 1 < l->entries && key_at(l->node, i + 1) <= lblk)
			i++;
		err = child_load(t, level, i);
		if (err)
			return err;
	}
	leaf = &t->lv[t->depth];
	leaf->pos = -1;
	while ((unsigned)(leaf->pos + 1) < leaf->entries && key_at(leaf->node, (unsigned)(leaf->pos + 1)) <= lblk)
		leaf->pos++;
	return 0;
}

static void node_csum(struct tree *t, unsigned char *node, unsigned max)
{
	size_t tail = EH_SIZE + (size_t)ENTRY_SIZE * max;

	if (t->fs->geom.has_metadata_csum && tail + 4 <= t->bs)
		le32_store(node + tail, ext4fs_crc32c(t->seed, node, tail));
}

static int block_store(struct tree *t, uint64_t blk, unsigned char *node, unsigned max)
{
	int err;

	node_csum(t, node, max);
	err = ext4fs_block_write(t->fs, blk, node);
	if (err)
		return ext4fs__fs_fail(t->fs, err, "inode %u: writing extent block %llu: %s", t->ino,
				       (unsigned long long)blk, ext4fs_strerror(err));
	return 0;
}

static int node_write(struct tree *t, unsigned level)
{
	struct level *l = &t->lv[level];

	if (level == 0) {
		t->dirty = 1;
		return 0;
	}
	return block_store(t, l->blk, l->node, l->max);
}

/* -- tree blocks -- */

static int tree_block_alloc(struct tree *t, uint32_t lblk, uint64_t *blk)
{
	struct ext4fs_alloc_request req = {
		.ino = t->ino, .lblk = lblk, .len = 1, .goal = t->goal,
		.flags = EXT4FS_ALLOC_METADATA | t->alloc_flags,
	};
	uint32_t got;
	int err;

	if (!ext4fs_block_ptr_valid(t->fs, req.goal))
		req.goal = 0;
	err = ext4fs_alloc_blocks(t->fs, &req, blk, &got);
	if (err)
		return err;
	/* With bigalloc a tree block is a cluster of its own. */
	err = ext4fs_inode_add_blocks(t->fs, t->inode, t->fs->geom.cluster_ratio);
	if (err) {
		ext4fs_free_blocks(t->fs, *blk, 1);
		return ext4fs__fs_fail(t->fs, err, "inode %u: block count would overflow i_blocks", t->ino);
	}
	t->dirty = 1;
	return 0;
}

static int tree_block_free(struct tree *t, uint64_t blk)
{
	int err = ext4fs_free_blocks(t->fs, blk, 1);

	if (err)
		return err;
	ext4fs_inode_add_blocks(t->fs, t->inode, -(int64_t)t->fs->geom.cluster_ratio);   /* going down cannot overflow */
	t->dirty = 1;
	return 0;
}

/* -- changing the shape -- */

/* After the first entry of the node at level changed, make the keys above it match. */
static int fix_keys(struct tree *t, unsigned level)
{
	for (unsigned l = level; l > 0; l--) {
		struct level *n = &t->lv[l], *p = &t->lv[l - 1];
		unsigned char *e = entry_at(p->node, (unsigned)p->pos);
		int err;

		if (n->entries == 0 || le32_load(e) == key_at(n->node, 0))
			return 0;
		le32_store(e, key_at(n->node, 0));
		err = node_write(t, l - 1);
		if (err || p->pos != 0)
			return err;
	}
	return 0;
}

/* Move the root's entries into a new block and make the root a one-entry index over it. */
static int grow_depth(struct tree *t)
{
	struct level *r = &t->lv[0];
	unsigned char *node = scratch_buf(t);
	uint32_t first = r->entries ? key_at(r->node, 0) : 0;
	uint64_t blk;
	int err;

	if (r->depth >= EXT4FS_EXTENT_MAX_DEPTH)
		return ext4fs__fs_fail(t->fs, EXT4FS_E_FILE_TOO_BIG,
				       "inode %u: the extent tree would grow beyond %d levels", t->ino,
				       EXT4FS_EXTENT_MAX_DEPTH);
	err = tree_block_alloc(t, first, &blk);
	if (err)
		return err;
	memset(node, 0, t->bs);
	header_store(node, r->entries, t->cap, r->depth);
	memcpy(entry_at(node, 0), entry_at(r->node, 0), (size_t)r->entries * ENTRY_SIZE);
	err = block_store(t, blk, node, t->cap);
	if (err) {
		tree_block_free(t, blk);
		return err;
	}
	memset(entry_at(r->node, 0), 0, (size_t)r->max * ENTRY_SIZE);
	header_store(r->node, 1, r->max, r->depth + 1);
	idx_store(entry_at(r->node, 0), first, blk);
	t->dirty = 1;
	return 0;
}

/* Move entries [at, entries) of the node at level (> 0) into a new sibling after it. */
static int split_node(struct tree *t, unsigned level, unsigned at)
{
	struct level *l = &t->lv[level], *p = &t->lv[level - 1];
	unsigned moved = l->entries - at, ip = (unsigned)p->pos + 1;
	unsigned char *node = scratch_buf(t);
	uint32_t key = key_at(l->node, at);
	uint64_t blk;
	int err = tree_block_alloc(t, key, &blk);

	if (err)
		return err;
	memset(node, 0, t->bs);
	header_store(node, moved, t->cap, l->depth);
	memcpy(entry_at(node, 0), entry_at(l->node, at), (size_t)moved * ENTRY_SIZE);
	err = block_store(t, blk, node, t->cap);
	if (err) {
		tree_block_free(t, blk);
		return err;
	}
	memmove(entry_at(p->node, ip + 1), entry_at(p->node, ip), (size_t)(p->entries - ip) * ENTRY_SIZE);
	idx_store(entry_at(p->node, ip), key, blk);
	set_entries(p, p->entries + 1);
	err = node_write(t, level - 1);
	if (err)
		return err;
	memset(entry_at(l->node, at), 0, (size_t)moved * ENTRY_SIZE);
	set_entries(l, at);
	return node_write(t, level);
}

/*
 * The node at level lacks room for an edit at the end of it (at_end) or
 * inside it.  Split the highest full node of the path below a node with a
 * free slot, or grow the tree when all are full up to the root.  An edit
 * at the end splits off only the last entry, so nodes filled in ascending
 * order stay full; otherwise the node is halved.  The path is stale after
 * this: the caller finds it again.
 */
static int make_room(struct tree *t, unsigned level, int at_end)
{
	unsigned n, at;
	char nb[48];

	while (level > 0 && t->lv[level - 1].entries >= t->lv[level - 1].max) {
		level--;
		at_end = (unsigned)(t->lv[level].pos + 1) >= t->lv[level].entries;
	}
	if (level == 0)
		return grow_depth(t);
	n = t->lv[level].entries;
	if (n < 2)
		return ext4fs__fs_fail(t->fs, EXT4FS_E_EXTENT_CORRUPT,
				       "inode %u: extent node %s is too small to split (%u entries of %u)",
				       t->ino, node_name(t->lv[level].blk, nb, sizeof(nb)), n, t->lv[level].max);
	at = at_end ? n - 1 : n / 2;
	return split_node(t, level, at);
}

/* The node at level (> 0) became empty: free it and drop its entry from its parent. */
static int drop_node(struct tree *t, unsigned level)
{
	struct level *p = &t->lv[level - 1];
	uint64_t blk = t->lv[level].blk;
	unsigned i = (unsigned)p->pos;
	int err = 0;

	memmove(entry_at(p->node, i), entry_at(p->node, i + 1), (size_t)(p->entries - i - 1) * ENTRY_SIZE);
	memset(entry_at(p->node, p->entries - 1), 0, ENTRY_SIZE);
	set_entries(p, p->entries - 1);
	if (p->entries == 0 && level - 1 > 0) {
		err = drop_node(t, level - 1);
	} else if (p->entries == 0) {
		header_store(p->node, 0, p->max, 0);   /* an empty tree is an empty leaf */
		t->depth = 0;
		t->dirty = 1;
	} else {
		err = node_write(t, level - 1);
		if (!err && i == 0)
			err = fix_keys(t, level - 1);
	}
	if (err)
		return err;
	return tree_block_free(t, blk);
}

/* While the root has one child whose entries fit in the inode, pull them up into the root. */
static int shrink_depth(struct tree *t)
{
	for (;;) {
		struct level *r = &t->lv[0], *c = &t->lv[1];
		uint64_t child;
		int err = root_load(t);

		if (err)
			return err;
		if (t->depth == 0 || r->entries != 1)
			return 0;
		child = idx_child(entry_at(r->node, 0));
		err = child_load(t, 0, 0);
		if (err)
			return err;
		if (c->entries > r->max || (c->entries == 0 && c->depth > 0))
			return 0;
		memset(entry_at(r->node, 0), 0, (size_t)r->max * ENTRY_SIZE);
		memcpy(entry_at(r->node, 0), entry_at(c->node, 0), (size_t)c->entries * ENTRY_SIZE);
		header_store(r->node, c->entries, r->max, c->depth);
		t->dirty = 1;
		err = tree_block_free(t, child);
		if (err)
			return err;
	}
}

/* -- leaf edits -- */

static int mergeable(const struct ext *a, const struct ext *b)
{
	uint32_t max = a->unwritten ? EXT4FS_EXTENT_UNWRITTEN_MAX_LEN : EXT4FS_EXTENT_INIT_MAX_LEN;

	return a->unwritten == b->unwritten && ext_end(a) == b->lblk && a->pblk + a->len == b->pblk &&
	       a->len + b->len <= max;
}

/* Store the n extents of a as the path's leaf (n <= its eh_max); an emptied block leaf goes. */
static int leaf_store(struct tree *t, const struct ext *a, unsigned n)
{
	unsigned d = t->depth;
	struct level *l = &t->lv[d];
	int err;

	if (n == 0 && d > 0)
		return drop_node(t, d);
	for (unsigned i = 0; i < n; i++)
		ext_encode(entry_at(l->node, i), &a[i]);
	memset(entry_at(l->node, n), 0, (size_t)(l->max - n) * ENTRY_SIZE);
	set_entries(l, n);
	err = node_write(t, d);
	if (!err && d > 0)
		err = fix_keys(t, d);
	return err;
}

/*
 * Rebuild the path's leaf with its entries [from, to) replaced by the n
 * extents of add, merging them with each other and with their neighbours
 * where allowed, and store it.  Returns 1, changing nothing, when the
 * result does not fit in the leaf.
 */
static int leaf_splice(struct tree *t, unsigned from, unsigned to, const struct ext *add, unsigned n)
{
	struct level *l = &t->lv[t->depth];
	unsigned cnt = 0, i, lo, hi;

	for (i = 0; i < from; i++)
		ext_decode(&t->tmp[cnt++], entry_at(l->node, i));
	lo = cnt ? cnt - 1 : 0;
	for (i = 0; i < n; i++)
		t->tmp[cnt++] = add[i];
	hi = cnt;
	for (i = to; i < l->entries; i++)
		ext_decode(&t->tmp[cnt++], entry_at(l->node, i));
	/* Only pairs touching the new extents can merge: [lo, lo+1] up to [hi-1, hi]. */
	i = lo;
	while (i < hi && i + 1 < cnt) {
		if (mergeable(&t->tmp[i], &t->tmp[i + 1])) {
			t->tmp[i].len += t->tmp[i + 1].len;
			memmove(&t->tmp[i + 1], &t->tmp[i + 2], (cnt - i - 2) * sizeof(*t->tmp));
			cnt--;
			hi--;
		} else {
			i++;
		}
	}
	if (cnt > l->max)
		return 1;
	return leaf_store(t, t->tmp, cnt);
}

static int no_progress(struct tree *t, uint64_t lblk)
{
	return ext4fs__fs_fail(t->fs, EXT4FS_E_EXTENT_CORRUPT,
			       "inode %u: no room could be made in the extent tree for logical block %llu",
			       t->ino, (unsigned long long)lblk);
}

static int already_mapped(struct tree *t, uint64_t lblk, uint64_t len)
{
	return ext4fs__fs_fail(t->fs, EXT4FS_E_INVALID_ARG,
			       "inode %u: logical blocks %llu-%llu are already mapped, in part or whole", t->ino,
			       (unsigned long long)lblk, (unsigned long long)(lblk + len - 1));
}

/*
 * With the path found for lblk, check that [lblk, lblk + len) is a hole in
 * the leaf (the next leaf starts at the leaf's range end, its first key).
 * *prev receives the extent before it, if any (return value 1).
 */
static int check_hole(struct tree *t, uint64_t lblk, uint64_t len, struct ext *prev)
{
	struct level *l = &t->lv[t->depth];
	unsigned next_i = (unsigned)(l->pos + 1);
	uint64_t next = next_i < l->entries ? key_at(l->node, next_i) : l->hi;

	if (l->pos >= 0) {
		ext_decode(prev, entry_at(l->node, (unsigned)l->pos));
		if (ext_end(prev) > lblk)
			return already_mapped(t, lblk, len);
	}
	if (lblk + len > next)
		return already_mapped(t, lblk, len);
	return l->pos >= 0;
}

static int insert_extent(struct tree *t, const struct ext *x)
{
	for (unsigned round = 0; round < MAX_ROUNDS; round++) {
		struct ext prev;
		unsigned at;
		int err = find_path(t, x->lblk);

		if (err)
			return err;
		err = check_hole(t, x->lblk, x->len, &prev);
		if (err < 0)
			return err;
		at = (unsigned)(t->lv[t->depth].pos + 1);
		err = leaf_splice(t, at, at, x, 1);
		if (err <= 0)
			return err;
		err = make_room(t, t->depth, at >= t->lv[t->depth].entries);
		if (err)
			return err;
	}
	return no_progress(t, x->lblk);
}

/* Map [lblk, lblk + len) to pblk.. in extents of the longest allowed length; *done counts the
 * blocks mapped, also on failure. */
static int insert_run(struct tree *t, uint64_t lblk, uint64_t pblk, uint64_t len, int unwritten,
		      uint64_t *done)
{
	uint32_t max = unwritten ? EXT4FS_EXTENT_UNWRITTEN_MAX_LEN : EXT4FS_EXTENT_INIT_MAX_LEN;

	*done = 0;
	while (*done < len) {
		struct ext x = {
			.lblk = (uint32_t)(lblk + *done),
			.len = (uint32_t)(len - *done < max ? len - *done : max),
			.pblk = pblk + *done,
			.unwritten = unwritten,
		};
		int err;

		t->goal = x.pblk;
		err = insert_extent(t, &x);
		if (err)
			return err;
		*done += x.len;
	}
	return 0;
}

/*
 * Unmap [start, end), freeing the data blocks when free_data, from the
 * right: each round handles the extents of one leaf that overlap the range
 * (at most one of them needs splitting in two), then moves to the leaf
 * before.
 */
/*
 * Bigalloc: free the clusters of [pblk, pblk + n) that none of the kept
 * extents (the leaf's cnt entries after the removal) still uses, and say
 * in *freed how many blocks of charge went with them.  An extent in
 * another leaf sharing an edge cluster is not seen (the kernel's rules
 * keep a cluster to one stretch of the file, which a leaf boundary rarely
 * splits).  0 or the free's error.
 */
static int free_clusters(struct tree *t, const struct ext *kept, unsigned cnt, uint64_t pblk, uint64_t n,
			 uint64_t *freed)
{
	uint64_t ratio = t->fs->geom.cluster_ratio, mask = ratio - 1;

	*freed = 0;
	for (uint64_t c = pblk & ~mask; c < pblk + n; c += ratio) {
		int used = 0;
		for (unsigned i = 0; i < cnt && !used; i++)
			used = kept[i].pblk < c + ratio && kept[i].pblk + kept[i].len > c;
		if (used)
			continue;
		int err = ext4fs_free_blocks(t->fs, c < pblk ? pblk : c, 1);
		if (err)
			return err;
		*freed += ratio;
	}
	return 0;
}

static int remove_range(struct tree *t, uint64_t start, uint64_t end, int free_data)
{
	unsigned rounds = 0;

	while (end > start) {
		struct level *l;
		unsigned pos, lo, n, cnt = 0, i;
		int err = find_path(t, (uint32_t)(end - 1));

		if (err)
			return err;
		l = &t->lv[t->depth];
		if (l->pos < 0)
			break;
		pos = (unsigned)l->pos;
		n = l->entries;
		for (i = 0; i < n; i++)
			ext_decode(&t->ext[i], entry_at(l->node, i));
		if (ext_end(&t->ext[pos]) <= start)
			break;
		lo = pos;
		while (lo > 0 && ext_end(&t->ext[lo - 1]) > start)
			lo--;
		for (i = 0; i < lo; i++)
			t->tmp[cnt++] = t->ext[i];
		if (t->ext[lo].lblk < start) {
			struct ext k = t->ext[lo];
			k.len = (uint32_t)(start - k.lblk);
			t->tmp[cnt++] = k;
		}
		if (ext_end(&t->ext[pos]) > end) {
			struct ext k = t->ext[pos];
			uint32_t cut = (uint32_t)(end - k.lblk);
			k.lblk += cut;
			k.pblk += cut;
			k.len -= cut;
			t->tmp[cnt++] = k;
		}
		for (i = pos + 1; i < n; i++)
			t->tmp[cnt++] = t->ext[i];
		if (cnt > l->max) {
			/* An extent split in two in a full leaf. */
			if (++rounds > MAX_ROUNDS)
				return no_progress(t, end - 1);
			t->goal = t->ext[pos].pblk;
			err = make_room(t, t->depth, 0);
			if (err)
				return err;
			continue;
		}
		rounds = 0;
		err = leaf_store(t, t->tmp, cnt);
		if (err)
			return err;
		for (i = lo; free_data && i <= pos; i++) {
			const struct ext *e = &t->ext[i];
			uint64_t s = e->lblk > start ? e->lblk : start;
			uint64_t f = ext_end(e) < end ? ext_end(e) : end;
			uint64_t freed = f - s;
			if (t->fs->geom.cluster_ratio > 1)
				err = free_clusters(t, t->tmp, cnt, e->pblk + (s - e->lblk), f - s, &freed);
			else
				err = ext4fs_free_blocks(t->fs, e->pblk + (s - e->lblk), f - s);
			if (err)
				return ext4fs__fs_fail(t->fs, err, "inode %u: freeing blocks %llu-%llu: %s", t->ino,
						       (unsigned long long)(e->pblk + (s - e->lblk)),
						       (unsigned long long)(e->pblk + (f - e->lblk) - 1),
						       ext4fs_strerror(err));
			ext4fs_inode_add_blocks(t->fs, t->inode, -(int64_t)freed);
			t->dirty = 1;
		}
		if (lo > 0 || t->ext[lo].lblk <= start)
			break;
		end = t->ext[lo].lblk;
	}
	return shrink_depth(t);
}

/* Mark [start, end) written: each unwritten extent met is replaced by up to three pieces. */
static int convert_range(struct tree *t, uint64_t start, uint64_t end)
{
	uint64_t cur = start;
	unsigned rounds = 0;

	while (cur < end) {
		struct level *l;
		struct ext e, piece[3];
		unsigned i, np = 0;
		uint64_t s, f;
		int err = find_path(t, (uint32_t)cur);

		if (err)
			return err;
		l = &t->lv[t->depth];
		i = l->pos < 0 ? 0 : (unsigned)l->pos;
		if (l->pos >= 0) {
			ext_decode(&e, entry_at(l->node, i));
			if (ext_end(&e) <= cur)
				i++;
		}
		if (i >= l->entries) {
			/* Nothing more in this leaf: go on in the next one, if any. */
			if (l->hi >= end)
				break;
			cur = l->hi;
			continue;
		}
		ext_decode(&e, entry_at(l->node, i));
		if (e.lblk >= end)
			break;
		if (!e.unwritten) {
			cur = ext_end(&e);
			continue;
		}
		s = e.lblk > cur ? e.lblk : cur;
		f = ext_end(&e) < end ? ext_end(&e) : end;
		if (s > e.lblk) {
			piece[np] = e;
			piece[np++].len = (uint32_t)(s - e.lblk);
		}
		piece[np].lblk = (uint32_t)s;
		piece[np].len = (uint32_t)(f - s);
		piece[np].pblk = e.pblk + (s - e.lblk);
		piece[np++].unwritten = 0;
		if (f < ext_end(&e)) {
			piece[np].lblk = (uint32_t)f;
			piece[np].len = (uint32_t)(ext_end(&e) - f);
			piece[np].pblk = e.pblk + (f - e.lblk);
			piece[np++].unwritten = 1;
		}
		t->goal = e.pblk;
		err = leaf_splice(t, i, i + 1, piece, np);
		if (err < 0)
			return err;
		if (err > 0) {
			if (++rounds > MAX_ROUNDS)
				return no_progress(t, cur);
			err = make_room(t, t->depth, i + 1 >= l->entries);
			if (err)
				return err;
			continue;
		}
		rounds = 0;
		cur = f;
	}
	return shrink_depth(t);   /* merging may have emptied leaves' worth of extents */
}

/* -- the calls blockmap_write.c dispatches to -- */

/* Keep the message of the first failure while undoing after it. */
static void undo_remove(struct tree *t, uint64_t lblk, uint64_t len)
{
	char msg[sizeof(t->fs->errmsg)];

	memcpy(msg, t->fs->errmsg, sizeof(msg));
	remove_range(t, lblk, lblk + len, 0);
	memcpy(t->fs->errmsg, msg, sizeof(msg));
}

static int check_range(struct ext4fs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t len)
{
	if (len == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: mapping zero blocks", ino);
	if (lblk >= LBLK_LIMIT || len > LBLK_LIMIT - lblk)
		return ext4fs__fs_fail(fs, EXT4FS_E_FILE_TOO_BIG,
				       "inode %u: logical blocks %llu-%llu are beyond what extents address", ino,
				       (unsigned long long)lblk, (unsigned long long)(lblk + len - 1));
	return 0;
}

/*
 * The blocks an inode is charged for n new blocks from start: n, or with
 * bigalloc the whole clusters they lie in (fresh clusters, the first
 * entered at start's offset).
 */
static uint64_t clusters_charge(const struct ext4fs_fs *fs, uint64_t start, uint64_t n)
{
	uint64_t mask = (uint64_t)fs->geom.cluster_ratio - 1;

	return ((start & mask) + n + mask) & ~mask;
}

/*
 * Bigalloc: when the extent before lblk (prev, or NULL) ends in lblk's
 * logical cluster, or the one after it starts there, the blocks go into
 * that extent's physical cluster at their logical offsets: *start and *n
 * (at most len, not past the cluster or the next extent), and 1.  0 when
 * the file has no block in that cluster (or without bigalloc).
 */
static int cluster_shared(struct tree *t, uint64_t lblk, uint32_t len, const struct ext *prev, uint64_t *start,
			  uint32_t *n)
{
	uint64_t mask = (uint64_t)t->fs->geom.cluster_ratio - 1, lc = lblk & ~mask, room = mask + 1 - (lblk & mask);
	struct level *l = &t->lv[t->depth];
	unsigned next_i = (unsigned)(l->pos + 1);
	struct ext next;

	if (!mask)
		return 0;
	if (prev && ((ext_end(prev) - 1) & ~mask) == lc) {
		*start = ((prev->pblk + prev->len - 1) & ~mask) + (lblk & mask);
	} else if (next_i < l->entries) {
		ext_decode(&next, entry_at(l->node, next_i));
		if ((next.lblk & ~mask) != lc)
			return 0;
		*start = (next.pblk & ~mask) + (lblk & mask);
		if (room > next.lblk - lblk)
			room = next.lblk - lblk;
	} else {
		return 0;
	}
	*n = (uint32_t)(len < room ? len : room);
	return 1;
}

int ext4fs__extent_bmap_alloc(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			      uint64_t lblk, uint32_t len, uint64_t file_blocks, unsigned alloc_flags,
			      int unwritten, uint64_t *pblk, uint32_t *got, int *dirty)
{
	struct ext4fs_alloc_request req = {
		.ino = ino, .lblk = (uint32_t)lblk, .len = len, .min_len = 1,
		.file_blocks = file_blocks, .flags = alloc_flags,
	};
	struct tree t;
	struct ext prev;
	uint64_t start = 0, done = 0;
	uint32_t n = 0;
	int err = check_range(fs, ino, lblk, len);

	if (err)
		return err;
	err = tree_open(&t, fs, ino, inode, alloc_flags);
	if (err)
		return err;
	err = find_path(&t, (uint32_t)lblk);
	if (err)
		goto out;
	err = check_hole(&t, lblk, len, &prev);
	if (err < 0)
		goto out;
	/*
	 * Right after the data before lblk, as if the file went on contiguously;
	 * a whole file written by a caller that knows it (mke4fs -d) packs its
	 * data regions back to back instead, leaving no hole-sized gaps.
	 */
	if (err == 1 && (alloc_flags & EXT4FS_ALLOC_WHOLE_FILE) &&
	    ext4fs_block_ptr_valid(fs, prev.pblk + prev.len))
		req.goal = prev.pblk + prev.len;
	else if (err == 1 && ext4fs_block_ptr_valid(fs, prev.pblk + (lblk - prev.lblk)))
		req.goal = prev.pblk + (lblk - prev.lblk);
	/* Bigalloc: a block in a logical cluster the file has already goes into its physical one. */
	uint64_t charge;
	if (cluster_shared(&t, lblk, len, err == 1 ? &prev : NULL, &start, &n)) {
		charge = 0;
	} else {
		err = ext4fs_alloc_blocks(fs, &req, &start, &n);
		if (err)
			goto out;
		charge = clusters_charge(fs, start, n);
	}
	err = ext4fs_inode_add_blocks(fs, inode, (int64_t)charge);
	if (err) {
		if (charge)
			ext4fs_free_blocks(fs, start, n);
		err = ext4fs__fs_fail(fs, err, "inode %u: block count would overflow i_blocks", ino);
		goto out;
	}
	t.dirty = 1;
	err = insert_run(&t, lblk, start, n, unwritten, &done);
	if (err) {
		undo_remove(&t, lblk, done);
		if (charge)
			ext4fs_free_blocks(fs, start, n);
		ext4fs_inode_add_blocks(fs, inode, -(int64_t)charge);
		goto out;
	}
	*pblk = start;
	*got = n;
out:
	return tree_close(&t, err, dirty);
}

int ext4fs__extent_bmap_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			    uint64_t lblk, uint64_t pblk, uint32_t len, int unwritten, int *dirty)
{
	struct tree t;
	struct ext prev;
	uint64_t done = 0;
	int err = check_range(fs, ino, lblk, len);

	if (err)
		return err;
	if (!ext4fs_block_ptr_valid(fs, pblk) || pblk <= fs->geom.first_data_block ||
	    len > fs->geom.blocks_count - pblk)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u: blocks %llu-%llu are not all inside the file system", ino,
				       (unsigned long long)pblk, (unsigned long long)(pblk + len - 1));
	/* The data is the caller's already: failing for want of a tree block would strand it. */
	err = tree_open(&t, fs, ino, inode, EXT4FS_ALLOC_USE_RESERVED);
	if (err)
		return err;
	err = find_path(&t, (uint32_t)lblk);
	if (err)
		goto out;
	err = check_hole(&t, lblk, len, &prev);
	if (err < 0)
		goto out;
	/* Bigalloc: blocks put into a cluster the file has already are charged nothing more. */
	uint64_t shared_at, charge = clusters_charge(fs, pblk, len);
	uint32_t shared_n;
	if (cluster_shared(&t, lblk, len, err == 1 ? &prev : NULL, &shared_at, &shared_n) && shared_at == pblk)
		charge = clusters_charge(fs, pblk, len) - (fs->geom.cluster_ratio);
	err = ext4fs_inode_add_blocks(fs, inode, (int64_t)charge);
	if (err) {
		err = ext4fs__fs_fail(fs, err, "inode %u: block count would overflow i_blocks", ino);
		goto out;
	}
	t.dirty = 1;
	err = insert_run(&t, lblk, pblk, len, unwritten, &done);
	if (err) {
		undo_remove(&t, lblk, done);
		ext4fs_inode_add_blocks(fs, inode, -(int64_t)charge);
	}
out:
	return tree_close(&t, err, dirty);
}

int ext4fs__extent_bmap_unmap(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			      uint64_t lblk, uint64_t len, int *dirty)
{
	uint64_t end = len >= LBLK_LIMIT - lblk ? LBLK_LIMIT : lblk + len;
	struct tree t;
	int err;

	if (lblk >= LBLK_LIMIT || len == 0)
		return 0;
	/* Taking a hole out of the middle of an extent may need a tree block: let it use the
	   reserved blocks rather than fail to free space. */
	err = tree_open(&t, fs, ino, inode, EXT4FS_ALLOC_USE_RESERVED);
	if (err)
		return err;
	err = remove_range(&t, lblk, end, 1);
	return tree_close(&t, err, dirty);
}

int ext4fs__extent_bmap_mark_written(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
				     uint64_t lblk, uint64_t len, int *dirty)
{
	uint64_t end = len >= LBLK_LIMIT - lblk ? LBLK_LIMIT : lblk + len;
	struct tree t;
	int err;

	if (lblk >= LBLK_LIMIT || len == 0)
		return 0;
	/* The data is already on disk; failing for want of a tree block would lose it. */
	err = tree_open(&t, fs, ino, inode, EXT4FS_ALLOC_USE_RESERVED);
	if (err)
		return err;
	err = convert_range(&t, lblk, end);
	return tree_close(&t, err, dirty);
}
