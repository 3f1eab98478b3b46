/* extent.c - validated walks and lookups of extent trees. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/extent.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define EH_SIZE 12
#define ENTRY_SIZE 12
#define ROOT_CAPACITY ((60 - EH_SIZE) / ENTRY_SIZE)
#define LBLK_LIMIT (1ULL << 32)

struct eh {
	uint16_t magic, entries, max, depth;
};

static void eh_decode(struct eh *h, const unsigned char *p)
{
	h->magic = le16_load(p);
	h->entries = le16_load(p + 2);
	h->max = le16_load(p + 4);
	h->depth = le16_load(p + 6);
}

uint32_t ext4fs_inode_csum_seed(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation)
{
	unsigned char le[4];
	uint32_t crc;

	le32_store(le, ino);
	crc = ext4fs_crc32c(fs->geom.csum_seed, le, 4);
	le32_store(le, generation);
	return ext4fs_crc32c(crc, le, 4);
}

/* Check a node header; capacity is how many entries fit in the node's space. */
static int check_header(struct ext4fs_fs *fs, uint32_t ino, uint64_t blk, const struct eh *h,
			unsigned capacity, int expect_depth)
{
	if (h->magic != EXT4FS_EXTENT_MAGIC)
		return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_HEADER,
				   "inode %u: extent node %s%llu has bad magic 0x%04x", ino,
				   blk ? "at block " : "in inode ", (unsigned long long)blk, h->magic);
	if (h->max > capacity || h->max == 0 || h->entries > h->max)
		return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_HEADER,
				   "inode %u: extent node %s%llu has %u entries, max %u (room for %u)",
				   ino, blk ? "at block " : "in inode ", (unsigned long long)blk,
				   h->entries, h->max, capacity);
	if (expect_depth < 0 ? h->depth > EXT4FS_EXTENT_MAX_DEPTH : h->depth != (unsigned)expect_depth)
		return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_HEADER,
				   "inode %u: extent node %s%llu has depth %u, expected %d", ino,
				   blk ? "at block " : "in inode ", (unsigned long long)blk, h->depth,
				   expect_depth < 0 ? EXT4FS_EXTENT_MAX_DEPTH : expect_depth);
	return 0;
}

static int check_node_csum(struct ext4fs_fs *fs, uint32_t ino, uint32_t generation, uint64_t blk,
			   const unsigned char *node, const struct eh *h)
{
	size_t tail = EH_SIZE + (size_t)ENTRY_SIZE * h->max;
	uint32_t want;

	if (!fs->geom.has_metadata_csum || !fs_csum_strict(fs))
		return 0;
	if (tail + 4 > fs->geom.block_size)
		return 0;
	want = ext4fs_crc32c(ext4fs_inode_csum_seed(fs, ino, generation), node, tail);
	if (le32_load(node + tail) != want)
		return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CSUM,
				   "inode %u: extent block %llu checksum is 0x%08x, should be 0x%08x",
				   ino, (unsigned long long)blk, le32_load(node + tail), want);
	return 0;
}

struct walk {
	struct ext4fs_fs *fs;
	uint32_t ino;
	uint32_t generation;
	unsigned max_level;
	ext4fs_extent_visit_fn fn;
	void *arg;
	unsigned char *bufs[EXT4FS_EXTENT_MAX_DEPTH + 1];
};

/* An index entry's child must be a block of the file system (not the superblock's). */
static int check_child_block(struct walk *w, uint64_t blk)
{
	struct ext4fs_fs *fs = w->fs;

	if (!ext4fs_block_ptr_valid(fs, blk) || blk < fs->geom.first_data_block + 1)
		return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
				   "inode %u: extent index points to block %llu outside the file system",
				   w->ino, (unsigned long long)blk);
	return 0;
}

static int read_child(struct walk *w, unsigned level, uint64_t blk, int depth, struct eh *h)
{
	struct ext4fs_fs *fs = w->fs;
	int err = check_child_block(w, blk);

	if (err)
		return err;
	err = ext4fs_block_read(fs, blk, w->bufs[level]);
	if (err)
		return ext4fs__fs_fail(fs, err, "inode %u: reading extent block %llu: %s", w->ino,
				   (unsigned long long)blk, ext4fs_strerror(err));
	eh_decode(h, w->bufs[level]);
	err = check_header(fs, w->ino, blk, h, (fs->geom.block_size - EH_SIZE) / ENTRY_SIZE, depth);
	if (err)
		return err;
	return check_node_csum(fs, w->ino, w->generation, blk, w->bufs[level], h);
}

/* Walk the node at level whose bytes are node; its entries must lie in [lo, hi). */
static int walk_node(struct walk *w, unsigned level, uint64_t blk, const unsigned char *node,
		     const struct eh *h, uint64_t lo, uint64_t hi)
{
	struct ext4fs_fs *fs = w->fs;
	uint64_t prev_end = lo;
	int err;

	for (unsigned i = 0; i < h->entries; i++) {
		const unsigned char *e = node + EH_SIZE + (size_t)i * ENTRY_SIZE;
		struct ext4fs_extent_visit v = {
			.level = level, .max_level = w->max_level, .node_block = blk,
			.entry = i, .entries = h->entries, .max_entries = h->max,
			.is_leaf = h->depth == 0,
		};
		v.lblk = le32_load(e);
		if (v.lblk < prev_end || v.lblk >= hi || (i == 0 && level > 0 && v.lblk < lo))
			return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
					   "inode %u: extent node %llu entry %u starts at logical block %u, out of order or outside its range %llu-%llu",
					   w->ino, (unsigned long long)blk, i, v.lblk,
					   (unsigned long long)lo, (unsigned long long)hi - 1);
		if (v.is_leaf) {
			uint16_t raw_len = le16_load(e + 4);
			v.unwritten = raw_len > EXT4FS_EXTENT_INIT_MAX_LEN;
			v.len = v.unwritten ? raw_len - EXT4FS_EXTENT_INIT_MAX_LEN : raw_len;
			v.pblk = ((uint64_t)le16_load(e + 6) << 32) | le32_load(e + 8);
			v.range_end = (uint64_t)v.lblk + v.len;
			if (v.len == 0 || v.range_end > hi)
				return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
						   "inode %u: extent %u-%llu in node %llu has a bad length %u",
						   w->ino, v.lblk, (unsigned long long)v.range_end - 1,
						   (unsigned long long)blk, v.len);
			if (!ext4fs_block_ptr_valid(fs, v.pblk) || v.len > fs->geom.blocks_count - v.pblk)
				return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
						   "inode %u: extent at logical %u maps blocks %llu-%llu outside the file system",
						   w->ino, v.lblk, (unsigned long long)v.pblk,
						   (unsigned long long)(v.pblk + v.len - 1));
			prev_end = v.range_end;
			err = w->fn(&v, w->arg);
			if (err)
				return err;
			continue;
		}
		v.pblk = ((uint64_t)le16_load(e + 8) << 32) | le32_load(e + 4);
		v.range_end = (i + 1 < h->entries) ? le32_load(e + ENTRY_SIZE) : hi;
		if (v.range_end <= v.lblk || v.range_end > hi)
			return ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
					   "inode %u: extent index node %llu entries %u and %u are out of order",
					   w->ino, (unsigned long long)blk, i, i + 1);
		prev_end = v.lblk + 1;
		/* Callers are promised blocks inside the file system: check before the visit. */
		err = check_child_block(w, v.pblk);
		if (err)
			return err;
		err = w->fn(&v, w->arg);
		if (err)
			return err;
		struct eh child;
		err = read_child(w, level + 1, v.pblk, h->depth - 1, &child);
		if (err)
			return err;
		err = walk_node(w, level + 1, v.pblk, w->bufs[level + 1], &child, v.lblk, v.range_end);
		if (err)
			return err;
	}
	return 0;
}

static int root_header(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       struct eh *h)
{
	if (!(inode->i_flags & EXT4FS_EXTENTS_FL))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u does not use extents", ino);
	eh_decode(h, inode->i_block);
	return check_header(fs, ino, 0, h, ROOT_CAPACITY, -1);
}

int ext4fs_extent_walk(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       ext4fs_extent_visit_fn fn, void *arg)
{
	struct walk w = { .fs = fs, .ino = ino, .generation = inode->i_generation, .fn = fn, .arg = arg };
	struct eh h;
	int err = root_header(fs, ino, inode, &h);

	if (err)
		return err;
	w.max_level = h.depth;
	for (unsigned i = 1; i <= h.depth; i++) {
		w.bufs[i] = malloc(fs->geom.block_size);
		if (!w.bufs[i]) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to walk inode %u", ino);
			goto out;
		}
	}
	err = walk_node(&w, 0, 0, inode->i_block, &h, 0, LBLK_LIMIT);
out:
	for (unsigned i = 1; i <= h.depth; i++)
		free(w.bufs[i]);
	return err;
}

int ext4fs_extent_map(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		      uint32_t lblk, uint64_t *pblk, uint32_t *run, int *unwritten)
{
	struct walk w = { .fs = fs, .ino = ino, .generation = inode->i_generation };
	unsigned char *buf = NULL;
	const unsigned char *node = inode->i_block;
	uint64_t blk = 0, lo = 0, hi = LBLK_LIMIT;
	struct eh h;
	int err = root_header(fs, ino, inode, &h);

	*pblk = 0;
	*unwritten = 0;
	if (err)
		return err;
	buf = malloc(fs->geom.block_size);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to map inode %u", ino);
	w.bufs[1] = buf;
	for (;;) {
		/* Last entry starting at or before lblk (entries are checked ascending as we go). */
		int found = -1;
		uint32_t prev = 0;
		for (unsigned i = 0; i < h.entries; i++) {
			uint32_t start = le32_load(node + EH_SIZE + (size_t)i * ENTRY_SIZE);
			if ((i > 0 && start <= prev) || start < lo || start >= hi) {
				err = ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
						  "inode %u: extent node %llu entries are out of order",
						  ino, (unsigned long long)blk);
				goto out;
			}
			prev = start;
			if (start <= lblk)
				found = (int)i;
		}
		if (h.depth == 0) {
			uint64_t next = hi;
			if (found + 1 < h.entries)
				next = le32_load(node + EH_SIZE + (size_t)(found + 1) * ENTRY_SIZE);
			if (found >= 0) {
				const unsigned char *e = node + EH_SIZE + (size_t)found * ENTRY_SIZE;
				uint32_t start = le32_load(e);
				uint16_t raw_len = le16_load(e + 4);
				uint32_t len = raw_len > EXT4FS_EXTENT_INIT_MAX_LEN
						       ? raw_len - EXT4FS_EXTENT_INIT_MAX_LEN : raw_len;
				uint64_t p = ((uint64_t)le16_load(e + 6) << 32) | le32_load(e + 8);
				if ((uint64_t)start + len > lblk) {
					if (!ext4fs_block_ptr_valid(fs, p) || len > fs->geom.blocks_count - p) {
						err = ext4fs__fs_fail(fs, EXT4FS_E_EXTENT_CORRUPT,
								  "inode %u: extent at logical %u maps blocks outside the file system",
								  ino, start);
						goto out;
					}
					*pblk = p + (lblk - start);
					*run = start + len - lblk;
					*unwritten = raw_len > EXT4FS_EXTENT_INIT_MAX_LEN;
					goto out;
				}
			}
			*run = (uint32_t)((next > LBLK_LIMIT - 1 ? LBLK_LIMIT - 1 : next) - lblk);
			if (*run == 0)
				*run = 1;
			goto out;
		}
		if (found < 0) {
			uint64_t next = h.entries ? le32_load(node + EH_SIZE) : hi;
			*run = (uint32_t)((next > LBLK_LIMIT - 1 ? LBLK_LIMIT - 1 : next) - lblk);
			if (*run == 0)
				*run = 1;
			goto out;
		}
		const unsigned char *e = node + EH_SIZE + (size_t)found * ENTRY_SIZE;
		uint64_t child = ((uint64_t)le16_load(e + 8) << 32) | le32_load(e + 4);
		lo = le32_load(e);
		if (found + 1 < h.entries)
			hi = le32_load(e + ENTRY_SIZE);
		err = read_child(&w, 1, child, h.depth - 1, &h);
		if (err)
			goto out;
		blk = child;
		node = buf;
	}
out:
	free(buf);
	return err;
}
