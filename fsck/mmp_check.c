/*
 * mmp_check.c - the MMP block, looked at before the check claims the file
 * system: what e2fsck's e2fsck_check_mmp() reports and repairs, in its
 * words.  The claim itself is the library's writable open (mmp.h).
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/mmp.h"
#include "ext4fs/super.h"
#include "support/fsopen.h"
#include "context.h"
#include "mmp_check.h"
#include "problem.h"
#include "problems.h"
#include "report.h"

/* e2fsck warns before a wait longer than this many seconds. */
#define MMP_WAIT_WARN (EXT4FS_MMP_MIN_CHECK_INTERVAL * 4)

/* e2fsck's dump of the block, on stdout, after a refusal. */
static void dump_block(const struct ext4fs_mmp *m)
{
	time_t t = (time_t)m->time;

	printf("MMP_block:\n");
	printf("    mmp_magic: 0x%x\n", m->magic);
	printf("    mmp_check_interval: %d\n", m->check_interval);
	printf("    mmp_sequence: %08x\n", m->seq);
	printf("    mmp_update_date: %s", ctime(&t));
	printf("    mmp_update_time: %lld\n", (long long)m->time);
	printf("    mmp_node_name: %s\n", m->nodename);
	printf("    mmp_device_name: %s\n", m->bdevname);
}

/* Stop as e2fsck's fatal_error() does here: the closing lines, exit 8 with errors left. */
static int stop(struct e4fsck *ctx)
{
	ctx->exit_status |= FSCK_ERROR | FSCK_UNCORRECTED;
	report_abort(ctx);
	return -1;
}

/*
 * Repair through a writable handle of its own that does not claim the
 * block (it cannot while the block is bad): a fresh record, or (clear_blk)
 * no MMP block in the primary superblock, as e2fsck writes it.
 */
static int repair(struct e4fsck *ctx, int clear_blk)
{
	struct ext4fs_open_opts opts = ctx->open_opts;
	struct ext4fs_fs *fs = NULL;
	char msg[512];
	int err;

	opts.flags |= EXT4FS_OPEN_RW;
	opts.mmp_skip = 1;
	/* Through the undo file, when there is one, as every writable handle of the check. */
	err = sup_fs_open(ctx->path, &opts, ctx->undo_path, &fs, msg, sizeof(msg));
	if (err) {
		fsck_fatal(ctx, "%s while opening %s to repair the MMP block", msg, ctx->path);
		return -1;
	}
	ext4fs_set_time(fs, ctx->now, 0);
	if (clear_blk) {
		struct ext4fs_super sb = *ext4fs_sb(fs);
		sb.s_mmp_block = 0;
		ext4fs_set_primary_only(fs, 1);
		err = ext4fs_super_set(fs, &sb);
	} else {
		err = ext4fs_mmp_reset(fs);
	}
	if (err) {
		fsck_fatal(ctx, "%s while repairing the MMP block of %s: %s", ext4fs_strerror(err), ctx->device,
			   ext4fs_errmsg(fs));
		ext4fs_close(fs);
		return -1;
	}
	err = ext4fs_close_flush(fs);
	if (err) {
		fsck_fatal(ctx, "%s while writing %s", ext4fs_strerror(err), ctx->device);
		return -1;
	}
	/* As e2fsck: what was said so far comes before whatever the reopen says. */
	fflush(stdout);
	return 0;
}

int fsck_check_mmp(struct e4fsck *ctx)
{
	struct ext4fs_mmp m;
	uint32_t code;
	int err;

	if (!ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_MMP))
		return 0;
	uint64_t blk = ext4fs_sb(ctx->fs)->s_mmp_block;
	/* Not e2fsck's way, which writes a fresh record over whatever metadata is there (DESIGN.md). */
	if (ext4fs_mmp_block_in_range(ctx->fs, blk) && ext4fs_mmp_block_is_metadata(ctx->fs, blk))
		err = EXT4FS_E_MMP_BAD_BLOCK;
	else
		err = ext4fs_mmp_read(ctx->fs, &m);
	if (!err) {
		unsigned interval = ext4fs_mmp_check_interval(ctx->fs, &m);
		unsigned wait = interval * 2 + 1;

		if (m.seq == EXT4FS_MMP_SEQ_FSCK)
			err = EXT4FS_E_MMP_FSCK_ON;
		else if (m.seq > EXT4FS_MMP_SEQ_MAX && m.seq != EXT4FS_MMP_SEQ_CLEAN)
			err = EXT4FS_E_MMP_UNKNOWN_SEQ;
		else if (ctx->verbose || wait > MMP_WAIT_WARN)
			/* e2fsck's words: it waits that long twice (the block's owner, then its own claim). */
			printf("MMP interval is %u seconds and total wait time is %u seconds. Please wait...\n",
			       interval, wait * 2);
	}
	switch (err) {
	case 0:
		return 0;
	case EXT4FS_E_MMP_FSCK_ON:
	case EXT4FS_E_MMP_UNKNOWN_SEQ:
		fprintf(stderr, "%s: %s while checking MMP block\n", ctx->prog, ext4fs_strerror(err));
		printf("MMP check failed: If you are sure the filesystem is not in use on any node, run:\n"
		       "'tune2fs -f -E clear_mmp %s'\n", ctx->path);
		dump_block(&m);
		return stop(ctx);
	case EXT4FS_E_MMP_BAD_BLOCK:
		code = PR_0_MMP_INVALID_BLK;
		break;
	case EXT4FS_E_MMP_MAGIC:
		code = PR_0_MMP_INVALID_MAGIC;
		break;
	case EXT4FS_E_MMP_CSUM:
		code = PR_0_MMP_CSUM_INVALID;
		break;
	default:
		fprintf(stderr, "%s: %s while checking MMP block\n", ctx->prog, ext4fs_errmsg(ctx->fs));
		return stop(ctx);
	}
	if (!fix_problem(ctx, code, NULL))
		return stop(ctx);
	return repair(ctx, code == PR_0_MMP_INVALID_BLK);
}

int fsck_mmp_open_failed(struct e4fsck *ctx, int err)
{
	if (err != EXT4FS_E_MMP_BAD_BLOCK && err != EXT4FS_E_MMP_MAGIC && err != EXT4FS_E_MMP_CSUM &&
	    err != EXT4FS_E_MMP_FSCK_ON && err != EXT4FS_E_MMP_UNKNOWN_SEQ && err != EXT4FS_E_MMP_FAILED)
		return 0;
	fprintf(stderr, "%s: %s while trying to open %s\n", ctx->prog, ext4fs_strerror(err), ctx->path);
	/* e2fsck's answer to a failed open it has no better words for: the superblock advice, on stdout. */
	if (ctx->mode == MODE_PREEN)
		printf("%s: ", ctx->device);
	fsck_super_advice(stdout);
	fflush(stdout);
	return 1;
}
