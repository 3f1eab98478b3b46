/*
 * problems_pass3.c - problems found in pass 3 (directory connectivity), while
 * reconnecting files to /lost+found and in pass 3A, in e2fsck's words.
 */
#include "config.h"
#include "problem.h"
#include "problems_dirs.h"

static const struct problem rows[] = {
	{ PR_3_NO_ROOT_INODE, "PR_3_NO_ROOT_INODE", "Root inode not allocated.  ", PROMPT_ALLOCATE, 0 },
	/* %p: the path of the directory its '..' names */
	{ PR_3_UNCONNECTED_DIR, "PR_3_UNCONNECTED_DIR", "Unconnected directory inode %i (was in %p)\n",
	  PROMPT_CONNECT, 0 },
	{ PR_3_NO_LF_DIR, "PR_3_NO_LF_DIR", "/lost+found not found.  ", PROMPT_CREATE, PF_PREEN_OK },
	/* %p the directory, %P what its '..' names, %q its parent */
	{ PR_3_BAD_DOT_DOT, "PR_3_BAD_DOT_DOT", "'..' in %p (%i) is %P (%j), should be %q (%d).\n",
	  PROMPT_FIX, 0 },
	{ PR_3_EXPAND_LF_DIR, "PR_3_EXPAND_LF_DIR", "No room in lost+found directory.  ", PROMPT_EXPAND, 0 },
	{ PR_3_NO_LPF, "PR_3_NO_LPF", "Bad or non-existent /lost+found.  Cannot reconnect.\n", PROMPT_NONE,
	  0 },
	{ PR_3_CANT_EXPAND_LPF, "PR_3_CANT_EXPAND_LPF", "Could not expand /lost+found: %m\n", PROMPT_NONE, 0 },
	{ PR_3_CANT_RECONNECT, "PR_3_CANT_RECONNECT", "Could not reconnect %i: %m\n", PROMPT_NONE, 0 },
	{ PR_3_ERR_FIND_LPF, "PR_3_ERR_FIND_LPF", "Error while trying to find /lost+found: %m\n",
	  PROMPT_NONE, 0 },
	{ PR_3_ADJUST_INODE, "PR_3_ADJUST_INODE", "Error while adjusting inode count on inode %i\n",
	  PROMPT_NONE, 0 },
	{ PR_3_FIX_PARENT_ERR, "PR_3_FIX_PARENT_ERR", "Couldn't fix parent of inode %i: %m\n\n", PROMPT_NONE,
	  0 },
	{ PR_3_FIX_PARENT_NOFIND, "PR_3_FIX_PARENT_NOFIND",
	  "Couldn't fix parent of inode %i: Couldn't find parent directory entry\n\n", PROMPT_NONE, 0 },
	{ PR_3_CREATE_ROOT_ERROR, "PR_3_CREATE_ROOT_ERROR", "Error creating root directory (%s): %m\n",
	  PROMPT_NONE, PF_FATAL },
	{ PR_3_CREATE_LPF_ERROR, "PR_3_CREATE_LPF_ERROR", "Error creating /lost+found directory (%s): %m\n",
	  PROMPT_NONE, 0 },
	{ PR_3_ROOT_NOT_DIR_ABORT, "PR_3_ROOT_NOT_DIR_ABORT", "Root inode is not a directory; aborting.\n",
	  PROMPT_NONE, PF_FATAL },
	{ PR_3_NO_ROOT_INODE_ABORT, "PR_3_NO_ROOT_INODE_ABORT", "Cannot proceed without a root inode.\n",
	  PROMPT_NONE, PF_FATAL },
	{ PR_3_LPF_NOTDIR, "PR_3_LPF_NOTDIR", "/lost+found is not a directory (ino=%i)\n", PROMPT_UNLINK, 0 },
	/* A yes unlinks it (a new one is made) and, as it was a directory, starts the check again. */
	{ PR_3_LPF_INLINE_DATA, "PR_3_LPF_INLINE_DATA", "/lost+found has inline data\n", PROMPT_CLEAR, 0 },
	/* No block or inode left for /lost+found: a yes puts what is lost into the root directory. */
	{ PR_3_LPF_NO_SPACE, "PR_3_LPF_NO_SPACE",
	  "Cannot allocate space for /lost+found.\nPlace lost files in root directory instead", PROMPT_NULL, 0 },
	{ PR_3_NO_SPACE_TO_RECOVER, "PR_3_NO_SPACE_TO_RECOVER",
	  "Insufficient space to recover lost files!\nMove data off the filesystem and re-run e2fsck.\n\n", PROMPT_NONE,
	  0 },
	/* %m: e2fsprogs' words for the allocation failure, as e2fsck names the library call. */
	{ PR_3_ERR_LPF_NEW_BLOCK, "PR_3_ERR_LPF_NEW_BLOCK",
	  "ext2fs_new_block: %m while trying to create /lost+found directory\n", PROMPT_NONE, 0 },
	{ PR_3_ERR_LPF_NEW_INODE, "PR_3_ERR_LPF_NEW_INODE",
	  "ext2fs_new_inode: %m while trying to create /lost+found directory\n", PROMPT_NONE, 0 },
	{ PR_3_ERR_LPF_WRITE_BLOCK, "PR_3_ERR_LPF_WRITE_BLOCK",
	  "ext2fs_write_dir_block: %m while writing the directory block for /lost+found\n", PROMPT_NONE, 0 },
	/* The same for an encrypted one: the kernel could not add entries with names in the clear. */
	{ PR_3_LPF_ENCRYPTED, "PR_3_LPF_ENCRYPTED", "/lost+found is encrypted\n", PROMPT_CLEAR, 0 },
	/* Pass 3A: %q the directory, %s what went wrong */
	{ PR_3A_OPTIMIZE_DIR_ERR, "PR_3A_OPTIMIZE_DIR_ERR", "Failed to optimize directory %q (%d): %s\n",
	  PROMPT_NONE, 0 },
};

const struct problem_table problems_pass3 = { rows, sizeof(rows) / sizeof(rows[0]) };
