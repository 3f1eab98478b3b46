/*
 * map_test.h - helpers shared by the block-map and file-data tests: new
 * regular files linked into the root directory (so e2fsck accepts them),
 * counting extents, picking scattered free blocks.
 *
 * The directory is changed by hand here (an entry appended to the root's
 * first block, its checksum tail updated) so these tests do not depend on
 * the directory-writing code.
 */
#ifndef MAP_TEST_H
#define MAP_TEST_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "rw_image.h"

/* Allocate an inode for a regular file owned by uid 1000, link it as name in the root
 * directory and write it; *in receives it.  Fails the test on any error. */
uint32_t map_test_new_file(struct rw_image *img, const char *name, struct ext4fs_inode *in);

struct map_test_tree {
	unsigned extents;       /* leaf extents */
	unsigned unwritten;     /* of which unwritten */
	unsigned nodes;         /* tree blocks (index entries) */
	unsigned depth;
	uint64_t blocks;        /* data blocks mapped */
};

/* Describe inode ino's extent tree (walked with the library's validating reader). */
void map_test_tree(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in,
		   struct map_test_tree *t);

/*
 * Find n runs of runlen free blocks from block `from` on, no two of them
 * adjacent, mark them in use and store their first blocks in out.
 */
void map_test_pick_runs(struct ext4fs_fs *fs, uint64_t from, unsigned n, unsigned runlen,
			uint64_t *out);

/* The superblock's free block count. */
uint64_t map_test_free(struct ext4fs_fs *fs);

/* Deterministic pseudo-random numbers for the tests. */
uint32_t map_test_rand(uint64_t *state);

#endif
