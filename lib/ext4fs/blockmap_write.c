/*
 * blockmap_write.c - changing block maps: the ext4fs_bmap_* calls, which
 * hand extent trees to extent_write.c, and indirect maps in full.
 *
 * An indirect map (ext2, ext3) reaches logical blocks through 12 direct
 * slots in i_block, then one single, one double and one triple indirect
 * block, each an array of n = block_size / 4 block numbers (0 = hole).
 * New indirect blocks go just before the data they map, as ext2 and ext3
 * lay files out: ext4fs_bmap_alloc() asks for the missing indirect blocks
 * and the data in one request, capped at the end of the indirect block
 * that maps the first data block, so a file written in order reads as
 * indirect block, its data, next indirect block, its data...  An indirect
 * block left all zeros by an unmap is freed.  Indirect maps have no
 * unwritten state.
 *
 * Ordering: a new indirect block is written before the block (or inode)
 * pointing to it; blocks are freed after the entries that mapped them are
 * cleared.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/extent.h"
#include "blockmap_internal.h"
#include "blockmap_write_internal.h"
#include "extent_write_internal.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "ondisk_le.h"

#define LBLK_LIMIT (1ULL << 32)

enum map_kind ext4fs__map_kind_of(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode)
{
	uint16_t fmt = inode->i_mode & EXT4FS_S_IFMT;

	if (ext4fs_inode_has_inline_data(inode) || ext4fs_inode_is_fast_symlink(fs, inode) ||
	    fmt == EXT4FS_S_IFCHR || fmt == EXT4FS_S_IFBLK || fmt == EXT4FS_S_IFIFO ||
	    fmt == EXT4FS_S_IFSOCK)
		return MAP_NONE;
	return ext4fs_inode_has_extents(inode) ? MAP_EXTENTS : MAP_INDIRECT;
}

uint64_t ext4fs__map_max_blocks(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode)
{
	uint64_t n = fs->geom.block_size / 4, total;

	switch (ext4fs__map_kind_of(fs, inode)) {
	case MAP_EXTENTS:
		return LBLK_LIMIT;
	case MAP_INDIRECT:
		total = EXT4FS_NDIR_BLOCKS + n + n * n + n * n * n;
		return total < LBLK_LIMIT ? total : LBLK_LIMIT;
	default:
		return 0;
	}
}

/* -- indirect maps -- */

/* Where a logical block sits in an indirect map. */
struct ipath {
	unsigned levels;       /* 0: a direct slot; else indirect blocks on the way, top first */
	unsigned slot;         /* i_block slot: the direct block, or the top indirect block */
	uint32_t off[3];       /* entry used in each indirect block, top first */
	uint64_t span;         /* blocks from here to the end of the last indirect block (or direct slots) */
};

struct ictx {
	struct ext4fs_fs *fs;
	uint32_t ino;
	struct ext4fs_inode *inode;
	uint32_t per;          /* entries per indirect block */
	uint32_t bs;
	uint64_t blk[3];       /* indirect blocks of the path read last, 0 where missing */
	unsigned char *buf[3]; /* their contents */
	uint64_t free_start, free_count;   /* data blocks waiting to be freed (one run) */
	uint64_t freed;        /* blocks freed by an unmap, for i_blocks */
	unsigned meta_flags;   /* EXT4FS_ALLOC_USE_RESERVED for the indirect blocks of data already owned */
	int dirty;             /* *inode changed */
};

static int ind_path(uint32_t per, uint64_t lblk, struct ipath *p)
{
	uint64_t n = lblk, cover = per;

	memset(p, 0, sizeof(*p));
	if (n < EXT4FS_NDIR_BLOCKS) {
		p->slot = (unsigned)n;
		p->span = EXT4FS_NDIR_BLOCKS - n;
		return 0;
	}
	n -= EXT4FS_NDIR_BLOCKS;
	for (unsigned lv = 1; lv <= 3; lv++, cover *= per) {
		uint64_t unit = cover;
		if (n >= cover) {
			n -= cover;
			continue;
		}
		p->levels = lv;
		p->slot = EXT4FS_IND_BLOCK + lv - 1;
		for (unsigned i = 0; i < lv; i++) {
			unit /= per;
			p->off[i] = (uint32_t)(n / unit);
			n %= unit;
		}
		p->span = per - p->off[lv - 1];
		return 0;
	}
	return -1;
}

static int ictx_open(struct ictx *c, struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode)
{
	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->ino = ino;
	c->inode = inode;
	c->bs = fs->geom.block_size;
	c->per = c->bs / 4;
	c->buf[0] = malloc(3 * (size_t)c->bs);
	if (!c->buf[0])
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to change the block map of inode %u", ino);
	c->buf[1] = c->buf[0] + c->bs;
	c->buf[2] = c->buf[1] + c->bs;
	return 0;
}

static int ictx_close(struct ictx *c, int err, int *dirty)
{
	*dirty |= c->dirty;
	free(c->buf[0]);
	return err;
}

static int ind_bad_block(struct ictx *c, uint64_t blk, uint64_t lblk)
{
	return ext4fs__fs_fail(c->fs, EXT4FS_E_IND_CORRUPT,
			       "inode %u: indirect block %llu (on the way to logical block %llu) is outside the file system",
			       c->ino, (unsigned long long)blk, (unsigned long long)lblk);
}

static int ind_read(struct ictx *c, unsigned level, uint64_t blk, uint64_t lblk)
{
	int err;

	if (!ext4fs_block_ptr_valid(c->fs, blk))
		return ind_bad_block(c, blk, lblk);
	err = ext4fs_block_read(c->fs, blk, c->buf[level]);
	if (err)
		return ext4fs__fs_fail(c->fs, err, "inode %u: reading indirect block %llu: %s", c->ino,
				       (unsigned long long)blk, ext4fs_strerror(err));
	return 0;
}

/* Read the indirect blocks on p's way (c->blk[i] = 0 from the first missing one on). */
static int ind_read_path(struct ictx *c, const struct ipath *p, uint64_t lblk)
{
	uint64_t blk = le32_load(c->inode->i_block + 4 * p->slot);

	memset(c->blk, 0, sizeof(c->blk));
	for (unsigned i = 0; i < p->levels && blk; i++) {
		int err = ind_read(c, i, blk, lblk);
		if (err)
			return err;
		c->blk[i] = blk;
		blk = le32_load(c->buf[i] + 4 * p->off[i]);
	}
	return 0;
}

/* The n slots from p that map data: in i_block, or in the path's last indirect block (NULL
 * when that block is missing).  The path must have been read. */
static unsigned char *ind_slots(struct ictx *c, const struct ipath *p)
{
	if (p->levels == 0)
		return c->inode->i_block + 4 * p->slot;
	if (!c->blk[p->levels - 1])
		return NULL;
	return c->buf[p->levels - 1] + 4 * p->off[p->levels - 1];
}

/* Blocks from p to the end of the subtree that would hang from the first missing block. */
static uint64_t ind_hole_span(const struct ictx *c, const struct ipath *p)
{
	unsigned first = 0;
	uint64_t size = 1, pos = 0;

	while (first < p->levels && c->blk[first])
		first++;
	for (unsigned i = p->levels; i-- > first;) {
		pos += p->off[i] * size;
		size *= c->per;
	}
	return size - pos;
}

static int ind_run(struct ictx *c, uint64_t lblk, uint64_t max, uint64_t limit, uint64_t *pblk,
		   uint64_t *run)
{
	uint64_t count = 0, first = 0;

	while (count < max) {
		struct ipath p;
		uint64_t l = lblk + count, n;
		const unsigned char *slots;
		int err;

		if (l >= limit || ind_path(c->per, l, &p) < 0) {
			if (count && first)
				break;
			count = max;      /* beyond the map: a hole */
			break;
		}
		err = ind_read_path(c, &p, l);
		if (err)
			return err;
		slots = ind_slots(c, &p);
		if (!slots) {
			if (count && first)
				break;
			n = ind_hole_span(c, &p);
			count += n < max - count ? n : max - count;
			continue;
		}
		n = p.span < max - count ? p.span : max - count;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t b = le32_load(slots + 4 * i);
			if (count == 0) {
				first = b;
				if (b && !ext4fs_block_ptr_valid(c->fs, b))
					return ext4fs__fs_fail(c->fs, EXT4FS_E_IND_CORRUPT,
							       "inode %u: logical block %llu maps to %llu, outside the file system",
							       c->ino, (unsigned long long)l, (unsigned long long)b);
			} else if (first ? b != first + count : b != 0) {
				*pblk = first;
				*run = count;
				return 0;
			}
			count++;
		}
	}
	*pblk = first;
	*run = count < max ? count : max;
	return 0;
}

int ext4fs__map_run(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode, uint64_t lblk,
		    uint64_t max, uint64_t *pblk, uint64_t *run, int *unwritten)
{
	struct ictx c;
	int err;

	*pblk = 0;
	*run = max;
	*unwritten = 0;
	switch (ext4fs__map_kind_of(fs, inode)) {
	case MAP_EXTENTS: {
		uint32_t r = 1;
		if (lblk >= LBLK_LIMIT)
			return 0;
		err = ext4fs_extent_map(fs, ino, inode, (uint32_t)lblk, pblk, &r, unwritten);
		if (!err && r < max)
			*run = r;
		return err;
	}
	case MAP_INDIRECT: {
		int dirty = 0;
		/* Only reads: the context's inode is never changed. */
		err = ictx_open(&c, fs, ino, (struct ext4fs_inode *)inode);
		if (err)
			return err;
		err = ind_run(&c, lblk, max, ext4fs__map_max_blocks(fs, inode), pblk, run);
		return ictx_close(&c, err, &dirty);
	}
	default:
		return 0;
	}
}

/* Take one indirect block: the next of the pool, else from the allocator (counted in i_blocks). */
static int ind_new_block(struct ictx *c, uint64_t lblk, uint64_t goal, uint64_t *pool,
			 uint32_t *pool_n, uint64_t *blk, int *own)
{
	struct ext4fs_alloc_request req = {
		.ino = c->ino, .lblk = (uint32_t)lblk, .len = 1, .goal = goal,
		.flags = EXT4FS_ALLOC_METADATA | c->meta_flags,
	};
	uint32_t got;
	int err;

	*own = 0;
	if (*pool_n) {
		*blk = (*pool)++;
		(*pool_n)--;
		return 0;
	}
	if (!ext4fs_block_ptr_valid(c->fs, req.goal))
		req.goal = 0;
	err = ext4fs_alloc_blocks(c->fs, &req, blk, &got);
	if (err)
		return err;
	err = ext4fs_inode_add_blocks(c->fs, c->inode, 1);
	if (err) {
		ext4fs_free_blocks(c->fs, *blk, 1);
		return ext4fs__fs_fail(c->fs, err, "inode %u: block count would overflow i_blocks", c->ino);
	}
	c->dirty = 1;
	*own = 1;
	return 0;
}

static int ind_write(struct ictx *c, uint64_t blk, const unsigned char *buf)
{
	int err = ext4fs_block_write(c->fs, blk, buf);

	if (err)
		return ext4fs__fs_fail(c->fs, err, "inode %u: writing indirect block %llu: %s", c->ino,
				       (unsigned long long)blk, ext4fs_strerror(err));
	return 0;
}

static int ind_mapped(struct ictx *c, uint64_t lblk, uint32_t n)
{
	return ext4fs__fs_fail(c->fs, EXT4FS_E_INVALID_ARG,
			       "inode %u: logical blocks %llu-%llu are already mapped, in part or whole", c->ino,
			       (unsigned long long)lblk, (unsigned long long)(lblk + n - 1));
}

/* Check that the n slots from lblk (inside one span) are holes; *missing counts the indirect
 * blocks that mapping them would need. */
static int ind_check_hole(struct ictx *c, uint64_t lblk, uint32_t n, unsigned *missing)
{
	struct ipath p;
	const unsigned char *slots;
	int err;

	if (ind_path(c->per, lblk, &p) < 0 || p.span < n)
		return ext4fs__fs_fail(c->fs, EXT4FS_E_FILE_TOO_BIG,
				       "inode %u: logical block %llu is beyond what a block map addresses", c->ino,
				       (unsigned long long)lblk);
	err = ind_read_path(c, &p, lblk);
	if (err)
		return err;
	*missing = 0;
	for (unsigned i = 0; i < p.levels; i++)
		*missing += c->blk[i] == 0;
	slots = ind_slots(c, &p);
	for (uint32_t i = 0; slots && i < n; i++)
		if (le32_load(slots + 4 * i))
			return ind_mapped(c, lblk, n);
	return 0;
}

/*
 * Map the n blocks at lblk (a hole inside one span) to pblk..; missing
 * indirect blocks come from the pool, then from the allocator.  On an
 * allocation failure nothing has changed (pool blocks taken are given back
 * to the pool).
 */
static int ind_map(struct ictx *c, uint64_t lblk, uint64_t pblk, uint32_t n, uint64_t *pool,
		   uint32_t *pool_n)
{
	struct ipath p;
	uint64_t pool0 = *pool;
	uint32_t pool_n0 = *pool_n;
	int fresh[3] = { 0 }, own[3] = { 0 };
	unsigned last, i;
	int err;

	ind_path(c->per, lblk, &p);
	err = ind_read_path(c, &p, lblk);
	if (err)
		return err;
	if (p.levels == 0) {
		for (i = 0; i < n; i++)
			le32_store(c->inode->i_block + 4 * (p.slot + i), (uint32_t)(pblk + i));
		c->dirty = 1;
		return 0;
	}
	last = p.levels - 1;
	for (i = 0; i < p.levels; i++) {
		if (c->blk[i])
			continue;
		err = ind_new_block(c, lblk, pblk, pool, pool_n, &c->blk[i], &own[i]);
		if (err) {
			while (i-- > 0)
				if (own[i]) {
					ext4fs_free_blocks(c->fs, c->blk[i], 1);
					ext4fs_inode_add_blocks(c->fs, c->inode, -1);
				}
			*pool = pool0;
			*pool_n = pool_n0;
			return err;
		}
		memset(c->buf[i], 0, c->bs);
		fresh[i] = 1;
	}
	for (i = 0; i < n; i++)
		le32_store(c->buf[last] + 4 * (p.off[last] + i), (uint32_t)(pblk + i));
	/* Bottom up, so no block points to one not yet written. */
	err = ind_write(c, c->blk[last], c->buf[last]);
	for (i = last; !err && i-- > 0;) {
		if (!fresh[i + 1])
			break;
		le32_store(c->buf[i] + 4 * p.off[i], (uint32_t)c->blk[i + 1]);
		err = ind_write(c, c->blk[i], c->buf[i]);
	}
	if (!err && fresh[0]) {
		le32_store(c->inode->i_block + 4 * p.slot, (uint32_t)c->blk[0]);
		c->dirty = 1;
	}
	return err;
}

/* -- unmapping -- */

static int free_flush(struct ictx *c)
{
	int err;

	if (!c->free_count)
		return 0;
	err = ext4fs_free_blocks(c->fs, c->free_start, c->free_count);
	if (err)
		return ext4fs__fs_fail(c->fs, err, "inode %u: freeing blocks %llu-%llu: %s", c->ino,
				       (unsigned long long)c->free_start,
				       (unsigned long long)(c->free_start + c->free_count - 1), ext4fs_strerror(err));
	c->freed += c->free_count;
	c->free_count = 0;
	return 0;
}

static int free_add(struct ictx *c, uint64_t blk)
{
	int err = 0;

	if (c->free_count && blk == c->free_start + c->free_count) {
		c->free_count++;
		return 0;
	}
	err = free_flush(c);
	c->free_start = blk;
	c->free_count = 1;
	return err;
}

static int all_zero(const unsigned char *buf, uint32_t size)
{
	for (uint32_t i = 0; i < size; i += 4)
		if (le32_load(buf + i))
			return 0;
	return 1;
}

/*
 * Unmap [from, to) under indirect block blk of the given level (1 =
 * single), which maps logical blocks from base.  *empty tells the caller
 * the block holds nothing any more (it is then not written; the caller
 * frees it).
 */
static int ind_unmap_tree(struct ictx *c, unsigned level, uint64_t blk, uint64_t base,
			  uint64_t from, uint64_t to, int free_data, int *empty)
{
	unsigned char *buf = c->buf[level - 1];
	uint64_t unit = 1, i0, i1;
	int changed = 0, err;

	*empty = 0;
	err = ind_read(c, level - 1, blk, base);
	if (err)
		return err;
	for (unsigned l = 1; l < level; l++)
		unit *= c->per;
	i0 = from > base ? (from - base) / unit : 0;
	i1 = (to - base + unit - 1) / unit;
	if (i1 > c->per)
		i1 = c->per;
	for (uint64_t i = i0; i < i1; i++) {
		uint64_t child = le32_load(buf + 4 * i), cbase = base + i * unit;
		int cempty;

		if (!child)
			continue;
		if (!ext4fs_block_ptr_valid(c->fs, child))
			return ind_bad_block(c, child, cbase);
		if (level == 1) {
			if (free_data) {
				err = free_add(c, child);
				if (err)
					return err;
			}
		} else {
			err = ind_unmap_tree(c, level - 1, child, cbase, from, to, free_data, &cempty);
			if (err)
				return err;
			if (!cempty)
				continue;
			err = free_add(c, child);
			if (err)
				return err;
		}
		le32_store(buf + 4 * i, 0);
		changed = 1;
	}
	if (all_zero(buf, c->bs)) {
		*empty = 1;
		return 0;
	}
	return changed ? ind_write(c, blk, buf) : 0;
}

static int ind_unmap(struct ictx *c, uint64_t start, uint64_t end, int free_data)
{
	uint64_t base = EXT4FS_NDIR_BLOCKS, cover = c->per;
	int err = 0;

	for (uint64_t i = start; i < end && i < EXT4FS_NDIR_BLOCKS; i++) {
		uint64_t b = le32_load(c->inode->i_block + 4 * i);
		if (!b)
			continue;
		if (free_data) {
			err = free_add(c, b);
			if (err)
				goto out;
		}
		le32_store(c->inode->i_block + 4 * i, 0);
		c->dirty = 1;
	}
	for (unsigned lv = 1; lv <= 3; lv++, base += cover, cover *= c->per) {
		unsigned char *slot = c->inode->i_block + 4 * (EXT4FS_IND_BLOCK + lv - 1);
		uint64_t top = le32_load(slot);
		int empty;

		if (!top || end <= base || start >= base + cover)
			continue;
		err = ind_unmap_tree(c, lv, top, base, start, end, free_data, &empty);
		if (err)
			goto out;
		if (empty) {
			le32_store(slot, 0);
			c->dirty = 1;
			err = free_add(c, top);
			if (err)
				goto out;
		}
	}
	err = free_flush(c);
out:
	if (c->freed) {
		ext4fs_inode_add_blocks(c->fs, c->inode, -(int64_t)c->freed);
		c->dirty = 1;
	}
	return err;
}

/* Goal for data at lblk: right after the block before it, else near the data before it in its
 * indirect block, else just after that indirect block, else 0 (the allocator decides). */
static uint64_t ind_goal(struct ictx *c, uint64_t lblk)
{
	struct ipath p;
	const unsigned char *slots;
	uint64_t pb = 0, run;

	if (lblk > 0 && ind_run(c, lblk - 1, 1, LBLK_LIMIT, &pb, &run) == 0 && pb)
		return pb + 1;
	if (ind_path(c->per, lblk, &p) < 0 || ind_read_path(c, &p, lblk))
		return 0;
	slots = ind_slots(c, &p);
	if (!slots)
		return 0;
	for (uint32_t back = 1; back <= (p.levels ? p.off[p.levels - 1] : p.slot); back++) {
		uint64_t b = le32_load(slots - 4 * back);
		if (b)
			return b + back;
	}
	return p.levels ? c->blk[p.levels - 1] + 1 : 0;
}

static int ind_alloc(struct ictx *c, uint64_t lblk, uint32_t len, uint64_t file_blocks,
		     unsigned flags, uint64_t *pblk, uint32_t *got)
{
	struct ipath p;
	struct ext4fs_alloc_request req = {
		.ino = c->ino, .lblk = (uint32_t)lblk, .file_blocks = file_blocks, .flags = flags,
	};
	uint64_t start, pool;
	uint32_t total, n, pool_n;
	unsigned missing;
	int err;

	if (ind_path(c->per, lblk, &p) < 0 || lblk >= LBLK_LIMIT)
		return ext4fs__fs_fail(c->fs, EXT4FS_E_FILE_TOO_BIG,
				       "inode %u: logical block %llu is beyond what a block map addresses", c->ino,
				       (unsigned long long)lblk);
	n = p.span < len ? (uint32_t)p.span : len;
	err = ind_check_hole(c, lblk, n, &missing);
	if (err)
		return err;
	req.goal = ind_goal(c, lblk);
	if (!ext4fs_block_ptr_valid(c->fs, req.goal))
		req.goal = 0;
	req.len = n + missing;
	req.min_len = missing + 1;
	err = ext4fs_alloc_blocks(c->fs, &req, &start, &total);
	if (err)
		return err;
	if (start + total > LBLK_LIMIT) {
		ext4fs_free_blocks(c->fs, start, total);
		return ext4fs__fs_fail(c->fs, EXT4FS_E_NO_SPACE,
				       "inode %u: block map entries cannot hold block numbers above 2^32", c->ino);
	}
	err = ext4fs_inode_add_blocks(c->fs, c->inode, total);
	if (err) {
		ext4fs_free_blocks(c->fs, start, total);
		return ext4fs__fs_fail(c->fs, err, "inode %u: block count would overflow i_blocks", c->ino);
	}
	c->dirty = 1;
	pool = start;
	pool_n = missing;
	err = ind_map(c, lblk, start + missing, total - missing, &pool, &pool_n);
	if (err) {
		ext4fs_free_blocks(c->fs, start, total);
		ext4fs_inode_add_blocks(c->fs, c->inode, -(int64_t)total);
		return err;
	}
	*pblk = start + missing;
	*got = total - missing;
	return 0;
}

static int ind_set(struct ictx *c, uint64_t lblk, uint64_t pblk, uint32_t len)
{
	uint64_t done = 0, pool = 0;
	uint32_t pool_n = 0;
	unsigned missing;
	int err;

	if (pblk + len > LBLK_LIMIT)
		return ext4fs__fs_fail(c->fs, EXT4FS_E_INVALID_ARG,
				       "inode %u: block map entries cannot hold block numbers above 2^32", c->ino);
	/* Check the whole range first, so a conflict changes nothing. */
	while (done < len) {
		struct ipath p;
		uint32_t n;
		if (ind_path(c->per, lblk + done, &p) < 0 || lblk + done >= LBLK_LIMIT)
			return ext4fs__fs_fail(c->fs, EXT4FS_E_FILE_TOO_BIG,
					       "inode %u: logical block %llu is beyond what a block map addresses",
					       c->ino, (unsigned long long)(lblk + done));
		n = p.span < len - done ? (uint32_t)p.span : (uint32_t)(len - done);
		err = ind_check_hole(c, lblk + done, n, &missing);
		if (err)
			return err;
		done += n;
	}
	err = ext4fs_inode_add_blocks(c->fs, c->inode, len);
	if (err)
		return ext4fs__fs_fail(c->fs, err, "inode %u: block count would overflow i_blocks", c->ino);
	c->dirty = 1;
	for (done = 0; done < len;) {
		struct ipath p;
		uint32_t n;
		ind_path(c->per, lblk + done, &p);
		n = p.span < len - done ? (uint32_t)p.span : (uint32_t)(len - done);
		err = ind_map(c, lblk + done, pblk + done, n, &pool, &pool_n);
		if (err)
			break;
		done += n;
	}
	if (err) {
		char msg[sizeof(c->fs->errmsg)];
		memcpy(msg, c->fs->errmsg, sizeof(msg));
		ind_unmap(c, lblk, lblk + done, 0);
		memcpy(c->fs->errmsg, msg, sizeof(msg));
		ext4fs_inode_add_blocks(c->fs, c->inode, -(int64_t)len);
	}
	return err;
}

/* -- the calls, with and without writing the inode -- */

static int map_check(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     enum map_kind *kind)
{
	int err = ext4fs__fs_require_rw(fs, "changing a block map");

	if (err)
		return err;
	*kind = ext4fs__map_kind_of(fs, inode);
	if (*kind != MAP_NONE)
		return 0;
	if (ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u keeps its data inline; writing inline data is not supported yet", ino);
	return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
			       "inode %u has no block map (a fast symlink or a special file)", ino);
}

int ext4fs__map_alloc(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t lblk,
		      uint32_t len, uint64_t file_blocks, unsigned alloc_flags, int unwritten,
		      uint64_t *pblk, uint32_t *got, int *dirty)
{
	enum map_kind kind;
	struct ictx c;
	int err = map_check(fs, ino, inode, &kind);

	if (err)
		return err;
	if (len == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: allocating zero blocks", ino);
	if (kind == MAP_EXTENTS)
		return ext4fs__extent_bmap_alloc(fs, ino, inode, lblk, len, file_blocks, alloc_flags, unwritten,
						 pblk, got, dirty);
	if (unwritten)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u: block maps have no unwritten blocks (extents only)", ino);
	err = ictx_open(&c, fs, ino, inode);
	if (err)
		return err;
	return ictx_close(&c, ind_alloc(&c, lblk, len, file_blocks, alloc_flags, pblk, got), dirty);
}

int ext4fs__map_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t lblk,
		    uint64_t pblk, uint32_t len, int unwritten, int *dirty)
{
	enum map_kind kind;
	struct ictx c;
	int err = map_check(fs, ino, inode, &kind);

	if (err)
		return err;
	if (kind == MAP_EXTENTS)
		return ext4fs__extent_bmap_set(fs, ino, inode, lblk, pblk, len, unwritten, dirty);
	if (unwritten)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u: block maps have no unwritten blocks (extents only)", ino);
	if (len == 0 || !ext4fs_block_ptr_valid(fs, pblk) || pblk <= fs->geom.first_data_block ||
	    len > fs->geom.blocks_count - pblk)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u: blocks %llu (+%u) are not a range inside the file system", ino,
				       (unsigned long long)pblk, len);
	err = ictx_open(&c, fs, ino, inode);
	if (err)
		return err;
	/* The data is the caller's already: failing for want of an indirect block would strand it. */
	c.meta_flags = EXT4FS_ALLOC_USE_RESERVED;
	return ictx_close(&c, ind_set(&c, lblk, pblk, len), dirty);
}

int ext4fs__map_unmap(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t lblk,
		      uint64_t len, int *dirty)
{
	enum map_kind kind;
	struct ictx c;
	uint64_t limit, end;
	int err = map_check(fs, ino, inode, &kind);

	if (err)
		return err;
	if (kind == MAP_EXTENTS)
		return ext4fs__extent_bmap_unmap(fs, ino, inode, lblk, len, dirty);
	limit = ext4fs__map_max_blocks(fs, inode);
	if (len == 0 || lblk >= limit)
		return 0;
	end = len >= limit - lblk ? limit : lblk + len;
	err = ictx_open(&c, fs, ino, inode);
	if (err)
		return err;
	return ictx_close(&c, ind_unmap(&c, lblk, end, 1), dirty);
}

int ext4fs__map_mark_written(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			     uint64_t lblk, uint64_t len, int *dirty)
{
	enum map_kind kind;
	int err = map_check(fs, ino, inode, &kind);

	if (err)
		return err;
	if (kind == MAP_EXTENTS)
		return ext4fs__extent_bmap_mark_written(fs, ino, inode, lblk, len, dirty);
	return 0;   /* nothing is unwritten in a block map */
}

/* The public calls write the inode when it changed, also after a failure. */
static int write_if_dirty(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  int err, int dirty)
{
	int werr = dirty ? ext4fs_inode_write(fs, ino, inode) : 0;

	return err ? err : werr;
}

int ext4fs_bmap_alloc(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t lblk, uint32_t len, uint64_t file_blocks, unsigned alloc_flags,
		      int unwritten, uint64_t *pblk, uint32_t *got)
{
	int dirty = 0;
	int err = ext4fs__map_alloc(fs, ino, inode, lblk, len, file_blocks, alloc_flags, unwritten, pblk, got,
				    &dirty);

	return write_if_dirty(fs, ino, inode, err, dirty);
}

int ext4fs_bmap_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		    uint64_t lblk, uint64_t pblk, uint32_t len, int unwritten)
{
	int dirty = 0;
	int err = ext4fs__map_set(fs, ino, inode, lblk, pblk, len, unwritten, &dirty);

	return write_if_dirty(fs, ino, inode, err, dirty);
}

int ext4fs_bmap_unmap(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t lblk, uint64_t len)
{
	int dirty = 0;
	int err = ext4fs__map_unmap(fs, ino, inode, lblk, len, &dirty);

	return write_if_dirty(fs, ino, inode, err, dirty);
}

int ext4fs_bmap_mark_written(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			     uint64_t lblk, uint64_t len)
{
	int dirty = 0;
	int err = ext4fs__map_mark_written(fs, ino, inode, lblk, len, &dirty);

	return write_if_dirty(fs, ino, inode, err, dirty);
}

/* -- Moving one mapping block ------------------------------------------- */

/*
 * Where a reference to a mapping block was found.  The place is said
 * explicitly, never by a block number: 0 is a number a damaged map can hold,
 * and taking it for "the inode" once sent a parent block's offset into the
 * 60-byte i_block.
 */
enum mref_place {
	MREF_IN_INODE,          /* in i_block */
	MREF_IN_NODE,           /* in an extent tree block (checksummed with the inode) */
	MREF_IN_IND,            /* in an indirect block */
};

struct mref {
	enum mref_place place;
	uint64_t parent;        /* the block holding the reference, unless MREF_IN_INODE */
	size_t off;             /* byte offset of the reference in i_block or in the parent block */
};

/*
 * One search for the reference to a mapping block.  The map being searched
 * may be damaged (e4fsck moves blocks of maps it has not repaired yet), so
 * a tree node is followed only under the depth its parent promises, and no
 * block is searched twice: a node listed under every entry of its parent,
 * level after level, would otherwise cost entries^depth reads (a hang).
 */
struct mfind {
	struct ext4fs_fs *fs;
	uint64_t old;
	unsigned char *scratch;       /* a block per level below the root */
	struct map_blkset seen;       /* tree or indirect blocks searched already */
	struct mref *ref;
};

/* Whether blk still has to be searched: 1 yes, 0 no (invalid or searched), or an error. */
static int find_enter(struct mfind *f, uint64_t blk)
{
	int rc;

	if (!ext4fs_block_ptr_valid(f->fs, blk))
		return 0;
	rc = ext4fs__map_blkset_add(&f->seen, blk);
	if (rc < 0)
		return ext4fs__fs_fail(f->fs, rc, "no memory to search a block map");
	return !rc;
}

/*
 * Search an extent node (pre-order) for the index entry whose child is old.
 * level 0 is i_block (self unused, any depth up to the maximum), deeper
 * levels are blocks (self their number) of depth want_depth.
 * 1 found, 0 not, or an error code.
 */
static int find_in_node(struct mfind *f, const unsigned char *node, size_t size, uint64_t self,
			unsigned level, int want_depth)
{
	const struct ext4fs_geom *g = ext4fs_geom(f->fs);
	struct ext4fs_extent_header h;

	ext4fs_extent_node_header(node, &h);
	if (h.magic != EXT4FS_EXTENT_MAGIC || h.depth == 0 || h.entries > ext4fs_extent_node_room(size) ||
	    (want_depth < 0 ? h.depth > EXT4FS_EXTENT_MAX_DEPTH : h.depth != (unsigned)want_depth) ||
	    level >= EXT4FS_EXTENT_MAX_DEPTH)
		return 0;
	for (unsigned i = 0; i < h.entries; i++) {
		struct ext4fs_extent_entry e;
		ext4fs_extent_node_entry(node, i, 0, &e);
		if (e.pblk == f->old) {
			*f->ref = (struct mref){ level ? MREF_IN_NODE : MREF_IN_INODE, self, 12 + 12 * (size_t)i };
			return 1;
		}
		int rc = find_enter(f, e.pblk);
		if (rc <= 0) {
			if (rc < 0)
				return rc;
			continue;
		}
		unsigned char *child = f->scratch + (size_t)level * g->block_size;
		int err = ext4fs_block_read(f->fs, e.pblk, child);
		if (err)
			return err;
		rc = find_in_node(f, child, g->block_size, e.pblk, level + 1, (int)h.depth - 1);
		if (rc)
			return rc;
	}
	return 0;
}

/* Search an indirect block of the given height (1 single, 2 double, 3 triple) for a pointer to old. */
static int find_in_ind(struct mfind *f, uint64_t blk, unsigned height)
{
	const struct ext4fs_geom *g = ext4fs_geom(f->fs);
	unsigned char *buf = f->scratch + (size_t)(3 - height) * g->block_size;
	int err = ext4fs_block_read(f->fs, blk, buf);

	if (err)
		return err;
	for (size_t off = 0; off + 4 <= g->block_size; off += 4) {
		uint64_t p = le32_load(buf + off);
		if (p == f->old) {
			*f->ref = (struct mref){ MREF_IN_IND, blk, off };
			return 1;
		}
		if (height > 1) {
			int rc = find_enter(f, p);
			if (rc > 0)
				rc = find_in_ind(f, p, height - 1);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ext4fs_bmap_move_map_block(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t old,
			       uint64_t new_blk)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	enum map_kind kind = ext4fs__map_kind_of(fs, inode);
	struct mref ref;
	struct mfind f = { .fs = fs, .old = old, .ref = &ref };
	unsigned char *scratch, *copy;
	int found = 0, err;

	if ((err = ext4fs__fs_require_rw(fs, "moving a mapping block")))
		return err;
	if (kind == MAP_NONE || !ext4fs_block_ptr_valid(fs, old) || old == new_blk || !ext4fs_block_ptr_valid(fs, new_blk))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: cannot move mapping block %llu to %llu", ino,
				       (unsigned long long)old, (unsigned long long)new_blk);
	/* A block for each tree level below the root (or indirect height), and one for the copy. */
	scratch = malloc((size_t)(EXT4FS_EXTENT_MAX_DEPTH + 1) * g->block_size);
	if (!scratch)
		return EXT4FS_E_NO_MEMORY;
	f.scratch = scratch;
	copy = scratch + (size_t)EXT4FS_EXTENT_MAX_DEPTH * g->block_size;
	if (kind == MAP_EXTENTS) {
		found = find_in_node(&f, inode->i_block, sizeof(inode->i_block), 0, 0, -1);
	} else {
		/* Pre-order, as the map is walked: each indirect block before the blocks it maps. */
		for (unsigned slot = 12; slot < 15 && !found; slot++) {
			uint64_t p = le32_load(inode->i_block + 4 * slot);
			if (p == old) {
				ref = (struct mref){ MREF_IN_INODE, 0, 4 * (size_t)slot };
				found = 1;
			} else if (slot > 12) {
				found = find_enter(&f, p);
				if (found > 0)
					found = find_in_ind(&f, p, slot - 11);
			}
		}
	}
	ext4fs__map_blkset_free(&f.seen);
	if (found < 0) {
		err = found;
		goto out;
	}
	if (!found) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: block %llu is not one of its mapping blocks", ino,
				      (unsigned long long)old);
		goto out;
	}
	/* The reference must lie inside the buffer it will be written into. */
	if (ref.off + (kind == MAP_EXTENTS ? 12 : 4) > (ref.place == MREF_IN_INODE ? sizeof(inode->i_block)
										   : g->block_size)) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: reference to block %llu at bad offset %zu", ino,
				      (unsigned long long)old, ref.off);
		goto out;
	}
	/* The copy first, then the reference to it. */
	if ((err = ext4fs_block_read(fs, old, copy)))
		goto out;
	if (kind == MAP_EXTENTS)
		ext4fs_extent_node_csum_set(fs, ino, inode->i_generation, copy, g->block_size);
	if ((err = ext4fs_block_write(fs, new_blk, copy)))
		goto out;
	if (ref.place == MREF_IN_INODE) {
		if (kind == MAP_EXTENTS) {
			struct ext4fs_extent_entry e;
			unsigned i = (unsigned)((ref.off - 12) / 12);
			ext4fs_extent_node_entry(inode->i_block, i, 0, &e);
			e.pblk = new_blk;
			ext4fs_extent_node_set_entry(inode->i_block, i, 0, &e);
		} else {
			le32_store(inode->i_block + ref.off, (uint32_t)new_blk);
		}
		err = ext4fs_inode_write(fs, ino, inode);
		goto out;
	}
	if ((err = ext4fs_block_read(fs, ref.parent, copy)))
		goto out;
	if (ref.place == MREF_IN_NODE) {
		struct ext4fs_extent_entry e;
		unsigned i = (unsigned)((ref.off - 12) / 12);
		ext4fs_extent_node_entry(copy, i, 0, &e);
		e.pblk = new_blk;
		ext4fs_extent_node_set_entry(copy, i, 0, &e);
		ext4fs_extent_node_csum_set(fs, ino, inode->i_generation, copy, g->block_size);
	} else {
		le32_store(copy + ref.off, (uint32_t)new_blk);
	}
	err = ext4fs_block_write(fs, ref.parent, copy);
out:
	free(scratch);
	return err;
}
