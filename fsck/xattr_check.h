/*
 * xattr_check.h - pass 1's check of extended-attribute blocks (xattr_check.c).
 */
#ifndef E4FSCK_XATTR_CHECK_H
#define E4FSCK_XATTR_CHECK_H

#include <stdint.h>

struct e4fsck;

/*
 * e2fsck's check of an attribute block the first time an inode (ino)
 * names it, in inode order: magic, h_blocks, entries that overlap, bad
 * names and values, entry hashes, then the checksum.  Every question is
 * asked here.  Returns 1 when the inode keeps the block (checked once; later
 * inodes naming it are not asked again), 0 when a "Clear" was answered yes
 * (the caller drops the inode's reference), -1 after fsck_fatal().
 */
int xattr_block_check(struct e4fsck *ctx, uint32_t ino, uint64_t blk);

/* Compare each xattr block's reference count with its owners (ctx->xattrs); 0 or -1. */
int xattr_refcounts_check(struct e4fsck *ctx);

#endif
