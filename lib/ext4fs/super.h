/*
 * super.h - the ext4 superblock as native numbers.
 *
 * Layer 2 (ondisk): no I/O.  The superblock's fields are listed once, in
 * EXT4FS_SUPER_FIELDS, with their on-disk offsets; the native struct, the
 * decoder, the encoder and the by-name field table (for tools that print or
 * set fields by name) are all generated from that list, so they cannot
 * disagree.  Field names are the on-disk names, which users know from
 * dumpe2fs and debugfs.
 */
#ifndef EXT4FS_SUPER_H
#define EXT4FS_SUPER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_SUPER_OFFSET 1024
#define EXT4FS_SUPER_SIZE   1024
#define EXT4FS_SUPER_MAGIC  0xEF53

/*
 * X(type, name, offset) for scalars (little-endian on disk);
 * A(type, name, offset, count) for arrays.
 */
#define EXT4FS_SUPER_FIELDS(X, A) \
	X(uint32_t, s_inodes_count, 0x000) \
	X(uint32_t, s_blocks_count_lo, 0x004) \
	X(uint32_t, s_r_blocks_count_lo, 0x008) \
	X(uint32_t, s_free_blocks_count_lo, 0x00C) \
	X(uint32_t, s_free_inodes_count, 0x010) \
	X(uint32_t, s_first_data_block, 0x014) \
	X(uint32_t, s_log_block_size, 0x018) \
	X(uint32_t, s_log_cluster_size, 0x01C) \
	X(uint32_t, s_blocks_per_group, 0x020) \
	X(uint32_t, s_clusters_per_group, 0x024) \
	X(uint32_t, s_inodes_per_group, 0x028) \
	X(uint32_t, s_mtime, 0x02C) \
	X(uint32_t, s_wtime, 0x030) \
	X(uint16_t, s_mnt_count, 0x034) \
	X(uint16_t, s_max_mnt_count, 0x036) \
	X(uint16_t, s_magic, 0x038) \
	X(uint16_t, s_state, 0x03A) \
	X(uint16_t, s_errors, 0x03C) \
	X(uint16_t, s_minor_rev_level, 0x03E) \
	X(uint32_t, s_lastcheck, 0x040) \
	X(uint32_t, s_checkinterval, 0x044) \
	X(uint32_t, s_creator_os, 0x048) \
	X(uint32_t, s_rev_level, 0x04C) \
	X(uint16_t, s_def_resuid, 0x050) \
	X(uint16_t, s_def_resgid, 0x052) \
	X(uint32_t, s_first_ino, 0x054) \
	X(uint16_t, s_inode_size, 0x058) \
	X(uint16_t, s_block_group_nr, 0x05A) \
	X(uint32_t, s_feature_compat, 0x05C) \
	X(uint32_t, s_feature_incompat, 0x060) \
	X(uint32_t, s_feature_ro_compat, 0x064) \
	A(uint8_t, s_uuid, 0x068, 16) \
	A(uint8_t, s_volume_name, 0x078, 16) \
	A(uint8_t, s_last_mounted, 0x088, 64) \
	X(uint32_t, s_algorithm_usage_bitmap, 0x0C8) \
	X(uint8_t, s_prealloc_blocks, 0x0CC) \
	X(uint8_t, s_prealloc_dir_blocks, 0x0CD) \
	X(uint16_t, s_reserved_gdt_blocks, 0x0CE) \
	A(uint8_t, s_journal_uuid, 0x0D0, 16) \
	X(uint32_t, s_journal_inum, 0x0E0) \
	X(uint32_t, s_journal_dev, 0x0E4) \
	X(uint32_t, s_last_orphan, 0x0E8) \
	A(uint32_t, s_hash_seed, 0x0EC, 4) \
	X(uint8_t, s_def_hash_version, 0x0FC) \
	X(uint8_t, s_jnl_backup_type, 0x0FD) \
	X(uint16_t, s_desc_size, 0x0FE) \
	X(uint32_t, s_default_mount_opts, 0x100) \
	X(uint32_t, s_first_meta_bg, 0x104) \
	X(uint32_t, s_mkfs_time, 0x108) \
	A(uint32_t, s_jnl_blocks, 0x10C, 17) \
	X(uint32_t, s_blocks_count_hi, 0x150) \
	X(uint32_t, s_r_blocks_count_hi, 0x154) \
	X(uint32_t, s_free_blocks_count_hi, 0x158) \
	X(uint16_t, s_min_extra_isize, 0x15C) \
	X(uint16_t, s_want_extra_isize, 0x15E) \
	X(uint32_t, s_flags, 0x160) \
	X(uint16_t, s_raid_stride, 0x164) \
	X(uint16_t, s_mmp_update_interval, 0x166) \
	X(uint64_t, s_mmp_block, 0x168) \
	X(uint32_t, s_raid_stripe_width, 0x170) \
	X(uint8_t, s_log_groups_per_flex, 0x174) \
	X(uint8_t, s_checksum_type, 0x175) \
	X(uint8_t, s_encryption_level, 0x176) \
	X(uint8_t, s_reserved_pad, 0x177) \
	X(uint64_t, s_kbytes_written, 0x178) \
	X(uint32_t, s_snapshot_inum, 0x180) \
	X(uint32_t, s_snapshot_id, 0x184) \
	X(uint64_t, s_snapshot_r_blocks_count, 0x188) \
	X(uint32_t, s_snapshot_list, 0x190) \
	X(uint32_t, s_error_count, 0x194) \
	X(uint32_t, s_first_error_time, 0x198) \
	X(uint32_t, s_first_error_ino, 0x19C) \
	X(uint64_t, s_first_error_block, 0x1A0) \
	A(uint8_t, s_first_error_func, 0x1A8, 32) \
	X(uint32_t, s_first_error_line, 0x1C8) \
	X(uint32_t, s_last_error_time, 0x1CC) \
	X(uint32_t, s_last_error_ino, 0x1D0) \
	X(uint32_t, s_last_error_line, 0x1D4) \
	X(uint64_t, s_last_error_block, 0x1D8) \
	A(uint8_t, s_last_error_func, 0x1E0, 32) \
	A(uint8_t, s_mount_opts, 0x200, 64) \
	X(uint32_t, s_usr_quota_inum, 0x240) \
	X(uint32_t, s_grp_quota_inum, 0x244) \
	X(uint32_t, s_overhead_clusters, 0x248) \
	A(uint32_t, s_backup_bgs, 0x24C, 2) \
	A(uint8_t, s_encrypt_algos, 0x254, 4) \
	A(uint8_t, s_encrypt_pw_salt, 0x258, 16) \
	X(uint32_t, s_lpf_ino, 0x268) \
	X(uint32_t, s_prj_quota_inum, 0x26C) \
	X(uint32_t, s_checksum_seed, 0x270) \
	X(uint8_t, s_wtime_hi, 0x274) \
	X(uint8_t, s_mtime_hi, 0x275) \
	X(uint8_t, s_mkfs_time_hi, 0x276) \
	X(uint8_t, s_lastcheck_hi, 0x277) \
	X(uint8_t, s_first_error_time_hi, 0x278) \
	X(uint8_t, s_last_error_time_hi, 0x279) \
	X(uint8_t, s_first_error_errcode, 0x27A) \
	X(uint8_t, s_last_error_errcode, 0x27B) \
	X(uint16_t, s_encoding, 0x27C) \
	X(uint16_t, s_encoding_flags, 0x27E) \
	X(uint32_t, s_orphan_file_inum, 0x280) \
	X(uint32_t, s_checksum, 0x3FC)

struct ext4fs_super {
#define EXT4FS_SF_SCALAR_(t, n, o) t n;
#define EXT4FS_SF_ARRAY_(t, n, o, c) t n[c];
	EXT4FS_SUPER_FIELDS(EXT4FS_SF_SCALAR_, EXT4FS_SF_ARRAY_)
#undef EXT4FS_SF_SCALAR_
#undef EXT4FS_SF_ARRAY_
};

/* s_creator_os: the systems whose inode fields e2fsprogs reads differently. */
#define EXT4FS_OS_LINUX 0
#define EXT4FS_OS_HURD  1   /* i_frag and i_fsize where Linux keeps i_blocks_hi */

/* Feature bits. */
#define EXT4FS_FEATURE_COMPAT_DIR_PREALLOC    0x0001
#define EXT4FS_FEATURE_COMPAT_IMAGIC_INODES   0x0002
#define EXT4FS_FEATURE_COMPAT_HAS_JOURNAL     0x0004
#define EXT4FS_FEATURE_COMPAT_EXT_ATTR        0x0008
#define EXT4FS_FEATURE_COMPAT_RESIZE_INODE    0x0010
#define EXT4FS_FEATURE_COMPAT_DIR_INDEX       0x0020
#define EXT4FS_FEATURE_COMPAT_LAZY_BG         0x0040
#define EXT4FS_FEATURE_COMPAT_EXCLUDE_BITMAP  0x0100
#define EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2   0x0200
#define EXT4FS_FEATURE_COMPAT_FAST_COMMIT     0x0400
#define EXT4FS_FEATURE_COMPAT_STABLE_INODES   0x0800
#define EXT4FS_FEATURE_COMPAT_ORPHAN_FILE     0x1000

#define EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER  0x0001
#define EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE    0x0002
#define EXT4FS_FEATURE_RO_COMPAT_BTREE_DIR     0x0004
#define EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE     0x0008
#define EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM      0x0010
#define EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK     0x0020
#define EXT4FS_FEATURE_RO_COMPAT_EXTRA_ISIZE   0x0040
#define EXT4FS_FEATURE_RO_COMPAT_HAS_SNAPSHOT  0x0080
#define EXT4FS_FEATURE_RO_COMPAT_QUOTA         0x0100
#define EXT4FS_FEATURE_RO_COMPAT_BIGALLOC      0x0200
#define EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM 0x0400
#define EXT4FS_FEATURE_RO_COMPAT_REPLICA       0x0800
#define EXT4FS_FEATURE_RO_COMPAT_READONLY      0x1000
#define EXT4FS_FEATURE_RO_COMPAT_PROJECT       0x2000
#define EXT4FS_FEATURE_RO_COMPAT_SHARED_BLOCKS 0x4000
#define EXT4FS_FEATURE_RO_COMPAT_VERITY        0x8000
#define EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT 0x10000

#define EXT4FS_FEATURE_INCOMPAT_COMPRESSION   0x0001
#define EXT4FS_FEATURE_INCOMPAT_FILETYPE      0x0002
#define EXT4FS_FEATURE_INCOMPAT_RECOVER       0x0004
#define EXT4FS_FEATURE_INCOMPAT_JOURNAL_DEV   0x0008
#define EXT4FS_FEATURE_INCOMPAT_META_BG       0x0010
#define EXT4FS_FEATURE_INCOMPAT_EXTENTS       0x0040
#define EXT4FS_FEATURE_INCOMPAT_64BIT         0x0080
#define EXT4FS_FEATURE_INCOMPAT_MMP           0x0100
#define EXT4FS_FEATURE_INCOMPAT_FLEX_BG       0x0200
#define EXT4FS_FEATURE_INCOMPAT_EA_INODE      0x0400
#define EXT4FS_FEATURE_INCOMPAT_DIRDATA       0x1000
#define EXT4FS_FEATURE_INCOMPAT_CSUM_SEED     0x2000
#define EXT4FS_FEATURE_INCOMPAT_LARGEDIR      0x4000
#define EXT4FS_FEATURE_INCOMPAT_INLINE_DATA   0x8000
#define EXT4FS_FEATURE_INCOMPAT_ENCRYPT       0x10000
#define EXT4FS_FEATURE_INCOMPAT_CASEFOLD      0x20000

/* s_flags */
#define EXT4FS_FLAGS_SIGNED_HASH   0x0001
#define EXT4FS_FLAGS_UNSIGNED_HASH 0x0002
#define EXT4FS_FLAGS_TEST_FILESYS  0x0004

/* s_encoding (casefold's character encoding) and s_encoding_flags */
#define EXT4FS_ENC_UTF8_12_1        1
#define EXT4FS_ENC_STRICT_MODE_FL   0x0001   /* names in casefolded directories must be valid UTF-8 */

/* s_state */
#define EXT4FS_STATE_VALID         0x0001
#define EXT4FS_STATE_ERROR         0x0002
#define EXT4FS_STATE_ORPHAN        0x0004

/* Decode 1024 on-disk bytes into native numbers.  Cannot fail. */
void ext4fs_super_decode(struct ext4fs_super *sb, const void *disk);

/*
 * Encode into 1024 on-disk bytes.  Bytes not covered by a field (reserved
 * padding) are left as they were in disk, so a decode/encode round trip of a
 * block with unknown padding contents keeps them.  Cannot fail.
 */
void ext4fs_super_encode(const struct ext4fs_super *sb, void *disk);

/*
 * One superblock field, for printing or setting by name.  size is the width
 * of one element in bytes (1, 2, 4, 8); count is 1 for scalars.
 */
struct ext4fs_field {
	const char *name;
	unsigned int disk_offset;
	size_t native_offset;
	unsigned char size;
	unsigned short count;
};

/* The superblock's fields in on-disk order; *count receives their number. */
const struct ext4fs_field *ext4fs_super_fields(size_t *count);

#ifdef __cplusplus
}
#endif
/* bg_flags of a group descriptor (decoded in fs.h). */
#define EXT4FS_BG_INODE_UNINIT  0x0001
#define EXT4FS_BG_BLOCK_UNINIT  0x0002
#define EXT4FS_BG_INODE_ZEROED  0x0004

#endif
