/*
 * opsmodel.c - random operation sequences through libext4fs, checked
 * against an in-memory model of the tree and judged by the real e2fsck.
 *
 *   opsmodel [options] IMAGE
 *     -b BS        block size (1024 or 4096; default 4096)
 *     -n BLOCKS    file system size in blocks (default 16384)
 *     -C           without metadata_csum (uninit_bg instead)
 *     -F           without flex_bg
 *     -E           without extents (block-mapped files)
 *     -s SEED      random seed (default 1)
 *     -B BATCHES   batches (default 10); e2fsck -fn and a full model check after each
 *                  (and e4fsck -fn too when OPSMODEL_E4FSCK names it)
 *     -o OPS       operations per batch (default 300)
 *     -f           fill mode: write files until ENOSPC, check, delete everything, check
 *     -J N         journalled mode (txn.h): commit every N operations; before each
 *                  check the handle leaves journalled mode (commit, checkpoint) and
 *                  enters it again after
 *     -M FILE      with -J: before opening and after every commit, append the
 *                  number of commits so far and the hash of the model's tree
 *                  (names, types, modes, sizes, link counts, contents,
 *                  symlink targets) to FILE: the states a crash may leave;
 *                  before each commit the state it will make, as "+N HASH"
 *     -P           print the hash of IMAGE's tree, computed the same way from
 *                  the disk, and exit (the image is not changed)
 *     -K SPEC      open the image through the fault-injecting channel
 *                  (io_fault.h: "write=K,mode=stop|tear|fail,lose=none|all|SEED");
 *                  once the fault has struck, the first error exits with status 3,
 *                  as a killed process would leave things; the counts of writes
 *                  and flushes are printed at the end of a run it did not stop
 *     -U FILE      write an undo file (undo.h) for everything the run changes
 *     -S           begin with a scripted sequence (a file whose extent tree grows
 *                  to depth 2 and is then cut and punched; a directory of 150
 *                  names, which becomes an htree and splits its leaves;
 *                  extended attributes set, replaced and removed, in the inode and
 *                  in a block), committing every few steps with -J, then go on
 *                  with the random operations
 *     -R           use IMAGE as it is (a new, empty file system made by another
 *                  tool, such as mke2fs -t ext2) instead of making one
 *     -X END       with -J: end after the last batch's operations and a commit,
 *                  without the last check: "crash" exits at once, leaving the
 *                  log to replay (needs_recovery set); "clean" leaves journalled
 *                  mode (checkpoint) and closes.  The two images of one seed
 *                  must agree once the crash image is replayed.
 *
 * The image is made with the library's mkfs engine (mke2fs's ext4 defaults
 * adjusted by the flags).  Exit 0 when every check passed, 1 on the first
 * mismatch or e2fsck complaint (the message says which operation, with the
 * seed, so a failure replays exactly), 77 when e2fsck is not installed.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/alloc.h"
#include "ext4fs/dir.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/mkfs.h"
#include "ext4fs/io_fault.h"
#include "ext4fs/txn.h"
#include "ext4fs/xattr.h"
#include "ext4fs/undo.h"

#define MAX_FILE (192U * 1024)
#define NAMES 160

struct fobj {                  /* one inode of the model */
	uint32_t ino;
	int is_dir;
	int nlink;                 /* files: names pointing at it */
	unsigned char *data;       /* files: expected contents */
	size_t size;
	char *target;              /* symlinks */
	struct xattr_model {       /* user.* attributes, in the order set */
		char name[32];
		unsigned char *value;
		size_t len;
	} *xattrs;
	size_t nxattrs;
};

struct node {                  /* one name */
	char name[16];
	struct node *parent;
	struct fobj *obj;
	struct node **kids;        /* directories */
	size_t nkids, capkids;
};

static struct ext4fs_fs *fs;
static const char *image;
static uint64_t rng_state;
static unsigned long op_no;
static struct node root_node;
static unsigned long done_ops[11];   /* operations that changed the tree, by kind (for the summary) */
static struct fobj root_obj = { .ino = EXT4FS_ROOT_INO, .is_dir = 1 };
static uint32_t commit_every;        /* -J: journalled mode, a commit every this many operations */

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return n ? (uint32_t)((rng_state >> 33) % n) : 0;
}

static struct ext4fs_io *fault_io;   /* -K: the fault channel under the handle */
static int closing;                  /* the last close runs: fault_io goes away in it */

/* After the fault struck, an error is the end of the run, not a finding. */
static int fault_struck(void)
{
	struct ext4fs_io_fault_counts c;
	if (closing)
		return 1;   /* the channel is gone; only the fault makes a close fail with EIO */
	ext4fs_io_fault_counts(fault_io, &c);
	return c.triggered;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	if (fault_io && fault_struck()) {
		printf("opsmodel: stopped by the fault (op %lu)\n", op_no);
		fflush(stdout);
		_exit(3);
	}
	fprintf(stderr, "opsmodel: op %lu: ", op_no);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " [%s]\n", fs ? ext4fs_errmsg(fs) : "");
	exit(1);
}

static void check(int err, const char *what)
{
	if (err && fault_io && (!closing || err == -EIO) && fault_struck()) {
		printf("opsmodel: stopped by the fault at %s (op %lu)\n", what, op_no);
		fflush(stdout);
		_exit(3);
	}
	if (err)
		die("%s: %s", what, ext4fs_strerror(err));
}

/* -- model helpers -- */

static void path_of(const struct node *n, char *buf, size_t len)
{
	if (!n->parent) {
		snprintf(buf, len, "/");
		return;
	}
	char up[4096];
	size_t used;
	path_of(n->parent, up, sizeof(up));
	used = (size_t)snprintf(buf, len, "%s", strcmp(up, "/") ? up : "");
	if (used < len)
		snprintf(buf + used, len - used, "/%s", n->name);
}

static struct node *kid(struct node *dir, const char *name)
{
	for (size_t i = 0; i < dir->nkids; i++)
		if (!strcmp(dir->kids[i]->name, name))
			return dir->kids[i];
	return NULL;
}

static void kid_add(struct node *dir, struct node *n)
{
	if (dir->nkids == dir->capkids) {
		dir->capkids = dir->capkids ? dir->capkids * 2 : 8;
		dir->kids = realloc(dir->kids, dir->capkids * sizeof(*dir->kids));
		if (!dir->kids)
			die("out of memory");
	}
	dir->kids[dir->nkids++] = n;
	n->parent = dir;
}

static void kid_remove(struct node *dir, struct node *n)
{
	for (size_t i = 0; i < dir->nkids; i++)
		if (dir->kids[i] == n) {
			dir->kids[i] = dir->kids[--dir->nkids];
			return;
		}
}

/* Every node, for picking at random. */
static struct node **all;
static size_t nall, capall;

static void collect(struct node *n)
{
	if (nall == capall) {
		capall = capall ? capall * 2 : 256;
		all = realloc(all, capall * sizeof(*all));
		if (!all)
			die("out of memory");
	}
	all[nall++] = n;
	if (n->obj->is_dir)
		for (size_t i = 0; i < n->nkids; i++)
			collect(n->kids[i]);
}

static struct node *pick(int want_dir, int want_file)
{
	nall = 0;
	collect(&root_node);
	for (int tries = 0; tries < 50; tries++) {
		struct node *n = all[rnd((uint32_t)nall)];
		if (want_dir && !n->obj->is_dir)
			continue;
		if (want_file && (n->obj->is_dir || n->obj->target))
			continue;
		return n;
	}
	return want_dir ? &root_node : NULL;
}

static int subdirs(const struct node *d)
{
	int n = 0;
	for (size_t i = 0; i < d->nkids; i++)
		n += d->kids[i]->obj->is_dir;
	return n;
}

static void random_name(char *buf)
{
	snprintf(buf, 16, "n%u", rnd(NAMES));
}

static void fill_random(unsigned char *p, size_t n)
{
	uint32_t v = rnd(0xFFFFFFFFU);
	for (size_t i = 0; i < n; i++) {
		v = v * 1103515245U + 12345U;
		p[i] = (unsigned char)(v >> 16);
	}
}

/* -- operations -- */

static struct ext4fs_new_attrs file_attrs = { .mode = EXT4FS_S_IFREG | 0644, .uid = 1000, .gid = 1000 };
static struct ext4fs_new_attrs dir_attrs = { .mode = EXT4FS_S_IFDIR | 0755, .uid = 1000, .gid = 1000 };

static void op_create(void)
{
	struct node *d = pick(1, 0), *n;
	char name[16];
	uint32_t ino;
	random_name(name);
	int err = ext4fs_mknod(fs, d->obj->ino, name, &file_attrs, &ino);
	if (kid(d, name)) {
		if (err != EXT4FS_E_EXISTS)
			die("create over an existing name returned %d", err);
		return;
	}
	check(err, "create");
	n = calloc(1, sizeof(*n));
	n->obj = calloc(1, sizeof(*n->obj));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->obj->ino = ino;
	n->obj->nlink = 1;
	kid_add(d, n);
	done_ops[0]++;
}

static void op_write(int append)
{
	struct node *n = pick(0, 1);
	struct fobj *o;
	struct ext4fs_inode in;
	if (!n)
		return;
	o = n->obj;
	size_t off = append ? o->size : rnd((uint32_t)(o->size + 65536));
	size_t len = 1 + rnd(append ? 8192 : 65536);
	if (off + len > MAX_FILE)
		return;
	unsigned char *buf = malloc(len);
	fill_random(buf, len);
	check(ext4fs_inode_read(fs, o->ino, &in), "read inode");
	int err = ext4fs_file_write(fs, o->ino, &in, off, buf, len, 0);
	if (err == EXT4FS_E_NO_SPACE) {
		free(buf);
		return;     /* the model cannot know how much landed; the fill test covers ENOSPC */
	}
	check(err, "write");
	if (off + len > o->size) {
		o->data = realloc(o->data, off + len);
		memset(o->data + o->size, 0, off + len - o->size);
		o->size = off + len;
	}
	memcpy(o->data + off, buf, len);
	free(buf);
	done_ops[1]++;
}

static void op_truncate(void)
{
	struct node *n = pick(0, 1);
	struct ext4fs_inode in;
	if (!n)
		return;
	struct fobj *o = n->obj;
	size_t size = rnd((uint32_t)(o->size + o->size / 2 + 2));
	if (size > MAX_FILE)
		size = MAX_FILE;
	check(ext4fs_inode_read(fs, o->ino, &in), "read inode");
	check(ext4fs_file_truncate(fs, o->ino, &in, size), "truncate");
	if (size > o->size) {
		o->data = realloc(o->data, size);
		memset(o->data + o->size, 0, size - o->size);
	}
	o->size = size;
	done_ops[2]++;
}

static void op_punch(void)
{
	struct node *n = pick(0, 1);
	struct ext4fs_inode in;
	if (!n || !n->obj->size)
		return;
	struct fobj *o = n->obj;
	size_t off = rnd((uint32_t)o->size), len = 1 + rnd((uint32_t)o->size);
	check(ext4fs_inode_read(fs, o->ino, &in), "read inode");
	check(ext4fs_file_punch(fs, o->ino, &in, off, len), "punch");
	if (off < o->size)
		memset(o->data + off, 0, (off + len > o->size ? o->size : off + len) - off);
	done_ops[3]++;
}

static void free_node(struct node *n)
{
	if (n->obj->is_dir || --n->obj->nlink == 0) {
		for (size_t i = 0; i < n->obj->nxattrs; i++)
			free(n->obj->xattrs[i].value);
		free(n->obj->xattrs);
		free(n->obj->data);
		free(n->obj->target);
		free(n->obj);
	}
	free(n->kids);
	free(n);
}

static void op_unlink(void)
{
	struct node *n = pick(0, 0);
	if (!n || !n->parent)
		return;
	int err = ext4fs_unlink(fs, n->parent->obj->ino, n->name);
	if (n->obj->is_dir) {
		if (err != EXT4FS_E_IS_DIR)
			die("unlink of a directory returned %d", err);
		return;
	}
	check(err, "unlink");
	kid_remove(n->parent, n);
	free_node(n);
	done_ops[4]++;
}

static void op_mkdir(void)
{
	struct node *d = pick(1, 0), *n;
	char name[16];
	uint32_t ino;
	random_name(name);
	int err = ext4fs_mkdir(fs, d->obj->ino, name, &dir_attrs, &ino);
	if (kid(d, name)) {
		if (err != EXT4FS_E_EXISTS)
			die("mkdir over an existing name returned %d", err);
		return;
	}
	check(err, "mkdir");
	n = calloc(1, sizeof(*n));
	n->obj = calloc(1, sizeof(*n->obj));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->obj->ino = ino;
	n->obj->is_dir = 1;
	kid_add(d, n);
	done_ops[5]++;
}

static void op_rmdir(void)
{
	struct node *n = pick(1, 0);
	if (!n || !n->parent)
		return;
	int err = ext4fs_rmdir(fs, n->parent->obj->ino, n->name);
	if (n->nkids) {
		if (err != EXT4FS_E_DIR_NOT_EMPTY)
			die("rmdir of a non-empty directory returned %d", err);
		return;
	}
	check(err, "rmdir");
	kid_remove(n->parent, n);
	free_node(n);
	done_ops[6]++;
}

static void op_link(void)
{
	struct node *f = pick(0, 1), *d = pick(1, 0), *n;
	char name[16];
	if (!f)
		return;
	random_name(name);
	int err = ext4fs_link(fs, d->obj->ino, name, f->obj->ino);
	if (kid(d, name)) {
		if (err != EXT4FS_E_EXISTS)
			die("link over an existing name returned %d", err);
		return;
	}
	check(err, "link");
	n = calloc(1, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->obj = f->obj;
	f->obj->nlink++;
	kid_add(d, n);
	done_ops[7]++;
}

static void op_symlink(void)
{
	struct node *d = pick(1, 0), *n;
	char name[16], target[300];
	uint32_t ino;
	struct ext4fs_new_attrs a = { .mode = 0777 };
	size_t tlen = 1 + rnd(200);
	for (size_t i = 0; i < tlen; i++)
		target[i] = (char)('a' + rnd(26));
	target[tlen] = '\0';
	random_name(name);
	int err = ext4fs_symlink(fs, d->obj->ino, name, target, &a, &ino);
	if (kid(d, name)) {
		if (err != EXT4FS_E_EXISTS)
			die("symlink over an existing name returned %d", err);
		return;
	}
	check(err, "symlink");
	n = calloc(1, sizeof(*n));
	n->obj = calloc(1, sizeof(*n->obj));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->obj->ino = ino;
	n->obj->nlink = 1;
	n->obj->target = strdup(target);
	kid_add(d, n);
	done_ops[8]++;
}

static int is_ancestor(const struct node *a, const struct node *n)
{
	for (; n; n = n->parent)
		if (n == a)
			return 1;
	return 0;
}

static void op_rename(void)
{
	struct node *s = pick(0, 0), *d = pick(1, 0), *t;
	char name[16];
	if (!s || !s->parent)
		return;
	random_name(name);
	t = kid(d, name);
	int err = ext4fs_rename(fs, s->parent->obj->ino, s->name, d->obj->ino, name);
	int expect = 0;
	if (s->obj->is_dir && is_ancestor(s, d))
		expect = EXT4FS_E_INVALID_ARG;
	else if (t && t->obj == s->obj)
		expect = 0;
	else if (t && s->obj->is_dir && !t->obj->is_dir)
		expect = EXT4FS_E_NOT_DIR;
	else if (t && !s->obj->is_dir && t->obj->is_dir)
		expect = EXT4FS_E_IS_DIR;
	else if (t && t->obj->is_dir && t->nkids)
		expect = EXT4FS_E_DIR_NOT_EMPTY;
	if (err != expect)
		die("rename returned %d (%s), expected %d", err, ext4fs_strerror(err), expect);
	if (expect || (t && t->obj == s->obj))
		return;
	if (t) {
		kid_remove(d, t);
		free_node(t);
	}
	kid_remove(s->parent, s);
	snprintf(s->name, sizeof(s->name), "%s", name);
	kid_add(d, s);
	done_ops[9]++;
}

/* -- checks -- */

static void run_fsck(const char *when)
{
	char cmd[1024];
	if (commit_every)
		check(ext4fs_txn_stop(fs), "leaving journalled mode");
	check(ext4fs_flush(fs), "flush");
	snprintf(cmd, sizeof(cmd), "e2fsck -fn '%s' >'%s.fsck.log' 2>&1", image, image);
	int rc = system(cmd);
	if (rc != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s.fsck.log' >&2", image);
		if (system(cmd)) {}
		die("e2fsck -fn is not clean %s", when);
	}
	/* A second judge when asked: our own checker must agree the image is clean. */
	const char *e4fsck = getenv("OPSMODEL_E4FSCK");
	if (e4fsck && *e4fsck) {
		snprintf(cmd, sizeof(cmd), "'%s' -fn '%s' >'%s.e4fsck.log' 2>&1", e4fsck, image, image);
		if (system(cmd) != 0) {
			snprintf(cmd, sizeof(cmd), "cat '%s.e4fsck.log' >&2", image);
			if (system(cmd)) {}
			die("e4fsck -fn is not clean %s (e2fsck is)", when);
		}
	}
	if (commit_every)
		check(ext4fs_txn_start(fs), "entering journalled mode");
}

struct seen { const struct node *dir; size_t count; int bad; };

static int count_entry(const struct ext4fs_dirent *de, void *arg)
{
	struct seen *s = arg;
	char name[256];
	if ((de->name_len == 1 && de->name[0] == '.') ||
	    (de->name_len == 2 && !memcmp(de->name, "..", 2)))
		return 0;
	memcpy(name, de->name, de->name_len);
	name[de->name_len] = '\0';
	if (!s->dir->parent && !strcmp(name, "lost+found"))
		return 0;
	struct node *k = kid((struct node *)s->dir, name);
	if (!k || k->obj->ino != de->inode) {
		fprintf(stderr, "unexpected entry %s -> %u\n", name, de->inode);
		s->bad = 1;
	}
	s->count++;
	return 0;
}

static void check_node(struct node *n)
{
	struct ext4fs_inode in;
	char path[4096];
	path_of(n, path, sizeof(path));
	check(ext4fs_inode_read(fs, n->obj->ino, &in), path);
	if (n->obj->is_dir) {
		struct seen s = { n, 0, 0 };
		uint32_t want = (uint32_t)(2 + subdirs(n) + (n->parent ? 0 : 1));
		if (!EXT4FS_ISDIR(in.i_mode))
			die("%s is not a directory on disk", path);
		if (in.i_links_count != want)
			die("%s: %u links, model says %u", path, in.i_links_count, want);
		check(ext4fs_dir_iterate(fs, n->obj->ino, &in, 0, count_entry, &s), path);
		if (s.bad || s.count != n->nkids)
			die("%s: %zu entries on disk, %zu in the model", path, s.count, n->nkids);
		for (size_t i = 0; i < n->nkids; i++)
			check_node(n->kids[i]);
		return;
	}
	if (in.i_links_count != (uint32_t)n->obj->nlink)
		die("%s: %u links, model says %d", path, in.i_links_count, n->obj->nlink);
	if (n->obj->target) {
		char buf[300];
		size_t len;
		check(ext4fs_symlink_target(fs, n->obj->ino, &in, buf, sizeof(buf), &len), path);
		if (len != strlen(n->obj->target) || memcmp(buf, n->obj->target, len))
			die("%s: symlink target differs", path);
		return;
	}
	if (ext4fs_inode_size(&in) != n->obj->size)
		die("%s: size %llu, model says %zu", path, (unsigned long long)ext4fs_inode_size(&in),
		    n->obj->size);
	unsigned char *buf = malloc(n->obj->size + 1);
	size_t got = 0;
	check(ext4fs_file_read(fs, n->obj->ino, &in, 0, buf, n->obj->size, &got), path);
	if (got != n->obj->size || (got && memcmp(buf, n->obj->data, got)))
		die("%s: contents differ from the model", path);
	free(buf);
}

/* -- manifests: one hash for a whole tree, from the model or from the disk -- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001B3ULL;
	return h;
}

#define FNV_START 0xCBF29CE484222325ULL

/* One entry: its line goes into the tree's hash. */
static uint64_t manifest_line(uint64_t h, const char *path, char type, unsigned mode, uint64_t size,
			      unsigned nlink, uint64_t content, const char *target)
{
	char line[4096 + 600];
	int n = snprintf(line, sizeof(line), "%s %c %o %llu %u %016llx %s\n", path, type, mode,
			 (unsigned long long)size, nlink, (unsigned long long)content, target ? target : "-");
	/* OPSMODEL_SHOW=1 prints the lines, to see where two trees part. */
	if (getenv("OPSMODEL_SHOW"))
		fputs(line, stderr);
	return fnv(h, line, (size_t)n);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_xattr_model(const void *a, const void *b)
{
	return strcmp(((const struct xattr_model *)a)->name, ((const struct xattr_model *)b)->name);
}

/* The attributes of a model inode, sorted by name, into the hash. */
static uint64_t model_xattrs_hash(const struct fobj *o, uint64_t h)
{
	struct xattr_model *v;
	if (!o->nxattrs)
		return h;
	v = malloc(o->nxattrs * sizeof(*v));
	memcpy(v, o->xattrs, o->nxattrs * sizeof(*v));
	qsort(v, o->nxattrs, sizeof(*v), cmp_xattr_model);
	for (size_t i = 0; i < o->nxattrs; i++) {
		char line[128];
		int n = snprintf(line, sizeof(line), "  xattr %s %zu %016llx\n", v[i].name, v[i].len,
				 (unsigned long long)fnv(FNV_START, v[i].value, v[i].len));
		if (getenv("OPSMODEL_SHOW"))
			fputs(line, stderr);
		h = fnv(h, line, (size_t)n);
	}
	free(v);
	return h;
}

static uint64_t model_hash(const struct node *dir, uint64_t h)
{
	const char **names = malloc((dir->nkids + 1) * sizeof(*names));
	char path[4096];

	for (size_t i = 0; i < dir->nkids; i++)
		names[i] = dir->kids[i]->name;
	qsort(names, dir->nkids, sizeof(*names), cmp_names);
	for (size_t i = 0; i < dir->nkids; i++) {
		struct node *k = kid((struct node *)dir, names[i]);
		const struct fobj *o = k->obj;
		path_of(k, path, sizeof(path));
		if (o->is_dir) {
			h = manifest_line(h, path, 'd', EXT4FS_S_IFDIR | 0755, 0, (unsigned)(2 + subdirs(k)), 0, NULL);
			h = model_xattrs_hash(o, h);
			h = model_hash(k, h);
		} else if (o->target) {
			h = manifest_line(h, path, 'l', EXT4FS_S_IFLNK | 0777, strlen(o->target), (unsigned)o->nlink, 0,
					  o->target);
		} else {
			h = manifest_line(h, path, 'f', EXT4FS_S_IFREG | 0644, o->size, (unsigned)o->nlink,
					  fnv(FNV_START, o->data, o->size), NULL);
			h = model_xattrs_hash(o, h);
		}
	}
	free(names);
	return h;
}

struct name_list { char **v; size_t n, cap; uint32_t *ino; };

static int list_entry(const struct ext4fs_dirent *de, void *arg)
{
	struct name_list *l = arg;
	if ((de->name_len == 1 && de->name[0] == '.') || (de->name_len == 2 && !memcmp(de->name, "..", 2)))
		return 0;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			die("out of memory");
	}
	l->v[l->n] = malloc(de->name_len + 1 + 4);
	memcpy(l->v[l->n], de->name, de->name_len);
	l->v[l->n][de->name_len] = '\0';
	/* The inode number rides after the name's NUL so sorting keeps them together. */
	memcpy(l->v[l->n] + de->name_len + 1, &de->inode, 4);
	l->n++;
	return 0;
}

struct xattr_list { struct xattr_model *v; size_t n, cap; };

static int collect_xattr(const struct ext4fs_xattr *x, void *arg)
{
	struct xattr_list *l = arg;
	if (strncmp(x->name, "user.", 5))
		return 0;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			die("out of memory");
	}
	snprintf(l->v[l->n].name, sizeof(l->v[l->n].name), "%s", x->name);
	l->v[l->n].value = malloc(x->value_len + 1);
	if (x->value)
		memcpy(l->v[l->n].value, x->value, x->value_len);
	l->v[l->n].len = x->value_len;
	l->n++;
	return 0;
}

/* The user.* attributes on the disk, hashed as model_xattrs_hash() does. */
static uint64_t disk_xattrs_hash(uint32_t ino, const struct ext4fs_inode *in, const char *path, uint64_t h)
{
	struct xattr_list l = { 0 };
	struct fobj o = { 0 };
	check(ext4fs_xattr_iterate(fs, ino, in, 0, collect_xattr, &l), path);
	o.xattrs = l.v;
	o.nxattrs = l.n;
	h = model_xattrs_hash(&o, h);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].value);
	free(l.v);
	return h;
}

static uint64_t disk_hash(uint32_t dir_ino, const char *dir_path, uint64_t h)
{
	struct name_list l = { 0 };
	struct ext4fs_inode din;
	char path[4096];

	check(ext4fs_inode_read(fs, dir_ino, &din), dir_path);
	check(ext4fs_dir_iterate(fs, dir_ino, &din, 0, list_entry, &l), dir_path);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_names);
	for (size_t i = 0; i < l.n; i++) {
		struct ext4fs_inode in;
		uint32_t ino;
		memcpy(&ino, l.v[i] + strlen(l.v[i]) + 1, 4);
		if (dir_ino == EXT4FS_ROOT_INO && !strcmp(l.v[i], "lost+found")) {
			free(l.v[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", strcmp(dir_path, "/") ? dir_path : "", l.v[i]);
		check(ext4fs_inode_read(fs, ino, &in), path);
		if (EXT4FS_ISDIR(in.i_mode)) {
			h = manifest_line(h, path, 'd', in.i_mode, 0, in.i_links_count, 0, NULL);
			h = disk_xattrs_hash(ino, &in, path, h);
			h = disk_hash(ino, path, h);
		} else if (EXT4FS_ISLNK(in.i_mode)) {
			char target[300];
			size_t len;
			check(ext4fs_symlink_target(fs, ino, &in, target, sizeof(target) - 1, &len), path);
			target[len] = '\0';
			h = manifest_line(h, path, 'l', in.i_mode, len, in.i_links_count, 0, target);
		} else {
			uint64_t size = ext4fs_inode_size(&in);
			unsigned char *buf = malloc(size + 1);
			size_t got = 0;
			check(ext4fs_file_read(fs, ino, &in, 0, buf, size, &got), path);
			h = manifest_line(h, path, 'f', in.i_mode, size, in.i_links_count, fnv(FNV_START, buf, got), NULL);
			h = disk_xattrs_hash(ino, &in, path, h);
			free(buf);
		}
		free(l.v[i]);
	}
	free(l.v);
	return h;
}

static const char *manifest_file;
static unsigned long commits_done;

static void record_state(void)
{
	FILE *f;
	if (!manifest_file)
		return;
	f = fopen(manifest_file, "a");
	if (!f)
		die("opening %s: %s", manifest_file, strerror(errno));
	fprintf(f, "%lu %016llx\n", commits_done, (unsigned long long)model_hash(&root_node, FNV_START));
	fclose(f);
}

/*
 * A commit: the state it makes is recorded first, marked "+", since a
 * commit that fails half way (a crash) may still have reached the disk
 * whole; once it returns, the state is recorded as committed.
 */
static void commit(void)
{
	if (manifest_file) {
		FILE *f = fopen(manifest_file, "a");
		if (!f)
			die("opening %s: %s", manifest_file, strerror(errno));
		fprintf(f, "+%lu %016llx\n", commits_done + 1, (unsigned long long)model_hash(&root_node, FNV_START));
		fclose(f);
	}
	struct ext4fs_txn_stats before, after;
	ext4fs_txn_get_stats(fs, &before);
	check(ext4fs_txn_commit(fs), "commit");
	commits_done++;
	record_state();
	ext4fs_txn_get_stats(fs, &after);
	/* With -K, where the checkpoints a commit needed fell, for tests that aim at them. */
	if (fault_io && after.checkpoints != before.checkpoints) {
		struct ext4fs_io_fault_counts c;
		ext4fs_io_fault_counts(fault_io, &c);
		printf("checkpoint in commit %lu, writes=%llu\n", commits_done, (unsigned long long)c.writes);
	}
}

/* -- image -- */

static void make_image(uint32_t bs, uint64_t blocks, int no_csum, int no_flex, int no_extents)
{
	struct ext4fs_mkfs_params p;
	struct ext4fs_mkfs_plan *plan;
	struct ext4fs_io *io;
	char msg[256];
	int fd = open(image, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || ftruncate(fd, (off_t)(blocks * bs)))
		die("creating %s: %s", image, strerror(errno));
	close(fd);
	ext4fs_mkfs_params_init(&p, blocks);
	p.block_size = bs;
	p.now = 1700000000;
	p.inode_ratio = 8192;
	memset(p.uuid, 0x5A, sizeof(p.uuid));
	memset(p.hash_seed, 0x3C, sizeof(p.hash_seed));
	if (no_csum) {
		p.feature_ro_compat &= ~EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM;
		p.feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
	}
	if (no_flex) {
		p.feature_incompat &= ~EXT4FS_FEATURE_INCOMPAT_FLEX_BG;
		p.log_groups_per_flex = 0;
	}
	if (no_extents)
		p.feature_incompat &= ~(EXT4FS_FEATURE_INCOMPAT_EXTENTS | EXT4FS_FEATURE_INCOMPAT_64BIT);
	if (ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)))
		die("planning: %s", msg);
	check(ext4fs_io_open_file(image, EXT4FS_IO_RDWR, 0, &io), "open image");
	if (ext4fs_mkfs_write(plan, io, NULL, NULL, NULL, msg, sizeof(msg)))
		die("writing: %s", msg);
	ext4fs_io_close(io);
	ext4fs_mkfs_plan_free(plan);
}

static const char *fault_spec, *undo_path;

static void open_image(void)
{
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_io *io;
	char msg[256];

	check(ext4fs_io_open_file(image, EXT4FS_IO_RDWR, 0, &io), "opening the image");
	if (fault_spec) {
		struct ext4fs_io_fault_spec spec;
		char *text = strdup(fault_spec);
		if (ext4fs_io_fault_parse(text, &spec))
			die("bad fault spec %s", fault_spec);
		check(ext4fs_io_fault_wrap(io, &spec, &fault_io), "fault channel");
		free(text);   /* the channel copied what it keeps */
		io = fault_io;
	}
	if (undo_path) {
		struct ext4fs_io *undo;
		check(ext4fs_io_undo_wrap(io, undo_path, EXT4FS_UNDO_APPEND, &undo), "undo file");
		io = undo;
	}
	if (ext4fs_open_io(io, &o, &fs, msg, sizeof(msg))) {
		if (fault_io && fault_struck()) {
			printf("opsmodel: stopped by the fault at open\n");
			_exit(3);
		}
		die("open: %s", msg);
	}
	ext4fs_set_time(fs, 1700000000 + (int64_t)op_no, 0);
	if (commit_every)
		check(ext4fs_txn_start(fs), "entering journalled mode");
}

static void fill_test(void)
{
	uint64_t free0 = ext4fs_geom(fs)->free_blocks_count, r = ext4fs_geom(fs)->r_blocks_count;
	uint32_t bs = ext4fs_geom(fs)->block_size;
	unsigned char *buf = calloc(1, 1U << 20);
	unsigned n = 0;
	int err = 0;

	while (!err) {
		char name[32];
		uint32_t ino;
		struct ext4fs_inode in;
		size_t len = (size_t)(1 + rnd(1U << 20));
		op_no++;
		snprintf(name, sizeof(name), "fill%u", n);
		err = ext4fs_mknod(fs, EXT4FS_ROOT_INO, name, &file_attrs, &ino);
		if (err)
			break;
		n++;
		check(ext4fs_inode_read(fs, ino, &in), "read inode");
		fill_random(buf, len);
		err = ext4fs_file_write(fs, ino, &in, 0, buf, len, len);
		ext4fs_alloc_release_inode(fs, ino);
	}
	if (err != EXT4FS_E_NO_SPACE && err != EXT4FS_E_NO_FREE_INODES)
		die("filling stopped with %d (%s), not ENOSPC", err, ext4fs_strerror(err));
	uint64_t left = ext4fs_geom(fs)->free_blocks_count;
	printf("fill: %u files, stopped by %s, %llu blocks free, %llu reserved\n", n,
	       ext4fs_strerror(err), (unsigned long long)left, (unsigned long long)r);
	if (err == EXT4FS_E_NO_SPACE && (left < r || left > r + 64 + (1U << 20) / bs))
		die("after ENOSPC %llu blocks are free; the reserve is %llu", (unsigned long long)left,
		    (unsigned long long)r);
	run_fsck("after filling the file system");
	for (unsigned i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "fill%u", i);
		op_no++;
		check(ext4fs_unlink(fs, EXT4FS_ROOT_INO, name), "unlink");
	}
	if (ext4fs_geom(fs)->free_blocks_count != free0)
		die("after deleting everything %llu blocks are free, %llu at the start",
		    (unsigned long long)ext4fs_geom(fs)->free_blocks_count, (unsigned long long)free0);
	run_fsck("after emptying the file system");
	free(buf);
}

static void print_txn_stats(void)
{
	struct ext4fs_txn_stats st;

	ext4fs_txn_get_stats(fs, &st);
	printf("journalled: %llu commits, %llu blocks logged in %llu log blocks, %llu revokes, "
	       "%llu checkpoints writing %llu blocks home\n", (unsigned long long)st.commits,
	       (unsigned long long)st.blocks_logged, (unsigned long long)st.log_blocks,
	       (unsigned long long)st.revokes, (unsigned long long)st.checkpoints,
	       (unsigned long long)st.blocks_home);
}

static void print_fault_counts(void)
{
	struct ext4fs_io_fault_counts c;
	if (!fault_io)
		return;
	ext4fs_io_fault_counts(fault_io, &c);
	printf("fault channel: %llu writes, %llu flushes, %s\n", (unsigned long long)c.writes,
	       (unsigned long long)c.flushes, c.triggered ? "struck" : "never struck");
}

/* -- the scripted sequence (-S) -- */

static void commit_step(unsigned step, unsigned every)
{
	if (commit_every && step % every == 0)
		commit();
}

static struct node *scripted_node(struct node *dir, const char *name, uint32_t ino, int is_dir)
{
	struct node *n = calloc(1, sizeof(*n));
	n->obj = calloc(1, sizeof(*n->obj));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->obj->ino = ino;
	n->obj->is_dir = is_dir;
	n->obj->nlink = is_dir ? 0 : 1;
	kid_add(dir, n);
	return n;
}

static unsigned extent_depth(uint32_t ino)
{
	struct ext4fs_inode in;
	check(ext4fs_inode_read(fs, ino, &in), "read inode");
	return (unsigned)(in.i_block[6] | (in.i_block[7] << 8));   /* eh_depth of the root node */
}

/* Model and disk: set (value != NULL) or remove attribute name of o. */
static void scripted_xattr(struct fobj *o, const char *name, const unsigned char *value, size_t len)
{
	struct ext4fs_inode in;
	size_t i;
	check(ext4fs_inode_read(fs, o->ino, &in), "read inode");
	for (i = 0; i < o->nxattrs && strcmp(o->xattrs[i].name, name); i++)
		;
	if (!value) {
		check(ext4fs_xattr_remove(fs, o->ino, &in, name), "xattr remove");
		free(o->xattrs[i].value);
		o->xattrs[i] = o->xattrs[--o->nxattrs];
		return;
	}
	check(ext4fs_xattr_set(fs, o->ino, &in, name, value, len, 0), "xattr set");
	if (i == o->nxattrs) {
		o->xattrs = realloc(o->xattrs, (o->nxattrs + 1) * sizeof(*o->xattrs));
		snprintf(o->xattrs[i].name, sizeof(o->xattrs[i].name), "%s", name);
		o->xattrs[i].value = NULL;
		o->nxattrs++;
	}
	free(o->xattrs[i].value);
	o->xattrs[i].value = malloc(len ? len : 1);
	memcpy(o->xattrs[i].value, value, len);
	o->xattrs[i].len = len;
}

static void scripted_prelude(void)
{
	uint32_t bs = ext4fs_geom(fs)->block_size, ino;
	unsigned step = 0, blocks = 0;
	unsigned char *block = malloc(bs), value[600];
	struct ext4fs_inode in;
	struct node *deep, *big;
	struct fobj *o;

	/* A file of one-block extents with holes between them, until its tree has depth 2. */
	op_no++;
	check(ext4fs_mknod(fs, EXT4FS_ROOT_INO, "deep", &file_attrs, &ino), "create deep");
	deep = scripted_node(&root_node, "deep", ino, 0);
	o = deep->obj;
	while (extent_depth(ino) < 2) {
		size_t off = (size_t)blocks * 2 * bs;
		if (blocks > 20000)
			die("the extent tree of /deep does not reach depth 2");
		op_no++;
		fill_random(block, bs);
		check(ext4fs_inode_read(fs, ino, &in), "read inode");
		check(ext4fs_file_write(fs, ino, &in, off, block, bs, 0), "write deep");
		o->data = realloc(o->data, off + bs);
		memset(o->data + o->size, 0, off - o->size);
		memcpy(o->data + off, block, bs);
		o->size = off + bs;
		blocks++;
		commit_step(++step, 40);
	}
	/* Cut it back (the tree shrinks) and punch a range out of what is left. */
	op_no++;
	check(ext4fs_inode_read(fs, ino, &in), "read inode");
	check(ext4fs_file_truncate(fs, ino, &in, o->size / 2), "truncate deep");
	o->size /= 2;
	commit_step(++step, 1);
	op_no++;
	check(ext4fs_inode_read(fs, ino, &in), "read inode");
	check(ext4fs_file_punch(fs, ino, &in, o->size / 4, o->size / 4), "punch deep");
	memset(o->data + o->size / 4, 0, o->size / 4);
	commit_step(++step, 1);

	/* A directory of 150 names: an htree whose leaves split. */
	op_no++;
	check(ext4fs_mkdir(fs, EXT4FS_ROOT_INO, "big", &dir_attrs, &ino), "mkdir big");
	big = scripted_node(&root_node, "big", ino, 1);
	for (unsigned i = 0; i < 150; i++) {
		char name[16];
		uint32_t fino;
		op_no++;
		snprintf(name, sizeof(name), "htree-entry%03u", i);
		check(ext4fs_mknod(fs, big->obj->ino, name, &file_attrs, &fino), "create in big");
		scripted_node(big, name, fino, 0);
		commit_step(++step, 10);
	}

	/* Attributes: small ones in the inode, large ones in a block, replaced and removed. */
	for (unsigned i = 0; i < 8; i++) {
		struct fobj *f = big->kids[i]->obj;
		op_no++;
		fill_random(value, sizeof(value));
		scripted_xattr(f, "user.small", value, 16 + i);
		commit_step(++step, 2);
		op_no++;
		scripted_xattr(f, "user.large", value, 300 + 30 * i);
		commit_step(++step, 2);
		op_no++;
		fill_random(value, sizeof(value));
		scripted_xattr(f, "user.small", value, 40);
		commit_step(++step, 2);
		if (i % 2) {
			op_no++;
			scripted_xattr(f, "user.large", NULL, 0);
			commit_step(++step, 2);
		}
	}
	op_no++;
	scripted_xattr(big->obj, "user.dir", value, 100);
	if (commit_every)
		commit();
	free(block);
	printf("scripted: /deep reached depth 2 with %u extents, /big holds 150 names, 8 files carry attributes\n",
	       blocks);
}

/* -X: the end of a journalled run, by a crash or cleanly. */
static void end_journalled(const char *how)
{
	struct ext4fs_txn_room room;

	commit();
	check(ext4fs_txn_room(fs, &room), "journal room");
	print_txn_stats();
	printf("log: %llu of %llu ring blocks to replay%s\n", (unsigned long long)room.ring_used,
	       (unsigned long long)room.ring_blocks, room.ring_wrapped ? ", wrapping round the end" : "");
	fflush(stdout);
	if (!strcmp(how, "crash"))
		_exit(0);
	if (strcmp(how, "clean"))
		die("-X takes crash or clean, not %s", how);
	check(ext4fs_txn_stop(fs), "leaving journalled mode");
	print_fault_counts();
	closing = 1;
	check(ext4fs_close_flush(fs), "close");
	exit(0);
}

int main(int argc, char **argv)
{
	uint32_t bs = 4096, batches = 10, ops = 300;
	uint64_t blocks = 16384, seed = 1;
	int no_csum = 0, no_flex = 0, no_extents = 0, fill = 0, c;
	const char *end_mode = NULL;
	int print_hash = 0, reuse = 0, scripted = 0;

	while ((c = getopt(argc, argv, "b:n:CFEs:B:o:fJ:X:M:PK:U:RS")) != -1) {
		switch (c) {
		case 'b': bs = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': blocks = strtoull(optarg, NULL, 0); break;
		case 'C': no_csum = 1; break;
		case 'F': no_flex = 1; break;
		case 'E': no_extents = 1; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'B': batches = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'o': ops = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'f': fill = 1; break;
		case 'J': commit_every = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'X': end_mode = optarg; break;
		case 'M': manifest_file = optarg; break;
		case 'P': print_hash = 1; break;
		case 'K': fault_spec = optarg; break;
		case 'U': undo_path = optarg; break;
		case 'R': reuse = 1; break;
		case 'S': scripted = 1; break;
		default:
			fprintf(stderr, "usage: opsmodel [-b BS] [-n BLOCKS] [-CFE] [-s SEED] [-B N] [-o N] [-f] IMAGE\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "opsmodel: IMAGE expected\n");
		return 2;
	}
	if (system("command -v e2fsck >/dev/null 2>&1") != 0) {
		printf("SKIP: e2fsck is not installed\n");
		return 77;
	}
	image = argv[optind];
	if (print_hash) {
		struct ext4fs_open_opts o = { .flags = 0 };
		char msg[256];
		if (ext4fs_open(image, &o, &fs, msg, sizeof(msg)))
			die("open: %s", msg);
		printf("%016llx\n", (unsigned long long)disk_hash(EXT4FS_ROOT_INO, "/", FNV_START));
		ext4fs_close(fs);
		return 0;
	}
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	root_node.obj = &root_obj;
	if (!reuse)
		make_image(bs, blocks, no_csum, no_flex, no_extents);
	record_state();
	open_image();
	if (scripted)
		scripted_prelude();
	if (fill) {
		fill_test();
		check(ext4fs_close_flush(fs), "close");
		return 0;
	}
	for (uint32_t b = 0; b < batches; b++) {
		for (uint32_t i = 0; i < ops; i++) {
			op_no++;
			switch (rnd(16)) {
			case 0: case 1: case 2: op_create(); break;
			case 3: case 4: op_write(0); break;
			case 5: op_write(1); break;
			case 6: op_truncate(); break;
			case 7: op_punch(); break;
			case 8: case 9: op_unlink(); break;
			case 10: op_mkdir(); break;
			case 11: op_rmdir(); break;
			case 12: op_link(); break;
			case 13: op_symlink(); break;
			default: op_rename(); break;
			}
			if (commit_every && op_no % commit_every == 0)
				commit();
		}
		if (end_mode && commit_every && b + 1 == batches)
			end_journalled(end_mode);
		char when[64];
		snprintf(when, sizeof(when), "after batch %u", b + 1);
		run_fsck(when);
		check_node(&root_node);
		/* Every other batch starts from a fresh open, as a later session would. */
		if (b % 2) {
			check(ext4fs_close_flush(fs), "close");
			open_image();
		}
	}
	if (commit_every) {
		check(ext4fs_txn_stop(fs), "leaving journalled mode");
		print_txn_stats();
	}
	check(ext4fs_flush(fs), "flush");
	print_fault_counts();
	closing = 1;
	check(ext4fs_close_flush(fs), "close");
	printf("opsmodel: %lu operations in %u batches, model and e2fsck agree (done: %lu create, "
	       "%lu write, %lu truncate, %lu punch, %lu unlink, %lu mkdir, %lu rmdir, %lu link, "
	       "%lu symlink, %lu rename)\n", op_no, batches, done_ops[0], done_ops[1], done_ops[2],
	       done_ops[3], done_ops[4], done_ops[5], done_ops[6], done_ops[7], done_ops[8], done_ops[9]);
	return 0;
}
