/*
 * indirect.h - pass 1's walk of an indirect block map (ext2/ext3 files),
 * pointer by pointer, as e2fsck walks it, and the repair it offers.
 *
 * A pointer outside the file system ("illegal block") is reported with
 * where it sits, so that a yes can zero it later, in the thread that asks;
 * the walk itself never writes.  Everything else is reported through the
 * claim callback in logical order, each indirect block before the blocks
 * it maps, runs of contiguous data blocks together.
 */
#ifndef E4FSCK_INDIRECT_H
#define E4FSCK_INDIRECT_H

#include <stdint.h>
#include "ext4fs/blockmap.h"
#include "problem.h"

struct e4fsck;

/*
 * Where an illegal pointer sits: slot index of i_block, or of indirect
 * block ref.  The place is a flag, not ref == 0: 0 is also what a damaged
 * map holds.
 */
struct indirect_fix {
	int in_inode;
	uint64_t ref;               /* unless in_inode */
	uint32_t index;
	uint32_t value;             /* the pointer as found */
	int in_metadata;            /* ref lies on the file system's metadata: it must never be written */
	int level;                  /* 0: a data pointer; 1-3: a pointer to an (double, triple) indirect block */
	int top;                    /* under which of the inode's pointers: 0 a direct one, 1-3 the (double, triple) indirect one */
	int resize;                 /* the resize inode's map: its blocks are metadata by design, and repaired as e2fsck does */
	int too_big;                /* a data pointer past a symlink's first block (legal or not), or a legal one
				       past a directory's limit: e2fsck's "too big" */
	uint64_t lblk;              /* a data pointer's logical block */
};

struct indirect_scan_ops {
	ext4fs_block_visit_fn claim;
	/* An illegal pointer: pctx->blk the pointer, pctx->str "block #N" or "indirect block"...  0 or -errno. */
	int (*illegal)(void *arg, const struct problem_ctx *pctx, const struct indirect_fix *fix);
	/* Nonzero when blk holds the file system's own metadata (superblocks, descriptors, bitmaps, tables). */
	int (*is_metadata)(void *arg, uint64_t blk);
	/*
	 * An indirect block of any inode but the resize inode lies on that
	 * metadata (pctx->blk): reported before it is claimed and walked as the
	 * map it claims to be, with its illegal pointers marked in_metadata.
	 * top: under which of the inode's pointers it lies (struct
	 * indirect_fix's top).  0 or -errno.
	 */
	int (*collision)(void *arg, const struct problem_ctx *pctx, int top);
	/*
	 * Walk as e2fsck's block iterator walks a map it may not change (its
	 * passes 1B-1D): an illegal pointer to an indirect block ends the walk
	 * of everything under the inode's own pointer holding it, and is an
	 * error unless an indirect block is read after it.
	 */
	int stop_at_bad_map;
	/*
	 * Pass 1's rule for an inode neither a directory nor a regular file (a
	 * symlink): a data pointer past its first block is handed to illegal()
	 * with too_big set, and not claimed, as e2fsck's pass 1 treats it.
	 */
	int symlink_limit;
	/*
	 * Pass 1's rule for a directory without largedir: a legal data pointer
	 * past logical block 2^31 / block size is handed to illegal() with
	 * too_big set, and not claimed, as e2fsck's pass 1 treats it.
	 */
	int dir_limit;
};

/* fsck_indirect_scan() with stop_at_bad_map: e2fsck's "Illegal indirect block found". */
#define INDIRECT_SCAN_BAD_MAP 1

/*
 * Walk inode ino's indirect map (in, read from disk).  Indirect blocks that
 * cannot be read are skipped.  Returns 0, INDIRECT_SCAN_BAD_MAP (see
 * stop_at_bad_map), or the first negative value a callback returned
 * (-ENOMEM without memory).
 */
int fsck_indirect_scan(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in,
		       const struct indirect_scan_ops *ops, void *arg);

/*
 * Inode ino's blocks (in, read from disk) as e2fsck's block iterator hands
 * them to its later passes, each mapping block before what it maps:
 * extent entries believed as they are (fsck_extent_blocks()), indirect
 * pointers outside the file system skipped, and with stop_at_bad_map the
 * indirect walk given up as e2fsck gives it up (see struct
 * indirect_scan_ops).  Returns 0, INDIRECT_SCAN_BAD_MAP, or what fn
 * returned (-ENOMEM without memory).
 */
int fsck_map_walk(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in, int stop_at_bad_map,
		  ext4fs_block_visit_fn fn, void *arg);

/*
 * 1 when a mapping block of inode ino (an indirect block or extent tree
 * block, as fsck_map_walk() finds them) lies on the file system's metadata
 * (ctx->fs_meta), else 0: a map passes 1B-1D did not copy (a clone
 * declined), which repairs that rewrite the map must leave alone.
 */
int fsck_map_on_metadata(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in);

/*
 * Point the entry of indirect-mapped *in for logical block lblk, which
 * holds old, at new_blk instead, in place (as e2fsck's clone does: the
 * indirect blocks stay where they are, i_blocks does not change).  An
 * entry in i_block changes *in (*in_changed = 1; the caller writes it); one
 * in an indirect block is written here, unless that block is the file
 * system's metadata.  0, or a library error (EXT4FS_E_IND_CORRUPT when the
 * entry is not found holding old).
 */
int fsck_indirect_repoint(struct e4fsck *ctx, struct ext4fs_inode *in, uint64_t lblk, uint64_t old,
			  uint64_t new_blk, int *in_changed);

/*
 * Zero the pointer fix names, if it still holds what was found: in i_block
 * of *in (the caller writes the inode), or in its indirect block (written
 * here, unless that block is the file system's metadata: ctx->fs_meta).
 * Returns 1 when *in changed, 0 when not, -1 after fsck_fatal().
 */
int fsck_indirect_clear(struct e4fsck *ctx, struct ext4fs_inode *in, const struct indirect_fix *fix);

#endif
