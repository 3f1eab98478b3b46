/*
 * passes.h - the steps of a check, each in a file of its own: the
 * superblock (super.c), the orphans (orphans.c), passes 1-5 (pass1.c ...
 * pass5.c) and what the passes ask of each other.  check.c runs them in
 * e2fsck's order.
 */
#ifndef E4FSCK_PASSES_H
#define E4FSCK_PASSES_H

#include <stdint.h>
#include "context.h"

/* Passes 1B-1D: blocks claimed more than once (pass1b.c).  0, or -1 when the run must stop. */
int fsck_pass1_dups(struct e4fsck *ctx);

/*
 * Whether passes 1B-1D moved at least one of the map blocks pass 1 found
 * on the file system's metadata (ctx->collisions): its inode no longer
 * maps it, or is no longer in use.  1, 0 (every clone declined or failed:
 * a restart would find them all again), or -1 after fsck_fatal().
 */
int fsck_collisions_moved(struct e4fsck *ctx);

/* Passes: each returns 0, or -1 when the run must stop (ctx->exit_status says why). */
int fsck_choose_super(struct e4fsck *ctx);
int fsck_check_super(struct e4fsck *ctx);
int fsck_check_super_times(struct e4fsck *ctx);
/*
 * A revision 0 superblock with feature bits: asked with code (the
 * superblock step's, or pass 1's after it found files that need a
 * feature) and, on a yes, raised to revision 1 as revision 0 reads.
 * 0, or -1 when the run must stop.
 */
int fsck_raise_rev_level(struct e4fsck *ctx, uint32_t code);
/*
 * Files need a feature the superblock lacks (an incompat bit, or a
 * read-only-compatible one when ro_compat): asked with code, set on a yes.
 * 0, or -1 when the run must stop.
 */
int fsck_offer_feature(struct e4fsck *ctx, uint32_t code, int ro_compat, uint32_t bit);
int fsck_check_resize_inode(struct e4fsck *ctx);
int fsck_release_orphans(struct e4fsck *ctx);
/* After pass 5: check the orphan file and write its blocks back empty (orphans.c); 0 or -1. */
int fsck_check_orphan_file(struct e4fsck *ctx);
/* Before pass 1, as e2fsck: a quota file named by a reserved inode's number or one past the last is forgotten (quota.c). */
int fsck_validate_quota_inodes(struct e4fsck *ctx);
/* Then, unless -n: a user or group quota file in a visible inode moves into inode 3 or 4 (quota.c). */
int fsck_hide_quota_inodes(struct e4fsck *ctx);
/* Pass 1: inode ino keeps a wrong i_blocks (a no); its blocks as counted, in bytes, are its quota usage (quota.c). */
int fsck_quota_keep_blocks(struct e4fsck *ctx, uint32_t ino, uint64_t bytes);
/* After pass 5: count quota usage, compare it with the quota files and rewrite them (quota.c); 0 or -1. */
int fsck_check_quota(struct e4fsck *ctx);
/* Whether the first backup superblock's features, size or UUID differ from the primary's (orphans.c). */
int fsck_backup_super_differs(const struct e4fsck *ctx);
int fsck_pass1(struct e4fsck *ctx);
int fsck_pass2(struct e4fsck *ctx);

/*
 * e2fsck's questions about an inode pass 1 found damaged (ctx->inode_bad),
 * in its order: an attribute block without the feature, a wrong kind
 * (mode, device, FIFO, socket, symlink), fields that should be zero.
 * dir names the directory whose entry led here (0 in pass 4, which names
 * none).  A yes to a wrong kind releases the inode: returns 1 then (the
 * caller drops the entry), else 0.  When nothing is left wrong the inode
 * is no longer marked damaged.
 */
int fsck_process_bad_inode(struct e4fsck *ctx, uint32_t dir, uint32_t ino);
int fsck_pass3(struct e4fsck *ctx);
int fsck_pass4(struct e4fsck *ctx);
int fsck_pass5(struct e4fsck *ctx);

#endif
