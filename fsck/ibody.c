/*
 * ibody.c - the space after an inode's 128-byte base (see ibody.h).
 *
 * The in-inode attribute area is walked here rather than with the
 * library's reader (ext4fs_xattr_iterate()), because the library rejects a
 * bad area as a whole while e2fsck's verdict depends on which test fails
 * first: the space each entry, name and value takes is counted against
 * what is left, and every entry and value must claim bytes nobody claimed
 * before.  The library still supplies the entry hash.
 *
 * The layout: 128 + i_extra_isize is where the area starts, with the
 * 4-byte magic; entries (16 bytes and the name, padded to 4) follow it and
 * end with four zero bytes; a value's e_value_offs counts from the first
 * entry, not from the magic.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include "ext4fs/array.h"
#include "ext4fs/codec.h"
#include "ext4fs/inode.h"
#include "ext4fs/xattr.h"
#include "clusters.h"
#include "ibody.h"
#include "problems.h"

#define BASE_SIZE 128u              /* the inode fields every inode has */
#define MAGIC_SIZE 4u
#define ENTRY_SIZE EXT4FS_XATTR_ENTRY_SIZE

static uint32_t pad4(uint32_t n)
{
	return (n + 3) & ~3u;
}

/* Problems reported so far for this inode, and the ones later problems depend on. */
struct walk {
	const struct ibody_ops *ops;
	void *arg;
	unsigned n;                 /* problems reported */
	int gate;                   /* index of the problem the next ones need a yes to, or -1 */
};

static int report(struct walk *wk, uint32_t code, uint64_t num, enum ibody_fix fix, uint64_t value, int after_no)
{
	struct ibody_problem p = { code, num, fix, value, after_no ? DEFER_AFTER_NO : 0, 0 };

	if (wk->gate >= 0) {
		p.rules |= DEFER_IF_YES_BACK;
		p.back = wk->n - (unsigned)wk->gate;
	}

	wk->n++;
	return wk->ops->problem(wk->arg, &p);
}

/* Byte ranges of the area already claimed by the magic, entries and values. */
struct claims {
	struct { uint32_t start, end; } *part;
	size_t n, cap;
	uint32_t size;
};

/* Claim [start, start + len): 1 when it leaves the area or overlaps a claim, -ENOMEM, else 0. */
static int claim(struct claims *c, uint32_t start, uint32_t len)
{
	uint64_t end = (uint64_t)start + len;

	if (end > c->size)
		return 1;
	for (size_t i = 0; i < c->n; i++)
		if (start < c->part[i].end && end > c->part[i].start)
			return 1;
	if (c->n == c->cap) {
		void *grown = ext4fs_array_grow(c->part, &c->cap, c->n + 1, sizeof(*c->part), 16);
		if (!grown)
			return -ENOMEM;
		c->part = grown;
	}
	c->part[c->n].start = start;
	c->part[c->n].end = (uint32_t)end;
	c->n++;
	return 0;
}

static int hash_matches(uint32_t have, const unsigned char *name, unsigned name_len, const unsigned char *value,
			uint32_t value_len)
{
	return have == ext4fs_xattr_entry_hash(name, name_len, value, value_len, 0) ||
	       have == ext4fs_xattr_entry_hash(name, name_len, value, value_len, 1);
}

/*
 * An entry whose value lives in an inode (the ea_inode feature).  Returns
 * the problem to ask about (its %N in *num), 0 when the reference is good,
 * or -1 when only the EA_INODE flag is missing on an otherwise matching
 * inode (e2fsck offers to set it).
 */
static int64_t value_inode_problem(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in,
				   const unsigned char *e, const struct ext4fs_xattr_entry_head *eh, uint64_t *num)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	struct ext4fs_inode ea;
	unsigned char *raw;
	uint32_t inum = eh->value_inum;

	*num = inum;
	if (inum < g->first_ino || inum > g->inodes_count)
		return PR_1_ATTR_VALUE_EA_INODE;
	raw = malloc(g->inode_size);
	if (!raw || ext4fs_inode_read_raw(fs, inum, raw)) {
		free(raw);
		return PR_1_ATTR_VALUE_EA_INODE;   /* nothing to compare with */
	}
	ext4fs_inode_decode(&ea, raw, g->inode_size);
	free(raw);
	/* The entry hash of such a value: the name's, then the value inode's own hash (kept in i_atime). */
	uint32_t have = eh->hash;
	int ok = 0;
	for (int sign = 0; sign < 2 && !ok; sign++) {
		uint32_t h = ext4fs_xattr_entry_hash(e + ENTRY_SIZE, eh->name_len, NULL, 0, sign);
		ok = have == ((h << 16) ^ (h >> 16) ^ ea.i_atime);
	}
	/* Lustre's older references: the value inode names its owner in i_mtime instead. */
	if (!ok && !(ea.i_mtime == ino && ea.i_generation == in->i_generation)) {
		if (!(ea.i_flags & EXT4FS_EA_INODE_FL))
			return PR_1_ATTR_VALUE_EA_INODE;
		*num = have;
		return PR_1_ATTR_HASH;
	}
	return (ea.i_flags & EXT4FS_EA_INODE_FL) ? 0 : -1;
}

/*
 * The attribute area area[0, size) behind the magic, at byte magic_off of
 * the record.  As e2fsck: the first problem offers to clear the whole area;
 * nothing after it is looked at.
 */
static int check_area(struct walk *wk, struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in,
		      const unsigned char *area, uint32_t size, uint32_t magic_off)
{
	struct claims c = { .size = size };
	uint32_t code = 0, off = MAGIC_SIZE, left = size - MAGIC_SIZE;   /* left: room for entries and values */
	uint32_t bs = ext4fs_geom(fs)->block_size;
	uint64_t num = 0;
	/*
	 * Values in EA inodes, reported once the whole area passed (at most one
	 * per entry); allocated only when the first one is met, as most inodes have none.
	 */
	struct value_ref { uint32_t inum; uint64_t blocks; } *values = NULL;
	unsigned nvalues = 0;
	int rc = 0;


	claim(&c, 0, MAGIC_SIZE);   /* the area holds more than the magic, so this cannot fail */
	while (left >= ENTRY_SIZE && off + ENTRY_SIZE <= size && !ext4fs_xattr_entry_is_end(area + off)) {
		const unsigned char *e = area + off;
		struct ext4fs_xattr_entry_head eh;
		ext4fs_xattr_entry_head_decode(e, &eh);
		uint32_t name_room = pad4(eh.name_len), value_offs = eh.value_offs, inum = eh.value_inum,
			 value_size = eh.value_size;

		if ((rc = claim(&c, off, ENTRY_SIZE + name_room)) != 0) {
			code = PR_1_INODE_EA_ALLOC_COLLISION;
			break;
		}
		left -= ENTRY_SIZE;
		if (name_room > left) {
			code = PR_1_ATTR_NAME_LEN;
			num = eh.name_len;
			break;
		}
		left -= name_room;
		if (!inum) {
			if (value_size > left) {
				code = PR_1_ATTR_VALUE_SIZE;
				num = value_size;
				break;
			}
			/* The value and its padding, which the hash covers as stored. */
			uint32_t start = MAGIC_SIZE + value_offs, room = pad4(value_size);
			if (value_size && (rc = claim(&c, start, room)) != 0) {
				code = PR_1_INODE_EA_ALLOC_COLLISION;
				break;
			}
			uint32_t have = eh.hash;
			/* Older kernels left in-inode hashes zero. */
			if (have && !hash_matches(have, e + ENTRY_SIZE, eh.name_len, value_size ? area + start : NULL,
						  value_size ? room : 0)) {
				code = PR_1_ATTR_HASH;
				num = have;
				break;
			}
			left -= value_size;
		} else {
			int64_t verdict = value_inode_problem(fs, ino, in, e, &eh, &num);
			if (verdict > 0) {
				code = (uint32_t)verdict;
				break;
			}
			if (!values && !(values = malloc((size / ENTRY_SIZE + 1) * sizeof(*values)))) {
				rc = -ENOMEM;
				goto out;
			}
			values[nvalues].inum = inum;
			values[nvalues++].blocks = cluster_value_blocks(bs, ext4fs_geom(fs)->cluster_ratio, value_size);
			if (verdict < 0) {
				/* Set the flag, or else clear the area; the walk goes on assuming the flag was set. */
				int at = (int)wk->n;
				if ((rc = report(wk, PR_1_ATTR_SET_EA_INODE_FL, inum, IBODY_FIX_EA_INODE_FL, inum, 0)) ||
				    (rc = report(wk, PR_1_ATTR_NO_EA_INODE_FL, inum, IBODY_FIX_EA_CLEAR, magic_off, 1)))
					goto out;
				wk->gate = at;
			}
		}
		off += ENTRY_SIZE + name_room;
	}
	if (!code && !rc && (rc = claim(&c, off, 4)) != 0)
		code = PR_1_INODE_EA_ALLOC_COLLISION;
	if (rc < 0)
		goto out;
	rc = code ? report(wk, code, num, IBODY_FIX_EA_CLEAR, magic_off, 0) : 0;
	for (unsigned k = 0; !code && !rc && k < nvalues && wk->ops->value_inode; k++)
		rc = wk->ops->value_inode(wk->arg, values[k].inum, values[k].blocks);
out:
	free(values);
	free(c.part);
	return rc;
}

/* Byte offsets of the 32-bit seconds and their extra fields (epoch bits 0-1). */
static const struct { unsigned sec, extra; } stamps[] = {
	{ EXT4FS_INODE_OFF_ATIME, EXT4FS_INODE_OFF_ATIME_EXTRA },
	{ EXT4FS_INODE_OFF_CTIME, EXT4FS_INODE_OFF_CTIME_EXTRA },
	{ EXT4FS_INODE_OFF_CRTIME, EXT4FS_INODE_OFF_CRTIME_EXTRA },
	{ EXT4FS_INODE_OFF_MTIME, EXT4FS_INODE_OFF_MTIME_EXTRA },
};

/* A pre-1970 time that old kernels stored with both epoch bits set (reading as 2310-2378). */
static int bad_epoch(const unsigned char *raw, uint32_t inode_size, unsigned k)
{
	if (stamps[k].extra + 4 > inode_size)
		return 0;
	return (ext4fs_inode_raw_get32(raw, stamps[k].sec) & 0x80000000u) &&
	       (ext4fs_inode_raw_get32(raw, stamps[k].extra) & 3) == 3;
}

int fsck_ibody_check(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in, const unsigned char *raw,
		     const struct ibody_ops *ops, void *arg)
{
	uint32_t inode_size = ext4fs_geom(fs)->inode_size;
	struct walk wk = { ops, arg, 0, -1 };
	int rc;

	if (inode_size <= BASE_SIZE)
		return 0;
	/* At least i_extra_isize and i_checksum_hi; 0 is tolerated, as e2fsck does. */
	uint32_t extra = ext4fs_inode_raw_get16(raw, EXT4FS_INODE_OFF_EXTRA_ISIZE), max = inode_size - BASE_SIZE;
	if (extra && (extra < 4 || extra > max || (extra & 3))) {
		uint32_t fixed = (extra < 4 || extra > max) ? ext4fs_sb(fs)->s_want_extra_isize : pad4(extra);
		if ((rc = report(&wk, PR_1_EXTRA_ISIZE, extra, IBODY_FIX_EXTRA_ISIZE, fixed, 0)))
			return rc;
		/* What follows is asked only if the size was fixed, and looks behind the fixed size. */
		wk.gate = 0;
		extra = fixed;
	}
	if (extra + MAGIC_SIZE >= max)
		return 0;   /* no room for attributes (nor, as e2fsck sees it, for the time check) */
	int isize_gate = wk.gate;
	if (ext4fs_xattr_ibody_magic_get(raw + BASE_SIZE + extra) == EXT4FS_XATTR_MAGIC &&
	    (rc = check_area(&wk, fs, ino, in, raw + BASE_SIZE + extra, max - extra, BASE_SIZE + extra)))
		return rc;
	wk.gate = isize_gate;

	int64_t now;
	uint32_t nsec;
	ext4fs_now(fs, &now, &nsec);
	/* Until 2242 such a time is more likely a pre-1970 date than one of 2310-2378. */
	if (now >= 2 * (1LL << 32))
		return 0;
	for (unsigned k = 0; k < sizeof(stamps) / sizeof(stamps[0]); k++)
		if (bad_epoch(raw, inode_size, k))
			return report(&wk, PR_1_EA_TIME_OUT_OF_RANGE, 0, IBODY_FIX_EPOCH, 0, 0);
	return 0;
}

void fsck_ibody_apply(unsigned char *raw, uint32_t inode_size, uint32_t ea_off, int epoch)
{
	if (ea_off && ea_off + MAGIC_SIZE <= inode_size)
		ext4fs_xattr_ibody_magic_set(raw + ea_off, 0);
	for (unsigned k = 0; epoch && k < sizeof(stamps) / sizeof(stamps[0]); k++)
		if (bad_epoch(raw, inode_size, k))
			ext4fs_inode_raw_set32(raw, stamps[k].extra,
					       ext4fs_inode_raw_get32(raw, stamps[k].extra) & ~3u);
}
