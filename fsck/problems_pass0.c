/*
 * problems_pass0.c - problems found before pass 1 (superblock, group
 * descriptors), in e2fsck's words.
 */
#include "config.h"
#include "problem.h"
#include "problems.h"

static const struct problem rows[] = {
	{ PR_0_BB_NOT_GROUP, "PR_0_BB_NOT_GROUP",
	  "Block bitmap for group %g is not in group.  (block %b)\n", PROMPT_RELOCATE, PF_CHECK_ONLY },
	{ PR_0_IB_NOT_GROUP, "PR_0_IB_NOT_GROUP",
	  "Inode bitmap for group %g is not in group.  (block %b)\n", PROMPT_RELOCATE, PF_CHECK_ONLY },
	{ PR_0_ITABLE_NOT_GROUP, "PR_0_ITABLE_NOT_GROUP",
	  "Inode table for group %g is not in group.  (block %b)\nWARNING: SEVERE DATA LOSS POSSIBLE.\n",
	  PROMPT_RELOCATE, PF_CHECK_ONLY },
	{ PR_0_FS_SIZE_WRONG, "PR_0_FS_SIZE_WRONG",
	  "The filesystem size (according to the superblock) is %b blocks\n"
	  "The physical size of the device is %c blocks\n"
	  "Either the superblock or the partition table is likely to be corrupt!\n", PROMPT_ABORT,
	  PF_AFTER_NO },
	{ PR_0_FIRST_DATA_BLOCK, "PR_0_FIRST_DATA_BLOCK",
	  "Superblock first_data_block = %b, should have been %c\n", PROMPT_NONE, PF_PREEN_NO },
	{ PR_0_ADD_UUID, "PR_0_ADD_UUID", "Filesystem did not have a UUID; generating one.\n\n", PROMPT_NONE,
	  PF_PREEN_NO },
	{ PR_0_MISC_CORRUPT_SUPER, "PR_0_MISC_CORRUPT_SUPER", "Corruption found in superblock.  (%s = %N).\n",
	  PROMPT_NONE, PF_PREEN_NO },
	{ PR_0_INODE_COUNT_WRONG, "PR_0_INODE_COUNT_WRONG", "Inode count in superblock is %i, should be %j.\n",
	  PROMPT_FIX, PF_AFTER_NO },
	{ PR_0_INODE_COUNT_BIG, "PR_0_INODE_COUNT_BIG", "Superblock would have too many inodes (%N).\n",
	  PROMPT_NONE, PF_PREEN_NO },
	{ PR_0_NONZERO_RESERVED_GDT_BLOCKS, "PR_0_NONZERO_RESERVED_GDT_BLOCKS",
	  "Filesystem does not have resize_inode enabled, but s_reserved_gdt_blocks\nis %N; should be zero.  ",
	  PROMPT_FIX, PF_AFTER_NO },
	{ PR_0_CLEAR_RESIZE_INODE, "PR_0_CLEAR_RESIZE_INODE",
	  "Resize_inode not enabled, but the resize inode is non-zero.  ", PROMPT_CLEAR, PF_AFTER_NO },
	{ PR_0_FUTURE_SB_LAST_MOUNT, "PR_0_FUTURE_SB_LAST_MOUNT",
	  "Superblock last mount time (%s,\n\tnow = %n) is in the future.\n", PROMPT_FIX,
	  PF_PREEN_OK | PF_NOT_AN_ERROR },
	{ PR_0_FUTURE_SB_LAST_WRITE, "PR_0_FUTURE_SB_LAST_WRITE",
	  "Superblock last write time (%s,\n\tnow = %n) is in the future.\n", PROMPT_FIX,
	  PF_PREEN_OK | PF_NOT_AN_ERROR },
	{ PR_0_FUTURE_SB_LAST_MOUNT_FUDGED, "PR_0_FUTURE_SB_LAST_MOUNT_FUDGED",
	  "Superblock last mount time is in the future.\n\t(by less than a day, probably due to the hardware "
	  "clock being incorrectly set)\n", PROMPT_NONE, PF_PREEN_OK | PF_NOT_AN_ERROR },
	{ PR_0_FUTURE_SB_LAST_WRITE_FUDGED, "PR_0_FUTURE_SB_LAST_WRITE_FUDGED",
	  "Superblock last write time is in the future.\n\t(by less than a day, probably due to the hardware "
	  "clock being incorrectly set)\n", PROMPT_NONE, PF_PREEN_OK | PF_NOT_AN_ERROR },
	{ PR_0_GDT_UNINIT, "PR_0_GDT_UNINIT", "Group descriptor %g marked uninitialized without feature set.\n",
	  PROMPT_FIX, PF_PREEN_OK | PF_AFTER_NO },
	{ PR_0_BB_UNINIT_LAST, "PR_0_BB_UNINIT_LAST", "Last group block bitmap uninitialized.  ", PROMPT_FIX,
	  PF_PREEN_OK | PF_AFTER_NO },
	{ PR_0_OPEN_FAILED, "PR_0_OPEN_FAILED", "ext2fs_open2: %s\n", PROMPT_NONE, 0 },
	{ PR_0_CHECK_DESC_FAILED, "PR_0_CHECK_DESC_FAILED", "ext2fs_check_desc: %s\n", PROMPT_NONE, 0 },
	{ PR_0_META_AND_GDT_CSUM_SET, "PR_0_META_AND_GDT_CSUM_SET",
	  "Superblock metadata_csum supersedes uninit_bg; both feature bits cannot be set simultaneously.",
	  PROMPT_FIX, PF_PREEN_OK | PF_NOT_AN_ERROR },
	{ PR_0_BAD_MIN_EXTRA_ISIZE, "PR_0_BAD_MIN_EXTRA_ISIZE", "Bad required extra isize in superblock (%N).  ",
	  PROMPT_FIX, PF_AFTER_NO },
	{ PR_0_BAD_WANT_EXTRA_ISIZE, "PR_0_BAD_WANT_EXTRA_ISIZE", "Bad desired extra isize in superblock (%N).  ",
	  PROMPT_FIX, PF_AFTER_NO },
	{ PR_0_GDT_CSUM_LATCH, "PR_0_GDT_CSUM_LATCH",
	  "One or more block group descriptor checksums are invalid.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_0_GDT_CSUM, "PR_0_GDT_CSUM",
	  "Group descriptor %g checksum is %x, should be %y.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_0_GDT_ITABLE_UNUSED, "PR_0_GDT_ITABLE_UNUSED",
	  "Group descriptor %g has invalid unused inodes count %N.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_0_ORPHAN_CLEAR_INODE, "PR_0_ORPHAN_CLEAR_INODE", "%s orphaned inode %i %n\n", PROMPT_NONE,
	  PF_PREEN_OK },
	{ PR_0_ORPHAN_ILLEGAL_HEAD_INODE, "PR_0_ORPHAN_ILLEGAL_HEAD_INODE",
	  "Illegal orphaned inode %i in superblock.\n", PROMPT_NONE, PF_PREEN_OK },
	{ PR_0_ORPHAN_ILLEGAL_INODE, "PR_0_ORPHAN_ILLEGAL_INODE", "Illegal inode %i in orphaned inode list.\n",
	  PROMPT_NONE, PF_PREEN_OK },
};

const struct problem_table problems_pass0 = { rows, sizeof(rows) / sizeof(rows[0]) };
