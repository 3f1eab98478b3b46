/*
 * io_stage_internal.h - a staging channel: metadata writes kept in memory
 * until a transaction carries them to the journal and home (internal).
 *
 * Layer 1 (io).  The channel wraps the real one.  A write lands in a
 * block-sized copy held in memory (read first from below when the write
 * covers only part of a block); a read sees those copies over what is on
 * the disk; a flush does nothing, because durability is the business of the
 * transaction that commits the copies.  Nothing reaches the channel below
 * except through the calls here, which the transaction layer (txn.c) makes:
 *
 *   pending   written since the last commit: the running transaction;
 *   logged    committed to the log and not yet written home;
 *   freed     logged, then freed by the running transaction: kept only so
 *             a checkpoint writes its committed contents home.
 *
 * A block can be both: logged by an earlier transaction and changed again
 * since.  The first change after the commit keeps a copy of the committed
 * contents, so a checkpoint in the middle of a transaction writes home
 * what the log holds, never what is not committed yet.
 *
 * File data does not pass through here: ext4fs__stage_write_through()
 * writes to the channel below at once and drops any staged copy of those
 * blocks, so a read returns the data.
 */
#ifndef EXT4FS_IO_STAGE_INTERNAL_H
#define EXT4FS_IO_STAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/io.h"

/* A block to commit: its number and contents (borrowed from the channel). */
struct ext4fs__staged {
	uint64_t blk;
	const unsigned char *data;
};

#define EXT4FS__STAGE_PENDING 0x1
#define EXT4FS__STAGE_LOGGED  0x2
#define EXT4FS__STAGE_FREED   0x4   /* freed by the running transaction: not logged again */

/*
 * Wrap inner (which the new channel owns and closes) in a staging channel
 * of block_size-byte blocks.  The statistics start from inner's.  Errors:
 * EXT4FS_E_INVALID_ARG (block size not a power of two from 1 KiB to
 * 64 KiB), EXT4FS_E_NO_MEMORY; inner is left open on error.
 */
int ext4fs__stage_wrap(struct ext4fs_io *inner, uint32_t block_size, struct ext4fs_io **out);

/* Nonzero when io is a staging channel. */
int ext4fs__stage_is(const struct ext4fs_io *io);

/*
 * Undo ext4fs__stage_wrap(): free the staged copies (whatever their state)
 * and the wrapper, and return the channel below (whose statistics count
 * what really reached it: log, home and data writes).  Cannot fail.
 */
struct ext4fs_io *ext4fs__stage_unwrap(struct ext4fs_io *io);

/* The channel below (borrowed). */
struct ext4fs_io *ext4fs__stage_inner(const struct ext4fs_io *io);

/*
 * Write straight to the channel below (file data): staged copies of blocks
 * the write covers whole are dropped, partly covered ones get the bytes
 * too.  With buf NULL, zeros are written (ext4fs_io_zeroout below).
 * Errors: those of the channel below.
 */
int ext4fs__stage_write_through(struct ext4fs_io *io, uint64_t offset, const void *buf, uint64_t len);

/* EXT4FS__STAGE_* bits of block blk (0 when it is not staged).  Cannot fail. */
unsigned ext4fs__stage_state(const struct ext4fs_io *io, uint64_t blk);

/*
 * Block blk was freed by the running transaction: it is not logged by it.
 * A block the log holds keeps its committed contents until that
 * transaction commits (a checkpoint before then must still write them home:
 * the committed state uses the block) and is dropped then; any other is
 * dropped now.  Errors: EXT4FS_E_NO_MEMORY.
 */
int ext4fs__stage_freed(struct ext4fs_io *io, uint64_t blk);

/* Blocks of the running transaction (pending) and blocks staged in all.  Cannot fail. */
size_t ext4fs__stage_pending(const struct ext4fs_io *io);
size_t ext4fs__stage_count(const struct ext4fs_io *io);

/*
 * The pending blocks in increasing block order: *out is an array of
 * *n entries the caller frees with free(); the contents stay owned by the
 * channel and valid until the next write or staging call.  Errors:
 * EXT4FS_E_NO_MEMORY.
 */
int ext4fs__stage_pending_list(const struct ext4fs_io *io, struct ext4fs__staged **out, size_t *n);

/* The running transaction committed: pending blocks become logged.  Cannot fail. */
void ext4fs__stage_committed(struct ext4fs_io *io);

/*
 * Checkpoint: write every logged block home (its committed contents, in
 * block order, neighbours in one write), then drop those that are not
 * pending and clear the logged state of the rest.  The caller flushes the
 * channel below.  Errors: write errors of the channel below (some blocks
 * may be home then; all stay staged and logged).
 */
int ext4fs__stage_checkpoint(struct ext4fs_io *io);

#endif
