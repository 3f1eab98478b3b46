/*
 * pass3.c - directory connectivity, and the repairs passes 3 and 4 share
 * (/lost+found, reconnecting, moving links; see dirs.h).
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
#include "indirect.h"
#include "problem.h"
#include "progress.h"
#include "problems_dirs.h"
#include "rehash.h"

#define LOST_FOUND "lost+found"

/* -- Keeping the maps in step ------------------------------------------------------ */

int fsck_dir_insert(struct e4fsck *ctx, uint32_t ino, uint32_t dotdot, uint32_t parent)
{
	size_t lo = 0, hi = ctx->ndirs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->dirs[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ctx->ndirs && ctx->dirs[lo].ino == ino) {
		ctx->dirs[lo].dotdot = dotdot;
		ctx->dirs[lo].parent = parent;
		return 0;
	}
	if (ctx->ndirs == ctx->capdirs) {
		size_t cap = ctx->capdirs ? ctx->capdirs * 2 : 64;
		struct dir_info *grown = realloc(ctx->dirs, cap * sizeof(*grown));
		if (!grown) {
			fsck_fatal(ctx, "out of memory for the directory list");
			return -1;
		}
		ctx->dirs = grown;
		ctx->capdirs = cap;
	}
	memmove(&ctx->dirs[lo + 1], &ctx->dirs[lo], (ctx->ndirs - lo) * sizeof(*ctx->dirs));
	ctx->dirs[lo] = (struct dir_info){ .ino = ino, .dotdot = dotdot, .parent = parent };
	ctx->ndirs++;
	return 0;
}

/* A walk over an inode's blocks: claim them in block_found, or note them in a list. */
struct block_walk {
	struct e4fsck *ctx;
	struct fsck_block_list *list;   /* NULL: claim */
};

static int visit_run(const struct ext4fs_block_visit *v, void *arg)
{
	struct block_walk *w = arg;
	struct fsck_block_list *l = w->list;

	if (!ext4fs_block_range_valid(w->ctx->fs, v->pblk, v->count))
		return 0;
	if (!l)
		return bitmap_paged_set_range(&w->ctx->block_found, v->pblk, v->count) < 0 ? -ENOMEM : 0;
	if (l->nruns == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *grown = realloc(l->runs, cap * sizeof(*l->runs));
		if (!grown)
			return -ENOMEM;
		l->runs = grown;
		l->cap = cap;
	}
	l->runs[l->nruns].blk = v->pblk;
	l->runs[l->nruns].n = v->count;
	l->nruns++;
	return 0;
}

static int walk_blocks(struct e4fsck *ctx, uint32_t ino, struct fsck_block_list *list, const char *why)
{
	struct block_walk w = { .ctx = ctx, .list = list };
	struct ext4fs_inode in;
	int err = ext4fs_inode_read(ctx->fs, ino, &in);

	/* Every block the map names, past pointers outside the file system (pass 1 asked about those). */
	if (!err && fsck_inode_has_blocks(ctx->fs, &in))
		err = fsck_map_walk(ctx->fs, ino, &in, 0, visit_run, &w);
	if (err) {
		fsck_fatal(ctx, "%s while %s the blocks of inode %u: %s", ext4fs_strerror(err), why, ino,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

int fsck_claim_blocks(struct e4fsck *ctx, uint32_t ino)
{
	return walk_blocks(ctx, ino, NULL, "noting");
}

int fsck_block_list_take(struct e4fsck *ctx, uint32_t ino, struct fsck_block_list *l)
{
	return walk_blocks(ctx, ino, l, "listing");
}

/* Blocks of *l the bitmap now calls free are no longer claimed (a block also claimed elsewhere stays). */
static void unclaim_freed(struct e4fsck *ctx, const struct fsck_block_list *l)
{
	const struct ext4fs_bitmap *bmap;

	if (ext4fs_fs_block_bitmap(ctx->fs, &bmap))
		return;
	for (size_t i = 0; i < l->nruns; i++)
		for (uint64_t b = l->runs[i].blk; b < l->runs[i].blk + l->runs[i].n; b++)
			if (!bitmap_paged_test(&ctx->block_dup, b) && ext4fs_bitmap_test(bmap, b) == 0)
				bitmap_paged_clear_range(&ctx->block_found, b, 1);
}

int fsck_block_list_settle(struct e4fsck *ctx, uint32_t ino, const struct fsck_block_list *before)
{
	unclaim_freed(ctx, before);
	return fsck_claim_blocks(ctx, ino);
}

/* Whether the inode's blocks are a map the library releases (as ext4fs_inode_release does). */
static int has_blocks(struct e4fsck *ctx, const struct ext4fs_inode *in)
{
	return !ext4fs_inode_is_fast_symlink(ctx->fs, in) && !ext4fs_inode_has_inline_data(in) &&
	       (EXT4FS_ISREG(in->i_mode) || EXT4FS_ISDIR(in->i_mode) || EXT4FS_ISLNK(in->i_mode));
}

int fsck_release_inode(struct e4fsck *ctx, uint32_t ino)
{
	struct fsck_block_list l = { 0 };
	struct block_walk w = { .ctx = ctx, .list = &l };
	struct problem_ctx pc = { .ino = ino };
	const struct ext4fs_bitmap *bmap;
	struct ext4fs_inode in;
	uint64_t acl;
	int err = ext4fs_inode_read(ctx->fs, ino, &in);

	if (!err && has_blocks(ctx, &in) && ext4fs_block_iterate(ctx->fs, ino, &in, 0, visit_run, &w) == -ENOMEM)
		err = -ENOMEM;
	acl = err ? 0 : ext4fs_inode_file_acl(ctx->fs, &in);
	if (!err)
		err = ext4fs_inode_release(ctx->fs, ino);
	if (err == EXT4FS_E_INODE_STATE) {
		/* The bitmap says free already (pass 5 will agree): just retire the inode. */
		in.i_links_count = 0;
		in.i_dtime = (uint32_t)ctx->now;
		err = ext4fs_inode_write(ctx->fs, ino, &in);
		l.nruns = 0;
		acl = 0;
	}
	if (err) {
		pc.errcode = err;
		fix_problem(ctx, PR_2_DEALLOC_INODE, &pc);
		free(l.runs);
		return -1;
	}
	ctx->fs_changed = 1;
	bitmap_paged_clear_range(&ctx->inode_used, ino, 1);
	bitmap_paged_clear_range(&ctx->inode_dir, ino, 1);
	bitmap_paged_clear_range(&ctx->inode_reg, ino, 1);
	bitmap_paged_clear_range(&ctx->inode_bad, ino, 1);
	counter_paged_set(&ctx->links_disk, ino, 0);
	if (ctx->inodes_in_use)
		ctx->inodes_in_use--;
	unclaim_freed(ctx, &l);
	if (ext4fs_block_ptr_valid(ctx->fs, acl) && !bitmap_paged_test(&ctx->block_dup, acl) &&
	    ext4fs_fs_block_bitmap(ctx->fs, &bmap) == 0 && ext4fs_bitmap_test(bmap, acl) == 0)
		bitmap_paged_clear_range(&ctx->block_found, acl, 1);
	free(l.runs);
	return 0;
}

int fsck_adjust_links(struct e4fsck *ctx, uint32_t ino, int delta)
{
	struct problem_ctx pc = { .ino = ino };
	struct ext4fs_inode in;
	int err;

	if (!ino)
		return 0;
	if (ino > ctx->geo->inodes_count || ext4fs_inode_read(ctx->fs, ino, &in)) {
		fix_problem(ctx, PR_3_ADJUST_INODE, &pc);
		return -1;
	}
	if (delta > 0) {
		if (counter_paged_inc(&ctx->links_seen, ino) < 0)
			goto nomem;
		if (in.i_links_count == UINT16_MAX)
			return 0;
		in.i_links_count++;
	} else {
		uint16_t seen = counter_paged_get(&ctx->links_seen, ino);
		if (seen && counter_paged_set(&ctx->links_seen, ino, (uint16_t)(seen - 1)))
			goto nomem;
		if (in.i_links_count == 0)
			return 0;
		in.i_links_count--;
	}
	if (counter_paged_set(&ctx->links_disk, ino, in.i_links_count))
		goto nomem;
	err = ext4fs_inode_write(ctx->fs, ino, &in);
	if (err) {
		pc.errcode = err;
		fix_problem(ctx, PR_3_ADJUST_INODE, &pc);
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
nomem:
	fsck_fatal(ctx, "out of memory while counting links");
	return -1;
}

int fsck_fix_dotdot(struct e4fsck *ctx, uint32_t dir, uint32_t parent)
{
	struct problem_ctx pc = { .ino = dir };
	struct dir_info *di;
	struct ext4fs_inode in;
	uint32_t old = 0;
	uint8_t ftype = ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_FILETYPE) ? EXT4FS_FT_DIR : 0;
	int err = ext4fs_inode_read(ctx->fs, dir, &in), rc = 0;

	if (!err)
		err = ext4fs_dir_set_entry(ctx->fs, dir, &in, "..", 2, parent, ftype, &old);
	if (err) {
		pc.errcode = err;
		fix_problem(ctx, err == EXT4FS_E_NOT_FOUND ? PR_3_FIX_PARENT_NOFIND : PR_3_FIX_PARENT_ERR, &pc);
		ctx->exit_status |= FSCK_UNCORRECTED;
		rc = -1;
	} else {
		ctx->fs_changed = 1;
		if (fsck_adjust_links(ctx, old, -1) || fsck_adjust_links(ctx, parent, 1))
			rc = -1;
	}
	di = fsck_dir_info(ctx, dir);
	if (di) {
		di->dotdot = parent;
		di->parent = parent;
	}
	return rc;
}

/* -- /lost+found -------------------------------------------------------------------- */

static int make_lost_found(struct e4fsck *ctx, uint32_t *ino)
{
	struct ext4fs_new_attrs attrs = { .mode = EXT4FS_S_IFDIR | 0700 };
	struct problem_ctx pc = { 0 };
	struct ext4fs_inode in;
	int err;

	err = ext4fs_mkdir(ctx->fs, EXT4FS_ROOT_INO, LOST_FOUND, &attrs, ino);
	if (err) {
		pc.errcode = err;
		pc.str = "ext4fs_mkdir";
		fix_problem(ctx, PR_3_CREATE_LPF_ERROR, &pc);
		return -1;
	}
	ctx->fs_changed = 1;
	if (bitmap_paged_test(&ctx->inode_used, *ino))
		fsck_fatal(ctx, "/lost+found was made as inode %u, which is in use: the inode bitmap is wrong",
			   *ino);
	if (bitmap_paged_set_range(&ctx->inode_used, *ino, 1) < 0 ||
	    bitmap_paged_set_range(&ctx->inode_dir, *ino, 1) < 0 ||
	    fsck_dir_insert(ctx, *ino, EXT4FS_ROOT_INO, EXT4FS_ROOT_INO) ||
	    counter_paged_set(&ctx->links_seen, *ino, 2) ||
	    counter_paged_inc(&ctx->links_seen, EXT4FS_ROOT_INO) < 0)
		goto nomem;
	ctx->inodes_in_use++;
	if (ext4fs_inode_read(ctx->fs, *ino, &in) == 0 && counter_paged_set(&ctx->links_disk, *ino, in.i_links_count))
		goto nomem;
	if (ext4fs_inode_read(ctx->fs, EXT4FS_ROOT_INO, &in) == 0 &&
	    counter_paged_set(&ctx->links_disk, EXT4FS_ROOT_INO, in.i_links_count))
		goto nomem;
	if (fsck_claim_blocks(ctx, *ino) || fsck_claim_blocks(ctx, EXT4FS_ROOT_INO))
		return -1;
	return 0;
nomem:
	fsck_fatal(ctx, "out of memory while making /lost+found");
	return -1;
}

uint32_t fsck_lost_found(struct e4fsck *ctx)
{
	struct problem_ctx pc = { 0 };
	uint32_t ino = 0;
	int err;

	if (ctx->lost_found)
		return ctx->lost_found;
	err = ext4fs_dir_lookup(ctx->fs, EXT4FS_ROOT_INO, LOST_FOUND, strlen(LOST_FOUND), &ino);
	if (!err && bitmap_paged_test(&ctx->inode_dir, ino)) {
		ctx->lost_found = ino;
		return ino;
	}
	if (ctx->read_only)
		return 0;
	if (!err) {
		struct ext4fs_inode root;
		pc.ino = ino;
		if (!fix_problem(ctx, PR_3_LPF_NOTDIR, &pc))
			return 0;
		err = ext4fs_inode_read(ctx->fs, EXT4FS_ROOT_INO, &root);
		if (!err)
			err = ext4fs_dir_remove(ctx->fs, EXT4FS_ROOT_INO, &root, LOST_FOUND, strlen(LOST_FOUND),
						NULL);
		if (err) {
			pc.errcode = err;
			pc.str = "ext4fs_dir_remove";
			fix_problem(ctx, PR_3_CREATE_LPF_ERROR, &pc);
			return 0;
		}
		ctx->fs_changed = 1;
		fsck_adjust_links(ctx, ino, -1);
		pc.ino = 0;
	} else if (err != EXT4FS_E_NOT_FOUND) {
		pc.errcode = err;
		fix_problem(ctx, PR_3_ERR_FIND_LPF, &pc);
	}
	if (!fix_problem(ctx, PR_3_NO_LF_DIR, NULL))
		return 0;
	if (make_lost_found(ctx, &ino))
		return 0;
	ctx->lost_found = ino;
	return ino;
}

static uint8_t entry_type(struct e4fsck *ctx, uint32_t ino)
{
	struct ext4fs_inode in;

	if (!ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_FILETYPE))
		return EXT4FS_FT_UNKNOWN;
	if (bitmap_paged_test(&ctx->inode_dir, ino))
		return EXT4FS_FT_DIR;
	if (bitmap_paged_test(&ctx->inode_reg, ino))
		return EXT4FS_FT_REG_FILE;
	if (ext4fs_inode_read(ctx->fs, ino, &in))
		return EXT4FS_FT_UNKNOWN;
	return ext4fs_file_type_of_mode(in.i_mode);
}

int fsck_reconnect(struct e4fsck *ctx, uint32_t ino)
{
	struct problem_ctx pc = { .ino = ino };
	struct ext4fs_inode lf;
	char name[16];
	int err;

	if (!ctx->lost_found && !ctx->lost_found_bad && !fsck_lost_found(ctx))
		ctx->lost_found_bad = 1;
	if (ctx->lost_found_bad) {
		fix_problem(ctx, PR_3_NO_LPF, &pc);
		ctx->exit_status |= FSCK_UNCORRECTED;
		return -1;
	}
	snprintf(name, sizeof(name), "#%" PRIu32, ino);
	err = ext4fs_inode_read(ctx->fs, ctx->lost_found, &lf);
	if (!err)
		err = ext4fs_dir_add_flags(ctx->fs, ctx->lost_found, &lf, name, strlen(name), ino,
					   entry_type(ctx, ino), EXT4FS_DIR_ADD_NO_GROW);
	if (err == EXT4FS_E_DIR_NO_SPACE) {
		/* As e2fsck: a full /lost+found grows by one block, and only when asked. */
		if (!fix_problem(ctx, PR_3_EXPAND_LF_DIR, &pc)) {
			ctx->exit_status |= FSCK_UNCORRECTED;
			return -1;
		}
		err = ext4fs_dir_expand(ctx->fs, ctx->lost_found, &lf);
		if (err) {
			pc.errcode = err;
			fix_problem(ctx, PR_3_CANT_EXPAND_LPF, &pc);
			ctx->exit_status |= FSCK_UNCORRECTED;
			return -1;
		}
		err = ext4fs_dir_add(ctx->fs, ctx->lost_found, &lf, name, strlen(name), ino, entry_type(ctx, ino));
	}
	if (err) {
		pc.errcode = err;
		fix_problem(ctx, PR_3_CANT_RECONNECT, &pc);
		ctx->exit_status |= FSCK_UNCORRECTED;
		return -1;
	}
	ctx->fs_changed = 1;
	if (fsck_claim_blocks(ctx, ctx->lost_found))
		return -1;
	return fsck_adjust_links(ctx, ino, 1);
}

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

/* The lowest block no inode claims (where e2fsck puts a new root), its bit set.  0 or a library error. */
static int root_block(struct e4fsck *ctx, uint64_t *blk)
{
	uint64_t b = bitmap_paged_next_clear(&ctx->block_found, ctx->geo->first_data_block);

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

	if (check_root(ctx))
		return -1;
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
	return rc;
}
