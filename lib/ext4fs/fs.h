/*
 * fs.h - an open ext4 file system: superblock, geometry, group descriptors,
 * and cached block reads.
 *
 * Layer 3.  struct ext4fs_fs is the handle every other module takes.  It owns
 * its I/O channel, the decoded superblock, the decoded group descriptors and
 * a small block cache.  A handle is used by one thread at a time; separate
 * handles (even on the same image) share nothing, so several threads may
 * each open their own.  The library keeps no global state.
 *
 * Invariants once ext4fs_open() has returned 0:
 *  - the superblock passed validation: every geometry number in
 *    struct ext4fs_geom is within range and consistent with the others;
 *  - every group descriptor's bitmap and inode-table locations pass
 *    ext4fs_block_ptr_valid() (inside the file system, never block 0), or
 *    the open failed naming the group, so callers may read and write them
 *    without checking again;
 *  - checksum mismatches are errors unless EXT4FS_OPEN_IGNORE_CSUM was given,
 *    except group descriptor checksums: like e2fsprogs' open, a bad one does
 *    not stop the open; ext4fs_group_desc_csum_ok() reports it, and such a
 *    group's UNINIT flags and bg_itable_unused are not trusted.
 *
 * When an operation fails, ext4fs_errmsg() describes the failing object
 * ("inode 12: extent tree block 1234 has bad magic 0x0") until the next
 * failure.
 */
#ifndef EXT4FS_FS_H
#define EXT4FS_FS_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/errors.h"
#include "ext4fs/io.h"
#include "ext4fs/super.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ext4fs_fs;

/* Open flags. */
#define EXT4FS_OPEN_RW            0x1  /* writable: see "Writing" below */
#define EXT4FS_OPEN_IGNORE_CSUM   0x2  /* do not fail on checksum mismatches */
#define EXT4FS_OPEN_FORCE         0x4  /* open despite unknown incompatible features */
/*
 * For ext4fs_journal_recover() only: the channel is opened for writing but
 * the handle stays read-only for everything else (no bitmaps are loaded, no
 * write-path feature checks), so a file system that needs recovery can be
 * opened.  Do not combine with EXT4FS_OPEN_RW; close the handle after
 * recovery and open the file system again.
 */
#define EXT4FS_OPEN_RECOVERY      0x8
/*
 * With EXT4FS_OPEN_RW: a rehearsal.  The handle writes as any writable
 * handle does, but into an overlay channel (io_overlay.h) that keeps the
 * writes in memory, so a change can be run to its end to learn what it
 * would do, and nothing reaches the disk.  ext4fs_open() opens the path
 * read-only and lays the overlay over it; ext4fs_open_io() must be given
 * an overlay.  So that memory grows with the metadata changed, not with
 * the data moved, ext4fs_reloc_move() and its kin copy no regular file's
 * data past its first 4 KiB (they count it as copied): reading a moved
 * regular file's blocks back gives stale bytes beyond that.
 */
#define EXT4FS_OPEN_REHEARSE      0x10

/*
 * With EXT4FS_OPEN_RW: the caller rewrites the quota files itself before it
 * closes (e4fsck recounts the usage), so a file system with the quota
 * feature may be opened for writing.  Without it such an open is refused:
 * the write path does not keep the quota files' usage up to date.
 */
#define EXT4FS_OPEN_QUOTA_BY_CALLER 0x20

/*
 * For a checker that gives misplaced group metadata new places (e4fsck's
 * relocation): a descriptor whose block bitmap, inode bitmap or inode
 * table lies outside the file system (0 included) does not fail the open,
 * and a writable open does not run ext4fs_group_descs_check(): the caller
 * takes over that check and must give every location it finds at fault a
 * new place (ext4fs_group_desc_set()) before it writes.  Until then a
 * location outside the file system is "missing": its bitmap reads as all
 * zeros and is not written back, the group's inodes are neither read nor
 * written (EXT4FS_E_GD_BAD_INODE_TABLE) and a scan passes over them
 * (ext4fs_group_tables_present()).
 */
#define EXT4FS_OPEN_MISPLACED_OK  0x40

/*
 * With EXT4FS_OPEN_RW: the caller places blocks itself on a bigalloc file
 * system (e4fsck chooses free clusters from its own maps), so such a file
 * system may be opened for writing.  The accounting calls then work in
 * clusters: ext4fs_blocks_mark_used() and _mark_free() set or clear every
 * cluster that [blk, blk + count) touches, the descriptors' free counts
 * move by clusters and the superblock's by their blocks, and
 * ext4fs_free_blocks() frees the touched clusters still in use (a file's
 * release, where neighbouring extents share a cluster).  The block
 * allocator, which knows no clusters, refuses (EXT4FS_E_RO_UNSUPP_FEATURE).
 * Without the flag a writable open of a bigalloc file system is refused.
 */
#define EXT4FS_OPEN_CLUSTERS_BY_CALLER 0x80

/*
 * Open a superblock that e2fsprogs opens only "despite errors": a
 * s_first_meta_bg beyond the descriptor blocks is not refused.  Every
 * descriptor block is then read from (and written to) the place before
 * the meta_bg groups, and a group with a superblock copy counts
 * s_first_meta_bg blocks after it as descriptors, as e2fsprogs counts
 * them; a checker uses this to report the value and clear it.
 */
#define EXT4FS_OPEN_SB_ERRORS_OK  0x100

struct ext4fs_open_opts {
	unsigned flags;
	uint64_t superblock;   /* block number of a backup superblock; 0 = primary */
	unsigned block_size;   /* block size to read the backup with; 0 = try each */
	uint64_t offset;       /* byte offset of the file system in the image */
	/*
	 * Multi-mount protection (mmp.h): a writable open (or one with
	 * EXT4FS_OPEN_RECOVERY) of a file system with the mmp feature waits
	 * while it claims the MMP block, through mmp_sleep(mmp_sleep_ctx,
	 * seconds) when given (tests pass one that does not sleep), else
	 * sleep(3).  mmp_skip: open for writing without the protocol, for a
	 * checker that repairs the MMP block itself.
	 */
	void (*mmp_sleep)(void *ctx, unsigned seconds);
	void *mmp_sleep_ctx;
	int mmp_skip;
};

/* Numbers derived from the superblock, checked at open. */
struct ext4fs_geom {
	uint32_t block_size;
	uint32_t log_block_size;        /* block_size == 1024 << log_block_size */
	uint32_t cluster_ratio;         /* blocks per cluster (bigalloc), else 1 */
	uint64_t blocks_count;
	uint64_t r_blocks_count;
	uint64_t free_blocks_count;
	uint32_t first_data_block;
	uint32_t blocks_per_group;
	uint32_t clusters_per_group;
	uint32_t inodes_per_group;
	uint32_t inodes_count;
	uint32_t inode_size;
	uint32_t first_ino;
	uint32_t group_count;
	uint32_t desc_size;             /* 32, or s_desc_size with 64bit */
	uint32_t desc_per_block;
	uint32_t desc_blocks;           /* blocks holding the descriptor table */
	uint32_t inode_blocks_per_group;
	uint32_t groups_per_flex;       /* 1 without flex_bg */
	uint32_t csum_seed;             /* crc32c seed for metadata_csum */
	unsigned has_metadata_csum : 1;
	unsigned has_gdt_csum : 1;      /* uninit_bg (gdt_csum) without metadata_csum */
	unsigned is_64bit : 1;
	unsigned has_extents : 1;
	unsigned has_filetype : 1;
};

/* One group descriptor, 32- and 64-bit halves already combined. */
struct ext4fs_group_desc {
	uint64_t block_bitmap;
	uint64_t inode_bitmap;
	uint64_t inode_table;
	uint64_t exclude_bitmap;
	uint32_t free_blocks_count;
	uint32_t free_inodes_count;
	uint32_t used_dirs_count;
	uint32_t itable_unused;
	uint32_t block_bitmap_csum;
	uint32_t inode_bitmap_csum;
	uint16_t flags;
	uint16_t checksum;
};

/* The flags word: EXT4FS_BG_* in super.h. */

/* -- Open and close ------------------------------------------------------ */

/*
 * Open the file system in the image or device at path.  opts may be NULL
 * (primary superblock, strict checksums, read-only).  On success *out is a
 * handle the caller frees with ext4fs_close().  Errors: -errno from open,
 * EXT4FS_E_BAD_MAGIC, EXT4FS_E_CORRUPT_SUPER (the message names the field),
 * EXT4FS_E_SB_CSUM, EXT4FS_E_GD_BAD_BLOCK_MAP, EXT4FS_E_GD_BAD_INODE_MAP,
 * EXT4FS_E_GD_BAD_INODE_TABLE (a location outside the file system or, for a
 * writable handle, failing ext4fs_group_descs_check()),
 * EXT4FS_E_UNSUPP_FEATURE, EXT4FS_E_OUT_OF_IMAGE, and for a writable or
 * recovery open with the mmp feature the claim's EXT4FS_E_MMP_* errors
 * (see ext4fs_open_opts).  On failure *out is NULL
 * and, if errmsg is not NULL, a description of the failure is copied into
 * errmsg (errmsg_len bytes at most, NUL-terminated).
 * Opened on a backup superblock (opts->superblock), the handle does not
 * trust the UNINIT flags and unused-inode counts of the descriptor copies
 * beside it (e2fsprogs does the same), and a writable handle rewrites the
 * superblock and all descriptors, primary copies included, at flush.
 */
int ext4fs_open(const char *path, const struct ext4fs_open_opts *opts,
		struct ext4fs_fs **out, char *errmsg, size_t errmsg_len);

/*
 * Like ext4fs_open() over a channel the caller made.  The handle takes
 * ownership of io in every case: on failure io has been closed.
 */
int ext4fs_open_io(struct ext4fs_io *io, const struct ext4fs_open_opts *opts,
		   struct ext4fs_fs **out, char *errmsg, size_t errmsg_len);

/* Close the handle and its channel; NULL is allowed. */
void ext4fs_close(struct ext4fs_fs *fs);

/* -- What the handle knows ------------------------------------------------ */

/* Description of the last failure on this handle; never NULL ("" if none). */
const char *ext4fs_errmsg(const struct ext4fs_fs *fs);

/* Forget the last failure's description (callers do this before an operation). */
void ext4fs_errmsg_clear(struct ext4fs_fs *fs);

/* The decoded superblock, owned by the handle. */
const struct ext4fs_super *ext4fs_sb(const struct ext4fs_fs *fs);

/* The checked geometry, owned by the handle. */
const struct ext4fs_geom *ext4fs_geom(const struct ext4fs_fs *fs);

/* The raw 1024 superblock bytes as read (for checksums and dumps). */
const unsigned char *ext4fs_sb_raw(const struct ext4fs_fs *fs);

/* The handle's channel (for statistics); owned by the handle. */
struct ext4fs_io *ext4fs_fs_io(const struct ext4fs_fs *fs);

/* Path or device name the handle was opened on. */
const char *ext4fs_fs_name(const struct ext4fs_fs *fs);

/* The open flags in force. */
unsigned ext4fs_fs_flags(const struct ext4fs_fs *fs);

/* Feature tests on the superblock. */
int ext4fs_has_compat(const struct ext4fs_fs *fs, uint32_t mask);
int ext4fs_has_incompat(const struct ext4fs_fs *fs, uint32_t mask);
int ext4fs_has_ro_compat(const struct ext4fs_fs *fs, uint32_t mask);

/* -- Block reads ---------------------------------------------------------- */

/*
 * Nonzero when blk, a block number read from disk (a map or extent pointer, an
 * attribute block, a descriptor field), may be followed: it is not 0, which on
 * disk always means "no block", and first_data_block <= blk < blocks_count.
 * Block 0 of a file system with 4 KiB blocks holds the superblock; no pointer
 * may lead there, so every pointer is checked with this before it is read.
 */
int ext4fs_block_ptr_valid(const struct ext4fs_fs *fs, uint64_t blk);

/* Nonzero when count >= 1 blocks from blk all pass ext4fs_block_ptr_valid(). */
int ext4fs_block_range_valid(const struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/*
 * Read one block into buf (block_size bytes), through the handle's cache.
 * Errors: EXT4FS_E_BAD_BLOCK_NUM for a block outside the file system, or the
 * channel's error.  buf is caller-owned.
 */
int ext4fs_block_read(struct ext4fs_fs *fs, uint64_t blk, void *buf);

/*
 * Read count consecutive blocks into buf in one request, bypassing the cache
 * (inode tables, bitmaps, file data).  Same errors as ext4fs_block_read().
 */
int ext4fs_blocks_read(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, void *buf);

/* Hint that count blocks from blk will be read soon. */
void ext4fs_blocks_readahead(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/* -- Groups --------------------------------------------------------------- */

/* Descriptor of group g (< group_count), owned by the handle. */
const struct ext4fs_group_desc *ext4fs_group(const struct ext4fs_fs *fs, uint32_t g);

/* First and last block of group g. */
uint64_t ext4fs_group_first_block(const struct ext4fs_fs *fs, uint32_t g);
uint64_t ext4fs_group_last_block(const struct ext4fs_fs *fs, uint32_t g);

/* Group holding block blk (which must be in the file system). */
uint32_t ext4fs_group_of_block(const struct ext4fs_fs *fs, uint64_t blk);

/* Nonzero when group g holds a copy of the superblock. */
int ext4fs_group_has_super(const struct ext4fs_fs *fs, uint32_t g);

/*
 * Judge the descriptors' locations as e2fsprogs' check_desc does: the
 * superblock and descriptor copies (reserved GDT blocks included) first,
 * then group by group the block bitmap, the inode bitmap and the inode
 * table, each inside its group (inside the file system with flex_bg) and
 * on blocks nothing before it uses.  A writable open runs this and fails
 * on what it finds, so no bitmap or inode write lands on other metadata;
 * a checker runs it on a read-only handle to choose between the primary
 * descriptors and a backup.  Returns 0, or EXT4FS_E_GD_BAD_BLOCK_MAP,
 * EXT4FS_E_GD_BAD_INODE_MAP or EXT4FS_E_GD_BAD_INODE_TABLE for the first
 * location at fault (in that order within a group) with *bad_group (may be
 * NULL) its group, or EXT4FS_E_NO_MEMORY.
 */
int ext4fs_group_descs_check(struct ext4fs_fs *fs, uint32_t *bad_group);

/* Which of a group's locations ext4fs_group_tables_present() reports. */
#define EXT4FS_GROUP_BLOCK_BITMAP 0x1
#define EXT4FS_GROUP_INODE_BITMAP 0x2
#define EXT4FS_GROUP_INODE_TABLE  0x4

/*
 * Which of group g's block bitmap, inode bitmap and inode table lie in the
 * file system (EXT4FS_GROUP_* bits; all three but on a handle opened with
 * EXT4FS_OPEN_MISPLACED_OK).  Cannot fail; g must exist.
 */
unsigned ext4fs_group_tables_present(const struct ext4fs_fs *fs, uint32_t g);

/*
 * Where group g keeps its superblock and descriptor copies.  Any output
 * pointer may be NULL.  *super_blk is 0 when the group has no superblock
 * (group 0's is reported as its first block); *old_desc_blk and
 * *old_desc_blocks describe the classic descriptor table plus reserved GDT
 * blocks; *new_desc_blk is the meta_bg descriptor block; *meta_blocks counts
 * all of them.  Cannot fail.
 */
void ext4fs_group_meta_location(const struct ext4fs_fs *fs, uint32_t g, uint64_t *super_blk,
				uint64_t *old_desc_blk, uint32_t *old_desc_blocks,
				uint64_t *new_desc_blk, uint32_t *meta_blocks);

/* Checksum group g's descriptor should have (crc16 or crc32c low 16 bits); 0 without checksums. */
uint16_t ext4fs_group_desc_csum(const struct ext4fs_fs *fs, uint32_t g);

/* Nonzero when group g's stored descriptor checksum is right (always with no checksum feature). */
int ext4fs_group_desc_csum_ok(const struct ext4fs_fs *fs, uint32_t g);

/* The descriptor of group g exactly as on disk (desc_size bytes), owned by the handle. */
const unsigned char *ext4fs_group_desc_raw(const struct ext4fs_fs *fs, uint32_t g);

/* Superblock checksum the superblock should have. */
uint32_t ext4fs_super_csum(const unsigned char *raw_super);

/* -- Writing ---------------------------------------------------------------
 *
 * A handle opened with EXT4FS_OPEN_RW keeps the block and inode bitmaps, the
 * group descriptors and the superblock in memory and writes them back in
 * ext4fs_flush().  Every public call that changes the file system leaves
 * that in-memory state consistent (bitmaps, group counters and flags,
 * superblock counters, checksums) before it returns, except the
 * *_mark_*_uncounted() calls, which leave the free counts to a checker
 * that recounts them; file data, inodes, directory and tree blocks are
 * written through at once.  So after a flush
 * the image is exactly what e2fsck expects, and a crash between flushes
 * leaves an image e2fsck can repair (counts and bitmaps only).
 *
 * A writable open is refused (EXT4FS_E_RO_UNSUPP_FEATURE or
 * EXT4FS_E_UNSUPP_FEATURE naming the feature) for features whose metadata
 * this library does not keep up to date yet (bigalloc unless
 * EXT4FS_OPEN_CLUSTERS_BY_CALLER, quota unless
 * EXT4FS_OPEN_QUOTA_BY_CALLER, a journal device, unknown ro_compat bits),
 * and with
 * EXT4FS_E_NEEDS_RECOVERY when the journal holds transactions to replay.
 * With the mmp feature a writable open follows the MMP protocol (mmp.h)
 * and fails with its EXT4FS_E_MMP_* errors; the close writes the clean
 * sequence back.
 */

/*
 * Write everything held in memory (dirty bitmaps with their checksums,
 * descriptors, superblock, and their backup copies) and flush the channel.
 * Errors: EXT4FS_E_READ_ONLY on a read-only handle, I/O errors (the message
 * names the block).  Safe to call at any time; cheap when nothing changed.
 */
int ext4fs_flush(struct ext4fs_fs *fs);

/*
 * Whether ext4fs_flush() writes only the primary superblock and descriptor
 * table (on != 0) or also their backup copies (the default).  debug4fs
 * writes the primaries only, as debugfs does, so damage made on purpose
 * leaves the backups e2fsck falls back on intact.  Cannot fail.
 */
void ext4fs_set_primary_only(struct ext4fs_fs *fs, int on);

/*
 * Flush (as ext4fs_flush) and close.  Returns the flush's error, 0 for a
 * read-only handle; with mmp, then the MMP block's release (mmp.h):
 * EXT4FS_E_MMP_CHANGE_ABORT when another node wrote the block meanwhile,
 * or its read and write errors.  The handle is freed in every case.
 * ext4fs_close() on a writable handle also flushes (and releases the MMP
 * block) but cannot report a failure.
 */
int ext4fs_close_flush(struct ext4fs_fs *fs);

/*
 * Write one block (block_size bytes from buf), keeping the block cache in
 * step.  Errors: EXT4FS_E_READ_ONLY, EXT4FS_E_BAD_BLOCK_NUM, I/O errors.
 */
int ext4fs_block_write(struct ext4fs_fs *fs, uint64_t blk, const void *buf);

/* Write count consecutive blocks from buf in one request.  Same errors. */
int ext4fs_blocks_write(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const void *buf);

/* Make count blocks from blk read as zeros.  Same errors. */
int ext4fs_blocks_zero(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/*
 * The same for file data (regular files' and symlinks' blocks, never a
 * tree, directory, xattr or table block).  Without a transaction layer this
 * is ext4fs_blocks_write() / ext4fs_blocks_zero().  In journalled mode
 * (txn.h) metadata is staged until it commits; data written to blocks
 * allocated since the last commit goes to the disk at once, as the
 * kernel's ordered mode writes it (flushed before the transaction that
 * makes it reachable commits), and data written over older blocks is
 * journalled with the metadata.  Same errors.
 */
int ext4fs_data_write(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, const void *buf);
int ext4fs_data_zero(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/*
 * The time stamped on inodes and the superblock: the clock, unless
 * ext4fs_set_time() fixed it (reproducible images, tests).  Cannot fail.
 */
void ext4fs_now(const struct ext4fs_fs *fs, int64_t *sec, uint32_t *nsec);
void ext4fs_set_time(struct ext4fs_fs *fs, int64_t sec, uint32_t nsec);

/*
 * Mark count blocks from blk in use (or free): block bitmap, the group's
 * free count and BLOCK_UNINIT flag, the superblock's free count, and the
 * block allocator's summaries.  Errors: EXT4FS_E_BAD_BLOCK_NUM for a range
 * outside the file system, EXT4FS_E_BLOCK_STATE when a block in the range
 * is already in the requested state (nothing is changed then), bitmap load
 * errors.  Used by the allocator and by tools (debug4fs setb/freeb).
 * With bigalloc the unit is the cluster: every cluster the range touches
 * changes, the group's count moves by clusters and the superblock's by
 * their blocks.
 */
int ext4fs_blocks_mark_used(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);
int ext4fs_blocks_mark_free(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/*
 * Mark count blocks from blk in use in the block bitmap without counting
 * them: as ext4fs_blocks_mark_used() (BLOCK_UNINIT is cleared so the bits
 * reach the disk, and the allocator's summaries learn of them, so it never
 * hands these blocks out), except that the groups' and the superblock's
 * free block counts stay exactly as they were.  The counts then disagree
 * with the bitmap until the caller recounts them: for a checker that takes
 * a block for a repair and leaves the free counts to its final recount, as
 * e2fsck does; ext4fs_alloc_check() reports the difference meanwhile.
 * ext4fs_flush() writes the bitmap and the unchanged counts.  Errors as
 * ext4fs_blocks_mark_used(): EXT4FS_E_BLOCK_STATE when a block in the range
 * is already in use (nothing is changed then), EXT4FS_E_BAD_BLOCK_NUM,
 * EXT4FS_E_READ_ONLY, bitmap load errors.
 */
int ext4fs_blocks_mark_used_uncounted(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/*
 * The reverse: clear count blocks from blk in the block bitmap (and free
 * them to the allocator) leaving the free counts as they are, for a checker
 * that marked them with ext4fs_blocks_mark_used_uncounted() for a while.
 * Errors as ext4fs_blocks_mark_free(): EXT4FS_E_BLOCK_STATE when a block in
 * the range is already free (nothing is changed then), EXT4FS_E_BAD_BLOCK_NUM,
 * EXT4FS_E_READ_ONLY, bitmap load errors.
 */
int ext4fs_blocks_mark_free_uncounted(struct ext4fs_fs *fs, uint64_t blk, uint64_t count);

/*
 * Mark inode ino in use (or free): inode bitmap, the group's free inode and
 * directory counts, INODE_UNINIT and bg_itable_unused, the superblock's free
 * count.  Marking in use past bg_itable_unused zeroes the inode records the
 * mark passes over when the table is not known to be zeroed, never the
 * record of an inode the bitmap has in use.  Errors:
 * EXT4FS_E_BAD_INODE_NUM, EXT4FS_E_INODE_STATE when already in that state.
 */
int ext4fs_inode_mark_used(struct ext4fs_fs *fs, uint32_t ino, int is_dir);
int ext4fs_inode_mark_free(struct ext4fs_fs *fs, uint32_t ino, int is_dir);

/*
 * Mark inode ino in use in the inode bitmap without counting it: as
 * ext4fs_inode_mark_used() (INODE_UNINIT is cleared, bg_itable_unused moves
 * past ino and the records it passes over are zeroed when the table is not
 * known to be zeroed), except that the group's free inode and directory
 * counts and the superblock's free inode count stay exactly as they were,
 * so no is_dir is needed.  The counts then disagree with the bitmap until
 * the caller recounts them (a checker's final pass, as in e2fsck).
 * ext4fs_flush() writes the bitmap and the unchanged counts.  Errors as
 * ext4fs_inode_mark_used(): EXT4FS_E_INODE_STATE when ino is already in
 * use (nothing is changed then), EXT4FS_E_BAD_INODE_NUM, EXT4FS_E_READ_ONLY,
 * bitmap load and inode table I/O errors.
 */
int ext4fs_inode_mark_used_uncounted(struct ext4fs_fs *fs, uint32_t ino);

/*
 * The handle's live bitmaps (loaded on first use), owned by the handle and
 * valid until it is closed.  Errors: as the bitmap loaders.
 */
struct ext4fs_bitmap;
int ext4fs_fs_block_bitmap(struct ext4fs_fs *fs, const struct ext4fs_bitmap **out);
int ext4fs_fs_inode_bitmap(struct ext4fs_fs *fs, const struct ext4fs_bitmap **out);

/* Which of the handle's two bitmaps. */
enum ext4fs_bitmap_kind {
	EXT4FS_BLOCK_BITMAP,
	EXT4FS_INODE_BITMAP,
};

/*
 * Nonzero when the live bitmap of that kind was changed (by the marking
 * calls above or by ext4fs_bitmap_rewrite()) since the handle was opened,
 * flushed or not; always 0 on a read-only handle.  The rewrite a backup
 * open owes (see ext4fs_open()) does not count: fsck asks this to know
 * whether its own repairs touched the bitmap, as e2fsck's dirty flag tells
 * it.  Cannot fail.
 */
int ext4fs_bitmap_changed(const struct ext4fs_fs *fs, enum ext4fs_bitmap_kind kind);

/*
 * Have the next flush write every group's block (inode) bitmap from the
 * live one, with its padding set and a fresh checksum, except groups
 * flagged BLOCK_UNINIT (INODE_UNINIT), which keep none on disk: how fsck
 * repairs a bad bitmap checksum or padding.  Loads the live bitmap when
 * needed.  Errors: EXT4FS_E_READ_ONLY, EXT4FS_E_INVALID_ARG for an unknown
 * kind, bitmap load errors.
 */
int ext4fs_bitmap_rewrite(struct ext4fs_fs *fs, enum ext4fs_bitmap_kind kind);

/*
 * Replace group g's descriptor (debug4fs set_bg, fsck repairs); the
 * checksum is recomputed.  Errors: EXT4FS_E_READ_ONLY, EXT4FS_E_INVALID_ARG.
 */
int ext4fs_group_desc_set(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd);

/*
 * As ext4fs_group_desc_set(), but gd->checksum is stored as given instead
 * of computed: for tools that damage a descriptor on purpose (debug4fs
 * set_bg leaves a stale checksum, as debugfs does).  The next change the
 * library makes to the group recomputes it.  Same errors.
 */
int ext4fs_group_desc_set_exact(struct ext4fs_fs *fs, uint32_t g,
				const struct ext4fs_group_desc *gd);

/*
 * Replace the superblock (debug4fs set_super_value, tune4fs).  Geometry
 * fields and incompatible or read-only-compatible features must not change
 * (EXT4FS_E_INVALID_ARG), except where no block changes meaning: uninit_bg
 * beside metadata_csum (it selects no checksum), inline_data (which only
 * allows inodes to keep their data in themselves; e4fsck sets it for
 * inodes that do so), adding extents or large_file, dropping filetype (the
 * type bytes of entries written afterwards are 0), dropping csum_seed
 * without metadata_csum, and dropping meta_bg when s_first_meta_bg was
 * at or past the descriptor blocks (no descriptor block moves), and raising
 * revision 0 to 1 with the inode size revision 0 implies.  The
 * checksum is recomputed at flush.  Errors:
 * EXT4FS_E_READ_ONLY, EXT4FS_E_INVALID_ARG.
 */
int ext4fs_super_set(struct ext4fs_fs *fs, const struct ext4fs_super *sb);

/*
 * Change the superblock's journal state (e4fsck's journal check): the
 * has_journal and needs_recovery features, s_journal_inum, s_journal_dev,
 * s_journal_uuid, s_jnl_blocks, s_jnl_backup_type and s_state are taken
 * from sb, every other field of sb is ignored.  On a writable handle the
 * change is written at flush; on a handle opened with EXT4FS_OPEN_RECOVERY
 * (a journal that may need replaying keeps the handle from being
 * writable) the primary superblock is written at once, its backups by a
 * later writable handle's flush.  Errors: EXT4FS_E_READ_ONLY, I/O errors.
 */
int ext4fs_super_set_journal(struct ext4fs_fs *fs, const struct ext4fs_super *sb);

#ifdef __cplusplus
}
#endif
#endif
