/*
 * mkfs_internal.h - the plan shared by mkfs_plan.c (which makes it) and
 * mkfs_write.c (which writes it).  Not installed.
 */
#ifndef EXT4FS_MKFS_INTERNAL_H
#define EXT4FS_MKFS_INTERNAL_H

#include "ext4fs/mkfs.h"
#include "extset.h"

#define MKFS_ROOT_INO   2
#define MKFS_RESIZE_INO 7
#define MKFS_JOURNAL_INO 8

/* A file's blocks as extents in logical order, plus the extent-tree leaf
 * block when they do not fit in the inode (depth 1). */
struct mkfs_file {
	uint32_t ino;
	int blockmapped;            /* ext lists data and indirect blocks in allocation order */
	struct extset_range *ext;   /* extent files: data runs, each at most 32768 blocks */
	uint32_t n;
	uint64_t blocks;            /* data blocks */
	uint64_t meta_blocks;       /* indirect blocks, or the extent leaf */
	uint64_t leaf;              /* extent files: the depth-1 leaf, 0 when the extents fit the inode */
};

/* How many indirect blocks a block-mapped file allocates just before logical block lblk. */
uint32_t ext4fs__mkfs_indirect_before(uint64_t lblk, uint32_t apb);

struct ext4fs_mkfs_plan {
	struct ext4fs_mkfs_params p;
	struct ext4fs_fs *fs;        /* superblock, geometry, descriptors (in memory) */
	struct extset used;          /* every block in use, blocks before s_first_data_block too */
	uint64_t *backups;           /* backup superblock locations */
	uint32_t nbackups;
	uint32_t lpf_ino;
	uint32_t orphan_ino;         /* 0 without orphan_file */
	struct mkfs_file root;
	struct mkfs_file lpf;
	struct mkfs_file journal;
	struct mkfs_file orphan;
	uint64_t resize_dind;        /* 0 without resize_inode */
	uint32_t journal_blocks;     /* including fc_blocks */
	uint32_t fc_blocks;
};

#endif
