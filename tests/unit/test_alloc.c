/*
 * test_alloc.c - the block allocator: goals, packing of small files,
 * per-inode preallocation, stripe alignment, best fit, ENOSPC and the
 * reserved blocks, buddy consistency under random and external changes.
 *
 * Allocations here have no owning inode, so every test frees what it took
 * and then requires the allocator's self-check (ext4fs_alloc_check), the
 * free count it started with, and a clean e2fsck -fn.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/fs.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

/* -- layouts ------------------------------------------------------------- */

static void t_4k(struct ext4fs_mkfs_params *p)
{
	p->blocks_per_group = 2048;        /* 8 groups in 64 MiB */
	p->log_groups_per_flex = 2;        /* 2 flex groups of 4 */
}

static void t_1k(struct ext4fs_mkfs_params *p)
{
	p->log_groups_per_flex = 2;        /* 8 groups of 8192 1 KiB blocks */
}

static void t_nocsum(struct ext4fs_mkfs_params *p)
{
	t_4k(p);
	rw_tweak_gdt_csum(p);
}

static void t_noflex(struct ext4fs_mkfs_params *p)
{
	p->blocks_per_group = 8192;
	p->feature_incompat &= ~(uint32_t)(EXT4FS_FEATURE_INCOMPAT_FLEX_BG | EXT4FS_FEATURE_INCOMPAT_EXTENTS |
					 EXT4FS_FEATURE_INCOMPAT_64BIT);
	p->log_groups_per_flex = 0;
}

struct layout {
	const char *name;
	uint64_t blocks;
	uint32_t bs;
	void (*tweak)(struct ext4fs_mkfs_params *);
};

static const struct layout layouts[] = {
	{ "4k flex csum", 16384, 4096, t_4k },
	{ "1k flex csum", 65536, 1024, t_1k },
	{ "4k flex gdt_csum", 16384, 4096, t_nocsum },
	{ "1k classic, no extents", 65536, 1024, t_noflex },
};
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

static void open_layout(struct rw_image *img, const struct layout *l)
{
	rw_image_open(img, l->blocks, l->bs, l->tweak);
}

/* -- helpers ------------------------------------------------------------- */

struct ext {
	uint64_t start;
	uint32_t len;
};

static uint64_t free_blocks(struct rw_image *img)
{
	return ext4fs_geom(img->fs)->free_blocks_count;
}

static void assert_alloc_ok(struct rw_image *img)
{
	int err = ext4fs_alloc_check(img->fs);

	if (err)
		fail_msg("allocator check: %s", ext4fs_errmsg(img->fs));
}

static struct ext alloc_ok(struct rw_image *img, const struct ext4fs_alloc_request *req)
{
	struct ext e;
	int err = ext4fs_alloc_blocks(img->fs, req, &e.start, &e.len);

	if (err)
		fail_msg("allocating %u blocks (goal %llu): %s", req->len,
			 (unsigned long long)req->goal, ext4fs_errmsg(img->fs));
	assert_true(e.len >= (req->min_len ? req->min_len : 1) && e.len <= req->len);
	return e;
}

static int block_used(struct rw_image *img, uint64_t blk)
{
	const struct ext4fs_bitmap *bm;

	assert_int_equal(ext4fs_fs_block_bitmap(img->fs, &bm), 0);
	return ext4fs_bitmap_test(bm, blk);
}

static int range_free(struct rw_image *img, uint64_t blk, uint64_t count)
{
	const struct ext4fs_bitmap *bm;
	uint64_t found;

	assert_int_equal(ext4fs_fs_block_bitmap(img->fs, &bm), 0);
	return ext4fs_bitmap_find(bm, blk, blk + count - 1, 1, &found) != 0;
}

static void free_ext(struct rw_image *img, struct ext e)
{
	if (ext4fs_free_blocks(img->fs, e.start, e.len))
		fail_msg("freeing %llu+%u: %s", (unsigned long long)e.start, e.len, ext4fs_errmsg(img->fs));
}

/* Everything given back: self-check, the starting free count, and e2fsck. */
static void finish(struct rw_image *img, uint64_t free0)
{
	ext4fs_alloc_release_all(img->fs);
	assert_alloc_ok(img);
	assert_int_equal(free_blocks(img), free0);
	rw_image_assert_clean(img);
	rw_image_reopen(img);
	assert_int_equal(free_blocks(img), free0);
	rw_image_close(img);
}

/*
 * The first free block of a group other than the first that is followed by
 * at least need free blocks in the same group (past the group's own
 * metadata on classic layouts), so tests can carve holes there.
 */
static uint64_t free_area(struct rw_image *img, uint32_t need)
{
	const struct ext4fs_geom *geo = ext4fs_geom(img->fs);
	const struct ext4fs_bitmap *bm;
	uint64_t f;

	assert_int_equal(ext4fs_fs_block_bitmap(img->fs, &bm), 0);
	for (uint32_t g = 1; g < geo->group_count; g++) {
		uint64_t first = ext4fs_group_first_block(img->fs, g), last = ext4fs_group_last_block(img->fs, g);
		if (ext4fs_bitmap_find(bm, first, last, 0, &f) == 0 && last - f + 1 >= need &&
		    range_free(img, f, need))
			return f;
	}
	fail_msg("no group has %u free blocks in a row", need);
	return 0;
}

/* -- goal ---------------------------------------------------------------- */

static void test_goal_hit_and_exact_goal(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		struct ext4fs_alloc_stats st;
		open_layout(&img, &layouts[li]);
		uint64_t free0 = free_blocks(&img), s;
		uint64_t goal = free_area(&img, 200) + 100;
		uint32_t g = ext4fs_group_of_block(img.fs, goal), got;

		struct ext4fs_alloc_request req = { .len = 8, .goal = goal, .flags = EXT4FS_ALLOC_NO_PREALLOC };
		struct ext a = alloc_ok(&img, &req);
		assert_int_equal(a.start, goal);
		assert_int_equal(a.len, 8);
		assert_int_equal(block_used(&img, goal + 7), 1);
		assert_int_equal(block_used(&img, goal + 8), 0);
		ext4fs_alloc_get_stats(img.fs, &st);
		assert_int_equal(st.goal_hits, 1);
		assert_int_equal(st.pass_used[0], 1);

		/* Exact goal on a used block: NO_SPACE and nothing changed. */
		req.flags = EXT4FS_ALLOC_EXACT_GOAL;
		req.goal = goal + 3;
		uint64_t before = free_blocks(&img);
		assert_int_equal(ext4fs_alloc_blocks(img.fs, &req, &s, &got), EXT4FS_E_NO_SPACE);
		assert_int_equal(free_blocks(&img), before);
		/* Exact goal right after: served there, even if shorter than asked down to min_len. */
		req.goal = goal + 8;
		struct ext b = alloc_ok(&img, &req);
		assert_int_equal(b.start, goal + 8);
		/* A goal that is in use moves on, but stays in the goal's group. */
		req.flags = EXT4FS_ALLOC_NO_PREALLOC;
		req.goal = goal;
		struct ext c = alloc_ok(&img, &req);
		assert_int_equal(ext4fs_group_of_block(img.fs, c.start), g);
		assert_true(c.start + c.len <= goal || c.start >= b.start + b.len);

		/* An exact goal inside a preallocation takes it over. */
		struct ext4fs_alloc_request sm = { .ino = 40, .len = 1, .file_blocks = 1 };
		struct ext p = alloc_ok(&img, &sm);
		struct ext4fs_alloc_request ex = { .len = 4, .goal = p.start + 10, .flags = EXT4FS_ALLOC_EXACT_GOAL };
		struct ext x = alloc_ok(&img, &ex);
		assert_int_equal(x.start, p.start + 10);
		struct ext q = alloc_ok(&img, &sm);
		assert_true(q.start + q.len <= x.start || q.start >= x.start + x.len);
		assert_alloc_ok(&img);

		free_ext(&img, a);
		free_ext(&img, b);
		free_ext(&img, c);
		free_ext(&img, p);
		free_ext(&img, x);
		free_ext(&img, q);
		finish(&img, free0);
	}
}

/*
 * Whole files (EXT4FS_ALLOC_WHOLE_FILE, no goal) go back to back, a new
 * directory's first block right after them, and nothing is held in reserve
 * (the free count drops by exactly what was handed out).
 */
static void test_whole_files_pack(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		open_layout(&img, &layouts[li]);
		uint64_t free0 = free_blocks(&img);
		uint32_t sizes[5] = { 1, 7, 40, 3, 200 };
		struct ext got[6];
		uint64_t handed = 0;

		for (unsigned i = 0; i < 5; i++) {
			struct ext4fs_alloc_request req = {
				.ino = 20 + i, .len = sizes[i], .min_len = sizes[i],
				.file_blocks = sizes[i], .flags = EXT4FS_ALLOC_WHOLE_FILE,
			};
			got[i] = alloc_ok(&img, &req);
			assert_int_equal(got[i].len, sizes[i]);
			if (i)
				assert_int_equal(got[i].start, got[i - 1].start + got[i - 1].len);
			handed += got[i].len;
		}
		struct ext4fs_alloc_request dir = { .ino = 30, .len = 1, .flags = EXT4FS_ALLOC_DIRECTORY };
		got[5] = alloc_ok(&img, &dir);
		assert_int_equal(got[5].start, got[4].start + got[4].len);
		handed += 1;
		assert_int_equal(free_blocks(&img), free0 - handed);
		for (unsigned i = 0; i < 6; i++)
			free_ext(&img, got[i]);
		finish(&img, free0);
	}
}

/* Without a goal: the owner's flex group, first group for directories, second for files. */
static void test_goal_from_inode(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		open_layout(&img, &layouts[li]);
		const struct ext4fs_geom *geo = ext4fs_geom(img.fs);
		uint64_t free0 = free_blocks(&img);
		int flex = geo->groups_per_flex >= 4;
		/* An inode of group 5: flex group 1 (groups 4-7) with flex_bg. */
		uint32_t ino = 5 * geo->inodes_per_group + 3;
		uint32_t file_group = 5, dir_group = flex ? 4 : 5;

		struct ext4fs_alloc_request req = { .ino = ino, .len = 4, .flags = EXT4FS_ALLOC_NO_PREALLOC };
		struct ext f = alloc_ok(&img, &req);
		req.flags |= EXT4FS_ALLOC_DIRECTORY;
		struct ext d = alloc_ok(&img, &req);
		if (ext4fs_group(img.fs, file_group)->free_blocks_count >= 4)
			assert_int_equal(ext4fs_group_of_block(img.fs, f.start), file_group);
		if (ext4fs_group(img.fs, dir_group)->free_blocks_count >= 4)
			assert_int_equal(ext4fs_group_of_block(img.fs, d.start), dir_group);
		if (flex) {
			/* A file of group 6: the second group of its flex group (4 + 1) too. */
			req.ino = 6 * geo->inodes_per_group + 1;
			req.flags = EXT4FS_ALLOC_NO_PREALLOC;
			struct ext f2 = alloc_ok(&img, &req);
			assert_int_equal(ext4fs_group_of_block(img.fs, f2.start), 5);
			free_ext(&img, f2);
		}
		free_ext(&img, f);
		free_ext(&img, d);
		finish(&img, free0);
	}
}

/* -- preallocation ------------------------------------------------------- */

static void test_small_files_pack(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		struct ext e[60];
		struct ext4fs_alloc_stats st;
		open_layout(&img, &layouts[li]);
		uint64_t free0 = free_blocks(&img);

		for (unsigned i = 0; i < 60; i++) {
			uint32_t n = 1 + i % 3;
			struct ext4fs_alloc_request req = { .ino = 20 + i, .len = n, .file_blocks = n };
			e[i] = alloc_ok(&img, &req);
			assert_int_equal(e[i].len, n);
			if (i)
				assert_int_equal(e[i].start, e[i - 1].start + e[i - 1].len);
		}
		ext4fs_alloc_get_stats(img.fs, &st);
		assert_int_equal(st.prealloc_hits, 59);
		assert_int_equal(st.preallocs, 1);
		assert_alloc_ok(&img);
		/* Small files written a block at a time (no size known) pack too. */
		struct ext4fs_alloc_request one = { .ino = 200, .len = 1 };
		struct ext x = alloc_ok(&img, &one);
		assert_int_equal(x.start, e[59].start + e[59].len);
		free_ext(&img, x);
		for (unsigned i = 0; i < 60; i++)
			free_ext(&img, e[i]);
		finish(&img, free0);
	}
}

static void test_large_file_in_pieces(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		struct ext a[16], b[16], c[16], d[16];
		struct ext4fs_alloc_stats st;
		open_layout(&img, &layouts[li]);
		uint64_t free0 = free_blocks(&img);

		/* Size known: the first piece preallocates the whole file. */
		for (unsigned i = 0; i < 16; i++) {
			struct ext4fs_alloc_request req = { .ino = 12, .lblk = i * 64, .len = 64, .file_blocks = 1024 };
			a[i] = alloc_ok(&img, &req);
			assert_int_equal(a[i].len, 64);
			if (i)
				assert_int_equal(a[i].start, a[i - 1].start + 64);
		}
		ext4fs_alloc_get_stats(img.fs, &st);
		assert_int_equal(st.prealloc_hits, 15);
		/* Size unknown: the size buckets and the goal after the last block keep it contiguous. */
		for (unsigned i = 0; i < 16; i++) {
			struct ext4fs_alloc_request req = { .ino = 13, .lblk = i * 32, .len = 32,
							    .goal = i ? b[i - 1].start + b[i - 1].len : 0 };
			b[i] = alloc_ok(&img, &req);
			if (i)
				assert_int_equal(b[i].start, b[i - 1].start + b[i - 1].len);
		}
		/* Two files written in turns each stay contiguous. */
		for (unsigned i = 0; i < 16; i++) {
			struct ext4fs_alloc_request rc = { .ino = 14, .lblk = i * 16, .len = 16, .file_blocks = 256 };
			struct ext4fs_alloc_request rd = { .ino = 15, .lblk = i * 16, .len = 16, .file_blocks = 256 };
			c[i] = alloc_ok(&img, &rc);
			d[i] = alloc_ok(&img, &rd);
			if (i) {
				assert_int_equal(c[i].start, c[i - 1].start + 16);
				assert_int_equal(d[i].start, d[i - 1].start + 16);
			}
		}
		assert_alloc_ok(&img);
		/* A released preallocation is forgotten: its blocks go to the next comer. */
		struct ext4fs_alloc_request r16 = { .ino = 16, .len = 8, .file_blocks = 512 };
		struct ext p = alloc_ok(&img, &r16);
		ext4fs_alloc_release_inode(img.fs, 16);
		assert_alloc_ok(&img);
		struct ext4fs_alloc_request r17 = { .ino = 17, .len = 8, .goal = p.start + 8,
						    .flags = EXT4FS_ALLOC_NO_PREALLOC };
		struct ext q = alloc_ok(&img, &r17);
		assert_int_equal(q.start, p.start + 8);
		free_ext(&img, p);
		free_ext(&img, q);
		for (unsigned i = 0; i < 16; i++) {
			free_ext(&img, a[i]);
			free_ext(&img, b[i]);
			free_ext(&img, c[i]);
			free_ext(&img, d[i]);
		}
		finish(&img, free0);
	}
}

/* -- stripe -------------------------------------------------------------- */

static void t_stripe(struct ext4fs_mkfs_params *p)
{
	t_4k(p);
	p->raid_stride = 16;
	p->raid_stripe_width = 64;
}

static void t_stripe_1k(struct ext4fs_mkfs_params *p)
{
	t_1k(p);
	p->raid_stripe_width = 64;
}

static const struct layout stripe_layouts[] = {
	{ "4k stripe 64", 16384, 4096, t_stripe },
	{ "1k stripe 64", 65536, 1024, t_stripe_1k },
};

static void test_stripe_alignment(void **state)
{
	(void)state;
	for (unsigned li = 0; li < 2; li++) {
		struct rw_image img;
		struct ext e[16];
		struct ext4fs_alloc_stats st;
		unsigned n = 0;
		open_layout(&img, &stripe_layouts[li]);
		uint64_t free0 = free_blocks(&img);
		uint32_t ino = 2 * ext4fs_geom(img.fs)->inodes_per_group + 1;

		/* Misalign the free space first. */
		struct ext4fs_alloc_request small = { .ino = ino, .len = 3, .flags = EXT4FS_ALLOC_NO_PREALLOC };
		e[n++] = alloc_ok(&img, &small);
		for (unsigned i = 0; i < 5; i++) {
			struct ext4fs_alloc_request req = { .ino = ino, .len = 100, .flags = EXT4FS_ALLOC_NO_PREALLOC };
			e[n] = alloc_ok(&img, &req);
			assert_int_equal(e[n].start % 64, 0);
			n++;
		}
		/* A large file with preallocation: the preallocated extent starts aligned too. */
		struct ext4fs_alloc_request big = { .ino = ino + 1, .len = 70, .file_blocks = 300 };
		e[n] = alloc_ok(&img, &big);
		assert_int_equal(e[n].start % 64, 0);
		n++;
		/* Below the stripe: no alignment wanted. */
		struct ext4fs_alloc_request sm2 = { .ino = ino, .len = 5, .goal = e[0].start + 3,
						    .flags = EXT4FS_ALLOC_NO_PREALLOC };
		e[n] = alloc_ok(&img, &sm2);
		assert_int_equal(e[n].start, e[0].start + 3);
		n++;
		/* A free but unaligned goal does not pull a stripe-sized request off the boundary. */
		uint64_t area = free_area(&img, 600);
		struct ext4fs_alloc_request off = { .len = 128, .goal = (area + 63) / 64 * 64 + 7,
						    .flags = EXT4FS_ALLOC_NO_PREALLOC };
		e[n] = alloc_ok(&img, &off);
		assert_int_equal(e[n].start % 64, 0);
		n++;
		ext4fs_alloc_get_stats(img.fs, &st);
		assert_true(st.stripe_aligned >= 7);

		/* The tunable overrides the superblock. */
		struct ext4fs_alloc_params p;
		ext4fs_alloc_get_params(img.fs, &p);
		p.stripe = 48;
		assert_int_equal(ext4fs_alloc_tune(img.fs, &p), 0);
		for (unsigned i = 0; i < 3; i++) {
			struct ext4fs_alloc_request req = { .ino = ino, .len = 50, .flags = EXT4FS_ALLOC_NO_PREALLOC };
			e[n] = alloc_ok(&img, &req);
			assert_int_equal(e[n].start % 48, 0);
			n++;
		}
		assert_alloc_ok(&img);
		for (unsigned i = 0; i < n; i++)
			free_ext(&img, e[i]);
		finish(&img, free0);
	}
}

/*
 * The whole-file stream goes forward: a hole left behind it is not taken
 * by the next file even when it fits exactly (best fit would take it), and
 * ext4fs_alloc_stream_align() moves the stream so that a stripe-sized file
 * written after `ahead` blocks of smaller ones starts on a boundary with no
 * gap before it.
 */
static void test_whole_file_stream_forward(void **state)
{
	(void)state;
	for (unsigned li = 0; li < 2; li++) {
		struct rw_image img;
		struct ext e[8];
		open_layout(&img, &stripe_layouts[li]);
		uint64_t free0 = free_blocks(&img);
		assert_int_equal(ext4fs_alloc_stripe(img.fs), 64);

		uint32_t sizes[3] = { 5, 9, 4 };
		for (unsigned i = 0; i < 3; i++) {
			struct ext4fs_alloc_request req = {
				.ino = 20 + i, .len = sizes[i], .min_len = sizes[i],
				.file_blocks = sizes[i], .flags = EXT4FS_ALLOC_WHOLE_FILE,
			};
			e[i] = alloc_ok(&img, &req);
		}
		/*
		 * A 9-block hole behind the stream and only 3 free blocks at it
		 * (a block taken outside the stream): a 9-block file goes on
		 * past the taken block, not back into the hole.
		 */
		free_ext(&img, e[1]);
		uint64_t cursor = e[2].start + e[2].len;
		struct ext4fs_alloc_request plug = { .len = 1, .goal = cursor + 3,
						     .flags = EXT4FS_ALLOC_EXACT_GOAL | EXT4FS_ALLOC_NO_PREALLOC };
		e[5] = alloc_ok(&img, &plug);
		struct ext4fs_alloc_request nine = { .ino = 30, .len = 9, .min_len = 9, .file_blocks = 9,
						     .flags = EXT4FS_ALLOC_WHOLE_FILE };
		e[1] = alloc_ok(&img, &nine);
		assert_int_equal(e[1].start, cursor + 4);

		/* 7 blocks of small files, then one of 100 blocks: aligned and adjacent. */
		assert_int_equal(ext4fs_alloc_stream_align(img.fs, 7), 0);
		struct ext4fs_alloc_request seven = { .ino = 31, .len = 7, .min_len = 7, .file_blocks = 7,
						      .flags = EXT4FS_ALLOC_WHOLE_FILE };
		e[3] = alloc_ok(&img, &seven);
		assert_true(e[3].start >= e[1].start + e[1].len);
		assert_true(e[3].start < e[1].start + e[1].len + 64);
		struct ext4fs_alloc_request big = { .ino = 32, .len = 100, .min_len = 100, .file_blocks = 100,
						    .flags = EXT4FS_ALLOC_WHOLE_FILE };
		e[4] = alloc_ok(&img, &big);
		assert_int_equal(e[4].start % 64, 0);
		assert_int_equal(e[4].start, e[3].start + 7);

		assert_alloc_ok(&img);
		for (unsigned i = 0; i < 6; i++)
			free_ext(&img, e[i]);
		finish(&img, free0);
	}
}

/* -- best fit ------------------------------------------------------------ */

static void test_best_fit_smallest_hole(void **state)
{
	static const struct { uint32_t off, len; } holes[] = { { 100, 50 }, { 300, 20 }, { 500, 10 }, { 700, 30 } };
	static const struct { uint32_t want, at; } asks[] = { { 10, 500 }, { 15, 300 }, { 25, 700 }, { 40, 100 } };
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		struct ext got[4];
		open_layout(&img, &layouts[li]);
		uint64_t free0 = free_blocks(&img);
		uint64_t base = free_area(&img, 1100);

		assert_int_equal(ext4fs_blocks_mark_used(img.fs, base, 1000), 0);
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(ext4fs_blocks_mark_free(img.fs, base + holes[i].off, holes[i].len), 0);
		for (unsigned i = 0; i < 4; i++) {
			struct ext4fs_alloc_request req = { .len = asks[i].want, .goal = base,
							    .flags = EXT4FS_ALLOC_NO_PREALLOC };
			got[i] = alloc_ok(&img, &req);
			assert_int_equal(got[i].start, base + asks[i].at);
			assert_int_equal(got[i].len, asks[i].want);
		}
		assert_alloc_ok(&img);
		for (unsigned i = 0; i < 4; i++)
			free_ext(&img, got[i]);
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(ext4fs_blocks_mark_used(img.fs, base + holes[i].off, holes[i].len), 0);
		assert_int_equal(ext4fs_blocks_mark_free(img.fs, base, 1000), 0);
		finish(&img, free0);
	}
}

/* A power-of-two request takes a free buddy of that order rather than splitting a larger one. */
static void test_buddy_pass(void **state)
{
	struct rw_image img;
	struct ext4fs_alloc_stats st;
	(void)state;
	open_layout(&img, &layouts[0]);
	uint64_t free0 = free_blocks(&img);
	uint64_t area = free_area(&img, 1600);
	uint64_t gfirst = ext4fs_group_first_block(img.fs, ext4fs_group_of_block(img.fs, area));
	uint64_t base = gfirst + (area - gfirst + 511) / 512 * 512;

	/* Used from area to base + 1024 except a 16-block hole at base + 256 (a free buddy of
	   order 4), with larger free chunks after. */
	assert_int_equal(ext4fs_blocks_mark_used(img.fs, area, base + 1024 - area), 0);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, base + 256, 16), 0);
	struct ext4fs_alloc_request req = { .len = 16, .goal = base, .flags = EXT4FS_ALLOC_NO_PREALLOC };
	struct ext e = alloc_ok(&img, &req);
	assert_int_equal(e.start, base + 256);
	ext4fs_alloc_get_stats(img.fs, &st);
	assert_int_equal(st.pass_used[1], 1);
	free_ext(&img, e);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, area, base + 256 - area), 0);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, base + 272, 1024 - 272), 0);
	finish(&img, free0);
}

/* -- ENOSPC and the reserved blocks ---------------------------------------- */

static void test_fill_to_enospc(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		const unsigned max = 4096;
		struct ext *e = calloc(max, sizeof(*e));
		unsigned n = 0;
		uint64_t s;
		uint32_t got;
		assert_non_null(e);
		open_layout(&img, &layouts[li]);
		const struct ext4fs_geom *geo = ext4fs_geom(img.fs);
		uint64_t free0 = free_blocks(&img), r = geo->r_blocks_count;
		assert_true(r > 0);

		/* A mix of sizes and kinds until nothing outside the reserve is left. */
		for (;;) {
			struct ext4fs_alloc_request req = { .ino = 12 + n % 7, .len = n % 3 ? 700 : 3,
							    .file_blocks = n % 3 ? 0 : 3 };
			assert_true(n < max);
			int err = ext4fs_alloc_blocks(img.fs, &req, &e[n].start, &e[n].len);
			if (err) {
				assert_int_equal(err, EXT4FS_E_NO_SPACE);
				break;
			}
			n++;
		}
		assert_int_equal(free_blocks(&img), r);
		assert_alloc_ok(&img);
		/* Clean failures: nothing changes, whatever is asked. */
		struct ext4fs_alloc_request one = { .len = 1 };
		struct ext4fs_alloc_request meta = { .len = 1, .flags = EXT4FS_ALLOC_METADATA };
		assert_int_equal(ext4fs_alloc_blocks(img.fs, &one, &s, &got), EXT4FS_E_NO_SPACE);
		assert_int_equal(ext4fs_alloc_blocks(img.fs, &meta, &s, &got), EXT4FS_E_NO_SPACE);
		assert_int_equal(free_blocks(&img), r);
		/* The reserve is there for those allowed. */
		for (;;) {
			struct ext4fs_alloc_request req = { .len = 50, .flags = EXT4FS_ALLOC_USE_RESERVED };
			assert_true(n < max);
			int err = ext4fs_alloc_blocks(img.fs, &req, &e[n].start, &e[n].len);
			if (err) {
				assert_int_equal(err, EXT4FS_E_NO_SPACE);
				break;
			}
			n++;
		}
		assert_int_equal(free_blocks(&img), 0);
		assert_alloc_ok(&img);
		for (unsigned i = 0; i < n; i++)
			free_ext(&img, e[i]);
		free(e);
		finish(&img, free0);
	}
}

/* -- consistency under random and external changes ---------------------- */

static uint32_t rnd(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*seed >> 33);
}

static void test_random_consistency(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		const unsigned max = 8192;
		struct ext *e = calloc(max, sizeof(*e));
		uint32_t next_lblk[8] = { 0 };
		uint64_t seed = 42 + li;
		unsigned n = 0;
		assert_non_null(e);
		open_layout(&img, &layouts[li]);
		const struct ext4fs_geom *geo = ext4fs_geom(img.fs);
		uint64_t free0 = free_blocks(&img);

		for (unsigned op = 0; op < 3000; op++) {
			uint32_t what = rnd(&seed) % 10;
			if (what < 5 && n < max) {
				uint32_t k = rnd(&seed) % 8;
				struct ext4fs_alloc_request req = { .ino = 12 + k, .lblk = next_lblk[k],
								    .len = 1 + rnd(&seed) % (k < 4 ? 8 : 300) };
				switch (rnd(&seed) % 5) {
				case 0: req.flags = EXT4FS_ALLOC_NO_PREALLOC; break;
				case 1: req.flags = EXT4FS_ALLOC_METADATA; req.len = 1; break;
				case 2: req.file_blocks = req.lblk + req.len + rnd(&seed) % 2000; break;
				case 3: req.goal = geo->first_data_block + rnd(&seed) % (geo->blocks_count -
											 geo->first_data_block);
					break;
				default: break;
				}
				req.min_len = 1;
				int err = ext4fs_alloc_blocks(img.fs, &req, &e[n].start, &e[n].len);
				if (err == EXT4FS_E_NO_SPACE)
					continue;
				if (err)
					fail_msg("op %u: %s", op, ext4fs_errmsg(img.fs));
				next_lblk[k] += e[n].len;
				n++;
			} else if (what < 8 && n) {
				/* Free all or part of an extent. */
				uint32_t i = rnd(&seed) % n;
				uint32_t cut = e[i].len > 1 ? rnd(&seed) % e[i].len : 0;
				if (cut) {
					assert_int_equal(ext4fs_free_blocks(img.fs, e[i].start + cut, e[i].len - cut), 0);
					e[i].len = cut;
				} else {
					free_ext(&img, e[i]);
					e[i] = e[--n];
				}
			} else if (what == 8 && n < max) {
				/* A tool marks a free range in use (setb), maybe inside a preallocation. */
				uint64_t b = geo->first_data_block + rnd(&seed) % (geo->blocks_count - 64 -
										  geo->first_data_block);
				uint32_t len = 1 + rnd(&seed) % 16;
				if (range_free(&img, b, len)) {
					assert_int_equal(ext4fs_blocks_mark_used(img.fs, b, len), 0);
					e[n].start = b;
					e[n].len = len;
					n++;
				}
			} else {
				ext4fs_alloc_release_inode(img.fs, 12 + rnd(&seed) % 8);
			}
			if (op % 250 == 0)
				assert_alloc_ok(&img);
		}
		assert_alloc_ok(&img);
		while (n)
			free_ext(&img, e[--n]);
		free(e);
		finish(&img, free0);
	}
}

static void test_external_changes_honoured(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		open_layout(&img, &layouts[li]);
		uint64_t free0 = free_blocks(&img);
		uint64_t base = free_area(&img, 200) + 64;

		/* Build the group's buddy, then change its bitmap behind the allocator's back (setb). */
		struct ext4fs_alloc_request req = { .len = 8, .goal = base, .flags = EXT4FS_ALLOC_NO_PREALLOC };
		struct ext a = alloc_ok(&img, &req);
		assert_int_equal(a.start, base);
		free_ext(&img, a);
		assert_int_equal(ext4fs_blocks_mark_used(img.fs, base, 50), 0);
		struct ext b = alloc_ok(&img, &req);
		assert_true(b.start >= base + 50 || b.start + b.len <= base);
		assert_alloc_ok(&img);
		/* freeb: the goal is free again. */
		assert_int_equal(ext4fs_blocks_mark_free(img.fs, base, 50), 0);
		struct ext c = alloc_ok(&img, &req);
		assert_int_equal(c.start, base);

		/* setb inside the locality group's preallocation: cut out, never handed out twice. */
		struct ext4fs_alloc_request sm = { .ino = 30, .len = 1, .file_blocks = 1 };
		struct ext s[12];
		s[0] = alloc_ok(&img, &sm);
		assert_int_equal(ext4fs_blocks_mark_used(img.fs, s[0].start + 5, 1), 0);
		assert_int_equal(ext4fs_blocks_mark_used(img.fs, s[0].start + 1, 1), 0);
		assert_alloc_ok(&img);
		for (unsigned i = 1; i < 12; i++) {
			s[i] = alloc_ok(&img, &sm);
			assert_true(s[i].start != s[0].start + 5 && s[i].start != s[0].start + 1);
		}
		assert_alloc_ok(&img);
		/* setb at the head of an inode's preallocation. */
		struct ext4fs_alloc_request big = { .ino = 31, .len = 10, .file_blocks = 100 };
		struct ext p = alloc_ok(&img, &big);
		assert_int_equal(ext4fs_blocks_mark_used(img.fs, p.start + 10, 3), 0);
		big.lblk = 10;
		struct ext q = alloc_ok(&img, &big);
		assert_true(q.start >= p.start + 13 || q.start + q.len <= p.start);
		big.lblk = 10 + q.len;
		struct ext r = alloc_ok(&img, &big);
		assert_alloc_ok(&img);

		free_ext(&img, b);
		free_ext(&img, c);
		free_ext(&img, p);
		free_ext(&img, q);
		free_ext(&img, r);
		assert_int_equal(ext4fs_free_blocks(img.fs, p.start + 10, 3), 0);
		assert_int_equal(ext4fs_free_blocks(img.fs, s[0].start + 5, 1), 0);
		assert_int_equal(ext4fs_free_blocks(img.fs, s[0].start + 1, 1), 0);
		for (unsigned i = 0; i < 12; i++)
			free_ext(&img, s[i]);
		finish(&img, free0);
	}
}

/* -- fences -------------------------------------------------------------- */

/*
 * A fence keeps its free blocks from every request: one with its goal in
 * the fence (data, tree block, exact goal), one inside a preallocation the
 * fence took over, and the locality group's.  The fence's owner claims it
 * part by part (ext4fs_blocks_mark_used); a claimed block freed again is
 * fenced again; a block in use when fenced is not.  Unfencing makes the
 * unclaimed blocks available at once.  The allocator's self-check holds
 * throughout.
 */
static void test_fence_keeps_blocks(void **state)
{
	(void)state;
	for (unsigned li = 0; li < NLAYOUTS; li++) {
		struct rw_image img;
		open_layout(&img, &layouts[li]);
		uint64_t free0 = free_blocks(&img), s;
		uint64_t base = free_area(&img, 400) + 64;
		uint32_t got;

		/* An inode's preallocation and the locality group's, both lying where the fence goes. */
		struct ext4fs_alloc_request big = { .ino = 50, .len = 4, .goal = base, .file_blocks = 64 };
		struct ext p = alloc_ok(&img, &big);
		assert_int_equal(p.start, base);
		struct ext4fs_alloc_request sm = { .ino = 51, .len = 1, .goal = base + 100, .file_blocks = 1 };
		struct ext l = alloc_ok(&img, &sm);
		/* One block in use inside the fence: not the fence's. */
		struct ext4fs_alloc_request one = { .len = 1, .goal = base + 120, .flags = EXT4FS_ALLOC_EXACT_GOAL };
		struct ext u = alloc_ok(&img, &one);

		assert_int_equal(ext4fs_alloc_fence(img.fs, base + 4, 196), 0);
		assert_alloc_ok(&img);
		assert_int_equal(free_blocks(&img), free0 - 6);   /* fenced blocks still count as free */

		/* Requests aimed into it land outside: data, the inode's next block, a tree block. */
		struct ext4fs_alloc_request in = { .len = 8, .goal = base + 30, .flags = EXT4FS_ALLOC_NO_PREALLOC };
		struct ext a = alloc_ok(&img, &in);
		assert_true(a.start >= base + 200 || a.start + a.len <= base + 4);
		big.lblk = 4;
		struct ext b = alloc_ok(&img, &big);
		assert_true(b.start >= base + 200 || b.start + b.len <= base + 4);
		struct ext4fs_alloc_request meta = { .ino = 52, .len = 1, .goal = base + 50,
						     .flags = EXT4FS_ALLOC_METADATA };
		struct ext c = alloc_ok(&img, &meta);
		assert_true(c.start >= base + 200 || c.start < base + 4);
		struct ext d = alloc_ok(&img, &sm);
		assert_true(d.start >= base + 200 || d.start < base + 4);
		in.goal = base + 60;
		in.flags = EXT4FS_ALLOC_EXACT_GOAL;
		assert_int_equal(ext4fs_alloc_blocks(img.fs, &in, &s, &got), EXT4FS_E_NO_SPACE);
		assert_alloc_ok(&img);

		/* The owner claims its first part; freed again, it is fenced again. */
		assert_int_equal(ext4fs_blocks_mark_used(img.fs, base + 4, 20), 0);
		assert_alloc_ok(&img);
		assert_int_equal(ext4fs_blocks_mark_free(img.fs, base + 14, 10), 0);
		assert_alloc_ok(&img);
		in.goal = base + 14;
		assert_int_equal(ext4fs_alloc_blocks(img.fs, &in, &s, &got), EXT4FS_E_NO_SPACE);
		/* The block in use when fenced was not fenced: freed, it is available. */
		free_ext(&img, u);
		in.goal = base + 120;
		in.len = 1;
		struct ext e = alloc_ok(&img, &in);
		assert_int_equal(e.start, base + 120);
		assert_alloc_ok(&img);

		ext4fs_alloc_unfence_all(img.fs);
		assert_alloc_ok(&img);
		in.goal = base + 14;
		in.len = 10;
		struct ext f = alloc_ok(&img, &in);
		assert_int_equal(f.start, base + 14);
		in.goal = base + 60;
		struct ext g = alloc_ok(&img, &in);
		assert_int_equal(g.start, base + 60);
		/* A second unfence has nothing to lift. */
		ext4fs_alloc_unfence_all(img.fs);
		assert_alloc_ok(&img);

		/* Bad ranges: outside the volume, past its end. */
		uint64_t end = ext4fs_geom(img.fs)->blocks_count;
		assert_int_equal(ext4fs_alloc_fence(img.fs, end, 1), EXT4FS_E_BAD_BLOCK_NUM);
		assert_int_equal(ext4fs_alloc_fence(img.fs, end - 1, 2), EXT4FS_E_BAD_BLOCK_NUM);
		assert_int_equal(ext4fs_alloc_fence(img.fs, base, 0), 0);

		free_ext(&img, p);
		free_ext(&img, l);
		free_ext(&img, a);
		free_ext(&img, b);
		free_ext(&img, c);
		free_ext(&img, d);
		free_ext(&img, e);
		free_ext(&img, f);
		free_ext(&img, g);
		assert_int_equal(ext4fs_blocks_mark_free(img.fs, base + 4, 10), 0);
		finish(&img, free0);
	}
}

/* -- API edges ----------------------------------------------------------- */

static void test_bad_requests_and_tunables(void **state)
{
	struct rw_image img;
	struct ext4fs_alloc_params p, q;
	uint64_t s;
	uint32_t got;
	(void)state;
	open_layout(&img, &layouts[0]);
	uint64_t free0 = free_blocks(&img);

	struct ext4fs_alloc_request zero = { .len = 0 };
	struct ext4fs_alloc_request minmax = { .len = 4, .min_len = 5 };
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &zero, &s, &got), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &minmax, &s, &got), EXT4FS_E_INVALID_ARG);

	ext4fs_alloc_get_params(img.fs, &p);
	assert_int_equal(p.stream_req, 16);
	assert_int_equal(p.group_prealloc, 512);
	assert_int_equal(p.max_to_scan, 200);
	assert_int_equal(p.min_to_scan, 10);
	q = p;
	q.max_to_scan = 0;
	assert_int_equal(ext4fs_alloc_tune(img.fs, &q), EXT4FS_E_INVALID_ARG);
	/* No group preallocation: small files take exactly what they ask. */
	q = p;
	q.group_prealloc = 0;
	assert_int_equal(ext4fs_alloc_tune(img.fs, &q), 0);
	struct ext4fs_alloc_request sm = { .ino = 12, .len = 2, .file_blocks = 2 };
	struct ext a = alloc_ok(&img, &sm);
	struct ext4fs_alloc_stats st;
	ext4fs_alloc_get_stats(img.fs, &st);
	assert_int_equal(st.preallocs, 0);
	/* A request larger than a group comes back shorter. */
	struct ext4fs_alloc_request huge = { .len = 3 * ext4fs_geom(img.fs)->blocks_per_group,
					     .flags = EXT4FS_ALLOC_NO_PREALLOC };
	struct ext b = alloc_ok(&img, &huge);
	assert_true(b.len <= ext4fs_geom(img.fs)->blocks_per_group);
	free_ext(&img, a);
	free_ext(&img, b);
	finish(&img, free0);
}

/* Owners that never release: the oldest inode preallocations are dropped beyond a cap. */
static void test_inode_preallocs_bounded(void **state)
{
	struct rw_image img;
	struct ext4fs_alloc_stats st;
	(void)state;
	rw_image_open(&img, 131072, 4096, NULL);
	uint64_t free0 = free_blocks(&img);
	for (uint32_t i = 0; i < 5000; i++) {
		struct ext4fs_alloc_request req = { .ino = 12 + i, .len = 1, .file_blocks = 20 };
		alloc_ok(&img, &req);
	}
	ext4fs_alloc_get_stats(img.fs, &st);
	assert_int_equal(st.preallocs, 5000);
	/* 5000 made, at most 4096 kept: the rest gave back their 19 blocks each. */
	assert_true(st.prealloc_dropped >= (5000 - 4096) * 19);
	assert_int_equal(free_blocks(&img), free0 - 5000);
	assert_alloc_ok(&img);
	rw_image_close(&img);
}

/* -- speed --------------------------------------------------------------- */

static void test_many_small_files_fast(void **state)
{
	struct rw_image img;
	struct ext4fs_alloc_stats st;
	(void)state;
	/* 1 GiB of 4 KiB blocks, mke2fs defaults. */
	rw_image_open(&img, 262144, 4096, NULL);
	const struct ext4fs_geom *geo = ext4fs_geom(img.fs);
	clock_t t0 = clock();
	for (uint32_t i = 0; i < 100000; i++) {
		struct ext4fs_alloc_request req = { .ino = 12 + i / 16, .len = 1 + i % 2, .file_blocks = 1 + i % 2 };
		uint64_t s;
		uint32_t got;
		if (ext4fs_alloc_blocks(img.fs, &req, &s, &got))
			fail_msg("small file %u: %s", i, ext4fs_errmsg(img.fs));
	}
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	ext4fs_alloc_get_stats(img.fs, &st);
	print_message("100000 small-file allocations: %.3f s CPU, %llu buddies built, %llu groups scanned\n",
		      secs, (unsigned long long)st.buddies_built, (unsigned long long)st.groups_scanned);
	/* Buddies are built once per group, never per request. */
	assert_true(st.buddies_built <= geo->group_count);
	assert_true(st.prealloc_hits >= 99000);
	/* Generous: sanitizer builds are several times slower than the target of well under 1 s. */
	assert_true(secs < 5.0);
	assert_alloc_ok(&img);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_goal_hit_and_exact_goal),
		cmocka_unit_test(test_goal_from_inode),
		cmocka_unit_test(test_whole_files_pack),
		cmocka_unit_test(test_small_files_pack),
		cmocka_unit_test(test_large_file_in_pieces),
		cmocka_unit_test(test_stripe_alignment),
		cmocka_unit_test(test_whole_file_stream_forward),
		cmocka_unit_test(test_best_fit_smallest_hole),
		cmocka_unit_test(test_buddy_pass),
		cmocka_unit_test(test_fill_to_enospc),
		cmocka_unit_test(test_random_consistency),
		cmocka_unit_test(test_external_changes_honoured),
		cmocka_unit_test(test_fence_keeps_blocks),
		cmocka_unit_test(test_bad_requests_and_tunables),
		cmocka_unit_test(test_inode_preallocs_bounded),
		cmocka_unit_test(test_many_small_files_fast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
