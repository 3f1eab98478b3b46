/*
 * test_fsck_maps.c - e4fsck's paged maps against a flat reference: random
 * ranges across page boundaries, counts of bits already set, next-set
 * walks over missing pages, merges with duplicates, counters, and range
 * sets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "maps.h"
#include "../lib/test_rng.h"

#define LIMIT 10000ULL        /* not a multiple of the page size: a short last page */
#define SHIFT 9               /* pages of 512 numbers */

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	return test_rng_next(&rng);
}

static void test_bitmap_against_flat(void **state)
{
	struct bitmap_paged m;
	unsigned char *flat = calloc(LIMIT, 1);
	(void)state;
	assert_non_null(flat);
	assert_int_equal(bitmap_paged_init(&m, LIMIT, SHIFT), 0);

	for (int round = 0; round < 3000; round++) {
		uint64_t n = next_rand() % LIMIT, len = 1 + next_rand() % 1500;
		if (len > LIMIT - n)
			len = LIMIT - n;
		if (next_rand() % 4) {
			int64_t expect = 0;
			for (uint64_t i = n; i < n + len; i++) {
				expect += flat[i];
				flat[i] = 1;
			}
			assert_int_equal(bitmap_paged_set_range(&m, n, len), expect);
		} else {
			memset(flat + n, 0, len);
			bitmap_paged_clear_range(&m, n, len);
		}
		uint64_t q = next_rand() % LIMIT, ql = next_rand() % 3000, ref = 0;
		for (uint64_t i = q; i < q + ql && i < LIMIT; i++)
			ref += flat[i];
		assert_int_equal(bitmap_paged_count(&m, q, ql), ref);
		uint64_t from = next_rand() % (LIMIT + 10), want = from;
		while (want < LIMIT && !flat[want])
			want++;
		if (want > LIMIT)
			want = LIMIT;
		assert_int_equal(bitmap_paged_next_set(&m, from), want);
		want = from;
		while (want < LIMIT && flat[want])
			want++;
		if (want > LIMIT)
			want = LIMIT;
		assert_int_equal(bitmap_paged_next_clear(&m, from), want);
	}
	for (uint64_t i = 0; i < LIMIT; i++)
		assert_int_equal(bitmap_paged_test(&m, i), flat[i]);
	assert_int_equal(bitmap_paged_test(&m, LIMIT), 0);
	assert_int_equal(bitmap_paged_set_range(&m, LIMIT - 1, 2), -ERANGE);
	bitmap_paged_free(&m);
	free(flat);
}

static void test_sparse_pages_only(void **state)
{
	struct bitmap_paged m;
	(void)state;
	/* A 1 TiB file system of 4 KiB blocks, pages of one 32768-block group. */
	assert_int_equal(bitmap_paged_init(&m, 1ULL << 28, 15), 0);
	assert_true(bitmap_paged_set_range(&m, 5, 10) == 0);
	assert_true(bitmap_paged_set_range(&m, (1ULL << 28) - 3, 3) == 0);
	assert_int_equal(m.p.pages_used, 2);
	assert_true(bitmap_paged_bytes(&m) < 100 * 1024);
	assert_int_equal(bitmap_paged_next_set(&m, 15), (1ULL << 28) - 3);
	assert_int_equal(bitmap_paged_count(&m, 0, 1ULL << 28), 13);
	bitmap_paged_free(&m);
}

/* A free run as e2fsprogs' search finds it: the first start in [first, finish) whose run is clear and fits. */
static void test_find_clear_run(void **state)
{
	struct bitmap_paged m;
	uint64_t at = 0;

	(void)state;
	assert_int_equal(bitmap_paged_init(&m, 4096, 8), 0);
	assert_true(bitmap_paged_set_range(&m, 0, 10) >= 0);
	assert_true(bitmap_paged_set_range(&m, 14, 1) >= 0);
	assert_true(bitmap_paged_set_range(&m, 300, 700) >= 0);
	/* 10-13 holds 4, not 5: the run starts past 14. */
	assert_int_equal(bitmap_paged_find_clear_run(&m, 0, 4096, 5, 4096, &at), 0);
	assert_int_equal(at, 15);
	assert_int_equal(bitmap_paged_find_clear_run(&m, 0, 4096, 4, 4096, &at), 0);
	assert_int_equal(at, 10);
	/* The run may pass finish, never the limit; its start lies before finish. */
	assert_int_equal(bitmap_paged_find_clear_run(&m, 250, 260, 200, 4096, &at), -1);
	assert_int_equal(bitmap_paged_find_clear_run(&m, 250, 260, 40, 4096, &at), 0);
	assert_int_equal(at, 250);
	assert_int_equal(bitmap_paged_find_clear_run(&m, 250, 260, 60, 4096, &at), -1);
	assert_int_equal(bitmap_paged_find_clear_run(&m, 1000, 4096, 3097, 4096, &at), -1);
	assert_int_equal(bitmap_paged_find_clear_run(&m, 1000, 4096, 3096, 4096, &at), 0);
	assert_int_equal(at, 1000);
	assert_int_equal(bitmap_paged_find_clear_run(&m, 0, 4096, 0, 4096, &at), -1);
	bitmap_paged_free(&m);
}

static void test_merge_finds_duplicates(void **state)
{
	struct bitmap_paged a, b, dup;
	(void)state;
	assert_int_equal(bitmap_paged_init(&a, LIMIT, SHIFT), 0);
	assert_int_equal(bitmap_paged_init(&b, LIMIT, SHIFT), 0);
	assert_int_equal(bitmap_paged_init(&dup, LIMIT, SHIFT), 0);
	assert_int_equal(bitmap_paged_set_range(&a, 100, 50), 0);
	assert_int_equal(bitmap_paged_set_range(&b, 140, 20), 0);     /* 140..149 in both */
	assert_int_equal(bitmap_paged_set_range(&b, 9000, 5), 0);      /* a page a lacks */
	assert_int_equal(bitmap_paged_merge(&a, &b, &dup), 10);
	assert_int_equal(bitmap_paged_count(&a, 0, LIMIT), 50 + 10 + 5);
	assert_int_equal(bitmap_paged_count(&dup, 0, LIMIT), 10);
	assert_int_equal(bitmap_paged_next_set(&dup, 0), 140);
	struct bitmap_paged other;
	assert_int_equal(bitmap_paged_init(&other, LIMIT, SHIFT + 1), 0);
	assert_int_equal(bitmap_paged_merge(&a, &other, NULL), -EINVAL);
	bitmap_paged_free(&other);
	bitmap_paged_free(&a);
	bitmap_paged_free(&b);
	bitmap_paged_free(&dup);
}

static void test_counters(void **state)
{
	struct counter_paged c;
	(void)state;
	assert_int_equal(counter_paged_init(&c, LIMIT, SHIFT), 0);
	assert_int_equal(counter_paged_set(&c, 7000, 0), 0);
	assert_int_equal(c.p.pages_used, 0);                      /* zero in a missing page: nothing */
	assert_int_equal(counter_paged_inc(&c, 7000), 1);
	assert_int_equal(counter_paged_inc(&c, 7000), 2);
	assert_int_equal(counter_paged_get(&c, 7000), 2);
	assert_int_equal(counter_paged_get(&c, 7001), 0);
	assert_int_equal(counter_paged_get(&c, 3), 0);
	assert_int_equal(counter_paged_set(&c, 12, 65534), 0);
	assert_int_equal(counter_paged_inc(&c, 12), 65535);
	assert_int_equal(counter_paged_inc(&c, 12), 65535);     /* saturates */
	assert_int_equal(counter_paged_inc(&c, LIMIT), -ERANGE);
	assert_int_equal(counter_paged_set(&c, LIMIT, 1), -ERANGE);
	assert_int_equal(c.p.pages_used, 2);
	counter_paged_free(&c);
}

/* Ranges added out of order, overlapping and touching, against a flat map; before and after sealing. */
static void test_range_set(void **state)
{
	static unsigned char flat[LIMIT];
	struct range_set s;

	(void)state;
	memset(flat, 0, sizeof(flat));
	range_set_init(&s);
	for (int i = 0; i < 300; i++) {
		uint64_t start = next_rand() % LIMIT, count = next_rand() % 40;
		if (start + count > LIMIT)
			count = LIMIT - start;
		assert_int_equal(range_set_add(&s, start, count), 0);
		memset(flat + start, 1, count);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t n = 0; n < LIMIT; n++)
			assert_int_equal(range_set_test(&s, n), flat[n]);
		assert_int_equal(range_set_test(&s, LIMIT), 0);
		assert_int_equal(range_set_test(&s, UINT64_MAX), 0);
		range_set_seal(&s);
	}
	/* Sealed: no two ranges overlap or touch. */
	for (size_t i = 1; i < s.n; i++)
		assert_true(s.r[i - 1].end < s.r[i].start);
	assert_int_equal(range_set_add(&s, UINT64_MAX, 2), -ERANGE);
	assert_int_equal(range_set_add(&s, 5, 0), 0);
	range_set_free(&s);
	assert_int_equal(range_set_test(&s, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bitmap_against_flat),
		cmocka_unit_test(test_sparse_pages_only),
		cmocka_unit_test(test_find_clear_run),
		cmocka_unit_test(test_merge_finds_duplicates),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_range_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
