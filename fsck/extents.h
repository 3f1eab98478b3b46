/*
 * extents.h - pass 1's check of an inode's extent tree, entry by entry, as
 * e2fsck does it, and the repairs its questions offer.
 *
 * The check runs in pass 1's workers, which never write: it reports each
 * problem with a description of the repair a yes would bring (struct
 * extent_fix), and the blocks of the entries it believes through a claim
 * callback.  What it claims does not depend on the answers, as in e2fsck:
 * an entry found bad is never claimed, whether it is then removed or left.
 * The repairs run later, one at a time, in the thread that asks.
 */
#ifndef E4FSCK_EXTENTS_H
#define E4FSCK_EXTENTS_H

#include <stdint.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/extent.h"
#include "problem.h"

struct e4fsck;

/*
 * The deepest tree the checker walks.  e2fsck walks a tree of any depth and
 * offers to rebuild one deeper than its block size needs
 * (PR_1_EXTENT_BAD_MAX_DEPTH: 5 levels with 1 KiB blocks, 4 with 4 KiB);
 * three levels more than the library writes are walked the same way, a
 * deeper root is taken for a corrupt header.
 */
#define EXTENT_DEPTH_WALKED (EXT4FS_EXTENT_MAX_DEPTH + 3)
#define EXTENT_PATH_MAX (EXTENT_DEPTH_WALKED + 1)

enum extent_fix_kind {
	EXTENT_FIX_DELETE,       /* remove the entry, and with it all it maps */
	EXTENT_FIX_CSUM,         /* write the node again with its checksum */
	EXTENT_FIX_INDEX_START,  /* the index entry starts where its child's first entry does */
	EXTENT_FIX_WRITTEN,      /* a directory's unwritten extent becomes written */
	EXTENT_FIX_REBUILD,      /* pass 1E writes the tree again, as small as it can be (PR_1E_CAN_*, and
				    PR_1_EXTENT_BAD_MAX_DEPTH, asked first: after its no the others follow) */
	EXTENT_FIX_COLLAPSE,     /* a directory's leaf extent starts at new_lblk (set when asking) */
};

/* Where a repair applies: a node on the path from the root, and one of its entries. */
struct extent_fix {
	enum extent_fix_kind kind;
	unsigned level;                        /* the node's level; 0 is the root in the inode */
	uint64_t nodes[EXTENT_PATH_MAX];       /* nodes[k], k >= 1: block of the level-k node on the path */
	int leaf;
	struct ext4fs_extent_entry entry;      /* the entry as found, which identifies it in its node */
	uint32_t new_lblk;                     /* EXTENT_FIX_INDEX_START, EXTENT_FIX_COLLAPSE */
};

struct extent_scan_ops {
	/* A believed leaf extent (EXT4FS_BLOCK_DATA) or a tree block below the root (EXT4FS_BLOCK_EXTENT_NODE). */
	ext4fs_block_visit_fn claim;
	/* A problem and the repair a yes brings (NULL: a message only).  0, or a negative error to stop. */
	int (*problem)(void *arg, uint32_t code, const struct problem_ctx *pctx, const struct extent_fix *fix);
	/* Nonzero when blk holds the file system's own metadata (superblocks, descriptors, bitmaps, tables). */
	int (*is_metadata)(void *arg, uint64_t blk);
};

/* fsck_extents_scan(): the walk stopped early, as e2fsck's does (see there). */
#define EXTENT_SCAN_STOPPED 1

/*
 * Check inode ino's extent tree (in, read from disk), reporting through ops
 * with arg.  dir_limit: the number of logical blocks a directory may have.
 * Returns 0, or the first negative value a callback returned.  Tree blocks
 * that cannot be read are reported as invalid nodes.
 *
 * A tree block below an index entry that lies on the file system's own
 * metadata (any inode but the resize inode) is reported as
 * PR_1_CRITICAL_METADATA_COLLISION and checked without repairs.  When
 * that block is not a tree node at all, the walk ends there, as e2fsck's
 * does: PR_1_EXTENT_ITERATE_FAILURE (a yes clears the inode), the rebuild
 * suggestion for what was seen, then PR_1_BLOCK_ITERATE (e2fsck's fatal
 * error, asked only if the inode was kept), and EXTENT_SCAN_STOPPED is
 * returned: the inode's size and block count are not judged.
 */
int fsck_extents_scan(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in, uint64_t dir_limit,
		      const struct extent_scan_ops *ops, void *arg);

/*
 * Apply fix to inode ino's tree: *in is the inode in memory (its root is
 * changed there; the caller writes it), tree blocks are written at once.
 * A node left empty is freed: its block leaves ctx->block_found, i_blocks
 * drops, and the parent's entry goes.  Returns 1 when *in changed, 0
 * when only tree blocks did (also when the entry is no longer there: an
 * earlier repair took it with its subtree), -1 after fsck_fatal().
 * EXTENT_FIX_REBUILD is not a repair of this kind: see fsck_extent_rebuild().
 */
int fsck_extent_repair(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in, const struct extent_fix *fix);

/*
 * Pass 1E's work for inode ino: write its (valid) tree again with full
 * nodes and as few levels as its extents need, in the tree blocks it had
 * (freeing those left over, in the bitmaps and in ctx->block_found).  A
 * block-mapped inode (PR_1_NO_BIGALLOC_BLOCKMAP_FILES) is converted to an
 * extent tree instead, its mapping blocks freed; one whose tree finds no
 * free cluster is left as it was (PR_1E_OPTIMIZE_EXT_ERR, and the error stays).
 * Returns 0, or -1 after fsck_fatal().
 */
int fsck_extent_rebuild(struct e4fsck *ctx, uint32_t ino);

/*
 * Visit the blocks of extent inode in as e2fsck's block iterator does:
 * every tree block (before what it maps) and every leaf extent, believing
 * entries as they are; only nodes with an insane header, or out of the file
 * system, are not entered.  Returns 0, -ENOMEM or what fn returned.
 */
int fsck_extent_blocks(struct ext4fs_fs *fs, const struct ext4fs_inode *in, ext4fs_block_visit_fn fn, void *arg);

#endif
