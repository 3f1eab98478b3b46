/*
 * blockmap_write_internal.h - what the map-changing modules share (not installed).
 *
 * blockmap_write.c implements the map changes of blockmap.h: it checks the
 * inode, handles indirect maps itself and hands extent trees to
 * extent_write.c; file_write.c builds the file operations on top.
 *
 * The map_* calls have the contracts of the public ext4fs_bmap_* calls
 * except that they do not write the inode: they set *dirty when they
 * changed *inode, and the caller writes it (once, however many map changes
 * an operation makes).  blockmap_write.c hands extent trees to the
 * ext4fs__extent_bmap_* calls of extent_write_internal.h.
 */
#ifndef EXT4FS_BLOCKMAP_WRITE_INTERNAL_H
#define EXT4FS_BLOCKMAP_WRITE_INTERNAL_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

/* How an inode's blocks are mapped. */
enum map_kind {
	MAP_NONE,       /* no blocks: inline data, fast symlink, device, fifo, socket */
	MAP_EXTENTS,
	MAP_INDIRECT,
};

enum map_kind ext4fs__map_kind_of(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode);

/* Logical blocks the inode's map can address: 2^32 for extents, 12 + n + n^2 + n^3 (at most
 * 2^32) for indirect maps of n entries per block, 0 for MAP_NONE. */
uint64_t ext4fs__map_max_blocks(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode);

/*
 * Map logical block lblk, looking at most max (>= 1) blocks ahead: *pblk is
 * 0 in a hole, *run the blocks from lblk that stay in the same state (a
 * hole, or physically contiguous with the same written state), between 1
 * and max.  Unlike ext4fs_bmap(), indirect maps report whole runs too.
 */
int ext4fs__map_run(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode, uint64_t lblk,
		    uint64_t max, uint64_t *pblk, uint64_t *run, int *unwritten);

int ext4fs__map_alloc(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t lblk,
		      uint32_t len, uint64_t file_blocks, unsigned alloc_flags, int unwritten,
		      uint64_t *pblk, uint32_t *got, int *dirty);
int ext4fs__map_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t lblk,
		    uint64_t pblk, uint32_t len, int unwritten, int *dirty);
int ext4fs__map_unmap(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t lblk,
		      uint64_t len, int *dirty);
int ext4fs__map_mark_written(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			     uint64_t lblk, uint64_t len, int *dirty);

#endif
