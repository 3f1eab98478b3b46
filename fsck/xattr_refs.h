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
	uint64_t blk;               /* 0: empty slot */
	uint32_t refs;
	uint32_t first_ino;         /* the lowest inode naming it, for messages */
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

#endif
