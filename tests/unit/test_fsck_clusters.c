/*
 * test_fsck_clusters.c - pass 1's bigalloc accounting (fsck/clusters.c):
 * whole clusters claimed and marked, e2fsck's rules for charging an
 * inode's extents and block-map blocks, its misalignment test, and the
 * blocks an attribute value in an EA inode is charged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "clusters.h"

#define LIMIT 1001ULL         /* the last cluster of 4 is one block short */

static void test_claim(void **state)
{
	struct bitmap_paged found, dup;
	(void)state;
	assert_int_equal(bitmap_paged_init(&found, LIMIT, 9), 0);
	assert_int_equal(bitmap_paged_init(&dup, LIMIT, 9), 0);

	/* One block claims its whole cluster. */
	assert_int_equal(cluster_claim(&found, &dup, 4, 5, 1), 0);
	assert_int_equal(bitmap_paged_count(&found, 0, LIMIT), 4);
	assert_true(bitmap_paged_test(&found, 4) && bitmap_paged_test(&found, 7));
	/* Another block of it: the cluster is claimed twice, and only it. */
	assert_int_equal(cluster_claim(&found, &dup, 4, 6, 5), 0);
	assert_int_equal(bitmap_paged_count(&dup, 0, LIMIT), 4);
	assert_true(bitmap_paged_test(&dup, 4) && !bitmap_paged_test(&dup, 8));
	assert_int_equal(bitmap_paged_count(&found, 0, LIMIT), 8);
	/* The short last cluster is clamped to the limit. */
	assert_int_equal(cluster_claim(&found, &dup, 4, 1000, 1), 0);
	assert_int_equal(bitmap_paged_count(&found, 996, LIMIT - 996), 1);
	assert_int_equal(cluster_claim(&found, &dup, 4, 990, 20), 0);
	assert_int_equal(bitmap_paged_count(&found, 988, LIMIT - 988), 13);
	assert_int_equal(bitmap_paged_count(&dup, 988, LIMIT - 988), 1);
	/* Metadata: no duplicates, whatever it overlaps. */
	assert_int_equal(cluster_mark(&found, 4, 6, 1), 0);
	assert_int_equal(cluster_mark(&found, 4, 20, 2), 0);
	assert_int_equal(bitmap_paged_count(&dup, 0, LIMIT), 5);
	assert_int_equal(bitmap_paged_count(&found, 20, 4), 4);
	/* A ratio of 1 claims block by block. */
	assert_int_equal(cluster_claim(&found, &dup, 1, 40, 3), 0);
	assert_int_equal(cluster_claim(&found, &dup, 1, 42, 2), 0);
	assert_int_equal(bitmap_paged_count(&found, 40, 10), 4);
	assert_int_equal(bitmap_paged_count(&dup, 40, 10), 1);
	bitmap_paged_free(&found);
	bitmap_paged_free(&dup);
}

static void test_extents(void **state)
{
	struct cluster_walk cw;
	uint64_t from;
	(void)state;

	cluster_walk_init(&cw, 4);
	/* Blocks 100-105: two clusters. */
	assert_false(cluster_misaligned(&cw, 100, 0));
	assert_int_equal(cluster_walk_extent(&cw, 100, 0, 6, &from), 2);
	assert_int_equal(from, 100);
	/* On in the cluster the previous one ended in: only the clusters after it. */
	assert_false(cluster_misaligned(&cw, 106, 6));
	assert_int_equal(cluster_walk_extent(&cw, 106, 6, 4, &from), 1);
	assert_int_equal(from, 108);
	/* Wholly inside that cluster: nothing more. */
	assert_int_equal(cluster_walk_extent(&cw, 110, 10, 2, &from), 0);
	assert_true(from >= 112);
	/* Offsets in the logical and the physical cluster differ. */
	assert_true(cluster_misaligned(&cw, 201, 12));
	/* A logical cluster going on in another physical one. */
	assert_false(cluster_misaligned(&cw, 300, 12));
	cluster_walk_init(&cw, 4);
	cluster_walk_extent(&cw, 100, 0, 2, &from);
	assert_true(cluster_misaligned(&cw, 202, 2));
	assert_false(cluster_misaligned(&cw, 102, 2));
	/* A ratio of 1: every block charged, nothing misaligned. */
	cluster_walk_init(&cw, 1);
	assert_int_equal(cluster_walk_extent(&cw, 100, 0, 6, &from), 6);
	assert_false(cluster_misaligned(&cw, 106, 9));
	assert_int_equal(cluster_walk_extent(&cw, 105, 6, 3, &from), 3);
	assert_int_equal(from, 105);
}

static void test_block_map(void **state)
{
	struct cluster_walk cw;
	(void)state;

	cluster_walk_init(&cw, 4);
	assert_true(cluster_walk_block(&cw, 100, 0));
	assert_false(cluster_walk_block(&cw, 101, 1));
	assert_false(cluster_walk_block(&cw, 103, 3));
	assert_true(cluster_walk_block(&cw, 104, 4));
	/* In the same cluster but at another offset than its logical block's: charged again. */
	assert_true(cluster_walk_block(&cw, 104, 5));
	/* An indirect block (-1: offset 3 of its low bits) in the data's cluster. */
	assert_false(cluster_walk_block(&cw, 107, -1));
	assert_true(cluster_walk_block(&cw, 108, -1));
	/* Data at its logical offset in that map block's cluster: not charged again. */
	assert_false(cluster_walk_block(&cw, 109, 13));
	cluster_walk_init(&cw, 1);
	assert_true(cluster_walk_block(&cw, 100, 0));
	assert_true(cluster_walk_block(&cw, 101, 1));
}

static void test_value_blocks(void **state)
{
	(void)state;
	assert_int_equal(cluster_value_blocks(4096, 4, 1), 4);
	assert_int_equal(cluster_value_blocks(4096, 4, 16384), 4);
	assert_int_equal(cluster_value_blocks(4096, 4, 16385), 8);
	assert_int_equal(cluster_value_blocks(4096, 1, 4097), 2);
	assert_int_equal(cluster_value_blocks(1024, 1, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim),
		cmocka_unit_test(test_extents),
		cmocka_unit_test(test_block_map),
		cmocka_unit_test(test_value_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
