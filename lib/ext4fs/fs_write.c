/*
 * fs_write.c - the writable side of a handle: live bitmaps, group and
 * superblock accounting, block writes, and flushing it all back.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/crc.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/fsfeatures.h"
#include "bitmap_internal.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "io_stage_internal.h"
#include "ondisk_le.h"

/*
 * Features whose metadata the write path keeps correct.  Anything else in
 * ro_compat or incompat makes a writable open fail rather than leave an
 * image the kernel or e2fsck would find inconsistent.
 */
#define WRITE_RO_COMPAT_SUPPORTED \
	(EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE | \
	 EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE | EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM | \
	 EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK | EXT4FS_FEATURE_RO_COMPAT_EXTRA_ISIZE | \
	 EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM | EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT | \
	 EXT4FS_FEATURE_RO_COMPAT_PROJECT)
#define WRITE_INCOMPAT_SUPPORTED \
	(EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_EXTENTS | \
	 EXT4FS_FEATURE_INCOMPAT_64BIT | EXT4FS_FEATURE_INCOMPAT_FLEX_BG | \
	 EXT4FS_FEATURE_INCOMPAT_CSUM_SEED | EXT4FS_FEATURE_INCOMPAT_LARGEDIR | \
	 EXT4FS_FEATURE_INCOMPAT_INLINE_DATA | EXT4FS_FEATURE_INCOMPAT_EA_INODE | \
	 EXT4FS_FEATURE_INCOMPAT_ENCRYPT | EXT4FS_FEATURE_INCOMPAT_CASEFOLD | \
	 EXT4FS_FEATURE_INCOMPAT_MMP | EXT4FS_FEATURE_INCOMPAT_RECOVER | EXT4FS_FEATURE_INCOMPAT_META_BG)

int ext4fs__fs_require_rw(struct ext4fs_fs *fs, const char *what)
{
	if (fs_writable(fs))
		return 0;
	return ext4fs__fs_fail(fs, EXT4FS_E_READ_ONLY, "%s: the file system is open read-only", what);
}

/* Release the write layer's state at close, after a last flush of a writable handle. */
static void write_close(struct ext4fs_fs *fs, void *ctx)
{
	(void)ctx;
	if (fs_writable(fs) && fs->group_dirty && !fs->flushed_for_close)
		(void)ext4fs_flush(fs);
	ext4fs_bitmap_free(fs->block_map);
	ext4fs_bitmap_free(fs->inode_map);
	free(fs->group_dirty);
	ext4fs__extset_free(&fs->held);
	ext4fs__extset_free(&fs->fresh);
	ext4fs__extset_free(&fs->unsynced_frees);
	fs->block_map = fs->inode_map = NULL;
	fs->group_dirty = NULL;
}

static const struct ext4fs__listener_ops write_listener = { .close = write_close };

/* Listen on the handle (once) so the state taken on is released at close. */
static int attach(struct ext4fs_fs *fs)
{
	if (ext4fs__fs_listening(fs, &write_listener))
		return 0;
	return ext4fs__fs_listen(fs, &write_listener, NULL);
}

int ext4fs__fs_write_open(struct ext4fs_fs *fs)
{
	const struct ext4fs_super *sb = &fs->sb;
	uint32_t quota_ok = (fs->flags & EXT4FS_OPEN_QUOTA_BY_CALLER) ? EXT4FS_FEATURE_RO_COMPAT_QUOTA : 0;
	uint32_t bigalloc_ok = (fs->flags & EXT4FS_OPEN_CLUSTERS_BY_CALLER) ? EXT4FS_FEATURE_RO_COMPAT_BIGALLOC : 0;
	uint32_t ro = sb->s_feature_ro_compat & ~(WRITE_RO_COMPAT_SUPPORTED | quota_ok | bigalloc_ok);
	uint32_t inc = sb->s_feature_incompat & ~WRITE_INCOMPAT_SUPPORTED;
	int err;

	if (ro || inc) {
		uint32_t f[3] = { 0, inc, ro };
		char names[160];
		ext4fs_features_format(f, names, sizeof(names));
		return ext4fs__fs_fail(fs, inc ? EXT4FS_E_UNSUPP_FEATURE : EXT4FS_E_RO_UNSUPP_FEATURE,
				       "cannot write: writing with feature(s) %s is not supported yet", names);
	}
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER)
		return ext4fs__fs_fail(fs, EXT4FS_E_NEEDS_RECOVERY,
				       "cannot write: the journal needs recovery (run e2fsck first)");
	if (fs->geom.cluster_ratio != 1 && !(fs->flags & EXT4FS_OPEN_CLUSTERS_BY_CALLER))
		return ext4fs__fs_fail(fs, EXT4FS_E_RO_UNSUPP_FEATURE, "cannot write: bigalloc is not supported");
	err = attach(fs);
	if (err)
		return err;
	fs->group_dirty = calloc(fs->geom.group_count, 1);
	if (!fs->group_dirty)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for %u group flags",
				       fs->geom.group_count);
	/* The channel may have written before this handle existed (mkfs, then populating). */
	fs->io_written_counted = fs->io->stats.bytes_written;
	return 0;
}

/* -- time -- */

void ext4fs_set_time(struct ext4fs_fs *fs, int64_t sec, uint32_t nsec)
{
	fs->time_fixed = 1;
	fs->fixed_sec = sec;
	fs->fixed_nsec = nsec % 1000000000U;
}

void ext4fs_now(const struct ext4fs_fs *fs, int64_t *sec, uint32_t *nsec)
{
	struct timespec ts;

	if (fs->time_fixed) {
		*sec = fs->fixed_sec;
		*nsec = fs->fixed_nsec;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	*sec = ts.tv_sec;
	*nsec = (uint32_t)ts.tv_nsec;
}

/* -- block writes -- */

static void cache_forget(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	if (count >= EXT4FS_CACHE_SLOTS) {
		for (unsigned s = 0; s < EXT4FS_CACHE_SLOTS; s++)
			if (fs->cache_valid[s] && fs->cache_blk[s] >= blk && fs->cache_blk[s] - blk < count)
				fs->cache_valid[s] = 0;
		return;
	}
	for (uint64_t b = blk; b < blk + count; b++) {
		unsigned s = (unsigned)(b % EXT4FS_CACHE_SLOTS);
		if (fs->cache_blk[s] == b)
			fs->cache_valid[s] = 0;
	}
}

static int check_range(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const char *what)
{
	if (blk >= fs->geom.blocks_count || count > fs->geom.blocks_count - blk)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_BLOCK_NUM,
				       "%s block %llu (+%llu) is beyond the end of the file system (%llu blocks)",
				       what, (unsigned long long)blk, (unsigned long long)count,
				       (unsigned long long)fs->geom.blocks_count);
	return 0;
}

/* Write or zero [blk, blk + count) through the staging channel's side door, or through it. */
static int data_io(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const unsigned char *buf, int through)
{
	uint32_t bs = fs->geom.block_size;

	if (through)
		return ext4fs__stage_write_through(fs->io, blk * bs, buf, count * bs);
	return buf ? ext4fs_io_write(fs->io, blk * bs, buf, (size_t)(count * bs)) :
		     ext4fs_io_zeroout(fs->io, blk * bs, count * bs);
}

/*
 * Journalled file data: runs of blocks taken since the last commit go to
 * the disk at once (ordered), runs over older blocks are staged with the
 * metadata (an overwrite commits whole or not at all).
 */
static int data_write_journalled(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const unsigned char *buf)
{
	uint32_t bs = fs->geom.block_size;
	uint64_t done = 0;

	while (done < count) {
		int fresh = ext4fs__extset_count(&fs->fresh, blk + done, 1) == 1;
		uint64_t run = 1;
		int err;

		while (done + run < count &&
		       (ext4fs__extset_count(&fs->fresh, blk + done + run, 1) == 1) == fresh)
			run++;
		if (fresh && (fs->unsynced_all || ext4fs__extset_count(&fs->unsynced_frees, blk + done, run) > 0)) {
			struct ext4fs_io *inner = ext4fs__stage_inner(fs->io);

			/* Reusing a block the last commit freed: make that commit durable first. */
			err = ext4fs_io_flush(inner);
			if (err)
				return ext4fs__fs_fail(fs, err, "flushing %s: %s", inner->name, ext4fs_strerror(err));
			ext4fs__fs_frees_durable(fs);
		}
		err = data_io(fs, blk + done, run, buf ? buf + done * bs : NULL, fresh);
		if (err)
			return err;
		done += run;
	}
	return 0;
}

/*
 * Write (buf) or zero (buf NULL) count blocks from blk.  data: file data,
 * which in journalled mode goes past the staging channel to the disk when
 * the blocks are fresh.
 */
static int write_blocks(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const void *buf, int data)
{
	uint32_t bs = fs->geom.block_size;
	const char *what = buf ? "writing" : "zeroing";
	int err = ext4fs__fs_require_rw(fs, buf ? "writing blocks" : "zeroing blocks");

	if (err || count == 0)
		return err;
	err = check_range(fs, blk, count, what);
	if (err)
		return err;
	if (count > SIZE_MAX / bs)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "%s %llu blocks at once is too much", what,
				       (unsigned long long)count);
	cache_forget(fs, blk, count);
	if (data && ext4fs__stage_is(fs->io))
		err = data_write_journalled(fs, blk, count, buf);
	else
		err = data_io(fs, blk, count, buf, 0);
	if (err)
		return ext4fs__fs_fail(fs, err, "%s %sblock %llu%s: %s", what, data ? "data " : "",
				       (unsigned long long)blk, count > 1 ? " and following" : "", ext4fs_strerror(err));
	return 0;
}

int ext4fs_blocks_write(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const void *buf)
{
	return write_blocks(fs, blk, count, buf, 0);
}

int ext4fs_block_write(struct ext4fs_fs *fs, uint64_t blk, const void *buf)
{
	uint32_t bs = fs->geom.block_size;
	unsigned slot = (unsigned)(blk % EXT4FS_CACHE_SLOTS);
	int err = ext4fs_blocks_write(fs, blk, 1, buf);

	if (err)
		return err;
	/* Keep the written block cached: metadata is usually read again soon. */
	memcpy(fs->cache_data + (size_t)slot * bs, buf, bs);
	fs->cache_blk[slot] = blk;
	fs->cache_valid[slot] = 1;
	return 0;
}

int ext4fs_blocks_zero(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return write_blocks(fs, blk, count, NULL, 0);
}

int ext4fs_data_write(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const void *buf)
{
	return write_blocks(fs, blk, count, buf, 1);
}

int ext4fs_data_zero(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return write_blocks(fs, blk, count, NULL, 1);
}

/* -- live bitmaps -- */

static int load_block_map(struct ext4fs_fs *fs)
{
	int err;

	if (fs->block_map)
		return 0;
	err = attach(fs);
	return err ? err : ext4fs_block_bitmap_load(fs, &fs->block_map);
}

static int load_inode_map(struct ext4fs_fs *fs)
{
	int err;

	if (fs->inode_map)
		return 0;
	err = attach(fs);
	return err ? err : ext4fs_inode_bitmap_load(fs, &fs->inode_map);
}

int ext4fs_fs_block_bitmap(struct ext4fs_fs *fs, const struct ext4fs_bitmap **out)
{
	int err = load_block_map(fs);

	*out = err ? NULL : fs->block_map;
	return err;
}

int ext4fs_fs_inode_bitmap(struct ext4fs_fs *fs, const struct ext4fs_bitmap **out)
{
	int err = load_inode_map(fs);

	*out = err ? NULL : fs->inode_map;
	return err;
}

/* -- accounting -- */

void ext4fs__fs_group_desc_update(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd)
{
	ext4fs__fs_group_desc_store(fs, g, gd);
	fs->group_dirty[g] |= FS_DIRTY_DESC;
}

static uint64_t super_free_blocks(const struct ext4fs_super *sb)
{
	return (uint64_t)sb->s_free_blocks_count_lo | ((uint64_t)sb->s_free_blocks_count_hi << 32);
}

static void super_add_free_blocks(struct ext4fs_fs *fs, int64_t delta)
{
	uint64_t n = super_free_blocks(&fs->sb) + (uint64_t)delta;

	fs->sb.s_free_blocks_count_lo = (uint32_t)n;
	fs->sb.s_free_blocks_count_hi = (uint32_t)(n >> 32);
	fs->geom.free_blocks_count = n;
	fs->super_dirty = 1;
}

/*
 * Widen [*blk, *blk + *count) to the whole clusters it touches (bigalloc),
 * the file system's last cluster ending with its last block.
 */
static void widen_to_clusters(const struct ext4fs_geom *geo, uint64_t *blk, uint64_t *count)
{
	uint64_t mask = (uint64_t)geo->cluster_ratio - 1;
	uint64_t first = *blk & ~mask, end = (*blk + *count + mask) & ~mask;

	if (end > geo->blocks_count)
		end = geo->blocks_count;
	*blk = first;
	*count = end - first;
}

/* counted 0: bits, flags and allocator move, free counts are left to a recount. */
static int mark_blocks(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, int used, int counted)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint64_t found;
	int err = ext4fs__fs_require_rw(fs, used ? "allocating blocks" : "freeing blocks");

	if (err || count == 0)
		return err;
	if (blk < geo->first_data_block || blk >= geo->blocks_count ||
	    count > geo->blocks_count - blk)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_BLOCK_NUM,
				       "blocks %llu-%llu are not all in the file system",
				       (unsigned long long)blk, (unsigned long long)(blk + count - 1));
	err = load_block_map(fs);
	if (err)
		return err;
	/* The bitmap's unit is the cluster: every cluster the range touches changes, all or nothing. */
	widen_to_clusters(geo, &blk, &count);
	/* All or nothing: a block already in the wanted state means the caller's view is wrong. */
	if (ext4fs_bitmap_find(fs->block_map, blk, blk + count - 1, used, &found) == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_BLOCK_STATE, "block %llu is already %s",
				       (unsigned long long)found, used ? "in use" : "free");
	if (!used && fs->hold_frees) {
		if (!ext4fs__extset_is_clear(&fs->held, blk, count))
			return ext4fs__fs_fail(fs, EXT4FS_E_BLOCK_STATE,
					       "blocks %llu-%llu are already being freed",
					       (unsigned long long)blk, (unsigned long long)(blk + count - 1));
		err = ext4fs__extset_add(&fs->held, blk, count);
		return err ? ext4fs__fs_fail(fs, err, "no memory to hold freed blocks") : 0;
	}
	if (used)
		ext4fs__bitmap_set_range(fs->block_map, blk, count);
	else
		ext4fs__bitmap_clear_range(fs->block_map, blk, count);
	/* Without the note the blocks' data is merely journalled: no harm when memory is short. */
	if (used && fs->hold_frees)
		(void)ext4fs__extset_add(&fs->fresh, blk, count);

	for (uint64_t b = blk; b < blk + count;) {
		uint32_t g = ext4fs_group_of_block(fs, b);
		uint64_t last = ext4fs_group_last_block(fs, g);
		uint64_t n = (last - b + 1 < blk + count - b) ? last - b + 1 : blk + count - b;
		struct ext4fs_group_desc gd = fs->groups[g];
		/* Groups start on a cluster boundary: the descriptors count clusters. */
		uint32_t clusters = (uint32_t)((n + geo->cluster_ratio - 1) / geo->cluster_ratio);

		if (counted && used)
			gd.free_blocks_count -= clusters;
		else if (counted)
			gd.free_blocks_count += clusters;
		gd.flags &= (uint16_t)~EXT4FS_BG_BLOCK_UNINIT;
		ext4fs__fs_group_desc_update(fs, g, &gd);
		fs->group_dirty[g] |= FS_DIRTY_BLOCK_BITMAP;
		b += n;
	}
	if (counted) {
		/* The superblock counts the free clusters' blocks, a short last cluster as a whole one. */
		int64_t blocks = (int64_t)((count + geo->cluster_ratio - 1) / geo->cluster_ratio * geo->cluster_ratio);
		super_add_free_blocks(fs, used ? -blocks : blocks);
	}
	/* Even uncounted, the allocator must see the bits, or it would hand the blocks out again. */
	ext4fs__fs_space_changed(fs, blk, count, used);
	fs->bitmap_changed[EXT4FS_BLOCK_BITMAP] = 1;
	return 0;
}

int ext4fs_blocks_mark_used(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return mark_blocks(fs, blk, count, 1, 1);
}

int ext4fs_blocks_mark_free(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return mark_blocks(fs, blk, count, 0, 1);
}

void ext4fs__fs_hold_frees(struct ext4fs_fs *fs, int on)
{
	fs->hold_frees = on != 0;
}

void ext4fs__fs_frees_durable(struct ext4fs_fs *fs)
{
	ext4fs__extset_free(&fs->unsynced_frees);
	fs->unsynced_all = 0;
}

void ext4fs__fs_forget_fresh(struct ext4fs_fs *fs)
{
	ext4fs__extset_free(&fs->fresh);
}

uint64_t ext4fs__fs_held_blocks(const struct ext4fs_fs *fs)
{
	return ext4fs__extset_total(&fs->held);
}

int ext4fs__fs_release_held(struct ext4fs_fs *fs,
			    int (*freed)(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, void *arg), void *arg)
{
	int hold = fs->hold_frees, err = 0;
	size_t i;

	fs->hold_frees = 0;
	for (i = 0; i < fs->held.n && !err; i++) {
		const struct extset_range *r = &fs->held.r[i];
		err = mark_blocks(fs, r->start, r->len, 0, 1);
		if (!err && freed)
			err = freed(fs, r->start, r->len, arg);
	}
	fs->hold_frees = hold;
	/* These frees ride on the commit about to be written: note them until it is durable. */
	for (size_t k = 0; k < i - (err != 0); k++) {
		const struct extset_range *r = &fs->held.r[k];
		if (ext4fs__extset_add(&fs->unsynced_frees, r->start, r->len))
			fs->unsynced_all = 1;  /* short of memory to list them: flush before any reuse */
	}
	if (err) {
		/* Keep what was not released yet. */
		size_t done = i - 1;
		memmove(fs->held.r, fs->held.r + done, (fs->held.n - done) * sizeof(*fs->held.r));
		fs->held.n -= done;
		return err;
	}
	ext4fs__extset_free(&fs->held);
	return 0;
}

int ext4fs_blocks_mark_used_uncounted(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return mark_blocks(fs, blk, count, 1, 0);
}

int ext4fs_blocks_mark_free_uncounted(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return mark_blocks(fs, blk, count, 0, 0);
}

static int group_has_csum(const struct ext4fs_fs *fs)
{
	return fs->geom.has_metadata_csum || fs->geom.has_gdt_csum;
}

/* Zero inode records [first, last] (indexes within group g) of a table not known to be zeroed. */
static int zero_inode_records(struct ext4fs_fs *fs, uint32_t g, uint32_t first, uint32_t last)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t per_block = geo->block_size / geo->inode_size;
	uint64_t table = fs->groups[g].inode_table;
	unsigned char *block;
	int err = 0;

	if (!(ext4fs_group_tables_present(fs, g) & EXT4FS_GROUP_INODE_TABLE))
		return ext4fs__fs_fail(fs, EXT4FS_E_GD_BAD_INODE_TABLE, "group %u has no inode table", g);
	block = malloc(geo->block_size);
	if (!block)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to clear inode table of group %u", g);
	for (uint32_t i = first; i <= last && !err;) {
		uint64_t blk = table + i / per_block;
		uint32_t from = i % per_block, to = per_block - 1;

		if (last / per_block == i / per_block)
			to = last % per_block;
		if (from == 0 && to == per_block - 1) {
			err = ext4fs_blocks_zero(fs, blk, 1);
		} else {
			err = ext4fs_block_read(fs, blk, block);
			if (!err) {
				memset(block + (size_t)from * geo->inode_size, 0,
				       (size_t)(to - from + 1) * geo->inode_size);
				err = ext4fs_block_write(fs, blk, block);
			}
		}
		i += to - from + 1;
	}
	free(block);
	return err;
}

/* counted 0 (marking in use only): as for mark_blocks(), the free and directory counts are left alone. */
static int mark_inode(struct ext4fs_fs *fs, uint32_t ino, int is_dir, int used, int counted)
{
	const struct ext4fs_geom *geo = &fs->geom;
	int err = ext4fs__fs_require_rw(fs, used ? "allocating an inode" : "freeing an inode");

	if (err)
		return err;
	if (ino == 0 || ino > geo->inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_INODE_NUM, "inode %u is not in the file system", ino);
	err = load_inode_map(fs);
	if (err)
		return err;
	if (ext4fs_bitmap_test(fs->inode_map, ino) == used)
		return ext4fs__fs_fail(fs, EXT4FS_E_INODE_STATE, "inode %u is already %s", ino,
				       used ? "in use" : "free");

	uint32_t g = (ino - 1) / geo->inodes_per_group, idx = (ino - 1) % geo->inodes_per_group;
	struct ext4fs_group_desc gd = fs->groups[g];

	if (used && group_has_csum(fs)) {
		uint32_t ipg = geo->inodes_per_group;
		uint32_t in_use_limit = gd.itable_unused <= ipg ? ipg - gd.itable_unused : ipg;
		if (gd.flags & EXT4FS_BG_INODE_UNINIT)
			in_use_limit = 0;
		if (idx >= in_use_limit) {
			if (!(gd.flags & EXT4FS_BG_INODE_ZEROED)) {
				/*
				 * The flag and count come from disk (a checker opens
				 * with checksums ignored): records of inodes the
				 * bitmap has in use are never taken for unused ones.
				 */
				uint32_t from = idx;
				while (from > in_use_limit &&
				       ext4fs_bitmap_test(fs->inode_map, (uint64_t)g * ipg + from) != 1)
					from--;
				err = zero_inode_records(fs, g, from, idx);
				if (err)
					return err;
			}
			gd.itable_unused = ipg - idx - 1;
		}
		gd.flags &= (uint16_t)~EXT4FS_BG_INODE_UNINIT;
	}
	if (used)
		ext4fs__bitmap_set_range(fs->inode_map, ino, 1);
	else
		ext4fs__bitmap_clear_range(fs->inode_map, ino, 1);
	if (counted && used) {
		gd.free_inodes_count--;
		if (is_dir)
			gd.used_dirs_count++;
		fs->sb.s_free_inodes_count--;
		fs->super_dirty = 1;
	} else if (counted) {
		gd.free_inodes_count++;
		if (is_dir && gd.used_dirs_count)
			gd.used_dirs_count--;
		fs->sb.s_free_inodes_count++;
		fs->super_dirty = 1;
	}
	ext4fs__fs_group_desc_update(fs, g, &gd);
	fs->group_dirty[g] |= FS_DIRTY_INODE_BITMAP;
	fs->bitmap_changed[EXT4FS_INODE_BITMAP] = 1;
	return 0;
}

int ext4fs_inode_mark_used(struct ext4fs_fs *fs, uint32_t ino, int is_dir)
{
	return mark_inode(fs, ino, is_dir, 1, 1);
}

int ext4fs_inode_mark_free(struct ext4fs_fs *fs, uint32_t ino, int is_dir)
{
	return mark_inode(fs, ino, is_dir, 0, 1);
}

int ext4fs_inode_mark_used_uncounted(struct ext4fs_fs *fs, uint32_t ino)
{
	return mark_inode(fs, ino, 0, 1, 0);
}

int ext4fs_bitmap_changed(const struct ext4fs_fs *fs, enum ext4fs_bitmap_kind kind)
{
	if (kind != EXT4FS_BLOCK_BITMAP && kind != EXT4FS_INODE_BITMAP)
		return 0;
	return fs->bitmap_changed[kind];
}

int ext4fs_bitmap_rewrite(struct ext4fs_fs *fs, enum ext4fs_bitmap_kind kind)
{
	int err = ext4fs__fs_require_rw(fs, "rewriting a bitmap");

	if (err)
		return err;
	if (kind != EXT4FS_BLOCK_BITMAP && kind != EXT4FS_INODE_BITMAP)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "unknown bitmap kind %d", (int)kind);
	err = kind == EXT4FS_BLOCK_BITMAP ? load_block_map(fs) : load_inode_map(fs);
	if (err)
		return err;
	for (uint32_t g = 0; g < fs->geom.group_count; g++)
		fs->group_dirty[g] |= kind == EXT4FS_BLOCK_BITMAP ? FS_DIRTY_BLOCK_BITMAP : FS_DIRTY_INODE_BITMAP;
	fs->bitmap_changed[kind] = 1;
	return 0;
}

/*
 * Group g's part of the live block (inodes: inode) bitmap read again from
 * where its descriptor now puts it, all clear when that is outside the file
 * system: a checker that gives a bitmap a new place (EXT4FS_OPEN_MISPLACED_OK)
 * then sees what the new block holds, as it would have had it loaded the
 * bitmap after the move.  0, or EXT4FS_E_NO_MEMORY, read errors.
 */
static int reload_group_bitmap(struct ext4fs_fs *fs, uint32_t g, int inodes)
{
	const struct ext4fs_geom *geo = &fs->geom;
	struct ext4fs_bitmap *bm = inodes ? fs->inode_map : fs->block_map;
	uint64_t first = inodes ? (uint64_t)g * geo->inodes_per_group + 1 : ext4fs_group_first_block(fs, g);
	uint64_t items = inodes ? geo->inodes_per_group : ext4fs_group_last_block(fs, g) - first + 1;
	uint32_t unit = inodes ? 1 : geo->cluster_ratio;
	unsigned need = inodes ? EXT4FS_GROUP_INODE_BITMAP : EXT4FS_GROUP_BLOCK_BITMAP;
	uint16_t uninit = inodes ? EXT4FS_BG_INODE_UNINIT : EXT4FS_BG_BLOCK_UNINIT;

	if (!bm || (fs->groups[g].flags & uninit))
		return 0;
	if (inodes && first + items - 1 > geo->inodes_count)
		items = first > geo->inodes_count ? 0 : geo->inodes_count - first + 1;
	if (!items)
		return 0;
	ext4fs__bitmap_clear_range(bm, first, items);
	if (!(ext4fs_group_tables_present(fs, g) & need))
		return 0;
	unsigned char *block = malloc(geo->block_size);
	if (!block)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a bitmap block");
	int err = ext4fs_blocks_read(fs, inodes ? fs->groups[g].inode_bitmap : fs->groups[g].block_bitmap, 1, block);
	for (uint64_t i = 0; !err && i * unit < items; i++)
		if (block[i >> 3] & (1U << (i & 7)))
			ext4fs__bitmap_set_range(bm, first + i * unit, 1);
	free(block);
	/* And what a checker learns of the block (its padding, its checksum), as a load records it. */
	if (!err)
		err = ext4fs__bitmap_note_block(fs, bm, inodes, g);
	return err;
}

int ext4fs_group_desc_set(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd)
{
	int err = ext4fs__fs_require_rw(fs, "setting a group descriptor");

	if (err)
		return err;
	if (g >= fs->geom.group_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "group %u does not exist", g);
	int moved_blocks = gd->block_bitmap != fs->groups[g].block_bitmap;
	int moved_inodes = gd->inode_bitmap != fs->groups[g].inode_bitmap;
	ext4fs__fs_group_desc_update(fs, g, gd);
	/* A bitmap given another place is what that place holds. */
	if (moved_blocks)
		err = reload_group_bitmap(fs, g, 0);
	if (!err && moved_inodes)
		err = reload_group_bitmap(fs, g, 1);
	if (err)
		return err;
	/* The allocator's summaries were built from the old counts. */
	ext4fs__fs_descs_changed(fs);
	return 0;
}

int ext4fs_group_desc_set_exact(struct ext4fs_fs *fs, uint32_t g,
				const struct ext4fs_group_desc *gd)
{
	int err = ext4fs_group_desc_set(fs, g, gd);

	if (err)
		return err;
	fs->gd_csum_ok[g] = gd->checksum == fs->groups[g].checksum;
	fs->groups[g].checksum = gd->checksum;
	le16_store(fs->gd_raw + (size_t)g * fs->geom.desc_size + 0x1E, gd->checksum);  /* bg_checksum */
	return 0;
}

int ext4fs_super_set(struct ext4fs_fs *fs, const struct ext4fs_super *sb)
{
	const struct ext4fs_super *old = &fs->sb;
	uint32_t ro_changed = sb->s_feature_ro_compat ^ old->s_feature_ro_compat;
	int err = ext4fs__fs_require_rw(fs, "setting the superblock");

	if (err)
		return err;
	/* Beside metadata_csum, uninit_bg selects no checksum: dropping or adding it changes nothing on disk. */
	if (ro_changed == EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM &&
	    (old->s_feature_ro_compat & sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM))
		ro_changed = 0;
	/* Adding large_file only lets sizes of 2 GiB or more be kept, which the library reads anyway. */
	ro_changed &= ~(sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE);
	/*
	 * Some incompat changes leave every block meaning what it meant:
	 * inline_data (the library reads an inode's inline data by its flag),
	 * adding extents (a format new files may use; old ones are read as
	 * before), adding largedir (it only allows deeper and bigger
	 * directories), dropping filetype (e2fsck's repair for the Hurd), and
	 * dropping csum_seed where no checksum is kept.
	 */
	uint32_t incompat_changed = (sb->s_feature_incompat ^ old->s_feature_incompat) &
				    ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_INLINE_DATA;
	incompat_changed &= ~(sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_EXTENTS);
	incompat_changed &= ~(sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_LARGEDIR);
	/* Dropping filetype: entries keep their 8-bit name length, their type bytes are then written 0. */
	incompat_changed &= ~(old->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_FILETYPE);
	if (!(old->s_feature_ro_compat & sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM))
		incompat_changed &= ~(old->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CSUM_SEED);
	/*
	 * Dropping meta_bg where no descriptor block is in a meta_bg group
	 * (e2fsck's repair of a first_meta_bg too big): they all stay where
	 * they are, and a group's copy counts desc_blocks of them from now on.
	 */
	if (old->s_first_meta_bg >= fs->geom.desc_blocks)
		incompat_changed &= ~(old->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_META_BG);
	/* Revision 0 raised to 1 with the inode size revision 0 implies: every inode stays where it is. */
	int same_inode_size = sb->s_inode_size == old->s_inode_size ||
			      (old->s_rev_level == 0 && sb->s_rev_level == 1 && sb->s_inode_size == fs->geom.inode_size);
	if (sb->s_blocks_count_lo != old->s_blocks_count_lo ||
	    sb->s_blocks_count_hi != old->s_blocks_count_hi ||
	    sb->s_inodes_count != old->s_inodes_count ||
	    sb->s_log_block_size != old->s_log_block_size ||
	    sb->s_blocks_per_group != old->s_blocks_per_group ||
	    sb->s_inodes_per_group != old->s_inodes_per_group ||
	    sb->s_first_data_block != old->s_first_data_block ||
	    !same_inode_size ||
	    sb->s_desc_size != old->s_desc_size ||
	    sb->s_log_groups_per_flex != old->s_log_groups_per_flex ||
	    incompat_changed || ro_changed)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "changing the geometry or features through the superblock is not supported");
	fs->sb = *sb;
	fs->geom.has_extents = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_EXTENTS) != 0;
	fs->geom.has_filetype = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_FILETYPE) != 0;
	fs->geom.free_blocks_count = super_free_blocks(sb);
	fs->geom.r_blocks_count = (uint64_t)sb->s_r_blocks_count_lo |
				  ((uint64_t)sb->s_r_blocks_count_hi << 32);
	fs->super_dirty = 1;
	return 0;
}

/* -- flush -- */

static uint32_t bitmap_csum(const struct ext4fs_fs *fs, const unsigned char *data, size_t len)
{
	return ext4fs_crc32c(fs->geom.csum_seed, data, len);
}

static int flush_bitmaps(struct ext4fs_fs *fs, unsigned char *block)
{
	const struct ext4fs_geom *geo = &fs->geom;
	int err;

	for (uint32_t g = 0; g < geo->group_count; g++) {
		struct ext4fs_group_desc gd = fs->groups[g];
		unsigned present = ext4fs_group_tables_present(fs, g);
		int changed = 0;

		/* A missing bitmap (EXT4FS_OPEN_MISPLACED_OK) has no place to go. */
		if ((fs->group_dirty[g] & FS_DIRTY_BLOCK_BITMAP) && fs->block_map &&
		    !(gd.flags & EXT4FS_BG_BLOCK_UNINIT) && (present & EXT4FS_GROUP_BLOCK_BITMAP)) {
			uint64_t first = (uint64_t)g * geo->clusters_per_group;
			uint64_t last_blk = ext4fs_group_last_block(fs, g);
			uint64_t nblocks = last_blk - ext4fs_group_first_block(fs, g) + 1;
			/* A bit per cluster; a short last cluster still has its bit. */
			uint64_t nbits = (nblocks + geo->cluster_ratio - 1) / geo->cluster_ratio;
			ext4fs__bitmap_copy_out(fs->block_map, first, nbits, block, geo->block_size);
			err = ext4fs_block_write(fs, gd.block_bitmap, block);
			if (err)
				return err;
			if (geo->has_metadata_csum) {
				gd.block_bitmap_csum = bitmap_csum(fs, block, geo->clusters_per_group / 8);
				changed = 1;
			}
		}
		if ((fs->group_dirty[g] & FS_DIRTY_INODE_BITMAP) && fs->inode_map &&
		    !(gd.flags & EXT4FS_BG_INODE_UNINIT) && (present & EXT4FS_GROUP_INODE_BITMAP)) {
			uint64_t first = (uint64_t)g * geo->inodes_per_group;
			ext4fs__bitmap_copy_out(fs->inode_map, first, geo->inodes_per_group, block,
						geo->block_size);
			err = ext4fs_block_write(fs, gd.inode_bitmap, block);
			if (err)
				return err;
			if (geo->has_metadata_csum) {
				gd.inode_bitmap_csum = bitmap_csum(fs, block, geo->inodes_per_group / 8);
				changed = 1;
			}
		}
		if (changed)
			ext4fs__fs_group_desc_update(fs, g, &gd);
		fs->group_dirty[g] &= (unsigned char)~(FS_DIRTY_BLOCK_BITMAP | FS_DIRTY_INODE_BITMAP);
	}
	return 0;
}

/*
 * With meta_bg, descriptor block i from s_first_meta_bg on lives in its own
 * meta group (the groups it describes): in the first, second and last
 * group of that meta group, each copy after the group's superblock if it
 * has one.  The first is the primary.
 */
static int flush_meta_bg_desc_block(struct ext4fs_fs *fs, uint32_t i, const unsigned char *block)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t first = i * geo->desc_per_block;
	uint32_t copies[3] = { first, first + 1, first + geo->desc_per_block - 1 };

	for (int c = 0; c < (fs->primary_only ? 1 : 3); c++) {
		uint32_t g = copies[c];
		uint64_t ndesc;

		if (g >= geo->group_count)
			continue;
		ext4fs_group_meta_location(fs, g, NULL, NULL, NULL, &ndesc, NULL);
		if (!ndesc)
			continue;
		int err = ext4fs_block_write(fs, ndesc, block);
		if (err)
			return err;
	}
	return 0;
}

/* Write descriptor block i (of the table) wherever a copy of the table lives. */
static int flush_desc_block(struct ext4fs_fs *fs, uint32_t i, unsigned char *block)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t first = i * geo->desc_per_block;
	uint32_t n = geo->group_count - first < geo->desc_per_block ?
		     geo->group_count - first : geo->desc_per_block;
	int err;

	memset(block, 0, geo->block_size);
	memcpy(block, fs->gd_raw + (size_t)first * geo->desc_size, (size_t)n * geo->desc_size);
	if ((fs->sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_META_BG) && i >= fs->sb.s_first_meta_bg)
		return flush_meta_bg_desc_block(fs, i, block);
	for (uint32_t g = 0; g < (fs->primary_only ? 1 : geo->group_count); g++) {
		uint64_t odesc;
		uint32_t odesc_blocks;

		if (!ext4fs_group_has_super(fs, g))
			continue;
		ext4fs_group_meta_location(fs, g, NULL, &odesc, &odesc_blocks, NULL, NULL);
		if (!odesc || i >= odesc_blocks)
			continue;
		err = ext4fs_block_write(fs, odesc + i, block);
		if (err)
			return err;
	}
	return 0;
}

static int flush_descs(struct ext4fs_fs *fs, unsigned char *block)
{
	const struct ext4fs_geom *geo = &fs->geom;
	int err;

	for (uint32_t i = 0; i < geo->desc_blocks; i++) {
		uint32_t first = i * geo->desc_per_block, dirty = 0;
		for (uint32_t g = first; g < geo->group_count && g < first + geo->desc_per_block; g++)
			dirty |= fs->group_dirty[g] & FS_DIRTY_DESC;
		if (!dirty)
			continue;
		err = flush_desc_block(fs, i, block);
		if (err)
			return err;
		for (uint32_t g = first; g < geo->group_count && g < first + geo->desc_per_block; g++)
			fs->group_dirty[g] &= (unsigned char)~FS_DIRTY_DESC;
	}
	return 0;
}

static int write_super_at(struct ext4fs_fs *fs, uint64_t byte, uint16_t group)
{
	uint16_t saved = fs->sb.s_block_group_nr;
	int err;

	fs->sb.s_block_group_nr = group;
	ext4fs__fs_super_store(fs);
	cache_forget(fs, byte / fs->geom.block_size, 1);
	err = ext4fs_io_write(fs->io, byte, fs->sb_raw, EXT4FS_SUPER_SIZE);
	fs->sb.s_block_group_nr = saved;
	ext4fs__fs_super_store(fs);
	if (err)
		return ext4fs__fs_fail(fs, err, "writing the superblock at byte %llu: %s",
				       (unsigned long long)byte, ext4fs_strerror(err));
	return 0;
}

/* The superblock fields ext4fs_super_set_journal() may change. */
static void take_journal_state(struct ext4fs_super *to, const struct ext4fs_super *from)
{
	to->s_feature_compat = (to->s_feature_compat & ~(uint32_t)EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) |
			       (from->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL);
	to->s_feature_incompat = (to->s_feature_incompat & ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_RECOVER) |
				 (from->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER);
	to->s_journal_inum = from->s_journal_inum;
	to->s_journal_dev = from->s_journal_dev;
	memcpy(to->s_journal_uuid, from->s_journal_uuid, sizeof(to->s_journal_uuid));
	memcpy(to->s_jnl_blocks, from->s_jnl_blocks, sizeof(to->s_jnl_blocks));
	to->s_jnl_backup_type = from->s_jnl_backup_type;
	to->s_state = from->s_state;
}

int ext4fs_super_set_journal(struct ext4fs_fs *fs, const struct ext4fs_super *sb)
{
	int err;

	if (fs_writable(fs)) {
		take_journal_state(&fs->sb, sb);
		fs->super_dirty = 1;
		return 0;
	}
	if (!(fs->flags & EXT4FS_OPEN_RECOVERY))
		return ext4fs__fs_require_rw(fs, "changing the journal fields of the superblock");
	take_journal_state(&fs->sb, sb);
	err = write_super_at(fs, EXT4FS_SUPER_OFFSET, 0);
	if (err)
		return err;
	err = ext4fs_io_flush(fs->io);
	return err ? ext4fs__fs_fail(fs, err, "flushing the superblock: %s", ext4fs_strerror(err)) : 0;
}

/*
 * "Lifetime writes": what this handle wrote since the last count, whole KiB,
 * as e2fsprogs adds its channel's count when it closes.  Like e2fsprogs,
 * only a superblock that keeps a count (nonzero, as mkfs starts it) gets
 * one.  Called before the superblocks are written, so only their own few
 * KiB are left out.
 */
static uint64_t uncounted_writes(const struct ext4fs_fs *fs)
{
	return fs->sb.s_kbytes_written ? fs->io->stats.bytes_written - fs->io_written_counted : 0;
}

static void count_writes(struct ext4fs_fs *fs)
{
	uint64_t kib = uncounted_writes(fs) >> 10;

	fs->sb.s_kbytes_written += kib;
	fs->io_written_counted += kib << 10;
}

static int flush_supers(struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = &fs->geom;
	int64_t now;
	uint32_t nsec;
	int err;

	count_writes(fs);
	ext4fs_now(fs, &now, &nsec);
	fs->sb.s_wtime = (uint32_t)now;
	fs->sb.s_wtime_hi = (uint8_t)((uint64_t)now >> 32);
	for (uint32_t g = 1; g < (fs->primary_only ? 1 : geo->group_count); g++) {
		uint64_t sblk;

		if (!ext4fs_group_has_super(fs, g))
			continue;
		ext4fs_group_meta_location(fs, g, &sblk, NULL, NULL, NULL, NULL);
		err = write_super_at(fs, sblk * geo->block_size, (uint16_t)g);
		if (err)
			return err;
	}
	/* The primary last, once everything it describes is on disk. */
	err = ext4fs_io_flush(fs->io);
	if (err)
		return ext4fs__fs_fail(fs, err, "flushing %s: %s", fs->io->name, ext4fs_strerror(err));
	err = write_super_at(fs, EXT4FS_SUPER_OFFSET, 0);
	if (err)
		return err;
	fs->super_dirty = 0;
	return 0;
}

int ext4fs_flush(struct ext4fs_fs *fs)
{
	unsigned char *block;
	int dirty = 0, err;

	err = ext4fs__fs_require_rw(fs, "flushing");
	if (err)
		return err;
	for (uint32_t g = 0; g < fs->geom.group_count && !dirty; g++)
		dirty = fs->group_dirty[g] != 0;
	if (uncounted_writes(fs) >= 1024)
		fs->super_dirty = 1;
	if (!dirty && !fs->super_dirty)
		return 0;
	block = malloc(fs->geom.block_size);
	if (!block)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to flush");
	err = flush_bitmaps(fs, block);
	if (!err)
		err = flush_descs(fs, block);
	if (!err)
		err = flush_supers(fs);
	if (!err) {
		err = ext4fs_io_flush(fs->io);
		if (err)
			ext4fs__fs_fail(fs, err, "flushing %s: %s", fs->io->name, ext4fs_strerror(err));
	}
	free(block);
	return err;
}

void ext4fs_set_primary_only(struct ext4fs_fs *fs, int on)
{
	fs->primary_only = on != 0;
}

int ext4fs_close_flush(struct ext4fs_fs *fs)
{
	int err = 0;

	if (!fs)
		return 0;
	if (fs_writable(fs) && fs->group_dirty)
		err = ext4fs_flush(fs);
	if (!err)
		err = ext4fs__fs_close_flush_notify(fs);
	/* Flushed and told: the close must not write again (a superblock write it failed would go unseen). */
	if (!err)
		fs->flushed_for_close = 1;
	ext4fs_close(fs);
	return err;
}
