/*
 * check.c - the check itself, in e2fsck's order: the mount check, the
 * superblock, the journal step and its replay, the superblock and orphan
 * steps, whether to go on without -f, the passes (again after a restart),
 * the orphan file, a new journal, discarding, marking the file system
 * checked and the summary.  main() (e4fsck.c) reads the options and calls
 * fsck_check().
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/inode.h"
#include "ext4fs/errors.h"
#include "ext4fs/io.h"
#include "ext4fs/journal.h"
#include "ext4fs/mountcheck.h"
#include "ext4fs/super.h"
#include "badblocks.h"
#include "check.h"
#include "context.h"
#include "guard.h"
#include "journal_check.h"
#include "mmp_check.h"
#include "passes.h"
#include "relocate.h"
#include "problem.h"
#include "problems.h"
#include "progress.h"
#include "report.h"

/*
 * Why a file system marked clean is checked all the same, in e2fsck's
 * order and words (check_if_skip()); the number, when there is one, goes
 * between before and after.
 */
static int report_clean(struct e4fsck *ctx);
static int fsck_bad_blocks_list(struct e4fsck *ctx);

struct reason {
	const char *before;
	int has_num;
	uint64_t num;
	const char *after;
};

#define DAY_SECONDS 86400
/* e2fsck's default allowance for a clock a little behind the last check (accept_time_fudge). */
#define TIME_FUDGE DAY_SECONDS

/* Whether the file system may be skipped without -f: 0, or 1 with *r saying why not. */
static int check_reason(const struct e4fsck *ctx, struct reason *r)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	int64_t now = ctx->now, lastcheck = sb->s_lastcheck;

	memset(r, 0, sizeof(*r));
	if (lastcheck > now)
		lastcheck -= TIME_FUDGE;
	/* e2fsck counts a question answered no before this point as errors (ext2fs_unmark_valid()). */
	if ((sb->s_state & EXT4FS_STATE_ERROR) || ctx->fs_invalid || (ctx->exit_status & FSCK_UNCORRECTED))
		r->before = " contains a file system with errors";
	else if (!(sb->s_state & EXT4FS_STATE_VALID))
		r->before = " was not cleanly unmounted";
	else if (fsck_backup_super_differs(ctx))
		r->before = " primary superblock features different from backup";
	else if (sb->s_max_mnt_count > 0 && sb->s_mnt_count >= (uint16_t)sb->s_max_mnt_count)
		*r = (struct reason){ " has been mounted ", 1, sb->s_mnt_count, " times without being checked" };
	else if (sb->s_checkinterval && now < lastcheck)
		r->before = " has filesystem last checked time in the future";
	else if (sb->s_checkinterval && now - lastcheck >= (int64_t)sb->s_checkinterval)
		*r = (struct reason){ " has gone ", 1, (uint64_t)(now - (int64_t)sb->s_lastcheck) / DAY_SECONDS,
				      " days without being checked" };
	return r->before != NULL;
}

/* "<device> <reason>, check forced." */
static void say_forced(const struct e4fsck *ctx, const struct reason *r)
{
	printf("%s%s", ctx->device, r->before);
	if (r->has_num)
		printf("%" PRIu64 "%s", r->num, r->after);
	printf(", check forced.\n");
}

/*
 * Whether the check can be skipped: no -f, no bad-block scan or list (e2fsck
 * always checks after those), no journal to replay, nothing that makes it
 * due.  The caller prints the reason when there is one.
 */
static int may_skip(const struct e4fsck *ctx, struct reason *r)
{
	if (check_reason(ctx, r))
		return 0;
	return !ctx->force && !ctx->check_blocks && !ctx->badblocks_file &&
	       !ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_RECOVER);
}

/* Refuse a device that is a directory, with e2fsck's words (it fails the same way opening it). */
static int refuse_directory(struct e4fsck *ctx)
{
	struct stat st;

	if (stat(ctx->path, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	fprintf(stderr, "%s: %s while trying to open %s\n", ctx->prog, strerror(EISDIR), ctx->path);
	fflush(stderr);
	fsck_super_advice(stdout);
	ctx->exit_status |= FSCK_ERROR;
	return -1;
}

/* -- The bad-block list: -c, -l, -L ------------------------------------------ */

struct block_list {
	uint64_t *v;
	size_t n, cap;
};

static int list_add(struct block_list *l, uint64_t b)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		uint64_t *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = b;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort and drop repeats: lists are compared as sets. */
static void list_settle(struct block_list *l)
{
	size_t k = 0;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_u64);
	for (size_t i = 0; i < l->n; i++)
		if (!k || l->v[k - 1] != l->v[i])
			l->v[k++] = l->v[i];
	l->n = k;
}

static int collect_bad(const struct ext4fs_block_visit *v, void *arg)
{
	struct block_list *l = arg;

	for (uint64_t k = 0; k < v->count; k++)
		if (list_add(l, v->pblk + k))
			return -1;
	return 0;
}

/* The blocks the bad-block inode (inode 1) lists now. */
static int read_bad_inode(struct e4fsck *ctx, struct block_list *l)
{
	struct ext4fs_inode in;

	if (ext4fs_inode_read(ctx->fs, EXT4FS_BAD_INO, &in)) {
		fsck_fatal(ctx, "%s while reading the bad blocks inode", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	if (!in.i_blocks_lo && !ext4fs_inode_size(&in))
		return 0;
	if (ext4fs_block_iterate(ctx->fs, EXT4FS_BAD_INO, &in, EXT4FS_ITER_DATA_ONLY, collect_bad, l)) {
		fsck_fatal(ctx, "%s while reading the bad blocks inode", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

/*
 * The list as e2fsprogs reads it: a block number at the start of each line
 * (other lines are skipped), blocks outside the file system ignored with
 * e2fsck's words.  Cannot fail but for memory.
 */
static int parse_bad_blocks(struct e4fsck *ctx, FILE *f, struct block_list *l)
{
	char line[256];
	unsigned long long b;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu", &b) != 1)
			continue;
		if ((ctx->geo->first_data_block && b < ctx->geo->first_data_block) || b >= ctx->geo->blocks_count) {
			printf("Bad block %llu out of range; ignored.\n", b);
			continue;
		}
		if (list_add(l, b))
			return -1;
	}
	return 0;
}

/*
 * -c: run badblocks over the device as e2fsck runs it (-s for progress
 * unless preening, -n for the read-write test of -cc), reading the list it
 * prints.  0, or -1 when it could not be run or failed.
 */
static int run_badblocks(struct e4fsck *ctx, struct block_list *l)
{
	char bs[16], last[24];
	const char *argv[10];
	int n = 0, fds[2], status = 0;

	snprintf(bs, sizeof(bs), "%u", ctx->geo->block_size);
	snprintf(last, sizeof(last), "%" PRIu64, ctx->geo->blocks_count - 1);
	argv[n++] = "badblocks";
	argv[n++] = "-b";
	argv[n++] = bs;
	argv[n++] = "-X";
	if (ctx->mode != MODE_PREEN)
		argv[n++] = "-s";
	if (ctx->check_blocks > 1)
		argv[n++] = "-n";
	argv[n++] = ctx->path;
	argv[n++] = last;
	argv[n] = NULL;
	fflush(stdout);
	if (pipe(fds))
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	int rc = f ? parse_bad_blocks(ctx, f, l) : -1;
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		rc = -1;
	return rc;
}

/*
 * e2fsck's bad-block list update, after the resize inode and before pass
 * 1: -l adds the file's blocks to the list in the bad-block inode, -L makes
 * them the list, -c adds what badblocks finds (replacing the list unless
 * -k).  First inode 1's pointers outside the file system are cleared,
 * then the list is rewritten (badblocks.c) after e2fsck's "Updating bad
 * block inode.", changed or not: the file system counts as written (exit
 * 0, as e2fsck) and the check goes on, pass 1 checking the new list.  0,
 * or -1 to stop.
 */
static int fsck_bad_blocks_list(struct e4fsck *ctx)
{
	struct block_list now = { 0 }, want = { 0 };
	int replace = ctx->badblocks_file ? ctx->badblocks_replace : !ctx->keep_badblocks;
	int rc = -1;

	if (!ctx->check_blocks && !ctx->badblocks_file)
		return 0;
	if (fsck_bad_list_sanitize(ctx) || read_bad_inode(ctx, &now))
		goto out;
	if (!replace)
		for (size_t i = 0; i < now.n; i++)
			if (list_add(&want, now.v[i]))
				goto nomem;
	if (ctx->badblocks_file) {
		FILE *f = fopen(ctx->badblocks_file, "r");
		if (!f) {
			fprintf(stderr, "read_bad_blocks_file: %s while trying to open %s\n", strerror(errno),
				ctx->badblocks_file);
			ctx->exit_status |= FSCK_ERROR;
			goto out;
		}
		int err = parse_bad_blocks(ctx, f, &want);
		fclose(f);
		if (err)
			goto nomem;
	} else if (run_badblocks(ctx, &want)) {
		fprintf(stderr, "%s: badblocks could not be run or failed (is e2fsprogs' badblocks installed?); "
			"-c needs it\n", ctx->prog);
		ctx->exit_status |= FSCK_ERROR;
		goto out;
	}
	list_settle(&now);
	list_settle(&want);
	printf("%s: Updating bad block inode.\n", ctx->device);
	if (fsck_bad_list_update(ctx, want.v, want.n))
		goto out;
	ctx->fs_modified = 1;
	rc = 0;
	goto out;
nomem:
	fsck_fatal(ctx, "out of memory reading the bad-block list");
out:
	free(now.v);
	free(want.v);
	return rc;
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
 * Whether the library can write this file system: a rehearsal open (which
 * writes nothing) goes through the same feature checks as a writable one.
 * 0, or the error, with the library's words in msg.
 */
static int probe_writable(struct e4fsck *ctx, char *msg, size_t len)
{
	struct ext4fs_open_opts opts = { 0 };
	struct ext4fs_fs *fs = NULL;

	opts.flags = EXT4FS_OPEN_RW | EXT4FS_OPEN_REHEARSE | EXT4FS_OPEN_IGNORE_CSUM | EXT4FS_OPEN_QUOTA_BY_CALLER |
		     EXT4FS_OPEN_CLUSTERS_BY_CALLER;
	opts.superblock = ctx->superblock;
	opts.block_size = ctx->blocksize;
	int err = ext4fs_open(ctx->path, &opts, &fs, msg, len);
	ext4fs_close(fs);
	return err;
}

/*
 * Features e4fsck cannot repair: for a repairing run, whatever the library
 * cannot write (a journal device...).
 * As at boot a nonzero status drops the machine to a shell, a file system
 * that would be skipped anyway is said clean, as e2fsck says it (exit 0);
 * only a check that must run is refused (exit 8).  The quota files are
 * e4fsck's to rewrite (quota.c).  0 to go on, -1 when handled.
 */
static int unchecked_features(struct e4fsck *ctx)
{
	char msg[512] = "";
	struct reason r;
	int refuse = 0;

	if (!ctx->read_only && !ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_RECOVER)) {
		/* Only the features: any other failure is the writable open's to report, in its words. */
		int err = probe_writable(ctx, msg, sizeof(msg));
		refuse = err == EXT4FS_E_UNSUPP_FEATURE || err == EXT4FS_E_RO_UNSUPP_FEATURE;
	}
	if (refuse) {
		if (may_skip(ctx, &r) && !ctx->journal_only) {
			/* Nothing is written: the counts' cosmetic update needs a writable handle. */
			ctx->read_only = 1;
			report_clean(ctx);
			return -1;
		}
		fprintf(stderr, "%s: %s while trying to open %s\n", ctx->prog, msg, ctx->path);
		ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	return 0;
}

/*
 * Replay the journal, then open the file system again: recovery works on a
 * handle of its own and leaves the first one stale.  A fast-commit area
 * holding commits is refused: replaying the main log alone would lose them.
 */
static int uuid_null(const uint8_t u[16])
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

static int recover_journal(struct e4fsck *ctx)
{
	struct ext4fs_journal *j = NULL;
	struct ext4fs_journal_info info;
	int err;

	struct ext4fs_io *ext_io = NULL;

	printf("%s: recovering journal\n", ctx->device);
	ext4fs_close(ctx->fs);
	ctx->fs = NULL;
	if (fsck_open(ctx, EXT4FS_OPEN_RECOVERY))
		return -1;
	/* The journal step found the external journal and left its path in ctx->journal_path. */
	if (ctx->journal_path && !uuid_null(ext4fs_sb(ctx->fs)->s_journal_uuid)) {
		err = ext4fs_io_open_file(ctx->journal_path, EXT4FS_IO_RDWR, 0, &ext_io);
		if (!err)
			err = ext4fs_journal_open_external(ctx->fs, ext_io, &j);
	} else {
		err = ext4fs_journal_open(ctx->fs, &j);
	}
	if (!err)
		err = ext4fs_journal_scan(j, &info);
	if (!err && info.fc_pending) {
		fsck_fatal(ctx, "%s: the journal's fast-commit area holds commits, which e4fsck cannot "
			   "replay yet; run e2fsck", ctx->device);
		ext4fs_journal_close(j);
		ext4fs_io_close(ext_io);
		return -1;
	}
	if (!err)
		err = ext4fs_journal_recover(j, &info);
	if (err == EXT4FS_E_JOURNAL_CSUM) {
		/* As e2fsck: said, the log dropped unreplayed, and the file system no longer called valid. */
		printf("Journal checksum error found in %s\n", ctx->device);
		err = ext4fs_journal_discard(j);
	} else if (!err && info.failed_commit) {
		/* The library has set the error state, as e2fsck's s_errno ends up doing: the check is forced. */
		struct problem_ctx pctx = { .ino = info.failed_commit };
		fix_problem(ctx, PR_0_JNL_TXN_CORRUPT, &pctx);
	}
	ext4fs_journal_close(j);
	ext4fs_io_close(ext_io);
	if (err) {
		fsck_fatal(ctx, "%s while recovering the journal of %s: %s", ext4fs_strerror(err), ctx->device,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ext4fs_close(ctx->fs);
	ctx->fs = NULL;
	return fsck_open(ctx, EXT4FS_OPEN_RW);
}

/* e2fsck's note after "clean" when the next boot (or one of the next five) will check. */
static void say_next_check(const struct e4fsck *ctx, const struct ext4fs_super *sb)
{
	int64_t next = 100000;

	if (sb->s_max_mnt_count > 0) {
		next = (int64_t)sb->s_max_mnt_count - sb->s_mnt_count;
		if (next <= 0)
			next = 1;
	}
	if (sb->s_checkinterval && ctx->now - (int64_t)sb->s_lastcheck >= (int64_t)sb->s_checkinterval)
		next = 1;
	if (next == 1)
		printf(" (check after next mount)");
	else if (next <= 5)
		printf(" (check in %" PRId64 " mounts)", next);
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
	/* Groups count free clusters, the superblock their blocks. */
	free_blocks *= ctx->geo->cluster_ratio;
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	if (!ctx->read_only && free_blocks <= ctx->geo->blocks_count && free_inodes <= sb->s_inodes_count &&
	    (free_blocks != ctx->geo->free_blocks_count || free_inodes != sb->s_free_inodes_count)) {
		struct ext4fs_super fixed = *sb;
		struct problem_ctx pctx = { .ino = sb->s_free_inodes_count, .ino2 = (uint32_t)free_inodes,
					    .blk = ctx->geo->free_blocks_count, .blk2 = free_blocks };
		if (free_inodes != sb->s_free_inodes_count)
			fix_problem(ctx, PR_0_FREE_INODE_COUNT, &pctx);
		if (free_blocks != ctx->geo->free_blocks_count)
			fix_problem(ctx, PR_0_FREE_BLOCK_COUNT, &pctx);
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
	printf("%s: clean, %" PRIu32 "/%" PRIu32 " files, %" PRIu64 "/%" PRIu64 " blocks", ctx->device,
	       sb->s_inodes_count - sb->s_free_inodes_count, sb->s_inodes_count,
	       ctx->geo->blocks_count - ctx->geo->free_blocks_count, ctx->geo->blocks_count);
	say_next_check(ctx, sb);
	printf("\n");
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
			free(guard.groups);
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
/*
 * As e2fsck's last step (e2fsprogs' ext2fs_set_gdt_csum()), with group
 * checksums: a group with every block free is flagged BLOCK_UNINIT (but the
 * last), one with every inode free INODE_UNINIT with its whole table
 * unused, and any other's unused tail starts after its last inode in use as
 * the bitmap now says (a tail left starting later would make the next scan
 * read cleared records and judge their table blocks).  0 or a library error.
 */
static int set_uninit_marks(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	const struct ext4fs_bitmap *ib;
	int err;

	if (!g->has_gdt_csum && !g->has_metadata_csum)
		return 0;
	if ((err = ext4fs_fs_inode_bitmap(ctx->fs, &ib)))
		return err;
	for (uint32_t grp = 0; grp < g->group_count && !err; grp++) {
		struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, grp);
		const struct ext4fs_group_desc was = gd;
		uint64_t first = (uint64_t)grp * g->inodes_per_group + 1;

		if (gd.free_blocks_count == g->blocks_per_group && grp != g->group_count - 1)
			gd.flags |= EXT4FS_BG_BLOCK_UNINIT;
		if (gd.free_inodes_count == g->inodes_per_group) {
			gd.flags |= EXT4FS_BG_INODE_UNINIT;
			gd.itable_unused = g->inodes_per_group;
		} else {
			/* No inode in use at all (the counts disagree): e2fsprogs leaves no tail. */
			uint32_t used = g->inodes_per_group;
			for (uint32_t i = g->inodes_per_group; i > 0; i--)
				if (ext4fs_bitmap_test(ib, first + i - 1) == 1) {
					used = i;
					break;
				}
			gd.flags &= (uint16_t)~EXT4FS_BG_INODE_UNINIT;
			gd.itable_unused = g->inodes_per_group - used;
		}
		if (gd.flags != was.flags || gd.itable_unused != was.itable_unused)
			err = ext4fs_group_desc_set(ctx->fs, grp, &gd);
	}
	return err;
}

static int mark_checked(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);

	sb.s_lastcheck = (uint32_t)ctx->now;
	sb.s_mnt_count = 0;
	if (!(ctx->exit_status & FSCK_UNCORRECTED)) {
		/* As e2fsck: marking valid a file system that was not counts as a change (exit 1). */
		if (!(sb.s_state & EXT4FS_STATE_VALID))
			ctx->exit_status |= FSCK_NONDESTRUCT;
		sb.s_state = (uint16_t)((sb.s_state | EXT4FS_STATE_VALID) & ~EXT4FS_STATE_ERROR);
	}
	int err = ext4fs_super_set(ctx->fs, &sb);
	if (!err)
		err = set_uninit_marks(ctx);
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
	if (ctx->restart == RESTART_CLEARED && ctx->nrestart_cleared <= ctx->restart_mark) {
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
	if (fsck_check_super(ctx) || fsck_check_super_times(ctx) || fsck_backup_journal_map(ctx) ||
	    fsck_move_journal(ctx) || fsck_fix_journal_hint(ctx) || fsck_check_resize_inode(ctx))
		return -1;
	ctx->exit_status &= ~FSCK_UNCORRECTED;   /* as before the first run's passes */
	return 0;
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
 * As e2fsck: unknown features stop the check.  Unknown incompatible bits,
 * or read-only-compatible ones when the check would write, stop it before
 * the file system is opened (exit 8); others after (exit 12, "still has
 * errors").  0 to go on, -1 when refused.
 */
static int unsupported_features(struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	const uint32_t features[3] = { sb->s_feature_compat, sb->s_feature_incompat, sb->s_feature_ro_compat };
	int stop = fsck_say_unsupported(ctx, features);

	if (!stop)
		return 0;
	if (stop == 2) {
		ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	ctx->exit_status |= FSCK_ERROR | FSCK_UNCORRECTED;
	report_abort(ctx);
	return -1;
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
	if (check_mounted(ctx) || refuse_directory(ctx) || fsck_choose_super(ctx) || fsck_open(ctx, 0) ||
	    unsupported_features(ctx) || fsck_check_mmp(ctx) || unchecked_features(ctx))
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
	    fsck_validate_quota_inodes(ctx) || fsck_backup_journal_map(ctx) || fsck_move_journal(ctx) ||
	    fsck_fix_journal_hint(ctx) || fsck_hide_quota_inodes(ctx)) {
		if (ctx->aborted)
			preen_halt(ctx);
		return;
	}
	/* As e2fsck: only the journal, unless -f or a repair asks for the whole check. */
	if (ctx->journal_only && !ctx->force && !ctx->problems_fixed)
		return;
	/* As e2fsck: -f, -c, -l and -L check without a word; otherwise a reason is said, or the check skipped. */
	struct reason why;
	int due = check_reason(ctx, &why);
	if (!ctx->force && !ctx->check_blocks && !ctx->badblocks_file) {
		if (!due) {
			report_clean(ctx);
			return;
		}
		say_forced(ctx, &why);
	}
	if (fsck_check_resize_inode(ctx)) {
		if (ctx->aborted)
			preen_halt(ctx);
		return;
	}
	if (fsck_bad_blocks_list(ctx) || fsck_relocate_bad_blocks_warning(ctx)) {
		if (ctx->aborted)
			preen_halt(ctx);
		return;
	}
	/* As e2fsck ("valid, 'til proven otherwise"): a no to a question asked so far leaves no error behind. */
	ctx->exit_status &= ~FSCK_UNCORRECTED;
	if (fsck_bad_list_read(ctx)) {
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
	/* As e2fsck: a new journal first, then the orphan file (which wants one), then the quotas. */
	if (!rc && !ctx->aborted && !ctx->fatal && fsck_recreate_journal(ctx))
		return;
	if (!rc && !ctx->aborted && !ctx->fatal)
		fsck_check_orphan_file(ctx);
	/* A failure is fatal (ctx->fatal), ended below. */
	if (!rc && !ctx->aborted && !ctx->fatal)
		(void)fsck_check_quota(ctx);
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
	/*
	 * As e2fsck: the exit status says "repaired" when the file system was
	 * written and some question that is a repair was answered yes (though
	 * its repair may have failed, or another write was the one made); errors
	 * left behind make it 4 alone, whatever was repaired.
	 */
	if ((ctx->fs_changed || ctx->fs_modified) && ctx->repairs_answered && !(ctx->exit_status & FSCK_UNCORRECTED))
		ctx->exit_status |= FSCK_NONDESTRUCT;
	report_summary(ctx);
}
