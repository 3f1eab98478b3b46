/*
 * test_orphan_file.c - the orphan file module (orphan_file.h): the block
 * format as mke4fs writes it, checksums that follow the block's place and
 * the inode's generation, slots, and truncating and rebuilding the file,
 * judged by reading back through the library and by the real e2fsck.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/orphan_file.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

static void with_orphan_file(struct ext4fs_mkfs_params *p)
{
	p->feature_compat |= EXT4FS_FEATURE_COMPAT_ORPHAN_FILE;
}

static void with_orphan_file_1k_no_csum(struct ext4fs_mkfs_params *p)
{
	rw_tweak_1k(p);
	rw_tweak_no_csum(p);
	with_orphan_file(p);
}

/* Physical block of logical block l of the orphan file. */
static uint64_t orphan_pblk(struct ext4fs_fs *fs, uint64_t l)
{
	uint32_t ino = ext4fs_sb(fs)->s_orphan_file_inum;
	struct ext4fs_inode in;
	uint64_t pblk = 0, run = 0;

	assert_int_equal(ext4fs_inode_read(fs, ino, &in), 0);
	assert_int_equal(ext4fs_bmap(fs, ino, &in, l, &pblk, &run, NULL), 0);
	assert_true(pblk != 0);
	return pblk;
}

/* Every block of the file as mke4fs wrote it: empty, right magic, right checksum. */
static void assert_file_clean(struct ext4fs_fs *fs, uint32_t nblocks)
{
	uint32_t ino = ext4fs_sb(fs)->s_orphan_file_inum;
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	struct ext4fs_inode in;
	unsigned char *buf = malloc(g->block_size);

	assert_non_null(buf);
	assert_int_equal(ext4fs_inode_read(fs, ino, &in), 0);
	assert_int_equal(ext4fs_inode_size(&in), (uint64_t)nblocks * g->block_size);
	for (uint32_t l = 0; l < nblocks; l++) {
		struct ext4fs_orphan_block_info info;
		uint64_t pblk = orphan_pblk(fs, l);
		assert_int_equal(ext4fs_block_read(fs, pblk, buf), 0);
		ext4fs_orphan_block_inspect(fs, ino, in.i_generation, pblk, buf, &info);
		assert_int_equal(info.slots, (g->block_size - 8) / 4);
		assert_int_equal(info.used, 0);
		assert_true(info.magic_ok);
		assert_true(info.csum_ok);
	}
	free(buf);
}

static void mkfs_blocks_are_clean(void **state)
{
	struct rw_image img;

	(void)state;
	rw_image_open(&img, 8192, 4096, with_orphan_file);
	assert_true(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE));
	assert_int_equal(ext4fs_orphan_file_default_blocks(img.fs), 32);
	assert_file_clean(img.fs, 32);
	rw_image_close(&img);
}

static void default_blocks_follow_mke2fs(void **state)
{
	struct rw_image img;

	(void)state;
	/* 1/4096 of the blocks between 128Ki and 2Mi blocks. */
	rw_image_open(&img, 262144, 1024, with_orphan_file_1k_no_csum);
	assert_int_equal(ext4fs_orphan_file_default_blocks(img.fs), 64);
	assert_file_clean(img.fs, 64);
	rw_image_close(&img);
}

/* A slot set: counted, read back, and the checksum follows; the same bytes elsewhere do not verify. */
static void entries_and_checksums(void **state)
{
	struct rw_image img;
	struct ext4fs_orphan_block_info info;
	unsigned char buf[4096];
	uint32_t ino;
	uint64_t pblk;

	(void)state;
	rw_image_open(&img, 8192, 4096, with_orphan_file);
	ino = ext4fs_sb(img.fs)->s_orphan_file_inum;
	pblk = orphan_pblk(img.fs, 3);
	assert_int_equal(ext4fs_block_read(img.fs, pblk, buf), 0);
	assert_int_equal(ext4fs_orphan_block_set_entry(img.fs, ino, 0, pblk, buf, 7, 4242), 0);
	assert_int_equal(ext4fs_orphan_block_set_entry(img.fs, ino, 0, pblk, buf, 1021, 4243), 0);
	assert_int_equal(ext4fs_orphan_block_set_entry(img.fs, ino, 0, pblk, buf, 1022, 1),
			 EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_orphan_block_entry(img.fs, buf, 7), 4242);
	assert_int_equal(ext4fs_orphan_block_entry(img.fs, buf, 1021), 4243);
	assert_int_equal(ext4fs_orphan_block_entry(img.fs, buf, 5000), 0);
	ext4fs_orphan_block_inspect(img.fs, ino, 0, pblk, buf, &info);
	assert_int_equal(info.used, 2);
	assert_true(info.magic_ok && info.csum_ok);
	assert_int_equal(info.csum, ext4fs_orphan_block_csum(img.fs, ino, 0, pblk, buf));
	ext4fs_orphan_block_inspect(img.fs, ino, 0, pblk + 1, buf, &info);
	assert_false(info.csum_ok);
	ext4fs_orphan_block_inspect(img.fs, ino, 1, pblk, buf, &info);
	assert_false(info.csum_ok);
	buf[4096 - 8] ^= 1;
	ext4fs_orphan_block_inspect(img.fs, ino, 0, pblk, buf, &info);
	assert_false(info.magic_ok);
	/* Without metadata_csum the tail's checksum is not looked at. */
	rw_image_close(&img);
	rw_image_open(&img, 8192, 1024, with_orphan_file_1k_no_csum);
	ino = ext4fs_sb(img.fs)->s_orphan_file_inum;
	ext4fs_orphan_block_init(img.fs, ino, 0, 77, buf);
	ext4fs_orphan_block_inspect(img.fs, ino, 5, 78, buf, &info);
	assert_int_equal(info.slots, 254);
	assert_true(info.magic_ok && info.csum_ok);
	assert_int_equal(info.csum, 0);
	rw_image_close(&img);
}

/* Entries written, then the file rebuilt smaller: clean again, blocks freed, e2fsck agrees. */
static void create_rebuilds_the_file(void **state)
{
	struct rw_image img;
	unsigned char buf[4096];
	uint32_t ino;
	uint64_t pblk, free_before;

	(void)state;
	rw_image_open(&img, 8192, 4096, with_orphan_file);
	ino = ext4fs_sb(img.fs)->s_orphan_file_inum;
	pblk = orphan_pblk(img.fs, 0);
	assert_int_equal(ext4fs_block_read(img.fs, pblk, buf), 0);
	assert_int_equal(ext4fs_orphan_block_set_entry(img.fs, ino, 0, pblk, buf, 0, 99), 0);
	assert_int_equal(ext4fs_block_write(img.fs, pblk, buf), 0);
	assert_int_equal(ext4fs_orphan_present_set(img.fs, 1), 0);
	free_before = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_orphan_file_create(img.fs, ino, 20), 0);
	assert_false(ext4fs_has_ro_compat(img.fs, EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT));
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free_before + 12);
	assert_file_clean(img.fs, 20);
	assert_int_equal(ext4fs_orphan_file_create(img.fs, ino, 0), EXT4FS_E_INVALID_ARG);
	rw_image_reopen(&img);
	assert_file_clean(img.fs, 20);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void truncate_drops_the_feature(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint32_t ino;
	uint64_t free_before;

	(void)state;
	rw_image_open(&img, 8192, 4096, with_orphan_file);
	ino = ext4fs_sb(img.fs)->s_orphan_file_inum;
	free_before = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_orphan_file_truncate(img.fs), 0);
	assert_false(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE));
	assert_int_equal(ext4fs_sb(img.fs)->s_orphan_file_inum, ino);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free_before + 32);
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &in), 0);
	assert_int_equal(in.i_mode, 0);
	assert_int_equal(in.i_links_count, 0);
	/* An inode out of range is refused by name. */
	struct ext4fs_super sb = *ext4fs_sb(img.fs);
	sb.s_orphan_file_inum = 3;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	assert_int_equal(ext4fs_orphan_file_truncate(img.fs), EXT4FS_E_BAD_INODE_NUM);
	/* Number 0 names no file: only the feature goes. */
	sb.s_orphan_file_inum = 0;
	sb.s_feature_compat |= EXT4FS_FEATURE_COMPAT_ORPHAN_FILE;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	free_before = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_orphan_file_truncate(img.fs), 0);
	assert_false(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE));
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free_before);
	assert_int_equal(ext4fs_orphan_file_create(img.fs, ino, 4), 0);
	assert_true(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE));
	assert_int_equal(ext4fs_sb(img.fs)->s_orphan_file_inum, ino);
	assert_file_clean(img.fs, 4);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * A record the inode bitmap calls free owns no blocks: its pointers (here
 * past the file system's end) are dropped, not freed, and the inode is taken
 * back into use.  Number 0 takes a fresh inode from the allocator.
 */
static void create_over_a_freed_record(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	const struct ext4fs_bitmap *imap;
	uint32_t ino, fresh;
	uint64_t free_blocks, free_inodes;

	(void)state;
	rw_image_open(&img, 8192, 4096, with_orphan_file_1k_no_csum);
	ino = ext4fs_sb(img.fs)->s_orphan_file_inum;
	assert_int_equal(ext4fs_orphan_file_truncate(img.fs), 0);
	assert_int_equal(ext4fs_inode_mark_free(img.fs, ino, 0), 0);
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &in), 0);
	in.i_mode = 0;
	for (size_t i = 0; i + 4 <= sizeof(in.i_block); i += 4)
		memcpy(in.i_block + i, "\xff\xe0\xf5\x05", 4); /* 99999999, little-endian */
	ext4fs_inode_set_size(&in, 32000);
	in.i_blocks_lo = 64;
	assert_int_equal(ext4fs_inode_write(img.fs, ino, &in), 0);
	free_blocks = ext4fs_geom(img.fs)->free_blocks_count;
	free_inodes = ext4fs_sb(img.fs)->s_free_inodes_count;
	assert_int_equal(ext4fs_orphan_file_create(img.fs, ino, 8), 0);
	assert_int_equal(ext4fs_fs_inode_bitmap(img.fs, &imap), 0);
	assert_int_equal(ext4fs_bitmap_test(imap, ino), 1);
	assert_int_equal(ext4fs_sb(img.fs)->s_free_inodes_count, free_inodes - 1);
	/* Eight data blocks, and with 1 KiB blocks one indirect block. */
	assert_true(ext4fs_geom(img.fs)->free_blocks_count < free_blocks - 7);
	assert_file_clean(img.fs, 8);

	assert_int_equal(ext4fs_orphan_file_create(img.fs, 0, 4), 0);
	fresh = ext4fs_sb(img.fs)->s_orphan_file_inum;
	assert_true(fresh != ino && fresh >= ext4fs_geom(img.fs)->first_ino);
	assert_int_equal(ext4fs_bitmap_test(imap, fresh), 1);
	assert_file_clean(img.fs, 4);
	/* The first file is an ordinary inode now, held by nothing: give it back for the check. */
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &in), 0);
	assert_int_equal(ext4fs_file_truncate(img.fs, ino, &in, 0), 0);
	in.i_links_count = 0;
	in.i_dtime = 1700000000;
	assert_int_equal(ext4fs_inode_write(img.fs, ino, &in), 0);
	assert_int_equal(ext4fs_inode_mark_free(img.fs, ino, 0), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mkfs_blocks_are_clean),
		cmocka_unit_test(default_blocks_follow_mke2fs),
		cmocka_unit_test(entries_and_checksums),
		cmocka_unit_test(create_rebuilds_the_file),
		cmocka_unit_test(truncate_drops_the_feature),
		cmocka_unit_test(create_over_a_freed_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
