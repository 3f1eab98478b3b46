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
