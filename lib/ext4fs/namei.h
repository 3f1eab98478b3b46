/*
 * namei.h - turning path names into inode numbers and back.
 *
 * Layer 6.  Paths are resolved one component at a time with
 * ext4fs_dir_lookup(): "/" starts at the given root, anything else at the
 * given working directory; empty components (repeated or trailing slashes)
 * and "." are looked up like any other name ("." and ".." are real entries,
 * or synthesised ones for inline directories).  Symbolic links met before
 * the last component are always followed, the last one only on request or
 * when the path ends in a slash; a relative target is resolved from the
 * directory holding the link, an absolute one from the root.  At most
 * EXT4FS_NAMEI_MAX_NESTED links may be nested and at most
 * EXT4FS_NAMEI_MAX_LINKS followed in one resolution
 * (EXT4FS_E_SYMLINK_LOOP beyond), which bounds the work on any image.
 *
 * ext4fs_get_pathname() goes the other way, as debugfs prints paths: the
 * name of an inode inside a directory, prefixed by the directory's path
 * found by following ".." entries up to the root (at most
 * EXT4FS_PATHNAME_MAX_DEPTH levels, then "..."); a name that cannot be found
 * shows as "???" and a "directory" that is not one as "<ino>".
 */
#ifndef EXT4FS_NAMEI_H
#define EXT4FS_NAMEI_H

#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_NAMEI_MAX_NESTED    8
#define EXT4FS_NAMEI_MAX_LINKS     40
#define EXT4FS_PATHNAME_MAX_DEPTH  32

/*
 * Resolve path (NUL-terminated) starting from root_ino (absolute paths) or
 * cwd_ino (relative ones; an empty path names cwd_ino itself) and store the
 * inode reached in *ino.  follow_last_symlink: follow a symlink in the last
 * component too.  Errors: EXT4FS_E_NOT_FOUND, EXT4FS_E_NOT_DIR (a component
 * before the last, or the last one when the path ends in '/', is not a
 * directory), EXT4FS_E_SYMLINK_LOOP, EXT4FS_E_INODE_CORRUPT (a bad symlink),
 * and the lookup, inode and read errors.  The message names the component.
 */
int ext4fs_namei(struct ext4fs_fs *fs, uint32_t root_ino, uint32_t cwd_ino, const char *path,
		 int follow_last_symlink, uint32_t *ino);

/*
 * Path of inode ino seen from directory dir_ino (of dir_ino itself when ino
 * is 0 or equal to it): "/" for the root, "/a/b" for entries below it.
 * *path is malloc'd (caller frees).  Errors: EXT4FS_E_NO_MEMORY and the
 * directory iteration errors of the directories passed through (a
 * non-directory is not an error: it shows as "<ino>").
 */
int ext4fs_get_pathname(struct ext4fs_fs *fs, uint32_t dir_ino, uint32_t ino, char **path);

#ifdef __cplusplus
}
#endif
#endif
