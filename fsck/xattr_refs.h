/*
 * xattr_refs.h - which inodes name each extended-attribute block (pass 1).
 *
 * Pass 1 workers count references in tables of their own; the tables are
 * merged after the join, and each block's h_refcount is then compared with
 * the number of inodes naming it.
 */
#ifndef E4FSCK_XATTR_REFS_H
#define E4FSCK_XATTR_REFS_H

#include <stddef.h>
#include <stdint.h>

struct xattr_ref {
	int in_use;                 /* the slot holds a key: keys are not told from empty slots by value */
	uint64_t blk;               /* the block (or, for EA inodes, the inode number) */
	uint32_t refs;              /* inodes naming it (less those told to let go of it) */
	uint32_t first_ino;         /* the lowest inode naming it, for messages */
	int checked;                /* its contents were checked and kept */
	uint32_t stated;            /* h_refcount as the check read it */
	uint64_t value_blocks;      /* blocks of its values kept in EA inodes, charged to every inode naming it */
};

/* Open addressing, a power of two in size, at most half full. */
struct xattr_table {
	struct xattr_ref *slots;
	size_t cap, used;
};

/* Count one more inode (ino) naming block blk.  0, or -1 on ENOMEM. */
int xattr_table_add(struct xattr_table *t, uint64_t blk, uint32_t refs, uint32_t ino);

/* Add every entry of src to dst.  0, or -1 on ENOMEM. */
int xattr_table_merge(struct xattr_table *dst, const struct xattr_table *src);

void xattr_table_free(struct xattr_table *t);

/* The entry of block blk, or NULL. */
struct xattr_ref *xattr_table_find(const struct xattr_table *t, uint64_t blk);

#endif
