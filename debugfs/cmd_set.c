/*
 * cmd_set.c - debug4fs commands that set single on-disk fields by name:
 *
 *   set_inode_field, sif <file> <field> <value>      (-l lists the fields)
 *   set_super_value, ssv <field> <value>             (-l)
 *   set_block_group, set_bg <group> <field> <value>  (-l)
 *   set_current_time <time>                          the clock for later changes
 *
 * Field names, value syntax and messages are debugfs 1.47's: an optional
 * "i_" / "s_" / "bg_" prefix; "name[N]" for array entries; a field kept in
 * two halves ("size", "uid", "blocks_count", ...) is set whole by its name
 * and one half at a time as "name_lo" / "name_hi"; unsigned values are read
 * by strtoull (base 0, so 0x... and 0... work, and "-1" is too big);
 * dates are "now", "@seconds", YYYYMMDD[HHMM[SS]] (UTC) or plain seconds;
 * UUIDs are "null", "clear", "random", "time" or the usual text form.
 *
 * What each command writes, as debugfs does:
 *  - sif rewrites the inode with a correct checksum, except when the field
 *    is the checksum itself: then the value is stored as given (a damaged
 *    inode on purpose), and "checksum calc" stores the right one and prints
 *    it.  An inode whose checksum is wrong can only have its checksum set.
 *    "bmap[N] <block>" maps logical block N to <block> (the block is not
 *    marked in use, as in debugfs).  Times set through their full name keep
 *    the nanoseconds and store the epoch bits of the extra field (years
 *    1901-2446); "atime_hi" sets those two bits alone.
 *  - set_bg leaves the descriptor checksum as it was (stale) unless the
 *    field is "checksum": a number is stored as given, "calc" computes it.
 *    Scripts follow a change with "set_bg N checksum calc" when they want a
 *    consistent descriptor, exactly as with debugfs.
 *  - ssv changes the superblock; its checksum is always recomputed when it
 *    is written (so setting "checksum" has no lasting effect, as in debugfs).
 *
 * Deliberate differences from debugfs 1.47:
 *  - ssv refuses fields the library derives its geometry from (block and
 *    inode counts, sizes, per-group numbers, first data block, descriptor
 *    size, flex group size, incompat and ro_compat features): "Invalid
 *    argument ... (detail: changing the geometry ...)".  Use a tool made
 *    for the job (tune4fs, resize) instead.  s_magic is not settable either
 *    (as in debugfs).
 *  - ssv knows every field of the superblock, also those debugfs lacks
 *    (e.g. "encoding", "first_error_errcode"), and the superblock times set
 *    their s_*_hi byte too; "mtime_hi" and friends are settable.
 *  - the changed superblock is written to the backup copies as well as the
 *    primary (debugfs writes only the primary unless "close -a").
 *  - "checksum calc" on an inode works when the stored checksum is wrong
 *    (debugfs 1.47.0 cannot read such an inode and silently does nothing).
 *  - the half of a field that is held in the 64-bit part of a group
 *    descriptor (e.g. "free_blocks_count_hi") exists only on file systems
 *    with 64-byte descriptors, as in debugfs; "atime_hi" larger than 3 is
 *    refused instead of being cut.
 *  - bmap[N] counts the new block in i_blocks, and a block it replaces is
 *    freed (debugfs counts neither and leaves the old block allocated).
 *  - file_acl_hi does not overwrite uid_hi (debugfs 1.47.0 writes 32 bits
 *    there).
 *  - a failure makes the command fail (exit status 1).
 */
#include "config.h"
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <uuid/uuid.h>
#include "debug4fs.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dxhash.h"

/* ------------------------------------------------------------------ fields */

enum ftype {
	T_UINT,         /* unsigned, strtoull */
	T_INT,          /* signed, strtol, cut to the field's width */
	T_STRING,       /* NUL-padded text */
	T_UUID,         /* 16 bytes */
	T_HASH,         /* directory hash algorithm by name */
	T_TIME,         /* date */
	T_CSUM,         /* checksum: a number, or "calc" */
	T_BMAP,         /* sif bmap[N]: map a logical block */
};

/*
 * Where one half of a field lives in the native struct: a member of size
 * bytes at byte offset off, of which the field uses bits [shift,
 * shift+bits).  le: the member is a byte array holding a little-endian
 * number (i_block), not a native integer.  size 0: no such half.
 */
struct part {
	uint16_t off;
	uint8_t size;
	uint8_t shift;
	uint8_t bits;
	uint8_t le;
};

#define F_EPOCH    0x1  /* hi is the two epoch bits of an inode time's extra field */
#define F_NOSUFFIX 0x2  /* kept in two halves, but not settable as _lo / _hi (author) */

struct field {
	const char *name;
	size_t name_len;        /* characters of name that are the field's name (0: all) */
	enum ftype type;
	struct part lo, hi;
	uint16_t count;         /* array entries; 0 for a scalar */
	unsigned flags;
	uint8_t elem;           /* strings and UUIDs: bytes per element of the member */
};

/* A field as named on the command line: which halves, which array entry. */
struct sel {
	const struct field *f;
	int half;               /* 0 both, 1 lo only, 2 hi only */
	uint64_t idx;
};

#define FLD(name, type, lo, hi, count, flags) { name, 0, type, lo, hi, count, flags, 0 }
#define PART(type, m, sh, nb) { offsetof(type, m), sizeof(((type *)0)->m), sh, nb, 0 }
#define WHOLE(type, m) PART(type, m, 0, 8 * sizeof(((type *)0)->m))
#define NOPART { 0, 0, 0, 0, 0 }

#define IN(m) WHOLE(struct ext4fs_inode, m)
#define IBLK(i) { offsetof(struct ext4fs_inode, i_block) + 4 * (i), 4, 0, 32, 1 }

static const struct field inode_fields[] = {
	FLD("mode", T_UINT, IN(i_mode), NOPART, 0, 0),
	FLD("uid", T_UINT, IN(i_uid), IN(i_uid_high), 0, 0),
	FLD("size", T_UINT, IN(i_size_lo), IN(i_size_high), 0, 0),
	FLD("atime", T_TIME, IN(i_atime), PART(struct ext4fs_inode, i_atime_extra, 0, 2), 0, F_EPOCH),
	FLD("ctime", T_TIME, IN(i_ctime), PART(struct ext4fs_inode, i_ctime_extra, 0, 2), 0, F_EPOCH),
	FLD("mtime", T_TIME, IN(i_mtime), PART(struct ext4fs_inode, i_mtime_extra, 0, 2), 0, F_EPOCH),
	FLD("dtime", T_TIME, IN(i_dtime), NOPART, 0, 0),
	FLD("gid", T_UINT, IN(i_gid), IN(i_gid_high), 0, 0),
	FLD("links_count", T_UINT, IN(i_links_count), NOPART, 0, 0),
	FLD("blocks", T_UINT, IN(i_blocks_lo), IN(i_blocks_high), 0, 0),
	FLD("flags", T_UINT, IN(i_flags), NOPART, 0, 0),
	FLD("version", T_UINT, IN(i_version_lo), IN(i_version_hi), 0, 0),
	FLD("translator", T_UINT, IN(i_version_lo), NOPART, 0, 0),
	FLD("block", T_UINT, IBLK(0), NOPART, EXT4FS_NDIR_BLOCKS, 0),
	FLD("block[IND]", T_UINT, IBLK(EXT4FS_IND_BLOCK), NOPART, 0, 0),
	FLD("block[DIND]", T_UINT, IBLK(EXT4FS_DIND_BLOCK), NOPART, 0, 0),
	FLD("block[TIND]", T_UINT, IBLK(EXT4FS_TIND_BLOCK), NOPART, 0, 0),
	FLD("generation", T_UINT, IN(i_generation), NOPART, 0, 0),
	FLD("file_acl", T_UINT, IN(i_file_acl_lo), IN(i_file_acl_high), 0, 0),
	FLD("faddr", T_UINT, IN(i_faddr), NOPART, 0, 0),
	/* The Hurd's names for bytes Linux uses otherwise. */
	FLD("frag", T_UINT, PART(struct ext4fs_inode, i_blocks_high, 0, 8), NOPART, 0, 0),
	FLD("fsize", T_UINT, PART(struct ext4fs_inode, i_blocks_high, 8, 8), NOPART, 0, 0),
	FLD("checksum", T_CSUM, IN(i_checksum_lo), IN(i_checksum_hi), 0, 0),
	FLD("author", T_UINT, IN(i_checksum_lo), IN(i_reserved), 0, F_NOSUFFIX),
	FLD("extra_isize", T_UINT, IN(i_extra_isize), NOPART, 0, 0),
	FLD("ctime_extra", T_UINT, IN(i_ctime_extra), NOPART, 0, 0),
	FLD("mtime_extra", T_UINT, IN(i_mtime_extra), NOPART, 0, 0),
	FLD("atime_extra", T_UINT, IN(i_atime_extra), NOPART, 0, 0),
	FLD("crtime", T_TIME, IN(i_crtime), PART(struct ext4fs_inode, i_crtime_extra, 0, 2), 0, F_EPOCH),
	FLD("crtime_extra", T_UINT, IN(i_crtime_extra), NOPART, 0, 0),
	FLD("projid", T_UINT, IN(i_projid), NOPART, 0, 0),
	FLD("bmap", T_BMAP, NOPART, NOPART, 0, 0),
	FLD(NULL, T_UINT, NOPART, NOPART, 0, 0),
};

#define GD(m, sh, nb) PART(struct ext4fs_group_desc, m, sh, nb)

/* The hi halves exist only in 64-byte descriptors (dropped at lookup otherwise). */
static const struct field gd_fields[] = {
	FLD("block_bitmap", T_UINT, GD(block_bitmap, 0, 32), GD(block_bitmap, 32, 32), 0, 0),
	FLD("inode_bitmap", T_UINT, GD(inode_bitmap, 0, 32), GD(inode_bitmap, 32, 32), 0, 0),
	FLD("inode_table", T_UINT, GD(inode_table, 0, 32), GD(inode_table, 32, 32), 0, 0),
	FLD("free_blocks_count", T_UINT, GD(free_blocks_count, 0, 16), GD(free_blocks_count, 16, 16), 0, 0),
	FLD("free_inodes_count", T_UINT, GD(free_inodes_count, 0, 16), GD(free_inodes_count, 16, 16), 0, 0),
	FLD("used_dirs_count", T_UINT, GD(used_dirs_count, 0, 16), GD(used_dirs_count, 16, 16), 0, 0),
	FLD("flags", T_UINT, GD(flags, 0, 16), NOPART, 0, 0),
	FLD("exclude_bitmap", T_UINT, GD(exclude_bitmap, 0, 32), GD(exclude_bitmap, 32, 32), 0, 0),
	FLD("block_bitmap_csum", T_UINT, GD(block_bitmap_csum, 0, 16), GD(block_bitmap_csum, 16, 16), 0, 0),
	FLD("inode_bitmap_csum", T_UINT, GD(inode_bitmap_csum, 0, 16), GD(inode_bitmap_csum, 16, 16), 0, 0),
	FLD("itable_unused", T_UINT, GD(itable_unused, 0, 16), GD(itable_unused, 16, 16), 0, 0),
	FLD("checksum", T_CSUM, GD(checksum, 0, 16), NOPART, 0, 0),
	FLD(NULL, T_UINT, NOPART, NOPART, 0, 0),
};

/* Superblock fields whose values are not plain unsigned numbers. */
static const struct {
	const char *name;
	enum ftype type;
} super_types[] = {
	{ "volume_name", T_STRING }, { "last_mounted", T_STRING }, { "mount_opts", T_STRING },
	{ "first_error_func", T_STRING }, { "last_error_func", T_STRING },
	{ "uuid", T_UUID }, { "journal_uuid", T_UUID }, { "hash_seed", T_UUID },
	{ "encrypt_pw_salt", T_UUID }, { "def_hash_version", T_HASH },
	{ "mtime", T_TIME }, { "wtime", T_TIME }, { "lastcheck", T_TIME }, { "mkfs_time", T_TIME },
	{ "first_error_time", T_TIME }, { "last_error_time", T_TIME },
	{ "log_cluster_size", T_INT }, { "max_mnt_count", T_INT },
};

/* debugfs's names for fields the on-disk layout names otherwise (both are accepted). */
static const struct {
	const char *debugfs_name, *disk_name;
} super_aliases[] = {
	{ "mmp_interval", "mmp_update_interval" },
};

static size_t field_name_len(const struct field *f)
{
	return f->name_len ? f->name_len : strlen(f->name);
}

static int name_is(const struct field *f, const char *name, size_t len)
{
	return field_name_len(f) == len && !strncmp(f->name, name, len);
}

/* The on-disk table entry called "s_<name>", or NULL. */
static const struct ext4fs_field *super_entry(const struct ext4fs_field *t, size_t n,
					      const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(t[i].name) == len + 2 && !strncmp(t[i].name + 2, name, len))
			return &t[i];
	return NULL;
}

static struct part super_part(const struct ext4fs_field *e)
{
	struct part p = { (uint16_t)e->native_offset, e->size, 0, (uint8_t)(8 * e->size), 0 };
	return p;
}

/* The "s_<base>_hi" entry that goes with field base ("s_<base>" or "s_<base>_lo"), or NULL. */
static const struct ext4fs_field *super_hi_of(const struct ext4fs_field *t, size_t n,
					      const char *base, size_t len)
{
	char hi[80];

	snprintf(hi, sizeof(hi), "%.*s_hi", (int)len, base);
	return super_entry(t, n, hi, strlen(hi));
}

static int ends_with(const char *name, size_t len, const char *suffix)
{
	return len > 3 && !strcmp(name + len - 3, suffix);
}

/*
 * Build the superblock's field list from the library's table (out has room
 * for every entry plus the terminator): "X_lo" with "X_hi", and "X" with
 * "X_hi" (the 40-bit times), become one field "X"; s_magic is left out.
 */
static void super_fields(struct field *out)
{
	size_t n, k = 0;
	const struct ext4fs_field *t = ext4fs_super_fields(&n);

	for (size_t i = 0; i < n; i++) {
		const char *name = t[i].name + 2;
		size_t len = strlen(name);
		struct field f = { name, 0, T_UINT, super_part(&t[i]), NOPART, 0, 0, 0 };
		const struct ext4fs_field *hi;
		char lo[80];

		if (!strcmp(name, "magic"))
			continue;
		for (size_t j = 0; j < sizeof(super_aliases) / sizeof(super_aliases[0]); j++)
			if (!strcmp(name, super_aliases[j].disk_name))
				f.name = super_aliases[j].debugfs_name;
		if (ends_with(name, len, "_hi")) {
			snprintf(lo, sizeof(lo), "%.*s_lo", (int)(len - 3), name);
			if (super_entry(t, n, name, len - 3) || super_entry(t, n, lo, len))
				continue;       /* listed with its low half */
		}
		if (ends_with(name, len, "_lo") && (hi = super_hi_of(t, n, name, len - 3))) {
			f.name_len = len - 3;
			f.hi = super_part(hi);
		} else if ((hi = super_hi_of(t, n, name, len))) {
			f.hi = super_part(hi);
		}
		if (t[i].count > 1)
			f.count = t[i].count;
		for (size_t j = 0; j < sizeof(super_types) / sizeof(super_types[0]); j++)
			if (name_is(&f, super_types[j].name, strlen(super_types[j].name)))
				f.type = super_types[j].type;
		if (f.type == T_STRING || f.type == T_UUID) {
			/* Set as a whole: lo spans the array. */
			f.elem = t[i].size;
			f.lo.size = (uint8_t)(t[i].size * t[i].count);
			f.lo.bits = 0;
			f.count = 0;
		}
		out[k++] = f;
	}
	out[k].name = NULL;
}

static struct field *super_field_list(void)
{
	size_t n;

	ext4fs_super_fields(&n);
	struct field *f = calloc(n + 1, sizeof(*f));
	if (f)
		super_fields(f);
	return f;
}

/*
 * Find the field spec names (after an optional prefix).  hi_ok: whether the
 * hi halves exist (group descriptors smaller than 64 bytes have none).
 * Returns 0 and fills *s, or -1.
 */
static int find_field(const struct field *fields, const char *prefix, const char *spec,
		      int hi_ok, struct sel *s)
{
	char name[128], *bracket;
	size_t len;
	int have_idx = 0;

	memset(s, 0, sizeof(*s));
	if (!strncmp(spec, prefix, strlen(prefix)))
		spec += strlen(prefix);
	if (strlen(spec) >= sizeof(name))
		return -1;
	strcpy(name, spec);
	len = strlen(name);
	/* Literal names first: "block[IND]" is a field of its own. */
	for (const struct field *f = fields; f->name; f++)
		if (!f->count && f->type != T_BMAP && name_is(f, name, len)) {
			s->f = f;
			goto found;
		}
	bracket = strchr(name, '[');
	if (bracket) {
		char *end;
		if (len < 3 || name[len - 1] != ']' || bracket[1] == ']' || bracket[1] == '-')
			return -1;
		name[len - 1] = '\0';
		errno = 0;
		s->idx = strtoull(bracket + 1, &end, 0);
		if (errno || *end)
			return -1;
		*bracket = '\0';
		len = (size_t)(bracket - name);
		have_idx = 1;
	}
	for (const struct field *f = fields; f->name; f++) {
		int is_array = f->count || f->type == T_BMAP;
		if (is_array != have_idx || !name_is(f, name, len))
			continue;
		if (f->count && s->idx >= f->count)
			return -1;
		s->f = f;
		goto found;
	}
	if (have_idx || len < 4 || (strcmp(name + len - 3, "_lo") && strcmp(name + len - 3, "_hi")))
		return -1;
	for (const struct field *f = fields; f->name; f++) {
		if (f->count || !f->hi.size || (f->flags & F_NOSUFFIX) || !name_is(f, name, len - 3))
			continue;
		if (!hi_ok)
			return -1;
		s->f = f;
		s->half = name[len - 1] == 'o' ? 1 : 2;
		return 0;
	}
	return -1;
found:
	if (s->f->hi.size && !hi_ok)
		s->half = 1;
	return 0;
}

static const char *type_name(const struct field *f)
{
	switch (f->type) {
	case T_INT: return "integer";
	case T_STRING: return "string";
	case T_UUID: return "UUID";
	case T_HASH: return "hash algorithm";
	case T_TIME: return "date/time";
	case T_CSUM: return "unsigned integer OR \"calc\"";
	case T_BMAP: return "set physical->logical block map";
	default: return "unsigned integer";
	}
}

/* "-l": debugfs's listing, or with -j {"fields": [{"name", "type"}...]} (names as listed). */
static void list_fields(struct dbg *d, const struct field *fields, const char *what,
			const char *cmd)
{
	struct json j;

	if (d->json) {
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "fields");
	} else {
		fprintf(d->out, "%s fields supported by the %s command:\n", what, cmd);
	}
	for (const struct field *f = fields; f->name; f++) {
		char name[80];
		int n = snprintf(name, sizeof(name), "%.*s", (int)field_name_len(f), f->name);
		if (f->type == T_BMAP)
			snprintf(name + n, sizeof(name) - (size_t)n, "[]");
		else if (f->count)
			snprintf(name + n, sizeof(name) - (size_t)n, "[%u]", f->count);
		else if (f->hi.size && !(f->flags & F_NOSUFFIX))
			snprintf(name + n, sizeof(name) - (size_t)n, "[_hi|_lo]");
		if (d->json) {
			json_object_begin(&j, NULL);
			json_string(&j, "name", name);
			json_string(&j, "type", type_name(f));
			json_object_end(&j);
		} else {
			fprintf(d->out, "\t%-25s\t%s\n", name, type_name(f));
		}
	}
	if (d->json) {
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	}
}

/* "Checksum set to 0x..." after "checksum calc"; {"checksum": n} with -j. */
static void print_csum(struct dbg *d, int digits, uint32_t csum)
{
	struct json j;

	if (!d->json) {
		fprintf(d->out, "Checksum set to 0x%0*x\n", digits, csum);
		return;
	}
	json_init(&j, d->out);
	json_object_begin(&j, NULL);
	json_uint(&j, "checksum", csum);
	json_object_end(&j);
	json_finish(&j);
}

/* ------------------------------------------------------------------ values */

static uint64_t bits_mask(unsigned bits)
{
	return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

static uint64_t load_le(const unsigned char *p, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = size; i > 0; i--)
		v = (v << 8) | p[i - 1];
	return v;
}

static void store_le(unsigned char *p, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t member_get(const unsigned char *p, const struct part *pt)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64 = 0;

	if (pt->le)
		return load_le(p, pt->size);
	switch (pt->size) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

static void member_set(unsigned char *p, const struct part *pt, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	if (pt->le) {
		store_le(p, pt->size, v);
		return;
	}
	switch (pt->size) {
	case 1: memcpy(p, &u8, 1); break;
	case 2: memcpy(p, &u16, 2); break;
	case 4: memcpy(p, &u32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

/* Store v in the bits of struct base that part pt (array entry idx) covers. */
static void part_set(void *base, const struct part *pt, uint64_t idx, uint64_t v)
{
	unsigned char *p = (unsigned char *)base + pt->off + idx * pt->size;
	uint64_t mask = bits_mask(pt->bits) << pt->shift;
	uint64_t m = member_get(p, pt);

	member_set(p, pt, (m & ~mask) | ((v << pt->shift) & mask));
}

static int parse_error(const char *arg, const struct field *f)
{
	fprintf(stderr, "Couldn't parse '%s' for field %.*s.\n", arg, (int)field_name_len(f), f->name);
	return 1;
}

/* strtoull over the whole word, as debugfs reads unsigned values. */
static int parse_uint(const struct sel *s, const char *arg, uint64_t *v)
{
	const struct field *f = s->f;
	unsigned bits = s->half == 2 ? f->hi.bits : f->lo.bits + (s->half ? 0 : f->hi.bits);
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 0);
	if (errno || *end)
		return parse_error(arg, f);
	if (*v > bits_mask(bits)) {
		fprintf(stderr, "Value '%s' exceeds field %.*s maximum %llu.\n", arg,
			(int)field_name_len(f), f->name, (unsigned long long)bits_mask(bits));
		return 1;
	}
	return 0;
}

/*
 * A date as debugfs reads one: "now", "@<seconds>", YYYYMMDD[HHMM[SS]]
 * taken as UTC, or a number of seconds (base 0, may be negative).
 */
static int parse_time(struct dbg *d, const char *arg, int64_t *t)
{
	static const char *const formats[] = { "%Y%m%d%H%M%S", "%Y%m%d%H%M", "%Y%m%d" };
	struct tm tm;
	const char *rest;
	char *end;
	uint32_t nsec;

	if (!strcmp(arg, "now")) {
		ext4fs_now(d->fs, t, &nsec);
		return 0;
	}
	if (arg[0] == '@') {
		errno = 0;
		*t = strtoll(arg + 1, &end, 0);
		return errno || *end ? -1 : 0;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		memset(&tm, 0, sizeof(tm));
		rest = strptime(arg, formats[i], &tm);
		if (rest && !*rest) {
			*t = (int64_t)timegm(&tm);
			return 0;
		}
	}
	errno = 0;
	*t = strtoll(arg, &end, 0);
	return errno || *end ? -1 : 0;
}

static int parse_uuid(const char *arg, unsigned char uu[16])
{
	if (!strcasecmp(arg, "null") || !strcasecmp(arg, "clear"))
		uuid_clear(uu);
	else if (!strcasecmp(arg, "time"))
		uuid_generate_time(uu);
	else if (!strcasecmp(arg, "random"))
		uuid_generate(uu);
	else if (uuid_parse(arg, uu)) {
		fprintf(stderr, "Invalid UUID format: %s\n", arg);
		return 1;
	}
	return 0;
}

/*
 * Parse arg into the field s names within struct base.  T_CSUM "calc" and
 * T_BMAP are the callers' business.  Prints debugfs's message and returns
 * nonzero when arg does not fit.
 */
static int set_value(struct dbg *d, void *base, const struct sel *s, const char *arg)
{
	const struct field *f = s->f;
	uint64_t v;

	switch (s->half ? T_UINT : f->type) {
	case T_INT: {
		char *end;
		long n = strtol(arg, &end, 0);
		if (*end)
			return parse_error(arg, f);
		part_set(base, &f->lo, s->idx, (uint64_t)n);
		return 0;
	}
	case T_STRING: {
		size_t room = f->lo.size;
		if (strlen(arg) >= room) {
			fprintf(stderr, "Error maximum size for %.*s is %zu.\n", (int)field_name_len(f),
				f->name, room);
			return 1;
		}
		memset((unsigned char *)base + f->lo.off, 0, room);
		memcpy((unsigned char *)base + f->lo.off, arg, strlen(arg));
		return 0;
	}
	case T_UUID: {
		unsigned char uu[16];
		unsigned word = f->elem;
		if (parse_uuid(arg, uu))
			return 1;
		for (unsigned i = 0; i < 16; i += word) {
			struct part pt = { (uint16_t)(f->lo.off + i), (uint8_t)word, 0,
					   (uint8_t)(8 * word), 0 };
			part_set(base, &pt, 0, load_le(uu + i, word));
		}
		return 0;
	}
	case T_HASH: {
		int h = ext4fs_dx_hash_by_name(arg);
		if (h < 0) {
			fprintf(stderr, "Invalid hash algorithm: %s\n", arg);
			return 1;
		}
		part_set(base, &f->lo, 0, (uint64_t)h);
		return 0;
	}
	case T_TIME: {
		int64_t t;
		if (parse_time(d, arg, &t))
			return parse_error(arg, f);
		part_set(base, &f->lo, 0, (uint64_t)t);
		if (!f->hi.size)
			return 0;
		if (f->flags & F_EPOCH)     /* signed 32-bit seconds plus 2 epoch bits */
			v = (uint64_t)(t - (int64_t)(int32_t)(uint32_t)t) >> 32;
		else
			v = t < 0 ? 0 : (uint64_t)t >> 32;
		part_set(base, &f->hi, 0, v);
		return 0;
	}
	default:
		if (parse_uint(s, arg, &v))
			return 1;
		if (s->half == 2) {
			part_set(base, &f->hi, s->idx, v);
		} else {
			part_set(base, &f->lo, s->idx, v);
			if (!s->half && f->hi.size)
				part_set(base, &f->hi, s->idx, v >> f->lo.bits);
		}
		return 0;
	}
}

/* ------------------------------------------------------------------ set_inode_field */

#define SIF_USAGE "<inode> <field> <value>\n" \
	"\t\"set_inode_field -l\" will list the names of the fields in an ext2 inode\n" \
	"\twhich can be set."

static int sif_usage(const char *cmd)
{
	fprintf(stderr, "%s: Usage: set_inode %s\n", cmd, SIF_USAGE);
	return 1;
}

/* The checksum stored in a decoded inode (both halves when it has the high one). */
static uint32_t stored_csum(const struct ext4fs_inode *in)
{
	uint32_t c = in->i_checksum_lo;

	if (ext4fs_inode_has_field(in, EXT4FS_INODE_OFF_CHECKSUM_HI, 2))
		c |= (uint32_t)in->i_checksum_hi << 16;
	return c;
}

static int sif_bmap(struct dbg *d, uint32_t ino, struct ext4fs_inode *in, const struct sel *s,
		    const char *arg)
{
	char *end;
	unsigned long long blk = strtoull(arg, &end, 0);
	int err;

	uint64_t old = 0, run;
	int unwritten;

	if (*end || blk > UINT32_MAX)
		return parse_error(arg, s->f);
	/* A mapped block is replaced: unmapped (and freed) first. */
	err = ext4fs_bmap(d->fs, ino, in, s->idx, &old, &run, &unwritten);
	if (!err && old)
		err = ext4fs_bmap_unmap(d->fs, ino, in, s->idx, 1);
	if (!err)
		err = ext4fs_bmap_set(d->fs, ino, in, s->idx, blk, 1, 0);
	if (err) {
		dbg_error(d, "set_inode", err, "while setting block map");
		return 1;
	}
	return 0;
}

/* Set a checksum field: stored exactly as given, or computed ("calc"). */
static int sif_csum(struct dbg *d, uint32_t ino, const struct sel *s, const char *arg)
{
	uint32_t size = ext4fs_geom(d->fs)->inode_size;
	unsigned char *raw = malloc(size);
	struct ext4fs_inode in;
	int err, rc = 1;

	if (!raw) {
		dbg_error(d, "set_inode", EXT4FS_E_NO_MEMORY, "while reading inode %u", ino);
		return 1;
	}
	err = ext4fs_inode_read_raw(d->fs, ino, raw);
	if (err) {
		dbg_error(d, "set_inode", err, "while reading inode %u", ino);
		goto out;
	}
	if (!strcmp(arg, "calc") && !s->half) {
		err = ext4fs_inode_write_raw(d->fs, ino, raw);
		if (!err)
			err = ext4fs_inode_read_raw(d->fs, ino, raw);
		if (err) {
			dbg_error(d, "set_inode", err, "while writing inode %u", ino);
			goto out;
		}
		ext4fs_inode_decode(&in, raw, size);
		print_csum(d, 8, stored_csum(&in));
		rc = 0;
		goto out;
	}
	ext4fs_inode_decode(&in, raw, size);
	if (set_value(d, &in, s, arg))
		goto out;
	ext4fs_inode_encode(&in, raw, size);
	err = ext4fs_inode_write_raw_exact(d->fs, ino, raw);
	if (err) {
		dbg_error(d, "set_inode", err, "while writing inode %u", ino);
		goto out;
	}
	rc = 0;
out:
	free(raw);
	return rc;
}

static int do_set_inode_field(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	struct sel s;
	uint32_t ino;
	int err;

	if (argc == 2 && !strcmp(argv[1], "-l")) {
		list_fields(d, inode_fields, "Inode", "set_inode");
		return 0;
	}
	if (argc != 4)
		return sif_usage(argv[0]);
	if (dbg_require_rw(d, argv[0]))
		return 1;
	if (find_field(inode_fields, "i_", argv[2], 1, &s)) {
		fprintf(stderr, "%s: invalid field specifier: %s\n", argv[0], argv[2]);
		return 1;
	}
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (s.f->type == T_CSUM)
		return sif_csum(d, ino, &s, argv[3]);
	if (dbg_read_inode(d, argv[1], ino, &in))
		return 1;
	if (s.f->type == T_BMAP)
		return sif_bmap(d, ino, &in, &s, argv[3]);
	if (set_value(d, &in, &s, argv[3]))
		return 1;
	err = ext4fs_inode_write(d->fs, ino, &in);
	if (err) {
		dbg_error(d, argv[1], err, "while writing inode %u", ino);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ set_super_value */

static int do_set_super_value(struct dbg *d, int argc, char **argv)
{
	struct field *fields = super_field_list();
	struct ext4fs_super sb;
	const char *spec;
	struct sel s;
	int err, rc = 1;

	if (!fields) {
		fprintf(stderr, "%s: %s\n", argv[0], ext4fs_strerror(EXT4FS_E_NO_MEMORY));
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "-l")) {
		list_fields(d, fields, "Superblock", "set_super_value");
		rc = 0;
		goto out;
	}
	if (argc != 3) {
		fprintf(stderr, "%s: Usage: set_super_value <field> <value>\n"
			"\t\"set_super_value -l\" will list the names of superblock fields\n"
			"\twhich can be set.\n", argv[0]);
		goto out;
	}
	if (dbg_require_rw(d, argv[0]))
		goto out;
	spec = argv[1];
	for (size_t i = 0; i < sizeof(super_aliases) / sizeof(super_aliases[0]); i++) {
		const char *bare = strncmp(spec, "s_", 2) ? spec : spec + 2;
		if (!strcmp(bare, super_aliases[i].disk_name))
			spec = super_aliases[i].debugfs_name;
	}
	if (find_field(fields, "s_", spec, 1, &s)) {
		fprintf(stderr, "%s: invalid field specifier: %s\n", argv[0], argv[1]);
		goto out;
	}
	sb = *ext4fs_sb(d->fs);
	if (set_value(d, &sb, &s, argv[2]))
		goto out;
	err = ext4fs_super_set(d->fs, &sb);
	if (err) {
		dbg_error(d, argv[0], err, "while setting %s", argv[1]);
		goto out;
	}
	rc = 0;
out:
	free(fields);
	return rc;
}

/* ------------------------------------------------------------------ set_block_group */

static int do_set_block_group(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_group_desc gd;
	unsigned long long g;
	struct sel s;
	char *end;
	int err;

	if (argc == 2 && !strcmp(argv[1], "-l")) {
		list_fields(d, gd_fields, "Block group descriptor", "set_block_group");
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "%s: Usage: set_block_group <bg number> <field> <value>\n"
			"\t\"set_block_group -l\" will list the names of the fields in a block group descriptor\n"
			"\twhich can be set.\n", argv[0]);
		return 1;
	}
	if (dbg_require_rw(d, argv[0]))
		return 1;
	g = strtoull(argv[1], &end, 0);
	if (*end || !argv[1][0]) {
		fprintf(stderr, "%s: invalid block group number: %s\n", argv[0], argv[1]);
		return 1;
	}
	if (g >= ext4fs_geom(d->fs)->group_count) {
		fprintf(stderr, "%s: block group number too big: %s\n", argv[0], argv[1]);
		return 1;
	}
	if (find_field(gd_fields, "bg_", argv[2], ext4fs_geom(d->fs)->desc_size >= 64, &s)) {
		fprintf(stderr, "%s: invalid field specifier: %s\n", argv[0], argv[2]);
		return 1;
	}
	gd = *ext4fs_group(d->fs, (uint32_t)g);
	if (s.f->type == T_CSUM && !strcmp(argv[3], "calc")) {
		err = ext4fs_group_desc_set(d->fs, (uint32_t)g, &gd);
		if (err) {
			dbg_error(d, argv[0], err, "while setting group %llu", g);
			return 1;
		}
		print_csum(d, 4, ext4fs_group(d->fs, (uint32_t)g)->checksum);
		return 0;
	}
	if (set_value(d, &gd, &s, argv[3]))
		return 1;
	/* The checksum stays as it was unless it is the field set (debugfs does the same). */
	err = ext4fs_group_desc_set_exact(d->fs, (uint32_t)g, &gd);
	if (err) {
		dbg_error(d, argv[0], err, "while setting group %llu", g);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ set_current_time */

/* Fix the time stamped on what the next commands create and change (also read-only). */
static int do_set_current_time(struct dbg *d, int argc, char **argv)
{
	char buf[64];
	int64_t t;

	if (dbg_check_args(argc, argv, 2, 2, "<time>"))
		return 1;
	if (parse_time(d, argv[1], &t)) {
		fprintf(stderr, "%s: Couldn't parse argument as a time: %s\n\n", argv[0], argv[1]);
		return 1;
	}
	ext4fs_set_time(d->fs, t, 0);
	if (!d->json)
		fprintf(d->out, "Setting current time to %s\n\n", sup_time_str(t, buf, sizeof(buf)));
	return 0;
}

const struct dbg_cmd dbg_cmds_set[] = {
	{ { "set_inode_field", "sif", NULL }, do_set_inode_field, 0, "Set inode field" },
	{ { "set_super_value", "ssv", NULL }, do_set_super_value, 0, "Set superblock value" },
	{ { "set_block_group", "set_bg", NULL }, do_set_block_group, 0,
	  "Set block group descriptor field" },
	{ { "set_current_time", NULL }, do_set_current_time, 1, "Set current time to use when setting filesystem fields" },
	{ { NULL }, NULL, 0, NULL },
};
