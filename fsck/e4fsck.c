/*
 * e4fsck.c - check and repair an ext2/3/4 file system: main() and the
 * options, following e2fsck's.  The check itself is check.c's; the state
 * every step shares is context.h's.
 */
#include "config.h"
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "context.h"
#include "progress.h"
#include "report.h"
#include "support/parse.h"
#include "support/version.h"

static const char usage_text[] =
	"Usage: %s [-panyfktvDV] [-b superblock] [-B blocksize] [-C fd] [-j threads]\n"
	"\t\t[-E extended-options] [-z undo_file] [--json FILE] device\n"
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
	" -z undo_file         Save the blocks changed in undo_file first (e2undo restores them)\n"
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

	while ((c = getopt_long(argc, argv, "panyfktvDVb:B:C:j:E:z:", longopts, NULL)) != -1) {
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
			if (sup_parse_u64(optarg, UINT64_MAX, &v) || v == 0) {
				fprintf(stderr, "%s: Invalid superblock parameter: %s\n", ctx->prog, optarg);
				return FSCK_USAGE;
			}
			ctx->superblock = v;
			break;
		case 'B':
			if (sup_parse_u64(optarg, 65536, &v) || (v != 1024 && v != 2048 && v != 4096 &&
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
			if (sup_parse_u64(optarg + ctx->progress_held, INT32_MAX, &v)) {
				fprintf(stderr, "%s: Invalid completion fd: %s\n", ctx->prog, optarg);
				return FSCK_USAGE;
			}
			ctx->progress_fd = (int)v;
			break;
		case 'j':
			if (sup_parse_u64(optarg, 1024, &v) || v == 0) {
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
		case 'z': ctx->undo_path = optarg; break;
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
	fsck_check(&ctx);
	progress_free(&ctx);
	timing_end(&ctx);
	if (ctx.json_path && report_json(&ctx))
		ctx.exit_status |= FSCK_ERROR;
	fsck_free_ctx(&ctx);
	return ctx.exit_status;
}
