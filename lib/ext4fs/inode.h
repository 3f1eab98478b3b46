/*
 * inode.h - reading inodes.
 *
 * Layer 4.  An inode is decoded into struct ext4fs_inode with native numbers;
 * the raw i_block area is kept as bytes because its meaning depends on the
 * inode (extent tree root, block map, fast symlink target, inline data).
 * Fields beyond the 128-byte base are valid only when
 * 128 + i_extra_isize covers them; ext4fs_inode_has_field() says which.
 */
#ifndef EXT4FS_INODE_H
#define EXT4FS_INODE_H

#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_BAD_INO         1
#define EXT4FS_ROOT_INO        2
#define EXT4FS_USR_QUOTA_INO   3
#define EXT4FS_GRP_QUOTA_INO   4
#define EXT4FS_BOOT_LOADER_INO 5
#define EXT4FS_UNDEL_DIR_INO   6
#define EXT4FS_RESIZE_INO      7
#define EXT4FS_JOURNAL_INO     8

#define EXT4FS_N_BLOCKS        15
#define EXT4FS_NDIR_BLOCKS     12
#define EXT4FS_IND_BLOCK       12
#define EXT4FS_DIND_BLOCK      13
#define EXT4FS_TIND_BLOCK      14
#define EXT4FS_INODE_BASE_SIZE 128

/* i_flags */
#define EXT4FS_SECRM_FL        0x00000001
#define EXT4FS_UNRM_FL         0x00000002
#define EXT4FS_COMPR_FL        0x00000004
#define EXT4FS_SYNC_FL         0x00000008
#define EXT4FS_IMMUTABLE_FL    0x00000010
#define EXT4FS_APPEND_FL       0x00000020
#define EXT4FS_NODUMP_FL       0x00000040
#define EXT4FS_NOATIME_FL      0x00000080
#define EXT4FS_INDEX_FL        0x00001000
#define EXT4FS_IMAGIC_FL       0x00002000
#define EXT4FS_JOURNAL_DATA_FL 0x00004000
#define EXT4FS_DIRSYNC_FL      0x00010000
#define EXT4FS_TOPDIR_FL       0x00020000
#define EXT4FS_HUGE_FILE_FL    0x00040000
#define EXT4FS_EXTENTS_FL      0x00080000
#define EXT4FS_VERITY_FL       0x00100000
#define EXT4FS_EA_INODE_FL     0x00200000
#define EXT4FS_INLINE_DATA_FL  0x10000000
#define EXT4FS_PROJINHERIT_FL  0x20000000
#define EXT4FS_CASEFOLD_FL     0x40000000
#define EXT4FS_ENCRYPT_FL      0x00000800

struct ext4fs_inode {
	uint16_t i_mode;
	uint16_t i_uid;
	uint32_t i_size_lo;
	uint32_t i_atime;
	uint32_t i_ctime;
	uint32_t i_mtime;
	uint32_t i_dtime;
	uint16_t i_gid;
	uint16_t i_links_count;
	uint32_t i_blocks_lo;
	uint32_t i_flags;
	uint32_t i_version_lo;      /* osd1 */
	uint8_t  i_block[60];
	uint32_t i_generation;
	uint32_t i_file_acl_lo;
	uint32_t i_size_high;
	uint32_t i_faddr;
	uint16_t i_blocks_high;
	uint16_t i_file_acl_high;
	uint16_t i_uid_high;
	uint16_t i_gid_high;
	uint16_t i_checksum_lo;
	uint16_t i_reserved;
	/* Large-inode fields (valid per ext4fs_inode_has_field). */
	uint16_t i_extra_isize;
	uint16_t i_checksum_hi;
	uint32_t i_ctime_extra;
	uint32_t i_mtime_extra;
	uint32_t i_atime_extra;
	uint32_t i_crtime;
	uint32_t i_crtime_extra;
	uint32_t i_version_hi;
	uint32_t i_projid;
	uint32_t on_disk_size;      /* bytes of the on-disk inode record (s_inode_size) */
};

/* Byte offsets of base fields a repair may change alone (see codec.h). */
#define EXT4FS_INODE_OFF_ATIME        0x08
#define EXT4FS_INODE_OFF_CTIME        0x0C
#define EXT4FS_INODE_OFF_MTIME        0x10
#define EXT4FS_INODE_OFF_FLAGS        0x20
#define EXT4FS_INODE_OFF_EXTRA_ISIZE  0x80

/* Byte offsets of the large-inode fields, for ext4fs_inode_has_field(). */
#define EXT4FS_INODE_OFF_CHECKSUM_HI  0x82
#define EXT4FS_INODE_OFF_CTIME_EXTRA  0x84
#define EXT4FS_INODE_OFF_MTIME_EXTRA  0x88
#define EXT4FS_INODE_OFF_ATIME_EXTRA  0x8C
#define EXT4FS_INODE_OFF_CRTIME       0x90
#define EXT4FS_INODE_OFF_CRTIME_EXTRA 0x94
#define EXT4FS_INODE_OFF_VERSION_HI   0x98
#define EXT4FS_INODE_OFF_PROJID       0x9C

/* Decode an on-disk inode record of size bytes (>= 128).  Cannot fail. */
void ext4fs_inode_decode(struct ext4fs_inode *inode, const void *disk, uint32_t size);

/*
 * Encode *inode into an on-disk record of size bytes (>= 128).  Large-inode
 * fields are stored only where 128 + i_extra_isize covers them; other bytes
 * of disk are left as they were.  The checksum fields are stored as given
 * (see ext4fs_inode_csum_set()).  Cannot fail.
 */
void ext4fs_inode_encode(const struct ext4fs_inode *inode, void *disk, uint32_t size);

/* Store the metadata_csum checksum of raw record raw of inode ino into it
 * (nothing without metadata_csum).  Cannot fail. */
void ext4fs_inode_csum_set(const struct ext4fs_fs *fs, uint32_t ino, void *raw);

/*
 * Read inode ino (1 <= ino <= s_inodes_count) into *inode.  With
 * metadata_csum the checksum is verified (EXT4FS_E_INODE_CSUM unless the file
 * system was opened with EXT4FS_OPEN_IGNORE_CSUM).  Errors:
 * EXT4FS_E_BAD_INODE_NUM, read errors.  The message names the inode.
 */
int ext4fs_inode_read(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode);

/*
 * As ext4fs_inode_read(), but the checksum is verified also on a handle
 * opened with EXT4FS_OPEN_IGNORE_CSUM, as e2fsprogs' library reads an
 * inode (a checker judging what e2fsck's library would refuse), and
 * *inode is filled also when it fails (EXT4FS_E_INODE_CSUM).  Errors as
 * ext4fs_inode_read(), EXT4FS_E_NO_MEMORY.
 */
int ext4fs_inode_read_strict(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode);

/*
 * Read inode ino's raw on-disk record (s_inode_size bytes) into buf, without
 * checksum verification.  Same range errors as ext4fs_inode_read().
 */
int ext4fs_inode_read_raw(struct ext4fs_fs *fs, uint32_t ino, void *buf);

/*
 * Read inode ino's raw record into raw (s_inode_size bytes, caller-owned) and
 * verify its checksum as ext4fs_inode_read() does; for callers that need the
 * bytes beyond the decoded fields (in-inode xattrs).  Same errors as
 * ext4fs_inode_read().
 */
int ext4fs_inode_read_raw_verified(struct ext4fs_fs *fs, uint32_t ino, void *raw);

/* Checksum the raw record of inode ino should carry (metadata_csum). */
uint32_t ext4fs_inode_csum(const struct ext4fs_fs *fs, uint32_t ino, const void *raw);

/* Nonzero when the stored checksum of raw inode ino is right, or there is none (no
 * metadata_csum, or a record whose base 128 bytes are all zero, as e2fsprogs judges). */
int ext4fs_inode_csum_ok(const struct ext4fs_fs *fs, uint32_t ino, const void *raw);

/* Nonzero when the field at byte offset off (of width len) lies within 128 + i_extra_isize. */
int ext4fs_inode_has_field(const struct ext4fs_inode *inode, unsigned off, unsigned len);

/* -- Derived values ------------------------------------------------------- */

uint64_t ext4fs_inode_size(const struct ext4fs_inode *inode);
uint32_t ext4fs_inode_uid(const struct ext4fs_inode *inode);
uint32_t ext4fs_inode_gid(const struct ext4fs_inode *inode);
uint64_t ext4fs_inode_file_acl(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode);

/* i_blocks as stored (units per huge_file / HUGE_FILE_FL rules are not applied). */
uint64_t ext4fs_inode_blocks_raw(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode);

/* i_blocks in 512-byte sectors (HUGE_FILE_FL counts file-system blocks). */
uint64_t ext4fs_inode_sectors(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode);

/*
 * A timestamp as seconds since the epoch (with the extra epoch bits when the
 * inode is large enough to hold them) and nanoseconds (0 without extra).
 * which: 'a', 'c', 'm' or 'r' (crtime).
 */
int64_t ext4fs_inode_time(const struct ext4fs_inode *inode, char which, uint32_t *nsec);

/* Group of inode ino. */
uint32_t ext4fs_inode_group(const struct ext4fs_fs *fs, uint32_t ino);

/*
 * Whether a device, fifo or socket inode looks like one, by e2fsprogs' rule:
 * no index or extents flag, and, when it is immutable or append-only, nothing
 * in i_block past the device number's words.  1 or 0.
 */
int ext4fs_inode_special_ok(const struct ext4fs_inode *inode);

/*
 * Whether symlink inode maps blocks by e2fsprogs' rule, which goes by
 * i_blocks (with an attribute block, by i_size and i_block[1]) rather than
 * by the target's length: what e2fsck walks and frees.  1 or 0.
 */
int ext4fs_symlink_has_map(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode);

/* Nonzero for a symlink whose target lives in i_block (no data blocks). */
int ext4fs_inode_is_fast_symlink(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode);

/* Nonzero when the inode's blocks are reached through an extent tree. */
int ext4fs_inode_has_extents(const struct ext4fs_inode *inode);

/* Nonzero when the inode's data is inline (INLINE_DATA_FL). */
int ext4fs_inode_has_inline_data(const struct ext4fs_inode *inode);

/* Mode tests. */
/*
 * Write inode ino: encode *inode into its on-disk record (the bytes past
 * the fields struct ext4fs_inode knows, in-inode xattrs, are kept), set the
 * checksum, write the inode table block.  Errors: EXT4FS_E_READ_ONLY,
 * EXT4FS_E_BAD_INODE_NUM, I/O errors.
 */
int ext4fs_inode_write(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode);

/* Write a whole raw record (inode_size bytes), checksum set here.  Same errors. */
int ext4fs_inode_write_raw(struct ext4fs_fs *fs, uint32_t ino, const void *raw);

/*
 * Write a whole raw record exactly as given, its checksum field included
 * (none is computed): for tools that damage an inode on purpose (debug4fs
 * "sif <ino> checksum <value>").  Same errors.
 */
int ext4fs_inode_write_raw_exact(struct ext4fs_fs *fs, uint32_t ino, const void *raw);

/*
 * Fill *inode for a newly allocated inode: mode, owner, all four times now,
 * one link, i_extra_isize as the superblock wants (s_want_extra_isize, else
 * 32), the extents flag for regular files and directories on
 * extent file systems (with an empty extent root), and a generation number.
 * Nothing is written.  Cannot fail.
 */
void ext4fs_inode_init_new(struct ext4fs_fs *fs, uint32_t ino, uint16_t mode, uint32_t uid,
			   uint32_t gid, struct ext4fs_inode *inode);

/* Set one of the times ('a', 'c', 'm', 'r' for crtime) with nanoseconds, past-2038 safe. */
void ext4fs_inode_set_time(struct ext4fs_inode *inode, char which, int64_t sec, uint32_t nsec);

/* Set i_size (both halves). */
void ext4fs_inode_set_size(struct ext4fs_inode *inode, uint64_t size);

/* Set the owner (both halves of uid and gid). */
void ext4fs_inode_set_owner(struct ext4fs_inode *inode, uint32_t uid, uint32_t gid);

/*
 * Add delta (may be negative) file-system blocks to i_blocks, in 512-byte
 * units (huge_file scaling is not used for new files).  Errors:
 * EXT4FS_E_FILE_TOO_BIG when the count does not fit.
 */
int ext4fs_inode_add_blocks(const struct ext4fs_fs *fs, struct ext4fs_inode *inode, int64_t delta);

#define EXT4FS_S_IFMT   0170000
#define EXT4FS_S_IFSOCK 0140000
#define EXT4FS_S_IFLNK  0120000
#define EXT4FS_S_IFREG  0100000
#define EXT4FS_S_IFBLK  0060000
#define EXT4FS_S_IFDIR  0040000
#define EXT4FS_S_IFCHR  0020000
#define EXT4FS_S_IFIFO  0010000
#define EXT4FS_ISDIR(m) (((m) & EXT4FS_S_IFMT) == EXT4FS_S_IFDIR)
#define EXT4FS_ISREG(m) (((m) & EXT4FS_S_IFMT) == EXT4FS_S_IFREG)
#define EXT4FS_ISLNK(m) (((m) & EXT4FS_S_IFMT) == EXT4FS_S_IFLNK)

#ifdef __cplusplus
}
#endif
#endif
