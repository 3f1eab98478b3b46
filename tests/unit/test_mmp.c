/*
 * test_mmp.c - multi-mount protection (mmp.h): the MMP block's codec at
 * the kernel's offsets, and the claim a writable open makes, with a fake
 * sleep that counts the waits and can play another node writing the block
 * meanwhile.  Read-only opens leave the block alone; the close gives the
 * claim back; damage to the block and a block on metadata are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/crc.h"
#include "ext4fs/fs.h"
#include "ext4fs/io.h"
#include "ext4fs/mmp.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

/* The on-disk layout, spelled out here so the test does not share the module's. */
#define T_OFF_SEQ      4
#define T_OFF_TIME     8
#define T_OFF_NODE     0x10
#define T_OFF_DEV      0x50
#define T_OFF_INTERVAL 0x70
#define T_OFF_CSUM     0x3FC
#define T_SB_INCOMPAT  0x60
#define T_SB_INTERVAL  0x166
#define T_SB_MMP_BLOCK 0x168
#define T_SB_CSUM      0x3FC

static uint32_t ld32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void st32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* An mmp file system in memory: 1 KiB blocks, the MMP block at mmp_blk. */
struct mimg {
	struct rw_image img;
	uint32_t bs;
	uint64_t mmp_blk;
	uint32_t seed;
	int has_csum;
};

/* What the fake sleep saw and does: another node writing seq_to_write at wait number on_wait. */
struct sleeper {
	struct mimg *m;
	unsigned calls;
	unsigned seconds[4];
	unsigned on_wait;
	uint32_t seq_to_write;
};

static unsigned char *mmp_raw(struct mimg *m)
{
	return m->img.buf + m->mmp_blk * m->bs;
}

static void write_record(struct mimg *m, uint32_t seq, uint16_t interval)
{
	struct ext4fs_mmp rec = { .magic = EXT4FS_MMP_MAGIC, .seq = seq, .time = 1700000000,
				  .check_interval = interval };
	strcpy(rec.nodename, "othernode");
	strcpy(rec.bdevname, "/dev/other");
	ext4fs_mmp_encode(&rec, m->has_csum, m->seed, mmp_raw(m));
}

static void set_super(struct mimg *m, uint64_t mmp_blk, uint16_t interval)
{
	unsigned char *sb = m->img.buf + 1024;

	st32(sb + T_SB_INCOMPAT, ld32(sb + T_SB_INCOMPAT) | EXT4FS_FEATURE_INCOMPAT_MMP);
	sb[T_SB_INTERVAL] = (unsigned char)interval;
	sb[T_SB_INTERVAL + 1] = (unsigned char)(interval >> 8);
	for (int i = 0; i < 8; i++)
		sb[T_SB_MMP_BLOCK + i] = (unsigned char)(mmp_blk >> (8 * i));
	st32(sb + T_SB_CSUM, ext4fs_super_csum(sb));
}

/* Make the image, turn the mmp feature on by hand, and write a clean record. */
static void mimg_make(struct mimg *m, uint16_t interval)
{
	memset(m, 0, sizeof(*m));
	rw_image_open(&m->img, 4096, 1024, rw_tweak_1k);
	m->bs = 1024;
	m->seed = ext4fs_geom(m->img.fs)->csum_seed;
	m->has_csum = ext4fs_geom(m->img.fs)->has_metadata_csum;
	assert_true(m->has_csum);
	assert_int_equal(ext4fs_close_flush(m->img.fs), 0);
	m->img.fs = NULL;
	m->mmp_blk = 4000;      /* free in a fresh 4096-block file system: nothing else writes it */
	set_super(m, m->mmp_blk, interval);
	write_record(m, EXT4FS_MMP_SEQ_CLEAN, EXT4FS_MMP_MIN_CHECK_INTERVAL);
}

static void fake_sleep(void *ctx, unsigned seconds)
{
	struct sleeper *s = ctx;

	if (s->calls < 4)
		s->seconds[s->calls] = seconds;
	s->calls++;
	if (s->on_wait == s->calls)
		write_record(s->m, s->seq_to_write, EXT4FS_MMP_MIN_CHECK_INTERVAL);
}

static int open_fs(struct mimg *m, unsigned flags, struct sleeper *s, struct ext4fs_fs **out)
{
	struct ext4fs_open_opts opts = { .flags = flags, .mmp_sleep = fake_sleep, .mmp_sleep_ctx = s };
	struct ext4fs_io *io;
	char msg[256];

	assert_int_equal(ext4fs_io_open_memory(m->img.buf, m->img.size, 1, &io), 0);
	return ext4fs_open_io(io, &opts, out, msg, sizeof(msg));
}

static void mimg_free(struct mimg *m)
{
	rw_image_close(&m->img);
}

/* -- the codec ---------------------------------------------------------------- */

static void test_codec_layout(void **state)
{
	unsigned char raw[EXT4FS_MMP_SIZE];
	struct ext4fs_mmp in = { .magic = EXT4FS_MMP_MAGIC, .seq = 0x12345678, .time = 0x1122334455ULL,
				 .check_interval = 7 }, out;

	(void)state;
	memset(in.nodename, 'n', EXT4FS_MMP_NODENAME_LEN);     /* a full field: no NUL on disk */
	strcpy(in.bdevname, "/dev/sdz1");
	memset(raw, 0xAA, sizeof(raw));
	ext4fs_mmp_encode(&in, 1, 0xDEADBEEF, raw);
	assert_int_equal(ld32(raw), 0x004D4D50);
	assert_int_equal(ld32(raw + T_OFF_SEQ), 0x12345678);
	assert_int_equal(ld32(raw + T_OFF_TIME), 0x22334455);
	assert_int_equal(ld32(raw + T_OFF_TIME + 4), 0x11);
	assert_int_equal(raw[T_OFF_NODE + EXT4FS_MMP_NODENAME_LEN - 1], 'n');
	assert_memory_equal(raw + T_OFF_DEV, "/dev/sdz1", 10);
	assert_int_equal(raw[T_OFF_INTERVAL], 7);
	assert_int_equal(raw[0x200], 0);                        /* the padding is zeroed */
	assert_int_equal(ld32(raw + T_OFF_CSUM), ext4fs_mmp_csum(0xDEADBEEF, raw));
	ext4fs_mmp_decode(raw, &out);
	assert_int_equal(out.seq, in.seq);
	assert_true(out.time == in.time);
	assert_int_equal(strlen(out.nodename), EXT4FS_MMP_NODENAME_LEN);
	assert_string_equal(out.bdevname, "/dev/sdz1");
	assert_int_equal(out.check_interval, 7);
	assert_int_equal(out.checksum, ld32(raw + T_OFF_CSUM));
	/* The checksum covers everything before its field, and nothing after. */
	raw[T_OFF_CSUM - 1] ^= 1;
	assert_int_not_equal(ext4fs_mmp_csum(0xDEADBEEF, raw), out.checksum);
	ext4fs_mmp_encode(&in, 0, 0xDEADBEEF, raw);
	assert_int_equal(ld32(raw + T_OFF_CSUM), 0);
}

/* A record mke2fs 1.47 wrote (-O mmp,metadata_csum): our checksum is the bytes it stored. */
static void test_codec_known_csum(void **state)
{
	static const unsigned char uuid[16] = { 0xbe, 0x89, 0xe1, 0xaf, 0xde, 0x83, 0x49, 0x6d,
						0x83, 0x0f, 0x96, 0xf1, 0x4b, 0x27, 0x19, 0x5b };
	unsigned char raw[EXT4FS_MMP_SIZE] = { 0 };
	struct ext4fs_mmp m;

	(void)state;
	st32(raw, 0x004D4D50);
	st32(raw + T_OFF_SEQ, 0xFF4D4D50);
	st32(raw + T_OFF_TIME, 0x6B0C4723);
	memcpy(raw + T_OFF_NODE, "vm", 2);
	memcpy(raw + T_OFF_DEV, "a.img", 5);
	raw[T_OFF_INTERVAL] = 5;
	st32(raw + T_OFF_CSUM, 0xDFE1F732);
	ext4fs_mmp_decode(raw, &m);
	assert_int_equal(m.seq, EXT4FS_MMP_SEQ_CLEAN);
	assert_string_equal(m.nodename, "vm");
	assert_string_equal(m.bdevname, "a.img");
	assert_int_equal(ext4fs_mmp_csum(ext4fs_crc32c(0xFFFFFFFF, uuid, sizeof(uuid)), raw), 0xDFE1F732);
}

/* -- the claim ------------------------------------------------------------------ */

static void test_clean_claim_and_release(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;
	struct ext4fs_mmp rec;

	(void)state;
	mimg_make(&m, 1);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), 0);
	/* One wait on a clean block: 2 * max(1, 5) + 1. */
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.seconds[0], 11);
	ext4fs_mmp_decode(mmp_raw(&m), &rec);
	assert_int_equal(rec.seq, EXT4FS_MMP_SEQ_FSCK);
	assert_int_equal(rec.checksum, ext4fs_mmp_csum(m.seed, mmp_raw(&m)));
	assert_string_not_equal(rec.bdevname, "/dev/other");
	assert_int_equal(ext4fs_close_flush(fs), 0);
	ext4fs_mmp_decode(mmp_raw(&m), &rec);
	assert_int_equal(rec.seq, EXT4FS_MMP_SEQ_CLEAN);
	assert_int_equal(rec.checksum, ext4fs_mmp_csum(m.seed, mmp_raw(&m)));
	/* ext4fs_close() alone gives the claim back too. */
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), 0);
	ext4fs_close(fs);
	ext4fs_mmp_decode(mmp_raw(&m), &rec);
	assert_int_equal(rec.seq, EXT4FS_MMP_SEQ_CLEAN);
	mimg_free(&m);
}

/* A journal replay's handle claims the file system too, and gives it back at close. */
static void test_recovery_claims(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;

	(void)state;
	mimg_make(&m, 1);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RECOVERY, &s, &fs), 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(ld32(mmp_raw(&m) + T_OFF_SEQ), EXT4FS_MMP_SEQ_FSCK);
	ext4fs_close(fs);
	assert_int_equal(ld32(mmp_raw(&m) + T_OFF_SEQ), EXT4FS_MMP_SEQ_CLEAN);
	write_record(&m, EXT4FS_MMP_SEQ_FSCK, 5);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RECOVERY, &s, &fs), EXT4FS_E_MMP_FSCK_ON);
	mimg_free(&m);
}

static void test_read_only_untouched(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;
	unsigned char before[EXT4FS_MMP_SIZE];
	struct ext4fs_mmp rec;

	(void)state;
	mimg_make(&m, 1);
	write_record(&m, EXT4FS_MMP_SEQ_FSCK, 5);
	memcpy(before, mmp_raw(&m), sizeof(before));
	assert_int_equal(open_fs(&m, 0, &s, &fs), 0);
	assert_int_equal(ext4fs_mmp_read(fs, &rec), 0);
	assert_int_equal(rec.seq, EXT4FS_MMP_SEQ_FSCK);
	assert_string_equal(rec.nodename, "othernode");
	ext4fs_close(fs);
	assert_int_equal(s.calls, 0);
	assert_memory_equal(before, mmp_raw(&m), sizeof(before));
	mimg_free(&m);
}

static void test_fsck_and_unknown_refused(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;
	unsigned char before[EXT4FS_MMP_SIZE];

	(void)state;
	mimg_make(&m, 1);
	write_record(&m, EXT4FS_MMP_SEQ_FSCK, 5);
	memcpy(before, mmp_raw(&m), sizeof(before));
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_FSCK_ON);
	assert_null(fs);
	assert_memory_equal(before, mmp_raw(&m), sizeof(before));
	write_record(&m, 0xF0000000, 5);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_UNKNOWN_SEQ);
	assert_int_equal(s.calls, 0);
	assert_string_equal(ext4fs_strerror(EXT4FS_E_MMP_FSCK_ON), "MMP: e2fsck being run");
	mimg_free(&m);
}

/* An active sequence that stays put (a node that died): wait it out with the record's interval, then claim. */
static void test_active_stale_claimed(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;

	(void)state;
	mimg_make(&m, 1);
	write_record(&m, 42, 20);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), 0);
	assert_int_equal(s.calls, 2);
	assert_int_equal(s.seconds[0], 41);
	assert_int_equal(s.seconds[1], 41);
	ext4fs_close(fs);
	/* A long interval waits at most a minute beyond it. */
	write_record(&m, 42, 100);
	s.calls = 0;
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), 0);
	assert_int_equal(s.seconds[0], 160);
	ext4fs_close(fs);
	mimg_free(&m);
}

/* Another node updates the block while we wait: the file system is in use. */
static void test_active_moving_refused(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m, .on_wait = 1, .seq_to_write = 43 };
	struct ext4fs_fs *fs;

	(void)state;
	mimg_make(&m, 1);
	write_record(&m, 42, 5);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_FAILED);
	assert_int_equal(s.calls, 1);
	assert_int_equal(ld32(mmp_raw(&m) + T_OFF_SEQ), 43);
	mimg_free(&m);
}

/* Two claimants at once: the other writes its sequence over ours during our wait. */
static void test_claim_race_lost(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m, .on_wait = 1, .seq_to_write = 7 };
	struct ext4fs_fs *fs;

	(void)state;
	mimg_make(&m, 1);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_FAILED);
	assert_int_equal(ld32(mmp_raw(&m) + T_OFF_SEQ), 7);
	mimg_free(&m);
}

static void test_damaged_block(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;
	struct ext4fs_mmp rec;

	(void)state;
	mimg_make(&m, 1);
	mmp_raw(&m)[0] ^= 0xFF;
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_MAGIC);
	write_record(&m, EXT4FS_MMP_SEQ_CLEAN, 5);
	mmp_raw(&m)[T_OFF_CSUM] ^= 1;
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW | EXT4FS_OPEN_IGNORE_CSUM, &s, &fs), EXT4FS_E_MMP_CSUM);
	/* A checker's repair: a writable handle that skips the claim, and a fresh record. */
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW, .mmp_skip = 1 };
	struct ext4fs_io *io;
	char msg[256];
	assert_int_equal(ext4fs_io_open_memory(m.img.buf, m.img.size, 1, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &opts, &fs, msg, sizeof(msg)), 0);
	assert_int_equal(ext4fs_mmp_read(fs, &rec), EXT4FS_E_MMP_CSUM);
	assert_int_equal(ext4fs_mmp_reset(fs), 0);
	assert_int_equal(ext4fs_mmp_read(fs, &rec), 0);
	assert_int_equal(rec.seq, EXT4FS_MMP_SEQ_CLEAN);
	assert_int_equal(rec.check_interval, EXT4FS_MMP_MIN_CHECK_INTERVAL);
	assert_int_equal(ext4fs_close_flush(fs), 0);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), 0);
	ext4fs_close(fs);
	assert_int_equal(s.calls, 1);
	mimg_free(&m);
}

static void test_block_outside_or_on_metadata(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;
	struct ext4fs_mmp rec;

	(void)state;
	mimg_make(&m, 1);
	set_super(&m, 4096, 1);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_BAD_BLOCK);
	set_super(&m, 1, 1);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_BAD_BLOCK);
	/* Read-only, the range is all that is judged (as e2fsck reads it). */
	assert_int_equal(open_fs(&m, 0, &s, &fs), 0);
	assert_int_equal(ext4fs_mmp_read(fs, &rec), EXT4FS_E_MMP_BAD_BLOCK);
	uint64_t itable = ext4fs_group(fs, 0)->inode_table;
	uint64_t bbitmap = ext4fs_group(fs, 0)->block_bitmap;
	assert_true(ext4fs_mmp_block_is_metadata(fs, itable + 3));
	assert_true(ext4fs_mmp_block_is_metadata(fs, bbitmap));
	assert_true(ext4fs_mmp_block_is_metadata(fs, 2));      /* the descriptor table */
	assert_false(ext4fs_mmp_block_is_metadata(fs, 4000));
	ext4fs_close(fs);
	set_super(&m, itable + 3, 1);
	unsigned char before[1024];
	memcpy(before, m.img.buf + (itable + 3) * 1024, sizeof(before));
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), EXT4FS_E_MMP_BAD_BLOCK);
	assert_memory_equal(before, m.img.buf + (itable + 3) * 1024, sizeof(before));
	assert_int_equal(s.calls, 0);
	mimg_free(&m);
}

/* Someone else wrote the block while we held it: the close says so and does not declare it clean. */
static void test_change_while_open(void **state)
{
	struct mimg m;
	struct sleeper s = { .m = &m };
	struct ext4fs_fs *fs;

	(void)state;
	mimg_make(&m, 1);
	assert_int_equal(open_fs(&m, EXT4FS_OPEN_RW, &s, &fs), 0);
	write_record(&m, 99, 5);
	assert_int_equal(ext4fs_close_flush(fs), EXT4FS_E_MMP_CHANGE_ABORT);
	assert_int_equal(ld32(mmp_raw(&m) + T_OFF_SEQ), 99);
	mimg_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec_layout),
		cmocka_unit_test(test_codec_known_csum),
		cmocka_unit_test(test_clean_claim_and_release),
		cmocka_unit_test(test_recovery_claims),
		cmocka_unit_test(test_read_only_untouched),
		cmocka_unit_test(test_fsck_and_unknown_refused),
		cmocka_unit_test(test_active_stale_claimed),
		cmocka_unit_test(test_active_moving_refused),
		cmocka_unit_test(test_claim_race_lost),
		cmocka_unit_test(test_damaged_block),
		cmocka_unit_test(test_block_outside_or_on_metadata),
		cmocka_unit_test(test_change_while_open),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
