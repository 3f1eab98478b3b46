/*
 * badblocks.c - the bad-blocks inode's list, checked as e2fsck checks it.
 *
 * Inode 1 keeps the list of unreadable blocks in an ordinary block map:
 * its data blocks are the list, its indirect blocks hold the list.  e2fsck
 * walks it before any other inode, when only the file system's own
 * metadata is claimed, and by rules of its own (process_bad_block()):
 *
 *   - a number outside the file system is offered to be cleared (one
 *     question for the inode, "Bad block inode has illegal block(s)");
 *   - a map block on the metadata, or on a block the list names before it,
 *     is offered to be cleared, and the walk then ends with the advice to
 *     stop; a no there ends the check (e2fsck's abort);
 *   - a listed block already claimed is metadata gone bad: the primary
 *     superblock or descriptors (the file system cannot be repaired, the
 *     entry may be dropped), a backup's (a warning), a bitmap (relocation,
 *     which e4fsck cannot do yet), the inode table (nothing here: the
 *     inodes in that block are the scan's business); anything else
 *     (reserved descriptor blocks, a block listed twice) draws e2fsck's
 *     "Programming error?" line;
 *   - every other listed block is claimed, so that a file holding one
 *     shares it with the list (pass 1B names "<The bad blocks inode>").
 *
 * The walk runs single-threaded before pass 1's workers, asking at once,
 * in e2fsck's order: the list's first, then its indirect blocks, each
 * before what it maps.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "badblocks.h"
#include "relocate.h"
#include "clusters.h"
#include "context.h"
#include "ext4fs/array.h"
#include "ext4fs/codec.h"
#include "ext4fs/errors.h"
#include "ext4fs/scan.h"
#include "problem.h"
#include "problems.h"

#define DIRECT_SLOTS 12

struct block_vec {
	uint64_t *v;
	size_t n, cap;
};

struct list_walk {
	struct e4fsck *ctx;
	struct ext4fs_inode in;
	unsigned char *bufs[3];     /* one per map level, so descending keeps the parent's block */
	uint64_t lblk;              /* the next data block's position in the list */
	int suspect;                /* a map block on the metadata or on the list: e2fsck's advice follows */
	int stop;                   /* the check ends (preen stopped, or a fatal problem) */
	int reading;                /* only reading the list into ctx->bad_list, asking nothing */
	int sanitizing;             /* before -l/-L/-c: out-of-range pointers are cleared with a warning */
	struct block_vec old;       /* updating: the old list's blocks, map blocks after what they map */
	struct block_vec old_maps;  /* updating: the old map blocks alone, in that order, to serve again */
	const char *read_error;     /* reading: why the walk stopped */
};

/* e2fsck's %B for the list: a data block's position, or the map block's kind. */
static const char *describe(int64_t blockcnt, char *buf, size_t size)
{
	static const char *const names[] = { "indirect block", "double indirect block", "triple indirect block" };

	if (blockcnt < 0)
		return names[-blockcnt - 1];
	snprintf(buf, size, "block #%lld", (long long)blockcnt);
	return buf;
}

static int claimed(const struct e4fsck *ctx, uint64_t blk)
{
	return bitmap_paged_test(&ctx->block_found, blk);
}

static int claim(struct list_walk *lw, uint64_t blk)
{
	if (cluster_mark(&lw->ctx->block_found, lw->ctx->geo->cluster_ratio, blk, 1)) {
		fsck_fatal(lw->ctx, "out of memory checking the bad blocks inode");
		lw->stop = 1;
		return -1;
	}
	return 0;
}

/* Reading: blk joins ctx->bad_list, e2fsck's in-memory list (kept sorted after the walk).  0 or -1. */
static int remember(struct list_walk *lw, uint64_t blk)
{
	struct e4fsck *ctx = lw->ctx;

	if (ctx->nbad_list == ctx->capbad_list) {
		uint64_t *grown = ext4fs_array_grow(ctx->bad_list, &ctx->capbad_list, ctx->nbad_list + 1,
						    sizeof(*grown), 64);
		if (!grown) {
			fsck_fatal(ctx, "out of memory reading the bad blocks inode");
			lw->stop = 1;
			return -1;
		}
		ctx->bad_list = grown;
	}
	ctx->bad_list[ctx->nbad_list++] = blk;
	return 0;
}

/* The answer that stops the walk: preen mode met a question it leaves to a person. */
static int asked(struct list_walk *lw, uint32_t code, const struct problem_ctx *pctx)
{
	int yes = fix_problem(lw->ctx, code, pctx);

	if (lw->ctx->aborted || lw->ctx->fatal)
		lw->stop = 1;
	return yes;
}

/*
 * The primary superblock or descriptors on the list: e2fsck says the file
 * system cannot be repaired and offers to drop the entry.  1: drop it.
 */
static int primary_listed(struct list_walk *lw, uint32_t code, const struct problem_ctx *pctx)
{
	fix_problem(lw->ctx, code, pctx);
	fix_problem(lw->ctx, PR_1_BAD_PRIMARY_BLOCK, pctx);
	return asked(lw, PR_1_BAD_PRIMARY_BLOCK_PROMPT, pctx);
}

/*
 * A listed data block that something claimed before: which metadata it
 * is, found group by group as e2fsck looks (a group's superblock and
 * descriptors, then its bitmaps and inode table).  1: clear the entry.
 */
static int listed_metadata(struct list_walk *lw, uint64_t blk, struct problem_ctx *pctx)
{
	const struct ext4fs_geom *g = lw->ctx->geo;
	uint64_t first = g->first_data_block;

	for (uint32_t grp = 0; grp < g->group_count; grp++, first += g->blocks_per_group) {
		const struct ext4fs_group_desc *gd = ext4fs_group(lw->ctx->fs, grp);
		pctx->group = grp;
		if (ext4fs_group_has_super(lw->ctx->fs, grp)) {
			if (blk == first) {
				if (grp == 0)
					return primary_listed(lw, PR_1_BAD_PRIMARY_SUPERBLOCK, pctx);
				asked(lw, PR_1_BAD_SUPERBLOCK, pctx);
				return 0;
			}
			/* e2fsck's test: the descriptor table's length after the superblock, not its reserve. */
			if (blk > first && blk <= first + g->desc_blocks) {
				if (grp == 0)
					return primary_listed(lw, PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR, pctx);
				asked(lw, PR_1_BAD_GROUP_DESCRIPTORS, pctx);
				return 0;
			}
		}
		/* A listed bitmap: a yes moves it at the end of pass 1, as e2fsck's relocation does. */
		if (blk == gd->block_bitmap || blk == gd->inode_bitmap) {
			int block_bitmap = blk == gd->block_bitmap;
			if (asked(lw, block_bitmap ? PR_1_BB_BAD_BLOCK : PR_1_IB_BAD_BLOCK, pctx) &&
			    fsck_relocate_listed_bitmap(lw->ctx, grp, block_bitmap ? EXT4FS_GROUP_BLOCK_BITMAP
											: EXT4FS_GROUP_INODE_BITMAP))
				lw->stop = 1;
			return 0;
		}
		if (blk >= gd->inode_table && blk - gd->inode_table < g->inode_blocks_per_group)
			return 0;
	}
	/* Not the metadata: then one of the list's own map blocks, listed as bad. */
	const unsigned char *ib = lw->in.i_block;
	for (uint32_t s = DIRECT_SLOTS; s < DIRECT_SLOTS + 3; s++)
		if (blk == ext4fs_blockmap_slot_get(ib, s)) {
			lw->suspect = 1;
			return asked(lw, PR_1_BBINODE_BAD_METABLOCK, pctx);
		}
	asked(lw, PR_1_PROGERR_CLAIMED_BLOCK, pctx);
	return 0;
}

/*
 * One pointer of the list, at position blockcnt (a data block's, or -1..-3
 * for a map block of that level).  1 when it is to be cleared, 0 to keep,
 * -1 when the walk stops.
 */
static int list_entry(struct list_walk *lw, uint32_t blk, int64_t blockcnt)
{
	const struct ext4fs_geom *g = lw->ctx->geo;
	char where[32];
	struct problem_ctx pctx = { .ino = EXT4FS_BAD_INO, .blk = blk };
	int clear = 0;

	if (lw->reading)
		return blockcnt < 0 || blk < g->first_data_block || blk >= g->blocks_count ? 0 : remember(lw, blk);
	if (lw->sanitizing) {
		if (blk >= g->first_data_block && blk < g->blocks_count)
			return 0;
		printf("Warning: illegal block %u found in bad block inode.  Cleared.\n", blk);
		return 1;
	}
	pctx.str = describe(blockcnt, where, sizeof(where));
	if (blk < g->first_data_block || blk >= g->blocks_count) {
		clear = asked(lw, PR_1_BB_ILLEGAL_BLOCK_NUM, &pctx);
	} else if (blockcnt < 0) {
		if (range_set_test(&lw->ctx->fs_meta, blk)) {
			lw->suspect = 1;
			clear = asked(lw, PR_1_BB_FS_BLOCK, &pctx);
		} else if (claimed(lw->ctx, blk)) {
			lw->suspect = 1;
			clear = asked(lw, PR_1_BBINODE_BAD_METABLOCK, &pctx);
		} else if (claim(lw, blk)) {
			return -1;
		}
	} else if (!claimed(lw->ctx, blk)) {
		if (claim(lw, blk))
			return -1;
	} else {
		clear = listed_metadata(lw, blk, &pctx);
	}
	return lw->stop ? -1 : clear;
}

/* e2fsck's iterator gives up on a map pointer outside the file system that stays: fatal. */
static int bad_map_pointer(struct list_walk *lw, int level)
{
	static const char *const words[] = { "Illegal indirect block found", "Illegal doubly indirect block found",
					     "Illegal triply indirect block found" };
	struct problem_ctx pctx = { .ino = EXT4FS_BAD_INO, .errmsg = words[level - 1] };

	if (lw->reading) {
		lw->read_error = words[level - 1];
		lw->stop = 1;
		return -1;
	}
	fix_problem(lw->ctx, PR_1_BLOCK_ITERATE, &pctx);
	lw->stop = 1;
	return -1;
}

/*
 * The map block *slot of the given level (1: indirect) and what it maps.
 * The pointer is asked about first; a cleared one is zeroed in *slot and
 * reported in *changed.  Entries cleared inside the block are written back.
 * 0, or -1 when the walk stops.
 */
static int walk_map(struct list_walk *lw, void *map, uint32_t slot, int level, int *changed)
{
	const struct ext4fs_geom *g = lw->ctx->geo;
	uint32_t per_block = g->block_size / 4;
	uint64_t span = 1;
	uint32_t blk = ext4fs_blockmap_slot_get(map, slot);

	for (int l = 1; l < level; l++)
		span *= per_block;
	int rc = list_entry(lw, blk, -level);
	if (rc < 0)
		return -1;
	if (rc) {
		ext4fs_blockmap_slot_set(map, slot, 0);
		*changed = 1;
		blk = 0;
	}
	if (!blk) {
		lw->lblk += span * per_block;
		return 0;
	}
	if (blk < g->first_data_block || blk >= g->blocks_count)
		return bad_map_pointer(lw, level);

	unsigned char *buf = lw->bufs[level - 1];
	if (ext4fs_block_read(lw->ctx->fs, blk, buf)) {
		struct problem_ctx pctx = { .ino = EXT4FS_BAD_INO, .errmsg = ext4fs_errmsg(lw->ctx->fs) };
		if (lw->reading)
			lw->read_error = pctx.errmsg;
		else
			fix_problem(lw->ctx, PR_1_BLOCK_ITERATE, &pctx);
		lw->stop = 1;
		return -1;
	}
	int dirty = 0;
	for (uint32_t i = 0; i < per_block; i++) {
		uint32_t p = ext4fs_blockmap_slot_get(buf, i);
		if (level > 1) {
			if (p) {
				if (walk_map(lw, buf, i, level - 1, &dirty))
					return -1;
			} else {
				lw->lblk += span;
			}
			continue;
		}
		uint64_t at = lw->lblk++;
		if (!p)
			continue;
		rc = list_entry(lw, p, (int64_t)at);
		if (rc < 0)
			return -1;
		if (rc) {
			ext4fs_blockmap_slot_set(buf, i, 0);
			dirty = 1;
		}
	}
	if (dirty && ext4fs_block_write(lw->ctx->fs, blk, buf)) {
		fsck_fatal(lw->ctx, "%s while writing the bad blocks inode's map", ext4fs_errmsg(lw->ctx->fs));
		lw->stop = 1;
		return -1;
	}
	if (dirty)
		lw->ctx->fs_changed = 1;
	return 0;
}

/* e2fsck's test of the inode before it walks the list: anything here is asked about by pass 1's workers. */
static int looks_invalid(const struct ext4fs_inode *in)
{
	return in->i_mode || in->i_uid || in->i_gid || in->i_links_count || in->i_file_acl_lo ||
	       (in->i_flags & (EXT4FS_INLINE_DATA_FL | EXT4FS_EXTENTS_FL));
}

/*
 * Does inode 1 lie in a table block that looks like garbage, as e2fsck's
 * scan judges it (with or without checksums)?  Then the inode is invalid
 * for e2fsck too, and its list is not walked.  An error reads as no.
 */
static int in_garbage_block(struct e4fsck *ctx)
{
	struct ext4fs_scan *scan;
	struct ext4fs_inode in;
	uint32_t ino = 0;
	int garbage = 0;

	if (ext4fs_scan_open(ctx->fs, 0, 0,
			     EXT4FS_SCAN_SUSPECT_UNUSED | EXT4FS_SCAN_JUDGE_GARBAGE | EXT4FS_SCAN_TRUST_UNVERIFIED, &scan))
		return 0;
	if (ext4fs_scan_next(scan, &ino, &in, NULL, NULL) == 1 && ino == EXT4FS_BAD_INO)
		garbage = ext4fs_scan_in_garbage(scan);
	ext4fs_scan_close(scan);
	return garbage;
}

static int walk_list(struct list_walk *lw)
{
	unsigned char *ib = lw->in.i_block;
	int changed = 0;

	for (uint32_t i = 0; i < DIRECT_SLOTS; i++, lw->lblk++) {
		uint32_t p = ext4fs_blockmap_slot_get(ib, i);
		if (!p)
			continue;
		int rc = list_entry(lw, p, (int64_t)lw->lblk);
		if (rc < 0)
			return -1;
		if (rc) {
			ext4fs_blockmap_slot_set(ib, i, 0);
			changed = 1;
		}
	}
	for (int level = 1; level <= 3; level++) {
		uint32_t slot = DIRECT_SLOTS + (uint32_t)level - 1;
		if (!ext4fs_blockmap_slot_get(ib, slot)) {
			uint64_t span = 1;
			for (int l = 0; l < level; l++)
				span *= lw->ctx->geo->block_size / 4;
			lw->lblk += span;
			continue;
		}
		if (walk_map(lw, ib, slot, level, &changed))
			break;
	}
	/* As e2fsck's iterator: the inode's own pointers are written even when the walk ended early. */
	if (changed && ext4fs_inode_write(lw->ctx->fs, EXT4FS_BAD_INO, &lw->in)) {
		fsck_fatal(lw->ctx, "%s while writing the bad blocks inode", ext4fs_errmsg(lw->ctx->fs));
		return -1;
	}
	if (changed)
		lw->ctx->fs_changed = 1;
	return lw->stop ? -1 : 0;
}

static int alloc_bufs(struct list_walk *lw)
{
	for (int k = 0; k < 3; k++)
		if (!(lw->bufs[k] = malloc(lw->ctx->geo->block_size))) {
			fsck_fatal(lw->ctx, "out of memory reading the bad blocks inode");
			return -1;
		}
	return 0;
}

static void free_bufs(struct list_walk *lw)
{
	for (int k = 0; k < 3; k++)
		free(lw->bufs[k]);
}

/* The yes to PR_1_BADBLOCKS_IN_BADBLOCKS: inode 1 cleared (as the scan read it: zeros), the list forgotten, a restart. */
static int clear_list_inode(struct e4fsck *ctx)
{
	struct ext4fs_inode in;

	memset(&in, 0, sizeof(in));
	fsck_clear_inode(ctx, EXT4FS_BAD_INO, &in);
	if (ext4fs_inode_write(ctx->fs, EXT4FS_BAD_INO, &in)) {
		fsck_fatal(ctx, "%s while clearing the bad blocks inode", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	/* Not counted as a change: e2fsck reopens the file system to restart, and forgets it. */
	ctx->nbad_list = 0;
	ctx->restart = RESTART_BAD_LIST;
	return 0;
}

static int cmp_blocks(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int fsck_bad_list_read(struct e4fsck *ctx)
{
	struct list_walk lw = { .ctx = ctx, .reading = 1 };
	int err;

	ctx->nbad_list = 0;
	/* Without group 0's inode table there is no inode 1 to read: relocate.c said so in e2fsck's words. */
	if (!(ext4fs_group_tables_present(ctx->fs, 0) & EXT4FS_GROUP_INODE_TABLE))
		return 0;
	/* A bad checksum fails the read: e2fsck's library then lists no block. */
	if ((err = ext4fs_inode_read_strict(ctx->fs, EXT4FS_BAD_INO, &lw.in)))
		lw.read_error = ext4fs_strerror(err);
	else if (lw.in.i_flags & EXT4FS_INLINE_DATA_FL)
		lw.read_error = "Cannot iterate data blocks of an inode containing inline data";
	else if (!(lw.in.i_flags & EXT4FS_EXTENTS_FL)) {
		if (alloc_bufs(&lw)) {
			free_bufs(&lw);
			return -1;
		}
		(void)walk_list(&lw);
		free_bufs(&lw);
		if (ctx->fatal)
			return -1;
	}
	if (ctx->nbad_list)
		qsort(ctx->bad_list, ctx->nbad_list, sizeof(*ctx->bad_list), cmp_blocks);
	return lw.read_error ? fsck_bad_list_unreadable(ctx, lw.read_error) : 0;
}

int fsck_bad_list_unreadable(struct e4fsck *ctx, const char *why)
{
	printf("%s: %s while reading bad blocks inode\n", ctx->prog, why);
	if (ctx->mode == MODE_PREEN) {
		fsck_preen_halt_message(ctx);
		return -1;
	}
	printf("This doesn't bode well, but we'll try to go on...\n");
	return 0;
}

int fsck_bad_list_holds_inode(const struct e4fsck *ctx, uint32_t ino)
{
	const struct ext4fs_geom *g = ctx->geo;

	if (!ctx->nbad_list || ino < 1 || ino > g->inodes_count)
		return 0;
	uint32_t group = (ino - 1) / g->inodes_per_group, index = (ino - 1) % g->inodes_per_group;
	const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, group);
	if (!gd->inode_table)
		return 0;
	uint64_t blk = gd->inode_table + (uint64_t)index * g->inode_size / g->block_size;
	return bsearch(&blk, ctx->bad_list, ctx->nbad_list, sizeof(*ctx->bad_list), cmp_blocks) != NULL;
}

/*
 * The inodes e2fsck's scan hands over unread: those in listed inode table
 * blocks, in the part of each group the scan reads (with descriptor
 * checksums, not an INODE_UNINIT group nor the unused tail), marked in use.
 * 0 or -1.
 */
static int mark_listed_inodes(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	int lazy = g->has_gdt_csum || g->has_metadata_csum;
	uint32_t per_block = g->block_size / g->inode_size;

	for (uint32_t grp = 0; grp < g->group_count && ctx->nbad_list; grp++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, grp);
		uint32_t scanned = g->inodes_per_group;
		if (lazy && (gd->flags & EXT4FS_BG_INODE_UNINIT))
			continue;
		if (lazy)
			scanned = gd->itable_unused < scanned ? scanned - gd->itable_unused : 0;
		for (uint32_t i = 0; i < scanned; i += per_block) {
			uint32_t ino = grp * g->inodes_per_group + i + 1;
			if (!fsck_bad_list_holds_inode(ctx, ino))
				continue;
			uint32_t n = scanned - i < per_block ? scanned - i : per_block;
			if (bitmap_paged_set_range(&ctx->inode_used, ino, n) < 0) {
				fsck_fatal(ctx, "out of memory marking the inodes in bad blocks");
				return -1;
			}
		}
	}
	return 0;
}

int fsck_bad_list_check(struct e4fsck *ctx)
{
	struct list_walk lw = { .ctx = ctx };
	int rc = -1;

	ctx->bad_list_walked = 0;
	if (mark_listed_inodes(ctx))
		return -1;
	/*
	 * The list names the block holding inode 1 itself: e2fsck offers to
	 * clear the inode; kept, the inode is skipped as every inode in a bad
	 * block is (and its list is not walked).
	 */
	if (fsck_bad_list_holds_inode(ctx, EXT4FS_BAD_INO)) {
		struct problem_ctx pctx = { .ino = EXT4FS_BAD_INO };
		if (!fix_problem(ctx, PR_1_BADBLOCKS_IN_BADBLOCKS, &pctx))
			return ctx->aborted ? -1 : 0;
		return clear_list_inode(ctx);
	}
	/* A bad checksum or a garbage table block makes it invalid too: the workers ask about it. */
	if (ext4fs_inode_read_strict(ctx->fs, EXT4FS_BAD_INO, &lw.in) || looks_invalid(&lw.in) || in_garbage_block(ctx))
		return 0;
	if (alloc_bufs(&lw))
		goto out;
	ctx->bad_list_walked = 1;
	if (walk_list(&lw))
		goto out;
	/* e2fsck's advice after a map block it distrusts; declined, the check ends there. */
	if (lw.suspect && !fix_problem(ctx, PR_1_BBINODE_BAD_METABLOCK_PROMPT, NULL)) {
		if (!ctx->aborted) {
			ctx->fatal = 1;
			ctx->exit_status |= FSCK_ERROR;
		}
		goto out;
	}
	rc = 0;
out:
	free_bufs(&lw);
	return rc;
}

int fsck_bad_list_sanitize(struct e4fsck *ctx)
{
	struct list_walk lw = { .ctx = ctx, .sanitizing = 1 };
	int rc = -1;

	if (ext4fs_inode_read(ctx->fs, EXT4FS_BAD_INO, &lw.in)) {
		fsck_fatal(ctx, "%s while sanity checking the bad blocks inode", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	if (lw.in.i_flags & (EXT4FS_EXTENTS_FL | EXT4FS_INLINE_DATA_FL))
		return 0;
	if (!alloc_bufs(&lw))
		rc = walk_list(&lw);
	free_bufs(&lw);
	return rc;
}

static int push(struct block_vec *vec, uint64_t blk)
{
	if (vec->n == vec->cap) {
		uint64_t *grown = ext4fs_array_grow(vec->v, &vec->cap, vec->n + 1, sizeof(*grown), 64);
		if (!grown)
			return -1;
		vec->v = grown;
	}
	vec->v[vec->n++] = blk;
	return 0;
}

/*
 * Updating: the old map's blocks, each map block after what it maps (e2fsck
 * frees them in that order and takes its new map blocks from them first).
 */
static int collect_old(struct list_walk *lw, void *map, uint32_t slot, int level)
{
	const struct ext4fs_geom *g = lw->ctx->geo;
	uint32_t blk = ext4fs_blockmap_slot_get(map, slot);

	if (!blk || blk < g->first_data_block || blk >= g->blocks_count)
		return 0;
	if (level) {
		unsigned char *buf = lw->bufs[level - 1];
		if (ext4fs_block_read(lw->ctx->fs, blk, buf)) {
			fsck_fatal(lw->ctx, "%s while updating bad block inode", ext4fs_errmsg(lw->ctx->fs));
			return -1;
		}
		for (uint32_t i = 0; i < g->block_size / 4; i++)
			if (collect_old(lw, buf, i, level - 1))
				return -1;
	}
	if (push(&lw->old, blk) || (level && push(&lw->old_maps, blk))) {
		fsck_fatal(lw->ctx, "out of memory updating the bad blocks inode");
		return -1;
	}
	return 0;
}

/*
 * Block blk taken into the list (delta -1) or out of it (+1) as e2fsck's
 * library accounts it: the bitmap bit set or cleared, and the group's and
 * the superblock's free counts moved even when the bit was already so (a
 * listed block of the metadata or of a file), which pass 5 then corrects.
 * 0, or -1 (ctx->fatal).
 */
static int account(struct e4fsck *ctx, uint64_t blk, int delta)
{
	const struct ext4fs_geom *g = ctx->geo;
	int err = delta < 0 ? ext4fs_blocks_mark_used(ctx->fs, blk, 1) : ext4fs_blocks_mark_free(ctx->fs, blk, 1);

	if (err != EXT4FS_E_BLOCK_STATE) {
		if (err)
			fsck_fatal(ctx, "%s while updating bad block inode", ext4fs_errmsg(ctx->fs));
		return err ? -1 : 0;
	}
	uint32_t grp = (uint32_t)((blk - g->first_data_block) / g->blocks_per_group);
	struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, grp);
	gd.free_blocks_count += (uint32_t)delta;
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	uint64_t free = ((uint64_t)sb.s_free_blocks_count_hi << 32 | sb.s_free_blocks_count_lo) + (uint64_t)(int64_t)delta;
	sb.s_free_blocks_count_lo = (uint32_t)free;
	sb.s_free_blocks_count_hi = (uint32_t)(free >> 32);
	if (ext4fs_group_desc_set(ctx->fs, grp, &gd)) {
		fsck_fatal(ctx, "%s while updating bad block inode", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return fsck_super_set(ctx, &sb, 0);
}

/*
 * The next map block of the new list: one of the old map blocks (in the
 * order collected) that is still free, else the first free block of the
 * file system, as e2fsck takes it; zeroed and marked in use.  0 on failure.
 */
static uint64_t new_map_block(struct list_walk *lw, size_t *reuse)
{
	const struct ext4fs_geom *g = lw->ctx->geo;
	uint64_t blk = 0;

	while (*reuse < lw->old_maps.n && !blk)
		if (!ext4fs_blocks_mark_used(lw->ctx->fs, lw->old_maps.v[(*reuse)++], 1))
			blk = lw->old_maps.v[*reuse - 1];
	for (uint64_t b = g->first_data_block; !blk && b < g->blocks_count; b++)
		if (!ext4fs_blocks_mark_used(lw->ctx->fs, b, 1))
			blk = b;
	if (!blk || ext4fs_blocks_zero(lw->ctx->fs, blk, 1)) {
		fsck_fatal(lw->ctx, "%s while updating bad block inode",
			   blk ? ext4fs_errmsg(lw->ctx->fs) : "Could not allocate block in ext2 filesystem");
		return 0;
	}
	return blk;
}

/* A listed block into slot of map, taken in use as e2fsck's walk takes it (before the next map block). */
static int place(struct e4fsck *ctx, void *map, uint32_t slot, uint64_t blk)
{
	ext4fs_blockmap_slot_set(map, slot, (uint32_t)blk);
	return account(ctx, blk, -1);
}

/*
 * A new indirect block of the list in slot of map, filled from blocks[*done]
 * on and written.  0, or -1 (ctx->fatal).
 */
static int fill_map_block(struct list_walk *lw, void *map, uint32_t slot, const uint64_t *blocks, size_t n,
			  size_t *done, size_t *reuse)
{
	uint32_t per_block = lw->ctx->geo->block_size / 4;
	unsigned char *buf = lw->bufs[0];
	uint64_t ind = new_map_block(lw, reuse);

	if (!ind)
		return -1;
	ext4fs_blockmap_slot_set(map, slot, (uint32_t)ind);
	memset(buf, 0, lw->ctx->geo->block_size);
	for (uint32_t i = 0; i < per_block && *done < n; i++)
		if (place(lw->ctx, buf, i, blocks[(*done)++]))
			return -1;
	if (ext4fs_block_write(lw->ctx->fs, ind, buf)) {
		fsck_fatal(lw->ctx, "%s while updating bad block inode", ext4fs_errmsg(lw->ctx->fs));
		return -1;
	}
	return 0;
}

int fsck_bad_list_update(struct e4fsck *ctx, const uint64_t *blocks, size_t n)
{
	const struct ext4fs_geom *g = ctx->geo;
	uint32_t per_block = g->block_size / 4;
	struct list_walk lw = { .ctx = ctx };
	size_t reuse = 0, done = 0;
	int rc = -1;

	if (n > DIRECT_SLOTS + per_block + (uint64_t)per_block * per_block) {
		fsck_fatal(ctx, "too many blocks (%zu) for the bad blocks inode", n);
		return -1;
	}
	if (ext4fs_inode_read(ctx->fs, EXT4FS_BAD_INO, &lw.in)) {
		fsck_fatal(ctx, "%s while updating bad block inode", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	if (alloc_bufs(&lw))
		goto out;
	/* The old list and its map blocks are freed; the map blocks serve again first. */
	if (!(lw.in.i_flags & (EXT4FS_EXTENTS_FL | EXT4FS_INLINE_DATA_FL)))
		for (uint32_t s = 0; s < DIRECT_SLOTS + 3; s++)
			if (collect_old(&lw, lw.in.i_block, s, s < DIRECT_SLOTS ? 0 : (int)(s - DIRECT_SLOTS + 1)))
				goto out;
	for (size_t i = 0; i < lw.old.n; i++)
		if (account(ctx, lw.old.v[i], +1))
			goto out;
	memset(lw.in.i_block, 0, sizeof(lw.in.i_block));
	/*
	 * e2fsck's appending walk takes each map block before what it maps, and
	 * stops at the first data slot with nothing left: a map block reached
	 * with the list used up is taken all the same.
	 */
	for (uint32_t s = 0; s < DIRECT_SLOTS && done < n; s++)
		if (place(ctx, lw.in.i_block, s, blocks[done++]))
			goto out;
	if (n >= DIRECT_SLOTS && fill_map_block(&lw, lw.in.i_block, DIRECT_SLOTS, blocks, n, &done, &reuse))
		goto out;
	if (n >= DIRECT_SLOTS + per_block) {
		uint64_t top = new_map_block(&lw, &reuse);
		if (!top)
			goto out;
		ext4fs_blockmap_slot_set(lw.in.i_block, DIRECT_SLOTS + 1, (uint32_t)top);
		unsigned char *tbuf = lw.bufs[1];
		memset(tbuf, 0, g->block_size);
		for (uint32_t k = 0; k < per_block && done == DIRECT_SLOTS + per_block + (size_t)k * per_block; k++)
			if (fill_map_block(&lw, tbuf, k, blocks, n, &done, &reuse))
				goto out;
		if (ext4fs_block_write(ctx->fs, top, tbuf))
			goto write_failed;
	}
	int64_t sec;
	uint32_t nsec;
	ext4fs_now(ctx->fs, &sec, &nsec);
	lw.in.i_atime = lw.in.i_mtime = (uint32_t)sec;
	if (!lw.in.i_ctime)
		lw.in.i_ctime = (uint32_t)sec;
	ext4fs_inode_set_size(&lw.in, (uint64_t)n * g->block_size);
	lw.in.i_blocks_lo = (uint32_t)(n * (g->block_size / 512));
	if (ext4fs_inode_write(ctx->fs, EXT4FS_BAD_INO, &lw.in))
		goto write_failed;
	rc = 0;
	goto out;
write_failed:
	fsck_fatal(ctx, "%s while updating bad block inode", ext4fs_errmsg(ctx->fs));
out:
	free(lw.old.v);
	free(lw.old_maps.v);
	free_bufs(&lw);
	return rc;
}
