/*
 * test_defrag_index.c - the sweep's owner index (defrag_internal.h),
 * built from the library's source file since it is internal: random adds
 * and removes against a plain array as the model, enough owners to split
 * chunks many times and to empty them again, every search checked; and the
 * refusals (overlaps at load and at add, removing what is not there).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/errors.h"
#include "defrag_internal.h"
#include "fs_internal.h"
#include "../lib/test_rng.h"

/* The index names its failures through the handle; the test has none and needs no text. */
int ext4fs__fs_fail(struct ext4fs_fs *fs, int err, const char *fmt, ...)
{
	(void)fs;
	(void)fmt;
	return err;
}

#define SPACE 200000u

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	return test_rng_next(&rng);
}

/* The model: which owner (index into held, +1) holds each block. */
static uint32_t holder[SPACE];
static struct ext4fs__owner held[SPACE];
static size_t nheld;

static const struct ext4fs__owner *model_after(uint64_t blk)
{
	for (; blk < SPACE; blk++)
		if (holder[blk])
			return &held[holder[blk] - 1];
	return NULL;
}

static void model_set(const struct ext4fs__owner *e, uint32_t who)
{
	for (uint64_t b = e->pblk; b < e->pblk + e->len; b++)
		holder[b] = who;
}

static void check_searches(const struct ext4fs__owner_index *ix, int probes)
{
	for (int i = 0; i < probes; i++) {
		uint64_t blk = next() % SPACE;
		const struct ext4fs__owner *want = model_after(blk), *got = ext4fs__owners_after(ix, blk);

		if (!want) {
			assert_null(got);
			continue;
		}
		assert_non_null(got);
		/* The first owner ending after blk: the one holding blk, else the next one. */
		if (got->pblk != want->pblk || got->len != want->len || got->ino != want->ino)
			fail_msg("after %llu: index %llu+%llu, model %llu+%llu", (unsigned long long)blk,
				 (unsigned long long)got->pblk, (unsigned long long)got->len,
				 (unsigned long long)want->pblk, (unsigned long long)want->len);
	}
	assert_int_equal(ix->count, nheld);
}

static int fits(uint64_t at, uint64_t len)
{
	if (at + len > SPACE)
		return 0;
	for (uint64_t b = at; b < at + len; b++)
		if (holder[b])
			return 0;
	return 1;
}

static void random_changes_agree_with_a_model(void **state)
{
	struct ext4fs__owner_index ix = { 0 };
	struct ext4fs__owner *load = calloc(3000, sizeof(*load));
	size_t nload = 0;
	(void)state;

	/* A first load of 3000 owners with gaps between them. */
	assert_non_null(load);
	for (uint64_t at = 7; nload < 3000; at += 20 + next() % 30) {
		load[nload] = (struct ext4fs__owner){ at, 1 + next() % 12, next() % 1000, (uint32_t)(1 + nload % 97), 0 };
		held[nheld] = load[nload];
		model_set(&held[nheld], (uint32_t)(nheld + 1));
		nheld++;
		nload++;
	}
	assert_int_equal(ext4fs__owners_load(NULL, &ix, load, nload), 0);
	free(load);
	check_searches(&ix, 2000);

	/* Grow to thousands more (chunks split), then shrink to nothing (chunks dropped). */
	for (int round = 0; round < 60000; round++) {
		int grow = round < 30000 ? next() % 4 != 0 : next() % 4 == 0;

		if (grow) {
			struct ext4fs__owner e = { next() % SPACE, 1 + next() % 4, next() % 1000, (uint32_t)(next() % 97 + 1),
						   (int)(next() % 2) };
			if (!fits(e.pblk, e.len)) {
				/* An overlap is refused and changes nothing. */
				if (e.pblk + e.len <= SPACE) {
					assert_int_equal(ext4fs__owners_add(NULL, &ix, &e), EXT4FS_E_BLOCK_STATE);
					assert_int_equal(ix.count, nheld);
				}
				continue;
			}
			assert_int_equal(ext4fs__owners_add(NULL, &ix, &e), 0);
			held[nheld] = e;
			model_set(&e, (uint32_t)(nheld + 1));
			nheld++;
		} else if (nheld) {
			size_t k = next() % nheld;
			struct ext4fs__owner gone = held[k];

			assert_int_equal(ext4fs__owners_remove(NULL, &ix, &gone), 0);
			assert_int_equal(ext4fs__owners_remove(NULL, &ix, &gone), EXT4FS_E_BLOCK_STATE);
			model_set(&gone, 0);
			held[k] = held[--nheld];
			if (k < nheld)
				model_set(&held[k], (uint32_t)(k + 1));
		}
		if (round % 1000 == 0)
			check_searches(&ix, 300);
	}
	check_searches(&ix, 3000);
	while (nheld) {
		assert_int_equal(ext4fs__owners_remove(NULL, &ix, &held[nheld - 1]), 0);
		model_set(&held[--nheld], 0);
	}
	assert_int_equal(ix.nchunks, 0);
	assert_null(ext4fs__owners_after(&ix, 0));
	ext4fs__owners_free(&ix);
}

/* A full chunk split with the newcomer at every place, the middle ones above all. */
static void a_full_chunk_splits_around_any_place(void **state)
{
	(void)state;

	for (unsigned pos = 0; pos <= 256; pos++) {
		struct ext4fs__owner_index ix = { 0 };
		struct ext4fs__owner e = { 0, 1, 0, 1, 0 };
		const struct ext4fs__owner *o;
		uint64_t blk = 0;
		unsigned seen = 0;

		for (unsigned i = 0; i < 256; i++) {
			e.pblk = 10 * (i + 1);
			assert_int_equal(ext4fs__owners_add(NULL, &ix, &e), 0);
		}
		assert_int_equal(ix.nchunks, 1);
		e.pblk = 10 * pos + 5;
		e.ino = 2;
		assert_int_equal(ext4fs__owners_add(NULL, &ix, &e), 0);
		assert_int_equal(ix.nchunks, 2);
		/* All 257 in block order, the newcomer between its neighbours. */
		while ((o = ext4fs__owners_after(&ix, blk)) != NULL) {
			assert_true(o->pblk >= blk);
			if (o->ino == 2)
				assert_int_equal(o->pblk, 10 * pos + 5);
			blk = o->pblk + o->len;
			seen++;
		}
		assert_int_equal(seen, 257);
		ext4fs__owners_free(&ix);
	}
}

static void overlaps_are_refused_at_load(void **state)
{
	struct ext4fs__owner_index ix = { 0 };
	struct ext4fs__owner v[3] = {
		{ 100, 10, 0, 12, 0 },
		{ 50, 5, 0, 13, 0 },
		{ 108, 1, 0, 14, 1 },
	};
	(void)state;

	assert_int_equal(ext4fs__owners_load(NULL, &ix, v, 3), EXT4FS_E_BLOCK_STATE);
	ext4fs__owners_free(&ix);
	v[2].pblk = 110;
	assert_int_equal(ext4fs__owners_load(NULL, &ix, v, 3), 0);
	assert_int_equal(ext4fs__owners_after(&ix, 0)->ino, 13);
	assert_int_equal(ext4fs__owners_after(&ix, 109)->ino, 12);
	assert_int_equal(ext4fs__owners_after(&ix, 110)->ino, 14);
	assert_null(ext4fs__owners_after(&ix, 111));
	ext4fs__owners_free(&ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_changes_agree_with_a_model),
		cmocka_unit_test(a_full_chunk_splits_around_any_place),
		cmocka_unit_test(overlaps_are_refused_at_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
