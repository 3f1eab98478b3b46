/*
 * check.c - the check itself, in e2fsck's order: the mount check, the
 * superblock, the journal step and its replay, the superblock and orphan
 * steps, whether to go on without -f, the passes (again after a restart),
 * the orphan file, a new journal, discarding, marking the file system
 * checked and the summary.  main() (e4fsck.c) reads the options and calls
 * fsck_check().
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/io.h"
#include "ext4fs/journal.h"
#include "ext4fs/mountcheck.h"
#include "ext4fs/super.h"
#include "check.h"
#include "context.h"
#include "guard.h"
#include "journal_check.h"
#include "passes.h"
#include "progress.h"
#include "report.h"

/* Whether the file system may be skipped without -f, and why not. */
static const char *check_reason(const struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	int64_t now = ctx->now;

	if (!(sb->s_state & EXT4FS_STATE_VALID))
		return " was not cleanly unmounted";
	if (sb->s_state & EXT4FS_STATE_ERROR)
		return " contains a file system with errors";
	if (fsck_backup_super_differs(ctx))
		return " primary superblock features different from backup";
	if (sb->s_max_mnt_count > 0 && sb->s_mnt_count >= (uint16_t)sb->s_max_mnt_count)
		return " has been mounted too many times without being checked";
	if (sb->s_checkinterval && now >= (int64_t)sb->s_lastcheck + (int64_t)sb->s_checkinterval)
		return " has gone too long without being checked";
	return NULL;
}

/* Refuse to change a mounted file system; -n only warns. */
static int check_mounted(struct e4fsck *ctx)
{
	unsigned use = 0;

	if (ext4fs_check_mount(ctx->path, &use) == 0 && EXT4FS_MOUNT_IN_USE(use)) {
		if (ctx->mode != MODE_NO) {
			fprintf(stderr, "%s is mounted.\n%s: Cannot continue, aborting.\n\n", ctx->path,
				ctx->prog);
			ctx->exit_status |= FSCK_ERROR;
			return -1;
		}
		fprintf(stderr, "Warning!  %s is mounted.\n", ctx->path);
	}
	return 0;
}

/*
 * Features whose metadata e4fsck cannot judge: bigalloc is refused (its
 * block accounting is in clusters, which the checks do not know, so every
 * answer would be wrong); the quota feature's usage records are not
 * checked, which is said once.  0, or -1 with exit status 8.
 */
static int refuse_unchecked(struct e4fsck *ctx)
{
	if (ctx->geo->cluster_ratio != 1) {
		fprintf(stderr, "%s: %s uses bigalloc (clusters of %u blocks), which e4fsck cannot check yet; "
			"use e2fsck\n", ctx->prog, ctx->device, ctx->geo->cluster_ratio);
		ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	if (ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_QUOTA))
		fprintf(stderr, "%s: warning: %s has the quota feature; e4fsck does not check quota usage yet\n",
			ctx->prog, ctx->device);
	return 0;
}

/*
 * Replay the journal, then open the file system again: recovery works on a
 * handle of its own and leaves the first one stale.  A fast-commit area
 * holding commits is refused: replaying the main log alone would lose them.
 */
static int recover_journal(struct e4fsck *ctx)
{
	struct ext4fs_journal *j = NULL;
	struct ext4fs_journal_info info;
	int err;

	printf("%s: recovering journal\n", ctx->device);
	ext4fs_close(ctx->fs);
	ctx->fs = NULL;
	if (fsck_open(ctx, EXT4FS_OPEN_RECOVERY))
		return -1;
	err = ext4fs_journal_open(ctx->fs, &j);
	if (!err)
		err = ext4fs_journal_scan(j, &info);
	if (!err && info.fc_pending) {
		fsck_fatal(ctx, "%s: the journal's fast-commit area holds commits, which e4fsck cannot "
			   "replay yet; run e2fsck", ctx->device);
		ext4fs_journal_close(j);
		return -1;
	}
	if (!err)
		err = ext4fs_journal_recover(j, &info);
	ext4fs_journal_close(j);
	if (err) {
		fsck_fatal(ctx, "%s while recovering the journal of %s: %s", ext4fs_strerror(err), ctx->device,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ext4fs_close(ctx->fs);
	ctx->fs = NULL;
	return fsck_open(ctx, EXT4FS_OPEN_RW);
}

/*
 * Without -f, a clean file system is only reported.  As e2fsck does, the
 * superblock's totals are first brought in line with the groups' counts:
 * the kernel does not keep them exact, and dumpe2fs users look at them.
 */
static int report_clean(struct e4fsck *ctx)
{
	uint64_t free_blocks = 0, free_inodes = 0;

	for (uint32_t g = 0; g < ctx->geo->group_count; g++) {
		free_blocks += ext4fs_group(ctx->fs, g)->free_blocks_count;
		free_inodes += ext4fs_group(ctx->fs, g)->free_inodes_count;
	}
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	if (!ctx->read_only && free_blocks <= ctx->geo->blocks_count && free_inodes <= sb->s_inodes_count &&
	    (free_blocks != ctx->geo->free_blocks_count || free_inodes != sb->s_free_inodes_count)) {
		struct ext4fs_super fixed = *sb;
		/* e2fsck names the corrections, except in preen mode. */
		if (ctx->mode != MODE_PREEN && free_inodes != sb->s_free_inodes_count)
			printf("Setting free inodes count to %" PRIu64 " (was %" PRIu32 ")\n", free_inodes,
			       sb->s_free_inodes_count);
		if (ctx->mode != MODE_PREEN && free_blocks != ctx->geo->free_blocks_count)
			printf("Setting free blocks count to %" PRIu64 " (was %" PRIu64 ")\n", free_blocks,
			       ctx->geo->free_blocks_count);
		fixed.s_free_blocks_count_lo = (uint32_t)free_blocks;
		fixed.s_free_blocks_count_hi = (uint32_t)(free_blocks >> 32);
		fixed.s_free_inodes_count = (uint32_t)free_inodes;
		int err = ext4fs_super_set(ctx->fs, &fixed);
		if (!err)
			err = ext4fs_flush(ctx->fs);
		if (err) {
			fsck_fatal(ctx, "%s while updating the superblock's counts: %s", ext4fs_strerror(err),
				   ext4fs_errmsg(ctx->fs));
			return -1;
		}
		sb = ext4fs_sb(ctx->fs);
	}
	printf("%s: clean, %" PRIu32 "/%" PRIu32 " files, %" PRIu64 "/%" PRIu64 " blocks\n", ctx->device,
	       sb->s_inodes_count - sb->s_free_inodes_count, sb->s_inodes_count,
	       ctx->geo->blocks_count - ctx->geo->free_blocks_count, ctx->geo->blocks_count);
	return 0;
}

static const struct {
	int slot;
	const char *title;
	int (*run)(struct e4fsck *);
} passes[] = {
	{ TIME_PASS1, "Pass 1: Checking inodes, blocks, and sizes", fsck_pass1 },
	{ TIME_PASS2, "Pass 2: Checking directory structure", fsck_pass2 },
	{ TIME_PASS3, "Pass 3: Checking directory connectivity", fsck_pass3 },
	{ TIME_PASS4, "Pass 4: Checking reference counts", fsck_pass4 },
	{ TIME_PASS5, "Pass 5: Checking group summary information", fsck_pass5 },
};

/* run_passes(): pass 1 or 2 asked to start the check again (ctx->restart says why). */
#define RUN_RESTART 1

/* The passes in order: 0, -1 when the check stops, or RUN_RESTART. */
static int run_passes(struct e4fsck *ctx)
{
	struct alloc_guard guard = { 0 };

	for (size_t i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
		if (passes[i].slot == TIME_PASS3 && !ctx->read_only && fsck_guard_on(ctx, &guard))
			return -1;
		if (passes[i].slot == TIME_PASS5 && !ctx->read_only && fsck_guard_off(ctx, &guard))
			return -1;
		struct pass_timer t;
		if (ctx->mode != MODE_PREEN)
			printf("%s\n", passes[i].title);
		fflush(stdout);
		timer_start(ctx, &t);
		progress_pass_begin(ctx, passes[i].slot);
		int rc = passes[i].run(ctx);
		progress_pass_end(ctx);
		timer_stop(ctx, &t, passes[i].slot, passes[i].title);
		if (rc || ctx->aborted) {
			free(guard.runs);
			return -1;
		}
		/* As e2fsck: the other passes wait for the next run (set by pass 1 or 2). */
		if (ctx->restart)
			return RUN_RESTART;
	}
	return 0;
}

/*
 * -E discard, as e2fsck: once a check found nothing to change, every run
 * of blocks no inode or metadata uses is discarded (an image file gets
 * holes).  A device that cannot discard is left alone without a word.
 * Cannot fail.
 */
static int discard_free_blocks(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	struct ext4fs_io *io = ext4fs_fs_io(ctx->fs);
	uint64_t b = g->first_data_block;

	if (!ctx->discard || ctx->read_only || ctx->fs_changed || (ctx->exit_status & FSCK_UNCORRECTED))
		return 0;
	while ((b = bitmap_paged_next_clear(&ctx->block_found, b)) < g->blocks_count) {
		uint64_t end = bitmap_paged_next_set(&ctx->block_found, b);
		if (end > g->blocks_count)
			end = g->blocks_count;
		/* As e2fsck: a device that refuses stops the discarding, nothing else (the blocks are free). */
		if (ext4fs_io_discard(io, b * g->block_size, (end - b) * g->block_size))
			return 0;
		b = end;
	}
	return 0;
}

/* After a check that changed nothing it could not: mark the file system checked. */
static int mark_checked(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);

	sb.s_lastcheck = (uint32_t)ctx->now;
	sb.s_mnt_count = 0;
	if (!(ctx->exit_status & FSCK_UNCORRECTED)) {
		sb.s_state = (uint16_t)((sb.s_state | EXT4FS_STATE_VALID) & ~EXT4FS_STATE_ERROR);
	}
	int err = ext4fs_super_set(ctx->fs, &sb);
	if (!err)
		err = ext4fs_flush(ctx->fs);
	if (err) {
		fsck_fatal(ctx, "%s while writing the superblock: %s", ext4fs_strerror(err),
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

/*
 * e2fsck's restart, after pass 1 cleared an inode whose blocks it had
 * partly counted, or after pass 2 when passes 1B-1D have moved the map
 * blocks that lay on the file system's metadata: say so, write what was
 * repaired, forget everything the passes found and open the file system
 * again, by its primary superblock as e2fsck does, then go through the
 * journal step and check the superblock, the clock, the backup of the
 * journal inode's map and the resize inode once more.  The journal was
 * replayed and the orphans finished by the first run, and "check forced"
 * is not said twice (e2fsck skips it after a repair).  As e2fsck starts
 * again with a file system it calls valid, the "no" answers of the first
 * run no longer count: the problems still there are found and asked about
 * again.  0, or -1 to stop.
 */
static int restart_check(struct e4fsck *ctx)
{
	/*
	 * Each restart must settle something for good, or the check could go
	 * round for ever: an inode newly cleared (which may not come back,
	 * pass1.c), or a map block moved off the metadata (pass 2 restarts only
	 * then, and a copy is never taken from the metadata, so there are fewer
	 * such blocks each time).
	 */
	if (ctx->restart != RESTART_MOVED && ctx->nrestart_cleared <= ctx->restart_mark) {
		fsck_fatal(ctx, "pass 1 asked to restart without clearing an inode; stopping rather than "
			   "restarting for ever");
		return -1;
	}
	ctx->restart_mark = ctx->nrestart_cleared;
	printf("Restarting e4fsck from the beginning...\n");
	fsck_free_run_state(ctx);
	ctx->exit_status &= ~FSCK_UNCORRECTED;
	int err = ext4fs_flush(ctx->fs);
	if (err) {
		fsck_fatal(ctx, "%s while writing the repairs before restarting: %s", ext4fs_strerror(err),
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ext4fs_close(ctx->fs);
	ctx->fs = NULL;
	ctx->superblock = 0;
	if (fsck_open(ctx, EXT4FS_OPEN_RW))
		return -1;
	/* e2fsck's restart goes back to its journal step: the first run's repairs may have broken the journal. */
	if (fsck_check_journal(ctx))
		return -1;
	/* Passes 1B-1D may have moved the journal's blocks: the backup of its map follows, as in e2fsck. */
	return fsck_check_super(ctx) || fsck_check_super_times(ctx) || fsck_backup_journal_map(ctx) ||
	       fsck_check_resize_inode(ctx) ? -1 : 0;
}

/*
 * Preen met a problem it must not fix alone: like e2fsck, record in the
 * superblock that the file system has errors (so the next boot checks it)
 * and stop with exit status 4, whatever was repaired before.
 */
static void preen_halt(struct e4fsck *ctx)
{
	if (!ctx->read_only) {
		struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
		sb.s_state |= EXT4FS_STATE_ERROR;
		/* The state is one of the journal fields: this works on a handle opened for recovery too. */
		if (ext4fs_super_set_journal(ctx->fs, &sb) ||
		    ((ext4fs_fs_flags(ctx->fs) & EXT4FS_OPEN_RW) && ext4fs_flush(ctx->fs)))
			fsck_fatal(ctx, "%s while recording the errors in the superblock", ext4fs_errmsg(ctx->fs));
	}
	ctx->exit_status = FSCK_UNCORRECTED | (ctx->exit_status & FSCK_ERROR);
}

/*
 * After a problem the check cannot get past (no root): e2fsck's
 * fatal_error() prints "aborted" between two copies of the closing lines
 * and exits 8, with 4 for errors left (else 1 for changes made).  No summary.
 */
static void fatal_end(struct e4fsck *ctx)
{
	int errors = ctx->exit_status & FSCK_UNCORRECTED;

	fflush(stdout);
	fprintf(stderr, "%s: aborted\n", ctx->prog);
	report_abort(ctx);
	ctx->exit_status = FSCK_ERROR | (errors ? FSCK_UNCORRECTED : ctx->fs_changed ? FSCK_NONDESTRUCT : 0);
}

void fsck_check(struct e4fsck *ctx)
{
	int rc;

	/*
	 * A first, read-only look; then, to repair, a writable handle, or one
	 * for recovery when the journal may need replaying (a writable open is
	 * refused then).  The journal step comes first, as in e2fsck, and again
	 * after a replay.
	 */
	ctx->read_only = ctx->mode == MODE_NO;
	if (check_mounted(ctx) || fsck_choose_super(ctx) || fsck_open(ctx, 0) || refuse_unchecked(ctx))
		return;
	if (!ctx->read_only &&
	    fsck_reopen(ctx, ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_RECOVER) ? EXT4FS_OPEN_RECOVERY
											  : EXT4FS_OPEN_RW))
		return;
	int changed_before = ctx->fs_changed;
	if (fsck_check_journal(ctx)) {
		if (ctx->aborted)
			preen_halt(ctx);
		return;
	}
	if (ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_RECOVER)) {
		if (ctx->read_only)
			printf("Warning: skipping journal recovery because doing a read-only filesystem check.\n");
		else if (recover_journal(ctx))
			return;
		/* e2fsck starts again after a replay: what its journal step changed is not counted. */
		ctx->fs_changed = changed_before;
		if (!ctx->read_only && fsck_check_journal(ctx)) {
			if (ctx->aborted)
				preen_halt(ctx);
			return;
		}
	} else if (!ctx->read_only && !(ext4fs_fs_flags(ctx->fs) & EXT4FS_OPEN_RW) && fsck_reopen(ctx, EXT4FS_OPEN_RW)) {
		return;
	}
	/* e2fsck's order: the superblock and descriptors, the orphan list, the clock, then whether to go on. */
	if (fsck_check_super(ctx) || fsck_release_orphans(ctx) || fsck_check_super_times(ctx) ||
	    fsck_backup_journal_map(ctx)) {
		if (ctx->aborted)
			preen_halt(ctx);
		return;
	}
	/* As e2fsck: only the journal, unless -f or a repair asks for the whole check. */
	if (ctx->journal_only && !ctx->force && !ctx->problems_fixed)
		return;
	const char *why = check_reason(ctx);
	if (!ctx->force && !why) {
		report_clean(ctx);
		return;
	}
	if (why && !ctx->force)
		printf("%s%s, check forced.\n", ctx->device, why);
	if (fsck_check_resize_inode(ctx)) {
		if (ctx->aborted)
			preen_halt(ctx);
		return;
	}
	/*
	 * Restarts end: each one needs an inode newly cleared for good (checked in
	 * restart_check(); pass 1 stops the check should a cleared inode come
	 * back) or a map block moved off the metadata (checked in pass 2), so
	 * there are at most as many restarts as inodes and map blocks, and in
	 * practice one or two: e2fsck has no limit either.
	 */
	for (;;) {
		if (fsck_init_maps(ctx))
			return;
		/* e2fsck lists linear directories to index in pass 1 unless -n; e4fsck does it in pass 2. */
		ctx->rehash_on = !ctx->read_only && ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX);
		rc = run_passes(ctx);
		if (rc != RUN_RESTART)
			break;
		if (restart_check(ctx)) {
			if (ctx->aborted)
				preen_halt(ctx);
			return;
		}
	}
	if (!rc && !ctx->aborted)
		fsck_check_orphan_file(ctx);
	if (!rc && !ctx->aborted && !ctx->fatal && fsck_recreate_journal(ctx))
		return;
	if (!rc && !ctx->aborted && !ctx->fatal && discard_free_blocks(ctx))
		return;
	if (ctx->fatal) {
		fatal_end(ctx);
		return;
	}
	if (ctx->aborted) {
		preen_halt(ctx);
		return;
	}
	if (!ctx->read_only && !ctx->aborted && !(ctx->exit_status & FSCK_ERROR) && mark_checked(ctx))
		return;
	if (ctx->fs_changed)
		ctx->exit_status |= FSCK_NONDESTRUCT;
	report_summary(ctx);
}
