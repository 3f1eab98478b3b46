/*
 * extent.h - reading extent trees.
 *
 * Layer 4.  An extent tree is validated as it is read: node magic, entry
 * counts against the node's capacity, depth decreasing by exactly one per
 * level (at most EXT4FS_EXTENT_MAX_DEPTH), entries strictly ascending and
 * inside the logical range their parent index gives them, leaf extents not
 * overlapping and inside the file system, and the node checksum with
 * metadata_csum.  Because every child must fit its parent's disjoint range,
 * a block reached twice (a cycle or a shared node) is caught as an ordering
 * error, so walks always end.  Failures name the inode and the node block.
 */
#ifndef EXT4FS_EXTENT_H
#define EXT4FS_EXTENT_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_EXTENT_MAGIC      0xF30A
#define EXT4FS_EXTENT_MAX_DEPTH  5
#define EXT4FS_EXTENT_INIT_MAX_LEN 32768U
#define EXT4FS_EXTENT_UNWRITTEN_MAX_LEN 32767U

/* One entry met during a walk: an index entry or a leaf extent. */
struct ext4fs_extent_visit {
	unsigned level;          /* 0 for the root in the inode */
	unsigned max_level;      /* depth of the tree (root's eh_depth) */
	uint64_t node_block;     /* block holding the node; 0 for the root */
	unsigned entry;          /* 0-based position in the node */
	unsigned entries;        /* eh_entries of the node */
	unsigned max_entries;    /* eh_max of the node */
	int is_leaf;
	uint32_t lblk;           /* first logical block */
	uint64_t range_end;      /* index: exclusive end of the range it covers; leaf: lblk + len */
	uint32_t len;            /* leaf: extent length */
	uint64_t pblk;           /* leaf: first physical block; index: child node block */
	int unwritten;
};

/* Return 0 to go on, a positive value to stop the walk early (returned as is), or a negative error. */
typedef int (*ext4fs_extent_visit_fn)(const struct ext4fs_extent_visit *v, void *arg);

/*
 * Visit every index entry and leaf extent of inode ino's tree in logical
 * order (depth first: an index entry, then its subtree).  Errors:
 * EXT4FS_E_EXTENT_HEADER, EXT4FS_E_EXTENT_CORRUPT, EXT4FS_E_EXTENT_CSUM
 * (strict mode), EXT4FS_E_BAD_BLOCK_NUM, read errors, or what fn returned.
 */
int ext4fs_extent_walk(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       ext4fs_extent_visit_fn fn, void *arg);

/*
 * Find logical block lblk.  On success *pblk is its physical block (0 in a
 * hole), *run the number of blocks from lblk on that stay contiguous (or the
 * hole's length, capped at 2^32 - lblk), *unwritten whether it is an
 * unwritten extent.  Same errors as ext4fs_extent_walk() for the nodes it
 * passes through.
 */
int ext4fs_extent_map(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		      uint32_t lblk, uint64_t *pblk, uint32_t *run, int *unwritten);

/* Checksum seed of inode ino (metadata_csum): crc32c over the number and generation. */
uint32_t ext4fs_inode_csum_seed(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation);

/* -- Single nodes, for checkers and repairs --------------------------------
 *
 * A node is the 60-byte root in i_block or a tree block: a 12-byte header,
 * then 12-byte entries (index entries above the leaves, extents in them),
 * then, in a block with metadata_csum, a crc32c right after eh_max entries.
 * These read and change one node in a caller's buffer without validating
 * it: the caller checks the header against the buffer's size before using
 * an entry index.
 */

struct ext4fs_extent_header {
	uint16_t magic, entries, max, depth;
};

/* One entry as stored: a leaf extent (len decoded, unwritten split off) or an index entry. */
struct ext4fs_extent_entry {
	uint32_t lblk;
	uint64_t pblk;           /* leaf: first data block; index: the child node's block */
	uint32_t len;            /* leaf only: 0..32768 */
	int unwritten;           /* leaf only */
};

/* Decode the header at the start of node. */
void ext4fs_extent_node_header(const void *node, struct ext4fs_extent_header *h);

/* Entries in a node of size bytes: (size - 12) / 12. */
unsigned ext4fs_extent_node_room(size_t size);

/*
 * Whether node (size bytes) starts with a header e2fsprogs accepts: the
 * magic, entries within eh_max, and eh_max no more than fits and at most two
 * below it.  The depth is not judged.
 */
int ext4fs_extent_node_header_ok(const void *node, size_t size);

/* Encode h as node's header. */
void ext4fs_extent_node_set_header(void *node, const struct ext4fs_extent_header *h);

/* Decode entry i (i < ext4fs_extent_node_room(size)) as a leaf extent or an index entry. */
void ext4fs_extent_node_entry(const void *node, unsigned i, int leaf, struct ext4fs_extent_entry *e);

/* Encode entry i; a leaf length above what its kind allows is the caller's error. */
void ext4fs_extent_node_set_entry(void *node, unsigned i, int leaf, const struct ext4fs_extent_entry *e);

/* Remove entry i (i < entries) by moving the later ones down; the count drops by one. */
void ext4fs_extent_node_remove(void *node, unsigned i);

/*
 * Whether tree block node (size bytes) of inode ino (with i_generation
 * generation) carries the right metadata_csum checksum; 1 without
 * metadata_csum or when the checksum would not fit after eh_max entries.
 */
int ext4fs_extent_node_csum_ok(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			       const void *node, size_t size);

/* Store that checksum (nothing to do where ext4fs_extent_node_csum_ok() would say 1 unconditionally). */
void ext4fs_extent_node_csum_set(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				 void *node, size_t size);

#ifdef __cplusplus
}
#endif
#endif
