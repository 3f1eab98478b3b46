/*
 * dirs.c - what passes 1B-4 and 3A share about directories (see dirs.h):
 * path names for messages, the directory list, keeping the maps in step
 * with the library's changes, /lost+found, reconnecting and moving links.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ext4fs/array.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/fsops.h"
#include "ext4fs/super.h"
#include "clusters.h"
#include "context.h"
#include "dirs.h"
#include "guard.h"
#include "indirect.h"
#include "problem.h"
#include "problems_dirs.h"

/* -- Names in messages ------------------------------------------------------- */

void fsck_safe_name(const char *name, size_t len, char *out, size_t size)
{
	size_t o = 0;

	if (!size)
		return;
	for (size_t i = 0; i < len && o + 4 < size; i++) {
		unsigned char c = (unsigned char)name[i];
		/* As e2fsck's safe_print(): byte 128 itself is printed as it is. */
		if (c > 128) {
			out[o++] = 'M';
			out[o++] = '-';
			c = (unsigned char)(c - 128);
		}
		if (c < 32 || c == 127) {
			out[o++] = '^';
			c ^= 0x40;
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
}

static const char *const special_names[] = {
	"<The NULL inode>", "<The bad blocks inode>", "/", "<The user quota inode>",
	"<The group quota inode>", "<The boot loader inode>", "<The undelete directory inode>",
	"<The group descriptor inode>", "<The journal inode>", "<Reserved inode 9>",
	"<Reserved inode 10>",
};

struct name_search {
	uint32_t want;          /* the inode whose name is looked for; 0: none */
	uint32_t dotdot;        /* what '..' names (the last one seen) */
	char *name;             /* found: malloc'd */
	int nomem;
};

static int name_search_entry(const struct ext4fs_dirent *d, void *arg)
{
	struct name_search *s = arg;

	if (d->name_len == 2 && d->name[0] == '.' && d->name[1] == '.')
		s->dotdot = d->inode;
	if (s->want && d->inode == s->want) {
		s->name = malloc((size_t)d->name_len + 1);
		if (!s->name) {
			s->nomem = 1;
			return 1;
		}
		memcpy(s->name, d->name, d->name_len);
		s->name[d->name_len] = '\0';
		return 1;
	}
	return 0;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *str_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/*
 * e2fsck's path walk: read dir, note what its '..' names and the name it
 * gives ino, then the parent's path.  NULL on an error (the caller prints
 * "???") or without memory.
 */
static char *path_walk(struct e4fsck *ctx, uint32_t dir, uint32_t ino, int depth)
{
	struct name_search s = { .want = ino };
	struct ext4fs_inode in;
	char *parent, *ret;
	int err;

	if (dir == ino)
		return strdup(dir == EXT4FS_ROOT_INO ? "/" : ".");
	if (!dir || depth < 0)
		return strdup("...");
	/* As e2fsck's library reads it: a bad checksum is a failed read. */
	if (dir > ctx->geo->inodes_count || ext4fs_inode_read_strict(ctx->fs, dir, &in))
		return NULL;
	if (!EXT4FS_ISDIR(in.i_mode))
		return ino ? str_printf("<%" PRIu32 ">/<%" PRIu32 ">", dir, ino)
			   : str_printf("<%" PRIu32 ">", dir);
	/* ... and a directory block that fails its checksum too. */
	err = ext4fs_dir_iterate(ctx->fs, dir, &in, EXT4FS_DIR_ITER_VERIFY, name_search_entry, &s);
	if (err < 0 || s.nomem) {
		free(s.name);
		return NULL;
	}
	parent = path_walk(ctx, s.dotdot, dir, depth - 1);
	if (!parent || !ino) {
		free(s.name);
		return parent;
	}
	ret = str_printf("%s/%s", parent[1] ? parent : "", s.name ? s.name : "???");
	free(parent);
	free(s.name);
	return ret;
}

char *fsck_path(struct e4fsck *ctx, uint32_t dir, uint32_t ino)
{
	char *raw, *safe;
	size_t len;

	if (!dir && ino < sizeof(special_names) / sizeof(special_names[0]))
		return strdup(special_names[ino]);
	if (dir == ino)
		ino = 0;
	raw = path_walk(ctx, dir, ino, 32);
	if (!raw)
		return strdup("???");
	len = strlen(raw);
	safe = malloc(len * 4 + 1);
	if (safe)
		fsck_safe_name(raw, len, safe, len * 4 + 1);
	free(raw);
	return safe;
}

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
		struct dir_info *grown =
			ext4fs_array_grow(ctx->dirs, &ctx->capdirs, ctx->ndirs + 1, sizeof(*grown), 64);
		if (!grown) {
			fsck_fatal(ctx, "out of memory for the directory list");
			return -1;
		}
		ctx->dirs = grown;
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
		return cluster_mark(&w->ctx->block_found, w->ctx->geo->cluster_ratio, v->pblk, v->count) < 0 ? -ENOMEM
															 : 0;
	if (l->nruns == l->cap) {
		void *grown = ext4fs_array_grow(l->runs, &l->cap, l->nruns + 1, sizeof(*l->runs), 16);
		if (!grown)
			return -ENOMEM;
		l->runs = grown;
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
	if (!err && fsck_inode_has_blocks(ctx->fs, ino, &in))
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
	/* With bigalloc the bitmap's test is by cluster, and a freed cluster is unclaimed whole. */
	for (size_t i = 0; i < l->nruns; i++)
		for (uint64_t b = l->runs[i].blk; b < l->runs[i].blk + l->runs[i].n; b++)
			if (!bitmap_paged_test(&ctx->block_dup, b) && ext4fs_bitmap_test(bmap, b) == 0)
				cluster_unclaim(&ctx->block_found, ctx->geo->cluster_ratio, b, 1);
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

/*
 * Blocks of *l the bitmap already calls free get their bit back, uncounted,
 * so that the library's release can free them: e2fsck frees each block
 * whatever its bit says, its free counts going up by one all the same,
 * which pass 5 then puts right.  0 or a library error.
 */
static int mark_listed_in_use(struct e4fsck *ctx, const struct fsck_block_list *l)
{
	const struct ext4fs_bitmap *bmap;
	int err = ext4fs_fs_block_bitmap(ctx->fs, &bmap);

	for (size_t i = 0; i < l->nruns && !err; i++)
		for (uint64_t b = l->runs[i].blk; b < l->runs[i].blk + l->runs[i].n && !err; b++)
			if (ext4fs_bitmap_test(bmap, b) == 0)
				err = ext4fs_blocks_mark_used_uncounted(ctx->fs, b, 1);
	return err;
}

int fsck_release_inode(struct e4fsck *ctx, uint32_t ino)
{
	struct fsck_block_list l = { 0 };
	struct block_walk w = { .ctx = ctx, .list = &l };
	struct problem_ctx pc = { .ino = ino };
	const struct ext4fs_bitmap *bmap, *imap;
	struct ext4fs_inode in;
	uint64_t acl;
	int err = ext4fs_inode_read(ctx->fs, ino, &in);

	/*
	 * As e2fsck: an inode the bitmap calls free already is released all
	 * the same, its blocks freed and the free inode count raised by one
	 * (pass 5 puts the count right).  Its bit comes back uncounted first,
	 * and its record is written again, in case the mark zeroed it as past
	 * the group's used part of the table.
	 */
	if (!err && (err = ext4fs_fs_inode_bitmap(ctx->fs, &imap)) == 0 && ext4fs_bitmap_test(imap, ino) == 0 &&
	    (err = ext4fs_inode_mark_used_uncounted(ctx->fs, ino)) == 0)
		err = ext4fs_inode_write(ctx->fs, ino, &in);

	if (!err && has_blocks(ctx, &in) && ext4fs_block_iterate(ctx->fs, ino, &in, 0, visit_run, &w) == -ENOMEM)
		err = -ENOMEM;
	acl = err ? 0 : ext4fs_inode_file_acl(ctx->fs, &in);
	if (!err && acl && (!ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR) ||
			    !ext4fs_block_ptr_valid(ctx->fs, acl))) {
		/*
		 * As e2fsck: an attribute block number that names no block, or
		 * any on a file system without attributes, is let go of, nothing
		 * freed.
		 */
		in.i_file_acl_lo = 0;
		in.i_file_acl_high = 0;
		acl = 0;
		err = ext4fs_inode_write(ctx->fs, ino, &in);
	}
	if (!err)
		err = mark_listed_in_use(ctx, &l);
	if (!err)
		err = ext4fs_inode_release(ctx->fs, ino);
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

	if (!err && (in.i_flags & EXT4FS_INLINE_DATA_FL)) {
		/* An inline directory's '..' is the parent's number in i_block's first word. */
		old = ext4fs_blockmap_slot_get(in.i_block, 0);
		ext4fs_blockmap_slot_set(in.i_block, 0, parent);
		err = ext4fs_inode_write(ctx->fs, dir, &in);
	} else if (!err) {
		err = ext4fs_dir_set_entry(ctx->fs, dir, &in, "..", 2, parent, ftype, &old);
	}
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

/* Claim the first block no inode claims for a repair to come; *slot gets it, or 0 when there is none. */
static int reserve_block(struct e4fsck *ctx, uint64_t *slot)
{
	uint64_t b = fsck_next_free_cluster(ctx, ctx->geo->first_data_block);

	*slot = 0;
	if (b >= ctx->geo->blocks_count)
		return 0;
	if (cluster_mark(&ctx->block_found, ctx->geo->cluster_ratio, b, 1) < 0) {
		fsck_fatal(ctx, "out of memory at the end of pass 1");
		return -1;
	}
	*slot = b;
	return 0;
}

int fsck_reserve_repair_blocks(struct e4fsck *ctx)
{
	uint32_t ino;

	ctx->root_repair_block = ctx->lnf_repair_block = 0;
	if (!bitmap_paged_test(&ctx->inode_used, EXT4FS_ROOT_INO) && reserve_block(ctx, &ctx->root_repair_block))
		return -1;
	/* e2fsck asks the directory on disk, whatever pass 1 thought of it: any failure counts as missing. */
	if (ext4fs_dir_lookup(ctx->fs, EXT4FS_ROOT_INO, LOST_FOUND, strlen(LOST_FOUND), &ino) &&
	    reserve_block(ctx, &ctx->lnf_repair_block))
		return -1;
	return 0;
}

uint64_t fsck_repair_block_goal(struct e4fsck *ctx, uint64_t *slot)
{
	uint64_t b = *slot;

	if (!b)
		return ctx->geo->first_data_block;
	cluster_unclaim(&ctx->block_found, ctx->geo->cluster_ratio, b, 1);
	*slot = 0;
	return b;
}

void fsck_release_repair_blocks(struct e4fsck *ctx)
{
	(void)fsck_repair_block_goal(ctx, &ctx->root_repair_block);
	(void)fsck_repair_block_goal(ctx, &ctx->lnf_repair_block);
}

/*
 * No block (no inode) is left for /lost+found: as e2fsck, offer the root
 * directory instead (1: use it), or report the allocation failure in
 * e2fsprogs' words (-1).
 */
static int no_space_for_lost_found(struct e4fsck *ctx, int inode)
{
	struct problem_ctx pc = { 0 };

	if (fix_problem(ctx, PR_3_LPF_NO_SPACE, &pc)) {
		fix_problem(ctx, PR_3_NO_SPACE_TO_RECOVER, &pc);
		return 1;
	}
	if (ctx->aborted)
		return -1;
	pc.errmsg = inode ? "Could not allocate inode in ext2 filesystem" : "Could not allocate block in ext2 filesystem";
	fix_problem(ctx, inode ? PR_3_ERR_LPF_NEW_INODE : PR_3_ERR_LPF_NEW_BLOCK, &pc);
	return -1;
}

/*
 * As e2fsck makes it: the block and the inode are the first ones no inode
 * was found to use (fsck_take_block_counted(), fsck_take_inode()), whatever
 * the bitmaps on disk say of them, so a bitmap that calls everything used
 * does not stop it and a block the bitmap keeps for nothing is reused.
 * Its record is zeroed first, as a new inode is written whole.  0, 1 when
 * there was no room and lost files go to the root directory, or -1.
 */
static int make_lost_found(struct e4fsck *ctx, uint32_t *ino)
{
	struct problem_ctx pc = { 0 };
	struct ext4fs_inode in, root;
	uint64_t blk = 0;
	void *zero = calloc(1, ctx->geo->inode_size);
	int err;

	if (!zero)
		goto nomem;
	pc.str = "fsck_take_block_counted";
	err = fsck_take_block_counted(ctx, fsck_repair_block_goal(ctx, &ctx->lnf_repair_block), &blk);
	if (err == EXT4FS_E_NO_SPACE) {
		free(zero);
		return no_space_for_lost_found(ctx, 0);
	}
	if (!err) {
		pc.str = "fsck_take_inode";
		err = fsck_take_inode(ctx, EXT4FS_ROOT_INO, 1, ino);
		/* As e2fsck: the block taken stays taken; pass 5 gives it back. */
		if (err == EXT4FS_E_NO_FREE_INODES) {
			free(zero);
			return no_space_for_lost_found(ctx, 1);
		}
	}
	if (!err) {
		pc.str = "ext4fs_inode_write_raw";
		err = ext4fs_inode_write_raw(ctx->fs, *ino, zero);
	}
	free(zero);
	if (!err) {
		ext4fs_inode_init_new(ctx->fs, *ino, EXT4FS_S_IFDIR | 0700, 0, 0, &in);
		in.i_links_count = 2;
		pc.str = "ext4fs_dir_init_at";
		err = ext4fs_dir_init_at(ctx->fs, *ino, &in, EXT4FS_ROOT_INO, blk);
		/* The block is written before the inode grows to cover it: e2fsck's words for that write. */
		if (err < 0 && err > -EXT4FS_ERR_BASE && err != -ENOMEM && ext4fs_inode_size(&in) == 0) {
			pc.errmsg = ext4fs_strerror(err);
			fix_problem(ctx, PR_3_ERR_LPF_WRITE_BLOCK, &pc);
			/* Nothing names them: pass 4 has no inode to connect, pass 5 frees both. */
			bitmap_paged_clear_range(&ctx->inode_used, *ino, 1);
			cluster_unclaim(&ctx->block_found, ctx->geo->cluster_ratio, blk, 1);
			return -1;
		}
	}
	if (err == EXT4FS_E_NO_MEMORY || err == -ENOMEM)
		goto nomem;
	if (!err) {
		pc.str = "ext4fs_dir_add";
		err = ext4fs_inode_read(ctx->fs, EXT4FS_ROOT_INO, &root);
	}
	if (!err)
		err = ext4fs_dir_add(ctx->fs, EXT4FS_ROOT_INO, &root, LOST_FOUND, strlen(LOST_FOUND), *ino,
				     EXT4FS_FT_DIR);
	/* The root gains the new directory's '..' on disk, as e2fsck's count adjustment gives it. */
	if (!err)
		err = ext4fs_inode_read(ctx->fs, EXT4FS_ROOT_INO, &root);
	if (!err) {
		root.i_links_count++;
		err = ext4fs_inode_write(ctx->fs, EXT4FS_ROOT_INO, &root);
	}
	if (err) {
		pc.errcode = err;
		fix_problem(ctx, PR_3_CREATE_LPF_ERROR, &pc);
		return -1;
	}
	ctx->fs_changed = 1;
	if (bitmap_paged_set_range(&ctx->inode_dir, *ino, 1) < 0 ||
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

/* The entry /lost+found naming ino goes, and ino loses that link.  0, or -1 after e2fsck's error message. */
static int unlink_lost_found(struct e4fsck *ctx, uint32_t ino)
{
	struct ext4fs_inode root;
	int err = ext4fs_inode_read(ctx->fs, EXT4FS_ROOT_INO, &root);

	if (!err)
		err = ext4fs_dir_remove(ctx->fs, EXT4FS_ROOT_INO, &root, LOST_FOUND, strlen(LOST_FOUND), NULL);
	if (err) {
		struct problem_ctx pc = { .errcode = err, .str = "ext4fs_dir_remove" };
		fix_problem(ctx, PR_3_CREATE_LPF_ERROR, &pc);
		return -1;
	}
	ctx->fs_changed = 1;
	fsck_adjust_links(ctx, ino, -1);
	return 0;
}

uint32_t fsck_lost_found(struct e4fsck *ctx)
{
	struct problem_ctx pc = { 0 };
	uint32_t ino = 0;
	struct ext4fs_inode in;
	int err;

	if (ctx->lost_found)
		return ctx->lost_found;
	err = ext4fs_dir_lookup(ctx->fs, EXT4FS_ROOT_INO, LOST_FOUND, strlen(LOST_FOUND), &ino);
	/*
	 * As e2fsck: an inline-data /lost+found (the kernel could not add
	 * entries to it when it is full) or an encrypted one (entries could not
	 * be named in the clear) is unlinked; being a directory, it is then
	 * unconnected, and the check starts again after this pass to find it.
	 */
	if (!err && !ctx->read_only && ext4fs_inode_read(ctx->fs, ino, &in) == 0 &&
	    (in.i_flags & (EXT4FS_INLINE_DATA_FL | EXT4FS_ENCRYPT_FL))) {
		uint32_t code = (in.i_flags & EXT4FS_INLINE_DATA_FL) ? PR_3_LPF_INLINE_DATA : PR_3_LPF_ENCRYPTED;
		if (!fix_problem(ctx, code, NULL) || unlink_lost_found(ctx, ino))
			return 0;
		if (EXT4FS_ISDIR(in.i_mode))
			ctx->restart = RESTART_LPF;
	} else if (!err && bitmap_paged_test(&ctx->inode_dir, ino)) {
		ctx->lost_found = ino;
		return ino;
	} else if (ctx->read_only) {
		return 0;
	} else if (!err) {
		pc.ino = ino;
		if (!fix_problem(ctx, PR_3_LPF_NOTDIR, &pc) || unlink_lost_found(ctx, ino))
			return 0;
		pc.ino = 0;
	} else if (err != EXT4FS_E_NOT_FOUND) {
		pc.errcode = err;
		fix_problem(ctx, PR_3_ERR_FIND_LPF, &pc);
	}
	if (!fix_problem(ctx, PR_3_NO_LF_DIR, NULL))
		return 0;
	int made = make_lost_found(ctx, &ino);
	/* As e2fsck: the root directory takes the lost files, though the caller hears of no /lost+found. */
	if (made == 1)
		ctx->lost_found = EXT4FS_ROOT_INO;
	if (made)
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
