/*
 * super.c - the superblock step before pass 1, in e2fsck's order and words.
 *
 * Choosing the superblock (fsck_choose_super) happens before the library
 * opens anything: e2fsck decides between the primary and a backup from what
 * its own open accepts, and a user's logs and scripts know its messages, so
 * the raw primary is judged here by e2fsck's rules rather than the
 * library's (which are stricter in places and reject where e2fsck
 * repairs).  Without -p a primary that e2fsck's open would refuse makes
 * e4fsck fall back on group 1's copy; a refusal for corrupt values is
 * retried once "despite errors", and values that e2fsck cannot live with
 * end the run (exit 8) before anything is written.
 *
 * Once open: the fixable superblock fields, the group descriptors'
 * checksums and uninit flags (fsck_check_super), the times
 * (fsck_check_super_times, after the orphan list as e2fsck does) and the
 * resize inode (fsck_check_resize_inode, only when the check is not
 * skipped).
 */
#include "config.h"
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "ext4fs/crc.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/resize_inode.h"
#include "ext4fs/super.h"
#include "context.h"
#include "passes.h"
#include "problem.h"
#include "problems.h"
#include "relocate.h"

#define RESIZE_INO 7
#define MAX_BLOCK_LOG 6             /* 64 KiB blocks */
#define MAX_CLUSTER_LOG 19          /* e2fsprogs: 2^29-byte clusters over 2^10-byte blocks */
#define MAX_DESC_SIZE 1024
#define LARGE_INODE_EXTRA 32        /* extra inode bytes e2fsprogs' large inode carries */
#define TIME_FUDGE (24 * 60 * 60)   /* e2fsck's default accept_time_fudge */
#define REV0_FIRST_INO 11
#define REV0_INODE_SIZE 128

/* Why e2fsck's open refuses a superblock, in its library's words. */
enum refusal {
	ACCEPTED,
	BAD_MAGIC,
	BAD_CSUM,
	CORRUPT,
	BAD_DESC_SIZE,
};

static const char *const refusal_text[] = {
	[ACCEPTED] = "",
	[BAD_MAGIC] = "Bad magic number in super-block",
	[BAD_CSUM] = "Superblock checksum does not match superblock",
	[CORRUPT] = "The ext2 superblock is corrupt",
	[BAD_DESC_SIZE] = "Block group descriptor size incorrect",
};

static int is_pow2(uint64_t v)
{
	return (v & (v - 1)) == 0;
}

static uint64_t sb_blocks(const struct ext4fs_super *sb)
{
	uint64_t n = sb->s_blocks_count_lo;

	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT)
		n |= (uint64_t)sb->s_blocks_count_hi << 32;
	return n;
}

static uint64_t sb_r_blocks(const struct ext4fs_super *sb)
{
	uint64_t n = sb->s_r_blocks_count_lo;

	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT)
		n |= (uint64_t)sb->s_r_blocks_count_hi << 32;
	return n;
}

static unsigned sb_inode_size(const struct ext4fs_super *sb)
{
	return sb->s_rev_level == 0 ? 128 : sb->s_inode_size;
}

static int sb_bigalloc(const struct ext4fs_super *sb)
{
	return (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_BIGALLOC) != 0;
}

/* Groups the superblock describes; 0 when its numbers cannot say. */
static uint64_t sb_groups(const struct ext4fs_super *sb)
{
	uint64_t blocks = sb_blocks(sb);

	if (!sb->s_blocks_per_group || sb->s_first_data_block >= blocks)
		return 0;
	return (blocks - sb->s_first_data_block + sb->s_blocks_per_group - 1) / sb->s_blocks_per_group;
}

/*
 * What e2fsck's open says of a superblock (the checks of ext2fs_open2 in
 * e2fsprogs 1.47, in its order).  Unknown features and revisions are left
 * to the library, which refuses them with its own message.
 */
static enum refusal judge_open(const struct ext4fs_super *sb, const unsigned char *raw, int despite_errors)
{
	int csum_bad = (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) &&
		       ext4fs_super_csum(raw) != sb->s_checksum;

	if (sb->s_magic != EXT4FS_SUPER_MAGIC)
		return BAD_MAGIC;
	if (csum_bad)
		return BAD_CSUM;
	if (sb->s_log_block_size > MAX_BLOCK_LOG)
		return CORRUPT;
	if (!sb_bigalloc(sb) && sb->s_log_block_size != sb->s_log_cluster_size)
		return CORRUPT;
	uint32_t bs = 1024U << sb->s_log_block_size;
	unsigned isize = sb_inode_size(sb);
	if (isize < 128 || isize > bs || !is_pow2(isize))
		return CORRUPT;
	if (!despite_errors && (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) &&
	    (sb->s_desc_size < 64 || sb->s_desc_size > MAX_DESC_SIZE || !is_pow2(sb->s_desc_size)))
		return BAD_DESC_SIZE;
	if (sb->s_log_cluster_size < sb->s_log_block_size || sb->s_log_cluster_size - sb->s_log_block_size > 31)
		return CORRUPT;
	uint32_t ratio_bits = sb->s_log_cluster_size - sb->s_log_block_size;
	if ((uint64_t)sb->s_blocks_per_group != (uint64_t)sb->s_clusters_per_group << ratio_bits)
		return CORRUPT;
	if (sb->s_inodes_per_group == 0)
		return CORRUPT;
	uint64_t itable_blocks = ((uint64_t)sb->s_inodes_per_group * isize + bs - 1) / bs;
	if (sb->s_blocks_per_group == 0 || sb->s_blocks_per_group > ((uint64_t)65536 - 8) << ratio_bits ||
	    itable_blocks > 65536 - bs / isize || sb->s_first_data_block >= sb_blocks(sb))
		return CORRUPT;
	uint64_t groups = sb_groups(sb);
	if (groups >> 32)
		return CORRUPT;
	if (!despite_errors && groups * sb->s_inodes_per_group != sb->s_inodes_count)
		return CORRUPT;
	/*
	 * As ext2fs_open2: a first_meta_bg past the descriptor blocks is a
	 * corrupt superblock.  (Without despite_errors the descriptor size was
	 * judged above: a power of two from 64 up, and 32 without 64bit.)
	 */
	if (!despite_errors && (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_META_BG)) {
		unsigned desc_size = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) ? sb->s_desc_size : 32;
		uint64_t per_block = desc_size <= bs ? bs / desc_size : 1;
		if (sb->s_first_meta_bg > (groups + per_block - 1) / per_block)
			return CORRUPT;
	}
	return ACCEPTED;
}

/* e2fsck's check of the descriptors that looks at the superblock alone: their size. */
static int desc_size_bad(const struct ext4fs_super *sb)
{
	return (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) && !is_pow2(sb->s_desc_size);
}

/*
 * e2fsck's judgement of the primary descriptors before it settles on them
 * (its check_desc): the descriptor size, then where each group's bitmaps
 * and inode table lie (ext4fs_group_descs_check(), on a read-only handle;
 * the library's open already refuses a location outside the file system,
 * with the same words).  The words for what is wrong, or NULL when nothing
 * is, or when the open fails for another reason (reported by the real open
 * later).
 */
static const char *descs_look_bad(struct e4fsck *ctx, const struct ext4fs_super *sb)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_IGNORE_CSUM | EXT4FS_OPEN_FORCE |
						  (ctx->despite_errors ? EXT4FS_OPEN_SB_ERRORS_OK : 0) };
	struct ext4fs_fs *fs;
	int err;

	if (desc_size_bad(sb))
		return refusal_text[BAD_DESC_SIZE];
	err = ext4fs_open(ctx->path, &opts, &fs, NULL, 0);
	if (!err) {
		err = ext4fs_group_descs_check(fs, NULL);
		ext4fs_close(fs);
	}
	if (err == EXT4FS_E_GD_BAD_BLOCK_MAP || err == EXT4FS_E_GD_BAD_INODE_MAP ||
	    err == EXT4FS_E_GD_BAD_INODE_TABLE)
		return ext4fs_strerror(err);
	return NULL;
}

/* Read the 1024 superblock bytes at byte offset `at`; 0, or -1 when they cannot be read. */
static int read_super(const char *path, uint64_t at, struct ext4fs_super *sb, unsigned char *raw)
{
	struct ext4fs_io *io;

	if (ext4fs_io_open_file(path, 0, 0, &io))
		return -1;
	int err = ext4fs_io_read(io, at, raw, EXT4FS_SUPER_SIZE);
	ext4fs_io_close(io);
	if (err)
		return -1;
	ext4fs_super_decode(sb, raw);
	return 0;
}

/*
 * Where group 1 keeps its copy: with -B at that block size, else the first
 * block size whose copy is there and says it is of that size.  Like e2fsck,
 * 8193 with 1 KiB blocks when none is found (the open then fails there).
 */
static void find_backup(struct e4fsck *ctx)
{
	struct ext4fs_super sb;
	unsigned char raw[EXT4FS_SUPER_SIZE];

	if (ctx->blocksize) {
		ctx->superblock = (uint64_t)ctx->blocksize * 8 + (ctx->blocksize == 1024);
		return;
	}
	ctx->superblock = 8193;
	ctx->blocksize = 1024;
	for (unsigned bs = 1024; bs <= 65536; bs *= 2) {
		uint64_t blk = (uint64_t)bs * 8 + (bs == 1024);
		if (read_super(ctx->path, blk * bs, &sb, raw) == 0 && sb.s_magic == EXT4FS_SUPER_MAGIC &&
		    sb.s_log_block_size <= MAX_BLOCK_LOG && (1024U << sb.s_log_block_size) == bs) {
			ctx->superblock = blk;
			ctx->blocksize = bs;
			return;
		}
	}
}

/* The superblock at ctx->superblock (0: the primary), judged as e2fsck's open would. */
static enum refusal try_super(struct e4fsck *ctx, struct ext4fs_super *sb, unsigned char *raw, int despite)
{
	if (!ctx->superblock)
		return read_super(ctx->path, EXT4FS_SUPER_OFFSET, sb, raw) ? BAD_MAGIC : judge_open(sb, raw, despite);
	for (unsigned bs = ctx->blocksize ? ctx->blocksize : 1024; bs <= 65536; bs *= 2) {
		if (read_super(ctx->path, ctx->superblock * bs, sb, raw) == 0 && sb->s_magic == EXT4FS_SUPER_MAGIC &&
		    sb->s_log_block_size <= MAX_BLOCK_LOG && (1024U << sb->s_log_block_size) == bs)
			return judge_open(sb, raw, despite);
		if (ctx->blocksize)
			break;
	}
	return BAD_MAGIC;
}

/* e2fsck's closing words on a superblock it cannot use; the run ends with exit 8. */
static int super_unusable(struct e4fsck *ctx, const char *name)
{
	if (ctx->mode == MODE_PREEN)
		printf("%s: ", name);
	fsck_super_advice(stdout);
	ctx->exit_status |= FSCK_ERROR;
	return -1;
}

static int corrupt_value(struct e4fsck *ctx, const char *field, uint64_t value)
{
	struct problem_ctx pctx = { .str = field, .num = value };

	fix_problem(ctx, PR_0_MISC_CORRUPT_SUPER, &pctx);
	return super_unusable(ctx, ctx->device);
}

/* e2fsck's range check of one field: min and max apply when nonzero flags say so. */
#define CHECK_MIN 1
#define CHECK_MAX 2
#define CHECK_POW2 4
static int out_of_range(uint64_t v, unsigned how, uint64_t min, uint64_t max)
{
	return ((how & CHECK_MIN) && v < min) || ((how & CHECK_MAX) && v > max) ||
	       ((how & CHECK_POW2) && !is_pow2(v));
}

/*
 * The numbers e2fsck cannot go on without (its check_super_block, up to
 * the device size).  Judged before the library opens: it refuses most of
 * them itself, with other words.
 */
static int check_values(struct e4fsck *ctx, const struct ext4fs_super *sb)
{
	uint32_t bs = 1024U << sb->s_log_block_size;
	uint32_t ratio = 1U << (sb->s_log_cluster_size - sb->s_log_block_size);
	unsigned isize = sb_inode_size(sb);
	uint64_t ipb = bs / isize, blocks = sb_blocks(sb);
	uint64_t ipg_max = ipb * ((uint64_t)sb->s_blocks_per_group - 4), cpg_max = 8ULL * bs;
	uint64_t bpg_max = 8ULL * bs * ratio;
	uint64_t blks_max = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) ? (1ULL << 48) - 1
										    : (1ULL << 32) - 1;

	if (ipg_max > 65536 - ipb)
		ipg_max = 65536 - ipb;
	if (cpg_max > 65536 - 8)
		cpg_max = 65536 - 8;
	if (bpg_max > (65536 - 8) * (uint64_t)ratio)
		bpg_max = (65536 - 8) * (uint64_t)ratio;
	const struct {
		const char *name;
		uint64_t value;
		unsigned how;
		uint64_t min, max;
	} fields[] = {
		{ "inodes_count", sb->s_inodes_count, CHECK_MIN, 1, 0 },
		{ "blocks_count", blocks, CHECK_MIN | CHECK_MAX, 1, blks_max },
		{ "first_data_block", sb->s_first_data_block, CHECK_MAX, 0, blocks },
		{ "log_block_size", sb->s_log_block_size, CHECK_MIN | CHECK_MAX, 0, MAX_BLOCK_LOG },
		{ "log_cluster_size", sb->s_log_cluster_size, CHECK_MIN | CHECK_MAX, sb->s_log_block_size,
		  MAX_CLUSTER_LOG },
		{ "clusters_per_group", sb->s_clusters_per_group, CHECK_MIN | CHECK_MAX, 8, cpg_max },
		{ "blocks_per_group", sb->s_blocks_per_group, CHECK_MIN | CHECK_MAX, 8, bpg_max },
		{ "inodes_per_group", sb->s_inodes_per_group, CHECK_MIN | CHECK_MAX, ipb, ipg_max },
		{ "r_blocks_count", sb_r_blocks(sb), CHECK_MAX, 0, blocks / 2 },
		{ "reserved_gdt_blocks", sb->s_reserved_gdt_blocks, CHECK_MAX, 0, bs / 4 },
		{ "desc_size", sb->s_desc_size, CHECK_MAX | CHECK_POW2, 0, MAX_DESC_SIZE },
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (out_of_range(fields[i].value, fields[i].how, fields[i].min, fields[i].max))
			return corrupt_value(ctx, fields[i].name, fields[i].value);

	struct problem_ctx pctx = { 0 };
	uint64_t should_be = (uint64_t)sb->s_inodes_per_group * sb_groups(sb);
	if (should_be > UINT32_MAX) {
		pctx.num = should_be;
		fix_problem(ctx, PR_0_INODE_COUNT_BIG, &pctx);
		return super_unusable(ctx, ctx->device);
	}
	if (sb->s_inodes_count != should_be) {
		pctx.ino = sb->s_inodes_count;
		pctx.ino2 = (uint32_t)should_be;
		/* A corrected count would change the geometry, which the library keeps fixed. */
		if (fix_problem(ctx, PR_0_INODE_COUNT_WRONG, &pctx)) {
			fsck_fatal(ctx, "%s: correcting the inode count is not supported yet; run e2fsck", ctx->device);
			return -1;
		}
		if (ctx->aborted)
			return -1;
		return corrupt_value(ctx, "inodes_count", sb->s_inodes_count);
	}
	if (sb->s_rev_level > 0 &&
	    out_of_range(sb->s_first_ino, CHECK_MIN | CHECK_MAX, 11, sb->s_inodes_count))
		return corrupt_value(ctx, "first_ino", sb->s_first_ino);
	if (out_of_range(isize, CHECK_MIN | CHECK_MAX | CHECK_POW2, 128, bs))
		return corrupt_value(ctx, "inode_size", isize);
	if ((uint64_t)sb->s_clusters_per_group * ratio != sb->s_blocks_per_group)
		return corrupt_value(ctx, "block_size", (uint64_t)sb->s_clusters_per_group * ratio);

	struct ext4fs_io *io;
	if (ext4fs_io_open_file(ctx->path, 0, 0, &io) == 0) {
		uint64_t device_blocks = io->size / bs;
		ext4fs_io_close(io);
		if (device_blocks < blocks) {
			pctx.blk = blocks;
			pctx.blk2 = device_blocks;
			if (fix_problem(ctx, PR_0_FS_SIZE_WRONG, &pctx)) {
				ctx->exit_status |= FSCK_ERROR;
				return -1;
			}
			if (ctx->aborted)
				return -1;
			/* As e2fsck: a "no" leaves the file system marked invalid, and the check is forced. */
			ctx->fs_invalid = 1;
		}
	}
	uint32_t first_data = (sb->s_log_block_size == 0 && ratio == 1) ? 1 : 0;
	if (sb->s_first_data_block != first_data) {
		pctx.blk = sb->s_first_data_block;
		pctx.blk2 = first_data;
		fix_problem(ctx, PR_0_FIRST_DATA_BLOCK, &pctx);
		return super_unusable(ctx, ctx->device);
	}
	return 0;
}

int fsck_choose_super(struct e4fsck *ctx)
{
	struct ext4fs_super sb;
	unsigned char raw[EXT4FS_SUPER_SIZE];
	int despite = 0;
	uint64_t given = ctx->superblock;
	unsigned given_bs = ctx->blocksize;

	/* An image that cannot be opened or read is the library's to report (e2fsck names errno). */
	if (read_super(ctx->path, given ? 0 : EXT4FS_SUPER_OFFSET, &sb, raw))
		return 0;
	for (;;) {
		enum refusal why = try_super(ctx, &sb, raw, despite), first = ACCEPTED;

		if (!ctx->superblock && ctx->mode != MODE_PREEN &&
		    (why == BAD_MAGIC || why == BAD_CSUM || why == CORRUPT)) {
			struct problem_ctx pctx = { .str = refusal_text[why] };
			fix_problem(ctx, PR_0_OPEN_FAILED, &pctx);
			printf("%s: Superblock invalid, trying backup blocks...\n", ctx->prog);
			find_backup(ctx);
			first = why;
			why = try_super(ctx, &sb, raw, despite);
			if (why == ACCEPTED)
				ctx->from_backup = 1;
		}
		const char *bad_descs = NULL;
		if (why == ACCEPTED && !ctx->superblock && ctx->mode != MODE_PREEN)
			bad_descs = descs_look_bad(ctx, &sb);
		if (bad_descs) {
			struct problem_ctx pctx = { .str = bad_descs };
			fix_problem(ctx, PR_0_CHECK_DESC_FAILED, &pctx);
		}
		/* As e2fsck: a file system of one group has no backup to try; its descriptor is relocated from. */
		if (bad_descs && sb_groups(&sb) > 1) {
			printf("%s: Group descriptors look bad... trying backup blocks...\n", ctx->prog);
			/* The primary opened, so its geometry places group 1's copy. */
			ctx->superblock = (uint64_t)sb.s_blocks_per_group + sb.s_first_data_block;
			ctx->blocksize = 1024U << sb.s_log_block_size;
			why = try_super(ctx, &sb, raw, despite);
			if (why == ACCEPTED) {
				ctx->from_backup = 1;
			} else {
				printf("%s: %s while using the backup blocks", ctx->prog, refusal_text[why]);
				printf("%s: going back to original superblock\n", ctx->prog);
				ctx->superblock = given;
				ctx->blocksize = given_bs;
				why = try_super(ctx, &sb, raw, despite);
			}
		}
		if (why == ACCEPTED) {
			/* Like e2fsck, messages name the file system by its label once it is open. */
			if (sb.s_volume_name[0]) {
				memcpy(ctx->label, sb.s_volume_name, sizeof(sb.s_volume_name));
				ctx->label[sizeof(sb.s_volume_name)] = '\0';
				ctx->device = ctx->label;
			}
			return check_values(ctx, &sb);
		}
		if (first != ACCEPTED)
			why = first;
		fprintf(stderr, "%s: %s while trying to open %s\n", ctx->prog, refusal_text[why], ctx->path);
		if ((why != CORRUPT && why != BAD_DESC_SIZE) || despite)
			return super_unusable(ctx, ctx->path);
		printf("%s: Trying to load superblock despite errors...\n", ctx->prog);
		despite = 1;
		ctx->despite_errors = 1;
		ctx->superblock = given;
		ctx->blocksize = given_bs;
	}
}

/* Write group g's descriptor (with a fresh checksum). */
static int set_desc(struct e4fsck *ctx, uint32_t g, const struct ext4fs_group_desc *gd, int changed)
{
	struct ext4fs_group_desc copy = *gd;
	int err = ext4fs_group_desc_set(ctx->fs, g, &copy);

	if (err) {
		fsck_fatal(ctx, "%s while fixing the descriptor of group %u: %s", ext4fs_strerror(err), g,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	if (changed)
		ctx->fs_changed = 1;
	return 0;
}

/* s_min_extra_isize or s_want_extra_isize: 0, or a multiple of 4 that fits the inode. */
static int bad_extra_isize(unsigned value, unsigned inode_size)
{
	return value && (value < 4 || value > inode_size - 128 || (value & 3));
}

/* The descriptor checks of e2fsck's check_super_block, group by group. */
static int check_descs(struct e4fsck *ctx)
{
	int has_csum = ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM) ||
		       ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	uint32_t last = ctx->geo->group_count - 1;

	for (uint32_t g = 0; g < ctx->geo->group_count; g++) {
		const struct ext4fs_group_desc before = *ext4fs_group(ctx->fs, g);
		int csum_ok = ext4fs_group_desc_csum_ok(ctx->fs, g);
		if (fsck_check_group_tables(ctx, g))
			return -1;
		struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, g);
		struct problem_ctx pctx = { .group = g };
		int fix = 0, changed = 0;

		/*
		 * A table sent for relocation has its location zeroed, which e2fsck
		 * does without a new checksum: the descriptor then fails its check
		 * as one that was already wrong does.
		 */
		int moved = before.block_bitmap != gd.block_bitmap || before.inode_bitmap != gd.inode_bitmap ||
			    before.inode_table != gd.inode_table;
		if (!csum_ok || (has_csum && moved)) {
			pctx.num = before.checksum;
			pctx.num2 = ext4fs_group_desc_csum(ctx->fs, g);
			/* As e2fsck: a descriptor that failed its checksum keeps no uninit shortcuts. */
			if (fix_problem(ctx, PR_0_GDT_CSUM, &pctx)) {
				gd.flags &= (uint16_t)~(EXT4FS_BG_BLOCK_UNINIT | EXT4FS_BG_INODE_UNINIT);
				gd.itable_unused = 0;
				fix = changed = 1;
			}
		}
		if (!has_csum && ((gd.flags & (EXT4FS_BG_BLOCK_UNINIT | EXT4FS_BG_INODE_UNINIT)) || gd.itable_unused) &&
		    fix_problem(ctx, PR_0_GDT_UNINIT, &pctx)) {
			gd.flags &= (uint16_t)~(EXT4FS_BG_BLOCK_UNINIT | EXT4FS_BG_INODE_UNINIT);
			gd.itable_unused = 0;
			fix = 1;
		}
		if (g == last && (gd.flags & EXT4FS_BG_BLOCK_UNINIT) && fix_problem(ctx, PR_0_BB_UNINIT_LAST, &pctx)) {
			gd.flags &= (uint16_t)~EXT4FS_BG_BLOCK_UNINIT;
			fix = 1;
		}
		if (has_csum && (gd.itable_unused > gd.free_inodes_count ||
				 gd.itable_unused > ctx->geo->inodes_per_group)) {
			pctx.num = gd.itable_unused;
			/* As e2fsck: written, but by itself no change to report (exit 0). */
			if (fix_problem(ctx, PR_0_GDT_ITABLE_UNUSED, &pctx)) {
				gd.itable_unused = 0;
				fix = 1;
			}
		}
		if (ctx->aborted)
			return -1;
		if (fix && set_desc(ctx, g, &gd, changed))
			return -1;
	}
	return 0;
}

/* A line of `path` that is exactly `line` (without its newline). */
static int file_has_line(const char *path, const char *line)
{
	FILE *f = fopen(path, "re");
	char buf[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		found = strcmp(buf, line) == 0;
	}
	fclose(f);
	return found;
}

/*
 * Whether this system can mount ext4: the kernel lists it, or it is among
 * the running kernel's modules.  e2fsck asks before clearing test_fs only
 * then, since without ext4 the flag is what lets ext4dev mount it.
 */
static int ext4_available(void)
{
	struct utsname u;
	char path[sizeof(u.release) + 32];
	FILE *f;
	char buf[1024];
	int found = 0;

	if (file_has_line("/proc/filesystems", "\text4"))
		return 1;
	if (uname(&u))
		return 0;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* A line "kernel/fs/ext4/ext4.ko[.xz]: deps": the module's file name before the colon. */
	while (!found && fgets(buf, sizeof(buf), f)) {
		char *colon = strchr(buf, ':');
		if (!colon)
			continue;
		*colon = '\0';
		const char *base = strrchr(buf, '/');
		base = base ? base + 1 : buf;
		found = strncmp(base, "ext4.ko", 7) == 0;
	}
	fclose(f);
	return found;
}

/*
 * The test_fs flag, which e2fsck clears after the descriptors on a
 * writable run.  e2fsck does not count it as a change to the file system.
 */
static int check_test_fs_flag(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);

	if (!(sb.s_flags & EXT4FS_FLAGS_TEST_FILESYS) || !ext4_available())
		return 0;
	if (!fix_problem(ctx, PR_0_CLEAR_TESTFS_FLAG, NULL))
		return ctx->aborted ? -1 : 0;
	sb.s_flags &= ~(uint32_t)EXT4FS_FLAGS_TEST_FILESYS;
	return fsck_super_set(ctx, &sb, 0);
}

/*
 * The Hurd keeps no file type in directory entries: e2fsck offers to drop
 * the feature (pass 2 then clears the entries' type bytes).  Writable runs
 * only, as in e2fsck.
 */
static int check_hurd_filetype(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);

	if (sb.s_creator_os != EXT4FS_OS_HURD || !(sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_FILETYPE))
		return 0;
	if (!fix_problem(ctx, PR_0_HURD_CLEAR_FILETYPE, NULL))
		return ctx->aborted ? -1 : 0;
	sb.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_FILETYPE;
	return fsck_super_set(ctx, &sb, 1);
}

int fsck_raise_rev_level(struct e4fsck *ctx, uint32_t code)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);

	if (sb.s_rev_level != 0)
		return 0;
	if (!fix_problem(ctx, code, NULL))
		return ctx->aborted ? -1 : 0;
	/* Revision 0 means these two values; revision 1 keeps them in the superblock. */
	sb.s_rev_level = 1;
	sb.s_first_ino = REV0_FIRST_INO;
	sb.s_inode_size = REV0_INODE_SIZE;
	return fsck_super_set(ctx, &sb, 1);
}

int fsck_offer_feature(struct e4fsck *ctx, uint32_t code, int ro_compat, uint32_t bit)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	uint32_t *features = ro_compat ? &sb.s_feature_ro_compat : &sb.s_feature_incompat;

	if (*features & bit)
		return 0;
	if (!fix_problem(ctx, code, NULL))
		return ctx->aborted ? -1 : 0;
	*features |= bit;
	return fsck_super_set(ctx, &sb, 1);
}

/* Kernels do not look at the feature bits of a revision 0 file system: e2fsck raises it (unless -n). */
static int check_rev_level(struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);

	if (!sb->s_feature_compat && !sb->s_feature_ro_compat && !sb->s_feature_incompat)
		return 0;
	return fsck_raise_rev_level(ctx, PR_0_FS_REV_LEVEL);
}

/* A random (version 4) UUID, as e2fsck makes for a file system without one. */
static int make_uuid(uint8_t uuid[16])
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	ssize_t n = read(fd, uuid, 16);
	close(fd);
	if (n != 16)
		return -1;
	uuid[6] = (uint8_t)((uuid[6] & 0x0F) | 0x40);
	uuid[8] = (uint8_t)((uuid[8] & 0x3F) | 0x80);
	return 0;
}

int fsck_check_super(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	struct problem_ctx pctx = { 0 };
	int dirty = 0;

	if (ctx->geo->inode_size > 128) {
		pctx.num = sb.s_min_extra_isize;
		if (bad_extra_isize(sb.s_min_extra_isize, ctx->geo->inode_size) &&
		    fix_problem(ctx, PR_0_BAD_MIN_EXTRA_ISIZE, &pctx)) {
			sb.s_min_extra_isize = LARGE_INODE_EXTRA;
			dirty = 1;
		}
		pctx.num = sb.s_want_extra_isize;
		if (bad_extra_isize(sb.s_want_extra_isize, ctx->geo->inode_size) &&
		    fix_problem(ctx, PR_0_BAD_WANT_EXTRA_ISIZE, &pctx)) {
			sb.s_want_extra_isize = LARGE_INODE_EXTRA;
			dirty = 1;
		}
	}
	if ((sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) &&
	    (sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM) &&
	    fix_problem(ctx, PR_0_META_AND_GDT_CSUM_SET, &pctx)) {
		sb.s_feature_ro_compat &= ~(uint32_t)EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
		dirty = 1;
	}
	if (!(sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) &&
	    (sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CSUM_SEED) &&
	    fix_problem(ctx, PR_0_CSUM_SEED_WITHOUT_META_CSUM, &pctx)) {
		sb.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_CSUM_SEED;
		sb.s_checksum_seed = 0;
		dirty = 1;
	}
	if ((sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) &&
	    !(sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_EXTENTS) &&
	    fix_problem(ctx, PR_0_64BIT_WITHOUT_EXTENTS, &pctx)) {
		sb.s_feature_incompat |= EXT4FS_FEATURE_INCOMPAT_EXTENTS;
		dirty = 1;
	}
	/* Only an open despite errors gets here with it: the descriptors were all read from before the meta_bg groups. */
	pctx.group = ctx->geo->desc_blocks;
	pctx.num = sb.s_first_meta_bg;
	if ((sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_META_BG) && sb.s_first_meta_bg > ctx->geo->desc_blocks &&
	    fix_problem(ctx, PR_0_FIRST_META_BG_TOO_BIG, &pctx)) {
		sb.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_META_BG;
		sb.s_first_meta_bg = 0;
		dirty = 1;
	}
	if (ctx->aborted || (dirty && fsck_super_set(ctx, &sb, 1)) || check_descs(ctx))
		return -1;

	static const uint8_t null_uuid[16];
	sb = *ext4fs_sb(ctx->fs);
	if (!ctx->read_only && !memcmp(sb.s_uuid, null_uuid, sizeof(null_uuid)) &&
	    !(sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM)) {
		fix_problem(ctx, PR_0_ADD_UUID, NULL);
		if (make_uuid(sb.s_uuid)) {
			fsck_fatal(ctx, "cannot read /dev/urandom for a new UUID");
			return -1;
		}
		/* With uninit_bg the descriptors' checksums start from the UUID. */
		if (fsck_super_set(ctx, &sb, 0))
			return -1;
		for (uint32_t g = 0; ctx->geo->has_gdt_csum && g < ctx->geo->group_count; g++)
			if (set_desc(ctx, g, ext4fs_group(ctx->fs, g), 0))
				return -1;
	}
	if (ctx->read_only)
		return 0;
	return check_test_fs_flag(ctx) || check_hurd_filetype(ctx) || check_rev_level(ctx) ? -1 : 0;
}

/* ctime()'s layout without its newline, in local time as e2fsck prints. */
static void format_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, size, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(buf, size, "%" PRId64, t);
}

/* One superblock time in the future: returns 1 when it was reset to now. */
static int future_time(struct e4fsck *ctx, int64_t when, int64_t now, uint32_t code, uint32_t fudged)
{
	char at[64], now_text[64];
	struct problem_ctx pctx = { .str = at, .name = now_text };

	if (when <= now)
		return 0;
	format_time(when, at, sizeof(at));
	format_time(now, now_text, sizeof(now_text));
	if (when <= now + TIME_FUDGE) {
		fix_problem(ctx, fudged, &pctx);
		return !ctx->read_only;
	}
	return fix_problem(ctx, code, &pctx);
}

/*
 * A file system with dir_index but no word on how its directories hash
 * names gets the hint of this machine's char signedness, as e2fsck gives
 * it (the kernel's default is the same).  Only on a writable run.
 */
static int check_dirhash_hint(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	const char c = (char)0xFF;

	if (ctx->read_only || !(sb.s_feature_compat & EXT4FS_FEATURE_COMPAT_DIR_INDEX) ||
	    (sb.s_flags & (EXT4FS_FLAGS_SIGNED_HASH | EXT4FS_FLAGS_UNSIGNED_HASH)))
		return 0;
	/* A message, not a question: the hint is added in every writable mode. */
	fix_problem(ctx, PR_0_DIRHASH_HINT, NULL);
	if (ctx->aborted)
		return -1;
	sb.s_flags |= (int)c < 0 ? EXT4FS_FLAGS_SIGNED_HASH : EXT4FS_FLAGS_UNSIGNED_HASH;
	/* As in e2fsck: the file system was modified, but nothing was repaired (exit 0). */
	ctx->fs_modified = 1;
	return fsck_super_set(ctx, &sb, 0);
}

static int check_future_times(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	int64_t now = ctx->now;
	int dirty = 0;

	/* As e2fsck, only when checks are due by time at all or forced. */
	if (!ctx->force && !sb.s_checkinterval)
		return 0;
	int64_t mtime = (int64_t)sb.s_mtime | ((int64_t)sb.s_mtime_hi << 32);
	int64_t wtime = (int64_t)sb.s_wtime | ((int64_t)sb.s_wtime_hi << 32);
	if (future_time(ctx, mtime, now, PR_0_FUTURE_SB_LAST_MOUNT, PR_0_FUTURE_SB_LAST_MOUNT_FUDGED)) {
		sb.s_mtime = (uint32_t)now;
		sb.s_mtime_hi = (uint8_t)((uint64_t)now >> 32);
		dirty = 1;
	}
	if (future_time(ctx, wtime, now, PR_0_FUTURE_SB_LAST_WRITE, PR_0_FUTURE_SB_LAST_WRITE_FUDGED)) {
		sb.s_wtime = (uint32_t)now;
		sb.s_wtime_hi = (uint8_t)((uint64_t)now >> 32);
		dirty = 1;
	}
	/* e2fsck does not count a corrected clock as a change to the file system. */
	return dirty ? fsck_super_set(ctx, &sb, 0) : 0;
}

/* The future times of the superblock, then the hints e2fsck adds after them. */
int fsck_check_super_times(struct e4fsck *ctx)
{
	return check_future_times(ctx) || check_dirhash_hint(ctx) ? -1 : 0;
}

/* e2fsck's clearing of the resize inode: its first 128 bytes zeroed, what lies beyond them kept. */
static int clear_resize_inode(struct e4fsck *ctx, struct ext4fs_inode *in)
{
	uint32_t extra = in->i_extra_isize, on_disk = in->on_disk_size;

	memset(in, 0, sizeof(*in));
	in->i_extra_isize = (uint16_t)extra;
	in->on_disk_size = on_disk;
	int err = ext4fs_inode_write(ctx->fs, RESIZE_INO, in);
	if (err) {
		fsck_fatal(ctx, "%s while clearing the resize inode: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/*
 * With the feature: the inode and its map as e2fsck judges them
 * (ext4fs_resize_inode_valid()).  A yes clears the inode; pass 1 then
 * sees an unused inode 7 and writes a new one at its end
 * (ctx->recreate_resize_inode), as e2fsck does.
 */
static int check_resize_layout(struct e4fsck *ctx)
{
	struct problem_ctx pctx = { .ino = RESIZE_INO };
	struct ext4fs_inode in;

	if (ext4fs_inode_read_strict(ctx->fs, RESIZE_INO, &in)) {
		/* e2fsck makes a new one at the end of pass 1 when the inode cannot be read (a bad checksum too). */
		ctx->recreate_resize_inode = 1;
		return 0;
	}
	int valid = ext4fs_resize_inode_valid(ctx->fs, &in);
	if (valid < 0) {
		fsck_fatal(ctx, "%s while checking the resize inode: %s", ext4fs_strerror(valid), ext4fs_errmsg(ctx->fs));
		return -1;
	}
	if (valid)
		return 0;
	if (fix_problem(ctx, PR_0_RESIZE_INODE_INVALID, &pctx)) {
		if (clear_resize_inode(ctx, &in))
			return -1;
		ctx->recreate_resize_inode = 1;
	}
	return ctx->aborted ? -1 : 0;
}

int fsck_check_resize_inode(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	struct problem_ctx pctx = { .ino = RESIZE_INO };

	if (ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_RESIZE_INODE) &&
	    ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_META_BG)) {
		if (fix_problem(ctx, PR_0_DISABLE_RESIZE_INODE, &pctx)) {
			sb.s_feature_compat &= ~(uint32_t)EXT4FS_FEATURE_COMPAT_RESIZE_INODE;
			sb.s_reserved_gdt_blocks = 0;
			if (fsck_super_set(ctx, &sb, 1))
				return -1;
		}
		if (ctx->aborted)
			return -1;
	}
	if (ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_RESIZE_INODE))
		return check_resize_layout(ctx);
	if (sb.s_reserved_gdt_blocks) {
		pctx.num = sb.s_reserved_gdt_blocks;
		if (fix_problem(ctx, PR_0_NONZERO_RESERVED_GDT_BLOCKS, &pctx)) {
			sb.s_reserved_gdt_blocks = 0;
			if (fsck_super_set(ctx, &sb, 1))
				return -1;
		}
		if (ctx->aborted)
			return -1;
	}
	struct ext4fs_inode in;
	if (ext4fs_inode_read_strict(ctx->fs, RESIZE_INO, &in))
		return 0;
	static const uint8_t no_blocks[sizeof(in.i_block)];
	if (!memcmp(in.i_block, no_blocks, sizeof(no_blocks)))
		return 0;
	if (fix_problem(ctx, PR_0_CLEAR_RESIZE_INODE, &pctx) && clear_resize_inode(ctx, &in))
		return -1;
	return ctx->aborted ? -1 : 0;
}
