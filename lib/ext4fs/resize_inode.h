/*
 * resize_inode.h - the resize inode (inode 7, COMPAT_RESIZE_INODE): the map
 * that reserves room for the group descriptor table to grow.
 *
 * Layer 4 (edit).  Only i_block[EXT4FS_DIND_BLOCK] is set.  Its double-
 * indirect block holds, at slot (desc_blocks + k) % (block_size / 4), the
 * number of the k-th primary reserved descriptor block, which follows the
 * primary descriptor table; that block, read as an indirect block, lists
 * the same reserved block in each backup group (the groups with a
 * superblock copy, in order), at the same offset from the group's first
 * block.  So the reserved blocks and their copies are the inode's
 * "data", the double-indirect block its only block of its own.  This is
 * the layout mke2fs and the kernel's online resize use.
 *
 * The fill functions work on a caller's buffer of block_size bytes and
 * never fail.
 */
#ifndef EXT4FS_RESIZE_INODE_H
#define EXT4FS_RESIZE_INODE_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The k-th primary reserved descriptor block (k < s_reserved_gdt_blocks).  Cannot fail. */
uint64_t ext4fs_resize_reserved_block(const struct ext4fs_fs *fs, uint32_t k);

/* The double-indirect block's contents, into buf.  Cannot fail. */
void ext4fs_resize_dind_fill(const struct ext4fs_fs *fs, void *buf);

/* The k-th primary reserved block's list of its copies, into buf.  Cannot fail. */
void ext4fs_resize_ind_fill(const struct ext4fs_fs *fs, uint32_t k, void *buf);

/*
 * Whether *in (the resize inode as read) and the blocks it points at are
 * the layout above, judged as e2fsck 1.47 judges it before pass 1: only
 * i_block[EXT4FS_DIND_BLOCK] set and inside the file system, a link, a
 * regular file's type bit; the double-indirect block names the primary
 * reserved blocks of the first quarter of s_reserved_gdt_blocks (e2fsck
 * looks no further), and each of those lists its copies.  Returns 1 when
 * it is, 0 when not (a block that cannot be read counts as not), or
 * EXT4FS_E_NO_MEMORY.  Reads only.
 */
int ext4fs_resize_inode_valid(struct ext4fs_fs *fs, const struct ext4fs_inode *in);

/*
 * Write a fresh resize inode whose double-indirect block is dind, which
 * the caller has taken (marked in use): the double-indirect block, the
 * primary reserved blocks' lists (their copies are not written: they only
 * reserve room) and the inode (a regular file, mode 0600, one link, the
 * size and block count mke2fs gives it, ctime and mtime now).  When the
 * inode already names dind, as e2fsprogs' maker does: its record is kept,
 * the empty slots of dind and of the lists are filled and each counted in
 * i_blocks, mtime (and atime when a slot was filled) set to now.  Writable
 * handle.  Returns 0, EXT4FS_E_INVALID_ARG (no resize_inode feature, or
 * dind outside the file system), EXT4FS_E_RESIZE_CORRUPT (a reused dind
 * names other blocks), EXT4FS_E_NO_MEMORY, or the write's error.
 */
int ext4fs_resize_inode_create(struct ext4fs_fs *fs, uint64_t dind, uint32_t now);

/*
 * Whether a resize inode may be made again around the double-indirect
 * block dind it already has, as e2fsprogs' maker judges it before writing:
 * each reserved GDT block's slot in dind is empty or names that block, and
 * each list of copies a named block holds has only empty slots or the
 * right copies.  Returns 0, EXT4FS_E_RESIZE_CORRUPT (nothing may be
 * written: the block is not the resize inode's), EXT4FS_E_BAD_BLOCK_NUM,
 * EXT4FS_E_NO_MEMORY or a read error.  Reads only.
 */
int ext4fs_resize_inode_reusable(struct ext4fs_fs *fs, uint64_t dind);

#ifdef __cplusplus
}
#endif

#endif
