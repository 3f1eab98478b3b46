/*
 * test_defrag.c - the defragmenter's planner (defrag.h): a sweep lays a
 * scattered tree out in reading order, and makes room on a nearly full
 * volume for a file in many pieces; compaction closes the gaps between
 * files.  Bytes kept, a second pass moves nothing.  Judged by frag.h's
 * measures, reading the files back and the real e2fsck.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/defrag.h"
#include "ext4fs/errors.h"
#include "ext4fs/file.h"
#include "ext4fs/frag.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/namei.h"
#include "ext4fs/relocate.h"
#include "../lib/map_test.h"
#include "../lib/rw_image.h"

/* 1 KiB blocks, groups of 1024 blocks, flex groups of 4 groups: 16 groups, 4 flex groups. */
static void small_groups(struct ext4fs_mkfs_params *p)
{
	rw_tweak_1k(p);
	p->blocks_per_group = 1024;
	p->log_groups_per_flex = 2;
}

static unsigned char pattern(uint32_t ino, uint64_t off)
{
	return (unsigned char)(ino * 13 + (off / 1024) * 7 + off % 253);
}

/* A file of n blocks at free blocks found from `from` on, holding pattern(ino, ...). */
static uint32_t file_at(struct rw_image *img, uint32_t dir, const char *name, uint64_t from, unsigned n)
{
	struct ext4fs_new_attrs a = { .mode = EXT4FS_S_IFREG | 0644 };
	unsigned char buf[1024];
	struct ext4fs_inode in;
	uint64_t pblk;
	uint32_t ino;

	assert_int_equal(ext4fs_mknod(img->fs, dir, name, &a, &ino), 0);
	assert_int_equal(ext4fs_inode_read(img->fs, ino, &in), 0);
	map_test_pick_runs(img->fs, from, 1, n, &pblk);
	for (unsigned b = 0; b < n; b++) {
		for (unsigned k = 0; k < sizeof(buf); k++)
			buf[k] = pattern(ino, (uint64_t)b * 1024 + k);
		assert_int_equal(ext4fs_data_write(img->fs, pblk + b, 1, buf), 0);
	}
	assert_int_equal(ext4fs_bmap_set(img->fs, ino, &in, 0, pblk, n, 0), 0);
	ext4fs_inode_set_size(&in, (uint64_t)n * 1024);
	assert_int_equal(ext4fs_inode_write(img->fs, ino, &in), 0);
	return ino;
}

static void expect_bytes(struct ext4fs_fs *fs, uint32_t ino, unsigned n)
{
	unsigned char *buf = malloc((size_t)n * 1024);
	struct ext4fs_inode in;
	size_t got = 0;

	assert_non_null(buf);
	assert_int_equal(ext4fs_inode_read(fs, ino, &in), 0);
	assert_int_equal(ext4fs_file_read(fs, ino, &in, 0, buf, (size_t)n * 1024, &got), 0);
	assert_int_equal(got, (size_t)n * 1024);
	for (size_t k = 0; k < got; k++)
		if (buf[k] != pattern(ino, k))
			fail_msg("inode %u byte %zu differs", ino, k);
	free(buf);
}

static void dir_figures(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_frag_dir *fd)
{
	struct ext4fs_inode in;

	assert_int_equal(ext4fs_inode_read(fs, dir, &in), 0);
	assert_int_equal(ext4fs_frag_dir(fs, dir, &in, fd), 0);
}

struct tally {
	unsigned moved, stayed, in_place;
};

static int count_step(const struct ext4fs_defrag_step *s, void *arg)
{
	struct tally *t = arg;

	if (s->moved)
		t->moved++;
	else if (s->why == EXT4FS_RELOC_MOVABLE)
		t->in_place++;
	else
		t->stayed++;
	return 0;
}

static struct tally sweep_root(struct ext4fs_fs *fs)
{
	struct tally t = { 0 };
	struct ext4fs_defrag_opts o = { .reserve = 16, .each = count_step, .arg = &t };
	uint32_t *inos;
	size_t n;

	assert_int_equal(ext4fs_defrag_tree_order(fs, EXT4FS_ROOT_INO, &inos, &n), 0);
	assert_int_equal(ext4fs_defrag_sweep(fs, inos, n, &o), 0);
	free(inos);
	return t;
}

static struct tally compact_all(struct ext4fs_fs *fs)
{
	struct tally t = { 0 };
	struct ext4fs_defrag_opts o = { .reserve = 16, .each = count_step, .arg = &t };

	assert_int_equal(ext4fs_defrag_compact(fs, &o), 0);
	return t;
}

static uint64_t free_extents(struct ext4fs_fs *fs)
{
	const struct ext4fs_bitmap *bm;
	struct ext4fs_frag_free ff;

	assert_int_equal(ext4fs_fs_block_bitmap(fs, &bm), 0);
	assert_int_equal(ext4fs_frag_free_scan(fs, bm, 0, 0, &ff), 0);
	return ff.extents;
}

/*
 * Two directories whose files lie in five different block groups each: a
 * sweep puts every directory's files in one group with it, cuts the seeks
 * of reading the tree to a fraction, leaves the free space in few runs,
 * keeps every byte, and a second sweep finds every member in place.
 */
static void scattered_tree_is_laid_out_in_reading_order(void **state)
{
	struct ext4fs_new_attrs da = { .mode = EXT4FS_S_IFDIR | 0755 };
	struct ext4fs_frag_tree before, after;
	struct ext4fs_frag_dir fd;
	struct rw_image img;
	uint32_t dirs[2], files[2][5];
	struct tally t;
	(void)state;

	rw_image_open(&img, 16384, 1024, small_groups);
	for (int d = 0; d < 2; d++) {
		char name[8];
		snprintf(name, sizeof(name), "d%d", d);
		assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, name, &da, &dirs[d]), 0);
		for (int f = 0; f < 5; f++) {
			snprintf(name, sizeof(name), "f%d", f);
			/* Groups 14, 11, 8, 5, 2 (and one further for d1): far apart, backwards. */
			files[d][f] = file_at(&img, dirs[d], name, 1 + (uint64_t)(14 - 3 * f) * 1024 + 200 + 40 * d,
					      3 + f + d);
		}
	}
	dir_figures(img.fs, dirs[0], &fd);
	assert_true(fd.groups >= 5);
	assert_int_equal(ext4fs_frag_tree(img.fs, EXT4FS_ROOT_INO, &before), 0);

	t = sweep_root(img.fs);
	assert_true(t.moved >= 9);
	assert_int_equal(t.stayed, 0);
	for (int d = 0; d < 2; d++) {
		dir_figures(img.fs, dirs[d], &fd);
		assert_int_equal(fd.groups, 1);
		assert_true(fd.mean_distance < 64);
		for (int f = 0; f < 5; f++)
			expect_bytes(img.fs, files[d][f], 3 + f + d);
	}
	assert_int_equal(ext4fs_frag_tree(img.fs, EXT4FS_ROOT_INO, &after), 0);
	assert_int_equal(after.blocks, before.blocks);
	assert_true(after.seek_blocks * 10 < before.seek_blocks);
	rw_image_assert_clean(&img);

	/* A file is not split over an obstacle (metadata of a flex group, a backup superblock): each
	 * obstacle the layout crosses may leave the stretch before it free.  Sixteen groups. */
	assert_true(free_extents(img.fs) <= 12);
	t = sweep_root(img.fs);
	assert_int_equal(t.moved, 0);
	rw_image_reopen(&img);
	for (int d = 0; d < 2; d++)
		for (int f = 0; f < 5; f++)
			expect_bytes(img.fs, files[d][f], 3 + f + d);
	rw_image_close(&img);
}

static void small_groups_striped(struct ext4fs_mkfs_params *p)
{
	small_groups(p);
	p->raid_stride = 4;
	p->raid_stripe_width = 8;
}

/*
 * With a RAID stripe of 8 blocks, the sweep starts each file of 8 blocks or
 * more on a stripe boundary and packs the smaller ones; a second sweep
 * moves nothing.
 */
static void sweep_puts_large_files_on_stripe_boundaries(void **state)
{
	static const unsigned sizes[] = { 5, 9, 3, 16, 1, 8, 2 };
	const size_t nfiles = sizeof(sizes) / sizeof(sizes[0]);
	struct ext4fs_new_attrs da = { .mode = EXT4FS_S_IFDIR | 0755 };
	struct ext4fs_reloc_file f;
	struct rw_image img;
	uint32_t dir, files[7];
	uint64_t packed_small = 0;
	struct tally t;
	(void)state;

	rw_image_open(&img, 16384, 1024, small_groups_striped);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "d", &da, &dir), 0);
	for (size_t i = 0; i < nfiles; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%zu", i);
		files[i] = file_at(&img, dir, name, 1 + (uint64_t)(14 - 2 * i) * 1024 + 101, sizes[i]);
	}
	t = sweep_root(img.fs);
	assert_true(t.moved >= nfiles);
	for (size_t i = 0; i < nfiles; i++) {
		assert_int_equal(ext4fs_reloc_load(img.fs, files[i], &f), 0);
		assert_int_equal(f.nruns, 1);
		if (sizes[i] >= 8 && f.runs[0].pblk % 8)
			fail_msg("a file of %u blocks starts at %llu, off the stripe", sizes[i],
				 (unsigned long long)f.runs[0].pblk);
		if (sizes[i] < 8 && f.runs[0].pblk % 8)
			packed_small++;
		ext4fs_reloc_release(&f);
		expect_bytes(img.fs, files[i], sizes[i]);
	}
	assert_true(packed_small > 0);   /* small files are not aligned: they pack */
	rw_image_assert_clean(&img);
	t = sweep_root(img.fs);
	assert_int_equal(t.moved, 0);
	rw_image_close(&img);
}

static uint64_t first_block(struct ext4fs_fs *fs, uint32_t ino)
{
	struct ext4fs_reloc_file f;
	uint64_t b;

	assert_int_equal(ext4fs_reloc_load(fs, ino, &f), 0);
	assert_true(f.nruns > 0);
	b = f.runs[0].pblk;
	ext4fs_reloc_release(&f);
	return b;
}

static int listed(const uint32_t *inos, size_t n, uint32_t ino)
{
	for (size_t i = 0; i < n; i++)
		if (inos[i] == ino)
			return 1;
	return 0;
}

/*
 * A directory whose files lie together (as a fresh copy writes them) is
 * settled: left out of the layout, its files stay where they are; so is
 * one holding a single contiguous file of 3000 blocks.  One whose files
 * are spread over the groups, one with free holes between its files, one
 * whose two files lie three groups apart with no hole between, and one
 * without files are laid out.  After the sweep the laid-out ones with
 * files are settled too.
 */
static void settled_directories_stay(void **state)
{
	struct ext4fs_new_attrs da = { .mode = EXT4FS_S_IFDIR | 0755 };
	struct rw_image img;
	uint32_t packed, spread, holey, empty, far, big, pf[4], sf[4], hf[4], ff[2], filler, *inos, *keep;
	uint64_t at[4];
	size_t n, nkeep, nspans, dirs;
	struct ext4fs_prun *spans;
	(void)state;

	rw_image_open(&img, 16384, 1024, small_groups);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "packed", &da, &packed), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "spread", &da, &spread), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "holey", &da, &holey), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "empty", &da, &empty), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "far", &da, &far), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "big", &da, &big), 0);
	/* far's two files with big's file between them: no free hole, but 3000 blocks (three groups) apart. */
	ff[0] = file_at(&img, far, "a", 1 + 13 * 1024 + 10, 5);
	filler = file_at(&img, big, "filler", 1 + 13 * 1024 + 15, 3000);
	ff[1] = file_at(&img, far, "b", 1 + 13 * 1024 + 3015, 5);
	assert_int_equal(first_block(img.fs, ff[1]) - first_block(img.fs, ff[0]), 3005);
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		pf[i] = file_at(&img, packed, name, 1 + 9 * 1024 + 300, 5);       /* one after the other */
		sf[i] = file_at(&img, spread, name, 1 + (uint64_t)(3 + 3 * i) * 1024 + 500, 5);
		hf[i] = file_at(&img, holey, name, 1 + 12 * 1024 + 100 + 40 * (uint64_t)i, 5);
		at[i] = first_block(img.fs, pf[i]);
	}
	assert_int_equal(ext4fs_defrag_tree_order(img.fs, EXT4FS_ROOT_INO, &inos, &n), 0);
	assert_int_equal(ext4fs_defrag_settled(img.fs, inos, n, &keep, &nkeep, &spans, &nspans, &dirs), 0);
	assert_int_equal(dirs, 2);
	assert_true(listed(keep, nkeep, packed));
	assert_true(listed(keep, nkeep, big));
	assert_true(listed(keep, nkeep, filler));
	assert_false(listed(keep, nkeep, far));
	assert_false(listed(keep, nkeep, spread));
	assert_false(listed(keep, nkeep, holey));
	assert_false(listed(keep, nkeep, empty));
	for (int i = 0; i < 4; i++) {
		assert_true(listed(keep, nkeep, pf[i]));
		assert_false(listed(keep, nkeep, sf[i]));
		assert_false(listed(keep, nkeep, hf[i]));
	}
	{
		struct tally t = { 0 };
		struct ext4fs_defrag_opts o = { .reserve = 16, .each = count_step, .arg = &t, .keep = keep, .nkeep = nkeep,
					       .reserved = spans, .nreserved = nspans };
		assert_int_equal(ext4fs_defrag_sweep(img.fs, inos, n, &o), 0);
		assert_true(t.moved >= 8);
	}
	free(inos);
	free(keep);
	free(spans);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(first_block(img.fs, pf[i]), at[i]);
		expect_bytes(img.fs, pf[i], 5);
		expect_bytes(img.fs, sf[i], 5);
		expect_bytes(img.fs, hf[i], 5);
	}
	rw_image_assert_clean(&img);
	assert_int_equal(ext4fs_defrag_tree_order(img.fs, EXT4FS_ROOT_INO, &inos, &n), 0);
	assert_int_equal(ext4fs_defrag_settled(img.fs, inos, n, &keep, &nkeep, &spans, &nspans, &dirs), 0);
	assert_int_equal(dirs, 5);
	assert_false(listed(keep, nkeep, empty));
	free(inos);
	free(keep);
	free(spans);
	rw_image_close(&img);
}

/*
 * A directory whose files lie together but interleaved with the files of
 * one that will move is not kept: their leaving would leave holes all
 * through it.  A file linked from it and from a directory that stays,
 * stays with the latter.
 */
static void interleaved_directories_move(void **state)
{
	struct ext4fs_new_attrs da = { .mode = EXT4FS_S_IFDIR | 0755 };
	struct rw_image img;
	uint32_t inter, mover, alone, inf[4], mf[6], af[2], *inos, *keep;
	size_t n, nkeep, nspans, dirs;
	struct ext4fs_prun *spans;
	(void)state;

	rw_image_open(&img, 16384, 1024, small_groups);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "inter", &da, &inter), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "mover", &da, &mover), 0);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "alone", &da, &alone), 0);
	/* In group 13: inter's files and mover's alternate, then mover's filler, then alone's two files. */
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "i%d", i);
		inf[i] = file_at(&img, inter, name, 1 + 13 * 1024 + 10 + 10 * (uint64_t)i, 5);
		snprintf(name, sizeof(name), "m%d", i);
		mf[i] = file_at(&img, mover, name, 1 + 13 * 1024 + 15 + 10 * (uint64_t)i, 5);
	}
	mf[4] = file_at(&img, mover, "fill", 1 + 13 * 1024 + 50, 150);
	mf[5] = file_at(&img, mover, "far", 1 + 6 * 1024 + 500, 5);   /* mover spans many groups: it moves */
	af[0] = file_at(&img, alone, "a0", 1 + 13 * 1024 + 200, 5);
	af[1] = file_at(&img, alone, "a1", 1 + 13 * 1024 + 205, 1);
	assert_int_equal(first_block(img.fs, af[1]) - first_block(img.fs, inf[0]), 195);
	/* a0 is also inter's: when inter goes, a0 must stay with alone (or alone's span would hold a mover). */
	assert_int_equal(ext4fs_link(img.fs, inter, "also-a0", af[0]), 0);
	assert_int_equal(ext4fs_defrag_tree_order(img.fs, EXT4FS_ROOT_INO, &inos, &n), 0);
	assert_int_equal(ext4fs_defrag_settled(img.fs, inos, n, &keep, &nkeep, &spans, &nspans, &dirs), 0);
	assert_int_equal(dirs, 1);
	assert_true(listed(keep, nkeep, alone));
	assert_true(listed(keep, nkeep, af[0]));
	assert_true(listed(keep, nkeep, af[1]));
	assert_false(listed(keep, nkeep, inter));
	assert_false(listed(keep, nkeep, mover));
	for (int i = 0; i < 4; i++)
		assert_false(listed(keep, nkeep, inf[i]));
	for (int i = 0; i < 6; i++)
		assert_false(listed(keep, nkeep, mf[i]));
	free(inos);
	free(keep);
	free(spans);
	rw_image_close(&img);
}

/* Fill every free run in [lo, hi) but those in skip[0..nskip) (pairs of bounds) with files that must stay. */
static void fill_fixed(struct rw_image *img, uint32_t dir, uint64_t lo, uint64_t hi, const uint64_t *skip, size_t nskip)
{
	const struct ext4fs_bitmap *bm;
	struct ext4fs_inode in;
	unsigned k = 0;

	for (uint64_t at = lo; at < hi;) {
		uint64_t a, b;
		uint32_t ino;
		char name[16];
		int skipped = 0;

		assert_int_equal(ext4fs_fs_block_bitmap(img->fs, &bm), 0);
		if (ext4fs_bitmap_find(bm, at, hi - 1, 0, &a))
			break;
		if (ext4fs_bitmap_find(bm, a, hi - 1, 1, &b))
			b = hi;
		for (size_t i = 0; i < nskip; i++)
			if (a >= skip[2 * i] && a < skip[2 * i + 1]) {
				at = skip[2 * i + 1];
				skipped = 1;
			}
		if (skipped)
			continue;
		for (size_t i = 0; i < nskip; i++)
			if (skip[2 * i] > a && skip[2 * i] < b)
				b = skip[2 * i];
		snprintf(name, sizeof(name), "fixed%u", k++);
		ino = file_at(img, dir, name, a, (unsigned)(b - a));
		assert_int_equal(ext4fs_inode_read(img->fs, ino, &in), 0);
		in.i_flags |= EXT4FS_IMMUTABLE_FL;
		assert_int_equal(ext4fs_inode_write(img->fs, ino, &in), 0);
		at = b;
	}
}

static int count_room_step(const struct ext4fs_defrag_step *s, void *arg)
{
	struct ext4fs_defrag_step *out = arg;

	*out = *s;
	return 0;
}

/*
 * A file in forty pieces that no free run can hold: file mode leaves it in
 * several; making room finds the stretch of its size where the fewest blocks of
 * other files lie (five small files a hundred blocks apart, rather than
 * twenty packed closer elsewhere), moves them out and the file in, whole.
 */
static void room_is_made_where_fewest_bytes_move(void **state)
{
	struct ext4fs_new_attrs da = { .mode = EXT4FS_S_IFDIR | 0755 };
	const uint64_t a_lo = 1 + 14 * 1024, a_hi = a_lo + 1024, b_lo = 1 + 10 * 1024, b_hi = b_lo + 800;
	const uint64_t skip[4] = { a_lo, a_hi, b_lo, b_hi };
	struct ext4fs_defrag_opts o = { .reserve = 16 };
	struct ext4fs_defrag_step step;
	struct ext4fs_reloc_result res;
	struct ext4fs_reloc_file f;
	enum ext4fs_reloc_skip why;
	struct rw_image img;
	uint32_t dir, big, sparse_files[10], dense_files[40];
	uint64_t dense_at[40];
	int moved_sparse = 0;
	(void)state;

	rw_image_open(&img, 16384, 1024, small_groups);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "d", &da, &dir), 0);
	{
		/* The big file: forty runs of ten blocks in group 12, twenty apart. */
		struct ext4fs_new_attrs fa = { .mode = EXT4FS_S_IFREG | 0644 };
		unsigned char buf[1024];
		struct ext4fs_inode in;

		assert_int_equal(ext4fs_mknod(img.fs, dir, "big", &fa, &big), 0);
		assert_int_equal(ext4fs_inode_read(img.fs, big, &in), 0);
		for (unsigned r = 0; r < 40; r++) {
			uint64_t pblk;
			map_test_pick_runs(img.fs, 1 + 12 * 1024 + 20 * (uint64_t)r, 1, 10, &pblk);
			for (unsigned b = 0; b < 10; b++) {
				for (unsigned k = 0; k < sizeof(buf); k++)
					buf[k] = pattern(big, (uint64_t)(r * 10 + b) * 1024 + k);
				assert_int_equal(ext4fs_data_write(img.fs, pblk + b, 1, buf), 0);
			}
			assert_int_equal(ext4fs_bmap_set(img.fs, big, &in, r * 10, pblk, 10, 0), 0);
		}
		ext4fs_inode_set_size(&in, 400 * 1024);
		assert_int_equal(ext4fs_inode_write(img.fs, big, &in), 0);
	}
	for (int i = 0; i < 10; i++) {
		char name[8];
		snprintf(name, sizeof(name), "s%d", i);
		sparse_files[i] = file_at(&img, dir, name, a_lo + 100 * (uint64_t)i, 5);
	}
	for (int i = 0; i < 40; i++) {
		char name[8];
		snprintf(name, sizeof(name), "n%d", i);
		dense_files[i] = file_at(&img, dir, name, b_lo + 20 * (uint64_t)i, 5);
		dense_at[i] = first_block(img.fs, dense_files[i]);
	}
	fill_fixed(&img, dir, 1, 16384, skip, 2);

	/* File mode can only gather it into the longest free runs there are: still several extents. */
	assert_int_equal(ext4fs_reloc_defrag_file(img.fs, big, 16, &why, &res), 0);
	assert_int_equal(ext4fs_reloc_load(img.fs, big, &f), 0);
	assert_true(f.extents > 1);
	ext4fs_reloc_release(&f);

	o.each = count_room_step;
	o.arg = &step;
	assert_int_equal(ext4fs_defrag_make_room(img.fs, &big, 1, &o), 0);
	assert_int_equal(step.ino, big);
	assert_true(step.moved);
	assert_int_equal(ext4fs_reloc_load(img.fs, big, &f), 0);
	assert_int_equal(f.extents, 1);
	assert_true(f.runs[0].pblk >= a_lo && f.runs[0].pblk + 400 <= a_hi);
	ext4fs_reloc_release(&f);
	expect_bytes(img.fs, big, 400);
	for (int i = 0; i < 10; i++) {
		moved_sparse += first_block(img.fs, sparse_files[i]) != a_lo + 100 * (uint64_t)i;
		expect_bytes(img.fs, sparse_files[i], 5);
	}
	assert_true(moved_sparse >= 3 && moved_sparse <= 5);   /* a 400-block stretch holds four or five of them */
	for (int i = 0; i < 40; i++)
		assert_int_equal(first_block(img.fs, dense_files[i]), dense_at[i]);
	assert_true(step.res.blocks_moved <= 400 + 5 * 5);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * Forty files of 4 blocks, each followed by a free gap of 4, in group 6 (flex
 * group 1): compaction slides each into the gap before it, so the flex
 * group's free space becomes one run at its end; every byte stays; a
 * fragmented file and an immutable one stay where they are (obstacles);
 * a second pass moves nothing.
 */
static void free_space_is_compacted(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint32_t d, files[40], frag_file, stuck;
	uint64_t extents_before, extents_after, first[40], frag_first, stuck_pblk;
	struct tally t;
	(void)state;

	rw_image_open(&img, 16384, 1024, small_groups);
	{
		struct ext4fs_new_attrs da = { .mode = EXT4FS_S_IFDIR | 0755 };
		assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "d", &da, &d), 0);
	}
	for (int i = 0; i < 40; i++) {
		char name[8];
		uint64_t b;
		snprintf(name, sizeof(name), "f%d", i);
		/* file_at takes the first free run from the hint on: leave 4 blocks free before each. */
		files[i] = file_at(&img, d, name, 6 * 1024 + 100 + 8 * i, 4);
		assert_int_equal(ext4fs_inode_read(img.fs, files[i], &in), 0);
		assert_int_equal(ext4fs_bmap(img.fs, files[i], &in, 0, &first[i], &b, NULL), 0);
	}
	assert_int_equal(first[1] - first[0], 8);
	/* An immutable file after them, then a file in two pieces. */
	stuck = file_at(&img, d, "stuck", 6 * 1024 + 500, 2);
	assert_int_equal(ext4fs_inode_read(img.fs, stuck, &in), 0);
	in.i_flags |= EXT4FS_IMMUTABLE_FL;
	assert_int_equal(ext4fs_inode_write(img.fs, stuck, &in), 0);
	assert_int_equal(ext4fs_bmap(img.fs, stuck, &in, 0, &stuck_pblk, &frag_first, NULL), 0);
	frag_file = file_at(&img, d, "twopieces", 6 * 1024 + 600, 2);
	{
		uint64_t far;
		map_test_pick_runs(img.fs, 6 * 1024 + 800, 1, 2, &far);
		assert_int_equal(ext4fs_inode_read(img.fs, frag_file, &in), 0);
		assert_int_equal(ext4fs_bmap_set(img.fs, frag_file, &in, 2, far, 2, 0), 0);
		ext4fs_inode_set_size(&in, 4 * 1024);
		assert_int_equal(ext4fs_inode_write(img.fs, frag_file, &in), 0);
		assert_int_equal(ext4fs_bmap(img.fs, frag_file, &in, 0, &frag_first, &far, NULL), 0);
	}
	extents_before = free_extents(img.fs);

	t = compact_all(img.fs);
	assert_true(t.moved >= 39);
	extents_after = free_extents(img.fs);
	assert_true(extents_after + 35 <= extents_before);
	for (int i = 0; i < 40; i++) {
		uint64_t p, run;
		expect_bytes(img.fs, files[i], 4);
		assert_int_equal(ext4fs_inode_read(img.fs, files[i], &in), 0);
		assert_int_equal(ext4fs_bmap(img.fs, files[i], &in, 0, &p, &run, NULL), 0);
		if (i > 0)
			assert_int_equal(p, first[i - 1] + 4);     /* packed right after the one before */
		first[i] = p;
	}
	{
		uint64_t p, run;
		assert_int_equal(ext4fs_inode_read(img.fs, stuck, &in), 0);
		assert_int_equal(ext4fs_bmap(img.fs, stuck, &in, 0, &p, &run, NULL), 0);
		assert_int_equal(p, stuck_pblk);
		assert_int_equal(ext4fs_inode_read(img.fs, frag_file, &in), 0);
		assert_int_equal(ext4fs_bmap(img.fs, frag_file, &in, 0, &p, &run, NULL), 0);
		assert_int_equal(p, frag_first);
	}
	rw_image_assert_clean(&img);
	t = compact_all(img.fs);
	assert_int_equal(t.moved, 0);
	assert_int_equal(free_extents(img.fs), extents_after);
	rw_image_close(&img);
}

/* 1 KiB blocks, one flex group, no backup superblocks: the data area is one stretch. */
static void one_stretch(struct ext4fs_mkfs_params *p)
{
	small_groups(p);
	p->log_groups_per_flex = 4;
	p->feature_compat |= EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2;
	p->num_backup_sb = 0;
}

/*
 * A volume 90% full of slots of 12 blocks taking turns between small files
 * and the pieces of one large file, the rest free: the large file cannot
 * get a free run of its size anywhere.  The sweep makes room step by step
 * and leaves it in one extent, the small files packed, the free space in
 * a few runs; every byte stays; a second sweep moves nothing.
 */
static void sweep_makes_room_on_a_full_volume(void **state)
{
	struct ext4fs_new_attrs da = { .mode = EXT4FS_S_IFDIR | 0755 };
	struct ext4fs_new_attrs fa = { .mode = EXT4FS_S_IFREG | 0644 };
	unsigned char buf[12 * 1024];
	struct ext4fs_frag_file ff;
	struct ext4fs_inode big_in;
	struct rw_image img;
	uint32_t d, big, small[600];
	uint64_t slots, at = 0, lblk = 0;
	unsigned nsmall = 0;
	struct tally t;
	(void)state;

	rw_image_open(&img, 16384, 1024, one_stretch);
	assert_int_equal(ext4fs_mkdir(img.fs, EXT4FS_ROOT_INO, "small", &da, &d), 0);
	assert_int_equal(ext4fs_mknod(img.fs, EXT4FS_ROOT_INO, "big", &fa, &big), 0);
	assert_int_equal(ext4fs_inode_read(img.fs, big, &big_in), 0);
	slots = map_test_free(img.fs) * 9 / 10 / 12;
	if (slots > 2 * 600)
		slots = 2 * 600;
	for (uint64_t i = 0; i < slots; i++) {
		if (i % 2 == 0) {
			char name[16];
			snprintf(name, sizeof(name), "s%u", nsmall);
			small[nsmall] = file_at(&img, d, name, at, 12);
			assert_int_equal(ext4fs_inode_read(img.fs, small[nsmall], &big_in), 0);
			assert_int_equal(ext4fs_bmap(img.fs, small[nsmall], &big_in, 0, &at, &lblk, NULL), 0);
			at += 12;
			nsmall++;
		} else {
			uint64_t p;
			map_test_pick_runs(img.fs, at, 1, 12, &p);
			for (unsigned k = 0; k < sizeof(buf); k++)
				buf[k] = pattern(big, (uint64_t)(i / 2) * 12 * 1024 + k);
			assert_int_equal(ext4fs_data_write(img.fs, p, 12, buf), 0);
			assert_int_equal(ext4fs_inode_read(img.fs, big, &big_in), 0);
			assert_int_equal(ext4fs_bmap_set(img.fs, big, &big_in, (i / 2) * 12, p, 12, 0), 0);
			at = p + 12;
		}
	}
	assert_int_equal(ext4fs_inode_read(img.fs, big, &big_in), 0);
	ext4fs_inode_set_size(&big_in, slots / 2 * 12 * 1024);
	assert_int_equal(ext4fs_inode_write(img.fs, big, &big_in), 0);
	assert_int_equal(ext4fs_frag_file(img.fs, big, &big_in, &ff), 0);
	assert_true(ff.extents >= 400);

	t = sweep_root(img.fs);
	assert_int_equal(t.stayed, 0);
	assert_int_equal(ext4fs_inode_read(img.fs, big, &big_in), 0);
	assert_int_equal(ext4fs_frag_file(img.fs, big, &big_in, &ff), 0);
	assert_int_equal(ff.extents, 1);
	assert_true(free_extents(img.fs) <= 4);
	for (unsigned i = 0; i < nsmall; i++)
		expect_bytes(img.fs, small[i], 12);
	{
		uint64_t size = slots / 2 * 12 * 1024;
		unsigned char *all = malloc(size);
		size_t got = 0;
		assert_non_null(all);
		assert_int_equal(ext4fs_file_read(img.fs, big, &big_in, 0, all, size, &got), 0);
		assert_int_equal(got, size);
		for (uint64_t k = 0; k < size; k++)
			if (all[k] != pattern(big, k))
				fail_msg("big: byte %llu differs", (unsigned long long)k);
		free(all);
	}
	rw_image_assert_clean(&img);
	t = sweep_root(img.fs);
	assert_int_equal(t.moved, 0);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scattered_tree_is_laid_out_in_reading_order),
		cmocka_unit_test(sweep_makes_room_on_a_full_volume),
		cmocka_unit_test(free_space_is_compacted),
		cmocka_unit_test(settled_directories_stay),
		cmocka_unit_test(interleaved_directories_move),
		cmocka_unit_test(room_is_made_where_fewest_bytes_move),
		cmocka_unit_test(sweep_puts_large_files_on_stripe_boundaries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
