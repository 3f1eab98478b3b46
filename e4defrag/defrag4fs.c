/*
 * defrag4fs.c - main(): the options (e4defrag's where it has them), then
 * the steps in the order that keeps a refused run from writing anything:
 * the modes asked for, the JSON file, the mount check, a read-only open,
 * the file system's state, the paths; only then -c's report, -n's plan or
 * a run, which reopens the file system for writing.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "defrag4fs.h"
#include "ext4fs/super.h"
#include "support/parse.h"
#include "support/version.h"

static const char usage_text[] =
	"Usage: %s [-c] [-n] [-v] [-f] [-C fd] [-t seconds] [--mode=file,dir,free]\n"
	"\t\t[--json FILE] [-z undo_file] device-or-image [path...]\n"
	"\n"
	" -c              report how fragmented it is (as e4defrag -c, and more); change nothing\n"
	" -n              say what would move; change nothing\n"
	" -v              name every file moved or left (with -c: every file and directory)\n"
	" -f              go on without a journal or an undo file\n"
	" -C fd           progress to file descriptor fd (0: a bar on the terminal)\n"
	" -t seconds      stop at the first file boundary after this long\n"
	" --mode=LIST     what to do, of file (each file into fewer extents), dir (the tree\n"
	"                 laid out in reading order, free space gathered) and free (free\n"
	"                 space compacted); default all three\n"
	" --json FILE     write the figures and the moves as JSON ('-': to stdout, instead of the text)\n"
	" -z undo_file    save the blocks changed in undo_file first (e2undo restores them)\n"
	" -V              print the version and exit\n"
	" --help          print this help and exit\n"
	"\n"
	"Paths are inside the file system, from its root.  Exit status: 0 done; 1 done, but files\n"
	"above their ideal extent count were left as they were; 8 an error (usage included).\n";

static void usage(FILE *to)
{
	fprintf(to, usage_text, DF_PROG);
}

/* --mode's comma-separated words into *modes; -1 (said) for a word it does not know. */
static int parse_modes(const char *arg, unsigned *modes)
{
	static const struct { const char *name; unsigned bit; } words[] = {
		{ "file", DF_MODE_FILE }, { "dir", DF_MODE_DIR }, { "free", DF_MODE_FREE },
	};
	char *copy = strdup(arg), *save = NULL;
	int bad = 0;

	if (!copy)
		return -1;
	*modes = 0;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(words) / sizeof(words[0]) && strcmp(w, words[i].name); i++)
			;
		if (i == sizeof(words) / sizeof(words[0])) {
			fprintf(stderr, "%s: unknown mode '%s' (the modes are file, dir and free)\n", DF_PROG, w);
			bad = 1;
			break;
		}
		*modes |= words[i].bit;
	}
	free(copy);
	if (!bad && !*modes) {
		fprintf(stderr, "%s: --mode needs at least one of file, dir, free\n", DF_PROG);
		bad = 1;
	}
	return bad ? -1 : 0;
}

enum { OPT_MODE = 1000, OPT_JSON, OPT_HELP };

/* Options into ctx: 0, an exit status, or 256 + status to stop now (--help, -V). */
static int parse_options(struct df_ctx *ctx, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "cnvfC:t:z:V", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': ctx->report = 1; break;
		case 'n': ctx->dry_run = 1; break;
		case 'v': ctx->verbose = 1; break;
		case 'f': ctx->force = 1; break;
		case 'z': ctx->undo_path = optarg; break;
		case 'C':
			/* "-C -fd", as fsck(8) passes it to a checker that waits for SIGUSR1. */
			ctx->progress_held = optarg[0] == '-';
			if (sup_parse_u64(optarg + ctx->progress_held, INT32_MAX, &v)) {
				fprintf(stderr, "%s: invalid completion fd: %s\n", DF_PROG, optarg);
				return DF_EXIT_ERROR;
			}
			ctx->progress_fd = (int)v;
			break;
		case 't':
			if (sup_parse_u64(optarg, UINT32_MAX, &v)) {
				fprintf(stderr, "%s: invalid time limit (whole seconds): %s\n", DF_PROG, optarg);
				return DF_EXIT_ERROR;
			}
			ctx->time_limit = v;
			ctx->have_time_limit = 1;
			break;
		case OPT_MODE:
			if (parse_modes(optarg, &ctx->modes))
				return DF_EXIT_ERROR;
			break;
		case OPT_JSON: ctx->json_path = optarg; break;
		case 'V':
			sup_version_full(stdout, DF_PROG);
			return 256 + DF_EXIT_OK;
		case OPT_HELP:
			usage(stdout);
			return 256 + DF_EXIT_OK;
		default:
			usage(stderr);
			return DF_EXIT_ERROR;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return DF_EXIT_ERROR;
	}
	if (ctx->report && ctx->dry_run) {
		fprintf(stderr, "%s: -c and -n cannot be used together (-c reports, -n plans a run)\n", DF_PROG);
		return DF_EXIT_ERROR;
	}
	ctx->device = argv[optind];
	ctx->paths = argv + optind + 1;
	ctx->npaths = argc - optind - 1;
	return 0;
}

static int open_json(struct df_ctx *ctx)
{
	if (!ctx->json_path)
		return 0;
	if (!strcmp(ctx->json_path, "-")) {
		ctx->json = stdout;
		ctx->out = fopen("/dev/null", "w");
		if (!ctx->out) {
			fprintf(stderr, "%s: %s while opening /dev/null\n", DF_PROG, strerror(errno));
			return DF_EXIT_ERROR;
		}
		return 0;
	}
	ctx->json = fopen(ctx->json_path, "w");
	if (!ctx->json) {
		fprintf(stderr, "%s: %s while opening %s for the JSON report\n", DF_PROG, strerror(errno),
			ctx->json_path);
		return DF_EXIT_ERROR;
	}
	return 0;
}

/* -c: one pass, the walk.  A run: the figures before, the moves, the figures after. */
static const double report_pass_end[] = { 0, 100 };
static const double run_pass_end[] = { 0, 10, 90, 100 };

static int progress_init(struct df_ctx *ctx)
{
	int err;

	if (ctx->progress_fd < 0)
		return 0;
	err = sup_report_new(ctx->progress_fd, ctx->progress_held, ctx->device,
			     ctx->report ? report_pass_end : run_pass_end, ctx->report ? 1 : 3, &ctx->progress);
	if (err == -EBADF) {
		fprintf(stderr, "%s: invalid completion fd %d: %s\n", DF_PROG, ctx->progress_fd, strerror(EBADF));
		return DF_EXIT_ERROR;
	}
	if (err) {
		fprintf(stderr, "%s: out of memory\n", DF_PROG);
		return DF_EXIT_ERROR;
	}
	return 0;
}

void df_progress_begin(struct df_ctx *ctx, int pass, uint64_t max)
{
	if (ctx->progress)
		sup_report_begin(ctx->progress, pass, max);
}

void df_progress_tick(struct df_ctx *ctx)
{
	if (ctx->progress)
		sup_report_add(ctx->progress, 1);
}

void df_progress_end(struct df_ctx *ctx)
{
	if (ctx->progress)
		sup_report_end(ctx->progress);
}

void df_progress_clear(struct df_ctx *ctx)
{
	if (ctx->progress)
		sup_report_clear(ctx->progress);
}

uint64_t df_inodes_used(const struct df_ctx *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);

	return sb->s_inodes_count > sb->s_free_inodes_count ? sb->s_inodes_count - sb->s_free_inodes_count : 0;
}

static int run(struct df_ctx *ctx)
{
	int rc;

	if ((rc = open_json(ctx)))
		return rc;
	if ((rc = df_check_not_in_use(ctx)))
		return rc;
	if ((rc = df_open_readonly(ctx)) || (rc = df_check_state(ctx)) || (rc = progress_init(ctx)) ||
	    (rc = df_targets_resolve(ctx)))
		return rc;
	return ctx->report ? df_report(ctx) : df_run(ctx);
}

int main(int argc, char **argv)
{
	struct df_ctx ctx = { .progress_fd = -1, .modes = DF_MODE_FILE | DF_MODE_DIR | DF_MODE_FREE, .out = stdout };
	int rc;

	rc = parse_options(&ctx, argc, argv);
	if (rc)
		return rc >= 256 ? rc - 256 : rc;
	sup_version_banner(stderr, DF_PROG);
	rc = run(&ctx);
	sup_report_free(ctx.progress);
	df_targets_free(&ctx);
	if (ctx.fs && (ext4fs_fs_flags(ctx.fs) & EXT4FS_OPEN_RW)) {
		/* The last writes (superblock, the channel's) must not fail unseen. */
		int err = ext4fs_close_flush(ctx.fs);
		if (err) {
			fprintf(stderr, "%s: %s while closing %s\n", DF_PROG, ext4fs_strerror(err), ctx.device);
			if (rc != DF_EXIT_ERROR)
				rc = DF_EXIT_ERROR;
		}
	} else {
		ext4fs_close(ctx.fs);
	}
	if (ctx.json && ctx.json != stdout)
		fclose(ctx.json);
	if (ctx.out != stdout)
		fclose(ctx.out);
	if (fflush(stdout) && !rc) {
		fprintf(stderr, "%s: %s while writing the report\n", DF_PROG, strerror(errno));
		rc = DF_EXIT_ERROR;
	}
	return rc;
}
