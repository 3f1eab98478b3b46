/*
 * test_fswrite.c - the writable handle's foundation: block and inode
 * accounting, flushing bitmaps, descriptors and superblocks, inode writes,
 * and the inode allocator; judged by reopening with strict checksums and
 * by the real e2fsck.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/scan.h"
#include "../lib/rw_image.h"

/* ext2 style: rw_tweak_ext3ish_1k without the journal and the other compat features. */
static void ext2ish_1k(struct ext4fs_mkfs_params *p)
{
	rw_tweak_ext3ish_1k(p);
	p->feature_compat = 0;
}

/* ext2 style at 4 KiB: no journal, block maps, no checksums; first_data_block is 0. */
static void ext2ish_4k(struct ext4fs_mkfs_params *p)
{
	rw_tweak_ext3ish_4k(p);
	p->feature_compat = 0;
}

/*
 * A writable handle opened on group 1's superblock writes the primary
 * superblock and descriptors back at flush, so a damaged primary opens
 * again (strictly) and e2fsck finds the image clean.
 */
static void backup_open_rewrites_primary(void **state)
{
	struct rw_image img;
	struct ext4fs_io *io;
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW, .superblock = 8193, .block_size = 1024 };

	(void)state;
	rw_image_open(&img, 20000, 1024, rw_tweak_1k_gdt_csum);
	assert_int_equal(ext4fs_close_flush(img.fs), 0);
	memset(img.buf + 1024 + 0x38, 0, 2);    /* s_magic */
	memset(img.buf + 2 * 1024, 0xAB, 64);   /* the first primary descriptors */
	assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 0, &io), 0);
	assert_int_equal(ext4fs_open_io(io, NULL, &img.fs, NULL, 0), EXT4FS_E_BAD_MAGIC);
	assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 1, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &opts, &img.fs, NULL, 0), 0);
	/* The copies' uninit shortcuts are not trusted. */
	for (uint32_t g = 0; g < ext4fs_geom(img.fs)->group_count; g++) {
		assert_int_equal(ext4fs_group(img.fs, g)->flags & (EXT4FS_BG_BLOCK_UNINIT | EXT4FS_BG_INODE_UNINIT), 0);
		assert_int_equal(ext4fs_group(img.fs, g)->itable_unused, 0);
	}
	assert_int_equal(ext4fs_close_flush(img.fs), 0);
	assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 1, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &(struct ext4fs_open_opts){ .flags = EXT4FS_OPEN_RW }, &img.fs, NULL, 0), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* uninit_bg may be dropped beside metadata_csum (it selects no checksum there), and only there. */
static void uninit_bg_beside_metadata_csum(void **state)
{
	struct rw_image img;
	struct ext4fs_super sb;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	sb = *ext4fs_sb(img.fs);
	sb.s_feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	sb.s_feature_ro_compat &= ~(uint32_t)EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);

	rw_image_open(&img, 16384, 4096, rw_tweak_no_csum);
	sb = *ext4fs_sb(img.fs);
	sb.s_feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), EXT4FS_E_INVALID_ARG);
	rw_image_close(&img);
}

/* inline_data may be set or dropped (it changes no layout); another incompatible feature may not. */
static void inline_data_feature_set(void **state)
{
	struct rw_image img;
	struct ext4fs_super sb;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	sb = *ext4fs_sb(img.fs);
	sb.s_feature_incompat |= EXT4FS_FEATURE_INCOMPAT_INLINE_DATA;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	assert_true(ext4fs_has_incompat(img.fs, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA));
	sb.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_INLINE_DATA;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	assert_false(ext4fs_has_incompat(img.fs, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA));
	/* largedir only allows more: accepted; meta_bg moves the descriptors: refused. */
	sb.s_feature_incompat |= EXT4FS_FEATURE_INCOMPAT_LARGEDIR;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	assert_true(ext4fs_has_incompat(img.fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR));
	sb.s_feature_incompat |= EXT4FS_FEATURE_INCOMPAT_INLINE_DATA | EXT4FS_FEATURE_INCOMPAT_META_BG;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), EXT4FS_E_INVALID_ARG);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void mark_blocks_and_reopen(void **state)
{
	struct rw_image img;
	const struct ext4fs_bitmap *bm;
	uint64_t free0, blk;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	free0 = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);
	assert_int_equal(ext4fs_bitmap_find(bm, 9000, 16383, 0, &blk), 0);
	/* A run across a group boundary (groups are 32768 blocks at 4 KiB, so use a 1 KiB image below). */
	assert_int_equal(ext4fs_blocks_mark_used(img.fs, blk, 10), 0);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free0 - 10);
	/* All or nothing: a range overlapping used blocks changes nothing. */
	assert_int_equal(ext4fs_blocks_mark_used(img.fs, blk + 5, 10), EXT4FS_E_BLOCK_STATE);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free0 - 10);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, blk, 4), 0);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, blk, 1), EXT4FS_E_BLOCK_STATE);
	assert_int_equal(ext4fs_blocks_mark_used(img.fs, 16384, 1), EXT4FS_E_BAD_BLOCK_NUM);
	/* Marked-used blocks belong to no inode, which e2fsck reports; give them back before judging. */
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free0 - 6);
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);
	assert_int_equal(ext4fs_bitmap_test(bm, blk + 4), 1);
	assert_int_equal(ext4fs_bitmap_test(bm, blk + 3), 0);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, blk + 4, 6), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void cross_group_runs(void **state)
{
	struct rw_image img;
	uint64_t free0;

	(void)state;
	/* 1 KiB blocks, 8192 per group: find a boundary with free blocks on both sides. */
	const struct ext4fs_bitmap *bm;
	uint64_t b = 0, found;
	uint32_t g;
	rw_image_open(&img, 65536, 1024, NULL);
	free0 = ext4fs_geom(img.fs)->free_blocks_count;
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);
	for (g = 1; g < ext4fs_geom(img.fs)->group_count; g++) {
		b = ext4fs_group_first_block(img.fs, g) - 3;
		if (ext4fs_bitmap_find(bm, b, b + 4, 1, &found) != 0)
			break;
	}
	assert_true(g < ext4fs_geom(img.fs)->group_count);
	uint32_t g1_free = ext4fs_group(img.fs, g - 1)->free_blocks_count;
	uint32_t g2_free = ext4fs_group(img.fs, g)->free_blocks_count;
	assert_int_equal(ext4fs_blocks_mark_used(img.fs, b, 5), 0);
	assert_int_equal(ext4fs_group(img.fs, g - 1)->free_blocks_count, g1_free - 3);
	assert_int_equal(ext4fs_group(img.fs, g)->free_blocks_count, g2_free - 2);
	assert_int_equal(ext4fs_group(img.fs, g)->flags & EXT4FS_BG_BLOCK_UNINIT, 0);
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_group(img.fs, g)->free_blocks_count, g2_free - 2);
	assert_int_equal(ext4fs_blocks_mark_free(img.fs, b, 5), 0);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* Allocate an inode, write it as an empty regular file with one data block, link nothing: e2fsck
 * would report an unattached inode, so the test frees it again and checks the counts came back. */
static void inode_alloc_write_free(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in, back;
	uint32_t ino, free_inodes;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	free_inodes = ext4fs_sb(img.fs)->s_free_inodes_count;
	assert_int_equal(ext4fs_inode_alloc(img.fs, EXT4FS_ROOT_INO, EXT4FS_S_IFREG | 0644, &ino), 0);
	assert_true(ino >= ext4fs_geom(img.fs)->first_ino);
	assert_int_equal(ext4fs_sb(img.fs)->s_free_inodes_count, free_inodes - 1);
	ext4fs_inode_init_new(img.fs, ino, EXT4FS_S_IFREG | 0644, 1000, 1000, &in);
	ext4fs_inode_set_size(&in, 0);
	assert_int_equal(ext4fs_inode_write(img.fs, ino, &in), 0);
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &back), 0);
	assert_int_equal(back.i_mode, EXT4FS_S_IFREG | 0644);
	assert_int_equal(ext4fs_inode_uid(&back), 1000);
	uint32_t ns;
	assert_int_equal(ext4fs_inode_time(&back, 'm', &ns), 1700000000);
	assert_int_equal(ns, 123456789);
	assert_int_equal(ext4fs_inode_alloc(img.fs, EXT4FS_ROOT_INO, EXT4FS_S_IFREG | 0644, &ino), 0);
	assert_int_equal(ext4fs_inode_mark_used(img.fs, ino, 0), EXT4FS_E_INODE_STATE);
	/* Give both back: free inodes need not be zeroed for e2fsck, only unmarked. */
	back.i_links_count = 0;
	back.i_dtime = 1700000000;
	assert_int_equal(ext4fs_inode_write(img.fs, ino - 1, &back), 0);
	assert_int_equal(ext4fs_inode_mark_free(img.fs, ino - 1, 0), 0);
	assert_int_equal(ext4fs_inode_mark_free(img.fs, ino, 0), 0);
	assert_int_equal(ext4fs_sb(img.fs)->s_free_inodes_count, free_inodes);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void inode_alloc_spreads_when_full(void **state)
{
	struct rw_image img;
	uint32_t ino, prev_group = 0, groups_seen = 0;

	(void)state;
	rw_image_open(&img, 32768, 1024, ext2ish_1k);
	const struct ext4fs_geom *geo = ext4fs_geom(img.fs);
	uint32_t n = ext4fs_sb(img.fs)->s_free_inodes_count;
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(ext4fs_inode_alloc(img.fs, EXT4FS_ROOT_INO, EXT4FS_S_IFREG | 0600, &ino), 0);
		uint32_t g = (ino - 1) / geo->inodes_per_group;
		if (i == 0 || g != prev_group)
			groups_seen++;
		prev_group = g;
	}
	assert_true(groups_seen >= geo->group_count);
	assert_int_equal(ext4fs_inode_alloc(img.fs, EXT4FS_ROOT_INO, EXT4FS_S_IFREG | 0600, &ino),
			 EXT4FS_E_NO_FREE_INODES);
	rw_image_close(&img);
}

static void read_only_refuses(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;

	(void)state;
	rw_image_open(&img, 4096, 4096, NULL);
	assert_int_equal(ext4fs_inode_read(img.fs, EXT4FS_ROOT_INO, &in), 0);
	rw_image_close(&img);
	/* Reopen read-only over a fresh image and try to write. */
	rw_image_open(&img, 4096, 4096, NULL);
	struct ext4fs_fs *ro;
	struct ext4fs_io *io;
	char msg[128];
	assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 0, &io), 0);
	assert_int_equal(ext4fs_open_io(io, NULL, &ro, msg, sizeof(msg)), 0);
	assert_int_equal(ext4fs_inode_write(ro, EXT4FS_ROOT_INO, &in), EXT4FS_E_READ_ONLY);
	assert_int_equal(ext4fs_blocks_mark_used(ro, 100, 1), EXT4FS_E_READ_ONLY);
	assert_int_equal(ext4fs_blocks_mark_used_uncounted(ro, 100, 1), EXT4FS_E_READ_ONLY);
	assert_int_equal(ext4fs_inode_mark_used_uncounted(ro, 100), EXT4FS_E_READ_ONLY);
	assert_int_equal(ext4fs_flush(ro), EXT4FS_E_READ_ONLY);
	ext4fs_close(ro);
	rw_image_close(&img);
}

static uint64_t sb_free_blocks(const struct ext4fs_fs *fs)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);

	return (uint64_t)sb->s_free_blocks_count_hi << 32 | sb->s_free_blocks_count_lo;
}

/* Descriptor fields an uncounted mark must leave alone (flags and itable_unused may move). */
static void assert_counts_equal(const struct ext4fs_group_desc *a, const struct ext4fs_group_desc *b)
{
	assert_int_equal(a->free_blocks_count, b->free_blocks_count);
	assert_int_equal(a->free_inodes_count, b->free_inodes_count);
	assert_int_equal(a->used_dirs_count, b->used_dirs_count);
}

/*
 * The first group from g on whose descriptor has flag (BLOCK_UNINIT or
 * INODE_UNINIT) set; fails the test when there is none.
 */
static uint32_t uninit_group(struct ext4fs_fs *fs, uint32_t g, uint16_t flag)
{
	for (; g < ext4fs_geom(fs)->group_count; g++)
		if (ext4fs_group(fs, g)->flags & flag)
			return g;
	fail_msg("no group has flag 0x%x", flag);
	return 0;
}

/*
 * ext4fs_blocks_mark_used_uncounted() over a group boundary into a
 * BLOCK_UNINIT group: the bits are set and the flag cleared, every free
 * count stays; a range with a block in use, or outside the file system,
 * changes nothing; and the allocator never hands the blocks out, from a
 * group whose buddy it had built, from one it had not, or from a
 * preallocation that was holding them; ext4fs_blocks_mark_free_uncounted()
 * gives them back as they were.
 */
static void uncounted_blocks_keep_counts(void **state)
{
	struct rw_image img;
	const struct ext4fs_bitmap *bm;
	struct ext4fs_group_desc before[2];
	struct ext4fs_alloc_stats st0, st1;
	uint64_t b, pb, got_at, found, free0;
	uint32_t g, got;

	(void)state;
	rw_image_open(&img, 65536, 1024, NULL);
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);
	/* Three blocks at the end of group g - 1, two at the start of g, all free. */
	for (g = 1;; g++) {
		g = uninit_group(img.fs, g, EXT4FS_BG_BLOCK_UNINIT);
		b = ext4fs_group_first_block(img.fs, g) - 3;
		if (ext4fs_bitmap_find(bm, b - 16, b + 4, 1, &found) != 0)
			break;
	}
	/* The allocator builds group g - 1's buddy; group g's stays unbuilt. */
	struct ext4fs_alloc_request near = { .len = 1, .goal = b - 16,
					     .flags = EXT4FS_ALLOC_EXACT_GOAL | EXT4FS_ALLOC_NO_PREALLOC };
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &near, &got_at, &got), 0);
	assert_int_equal(ext4fs_free_blocks(img.fs, got_at, got), 0);
	before[0] = *ext4fs_group(img.fs, g - 1);
	before[1] = *ext4fs_group(img.fs, g);
	free0 = sb_free_blocks(img.fs);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free0);

	assert_int_equal(ext4fs_blocks_mark_used_uncounted(img.fs, b, 5), 0);
	for (uint64_t i = 0; i < 5; i++)
		assert_int_equal(ext4fs_bitmap_test(bm, b + i), 1);
	assert_int_equal(ext4fs_bitmap_test(bm, b - 1), 0);
	assert_int_equal(ext4fs_bitmap_test(bm, b + 5), 0);
	assert_counts_equal(ext4fs_group(img.fs, g - 1), &before[0]);
	assert_counts_equal(ext4fs_group(img.fs, g), &before[1]);
	assert_int_equal(ext4fs_group(img.fs, g)->flags & EXT4FS_BG_BLOCK_UNINIT, 0);
	assert_int_equal(sb_free_blocks(img.fs), free0);
	assert_int_equal(ext4fs_geom(img.fs)->free_blocks_count, free0);
	assert_int_equal(ext4fs_bitmap_changed(img.fs, EXT4FS_BLOCK_BITMAP), 1);

	/* All or nothing, as ext4fs_blocks_mark_used(). */
	assert_int_equal(ext4fs_blocks_mark_used_uncounted(img.fs, b - 2, 4), EXT4FS_E_BLOCK_STATE);
	assert_int_equal(ext4fs_bitmap_test(bm, b - 2), 0);
	assert_int_equal(ext4fs_bitmap_test(bm, b - 1), 0);
	assert_int_equal(ext4fs_blocks_mark_used(img.fs, b + 4, 1), EXT4FS_E_BLOCK_STATE);
	assert_int_equal(ext4fs_blocks_mark_used_uncounted(img.fs, 65536, 1), EXT4FS_E_BAD_BLOCK_NUM);
	assert_int_equal(ext4fs_blocks_mark_used_uncounted(img.fs, 0, 1), EXT4FS_E_BAD_BLOCK_NUM);
	assert_counts_equal(ext4fs_group(img.fs, g - 1), &before[0]);
	assert_int_equal(sb_free_blocks(img.fs), free0);

	/* Neither at an exact goal (built group, then unbuilt) nor near one. */
	struct ext4fs_alloc_request at = { .len = 1, .goal = b,
					   .flags = EXT4FS_ALLOC_EXACT_GOAL | EXT4FS_ALLOC_NO_PREALLOC };
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &at, &got_at, &got), EXT4FS_E_NO_SPACE);
	at.goal = b + 4;
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &at, &got_at, &got), EXT4FS_E_NO_SPACE);
	struct ext4fs_alloc_request nearby = { .len = 8, .goal = b, .flags = EXT4FS_ALLOC_NO_PREALLOC };
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &nearby, &got_at, &got), 0);
	assert_true(got_at + got <= b || got_at >= b + 5);

	/* A small file's locality-group preallocation holds the blocks after its first one. */
	struct ext4fs_alloc_request small = { .ino = 40, .len = 1, .file_blocks = 1 };
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &small, &pb, &got), 0);
	ext4fs_alloc_get_stats(img.fs, &st0);
	assert_int_equal(ext4fs_blocks_mark_used_uncounted(img.fs, pb + 1, 2), 0);
	small.ino = 41;
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &small, &got_at, &got), 0);
	ext4fs_alloc_get_stats(img.fs, &st1);
	assert_int_equal(st1.prealloc_hits, st0.prealloc_hits + 1);
	assert_true(got_at + got <= pb + 1 || got_at >= pb + 3);
	/* The descriptors still count the blocks free, which the allocator's own check reports. */
	assert_int_equal(ext4fs_alloc_check(img.fs), EXT4FS_E_ALLOC_STATE);

	/* Given back without counting: bits clear, counts as they were, the allocator whole again. */
	before[0] = *ext4fs_group(img.fs, g - 1);
	before[1] = *ext4fs_group(img.fs, g);
	free0 = sb_free_blocks(img.fs);
	assert_int_equal(ext4fs_blocks_mark_free_uncounted(img.fs, pb + 1, 2), 0);
	assert_int_equal(ext4fs_blocks_mark_free_uncounted(img.fs, b, 5), 0);
	for (uint64_t i = 0; i < 5; i++)
		assert_int_equal(ext4fs_bitmap_test(bm, b + i), 0);
	assert_counts_equal(ext4fs_group(img.fs, g - 1), &before[0]);
	assert_counts_equal(ext4fs_group(img.fs, g), &before[1]);
	assert_int_equal(sb_free_blocks(img.fs), free0);
	assert_int_equal(ext4fs_blocks_mark_free_uncounted(img.fs, b, 1), EXT4FS_E_BLOCK_STATE);
	at.goal = b;
	assert_int_equal(ext4fs_alloc_blocks(img.fs, &at, &got_at, &got), 0);
	assert_int_equal(got_at, b);
	assert_int_equal(ext4fs_free_blocks(img.fs, got_at, got), 0);
	assert_int_equal(ext4fs_alloc_check(img.fs), 0);
	rw_image_close(&img);
}

/*
 * ext4fs_inode_mark_used_uncounted() on an INODE_UNINIT group: the bit is
 * set, the flag cleared and bg_itable_unused moved past the inode, as
 * ext4fs_inode_mark_used() does, but the free inode and directory counts
 * stay; an inode already in use, or outside the file system, is refused.
 */
static void uncounted_inode_keeps_counts(void **state)
{
	struct rw_image img;
	const struct ext4fs_bitmap *bm;
	struct ext4fs_group_desc before;
	uint32_t g, ino, ipg, free0;

	(void)state;
	rw_image_open(&img, 65536, 1024, NULL);
	ipg = ext4fs_geom(img.fs)->inodes_per_group;
	g = uninit_group(img.fs, 1, EXT4FS_BG_INODE_UNINIT);
	ino = g * ipg + 5;
	before = *ext4fs_group(img.fs, g);
	free0 = ext4fs_sb(img.fs)->s_free_inodes_count;
	assert_int_equal(ext4fs_fs_inode_bitmap(img.fs, &bm), 0);

	assert_int_equal(ext4fs_inode_mark_used_uncounted(img.fs, ino), 0);
	assert_int_equal(ext4fs_bitmap_test(bm, ino), 1);
	assert_int_equal(ext4fs_bitmap_test(bm, ino - 1), 0);
	assert_counts_equal(ext4fs_group(img.fs, g), &before);
	assert_int_equal(ext4fs_group(img.fs, g)->flags & EXT4FS_BG_INODE_UNINIT, 0);
	assert_int_equal(ext4fs_group(img.fs, g)->itable_unused, ipg - 5);
	assert_int_equal(ext4fs_sb(img.fs)->s_free_inodes_count, free0);
	assert_int_equal(ext4fs_bitmap_changed(img.fs, EXT4FS_INODE_BITMAP), 1);

	assert_int_equal(ext4fs_inode_mark_used_uncounted(img.fs, ino), EXT4FS_E_INODE_STATE);
	assert_int_equal(ext4fs_inode_mark_used_uncounted(img.fs, EXT4FS_ROOT_INO), EXT4FS_E_INODE_STATE);
	assert_int_equal(ext4fs_inode_mark_used(img.fs, ino, 0), EXT4FS_E_INODE_STATE);
	assert_int_equal(ext4fs_inode_mark_used_uncounted(img.fs, 0), EXT4FS_E_BAD_INODE_NUM);
	assert_int_equal(ext4fs_inode_mark_used_uncounted(img.fs, ext4fs_geom(img.fs)->inodes_count + 1),
			 EXT4FS_E_BAD_INODE_NUM);
	assert_counts_equal(ext4fs_group(img.fs, g), &before);
	assert_int_equal(ext4fs_sb(img.fs)->s_free_inodes_count, free0);
	rw_image_close(&img);
}

/*
 * What a checker does with the uncounted marks (e4fsck's pass 1D clone and
 * new root): blocks taken for a file's data and an inode for a new file,
 * both linked in.  After a flush the image keeps the bits and the old
 * counts (a reopen shows both), and e2fsck -fn finds exactly the four
 * count differences in pass 5; once the caller recounts, it finds nothing.
 */
static void uncounted_marks_flushed_and_judged(void **state)
{
	struct rw_image img;
	const struct ext4fs_bitmap *bm;
	struct ext4fs_new_attrs attrs = { .mode = EXT4FS_S_IFREG | 0644 };
	struct ext4fs_inode in, root;
	struct ext4fs_group_desc gd;
	struct ext4fs_super sb;
	uint32_t file, ino, bg, ig, bfree, ifree, sifree;
	uint64_t b, sbfree;
	char out[65536], want[1024];

	(void)state;
	rw_image_open(&img, 65536, 1024, NULL);
	assert_int_equal(ext4fs_mknod(img.fs, EXT4FS_ROOT_INO, "data", &attrs, &file), 0);
	bg = uninit_group(img.fs, 1, EXT4FS_BG_BLOCK_UNINIT);
	ig = uninit_group(img.fs, 1, EXT4FS_BG_INODE_UNINIT);
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);
	assert_int_equal(ext4fs_bitmap_find(bm, ext4fs_group_first_block(img.fs, bg),
					    ext4fs_group_last_block(img.fs, bg), 0, &b), 0);
	bfree = ext4fs_group(img.fs, bg)->free_blocks_count;
	ifree = ext4fs_group(img.fs, ig)->free_inodes_count;
	sbfree = sb_free_blocks(img.fs);
	sifree = ext4fs_sb(img.fs)->s_free_inodes_count;

	/* Three blocks of data for the file, as pass 1D copies a shared run. */
	unsigned char block[1024];
	memset(block, 0x5A, sizeof(block));
	assert_int_equal(ext4fs_blocks_mark_used_uncounted(img.fs, b, 3), 0);
	for (uint64_t i = 0; i < 3; i++)
		assert_int_equal(ext4fs_block_write(img.fs, b + i, block), 0);
	assert_int_equal(ext4fs_inode_read(img.fs, file, &in), 0);
	assert_int_equal(ext4fs_bmap_set(img.fs, file, &in, 0, b, 3, 0), 0);
	ext4fs_inode_set_size(&in, 3 * 1024);
	assert_int_equal(ext4fs_inode_write(img.fs, file, &in), 0);
	/* A new regular file in an INODE_UNINIT group, as pass 3 marks a new root. */
	ino = ig * ext4fs_geom(img.fs)->inodes_per_group + 1;
	assert_int_equal(ext4fs_inode_mark_used_uncounted(img.fs, ino), 0);
	ext4fs_inode_init_new(img.fs, ino, EXT4FS_S_IFREG | 0644, 0, 0, &in);
	assert_int_equal(ext4fs_inode_write(img.fs, ino, &in), 0);
	assert_int_equal(ext4fs_inode_read(img.fs, EXT4FS_ROOT_INO, &root), 0);
	assert_int_equal(ext4fs_dir_add(img.fs, EXT4FS_ROOT_INO, &root, "new", 3, ino, EXT4FS_FT_REG_FILE), 0);

	rw_image_reopen(&img);
	assert_int_equal(ext4fs_fs_block_bitmap(img.fs, &bm), 0);
	assert_int_equal(ext4fs_bitmap_count_set(bm, b, b + 2), 3);
	assert_int_equal(ext4fs_fs_inode_bitmap(img.fs, &bm), 0);
	assert_int_equal(ext4fs_bitmap_test(bm, ino), 1);
	assert_int_equal(ext4fs_group(img.fs, bg)->free_blocks_count, bfree);
	assert_int_equal(ext4fs_group(img.fs, bg)->flags & EXT4FS_BG_BLOCK_UNINIT, 0);
	assert_int_equal(ext4fs_group(img.fs, ig)->free_inodes_count, ifree);
	assert_int_equal(ext4fs_group(img.fs, ig)->flags & EXT4FS_BG_INODE_UNINIT, 0);
	assert_int_equal(sb_free_blocks(img.fs), sbfree);
	assert_int_equal(ext4fs_sb(img.fs)->s_free_inodes_count, sifree);

	int rc = rw_image_fsck_output(&img, out, sizeof(out));
	if (rc == -1) {
		print_message("SKIP: e2fsck not installed\n");
		rw_image_close(&img);
		return;
	}
	assert_int_equal(rc, 4);
	snprintf(want, sizeof(want),
		 "Pass 4: Checking reference counts\n"
		 "Pass 5: Checking group summary information\n"
		 "Free blocks count wrong for group #%u (%u, counted=%u).\nFix? no\n\n"
		 "Free blocks count wrong (%llu, counted=%llu).\nFix? no\n\n"
		 "Free inodes count wrong for group #%u (%u, counted=%u).\nFix? no\n\n"
		 "Free inodes count wrong (%u, counted=%u).\nFix? no\n\n\n",
		 bg, bfree, bfree - 3, (unsigned long long)sbfree, (unsigned long long)(sbfree - 3),
		 ig, ifree, ifree - 1, sifree, sifree - 1);
	if (!strstr(out, want))
		fail_msg("e2fsck -fn should report only the counts:\n%s\nwanted:\n%s", out, want);
	assert_null(strstr(out, "differences"));
	assert_non_null(strstr(out, "Pass 1: Checking inodes, blocks, and sizes\n"
				    "Pass 2: Checking directory structure\n"
				    "Pass 3: Checking directory connectivity\n"
				    "Pass 4: Checking reference counts\n"));

	/* The recount a checker's last pass makes. */
	gd = *ext4fs_group(img.fs, bg);
	gd.free_blocks_count -= 3;
	assert_int_equal(ext4fs_group_desc_set(img.fs, bg, &gd), 0);
	gd = *ext4fs_group(img.fs, ig);
	gd.free_inodes_count -= 1;
	assert_int_equal(ext4fs_group_desc_set(img.fs, ig, &gd), 0);
	sb = *ext4fs_sb(img.fs);
	sbfree -= 3;
	sb.s_free_blocks_count_lo = (uint32_t)sbfree;
	sb.s_free_blocks_count_hi = (uint32_t)(sbfree >> 32);
	sb.s_free_inodes_count--;
	assert_int_equal(ext4fs_super_set(img.fs, &sb), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* Open img's bytes again with flags (EXT4FS_OPEN_RW: a writable channel). */
static struct ext4fs_fs *open_bytes(struct rw_image *img, unsigned flags)
{
	struct ext4fs_open_opts opts = { .flags = flags };
	struct ext4fs_io *io;
	struct ext4fs_fs *fs;

	assert_int_equal(ext4fs_io_open_memory(img->buf, img->size, (flags & EXT4FS_OPEN_RW) != 0, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &opts, &fs, NULL, 0), 0);
	return fs;
}

/*
 * A loaded bitmap reports, per group, a bad checksum and padding that is not
 * all ones (bytes past the group's bits, bits past the file system's end);
 * ext4fs_bitmap_rewrite() writes every group again, after which a strict
 * open finds nothing and e2fsck finds the image clean.
 */
static void bitmap_findings_and_rewrite(void **state)
{
	struct rw_image img;
	struct ext4fs_bitmap *bb, *ib;
	struct ext4fs_fs *fs;

	(void)state;
	/* 1 KiB blocks from block 1: the last group holds 8191 blocks, so its bitmap's top bit is padding. */
	rw_image_open(&img, 16384, 1024, NULL);
	const struct ext4fs_geom *geo = ext4fs_geom(img.fs);
	assert_int_equal(geo->group_count, 2);
	assert_true(geo->has_metadata_csum);
	assert_int_equal(ext4fs_group(img.fs, 1)->flags & EXT4FS_BG_BLOCK_UNINIT, 0);
	uint64_t bb1 = ext4fs_group(img.fs, 1)->block_bitmap, ib0 = ext4fs_group(img.fs, 0)->inode_bitmap;
	uint32_t ipg = geo->inodes_per_group;
	assert_true(ipg / 8 < 1024);
	assert_int_equal(ext4fs_close_flush(img.fs), 0);
	img.fs = NULL;
	img.buf[bb1 * 1024 + 1023] &= 0x7F;      /* the bit of block 16384, one past the end */
	img.buf[ib0 * 1024 + ipg / 8] = 0;       /* the first byte past group 0's inodes */

	fs = open_bytes(&img, 0);
	assert_int_equal(ext4fs_block_bitmap_load(fs, &bb), EXT4FS_E_BITMAP_CSUM);
	ext4fs_close(fs);
	fs = open_bytes(&img, EXT4FS_OPEN_IGNORE_CSUM);
	assert_int_equal(ext4fs_block_bitmap_load(fs, &bb), 0);
	assert_int_equal(ext4fs_inode_bitmap_load(fs, &ib), 0);
	assert_int_equal(ext4fs_bitmap_group_flags(bb, 0), 0);
	assert_int_equal(ext4fs_bitmap_group_flags(bb, 1), EXT4FS_BITMAP_CSUM_BAD | EXT4FS_BITMAP_END_BAD);
	/* The inode bitmap's checksum covers inodes_per_group bits only. */
	assert_int_equal(ext4fs_bitmap_group_flags(ib, 0), EXT4FS_BITMAP_TAIL_BAD);
	assert_int_equal(ext4fs_bitmap_group_flags(ib, 2), 0);
	assert_int_equal(ext4fs_bitmap_changed(fs, EXT4FS_BLOCK_BITMAP), 0);
	assert_int_equal(ext4fs_bitmap_rewrite(fs, EXT4FS_BLOCK_BITMAP), EXT4FS_E_READ_ONLY);
	ext4fs_bitmap_free(bb);
	ext4fs_bitmap_free(ib);
	ext4fs_close(fs);

	img.fs = open_bytes(&img, EXT4FS_OPEN_RW | EXT4FS_OPEN_IGNORE_CSUM);
	assert_int_equal(ext4fs_bitmap_changed(img.fs, EXT4FS_INODE_BITMAP), 0);
	assert_int_equal(ext4fs_bitmap_rewrite(img.fs, (enum ext4fs_bitmap_kind)7), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_bitmap_rewrite(img.fs, EXT4FS_BLOCK_BITMAP), 0);
	assert_int_equal(ext4fs_bitmap_changed(img.fs, EXT4FS_BLOCK_BITMAP), 1);
	assert_int_equal(ext4fs_bitmap_changed(img.fs, EXT4FS_INODE_BITMAP), 0);
	assert_int_equal(ext4fs_bitmap_rewrite(img.fs, EXT4FS_INODE_BITMAP), 0);
	assert_int_equal(ext4fs_close_flush(img.fs), 0);

	fs = open_bytes(&img, 0);
	assert_int_equal(ext4fs_block_bitmap_load(fs, &bb), 0);
	assert_int_equal(ext4fs_inode_bitmap_load(fs, &ib), 0);
	for (uint32_t g = 0; g < 2; g++) {
		assert_int_equal(ext4fs_bitmap_group_flags(bb, g), 0);
		assert_int_equal(ext4fs_bitmap_group_flags(ib, g), 0);
	}
	ext4fs_bitmap_free(bb);
	ext4fs_bitmap_free(ib);
	ext4fs_close(fs);
	img.fs = open_bytes(&img, EXT4FS_OPEN_RW);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * With 4 KiB blocks first_data_block is 0, so "at least first_data_block"
 * let a zeroed descriptor field through: the open succeeded with a bitmap
 * or the inode table on the superblock's block, which a flush or an inode
 * write then overwrote.  Such a descriptor must fail the open (issue 20).
 */
static void descriptor_pointing_at_block_zero_is_refused(void **state)
{
	static const char *const what[] = { "block bitmap", "inode bitmap", "inode table" };
	static const int code[] = { EXT4FS_E_GD_BAD_BLOCK_MAP, EXT4FS_E_GD_BAD_INODE_MAP, EXT4FS_E_GD_BAD_INODE_TABLE };
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_IGNORE_CSUM };
	struct ext4fs_io *io;
	struct ext4fs_fs *fs = NULL;
	char msg[256];

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct rw_image img;
		struct ext4fs_group_desc gd;

		rw_image_open(&img, 16384, 4096, ext2ish_4k);
		assert_int_equal(ext4fs_geom(img.fs)->first_data_block, 0);
		gd = *ext4fs_group(img.fs, 0);
		if (k == 0)
			gd.block_bitmap = 0;
		else if (k == 1)
			gd.inode_bitmap = 0;
		else
			gd.inode_table = 0;
		assert_int_equal(ext4fs_group_desc_set(img.fs, 0, &gd), 0);
		assert_int_equal(ext4fs_close_flush(img.fs), 0);
		img.fs = NULL;
		assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 0, &io), 0);
		assert_int_equal(ext4fs_open_io(io, &opts, &fs, msg, sizeof(msg)), code[k]);
		assert_null(fs);
		assert_non_null(strstr(msg, what[k]));
		rw_image_close(&img);
	}
}

/*
 * A checker that relocates (EXT4FS_OPEN_MISPLACED_OK) opens zeroed
 * locations, read-only and writable: they are missing (the bitmap reads
 * as all free, the group's inodes are neither read nor scanned), and once
 * the block bitmap gets a place of its own again, the live bitmap is what
 * that block holds.
 */
static void misplaced_locations_open_as_missing(void **state)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_IGNORE_CSUM | EXT4FS_OPEN_MISPLACED_OK };
	struct rw_image img;
	struct ext4fs_group_desc gd, orig;
	struct ext4fs_io *io;
	struct ext4fs_fs *fs = NULL;
	const struct ext4fs_bitmap *bb;
	struct ext4fs_inode inode;
	struct ext4fs_scan *scan;
	uint32_t ino;
	char msg[256];

	(void)state;
	rw_image_open(&img, 16384, 4096, ext2ish_4k);
	orig = gd = *ext4fs_group(img.fs, 0);
	gd.block_bitmap = 0;
	gd.inode_table = 0;
	assert_int_equal(ext4fs_group_desc_set(img.fs, 0, &gd), 0);
	assert_int_equal(ext4fs_close_flush(img.fs), 0);
	img.fs = NULL;
	for (int rw = 0; rw < 2; rw++) {
		opts.flags = EXT4FS_OPEN_IGNORE_CSUM | EXT4FS_OPEN_MISPLACED_OK | (rw ? EXT4FS_OPEN_RW : 0);
		assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, rw ? EXT4FS_IO_RDWR : 0, &io), 0);
		assert_int_equal(ext4fs_open_io(io, &opts, &fs, msg, sizeof(msg)), 0);
		assert_int_equal(ext4fs_group_tables_present(fs, 0), EXT4FS_GROUP_INODE_BITMAP);
		assert_int_equal(ext4fs_inode_read(fs, EXT4FS_ROOT_INO, &inode), EXT4FS_E_GD_BAD_INODE_TABLE);
		assert_int_equal(ext4fs_fs_block_bitmap(fs, &bb), 0);
		assert_int_equal(ext4fs_bitmap_test(bb, orig.inode_table), 0);
		assert_int_equal(ext4fs_scan_open(fs, 0, 0, 0, &scan), 0);
		assert_int_equal(ext4fs_scan_next(scan, &ino, &inode, NULL, NULL), 0);
		ext4fs_scan_close(scan);
		if (rw) {
			/* Back where it was: the live bitmap is read from there. */
			gd = *ext4fs_group(fs, 0);
			gd.block_bitmap = orig.block_bitmap;
			assert_int_equal(ext4fs_group_desc_set(fs, 0, &gd), 0);
			assert_int_equal(ext4fs_fs_block_bitmap(fs, &bb), 0);
			assert_int_equal(ext4fs_bitmap_test(bb, orig.inode_table), 1);
		}
		ext4fs_close(fs);
	}
	rw_image_close(&img);
}

/*
 * A block bitmap placed on the other group's inode table, or on the
 * descriptor block, lies in the file system: a read-only open takes it, and
 * ext4fs_group_descs_check() names it; a writable open refuses it, since a
 * flush would write the bitmap over that metadata.  Checked in the order
 * e2fsprogs checks: an inode table over the superblock is found too.
 */
static void ext2ish_4k_two_groups(struct ext4fs_mkfs_params *p)
{
	ext2ish_4k(p);
	p->blocks_per_group = 8192;
}

static void descriptor_on_other_metadata_is_refused_for_writing(void **state)
{
	struct ext4fs_open_opts ro = { .flags = EXT4FS_OPEN_IGNORE_CSUM };
	struct ext4fs_open_opts rw = { .flags = EXT4FS_OPEN_IGNORE_CSUM | EXT4FS_OPEN_RW };
	struct ext4fs_io *io;
	struct ext4fs_fs *fs = NULL;
	char msg[256];

	(void)state;
	for (int k = 0; k < 3; k++) {
		struct rw_image img;
		struct ext4fs_group_desc gd;
		uint32_t bad = 99;
		int want = k == 2 ? EXT4FS_E_GD_BAD_INODE_TABLE : EXT4FS_E_GD_BAD_BLOCK_MAP;

		rw_image_open(&img, 16384, 4096, ext2ish_4k_two_groups);
		assert_true(ext4fs_geom(img.fs)->group_count >= 2);
		assert_int_equal(ext4fs_group_descs_check(img.fs, &bad), 0);
		gd = *ext4fs_group(img.fs, 1);
		if (k == 0)
			gd.block_bitmap = ext4fs_group(img.fs, 0)->inode_table + 1;
		else if (k == 1)
			gd.block_bitmap = 1;   /* the descriptor block */
		else
			gd.inode_table = ext4fs_group(img.fs, 0)->block_bitmap;
		assert_int_equal(ext4fs_group_desc_set(img.fs, 1, &gd), 0);
		assert_int_equal(ext4fs_close_flush(img.fs), 0);
		img.fs = NULL;
		assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 0, &io), 0);
		assert_int_equal(ext4fs_open_io(io, &ro, &fs, msg, sizeof(msg)), 0);
		assert_int_equal(ext4fs_group_descs_check(fs, &bad), want);
		assert_int_equal(bad, 1);
		ext4fs_close(fs);
		fs = NULL;
		assert_int_equal(ext4fs_io_open_memory(img.buf, img.size, 1, &io), 0);
		assert_int_equal(ext4fs_open_io(io, &rw, &fs, msg, sizeof(msg)), want);
		assert_null(fs);
		assert_non_null(strstr(msg, "group 1"));
		rw_image_close(&img);
	}
}

/*
 * bg_itable_unused and INODE_ZEROED come from disk: a descriptor that
 * claims all but the first inode record unused (with checksums ignored, as
 * e4fsck opens, any value passes) made marking the next inode in use zero
 * every record before it, the root directory's among them.  Records of
 * inodes the bitmap has in use are kept; records past them still go.
 */
static void itable_unused_never_zeroes_inodes_in_use(void **state)
{
	struct rw_image img;
	struct ext4fs_group_desc gd;
	struct ext4fs_inode root, lf, in;
	uint32_t free_ino;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	struct ext4fs_fs *fs = img.fs;
	assert_true(ext4fs_geom(fs)->has_metadata_csum);
	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_ROOT_INO, &root), 0);
	assert_int_equal(ext4fs_inode_read(fs, 11, &lf), 0);
	assert_true(EXT4FS_ISDIR(root.i_mode) && EXT4FS_ISDIR(lf.i_mode));
	/* A record past every inode in use, not zero: an unused inode with junk in it. */
	free_ino = 20;
	ext4fs_inode_init_new(fs, free_ino, EXT4FS_S_IFREG | 0644, 0, 0, &in);
	assert_int_equal(ext4fs_inode_write(fs, free_ino, &in), 0);
	gd = *ext4fs_group(fs, 0);
	gd.itable_unused = ext4fs_geom(fs)->inodes_per_group - 1;
	gd.flags &= (uint16_t)~EXT4FS_BG_INODE_ZEROED;
	assert_int_equal(ext4fs_group_desc_set(fs, 0, &gd), 0);
	assert_int_equal(ext4fs_inode_mark_used(fs, free_ino + 1, 0), 0);
	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_ROOT_INO, &in), 0);
	assert_memory_equal(&in, &root, sizeof(in));
	assert_int_equal(ext4fs_inode_read(fs, 11, &in), 0);
	assert_memory_equal(&in, &lf, sizeof(in));
	assert_int_equal(ext4fs_inode_read(fs, free_ino, &in), 0);
	assert_int_equal(in.i_mode, 0);
	assert_int_equal(ext4fs_group(fs, 0)->itable_unused, ext4fs_geom(fs)->inodes_per_group - (free_ino + 1));
	assert_int_equal(ext4fs_inode_mark_free(fs, free_ino + 1, 0), 0);
	rw_image_close(&img);
}

/* Open img's buffer with flags: 1, or the open's error. */
static int bigalloc_open(struct rw_image *img, unsigned flags)
{
	struct ext4fs_open_opts opts = { .flags = flags };
	struct ext4fs_io *io = NULL;
	char msg[256];

	assert_int_equal(ext4fs_io_open_memory(img->buf, img->size, 1, &io), 0);
	int err = ext4fs_open_io(io, &opts, &img->fs, msg, sizeof(msg));
	if (err) {
		img->fs = NULL;
		return err;
	}
	ext4fs_set_time(img->fs, 1700000000, 0);
	return 1;
}

/*
 * A bigalloc image made by mke2fs (1 KiB blocks, 16 blocks a cluster),
 * read into memory and opened with flags; 0 when mke2fs is missing.
 */
static int bigalloc_image(struct rw_image *img, unsigned flags)
{
	char path[] = "/tmp/bigalloc_XXXXXX", cmd[256];
	FILE *f;
	int fd = mkstemp(path);

	memset(img, 0, sizeof(*img));
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext4 -b 1024 -O bigalloc -C 16384 -E root_owner=0:0 %s 8M "
		 ">/dev/null 2>&1", path);
	if (system(cmd) != 0) {
		unlink(path);
		print_message("SKIP: mke2fs cannot make a bigalloc image\n");
		return 0;
	}
	img->size = 8 << 20;
	img->buf = malloc(img->size);
	assert_non_null(img->buf);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(img->buf, 1, img->size, f), img->size);
	fclose(f);
	unlink(path);
	return bigalloc_open(img, flags);
}

/*
 * Bigalloc: a writable open needs EXT4FS_OPEN_CLUSTERS_BY_CALLER; then
 * marking moves whole clusters (the group counts clusters, the superblock
 * their blocks), the bitmap written back has a bit per cluster (e2fsck
 * finds the image clean after a mark and its undo), ext4fs_free_blocks()
 * frees a shared cluster once, and the allocator hands out whole clusters.
 */
static void bigalloc_marks_clusters(void **state)
{
	struct rw_image img;
	const struct ext4fs_bitmap *bm;
	struct ext4fs_alloc_request req = { .ino = 12, .lblk = 21, .len = 3 };
	uint64_t start, blk;
	uint32_t got;

	(void)state;
	int rc = bigalloc_image(&img, EXT4FS_OPEN_RW);
	if (rc == 0)
		return;
	assert_int_equal(rc, EXT4FS_E_RO_UNSUPP_FEATURE);
	free(img.buf);
	assert_int_equal(bigalloc_image(&img, EXT4FS_OPEN_RW | EXT4FS_OPEN_CLUSTERS_BY_CALLER), 1);
	struct ext4fs_fs *fs = img.fs;
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	assert_int_equal(geo->cluster_ratio, 16);
	uint32_t gfree = ext4fs_group(fs, 0)->free_blocks_count;
	uint64_t sfree = geo->free_blocks_count;
	assert_int_equal(ext4fs_fs_block_bitmap(fs, &bm), 0);
	assert_int_equal(ext4fs_bitmap_find(bm, 16, ext4fs_group_last_block(fs, 0), 0, &blk), 0);
	assert_int_equal(blk % 16, 0);
	/* Block 3 of a free cluster: the whole cluster is taken, once. */
	assert_int_equal(ext4fs_blocks_mark_used(fs, blk + 3, 1), 0);
	for (uint64_t b = blk; b < blk + 16; b++)
		assert_int_equal(ext4fs_bitmap_test(bm, b), 1);
	assert_int_equal(ext4fs_bitmap_test(bm, blk + 16), 0);
	assert_int_equal(ext4fs_group(fs, 0)->free_blocks_count, gfree - 1);
	assert_int_equal(geo->free_blocks_count, sfree - 16);
	assert_int_equal(ext4fs_blocks_mark_used(fs, blk + 9, 2), EXT4FS_E_BLOCK_STATE);
	/* Written back with a bit per cluster: e2fsck sees a cluster in use that no file owns. */
	assert_int_equal(ext4fs_close_flush(fs), 0);
	assert_int_equal(bigalloc_open(&img, EXT4FS_OPEN_RW | EXT4FS_OPEN_CLUSTERS_BY_CALLER), 1);
	fs = img.fs;
	assert_int_equal(ext4fs_fs_block_bitmap(fs, &bm), 0);
	assert_int_equal(ext4fs_bitmap_test(bm, blk + 15), 1);
	assert_int_equal(ext4fs_bitmap_test(bm, blk + 16), 0);
	assert_int_not_equal(rw_image_fsck(&img), 0);
	/* Two extents sharing the cluster: the first free frees it, the second finds nothing to do. */
	assert_int_equal(ext4fs_free_blocks(fs, blk, 4), 0);
	assert_int_equal(ext4fs_free_blocks(fs, blk + 4, 12), 0);
	assert_int_equal(ext4fs_group(fs, 0)->free_blocks_count, gfree);
	assert_int_equal(ext4fs_geom(fs)->free_blocks_count, sfree);
	rw_image_assert_clean(&img);
	/* The allocator takes a whole cluster, the data at its logical block's offset in it. */
	assert_int_equal(ext4fs_alloc_blocks(fs, &req, &start, &got), 0);
	assert_int_equal(start % 16, 5);
	assert_int_equal(got, 3);
	assert_int_equal(ext4fs_group(fs, 0)->free_blocks_count, gfree - 1);
	assert_int_equal(ext4fs_free_blocks(fs, start, got), 0);
	req.flags = EXT4FS_ALLOC_METADATA;
	req.len = 20;
	assert_int_equal(ext4fs_alloc_blocks(fs, &req, &start, &got), 0);
	assert_int_equal(start % 16, 0);
	assert_int_equal(got, 20);
	assert_int_equal(ext4fs_group(fs, 0)->free_blocks_count, gfree - 2);
	assert_int_equal(ext4fs_free_blocks(fs, start, got), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mark_blocks_and_reopen),
		cmocka_unit_test(backup_open_rewrites_primary),
		cmocka_unit_test(uninit_bg_beside_metadata_csum),
		cmocka_unit_test(inline_data_feature_set),
		cmocka_unit_test(cross_group_runs),
		cmocka_unit_test(inode_alloc_write_free),
		cmocka_unit_test(inode_alloc_spreads_when_full),
		cmocka_unit_test(read_only_refuses),
		cmocka_unit_test(bitmap_findings_and_rewrite),
		cmocka_unit_test(uncounted_blocks_keep_counts),
		cmocka_unit_test(uncounted_inode_keeps_counts),
		cmocka_unit_test(uncounted_marks_flushed_and_judged),
		cmocka_unit_test(descriptor_pointing_at_block_zero_is_refused),
		cmocka_unit_test(misplaced_locations_open_as_missing),
		cmocka_unit_test(descriptor_on_other_metadata_is_refused_for_writing),
		cmocka_unit_test(itable_unused_never_zeroes_inodes_in_use),
		cmocka_unit_test(bigalloc_marks_clusters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
