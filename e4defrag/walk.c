/*
 * walk.c - the tree in nftw's order (see walk.h).
 *
 * readdir order is the kernel's (ext4fs_htree_readdir_hashed()): with
 * dir_index, a directory that is indexed, one block long or inline is read
 * in hash order (major hash, then minor hash, then the order on disk for
 * equal pairs); any other in the order of its blocks.  A directory whose index or hash cannot be read
 * here is walked in disk order: the figures stay right, only the order of
 * equals in e4defrag's list may differ.
 *
 * The stack of directories is kept on the heap, not in C recursion: an
 * image can nest directories as deep as it has inodes.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/htree.h"
#include "inoset.h"
#include "walk.h"

struct child {
	uint32_t ino;
	size_t name_off;       /* into the frame's names */
	uint8_t name_len;
	uint32_t hash, minor;  /* the readdir sort key, when the directory is read in hash order */
	size_t disk_order;
};

struct frame {
	struct child *children;
	size_t nchildren, cap;
	char *names;
	size_t names_len, names_cap;
	size_t next;           /* the next child to visit */
	size_t path_len;       /* of this directory's path */
};

struct walk {
	struct ext4fs_fs *fs;
	df_walk_fn fn;
	void *arg;
	char *path;
	size_t path_cap;
	struct df_inoset dirs;    /* directories walked */
	struct df_inoset linked;  /* files with several names, met once */
	struct frame *stack;
	size_t depth, stack_cap;
};

static int collect(const struct ext4fs_dirent *d, void *arg)
{
	struct frame *f = arg;
	struct child *c;
	char *names;

	if ((d->name_len == 1 && d->name[0] == '.') ||
	    (d->name_len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (f->nchildren == f->cap) {
		c = ext4fs_array_grow(f->children, &f->cap, f->nchildren + 1, sizeof(*c), 32);
		if (!c)
			return -ENOMEM;
		f->children = c;
	}
	names = ext4fs_array_grow(f->names, &f->names_cap, f->names_len + d->name_len, 1, 512);
	if (!names)
		return -ENOMEM;
	f->names = names;
	memcpy(f->names + f->names_len, d->name, d->name_len);
	c = &f->children[f->nchildren++];
	c->ino = d->inode;
	c->name_off = f->names_len;
	c->name_len = d->name_len;
	f->names_len += d->name_len;
	return 0;
}

/* Make the path name the entry name (len bytes) below a directory whose path is dir_len long. */
static int path_set(struct walk *w, size_t dir_len, const char *name, size_t len)
{
	size_t need = dir_len + 1 + len + 1;
	char *p = ext4fs_array_grow(w->path, &w->path_cap, need, 1, 256);
	size_t at = dir_len;

	if (!p)
		return -ENOMEM;
	w->path = p;
	/* A start of "/" must give "/a", not "//a". */
	if (!(dir_len > 0 && p[dir_len - 1] == '/'))
		p[at++] = '/';
	memcpy(p + at, name, len);
	p[at + len] = '\0';
	return 0;
}

static int by_hash(const void *a, const void *b)
{
	const struct child *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return x->disk_order < y->disk_order ? -1 : x->disk_order > y->disk_order;
}

/* Put the frame's children in the order the kernel's readdir gives them. */
static void readdir_order(struct walk *w, uint32_t ino, const struct ext4fs_inode *inode, struct frame *f)
{
	int version, approx;

	if (f->nchildren < 2 || !ext4fs_htree_readdir_hashed(w->fs, ino, inode, &version))
		return;
	for (size_t i = 0; i < f->nchildren; i++) {
		struct child *c = &f->children[i];
		c->disk_order = i;
		if (ext4fs_htree_name_hash(w->fs, inode, version, f->names + c->name_off, c->name_len, &c->hash,
					   &c->minor, &approx))
			return;
	}
	qsort(f->children, f->nchildren, sizeof(f->children[0]), by_hash);
}

static void frame_free(struct frame *f)
{
	free(f->children);
	free(f->names);
	memset(f, 0, sizeof(*f));
}

/* Read directory ino's entries into a new frame on top of the stack. */
static int push_dir(struct walk *w, uint32_t ino, const struct ext4fs_inode *inode, size_t path_len)
{
	struct frame *f;
	int err;

	if (w->depth == w->stack_cap) {
		struct frame *s = ext4fs_array_grow(w->stack, &w->stack_cap, w->depth + 1, sizeof(*s), 16);
		if (!s)
			return -ENOMEM;
		w->stack = s;
	}
	f = &w->stack[w->depth];
	memset(f, 0, sizeof(*f));
	f->path_len = path_len;
	err = ext4fs_dir_iterate(w->fs, ino, inode, 0, collect, f);
	if (err) {
		frame_free(f);
		return err;
	}
	readdir_order(w, ino, inode, f);
	w->depth++;
	return 0;
}

/* Visit one name: tell fn, and go into it when it is a directory not walked yet. */
static int visit(struct walk *w, uint32_t ino, size_t path_len)
{
	struct df_walk_entry e = { .ino = ino, .path = w->path, .first_visit = 1 };
	struct ext4fs_inode inode;
	int err, isdir;

	if ((err = ext4fs_inode_read(w->fs, ino, &inode)))
		return err;
	isdir = EXT4FS_ISDIR(inode.i_mode);
	if (isdir || (EXT4FS_ISREG(inode.i_mode) && inode.i_links_count > 1)) {
		err = df_inoset_add(isdir ? &w->dirs : &w->linked, ino);
		if (err < 0)
			return err;
		e.first_visit = err;
	}
	e.inode = &inode;
	if (isdir && !e.first_visit)
		return 0;
	if ((err = w->fn(&e, w->arg)))
		return err;
	return isdir ? push_dir(w, ino, &inode, path_len) : 0;
}

int df_walk(struct ext4fs_fs *fs, uint32_t start, const char *start_path, df_walk_fn fn, void *arg)
{
	struct walk w = { .fs = fs, .fn = fn, .arg = arg };
	uint32_t inodes = ext4fs_geom(fs)->inodes_count;
	size_t len = strlen(start_path);
	int err;

	w.path = malloc(len + 1);
	if (!w.path)
		return -ENOMEM;
	w.path_cap = len + 1;
	memcpy(w.path, start_path, len + 1);
	err = visit(&w, start, len);
	while (!err && w.depth) {
		struct frame *f = &w.stack[w.depth - 1];
		struct child *c;

		if (f->next == f->nchildren) {
			frame_free(f);
			w.depth--;
			continue;
		}
		c = &f->children[f->next++];
		if (c->ino < 1 || c->ino > inodes)
			continue;
		if (w.depth == 1 && start == EXT4FS_ROOT_INO && c->name_len == 10 &&
		    !memcmp(f->names + c->name_off, "lost+found", 10))
			continue;
		if ((err = path_set(&w, f->path_len, f->names + c->name_off, c->name_len)))
			break;
		/* visit() may grow the stack: f is not used after it. */
		err = visit(&w, c->ino, strlen(w.path));
	}
	while (w.depth)
		frame_free(&w.stack[--w.depth]);
	free(w.stack);
	free(w.path);
	df_inoset_free(&w.dirs);
	df_inoset_free(&w.linked);
	return err;
}
