/*
 * fs_write_internal.h - the write layer of the handle (fs_write.c,
 * fs_open.c), for the library modules above it (not installed).
 *
 * The write layer keeps a writable handle's live bitmaps, group and
 * superblock accounting and dirty flags, and flushes them; it registers a
 * listener on the handle (fs_internal.h) to release them at close.
 */
#ifndef EXT4FS_FS_WRITE_INTERNAL_H
#define EXT4FS_FS_WRITE_INTERNAL_H

#include <stdint.h>
#include "ext4fs/fs.h"

/* Refuse with EXT4FS_E_READ_ONLY (and a message naming what) unless writable. */
int ext4fs__fs_require_rw(struct ext4fs_fs *fs, const char *what);

/*
 * Take on a handle opened with EXT4FS_OPEN_RW: refuse features the write
 * path does not keep up to date and a journal to replay, and set up the
 * group dirty flags.  Errors: EXT4FS_E_UNSUPP_FEATURE,
 * EXT4FS_E_RO_UNSUPP_FEATURE, EXT4FS_E_NEEDS_RECOVERY, EXT4FS_E_NO_MEMORY.
 */
int ext4fs__fs_write_open(struct ext4fs_fs *fs);

/* Update group g's descriptor in memory (counts, flags) and mark it dirty. */
void ext4fs__fs_group_desc_update(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd);

#endif
