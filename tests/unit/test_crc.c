/* test_crc.c - crc32c and crc16 against published check values and real ext4 metadata. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/crc.h"

/* ---- helpers ---- */

/* One bit at a time, straight from the definition; the oracle for the fast paths. */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return crc;
}

static uint16_t crc16_bitwise(uint16_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int bit = 0; bit < 8; bit++)
			crc = (uint16_t)((crc & 1) ? (crc >> 1) ^ 0xA001u : crc >> 1);
	}
	return crc;
}

static uint32_t rng_next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
	assert_int_equal(strlen(hex), 2 * n);
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;

		for (int k = 0; k < 2; k++) {
			char c = hex[2 * i + k];

			v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
		}
		out[i] = (uint8_t)v;
	}
}

/*
 * Real metadata captured from images made by mke2fs 1.47.0; see the comment
 * above each vector for the command line.  Only the bytes are kept here.
 */

/*
 * Primary superblock of
 *   E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -O metadata_csum
 *     -U 6b1e2c3d-4f50-4a61-8b72-9c83d4e5f607
 *     -E hash_seed=0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0ff -b 1024 -g 2048 mc.img 8M
 * as runs of non-zero bytes; everything else is zero.  s_checksum (0x3FC)
 * is 0xe6d68084 and dumpe2fs reports "Checksum: 0xe6d68084".
 */
static const struct {
	unsigned offset;
	const char *hex;
} mc_super_runs[] = {
	{ 0x001, "0800000020000099010000e6160000f507000001" },
	{ 0x021, "08000000080000000200000000000000f153650000ffff53"
		 "ef01000100000000f15365" },
	{ 0x04c, "01000000000000000b000000000100003c000000c2020000"
		 "6b0400006b1e2c3d4f504a618b729c83d4e5f607" },
	{ 0x0ce, "ff" },
	{ 0x0e0, "08" },
	{ 0x0ec, "0f1e2d3c4b5a49788695a4b3c2d1e0ff010140000c" },
	{ 0x109, "f153650af3010004" },
	{ 0x11d, "0400000110" },
	{ 0x14e, "10" },
	{ 0x15c, "2000200001" },
	{ 0x174, "040100001601" },
	{ 0x248, "0c09" },
	{ 0x3fc, "8480d6e6" },
};

static void build_mc_super(uint8_t sb[1024])
{
	memset(sb, 0, 1024);
	for (size_t i = 0; i < sizeof(mc_super_runs) / sizeof(mc_super_runs[0]); i++) {
		size_t n = strlen(mc_super_runs[i].hex) / 2;

		hex_to_bytes(mc_super_runs[i].hex, sb + mc_super_runs[i].offset, n);
	}
}

/* Group 2's 64-byte descriptor from the same image; dumpe2fs: "csum 0x8d73". */
static const char mc_gd2_hex[] =
	"04010000080100000a020000000400020000010000000000"
	"545000000002738d00000000000000000000000000000000"
	"00000000000000001150000000000000";

/*
 * uninit_bg (crc16) descriptors of group 2 from
 *   mke2fs -q -F -t ext4 -O ^metadata_csum,uninit_bg
 *     -U 11223344-5566-4778-899a-abbccddeeff0 -b 1024 -g 2048 ub64.img 8M
 * (64bit, 64-byte descriptors; dumpe2fs "csum 0x0171") and
 *   mke2fs -q -F -t ext4 -O ^metadata_csum,^64bit,uninit_bg
 *     -U a0b1c2d3-e4f5-4607-8819-2a3b4c5d6e7f -b 1024 -g 2048 ub32.img 8M
 * (32-byte descriptors; dumpe2fs "csum 0xb1aa").
 */
static const char ub64_uuid_hex[] = "1122334455664778899aabbccddeeff0";
static const char ub64_gd2_hex[] =
	"04010000080100000a020000000400020000010000000000"
	"000000000002710100000000000000000000000000000000"
	"00000000000000000000000000000000";
static const char ub32_uuid_hex[] = "a0b1c2d3e4f5460788192a3b4c5d6e7f";
static const char ub32_gd2_hex[] =
	"84000000880000008a010000000400020000010000000000"
	"000000000002aab1";

/* The kernel's crc16 group descriptor rule (ext4_group_desc_csum, gdt_csum branch). */
static uint16_t gd_crc16(const uint8_t uuid[16], uint32_t group, const uint8_t *gd, size_t desc_size)
{
	uint8_t le_group[4] = { (uint8_t)group, (uint8_t)(group >> 8), (uint8_t)(group >> 16),
				(uint8_t)(group >> 24) };
	uint16_t crc = ext4fs_crc16(0xFFFF, uuid, 16);

	crc = ext4fs_crc16(crc, le_group, sizeof(le_group));
	crc = ext4fs_crc16(crc, gd, 0x1E);
	if (desc_size > 0x20)
		crc = ext4fs_crc16(crc, gd + 0x20, desc_size - 0x20);
	return crc;
}

/* ---- crc32c ---- */

static void crc32c__matches_the_standard_check_value(void **state)
{
	const char *check = "123456789";

	assert_int_equal(~ext4fs_crc32c(~0u, check, 9), 0xE3069283u);
	assert_int_equal(~ext4fs_crc32c_sw(~0u, check, 9), 0xE3069283u);
	/* Raw update: no inversion inside, so the register itself is the complement. */
	assert_int_equal(ext4fs_crc32c(~0u, check, 9), 0x1CF96D7Cu);
}

static void crc32c__returns_the_start_value_for_an_empty_buffer(void **state)
{
	assert_int_equal(ext4fs_crc32c(0x12345678u, NULL, 0), 0x12345678u);
	assert_int_equal(ext4fs_crc32c_sw(0x12345678u, NULL, 0), 0x12345678u);
}

static void crc32c__hw_and_sw_paths_agree_with_the_bitwise_definition_at_every_length_and_alignment(
	void **state)
{
	static uint8_t buf[300 + 16];
	uint32_t x = 0x9E3779B9u;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rng_next(&x);
	for (size_t align = 0; align < 8; align++) {
		for (size_t len = 0; len <= 300; len++) {
			uint32_t init = rng_next(&x);
			uint32_t want = crc32c_bitwise(init, buf + align, len);

			assert_int_equal(ext4fs_crc32c_sw(init, buf + align, len), want);
			assert_int_equal(ext4fs_crc32c(init, buf + align, len), want);
		}
	}
}

static void crc32c__can_be_computed_in_pieces(void **state)
{
	uint8_t buf[257];
	uint32_t x = 42;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rng_next(&x);
	uint32_t whole = ext4fs_crc32c(~0u, buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut += 13) {
		uint32_t c = ext4fs_crc32c(~0u, buf, cut);

		assert_int_equal(ext4fs_crc32c(c, buf + cut, sizeof(buf) - cut), whole);
		c = ext4fs_crc32c_sw(~0u, buf, cut);
		assert_int_equal(ext4fs_crc32c_sw(c, buf + cut, sizeof(buf) - cut), whole);
	}
}

static void crc32c__hw_availability_is_stable(void **state)
{
	int first = ext4fs_crc32c_hw_available();

	assert_true(first == 0 || first == 1);
	assert_int_equal(ext4fs_crc32c_hw_available(), first);
}

static void crc32c__reproduces_the_stored_checksum_of_a_mke2fs_superblock(void **state)
{
	uint8_t sb[1024];

	build_mc_super(sb);
	assert_int_equal(le16_at(sb + 0x38), 0xEF53);
	assert_int_equal(le32_at(sb + 0x3FC), 0xe6d68084u);
	assert_int_equal(ext4fs_crc32c(~0u, sb, 0x3FC), le32_at(sb + 0x3FC));
	assert_int_equal(ext4fs_crc32c_sw(~0u, sb, 0x3FC), le32_at(sb + 0x3FC));
}

static void crc32c__reproduces_a_metadata_csum_group_descriptor_checksum(void **state)
{
	uint8_t sb[1024], gd[64];
	const uint8_t le_group[4] = { 2, 0, 0, 0 };

	build_mc_super(sb);
	hex_to_bytes(mc_gd2_hex, gd, sizeof(gd));
	uint16_t stored = le16_at(gd + 0x1E);
	assert_int_equal(stored, 0x8d73);

	/* No csum_seed feature, so the seed is crc32c(~0, s_uuid). */
	uint32_t seed = ext4fs_crc32c(~0u, sb + 0x68, 16);
	gd[0x1E] = gd[0x1F] = 0;
	uint32_t c = ext4fs_crc32c(seed, le_group, sizeof(le_group));
	c = ext4fs_crc32c(c, gd, sizeof(gd));
	assert_int_equal(c & 0xFFFF, stored);
}

/* ---- crc16 ---- */

static void crc16__matches_the_published_arc_and_modbus_check_values(void **state)
{
	/* CRC-16/ARC starts at 0, CRC-16/MODBUS at 0xFFFF; neither inverts the result. */
	assert_int_equal(ext4fs_crc16(0, "123456789", 9), 0xBB3D);
	assert_int_equal(ext4fs_crc16(0xFFFF, "123456789", 9), 0x4B37);
	assert_int_equal(ext4fs_crc16(0xBEEF, NULL, 0), 0xBEEF);
}

static void crc16__agrees_with_the_bitwise_definition_for_every_byte_and_random_buffers(void **state)
{
	uint8_t buf[200];
	uint32_t x = 7;

	for (unsigned b = 0; b < 256; b++) {
		uint8_t byte = (uint8_t)b;

		assert_int_equal(ext4fs_crc16(0, &byte, 1), crc16_bitwise(0, &byte, 1));
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rng_next(&x);
	for (size_t len = 0; len <= sizeof(buf); len += 7) {
		uint16_t init = (uint16_t)rng_next(&x);

		assert_int_equal(ext4fs_crc16(init, buf, len), crc16_bitwise(init, buf, len));
	}
}

static void crc16__reproduces_a_64_byte_uninit_bg_group_descriptor_checksum(void **state)
{
	uint8_t uuid[16], gd[64];

	hex_to_bytes(ub64_uuid_hex, uuid, sizeof(uuid));
	hex_to_bytes(ub64_gd2_hex, gd, sizeof(gd));
	assert_int_equal(le16_at(gd + 0x1E), 0x0171);
	assert_int_equal(gd_crc16(uuid, 2, gd, sizeof(gd)), le16_at(gd + 0x1E));
	/* The group number is part of the checksum. */
	assert_int_not_equal(gd_crc16(uuid, 1, gd, sizeof(gd)), le16_at(gd + 0x1E));
}

static void crc16__reproduces_a_32_byte_uninit_bg_group_descriptor_checksum(void **state)
{
	uint8_t uuid[16], gd[32];

	hex_to_bytes(ub32_uuid_hex, uuid, sizeof(uuid));
	hex_to_bytes(ub32_gd2_hex, gd, sizeof(gd));
	assert_int_equal(le16_at(gd + 0x1E), 0xb1aa);
	assert_int_equal(gd_crc16(uuid, 2, gd, sizeof(gd)), le16_at(gd + 0x1E));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32c__matches_the_standard_check_value),
		cmocka_unit_test(crc32c__returns_the_start_value_for_an_empty_buffer),
		cmocka_unit_test(crc32c__hw_and_sw_paths_agree_with_the_bitwise_definition_at_every_length_and_alignment),
		cmocka_unit_test(crc32c__can_be_computed_in_pieces),
		cmocka_unit_test(crc32c__hw_availability_is_stable),
		cmocka_unit_test(crc32c__reproduces_the_stored_checksum_of_a_mke2fs_superblock),
		cmocka_unit_test(crc32c__reproduces_a_metadata_csum_group_descriptor_checksum),
		cmocka_unit_test(crc16__matches_the_published_arc_and_modbus_check_values),
		cmocka_unit_test(crc16__agrees_with_the_bitwise_definition_for_every_byte_and_random_buffers),
		cmocka_unit_test(crc16__reproduces_a_64_byte_uninit_bg_group_descriptor_checksum),
		cmocka_unit_test(crc16__reproduces_a_32_byte_uninit_bg_group_descriptor_checksum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
