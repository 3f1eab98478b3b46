/*
 * superlist.c - the superblock listing (see superlist.h).
 *
 * walk() visits the fields in listing order and hands each to a renderer
 * as a struct field: its text line (label, value, whether the text form
 * shows it) and its JSON member (key, type, value).  A field may have only
 * one of the two; where the forms differ (JSON has every field, full times
 * and raw values next to names; the text has e2fsprogs' conditions and
 * formats) the field carries both values.  Orders agree, so one walk
 * serves both.
 */
#include "config.h"
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ext4fs/fs.h"
#include "ext4fs/fsfeatures.h"
#include "ext4fs/ondisk_names.h"
#include "ext4fs/super.h"
#include "support/json.h"
#include "support/superlist.h"
#include "support/timefmt.h"

enum jtype {
	J_NONE,         /* text only */
	J_UINT, J_INT, J_BOOL, J_NULL,
	J_STR,          /* s (slen bytes when slen > 0); NULL s: null */
	J_STRS,         /* list[0..n) */
	J_UINTS,        /* ulist[0..n) */
	J_OBJ_BEGIN, J_OBJ_END,
};

struct field {
	const char *label;      /* text label; NULL: JSON only */
	int raw_label;          /* the label has its own spacing: not padded to column 26 */
	int in_text;            /* the text form shows this line */
	const char *text;       /* the text value */
	const char *key;        /* JSON key; NULL: text only (or inside an array) */
	enum jtype jtype;
	uint64_t u;
	int64_t i;
	const char *s;
	size_t slen;
	const char *const *list;
	const uint64_t *ulist;
	size_t n;
};

typedef void emit_fn(void *arg, const struct field *f);

struct walker {
	emit_fn *emit;
	void *arg;
	unsigned flags;         /* SUP_SUPER_LIST_* */
	char text[256];         /* the value of the field being emitted */
};

static void put(struct walker *w, struct field f)
{
	if (f.label && !f.text)
		f.text = w->text;
	w->emit(w->arg, &f);
}

/* Format the text value of the next field into w->text. */
static const char *tf(struct walker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *tf(struct walker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->text, sizeof(w->text), fmt, ap);
	va_end(ap);
	return w->text;
}

/* An unsigned number, the same in both forms. */
static void num(struct walker *w, const char *label, int in_text, const char *key, uint64_t v)
{
	tf(w, "%" PRIu64, v);
	put(w, (struct field){ .label = label, .in_text = in_text, .key = key, .jtype = J_UINT, .u = v });
}

/* JSON only. */
static void jnum(struct walker *w, const char *key, uint64_t v)
{
	put(w, (struct field){ .key = key, .jtype = J_UINT, .u = v });
}

static void jnull(struct walker *w, const char *key)
{
	put(w, (struct field){ .key = key, .jtype = J_NULL });
}

static void jbool(struct walker *w, const char *key, int v)
{
	put(w, (struct field){ .key = key, .jtype = J_BOOL, .u = v != 0 });
}

static void jobj(struct walker *w, const char *key)
{
	put(w, (struct field){ .key = key, .jtype = J_OBJ_BEGIN });
}

static void jend(struct walker *w)
{
	put(w, (struct field){ .jtype = J_OBJ_END });
}

/* Length of a NUL-padded fixed-size string field. */
static size_t fixed_len(const uint8_t *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

/* A fixed-size string: the text shows it or `none` (NULL: the line is left out
 * when empty); JSON null when empty. */
static void fixed(struct walker *w, const char *label, const char *none, const char *key,
		  const uint8_t *s, size_t max)
{
	size_t n = fixed_len(s, max);

	if (n)
		tf(w, "%.*s", (int)n, (const char *)s);
	else
		tf(w, "%s", none ? none : "");
	put(w, (struct field){ .label = label, .in_text = n || none != NULL, .key = key, .jtype = J_STR,
			       .s = n ? (const char *)s : NULL, .slen = n });
}

/* A UUID: "<none>" in the text when null (in_text < 0: left out when null); JSON null. */
static void uuid(struct walker *w, const char *label, int in_text, const char *key, const uint8_t *u)
{
	int null = ext4fs_uuid_is_null(u);
	char buf[40];

	if (null)
		tf(w, "<none>");
	else
		tf(w, "%s", ext4fs_uuid_format(u, buf, sizeof(buf)));
	put(w, (struct field){ .label = label, .in_text = in_text < 0 ? !null : in_text, .key = key,
			       .jtype = J_STR, .s = null ? NULL : w->text });
}

/* A time: the text from the low 32 bits (e2fsprogs ignores the high byte there), JSON in full. */
static void when(struct walker *w, const char *label, int in_text, const char *key, uint32_t lo,
		 uint8_t hi, const char *zero_text)
{
	if (!lo && zero_text)
		tf(w, "%s", zero_text);
	else
		sup_time_str((int64_t)lo, w->text, sizeof(w->text));
	put(w, (struct field){ .label = label, .in_text = in_text, .key = key, .jtype = J_INT,
			       .i = (int64_t)lo | ((int64_t)hi << 32) });
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

/* Append " "-separated (or space-terminated) words to w->text. */
static void text_append(struct walker *w, const char *word, const char *sep_before, const char *after)
{
	size_t used = strlen(w->text);

	snprintf(w->text + used, sizeof(w->text) - used, "%s%s%s", used ? sep_before : "", word, after);
}

static void features(struct walker *w, const struct ext4fs_super *sb)
{
	const uint32_t words[3] = { sb->s_feature_compat, sb->s_feature_incompat,
				    sb->s_feature_ro_compat };
	static const char *const word_keys[3] = { "compat", "incompat", "ro_compat" };
	char names[96][24], text[2048]; /* all 96 bits named: under 2,000 bytes */
	const char *list[96];
	size_t n = 0;

	for (int wd = 0; wd < 3; wd++)
		for (int b = 0; b < 32; b++) {
			uint32_t one[3] = { 0, 0, 0 };

			if (!(words[wd] & (1U << b)))
				continue;
			one[wd] = 1U << b;
			ext4fs_features_format(one, names[n], sizeof(names[n]));
			list[n] = names[n];
			n++;
		}
	ext4fs_features_format(words, text, sizeof(text));
	put(w, (struct field){ .label = "Filesystem features:", .in_text = 1,
			       .text = text[0] ? text : "(none)", .key = "features", .jtype = J_STRS,
			       .list = list, .n = n });
	jobj(w, "feature_words");
	for (int wd = 0; wd < 3; wd++)
		jnum(w, word_keys[wd], words[wd]);
	jend(w);
}

static void flag_words(struct walker *w, const struct ext4fs_super *sb)
{
	const char *list[32];
	char bufs[32][16];
	size_t n = 0;
	uint32_t opts = sb->s_default_mount_opts;

	/* s_flags: only the named bits, each followed by a space */
	w->text[0] = '\0';
	for (unsigned b = 0; b < 32; b++) {
		const char *name = ext4fs_sb_flag_name(b);
		if ((sb->s_flags & (1U << b)) && name) {
			list[n++] = name;
			text_append(w, name, "", " ");
		}
	}
	if (!n)
		tf(w, "(none)");
	jnum(w, "flags_value", sb->s_flags);
	put(w, (struct field){ .label = "Filesystem flags:", .in_text = sb->s_flags != 0, .key = "flags",
			       .jtype = J_STRS, .list = list, .n = n });

	/* default mount options: the journalling mode first, then the single options */
	n = 0;
	w->text[0] = '\0';
	if (ext4fs_defm_jmode_name(opts))
		list[n++] = ext4fs_defm_jmode_name(opts);
	for (unsigned b = 0; b < 32; b++)
		if ((opts & (1U << b)) && !((1U << b) & EXT4FS_DEFM_JMODE_MASK)) {
			list[n] = ext4fs_defm_option_name(b, bufs[n], sizeof(bufs[n]));
			n++;
		}
	for (size_t k = 0; k < n; k++)
		text_append(w, list[k], " ", "");
	if (!n)
		tf(w, "(none)");
	jnum(w, "default_mount_opts_value", opts);
	put(w, (struct field){ .label = "Default mount options:", .in_text = 1, .key = "default_mount_opts",
			       .jtype = J_STRS, .list = list, .n = n });
}

/* "Reserved blocks uid:" / "gid:" with the name the system gives them. */
static void owner(struct walker *w, int group, uint32_t id)
{
	const char *name;

	if (group) {
		struct group *gr = getgrgid(id);
		name = gr ? gr->gr_name : NULL;
	} else {
		struct passwd *pw = getpwuid(id);
		name = pw ? pw->pw_name : NULL;
	}
	tf(w, "%u (%s %s)", id, group ? "group" : "user", name ? name : "unknown");
	put(w, (struct field){ .label = group ? "Reserved blocks gid:" : "Reserved blocks uid:", .in_text = 1,
			       .key = group ? "reserved_gid" : "reserved_uid", .jtype = J_UINT, .u = id });
	put(w, (struct field){ .key = group ? "reserved_group" : "reserved_user", .jtype = J_STR, .s = name });
}

static void error_info(struct walker *w, const char *which, const char *key, uint32_t time,
		       uint8_t time_hi, uint32_t ino, uint64_t blk, const uint8_t func[32],
		       uint32_t lineno, uint8_t errcode)
{
	char label[40], buf[32];

	if (!time) {
		jnull(w, key);
		return;
	}
	jobj(w, key);
	snprintf(label, sizeof(label), "%s error time:", which);
	when(w, label, 1, "time", time, time_hi, NULL);
	snprintf(label, sizeof(label), "%s error function:", which);
	fixed(w, label, "", "function", func, 32);
	snprintf(label, sizeof(label), "%s error line #:", which);
	num(w, label, 1, "line", lineno);
	snprintf(label, sizeof(label), "%s error inode #:", which);
	num(w, label, ino != 0, "inode", ino);
	snprintf(label, sizeof(label), "%s error block #:", which);
	num(w, label, blk != 0, "block", blk);
	jnum(w, "errcode", errcode);
	snprintf(label, sizeof(label), "%s error err:", which);
	tf(w, "%s", ext4fs_errcode_name(errcode, buf, sizeof(buf)));
	put(w, (struct field){ .label = label, .in_text = errcode != 0, .key = "errcode_name", .jtype = J_STR,
			       .s = errcode ? w->text : NULL });
	jend(w);
}

int sup_super_csum_mismatch(const struct ext4fs_fs *fs, unsigned *expected)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);

	if (!(sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM))
		return 0;
	*expected = ext4fs_super_csum(ext4fs_sb_raw(fs));
	return *expected != sb->s_checksum;
}

static void walk(struct walker *w, const struct ext4fs_fs *fs)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	const uint8_t *raw = ext4fs_sb_raw(fs);
	int bigalloc = (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_BIGALLOC) != 0;
	int rev1 = sb->s_rev_level >= 1;
	unsigned expected = 0;
	int mismatch = sup_super_csum_mismatch(fs, &expected);
	char buf[64];

	fixed(w, "Filesystem volume name:", "<none>", "volume_name", sb->s_volume_name,
	      sizeof(sb->s_volume_name));
	fixed(w, "Last mounted on:", "<not available>", "last_mounted", sb->s_last_mounted,
	      sizeof(sb->s_last_mounted));
	uuid(w, "Filesystem UUID:", 1, "uuid", sb->s_uuid);
	tf(w, "0x%04X", sb->s_magic);
	put(w, (struct field){ .label = "Filesystem magic number:", .in_text = 1, .key = "magic",
			       .jtype = J_UINT, .u = sb->s_magic });
	tf(w, "%u (%s)", sb->s_rev_level, ext4fs_revision_name(sb->s_rev_level));
	put(w, (struct field){ .label = "Filesystem revision #:", .in_text = 1, .key = "revision",
			       .jtype = J_UINT, .u = sb->s_rev_level });
	jnum(w, "minor_revision", sb->s_minor_rev_level);
	features(w, sb);
	flag_words(w, sb);
	fixed(w, "Mount options:", NULL, "mount_opts", sb->s_mount_opts, sizeof(sb->s_mount_opts));

	tf(w, "%s", ext4fs_state_name(sb->s_state));
	put(w, (struct field){ .label = "Filesystem state:", .in_text = 1, .key = "state_value",
			       .jtype = J_UINT, .u = sb->s_state });
	jbool(w, "clean", sb->s_state & EXT4FS_STATE_VALID);
	jbool(w, "has_errors", sb->s_state & EXT4FS_STATE_ERROR);
	jbool(w, "orphans_being_recovered", sb->s_state & EXT4FS_STATE_ORPHAN);
	jnum(w, "errors_value", sb->s_errors);
	put(w, (struct field){ .label = "Errors behavior:", .in_text = 1,
			       .text = ext4fs_errors_behavior_name(sb->s_errors), .key = "errors_behavior",
			       .jtype = J_STR, .s = ext4fs_errors_behavior_name(sb->s_errors) });
	jnum(w, "creator_os_value", sb->s_creator_os);
	put(w, (struct field){ .label = "Filesystem OS type:", .in_text = 1,
			       .text = ext4fs_creator_os_name(sb->s_creator_os), .key = "creator_os",
			       .jtype = J_STR, .s = ext4fs_creator_os_name(sb->s_creator_os) });

	num(w, "Inode count:", 1, "inodes_count", sb->s_inodes_count);
	num(w, "Block count:", 1, "blocks_count", geo->blocks_count);
	num(w, "Reserved block count:", 1, "reserved_blocks_count", geo->r_blocks_count);
	num(w, "Overhead clusters:", sb->s_overhead_clusters != 0, "overhead_clusters",
	    sb->s_overhead_clusters);
	num(w, "Free blocks:", 1, "free_blocks_count", geo->free_blocks_count);
	num(w, "Free inodes:", 1, "free_inodes_count", sb->s_free_inodes_count);
	num(w, "First block:", 1, "first_data_block", sb->s_first_data_block);
	num(w, "Block size:", 1, "block_size", geo->block_size);
	tf(w, "%u", 1024U << (sb->s_log_cluster_size & 31));
	put(w, (struct field){ .label = bigalloc ? "Cluster size:" : "Fragment size:", .in_text = 1,
			       .key = "cluster_size", .jtype = J_UINT,
			       .u = (uint64_t)geo->block_size * geo->cluster_ratio });
	tf(w, "%u", sb->s_desc_size);
	put(w, (struct field){ .label = "Group descriptor size:",
			       .in_text = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) != 0,
			       .key = "desc_size", .jtype = J_UINT, .u = geo->desc_size });
	num(w, "Reserved GDT blocks:", sb->s_reserved_gdt_blocks != 0, "reserved_gdt_blocks",
	    sb->s_reserved_gdt_blocks);
	num(w, "Blocks per group:", 1, "blocks_per_group", sb->s_blocks_per_group);
	num(w, bigalloc ? "Clusters per group:" : "Fragments per group:", 1, "clusters_per_group",
	    sb->s_clusters_per_group);
	num(w, "Inodes per group:", 1, "inodes_per_group", sb->s_inodes_per_group);
	num(w, "Inode blocks per group:", 1, "inode_blocks_per_group", geo->inode_blocks_per_group);
	jnum(w, "group_count", geo->group_count);
	num(w, "RAID stride:", sb->s_raid_stride != 0, "raid_stride", sb->s_raid_stride);
	num(w, "RAID stripe width:", sb->s_raid_stripe_width != 0, "raid_stripe_width",
	    sb->s_raid_stripe_width);
	num(w, "First meta block group:", sb->s_first_meta_bg != 0, "first_meta_bg", sb->s_first_meta_bg);
	jnum(w, "log_groups_per_flex", sb->s_log_groups_per_flex);
	tf(w, "%u", 1U << (sb->s_log_groups_per_flex & 31));
	put(w, (struct field){ .label = "Flex block group size:", .in_text = sb->s_log_groups_per_flex != 0,
			       .key = sb->s_log_groups_per_flex < 32 ? "flex_bg_size" : NULL,
			       .jtype = J_UINT, .u = 1U << (sb->s_log_groups_per_flex & 31) });

	when(w, "Filesystem created:", sb->s_mkfs_time != 0, "mkfs_time", sb->s_mkfs_time,
	     sb->s_mkfs_time_hi, NULL);
	when(w, "Last mount time:", 1, "mount_time", sb->s_mtime, sb->s_mtime_hi, "n/a");
	when(w, "Last write time:", 1, "write_time", sb->s_wtime, sb->s_wtime_hi, NULL);
	num(w, "Mount count:", 1, "mount_count", sb->s_mnt_count);
	tf(w, "%d", (int16_t)sb->s_max_mnt_count);
	put(w, (struct field){ .label = "Maximum mount count:", .in_text = 1, .key = "max_mount_count",
			       .jtype = J_INT, .i = (int16_t)sb->s_max_mnt_count });
	when(w, "Last checked:", 1, "last_check", sb->s_lastcheck, sb->s_lastcheck_hi, NULL);
	interval_str(sb->s_checkinterval, buf, sizeof(buf));
	tf(w, "%u (%s)", sb->s_checkinterval, buf);
	put(w, (struct field){ .label = "Check interval:", .in_text = 1, .key = "check_interval",
			       .jtype = J_UINT, .u = sb->s_checkinterval });
	if (sb->s_checkinterval) {
		sup_time_str((int64_t)(uint32_t)(sb->s_lastcheck + sb->s_checkinterval), w->text,
			     sizeof(w->text));
		put(w, (struct field){ .label = "Next check after:", .in_text = 1, .key = "next_check",
				       .jtype = J_INT,
				       .i = ((int64_t)sb->s_lastcheck | ((int64_t)sb->s_lastcheck_hi << 32)) +
					    sb->s_checkinterval });
	} else {
		jnull(w, "next_check");
	}
	kbytes_str(sb->s_kbytes_written, w->text, sizeof(w->text));
	put(w, (struct field){ .label = "Lifetime writes:", .in_text = sb->s_kbytes_written != 0,
			       .key = "kbytes_written", .jtype = J_UINT, .u = sb->s_kbytes_written });
	owner(w, 0, sb->s_def_resuid);
	owner(w, 1, sb->s_def_resgid);

	tf(w, "%u", sb->s_first_ino);
	put(w, (struct field){ .label = "First inode:", .in_text = rev1, .key = "first_inode",
			       .jtype = J_UINT, .u = geo->first_ino });
	tf(w, "%u", sb->s_inode_size);
	put(w, (struct field){ .label = "Inode size:\t          ", .raw_label = 1, .in_text = rev1,
			       .key = "inode_size", .jtype = J_UINT, .u = geo->inode_size });
	num(w, "Required extra isize:", rev1 && sb->s_min_extra_isize, "min_extra_isize",
	    sb->s_min_extra_isize);
	num(w, "Desired extra isize:", rev1 && sb->s_want_extra_isize, "want_extra_isize",
	    sb->s_want_extra_isize);

	uuid(w, "Journal UUID:", -1, "journal_uuid", sb->s_journal_uuid);
	num(w, "Journal inode:", sb->s_journal_inum != 0, "journal_inode", sb->s_journal_inum);
	tf(w, "0x%04x", sb->s_journal_dev);
	put(w, (struct field){ .label = "Journal device:\t          ", .raw_label = 1,
			       .in_text = sb->s_journal_dev != 0, .key = "journal_device", .jtype = J_UINT,
			       .u = sb->s_journal_dev });
	num(w, "First orphan inode:", sb->s_last_orphan != 0, "last_orphan", sb->s_last_orphan);
	jnum(w, "default_hash_value", sb->s_def_hash_version);
	tf(w, "%s", ext4fs_def_hash_name(sb->s_def_hash_version, buf, sizeof(buf)));
	put(w, (struct field){ .label = "Default directory hash:",
			       .in_text = (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_DIR_INDEX) ||
					  sb->s_def_hash_version,
			       .key = "default_hash", .jtype = J_STR, .s = w->text });
	/* The seed is shown as the UUID its 16 on-disk bytes would spell. */
	uuid(w, "Directory Hash Seed:", -1, "hash_seed", raw + 0xEC);
	if (sb->s_jnl_backup_type == 1)
		tf(w, "inode blocks");
	else
		tf(w, "type %u", sb->s_jnl_backup_type);
	put(w, (struct field){ .label = "Journal backup:", .in_text = sb->s_jnl_backup_type != 0,
			       .key = "journal_backup_type", .jtype = J_UINT, .u = sb->s_jnl_backup_type });
	{
		uint64_t bgs[2];
		size_t n = 0;

		w->text[0] = '\0';
		for (int k = 0; k < 2; k++)
			if (sb->s_backup_bgs[k]) {
				bgs[n++] = sb->s_backup_bgs[k];
				snprintf(buf, sizeof(buf), "%u", sb->s_backup_bgs[k]);
				text_append(w, buf, "", " ");
			}
		put(w, (struct field){ .label = "Backup block groups:", .in_text = n != 0,
				       .key = "backup_block_groups", .jtype = J_UINTS, .ulist = bgs, .n = n });
	}
	if (sb->s_snapshot_inum || sb->s_snapshot_list) {
		int shown = sb->s_snapshot_inum != 0;

		jobj(w, "snapshot");
		num(w, "Snapshot inode:", shown, "inode", sb->s_snapshot_inum);
		num(w, "Snapshot ID:", shown, "id", sb->s_snapshot_id);
		num(w, "Snapshot reserved blocks:", shown, "reserved_blocks", sb->s_snapshot_r_blocks_count);
		num(w, "Snapshot list head:", sb->s_snapshot_list != 0, "list_head", sb->s_snapshot_list);
		jend(w);
	} else {
		jnull(w, "snapshot");
	}

	num(w, "FS Error count:", sb->s_error_count != 0, "error_count", sb->s_error_count);
	error_info(w, "First", "first_error", sb->s_first_error_time, sb->s_first_error_time_hi,
		   sb->s_first_error_ino, sb->s_first_error_block, sb->s_first_error_func,
		   sb->s_first_error_line, sb->s_first_error_errcode);
	error_info(w, "Last", "last_error", sb->s_last_error_time, sb->s_last_error_time_hi,
		   sb->s_last_error_ino, sb->s_last_error_block, sb->s_last_error_func,
		   sb->s_last_error_line, sb->s_last_error_errcode);

	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_MMP) {
		num(w, "MMP block number:", 1, "mmp_block", sb->s_mmp_block);
		num(w, "MMP update interval:", 1, "mmp_update_interval", sb->s_mmp_update_interval);
	} else {
		jnull(w, "mmp_block");
		jnull(w, "mmp_update_interval");
	}
	num(w, "User quota inode:", sb->s_usr_quota_inum != 0, "user_quota_inode", sb->s_usr_quota_inum);
	num(w, "Group quota inode:", sb->s_grp_quota_inum != 0, "group_quota_inode", sb->s_grp_quota_inum);
	num(w, "Project quota inode:", sb->s_prj_quota_inum != 0, "project_quota_inode",
	    sb->s_prj_quota_inum);
	if (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) {
		const char *type = sb->s_checksum_type == 1 ? "crc32c" : "unknown";

		put(w, (struct field){ .label = "Checksum type:", .in_text = 1, .text = type,
				       .key = "checksum_type", .jtype = J_STR, .s = type });
		tf(w, "0x%08x", sb->s_checksum);
		put(w, (struct field){ .label = "Checksum:", .in_text = 1, .key = "checksum", .jtype = J_UINT,
				       .u = sb->s_checksum });
		if (mismatch)
			jnum(w, "checksum_expected", expected);
		else
			jnull(w, "checksum_expected");
	} else {
		jnull(w, "checksum_type");
		jnull(w, "checksum");
		jnull(w, "checksum_expected");
	}
	uuid(w, "Encryption PW Salt:", -1, "encryption_pw_salt", sb->s_encrypt_pw_salt);
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CSUM_SEED) {
		tf(w, "0x%08x", sb->s_checksum_seed);
		put(w, (struct field){ .label = "Checksum seed:", .in_text = 1, .key = "checksum_seed",
				       .jtype = J_UINT, .u = sb->s_checksum_seed });
	} else {
		jnull(w, "checksum_seed");
	}
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CASEFOLD) {
		tf(w, "%s", ext4fs_encoding_name(sb->s_encoding, buf, sizeof(buf)));
		put(w, (struct field){ .label = "Character encoding:", .in_text = 1, .key = "encoding",
				       .jtype = J_STR, .s = w->text });
		jnum(w, "encoding_flags", sb->s_encoding_flags);
	} else {
		jnull(w, "encoding");
		jnull(w, "encoding_flags");
	}
	if (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_ORPHAN_FILE)
		num(w, "Orphan file inode:", 1, "orphan_file_inode", sb->s_orphan_file_inum);
	else
		jnull(w, "orphan_file_inode");
	tf(w, "0x%08x", expected);
	put(w, (struct field){ .label = "Expected Checksum:",
			       .in_text = mismatch && (w->flags & SUP_SUPER_LIST_EXPECTED_CSUM) });
	jnum(w, "lost_found_inode", sb->s_lpf_ino);
}

/* ------------------------------------------------------------------ renderers */

static void emit_text(void *arg, const struct field *f)
{
	FILE *out = arg;

	if (!f->label || !f->in_text)
		return;
	if (f->raw_label)
		fputs(f->label, out);
	else
		fprintf(out, "%-26s", f->label);
	fputs(f->text, out);
	fputc('\n', out);
}

static void emit_json(void *arg, const struct field *f)
{
	struct json *j = arg;

	if (!f->key && f->jtype != J_OBJ_END)
		return;
	switch (f->jtype) {
	case J_NONE: break;
	case J_UINT: json_uint(j, f->key, f->u); break;
	case J_INT: json_int(j, f->key, f->i); break;
	case J_BOOL: json_bool(j, f->key, (int)f->u); break;
	case J_NULL: json_null(j, f->key); break;
	case J_STR:
		if (f->s && f->slen)
			json_string_len(j, f->key, f->s, f->slen);
		else
			json_string(j, f->key, f->s);
		break;
	case J_STRS:
		json_array_begin(j, f->key);
		for (size_t k = 0; k < f->n; k++)
			json_string(j, NULL, f->list[k]);
		json_array_end(j);
		break;
	case J_UINTS:
		json_array_begin(j, f->key);
		for (size_t k = 0; k < f->n; k++)
			json_uint(j, NULL, f->ulist[k]);
		json_array_end(j);
		break;
	case J_OBJ_BEGIN: json_object_begin(j, f->key); break;
	case J_OBJ_END: json_object_end(j); break;
	}
}

void sup_super_list_text(FILE *f, const struct ext4fs_fs *fs, unsigned flags)
{
	struct walker w = { .emit = emit_text, .arg = f, .flags = flags };

	walk(&w, fs);
}

void sup_super_list_json(struct json *j, const char *key, const struct ext4fs_fs *fs)
{
	struct walker w = { .emit = emit_json, .arg = j };

	json_object_begin(j, key);
	walk(&w, fs);
	json_object_end(j);
}
