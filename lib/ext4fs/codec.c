/*
 * codec.c - raw record codecs: the field offsets of directory entries,
 * htree blocks, xattr blocks and block maps, read and written without
 * judgement (see codec.h).
 */
#include "config.h"
#include "ext4fs/codec.h"
#include <string.h>
#include "ondisk_le.h"

void ext4fs_dirent_head_decode(const void *rec, struct ext4fs_dirent_head *h)
{
	const unsigned char *b = rec;

	h->inode = le32_load(b + EXT4FS_DIRENT_OFF_INODE);
	h->rec_len_raw = le16_load(b + EXT4FS_DIRENT_OFF_REC_LEN);
	h->name_len = b[EXT4FS_DIRENT_OFF_NAME_LEN];
	h->file_type = b[EXT4FS_DIRENT_OFF_FILE_TYPE];
}

uint32_t ext4fs_dirent_inode_get(const void *rec)
{
	return le32_load((const unsigned char *)rec + EXT4FS_DIRENT_OFF_INODE);
}

void ext4fs_dirent_inode_set(void *rec, uint32_t ino)
{
	le32_store((unsigned char *)rec + EXT4FS_DIRENT_OFF_INODE, ino);
}

uint16_t ext4fs_dirent_rec_len_raw(const void *rec)
{
	return le16_load((const unsigned char *)rec + EXT4FS_DIRENT_OFF_REC_LEN);
}

void ext4fs_dirent_rec_len_set(void *rec, uint32_t len, uint32_t block_size)
{
	unsigned char *at = (unsigned char *)rec + EXT4FS_DIRENT_OFF_REC_LEN;

	if (block_size < 65536 || len < 65536)
		le16_store(at, (uint16_t)len);
	else if (len == 65536)
		le16_store(at, 65535);
	else
		le16_store(at, (uint16_t)((len & 65532U) | ((len >> 16) & 3U)));
}

uint32_t ext4fs_dirent_tail_csum_get(const void *block, uint32_t block_size)
{
	return le32_load((const unsigned char *)block + block_size - 4);
}

void ext4fs_dirent_tail_csum_set(void *block, uint32_t block_size, uint32_t csum)
{
	le32_store((unsigned char *)block + block_size - 4, csum);
}

void ext4fs_dx_root_info_decode(const void *block, struct ext4fs_dx_root_info *ri)
{
	const unsigned char *b = (const unsigned char *)block + EXT4FS_DX_ROOT_INFO_OFFSET;

	ri->reserved_zero = le32_load(b);
	ri->hash_version = b[4];
	ri->info_length = b[5];
	ri->indirect_levels = b[6];
	ri->unused_flags = b[7];
}

void ext4fs_dx_countlimit_get(const void *entries, uint16_t *limit, uint16_t *count)
{
	const unsigned char *b = entries;

	*limit = le16_load(b);
	*count = le16_load(b + 2);
}

void ext4fs_dx_entry_get(const void *entries, uint32_t i, uint32_t *hash, uint32_t *block)
{
	const unsigned char *e = (const unsigned char *)entries + (uint64_t)i * 8;

	*hash = le32_load(e);
	*block = le32_load(e + 4);
}

void ext4fs_dx_tail_csum_set(void *block, uint32_t tail_off, uint32_t csum)
{
	le32_store((unsigned char *)block + tail_off + 4, csum);
}

void ext4fs_xattr_header_decode(const void *block, struct ext4fs_xattr_header *h)
{
	const unsigned char *b = block;

	h->magic = le32_load(b + EXT4FS_XATTR_HDR_OFF_MAGIC);
	h->refcount = le32_load(b + EXT4FS_XATTR_HDR_OFF_REFCOUNT);
	h->blocks = le32_load(b + EXT4FS_XATTR_HDR_OFF_BLOCKS);
	h->hash = le32_load(b + EXT4FS_XATTR_HDR_OFF_HASH);
	h->checksum = le32_load(b + EXT4FS_XATTR_HDR_OFF_CHECKSUM);
}

void ext4fs_xattr_header_refcount_set(void *block, uint32_t refcount)
{
	le32_store((unsigned char *)block + EXT4FS_XATTR_HDR_OFF_REFCOUNT, refcount);
}

void ext4fs_xattr_header_csum_set(void *block, uint32_t csum)
{
	le32_store((unsigned char *)block + EXT4FS_XATTR_HDR_OFF_CHECKSUM, csum);
}

uint32_t ext4fs_xattr_ibody_magic_get(const void *p)
{
	return le32_load(p);
}

void ext4fs_xattr_ibody_magic_set(void *p, uint32_t magic)
{
	le32_store(p, magic);
}

void ext4fs_xattr_entry_head_decode(const void *e, struct ext4fs_xattr_entry_head *h)
{
	const unsigned char *b = e;

	h->name_len = b[EXT4FS_XATTR_ENT_OFF_NAME_LEN];
	h->name_index = b[EXT4FS_XATTR_ENT_OFF_NAME_INDEX];
	h->value_offs = le16_load(b + EXT4FS_XATTR_ENT_OFF_VALUE_OFFS);
	h->value_inum = le32_load(b + EXT4FS_XATTR_ENT_OFF_VALUE_INUM);
	h->value_size = le32_load(b + EXT4FS_XATTR_ENT_OFF_VALUE_SIZE);
	h->hash = le32_load(b + EXT4FS_XATTR_ENT_OFF_HASH);
}

int ext4fs_xattr_entry_is_end(const void *e)
{
	return le32_load(e) == 0;
}

void ext4fs_xattr_entry_hash_set(void *e, uint32_t hash)
{
	le32_store((unsigned char *)e + EXT4FS_XATTR_ENT_OFF_HASH, hash);
}

uint32_t ext4fs_blockmap_slot_get(const void *map, uint32_t i)
{
	return le32_load((const unsigned char *)map + (uint64_t)i * 4);
}

void ext4fs_blockmap_slot_set(void *map, uint32_t i, uint32_t blk)
{
	le32_store((unsigned char *)map + (uint64_t)i * 4, blk);
}

uint16_t ext4fs_inode_raw_get16(const void *raw, uint32_t off)
{
	return le16_load((const unsigned char *)raw + off);
}

uint32_t ext4fs_inode_raw_get32(const void *raw, uint32_t off)
{
	return le32_load((const unsigned char *)raw + off);
}

void ext4fs_inode_raw_set32(void *raw, uint32_t off, uint32_t v)
{
	le32_store((unsigned char *)raw + off, v);
}

void ext4fs_hash_seed_decode(const void *bytes, uint32_t seed[4])
{
	for (int i = 0; i < 4; i++)
		seed[i] = le32_load((const unsigned char *)bytes + 4 * i);
}

uint16_t ext4fs_encrypted_symlink_len_get(const void *data)
{
	return le16_load(data);
}

int ext4fs_fscrypt_context_policy(const void *ctx, size_t len, uint8_t policy[EXT4FS_FSCRYPT_POLICY_MAX],
				  size_t *policy_len)
{
	const uint8_t *c = ctx;
	/* Each known version: the context's size, and its policy's (the bytes before the nonce). */
	static const struct { size_t ctx_len, policy_len; } known[] = { [1] = { 28, 12 }, [2] = { 40, 24 } };

	*policy_len = 0;
	if (len < 1 || c[0] == 0)
		return EXT4FS_FSCRYPT_CORRUPT;
	if (c[0] >= sizeof(known) / sizeof(known[0]))
		return EXT4FS_FSCRYPT_UNKNOWN;
	if (len != known[c[0]].ctx_len)
		return EXT4FS_FSCRYPT_CORRUPT;
	*policy_len = known[c[0]].policy_len;
	memcpy(policy, c, *policy_len);
	return EXT4FS_FSCRYPT_POLICY;
}
