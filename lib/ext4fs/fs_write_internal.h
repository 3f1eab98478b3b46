/*
 * fs_write_internal.h - the write layer of the handle (fs_write.c,
 * fs_open.c), for the library modules above it (not installed).
 *
 * The write layer keeps a writable handle's live bitmaps, group and
 * superblock accounting and dirty flags, and flushes them; it registers a
 * listener on the handle (fs_internal.h) to release them at close.
 */
#ifndef EXT4FS_FS_WRITE_INTERNAL_H
#define EXT4FS_FS_WRITE_INTERNAL_H

#include <stdint.h>
#include "ext4fs/fs.h"

/* Refuse with EXT4FS_E_READ_ONLY (and a message naming what) unless writable. */
int ext4fs__fs_require_rw(struct ext4fs_fs *fs, const char *what);

/*
 * Take on a handle opened with EXT4FS_OPEN_RW: refuse features the write
 * path does not keep up to date and a journal to replay, and set up the
 * group dirty flags.  Errors: EXT4FS_E_UNSUPP_FEATURE,
 * EXT4FS_E_RO_UNSUPP_FEATURE, EXT4FS_E_NEEDS_RECOVERY, EXT4FS_E_NO_MEMORY.
 */
int ext4fs__fs_write_open(struct ext4fs_fs *fs);

/* Update group g's descriptor in memory (counts, flags) and mark it dirty. */
void ext4fs__fs_group_desc_update(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd);

/*
 * Hold frees back (on nonzero) or stop holding them.  While held, marking
 * blocks free only records them: the bitmap, the counts and the allocator
 * keep them in use, so nothing is handed out again before the transaction
 * that freed them commits (the old state may still need them).  Turning
 * holding off does not release what is held.  Cannot fail.
 */
void ext4fs__fs_hold_frees(struct ext4fs_fs *fs, int on);

/*
 * Forget which blocks were taken since the last commit.  While frees are
 * held, every block marked in use is noted as fresh: file data written to
 * a fresh block goes straight to the disk (nothing committed points at it
 * yet), data written over an older block is staged and journalled like
 * metadata, so the committed state never sees part of an overwrite.
 * Cannot fail.
 */
void ext4fs__fs_forget_fresh(struct ext4fs_fs *fs);

/*
 * The last commit is durable (its commit block was flushed): the blocks its
 * frees released may take new data written straight to the disk.  Until
 * then (ext4fs__fs_release_held() notes them), data written through to one
 * of them first flushes the channel below: were a power cut to lose that
 * commit, the old state it undoes still points at those blocks, and their
 * old contents must be there.  Cannot fail.
 */
void ext4fs__fs_frees_durable(struct ext4fs_fs *fs);

/* Blocks held back from being freed (0 when none).  Cannot fail. */
uint64_t ext4fs__fs_held_blocks(const struct ext4fs_fs *fs);

/*
 * Free what is held, range by range, through the normal path (bitmap,
 * counts, the allocator hears of it), calling freed(fs, blk, count, arg)
 * after each range (freed may be NULL).  The held set is empty afterwards
 * unless an error stops it half way.  Errors: those of
 * ext4fs_blocks_mark_free(), or freed's own nonzero return.
 */
int ext4fs__fs_release_held(struct ext4fs_fs *fs,
			    int (*freed)(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, void *arg), void *arg);

#endif
