/*
 * mmp.h - multi-mount protection: the MMP block and its protocol.
 *
 * Layer "write".  A file system with the mmp feature names in s_mmp_block
 * one block where whoever uses it (the kernel while mounted, a checker or
 * an editor while open for writing) keeps a sequence number.  A user
 * claims the file system by writing a random sequence, waiting longer than
 * another node's update interval, and finding its own number still there;
 * it then writes the "fsck" sequence (others stay away) and at the end the
 * "clean" one.  A writable ext4fs_open() does this (see ext4fs_open_opts'
 * mmp_* fields); a read-only open never touches the block.  The functions
 * below are for checkers and tools that look at or repair the block.
 *
 * The on-disk record (little-endian, the first 1024 bytes of the block):
 * magic, sequence, time of the last update, node and device names of the
 * last writer, check interval, and with metadata_csum a crc32c over the
 * bytes before the checksum field.
 */
#ifndef EXT4FS_MMP_H
#define EXT4FS_MMP_H

#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_MMP_SIZE              1024         /* bytes of the block the record uses */
#define EXT4FS_MMP_MAGIC             0x004D4D50U
#define EXT4FS_MMP_SEQ_CLEAN         0xFF4D4D50U  /* nobody uses the file system */
#define EXT4FS_MMP_SEQ_FSCK          0xE24D4D50U  /* a checker or editor has it open */
#define EXT4FS_MMP_SEQ_MAX           0xE24D4D4FU  /* highest sequence a user may hold */
#define EXT4FS_MMP_MIN_CHECK_INTERVAL 5           /* seconds; a smaller interval counts as this */
#define EXT4FS_MMP_NODENAME_LEN      64
#define EXT4FS_MMP_BDEVNAME_LEN      32

/* The record, decoded.  The names are NUL-terminated copies of the fields. */
struct ext4fs_mmp {
	uint32_t magic;
	uint32_t seq;
	uint64_t time;                                 /* seconds since the epoch */
	char nodename[EXT4FS_MMP_NODENAME_LEN + 1];
	char bdevname[EXT4FS_MMP_BDEVNAME_LEN + 1];
	uint16_t check_interval;                       /* seconds */
	uint32_t checksum;
};

/* Decode the record in raw (EXT4FS_MMP_SIZE bytes).  Cannot fail. */
void ext4fs_mmp_decode(const unsigned char *raw, struct ext4fs_mmp *out);

/*
 * Encode m into raw (EXT4FS_MMP_SIZE bytes, all of them written; the names
 * are cut to their fields' sizes).  With has_csum the checksum is computed
 * with seed (the file system's metadata_csum seed), else the field is 0.
 * Cannot fail.
 */
void ext4fs_mmp_encode(const struct ext4fs_mmp *m, int has_csum, uint32_t seed, unsigned char *raw);

/* The checksum the record in raw (EXT4FS_MMP_SIZE bytes) should carry. */
uint32_t ext4fs_mmp_csum(uint32_t seed, const unsigned char *raw);

/*
 * Nonzero when blk may hold the MMP block as e2fsprogs reads it: after the
 * first data block and inside the file system.  Cannot fail.
 */
int ext4fs_mmp_block_in_range(const struct ext4fs_fs *fs, uint64_t blk);

/*
 * Nonzero when blk is one of the fixed metadata blocks of its group (a
 * superblock or descriptor copy, reserved descriptor blocks, a bitmap, the
 * inode table): a writable open refuses an MMP block there, since writing
 * the record would destroy them.  blk must be in range.  Cannot fail.
 */
int ext4fs_mmp_block_is_metadata(const struct ext4fs_fs *fs, uint64_t blk);

/*
 * Read the MMP block named by the superblock into *out, bypassing the
 * handle's block cache (another node may have written it).  Works on any
 * handle.  Errors: EXT4FS_E_MMP_BAD_BLOCK (s_mmp_block out of range, *out
 * untouched), I/O errors, EXT4FS_E_MMP_MAGIC (*out holds what was read),
 * EXT4FS_E_MMP_CSUM with metadata_csum when the magic is right and the
 * checksum is not (whatever the open flags say: *out holds the record).
 */
int ext4fs_mmp_read(struct ext4fs_fs *fs, struct ext4fs_mmp *out);

/*
 * The check interval the protocol waits on: the superblock's update
 * interval, at least EXT4FS_MMP_MIN_CHECK_INTERVAL, or the record's
 * interval when m (may be NULL) asks for more.  Cannot fail.
 */
unsigned ext4fs_mmp_check_interval(const struct ext4fs_fs *fs, const struct ext4fs_mmp *m);

/*
 * Write a fresh record with the clean sequence (this node's name, the
 * handle's device name, the interval from the superblock): how a checker
 * repairs a block with a bad magic or checksum.  The handle must be
 * writable (opened with mmp_skip, as the block cannot be claimed while it
 * is bad).  Errors: EXT4FS_E_READ_ONLY, EXT4FS_E_MMP_BAD_BLOCK, I/O errors.
 */
int ext4fs_mmp_reset(struct ext4fs_fs *fs);

#ifdef __cplusplus
}
#endif
#endif
