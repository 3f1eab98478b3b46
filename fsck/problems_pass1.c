/*
 * problems_pass1.c - problems found in pass 1, in e2fsck's words.
 */
#include "config.h"
#include "problem.h"
#include "problems.h"

static const struct problem rows[] = {
	/* Group metadata on blocks other metadata took first (pass 1's claim); a yes relocates it (relocate.c). */
	{ PR_1_BB_CONFLICT, "PR_1_BB_CONFLICT", "Group %g's block bitmap at %b conflicts with some other fs block.\n",
	  PROMPT_RELOCATE, 0 },
	{ PR_1_IB_CONFLICT, "PR_1_IB_CONFLICT", "Group %g's inode bitmap at %b conflicts with some other fs block.\n",
	  PROMPT_RELOCATE, 0 },
	{ PR_1_ITABLE_CONFLICT, "PR_1_ITABLE_CONFLICT",
	  "Group %g's inode table at %b conflicts with some other fs block.\n", PROMPT_RELOCATE, 0 },
	/* The relocation at the end of pass 1 (relocate.c): %s names the table, %N its length. */
	{ PR_1_RELOC_BLOCK_ALLOCATE, "PR_1_RELOC_BLOCK_ALLOCATE",
	  "Error allocating %N contiguous block(s) in block group %g for %s: %m\n", PROMPT_NONE, PF_PREEN_OK },
	{ PR_1_RELOC_MEMORY_ALLOCATE, "PR_1_RELOC_MEMORY_ALLOCATE", "Error allocating block buffer for relocating %s\n",
	  PROMPT_NONE, PF_PREEN_OK },
	{ PR_1_RELOC_FROM_TO, "PR_1_RELOC_FROM_TO", "Relocating group %g's %s from %b to %c...\n", PROMPT_NONE,
	  PF_PREEN_OK },
	{ PR_1_RELOC_TO, "PR_1_RELOC_TO", "Relocating group %g's %s to %c...\n", PROMPT_NONE, PF_PREEN_OK },
	{ PR_1_RELOC_READ_ERR, "PR_1_RELOC_READ_ERR", "Warning: could not read block %b of %s: %m\n", PROMPT_NONE,
	  PF_PREEN_OK },
	{ PR_1_RELOC_WRITE_ERR, "PR_1_RELOC_WRITE_ERR", "Warning: could not write block %b for %s: %m\n",
	  PROMPT_NONE, PF_PREEN_OK },
	/* A yes clears the root; pass 3 then offers to make a new one. */
	{ PR_1_ROOT_NO_DIR, "PR_1_ROOT_NO_DIR", "Root inode is not a directory.  ", PROMPT_CLEAR, 0 },
	/* The orphan file (orphan_file feature): e2fsck's "Clear" sets its mode to a plain regular file. */
	{ PR_1_ORPHAN_FILE_BAD_MODE, "PR_1_ORPHAN_FILE_BAD_MODE", "Orphan file inode %i is not regular file.  ",
	  PROMPT_CLEAR, PF_PREEN_OK },
	/* s_orphan_file_inum names an inode with data while the feature is off: "Clear" zeroes it. */
	{ PR_1_ORPHAN_FILE_NOT_CLEAR, "PR_1_ORPHAN_FILE_NOT_CLEAR",
	  "Orphan file inode %i is not in use, but contains data.  ", PROMPT_CLEAR, PF_PREEN_OK },
	/* An inode in use in an inode-table block most of whose records fail their checks (scan.h). */
	{ PR_1_INODE_IS_GARBAGE, "PR_1_INODE_IS_GARBAGE", "Inode %i seems to contain garbage.  ", PROMPT_CLEAR, 0 },
	{ PR_1_ROOT_DTIME, "PR_1_ROOT_DTIME", "Root inode has dtime set (probably due to old mke2fs).  ",
	  PROMPT_FIX, PF_PREEN_OK },
	/* A reserved inode (below s_first_ino) with a mode it may not have: "Clear" zeroes the mode; %p its name. */
	{ PR_1_RESERVED_BAD_MODE, "PR_1_RESERVED_BAD_MODE", "Reserved inode %i (%p) has invalid mode.  ", PROMPT_CLEAR,
	  PF_PREEN_OK },
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
	{ PR_1_INODE_BLOCK_LATCH, "PR_1_INODE_BLOCK_LATCH", "Inode %i has illegal block(s).  ", PROMPT_CLEAR, 0 },
	{ PR_1_ILLEGAL_BLOCK_NUM, "PR_1_ILLEGAL_BLOCK_NUM", "Illegal %s (%b) in inode %i.  ", PROMPT_CLEAR, 0 },
	/* A yes clears the inode and starts the check again; a no asks whether to go on quietly. */
	{ PR_1_TOO_MANY_BAD_BLOCKS, "PR_1_TOO_MANY_BAD_BLOCKS", "Too many illegal blocks in inode %i.\n",
	  PROMPT_CLEAR_INODE, PF_NOT_AN_ERROR },
	/* No message of its own: only e2fsck's "Suppress messages? " question. */
	{ PR_1_SUPPRESS_MESSAGES, "PR_1_SUPPRESS_MESSAGES", "", PROMPT_SUPPRESS, PF_NOT_AN_ERROR },
	/* Flags and sizes that do not fit the inode's kind: a yes clears the flags (the size). */
	{ PR_1_SET_IMAGIC, "PR_1_SET_IMAGIC", "Inode %i has imagic flag set.  ", PROMPT_CLEAR, 0 },
	/* Preen leaves these as they are ("IGNORED"), and a no leaves nothing e2fsck counts as an error. */
	{ PR_1_SET_IMMUTABLE, "PR_1_SET_IMMUTABLE",
	  "Special (device/socket/fifo/symlink) file (inode %i) has immutable\nor append-only flag set.  ", PROMPT_CLEAR,
	  PF_PREEN_NO | PF_NOT_AN_ERROR },
	{ PR_1_SPECIAL_EXTENTS_IDATA, "PR_1_SPECIAL_EXTENTS_IDATA",
	  "Special (device/socket/fifo) file (inode %i) has extents\nor inline-data flag set.  ", PROMPT_CLEAR,
	  PF_PREEN_NO | PF_NOT_AN_ERROR },
	/*
	 * Both the inline-data and the extents flag: e2fsck's questions, in this
	 * order, each asked after a no to the one before; a yes clears the flag
	 * (flags) the inode's i_block does not fit, or the inode.
	 */
	{ PR_1_CLEAR_INLINE_DATA_FOR_EXTENT, "PR_1_CLEAR_INLINE_DATA_FOR_EXTENT",
	  "Inode %i has extent header but inline data flag is set.\n", PROMPT_FIX, 0 },
	{ PR_1_CLEAR_EXTENT_FOR_INLINE_DATA, "PR_1_CLEAR_EXTENT_FOR_INLINE_DATA",
	  "Inode %i seems to have inline data but extent flag is set.\n", PROMPT_FIX, 0 },
	{ PR_1_CLEAR_EXTENT_INLINE_DATA_FLAGS, "PR_1_CLEAR_EXTENT_INLINE_DATA_FLAGS",
	  "Inode %i seems to have block map but inline data and extent flags set.\n", PROMPT_FIX, 0 },
	{ PR_1_CLEAR_EXTENT_INLINE_DATA_INODE, "PR_1_CLEAR_EXTENT_INLINE_DATA_INODE",
	  "Inode %i has inline data and extent flags set but i_block contains junk.\n", PROMPT_CLEAR_INODE, 0 },
	/* The inline-data flag without the feature: a yes sets the feature when system.data is there ... */
	{ PR_1_INLINE_DATA_FEATURE, "PR_1_INLINE_DATA_FEATURE",
	  "Inode %i has inline data, but superblock is missing INLINE_DATA feature\n", PROMPT_FIX, PF_PREEN_OK },
	/* ... else (or after a no) clears the inode. */
	{ PR_1_INLINE_DATA_SET, "PR_1_INLINE_DATA_SET",
	  "Inode %i has INLINE_DATA_FL flag on filesystem without inline data support.\n", PROMPT_CLEAR, 0 },
	/* No readable system.data attribute: a yes makes it an empty file (size 0, no flag, i_block zeroed). */
	{ PR_1_INLINE_DATA_NO_ATTR, "PR_1_INLINE_DATA_NO_ATTR",
	  "Inode %i has INLINE_DATA_FL flag but extended attribute not found.  ", PROMPT_TRUNCATE, 0 },
	{ PR_1_SET_NONZSIZE, "PR_1_SET_NONZSIZE", "Special (device/socket/fifo) inode %i has non-zero size.  ", PROMPT_FIX,
	  PF_PREEN_OK },
	{ PR_1_FS_REV_LEVEL, "PR_1_FS_REV_LEVEL",
	  "Filesystem has feature flag(s) set, but is a revision 0 filesystem.  ", PROMPT_FIX,
	  PF_PREEN_OK | PF_NOT_AN_ERROR },
	{ PR_1_FAST_SYMLINK_EXTENT_FL, "PR_1_FAST_SYMLINK_EXTENT_FL", "Fast symlink %i has EXTENT_FL set.  ", PROMPT_CLEAR,
	  0 },
	/* %s: the kind its mode says ("character device"...); a yes makes it a directory. */
	{ PR_1_TREAT_AS_DIRECTORY, "PR_1_TREAT_AS_DIRECTORY",
	  "Inode %i is a %s but it looks like it is really a directory.\n", PROMPT_FIX, 0 },
	/* A yes clears the inode; a no keeps it, with a map e2fsck finds empty (pass1.c). */
	/* The casefold flag off a directory, or without the feature: a yes clears the flag. */
	{ PR_1_CASEFOLD_NONDIR, "PR_1_CASEFOLD_NONDIR", "Inode %i has the casefold flag set but is not a directory.  ",
	  PROMPT_CLEAR_FLAG, 0 },
	{ PR_1_CASEFOLD_FEATURE, "PR_1_CASEFOLD_FEATURE",
	  "Directory %p has the casefold flag, but the\ncasefold feature is not enabled.  ", PROMPT_CLEAR_FLAG, 0 },
	/* The encrypt flag without a context: a yes clears the flag (encrypt.h). */
	{ PR_1_MISSING_ENCRYPTION_XATTR, "PR_1_MISSING_ENCRYPTION_XATTR",
	  "Inode %i has encrypt flag but no encryption extended attribute.\n", PROMPT_CLEAR_FLAG, 0 },
	/* A context of a known version but the wrong size, or of version 0: a yes clears the inode. */
	{ PR_1_CORRUPT_ENCRYPTION_XATTR, "PR_1_CORRUPT_ENCRYPTION_XATTR",
	  "Encrypted inode %i has corrupt encryption extended attribute.\n", PROMPT_CLEAR_INODE, 0 },
	/* The bad blocks inode with a mode, owner, links, inline data or attribute block: a yes zeroes it. */
	{ PR_1_INVALID_BAD_INODE, "PR_1_INVALID_BAD_INODE", "The bad block inode looks invalid.  ", PROMPT_CLEAR, 0 },
	/*
	 * The bad-blocks inode's list (badblocks.c).  The pointers' questions
	 * are latched under PR_1_INODE_BBLOCK_LATCH; a yes clears the pointer.
	 */
	{ PR_1_INODE_BBLOCK_LATCH, "PR_1_INODE_BBLOCK_LATCH", "Bad block inode has illegal block(s).  ", PROMPT_CLEAR,
	  0 },
	{ PR_1_BB_ILLEGAL_BLOCK_NUM, "PR_1_BB_ILLEGAL_BLOCK_NUM", "Illegal %s (%b) in bad block inode.  ", PROMPT_CLEAR,
	  0 },
	{ PR_1_BBINODE_BAD_METABLOCK, "PR_1_BBINODE_BAD_METABLOCK", "Bad block %b used as bad block inode indirect block.  ",
	  PROMPT_CLEAR, 0 },
	{ PR_1_BB_FS_BLOCK, "PR_1_BB_FS_BLOCK",
	  "Bad block inode has an indirect block (%b) that conflicts with\nfilesystem metadata.  ", PROMPT_CLEAR, 0 },
	/* After a distrusted map block of the list: a no ends the check (e2fsck's abort). */
	{ PR_1_BBINODE_BAD_METABLOCK_PROMPT, "PR_1_BBINODE_BAD_METABLOCK_PROMPT",
	  "\nThe bad block inode has probably been corrupted.  You probably\nshould stop now and run e4fsck -c to scan "
	  "for bad blocks\nin the filesystem.\n", PROMPT_CONTINUE, PF_PREEN_STOP_QUIET },
	/* The primary superblock or descriptors on the list: two messages, then "Clear" drops the entry. */
	{ PR_1_BAD_PRIMARY_SUPERBLOCK, "PR_1_BAD_PRIMARY_SUPERBLOCK", "The primary superblock (%b) is on the bad block list.\n",
	  PROMPT_NONE, 0 },
	{ PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR, "PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR",
	  "Block %b in the primary group descriptors is on the bad block list\n", PROMPT_NONE, 0 },
	{ PR_1_BAD_PRIMARY_BLOCK, "PR_1_BAD_PRIMARY_BLOCK", "\nIf the block is really bad, the filesystem can not be fixed.\n",
	  PROMPT_NONE, 0 },
	{ PR_1_BAD_PRIMARY_BLOCK_PROMPT, "PR_1_BAD_PRIMARY_BLOCK_PROMPT",
	  "You can remove this block from the bad block list and hope\nthat the block is really OK.  But there are no "
	  "guarantees.\n\n", PROMPT_CLEAR, PF_PREEN_STOP_QUIET },
	/* A backup's blocks on the list: a warning, silent in preen mode. */
	{ PR_1_BAD_SUPERBLOCK, "PR_1_BAD_SUPERBLOCK", "Warning: Group %g's superblock (%b) is bad.\n", PROMPT_NONE,
	  PF_PREEN_OK | PF_PREEN_NOMSG },
	{ PR_1_BAD_GROUP_DESCRIPTORS, "PR_1_BAD_GROUP_DESCRIPTORS",
	  "Warning: Group %g's copy of the group descriptors has a bad block (%b).\n", PROMPT_NONE,
	  PF_PREEN_OK | PF_PREEN_NOMSG },
	/* Inode 1's own table block is on its list: "Clear inode" empties it and the check starts again. */
	{ PR_1_BADBLOCKS_IN_BADBLOCKS, "PR_1_BADBLOCKS_IN_BADBLOCKS", "Bad block list says the bad block list inode is bad.  ",
	  PROMPT_CLEAR_INODE, 0 },
	/* A bitmap on the list: a yes relocates it at the end of pass 1. */
	{ PR_1_BB_BAD_BLOCK, "PR_1_BB_BAD_BLOCK", "Group %g's block bitmap (%b) is bad.  ", PROMPT_RELOCATE, 0 },
	{ PR_1_IB_BAD_BLOCK, "PR_1_IB_BAD_BLOCK", "Group %g's inode bitmap (%b) is bad.  ", PROMPT_RELOCATE, 0 },
	/* A listed block claimed before that is no metadata e2fsck names (a reserved descriptor block, a repeat). */
	{ PR_1_PROGERR_CLAIMED_BLOCK, "PR_1_PROGERR_CLAIMED_BLOCK",
	  "Programming error?  block #%b claimed for no reason in process_bad_block.\n", PROMPT_NONE, PF_PREEN_OK },
	/* An extent root without the feature: a yes sets it (then, or after a no, PR_1_EXTENTS_SET). */
	{ PR_1_EXTENT_FEATURE, "PR_1_EXTENT_FEATURE",
	  "Inode %i is in extent format, but superblock is missing EXTENTS feature\n", PROMPT_FIX, 0 },
	{ PR_1_EXTENTS_SET, "PR_1_EXTENTS_SET",
	  "Inode %i has EXTENTS_FL flag set on filesystem without extents support.\n", PROMPT_CLEAR, 0 },
	/* A yes gives it the flag; its map is then walked as an extent tree, after a no as a block map. */
	{ PR_1_UNSET_EXTENT_FL, "PR_1_UNSET_EXTENT_FL", "Inode %i missing EXTENT_FL, but is in extents format\n",
	  PROMPT_FIX, PF_PREEN_OK },
	{ PR_1_INODE_TOOBIG, "PR_1_INODE_TOOBIG", "Inode %i is too big.  ", PROMPT_TRUNCATE, 0 },
	{ PR_1_TOOBIG_DIR, "PR_1_TOOBIG_DIR", "Block #%N (%b) causes directory to be too big.  ", PROMPT_CLEAR, 0 },
	{ PR_1_TOOBIG_SYMLINK, "PR_1_TOOBIG_SYMLINK", "%B (%b) causes symlink to be too big.  ", PROMPT_CLEAR, 0 },
	{ PR_1_READ_EA_BLOCK, "PR_1_READ_EA_BLOCK",
	  "Error reading extended attribute block %b for inode %i.  ", PROMPT_CLEAR, 0 },
	{ PR_1_BAD_EA_BLOCK, "PR_1_BAD_EA_BLOCK", "Inode %i has a bad extended attribute block %b.  ", PROMPT_CLEAR,
	  0 },
	{ PR_1_EA_MULTI_BLOCK, "PR_1_EA_MULTI_BLOCK", "Extended attribute block %b has h_blocks > 1.  ",
	  PROMPT_CLEAR, 0 },
	{ PR_1_EA_ALLOC_COLLISION, "PR_1_EA_ALLOC_COLLISION",
	  "Extended attribute block %b is corrupt (allocation collision).  ", PROMPT_CLEAR, 0 },
	{ PR_1_EA_BAD_NAME, "PR_1_EA_BAD_NAME", "Extended attribute block %b is corrupt (invalid name).  ",
	  PROMPT_CLEAR, 0 },
	{ PR_1_EA_BAD_VALUE, "PR_1_EA_BAD_VALUE", "Extended attribute block %b is corrupt (invalid value).  ",
	  PROMPT_CLEAR, 0 },
	{ PR_1_ATTR_HASH, "PR_1_ATTR_HASH", "Extended attribute in inode %i has a hash (%N) which is invalid\n",
	  PROMPT_CLEAR, PF_PREEN_OK },
	{ PR_1_EXTRA_ISIZE, "PR_1_EXTRA_ISIZE", "Inode %i has a extra size (%N) which is invalid\n", PROMPT_FIX,
	  PF_PREEN_OK },
	{ PR_1_ATTR_NAME_LEN, "PR_1_ATTR_NAME_LEN",
	  "Extended attribute in inode %i has a namelen (%N) which is invalid\n", PROMPT_CLEAR, PF_PREEN_OK },
	{ PR_1_ATTR_VALUE_SIZE, "PR_1_ATTR_VALUE_SIZE",
	  "Extended attribute in inode %i has a value size (%N) which is invalid\n", PROMPT_CLEAR, PF_PREEN_OK },
	{ PR_1_INODE_EA_ALLOC_COLLISION, "PR_1_INODE_EA_ALLOC_COLLISION",
	  "Inode %i extended attribute is corrupt (allocation collision).  ", PROMPT_CLEAR, 0 },
	{ PR_1_ATTR_VALUE_EA_INODE, "PR_1_ATTR_VALUE_EA_INODE",
	  "Inode %i has illegal extended attribute value inode %N.\n", PROMPT_CLEAR, PF_PREEN_OK },
	{ PR_1_ATTR_NO_EA_INODE_FL, "PR_1_ATTR_NO_EA_INODE_FL",
	  "Inode %i has invalid extended attribute. EA inode %N missing EA_INODE flag.\n", PROMPT_CLEAR,
	  PF_PREEN_OK },
	{ PR_1_ATTR_SET_EA_INODE_FL, "PR_1_ATTR_SET_EA_INODE_FL",
	  "EA inode %N for parent inode %i missing EA_INODE flag.\n ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_1_EA_TIME_OUT_OF_RANGE, "PR_1_EA_TIME_OUT_OF_RANGE",
	  "Timestamp(s) on inode %i beyond 2310-04-04 are likely pre-1970.\n", PROMPT_FIX,
	  PF_PREEN_OK | PF_AFTER_NO },
	{ PR_1_EA_BLOCK_ONLY_CSUM_INVALID, "PR_1_EA_BLOCK_ONLY_CSUM_INVALID",
	  "Inode %i extended attribute block %b passes checks, but checksum does not match block.  ", PROMPT_FIX,
	  0 },
	{ PR_1_EXTATTR_REFCOUNT, "PR_1_EXTATTR_REFCOUNT",
	  "Extended attribute block %b has reference count %M, should be %N.  ", PROMPT_FIX, 0 },
	/*
	 * An extent walk that met a block on the metadata which is no tree node
	 * (extents.c); %s is e2fsck's name of the step, %m its library's words.
	 * A no leads to e2fsck's fatal error.
	 */
	{ PR_1_EXTENT_ITERATE_FAILURE, "PR_1_EXTENT_ITERATE_FAILURE",
	  "Failed to iterate extents in inode %i\n\t(op %s, blk %b, lblk %c): %m\n", PROMPT_CLEAR_INODE, 0 },
	{ PR_1_BLOCK_ITERATE, "PR_1_BLOCK_ITERATE", "Error while iterating over blocks in inode %i: %m\n",
	  PROMPT_NONE, PF_FATAL },
	/* Inode 3 or 4 named as a quota file but not a regular file: a yes makes its mode a plain one. */
	{ PR_1_QUOTA_BAD_MODE, "PR_1_QUOTA_BAD_MODE", "Quota inode is not a regular file.  ", PROMPT_CLEAR, PF_PREEN_OK },
	/* Inode 3 or 4 holding something while no quota file is named there: a yes zeroes it. */
	{ PR_1_QUOTA_INODE_NOT_CLEAR, "PR_1_QUOTA_INODE_NOT_CLEAR", "Quota inode is not in use, but contains data.  ",
	  PROMPT_CLEAR, PF_PREEN_OK },
	/* Writing a new resize inode at the end of pass 1 failed: "Continue" goes on without it. */
	{ PR_1_RESIZE_INODE_CREATE, "PR_1_RESIZE_INODE_CREATE", "Resize inode (re)creation failed: %m.", PROMPT_CONTINUE,
	  0 },
	{ PR_1_ZERO_LENGTH_DIR, "PR_1_ZERO_LENGTH_DIR", "Inode %i is a zero-length directory.  ", PROMPT_CLEAR,
	  PF_PREEN_OK },
	{ PR_1_MISSING_EXTENT_HEADER, "PR_1_MISSING_EXTENT_HEADER", "Inode %i has corrupt extent header.  ",
	  PROMPT_CLEAR_INODE, 0 },
	{ PR_1_EXTENT_BAD_START_BLK, "PR_1_EXTENT_BAD_START_BLK",
	  "Inode %i has an invalid extent\n\t(logical block %c, invalid physical block %b, len %N)\n",
	  PROMPT_CLEAR, 0 },
	{ PR_1_EXTENT_ENDS_BEYOND, "PR_1_EXTENT_ENDS_BEYOND",
	  "Inode %i has an invalid extent\n\t(logical block %c, physical block %b, invalid len %N)\n",
	  PROMPT_CLEAR, 0 },
	{ PR_1_OUT_OF_ORDER_EXTENTS, "PR_1_OUT_OF_ORDER_EXTENTS",
	  "Inode %i has out of order extents\n\t(invalid logical block %c, physical block %b, len %N)\n",
	  PROMPT_CLEAR, 0 },
	{ PR_1_EXTENT_HEADER_INVALID, "PR_1_EXTENT_HEADER_INVALID",
	  "Inode %i has an invalid extent node (blk %b, lblk %c)\n", PROMPT_CLEAR, 0 },
	{ PR_1_EXTENT_LENGTH_ZERO, "PR_1_EXTENT_LENGTH_ZERO",
	  "Inode %i has zero length extent\n\t(invalid logical block %c, physical block %b)\n", PROMPT_CLEAR, 0 },
	{ PR_1_EXTENT_ONLY_CSUM_INVALID, "PR_1_EXTENT_ONLY_CSUM_INVALID",
	  "Inode %i extent block passes checks, but checksum does not match extent\n"
	  "\t(logical block %c, physical block %b, len %N)\n", PROMPT_FIX, 0 },
	{ PR_1_EXTENT_INDEX_START_INVALID, "PR_1_EXTENT_INDEX_START_INVALID",
	  "Interior extent node level %N of inode %i:\n"
	  "Logical start %b does not match logical start %c at next level.  ", PROMPT_FIX, 0 },
	{ PR_1_EXTENT_END_OUT_OF_BOUNDS, "PR_1_EXTENT_END_OUT_OF_BOUNDS",
	  "Inode %i, end of extent exceeds allowed value\n\t(logical block %c, physical block %b, len %N)\n",
	  PROMPT_CLEAR, 0 },
	{ PR_1_CRITICAL_METADATA_COLLISION, "PR_1_CRITICAL_METADATA_COLLISION",
	  "Inode %i block %b conflicts with critical metadata, skipping block checks.\n", PROMPT_NONE, 0 },
	{ PR_1_UNINIT_DBLOCK, "PR_1_UNINIT_DBLOCK",
	  "Directory inode %i has extent marked uninitialized at block %c.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_1_EXTENT_COLLISION, "PR_1_EXTENT_COLLISION",
	  "Inode %i has a duplicate extent mapping\n\t(logical block %c, invalid physical block %b, len %N)\n",
	  PROMPT_CLEAR, 0 },
	{ PR_1_MISALIGNED_CLUSTER, "PR_1_MISALIGNED_CLUSTER",
	  "Inode %i logical block %b (physical block %c) violates cluster allocation rules.\nWill fix in pass 1B.\n",
	  PROMPT_NONE, 0 },
	{ PR_1_EXTENT_BAD_MAX_DEPTH, "PR_1_EXTENT_BAD_MAX_DEPTH",
	  "Inode %i extent tree could be more shallow (%b; could be <= %c)\n", PROMPT_FIX,
	  PF_PREEN_NO | PF_NOT_AN_ERROR },
	{ PR_1_NO_BIGALLOC_BLOCKMAP_FILES, "PR_1_NO_BIGALLOC_BLOCKMAP_FILES",
	  "Inode %i on bigalloc filesystem cannot be block mapped.  ", PROMPT_FIX, 0 },
	{ PR_1_INODE_ONLY_CSUM_INVALID, "PR_1_INODE_ONLY_CSUM_INVALID",
	  "Inode %i passes checks, but checksum does not match inode.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_1E_PASS_HEADER, "PR_1E_PASS_HEADER", "Pass 1E: Optimizing extent trees\n", PROMPT_NONE,
	  PF_PREEN_NOMSG },
	{ PR_1E_OPTIMIZE_EXT_ERR, "PR_1E_OPTIMIZE_EXT_ERR", "Failed to optimize extent tree %p (%i): %m\n",
	  PROMPT_NONE, 0 },
	{ PR_1E_CAN_COLLAPSE_EXTENT_TREE, "PR_1E_CAN_COLLAPSE_EXTENT_TREE",
	  "Inode %i extent tree (at level %b) could be shorter.  ", PROMPT_OPTIMIZE,
	  PF_PREEN_NO | PF_NOT_AN_ERROR | PF_NOT_A_FIX },
	{ PR_1E_CAN_NARROW_EXTENT_TREE, "PR_1E_CAN_NARROW_EXTENT_TREE",
	  "Inode %i extent tree (at level %b) could be narrower.  ", PROMPT_OPTIMIZE,
	  PF_PREEN_NO | PF_NOT_AN_ERROR | PF_NOT_A_FIX },
	{ PR_1_COLLAPSE_DBLOCK, "PR_1_COLLAPSE_DBLOCK", "Directory inode %i block %b should be at block %c.  ",
	  PROMPT_FIX, 0 },
	{ PR_1_JOURNAL_INODE_NOT_CLEAR, "PR_1_JOURNAL_INODE_NOT_CLEAR",
	  "Journal inode is not in use, but contains data.  ", PROMPT_CLEAR, PF_PREEN_OK },
	{ PR_1_JOURNAL_BAD_MODE, "PR_1_JOURNAL_BAD_MODE", "Journal is not regular file.  ", PROMPT_FIX, PF_PREEN_OK },
	{ PR_1_DUP_BLOCKS_PREENSTOP, "PR_1_DUP_BLOCKS_PREENSTOP", "Duplicate or bad block in use!\n", PROMPT_NONE,
	  0 },
	{ PR_1B_PASS_HEADER, "PR_1B_PASS_HEADER",
	  "\nRunning additional passes to resolve blocks claimed by more than one inode...\n"
	  "Pass 1B: Rescanning for multiply-claimed blocks\n", PROMPT_NONE, 0 },
	{ PR_1B_DUP_BLOCK_HEADER, "PR_1B_DUP_BLOCK_HEADER", "Multiply-claimed block(s) in inode %i:", PROMPT_NONE, 0 },
	{ PR_1B_DUP_BLOCK, "PR_1B_DUP_BLOCK", " %b", PROMPT_NONE, PF_PREEN_NOHDR },
	{ PR_1B_DUP_RANGE, "PR_1B_DUP_RANGE", " %b--%c", PROMPT_NONE, PF_PREEN_NOHDR },
	{ PR_1B_DUP_BLOCK_END, "PR_1B_DUP_BLOCK_END", "\n", PROMPT_NONE, PF_PREEN_NOHDR },
	{ PR_1B_BLOCK_ITERATE, "PR_1B_BLOCK_ITERATE", "Error while iterating over blocks in inode %i (%s): %m\n",
	  PROMPT_NONE, 0 },
	/* e2fsck's %m is the library's message; ours comes in %s. */
	{ PR_1B_ADJ_EA_REFCOUNT, "PR_1B_ADJ_EA_REFCOUNT",
	  "Error adjusting refcount for extended attribute block %b (inode %i): %s\n", PROMPT_NONE, 0 },
	{ PR_1C_PASS_HEADER, "PR_1C_PASS_HEADER",
	  "Pass 1C: Scanning directories for inodes with multiply-claimed blocks\n", PROMPT_NONE, 0 },
	{ PR_1D_PASS_HEADER, "PR_1D_PASS_HEADER", "Pass 1D: Reconciling multiply-claimed blocks\n", PROMPT_NONE, 0 },
	{ PR_1D_DUP_FILE, "PR_1D_DUP_FILE",
	  "File %p (inode #%i, mod time %s) \n  has %M multiply-claimed block(s), shared with %N file(s):\n",
	  PROMPT_NONE, 0 },
	{ PR_1D_DUP_FILE_LIST, "PR_1D_DUP_FILE_LIST", "\t%p (inode #%i, mod time %s)\n", PROMPT_NONE, 0 },
	{ PR_1D_SHARE_METADATA, "PR_1D_SHARE_METADATA", "\t<filesystem metadata>\n", PROMPT_NONE, 0 },
	{ PR_1D_NUM_DUP_INODES, "PR_1D_NUM_DUP_INODES",
	  "(There are %N inodes containing multiply-claimed blocks.)\n\n", PROMPT_NONE, 0 },
	{ PR_1D_DUP_BLOCKS_DEALT, "PR_1D_DUP_BLOCKS_DEALT", "Multiply-claimed blocks already reassigned or cloned.\n\n",
	  PROMPT_NONE, 0 },
	{ PR_1D_CLONE_QUESTION, "PR_1D_CLONE_QUESTION", "", PROMPT_CLONE, PF_AFTER_NO },
	{ PR_1D_DELETE_QUESTION, "PR_1D_DELETE_QUESTION", "", PROMPT_DELETE, 0 },
	{ PR_1D_CLONE_ERROR, "PR_1D_CLONE_ERROR", "Couldn't clone file: %s\n", PROMPT_NONE, 0 },
};

const struct problem_table problems_pass1 = { rows, sizeof(rows) / sizeof(rows[0]) };
