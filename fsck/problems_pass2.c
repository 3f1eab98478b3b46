/*
 * problems_pass2.c - problems found in pass 2 (directory structure), in
 * e2fsck's words.  "Entry '%n' in %p (%i)" is e2fsck's "@E": the entry's
 * name, the directory's path and inode; "block #%b" is a logical block of
 * the directory.
 */
#include "config.h"
#include "problem.h"
#include "problems_dirs.h"

#define ENTRY "Entry '%n' in %p (%i)"
#define ENTRY_LC "entry '%n' in %p (%i)"
#define HTREE "Problem in HTREE directory inode %d"
#define FOR_INODE "for inode %i (%p) is"

static const struct problem rows[] = {
	/* htree roots: e2fsck checks these in its pass 1 */
	{ PR_1_HTREE_SET, "PR_1_HTREE_SET",
	  "Inode %i has INDEX_FL flag set on filesystem without htree support.\n", PROMPT_CLEAR_HTREE,
	  PF_PREEN_OK },
	/* A file that is no directory: asked in pass 1, which meets such files (pass1.c). */
	{ PR_1_HTREE_NODIR, "PR_1_HTREE_NODIR", "Inode %i has INDEX_FL flag set but is not a directory.\n",
	  PROMPT_CLEAR_HTREE, PF_PREEN_OK },
	{ PR_1_HTREE_BADROOT, "PR_1_HTREE_BADROOT", "HTREE directory inode %i has an invalid root node.\n",
	  PROMPT_CLEAR_HTREE, PF_PREEN_OK },
	{ PR_1_HTREE_HASHV, "PR_1_HTREE_HASHV",
	  "HTREE directory inode %i has an unsupported hash version (%N)\n", PROMPT_CLEAR_HTREE,
	  PF_PREEN_OK },
	{ PR_1_HTREE_INCOMPAT, "PR_1_HTREE_INCOMPAT",
	  "HTREE directory inode %i uses an incompatible htree root node flag.\n", PROMPT_CLEAR_HTREE,
	  PF_PREEN_OK },
	{ PR_1_HTREE_DEPTH, "PR_1_HTREE_DEPTH",
	  "HTREE directory inode %i has a tree depth (%N) which is too big\n", PROMPT_CLEAR_HTREE,
	  PF_PREEN_OK },
	/* Encrypted and casefolded directories file names under SipHash, the others never. */
	{ PR_1_HTREE_NEEDS_SIPHASH, "PR_1_HTREE_NEEDS_SIPHASH",
	  "HTREE directory inode %i uses hash version (%N), but should use SipHash (6) \n", PROMPT_CLEAR_HTREE,
	  PF_PREEN_OK },
	{ PR_1_HTREE_CANNOT_SIPHASH, "PR_1_HTREE_CANNOT_SIPHASH",
	  "HTREE directory inode %i uses SipHash, but should not.  ", PROMPT_CLEAR_HTREE, PF_PREEN_OK },

	{ PR_2_BAD_INODE_DOT, "PR_2_BAD_INODE_DOT", "Invalid inode number for '.' in directory inode %i.\n",
	  PROMPT_FIX, 0 },
	{ PR_2_BAD_INO, "PR_2_BAD_INO", ENTRY " has invalid inode #: %j.\n", PROMPT_CLEAR, 0 },
	/* The inode's table block is on the bad-block list: "Clear" drops the entry; kept, e2fsck asks once more. */
	{ PR_2_BB_INODE, "PR_2_BB_INODE", ENTRY " points to inode (%j) located in a bad block.\n", PROMPT_CLEAR, 0 },
	{ PR_2_UNUSED_INODE, "PR_2_UNUSED_INODE", ENTRY " has deleted/unused inode %j.  ", PROMPT_CLEAR,
	  PF_PREEN_OK },
	{ PR_2_LINK_DOT, "PR_2_LINK_DOT", ENTRY " is a link to '.'  ", PROMPT_CLEAR, 0 },
	{ PR_2_LINK_DIR, "PR_2_LINK_DIR", ENTRY " is a link to directory %P (%j).\n", PROMPT_CLEAR, 0 },
	{ PR_2_LINK_ROOT, "PR_2_LINK_ROOT", ENTRY " is a link to the root inode.\n", PROMPT_CLEAR, 0 },
	{ PR_2_BAD_NAME, "PR_2_BAD_NAME", ENTRY " has illegal characters in its name.\n", PROMPT_FIX, 0 },
	{ PR_2_MISSING_DOT, "PR_2_MISSING_DOT", "Missing '.' in directory inode %i.\n", PROMPT_FIX, 0 },
	{ PR_2_MISSING_DOT_DOT, "PR_2_MISSING_DOT_DOT", "Missing '..' in directory inode %i.\n", PROMPT_FIX,
	  0 },
	{ PR_2_1ST_NOT_DOT, "PR_2_1ST_NOT_DOT",
	  "First entry '%n' (inode=%j) in directory inode %i (%p) should be '.'\n", PROMPT_FIX, 0 },
	{ PR_2_2ND_NOT_DOT_DOT, "PR_2_2ND_NOT_DOT_DOT",
	  "Second entry '%n' (inode=%j) in directory inode %i should be '..'\n", PROMPT_FIX, 0 },
	/*
	 * e2fsck's questions about an inode pass 1 found damaged, asked at each
	 * entry naming it: %i the inode, %p its path, %N the field's value.
	 */
	{ PR_2_FADDR_ZERO, "PR_2_FADDR_ZERO", "i_faddr " FOR_INODE " %N, should be zero.\n", PROMPT_CLEAR, 0 },
	{ PR_2_FILE_ACL_ZERO, "PR_2_FILE_ACL_ZERO", "i_file_acl " FOR_INODE " %N, should be zero.\n", PROMPT_CLEAR,
	  0 },
	{ PR_2_DIR_ACL_ZERO, "PR_2_DIR_ACL_ZERO", "i_size_high " FOR_INODE " %N, should be zero.\n", PROMPT_CLEAR,
	  0 },
	/* The Hurd's fields: e4fsck checks them as e2fsck does, on file systems the Hurd created. */
	{ PR_2_FRAG_ZERO, "PR_2_FRAG_ZERO", "i_frag " FOR_INODE " %N, should be zero.\n", PROMPT_CLEAR, 0 },
	{ PR_2_FSIZE_ZERO, "PR_2_FSIZE_ZERO", "i_fsize " FOR_INODE " %N, should be zero.\n", PROMPT_CLEAR, 0 },
	{ PR_2_BLOCKS_HI_ZERO, "PR_2_BLOCKS_HI_ZERO", "i_blocks_hi " FOR_INODE " %N, should be zero.\n",
	  PROMPT_CLEAR, 0 },
	/* A yes clears the index (pass 3A builds a new one); a no ends the check, as it ends e2fsck's. */
	{ PR_2_UNEXPECTED_HTREE_BLOCK, "PR_2_UNEXPECTED_HTREE_BLOCK",
	  "Unexpected block in HTREE directory inode %d (%q).\n", PROMPT_CLEAR_HTREE, 0 },
	{ PR_2_FILE_ACL_HI_ZERO, "PR_2_FILE_ACL_HI_ZERO", "i_file_acl_hi " FOR_INODE " %N, should be zero.\n",
	  PROMPT_CLEAR, PF_PREEN_OK },
	/* A yes clears the inode and the entry. */
	{ PR_2_BAD_CHAR_DEV, "PR_2_BAD_CHAR_DEV", "Inode %i (%p) is an illegal character device.\n", PROMPT_CLEAR,
	  0 },
	{ PR_2_BAD_BLOCK_DEV, "PR_2_BAD_BLOCK_DEV", "Inode %i (%p) is an illegal block device.\n", PROMPT_CLEAR, 0 },
	{ PR_2_BAD_FIFO, "PR_2_BAD_FIFO", "Inode %i (%p) is an illegal FIFO.\n", PROMPT_CLEAR, 0 },
	{ PR_2_BAD_SOCKET, "PR_2_BAD_SOCKET", "Inode %i (%p) is an illegal socket.\n", PROMPT_CLEAR, 0 },
	{ PR_2_INVALID_SYMLINK, "PR_2_INVALID_SYMLINK", "Symlink %p (inode #%i) is invalid.\n", PROMPT_CLEAR, 0 },
	/* %i is the damaged inode here, %p its path, %s its mode in octal */
	{ PR_2_BAD_MODE, "PR_2_BAD_MODE", "Inode %i (%p) has invalid mode (%s).\n", PROMPT_CLEAR, 0 },
	{ PR_2_FILE_ACL_BAD, "PR_2_FILE_ACL_BAD", "Extended attribute block for inode %i (%p) is invalid (%N).\n",
	  PROMPT_CLEAR, 0 },
	{ PR_2_DIR_CORRUPTED, "PR_2_DIR_CORRUPTED",
	  "Directory inode %i, block #%b, offset %N: directory corrupted\n", PROMPT_SALVAGE, 0 },
	/*
	 * e2fsck 1.47 never raises these two: a name length is one byte, so never
	 * above 255, and a record running past the block is "directory corrupted"
	 * and salvaged, so the last one always ends at the block's end.  Listed
	 * for --json's names and for completeness.
	 */
	{ PR_2_FILENAME_LONG, "PR_2_FILENAME_LONG", "Directory inode %i, block #%b, offset %N: filename too long\n",
	  PROMPT_TRUNCATE, 0 },
	{ PR_2_FINAL_RECLEN, "PR_2_FINAL_RECLEN", ENTRY " has rec_len of %M, should be %N.\n", PROMPT_FIX, 0 },
	{ PR_2_DIRECTORY_HOLE, "PR_2_DIRECTORY_HOLE",
	  "Directory inode %i has an unallocated block #%b.  ", PROMPT_ALLOCATE, 0 },
	{ PR_2_DOT_NULL_TERM, "PR_2_DOT_NULL_TERM",
	  "'.' directory entry in directory inode %i is not NULL terminated\n", PROMPT_FIX, 0 },
	{ PR_2_DOT_DOT_NULL_TERM, "PR_2_DOT_DOT_NULL_TERM",
	  "'..' directory entry in directory inode %i is not NULL terminated\n", PROMPT_FIX, 0 },
	{ PR_2_DUP_DOT, "PR_2_DUP_DOT", ENTRY " is duplicate '.' entry.\n", PROMPT_FIX, 0 },
	{ PR_2_DUP_DOT_DOT, "PR_2_DUP_DOT_DOT", ENTRY " is duplicate '..' entry.\n", PROMPT_FIX, 0 },
	/* %c: the physical block.  "Continue" goes on without the block; a no ends the check (e2fsck's abort). */
	{ PR_2_READ_DIRBLOCK, "PR_2_READ_DIRBLOCK", "Error reading directory block %c (inode %i): %m\n",
	  PROMPT_CONTINUE, 0 },
	{ PR_2_WRITE_DIRBLOCK, "PR_2_WRITE_DIRBLOCK", "Error writing directory block %c (inode %i): %m\n",
	  PROMPT_CONTINUE, 0 },
	/* A hole with no free block to fill it: it stays, and the check goes on. */
	{ PR_2_ALLOC_DIRBOCK, "PR_2_ALLOC_DIRBOCK", "Error allocating new directory block for inode %i (%s): %m\n",
	  PROMPT_NONE, 0 },
	{ PR_2_DEALLOC_INODE, "PR_2_DEALLOC_INODE", "Error deallocating inode %i: %m\n", PROMPT_NONE, 0 },
	{ PR_2_SPLIT_DOT, "PR_2_SPLIT_DOT", "Directory entry for '.' in %p (%i) is big.\n", PROMPT_SPLIT,
	  PF_NOT_AN_ERROR },
	/* No question: repaired when the file system is writable, not mentioned with -n. */
	{ PR_2_SET_FILETYPE, "PR_2_SET_FILETYPE", "Setting filetype for entry '%n' in %p (%i) to %N.\n",
	  PROMPT_NONE, PF_PREEN_OK },
	{ PR_2_BAD_FILETYPE, "PR_2_BAD_FILETYPE",
	  ENTRY " has an incorrect filetype (was %M, should be %N).\n", PROMPT_FIX, 0 },
	{ PR_2_FEATURE_LARGE_FILES, "PR_2_FEATURE_LARGE_FILES",
	  "Filesystem contains large files, but lacks LARGE_FILE flag in superblock.\n", PROMPT_FIX, PF_PREEN_OK },
	{ PR_2_CLEAR_FILETYPE, "PR_2_CLEAR_FILETYPE", ENTRY " has filetype set.\n", PROMPT_CLEAR,
	  PF_PREEN_OK },
	{ PR_2_NULL_NAME, "PR_2_NULL_NAME", ENTRY " has a zero-length name.\n", PROMPT_CLEAR, 0 },
	{ PR_2_HTREE_NOTREF, "PR_2_HTREE_NOTREF", HTREE ": block #%b not referenced\n", PROMPT_NONE, 0 },
	{ PR_2_HTREE_DUPREF, "PR_2_HTREE_DUPREF", HTREE ": block #%b referenced twice\n", PROMPT_NONE, 0 },
	{ PR_2_HTREE_MIN_HASH, "PR_2_HTREE_MIN_HASH", HTREE ": block #%b has bad min hash\n", PROMPT_NONE,
	  0 },
	{ PR_2_HTREE_MAX_HASH, "PR_2_HTREE_MAX_HASH", HTREE ": block #%b has bad max hash\n", PROMPT_NONE,
	  0 },
	{ PR_2_HTREE_CLEAR, "PR_2_HTREE_CLEAR", "Invalid HTREE directory inode %d (%q).  ",
	  PROMPT_CLEAR_HTREE, 0 },
	{ PR_2_HTREE_BADBLK, "PR_2_HTREE_BADBLK", HTREE " (%q): bad block number %N.\n",
	  PROMPT_CLEAR_HTREE, 0 },
	/* Asked at the end of pass 1, as e2fsck does, for the directories pass 1 counted. */
	{ PR_2_FEATURE_LARGE_DIRS, "PR_2_FEATURE_LARGE_DIRS",
	  "Filesystem has large directories, but lacks LARGE_DIR flag in superblock.\n", PROMPT_FIX, PF_PREEN_OK },
	/* %d is 0: e2fsck's context names no directory at this point, and its message says so. */
	{ PR_2_HTREE_BAD_ROOT, "PR_2_HTREE_BAD_ROOT", HTREE ": root node is invalid\n", PROMPT_CLEAR_HTREE,
	  PF_PREEN_OK },
	{ PR_2_HTREE_BAD_LIMIT, "PR_2_HTREE_BAD_LIMIT", HTREE ": block #%b has invalid limit (%N)\n",
	  PROMPT_CLEAR_HTREE, PF_PREEN_OK },
	{ PR_2_HTREE_BAD_COUNT, "PR_2_HTREE_BAD_COUNT", HTREE ": block #%b has invalid count (%N)\n",
	  PROMPT_CLEAR_HTREE, PF_PREEN_OK },
	{ PR_2_HTREE_HASH_ORDER, "PR_2_HTREE_HASH_ORDER", HTREE ": block #%b has an unordered hash table\n",
	  PROMPT_CLEAR_HTREE, PF_PREEN_OK },
	{ PR_2_HTREE_BAD_DEPTH, "PR_2_HTREE_BAD_DEPTH", HTREE ": block #%b has invalid depth (%N)\n",
	  PROMPT_NONE, 0 },
	{ PR_2_DUPLICATE_DIRENT, "PR_2_DUPLICATE_DIRENT", "Duplicate entry '%n' in %p (%i) found.  ", PROMPT_CLEAR, 0 },
	/* Pass 3A renames the second of two entries with one name (%s: the new name). */
	{ PR_2_NON_UNIQUE_FILE, "PR_2_NON_UNIQUE_FILE", "Entry '%n' in %p (%i) has a non-unique filename.\nRename to %s",
	  PROMPT_NULL, 0 },
	/* A casefolded directory in strict mode (or -E check_encoding): the name is no valid UTF-8. */
	{ PR_2_BAD_ENCODED_NAME, "PR_2_BAD_ENCODED_NAME", ENTRY " has illegal UTF-8 characters in its name.\n",
	  PROMPT_FIX, 0 },
	/* Pass 3A, an encrypted directory: a name given twice cannot be renamed without the key. */
	{ PR_2_NON_UNIQUE_FILE_NO_RENAME, "PR_2_NON_UNIQUE_FILE_NO_RENAME", "Duplicate filename entry '%n' in %p (%i) found.  ",
	  PROMPT_CLEAR, 0 },
	{ PR_2_REPORT_DUP_DIRENT, "PR_2_REPORT_DUP_DIRENT",
	  "Duplicate entry '%n' found.\n\tMarking %p (%i) to be rebuilt.\n\n", PROMPT_NONE, 0 },
	/* A yes opens the group's skipped inodes to pass 1, and the check starts again after pass 2's blocks. */
	{ PR_2_INOREF_BG_INO_UNINIT, "PR_2_INOREF_BG_INO_UNINIT",
	  ENTRY " references inode %j in group %g where _INODE_UNINIT is set.\n", PROMPT_FIX, PF_PREEN_OK },
	{ PR_2_INOREF_IN_UNUSED, "PR_2_INOREF_IN_UNUSED",
	  ENTRY " references inode %j found in group %g's unused inodes area.\n", PROMPT_FIX, PF_PREEN_OK },
	{ PR_2_HTREE_ROOT_CSUM_INVALID, "PR_2_HTREE_ROOT_CSUM_INVALID", HTREE ": root node fails checksum.\n",
	  PROMPT_CLEAR_HTREE, PF_PREEN_OK },
	{ PR_2_HTREE_NODE_CSUM_INVALID, "PR_2_HTREE_NODE_CSUM_INVALID",
	  HTREE ": internal node fails checksum.\n", PROMPT_CLEAR_HTREE, PF_PREEN_OK },
	{ PR_2_LEAF_NODE_MISSING_CSUM, "PR_2_LEAF_NODE_MISSING_CSUM",
	  "Directory inode %i, block #%b, offset %N: directory has no checksum.\n", PROMPT_FIX,
	  PF_PREEN_OK },
	/* Entries of an encrypted directory (encrypt.h): a yes clears the entry. */
	{ PR_2_BAD_ENCRYPTED_NAME, "PR_2_BAD_ENCRYPTED_NAME", "Encrypted " ENTRY_LC " is too short.\n",
	  PROMPT_CLEAR, 0 },
	{ PR_2_UNENCRYPTED_FILE, "PR_2_UNENCRYPTED_FILE", "Encrypted " ENTRY_LC " references unencrypted inode %j.\n",
	  PROMPT_CLEAR, 0 },
	{ PR_2_INCONSISTENT_ENCRYPTION_POLICY, "PR_2_INCONSISTENT_ENCRYPTION_POLICY",
	  "Encrypted " ENTRY_LC " references inode %j, which has a different encryption policy.\n", PROMPT_CLEAR, 0 },
	{ PR_2_LEAF_NODE_ONLY_CSUM_INVALID, "PR_2_LEAF_NODE_ONLY_CSUM_INVALID",
	  "Directory inode %i, block #%b: directory passes checks but fails checksum.\n", PROMPT_FIX,
	  PF_PREEN_OK },
	/* An inline directory's area (i_block and system.data) must end on a record boundary (a multiple of 4). */
	{ PR_2_BAD_INLINE_DIR_SIZE, "PR_2_BAD_INLINE_DIR_SIZE",
	  "Inline directory inode %i size (%N) must be a multiple of 4.\n", PROMPT_FIX, 0 },
	{ PR_2_FIX_INLINE_DIR_FAILED, "PR_2_FIX_INLINE_DIR_FAILED",
	  "Fixing size of inline directory inode %i failed.\n", PROMPT_TRUNCATE, 0 },
};

const struct problem_table problems_pass2 = { rows, sizeof(rows) / sizeof(rows[0]) };
