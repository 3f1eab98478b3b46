/*
 * test_support.c - lib/support's pure modules and the library's on-disk
 * names: the JSON writer (commas and escapes at any nesting depth), number
 * and size parsing, the meter's digit count, and ondisk_names.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/ondisk_names.h"
#include "support/json.h"
#include "support/parse.h"
#include "support/progress.h"

/* Run fn on a writer over a memory stream; the document, NUL-terminated (free it). */
static char *json_doc(void (*fn)(struct json *j))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	assert_non_null(f);
	json_init(&j, f);
	fn(&j);
	json_finish(&j);
	fclose(f);
	return buf;
}

static void doc_small(struct json *j)
{
	json_object_begin(j, NULL);
	json_string(j, "s", "a\"b\\c\n\x01\xff");
	json_uint(j, "u", 18446744073709551615ULL);
	json_int(j, "i", -5);
	json_bool(j, "b", 1);
	json_null(j, "n");
	json_string(j, "missing", NULL);
	json_array_begin(j, "a");
	json_uint(j, NULL, 1);
	json_object_begin(j, NULL);
	json_object_end(j);
	json_array_begin(j, NULL);
	json_array_end(j);
	json_uint(j, NULL, 2);
	json_array_end(j);
	json_double(j, "d", 0.5);
	json_object_end(j);
}

static void test_json_small(void **state)
{
	char *doc = json_doc(doc_small);
	(void)state;
	assert_string_equal(doc, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\\u00ff\",\"u\":18446744073709551615,"
				 "\"i\":-5,\"b\":true,\"n\":null,\"missing\":null,\"a\":[1,{},[],2],"
				 "\"d\":0.500000}\n");
	free(doc);
}

#define DEEP 200    /* far beyond the old writer's 32 levels */

static void doc_deep(struct json *j)
{
	for (int d = 0; d < DEEP; d++) {
		json_array_begin(j, NULL);
		json_uint(j, NULL, (uint64_t)d);
	}
	for (int d = 0; d < DEEP; d++) {
		json_array_end(j);
		json_uint(j, NULL, 7);   /* after the inner array: needs a comma */
	}
}

static void test_json_deep(void **state)
{
	char *doc = json_doc(doc_deep);
	char *want = malloc(DEEP * 16 + 2), *p = want;
	(void)state;
	assert_non_null(want);
	for (int d = 0; d < DEEP; d++)
		p += sprintf(p, "%s[%d", d ? "," : "", d);
	for (int d = 0; d < DEEP; d++)
		p += sprintf(p, "],7");
	strcpy(p, "\n");
	assert_string_equal(doc, want);
	free(want);
	free(doc);
}

static void test_parse_u64(void **state)
{
	uint64_t v = 42;
	(void)state;
	assert_int_equal(sup_parse_u64("0x10", UINT64_MAX, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(sup_parse_u64("010", UINT64_MAX, &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(sup_parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 42;
	assert_int_equal(sup_parse_u64("18446744073709551616", UINT64_MAX, &v), -1);
	assert_int_equal(sup_parse_u64("", UINT64_MAX, &v), -1);
	assert_int_equal(sup_parse_u64("-1", UINT64_MAX, &v), -1);
	assert_int_equal(sup_parse_u64("12k", UINT64_MAX, &v), -1);
	assert_int_equal(sup_parse_u64("65537", 65536, &v), -1);
	assert_int_equal(v, 42);
	assert_int_equal(sup_parse_u64("65536", 65536, &v), 0);
	assert_int_equal(v, 65536);
}

static void test_parse_size(void **state)
{
	(void)state;
	assert_int_equal(sup_parse_size("4096", 0), 4096);
	assert_int_equal(sup_parse_size("4096", 10), 4096);       /* no suffix: already in units */
	assert_int_equal(sup_parse_size("4k", 0), 4096);
	assert_int_equal(sup_parse_size("4K", 10), 4);
	assert_int_equal(sup_parse_size("64M", 12), 16384);       /* 4 KiB blocks */
	assert_true(sup_parse_size("2g", 0) == 2ULL << 30);
	assert_true(sup_parse_size("1T", 10) == 1ULL << 30);
	assert_int_equal(sup_parse_size("100s", 0), 51200);
	assert_int_equal(sup_parse_size("0x10k", 0), 16384);
	assert_int_equal(sup_parse_size("", 0), 0);
	assert_int_equal(sup_parse_size("-4k", 0), 0);
	assert_int_equal(sup_parse_size(" 4k", 0), 0);
	assert_int_equal(sup_parse_size("4kb", 0), 0);
	assert_int_equal(sup_parse_size("4x", 0), 0);
	assert_int_equal(sup_parse_size("17179869184g", 0), 0);   /* 2^64 bytes */
}

static void test_digits(void **state)
{
	(void)state;
	assert_int_equal(sup_decimal_digits(0), 0);
	assert_int_equal(sup_decimal_digits(9), 1);
	assert_int_equal(sup_decimal_digits(10), 2);
	assert_int_equal(sup_decimal_digits(UINT64_MAX), 20);
}

static void test_ondisk_names(void **state)
{
	static const uint8_t u[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
				       0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 };
	static const uint8_t zero[16];
	char buf[40];
	(void)state;
	assert_string_equal(ext4fs_uuid_format(u, buf, sizeof(buf)), "01234567-89ab-cdef-fedc-ba9876543210");
	assert_true(ext4fs_uuid_is_null(zero));
	assert_false(ext4fs_uuid_is_null(u));
	assert_string_equal(ext4fs_state_name(1), "clean");
	assert_string_equal(ext4fs_state_name(0), "not clean");
	assert_string_equal(ext4fs_state_name(3), "clean with errors");
	assert_string_equal(ext4fs_state_name(2), "not clean with errors");
	assert_string_equal(ext4fs_errors_behavior_name(2), "Remount read-only");
	assert_string_equal(ext4fs_errors_behavior_name(0), "Unknown (continue)");
	assert_string_equal(ext4fs_creator_os_name(3), "FreeBSD");
	assert_string_equal(ext4fs_creator_os_name(5), "(unknown os)");
	assert_string_equal(ext4fs_def_hash_name(1, buf, sizeof(buf)), "half_md4");
	assert_string_equal(ext4fs_def_hash_name(7, buf, sizeof(buf)), "HASHALG_7");
	assert_null(ext4fs_defm_jmode_name(0x0c));
	assert_string_equal(ext4fs_defm_jmode_name(0x60), "journal_data_writeback");
	assert_string_equal(ext4fs_defm_option_name(2, buf, sizeof(buf)), "user_xattr");
	assert_string_equal(ext4fs_defm_option_name(13, buf, sizeof(buf)), "MNTOPT_13");
	assert_string_equal(ext4fs_sb_flag_name(1), "unsigned_directory_hash");
	assert_null(ext4fs_sb_flag_name(3));
	assert_string_equal(ext4fs_bg_flag_name(2), "itable_zeroed");
	assert_null(ext4fs_bg_flag_name(3));
	assert_string_equal(ext4fs_errcode_name(5, buf, sizeof(buf)), "EFSCORRUPTED");
	assert_string_equal(ext4fs_errcode_name(99, buf, sizeof(buf)), "UNKNOWN_ERRCODE_99");
	assert_string_equal(ext4fs_encoding_name(1, buf, sizeof(buf)), "utf8-12.1");
	assert_string_equal(ext4fs_revision_name(1), "dynamic");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_small),
		cmocka_unit_test(test_json_deep),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_digits),
		cmocka_unit_test(test_ondisk_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
