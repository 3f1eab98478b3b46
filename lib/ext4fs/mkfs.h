/*
 * mkfs.h - planning and writing a new file system (the engine of mke4fs).
 *
 * Layer 5 service.  Making a file system is split in two steps so a tool can
 * report (mke4fs -n), refuse, or ask before anything touches the target:
 *
 *   1. ext4fs_mkfs_plan() turns explicit parameters into a complete plan:
 *      the superblock, the group geometry, where every group's bitmaps and
 *      inode table go (FLEX_BG packing as mke2fs 1.47 packs them), the
 *      reserved GDT blocks, the root directory, lost+found, the resize inode,
 *      the journal and the orphan file, and every counter.  It reads and
 *      writes nothing and keeps memory in proportion to the metadata, not to
 *      the device (a 15 TiB plan is a few MiB).
 *   2. ext4fs_mkfs_write() writes the plan through an I/O channel.  Runs of
 *      zeros are never written to a target that already reads as zeros (a
 *      sparse file, a discarded device that zeroes), adjacent metadata is
 *      coalesced into large writes, and the primary superblock is written
 *      last, so a failure part-way leaves no valid-looking file system.
 *
 * The parameters are the numbers a tool has already decided (block size,
 * inode ratio, features...); policy such as mke2fs.conf usage types lives in
 * the tool.  A plan does not change once made, except that writing it fills
 * in what only the write knows (bitmap checksums, ITABLE_ZEROED), which
 * ext4fs_mkfs_plan_group() then reports.  The library prints nothing:
 * progress is reported through a callback.
 */
#ifndef EXT4FS_MKFS_H
#define EXT4FS_MKFS_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/io.h"
#include "ext4fs/super.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ext4fs_mkfs_params.flags */
#define EXT4FS_MKFS_LAZY_ITABLE_INIT  0x01 /* leave unused inode tables for the kernel to zero */
#define EXT4FS_MKFS_LAZY_JOURNAL_INIT 0x02 /* do not zero the journal */
#define EXT4FS_MKFS_PACKED_META       0x04 /* all bitmaps and inode tables at the start (-E packed_meta_blocks) */
#define EXT4FS_MKFS_DISCARD           0x08 /* discard the target first (punch holes in a file) */
#define EXT4FS_MKFS_ASSUME_ZEROED     0x10 /* the target is known to read as zeros already */

struct ext4fs_mkfs_params {
	uint64_t blocks_count;        /* size in blocks; may be trimmed to whole groups as mke2fs does */
	uint32_t block_size;          /* 1024..65536, a power of two */
	uint32_t inode_size;          /* 128..block_size, a power of two */
	uint64_t inodes_count;        /* wanted inodes; 0 = blocks_count * block_size / inode_ratio */
	uint32_t inode_ratio;         /* bytes per inode, used when inodes_count is 0 */
	uint32_t blocks_per_group;    /* 0 = 8 * block_size */
	double reserved_percent;      /* -m: share of blocks reserved for root, 0..50 */
	uint32_t feature_compat;
	uint32_t feature_incompat;
	uint32_t feature_ro_compat;
	uint32_t log_groups_per_flex; /* with flex_bg: log2 of the flex group size (mke2fs: 4) */
	uint32_t raid_stride;         /* s_raid_stride, in blocks */
	uint32_t raid_stripe_width;   /* s_raid_stripe_width, in blocks */
	int32_t reserved_gdt_blocks;  /* -1 = enough to grow 1024 times, as mke2fs reserves */
	uint32_t journal_blocks;      /* with has_journal; 0 = mke2fs's default for the size */
	uint32_t journal_fc_blocks;   /* fast-commit area with fast_commit; 0 = journal_blocks / 64 */
	uint32_t orphan_file_blocks;  /* with orphan_file; 0 = mke2fs's default */
	uint32_t num_backup_sb;       /* with sparse_super2: 0, 1 or 2 backups */
	uint8_t uuid[16];
	uint8_t hash_seed[16];
	uint8_t def_hash_version;     /* 0 legacy, 1 half_md4 (mke2fs's default), 2 tea */
	char volume_name[17];         /* NUL-terminated; at most 16 bytes are stored */
	char last_mounted[65];
	uint32_t default_mount_opts;  /* s_default_mount_opts (acl,user_xattr = 0x000C) */
	uint16_t errors;              /* s_errors: 1 continue, 2 remount-ro, 3 panic */
	int16_t max_mnt_count;        /* -1 = no mount-count check */
	uint32_t checkinterval;       /* seconds; 0 = none */
	uint32_t root_uid;
	uint32_t root_gid;
	int64_t now;                  /* creation time, seconds since the epoch */
	uint32_t creator_os;          /* 0 Linux */
	uint32_t flags;               /* EXT4FS_MKFS_* */
};

/* Fill *p with mke2fs 1.47's ext4 defaults for a file system of blocks_count 4 KiB blocks
 * (UUID, hash seed and time are left zero for the caller).  Cannot fail. */
void ext4fs_mkfs_params_init(struct ext4fs_mkfs_params *p, uint64_t blocks_count);

/* The journal size mke2fs chooses for a file system of blocks_count blocks; 0 when it
 * is too small for a journal (fewer than 2048 blocks).  Cannot fail. */
uint32_t ext4fs_mkfs_default_journal_blocks(uint64_t blocks_count);

struct ext4fs_mkfs_plan;

/*
 * Plan a file system.  On success *out is a plan the caller frees with
 * ext4fs_mkfs_plan_free().  Errors (nothing is allocated, *out is NULL, and
 * errmsg, when not NULL, says which parameter is wrong and why):
 * EXT4FS_E_INVALID_ARG (a bad or contradictory parameter), EXT4FS_E_TOO_SMALL,
 * EXT4FS_E_TOO_MANY_INODES, EXT4FS_E_UNSUPP_FEATURE (a feature mke4fs cannot make
 * yet), EXT4FS_E_NO_SPACE (the metadata does not fit), EXT4FS_E_NO_MEMORY.
 */
int ext4fs_mkfs_plan(const struct ext4fs_mkfs_params *p, struct ext4fs_mkfs_plan **out,
		     char *errmsg, size_t errmsg_len);

/* Free a plan; NULL is allowed. */
void ext4fs_mkfs_plan_free(struct ext4fs_mkfs_plan *plan);

/* The superblock the plan will write (final counts; s_kbytes_written and s_wtime are
 * set when it is written).  Owned by the plan. */
const struct ext4fs_super *ext4fs_mkfs_plan_super(const struct ext4fs_mkfs_plan *plan);

/* The plan's geometry (the same numbers ext4fs_open() derives).  Owned by the plan. */
const struct ext4fs_geom *ext4fs_mkfs_plan_geom(const struct ext4fs_mkfs_plan *plan);

/* Group g's descriptor as it will be written (g < group_count).  Owned by the plan. */
const struct ext4fs_group_desc *ext4fs_mkfs_plan_group(const struct ext4fs_mkfs_plan *plan, uint32_t g);

/* Block numbers of the backup superblocks, in order; returns how many there are and
 * stores at most max of them in blocks (which may be NULL when max is 0). */
uint32_t ext4fs_mkfs_plan_backups(const struct ext4fs_mkfs_plan *plan, uint64_t *blocks, uint32_t max);

/* Blocks in the journal (0 without one), and in its fast-commit area. */
uint32_t ext4fs_mkfs_plan_journal_blocks(const struct ext4fs_mkfs_plan *plan);
uint32_t ext4fs_mkfs_plan_journal_fc_blocks(const struct ext4fs_mkfs_plan *plan);

/* Stages reported to the progress callback, in the order they run. */
enum ext4fs_mkfs_stage {
	EXT4FS_MKFS_STAGE_DISCARD,   /* "Discarding device blocks" (total: blocks) */
	EXT4FS_MKFS_STAGE_TABLES,    /* "Allocating group tables" (total: groups) */
	EXT4FS_MKFS_STAGE_ITABLES,   /* "Writing inode tables" (total: groups) */
	EXT4FS_MKFS_STAGE_JOURNAL,   /* "Creating journal (N blocks)" (total: blocks) */
	EXT4FS_MKFS_STAGE_SUPER,     /* "Writing superblocks and filesystem accounting information" (total: groups) */
	EXT4FS_MKFS_STAGE_DISCARD_FAILED, /* the discard failed (not fatal): done is -error */
};

/*
 * Progress: called with done == 0 when a stage starts, then as it advances,
 * and with done == total when it ends.  A failed discard is reported as
 * EXT4FS_MKFS_STAGE_DISCARD_FAILED with done = -error (total 0), and the
 * write goes on.  A stage that has nothing to do (no
 * discard, no journal) is not reported at all.
 */
typedef void (*ext4fs_mkfs_progress_fn)(void *arg, enum ext4fs_mkfs_stage stage,
					uint64_t done, uint64_t total);

/* What a write did, for tools and benchmarks. */
struct ext4fs_mkfs_result {
	int discarded;               /* the discard stage ran and succeeded */
	int discard_error;           /* why the discard failed (-errno), 0 when it did not */
	int zeroed;                  /* the target was treated as reading zeros */
	uint64_t bytes_written;
	uint64_t writes;
};

/*
 * Write the planned file system through io (opened for writing, at least
 * blocks_count * block_size bytes).  progress may be NULL.  result may be
 * NULL.  Errors: the I/O error (-errno, EXT4FS_E_OUT_OF_IMAGE when the
 * target is too small), EXT4FS_E_NO_MEMORY; errmsg says what was being
 * written.  The primary superblock is written last, after a flush, so a
 * failed write leaves a target no tool mistakes for a finished file system.
 */
int ext4fs_mkfs_write(const struct ext4fs_mkfs_plan *plan, struct ext4fs_io *io,
		      ext4fs_mkfs_progress_fn progress, void *progress_arg,
		      struct ext4fs_mkfs_result *result, char *errmsg, size_t errmsg_len);

#ifdef __cplusplus
}
#endif
#endif
