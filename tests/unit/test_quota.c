/*
 * test_quota.c - quota files in the v2 format (quota.h): what the encoder
 * writes reads back the same (ids across many data blocks and tree
 * branches, the all-zero record of id 0), and hostile files are refused
 * with a reason, never read outside the buffer (each case edits one field
 * of a good file; random bytes must not crash the decoder).  As e2fsprogs,
 * a wrong magic is read (only a byte-swapped one is refused).
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
#include "ext4fs/quota.h"

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static struct ext4fs_quota_record rec(uint32_t id)
{
	return (struct ext4fs_quota_record){ .id = id, .space = (uint64_t)id * 4096 + 1024, .inodes = id % 7 + 1,
					     .block_hard = id % 3 ? 0 : 500, .block_soft = id % 5, .inode_hard = 9,
					     .inode_soft = id % 2, .block_grace_end = id, .inode_grace_end = 0 };
}

static int same_record(const struct ext4fs_quota_record *a, const struct ext4fs_quota_record *b)
{
	return a->id == b->id && a->space == b->space && a->inodes == b->inodes && a->block_hard == b->block_hard &&
	       a->block_soft == b->block_soft && a->inode_hard == b->inode_hard && a->inode_soft == b->inode_soft &&
	       a->block_grace_end == b->block_grace_end && a->inode_grace_end == b->inode_grace_end;
}

/* A file of n records with ids spread over every level of the tree. */
static void make_file(struct ext4fs_quota_file *q, size_t n, struct ext4fs_quota_record *recs)
{
	for (size_t i = 0; i < n; i++)
		recs[i] = rec((uint32_t)(i * 2654435761u % 4000000007u));
	/* Sort and make unique, as the encoder wants. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && recs[j].id < recs[j - 1].id; j--) {
			struct ext4fs_quota_record t = recs[j];
			recs[j] = recs[j - 1];
			recs[j - 1] = t;
		}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || recs[k - 1].id != recs[i].id)
			recs[k++] = recs[i];
	*q = (struct ext4fs_quota_file){ .block_grace = 100, .inode_grace = 200, .flags = 0, .recs = recs,
					 .count = k };
}

static void test_round_trip(void **state)
{
	(void)state;
	static struct ext4fs_quota_record recs[300];
	struct ext4fs_quota_file q, back;
	unsigned char *buf;
	size_t len;

	make_file(&q, 300, recs);
	/* id 0 with nothing at all: stored with an inode grace end of 1, read back as 0. */
	recs[0] = (struct ext4fs_quota_record){ .id = 0 };
	for (enum ext4fs_quota_type t = EXT4FS_QUOTA_USER; t <= EXT4FS_QUOTA_PROJECT; t++) {
		assert_int_equal(ext4fs_quota_encode(t, &q, &buf, &len), 0);
		assert_int_equal(len % 1024, 0);
		assert_int_equal(get32(buf + 8 + 12), len / 1024);
		assert_int_equal(ext4fs_quota_decode(buf, len, t, &back, NULL, 0), 0);
		assert_int_equal(back.count, q.count);
		assert_int_equal(back.block_grace, 100);
		assert_int_equal(back.inode_grace, 200);
		for (size_t i = 0; i < q.count; i++)
			assert_true(same_record(&back.recs[i], &q.recs[i]));
		ext4fs_quota_file_free(&back);
		/* As e2fsprogs, another type's magic reads (magic says so); the magic byte-swapped does not. */
		uint32_t magic = get32(buf);
		assert_int_equal(ext4fs_quota_decode(buf, len, (t + 1) % EXT4FS_QUOTA_TYPES, &back, NULL, 0), 0);
		assert_int_equal(back.magic, magic);
		ext4fs_quota_file_free(&back);
		for (int i = 0; i < 4; i++)
			buf[i] = (unsigned char)(magic >> (24 - 8 * i));
		char why[160] = "";
		assert_int_equal(ext4fs_quota_decode(buf, len, t, &back, why, sizeof(why)), EXT4FS_E_INODE_CORRUPT);
		assert_non_null(strstr(why, "big-endian"));
		ext4fs_quota_file_free(&back);
		free(buf);
	}
}

/* An empty file: header, info and an empty root; 2 blocks. */
static void test_empty(void **state)
{
	(void)state;
	struct ext4fs_quota_file q = { .block_grace = 604800, .inode_grace = 604800 }, back;
	unsigned char *buf;
	size_t len;

	assert_int_equal(ext4fs_quota_encode(EXT4FS_QUOTA_GROUP, &q, &buf, &len), 0);
	assert_int_equal(len, 2048);
	assert_int_equal(ext4fs_quota_decode(buf, len, EXT4FS_QUOTA_GROUP, &back, NULL, 0), 0);
	assert_int_equal(back.count, 0);
	ext4fs_quota_file_free(&back);
	free(buf);
}

static void test_encode_refuses_unsorted(void **state)
{
	(void)state;
	struct ext4fs_quota_record recs[2] = { rec(5), rec(5) };
	struct ext4fs_quota_file q = { .recs = recs, .count = 2 };
	unsigned char *buf;
	size_t len;

	assert_int_equal(ext4fs_quota_encode(EXT4FS_QUOTA_USER, &q, &buf, &len), EXT4FS_E_INVALID_ARG);
	assert_null(buf);
	recs[1].id = 4;
	assert_int_equal(ext4fs_quota_encode(EXT4FS_QUOTA_USER, &q, &buf, &len), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_quota_encode((enum ext4fs_quota_type)3, &q, &buf, &len), EXT4FS_E_INVALID_ARG);
}

/* The good file the hostile cases edit: ids 1 and 2 (blocks 2-4 tree, 5 data). */
static unsigned char *good(size_t *len)
{
	struct ext4fs_quota_record recs[2] = { rec(1), rec(2) };
	struct ext4fs_quota_file q = { .recs = recs, .count = 2 };
	unsigned char *buf;

	assert_int_equal(ext4fs_quota_encode(EXT4FS_QUOTA_USER, &q, &buf, len), 0);
	assert_int_equal(*len, 6 * 1024);
	assert_int_equal(get32(buf + 1024), 2);            /* root -> 2 */
	assert_int_equal(get32(buf + 4 * 1024 + 4), 5);    /* leaf level, id 1 -> data block 5 */
	return buf;
}

static void expect_corrupt(const unsigned char *buf, size_t len, const char *reason)
{
	struct ext4fs_quota_file back;
	char why[160] = "";

	assert_int_equal(ext4fs_quota_decode(buf, len, EXT4FS_QUOTA_USER, &back, why, sizeof(why)),
			 EXT4FS_E_INODE_CORRUPT);
	if (!strstr(why, reason))
		fail_msg("reason \"%s\" does not say \"%s\"", why, reason);
	ext4fs_quota_file_free(&back);
}

static void test_hostile(void **state)
{
	(void)state;
	size_t len;
	unsigned char *buf = good(&len);

	expect_corrupt(buf, 1023, "too short");
	put32(buf + 4, 0);
	expect_corrupt(buf, len, "version");
	put32(buf + 4, 1);
	put32(buf + 8 + 12, 7);                      /* more blocks than the file holds */
	expect_corrupt(buf, len, "the file holds");
	put32(buf + 8 + 12, 1);
	expect_corrupt(buf, len, "the file holds");
	put32(buf + 8 + 12, 6);
	put32(buf + 8 + 16, 6);                      /* the free block list's head past the count */
	expect_corrupt(buf, len, "free list head");
	put32(buf + 8 + 16, 0);
	put32(buf + 8 + 20, 9);                      /* the free entry list's head */
	expect_corrupt(buf, len, "free list head");
	put32(buf + 8 + 20, 5);
	put32(buf + 1024 + 4 * 9, 6);                /* a reference past the info's count */
	expect_corrupt(buf, len, "outside");
	put32(buf + 1024 + 4 * 9, 1);                /* to the root */
	expect_corrupt(buf, len, "outside");
	put32(buf + 1024 + 4 * 9, 2);                /* a tree block twice */
	expect_corrupt(buf, len, "already a tree block");
	put32(buf + 1024 + 4 * 9, 0);
	put32(buf + 4 * 1024 + 4 * 9, 3);            /* a tree block read as data, as e2fsprogs reads it: no entries */
	struct ext4fs_quota_file back;
	assert_int_equal(ext4fs_quota_decode(buf, len, EXT4FS_QUOTA_USER, &back, NULL, 0), 0);
	assert_int_equal(back.count, 2);
	ext4fs_quota_file_free(&back);
	put32(buf + 4 * 1024 + 4 * 9, 0);
	put32(buf + 5 * 1024 + 16 + 72, 1);          /* the second entry's id made 1 too */
	expect_corrupt(buf, len, "two records");
	free(buf);
}

/* Random bytes under a good header: refused or read, within the buffer (ASan/valgrind judge). */
static void test_random(void **state)
{
	(void)state;
	size_t len;
	unsigned char *base = good(&len);
	unsigned char *buf = malloc(len);
	unsigned seed = 12345;

	assert_non_null(buf);
	for (int round = 0; round < 2000; round++) {
		memcpy(buf, base, len);
		int edits = 1 + round % 16;
		for (int e = 0; e < edits; e++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = 8 + (seed >> 8) % (len - 8);
			seed = seed * 1103515245u + 12345u;
			buf[at] = (unsigned char)(seed >> 16);
		}
		struct ext4fs_quota_file back;
		int err = ext4fs_quota_decode(buf, len, EXT4FS_QUOTA_USER, &back, NULL, 0);
		assert_true(err == 0 || err == EXT4FS_E_INODE_CORRUPT);
		for (size_t i = 1; !err && i < back.count; i++)
			assert_true(back.recs[i].id > back.recs[i - 1].id);
		ext4fs_quota_file_free(&back);
	}
	free(buf);
	free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_encode_refuses_unsorted),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
