/*
 * names.h - the path of each directory, regular file and symlink of the trees a run
 * works on, by inode number, for -v: the inode scan of a whole-volume run
 * and the library's layout and compaction passes know files by number
 * only.  One walk of each tree (walk.h: below the root, lost+found's files
 * are not met and keep their numbers); a file linked twice is named by the
 * first link met.
 */
#ifndef DEFRAG4FS_NAMES_H
#define DEFRAG4FS_NAMES_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "ext4fs/fs.h"

struct df_name {
	uint32_t ino;
	char *path;
};

struct df_names {
	struct df_name *v;     /* sorted by inode number */
	size_t n, cap;
};

/*
 * Add the names under start (its path shown as start_path), then sort: call
 * once per tree on *out (empty to start).  Errors: those of df_walk(),
 * EXT4FS_E_NO_MEMORY; *out is to be freed all the same.
 */
int df_names_add(struct ext4fs_fs *fs, uint32_t start, const char *start_path, struct df_names *out);

/* The path of ino, or NULL (also when names is NULL).  Cannot fail. */
const char *df_names_get(const struct df_names *names, uint32_t ino);

/* Print path, else ino's path from names (may be NULL), else "<ino>".  Cannot fail. */
void df_names_print(FILE *out, const struct df_names *names, uint32_t ino, const char *path);

/* Free what *names holds; it may be built again. */
void df_names_free(struct df_names *names);

#endif
