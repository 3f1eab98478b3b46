/*
 * cmd_super.c - debug4fs commands about the file system as a whole:
 *
 *   show_super_stats, stats [-h]     superblock listing and group summary
 *   freefrag, e2freefrag [-c kb]     free-space fragmentation report
 *   testb <block> [count]            block in-use test
 *   testi <file>                     inode in-use test
 *   find_free_block, ffb [count [goal]]
 *   find_free_inode, ffi [dir [mode]]
 *   imap <file>                      where an inode lives
 *
 * The text output follows debugfs 1.47.0 line for line (the layout was
 * learnt by running debugfs and dumpe2fs on many images).  With -j every
 * command prints one JSON document instead, with numbers as numbers and
 * flag words as arrays of names.
 *
 * Deliberate differences from debugfs 1.47.0:
 *  - freefrag on a bigalloc file system: debugfs tests the wrong bitmap bit
 *    (it shifts the block number to a cluster twice) and so reports no free
 *    extents at all.  We report the real free extents, measured in blocks.
 *  - ffb / ffi never change anything.  debugfs clears BLOCK_UNINIT /
 *    INODE_UNINIT in memory while searching, and then complains at exit
 *    ("ext2fs_write_block_bitmap: Attempt to write to filesystem opened
 *    read-only"); we print no such lines.
 *  - debugfs does not exit from freefrag's usage message; neither do we (the
 *    report follows), but the command's status is then nonzero.
 *  - A command that fails returns nonzero (debugfs has no per-command status);
 *    testb counts a block outside the file system as a failure, and refuses a
 *    count larger than the file system's block count ("Bad count"; debugfs
 *    goes on printing for as many as 2^64 blocks).
 *
 * Not a difference: superblock times are shown from their low 32 bits only,
 * because 1.47.0 ignores the s_*_time_hi bytes there (so "n/a" means the low
 * 32 bits are 0); the JSON output has the full 40-bit times.
 *
 * Error messages that debugfs produces through com_err and the library's
 * bitmap warnings ("Illegal block number passed to ext2fs_test_block_bitmap
 * #N for block bitmap for DEV") are reproduced on stderr.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "debug4fs.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/fsfeatures.h"

/* ------------------------------------------------------------------ names */

/* Names of single bits of a flag word. */
struct bit_name {
	uint32_t mask;
	const char *name;
};

static const struct bit_name sb_flag_names[] = {
	{ EXT4FS_FLAGS_SIGNED_HASH, "signed_directory_hash" },
	{ EXT4FS_FLAGS_UNSIGNED_HASH, "unsigned_directory_hash" },
	{ EXT4FS_FLAGS_TEST_FILESYS, "test_filesystem" },
	{ 0, NULL },
};

/* Default mount options: bits 5-6 hold the journalling mode, the rest are flags. */
#define MNTOPT_JMODE_MASK 0x0060
static const struct bit_name mntopt_names[] = {
	{ 0x0001, "debug" },
	{ 0x0002, "bsdgroups" },
	{ 0x0004, "user_xattr" },
	{ 0x0008, "acl" },
	{ 0x0010, "uid16" },
	{ 0x0100, "nobarrier" },
	{ 0x0200, "block_validity" },
	{ 0x0400, "discard" },
	{ 0x0800, "nodelalloc" },
	{ 0, NULL },
};

static const char *const jmode_names[4] = {
	NULL, "journal_data", "journal_data_ordered", "journal_data_writeback",
};

/* Group descriptor flags, as named in JSON. */
static const struct bit_name bg_flag_names[] = {
	{ EXT4FS_BG_INODE_UNINIT, "inode_uninit" },
	{ EXT4FS_BG_BLOCK_UNINIT, "block_uninit" },
	{ EXT4FS_BG_INODE_ZEROED, "itable_zeroed" },
	{ 0, NULL },
};

static const char *bit_lookup(const struct bit_name *t, uint32_t mask)
{
	for (; t->name; t++)
		if (t->mask == mask)
			return t->name;
	return NULL;
}

/* Name of feature bit `bit` of word `word` (0 compat, 1 incompat, 2 ro_compat) into buf;
 * FEATURE_Xn for a bit without a name. */
static const char *feature_name(int word, int bit, char *buf, size_t len)
{
	uint32_t one[3] = { 0, 0, 0 };

	one[word] = 1U << bit;
	ext4fs_features_format(one, buf, len);
	return buf;
}

static const char *hash_name(unsigned v, char *buf, size_t len)
{
	static const char *const names[] = { "legacy", "half_md4", "tea" };

	if (v < 3)
		return names[v];
	snprintf(buf, len, "HASHALG_%u", v);
	return buf;
}

static const char *os_name(uint32_t os)
{
	static const char *const names[] = { "Linux", "Hurd", "Masix", "FreeBSD", "Lites" };

	return os < 5 ? names[os] : "(unknown os)";
}

static const char *errors_name(unsigned e)
{
	switch (e) {
	case 1: return "Continue";
	case 2: return "Remount read-only";
	case 3: return "Panic";
	default: return "Unknown (continue)";
	}
}

/* The kernel's s_{first,last}_error_errcode values. */
static const char *errcode_name(unsigned c, char *buf, size_t len)
{
	static const char *const names[] = {
		NULL, "UNKNOWN", "EIO", "ENOMEM", "EFSBADCRC", "EFSCORRUPTED", "ENOSPC",
		"ENOKEY", "EROFS", "EFBIG", "EEXIST", "ERANGE", "EOVERFLOW", "EBUSY",
		"ENOTDIR", "ENOTEMPTY", "ESHUTDOWN", "EFAULT",
	};

	if (c > 0 && c < sizeof(names) / sizeof(names[0]))
		return names[c];
	snprintf(buf, len, "UNKNOWN_ERRCODE_%u", c);
	return buf;
}

static const char *encoding_name(unsigned e, char *buf, size_t len)
{
	if (e == 1)
		return "utf8-12.1";
	snprintf(buf, len, "UNKNOWN_ENCODING_%u", e);
	return buf;
}

/* ------------------------------------------------------------------ small formatters */

static int bytes_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", or "<none>" for the null UUID. */
static const char *uuid_str(const uint8_t u[16], char *buf, size_t len)
{
	if (bytes_all_zero(u, 16)) {
		snprintf(buf, len, "<none>");
		return buf;
	}
	snprintf(buf, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	return buf;
}

/* Length of a NUL-padded fixed-size string field. */
static size_t fixed_len(const uint8_t *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

/* "1 week, 4 days, 13:46:40" for a check interval in seconds. */
static void interval_str(uint32_t secs, char *buf, size_t len)
{
	static const struct { uint32_t size; const char *unit; } units[] = {
		{ 30 * 86400, "month" }, { 7 * 86400, "week" }, { 86400, "day" },
	};
	size_t used = 0;

	buf[0] = '\0';
	if (secs == 0) {
		snprintf(buf, len, "<none>");
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		uint32_t n = secs / units[i].size;
		if (!n)
			continue;
		secs %= units[i].size;
		used += (size_t)snprintf(buf + used, len - used, "%s%u %s%s", used ? ", " : "",
					 n, units[i].unit, n == 1 ? "" : "s");
		if (used >= len)
			return;
	}
	if (secs)
		snprintf(buf + used, len - used, "%s%u:%02u:%02u", used ? ", " : "",
			 secs / 3600, secs / 60 % 60, secs % 60);
}

/* Lifetime writes, given in kB, shown in the largest unit that keeps 4 digits. */
static void kbytes_str(uint64_t kb, char *buf, size_t len)
{
	static const char *const units[] = { "MB", "GB", "TB" };

	if (kb < 8192) {
		snprintf(buf, len, "%" PRIu64 " kB", kb);
		return;
	}
	for (unsigned i = 0; i < 3; i++) {
		unsigned shift = 10 * (i + 1);
		if (kb < ((uint64_t)8192 << shift)) {
			snprintf(buf, len, "%" PRIu64 " %s", (kb + ((uint64_t)1 << (shift - 1))) >> shift,
				 units[i]);
			return;
		}
	}
	/* Rounding may wrap around for absurd values; debugfs does the same. */
	snprintf(buf, len, "%" PRIu64 " PB", (kb + ((uint64_t)1 << 39)) >> 40);
}

/* A superblock time: ctime() layout, local time. */
static const char *sb_time(uint32_t t, char *buf, size_t len)
{
	return dbg_time_str((int64_t)t, buf, len);
}

/* A full superblock time with its high byte (for JSON). */
static int64_t sb_time_full(uint32_t lo, uint8_t hi)
{
	return (int64_t)lo | ((int64_t)hi << 32);
}

/* A line "Label:<pad to column 26>value". */
static void line(FILE *f, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void line(FILE *f, const char *label, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "%-26s", label);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

static uint64_t sb_r_blocks(const struct ext4fs_fs *fs)
{
	return ext4fs_geom(fs)->r_blocks_count;
}

/* ------------------------------------------------------------------ stats: text */

static void print_features(FILE *f, const struct ext4fs_super *sb)
{
	const uint32_t words[3] = { sb->s_feature_compat, sb->s_feature_incompat,
				    sb->s_feature_ro_compat };
	char buf[2048]; /* all 96 bits named: under 2,000 bytes */

	ext4fs_features_format(words, buf, sizeof(buf));
	fprintf(f, "%-26s%s\n", "Filesystem features:", buf[0] ? buf : "(none)");
}

static void print_mount_defaults(FILE *f, uint32_t opts)
{
	char buf[32];
	int any = 0;

	fprintf(f, "%-26s", "Default mount options:");
	if (opts & MNTOPT_JMODE_MASK) {
		fputs(jmode_names[(opts & MNTOPT_JMODE_MASK) >> 5], f);
		any = 1;
	}
	for (int b = 0; b < 32; b++) {
		uint32_t m = 1U << b;
		if (!(opts & m) || (m & MNTOPT_JMODE_MASK))
			continue;
		const char *n = bit_lookup(mntopt_names, m);
		if (!n) {
			snprintf(buf, sizeof(buf), "MNTOPT_%d", b);
			n = buf;
		}
		fprintf(f, "%s%s", any ? " " : "", n);
		any = 1;
	}
	fputs(any ? "\n" : "(none)\n", f);
}

static void print_error_info(FILE *f, const char *which, uint32_t time, uint32_t ino,
			     uint64_t blk, const uint8_t func[32], uint32_t lineno, uint8_t errcode)
{
	char label[40], buf[64];

	snprintf(label, sizeof(label), "%s error time:", which);
	line(f, label, "%s", sb_time(time, buf, sizeof(buf)));
	snprintf(label, sizeof(label), "%s error function:", which);
	line(f, label, "%.*s", (int)fixed_len(func, 32), (const char *)func);
	snprintf(label, sizeof(label), "%s error line #:", which);
	line(f, label, "%u", lineno);
	if (ino) {
		snprintf(label, sizeof(label), "%s error inode #:", which);
		line(f, label, "%u", ino);
	}
	if (blk) {
		snprintf(label, sizeof(label), "%s error block #:", which);
		line(f, label, "%" PRIu64, blk);
	}
	if (errcode) {
		snprintf(label, sizeof(label), "%s error err:", which);
		line(f, label, "%s", errcode_name(errcode, buf, sizeof(buf)));
	}
}

static void print_super(FILE *f, const struct ext4fs_fs *fs)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	int bigalloc = (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_BIGALLOC) != 0;
	char buf[128];
	size_t n;

	n = fixed_len(sb->s_volume_name, sizeof(sb->s_volume_name));
	if (n)
		line(f, "Filesystem volume name:", "%.*s", (int)n, (const char *)sb->s_volume_name);
	else
		line(f, "Filesystem volume name:", "<none>");
	n = fixed_len(sb->s_last_mounted, sizeof(sb->s_last_mounted));
	if (n)
		line(f, "Last mounted on:", "%.*s", (int)n, (const char *)sb->s_last_mounted);
	else
		line(f, "Last mounted on:", "<not available>");
	line(f, "Filesystem UUID:", "%s", uuid_str(sb->s_uuid, buf, sizeof(buf)));
	line(f, "Filesystem magic number:", "0x%04X", sb->s_magic);
	line(f, "Filesystem revision #:", "%u (%s)", sb->s_rev_level,
	     sb->s_rev_level == 0 ? "original" : sb->s_rev_level == 1 ? "dynamic" : "unknown");
	print_features(f, sb);
	if (sb->s_flags) {
		int any = 0;
		fprintf(f, "%-26s", "Filesystem flags:");
		for (const struct bit_name *t = sb_flag_names; t->name; t++)
			if (sb->s_flags & t->mask) {
				fprintf(f, "%s ", t->name);
				any = 1;
			}
		fputs(any ? "\n" : "(none)\n", f);
	}
	print_mount_defaults(f, sb->s_default_mount_opts);
	n = fixed_len(sb->s_mount_opts, sizeof(sb->s_mount_opts));
	if (n)
		line(f, "Mount options:", "%.*s", (int)n, (const char *)sb->s_mount_opts);
	line(f, "Filesystem state:", "%s%s", (sb->s_state & EXT4FS_STATE_VALID) ? "clean" : "not clean",
	     (sb->s_state & EXT4FS_STATE_ERROR) ? " with errors" : "");
	line(f, "Errors behavior:", "%s", errors_name(sb->s_errors));
	line(f, "Filesystem OS type:", "%s", os_name(sb->s_creator_os));
	line(f, "Inode count:", "%u", sb->s_inodes_count);
	line(f, "Block count:", "%" PRIu64, geo->blocks_count);
	line(f, "Reserved block count:", "%" PRIu64, sb_r_blocks(fs));
	if (sb->s_overhead_clusters)
		line(f, "Overhead clusters:", "%u", sb->s_overhead_clusters);
	line(f, "Free blocks:", "%" PRIu64, geo->free_blocks_count);
	line(f, "Free inodes:", "%u", sb->s_free_inodes_count);
	line(f, "First block:", "%u", sb->s_first_data_block);
	line(f, "Block size:", "%u", geo->block_size);
	line(f, bigalloc ? "Cluster size:" : "Fragment size:", "%u",
	     1024U << (sb->s_log_cluster_size & 31));
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT)
		line(f, "Group descriptor size:", "%u", sb->s_desc_size);
	if (sb->s_reserved_gdt_blocks)
		line(f, "Reserved GDT blocks:", "%u", sb->s_reserved_gdt_blocks);
	line(f, "Blocks per group:", "%u", sb->s_blocks_per_group);
	line(f, bigalloc ? "Clusters per group:" : "Fragments per group:", "%u",
	     sb->s_clusters_per_group);
	line(f, "Inodes per group:", "%u", sb->s_inodes_per_group);
	line(f, "Inode blocks per group:", "%u", geo->inode_blocks_per_group);
	if (sb->s_raid_stride)
		line(f, "RAID stride:", "%u", sb->s_raid_stride);
	if (sb->s_raid_stripe_width)
		line(f, "RAID stripe width:", "%u", sb->s_raid_stripe_width);
	if (sb->s_first_meta_bg)
		line(f, "First meta block group:", "%u", sb->s_first_meta_bg);
	if (sb->s_log_groups_per_flex)
		line(f, "Flex block group size:", "%u", 1U << (sb->s_log_groups_per_flex & 31));
	if (sb->s_mkfs_time)
		line(f, "Filesystem created:", "%s", sb_time(sb->s_mkfs_time, buf, sizeof(buf)));
	line(f, "Last mount time:", "%s",
	     sb->s_mtime ? sb_time(sb->s_mtime, buf, sizeof(buf)) : "n/a");
	line(f, "Last write time:", "%s", sb_time(sb->s_wtime, buf, sizeof(buf)));
	line(f, "Mount count:", "%u", sb->s_mnt_count);
	line(f, "Maximum mount count:", "%d", (int16_t)sb->s_max_mnt_count);
	line(f, "Last checked:", "%s", sb_time(sb->s_lastcheck, buf, sizeof(buf)));
	interval_str(sb->s_checkinterval, buf, sizeof(buf));
	line(f, "Check interval:", "%u (%s)", sb->s_checkinterval, buf);
	if (sb->s_checkinterval)
		line(f, "Next check after:", "%s",
		     sb_time(sb->s_lastcheck + sb->s_checkinterval, buf, sizeof(buf)));
	if (sb->s_kbytes_written) {
		kbytes_str(sb->s_kbytes_written, buf, sizeof(buf));
		line(f, "Lifetime writes:", "%s", buf);
	}
	{
		struct passwd *pw = getpwuid(sb->s_def_resuid);
		struct group *gr;
		fprintf(f, "%-26s%u ", "Reserved blocks uid:", sb->s_def_resuid);
		if (pw)
			fprintf(f, "(user %s)\n", pw->pw_name);
		else
			fputs("(user unknown)\n", f);
		gr = getgrgid(sb->s_def_resgid);
		fprintf(f, "%-26s%u ", "Reserved blocks gid:", sb->s_def_resgid);
		if (gr)
			fprintf(f, "(group %s)\n", gr->gr_name);
		else
			fputs("(group unknown)\n", f);
	}
	if (sb->s_rev_level >= 1) {
		line(f, "First inode:", "%u", sb->s_first_ino);
		fprintf(f, "Inode size:\t          %u\n", sb->s_inode_size);
		if (sb->s_min_extra_isize)
			line(f, "Required extra isize:", "%u", sb->s_min_extra_isize);
		if (sb->s_want_extra_isize)
			line(f, "Desired extra isize:", "%u", sb->s_want_extra_isize);
	}
	if (!bytes_all_zero(sb->s_journal_uuid, 16))
		line(f, "Journal UUID:", "%s", uuid_str(sb->s_journal_uuid, buf, sizeof(buf)));
	if (sb->s_journal_inum)
		line(f, "Journal inode:", "%u", sb->s_journal_inum);
	if (sb->s_journal_dev)
		fprintf(f, "Journal device:\t          0x%04x\n", sb->s_journal_dev);
	if (sb->s_last_orphan)
		line(f, "First orphan inode:", "%u", sb->s_last_orphan);
	if ((sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_DIR_INDEX) || sb->s_def_hash_version)
		line(f, "Default directory hash:", "%s",
		     hash_name(sb->s_def_hash_version, buf, sizeof(buf)));
	if (!bytes_all_zero((const uint8_t *)sb->s_hash_seed, sizeof(sb->s_hash_seed))) {
		/* The seed is shown as the UUID its 16 on-disk bytes would spell. */
		const unsigned char *raw = ext4fs_sb_raw(fs);
		line(f, "Directory Hash Seed:", "%s", uuid_str(raw + 0xEC, buf, sizeof(buf)));
	}
	if (sb->s_jnl_backup_type) {
		if (sb->s_jnl_backup_type == 1)
			line(f, "Journal backup:", "inode blocks");
		else
			line(f, "Journal backup:", "type %u", sb->s_jnl_backup_type);
	}
	if (sb->s_backup_bgs[0] || sb->s_backup_bgs[1]) {
		fprintf(f, "%-26s", "Backup block groups:");
		for (int i = 0; i < 2; i++)
			if (sb->s_backup_bgs[i])
				fprintf(f, "%u ", sb->s_backup_bgs[i]);
		fputc('\n', f);
	}
	if (sb->s_snapshot_inum) {
		line(f, "Snapshot inode:", "%u", sb->s_snapshot_inum);
		line(f, "Snapshot ID:", "%u", sb->s_snapshot_id);
		line(f, "Snapshot reserved blocks:", "%" PRIu64, sb->s_snapshot_r_blocks_count);
	}
	if (sb->s_snapshot_list)
		line(f, "Snapshot list head:", "%u", sb->s_snapshot_list);
	if (sb->s_error_count)
		line(f, "FS Error count:", "%u", sb->s_error_count);
	if (sb->s_first_error_time)
		print_error_info(f, "First", sb->s_first_error_time, sb->s_first_error_ino,
				 sb->s_first_error_block, sb->s_first_error_func,
				 sb->s_first_error_line, sb->s_first_error_errcode);
	if (sb->s_last_error_time)
		print_error_info(f, "Last", sb->s_last_error_time, sb->s_last_error_ino,
				 sb->s_last_error_block, sb->s_last_error_func,
				 sb->s_last_error_line, sb->s_last_error_errcode);
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_MMP) {
		line(f, "MMP block number:", "%" PRIu64, sb->s_mmp_block);
		line(f, "MMP update interval:", "%u", sb->s_mmp_update_interval);
	}
	if (sb->s_usr_quota_inum)
		line(f, "User quota inode:", "%u", sb->s_usr_quota_inum);
	if (sb->s_grp_quota_inum)
		line(f, "Group quota inode:", "%u", sb->s_grp_quota_inum);
	if (sb->s_prj_quota_inum)
		line(f, "Project quota inode:", "%u", sb->s_prj_quota_inum);
	if (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) {
		line(f, "Checksum type:", "%s", sb->s_checksum_type == 1 ? "crc32c" : "unknown");
		line(f, "Checksum:", "0x%08x", sb->s_checksum);
	}
	if (!bytes_all_zero(sb->s_encrypt_pw_salt, 16))
		line(f, "Encryption PW Salt:", "%s", uuid_str(sb->s_encrypt_pw_salt, buf, sizeof(buf)));
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CSUM_SEED)
		line(f, "Checksum seed:", "0x%08x", sb->s_checksum_seed);
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CASEFOLD)
		line(f, "Character encoding:", "%s", encoding_name(sb->s_encoding, buf, sizeof(buf)));
	if (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_ORPHAN_FILE)
		line(f, "Orphan file inode:", "%u", sb->s_orphan_file_inum);
}

static int has_group_csum(const struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);

	return geo->has_metadata_csum || geo->has_gdt_csum;
}

/* The superblock checksum, when metadata_csum is on and the stored one is wrong. */
static int sb_csum_mismatch(const struct ext4fs_fs *fs, uint32_t *expected)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);

	if (!(sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM))
		return 0;
	*expected = ext4fs_super_csum(ext4fs_sb_raw(fs));
	return *expected != sb->s_checksum;
}

static uint32_t count_dirs(const struct ext4fs_fs *fs)
{
	uint32_t dirs = 0;

	for (uint32_t g = 0; g < ext4fs_geom(fs)->group_count; g++)
		dirs += ext4fs_group(fs, g)->used_dirs_count;
	return dirs;
}

static void print_groups(FILE *f, const struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	const char *unit = geo->cluster_ratio > 1 ? "cluster" : "block";
	int csum = has_group_csum(fs);

	for (uint32_t g = 0; g < geo->group_count; g++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(fs, g);
		int open = 0;

		fprintf(f, " Group %2u: block bitmap at %" PRIu64 ", inode bitmap at %" PRIu64
			", inode table at %" PRIu64 "\n",
			g, gd->block_bitmap, gd->inode_bitmap, gd->inode_table);
		fprintf(f, "           %u free %s%s, %u free %s, %u used %s",
			gd->free_blocks_count, unit, gd->free_blocks_count == 1 ? "" : "s",
			gd->free_inodes_count, gd->free_inodes_count == 1 ? "inode" : "inodes",
			gd->used_dirs_count, gd->used_dirs_count == 1 ? "directory" : "directories");
		if (csum)
			fprintf(f, ", %u unused %s", gd->itable_unused,
				gd->itable_unused == 1 ? "inode" : "inodes");
		fputc('\n', f);
		if (gd->flags & EXT4FS_BG_INODE_UNINIT) {
			fputs("           [Inode not init", f);
			open = 1;
		}
		if (gd->flags & EXT4FS_BG_BLOCK_UNINIT) {
			fputs(open ? ", Block not init" : "           [Block not init", f);
			open = 1;
		}
		if (csum) {
			fprintf(f, "%sChecksum 0x%04x", open ? ", " : "           [", gd->checksum);
			open = 1;
		}
		if (open)
			fputs("]\n", f);
	}
}

/* ------------------------------------------------------------------ stats: JSON */

static void json_names(struct json *j, const char *key, const struct bit_name *t, uint32_t v)
{
	json_array_begin(j, key);
	for (; t->name; t++)
		if (v & t->mask)
			json_string(j, NULL, t->name);
	json_array_end(j);
}

static void json_fixed_string(struct json *j, const char *key, const uint8_t *s, size_t max)
{
	size_t n = fixed_len(s, max);

	if (n)
		json_string_len(j, key, (const char *)s, n);
	else
		json_null(j, key);
}

static void json_uuid(struct json *j, const char *key, const uint8_t *u)
{
	char buf[40];

	if (bytes_all_zero(u, 16))
		json_null(j, key);
	else
		json_string(j, key, uuid_str(u, buf, sizeof(buf)));
}

static void json_error_info(struct json *j, const char *key, uint32_t time, uint8_t time_hi,
			    uint32_t ino, uint64_t blk, const uint8_t func[32], uint32_t lineno,
			    uint8_t errcode)
{
	char buf[32];

	if (!time) {
		json_null(j, key);
		return;
	}
	json_object_begin(j, key);
	json_int(j, "time", sb_time_full(time, time_hi));
	json_fixed_string(j, "function", func, 32);
	json_uint(j, "line", lineno);
	json_uint(j, "inode", ino);
	json_uint(j, "block", blk);
	json_uint(j, "errcode", errcode);
	if (errcode)
		json_string(j, "errcode_name", errcode_name(errcode, buf, sizeof(buf)));
	else
		json_null(j, "errcode_name");
	json_object_end(j);
}

static void json_super(struct json *j, const struct ext4fs_fs *fs)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	const uint32_t words[3] = { sb->s_feature_compat, sb->s_feature_incompat,
				    sb->s_feature_ro_compat };
	static const char *const word_keys[3] = { "compat", "incompat", "ro_compat" };
	struct passwd *pw;
	struct group *gr;
	char buf[64];
	uint32_t expected;

	json_object_begin(j, "superblock");
	json_fixed_string(j, "volume_name", sb->s_volume_name, sizeof(sb->s_volume_name));
	json_fixed_string(j, "last_mounted", sb->s_last_mounted, sizeof(sb->s_last_mounted));
	json_uuid(j, "uuid", sb->s_uuid);
	json_uint(j, "magic", sb->s_magic);
	json_uint(j, "revision", sb->s_rev_level);
	json_uint(j, "minor_revision", sb->s_minor_rev_level);

	json_array_begin(j, "features");
	for (int w = 0; w < 3; w++)
		for (int b = 0; b < 32; b++)
			if (words[w] & (1U << b))
				json_string(j, NULL, feature_name(w, b, buf, sizeof(buf)));
	json_array_end(j);
	json_object_begin(j, "feature_words");
	for (int w = 0; w < 3; w++)
		json_uint(j, word_keys[w], words[w]);
	json_object_end(j);

	json_uint(j, "flags_value", sb->s_flags);
	json_names(j, "flags", sb_flag_names, sb->s_flags);

	json_uint(j, "default_mount_opts_value", sb->s_default_mount_opts);
	json_array_begin(j, "default_mount_opts");
	if (sb->s_default_mount_opts & MNTOPT_JMODE_MASK)
		json_string(j, NULL, jmode_names[(sb->s_default_mount_opts & MNTOPT_JMODE_MASK) >> 5]);
	for (int b = 0; b < 32; b++) {
		uint32_t m = 1U << b;
		if (!(sb->s_default_mount_opts & m) || (m & MNTOPT_JMODE_MASK))
			continue;
		const char *n = bit_lookup(mntopt_names, m);
		if (!n) {
			snprintf(buf, sizeof(buf), "MNTOPT_%d", b);
			n = buf;
		}
		json_string(j, NULL, n);
	}
	json_array_end(j);
	json_fixed_string(j, "mount_opts", sb->s_mount_opts, sizeof(sb->s_mount_opts));

	json_uint(j, "state_value", sb->s_state);
	json_bool(j, "clean", (sb->s_state & EXT4FS_STATE_VALID) != 0);
	json_bool(j, "has_errors", (sb->s_state & EXT4FS_STATE_ERROR) != 0);
	json_bool(j, "orphans_being_recovered", (sb->s_state & EXT4FS_STATE_ORPHAN) != 0);
	json_uint(j, "errors_value", sb->s_errors);
	json_string(j, "errors_behavior", errors_name(sb->s_errors));
	json_uint(j, "creator_os_value", sb->s_creator_os);
	json_string(j, "creator_os", os_name(sb->s_creator_os));

	json_uint(j, "inodes_count", sb->s_inodes_count);
	json_uint(j, "blocks_count", geo->blocks_count);
	json_uint(j, "reserved_blocks_count", sb_r_blocks(fs));
	json_uint(j, "overhead_clusters", sb->s_overhead_clusters);
	json_uint(j, "free_blocks_count", geo->free_blocks_count);
	json_uint(j, "free_inodes_count", sb->s_free_inodes_count);
	json_uint(j, "first_data_block", sb->s_first_data_block);
	json_uint(j, "block_size", geo->block_size);
	json_uint(j, "cluster_size", (uint64_t)geo->block_size * geo->cluster_ratio);
	json_uint(j, "desc_size", geo->desc_size);
	json_uint(j, "reserved_gdt_blocks", sb->s_reserved_gdt_blocks);
	json_uint(j, "blocks_per_group", sb->s_blocks_per_group);
	json_uint(j, "clusters_per_group", sb->s_clusters_per_group);
	json_uint(j, "inodes_per_group", sb->s_inodes_per_group);
	json_uint(j, "inode_blocks_per_group", geo->inode_blocks_per_group);
	json_uint(j, "group_count", geo->group_count);
	json_uint(j, "raid_stride", sb->s_raid_stride);
	json_uint(j, "raid_stripe_width", sb->s_raid_stripe_width);
	json_uint(j, "first_meta_bg", sb->s_first_meta_bg);
	json_uint(j, "log_groups_per_flex", sb->s_log_groups_per_flex);
	if (sb->s_log_groups_per_flex < 32)
		json_uint(j, "flex_bg_size", 1U << sb->s_log_groups_per_flex);

	json_int(j, "mkfs_time", sb_time_full(sb->s_mkfs_time, sb->s_mkfs_time_hi));
	json_int(j, "mount_time", sb_time_full(sb->s_mtime, sb->s_mtime_hi));
	json_int(j, "write_time", sb_time_full(sb->s_wtime, sb->s_wtime_hi));
	json_uint(j, "mount_count", sb->s_mnt_count);
	json_int(j, "max_mount_count", (int16_t)sb->s_max_mnt_count);
	json_int(j, "last_check", sb_time_full(sb->s_lastcheck, sb->s_lastcheck_hi));
	json_uint(j, "check_interval", sb->s_checkinterval);
	if (sb->s_checkinterval)
		json_int(j, "next_check",
			 sb_time_full(sb->s_lastcheck, sb->s_lastcheck_hi) + sb->s_checkinterval);
	else
		json_null(j, "next_check");
	json_uint(j, "kbytes_written", sb->s_kbytes_written);

	json_uint(j, "reserved_uid", sb->s_def_resuid);
	pw = getpwuid(sb->s_def_resuid);
	json_string(j, "reserved_user", pw ? pw->pw_name : NULL);
	json_uint(j, "reserved_gid", sb->s_def_resgid);
	gr = getgrgid(sb->s_def_resgid);
	json_string(j, "reserved_group", gr ? gr->gr_name : NULL);

	json_uint(j, "first_inode", geo->first_ino);
	json_uint(j, "inode_size", geo->inode_size);
	json_uint(j, "min_extra_isize", sb->s_min_extra_isize);
	json_uint(j, "want_extra_isize", sb->s_want_extra_isize);

	json_uuid(j, "journal_uuid", sb->s_journal_uuid);
	json_uint(j, "journal_inode", sb->s_journal_inum);
	json_uint(j, "journal_device", sb->s_journal_dev);
	json_uint(j, "last_orphan", sb->s_last_orphan);
	json_uint(j, "default_hash_value", sb->s_def_hash_version);
	json_string(j, "default_hash", hash_name(sb->s_def_hash_version, buf, sizeof(buf)));
	json_uuid(j, "hash_seed", ext4fs_sb_raw(fs) + 0xEC);
	json_uint(j, "journal_backup_type", sb->s_jnl_backup_type);
	json_array_begin(j, "backup_block_groups");
	for (int i = 0; i < 2; i++)
		if (sb->s_backup_bgs[i])
			json_uint(j, NULL, sb->s_backup_bgs[i]);
	json_array_end(j);

	if (sb->s_snapshot_inum || sb->s_snapshot_list) {
		json_object_begin(j, "snapshot");
		json_uint(j, "inode", sb->s_snapshot_inum);
		json_uint(j, "id", sb->s_snapshot_id);
		json_uint(j, "reserved_blocks", sb->s_snapshot_r_blocks_count);
		json_uint(j, "list_head", sb->s_snapshot_list);
		json_object_end(j);
	} else {
		json_null(j, "snapshot");
	}

	json_uint(j, "error_count", sb->s_error_count);
	json_error_info(j, "first_error", sb->s_first_error_time, sb->s_first_error_time_hi,
			sb->s_first_error_ino, sb->s_first_error_block, sb->s_first_error_func,
			sb->s_first_error_line, sb->s_first_error_errcode);
	json_error_info(j, "last_error", sb->s_last_error_time, sb->s_last_error_time_hi,
			sb->s_last_error_ino, sb->s_last_error_block, sb->s_last_error_func,
			sb->s_last_error_line, sb->s_last_error_errcode);

	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_MMP) {
		json_uint(j, "mmp_block", sb->s_mmp_block);
		json_uint(j, "mmp_update_interval", sb->s_mmp_update_interval);
	} else {
		json_null(j, "mmp_block");
		json_null(j, "mmp_update_interval");
	}
	json_uint(j, "user_quota_inode", sb->s_usr_quota_inum);
	json_uint(j, "group_quota_inode", sb->s_grp_quota_inum);
	json_uint(j, "project_quota_inode", sb->s_prj_quota_inum);
	if (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) {
		json_string(j, "checksum_type", sb->s_checksum_type == 1 ? "crc32c" : "unknown");
		json_uint(j, "checksum", sb->s_checksum);
		if (sb_csum_mismatch(fs, &expected))
			json_uint(j, "checksum_expected", expected);
		else
			json_null(j, "checksum_expected");
	} else {
		json_null(j, "checksum_type");
		json_null(j, "checksum");
		json_null(j, "checksum_expected");
	}
	json_uuid(j, "encryption_pw_salt", sb->s_encrypt_pw_salt);
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CSUM_SEED)
		json_uint(j, "checksum_seed", sb->s_checksum_seed);
	else
		json_null(j, "checksum_seed");
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CASEFOLD) {
		json_string(j, "encoding", encoding_name(sb->s_encoding, buf, sizeof(buf)));
		json_uint(j, "encoding_flags", sb->s_encoding_flags);
	} else {
		json_null(j, "encoding");
		json_null(j, "encoding_flags");
	}
	if (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_ORPHAN_FILE)
		json_uint(j, "orphan_file_inode", sb->s_orphan_file_inum);
	else
		json_null(j, "orphan_file_inode");
	json_uint(j, "lost_found_inode", sb->s_lpf_ino);
	json_object_end(j);
}

static void json_groups(struct json *j, const struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	int csum = has_group_csum(fs);

	json_array_begin(j, "groups");
	for (uint32_t g = 0; g < geo->group_count; g++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(fs, g);
		json_object_begin(j, NULL);
		json_uint(j, "group", g);
		json_uint(j, "block_bitmap", gd->block_bitmap);
		json_uint(j, "inode_bitmap", gd->inode_bitmap);
		json_uint(j, "inode_table", gd->inode_table);
		json_uint(j, geo->cluster_ratio > 1 ? "free_clusters" : "free_blocks",
			  gd->free_blocks_count);
		json_uint(j, "free_inodes", gd->free_inodes_count);
		json_uint(j, "used_dirs", gd->used_dirs_count);
		if (csum)
			json_uint(j, "itable_unused", gd->itable_unused);
		else
			json_null(j, "itable_unused");
		json_uint(j, "flags_value", gd->flags);
		json_names(j, "flags", bg_flag_names, gd->flags);
		if (csum) {
			json_uint(j, "checksum", gd->checksum);
			json_bool(j, "checksum_ok", ext4fs_group_desc_csum_ok(fs, g));
		} else {
			json_null(j, "checksum");
			json_null(j, "checksum_ok");
		}
		json_object_end(j);
	}
	json_array_end(j);
}

static int do_stats(struct dbg *d, int argc, char **argv)
{
	int c, header_only = 0;
	uint32_t expected;

	while ((c = getopt(argc, argv, "h")) != -1) {
		if (c != 'h')
			goto usage;
		header_only = 1;
	}
	if (optind != argc)
		goto usage;

	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_super(&j, d->fs);
		json_uint(&j, "directories", count_dirs(d->fs));
		if (!header_only)
			json_groups(&j, d->fs);
		json_object_end(&j);
		json_finish(&j);
		return 0;
	}
	print_super(d->out, d->fs);
	if (sb_csum_mismatch(d->fs, &expected))
		line(d->out, "Expected Checksum:", "0x%08x", expected);
	line(d->out, "Directories:", "%u", count_dirs(d->fs));
	if (!header_only)
		print_groups(d->out, d->fs);
	return 0;
usage:
	fflush(d->out);
	fprintf(stderr, "%s: Usage: show_super_stats [-h]\n", argv[0]);
	return 1;
}

/* ------------------------------------------------------------------ bitmaps */

static int load_block_bitmap(struct dbg *d, const char *cmd, struct ext4fs_bitmap **bm)
{
	int err = ext4fs_block_bitmap_load(d->fs, bm);

	if (err)
		dbg_error(d, cmd, err, "while reading block bitmap");
	return err;
}

static int load_inode_bitmap(struct dbg *d, const char *cmd, struct ext4fs_bitmap **bm)
{
	int err = ext4fs_inode_bitmap_load(d->fs, bm);

	if (err)
		dbg_error(d, cmd, err, "while reading inode bitmap");
	return err;
}

static unsigned cluster_bits(const struct ext4fs_geom *geo)
{
	unsigned bits = 0;

	while ((1U << bits) < geo->cluster_ratio)
		bits++;
	return bits;
}

/*
 * Test block blk the way debugfs's bitmap does: the range check is on
 * clusters, and an out-of-range block is reported on stderr and reads as free.
 */
static int test_block(struct dbg *d, const struct ext4fs_bitmap *bm, uint64_t blk)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	unsigned cb = cluster_bits(geo);
	uint64_t c = blk >> cb;

	if (c < (geo->first_data_block >> cb) || c > ((geo->blocks_count - 1) >> cb)) {
		fflush(d->out);
		fprintf(stderr, "Illegal block number passed to ext2fs_test_block_bitmap #%" PRIu64
			" for block bitmap for %s\n", c, d->device);
		return -1;
	}
	if (blk > ext4fs_bitmap_end(bm))
		blk = ext4fs_bitmap_end(bm);
	if (blk < ext4fs_bitmap_start(bm))
		blk = ext4fs_bitmap_start(bm);
	return ext4fs_bitmap_test(bm, blk) == 1;
}

/* strtoull with base 0 that must consume the whole string (debugfs's rule). */
static int parse_ull(const char *s, unsigned long long *v)
{
	char *end;

	*v = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}

static int parse_long(const char *s, long *v)
{
	char *end;

	*v = strtol(s, &end, 0);
	return *end ? -1 : 0;
}

static int do_testb(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_bitmap *bm;
	unsigned long long blk, count = 1;
	struct json j;
	int rc = 0;

	if (dbg_check_args(argc, argv, 2, 3, "<block> [count]"))
		return 1;
	if (parse_ull(argv[1], &blk)) {
		fflush(d->out);
		fprintf(stderr, "%s: Bad block number - %s\n", argv[0], argv[1]);
		return 1;
	}
	if (blk == 0) {
		fflush(d->out);
		fprintf(stderr, "%s: Invalid block number 0\n", argv[0]);
		return 1;
	}
	if (argc > 2 && parse_ull(argv[2], &count)) {
		fflush(d->out);
		fprintf(stderr, "%s: Bad count - %s\n", argv[0], argv[2]);
		return 1;
	}
	if (count > ext4fs_geom(d->fs)->blocks_count) {
		/* Bounded so a typo cannot print 2^64 lines. */
		fflush(d->out);
		fprintf(stderr, "%s: Bad count - %s (more than the %llu blocks of the file system)\n",
			argv[0], argv[2], (unsigned long long)ext4fs_geom(d->fs)->blocks_count);
		return 1;
	}
	if (load_block_bitmap(d, argv[0], &bm))
		return 1;
	if (d->json) {
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "blocks");
	}
	for (; count > 0; count--, blk++) {
		int used = test_block(d, bm, blk);
		if (used < 0)
			rc = 1;         /* reported on stderr; the block reads as free */
		if (d->json) {
			json_object_begin(&j, NULL);
			json_uint(&j, "block", blk);
			json_bool(&j, "in_use", used == 1);
			json_bool(&j, "valid", used >= 0);
			json_object_end(&j);
		} else {
			fprintf(d->out, used == 1 ? "Block %llu marked in use\n" : "Block %llu not in use\n",
				blk);
		}
	}
	if (d->json) {
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	}
	ext4fs_bitmap_free(bm);
	return rc;
}

static int do_testi(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_bitmap *bm;
	uint32_t ino;
	int used;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (load_inode_bitmap(d, argv[0], &bm))
		return 1;
	used = ext4fs_bitmap_test(bm, ino) == 1;
	ext4fs_bitmap_free(bm);
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "inode", ino);
		json_bool(&j, "in_use", used);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, used ? "Inode %u is marked in use\n" : "Inode %u is not in use\n", ino);
	}
	return 0;
}

/*
 * The first free block at or after goal, wrapping to the first data block,
 * as the library allocator of debugfs finds it: a goal outside the file
 * system means the first data block, and with bigalloc the search starts at
 * the goal's cluster and answers with the first block of a free cluster.
 */
static int next_free_block(const struct ext4fs_geom *geo, const struct ext4fs_bitmap *bm,
			   uint64_t goal, uint64_t *out)
{
	uint64_t fdb = geo->first_data_block, last = geo->blocks_count - 1;
	int err;

	if (goal == 0 || goal >= geo->blocks_count)
		goal = fdb;
	goal &= ~(uint64_t)(geo->cluster_ratio - 1);
	if (goal < fdb)
		goal = fdb;
	err = ext4fs_bitmap_find(bm, goal, last, 0, out);
	if (err == -ENOENT && goal != fdb)
		err = ext4fs_bitmap_find(bm, fdb, goal - 1, 0, out);
	if (!err && geo->cluster_ratio > 1)
		*out &= ~(uint64_t)(geo->cluster_ratio - 1);
	return err;
}

static int do_ffb(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	struct ext4fs_bitmap *bm;
	long count = 1, v;
	uint64_t goal = geo->first_data_block, blk, first = 0;
	int rc = 0, n;
	struct json j;

	if (argc > 3 || (argc == 2 && argv[1][0] == '?')) {
		fflush(d->out);
		fprintf(stderr, "%s: Usage: find_free_block [count [goal]]\n", argv[0]);
		return 1;
	}
	if (argc > 1) {
		if (parse_long(argv[1], &count)) {
			fflush(d->out);
			fprintf(stderr, "%s: Bad count - %s\n", argv[0], argv[1]);
			return 1;
		}
	}
	if (argc > 2) {
		if (parse_long(argv[2], &v)) {
			/* debugfs names the count argument here; so do we. */
			fflush(d->out);
			fprintf(stderr, "%s: Bad goal - %s\n", argv[0], argv[1]);
			return 1;
		}
		goal = (uint64_t)(int64_t)v;
	}
	if (load_block_bitmap(d, argv[0], &bm))
		return 1;
	n = (int)count;
	if (d->json) {
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "free_blocks");
	} else {
		fputs("Free blocks found: ", d->out);
	}
	blk = goal - 1;
	for (; n > 0; n--) {
		int err = next_free_block(geo, bm, blk + 1, &blk);
		if (first) {
			if (first == blk)
				break;
		} else {
			first = blk;
		}
		if (err) {
			fflush(d->out);
			fputs("ext2fs_new_block: Could not allocate block in ext2 filesystem \n", stderr);
			rc = 1;
			break;
		}
		if (d->json)
			json_uint(&j, NULL, blk);
		else
			fprintf(d->out, "%" PRIu64 " ", blk);
	}
	if (d->json) {
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else if (!rc) {
		fputc('\n', d->out);
	}
	ext4fs_bitmap_free(bm);
	return rc;
}

static int do_ffi(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	struct ext4fs_bitmap *bm;
	uint32_t dir = d->root, start = 0;
	uint64_t found = 0;
	long v;
	int err;

	if (argc > 3 || (argc > 1 && argv[1][0] == '?')) {
		fflush(d->out);
		fprintf(stderr, "%s: Usage: find_free_inode [dir [mode]]\n", argv[0]);
		return 1;
	}
	if (argc > 1) {
		if (parse_long(argv[1], &v)) {
			fflush(d->out);
			fprintf(stderr, "%s: Bad dir - %s\n", argv[0], argv[1]);
			return 1;
		}
		dir = (uint32_t)v;
	}
	if (argc > 2 && parse_long(argv[2], &v)) {
		fflush(d->out);
		fprintf(stderr, "%s: Bad mode - %s\n", argv[0], argv[2]);
		return 1;
	}
	/* The search starts at the first inode of dir's group (32-bit arithmetic, as debugfs). */
	if (dir > 0)
		start = (dir - 1) / geo->inodes_per_group * geo->inodes_per_group + 1;
	if (start < geo->first_ino)
		start = geo->first_ino;
	if (start > geo->inodes_count) {
		err = -ENOENT;
	} else {
		if (load_inode_bitmap(d, argv[0], &bm))
			return 1;
		err = ext4fs_bitmap_find(bm, start, geo->inodes_count, 0, &found);
		if (err == -ENOENT && start > geo->first_ino)
			err = ext4fs_bitmap_find(bm, geo->first_ino, start - 1, 0, &found);
		ext4fs_bitmap_free(bm);
	}
	if (err) {
		fflush(d->out);
		fputs("ext2fs_new_inode: Could not allocate inode in ext2 filesystem \n", stderr);
		return 1;
	}
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "free_inode", found);
		json_uint(&j, "start", start);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, "Free inode found: %" PRIu64 "\n", found);
	}
	return 0;
}

static int do_imap(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	uint32_t ino, group;
	uint64_t offset, blk;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	group = (ino - 1) / geo->inodes_per_group;
	offset = (uint64_t)((ino - 1) % geo->inodes_per_group) * geo->inode_size;
	if (ext4fs_group(d->fs, group)->inode_table == 0) {
		fflush(d->out);
		fprintf(stderr, "%s: Inode table for group %u is missing\n\n", argv[0], group);
		return 1;
	}
	blk = ext4fs_group(d->fs, group)->inode_table + offset / geo->block_size;
	offset %= geo->block_size;
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "inode", ino);
		json_uint(&j, "group", group);
		json_uint(&j, "block", blk);
		json_uint(&j, "offset", offset);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, "Inode %u is part of block group %u\n\tlocated at block %" PRIu64
			", offset 0x%04" PRIx64 "\n", ino, group, blk, offset);
	}
	return 0;
}

/* ------------------------------------------------------------------ freefrag */

#define FREEFRAG_HIST 32
#define FREEFRAG_DEFAULT_CHUNK (1024 * 1024)

struct freefrag {
	uint64_t chunk_bytes;         /* 0: no -c given */
	unsigned chunk_bits;          /* log2 of the chunk size in bytes */
	uint32_t chunk_blocks;        /* blocks per chunk (32 bits, as debugfs keeps it) */
	uint64_t total_chunks;
	uint64_t free_chunks;
	uint64_t extents;             /* free extents found */
	uint64_t min, max, sum;       /* extent lengths in blocks */
	uint64_t hist_extents[FREEFRAG_HIST];
	uint64_t hist_blocks[FREEFRAG_HIST];
};

static unsigned log2_floor(uint64_t v)
{
	unsigned r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static void freefrag_extent(struct freefrag *ff, uint64_t len)
{
	unsigned idx = log2_floor(len) + 1;

	if (idx >= FREEFRAG_HIST)
		idx = FREEFRAG_HIST - 1;
	ff->hist_extents[idx]++;
	ff->hist_blocks[idx] += len;
	if (len > ff->max)
		ff->max = len;
	if (len < ff->min)
		ff->min = len;
	ff->sum += len;
	ff->extents++;
}

/* Nonzero when every block in [from, from + n) is free. */
static int range_free(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t n)
{
	uint64_t hit;

	if (n == 0)
		return 1;
	return ext4fs_bitmap_find(bm, from, from + n - 1, 1, &hit) == -ENOENT;
}

/*
 * Walk the block bitmap as debugfs walks it, chunk by chunk: chunk 0 starts
 * at block 0 but its testing starts at the first data block (at least one
 * block is tested), and the last chunk may be short.  Only the blocks the
 * chunks cover are looked at, which is all of them except with absurd chunk
 * sizes (debugfs keeps blocks-per-chunk in 32 bits).  A chunk is free when
 * all its blocks are and it is not short; free extents are the maximal runs
 * of free blocks, across chunk boundaries.
 */
static void freefrag_scan(const struct ext4fs_geom *geo, const struct ext4fs_bitmap *bm,
			  struct freefrag *ff, int count_chunks)
{
	uint64_t total = geo->blocks_count, fdb = geo->first_data_block;
	uint64_t pos = 0, scan_end = 0, blk;

	for (uint64_t c = 0; c < ff->total_chunks; c++) {
		uint64_t n = pos + ff->chunk_blocks > total ? total - pos : ff->chunk_blocks;
		uint64_t from = pos;

		if (ff->chunk_blocks == 0) {
			/* Nothing is tested, and an empty chunk counts as free. */
			ff->free_chunks = ff->total_chunks;
			break;
		}
		if (n == 0)
			break;          /* the rest test nothing and cannot be free */
		if (c == 0) {
			from = fdb;
			n = n > fdb ? n - fdb : 1;
		}
		if (count_chunks && n == ff->chunk_blocks && range_free(bm, from, n))
			ff->free_chunks++;
		pos = from + n;
		scan_end = pos;
	}

	/* Free extents in [fdb, scan_end). */
	blk = fdb;
	while (blk < scan_end) {
		uint64_t free_at, used_at;
		if (ext4fs_bitmap_find(bm, blk, scan_end - 1, 0, &free_at))
			break;
		if (ext4fs_bitmap_find(bm, free_at, scan_end - 1, 1, &used_at))
			used_at = scan_end;
		freefrag_extent(ff, used_at - free_at);
		blk = used_at;
	}
}

static void freefrag_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-c chunksize in kb] [-h] device_name\n", prog);
}

static void json_freefrag(struct dbg *d, const struct ext4fs_geom *geo, const struct freefrag *ff,
			  uint64_t free_blocks)
{
	struct json j;
	uint64_t scale = geo->block_size >> 10;

	json_init(&j, d->out);
	json_object_begin(&j, NULL);
	json_string(&j, "device", d->device);
	json_uint(&j, "block_size", geo->block_size);
	json_uint(&j, "total_blocks", geo->blocks_count);
	json_uint(&j, "free_blocks", free_blocks);
	if (ff->chunk_bytes) {
		json_object_begin(&j, "chunks");
		json_uint(&j, "chunk_bytes", ff->chunk_bytes);
		json_uint(&j, "chunk_blocks", ff->chunk_blocks);
		json_uint(&j, "total", ff->total_chunks);
		json_uint(&j, "free", ff->free_chunks);
		json_object_end(&j);
	} else {
		json_null(&j, "chunks");
	}
	json_uint(&j, "free_extents", ff->extents);
	json_uint(&j, "min_extent_kb", ff->extents ? ff->min * scale : 0);
	json_uint(&j, "max_extent_kb", ff->max * scale);
	json_uint(&j, "avg_extent_kb", ff->extents ? ff->sum / ff->extents * scale : 0);
	json_array_begin(&j, "histogram");
	for (unsigned i = 1; i < FREEFRAG_HIST; i++) {
		if (!ff->hist_extents[i])
			continue;
		json_object_begin(&j, NULL);
		json_uint(&j, "min_bytes", (uint64_t)geo->block_size << (i - 1));
		if (i == FREEFRAG_HIST - 1)
			json_null(&j, "max_bytes");
		else
			json_uint(&j, "max_bytes", (uint64_t)geo->block_size << i);
		json_uint(&j, "extents", ff->hist_extents[i]);
		json_uint(&j, "blocks", ff->hist_blocks[i]);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void print_freefrag(struct dbg *d, const struct ext4fs_geom *geo, const struct freefrag *ff,
			   uint64_t free_blocks)
{
	static const char units[] = "KMGTPEZY";
	FILE *f = d->out;
	uint64_t total = geo->blocks_count, scale = geo->block_size >> 10;
	unsigned bs_bits = log2_floor(geo->block_size), unit_shift = 10, u = 0;
	uint64_t start = 0;

	fprintf(f, "Device: %s\n", d->device);
	fprintf(f, "Blocksize: %u bytes\n", geo->block_size);
	fprintf(f, "Total blocks: %" PRIu64 "\nFree blocks: %" PRIu64 " (%0.1f%%)\n", total,
		free_blocks, (double)free_blocks * 100 / (double)total);
	if (ff->chunk_bytes) {
		fprintf(f, "\nChunksize: %" PRIu64 " bytes (%u blocks)\n", ff->chunk_bytes,
			ff->chunk_blocks);
		fprintf(f, "Total chunks: %" PRIu64 "\nFree chunks: %" PRIu64 " (%0.1f%%)\n",
			ff->total_chunks, ff->free_chunks,
			(double)ff->free_chunks * 100 / (double)ff->total_chunks);
	}
	fprintf(f, "\nMin. free extent: %" PRIu64 " KB \nMax. free extent: %" PRIu64 " KB\n"
		"Avg. free extent: %" PRIu64 " KB\n",
		ff->extents ? ff->min * scale : 0, ff->max * scale,
		ff->extents ? ff->sum / ff->extents * scale : 0);
	fprintf(f, "Num. free extent: %" PRIu64 "\n", ff->extents);
	fprintf(f, "\nHISTOGRAM OF FREE EXTENT SIZES:\n");
	fprintf(f, "%s :  %12s  %12s  %7s\n", "Extent Size Range", "Free extents", "Free Blocks",
		"Percent");
	/* Bucket i holds extents of [2^(i-1), 2^i) blocks; labels in K, M, G... */
	for (unsigned i = 0; i < FREEFRAG_HIST; i++) {
		uint64_t end = (uint64_t)1 << (i + bs_bits - unit_shift);
		if (ff->hist_extents[i]) {
			char end_str[32];
			if (i == FREEFRAG_HIST - 1)
				snprintf(end_str, sizeof(end_str), "max ");
			else
				snprintf(end_str, sizeof(end_str), "%5" PRIu64 "%c-", end, units[u]);
			fprintf(f, "%5" PRIu64 "%c...%7s  :  %12" PRIu64 "  %12" PRIu64 "  %6.2f%%\n",
				start, units[u], end_str, ff->hist_extents[i], ff->hist_blocks[i],
				(double)ff->hist_blocks[i] * 100 / (double)free_blocks);
		}
		start = end;
		if (start == 1024 && u + 1 < sizeof(units) - 1) {
			start = 1;
			unit_shift += 10;
			u++;
		}
	}
}

static int do_freefrag(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	struct freefrag ff;
	struct ext4fs_bitmap *bm;
	unsigned long long v;
	int c, rc = 0;
	char *end;

	memset(&ff, 0, sizeof(ff));
	ff.min = UINT64_MAX;
	while ((c = getopt(argc, argv, "c:h")) != -1) {
		switch (c) {
		case 'c':
			v = strtoull(optarg, &end, 0);
			if (*end) {
				fflush(d->out);
				fprintf(stderr, "%s: bad chunk size '%s'\n", argv[0], optarg);
				freefrag_usage(argv[0]);
				rc = 1;
			}
			if (v & (v - 1)) {
				fflush(d->out);
				fprintf(stderr, "%s: chunk size must be a power of 2.\n", argv[0]);
				freefrag_usage(argv[0]);
				rc = 1;
			}
			ff.chunk_bytes = (uint64_t)v * 1024;
			break;
		default:
			/* -h and unknown options: the usage, then the report anyway (as debugfs). */
			fflush(d->out);
			freefrag_usage(argv[0]);
			if (c != 'h')
				rc = 1;
			break;
		}
	}
	/* A device name after the options is accepted and ignored, as in debugfs. */
	if (ff.chunk_bytes && ff.chunk_bytes < geo->block_size) {
		fflush(d->out);
		fprintf(stderr, "%s: chunksize must be greater than or equal to filesystem blocksize.\n",
			argv[0]);
		return 1;
	}
	ff.chunk_bits = log2_floor(ff.chunk_bytes ? ff.chunk_bytes : FREEFRAG_DEFAULT_CHUNK);
	ff.chunk_blocks = (uint32_t)((ff.chunk_bytes ? ff.chunk_bytes : FREEFRAG_DEFAULT_CHUNK) >>
				     geo->log_block_size >> 10);
	{
		unsigned shift = ff.chunk_bits - (10 + geo->log_block_size);
		uint64_t sum = geo->blocks_count + ff.chunk_blocks;
		ff.total_chunks = shift >= 64 ? 0 : sum >> shift;
	}
	if (load_block_bitmap(d, argv[0], &bm))
		return 1;
	freefrag_scan(geo, bm, &ff, ff.chunk_bytes != 0);
	ext4fs_bitmap_free(bm);
	if (d->json)
		json_freefrag(d, geo, &ff, geo->free_blocks_count);
	else
		print_freefrag(d, geo, &ff, geo->free_blocks_count);
	return rc;
}

const struct dbg_cmd dbg_cmds_super[] = {
	{ { "show_super_stats", "stats", NULL }, do_stats, 1, "Show superblock statistics" },
	{ { "freefrag", "e2freefrag", NULL }, do_freefrag, 1, "Report free space fragmentation" },
	{ { "testb", NULL }, do_testb, 1, "Test a block's in-use flag" },
	{ { "testi", NULL }, do_testi, 1, "Test an inode's in-use flag" },
	{ { "find_free_block", "ffb", NULL }, do_ffb, 1, "Find free block(s)" },
	{ { "find_free_inode", "ffi", NULL }, do_ffi, 1, "Find free inode(s)" },
	{ { "imap", NULL }, do_imap, 1, "Calculate the location of an inode" },
	{ { NULL }, NULL, 0, NULL },
};
