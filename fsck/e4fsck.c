/*
 * e4fsck.c - check and repair an ext2/3/4 file system: options, opening,
 * the order of the passes, the summary and the exit status, following
 * e2fsck.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/io.h"
#include "ext4fs/journal.h"
#include "ext4fs/mountcheck.h"
#include "ext4fs/super.h"
#include "e4fsck.h"
#include "journal_check.h"
#include "guard.h"
#include "problem.h"
#include "progress.h"
#include "report.h"
#include "support/version.h"

static const char usage_text[] =
	"Usage: %s [-panyfktvDV] [-b superblock] [-B blocksize] [-C fd] [-j threads]\n"
	"\t\t[-E extended-options] [--json FILE] device\n"
	"\n"
	"Emergency help:\n"
	" -p                   Automatic repair (no questions)\n"
	" -n                   Make no changes to the filesystem\n"
	" -y                   Assume \"yes\" to all questions\n"
	" -f                   Force checking even if filesystem is marked clean\n"
	" -v                   Be verbose\n"
	" -t                   Print timing (twice: per pass)\n"
	" -b superblock        Use alternative superblock\n"
	" -B blocksize         Force blocksize when looking for superblock\n"
	" -C fd                Progress to file descriptor fd (0: a bar on the terminal)\n"
	" -j threads           Threads for pass 1 (default: the number of CPUs)\n"
	" -D                   Optimize directories\n"
	" --json FILE          Write the problems found and the timings as JSON\n";

static void usage(const char *prog, FILE *to)
{
	fprintf(to, usage_text, prog);
}

/*
 * -E's comma-separated options, with e2fsck's names.  0, or the exit
 * status e2fsck gives an unknown one (1, after the list of those known).
 */
static int parse_extended(struct e4fsck *ctx, const char *arg)
{
	static const struct { const char *name; size_t off; int value; } known[] = {
		{ "journal_only", offsetof(struct e4fsck, journal_only), 1 },
		{ "discard", offsetof(struct e4fsck, discard), 1 },
		{ "nodiscard", offsetof(struct e4fsck, discard), 0 },
		{ "optimize_extents", offsetof(struct e4fsck, no_optimize_extents), 0 },
		{ "no_optimize_extents", offsetof(struct e4fsck, no_optimize_extents), 1 },
		{ "fixes_only", offsetof(struct e4fsck, fixes_only), 1 },
	};
	char *copy = strdup(arg), *save = NULL;
	int bad = 0;

	if (!copy)
		return FSCK_ERROR;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(known) / sizeof(known[0]) && strcmp(tok, known[i].name); i++)
			;
		if (i < sizeof(known) / sizeof(known[0])) {
			*(int *)((char *)ctx + known[i].off) = known[i].value;
			continue;
		}
		fprintf(stderr, "Unknown extended option: %s\n", tok);
		bad = 1;
	}
	free(copy);
	if (!bad)
		return 0;
	fputs("\nExtended options are separated by commas, and may take an argument which\n"
	      "is set off by an equals ('=') sign.  Valid extended options are:\n\n", stderr);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		fprintf(stderr, "\t%s\n", known[i].name);
	fputc('\n', stderr);
	return 1;
}

void fsck_fatal(struct e4fsck *ctx, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", ctx->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ctx->exit_status |= FSCK_ERROR;
}

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -1;
	*out = v;
	return 0;
}

enum { OPT_JSON = 1000, OPT_HELP };

/* Options into ctx; returns 0, or an exit status (usage / version). */
static int parse_options(struct e4fsck *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c, modes = 0;
	uint64_t v;

	while ((c = getopt_long(argc, argv, "panyfktvDVb:B:C:j:E:", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case 'a':
			if (ctx->mode != MODE_PREEN)
				modes++;
			ctx->mode = MODE_PREEN;
			break;
		case 'n':
			if (ctx->mode != MODE_NO)
				modes++;
			ctx->mode = MODE_NO;
			break;
		case 'y':
			if (ctx->mode != MODE_YES)
				modes++;
			ctx->mode = MODE_YES;
			break;
		case 'f': ctx->force = 1; break;
		case 'k': break;              /* keep the bad-blocks list: there is none to touch */
		case 't': ctx->timing++; break;
		case 'v': ctx->verbose = 1; break;
		case 'D': ctx->optimize_dirs = 1; break;
		case 'V':
			sup_version_full(stderr, ctx->prog);
			return FSCK_OK + 256;   /* "exit 0 now" */
		case 'b':
			if (parse_uint(optarg, UINT64_MAX, &v) || v == 0) {
				fprintf(stderr, "%s: Invalid superblock parameter: %s\n", ctx->prog, optarg);
				return FSCK_USAGE;
			}
			ctx->superblock = v;
			break;
		case 'B':
			if (parse_uint(optarg, 65536, &v) || (v != 1024 && v != 2048 && v != 4096 &&
							      v != 8192 && v != 16384 && v != 32768 &&
							      v != 65536)) {
				fprintf(stderr, "%s: Invalid blocksize parameter: %s\n", ctx->prog, optarg);
				return FSCK_USAGE;
			}
			ctx->blocksize = (unsigned)v;
			break;
		case 'C':
			/* "-C -fd", which fsck(8) passes to checkers that wait for SIGUSR1. */
			ctx->progress_held = optarg[0] == '-';
			if (parse_uint(optarg + ctx->progress_held, INT32_MAX, &v)) {
				fprintf(stderr, "%s: Invalid completion fd: %s\n", ctx->prog, optarg);
				return FSCK_USAGE;
			}
			ctx->progress_fd = (int)v;
			break;
		case 'j':
			if (parse_uint(optarg, 1024, &v) || v == 0) {
				fprintf(stderr, "%s: Invalid number of threads: %s\n", ctx->prog, optarg);
				return FSCK_USAGE;
			}
			ctx->threads = (int)v;
			break;
		case 'E': {
			int rc = parse_extended(ctx, optarg);
			if (rc)
				return rc;
			break;
		}
		case OPT_JSON: ctx->json_path = optarg; break;
		case OPT_HELP:
			usage(ctx->prog, stdout);
			return FSCK_OK + 256;
		default:
			usage(ctx->prog, stderr);
			return FSCK_USAGE;
		}
	}
	if (modes > 1) {
		fprintf(stderr, "%s: Only one of the options -p/-a, -n or -y may be specified.\n", ctx->prog);
		return FSCK_USAGE;
	}
	if (ctx->mode == MODE_NO && ctx->optimize_dirs) {
		fprintf(stderr, "%s: The -n and -D options are incompatible.\n", ctx->prog);
		return FSCK_ERROR;
	}
	if (ctx->optimize_dirs && ctx->fixes_only) {
		fputs("The -D and -E fixes_only options are incompatible.\n", stderr);
		return FSCK_ERROR;
	}
	if (ctx->fixes_only)
		ctx->no_optimize_extents = 1;
	if (optind != argc - 1) {
		usage(ctx->prog, stderr);
		return FSCK_USAGE;
	}
	ctx->device = ctx->path = argv[optind];
	if (ctx->mode == MODE_ASK && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "%s: need terminal for interactive repairs\n", ctx->prog);
		return FSCK_ERROR;
	}
	return 0;
}

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
 * Open the file system with EXT4FS_OPEN_IGNORE_CSUM and flags (0 for a
 * read-only handle, EXT4FS_OPEN_RW, EXT4FS_OPEN_RECOVERY).
 */
static int open_fs(struct e4fsck *ctx, unsigned flags)
{
	struct ext4fs_open_opts opts = { 0 };
	char msg[512];
	int err;

	opts.flags = EXT4FS_OPEN_IGNORE_CSUM | flags;
	opts.superblock = ctx->superblock;
	opts.block_size = ctx->blocksize;
	ctx->open_opts = opts;
	err = ext4fs_open(ctx->path, &opts, &ctx->fs, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "%s: %s while trying to open %s\n", ctx->prog, msg, ctx->path);
		if (err == EXT4FS_E_BAD_MAGIC || err == EXT4FS_E_CORRUPT_SUPER)
			fsck_super_advice(stderr);
		ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	ctx->geo = ext4fs_geom(ctx->fs);
	ext4fs_set_time(ctx->fs, ctx->now, 0);
	/* On a backup the library rewrites the primary at flush; e2fsck counts that as a change. */
	if (ctx->superblock && (flags & EXT4FS_OPEN_RW))
		ctx->fs_changed = 1;
	/* Like e2fsck, messages name the file system by its label when it has one. */
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	if (sb->s_volume_name[0]) {
		memcpy(ctx->label, sb->s_volume_name, sizeof(sb->s_volume_name));
		ctx->label[sizeof(sb->s_volume_name)] = '\0';
		ctx->device = ctx->label;
	}
	return 0;
}

int fsck_reopen(struct e4fsck *ctx, unsigned flags)
{
	int err = ext4fs_close_flush(ctx->fs);

	ctx->fs = NULL;
	if (err) {
		fsck_fatal(ctx, "%s while writing %s", ext4fs_strerror(err), ctx->device);
		return -1;
	}
	return open_fs(ctx, flags);
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
	if (open_fs(ctx, EXT4FS_OPEN_RECOVERY))
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
	return open_fs(ctx, EXT4FS_OPEN_RW);
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

/* The maps pass 1 fills, sized by the file system; pages of one group each. */
static int init_maps(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	unsigned ishift = 6, bshift = 6;

	while ((1U << ishift) < g->inodes_per_group && ishift < 20)
		ishift++;
	while ((1U << bshift) < g->blocks_per_group && bshift < 20)
		bshift++;
	uint64_t ilimit = (uint64_t)g->inodes_count + 1;
	if (bitmap_paged_init(&ctx->inode_used, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->inode_dir, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->inode_reg, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->inode_bad, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->block_found, g->blocks_count, bshift) ||
	    bitmap_paged_init(&ctx->block_dup, g->blocks_count, bshift) ||
	    counter_paged_init(&ctx->links_disk, ilimit, ishift) ||
	    counter_paged_init(&ctx->links_seen, ilimit, ishift)) {
		fsck_fatal(ctx, "out of memory for the check's maps");
		return -1;
	}
	return 0;
}

/*
 * What one run of the passes found: the maps, the lists and the counts.
 * Freed at the end, and before a restart, which starts from nothing but
 * the extent trees pass 1 was told to rebuild: as in e2fsck, a run that
 * restarts before pass 1E leaves them to the next run's pass 1E.
 */
static void free_run_state(struct e4fsck *ctx)
{
	bitmap_paged_free(&ctx->inode_used);
	bitmap_paged_free(&ctx->inode_dir);
	bitmap_paged_free(&ctx->inode_reg);
	bitmap_paged_free(&ctx->inode_bad);
	bitmap_paged_free(&ctx->block_found);
	bitmap_paged_free(&ctx->block_dup);
	counter_paged_free(&ctx->links_disk);
	counter_paged_free(&ctx->links_seen);
	free(ctx->dirs);
	ctx->dirs = NULL;
	ctx->ndirs = ctx->capdirs = 0;
	free(ctx->dir_blocks);
	ctx->dir_blocks = NULL;
	ctx->ndir_blocks = ctx->capdir_blocks = 0;
	free(ctx->rehash);
	ctx->rehash = NULL;
	ctx->nrehash = ctx->caprehash = 0;
	xattr_table_free(&ctx->xattrs);
	xattr_table_free(&ctx->ea_inode_refs);
	ctx->files_fragmented = 0;
	memset(&ctx->stats, 0, sizeof(ctx->stats));
	ctx->inodes_in_use = ctx->blocks_in_use = 0;
	ctx->lost_found = 0;
	ctx->lost_found_bad = 0;
	ctx->restart = 0;
	ctx->restart_later = 0;
	ctx->ncollisions = 0;
	range_set_free(&ctx->fs_meta);
}

static void free_ctx(struct e4fsck *ctx)
{
	free_run_state(ctx);
	free(ctx->restart_cleared);
	free(ctx->collisions);
	free(ctx->rebuild);
	for (size_t i = 0; i < ctx->nlog; i++)
		free(ctx->log[i].message);
	free(ctx->log);
	if (ctx->fs)
		ext4fs_close(ctx->fs);
	ctx->fs = NULL;
}

struct dir_info *fsck_dir_info(struct e4fsck *ctx, uint32_t ino)
{
	size_t lo = 0, hi = ctx->ndirs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->dirs[mid].ino == ino)
			return &ctx->dirs[mid];
		if (ctx->dirs[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int fsck_add_dir_block(struct e4fsck *ctx, uint32_t ino, uint32_t lblk, uint64_t pblk)
{
	if (ctx->ndir_blocks == ctx->capdir_blocks) {
		size_t cap = ctx->capdir_blocks ? ctx->capdir_blocks * 2 : 1024;
		struct dir_block *grown = realloc(ctx->dir_blocks, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		ctx->dir_blocks = grown;
		ctx->capdir_blocks = cap;
	}
	ctx->dir_blocks[ctx->ndir_blocks++] = (struct dir_block){ ino, lblk, pblk };
	return 0;
}

size_t fsck_memory(const struct e4fsck *ctx)
{
	return bitmap_paged_bytes(&ctx->inode_used) + bitmap_paged_bytes(&ctx->inode_dir) +
	       bitmap_paged_bytes(&ctx->inode_reg) + bitmap_paged_bytes(&ctx->inode_bad) +
	       bitmap_paged_bytes(&ctx->block_found) + bitmap_paged_bytes(&ctx->block_dup) +
	       counter_paged_bytes(&ctx->links_disk) + counter_paged_bytes(&ctx->links_seen) +
	       ctx->capdirs * sizeof(*ctx->dirs) + ctx->capdir_blocks * sizeof(*ctx->dir_blocks);
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
	free_run_state(ctx);
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
	if (open_fs(ctx, EXT4FS_OPEN_RW))
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

int main(int argc, char **argv)
{
	struct e4fsck ctx;
	const char *slash;
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.progress_fd = -1;
	slash = strrchr(argv[0], '/');
	ctx.prog = slash ? slash + 1 : argv[0];
	ctx.now = (int64_t)time(NULL);
	ctx.mode = MODE_ASK;
	setvbuf(stdout, NULL, _IOLBF, 0);

	rc = parse_options(&ctx, argc, argv);
	if (rc)
		return rc >= 256 ? rc - 256 : rc;
	if (progress_init(&ctx))
		return ctx.exit_status;
	if (ctx.mode != MODE_PREEN)
		sup_version_banner(stderr, ctx.prog);
	timing_begin(&ctx);
	/*
	 * A first, read-only look; then, to repair, a writable handle, or one
	 * for recovery when the journal may need replaying (a writable open is
	 * refused then).  The journal step comes first, as in e2fsck, and again
	 * after a replay.
	 */
	ctx.read_only = ctx.mode == MODE_NO;
	if (check_mounted(&ctx) || fsck_choose_super(&ctx) || open_fs(&ctx, 0) || refuse_unchecked(&ctx))
		goto out;
	if (!ctx.read_only &&
	    fsck_reopen(&ctx, ext4fs_has_incompat(ctx.fs, EXT4FS_FEATURE_INCOMPAT_RECOVER) ? EXT4FS_OPEN_RECOVERY
											  : EXT4FS_OPEN_RW))
		goto out;
	int changed_before = ctx.fs_changed;
	if (fsck_check_journal(&ctx)) {
		if (ctx.aborted)
			preen_halt(&ctx);
		goto out;
	}
	if (ext4fs_has_incompat(ctx.fs, EXT4FS_FEATURE_INCOMPAT_RECOVER)) {
		if (ctx.read_only)
			printf("Warning: skipping journal recovery because doing a read-only filesystem check.\n");
		else if (recover_journal(&ctx))
			goto out;
		/* e2fsck starts again after a replay: what its journal step changed is not counted. */
		ctx.fs_changed = changed_before;
		if (!ctx.read_only && fsck_check_journal(&ctx)) {
			if (ctx.aborted)
				preen_halt(&ctx);
			goto out;
		}
	} else if (!ctx.read_only && !(ext4fs_fs_flags(ctx.fs) & EXT4FS_OPEN_RW) && fsck_reopen(&ctx, EXT4FS_OPEN_RW)) {
		goto out;
	}
	/* e2fsck's order: the superblock and descriptors, the orphan list, the clock, then whether to go on. */
	if (fsck_check_super(&ctx) || fsck_release_orphans(&ctx) || fsck_check_super_times(&ctx) ||
	    fsck_backup_journal_map(&ctx)) {
		if (ctx.aborted)
			preen_halt(&ctx);
		goto out;
	}
	/* As e2fsck: only the journal, unless -f or a repair asks for the whole check. */
	if (ctx.journal_only && !ctx.force && !ctx.problems_fixed)
		goto out;
	const char *why = check_reason(&ctx);
	if (!ctx.force && !why) {
		report_clean(&ctx);
		goto out;
	}
	if (why && !ctx.force)
		printf("%s%s, check forced.\n", ctx.device, why);
	if (fsck_check_resize_inode(&ctx)) {
		if (ctx.aborted)
			preen_halt(&ctx);
		goto out;
	}
	/*
	 * Restarts end: each one needs an inode newly cleared for good (checked in
	 * restart_check(); pass 1 stops the check should a cleared inode come
	 * back) or a map block moved off the metadata (checked in pass 2), so
	 * there are at most as many restarts as inodes and map blocks, and in
	 * practice one or two: e2fsck has no limit either.
	 */
	for (;;) {
		if (init_maps(&ctx))
			goto out;
		/* e2fsck lists linear directories to index in pass 1 unless -n; e4fsck does it in pass 2. */
		ctx.rehash_on = !ctx.read_only && ext4fs_has_compat(ctx.fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX);
		rc = run_passes(&ctx);
		if (rc != RUN_RESTART)
			break;
		if (restart_check(&ctx)) {
			if (ctx.aborted)
				preen_halt(&ctx);
			goto out;
		}
	}
	if (!rc && !ctx.aborted)
		fsck_check_orphan_file(&ctx);
	if (!rc && !ctx.aborted && !ctx.fatal && fsck_recreate_journal(&ctx))
		goto out;
	if (!rc && !ctx.aborted && !ctx.fatal && discard_free_blocks(&ctx))
		goto out;
	if (ctx.fatal) {
		fatal_end(&ctx);
		goto out;
	}
	if (ctx.aborted) {
		preen_halt(&ctx);
		goto out;
	}
	if (!ctx.read_only && !ctx.aborted && !(ctx.exit_status & FSCK_ERROR) && mark_checked(&ctx))
		goto out;
	if (ctx.fs_changed)
		ctx.exit_status |= FSCK_NONDESTRUCT;
	report_summary(&ctx);
out:
	progress_free(&ctx);
	timing_end(&ctx);
	if (ctx.json_path && report_json(&ctx))
		ctx.exit_status |= FSCK_ERROR;
	free_ctx(&ctx);
	return ctx.exit_status;
}
