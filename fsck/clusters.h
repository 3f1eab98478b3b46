/*
 * clusters.h - pass 1's block accounting on bigalloc file systems, by
 * e2fsck's rules.
 *
 * With bigalloc the allocation unit is a cluster of 2^n blocks: the block
 * bitmap has a bit per cluster, and an inode is charged whole clusters.
 * e4fsck's found and duplicate maps stay indexed by block, but every claim
 * sets whole clusters, so a test of any block of a cluster is a test of
 * the cluster.  An inode is charged (and claims) a cluster when its walk
 * enters it: an extent's first cluster is not charged again when the
 * previous extent ended in it, and a block map's block is not when it lies
 * in the previous block's cluster at the same offset as its logical block.
 * Blocks whose logical and physical offsets in their clusters differ, or
 * that leave a physical cluster in the middle of a logical one, break the
 * cluster allocation rules: e2fsck reports each and claims its cluster
 * twice, so that pass 1B sorts it out.  With a ratio of 1 every rule here
 * reduces to the per-block one.
 */
#ifndef E4FSCK_CLUSTERS_H
#define E4FSCK_CLUSTERS_H

#include <stdint.h>
#include "maps.h"

/*
 * Claim the clusters holding [blk, blk + n) (ratio: blocks per cluster, a
 * power of two) in found; a cluster set there already is set in dup
 * instead.  Clusters are clamped to found's limit.  0, or -1 (ENOMEM).
 */
int cluster_claim(struct bitmap_paged *found, struct bitmap_paged *dup, uint32_t ratio, uint64_t blk,
		  uint64_t n);

/*
 * Set the clusters holding [blk, blk + n) in found without looking for
 * duplicates: the file system's own metadata, which shares clusters
 * (bitmaps side by side, a superblock and its descriptors) without being
 * claimed twice.  0, or -1 (ENOMEM).
 */
int cluster_mark(struct bitmap_paged *found, uint32_t ratio, uint64_t blk, uint64_t n);

/*
 * Clear the clusters holding [blk, blk + n) in found (blocks freed by a
 * repair: a freed cluster is freed whole), clamped to found's limit.
 */
void cluster_unclaim(struct bitmap_paged *found, uint32_t ratio, uint64_t blk, uint64_t n);

/* Where one inode's walk is: e2fsck's previous physical and last logical block. */
struct cluster_walk {
	uint64_t mask;              /* ratio - 1 */
	uint64_t previous;          /* the last physical block walked, 0 before the first */
	uint64_t last_lblk;         /* the last logical data block walked (UINT64_MAX before the first) */
};

void cluster_walk_init(struct cluster_walk *cw, uint32_t ratio);

/*
 * Whether data block pblk at logical block lblk breaks the cluster
 * allocation rules, after the blocks walked so far (always 0 with a ratio
 * of 1).
 */
int cluster_misaligned(const struct cluster_walk *cw, uint64_t pblk, uint64_t lblk);

/*
 * An extent of len blocks at pblk, lblk: the clusters to claim start at
 * *claim_from and run to pblk + len (nothing when *claim_from is past it);
 * returns how many clusters the inode is charged.  Moves the walk past it.
 */
uint64_t cluster_walk_extent(struct cluster_walk *cw, uint64_t pblk, uint64_t lblk, uint32_t len,
			     uint64_t *claim_from);

/*
 * A block map's block pblk at blockcnt (a data block's logical number, or
 * e2fsck's -1, -2, -3 for an indirect, double and triple indirect block).
 * Returns 1 when it enters a cluster (claim and charge it), 0 when it
 * stays in the previous block's at its logical offset.  Moves the walk
 * past it.  (e2fsck's misalignment test for block maps can never fire
 * after this one, so block maps have none.)
 */
int cluster_walk_block(struct cluster_walk *cw, uint64_t pblk, int64_t blockcnt);

/* Blocks an attribute value of size bytes kept in an EA inode is charged: whole clusters, in blocks. */
uint64_t cluster_value_blocks(uint32_t block_size, uint32_t ratio, uint64_t size);

#endif
