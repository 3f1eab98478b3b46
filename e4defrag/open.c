/*
 * open.c - what defrag4fs checks before it touches a file system.
 *
 * A run that moves files refuses, before it opens anything for writing:
 *  - a device or image the running system uses (mounted, directly or
 *    through a loop device; swap): the kernel caches the very blocks and
 *    maps being moved;
 *  - a file system whose journal holds transactions to replay: the maps
 *    on disk are not the current ones;
 *  - a file system marked as having errors: moving blocks on top of a
 *    damaged map spreads the damage.
 * The last two say to run e4fsck first.  -n applies the same rules, since
 * it predicts a run.  -c only reads and so goes on, with a warning that the
 * figures may be stale or wrong.
 */
#include "config.h"
#include <stdarg.h>
#include <string.h>
#include "defrag4fs.h"
#include "ext4fs/mountcheck.h"
#include "ext4fs/super.h"
#include "support/comerr.h"
#include "support/fsopen.h"

void df_error(const struct df_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sup_vcom_err(DF_PROG, err, ctx->fs, fmt, ap);
	va_end(ap);
}

int df_check_not_in_use(struct df_ctx *ctx)
{
	char via[300];
	unsigned flags;

	/* A path that cannot be examined is reported by the open that follows. */
	if (ext4fs_check_mount_via(ctx->device, &flags, via, sizeof(via)) < 0 || !EXT4FS_MOUNT_IN_USE(flags))
		return 0;
	if (ctx->report) {
		fprintf(stderr, "%s: warning: %s is %s; the figures are what the disk holds now, which the "
			"kernel may not have written out yet\n", DF_PROG, ctx->device,
			(flags & EXT4FS_MOUNT_MOUNTED) ? "mounted" : "in use");
		return 0;
	}
	fprintf(stderr, "%s: %s is %s%s%s%s; defrag4fs works only on a file system nobody uses: "
		"unmount it first\n", DF_PROG, ctx->device,
		(flags & EXT4FS_MOUNT_MOUNTED) ? "mounted" :
		(flags & EXT4FS_MOUNT_SWAP) ? "in use as swap" : "in use by the system",
		(flags & EXT4FS_MOUNT_LOOP) ? " (through " : "", (flags & EXT4FS_MOUNT_LOOP) ? via : "",
		(flags & EXT4FS_MOUNT_LOOP) ? ")" : "");
	return DF_EXIT_ERROR;
}

int df_open_readonly(struct df_ctx *ctx)
{
	struct ext4fs_open_opts opts = { .flags = 0 };
	char msg[512];
	int err;

	err = sup_fs_open(ctx->device, &opts, NULL, &ctx->fs, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "%s: %s while trying to open %s\n", DF_PROG, msg, ctx->device);
		ctx->fs = NULL;
		return DF_EXIT_ERROR;
	}
	return 0;
}

int df_check_state(struct df_ctx *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	const char *what = NULL;

	if (ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_RECOVER))
		what = "needs journal recovery";
	else if (sb->s_state & EXT4FS_STATE_ERROR)
		what = "is marked as having errors";
	if (!what)
		return 0;
	if (ctx->report) {
		fprintf(stderr, "%s: warning: %s %s; the figures may not be right until e4fsck has run\n",
			DF_PROG, ctx->device, what);
		return 0;
	}
	fprintf(stderr, "%s: %s %s: run e4fsck on it first\n", DF_PROG, ctx->device, what);
	return DF_EXIT_ERROR;
}
