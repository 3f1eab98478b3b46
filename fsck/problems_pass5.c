/*
 * problems_pass5.c - problems found in pass 5, in e2fsck's words.  The
 * bitmap differences are a header, one item per block or range, and an
 * end line that asks; preen mode repairs them without a word, as e2fsck.
 * The padding and checksum problems come after them, as in e2fsck.
 */
#include "config.h"
#include "problem.h"
#include "problems.h"

#define QUIET (PF_PREEN_OK | PF_PREEN_NOMSG)

static const struct problem rows[] = {
	{ PR_5_INODE_BMAP_PADDING, "PR_5_INODE_BMAP_PADDING", "Padding at end of inode bitmap is not set. ",
	  PROMPT_FIX, PF_PREEN_OK },
	{ PR_5_BLOCK_BMAP_PADDING, "PR_5_BLOCK_BMAP_PADDING", "Padding at end of block bitmap is not set. ",
	  PROMPT_FIX, PF_PREEN_OK },
	{ PR_5_BLOCK_BITMAP_HEADER, "PR_5_BLOCK_BITMAP_HEADER", "Block bitmap differences: ", PROMPT_NONE, QUIET },
	{ PR_5_BLOCK_UNUSED, "PR_5_BLOCK_UNUSED", " -%b", PROMPT_NONE, QUIET },
	{ PR_5_BLOCK_USED, "PR_5_BLOCK_USED", " +%b", PROMPT_NONE, QUIET },
	{ PR_5_BLOCK_RANGE_UNUSED, "PR_5_BLOCK_RANGE_UNUSED", " -(%b--%c)", PROMPT_NONE, QUIET },
	{ PR_5_BLOCK_RANGE_USED, "PR_5_BLOCK_RANGE_USED", " +(%b--%c)", PROMPT_NONE, QUIET },
	{ PR_5_BLOCK_BITMAP_END, "PR_5_BLOCK_BITMAP_END", "\n", PROMPT_FIX, QUIET },
	{ PR_5_INODE_BITMAP_HEADER, "PR_5_INODE_BITMAP_HEADER", "Inode bitmap differences: ", PROMPT_NONE, QUIET },
	{ PR_5_INODE_UNUSED, "PR_5_INODE_UNUSED", " -%i", PROMPT_NONE, QUIET },
	{ PR_5_INODE_USED, "PR_5_INODE_USED", " +%i", PROMPT_NONE, QUIET },
	{ PR_5_INODE_RANGE_UNUSED, "PR_5_INODE_RANGE_UNUSED", " -(%i--%j)", PROMPT_NONE, QUIET },
	{ PR_5_INODE_RANGE_USED, "PR_5_INODE_RANGE_USED", " +(%i--%j)", PROMPT_NONE, QUIET },
	{ PR_5_INODE_BITMAP_END, "PR_5_INODE_BITMAP_END", "\n", PROMPT_FIX, QUIET },
	/*
	 * Asked for each item used but unmarked in a group whose flag says
	 * nothing is (e2fsck asks again for every one until a yes clears it).
	 */
	{ PR_5_BLOCK_UNINIT, "PR_5_BLOCK_UNINIT", "Group %g block(s) in use but group is marked BLOCK_UNINIT\n",
	  PROMPT_FIX, PF_PREEN_OK },
	{ PR_5_INODE_UNINIT, "PR_5_INODE_UNINIT", "Group %g inode(s) in use but group is marked INODE_UNINIT\n",
	  PROMPT_FIX, PF_PREEN_OK },
	{ PR_5_FREE_BLOCK_COUNT_GROUP, "PR_5_FREE_BLOCK_COUNT_GROUP",
	  "Free blocks count wrong for group #%g (%M, counted=%N).\n", PROMPT_FIX, QUIET },
	/* The kernel does not keep the superblock's totals exact: "no" is not an error. */
	{ PR_5_FREE_BLOCK_COUNT, "PR_5_FREE_BLOCK_COUNT", "Free blocks count wrong (%M, counted=%N).\n",
	  PROMPT_FIX, QUIET | PF_NOT_AN_ERROR },
	{ PR_5_FREE_INODE_COUNT_GROUP, "PR_5_FREE_INODE_COUNT_GROUP",
	  "Free inodes count wrong for group #%g (%M, counted=%N).\n", PROMPT_FIX, QUIET },
	{ PR_5_FREE_DIR_COUNT_GROUP, "PR_5_FREE_DIR_COUNT_GROUP",
	  "Directories count wrong for group #%g (%M, counted=%N).\n", PROMPT_FIX, QUIET },
	{ PR_5_FREE_INODE_COUNT, "PR_5_FREE_INODE_COUNT", "Free inodes count wrong (%M, counted=%N).\n",
	  PROMPT_FIX, QUIET | PF_NOT_AN_ERROR },
	/*
	 * Latched under the differences' header (problem.c): the header opens
	 * them, and each ends in FIXED. or IGNORED. instead of a question.
	 */
	{ PR_5_INODE_BITMAP_CSUM_INVALID, "PR_5_INODE_BITMAP_CSUM_INVALID",
	  "Group %g inode bitmap does not match checksum.\n", PROMPT_FIX, PF_PREEN_OK },
	{ PR_5_BLOCK_BITMAP_CSUM_INVALID, "PR_5_BLOCK_BITMAP_CSUM_INVALID",
	  "Group %g block bitmap does not match checksum.\n", PROMPT_FIX, PF_PREEN_OK },
};

const struct problem_table problems_pass5 = { rows, sizeof(rows) / sizeof(rows[0]) };
