/*
 * problems_pass1.c - problems found in pass 1, in e2fsck's words.
 */
#include "config.h"
#include "problem.h"
#include "problems.h"

static const struct problem rows[] = {
	{ PR_1_ROOT_NO_DIR, "PR_1_ROOT_NO_DIR", "Root inode is not a directory.  ", PROMPT_CLEAR,
	  PF_CHECK_ONLY },
	{ PR_1_ZERO_DTIME, "PR_1_ZERO_DTIME", "Deleted inode %i has zero dtime.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_1_LOW_DTIME, "PR_1_LOW_DTIME", "Inode %i was part of the orphaned inode list.  ", PROMPT_FIX,
	  PF_PREEN_OK },
	{ PR_1_ORPHAN_LIST_REFUGEES, "PR_1_ORPHAN_LIST_REFUGEES",
	  "Inodes that were part of a corrupted orphan linked list found.  ", PROMPT_FIX, 0 },
	{ PR_1_SET_DTIME, "PR_1_SET_DTIME", "Inode %i is in use, but has dtime set.  ", PROMPT_FIX,
	  PF_PREEN_OK },
	{ PR_1_BAD_I_SIZE, "PR_1_BAD_I_SIZE", "Inode %i, i_size is %M, should be %N.  ", PROMPT_FIX,
	  PF_PREEN_OK },
	{ PR_1_BAD_I_BLOCKS, "PR_1_BAD_I_BLOCKS", "Inode %i, i_blocks is %M, should be %N.  ", PROMPT_FIX,
	  PF_PREEN_OK },
	{ PR_1_ILLEGAL_BLOCKS, "PR_1_ILLEGAL_BLOCKS", "Inode %i has illegal block(s).  ", PROMPT_CLEAR,
	  PF_CHECK_ONLY },
	{ PR_1_TOOBIG_DIR, "PR_1_TOOBIG_DIR", "Block #%N (%b) causes directory to be too big.  ", PROMPT_CLEAR,
	  PF_CHECK_ONLY },
	{ PR_1_BAD_EA_BLOCK, "PR_1_BAD_EA_BLOCK", "Inode %i has a bad extended attribute block %b.  ",
	  PROMPT_CLEAR, PF_CHECK_ONLY },
	{ PR_1_READ_EA_BLOCK, "PR_1_READ_EA_BLOCK",
	  "Error reading extended attribute block %b for inode %i.  ", PROMPT_CLEAR, PF_CHECK_ONLY },
	{ PR_1_EXTATTR_REFCOUNT, "PR_1_EXTATTR_REFCOUNT",
	  "Extended attribute block %b has reference count %M, should be %N.  ", PROMPT_FIX, PF_CHECK_ONLY },
	{ PR_1_READ_EXTENT, "PR_1_READ_EXTENT", "Error while reading over extent tree in inode %i: %s\n",
	  PROMPT_CLEAR_INODE, PF_CHECK_ONLY },
	{ PR_1_INODE_ONLY_CSUM_INVALID, "PR_1_INODE_ONLY_CSUM_INVALID",
	  "Inode %i passes checks, but checksum does not match inode.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_1B_DUP_UNRESOLVED, "PR_1B_DUP_UNRESOLVED",
	  "%N block(s) are claimed by more than one inode or by file system metadata.\n",
	  PROMPT_CLONE, PF_CHECK_ONLY },
};

const struct problem_table problems_pass1 = { rows, sizeof(rows) / sizeof(rows[0]) };
