/*
 * pass3.c - directory connectivity.  The repairs it makes (/lost+found,
 * reconnecting, moving links) are shared with the other passes (dirs.c).
 *
 * Pass 2 recorded for every directory what its '..' names (dotdot) and
 * which directory's entry named it first (parent).  Pass 3 walks each
 * directory's parents upwards, marking the directories it passes as done,
 * until it meets one already done (the root is done from the start): a
 * directory on the way without a parent is unconnected and is offered to
 * be linked into /lost+found, its '..' then pointing there.  Afterwards
 * '..' must name the parent; if not it is fixed.  As in e2fsck, a cycle of
 * directories that names no directory outside it is not noticed (each walk
 * stops at the first directory already done).
 *
 * The root comes first, as in e2fsck's check_root(): a root still in use
 * that is not a directory (pass 1's "Clear?" answered no) stops the check;
 * a root not in use (cleared in pass 1, or without links) is offered to be
 * made anew: inode 2 with '.' and '..' naming itself, on the lowest block
 * no inode claims (the old root's, usually, which e2fsck takes too).  The
 * old root's subdirectories then have no parent and come back through
 * /lost+found like any unconnected directory.
 *
 * Link counts move with every repair, on disk and in the maps, the way
 * e2fsck moves them: reconnecting a file adds one to its i_links_count as
 * well as to the entries counted, so pass 4 may then report the count on
 * disk one too high and fix it, as e2fsck does.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/fsops.h"
#include "ext4fs/super.h"
#include "dirs.h"
#include "context.h"
#include "passes.h"
#include "guard.h"
#include "indirect.h"
#include "problem.h"
#include "progress.h"
#include "problems_dirs.h"
#include "rehash.h"

/* -- The root ------------------------------------------------------------------------ */

/*
 * e2fsck sets the new root's bits alone and leaves the counts as they were,
 * for pass 5 to judge: a bit that was clear with counts that agreed is then
 * reported there, and one cleared without its counts (debugfs freei) is
 * not.  A bit already set is no error: the lost root may have left it so.
 */
static int mark_bit_only(struct e4fsck *ctx, uint64_t n, int block)
{
	int err = block ? ext4fs_blocks_mark_used_uncounted(ctx->fs, n, 1)
			: ext4fs_inode_mark_used_uncounted(ctx->fs, (uint32_t)n);

	return err == EXT4FS_E_BLOCK_STATE || err == EXT4FS_E_INODE_STATE ? 0 : err;
}

/*
 * The block kept aside for a new root after pass 1, else the lowest block no
 * inode claims (where e2fsck puts a new root), its bit set.  0 or a library error.
 */
static int root_block(struct e4fsck *ctx, uint64_t *blk)
{
	uint64_t b = fsck_next_free_cluster(ctx, fsck_repair_block_goal(ctx, &ctx->root_repair_block));

	if (b >= ctx->geo->blocks_count)
		return EXT4FS_E_NO_SPACE;
	*blk = b;
	return mark_bit_only(ctx, b, 1);
}

/* The maps learn of the new root: a directory whose '.' and '..' are its two links. */
static int note_root(struct e4fsck *ctx)
{
	bitmap_paged_clear_range(&ctx->inode_reg, EXT4FS_ROOT_INO, 1);
	bitmap_paged_clear_range(&ctx->inode_bad, EXT4FS_ROOT_INO, 1);
	if (bitmap_paged_set_range(&ctx->inode_used, EXT4FS_ROOT_INO, 1) < 0 ||
	    bitmap_paged_set_range(&ctx->inode_dir, EXT4FS_ROOT_INO, 1) < 0 ||
	    fsck_dir_insert(ctx, EXT4FS_ROOT_INO, EXT4FS_ROOT_INO, EXT4FS_ROOT_INO) ||
	    counter_paged_set(&ctx->links_seen, EXT4FS_ROOT_INO, 2) ||
	    counter_paged_set(&ctx->links_disk, EXT4FS_ROOT_INO, 2)) {
		fsck_fatal(ctx, "out of memory while making the root directory");
		return -1;
	}
	ctx->inodes_in_use++;
	return fsck_claim_blocks(ctx, EXT4FS_ROOT_INO);
}

/*
 * Make inode 2 a new, empty root directory.  The record is zeroed first so
 * nothing of the lost root (attributes in the inode) survives.  Inode 2 is
 * reserved, so it is marked in use by number; its bit may still be set.
 */
static int make_root(struct e4fsck *ctx)
{
	struct problem_ctx pc = { 0 };
	struct ext4fs_inode in;
	uint16_t mode = EXT4FS_S_IFDIR | 0755;
	uint64_t blk = 0;
	void *zero = calloc(1, ctx->geo->inode_size);
	int err;

	if (!zero) {
		fsck_fatal(ctx, "out of memory while making the root directory");
		return -1;
	}
	pc.str = "ext4fs_blocks_mark_used_uncounted";
	err = root_block(ctx, &blk);
	if (!err) {
		pc.str = "ext4fs_inode_write_raw";
		err = ext4fs_inode_write_raw(ctx->fs, EXT4FS_ROOT_INO, zero);
	}
	free(zero);
	if (!err) {
		ext4fs_inode_init_new(ctx->fs, EXT4FS_ROOT_INO, mode, 0, 0, &in);
		in.i_links_count = 2;
		pc.str = "ext4fs_dir_init_at";
		err = ext4fs_dir_init_at(ctx->fs, EXT4FS_ROOT_INO, &in, EXT4FS_ROOT_INO, blk);
	}
	if (!err) {
		pc.str = "ext4fs_inode_mark_used_uncounted";
		err = mark_bit_only(ctx, EXT4FS_ROOT_INO, 0);
	}
	if (err) {
		pc.errcode = err;
		fix_problem(ctx, PR_3_CREATE_ROOT_ERROR, &pc);
		return -1;
	}
	ctx->fs_changed = 1;
	return note_root(ctx);
}

/* Whether pass 3 can start from the root, after making one if it is missing.  0 or -1 (reported). */
static int check_root(struct e4fsck *ctx)
{
	if (bitmap_paged_test(&ctx->inode_used, EXT4FS_ROOT_INO)) {
		if (bitmap_paged_test(&ctx->inode_dir, EXT4FS_ROOT_INO) && fsck_dir_info(ctx, EXT4FS_ROOT_INO))
			return 0;
		fix_problem(ctx, PR_3_ROOT_NOT_DIR_ABORT, NULL);
		return -1;
	}
	if (!fix_problem(ctx, PR_3_NO_ROOT_INODE, NULL)) {
		/* Preen stopped at the question: nothing more is said, as e2fsck exits there. */
		if (!ctx->aborted)
			fix_problem(ctx, PR_3_NO_ROOT_INODE_ABORT, NULL);
		return -1;
	}
	return make_root(ctx);
}

/* -- The pass ------------------------------------------------------------------------ */

/*
 * Walk from dir to a directory already done; offer to reconnect where the
 * chain breaks.  *shown is the directory an unconnected one is said to have
 * been in: what its '..' names on disk, else (the entry was cleared in
 * pass 2) whatever was shown last, which after each directory is its
 * parent.  That is e2fsck's problem context carried from one directory to
 * the next; the messages come out the same.
 */
static int check_directory(struct e4fsck *ctx, struct bitmap_paged *done, uint32_t dir, uint32_t *shown)
{
	struct problem_ctx pc = { 0 };
	struct dir_info *di;
	uint32_t ino = dir;

	for (;;) {
		if (bitmap_paged_set_range(done, ino, 1) != 0)
			break;          /* done already (or no memory: stop walking) */
		di = fsck_dir_info(ctx, ino);
		if (!di)
			break;
		if (!di->parent) {
			uint32_t named = 0;
			if (ext4fs_dir_lookup(ctx->fs, ino, "..", 2, &named) == 0)
				*shown = named;
			char *was = fsck_path(ctx, *shown, 0);
			pc.ino = ino;
			pc.dir = *shown;
			pc.path = was;
			int yes = fix_problem(ctx, PR_3_UNCONNECTED_DIR, &pc);
			free(was);
			if (yes && fsck_reconnect(ctx, ino) == 0)
				fsck_fix_dotdot(ctx, ino, ctx->lost_found);
			break;
		}
		ino = di->parent;
	}

	if (ctx->aborted)
		return -1;
	di = fsck_dir_info(ctx, dir);
	if (!di)
		return 0;
	*shown = di->parent;
	if (di->dotdot == di->parent)
		return 0;
	memset(&pc, 0, sizeof(pc));
	pc.ino = dir;
	pc.ino2 = di->dotdot;
	pc.dir = di->parent;
	char *here = fsck_path(ctx, di->parent, dir);
	char *names = fsck_path(ctx, di->dotdot, 0);
	char *should = fsck_path(ctx, di->parent, 0);
	pc.path = here;
	pc.path2 = names;
	pc.path3 = should;
	uint32_t parent = di->parent;
	int yes = fix_problem(ctx, PR_3_BAD_DOT_DOT, &pc);
	free(here);
	free(names);
	free(should);
	if (yes)
		fsck_fix_dotdot(ctx, dir, parent);
	return ctx->aborted ? -1 : 0;
}

/* The first directory after ino in the (growing) list, or NULL. */
static struct dir_info *next_dir(struct e4fsck *ctx, uint32_t ino)
{
	size_t lo = 0, hi = ctx->ndirs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->dirs[mid].ino <= ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ctx->ndirs ? &ctx->dirs[lo] : NULL;
}

int fsck_pass3(struct e4fsck *ctx)
{
	struct bitmap_paged done;
	struct dir_info *di;
	uint32_t cur = 0, shown = 0;
	int rc = 0;

	if (check_root(ctx)) {
		fsck_release_repair_blocks(ctx);
		return -1;
	}
	if (bitmap_paged_init(&done, (uint64_t)ctx->geo->inodes_count + 1, ctx->inode_used.p.page_shift)) {
		fsck_fatal(ctx, "out of memory in pass 3");
		return -1;
	}
	fsck_dir_info(ctx, EXT4FS_ROOT_INO)->parent = EXT4FS_ROOT_INO;
	if (bitmap_paged_set_range(&done, EXT4FS_ROOT_INO, 1) < 0)
		rc = -1;
	while (!rc && (di = next_dir(ctx, cur)) != NULL) {
		cur = di->ino;
		progress_advance(ctx, 1);
		if (bitmap_paged_test(&ctx->inode_dir, cur) && check_directory(ctx, &done, cur, &shown))
			rc = -1;
	}
	if (!rc && !ctx->read_only)
		fsck_lost_found(ctx);
	bitmap_paged_free(&done);
	if (!rc && !ctx->aborted)
		rc = fsck_pass3a(ctx);
	fsck_release_repair_blocks(ctx);
	return rc;
}
