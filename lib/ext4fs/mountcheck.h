/*
 * mountcheck.h - is a device or image file in use by the running system?
 *
 * Services for tools (layer 7).  Opening a file system never checks this:
 * the library may be handed an image that is a copy, a snapshot or a
 * device it only reads.  A tool about to write (mke4fs, debug4fs -w, and
 * later tune4fs and e4fsck without -n) asks first and refuses when the
 * kernel owns the file system, since two writers that do not know about
 * each other corrupt it.
 *
 * What counts as "in use" (Linux; the answers come from /proc and /sys):
 *  - a block device that is mounted (matched by device number, so
 *    /dev/root and symlinked names are found too) or is an active swap
 *    area, or that another holder opened exclusively (RAID member, device
 *    mapper table, a mount in another namespace: O_EXCL fails with EBUSY);
 *  - a regular file that is an active swap file, or that backs a loop
 *    device (or a partition of one) that is mounted or used as swap.
 * When /proc is not mounted nothing can be learnt and the answer is "not
 * in use"; the check is a safety net, not a lock (the state may change
 * right after it).
 */
#ifndef EXT4FS_MOUNTCHECK_H
#define EXT4FS_MOUNTCHECK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_MOUNT_MOUNTED  0x01  /* mounted, directly or through a loop device */
#define EXT4FS_MOUNT_READONLY 0x02  /* mounted, and every mount of it is read-only */
#define EXT4FS_MOUNT_ISROOT   0x04  /* mounted on "/" */
#define EXT4FS_MOUNT_SWAP     0x08  /* an active swap area, directly or through a loop device */
#define EXT4FS_MOUNT_BUSY     0x10  /* a block device another holder has opened exclusively */
#define EXT4FS_MOUNT_LOOP     0x20  /* the use above is through a loop device backed by the file */

/* Nonzero when the flags say the file system must not be written. */
#define EXT4FS_MOUNT_IN_USE(f) \
	((f) & (EXT4FS_MOUNT_MOUNTED | EXT4FS_MOUNT_SWAP | EXT4FS_MOUNT_BUSY))

/*
 * Set *flags to the EXT4FS_MOUNT_* bits that describe path (0: not in use).
 * Errors: -errno when path cannot be examined (stat fails); a missing path
 * is -ENOENT.  Neither a block device nor a regular file: 0, no flags.
 */
int ext4fs_check_mount(const char *path, unsigned *flags);

/*
 * As ext4fs_check_mount(), and when the use is through a loop device
 * (EXT4FS_MOUNT_LOOP) copy that device's name ("/dev/loop3") into via
 * (via_len bytes, NUL-terminated, cut short if needed); via is set to ""
 * otherwise.  via may be NULL when via_len is 0.
 */
int ext4fs_check_mount_via(const char *path, unsigned *flags, char *via, size_t via_len);

#ifdef __cplusplus
}
#endif
#endif
