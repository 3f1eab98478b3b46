/*
 * guard.c - keeping the library's allocator off blocks and inodes that
 * pass 1 found in use but the bitmaps on disk call free (guard.h).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/super.h"
#include "context.h"
#include "clusters.h"
#include "guard.h"

static int guard_add(struct alloc_guard *g, uint64_t first, uint64_t count, int inode, int dir)
{
	if (g->n == g->cap) {
		struct guard_run *grown = ext4fs_array_grow(g->runs, &g->cap, g->n + 1, sizeof(*grown), 64);
		if (!grown)
			return -1;
		g->runs = grown;
	}
	g->runs[g->n++] = (struct guard_run){ first, count, inode, dir };
	return 0;
}

/* Bits set in [first, last] of bm. */
static uint64_t count_set(const struct ext4fs_bitmap *bm, uint64_t first, uint64_t last)
{
	uint64_t n = 0, at = first, set_at, clear_at;

	while (at <= last && !ext4fs_bitmap_find(bm, at, last, 1, &set_at)) {
		if (ext4fs_bitmap_find(bm, set_at, last, 0, &clear_at))
			clear_at = last + 1;
		n += clear_at - set_at;
		at = clear_at;
	}
	return n;
}

/* The part of the block (inode) bitmap that is group grp's. */
static void group_span(struct e4fsck *ctx, uint32_t grp, int inode, uint64_t *first, uint64_t *last)
{
	if (inode) {
		*first = (uint64_t)grp * ctx->geo->inodes_per_group + 1;
		*last = *first + ctx->geo->inodes_per_group - 1;
		if (*last > ctx->geo->inodes_count)
			*last = ctx->geo->inodes_count;
	} else {
		*first = ext4fs_group_first_block(ctx->fs, grp);
		*last = ext4fs_group_last_block(ctx->fs, grp);
	}
}

/* Remember group grp's side as it is, before the guard first marks in it.  0 or -1 (no memory). */
static int note_group(struct e4fsck *ctx, struct alloc_guard *g, uint32_t grp, int inode,
		      const struct ext4fs_bitmap *bm)
{
	for (size_t i = g->ngroups; i-- > 0;)
		if (g->groups[i].group == grp && g->groups[i].inode == inode)
			return 0;
	if (g->ngroups == g->capgroups) {
		struct guard_group *grown = ext4fs_array_grow(g->groups, &g->capgroups, g->ngroups + 1,
							      sizeof(*grown), 16);
		if (!grown)
			return -1;
		g->groups = grown;
	}
	const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, grp);
	uint64_t first, last;
	group_span(ctx, grp, inode, &first, &last);
	g->groups[g->ngroups++] = (struct guard_group){ grp, inode, gd->flags, gd->itable_unused,
						       count_set(bm, first, last) };
	return 0;
}

/* note_group() for every group of blocks [first, first + count) that says BLOCK_UNINIT. */
static int note_block_groups(struct e4fsck *ctx, struct alloc_guard *g, uint64_t first, uint64_t count,
			     const struct ext4fs_bitmap *bb)
{
	for (uint32_t grp = ext4fs_group_of_block(ctx->fs, first);
	     grp < ctx->geo->group_count && ext4fs_group_first_block(ctx->fs, grp) < first + count; grp++)
		if ((ext4fs_group(ctx->fs, grp)->flags & EXT4FS_BG_BLOCK_UNINIT) && note_group(ctx, g, grp, 0, bb))
			return -1;
	return 0;
}

/* Put back what the guard's marking changed in groups no repair allocated in since. */
static int restore_groups(struct e4fsck *ctx, struct alloc_guard *g, const struct ext4fs_bitmap *bb,
			  const struct ext4fs_bitmap *ib)
{
	for (size_t i = 0; i < g->ngroups; i++) {
		const struct guard_group *was = &g->groups[i];
		uint64_t first, last;
		group_span(ctx, was->group, was->inode, &first, &last);
		if (count_set(was->inode ? ib : bb, first, last) != was->set_bits)
			continue;
		struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, was->group);
		uint16_t flag = was->inode ? EXT4FS_BG_INODE_UNINIT : EXT4FS_BG_BLOCK_UNINIT;
		uint16_t flags = (uint16_t)((gd.flags & ~flag) | (was->flags & flag));
		uint32_t unused = was->inode ? was->itable_unused : gd.itable_unused;
		if (flags == gd.flags && unused == gd.itable_unused)
			continue;
		gd.flags = flags;
		gd.itable_unused = unused;
		int err = ext4fs_group_desc_set(ctx->fs, was->group, &gd);
		if (err)
			return err;
	}
	return 0;
}

int fsck_guard_on(struct e4fsck *ctx, struct alloc_guard *g)
{
	const struct ext4fs_bitmap *bb, *ib;
	int err = ext4fs_fs_block_bitmap(ctx->fs, &bb);

	g->kept[0] = ctx->root_repair_block;
	g->kept[1] = ctx->lnf_repair_block;

	if (!err)
		err = ext4fs_fs_inode_bitmap(ctx->fs, &ib);
	if (err)
		goto fail;
	for (uint64_t b = bitmap_paged_next_set(&ctx->block_found, ctx->geo->first_data_block);
	     b < ctx->geo->blocks_count;) {
		uint64_t end = bitmap_paged_next_clear(&ctx->block_found, b), at = b;
		while (at < end) {
			uint64_t free_at;
			if (ext4fs_bitmap_find(bb, at, end - 1, 0, &free_at))
				break;
			uint64_t used_at;
			if (ext4fs_bitmap_find(bb, free_at, end - 1, 1, &used_at))
				used_at = end;
			if (note_block_groups(ctx, g, free_at, used_at - free_at, bb))
				goto fail;
			err = ext4fs_blocks_mark_used_uncounted(ctx->fs, free_at, used_at - free_at);
			if (err || guard_add(g, free_at, used_at - free_at, 0, 0))
				goto fail;
			at = used_at;
		}
		b = end < ctx->geo->blocks_count ? bitmap_paged_next_set(&ctx->block_found, end) : end;
	}
	for (uint64_t i = bitmap_paged_next_set(&ctx->inode_used, 1); i <= ctx->geo->inodes_count;
	     i = bitmap_paged_next_set(&ctx->inode_used, i + 1)) {
		if (ext4fs_bitmap_test(ib, i) != 0)
			continue;
		int dir = bitmap_paged_test(&ctx->inode_dir, i);
		if (note_group(ctx, g, (uint32_t)((i - 1) / ctx->geo->inodes_per_group), 1, ib))
			goto fail;
		err = ext4fs_inode_mark_used(ctx->fs, (uint32_t)i, dir);
		if (err || guard_add(g, i, 1, 1, dir))
			goto fail;
	}
	return 0;
fail:
	fsck_fatal(ctx, "%s while protecting blocks and inodes in use: %s", err ? ext4fs_strerror(err) : "out of memory",
		   ext4fs_errmsg(ctx->fs));
	return -1;
}

/*
 * Block n was kept aside for a repair when the guard went on, and the
 * repair has taken it since: no longer kept, claimed again.
 */
static int taken_by_repair(struct e4fsck *ctx, const struct alloc_guard *g, uint64_t n)
{
	uint64_t cluster = n & ~((uint64_t)ctx->geo->cluster_ratio - 1);
	const uint64_t now[2] = { ctx->root_repair_block, ctx->lnf_repair_block };

	for (int i = 0; i < 2; i++)
		if (g->kept[i] && cluster == g->kept[i] && now[i] != g->kept[i])
			return bitmap_paged_test(&ctx->block_found, n);
	return 0;
}

int fsck_guard_off(struct e4fsck *ctx, struct alloc_guard *g)
{
	const struct ext4fs_bitmap *bb, *ib;
	int err = ext4fs_fs_block_bitmap(ctx->fs, &bb);

	if (!err)
		err = ext4fs_fs_inode_bitmap(ctx->fs, &ib);
	for (size_t i = g->n; i-- > 0 && !err;) {
		const struct guard_run *r = &g->runs[i];
		/*
		 * An item a pass freed meanwhile (an inode it cleared, blocks a
		 * rebuild let go) is already back, and that free counted as in
		 * e2fsck.  Blocks were marked without counting and go back so; a
		 * block kept aside for a repair that the repair took since stays.
		 */
		for (uint64_t n = r->first; n < r->first + r->count && !err; n++) {
			if (r->inode)
				err = ext4fs_bitmap_test(ib, n) > 0 ? ext4fs_inode_mark_free(ctx->fs, (uint32_t)n, r->dir) : 0;
			else if (ext4fs_bitmap_test(bb, n) > 0 && !taken_by_repair(ctx, g, n))
				err = ext4fs_blocks_mark_free_uncounted(ctx->fs, n, 1);
		}
	}
	if (!err)
		err = restore_groups(ctx, g, bb, ib);
	free(g->runs);
	free(g->groups);
	memset(g, 0, sizeof(*g));
	if (err) {
		fsck_fatal(ctx, "%s while giving back protected blocks and inodes: %s", ext4fs_strerror(err),
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

uint64_t fsck_next_free_cluster(struct e4fsck *ctx, uint64_t from)
{
	const struct ext4fs_geom *g = ctx->geo;
	uint64_t mask = (uint64_t)g->cluster_ratio - 1;

	for (;;) {
		uint64_t b = bitmap_paged_next_clear(&ctx->block_found, from);
		if (b >= g->blocks_count || !mask)
			return b;
		uint64_t c = b & ~mask, n = g->blocks_count - c < mask + 1 ? g->blocks_count - c : mask + 1;
		if (c >= g->first_data_block && bitmap_paged_count(&ctx->block_found, c, n) == 0)
			return c;
		from = c + mask + 1;
	}
}

int fsck_take_block(struct e4fsck *ctx, uint64_t goal, uint64_t *blk)
{
	const struct ext4fs_geom *g = ctx->geo;
	const struct ext4fs_bitmap *bb;
	uint64_t b = g->blocks_count;
	int err;

	if (goal >= g->first_data_block && goal < g->blocks_count)
		b = fsck_next_free_cluster(ctx, goal);
	if (b >= g->blocks_count)
		b = fsck_next_free_cluster(ctx, g->first_data_block);
	if (b >= g->blocks_count)
		return EXT4FS_E_NO_SPACE;
	if (cluster_mark(&ctx->block_found, g->cluster_ratio, b, 1) < 0)
		return EXT4FS_E_NO_MEMORY;
	*blk = b;
	err = ext4fs_fs_block_bitmap(ctx->fs, &bb);
	if (err || ext4fs_bitmap_test(bb, b) != 0)
		return err;
	/* e2fsck sets the bit but leaves the free counts to pass 5, which then reports them: do the same. */
	return ext4fs_blocks_mark_used_uncounted(ctx->fs, b, 1);
}

int fsck_take_file_block(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, uint64_t lblk,
			 uint64_t goal, uint64_t *blk)
{
	uint64_t mask = (uint64_t)ctx->geo->cluster_ratio - 1, first = lblk & ~mask;

	/* As e2fsck maps a cluster's block: where the file's other blocks of that logical cluster lie. */
	for (uint64_t l = first; mask && l <= first + mask; l++) {
		uint64_t pblk = 0, run = 1;
		if (l == lblk || ext4fs_bmap(ctx->fs, ino, in, l, &pblk, &run, NULL) || !pblk)
			continue;
		uint64_t b = (pblk & ~mask) + (lblk & mask);
		if (b < ctx->geo->blocks_count) {
			*blk = b;
			return 0;
		}
	}
	return fsck_take_block(ctx, goal, blk);
}

int fsck_take_block_counted(struct e4fsck *ctx, uint64_t goal, uint64_t *blk)
{
	const struct ext4fs_geom *g = ctx->geo;
	int err = fsck_take_block(ctx, goal, blk);

	if (err)
		return err;
	uint32_t grp = ext4fs_group_of_block(ctx->fs, *blk);
	struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, grp);
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	/* A cluster taken: the group counts clusters, the superblock their blocks. */
	uint64_t sb_free = ((uint64_t)sb.s_free_blocks_count_hi << 32 | sb.s_free_blocks_count_lo) - g->cluster_ratio;
	/* The count wraps at the descriptor field's width, as e2fsck's does. */
	gd.free_blocks_count = (gd.free_blocks_count - 1) & (g->desc_size > 32 ? UINT32_MAX : UINT16_MAX);
	sb.s_free_blocks_count_lo = (uint32_t)sb_free;
	sb.s_free_blocks_count_hi = (uint32_t)(sb_free >> 32);
	err = ext4fs_group_desc_set(ctx->fs, grp, &gd);
	return err ? err : ext4fs_super_set(ctx->fs, &sb);
}

int fsck_take_inode(struct e4fsck *ctx, uint32_t dir, int is_dir, uint32_t *ino)
{
	const struct ext4fs_geom *g = ctx->geo;
	uint64_t start = (uint64_t)((dir - 1) / g->inodes_per_group) * g->inodes_per_group + 1, n;
	const struct ext4fs_bitmap *ib;
	int err;

	if (start < g->first_ino)
		start = g->first_ino;
	n = bitmap_paged_next_clear(&ctx->inode_used, start);
	if (n > g->inodes_count)
		n = bitmap_paged_next_clear(&ctx->inode_used, g->first_ino);
	if (n > g->inodes_count)
		return EXT4FS_E_NO_FREE_INODES;
	if (bitmap_paged_set_range(&ctx->inode_used, n, 1) < 0)
		return EXT4FS_E_NO_MEMORY;
	*ino = (uint32_t)n;
	err = ext4fs_fs_inode_bitmap(ctx->fs, &ib);
	if (!err && ext4fs_bitmap_test(ib, n) == 0)
		err = ext4fs_inode_mark_used_uncounted(ctx->fs, *ino);
	if (err)
		return err;
	uint32_t grp = (uint32_t)((n - 1) / g->inodes_per_group);
	struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, grp);
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	uint32_t width = g->desc_size > 32 ? UINT32_MAX : UINT16_MAX;
	gd.free_inodes_count = (gd.free_inodes_count - 1) & width;
	if (is_dir)
		gd.used_dirs_count = (gd.used_dirs_count + 1) & width;
	/* Also when the bit was set already: the inode leaves the group's never-used tail, as in e2fsck. */
	gd.flags &= (uint16_t)~EXT4FS_BG_INODE_UNINIT;
	uint64_t group_end = (uint64_t)(grp + 1) * g->inodes_per_group;
	if ((g->has_gdt_csum || g->has_metadata_csum) && gd.itable_unused <= g->inodes_per_group &&
	    n >= group_end - gd.itable_unused + 1)
		gd.itable_unused = (uint32_t)(group_end - n);
	sb.s_free_inodes_count--;
	err = ext4fs_group_desc_set(ctx->fs, grp, &gd);
	return err ? err : ext4fs_super_set(ctx->fs, &sb);
}
