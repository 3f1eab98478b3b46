/*
 * fs_internal.h - the file-system handle's insides, for library modules only
 * (not installed).
 */
#ifndef EXT4FS_FS_INTERNAL_H
#define EXT4FS_FS_INTERNAL_H

#include <stdint.h>
#include "ext4fs/fs.h"

#define EXT4FS_CACHE_SLOTS 64   /* direct-mapped block cache: metadata re-reads are local */

struct ext4fs_fs {
	struct ext4fs_io *io;
	unsigned flags;
	struct ext4fs_super sb;
	unsigned char sb_raw[EXT4FS_SUPER_SIZE];
	struct ext4fs_geom geom;
	struct ext4fs_group_desc *groups;       /* group_count entries */
	unsigned char *gd_raw;                  /* group_count * desc_size bytes */
	unsigned char *gd_csum_ok;              /* group_count flags */
	uint64_t cache_blk[EXT4FS_CACHE_SLOTS];
	unsigned char cache_valid[EXT4FS_CACHE_SLOTS];
	unsigned char *cache_data;              /* EXT4FS_CACHE_SLOTS * block_size */
	char errmsg[256];
};

/*
 * Record a description of a failure and return err, so a failing path reads
 * "return fs_fail(fs, EXT4FS_E_X, "inode %u: ...", ino);".
 */
int fs_fail(struct ext4fs_fs *fs, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Nonzero when checksum mismatches are to be reported as errors. */
static inline int fs_csum_strict(const struct ext4fs_fs *fs)
{
	return !(fs->flags & EXT4FS_OPEN_IGNORE_CSUM);
}

#endif
