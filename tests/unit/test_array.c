/* test_array.c - ext4fs_array_grow(): doubling, first sizes, failures that leave the array alone. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "ext4fs/array.h"

static void test_grows_by_doubling(void **state)
{
	size_t cap = 0;
	int *a = NULL;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		int *g = ext4fs_array_grow(a, &cap, (size_t)i + 1, sizeof(*a), 4);
		assert_non_null(g);
		a = g;
		a[i] = i;
		assert_true(cap >= (size_t)i + 1);
		/* 4, 8, 16, ...: a power of two times the first size. */
		assert_int_equal(cap & (cap - 1), 0);
	}
	for (int i = 0; i < 1000; i++)
		assert_int_equal(a[i], i);
	assert_int_equal(cap, 1024);
	free(a);
}

static void test_fits_returns_same(void **state)
{
	size_t cap = 16;
	char *a = malloc(cap);

	(void)state;
	assert_ptr_equal(ext4fs_array_grow(a, &cap, 16, 1, 4), a);
	assert_int_equal(cap, 16);
	/* A need far beyond doubling goes straight to a size that holds it. */
	char *g = ext4fs_array_grow(a, &cap, 1000, 1, 4);
	assert_non_null(g);
	assert_int_equal(cap, 1024);
	free(g);
}

static void test_overflow_leaves_array(void **state)
{
	size_t cap = 8;
	uint64_t *a = calloc(cap, sizeof(*a));

	(void)state;
	a[7] = 77;
	assert_null(ext4fs_array_grow(a, &cap, SIZE_MAX / 4, sizeof(*a), 4));
	assert_int_equal(cap, 8);
	assert_int_equal(a[7], 77);
	size_t huge = SIZE_MAX / 2 + 1;
	assert_null(ext4fs_array_grow(a, &huge, SIZE_MAX, 1, 4));
	assert_int_equal(huge, SIZE_MAX / 2 + 1);
	free(a);
}

static void test_zero_first(void **state)
{
	size_t cap = 0;

	(void)state;
	void *a = ext4fs_array_grow(NULL, &cap, 1, 8, 0);
	assert_non_null(a);
	assert_int_equal(cap, 1);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grows_by_doubling),
		cmocka_unit_test(test_fits_returns_same),
		cmocka_unit_test(test_overflow_leaves_array),
		cmocka_unit_test(test_zero_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
