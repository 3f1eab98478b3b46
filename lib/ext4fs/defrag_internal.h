/*
 * defrag_internal.h - the sweep's index of who owns which blocks
 * (defrag_index.c), for the defrag modules only.
 *
 * The sweep asks one question again and again: which block owner comes
 * first at or after block b?  And after every move it replaces a few
 * owners.  A sorted array answers the question fast but costs a copy of
 * the whole index per change; this index keeps the owners, sorted by
 * block and never overlapping, in chunks of a few hundred, so a change
 * moves at most a chunk and the list of chunks.
 */
#ifndef EXT4FS_DEFRAG_INTERNAL_H
#define EXT4FS_DEFRAG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"

/* Blocks [pblk, pblk + len) of inode ino. */
struct ext4fs__owner {
	uint64_t pblk;
	uint64_t len;
	uint64_t lblk;       /* data: the logical block of pblk */
	uint32_t ino;
	int map;             /* an extent tree or indirect block (len 1), not data */
};

struct ext4fs__owner_chunk;

struct ext4fs__owner_index {
	struct ext4fs__owner_chunk **chunks;   /* in block order */
	size_t nchunks, cap;
	size_t count;                          /* owners held */
};

/*
 * Fill an empty index with all[0..n) (any order; sorted here, in place).
 * Errors (fs names them): EXT4FS_E_BLOCK_STATE when two owners share a
 * block, EXT4FS_E_NO_MEMORY.  The index is to be freed on error too.
 */
int ext4fs__owners_load(struct ext4fs_fs *fs, struct ext4fs__owner_index *ix, struct ext4fs__owner *all, size_t n);

/*
 * The first owner whose blocks end after blk, or NULL.  The pointer is
 * good until the index next changes.  Cannot fail.
 */
const struct ext4fs__owner *ext4fs__owners_after(const struct ext4fs__owner_index *ix, uint64_t blk);

/*
 * Add e.  Errors: EXT4FS_E_BLOCK_STATE when it overlaps an owner held,
 * EXT4FS_E_NO_MEMORY; the index is unchanged then.
 */
int ext4fs__owners_add(struct ext4fs_fs *fs, struct ext4fs__owner_index *ix, const struct ext4fs__owner *e);

/* Remove the owner equal to e.  EXT4FS_E_BLOCK_STATE when the index holds none (a bug of the caller). */
int ext4fs__owners_remove(struct ext4fs_fs *fs, struct ext4fs__owner_index *ix, const struct ext4fs__owner *e);

/* A growing list of owners, in the order they were gathered. */
struct ext4fs__owners_list {
	struct ext4fs__owner *v;
	size_t n, cap;
};

/*
 * Append inode ino's blocks to *list: its data runs (each physically and
 * logically contiguous stretch one owner) and its mapping blocks (one
 * owner each), in the order its map gives them.  Errors: those of
 * ext4fs_inode_read() and ext4fs_block_iterate(), EXT4FS_E_NO_MEMORY
 * (named through fs).
 */
int ext4fs__owners_gather(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs__owners_list *list);

/* Free the index's memory; it is empty afterwards.  Cannot fail. */
void ext4fs__owners_free(struct ext4fs__owner_index *ix);

/*
 * Every inode with data blocks (regular files, directories, symlinks), in
 * the order of their lowest block: *inos (caller frees) holds *n.  Errors:
 * the inode scanner's and ext4fs_reloc_load()'s, EXT4FS_E_NO_MEMORY.
 */
int ext4fs__defrag_all_inodes(struct ext4fs_fs *fs, uint32_t **inos, size_t *n);

/* qsort() and bsearch() order of uint32_t (the lists of inode numbers kept). */
static inline int ext4fs__cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

#endif
