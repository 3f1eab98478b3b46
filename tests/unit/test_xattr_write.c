/*
 * test_xattr_write.c - setting, replacing and removing extended attributes:
 * placement in the inode body or the attribute block, moves between them,
 * freeing an emptied block, copy-on-write of a shared block, releasing a
 * block reference, POSIX ACL conversion, an inline-data area written whole,
 * and the refusals.  Each case reads the result back through the library
 * (strict checksums, after a reopen), checks the block layout against an
 * independent rendering of the kernel's rules (sorted entries, entry and
 * block hashes, checksum), and has the real e2fsck judge the image.
 *
 * e2fsck wants every inode in use to be reachable, and the directory
 * writer is another module, so link_into_root() adds the entry by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/alloc.h"
#include "ext4fs/dir.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/xattr.h"
#include "../lib/rw_image.h"

/* -- Image set-up ---------------------------------------------------------- */

/* What tweak() changes in mke2fs's ext4 defaults (the tweak hook takes no argument). */
static struct {
	uint32_t inode_size;    /* 0 = default (256) */
	int no_csum;            /* uninit_bg instead of metadata_csum */
	int ext2ish;            /* no journal, extents, flex_bg, 64bit */
	int no_ext_attr;        /* start without the ext_attr feature */
	int inline_data;        /* add the inline_data feature */
	int ea_inode;           /* add the ea_inode feature */
} cfg;

static void tweak(struct ext4fs_mkfs_params *p)
{
	if (cfg.inode_size) {
		p->inode_size = cfg.inode_size;
		if (cfg.inode_size == 128)
			p->feature_ro_compat &= ~EXT4FS_FEATURE_RO_COMPAT_EXTRA_ISIZE;
	}
	if (cfg.no_csum)
		rw_tweak_gdt_csum(p);
	if (cfg.ext2ish) {
		p->feature_compat &= ~EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
		p->feature_incompat = EXT4FS_FEATURE_INCOMPAT_FILETYPE;
		p->log_groups_per_flex = 0;
	}
	if (cfg.no_ext_attr)
		p->feature_compat &= ~EXT4FS_FEATURE_COMPAT_EXT_ATTR;
	if (cfg.inline_data)
		p->feature_incompat |= EXT4FS_FEATURE_INCOMPAT_INLINE_DATA;
	if (cfg.ea_inode)
		p->feature_incompat |= EXT4FS_FEATURE_INCOMPAT_EA_INODE;
}

static void open_image(struct rw_image *img, uint32_t bs)
{
	rw_image_open(img, bs == 1024 ? 16384 : 8192, bs, tweak);
}

static uint16_t ld16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t ld32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void st16(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}
static void st32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Add name -> ino to the root directory's first block by splitting its last entry. */
static void link_into_root(struct rw_image *img, uint32_t ino, const char *name)
{
	struct ext4fs_fs *fs = img->fs;
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	uint32_t bs = geo->block_size;
	uint32_t limit = geo->has_metadata_csum ? bs - EXT4FS_DIRENT_TAIL_SIZE : bs;
	uint32_t nlen = (uint32_t)strlen(name), need = (8 + nlen + 3) & ~3U, off = 0;
	struct ext4fs_inode root;
	unsigned char *buf = malloc(bs);
	uint64_t pblk = 0;

	assert_non_null(buf);
	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_ROOT_INO, &root), 0);
	assert_int_equal(ext4fs_dir_block_read(fs, EXT4FS_ROOT_INO, &root, 0, buf, &pblk), 0);
	for (int guard = 0; guard < 1000; guard++) {
		uint32_t rec = ext4fs_dirent_rec_len(ld16(buf + off + 4), bs);
		assert_true(rec >= 8 && off + rec <= limit);
		if (off + rec == limit)
			break;
		off += rec;
	}
	uint32_t used = (8 + buf[off + 6] + 3) & ~3U;
	assert_true(limit - off - used >= need);
	st16(buf + off + 4, used);
	off += used;
	st32(buf + off, ino);
	st16(buf + off + 4, limit - off);
	buf[off + 6] = (unsigned char)nlen;
	buf[off + 7] = geo->has_filetype ? EXT4FS_FT_REG_FILE : 0;
	memcpy(buf + off + 8, name, nlen);
	if (geo->has_metadata_csum)
		st32(buf + bs - 4, ext4fs_dirent_csum(fs, EXT4FS_ROOT_INO, root.i_generation, buf, limit));
	assert_int_equal(ext4fs_block_write(fs, pblk, buf), 0);
	free(buf);
}

/* A new empty regular file linked into the root as name. */
static uint32_t new_file(struct rw_image *img, const char *name, struct ext4fs_inode *in)
{
	uint32_t ino = 0;

	assert_int_equal(ext4fs_inode_alloc(img->fs, EXT4FS_ROOT_INO, EXT4FS_S_IFREG | 0644, &ino), 0);
	ext4fs_inode_init_new(img->fs, ino, EXT4FS_S_IFREG | 0644, 1000, 1000, in);
	assert_int_equal(ext4fs_inode_write(img->fs, ino, in), 0);
	link_into_root(img, ino, name);
	return ino;
}

static void reopen_read(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in)
{
	rw_image_reopen(img);
	assert_int_equal(ext4fs_inode_read(img->fs, ino, in), 0);
}

static uint64_t free_blocks(struct rw_image *img)
{
	return ext4fs_geom(img->fs)->free_blocks_count;
}

static uint64_t file_acl(struct rw_image *img, const struct ext4fs_inode *in)
{
	return ext4fs_inode_file_acl(img->fs, in);
}

static uint64_t sectors(struct rw_image *img, const struct ext4fs_inode *in)
{
	return ext4fs_inode_sectors(img->fs, in);
}

/* -- Reading back ---------------------------------------------------------- */

struct seen {
	int n;
	struct {
		char name[EXT4FS_XATTR_NAME_MAX + 1];
		enum ext4fs_xattr_where where;
		uint32_t len;
	} a[128];
};

static int collect(const struct ext4fs_xattr *x, void *arg)
{
	struct seen *s = arg;

	assert_true(s->n < 128);
	snprintf(s->a[s->n].name, sizeof(s->a[0].name), "%s", x->name);
	s->a[s->n].where = x->where;
	s->a[s->n].len = x->value_len;
	s->n++;
	return 0;
}

static void list_attrs(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
		       struct seen *s)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(ext4fs_xattr_iterate(img->fs, ino, in, EXT4FS_XATTR_ITER_NO_EA_VALUES, collect, s),
			 0);
}

/* Where name is stored: 0 inode, 1 block, -1 absent (and never twice). */
static int where_is(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
		    const char *name)
{
	struct seen s;
	int w = -1;

	list_attrs(img, ino, in, &s);
	for (int i = 0; i < s.n; i++) {
		if (strcmp(s.a[i].name, name) == 0) {
			assert_int_equal(w, -1);
			w = s.a[i].where == EXT4FS_XATTR_IN_BLOCK;
		}
	}
	return w;
}

static void check_value(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
			 const char *name, const void *want, size_t want_len)
{
	void *v = NULL;
	size_t len = 0;

	assert_int_equal(ext4fs_xattr_get(img->fs, ino, in, name, &v, &len), 0);
	assert_int_equal(len, want_len);
	if (want_len)
		assert_memory_equal(v, want, want_len);
	free(v);
}

/* The kernel's entry hash, written out independently of the library. */
static uint32_t ref_entry_hash(const unsigned char *name, unsigned nlen, const unsigned char *val,
			       uint32_t size)
{
	uint32_t h = 0;

	for (unsigned i = 0; i < nlen; i++)
		h = ((h << 5) | (h >> 27)) ^ name[i];
	for (uint32_t i = 0; i < (size + 3) / 4; i++) {
		uint32_t w = 0;
		for (uint32_t k = 0; k < 4 && 4 * i + k < size; k++)
			w |= (uint32_t)val[4 * i + k] << (8 * k);
		h = ((h << 16) | (h >> 16)) ^ w;
	}
	return h;
}

/*
 * Check the inode's attribute block as the kernel would want it: header,
 * refcount, entries sorted by (index, name length, name), each e_hash
 * right, h_hash right, checksum right, values inside the block.
 */
static void check_block(struct rw_image *img, const struct ext4fs_inode *in, uint32_t refcount)
{
	struct ext4fs_fs *fs = img->fs;
	uint32_t bs = ext4fs_geom(fs)->block_size;
	uint64_t blk = file_acl(img, in);
	unsigned char *b = malloc(bs);
	uint32_t off = 32, bhash = 0, prev = 0;
	int zero_hash = 0;

	assert_non_null(b);
	assert_true(blk != 0);
	assert_int_equal(ext4fs_block_read(fs, blk, b), 0);
	assert_int_equal(ld32(b), EXT4FS_XATTR_MAGIC);
	assert_int_equal(ld32(b + 4), refcount);
	assert_int_equal(ld32(b + 8), 1);
	if (ext4fs_geom(fs)->has_metadata_csum)
		assert_int_equal(ld32(b + 16), ext4fs_xattr_block_csum(fs, blk, b));
	while (ld32(b + off) != 0) {
		unsigned nlen = b[off], idx = b[off + 1];
		uint32_t offs = ld16(b + off + 2), size = ld32(b + off + 8), h = ld32(b + off + 12);

		assert_true(off + 16 + nlen + 4 <= bs);
		if (prev) {
			unsigned pn = b[prev], pi = b[prev + 1];
			int cmp = pi != idx ? (int)pi - (int)idx : pn != nlen ? (int)pn - (int)nlen :
				  memcmp(b + prev + 16, b + off + 16, nlen);
			assert_true(cmp < 0);
		}
		/* Values in EA inodes were hashed by the kernel from the value's crc32c: kept as they are. */
		if (ld32(b + off + 4) == 0) {
			assert_true(size == 0 || (offs >= off + 20 && offs + size <= bs));
			assert_int_equal(h, ref_entry_hash(b + off + 16, nlen, b + offs, size));
		}
		zero_hash |= h == 0;
		bhash = ((bhash << 16) | (bhash >> 16)) ^ h;
		prev = off;
		off += (16 + nlen + 3) & ~3U;
	}
	assert_int_equal(ld32(b + 12), zero_hash ? 0 : bhash);
	free(b);
}

static void set_ok(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, const char *name,
		   const void *v, size_t len)
{
	int err = ext4fs_xattr_set(img->fs, ino, in, name, v, len, 0);
	if (err)
		fail_msg("setting %s: %s (%s)", name, ext4fs_strerror(err), ext4fs_errmsg(img->fs));
}

static void remove_all(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in)
{
	struct seen s;

	list_attrs(img, ino, in, &s);
	for (int i = 0; i < s.n; i++)
		assert_int_equal(ext4fs_xattr_remove(img->fs, ino, in, s.a[i].name), 0);
	list_attrs(img, ino, in, &s);
	assert_int_equal(s.n, 0);
}

/* A label as getxattr(2) gives it: with its NUL. */
static const char selinux[] = "system_u:object_r:etc_t:s0";

/* -- The common scenario over a matrix of geometries ----------------------- */

/*
 * Small attributes stay in the inode (when it has room), many spill into
 * one block, everything reads back after a reopen, and removing them all
 * frees the block and gives back the free count.
 */
static void scenario(uint32_t bs)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char val[60];
	char name[32];
	uint32_t ino;
	uint64_t free0;
	int large;

	open_image(&img, bs);
	large = ext4fs_geom(img.fs)->inode_size > 128;
	ino = new_file(&img, "f", &in);
	free0 = free_blocks(&img);

	set_ok(&img, ino, &in, "user.small", "v1", 2);
	set_ok(&img, ino, &in, "security.selinux", selinux, sizeof(selinux));
	if (large) {
		assert_int_equal(file_acl(&img, &in), 0);
		assert_int_equal(where_is(&img, ino, &in, "user.small"), 0);
		assert_int_equal(where_is(&img, ino, &in, "security.selinux"), 0);
		assert_int_equal(free_blocks(&img), free0);
	} else {
		assert_int_equal(where_is(&img, ino, &in, "user.small"), 1);
		check_block(&img, &in, 1);
	}

	for (int i = 0; i < 8; i++) {
		memset(val, 'a' + i, sizeof(val));
		snprintf(name, sizeof(name), "user.attr%02d", i);
		set_ok(&img, ino, &in, name, val, sizeof(val));
	}
	assert_true(file_acl(&img, &in) != 0);
	assert_int_equal(sectors(&img, &in), bs / 512);
	assert_int_equal(free_blocks(&img), free0 - 1);
	check_block(&img, &in, 1);
	rw_image_assert_clean(&img);

	reopen_read(&img, ino, &in);
	check_value(&img, ino, &in, "user.small", "v1", 2);
	check_value(&img, ino, &in, "security.selinux", selinux, sizeof(selinux));
	for (int i = 0; i < 8; i++) {
		memset(val, 'a' + i, sizeof(val));
		snprintf(name, sizeof(name), "user.attr%02d", i);
		check_value(&img, ino, &in, name, val, sizeof(val));
	}

	remove_all(&img, ino, &in);
	assert_int_equal(file_acl(&img, &in), 0);
	assert_int_equal(sectors(&img, &in), 0);
	assert_int_equal(free_blocks(&img), free0);
	rw_image_assert_clean(&img);
	reopen_read(&img, ino, &in);
	assert_int_equal(file_acl(&img, &in), 0);
	assert_int_equal(free_blocks(&img), free0);
	rw_image_close(&img);
}

static void scenario_4k_csum(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	scenario(4096);
}

static void scenario_1k_csum(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	scenario(1024);
}

static void scenario_4k_no_csum(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_csum = 1;
	scenario(4096);
}

static void scenario_1k_ext2ish(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_csum = 1;
	cfg.ext2ish = 1;
	scenario(1024);
}

static void scenario_128_byte_inodes_1k_csum(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.inode_size = 128;
	scenario(1024);
}

static void scenario_128_byte_inodes_4k_no_csum(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.inode_size = 128;
	cfg.no_csum = 1;
	scenario(4096);
}

static void scenario_512_byte_inodes(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.inode_size = 512;
	scenario(4096);
}

/* -- Single behaviours ----------------------------------------------------- */

/* Growing a value past the inode's room moves it to the block; shrinking it brings it back. */
static void replace_moves_between_inode_and_block(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char big[300];
	uint64_t free0;
	uint32_t ino;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	open_image(&img, 4096);
	ino = new_file(&img, "f", &in);
	free0 = free_blocks(&img);
	memset(big, 0x5A, sizeof(big));

	set_ok(&img, ino, &in, "user.x", "0123456789", 10);
	set_ok(&img, ino, &in, "user.keep", "k", 1);
	assert_int_equal(where_is(&img, ino, &in, "user.x"), 0);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.x", big, sizeof(big),
					  EXT4FS_XATTR_REPLACE), 0);
	assert_int_equal(where_is(&img, ino, &in, "user.x"), 1);
	assert_int_equal(where_is(&img, ino, &in, "user.keep"), 0);
	assert_int_equal(free_blocks(&img), free0 - 1);
	check_block(&img, &in, 1);
	check_value(&img, ino, &in, "user.x", big, sizeof(big));
	rw_image_assert_clean(&img);

	reopen_read(&img, ino, &in);
	set_ok(&img, ino, &in, "user.x", "short", 5);
	assert_int_equal(where_is(&img, ino, &in, "user.x"), 0);
	assert_int_equal(file_acl(&img, &in), 0);
	assert_int_equal(sectors(&img, &in), 0);
	assert_int_equal(free_blocks(&img), free0);
	check_value(&img, ino, &in, "user.x", "short", 5);
	check_value(&img, ino, &in, "user.keep", "k", 1);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* Entries in the block are kept in the kernel's order whatever order they were set in. */
static void block_entries_sorted_and_hashed(void **state)
{
	static const char *const names[] = {
		"user.zz", "trusted.a", "user.a", "security.selinux", "user.bb", "user.caf\xc3\xa9",
		"trusted.overlay.opaque", "user.a2", "gnu.translator",
	};
	struct rw_image img;
	struct ext4fs_inode in;
	uint32_t ino;
	char v[8];

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.inode_size = 128;
	open_image(&img, 1024);
	ino = new_file(&img, "f", &in);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(v, sizeof(v), "v%zu", i);
		set_ok(&img, ino, &in, names[i], v, strlen(v));
		check_block(&img, &in, 1);
	}
	/* An empty value is an attribute too. */
	set_ok(&img, ino, &in, "user.empty", NULL, 0);
	check_block(&img, &in, 1);
	check_value(&img, ino, &in, "user.empty", "", 0);
	rw_image_assert_clean(&img);
	reopen_read(&img, ino, &in);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(v, sizeof(v), "v%zu", i);
		check_value(&img, ino, &in, names[i], v, strlen(v));
	}
	rw_image_close(&img);
}

/* CREATE / REPLACE, bad names, values too large: refused, and nothing changes. */
static void refusals_change_nothing(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in, before;
	char longname[5 + 257];
	unsigned char *big;
	uint32_t ino, bs = 4096;
	uint64_t free0;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	open_image(&img, bs);
	ino = new_file(&img, "f", &in);
	set_ok(&img, ino, &in, "user.a", "1", 1);
	free0 = free_blocks(&img);
	before = in;
	big = calloc(1, bs + 1);
	assert_non_null(big);

	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.a", "2", 1, EXT4FS_XATTR_CREATE),
			 EXT4FS_E_EXISTS);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.b", "2", 1, EXT4FS_XATTR_REPLACE),
			 EXT4FS_E_NOT_FOUND);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.b"), EXT4FS_E_NOT_FOUND);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "nosuch.a", "2", 1, 0), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "system.data", "", 0, 0),
			 EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "system.foo", "", 0, 0), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.", "2", 1, 0), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.a", "2", 1, 0x10), EXT4FS_E_INVALID_ARG);
	memcpy(longname, "user.", 5);
	memset(longname + 5, 'n', 256);
	longname[5 + 256] = '\0';
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, longname, "2", 1, 0), EXT4FS_E_NAME_TOO_LONG);
	/* The largest value a block holds beside its 20-byte entry: block - header - end marker - entry. */
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.big", big, bs - 32 - 4 - 20 + 1, 0),
			 EXT4FS_E_XATTR_NO_SPACE);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.big", big, bs + 1, 0),
			 EXT4FS_E_XATTR_NO_SPACE);
	assert_memory_equal(&in, &before, sizeof(in));
	assert_int_equal(free_blocks(&img), free0);
	/* Setting the value it already has changes nothing either. */
	ext4fs_set_time(img.fs, 1800000000, 0);
	set_ok(&img, ino, &in, "user.a", "1", 1);
	assert_int_equal(in.i_ctime, before.i_ctime);

	set_ok(&img, ino, &in, "user.big", big, bs - 32 - 4 - 20);
	assert_int_equal(where_is(&img, ino, &in, "user.big"), 1);
	assert_int_equal(in.i_ctime, 1800000000);
	check_block(&img, &in, 1);
	rw_image_assert_clean(&img);
	/* The block is full now, and the inode has no room for 200 bytes. */
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.more", big, 200, 0),
			 EXT4FS_E_XATTR_NO_SPACE);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.big"), 0);
	/* The longest suffix. */
	longname[5 + 255] = '\0';
	set_ok(&img, ino, &in, longname, "x", 1);
	set_ok(&img, ino, &in, "user.more", big, 200);
	assert_int_equal(where_is(&img, ino, &in, longname), 1);
	check_block(&img, &in, 1);
	rw_image_assert_clean(&img);
	free(big);
	rw_image_close(&img);
}

/* A file system made without ext_attr gains the feature with its first attribute. */
static void ext_attr_feature_is_turned_on(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	uint32_t ino;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_ext_attr = 1;
	open_image(&img, 4096);
	assert_false(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR));
	ino = new_file(&img, "f", &in);
	set_ok(&img, ino, &in, "user.a", "1", 1);
	assert_true(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR));
	rw_image_assert_clean(&img);
	reopen_read(&img, ino, &in);
	assert_true(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR));
	check_value(&img, ino, &in, "user.a", "1", 1);
	rw_image_close(&img);
}

/* -- Shared blocks --------------------------------------------------------- */

/* Make inode b use inode a's attribute block too, as the kernel's block sharing does. */
static void share_block(struct rw_image *img, const struct ext4fs_inode *a, uint32_t ino_b,
			struct ext4fs_inode *b)
{
	uint32_t bs = ext4fs_geom(img->fs)->block_size;
	uint64_t blk = file_acl(img, a);
	unsigned char *buf = malloc(bs);

	assert_non_null(buf);
	assert_int_equal(file_acl(img, b), 0);
	assert_int_equal(ext4fs_block_read(img->fs, blk, buf), 0);
	st32(buf + 4, ld32(buf + 4) + 1);
	if (ext4fs_geom(img->fs)->has_metadata_csum)
		st32(buf + 16, ext4fs_xattr_block_csum(img->fs, blk, buf));
	assert_int_equal(ext4fs_block_write(img->fs, blk, buf), 0);
	b->i_file_acl_lo = (uint32_t)blk;
	b->i_file_acl_high = (uint16_t)(blk >> 32);
	assert_int_equal(ext4fs_inode_add_blocks(img->fs, b, 1), 0);
	assert_int_equal(ext4fs_inode_write(img->fs, ino_b, b), 0);
	free(buf);
}

static void shared_block(uint32_t bs)
{
	struct rw_image img;
	struct ext4fs_inode a, b, c, d;
	uint32_t ia, ib, ic, id;
	unsigned char v1[300], v2[300];
	uint64_t free0, blk;

	open_image(&img, bs);
	ia = new_file(&img, "a", &a);
	ib = new_file(&img, "b", &b);
	ic = new_file(&img, "c", &c);
	id = new_file(&img, "d", &d);
	memset(v1, 1, sizeof(v1));
	memset(v2, 2, sizeof(v2));
	free0 = free_blocks(&img);
	set_ok(&img, ia, &a, "user.big", v1, sizeof(v1));
	blk = file_acl(&img, &a);
	assert_true(blk != 0);
	share_block(&img, &a, ib, &b);
	check_block(&img, &a, 2);
	rw_image_assert_clean(&img);

	/* Changing b's block copies it: b gets its own, a keeps the old one with one user. */
	set_ok(&img, ib, &b, "user.big2", v2, sizeof(v2));
	assert_true(file_acl(&img, &b) != 0 && file_acl(&img, &b) != blk);
	assert_int_equal(file_acl(&img, &a), blk);
	assert_int_equal(sectors(&img, &b), bs / 512);
	assert_int_equal(free_blocks(&img), free0 - 2);
	check_block(&img, &a, 1);
	check_block(&img, &b, 1);
	check_value(&img, ib, &b, "user.big", v1, sizeof(v1));
	check_value(&img, ib, &b, "user.big2", v2, sizeof(v2));
	assert_int_equal(where_is(&img, ia, &a, "user.big2"), -1);
	rw_image_assert_clean(&img);

	/* Emptying a shared block only drops the reference. */
	share_block(&img, &a, ic, &c);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ic, &c, "user.big"), 0);
	assert_int_equal(file_acl(&img, &c), 0);
	assert_int_equal(sectors(&img, &c), 0);
	check_block(&img, &a, 1);
	check_value(&img, ia, &a, "user.big", v1, sizeof(v1));
	assert_int_equal(free_blocks(&img), free0 - 2);
	rw_image_assert_clean(&img);

	/* Releasing (inode deletion): a shared block loses a user, a last user frees it. */
	share_block(&img, &a, id, &d);
	assert_int_equal(ext4fs_xattr_release(img.fs, id, &d), 0);
	assert_int_equal(file_acl(&img, &d), 0);
	assert_int_equal(sectors(&img, &d), 0);
	check_block(&img, &a, 1);
	assert_int_equal(free_blocks(&img), free0 - 2);
	assert_int_equal(ext4fs_xattr_release(img.fs, ib, &b), 0);
	assert_int_equal(free_blocks(&img), free0 - 1);
	assert_int_equal(ext4fs_xattr_release(img.fs, ia, &a), 0);
	assert_int_equal(free_blocks(&img), free0);
	/* Nothing to release any more. */
	assert_int_equal(ext4fs_xattr_release(img.fs, ia, &a), 0);
	rw_image_assert_clean(&img);
	reopen_read(&img, ia, &a);
	assert_int_equal(file_acl(&img, &a), 0);
	assert_int_equal(free_blocks(&img), free0);
	rw_image_close(&img);
}

static void shared_block_copy_on_write_4k(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	shared_block(4096);
}

static void shared_block_copy_on_write_1k_no_csum(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_csum = 1;
	shared_block(1024);
}

/* -- POSIX ACLs ------------------------------------------------------------ */

#define TAG_USER_OBJ  0x01
#define TAG_USER      0x02
#define TAG_GROUP_OBJ 0x04
#define TAG_GROUP     0x08
#define TAG_MASK      0x10
#define TAG_OTHER     0x20

struct ace { uint16_t tag, perm; uint32_t id; };

/* An ACL in getxattr(2)'s format; returns its length. */
static size_t vfs_acl(unsigned char *out, uint32_t version, const struct ace *e, size_t n)
{
	st32(out, version);
	for (size_t i = 0; i < n; i++) {
		st16(out + 4 + 8 * i, e[i].tag);
		st16(out + 6 + 8 * i, e[i].perm);
		st32(out + 8 + 8 * i, e[i].id);
	}
	return 4 + 8 * n;
}

static void acl_round_trip(uint32_t bs)
{
	static const struct ace full[] = {
		{ TAG_USER_OBJ, 6, 0xFFFFFFFF }, { TAG_USER, 4, 1000 }, { TAG_USER, 6, 1001 },
		{ TAG_GROUP_OBJ, 4, 0xFFFFFFFF }, { TAG_GROUP, 6, 50 }, { TAG_MASK, 6, 0xFFFFFFFF },
		{ TAG_OTHER, 4, 0xFFFFFFFF },
	};
	static const struct ace minimal[] = {
		{ TAG_USER_OBJ, 7, 0xFFFFFFFF }, { TAG_GROUP_OBJ, 5, 0xFFFFFFFF }, { TAG_OTHER, 5, 0xFFFFFFFF },
	};
	struct rw_image img;
	struct ext4fs_inode in, root;
	unsigned char vfs[128], disk_copy[128];
	void *v = NULL, *back = NULL;
	size_t vlen, len = 0, back_len = 0;
	uint32_t ino;

	open_image(&img, bs);
	ino = new_file(&img, "f", &in);
	vlen = vfs_acl(vfs, 2, full, 7);
	set_ok(&img, ino, &in, "system.posix_acl_access", vfs, vlen);
	assert_int_equal(ext4fs_xattr_get(img.fs, ino, &in, "system.posix_acl_access", &v, &len), 0);
	/* ext4's format: version 1, four 4-byte entries and three 8-byte ones. */
	assert_int_equal(len, 4 + 4 * 4 + 3 * 8);
	assert_int_equal(ld32(v), 1);
	assert_int_equal(ld16((unsigned char *)v + 4), TAG_USER_OBJ);
	assert_int_equal(ld16((unsigned char *)v + 8), TAG_USER);
	assert_int_equal(ld32((unsigned char *)v + 12), 1000);
	memcpy(disk_copy, v, len);
	assert_int_equal(ext4fs_acl_to_vfs(v, len, &back, &back_len), 0);
	assert_int_equal(back_len, vlen);
	assert_memory_equal(back, vfs, vlen);
	free(back);
	free(v);

	/* A value already in ext4's format is stored as it is. */
	set_ok(&img, ino, &in, "user.copy", "x", 1);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "system.posix_acl_access"), 0);
	set_ok(&img, ino, &in, "system.posix_acl_access", disk_copy, len);
	check_value(&img, ino, &in, "system.posix_acl_access", disk_copy, len);

	/* A default ACL on the root directory, minimal form (no mask). */
	assert_int_equal(ext4fs_inode_read(img.fs, EXT4FS_ROOT_INO, &root), 0);
	vlen = vfs_acl(vfs, 2, minimal, 3);
	set_ok(&img, EXT4FS_ROOT_INO, &root, "system.posix_acl_default", vfs, vlen);
	assert_int_equal(ext4fs_xattr_get(img.fs, EXT4FS_ROOT_INO, &root, "system.posix_acl_default", &v,
					 &len), 0);
	assert_int_equal(len, 4 + 3 * 4);
	assert_int_equal(ext4fs_acl_to_vfs(v, len, &back, &back_len), 0);
	assert_int_equal(back_len, vlen);
	assert_memory_equal(back, vfs, vlen);
	free(back);
	free(v);
	rw_image_assert_clean(&img);

	reopen_read(&img, ino, &in);
	check_value(&img, ino, &in, "system.posix_acl_access", disk_copy, 4 + 4 * 4 + 3 * 8);
	rw_image_close(&img);
}

static void acl_round_trip_4k(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	acl_round_trip(4096);
}

static void acl_round_trip_1k_128_byte_inodes(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.inode_size = 128;
	acl_round_trip(1024);
}

static void acl_malformed_refused(void **state)
{
	static const struct ace named_without_mask[] = {
		{ TAG_USER_OBJ, 6, 0 }, { TAG_USER, 4, 1000 }, { TAG_GROUP_OBJ, 4, 0 }, { TAG_OTHER, 4, 0 },
	};
	static const struct ace wrong_order[] = {
		{ TAG_GROUP_OBJ, 4, 0 }, { TAG_USER_OBJ, 6, 0 }, { TAG_OTHER, 4, 0 },
	};
	static const struct ace no_other[] = { { TAG_USER_OBJ, 6, 0 }, { TAG_GROUP_OBJ, 4, 0 } };
	static const struct ace bad_perm[] = {
		{ TAG_USER_OBJ, 8, 0 }, { TAG_GROUP_OBJ, 4, 0 }, { TAG_OTHER, 4, 0 },
	};
	static const struct ace bad_tag[] = {
		{ TAG_USER_OBJ, 6, 0 }, { 0x40, 4, 0 }, { TAG_GROUP_OBJ, 4, 0 }, { TAG_OTHER, 4, 0 },
	};
	static const struct ace ok[] = {
		{ TAG_USER_OBJ, 6, 0 }, { TAG_GROUP_OBJ, 4, 0 }, { TAG_OTHER, 4, 0 },
	};
	struct rw_image img;
	struct ext4fs_inode in, before;
	unsigned char vfs[128];
	uint32_t ino;
	size_t n;
	void *out = NULL;
	size_t out_len = 0;
	const char *acl = "system.posix_acl_access";

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	open_image(&img, 4096);
	ino = new_file(&img, "f", &in);
	before = in;
	n = vfs_acl(vfs, 2, named_without_mask, 4);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n, 0), EXT4FS_E_INVALID_ARG);
	n = vfs_acl(vfs, 2, wrong_order, 3);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n, 0), EXT4FS_E_INVALID_ARG);
	n = vfs_acl(vfs, 2, no_other, 2);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n, 0), EXT4FS_E_INVALID_ARG);
	n = vfs_acl(vfs, 2, bad_perm, 3);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n, 0), EXT4FS_E_INVALID_ARG);
	n = vfs_acl(vfs, 2, bad_tag, 4);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n, 0), EXT4FS_E_INVALID_ARG);
	n = vfs_acl(vfs, 3, ok, 3);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n, 0), EXT4FS_E_INVALID_ARG);
	n = vfs_acl(vfs, 2, ok, 3);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n - 1, 0), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, 4, 0), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, NULL, 0, 0), EXT4FS_E_INVALID_ARG);
	assert_memory_equal(&in, &before, sizeof(in));
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, acl, vfs, n, 0), 0);

	/* The disk-format reader: truncated entries, unknown tags, wrong version. */
	static const unsigned char trunc[] = { 1, 0, 0, 0, 2, 0, 4, 0, 0xE8, 3 };
	static const unsigned char badtag[] = { 1, 0, 0, 0, 0x40, 0, 4, 0 };
	static const unsigned char vfsver[] = { 2, 0, 0, 0, 1, 0, 6, 0 };
	static const unsigned char empty[] = { 1, 0, 0, 0 };
	assert_int_equal(ext4fs_acl_to_vfs(trunc, sizeof(trunc), &out, &out_len), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_acl_to_vfs(badtag, sizeof(badtag), &out, &out_len), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_acl_to_vfs(vfsver, sizeof(vfsver), &out, &out_len), EXT4FS_E_INVALID_ARG);
	assert_null(out);
	assert_int_equal(ext4fs_acl_to_vfs(empty, sizeof(empty), &out, &out_len), 0);
	assert_int_equal(out_len, 4);
	assert_int_equal(ld32(out), 2);
	free(out);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/* -- Corrupt input ----------------------------------------------------------- */

/* A damaged attribute block is refused, not rewritten. */
static void corrupt_block_refused(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char big[300], *buf;
	uint32_t ino, bs = 4096;
	uint64_t blk;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	open_image(&img, bs);
	ino = new_file(&img, "f", &in);
	memset(big, 3, sizeof(big));
	set_ok(&img, ino, &in, "user.big", big, sizeof(big));
	blk = file_acl(&img, &in);
	buf = malloc(bs);
	assert_non_null(buf);
	assert_int_equal(ext4fs_block_read(img.fs, blk, buf), 0);
	/* A value offset pointing into the header. */
	st16(buf + 32 + 2, 8);
	st32(buf + 16, ext4fs_xattr_block_csum(img.fs, blk, buf));
	assert_int_equal(ext4fs_block_write(img.fs, blk, buf), 0);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.other", big, sizeof(big), 0),
			 EXT4FS_E_XATTR_CORRUPT);
	/* A bad checksum. */
	st16(buf + 32 + 2, (uint16_t)(bs - 300));
	st32(buf + 16, 0x12345678);
	assert_int_equal(ext4fs_block_write(img.fs, blk, buf), 0);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.big"), EXT4FS_E_XATTR_CSUM);
	assert_int_equal(ext4fs_xattr_release(img.fs, ino, &in), EXT4FS_E_XATTR_CSUM);
	assert_int_equal(file_acl(&img, &in), blk);
	free(buf);
	rw_image_close(&img);
}

/*
 * Values that overlap one another each lie inside the block, so the reader
 * accepts them; but a change re-encodes the region packing the values
 * apart, and three 900-byte values do not fit a 1 KiB block: encode_region()
 * counted its value end down past the entries and wrapped around, writing
 * far outside the new block's buffer (issue 20).  Such a block is refused.
 */
static void overlapping_values_refused(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char val[300], *buf;
	uint32_t ino, bs = 1024;
	uint64_t blk;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	open_image(&img, bs);
	ino = new_file(&img, "f", &in);
	memset(val, 5, sizeof(val));
	set_ok(&img, ino, &in, "user.a", val, sizeof(val));
	set_ok(&img, ino, &in, "user.b", val, sizeof(val));
	set_ok(&img, ino, &in, "user.c", val, sizeof(val));
	blk = file_acl(&img, &in);
	assert_true(blk != 0);
	buf = malloc(bs);
	assert_non_null(buf);
	assert_int_equal(ext4fs_block_read(img.fs, blk, buf), 0);
	/* Three 20-byte entries from 32, the end marker at 92: all three values at 100, 900 bytes each. */
	for (uint32_t off = 32; off < 92; off += 20) {
		assert_int_equal(buf[off], 1);
		st16(buf + off + 2, 100);
		st32(buf + off + 8, 900);
	}
	assert_int_equal(ld32(buf + 92), 0);
	st32(buf + 16, ext4fs_xattr_block_csum(img.fs, blk, buf));
	assert_int_equal(ext4fs_block_write(img.fs, blk, buf), 0);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.a"), EXT4FS_E_XATTR_CORRUPT);
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.d", val, 8, 0), EXT4FS_E_XATTR_CORRUPT);
	assert_int_equal(file_acl(&img, &in), blk);
	unsigned char *now = malloc(bs);
	assert_non_null(now);
	assert_int_equal(ext4fs_block_read(img.fs, blk, now), 0);
	assert_memory_equal(now, buf, bs);
	free(now);
	free(buf);
	rw_image_close(&img);
}

/* -- Inline data ------------------------------------------------------------- */

/*
 * An inline-data file keeps its "system.data" entry in the inode whatever
 * else comes and goes, and the name cannot be set or removed through this
 * interface.  The file is made by hand: empty, INLINE_DATA_FL, and an empty
 * system.data value as the first in-inode attribute.
 */
/*
 * A 4 KiB inline_data image holding /inl, an empty inline file: i_block
 * zero, an empty system.data in the inode body (as the kernel makes one).
 */
static uint32_t new_inline_file(struct rw_image *img, struct ext4fs_inode *in)
{
	unsigned char *raw;
	uint32_t ino, isize, at;

	memset(&cfg, 0, sizeof(cfg));
	cfg.inline_data = 1;
	open_image(img, 4096);
	ino = new_file(img, "inl", in);
	in->i_flags = (in->i_flags & ~EXT4FS_EXTENTS_FL) | EXT4FS_INLINE_DATA_FL;
	memset(in->i_block, 0, sizeof(in->i_block));
	assert_int_equal(ext4fs_inode_write(img->fs, ino, in), 0);
	isize = ext4fs_geom(img->fs)->inode_size;
	raw = calloc(1, isize);
	assert_non_null(raw);
	assert_int_equal(ext4fs_inode_read_raw(img->fs, ino, raw), 0);
	at = 128 + in->i_extra_isize;
	memset(raw + at, 0, isize - at);
	st32(raw + at, EXT4FS_XATTR_MAGIC);
	raw[at + 4] = 4;                    /* e_name_len */
	raw[at + 5] = 7;                    /* system. */
	memcpy(raw + at + 4 + 16, "data", 4);
	assert_int_equal(ext4fs_inode_write_raw(img->fs, ino, raw), 0);
	free(raw);
	assert_int_equal(ext4fs_inode_read(img->fs, ino, in), 0);
	rw_image_assert_clean(img);
	return ino;
}

/* Store len bytes of data as /inl's content, i_size following, and read them back. */
static void inline_write_ok(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, const unsigned char *data,
			    size_t len)
{
	unsigned char *back = NULL;
	size_t back_len = 0;

	assert_int_equal(ext4fs_inline_data_write(img->fs, ino, in, data, len), 0);
	ext4fs_inode_set_size(in, len);
	assert_int_equal(ext4fs_inode_write(img->fs, ino, in), 0);
	reopen_read(img, ino, in);
	assert_int_equal(ext4fs_inline_data_read(img->fs, ino, in, &back, &back_len), 0);
	assert_int_equal(back_len, len > 60 ? len : 60);
	assert_memory_equal(back, data, len);
	free(back);
	assert_int_equal(where_is(img, ino, in, "system.data"), 0);
	rw_image_assert_clean(img);
}

static void inline_data_entry_is_kept(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char big[400];
	uint32_t ino;

	(void)state;
	ino = new_inline_file(&img, &in);

	memset(big, 7, sizeof(big));
	set_ok(&img, ino, &in, "user.a", "1", 1);
	set_ok(&img, ino, &in, "user.big", big, sizeof(big));
	assert_int_equal(where_is(&img, ino, &in, "system.data"), 0);
	assert_int_equal(where_is(&img, ino, &in, "user.a"), 0);
	assert_int_equal(where_is(&img, ino, &in, "user.big"), 1);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "system.data"), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.a"), 0);
	check_value(&img, ino, &in, "system.data", "", 0);
	rw_image_assert_clean(&img);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.big"), 0);
	assert_int_equal(file_acl(&img, &in), 0);
	assert_int_equal(where_is(&img, ino, &in, "system.data"), 0);
	/* Releasing an inode without a block does nothing. */
	assert_int_equal(ext4fs_xattr_release(img.fs, ino, &in), 0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

/*
 * The whole inline area written at once: i_block alone, then spilling into
 * system.data, then shrinking again; a value may grow only by the bytes
 * the body has free (e2fsprogs' rule), and a refusal changes nothing.
 */
static void inline_data_write_area(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in, before;
	unsigned char data[200], fill[16];
	uint32_t ino;

	(void)state;
	ino = new_inline_file(&img, &in);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 1);
	inline_write_ok(&img, ino, &in, data, 40);
	inline_write_ok(&img, ino, &in, data, 100);
	inline_write_ok(&img, ino, &in, data, 60);
	inline_write_ok(&img, ino, &in, data, 90);
	/*
	 * The body's 92 bytes (after i_extra_isize and the magic) are now full:
	 * end marker, two entries of 20, values padded to 32 and 16.  Growing
	 * the value to 32 bytes would fit its padding, but e2fsprogs wants the
	 * growth free.
	 */
	memset(fill, 'f', sizeof(fill));
	set_ok(&img, ino, &in, "user.a", fill, sizeof(fill));
	assert_int_equal(where_is(&img, ino, &in, "user.a"), 0);
	before = in;
	assert_int_equal(ext4fs_inline_data_write(img.fs, ino, &in, data, 92), EXT4FS_E_XATTR_NO_SPACE);
	assert_memory_equal(&in, &before, sizeof(in));
	check_value(&img, ino, &in, "system.data", data + 60, 30);
	inline_write_ok(&img, ino, &in, data, 88);
	check_value(&img, ino, &in, "user.a", fill, sizeof(fill));
	/* Without the inline-data flag there is no area. */
	in.i_flags &= ~EXT4FS_INLINE_DATA_FL;
	assert_int_equal(ext4fs_inline_data_write(img.fs, ino, &in, data, 10), EXT4FS_E_INVALID_ARG);
	rw_image_close(&img);
}

/* -- Values in EA inodes ----------------------------------------------------- */

static int count_ea_entries(const struct ext4fs_xattr *x, void *arg)
{
	if (x->value_inum)
		(*(int *)arg)++;
	return 0;
}

/*
 * An entry whose value lives in an EA inode (written by the kernel) is kept
 * through other changes but cannot be changed, removed or released here.
 * The entry is made by hand in the attribute block; its EA inode is never
 * read, so none is made.
 */
static void ea_inode_entries_kept_and_refused(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in, before;
	unsigned char big[300], *buf;
	uint32_t ino, bs = 4096, off;
	uint64_t blk;
	int n = 0;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.ea_inode = 1;
	open_image(&img, bs);
	ino = new_file(&img, "f", &in);
	memset(big, 9, sizeof(big));
	set_ok(&img, ino, &in, "user.big", big, sizeof(big));
	blk = file_acl(&img, &in);
	buf = malloc(bs);
	assert_non_null(buf);
	assert_int_equal(ext4fs_block_read(img.fs, blk, buf), 0);
	/* Append "user.z" (sorted last) with e_value_inum 20 and a 100000-byte value. */
	off = 32 + ((16 + 3 + 3) & ~3U);
	assert_int_equal(ld32(buf + off), 0);
	buf[off] = 1;
	buf[off + 1] = 1;
	st32(buf + off + 4, 20);
	st32(buf + off + 8, 100000);
	st32(buf + off + 12, 0xABCD);
	buf[off + 16] = 'z';
	st32(buf + 16, ext4fs_xattr_block_csum(img.fs, blk, buf));
	assert_int_equal(ext4fs_block_write(img.fs, blk, buf), 0);
	free(buf);

	set_ok(&img, ino, &in, "user.big2", big, sizeof(big));
	assert_int_equal(ext4fs_xattr_iterate(img.fs, ino, &in, EXT4FS_XATTR_ITER_NO_EA_VALUES,
					      count_ea_entries, &n), 0);
	assert_int_equal(n, 1);
	before = in;
	assert_int_equal(ext4fs_xattr_set(img.fs, ino, &in, "user.z", "1", 1, 0), EXT4FS_E_UNSUPP_FEATURE);
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.z"), EXT4FS_E_UNSUPP_FEATURE);
	assert_int_equal(ext4fs_xattr_release(img.fs, ino, &in), EXT4FS_E_UNSUPP_FEATURE);
	assert_memory_equal(&in, &before, sizeof(in));
	assert_int_equal(ext4fs_xattr_remove(img.fs, ino, &in, "user.big"), 0);
	n = 0;
	assert_int_equal(ext4fs_xattr_iterate(img.fs, ino, &in, EXT4FS_XATTR_ITER_NO_EA_VALUES,
					      count_ea_entries, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(where_is(&img, ino, &in, "user.big"), -1);
	assert_int_equal(where_is(&img, ino, &in, "user.big2"), 1);
	assert_int_equal(where_is(&img, ino, &in, "user.z"), 1);
	check_block(&img, &in, 1);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scenario_4k_csum),
		cmocka_unit_test(scenario_1k_csum),
		cmocka_unit_test(scenario_4k_no_csum),
		cmocka_unit_test(scenario_1k_ext2ish),
		cmocka_unit_test(scenario_128_byte_inodes_1k_csum),
		cmocka_unit_test(scenario_128_byte_inodes_4k_no_csum),
		cmocka_unit_test(scenario_512_byte_inodes),
		cmocka_unit_test(replace_moves_between_inode_and_block),
		cmocka_unit_test(block_entries_sorted_and_hashed),
		cmocka_unit_test(refusals_change_nothing),
		cmocka_unit_test(ext_attr_feature_is_turned_on),
		cmocka_unit_test(shared_block_copy_on_write_4k),
		cmocka_unit_test(shared_block_copy_on_write_1k_no_csum),
		cmocka_unit_test(acl_round_trip_4k),
		cmocka_unit_test(acl_round_trip_1k_128_byte_inodes),
		cmocka_unit_test(acl_malformed_refused),
		cmocka_unit_test(corrupt_block_refused),
		cmocka_unit_test(overlapping_values_refused),
		cmocka_unit_test(inline_data_entry_is_kept),
		cmocka_unit_test(inline_data_write_area),
		cmocka_unit_test(ea_inode_entries_kept_and_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
