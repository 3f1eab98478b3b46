/*
 * quota.h - quota files in the kernel's v2 format (QFMT_VFS_V1, "vfsv1"),
 * as the quota feature keeps them in the inodes the superblock names
 * (s_usr_quota_inum, s_grp_quota_inum, s_prj_quota_inum).
 *
 * Layer: edit.  A quota file is a run of 1 KiB blocks.  Block 0 holds an
 * 8-byte header (a magic number per quota type, version 1) and the info
 * (grace periods, flags, the number of blocks, the heads of the free-block
 * and free-entry lists).  Block 1 is the root of a radix tree four levels
 * deep: each tree block holds 256 little-endian 32-bit block numbers,
 * indexed by one byte of the id, most significant first; the last level
 * points at data blocks.  A data block has a 16-byte header and fourteen
 * 72-byte entries (id, limits, usage, grace ends); an all-zero entry is
 * free.  Space is counted in bytes, limits on space in 1 KiB units.
 */
#ifndef EXT4FS_QUOTA_H
#define EXT4FS_QUOTA_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ext4fs_quota_type {
	EXT4FS_QUOTA_USER = 0,
	EXT4FS_QUOTA_GROUP = 1,
	EXT4FS_QUOTA_PROJECT = 2,
};
#define EXT4FS_QUOTA_TYPES 3

/* The grace period the kernel and e2fsprogs give a new quota file: 7 days. */
#define EXT4FS_QUOTA_DEFAULT_GRACE 604800U

/* One id's record. */
struct ext4fs_quota_record {
	uint32_t id;
	uint64_t space;          /* bytes in use */
	uint64_t inodes;         /* inodes in use */
	uint64_t block_hard;     /* limits on space, in 1 KiB units (0: none) */
	uint64_t block_soft;
	uint64_t inode_hard;     /* limits on inodes (0: none) */
	uint64_t inode_soft;
	uint64_t block_grace_end; /* when the soft limit on space turns hard (0: not over it) */
	uint64_t inode_grace_end;
};

/* A whole quota file: the info and the records, sorted by id, ids unique. */
struct ext4fs_quota_file {
	uint32_t block_grace;    /* seconds */
	uint32_t inode_grace;
	uint32_t flags;          /* the info's flags word, kept as read */
	uint32_t magic;          /* the header's magic as read (written: the type's own) */
	struct ext4fs_quota_record *recs;  /* malloc'd */
	size_t count;
};

/* The superblock field naming type's quota inode (0: none, or type unknown).  Cannot fail. */
uint32_t ext4fs_quota_inum(const struct ext4fs_super *sb, enum ext4fs_quota_type type);

/*
 * Read quota file ino of the given type into *out (which the caller frees
 * with ext4fs_quota_file_free(), also after a failure).  The inode's data
 * is read by its map as a regular file's, whatever its mode (as e2fsprogs
 * reads it; judging the mode is a checker's business), a last partial
 * block as if padded with zeros.  Every number is checked before use: the
 * header's version (and, as e2fsprogs, a magic stored big-endian: another
 * magic is not refused, out->magic says what it was), the info's block
 * count against the file's size and the free lists' heads against the
 * block count, each tree reference against both.  A tree block reached
 * twice, an id found twice, a file larger than 128 MiB (2^17 blocks, some
 * 1.8 million ids) are corruption; as e2fsprogs, any block may be read as
 * a data block (once), whatever else it is.  Errors:
 * EXT4FS_E_INODE_CORRUPT (the message names the quota file and what is
 * wrong), EXT4FS_E_INVALID_ARG (unknown type), the errors of
 * ext4fs_inode_read() and ext4fs_file_read(), EXT4FS_E_NO_MEMORY.
 */
int ext4fs_quota_read(struct ext4fs_fs *fs, uint32_t ino, enum ext4fs_quota_type type,
		      struct ext4fs_quota_file *out);

/*
 * Build the bytes of a quota file holding q (records sorted by id, ids
 * unique), laid out as e2fsprogs lays out a file it writes: records
 * inserted in id order, tree and data blocks numbered as needed, one data
 * block filled before the next.  On success *buf is malloc'd (caller frees)
 * and *len a multiple of 1024.  Errors: EXT4FS_E_INVALID_ARG (unknown type,
 * records out of order or repeated), EXT4FS_E_NO_MEMORY.  Needs no handle:
 * it is the writer's half, and unit tests round-trip through it.
 */
int ext4fs_quota_encode(enum ext4fs_quota_type type, const struct ext4fs_quota_file *q, unsigned char **buf,
			size_t *len);

/*
 * Decode the bytes of a quota file (len bytes at buf; a last partial block
 * is not looked at) of the given type, as ext4fs_quota_read() does.  On failure, when why is not NULL, a
 * description (why_len bytes at most, NUL-terminated) says what is wrong.
 * Errors: EXT4FS_E_INODE_CORRUPT, EXT4FS_E_INVALID_ARG, EXT4FS_E_NO_MEMORY.
 * The caller frees *out with ext4fs_quota_file_free(), also after a failure.
 */
int ext4fs_quota_decode(const unsigned char *buf, size_t len, enum ext4fs_quota_type type,
			struct ext4fs_quota_file *out, char *why, size_t why_len);

/*
 * Make inode ino (on a writable handle) a new quota file holding q, laid
 * out as ext4fs_quota_encode() lays it out, as e2fsprogs makes one: the
 * blocks the inode held are freed (walked as a regular file's, whatever its
 * mode), then the inode is written anew (a regular file, mode 0600, one
 * link, immutable, the extents flag on an extent file system, times now,
 * generation 0)
 * and the file's blocks allocated and written.  The inode is not marked in
 * use: a quota file's is already (the reserved inodes 3 and 4 always are).
 * Errors: those of ext4fs_quota_encode(), ext4fs_inode_read(),
 * ext4fs_file_truncate(), ext4fs_inode_write() and ext4fs_file_write().
 */
int ext4fs_quota_write(struct ext4fs_fs *fs, uint32_t ino, enum ext4fs_quota_type type,
		       const struct ext4fs_quota_file *q);

/* Free what a quota file holds and empty it.  Cannot fail; q may be NULL. */
void ext4fs_quota_file_free(struct ext4fs_quota_file *q);

#ifdef __cplusplus
}
#endif
#endif
