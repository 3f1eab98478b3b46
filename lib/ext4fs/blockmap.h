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

/* -- Changing the map (extent trees and indirect maps alike) ------------
 *
 * These work on a writable handle.  They update *inode (i_block, i_blocks,
 * flags) and write it before returning, also on failure when it changed;
 * i_size is the caller's business.  Mapping blocks (extent tree nodes,
 * indirect blocks) are allocated near the data and freed as needed,
 * checksummed with metadata_csum, and counted in i_blocks like the data.
 * Extents merge with their neighbours up to 32768 blocks (32767
 * unwritten; written and unwritten never merge); a tree grows a level when
 * its root is full and shrinks back when its entries fit in the inode
 * again.  Indirect blocks go right before the data they map, as ext2/3 lay
 * files out, and are freed when left all zero.  Inline-data inodes, fast
 * symlinks and special files have no map: EXT4FS_E_INVALID_ARG.
 */

/*
 * Allocate up to len new blocks for logical blocks lblk.. (which must be
 * unmapped) and map them, in one allocator request: *pblk and *got describe
 * the contiguous run obtained (got may be less than len; call again for the
 * rest).  With an indirect map a request also stops at the end of the
 * indirect block mapping lblk, and includes the indirect blocks it needs.
 * The goal is the block after the data mapped just before lblk, else the
 * allocator's choice for the inode.  alloc_flags are EXT4FS_ALLOC_*
 * (alloc.h); file_blocks is the file's expected final size in blocks (0 =
 * unknown), passed to the allocator's size classes.  unwritten maps them as
 * unwritten extents (fallocate; extent files only, else
 * EXT4FS_E_INVALID_ARG).  Errors: EXT4FS_E_NO_SPACE (also when a tree block
 * is needed and none is left), EXT4FS_E_FILE_TOO_BIG (beyond what the map
 * can address, or i_blocks would overflow), EXT4FS_E_INVALID_ARG (already
 * mapped, len 0), I/O and corruption errors.  On error nothing has changed
 * (a tree may have been split, which maps the same blocks).
 */
int ext4fs_bmap_alloc(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t lblk, uint32_t len, uint64_t file_blocks, unsigned alloc_flags,
		      int unwritten, uint64_t *pblk, uint32_t *got);

/*
 * Map logical blocks lblk..lblk+len-1 to physical pblk.. that the caller
 * already owns (marked in use); they are counted in i_blocks.  The
 * mapping blocks this needs may come from the reserved blocks (the data is
 * the caller's already: a move must not be stranded half way).  Same errors,
 * and EXT4FS_E_INVALID_ARG for blocks outside the file system (or above
 * 2^32 for an indirect map).
 */
int ext4fs_bmap_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		    uint64_t lblk, uint64_t pblk, uint32_t len, int unwritten);

/*
 * Unmap logical blocks [lblk, lblk+len) (len may reach past the end of the
 * map: UINT64_MAX - lblk truncates), freeing the data blocks and any
 * mapping blocks left empty, splitting extents as needed.  Errors: I/O and
 * corruption errors, EXT4FS_E_NO_SPACE when a split needs a tree block and
 * none is left (the reserved blocks may be used).  On failure part of the
 * range may already be a hole; the map stays consistent.
 */
int ext4fs_bmap_unmap(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t lblk, uint64_t len);

/*
 * Mark [lblk, lblk+len) written: unwritten extents there are split into up
 * to three pieces and the written ones merged with written neighbours.
 * Nothing to do for an indirect map.  Errors as ext4fs_bmap_unmap().
 */
int ext4fs_bmap_mark_written(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			     uint64_t lblk, uint64_t len);

/*
 * Move mapping block old of inode ino (an extent tree node below the root,
 * or a single, double or triple indirect block) to block new_blk, which the
 * caller already owns (marked in use): old's contents are copied to
 * new_blk (an extent node re-checksummed for ino with metadata_csum) and
 * the first reference to old met walking the map (in i_block, or in the
 * parent tree or indirect block, re-checksummed) then points at new_blk.
 * The map may be damaged: the walk follows only tree nodes with the magic
 * and the depth their parent implies, and searches each block once.
 * old is left as it is and stays in use; i_blocks does not change.  The
 * inode is written when i_block changed.  Errors: EXT4FS_E_READ_ONLY,
 * EXT4FS_E_INVALID_ARG (no map, old not one of its mapping blocks, new_blk
 * outside the file system), EXT4FS_E_NO_MEMORY, I/O errors.  Nothing is
 * kept past the call; the caller owns inode.
 */
int ext4fs_bmap_move_map_block(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint64_t old,
			       uint64_t new_blk);

#ifdef __cplusplus
}
#endif
#endif
