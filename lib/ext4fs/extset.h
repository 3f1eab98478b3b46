/*
 * extset.h - a set of block numbers kept as sorted, disjoint, merged
 * extents (internal).
 *
 * Used where a flat bitmap would be sized by the device instead of by what
 * is in use: mkfs planning of a 15 TiB file system holds a few thousand
 * extents, not 4 billion bits.  Insertions are cheapest in increasing order
 * (the common case); lookups are binary searches.  Not thread-safe; the
 * caller owns the set and frees it with ext4fs__extset_free().
 */
#ifndef EXT4FS_EXTSET_H
#define EXT4FS_EXTSET_H

#include <stddef.h>
#include <stdint.h>

struct extset_range {
	uint64_t start;
	uint64_t len;
};

struct extset {
	struct extset_range *r;   /* sorted by start, disjoint, never adjacent */
	size_t n;
	size_t cap;
};

/* Add [start, start+len) (len > 0), merging with what overlaps or touches it.
 * EXT4FS_E_NO_MEMORY leaves the set as it was. */
int ext4fs__extset_add(struct extset *s, uint64_t start, uint64_t len);

/* Index of the first range that ends after blk (s->n when none).  Cannot fail. */
size_t ext4fs__extset_first_after(const struct extset *s, uint64_t blk);

/* Nonzero when no block of [start, start+len) is in the set.  Cannot fail. */
int ext4fs__extset_is_clear(const struct extset *s, uint64_t start, uint64_t len);

/* Number of blocks of [start, start+len) in the set.  Cannot fail. */
uint64_t ext4fs__extset_count(const struct extset *s, uint64_t start, uint64_t len);

/* Total number of blocks in the set.  Cannot fail. */
uint64_t ext4fs__extset_total(const struct extset *s);

/* Release the set's memory and leave it empty. */
void ext4fs__extset_free(struct extset *s);

#endif
