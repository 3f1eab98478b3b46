/*
 * pass5.c - the block and inode bitmaps, and the free and directory counts
 * of every group and of the superblock, against what passes 1-4 found.
 *
 * Differences are printed as e2fsck prints them (" +blk" used but not
 * marked, " -blk" marked but not used, runs as " +(a--b)") and repaired
 * together after one question.  Repairs go through the library's
 * accounting calls, which keep the bitmaps' checksums, the groups' uninit
 * flags and the counts in step; the counts are then compared again.
 * Last come the bitmap blocks' padding and, with metadata_csum, the
 * bitmaps' checksums in the descriptors.
 */
#include "config.h"
#include <stdlib.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/super.h"
#include "context.h"
#include "passes.h"
#include "problem.h"
#include "progress.h"
#include "problems.h"

/*
 * The counts as they were on disk when pass 5 began: repairing a bitmap
 * moves the live counts, but the messages (and the decision) compare the
 * counts that were on disk, as e2fsck's do.
 */
struct counts_before {
	uint32_t *free_blocks, *free_inodes, *dirs;
	uint64_t total_free_blocks;
	uint32_t total_free_inodes;
};

/* A run of differences of one sign, printed when it ends. */
struct diff_run {
	struct e4fsck *ctx;
	int blocks;                 /* 1: blocks, 0: inodes */
	int header_done;
	int sign;                   /* +1 used but not marked, -1 marked but not used, 0 none */
	uint64_t start, end;        /* [start, end] */
	uint64_t count;             /* differences seen */
};

static void run_flush(struct diff_run *r)
{
	struct problem_ctx pctx = { 0 };
	uint32_t code;

	if (!r->sign)
		return;
	if (!r->header_done) {
		fix_problem(r->ctx, r->blocks ? PR_5_BLOCK_BITMAP_HEADER : PR_5_INODE_BITMAP_HEADER, NULL);
		r->header_done = 1;
	}
	if (r->blocks) {
		/* With bigalloc, as e2fsck: a run from its first cluster's first block to its last cluster's. */
		pctx.blk = r->start;
		pctx.blk2 = r->end & ~((uint64_t)r->ctx->geo->cluster_ratio - 1);
		if (pctx.blk2 < pctx.blk)
			pctx.blk2 = pctx.blk;
		code = pctx.blk == pctx.blk2 ? (r->sign > 0 ? PR_5_BLOCK_USED : PR_5_BLOCK_UNUSED)
					  : (r->sign > 0 ? PR_5_BLOCK_RANGE_USED : PR_5_BLOCK_RANGE_UNUSED);
	} else {
		pctx.ino = (uint32_t)r->start;
		pctx.ino2 = (uint32_t)r->end;
		code = r->start == r->end ? (r->sign > 0 ? PR_5_INODE_USED : PR_5_INODE_UNUSED)
					  : (r->sign > 0 ? PR_5_INODE_RANGE_USED : PR_5_INODE_RANGE_UNUSED);
	}
	fix_problem(r->ctx, code, &pctx);
	r->sign = 0;
}

/* The first set (want 1) or clear (want 0) item of the disk bitmap in [from, last], else last + 1. */
static uint64_t disk_next(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t last, int want)
{
	uint64_t at;

	if (from > last || ext4fs_bitmap_find(bm, from, last, want, &at))
		return last + 1;
	return at;
}

static uint64_t found_next(const struct bitmap_paged *m, uint64_t from, uint64_t last, int want)
{
	uint64_t at = want ? bitmap_paged_next_set(m, from) : bitmap_paged_next_clear(m, from);

	return at > last ? last + 1 : at;
}

/*
 * Call fn for every run [a, b] where found and disk differ over [first,
 * last], in order; sign +1: used but not marked, -1: marked but not used.
 * The walk goes from run to run of either map, so its cost follows the
 * number of extents in use, not the size of the file system.
 */
static int diff_runs(const struct ext4fs_bitmap *disk, const struct bitmap_paged *found, uint64_t first,
		     uint64_t last, int (*fn)(void *arg, uint64_t a, uint64_t b, int sign), void *arg)
{
	uint64_t pos = first;

	while (pos <= last) {
		uint64_t a = found_next(found, pos, last, 1), b = disk_next(disk, pos, last, 1);
		uint64_t start = a < b ? a : b, end;
		int sign;
		if (start > last)
			break;
		if (a == b) {
			uint64_t ea = found_next(found, a, last, 0), eb = disk_next(disk, b, last, 0);
			if (ea == eb) {
				pos = ea;
				continue;
			}
			/* Both set up to the shorter run's end; past it only the longer one is. */
			pos = ea < eb ? ea : eb;
			continue;
		}
		if (a < b) {
			end = found_next(found, a, last, 0);
			sign = 1;
		} else {
			end = disk_next(disk, b, last, 0);
			sign = -1;
		}
		uint64_t other = a < b ? b : a;
		if (end > other)
			end = other;
		int rc = fn(arg, start, end - 1, sign);
		if (rc)
			return rc;
		pos = end;
	}
	return 0;
}

/*
 * Items [a, b] are in use but not marked: for those in a group flagged
 * BLOCK_UNINIT (INODE_UNINIT, with group checksums), ask as e2fsck does,
 * once per block (per cluster with bigalloc) or inode until a yes clears
 * the flag.  0, or -1 (reported).
 */
static int ask_uninit(struct diff_run *r, uint64_t a, uint64_t b)
{
	struct e4fsck *ctx = r->ctx;
	const struct ext4fs_geom *g = ctx->geo;
	uint64_t base = r->blocks ? g->first_data_block : 1;
	uint64_t per_group = r->blocks ? g->blocks_per_group : g->inodes_per_group;
	uint64_t step = r->blocks ? g->cluster_ratio : 1;
	uint16_t flag = r->blocks ? EXT4FS_BG_BLOCK_UNINIT : EXT4FS_BG_INODE_UNINIT;

	if (!r->blocks && !g->has_gdt_csum && !g->has_metadata_csum)
		return 0;
	while (a <= b) {
		uint32_t grp = (uint32_t)((a - base) / per_group);
		uint64_t group_last = base + (uint64_t)(grp + 1) * per_group - 1;
		uint64_t last = group_last < b ? group_last : b;
		for (uint64_t n = (a + step - 1) / step * step;
		     n <= last && grp < g->group_count && (ext4fs_group(ctx->fs, grp)->flags & flag); n += step) {
			struct problem_ctx pctx = { .group = grp, .blk = n };
			if (!fix_problem(ctx, r->blocks ? PR_5_BLOCK_UNINIT : PR_5_INODE_UNINIT, &pctx))
				continue;
			struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, grp);
			gd.flags &= (uint16_t)~flag;
			int err = ext4fs_group_desc_set(ctx->fs, grp, &gd);
			if (err) {
				fsck_fatal(ctx, "%s while clearing group %u's uninit flag: %s", ext4fs_strerror(err),
					   grp, ext4fs_errmsg(ctx->fs));
				return -1;
			}
			ctx->fs_changed = 1;
		}
		a = last + 1;
	}
	return 0;
}

static int print_run(void *arg, uint64_t a, uint64_t b, int sign)
{
	struct diff_run *r = arg;

	/* As e2fsck: the first item's question comes before the run before it is printed. */
	if (sign > 0 && ask_uninit(r, a, a))
		return -1;
	/* Runs from the walk may touch: one printed run per maximal run of one sign. */
	if (r->sign == sign && a == r->end + 1) {
		r->end = b;
	} else {
		run_flush(r);
		r->sign = sign;
		r->start = a;
		r->end = b;
	}
	r->count += b - a + 1;
	return sign > 0 && b > a ? ask_uninit(r, a + 1, b) : 0;
}

struct repair {
	struct e4fsck *ctx;
	int blocks;
};

/* Apply one run of differences through the accounting calls (they keep checksums and counts). */
static int repair_run(void *arg, uint64_t a, uint64_t b, int sign)
{
	struct repair *rp = arg;
	struct e4fsck *ctx = rp->ctx;
	int err = 0;

	if (rp->blocks) {
		err = sign > 0 ? ext4fs_blocks_mark_used(ctx->fs, a, b - a + 1)
			       : ext4fs_blocks_mark_free(ctx->fs, a, b - a + 1);
	} else {
		for (uint64_t n = a; n <= b && !err; n++) {
			int dir = bitmap_paged_test(&ctx->inode_dir, n);
			err = sign > 0 ? ext4fs_inode_mark_used(ctx->fs, (uint32_t)n, dir)
				       : ext4fs_inode_mark_free(ctx->fs, (uint32_t)n, dir);
		}
	}
	if (err) {
		fsck_fatal(ctx, "%s while fixing the %s bitmap at %llu: %s", ext4fs_strerror(err),
			   rp->blocks ? "block" : "inode", (unsigned long long)a, ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/*
 * Compare found with the bitmap on disk over [first, last].  Returns 1
 * when they agree, 2 when they differed and were repaired, 0 when the disk
 * keeps its own bitmap (the counts are then checked against that one, as
 * e2fsck does, so they agree with the bitmap that stays), -1 on error.
 */
static int compare_bitmap(struct e4fsck *ctx, const struct ext4fs_bitmap *disk,
			  const struct bitmap_paged *found, uint64_t first, uint64_t last, int blocks)
{
	struct diff_run r = { .ctx = ctx, .blocks = blocks };

	if (diff_runs(disk, found, first, last, print_run, &r))
		return -1;
	run_flush(&r);
	if (!r.count)
		return 1;
	if (!fix_problem(ctx, blocks ? PR_5_BLOCK_BITMAP_END : PR_5_INODE_BITMAP_END, NULL))
		return 0;
	struct repair rp = { ctx, blocks };
	return diff_runs(disk, found, first, last, repair_run, &rp) ? -1 : 2;
}

/*
 * Set items in [first, first + n) of the bitmap that stays (found, or the
 * disk's), in the disk bitmap's units: clusters with bigalloc (ratio
 * blocks each; found sets whole clusters, and only the file system's last
 * cluster may be short), else blocks or inodes.
 */
static uint64_t count_kept(const struct bitmap_paged *found, const struct ext4fs_bitmap *disk, int use_found,
			   uint64_t first, uint64_t n, uint32_t ratio)
{
	if (!use_found)
		return ext4fs_bitmap_count_set(disk, first, first + n - 1);
	return (bitmap_paged_count(found, first, n) + ratio - 1) / ratio;
}

static int set_group_desc(struct e4fsck *ctx, uint32_t g, const struct ext4fs_group_desc *gd)
{
	int err = ext4fs_group_desc_set(ctx->fs, g, gd);

	if (err) {
		fsck_fatal(ctx, "%s while fixing the counts of group %u: %s", ext4fs_strerror(err), g,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

static int set_super(struct e4fsck *ctx, const struct ext4fs_super *sb)
{
	int err = ext4fs_super_set(ctx->fs, sb);

	if (err) {
		fsck_fatal(ctx, "%s while fixing the superblock's counts: %s", ext4fs_strerror(err),
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/*
 * Decide one count: a count that differs from what was on disk is a
 * problem (asked with the old value); one that was right but moved while a
 * bitmap was repaired is put back silently.  Returns 1 to write counted.
 */
static int count_needs_write(struct e4fsck *ctx, uint32_t code, struct problem_ctx *pctx, uint64_t was,
			     uint64_t live, uint64_t counted)
{
	if (was != counted) {
		pctx->num = counted;
		pctx->num2 = was;
		return fix_problem(ctx, code, pctx);
	}
	return live != counted && !ctx->read_only;
}

static int check_block_counts(struct e4fsck *ctx, const struct ext4fs_bitmap *disk, int use_found,
			      const struct counts_before *was)
{
	const struct ext4fs_geom *geo = ctx->geo;
	uint64_t total = 0;

	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t first = ext4fs_group_first_block(ctx->fs, g), last = ext4fs_group_last_block(ctx->fs, g);
		uint64_t n = last - first + 1, ratio = geo->cluster_ratio;
		/* Groups count free clusters; the superblock counts their blocks (below). */
		uint32_t free_b = (uint32_t)((n + ratio - 1) / ratio -
					     count_kept(&ctx->block_found, disk, use_found, first, n, geo->cluster_ratio));
		struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, g);
		struct problem_ctx pctx = { .group = g };

		progress_advance(ctx, 1);
		total += free_b;
		if (count_needs_write(ctx, PR_5_FREE_BLOCK_COUNT_GROUP, &pctx, was->free_blocks[g],
				      gd.free_blocks_count, free_b)) {
			gd.free_blocks_count = free_b;
			if (set_group_desc(ctx, g, &gd))
				return -1;
		}
	}
	struct problem_ctx pctx = { 0 };
	total *= geo->cluster_ratio;
	if (count_needs_write(ctx, PR_5_FREE_BLOCK_COUNT, &pctx, was->total_free_blocks, geo->free_blocks_count,
			      total)) {
		struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
		sb.s_free_blocks_count_lo = (uint32_t)total;
		sb.s_free_blocks_count_hi = (uint32_t)(total >> 32);
		if (set_super(ctx, &sb))
			return -1;
	}
	return 0;
}

static int check_inode_counts(struct e4fsck *ctx, const struct ext4fs_bitmap *disk, int use_found,
			      const struct counts_before *was)
{
	const struct ext4fs_geom *geo = ctx->geo;
	uint64_t total = 0;

	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t first = (uint64_t)g * geo->inodes_per_group + 1;
		uint32_t free_i = geo->inodes_per_group -
				  (uint32_t)count_kept(&ctx->inode_used, disk, use_found, first, geo->inodes_per_group, 1);
		uint32_t dirs = 0;
		/* A directory counts where the bitmap that stays has its bit. */
		uint64_t end = first + geo->inodes_per_group;
		if (end > ctx->inode_dir.p.limit)
			end = ctx->inode_dir.p.limit;       /* a short inode count (damaged superblock) */
		for (uint64_t i = bitmap_paged_next_set(&ctx->inode_dir, first); i < end;
		     i = bitmap_paged_next_set(&ctx->inode_dir, i + 1))
			dirs += use_found ? 1 : (ext4fs_bitmap_test(disk, i) > 0);
		struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, g);
		struct problem_ctx pctx = { .group = g };
		int fix = 0;

		progress_advance(ctx, 1);
		total += free_i;
		if (count_needs_write(ctx, PR_5_FREE_INODE_COUNT_GROUP, &pctx, was->free_inodes[g],
				      gd.free_inodes_count, free_i)) {
			gd.free_inodes_count = free_i;
			fix = 1;
		}
		if (count_needs_write(ctx, PR_5_FREE_DIR_COUNT_GROUP, &pctx, was->dirs[g], gd.used_dirs_count, dirs)) {
			gd.used_dirs_count = dirs;
			fix = 1;
		}
		if (fix && set_group_desc(ctx, g, &gd))
			return -1;
	}
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	struct problem_ctx pctx = { 0 };
	if (count_needs_write(ctx, PR_5_FREE_INODE_COUNT, &pctx, was->total_free_inodes, sb->s_free_inodes_count,
			      total)) {
		struct ext4fs_super fixed = *sb;
		fixed.s_free_inodes_count = (uint32_t)total;
		if (set_super(ctx, &fixed))
			return -1;
	}
	return 0;
}

/*
 * Have every group's bitmap of that kind written at the end, padding set
 * and checksum fresh.  repair: the rewrite is the answer to a problem, so
 * the file system counts as changed; otherwise it only completes a change
 * made already.
 */
static int rewrite_bitmap(struct e4fsck *ctx, enum ext4fs_bitmap_kind kind, int repair)
{
	int err = ext4fs_bitmap_rewrite(ctx->fs, kind);

	if (err) {
		fsck_fatal(ctx, "%s while rewriting the %s bitmap: %s", ext4fs_strerror(err),
			   kind == EXT4FS_BLOCK_BITMAP ? "block" : "inode", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	if (repair)
		ctx->fs_changed = 1;
	return 0;
}

/*
 * The padding of the bitmap blocks: bytes past a group's bits, and in the
 * last group the bits past the file system's end, must be ones.  One
 * question covers every group.  A repair of the differences leaves the
 * bitmap written whole, end bits included, so those no longer count then
 * (e2fsck copies its own map over the disk's, padding set); the bytes past
 * the bits are still asked about, as e2fsck does.
 */
static int check_padding(struct e4fsck *ctx, const struct ext4fs_bitmap *bm, enum ext4fs_bitmap_kind kind,
			 int repaired)
{
	unsigned bad = 0;

	for (uint32_t g = 0; g < ctx->geo->group_count; g++)
		bad |= ext4fs_bitmap_group_flags(bm, g);
	if (repaired)
		bad &= ~(unsigned)EXT4FS_BITMAP_END_BAD;
	if (!(bad & (EXT4FS_BITMAP_TAIL_BAD | EXT4FS_BITMAP_END_BAD)))
		return 0;
	if (!fix_problem(ctx, kind == EXT4FS_BLOCK_BITMAP ? PR_5_BLOCK_BMAP_PADDING : PR_5_INODE_BMAP_PADDING,
			 NULL))
		return 0;
	return rewrite_bitmap(ctx, kind, 1);
}

/*
 * The bitmaps' checksums in the descriptors (metadata_csum), where the
 * groups keep a bitmap on disk.  A bitmap this run changed is written
 * whole, every checksum fresh, so there is nothing to ask (e2fsck skips a
 * dirty bitmap and writes it whole).  Otherwise every bad group is
 * reported until one is repaired, which rewrites them all.
 */
static int check_csums(struct e4fsck *ctx, const struct ext4fs_bitmap *bm, enum ext4fs_bitmap_kind kind)
{
	uint16_t uninit = kind == EXT4FS_BLOCK_BITMAP ? EXT4FS_BG_BLOCK_UNINIT : EXT4FS_BG_INODE_UNINIT;

	if (!ctx->geo->has_metadata_csum)
		return 0;
	/* Not a repair of its own: an optimisation that moved blocks changes nothing in e2fsck's count. */
	if (!ctx->read_only && ext4fs_bitmap_changed(ctx->fs, kind))
		return rewrite_bitmap(ctx, kind, 0);
	for (uint32_t g = 0; g < ctx->geo->group_count; g++) {
		struct problem_ctx pctx = { .group = g };
		if ((ext4fs_group(ctx->fs, g)->flags & uninit) ||
		    !(ext4fs_bitmap_group_flags(bm, g) & EXT4FS_BITMAP_CSUM_BAD))
			continue;
		if (fix_problem(ctx, kind == EXT4FS_BLOCK_BITMAP ? PR_5_BLOCK_BITMAP_CSUM_INVALID
								  : PR_5_INODE_BITMAP_CSUM_INVALID, &pctx))
			return rewrite_bitmap(ctx, kind, 1);
	}
	return 0;
}

static int snapshot_counts(struct e4fsck *ctx, struct counts_before *was)
{
	uint32_t n = ctx->geo->group_count;

	was->free_blocks = calloc(n, sizeof(uint32_t));
	was->free_inodes = calloc(n, sizeof(uint32_t));
	was->dirs = calloc(n, sizeof(uint32_t));
	if (!was->free_blocks || !was->free_inodes || !was->dirs) {
		fsck_fatal(ctx, "out of memory in pass 5");
		return -1;
	}
	for (uint32_t g = 0; g < n; g++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, g);
		was->free_blocks[g] = gd->free_blocks_count;
		was->free_inodes[g] = gd->free_inodes_count;
		was->dirs[g] = gd->used_dirs_count;
	}
	was->total_free_blocks = ctx->geo->free_blocks_count;
	was->total_free_inodes = ext4fs_sb(ctx->fs)->s_free_inodes_count;
	return 0;
}

int fsck_pass5(struct e4fsck *ctx)
{
	const struct ext4fs_geom *geo = ctx->geo;
	struct ext4fs_bitmap *own_bb = NULL, *own_ib = NULL;
	const struct ext4fs_bitmap *bb = NULL, *ib = NULL;
	struct counts_before was = { 0 };
	int err, rc = -1;

	/*
	 * Writable: the handle's live bitmaps, which hold what passes 2-4 did
	 * and what the repairs below change.  Read-only: copies loaded from disk.
	 */
	if (ctx->read_only) {
		err = ext4fs_block_bitmap_load(ctx->fs, &own_bb);
		if (!err)
			err = ext4fs_inode_bitmap_load(ctx->fs, &own_ib);
		bb = own_bb;
		ib = own_ib;
	} else {
		err = ext4fs_fs_block_bitmap(ctx->fs, &bb);
		if (!err)
			err = ext4fs_fs_inode_bitmap(ctx->fs, &ib);
	}
	if (err) {
		fsck_fatal(ctx, "%s while reading the bitmaps: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
		goto out;
	}
	if (snapshot_counts(ctx, &was))
		goto out;
	int blocks = compare_bitmap(ctx, bb, &ctx->block_found, geo->first_data_block, geo->blocks_count - 1, 1);
	if (blocks < 0 || check_block_counts(ctx, bb, blocks > 0, &was))
		goto out;
	int inodes = compare_bitmap(ctx, ib, &ctx->inode_used, 1, geo->inodes_count, 0);
	if (inodes < 0 || check_inode_counts(ctx, ib, inodes > 0, &was))
		goto out;
	/* e2fsck's order: both paddings, then both checksums, inodes first. */
	if (check_padding(ctx, ib, EXT4FS_INODE_BITMAP, inodes == 2) ||
	    check_padding(ctx, bb, EXT4FS_BLOCK_BITMAP, blocks == 2) ||
	    check_csums(ctx, ib, EXT4FS_INODE_BITMAP) || check_csums(ctx, bb, EXT4FS_BLOCK_BITMAP))
		goto out;
	rc = 0;
out:
	free(was.free_blocks);
	free(was.free_inodes);
	free(was.dirs);
	ext4fs_bitmap_free(own_bb);
	ext4fs_bitmap_free(own_ib);
	return rc;
}
