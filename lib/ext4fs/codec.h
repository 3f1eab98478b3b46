/*
 * codec.h - the on-disk records a checker or an inspector reads as they
 * are: directory entry heads, htree count/limit words and entries, the
 * checksum tails of directory blocks, extended attribute block headers and
 * entries, and block-map (indirect) slots.
 *
 * These decoders do not validate anything: they read the fields where the
 * format puts them, so that e4fsck can judge a damaged record and
 * debug4fs can show one; the library's own readers, which validate, are
 * in dir.h, htree.h, xattr.h and journal.h.  The field offsets are defined
 * here only: the library's directory and xattr code names them through
 * dir_internal.h and xattr_internal.h, and stores every rec_len with
 * ext4fs_dirent_rec_len_set().  Every function works at any
 * alignment and host byte order, touches only the bytes of its record,
 * cannot fail, and leaves bounds to the caller: each says how many bytes
 * it reads or writes.
 */
#ifndef EXT4FS_CODEC_H
#define EXT4FS_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* ---- Directory entries: le32 inode, le16 rec_len, u8 name_len, u8 file_type, name. ---- */

#define EXT4FS_DIRENT_OFF_INODE     0
#define EXT4FS_DIRENT_OFF_REC_LEN   4
#define EXT4FS_DIRENT_OFF_NAME_LEN  6
#define EXT4FS_DIRENT_OFF_FILE_TYPE 7
#define EXT4FS_DIRENT_OFF_NAME      8
#define EXT4FS_DIRENT_HEAD_SIZE     8

/* An entry's fixed head, as stored (rec_len undecoded: see ext4fs_dirent_rec_len()). */
struct ext4fs_dirent_head {
	uint32_t inode;
	uint16_t rec_len_raw;
	uint8_t  name_len;
	uint8_t  file_type;
};

/* Decode the 8-byte head at rec. */
void ext4fs_dirent_head_decode(const void *rec, struct ext4fs_dirent_head *h);

/* The inode field of the entry at rec (4 bytes read). */
uint32_t ext4fs_dirent_inode_get(const void *rec);

/* Store ino in the inode field of the entry at rec (4 bytes written). */
void ext4fs_dirent_inode_set(void *rec, uint32_t ino);

/* The raw rec_len field of the entry at rec (2 bytes read). */
uint16_t ext4fs_dirent_rec_len_raw(const void *rec);

/*
 * Store a record length of len bytes in a block of block_size bytes: the
 * inverse of ext4fs_dirent_rec_len().  Blocks of 64 KiB spell a
 * whole-block record 65535 and carry bits 16-17 of longer lengths in the
 * low two bits (2 bytes written).
 */
void ext4fs_dirent_rec_len_set(void *rec, uint32_t len, uint32_t block_size);

/* The checksum stored in the tail that ends a leaf block of block_size bytes. */
uint32_t ext4fs_dirent_tail_csum_get(const void *block, uint32_t block_size);

/* Store csum in the tail that ends a leaf block of block_size bytes (4 bytes written). */
void ext4fs_dirent_tail_csum_set(void *block, uint32_t block_size, uint32_t csum);

/* ---- htree (dx) blocks. ---- */

/*
 * The root's dx_root_info, which follows the '.' and '..' entries at byte
 * 0x18 of block 0: le32 reserved (0), hash version, info length (8),
 * indirect levels, unused flags.
 */
#define EXT4FS_DX_ROOT_INFO_OFFSET 0x18
struct ext4fs_dx_root_info {
	uint32_t reserved_zero;
	uint8_t  hash_version;
	uint8_t  info_length;
	uint8_t  indirect_levels;
	uint8_t  unused_flags;
};

/* Decode the root info of htree root block `block` (bytes 0x18-0x1F). */
void ext4fs_dx_root_info_decode(const void *block, struct ext4fs_dx_root_info *ri);

/*
 * The count/limit words at entries (the first 4 bytes of an entry array,
 * where entry 0's hash would be): le16 limit, le16 count.
 */
void ext4fs_dx_countlimit_get(const void *entries, uint16_t *limit, uint16_t *count);

/*
 * Entry i of the array at entries (8 bytes each: le32 hash, le32 block).
 * Raw: entry 0's hash is the count/limit, and the block keeps its high
 * bits (mask with EXT4FS_DX_BLOCK_MASK from htree.h).
 */
void ext4fs_dx_entry_get(const void *entries, uint32_t i, uint32_t *hash, uint32_t *block);

/* Store csum in the dx tail that starts tail_off bytes into block (le32 reserved, le32 csum). */
void ext4fs_dx_tail_csum_set(void *block, uint32_t tail_off, uint32_t csum);

/* ---- Extended attribute blocks and entries. ---- */

#define EXT4FS_XATTR_HEADER_SIZE 32   /* of a block; an inode body's header is the magic alone */
#define EXT4FS_XATTR_ENTRY_SIZE  16   /* the fixed part; the name follows */

/* Where the header's fields lie in an xattr block (le32 each). */
#define EXT4FS_XATTR_HDR_OFF_MAGIC     0x00
#define EXT4FS_XATTR_HDR_OFF_REFCOUNT  0x04
#define EXT4FS_XATTR_HDR_OFF_BLOCKS    0x08
#define EXT4FS_XATTR_HDR_OFF_HASH      0x0C
#define EXT4FS_XATTR_HDR_OFF_CHECKSUM  0x10

/* Where an entry's fields lie: u8 name_len, u8 name_index, le16 value_offs, le32 the rest. */
#define EXT4FS_XATTR_ENT_OFF_NAME_LEN    0x00
#define EXT4FS_XATTR_ENT_OFF_NAME_INDEX  0x01
#define EXT4FS_XATTR_ENT_OFF_VALUE_OFFS  0x02
#define EXT4FS_XATTR_ENT_OFF_VALUE_INUM  0x04
#define EXT4FS_XATTR_ENT_OFF_VALUE_SIZE  0x08
#define EXT4FS_XATTR_ENT_OFF_HASH        0x0C
#define EXT4FS_XATTR_ENT_OFF_NAME        0x10

/* The header that starts an xattr block. */
struct ext4fs_xattr_header {
	uint32_t magic;
	uint32_t refcount;
	uint32_t blocks;
	uint32_t hash;
	uint32_t checksum;
};

/* Decode the header at the start of an xattr block (20 bytes read). */
void ext4fs_xattr_header_decode(const void *block, struct ext4fs_xattr_header *h);

/* Store the reference count of an xattr block (4 bytes written). */
void ext4fs_xattr_header_refcount_set(void *block, uint32_t refcount);

/* Store the checksum of an xattr block (4 bytes written). */
void ext4fs_xattr_header_csum_set(void *block, uint32_t csum);

/* The magic that opens in-inode attributes (at 128 + i_extra_isize). */
uint32_t ext4fs_xattr_ibody_magic_get(const void *p);

/* Store magic as that of in-inode attributes at p; 0 drops them (4 bytes written). */
void ext4fs_xattr_ibody_magic_set(void *p, uint32_t magic);

/* An entry's fixed part; its name (name_len bytes) follows at EXT4FS_XATTR_ENTRY_SIZE. */
struct ext4fs_xattr_entry_head {
	uint8_t  name_len;
	uint8_t  name_index;
	uint16_t value_offs;
	uint32_t value_inum;
	uint32_t value_size;
	uint32_t hash;
};

/* Decode the entry at e (16 bytes read). */
void ext4fs_xattr_entry_head_decode(const void *e, struct ext4fs_xattr_entry_head *h);

/* Nonzero when the 4 bytes at e are zero: the end of an entry list. */
int ext4fs_xattr_entry_is_end(const void *e);

/* Store the hash of the entry at e (4 bytes written). */
void ext4fs_xattr_entry_hash_set(void *e, uint32_t hash);

/* ---- Block maps: i_block of a mapped inode and indirect blocks, le32 slots. ---- */

/* Slot i of the map at map (4 bytes read at 4 * i). */
uint32_t ext4fs_blockmap_slot_get(const void *map, uint32_t i);

/* Store blk in slot i of the map at map (4 bytes written at 4 * i). */
void ext4fs_blockmap_slot_set(void *map, uint32_t i, uint32_t blk);

/*
 * ---- Inode records: one field of a raw record (offsets EXT4FS_INODE_OFF_*
 * in inode.h), for a check that must judge bytes i_extra_isize does not
 * cover, or a repair that leaves every other byte as it was. ----
 */

/* The 16-bit field at byte off of raw (2 bytes read). */
uint16_t ext4fs_inode_raw_get16(const void *raw, uint32_t off);

/* The 32-bit field at byte off of raw (4 bytes read). */
uint32_t ext4fs_inode_raw_get32(const void *raw, uint32_t off);

/* Store v in the 32-bit field at byte off of raw (4 bytes written). */
void ext4fs_inode_raw_set32(void *raw, uint32_t off, uint32_t v);

/*
 * ---- The directory hash seed: s_hash_seed's 16 bytes (a UUID as written)
 * as the four words ext4fs_dx_hash() takes (16 bytes read). ----
 */
void ext4fs_hash_seed_decode(const void *bytes, uint32_t seed[4]);

/*
 * ---- An encrypted symlink's target: le16 length, then that many bytes of
 * ciphertext (2 bytes read). ----
 */
uint16_t ext4fs_encrypted_symlink_len_get(const void *data);

/*
 * ---- An inode's encryption context: the value of attribute index 9,
 * name "c".  Version 1: u8 version, u8 contents mode, u8 filenames mode,
 * u8 flags, 8-byte key descriptor, 16-byte nonce (28 bytes).  Version 2:
 * the same four bytes, 4 reserved bytes, 16-byte key identifier, 16-byte
 * nonce (40 bytes).  The policy is the context without its nonce: two
 * inodes share a policy when those bytes are equal. ----
 */
#define EXT4FS_FSCRYPT_POLICY_MAX   24      /* a version 2 policy's bytes */
#define EXT4FS_FSCRYPT_NAME_MIN     16      /* the shortest encrypted name (one cipher block) */

enum ext4fs_fscrypt_verdict {
	EXT4FS_FSCRYPT_CORRUPT = -1,        /* empty, version 0, or a known version of the wrong size */
	EXT4FS_FSCRYPT_UNKNOWN = 0,         /* a version this decoder does not know (perhaps valid) */
	EXT4FS_FSCRYPT_POLICY = 1,          /* a version 1 or 2 context: its policy was copied out */
};

/*
 * Judge the len bytes of context ctx (len bytes read) and, for a known
 * version, copy its policy into policy (*policy_len bytes, at most
 * EXT4FS_FSCRYPT_POLICY_MAX, written).  Returns an ext4fs_fscrypt_verdict;
 * *policy_len is 0 unless EXT4FS_FSCRYPT_POLICY.  Cannot fail otherwise.
 */
int ext4fs_fscrypt_context_policy(const void *ctx, size_t len, uint8_t policy[EXT4FS_FSCRYPT_POLICY_MAX],
				  size_t *policy_len);

#endif
