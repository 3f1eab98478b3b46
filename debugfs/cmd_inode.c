/*
 * cmd_inode.c - debug4fs commands about single inodes and block ownership:
 * stat, dump_extents, blocks, bmap, icheck, ncheck.
 *
 * The text output follows debugfs 1.47 byte for byte on well-formed file
 * systems (learnt by running it; see tests/integration/t1300-debug4fs-inode.sh,
 * which diffs the two).  With -j every command prints one JSON document.
 *
 * How the commands see blocks (as debugfs does): block-mapped inodes are
 * walked here, not by the library (raw_map_iterate): every nonzero entry of
 * i_block and of the indirect blocks is listed, a mapping block before what
 * it maps, data block numbers as stored even when they are out of range,
 * and an indirect block outside the file system is listed but not followed.
 * That is also how a fast symlink or a device node without the extent flag
 * is read by "blocks" and "bmap" (the text of "blocks <short symlink>" is
 * its target read as block numbers, exactly like debugfs).  Extent trees go
 * through the library's validated walk.
 *
 * JSON (-j): stat gives the decoded fields, "times" (seconds, nsec, raw,
 * extra, text), "xattrs" (name, value_len, where, value or value_hex) and
 * then one of fast_link_dest / device / inline_data_size / "extents" (kind
 * index|leaf, level, logical, physical, length, unwritten) / "blocks" (kind
 * data|IND|DIND|TIND|translator, logical, physical, count) with "total";
 * dump_extents gives "extents" rows like its table; blocks an array of
 * numbers; bmap {logical, physical, hole, unwritten}; icheck "blocks"
 * [{block, inode|null}]; ncheck "names" [{inode, directory, directory_path,
 * name, path, bad_filetype}].  A command that fails prints no document.
 *
 * Deliberate differences from debugfs 1.47:
 *  - The file system is read-only: "bmap" with a physical block, or "bmap -a"
 *    on a hole, fails with debugfs's own read-only message ("Attempt to write
 *    to filesystem opened read-only while mapping logical block N") and a
 *    nonzero status; nothing is ever allocated.
 *  - Failures are reported and make the command fail where debugfs stays
 *    silent: an extent tree that cannot be walked (debug4fs prints the same
 *    partial listing, then the error), an attribute area that cannot be read
 *    (debugfs just leaves out "Extended attributes:"), a directory ncheck
 *    cannot read, an inode "blocks" cannot read (both print the empty line),
 *    an unreadable indirect block.  The library's extent checks are stricter
 *    than libext2fs's, so a damaged tree may be cut short earlier.
 *  - Errors coming from a library call go through dbg_error(), which adds
 *    the library's description of the failure in parentheses at the end of
 *    debugfs's message (for bmap, before debugfs's empty line).
 *  - "bmap" through an indirect block beyond the end of the file system says
 *    "short read", as debugfs does when that block is past the end of the
 *    device; debugfs would read it if the image were larger than the file
 *    system.
 */
#include "config.h"
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "debug4fs.h"
#include "support/comerr.h"
#include "ext4fs/array.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/namei.h"
#include "ext4fs/xattr.h"

#define OS_HURD 1

/* A visit kind of our own: the Hurd translator block debugfs lists first. */
#define BLOCK_TRANSLATOR ((enum ext4fs_block_kind)100)

/* ------------------------------------------------------------------ helpers */

static uint32_t iblock32(const struct ext4fs_inode *in, unsigned i)
{
	return ext4fs_blockmap_slot_get(in->i_block, i);
}

/* debugfs's parse_ulonglong: strtoull with base 0, the whole word must be used. */
static int parse_num(struct dbg *d, const char *cmd, const char *str, const char *descr,
		     uint64_t *v)
{
	char *end;

	*v = strtoull(str, &end, 0);
	if (*end) {
		fflush(d->out);
		fprintf(stderr, "%s: Bad %s - %s\n", cmd, descr, str);
		return 1;
	}
	return 0;
}

/*
 * "who: <message for err> <context>" for an error found here rather than
 * returned by a library call that just failed (dbg_error() would append the
 * library's description of an older failure).
 */
static void local_error(struct dbg *d, const char *who, int err, const char *context)
{
	sup_com_err(who, err, "%s", context);
}

/* A message with no "who:" prefix (debugfs's com_err(0, 0, ...)). */
static int plain_error(struct dbg *d, const char *msg)
{
	fflush(d->out);
	fprintf(stderr, "%s\n", msg);
	return 1;
}

static void reset_getopt(void)
{
	optind = 0;
	opterr = 1;
}

static int is_large_inode(const struct dbg *d)
{
	return ext4fs_geom(d->fs)->inode_size > EXT4FS_INODE_BASE_SIZE;
}

static int is_hurd(const struct dbg *d)
{
	return ext4fs_sb(d->fs)->s_creator_os == OS_HURD;
}

static unsigned block_bits(const struct dbg *d)
{
	return 10 + ext4fs_geom(d->fs)->log_block_size;
}

/* Decimal digits of v (1 for 0), the column width rule of dump_extents. */
static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static int type_is(uint16_t mode, uint16_t type)
{
	return (mode & EXT4FS_S_IFMT) == type;
}

/* ------------------------------------------------------- block iteration */

/*
 * Block-mapped inodes are walked the way debugfs's block iterator walks
 * them: every nonzero entry of i_block and of the indirect blocks is
 * reported, an indirect block before what it maps; an indirect block outside
 * the file system is reported but not followed (bad_ind is set).  Data
 * block numbers are passed on as stored, even when they are out of range.
 */
struct raw_map {
	struct ext4fs_fs *fs;
	ext4fs_block_visit_fn fn;
	void *arg;
	uint64_t budget;           /* indirect blocks we may still read */
	int bad_ind;
	int err;                   /* a read error (the walk goes on, as debugfs's does) */
	unsigned char *bufs[3];
};

static uint32_t buf32(const unsigned char *b, uint32_t i)
{
	return ext4fs_blockmap_slot_get(b, i);
}

static int ind_out_of_fs(struct ext4fs_fs *fs, uint64_t blk)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);

	return blk >= g->blocks_count || blk < g->first_data_block;
}

static int raw_map_ind(struct raw_map *m, unsigned level, uint64_t blk, uint64_t lblk)
{
	uint32_t per = ext4fs_geom(m->fs)->block_size / 4;
	unsigned char *buf = m->bufs[level - 1];
	uint64_t span = 1;
	int ret;
	struct ext4fs_block_visit v = {
		.kind = (enum ext4fs_block_kind)(EXT4FS_BLOCK_IND + level - 1),
		.pblk = blk, .lblk = lblk, .count = 1,
	};

	ret = m->fn(&v, m->arg);
	if (ret)
		return ret;
	if (ind_out_of_fs(m->fs, blk)) {
		m->bad_ind = 1;
		return 0;
	}
	if (m->budget == 0) {
		m->bad_ind = 1;
		return 0;
	}
	m->budget--;
	ret = ext4fs_block_read(m->fs, blk, buf);
	if (ret) {
		if (!m->err)
			m->err = ret;
		return 0;
	}
	for (unsigned l = 1; l < level; l++)
		span *= per;
	for (uint32_t i = 0; i < per; i++) {
		uint64_t child = buf32(buf, i);
		if (!child)
			continue;
		if (level > 1) {
			ret = raw_map_ind(m, level - 1, child, lblk + i * span);
		} else {
			struct ext4fs_block_visit dv = {
				.kind = EXT4FS_BLOCK_DATA, .pblk = child, .lblk = lblk + i, .count = 1,
			};
			ret = m->fn(&dv, m->arg);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* Returns what fn returned (nonzero stops), or a read error; *bad_ind as above. */
static int raw_map_iterate(struct ext4fs_fs *fs, const struct ext4fs_inode *in,
			   ext4fs_block_visit_fn fn, void *arg, int *bad_ind)
{
	struct raw_map m = { .fs = fs, .fn = fn, .arg = arg,
			     .budget = ext4fs_geom(fs)->blocks_count };
	uint32_t per = ext4fs_geom(fs)->block_size / 4;
	uint64_t lblk = EXT4FS_NDIR_BLOCKS, span = 1;
	int ret = 0;

	for (unsigned i = 0; i < 3; i++) {
		m.bufs[i] = malloc(ext4fs_geom(fs)->block_size);
		if (!m.bufs[i]) {
			ret = EXT4FS_E_NO_MEMORY;
			goto out;
		}
	}
	for (unsigned i = 0; i < EXT4FS_NDIR_BLOCKS && !ret; i++) {
		struct ext4fs_block_visit v = { .kind = EXT4FS_BLOCK_DATA, .pblk = iblock32(in, i),
						.lblk = i, .count = 1 };
		if (v.pblk)
			ret = fn(&v, arg);
	}
	for (unsigned level = 1; level <= 3 && !ret; level++) {
		uint64_t blk = iblock32(in, EXT4FS_IND_BLOCK + level - 1);
		span *= per;
		if (blk)
			ret = raw_map_ind(&m, level, blk, lblk);
		lblk += span;
	}
	if (!ret)
		ret = m.err;
out:
	for (unsigned i = 0; i < 3; i++)
		free(m.bufs[i]);
	if (bad_ind)
		*bad_ind = m.bad_ind;
	return ret;
}

/*
 * Logical block lblk of a block-mapped inode, as libext2fs maps it: the
 * indirect blocks on the way are read without a range check, so one past
 * the end of the file system fails like a read past the end of the device.
 */
static int raw_map_bmap(struct ext4fs_fs *fs, const struct ext4fs_inode *in, uint64_t lblk,
			uint64_t *pblk)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	uint64_t per = g->block_size / 4, base = EXT4FS_NDIR_BLOCKS, span = 1, blk, off;
	unsigned level;
	unsigned char *buf;
	int err = 0;

	*pblk = 0;
	if (lblk < EXT4FS_NDIR_BLOCKS) {
		*pblk = iblock32(in, (unsigned)lblk);
		return 0;
	}
	for (level = 1; level <= 3; level++) {
		span *= per;
		if (lblk < base + span)
			break;
		base += span;
	}
	if (level > 3)
		return EXT4FS_E_FILE_TOO_BIG;
	blk = iblock32(in, EXT4FS_IND_BLOCK + level - 1);
	off = lblk - base;
	buf = malloc(g->block_size);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	for (; level > 0 && blk; level--) {
		span /= per;
		if (blk >= g->blocks_count) {
			err = EXT4FS_E_SHORT_READ;
			break;
		}
		err = ext4fs_block_read(fs, blk, buf);
		if (err)
			break;
		blk = buf32(buf, (uint32_t)(off / span));
		off %= span;
	}
	free(buf);
	if (!err)
		*pblk = blk;
	return err;
}

struct extent_adapter {
	ext4fs_block_visit_fn fn;
	void *arg;
};

static int extent_adapter_visit(const struct ext4fs_extent_visit *e, void *arg)
{
	struct extent_adapter *a = arg;
	struct ext4fs_block_visit v = { 0 };

	v.pblk = e->pblk;
	v.lblk = e->lblk;
	if (e->is_leaf) {
		v.kind = EXT4FS_BLOCK_DATA;
		v.count = e->len;
		v.unwritten = e->unwritten;
	} else {
		v.kind = EXT4FS_BLOCK_EXTENT_NODE;
		v.count = 1;
	}
	return a->fn(&v, a->arg);
}

/*
 * Every block of the inode, mapping blocks before what they map, as
 * debugfs's block iterator visits them.  Inline-data inodes have none.
 * Extent trees go through the library's validated walk; block maps through
 * raw_map_iterate() (see there; *bad_ind may be NULL).
 */
static int iterate_blocks(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in,
			  ext4fs_block_visit_fn fn, void *arg, int *bad_ind)
{
	if (bad_ind)
		*bad_ind = 0;
	if (in->i_flags & EXT4FS_INLINE_DATA_FL)
		return 0;
	if (is_hurd(d) && in->i_version_lo) {
		struct ext4fs_block_visit v = { .kind = BLOCK_TRANSLATOR, .pblk = in->i_version_lo,
						.count = 1 };
		int ret = fn(&v, arg);
		if (ret)
			return ret;
	}
	if (in->i_flags & EXT4FS_EXTENTS_FL) {
		struct extent_adapter a = { fn, arg };
		return ext4fs_extent_walk(d->fs, ino, in, extent_adapter_visit, &a);
	}
	return raw_map_iterate(d->fs, in, fn, arg, bad_ind);
}

/* ext2fs_inode_has_valid_blocks2(): does icheck look at the inode's blocks? */
static int has_valid_blocks(struct dbg *d, const struct ext4fs_inode *in)
{
	if (!EXT4FS_ISDIR(in->i_mode) && !EXT4FS_ISREG(in->i_mode) && !EXT4FS_ISLNK(in->i_mode))
		return 0;
	if (EXT4FS_ISLNK(in->i_mode)) {
		if (ext4fs_inode_file_acl(d->fs, in) == 0) {
			if (in->i_blocks_lo == 0 && in->i_blocks_high == 0)
				return 0;
		} else {
			if (in->i_size_lo >= EXT4FS_N_BLOCKS * 4)
				return 1;
			if (in->i_size_lo > 4 && iblock32(in, 1) == 0)
				return 1;
			return 0;
		}
	}
	if (in->i_flags & EXT4FS_INLINE_DATA_FL)
		return 0;
	return 1;
}

/* ----------------------------------------------------------- inode scan */

typedef int (*scan_fn)(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in, void *arg);

/*
 * Visit the inodes debugfs's inode scan returns: every inode of every group,
 * except (with group descriptor checksums) INODE_UNINIT groups and the
 * itable_unused tail.  fn returns 0 to go on, positive to stop, negative
 * for an error.  who names the command in the scan error message.
 */
static int scan_inodes(struct dbg *d, const char *who, scan_fn fn, void *arg)
{
	struct ext4fs_fs *fs = d->fs;
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	int lazy = g->has_metadata_csum || g->has_gdt_csum;
	int strict = !(ext4fs_fs_flags(fs) & EXT4FS_OPEN_IGNORE_CSUM);
	uint32_t per_block = g->block_size / g->inode_size;
	unsigned char *buf = NULL;
	uint64_t chunk = 64;        /* inode table blocks per read */
	int ret = 0;

	buf = malloc(chunk * g->block_size);
	if (!buf) {
		local_error(d, who, EXT4FS_E_NO_MEMORY, "while doing inode scan");
		return -1;
	}
	for (uint32_t grp = 0; grp < g->group_count && !ret; grp++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(fs, grp);
		uint32_t count = g->inodes_per_group;

		if (lazy) {
			if (gd->flags & EXT4FS_BG_INODE_UNINIT)
				continue;
			count = gd->itable_unused < count ? count - gd->itable_unused : 0;
		}
		for (uint32_t first = 0; first < count && !ret;) {
			uint64_t blk = first / per_block;
			uint64_t nblk = (count - first + per_block - 1) / per_block;
			if (nblk > chunk)
				nblk = chunk;
			int err = ext4fs_blocks_read(fs, gd->inode_table + blk, nblk, buf);
			if (err) {
				dbg_error(d, who, err, "while doing inode scan");
				ret = -1;
				break;
			}
			uint32_t n = (uint32_t)(nblk * per_block);
			if (n > count - first)
				n = count - first;
			for (uint32_t i = 0; i < n && !ret; i++) {
				uint32_t ino = grp * g->inodes_per_group + first + i + 1;
				const unsigned char *raw = buf + (size_t)i * g->inode_size;
				struct ext4fs_inode in;

				if (ino > g->inodes_count)
					break;
				if (strict && !ext4fs_inode_csum_ok(fs, ino, raw)) {
					local_error(d, who, EXT4FS_E_INODE_CSUM, "while doing inode scan");
					ret = -1;
					break;
				}
				ext4fs_inode_decode(&in, raw, g->inode_size);
				ret = fn(d, ino, &in, arg);
			}
			first += n;
		}
	}
	free(buf);
	return ret < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ stat */

static const char *type_name(uint16_t mode)
{
	switch (mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFDIR: return "directory";
	case EXT4FS_S_IFREG: return "regular";
	case EXT4FS_S_IFLNK: return "symlink";
	case EXT4FS_S_IFBLK: return "block special";
	case EXT4FS_S_IFCHR: return "character special";
	case EXT4FS_S_IFIFO: return "FIFO";
	case EXT4FS_S_IFSOCK: return "socket";
	default: return "bad type";
	}
}

/* Seconds since the epoch from a 32-bit field and the epoch bits of its _extra. */
static int64_t decode_time(uint32_t secs, uint32_t extra, int use_extra)
{
	int64_t t = (int32_t)secs;

	if (use_extra)
		t += (int64_t)(extra & 3) << 32;
	return t;
}

/* -- attribute values, printed as debugfs does -- */

static int is_printable(unsigned char c)
{
	return c < 0x80 && isprint(c);
}

static void print_xattr_bytes(FILE *f, const unsigned char *s, size_t len, int quotes)
{
	size_t printable = 0;

	for (size_t i = 0; i < len; i++)
		if (is_printable(s[i]))
			printable++;
	if (printable <= len * 7 / 8) {
		for (size_t i = 0; i < len; i++)
			fprintf(f, "%02x ", s[i]);
		return;
	}
	if (quotes)
		fputc('"', f);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		const char *esc = NULL;

		switch (c) {
		case '\a': esc = "\\a"; break;
		case '\b': esc = "\\b"; break;
		case '\t': esc = "\\t"; break;
		case '\n': esc = "\\n"; break;
		case '\v': esc = "\\v"; break;
		case '\f': esc = "\\f"; break;
		case '"': esc = "\\\""; break;
		case '\'': esc = "\\'"; break;
		case '\\': esc = "\\\\"; break;
		}
		if (esc)
			fputs(esc, f);
		else if (is_printable(c))
			fputc(c, f);
		else
			fprintf(f, "\\%03o", c);
	}
	if (quotes)
		fputc('"', f);
}

struct xattr_item {
	char *name;
	unsigned char *value;    /* NULL when not read */
	uint32_t len;
	int in_block;
	uint32_t value_inum;
};

struct xattr_list {
	struct xattr_item *items;
	size_t n, cap;
};

static void xattr_list_free(struct xattr_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].name);
		free(l->items[i].value);
	}
	free(l->items);
	memset(l, 0, sizeof(*l));
}

static int xattr_collect(const struct ext4fs_xattr *x, void *arg)
{
	struct xattr_list *l = arg;
	struct xattr_item *it;

	if (l->n == l->cap) {
		struct xattr_item *p = ext4fs_array_grow(l->items, &l->cap, l->n + 1, sizeof(*p), 8);
		if (!p)
			return EXT4FS_E_NO_MEMORY;
		l->items = p;
	}
	it = &l->items[l->n];
	memset(it, 0, sizeof(*it));
	it->name = strdup(x->name);
	if (!it->name)
		return EXT4FS_E_NO_MEMORY;
	it->len = x->value_len;
	it->in_block = x->where == EXT4FS_XATTR_IN_BLOCK;
	it->value_inum = x->value_inum;
	if (x->value) {
		it->value = malloc(x->value_len ? x->value_len : 1);
		if (!it->value) {
			free(it->name);
			return EXT4FS_E_NO_MEMORY;
		}
		memcpy(it->value, x->value, x->value_len);
	}
	l->n++;
	return 0;
}

static int read_xattrs(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in,
		       struct xattr_list *l)
{
	unsigned flags = 0;
	uint32_t isize = ext4fs_geom(d->fs)->inode_size;
	int err;

	/*
	 * Like libext2fs, look for in-inode attributes only when the inode has
	 * room for the magic after i_extra_isize.
	 */
	if (isize <= EXT4FS_INODE_BASE_SIZE || in->i_extra_isize < 2 ||
	    isize <= EXT4FS_INODE_BASE_SIZE + (uint32_t)in->i_extra_isize + 4)
		flags |= EXT4FS_XATTR_ITER_NO_INODE;
	err = ext4fs_xattr_iterate(d->fs, ino, in, flags, xattr_collect, l);
	if (err)
		xattr_list_free(l);
	return err;
}

/* -- stat's block listings -- */

struct list_blocks {
	FILE *f;
	struct json *j;
	uint64_t total;
	int first;
	int have;                  /* a range is open */
	uint64_t first_blk, last_blk, first_lblk, last_lblk;
};

static void lb_sep(struct list_blocks *lb)
{
	if (lb->first)
		lb->first = 0;
	else
		fputs(", ", lb->f);
}

static void lb_finish(struct list_blocks *lb)
{
	if (!lb->have)
		return;
	lb->have = 0;
	if (lb->j) {
		json_object_begin(lb->j, NULL);
		json_string(lb->j, "kind", "data");
		json_uint(lb->j, "logical", lb->first_lblk);
		json_uint(lb->j, "physical", lb->first_blk);
		json_uint(lb->j, "count", lb->last_blk - lb->first_blk + 1);
		json_object_end(lb->j);
		return;
	}
	lb_sep(lb);
	if (lb->first_blk == lb->last_blk)
		fprintf(lb->f, "(%" PRIu64 "):%" PRIu64, lb->first_lblk, lb->first_blk);
	else
		fprintf(lb->f, "(%" PRIu64 "-%" PRIu64 "):%" PRIu64 "-%" PRIu64, lb->first_lblk,
			lb->last_lblk, lb->first_blk, lb->last_blk);
}

static int lb_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct list_blocks *lb = arg;
	static const char *const names[] = { "data", "IND", "DIND", "TIND", "ETB" };

	lb->total += v->count;
	if (v->kind == EXT4FS_BLOCK_DATA) {
		if (lb->have && lb->last_blk + 1 == v->pblk && lb->last_lblk + 1 == v->lblk) {
			lb->last_blk += v->count;
			lb->last_lblk += v->count;
			return 0;
		}
		lb_finish(lb);
		lb->have = 1;
		lb->first_blk = v->pblk;
		lb->last_blk = v->pblk + v->count - 1;
		lb->first_lblk = v->lblk;
		lb->last_lblk = v->lblk + v->count - 1;
		return 0;
	}
	lb_finish(lb);
	if (v->kind == BLOCK_TRANSLATOR) {
		if (lb->j) {
			json_object_begin(lb->j, NULL);
			json_string(lb->j, "kind", "translator");
			json_uint(lb->j, "physical", v->pblk);
			json_object_end(lb->j);
		} else {
			lb_sep(lb);     /* debugfs prints no label for it */
		}
		return 0;
	}
	if (lb->j) {
		json_object_begin(lb->j, NULL);
		json_string(lb->j, "kind", names[v->kind]);
		json_uint(lb->j, "physical", v->pblk);
		json_object_end(lb->j);
		return 0;
	}
	lb_sep(lb);
	fprintf(lb->f, "(%s):%" PRIu64, names[v->kind], v->pblk);
	return 0;
}

/* BLOCKS: list of a block-mapped inode. */
static int stat_blocks(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in, struct json *j)
{
	struct list_blocks lb = { .f = d->out, .j = j, .first = 1 };
	int err;

	if (j)
		json_array_begin(j, "blocks");
	else
		fputs("BLOCKS:\n", d->out);
	err = iterate_blocks(d, ino, in, lb_visit, &lb, NULL);
	lb_finish(&lb);
	if (j) {
		json_array_end(j);
		json_uint(j, "total", lb.total);
	} else {
		if (lb.total)
			fprintf(d->out, "\nTOTAL: %" PRIu64 "\n", lb.total);
		fputc('\n', d->out);
	}
	return err;
}

/* Root header check as libext2fs's extent open does it (root of 60 bytes). */
static int extent_root_ok(const struct ext4fs_inode *in)
{
	struct ext4fs_extent_header h;

	ext4fs_extent_node_header(in->i_block, &h);
	return h.magic == EXT4FS_EXTENT_MAGIC && h.entries <= h.max && h.max <= 4 && h.max >= 2 &&
	       h.depth <= EXT4FS_EXTENT_MAX_DEPTH;
}

/* One entry as debugfs's extent handle shows it (index lengths run to the next entry). */
struct extent_row {
	unsigned level, max_level, entry, entries, max_entries;
	int is_leaf, unwritten;
	uint64_t lblk, pblk;
	uint32_t len;
};

struct extent_list {
	struct dbg *d;
	uint64_t ends[EXT4FS_EXTENT_MAX_DEPTH + 2];
	int (*fn)(const struct extent_row *r, void *arg);
	void *arg;
};

static int extent_list_visit(const struct ext4fs_extent_visit *v, void *arg)
{
	struct extent_list *el = arg;
	struct extent_row r = {
		.level = v->level, .max_level = v->max_level, .entry = v->entry + 1,
		.entries = v->entries, .max_entries = v->max_entries, .is_leaf = v->is_leaf,
		.unwritten = v->unwritten, .lblk = v->lblk, .pblk = v->pblk,
	};

	if (v->is_leaf) {
		r.len = v->len;
	} else {
		uint64_t end = v->entry + 1 < v->entries ? v->range_end : el->ends[v->level];
		r.len = (uint32_t)(end - v->lblk);
		if (v->level + 1 < sizeof(el->ends) / sizeof(el->ends[0]))
			el->ends[v->level + 1] = end;
	}
	return el->fn(&r, el->arg);
}

static int walk_extent_rows(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in,
			    int (*fn)(const struct extent_row *, void *), void *arg)
{
	struct extent_list el = { .d = d, .fn = fn, .arg = arg };
	uint64_t bs = ext4fs_geom(d->fs)->block_size;

	el.ends[0] = (ext4fs_inode_size(in) + bs - 1) >> block_bits(d);
	return ext4fs_extent_walk(d->fs, ino, in, extent_list_visit, &el);
}

struct stat_extents {
	FILE *f;
	struct json *j;
	int printed;
};

static int stat_extent_row(const struct extent_row *r, void *arg)
{
	struct stat_extents *se = arg;

	if (se->j) {
		json_object_begin(se->j, NULL);
		json_string(se->j, "kind", r->is_leaf ? "leaf" : "index");
		json_uint(se->j, "level", r->level);
		json_uint(se->j, "logical", r->lblk);
		json_uint(se->j, "physical", r->pblk);
		if (r->is_leaf) {
			json_uint(se->j, "length", r->len);
			json_bool(se->j, "unwritten", r->unwritten);
		}
		json_object_end(se->j);
		return 0;
	}
	if (!r->is_leaf) {
		fprintf(se->f, "%s(ETB%u):%" PRIu64, se->printed ? ", " : "", r->level, r->pblk);
		se->printed = 1;
		return 0;
	}
	if (r->len == 0)
		return 0;
	if (r->len == 1)
		fprintf(se->f, "%s(%" PRIu64 "%s):%" PRIu64, se->printed ? ", " : "", r->lblk,
			r->unwritten ? "[u]" : "", r->pblk);
	else
		fprintf(se->f, "%s(%" PRIu64 "-%" PRIu64 "%s):%" PRIu64 "-%" PRIu64,
			se->printed ? ", " : "", r->lblk, r->lblk + (r->len - 1),
			r->unwritten ? "[u]" : "", r->pblk, r->pblk + (r->len - 1));
	se->printed = 1;
	return 0;
}

static int stat_extents(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in, struct json *j)
{
	struct stat_extents se = { d->out, j, 0 };
	int err;

	if (!extent_root_ok(in))
		return 1;    /* debugfs prints nothing at all; the caller complains */
	if (j)
		json_array_begin(j, "extents");
	else
		fputs("EXTENTS:\n", d->out);
	err = walk_extent_rows(d, ino, in, stat_extent_row, &se);
	if (j)
		json_array_end(j);
	else if (se.printed)
		fputc('\n', d->out);
	return err;
}

/* -- stat itself -- */

struct stat_time {
	const char *label;
	uint32_t raw, extra;
	int64_t t;
};

static void json_time(struct json *j, const char *key, const struct stat_time *st, int extra)
{
	char buf[64];

	json_object_begin(j, key);
	json_int(j, "seconds", st->t);
	if (extra)
		json_uint(j, "nsec", st->extra >> 2);
	json_uint(j, "raw", st->raw);
	if (extra)
		json_uint(j, "extra", st->extra);
	json_string(j, "text", sup_time_str(st->t, buf, sizeof(buf)));
	json_object_end(j);
}

static void json_xattr_value(struct json *j, const struct xattr_item *it)
{
	size_t printable = 0;
	char *hex;

	if (!it->value) {
		json_null(j, "value");
		return;
	}
	for (size_t i = 0; i < it->len; i++)
		if (is_printable(it->value[i]))
			printable++;
	if (printable > (size_t)it->len * 7 / 8) {
		json_string_len(j, "value", (const char *)it->value, it->len);
		return;
	}
	hex = malloc((size_t)it->len * 2 + 1);
	if (!hex) {
		json_null(j, "value_hex");
		return;
	}
	for (size_t i = 0; i < it->len; i++)
		snprintf(hex + 2 * i, 3, "%02x", it->value[i]);
	hex[(size_t)it->len * 2] = '\0';
	json_string(j, "value_hex", hex);
	free(hex);
}

static int do_stat(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_fs *fs = d->fs;
	const struct ext4fs_geom *g;
	struct ext4fs_inode in;
	unsigned char *raw = NULL;
	struct xattr_list xl = { 0 };
	struct json jj, *j = NULL;
	FILE *f = d->out;
	uint32_t ino;
	int large, ext_times, err = 0, xerr = 0, rc = 0;
	char tbuf[64];

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (dbg_read_inode(d, argv[0], ino, &in))
		return 1;
	g = ext4fs_geom(fs);
	raw = malloc(g->inode_size);
	if (!raw) {
		local_error(d, argv[0], EXT4FS_E_NO_MEMORY, "while reading inode");
		return 1;
	}
	err = ext4fs_inode_read_raw(fs, ino, raw);
	if (err) {
		dbg_error(d, argv[0], err, "while reading inode %u", ino);
		free(raw);
		return 1;
	}
	large = is_large_inode(d);
	ext_times = large && in.i_extra_isize >= 24;
	int extra_ok = !large || in.i_extra_isize <= g->inode_size - EXT4FS_INODE_BASE_SIZE;
	xerr = read_xattrs(d, ino, &in, &xl);

	uint32_t uid = ext4fs_inode_uid(&in), gid = ext4fs_inode_gid(&in);
	uint64_t blocks = ext4fs_inode_blocks_raw(fs, &in);
	uint64_t acl = ext4fs_inode_file_acl(fs, &in);
	uint8_t frag = 0, fsize = 0;
	if (is_hurd(d)) {
		frag = raw[0x74];
		fsize = raw[0x75];
		blocks = in.i_blocks_lo;
	}
	struct stat_time times[5] = {
		{ " ctime", in.i_ctime, in.i_ctime_extra, 0 },
		{ " atime", in.i_atime, in.i_atime_extra, 0 },
		{ " mtime", in.i_mtime, in.i_mtime_extra, 0 },
		{ "crtime", in.i_crtime, in.i_crtime_extra, 0 },
		{ " dtime", in.i_dtime, in.i_ctime_extra, 0 },
	};
	for (int i = 0; i < 5; i++)
		times[i].t = decode_time(times[i].raw, times[i].extra, ext_times);
	uint32_t csum = in.i_checksum_lo;
	if (large && in.i_extra_isize >= 2)
		csum |= (uint32_t)ext4fs_inode_raw_get16(raw, EXT4FS_INODE_OFF_CHECKSUM_HI) << 16;
	int has_csum = ext4fs_has_ro_compat(fs, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	int fast_link = EXT4FS_ISLNK(in.i_mode) && ext4fs_inode_size(&in) > 0 &&
			ext4fs_inode_size(&in) < sizeof(in.i_block);

	if (d->json) {
		j = &jj;
		json_init(j, f);
		json_object_begin(j, NULL);
		json_uint(j, "inode", ino);
		json_string(j, "type", type_name(in.i_mode));
		json_uint(j, "mode", in.i_mode);
		json_uint(j, "flags", in.i_flags);
		json_uint(j, "generation", in.i_generation);
		json_uint(j, "version", ext_times ? ((uint64_t)in.i_version_hi << 32) | in.i_version_lo
						  : in.i_version_lo);
		json_int(j, "uid", (int32_t)uid);
		json_int(j, "gid", (int32_t)gid);
		if (large && in.i_extra_isize >= 32)
			json_uint(j, "project", in.i_projid);
		json_uint(j, "size", ext4fs_inode_size(&in));
		json_uint(j, "file_acl", acl);
		if (is_hurd(d))
			json_uint(j, "translator", in.i_version_lo);
		json_uint(j, "links", in.i_links_count);
		json_uint(j, "blockcount", blocks);
		json_object_begin(j, "fragment");
		json_uint(j, "address", in.i_faddr);
		json_uint(j, "number", frag);
		json_uint(j, "size", fsize);
		json_object_end(j);
		json_object_begin(j, "times");
		json_time(j, "ctime", &times[0], ext_times);
		json_time(j, "atime", &times[1], ext_times);
		json_time(j, "mtime", &times[2], ext_times);
		if (ext_times)
			json_time(j, "crtime", &times[3], 1);
		if (in.i_dtime)
			json_time(j, "dtime", &times[4], ext_times);
		json_object_end(j);
		if (large)
			json_uint(j, "extra_isize", in.i_extra_isize);
		if (!xerr) {
			json_array_begin(j, "xattrs");
			for (size_t i = 0; i < xl.n; i++) {
				json_object_begin(j, NULL);
				json_string(j, "name", xl.items[i].name);
				json_uint(j, "value_len", xl.items[i].len);
				json_string(j, "where", xl.items[i].in_block ? "block" : "inode");
				if (xl.items[i].value_inum)
					json_uint(j, "value_inode", xl.items[i].value_inum);
				json_xattr_value(j, &xl.items[i]);
				json_object_end(j);
			}
			json_array_end(j);
		}
		if (has_csum)
			json_uint(j, "checksum", csum);
	} else {
		fprintf(f, "Inode: %u   Type: %s    Mode:  0%03o   Flags: 0x%x\n", ino,
			type_name(in.i_mode), in.i_mode & 07777, in.i_flags);
		if (ext_times)
			fprintf(f, "Generation: %u    Version: 0x%08x:%08x\n", in.i_generation,
				in.i_version_hi, in.i_version_lo);
		else
			fprintf(f, "Generation: %u    Version: 0x%08x\n", in.i_generation,
				in.i_version_lo);
		fprintf(f, "User: %5d   Group: %5d", (int32_t)uid, (int32_t)gid);
		if (large && in.i_extra_isize >= 32)
			fprintf(f, "   Project: %5d", (int32_t)in.i_projid);
		fprintf(f, "   Size: %" PRIu64 "\n", ext4fs_inode_size(&in));
		if (is_hurd(d))
			fprintf(f, "File ACL: %d Translator: %d\n", (int32_t)in.i_file_acl_lo,
				(int32_t)in.i_version_lo);
		else
			fprintf(f, "File ACL: %" PRIu64 "\n", acl);
		fprintf(f, "Links: %u   Blockcount: %" PRIu64 "\n", in.i_links_count, blocks);
		fprintf(f, "Fragment:  Address: %u    Number: %u    Size: %u\n", in.i_faddr, frag,
			fsize);
		for (int i = 0; i < 5; i++) {
			const struct stat_time *st = &times[i];
			if (i == 3 && !ext_times)
				continue;
			if (i == 4 && !in.i_dtime)
				continue;
			sup_time_str(st->t, tbuf, sizeof(tbuf));
			if (!ext_times)
				fprintf(f, "%s: 0x%08x -- %s\n", st->label + 1, st->raw, tbuf);
			else if (i == 4)
				fprintf(f, "%s: 0x%08x:(%08x) -- %s\n", st->label, st->raw, st->extra, tbuf);
			else
				fprintf(f, "%s: 0x%08x:%08x -- %s\n", st->label, st->raw, st->extra, tbuf);
		}
		if (large) {
			fprintf(f, "Size of extra inode fields: %u\n", in.i_extra_isize);
			if (!extra_ok) {
				fflush(f);
				fprintf(stderr, "invalid inode->i_extra_isize (%u)\n", in.i_extra_isize);
			}
		}
		if (!xerr && xl.n) {
			fputs("Extended attributes:\n", f);
			for (size_t i = 0; i < xl.n; i++) {
				const struct xattr_item *it = &xl.items[i];
				fputs("  ", f);
				print_xattr_bytes(f, (const unsigned char *)it->name, strlen(it->name), 0);
				fprintf(f, " (%u)", it->len);
				if (it->len && it->len < 40 && it->value && strcmp(it->name, "system.data")) {
					fputs(" = ", f);
					print_xattr_bytes(f, it->value, it->len, 1);
				}
				fputc('\n', f);
			}
		}
		if (has_csum)
			fprintf(f, "Inode checksum: 0x%08x\n", csum);
	}

	if (fast_link) {
		size_t size = (size_t)ext4fs_inode_size(&in);
		size_t n = strnlen((const char *)in.i_block, size);
		if (j)
			json_string_len(j, "fast_link_dest", (const char *)in.i_block, n);
		else
			fprintf(f, "Fast link dest: \"%.*s\"\n", (int)n, (const char *)in.i_block);
	} else if (EXT4FS_ISLNK(in.i_mode) && (in.i_flags & EXT4FS_INLINE_DATA_FL)) {
		unsigned char *data = NULL;
		size_t len = 0;
		err = ext4fs_inline_data_read(fs, ino, &in, &data, &len);
		if (!err) {
			size_t n = strnlen((const char *)data, len);
			if (j)
				json_string_len(j, "fast_link_dest", (const char *)data, n);
			else
				fprintf(f, "Fast link dest: \"%.*s\"\n", (int)n, (const char *)data);
		}
		free(data);
	} else if (type_is(in.i_mode, EXT4FS_S_IFCHR) || type_is(in.i_mode, EXT4FS_S_IFBLK)) {
		unsigned major, minor;
		int new_style = iblock32(&in, 0) == 0;
		if (!new_style) {
			major = (iblock32(&in, 0) >> 8) & 255;
			minor = iblock32(&in, 0) & 255;
		} else {
			uint32_t b1 = iblock32(&in, 1);
			major = (b1 & 0xfff00) >> 8;
			minor = (b1 & 0xff) | ((b1 >> 12) & 0xfff00);
		}
		if (j) {
			json_object_begin(j, "device");
			json_uint(j, "major", major);
			json_uint(j, "minor", minor);
			json_bool(j, "new_style", new_style);
			json_object_end(j);
		} else {
			fprintf(f, "%sDevice major/minor number: %02d:%02d (hex %02x:%02x)\n",
				new_style ? "(New-style) " : "", major, minor, major, minor);
		}
	} else if (in.i_flags & EXT4FS_EXTENTS_FL) {
		err = stat_extents(d, ino, &in, j);
	} else if (in.i_flags & EXT4FS_INLINE_DATA_FL) {
		unsigned char *data = NULL;
		size_t len = 0;
		err = ext4fs_inline_data_read(fs, ino, &in, &data, &len);
		if (!err) {
			if (j)
				json_uint(j, "inline_data_size", len);
			else
				fprintf(f, "Size of inline data: %zu\n", len);
		}
		free(data);
	} else {
		err = stat_blocks(d, ino, &in, j);
	}

	if (j) {
		json_object_end(j);
		json_finish(j);
	}
	if (xerr) {
		dbg_error(d, argv[0], xerr, "while reading extended attributes of inode %u", ino);
		rc = 1;
	}
	if (err == 1) {
		local_error(d, argv[0], EXT4FS_E_EXTENT_HEADER, "in the inode");
		rc = 1;
	} else if (err) {
		dbg_error(d, argv[0], err, "while listing the blocks of inode %u", ino);
		rc = 1;
	}
	xattr_list_free(&xl);
	free(raw);
	return rc;
}

/* --------------------------------------------------------- dump_extents */

#define DUMP_LEAF 1
#define DUMP_NODE 2

struct ex_table {
	struct dbg *d;
	struct json *j;
	unsigned flags;
	int lw, pw;
};

static int ex_row(const struct extent_row *r, void *arg)
{
	struct ex_table *t = arg;
	FILE *f = t->d->out;

	if (!(t->flags & (r->is_leaf ? DUMP_LEAF : DUMP_NODE)))
		return 0;
	if (t->j) {
		json_object_begin(t->j, NULL);
		json_uint(t->j, "level", r->level);
		json_uint(t->j, "max_level", r->max_level);
		json_uint(t->j, "entry", r->entry);
		json_uint(t->j, "entries", r->entries);
		json_uint(t->j, "max_entries", r->max_entries);
		json_string(t->j, "kind", r->is_leaf ? "leaf" : "index");
		json_uint(t->j, "logical", r->lblk);
		json_uint(t->j, "length", r->len);
		json_uint(t->j, "physical", r->pblk);
		if (r->is_leaf)
			json_bool(t->j, "unwritten", r->unwritten);
		json_object_end(t->j);
		return 0;
	}
	fprintf(f, "%2u/%2u %3u/%3u ", r->level, r->max_level, r->entry, r->entries);
	if (!r->is_leaf) {
		fprintf(f, "%*" PRIu64 " - %*" PRIu64 " %*" PRIu64 "%*s %6u\n", t->lw, r->lblk, t->lw,
			r->lblk + (uint32_t)(r->len - 1), t->pw, r->pblk, t->pw + 3, "", r->len);
		return 0;
	}
	fprintf(f, "%*" PRIu64 " - %*" PRIu64 " %*" PRIu64 " - %*" PRIu64 " %6u %s\n", t->lw,
		r->lblk, t->lw, r->lblk + (uint32_t)(r->len - 1), t->pw, r->pblk, t->pw,
		r->pblk + (uint32_t)(r->len - 1), r->len, r->unwritten ? "Uninit" : "");
	return 0;
}

static int do_dump_extents(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	struct ex_table t = { .d = d };
	struct json jj;
	unsigned flags = 0;
	uint32_t ino;
	int c, err;

	reset_getopt();
	fflush(d->out);
	while ((c = getopt(argc, argv, "nl")) != -1) {
		switch (c) {
		case 'n': flags |= DUMP_NODE; break;
		case 'l': flags |= DUMP_LEAF; break;
		default: break;    /* debugfs goes on after getopt's complaint */
		}
	}
	if (argc != optind + 1)
		return plain_error(d, "Usage: dump_extents [-n] [-l] file");
	if (!flags)
		flags = DUMP_NODE | DUMP_LEAF;
	if (dbg_parse_inode(d, argv[optind], &ino))
		return 1;
	if (dbg_read_inode(d, argv[0], ino, &in))
		return 1;
	if (!(in.i_flags & EXT4FS_EXTENTS_FL)) {
		fflush(d->out);
		fprintf(stderr, "%s: does not uses extent block maps\n", argv[optind]);
		return 1;
	}
	uint64_t bs = ext4fs_geom(d->fs)->block_size;
	t.flags = flags;
	t.lw = digits((ext4fs_inode_size(&in) + bs - 1) / bs);
	t.pw = digits(ext4fs_geom(d->fs)->blocks_count);
	if (t.lw < 5)
		t.lw = 5;
	if (t.pw < 5)
		t.pw = 5;
	if (!extent_root_ok(&in)) {
		local_error(d, argv[0], EXT4FS_E_EXTENT_HEADER, "in the inode");
		return 1;
	}
	if (d->json) {
		t.j = &jj;
		json_init(t.j, d->out);
		json_object_begin(t.j, NULL);
		json_uint(t.j, "inode", ino);
		struct ext4fs_extent_header root;
		ext4fs_extent_node_header(in.i_block, &root);
		json_uint(t.j, "depth", root.depth);
		json_array_begin(t.j, "extents");
	} else {
		fprintf(d->out, "Level Entries %*s %*s Length Flags\n", t.lw * 2 + 3, "Logical",
			t.pw * 2 + 3, "Physical");
	}
	err = walk_extent_rows(d, ino, &in, ex_row, &t);
	if (t.j) {
		json_array_end(t.j);
		json_object_end(t.j);
		json_finish(t.j);
	}
	if (err) {
		dbg_error(d, argv[0], err, "while reading the extent tree of inode %u", ino);
		return 1;
	}
	return 0;
}

/* --------------------------------------------------------------- blocks */

struct blocks_out {
	FILE *f;
	struct json *j;
};

static int blocks_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct blocks_out *b = arg;

	for (uint32_t i = 0; i < v->count; i++) {
		if (b->j)
			json_uint(b->j, NULL, v->pblk + i);
		else
			fprintf(b->f, "%" PRIu64 " ", v->pblk + i);
	}
	return 0;
}

static int do_blocks(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	struct blocks_out b = { d->out, NULL };
	struct json jj;
	uint32_t ino;
	int err;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	err = ext4fs_inode_read(d->fs, ino, &in);
	if (err) {
		if (!d->json)
			fputc('\n', d->out);    /* debugfs's empty block list */
		dbg_error(d, argv[0], err, "while reading inode %u", ino);
		return 1;
	}
	if (d->json) {
		b.j = &jj;
		json_init(b.j, d->out);
		json_object_begin(b.j, NULL);
		json_uint(b.j, "inode", ino);
		json_array_begin(b.j, "blocks");
	}
	err = iterate_blocks(d, ino, &in, blocks_visit, &b, NULL);
	if (b.j) {
		json_array_end(b.j);
		json_object_end(b.j);
		json_finish(b.j);
	} else {
		fputc('\n', d->out);
	}
	if (err) {
		dbg_error(d, argv[0], err, "while iterating over the blocks of inode %u", ino);
		return 1;
	}
	return 0;
}

/* ----------------------------------------------------------------- bmap */

/* debugfs refuses logical blocks the kernel could never map. */
static int lblk_too_big(struct dbg *d, const struct ext4fs_inode *in, uint64_t lblk)
{
	uint64_t per = ext4fs_geom(d->fs)->block_size / 4;

	if (lblk >= (1ULL << 32) - 1)
		return 1;
	if (in->i_flags & EXT4FS_EXTENTS_FL)
		return 0;
	return lblk >= EXT4FS_NDIR_BLOCKS + per + per * per + per * per * per;
}

static int bmap_fail(struct dbg *d, const char *cmd, const char *msg, uint64_t lblk)
{
	fflush(d->out);
	fprintf(stderr, "%s: %s while mapping logical block %" PRIu64 "\n\n", cmd, msg, lblk);
	return 1;
}

/* A library failure while mapping: debugfs ends the message with an empty line. */
static int bmap_lib_fail(struct dbg *d, const char *cmd, int err, uint64_t lblk)
{
	fflush(d->out);
	fprintf(stderr, "%s: %s while mapping logical block %" PRIu64, cmd, ext4fs_strerror(err),
		lblk);
	if (ext4fs_errmsg(d->fs)[0])
		fprintf(stderr, " (detail: %s)", ext4fs_errmsg(d->fs));
	fputs("\n\n", stderr);
	return 1;
}

static int do_bmap(struct dbg *d, int argc, char **argv)
{
	static const char usage[] = "Usage: bmap [-a] <file> logical_blk [physical_blk]";
	struct ext4fs_inode in;
	uint64_t lblk, pblk = 0, run = 0;
	uint32_t ino;
	int c, alloc = 0, set = 0, unwritten = 0, err;

	reset_getopt();
	fflush(d->out);
	while ((c = getopt(argc, argv, "a")) != -1) {
		switch (c) {
		case 'a': alloc = 1; break;
		default: return plain_error(d, usage);
		}
	}
	if (argc <= optind + 1)
		return plain_error(d, usage);
	if (dbg_parse_inode(d, argv[optind++], &ino))
		return 1;
	if (parse_num(d, argv[0], argv[optind++], "logical block", &lblk))
		return 1;
	if (argc > optind + 1)
		return plain_error(d, usage);
	if (argc == optind + 1) {
		if (parse_num(d, argv[0], argv[optind++], "physical block", &pblk))
			return 1;
		if (alloc)
			return plain_error(d, "Can't set and allocate a block");
		set = 1;
	}
	err = ext4fs_inode_read(d->fs, ino, &in);
	if (err)
		return bmap_lib_fail(d, argv[0], err, lblk);
	char context[64];
	snprintf(context, sizeof(context), "while mapping logical block %" PRIu64 "\n", lblk);
	if (lblk_too_big(d, &in, lblk))
		return bmap_fail(d, argv[0], "Ext2 file too big", lblk);
	if (in.i_flags & EXT4FS_INLINE_DATA_FL)
		return bmap_fail(d, argv[0], "No block for an inode with inline data", lblk);
	if (set)
		return bmap_fail(d, argv[0], ext4fs_strerror(EXT4FS_E_READ_ONLY), lblk);
	if (in.i_flags & EXT4FS_EXTENTS_FL) {
		err = ext4fs_bmap(d->fs, ino, &in, lblk, &pblk, &run, &unwritten);
		if (err)
			return bmap_lib_fail(d, argv[0], err, lblk);
	} else {
		err = raw_map_bmap(d->fs, &in, lblk, &pblk);
		if (err) {
			local_error(d, argv[0], err, context);
			return 1;
		}
	}
	if (!pblk && alloc)
		return bmap_fail(d, argv[0], ext4fs_strerror(EXT4FS_E_READ_ONLY), lblk);
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "inode", ino);
		json_uint(&j, "logical", lblk);
		json_uint(&j, "physical", pblk);
		json_bool(&j, "hole", pblk == 0);
		json_bool(&j, "unwritten", unwritten);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, "%" PRIu64 "%s\n", pblk, unwritten ? " (uninit)" : "");
	}
	return 0;
}

/* --------------------------------------------------------------- icheck */

struct icheck_block {
	uint64_t blk;
	uint32_t ino;
};

struct icheck {
	struct icheck_block *b;
	size_t n, left;
	uint32_t cur;
	int failed;
};

static void icheck_match(struct icheck *ic, uint64_t blk)
{
	for (size_t i = 0; i < ic->n; i++) {
		if (!ic->b[i].ino && ic->b[i].blk == blk) {
			ic->b[i].ino = ic->cur;
			ic->left--;
		}
	}
}

static int icheck_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct icheck *ic = arg;

	for (uint32_t i = 0; i < v->count && ic->left; i++)
		icheck_match(ic, v->pblk + i);
	return ic->left ? 0 : 1;
}

static int icheck_inode(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in, void *arg)
{
	struct icheck *ic = arg;
	uint64_t acl;
	int err, bad_ind;

	if (!in->i_links_count)
		return 0;
	ic->cur = ino;
	acl = ext4fs_inode_file_acl(d->fs, in);
	if (acl) {
		icheck_match(ic, acl);
		if (!ic->left)
			return 1;
	}
	if (!has_valid_blocks(d, in) || in->i_dtime)
		return 0;
	err = iterate_blocks(d, ino, in, icheck_visit, ic, &bad_ind);
	if (err < 0) {
		dbg_error(d, "icheck", err, "while calling ext2fs_block_iterate");
		ic->failed = 1;
	} else if (bad_ind) {
		fflush(d->out);
		fprintf(stderr, "icheck: Illegal indirect block found while calling ext2fs_block_iterate\n");
		ic->failed = 1;
	}
	return ic->left ? 0 : 1;
}

static int do_icheck(struct dbg *d, int argc, char **argv)
{
	struct icheck ic = { 0 };
	int rc = 0;

	if (argc < 2) {
		fflush(d->out);
		fprintf(stderr, "%s: Usage: icheck <block number> ...\n", argv[0]);
		return 1;
	}
	ic.b = calloc((size_t)argc, sizeof(*ic.b));
	if (!ic.b) {
		local_error(d, argv[0], EXT4FS_E_NO_MEMORY, "while allocating inode info array");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (parse_num(d, argv[0], argv[i], "block number", &ic.b[i - 1].blk)) {
			free(ic.b);
			return 1;
		}
	}
	ic.n = ic.left = (size_t)argc - 1;
	if (scan_inodes(d, "icheck", icheck_inode, &ic)) {
		free(ic.b);
		return 1;
	}
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "blocks");
		for (size_t i = 0; i < ic.n; i++) {
			json_object_begin(&j, NULL);
			json_uint(&j, "block", ic.b[i].blk);
			if (ic.b[i].ino)
				json_uint(&j, "inode", ic.b[i].ino);
			else
				json_null(&j, "inode");
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fputs("Block\tInode number\n", d->out);
		for (size_t i = 0; i < ic.n; i++) {
			if (ic.b[i].ino)
				fprintf(d->out, "%" PRIu64 "\t%u\n", ic.b[i].blk, ic.b[i].ino);
			else
				fprintf(d->out, "%" PRIu64 "\t<block not found>\n", ic.b[i].blk);
		}
	}
	if (ic.failed)
		rc = 1;
	free(ic.b);
	return rc;
}

/* --------------------------------------------------------------- ncheck */

struct ncheck {
	uint32_t *inos;
	size_t n;
	uint64_t names_left;
	int check_type;
	int failed;
	struct json *j;
	/* the directory being walked */
	uint32_t dir;
	unsigned position;
	char *parent;
	int parent_failed;
};

static unsigned mode_to_ft(uint16_t mode)
{
	switch (mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFREG: return 1;
	case EXT4FS_S_IFDIR: return 2;
	case EXT4FS_S_IFCHR: return 3;
	case EXT4FS_S_IFBLK: return 4;
	case EXT4FS_S_IFIFO: return 5;
	case EXT4FS_S_IFSOCK: return 6;
	case EXT4FS_S_IFLNK: return 7;
	default: return 0;
	}
}

static int ncheck_entry(struct dbg *d, struct ncheck *nc, uint32_t ino, const char *name,
			size_t name_len, unsigned file_type)
{
	nc->position++;
	if (nc->position <= 2)
		return 0;
	for (size_t i = 0; i < nc->n; i++) {
		if (nc->inos[i] != ino)
			continue;
		if (!nc->parent && !nc->parent_failed) {
			int err = ext4fs_get_pathname(d->fs, nc->dir, 0, &nc->parent);
			if (err) {
				nc->parent = NULL;
				dbg_error(d, "ncheck", err,
					  "while calling ext2fs_get_pathname for inode #%u", nc->dir);
				nc->parent_failed = 1;
				nc->failed = 1;
			}
		}
		int bad = 0;
		if (nc->check_type && file_type) {
			struct ext4fs_inode in;
			if (!dbg_read_inode(d, "ncheck", ino, &in))
				bad = file_type != mode_to_ft(in.i_mode);
			else
				nc->failed = 1;
		}
		if (nc->j) {
			char dirbuf[16];
			json_object_begin(nc->j, NULL);
			json_uint(nc->j, "inode", ino);
			json_uint(nc->j, "directory", nc->dir);
			if (nc->parent) {
				json_string(nc->j, "directory_path", nc->parent);
			} else {
				snprintf(dirbuf, sizeof(dirbuf), "<%u>", nc->dir);
				json_string(nc->j, "directory_path", dirbuf);
			}
			json_string_len(nc->j, "name", name, name_len);
			if (nc->parent) {
				size_t plen = strlen(nc->parent);
				char *full = malloc(plen + name_len + 2);
				if (full) {
					int root = plen == 1 && nc->parent[0] == '/';
					snprintf(full, plen + name_len + 2, "%s/%.*s", root ? "" : nc->parent,
						 (int)name_len, name);
					json_string_len(nc->j, "path", full, strlen(full));
					free(full);
				}
			}
			if (nc->check_type)
				json_bool(nc->j, "bad_filetype", bad);
			json_object_end(nc->j);
		} else {
			if (nc->parent)
				fprintf(d->out, "%u\t%s/%.*s", ino, nc->parent, (int)name_len, name);
			else
				fprintf(d->out, "%u\t<%u>/%.*s", ino, nc->dir, (int)name_len, name);
			if (bad)
				fputs("  <--- BAD FILETYPE", d->out);
			fputc('\n', d->out);
		}
		nc->names_left--;
	}
	return nc->names_left ? 0 : 1;
}

struct ncheck_ctx {
	struct dbg *d;
	struct ncheck *nc;
};

static int ncheck_dirent(const struct ext4fs_dirent *de, void *arg)
{
	struct ncheck_ctx *c = arg;

	if (!de->inode)
		return 0;
	return ncheck_entry(c->d, c->nc, de->inode, de->name, de->name_len, de->file_type);
}

static int ncheck_inode(struct dbg *d, uint32_t ino, const struct ext4fs_inode *in, void *arg)
{
	struct ncheck *nc = arg;
	struct ncheck_ctx c = { d, nc };
	int err;

	if (!in->i_links_count || in->i_dtime || !EXT4FS_ISDIR(in->i_mode))
		return 0;
	nc->dir = ino;
	nc->position = 0;
	nc->parent = NULL;
	nc->parent_failed = 0;
	err = ext4fs_dir_iterate(d->fs, ino, in, 0, ncheck_dirent, &c);
	free(nc->parent);
	nc->parent = NULL;
	if (err < 0) {
		dbg_error(d, "ncheck", err, "while calling ext2_dir_iterate");
		nc->failed = 1;
	}
	return nc->names_left ? 0 : 1;
}

static int do_ncheck(struct dbg *d, int argc, char **argv)
{
	struct ncheck nc = { 0 };
	struct json jj;
	int c, rc = 0;

	reset_getopt();
	fflush(d->out);
	while ((c = getopt(argc, argv, "c")) != -1) {
		switch (c) {
		case 'c': nc.check_type = 1; break;
		default: goto usage;
		}
	}
	if (argc <= 1) {
usage:
		fflush(d->out);
		fprintf(stderr, "%s: Usage: ncheck [-c] <inode number> ...\n", argv[0]);
		return 1;
	}
	argc -= optind;
	argv += optind;
	nc.inos = calloc((size_t)argc + 1, sizeof(*nc.inos));
	if (!nc.inos) {
		local_error(d, "ncheck", EXT4FS_E_NO_MEMORY, "while allocating inode info array");
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		const char *str = argv[i];
		size_t len = strlen(str);
		char *end;
		struct ext4fs_inode in;

		if (len > 2 && str[0] == '<' && str[len - 1] == '>')
			str++;
		nc.inos[i] = (uint32_t)strtol(str, &end, 0);
		if (*end && (str == argv[i] || *end != '>')) {
			fflush(d->out);
			fprintf(stderr, "ncheck: Invalid inode number - '%s'\n", argv[i]);
			free(nc.inos);
			return 1;
		}
		if (dbg_read_inode(d, argv[0], nc.inos[i], &in)) {
			free(nc.inos);
			return 1;
		}
		nc.names_left += in.i_links_count;
	}
	nc.n = (size_t)argc;
	if (d->json) {
		nc.j = &jj;
		json_init(nc.j, d->out);
		json_object_begin(nc.j, NULL);
		json_array_begin(nc.j, "names");
	} else {
		fputs("Inode\tPathname\n", d->out);
	}
	if (nc.names_left && scan_inodes(d, "ncheck", ncheck_inode, &nc))
		rc = 1;
	if (nc.j) {
		json_array_end(nc.j);
		json_object_end(nc.j);
		json_finish(nc.j);
	}
	if (nc.failed)
		rc = 1;
	free(nc.inos);
	return rc;
}

const struct dbg_cmd dbg_cmds_inode[] = {
	{ { "show_inode_info", "stat", NULL }, do_stat, 1, "Show inode information " },
	{ { "dump_extents", "extents", "ex", NULL }, do_dump_extents, 1,
	  "Dump extents information " },
	{ { "blocks", NULL }, do_blocks, 1, "Dump blocks used by an inode " },
	{ { "bmap", NULL }, do_bmap, 1, "Calculate the logical->physical block mapping for an inode" },
	{ { "icheck", NULL }, do_icheck, 1, "Do block->inode translation" },
	{ { "ncheck", NULL }, do_ncheck, 1, "Do inode->name translation" },
	{ { NULL }, NULL, 0, NULL },
};
