/*
 * mkfs_write.c - write a planned file system.
 *
 * Order of work, chosen so an interrupted run never leaves something that
 * looks like a finished file system:
 *   1. the old primary superblock is cleared first (a discard does it too);
 *   2. discard (a regular file gets a hole: it then reads as zeros);
 *   3. inode tables and the journal are zeroed when the target does not
 *      read as zeros and lazy init was not asked for;
 *   4. bitmaps, inodes, directory blocks, the resize inode's blocks, the
 *      journal superblock, the orphan file, descriptor tables and backup
 *      superblocks are written; all-zero blocks are skipped on a target that
 *      reads as zeros, and neighbouring blocks go out in one write;
 *   5. flush, then the primary superblock, then flush again.
 */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/inode.h"
#include "ext4fs/journal.h"
#include "ext4fs/resize_inode.h"
#include "fs_internal.h"
#include "mkfs_internal.h"
#include "ondisk_le.h"

#define WRITE_BATCH_BYTES (4U << 20)   /* neighbouring blocks are sent in writes of up to 4 MiB */
#define ORPHAN_BLOCK_MAGIC 0x0B10CA04U

struct writer {
	const struct ext4fs_mkfs_plan *pl;
	struct ext4fs_io *io;
	uint32_t bs;
	int zeroed;                 /* the target reads as zeros: skip all-zero blocks */
	unsigned char *batch;
	uint64_t batch_start;       /* first block of the pending run */
	uint32_t batch_blocks;
	uint32_t batch_max;
	char *errmsg;
	size_t errmsg_len;
	const char *what;           /* what is being written, for messages */
	ext4fs_mkfs_progress_fn progress;
	void *progress_arg;
};

static int wfail(struct writer *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int wfail(struct writer *w, int err, const char *fmt, ...)
{
	if (w->errmsg && w->errmsg_len) {
		char what[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		snprintf(w->errmsg, w->errmsg_len, "%s: %s", what, ext4fs_strerror(err));
	}
	return err;
}

static void report(struct writer *w, enum ext4fs_mkfs_stage st, uint64_t done, uint64_t total)
{
	if (w->progress)
		w->progress(w->progress_arg, st, done, total);
}

static int is_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int batch_flush(struct writer *w)
{
	int err;

	if (!w->batch_blocks)
		return 0;
	err = ext4fs_io_write(w->io, w->batch_start * w->bs, w->batch, (size_t)w->batch_blocks * w->bs);
	if (err)
		return wfail(w, err, "writing %s at block %llu", w->what,
			     (unsigned long long)w->batch_start);
	w->batch_blocks = 0;
	return 0;
}

/* Queue one block for writing at blk; blocks are written in increasing runs. */
static int put_block(struct writer *w, uint64_t blk, const void *data)
{
	int err;

	if (w->zeroed && is_zero(data, w->bs))
		return batch_flush(w);
	if (w->batch_blocks &&
	    (blk != w->batch_start + w->batch_blocks || w->batch_blocks == w->batch_max))
		if ((err = batch_flush(w)))
			return err;
	if (!w->batch_blocks)
		w->batch_start = blk;
	memcpy(w->batch + (size_t)w->batch_blocks * w->bs, data, w->bs);
	w->batch_blocks++;
	return 0;
}

static int zero_range(struct writer *w, uint64_t blk, uint64_t count)
{
	int err;

	if (w->zeroed || !count)
		return 0;
	if ((err = batch_flush(w)))
		return err;
	err = ext4fs_io_zeroout(w->io, blk * w->bs, count * w->bs);
	if (err)
		return wfail(w, err, "zeroing %s at blocks %llu-%llu", w->what, (unsigned long long)blk,
			     (unsigned long long)(blk + count - 1));
	return 0;
}

/* -- bitmaps -------------------------------------------------------------- */

static void set_bit(unsigned char *map, uint64_t i)
{
	map[i >> 3] |= (unsigned char)(1U << (i & 7));
}

static void set_bits(unsigned char *map, uint64_t from, uint64_t to)
{
	/* Ragged ends bit by bit, whole bytes in between. */
	while (from < to && (from & 7))
		set_bit(map, from++);
	if (to - from >= 8) {
		memset(map + (from >> 3), 0xFF, (size_t)((to - from) >> 3));
		from += (to - from) & ~(uint64_t)7;
	}
	while (from < to)
		set_bit(map, from++);
}

static int write_bitmaps(struct writer *w, unsigned char *buf)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	struct ext4fs_fs *fs = pl->fs;
	const struct ext4fs_geom *geo = &fs->geom;
	const struct extset *used = &pl->used;
	uint64_t last_ino = pl->orphan_ino ? pl->orphan_ino : pl->lpf_ino;
	int csum = geo->has_metadata_csum || geo->has_gdt_csum;
	int err;

	w->what = "the bitmaps";
	for (uint32_t g = 0; g < geo->group_count; g++) {
		struct ext4fs_group_desc gd = fs->groups[g];
		uint64_t first = ext4fs_group_first_block(fs, g);
		uint64_t len = ext4fs_group_last_block(fs, g) - first + 1;

		if (!(csum && (gd.flags & EXT4FS_BG_BLOCK_UNINIT))) {
			memset(buf, 0, w->bs);
			for (size_t i = ext4fs__extset_first_after(used, first);
			     i < used->n && used->r[i].start < first + len; i++) {
				uint64_t a = used->r[i].start > first ? used->r[i].start : first;
				uint64_t b = used->r[i].start + used->r[i].len;
				if (b > first + len)
					b = first + len;
				set_bits(buf, a - first, b - first);
			}
			/* Bits past the group's end (a short last group, and the rest of the block) read as used. */
			set_bits(buf, len, (uint64_t)w->bs * 8);
			if (geo->has_metadata_csum)
				gd.block_bitmap_csum = ext4fs_crc32c(geo->csum_seed, buf, geo->clusters_per_group / 8);
			if ((err = put_block(w, gd.block_bitmap, buf)))
				return err;
		}
		if (!(csum && (gd.flags & EXT4FS_BG_INODE_UNINIT))) {
			uint64_t ino_first = (uint64_t)g * geo->inodes_per_group + 1;
			memset(buf, 0, w->bs);
			if (ino_first <= last_ino) {
				uint64_t n = last_ino - ino_first + 1;
				set_bits(buf, 0, n < geo->inodes_per_group ? n : geo->inodes_per_group);
			}
			set_bits(buf, geo->inodes_per_group, (uint64_t)w->bs * 8);
			if (geo->has_metadata_csum)
				gd.inode_bitmap_csum = ext4fs_crc32c(geo->csum_seed, buf, geo->inodes_per_group / 8);
			if ((err = put_block(w, gd.inode_bitmap, buf)))
				return err;
		}
		if (csum && (!(pl->p.flags & EXT4FS_MKFS_LAZY_ITABLE_INIT) || w->zeroed))
			gd.flags |= EXT4FS_BG_INODE_ZEROED;
		ext4fs__fs_group_desc_store(fs, g, &gd);
	}
	return batch_flush(w);
}

/* -- inodes ---------------------------------------------------------------- */

static void inode_times(const struct ext4fs_mkfs_plan *pl, struct ext4fs_inode *in, int with_crtime)
{
	uint32_t t = (uint32_t)pl->p.now;
	uint32_t hi = (uint32_t)(((uint64_t)pl->p.now >> 32) & 3);

	in->i_atime = in->i_ctime = in->i_mtime = t;
	if (in->i_extra_isize >= 24) {
		in->i_atime_extra = in->i_ctime_extra = in->i_mtime_extra = hi;
		if (with_crtime) {
			in->i_crtime = t;
			in->i_crtime_extra = hi;
		}
	}
}

static void inode_set_blocks(const struct ext4fs_mkfs_plan *pl, struct ext4fs_inode *in, uint64_t blocks)
{
	uint64_t sectors = blocks * (pl->fs->geom.block_size / 512);

	in->i_blocks_lo = (uint32_t)sectors;
	in->i_blocks_high = (uint16_t)(sectors >> 32);
}

static void extent_header(unsigned char *p, uint16_t entries, uint16_t max, uint16_t depth)
{
	le16_store(p + 0, EXT4FS_EXTENT_MAGIC);
	le16_store(p + 2, entries);
	le16_store(p + 4, max);
	le16_store(p + 6, depth);
	le32_store(p + 8, 0);
}

static void extent_entry(unsigned char *p, uint32_t lblk, uint16_t len, uint64_t pblk)
{
	le32_store(p + 0, lblk);
	le16_store(p + 4, len);
	le16_store(p + 6, (uint16_t)(pblk >> 32));
	le32_store(p + 8, (uint32_t)pblk);
}

/* Fill i_block and flags for file f; extent leaves are written by write_file_blocks(). */
static void inode_map_file(const struct ext4fs_mkfs_plan *pl, struct ext4fs_inode *in, const struct mkfs_file *f)
{
	memset(in->i_block, 0, sizeof(in->i_block));
	if (!f->blockmapped) {
		in->i_flags |= EXT4FS_EXTENTS_FL;
		if (!f->leaf) {
			uint32_t lblk = 0;
			extent_header(in->i_block, (uint16_t)f->n, 4, 0);
			for (uint32_t i = 0; i < f->n; i++) {
				extent_entry(in->i_block + 12 + 12 * i, lblk, (uint16_t)f->ext[i].len, f->ext[i].start);
				lblk += (uint32_t)f->ext[i].len;
			}
		} else {
			extent_header(in->i_block, 1, 4, 1);
			le32_store(in->i_block + 12, 0);
			le32_store(in->i_block + 16, (uint32_t)f->leaf);
			le16_store(in->i_block + 20, (uint16_t)(f->leaf >> 32));
		}
	} else {
		/* The first blocks in allocation order: direct blocks, then the indirect roots. */
		uint32_t apb = pl->fs->geom.block_size / 4;
		struct { uint32_t run; uint64_t off; } cur = { 0, 0 };
		for (uint64_t l = 0; l < f->blocks; l++) {
			uint32_t extra = ext4fs__mkfs_indirect_before(l, apb);
			for (uint32_t i = 0; i <= extra; i++) {
				uint64_t pblk = f->ext[cur.run].start + cur.off;
				if (++cur.off == f->ext[cur.run].len) {
					cur.run++;
					cur.off = 0;
				}
				/* The first block taken for a new top-level tree is its root. */
				if (i == 0 && extra && l >= 12) {
					uint64_t r = l - 12;
					int slot = r == 0 ? EXT4FS_IND_BLOCK
						   : r == apb ? EXT4FS_DIND_BLOCK
						   : r == apb + (uint64_t)apb * apb ? EXT4FS_TIND_BLOCK : -1;
					if (slot >= 0)
						le32_store(in->i_block + 4 * slot, (uint32_t)pblk);
				}
				if (i == extra && l < 12)
					le32_store(in->i_block + 4 * l, (uint32_t)pblk);
			}
			if (l >= 12 + (uint64_t)apb + (uint64_t)apb * apb + 1)
				break;   /* every root is placed by now */
		}
	}
}

static int fill_inode(const struct ext4fs_mkfs_plan *pl, uint32_t ino, unsigned char *raw)
{
	const struct ext4fs_geom *geo = &pl->fs->geom;
	struct ext4fs_inode in;
	const struct mkfs_file *f = NULL;

	memset(&in, 0, sizeof(in));
	memset(raw, 0, geo->inode_size);
	if (ino == MKFS_ROOT_INO || ino == pl->lpf_ino) {
		int root = ino == MKFS_ROOT_INO;
		f = root ? &pl->root : &pl->lpf;
		in.i_extra_isize = geo->inode_size >= 160 ? 32 : 0;
		in.i_mode = root ? 040755 : 040700;
		if (root) {
			in.i_uid = (uint16_t)pl->p.root_uid;
			in.i_uid_high = (uint16_t)(pl->p.root_uid >> 16);
			in.i_gid = (uint16_t)pl->p.root_gid;
			in.i_gid_high = (uint16_t)(pl->p.root_gid >> 16);
		}
		in.i_links_count = root ? 3 : 2;
		ext4fs_inode_set_size(&in, f->blocks * geo->block_size);
	} else if (ino == MKFS_RESIZE_INO && pl->resize_dind) {
		uint64_t apb = geo->block_size / 4;
		uint64_t copies = 1 + pl->nbackups;
		in.i_extra_isize = geo->inode_size >= 160 ? 32 : 0;
		in.i_mode = 0100600;
		in.i_links_count = 1;
		ext4fs_inode_set_size(&in, (apb * apb + apb + EXT4FS_NDIR_BLOCKS) * geo->block_size);
		inode_set_blocks(pl, &in, 1 + copies * pl->fs->sb.s_reserved_gdt_blocks);
		le32_store(in.i_block + 4 * EXT4FS_DIND_BLOCK, (uint32_t)pl->resize_dind);
	} else if ((ino == MKFS_JOURNAL_INO && pl->journal_blocks) || (ino == pl->orphan_ino && ino)) {
		f = ino == MKFS_JOURNAL_INO ? &pl->journal : &pl->orphan;
		in.i_extra_isize = geo->inode_size >= 160 ? 32 : 0;
		in.i_mode = 0100600;
		in.i_links_count = 1;
		ext4fs_inode_set_size(&in, f->blocks * geo->block_size);
	} else if (ino < geo->first_ino) {
		/* Reserved inodes carry a checksum; the bad-blocks inode also has times (as mke2fs writes it). */
		if (ino == 1)
			in.i_atime = in.i_ctime = in.i_mtime = (uint32_t)pl->p.now;
		ext4fs_inode_encode(&in, raw, geo->inode_size);
		ext4fs_inode_csum_set(pl->fs, ino, raw);
		return 0;
	} else {
		return 0;
	}
	inode_times(pl, &in, 1);
	if (f) {
		inode_set_blocks(pl, &in, f->blocks + f->meta_blocks);
		inode_map_file(pl, &in, f);
	}
	ext4fs_inode_encode(&in, raw, geo->inode_size);
	ext4fs_inode_csum_set(pl->fs, ino, raw);
	return 0;
}

static int write_inodes(struct writer *w, unsigned char *buf)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	const struct ext4fs_geom *geo = &pl->fs->geom;
	uint32_t last = pl->orphan_ino ? pl->orphan_ino : pl->lpf_ino;
	uint32_t per_block = geo->block_size / geo->inode_size;
	uint64_t cur_blk = 0;
	int have = 0, err;

	w->what = "the inode table";
	for (uint32_t ino = 1; ino <= last; ino++) {
		uint32_t g = (ino - 1) / geo->inodes_per_group;
		uint32_t idx = (ino - 1) % geo->inodes_per_group;
		uint64_t blk = pl->fs->groups[g].inode_table + idx / per_block;
		if (have && blk != cur_blk) {
			if ((err = put_block(w, cur_blk, buf)))
				return err;
			have = 0;
		}
		if (!have) {
			memset(buf, 0, w->bs);
			cur_blk = blk;
			have = 1;
		}
		fill_inode(pl, ino, buf + (size_t)(idx % per_block) * geo->inode_size);
	}
	if (have && (err = put_block(w, cur_blk, buf)))
		return err;
	return batch_flush(w);
}

/* -- file contents ------------------------------------------------------------ */

static void dirent(unsigned char *p, uint32_t ino, uint16_t rec_len, const char *name, uint8_t type,
		   int filetype)
{
	size_t n = strlen(name);

	le32_store(p, ino);
	le16_store(p + 4, rec_len);
	p[6] = (uint8_t)n;
	p[7] = filetype ? type : 0;
	memcpy(p + 8, name, n);
}

static void dir_tail(const struct ext4fs_mkfs_plan *pl, uint32_t ino, unsigned char *block)
{
	uint32_t bs = pl->fs->geom.block_size;
	unsigned char *t = block + bs - 12;

	if (!pl->fs->geom.has_metadata_csum)
		return;
	memset(t, 0, 12);
	le16_store(t + 4, 12);
	t[7] = 0xDE;
	le32_store(t + 8, ext4fs_dirent_csum(pl->fs, ino, 0, block, bs - 12));
}

/* Physical block of logical block l of an extent-mapped file. */
static uint64_t file_pblk(const struct mkfs_file *f, uint64_t l)
{
	for (uint32_t i = 0; i < f->n; i++) {
		if (l < f->ext[i].len)
			return f->ext[i].start + l;
		l -= f->ext[i].len;
	}
	return 0;
}

static int write_dirs(struct writer *w, unsigned char *buf)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	uint32_t bs = pl->fs->geom.block_size;
	int ft = pl->fs->geom.has_filetype;
	uint16_t end = pl->fs->geom.has_metadata_csum ? (uint16_t)(bs - 12) : (uint16_t)bs;
	int err;

	w->what = "the root directory";
	memset(buf, 0, bs);
	dirent(buf, MKFS_ROOT_INO, 12, ".", 2, ft);
	dirent(buf + 12, MKFS_ROOT_INO, 12, "..", 2, ft);
	dirent(buf + 24, pl->lpf_ino, (uint16_t)(end - 24), "lost+found", 2, ft);
	dir_tail(pl, MKFS_ROOT_INO, buf);
	if ((err = put_block(w, file_pblk(&pl->root, 0), buf)))
		return err;
	w->what = "lost+found";
	for (uint64_t l = 0; l < pl->lpf.blocks; l++) {
		memset(buf, 0, bs);
		if (l == 0) {
			dirent(buf, pl->lpf_ino, 12, ".", 2, ft);
			dirent(buf + 12, MKFS_ROOT_INO, (uint16_t)(end - 12), "..", 2, ft);
		} else {
			le16_store(buf + 4, end);
		}
		dir_tail(pl, pl->lpf_ino, buf);
		if ((err = put_block(w, file_pblk(&pl->lpf, l), buf)))
			return err;
	}
	return batch_flush(w);
}

/* The resize inode's blocks, laid out by resize_inode.c (the layout e4fsck judges). */
static int write_resize_inode(struct writer *w, unsigned char *buf)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	uint32_t rsv = pl->fs->sb.s_reserved_gdt_blocks;
	int err;

	if (!pl->resize_dind)
		return 0;
	w->what = "the resize inode";
	for (uint32_t k = 0; k < rsv; k++) {
		ext4fs_resize_ind_fill(pl->fs, k, buf);
		if ((err = put_block(w, ext4fs_resize_reserved_block(pl->fs, k), buf)))
			return err;
	}
	ext4fs_resize_dind_fill(pl->fs, buf);
	if ((err = put_block(w, pl->resize_dind, buf)))
		return err;
	return batch_flush(w);
}

/* Indirect blocks of a block-mapped file, rebuilt by replaying its allocation order. */
static int write_indirect_blocks(struct writer *w, const struct mkfs_file *f, unsigned char *buf)
{
	uint32_t bs = w->bs, apb = bs / 4;
	uint64_t *blocks;
	size_t total = (size_t)(f->blocks + f->meta_blocks), k = 0;
	int err = 0;

	if (!f->blockmapped || !f->meta_blocks)
		return 0;
	blocks = malloc(total * sizeof(*blocks));
	if (!blocks)
		return wfail(w, EXT4FS_E_NO_MEMORY, "mapping %s", w->what);
	for (uint32_t i = 0; i < f->n; i++)
		for (uint64_t j = 0; j < f->ext[i].len; j++)
			blocks[k++] = f->ext[i].start + j;
	/*
	 * Walk the logical blocks; keep, for each level, the indirect block being
	 * filled.  A level's block is complete when the next one at that level
	 * is allocated or the file ends.
	 */
	unsigned char *node[4] = { NULL, NULL, NULL, NULL };
	uint64_t node_blk[4] = { 0, 0, 0, 0 };
	uint32_t node_fill[4] = { 0, 0, 0, 0 };
	for (int lv = 1; lv <= 3; lv++) {
		node[lv] = calloc(1, bs);
		if (!node[lv]) {
			err = wfail(w, EXT4FS_E_NO_MEMORY, "mapping %s", w->what);
			goto out;
		}
	}
	k = 0;
	for (uint64_t l = 0; l < f->blocks; l++) {
		uint32_t extra = ext4fs__mkfs_indirect_before(l, apb);
		/* New blocks are taken top-down: the highest new level first. */
		int top = 0;
		if (l >= 12) {
			uint64_t r = l - 12;
			top = r < apb ? 1 : (r - apb < (uint64_t)apb * apb ? 2 : 3);
		}
		for (uint32_t i = 0; i < extra; i++) {
			int lv = (int)(extra - i);
			if (node_blk[lv]) {
				if ((err = put_block(w, node_blk[lv], node[lv])))
					goto out;
				memset(node[lv], 0, bs);
			}
			node_blk[lv] = blocks[k++];
			node_fill[lv] = 0;
			if (lv < top)
				le32_store(node[lv + 1] + 4 * node_fill[lv + 1]++, (uint32_t)node_blk[lv]);
		}
		uint64_t data = blocks[k++];
		if (l >= 12)
			le32_store(node[1] + 4 * node_fill[1]++, (uint32_t)data);
	}
	for (int lv = 1; lv <= 3; lv++)
		if (node_blk[lv] && (err = put_block(w, node_blk[lv], node[lv])))
			goto out;
	err = batch_flush(w);
out:
	for (int lv = 1; lv <= 3; lv++)
		free(node[lv]);
	free(blocks);
	return err;
}

static int write_extent_leaf(struct writer *w, const struct mkfs_file *f, unsigned char *buf)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	uint16_t max = (uint16_t)((w->bs - 12) / 12);
	uint32_t lblk = 0;

	if (!f->leaf)
		return 0;
	memset(buf, 0, w->bs);
	extent_header(buf, (uint16_t)f->n, max, 0);
	for (uint32_t i = 0; i < f->n; i++) {
		extent_entry(buf + 12 + 12 * i, lblk, (uint16_t)f->ext[i].len, f->ext[i].start);
		lblk += (uint32_t)f->ext[i].len;
	}
	if (pl->fs->geom.has_metadata_csum) {
		uint32_t seed = ext4fs_inode_csum_seed(pl->fs, f->ino, 0);
		le32_store(buf + 12 + 12 * (size_t)max, ext4fs_crc32c(seed, buf, 12 + 12 * (size_t)max));
	}
	return put_block(w, f->leaf, buf);
}

/* Logical block l of a file of either kind. */
static uint64_t any_pblk(const struct writer *w, const struct mkfs_file *f, uint64_t l)
{
	if (!f->blockmapped)
		return file_pblk(f, l);
	/* Replay the allocation order up to l. */
	uint32_t apb = w->bs / 4;
	uint64_t k = 0;
	for (uint64_t i = 0; i <= l; i++)
		k += ext4fs__mkfs_indirect_before(i, apb) + (i < l);
	return file_pblk(f, k);
}

static int write_journal(struct writer *w, unsigned char *buf)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	const struct mkfs_file *j = &pl->journal;
	int err;

	if (!pl->journal_blocks)
		return 0;
	w->what = "the journal";
	report(w, EXT4FS_MKFS_STAGE_JOURNAL, 0, pl->journal_blocks);
	if (!(pl->p.flags & EXT4FS_MKFS_LAZY_JOURNAL_INIT))
		for (uint32_t i = 0; i < j->n; i++)
			if ((err = zero_range(w, j->ext[i].start, j->ext[i].len)))
				return err;
	ext4fs_journal_sb_format(buf, w->bs, pl->journal_blocks, pl->fc_blocks, pl->fs->sb.s_uuid,
				 pl->fs->geom.has_metadata_csum);
	if ((err = put_block(w, any_pblk(w, j, 0), buf)) || (err = batch_flush(w)))
		return err;
	if ((err = write_extent_leaf(w, j, buf)) || (err = write_indirect_blocks(w, j, buf)))
		return err;
	if ((err = batch_flush(w)))
		return err;
	report(w, EXT4FS_MKFS_STAGE_JOURNAL, pl->journal_blocks, pl->journal_blocks);
	return 0;
}

static int write_orphan_file(struct writer *w, unsigned char *buf)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	const struct mkfs_file *o = &pl->orphan;
	uint32_t slots = (w->bs - 8) / 4;
	int err;

	if (!pl->orphan_ino)
		return 0;
	w->what = "the orphan file";
	for (uint64_t l = 0; l < o->blocks; l++) {
		uint64_t pblk = any_pblk(w, o, l);
		memset(buf, 0, w->bs);
		le32_store(buf + w->bs - 8, ORPHAN_BLOCK_MAGIC);
		if (pl->fs->geom.has_metadata_csum) {
			unsigned char le[8];
			uint32_t crc = ext4fs_inode_csum_seed(pl->fs, o->ino, 0);
			le64_store(le, pblk);
			crc = ext4fs_crc32c(crc, le, 8);
			crc = ext4fs_crc32c(crc, buf, (size_t)slots * 4);
			le32_store(buf + w->bs - 4, crc);
		}
		if ((err = put_block(w, pblk, buf)))
			return err;
	}
	if ((err = write_extent_leaf(w, o, buf)) || (err = write_indirect_blocks(w, o, buf)))
		return err;
	return batch_flush(w);
}

/* -- descriptors and superblocks ------------------------------------------------ */

static int write_desc_tables(struct writer *w)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	struct ext4fs_fs *fs = pl->fs;
	const struct ext4fs_geom *geo = &fs->geom;
	size_t bytes = (size_t)geo->desc_blocks * geo->block_size;
	unsigned char *table;
	int err = 0;

	/* The table is built once and written whole to the primary place and to each backup. */
	w->what = "the group descriptors";
	if ((err = batch_flush(w)))
		return err;
	table = calloc(1, bytes);
	if (!table)
		return wfail(w, EXT4FS_E_NO_MEMORY, "building %s", w->what);
	memcpy(table, ext4fs_group_desc_raw(fs, 0), (size_t)geo->group_count * geo->desc_size);
	for (uint32_t copy = 0; copy <= pl->nbackups && !err; copy++) {
		uint64_t blk = (copy ? pl->backups[copy - 1] : geo->first_data_block) + 1;
		err = ext4fs_io_write(w->io, blk * geo->block_size, table, bytes);
		if (err)
			wfail(w, err, "writing %s at block %llu", w->what, (unsigned long long)blk);
	}
	free(table);
	return err;
}

static int write_super_copy(struct writer *w, uint64_t byte, uint16_t group)
{
	struct ext4fs_fs *fs = w->pl->fs;
	int err;

	fs->sb.s_block_group_nr = group;
	ext4fs__fs_super_store(fs);
	err = ext4fs_io_write(w->io, byte, fs->sb_raw, EXT4FS_SUPER_SIZE);
	if (err)
		return wfail(w, err, "writing the superblock at byte %llu", (unsigned long long)byte);
	return 0;
}

/*
 * The superblock keeps a copy of the journal inode's i_block and size
 * (s_jnl_blocks, "Journal backup: inode blocks"), for a checker to fall
 * back on when the inode is lost; e2fsck -y writes it when it is missing.
 */
static void backup_journal_map(const struct ext4fs_mkfs_plan *pl)
{
	struct ext4fs_super *sb = &pl->fs->sb;
	struct ext4fs_inode in;
	uint64_t size = (uint64_t)pl->journal.blocks * pl->fs->geom.block_size;

	memset(&in, 0, sizeof(in));
	inode_map_file(pl, &in, &pl->journal);
	for (unsigned i = 0; i < EXT4FS_N_BLOCKS; i++)
		sb->s_jnl_blocks[i] = le32_load(in.i_block + 4 * i);
	sb->s_jnl_blocks[15] = (uint32_t)(size >> 32);
	sb->s_jnl_blocks[16] = (uint32_t)size;
}

static int write_supers(struct writer *w)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	struct ext4fs_fs *fs = pl->fs;
	uint32_t bs = w->bs;
	int err;

	report(w, EXT4FS_MKFS_STAGE_SUPER, 0, fs->geom.group_count);
	if (pl->journal_blocks)
		backup_journal_map(pl);
	/* Lifetime writes: what this run wrote, plus the superblocks still to come. */
	fs->sb.s_kbytes_written = (w->io->stats.bytes_written + (uint64_t)(pl->nbackups + 1) * 1024) / 1024;
	fs->sb.s_wtime = (uint32_t)pl->p.now;
	for (uint32_t i = 0; i < pl->nbackups; i++) {
		uint32_t g = ext4fs_group_of_block(fs, pl->backups[i]);
		if ((err = write_super_copy(w, pl->backups[i] * bs, (uint16_t)g)))
			return err;
	}
	if ((err = ext4fs_io_flush(w->io)))
		return wfail(w, err, "flushing %s", w->io->name);
	if ((err = write_super_copy(w, EXT4FS_SUPER_OFFSET, 0)))
		return err;
	if ((err = ext4fs_io_flush(w->io)))
		return wfail(w, err, "flushing %s", w->io->name);
	report(w, EXT4FS_MKFS_STAGE_SUPER, fs->geom.group_count, fs->geom.group_count);
	return 0;
}

/* -- top level ------------------------------------------------------------------ */

static int prepare_target(struct writer *w, struct ext4fs_mkfs_result *res)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	uint64_t bytes = pl->fs->geom.blocks_count * w->bs;
	static const unsigned char zeros[EXT4FS_SUPER_SIZE];
	int err;

	if (w->io->size < bytes)
		return wfail(w, EXT4FS_E_OUT_OF_IMAGE, "%s holds %llu bytes, the file system needs %llu",
			     w->io->name, (unsigned long long)w->io->size, (unsigned long long)bytes);
	/* No old superblock may survive a run that stops half-way. */
	w->what = "the old superblock";
	err = ext4fs_io_write(w->io, EXT4FS_SUPER_OFFSET, zeros, sizeof(zeros));
	if (err)
		return wfail(w, err, "clearing the old superblock of %s", w->io->name);
	if ((err = ext4fs_io_flush(w->io)))
		return wfail(w, err, "flushing %s", w->io->name);
	w->zeroed = (pl->p.flags & EXT4FS_MKFS_ASSUME_ZEROED) != 0;
	if (pl->p.flags & EXT4FS_MKFS_DISCARD) {
		/* A hole is punched in one call; devices get progress every 2 GiB. */
		const uint64_t chunk = w->io->is_regular_file ? bytes : UINT64_C(2) << 30;
		uint64_t blocks = pl->fs->geom.blocks_count;
		report(w, EXT4FS_MKFS_STAGE_DISCARD, 0, blocks);
		err = 0;
		for (uint64_t off = 0; off < bytes && !err; off += chunk) {
			uint64_t n = bytes - off < chunk ? bytes - off : chunk;
			err = ext4fs_io_discard(w->io, off, n);
			if (!err)
				report(w, EXT4FS_MKFS_STAGE_DISCARD, (off + n) / w->bs, blocks);
		}
		if (err) {
			/* Not fatal: the target is simply not known to read as zeros. */
			res->discard_error = err;
			report(w, EXT4FS_MKFS_STAGE_DISCARD_FAILED, (uint64_t)(-(int64_t)err), 0);
		} else {
			res->discarded = 1;
			if (w->io->discard_zeroes)
				w->zeroed = 1;
		}
	}
	res->zeroed = w->zeroed;
	return 0;
}

static int write_inode_tables(struct writer *w)
{
	const struct ext4fs_mkfs_plan *pl = w->pl;
	const struct ext4fs_geom *geo = &pl->fs->geom;
	int lazy = (pl->p.flags & EXT4FS_MKFS_LAZY_ITABLE_INIT) != 0;
	int err;

	w->what = "the inode tables";
	report(w, EXT4FS_MKFS_STAGE_ITABLES, 0, geo->group_count);
	for (uint32_t g = 0; g < geo->group_count; g++) {
		const struct ext4fs_group_desc *gd = &pl->fs->groups[g];
		uint64_t n = geo->inode_blocks_per_group;
		if (lazy)
			n = ((uint64_t)(geo->inodes_per_group - gd->itable_unused) * geo->inode_size +
			     geo->block_size - 1) / geo->block_size;
		if ((err = zero_range(w, gd->inode_table, n)))
			return err;
		if ((g & 1023) == 1023 && g + 1 < geo->group_count)
			report(w, EXT4FS_MKFS_STAGE_ITABLES, g + 1, geo->group_count);
	}
	report(w, EXT4FS_MKFS_STAGE_ITABLES, geo->group_count, geo->group_count);
	return 0;
}

int ext4fs_mkfs_write(const struct ext4fs_mkfs_plan *pl, struct ext4fs_io *io,
		      ext4fs_mkfs_progress_fn progress, void *progress_arg,
		      struct ext4fs_mkfs_result *result, char *errmsg, size_t errmsg_len)
{
	struct ext4fs_mkfs_result local;
	struct writer w;
	unsigned char *buf = NULL;
	uint64_t written0 = io->stats.bytes_written, writes0 = io->stats.writes;
	int err;

	if (!result)
		result = &local;
	memset(result, 0, sizeof(*result));
	if (errmsg && errmsg_len)
		errmsg[0] = '\0';
	memset(&w, 0, sizeof(w));
	w.pl = pl;
	w.io = io;
	w.bs = pl->fs->geom.block_size;
	w.errmsg = errmsg;
	w.errmsg_len = errmsg_len;
	w.progress = progress;
	w.progress_arg = progress_arg;
	w.batch_max = WRITE_BATCH_BYTES / w.bs;
	w.batch = malloc(WRITE_BATCH_BYTES);
	buf = malloc(w.bs);
	if (!w.batch || !buf) {
		err = wfail(&w, EXT4FS_E_NO_MEMORY, "allocating write buffers");
		goto out;
	}
	if ((err = prepare_target(&w, result)))
		goto out;
	report(&w, EXT4FS_MKFS_STAGE_TABLES, 0, pl->fs->geom.group_count);
	report(&w, EXT4FS_MKFS_STAGE_TABLES, pl->fs->geom.group_count, pl->fs->geom.group_count);
	if ((err = write_inode_tables(&w)) || (err = write_bitmaps(&w, buf)) ||
	    (err = write_inodes(&w, buf)) || (err = write_dirs(&w, buf)) ||
	    (err = write_resize_inode(&w, buf)) || (err = write_journal(&w, buf)) ||
	    (err = write_orphan_file(&w, buf)) || (err = write_desc_tables(&w)) ||
	    (err = write_supers(&w)))
		goto out;
out:
	result->bytes_written = io->stats.bytes_written - written0;
	result->writes = io->stats.writes - writes0;
	free(w.batch);
	free(buf);
	return err;
}
