/*
 * e4fsck.c - check and repair an ext2/3/4 file system: main() and the
 * options, following e2fsck's.  The check itself is check.c's; the state
 * every step shares is context.h's.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/fs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "context.h"
#include "progress.h"
#include "report.h"
#include "support/parse.h"
#include "support/version.h"

/* e2fsck's usage, line for line, with e4fsck's own options (-m, --json) added. */
static const char usage_text[] =
	"Usage: %s [-panyrcdfktvDFV] [-b superblock] [-B blocksize]\n"
	"\t\t[-l|-L bad_blocks_file] [-C fd] [-j external_journal]\n"
	"\t\t[-E extended-options] [-z undo_file] [-m threads] [--json FILE] device\n"
	"\n"
	"Emergency help:\n"
	" -p                   Automatic repair (no questions)\n"
	" -n                   Make no changes to the filesystem\n"
	" -y                   Assume \"yes\" to all questions\n"
	" -c                   Check for bad blocks and add them to the badblock list\n"
	" -f                   Force checking even if filesystem is marked clean\n"
	" -v                   Be verbose\n"
	" -b superblock        Use alternative superblock\n"
	" -B blocksize         Force blocksize when looking for superblock\n"
	" -j external_journal  Set location of the external journal\n"
	" -l bad_blocks_file   Add to badblocks list\n"
	" -L bad_blocks_file   Set badblocks list\n"
	" -z undo_file         Create an undo file\n"
	" -m threads           Threads for pass 1 (default: the number of CPUs)\n"
	" --json FILE          Write the problems found and the timings as JSON\n";

/* Usage on stderr, exit 16; --help has it on stdout, exit 0. */
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
		{ "check_encoding", offsetof(struct e4fsck, check_encoding), 1 },
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

enum { OPT_JSON = 1000, OPT_HELP };

/* -p/-a, -n, -y: a second, different mode is e2fsck's fatal error (exit 8). */
static int set_mode(struct e4fsck *ctx, enum fsck_mode mode)
{
	if (ctx->mode != MODE_ASK && ctx->mode != mode) {
		fprintf(stderr, "%s: Only one of the options -p/-a, -n or -y may be specified.\n", ctx->prog);
		return FSCK_ERROR;
	}
	ctx->mode = mode;
	return 0;
}

/*
 * -F: flush the device's buffers before reading it, as e2fsck does; like
 * e2fsck, a file that is not a block device cannot be flushed, and that is
 * a fatal error (exit 8) with e2fsck's words.
 */
static int flush_device(struct e4fsck *ctx)
{
	int fd = open(ctx->path, O_RDONLY);
	int err = 0;

	if (fd < 0) {
		fprintf(stderr, "open: %s while opening %s for flushing\n", strerror(errno), ctx->path);
		return FSCK_ERROR;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) {
		fsync(fd);
		if (ioctl(fd, BLKFLSBUF, 0) != 0)
			err = errno;
	} else {
		err = ENOTTY;
	}
	close(fd);
	if (err) {
		fprintf(stderr, "ext2fs_sync_device: %s while trying to flush %s\n", strerror(err), ctx->path);
		return FSCK_ERROR;
	}
	return 0;
}

/* The options e2fsck refuses together, with its words and exit status. */
static int check_combinations(struct e4fsck *ctx)
{
	if (ctx->mode == MODE_NO && ctx->optimize_dirs) {
		fprintf(stderr, "%s: The -n and -D options are incompatible.\n", ctx->prog);
		return FSCK_ERROR;
	}
	if (ctx->mode == MODE_NO && ctx->check_blocks) {
		fprintf(stderr, "%s: The -n and -c options are incompatible.\n", ctx->prog);
		return FSCK_ERROR;
	}
	if (ctx->mode == MODE_NO && ctx->badblocks_file) {
		fprintf(stderr, "%s: The -n and -l/-L options are incompatible.\n", ctx->prog);
		return FSCK_ERROR;
	}
	return 0;
}

/* -B's argument when it is no block size: an error only if -b needs it. */
static const char *bad_blocksize;

/* e2fsck's answer to an option wanting a number and given none: exit 1. */
static int non_numeric(int c, const char *arg)
{
	fprintf(stderr, "\nInvalid non-numeric argument to -%c (\"%s\")\n\n", c, arg);
	return 1;
}

/* One option letter (not -E, -V or the long ones): 0 or an exit status. */
static int parse_letter(struct e4fsck *ctx, int c, const char *arg)
{
	unsigned long long n;
	uint64_t v;

	switch (c) {
	case 'p':
	case 'a': return set_mode(ctx, MODE_PREEN);
	case 'n': return set_mode(ctx, MODE_NO);
	case 'y': return set_mode(ctx, MODE_YES);
	case 'f': ctx->force = 1; return 0;
	case 'k': ctx->keep_badblocks = 1; return 0;
	case 'c': ctx->check_blocks++; return 0;
	case 'L': ctx->badblocks_replace = 1; /* fall through */
	case 'l': ctx->badblocks_file = arg; return 0;
	case 'r': return 0;             /* e2fsck's default anyway: repair */
	case 'd': return 0;             /* e2fsck's debugging output: e4fsck has none to add */
	case 't': ctx->timing++; return 0;
	case 'v': ctx->verbose = 1; return 0;
	case 'D': ctx->optimize_dirs = 1; return 0;
	case 'j': ctx->journal_path = arg; return 0;
	case 'z': ctx->undo_path = arg; return 0;
	case 'b':
		/* As e2fsck reads it: a number at the start; 0 is the primary superblock. */
		if (sscanf(arg, "%llu", &n) != 1)
			return non_numeric(c, arg);
		ctx->superblock = n;
		return 0;
	case 'B':
		/* e2fsck takes any number here and uses it only with -b: so is an unusable size ignored. */
		v = (uint64_t)strtoul(arg, NULL, 10);
		ctx->blocksize = 0;
		if (v == 1024 || v == 2048 || v == 4096 || v == 8192 || v == 16384 || v == 32768 || v == 65536)
			ctx->blocksize = (unsigned)v;
		else
			bad_blocksize = arg;
		return 0;
	case 'C': {
		int fd;
		if (sscanf(arg, "%d", &fd) != 1)
			return non_numeric(c, arg);
		/* "-C -fd", which fsck(8) passes to checkers that wait for SIGUSR1. */
		ctx->progress_held = fd < 0;
		ctx->progress_fd = fd >= 0 ? fd : fd == INT_MIN ? INT_MAX : -fd;
		return 0;
	}
	case 'I':
	case 'P': {
		int ignored;
		/* e2fsck's inode buffer and process sizes: its own tuning, nothing to e4fsck. */
		return sscanf(arg, "%d", &ignored) == 1 ? 0 : non_numeric(c, arg);
	}
	case 'm':
		if (sup_parse_u64(arg, 1024, &v) || v == 0) {
			fprintf(stderr, "%s: Invalid number of threads: %s\n", ctx->prog, arg);
			return FSCK_USAGE;
		}
		ctx->threads = (int)v;
		return 0;
	default:
		/* Also e2fsck's letters it no longer acts on (-s, -S, -M): usage, without "invalid option". */
		usage(ctx->prog, stderr);
		return FSCK_USAGE;
	}
}

/* Options into ctx; returns 0, or an exit status (usage / version). */
static int parse_options(struct e4fsck *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c, flush = 0;

	/* getopt names the program by argv[0]: the name, not the path libtool or a script ran. */
	argv[0] = (char *)ctx->prog;
	while ((c = getopt_long(argc, argv, "panyrcdfktvDFVb:B:C:j:m:E:z:l:L:I:P:sSM:", longopts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case 'V':
			sup_version_full(stderr, ctx->prog);
			return FSCK_OK + 256;   /* "exit 0 now" */
		case 'F': flush = 1; break;
		case 'E': rc = parse_extended(ctx, optarg); break;
		case OPT_JSON: ctx->json_path = optarg; break;
		case OPT_HELP:
			usage(ctx->prog, stdout);
			return FSCK_OK + 256;
		default: rc = parse_letter(ctx, c, optarg); break;
		}
		if (rc)
			return rc;
	}
	if (optind != argc - 1) {
		usage(ctx->prog, stderr);
		return FSCK_USAGE;
	}
	int rc = check_combinations(ctx);
	if (rc)
		return rc;
	if (bad_blocksize && ctx->superblock) {
		fprintf(stderr, "%s: Invalid blocksize parameter: %s\n", ctx->prog, bad_blocksize);
		return FSCK_ERROR;
	}
	if (ctx->optimize_dirs && ctx->fixes_only) {
		fputs("The -D and -E fixes_only options are incompatible.\n", stderr);
		return FSCK_ERROR;
	}
	if (ctx->fixes_only)
		ctx->no_optimize_extents = 1;
	ctx->device = ctx->path = argv[optind];
	if (flush && (rc = flush_device(ctx)) != 0)
		return rc;
	if (ctx->check_blocks && ctx->badblocks_file) {
		fputs("The -c and the -l/-L options may not be both used at the same time.\n", stderr);
		return FSCK_USAGE;
	}
	return 0;
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
	/* After the banner, as e2fsck: questions need someone to answer them. */
	if (ctx.mode == MODE_ASK && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "%s: need terminal for interactive repairs\n", ctx.prog);
		progress_free(&ctx);
		return FSCK_ERROR;
	}
	timing_begin(&ctx);
	fsck_check(&ctx);
	progress_free(&ctx);
	timing_end(&ctx);
	if (ctx.json_path && report_json(&ctx))
		ctx.exit_status |= FSCK_ERROR;
	fsck_free_ctx(&ctx);
	return ctx.exit_status;
}
