/*
 * test_xattr.c - extended attributes (in-inode, block, EA inode), inline
 * data, file reads and symlink targets over images built in memory with
 * mem_image.c (no external tools).
 *
 * The image: 1 KiB blocks, 256 blocks, one group.  Block 1 holds the
 * superblock, 2 the group descriptor, 3 and 4 the bitmaps, 5-20 the inode
 * table (64 inodes of 256 bytes, i_extra_isize 32, so in-inode attributes
 * start at byte 160); data blocks are 21 and up.  With metadata_csum the
 * superblock, descriptor and inode checksums are filled in with the
 * library's helpers; attribute block checksums are computed here from the
 * documented formula.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/crc.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/super.h"
#include "ext4fs/xattr.h"
#include "../lib/mem_image.h"

#define BS          MEM_IMAGE_BS
#define NBLOCKS     256U
#define NINODES     64U
#define INODE_SIZE  256U
#define FIRST_FREE  21U
#define IBODY       160U     /* 128 + i_extra_isize */
#define FILE_INO    12U

static uint32_t next_block;
static const unsigned char uuid[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };

/* ---- image building ---- */

/* An empty file system; extra feature bits are or-ed in. */
static void make_image(uint32_t incompat, uint32_t ro_compat)
{
	const struct mem_image_layout l = {
		.blocks = NBLOCKS,
		.inodes = NINODES,
		.inode_size = INODE_SIZE,
		.compat = EXT4FS_FEATURE_COMPAT_EXT_ATTR,
		.incompat = EXT4FS_FEATURE_INCOMPAT_FILETYPE | incompat,
		.ro_compat = ro_compat,
		.uuid = uuid,
		.extra_isize = 32,
		.checksum_type = 1,                /* crc32c */
	};

	mem_image_init(&l);
	next_block = FIRST_FREE;
}

/* A fresh inode record with i_generation set; returns it. */
static unsigned char *make_inode(uint32_t ino, uint16_t mode, uint32_t size, uint32_t flags)
{
	unsigned char *r = mem_image_inode(ino, mode, size, flags);

	put32(r + 0x64, 0x777 + ino);              /* i_generation */
	return r;
}

/* Direct block i of inode ino; the block is filled with a pattern of its logical number. */
static uint32_t give_block(uint32_t ino, unsigned i)
{
	uint32_t b = next_block++;

	put32(inode_rec(ino) + 0x28 + 4 * i, b);
	for (uint32_t k = 0; k < BS; k++)
		block(b)[k] = (unsigned char)(i * 31 + k);
	return b;
}

/* Attribute entry at off of a region; returns the offset after it. */
static uint32_t xentry(unsigned char *base, uint32_t off, uint8_t index, const char *name,
		       uint16_t value_offs, uint32_t value_size, uint32_t inum, uint32_t hash)
{
	size_t len = strlen(name);

	base[off] = (unsigned char)len;
	base[off + 1] = index;
	put16(base + off + 2, value_offs);
	put32(base + off + 4, inum);
	put32(base + off + 8, value_size);
	put32(base + off + 12, hash);
	memcpy(base + off + 16, name, len);
	return off + (uint32_t)((16 + len + 3) & ~3U);
}

/*
 * FILE_INO with three in-inode attributes: user.test = "hello",
 * system.posix_acl_access (index 2, empty suffix) = 4 bytes, and "c" under
 * index 9 (no prefix) = "C".  Entries run from 164 to 220 (end marker at
 * 220); values sit at the end of the inode, offsets counted from the first
 * entry.
 */
static void make_ibody_attrs(void)
{
	unsigned char *r = make_inode(FILE_INO, 0100644, 0, 0);
	uint32_t first = IBODY + 4, off = first;

	put32(r + IBODY, EXT4FS_XATTR_MAGIC);
	off = xentry(r, off, EXT4FS_XATTR_INDEX_USER, "test", 240 - first, 5, 0, 0);
	off = xentry(r, off, EXT4FS_XATTR_INDEX_POSIX_ACL_ACCESS, "", 232 - first, 4, 0, 0);
	off = xentry(r, off, EXT4FS_XATTR_INDEX_ENCRYPTION, "c", 252 - first, 1, 0, 0x1234);
	assert_int_equal(off, 220);
	memcpy(r + 240, "hello", 5);
	memcpy(r + 232, "\x01\x00\x00\x00", 4);
	r[252] = 'C';
}

/* Attribute block checksum: fs seed, block number as le64, block with h_checksum zero. */
static void set_xattr_block_csum(uint32_t blk)
{
	unsigned char le[8] = { 0 }, *b = block(blk);
	uint32_t crc = mem_image_csum_seed();

	put32(le, blk);
	crc = ext4fs_crc32c(crc, le, 8);
	put32(b + 0x10, 0);
	put32(b + 0x10, ext4fs_crc32c(crc, b, BS));
}

/* An attribute block for FILE_INO: user.blk = "blockvalue", security.selinux = "ctx", trusted.t = 01 02. */
static uint32_t make_block_attrs(void)
{
	uint32_t blk = next_block++;
	unsigned char *b = block(blk);
	uint32_t off = 32;

	memset(b, 0, BS);
	put32(b + 0x00, EXT4FS_XATTR_MAGIC);
	put32(b + 0x04, 1);                        /* h_refcount */
	put32(b + 0x08, 1);                        /* h_blocks */
	off = xentry(b, off, EXT4FS_XATTR_INDEX_USER, "blk", BS - 12, 10, 0, 0xabcdef);
	off = xentry(b, off, EXT4FS_XATTR_INDEX_SECURITY, "selinux", BS - 16, 3, 0, 0);
	off = xentry(b, off, EXT4FS_XATTR_INDEX_TRUSTED, "t", BS - 20, 2, 0, 0);
	memcpy(b + BS - 12, "blockvalue", 10);
	memcpy(b + BS - 16, "ctx", 3);
	memcpy(b + BS - 20, "\x01\x02", 2);
	put32(inode_rec(FILE_INO) + 0x68, blk);   /* i_file_acl */
	if (csum_image())
		set_xattr_block_csum(blk);
	return blk;
}

/* ---- collecting attributes ---- */

struct attrs {
	unsigned n;
	char name[16][300];
	unsigned char value[16][64];
	uint32_t len[16];
	enum ext4fs_xattr_where where[16];
	uint64_t block[16];
	uint32_t hash[16];
	uint8_t index[16];
};

static int collect(const struct ext4fs_xattr *x, void *arg)
{
	struct attrs *a = arg;

	assert_true(a->n < 16);
	strcpy(a->name[a->n], x->name);
	a->len[a->n] = x->value_len;
	if (x->value)
		memcpy(a->value[a->n], x->value, x->value_len < 64 ? x->value_len : 64);
	a->where[a->n] = x->where;
	a->block[a->n] = x->block;
	a->hash[a->n] = x->hash;
	a->index[a->n] = x->name_index;
	a->n++;
	return 0;
}

static int list_attrs(struct ext4fs_fs *fs, uint32_t ino, struct attrs *a)
{
	struct ext4fs_inode inode;

	memset(a, 0, sizeof(*a));
	read_inode(fs, ino, &inode);
	return ext4fs_xattr_iterate(fs, ino, &inode, 0, collect, a);
}

/* ---- attributes ---- */

static void xattr_iterate__lists_in_inode_attributes_with_their_prefixes(void **state)
{
	struct attrs a;

	make_image(0, 0);
	make_ibody_attrs();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), 0);
	assert_int_equal(a.n, 3);
	assert_string_equal(a.name[0], "user.test");
	assert_int_equal(a.len[0], 5);
	assert_memory_equal(a.value[0], "hello", 5);
	assert_int_equal(a.where[0], EXT4FS_XATTR_IN_INODE);
	assert_string_equal(a.name[1], "system.posix_acl_access");
	assert_int_equal(a.len[1], 4);
	assert_string_equal(a.name[2], "c");       /* index 9 has no prefix */
	assert_int_equal(a.index[2], EXT4FS_XATTR_INDEX_ENCRYPTION);
	assert_int_equal(a.hash[2], 0x1234);
	assert_memory_equal(a.value[2], "C", 1);
	ext4fs_close(fs);
}

static void xattr_iterate__lists_block_attributes_after_in_inode_ones(void **state)
{
	struct attrs a;

	make_image(0, 0);
	make_ibody_attrs();
	uint32_t blk = make_block_attrs();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), 0);
	assert_int_equal(a.n, 6);
	assert_string_equal(a.name[3], "user.blk");
	assert_memory_equal(a.value[3], "blockvalue", 10);
	assert_int_equal(a.where[3], EXT4FS_XATTR_IN_BLOCK);
	assert_int_equal(a.block[3], blk);
	assert_int_equal(a.hash[3], 0xabcdef);
	assert_string_equal(a.name[4], "security.selinux");
	assert_string_equal(a.name[5], "trusted.t");
	assert_memory_equal(a.value[5], "\x01\x02", 2);
	ext4fs_close(fs);
}

static void xattr_get__returns_a_copy_or_enodata(void **state)
{
	struct ext4fs_inode inode;
	void *value;
	size_t len;

	make_image(0, 0);
	make_ibody_attrs();
	make_block_attrs();
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	assert_int_equal(ext4fs_xattr_get(fs, FILE_INO, &inode, "security.selinux", &value, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(value, "ctx", 3);
	free(value);
	assert_int_equal(ext4fs_xattr_get(fs, FILE_INO, &inode, "system.posix_acl_access", &value, &len), 0);
	assert_int_equal(len, 4);
	free(value);
	assert_int_equal(ext4fs_xattr_get(fs, FILE_INO, &inode, "user.none", &value, &len), -ENODATA);
	assert_null(value);
	assert_non_null(strstr(ext4fs_errmsg(fs), "user.none"));
	ext4fs_close(fs);
}

static void xattr_prefix__maps_indexes_to_prefixes(void **state)
{
	assert_string_equal(ext4fs_xattr_prefix(1), "user.");
	assert_string_equal(ext4fs_xattr_prefix(3), "system.posix_acl_default");
	assert_string_equal(ext4fs_xattr_prefix(6), "security.");
	assert_string_equal(ext4fs_xattr_prefix(7), "system.");
	assert_null(ext4fs_xattr_prefix(0));
	assert_null(ext4fs_xattr_prefix(9));
	assert_null(ext4fs_xattr_prefix(200));
}

/* Each corruption of the in-inode area must fail the whole iteration. */
static void xattr_iterate__rejects_corrupt_in_inode_entries(void **state)
{
	static const struct {
		uint32_t off;        /* byte of the inode record */
		uint32_t value;
		int width;
		const char *msg;
	} cases[] = {
		{ IBODY + 4 + 2, 200, 2, "out of bounds" },            /* user.test value offset past the end */
		{ IBODY + 4 + 2, 0, 2, "overlaps" },                   /* value over the entry table */
		{ IBODY + 4 + 8, 20, 4, "runs past the end" },         /* value size beyond the region */
		{ IBODY + 4 + 8, 0x2000000, 4, "too large" },
		{ IBODY + 4 + 4, 40, 4, "ea_inode" },                  /* EA inode without the feature */
		{ IBODY + 4, 200, 1, "name runs past" },               /* e_name_len past the region */
		{ IBODY + 4 + 17, 0, 1, "NUL" },                       /* "test" -> "t\0st" */
	};
	struct attrs a;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_image(0, 0);
		make_ibody_attrs();
		unsigned char *p = inode_rec(FILE_INO) + cases[i].off;
		if (cases[i].width == 1)
			p[0] = (unsigned char)cases[i].value;
		else if (cases[i].width == 2)
			put16(p, (uint16_t)cases[i].value);
		else
			put32(p, cases[i].value);
		struct ext4fs_fs *fs = open_image(0);
		assert_int_equal(list_attrs(fs, FILE_INO, &a), EXT4FS_E_XATTR_CORRUPT);
		assert_int_equal(a.n, 0);
		if (!strstr(ext4fs_errmsg(fs), cases[i].msg) || !strstr(ext4fs_errmsg(fs), "inode 12"))
			fail_msg("case %u: \"%s\" lacks \"%s\"", i, ext4fs_errmsg(fs), cases[i].msg);
		ext4fs_close(fs);
	}
}

static void xattr_iterate__rejects_an_entry_table_without_end_marker(void **state)
{
	struct attrs a;

	make_image(0, 0);
	unsigned char *r = make_inode(FILE_INO, 0100644, 0, 0);
	uint32_t off = IBODY + 4;
	put32(r + IBODY, EXT4FS_XATTR_MAGIC);
	for (int i = 0; i < 3; i++)
		off = xentry(r, off, EXT4FS_XATTR_INDEX_USER, "abcd", 0, 0, 0, 0);
	off = xentry(r, off, EXT4FS_XATTR_INDEX_USER, "0123456789abcdef", 0, 0, 0, 0);
	assert_int_equal(off, INODE_SIZE);         /* no room left for the end marker */
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), EXT4FS_E_XATTR_CORRUPT);
	ext4fs_close(fs);
}

static void xattr_iterate__rejects_bad_attribute_blocks(void **state)
{
	struct attrs a;

	make_image(0, 0);
	make_inode(FILE_INO, 0100644, 0, 0);
	uint32_t blk = make_block_attrs();
	put32(block(blk), 0xEA010000);
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), EXT4FS_E_XATTR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "bad magic"));
	ext4fs_close(fs);

	make_image(0, 0);
	make_inode(FILE_INO, 0100644, 0, 0);
	blk = make_block_attrs();
	put32(block(blk) + 8, 2);                  /* h_blocks */
	fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), EXT4FS_E_XATTR_CORRUPT);
	ext4fs_close(fs);

	make_image(0, 0);
	make_inode(FILE_INO, 0100644, 0, 0);
	blk = make_block_attrs();
	put16(block(blk) + 32 + 2, BS - 2);        /* user.blk value past the block */
	fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), EXT4FS_E_XATTR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "block"));
	ext4fs_close(fs);

	make_image(0, 0);
	make_inode(FILE_INO, 0100644, 0, 0);
	put32(inode_rec(FILE_INO) + 0x68, NBLOCKS + 5);
	fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), EXT4FS_E_XATTR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "outside"));
	ext4fs_close(fs);
}

static void xattr_block__checksum_is_verified_unless_ignored(void **state)
{
	struct attrs a;

	make_image(0, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	make_ibody_attrs();
	uint32_t blk = make_block_attrs();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), 0);
	assert_int_equal(a.n, 6);
	assert_int_equal(ext4fs_xattr_block_csum(fs, blk, block(blk)), get32(block(blk) + 0x10));
	ext4fs_close(fs);

	block(blk)[BS - 1] ^= 1;                   /* value byte changed after checksumming */
	fs = open_image(0);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), EXT4FS_E_XATTR_CSUM);
	assert_int_equal(a.n, 3);                  /* the in-inode ones came first */
	ext4fs_close(fs);
	fs = open_image(EXT4FS_OPEN_IGNORE_CSUM);
	assert_int_equal(list_attrs(fs, FILE_INO, &a), 0);
	assert_int_equal(a.n, 6);
	ext4fs_close(fs);
}

/* FILE_INO's user.big lives in EA inode 20 (2000 bytes over two blocks). */
static void make_ea_inode_attr(uint32_t ea_flags, uint32_t ea_size)
{
	unsigned char *r = make_inode(FILE_INO, 0100644, 0, 0);

	put32(r + IBODY, EXT4FS_XATTR_MAGIC);
	xentry(r, IBODY + 4, EXT4FS_XATTR_INDEX_USER, "big", 0, 2000, 20, 0x55);
	make_inode(20, 0100600, ea_size, ea_flags);
	give_block(20, 0);
	give_block(20, 1);
}

static void xattr_iterate__reads_values_kept_in_ea_inodes(void **state)
{
	struct ext4fs_inode inode;
	unsigned char *value;
	size_t len;

	make_image(EXT4FS_FEATURE_INCOMPAT_EA_INODE, 0);
	make_ea_inode_attr(EXT4FS_EA_INODE_FL, 2000);
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	assert_int_equal(ext4fs_xattr_get(fs, FILE_INO, &inode, "user.big", (void **)&value, &len), 0);
	assert_int_equal(len, 2000);
	for (size_t k = 0; k < len; k++)
		if (value[k] != (unsigned char)((k / BS) * 31 + k % BS))
			fail_msg("byte %zu", k);
	free(value);
	ext4fs_close(fs);

	make_image(EXT4FS_FEATURE_INCOMPAT_EA_INODE, 0);
	make_ea_inode_attr(0, 2000);               /* no EA_INODE_FL */
	fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	assert_int_equal(ext4fs_xattr_get(fs, FILE_INO, &inode, "user.big", (void **)&value, &len),
			 EXT4FS_E_XATTR_CORRUPT);
	ext4fs_close(fs);

	make_image(EXT4FS_FEATURE_INCOMPAT_EA_INODE, 0);
	make_ea_inode_attr(EXT4FS_EA_INODE_FL, 1999);
	fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	assert_int_equal(ext4fs_xattr_get(fs, FILE_INO, &inode, "user.big", (void **)&value, &len),
			 EXT4FS_E_XATTR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "EA inode 20"));
	ext4fs_close(fs);
}

/* ---- file data ---- */

static void file_read__reads_holes_as_zeros_and_stops_at_i_size(void **state)
{
	struct ext4fs_inode inode;
	unsigned char buf[4 * BS + 100];
	size_t got;

	make_image(0, 0);
	make_inode(FILE_INO, 0100644, 3 * BS + 500, 0);
	give_block(FILE_INO, 0);
	give_block(FILE_INO, 2);                   /* logical block 1 is a hole */
	give_block(FILE_INO, 3);
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);

	memset(buf, 0xAA, sizeof(buf));
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 0, buf, sizeof(buf), &got), 0);
	assert_int_equal(got, 3 * BS + 500);
	for (uint32_t k = 0; k < got; k++) {
		unsigned lb = k / BS;
		unsigned char want = lb == 1 ? 0 : (unsigned char)(lb * 31 + k % BS);
		if (buf[k] != want)
			fail_msg("byte %u is 0x%02x, want 0x%02x", k, buf[k], want);
	}
	assert_int_equal(buf[got], 0xAA);

	/* A read straddling blocks, starting mid-block. */
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, BS - 3, buf, 6, &got), 0);
	assert_int_equal(got, 6);
	assert_int_equal(buf[0], (unsigned char)(BS - 3));
	assert_int_equal(buf[3], 0);
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 2 * BS + 1, buf, 2, &got), 0);
	assert_int_equal(buf[0], (unsigned char)(2 * 31 + 1));

	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 3 * BS + 500, buf, 10, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 3 * BS + 495, buf, 10, &got), 0);
	assert_int_equal(got, 5);
	ext4fs_close(fs);
}

static void file_read__fetches_a_contiguous_run_with_one_request(void **state)
{
	struct ext4fs_inode inode;
	unsigned char buf[4 * BS];
	size_t got;

	make_image(0, 0);
	make_inode(FILE_INO, 0100644, 4 * BS, 0);
	for (unsigned i = 0; i < 4; i++)
		give_block(FILE_INO, i);               /* consecutive physical blocks */
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	uint64_t before = ext4fs_fs_io(fs)->stats.reads;
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 0, buf, sizeof(buf), &got), 0);
	assert_int_equal(got, 4 * BS);
	assert_int_equal(ext4fs_fs_io(fs)->stats.reads - before, 1);
	assert_int_equal(buf[3 * BS + 5], (unsigned char)(3 * 31 + 5));
	ext4fs_close(fs);
}

static void file_read__reads_unwritten_extents_as_zeros(void **state)
{
	struct ext4fs_inode inode;
	unsigned char buf[3 * BS];
	size_t got;

	make_image(EXT4FS_FEATURE_INCOMPAT_EXTENTS, 0);
	unsigned char *r = make_inode(FILE_INO, 0100644, 3 * BS, EXT4FS_EXTENTS_FL);
	uint32_t b0 = next_block;
	for (unsigned i = 0; i < 3; i++)
		give_block(FILE_INO, i);               /* fills the blocks; i_block is rewritten below */
	memset(r + 0x28, 0, 60);
	put16(r + 0x28, EXT4FS_EXTENT_MAGIC);
	put16(r + 0x2A, 2);                        /* entries */
	put16(r + 0x2C, 4);                        /* max */
	put32(r + 0x34, 0);                        /* extent 0: lblk 0, 1 block at b0 */
	put16(r + 0x38, 1);
	put32(r + 0x3C, b0);
	put32(r + 0x40, 1);                        /* extent 1: lblk 1, 2 unwritten blocks */
	put16(r + 0x44, 2 + EXT4FS_EXTENT_INIT_MAX_LEN);
	put32(r + 0x48, b0 + 1);
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 0, buf, sizeof(buf), &got), 0);
	assert_int_equal(got, 3 * BS);
	assert_int_equal(buf[7], 7);
	for (uint32_t k = BS; k < 3 * BS; k++)
		if (buf[k])
			fail_msg("byte %u of an unwritten extent is not zero", k);
	ext4fs_close(fs);
}

/* Inline file FILE_INO of size bytes: 60 in i_block, ea_len in system.data. */
static void make_inline_file(uint32_t size, uint32_t ea_len, uint16_t mode)
{
	unsigned char *r = make_inode(FILE_INO, mode, size, EXT4FS_INLINE_DATA_FL);

	for (unsigned k = 0; k < 60; k++)
		r[0x28 + k] = (unsigned char)('A' + k % 26);
	put32(r + IBODY, EXT4FS_XATTR_MAGIC);
	xentry(r, IBODY + 4, EXT4FS_XATTR_INDEX_SYSTEM, "data", (uint16_t)(INODE_SIZE - 32 - (IBODY + 4)),
	       ea_len, 0, 0);
	for (unsigned k = 0; k < ea_len; k++)
		r[INODE_SIZE - 32 + k] = (unsigned char)('a' + k % 26);
}

static void file_read__reads_inline_data_and_its_system_data_continuation(void **state)
{
	struct ext4fs_inode inode;
	char buf[200];
	size_t got;

	make_image(EXT4FS_FEATURE_INCOMPAT_INLINE_DATA, 0);
	make_inline_file(80, 20, 0100644);
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 0, buf, sizeof(buf), &got), 0);
	assert_int_equal(got, 80);
	assert_int_equal(buf[0], 'A');
	assert_int_equal(buf[59], 'A' + 59 % 26);
	assert_int_equal(buf[60], 'a');
	assert_int_equal(buf[79], 'a' + 19);
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 58, buf, 4, &got), 0);
	assert_memory_equal(buf, "GHab", 4);
	ext4fs_close(fs);

	make_image(EXT4FS_FEATURE_INCOMPAT_INLINE_DATA, 0);
	make_inline_file(90, 20, 0100644);         /* i_size beyond what is stored reads as zeros */
	fs = open_image(0);
	read_inode(fs, FILE_INO, &inode);
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(ext4fs_file_read(fs, FILE_INO, &inode, 0, buf, sizeof(buf), &got), 0);
	assert_int_equal(got, 90);
	assert_int_equal(buf[79], 'a' + 19);
	for (unsigned k = 80; k < 90; k++)
		assert_int_equal(buf[k], 0);
	assert_int_equal(buf[90], 'X');
	ext4fs_close(fs);
}

static void symlink_target__reads_fast_slow_and_inline_links(void **state)
{
	struct ext4fs_inode inode;
	char buf[300];
	size_t len;

	make_image(EXT4FS_FEATURE_INCOMPAT_INLINE_DATA, 0);
	unsigned char *r = make_inode(13, 0120777, 11, 0);
	memcpy(r + 0x28, "/etc/passwd", 11);
	r = make_inode(14, 0120777, 100, 0);       /* slow: target in block 0 */
	uint32_t b = give_block(14, 0);
	memset(block(b), 'x', 100);
	put32(r + 0x1C, 2);
	make_inline_file(70, 10, 0120777);
	struct ext4fs_fs *fs = open_image(0);

	read_inode(fs, 13, &inode);
	assert_int_equal(ext4fs_symlink_target(fs, 13, &inode, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 11);
	assert_string_equal(buf, "/etc/passwd");
	assert_int_equal(ext4fs_symlink_target(fs, 13, &inode, buf, 5, &len), 0);
	assert_int_equal(len, 11);                 /* cut short: len >= bufsize */
	assert_string_equal(buf, "/etc");

	read_inode(fs, 14, &inode);
	assert_int_equal(ext4fs_symlink_target(fs, 14, &inode, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 100);
	assert_int_equal(strlen(buf), 100);

	read_inode(fs, FILE_INO, &inode);
	assert_int_equal(ext4fs_symlink_target(fs, FILE_INO, &inode, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 70);
	assert_int_equal(buf[65], 'f');

	read_inode(fs, 14, &inode);
	inode.i_mode = 0100644;
	assert_int_equal(ext4fs_symlink_target(fs, 14, &inode, buf, sizeof(buf), &len), EXT4FS_E_INVALID_ARG);
	ext4fs_close(fs);
}

static void xattr_entry_hash__rotates_name_then_value_words_with_signed_variant(void **state)
{
	(void)state;
	const unsigned char one[4] = { 1, 0, 0, 0 }, high = 0xff;

	/* "a": the name byte alone; then one value word 16 bits after it. */
	assert_int_equal(ext4fs_xattr_entry_hash("a", 1, NULL, 0, 0), 0x61);
	assert_int_equal(ext4fs_xattr_entry_hash("a", 1, one, 4, 0), 0x610001);
	/* A short value is zero padded to a whole word. */
	assert_int_equal(ext4fs_xattr_entry_hash("a", 1, one, 1, 0), 0x610001);
	/* Bytes above 0x7f: the unsigned reading and the old signed one differ; ASCII reads the same. */
	assert_int_equal(ext4fs_xattr_entry_hash(&high, 1, NULL, 0, 0), 0xff);
	assert_int_equal(ext4fs_xattr_entry_hash(&high, 1, NULL, 0, 1), 0xffffffffU);
	assert_int_equal(ext4fs_xattr_entry_hash("ab", 2, one, 4, 1), ext4fs_xattr_entry_hash("ab", 2, one, 4, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xattr_iterate__lists_in_inode_attributes_with_their_prefixes),
		cmocka_unit_test(xattr_iterate__lists_block_attributes_after_in_inode_ones),
		cmocka_unit_test(xattr_get__returns_a_copy_or_enodata),
		cmocka_unit_test(xattr_prefix__maps_indexes_to_prefixes),
		cmocka_unit_test(xattr_iterate__rejects_corrupt_in_inode_entries),
		cmocka_unit_test(xattr_iterate__rejects_an_entry_table_without_end_marker),
		cmocka_unit_test(xattr_iterate__rejects_bad_attribute_blocks),
		cmocka_unit_test(xattr_block__checksum_is_verified_unless_ignored),
		cmocka_unit_test(xattr_iterate__reads_values_kept_in_ea_inodes),
		cmocka_unit_test(file_read__reads_holes_as_zeros_and_stops_at_i_size),
		cmocka_unit_test(file_read__fetches_a_contiguous_run_with_one_request),
		cmocka_unit_test(file_read__reads_unwritten_extents_as_zeros),
		cmocka_unit_test(file_read__reads_inline_data_and_its_system_data_continuation),
		cmocka_unit_test(symlink_target__reads_fast_slow_and_inline_links),
		cmocka_unit_test(xattr_entry_hash__rotates_name_then_value_words_with_signed_variant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
