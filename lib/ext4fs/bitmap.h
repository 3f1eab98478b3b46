/*
 * bitmap.h - the block and inode allocation bitmaps of a whole file system.
 *
 * Layer 4.  A loaded bitmap is one flat bit array over the file system's
 * blocks (clusters with bigalloc) or inodes, built from the per-group bitmap
 * blocks.  Groups flagged BLOCK_UNINIT / INODE_UNINIT (trusted only when the
 * file system has group descriptor checksums and the group's descriptor
 * checksum is right) are not read: an uninitialised inode bitmap is all
 * free, and an uninitialised block bitmap has exactly the group's own
 * metadata in use (superblock and descriptor copies, and any bitmaps or
 * inode tables that flex_bg placed in it).  Bitmap checksums are verified
 * with metadata_csum.
 *
 * The array is allocated zeroed in one piece, so the pages of a large, mostly
 * empty file system are only touched where groups are in use.
 */
#ifndef EXT4FS_BITMAP_H
#define EXT4FS_BITMAP_H

#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ext4fs_bitmap;

/*
 * Load the block bitmap (bit n = block first_data_block + n, or cluster n
 * with bigalloc).  *out is owned by the caller (ext4fs_bitmap_free()).
 * Errors: EXT4FS_E_BITMAP_CSUM (strict mode), EXT4FS_E_NO_MEMORY, read
 * errors; the message names the group.
 */
int ext4fs_block_bitmap_load(struct ext4fs_fs *fs, struct ext4fs_bitmap **out);

/* Load the inode bitmap (bit n = inode n + 1).  Same errors and ownership. */
int ext4fs_inode_bitmap_load(struct ext4fs_fs *fs, struct ext4fs_bitmap **out);

/* Free a bitmap; NULL is allowed. */
void ext4fs_bitmap_free(struct ext4fs_bitmap *bm);

/* First and last valid item (block or inode number). */
uint64_t ext4fs_bitmap_start(const struct ext4fs_bitmap *bm);
uint64_t ext4fs_bitmap_end(const struct ext4fs_bitmap *bm);

/*
 * Test item n (a block or inode number; with bigalloc a block number, tested
 * through its cluster).  Returns 1 if in use, 0 if free, or
 * EXT4FS_E_INVALID_ARG when n is outside [start, end].
 */
int ext4fs_bitmap_test(const struct ext4fs_bitmap *bm, uint64_t n);

/*
 * Find the first item in [from, to] that is free (want_set 0) or in use
 * (want_set 1).  Returns 0 with *found set, -ENOENT when there is none, or
 * EXT4FS_E_INVALID_ARG for a range outside the bitmap.
 */
int ext4fs_bitmap_find(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t to,
		       int want_set, uint64_t *found);

/* Number of items in use in [from, to] (clamped to the bitmap). */
uint64_t ext4fs_bitmap_count_set(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t to);

/*
 * What a group's bitmap block held beyond its bits, for checkers.  A bitmap
 * block holds clusters_per_group (inodes_per_group) bits; the bits past the
 * file system's last block (in the last group) and the bytes past those
 * bits up to the block's end are padding, which must be all ones.
 */
#define EXT4FS_BITMAP_CSUM_BAD  0x1  /* metadata_csum: the descriptor's checksum does not match */
#define EXT4FS_BITMAP_TAIL_BAD  0x2  /* a byte past the group's bits is not 0xff */
#define EXT4FS_BITMAP_END_BAD   0x4  /* a bit for an item past the file system's end is clear */

/*
 * The EXT4FS_BITMAP_*_BAD findings for group g's bitmap block when this
 * bitmap was loaded (0 for a group it did not read, an uninitialised one,
 * or g out of range).  They describe the disk as it was then: for a
 * handle's live bitmap (ext4fs_fs_block_bitmap()), flushes since do not
 * change them, as a checker comparing with what it first read wants.
 * With strict checksums a load fails instead of reporting
 * EXT4FS_BITMAP_CSUM_BAD.  Cannot fail.
 */
unsigned ext4fs_bitmap_group_flags(const struct ext4fs_bitmap *bm, uint32_t g);

#ifdef __cplusplus
}
#endif
#endif
