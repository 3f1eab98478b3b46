/*
 * dirs.h - what passes 1B-4 and 3A share (dirs.c): path names for
 * messages, the directory list, /lost+found, and the repairs that move
 * links around.
 *
 * The repairs keep the checker's maps in step with the disk: an inode the
 * library allocates or frees is set or cleared in inode_used / inode_dir /
 * inode_reg, a block it allocates for a directory is set in block_found,
 * and link counts changed on disk are changed in links_disk (and the
 * entries added or removed in links_seen), so that pass 4 and pass 5
 * compare against the file system as it now is.
 */
#ifndef E4FSCK_DIRS_H
#define E4FSCK_DIRS_H

#include <stddef.h>
#include <stdint.h>
#include "context.h"

/* -- Names in messages (dirs.c) --------------------------------------------- */

/*
 * The path of inode ino in directory dir, as e2fsck prints it: "/" for the
 * root, "<The NULL inode>" and the other reserved inodes' names when dir is
 * 0, "dir-path/name" found by reading the directories up to the root
 * ("???" for a name that cannot be found, "..." past 32 levels or for a
 * directory 0, "<12>/<13>" when 12 is not a directory), control
 * characters shown as ^X.  ino 0 (or ino == dir): the path of dir itself.
 * Returns a malloc'd string (caller frees), or NULL without memory.
 */
char *fsck_path(struct e4fsck *ctx, uint32_t dir, uint32_t ino);

/* An entry's name (len bytes, any bytes) as e2fsck prints it, into out (always terminated). */
void fsck_safe_name(const char *name, size_t len, char *out, size_t size);

/* -- The directory list (dirs.c) -------------------------------------------- */

/* Add a directory to ctx->dirs (kept sorted).  0, or -1 without memory (reported). */
int fsck_dir_insert(struct e4fsck *ctx, uint32_t ino, uint32_t dotdot, uint32_t parent);

/*
 * Set in block_found every block inode ino maps, after the library
 * allocated some for it (a new or grown directory).  0 or -1 (reported).
 */
int fsck_claim_blocks(struct e4fsck *ctx, uint32_t ino);

/* The blocks an inode maps, taken before the library changes its map. */
struct fsck_block_list {
	struct { uint64_t blk, n; } *runs;      /* malloc'd; the caller frees */
	size_t nruns, cap;
};

/* Note in *l every block inode ino maps now.  0, or -1 (reported). */
int fsck_block_list_take(struct e4fsck *ctx, uint32_t ino, struct fsck_block_list *l);

/*
 * After the library changed inode ino's map: the blocks of *before that the
 * bitmap now calls free (and no other inode claims twice) leave
 * block_found, and every block ino maps now is claimed.  0, or -1 (reported).
 */
int fsck_block_list_settle(struct e4fsck *ctx, uint32_t ino, const struct fsck_block_list *before);

/*
 * Free inode ino (a cleared damaged or unattached inode): the library
 * releases what it owns; the inode maps forget it.  0, or -1 when the
 * release failed (PR_2_DEALLOC_INODE reported).
 */
int fsck_release_inode(struct e4fsck *ctx, uint32_t ino);

/* -- /lost+found and reconnecting (dirs.c) ---------------------------------- */

/*
 * As e2fsck at the end of pass 1: when the root inode is not in use, or the
 * root (as on disk) has no entry "lost+found", the first block no inode
 * claims is claimed for the repair that will need it (ctx->root_repair_block,
 * ctx->lnf_repair_block), so that pass 2's allocations (a directory's holes)
 * cannot take the last free block from pass 3's.  Nothing is written.
 * 0, or -1 without memory (reported).
 */
int fsck_reserve_repair_blocks(struct e4fsck *ctx);

/*
 * The block *slot keeps aside (0 for none), given back to the unclaimed so
 * that a take from it finds it first; *slot becomes 0.  The goal for the
 * repair's take: the block, or the first data block when none was kept.
 */
uint64_t fsck_repair_block_goal(struct e4fsck *ctx, uint64_t *slot);

/* At the end of pass 3: the blocks still kept aside are unclaimed again. */
void fsck_release_repair_blocks(struct e4fsck *ctx);

/*
 * /lost+found's inode: looked up in the root, offered to be made (or, when
 * it is not a directory, unlinked and made) when missing.  0 when there is
 * none; after a failure or a "no" it is not asked again.
 */
uint32_t fsck_lost_found(struct e4fsck *ctx);

/*
 * Link inode ino into /lost+found as "#ino" and count the new link (in
 * links_seen, and on disk as e2fsck does; pass 4 then corrects i_links_count).
 * 0, or -1 when it could not be reconnected (reported).
 */
int fsck_reconnect(struct e4fsck *ctx, uint32_t ino);

/*
 * Count one entry more (delta 1) or less (-1) naming inode ino: links_seen,
 * and i_links_count on disk with links_disk.  0, or -1 (PR_3_ADJUST_INODE
 * reported).
 */
int fsck_adjust_links(struct e4fsck *ctx, uint32_t ino, int delta);

/*
 * Point directory dir's '..' at parent, moving the link from what it named
 * to parent, and record dotdot and parent in dir's dir_info.  0 or -1
 * (PR_3_FIX_PARENT_* reported).
 */
int fsck_fix_dotdot(struct e4fsck *ctx, uint32_t dir, uint32_t parent);

#endif
