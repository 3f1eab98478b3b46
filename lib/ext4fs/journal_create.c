/*
 * journal_create.c - a new internal journal on a file system that has
 * none (e4fsck's "Recreate journal"), laid out as e2fsprogs lays it out:
 * inode 8, blocks taken from the start of a group near the middle of the
 * file system, zeroed, an empty v2 journal superblock in the first block,
 * and the inode's block map copied into the superblock (s_jnl_blocks).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/inode.h"
#include "ext4fs/journal.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "ondisk_le.h"

/*
 * The first block of the group holding the middle of the file system;
 * with flex_bg, of the first group of its flex group that has free blocks
 * (e2fsprogs' choice, so that the journal lands where e2fsck puts it).
 */
static uint64_t journal_goal(const struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *g = &fs->geom;
	uint32_t group = ext4fs_group_of_block(fs, (g->blocks_count - g->first_data_block) / 2);
	uint32_t log_flex = 1U << fs->sb.s_log_groups_per_flex;

	if (fs->sb.s_log_groups_per_flex && group > log_flex) {
		group &= ~(log_flex - 1);
		while (group < g->group_count && ext4fs_group(fs, group)->free_blocks_count == 0)
			group++;
		if (group == g->group_count)
			group = 0;
	}
	return ext4fs_group_first_block(fs, group);
}

/* Allocate, zero and map blocks 0..total-1 of the journal inode. */
static int map_journal(struct ext4fs_fs *fs, struct ext4fs_inode *in, uint32_t total)
{
	uint64_t goal = journal_goal(fs);
	uint32_t done = 0;

	while (done < total) {
		struct ext4fs_alloc_request req = { 0 };
		uint64_t start;
		uint32_t got;
		req.len = total - done;
		req.goal = goal;
		int err = ext4fs_alloc_blocks(fs, &req, &start, &got);
		if (err)
			return err;
		err = ext4fs_blocks_zero(fs, start, got);
		if (!err)
			err = ext4fs_bmap_set(fs, EXT4FS_JOURNAL_INO, in, done, start, got, 0);
		if (err) {
			/* Not mapped: give this run back; what was mapped before goes with the caller's unmap. */
			ext4fs_free_blocks(fs, start, got);
			return err;
		}
		done += got;
		goal = start + got;
	}
	return 0;
}

int ext4fs_journal_create(struct ext4fs_fs *fs, uint32_t blocks, uint32_t fc_blocks)
{
	const struct ext4fs_geom *g = &fs->geom;
	struct ext4fs_super sb;
	struct ext4fs_inode in;
	uint32_t total = blocks + fc_blocks;
	unsigned char *buf;
	uint64_t jsb_blk, run;
	int unwritten, err = ext4fs__fs_require_rw(fs, "creating a journal");

	if (err)
		return err;
	if ((fs->sb.s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) || fs->sb.s_journal_inum)
		return ext4fs__fs_fail(fs, EXT4FS_E_EXISTS, "the file system has a journal already (inode %u)",
				       fs->sb.s_journal_inum);
	if (blocks < EXT4FS_JBD2_MIN_BLOCKS || total < blocks || total > EXT4FS_JBD2_MAX_BLOCKS ||
	    total >= g->blocks_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "a journal of %u + %u blocks", blocks, fc_blocks);
	err = ext4fs_inode_read(fs, EXT4FS_JOURNAL_INO, &in);
	if (err)
		return err;
	if (in.i_links_count || ext4fs_inode_blocks_raw(fs, &in))
		return ext4fs__fs_fail(fs, EXT4FS_E_EXISTS, "inode %u is in use", EXT4FS_JOURNAL_INO);
	buf = calloc(1, g->block_size);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the journal superblock");

	memset(&in, 0, sizeof(in));
	ext4fs_inode_init_new(fs, EXT4FS_JOURNAL_INO, EXT4FS_S_IFREG | 0600, 0, 0, &in);
	in.i_generation = 0;
	err = map_journal(fs, &in, total);
	if (!err) {
		ext4fs_inode_set_size(&in, (uint64_t)total * g->block_size);
		err = ext4fs_inode_write(fs, EXT4FS_JOURNAL_INO, &in);
	}
	if (!err)
		err = ext4fs_bmap(fs, EXT4FS_JOURNAL_INO, &in, 0, &jsb_blk, &run, &unwritten);
	if (!err) {
		ext4fs_journal_sb_format(buf, g->block_size, total, fc_blocks, fs->sb.s_uuid, 0);
		err = ext4fs_block_write(fs, jsb_blk, buf);
	}
	if (err) {
		struct ext4fs_inode gone;
		/* Give the blocks back: the file system is left as it was. */
		if (!ext4fs_inode_read(fs, EXT4FS_JOURNAL_INO, &gone))
			ext4fs_bmap_unmap(fs, EXT4FS_JOURNAL_INO, &gone, 0, UINT64_MAX);
		memset(&gone, 0, sizeof(gone));
		ext4fs_inode_write(fs, EXT4FS_JOURNAL_INO, &gone);
		free(buf);
		return err;
	}
	free(buf);
	/* Taken now: the allocation changed the free counts. */
	sb = fs->sb;
	sb.s_feature_compat |= EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
	sb.s_journal_inum = EXT4FS_JOURNAL_INO;
	sb.s_journal_dev = 0;
	memset(sb.s_journal_uuid, 0, sizeof(sb.s_journal_uuid));
	for (unsigned i = 0; i < EXT4FS_N_BLOCKS; i++)
		sb.s_jnl_blocks[i] = le32_load(in.i_block + 4 * i);
	sb.s_jnl_blocks[15] = in.i_size_high;
	sb.s_jnl_blocks[16] = in.i_size_lo;
	sb.s_jnl_backup_type = EXT4FS_JNL_BACKUP_BLOCKS;
	return ext4fs_super_set(fs, &sb);
}
