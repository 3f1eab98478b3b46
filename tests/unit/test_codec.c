/*
 * test_codec.c - the raw record codecs against records laid out by hand
 * from the format's documentation, and the journal superblock's encoder
 * against its decoder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/inode.h"
#include "ext4fs/journal.h"
#include "ext4fs/xattr.h"

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put_be32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

/* A pseudo-random fill, so that a field read from the wrong place shows. */
static void scramble(unsigned char *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

static void test_dirent_head(void **state)
{
	unsigned char rec[16];
	struct ext4fs_dirent_head h;

	(void)state;
	scramble(rec, sizeof(rec), 1);
	put_le(rec, 0x01020304, 4);
	put_le(rec + 4, 0x0C10, 2);
	rec[6] = 5;
	rec[7] = 2;
	ext4fs_dirent_head_decode(rec, &h);
	assert_int_equal(h.inode, 0x01020304);
	assert_int_equal(h.rec_len_raw, 0x0C10);
	assert_int_equal(h.name_len, 5);
	assert_int_equal(h.file_type, 2);
	assert_int_equal(ext4fs_dirent_inode_get(rec), 0x01020304);
	assert_int_equal(ext4fs_dirent_rec_len_raw(rec), 0x0C10);

	unsigned char before[16];
	memcpy(before, rec, sizeof(rec));
	ext4fs_dirent_inode_set(rec, 0xA0B0C0D0);
	assert_int_equal(ext4fs_dirent_inode_get(rec), 0xA0B0C0D0);
	assert_memory_equal(rec + 4, before + 4, sizeof(rec) - 4);
}

/* rec_len stored then read back gives every length a block can hold, 64 KiB blocks included. */
static void test_dirent_rec_len_round_trip(void **state)
{
	static const uint32_t sizes[] = { 1024, 4096, 65536 };
	unsigned char rec[8];

	(void)state;
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (uint32_t len = 8; len <= sizes[s]; len += 4) {
			memset(rec, 0xEE, sizeof(rec));
			ext4fs_dirent_rec_len_set(rec, len, sizes[s]);
			assert_int_equal(ext4fs_dirent_rec_len(ext4fs_dirent_rec_len_raw(rec), sizes[s]), len);
			assert_int_equal(rec[0], 0xEE);
			assert_int_equal(rec[6], 0xEE);
		}
	/* The kernel's spelling of a whole 64 KiB block. */
	ext4fs_dirent_rec_len_set(rec, 65536, 65536);
	assert_int_equal(ext4fs_dirent_rec_len_raw(rec), 65535);
}

static void test_dirent_tail(void **state)
{
	unsigned char block[1024];

	(void)state;
	scramble(block, sizeof(block), 2);
	ext4fs_dirent_tail_csum_set(block, sizeof(block), 0x11223344);
	assert_int_equal(block[1020], 0x44);
	assert_int_equal(block[1023], 0x11);
	assert_int_equal(ext4fs_dirent_tail_csum_get(block, sizeof(block)), 0x11223344);
}

static void test_dx(void **state)
{
	unsigned char block[1024];
	struct ext4fs_dx_root_info ri;
	uint16_t limit, count;
	uint32_t hash, blk;

	(void)state;
	scramble(block, sizeof(block), 3);
	put_le(block + 0x18, 0, 4);
	block[0x1C] = 1;
	block[0x1D] = 8;
	block[0x1E] = 2;
	block[0x1F] = 0x40;
	ext4fs_dx_root_info_decode(block, &ri);
	assert_int_equal(ri.reserved_zero, 0);
	assert_int_equal(ri.hash_version, 1);
	assert_int_equal(ri.info_length, 8);
	assert_int_equal(ri.indirect_levels, 2);
	assert_int_equal(ri.unused_flags, 0x40);

	unsigned char *entries = block + 0x20;
	put_le(entries, 123, 2);
	put_le(entries + 2, 7, 2);
	put_le(entries + 4, 1, 4);
	put_le(entries + 3 * 8, 0x80000010, 4);
	put_le(entries + 3 * 8 + 4, 0x1000002A, 4);
	ext4fs_dx_countlimit_get(entries, &limit, &count);
	assert_int_equal(limit, 123);
	assert_int_equal(count, 7);
	ext4fs_dx_entry_get(entries, 0, &hash, &blk);
	assert_int_equal(hash, (7u << 16) | 123u);
	assert_int_equal(blk, 1);
	ext4fs_dx_entry_get(entries, 3, &hash, &blk);
	assert_int_equal(hash, 0x80000010);
	assert_int_equal(blk, 0x1000002A);

	ext4fs_dx_tail_csum_set(block, 1016, 0xCAFEF00D);
	assert_int_equal(ext4fs_dirent_tail_csum_get(block, sizeof(block)), 0xCAFEF00D);
}

static void test_xattr(void **state)
{
	unsigned char block[1024];
	struct ext4fs_xattr_header h;
	struct ext4fs_xattr_entry_head e;

	(void)state;
	scramble(block, sizeof(block), 4);
	put_le(block, EXT4FS_XATTR_MAGIC, 4);
	put_le(block + 4, 3, 4);
	put_le(block + 8, 1, 4);
	put_le(block + 12, 0x55667788, 4);
	put_le(block + 16, 0x99AABBCC, 4);
	ext4fs_xattr_header_decode(block, &h);
	assert_int_equal(h.magic, EXT4FS_XATTR_MAGIC);
	assert_int_equal(h.refcount, 3);
	assert_int_equal(h.blocks, 1);
	assert_int_equal(h.hash, 0x55667788);
	assert_int_equal(h.checksum, 0x99AABBCC);
	ext4fs_xattr_header_refcount_set(block, 2);
	ext4fs_xattr_header_csum_set(block, 0x01020304);
	ext4fs_xattr_header_decode(block, &h);
	assert_int_equal(h.refcount, 2);
	assert_int_equal(h.checksum, 0x01020304);
	assert_int_equal(h.hash, 0x55667788);

	unsigned char *ent = block + EXT4FS_XATTR_HEADER_SIZE;
	ent[0] = 4;
	ent[1] = 1;
	put_le(ent + 2, 1000, 2);
	put_le(ent + 4, 0, 4);
	put_le(ent + 8, 17, 4);
	put_le(ent + 12, 0xDEADBEEF, 4);
	ext4fs_xattr_entry_head_decode(ent, &e);
	assert_int_equal(e.name_len, 4);
	assert_int_equal(e.name_index, 1);
	assert_int_equal(e.value_offs, 1000);
	assert_int_equal(e.value_inum, 0);
	assert_int_equal(e.value_size, 17);
	assert_int_equal(e.hash, 0xDEADBEEF);
	ext4fs_xattr_entry_hash_set(ent, 0x12345678);
	ext4fs_xattr_entry_head_decode(ent, &e);
	assert_int_equal(e.hash, 0x12345678);
	assert_false(ext4fs_xattr_entry_is_end(ent));
	put_le(ent, 0, 4);
	assert_true(ext4fs_xattr_entry_is_end(ent));

	unsigned char ibody[8];
	scramble(ibody, sizeof(ibody), 5);
	ext4fs_xattr_ibody_magic_set(ibody, EXT4FS_XATTR_MAGIC);
	assert_int_equal(ext4fs_xattr_ibody_magic_get(ibody), EXT4FS_XATTR_MAGIC);
	ext4fs_xattr_ibody_magic_set(ibody, 0);
	assert_int_equal(ext4fs_xattr_ibody_magic_get(ibody), 0);
}

static void test_blockmap_slots(void **state)
{
	unsigned char block[4096];

	(void)state;
	scramble(block, sizeof(block), 6);
	put_le(block + 4 * 1023, 0x00ABCDEF, 4);
	assert_int_equal(ext4fs_blockmap_slot_get(block, 1023), 0x00ABCDEF);
	ext4fs_blockmap_slot_set(block, 5, 77);
	assert_int_equal(block[20], 77);
	assert_int_equal(ext4fs_blockmap_slot_get(block, 5), 77);
}

static void test_inode_raw_fields(void **state)
{
	unsigned char raw[256], before[256];

	(void)state;
	scramble(raw, sizeof(raw), 7);
	put_le(raw + EXT4FS_INODE_OFF_FLAGS, 0x80000, 4);
	put_le(raw + EXT4FS_INODE_OFF_EXTRA_ISIZE, 32, 2);
	memcpy(before, raw, sizeof(raw));
	struct ext4fs_inode in;
	ext4fs_inode_decode(&in, raw, sizeof(raw));
	/* The raw offsets name the same fields the inode decoder reads. */
	assert_int_equal(ext4fs_inode_raw_get32(raw, EXT4FS_INODE_OFF_FLAGS), in.i_flags);
	assert_int_equal(ext4fs_inode_raw_get32(raw, EXT4FS_INODE_OFF_ATIME), in.i_atime);
	assert_int_equal(ext4fs_inode_raw_get32(raw, EXT4FS_INODE_OFF_CTIME), in.i_ctime);
	assert_int_equal(ext4fs_inode_raw_get32(raw, EXT4FS_INODE_OFF_MTIME), in.i_mtime);
	assert_int_equal(ext4fs_inode_raw_get16(raw, EXT4FS_INODE_OFF_EXTRA_ISIZE), in.i_extra_isize);
	assert_int_equal(ext4fs_inode_raw_get16(raw, EXT4FS_INODE_OFF_CHECKSUM_HI), in.i_checksum_hi);
	ext4fs_inode_raw_set32(raw, EXT4FS_INODE_OFF_FLAGS, 0x10080000);
	ext4fs_inode_decode(&in, raw, sizeof(raw));
	assert_int_equal(in.i_flags, 0x10080000);
	assert_memory_equal(raw, before, EXT4FS_INODE_OFF_FLAGS);
	assert_memory_equal(raw + EXT4FS_INODE_OFF_FLAGS + 4, before + EXT4FS_INODE_OFF_FLAGS + 4,
			    sizeof(raw) - EXT4FS_INODE_OFF_FLAGS - 4);
}

static void test_hash_seed_and_symlink(void **state)
{
	unsigned char bytes[16];
	uint32_t seed[4];

	(void)state;
	for (int i = 0; i < 16; i++)
		bytes[i] = (unsigned char)(0x10 + i);
	ext4fs_hash_seed_decode(bytes, seed);
	assert_int_equal(seed[0], 0x13121110);
	assert_int_equal(seed[3], 0x1F1E1D1C);
	put_le(bytes, 40, 2);
	assert_int_equal(ext4fs_encrypted_symlink_len_get(bytes), 40);
}

/* A context's policy is the bytes before its nonce; a wrong size or version 0 is corrupt, a new version unknown. */
static void test_fscrypt_context(void **state)
{
	uint8_t ctx[41], policy[EXT4FS_FSCRYPT_POLICY_MAX];
	size_t len = 99;

	(void)state;
	for (int i = 0; i < 41; i++)
		ctx[i] = (uint8_t)(0x40 + i);
	ctx[0] = 1;
	assert_int_equal(ext4fs_fscrypt_context_policy(ctx, 28, policy, &len), EXT4FS_FSCRYPT_POLICY);
	assert_int_equal(len, 12);
	assert_memory_equal(policy, ctx, 12);
	assert_int_equal(ext4fs_fscrypt_context_policy(ctx, 40, policy, &len), EXT4FS_FSCRYPT_CORRUPT);
	assert_int_equal(len, 0);
	ctx[0] = 2;
	assert_int_equal(ext4fs_fscrypt_context_policy(ctx, 40, policy, &len), EXT4FS_FSCRYPT_POLICY);
	assert_int_equal(len, 24);
	assert_memory_equal(policy, ctx, 24);
	assert_int_equal(ext4fs_fscrypt_context_policy(ctx, 41, policy, &len), EXT4FS_FSCRYPT_CORRUPT);
	ctx[0] = 0;
	assert_int_equal(ext4fs_fscrypt_context_policy(ctx, 28, policy, &len), EXT4FS_FSCRYPT_CORRUPT);
	assert_int_equal(ext4fs_fscrypt_context_policy(ctx, 0, policy, &len), EXT4FS_FSCRYPT_CORRUPT);
	ctx[0] = 3;
	assert_int_equal(ext4fs_fscrypt_context_policy(ctx, 5, policy, &len), EXT4FS_FSCRYPT_UNKNOWN);
	assert_int_equal(len, 0);
}

/* Encoding what was decoded gives the same bytes; the feature words of a v1 superblock stay as they were. */
static void test_journal_sb_round_trip(void **state)
{
	unsigned char raw[1024], again[1024];
	struct ext4fs_journal_sb jsb;

	(void)state;
	for (uint32_t seed = 10; seed < 20; seed++) {
		scramble(raw, sizeof(raw), seed);
		put_be32(raw + 4, seed & 1 ? EXT4FS_JBD2_SUPERBLOCK_V1 : EXT4FS_JBD2_SUPERBLOCK_V2);
		ext4fs_journal_sb_decode(&jsb, raw);
		memcpy(again, raw, sizeof(raw));
		ext4fs_journal_sb_encode(&jsb, again);
		assert_memory_equal(again, raw, sizeof(raw));
		/* Over zeros: every field lands where the decoder reads it. */
		memset(again, 0, sizeof(again));
		ext4fs_journal_sb_encode(&jsb, again);
		struct ext4fs_journal_sb back;
		ext4fs_journal_sb_decode(&back, again);
		assert_memory_equal(&back, &jsb, sizeof(jsb));
		if (seed & 1)
			assert_memory_equal(again + 0x24, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
	}
	ext4fs_journal_sb_decode(&jsb, raw);
	jsb.start = 0;
	ext4fs_journal_sb_encode(&jsb, raw);
	assert_int_equal(raw[0x1C] | raw[0x1D] | raw[0x1E] | raw[0x1F], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dirent_head),
		cmocka_unit_test(test_dirent_rec_len_round_trip),
		cmocka_unit_test(test_dirent_tail),
		cmocka_unit_test(test_dx),
		cmocka_unit_test(test_xattr),
		cmocka_unit_test(test_blockmap_slots),
		cmocka_unit_test(test_inode_raw_fields),
		cmocka_unit_test(test_hash_seed_and_symlink),
		cmocka_unit_test(test_fscrypt_context),
		cmocka_unit_test(test_journal_sb_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
