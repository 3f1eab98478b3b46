/*
 * quota.c - reading and writing quota files in the v2 format (see
 * quota.h for the layout).
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "ext4fs/file.h"
#include "ext4fs/inode.h"
#include "ext4fs/quota.h"
#include "ext4fs/super.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define QBLOCK 1024U
#define HEADER_BYTES 8U
#define INFO_BYTES 24U
#define ROOT_BLOCK 1U
#define TREE_DEPTH 4
#define REFS_PER_BLOCK (QBLOCK / 4)
#define DATA_HEADER_BYTES 16U
#define ENTRY_BYTES 72U
#define ENTRIES_PER_BLOCK ((QBLOCK - DATA_HEADER_BYTES) / ENTRY_BYTES)
#define QUOTA_VERSION 1U
/* Bounds the memory a file takes to read; far above what any real id count needs. */
#define MAX_BLOCKS (1U << 17)

static const uint32_t magics[EXT4FS_QUOTA_TYPES] = { 0xd9c01f11U, 0xd9c01927U, 0xd9c03f14U };

uint32_t ext4fs_quota_inum(const struct ext4fs_super *sb, enum ext4fs_quota_type type)
{
	switch (type) {
	case EXT4FS_QUOTA_USER: return sb->s_usr_quota_inum;
	case EXT4FS_QUOTA_GROUP: return sb->s_grp_quota_inum;
	case EXT4FS_QUOTA_PROJECT: return sb->s_prj_quota_inum;
	}
	return 0;
}

void ext4fs_quota_file_free(struct ext4fs_quota_file *q)
{
	if (!q)
		return;
	free(q->recs);
	memset(q, 0, sizeof(*q));
}

/* -- Reading ------------------------------------------------------------- */

/* Per block: reached as a tree block, read as a data block (either or both). */
enum { SEEN_TREE = 1, SEEN_DATA = 2 };

struct decoder {
	const unsigned char *buf;
	uint32_t nblocks;        /* blocks a reference may name: below both the info's count and the size */
	unsigned char *seen;     /* per block: SEEN_TREE | SEEN_DATA */
	struct ext4fs_quota_file *out;
	size_t cap;
	char *why;
	size_t why_len;
};

static int corrupt(struct decoder *d, const char *fmt, ...)
{
	if (d->why && d->why_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->why, d->why_len, fmt, ap);
		va_end(ap);
	}
	return EXT4FS_E_INODE_CORRUPT;
}

static int entry_is_free(const unsigned char *e)
{
	for (unsigned i = 0; i < ENTRY_BYTES; i++)
		if (e[i])
			return 0;
	return 1;
}

static int add_entry(struct decoder *d, const unsigned char *e)
{
	struct ext4fs_quota_record r;

	if (d->out->count == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct ext4fs_quota_record *v = realloc(d->out->recs, cap * sizeof(*v));
		if (!v)
			return EXT4FS_E_NO_MEMORY;
		d->out->recs = v;
		d->cap = cap;
	}
	r.id = le32_load(e);
	r.inode_hard = le64_load(e + 8);
	r.inode_soft = le64_load(e + 16);
	r.inodes = le64_load(e + 24);
	r.block_hard = le64_load(e + 32);
	r.block_soft = le64_load(e + 40);
	r.space = le64_load(e + 48);
	r.block_grace_end = le64_load(e + 56);
	r.inode_grace_end = le64_load(e + 64);
	/*
	 * A record that is all zero is stored with an inode grace end of 1, so
	 * as not to read as free; the padding is not looked at, so that what is
	 * read is what writing it again stores.
	 */
	if (!r.id && !r.inode_hard && !r.inode_soft && !r.inodes && !r.block_hard && !r.block_soft && !r.space &&
	    !r.block_grace_end && r.inode_grace_end == 1)
		r.inode_grace_end = 0;
	d->out->recs[d->out->count++] = r;
	return 0;
}

static int read_data_block(struct decoder *d, uint32_t blk)
{
	const unsigned char *b = d->buf + (size_t)blk * QBLOCK;

	for (unsigned i = 0; i < ENTRIES_PER_BLOCK; i++) {
		const unsigned char *e = b + DATA_HEADER_BYTES + i * ENTRY_BYTES;
		if (entry_is_free(e))
			continue;
		int err = add_entry(d, e);
		if (err)
			return err;
	}
	return 0;
}

static int read_tree_block(struct decoder *d, uint32_t blk, int depth)
{
	const unsigned char *b = d->buf + (size_t)blk * QBLOCK;

	for (unsigned i = 0; i < REFS_PER_BLOCK; i++) {
		uint32_t ref = le32_load(b + 4 * i);
		int err;
		if (!ref)
			continue;
		if (ref <= ROOT_BLOCK || ref >= d->nblocks)
			return corrupt(d, "tree block %u (level %d) refers to block %u, outside blocks 2-%u", blk,
				       depth, ref, d->nblocks - 1);
		if (depth + 1 < TREE_DEPTH) {
			/* A tree block reached twice could make the walk exponential: refused. */
			if (d->seen[ref] & SEEN_TREE)
				return corrupt(d, "tree block %u (level %d) refers to block %u, which is already "
					       "a tree block", blk, depth, ref);
			d->seen[ref] |= SEEN_TREE;
			err = read_tree_block(d, ref, depth + 1);
		} else {
			/*
			 * Each id of a data block has its own reference to it: the block
			 * is read once.  As e2fsprogs, any block may be read as data.
			 */
			if (d->seen[ref] & SEEN_DATA)
				continue;
			d->seen[ref] |= SEEN_DATA;
			err = read_data_block(d, ref);
		}
		if (err)
			return err;
	}
	return 0;
}

static int cmp_record(const void *a, const void *b)
{
	uint32_t x = ((const struct ext4fs_quota_record *)a)->id, y = ((const struct ext4fs_quota_record *)b)->id;

	return x < y ? -1 : x > y;
}

int ext4fs_quota_decode(const unsigned char *buf, size_t len, enum ext4fs_quota_type type,
			struct ext4fs_quota_file *out, char *why, size_t why_len)
{
	struct decoder d = { .buf = buf, .out = out, .why = why, .why_len = why_len };
	int err;

	memset(out, 0, sizeof(*out));
	if ((unsigned)type >= EXT4FS_QUOTA_TYPES)
		return EXT4FS_E_INVALID_ARG;
	size_t file_blocks = len / QBLOCK;
	if (file_blocks < ROOT_BLOCK + 1)
		return corrupt(&d, "%zu bytes is too short for a header and a tree root", len);
	out->magic = le32_load(buf);
	/* As e2fsprogs: only a magic stored big-endian is refused; another one reads (magic says which). */
	if (be32_load(buf) == magics[type])
		return corrupt(&d, "magic 0x%08x stored big-endian", magics[type]);
	if (le32_load(buf + 4) != QUOTA_VERSION)
		return corrupt(&d, "unknown format version %u", le32_load(buf + 4));
	const unsigned char *info = buf + HEADER_BYTES;
	out->block_grace = le32_load(info);
	out->inode_grace = le32_load(info + 4);
	out->flags = le32_load(info + 8);
	uint32_t info_blocks = le32_load(info + 12);
	if (info_blocks < ROOT_BLOCK + 1 || info_blocks > file_blocks)
		return corrupt(&d, "the info counts %u blocks, the file holds %zu", info_blocks, file_blocks);
	if (info_blocks > MAX_BLOCKS)
		return corrupt(&d, "%u blocks is more than a quota file may hold here (%u)", info_blocks, MAX_BLOCKS);
	/* e2fsprogs' checks of the free lists' heads, though reading does not follow them. */
	if (le32_load(info + 16) >= info_blocks || le32_load(info + 20) >= info_blocks)
		return corrupt(&d, "free list head %u or %u past the %u blocks", le32_load(info + 16), le32_load(info + 20),
			       info_blocks);
	d.nblocks = info_blocks;
	d.seen = calloc(d.nblocks, 1);
	if (!d.seen)
		return EXT4FS_E_NO_MEMORY;
	d.seen[ROOT_BLOCK] = SEEN_TREE;
	err = read_tree_block(&d, ROOT_BLOCK, 0);
	free(d.seen);
	if (err)
		return err;
	if (out->count)
		qsort(out->recs, out->count, sizeof(*out->recs), cmp_record);
	for (size_t i = 1; i < out->count; i++)
		if (out->recs[i].id == out->recs[i - 1].id)
			return corrupt(&d, "id %u has two records", out->recs[i].id);
	return 0;
}

int ext4fs_quota_read(struct ext4fs_fs *fs, uint32_t ino, enum ext4fs_quota_type type,
		      struct ext4fs_quota_file *out)
{
	struct ext4fs_inode in;
	char why[160] = "";
	size_t got = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if ((unsigned)type >= EXT4FS_QUOTA_TYPES)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "quota type %d is unknown", (int)type);
	err = ext4fs_inode_read(fs, ino, &in);
	if (err)
		return err;
	/* As e2fsprogs, the file is read by its map whatever its mode says (a checker asks about the mode). */
	in.i_mode = (uint16_t)((in.i_mode & 07777) | EXT4FS_S_IFREG);
	uint64_t size = ext4fs_inode_size(&in);
	if (size > (uint64_t)MAX_BLOCKS * QBLOCK)
		return ext4fs__fs_fail(fs, EXT4FS_E_INODE_CORRUPT,
				       "quota file (inode %u): size %llu is more than a quota file may hold here",
				       ino, (unsigned long long)size);
	/* A last partial block counts, read as zeros past the end (as e2fsprogs counts the size). */
	size_t padded = (size_t)((size + QBLOCK - 1) / QBLOCK * QBLOCK);
	unsigned char *buf = calloc(padded ? padded : 1, 1);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "quota file (inode %u): no memory for %llu bytes",
				       ino, (unsigned long long)size);
	err = ext4fs_file_read(fs, ino, &in, 0, buf, (size_t)size, &got);
	if (!err && got != size)
		err = ext4fs__fs_fail(fs, EXT4FS_E_INODE_CORRUPT, "quota file (inode %u): read %zu of %llu bytes",
				      ino, got, (unsigned long long)size);
	if (!err) {
		err = ext4fs_quota_decode(buf, padded, type, out, why, sizeof(why));
		if (err == EXT4FS_E_INODE_CORRUPT)
			ext4fs__fs_fail(fs, err, "quota file (inode %u): %s", ino, why);
		else if (err)
			ext4fs__fs_fail(fs, err, "quota file (inode %u): no memory for its records", ino);
	}
	free(buf);
	return err;
}

/* -- Writing ------------------------------------------------------------- */

struct encoder {
	unsigned char *buf;
	uint32_t nblocks;
	uint32_t cap;
	uint32_t free_entry;     /* the data block being filled, 0 when none */
};

/* A new zeroed block at the end of the file: its number, or 0 without memory. */
static uint32_t new_block(struct encoder *e)
{
	if (e->nblocks == e->cap) {
		uint32_t cap = e->cap * 2;
		unsigned char *b = realloc(e->buf, (size_t)cap * QBLOCK);
		if (!b)
			return 0;
		memset(b + (size_t)e->cap * QBLOCK, 0, (size_t)(cap - e->cap) * QBLOCK);
		e->buf = b;
		e->cap = cap;
	}
	return e->nblocks++;
}

static void put_entry(unsigned char *p, const struct ext4fs_quota_record *r)
{
	le32_store(p, r->id);
	le32_store(p + 4, 0);
	le64_store(p + 8, r->inode_hard);
	le64_store(p + 16, r->inode_soft);
	le64_store(p + 24, r->inodes);
	le64_store(p + 32, r->block_hard);
	le64_store(p + 40, r->block_soft);
	le64_store(p + 48, r->space);
	le64_store(p + 56, r->block_grace_end);
	le64_store(p + 64, r->inode_grace_end);
	if (entry_is_free(p))
		le64_store(p + 64, 1);
}

/* Store r in the data block being filled (a new one when none is), and return that block, or 0. */
static uint32_t store_entry(struct encoder *e, const struct ext4fs_quota_record *r)
{
	if (!e->free_entry && !(e->free_entry = new_block(e)))
		return 0;
	uint32_t blk = e->free_entry;
	unsigned char *b = e->buf + (size_t)blk * QBLOCK;
	uint16_t used = le16_load(b + 8);
	put_entry(b + DATA_HEADER_BYTES + used * ENTRY_BYTES, r);
	le16_store(b + 8, (uint16_t)(used + 1));
	if (used + 1 == ENTRIES_PER_BLOCK)
		e->free_entry = 0;
	return blk;
}

static int insert(struct encoder *e, const struct ext4fs_quota_record *r)
{
	uint32_t blk = ROOT_BLOCK;

	for (int depth = 0; depth < TREE_DEPTH; depth++) {
		unsigned idx = (r->id >> (8 * (TREE_DEPTH - 1 - depth))) & 0xff;
		uint32_t ref = le32_load(e->buf + (size_t)blk * QBLOCK + 4 * idx);
		if (!ref) {
			ref = depth + 1 < TREE_DEPTH ? new_block(e) : store_entry(e, r);
			if (!ref)
				return EXT4FS_E_NO_MEMORY;
			le32_store(e->buf + (size_t)blk * QBLOCK + 4 * idx, ref);
		}
		blk = ref;
	}
	return 0;
}

int ext4fs_quota_encode(enum ext4fs_quota_type type, const struct ext4fs_quota_file *q, unsigned char **buf,
			size_t *len)
{
	struct encoder e = { .nblocks = ROOT_BLOCK + 1, .cap = 8 };
	int err = 0;

	*buf = NULL;
	*len = 0;
	if ((unsigned)type >= EXT4FS_QUOTA_TYPES)
		return EXT4FS_E_INVALID_ARG;
	for (size_t i = 1; i < q->count; i++)
		if (q->recs[i].id <= q->recs[i - 1].id)
			return EXT4FS_E_INVALID_ARG;
	e.buf = calloc(e.cap, QBLOCK);
	if (!e.buf)
		return EXT4FS_E_NO_MEMORY;
	for (size_t i = 0; i < q->count && !err; i++)
		err = insert(&e, &q->recs[i]);
	if (err) {
		free(e.buf);
		return err;
	}
	le32_store(e.buf, magics[type]);
	le32_store(e.buf + 4, QUOTA_VERSION);
	unsigned char *info = e.buf + HEADER_BYTES;
	le32_store(info, q->block_grace);
	le32_store(info + 4, q->inode_grace);
	le32_store(info + 8, q->flags);
	le32_store(info + 12, e.nblocks);
	le32_store(info + 16, 0);
	le32_store(info + 20, e.free_entry);
	*buf = e.buf;
	*len = (size_t)e.nblocks * QBLOCK;
	return 0;
}

int ext4fs_quota_write(struct ext4fs_fs *fs, uint32_t ino, enum ext4fs_quota_type type,
		       const struct ext4fs_quota_file *q)
{
	struct ext4fs_inode in;
	unsigned char *buf;
	size_t len;
	int err;

	err = ext4fs_quota_encode(type, q, &buf, &len);
	if (err)
		return ext4fs__fs_fail(fs, err, "quota file (inode %u): %s", ino,
				       err == EXT4FS_E_NO_MEMORY ? "no memory to build it"
								 : "unknown type, or records not sorted by id");
	err = ext4fs_inode_read(fs, ino, &in);
	/* The old blocks go first, read by the map as a regular file's whatever the mode says. */
	if (!err && (ext4fs_inode_blocks_raw(fs, &in) || ext4fs_inode_size(&in))) {
		in.i_mode = (uint16_t)((in.i_mode & 07777) | EXT4FS_S_IFREG);
		err = ext4fs_file_truncate(fs, ino, &in, 0);
	}
	if (!err) {
		ext4fs_inode_init_new(fs, ino, EXT4FS_S_IFREG | 0600, 0, 0, &in);
		in.i_flags |= EXT4FS_IMMUTABLE_FL;
		in.i_generation = 0;
		err = ext4fs_inode_write(fs, ino, &in);
	}
	if (!err)
		err = ext4fs_file_write(fs, ino, &in, 0, buf, len, len);
	free(buf);
	return err;
}
