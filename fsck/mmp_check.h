/*
 * mmp_check.h - e4fsck's look at the MMP block before it claims the file
 * system, as e2fsck's e2fsck_check_mmp() does.
 */
#ifndef E4FSCK_MMP_CHECK_H
#define E4FSCK_MMP_CHECK_H

#include "context.h"

/*
 * On the first, read-only handle: read the MMP block of a file system with
 * the mmp feature; offer to clear a block number outside the file system
 * (PR_0_MMP_INVALID_BLK) and to rewrite a block with a bad magic
 * (PR_0_MMP_INVALID_MAGIC) or checksum (PR_0_MMP_CSUM_INVALID); refuse a
 * file system another checker holds or that is in an unknown state.  A
 * repair is written through a handle of its own.  0 to go on; -1 when the
 * check must stop (the closing lines printed, the exit status set).
 */
int fsck_check_mmp(struct e4fsck *ctx);

/*
 * A writable open failed with err, one of the library's EXT4FS_E_MMP_*
 * codes: say so as e2fsck does (its error text, then the superblock
 * advice).  Returns nonzero when err is such a code (and it was said).
 */
int fsck_mmp_open_failed(struct e4fsck *ctx, int err);

#endif
