/*
 * test_fsopen.c - lib/support/fsopen.h: the crash-safety rule of the tools
 * that rewrite file systems, and the EXT4FS_FAULT hook of sup_io_open().
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ext4fs/errors.h"
#include "ext4fs/io_fault.h"
#include "ext4fs/super.h"
#include "ext4fs/txn.h"
#include "support/fsopen.h"
#include "../lib/rw_image.h"

static void no_journal(struct ext4fs_mkfs_params *p)
{
	p->feature_compat &= ~(uint32_t)EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
}

static void journal_means_journalled_mode(void **state)
{
	enum sup_safety how = SUP_SAFE_FORCED;
	struct rw_image img;
	char msg[256];
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_int_equal(sup_make_crash_safe(img.fs, 0, 0, &how, msg, sizeof(msg)), 0);
	assert_int_equal(how, SUP_SAFE_JOURNAL);
	assert_true(ext4fs_txn_active(img.fs));
	assert_int_equal(ext4fs_txn_stop(img.fs), 0);
	rw_image_close(&img);
}

static void no_journal_needs_an_undo_file_or_force(void **state)
{
	enum sup_safety how = SUP_SAFE_JOURNAL;
	struct rw_image img;
	char msg[256] = "";
	(void)state;

	rw_image_open(&img, 16384, 4096, no_journal);
	assert_int_equal(sup_make_crash_safe(img.fs, 0, 0, &how, msg, sizeof(msg)), EXT4FS_E_NO_JOURNAL);
	assert_non_null(strstr(msg, "-z FILE"));
	assert_non_null(strstr(msg, "-f"));
	assert_int_equal(sup_make_crash_safe(img.fs, 1, 0, &how, msg, sizeof(msg)), 0);
	assert_int_equal(how, SUP_SAFE_UNDO);
	assert_int_equal(sup_make_crash_safe(img.fs, 0, 1, &how, msg, sizeof(msg)), 0);
	assert_int_equal(how, SUP_SAFE_FORCED);
	assert_false(ext4fs_txn_active(img.fs));
	rw_image_close(&img);
}

static void fault_hook_from_the_environment(void **state)
{
	char path[] = "/tmp/test_fsopen_XXXXXX", msg[256] = "";
	unsigned char block[1024] = { 1 };
	struct ext4fs_io_fault_counts c;
	struct ext4fs_io *io;
	int fd = mkstemp(path);
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 65536), 0);
	close(fd);

	setenv(SUP_FAULT_ENV, "write=two", 1);
	assert_int_equal(sup_io_open(path, EXT4FS_IO_RDWR, 0, NULL, &io, msg, sizeof(msg)), EXT4FS_E_INVALID_ARG);
	assert_null(io);
	assert_non_null(strstr(msg, "EXT4FS_FAULT=\"write=two\" is not a fault spec"));

	/* Read-only channels are left alone. */
	assert_int_equal(sup_io_open(path, 0, 0, NULL, &io, msg, sizeof(msg)), 0);
	ext4fs_io_close(io);

	setenv(SUP_FAULT_ENV, "write=2", 1);
	assert_int_equal(sup_io_open(path, EXT4FS_IO_RDWR, 0, NULL, &io, msg, sizeof(msg)), 0);
	assert_int_equal(ext4fs_io_write(io, 0, block, sizeof(block)), 0);
	assert_int_equal(ext4fs_io_write(io, 1024, block, sizeof(block)), -EIO);
	ext4fs_io_fault_counts(io, &c);
	assert_true(c.triggered);
	ext4fs_io_close(io);

	unsetenv(SUP_FAULT_ENV);
	assert_int_equal(sup_io_open(path, EXT4FS_IO_RDWR, 0, NULL, &io, msg, sizeof(msg)), 0);
	ext4fs_io_fault_counts(io, &c);
	assert_int_equal(c.writes, 0);   /* not a fault channel */
	ext4fs_io_close(io);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(journal_means_journalled_mode),
		cmocka_unit_test(no_journal_needs_an_undo_file_or_force),
		cmocka_unit_test(fault_hook_from_the_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
