/*
 * options.c - mke4fs's command line: mke2fs 1.47's options and messages.
 *
 * Only the syntax of each option is checked here (a number where a number
 * belongs, a known keyword); what the values mean together is decided in
 * profile.c once the target's size is known, exactly where mke2fs decides
 * it.  Options that mke2fs has but mke4fs cannot honour yet are refused by
 * name instead of being ignored.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "mke4fs.h"
#include "support/exitcodes.h"
#include "support/parse.h"
#include "support/version.h"

#define LABEL_MAX 16

void mk_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-b block-size] [-i bytes-per-inode] [-I inode-size]\n"
		"\t[-J journal-options] [-G flex-group-size] [-N number-of-inodes] [-d root-directory]\n"
		"\t[-m reserved-blocks-percentage] [-o creator-os]\n"
		"\t[-g blocks-per-group] [-L volume-label] [-M last-mounted-directory]\n"
		"\t[-O feature[,...]] [-r fs-revision] [-E extended-option[,...]]\n"
		"\t[-t fs-type] [-T usage-type ] [-U UUID] [-e errors_behavior]\n"
		"\t[--compat=profile] [--json] [-jnqvFV] device [fs-size]\n",
		prog_name);
}

static void usage_exit(void)
{
	mk_usage(stderr);
	exit(SUP_EXIT_FAILURE);
}

/* Append "," and s to *list (a malloc'ed string or NULL).  -1 without memory. */
static int append_list(char **list, const char *s)
{
	size_t old = *list ? strlen(*list) : 0;
	char *n = realloc(*list, old + strlen(s) + 2);

	if (!n) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		return -1;
	}
	if (old)
		n[old++] = ',';
	strcpy(n + old, s);
	*list = n;
	return 0;
}

static void bad_journal_opts(void)
{
	fputs("\nBad journal options specified.\n\n"
	      "Journal options are separated by commas, and may take an argument which\n"
	      "\tis set off by an equals ('=') sign.\n\n"
	      "Valid journal options are:\n"
	      "\tsize=<journal size in megabytes>\n"
	      "\tfast_commit_size=<fast commit area size in kilobytes>\n\n"
	      "The journal size must be between 1024 and 10240000 filesystem blocks.\n\n",
	      stderr);
}

/* -J size=MiB,fast_commit_size=KiB; device=, location= and v1_superblock are refused. */
static int parse_journal_opts(struct mk_opts *o, const char *opts)
{
	char *buf = strdup(opts), *tok, *next;
	int bad = 0;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog_name);
		return -1;
	}
	for (tok = buf; tok && *tok; tok = next) {
		char *arg, *end;
		unsigned long v;

		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		arg = strchr(tok, '=');
		if (arg)
			*arg++ = '\0';
		if (!strcmp(tok, "size") || !strcmp(tok, "fast_commit_size")) {
			if (!arg || !*arg) {
				bad++;
				continue;
			}
			errno = 0;
			v = strtoul(arg, &end, 0);
			if (errno || *end || v > 0x7fffffffUL) {
				bad++;
				continue;
			}
			if (!strcmp(tok, "size"))
				o->journal_size = (int)v;
			else
				o->journal_fc_size = (int)v;
		} else if (!strcmp(tok, "device") || !strcmp(tok, "location") ||
			   !strcmp(tok, "v1_superblock")) {
			fprintf(stderr, "%s: the journal option '%s' (-J) is not supported: "
				"mke4fs makes an internal journal at the place mke2fs chooses\n",
				prog_name, tok);
			free(buf);
			return -1;
		} else {
			bad++;
		}
	}
	free(buf);
	if (bad) {
		bad_journal_opts();
		return -1;
	}
	return 0;
}

static int unsupported(const char *what)
{
	fprintf(stderr, "%s: %s is not supported by mke4fs yet\n", prog_name, what);
	return -1;
}

enum { OPT_HELP = 256, OPT_JSON, OPT_COMPAT };

int mk_parse_args(int argc, char **argv, struct mk_opts *o)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "compat", required_argument, NULL, OPT_COMPAT },
		{ NULL, 0, NULL, 0 },
	};
	int c, show_version = 0;

	memset(o, 0, sizeof(*o));
	opterr = 0;     /* getopt would name argv[0]; mke4fs names itself */
	o->reserved_ratio = -1.0;
	o->r_opt = -1;
	o->s_opt = -1;

	while ((c = getopt_long(argc, argv, "b:cd:e:g:i:jl:m:no:qr:s:t:vC:DE:FG:I:J:KL:M:N:O:R:ST:U:Vz:",
				longopts, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'b': {
			uint64_t b = sup_parse_size(optarg, 0);
			if (b < 1024 || b > 65536 || (b & (b - 1))) {
				fprintf(stderr, "%s: invalid block size - %s (-b: a power of two from 1024 to 65536)\n",
					prog_name, optarg);
				return -1;
			}
			if (b > 4096)
				fprintf(stderr, "Warning: blocksize %u not usable on most systems.\n", (unsigned)b);
			o->blocksize = (uint32_t)b;
			break;
		}
		case 'c':
		case 'l':
			return unsupported("checking for bad blocks (-c, -l)");
		case 'C':
			fprintf(stderr, "%s: a cluster size (-C %s) needs the bigalloc feature, "
				"which mke4fs cannot make yet\n", prog_name, optarg);
			return -1;
		case 'd':
			o->root_dir = optarg;
			break;
		case 'D':
			return unsupported("direct I/O (-D)");
		case 'S':
			return unsupported("writing only the superblock and descriptors (-S)");
		case 'z':
			return unsupported("an undo file (-z)");
		case 'R':
			fprintf(stderr, "%s: '-R' is deprecated, use '-E' instead\n", prog_name);
			/* fallthrough */
		case 'E':
			/* As mke2fs 1.47: a later -E (or -R) replaces an earlier one whole. */
			free(o->extended);
			o->extended = NULL;
			if (append_list(&o->extended, optarg))
				return -1;
			break;
		case 'e':
			if (!strcmp(optarg, "continue"))
				o->errors_behavior = 1;
			else if (!strcmp(optarg, "remount-ro"))
				o->errors_behavior = 2;
			else if (!strcmp(optarg, "panic"))
				o->errors_behavior = 3;
			else {
				fprintf(stderr, "%s: bad error behavior - %s (-e: continue, remount-ro or panic)\n",
					prog_name, optarg);
				usage_exit();
			}
			break;
		case 'F':
			o->force++;
			break;
		case 'g':
			if (sup_parse_u64(optarg, 0xFFFFFFFF, &v)) {
				fprintf(stderr, "%s: Illegal number for blocks per group - %s (-g)\n",
					prog_name, optarg);
				return -1;
			}
			if (v % 8) {
				fprintf(stderr, "%s: blocks per group must be multiple of 8 (-g %s)\n",
					prog_name, optarg);
				return -1;
			}
			o->blocks_per_group = (uint32_t)v;
			break;
		case 'G':
			if (sup_parse_u64(optarg, UINT64_MAX, &v)) {
				fprintf(stderr, "%s: Illegal number for flex_bg size - %s (-G)\n",
					prog_name, optarg);
				return -1;
			}
			if (v < 1 || (v & (v - 1))) {
				fprintf(stderr, "%s: flex_bg size must be a power of 2 (-G %s)\n",
					prog_name, optarg);
				return -1;
			}
			if (v > (1ULL << 31)) {
				fprintf(stderr, "%s: flex_bg size (%llu) must be less than or equal to 2^31 (-G)\n",
					prog_name, (unsigned long long)v);
				return -1;
			}
			o->flex_bg_size = (unsigned long)v;
			break;
		case 'i': {
			uint64_t r = sup_parse_size(optarg, 0);
			if (r < 1024 || r > 65536ULL * 1024) {
				fprintf(stderr, "%s: invalid inode ratio %s (min %d/max %d) (-i)\n",
					prog_name, optarg, 1024, 65536 * 1024);
				return -1;
			}
			o->inode_ratio = (uint32_t)r;
			break;
		}
		case 'I':
			if (sup_parse_u64(optarg, 65536, &v)) {
				fprintf(stderr, "%s: invalid inode size - %s (-I)\n", prog_name, optarg);
				return -1;
			}
			o->inode_size = (uint32_t)v;
			break;
		case 'j':
			if (!o->journal_size)
				o->journal_size = -1;
			if (!o->journal_fc_size)
				o->journal_fc_size = -1;
			break;
		case 'J':
			if (parse_journal_opts(o, optarg))
				return -1;
			break;
		case 'K':
			fprintf(stderr, "Warning: -K option is deprecated and should not be used anymore. "
				"Use '-E nodiscard' extended option instead!\n");
			o->nodiscard_K = 1;
			break;
		case 'L':
			o->label = optarg;
			if (strlen(optarg) > LABEL_MAX) {
				optarg[LABEL_MAX] = '\0';
				fprintf(stderr, "Warning: label too long; will be truncated to '%s'\n\n",
					optarg);
			}
			break;
		case 'm': {
			char *end;
			double r = strtod(optarg, &end);
			if (end == optarg || *end || !(r >= 0.0 && r <= 50.0)) {
				fprintf(stderr, "%s: invalid reserved blocks percent - %s (-m: 0 to 50)\n",
					prog_name, optarg);
				return -1;
			}
			o->reserved_ratio = r;
			break;
		}
		case 'M':
			o->mount_dir = optarg;
			break;
		case 'n':
			o->noaction++;
			break;
		case 'N':
			if (sup_parse_u64(optarg, UINT64_MAX, &v)) {
				fprintf(stderr, "%s: bad num inodes - %s (-N)\n", prog_name, optarg);
				return -1;
			}
			o->num_inodes = v;
			break;
		case 'o':
			o->creator_os = optarg;
			break;
		case 'O':
			if (append_list(&o->features, optarg))
				return -1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'r':
			if (sup_parse_u64(optarg, UINT64_MAX, &v)) {
				fprintf(stderr, "%s: bad revision level - %s (-r)\n", prog_name, optarg);
				return -1;
			}
			if (v > 1) {
				fprintf(stderr, "%s: Filesystem revision too high while trying to create revision %llu (-r)\n",
					prog_name, (unsigned long long)v);
				return -1;
			}
			if (v == 0) {
				fprintf(stderr, "%s: revision 0 file systems (-r 0) are not supported; "
					"mke4fs makes revision 1 only\n", prog_name);
				return -1;
			}
			o->r_opt = (int)v;
			break;
		case 's':
			o->s_opt = atoi(optarg);
			break;
		case 't':
			if (o->fs_type) {
				fprintf(stderr, "%s: The -t option may only be used once\n", prog_name);
				return -1;
			}
			o->fs_type = optarg;
			break;
		case 'T':
			if (o->usage_types) {
				fprintf(stderr, "%s: The -T option may only be used once\n", prog_name);
				return -1;
			}
			o->usage_types = optarg;
			break;
		case 'U':
			o->uuid = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'V':
			show_version = 1;
			break;
		case OPT_HELP:
			mk_usage(stdout);
			exit(SUP_EXIT_OK);
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_COMPAT:
			if (!strcmp(optarg, "help")) {
				mk_compat_list(stdout);
				exit(SUP_EXIT_OK);
			}
			if (!mk_compat_known(optarg)) {
				fprintf(stderr, "%s: unknown compatibility profile '%s' (--compat); "
					"--compat=help lists them\n", prog_name, optarg);
				return -1;
			}
			o->compat = optarg;
			break;
		default:
			if (optopt >= 256)
				fprintf(stderr, "%s: option '%s' requires an argument\n", prog_name,
					argv[optind - 1]);
			else if (optopt && strchr("bdegilmorstCEGIJLMNORTUz", optopt))
				fprintf(stderr, "%s: option requires an argument -- '%c'\n", prog_name, optopt);
			else if (optopt)
				fprintf(stderr, "%s: invalid option -- '%c'\n", prog_name, optopt);
			else
				fprintf(stderr, "%s: unrecognized option '%s'\n", prog_name, argv[optind - 1]);
			usage_exit();
		}
	}
	if (show_version) {
		sup_version_full(stderr, prog_name);
		exit(SUP_EXIT_OK);
	}
	if (optind == argc)
		usage_exit();
	o->device = argv[optind++];
	if (optind < argc)
		o->size_arg = argv[optind++];
	if (optind < argc)
		usage_exit();
	if (o->json)
		o->quiet = 1;
	return 0;
}

void mk_opts_free(struct mk_opts *o)
{
	free(o->features);
	free(o->extended);
	o->features = o->extended = NULL;
}
