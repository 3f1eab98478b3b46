/*
 * test_relocate.c - moving a file's blocks (relocate.h): files scattered
 * block run by block run are moved into one run, their bytes, holes and
 * unwritten extents kept, on extent and block-mapped files, and a move
 * killed at every write of the disk leaves, after replay, the old or the
 * new file, whole.  Judged by reading the file back and by the real
 * e2fsck.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/file.h"
#include "ext4fs/frag.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/io_fault.h"
#include "ext4fs/io_overlay.h"
#include "ext4fs/journal.h"
#include "ext4fs/relocate.h"
#include "ext4fs/txn.h"
#include "../lib/map_test.h"
#include "../lib/rw_image.h"

/* The byte at offset `off` of test file `seed`: every block of every file differs. */
static unsigned char pattern(uint32_t seed, uint64_t off)
{
	return (unsigned char)((off / 512) * 131 + seed * 7 + off % 251);
}

/* How the test files are laid out: runs of `runlen` blocks scattered from `from`. */
struct shape {
	unsigned runs;
	unsigned runlen;
	unsigned hole_after;      /* a hole of 3 blocks after this many runs (0: none) */
	unsigned unwritten_run;   /* this run (1-based) is unwritten (0: none; extent files only) */
};

static uint64_t file_blocks(const struct shape *s)
{
	return (uint64_t)s->runs * s->runlen + (s->hole_after ? 3 : 0);
}

static int run_unwritten(const struct shape *s, unsigned i)
{
	return s->unwritten_run && i + 1 == s->unwritten_run;
}

/* Logical block of run i. */
static uint64_t run_lblk(const struct shape *s, unsigned i)
{
	return (uint64_t)i * s->runlen + (s->hole_after && i >= s->hole_after ? 3 : 0);
}

/* Make file `name` with the given shape, its written blocks holding pattern(seed, ...). */
static uint32_t scattered_file(struct rw_image *img, const char *name, uint32_t seed, uint64_t from,
			       const struct shape *s)
{
	uint32_t bs = ext4fs_geom(img->fs)->block_size;
	unsigned char *buf = malloc((size_t)s->runlen * bs);
	uint64_t *starts = calloc(s->runs, sizeof(*starts));
	struct ext4fs_inode in;
	uint32_t ino;

	assert_non_null(buf);
	assert_non_null(starts);
	ino = map_test_new_file(img, name, &in);
	map_test_pick_runs(img->fs, from, s->runs, s->runlen, starts);
	for (unsigned i = 0; i < s->runs; i++) {
		uint64_t l = run_lblk(s, i);
		for (size_t k = 0; k < (size_t)s->runlen * bs; k++)
			buf[k] = pattern(seed, l * bs + k);
		if (!run_unwritten(s, i))
			assert_int_equal(ext4fs_data_write(img->fs, starts[i], s->runlen, buf), 0);
		assert_int_equal(ext4fs_bmap_set(img->fs, ino, &in, l, starts[i], s->runlen, run_unwritten(s, i)), 0);
	}
	ext4fs_inode_set_size(&in, file_blocks(s) * bs);
	assert_int_equal(ext4fs_inode_write(img->fs, ino, &in), 0);
	free(starts);
	free(buf);
	return ino;
}

/* The file reads back as made: pattern in written runs, zeros in the hole and the unwritten run. */
static void expect_bytes(struct ext4fs_fs *fs, uint32_t ino, uint32_t seed, const struct shape *s)
{
	uint32_t bs = ext4fs_geom(fs)->block_size;
	uint64_t size = file_blocks(s) * bs;
	unsigned char *buf = malloc(size);
	struct ext4fs_inode in;
	size_t got = 0;

	assert_non_null(buf);
	assert_int_equal(ext4fs_inode_read(fs, ino, &in), 0);
	assert_int_equal(ext4fs_inode_size(&in), size);
	assert_int_equal(ext4fs_file_read(fs, ino, &in, 0, buf, size, &got), 0);
	assert_int_equal(got, size);
	for (unsigned i = 0; i < s->runs; i++) {
		uint64_t l = run_lblk(s, i);
		for (size_t k = 0; k < (size_t)s->runlen * bs; k++) {
			unsigned char want = run_unwritten(s, i) ? 0 : pattern(seed, l * bs + k);
			if (buf[l * bs + k] != want)
				fail_msg("inode %u byte %llu: %u, expected %u", ino, (unsigned long long)(l * bs + k),
					 buf[l * bs + k], want);
		}
	}
	if (s->hole_after)
		for (uint64_t k = 0; k < 3ULL * bs; k++)
			assert_int_equal(buf[run_lblk(s, s->hole_after) * bs - 3 * bs + k], 0);
	free(buf);
}

static void file_figures(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_frag_file *ff)
{
	struct ext4fs_inode in;

	assert_int_equal(ext4fs_inode_read(fs, ino, &in), 0);
	assert_int_equal(ext4fs_frag_file(fs, ino, &in, ff), 0);
}

/*
 * An extent file of 40 scattered runs (a hole, an unwritten run, an index
 * block) becomes two extents (the hole splits it), loses its index block,
 * keeps its bytes, its hole and its unwritten run; a second pass finds it
 * in its fewest extents and moves nothing.
 */
static void extent_file_is_made_contiguous(void **state)
{
	const struct shape s = { .runs = 40, .runlen = 3, .hole_after = 20, .unwritten_run = 7 };
	struct ext4fs_reloc_result res;
	struct ext4fs_frag_file before, after;
	enum ext4fs_reloc_skip why;
	struct rw_image img;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	ino = scattered_file(&img, "scattered", 1, 3000, &s);
	file_figures(img.fs, ino, &before);
	assert_int_equal(before.extents, 40);
	assert_true(before.map_blocks >= 1);
	assert_int_equal(ext4fs_reloc_defrag_file(img.fs, ino, 16, &why, &res), 0);
	assert_int_equal(why, EXT4FS_RELOC_MOVABLE);
	assert_int_equal(res.blocks_moved, 120);
	assert_int_equal(res.bytes_copied, 117 * 4096);
	assert_int_equal(res.extents_before, 40);
	assert_int_equal(res.extents_after, 2);
	file_figures(img.fs, ino, &after);
	assert_int_equal(after.extents, 2);
	assert_int_equal(after.blocks, 120);
	assert_int_equal(after.unwritten_blocks, 3);
	assert_int_equal(after.map_blocks, 0);
	expect_bytes(img.fs, ino, 1, &s);

	assert_int_equal(ext4fs_reloc_defrag_file(img.fs, ino, 16, &why, &res), 0);
	assert_int_equal(why, EXT4FS_RELOC_IDEAL);
	assert_int_equal(res.blocks_moved, 0);
	rw_image_assert_clean(&img);
	rw_image_reopen(&img);
	expect_bytes(img.fs, ino, 1, &s);
	rw_image_close(&img);
}

static void stripe_tweak(struct ext4fs_mkfs_params *p)
{
	p->raid_stride = 16;
	p->raid_stripe_width = 64;
}

/*
 * With a RAID stripe in the superblock, a file of a stripe or more moves to
 * a stripe boundary (as the kernel's allocator places it); a smaller one
 * goes to the tightest run, where it starts.
 */
static void large_file_lands_on_a_stripe_boundary(void **state)
{
	const struct shape big = { .runs = 40, .runlen = 3, .hole_after = 20, .unwritten_run = 7 };
	const struct shape small = { .runs = 10, .runlen = 2, .hole_after = 0, .unwritten_run = 0 };
	struct ext4fs_reloc_result res;
	struct ext4fs_reloc_file f;
	enum ext4fs_reloc_skip why;
	struct rw_image img;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, stripe_tweak);
	assert_int_equal(ext4fs_alloc_stripe(img.fs), 64);
	for (uint32_t seed = 10; seed < 13; seed++) {
		char name[16];
		snprintf(name, sizeof(name), "big%u", seed);
		ino = scattered_file(&img, name, seed, 2000 + 1000 * seed, &big);
		assert_int_equal(ext4fs_reloc_defrag_file(img.fs, ino, 16, &why, &res), 0);
		assert_int_equal(why, EXT4FS_RELOC_MOVABLE);
		assert_int_equal(ext4fs_reloc_load(img.fs, ino, &f), 0);
		if (f.runs[0].pblk % 64)
			fail_msg("%s starts at block %llu, not on a stripe boundary", name,
				 (unsigned long long)f.runs[0].pblk);
		ext4fs_reloc_release(&f);
		expect_bytes(img.fs, ino, seed, &big);
	}
	ino = scattered_file(&img, "small", 20, 9000, &small);
	assert_int_equal(ext4fs_reloc_defrag_file(img.fs, ino, 16, &why, &res), 0);
	assert_int_equal(res.extents_after, 1);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* A block-mapped (ext3) file stays block-mapped and becomes one extent of data. */
static void block_mapped_file_stays_block_mapped(void **state)
{
	const struct shape s = { .runs = 60, .runlen = 5, .hole_after = 0, .unwritten_run = 0 };
	struct ext4fs_reloc_result res;
	struct ext4fs_frag_file after;
	struct ext4fs_inode in;
	enum ext4fs_reloc_skip why;
	struct rw_image img;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 1024, rw_tweak_ext3ish_1k);
	ino = scattered_file(&img, "ext3file", 2, 2000, &s);
	assert_int_equal(ext4fs_reloc_defrag_file(img.fs, ino, 16, &why, &res), 0);
	assert_int_equal(why, EXT4FS_RELOC_MOVABLE);
	assert_int_equal(res.extents_before, 60);
	assert_int_equal(res.blocks_moved, 300);
	file_figures(img.fs, ino, &after);
	assert_int_equal(after.extents, 1);
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &in), 0);
	assert_false(ext4fs_inode_has_extents(&in));
	expect_bytes(img.fs, ino, 2, &s);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* Space: the tightest single run; else the fewest longest runs; never past the reserve. */
static void space_is_chosen_tightly(void **state)
{
	struct ext4fs_prun *t = NULL;
	struct rw_image img;
	uint64_t free_blocks;
	size_t n = 0;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	free_blocks = map_test_free(img.fs);
	assert_int_equal(ext4fs_reloc_find_space(img.fs, 0, 0, 0, 0, 0, &t, &n), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_reloc_find_space(img.fs, free_blocks + 1, 0, 0, 0, 0, &t, &n), EXT4FS_E_NO_SPACE);
	assert_int_equal(ext4fs_reloc_find_space(img.fs, free_blocks - 10, 0, 0, 11, 0, &t, &n), EXT4FS_E_NO_SPACE);
	/* Carve a hole of exactly 7 free blocks in a used stretch: it is the tightest fit for 7. */
	assert_int_equal(ext4fs_blocks_mark_used(img.fs, 9000, 100), 0);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, 9040, 7), 0);
	assert_int_equal(ext4fs_reloc_find_space(img.fs, 7, 0, 0, 0, 0, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].pblk, 9040);
	assert_int_equal(t[0].len, 7);
	free(t);
	/* Near: the first run from the goal on, starting at the goal. */
	assert_int_equal(ext4fs_reloc_find_space(img.fs, 5, 9200, 0, 0, EXT4FS_RELOC_NEAR, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].pblk, 9200);
	free(t);
	rw_image_close(&img);
}

/* Files that must stay are named so, and a move of one is refused. */
static void system_and_immutable_files_stay(void **state)
{
	const struct shape s = { .runs = 4, .runlen = 2, .hole_after = 0, .unwritten_run = 0 };
	struct ext4fs_reloc_result res;
	struct ext4fs_reloc_file f;
	struct ext4fs_inode in;
	enum ext4fs_reloc_skip why;
	struct ext4fs_prun t = { 12000, 8 };
	struct rw_image img;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 4096, NULL);
	assert_int_equal(ext4fs_reloc_load(img.fs, ext4fs_sb(img.fs)->s_journal_inum, &f), 0);
	assert_int_equal(f.skip, EXT4FS_RELOC_SYSTEM);
	assert_int_equal(ext4fs_reloc_move(img.fs, &f, &t, 1, &res), EXT4FS_E_INVALID_ARG);
	ext4fs_reloc_release(&f);
	ino = scattered_file(&img, "boot", 3, 3000, &s);
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &in), 0);
	in.i_flags |= EXT4FS_IMMUTABLE_FL;
	assert_int_equal(ext4fs_inode_write(img.fs, ino, &in), 0);
	assert_int_equal(ext4fs_reloc_defrag_file(img.fs, ino, 16, &why, &res), 0);
	assert_int_equal(why, EXT4FS_RELOC_IMMUTABLE);
	assert_int_equal(res.blocks_moved, 0);
	assert_string_equal(ext4fs_reloc_skip_name(why), "immutable");
	rw_image_close(&img);
}

/* -- A move killed at every write ------------------------------------------ */

static const struct shape crash_shape = { .runs = 80, .runlen = 2, .hole_after = 40, .unwritten_run = 5 };

/* Small journal, 1 KiB blocks: several pieces, several commits. */
static void crash_tweak(struct ext4fs_mkfs_params *p)
{
	rw_tweak_1k(p);
	p->journal_blocks = 1024;
}

/* Every free block gets a swap signature where a file's first 4 KiB ends: stale bytes a rehearsal must not believe. */
static void plant_swap_signatures(struct ext4fs_fs *fs)
{
	uint32_t bs = ext4fs_geom(fs)->block_size;
	const struct ext4fs_bitmap *bm;
	unsigned char *b = calloc(1, bs);
	uint64_t blk = ext4fs_geom(fs)->first_data_block, end = ext4fs_geom(fs)->blocks_count;

	assert_non_null(b);
	memcpy(b + (4096 - 10) % bs, "SWAPSPACE2", 10);
	assert_int_equal(ext4fs_fs_block_bitmap(fs, &bm), 0);
	while (blk < end && ext4fs_bitmap_find(bm, blk, end - 1, 0, &blk) == 0) {
		assert_int_equal(ext4fs_data_write(fs, blk, 1, b), 0);
		blk++;
	}
	free(b);
}

/*
 * A rehearsal (EXT4FS_OPEN_REHEARSE over a read-only channel) reports the
 * move the real one then makes, figure for figure, still finds the moved
 * file no swap file though the stale bytes at its new place say it is
 * one, and leaves the disk as it was; a rehearsal over a channel that
 * writes through is refused.
 */
static void rehearsal_predicts_and_writes_nothing(void **state)
{
	const struct shape s = { .runs = 40, .runlen = 3, .hole_after = 20, .unwritten_run = 7 };
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RW | EXT4FS_OPEN_REHEARSE };
	struct ext4fs_reloc_result plan, real, again;
	struct ext4fs_frag_file after;
	struct ext4fs_reloc_file f;
	enum ext4fs_reloc_skip why;
	struct ext4fs_io *mem, *io;
	struct ext4fs_fs *fs;
	struct rw_image img;
	unsigned char *saved;
	char msg[256];
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 1024, crash_tweak);
	plant_swap_signatures(img.fs);
	ino = scattered_file(&img, "scattered", 3, 3000, &s);
	ext4fs_close(img.fs);
	img.fs = NULL;
	assert_non_null(saved = malloc(img.size));
	memcpy(saved, img.buf, img.size);

	assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 1, &mem), 0);
	assert_int_equal(ext4fs_open_io(mem, &o, &fs, msg, sizeof(msg)), EXT4FS_E_INVALID_ARG);

	assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 0, &mem), 0);
	assert_int_equal(ext4fs_io_overlay_wrap(mem, &io), 0);
	if (ext4fs_open_io(io, &o, &fs, msg, sizeof(msg)))
		fail_msg("opening the rehearsal: %s", msg);
	assert_int_equal(ext4fs_txn_start(fs), 0);
	assert_int_equal(ext4fs_reloc_defrag_file(fs, ino, 16, &why, &plan), 0);
	assert_int_equal(why, EXT4FS_RELOC_MOVABLE);
	file_figures(fs, ino, &after);
	assert_int_equal(after.extents, plan.extents_after);
	assert_int_equal(ext4fs_reloc_load(fs, ino, &f), 0);
	assert_int_equal(f.skip, EXT4FS_RELOC_MOVABLE);
	ext4fs_reloc_release(&f);
	assert_int_equal(ext4fs_reloc_defrag_file(fs, ino, 16, &why, &again), 0);
	assert_int_equal(why, EXT4FS_RELOC_IDEAL);
	assert_int_equal(ext4fs_txn_stop(fs), 0);
	assert_int_equal(ext4fs_flush(fs), 0);
	ext4fs_close(fs);
	assert_memory_equal(img.buf, saved, img.size);

	rw_image_reopen_raw(&img);
	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_int_equal(ext4fs_reloc_defrag_file(img.fs, ino, 16, &why, &real), 0);
	assert_int_equal(ext4fs_txn_stop(img.fs), 0);
	assert_int_equal(real.blocks_moved, plan.blocks_moved);
	assert_int_equal(real.bytes_copied, plan.bytes_copied);
	assert_int_equal(real.extents_after, plan.extents_after);
	assert_int_equal(real.transactions, plan.transactions);
	assert_true(plan.transactions >= 1);   /* journalled in the rehearsal too */
	expect_bytes(img.fs, ino, 3, &s);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(saved);
}

/* -- A tree block made half way ---------------------------------------------- */

/* The byte at offset off of the sparse file below: its runs start at lblk RUN_GAP * i. */
#define SPARSE_RUNS 4u
#define SPARSE_RUNLEN 10u
#define RUN_GAP 20000u

static void expect_sparse_bytes(struct ext4fs_fs *fs, uint32_t ino)
{
	unsigned char buf[SPARSE_RUNLEN * 1024];
	struct ext4fs_inode in;
	size_t got;

	assert_int_equal(ext4fs_inode_read(fs, ino, &in), 0);
	for (unsigned i = 0; i < SPARSE_RUNS; i++) {
		uint64_t at = (uint64_t)i * RUN_GAP * 1024;
		assert_int_equal(ext4fs_file_read(fs, ino, &in, at, buf, sizeof(buf), &got), 0);
		assert_int_equal(got, sizeof(buf));
		for (size_t k = 0; k < sizeof(buf); k++)
			if (buf[k] != pattern(9, at + k))
				fail_msg("run %u byte %zu: %u, expected %u", i, k, buf[k], pattern(9, at + k));
	}
}

/*
 * A journalled move in two pieces (the runs lie far apart, so the journal
 * estimate splits them) whose first piece leaves five extents, one too
 * many for the inode: the map call grows the tree, and its new leaf is
 * allocated near the piece's target, where the only free blocks of the
 * group are the second piece's targets.  The move fences them, so the
 * leaf goes elsewhere and the second piece finds its blocks free (without
 * the fence the second piece's claim failed and the move was given up half
 * way, as defrag4fs's layout pass found on aged images).
 */
static void tree_block_never_takes_a_later_target(void **state)
{
	struct ext4fs_reloc_result res = { 0 };
	struct ext4fs_reloc_file f;
	struct ext4fs_inode in;
	struct ext4fs_prun t[2], fill[64];
	size_t nfill = 0;
	const struct ext4fs_bitmap *bm;
	struct rw_image img;
	unsigned char buf[SPARSE_RUNLEN * 1024];
	uint64_t old[SPARSE_RUNS], g1, g1_end, base = 0, at;
	uint32_t ino;
	(void)state;

	rw_image_open(&img, 16384, 1024, crash_tweak);
	ino = map_test_new_file(&img, "sparse", &in);
	map_test_pick_runs(img.fs, 2000, SPARSE_RUNS, SPARSE_RUNLEN, old);
	for (unsigned i = 0; i < SPARSE_RUNS; i++) {
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = pattern(9, (uint64_t)i * RUN_GAP * 1024 + k);
		assert_int_equal(ext4fs_data_write(img.fs, old[i], SPARSE_RUNLEN, buf), 0);
		assert_int_equal(ext4fs_bmap_set(img.fs, ino, &in, (uint64_t)i * RUN_GAP, old[i], SPARSE_RUNLEN, 0), 0);
	}
	ext4fs_inode_set_size(&in, ((uint64_t)(SPARSE_RUNS - 1) * RUN_GAP + SPARSE_RUNLEN) * 1024);
	assert_int_equal(ext4fs_inode_write(img.fs, ino, &in), 0);

	/* Targets in group 1: A (5 blocks), a used block, B (35); the rest of the group filled. */
	g1 = ext4fs_group_first_block(img.fs, 1);
	g1_end = ext4fs_group_last_block(img.fs, 1) + 1;
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);
	for (at = g1 + 100; !base && at + 41 < g1_end; at++) {
		uint64_t used;
		if (ext4fs_bitmap_find(bm, at, at + 40, 1, &used) != 0)
			base = at;
	}
	assert_true(base != 0);
	t[0] = (struct ext4fs_prun){ base, 5 };
	t[1] = (struct ext4fs_prun){ base + 6, 35 };
	for (at = g1; at < g1_end;) {
		uint64_t start, used;
		if (ext4fs_bitmap_find(bm, at, g1_end - 1, 0, &start))
			break;
		if (ext4fs_bitmap_find(bm, start, g1_end - 1, 1, &used))
			used = g1_end;
		/* The run less the targets; the block between them is filled. */
		const struct ext4fs_prun parts[3] = {
			{ start, (used < base ? used : base) },
			{ start > base + 5 ? start : base + 5, used < base + 6 ? used : base + 6 },
			{ start > base + 41 ? start : base + 41, used },
		};
		for (unsigned k = 0; k < 3; k++) {
			if (parts[k].pblk >= parts[k].len)
				continue;   /* .len holds the end here */
			assert_true(nfill < sizeof(fill) / sizeof(fill[0]));
			fill[nfill] = (struct ext4fs_prun){ parts[k].pblk, parts[k].len - parts[k].pblk };
			assert_int_equal(ext4fs_blocks_mark_used(img.fs, fill[nfill].pblk, fill[nfill].len), 0);
			nfill++;
		}
		at = used;
	}
	assert_true(ext4fs_bitmap_test(bm, base + 5) == 1 && ext4fs_bitmap_test(bm, base + 4) == 0);

	assert_int_equal(ext4fs_txn_start(img.fs), 0);
	assert_int_equal(ext4fs_reloc_load(img.fs, ino, &f), 0);
	assert_int_equal(f.nruns, SPARSE_RUNS);
	if (ext4fs_reloc_move(img.fs, &f, t, 2, &res))
		fail_msg("the move: %s", ext4fs_errmsg(img.fs));
	assert_int_equal(res.transactions, 2);
	assert_int_equal(res.blocks_moved, SPARSE_RUNS * SPARSE_RUNLEN);
	assert_int_equal(f.runs[0].pblk, base);
	assert_int_equal(ext4fs_alloc_check(img.fs), 0);
	ext4fs_reloc_release(&f);
	assert_int_equal(ext4fs_txn_stop(img.fs), 0);
	expect_sparse_bytes(img.fs, ino);

	/* The filler goes; what is left is the file, for e2fsck. */
	for (size_t k = 0; k < nfill; k++)
		assert_int_equal(ext4fs_blocks_mark_free(img.fs, fill[k].pblk, fill[k].len), 0);
	rw_image_assert_clean(&img);
	rw_image_reopen(&img);
	expect_sparse_bytes(img.fs, ino);
	rw_image_close(&img);
}

/*
 * Open buf through a fault channel (spec text, "" to count), journalled,
 * and defragment ino; returns the number of writes and the result code.
 */
static uint64_t defrag_through(unsigned char *buf, size_t size, uint32_t ino, const char *spec_text, int *rc,
			       uint64_t *transactions)
{
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_io_fault_spec spec;
	struct ext4fs_io_fault_counts counts;
	struct ext4fs_reloc_result res = { 0 };
	enum ext4fs_reloc_skip why;
	struct ext4fs_io *mem, *io;
	struct ext4fs_fs *fs;
	char text[96], msg[256];

	snprintf(text, sizeof(text), "%s", spec_text);
	assert_int_equal(ext4fs_io_fault_parse(text, &spec), 0);
	assert_int_equal(ext4fs_io_open_memory(buf, size, 1, &mem), 0);
	assert_int_equal(ext4fs_io_fault_wrap(mem, &spec, &io), 0);
	*rc = ext4fs_open_io(io, &o, &fs, msg, sizeof(msg));
	if (*rc)
		fail_msg("opening: %s", msg);
	*rc = ext4fs_txn_start(fs);
	if (*rc == 0)
		*rc = ext4fs_reloc_defrag_file(fs, ino, 16, &why, &res);
	*transactions = res.transactions;
	if (*rc == 0)
		*rc = ext4fs_txn_stop(fs);
	if (*rc && !spec.at_write)
		print_message("defrag: %s (%s)\n", ext4fs_strerror(*rc), ext4fs_errmsg(fs));
	ext4fs_io_fault_counts(io, &counts);
	ext4fs_close(fs);
	return counts.writes;
}

static void recover_in_place(unsigned char *buf, size_t size)
{
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RECOVERY };
	struct ext4fs_journal *j;
	struct ext4fs_io *io;
	struct ext4fs_fs *fs;
	char msg[256];

	assert_int_equal(ext4fs_io_open_memory(buf, size, 1, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &o, &fs, msg, sizeof(msg)), 0);
	if (ext4fs_sb(fs)->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER) {
		assert_int_equal(ext4fs_journal_open(fs, &j), 0);
		assert_int_equal(ext4fs_journal_recover(j, NULL), 0);
		ext4fs_journal_close(j);
	}
	ext4fs_close(fs);
}

/*
 * Every write k of the move, the disk stopping there (or tearing it, on a
 * block boundary) with a pseudo-random part of its cache lost: after replay e2fsck finds nothing and the file
 * reads as before, its extents the old count or fewer.  e2fsck runs on
 * every fourth k (and the last) to keep the test quick; the bytes are
 * checked at every k.
 */
static void move_survives_a_crash_at_every_write(void **state)
{
	struct rw_image img;
	unsigned char *base;
	uint64_t writes, txns = 0;
	uint32_t ino;
	int rc;
	(void)state;

	rw_image_open(&img, 8192, 1024, crash_tweak);
	ino = scattered_file(&img, "victim", 4, 2500, &crash_shape);
	ext4fs_close(img.fs);
	img.fs = NULL;
	base = malloc(img.size);
	assert_non_null(base);
	memcpy(base, img.buf, img.size);
	writes = defrag_through(img.buf, img.size, ino, "", &rc, &txns);
	assert_int_equal(rc, 0);
	assert_true(writes > 4);
	assert_true(txns >= 2);    /* the small journal makes the move switch in pieces */

	for (uint64_t k = 1; k <= writes; k++) {
		char spec[96];
		struct ext4fs_frag_file ff;

		memcpy(img.buf, base, img.size);
		/* A torn write keeps whole blocks: the superblock is written in place, as the kernel writes it. */
		snprintf(spec, sizeof(spec), "write=%llu,mode=%s,align=1024,lose=%llu", (unsigned long long)k,
			 k % 2 ? "stop" : "tear", (unsigned long long)(k * 7919));
		defrag_through(img.buf, img.size, ino, spec, &rc, &txns);
		recover_in_place(img.buf, img.size);
		rw_image_reopen_raw(&img);
		expect_bytes(img.fs, ino, 4, &crash_shape);
		file_figures(img.fs, ino, &ff);
		assert_true(ff.extents <= 80);
		if (k % 4 == 0 || k == writes)
			rw_image_assert_clean(&img);
		ext4fs_close(img.fs);
		img.fs = NULL;
	}
	free(base);
	rw_image_reopen_raw(&img);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(extent_file_is_made_contiguous),
		cmocka_unit_test(rehearsal_predicts_and_writes_nothing),
		cmocka_unit_test(block_mapped_file_stays_block_mapped),
		cmocka_unit_test(large_file_lands_on_a_stripe_boundary),
		cmocka_unit_test(space_is_chosen_tightly),
		cmocka_unit_test(system_and_immutable_files_stay),
		cmocka_unit_test(tree_block_never_takes_a_later_target),
		cmocka_unit_test(move_survives_a_crash_at_every_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
