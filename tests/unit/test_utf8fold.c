/*
 * test_utf8fold.c - ext4's utf8-12.1 casefolding on known folds.
 *
 * The expected forms are Unicode's (CaseFolding.txt, canonical
 * decomposition and ordering); hashes of the folded forms were checked
 * against debugfs 1.47's "dx_hash -c -e utf8" when the tables were made.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/errors.h"
#include "ext4fs/utf8fold.h"

static void expect_fold(const char *name, const char *want)
{
	uint8_t out[EXT4FS_UTF8_FOLD_MAX];
	int n = ext4fs_utf8_casefold(name, strlen(name), out, sizeof(out));

	assert_int_equal(n, (int)strlen(want));
	assert_memory_equal(out, want, strlen(want));
}

static void casefold__lowercases_ascii_and_keeps_the_rest(void **state)
{
	(void)state;
	expect_fold("README.Txt", "readme.txt");
	expect_fold("a-b_c~9", "a-b_c~9");
	expect_fold("", "");
}

static void casefold__applies_full_folding_to_latin_1(void **state)
{
	(void)state;
	expect_fold("Stra\xc3\x9f" "e", "strasse");           /* ß -> ss */
	expect_fold("\xe1\xba\x9e", "ss");                     /* ẞ -> ss */
	expect_fold("\xc3\x89t\xc3\xa9", "e\xcc\x81te\xcc\x81"); /* Été -> e◌́te◌́ */
	expect_fold("\xc3\x85", "a\xcc\x8a");                  /* Å -> a + ring */
	expect_fold("\xc4\xb0", "i\xcc\x87");                  /* İ -> i + dot (F folding) */
	expect_fold("\xef\xac\x81", "fi");                     /* ﬁ -> fi */
}

static void casefold__folds_every_greek_sigma_alike(void **state)
{
	(void)state;
	expect_fold("\xce\xa3", "\xcf\x83");   /* Σ -> σ */
	expect_fold("\xcf\x82", "\xcf\x83");   /* ς -> σ */
	expect_fold("\xcf\x83", "\xcf\x83");
	/* ΐ: full folding then decomposition, ι + diaeresis + acute */
	expect_fold("\xce\x90", "\xce\xb9\xcc\x88\xcc\x81");
	/* ᾳ (alpha with ypogegrammeni) folds to alpha + iota */
	expect_fold("\xe1\xbe\xb3", "\xce\xb1\xce\xb9");
	assert_int_equal(ext4fs_utf8_casefold_cmp("\xce\x9f\xce\x94\xce\x9f\xce\xa3", 8,
						  "\xce\xbf\xce\xb4\xce\xbf\xcf\x82", 8), 0);
}

static void casefold__decomposes_hangul_syllables(void **state)
{
	(void)state;
	/* 한 = U+D55C: L U+1112, V U+1161, T U+11AB */
	expect_fold("\xed\x95\x9c", "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab");
	/* 가 = U+AC00: no trailing consonant */
	expect_fold("\xea\xb0\x80", "\xe1\x84\x80\xe1\x85\xa1");
}

static void casefold__orders_combining_marks_canonically(void **state)
{
	(void)state;
	/* a + acute (230) + dot below (220) -> dot below first */
	expect_fold("a\xcc\x81\xcc\xa3", "a\xcc\xa3\xcc\x81");
	/* ạ́ precomposed gives the same */
	expect_fold("\xe1\xba\xa1\xcc\x81", "a\xcc\xa3\xcc\x81");
	/* marks of one class keep their order */
	expect_fold("a\xcc\x81\xcc\x80", "a\xcc\x81\xcc\x80");
	/* an ignorable (U+200B) vanishes but keeps marks from crossing it */
	expect_fold("e\xcc\x81\xe2\x80\x8b\xcc\xa3", "e\xcc\x81\xcc\xa3");
	expect_fold("e\xcc\x81\xcc\xa3", "e\xcc\xa3\xcc\x81");
}

static void casefold__drops_ignorables_and_keeps_newer_code_points(void **state)
{
	(void)state;
	expect_fold("a\xc2\xad" "b", "ab");                  /* soft hyphen */
	expect_fold("a\xf3\xa0\x80\x82" "b", "ab");          /* U+E0002, unassigned but ignorable */
	/* U+2C2F (Glagolitic, Unicode 14) folds in 14 but not in 12.1 */
	expect_fold("\xe2\xb0\xaf", "\xe2\xb0\xaf");
	expect_fold("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"); /* an emoji is itself */
	expect_fold("\xef\xbf\xbf", "\xef\xbf\xbf");         /* a noncharacter is valid */
}

static void casefold__stops_at_a_nul_byte(void **state)
{
	uint8_t out[16];

	(void)state;
	assert_int_equal(ext4fs_utf8_casefold("Ab\0C", 4, out, sizeof(out)), 2);
	assert_memory_equal(out, "ab", 2);
}

static void casefold__rejects_invalid_utf8(void **state)
{
	static const char *const bad[] = {
		"\xff", "a\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xc3", "\xe2\x82", "ok\xf0\x9f\x98",
	};
	uint8_t out[16];
	size_t off;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ext4fs_utf8_casefold(bad[i], strlen(bad[i]), out, sizeof(out)),
				 EXT4FS_E_INVALID_ARG);
		assert_int_equal(ext4fs_utf8_validate(bad[i], strlen(bad[i]), &off), 1);
	}
	assert_int_equal(ext4fs_utf8_validate("ab\xc3\xa9\xff" "c", 6, &off), 1);
	assert_int_equal(off, 4);
	assert_int_equal(ext4fs_utf8_validate("ab\xc3\xa9", 4, &off), 0);
	assert_int_equal(ext4fs_utf8_validate("a\0\xff", 3, NULL), 0);   /* after the NUL: not read */
	/* two identical invalid names are not the same name */
	assert_int_equal(ext4fs_utf8_casefold_cmp("\xff", 1, "\xff", 1), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_utf8_casefold_cmp("FOO", 3, "foo", 3), 0);
	assert_int_equal(ext4fs_utf8_casefold_cmp("foo", 3, "fob", 3), 1);
}

static void casefold__refuses_a_result_that_does_not_fit(void **state)
{
	uint8_t out[4];

	(void)state;
	assert_int_equal(ext4fs_utf8_casefold("\xed\x95\x9c", 3, out, sizeof(out)), EXT4FS_E_NAME_TOO_LONG);
	assert_int_equal(ext4fs_utf8_casefold("abcd", 4, out, sizeof(out)), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(casefold__lowercases_ascii_and_keeps_the_rest),
		cmocka_unit_test(casefold__applies_full_folding_to_latin_1),
		cmocka_unit_test(casefold__folds_every_greek_sigma_alike),
		cmocka_unit_test(casefold__decomposes_hangul_syllables),
		cmocka_unit_test(casefold__orders_combining_marks_canonically),
		cmocka_unit_test(casefold__drops_ignorables_and_keeps_newer_code_points),
		cmocka_unit_test(casefold__stops_at_a_nul_byte),
		cmocka_unit_test(casefold__rejects_invalid_utf8),
		cmocka_unit_test(casefold__refuses_a_result_that_does_not_fit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
