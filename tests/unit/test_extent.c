/*
 * test_extent.c - extent trees and indirect block maps over an image built
 * in memory with mem_image.c (no external tools).
 *
 * The image: 1 KiB blocks, 64 blocks, one group.  Block 1 holds the
 * superblock, 2 the group descriptor, 3 and 4 the bitmaps, 5-6 the inode
 * table (16 inodes of 128 bytes); blocks 7-63 are free for the trees and
 * data each test lays out.  The contents of data blocks never matter here,
 * only the maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/super.h"
#include "../lib/mem_image.h"

#define BS           MEM_IMAGE_BS
#define NBLOCKS      64U
#define NINODES      16U
#define INODE_SIZE   128U

/* A valid, empty file system with the extents feature. */
static void make_image(void)
{
	const struct mem_image_layout l = {
		.blocks = NBLOCKS,
		.inodes = NINODES,
		.inode_size = INODE_SIZE,
		.incompat = EXT4FS_FEATURE_INCOMPAT_EXTENTS | EXT4FS_FEATURE_INCOMPAT_FILETYPE,
	};

	mem_image_init(&l);
}

/* A regular file of size bytes; extents selects EXTENTS_FL. */
static unsigned char *make_file(uint32_t ino, uint32_t size, int extents)
{
	unsigned char *r = mem_image_inode(ino, 0100644, size, extents ? EXT4FS_EXTENTS_FL : 0);

	return r + 0x28;                           /* i_block */
}

static void ext_header(unsigned char *p, uint16_t entries, uint16_t max, uint16_t depth)
{
	put16(p + 0, EXT4FS_EXTENT_MAGIC);
	put16(p + 2, entries);
	put16(p + 4, max);
	put16(p + 6, depth);
}

/* Leaf entry i of the node at p; unwritten extents store len + 32768. */
static void ext_leaf(unsigned char *p, unsigned i, uint32_t lblk, uint16_t len, uint32_t pblk, int unwritten)
{
	unsigned char *e = p + 12 + 12 * i;

	put32(e + 0, lblk);
	put16(e + 4, (uint16_t)(unwritten ? len + EXT4FS_EXTENT_INIT_MAX_LEN : len));
	put16(e + 6, 0);
	put32(e + 8, pblk);
}

static void ext_index(unsigned char *p, unsigned i, uint32_t lblk, uint32_t child)
{
	unsigned char *e = p + 12 + 12 * i;

	put32(e + 0, lblk);
	put32(e + 4, child);
	put16(e + 8, 0);
}

#define LEAF_MAX ((BS - 12) / 12)

struct mapping {
	uint64_t pblk, run;
	int unwritten;
};

static int bmap(struct ext4fs_fs *fs, uint32_t ino, uint64_t lblk, struct mapping *m)
{
	struct ext4fs_inode inode;

	read_inode(fs, ino, &inode);
	memset(m, 0xA5, sizeof(*m));
	return ext4fs_bmap(fs, ino, &inode, lblk, &m->pblk, &m->run, &m->unwritten);
}

static void assert_maps(struct ext4fs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			uint64_t run, int unwritten)
{
	struct mapping m;

	assert_int_equal(bmap(fs, ino, lblk, &m), 0);
	assert_int_equal(m.pblk, pblk);
	assert_int_equal(m.run, run);
	assert_int_equal(m.unwritten, unwritten);
}

/* What a walk saw, in order. */
struct seen {
	unsigned n;
	struct ext4fs_block_visit v[32];
};

static int record_block(const struct ext4fs_block_visit *v, void *arg)
{
	struct seen *s = arg;

	if (s->n < 32)
		s->v[s->n] = *v;
	s->n++;
	return 0;
}

static int iterate(struct ext4fs_fs *fs, uint32_t ino, unsigned flags, struct seen *s)
{
	struct ext4fs_inode inode;

	read_inode(fs, ino, &inode);
	memset(s, 0, sizeof(*s));
	return ext4fs_block_iterate(fs, ino, &inode, flags, record_block, s);
}

static int count_extent(const struct ext4fs_extent_visit *v, void *arg)
{
	(void)v;
	++*(unsigned *)arg;
	return 0;
}

static int walk(struct ext4fs_fs *fs, uint32_t ino, unsigned *visits)
{
	struct ext4fs_inode inode;

	read_inode(fs, ino, &inode);
	*visits = 0;
	return ext4fs_extent_walk(fs, ino, &inode, count_extent, visits);
}

/* -- depth 0 --------------------------------------------------------------- */

/* Inode 12: [0-3] -> 20-23, hole 4-9, [10-11] -> 30-31 unwritten. */
static void layout_depth0(void)
{
	unsigned char *root = make_file(12, 12 * BS, 1);

	ext_header(root, 2, 4, 0);
	ext_leaf(root, 0, 0, 4, 20, 0);
	ext_leaf(root, 1, 10, 2, 30, 1);
}

static void extent_lookup__maps_blocks_of_a_depth_0_tree_with_their_contiguous_run(void **state)
{
	make_image();
	layout_depth0();
	struct ext4fs_fs *fs = open_image(0);

	assert_maps(fs, 12, 0, 20, 4, 0);
	assert_maps(fs, 12, 3, 23, 1, 0);
	ext4fs_close(fs);
}

static void extent_lookup__reports_a_hole_as_block_0_up_to_the_next_extent(void **state)
{
	make_image();
	layout_depth0();
	struct ext4fs_fs *fs = open_image(0);

	assert_maps(fs, 12, 4, 0, 6, 0);
	assert_maps(fs, 12, 9, 0, 1, 0);
	/* Past the last extent the hole runs to the end of the logical range. */
	struct mapping m;
	assert_int_equal(bmap(fs, 12, 12, &m), 0);
	assert_int_equal(m.pblk, 0);
	assert_true(m.run >= 1);
	ext4fs_close(fs);
}

static void extent_lookup__flags_blocks_of_an_unwritten_extent(void **state)
{
	make_image();
	layout_depth0();
	struct ext4fs_fs *fs = open_image(0);

	assert_maps(fs, 12, 10, 30, 2, 1);
	assert_maps(fs, 12, 11, 31, 1, 1);
	ext4fs_close(fs);
}

static void block_iterate__visits_the_extents_of_a_depth_0_tree_in_logical_order(void **state)
{
	make_image();
	layout_depth0();
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, 12, 0, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].kind, EXT4FS_BLOCK_DATA);
	assert_int_equal(s.v[0].pblk, 20);
	assert_int_equal(s.v[0].lblk, 0);
	assert_int_equal(s.v[0].count, 4);
	assert_false(s.v[0].unwritten);
	assert_int_equal(s.v[1].pblk, 30);
	assert_int_equal(s.v[1].lblk, 10);
	assert_int_equal(s.v[1].count, 2);
	assert_true(s.v[1].unwritten);
	ext4fs_close(fs);
}

/* -- depth 1 --------------------------------------------------------------- */

/* Inode 13: root index [0 -> node 40, 100 -> node 41]; 40: [0-4] -> 50-54; 41: [100-101] -> 56-57. */
static void layout_depth1(void)
{
	unsigned char *root = make_file(13, 102 * BS, 1);

	ext_header(root, 2, 4, 1);
	ext_index(root, 0, 0, 40);
	ext_index(root, 1, 100, 41);
	ext_header(block(40), 1, LEAF_MAX, 0);
	ext_leaf(block(40), 0, 0, 5, 50, 0);
	ext_header(block(41), 1, LEAF_MAX, 0);
	ext_leaf(block(41), 0, 100, 2, 56, 0);
}

static void extent_lookup__descends_through_an_index_node_of_a_depth_1_tree(void **state)
{
	make_image();
	layout_depth1();
	struct ext4fs_fs *fs = open_image(0);

	assert_maps(fs, 13, 0, 50, 5, 0);
	assert_maps(fs, 13, 2, 52, 3, 0);
	assert_maps(fs, 13, 100, 56, 2, 0);
	assert_maps(fs, 13, 101, 57, 1, 0);
	ext4fs_close(fs);
}

static void extent_lookup__ends_a_hole_inside_a_leaf_where_the_next_index_starts(void **state)
{
	make_image();
	layout_depth1();
	struct ext4fs_fs *fs = open_image(0);

	assert_maps(fs, 13, 5, 0, 95, 0);
	assert_maps(fs, 13, 99, 0, 1, 0);
	ext4fs_close(fs);
}

static void block_iterate__visits_each_index_node_before_the_extents_it_maps(void **state)
{
	make_image();
	layout_depth1();
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, 13, 0, &s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.v[0].kind, EXT4FS_BLOCK_EXTENT_NODE);
	assert_int_equal(s.v[0].pblk, 40);
	assert_int_equal(s.v[1].kind, EXT4FS_BLOCK_DATA);
	assert_int_equal(s.v[1].pblk, 50);
	assert_int_equal(s.v[2].kind, EXT4FS_BLOCK_EXTENT_NODE);
	assert_int_equal(s.v[2].pblk, 41);
	assert_int_equal(s.v[2].lblk, 100);
	assert_int_equal(s.v[3].pblk, 56);

	assert_int_equal(iterate(fs, 13, EXT4FS_ITER_DATA_ONLY, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].pblk, 50);
	assert_int_equal(s.v[1].pblk, 56);
	ext4fs_close(fs);
}

/* -- corrupt trees ------------------------------------------------------------ */

static void extent_walk__stops_at_an_index_node_that_points_to_itself_by_its_depth(void **state)
{
	make_image();
	/* Depth 2: root -> node 42, and node 42 (an index) -> node 42 again. */
	unsigned char *root = make_file(14, 10 * BS, 1);
	ext_header(root, 1, 4, 2);
	ext_index(root, 0, 0, 42);
	ext_header(block(42), 1, LEAF_MAX, 1);
	ext_index(block(42), 0, 0, 42);
	struct ext4fs_fs *fs = open_image(0);
	unsigned visits;
	struct mapping m;

	/*
	 * The second visit finds depth 1 where depth 0 must be, so the loop
	 * ends there.  Depth decreases by one per level, so every cycle (a
	 * pointer to the node itself or an ancestor) is a header error;
	 * nodes shared between subtrees are caught by their ranges (next test).
	 */
	assert_int_equal(walk(fs, 14, &visits), EXT4FS_E_EXTENT_HEADER);
	assert_int_equal(visits, 2);
	assert_non_null(strstr(ext4fs_errmsg(fs), "42"));
	assert_int_equal(bmap(fs, 14, 3, &m), EXT4FS_E_EXTENT_HEADER);
	assert_non_null(strstr(ext4fs_errmsg(fs), "inode 14"));
	ext4fs_close(fs);
}

static void extent_walk__rejects_a_node_reached_twice_as_a_corrupt_tree(void **state)
{
	make_image();
	/* Both index entries lead to node 43, whose extent starts at 0: the second visit is out of range. */
	unsigned char *root = make_file(14, 200 * BS, 1);
	ext_header(root, 2, 4, 1);
	ext_index(root, 0, 0, 43);
	ext_index(root, 1, 100, 43);
	ext_header(block(43), 1, LEAF_MAX, 0);
	ext_leaf(block(43), 0, 0, 3, 50, 0);
	struct ext4fs_fs *fs = open_image(0);
	unsigned visits;
	struct mapping m;

	assert_int_equal(walk(fs, 14, &visits), EXT4FS_E_EXTENT_CORRUPT);
	assert_int_equal(bmap(fs, 14, 150, &m), EXT4FS_E_EXTENT_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "inode 14"));
	ext4fs_close(fs);
}

static void extent_walk__rejects_an_extent_beyond_the_end_of_the_file_system(void **state)
{
	make_image();
	unsigned char *root = make_file(15, 4 * BS, 1);
	ext_header(root, 1, 4, 0);
	ext_leaf(root, 0, 0, 2, NBLOCKS - 1, 0);   /* blocks 63 and 64: the second is outside */
	struct ext4fs_fs *fs = open_image(0);
	unsigned visits;
	struct mapping m;

	assert_int_equal(walk(fs, 15, &visits), EXT4FS_E_EXTENT_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "inode 15"));
	assert_int_equal(bmap(fs, 15, 0, &m), EXT4FS_E_EXTENT_CORRUPT);
	ext4fs_close(fs);
}

static void extent_walk__rejects_an_index_pointing_beyond_the_file_system(void **state)
{
	make_image();
	unsigned char *root = make_file(15, 4 * BS, 1);
	ext_header(root, 1, 4, 1);
	ext_index(root, 0, 0, 5000);
	struct ext4fs_fs *fs = open_image(0);
	unsigned visits;
	struct mapping m;

	assert_int_equal(walk(fs, 15, &visits), EXT4FS_E_EXTENT_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "5000"));
	assert_int_equal(bmap(fs, 15, 0, &m), EXT4FS_E_EXTENT_CORRUPT);
	ext4fs_close(fs);
}

static void extent_walk__rejects_bad_headers_magic_entries_above_max_and_depth_6(void **state)
{
	struct ext4fs_fs *fs;
	unsigned char *root;
	unsigned visits;

	make_image();
	root = make_file(15, BS, 1);
	ext_header(root, 1, 4, 0);
	ext_leaf(root, 0, 0, 1, 20, 0);
	put16(root, 0xF30B);
	fs = open_image(0);
	assert_int_equal(walk(fs, 15, &visits), EXT4FS_E_EXTENT_HEADER);
	assert_non_null(strstr(ext4fs_errmsg(fs), "magic"));
	ext4fs_close(fs);

	ext_header(root, 5, 4, 0);
	fs = open_image(0);
	assert_int_equal(walk(fs, 15, &visits), EXT4FS_E_EXTENT_HEADER);
	ext4fs_close(fs);

	ext_header(root, 1, 4, 6);
	fs = open_image(0);
	assert_int_equal(walk(fs, 15, &visits), EXT4FS_E_EXTENT_HEADER);
	struct mapping m;
	assert_int_equal(bmap(fs, 15, 0, &m), EXT4FS_E_EXTENT_HEADER);
	ext4fs_close(fs);
}

/* -- indirect maps ------------------------------------------------------------ */

/* Inode 16: direct 0 -> 20, 1 hole, 2 -> 21; IND at 45: [12] -> 46, [13] hole, [14] -> 47. */
static void layout_indirect(void)
{
	unsigned char *ib = make_file(16, 15 * BS, 0);

	put32(ib + 0, 20);
	put32(ib + 8, 21);
	put32(ib + 4 * 12, 45);
	put32(block(45) + 0, 46);
	put32(block(45) + 8, 47);
}

static void indirect_map__maps_direct_and_single_indirect_blocks_and_holes(void **state)
{
	make_image();
	layout_indirect();
	struct ext4fs_fs *fs = open_image(0);
	struct mapping m;

	assert_int_equal(bmap(fs, 16, 0, &m), 0);
	assert_int_equal(m.pblk, 20);
	assert_int_equal(bmap(fs, 16, 1, &m), 0);
	assert_int_equal(m.pblk, 0);
	assert_int_equal(bmap(fs, 16, 2, &m), 0);
	assert_int_equal(m.pblk, 21);
	assert_int_equal(bmap(fs, 16, 12, &m), 0);
	assert_int_equal(m.pblk, 46);
	assert_int_equal(bmap(fs, 16, 13, &m), 0);
	assert_int_equal(m.pblk, 0);
	assert_int_equal(bmap(fs, 16, 14, &m), 0);
	assert_int_equal(m.pblk, 47);
	assert_false(m.unwritten);
	/* The double-indirect range has no block: all of it is a hole. */
	assert_int_equal(bmap(fs, 16, 12 + BS / 4, &m), 0);
	assert_int_equal(m.pblk, 0);
	ext4fs_close(fs);
}

static void indirect_map__iterates_the_indirect_block_before_the_blocks_it_maps(void **state)
{
	make_image();
	layout_indirect();
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, 16, 0, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.v[0].pblk, 20);
	assert_int_equal(s.v[0].lblk, 0);
	assert_int_equal(s.v[1].pblk, 21);
	assert_int_equal(s.v[1].lblk, 2);
	assert_int_equal(s.v[2].kind, EXT4FS_BLOCK_IND);
	assert_int_equal(s.v[2].pblk, 45);
	assert_int_equal(s.v[3].pblk, 46);
	assert_int_equal(s.v[3].lblk, 12);
	assert_int_equal(s.v[4].pblk, 47);
	assert_int_equal(s.v[4].lblk, 14);
	ext4fs_close(fs);
}

static void indirect_map__rejects_a_block_number_beyond_the_file_system(void **state)
{
	make_image();
	layout_indirect();
	put32(block(45) + 4, 1000);                /* logical 13 -> block 1000 */
	struct ext4fs_fs *fs = open_image(0);
	struct mapping m;
	struct seen s;

	assert_int_equal(iterate(fs, 16, 0, &s), EXT4FS_E_IND_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "inode 16"));
	assert_int_equal(bmap(fs, 16, 13, &m), EXT4FS_E_IND_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "1000"));
	/* Blocks mapped before the bad one are still found. */
	assert_int_equal(bmap(fs, 16, 12, &m), 0);
	assert_int_equal(m.pblk, 46);
	ext4fs_close(fs);
}

static void indirect_map__ends_a_walk_over_an_indirect_block_that_maps_itself(void **state)
{
	make_image();
	/* The double-indirect block lists itself in every slot: each slot is read as a single-indirect block. */
	unsigned char *ib = make_file(16, 300 * BS, 0);
	put32(ib + 4 * 13, 48);
	for (unsigned i = 0; i < BS / 4; i++)
		put32(block(48) + 4 * i, 48);
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	/* Bounded: at most as many blocks as the file system has are visited. */
	int err = iterate(fs, 16, 0, &s);
	assert_int_equal(err, EXT4FS_E_IND_CORRUPT);
	assert_true(s.n <= NBLOCKS + 1);
	ext4fs_close(fs);
}

static void indirect_map__rejects_an_indirect_block_used_twice_instead_of_rescanning_it(void **state)
{
	make_image();
	/* Every slot of the double-indirect block 48 names the same single-indirect block 49. */
	unsigned char *ib = make_file(16, 300 * BS, 0);
	put32(ib + 4 * 13, 48);
	for (unsigned i = 0; i < BS / 4; i++)
		put32(block(48) + 4 * i, 49);
	put32(block(49) + 4 * 7, 50);
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, 16, 0, &s), EXT4FS_E_IND_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "49"));
	/* DIND 48, IND 49, its one data block, then the second use of 49 stops the walk. */
	assert_int_equal(s.n, 3);
	/* A lookup follows one path and is not affected. */
	struct mapping m;
	assert_int_equal(bmap(fs, 16, 12 + BS / 4 + 7, &m), 0);
	assert_int_equal(m.pblk, 50);
	ext4fs_close(fs);
}

/* -- Single nodes (ext4fs_extent_node_*) ---------------------------------- */

static unsigned get16(const unsigned char *p)
{
	return (unsigned)(p[0] | (p[1] << 8));
}

static void extent_node__decodes_and_encodes_leaf_and_index_entries_with_high_bits(void **state)
{
	(void)state;
	unsigned char node[60] = { 0 };
	struct ext4fs_extent_header h = { EXT4FS_EXTENT_MAGIC, 2, 4, 0 };
	struct ext4fs_extent_entry in[2] = {
		{ .lblk = 7, .pblk = 0x123456789aULL, .len = 32768, .unwritten = 0 },
		{ .lblk = 40000, .pblk = 99, .len = 5, .unwritten = 1 },
	}, out;

	ext4fs_extent_node_set_header(node, &h);
	for (unsigned i = 0; i < 2; i++)
		ext4fs_extent_node_set_entry(node, i, 1, &in[i]);
	/* On disk: a full written extent stores 32768, an unwritten one len + 32768. */
	assert_int_equal(get16(node + 12 + 4), 32768);
	assert_int_equal(get16(node + 24 + 4), 32768 + 5);
	assert_int_equal(get16(node + 12 + 6), 0x12);
	for (unsigned i = 0; i < 2; i++) {
		ext4fs_extent_node_entry(node, i, 1, &out);
		assert_int_equal(out.lblk, in[i].lblk);
		assert_true(out.pblk == in[i].pblk);
		assert_int_equal(out.len, in[i].len);
		assert_int_equal(out.unwritten, in[i].unwritten);
	}
	struct ext4fs_extent_entry idx = { .lblk = 3, .pblk = 0xabcd00000042ULL };
	ext4fs_extent_node_set_entry(node, 1, 0, &idx);
	ext4fs_extent_node_entry(node, 1, 0, &out);
	assert_int_equal(out.lblk, 3);
	assert_true(out.pblk == 0xabcd00000042ULL);
	assert_int_equal(get16(node + 24 + 8), 0xabcd);
	struct ext4fs_extent_header back;
	ext4fs_extent_node_header(node, &back);
	assert_int_equal(back.magic, EXT4FS_EXTENT_MAGIC);
	assert_int_equal(back.entries, 2);
	assert_int_equal(back.max, 4);
	assert_int_equal(ext4fs_extent_node_room(60), 4);
	assert_int_equal(ext4fs_extent_node_room(BS), (BS - 12) / 12);
}

static void extent_node__remove_moves_later_entries_down_and_clears_the_last(void **state)
{
	(void)state;
	unsigned char node[60] = { 0 };
	struct ext4fs_extent_header h = { EXT4FS_EXTENT_MAGIC, 3, 4, 0 }, back;
	struct ext4fs_extent_entry e;

	ext4fs_extent_node_set_header(node, &h);
	for (unsigned i = 0; i < 3; i++) {
		e = (struct ext4fs_extent_entry){ .lblk = 10 * i, .pblk = 100 + i, .len = 1 };
		ext4fs_extent_node_set_entry(node, i, 1, &e);
	}
	ext4fs_extent_node_remove(node, 0);
	ext4fs_extent_node_header(node, &back);
	assert_int_equal(back.entries, 2);
	ext4fs_extent_node_entry(node, 0, 1, &e);
	assert_int_equal(e.lblk, 10);
	ext4fs_extent_node_entry(node, 1, 1, &e);
	assert_int_equal(e.lblk, 20);
	for (unsigned k = 36; k < 48; k++)
		assert_int_equal(node[k], 0);
	/* Past the count: nothing happens. */
	ext4fs_extent_node_remove(node, 5);
	ext4fs_extent_node_header(node, &back);
	assert_int_equal(back.entries, 2);
}

static void extent_node__checksum_is_set_and_verified_with_metadata_csum_only(void **state)
{
	(void)state;
	unsigned char node[BS];
	struct ext4fs_extent_header h = { EXT4FS_EXTENT_MAGIC, 0, (BS - 12) / 12, 0 };

	memset(node, 0, sizeof(node));
	ext4fs_extent_node_set_header(node, &h);
	make_image();
	struct ext4fs_fs *fs = open_image(0);
	/* Without metadata_csum every node passes and nothing is stored. */
	assert_true(ext4fs_extent_node_csum_ok(fs, 12, 1, node, BS));
	ext4fs_extent_node_csum_set(fs, 12, 1, node, BS);
	assert_int_equal(get32(node + 12 + 12 * h.max), 0);
	ext4fs_close(fs);

	const struct mem_image_layout l = {
		.blocks = NBLOCKS, .inodes = NINODES, .inode_size = 256, .extra_isize = 32,
		.incompat = EXT4FS_FEATURE_INCOMPAT_EXTENTS | EXT4FS_FEATURE_INCOMPAT_FILETYPE,
		.ro_compat = EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM, .checksum_type = 1,
	};
	mem_image_init(&l);
	fs = open_image(0);
	assert_false(ext4fs_extent_node_csum_ok(fs, 12, 1, node, BS));
	ext4fs_extent_node_csum_set(fs, 12, 1, node, BS);
	assert_true(ext4fs_extent_node_csum_ok(fs, 12, 1, node, BS));
	/* The seed is the inode's: another inode or generation does not match. */
	assert_false(ext4fs_extent_node_csum_ok(fs, 13, 1, node, BS));
	assert_false(ext4fs_extent_node_csum_ok(fs, 12, 2, node, BS));
	node[40] ^= 1;
	assert_false(ext4fs_extent_node_csum_ok(fs, 12, 1, node, BS));
	/* eh_max so large the checksum would not fit: nothing to check. */
	h.max = (BS - 12) / 12 + 1;
	ext4fs_extent_node_set_header(node, &h);
	assert_true(ext4fs_extent_node_csum_ok(fs, 12, 1, node, BS));
	ext4fs_close(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(extent_lookup__maps_blocks_of_a_depth_0_tree_with_their_contiguous_run),
		cmocka_unit_test(extent_lookup__reports_a_hole_as_block_0_up_to_the_next_extent),
		cmocka_unit_test(extent_lookup__flags_blocks_of_an_unwritten_extent),
		cmocka_unit_test(block_iterate__visits_the_extents_of_a_depth_0_tree_in_logical_order),
		cmocka_unit_test(extent_lookup__descends_through_an_index_node_of_a_depth_1_tree),
		cmocka_unit_test(extent_lookup__ends_a_hole_inside_a_leaf_where_the_next_index_starts),
		cmocka_unit_test(block_iterate__visits_each_index_node_before_the_extents_it_maps),
		cmocka_unit_test(extent_walk__stops_at_an_index_node_that_points_to_itself_by_its_depth),
		cmocka_unit_test(extent_walk__rejects_a_node_reached_twice_as_a_corrupt_tree),
		cmocka_unit_test(extent_walk__rejects_an_extent_beyond_the_end_of_the_file_system),
		cmocka_unit_test(extent_walk__rejects_an_index_pointing_beyond_the_file_system),
		cmocka_unit_test(extent_walk__rejects_bad_headers_magic_entries_above_max_and_depth_6),
		cmocka_unit_test(indirect_map__maps_direct_and_single_indirect_blocks_and_holes),
		cmocka_unit_test(indirect_map__iterates_the_indirect_block_before_the_blocks_it_maps),
		cmocka_unit_test(indirect_map__rejects_a_block_number_beyond_the_file_system),
		cmocka_unit_test(indirect_map__ends_a_walk_over_an_indirect_block_that_maps_itself),
		cmocka_unit_test(indirect_map__rejects_an_indirect_block_used_twice_instead_of_rescanning_it),
		cmocka_unit_test(extent_node__decodes_and_encodes_leaf_and_index_entries_with_high_bits),
		cmocka_unit_test(extent_node__remove_moves_later_entries_down_and_clears_the_last),
		cmocka_unit_test(extent_node__checksum_is_set_and_verified_with_metadata_csum_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
