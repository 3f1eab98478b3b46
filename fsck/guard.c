/*
 * guard.c - keeping the library's allocator off blocks and inodes that
 * pass 1 found in use but the bitmaps on disk call free (guard.h).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/super.h"
#include "context.h"
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

int fsck_guard_on(struct e4fsck *ctx, struct alloc_guard *g)
{
	const struct ext4fs_bitmap *bb, *ib;
	int err = ext4fs_fs_block_bitmap(ctx->fs, &bb);

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
			err = ext4fs_blocks_mark_used(ctx->fs, free_at, used_at - free_at);
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

int fsck_guard_off(struct e4fsck *ctx, struct alloc_guard *g)
{
	const struct ext4fs_bitmap *bb, *ib;
	int err = ext4fs_fs_block_bitmap(ctx->fs, &bb);

	if (!err)
		err = ext4fs_fs_inode_bitmap(ctx->fs, &ib);
	for (size_t i = g->n; i-- > 0 && !err;) {
		const struct guard_run *r = &g->runs[i];
		/* A run a pass freed meanwhile (an inode it cleared) is already back. */
		for (uint64_t n = r->first; n < r->first + r->count && !err; n++) {
			if (r->inode)
				err = ext4fs_bitmap_test(ib, n) > 0 ? ext4fs_inode_mark_free(ctx->fs, (uint32_t)n, r->dir) : 0;
			else
				err = ext4fs_bitmap_test(bb, n) > 0 ? ext4fs_blocks_mark_free(ctx->fs, n, 1) : 0;
		}
	}
	free(g->runs);
	memset(g, 0, sizeof(*g));
	if (err) {
		fsck_fatal(ctx, "%s while giving back protected blocks and inodes: %s", ext4fs_strerror(err),
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

int fsck_take_block(struct e4fsck *ctx, uint64_t goal, uint64_t *blk)
{
	const struct ext4fs_geom *g = ctx->geo;
	const struct ext4fs_bitmap *bb;
	uint64_t b = g->blocks_count;
	int err;

	if (goal >= g->first_data_block && goal < g->blocks_count)
		b = bitmap_paged_next_clear(&ctx->block_found, goal);
	if (b >= g->blocks_count)
		b = bitmap_paged_next_clear(&ctx->block_found, g->first_data_block);
	if (b >= g->blocks_count)
		return EXT4FS_E_NO_SPACE;
	if (bitmap_paged_set_range(&ctx->block_found, b, 1) < 0)
		return EXT4FS_E_NO_MEMORY;
	*blk = b;
	err = ext4fs_fs_block_bitmap(ctx->fs, &bb);
	if (err || ext4fs_bitmap_test(bb, b) != 0)
		return err;
	/* e2fsck sets the bit but leaves the free counts to pass 5, which then reports them: do the same. */
	return ext4fs_blocks_mark_used_uncounted(ctx->fs, b, 1);
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
	uint64_t sb_free = ((uint64_t)sb.s_free_blocks_count_hi << 32 | sb.s_free_blocks_count_lo) - 1;
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
