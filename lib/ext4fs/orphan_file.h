/*
 * orphan_file.h - the orphan file (COMPAT_ORPHAN_FILE): where the kernel
 * records inodes it still has to truncate or delete, one slot each.
 *
 * Layer 4.  The file (inode s_orphan_file_inum) is a plain run of blocks;
 * each block holds (block_size - 8) / 4 little-endian 32-bit inode
 * numbers (0 for a free slot), then a tail of the magic 0x0B10CA04 and,
 * with metadata_csum, a crc32c over the inode's checksum seed (number and
 * generation), the block's physical number (64-bit) and the slots.  The
 * kernel sets RO_COMPAT_ORPHAN_PRESENT while a slot may be in use.
 *
 * The block functions work on a caller's buffer of block_size bytes and
 * never fail; the file functions need a writable handle.
 */
#ifndef EXT4FS_ORPHAN_FILE_H
#define EXT4FS_ORPHAN_FILE_H

#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_ORPHAN_BLOCK_MAGIC 0x0B10CA04U

/* What one block of the orphan file holds, from ext4fs_orphan_block_inspect(). */
struct ext4fs_orphan_block_info {
	uint32_t slots;      /* inode slots in a block */
	uint32_t used;       /* slots holding a nonzero number */
	uint32_t magic;      /* the tail's magic as stored */
	uint32_t csum;       /* the tail's checksum as stored */
	uint32_t want_csum;  /* what it should be (0 without metadata_csum) */
	int magic_ok;
	int csum_ok;         /* always 1 without metadata_csum */
};

/* Inode slots in one block of the orphan file.  Cannot fail. */
uint32_t ext4fs_orphan_block_slots(const struct ext4fs_fs *fs);

/*
 * The checksum block buf should carry when it sits at physical block pblk
 * of the orphan file, inode ino of generation generation: crc32c, as the
 * kernel computes it (computed whether or not the file system has
 * metadata_csum).  Cannot fail.
 */
uint32_t ext4fs_orphan_block_csum(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				  uint64_t pblk, const void *buf);

/* Decode block buf (at pblk of orphan file ino, generation) into *info.  Cannot fail. */
void ext4fs_orphan_block_inspect(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				 uint64_t pblk, const void *buf, struct ext4fs_orphan_block_info *info);

/* Slot i of block buf (0 for a free slot or i out of range).  Cannot fail. */
uint32_t ext4fs_orphan_block_entry(const struct ext4fs_fs *fs, const void *buf, uint32_t i);

/*
 * Store inode number entry in slot i of block buf and refresh the tail
 * (magic, and the checksum with metadata_csum) for pblk of orphan file
 * ino, generation.  Returns 0, or EXT4FS_E_INVALID_ARG for i out of range
 * (buf unchanged).
 */
int ext4fs_orphan_block_set_entry(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				  uint64_t pblk, void *buf, uint32_t i, uint32_t entry);

/*
 * Fill buf with the empty block mke2fs and the kernel write at pblk of
 * orphan file ino, generation: free slots, the magic, and the checksum
 * with metadata_csum (0 without).  Cannot fail.
 */
void ext4fs_orphan_block_init(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			      uint64_t pblk, void *buf);

/*
 * Set (on != 0) or clear RO_COMPAT_ORPHAN_PRESENT, which says whether the
 * orphan file may hold entries (ext4fs_super_set() does not change
 * ro_compat features); written at the next flush.  Errors:
 * EXT4FS_E_READ_ONLY.
 */
int ext4fs_orphan_present_set(struct ext4fs_fs *fs, int on);

/*
 * The size mke2fs gives an orphan file on this file system, in blocks:
 * 32 below 128Ki blocks, blocks / 4096 below 2Mi blocks, else 512,
 * rounded up to whole clusters.  Cannot fail.
 */
uint32_t ext4fs_orphan_file_default_blocks(const struct ext4fs_fs *fs);

/*
 * Free every block of the orphan file (inode s_orphan_file_inum), clear
 * the first 128 bytes of its inode (the inode stays allocated, as
 * e2fsprogs leaves it) and the features orphan_file and orphan_present.
 * An inode the inode bitmap calls free owns no blocks: only its record is
 * cleared, so a record pointing anywhere (a checker cleared the inode) is
 * no obstacle; with s_orphan_file_inum 0 only the features are cleared.
 * s_orphan_file_inum keeps its value.  Errors: EXT4FS_E_READ_ONLY,
 * EXT4FS_E_BAD_INODE_NUM when s_orphan_file_inum is another unusable inode,
 * the mapping and I/O errors of ext4fs_file_truncate().
 */
int ext4fs_orphan_file_truncate(struct ext4fs_fs *fs);

/*
 * Make inode ino the orphan file again: its blocks freed, then a regular
 * 0600 file of one link and nblocks empty blocks (ext4fs_orphan_block_init)
 * allocated through the block allocator, generation 0; s_orphan_file_inum
 * = ino, orphan_file set and orphan_present cleared.  An inode the bitmap
 * calls free is marked in use (counted); ino 0 takes a new inode from the
 * inode allocator (as e2fsprogs does when s_orphan_file_inum names none).
 * The caller flushes.  Errors: EXT4FS_E_READ_ONLY, EXT4FS_E_NO_FREE_INODES,
 * EXT4FS_E_BAD_INODE_NUM, EXT4FS_E_INVALID_ARG for nblocks 0,
 * EXT4FS_E_NO_SPACE and the errors of ext4fs_file_write() (the file then
 * holds what was written and the features are left as they were).
 */
int ext4fs_orphan_file_create(struct ext4fs_fs *fs, uint32_t ino, uint32_t nblocks);

#ifdef __cplusplus
}
#endif
#endif
