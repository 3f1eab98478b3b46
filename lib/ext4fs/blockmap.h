/*
 * blockmap.h - which blocks a file uses, whatever its mapping (extent tree,
 * indirect block map, inline data).
 *
 * Layer 4.  ext4fs_block_iterate() visits the data runs and the mapping's
 * own metadata blocks in logical order; ext4fs_bmap() maps one logical
 * block.  Indirect maps are checked as they are read: a block number outside
 * the file system is an error naming the inode and the logical block, and a
 * walk visits at most as many blocks as the file system has, so a hostile
 * map that repeats blocks cannot make it run for long.
 */
#ifndef EXT4FS_BLOCKMAP_H
#define EXT4FS_BLOCKMAP_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ext4fs_block_kind {
	EXT4FS_BLOCK_DATA = 0,     /* file data (a run of count blocks) */
	EXT4FS_BLOCK_IND,          /* single indirect block */
	EXT4FS_BLOCK_DIND,         /* double indirect block */
	EXT4FS_BLOCK_TIND,         /* triple indirect block */
	EXT4FS_BLOCK_EXTENT_NODE,  /* extent tree index or leaf block */
};

struct ext4fs_block_visit {
	enum ext4fs_block_kind kind;
	uint64_t pblk;       /* first physical block */
	uint64_t lblk;       /* data: first logical block; metadata: first logical block it maps */
	uint32_t count;      /* data: blocks in the run; metadata: 1 */
	int unwritten;       /* data in an unwritten extent */
};

/* Return 0 to go on, positive to stop early (returned as is), negative for an error. */
typedef int (*ext4fs_block_visit_fn)(const struct ext4fs_block_visit *v, void *arg);

#define EXT4FS_ITER_DATA_ONLY 0x1   /* skip mapping metadata blocks */

/*
 * Visit the blocks of inode ino in logical order; a mapping block is visited
 * before the blocks it maps.  Inline-data inodes and fast symlinks have no
 * blocks to visit.  Errors: EXT4FS_E_IND_CORRUPT, the extent errors of
 * extent.h, read errors, or what fn returned.
 */
int ext4fs_block_iterate(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			 unsigned flags, ext4fs_block_visit_fn fn, void *arg);

/*
 * Map logical block lblk of inode ino.  *pblk is 0 in a hole; *run is the
 * number of blocks from lblk that are contiguous (or the hole's length), at
 * least 1; *unwritten is set for unwritten extents (may be NULL).
 */
int ext4fs_bmap(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		uint64_t lblk, uint64_t *pblk, uint64_t *run, int *unwritten);

#ifdef __cplusplus
}
#endif
#endif
