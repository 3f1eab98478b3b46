/* test_features.c - feature names, lookups, edit lists and dumpe2fs-order formatting. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/errors.h"
#include "ext4fs/fsfeatures.h"
#include "ext4fs/super.h"

#define WC EXT4FS_FEATURE_WORD_COMPAT
#define WI EXT4FS_FEATURE_WORD_INCOMPAT
#define WR EXT4FS_FEATURE_WORD_RO_COMPAT

static void feature_name__gives_the_dumpe2fs_spelling_of_each_known_bit(void **state)
{
	(void)state;
	assert_string_equal(ext4fs_feature_name(WC, EXT4FS_FEATURE_COMPAT_HAS_JOURNAL), "has_journal");
	assert_string_equal(ext4fs_feature_name(WC, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE), "orphan_file");
	assert_string_equal(ext4fs_feature_name(WI, EXT4FS_FEATURE_INCOMPAT_EXTENTS), "extent");
	assert_string_equal(ext4fs_feature_name(WI, EXT4FS_FEATURE_INCOMPAT_CSUM_SEED), "metadata_csum_seed");
	assert_string_equal(ext4fs_feature_name(WI, EXT4FS_FEATURE_INCOMPAT_CASEFOLD), "casefold");
	assert_string_equal(ext4fs_feature_name(WR, EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM), "uninit_bg");
	assert_string_equal(ext4fs_feature_name(WR, EXT4FS_FEATURE_RO_COMPAT_READONLY), "read-only");
	assert_string_equal(ext4fs_feature_name(WR, EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT), "orphan_present");
}

static void feature_name__is_null_for_unnamed_bits_and_bad_words(void **state)
{
	(void)state;
	assert_null(ext4fs_feature_name(WC, 0x80));
	assert_null(ext4fs_feature_name(WI, 0x20));
	assert_null(ext4fs_feature_name(WR, 0x80000000u));
	assert_null(ext4fs_feature_name(3, 0x1));
	assert_null(ext4fs_feature_name(WC, 0x3)); /* not a single bit */
}

static void feature_lookup__accepts_names_in_any_case_and_the_e2fsprogs_aliases(void **state)
{
	int w;
	uint32_t m;

	(void)state;
	assert_int_equal(ext4fs_feature_lookup("metadata_csum", &w, &m), 0);
	assert_int_equal(w, WR);
	assert_int_equal(m, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	assert_int_equal(ext4fs_feature_lookup("Has_Journal", &w, &m), 0);
	assert_int_equal(w, WC);
	assert_int_equal(m, EXT4FS_FEATURE_COMPAT_HAS_JOURNAL);
	assert_int_equal(ext4fs_feature_lookup("extents", &w, &m), 0);
	assert_int_equal(w, WI);
	assert_int_equal(m, EXT4FS_FEATURE_INCOMPAT_EXTENTS);
	assert_int_equal(ext4fs_feature_lookup("uninit_groups", &w, &m), 0);
	assert_int_equal(w, WR);
	assert_int_equal(m, EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM);
	assert_int_equal(ext4fs_feature_lookup("fname_encoding", &w, &m), 0);
	assert_int_equal(m, EXT4FS_FEATURE_INCOMPAT_CASEFOLD);
}

static void feature_lookup__parses_the_numeric_forms_of_every_word(void **state)
{
	int w;
	uint32_t m;

	(void)state;
	assert_int_equal(ext4fs_feature_lookup("FEATURE_C12", &w, &m), 0);
	assert_int_equal(w, WC);
	assert_int_equal(m, 1u << 12);
	assert_int_equal(ext4fs_feature_lookup("feature_i3", &w, &m), 0);
	assert_int_equal(w, WI);
	assert_int_equal(m, 1u << 3);
	assert_int_equal(ext4fs_feature_lookup("FEATURE_R31", &w, &m), 0);
	assert_int_equal(w, WR);
	assert_int_equal(m, 1u << 31);
	assert_int_equal(ext4fs_feature_lookup("FEATURE_R0", &w, &m), 0);
	assert_int_equal(m, 1u);
}

static void feature_lookup__rejects_unknown_names_and_malformed_numbers(void **state)
{
	int w = -1;
	uint32_t m = 0;

	(void)state;
	assert_int_equal(ext4fs_feature_lookup("bogus", &w, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_feature_lookup("", &w, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_feature_lookup("FEATURE_X1", &w, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_feature_lookup("FEATURE_C", &w, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_feature_lookup("FEATURE_C32", &w, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_feature_lookup("FEATURE_C1x", &w, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_feature_lookup("FEATURE_C-1", &w, &m), EXT4FS_E_INVALID_ARG);
	assert_int_equal(w, -1);
	assert_int_equal(m, 0);
}

static void features_edit__sets_and_clears_with_all_prefixes_and_separators(void **state)
{
	uint32_t f[3] = { 0, 0, 0 };

	(void)state;
	assert_int_equal(ext4fs_features_edit("has_journal,+extent 64bit\tmetadata_csum", f, NULL, 0), 0);
	assert_int_equal(f[WC], EXT4FS_FEATURE_COMPAT_HAS_JOURNAL);
	assert_int_equal(f[WI], EXT4FS_FEATURE_INCOMPAT_EXTENTS | EXT4FS_FEATURE_INCOMPAT_64BIT);
	assert_int_equal(f[WR], EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);

	assert_int_equal(ext4fs_features_edit("^has_journal,-64bit,,", f, NULL, 0), 0);
	assert_int_equal(f[WC], 0);
	assert_int_equal(f[WI], EXT4FS_FEATURE_INCOMPAT_EXTENTS);
	assert_int_equal(f[WR], EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
}

static void features_edit__none_clears_everything_and_later_words_still_apply(void **state)
{
	uint32_t f[3] = { 0xffffffffu, 0xffffffffu, 0xffffffffu };

	(void)state;
	assert_int_equal(ext4fs_features_edit("none,sparse_super", f, NULL, 0), 0);
	assert_int_equal(f[WC], 0);
	assert_int_equal(f[WI], 0);
	assert_int_equal(f[WR], EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER);
	assert_int_equal(ext4fs_features_edit("CLEAR", f, NULL, 0), 0);
	assert_int_equal(f[WR], 0);
}

static void features_edit__names_the_bad_word_and_leaves_the_set_unchanged(void **state)
{
	uint32_t f[3] = { 1, 2, 3 };
	char bad[32];

	(void)state;
	assert_int_equal(ext4fs_features_edit("none,extent,^nosuch,64bit", f, bad, sizeof(bad)),
			 EXT4FS_E_INVALID_ARG);
	assert_string_equal(bad, "^nosuch");
	assert_int_equal(f[0], 1);
	assert_int_equal(f[1], 2);
	assert_int_equal(f[2], 3);

	/* A lone prefix is not a name; a long word is truncated into bad. */
	assert_int_equal(ext4fs_features_edit("^", f, bad, sizeof(bad)), EXT4FS_E_INVALID_ARG);
	assert_string_equal(bad, "^");
	assert_int_equal(ext4fs_features_edit("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
					      f, bad, 8), EXT4FS_E_INVALID_ARG);
	assert_string_equal(bad, "abcdefg");
}

static void features_format__prints_in_dumpe2fs_order_with_numeric_fallback(void **state)
{
	/* The features of a default mke2fs 1.47 ext4, plus unnamed bits. */
	const uint32_t f[3] = {
		0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0080,
		0x0002 | 0x0040 | 0x0080 | 0x0200 | 0x0020,
		0x0001 | 0x0002 | 0x0008 | 0x0020 | 0x0040 | 0x0400 | 0x80000000u,
	};
	const char *want = "has_journal ext_attr resize_inode dir_index FEATURE_C7 filetype FEATURE_I5 "
			   "extent 64bit flex_bg sparse_super large_file huge_file dir_nlink extra_isize "
			   "metadata_csum FEATURE_R31";
	char buf[512];

	(void)state;
	assert_int_equal(ext4fs_features_format(f, buf, sizeof(buf)), strlen(want));
	assert_string_equal(buf, want);
}

static void features_format__truncates_like_snprintf_and_handles_an_empty_set(void **state)
{
	const uint32_t f[3] = { EXT4FS_FEATURE_COMPAT_HAS_JOURNAL, EXT4FS_FEATURE_INCOMPAT_EXTENTS, 0 };
	const uint32_t none[3] = { 0, 0, 0 };
	char buf[64];

	(void)state;
	for (size_t len = 1; len <= 20; len++) {
		memset(buf, 'x', sizeof(buf));
		assert_int_equal(ext4fs_features_format(f, buf, len), strlen("has_journal extent"));
		assert_int_equal(strlen(buf), len - 1 < 18 ? len - 1 : 18);
		assert_memory_equal(buf, "has_journal extent", strlen(buf));
	}
	assert_int_equal(ext4fs_features_format(f, NULL, 0), 18);
	buf[0] = 'x';
	assert_int_equal(ext4fs_features_format(none, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void features__every_name_round_trips_through_lookup(void **state)
{
	(void)state;
	for (int w = 0; w < 3; w++)
		for (int b = 0; b < 32; b++) {
			uint32_t m = 1u << b, got_m = 0;
			const char *n = ext4fs_feature_name(w, m);
			int got_w = -1;
			uint32_t one[3] = { 0, 0, 0 };
			char buf[32];

			one[w] = m;
			ext4fs_features_format(one, buf, sizeof(buf));
			if (n)
				assert_string_equal(buf, n);
			assert_int_equal(ext4fs_feature_lookup(buf, &got_w, &got_m), 0);
			assert_int_equal(got_w, w);
			assert_int_equal(got_m, m);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(feature_name__gives_the_dumpe2fs_spelling_of_each_known_bit),
		cmocka_unit_test(feature_name__is_null_for_unnamed_bits_and_bad_words),
		cmocka_unit_test(feature_lookup__accepts_names_in_any_case_and_the_e2fsprogs_aliases),
		cmocka_unit_test(feature_lookup__parses_the_numeric_forms_of_every_word),
		cmocka_unit_test(feature_lookup__rejects_unknown_names_and_malformed_numbers),
		cmocka_unit_test(features_edit__sets_and_clears_with_all_prefixes_and_separators),
		cmocka_unit_test(features_edit__none_clears_everything_and_later_words_still_apply),
		cmocka_unit_test(features_edit__names_the_bad_word_and_leaves_the_set_unchanged),
		cmocka_unit_test(features_format__prints_in_dumpe2fs_order_with_numeric_fallback),
		cmocka_unit_test(features_format__truncates_like_snprintf_and_handles_an_empty_set),
		cmocka_unit_test(features__every_name_round_trips_through_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
