/*
 * xattr.h - reading and changing extended attributes.
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

/*
 * The hash an attribute block entry carries (e_hash): the name's bytes
 * rotated in 5 bits at a time, then the value's little-endian words 16 bits
 * at a time.  The kernel reads the name's bytes as unsigned; some old
 * kernels read them as signed chars (signed_chars = 1), which checkers
 * accept too.  Cannot fail.
 */
uint32_t ext4fs_xattr_entry_hash(const void *name, size_t name_len, const void *value, size_t value_len,
				 int signed_chars);

/* -- Changing attributes ---------------------------------------------------
 *
 * Attributes are placed the way the kernel places them: in the inode body
 * when the new entry and value fit there (entries in the order they were
 * added, values packed from the end of the record), else in the attribute
 * block (entries sorted by name index, name length and name, values packed
 * from the end of the block, an entry hash on every entry and a block hash
 * in the header).  Setting an attribute that lives in the block to a value
 * that fits the inode moves it into the inode, and the other way round.  A
 * block shared with other inodes (h_refcount > 1) is copied before it is
 * changed; a block left empty is released.  Values are never moved into EA
 * inodes; an entry whose value already lives in one is kept as it is but
 * cannot be changed or removed (EXT4FS_E_UNSUPP_FEATURE).
 *
 * Each call works on a writable handle and takes the inode's decoded record
 * as authoritative: *inode is encoded into the on-disk record, the
 * attribute area is edited, the record is written and decoded back into
 * *inode (i_file_acl, i_blocks and, for set and remove, i_ctime changed).
 * The record's in-inode area must hold attributes or zeros: a record never
 * written before must not carry a previous owner's attributes.  A failure
 * leaves the inode and its attribute block as they were, except that an
 * I/O error while writing may leave the block changed and the inode not.
 */

#define EXT4FS_XATTR_CREATE  0x1   /* fail with EXT4FS_E_EXISTS if present */
#define EXT4FS_XATTR_REPLACE 0x2   /* fail with EXT4FS_E_NOT_FOUND if absent */

/*
 * Create or replace attribute full_name (with its namespace prefix:
 * "user.", "trusted.", "security.", "gnu.", or exactly
 * "system.posix_acl_access", "system.posix_acl_default",
 * "system.richacl") with len bytes of value (may be NULL when len is 0).
 * POSIX ACLs are taken in the format getxattr(2) returns (version 2,
 * 8-byte entries) and stored in ext4's compact format; a value already in
 * the ext4 format (version 1) is stored as it is.  Errors:
 * EXT4FS_E_INVALID_ARG (unknown prefix, empty suffix, "system.data" which
 * belongs to inline data, unknown flags, a malformed ACL),
 * EXT4FS_E_NAME_TOO_LONG (suffix over 255 bytes), EXT4FS_E_EXISTS /
 * EXT4FS_E_NOT_FOUND (per flags), EXT4FS_E_XATTR_NO_SPACE (fits neither
 * the inode nor the block), EXT4FS_E_NO_SPACE (no block for the
 * attributes), EXT4FS_E_XATTR_CORRUPT, EXT4FS_E_XATTR_CSUM,
 * EXT4FS_E_UNSUPP_FEATURE, EXT4FS_E_READ_ONLY, EXT4FS_E_NO_MEMORY, I/O
 * errors.  Setting the value an attribute already has changes nothing.
 */
int ext4fs_xattr_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		     const char *full_name, const void *value, size_t len, unsigned flags);

/*
 * Remove attribute full_name.  Errors: EXT4FS_E_NOT_FOUND when there is no
 * such attribute, and those of ext4fs_xattr_set().
 */
int ext4fs_xattr_remove(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			const char *full_name);

/*
 * Drop the inode's reference to its attribute block, for an inode being
 * deleted: the block's h_refcount goes down by one and the block is freed
 * when none is left; i_file_acl becomes 0 and i_blocks loses the block; the
 * record is written.  Nothing happens without a block.  In-inode
 * attributes are left alone.  Errors: EXT4FS_E_XATTR_CORRUPT,
 * EXT4FS_E_XATTR_CSUM, EXT4FS_E_UNSUPP_FEATURE (the block would be freed
 * but refers to EA inodes), EXT4FS_E_READ_ONLY, EXT4FS_E_NO_MEMORY, I/O
 * errors.
 */
int ext4fs_xattr_release(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode);

/*
 * Store len bytes as the whole inline area of inline-data inode ino (see
 * ext4fs_inline_data_read()): the first 60 (or all, when fewer) go to
 * i_block, whose other bytes are kept, the rest become the value of
 * system.data in the inode body (empty when len <= 60).  i_size is not
 * changed.  Room is judged as e2fsprogs' inline-data writer judges it: the
 * value may grow only by as many bytes as the body has free, padding not
 * counted.  On success *inode is the record as written.  Errors:
 * EXT4FS_E_INVALID_ARG (no inline-data flag), EXT4FS_E_XATTR_NO_SPACE (no
 * room), EXT4FS_E_XATTR_CORRUPT (system.data kept outside the inode body,
 * a damaged attribute area), those of ext4fs_xattr_set(); nothing is
 * written on an error found before writing.
 */
int ext4fs_inline_data_write(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, const void *data,
			     size_t len);

/*
 * Convert a POSIX ACL from ext4's on-disk format (what ext4fs_xattr_get()
 * returns for "system.posix_acl_access" / "_default": version 1, 4-byte
 * entries for the owner, owning group, mask and others, 8-byte entries
 * with an id for named users and groups) to the format of getxattr(2)
 * (version 2, 8-byte entries, id 0xFFFFFFFF where there is none).  On
 * success *out is malloc'd (caller frees) and *out_len its length.
 * Errors: EXT4FS_E_INVALID_ARG for a malformed ACL, EXT4FS_E_NO_MEMORY.
 */
int ext4fs_acl_to_vfs(const void *disk, size_t len, void **out, size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif
