/*
 * blockmap_internal.h - what blockmap.c gives the modules above it beyond
 * <ext4fs/blockmap.h> (not installed): reading data through a block map,
 * and a set of block numbers for walks over on-disk links.
 */
#ifndef EXT4FS_BLOCKMAP_INTERNAL_H
#define EXT4FS_BLOCKMAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

/*
 * Read len bytes from offset of inode ino's data through its block map
 * (extents or indirect; no inline data): holes and unwritten extents read
 * as zeros.  *got is what was read, short only on error.  The caller keeps
 * the request inside i_size.  Errors: EXT4FS_E_NO_MEMORY, map and read
 * errors.  ext4fs_file_read() over a block-mapped file, and EA inodes'
 * values (xattr.c), which are always block-mapped.
 */
int ext4fs__blockmap_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  uint64_t offset, unsigned char *buf, size_t len, size_t *got);

/*
 * A set of block numbers, for walks over on-disk links that must visit
 * each block once however the links repeat (cycles, shared blocks).
 * Start it zeroed; blk must not be 0.
 */
struct map_blkset {
	uint64_t *slots;
	size_t cap, count;
};

/* Add blk: 0 when it is new, 1 when it was there already, EXT4FS_E_NO_MEMORY. */
int ext4fs__map_blkset_add(struct map_blkset *s, uint64_t blk);

/* Free the set's memory; it is empty (and reusable) after. */
void ext4fs__map_blkset_free(struct map_blkset *s);

#endif
