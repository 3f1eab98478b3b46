/*
 * maps.h - per-block and per-inode maps for e4fsck, paged so that memory
 * follows what is in use, not the size of the device.
 *
 * A map covers numbers [0, limit).  It is cut into pages of 2^page_shift
 * numbers (a block group's worth, typically); a page is allocated on the
 * first write to it, and reading a number in a missing page gives 0.  A
 * mostly empty 1 TiB file system then costs a few pages, where a flat
 * bitmap would cost 32 MiB and flat per-inode counters 128 MiB.
 *
 * Not thread-safe; pass 1 gives each worker its own maps and merges them.
 */
#ifndef E4FSCK_MAPS_H
#define E4FSCK_MAPS_H

#include <stddef.h>
#include <stdint.h>

/* The page table both kinds of map share. */
struct paged {
	uint64_t limit;
	unsigned page_shift;       /* a page covers 2^page_shift numbers */
	size_t page_bytes;
	uint64_t npages;
	void **pages;              /* npages pointers; NULL: all zero */
	uint64_t pages_used;
};

/* A set of numbers (blocks or inodes), one bit each. */
struct bitmap_paged {
	struct paged p;
};

/*
 * Make an empty map of [0, limit) with pages of 2^page_shift numbers
 * (6 <= page_shift <= 30).  Returns 0 or -ENOMEM / -EINVAL.  Free with
 * bitmap_paged_free().
 */
int bitmap_paged_init(struct bitmap_paged *m, uint64_t limit, unsigned page_shift);
void bitmap_paged_free(struct bitmap_paged *m);

/* 1 when n is set (0 also for n >= limit). */
int bitmap_paged_test(const struct bitmap_paged *m, uint64_t n);

/*
 * Set [n, n + count): returns how many of them were set already (so a
 * caller marking a file's blocks learns of blocks claimed twice), or
 * -ENOMEM (nothing changed in the page that could not be allocated; the
 * earlier pages keep their bits) or -ERANGE when the range passes limit.
 */
int64_t bitmap_paged_set_range(struct bitmap_paged *m, uint64_t n, uint64_t count);

/* Clear [n, n + count) (clamped to limit).  Cannot fail. */
void bitmap_paged_clear_range(struct bitmap_paged *m, uint64_t n, uint64_t count);

/* How many numbers of [n, n + count) are set (clamped to limit). */
uint64_t bitmap_paged_count(const struct bitmap_paged *m, uint64_t n, uint64_t count);

/*
 * The first set number in [from, limit), or limit when none.  Missing
 * pages are skipped whole, so a sparse map is walked in steps of pages.
 */
uint64_t bitmap_paged_next_set(const struct bitmap_paged *m, uint64_t from);

/* The first clear number in [from, limit), or limit when none. */
uint64_t bitmap_paged_next_clear(const struct bitmap_paged *m, uint64_t from);

/*
 * The first start in [first, finish) of count clear numbers in a row that
 * end before limit (the run may pass finish, as e2fsprogs' search of a
 * free run lets it), into *start.  0, or -1 when there is none.
 */
int bitmap_paged_find_clear_run(const struct bitmap_paged *m, uint64_t first, uint64_t finish, uint64_t count,
				uint64_t limit, uint64_t *start);

/*
 * Merge src into dst (same limit and page size): dst |= src.  Numbers set
 * in both are also set in dup (may be NULL), and their count is returned;
 * or -ENOMEM / -EINVAL.  Used to join pass 1 workers' block maps.
 */
int64_t bitmap_paged_merge(struct bitmap_paged *dst, const struct bitmap_paged *src,
			   struct bitmap_paged *dup);

/* Bytes held by the map's pages and page table (for -tt memory figures). */
size_t bitmap_paged_bytes(const struct bitmap_paged *m);

/* A small counter (0..65535) per number, paged the same way. */
struct counter_paged {
	struct paged p;
};

int counter_paged_init(struct counter_paged *c, uint64_t limit, unsigned page_shift);
void counter_paged_free(struct counter_paged *c);

/* The counter of n (0 for a missing page or n >= limit). */
uint16_t counter_paged_get(const struct counter_paged *c, uint64_t n);

/*
 * Set the counter of n.  Returns 0, -ENOMEM or -ERANGE.  Setting 0 in a
 * missing page allocates nothing.
 */
int counter_paged_set(struct counter_paged *c, uint64_t n, uint16_t v);

/*
 * Add 1 to the counter of n, saturating at 65535 (link counts above that
 * are what dir_nlink records as 1; the caller decides).  Returns the new
 * value, or -ENOMEM / -ERANGE.
 */
int counter_paged_inc(struct counter_paged *c, uint64_t n);

size_t counter_paged_bytes(const struct counter_paged *c);

/*
 * Copy every nonzero counter of src into dst (same limit and page size):
 * for maps filled over disjoint ranges, such as pass 1 workers' link
 * counts.  0, or -ENOMEM / -EINVAL.
 */
int counter_paged_merge(struct counter_paged *dst, const struct counter_paged *src);

/*
 * A set of block ranges, for what few but long runs describe (the file
 * system's own metadata: a superblock and descriptor table, two bitmaps
 * and an inode table per group, mostly side by side).  Ranges are added in
 * any order, then range_set_seal() sorts and joins them for fast tests.
 * Memory follows the number of runs, not the size of the device.
 */
struct range_set {
	struct block_range { uint64_t start, end; } *r;  /* [start, end) */
	size_t n, cap;
	int sealed;
};

/* An empty set (all zero bytes is one too).  Free with range_set_free(). */
void range_set_init(struct range_set *s);
void range_set_free(struct range_set *s);

/* Add [start, start + count); count 0 adds nothing.  0, or -ENOMEM / -ERANGE (wraps past 2^64). */
int range_set_add(struct range_set *s, uint64_t start, uint64_t count);

/* Sort and join overlapping or touching ranges, for fast tests; later adds unseal it.  Cannot fail. */
void range_set_seal(struct range_set *s);

/* 1 when n is in a range of s, else 0: a binary search once sealed, a linear one before. */
int range_set_test(const struct range_set *s, uint64_t n);

size_t range_set_bytes(const struct range_set *s);

#endif
