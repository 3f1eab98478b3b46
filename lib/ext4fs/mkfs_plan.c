/*
 * mkfs_plan.c - decide everything about a new file system without I/O.
 *
 * The layout follows mke2fs 1.47 so that images made by either tool look
 * alike to users and to scripts comparing dumpe2fs output:
 *
 *  1. Geometry: groups of 8 * block_size blocks; a last group too small to
 *     hold its metadata plus 50 blocks is dropped; inodes per group rounded
 *     up to fill whole inode-table blocks and to a multiple of 8; reserved
 *     GDT blocks enough to grow the descriptor table to 1024 times the size
 *     (capped at 2^32 blocks and at one indirect block of pointers).
 *  2. Group tables, group by group.  With flex_bg the block bitmaps, inode
 *     bitmaps and inode tables of a flex group are packed into three runs at
 *     the start of the flex group, each run sized for the whole flex group
 *     (for a short last flex group, for the groups it has) so later groups
 *     continue where the previous one stopped.  Without flex_bg each group
 *     holds its own (offset by the RAID stride when one is given).
 *  3. Files, in mke2fs's order: the root directory and lost+found from the
 *     start of group 0's flex group, the resize inode's double-indirect
 *     block after group 0's tables, the journal from the start of the
 *     emptiest group near the middle of the device (block-mapped journals
 *     from group 0), then the orphan file.
 *
 * Blocks in use are kept as extents (extset), so planning a 15 TiB file
 * system costs memory in proportion to its metadata runs.
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/fsfeatures.h"
#include "ext4fs/inode.h"
#include "ext4fs/journal.h"
#include "fs_internal.h"
#include "mkfs_internal.h"

#define MAX_BLOCKS_32BIT 0xFFFFFFFFULL

/* Features mke4fs can make: everything that is only a flag, plus the ones
 * whose structures the plan builds (journal, resize inode, orphan file,
 * sparse_super2 backups, fast-commit area). */
#define MKFS_COMPAT_OK (EXT4FS_FEATURE_COMPAT_DIR_PREALLOC | EXT4FS_FEATURE_COMPAT_HAS_JOURNAL | \
			EXT4FS_FEATURE_COMPAT_EXT_ATTR | EXT4FS_FEATURE_COMPAT_RESIZE_INODE | \
			EXT4FS_FEATURE_COMPAT_DIR_INDEX | EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2 | \
			EXT4FS_FEATURE_COMPAT_FAST_COMMIT | EXT4FS_FEATURE_COMPAT_STABLE_INODES | \
			EXT4FS_FEATURE_COMPAT_ORPHAN_FILE)
#define MKFS_INCOMPAT_OK (EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_EXTENTS | \
			  EXT4FS_FEATURE_INCOMPAT_64BIT | EXT4FS_FEATURE_INCOMPAT_FLEX_BG | \
			  EXT4FS_FEATURE_INCOMPAT_EA_INODE | EXT4FS_FEATURE_INCOMPAT_CSUM_SEED | \
			  EXT4FS_FEATURE_INCOMPAT_LARGEDIR | EXT4FS_FEATURE_INCOMPAT_INLINE_DATA | \
			  EXT4FS_FEATURE_INCOMPAT_ENCRYPT | EXT4FS_FEATURE_INCOMPAT_CASEFOLD)
#define MKFS_RO_COMPAT_OK (EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE | \
			   EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE | EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM | \
			   EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK | EXT4FS_FEATURE_RO_COMPAT_EXTRA_ISIZE | \
			   EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM | EXT4FS_FEATURE_RO_COMPAT_READONLY | \
			   EXT4FS_FEATURE_RO_COMPAT_PROJECT | EXT4FS_FEATURE_RO_COMPAT_VERITY)

static int plan_fail(char *errmsg, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int plan_fail(char *errmsg, size_t len, int err, const char *fmt, ...)
{
	if (errmsg && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(errmsg, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

void ext4fs_mkfs_params_init(struct ext4fs_mkfs_params *p, uint64_t blocks_count)
{
	memset(p, 0, sizeof(*p));
	p->blocks_count = blocks_count;
	p->block_size = 4096;
	p->inode_size = 256;
	p->inode_ratio = 16384;
	p->reserved_percent = 5.0;
	p->feature_compat = EXT4FS_FEATURE_COMPAT_HAS_JOURNAL | EXT4FS_FEATURE_COMPAT_EXT_ATTR |
			    EXT4FS_FEATURE_COMPAT_RESIZE_INODE | EXT4FS_FEATURE_COMPAT_DIR_INDEX;
	p->feature_incompat = EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_EXTENTS |
			      EXT4FS_FEATURE_INCOMPAT_64BIT | EXT4FS_FEATURE_INCOMPAT_FLEX_BG;
	p->feature_ro_compat = EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE |
			       EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE | EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK |
			       EXT4FS_FEATURE_RO_COMPAT_EXTRA_ISIZE | EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM;
	p->log_groups_per_flex = 4;
	p->reserved_gdt_blocks = -1;
	p->num_backup_sb = 2;
	p->def_hash_version = 1;
	p->default_mount_opts = 0x000C;
	p->errors = 1;
	p->max_mnt_count = -1;
	p->flags = EXT4FS_MKFS_LAZY_ITABLE_INIT | EXT4FS_MKFS_DISCARD;
}

uint32_t ext4fs_mkfs_default_journal_blocks(uint64_t n)
{
	if (n < 2048)
		return 0;
	if (n < 32768)
		return 1024;
	if (n < 256 * 1024)
		return 4096;
	if (n < 512 * 1024)
		return 8192;
	if (n < 4096 * 1024)
		return 16384;
	if (n < 8192 * 1024)
		return 32768;
	if (n < 16384 * 1024)
		return 65536;
	if (n < 32768 * 1024)
		return 131072;
	return 262144;
}

static uint32_t default_orphan_file_blocks(uint64_t n)
{
	if (n < 128 * 1024)
		return 32;
	if (n < 2 * 1024 * 1024)
		return (uint32_t)(n / 4096);
	return 512;
}

static int is_pow2(uint64_t n)
{
	return n && !(n & (n - 1));
}

static uint32_t log2_u32(uint32_t n)
{
	uint32_t l = 0;
	while (n > 1) {
		n >>= 1;
		l++;
	}
	return l;
}

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/*
 * A group's free-block count is 16 bits in a 32-byte descriptor, so
 * groups stop at 65528 blocks (64 KiB blocks would otherwise give 524288),
 * which is what mke2fs and e2fsck hold to.
 */
static uint32_t max_blocks_per_group(uint32_t block_size)
{
	return 8 * block_size < 65528 ? 8 * block_size : 65528;
}

static int check_params(const struct ext4fs_mkfs_params *p, char *errmsg, size_t len)
{
	uint32_t bad;
	char names[256];
	uint32_t f[3];

	if (p->block_size < 1024 || p->block_size > 65536 || !is_pow2(p->block_size))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid block size %u: must be a power of two from 1024 to 65536",
				 p->block_size);
	if (p->inode_size < 128 || p->inode_size > p->block_size || !is_pow2(p->inode_size))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid inode size %u: must be a power of two from 128 to the block size (%u)",
				 p->inode_size, p->block_size);
	if (p->blocks_count == 0)
		return plan_fail(errmsg, len, EXT4FS_E_TOO_SMALL, "the file system size is 0 blocks");
	if (p->blocks_count > (UINT64_C(1) << 48))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "%llu blocks is more than ext4's 2^48-block limit",
				 (unsigned long long)p->blocks_count);
	if (!(p->reserved_percent >= 0.0 && p->reserved_percent <= 50.0))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid reserved blocks percentage %g: must be from 0 to 50",
				 p->reserved_percent);
	if (!p->inodes_count && p->inode_ratio < 1024)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid inode ratio %u: must be at least 1024", p->inode_ratio);
	if (p->blocks_per_group &&
	    (p->blocks_per_group < 256 || p->blocks_per_group > max_blocks_per_group(p->block_size) ||
	     p->blocks_per_group % 8))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid blocks per group %u: must be a multiple of 8 from 256 to %u",
				 p->blocks_per_group, max_blocks_per_group(p->block_size));

	f[0] = p->feature_compat & ~MKFS_COMPAT_OK;
	f[1] = p->feature_incompat & ~MKFS_INCOMPAT_OK;
	f[2] = p->feature_ro_compat & ~MKFS_RO_COMPAT_OK;
	bad = f[0] | f[1] | f[2];
	if (bad) {
		ext4fs_features_format(f, names, sizeof(names));
		return plan_fail(errmsg, len, EXT4FS_E_UNSUPP_FEATURE,
				 "file systems with the feature(s) %s cannot be made yet", names);
	}
	if ((p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) &&
	    !(p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_EXTENTS))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "the 64bit feature needs the extent feature");
	if (!(p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) &&
	    p->blocks_count > MAX_BLOCKS_32BIT)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "%llu blocks is too many for a file system without the 64bit feature",
				 (unsigned long long)p->blocks_count);
	if ((p->feature_compat & EXT4FS_FEATURE_COMPAT_RESIZE_INODE) &&
	    !(p->feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER) && p->reserved_gdt_blocks != 0)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "reserved online resize blocks (resize_inode) are not supported without sparse_super");
	if ((p->feature_compat & EXT4FS_FEATURE_COMPAT_ORPHAN_FILE) &&
	    !(p->feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "the orphan_file feature needs a journal (has_journal)");
	if ((p->feature_compat & EXT4FS_FEATURE_COMPAT_FAST_COMMIT) &&
	    !(p->feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "the fast_commit feature needs a journal (has_journal)");
	if ((p->feature_compat & EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2) && p->num_backup_sb > 2)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid num_backup_sb %u: must be 0, 1 or 2", p->num_backup_sb);
	if ((p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_FLEX_BG) && p->log_groups_per_flex > 31)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid flex group size 2^%u", p->log_groups_per_flex);
	if ((p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_INLINE_DATA) &&
	    p->inode_size < 256)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "inline_data needs inodes of at least 256 bytes (inode size is %u)",
				 p->inode_size);
	if (p->raid_stride > 0xFFFF)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "invalid RAID stride %u: at most 65535 blocks", p->raid_stride);
	if (!memchr(p->volume_name, '\0', sizeof(p->volume_name)))
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG, "the volume label is longer than 16 bytes");
	return 0;
}

/* -- geometry ------------------------------------------------------------- */

static int group_has_super(const struct ext4fs_super *sb, uint32_t g)
{
	if (g == 0)
		return 1;
	if (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2)
		return g == sb->s_backup_bgs[0] || g == sb->s_backup_bgs[1];
	if (g <= 1 || !(sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER))
		return 1;
	if (!(g & 1))
		return 0;
	for (uint32_t base = 3; base <= 7; base += 2) {
		uint32_t n = g;
		while (n % base == 0)
			n /= base;
		if (n == 1)
			return 1;
	}
	return 0;
}

static void set_backup_bgs(struct ext4fs_super *sb, const struct ext4fs_mkfs_params *p, uint32_t groups)
{
	uint32_t a = 0, b = 0;

	if (!(sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2))
		return;
	if (p->num_backup_sb >= 1)
		a = 1;
	if (p->num_backup_sb >= 2)
		b = groups - 1;
	if (a >= groups)
		a = groups - 1;
	if (b >= groups)
		b = groups - 1;
	if (b == a)
		b = 0;
	if (a > b) {
		uint32_t t = a;
		a = b;
		b = t;
	}
	sb->s_backup_bgs[0] = a;
	sb->s_backup_bgs[1] = b;
}

/* Fill the geometry fields of sb as mke2fs's initialisation does. */
static int plan_geometry(const struct ext4fs_mkfs_params *p, struct ext4fs_super *sb,
			 char *errmsg, size_t len)
{
	uint32_t bs = p->block_size;
	uint32_t desc_size = (p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) ? 64 : 32;
	uint32_t desc_per_block = bs / desc_size;
	uint32_t bpg = p->blocks_per_group ? p->blocks_per_group : max_blocks_per_group(bs);
	uint32_t first_data_block = bs == 1024 ? 1 : 0;
	uint64_t blocks = p->blocks_count;
	uint64_t groups, inodes, ipg, itb;
	uint32_t desc_blocks, rsv_gdt;
	/* Reserved blocks as mke2fs computes them: from the requested size, and
	 * rescaled whenever a short last group is dropped (a later retry with
	 * smaller groups keeps the rescaled value). */
	const uint64_t r_param = (uint64_t)(p->reserved_percent * (double)p->blocks_count / 100.0);
	uint64_t r_blocks = r_param;

	if (bpg > 8 * bs)
		bpg = 8 * bs;
	if (p->inodes_count)
		inodes = p->inodes_count;
	else
		inodes = (uint64_t)((long double)p->blocks_count * bs / p->inode_ratio);
	if (inodes > 0xFFFFFFFFULL)
		inodes = 0xFFFFFFFFULL;
	if (inodes < 12)
		inodes = 12;
retry:
	if (blocks <= first_data_block)
		return plan_fail(errmsg, len, EXT4FS_E_TOO_SMALL,
				 "%llu blocks of %u bytes is too small for a file system",
				 (unsigned long long)p->blocks_count, bs);
	groups = div_ceil(blocks - first_data_block, bpg);
	if (groups > 0xFFFFFFFFULL)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG, "too many block groups (%llu)",
				 (unsigned long long)groups);
	desc_blocks = (uint32_t)div_ceil(groups, desc_per_block);
	sb->s_feature_compat = p->feature_compat;
	sb->s_feature_incompat = p->feature_incompat;
	sb->s_feature_ro_compat = p->feature_ro_compat;
	set_backup_bgs(sb, p, (uint32_t)groups);

	ipg = div_ceil(inodes, groups);
	if (ipg > 8ULL * bs) {
		if (bpg >= 256 && !p->blocks_per_group) {
			/* Smaller groups, more of them, fewer inodes each. */
			bpg -= 8;
			blocks = p->blocks_count;
			goto retry;
		}
		return plan_fail(errmsg, len, EXT4FS_E_TOO_MANY_INODES,
				 "%llu inodes do not fit in %llu groups of at most %u inodes",
				 (unsigned long long)inodes, (unsigned long long)groups, 8 * bs);
	}
ipg_retry:
	itb = div_ceil(ipg * p->inode_size, bs);
	{
		uint64_t fitted = itb * bs / p->inode_size;
		if (fitted < 8)
			fitted = 8;
		fitted &= ~7ULL;
		if (fitted * groups > 0xFFFFFFFFULL) {
			ipg--;
			goto ipg_retry;
		}
		sb->s_inodes_per_group = (uint32_t)fitted;
		itb = div_ceil(fitted * p->inode_size, bs);
	}
	if (sb->s_inodes_per_group > 8 * bs) {
		ipg = 8 * bs;
		goto ipg_retry;
	}

	if (p->reserved_gdt_blocks >= 0) {
		rsv_gdt = (uint32_t)p->reserved_gdt_blocks;
	} else if (p->feature_compat & EXT4FS_FEATURE_COMPAT_RESIZE_INODE) {
		uint64_t max_blocks = MAX_BLOCKS_32BIT;
		if (blocks < max_blocks / 1024)
			max_blocks = blocks * 1024;
		uint64_t rsv_groups = div_ceil(max_blocks - first_data_block, bpg);
		int64_t want = (int64_t)div_ceil(rsv_groups, desc_per_block) - desc_blocks;
		rsv_gdt = want < 0 ? bs / 4 : (uint32_t)want;
		if (rsv_gdt > bs / 4)
			rsv_gdt = bs / 4;
	} else {
		rsv_gdt = 0;
	}
	if (rsv_gdt > bs / 4)
		return plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				 "%u reserved GDT blocks is more than the %u a block can address",
				 rsv_gdt, bs / 4);
	if (!(p->feature_compat & EXT4FS_FEATURE_COMPAT_RESIZE_INODE))
		rsv_gdt = 0;

	if ((uint64_t)sb->s_inodes_per_group * groups < 12)
		return plan_fail(errmsg, len, EXT4FS_E_TOO_SMALL,
				 "%llu blocks give only %llu inodes; a file system needs at least 12",
				 (unsigned long long)blocks,
				 (unsigned long long)sb->s_inodes_per_group * groups);
	if (rsv_gdt + desc_blocks > (uint64_t)bpg * 3 / 4)
		return plan_fail(errmsg, len, EXT4FS_E_UNSUPP_FEATURE,
				 "the descriptor table (%u blocks, %u reserved) would take more than 3/4 of a %u-block group; "
				 "that layout needs meta_bg, which cannot be made yet",
				 desc_blocks, rsv_gdt, bpg);
	if (3 + itb + desc_blocks + rsv_gdt > bpg)
		return plan_fail(errmsg, len, EXT4FS_E_TOO_MANY_INODES,
				 "the inode table (%llu blocks per group) and group metadata do not fit in a group of %u blocks",
				 (unsigned long long)itb, bpg);
	{
		uint64_t overhead = 2 + itb;
		uint64_t rem = (blocks - first_data_block) % bpg;
		if (group_has_super(sb, (uint32_t)groups - 1))
			overhead += 1 + desc_blocks + rsv_gdt;
		if (groups == 1 && rem && rem < overhead)
			return plan_fail(errmsg, len, EXT4FS_E_TOO_SMALL,
					 "%llu blocks cannot hold a group's metadata (%llu blocks)",
					 (unsigned long long)blocks, (unsigned long long)overhead);
		if (rem && rem < overhead + 50) {
			double ratio = 100.0 * (double)r_param / (double)p->blocks_count;
			blocks -= rem;
			r_blocks = (uint64_t)(ratio * (double)blocks / 100.0);
			goto retry;
		}
	}

	sb->s_blocks_count_lo = (uint32_t)blocks;
	sb->s_blocks_count_hi = (uint32_t)(blocks >> 32);
	sb->s_r_blocks_count_lo = (uint32_t)r_blocks;
	sb->s_r_blocks_count_hi = (uint32_t)(r_blocks >> 32);
	sb->s_first_data_block = first_data_block;
	sb->s_log_block_size = log2_u32(bs) - 10;
	sb->s_log_cluster_size = sb->s_log_block_size;
	sb->s_blocks_per_group = bpg;
	sb->s_clusters_per_group = bpg;
	sb->s_inodes_count = (uint32_t)(sb->s_inodes_per_group * groups);
	sb->s_reserved_gdt_blocks = (uint16_t)rsv_gdt;
	sb->s_desc_size = (p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) ? 64 : 0;
	return 0;
}

static void plan_super(const struct ext4fs_mkfs_params *p, struct ext4fs_super *sb)
{
	uint32_t now_lo = (uint32_t)p->now;
	uint8_t now_hi = (uint8_t)((uint64_t)p->now >> 32);

	sb->s_magic = EXT4FS_SUPER_MAGIC;
	sb->s_state = EXT4FS_STATE_VALID;
	sb->s_errors = p->errors ? p->errors : 1;
	sb->s_max_mnt_count = (uint16_t)p->max_mnt_count;
	sb->s_checkinterval = p->checkinterval;
	sb->s_creator_os = p->creator_os;
	sb->s_rev_level = 1;
	sb->s_first_ino = 11;
	sb->s_inode_size = (uint16_t)p->inode_size;
	if (p->inode_size >= 160) {
		sb->s_min_extra_isize = 32;
		sb->s_want_extra_isize = 32;
	}
	sb->s_mkfs_time = sb->s_lastcheck = sb->s_wtime = now_lo;
	sb->s_mkfs_time_hi = sb->s_lastcheck_hi = sb->s_wtime_hi = now_hi;
	memcpy(sb->s_uuid, p->uuid, 16);
	memcpy(sb->s_volume_name, p->volume_name, 16);
	memcpy(sb->s_last_mounted, p->last_mounted, 64);
	for (int i = 0; i < 4; i++)
		sb->s_hash_seed[i] = (uint32_t)p->hash_seed[4 * i] | (uint32_t)p->hash_seed[4 * i + 1] << 8 |
				     (uint32_t)p->hash_seed[4 * i + 2] << 16 | (uint32_t)p->hash_seed[4 * i + 3] << 24;
	sb->s_def_hash_version = p->def_hash_version;
	sb->s_default_mount_opts = p->default_mount_opts;
	sb->s_raid_stride = (uint16_t)p->raid_stride;
	sb->s_raid_stripe_width = p->raid_stripe_width;
	/* char is signed on the machines mke2fs users compare with (x86). */
	sb->s_flags = EXT4FS_FLAGS_SIGNED_HASH;
	if (p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_FLEX_BG)
		sb->s_log_groups_per_flex = (uint8_t)p->log_groups_per_flex;
	if (p->feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) {
		sb->s_checksum_type = 1;
		if (p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_CSUM_SEED)
			sb->s_checksum_seed = ext4fs_crc32c(~0U, p->uuid, 16);
	}
	if (p->feature_incompat & EXT4FS_FEATURE_INCOMPAT_CASEFOLD)
		sb->s_encoding = 1;   /* utf8-12.1, mke2fs's default */
	if (p->feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL)
		sb->s_jnl_backup_type = EXT4FS_JNL_BACKUP_BLOCKS;
	/* The resize inode's size needs large_file from 2 GiB up (2 KiB blocks and larger). */
	if (p->feature_compat & EXT4FS_FEATURE_COMPAT_RESIZE_INODE) {
		uint64_t apb = p->block_size / 4;
		if ((apb * apb + apb + 12) * p->block_size >= 0x80000000ULL)
			sb->s_feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE;
	}
}

/* -- block allocation, mke2fs's rules --------------------------------------- */

static uint64_t plan_blocks(const struct ext4fs_mkfs_plan *pl)
{
	return pl->fs->geom.blocks_count;
}

static int mark_used(struct ext4fs_mkfs_plan *pl, uint64_t blk, uint64_t n)
{
	return ext4fs__extset_add(&pl->used, blk, n);
}

/*
 * First b from start such that [b, b+num) is free, wrapping to the first
 * data block at the end of the device, giving up at finish (libext2fs'
 * get_free_blocks semantics, including how "finish" is only checked on the
 * way).  EXT4FS_E_NO_SPACE when there is none.
 */
static int get_free_blocks(const struct ext4fs_mkfs_plan *pl, uint64_t start, uint64_t finish,
			   uint64_t num, uint64_t *ret)
{
	const struct extset *s = &pl->used;
	uint64_t total = plan_blocks(pl), fdb = pl->fs->geom.first_data_block;
	uint64_t b = start ? start : fdb;
	int wrapped = 0;

	if (!finish)
		finish = start;
	if (!num)
		num = 1;
	for (;;) {
		if (b + num - 1 >= total) {
			if (finish > start || wrapped)
				return EXT4FS_E_NO_SPACE;
			b = fdb;
			wrapped = 1;
		}
		size_t i = ext4fs__extset_first_after(s, b);
		if (i == s->n || s->r[i].start >= b + num) {
			*ret = b;
			return 0;
		}
		uint64_t next = s->r[i].start + s->r[i].len;
		if (finish > b && finish <= next)
			return EXT4FS_E_NO_SPACE;
		b = next;
	}
}

/* First free block at or after goal, wrapping (libext2fs' new_block). */
static int new_block(const struct ext4fs_mkfs_plan *pl, uint64_t goal, uint64_t *ret)
{
	const struct extset *s = &pl->used;
	uint64_t total = plan_blocks(pl), fdb = pl->fs->geom.first_data_block;

	if (goal < fdb || goal >= total)
		goal = fdb;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t b = pass ? fdb : goal;
		size_t i = ext4fs__extset_first_after(s, b);
		if (i < s->n && s->r[i].start <= b)
			b = s->r[i].start + s->r[i].len;
		if (b < total && (pass == 0 || b < goal)) {
			*ret = b;
			return 0;
		}
	}
	return EXT4FS_E_NO_SPACE;
}

static uint64_t group_first(const struct ext4fs_mkfs_plan *pl, uint32_t g)
{
	return ext4fs_group_first_block(pl->fs, g);
}

static uint64_t group_last(const struct ext4fs_mkfs_plan *pl, uint32_t g)
{
	return ext4fs_group_last_block(pl->fs, g);
}

/* Where a flex group's run of elem_size-block elements continues (mke2fs's flexbg_offset). */
static uint64_t flexbg_offset(const struct ext4fs_mkfs_plan *pl, uint32_t g, uint64_t start_blk,
			      uint32_t rem_grp, uint32_t elem_size)
{
	const struct ext4fs_geom *geo = &pl->fs->geom;
	uint32_t flexbg_size = geo->groups_per_flex;
	uint32_t flexbg = g / flexbg_size;
	uint64_t size = (uint64_t)rem_grp * elem_size, first_free;
	uint32_t last_grp;
	uint64_t last_blk;

	if (size > geo->blocks_per_group / 4)
		size = geo->blocks_per_group / 4;
	/* Continue the previous group's run when the space right after it is free. */
	if (start_blk && start_blk < geo->blocks_count &&
	    get_free_blocks(pl, start_blk, start_blk + size, elem_size, &first_free) == 0)
		return first_free;
	start_blk = group_first(pl, flexbg_size * flexbg);
	last_grp = g | (flexbg_size - 1);
	if (last_grp > geo->group_count - 1)
		last_grp = geo->group_count - 1;
	last_blk = group_last(pl, last_grp);
	if (get_free_blocks(pl, start_blk, last_blk, size, &first_free) == 0)
		return first_free;
	if (get_free_blocks(pl, start_blk, last_blk, elem_size, &first_free) == 0)
		return first_free;
	if (get_free_blocks(pl, 0, last_blk, elem_size, &first_free) == 0)
		return first_free;
	return 0;
}

static int alloc_one(struct ext4fs_mkfs_plan *pl, uint64_t start_blk, uint64_t group_blk,
		     uint64_t last_blk, uint64_t *out)
{
	int err = get_free_blocks(pl, start_blk, last_blk, 1, out);

	if (err == EXT4FS_E_NO_SPACE)
		err = get_free_blocks(pl, group_blk, last_blk, 1, out);
	return err ? err : mark_used(pl, *out, 1);
}

/* Place group g's block bitmap, inode bitmap and inode table (mke2fs's allocate_group_table). */
static int place_group_tables(struct ext4fs_mkfs_plan *pl, uint32_t g)
{
	const struct ext4fs_geom *geo = &pl->fs->geom;
	struct ext4fs_group_desc *gd = &pl->fs->groups[g];
	struct ext4fs_group_desc *prev = g ? &pl->fs->groups[g - 1] : NULL;
	uint64_t group_blk = group_first(pl, g), last_blk = group_last(pl, g), start_blk;
	uint32_t flexbg_size = 0, rem_grps = 0, last_grp = 0, table_offset = 0;
	uint32_t ipb = geo->inode_blocks_per_group;
	int err;

	if ((pl->p.feature_incompat & EXT4FS_FEATURE_INCOMPAT_FLEX_BG) && pl->fs->sb.s_log_groups_per_flex) {
		flexbg_size = geo->groups_per_flex;
		last_grp = g | (flexbg_size - 1);
		if (last_grp > geo->group_count - 1)
			last_grp = geo->group_count - 1;
		rem_grps = last_grp - g + 1;
	}
	if (pl->p.raid_stride && !flexbg_size) {
		err = get_free_blocks(pl, group_blk, last_blk, 1, &start_blk);
		if (err)
			return err;
		start_blk += ipb;
		start_blk += ((uint64_t)pl->p.raid_stride * g) % (last_blk - start_blk + 1);
		if (start_blk >= last_blk)
			start_blk = group_blk;
	} else {
		start_blk = group_blk;
	}

	if (flexbg_size) {
		uint64_t prev_block = 0;
		table_offset = flexbg_size;
		if (g % flexbg_size)
			prev_block = prev->block_bitmap + 1;
		else if (last_grp == geo->group_count - 1) {
			/* The last flex group keeps its tables contiguous for the groups it has. */
			table_offset = last_grp & (flexbg_size - 1);
			table_offset = table_offset ? table_offset + 1 : flexbg_size;
		}
		start_blk = flexbg_offset(pl, g, prev_block, rem_grps, 1);
		last_blk = group_last(pl, last_grp);
	}
	err = alloc_one(pl, start_blk, group_blk, last_blk, &gd->block_bitmap);
	if (err)
		return err;

	if (flexbg_size) {
		uint64_t prev_block = (g % flexbg_size) ? prev->inode_bitmap + 1
						       : gd->block_bitmap + table_offset;
		start_blk = flexbg_offset(pl, g, prev_block, rem_grps, 1);
		last_blk = group_last(pl, last_grp);
	}
	err = alloc_one(pl, start_blk, group_blk, last_blk, &gd->inode_bitmap);
	if (err)
		return err;

	if (flexbg_size) {
		uint64_t prev_block = (g % flexbg_size) ? prev->inode_table + ipb
						       : gd->inode_bitmap + table_offset;
		group_blk = flexbg_offset(pl, g, prev_block, rem_grps, ipb);
		last_blk = group_last(pl, last_grp);
	}
	err = get_free_blocks(pl, group_blk, last_blk, ipb, &gd->inode_table);
	if (err)
		return err;
	return mark_used(pl, gd->inode_table, ipb);
}

/* -packed_meta_blocks: every bitmap, then every inode table, from the start of the device. */
static int place_tables_packed(struct ext4fs_mkfs_plan *pl)
{
	const struct ext4fs_geom *geo = &pl->fs->geom;
	uint64_t goal = 0;
	int err;

	for (uint32_t g = 0; g < geo->group_count; g++) {
		if ((err = new_block(pl, goal, &goal)) || (err = mark_used(pl, goal, 1)))
			return err;
		pl->fs->groups[g].block_bitmap = goal;
	}
	for (uint32_t g = 0; g < geo->group_count; g++) {
		if ((err = new_block(pl, goal, &goal)) || (err = mark_used(pl, goal, 1)))
			return err;
		pl->fs->groups[g].inode_bitmap = goal;
	}
	for (uint32_t g = 0; g < geo->group_count; g++) {
		err = get_free_blocks(pl, goal, geo->blocks_count - 1, geo->inode_blocks_per_group, &goal);
		if (err || (err = mark_used(pl, goal, geo->inode_blocks_per_group)))
			return err;
		pl->fs->groups[g].inode_table = goal;
	}
	return 0;
}

/* The superblock, descriptor table and reserved GDT blocks of every group that has them. */
static int reserve_super_and_gdt(struct ext4fs_mkfs_plan *pl)
{
	const struct ext4fs_geom *geo = &pl->fs->geom;
	int err;

	if (geo->first_data_block && (err = mark_used(pl, 0, geo->first_data_block)))
		return err;
	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t sblk;
		uint32_t meta;
		ext4fs_group_meta_location(pl->fs, g, &sblk, NULL, NULL, NULL, &meta);
		if (!meta)
			continue;
		if ((err = mark_used(pl, group_first(pl, g), meta)))
			return err;
		if (g && sblk) {
			uint64_t *b = realloc(pl->backups, (pl->nbackups + 1) * sizeof(*b));
			if (!b)
				return EXT4FS_E_NO_MEMORY;
			pl->backups = b;
			pl->backups[pl->nbackups++] = sblk;
		}
	}
	return 0;
}

/* -- files ------------------------------------------------------------------- */

static int file_add_run(struct mkfs_file *f, uint64_t pblk, uint64_t len, uint64_t cap)
{
	if (f->n && f->ext[f->n - 1].start + f->ext[f->n - 1].len == pblk &&
	    f->ext[f->n - 1].len + len <= cap) {
		f->ext[f->n - 1].len += len;
		return 0;
	}
	struct extset_range *e = realloc(f->ext, (f->n + 1) * sizeof(*e));
	if (!e)
		return EXT4FS_E_NO_MEMORY;
	f->ext = e;
	f->ext[f->n].start = pblk;
	f->ext[f->n].len = len;
	f->n++;
	return 0;
}

uint32_t ext4fs__mkfs_indirect_before(uint64_t lblk, uint32_t apb)
{
	uint64_t a = apb, r;

	if (lblk < 12)
		return 0;
	r = lblk - 12;
	if (r < a)
		return r == 0;
	r -= a;
	if (r < a * a)
		return r == 0 ? 2 : (r % a == 0);
	r -= a * a;
	if (r == 0)
		return 3;
	return r % (a * a) == 0 ? 2 : (r % a == 0);
}

/*
 * Blocks for a block-mapped file: one at a time from goal, each indirect
 * block taken just before the first data block it maps, as libext2fs does.
 * f->ext lists every block in that order; mkfs_write replays the order.
 */
static int alloc_blockmapped(struct ext4fs_mkfs_plan *pl, struct mkfs_file *f, uint64_t nblocks,
			     uint64_t goal)
{
	uint32_t apb = pl->fs->geom.block_size / 4;
	uint64_t blk = goal;
	int err;

	f->blockmapped = 1;
	for (uint64_t l = 0; l < nblocks; l++) {
		uint32_t n = ext4fs__mkfs_indirect_before(l, apb) + 1;
		for (uint32_t i = 0; i < n; i++) {
			if ((err = new_block(pl, blk, &blk)) || (err = mark_used(pl, blk, 1)) ||
			    (err = file_add_run(f, blk, 1, UINT64_MAX)))
				return err;
		}
		f->meta_blocks += n - 1;
		f->blocks++;
	}
	return 0;
}

/* Blocks for an extent-mapped file: free runs in order from goal. */
static int alloc_extents(struct ext4fs_mkfs_plan *pl, struct mkfs_file *f, uint64_t nblocks, uint64_t goal)
{
	const struct extset *s = &pl->used;
	uint64_t total = plan_blocks(pl), b = goal;
	int err;

	while (f->blocks < nblocks) {
		if ((err = new_block(pl, b, &b)))
			return err;
		size_t i = ext4fs__extset_first_after(s, b);
		uint64_t run_end = i < s->n ? s->r[i].start : total;
		uint64_t len = run_end - b;
		if (len > nblocks - f->blocks)
			len = nblocks - f->blocks;
		while (len) {
			uint64_t piece = len < EXT4FS_EXTENT_INIT_MAX_LEN ? len : EXT4FS_EXTENT_INIT_MAX_LEN;
			if ((err = mark_used(pl, b, piece)) ||
			    (err = file_add_run(f, b, piece, EXT4FS_EXTENT_INIT_MAX_LEN)))
				return err;
			f->blocks += piece;
			b += piece;
			len -= piece;
		}
	}
	if (f->n > 4) {
		/* A depth-1 tree; mke2fs's leaf lands just before the data when that block is free. */
		uint32_t per_leaf = (pl->fs->geom.block_size - 12) / 12;
		if (f->n > per_leaf)
			return EXT4FS_E_NO_SPACE;
		if ((err = new_block(pl, f->ext[0].start - 1, &f->leaf)) || (err = mark_used(pl, f->leaf, 1)))
			return err;
		f->meta_blocks = 1;
	}
	return 0;
}

static int plan_file(struct ext4fs_mkfs_plan *pl, struct mkfs_file *f, uint32_t ino, uint64_t nblocks,
		     uint64_t goal)
{
	f->ino = ino;
	if (pl->p.feature_incompat & EXT4FS_FEATURE_INCOMPAT_EXTENTS)
		return alloc_extents(pl, f, nblocks, goal);
	return alloc_blockmapped(pl, f, nblocks, goal);
}

/* Group whose start the journal begins from (mke2fs: the emptiest of the groups around the middle). */
static uint64_t journal_goal(struct ext4fs_mkfs_plan *pl)
{
	const struct ext4fs_geom *geo = &pl->fs->geom;
	uint32_t group = ext4fs_group_of_block(pl->fs, (geo->blocks_count - geo->first_data_block) / 2);
	uint32_t log_flex = 1U << pl->fs->sb.s_log_groups_per_flex;
	uint32_t start, end;

	if (pl->fs->sb.s_log_groups_per_flex && group > log_flex) {
		group &= ~(log_flex - 1);
		while (group < geo->group_count &&
		       ext4fs__extset_count(&pl->used, group_first(pl, group),
					    group_last(pl, group) - group_first(pl, group) + 1) ==
			       group_last(pl, group) - group_first(pl, group) + 1)
			group++;
		if (group == geo->group_count)
			group = 0;
		start = group;
	} else {
		start = group > 0 ? group - 1 : group;
	}
	end = group + 1 < geo->group_count ? group + 1 : group;
	group = start;
	uint64_t best = 0;
	for (uint32_t i = start; i <= end; i++) {
		uint64_t len = group_last(pl, i) - group_first(pl, i) + 1;
		uint64_t free_blocks = len - ext4fs__extset_count(&pl->used, group_first(pl, i), len);
		if (i == start || free_blocks > best) {
			best = free_blocks;
			group = i;
		}
	}
	return group_first(pl, group);
}

static uint32_t lpf_blocks(uint32_t bs)
{
	uint32_t n = 0, size = 0;

	/* At least 16 KiB and two blocks, at most the 12 direct blocks. */
	for (int i = 1; i < 12; i++) {
		size += bs;
		n++;
		if (size >= 16 * 1024 && size >= 2 * bs)
			return n;
	}
	return n + 1;
}

static int plan_files(struct ext4fs_mkfs_plan *pl)
{
	const struct ext4fs_geom *geo = &pl->fs->geom;
	const struct ext4fs_super *sb = &pl->fs->sb;
	uint32_t flex0 = 0;
	uint64_t goal = group_first(pl, flex0);
	int err;

	if ((err = plan_file(pl, &pl->root, MKFS_ROOT_INO, 1, goal)))
		return err;
	pl->lpf_ino = geo->first_ino;
	/* With inline_data mke2fs's lost+found starts inline, and its first
	 * expansion only moves it into one block: it ends a block shorter. */
	uint32_t nlpf = lpf_blocks(geo->block_size);
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_INLINE_DATA)
		nlpf--;
	if ((err = plan_file(pl, &pl->lpf, pl->lpf_ino, nlpf, goal)))
		return err;
	if (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_RESIZE_INODE) {
		uint64_t dgoal = geo->first_data_block + geo->desc_blocks + sb->s_reserved_gdt_blocks + 2 +
				 geo->inode_blocks_per_group;
		if ((err = new_block(pl, dgoal, &pl->resize_dind)) || (err = mark_used(pl, pl->resize_dind, 1)))
			return err;
	}
	if (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) {
		uint64_t jgoal;
		if (!(sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_EXTENTS))
			jgoal = goal;
		else if (pl->p.flags & EXT4FS_MKFS_PACKED_META)
			jgoal = geo->first_data_block;
		else
			jgoal = journal_goal(pl);
		if ((err = plan_file(pl, &pl->journal, MKFS_JOURNAL_INO, pl->journal_blocks, jgoal)))
			return err;
	}
	if (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_ORPHAN_FILE) {
		uint32_t n = pl->p.orphan_file_blocks ? pl->p.orphan_file_blocks
						     : default_orphan_file_blocks(geo->blocks_count);
		pl->orphan_ino = geo->first_ino + 1;
		if ((err = plan_file(pl, &pl->orphan, pl->orphan_ino, n, goal)))
			return err;
	}
	return 0;
}

/* -- counts and flags -------------------------------------------------------- */

static int own_tables_only(const struct ext4fs_mkfs_plan *pl, uint32_t g, uint64_t used)
{
	const struct ext4fs_group_desc *gd = &pl->fs->groups[g];
	uint64_t first = group_first(pl, g), last = group_last(pl, g);
	uint32_t meta;
	uint64_t expect;

	ext4fs_group_meta_location(pl->fs, g, NULL, NULL, NULL, NULL, &meta);
	expect = meta;
	if (gd->block_bitmap >= first && gd->block_bitmap <= last)
		expect++;
	if (gd->inode_bitmap >= first && gd->inode_bitmap <= last)
		expect++;
	if (gd->inode_table >= first && gd->inode_table <= last)
		expect += pl->fs->geom.inode_blocks_per_group;
	return used == expect;
}

static void plan_counts(struct ext4fs_mkfs_plan *pl)
{
	struct ext4fs_fs *fs = pl->fs;
	const struct ext4fs_geom *geo = &fs->geom;
	struct ext4fs_super *sb = &fs->sb;
	int csum = geo->has_metadata_csum || geo->has_gdt_csum;
	uint64_t free_blocks = 0, free_inodes = 0;
	uint64_t used_inode_max = pl->orphan_ino ? pl->orphan_ino : pl->lpf_ino;
	uint32_t root_group = (MKFS_ROOT_INO - 1) / geo->inodes_per_group;
	uint32_t lpf_group = (pl->lpf_ino - 1) / geo->inodes_per_group;

	for (uint32_t g = 0; g < geo->group_count; g++) {
		struct ext4fs_group_desc gd = fs->groups[g];
		uint64_t first = group_first(pl, g), len = group_last(pl, g) - first + 1;
		uint64_t used = ext4fs__extset_count(&pl->used, first, len);
		uint64_t ino_first = (uint64_t)g * geo->inodes_per_group + 1;
		uint64_t ino_last = ino_first + geo->inodes_per_group - 1;
		uint64_t used_inodes = 0;

		/* Inodes 1 to used_inode_max are taken: the reserved ones, lost+found, the orphan file. */
		if (ino_first <= used_inode_max)
			used_inodes = (used_inode_max < ino_last ? used_inode_max : ino_last) - ino_first + 1;
		gd.free_blocks_count = (uint32_t)(len - used);
		gd.free_inodes_count = (uint32_t)(geo->inodes_per_group - used_inodes);
		gd.used_dirs_count = (g == root_group) + (g == lpf_group);
		gd.flags = 0;
		gd.itable_unused = 0;
		if (csum) {
			gd.itable_unused = (uint32_t)(geo->inodes_per_group - used_inodes);
			if (!used_inodes)
				gd.flags |= EXT4FS_BG_INODE_UNINIT;
			/* lost+found's group is opened for inodes the way libext2fs opens
			 * one, which initialises its block bitmap too. */
			if (g != geo->group_count - 1 && g != lpf_group && own_tables_only(pl, g, used))
				gd.flags |= EXT4FS_BG_BLOCK_UNINIT;
		}
		free_blocks += gd.free_blocks_count;
		free_inodes += gd.free_inodes_count;
		ext4fs__fs_group_desc_store(fs, g, &gd);
	}
	sb->s_free_blocks_count_lo = (uint32_t)free_blocks;
	sb->s_free_blocks_count_hi = (uint32_t)(free_blocks >> 32);
	sb->s_free_inodes_count = (uint32_t)free_inodes;
	fs->geom.free_blocks_count = free_blocks;
	/* Overhead is what users can never have, counted as mke2fs counts it:
	 * group metadata and the journal's data blocks, not the journal's
	 * mapping blocks, the root directory, lost+found, the resize inode's
	 * own block nor the orphan file. */
	sb->s_overhead_clusters = (uint32_t)(ext4fs__extset_total(&pl->used) - pl->root.blocks - pl->lpf.blocks -
					     pl->orphan.blocks - pl->orphan.meta_blocks -
					     pl->journal.meta_blocks - (pl->resize_dind ? 1 : 0));
	sb->s_journal_inum = pl->journal_blocks ? MKFS_JOURNAL_INO : 0;
	sb->s_orphan_file_inum = pl->orphan_ino;
}

/* -- public -------------------------------------------------------------------- */

static void file_free(struct mkfs_file *f)
{
	free(f->ext);
	memset(f, 0, sizeof(*f));
}

void ext4fs_mkfs_plan_free(struct ext4fs_mkfs_plan *pl)
{
	if (!pl)
		return;
	ext4fs_close(pl->fs);
	ext4fs__extset_free(&pl->used);
	free(pl->backups);
	file_free(&pl->root);
	file_free(&pl->lpf);
	file_free(&pl->journal);
	file_free(&pl->orphan);
	free(pl);
}

int ext4fs_mkfs_plan(const struct ext4fs_mkfs_params *p, struct ext4fs_mkfs_plan **out,
		     char *errmsg, size_t len)
{
	struct ext4fs_mkfs_plan *pl = NULL;
	struct ext4fs_super sb;
	int err;

	*out = NULL;
	if (errmsg && len)
		errmsg[0] = '\0';
	if ((err = check_params(p, errmsg, len)))
		return err;
	memset(&sb, 0, sizeof(sb));
	if ((err = plan_geometry(p, &sb, errmsg, len)))
		return err;
	plan_super(p, &sb);

	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return plan_fail(errmsg, len, EXT4FS_E_NO_MEMORY, "no memory for the plan");
	pl->p = *p;
	if ((err = ext4fs__fs_new_in_memory(&sb, &pl->fs, errmsg, len)))
		goto fail;

	if (sb.s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) {
		uint64_t blocks = pl->fs->geom.blocks_count;
		uint32_t j = p->journal_blocks ? p->journal_blocks : ext4fs_mkfs_default_journal_blocks(blocks);
		if (!j) {
			err = plan_fail(errmsg, len, EXT4FS_E_TOO_SMALL,
					"%llu blocks is too small for a journal",
					(unsigned long long)blocks);
			goto fail;
		}
		if (j < EXT4FS_JBD2_MIN_BLOCKS || j > EXT4FS_JBD2_MAX_BLOCKS || j > blocks / 2) {
			err = plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
					"a journal of %u blocks is invalid: it must be from %u to %u blocks and at most half the file system (%llu blocks)",
					j, EXT4FS_JBD2_MIN_BLOCKS, EXT4FS_JBD2_MAX_BLOCKS,
					(unsigned long long)blocks / 2);
			goto fail;
		}
		pl->fc_blocks = 0;
		if (sb.s_feature_compat & EXT4FS_FEATURE_COMPAT_FAST_COMMIT)
			pl->fc_blocks = p->journal_fc_blocks ? p->journal_fc_blocks : j / 64;
		pl->journal_blocks = j + pl->fc_blocks;
	}

	if (p->raid_stride && p->raid_stride > pl->fs->geom.blocks_per_group) {
		err = plan_fail(errmsg, len, EXT4FS_E_INVALID_ARG,
				"invalid RAID stride %u: larger than a block group (%u blocks)",
				p->raid_stride, pl->fs->geom.blocks_per_group);
		goto fail;
	}

	if ((err = reserve_super_and_gdt(pl)))
		goto nospace;
	if (p->flags & EXT4FS_MKFS_PACKED_META)
		err = place_tables_packed(pl);
	else
		for (uint32_t g = 0; g < pl->fs->geom.group_count && !err; g++)
			err = place_group_tables(pl, g);
	if (err)
		goto nospace;
	if ((err = plan_files(pl)))
		goto nospace;
	plan_counts(pl);
	ext4fs__fs_super_store(pl->fs);
	*out = pl;
	return 0;

nospace:
	if (err == EXT4FS_E_NO_SPACE)
		plan_fail(errmsg, len, err, "the file system's metadata does not fit in %llu blocks",
			  (unsigned long long)pl->fs->geom.blocks_count);
	else
		plan_fail(errmsg, len, err, "%s", ext4fs_strerror(err));
fail:
	ext4fs_mkfs_plan_free(pl);
	return err;
}

const struct ext4fs_super *ext4fs_mkfs_plan_super(const struct ext4fs_mkfs_plan *pl)
{
	return &pl->fs->sb;
}

const struct ext4fs_geom *ext4fs_mkfs_plan_geom(const struct ext4fs_mkfs_plan *pl)
{
	return &pl->fs->geom;
}

const struct ext4fs_group_desc *ext4fs_mkfs_plan_group(const struct ext4fs_mkfs_plan *pl, uint32_t g)
{
	return &pl->fs->groups[g];
}

uint32_t ext4fs_mkfs_plan_backups(const struct ext4fs_mkfs_plan *pl, uint64_t *blocks, uint32_t max)
{
	for (uint32_t i = 0; i < pl->nbackups && i < max; i++)
		blocks[i] = pl->backups[i];
	return pl->nbackups;
}

uint32_t ext4fs_mkfs_plan_journal_blocks(const struct ext4fs_mkfs_plan *pl)
{
	return pl->journal_blocks;
}

uint32_t ext4fs_mkfs_plan_journal_fc_blocks(const struct ext4fs_mkfs_plan *pl)
{
	return pl->fc_blocks;
}
