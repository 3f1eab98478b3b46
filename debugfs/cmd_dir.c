/*
 * cmd_dir.c - debug4fs commands that read directories and file contents:
 * ls, htree_dump, dx_hash, dump_inode, rdump and cat.
 *
 * The text output follows debugfs 1.47.0 byte for byte on well-formed file
 * systems; it was learnt by running debugfs, and
 * tests/integration/t1500-debug4fs-dir.sh diffs the two tools on a set of
 * images.  With -j, ls, htree_dump and dx_hash print one JSON document per
 * command; dump_inode, rdump and cat print a small status document when
 * they succeed (cat's data still goes to standard output first, raw).
 *
 * Deliberate differences from debugfs 1.47.0:
 *  - dx_hash -h also knows "legacy_unsigned", "half_md4_unsigned",
 *    "tea_unsigned" and "siphash" (debugfs 1.47.0 knows only legacy,
 *    half_md4 and tea and silently hashes anything else with atoi() of the
 *    name, i.e. usually legacy).  Hash version 6 (siphash) is refused with
 *    debugfs's "Directory hash unsupported" message, as debugfs does.
 *  - dx_hash and htree_dump hash names with libext4fs, which applies the
 *    kernel's end-of-directory rule: a major hash of 0xfffffffe is stored as
 *    0xfffffffc.  debugfs 1.47.0 prints 0xfffffffe for such a name.
 *  - dx_hash -c -e utf8 of a name that is not valid UTF-8 prints the hash
 *    of its raw bytes, which is what the kernel files it under; debugfs
 *    1.47.0 fails with "Unknown code ____ 220" (its casefolding reports
 *    such names as too long).
 *  - dx_hash -v is accepted (debugfs 1.47.0 rejects it): it prints the
 *    algorithm, seed and casefolding used on lines of their own before the
 *    usual "Hash of" line.  The usage message stays debugfs's.
 *  - cat, dump_inode and rdump write exactly i_size bytes of an inline-data
 *    file; debugfs 1.47.0 writes the whole 60-byte i_block area (the data
 *    followed by NULs).
 *  - cat and dump_inode of a fast symlink write the link's target; debugfs
 *    1.47.0 reads i_block as a block map and fails with a short-read error.
 *  - dump_inode and rdump leave holes in the output file where whole blocks
 *    of the data are zeros (when the output is a regular file); the content
 *    is the same as debugfs's.
 *  - rdump (and dump_inode -p) set the times from the full inode timestamps
 *    (extra epoch bits and nanoseconds); debugfs uses the 32-bit seconds
 *    fields read as unsigned, so they differ only for times outside
 *    1970..2106 and in the sub-second part.
 *  - rdump does not descend into a directory it is already dumping (a
 *    directory loop in a corrupt file system); it reports the loop instead
 *    of recursing until the path gets too long.  It also refuses entries
 *    whose name is empty or holds a '/' (only a corrupt directory has them;
 *    debugfs would write outside the destination), and it opens the files
 *    it writes with O_NOFOLLOW, so a symlink it has just made under the
 *    same name (duplicate names, again corruption) is not written through.
 *  - htree_dump checks the index as it walks it (the library's checks: root
 *    records, limit, count, hash order, blocks inside the directory, no
 *    block reached twice).  A bad root fails the command; a bad child block
 *    is reported on stderr and the dump goes on with the next entry.
 *    debugfs prints whatever the blocks hold.  Checksums are enforced unless
 *    -n was given: an index block whose checksum is wrong ends (root) or
 *    skips (interior node) that part of the dump, where debugfs prints it
 *    with "Checksum: 0x... --- EXPECTED: 0x..." (debug4fs -n prints the same
 *    line).  A leaf that fails is reported as "htree: <message> while
 *    dumping block N (...)" instead of debugfs's "htree_dump_leaf_node: ...
 *    while reading block N (P)" followed by an empty line.
 *  - On a file system without metadata_csum, debugfs 1.47.0 complains for
 *    every index block that it "does not have space for checksum while
 *    calculating checksum"; debug4fs does not.
 *  - Corruption met by ls, htree_dump, cat, dump_inode or rdump is reported
 *    on stderr (with the library's description in parentheses) and makes the
 *    command fail; whatever was printed before stays printed.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include "debug4fs.h"
#include "ext4fs/array.h"
#include "ext4fs/codec.h"
#include "support/comerr.h"
#include "ext4fs/dir.h"
#include "ext4fs/dxhash.h"
#include "ext4fs/file.h"
#include "ext4fs/htree.h"
#include "ext4fs/namei.h"
#include "ext4fs/utf8fold.h"

/* ------------------------------------------------------------------ helpers */

static void restart_getopt(void)
{
	optind = 0;
	opterr = 1;
}

/* A line on stderr with no "who:" prefix, as debugfs's com_err(0, 0, ...) prints it. */
static int bare_error(struct dbg *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bare_error(struct dbg *d, const char *fmt, ...)
{
	va_list ap;

	fflush(d->out);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* "who: <strerror(errnum)> <context>" - a failed system call, the way com_err shows errno. */
static int sys_error(struct dbg *d, const char *who, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int sys_error(struct dbg *d, const char *who, int errnum, const char *fmt, ...)
{
	va_list ap;

	fflush(d->out);
	fprintf(stderr, "%s: %s ", who, strerror(errnum));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/*
 * "who: <library message> <context> (<what failed>)" right after a library
 * call returned err (so ext4fs_errmsg() describes this very failure).  who
 * may be NULL: debugfs then prints the message alone.
 */
static int lib_error(struct dbg *d, const char *who, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int lib_error(struct dbg *d, const char *who, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sup_vcom_err(who, err, d->fs, fmt, ap);
	va_end(ap);
	return 1;
}

/* Read an inode the way debugfs_read_inode() reports failures: "who: msg while reading inode N". */
static int read_inode_as(struct dbg *d, const char *who, uint32_t ino, struct ext4fs_inode *in)
{
	int err = ext4fs_inode_read(d->fs, ino, in);

	if (err)
		return lib_error(d, who, err, "while reading inode %u", ino);
	return 0;
}

/*
 * Small stack of the JSON containers opened, so a document can be closed
 * properly whatever point a walk stopped at (an htree walk opens a handful).
 */
#define JSTACK_MAX 32

struct jstack {
	struct json *j;
	char close[JSTACK_MAX];
	int n;
};

static void js_object(struct jstack *s, const char *key)
{
	json_object_begin(s->j, key);
	if (s->n < JSTACK_MAX)
		s->close[s->n++] = '}';
}

static void js_array(struct jstack *s, const char *key)
{
	json_array_begin(s->j, key);
	if (s->n < JSTACK_MAX)
		s->close[s->n++] = ']';
}

static void js_close(struct jstack *s)
{
	if (s->n <= 0)
		return;
	if (s->close[--s->n] == '}')
		json_object_end(s->j);
	else
		json_array_end(s->j);
}

/* Close containers until only depth of them are open. */
static void js_close_to(struct jstack *s, int depth)
{
	while (s->n > depth)
		js_close(s);
}

/* -------------------------------------------------------------------- ls */

#define LS_LONG      0x01
#define LS_PARSE     0x02
#define LS_DELETED   0x04
#define LS_RAW       0x08
#define LS_CSUM      0x10
#define LS_ENCRYPTED 0x20

#define LS_WIDTH 80

struct ls_state {
	struct dbg *d;
	FILE *f;
	struct jstack js;
	int json;
	unsigned opts;
	unsigned col;
	int failed;
	unsigned char *block;      /* for fetching checksum tails */
};

static int is_dot_or_dotdot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/*
 * Write a name the way debugfs's ls shows it (to f, unless f is NULL) and
 * return how many characters that takes: bytes outside printable ASCII and
 * backslashes become \xNN; names in an encrypted directory are replaced by
 * "<encrypted (len)>" unless -r was given.
 */
static size_t ls_show_name(FILE *f, const char *name, size_t len, unsigned opts)
{
	size_t width = 0;

	if ((opts & LS_ENCRYPTED) && !(opts & LS_RAW) && !is_dot_or_dotdot(name, len)) {
		char tag[32];
		int n = snprintf(tag, sizeof(tag), "<encrypted (%zu)>", len);
		if (f)
			fputs(tag, f);
		return (size_t)n;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c > 0x7e || c == '\\') {
			if (f)
				fprintf(f, "\\x%02x", c);
			width += 4;
		} else {
			if (f)
				fputc(c, f);
			width++;
		}
	}
	return width;
}

/* "21-Nov-2026 21:25" in local time, from the 32-bit mtime read as unsigned (as debugfs does). */
static void ls_date(char *buf, size_t len, uint32_t secs)
{
	static const char months[12][4] = {
		"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
	};
	time_t t = (time_t)secs;
	struct tm tm;

	if (!localtime_r(&t, &tm) || tm.tm_mon < 0 || tm.tm_mon > 11) {
		snprintf(buf, len, "%17s", "");
		return;
	}
	snprintf(buf, len, "%2d-%s-%4d %02d:%02d", tm.tm_mday, months[tm.tm_mon], 1900 + tm.tm_year,
		 tm.tm_hour, tm.tm_min);
}

/* Short format: add one piece of width columns, starting a new line when it would pass column 80. */
static void ls_wrap(struct ls_state *s, size_t width)
{
	if (s->col + width > LS_WIDTH) {
		fputc('\n', s->f);
		s->col = 0;
	}
	s->col += (unsigned)width;
}

static void ls_json_entry(struct ls_state *s, const struct ext4fs_dirent *de, int tail, uint32_t csum,
			  const struct ext4fs_inode *in)
{
	struct json *j = s->js.j;

	json_object_begin(j, NULL);
	json_uint(j, "inode", de->inode);
	json_uint(j, "rec_len", de->rec_len);
	json_uint(j, "name_len", de->name_len);
	json_uint(j, "file_type", de->file_type);
	json_string_len(j, "name", de->name, de->name_len);
	if (de->flags & EXT4FS_DIRENT_INLINE)
		json_string(j, "where", "i_block");
	else if (de->flags & EXT4FS_DIRENT_INLINE_EA)
		json_string(j, "where", "system.data");
	else
		json_uint(j, "block", de->lblk);
	json_uint(j, "offset", de->offset);
	json_bool(j, "deleted", (de->flags & EXT4FS_DIRENT_DELETED) != 0);
	if (tail) {
		json_bool(j, "checksum_tail", 1);
		json_uint(j, "checksum", csum);
	}
	if (in) {
		uint32_t ns;
		json_uint(j, "mode", in->i_mode);
		json_uint(j, "uid", ext4fs_inode_uid(in));
		json_uint(j, "gid", ext4fs_inode_gid(in));
		json_uint(j, "size", ext4fs_inode_size(in));
		json_int(j, "mtime", ext4fs_inode_time(in, 'm', &ns));
	}
	json_object_end(j);
}

static int ls_entry(const struct ext4fs_dirent *de, void *arg)
{
	struct ls_state *s = arg;
	struct dbg *d = s->d;
	FILE *f = s->f;
	int deleted = (de->flags & EXT4FS_DIRENT_DELETED) != 0;
	/* A tail found in slack space is listed as a deleted entry, as debugfs does. */
	int tail = (de->flags & EXT4FS_DIRENT_CSUM_TAIL) && !deleted;
	char open_br = deleted ? '<' : ' ', close_br = deleted ? '>' : ' ';
	uint32_t ino = deleted ? 0 : de->inode;   /* what -l and -p show */
	uint32_t csum = 0;
	struct ext4fs_inode in;
	int have_inode = 0;

	if (tail) {
		int err = ext4fs_block_read(d->fs, de->pblk, s->block);
		if (err) {
			lib_error(d, "ls", err, "while reading directory block %" PRIu64, de->pblk);
			s->failed = 1;
			return 0;
		}
		/* The tail is a 12-byte record whose last 4 bytes are the checksum. */
		csum = ext4fs_dirent_tail_csum_get(s->block + de->offset, EXT4FS_DIRENT_TAIL_SIZE);
	}
	memset(&in, 0, sizeof(in));
	if ((s->opts & (LS_LONG | LS_PARSE)) && ino && !tail) {
		/* An unreadable inode is reported and its entry left out, as debugfs does. */
		if (read_inode_as(d, de->name, ino, &in)) {
			s->failed = 1;
			return 0;
		}
		have_inode = 1;
	}

	if (s->json) {
		ls_json_entry(s, de, tail, csum, have_inode ? &in : NULL);
		return 0;
	}

	if (s->opts & LS_PARSE) {
		fprintf(f, "/%u/%06o/%d/%d/", ino, in.i_mode, (int)ext4fs_inode_uid(&in),
			(int)ext4fs_inode_gid(&in));
		/* The name stops at a NUL byte, as debugfs prints it with %.*s. */
		fwrite(de->name, 1, strnlen(de->name, de->name_len), f);
		if (EXT4FS_ISDIR(in.i_mode))
			fputs("//\n", f);
		else
			fprintf(f, "/%" PRIu64 "/\n", ext4fs_inode_size(&in));
		return 0;
	}

	if (s->opts & LS_LONG) {
		char date[40];

		fprintf(f, "%c%6u%c %6o ", open_br, ino, close_br, in.i_mode);
		if (tail) {
			fprintf(f, "(dirblock checksum: 0x%08x)\n", csum);
			return 0;
		}
		if (have_inode)
			ls_date(date, sizeof(date), in.i_mtime);
		else
			snprintf(date, sizeof(date), "%17s", "");
		fprintf(f, "(%d)  %5d  %5d   %5" PRIu64 " %s ", de->file_type,
			(int)ext4fs_inode_uid(&in), (int)ext4fs_inode_gid(&in),
			ext4fs_inode_size(&in), date);
		ls_show_name(f, de->name, de->name_len, s->opts);
		fputc('\n', f);
		return 0;
	}

	char head[96];
	if (tail) {
		int n = snprintf(head, sizeof(head), "%c%u%c (dirblock checksum: 0x%08x)   ", open_br,
				 de->inode, close_br, csum);
		ls_wrap(s, (size_t)n);
		fputs(head, f);
		return 0;
	}
	int n = snprintf(head, sizeof(head), "%c%u%c (%u) ", open_br, de->inode, close_br, de->rec_len);
	ls_wrap(s, (size_t)n + ls_show_name(NULL, de->name, de->name_len, s->opts) + 3);
	fputs(head, f);
	ls_show_name(f, de->name, de->name_len, s->opts);
	fputs("   ", f);
	return 0;
}

static int do_ls(struct dbg *d, int argc, char **argv)
{
	struct ls_state s = { .d = d, .f = d->out, .json = d->json };
	struct ext4fs_inode in;
	struct json j;
	unsigned iter = EXT4FS_DIR_ITER_EMPTY;
	uint32_t ino = d->cwd;
	const char *who = argc > 1 ? argv[1] : NULL;   /* debugfs names argv[1] in the error */
	int c, err;

	restart_getopt();
	while ((c = getopt(argc, argv, "cdlpr")) != -1) {
		switch (c) {
		case 'c': s.opts |= LS_CSUM; break;
		case 'd': s.opts |= LS_DELETED; break;
		case 'l': s.opts |= LS_LONG; break;
		case 'p': s.opts |= LS_PARSE; break;
		case 'r': s.opts |= LS_RAW; break;
		default:
			return bare_error(d, "Usage: ls [-c] [-d] [-l] [-p] [-r] file");
		}
	}
	if (argc > optind + 1)
		return bare_error(d, "Usage: ls [-c] [-d] [-l] [-p] [-r] file");
	if (argc == optind + 1 && dbg_parse_inode(d, argv[optind], &ino))
		return 1;
	if (read_inode_as(d, argv[0], ino, &in))
		return 1;
	if (in.i_flags & EXT4FS_ENCRYPT_FL)
		s.opts |= LS_ENCRYPTED;
	if (s.opts & LS_DELETED)
		iter |= EXT4FS_DIR_ITER_DELETED;
	if (s.opts & LS_CSUM) {
		iter |= EXT4FS_DIR_ITER_CSUM_TAIL;
		s.block = malloc(ext4fs_geom(d->fs)->block_size);
		if (!s.block) {
			lib_error(d, argv[0], EXT4FS_E_NO_MEMORY, "while listing the directory");
			return 1;
		}
	}
	if (s.json) {
		s.js.j = &j;
		json_init(&j, d->out);
		js_object(&s.js, NULL);
		json_string(&j, "directory", argc == optind + 1 ? argv[optind] : ".");
		json_uint(&j, "inode", ino);
		json_bool(&j, "encrypted", (s.opts & LS_ENCRYPTED) != 0);
		js_array(&s.js, "entries");
	}
	if (!EXT4FS_ISDIR(in.i_mode))
		err = EXT4FS_E_NOT_DIR;
	else
		err = ext4fs_dir_iterate(d->fs, ino, &in, iter, ls_entry, &s);
	if (s.json) {
		js_close_to(&s.js, 1);
		if (err)
			json_string(&j, "error", ext4fs_strerror(err));
		js_close_to(&s.js, 0);
		json_finish(&j);
	} else {
		fputc('\n', d->out);
	}
	free(s.block);
	if (err == EXT4FS_E_NOT_DIR && !EXT4FS_ISDIR(in.i_mode)) {
		sup_com_err(who, err, NULL);
		return 1;
	}
	if (err)
		return lib_error(d, who, err, "while listing the directory");
	return s.failed;
}

/* ------------------------------------------------------------ htree_dump */

struct ht_state {
	struct dbg *d;
	FILE *f;
	const char *who;
	struct jstack js;
	int json;
	unsigned col;
	int failed;
	int child_depth[8];   /* JSON: containers open before each level's current child */
};

static void ht_wrap(struct ht_state *s, const char *piece)
{
	size_t len = strlen(piece);

	if (s->col + len > LS_WIDTH) {
		fputc('\n', s->f);
		s->col = 0;
	}
	fputs(piece, s->f);
	s->col += (unsigned)len;
}

static void ht_text_index(struct ht_state *s, const struct ext4fs_htree_event *ev)
{
	const struct ext4fs_htree_node *node = ev->node;
	FILE *f = s->f;

	if (node->level == 0) {
		const struct ext4fs_htree_root *r = ev->root;
		fprintf(f, "Root node dump:\n");
		fprintf(f, "\t Reserved zero: %u\n", r->reserved_zero);
		fprintf(f, "\t Hash Version: %d\n", r->hash_version);
		fprintf(f, "\t Info length: %d\n", r->info_length);
		fprintf(f, "\t Indirect levels: %d\n", r->indirect_levels);
		fprintf(f, "\t Flags: %d\n", r->unused_flags);
	}
	fprintf(f, "Number of entries (count): %d\n", node->count);
	fprintf(f, "Number of entries (limit): %d\n", node->limit);
	if (node->has_tail) {
		fprintf(f, "Checksum: 0x%08x", node->csum);
		if (node->csum != node->csum_calc)
			fprintf(f, " --- EXPECTED: 0x%08x", node->csum_calc);
		fputc('\n', f);
	}
	for (unsigned i = 0; i < node->count; i++) {
		uint32_t h = node->entries[i].hash;
		fprintf(f, "Entry #%u: Hash 0x%08x%s, block %u\n", i, h, (h & 1) ? " (**)" : "",
			node->entries[i].block_raw);
	}
	fputc('\n', f);
}

static void ht_json_index(struct ht_state *s, const struct ext4fs_htree_event *ev)
{
	const struct ext4fs_htree_node *node = ev->node;
	struct json *j = s->js.j;

	if (node->level == 0) {
		const struct ext4fs_htree_root *r = ev->root;
		json_object_begin(j, "root");
		json_uint(j, "reserved_zero", r->reserved_zero);
		json_uint(j, "hash_version", r->hash_version);
		json_uint(j, "info_length", r->info_length);
		json_uint(j, "indirect_levels", r->indirect_levels);
		json_uint(j, "flags", r->unused_flags);
		json_int(j, "hash_version_used", r->hash_version_eff);
		json_object_end(j);
		js_object(&s->js, "index");
	} else {
		js_object(&s->js, "node");
	}
	json_uint(j, "level", node->level);
	json_uint(j, "block", node->lblk);
	json_uint(j, "pblk", node->pblk);
	json_uint(j, "count", node->count);
	json_uint(j, "limit", node->limit);
	if (node->has_tail) {
		json_uint(j, "checksum", node->csum);
		json_bool(j, "checksum_ok", node->csum == node->csum_calc);
	}
	js_array(&s->js, "entries");
}

static int ht_event(const struct ext4fs_htree_event *ev, void *arg)
{
	struct ht_state *s = arg;
	struct json *j = s->js.j;
	char piece[EXT4FS_NAME_LEN + 80];
	unsigned level = ev->node ? ev->node->level : 0;

	switch (ev->type) {
	case EXT4FS_HTREE_EV_INDEX:
		if (s->json)
			ht_json_index(s, ev);
		else
			ht_text_index(s, ev);
		break;
	case EXT4FS_HTREE_EV_CHILD: {
		const struct ext4fs_dx_entry *e = &ev->node->entries[ev->entry];
		if (s->json) {
			if (level < 8)
				s->child_depth[level] = s->js.n;
			js_object(&s->js, NULL);
			json_uint(j, "entry", ev->entry);
			json_uint(j, "hash", e->hash);
			json_uint(j, "block", e->block_raw);
		} else {
			fprintf(s->f, "Entry #%u: Hash 0x%08x, block %u\n", ev->entry, e->hash,
				e->block_raw);
		}
		break;
	}
	case EXT4FS_HTREE_EV_LEAF:
		if (s->json) {
			js_object(&s->js, "leaf");
			json_uint(j, "block", ev->leaf->lblk);
			json_uint(j, "pblk", ev->leaf->pblk);
			js_array(&s->js, "entries");
		} else {
			fprintf(s->f, "Reading directory block %u, phys %" PRIu64 "\n", ev->leaf->lblk,
				ev->leaf->pblk);
			s->col = 0;
		}
		break;
	case EXT4FS_HTREE_EV_DIRENT: {
		const struct ext4fs_dirent *de = ev->dirent;
		if (ev->hash_err) {
			/* Hashing records nothing on the handle: no detail to add. */
			fflush(s->f);
			fprintf(stderr, "htree_dump_leaf_node: %s while calculating hash\n",
				ext4fs_strerror(ev->hash_err));
			s->failed = 1;
		}
		if (s->json) {
			json_object_begin(j, NULL);
			json_uint(j, "inode", de->inode);
			json_uint(j, "hash", ev->hash);
			json_uint(j, "minor_hash", ev->minor_hash);
			if (ev->hash_approx)
				json_bool(j, "hash_approximate", 1);
			json_uint(j, "rec_len", de->rec_len);
			json_uint(j, "file_type", de->file_type);
			json_string_len(j, "name", de->name, de->name_len);
			json_object_end(j);
		} else {
			/* The name stops at a NUL byte, as debugfs prints it with %s. */
			snprintf(piece, sizeof(piece), "%u 0x%08x-%08x (%u) %s   ", de->inode, ev->hash,
				 ev->minor_hash, de->rec_len, de->name);
			ht_wrap(s, piece);
		}
		break;
	}
	case EXT4FS_HTREE_EV_LEAF_END:
		if (s->json) {
			js_close(&s->js);   /* entries */
			if (ev->leaf->has_tail) {
				json_uint(j, "checksum", ev->leaf->csum);
				json_bool(j, "checksum_ok", ev->leaf->csum == ev->leaf->csum_calc);
			}
			js_close(&s->js);   /* leaf */
			js_close(&s->js);   /* the parent's entry */
		} else {
			if (ev->leaf->has_tail) {
				snprintf(piece, sizeof(piece), "leaf block checksum: 0x%08x  ",
					 ev->leaf->csum);
				ht_wrap(s, piece);
			}
			fputc('\n', s->f);
			s->col = 0;
		}
		break;
	case EXT4FS_HTREE_EV_INDEX_END:
		if (s->json) {
			js_close(&s->js);   /* entries */
			js_close(&s->js);   /* node / index */
			if (level > 0)
				js_close(&s->js);   /* the parent's entry */
		} else {
			fprintf(s->f, "---------------------\n");
		}
		break;
	case EXT4FS_HTREE_EV_ERROR:
		s->failed = 1;
		if (s->json) {
			if (level < 8)
				js_close_to(&s->js, s->child_depth[level] + 1);
			json_string(j, "error", ext4fs_strerror(ev->err));
			json_string(j, "error_detail", ext4fs_errmsg(s->d->fs));
			js_close(&s->js);   /* the entry */
		} else {
			if (s->col) {
				fputc('\n', s->f);
				s->col = 0;
			}
			lib_error(s->d, s->who, ev->err, "while dumping block %u", ev->err_lblk);
		}
		break;
	}
	return 0;
}

static int do_htree_dump(struct dbg *d, int argc, char **argv)
{
	struct ht_state s = { .d = d, .f = d->out, .who = argv[0], .json = d->json };
	struct ext4fs_inode in;
	struct json j;
	uint32_t ino;
	int err;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (read_inode_as(d, argv[1], ino, &in))
		return 1;
	if (!EXT4FS_ISDIR(in.i_mode))
		return bare_error(d, "%s: Not a directory", argv[0]);
	if (!(in.i_flags & EXT4FS_INDEX_FL))
		return bare_error(d, "%s: Not a hash-indexed directory", argv[0]);
	if (s.json) {
		s.js.j = &j;
		json_init(&j, d->out);
		js_object(&s.js, NULL);
		json_string(&j, "directory", argv[1]);
		json_uint(&j, "inode", ino);
	}
	err = ext4fs_htree_walk(d->fs, ino, &in, EXT4FS_HTREE_WALK_CONTINUE, ht_event, &s);
	if (s.json) {
		js_close_to(&s.js, 1);
		if (err) {
			json_string(&j, "error", ext4fs_strerror(err));
			json_string(&j, "error_detail", ext4fs_errmsg(d->fs));
		}
		js_close_to(&s.js, 0);
		json_finish(&j);
	} else if (err && s.col) {
		fputc('\n', d->out);
	}
	if (err)
		return lib_error(d, argv[0], err, "while dumping the hash tree of inode %u", ino);
	return s.failed;
}

/* --------------------------------------------------------------- dx_hash */

#define DX_HASH_USAGE "dx_hash: usage: dx_hash [-h hash_alg] [-s hash_seed] [-c] [-e encoding] filename"

/*
 * A hash algorithm as -h takes it: a name (any case), "HASHALG_<n>", or
 * else whatever atoi() makes of it, as debugfs does.
 */
static int parse_hash_alg(const char *s)
{
	for (int v = 0; v <= EXT4FS_HASH_SIPHASH; v++) {
		const char *name = ext4fs_dx_hash_name(v);
		if (name && !strcasecmp(s, name))
			return v;
	}
	if (!strncasecmp(s, "HASHALG_", 8) && s[8]) {
		char *end;
		long v = strtol(s + 8, &end, 10);
		if (!*end && v >= 0 && v <= 255)
			return (int)v;
	}
	return atoi(s);
}

/* A UUID in its 36-character text form into 16 bytes; -1 if it is not one. */
static int parse_uuid(const char *s, unsigned char out[16])
{
	int n = 0;

	if (strlen(s) != 36)
		return -1;
	for (int i = 0; i < 36;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
			i++;
			continue;
		}
		int hi, lo;
		char c1 = s[i], c2 = s[i + 1];
		if (c1 == '-' || c2 == '-')
			return -1;
		hi = c1 >= '0' && c1 <= '9' ? c1 - '0' : c1 >= 'a' && c1 <= 'f' ? c1 - 'a' + 10 :
		     c1 >= 'A' && c1 <= 'F' ? c1 - 'A' + 10 : -1;
		lo = c2 >= '0' && c2 <= '9' ? c2 - '0' : c2 >= 'a' && c2 <= 'f' ? c2 - 'a' + 10 :
		     c2 >= 'A' && c2 <= 'F' ? c2 - 'A' + 10 : -1;
		if (hi < 0 || lo < 0)
			return -1;
		out[n++] = (unsigned char)(hi << 4 | lo);
		i += 2;
	}
	return 0;
}

static int do_dx_hash(struct dbg *d, int argc, char **argv)
{
	unsigned char seed_bytes[16] = { 0 };
	uint32_t seed[4] = { 0 }, hash = 0, minor = 0;
	const char *encoding = NULL, *seed_text = NULL;
	int version = EXT4FS_HASH_LEGACY, casefold = 0, verbose = 0, c, err;

	restart_getopt();
	while ((c = getopt(argc, argv, "h:s:ce:v")) != -1) {
		switch (c) {
		case 'h':
			version = parse_hash_alg(optarg);
			break;
		case 's':
			if (parse_uuid(optarg, seed_bytes))
				return bare_error(d, "Invalid UUID format: %s", optarg);
			seed_text = optarg;
			break;
		case 'c':
			casefold = 1;
			break;
		case 'e':
			if (strcmp(optarg, "utf8") && strcmp(optarg, "utf8-12.1"))
				return bare_error(d, "Invalid encoding: %s", optarg);
			encoding = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			return bare_error(d, DX_HASH_USAGE);
		}
	}
	if (optind != argc - 1)
		return bare_error(d, DX_HASH_USAGE);

	const char *name = argv[optind];
	size_t len = strlen(name);
	uint8_t folded[EXT4FS_UTF8_FOLD_MAX];
	const char *hashed = name;
	int n;

	ext4fs_hash_seed_decode(seed_bytes, seed);
	/* As in debugfs, names are folded only with both -c and an encoding;
	   an invalid UTF-8 name is hashed as it is, as the kernel does. */
	if (casefold && encoding && len && len <= EXT4FS_NAME_LEN) {
		n = ext4fs_utf8_casefold(name, len, folded, sizeof(folded));
		if (n >= 0) {
			hashed = (const char *)folded;
			len = (size_t)n;
		}
	}
	if (version == EXT4FS_HASH_SIPHASH || version < 0 || version > EXT4FS_HASH_SIPHASH)
		err = EXT4FS_E_UNKNOWN_HASH;
	else
		err = ext4fs_dx_hash(version, hashed, len, seed, &hash, &minor);
	if (err)
		return bare_error(d, "%s: Directory hash unsupported while calculating hash", argv[0]);
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_string(&j, "name", name);
		json_int(&j, "hash_version", version);
		json_string(&j, "hash_alg", ext4fs_dx_hash_name(version));
		json_string(&j, "seed", seed_text);
		json_bool(&j, "casefold", casefold && encoding);
		json_string(&j, "encoding", encoding);
		json_uint(&j, "hash", hash);
		json_uint(&j, "minor_hash", minor);
		json_object_end(&j);
		json_finish(&j);
		return 0;
	}
	if (verbose) {
		fprintf(d->out, "Hash algorithm: %s (%d)\n", ext4fs_dx_hash_name(version), version);
		fprintf(d->out, "Hash seed: %s\n", seed_text ? seed_text : "(default)");
		fprintf(d->out, "Casefold: %s\n", casefold && encoding ? encoding : "no");
	}
	fprintf(d->out, "Hash of %s is 0x%0x (minor 0x%0x)\n", name, hash, minor);
	return 0;
}

/* ---------------------------------------------------- dump_inode, cat, rdump */

#define COPY_CHUNK (1U << 20)

/* Write all of buf to fd; -1 with errno on failure. */
static int write_all(int fd, const unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * Copy the data of inode ino into fd (to out instead when out is not NULL).
 * When fd is a regular file, whole zero blocks are skipped with lseek and
 * the size is set at the end.  Errors are printed with who as debugfs's
 * dump_file does ("while reading ext2 file", "while writing file").
 * Returns nonzero on failure; *bytes gets the number of bytes produced.
 */
static int copy_inode_data(struct dbg *d, const char *who, uint32_t ino,
			   const struct ext4fs_inode *in, int fd, FILE *out, uint64_t *bytes)
{
	uint32_t bs = ext4fs_geom(d->fs)->block_size;
	uint64_t pos = 0, size = ext4fs_inode_size(in);
	unsigned char *buf = malloc(COPY_CHUNK);
	struct stat st;
	int sparse = 0, holes = 0, rc = 0;

	*bytes = 0;
	if (!buf)
		return lib_error(d, who, EXT4FS_E_NO_MEMORY, "while allocating memory");
	if (!out && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		sparse = 1;
	while (pos < size) {
		size_t got = 0;
		int err = ext4fs_file_read(d->fs, ino, in, pos, buf, COPY_CHUNK, &got);

		if (out) {
			if (got && fwrite(buf, 1, got, out) != got) {
				rc = sys_error(d, who, errno, "while writing file");
				break;
			}
		} else {
			for (size_t off = 0; off < got;) {
				size_t n = got - off < bs ? got - off : bs;
				if (sparse && all_zero(buf + off, n)) {
					if (lseek(fd, (off_t)n, SEEK_CUR) == (off_t)-1) {
						rc = sys_error(d, who, errno, "while writing file");
						break;
					}
					holes = 1;
				} else if (write_all(fd, buf + off, n)) {
					rc = sys_error(d, who, errno, "while writing file");
					break;
				}
				off += n;
			}
			if (rc)
				break;
		}
		pos += got;
		if (err) {
			rc = lib_error(d, who, err, "while reading ext2 file");
			break;
		}
		if (got == 0)
			break;
	}
	if (!rc && holes && ftruncate(fd, (off_t)pos))
		rc = sys_error(d, who, errno, "while writing file");
	*bytes = pos;
	free(buf);
	return rc;
}

/*
 * Give a dumped file or directory the inode's permission bits (setuid,
 * setgid and sticky are not carried over), owner and times, reporting each
 * failure the way debugfs does.  fd < 0: work on name.
 */
static int set_owner_mode_times(struct dbg *d, const char *who, const struct ext4fs_inode *in,
				int fd, const char *name)
{
	mode_t mode = in->i_mode & 0777;
	uid_t uid = (uid_t)ext4fs_inode_uid(in);
	gid_t gid = (gid_t)ext4fs_inode_gid(in);
	struct timespec ts[2];
	uint32_t ns;
	int rc = 0;

	if ((fd >= 0 ? fchmod(fd, mode) : chmod(name, mode)) == -1)
		rc = sys_error(d, who, errno, "while setting permissions of %s", name);
	if ((fd >= 0 ? fchown(fd, uid, gid) : chown(name, uid, gid)) == -1)
		rc = sys_error(d, who, errno, "while changing ownership of %s", name);
	ts[0].tv_sec = (time_t)ext4fs_inode_time(in, 'a', &ns);
	ts[0].tv_nsec = ns < 1000000000U ? (long)ns : 0;
	ts[1].tv_sec = (time_t)ext4fs_inode_time(in, 'm', &ns);
	ts[1].tv_nsec = ns < 1000000000U ? (long)ns : 0;
	if ((fd >= 0 ? futimens(fd, ts) : utimensat(AT_FDCWD, name, ts, 0)) == -1)
		rc = sys_error(d, who, errno, "while setting times of %s", name);
	return rc;
}

static int do_dump_inode(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	uint64_t bytes = 0;
	uint32_t ino;
	int preserve = 0, c, fd, rc;

	restart_getopt();
	while ((c = getopt(argc, argv, "p")) != -1) {
		if (c == 'p')
			preserve = 1;
		else
			return bare_error(d, "%s: Usage: dump_inode [-p] <file> <output_file>", argv[0]);
	}
	if (optind != argc - 2)
		return bare_error(d, "%s: Usage: dump_inode [-p] <file> <output_file>", argv[0]);
	const char *in_name = argv[optind], *out_name = argv[optind + 1];
	if (dbg_parse_inode(d, in_name, &ino))
		return 1;
	fd = open(out_name, O_CREAT | O_WRONLY | O_TRUNC, 0666);
	if (fd < 0)
		return sys_error(d, argv[0], errno, "while opening %s for dump_inode", out_name);
	rc = read_inode_as(d, argv[0], ino, &in);
	if (!rc) {
		rc = copy_inode_data(d, argv[0], ino, &in, fd, NULL, &bytes);
		if (preserve && set_owner_mode_times(d, "dump_file", &in, fd, out_name))
			rc = 1;
	}
	if (close(fd) != 0)
		rc = sys_error(d, argv[0], errno, "while closing %s for dump_inode", out_name);
	if (!rc && d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_string(&j, "file", in_name);
		json_uint(&j, "inode", ino);
		json_string(&j, "output", out_name);
		json_uint(&j, "bytes", bytes);
		json_bool(&j, "preserve", preserve);
		json_object_end(&j);
		json_finish(&j);
	}
	return rc;
}

static int do_cat(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	uint64_t bytes = 0;
	uint32_t ino;
	int rc;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (read_inode_as(d, argv[0], ino, &in))
		return 1;
	fflush(d->out);
	fflush(stderr);
	rc = copy_inode_data(d, argv[0], ino, &in, -1, d->out, &bytes);
	fflush(d->out);
	if (!rc && d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_string(&j, "file", argv[1]);
		json_uint(&j, "inode", ino);
		json_uint(&j, "bytes", bytes);
		json_object_end(&j);
		json_finish(&j);
	}
	return rc;
}

struct rdump {
	struct dbg *d;
	int failed;
	uint64_t files, dirs, symlinks, skipped, bytes;
	uint32_t *active;          /* directories being dumped, outermost first */
	size_t nactive, cap;
};

struct rdump_name {
	uint32_t ino;
	char name[EXT4FS_NAME_LEN + 1];
};

struct rdump_list {
	struct rdump_name *v;
	size_t n, cap;
};

static int rdump_collect(const struct ext4fs_dirent *de, void *arg)
{
	struct rdump_list *l = arg;

	if (l->n == l->cap) {
		struct rdump_name *v = ext4fs_array_grow(l->v, &l->cap, l->n + 1, sizeof(*v), 64);
		if (!v)
			return EXT4FS_E_NO_MEMORY;
		l->v = v;
	}
	l->v[l->n].ino = de->inode;
	memcpy(l->v[l->n].name, de->name, de->name_len);
	l->v[l->n].name[de->name_len] = '\0';
	l->n++;
	return 0;
}

static void rdump_inode(struct rdump *r, uint32_t ino, const struct ext4fs_inode *in,
			const char *name, const char *dir);

static void rdump_symlink(struct rdump *r, uint32_t ino, const struct ext4fs_inode *in,
			  const char *path)
{
	struct dbg *d = r->d;
	size_t cap = ext4fs_geom(d->fs)->block_size + 1, len = 0;
	char *target = malloc(cap);
	int err;

	if (!target) {
		r->failed = lib_error(d, "rdump", EXT4FS_E_NO_MEMORY, "while reading symlink %u", ino);
		return;
	}
	err = ext4fs_symlink_target(d->fs, ino, in, target, cap, &len);
	if (err) {
		r->failed = lib_error(d, "rdump", err, "while reading symlink %u", ino);
	} else if (symlink(target, path) == -1) {
		r->failed = sys_error(d, "rdump", errno, "while creating symlink %s -> %s", target, path);
	} else {
		r->symlinks++;
	}
	free(target);
}

static void rdump_file(struct rdump *r, uint32_t ino, const struct ext4fs_inode *in, const char *path)
{
	struct dbg *d = r->d;
	uint64_t bytes = 0;
	/* O_NOFOLLOW: never write through a symlink this dump made a moment ago. */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, S_IRWXU);

	if (fd == -1) {
		r->failed = sys_error(d, "rdump", errno, "while opening %s", path);
		return;
	}
	if (copy_inode_data(d, "rdump", ino, in, fd, NULL, &bytes))
		r->failed = 1;
	if (set_owner_mode_times(d, "dump_file", in, fd, path))
		r->failed = 1;
	if (close(fd) != 0)
		r->failed = sys_error(d, "rdump", errno, "while closing %s", path);
	r->files++;
	r->bytes += bytes;
}

static void rdump_dir(struct rdump *r, uint32_t ino, const struct ext4fs_inode *in,
		      const char *name, const char *path)
{
	struct dbg *d = r->d;
	struct rdump_list list = { 0 };
	int err;

	for (size_t i = 0; i < r->nactive; i++) {
		if (r->active[i] == ino) {
			fflush(d->out);
			fprintf(stderr, "rdump: directory loop: inode %u is already being dumped, not descending into %s\n",
				ino, path);
			r->failed = 1;
			return;
		}
	}
	/* 0700 while the entries are written; the real mode comes afterwards. */
	if (name[0] && mkdir(path, S_IRWXU) == -1) {
		r->failed = sys_error(d, "rdump", errno, "while making directory %s", path);
		return;
	}
	r->dirs++;
	if (r->nactive == r->cap) {
		uint32_t *v = ext4fs_array_grow(r->active, &r->cap, r->nactive + 1, sizeof(*v), 16);
		if (!v) {
			r->failed = lib_error(d, "rdump", EXT4FS_E_NO_MEMORY, "while dumping %s", path);
			return;
		}
		r->active = v;
	}
	r->active[r->nactive++] = ino;
	err = ext4fs_dir_iterate(d->fs, ino, in, 0, rdump_collect, &list);
	if (err)   /* reported now, while the handle still describes it */
		r->failed = lib_error(d, "rdump", err, "while dumping %s", path);
	for (size_t i = 0; i < list.n; i++) {
		struct ext4fs_inode child;
		if (!list.v[i].name[0] || strchr(list.v[i].name, '/')) {
			/* Only a corrupt directory has these; never write outside path. */
			fflush(d->out);
			fprintf(stderr, "rdump: skipping an entry of %s with an empty name or a '/' in it (inode %u)\n",
				path, list.v[i].ino);
			r->failed = 1;
			continue;
		}
		if (read_inode_as(d, list.v[i].name, list.v[i].ino, &child)) {
			r->failed = 1;
			continue;
		}
		rdump_inode(r, list.v[i].ino, &child, list.v[i].name, path);
	}
	r->nactive--;
	free(list.v);
	if (set_owner_mode_times(d, "rdump", in, -1, path))
		r->failed = 1;
}

static void rdump_inode(struct rdump *r, uint32_t ino, const struct ext4fs_inode *in,
			const char *name, const char *dir)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *path = malloc(len);

	if (!path) {
		r->failed = lib_error(r->d, "rdump", EXT4FS_E_NO_MEMORY, "while dumping %s", name);
		return;
	}
	snprintf(path, len, "%s/%s", dir, name);
	if (EXT4FS_ISLNK(in->i_mode))
		rdump_symlink(r, ino, in, path);
	else if (EXT4FS_ISREG(in->i_mode))
		rdump_file(r, ino, in, path);
	else if (EXT4FS_ISDIR(in->i_mode) && strcmp(name, ".") && strcmp(name, ".."))
		rdump_dir(r, ino, in, name, path);
	else if (!EXT4FS_ISDIR(in->i_mode))
		r->skipped++;   /* devices, fifos, sockets: nothing to write */
	free(path);
}

static int do_rdump(struct dbg *d, int argc, char **argv)
{
	struct rdump r = { .d = d };
	struct stat st;

	if (argc < 3)
		return bare_error(d, "%s: Usage: %s <directory>... <native directory>", argv[0], argv[0]);
	const char *dest = argv[argc - 1];
	if (stat(dest, &st) == -1)
		return sys_error(d, "rdump", errno, "while statting %s", dest);
	if (!S_ISDIR(st.st_mode))
		return bare_error(d, "rdump: %s is not a directory", dest);
	for (int i = 1; i < argc - 1; i++) {
		struct ext4fs_inode in;
		uint32_t ino;
		const char *base;

		if (dbg_parse_inode(d, argv[i], &ino)) {
			r.failed = 1;
			continue;
		}
		if (read_inode_as(d, argv[i], ino, &in)) {
			r.failed = 1;
			continue;
		}
		base = strrchr(argv[i], '/');
		base = base ? base + 1 : argv[i];
		rdump_inode(&r, ino, &in, base, dest);
	}
	free(r.active);
	if (!r.failed && d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "sources");
		for (int i = 1; i < argc - 1; i++)
			json_string(&j, NULL, argv[i]);
		json_array_end(&j);
		json_string(&j, "destination", dest);
		json_uint(&j, "files", r.files);
		json_uint(&j, "directories", r.dirs);
		json_uint(&j, "symlinks", r.symlinks);
		json_uint(&j, "skipped", r.skipped);
		json_uint(&j, "bytes", r.bytes);
		json_object_end(&j);
		json_finish(&j);
	}
	return r.failed;
}

const struct dbg_cmd dbg_cmds_dir[] = {
	{ { "list_directory", "ls", NULL }, do_ls, 1, "List directory" },
	{ { "htree_dump", "htree", NULL }, do_htree_dump, 1, "Dump a hash-indexed directory" },
	{ { "dx_hash", "hash", NULL }, do_dx_hash, 0, "Calculate the directory hash of a filename" },
	{ { "dump_inode", "dump", NULL }, do_dump_inode, 1, "Dump an inode out to a file" },
	{ { "cat", NULL }, do_cat, 1, "Dump an inode out to stdout" },
	{ { "rdump", NULL }, do_rdump, 1, "Recursively dump a directory to the native filesystem" },
	{ { NULL }, NULL, 0, NULL },
};
