/*
 * extent_write_internal.h - changing extent trees (extent_write.c), for
 * blockmap_write.c (not installed).
 *
 * The ext4fs__extent_bmap_* calls have the contracts of blockmap_write.c's
 * ext4fs__map_* calls (blockmap_write_internal.h), for an inode already
 * known to carry EXTENTS_FL on a writable handle: they do not write the
 * inode, they set *dirty when they changed *inode.
 */
#ifndef EXT4FS_EXTENT_WRITE_INTERNAL_H
#define EXT4FS_EXTENT_WRITE_INTERNAL_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

int ext4fs__extent_bmap_alloc(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			      uint64_t lblk, uint32_t len, uint64_t file_blocks, unsigned alloc_flags,
			      int unwritten, uint64_t *pblk, uint32_t *got, int *dirty);
int ext4fs__extent_bmap_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			    uint64_t lblk, uint64_t pblk, uint32_t len, int unwritten, int *dirty);
int ext4fs__extent_bmap_unmap(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			      uint64_t lblk, uint64_t len, int *dirty);
int ext4fs__extent_bmap_mark_written(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
				     uint64_t lblk, uint64_t len, int *dirty);

#endif
