/*
 * debug4fs.c - option parsing, the command loop, and opening the file system.
 *
 * With -w the file system is opened read-write, after making sure the
 * running system does not use it (mounted, directly or through a loop
 * device, or swapped on): debugfs writes to a mounted file system without
 * a word, debug4fs refuses.  Read-only use of a mounted file system stays
 * allowed.  The handle keeps bitmaps, descriptors and the superblock in
 * memory; they are written after every command, so the next command (and
 * a command that only reads the disk) sees what the last one did, and a
 * failure to write is reported against the command that caused it.  Like
 * debugfs, only the primary superblock and descriptor table are written;
 * the backups keep what they had.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "debug4fs.h"
#include "ext4fs/array.h"
#include "ext4fs/mountcheck.h"
#include "support/exitcodes.h"
#include "support/parse.h"
#include "support/fsopen.h"
#include "support/version.h"

#define PROGRAM "debug4fs"

static void print_help(FILE *f)
{
	fprintf(f,
		"Usage: %s [-b blocksize] [-s superblock] [-f cmd_file] [-R request] [-c] [-n] [-w] [-z undo_file] [-j] [-V] [device]\n"
		"\n"
		"ext2/ext3/ext4 file system debugger, command-compatible with debugfs.\n"
		"\n"
		"  -R request     run one command and exit\n"
		"  -f cmd_file    run the commands in cmd_file ('-' for standard input), echoing each\n"
		"  -b blocksize   block size to use with -s\n"
		"  -s superblock  open using the backup superblock at this block\n"
		"  -c             catastrophic mode: do not read bitmaps up front (always true here)\n"
		"  -n             do not verify metadata checksums\n"
		"  -w             open read-write (refused when the file system is in use)\n"
		"  -z undo_file   with -w: save each block's old contents in undo_file first (e2undo)\n"
		"  -j, --json     print each command's result as one JSON document\n"
		"  -V             print the version and exit\n"
		"  -h, --help     print this help and exit\n"
		"\n"
		"The exit status is 0 when every command succeeded; with -R or -f, the number of\n"
		"requests that named no command, if any (as debugfs); otherwise 1 after a failure.\n"
		"Type 'help' at the prompt for the list of commands.\n",
		PROGRAM);
}

/* Refuse to write to a file system the running system uses. */
static int check_not_in_use(const char *device)
{
	char via[300];
	unsigned flags;

	if (ext4fs_check_mount_via(device, &flags, via, sizeof(via)) < 0 || !EXT4FS_MOUNT_IN_USE(flags))
		return 0;   /* a path that cannot be examined fails in the open */
	fprintf(stderr, "%s: %s is %s%s%s%s; will not open it read-write\n", PROGRAM, device,
		(flags & EXT4FS_MOUNT_MOUNTED) ? "mounted" :
		(flags & EXT4FS_MOUNT_SWAP) ? "in use as swap" : "in use by the system",
		(flags & EXT4FS_MOUNT_LOOP) ? " (through " : "", (flags & EXT4FS_MOUNT_LOOP) ? via : "",
		(flags & EXT4FS_MOUNT_LOOP) ? ")" : "");
	return 1;
}

static int open_fs(struct dbg *d, const char *device)
{
	struct ext4fs_open_opts opts = {
		.flags = d->open_flags, .superblock = d->superblock, .block_size = d->block_size,
	};
	char msg[512];
	int err;

	if ((d->open_flags & EXT4FS_OPEN_RW) && check_not_in_use(device))
		return 1;
	err = sup_fs_open(device, &opts, d->undo_path, &d->fs, msg, sizeof(msg));

	if (err == EXT4FS_E_SB_CSUM && !(opts.flags & EXT4FS_OPEN_IGNORE_CSUM)) {
		/* As debugfs does: say so, and go on without checksum verification. */
		printf("Checksum errors in superblock!  Retrying...\n");
		d->open_flags |= EXT4FS_OPEN_IGNORE_CSUM;
		opts.flags = d->open_flags;
		err = sup_fs_open(device, &opts, d->undo_path, &d->fs, msg, sizeof(msg));
	}
	if (err) {
		fprintf(stderr, "%s: %s while trying to open %s\n", PROGRAM, msg, device);
		d->fs = NULL;
		return 1;
	}
	/* As debugfs: the backup superblocks and descriptors keep what they had. */
	ext4fs_set_primary_only(d->fs, 1);
	d->device = device;
	d->root = d->cwd = EXT4FS_ROOT_INO;
	return 0;
}

int dbg_split_line(const char *line, int *argc, char ***argv)
{
	/* cap counts the slot of the NULL that ends the vector. */
	size_t cap = 9, n = 0, len = strlen(line);
	char **v = calloc(cap, sizeof(*v));
	char *word = malloc(len + 1);

	if (!v || !word)
		goto nomem;
	for (size_t i = 0; i < len;) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r'))
			i++;
		if (i >= len)
			break;
		size_t w = 0;
		int quoted = 0;
		while (i < len && (quoted || !(line[i] == ' ' || line[i] == '\t' || line[i] == '\n' ||
					       line[i] == '\r'))) {
			if (line[i] == '"') {
				quoted = !quoted;
				i++;
				continue;
			}
			word[w++] = line[i++];
		}
		word[w] = '\0';
		if (n + 2 > cap) {
			char **nv = ext4fs_array_grow(v, &cap, n + 2, sizeof(*v), 9);
			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n] = strdup(word);
		if (!v[n])
			goto nomem;
		v[++n] = NULL;
	}
	free(word);
	*argc = (int)n;
	*argv = v;
	return 0;
nomem:
	free(word);
	dbg_free_argv((int)n, v);
	return -ENOMEM;
}

void dbg_free_argv(int argc, char **argv)
{
	if (!argv)
		return;
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

int dbg_run_argv(struct dbg *d, int argc, char **argv)
{
	const struct dbg_cmd *c;
	int rc;

	if (argc == 0)
		return 0;
	c = dbg_find_command(argv[0]);
	if (!c) {
		fflush(d->out);
		fprintf(stderr, "%s: Command not found %s\n", PROGRAM, argv[0]);
		d->unknown++;
		return 1;
	}
	if (c->needs_fs && !d->fs) {
		fflush(d->out);
		fprintf(stderr, "%s: Filesystem not open\n", argv[0]);
		return 1;
	}
	if (d->fs)
		ext4fs_errmsg_clear(d->fs);
	optind = 0;     /* commands parse their own options with getopt */
	opterr = 1;
	rc = c->fn(d, argc, argv);
	fflush(d->out);
	if (d->fs && (ext4fs_fs_flags(d->fs) & EXT4FS_OPEN_RW)) {
		int err = ext4fs_flush(d->fs);
		if (err) {
			dbg_error(d, PROGRAM, err, "while writing out %s", d->device);
			rc = 1;
		}
	}
	return rc;
}

/* Close the file system, writing what is left; nonzero (reported) on failure. */
static int close_fs(struct dbg *d)
{
	int err = 0;

	if (d->fs && (ext4fs_fs_flags(d->fs) & EXT4FS_OPEN_RW)) {
		err = ext4fs_flush(d->fs);
		if (err)
			dbg_error(d, PROGRAM, err, "while closing %s", d->device);
	}
	ext4fs_close(d->fs);
	d->fs = NULL;
	return err ? 1 : 0;
}

static int run_line(struct dbg *d, const char *line)
{
	int argc, rc;
	char **argv;

	if (dbg_split_line(line, &argc, &argv)) {
		fprintf(stderr, "%s: out of memory\n", PROGRAM);
		return 1;
	}
	rc = dbg_run_argv(d, argc, argv);
	dbg_free_argv(argc, argv);
	return rc;
}

/* Strip the newline; return nonzero for blank lines and comments, which debugfs skips. */
static int skip_line(char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return n == 0 || line[0] == '#';
}

static int run_file(struct dbg *d, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	int failed = 0;

	if (!f) {
		fprintf(stderr, "%s: %s while opening %s\n", PROGRAM, strerror(errno), path);
		return 1;
	}
	while (getline(&line, &cap, f) != -1) {
		if (skip_line(line))
			continue;
		if (!d->json)
			fprintf(d->out, "debugfs: %s\n", line);
		fflush(d->out);
		if (run_line(d, line))
			failed = 1;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return failed;
}

static int run_interactive(struct dbg *d)
{
	char *line = NULL;
	size_t cap = 0;
	int failed = 0, tty = isatty(STDIN_FILENO);

	for (;;) {
		if (tty) {
			fputs("debug4fs:  ", stdout);
			fflush(stdout);
		}
		if (getline(&line, &cap, stdin) == -1)
			break;
		if (skip_line(line))
			continue;
		if (!strcmp(line, "quit") || !strcmp(line, "q"))
			break;
		if (run_line(d, line))
			failed = 1;
	}
	free(line);
	return failed;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct dbg d = { .out = stdout, .root = EXT4FS_ROOT_INO, .cwd = EXT4FS_ROOT_INO };
	const char *request = NULL, *cmd_file = NULL;
	uint64_t v;
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, "b:cd:f:hiDjnR:s:wz:V", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'R': request = optarg; break;
		case 'f': cmd_file = optarg; break;
		case 'j': d.json = 1; break;
		case 'n': d.open_flags |= EXT4FS_OPEN_IGNORE_CSUM; break;
		case 'c': case 'i': case 'D': break;   /* accepted for compatibility; reads are lazy anyway */
		case 'b':
			if (sup_parse_u64(optarg, UINT64_MAX, &v) || v < 1024 || v > 65536 || (v & (v - 1))) {
				fprintf(stderr, "%s: invalid block size - %s\n", PROGRAM, optarg);
				return 1;
			}
			d.block_size = (unsigned)v;
			break;
		case 's':
			if (sup_parse_u64(optarg, UINT64_MAX, &v) || v == 0) {
				fprintf(stderr, "%s: invalid superblock block number - %s\n", PROGRAM, optarg);
				return 1;
			}
			d.superblock = v;
			break;
		case 'w': d.open_flags |= EXT4FS_OPEN_RW; break;
		case 'z': d.undo_path = optarg; break;
		case 'd':
			fprintf(stderr, "%s: -%c is not supported\n", PROGRAM, opt);
			return 1;
		case 'V':
			sup_version_full(stdout, PROGRAM);
			return SUP_EXIT_OK;
		case 'h':
			print_help(stdout);
			return 0;
		default:
			print_help(stderr);
			return 1;
		}
	}
	if (optind < argc - 1) {
		print_help(stderr);
		return 1;
	}
	if (!d.json)
		sup_version_banner(stderr, PROGRAM);
	if (optind < argc && open_fs(&d, argv[optind]))
		rc = 1;
	if (request)
		rc |= run_line(&d, request);
	else if (cmd_file)
		rc |= run_file(&d, cmd_file);
	else
		rc |= run_interactive(&d);
	rc |= close_fs(&d);
	/*
	 * debugfs exits with the number of -R / -f requests that named no
	 * command (debug4fs stops counting at 255 where debugfs wraps around);
	 * any other failure makes it 1 (debugfs: 0).
	 */
	if (d.unknown && (request || cmd_file))
		return d.unknown > 255 ? 255 : (int)d.unknown;
	return rc ? SUP_EXIT_FAILURE : SUP_EXIT_OK;
}
