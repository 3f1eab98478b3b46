/*
 * problems_pass4.c - problems found in pass 4 (reference counts), in
 * e2fsck's words.
 */
#include "config.h"
#include "problem.h"
#include "problems_dirs.h"

static const struct problem rows[] = {
	/* Declining leaves an unattached inode, which is asked about next. */
	{ PR_4_ZERO_LEN_INODE, "PR_4_ZERO_LEN_INODE", "Unattached zero-length inode %i.  ", PROMPT_CLEAR,
	  PF_PREEN_OK | PF_NOT_AN_ERROR },
	{ PR_4_UNATTACHED_INODE, "PR_4_UNATTACHED_INODE", "Unattached inode %i\n", PROMPT_CONNECT, 0 },
	/* %M the count on disk, %N the entries naming the inode */
	{ PR_4_BAD_REF_COUNT, "PR_4_BAD_REF_COUNT", "Inode %i ref count is %M, should be %N.  ", PROMPT_FIX,
	  PF_PREEN_OK },
	{ PR_4_EA_INODE_REF_COUNT, "PR_4_EA_INODE_REF_COUNT",
	  "Extended attribute inode %i ref count is %N, should be %M. ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_4_DIR_NLINK_FEATURE, "PR_4_DIR_NLINK_FEATURE",
	  "Directory exceeds max links, but no DIR_NLINK feature in superblock.\n", PROMPT_FIX, 0 },
	{ PR_4_DIR_OVERFLOW_REF_COUNT, "PR_4_DIR_OVERFLOW_REF_COUNT",
	  "Directory inode %i ref count set to overflow but could be exact value %N.  ", PROMPT_FIX,
	  PF_PREEN_OK },
};

const struct problem_table problems_pass4 = { rows, sizeof(rows) / sizeof(rows[0]) };
