/*
 * txn.c - journalled mode (see txn.h).
 *
 * Design
 *   The handle's channel is swapped for a staging channel
 *   (io_stage_internal.h): every metadata write lands in memory, reads see
 *   it.  File data (ext4fs_data_write) written to blocks taken since the
 *   last commit passes straight through to the disk (ordered: nothing
 *   committed points there); data written over older blocks is staged and
 *   journalled like metadata, so an overwrite is never half committed.  The write
 *   layer holds frees back (fs_write_internal.h) so a block freed by the
 *   running transaction stays in use until that transaction commits.  The
 *   journal's own blocks are written below the staging channel.
 *
 * Order of writes, and what a crash at each point leaves
 *   start       needs_recovery is set in the primary superblock on disk
 *               (flushed) before anything is staged.  The kernel and e2fsck
 *               replay a journal only when that flag is set, so it must be
 *               on disk before the first transaction is; it stays set while
 *               the handle is journalled.  Crash: an empty journal with the
 *               flag set, which replay just clears.
 *   commit      1. held frees are done (bitmaps and counts change in
 *                  memory), each freed block drops out of the staging area,
 *                  and one that a transaction of the log holds gets a
 *                  revoke record;
 *               2. the bitmaps, descriptors and superblock are flushed into
 *                  the staging area (the primary copies: journalled mode
 *                  leaves the backups alone, as the kernel does);
 *               3. the staged blocks of the transaction go to the log
 *                  (journal_write.c): descriptors, blocks, revokes, the
 *                  journal superblock when the log was empty, a flush that
 *                  also makes file data written since the last commit
 *                  durable (and the previous commit block), the commit
 *                  block.
 *               Crash before the commit block is durable: replay ignores
 *               the transaction, the disk holds the state of the commit
 *               before (home blocks were not touched).  After: replay
 *               writes the transaction whole.  One flush per commit: the
 *               commit block becomes durable with the next flush, so a
 *               power cut may lose the last commit, never order.
 *               Blocks the commit freed may be taken again at once, but
 *               file data written straight to one of them waits for a
 *               flush (fs_write.c): a power cut that lost the commit would
 *               otherwise leave the old state pointing at new bytes.
 *   checkpoint  a flush (the last commit block), the logged blocks go
 *               home (their committed contents, even
 *               when the running transaction changed them since), a flush,
 *               then the journal superblock says empty, a flush.  Crash in
 *               between: replay writes the same blocks again.
 *               A commit checkpoints first when the log lacks room.
 *   stop        commit, checkpoint, needs_recovery cleared on disk, the
 *               channel unwrapped.
 *
 * After a failed commit or checkpoint the handle is marked failed: nothing
 * more is staged or written, and closing it discards what was staged, so
 * the disk stays at the last commit.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/journal.h"
#include "ext4fs/super.h"
#include "ext4fs/txn.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "io_stage_internal.h"
#include "journal_internal.h"

struct txn_state {
	struct ext4fs_journal *j;
	int active;                 /* journalled now */
	int failed;                 /* a commit or checkpoint failed */
	unsigned depth;             /* begin / commit nesting */
	int saved_primary_only;
	uint64_t *revokes;          /* revoke records of the running commit */
	size_t nrevokes, revokes_cap;
	struct ext4fs_txn_stats stats;
};

static void hear_close(struct ext4fs_fs *fs, void *ctx);

static const struct ext4fs__listener_ops listener = { .close = hear_close };

static struct txn_state *state_of(const struct ext4fs_fs *fs)
{
	return ext4fs__fs_listener_ctx(fs, &listener);
}

static int require_active(struct ext4fs_fs *fs, struct txn_state *ts, const char *what)
{
	if (!ts || !ts->active)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "%s: the handle is not in journalled mode", what);
	if (ts->failed)
		return ext4fs__fs_fail(fs, EXT4FS_E_TXN_FAILED, "%s: an earlier commit failed", what);
	return 0;
}

int ext4fs_txn_active(const struct ext4fs_fs *fs)
{
	const struct txn_state *ts = state_of(fs);

	return ts && ts->active;
}

/* Set or clear needs_recovery in the primary superblock on disk, written through and flushed. */
static int write_recover_flag(struct ext4fs_fs *fs, int on)
{
	struct ext4fs_super sb = fs->sb;
	int primary_only = fs->primary_only, err;

	if (on)
		sb.s_feature_incompat |= EXT4FS_FEATURE_INCOMPAT_RECOVER;
	else
		sb.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_RECOVER;
	err = ext4fs_super_set_journal(fs, &sb);
	if (err)
		return err;
	fs->primary_only = 1;
	err = ext4fs_flush(fs);
	fs->primary_only = primary_only;
	return err;
}

int ext4fs_txn_start(struct ext4fs_fs *fs)
{
	struct txn_state *ts = state_of(fs);
	struct ext4fs_io *stage;
	int err = ext4fs__fs_require_rw(fs, "journalled mode");

	if (err)
		return err;
	if (ts && ts->active)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "the handle is already in journalled mode");
	if (!ts) {
		ts = calloc(1, sizeof(*ts));
		if (!ts)
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for journalled mode");
		err = ext4fs__fs_listen(fs, &listener, ts);
		if (err) {
			free(ts);
			return err;
		}
	}
	ts->failed = 0;
	ts->depth = 0;
	/* What changed before journalled mode is the starting state: on disk first. */
	err = ext4fs_flush(fs);
	if (!err)
		err = ext4fs_journal_open(fs, &ts->j);
	if (!err)
		err = ext4fs__journal_writer_start(ts->j, fs->io);
	if (!err)
		err = write_recover_flag(fs, 1);
	if (!err) {
		err = ext4fs__stage_wrap(fs->io, fs->geom.block_size, &stage);
		if (err)
			ext4fs__fs_fail(fs, err, "no memory to stage metadata");
	}
	if (err) {
		ext4fs_journal_close(ts->j);
		ts->j = NULL;
		return err;
	}
	fs->io = stage;
	ts->saved_primary_only = fs->primary_only;
	fs->primary_only = 1;
	ext4fs__fs_hold_frees(fs, 1);
	ts->active = 1;
	return 0;
}

int ext4fs_txn_begin(struct ext4fs_fs *fs)
{
	struct txn_state *ts = state_of(fs);
	int err = require_active(fs, ts, "beginning a transaction");

	if (err)
		return err;
	ts->depth++;
	return 0;
}

/*
 * A freed range: its blocks leave the running transaction; those the log
 * holds get revoke records, and keep their committed contents until this
 * transaction commits, in case a checkpoint comes first.
 */
static int note_freed(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, void *arg)
{
	struct txn_state *ts = arg;

	for (uint64_t b = blk; b < blk + count; b++) {
		if (ext4fs__stage_state(fs->io, b) & EXT4FS__STAGE_LOGGED) {
			if (ts->nrevokes == ts->revokes_cap) {
				uint64_t *n = ext4fs_array_grow(ts->revokes, &ts->revokes_cap, ts->nrevokes + 1,
								sizeof(*n), 64);
				if (!n)
					return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for revoke records");
				ts->revokes = n;
			}
			ts->revokes[ts->nrevokes++] = b;
		}
		if (ext4fs__stage_freed(fs->io, b))
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to stage a freed block");
	}
	return 0;
}

static int fail(struct txn_state *ts, int err)
{
	ts->failed = 1;
	return err;
}

static int checkpoint(struct ext4fs_fs *fs, struct txn_state *ts)
{
	struct ext4fs_io *inner = ext4fs__stage_inner(fs->io);
	size_t before = ext4fs__stage_count(fs->io) - ext4fs__stage_pending(fs->io);
	int err;

	if (ext4fs__journal_ring_used(ts->j) == 0)
		return 0;
	/* The last commit block must be durable before any block goes home. */
	err = ext4fs_io_flush(inner);
	if (err)
		return ext4fs__fs_fail(fs, err, "flushing %s: %s", inner->name, ext4fs_strerror(err));
	ext4fs__fs_frees_durable(fs);
	err = ext4fs__stage_checkpoint(fs->io);
	if (err)
		return ext4fs__fs_fail(fs, err, "writing journalled blocks home: %s", ext4fs_strerror(err));
	err = ext4fs_io_flush(inner);
	if (err)
		return ext4fs__fs_fail(fs, err, "flushing %s: %s", inner->name, ext4fs_strerror(err));
	err = ext4fs__journal_write_empty(ts->j, inner);
	if (err)
		return err;
	ts->stats.checkpoints++;
	ts->stats.blocks_home += before;
	return 0;
}

/* The running transaction's blocks, flushed into the staging area and listed. */
static int commit_now(struct ext4fs_fs *fs, struct txn_state *ts)
{
	struct ext4fs_io *inner = ext4fs__stage_inner(fs->io);
	struct ext4fs__staged *staged = NULL;
	struct ext4fs__jblock *blocks = NULL;
	uint64_t need;
	size_t n = 0;
	int err;

	ts->nrevokes = 0;
	err = ext4fs__fs_release_held(fs, note_freed, ts);
	if (!err)
		err = ext4fs_flush(fs);
	if (!err)
		err = ext4fs__stage_pending_list(fs->io, &staged, &n);
	if (err)
		return err;
	if (n == 0 && ts->nrevokes == 0) {
		free(staged);
		return 0;
	}
	blocks = malloc(n * sizeof(*blocks) + 1);
	if (!blocks) {
		free(staged);
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to commit %zu blocks", n);
	}
	for (size_t i = 0; i < n; i++)
		blocks[i] = (struct ext4fs__jblock){ staged[i].blk, staged[i].data };
	need = ext4fs__journal_txn_blocks(ts->j, n, ts->nrevokes);
	if (need >= ext4fs__journal_ring_blocks(ts->j)) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_FULL,
				      "a transaction of %zu blocks needs %llu journal blocks; the journal has %u",
				      n, (unsigned long long)need, ext4fs__journal_ring_blocks(ts->j) - 1);
	} else {
		if (need + ext4fs__journal_ring_used(ts->j) >= ext4fs__journal_ring_blocks(ts->j))
			err = checkpoint(fs, ts);
		if (!err) {
			int64_t sec;
			uint32_t nsec;
			ext4fs_now(fs, &sec, &nsec);
			err = ext4fs__journal_write_txn(ts->j, inner, blocks, n, ts->revokes, ts->nrevokes, sec, nsec);
		}
	}
	free(blocks);
	free(staged);
	if (err)
		return err;
	ext4fs__stage_committed(fs->io);
	ext4fs__fs_forget_fresh(fs);
	ts->stats.commits++;
	ts->stats.blocks_logged += n;
	ts->stats.log_blocks += need;
	ts->stats.revokes += ts->nrevokes;
	return 0;
}

int ext4fs_txn_commit(struct ext4fs_fs *fs)
{
	struct txn_state *ts = state_of(fs);
	int err = require_active(fs, ts, "committing");

	if (err)
		return err;
	if (ts->depth > 1) {
		ts->depth--;
		return 0;
	}
	ts->depth = 0;
	err = commit_now(fs, ts);
	return err ? fail(ts, err) : 0;
}

int ext4fs_txn_abort(struct ext4fs_fs *fs)
{
	struct txn_state *ts = state_of(fs);

	if (!ts || !ts->active)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "aborting: the handle is not in journalled mode");
	ts->depth = 0;
	fail(ts, 0);
	return 0;
}

int ext4fs_txn_checkpoint(struct ext4fs_fs *fs)
{
	struct txn_state *ts = state_of(fs);
	int err = require_active(fs, ts, "checkpointing");

	if (err)
		return err;
	err = checkpoint(fs, ts);
	return err ? fail(ts, err) : 0;
}

static int stop(struct ext4fs_fs *fs, struct txn_state *ts)
{
	uint64_t logical;
	int err;

	ts->depth = 0;
	err = commit_now(fs, ts);
	if (!err)
		err = checkpoint(fs, ts);
	if (err)
		return fail(ts, err);
	ext4fs__fs_hold_frees(fs, 0);
	ext4fs__fs_forget_fresh(fs);
	/*
	 * "Lifetime writes" counted the staged (logical) bytes so far; the
	 * channel below counted the log, home and data writes.  Move the mark
	 * so what is left to count stays the same.
	 */
	logical = fs->io->stats.bytes_written;
	fs->io = ext4fs__stage_unwrap(fs->io);
	fs->io_written_counted += fs->io->stats.bytes_written - logical;
	fs->primary_only = ts->saved_primary_only;
	ext4fs_journal_close(ts->j);
	ts->j = NULL;
	ts->active = 0;
	return write_recover_flag(fs, 0);
}

int ext4fs_txn_stop(struct ext4fs_fs *fs)
{
	struct txn_state *ts = state_of(fs);
	int err = require_active(fs, ts, "leaving journalled mode");

	return err ? err : stop(fs, ts);
}

int ext4fs_txn_room(struct ext4fs_fs *fs, struct ext4fs_txn_room *room)
{
	struct txn_state *ts = state_of(fs);
	int err = require_active(fs, ts, "measuring the journal");

	if (err)
		return err;
	err = ext4fs_flush(fs);
	if (err)
		return err;
	room->ring_blocks = ext4fs__journal_ring_blocks(ts->j);
	room->ring_used = ext4fs__journal_ring_used(ts->j);
	room->running_blocks = ext4fs__journal_txn_blocks(ts->j, ext4fs__stage_pending(fs->io),
							   ext4fs__fs_held_blocks(fs));
	room->max_blocks = room->ring_blocks - 1;
	room->ring_wrapped = ts->j->tail && ts->j->head < ts->j->tail;
	return 0;
}

void ext4fs_txn_get_stats(const struct ext4fs_fs *fs, struct ext4fs_txn_stats *st)
{
	const struct txn_state *ts = state_of(fs);

	if (ts)
		*st = ts->stats;
	else
		memset(st, 0, sizeof(*st));
}

/*
 * The handle is closing.  A healthy journalled handle stops (its errors
 * cannot be told now); a failed one keeps its staging channel, which the
 * handle closes without writing, so the disk stays at the last commit.
 */
static void hear_close(struct ext4fs_fs *fs, void *ctx)
{
	struct txn_state *ts = ctx;

	if (ts->active && !ts->failed)
		(void)stop(fs, ts);
	if (ts->active && ts->failed) {
		/* The write layer's last flush must not reach the disk either. */
		fs->super_dirty = 0;
		if (fs->group_dirty)
			memset(fs->group_dirty, 0, fs->geom.group_count);
	}
	ext4fs_journal_close(ts->j);
	free(ts->revokes);
	free(ts);
}
