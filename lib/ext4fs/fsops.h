/*
 * fsops.h - the namespace: creating, linking, unlinking and renaming files,
 * directories, symlinks and device nodes.
 *
 * Layer 6.  Each call works on a writable handle, takes a parent directory
 * by inode number and a name (one path component, 1-255 bytes, no '/', not
 * "." or ".."), and leaves the file system consistent when it returns,
 * whether it succeeded or failed: on failure whatever it had allocated is
 * given back.  Times are taken from ext4fs_now().  Link counts follow the
 * kernel: a directory's i_links_count is 2 + its subdirectories, and with
 * dir_nlink it is pinned to 1 once it would exceed 64999.
 */
#ifndef EXT4FS_FSOPS_H
#define EXT4FS_FSOPS_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Who owns a new inode, and its permission bits. */
struct ext4fs_new_attrs {
	uint16_t mode;       /* type and permission bits (S_IFREG | 0644, ...) */
	uint32_t uid, gid;
	uint32_t rdev;       /* device nodes: Linux dev_t (major << 8 | minor, new encoding above 255) */
};

/*
 * Create a new inode of type attrs->mode (regular file, fifo, socket,
 * character or block device) named name in directory dir.  *ino receives
 * the new inode.  Errors: EXT4FS_E_EXISTS, EXT4FS_E_NOT_DIR,
 * EXT4FS_E_NAME_TOO_LONG, EXT4FS_E_INVALID_ARG (bad name or type; use
 * ext4fs_mkdir / ext4fs_symlink for those), EXT4FS_E_NO_FREE_INODES,
 * EXT4FS_E_NO_SPACE, EXT4FS_E_DIR_FULL, I/O and corruption errors.
 */
int ext4fs_mknod(struct ext4fs_fs *fs, uint32_t dir, const char *name,
		 const struct ext4fs_new_attrs *attrs, uint32_t *ino);

/* Create a directory (with "." and ".."); the parent gains a link.  Same errors. */
int ext4fs_mkdir(struct ext4fs_fs *fs, uint32_t dir, const char *name,
		 const struct ext4fs_new_attrs *attrs, uint32_t *ino);

/*
 * Create a symbolic link to target (1..block_size-1 bytes): kept in i_block
 * when shorter than 60 bytes (a fast symlink), else in one data block.
 * attrs->mode's permission bits are used (usually 0777).  Same errors, and
 * EXT4FS_E_NAME_TOO_LONG for a target that does not fit one block.
 */
int ext4fs_symlink(struct ext4fs_fs *fs, uint32_t dir, const char *name, const char *target,
		   const struct ext4fs_new_attrs *attrs, uint32_t *ino);

/*
 * Add a hard link name in dir to existing inode ino (not a directory).
 * Errors: EXT4FS_E_EXISTS, EXT4FS_E_IS_DIR, EXT4FS_E_TOO_MANY_LINKS, and as
 * ext4fs_mknod.
 */
int ext4fs_link(struct ext4fs_fs *fs, uint32_t dir, const char *name, uint32_t ino);

/*
 * Remove name from dir; when it was the last link, free the inode, its
 * blocks and its xattr block.  Errors: EXT4FS_E_NOT_FOUND, EXT4FS_E_IS_DIR
 * (use ext4fs_rmdir), I/O and corruption errors.
 */
int ext4fs_unlink(struct ext4fs_fs *fs, uint32_t dir, const char *name);

/* Remove the empty directory name from dir.  Errors: EXT4FS_E_DIR_NOT_EMPTY, EXT4FS_E_NOT_DIR, as ext4fs_unlink. */
int ext4fs_rmdir(struct ext4fs_fs *fs, uint32_t dir, const char *name);

/*
 * rename(2): move old_dir/old_name to new_dir/new_name, replacing an
 * existing target of a compatible type (a file by a non-directory, an
 * empty directory by a directory).  A directory moved to another parent
 * gets its ".." rewritten and the link counts follow.  Errors:
 * EXT4FS_E_NOT_FOUND, EXT4FS_E_IS_DIR / EXT4FS_E_NOT_DIR (type clash),
 * EXT4FS_E_DIR_NOT_EMPTY, EXT4FS_E_INVALID_ARG (a directory into its own
 * subtree), and as ext4fs_mknod.
 */
int ext4fs_rename(struct ext4fs_fs *fs, uint32_t old_dir, const char *old_name,
		  uint32_t new_dir, const char *new_name);

/*
 * Free inode ino and everything it owns (data and mapping blocks, xattr
 * block reference) without touching any directory: debugfs kill_file, and
 * the last step of unlink.  Errors: EXT4FS_E_INODE_STATE (already free),
 * I/O and corruption errors.
 */
int ext4fs_inode_release(struct ext4fs_fs *fs, uint32_t ino);

#ifdef __cplusplus
}
#endif
#endif
