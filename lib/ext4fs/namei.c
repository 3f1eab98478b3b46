/* namei.c - looking a name up in a directory (through its index when it has one), path
 * name resolution and inode-to-path translation. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/dir.h"
#include "ext4fs/file.h"
#include "ext4fs/htree.h"
#include "ext4fs/inode.h"
#include "ext4fs/namei.h"
#include "ext4fs/utf8fold.h"
#include "fs_internal.h"

/* -- one name in one directory -------------------------------------------------- */

struct lookup {
	const char *name;
	size_t len;
	int casefold;
	uint32_t found;
	uint32_t folded;        /* first entry whose name folds like the one sought (casefolded dirs) */
};

/*
 * An entry whose name is exactly the one sought ends the search; in a
 * casefolded directory the first one that folds alike is kept in case
 * none does (names that are not valid UTF-8 match only exactly, as in
 * the kernel).
 */
static int lookup_match(const struct ext4fs_dirent *d, void *arg)
{
	struct lookup *l = arg;

	if (d->name_len == l->len && memcmp(d->name, l->name, l->len) == 0) {
		l->found = d->inode;
		return 1;
	}
	if (l->casefold && !l->folded && d->inode &&
	    ext4fs_utf8_casefold_cmp(d->name, d->name_len, l->name, l->len) == 0)
		l->folded = d->inode;
	return 0;
}

int ext4fs_dir_lookup(struct ext4fs_fs *fs, uint32_t dir_ino, const char *name, size_t len,
		      uint32_t *ino)
{
	struct ext4fs_inode dir;
	struct lookup l = { .name = name, .len = len };
	uint32_t found = 0;
	int err;

	*ino = 0;
	err = ext4fs_inode_read(fs, dir_ino, &dir);
	if (err)
		return err;
	if (!EXT4FS_ISDIR(dir.i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "inode %u is not a directory", dir_ino);
	if (len == 0 || len > EXT4FS_NAME_LEN)
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_FOUND, "directory %u: no entry with a %zu-byte name",
				       dir_ino, len);
	l.casefold = (dir.i_flags & EXT4FS_CASEFOLD_FL) &&
		     ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_CASEFOLD);
	/* "." and ".." sit in the first block, outside the index. */
	int dots = name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
	if (!dots && !l.casefold && !ext4fs_inode_has_inline_data(&dir) &&
	    (dir.i_flags & EXT4FS_INDEX_FL) &&
	    ext4fs_has_compat(fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX)) {
		err = ext4fs_htree_lookup(fs, dir_ino, &dir, name, len, &found);
		if (!err)
			goto check;
		if (err != EXT4FS_E_HTREE_CORRUPT && err != EXT4FS_E_UNKNOWN_HASH)
			return err;
		/* A damaged index: the entries are still in the blocks. */
	}
	err = ext4fs_dir_iterate(fs, dir_ino, &dir, 0, lookup_match, &l);
	if (err < 0)
		return err;
	found = l.found ? l.found : l.folded;
	if (!found)
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_FOUND, "directory %u has no entry \"%.*s\"", dir_ino,
				       (int)len, name);
check:
	if (found > fs->geom.inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT,
				       "directory %u: entry \"%.*s\" points to inode %u, beyond the %u inodes",
				       dir_ino, (int)len, name, found, fs->geom.inodes_count);
	*ino = found;
	return 0;
}

/* -- paths ---------------------------------------------------------------------- */

struct namei {
	struct ext4fs_fs *fs;
	uint32_t root;
	unsigned links;              /* symlinks followed so far */
};

static int resolve(struct namei *n, uint32_t base, const char *path, size_t plen, int follow_last,
		   unsigned depth, uint32_t *out);

/* Resolve symlink ino (found in directory dir) to what it points at. */
static int follow_link(struct namei *n, uint32_t dir, uint32_t ino,
		       const struct ext4fs_inode *inode, unsigned depth, uint32_t *out)
{
	struct ext4fs_fs *fs = n->fs;
	size_t bufsize = fs->geom.block_size, len;
	char *target;
	int err;

	if (depth >= EXT4FS_NAMEI_MAX_NESTED || n->links >= EXT4FS_NAMEI_MAX_LINKS)
		return ext4fs__fs_fail(fs, EXT4FS_E_SYMLINK_LOOP,
				       "symlink %u: too many symbolic links (%u nested, %u followed)", ino,
				       depth, n->links);
	n->links++;
	target = malloc(bufsize);
	if (!target)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to follow symlink %u", ino);
	err = ext4fs_symlink_target(fs, ino, inode, target, bufsize, &len);
	if (err)
		goto out;
	if (len == 0 || strlen(target) != len) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NOT_FOUND, "symlink %u has an empty or NUL-bearing target", ino);
		goto out;
	}
	err = resolve(n, dir, target, len, 1, depth + 1, out);
out:
	free(target);
	return err;
}

static int resolve(struct namei *n, uint32_t base, const char *path, size_t plen, int follow_last,
		   unsigned depth, uint32_t *out)
{
	struct ext4fs_fs *fs = n->fs;
	uint32_t dir = (plen && path[0] == '/') ? n->root : base;
	size_t i = 0;
	int err;

	for (;;) {
		while (i < plen && path[i] == '/')
			i++;
		if (i >= plen) {
			*out = dir;
			return 0;
		}
		const char *comp = path + i;
		size_t clen = 0;
		while (i < plen && path[i] != '/') {
			i++;
			clen++;
		}
		size_t j = i;
		while (j < plen && path[j] == '/')
			j++;
		int last = j >= plen;
		int trailing_slash = last && i < plen;
		uint32_t child;
		struct ext4fs_inode inode;

		err = ext4fs_dir_lookup(fs, dir, comp, clen, &child);
		if (err)
			return err;
		err = ext4fs_inode_read(fs, child, &inode);
		if (err)
			return err;
		if (EXT4FS_ISLNK(inode.i_mode) && (!last || follow_last || trailing_slash)) {
			uint32_t target;
			err = follow_link(n, dir, child, &inode, depth, &target);
			if (err)
				return err;
			child = target;
			if (!last || trailing_slash) {
				err = ext4fs_inode_read(fs, child, &inode);
				if (err)
					return err;
			}
		}
		if (last && !trailing_slash) {
			*out = child;
			return 0;
		}
		if (!EXT4FS_ISDIR(inode.i_mode))
			return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "\"%.*s\" (inode %u) is not a directory",
					       (int)clen, comp, child);
		if (last) {
			*out = child;
			return 0;
		}
		dir = child;
	}
}

int ext4fs_namei(struct ext4fs_fs *fs, uint32_t root_ino, uint32_t cwd_ino, const char *path,
		 int follow_last_symlink, uint32_t *ino)
{
	struct namei n = { .fs = fs, .root = root_ino };

	*ino = 0;
	return resolve(&n, cwd_ino, path, strlen(path), follow_last_symlink, 0, ino);
}

/* -- inode to path ----------------------------------------------------------- */

struct name_scan {
	uint32_t search;
	uint32_t parent;
	char *name;
};

static int name_scan_entry(const struct ext4fs_dirent *d, void *arg)
{
	struct name_scan *s = arg;

	if (d->name_len == 2 && memcmp(d->name, "..", 2) == 0)
		s->parent = d->inode;
	if (s->search && d->inode == s->search && !s->name) {
		s->name = strdup(d->name);
		if (!s->name)
			return EXT4FS_E_NO_MEMORY;
	}
	return s->name && s->parent ? 1 : 0;
}

/* *result becomes *result + "/" + comp, a one-character *result ("/" or ".") being dropped. */
static int path_append(char **result, const char *comp)
{
	size_t rl = strlen(*result), cl = strlen(comp);
	char *p;

	if (rl == 1)
		rl = 0;
	p = malloc(rl + cl + 2);
	if (!p)
		return EXT4FS_E_NO_MEMORY;
	memcpy(p, *result, rl);
	p[rl] = '/';
	memcpy(p + rl + 1, comp, cl + 1);
	free(*result);
	*result = p;
	return 0;
}

int ext4fs_get_pathname(struct ext4fs_fs *fs, uint32_t dir_ino, uint32_t ino, char **path)
{
	char **names = NULL;
	size_t count = 0;
	char *head = NULL, *result = NULL;
	uint32_t dir = dir_ino, search = ino == dir_ino ? 0 : ino;
	int depth = EXT4FS_PATHNAME_MAX_DEPTH, err = 0;
	char tmp[32];

	*path = NULL;
	names = calloc(EXT4FS_PATHNAME_MAX_DEPTH + 2, sizeof(*names));
	if (!names)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a path name");
	/* Walk up: at each level, find search's name in dir and dir's parent. */
	for (;;) {
		struct name_scan s = { .search = search };
		struct ext4fs_inode inode;

		if (dir == search) {
			head = strdup(dir == EXT4FS_ROOT_INO ? "/" : ".");
			break;
		}
		if (dir == 0 || depth < 0) {
			head = strdup("...");
			break;
		}
		err = ext4fs_inode_read(fs, dir, &inode);
		if (err)
			goto out;
		if (!EXT4FS_ISDIR(inode.i_mode)) {
			if (search)
				snprintf(tmp, sizeof(tmp), "<%u>/<%u>", dir, search);
			else
				snprintf(tmp, sizeof(tmp), "<%u>", dir);
			head = strdup(tmp);
			break;
		}
		err = ext4fs_dir_iterate(fs, dir, &inode, 0, name_scan_entry, &s);
		if (err < 0) {
			free(s.name);
			if (err == EXT4FS_E_NO_MEMORY)
				err = ext4fs__fs_fail(fs, err, "no memory for a path name");
			goto out;
		}
		err = 0;
		if (search) {
			names[count++] = s.name ? s.name : strdup("???");
			if (!names[count - 1]) {
				err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a path name");
				goto out;
			}
		}
		search = dir;
		dir = s.parent;
		depth--;
	}
	if (!head) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a path name");
		goto out;
	}
	/* names[0] is the deepest component; build from the top down. */
	result = head;
	head = NULL;
	for (size_t k = count; k-- > 0;) {
		if (path_append(&result, names[k])) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a path name");
			goto out;
		}
	}
	*path = result;
	result = NULL;
out:
	free(head);
	free(result);
	for (size_t k = 0; k < count; k++)
		free(names[k]);
	free(names);
	return err;
}
