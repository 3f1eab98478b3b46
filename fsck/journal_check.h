/*
 * journal_check.h - e2fsck's journal step (before the superblock checks),
 * the backup of the journal inode's map, and a new journal after pass 5.
 */
#ifndef E4FSCK_JOURNAL_CHECK_H
#define E4FSCK_JOURNAL_CHECK_H

struct e4fsck;

/*
 * Check the journal the superblock names and the superblock's journal
 * flags against it, asking e2fsck's questions, and write the answers
 * (ctx->fs may be reopened).  Runs on the handle main opened: read-only
 * with -n, else writable, or for recovery when needs_recovery is set.
 * 0 to go on (needs_recovery then says whether to replay), -1 to stop:
 * the closing lines are printed and ctx->exit_status set, or preen
 * stopped (ctx->aborted), or fsck_fatal() was called.
 */
int fsck_check_journal(struct e4fsck *ctx);

/* "Backing up journal inode block information": s_jnl_blocks made the inode's map.  0 or -1 (fsck_fatal). */
int fsck_backup_journal_map(struct e4fsck *ctx);

/*
 * e2fsck's move of a journal that old tune2fs made as a visible file
 * (/.journal and the like, one link) into the reserved inode 8, after the
 * backup of its map; not with -n.  0, or -1 (fsck_fatal).
 */
int fsck_move_journal(struct e4fsck *ctx);

/*
 * e2fsck's check of s_journal_dev, the hint of where the external journal
 * is, against the device that carries the journal's UUID.  0, or -1 (preen
 * stopped or fsck_fatal()).
 */
int fsck_fix_journal_hint(struct e4fsck *ctx);

/* After pass 5: "Recreate journal" when the journal step removed a bad journal.  0 or -1 (fsck_fatal). */
int fsck_recreate_journal(struct e4fsck *ctx);

#endif
