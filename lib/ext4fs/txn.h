/*
 * txn.h - journalled mode: changes to a file system made atomic through
 * its own jbd2 journal, as the kernel makes them.
 *
 * Layer 7 (services).  A writable handle of a file system with an internal
 * journal can be switched to journalled mode.  From then on every metadata
 * block a call changes (inodes, extent and index blocks, directory and
 * htree blocks, xattr blocks, bitmaps, group descriptors, the superblock,
 * the orphan file) is staged in memory instead of written home.  File data
 * written to newly allocated blocks goes to the disk at once (ordered mode:
 * it is flushed before the transaction that makes it reachable commits);
 * data written over blocks the file already had is journalled with the
 * metadata, so a crash never leaves an overwrite half done.  A commit writes the staged
 * blocks to the journal as one jbd2 transaction; later, a checkpoint writes
 * them home and marks the journal empty.  After a crash the kernel, e2fsck
 * and e4fsck replay every transaction that committed, whole, and nothing of
 * one that did not.
 *
 * Blocks freed while a transaction runs are freed when it commits, so they
 * cannot be reused for data the old state might still point at, and new
 * file data reaches one of them only once that commit is durable; a freed
 * block that an earlier transaction of the log holds gets a revoke record.
 *
 * Without journalled mode the handle writes through, as before (debug4fs,
 * which damages images on purpose, and mke4fs, whose new file system has
 * nothing to lose).  See the design block of txn.c for the order of writes.
 */
#ifndef EXT4FS_TXN_H
#define EXT4FS_TXN_H

#include <stdint.h>
#include "ext4fs/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Switch a handle opened with EXT4FS_OPEN_RW to journalled mode.  What was
 * changed before is flushed (written through) first; then the journal is
 * opened and the superblock's needs_recovery flag set on disk.  Errors:
 * EXT4FS_E_READ_ONLY, EXT4FS_E_NO_JOURNAL (no internal journal),
 * EXT4FS_E_INVALID_ARG (already journalled), the errors of
 * ext4fs_journal_open(), EXT4FS_E_JOURNAL_UNSUPP (journal features we do
 * not write, such as fast commits), EXT4FS_E_JOURNAL_LOG (a log to replay or
 * an aborted journal: check the file system first), flush errors.
 */
int ext4fs_txn_start(struct ext4fs_fs *fs);

/* Nonzero when the handle is in journalled mode. */
int ext4fs_txn_active(const struct ext4fs_fs *fs);

/*
 * Group the calls that follow, up to the matching ext4fs_txn_commit(), into
 * one transaction (begin / commit pairs nest: the outermost commit
 * commits).  Errors: EXT4FS_E_INVALID_ARG (not journalled),
 * EXT4FS_E_TXN_FAILED.
 */
int ext4fs_txn_begin(struct ext4fs_fs *fs);

/*
 * End a group; at the outermost level (or without a begin), commit what
 * changed since the last commit: held frees are done, the handle's
 * bitmaps, descriptors and superblock are flushed into the staging area,
 * and everything staged goes to the journal as one transaction, written
 * when this returns, in order: a crash from then on replays it whole, or,
 * when the disk had not yet made its commit block durable (that takes the
 * flush of the next commit, a checkpoint or ext4fs_txn_stop()), leaves
 * the state of the commit before; never a part of it.  When the log lacks room the transactions
 * before are checkpointed first.  Errors: EXT4FS_E_INVALID_ARG (not
 * journalled), EXT4FS_E_JOURNAL_FULL (the transaction is larger than the
 * whole journal: nothing was written), EXT4FS_E_TXN_FAILED, write and flush
 * errors.  After any error the transaction has not committed (a crash now
 * replays to the state of the last commit) and the handle accepts no
 * more changes: close it; nothing more is written.
 */
int ext4fs_txn_commit(struct ext4fs_fs *fs);

/*
 * Give up the running transaction: a caller that failed half way through a
 * change it cannot undo calls this instead of committing.  The handle is
 * marked failed as after a failed commit: nothing of the running
 * transaction reaches the disk, the disk stays at the last commit (a
 * replay brings it there), and the handle commits nothing more (its calls
 * fail with EXT4FS_E_TXN_FAILED, what is changed meanwhile is discarded at
 * close): close it.  Errors: EXT4FS_E_INVALID_ARG (not journalled).
 */
int ext4fs_txn_abort(struct ext4fs_fs *fs);

/*
 * Write every committed block home, flush, and mark the journal empty.
 * Errors: EXT4FS_E_INVALID_ARG, EXT4FS_E_TXN_FAILED, write and flush
 * errors (then as for ext4fs_txn_commit()).
 */
int ext4fs_txn_checkpoint(struct ext4fs_fs *fs);

/*
 * Commit, checkpoint, clear needs_recovery on disk and return the handle to
 * write-through mode.  Closing a journalled handle does the same, without
 * telling of errors: call this first.  Errors: those of
 * ext4fs_txn_commit() and ext4fs_txn_checkpoint() (the handle stays
 * journalled and refuses changes then).
 */
int ext4fs_txn_stop(struct ext4fs_fs *fs);

/* How full the journal is, in journal blocks. */
struct ext4fs_txn_room {
	uint64_t ring_blocks;     /* the log's ring */
	uint64_t ring_used;       /* held by committed transactions not yet home */
	uint64_t running_blocks;  /* what the running transaction would take if it committed now */
	uint64_t max_blocks;      /* the largest transaction the journal can take */
	int ring_wrapped;         /* the committed log runs past the ring's end and on from its start */
};

/*
 * Fill *room.  Flushes the handle's accounting into the staging area to
 * count it.  A caller about to add a change of n blocks commits first when
 * running_blocks + n (plus its descriptors) would pass max_blocks.  Errors:
 * EXT4FS_E_INVALID_ARG (not journalled), EXT4FS_E_TXN_FAILED, flush errors.
 */
int ext4fs_txn_room(struct ext4fs_fs *fs, struct ext4fs_txn_room *room);

/* What journalled mode did since ext4fs_txn_start() (benchmarks, tests). */
struct ext4fs_txn_stats {
	uint64_t commits;
	uint64_t checkpoints;
	uint64_t blocks_logged;     /* metadata blocks written to the log */
	uint64_t log_blocks;        /* all log blocks: descriptors, revokes, commits too */
	uint64_t blocks_home;       /* metadata blocks written home by checkpoints */
	uint64_t revokes;           /* revoke records written */
};

/* Fill *st (zeros when the handle never was journalled).  Cannot fail. */
void ext4fs_txn_get_stats(const struct ext4fs_fs *fs, struct ext4fs_txn_stats *st);

#ifdef __cplusplus
}
#endif
#endif
