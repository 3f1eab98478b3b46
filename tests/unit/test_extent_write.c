/*
 * test_extent_write.c - changing block maps through ext4fs_bmap_alloc /
 * _set / _unmap / _mark_written: extent trees (merging, leaf and index
 * splits, growing and shrinking the depth, unwritten extents, maximum
 * extent lengths) and indirect maps (direct to triple indirect).  Every
 * result is read back through the library's validating readers, checked
 * against a model of the mapping and the free block count, and judged by
 * e2fsck -fn.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/extent.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "../lib/map_test.h"

/* -- image variants -- */

/* No backups and no journal: long free runs for the maximum-length tests. */
static void k1_long_runs(struct ext4fs_mkfs_params *p)
{
	p->block_size = 1024;
	p->feature_compat = (p->feature_compat & ~EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) |
			    EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2;
	p->num_backup_sb = 0;
}

/* -- helpers -- */

static void set_size_blocks(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, uint64_t blocks)
{
	ext4fs_inode_set_size(in, blocks * ext4fs_geom(img->fs)->block_size);
	assert_int_equal(ext4fs_inode_write(img->fs, ino, in), 0);
}

/* Every logical block below n maps as model says (0 = hole), and the inode on disk is *in. */
static void check_model(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
			const uint64_t *model, uint64_t n)
{
	struct ext4fs_inode disk;

	assert_int_equal(ext4fs_inode_read(img->fs, ino, &disk), 0);
	assert_memory_equal(disk.i_block, in->i_block, sizeof(in->i_block));
	assert_int_equal(disk.i_blocks_lo, in->i_blocks_lo);
	for (uint64_t l = 0; l < n; l++) {
		uint64_t p, run;
		assert_int_equal(ext4fs_bmap(img->fs, ino, &disk, l, &p, &run, NULL), 0);
		if (p != model[l])
			fail_msg("logical block %llu maps to %llu, expected %llu", (unsigned long long)l,
				 (unsigned long long)p, (unsigned long long)model[l]);
	}
}

static uint64_t sectors(struct rw_image *img, uint64_t blocks)
{
	return blocks * (ext4fs_geom(img->fs)->block_size / 512);
}

/* -- extent trees -- */

static void alloc_in_one_request_is_one_extent(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct map_test_tree t;
	uint64_t free0, pblk;
	uint32_t ino, got;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	ino = map_test_new_file(&img, "one", &in);
	free0 = map_test_free(img.fs);
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 0, 300, 300, 0, 0, &pblk, &got), 0);
	assert_int_equal(got, 300);
	assert_int_equal(map_test_free(img.fs), free0 - 300);
	assert_int_equal(in.i_blocks_lo, sectors(&img, 300));
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, 1);
	assert_int_equal(t.depth, 0);
	/* Appending right after the data lands next to it and merges. */
	for (uint32_t l = 300; l < 400; l += got)
		assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, l, 400 - l, 0, 0, 0, &pblk, &got), 0);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, 1);
	assert_int_equal(t.blocks, 400);
	/* Mapping over a mapped block is refused and changes nothing. */
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 399, 2, 0, 0, 0, &pblk, &got),
			 EXT4FS_E_INVALID_ARG);
	assert_int_equal(map_test_free(img.fs), free0 - 400);
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 1ULL << 32, 1, 0, 0, 0, &pblk, &got),
			 EXT4FS_E_FILE_TOO_BIG);
	set_size_blocks(&img, ino, &in, 400);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * Map n runs of runlen blocks, each physically apart from the
 * others, so every one is its own extent; order is ascending or shuffled.
 */
static void build_scattered(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, unsigned n,
			    unsigned runlen, int shuffled, uint64_t *model)
{
	uint64_t *runs = malloc(n * sizeof(*runs));
	unsigned *order = malloc(n * sizeof(*order));
	uint64_t rng = 12345;

	assert_non_null(runs);
	assert_non_null(order);
	map_test_pick_runs(img->fs, ext4fs_geom(img->fs)->blocks_count / 4, n, runlen, runs);
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	for (unsigned i = n - 1; shuffled && i > 0; i--) {
		unsigned j = map_test_rand(&rng) % (i + 1), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (unsigned k = 0; k < n; k++) {
		unsigned i = order[k];
		assert_int_equal(ext4fs_bmap_set(img->fs, ino, in, (uint64_t)i * runlen, runs[i], runlen, 0), 0);
		for (unsigned b = 0; b < runlen; b++)
			model[(uint64_t)i * runlen + b] = runs[i] + b;
	}
	free(runs);
	free(order);
}

static void check_tree_accounting(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
				  uint64_t free_before, uint64_t data_blocks)
{
	struct map_test_tree t;

	map_test_tree(img->fs, ino, in, &t);
	assert_int_equal(t.blocks, data_blocks);
	assert_int_equal(in->i_blocks_lo, sectors(img, data_blocks + t.nodes));
	assert_int_equal(map_test_free(img->fs), free_before - t.nodes);
}

static void deep_tree(uint32_t bs, void (*tweak)(struct ext4fs_mkfs_params *), unsigned n, int shuffled)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct map_test_tree t;
	uint64_t *model = calloc(n, sizeof(*model));
	uint64_t free0;
	uint32_t ino;

	assert_non_null(model);
	rw_image_open(&img, 16384, bs, tweak);
	ino = map_test_new_file(&img, "deep", &in);
	/* Up to the root's four extents: depth 0. */
	build_scattered(&img, ino, &in, 4, 1, 0, model);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.depth, 0);
	assert_int_equal(t.extents, 4);
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, 0, UINT64_MAX), 0);
	memset(model, 0, n * sizeof(*model));
	free0 = map_test_free(img.fs);
	build_scattered(&img, ino, &in, n, 1, shuffled, model);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, n);
	assert_int_equal(t.depth, 2);
	check_tree_accounting(&img, ino, &in, free0 - n, n);
	check_model(&img, ino, &in, model, n);
	set_size_blocks(&img, ino, &in, n);
	rw_image_assert_clean(&img);
	/* Everything goes: the free count comes back and the root is an empty leaf again. */
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, 0, UINT64_MAX), 0);
	assert_int_equal(map_test_free(img.fs), free0);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents + t.depth + t.nodes, 0);
	assert_int_equal(in.i_blocks_lo, 0);
	set_size_blocks(&img, ino, &in, 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(model);
}

/* The root holds 4 extents, a 1 KiB leaf 84: ~340 extents need two index levels. */
static void ascending_extents_grow_depth_1k(void **state)
{
	(void)state;
	deep_tree(1024, rw_tweak_1k, 700, 0);
}

static void shuffled_extents_grow_depth_1k(void **state)
{
	(void)state;
	deep_tree(1024, rw_tweak_1k, 700, 1);
}

static void shuffled_extents_grow_depth_1k_nocsum(void **state)
{
	(void)state;
	deep_tree(1024, rw_tweak_1k_gdt_csum, 500, 1);
}

/* 340 extents a 4 KiB leaf: two levels need over 1360. */
static void shuffled_extents_grow_depth_4k(void **state)
{
	(void)state;
	deep_tree(4096, NULL, 1700, 1);
}

static void ascending_extents_grow_depth_4k_nocsum(void **state)
{
	(void)state;
	deep_tree(4096, rw_tweak_no_csum, 1500, 0);
}

static void punch(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, uint64_t *model,
		  uint64_t nblk, uint64_t lblk, uint64_t len, uint64_t *data)
{
	assert_int_equal(ext4fs_bmap_unmap(img->fs, ino, in, lblk, len), 0);
	for (uint64_t l = lblk; l < nblk && l - lblk < len; l++) {
		*data -= model[l] != 0;
		model[l] = 0;
	}
}

static void punch_in_deep_tree(uint32_t bs, void (*tweak)(struct ext4fs_mkfs_params *), unsigned n)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct map_test_tree t;
	unsigned runlen = 3;
	uint64_t nblk = (uint64_t)n * runlen, data = nblk, free0;
	uint64_t *model = calloc(nblk, sizeof(*model));
	uint32_t ino;

	assert_non_null(model);
	rw_image_open(&img, 16384, bs, tweak);
	ino = map_test_new_file(&img, "punched", &in);
	free0 = map_test_free(img.fs);
	build_scattered(&img, ino, &in, n, runlen, 1, model);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.depth, 2);
	/* The middle block of one extent: it splits in two. */
	punch(&img, ino, &in, model, nblk, 100 * runlen + 1, 1, &data);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, n + 1);
	/* Middle blocks of many extents in a row: leaves fill up and split. */
	for (unsigned i = 0; i < 150; i++)
		punch(&img, ino, &in, model, nblk, (uint64_t)(n / 2 + i) * runlen + 1, 1, &data);
	check_tree_accounting(&img, ino, &in, free0 - data, data);
	check_model(&img, ino, &in, model, nblk);
	/* From the middle of one extent to the middle of a far one: whole leaves go. */
	punch(&img, ino, &in, model, nblk, 20 * runlen + 2, (uint64_t)(n / 3) * runlen, &data);
	/* The first blocks: the first key of every level moves up. */
	punch(&img, ino, &in, model, nblk, 0, 5, &data);
	check_tree_accounting(&img, ino, &in, free0 - data, data);
	check_model(&img, ino, &in, model, nblk);
	set_size_blocks(&img, ino, &in, nblk);
	rw_image_assert_clean(&img);
	/* Everything but the last extent: the tree collapses back into the inode. */
	punch(&img, ino, &in, model, nblk, 0, nblk - runlen, &data);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.depth, 0);
	assert_int_equal(t.extents, 1);
	check_tree_accounting(&img, ino, &in, free0 - data, data);
	check_model(&img, ino, &in, model, nblk);
	rw_image_assert_clean(&img);
	punch(&img, ino, &in, model, nblk, 0, UINT64_MAX, &data);
	assert_int_equal(map_test_free(img.fs), free0);
	assert_int_equal(in.i_blocks_lo, 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(model);
}

static void punch_holes_in_deep_tree_1k(void **state)
{
	(void)state;
	punch_in_deep_tree(1024, rw_tweak_1k, 600);
}

static void punch_holes_in_deep_tree_4k(void **state)
{
	(void)state;
	punch_in_deep_tree(4096, NULL, 1500);
}

static void expect_tree(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
			unsigned extents, unsigned unwritten)
{
	struct map_test_tree t;

	map_test_tree(img->fs, ino, in, &t);
	assert_int_equal(t.extents, extents);
	assert_int_equal(t.unwritten, unwritten);
}

static void unwritten_extents_convert_in_pieces(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint64_t pblk, p, run;
	uint32_t ino, got;
	int unwritten;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	ino = map_test_new_file(&img, "prealloc", &in);
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 0, 100, 100, 0, 1, &pblk, &got), 0);
	assert_int_equal(got, 100);
	expect_tree(&img, ino, &in, 1, 1);
	/* Unwritten blocks past i_size are allowed. */
	rw_image_assert_clean(&img);
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 10, 10), 0);
	expect_tree(&img, ino, &in, 3, 2);
	assert_int_equal(ext4fs_bmap(img.fs, ino, &in, 15, &p, &run, &unwritten), 0);
	assert_int_equal(p, pblk + 15);
	assert_int_equal(unwritten, 0);
	assert_int_equal(run, 5);
	/* Next to the written piece: it grows, nothing new appears. */
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 20, 10), 0);
	expect_tree(&img, ino, &in, 3, 2);
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 0, 10), 0);
	expect_tree(&img, ino, &in, 2, 1);
	/* A written block inside: four pieces in the root, a fifth grows the tree. */
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 50, 1), 0);
	expect_tree(&img, ino, &in, 4, 2);
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 70, 1), 0);
	expect_tree(&img, ino, &in, 6, 3);
	set_size_blocks(&img, ino, &in, 71);
	rw_image_assert_clean(&img);
	/* All written: one extent again. */
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 0, 100), 0);
	expect_tree(&img, ino, &in, 1, 0);
	/* Written and unwritten neighbours never merge. */
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 100, 10, 0, 0, 1, &p, &got), 0);
	expect_tree(&img, ino, &in, 2, 1);
	set_size_blocks(&img, ino, &in, 100);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void count_lengths(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
			  unsigned *lens, unsigned max)
{
	uint64_t l = 0, p, run;
	unsigned i = 0;
	int unwritten;

	/* Extent boundaries show up as the end of a mapped run from ext4fs_bmap. */
	while (i < max) {
		assert_int_equal(ext4fs_bmap(img->fs, ino, in, l, &p, &run, &unwritten), 0);
		if (!p)
			break;
		lens[i++] = (unsigned)run;
		l += run;
	}
	for (; i < max; i++)
		lens[i] = 0;
}

static void long_runs_respect_max_extent_lengths(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint64_t start, free0;
	uint32_t ino;
	unsigned lens[4];

	(void)state;
	rw_image_open(&img, 81920, 1024, k1_long_runs);
	ino = map_test_new_file(&img, "long", &in);
	free0 = map_test_free(img.fs);
	map_test_pick_runs(img.fs, 8192, 1, 70000, &start);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 0, start, 70000, 0), 0);
	count_lengths(&img, ino, &in, lens, 4);
	assert_int_equal(lens[0], 32768);
	assert_int_equal(lens[1], 32768);
	assert_int_equal(lens[2], 70000 - 65536);
	assert_int_equal(lens[3], 0);
	set_size_blocks(&img, ino, &in, 70000);
	rw_image_assert_clean(&img);
	/* Unwritten extents stop one block shorter. */
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, 0, UINT64_MAX), 0);
	assert_int_equal(map_test_free(img.fs), free0);
	map_test_pick_runs(img.fs, 8192, 1, 70000, &start);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 0, start, 70000, 1), 0);
	count_lengths(&img, ino, &in, lens, 4);
	assert_int_equal(lens[0], 32767);
	assert_int_equal(lens[1], 32767);
	assert_int_equal(lens[2], 70000 - 2 * 32767);
	/* Converting merges up to the written maximum, no further. */
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 0, 70000), 0);
	count_lengths(&img, ino, &in, lens, 4);
	assert_int_equal(lens[0] + lens[1] + lens[2] + lens[3], 70000);
	for (unsigned i = 0; i < 4; i++)
		assert_true(lens[i] <= 32768);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void special_inodes_are_refused(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint64_t pblk;
	uint32_t ino, got;

	(void)state;
	rw_image_open(&img, 4096, 4096, NULL);
	ino = map_test_new_file(&img, "inline", &in);
	in.i_flags = (in.i_flags & ~EXT4FS_EXTENTS_FL) | EXT4FS_INLINE_DATA_FL;
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 0, 1, 0, 0, 0, &pblk, &got), EXT4FS_E_INVALID_ARG);
	assert_non_null(strstr(ext4fs_errmsg(img.fs), "inline"));
	in.i_flags = 0;
	in.i_mode = EXT4FS_S_IFCHR | 0600;
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, 0, 1), EXT4FS_E_INVALID_ARG);
	rw_image_close(&img);
}

/* -- running out of space for tree blocks -- */

struct filler {
	uint64_t start[4096];
	uint64_t count[4096];
	unsigned n;
};

/* Mark every free block in use, remembering the runs. */
static void fill_up(struct ext4fs_fs *fs, struct filler *f)
{
	const struct ext4fs_bitmap *bm;
	uint64_t last = ext4fs_geom(fs)->blocks_count - 1, b = ext4fs_geom(fs)->first_data_block, e;

	assert_int_equal(ext4fs_fs_block_bitmap(fs, &bm), 0);
	f->n = 0;
	while (b <= last && ext4fs_bitmap_find(bm, b, last, 0, &b) == 0) {
		if (ext4fs_bitmap_find(bm, b, last, 1, &e) != 0)
			e = last + 1;
		assert_true(f->n < 4096);
		f->start[f->n] = b;
		f->count[f->n++] = e - b;
		assert_int_equal(ext4fs_blocks_mark_used(fs, b, e - b), 0);
		b = e;
	}
	assert_int_equal(map_test_free(fs), 0);
}

static void drain(struct ext4fs_fs *fs, struct filler *f)
{
	for (unsigned i = 0; i < f->n; i++)
		assert_int_equal(ext4fs_blocks_mark_free(fs, f->start[i], f->count[i]), 0);
	f->n = 0;
}

/* Nothing may change when the block a change needs cannot be had. */
static void expect_unchanged(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *before,
			     struct ext4fs_inode *in, int rc)
{
	struct ext4fs_inode disk;

	assert_int_equal(rc, EXT4FS_E_NO_SPACE);
	assert_memory_equal(in->i_block, before->i_block, sizeof(in->i_block));
	assert_int_equal(in->i_blocks_lo, before->i_blocks_lo);
	assert_int_equal(ext4fs_inode_read(img->fs, ino, &disk), 0);
	assert_memory_equal(disk.i_block, before->i_block, sizeof(disk.i_block));
}

static void no_space_for_tree_blocks_changes_nothing(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in, before;
	struct map_test_tree t;
	struct filler *f = malloc(sizeof(*f));
	uint64_t model[400] = { 0 }, spare[3], pblk;
	uint32_t ino, got;

	(void)state;
	assert_non_null(f);
	rw_image_open(&img, 8192, 1024, rw_tweak_1k);
	ino = map_test_new_file(&img, "tight", &in);
	build_scattered(&img, ino, &in, 4, 3, 0, model);
	map_test_pick_runs(img.fs, 6000, 3, 1, spare);
	fill_up(img.fs, f);
	/* A fifth extent needs a tree block: refused, nothing changed. */
	before = in;
	expect_unchanged(&img, ino, &before, &in, ext4fs_bmap_set(img.fs, ino, &in, 100, spare[0], 1, 0));
	/* Splitting an extent by a hole would need a fifth root slot: the same. */
	expect_unchanged(&img, ino, &before, &in, ext4fs_bmap_unmap(img.fs, ino, &in, 1, 1));
	/* And allocating data finds no block at all. */
	expect_unchanged(&img, ino, &before, &in, ext4fs_bmap_alloc(img.fs, ino, &in, 50, 1, 0, 0, 0, &pblk, &got));
	check_model(&img, ino, &in, model, 400);
	drain(img.fs, f);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 100, spare[0], 1, 0), 0);
	model[100] = spare[0];
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.depth, 1);
	/* Fill a leaf to the brim, then an unwritten extent converted in its middle needs two
	   more slots: refused while full, done once there is room. */
	for (unsigned i = 0; i < 84 - 6; i++) {
		uint64_t b;
		map_test_pick_runs(img.fs, 6000, 1, 1, &b);
		assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 200 + 2 * i, b, 1, 0), 0);
		model[200 + 2 * i] = b;
	}
	uint64_t run3;
	map_test_pick_runs(img.fs, 6000, 1, 3, &run3);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 150, run3, 3, 1), 0);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, 84);
	assert_int_equal(t.depth, 1);
	fill_up(img.fs, f);
	before = in;
	expect_unchanged(&img, ino, &before, &in, ext4fs_bmap_mark_written(img.fs, ino, &in, 151, 1));
	drain(img.fs, f);
	assert_int_equal(ext4fs_bmap_mark_written(img.fs, ino, &in, 151, 1), 0);
	for (unsigned b = 0; b < 3; b++)
		model[150 + b] = run3 + b;
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, 86);
	assert_int_equal(t.unwritten, 2);
	check_model(&img, ino, &in, model, 400);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, spare[1], 1), 0);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, spare[2], 1), 0);
	set_size_blocks(&img, ino, &in, 400);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(f);
}

static void corrupt_node_is_reported_not_changed(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint64_t model[700] = { 0 }, leaf, pblk, free0;
	uint32_t ino, got;
	unsigned char *buf = malloc(1024);

	(void)state;
	assert_non_null(buf);
	rw_image_open(&img, 8192, 1024, rw_tweak_1k);
	ino = map_test_new_file(&img, "corrupt", &in);
	build_scattered(&img, ino, &in, 20, 1, 0, model);
	/* The root points at one leaf; flip a byte of an extent in it. */
	leaf = in.i_block[12 + 4] | in.i_block[12 + 5] << 8 | (uint64_t)in.i_block[12 + 6] << 16 |
	       (uint64_t)in.i_block[12 + 7] << 24;
	assert_int_equal(ext4fs_block_read(img.fs, leaf, buf), 0);
	buf[12 + 12 * 3 + 4] ^= 0x40;
	assert_int_equal(ext4fs_block_write(img.fs, leaf, buf), 0);
	free0 = map_test_free(img.fs);
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 500, 1, 0, 0, 0, &pblk, &got), EXT4FS_E_EXTENT_CSUM);
	assert_non_null(strstr(ext4fs_errmsg(img.fs), "checksum"));
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, 0, 5), EXT4FS_E_EXTENT_CSUM);
	assert_int_equal(map_test_free(img.fs), free0);
	rw_image_close(&img);
	free(buf);
}

/* -- indirect maps -- */

static void indirect_map_through_all_levels(uint32_t bs, void (*tweak)(struct ext4fs_mkfs_params *))
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint64_t per = bs / 4, free0, pblk, p, run;
	uint64_t far = 12 + per + per * per + 3 * per + 7;   /* in the triple indirect range */
	uint64_t n = 12 + per + 40, data = 0;
	uint64_t *model = calloc(n, sizeof(*model));
	uint32_t ino, got;

	assert_non_null(model);
	rw_image_open(&img, 16384, bs, tweak);
	ino = map_test_new_file(&img, "blockmap", &in);
	assert_false(ext4fs_inode_has_extents(&in));
	free0 = map_test_free(img.fs);
	for (uint64_t l = 0; l < n; l += got) {
		assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, l, (uint32_t)(n - l), n, 0, 0, &pblk, &got), 0);
		assert_true(got >= 1);
		/* A request never runs past the end of the direct slots or of an indirect block. */
		assert_true(l >= 12 || l + got <= 12);
		for (uint32_t i = 0; i < got; i++)
			model[l + i] = pblk + i;
		data += got;
	}
	/* The single indirect block sits just before the data it maps, as ext2/3 place it. */
	assert_int_equal(model[12], (uint64_t)(in.i_block[48] | in.i_block[49] << 8 | in.i_block[50] << 16 |
					       (uint64_t)in.i_block[51] << 24) + 1);
	/* One single indirect block, one double with one single under it. */
	assert_int_equal(in.i_blocks_lo, sectors(&img, data + 3));
	assert_int_equal(map_test_free(img.fs), free0 - data - 3);
	check_model(&img, ino, &in, model, n);
	/* A block in the triple indirect range needs three more indirect blocks. */
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, far, 5, 0, 0, 0, &pblk, &got), 0);
	assert_int_equal(in.i_blocks_lo, sectors(&img, data + got + 3 + 3));
	assert_int_equal(ext4fs_bmap(img.fs, ino, &in, far, &p, &run, NULL), 0);
	assert_int_equal(p, pblk);
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, far, 1, 0, 0, 0, &pblk, &got), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, 0, 1, 0, 0, 1, &pblk, &got), EXT4FS_E_INVALID_ARG);
	set_size_blocks(&img, ino, &in, far + 5);
	rw_image_assert_clean(&img);
	/* The far blocks go, and the three indirect blocks with them. */
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, far - 10, 100), 0);
	assert_int_equal(in.i_blocks_lo, sectors(&img, data + 3));
	/* A hole across the direct/indirect boundary, and the caller's own blocks mapped into it. */
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, 10, 5), 0);
	for (uint64_t l = 10; l < 15; l++)
		model[l] = 0;
	data -= 5;
	check_model(&img, ino, &in, model, n);
	uint64_t mine;
	map_test_pick_runs(img.fs, 1000, 1, 5, &mine);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 10, mine, 5, 0), 0);
	for (uint64_t l = 10; l < 15; l++)
		model[l] = mine + (l - 10);
	data += 5;
	check_model(&img, ino, &in, model, n);
	assert_int_equal(in.i_blocks_lo, sectors(&img, data + 3));
	set_size_blocks(&img, ino, &in, n);
	rw_image_assert_clean(&img);
	/* Everything: the indirect blocks are freed too. */
	assert_int_equal(ext4fs_bmap_unmap(img.fs, ino, &in, 0, UINT64_MAX), 0);
	for (unsigned i = 0; i < 60; i++)
		assert_int_equal(in.i_block[i], 0);
	assert_int_equal(in.i_blocks_lo, 0);
	assert_int_equal(map_test_free(img.fs), free0);
	set_size_blocks(&img, ino, &in, 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(model);
}

static void indirect_map_1k(void **state)
{
	(void)state;
	indirect_map_through_all_levels(1024, rw_tweak_ext3ish_1k);
}

static void indirect_map_4k(void **state)
{
	(void)state;
	indirect_map_through_all_levels(4096, rw_tweak_ext3ish_4k);
}

/* -- moving one mapping block (ext4fs_bmap_move_map_block) -- */

struct nth_map_block {
	unsigned want, seen;
	uint64_t blk;
	enum ext4fs_block_kind kind;
};

static int find_nth_map_block(const struct ext4fs_block_visit *v, void *arg)
{
	struct nth_map_block *f = arg;

	if (v->kind != EXT4FS_BLOCK_DATA && f->seen++ == f->want) {
		f->blk = v->pblk;
		f->kind = v->kind;
		return 1;
	}
	return 0;
}

/* Move the want-th mapping block (walk order) to a fresh block; the map must read the same, the old block be unused. */
static void move_nth_map_block(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, unsigned want,
			       enum ext4fs_block_kind kind, const uint64_t *model, uint64_t n)
{
	struct nth_map_block f = { .want = want }, again;
	uint64_t fresh, free0 = map_test_free(img->fs);

	assert_int_equal(ext4fs_block_iterate(img->fs, ino, in, 0, find_nth_map_block, &f), 1);
	assert_int_equal(f.kind, kind);
	map_test_pick_runs(img->fs, ext4fs_geom(img->fs)->blocks_count / 2, 1, 1, &fresh);
	assert_int_equal(ext4fs_bmap_move_map_block(img->fs, ino, in, f.blk, fresh), 0);
	check_model(img, ino, in, model, n);
	again = (struct nth_map_block){ .want = want };
	assert_int_equal(ext4fs_block_iterate(img->fs, ino, in, 0, find_nth_map_block, &again), 1);
	assert_int_equal(again.blk, fresh);
	/* The old block no longer belongs to the file: moving it again is refused, freeing it leaves a clean image. */
	assert_int_equal(ext4fs_bmap_move_map_block(img->fs, ino, in, f.blk, fresh + 2), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_blocks_mark_free(img->fs, f.blk, 1), 0);
	assert_int_equal(map_test_free(img->fs), free0);
}

static void move_map_blocks_of_extent_tree(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct map_test_tree t;
	unsigned n = 700;   /* more leaves than the root holds: depth 2 */
	uint64_t *model = calloc(n, sizeof(*model));
	uint32_t ino;

	(void)state;
	assert_non_null(model);
	rw_image_open(&img, 16384, 1024, rw_tweak_1k);
	ino = map_test_new_file(&img, "tree", &in);
	build_scattered(&img, ino, &in, n, 1, 1, model);
	set_size_blocks(&img, ino, &in, n);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.depth, 2);
	/* A leaf (its parent an index block), then the first index block (its parent the root). */
	move_nth_map_block(&img, ino, &in, 2, EXT4FS_BLOCK_EXTENT_NODE, model, n);
	move_nth_map_block(&img, ino, &in, 0, EXT4FS_BLOCK_EXTENT_NODE, model, n);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(model);
}

static void move_map_blocks_of_indirect_map(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint64_t per = 256, n = 12 + per + 2 * per + 5, pblk;
	uint64_t *model = calloc(n, sizeof(*model));
	uint32_t ino, got;

	(void)state;
	assert_non_null(model);
	rw_image_open(&img, 16384, 1024, rw_tweak_ext3ish_1k);
	ino = map_test_new_file(&img, "ind", &in);
	for (uint64_t l = 0; l < n; l += got) {
		assert_int_equal(ext4fs_bmap_alloc(img.fs, ino, &in, l, (uint32_t)(n - l), n, 0, 0, &pblk, &got), 0);
		for (uint32_t i = 0; i < got; i++)
			model[l + i] = pblk + i;
	}
	set_size_blocks(&img, ino, &in, n);
	/* Walk order: IND, DIND, its first IND, its second IND. */
	move_nth_map_block(&img, ino, &in, 3, EXT4FS_BLOCK_IND, model, n);
	move_nth_map_block(&img, ino, &in, 1, EXT4FS_BLOCK_DIND, model, n);
	move_nth_map_block(&img, ino, &in, 0, EXT4FS_BLOCK_IND, model, n);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(model);
}

/*
 * Damaged maps that repeat a block: each node of a depth-5 tree lists the
 * next one under every one of its entries, an index node lists itself, a
 * triple indirect block lists one double indirect block under every slot
 * (and that one a single).  The search for a block that is not there once
 * visited entries^depth nodes (340^4 for the tree; the self-listing node
 * was followed to depth 8 with no depth check): a hang, cut short here by
 * an alarm.  Each block is searched once now, a node only at the depth its
 * parent implies, and a block that is there is still found (issue 20).
 */
static void put_le32(unsigned char *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void make_node(unsigned char *b, uint32_t bs, unsigned depth, unsigned entries, uint64_t child)
{
	struct ext4fs_extent_header h = { EXT4FS_EXTENT_MAGIC, (uint16_t)entries,
					  (uint16_t)ext4fs_extent_node_room(bs), (uint16_t)depth };

	memset(b, 0, bs);
	ext4fs_extent_node_set_header(b, &h);
	for (unsigned i = 0; i < entries; i++) {
		struct ext4fs_extent_entry e = { .lblk = i, .pblk = child };
		ext4fs_extent_node_set_entry(b, i, 0, &e);
	}
}

static void move_map_block_in_repeating_maps(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct ext4fs_extent_entry e;
	uint32_t bs = 4096, per = bs / 4, ino;
	uint64_t b[8];
	unsigned char *buf = malloc(bs);

	(void)state;
	assert_non_null(buf);
	alarm(30);
	rw_image_open(&img, 32768, bs, NULL);
	struct ext4fs_fs *fs = img.fs;
	unsigned room = ext4fs_extent_node_room(bs);
	ino = map_test_new_file(&img, "loops", &in);
	map_test_pick_runs(fs, 1000, 8, 1, b);

	/* Root (depth 5) -> b[4] -> b[3] -> b[2] -> b[1] -> leaf b[0], every entry to the next node. */
	for (unsigned k = 0; k <= 4; k++) {
		make_node(buf, bs, k, k ? room : 0, k ? b[k - 1] : 0);
		assert_int_equal(ext4fs_block_write(fs, b[k], buf), 0);
	}
	make_node(in.i_block, sizeof(in.i_block), 5, 1, b[4]);
	assert_int_equal(ext4fs_inode_write(fs, ino, &in), 0);
	assert_int_equal(ext4fs_bmap_move_map_block(fs, ino, &in, b[5], b[6]), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_bmap_move_map_block(fs, ino, &in, b[0], b[6]), 0);
	assert_int_equal(ext4fs_block_read(fs, b[1], buf), 0);
	ext4fs_extent_node_entry(buf, 0, 0, &e);
	assert_int_equal(e.pblk, b[6]);
	ext4fs_extent_node_entry(buf, 1, 0, &e);
	assert_int_equal(e.pblk, b[0]);

	/* Root (depth 2) -> b[7], a depth-1 node whose every entry is b[7] itself. */
	make_node(buf, bs, 1, room, b[7]);
	assert_int_equal(ext4fs_block_write(fs, b[7], buf), 0);
	make_node(in.i_block, sizeof(in.i_block), 2, 1, b[7]);
	assert_int_equal(ext4fs_inode_write(fs, ino, &in), 0);
	assert_int_equal(ext4fs_bmap_move_map_block(fs, ino, &in, b[5], b[6]), EXT4FS_E_INVALID_ARG);

	/* A block map: triple indirect b[2] -> b[1] under every slot, b[1] -> b[0] likewise. */
	in.i_flags &= ~(uint32_t)EXT4FS_EXTENTS_FL;
	memset(in.i_block, 0, sizeof(in.i_block));
	for (unsigned k = 1; k <= 2; k++) {
		for (uint32_t i = 0; i < per; i++)
			put_le32(buf + 4 * i, (uint32_t)b[k - 1]);
		assert_int_equal(ext4fs_block_write(fs, b[k], buf), 0);
	}
	put_le32(in.i_block + 4 * 14, (uint32_t)b[2]);
	assert_int_equal(ext4fs_inode_write(fs, ino, &in), 0);
	assert_int_equal(ext4fs_bmap_move_map_block(fs, ino, &in, b[5], b[6]), EXT4FS_E_INVALID_ARG);

	/* Leave the file empty for the close. */
	memset(in.i_block, 0, sizeof(in.i_block));
	assert_int_equal(ext4fs_inode_write(fs, ino, &in), 0);
	alarm(0);
	free(buf);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alloc_in_one_request_is_one_extent),
		cmocka_unit_test(ascending_extents_grow_depth_1k),
		cmocka_unit_test(shuffled_extents_grow_depth_1k),
		cmocka_unit_test(shuffled_extents_grow_depth_1k_nocsum),
		cmocka_unit_test(shuffled_extents_grow_depth_4k),
		cmocka_unit_test(ascending_extents_grow_depth_4k_nocsum),
		cmocka_unit_test(punch_holes_in_deep_tree_1k),
		cmocka_unit_test(punch_holes_in_deep_tree_4k),
		cmocka_unit_test(unwritten_extents_convert_in_pieces),
		cmocka_unit_test(long_runs_respect_max_extent_lengths),
		cmocka_unit_test(special_inodes_are_refused),
		cmocka_unit_test(no_space_for_tree_blocks_changes_nothing),
		cmocka_unit_test(corrupt_node_is_reported_not_changed),
		cmocka_unit_test(indirect_map_1k),
		cmocka_unit_test(indirect_map_4k),
		cmocka_unit_test(move_map_blocks_of_extent_tree),
		cmocka_unit_test(move_map_blocks_of_indirect_map),
		cmocka_unit_test(move_map_block_in_repeating_maps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
