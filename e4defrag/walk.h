/*
 * walk.h - the files of a tree in the order e4defrag meets them.
 *
 * e4defrag -c walks a mounted tree with nftw(3): the start, then each
 * directory's entries in readdir order, a subdirectory gone into as soon
 * as it is met, every name of a hard-linked file counted.  Walking the
 * image the same way is what makes defrag4fs -c's totals equal e4defrag's
 * and its list of the most fragmented files come in the same order.
 */
#ifndef DEFRAG4FS_WALK_H
#define DEFRAG4FS_WALK_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

/* One name met by the walk. */
struct df_walk_entry {
	uint32_t ino;
	const struct ext4fs_inode *inode;
	const char *path;       /* the start's name, then "/name" for each level below it */
	int first_visit;        /* 0 for a later name of a file met before (a hard link) */
};

/* Return 0 to go on; anything else stops the walk and is returned. */
typedef int (*df_walk_fn)(const struct df_walk_entry *e, void *arg);

/*
 * Call fn for start (inode number, shown as start_path) and, when it is a
 * directory, for everything under it, depth first, entries in the order
 * ext4fs_dir_iterate() gives them.  "." and ".." are passed over, so is an
 * entry naming an inode number outside the file system, and a directory is
 * walked once however many names it has (a damaged image's loops end).
 * Below the root, lost+found is left out, as e4defrag leaves out its files.
 * The walk keeps one list of entries for each directory on its path, not a
 * list of the whole tree.  Errors: those of ext4fs_inode_read() and
 * ext4fs_dir_iterate() (ext4fs_errmsg(fs) names the object), -ENOMEM, or
 * what fn returned.
 */
int df_walk(struct ext4fs_fs *fs, uint32_t start, const char *start_path, df_walk_fn fn, void *arg);

#endif
