/*
 * test_toolsupport.c - what the library offers tools that write on
 * purpose: the mount check (mountcheck.h), writing a descriptor or an inode
 * with the checksum as given (damaged images for fsck tests), and flushing
 * the primary superblock and descriptors only (debug4fs, like debugfs).
 * Judged by reading back through the library and by the real e2fsck.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/mountcheck.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

/* 4 KiB blocks in groups of 8192, so a small image still has a backup group 1. */
static void small_groups_4k(struct ext4fs_mkfs_params *p)
{
	p->blocks_per_group = 8192;
}

/* e2fsck -fn must find the damage (skipped with a note when e2fsck is missing). */
static void expect_damaged(struct rw_image *img)
{
	int rc = rw_image_fsck(img);

	if (rc == -1)
		print_message("SKIP: e2fsck not installed\n");
	else
		assert_int_not_equal(rc, 0);
}

/* ------------------------------------------------------------------ mount check */

static void mount_check__unused_file_is_not_in_use(void **state)
{
	char path[] = "/tmp/toolsupport_XXXXXX";
	char via[64] = "junk";
	unsigned flags = 99;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_equal(ext4fs_check_mount_via(path, &flags, via, sizeof(via)), 0);
	assert_int_equal(flags, 0);
	assert_string_equal(via, "");
	assert_false(EXT4FS_MOUNT_IN_USE(flags));
	flags = 99;
	assert_int_equal(ext4fs_check_mount(path, &flags), 0);
	assert_int_equal(flags, 0);
	unlink(path);
}

static void mount_check__missing_path_is_an_error(void **state)
{
	unsigned flags = 99;

	(void)state;
	assert_int_equal(ext4fs_check_mount("/nonexistent/toolsupport/image", &flags), -ENOENT);
	assert_int_equal(flags, 0);
}

static void mount_check__other_file_types_are_not_in_use(void **state)
{
	unsigned flags = 99;

	(void)state;
	/* A character device and a directory are neither images nor block devices. */
	if (access("/dev/null", F_OK) == 0) {
		assert_int_equal(ext4fs_check_mount("/dev/null", &flags), 0);
		assert_int_equal(flags, 0);
	}
	flags = 99;
	assert_int_equal(ext4fs_check_mount("/", &flags), 0);
	assert_int_equal(flags, 0);
}

/* ------------------------------------------------------------------ exact descriptor */

static void desc_exact(void (*tweak)(struct ext4fs_mkfs_params *), uint32_t bs, uint64_t blocks)
{
	struct rw_image img;
	struct ext4fs_group_desc gd;
	uint16_t right;

	/*
	 * Group 1, not 0: e2fsck takes a bad group 0 descriptor for a damaged
	 * table and silently uses a backup.
	 */
	rw_image_open(&img, blocks, bs, tweak);
	assert_true(ext4fs_geom(img.fs)->group_count > 1);
	gd = *ext4fs_group(img.fs, 1);
	right = gd.checksum;
	gd.checksum = (uint16_t)(right ^ 0x1234);
	assert_int_equal(ext4fs_group_desc_set_exact(img.fs, 1, &gd), 0);
	assert_int_equal(ext4fs_group(img.fs, 1)->checksum, right ^ 0x1234);
	assert_false(ext4fs_group_desc_csum_ok(img.fs, 1));
	/* Written as given: a later session reads the wrong checksum (and says so). */
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_group(img.fs, 1)->checksum, right ^ 0x1234);
	assert_false(ext4fs_group_desc_csum_ok(img.fs, 1));
	expect_damaged(&img);
	/* The ordinary setter repairs it. */
	gd = *ext4fs_group(img.fs, 1);
	assert_int_equal(ext4fs_group_desc_set(img.fs, 1, &gd), 0);
	assert_int_equal(ext4fs_group(img.fs, 1)->checksum, right);
	assert_true(ext4fs_group_desc_csum_ok(img.fs, 1));
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void desc_set_exact__metadata_csum_1k(void **state)
{
	(void)state;
	desc_exact(NULL, 1024, 16384);
}

static void desc_set_exact__metadata_csum_4k(void **state)
{
	(void)state;
	desc_exact(small_groups_4k, 4096, 16384);
}

static void desc_set_exact__gdt_csum(void **state)
{
	(void)state;
	desc_exact(rw_tweak_gdt_csum, 1024, 16384);
}

static void desc_set_exact__stale_checksum_after_a_change(void **state)
{
	struct rw_image img;
	struct ext4fs_group_desc gd;

	(void)state;
	rw_image_open(&img, 16384, 1024, NULL);
	gd = *ext4fs_group(img.fs, 1);
	gd.free_inodes_count--;      /* checksum kept: now stale, as debugfs's set_bg leaves it */
	assert_int_equal(ext4fs_group_desc_set_exact(img.fs, 1, &gd), 0);
	assert_false(ext4fs_group_desc_csum_ok(img.fs, 1));
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_group(img.fs, 1)->free_inodes_count, gd.free_inodes_count);
	assert_false(ext4fs_group_desc_csum_ok(img.fs, 1));
	expect_damaged(&img);
	rw_image_close(&img);
}

/* ------------------------------------------------------------------ exact inode */

static void inode_exact(void (*tweak)(struct ext4fs_mkfs_params *), uint32_t bs, int has_csum)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char *raw;
	uint32_t size;

	rw_image_open(&img, 8192, bs, tweak);
	size = ext4fs_geom(img.fs)->inode_size;
	raw = malloc(size);
	assert_non_null(raw);
	assert_int_equal(ext4fs_inode_read_raw(img.fs, EXT4FS_ROOT_INO, raw), 0);
	raw[0x7C] ^= 0x5A;           /* i_checksum_lo */
	assert_int_equal(ext4fs_inode_write_raw_exact(img.fs, EXT4FS_ROOT_INO, raw), 0);
	rw_image_reopen(&img);
	if (has_csum) {
		memset(&in, 0, sizeof(in));
		assert_int_equal(ext4fs_inode_read(img.fs, EXT4FS_ROOT_INO, &in), EXT4FS_E_INODE_CSUM);
		assert_int_equal(in.i_mode, 0);
		/* The strict read fails the same way but fills the inode. */
		assert_int_equal(ext4fs_inode_read_strict(img.fs, EXT4FS_ROOT_INO, &in), EXT4FS_E_INODE_CSUM);
		assert_true(EXT4FS_ISDIR(in.i_mode));
		expect_damaged(&img);
	}
	assert_int_equal(ext4fs_inode_read_raw(img.fs, EXT4FS_ROOT_INO, raw), 0);
	assert_int_equal(ext4fs_inode_write_raw(img.fs, EXT4FS_ROOT_INO, raw), 0);
	assert_int_equal(ext4fs_inode_read(img.fs, EXT4FS_ROOT_INO, &in), 0);
	assert_true(EXT4FS_ISDIR(in.i_mode));
	assert_int_equal(ext4fs_inode_read_strict(img.fs, EXT4FS_ROOT_INO, &in), 0);
	rw_image_assert_clean(&img);
	free(raw);
	rw_image_close(&img);
}

static void inode_write_raw_exact__metadata_csum_1k(void **state)
{
	(void)state;
	inode_exact(NULL, 1024, 1);
}

static void inode_write_raw_exact__metadata_csum_4k(void **state)
{
	(void)state;
	inode_exact(NULL, 4096, 1);
}

static void inode_write_raw_exact__without_csum_is_a_plain_write(void **state)
{
	(void)state;
	inode_exact(rw_tweak_no_csum, 1024, 0);
}

/* ------------------------------------------------------------------ primary only */

static uint16_t backup_mnt_count(struct rw_image *img)
{
	struct ext4fs_super sb;
	uint64_t sblk;

	ext4fs_group_meta_location(img->fs, 1, &sblk, NULL, NULL, NULL, NULL);
	assert_true(sblk > 0);
	ext4fs_super_decode(&sb, img->buf + sblk * ext4fs_geom(img->fs)->block_size);
	return sb.s_mnt_count;
}

static const unsigned char *backup_desc0(struct rw_image *img)
{
	uint64_t odesc;
	uint32_t n;

	ext4fs_group_meta_location(img->fs, 1, NULL, &odesc, &n, NULL, NULL);
	assert_true(odesc > 0 && n > 0);
	return img->buf + odesc * ext4fs_geom(img->fs)->block_size;
}

static void set_primary_only__backups_keep_their_copy(void **state)
{
	struct rw_image img;
	struct ext4fs_super sb;
	struct ext4fs_group_desc gd;
	unsigned char before[64];
	uint32_t dsize;

	(void)state;
	rw_image_open(&img, 16384, 1024, NULL);
	dsize = ext4fs_geom(img.fs)->desc_size;
	memcpy(before, backup_desc0(&img), dsize);
	ext4fs_set_primary_only(img.fs, 1);
	sb = *ext4fs_sb(img.fs);
	sb.s_mnt_count = 17;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	gd = *ext4fs_group(img.fs, 0);
	gd.used_dirs_count++;
	assert_int_equal(ext4fs_group_desc_set(img.fs, 0, &gd), 0);
	assert_int_equal(ext4fs_flush(img.fs), 0);
	assert_int_equal(backup_mnt_count(&img), 0);
	assert_memory_equal(backup_desc0(&img), before, dsize);
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_sb(img.fs)->s_mnt_count, 17);
	assert_int_equal(ext4fs_group(img.fs, 0)->used_dirs_count, gd.used_dirs_count);
	/* The default (a new handle) writes the backups again. */
	gd.used_dirs_count--;
	assert_int_equal(ext4fs_group_desc_set(img.fs, 0, &gd), 0);
	sb = *ext4fs_sb(img.fs);
	sb.s_mnt_count = 18;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	assert_int_equal(ext4fs_flush(img.fs), 0);
	assert_int_equal(backup_mnt_count(&img), 18);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mount_check__unused_file_is_not_in_use),
		cmocka_unit_test(mount_check__missing_path_is_an_error),
		cmocka_unit_test(mount_check__other_file_types_are_not_in_use),
		cmocka_unit_test(desc_set_exact__metadata_csum_1k),
		cmocka_unit_test(desc_set_exact__metadata_csum_4k),
		cmocka_unit_test(desc_set_exact__gdt_csum),
		cmocka_unit_test(desc_set_exact__stale_checksum_after_a_change),
		cmocka_unit_test(inode_write_raw_exact__metadata_csum_1k),
		cmocka_unit_test(inode_write_raw_exact__metadata_csum_4k),
		cmocka_unit_test(inode_write_raw_exact__without_csum_is_a_plain_write),
		cmocka_unit_test(set_primary_only__backups_keep_their_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
