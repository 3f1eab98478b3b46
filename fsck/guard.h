/*
 * guard.h - protecting what pass 1 found in use from the allocator.
 *
 * Repairs after pass 1 allocate through the library (cloned blocks in
 * pass 1D, /lost+found and its growth in passes 3 and 4), and the library
 * trusts the bitmaps on disk.  Blocks and inodes pass 1 found in use but
 * the bitmaps call free must not be handed out: they are marked in use
 * while such repairs run, and given back afterwards, so pass 5 still
 * reports them as e2fsck does.  Blocks are marked without counting (the
 * free counts stay e2fsck's, which never marked them), inodes with their
 * counts (the inode allocator chooses groups by them).
 */
#ifndef E4FSCK_GUARD_H
#define E4FSCK_GUARD_H

#include <stddef.h>
#include <stdint.h>

struct e4fsck;

struct guard_run {
	uint64_t first, count;
	int inode, dir;
};

/*
 * A group the guard marked something in, as it was before: marking clears
 * its BLOCK_UNINIT (INODE_UNINIT, and may shorten the unused tail), which
 * pass 5 must still see (it asks about them as e2fsck does).
 */
struct guard_group {
	uint32_t group;
	int inode;                  /* 1: the inode side, 0: the block side */
	uint16_t flags;
	uint32_t itable_unused;
	uint64_t set_bits;          /* bits set in the group's part of the bitmap */
};

/* What a guard marked in use; zero-initialise before fsck_guard_on(). */
struct alloc_guard {
	struct guard_run *runs;
	size_t n, cap;
	struct guard_group *groups;
	size_t ngroups, capgroups;
	uint64_t kept[2];           /* ctx's repair blocks when the guard went on (dirs.h), 0 for none */
};

/* Mark in use, on disk, every block and inode ctx's maps hold that the bitmaps call free.  0 or -1 (reported). */
int fsck_guard_on(struct e4fsck *ctx, struct alloc_guard *g);

/*
 * Give back what fsck_guard_on() marked (what a repair freed meanwhile is
 * left alone, and a block kept aside for a repair that the repair has taken
 * since, which is claimed again) and empty g.  A group whose bitmap holds as many bits as
 * before the guard (no repair allocated in it) gets back the uninit flag
 * and unused tail the marking took.  0 or -1 (reported).
 */
int fsck_guard_off(struct e4fsck *ctx, struct alloc_guard *g);

/*
 * The first block from `from` whose cluster no inode claims (every block
 * with a ratio of 1), its cluster's first block with bigalloc as e2fsck's
 * allocator takes clusters; blocks_count when there is none.
 */
uint64_t fsck_next_free_cluster(struct e4fsck *ctx, uint64_t from);

/*
 * A block for a repair, taken as e2fsck takes one: the first block at or
 * after goal, else from the start, that no inode was found to use (blocks
 * the bitmap still calls used but no inode claims come first, as in
 * e2fsck).  It is claimed in ctx->block_found and set in the block bitmap,
 * the free counts left to pass 5, which then reports them as e2fsck's does.
 * 0, or EXT4FS_E_NO_SPACE, EXT4FS_E_NO_MEMORY, a library error.
 */
int fsck_take_block(struct e4fsck *ctx, uint64_t goal, uint64_t *blk);

/*
 * A block for logical block lblk of inode ino (in, its record): with
 * bigalloc, when the file has another block of lblk's logical cluster,
 * the block at lblk's offset in that block's physical cluster (already
 * claimed and in use: nothing is marked); else fsck_take_block(goal).
 * Same errors, and mapping errors.
 */
int fsck_take_file_block(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, uint64_t lblk,
			 uint64_t goal, uint64_t *blk);

/*
 * fsck_take_block(), the block then counted as e2fsck's allocation
 * statistics count it: the group's and the superblock's free block counts
 * drop by one even when the bitmap had the block already (pass 5 then puts
 * them right with e2fsck's messages).  Same errors, and the descriptor and
 * superblock setters'.
 */
int fsck_take_block_counted(struct e4fsck *ctx, uint64_t goal, uint64_t *blk);

/*
 * An inode for a repair, taken as e2fsck takes one for a new entry of dir:
 * the first inode from dir's group on (past the reserved ones), else from
 * the first, that no inode was found to use.  It is set in ctx->inode_used
 * and in the inode bitmap, and counted as e2fsck counts it (free inodes
 * down by one, directories up by one when is_dir, whatever the bit was).
 * 0, or EXT4FS_E_NO_FREE_INODES, EXT4FS_E_NO_MEMORY, a library error.
 */
int fsck_take_inode(struct e4fsck *ctx, uint32_t dir, int is_dir, uint32_t *ino);

#endif
