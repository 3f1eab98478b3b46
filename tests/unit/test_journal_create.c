/*
 * test_journal_create.c - a new journal on a file system without one
 * (ext4fs_journal_create) and the superblock's journal fields
 * (ext4fs_super_set_journal); judged by reopening, by the library's own
 * journal loader and by the real e2fsck.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/journal.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

static void no_journal(struct ext4fs_mkfs_params *p)
{
	p->feature_compat &= ~(uint32_t)EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
}

/* ext3 without its journal: the new journal gets an indirect map. */
static void no_journal_ext3ish(struct ext4fs_mkfs_params *p)
{
	rw_tweak_ext3ish_1k(p);
	no_journal(p);
}

/* The journal just made: a regular file of the size asked, backed up in the superblock, loadable. */
static void assert_journal(struct rw_image *img, uint32_t blocks)
{
	const struct ext4fs_super *sb = ext4fs_sb(img->fs);
	struct ext4fs_journal *j = NULL;
	struct ext4fs_inode in;

	assert_true(sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL);
	assert_int_equal(sb->s_journal_inum, EXT4FS_JOURNAL_INO);
	assert_int_equal(sb->s_jnl_backup_type, EXT4FS_JNL_BACKUP_BLOCKS);
	assert_int_equal(ext4fs_inode_read(img->fs, EXT4FS_JOURNAL_INO, &in), 0);
	assert_true(EXT4FS_ISREG(in.i_mode));
	assert_int_equal(in.i_links_count, 1);
	assert_int_equal(ext4fs_inode_size(&in), (uint64_t)blocks * ext4fs_geom(img->fs)->block_size);
	for (int i = 0; i < EXT4FS_N_BLOCKS; i++) {
		uint32_t word;
		memcpy(&word, in.i_block + 4 * i, 4);
		assert_int_equal(sb->s_jnl_blocks[i], word);
	}
	assert_int_equal(sb->s_jnl_blocks[16], in.i_size_lo);
	assert_int_equal(ext4fs_journal_open(img->fs, &j), 0);
	assert_int_equal(ext4fs_journal_super(j)->maxlen, blocks);
	assert_false(ext4fs_journal_needs_recovery(j));
	ext4fs_journal_close(j);
}

static void create__extent_journal_that_e2fsck_accepts(void **state)
{
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 16384, 4096, no_journal);
	assert_int_equal(ext4fs_journal_create(img.fs, 1024, 0), 0);
	assert_journal(&img, 1024);
	rw_image_reopen(&img);
	assert_journal(&img, 1024);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void create__indirect_journal_that_e2fsck_accepts(void **state)
{
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 32768, 1024, no_journal_ext3ish);
	assert_int_equal(ext4fs_journal_create(img.fs, 4096, 0), 0);
	assert_journal(&img, 4096);
	rw_image_reopen(&img);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void create__counts_its_blocks_in_the_free_counts(void **state)
{
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 16384, 4096, no_journal);
	uint64_t before = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_journal_create(img.fs, 2048, 0), 0);
	uint64_t after = ext4fs_geom(img.fs)->free_blocks_count;
	const struct ext4fs_super *sb = ext4fs_sb(img.fs);
	assert_true(before - after >= 2048);
	assert_int_equal((uint64_t)sb->s_free_blocks_count_lo | (uint64_t)sb->s_free_blocks_count_hi << 32, after);
	rw_image_close(&img);
}

static void create__refused_with_a_journal_or_too_small(void **state)
{
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_int_equal(ext4fs_journal_create(img.fs, 1024, 0), EXT4FS_E_EXISTS);
	rw_image_close(&img);
	rw_image_open(&img, 16384, 4096, no_journal);
	assert_int_equal(ext4fs_journal_create(img.fs, 1023, 0), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_journal_create(img.fs, 1024, UINT32_MAX), EXT4FS_E_INVALID_ARG);
	assert_false(ext4fs_sb(img.fs)->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void create__without_room_leaves_the_fs_as_it_was(void **state)
{
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 4096, 1024, no_journal);
	uint64_t before = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_journal_create(img.fs, 4000, 0), EXT4FS_E_NO_SPACE);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, before);
	assert_int_equal(ext4fs_sb(img.fs)->s_journal_inum, 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* Only the journal fields are taken from the caller's copy; the rest is the handle's. */
static void super_set_journal__takes_only_the_journal_fields(void **state)
{
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	struct ext4fs_super sb = *ext4fs_sb(img.fs);
	uint32_t inodes = sb.s_inodes_count;
	sb.s_feature_compat &= ~(uint32_t)EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
	sb.s_feature_incompat |= EXT4FS_FEATURE_INCOMPAT_RECOVER;
	sb.s_journal_inum = 0;
	sb.s_inodes_count = 7;
	sb.s_volume_name[0] = 'x';
	assert_int_equal(ext4fs_super_set_journal(img.fs, &sb), 0);
	const struct ext4fs_super *now = ext4fs_sb(img.fs);
	assert_false(now->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL);
	assert_true(now->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER);
	assert_int_equal(now->s_journal_inum, 0);
	assert_int_equal(now->s_inodes_count, inodes);
	assert_int_equal(now->s_volume_name[0], 0);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create__extent_journal_that_e2fsck_accepts),
		cmocka_unit_test(create__indirect_journal_that_e2fsck_accepts),
		cmocka_unit_test(create__counts_its_blocks_in_the_free_counts),
		cmocka_unit_test(create__refused_with_a_journal_or_too_small),
		cmocka_unit_test(create__without_room_leaves_the_fs_as_it_was),
		cmocka_unit_test(super_set_journal__takes_only_the_journal_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
