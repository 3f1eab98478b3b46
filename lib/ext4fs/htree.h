/*
 * htree.h - decoding, walking and searching htree directory indexes.
 *
 * Layer 5.  An indexed directory (EXT4FS_INDEX_FL with the dir_index
 * feature) keeps a hash-ordered index in its own blocks.  Block 0 is the
 * root: "." (rec_len 12), ".." (rec_len block_size - 12), an 8-byte
 * dx_root_info (reserved_zero, hash_version, info_length, indirect_levels,
 * unused_flags) and then, at offset 0x20, the dx entries.  Interior nodes
 * start with a fake empty entry covering the block and have their dx
 * entries at offset 0x08.  The first dx entry's hash slot holds `limit' and
 * `count' (le16 each); every entry is (le32 hash, le32 logical block), of
 * which the low 28 bits are the block.  Entry 0 covers hashes below entry 1.
 *
 * Checked as read, failing with EXT4FS_E_HTREE_CORRUPT naming the directory
 * and block: the root's "." and ".." records, reserved_zero == 0,
 * info_length == 8, indirect_levels < 2 (< 3 with largedir), `limit' equal
 * to what fits in the block (less the 8-byte checksum tail with
 * metadata_csum), 1 <= count <= limit, hashes not decreasing, child blocks
 * nonzero and inside the directory, and - during a walk - no block reached
 * twice, so a walk reads each directory block at most once.  Index checksums
 * (see dir.h) fail with EXT4FS_E_HTREE_CSUM in strict mode.
 *
 * Name hashes use the root's hash_version, made unsigned when s_flags says
 * so, and the superblock's s_hash_seed.  In casefolded directories names
 * are hashed in their casefolded form (utf8fold.h), a name that is not
 * valid UTF-8 as its raw bytes, as the kernel does.
 */
#ifndef EXT4FS_HTREE_H
#define EXT4FS_HTREE_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/dir.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* EXT4FS_DX_* (the index blocks' layout) and ext4fs_dx_block_csum() are in dir.h. */

/* One index entry. */
struct ext4fs_dx_entry {
	uint32_t hash;       /* 0 for entry 0 (its slot holds limit/count) */
	uint32_t block;      /* logical block, low 28 bits of the stored value */
	uint32_t block_raw;  /* the stored value */
};

/* The root block's header. */
struct ext4fs_htree_root {
	uint32_t dot_inode;
	uint32_t dotdot_inode;
	uint32_t reserved_zero;
	uint8_t hash_version;       /* as stored */
	uint8_t info_length;
	uint8_t indirect_levels;
	uint8_t unused_flags;
	int hash_version_eff;       /* what names are hashed with (unsigned per s_flags) */
};

/* An index block (the root or an interior node). */
struct ext4fs_htree_node {
	unsigned level;             /* 0 for the root; indirect_levels for the lowest index level */
	uint32_t lblk;
	uint64_t pblk;
	uint16_t limit;
	uint16_t count;
	const struct ext4fs_dx_entry *entries;   /* count entries */
	int has_tail;               /* a dx_tail fits after `limit' entries: csum and csum_calc
				       are meaningful (always with metadata_csum; debugfs says
				       "no space for checksum" when it does not fit) */
	uint32_t csum;              /* stored dt_checksum */
	uint32_t csum_calc;         /* what it should be */
};

/* A leaf block. */
struct ext4fs_htree_leaf {
	uint32_t lblk;
	uint64_t pblk;
	int has_tail;               /* metadata_csum and a well-formed dirent tail */
	uint32_t csum;              /* stored checksum */
	uint32_t csum_calc;         /* what it should be */
};

enum ext4fs_htree_event_type {
	EXT4FS_HTREE_EV_INDEX,      /* an index block was read: node (the root first) */
	EXT4FS_HTREE_EV_CHILD,      /* about to follow node->entries[entry] */
	EXT4FS_HTREE_EV_LEAF,       /* a leaf block was read: leaf */
	EXT4FS_HTREE_EV_DIRENT,     /* an entry of leaf (inode-0 ones included, not the tail) */
	EXT4FS_HTREE_EV_LEAF_END,   /* all entries of leaf were visited */
	EXT4FS_HTREE_EV_INDEX_END,  /* all children of node were visited */
	EXT4FS_HTREE_EV_ERROR,      /* a child failed (EXT4FS_HTREE_WALK_CONTINUE only) */
};

struct ext4fs_htree_event {
	enum ext4fs_htree_event_type type;
	const struct ext4fs_htree_root *root;     /* always */
	const struct ext4fs_htree_node *node;     /* INDEX, CHILD, INDEX_END; the parent otherwise */
	unsigned entry;                           /* CHILD, LEAF*, DIRENT, ERROR: index in node */
	const struct ext4fs_htree_leaf *leaf;     /* LEAF, DIRENT, LEAF_END */
	const struct ext4fs_dirent *dirent;       /* DIRENT */
	uint32_t hash, minor_hash;                /* DIRENT: the name's hashes */
	int hash_err;                             /* DIRENT: nonzero (a code) if they could not be computed */
	int hash_approx;                          /* DIRENT: always 0 (kept for callers; hashes are exact) */
	int err;                                  /* ERROR: the failure (ext4fs_errmsg() describes it) */
	uint32_t err_lblk;                        /* ERROR: the block that failed */
};

/* Return 0 to go on, positive to stop the walk (returned as is), negative for an error. */
typedef int (*ext4fs_htree_fn)(const struct ext4fs_htree_event *ev, void *arg);

#define EXT4FS_HTREE_WALK_CONTINUE 0x1   /* report bad children as EV_ERROR and go on */

/*
 * Walk the index of directory ino depth first in hash order, the way
 * debugfs's htree command prints it: INDEX(root), then for each entry
 * CHILD followed by that child's events (INDEX ... INDEX_END for interior
 * nodes, LEAF, DIRENT..., LEAF_END for leaves), then INDEX_END(root).
 * Without EXT4FS_HTREE_WALK_CONTINUE the first bad child block (corrupt,
 * checksum mismatch in strict mode, unreadable) ends the walk with its
 * error; with it, an EV_ERROR event is sent instead and the walk goes on
 * with the next entry.  A bad root always ends the walk.  Errors:
 * EXT4FS_E_NOT_DIR, EXT4FS_E_HTREE_CORRUPT (also: not an indexed
 * directory), EXT4FS_E_HTREE_CSUM, EXT4FS_E_DIR_CORRUPT, EXT4FS_E_DIR_CSUM,
 * EXT4FS_E_NO_MEMORY, mapping and read errors, or what fn returned.
 */
int ext4fs_htree_walk(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		      unsigned flags, ext4fs_htree_fn fn, void *arg);

/*
 * Decode and check the root block of directory ino (root_block is its
 * block_size bytes).  *entries receives a malloc'd array of node->count
 * entries (caller frees), also pointed to by node->entries.  node->lblk is
 * 0 and node->pblk is left 0.  Errors: EXT4FS_E_HTREE_CORRUPT,
 * EXT4FS_E_HTREE_CSUM (strict mode), EXT4FS_E_NO_MEMORY.
 */
int ext4fs_htree_root_decode(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			     const void *root_block, struct ext4fs_htree_root *root,
			     struct ext4fs_htree_node *node, struct ext4fs_dx_entry **entries);

/*
 * Find name in indexed directory ino through its index: hash the name,
 * descend to the leaf, search it and, while the following leaves continue
 * the same hash, those too.  *found is the entry's inode.  Errors:
 * EXT4FS_E_NOT_FOUND, EXT4FS_E_UNKNOWN_HASH (the hash version cannot be
 * computed here: unknown or siphash), the walk's corruption, checksum and
 * read errors.
 */
int ext4fs_htree_lookup(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			const char *name, size_t len, uint32_t *found);

/*
 * Hashes of name (len bytes) as the index of directory dir_inode files it,
 * with the root's effective hash version; in a casefolded directory the
 * name's casefolded form is hashed (raw bytes if it is not valid UTF-8).
 * *approx is always set to 0 (kept for callers).  The names of directories that are
 * both encrypted and casefolded are filed under hashes stored after them,
 * which ext4fs_htree_walk() reports instead.  Errors: EXT4FS_E_UNKNOWN_HASH,
 * EXT4FS_E_INVALID_ARG (siphash without a seed, len > 255).  Records nothing
 * on fs.
 */
int ext4fs_htree_name_hash(const struct ext4fs_fs *fs, const struct ext4fs_inode *dir_inode,
			   int hash_version_eff, const char *name, size_t len,
			   uint32_t *hash, uint32_t *minor_hash, int *approx);

/*
 * Whether the kernel's readdir returns directory ino's entries in hash
 * order: with dir_index, an indexed directory, a one-block directory and
 * an inline one are read in (major hash, minor hash) order, ties in the
 * order on disk; any other in the order of its blocks.  Returns 1 with
 * *version the effective hash version to hash names with
 * (ext4fs_htree_name_hash()), else 0; an index root that cannot be read
 * gives 0 (disk order), as does a failed allocation.  Records nothing on
 * fs.  Tools that must meet entries as tar or find does (e4defrag -c's
 * ranking, the tree a defragmenter lays out, its seek figures) sort by it.
 */
int ext4fs_htree_readdir_hashed(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode, int *version);

#ifdef __cplusplus
}
#endif
#endif
