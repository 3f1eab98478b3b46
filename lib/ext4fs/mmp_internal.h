/*
 * mmp_internal.h - the MMP claim of a writable handle (mmp.c), for the
 * write layer's open only (not installed).
 */
#ifndef EXT4FS_MMP_INTERNAL_H
#define EXT4FS_MMP_INTERNAL_H

#include "ext4fs/fs.h"

/*
 * Claim the file system for a writable or recovery handle (mmp feature, unless
 * opts->mmp_skip): refuse an MMP block on group metadata, read the block,
 * refuse a checker's sequence, wait out an active one, write a random
 * sequence, wait, find it unchanged and write the checker's sequence.  The
 * claim is given back (clean sequence) after ext4fs_close_flush()'s flush,
 * which reports EXT4FS_E_MMP_CHANGE_ABORT when another node changed the
 * block meanwhile, else at close after a last flush.
 * Errors: EXT4FS_E_MMP_* (BAD_BLOCK, MAGIC, CSUM, FSCK_ON, UNKNOWN_SEQ,
 * FAILED), I/O errors, EXT4FS_E_NO_MEMORY.
 */
int ext4fs__mmp_start(struct ext4fs_fs *fs, const struct ext4fs_open_opts *opts);

#endif
