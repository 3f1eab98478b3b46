/*
 * htree_write_internal.h - changing indexed directories (htree_write.c),
 * for dir_write.c (not installed).
 */
#ifndef EXT4FS_HTREE_WRITE_INTERNAL_H
#define EXT4FS_HTREE_WRITE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

/* Where an entry was found. */
struct dirw_loc {
	uint64_t lblk, pblk;
	uint32_t off, prev;
	uint32_t ino;
};

/*
 * Add an entry to an indexed directory: EXT4FS_E_EXISTS, EXT4FS_E_DIR_FULL,
 * EXT4FS_E_UNKNOWN_HASH, EXT4FS_E_HTREE_CORRUPT, allocation, corruption and
 * I/O errors.  Writes the blocks it changes and, when it grew the directory,
 * the inode; the times are the caller's.
 */
int ext4fs__dirw_htree_add(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			   const char *name, size_t len, uint32_t ino, uint8_t file_type);

/*
 * Find name in an indexed directory and leave its block in buf: *loc says
 * where.  Errors: EXT4FS_E_NOT_FOUND and as ext4fs__dirw_htree_add().
 */
int ext4fs__dirw_htree_find(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			    const char *name, size_t len, unsigned char *buf, struct dirw_loc *loc);

/*
 * Turn a linear one-block directory whose block 0 (content in block0, at
 * physical pblk0) is full into an indexed one: its entries move to a new
 * leaf at block 1, block 0 becomes the index root.  The inode gets
 * EXT4FS_INDEX_FL and is written.  Errors: EXT4FS_E_DIR_CORRUPT (no "."
 * and ".." to keep), EXT4FS_E_UNKNOWN_HASH, allocation and I/O errors;
 * nothing changed unless the writes themselves failed.
 */
int ext4fs__dirw_htree_convert(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			       const unsigned char *block0, uint64_t pblk0);

#endif
