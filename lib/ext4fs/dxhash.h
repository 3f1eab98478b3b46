/*
 * dxhash.h - directory index (htree) name hashes.
 *
 * Layer 2 (ondisk): pure functions, safe from any thread.
 * The hash versions are the values of s_def_hash_version and of the
 * dx_root's hash_version byte.  The "unsigned" variants differ from the
 * plain ones only in how name bytes above 0x7f are widened; which one a file
 * system uses is chosen by the SIGNED_HASH / UNSIGNED_HASH bits of s_flags
 * (see ext4fs_dx_hash_version_effective()).
 */
#ifndef EXT4FS_DXHASH_H
#define EXT4FS_DXHASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_HASH_LEGACY            0
#define EXT4FS_HASH_HALF_MD4          1
#define EXT4FS_HASH_TEA               2
#define EXT4FS_HASH_LEGACY_UNSIGNED   3
#define EXT4FS_HASH_HALF_MD4_UNSIGNED 4
#define EXT4FS_HASH_TEA_UNSIGNED      5
#define EXT4FS_HASH_SIPHASH           6

/*
 * Hash name[0..len) with the given hash version and seed (the superblock's
 * s_hash_seed; a NULL or all-zero seed means the default seed).  The major
 * hash has its lowest bit cleared, as htree stores it.  minor_hash may be
 * NULL.  Returns 0, or EXT4FS_E_UNKNOWN_HASH for an unknown version, or
 * EXT4FS_E_INVALID_ARG for SIPHASH without a seed.
 */
int ext4fs_dx_hash(int version, const char *name, size_t len, const uint32_t seed[4],
		   uint32_t *hash, uint32_t *minor_hash);

/*
 * The hash version to use for a directory: version as stored in the dx_root,
 * turned into its unsigned variant when the superblock flags (s_flags) say
 * UNSIGNED_HASH.  Cannot fail.
 */
int ext4fs_dx_hash_version_effective(int version, uint32_t s_flags);

/*
 * Name of a hash version as debugfs prints it ("legacy", "half_md4", "tea",
 * "legacy_unsigned", "half_md4_unsigned", "tea_unsigned", "siphash"), or NULL.
 * ext4fs_dx_hash_by_name() is the inverse; -1 when unknown.
 */
const char *ext4fs_dx_hash_name(int version);
int ext4fs_dx_hash_by_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
