/*
 * bitmap_internal.h - what bitmap.c gives the write layer and the block
 * allocator beyond <ext4fs/bitmap.h> (not installed).
 */
#ifndef EXT4FS_BITMAP_INTERNAL_H
#define EXT4FS_BITMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/bitmap.h"

void ext4fs__bitmap_set_range(struct ext4fs_bitmap *bm, uint64_t n, uint64_t count);
void ext4fs__bitmap_clear_range(struct ext4fs_bitmap *bm, uint64_t n, uint64_t count);
/* Copy nbits bits from bit first_bit into dst (bit 0 of dst = first_bit), padding
   the rest of pad_bytes with ones, as on-disk bitmaps are padded. */
void ext4fs__bitmap_copy_out(const struct ext4fs_bitmap *bm, uint64_t first_bit, uint64_t nbits,
			     unsigned char *dst, size_t pad_bytes);
/* The raw bit array (bit i = item start + (i << shift)) for the allocator. */
const unsigned char *ext4fs__bitmap_bits(const struct ext4fs_bitmap *bm);
/*
 * Read group g's block (inodes != 0: inode) bitmap block and record its
 * findings in bm without touching bm's bits: a backup open that stops
 * believing a group's UNINIT flag reports the block as a checker then
 * finds it.  Errors: EXT4FS_E_INVALID_ARG, EXT4FS_E_NO_MEMORY, read errors.
 */
int ext4fs__bitmap_note_block(struct ext4fs_fs *fs, struct ext4fs_bitmap *bm, int inodes, uint32_t g);

#endif
