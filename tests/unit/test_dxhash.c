/* test_dxhash.c - htree name hashes against debugfs and the SipHash reference vectors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/dxhash.h"
#include "ext4fs/errors.h"
#include "ext4fs/super.h"

#define NAME_MAX_LEN 255

/* ---- names ---- */

enum { NAME_COUNT = 12 };

static struct {
	const char *s;
	size_t len;
} names[NAME_COUNT];

static char long_ascii[NAME_MAX_LEN], long_mixed[NAME_MAX_LEN], high_47[47];

/*
 * The names hashed below.  Fixed strings cover the empty name, one byte,
 * the 16- and 32-byte block boundaries of tea and half_md4, and bytes above
 * 0x7f (which is where the signed and unsigned variants part ways); the
 * generated ones are full-length names.
 */
static int names_setup(void **state)
{
	static const struct {
		const char *s;
		size_t len;
	} fixed[] = {
		{ "", 0 },
		{ "a", 1 },
		{ "abc", 3 },
		{ "lost+found", 10 },
		{ "0123456789abcdef", 16 },
		{ "0123456789abcdef0123456789abcdef", 32 },
		{ "0123456789abcdef0123456789abcdefg", 33 },
		{ "caf\xc3\xa9", 5 },
		{ "\x80\xff\x7f\xfe", 4 },
	};
	size_t n = sizeof(fixed) / sizeof(fixed[0]);

	for (size_t i = 0; i < n; i++) {
		names[i].s = fixed[i].s;
		names[i].len = fixed[i].len;
	}
	for (unsigned i = 0; i < NAME_MAX_LEN; i++) {
		long_ascii[i] = (char)('a' + i % 26);
		long_mixed[i] = (char)(i % 3 == 0 ? 'A' + i % 26 : 0x80 + (i * 13) % 127);
	}
	for (unsigned i = 0; i < sizeof(high_47); i++)
		high_47[i] = (char)(0x80 + (i * 5) % 128);
	names[n].s = long_ascii;
	names[n++].len = sizeof(long_ascii);
	names[n].s = long_mixed;
	names[n++].len = sizeof(long_mixed);
	names[n].s = high_47;
	names[n++].len = sizeof(high_47);
	assert_int_equal(n, NAME_COUNT);
	return 0;
}

/* ---- seeds ---- */

/*
 * Seed 0 is "none" (the default seed); seed 1 is the UUID
 * 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0ff, i.e. those 16 bytes read as four
 * little-endian words, which is how s_hash_seed sits on disk.
 */
static const uint32_t seeds[2][4] = {
	{ 0, 0, 0, 0 },
	{ 0x3c2d1e0f, 0x78495a4b, 0xb3a49586, 0xffe0d1c2 },
};

/*
 * Expected { hash, minor_hash } for versions 0..5, from debugfs 1.47.0:
 *   debugfs -R 'dx_hash -h <version> [-s 0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0ff] <name>' img
 */
static const struct {
	int name;
	int seed;
	uint32_t want[6][2];
} debugfs_vectors[] = {
	{ 0, 0, { { 0x2547fc5a, 0x00000000 }, { 0xefcdab88, 0x98badcfe }, { 0x67452300, 0xefcdab89 }, { 0x2547fc5a, 0x00000000 }, { 0xefcdab88, 0x98badcfe }, { 0x67452300, 0xefcdab89 } } },
	{ 0, 1, { { 0x2547fc5a, 0x00000000 }, { 0x78495a4a, 0xb3a49586 }, { 0x3c2d1e0e, 0x78495a4b }, { 0x2547fc5a, 0x00000000 }, { 0x78495a4a, 0xb3a49586 }, { 0x3c2d1e0e, 0x78495a4b } } },
	{ 1, 0, { { 0xe74b53e2, 0x00000000 }, { 0xd5fa7d7a, 0xacb48187 }, { 0x6d0ea4c0, 0xc18922df }, { 0xe74b53e2, 0x00000000 }, { 0xd5fa7d7a, 0xacb48187 }, { 0x6d0ea4c0, 0xc18922df } } },
	{ 1, 1, { { 0xe74b53e2, 0x00000000 }, { 0x17646f10, 0xe06f57d2 }, { 0x1141301c, 0x7567055c }, { 0xe74b53e2, 0x00000000 }, { 0x17646f10, 0xe06f57d2 }, { 0x1141301c, 0x7567055c } } },
	{ 2, 0, { { 0x75afd992, 0x00000000 }, { 0xd196a868, 0xc420eb28 }, { 0xb1435ec4, 0x3f7eaa0e }, { 0x75afd992, 0x00000000 }, { 0xd196a868, 0xc420eb28 }, { 0xb1435ec4, 0x3f7eaa0e } } },
	{ 2, 1, { { 0x75afd992, 0x00000000 }, { 0x65be11a6, 0x4cce9c6d }, { 0x0ca047fe, 0x01f43ad1 }, { 0x75afd992, 0x00000000 }, { 0x65be11a6, 0x4cce9c6d }, { 0x0ca047fe, 0x01f43ad1 } } },
	{ 3, 0, { { 0x5e2aba24, 0x00000000 }, { 0x591de422, 0x6ffc56e0 }, { 0x2dbf9e80, 0xbfebee4f }, { 0x5e2aba24, 0x00000000 }, { 0x591de422, 0x6ffc56e0 }, { 0x2dbf9e80, 0xbfebee4f } } },
	{ 3, 1, { { 0x5e2aba24, 0x00000000 }, { 0x48cbc07e, 0x29259760 }, { 0xdb4a5dd0, 0xfc068437 }, { 0x5e2aba24, 0x00000000 }, { 0x48cbc07e, 0x29259760 }, { 0xdb4a5dd0, 0xfc068437 } } },
	{ 4, 0, { { 0x415c16fe, 0x00000000 }, { 0x8cb502b6, 0x5acf4f33 }, { 0x5a0788b2, 0xefa4e711 }, { 0x415c16fe, 0x00000000 }, { 0x8cb502b6, 0x5acf4f33 }, { 0x5a0788b2, 0xefa4e711 } } },
	{ 4, 1, { { 0x415c16fe, 0x00000000 }, { 0x110dcb14, 0x06520787 }, { 0x163e0aa0, 0x41008bf4 }, { 0x415c16fe, 0x00000000 }, { 0x110dcb14, 0x06520787 }, { 0x163e0aa0, 0x41008bf4 } } },
	{ 5, 0, { { 0x6d4a15ee, 0x00000000 }, { 0x36184620, 0xc959df59 }, { 0xcbe95e3c, 0x17627589 }, { 0x6d4a15ee, 0x00000000 }, { 0x36184620, 0xc959df59 }, { 0xcbe95e3c, 0x17627589 } } },
	{ 5, 1, { { 0x6d4a15ee, 0x00000000 }, { 0x18d9768a, 0xbd3d4b3b }, { 0x6ae1e934, 0x5aea2112 }, { 0x6d4a15ee, 0x00000000 }, { 0x18d9768a, 0xbd3d4b3b }, { 0x6ae1e934, 0x5aea2112 } } },
	{ 6, 0, { { 0x7fdcadba, 0x00000000 }, { 0xe457320e, 0x9be2ea43 }, { 0x20d9a1bc, 0x2ae8e02b }, { 0x7fdcadba, 0x00000000 }, { 0xe457320e, 0x9be2ea43 }, { 0x20d9a1bc, 0x2ae8e02b } } },
	{ 6, 1, { { 0x7fdcadba, 0x00000000 }, { 0x247faae0, 0x36e7866f }, { 0x65e59d0e, 0x51d0efb3 }, { 0x7fdcadba, 0x00000000 }, { 0x247faae0, 0x36e7866f }, { 0x65e59d0e, 0x51d0efb3 } } },
	{ 7, 0, { { 0x96ca5a2c, 0x00000000 }, { 0xfb9c5e5c, 0x0573e8b8 }, { 0x105842ea, 0xfb9165ca }, { 0x6dde4230, 0x00000000 }, { 0x9d72aed6, 0xf6138c6a }, { 0x6621f032, 0xf86699c6 } } },
	{ 7, 1, { { 0x96ca5a2c, 0x00000000 }, { 0xdcc8ec9c, 0xec510701 }, { 0x954fd9b2, 0x9d7938f8 }, { 0x6dde4230, 0x00000000 }, { 0xe611bc9c, 0x735cc803 }, { 0xccba3a74, 0xb1a65865 } } },
	{ 8, 0, { { 0x43216d76, 0x00000000 }, { 0x9ef01734, 0xc96343b3 }, { 0x2245590a, 0x09cda2c9 }, { 0xfca56d90, 0x00000000 }, { 0xfde1032c, 0x792a8132 }, { 0xf08d0bbe, 0xb5d08c4a } } },
	{ 8, 1, { { 0x43216d76, 0x00000000 }, { 0x37e20080, 0xcbaed906 }, { 0x9e85a4fe, 0x63b1a96f }, { 0xfca56d90, 0x00000000 }, { 0x6cf66ce6, 0xcde77910 }, { 0x8b1756be, 0xd46a0b36 } } },
	{ 9, 0, { { 0x6729895e, 0x00000000 }, { 0xdecbfdee, 0xe3c08226 }, { 0xbb476820, 0xe990b17f }, { 0x6729895e, 0x00000000 }, { 0xdecbfdee, 0xe3c08226 }, { 0xbb476820, 0xe990b17f } } },
	{ 9, 1, { { 0x6729895e, 0x00000000 }, { 0x1005f3de, 0x2653c473 }, { 0x9284b52e, 0xe87f25ff }, { 0x6729895e, 0x00000000 }, { 0x1005f3de, 0x2653c473 }, { 0x9284b52e, 0xe87f25ff } } },
	{ 10, 0, { { 0x110ef7ea, 0x00000000 }, { 0x232a57da, 0x0f24a65d }, { 0x29f3af56, 0xdfd2525e }, { 0x9ad1ca32, 0x00000000 }, { 0x405d8b2e, 0x28834bbb }, { 0x9668588e, 0x209435d4 } } },
	{ 10, 1, { { 0x110ef7ea, 0x00000000 }, { 0x341c6008, 0x12f92930 }, { 0x4c4bbb88, 0xa2d903b2 }, { 0x9ad1ca32, 0x00000000 }, { 0xc4d27c88, 0x7b344e09 }, { 0x75f1f798, 0x14c1e485 } } },
	{ 11, 0, { { 0xb2687d38, 0x00000000 }, { 0x84584cfa, 0xa064cc44 }, { 0xd2216296, 0x6732b01b }, { 0x8e90a4ce, 0x00000000 }, { 0xd864937a, 0x3632ad10 }, { 0x9432450c, 0x051c897a } } },
	{ 11, 1, { { 0xb2687d38, 0x00000000 }, { 0xa91fffee, 0xdb72b2ff }, { 0x1009ce16, 0x7756ae03 }, { 0x8e90a4ce, 0x00000000 }, { 0xff94cf22, 0x0cf2b5cc }, { 0x54ac182c, 0xc7596e5a } } },
};

static void dx_hash__matches_debugfs_for_every_name_version_and_seed(void **state)
{
	for (size_t i = 0; i < sizeof(debugfs_vectors) / sizeof(debugfs_vectors[0]); i++) {
		const char *name = names[debugfs_vectors[i].name].s;
		size_t len = names[debugfs_vectors[i].name].len;
		const uint32_t *seed = debugfs_vectors[i].seed ? seeds[debugfs_vectors[i].seed] : NULL;

		for (int v = 0; v < 6; v++) {
			uint32_t hash = 1, minor = 1;

			assert_int_equal(ext4fs_dx_hash(v, name, len, seed, &hash, &minor), 0);
			if (hash != debugfs_vectors[i].want[v][0] || minor != debugfs_vectors[i].want[v][1])
				print_error("name %d seed %d version %d: got %08x/%08x\n",
					    debugfs_vectors[i].name, debugfs_vectors[i].seed, v, hash, minor);
			assert_int_equal(hash, debugfs_vectors[i].want[v][0]);
			assert_int_equal(minor, debugfs_vectors[i].want[v][1]);
		}
	}
}

static void dx_hash__treats_an_all_zero_seed_like_no_seed(void **state)
{
	for (int n = 0; n < NAME_COUNT; n++) {
		for (int v = 0; v < 6; v++) {
			uint32_t h1, m1, h2, m2;

			assert_int_equal(ext4fs_dx_hash(v, names[n].s, names[n].len, NULL, &h1, &m1), 0);
			assert_int_equal(ext4fs_dx_hash(v, names[n].s, names[n].len, seeds[0], &h2, &m2), 0);
			assert_int_equal(h1, h2);
			assert_int_equal(m1, m2);
		}
	}
}

static void dx_hash__always_clears_the_low_bit_and_accepts_a_null_minor_hash(void **state)
{
	for (int n = 0; n < NAME_COUNT; n++) {
		for (int v = 0; v <= EXT4FS_HASH_SIPHASH; v++) {
			uint32_t h;

			assert_int_equal(ext4fs_dx_hash(v, names[n].s, names[n].len, seeds[1], &h, NULL), 0);
			assert_int_equal(h & 1, 0);
		}
	}
}

/*
 * 0xFFFFFFFE is the htree end-of-directory cookie (EXT4_HTREE_EOF_32BIT << 1),
 * so the kernel turns that hash into 0xFFFFFFFC.  With the empty name tea
 * returns seed[0] and half_md4 returns seed[1], which makes the case easy to
 * reach; debugfs 1.47.0 prints the unmapped 0xfffffffe for both:
 *   dx_hash -h 2 -s ffffffff-1111-2222-3333-444444444444 ""  -> 0xfffffffe (minor 0x22221111)
 *   dx_hash -h 1 -s 01020304-feff-ffff-3333-444444444444 ""  -> 0xfffffffe (minor 0x44443333)
 */
static void dx_hash__moves_a_hash_off_the_end_of_directory_cookie(void **state)
{
	const uint32_t tea_seed[4] = { 0xffffffff, 0x22221111, 0x44443333, 0x44444444 };
	const uint32_t md4_seed[4] = { 0x04030201, 0xfffffffe, 0x44443333, 0x44444444 };
	uint32_t h, m;

	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_TEA, "", 0, tea_seed, &h, &m), 0);
	assert_int_equal(h, 0xFFFFFFFCu);
	assert_int_equal(m, 0x22221111u);
	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_HALF_MD4, "", 0, md4_seed, &h, &m), 0);
	assert_int_equal(h, 0xFFFFFFFCu);
	assert_int_equal(m, 0x44443333u);
}

/*
 * SipHash-2-4 reference vectors (Aumasson & Bernstein, vectors_sip64):
 * key 00 01 .. 0f, message 00 01 .. n-1.  ext4 splits the 64-bit result
 * into hash = high half (low bit cleared) and minor_hash = low half.
 */
static void dx_hash__siphash_matches_the_reference_vectors(void **state)
{
	static const struct {
		size_t n;
		uint64_t want;
	} ref[] = {
		{ 0, 0x726fdb47dd0e0e31ull },  { 1, 0x74f839c593dc67fdull },
		{ 7, 0xab0200f58b01d137ull },  { 8, 0x93f5f5799a932462ull },
		{ 15, 0xa129ca6149be45e5ull }, { 16, 0x3f2acc7f57c29bdbull },
		{ 32, 0x7127512f72f27cceull },
	};
	const uint32_t key[4] = { 0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c };
	char msg[32];

	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (char)i;
	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
		uint32_t h, m;

		assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_SIPHASH, msg, ref[i].n, key, &h, &m), 0);
		assert_int_equal(h, (uint32_t)(ref[i].want >> 32) & ~1u);
		assert_int_equal(m, (uint32_t)ref[i].want);
	}
}

static void dx_hash__siphash_refuses_to_run_without_a_key(void **state)
{
	uint32_t h = 7, m = 7;

	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_SIPHASH, "abc", 3, NULL, &h, &m),
			 EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_SIPHASH, "abc", 3, seeds[0], &h, &m),
			 EXT4FS_E_INVALID_ARG);
}

static void dx_hash__rejects_unknown_versions_and_bad_arguments(void **state)
{
	uint32_t h, m;

	assert_int_equal(ext4fs_dx_hash(7, "abc", 3, NULL, &h, &m), EXT4FS_E_UNKNOWN_HASH);
	assert_int_equal(ext4fs_dx_hash(-1, "abc", 3, NULL, &h, &m), EXT4FS_E_UNKNOWN_HASH);
	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_TEA, NULL, 3, NULL, &h, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_TEA, "abc", 3, NULL, NULL, &m),
			 EXT4FS_E_INVALID_ARG);
	/* A NULL name is fine when it is empty. */
	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_TEA, NULL, 0, NULL, &h, &m), 0);
	assert_int_equal(h, 0x67452300u);
}

static void dx_hash_version_effective__switches_to_unsigned_only_when_the_superblock_says_so(
	void **state)
{
	for (int v = EXT4FS_HASH_LEGACY; v <= EXT4FS_HASH_TEA; v++) {
		assert_int_equal(ext4fs_dx_hash_version_effective(v, EXT4FS_FLAGS_UNSIGNED_HASH), v + 3);
		assert_int_equal(ext4fs_dx_hash_version_effective(v, EXT4FS_FLAGS_SIGNED_HASH), v);
		assert_int_equal(ext4fs_dx_hash_version_effective(v, 0), v);
	}
	for (int v = EXT4FS_HASH_LEGACY_UNSIGNED; v <= EXT4FS_HASH_SIPHASH; v++)
		assert_int_equal(ext4fs_dx_hash_version_effective(v, EXT4FS_FLAGS_UNSIGNED_HASH), v);
}

static void dx_hash_name__round_trips_every_version_name(void **state)
{
	static const char *const want[] = { "legacy",		 "half_md4",	 "tea",
					    "legacy_unsigned",	 "half_md4_unsigned",
					    "tea_unsigned",	 "siphash" };

	for (int v = 0; v <= EXT4FS_HASH_SIPHASH; v++) {
		assert_string_equal(ext4fs_dx_hash_name(v), want[v]);
		assert_int_equal(ext4fs_dx_hash_by_name(want[v]), v);
	}
	assert_null(ext4fs_dx_hash_name(-1));
	assert_null(ext4fs_dx_hash_name(EXT4FS_HASH_SIPHASH + 1));
	assert_int_equal(ext4fs_dx_hash_by_name("HALF_MD4"), EXT4FS_HASH_HALF_MD4);
	assert_int_equal(ext4fs_dx_hash_by_name("md5"), -1);
	assert_int_equal(ext4fs_dx_hash_by_name(""), -1);
	assert_int_equal(ext4fs_dx_hash_by_name(NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dx_hash__matches_debugfs_for_every_name_version_and_seed),
		cmocka_unit_test(dx_hash__treats_an_all_zero_seed_like_no_seed),
		cmocka_unit_test(dx_hash__always_clears_the_low_bit_and_accepts_a_null_minor_hash),
		cmocka_unit_test(dx_hash__moves_a_hash_off_the_end_of_directory_cookie),
		cmocka_unit_test(dx_hash__siphash_matches_the_reference_vectors),
		cmocka_unit_test(dx_hash__siphash_refuses_to_run_without_a_key),
		cmocka_unit_test(dx_hash__rejects_unknown_versions_and_bad_arguments),
		cmocka_unit_test(dx_hash_version_effective__switches_to_unsigned_only_when_the_superblock_says_so),
		cmocka_unit_test(dx_hash_name__round_trips_every_version_name),
	};
	return cmocka_run_group_tests(tests, names_setup, NULL);
}
