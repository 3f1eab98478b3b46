/*
 * xattr.h - reading extended attributes.
 *
 * Layer 5.  An inode's attributes live in two places: the space after the
 * large-inode fields (128 + i_extra_isize up to s_inode_size, behind a
 * 4-byte 0xEA020000 magic) and one attribute block named by i_file_acl
 * (32-byte header with the same magic, h_blocks == 1).  A value is either
 * stored next to its entry or, with the ea_inode feature, in the data of a
 * separate inode (e_value_inum) that carries EXT4FS_EA_INODE_FL.
 *
 * Everything read from disk is checked before it is used: each entry must lie
 * inside its region with room for the 4-byte end marker after it, names may
 * not contain NUL, a value must lie after the entry table and inside the
 * region (padding included), value sizes are limited to 16 MiB, EA-inode
 * numbers must be valid.  A bad region fails the whole call with
 * EXT4FS_E_XATTR_CORRUPT naming the inode (and block); the entry loops are
 * bounded because every entry is at least 16 bytes and offsets only grow.
 * With metadata_csum the block checksum is verified (crc32c of the file
 * system seed, the block number as a 64-bit little-endian value and the
 * block with h_checksum taken as zero) unless the file system was opened
 * with EXT4FS_OPEN_IGNORE_CSUM.
 *
 * Attribute names are presented whole: the prefix of e_name_index
 * ("user.", "trusted.", "security.", "system.", "system.posix_acl_access",
 * ...) followed by the stored suffix.  An index without a known prefix gives
 * the bare suffix.  Values are the bytes as stored (POSIX ACLs stay in the
 * ext4 on-disk ACL format).
 */
#ifndef EXT4FS_XATTR_H
#define EXT4FS_XATTR_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_XATTR_MAGIC        0xEA020000U
#define EXT4FS_XATTR_HEADER_SIZE  32       /* block header */
#define EXT4FS_XATTR_IHDR_SIZE    4        /* in-inode header (just the magic) */
#define EXT4FS_XATTR_ENTRY_SIZE   16       /* entry without its name */
#define EXT4FS_XATTR_SIZE_MAX     (1U << 24)

/* e_name_index values. */
#define EXT4FS_XATTR_INDEX_USER               1
#define EXT4FS_XATTR_INDEX_POSIX_ACL_ACCESS   2
#define EXT4FS_XATTR_INDEX_POSIX_ACL_DEFAULT  3
#define EXT4FS_XATTR_INDEX_TRUSTED            4
#define EXT4FS_XATTR_INDEX_LUSTRE             5
#define EXT4FS_XATTR_INDEX_SECURITY           6
#define EXT4FS_XATTR_INDEX_SYSTEM             7
#define EXT4FS_XATTR_INDEX_RICHACL            8
#define EXT4FS_XATTR_INDEX_ENCRYPTION         9
#define EXT4FS_XATTR_INDEX_HURD               10

/* Longest full name: the longest prefix plus a 255-byte suffix. */
#define EXT4FS_XATTR_NAME_MAX 280

enum ext4fs_xattr_where {
	EXT4FS_XATTR_IN_INODE = 0,   /* in the inode body */
	EXT4FS_XATTR_IN_BLOCK = 1,   /* in the attribute block */
};

/* One attribute, as handed to an iteration callback. */
struct ext4fs_xattr {
	enum ext4fs_xattr_where where;
	uint64_t block;              /* the attribute block (IN_BLOCK), else 0 */
	uint32_t entry_offset;       /* byte offset of the entry in the inode record or block */
	uint8_t name_index;          /* e_name_index */
	uint8_t suffix_len;          /* e_name_len */
	const char *name;            /* full name with prefix, NUL-terminated */
	const char *suffix;          /* the stored e_name, NUL-terminated (inside name) */
	const unsigned char *value;  /* value_len bytes; NULL when not read (see flags) */
	uint32_t value_len;          /* e_value_size */
	uint16_t value_offs;         /* e_value_offs as stored */
	uint32_t value_inum;         /* EA inode holding the value, or 0 */
	uint32_t hash;               /* e_hash as stored */
};

/*
 * Callback: return 0 to go on, a positive value to stop (returned by the
 * iteration as is), or a negative error.  x and everything it points to are
 * valid only during the call.
 */
typedef int (*ext4fs_xattr_fn)(const struct ext4fs_xattr *x, void *arg);

/* Iteration flags. */
#define EXT4FS_XATTR_ITER_NO_BLOCK      0x1  /* only the in-inode attributes */
#define EXT4FS_XATTR_ITER_NO_INODE      0x2  /* only the attribute block */
#define EXT4FS_XATTR_ITER_NO_EA_VALUES  0x4  /* do not read EA-inode values (value = NULL) */

/*
 * Visit the attributes of inode ino (whose decoded record is inode): the
 * in-inode ones in stored order, then those of the attribute block.  The
 * in-inode area is read from the on-disk record.  Errors:
 * EXT4FS_E_XATTR_CORRUPT, EXT4FS_E_XATTR_CSUM, EXT4FS_E_INODE_CSUM (strict
 * mode, the record changed under us), EXT4FS_E_NO_MEMORY, errors reading an
 * EA inode's data, read errors, or what fn returned.
 */
int ext4fs_xattr_iterate(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			 unsigned flags, ext4fs_xattr_fn fn, void *arg);

/*
 * Fetch the value of the attribute called full_name (e.g. "user.foo",
 * "system.data", "system.posix_acl_access").  On success *value is a
 * malloc'd copy (caller frees; never NULL, even for an empty value) and
 * *len its length.  Errors: -ENODATA when there is no such attribute, and
 * those of ext4fs_xattr_iterate().
 */
int ext4fs_xattr_get(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     const char *full_name, void **value, size_t *len);

/* Prefix of a name index ("user.", "system.posix_acl_access", ...), or NULL when unknown. */
const char *ext4fs_xattr_prefix(unsigned name_index);

/*
 * Checksum an attribute block should carry (metadata_csum): crc32c of the
 * file system seed, blk as a little-endian 64-bit number and the block with
 * h_checksum taken as zero.  block is block_size bytes.  Cannot fail.
 */
uint32_t ext4fs_xattr_block_csum(const struct ext4fs_fs *fs, uint64_t blk, const void *block);

#ifdef __cplusplus
}
#endif
#endif
