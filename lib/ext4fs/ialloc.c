/*
 * ialloc.c - choosing the group, then the inode, for a new file.
 *
 * Two policies, picked by the layout:
 *  - flex_bg: a whole flex group is the unit.  New inodes stay in the
 *    parent's flex group while it has free inodes and more than a tenth of
 *    its blocks free (room for the files to grow next to their metadata),
 *    else in the previous flex group if that one qualifies (it often has
 *    space freed behind the allocation front), else in the flex group with
 *    the most free blocks among those with more free inodes than the
 *    parent's.  Directories follow the same rule as files: keeping a tree
 *    together beats spreading it on a file system whose metadata is
 *    already packed per flex group.
 *  - classic: Orlov.  Top-level directories go to a group with at least
 *    the average free inodes and blocks and the fewest directories, so
 *    unrelated trees start apart; nested directories stay near the parent
 *    unless its group is crowded; files go to the parent's group, else the
 *    first group with room found by quadratic then linear probing.
 * Inside the chosen group the lowest free inode is taken, which keeps the
 * used part of the inode table (and bg_itable_unused) compact.
 */
#include "config.h"
#include <stdlib.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/inode.h"
#include "fs_internal.h"
#include "fs_write_internal.h"

#define FLEX_FREE_BLOCK_RATIO 10   /* percent of a flex group's blocks to keep free for growth */

struct flex_sum {
	uint64_t free_blocks;
	uint64_t free_inodes;
	uint64_t blocks;
};

static void flex_summary(const struct ext4fs_fs *fs, uint32_t flex, struct flex_sum *s)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t first = flex * geo->groups_per_flex;

	s->free_blocks = s->free_inodes = s->blocks = 0;
	for (uint32_t g = first; g < first + geo->groups_per_flex && g < geo->group_count; g++) {
		s->free_blocks += fs->groups[g].free_blocks_count;
		s->free_inodes += fs->groups[g].free_inodes_count;
		s->blocks += ext4fs_group_last_block(fs, g) - ext4fs_group_first_block(fs, g) + 1;
	}
}

static int flex_qualifies(const struct flex_sum *s)
{
	return s->free_inodes > 0 && s->free_blocks * 100 > s->blocks * FLEX_FREE_BLOCK_RATIO;
}

static int find_group_flex(const struct ext4fs_fs *fs, uint32_t parent_group, uint32_t *out)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t nflex = (geo->group_count + geo->groups_per_flex - 1) / geo->groups_per_flex;
	uint32_t flex = parent_group / geo->groups_per_flex, best;
	struct flex_sum s, bs;

	flex_summary(fs, flex, &s);
	if (!flex_qualifies(&s) && flex > 0) {
		struct flex_sum prev;
		flex_summary(fs, flex - 1, &prev);
		if (flex_qualifies(&prev)) {
			flex--;
			s = prev;
		}
	}
	if (!flex_qualifies(&s)) {
		best = flex;
		bs = s;
		for (uint32_t f = 0; f < nflex; f++) {
			struct flex_sum c;
			flex_summary(fs, f, &c);
			if (c.free_inodes == 0)
				continue;
			if (bs.free_inodes == 0 || c.free_blocks > bs.free_blocks) {
				best = f;
				bs = c;
			}
		}
		if (bs.free_inodes == 0)
			return -1;
		flex = best;
	}
	for (uint32_t g = flex * geo->groups_per_flex;
	     g < (flex + 1) * geo->groups_per_flex && g < geo->group_count; g++)
		if (fs->groups[g].free_inodes_count) {
			*out = g;
			return 0;
		}
	return -1;
}

static int find_group_orlov_dir(const struct ext4fs_fs *fs, uint32_t parent_group, int top,
				uint32_t *out)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t ngroups = geo->group_count;
	uint64_t avg_inodes = fs->sb.s_free_inodes_count / ngroups;
	uint64_t avg_blocks = geo->free_blocks_count / ngroups;
	uint64_t dirs = 0;
	int found = 0;

	for (uint32_t g = 0; g < ngroups; g++)
		dirs += fs->groups[g].used_dirs_count;
	if (top) {
		uint32_t best = 0, best_dirs = UINT32_MAX;
		for (uint32_t g = 0; g < ngroups; g++) {
			const struct ext4fs_group_desc *gd = &fs->groups[g];
			if (gd->free_inodes_count < avg_inodes || gd->free_blocks_count < avg_blocks)
				continue;
			if (gd->used_dirs_count < best_dirs) {
				best = g;
				best_dirs = gd->used_dirs_count;
				found = 1;
			}
		}
		if (found) {
			*out = best;
			return 0;
		}
	} else {
		/* Near the parent, unless its neighbourhood already holds more than its share. */
		uint64_t max_dirs = dirs / ngroups + geo->inodes_per_group / 16;
		uint64_t min_inodes = avg_inodes > geo->inodes_per_group / 4 ?
				      avg_inodes - geo->inodes_per_group / 4 : 1;
		uint64_t min_blocks = avg_blocks > geo->blocks_per_group / 4 ?
				      avg_blocks - geo->blocks_per_group / 4 : 1;
		if (min_inodes == 0)
			min_inodes = 1;
		for (uint32_t i = 0; i < ngroups; i++) {
			uint32_t g = (parent_group + i) % ngroups;
			const struct ext4fs_group_desc *gd = &fs->groups[g];
			if (gd->used_dirs_count >= max_dirs || gd->free_inodes_count < min_inodes ||
			    gd->free_blocks_count < min_blocks)
				continue;
			*out = g;
			return 0;
		}
	}
	/* Fall back to any group with an inode above average, then any at all. */
	for (uint32_t i = 0; i < ngroups; i++) {
		uint32_t g = (parent_group + i) % ngroups;
		if (fs->groups[g].free_inodes_count && fs->groups[g].free_inodes_count >= avg_inodes) {
			*out = g;
			return 0;
		}
	}
	return -1;
}

static int find_group_other(const struct ext4fs_fs *fs, uint32_t parent_group, uint32_t *out)
{
	uint32_t ngroups = fs->geom.group_count;
	const struct ext4fs_group_desc *gd = &fs->groups[parent_group];

	if (gd->free_inodes_count && gd->free_blocks_count) {
		*out = parent_group;
		return 0;
	}
	/* Quadratic probing spreads the overflow of a crowded group. */
	uint32_t g = parent_group;
	for (uint32_t step = 1; step < ngroups; step <<= 1) {
		g = (g + step) % ngroups;
		if (fs->groups[g].free_inodes_count && fs->groups[g].free_blocks_count) {
			*out = g;
			return 0;
		}
	}
	for (uint32_t i = 0; i < ngroups; i++) {
		g = (parent_group + i) % ngroups;
		if (fs->groups[g].free_inodes_count) {
			*out = g;
			return 0;
		}
	}
	return -1;
}

/* Lowest free inode of group g at or above the first non-reserved one. */
static int take_inode_in_group(struct ext4fs_fs *fs, const struct ext4fs_bitmap *bm, uint32_t g,
			       uint32_t *ino)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint64_t first = (uint64_t)g * geo->inodes_per_group + 1;
	uint64_t last = first + geo->inodes_per_group - 1, found;

	if (first < geo->first_ino)
		first = geo->first_ino;
	if (last > geo->inodes_count)
		last = geo->inodes_count;
	if (first > last || ext4fs_bitmap_find(bm, first, last, 0, &found) != 0)
		return -1;
	*ino = (uint32_t)found;
	return 0;
}

int ext4fs_inode_alloc(struct ext4fs_fs *fs, uint32_t parent, uint16_t mode, uint32_t *ino)
{
	const struct ext4fs_geom *geo = &fs->geom;
	const struct ext4fs_bitmap *bm;
	uint32_t parent_group = 0, g;
	int is_dir = EXT4FS_ISDIR(mode), err, rc;

	err = ext4fs__fs_require_rw(fs, "allocating an inode");
	if (err)
		return err;
	err = ext4fs_fs_inode_bitmap(fs, &bm);
	if (err)
		return err;
	if (parent >= 1 && parent <= geo->inodes_count)
		parent_group = (parent - 1) / geo->inodes_per_group;
	if (fs->sb.s_free_inodes_count == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_FREE_INODES, "no free inodes left");

	if (geo->groups_per_flex > 1)
		rc = find_group_flex(fs, parent_group, &g);
	else if (is_dir)
		rc = find_group_orlov_dir(fs, parent_group, parent == EXT4FS_ROOT_INO, &g);
	else
		rc = find_group_other(fs, parent_group, &g);

	/*
	 * The descriptor counts steer the choice; the bitmap decides.  If the
	 * chosen group turns out full (counts out of step, or only reserved
	 * inodes left in group 0), walk on from it.
	 */
	if (rc != 0)
		g = parent_group;
	for (uint32_t i = 0; i < geo->group_count; i++) {
		uint32_t cand = (g + i) % geo->group_count;
		if (take_inode_in_group(fs, bm, cand, ino) == 0)
			return ext4fs_inode_mark_used(fs, *ino, is_dir);
	}
	return ext4fs__fs_fail(fs, EXT4FS_E_NO_FREE_INODES, "no free inodes left");
}
