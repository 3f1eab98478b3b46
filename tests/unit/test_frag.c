/*
 * test_frag.c - the fragmentation measures (frag.h) over files whose blocks
 * the tests place themselves, so every figure is known in advance: a
 * file's extents (merged across written/unwritten and across holes only
 * where the disk continues), mapping records, ideals, first and last
 * blocks; e4defrag -c's score against figures worked out by hand; the
 * free-space walk against a block-by-block count; a directory's locality
 * and the seeks of reading a tree, also through a cycle.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/frag.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/mkfs.h"
#include "../lib/map_test.h"

/* One run of len free blocks from block `from` on, marked in use: its first block. */
static uint64_t pick(struct rw_image *img, uint64_t from, unsigned len)
{
	uint64_t b;

	map_test_pick_runs(img->fs, from, 1, len, &b);
	return b;
}

static void set_size(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, uint64_t bytes)
{
	ext4fs_inode_set_size(in, bytes);
	assert_int_equal(ext4fs_inode_write(img->fs, ino, in), 0);
}

static uint32_t new_node(struct rw_image *img, uint32_t dir, const char *name, uint16_t type)
{
	struct ext4fs_new_attrs a = { .mode = (uint16_t)(type | 0755), .uid = 0, .gid = 0 };
	uint32_t ino;

	if (type == EXT4FS_S_IFDIR)
		assert_int_equal(ext4fs_mkdir(img->fs, dir, name, &a, &ino), 0);
	else
		assert_int_equal(ext4fs_mknod(img->fs, dir, name, &a, &ino), 0);
	return ino;
}

static void read_inode(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in)
{
	assert_int_equal(ext4fs_inode_read(img->fs, ino, in), 0);
}

/* -- one file -- */

/*
 * Logical 0-9 written and 10-19 unwritten, physically one run: two mapping
 * records, one extent.  30-34 after a hole of 10, right after 19 on disk:
 * a new extent (the disk did not skip the hole's 10 blocks).  35-39 after
 * a gap on disk: a new extent.  50-54 after a hole of 10, 10 blocks after
 * 39's successor on disk: the same extent, but a new e4defrag run.
 */
static void test_file_extents(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct ext4fs_frag_file f;
	uint64_t base, far;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	ino = map_test_new_file(&img, "frag", &in);
	assert_int_equal(ext4fs_frag_file(img.fs, ino, &in, &f), 0);
	assert_int_equal(f.blocks, 0);
	assert_int_equal(f.extents, 0);
	assert_int_equal(f.ideal, 0);
	assert_int_equal(f.ideal_e4defrag, 0);

	base = pick(&img, 4000, 25);
	far = pick(&img, base + 30, 5);
	assert_true(far > base + 25);
	assert_int_equal(pick(&img, far + 15, 5), far + 15);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 0, base, 10, 0), 0);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 10, base + 10, 10, 1), 0);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 30, base + 20, 5, 0), 0);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 35, far, 5, 0), 0);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 50, far + 15, 5, 0), 0);
	set_size(&img, ino, &in, 55 * 4096);

	assert_int_equal(ext4fs_frag_file(img.fs, ino, &in, &f), 0);
	assert_int_equal(f.blocks, 35);
	assert_int_equal(f.unwritten_blocks, 10);
	assert_int_equal(f.extents, 3);
	assert_int_equal(f.e4defrag_extents, 4);
	assert_int_equal(f.map_extents, 5);
	assert_int_equal(f.ideal, 1);
	assert_int_equal(f.ideal_e4defrag, 1);
	assert_int_equal(f.first_pblk, base);
	assert_int_equal(f.last_pblk, far + 19);
	assert_int_equal(f.map_blocks, 1);                    /* five extents leave the inode for a leaf */
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* No journal and no backups, 1 KiB blocks: long free runs, 8192 blocks a group, flex_bg of 16. */
static void k1_long_runs(struct ext4fs_mkfs_params *p)
{
	p->block_size = 1024;
	p->feature_compat = (p->feature_compat & ~EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) |
			    EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2;
	p->num_backup_sb = 0;
}

/*
 * 70000 contiguous blocks: three leaf extents (32768 at most each), one
 * extent, an ideal of 3; FIEMAP, once the kernel's extent cache holds the
 * file, shows one (the cache merges neighbours that continue each other);
 * e4defrag's best is one per flex group of 16 * 8192 blocks.
 */
static void test_file_long(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct ext4fs_frag_file f;
	uint64_t base;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 81920, 1024, k1_long_runs);
	ino = map_test_new_file(&img, "long", &in);
	base = pick(&img, 2000, 70000);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 0, base, 70000, 0), 0);
	set_size(&img, ino, &in, 70000ULL * 1024);
	assert_int_equal(ext4fs_frag_file(img.fs, ino, &in, &f), 0);
	assert_int_equal(f.blocks, 70000);
	assert_int_equal(f.extents, 1);
	assert_int_equal(f.e4defrag_extents, 1);
	assert_int_equal(f.map_extents, 1);
	assert_int_equal(f.ideal, 3);
	assert_int_equal(f.ideal_e4defrag, 1);
	assert_int_equal(f.first_pblk, base);
	assert_int_equal(f.last_pblk, base + 69999);
	rw_image_close(&img);
}

/*
 * A block-mapped file (1 KiB blocks: 256 numbers an indirect block), its
 * 300 data blocks one run on disk: one extent and one FIEMAP record across
 * the mapping blocks' boundaries, three mapping blocks (the single
 * indirect, the double indirect and one under it).  No flex_bg: e4defrag's
 * best is one per group of 8192 blocks.  Then a block after a hole where
 * the disk continues: the same extent, a new FIEMAP record.
 */
static void test_file_indirect(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct ext4fs_frag_file f;
	uint64_t base;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 16384, 1024, rw_tweak_ext3ish_1k);
	ino = map_test_new_file(&img, "ind", &in);
	assert_false(ext4fs_inode_has_extents(&in));
	base = pick(&img, 9000, 300);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 0, base, 300, 0), 0);
	set_size(&img, ino, &in, 300 * 1024);
	assert_int_equal(ext4fs_frag_file(img.fs, ino, &in, &f), 0);
	assert_int_equal(f.blocks, 300);
	assert_int_equal(f.extents, 1);
	assert_int_equal(f.e4defrag_extents, 1);
	assert_int_equal(f.map_extents, 1);
	assert_int_equal(f.map_blocks, 3);
	assert_int_equal(f.ideal, 1);
	assert_int_equal(f.ideal_e4defrag, 1);
	assert_int_equal(f.first_pblk, base);
	assert_int_equal(f.last_pblk, base + 299);

	assert_int_equal(pick(&img, base + 310, 1), base + 310);
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 310, base + 310, 1, 0), 0);
	assert_int_equal(ext4fs_frag_file(img.fs, ino, &in, &f), 0);
	assert_int_equal(f.extents, 1);
	assert_int_equal(f.e4defrag_extents, 2);
	assert_int_equal(f.map_extents, 2);

	/* Logical 311 far away on disk: a new extent and a new record. */
	assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, 311, pick(&img, 12000, 1), 1, 0), 0);
	assert_int_equal(ext4fs_frag_file(img.fs, ino, &in, &f), 0);
	assert_int_equal(f.extents, 2);
	assert_int_equal(f.map_extents, 3);
	set_size(&img, ino, &in, 312 * 1024);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* Inline data and fast symlinks have no blocks. */
static void test_file_no_blocks(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct ext4fs_frag_file f;
	struct ext4fs_new_attrs a = { .mode = 0777 };
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 4096, 4096, NULL);
	assert_int_equal(ext4fs_symlink(img.fs, EXT4FS_ROOT_INO, "fast", "target", &a, &ino), 0);
	read_inode(&img, ino, &in);
	memset(&f, 0xff, sizeof(f));
	assert_int_equal(ext4fs_frag_file(img.fs, ino, &in, &f), 0);
	assert_int_equal(f.blocks, 0);
	assert_int_equal(f.extents, 0);
	assert_int_equal(f.map_extents, 0);
	assert_int_equal(f.first_pblk, 0);
	rw_image_close(&img);
}

/* -- e4defrag -c's score -- */

static struct ext4fs_frag_file fig(uint64_t blocks, uint64_t now, uint64_t e4d, uint64_t best)
{
	struct ext4fs_frag_file f = { 0 };

	f.blocks = blocks;
	f.map_extents = now;
	f.extents = e4d;
	f.e4defrag_extents = e4d;
	f.ideal_e4defrag = best;
	f.ideal = (blocks + 32767) / 32768;
	return f;
}

static void test_score(void **state)
{
	struct ext4fs_frag_score s;
	struct ext4fs_frag_score_row row;
	struct ext4fs_frag_score_summary sum;
	struct ext4fs_frag_file a = fig(100, 10, 9, 1), b = fig(50, 1, 1, 1), none = fig(0, 0, 0, 0);
	struct ext4fs_inode in = { 0 };

	(void)state;
	ext4fs_frag_score_init(&s);
	assert_int_equal(ext4fs_frag_score_summary(&s, 4096, &sum), EXT4FS_E_INVALID_ARG);

	ext4fs_frag_score_add(&s, &a, 4096, &row);
	assert_int_equal(row.now, 10);
	assert_int_equal(row.best, 1);
	assert_int_equal(row.size_per_extent_kb, 40);        /* 100 * 4 / 10 */
	assert_true(row.ratio == 8.0f);                       /* (9 - 1) * 100 / 100 */
	ext4fs_frag_score_add(&s, &b, 4096, &row);
	assert_int_equal(row.size_per_extent_kb, 200);
	ext4fs_frag_score_add(&s, &none, 4096, &row);
	assert_int_equal(row.now, 0);
	assert_int_equal(s.files, 2);
	assert_int_equal(s.blocks, 150);
	assert_int_equal(s.ideal_extents, 2);

	/* ratio (11 - 2) * 100 / 150 = 6: at most 10, so the score is 8 * 6. */
	assert_int_equal(ext4fs_frag_score_summary(&s, 4096, &sum), 0);
	assert_int_equal(sum.total_extents, 11);
	assert_int_equal(sum.best_extents, 2);
	assert_int_equal(sum.size_per_extent_kb, 54);         /* 150 * 4 / 11 */
	assert_true(sum.score == 48.0f);
	assert_false(sum.needs_defrag);

	/* ratio (6 - 1) * 100 / 20 = 25: above 10, so 80 + 20 * 25 / 100 = 85. */
	ext4fs_frag_score_init(&s);
	a = fig(20, 6, 6, 1);
	ext4fs_frag_score_add(&s, &a, 1024, &row);
	assert_int_equal(ext4fs_frag_score_summary(&s, 1024, &sum), 0);
	assert_true(sum.score == 85.0f);
	assert_true(sum.needs_defrag);
	assert_int_equal(sum.size_per_extent_kb, 3);          /* 20 * 1 / 6 */

	/* At the bend: ratio 10 is still 8 * 10; 11 is 80 + 20 * 11 / 100. */
	ext4fs_frag_score_init(&s);
	a = fig(100, 11, 11, 1);
	ext4fs_frag_score_add(&s, &a, 4096, &row);
	assert_int_equal(ext4fs_frag_score_summary(&s, 4096, &sum), 0);
	assert_true(sum.score == 80.0f);
	ext4fs_frag_score_init(&s);
	a = fig(100, 12, 12, 1);
	ext4fs_frag_score_add(&s, &a, 4096, &row);
	assert_int_equal(ext4fs_frag_score_summary(&s, 4096, &sum), 0);
	assert_true(sum.score == 80 + 20 * 11.0f / 100);

	/* Which files e4defrag counts: regular, not empty, with blocks. */
	in.i_mode = EXT4FS_S_IFREG | 0644;
	ext4fs_inode_set_size(&in, 1);
	assert_true(ext4fs_frag_score_counts(&in, &a));
	assert_false(ext4fs_frag_score_counts(&in, &none));
	ext4fs_inode_set_size(&in, 0);
	assert_false(ext4fs_frag_score_counts(&in, &a));
	in.i_mode = EXT4FS_S_IFDIR | 0755;
	ext4fs_inode_set_size(&in, 4096);
	assert_false(ext4fs_frag_score_counts(&in, &a));
}

/* -- free space -- */

/* The free runs counted one block at a time, as the oracle. */
static void count_free_runs(struct ext4fs_fs *fs, uint64_t large_blocks, uint64_t *extents, uint64_t *min,
			    uint64_t *max, uint64_t *sum, uint64_t *large, uint64_t hist[EXT4FS_FRAG_FREE_HIST])
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	const struct ext4fs_bitmap *bm;
	uint64_t run = 0;

	assert_int_equal(ext4fs_fs_block_bitmap(fs, &bm), 0);
	*extents = *max = *sum = *large = 0;
	*min = UINT64_MAX;
	memset(hist, 0, EXT4FS_FRAG_FREE_HIST * sizeof(*hist));
	for (uint64_t b = geo->first_data_block; b <= geo->blocks_count; b++) {
		int used = b == geo->blocks_count || ext4fs_bitmap_test(bm, b) == 1;
		if (!used) {
			run++;
			continue;
		}
		if (run) {
			unsigned idx = 0;
			while ((2ULL << idx) <= run)
				idx++;
			hist[idx + 1 < EXT4FS_FRAG_FREE_HIST ? idx + 1 : EXT4FS_FRAG_FREE_HIST - 1]++;
			(*extents)++;
			*sum += run;
			*min = run < *min ? run : *min;
			*max = run > *max ? run : *max;
			if (run >= large_blocks)
				*large += run;
		}
		run = 0;
	}
}

static void test_free_scan(void **state)
{
	struct rw_image img;
	struct ext4fs_frag_free ff;
	const struct ext4fs_bitmap *bm;
	uint64_t extents, min, max, sum, large, hist[EXT4FS_FRAG_FREE_HIST], free_chunks = 0;
	const struct ext4fs_geom *geo;

	(void)state;
	/* A short last chunk (16380 = 255 * 64 + 60), free but never counted free. */
	rw_image_open(&img, 16380, 1024, rw_tweak_1k);
	geo = ext4fs_geom(img.fs);
	/* Holes of 1, 3 and 700 blocks between used ones, and a long used stretch. */
	pick(&img, 5000, 1);
	pick(&img, 5002, 2);
	pick(&img, 5008, 1);
	pick(&img, 5709, 400);
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);

	assert_int_equal(ext4fs_frag_free_scan(img.fs, bm, 64 * 1024, 512 * 1024, &ff), 0);
	count_free_runs(img.fs, 512, &extents, &min, &max, &sum, &large, hist);
	assert_int_equal(ff.extents, extents);
	assert_int_equal(ff.min, min);
	assert_int_equal(ff.max, max);
	assert_int_equal(ff.sum, sum);
	assert_int_equal(ff.large_bytes, 512 * 1024);
	assert_int_equal(ff.large_blocks, large);
	assert_true(large > 0 && large < sum);
	for (unsigned i = 0; i < EXT4FS_FRAG_FREE_HIST; i++)
		assert_int_equal(ff.hist_extents[i], hist[i]);

	/* A free extent of exactly the large size counts (the 700 blocks between 5008 and 5709). */
	assert_int_equal(ext4fs_frag_free_scan(img.fs, bm, 0, 700 * 1024, &ff), 0);
	count_free_runs(img.fs, 700, &extents, &min, &max, &sum, &large, hist);
	assert_int_equal(ext4fs_bitmap_count_set(bm, 5009, 5708), 0);
	assert_int_equal(ext4fs_bitmap_test(bm, 5709), 1);
	assert_int_equal(ff.large_blocks, large);
	assert_true(large >= 700);
	assert_int_equal(ext4fs_frag_free_scan(img.fs, bm, 64 * 1024, 512 * 1024, &ff), 0);

	/* Chunks of 64 blocks: chunk 0 tested from the first data block; the last may be short. */
	assert_int_equal(ff.chunk_blocks, 64);
	assert_int_equal(ff.total_chunks, (geo->blocks_count + 64) >> 6);
	for (uint64_t c = 0; c * 64 < geo->blocks_count; c++) {
		uint64_t from = c ? c * 64 : geo->first_data_block, to = c * 64 + 63, hit;
		if (to >= geo->blocks_count)
			break;
		if (ext4fs_bitmap_find(bm, from, to, 1, &hit) != 0)
			free_chunks++;
	}
	assert_int_equal(ff.free_chunks, free_chunks);

	/* Without a chunk size nothing is counted; the default large size is 64 MiB. */
	assert_int_equal(ext4fs_frag_free_scan(img.fs, bm, 0, 0, &ff), 0);
	assert_int_equal(ff.free_chunks, 0);
	assert_int_equal(ff.large_bytes, 64ULL << 20);
	assert_int_equal(ff.large_blocks, 0);
	assert_int_equal(ff.extents, extents);
	assert_int_equal(ext4fs_frag_free_scan(img.fs, bm, 512, 0, &ff), EXT4FS_E_INVALID_ARG);

	/* With no bitmap given, the one on disk is read: the same after a flush. */
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_frag_free_scan(img.fs, NULL, 0, 0, &ff), 0);
	assert_int_equal(ff.extents, extents);
	assert_int_equal(ff.sum, sum);
	rw_image_close(&img);
}

/* -- directories -- */

/* 1 KiB blocks, groups of 1024 blocks, flex groups of 4 groups. */
static void small_groups(struct ext4fs_mkfs_params *p)
{
	rw_tweak_1k(p);
	p->blocks_per_group = 1024;
	p->log_groups_per_flex = 2;
}

/* A file in dir with n blocks at pblk (n 0: none). */
static uint32_t placed_file(struct rw_image *img, uint32_t dir, const char *name, uint64_t pblk, unsigned n)
{
	uint32_t ino = new_node(img, dir, name, EXT4FS_S_IFREG);
	struct ext4fs_inode in;

	read_inode(img, ino, &in);
	if (n) {
		assert_int_equal(ext4fs_bmap_set(img->fs, ino, &in, 0, pblk, n, 0), 0);
		set_size(img, ino, &in, (uint64_t)n * 1024);
	}
	return ino;
}

static void test_dir_locality(void **state)
{
	struct rw_image img;
	struct ext4fs_inode din, in;
	struct ext4fs_frag_dir fd;
	struct ext4fs_frag_file df;
	uint64_t a, b, c, e;
	uint32_t dir, f1;

	(void)state;
	rw_image_open(&img, 16384, 1024, small_groups);
	assert_int_equal(ext4fs_geom(img.fs)->groups_per_flex, 4);
	dir = new_node(&img, EXT4FS_ROOT_INO, "d", EXT4FS_S_IFDIR);
	/* Groups 9, 9 and 10 (flex group 2), and 13 (flex group 3). */
	a = pick(&img, 1 + 9 * 1024 + 100, 4);
	b = pick(&img, 1 + 9 * 1024 + 300, 2);
	c = pick(&img, 1 + 13 * 1024 + 10, 1);
	e = pick(&img, 1 + 10 * 1024 + 10, 3);
	f1 = placed_file(&img, dir, "f1", a, 4);
	placed_file(&img, dir, "f2", b, 2);
	placed_file(&img, dir, "f3", c, 1);
	placed_file(&img, dir, "empty", 0, 0);
	new_node(&img, dir, "sub", EXT4FS_S_IFDIR);
	placed_file(&img, dir, "f4", e, 3);
	read_inode(&img, dir, &din);
	assert_int_equal(ext4fs_link(img.fs, dir, "f1again", f1), 0);
	read_inode(&img, dir, &din);
	assert_int_equal(ext4fs_frag_file(img.fs, dir, &din, &df), 0);
	assert_true(df.first_pblk != 0);

	assert_int_equal(ext4fs_frag_dir(img.fs, dir, &din, &fd), 0);
	assert_int_equal(fd.files, 5);                    /* f1 twice, f2, f3, f4 */
	assert_int_equal(fd.groups, 3);
	assert_int_equal(fd.flex_groups, 2);
	assert_int_equal(fd.dir_first_pblk, df.first_pblk);
#define DIST(x) ((x) > df.first_pblk ? (x) - df.first_pblk : df.first_pblk - (x))
	assert_int_equal(fd.distance_sum, 2 * DIST(a) + DIST(b) + DIST(c) + DIST(e));
	assert_true(fd.mean_distance == (double)fd.distance_sum / 5);
#undef DIST
	read_inode(&img, f1, &in);
	assert_int_equal(ext4fs_frag_dir(img.fs, f1, &in, &fd), EXT4FS_E_NOT_DIR);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static uint64_t gap(uint64_t to, uint64_t from)
{
	return to > from ? to - from : from - to;
}

/*
 * d holds f1 (two runs), sub (holding f2) and an empty file; reading it
 * costs the jumps between d's block, f1's runs, sub's block and f2's run.
 * Then sub gains an entry naming d (a cycle no kernel makes): d is not read
 * again.
 */
static void test_tree_seeks(void **state)
{
	struct rw_image img;
	struct ext4fs_inode din, sin, in;
	struct ext4fs_frag_tree t;
	struct ext4fs_frag_file fd, fs_;
	uint64_t r1, r2, r3, seek;
	uint32_t dir, sub, f1;

	(void)state;
	rw_image_open(&img, 16384, 1024, small_groups);
	dir = new_node(&img, EXT4FS_ROOT_INO, "d", EXT4FS_S_IFDIR);
	r1 = pick(&img, 12000, 2);
	r2 = pick(&img, 3000, 3);
	r3 = pick(&img, 8000, 4);
	f1 = placed_file(&img, dir, "f1", r1, 2);
	read_inode(&img, f1, &in);
	assert_int_equal(ext4fs_bmap_set(img.fs, f1, &in, 2, r2, 3, 0), 0);
	set_size(&img, f1, &in, 5 * 1024);
	sub = new_node(&img, dir, "sub", EXT4FS_S_IFDIR);
	placed_file(&img, sub, "f2", r3, 4);
	placed_file(&img, dir, "empty", 0, 0);
	read_inode(&img, dir, &din);
	read_inode(&img, sub, &sin);
	assert_int_equal(ext4fs_frag_file(img.fs, dir, &din, &fd), 0);
	assert_int_equal(ext4fs_frag_file(img.fs, sub, &sin, &fs_), 0);
	assert_int_equal(fd.blocks, 1);
	assert_int_equal(fs_.blocks, 1);

	seek = gap(r1, fd.first_pblk + 1) + gap(r2, r1 + 2) + gap(fs_.first_pblk, r2 + 3) + gap(r3, fs_.first_pblk + 1);
	assert_int_equal(ext4fs_frag_tree(img.fs, dir, &t), 0);
	assert_int_equal(t.dirs, 2);
	assert_int_equal(t.files, 3);
	assert_int_equal(t.blocks, 1 + 5 + 1 + 4);
	assert_int_equal(t.runs, 5);
	assert_int_equal(t.seek_blocks, seek);
	assert_int_equal(t.dirs_skipped, 0);

	assert_int_equal(ext4fs_dir_add(img.fs, sub, &sin, "loop", 4, dir, 2), 0);
	assert_int_equal(ext4fs_frag_tree(img.fs, dir, &t), 0);
	assert_int_equal(t.dirs, 2);
	assert_int_equal(t.dirs_skipped, 1);
	assert_int_equal(t.seek_blocks, seek);

	assert_int_equal(ext4fs_frag_tree(img.fs, f1, &t), EXT4FS_E_NOT_DIR);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_extents),
		cmocka_unit_test(test_file_long),
		cmocka_unit_test(test_file_indirect),
		cmocka_unit_test(test_file_no_blocks),
		cmocka_unit_test(test_score),
		cmocka_unit_test(test_free_scan),
		cmocka_unit_test(test_dir_locality),
		cmocka_unit_test(test_tree_seeks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
