/* xattr.c - validated iteration of in-inode and block extended attributes. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/xattr.h"
#include "blockmap_internal.h"
#include "fs_internal.h"
#include "ondisk_le.h"
#include "xattr_internal.h"

#define INODE_EXTRA_ISIZE_OFF 0x80

static const char *const prefix_table[] = {
	[EXT4FS_XATTR_INDEX_USER] = "user.",
	[EXT4FS_XATTR_INDEX_POSIX_ACL_ACCESS] = "system.posix_acl_access",
	[EXT4FS_XATTR_INDEX_POSIX_ACL_DEFAULT] = "system.posix_acl_default",
	[EXT4FS_XATTR_INDEX_TRUSTED] = "trusted.",
	[EXT4FS_XATTR_INDEX_LUSTRE] = "lustre.",
	[EXT4FS_XATTR_INDEX_SECURITY] = "security.",
	[EXT4FS_XATTR_INDEX_SYSTEM] = "system.",
	[EXT4FS_XATTR_INDEX_RICHACL] = "system.richacl",
	[EXT4FS_XATTR_INDEX_HURD] = "gnu.",
};

const char *ext4fs_xattr_prefix(unsigned name_index)
{
	if (name_index >= sizeof(prefix_table) / sizeof(prefix_table[0]))
		return NULL;
	return prefix_table[name_index];
}

uint32_t ext4fs_xattr_block_csum(const struct ext4fs_fs *fs, uint64_t blk, const void *block)
{
	static const unsigned char zero[4];
	const unsigned char *b = block;
	unsigned char le_blk[8];
	uint32_t crc;

	le64_store(le_blk, blk);
	crc = ext4fs_crc32c(fs->geom.csum_seed, le_blk, sizeof(le_blk));
	crc = ext4fs_crc32c(crc, b, XH_CHECKSUM);
	crc = ext4fs_crc32c(crc, zero, sizeof(zero));
	return ext4fs_crc32c(crc, b + XH_CHECKSUM + 4, fs->geom.block_size - XH_CHECKSUM - 4);
}

/* One run of entries and the values they point at. */
struct region {
	enum ext4fs_xattr_where where;
	uint64_t block;              /* IN_BLOCK: its number */
	const unsigned char *base;   /* inode record or block */
	uint32_t first;              /* offset of the first entry */
	uint32_t end;                /* end of the region */
	uint32_t value_base;         /* e_value_offs counts from here */
	uint32_t last;               /* offset of the end marker, set by check_region() */
};

static int corrupt(struct ext4fs_fs *fs, uint32_t ino, const struct region *r, uint32_t off,
		   const char *what)
{
	if (r->where == EXT4FS_XATTR_IN_BLOCK)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				       "inode %u: extended attribute block %llu, entry at offset %u: %s",
				       ino, (unsigned long long)r->block, off, what);
	return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
			       "inode %u: in-inode extended attribute at offset %u: %s", ino, off, what);
}

/* Check every entry and value of r before any is handed out. */
static int check_region(struct ext4fs_fs *fs, uint32_t ino, struct region *r)
{
	const unsigned char *b = r->base;
	uint32_t off = r->first;

	/* Entries: each must leave room for the 4-byte end marker after it. */
	for (;;) {
		if (r->end - off < 4)
			return corrupt(fs, ino, r, off, "entry table has no end marker");
		if (le32_load(b + off) == 0)
			break;
		if (r->end - off < EXT4FS_XATTR_ENTRY_SIZE)
			return corrupt(fs, ino, r, off, "entry runs past the end");
		uint8_t name_len = b[off + XE_NAME_LEN];
		uint32_t len = xattr_entry_len(name_len);
		if (len > r->end - off || r->end - off - len < 4)
			return corrupt(fs, ino, r, off, "entry name runs past the end");
		if (memchr(b + off + XE_NAME, 0, name_len))
			return corrupt(fs, ino, r, off, "entry name contains a NUL byte");
		off += len;
	}
	r->last = off;

	/* Values: inside the region, after the entry table, padding included. */
	for (off = r->first; off < r->last; off += xattr_entry_len(b[off + XE_NAME_LEN])) {
		uint32_t size = le32_load(b + off + XE_VALUE_SIZE);
		uint32_t inum = le32_load(b + off + XE_VALUE_INUM);
		uint32_t offs = le16_load(b + off + XE_VALUE_OFFS);

		if (inum) {
			if (!ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_EA_INODE))
				return corrupt(fs, ino, r, off, "value in an EA inode without the ea_inode feature");
			if (inum == EXT4FS_ROOT_INO || inum < fs->geom.first_ino ||
			    inum > fs->geom.inodes_count)
				return corrupt(fs, ino, r, off, "invalid EA inode number");
		}
		if (size > EXT4FS_XATTR_SIZE_MAX)
			return corrupt(fs, ino, r, off, "value size is too large");
		if (size == 0 || inum)
			continue;
		if (offs > r->end - r->value_base)
			return corrupt(fs, ino, r, off, "value offset is out of bounds");
		uint32_t v = r->value_base + offs;
		if (v < r->last + 4)
			return corrupt(fs, ino, r, off, "value overlaps the entry table");
		if (size > r->end - v || xattr_value_padded(size) > r->end - v)
			return corrupt(fs, ino, r, off, "value runs past the end");
	}
	return 0;
}

/* Read the value kept in EA inode inum; *value is malloc'd. */
static int read_ea_inode(struct ext4fs_fs *fs, uint32_t ino, uint32_t inum, uint32_t size,
			 unsigned char **value)
{
	struct ext4fs_inode ea;
	size_t got = 0;
	int err;

	*value = NULL;
	err = ext4fs_inode_read(fs, inum, &ea);
	if (err)
		return err;
	if (!(ea.i_flags & EXT4FS_EA_INODE_FL))
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				       "inode %u: EA inode %u lacks the EA_INODE flag", ino, inum);
	if (ext4fs_inode_size(&ea) != size)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				       "inode %u: EA inode %u has size %llu, the entry says %u", ino, inum,
				       (unsigned long long)ext4fs_inode_size(&ea), size);
	*value = malloc(size ? size : 1);
	if (!*value)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for EA inode %u", ino, inum);
	/* Through the block map, as the kernel reads EA inodes (they carry no inline data). */
	err = size ? ext4fs__blockmap_read(fs, inum, &ea, 0, *value, size, &got) : 0;
	if (!err && got != size)
		err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT, "inode %u: EA inode %u is short", ino, inum);
	if (err) {
		free(*value);
		*value = NULL;
	}
	return err;
}

/* Hand each entry of a checked region to fn. */
static int emit_region(struct ext4fs_fs *fs, uint32_t ino, const struct region *r, unsigned flags,
		       ext4fs_xattr_fn fn, void *arg)
{
	const unsigned char *b = r->base;
	char name[EXT4FS_XATTR_NAME_MAX + 1];
	int err = 0;

	for (uint32_t off = r->first; off < r->last; off += xattr_entry_len(b[off + XE_NAME_LEN])) {
		struct ext4fs_xattr x = { 0 };
		unsigned char *ea_value = NULL;
		const char *prefix;
		size_t plen;

		x.where = r->where;
		x.block = r->block;
		x.entry_offset = off;
		x.suffix_len = b[off + XE_NAME_LEN];
		x.name_index = b[off + XE_NAME_INDEX];
		x.value_offs = le16_load(b + off + XE_VALUE_OFFS);
		x.value_inum = le32_load(b + off + XE_VALUE_INUM);
		x.value_len = le32_load(b + off + XE_VALUE_SIZE);
		x.hash = le32_load(b + off + XE_HASH);
		prefix = ext4fs_xattr_prefix(x.name_index);
		plen = prefix ? strlen(prefix) : 0;
		memcpy(name, prefix ? prefix : "", plen);
		memcpy(name + plen, b + off + XE_NAME, x.suffix_len);
		name[plen + x.suffix_len] = '\0';
		x.name = name;
		x.suffix = name + plen;
		if (x.value_inum) {
			if (!(flags & EXT4FS_XATTR_ITER_NO_EA_VALUES)) {
				err = read_ea_inode(fs, ino, x.value_inum, x.value_len, &ea_value);
				if (err)
					return err;
				x.value = ea_value;
			}
		} else {
			x.value = b + r->value_base + x.value_offs;
		}
		err = fn(&x, arg);
		free(ea_value);
		if (err)
			return err;
	}
	return 0;
}

static int iterate_inode_body(struct ext4fs_fs *fs, uint32_t ino, unsigned flags,
			      ext4fs_xattr_fn fn, void *arg)
{
	uint32_t isize = fs->geom.inode_size;
	unsigned char *raw = NULL;
	struct region r = { .where = EXT4FS_XATTR_IN_INODE };
	int err = 0;

	if (isize <= EXT4FS_INODE_BASE_SIZE)
		return 0;
	raw = malloc(isize);
	if (!raw)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes", ino);
	err = ext4fs_inode_read_raw_verified(fs, ino, raw);
	if (err)
		goto out;
	uint32_t extra = le16_load(raw + INODE_EXTRA_ISIZE_OFF);
	if ((extra & 3) || extra > isize - EXT4FS_INODE_BASE_SIZE) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				      "inode %u: i_extra_isize %u does not fit a %u-byte inode", ino, extra, isize);
		goto out;
	}
	uint32_t start = EXT4FS_INODE_BASE_SIZE + extra;
	if (isize - start < EXT4FS_XATTR_IHDR_SIZE + 4 || le32_load(raw + start) != EXT4FS_XATTR_MAGIC)
		goto out;
	r.base = raw;
	r.first = start + EXT4FS_XATTR_IHDR_SIZE;
	r.end = isize;
	r.value_base = r.first;
	err = check_region(fs, ino, &r);
	if (!err)
		err = emit_region(fs, ino, &r, flags, fn, arg);
out:
	free(raw);
	return err;
}

static int iterate_block(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			 unsigned flags, ext4fs_xattr_fn fn, void *arg)
{
	uint64_t blk = ext4fs_inode_file_acl(fs, inode);
	uint32_t bs = fs->geom.block_size;
	unsigned char *buf = NULL;
	struct region r = { .where = EXT4FS_XATTR_IN_BLOCK, .block = blk };
	int err;

	if (!blk)
		return 0;
	if (!ext4fs_block_ptr_valid(fs, blk) || blk == fs->geom.first_data_block)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				       "inode %u: extended attribute block %llu is outside the file system",
				       ino, (unsigned long long)blk);
	buf = malloc(bs);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes", ino);
	err = ext4fs_block_read(fs, blk, buf);
	if (err) {
		ext4fs__fs_fail(fs, err, "inode %u: reading extended attribute block %llu: %s", ino,
				(unsigned long long)blk, ext4fs_strerror(err));
		goto out;
	}
	if (le32_load(buf + XH_MAGIC) != EXT4FS_XATTR_MAGIC) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				      "inode %u: extended attribute block %llu has bad magic 0x%08x", ino,
				      (unsigned long long)blk, le32_load(buf + XH_MAGIC));
		goto out;
	}
	if (le32_load(buf + XH_BLOCKS) != 1) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				      "inode %u: extended attribute block %llu has h_blocks %u (must be 1)",
				      ino, (unsigned long long)blk, le32_load(buf + XH_BLOCKS));
		goto out;
	}
	if (fs->geom.has_metadata_csum && fs_csum_strict(fs)) {
		uint32_t want = ext4fs_xattr_block_csum(fs, blk, buf);
		if (le32_load(buf + XH_CHECKSUM) != want) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CSUM,
					      "inode %u: extended attribute block %llu checksum is 0x%08x, should be 0x%08x",
					      ino, (unsigned long long)blk, le32_load(buf + XH_CHECKSUM), want);
			goto out;
		}
	}
	r.base = buf;
	r.first = EXT4FS_XATTR_HEADER_SIZE;
	r.end = bs;
	r.value_base = 0;
	err = check_region(fs, ino, &r);
	if (!err)
		err = emit_region(fs, ino, &r, flags, fn, arg);
out:
	free(buf);
	return err;
}

int ext4fs_xattr_iterate(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			 unsigned flags, ext4fs_xattr_fn fn, void *arg)
{
	int err = 0;

	if (!(flags & EXT4FS_XATTR_ITER_NO_INODE))
		err = iterate_inode_body(fs, ino, flags, fn, arg);
	if (!err && !(flags & EXT4FS_XATTR_ITER_NO_BLOCK))
		err = iterate_block(fs, ino, inode, flags, fn, arg);
	return err;
}

struct xattr_get {
	const char *name;
	void *value;
	size_t len;
};

static int xattr_get_match(const struct ext4fs_xattr *x, void *arg)
{
	struct xattr_get *g = arg;

	if (strcmp(x->name, g->name) != 0)
		return 0;
	g->value = malloc(x->value_len ? x->value_len : 1);
	if (!g->value)
		return EXT4FS_E_NO_MEMORY;
	if (x->value_len)
		memcpy(g->value, x->value, x->value_len);
	g->len = x->value_len;
	return 1;
}

int ext4fs_xattr_get(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     const char *full_name, void **value, size_t *len)
{
	struct xattr_get g = { .name = full_name };
	int err;

	*value = NULL;
	*len = 0;
	err = ext4fs_xattr_iterate(fs, ino, inode, 0, xattr_get_match, &g);
	if (err == EXT4FS_E_NO_MEMORY && !g.value)
		return ext4fs__fs_fail(fs, err, "inode %u: no memory for attribute %s", ino, full_name);
	if (err < 0)
		return err;
	if (err == 0)
		return ext4fs__fs_fail(fs, -ENODATA, "inode %u has no extended attribute %s", ino, full_name);
	*value = g.value;
	*len = g.len;
	return 0;
}
