/*
 * badblocks.h - pass 1's check of the bad-blocks inode's list (inode 1),
 * by e2fsck's rules for it.
 */
#ifndef E4FSCK_BADBLOCKS_H
#define E4FSCK_BADBLOCKS_H

#include <stdint.h>

struct e4fsck;

/*
 * Read the list as e2fsck's library reads it before pass 1 (its data
 * blocks inside the file system) into ctx->bad_list, sorted.  Where the
 * map cannot be walked (an indirect pointer outside the file system, a bad
 * checksum, inline data) the blocks read so far are kept and e2fsck's
 * warning is printed ("... while reading bad blocks inode"); preen mode
 * stops there.  Returns 0, or -1 when the check stops (ctx->aborted in
 * preen mode, ctx->fatal for memory).  The list is freed with the context.
 */
int fsck_bad_list_read(struct e4fsck *ctx);

/*
 * e2fsck's warning when its library could not read the bad-blocks list
 * before pass 1 ("PROG: WHY while reading bad blocks inode", on stdout as
 * e2fsck 1.47 prints it): preen mode stops there (-1, ctx->aborted), other
 * modes go on "hoping for the best" (0).
 */
int fsck_bad_list_unreadable(struct e4fsck *ctx, const char *why);

/*
 * Whether inode ino lies in an inode table block on the list: e2fsck's
 * scan hands such an inode over unread, pass 2 offers to drop entries
 * naming it and pass 4 leaves its count alone.
 */
int fsck_bad_list_holds_inode(const struct e4fsck *ctx, uint32_t ino);

/*
 * Walk the bad-blocks inode's block map before the other inodes, as e2fsck
 * walks it first: asks about numbers outside the file system, map blocks on
 * the metadata or on the list itself, and listed blocks that hold the
 * superblock, descriptors or bitmaps; claims the rest in ctx->block_found
 * (a listed block already claimed by the metadata is not claimed twice).
 * Cleared pointers are written at once.  Called after the metadata was
 * claimed (ctx->fs_meta) and before pass 1's workers start; sets
 * ctx->bad_list_walked when it walked the list, so that the workers leave
 * it alone.  An inode e2fsck finds invalid (a mode, owner, links,
 * attribute block, inline data or extents flag, a bad checksum) is left to
 * the workers' own questions.  When the list names inode 1's own table
 * block, e2fsck's question comes instead: a yes clears inode 1, empties
 * ctx->bad_list and sets ctx->restart (RESTART_BAD_LIST).  Returns 0, or -1 when the check stops:
 * ctx->fatal (the answer was not to continue, or the map cannot be walked)
 * or ctx->aborted (preen mode met a question it does not answer).
 * Allocates nothing that outlives the call.
 */
int fsck_bad_list_check(struct e4fsck *ctx);

/*
 * Before -l, -L or -c change the list: pointers of inode 1 outside the file
 * system are cleared, each with e2fsck's warning.  0, or -1 (ctx->fatal).
 */
int fsck_bad_list_sanitize(struct e4fsck *ctx);

/*
 * Make blocks[0..n) (sorted, no repeats, inside the file system) inode 1's
 * list, as e2fsck's library rewrites it: the old blocks and map blocks are
 * freed, the old map blocks serve again first (else the first free blocks),
 * the listed blocks are marked in use, the size and block count follow the
 * list.  0, or -1 (ctx->fatal: a write failed, no block for a map block,
 * or more blocks than a doubly indirect map holds).
 */
int fsck_bad_list_update(struct e4fsck *ctx, const uint64_t *blocks, size_t n);

#endif
