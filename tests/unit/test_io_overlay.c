/*
 * test_io_overlay.c - the overlay channel (io_overlay.h) over a read-only
 * memory channel: random writes and reads at any offset and length agree
 * with a model buffer, the channel below is never written, the last page
 * of an image that does not end on a page boundary, writes past the end,
 * and the table growing past its first size.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/errors.h"
#include "ext4fs/io.h"
#include "ext4fs/io_overlay.h"
#include "../lib/test_rng.h"

/* Not a whole number of pages, so the last page is short. */
#define SIZE (1024u * 1024u * 9u + 1536u)

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	return test_rng_next(&rng);
}

static void random_io_agrees_with_a_model(void **state)
{
	unsigned char *disk = malloc(SIZE), *orig = malloc(SIZE), *model = malloc(SIZE), *buf = malloc(65536);
	struct ext4fs_io *mem, *io;
	(void)state;

	assert_non_null(disk);
	assert_non_null(orig);
	assert_non_null(model);
	assert_non_null(buf);
	for (size_t i = 0; i < SIZE; i++)
		disk[i] = (unsigned char)(next() >> 11);
	memcpy(orig, disk, SIZE);
	memcpy(model, disk, SIZE);
	assert_int_equal(ext4fs_io_open_memory(disk, SIZE, 0, &mem), 0);
	assert_int_equal(ext4fs_io_overlay_wrap(mem, &io), 0);
	assert_true(ext4fs_io_is_overlay(io));
	assert_false(ext4fs_io_is_overlay(mem));
	assert_int_equal(io->size, SIZE);

	for (int round = 0; round < 20000; round++) {
		size_t len = 1 + (size_t)(next() % (round % 10 ? 9000 : 65536));
		uint64_t off = next() % (SIZE - len + 1);

		if (round % 50 == 0)
			off = SIZE - len;   /* the short last page */
		if (next() % 3 == 0) {
			for (size_t i = 0; i < len; i++)
				buf[i] = (unsigned char)next();
			assert_int_equal(ext4fs_io_write(io, off, buf, len), 0);
			memcpy(model + off, buf, len);
		} else {
			assert_int_equal(ext4fs_io_read(io, off, buf, len), 0);
			if (memcmp(buf, model + off, len))
				fail_msg("round %d: %zu bytes at %llu differ from the model", round, len,
					 (unsigned long long)off);
		}
	}
	for (uint64_t off = 0; off < SIZE; off += 65536) {
		size_t len = SIZE - off < 65536 ? (size_t)(SIZE - off) : 65536;
		assert_int_equal(ext4fs_io_read(io, off, buf, len), 0);
		assert_memory_equal(buf, model + off, len);
	}
	/* Most pages were written: the table grew many times past its first 1024 slots. */
	assert_true(ext4fs_io_overlay_bytes(io) > (uint64_t)SIZE / 2);
	assert_int_equal(ext4fs_io_flush(io), 0);
	assert_memory_equal(disk, orig, SIZE);
	ext4fs_io_close(io);
	free(disk);
	free(orig);
	free(model);
	free(buf);
}

static void writes_past_the_end_fail(void **state)
{
	static unsigned char disk[10000];
	unsigned char b[16] = { 1 };
	struct ext4fs_io *mem, *io;
	(void)state;

	memset(disk, 0xaa, sizeof(disk));
	assert_int_equal(ext4fs_io_open_memory(disk, sizeof(disk), 0, &mem), 0);
	assert_int_equal(ext4fs_io_overlay_wrap(mem, &io), 0);
	assert_int_equal(ext4fs_io_write(io, sizeof(disk) - 8, b, sizeof(b)), EXT4FS_E_OUT_OF_IMAGE);
	assert_int_equal(ext4fs_io_read(io, sizeof(disk) - 8, b, sizeof(b)), EXT4FS_E_OUT_OF_IMAGE);
	assert_int_equal(ext4fs_io_write(io, sizeof(disk) - 16, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_zeroout(io, 0, sizeof(disk)), 0);
	assert_int_equal(ext4fs_io_read(io, sizeof(disk) - 16, b, sizeof(b)), 0);
	assert_int_equal(b[0], 0);
	assert_int_equal(ext4fs_io_discard(io, 0, 4096), -EOPNOTSUPP);
	assert_int_equal(ext4fs_io_overlay_bytes(mem), 0);
	ext4fs_io_close(io);
	for (size_t i = 0; i < sizeof(disk); i++)
		assert_int_equal(disk[i], 0xaa);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_io_agrees_with_a_model),
		cmocka_unit_test(writes_past_the_end_fail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
