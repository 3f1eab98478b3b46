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

/*
 * A handle for a file system that exists only in memory so far (mkfs): the
 * superblock is validated and the geometry derived as ext4fs_open() does;
 * the descriptors start zeroed and there is no I/O channel.  Errors as
 * validation reports them, EXT4FS_E_NO_MEMORY; errmsg says which field.
 */
int fs_new_in_memory(const struct ext4fs_super *sb, struct ext4fs_fs **out, char *errmsg,
		     size_t errmsg_len);

/* Set group g's descriptor: encode it and its checksum into the raw table. */
void fs_group_desc_store(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd);

/* Encode fs->sb into fs->sb_raw with its checksum (metadata_csum). */
void fs_super_store(struct ext4fs_fs *fs);

#endif
