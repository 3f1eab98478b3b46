/*
 * relocate.h - a group's block bitmap, inode bitmap or inode table given a
 * new place when its descriptor puts it outside its group (the file system,
 * with flex_bg), or on blocks other metadata took first: e2fsck's
 * check_super_block location checks, mark_table_blocks conflicts and
 * handle_fs_bad_blocks, in its words and order.
 */
#ifndef E4FSCK_RELOCATE_H
#define E4FSCK_RELOCATE_H

#include <stdint.h>

struct e4fsck;

/*
 * Before pass 1, for group g (super.c's descriptor loop): a location
 * outside the group is reported (PR_0_*_NOT_GROUP, after the hint once)
 * and on a yes set to 0; a location of 0 is noted for relocation.  0, or
 * -1 after fsck_fatal() (no memory, a descriptor that cannot be written).
 */
int fsck_check_group_tables(struct e4fsck *ctx, uint32_t g);

/*
 * Pass 1, before its workers: claim group g's inode table, block bitmap
 * and inode bitmap (in e2fsck's order, after the group's superblock and
 * descriptor copies) through claim(ctx, blk, count); a block claimed
 * before is not claimed again but reported (PR_1_*_CONFLICT) and on a yes
 * the table is noted for relocation.  Locations outside the file system
 * are passed over.  0, or -1 when claim() failed or no memory.
 */
int fsck_claim_group_tables(struct e4fsck *ctx, uint32_t g, int (*claim)(struct e4fsck *ctx, uint64_t blk,
									  uint64_t count));

/*
 * e2fsck's warning before pass 1 when group 0 has no inode table: the bad
 * blocks inode cannot be read, and the check goes on (preen stops: -1,
 * ctx->aborted).  0 otherwise.
 */
int fsck_relocate_bad_blocks_warning(struct e4fsck *ctx);

/*
 * Group g's bitmap (bit: EXT4FS_GROUP_BLOCK_BITMAP or _INODE_BITMAP) lies on
 * the bad-blocks list and was answered yes: it is noted for
 * fsck_relocate_tables(), its contents kept for the copy (not with -n).
 * 0, or -1 after fsck_fatal().
 */
int fsck_relocate_listed_bitmap(struct e4fsck *ctx, uint32_t g, unsigned bit);

/*
 * At the end of pass 1: every table noted gets the first free run pass 1
 * left (in its group, or flex group then anywhere with flex_bg), its old
 * contents copied or the blocks zeroed, and its descriptor the new place;
 * a moved inode table restarts the check (RESTART_RELOCATED).  A read-only
 * run says what it would do and writes nothing.  0, or -1 when the check
 * must stop (ctx->fatal set, or fsck_fatal()).
 */
int fsck_relocate_tables(struct e4fsck *ctx);

/* Forget the tables noted (at the end, or when the check stops before pass 1's end).  Cannot fail. */
void fsck_relocate_free(struct e4fsck *ctx);

#endif
