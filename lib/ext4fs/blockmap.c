/* blockmap.c - block iteration and mapping over extents and indirect maps, and reading
 * a file's data through its map. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/extent.h"
#include "blockmap_internal.h"
#include "fs_internal.h"
#include "ondisk_le.h"

static int has_no_blocks(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode)
{
	return ext4fs_inode_has_inline_data(inode) || ext4fs_inode_is_fast_symlink(fs, inode) ||
	       ((inode->i_mode & EXT4FS_S_IFMT) == EXT4FS_S_IFCHR) ||
	       ((inode->i_mode & EXT4FS_S_IFMT) == EXT4FS_S_IFBLK) ||
	       ((inode->i_mode & EXT4FS_S_IFMT) == EXT4FS_S_IFIFO) ||
	       ((inode->i_mode & EXT4FS_S_IFMT) == EXT4FS_S_IFSOCK);
}

/* -- extent-mapped files -- */

struct extent_iter {
	unsigned flags;
	ext4fs_block_visit_fn fn;
	void *arg;
};

static int extent_iter_visit(const struct ext4fs_extent_visit *v, void *arg)
{
	struct extent_iter *it = arg;
	struct ext4fs_block_visit b = { 0 };

	if (v->is_leaf) {
		b.kind = EXT4FS_BLOCK_DATA;
		b.pblk = v->pblk;
		b.lblk = v->lblk;
		b.count = v->len;
		b.unwritten = v->unwritten;
		return it->fn(&b, it->arg);
	}
	if (it->flags & EXT4FS_ITER_DATA_ONLY)
		return 0;
	b.kind = EXT4FS_BLOCK_EXTENT_NODE;
	b.pblk = v->pblk;
	b.lblk = v->lblk;
	b.count = 1;
	return it->fn(&b, it->arg);
}

/* -- indirect-mapped files -- */

/*
 * The mapping blocks met so far in one walk.  A block map never uses a block
 * twice; a hostile one that repeats an indirect block under every slot of
 * its parents would otherwise make the walk scan per^2 or per^3 entries.
 * Open addressing, 0 marking an empty slot: no mapping block is block 0.
 */
static size_t blkset_hash(uint64_t blk, size_t cap)
{
	return (size_t)((blk * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1);
}

int ext4fs__map_blkset_add(struct map_blkset *s, uint64_t blk)
{
	size_t j;

	if (2 * (s->count + 1) > s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 64;
		uint64_t *n = calloc(ncap, sizeof(*n));
		if (!n)
			return EXT4FS_E_NO_MEMORY;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slots[i])
				continue;
			for (j = blkset_hash(s->slots[i], ncap); n[j]; j = (j + 1) & (ncap - 1))
				;
			n[j] = s->slots[i];
		}
		free(s->slots);
		s->slots = n;
		s->cap = ncap;
	}
	for (j = blkset_hash(blk, s->cap); s->slots[j]; j = (j + 1) & (s->cap - 1))
		if (s->slots[j] == blk)
			return 1;
	s->slots[j] = blk;
	s->count++;
	return 0;
}

void ext4fs__map_blkset_free(struct map_blkset *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

struct ind_iter {
	struct ext4fs_fs *fs;
	uint32_t ino;
	unsigned flags;
	ext4fs_block_visit_fn fn;
	void *arg;
	uint64_t visited;            /* bounded by blocks_count */
	struct map_blkset seen;      /* indirect blocks visited */
	unsigned char *bufs[3];
};

static int ind_check(struct ind_iter *it, uint64_t blk, uint64_t lblk)
{
	if (!ext4fs_block_ptr_valid(it->fs, blk))
		return ext4fs__fs_fail(it->fs, EXT4FS_E_IND_CORRUPT,
				   "inode %u: block map entry for logical block %llu is %llu, outside the file system",
				   it->ino, (unsigned long long)lblk, (unsigned long long)blk);
	if (++it->visited > it->fs->geom.blocks_count)
		return ext4fs__fs_fail(it->fs, EXT4FS_E_IND_CORRUPT,
				   "inode %u: block map maps more blocks than the file system has",
				   it->ino);
	return 0;
}

/* Visit the subtree under indirect block blk (level 1 = single indirect) mapping from lblk. */
static int ind_walk(struct ind_iter *it, unsigned level, uint64_t blk, uint64_t lblk)
{
	struct ext4fs_fs *fs = it->fs;
	uint32_t per = fs->geom.block_size / 4;
	uint64_t span = 1;
	unsigned char *buf = it->bufs[level - 1];
	int err = ind_check(it, blk, lblk);

	if (err)
		return err;
	err = ext4fs__map_blkset_add(&it->seen, blk);
	if (err < 0)
		return ext4fs__fs_fail(fs, err, "no memory to walk inode %u", it->ino);
	if (err)
		return ext4fs__fs_fail(fs, EXT4FS_E_IND_CORRUPT,
				       "inode %u: indirect block %llu (mapping logical block %llu) is used twice",
				       it->ino, (unsigned long long)blk, (unsigned long long)lblk);
	if (!(it->flags & EXT4FS_ITER_DATA_ONLY)) {
		struct ext4fs_block_visit b = {
			.kind = (enum ext4fs_block_kind)(EXT4FS_BLOCK_IND + level - 1),
			.pblk = blk, .lblk = lblk, .count = 1,
		};
		err = it->fn(&b, it->arg);
		if (err)
			return err;
	}
	for (unsigned l = 1; l < level; l++)
		span *= per;
	err = ext4fs_block_read(fs, blk, buf);
	if (err)
		return ext4fs__fs_fail(fs, err, "inode %u: reading indirect block %llu: %s", it->ino,
				   (unsigned long long)blk, ext4fs_strerror(err));
	for (uint32_t i = 0; i < per; i++) {
		uint64_t child = le32_load(buf + 4 * i);
		uint64_t child_lblk = lblk + i * span;

		if (!child)
			continue;
		if (level > 1) {
			err = ind_walk(it, level - 1, child, child_lblk);
			if (err)
				return err;
			/* the child walk reused deeper buffers only; ours is intact */
			continue;
		}
		err = ind_check(it, child, child_lblk);
		if (err)
			return err;
		struct ext4fs_block_visit b = {
			.kind = EXT4FS_BLOCK_DATA, .pblk = child, .lblk = child_lblk, .count = 1,
		};
		err = it->fn(&b, it->arg);
		if (err)
			return err;
	}
	return 0;
}

static int ind_iterate(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       unsigned flags, ext4fs_block_visit_fn fn, void *arg)
{
	struct ind_iter it = { .fs = fs, .ino = ino, .flags = flags, .fn = fn, .arg = arg };
	uint32_t per = fs->geom.block_size / 4;
	uint64_t lblk;
	int err = 0;

	for (unsigned i = 0; i < 3; i++) {
		it.bufs[i] = malloc(fs->geom.block_size);
		if (!it.bufs[i]) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to walk inode %u", ino);
			goto out;
		}
	}
	for (unsigned i = 0; i < EXT4FS_NDIR_BLOCKS; i++) {
		uint64_t blk = le32_load(inode->i_block + 4 * i);
		if (!blk)
			continue;
		err = ind_check(&it, blk, i);
		if (err)
			goto out;
		struct ext4fs_block_visit b = { .kind = EXT4FS_BLOCK_DATA, .pblk = blk, .lblk = i, .count = 1 };
		err = fn(&b, arg);
		if (err)
			goto out;
	}
	lblk = EXT4FS_NDIR_BLOCKS;
	for (unsigned level = 1; level <= 3; level++) {
		uint64_t blk = le32_load(inode->i_block + 4 * (EXT4FS_IND_BLOCK + level - 1));
		uint64_t span = per;
		for (unsigned l = 1; l < level; l++)
			span *= per;
		if (blk) {
			err = ind_walk(&it, level, blk, lblk);
			if (err)
				goto out;
		}
		lblk += span;
	}
out:
	for (unsigned i = 0; i < 3; i++)
		free(it.bufs[i]);
	ext4fs__map_blkset_free(&it.seen);
	return err;
}

int ext4fs_block_iterate(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			 unsigned flags, ext4fs_block_visit_fn fn, void *arg)
{
	if (has_no_blocks(fs, inode))
		return 0;
	if (ext4fs_inode_has_extents(inode)) {
		struct extent_iter it = { flags, fn, arg };
		return ext4fs_extent_walk(fs, ino, inode, extent_iter_visit, &it);
	}
	return ind_iterate(fs, ino, inode, flags, fn, arg);
}

static int ind_bmap(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		    uint64_t lblk, uint64_t *pblk)
{
	uint32_t per = fs->geom.block_size / 4;
	uint64_t blk, span = 1, base = EXT4FS_NDIR_BLOCKS;
	unsigned level;
	unsigned char *buf;
	int err = 0;

	*pblk = 0;
	if (lblk < EXT4FS_NDIR_BLOCKS) {
		blk = le32_load(inode->i_block + 4 * lblk);
		goto check;
	}
	for (level = 1; level <= 3; level++) {
		span *= per;
		if (lblk < base + span)
			break;
		base += span;
	}
	if (level > 3)
		return 0;           /* beyond what a block map can address: a hole */
	blk = le32_load(inode->i_block + 4 * (EXT4FS_IND_BLOCK + level - 1));
	buf = malloc(fs->geom.block_size);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to map inode %u", ino);
	uint64_t off = lblk - base;
	for (; level > 0 && blk; level--) {
		span /= per;
		if (!ext4fs_block_ptr_valid(fs, blk)) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_IND_CORRUPT,
					  "inode %u: indirect block %llu for logical block %llu is outside the file system",
					  ino, (unsigned long long)blk, (unsigned long long)lblk);
			break;
		}
		err = ext4fs_block_read(fs, blk, buf);
		if (err)
			break;
		blk = le32_load(buf + 4 * (off / span));
		off %= span;
	}
	free(buf);
	if (err)
		return err;
check:
	if (blk && !ext4fs_block_ptr_valid(fs, blk))
		return ext4fs__fs_fail(fs, EXT4FS_E_IND_CORRUPT,
				   "inode %u: logical block %llu maps to %llu, outside the file system",
				   ino, (unsigned long long)lblk, (unsigned long long)blk);
	*pblk = blk;
	return 0;
}

int ext4fs_bmap(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		uint64_t lblk, uint64_t *pblk, uint64_t *run, int *unwritten)
{
	int dummy;

	if (!unwritten)
		unwritten = &dummy;
	*unwritten = 0;
	*pblk = 0;
	*run = 1;
	if (has_no_blocks(fs, inode))
		return 0;
	if (ext4fs_inode_has_extents(inode)) {
		uint32_t r = 1;
		int err;
		if (lblk >= (1ULL << 32))
			return 0;
		err = ext4fs_extent_map(fs, ino, inode, (uint32_t)lblk, pblk, &r, unwritten);
		*run = r;
		return err;
	}
	return ind_bmap(fs, ino, inode, lblk, pblk);
}

/* -- reading data through the map ------------------------------------------------ */

/* Largest number of blocks fetched with one request. */
#define MAX_RUN_BLOCKS 4096U

/*
 * Length of the physically contiguous, written run starting at logical
 * block lblk (which maps to pblk), at most max blocks.  Indirect maps report
 * runs of one block, so neighbours are asked for until the run breaks.
 */
static int contiguous_run(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  uint64_t lblk, uint64_t pblk, uint64_t first_run, uint64_t max,
			  uint64_t *n)
{
	uint64_t count = first_run < max ? first_run : max;

	while (count < max) {
		uint64_t p, r;
		int unwritten, err = ext4fs_bmap(fs, ino, inode, lblk + count, &p, &r, &unwritten);

		if (err)
			return err;
		if (p != pblk + count || unwritten || r == 0)
			break;
		count += r < max - count ? r : max - count;
	}
	*n = count;
	return 0;
}

int ext4fs__blockmap_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  uint64_t offset, unsigned char *buf, size_t len, size_t *got)
{
	uint32_t bs = fs->geom.block_size;
	uint64_t pos = offset, end = offset + len;
	unsigned char *bounce = NULL;
	int err = 0;

	while (pos < end) {
		uint64_t lblk = pos / bs, pblk, run, n;
		uint32_t boff = (uint32_t)(pos % bs);
		size_t done = (size_t)(pos - offset);
		int unwritten;

		err = ext4fs_bmap(fs, ino, inode, lblk, &pblk, &run, &unwritten);
		if (err)
			goto out;
		if (run == 0)
			run = 1;
		if (!pblk || unwritten) {
			/* Hole or unwritten extent: zeros up to the end of the run. */
			uint64_t avail = run * bs - boff;
			n = avail < end - pos ? avail : end - pos;
			memset(buf + done, 0, (size_t)n);
			pos += n;
			continue;
		}
		if (boff || end - pos < bs) {
			/* Partial block at either end of the request. */
			if (!bounce && !(bounce = malloc(bs))) {
				err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory to read data", ino);
				goto out;
			}
			err = ext4fs_blocks_read(fs, pblk, 1, bounce);
			if (err)
				goto out;
			n = bs - boff < end - pos ? bs - boff : end - pos;
			memcpy(buf + done, bounce + boff, (size_t)n);
			pos += n;
			continue;
		}
		uint64_t full = (end - pos) / bs;
		err = contiguous_run(fs, ino, inode, lblk, pblk, run,
				     full < MAX_RUN_BLOCKS ? full : MAX_RUN_BLOCKS, &n);
		if (err)
			goto out;
		err = ext4fs_blocks_read(fs, pblk, n, buf + done);
		if (err)
			goto out;
		pos += n * bs;
	}
out:
	*got = (size_t)(pos - offset);
	free(bounce);
	return err;
}
