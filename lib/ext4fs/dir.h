/*
 * dir.h - directories: entry iteration, block checksums, lookup, and
 * changing them (dir_write.c, htree_write.c).
 *
 * Layer 5.  A directory is read block by block in logical order (holes and
 * unwritten extents are skipped; nothing at or past i_size is read).  In an
 * htree directory the index blocks look like blocks of unused space and are
 * walked like the others: the root shows "." and ".." (the latter covering
 * the index) and each interior node shows one empty entry covering the
 * block; such entries carry EXT4FS_DIRENT_DX_ROOT / EXT4FS_DIRENT_DX_NODE.
 * An inline-data directory keeps its parent's inode number in the first 4
 * bytes of i_block, entries in the other 56 bytes and more entries in its
 * "system.data" attribute; "." and ".." are made up for it the way debugfs
 * shows them (rec_len 12, file type 0, EXT4FS_DIRENT_SYNTHETIC).
 *
 * Every entry is checked before it is handed out: rec_len at least 8 and
 * at least 8 + name_len rounded up to 4, a multiple of 4, inside its block
 * (or inline area).  A bad entry fails with EXT4FS_E_DIR_CORRUPT naming the
 * directory, the logical block and the byte offset.  Entry inode numbers
 * are passed on unchecked (ext4fs_inode_read() checks them), except that
 * ext4fs_dir_lookup() refuses to return one beyond s_inodes_count.  Loops
 * are bounded: offsets only grow within a block, and blocks come from the
 * validated block map.
 *
 * With metadata_csum each leaf block ends in a 12-byte fake entry (inode 0,
 * rec_len 12, name_len 0, file type 0xDE) holding crc32c(inode checksum
 * seed, the block before the tail); each htree index block has an 8-byte
 * tail after its `limit' entries holding crc32c(inode checksum seed, the
 * header and `count' entries, the tail's reserved word, four zero bytes).
 * A mismatch, or a block lacking the tail, is EXT4FS_E_DIR_CSUM (leaves)
 * or EXT4FS_E_HTREE_CSUM (index blocks) unless the file system was opened
 * with EXT4FS_OPEN_IGNORE_CSUM.  Inline directories have no checksums of
 * their own (the inode checksum covers them).
 */
#ifndef EXT4FS_DIR_H
#define EXT4FS_DIR_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_NAME_LEN 255

/* Directory entry file types (with the filetype feature). */
#define EXT4FS_FT_UNKNOWN   0
#define EXT4FS_FT_REG_FILE  1
#define EXT4FS_FT_DIR       2
#define EXT4FS_FT_CHRDEV    3
#define EXT4FS_FT_BLKDEV    4
#define EXT4FS_FT_FIFO      5
#define EXT4FS_FT_SOCK      6
#define EXT4FS_FT_SYMLINK   7
#define EXT4FS_FT_DIR_CSUM  0xDE   /* the checksum tail's type byte */

#define EXT4FS_DIRENT_TAIL_SIZE 12

/* struct ext4fs_dirent.flags */
#define EXT4FS_DIRENT_EMPTY      0x001  /* inode 0: unused space in the entry chain */
#define EXT4FS_DIRENT_DELETED    0x002  /* recovered from the slack space of another entry */
#define EXT4FS_DIRENT_CSUM_TAIL  0x004  /* the metadata_csum tail */
#define EXT4FS_DIRENT_SYNTHETIC  0x008  /* "." or ".." made up for an inline directory */
#define EXT4FS_DIRENT_INLINE     0x010  /* in i_block of an inline directory */
#define EXT4FS_DIRENT_INLINE_EA  0x020  /* in the system.data value of an inline directory */
#define EXT4FS_DIRENT_DX_ROOT    0x040  /* in an htree root block */
#define EXT4FS_DIRENT_DX_NODE    0x080  /* the fake entry hiding an htree interior node */

/* One directory entry, as handed to a callback. */
struct ext4fs_dirent {
	uint32_t inode;
	uint32_t rec_len;        /* decoded (64 KiB blocks encode it specially) */
	uint8_t name_len;
	uint8_t file_type;       /* 0 without the filetype feature */
	const char *name;        /* name_len bytes, NUL-terminated */
	uint64_t lblk;           /* logical block of the directory (0 when inline) */
	uint64_t pblk;           /* physical block (0 when inline) */
	uint32_t offset;         /* byte offset in the block, i_block or system.data value */
	unsigned flags;          /* EXT4FS_DIRENT_* */
};

/* Return 0 to go on, a positive value to stop (returned as is), or a negative error. */
typedef int (*ext4fs_dir_iterate_fn)(const struct ext4fs_dirent *d, void *arg);

/* Iteration flags; without any, only entries with a nonzero inode are visited. */
#define EXT4FS_DIR_ITER_EMPTY      0x1  /* also entries whose inode is 0 */
#define EXT4FS_DIR_ITER_DELETED    0x2  /* also deleted entries found in slack space (debugfs ls -d) */
#define EXT4FS_DIR_ITER_CSUM_TAIL  0x4  /* also the checksum tails */
#define EXT4FS_DIR_ITER_VERIFY     0x8  /* verify each block's checksum (metadata_csum) even on a
					  handle opened with EXT4FS_OPEN_IGNORE_CSUM, as e2fsprogs'
					  library reads directory blocks: a checker's paths */

/*
 * Visit the entries of directory ino (decoded record inode) in on-disk
 * order.  With EXT4FS_DIR_ITER_DELETED, the space after each entry's
 * rounded-up length is searched, in 4-byte steps, for a chain of plausible
 * entries that ends exactly where the entry does; those are visited with
 * EXT4FS_DIRENT_DELETED (and, if their inode is 0, only together with
 * EXT4FS_DIR_ITER_EMPTY).  Like debugfs, this also searches the space that
 * the htree index hides behind ".." and the interior nodes' fake entries;
 * what turns up there carries EXT4FS_DIRENT_DX_ROOT / _DX_NODE too, so
 * callers may drop it.  Errors:
 * EXT4FS_E_NOT_DIR, EXT4FS_E_DIR_CORRUPT, EXT4FS_E_DIR_CSUM,
 * EXT4FS_E_HTREE_CSUM, EXT4FS_E_HTREE_CORRUPT, the inline-data and mapping
 * errors, read errors, or what fn returned.
 */
int ext4fs_dir_iterate(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       unsigned flags, ext4fs_dir_iterate_fn fn, void *arg);

/*
 * Visit the entries of one directory block already in memory (size bytes,
 * normally the block size), as ext4fs_dir_iterate() would, without checksum
 * verification.  lblk and pblk are only reported.  dx_flags is 0 for a leaf,
 * EXT4FS_DIRENT_DX_ROOT or EXT4FS_DIRENT_DX_NODE for index blocks (tags the
 * entries).  Same errors as
 * ext4fs_dir_iterate() for the entries.
 */
int ext4fs_dir_block_iterate(struct ext4fs_fs *fs, uint32_t ino, const void *block, uint32_t size,
			     uint64_t lblk, uint64_t pblk, unsigned dx_flags, unsigned flags,
			     ext4fs_dir_iterate_fn fn, void *arg);

/*
 * Read logical block lblk of directory ino into buf (block_size bytes,
 * caller-owned) and store its physical block in *pblk (may be NULL).  No
 * checksum is verified.  Errors: EXT4FS_E_DIR_CORRUPT for a hole or a block
 * at or past i_size, the mapping errors, read errors.
 */
int ext4fs_dir_block_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  uint64_t lblk, void *buf, uint64_t *pblk);

/*
 * What kind of block buf (logical block lblk of directory inode) is:
 * 0 for a leaf, EXT4FS_DIRENT_DX_ROOT or EXT4FS_DIRENT_DX_NODE for htree
 * index blocks (recognised only in directories with EXT4FS_INDEX_FL, by
 * their fake entries and a plausible count/limit).  Cannot fail.
 */
unsigned ext4fs_dir_block_kind(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode,
			       uint64_t lblk, const void *buf);

/* Checksum a leaf block should carry: crc32c over its first len bytes (block size - 12). */
uint32_t ext4fs_dirent_csum(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			    const void *block, uint32_t len);

/*
 * Offset of block's checksum tail (block_size - 12) when it has a well-formed
 * one, else -1.  Cannot fail.
 */
int ext4fs_dirent_tail_offset(const struct ext4fs_fs *fs, const void *block);

/*
 * Verify the checksum of directory block buf (logical block lblk of
 * directory ino): 0 when it matches or the file system has no
 * metadata_csum, else EXT4FS_E_DIR_CSUM (leaf, including a missing tail) or
 * EXT4FS_E_HTREE_CSUM / EXT4FS_E_HTREE_CORRUPT (index block), with the
 * message naming the directory and block.  Checks regardless of
 * EXT4FS_OPEN_IGNORE_CSUM.
 */
int ext4fs_dir_block_csum_verify(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
				 uint64_t lblk, const void *buf);

/*
 * Find name (len bytes, no NUL needed) in directory dir_ino and store its
 * inode number in *ino.  Uses the htree index when the directory has one
 * (falling back to a linear scan if the index is corrupt or its hash cannot
 * be computed); casefolded directories are scanned linearly, an exact match
 * winning over the first name that casefolds alike (utf8fold.h).  Errors: EXT4FS_E_NOT_FOUND,
 * EXT4FS_E_NOT_DIR, EXT4FS_E_DIR_CORRUPT (also for an entry whose inode is
 * beyond s_inodes_count), the checksum errors, read errors.
 */
int ext4fs_dir_lookup(struct ext4fs_fs *fs, uint32_t dir_ino, const char *name, size_t len,
		      uint32_t *ino);

/* The directory-entry file type (EXT4FS_FT_*) for an inode mode; EXT4FS_FT_UNKNOWN for none.  Cannot fail. */
uint8_t ext4fs_file_type_of_mode(uint16_t mode);

/* Decode an on-disk rec_len for a block of block_size bytes. */
uint32_t ext4fs_dirent_rec_len(uint16_t raw, uint32_t block_size);

/* -- Changing directories ----------------------------------------------------
 *
 * These work on a writable handle and a directory whose entries live in
 * blocks; inline-data, encrypted and casefolded directories are refused
 * (EXT4FS_E_INVALID_ARG), as is a directory whose size is not a whole
 * number of blocks (EXT4FS_E_DIR_CORRUPT).  dir_inode is the caller's copy
 * of the directory's inode: it is updated (size, block map, flags, mtime
 * and ctime) and written.  Link counts of the inodes entries name are the
 * caller's business.  Names are 1-255 bytes without '/' or NUL
 * (EXT4FS_E_NAME_TOO_LONG, EXT4FS_E_INVALID_ARG); "." and ".." can only be
 * retargeted.  Blocks are validated and, unless checksums are ignored,
 * verified before they are changed.  A linear directory that outgrows its
 * first block on a dir_index file system becomes an htree; htrees grow to
 * two index levels, three with largedir.  New blocks come from
 * ext4fs_bmap_alloc().  On failure the directory is left valid (an add that
 * fails part-way may have split a leaf or an index block, or indexed the
 * directory, without adding the name).
 */

/*
 * Give new directory inode ino (mode set, no blocks yet, links set by the
 * caller) its first block holding "." and ".." (pointing at parent), set
 * i_size to one block and write the inode.  Errors: EXT4FS_E_NOT_DIR,
 * EXT4FS_E_INVALID_ARG (the inode has a size or inline data, or a bad
 * parent), EXT4FS_E_READ_ONLY, allocation and I/O errors.
 */
int ext4fs_dir_init(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint32_t parent);

/*
 * The same with a block the caller chose and already owns (marked in use,
 * mapped by nothing): e4fsck gives a new root directory the block e2fsck
 * would.  The inode must have no blocks yet.  The block is written before
 * the inode: when writing it fails, *inode's i_size is still 0.  Errors as
 * ext4fs_dir_init(), EXT4FS_E_INVALID_ARG for a block outside the file
 * system, and ext4fs_bmap_set()'s.
 */
int ext4fs_dir_init_at(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint32_t parent,
		       uint64_t pblk);

/*
 * Add name -> ino with file_type (EXT4FS_FT_*, stored only with the
 * filetype feature) to directory dir.  Errors: EXT4FS_E_EXISTS,
 * EXT4FS_E_INVALID_ARG (also ino 0 or beyond the inode count),
 * EXT4FS_E_DIR_FULL (largest index or size reached), EXT4FS_E_NO_SPACE,
 * EXT4FS_E_UNKNOWN_HASH, the corruption, checksum and I/O errors.
 */
int ext4fs_dir_add(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
		   const char *name, size_t len, uint32_t ino, uint8_t file_type);

#define EXT4FS_DIR_ADD_NO_GROW 0x1  /* a linear directory with no room: EXT4FS_E_DIR_NO_SPACE */

/*
 * ext4fs_dir_add() with flags: EXT4FS_DIR_ADD_NO_GROW makes a linear
 * directory whose blocks have no room for the entry fail with
 * EXT4FS_E_DIR_NO_SPACE (nothing changed) instead of gaining a block or an
 * index, so that a checker can ask first (e2fsck's "No room in lost+found
 * directory.  Expand?"); an indexed directory grows as usual.  Errors as
 * ext4fs_dir_add(), and EXT4FS_E_INVALID_ARG for unknown flags.
 */
int ext4fs_dir_add_flags(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
			 const char *name, size_t len, uint32_t ino, uint8_t file_type, unsigned flags);

/*
 * Append one empty leaf block to linear directory dir (i_size grows by a
 * block), as e2fsck expands /lost+found.  Errors: EXT4FS_E_INVALID_ARG (an
 * indexed directory, or as ext4fs_dir_add()), EXT4FS_E_DIR_FULL, allocation
 * and write errors; nothing is changed on failure, except that a block
 * written but not recorded is given back.
 */
int ext4fs_dir_expand(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode);

/*
 * Fill hole lblk of directory dir (a checker's "unallocated block") with
 * block pblk, which the caller already owns (marked in use, mapped by
 * nothing): an empty leaf, or for block 0 "." and ".." (the root as
 * parent); i_size grows to cover it.  The block is written before it is
 * mapped.  Errors: EXT4FS_E_NOT_DIR, EXT4FS_E_INVALID_ARG (a block outside
 * the file system, lblk already mapped), ext4fs_bmap_set()'s, I/O errors.
 */
int ext4fs_dir_fill_hole(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode, uint64_t lblk,
			 uint64_t pblk);

/*
 * Remove name from directory dir; *ino (may be NULL) receives the inode it
 * named.  Its record joins the previous one of its block (or keeps inode 0
 * when first); blocks are never freed.  Errors: EXT4FS_E_NOT_FOUND, as
 * ext4fs_dir_add().
 */
int ext4fs_dir_remove(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
		      const char *name, size_t len, uint32_t *ino);

/*
 * Point the existing entry name of dir at ino with file_type (rename over
 * an existing name; ".." of a moved directory, also in an htree root);
 * *old_ino (may be NULL) receives the inode it named.  A "." or ".." in
 * its place whose inode is 0 (cleared by a checker) counts as existing,
 * naming inode 0.  Those two are stored in the clear, so they may be set
 * in encrypted and casefolded directories too.  Errors as
 * ext4fs_dir_remove().
 */
int ext4fs_dir_set_entry(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
			 const char *name, size_t len, uint32_t ino, uint8_t file_type,
			 uint32_t *old_ino);

/*
 * *empty = 1 when directory dir has no live entries besides "." and ".."
 * (any directory, inline ones included; works read-only).  Errors: as
 * ext4fs_dir_iterate().
 */
int ext4fs_dir_is_empty(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *dir_inode,
			int *empty);

/* -- Rebuilding a directory whole (dir_rebuild.c) ---------------------------- */

/* One entry of a rebuilt directory. */
struct ext4fs_dir_rebuild_entry {
	const char *name;           /* name_len bytes, no NUL needed; not copied */
	uint8_t name_len;           /* 1-255 */
	uint8_t file_type;          /* EXT4FS_FT_* (stored only with the filetype feature) */
	uint32_t inode;
	uint32_t hash;              /* indexed layout: the name's major hash (see below) */
};

struct ext4fs_dir_rebuild_opts {
	int indexed;                /* build an htree: root at block 0, leaves from block 1 */
	uint32_t parent;            /* indexed: what the root's ".." names */
	unsigned slack_percent;     /* indexed: share of each leaf left free (e2fsck: 20) */
	uint64_t min_blocks;        /* keep at least this many blocks (empty leaves after the entries) */
};

/*
 * Rewrite directory dir so that it holds exactly ents[0..n), in that
 * order, packed into as few leaves as the slack allows (e2fsck's rehash
 * layout, see dir_rebuild.c).  Linear: the caller puts "." and ".." first.
 * Indexed: "." and ".." live in the root and are not in ents; ents must be
 * sorted by hash, each hashed with ext4fs_htree_name_hash() under
 * ext4fs_dx_hash_version_effective(s_def_hash_version, s_flags), which is
 * the version the root records; EXT4FS_INDEX_FL is set, or cleared for the
 * linear layout.  Holes below the new size get blocks, blocks past it are
 * freed; *inode (size, flags, map, i_blocks) is updated and written, times
 * are left alone.  *nblocks (may be NULL) receives the new size in blocks.
 * Errors: EXT4FS_E_READ_ONLY, EXT4FS_E_INVALID_ARG (not a directory,
 * inline data, a directory both encrypted and casefolded to index, an
 * entry with no name or a bad inode number, slack above 100), EXT4FS_E_DIR_FULL (more leaves than
 * two index levels name, or one without largedir), EXT4FS_E_NO_MEMORY,
 * allocation errors (nothing changed then), mapping and write errors (the
 * directory may then hold old and new blocks mixed).
 */
int ext4fs_dir_rebuild(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
		       const struct ext4fs_dir_rebuild_entry *ents, size_t n,
		       const struct ext4fs_dir_rebuild_opts *opts, uint64_t *nblocks);

/* -- index blocks (htree.h reads them), as far as a directory block's checksum needs -- */

#define EXT4FS_DX_BLOCK_MASK         0x0FFFFFFFU
#define EXT4FS_DX_ROOT_COUNT_OFFSET  0x20
#define EXT4FS_DX_NODE_COUNT_OFFSET  0x08
#define EXT4FS_DX_TAIL_SIZE          8

/*
 * Checksum an index block should carry.  count_offset is
 * EXT4FS_DX_ROOT_COUNT_OFFSET or EXT4FS_DX_NODE_COUNT_OFFSET.  On success
 * *csum_calc is the checksum and *csum the stored one.  Errors:
 * EXT4FS_E_HTREE_CORRUPT when count exceeds limit or no tail fits (nothing
 * recorded on fs: the function is pure).
 */
int ext4fs_dx_block_csum(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			 const void *block, uint32_t count_offset, uint32_t *csum_calc,
			 uint32_t *csum);

#ifdef __cplusplus
}
#endif
#endif
