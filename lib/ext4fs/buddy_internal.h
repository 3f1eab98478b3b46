/*
 * buddy_internal.h - the block allocator's per-group buddy bitmaps
 * (buddy.c), for alloc.c only (not installed).
 *
 * A group's buddy holds, for every order k from 0 to log2 of the group size
 * (rounded up to a power of two), one bit per aligned chunk of 2^k blocks:
 * set when every block of the chunk is available.  Order 0 is the group's
 * block bitmap inverted, with blocks held by preallocations counted as
 * unavailable too; each higher order is the pairwise AND of the one below.
 * Keeping "wholly free" rather than the classic "free at exactly this order"
 * makes an update a recomputation of the touched words, order by order,
 * with no split or merge cases.  A free buddy of exactly order k (the
 * maximal chunks the search wants) is a set bit whose parent bit is clear,
 * and there are count[k] - 2 * count[k + 1] of them.
 *
 * Invariants, for a built buddy: bits past the group's last block are
 * clear at every order; count[k] is the number of set bits at order k;
 * free == count[0]; frags is the number of maximal runs of set order-0
 * bits; largest is the highest k with count[k] > 0, or -1.
 */
#ifndef EXT4FS_BUDDY_INTERNAL_H
#define EXT4FS_BUDDY_INTERNAL_H

#include <stdint.h>

#define BUDDY_MAX_ORDERS 24   /* groups hold at most 8 * 65536 = 2^19 blocks */

/* The layout shared by every group's buddy (word offsets of each order). */
struct buddy_geom {
	uint32_t bits;                       /* blocks per group */
	unsigned orders;                     /* orders 0 .. orders - 1 */
	uint32_t words[BUDDY_MAX_ORDERS];    /* 64-bit words of each order */
	uint32_t off[BUDDY_MAX_ORDERS];      /* word offset of each order in map */
	uint32_t total;                      /* words of all orders */
};

struct buddy {
	uint64_t *map;                       /* all orders; NULL until built */
	uint32_t count[BUDDY_MAX_ORDERS];    /* set bits of each order */
	uint32_t nbits;                      /* blocks in this group (the last may be short) */
	uint32_t free;                       /* available blocks */
	uint32_t frags;                      /* runs of available blocks */
	int largest;                         /* highest order with a wholly free chunk, -1 if none */
};

/* Fill in the layout for groups of blocks_per_group blocks (1 .. 2^19). */
void ext4fs__buddy_geom_init(struct buddy_geom *bg, uint32_t blocks_per_group);

/*
 * Build b for a group of nbits blocks from its block bitmap (used_bits,
 * bit i set when block i is in use, (nbits + 7) / 8 bytes).  Returns 0 or
 * EXT4FS_E_NO_MEMORY (b is then left unbuilt).
 */
int ext4fs__buddy_build(struct buddy *b, const struct buddy_geom *bg, const unsigned char *used_bits,
			uint32_t nbits);

/* Free b's map (it is unbuilt afterwards). */
void ext4fs__buddy_release(struct buddy *b);

/*
 * Mark count blocks from first (relative to the group) unavailable (busy
 * 1) or available (busy 0), whatever their state was; returns how many
 * changed state.
 */
uint32_t ext4fs__buddy_update(struct buddy *b, const struct buddy_geom *bg, uint32_t first,
			      uint32_t count, int busy);

/* 1 when block i of the group is available. */
int ext4fs__buddy_test(const struct buddy *b, uint32_t i);

/* Length of the run of available blocks starting at i, stopping at max. */
uint32_t ext4fs__buddy_run_at(const struct buddy *b, uint32_t i, uint32_t max);

/*
 * The first run of available blocks starting at or after from: *start and
 * *len (the whole run).  Returns 0, or -1 when there is none.
 */
int ext4fs__buddy_next_run(const struct buddy *b, uint32_t from, uint32_t *start, uint32_t *len);

/*
 * A free buddy of the smallest order >= order that has one (the maximal
 * aligned free chunk the classic buddy allocator would split), searching
 * from block `from` and wrapping.  Returns 0 with *start set, or -1.
 */
int ext4fs__buddy_find_chunk(const struct buddy *b, const struct buddy_geom *bg, unsigned order,
			     uint32_t from, uint32_t *start);

/* An upper bound of the longest run of available blocks, from the largest order. */
uint32_t ext4fs__buddy_run_bound(const struct buddy *b, const struct buddy_geom *bg);

/*
 * Compare b with a buddy built from scratch from used_bits with the
 * ranges [busy[2i], busy[2i] + busy[2i+1]) also unavailable (the group's
 * preallocations).  Returns 0 when they are identical in every order and
 * summary, 1 when they differ, EXT4FS_E_NO_MEMORY.
 */
int ext4fs__buddy_verify(const struct buddy *b, const struct buddy_geom *bg, const unsigned char *used_bits,
			 const uint32_t *busy, unsigned nbusy);

#endif
