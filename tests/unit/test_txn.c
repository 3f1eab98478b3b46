/*
 * test_txn.c - journalled mode (txn.h): what the handle sees, what the disk
 * holds before and after a commit and a checkpoint, frees held until they
 * commit, the errors, and a failed transaction leaving the disk at the last
 * commit.  Judged by the library's journal recovery and the real e2fsck.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/errors.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/io_fault.h"
#include "ext4fs/journal.h"
#include "ext4fs/namei.h"
#include "ext4fs/super.h"
#include "ext4fs/alloc.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/txn.h"
#include "../lib/rw_image.h"

static const struct ext4fs_new_attrs dir_attrs = { .mode = EXT4FS_S_IFDIR | 0755 };
static const struct ext4fs_new_attrs file_attrs = { .mode = EXT4FS_S_IFREG | 0644 };

static void no_journal(struct ext4fs_mkfs_params *p)
{
	p->feature_compat &= ~(uint32_t)EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
}

static int lookup(struct ext4fs_fs *fs, const char *path, uint32_t *ino)
{
	return ext4fs_namei(fs, EXT4FS_ROOT_INO, EXT4FS_ROOT_INO, path, 0, ino);
}

/* Open a private copy of the image bytes read-only: what the disk holds now. */
static struct ext4fs_fs *open_disk_copy(const struct rw_image *img, unsigned char **copy)
{
	struct ext4fs_open_opts o = { .flags = 0 };
	struct ext4fs_io *io;
	struct ext4fs_fs *fs;
	char msg[256];

	*copy = malloc(img->size);
	assert_non_null(*copy);
	memcpy(*copy, img->buf, img->size);
	assert_int_equal(ext4fs_io_open_memory(*copy, img->size, 1, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &o, &fs, msg, sizeof(msg)), 0);
	return fs;
}

/* Replay the image's journal with the library (as e4fsck does), in place. */
static void recover(struct rw_image *img)
{
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RECOVERY };
	struct ext4fs_journal *j;
	struct ext4fs_io *io;
	struct ext4fs_fs *fs;
	char msg[256];

	assert_int_equal(ext4fs_io_open_memory(img->buf, img->size, 1, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &o, &fs, msg, sizeof(msg)), 0);
	assert_int_equal(ext4fs_journal_open(fs, &j), 0);
	assert_int_equal(ext4fs_journal_recover(j, NULL), 0);
	ext4fs_journal_close(j);
	ext4fs_close(fs);
}

static int disk_needs_recovery(const struct rw_image *img)
{
	struct ext4fs_super sb;

	ext4fs_super_decode(&sb, img->buf + EXT4FS_SUPER_OFFSET);
	return (sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER) != 0;
}

static void calls_need_journalled_mode(void **state)
{
	struct ext4fs_txn_room room;
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_false(ext4fs_txn_active(img.fs));
	assert_int_equal(ext4fs_txn_begin(img.fs), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_txn_commit(img.fs), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_txn_checkpoint(img.fs), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_txn_room(img.fs, &room), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_txn_stop(img.fs), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_true(ext4fs_txn_active(img.fs));
	assert_int_equal(ext4fs_txn_start(img.fs), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_txn_stop(img.fs), 0);
	rw_image_close(&img);
}

static void start_needs_a_journal(void **state)
{
	struct rw_image img;
	(void)state;

	rw_image_open(&img, 16384, 4096, no_journal);
	assert_int_equal(ext4fs_txn_start(img.fs), EXT4FS_E_NO_JOURNAL);
	assert_false(ext4fs_txn_active(img.fs));
	rw_image_close(&img);
}

/*
 * The handle sees a change at once; the disk sees it in the log after the
 * commit and at home only after the checkpoint; needs_recovery is set while
 * journalled and cleared by stop.
 */
static void commit_logs_checkpoint_writes_home(void **state)
{
	struct ext4fs_txn_room room;
	struct rw_image img;
	struct ext4fs_fs *disk;
	unsigned char *copy;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_true(disk_needs_recovery(&img));
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "a", &dir_attrs, &ino), 0);
	assert_int_equal(lookup(img.fs, "/a", &ino), 0);

	disk = open_disk_copy(&img, &copy);
	assert_int_equal(lookup(disk, "/a", &ino), EXT4FS_E_NOT_FOUND);
	ext4fs_close(disk);
	free(copy);

	assert_int_equal(ext4fs_txn_commit(img.fs), 0);
	assert_int_equal(ext4fs_txn_room(img.fs, &room), 0);
	assert_true(room.ring_used > 0);
	disk = open_disk_copy(&img, &copy);
	assert_int_equal(lookup(disk, "/a", &ino), EXT4FS_E_NOT_FOUND);   /* in the log only */
	ext4fs_close(disk);
	free(copy);

	assert_int_equal(ext4fs_txn_checkpoint(img.fs), 0);
	assert_int_equal(ext4fs_txn_room(img.fs, &room), 0);
	assert_int_equal(room.ring_used, 0);
	disk = open_disk_copy(&img, &copy);
	assert_int_equal(lookup(disk, "/a", &ino), 0);
	ext4fs_close(disk);
	free(copy);

	assert_int_equal(ext4fs_txn_stop(img.fs), 0);
	assert_false(disk_needs_recovery(&img));
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* A committed log that was never checkpointed replays to the committed state. */
static void committed_log_replays(void **state)
{
	struct rw_image img;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "kept", &dir_attrs, &ino), 0);
	assert_int_equal(ext4fs_txn_commit(img.fs), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "lost", &dir_attrs, &ino), 0);
	/* A crash: the handle goes away without another commit or a checkpoint. */
	unsigned char *crash = malloc(img.size);
	assert_non_null(crash);
	memcpy(crash, img.buf, img.size);
	rw_image_close(&img);

	rw_image_open(&img, 16384, 4096, NULL);
	ext4fs_close(img.fs);
	memcpy(img.buf, crash, img.size);
	free(crash);
	assert_true(disk_needs_recovery(&img));
	recover(&img);
	img.fs = NULL;
	rw_image_reopen_raw(&img);
	assert_int_equal(lookup(img.fs, "/kept", &ino), 0);
	assert_int_equal(lookup(img.fs, "/lost", &ino), EXT4FS_E_NOT_FOUND);
	assert_int_equal(lookup(img.fs, "/later", &ino), EXT4FS_E_NOT_FOUND);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* Freed blocks stay in use until the transaction that freed them commits. */
static void frees_wait_for_the_commit(void **state)
{
	static unsigned char data[64 * 1024];
	struct ext4fs_inode in;
	struct rw_image img;
	uint64_t before, after_unlink;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_int_equal(ext4fs_mknod(img.fs, EXT4FS_ROOT_INO, "f", &file_attrs, &ino), 0);
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &in), 0);
	memset(data, 0xA5, sizeof(data));
	assert_int_equal(ext4fs_file_write(img.fs, ino, &in, 0, data, sizeof(data), sizeof(data)), 0);
	assert_int_equal(ext4fs_txn_commit(img.fs), 0);
	before = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_unlink(img.fs, EXT4FS_ROOT_INO, "f"), 0);
	after_unlink = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(after_unlink, before);
	assert_int_equal(ext4fs_txn_commit(img.fs), 0);
	assert_true(ext4fs_geom(img.fs)->free_blocks_count >= before + sizeof(data) / 4096);
	assert_int_equal(ext4fs_txn_stop(img.fs), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void one_kib_small_journal(struct ext4fs_mkfs_params *p)
{
	rw_tweak_1k(p);
	p->journal_blocks = 1024;
}

/*
 * A transaction larger than the journal: a clear error, nothing of it on
 * the disk, the handle refuses more, and the disk replays to the last
 * commit.
 */
static void too_large_a_transaction_is_refused(void **state)
{
	struct ext4fs_txn_room room;
	struct rw_image img;
	uint32_t ino;
	int err = 0;
	(void)state;

	rw_image_open(&img, 16384, 1024, one_kib_small_journal);
	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "before", &dir_attrs, &ino), 0);
	assert_int_equal(ext4fs_txn_commit(img.fs), 0);
	assert_int_equal(ext4fs_txn_begin(img.fs), 0);
	for (int i = 0; i < 1000 && !err; i++) {
		char name[16];
		snprintf(name, sizeof(name), "d%d", i);
		err = ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, name, &dir_attrs, &ino);
	}
	assert_int_equal(err, 0);
	assert_int_equal(ext4fs_txn_room(img.fs, &room), 0);
	assert_true(room.running_blocks > room.max_blocks);
	assert_int_equal(ext4fs_txn_commit(img.fs), EXT4FS_E_JOURNAL_FULL);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "after", &dir_attrs, &ino), 0);
	assert_int_equal(ext4fs_txn_commit(img.fs), EXT4FS_E_TXN_FAILED);
	assert_int_equal(ext4fs_txn_stop(img.fs), EXT4FS_E_TXN_FAILED);
	ext4fs_close(img.fs);
	img.fs = NULL;

	assert_true(disk_needs_recovery(&img));
	recover(&img);
	rw_image_reopen_raw(&img);
	assert_int_equal(lookup(img.fs, "/before", &ino), 0);
	assert_int_equal(lookup(img.fs, "/d0", &ino), EXT4FS_E_NOT_FOUND);
	assert_int_equal(lookup(img.fs, "/after", &ino), EXT4FS_E_NOT_FOUND);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * The scenario of checkpoint_keeps_blocks_freed_since() over buf, through a
 * fault channel with spec: returns the flushes made up to the end of the
 * last commit, and that commit's result in *last.
 */
static uint64_t freed_then_checkpoint(unsigned char *buf, size_t size, const char *spec_text, int *last)
{
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_io_fault_spec spec;
	struct ext4fs_io_fault_counts counts;
	struct ext4fs_txn_room room;
	struct ext4fs_io *mem, *io;
	struct ext4fs_fs *fs;
	char text[64], msg[256];
	uint32_t d, sub, ino;
	int n = 0;

	snprintf(text, sizeof(text), "%s", spec_text);
	assert_int_equal(ext4fs_io_fault_parse(text, &spec), 0);
	assert_int_equal(ext4fs_io_open_memory(buf, size, 1, &mem), 0);
	assert_int_equal(ext4fs_io_fault_wrap(mem, &spec, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &o, &fs, msg, sizeof(msg)), 0);
	ext4fs_set_time(fs, 1700000000, 0);
	assert_int_equal(ext4fs_txn_start(fs), 0);
	assert_int_equal(ext4fs_mkdir(fs, EXT4FS_ROOT_INO, "d", &dir_attrs, &d), 0);
	assert_int_equal(ext4fs_mkdir(fs, d, "sub", &dir_attrs, &sub), 0);
	assert_int_equal(ext4fs_txn_commit(fs), 0);
	/* Fill the log until the next large transaction cannot fit. */
	do {
		char name[16];
		snprintf(name, sizeof(name), "f%d", n++);
		assert_int_equal(ext4fs_mknod(fs, EXT4FS_ROOT_INO, name, &file_attrs, &ino), 0);
		assert_int_equal(ext4fs_txn_commit(fs), 0);
		assert_int_equal(ext4fs_txn_room(fs, &room), 0);
	} while (room.ring_used + 120 < room.ring_blocks);
	/* The directories' blocks, logged above, are freed; the commit must checkpoint first. */
	assert_int_equal(ext4fs_rmdir(fs, d, "sub"), 0);
	assert_int_equal(ext4fs_rmdir(fs, EXT4FS_ROOT_INO, "d"), 0);
	for (int i = 0; i < 150; i++) {
		char name[16];
		snprintf(name, sizeof(name), "g%d", i);
		assert_int_equal(ext4fs_mkdir(fs, EXT4FS_ROOT_INO, name, &dir_attrs, &ino), 0);
	}
	*last = ext4fs_txn_commit(fs);
	ext4fs_io_fault_counts(io, &counts);
	if (*last == 0)
		assert_int_equal(ext4fs_txn_stop(fs), 0);
	ext4fs_close(fs);
	return counts.flushes;
}

/*
 * A block the log holds, freed by the running transaction, must still go
 * home at a checkpoint that comes before that transaction commits: the
 * committed state uses it.  Here a commit needs room, checkpoints, and the
 * disk stops at its last flush, before the commit block: the file system
 * must be the one of the commit before, whole.
 */
static void checkpoint_keeps_blocks_freed_since(void **state)
{
	struct rw_image img;
	unsigned char *base;
	uint64_t flushes;
	uint32_t ino;
	char spec[64];
	int last;
	(void)state;

	rw_image_open(&img, 16384, 1024, one_kib_small_journal);
	ext4fs_close(img.fs);
	img.fs = NULL;
	base = malloc(img.size);
	assert_non_null(base);
	memcpy(base, img.buf, img.size);
	flushes = freed_then_checkpoint(img.buf, img.size, "", &last);
	assert_int_equal(last, 0);

	memcpy(img.buf, base, img.size);
	free(base);
	snprintf(spec, sizeof(spec), "flush=%llu", (unsigned long long)flushes);
	freed_then_checkpoint(img.buf, img.size, spec, &last);
	assert_int_not_equal(last, 0);
	assert_true(disk_needs_recovery(&img));
	recover(&img);
	rw_image_reopen_raw(&img);
	assert_int_equal(lookup(img.fs, "/d/sub", &ino), 0);
	assert_int_equal(lookup(img.fs, "/g0", &ino), EXT4FS_E_NOT_FOUND);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * Data written straight to a block that the last commit freed must wait for
 * that commit to be durable: were a power cut to lose it, the old state
 * would point at the block again.  One flush comes first; blocks that were
 * free all along need none.
 */
static void reused_block_waits_for_a_durable_commit(void **state)
{
	static unsigned char data[16 * 4096];
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_io_fault_spec spec;
	struct ext4fs_io_fault_counts c0, c1, c2;
	struct ext4fs_io *mem, *io;
	struct ext4fs_inode in;
	struct rw_image img;
	struct ext4fs_fs *fs;
	uint64_t old_blk, run, fresh_blk;
	char text[8] = "", msg[256];
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	ext4fs_close(img.fs);
	img.fs = NULL;
	assert_int_equal(ext4fs_io_fault_parse(text, &spec), 0);
	assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 1, &mem), 0);
	assert_int_equal(ext4fs_io_fault_wrap(mem, &spec, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &o, &fs, msg, sizeof(msg)), 0);
	assert_int_equal(ext4fs_txn_start(fs), 0);
	assert_int_equal(ext4fs_mknod(fs, EXT4FS_ROOT_INO, "f", &file_attrs, &ino), 0);
	assert_int_equal(ext4fs_inode_read(fs, ino, &in), 0);
	memset(data, 0xA5, sizeof(data));
	assert_int_equal(ext4fs_file_write(fs, ino, &in, 0, data, sizeof(data), sizeof(data)), 0);
	assert_int_equal(ext4fs_txn_commit(fs), 0);
	assert_int_equal(ext4fs_bmap(fs, ino, &in, 0, &old_blk, &run, NULL), 0);
	assert_true(old_blk != 0 && run >= 16);
	assert_int_equal(ext4fs_unlink(fs, EXT4FS_ROOT_INO, "f"), 0);
	assert_int_equal(ext4fs_txn_commit(fs), 0);

	/* Blocks never freed by a commit: straight to the disk, no flush. */
	fresh_blk = old_blk + 64;
	assert_int_equal(ext4fs_blocks_mark_used(fs, fresh_blk, 16), 0);
	ext4fs_io_fault_counts(io, &c0);
	assert_int_equal(ext4fs_data_write(fs, fresh_blk, 16, data), 0);
	ext4fs_io_fault_counts(io, &c1);
	assert_int_equal(c1.flushes, c0.flushes);
	assert_true(c1.writes > c0.writes);

	/* The blocks the last commit freed: a flush before the data goes down, once. */
	assert_int_equal(ext4fs_blocks_mark_used(fs, old_blk, 16), 0);
	assert_int_equal(ext4fs_data_write(fs, old_blk, 16, data), 0);
	ext4fs_io_fault_counts(io, &c2);
	assert_int_equal(c2.flushes, c1.flushes + 1);
	assert_int_equal(ext4fs_data_write(fs, old_blk, 16, data), 0);
	ext4fs_io_fault_counts(io, &c1);
	assert_int_equal(c1.flushes, c2.flushes);
	assert_int_equal(ext4fs_free_blocks(fs, old_blk, 16), 0);
	assert_int_equal(ext4fs_free_blocks(fs, fresh_blk, 16), 0);
	assert_int_equal(ext4fs_txn_stop(fs), 0);
	ext4fs_close(fs);
	rw_image_reopen_raw(&img);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * A transaction given up half way (ext4fs_txn_abort()) leaves the disk at
 * the last commit; the handle commits nothing more (what is changed after
 * is discarded at close).
 */
static void abort_leaves_the_last_commit(void **state)
{
	struct rw_image img;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_int_equal(ext4fs_txn_abort(img.fs), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "kept", &dir_attrs, &ino), 0);
	assert_int_equal(ext4fs_txn_commit(img.fs), 0);
	assert_int_equal(ext4fs_txn_begin(img.fs), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "lost", &dir_attrs, &ino), 0);
	assert_int_equal(ext4fs_txn_abort(img.fs), 0);
	(void)ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "later", &dir_attrs, &ino);
	assert_int_equal(ext4fs_txn_commit(img.fs), EXT4FS_E_TXN_FAILED);
	assert_int_equal(ext4fs_txn_begin(img.fs), EXT4FS_E_TXN_FAILED);
	ext4fs_close(img.fs);
	img.fs = NULL;
	recover(&img);
	rw_image_reopen_raw(&img);
	assert_int_equal(lookup(img.fs, "/kept", &ino), 0);
	assert_int_equal(lookup(img.fs, "/lost", &ino), EXT4FS_E_NOT_FOUND);
	assert_int_equal(lookup(img.fs, "/later", &ino), EXT4FS_E_NOT_FOUND);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(calls_need_journalled_mode),
		cmocka_unit_test(start_needs_a_journal),
		cmocka_unit_test(commit_logs_checkpoint_writes_home),
		cmocka_unit_test(committed_log_replays),
		cmocka_unit_test(frees_wait_for_the_commit),
		cmocka_unit_test(too_large_a_transaction_is_refused),
		cmocka_unit_test(checkpoint_keeps_blocks_freed_since),
		cmocka_unit_test(reused_block_waits_for_a_durable_commit),
		cmocka_unit_test(abort_leaves_the_last_commit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
