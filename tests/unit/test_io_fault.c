/*
 * test_io_fault.c - the fault-injecting channel (io_fault.h) over a memory
 * channel: fail, stop, tear, the cache lost whole or in part, flush
 * triggers, counts and the spec parser.
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
#include "ext4fs/io.h"
#include "ext4fs/io_fault.h"

#define SIZE 8192

static unsigned char disk[SIZE];

static struct ext4fs_io *wrap(const char *text)
{
	struct ext4fs_io_fault_spec spec;
	struct ext4fs_io *mem, *io;
	char buf[128];

	memset(disk, 0, sizeof(disk));
	snprintf(buf, sizeof(buf), "%s", text);
	assert_int_equal(ext4fs_io_fault_parse(buf, &spec), 0);
	assert_int_equal(ext4fs_io_open_memory(disk, sizeof(disk), 1, &mem), 0);
	assert_int_equal(ext4fs_io_fault_wrap(mem, &spec, &io), 0);
	return io;
}

static void fill(unsigned char *b, size_t n, unsigned char v)
{
	memset(b, v, n);
}

static int all(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static void fail_fails_once(void **state)
{
	unsigned char b[1024];
	struct ext4fs_io_fault_counts c;
	struct ext4fs_io *io = wrap("write=2,mode=fail");
	(void)state;

	fill(b, sizeof(b), 1);
	assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_write(io, 1024, b, sizeof(b)), -EIO);
	assert_int_equal(ext4fs_io_write(io, 2048, b, sizeof(b)), 0);
	assert_true(all(disk, 1024, 1));
	assert_true(all(disk + 1024, 1024, 0));
	assert_true(all(disk + 2048, 1024, 1));
	ext4fs_io_fault_counts(io, &c);
	assert_int_equal(c.writes, 3);
	assert_true(c.triggered);
	ext4fs_io_close(io);
}

static void stop_drops_the_rest(void **state)
{
	unsigned char b[1024], r[1024];
	struct ext4fs_io *io = wrap("write=2");
	(void)state;

	fill(b, sizeof(b), 2);
	assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_write(io, 1024, b, sizeof(b)), -EIO);
	assert_int_equal(ext4fs_io_write(io, 2048, b, sizeof(b)), -EIO);
	assert_int_equal(ext4fs_io_zeroout(io, 0, 1024), -EIO);
	assert_int_equal(ext4fs_io_flush(io), -EIO);
	assert_int_equal(ext4fs_io_read(io, 0, r, sizeof(r)), 0);   /* reads still work */
	assert_true(all(r, 1024, 2));
	assert_true(all(disk + 1024, 2048, 0));
	ext4fs_io_close(io);
}

static void tear_lands_a_prefix(void **state)
{
	unsigned char b[4096];
	struct ext4fs_io *io = wrap("write=1,mode=tear,tear=1536");
	(void)state;

	fill(b, sizeof(b), 3);
	assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), -EIO);
	assert_true(all(disk, 1536, 3));
	assert_true(all(disk + 1536, 4096 - 1536, 0));
	assert_int_equal(ext4fs_io_write(io, 4096, b, 1024), -EIO);
	ext4fs_io_close(io);

	io = wrap("write=1,mode=tear");     /* default: half, on a 512-byte boundary */
	assert_int_equal(ext4fs_io_write(io, 0, b, 3000), -EIO);
	assert_true(all(disk, 1024, 3));
	assert_true(all(disk + 1024, 2048, 0));
	ext4fs_io_close(io);

	io = wrap("write=1,mode=tear,align=2048");
	assert_int_equal(ext4fs_io_write(io, 0, b, 4096), -EIO);
	assert_true(all(disk, 2048, 3));
	assert_true(all(disk + 2048, 2048, 0));
	ext4fs_io_close(io);
}

static void lose_all_goes_back_to_the_flush(void **state)
{
	unsigned char b[1024];
	struct ext4fs_io *io = wrap("write=4,lose=all");
	(void)state;

	fill(b, sizeof(b), 4);
	assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_flush(io), 0);
	fill(b, sizeof(b), 5);
	assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_write(io, 1024, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_write(io, 2048, b, sizeof(b)), -EIO);
	assert_true(all(disk, 1024, 4));          /* flushed: kept */
	assert_true(all(disk + 1024, 2048, 0));   /* not flushed: lost */
	ext4fs_io_close(io);
}

/* A subset survives: every sector holds its flush-time or one of its written values, and seeds differ. */
static void lose_some_keeps_a_subset(void **state)
{
	unsigned char b[512];
	int kept_total = 0, patterns[4] = { 0 };
	(void)state;

	for (int seed = 1; seed <= 4; seed++) {
		char text[64];
		struct ext4fs_io *io;
		int kept = 0;

		snprintf(text, sizeof(text), "write=17,lose=%d", seed);
		io = wrap(text);
		for (int i = 0; i < 16; i++) {
			fill(b, sizeof(b), (unsigned char)(i + 1));
			assert_int_equal(ext4fs_io_write(io, (uint64_t)i * 512, b, sizeof(b)), 0);
		}
		assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), -EIO);
		for (int i = 0; i < 16; i++) {
			if (all(disk + i * 512, 512, (unsigned char)(i + 1))) {
				kept++;
				patterns[seed - 1] |= 1 << (i % 16);
			} else {
				assert_true(all(disk + i * 512, 512, 0));
			}
		}
		assert_true(kept > 0 && kept < 16);
		kept_total += kept;
		ext4fs_io_close(io);
	}
	assert_true(patterns[0] != patterns[1] || patterns[1] != patterns[2] || patterns[2] != patterns[3]);
	(void)kept_total;
}

/* Overlapping writes: a sector ends with the last surviving write to it. */
static void lose_some_keeps_the_order(void **state)
{
	unsigned char b[512];
	(void)state;

	for (int seed = 1; seed <= 20; seed++) {
		char text[64];
		struct ext4fs_io *io;

		snprintf(text, sizeof(text), "write=5,lose=%d", seed);
		io = wrap(text);
		for (int i = 1; i <= 4; i++) {
			fill(b, sizeof(b), (unsigned char)i);
			assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), 0);
		}
		assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), -EIO);
		unsigned char v = disk[0];
		assert_true(v <= 4);
		assert_true(all(disk, 512, v));
		ext4fs_io_close(io);
	}
}

static void flush_trigger(void **state)
{
	unsigned char b[1024];
	struct ext4fs_io_fault_counts c;
	struct ext4fs_io *io = wrap("flush=2,lose=all");
	(void)state;

	fill(b, sizeof(b), 6);
	assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_flush(io), 0);
	assert_int_equal(ext4fs_io_write(io, 1024, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_flush(io), -EIO);
	assert_true(all(disk, 1024, 6));
	assert_true(all(disk + 1024, 1024, 0));
	assert_int_equal(ext4fs_io_write(io, 2048, b, sizeof(b)), -EIO);
	ext4fs_io_fault_counts(io, &c);
	assert_int_equal(c.writes, 2);
	assert_int_equal(c.flushes, 2);
	ext4fs_io_close(io);
}

static void counts_go_to_a_file(void **state)
{
	char path[] = "/tmp/test_io_fault_XXXXXX", spec[128], line[128] = "";
	unsigned char b[512] = { 0 };
	struct ext4fs_io *io;
	FILE *f;
	int fd = mkstemp(path);
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	snprintf(spec, sizeof(spec), "count=%s", path);
	io = wrap(spec);
	assert_int_equal(ext4fs_io_write(io, 0, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_zeroout(io, 512, 512), 0);
	assert_int_equal(ext4fs_io_flush(io), 0);
	ext4fs_io_close(io);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	assert_string_equal(line, "writes=2 flushes=1 triggered=0\n");
}

static void readbad_fails_every_read_of_the_byte(void **state)
{
	unsigned char b[1024];
	struct ext4fs_io *io = wrap("readbad=5000");
	(void)state;

	assert_int_equal(ext4fs_io_read(io, 4096, b, sizeof(b)), -EIO);
	assert_int_equal(ext4fs_io_read(io, 4096, b, sizeof(b)), -EIO);
	assert_int_equal(ext4fs_io_read(io, 5000, b, 1), -EIO);
	assert_int_equal(ext4fs_io_read(io, 3072, b, sizeof(b)), 0);
	assert_int_equal(ext4fs_io_read(io, 5001, b, 100), 0);
	fill(b, sizeof(b), 7);
	assert_int_equal(ext4fs_io_write(io, 4096, b, sizeof(b)), 0);
	assert_true(all(disk + 4096, 1024, 7));
	ext4fs_io_close(io);
}

static void bad_specs(void **state)
{
	static const char *bad[] = { "write", "write=0", "write=-1", "write=1x", "write=1,flush=2", "mode=kill",
				     "lose=maybe", "tear=", "colour=red", "count=",
				     "readbad=", "readbad=x" };
	struct ext4fs_io_fault_spec spec;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		assert_int_equal(ext4fs_io_fault_parse(buf, &spec), EXT4FS_E_INVALID_ARG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fail_fails_once),
		cmocka_unit_test(stop_drops_the_rest),
		cmocka_unit_test(tear_lands_a_prefix),
		cmocka_unit_test(lose_all_goes_back_to_the_flush),
		cmocka_unit_test(lose_some_keeps_a_subset),
		cmocka_unit_test(lose_some_keeps_the_order),
		cmocka_unit_test(flush_trigger),
		cmocka_unit_test(counts_go_to_a_file),
		cmocka_unit_test(readbad_fails_every_read_of_the_byte),
		cmocka_unit_test(bad_specs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
