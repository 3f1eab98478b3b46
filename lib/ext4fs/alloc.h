/*
 * alloc.h - the block allocator (an mballoc equivalent) and the inode
 * allocator.
 *
 * Layer 5.  Both work on a handle opened with EXT4FS_OPEN_RW and change the
 * file system only through ext4fs_blocks_mark_used() / ext4fs_inode_mark_used()
 * (fs.h), so bitmaps, descriptors and the superblock stay consistent.
 *
 * Block allocation.  A request names its owner, the logical block it is
 * for, how many blocks it wants and a physical goal.  The allocator keeps
 * per-group buddy bitmaps and summaries (built lazily from the block
 * bitmap), normalises requests to the kernel's size buckets, serves small
 * files from a locality-group preallocation so they pack without gaps and
 * large files from a per-inode preallocation, aligns to the stripe width
 * when the superblock has one, and searches from the exact goal, to a free
 * buddy of the right order, to best fit, to anything.  Preallocated blocks
 * are marked in use in the bitmaps only when they are handed out; the
 * unused rest is just forgotten by ext4fs_alloc_release_inode(), so no
 * state ever needs to be "given back" on disk.
 *
 * Reserved blocks (s_r_blocks_count) are not handed out unless the request
 * says EXT4FS_ALLOC_USE_RESERVED (root-owned files, as the kernel does for
 * uid 0 / s_def_resuid), so a full file system leaves them free.
 */
#ifndef EXT4FS_ALLOC_H
#define EXT4FS_ALLOC_H

#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Request flags. */
#define EXT4FS_ALLOC_METADATA      0x01  /* a tree, index or xattr block: near the goal, no preallocation */
#define EXT4FS_ALLOC_USE_RESERVED  0x02  /* may take the reserved blocks */
#define EXT4FS_ALLOC_NO_PREALLOC   0x04  /* exactly this request, nothing kept for later */
#define EXT4FS_ALLOC_EXACT_GOAL    0x08  /* only at the goal (fails with EXT4FS_E_NO_SPACE otherwise) */
#define EXT4FS_ALLOC_DIRECTORY     0x10  /* a directory's block */
#define EXT4FS_ALLOC_WHOLE_FILE    0x20  /* file_blocks is the file's exact final size (the
					    caller writes whole files, like mke4fs -d): room for
					    the rest of the file is searched for, nothing is
					    preallocated, and a file's first block goes right
					    after the previous whole file or directory block,
					    so a tree written in order is packed without gaps */

struct ext4fs_alloc_request {
	uint32_t ino;          /* owner, 0 for none (then no per-inode preallocation) */
	uint32_t lblk;         /* logical block of the first block wanted */
	uint32_t len;          /* blocks wanted (>= 1) */
	uint32_t min_len;      /* fewer are acceptable down to this (0 means 1) */
	uint64_t goal;         /* physical goal; 0 = derive from the owner's inode group */
	uint64_t file_blocks;  /* the whole file's size in blocks when known (0 = unknown): the
				  size class that picks group or inode preallocation; blocks
				  lblk + len .. file_blocks - 1 are taken to be unmapped, so
				  the rest of the file is preallocated in one go */
	unsigned flags;        /* EXT4FS_ALLOC_* */
};

/*
 * Allocate between max(min_len,1) and len contiguous blocks; on success
 * *start and *got describe them, already marked in use.  Fewer than len
 * come back when no longer free extent was found, when the rest of a
 * preallocation is shorter, or when len exceeds a block group (an
 * allocation never spans groups): callers loop for the rest.  Errors:
 * EXT4FS_E_NO_SPACE (nothing left outside the reserved blocks, or nothing
 * of min_len), EXT4FS_E_READ_ONLY, EXT4FS_E_INVALID_ARG, EXT4FS_E_NO_MEMORY,
 * bitmap load errors.  On error the file system has not changed (unused
 * preallocations may have been dropped).  On bigalloc (a writable open
 * with EXT4FS_OPEN_CLUSTERS_BY_CALLER) whole free clusters are taken, the
 * first run from the goal's cluster on within one group, without
 * preallocation; data starts at req->lblk's offset in the first cluster
 * (a METADATA block at the cluster's start), and the caller charges the
 * inode the clusters.
 */
int ext4fs_alloc_blocks(struct ext4fs_fs *fs, const struct ext4fs_alloc_request *req,
			uint64_t *start, uint32_t *got);

/*
 * Free count blocks from blk (they must be in use, so no preallocation
 * holds them).  Errors as ext4fs_blocks_mark_free(); on error nothing has
 * changed.  On bigalloc (EXT4FS_OPEN_CLUSTERS_BY_CALLER) it frees each
 * cluster the range touches that is still in use, so that the extents of
 * a file being released may share clusters; a partial failure may leave
 * earlier clusters freed.
 */
int ext4fs_free_blocks(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/* Forget inode ino's unused preallocation (file closed or deleted).  Cannot fail. */
void ext4fs_alloc_release_inode(struct ext4fs_fs *fs, uint32_t ino);

/* Forget all preallocations (before a flush that must leave nothing reserved). */
void ext4fs_alloc_release_all(struct ext4fs_fs *fs);

/*
 * Fence: keep the free blocks of [blk, blk + count) from every allocation
 * (requests, preallocations, tree and indirect blocks) until
 * ext4fs_alloc_unfence_all().  For a caller that claims a set of free
 * blocks over several steps (ext4fs_blocks_mark_used() on each part in
 * turn, as a journalled move does, piece after piece), while other writes
 * in between allocate: no step must find its blocks taken.  Blocks of the
 * range that are in use when it is fenced are passed over; a fenced block
 * marked in use and freed again is fenced again.  Preallocations holding fenced blocks
 * are given up.  The fenced blocks still count as free, so a request may
 * fail with EXT4FS_E_NO_SPACE while they are held.  Fences are not
 * nested: unfencing lifts them all.  Errors: EXT4FS_E_BAD_BLOCK_NUM (the
 * range is not all in the file system), EXT4FS_E_READ_ONLY,
 * EXT4FS_E_NO_MEMORY, bitmap load errors; on error the blocks fenced by
 * this call may be held in part (unfencing lifts them).
 */
int ext4fs_alloc_fence(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/* Lift every fence: the blocks still free are available again.  Cannot fail. */
void ext4fs_alloc_unfence_all(struct ext4fs_fs *fs);

/*
 * The stripe width the allocator aligns to, in blocks (the tuned value,
 * else s_raid_stripe_width, else s_raid_stride), 0 for none.
 */
uint32_t ext4fs_alloc_stripe(const struct ext4fs_fs *fs);

/*
 * For callers writing whole files in a row (EXT4FS_ALLOC_WHOLE_FILE): the
 * next `ahead` blocks of the stream go to other files, and the file after
 * them fills a stripe.  Moves the stream's next position forward, by less
 * than a stripe, so that file starts on a stripe boundary without a gap
 * in front of it; the gap lies before the `ahead` blocks instead (mke4fs
 * -d puts it between a directory's block and its files rather than
 * between two of its files).  Nothing happens without a stripe, before the
 * first whole-file or directory allocation, or when the files would not
 * stay in the current block group.  Errors: EXT4FS_E_READ_ONLY,
 * EXT4FS_E_NO_MEMORY.
 */
int ext4fs_alloc_stream_align(struct ext4fs_fs *fs, uint64_t ahead);

/*
 * Tunables, the kernel's mb_* sysfs knobs.  ext4fs_alloc_tune() takes
 * effect at once; stream_req or group_prealloc 0 turns the locality group
 * off.  Errors: EXT4FS_E_INVALID_ARG (max_to_scan 0, or min_to_scan above
 * it), EXT4FS_E_READ_ONLY, EXT4FS_E_NO_MEMORY.  Tunables and statistics
 * belong to the allocator's state, which ext4fs_group_desc_set() discards.
 */
struct ext4fs_alloc_params {
	uint32_t stream_req;        /* files below this many blocks use the group preallocation (16) */
	uint32_t group_prealloc;    /* size of the locality-group preallocation in blocks (512) */
	uint32_t stripe;            /* stripe in blocks, 0 = from the superblock (s_raid_stripe_width,
				       else s_raid_stride) */
	uint32_t max_to_scan;       /* free extents examined in the best-fit pass (200) */
	uint32_t min_to_scan;       /* before stopping at a good enough one (10) */
};
void ext4fs_alloc_get_params(const struct ext4fs_fs *fs, struct ext4fs_alloc_params *p);
int ext4fs_alloc_tune(struct ext4fs_fs *fs, const struct ext4fs_alloc_params *p);

/* What the allocator did, for benchmarks (counted since open). */
struct ext4fs_alloc_stats {
	uint64_t requests;          /* ext4fs_alloc_blocks calls */
	uint64_t blocks_allocated;
	uint64_t goal_hits;         /* served exactly at the goal */
	uint64_t prealloc_hits;     /* served from a preallocation */
	uint64_t pass_used[4];      /* served by pass 0 exact goal, 1 buddy order, 2 best fit, 3 any */
	uint64_t groups_scanned;    /* groups whose buddy data was examined */
	uint64_t buddies_built;     /* groups whose buddy bitmap was built from the block bitmap */
	uint64_t stripe_aligned;    /* allocations placed on a stripe boundary */
	uint64_t extents_examined;  /* free extents considered in passes 2 and 3 */
	uint64_t preallocs;         /* preallocations made (group and inode) */
	uint64_t prealloc_dropped;  /* preallocated blocks given back unused */
};
void ext4fs_alloc_get_stats(const struct ext4fs_fs *fs, struct ext4fs_alloc_stats *st);

/*
 * Verify the allocator's state against the block bitmap: every built
 * buddy and its summaries (fenced blocks busy), the per-group and
 * per-flex-group counts, and that each preallocation lies in free blocks
 * of its group and is counted once.  For tests and debugging tools; costs a rebuild of every buddy.
 * Errors: EXT4FS_E_ALLOC_STATE (the message names the group and what
 * differs), EXT4FS_E_NO_MEMORY, bitmap load errors.  Changes nothing.
 */
int ext4fs_alloc_check(struct ext4fs_fs *fs);

/*
 * Choose and mark in use a new inode for a child of parent (0 for none, the
 * root's own inode is fixed).  Flex_bg file systems use the flex-group
 * allocator: stay in the parent's flex group while it has inodes and its
 * free-block ratio is healthy, else look back one flex group, else move on
 * to the next one with room; directories are placed like files.  Classic
 * layouts spread top-level directories Orlov-style (the group with
 * above-average free inodes and blocks and fewest directories) and keep
 * files and nested directories near their parent.  Errors:
 * EXT4FS_E_NO_FREE_INODES, EXT4FS_E_READ_ONLY, bitmap load errors.
 */
int ext4fs_inode_alloc(struct ext4fs_fs *fs, uint32_t parent, uint16_t mode, uint32_t *ino);

#ifdef __cplusplus
}
#endif
#endif
