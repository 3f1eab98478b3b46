/*
 * ondisk_names.h - names for the superblock's coded values, as e2fsprogs
 * prints them (dumpe2fs -h, debugfs stats, tune2fs -l): default mount
 * options, s_flags, the error behaviour, hash algorithms, creator OSes,
 * file system states, kernel error codes, encodings, block group flags,
 * and UUIDs.  The spellings are an interface: scripts parse them.
 *
 * Layer 2 (ondisk): no I/O, no state, no allocation.  Functions that take
 * a buf write the name of a value without a name there ("MNTOPT_12",
 * "HASHALG_7", ...) and return buf; otherwise they return a static string.
 * None can fail; a buf too small truncates (snprintf's rule).
 */
#ifndef EXT4FS_ONDISK_NAMES_H
#define EXT4FS_ONDISK_NAMES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* s_default_mount_opts: bits 5-6 hold the journalling mode, the others are single options. */
#define EXT4FS_DEFM_JMODE_MASK  0x0060
#define EXT4FS_DEFM_JMODE_SHIFT 5

/* The journalling mode in opts ("journal_data", "journal_data_ordered",
 * "journal_data_writeback"), or NULL when the mode bits are 0. */
const char *ext4fs_defm_jmode_name(uint32_t opts);

/* Option bit `bit` (0-31, outside the mode bits): "user_xattr", "acl", ... or "MNTOPT_<bit>". */
const char *ext4fs_defm_option_name(unsigned bit, char *buf, size_t len);

/* s_flags bit `bit` (0-31): "signed_directory_hash", ... or NULL for a bit without a name. */
const char *ext4fs_sb_flag_name(unsigned bit);

/* Block group descriptor flag bit `bit` (0-15): "inode_uninit", ... or NULL. */
const char *ext4fs_bg_flag_name(unsigned bit);

/* s_errors: "Continue", "Remount read-only", "Panic", "Unknown (continue)" for others. */
const char *ext4fs_errors_behavior_name(unsigned errors);

/* s_def_hash_version: "legacy", "half_md4", "tea", or "HASHALG_<v>". */
const char *ext4fs_def_hash_name(unsigned v, char *buf, size_t len);

/* s_creator_os: "Linux", "Hurd", "Masix", "FreeBSD", "Lites", or "(unknown os)". */
const char *ext4fs_creator_os_name(uint32_t os);

/* s_rev_level: "original" (0), "dynamic" (1), "unknown". */
const char *ext4fs_revision_name(uint32_t rev);

/* s_state: "clean" or "not clean", followed by " with errors" when the error bit is set. */
const char *ext4fs_state_name(uint16_t state);

/* s_{first,last}_error_errcode (the kernel's codes): "EIO", ... or "UNKNOWN_ERRCODE_<c>". */
const char *ext4fs_errcode_name(unsigned code, char *buf, size_t len);

/* s_encoding: "utf8-12.1" or "UNKNOWN_ENCODING_<e>". */
const char *ext4fs_encoding_name(unsigned encoding, char *buf, size_t len);

/* 1 when all 16 bytes are zero (the null UUID). */
int ext4fs_uuid_is_null(const uint8_t uuid[16]);

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" in lower case (len >= 37 holds it all). */
const char *ext4fs_uuid_format(const uint8_t uuid[16], char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
