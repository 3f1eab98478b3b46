/*
 * ibody.h - pass 1's check of the space after an inode's 128-byte base:
 * i_extra_isize, the extended attributes stored there, and timestamps
 * whose epoch bits old kernels got wrong (see ibody.c).
 *
 * Called by the pass 1 workers, which may not ask or repair: every problem
 * goes to ops->problem with the repair a yes would bring and the answer it
 * depends on, to be asked later in inode order.
 */
#ifndef E4FSCK_IBODY_H
#define E4FSCK_IBODY_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "deferred.h"

/* The repair a yes brings. */
enum ibody_fix {
	IBODY_FIX_NONE,
	IBODY_FIX_EXTRA_ISIZE,      /* i_extra_isize = value */
	IBODY_FIX_EA_CLEAR,         /* zero the 4-byte attribute magic at byte value of the record */
	IBODY_FIX_EA_INODE_FL,      /* set EXT4FS_EA_INODE_FL on inode value */
	IBODY_FIX_EPOCH,            /* drop the epoch bits of timestamps that are pre-1970 dates */
};

/*
 * When the problem is asked, by deferred.h's rules: DEFER_IF_YES_BACK
 * when the check that found it assumed the repair of the problem reported
 * back calls earlier (for this inode); DEFER_AFTER_NO when it is asked
 * only after the problem reported just before was answered no.
 */
struct ibody_problem {
	uint32_t code;
	uint64_t num;               /* %N of the message */
	enum ibody_fix fix;
	uint64_t value;             /* see enum ibody_fix */
	unsigned rules;             /* DEFER_* */
	unsigned back;              /* DEFER_IF_YES_BACK: how many problems back */
};

struct ibody_ops {
	/* Record one problem; 0, or a negative errno (ENOMEM) that ends the check. */
	int (*problem)(void *arg, const struct ibody_problem *p);
	/*
	 * The in-inode attributes passed the walk (a missing EA_INODE flag
	 * aside): called for each value kept in an EA inode, inode inum of
	 * blocks blocks.  The kernel charges those blocks to the owner's
	 * i_blocks, and each such entry is one reference to inum.  0, or a
	 * negative errno that ends the check.  May be NULL.
	 */
	int (*value_inode)(void *arg, uint32_t inum, uint64_t blocks);
};

/*
 * Check inode ino's extra space in its raw record raw (s_inode_size bytes;
 * in is its decoded form) as e2fsck does for inodes in use: i_extra_isize
 * (PR_1_EXTRA_ISIZE), the in-inode attributes when their magic is there
 * (collisions, name lengths, value sizes, value inodes, hashes: the first
 * problem found offers to clear them all), then pre-1970 timestamps
 * (PR_1_EA_TIME_OUT_OF_RANGE).  fs is read only (EA inodes named by
 * entries).  Returns 0 or what ops->problem returned.
 */
int fsck_ibody_check(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in, const unsigned char *raw,
		     const struct ibody_ops *ops, void *arg);

/*
 * Apply IBODY_FIX_EA_CLEAR (at byte offset ea_off, 0: none) and
 * IBODY_FIX_EPOCH (epoch nonzero) to raw record raw of inode_size bytes.
 * Cannot fail.
 */
void fsck_ibody_apply(unsigned char *raw, uint32_t inode_size, uint32_t ea_off, int epoch);

#endif
