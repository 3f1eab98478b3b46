/* test_super.c - superblock decode/encode round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/super.h"
#include "ext4fs/errors.h"

static void super_decode__reads_little_endian_fields_at_their_offsets(void **state)
{
	unsigned char disk[EXT4FS_SUPER_SIZE] = { 0 };
	struct ext4fs_super sb;

	disk[0x38] = 0x53; disk[0x39] = 0xEF;                 /* s_magic */
	disk[0x04] = 0x00; disk[0x05] = 0x00; disk[0x06] = 0x01; /* s_blocks_count_lo = 0x10000 */
	disk[0x168] = 0x01; disk[0x16F] = 0x80;                /* s_mmp_block */
	disk[0x68] = 0xAA; disk[0x77] = 0xBB;                  /* s_uuid */
	disk[0xEC + 4] = 0x78; disk[0xEC + 7] = 0x12;           /* s_hash_seed[1] */
	ext4fs_super_decode(&sb, disk);
	assert_int_equal(sb.s_magic, EXT4FS_SUPER_MAGIC);
	assert_int_equal(sb.s_blocks_count_lo, 0x10000);
	assert_true(sb.s_mmp_block == 0x8000000000000001ULL);
	assert_int_equal(sb.s_uuid[0], 0xAA);
	assert_int_equal(sb.s_uuid[15], 0xBB);
	assert_int_equal(sb.s_hash_seed[1], 0x12000078);
}

static void super_encode__round_trips_every_byte_of_a_random_block(void **state)
{
	unsigned char disk[EXT4FS_SUPER_SIZE], again[EXT4FS_SUPER_SIZE];
	struct ext4fs_super sb;
	uint32_t x = 12345;

	for (size_t i = 0; i < sizeof(disk); i++) {
		x = x * 1103515245u + 12345u;
		disk[i] = (unsigned char)(x >> 16);
	}
	memcpy(again, disk, sizeof(disk));
	ext4fs_super_decode(&sb, disk);
	memset(again, 0, sizeof(again));
	ext4fs_super_encode(&sb, again);
	/* Every byte that belongs to a field must come back; padding stays zero. */
	size_t n;
	const struct ext4fs_field *f = ext4fs_super_fields(&n);
	for (size_t i = 0; i < n; i++)
		assert_memory_equal(disk + f[i].disk_offset, again + f[i].disk_offset,
				    (size_t)f[i].size * f[i].count);
}

static void super_fields__are_sorted_and_do_not_overlap(void **state)
{
	size_t n;
	const struct ext4fs_field *f = ext4fs_super_fields(&n);
	assert_true(n > 90);
	for (size_t i = 1; i < n; i++)
		assert_true(f[i - 1].disk_offset + f[i - 1].size * f[i - 1].count <= f[i].disk_offset);
	assert_int_equal(f[n - 1].disk_offset, 0x3FC);
}

static void strerror__names_library_codes_and_errnos(void **state)
{
	assert_string_equal(ext4fs_strerror(EXT4FS_E_BAD_MAGIC), "Bad magic number in super-block");
	assert_true(ext4fs_is_library_error(EXT4FS_E_UNKNOWN_HASH));
	assert_false(ext4fs_is_library_error(-5));
	assert_string_equal(ext4fs_strerror(-2), "No such file or directory");
	assert_string_equal(ext4fs_strerror(12345678), "Unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(super_decode__reads_little_endian_fields_at_their_offsets),
		cmocka_unit_test(super_encode__round_trips_every_byte_of_a_random_block),
		cmocka_unit_test(super_fields__are_sorted_and_do_not_overlap),
		cmocka_unit_test(strerror__names_library_codes_and_errnos),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
