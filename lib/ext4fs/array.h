/*
 * array.h - growing an array by doubling, for the library and its tools.
 *
 * Appending to an array whose final length is unknown is done in one way
 * everywhere: the capacity doubles (starting at a size the caller picks),
 * the multiplication is checked for overflow, and a failure leaves the
 * array and its capacity as they were, so the caller can report it and
 * free what it holds.
 */
#ifndef EXT4FS_ARRAY_H
#define EXT4FS_ARRAY_H

#include <stddef.h>

/*
 * Make room for at least need items of item_size bytes in items, which
 * holds *cap of them (items may be NULL when *cap is 0).  When need fits,
 * returns items unchanged.  Otherwise the capacity becomes *cap doubled
 * (or first, for an empty array; 1 if first is 0), doubled again until
 * need fits, and the array is reallocated: returns the new array, whose
 * first *cap items are the old ones (the rest uninitialised), and updates
 * *cap.  Returns NULL, with items still valid and *cap unchanged, when
 * memory runs out or the size would overflow.  The caller owns the array
 * and frees it with free().
 */
void *ext4fs_array_grow(void *items, size_t *cap, size_t need, size_t item_size, size_t first);

#endif
