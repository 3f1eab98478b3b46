/*
 * files.h - the regular files a run examines: every one in the inode
 * tables when no path was given, else those under the paths given (each
 * file once, named by the first path it was met under).
 */
#ifndef DEFRAG4FS_FILES_H
#define DEFRAG4FS_FILES_H

#include <stddef.h>
#include <stdint.h>

struct df_ctx;

struct df_file {
	uint32_t ino;
	char *path;      /* NULL when found by the inode scan */
};

struct df_files {
	struct df_file *v;
	size_t n, cap;
};

/*
 * Fill *out (empty to start) for ctx's targets on ctx->fs.  The inode scan
 * takes regular files in use from the first non-reserved inode on (the
 * reserved ones are the file system's own).  Returns 0, or DF_EXIT_ERROR
 * after saying what failed; *out is then to be freed all the same.
 */
int df_files_collect(struct df_ctx *ctx, struct df_files *out);

/* Free what *f holds; it may be filled again. */
void df_files_free(struct df_files *f);

#endif
