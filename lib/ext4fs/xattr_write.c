/*
 * xattr_write.c - creating, replacing and removing extended attributes, and
 * the two POSIX ACL formats.
 *
 * A change is made on a model of the inode's attributes: the in-inode
 * entries and the block entries are parsed (and checked) into two lists
 * whose names and values point into the buffers they were read from, the
 * change is applied to the lists, and every region that changed is written
 * out again in full.  So a region is always laid out the same way: entries
 * from the front in list order, values packed from the end in list order,
 * zeros in between.  The kernel edits regions in place instead; both give
 * regions that the kernel and e2fsck accept, and re-encoding keeps this file
 * free of offset bookkeeping.
 *
 * Order of writes, so that a failure part way leaves a state e2fsck can
 * repair at worst: the new attribute block first, then the inode record
 * (which makes the block reachable), then the release of the block the
 * inode no longer uses.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/xattr.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "ondisk_le.h"
#include "xattr_internal.h"

#define SUFFIX_MAX 255

/* -- Names ----------------------------------------------------------------- */

/* Namespaces a caller may write.  "whole" names carry no suffix. */
static const struct {
	const char *prefix;
	uint8_t index;
	uint8_t whole;
} name_table[] = {
	{ "user.", EXT4FS_XATTR_INDEX_USER, 0 },
	{ "trusted.", EXT4FS_XATTR_INDEX_TRUSTED, 0 },
	{ "security.", EXT4FS_XATTR_INDEX_SECURITY, 0 },
	{ "gnu.", EXT4FS_XATTR_INDEX_HURD, 0 },
	{ "system.posix_acl_access", EXT4FS_XATTR_INDEX_POSIX_ACL_ACCESS, 1 },
	{ "system.posix_acl_default", EXT4FS_XATTR_INDEX_POSIX_ACL_DEFAULT, 1 },
	{ "system.richacl", EXT4FS_XATTR_INDEX_RICHACL, 1 },
};

static int parse_name(struct ext4fs_fs *fs, uint32_t ino, const char *full, uint8_t *index,
		      const unsigned char **suffix, uint8_t *suffix_len)
{
	if (!full)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: no attribute name", ino);
	for (size_t i = 0; i < sizeof(name_table) / sizeof(name_table[0]); i++) {
		const char *p = name_table[i].prefix;
		size_t plen = strlen(p);

		if (strncmp(full, p, plen) != 0)
			continue;
		size_t slen = strlen(full + plen);
		if (name_table[i].whole ? slen != 0 : slen == 0)
			break;
		if (slen > SUFFIX_MAX)
			return ext4fs__fs_fail(fs, EXT4FS_E_NAME_TOO_LONG,
					       "inode %u: attribute name %.40s... is longer than %u bytes after its prefix",
					       ino, full, SUFFIX_MAX);
		*index = name_table[i].index;
		*suffix = (const unsigned char *)full + plen;
		*suffix_len = (uint8_t)slen;
		return 0;
	}
	if (strcmp(full, "system.data") == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u: system.data belongs to inline data and cannot be set as an attribute",
				       ino);
	return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: %.80s is not an attribute name ext4 stores",
			       ino, full);
}

/* -- POSIX ACLs ------------------------------------------------------------ */

/*
 * Both formats start with a 32-bit little-endian version and list entries
 * of tag, permissions and id.  getxattr(2) gives version 2 with every entry
 * 8 bytes; ext4 stores version 1 where the four entries that name no one
 * (owner, owning group, mask, others) drop their id and take 4 bytes.
 */
#define ACL_VFS_VERSION   2
#define ACL_DISK_VERSION  1
#define ACL_USER_OBJ      0x01
#define ACL_USER          0x02
#define ACL_GROUP_OBJ     0x04
#define ACL_GROUP         0x08
#define ACL_MASK          0x10
#define ACL_OTHER         0x20
#define ACL_NO_ID         0xFFFFFFFFU
#define ACL_PERM_BITS     0x7

struct acl_ent {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

static int acl_has_id(uint16_t tag)
{
	return tag == ACL_USER || tag == ACL_GROUP;
}

/* Entries of a version-2 value; *ents is malloc'd.  Structure only. */
static int acl_parse_vfs(const unsigned char *v, size_t len, struct acl_ent **ents, size_t *n)
{
	*ents = NULL;
	*n = 0;
	if (len < 4 || (len - 4) % 8 != 0 || le32_load(v) != ACL_VFS_VERSION)
		return EXT4FS_E_INVALID_ARG;
	size_t count = (len - 4) / 8;
	*ents = malloc((count ? count : 1) * sizeof(**ents));
	if (!*ents)
		return EXT4FS_E_NO_MEMORY;
	for (size_t i = 0; i < count; i++) {
		const unsigned char *e = v + 4 + i * 8;

		(*ents)[i].tag = le16_load(e);
		(*ents)[i].perm = le16_load(e + 2);
		(*ents)[i].id = acl_has_id((*ents)[i].tag) ? le32_load(e + 4) : ACL_NO_ID;
	}
	*n = count;
	return 0;
}

/* Entries of a version-1 (ext4) value; *ents is malloc'd.  Structure only. */
static int acl_parse_disk(const unsigned char *v, size_t len, struct acl_ent **ents, size_t *n)
{
	size_t off = 4, count = 0;

	*ents = NULL;
	*n = 0;
	if (len < 4 || le32_load(v) != ACL_DISK_VERSION)
		return EXT4FS_E_INVALID_ARG;
	/* Every entry takes at least 4 bytes, which bounds the count. */
	*ents = malloc(((len - 4) / 4 + 1) * sizeof(**ents));
	if (!*ents)
		return EXT4FS_E_NO_MEMORY;
	while (off < len) {
		struct acl_ent *a = &(*ents)[count];

		if (len - off < 4)
			goto bad;
		a->tag = le16_load(v + off);
		a->perm = le16_load(v + off + 2);
		a->id = ACL_NO_ID;
		switch (a->tag) {
		case ACL_USER_OBJ:
		case ACL_GROUP_OBJ:
		case ACL_MASK:
		case ACL_OTHER:
			off += 4;
			break;
		case ACL_USER:
		case ACL_GROUP:
			if (len - off < 8)
				goto bad;
			a->id = le32_load(v + off + 4);
			off += 8;
			break;
		default:
			goto bad;
		}
		count++;
	}
	*n = count;
	return 0;
bad:
	free(*ents);
	*ents = NULL;
	return EXT4FS_E_INVALID_ARG;
}

/*
 * The rules the kernel's setxattr applies: owner, named users, owning
 * group, named groups, mask, others, in that order; exactly one owner,
 * owning group and others; a mask whenever there are named entries;
 * permissions within rwx.
 */
static int acl_valid(const struct acl_ent *e, size_t n)
{
	enum { S_USER_OBJ, S_USER, S_GROUP, S_OTHER, S_DONE } state = S_USER_OBJ;
	int named = 0;

	for (size_t i = 0; i < n; i++) {
		if (e[i].perm & ~ACL_PERM_BITS)
			return 0;
		switch (e[i].tag) {
		case ACL_USER_OBJ:
			if (state != S_USER_OBJ)
				return 0;
			state = S_USER;
			break;
		case ACL_USER:
			if (state != S_USER)
				return 0;
			named = 1;
			break;
		case ACL_GROUP_OBJ:
			if (state != S_USER)
				return 0;
			state = S_GROUP;
			break;
		case ACL_GROUP:
			if (state != S_GROUP)
				return 0;
			named = 1;
			break;
		case ACL_MASK:
			if (state != S_GROUP)
				return 0;
			state = S_OTHER;
			break;
		case ACL_OTHER:
			if (state != S_OTHER && !(state == S_GROUP && !named))
				return 0;
			state = S_DONE;
			break;
		default:
			return 0;
		}
	}
	return state == S_DONE;
}

static int acl_encode(const struct acl_ent *e, size_t n, int disk, void **out, size_t *out_len)
{
	size_t len = 4;
	unsigned char *p;

	for (size_t i = 0; i < n; i++)
		len += (!disk || acl_has_id(e[i].tag)) ? 8 : 4;
	p = malloc(len);
	if (!p)
		return EXT4FS_E_NO_MEMORY;
	le32_store(p, disk ? ACL_DISK_VERSION : ACL_VFS_VERSION);
	size_t off = 4;
	for (size_t i = 0; i < n; i++) {
		le16_store(p + off, e[i].tag);
		le16_store(p + off + 2, e[i].perm);
		off += 4;
		if (!disk || acl_has_id(e[i].tag)) {
			le32_store(p + off, acl_has_id(e[i].tag) ? e[i].id : ACL_NO_ID);
			off += 4;
		}
	}
	*out = p;
	*out_len = len;
	return 0;
}

int ext4fs_acl_to_vfs(const void *disk, size_t len, void **out, size_t *out_len)
{
	struct acl_ent *e = NULL;
	size_t n = 0;
	int err;

	*out = NULL;
	*out_len = 0;
	if (!disk)
		return EXT4FS_E_INVALID_ARG;
	err = acl_parse_disk(disk, len, &e, &n);
	if (!err)
		err = acl_encode(e, n, 0, out, out_len);
	free(e);
	return err;
}

/* A caller's ACL value (either format) in ext4's format, checked; *out is malloc'd. */
static int acl_to_disk(struct ext4fs_fs *fs, uint32_t ino, const char *name, const void *value,
		       size_t len, void **out, size_t *out_len)
{
	struct acl_ent *e = NULL;
	size_t n = 0;
	int err;

	*out = NULL;
	if (!value || len < 4)
		err = EXT4FS_E_INVALID_ARG;
	else if (le32_load(value) == ACL_DISK_VERSION)
		err = acl_parse_disk(value, len, &e, &n);
	else
		err = acl_parse_vfs(value, len, &e, &n);
	if (!err && !acl_valid(e, n))
		err = EXT4FS_E_INVALID_ARG;
	if (!err)
		err = acl_encode(e, n, 1, out, out_len);
	free(e);
	if (err == EXT4FS_E_INVALID_ARG)
		return ext4fs__fs_fail(fs, err, "inode %u: the value for %s is not a valid POSIX ACL", ino, name);
	if (err)
		return ext4fs__fs_fail(fs, err, "inode %u: no memory to convert %s", ino, name);
	return 0;
}

/* -- The model ------------------------------------------------------------- */

struct xent {
	uint8_t index;
	uint8_t name_len;
	const unsigned char *name;
	const unsigned char *value;  /* size bytes; NULL when the value is in an EA inode */
	uint32_t size;
	uint32_t inum;
	uint32_t hash;               /* as stored; only kept for EA-inode values */
};

struct xlist {
	struct xent *e;
	uint32_t n;                  /* entries; room for one more is always allocated */
};

/* Bytes an entry takes in its region: the entry and its padded value. */
static uint32_t entry_cost(const struct xent *x)
{
	return xattr_entry_len(x->name_len) + (x->inum ? 0 : xattr_value_padded(x->size));
}

/* Bytes a region needs for the list: entries, end marker, values. */
static uint32_t list_bytes(const struct xlist *l)
{
	uint32_t sum = 4;

	for (uint32_t i = 0; i < l->n; i++)
		sum += entry_cost(&l->e[i]);
	return sum;
}

/* The kernel's order for block entries: name index, then name length, then name. */
static int entry_cmp(const struct xent *a, const struct xent *b)
{
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	return memcmp(a->name, b->name, a->name_len);
}

static int list_find(const struct xlist *l, const struct xent *x)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->e[i].index == x->index && l->e[i].name_len == x->name_len &&
		    memcmp(l->e[i].name, x->name, x->name_len) == 0)
			return (int)i;
	return -1;
}

static void list_remove(struct xlist *l, uint32_t pos)
{
	memmove(&l->e[pos], &l->e[pos + 1], (l->n - pos - 1) * sizeof(l->e[0]));
	l->n--;
}

static void list_insert(struct xlist *l, uint32_t pos, const struct xent *x)
{
	memmove(&l->e[pos + 1], &l->e[pos], (l->n - pos) * sizeof(l->e[0]));
	l->e[pos] = *x;
	l->n++;
}

static uint32_t list_sorted_pos(const struct xlist *l, const struct xent *x)
{
	uint32_t i = 0;

	while (i < l->n && entry_cmp(&l->e[i], x) < 0)
		i++;
	return i;
}

/*
 * The kernel's entry hash: the name's bytes (as unsigned char) rotated in 5
 * bits at a time, then the value's little-endian 32-bit words (zero padded)
 * 16 bits at a time.
 */
uint32_t ext4fs_xattr_entry_hash(const void *name, size_t name_len, const void *value, size_t value_len,
				 int signed_chars)
{
	const unsigned char *n = name, *v = value;
	uint32_t h = 0;

	for (size_t i = 0; i < name_len; i++)
		h = (h << 5) ^ (h >> 27) ^ (signed_chars ? (uint32_t)(int32_t)(signed char)n[i] : n[i]);
	for (size_t off = 0; off < value_len; off += 4) {
		unsigned char w[4] = { 0, 0, 0, 0 };
		size_t take = value_len - off < 4 ? value_len - off : 4;

		memcpy(w, v + off, take);
		h = (h << 16) ^ (h >> 16) ^ le32_load(w);
	}
	return h;
}

static uint32_t entry_hash(const struct xent *x)
{
	return ext4fs_xattr_entry_hash(x->name, x->name_len, x->value, x->size, 0);
}

/*
 * Lay l out in base[first, end): entries from first, values packed down from
 * end; e_value_offs counts from value_base.  Block entries carry their hash;
 * in-inode entries carry 0 as the kernel writes them.  Values are read from
 * the old buffers, so base must be a different buffer.
 */
static void encode_region(unsigned char *base, uint32_t first, uint32_t end, uint32_t value_base,
			  const struct xlist *l, int in_block)
{
	uint32_t off = first, vend = end;

	memset(base + first, 0, end - first);
	for (uint32_t i = 0; i < l->n; i++) {
		const struct xent *x = &l->e[i];
		uint32_t offs = 0, hash = x->hash;

		if (!x->inum) {
			if (x->size) {
				vend -= xattr_value_padded(x->size);
				memcpy(base + vend, x->value, x->size);
				offs = vend - value_base;
			}
			hash = in_block ? entry_hash(x) : 0;
		}
		base[off + XE_NAME_LEN] = x->name_len;
		base[off + XE_NAME_INDEX] = x->index;
		le16_store(base + off + XE_VALUE_OFFS, (uint16_t)offs);
		le32_store(base + off + XE_VALUE_INUM, x->inum);
		le32_store(base + off + XE_VALUE_SIZE, x->size);
		le32_store(base + off + XE_HASH, hash);
		memcpy(base + off + XE_NAME, x->name, x->name_len);
		off += xattr_entry_len(x->name_len);
	}
}

/* The kernel's block hash: entry hashes rotated in 16 bits at a time; 0 if any is 0. */
static uint32_t block_hash(const unsigned char *b)
{
	uint32_t h = 0, off = EXT4FS_XATTR_HEADER_SIZE;

	while (le32_load(b + off) != 0) {
		uint32_t eh = le32_load(b + off + XE_HASH);

		if (eh == 0)
			return 0;
		h = (h << 16) ^ (h >> 16) ^ eh;
		off += xattr_entry_len(b[off + XE_NAME_LEN]);
	}
	return h;
}

/* -- Reading the current state -------------------------------------------- */

static int corrupt(struct ext4fs_fs *fs, uint32_t ino, uint64_t blk, uint32_t off, const char *what)
{
	if (blk)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				       "inode %u: extended attribute block %llu, entry at offset %u: %s",
				       ino, (unsigned long long)blk, off, what);
	return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
			       "inode %u: in-inode extended attribute at offset %u: %s", ino, off, what);
}

/*
 * Parse and check the entries of b[first, end) (blk names the block, 0 for
 * the inode) into l, whose array is malloc'd with room for one more.  The
 * checks are the reader's: entries inside the region with room for the end
 * marker, no NUL in names, values after the entry table and inside the
 * region, EA-inode numbers only with the feature; and one more, that the
 * entries and values fit the region laid out apart (no overlapping values).
 */
static int parse_region(struct ext4fs_fs *fs, uint32_t ino, uint64_t blk, const unsigned char *b,
			uint32_t first, uint32_t end, uint32_t value_base, struct xlist *l)
{
	uint32_t off = first, last, n = 0;

	for (;;) {
		if (end - off < 4)
			return corrupt(fs, ino, blk, off, "entry table has no end marker");
		if (le32_load(b + off) == 0)
			break;
		uint32_t len = xattr_entry_len(b[off + XE_NAME_LEN]);
		if (end - off < EXT4FS_XATTR_ENTRY_SIZE || len > end - off || end - off - len < 4)
			return corrupt(fs, ino, blk, off, "entry runs past the end");
		if (memchr(b + off + XE_NAME, 0, b[off + XE_NAME_LEN]))
			return corrupt(fs, ino, blk, off, "entry name contains a NUL byte");
		off += len;
		n++;
	}
	last = off;
	l->e = calloc(n + 1, sizeof(l->e[0]));
	if (!l->e)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes", ino);
	l->n = 0;
	for (off = first; off < last; off += xattr_entry_len(b[off + XE_NAME_LEN])) {
		struct xent *x = &l->e[l->n++];

		x->name_len = b[off + XE_NAME_LEN];
		x->index = b[off + XE_NAME_INDEX];
		x->name = b + off + XE_NAME;
		x->size = le32_load(b + off + XE_VALUE_SIZE);
		x->inum = le32_load(b + off + XE_VALUE_INUM);
		x->hash = le32_load(b + off + XE_HASH);
		if (x->inum) {
			if (!ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_EA_INODE) ||
			    x->inum == EXT4FS_ROOT_INO || x->inum < fs->geom.first_ino ||
			    x->inum > fs->geom.inodes_count)
				return corrupt(fs, ino, blk, off, "invalid EA inode number");
			if (x->size > EXT4FS_XATTR_SIZE_MAX)
				return corrupt(fs, ino, blk, off, "value size is too large");
			continue;
		}
		if (x->size == 0)
			continue;
		uint32_t offs = le16_load(b + off + XE_VALUE_OFFS);
		if (offs > end - value_base)
			return corrupt(fs, ino, blk, off, "value offset is out of bounds");
		uint32_t v = value_base + offs;
		if (v < last + 4 || x->size > end - v || xattr_value_padded(x->size) > end - v)
			return corrupt(fs, ino, blk, off, "value lies outside the value area");
		x->value = b + v;
	}
	/*
	 * Each value is inside the region, but damaged entries may share or
	 * overlap values.  A change lays the values out apart again, and
	 * encode_region() trusts them to fit: packed down from the end, a
	 * total larger than the region ran below the entries and wrapped
	 * around, writing outside the buffer.
	 */
	if (list_bytes(l) > end - first)
		return corrupt(fs, ino, blk, first, "values overlap one another");
	return 0;
}

/* Everything one change works on. */
struct xstate {
	struct ext4fs_fs *fs;
	uint32_t ino;
	struct ext4fs_inode in;      /* the caller's record, changed as we go */
	unsigned char *raw;          /* its on-disk record with in encoded */
	uint32_t ibody;              /* offset of the in-inode header, 0 when there is no room */
	uint32_t icap;               /* bytes for entries, end marker and values in the inode */
	struct xlist il, bl;         /* in-inode and block entries */
	uint64_t blk;                /* current attribute block, 0 for none */
	unsigned char *bbuf;         /* its contents */
	uint32_t refcount;           /* its h_refcount */
};

static void state_free(struct xstate *st)
{
	free(st->raw);
	free(st->bbuf);
	free(st->il.e);
	free(st->bl.e);
}

/* Read and check attribute block blk of inode ino into st. */
static int load_block(struct xstate *st, uint64_t blk)
{
	struct ext4fs_fs *fs = st->fs;
	uint32_t bs = fs->geom.block_size;
	int err;

	if (!ext4fs_block_ptr_valid(fs, blk) || blk == fs->geom.first_data_block)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				       "inode %u: extended attribute block %llu is outside the file system",
				       st->ino, (unsigned long long)blk);
	st->bbuf = malloc(bs);
	if (!st->bbuf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes", st->ino);
	err = ext4fs_block_read(fs, blk, st->bbuf);
	if (err)
		return ext4fs__fs_fail(fs, err, "inode %u: reading extended attribute block %llu: %s", st->ino,
				       (unsigned long long)blk, ext4fs_strerror(err));
	if (le32_load(st->bbuf + XH_MAGIC) != EXT4FS_XATTR_MAGIC ||
	    le32_load(st->bbuf + XH_BLOCKS) != 1)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				       "inode %u: extended attribute block %llu has a bad header", st->ino,
				       (unsigned long long)blk);
	if (fs->geom.has_metadata_csum && fs_csum_strict(fs) &&
	    le32_load(st->bbuf + XH_CHECKSUM) != ext4fs_xattr_block_csum(fs, blk, st->bbuf))
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CSUM,
				       "inode %u: extended attribute block %llu checksum does not match",
				       st->ino, (unsigned long long)blk);
	st->blk = blk;
	st->refcount = le32_load(st->bbuf + XH_REFCOUNT);
	return parse_region(fs, st->ino, blk, st->bbuf, EXT4FS_XATTR_HEADER_SIZE, bs, 0, &st->bl);
}

/* Load the inode's record (with *inode encoded in), its in-inode entries and its block. */
static int load_state(struct xstate *st, struct ext4fs_fs *fs, uint32_t ino,
		      const struct ext4fs_inode *inode)
{
	uint32_t isize = fs->geom.inode_size;
	uint64_t blk;
	int err;

	memset(st, 0, sizeof(*st));
	st->fs = fs;
	st->ino = ino;
	st->in = *inode;
	err = ext4fs__fs_require_rw(fs, "changing extended attributes");
	if (err)
		return err;
	st->raw = malloc(isize);
	st->il.e = calloc(1, sizeof(st->il.e[0]));
	if (!st->raw || !st->il.e)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes", ino);
	err = ext4fs_inode_read_raw(fs, ino, st->raw);
	if (err)
		return err;
	ext4fs_inode_encode(&st->in, st->raw, isize);
	if (isize > EXT4FS_INODE_BASE_SIZE) {
		uint32_t extra = st->in.i_extra_isize;

		if ((extra & 3) || extra > isize - EXT4FS_INODE_BASE_SIZE)
			return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
					       "inode %u: i_extra_isize %u does not fit a %u-byte inode", ino,
					       extra, isize);
		uint32_t start = EXT4FS_INODE_BASE_SIZE + extra;
		if (isize - start >= EXT4FS_XATTR_IHDR_SIZE + 4) {
			st->ibody = start;
			st->icap = isize - start - EXT4FS_XATTR_IHDR_SIZE;
			if (le32_load(st->raw + start) == EXT4FS_XATTR_MAGIC) {
				free(st->il.e);
				st->il.e = NULL;
				err = parse_region(fs, ino, 0, st->raw, start + EXT4FS_XATTR_IHDR_SIZE,
						   isize, start + EXT4FS_XATTR_IHDR_SIZE, &st->il);
				if (err)
					return err;
			}
		}
	}
	blk = ext4fs_inode_file_acl(fs, &st->in);
	if (blk)
		return load_block(st, blk);
	st->bl.e = calloc(1, sizeof(st->bl.e[0]));
	if (!st->bl.e)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes", ino);
	return 0;
}

/* -- Writing --------------------------------------------------------------- */

static void set_file_acl(struct ext4fs_fs *fs, struct ext4fs_inode *in, uint64_t blk)
{
	in->i_file_acl_lo = (uint32_t)blk;
	in->i_file_acl_high = fs->geom.is_64bit ? (uint16_t)(blk >> 32) : 0;
}

/* Give up the inode's reference to block blk (contents buf): free it or count one user less. */
static int drop_block_ref(struct ext4fs_fs *fs, uint32_t ino, uint64_t blk, unsigned char *buf)
{
	uint32_t refs = le32_load(buf + XH_REFCOUNT);
	int err;

	if (refs <= 1) {
		err = ext4fs_free_blocks(fs, blk, 1);
		if (err)
			return ext4fs__fs_fail(fs, err, "inode %u: freeing extended attribute block %llu: %s",
					       ino, (unsigned long long)blk, ext4fs_strerror(err));
		return 0;
	}
	le32_store(buf + XH_REFCOUNT, refs - 1);
	if (fs->geom.has_metadata_csum)
		le32_store(buf + XH_CHECKSUM, ext4fs_xattr_block_csum(fs, blk, buf));
	err = ext4fs_block_write(fs, blk, buf);
	if (err)
		return ext4fs__fs_fail(fs, err, "inode %u: writing extended attribute block %llu: %s", ino,
				       (unsigned long long)blk, ext4fs_strerror(err));
	return 0;
}

static int alloc_block(struct xstate *st, uint64_t *blk)
{
	struct ext4fs_fs *fs = st->fs;
	struct ext4fs_alloc_request req = {
		.ino = st->ino,
		.len = 1,
		.min_len = 1,
		.goal = ext4fs_group_first_block(fs, ext4fs_inode_group(fs, st->ino)),
		.flags = EXT4FS_ALLOC_METADATA,
	};
	uint32_t got = 0;
	int err;

	/* Like the kernel, the start of the inode's group; root's files may use the reserve. */
	if (ext4fs_inode_uid(&st->in) == 0)
		req.flags |= EXT4FS_ALLOC_USE_RESERVED;
	err = ext4fs_alloc_blocks(fs, &req, blk, &got);
	if (err)
		return ext4fs__fs_fail(fs, err, "inode %u: no block for extended attributes: %s", st->ino,
				       ext4fs_strerror(err));
	return 0;
}

/*
 * Write the changed regions: the block (in place when the inode owns it
 * alone, else a new one), then the record, then the release of a block no
 * longer used.  On success *inode is the record as written.
 */
static int commit(struct xstate *st, int ichanged, int bchanged, struct ext4fs_inode *inode)
{
	struct ext4fs_fs *fs = st->fs;
	uint32_t isize = fs->geom.inode_size, bs = fs->geom.block_size;
	unsigned char *newraw = NULL, *nbuf = NULL;
	uint64_t new_blk = st->blk;
	int allocated = 0, release_old = 0, err = 0;
	int64_t sec;
	uint32_t nsec;

	newraw = malloc(isize);
	if (!newraw)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes", st->ino);
	memcpy(newraw, st->raw, isize);

	if (bchanged) {
		if (st->bl.n == 0) {
			new_blk = 0;
			release_old = st->blk != 0;
			if (release_old)
				err = ext4fs_inode_add_blocks(fs, &st->in, -1);
		} else if (!st->blk || st->refcount > 1) {
			release_old = st->blk != 0;
			if (!st->blk)
				err = ext4fs_inode_add_blocks(fs, &st->in, 1);
			if (!err)
				err = alloc_block(st, &new_blk);
			allocated = !err;
		}
		if (err == EXT4FS_E_FILE_TOO_BIG)
			ext4fs__fs_fail(fs, err, "inode %u: i_blocks cannot count the attribute block", st->ino);
		if (err)
			goto out;
		if (new_blk) {
			nbuf = malloc(bs);
			if (!nbuf) {
				err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for attributes",
						      st->ino);
				goto out;
			}
			memset(nbuf, 0, EXT4FS_XATTR_HEADER_SIZE);
			le32_store(nbuf + XH_MAGIC, EXT4FS_XATTR_MAGIC);
			le32_store(nbuf + XH_REFCOUNT, 1);
			le32_store(nbuf + XH_BLOCKS, 1);
			encode_region(nbuf, EXT4FS_XATTR_HEADER_SIZE, bs, 0, &st->bl, 1);
			le32_store(nbuf + XH_HASH, block_hash(nbuf));
			if (fs->geom.has_metadata_csum)
				le32_store(nbuf + XH_CHECKSUM, ext4fs_xattr_block_csum(fs, new_blk, nbuf));
			err = ext4fs_block_write(fs, new_blk, nbuf);
			if (err) {
				ext4fs__fs_fail(fs, err, "inode %u: writing extended attribute block %llu: %s",
						st->ino, (unsigned long long)new_blk, ext4fs_strerror(err));
				goto out;
			}
		}
		set_file_acl(fs, &st->in, new_blk);
	}

	if (ichanged) {
		uint32_t first = st->ibody + EXT4FS_XATTR_IHDR_SIZE;

		if (st->il.n) {
			le32_store(newraw + st->ibody, EXT4FS_XATTR_MAGIC);
			encode_region(newraw, first, isize, first, &st->il, 0);
		} else {
			memset(newraw + st->ibody, 0, isize - st->ibody);
		}
	}
	ext4fs_now(fs, &sec, &nsec);
	ext4fs_inode_set_time(&st->in, 'c', sec, nsec);
	ext4fs_inode_encode(&st->in, newraw, isize);
	ext4fs_inode_csum_set(fs, st->ino, newraw);
	err = ext4fs_inode_write_raw(fs, st->ino, newraw);
	if (err)
		goto out;
	allocated = 0;
	ext4fs_inode_decode(inode, newraw, isize);
	if (!(fs->sb.s_feature_compat & EXT4FS_FEATURE_COMPAT_EXT_ATTR) && (st->il.n || st->bl.n)) {
		fs->sb.s_feature_compat |= EXT4FS_FEATURE_COMPAT_EXT_ATTR;
		fs->super_dirty = 1;
	}
	/* The new state is on disk; a failure from here on only leaks the old block. */
	if (release_old)
		err = drop_block_ref(fs, st->ino, st->blk, st->bbuf);
out:
	if (allocated)
		ext4fs_free_blocks(fs, new_blk, 1);
	free(newraw);
	free(nbuf);
	return err;
}

/* -- Set and remove -------------------------------------------------------- */

static int xattr_change(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			const char *full_name, const void *value, size_t len, unsigned flags,
			int remove)
{
	struct xstate st;
	struct xent x = { 0 };
	const struct xent *old;
	int pi, pb = -1, ichanged = 0, bchanged = 0, err;
	uint32_t bs = fs->geom.block_size, in_inode, in_block;

	err = parse_name(fs, ino, full_name, &x.index, &x.name, &x.name_len);
	if (err)
		return err;
	if (flags & ~(unsigned)(EXT4FS_XATTR_CREATE | EXT4FS_XATTR_REPLACE))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: unknown flags 0x%x for %s", ino,
				       flags, full_name);
	/* Nothing larger can fit one block, with or without its entry. */
	if (!remove && len > bs)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_NO_SPACE,
				       "inode %u: a %zu-byte value for %s cannot fit a %u-byte block", ino, len,
				       full_name, bs);
	if (!remove && len && !value)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: no value for %s", ino, full_name);
	x.value = value;
	x.size = (uint32_t)len;

	err = load_state(&st, fs, ino, inode);
	if (err)
		goto out;
	/* Like the kernel: the inode body first; the block only if it is not there. */
	pi = list_find(&st.il, &x);
	if (pi < 0)
		pb = list_find(&st.bl, &x);
	old = pi >= 0 ? &st.il.e[pi] : pb >= 0 ? &st.bl.e[pb] : NULL;
	if (old && (flags & EXT4FS_XATTR_CREATE)) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_EXISTS, "inode %u already has attribute %s", ino, full_name);
		goto out;
	}
	if (!old && (remove || (flags & EXT4FS_XATTR_REPLACE))) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NOT_FOUND, "inode %u has no attribute %s", ino, full_name);
		goto out;
	}
	if (old && old->inum) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_UNSUPP_FEATURE,
				      "inode %u: attribute %s keeps its value in EA inode %u, which cannot be changed yet",
				      ino, full_name, old->inum);
		goto out;
	}
	if (old && !remove && old->size == x.size &&
	    (x.size == 0 || memcmp(old->value, x.value, x.size) == 0))
		goto out;

	/* The kernel's placement: the inode body if it fits there, else the block. */
	in_inode = pi >= 0 ? entry_cost(&st.il.e[pi]) : 0;
	in_block = pb >= 0 ? entry_cost(&st.bl.e[pb]) : 0;
	if (remove) {
		if (pi >= 0)
			list_remove(&st.il, (uint32_t)pi);
		else
			list_remove(&st.bl, (uint32_t)pb);
		ichanged = pi >= 0;
		bchanged = pb >= 0;
	} else if (st.ibody && list_bytes(&st.il) - in_inode + entry_cost(&x) <= st.icap) {
		if (pi >= 0)
			st.il.e[pi] = x;
		else
			list_insert(&st.il, st.il.n, &x);
		if (pb >= 0)
			list_remove(&st.bl, (uint32_t)pb);
		ichanged = 1;
		bchanged = pb >= 0;
	} else if (list_bytes(&st.bl) - in_block + entry_cost(&x) <= bs - EXT4FS_XATTR_HEADER_SIZE) {
		if (pb >= 0)
			list_remove(&st.bl, (uint32_t)pb);
		list_insert(&st.bl, list_sorted_pos(&st.bl, &x), &x);
		if (pi >= 0)
			list_remove(&st.il, (uint32_t)pi);
		ichanged = pi >= 0;
		bchanged = 1;
	} else {
		err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_NO_SPACE,
				      "inode %u: no room for attribute %s (%zu bytes) in the inode or its attribute block",
				      ino, full_name, len);
		goto out;
	}
	err = commit(&st, ichanged, bchanged, inode);
out:
	state_free(&st);
	return err;
}

int ext4fs_xattr_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		     const char *full_name, const void *value, size_t len, unsigned flags)
{
	void *disk = NULL;
	size_t disk_len = 0;
	int err;

	if (full_name && (strcmp(full_name, "system.posix_acl_access") == 0 ||
			  strcmp(full_name, "system.posix_acl_default") == 0)) {
		err = acl_to_disk(fs, ino, full_name, value, len, &disk, &disk_len);
		if (err)
			return err;
		value = disk;
		len = disk_len;
	}
	err = xattr_change(fs, ino, inode, full_name, value, len, flags, 0);
	free(disk);
	return err;
}

int ext4fs_xattr_remove(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			const char *full_name)
{
	return xattr_change(fs, ino, inode, full_name, NULL, 0, 0, 1);
}

/* -- Inline data ------------------------------------------------------------ */

/*
 * The system.data value of an inline-data inode, which lives in the inode
 * body only.  Room is judged as e2fsprogs judges it: a value may grow only
 * by as many bytes as the body has free, padding not counted.
 */
static int inline_value_set(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			    const unsigned char *value, uint32_t len, int *written)
{
	static const unsigned char name[] = "data";
	struct xent x = { .index = EXT4FS_XATTR_INDEX_SYSTEM, .name_len = 4, .name = name, .value = value,
			  .size = len };
	struct xstate st;
	int err = load_state(&st, fs, ino, inode);

	if (err)
		goto out;
	int pi = list_find(&st.il, &x);
	if (list_find(&st.bl, &x) >= 0 || (pi >= 0 && st.il.e[pi].inum)) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_CORRUPT,
				      "inode %u: system.data is kept outside the inode body", ino);
		goto out;
	}
	uint32_t old_len = pi >= 0 ? st.il.e[pi].size : 0, used = list_bytes(&st.il);
	if (pi >= 0 && old_len == len && (len == 0 || memcmp(st.il.e[pi].value, value, len) == 0))
		goto out;
	uint32_t free_bytes = st.icap > used ? st.icap - used : 0;
	uint32_t after = used - (pi >= 0 ? entry_cost(&st.il.e[pi]) : 0) + entry_cost(&x);
	if (!st.ibody || after > st.icap || (pi >= 0 && len > old_len && len - old_len > free_bytes)) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_XATTR_NO_SPACE,
				      "inode %u: no room for %u bytes of inline data in the inode body", ino, len);
		goto out;
	}
	if (pi >= 0)
		st.il.e[pi] = x;
	else
		list_insert(&st.il, st.il.n, &x);
	err = commit(&st, 1, 0, inode);
	*written = !err;
out:
	state_free(&st);
	return err;
}

int ext4fs_inline_data_write(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, const void *data,
			     size_t len)
{
	size_t head = len < sizeof(inode->i_block) ? len : sizeof(inode->i_block);
	struct ext4fs_inode next = *inode;
	int written = 0, err;

	if (!ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u has no inline data", ino);
	if (len > sizeof(inode->i_block) + fs->geom.block_size)
		return ext4fs__fs_fail(fs, EXT4FS_E_XATTR_NO_SPACE, "inode %u: %zu bytes of inline data", ino, len);
	memcpy(next.i_block, data, head);
	err = inline_value_set(fs, ino, &next, (const unsigned char *)data + head, (uint32_t)(len - head), &written);
	if (!err && !written)
		err = ext4fs_inode_write(fs, ino, &next);
	if (!err)
		*inode = next;
	return err;
}

int ext4fs_xattr_release(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode)
{
	struct xstate st;
	uint64_t blk = ext4fs_inode_file_acl(fs, inode);
	int err;

	if (!blk)
		return 0;
	memset(&st, 0, sizeof(st));
	st.fs = fs;
	st.ino = ino;
	st.in = *inode;
	err = ext4fs__fs_require_rw(fs, "releasing an extended attribute block");
	if (!err)
		err = load_block(&st, blk);
	if (err)
		goto out;
	if (st.refcount <= 1) {
		for (uint32_t i = 0; i < st.bl.n; i++) {
			if (st.bl.e[i].inum) {
				err = ext4fs__fs_fail(fs, EXT4FS_E_UNSUPP_FEATURE,
						      "inode %u: extended attribute block %llu refers to EA inode %u, which cannot be released yet",
						      ino, (unsigned long long)blk, st.bl.e[i].inum);
				goto out;
			}
		}
	}
	set_file_acl(fs, &st.in, 0);
	err = ext4fs_inode_add_blocks(fs, &st.in, -1);
	if (!err)
		err = ext4fs_inode_write(fs, ino, &st.in);
	if (err)
		goto out;
	*inode = st.in;
	err = drop_block_ref(fs, ino, blk, st.bbuf);
out:
	state_free(&st);
	return err;
}
