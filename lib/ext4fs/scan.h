/*
 * scan.h - reading inode tables group by group, fast.
 *
 * Layer 7 (services for tools).  The scanner reads a group's inode table in
 * large sequential chunks and hands out the inodes that can be in use.  It
 * skips what uninit_bg / metadata_csum say is unused: groups flagged
 * INODE_UNINIT and the tail of a table beyond bg_itable_unused, but only when
 * the group descriptor's checksum verified (otherwise the flags are not
 * trusted and the whole table is read).
 *
 * A scanner covers a range of groups [first_group, last_group], so a
 * parallel user (e4fsck's pass 1) gives each thread its own range and its own
 * file-system handle; scanners share nothing.
 */
#ifndef EXT4FS_SCAN_H
#define EXT4FS_SCAN_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ext4fs_scan;

#define EXT4FS_SCAN_ALL_INODES 0x1  /* do not skip unused tables (for checkers that distrust them) */
/*
 * Also return records that look never used (i_links_count and i_mode 0) but
 * show a sign of use: a deletion time, or a checksum that fails (a checker
 * judges both).
 */
#define EXT4FS_SCAN_SUSPECT_UNUSED 0x2
/*
 * Judge each inode-table block as e2fsprogs does: garbage when more than
 * half of its records (of those scanned) fail their checksum or have an
 * impossible extent header or block map (ext4fs_scan_in_garbage()).
 */
#define EXT4FS_SCAN_JUDGE_GARBAGE 0x4
/*
 * Honour a descriptor's INODE_UNINIT flag and unused-inode count even when
 * its checksum fails, as e2fsprogs' scan does (for a checker that left such
 * a descriptor as it was).  Without it they are trusted only when verified.
 */
#define EXT4FS_SCAN_TRUST_UNVERIFIED 0x8

/*
 * Start a scan over groups [first_group, last_group] (clamped to the file
 * system).  *out is owned by the caller (ext4fs_scan_close()).  Errors:
 * EXT4FS_E_NO_MEMORY, EXT4FS_E_INVALID_ARG.
 */
int ext4fs_scan_open(struct ext4fs_fs *fs, uint32_t first_group, uint32_t last_group,
		     unsigned flags, struct ext4fs_scan **out);

/*
 * Next inode that may be in use: *ino and its decoded *inode; *raw points at
 * the raw record inside the scanner's buffer (valid until the next call).
 * Returns 1 with an inode, 0 at the end, negative on a read error (the
 * message names the group and block).  Inodes whose checksum fails are
 * still returned; *csum_ok tells (may be NULL).  An inode with i_links_count
 * 0 and i_mode 0 is skipped as never used, unless EXT4FS_SCAN_SUSPECT_UNUSED
 * was asked and it has a deletion time or its checksum fails.
 */
int ext4fs_scan_next(struct ext4fs_scan *scan, uint32_t *ino, struct ext4fs_inode *inode,
		     const unsigned char **raw, int *csum_ok);

/*
 * With EXT4FS_SCAN_JUDGE_GARBAGE: 1 when the inode ext4fs_scan_next() last
 * returned lies in a block judged garbage, else 0 (also without the flag).
 */
int ext4fs_scan_in_garbage(const struct ext4fs_scan *scan);

/* Inode-table blocks the scan read, and those it skipped as unused. */
uint64_t ext4fs_scan_blocks_read(const struct ext4fs_scan *scan);
uint64_t ext4fs_scan_blocks_skipped(const struct ext4fs_scan *scan);

/* Free the scanner; NULL is allowed. */
void ext4fs_scan_close(struct ext4fs_scan *scan);

#ifdef __cplusplus
}
#endif
#endif
