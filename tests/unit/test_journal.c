/*
 * test_journal.c - reading and replaying the jbd2 journal.
 *
 * Each test makes a file system with a journal through the mkfs engine
 * (rw_image.c), writes journal blocks into it by hand with the small log
 * writer below (descriptor, data, revoke and commit blocks, with the
 * checksums of the chosen journal features), sets needs_recovery, and then
 * opens it the way e4fsck will: EXT4FS_OPEN_RECOVERY, ext4fs_journal_open,
 * scan or recover.  An external journal device is made by hand in a
 * second buffer and opened with ext4fs_journal_open_external().  Replayed blocks land in free blocks at the end of the
 * file system, so after recovery e2fsck -fn must still find the file
 * system clean.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/crc.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/journal.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

#define JBLOCKS 1024      /* the journal the tests write into (its log wraps here) */
#define JMAP_MAX 2048
#define MAX_TAGS 64

/* -- byte helpers (jbd2 is big-endian) -- */

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* -- the test image and its journal -- */

struct jt {
	struct rw_image img;
	uint32_t bs;
	uint64_t blocks;
	uint64_t jmap[JMAP_MAX];     /* journal block -> file-system block */
	uint32_t incompat, compat;
	uint32_t seed;
	uint8_t uuid[16];
	uint32_t pos;                /* next log block to write */
	uint64_t commit_sec;
	/* transaction being built */
	uint32_t tid;
	int ntags;
	uint64_t home[MAX_TAGS];
	unsigned char *data[MAX_TAGS];
	uint32_t extra_flags[MAX_TAGS];
	int nrevokes;
	uint64_t revokes[MAX_TAGS];
	struct ext4fs_fs *fs;
	struct ext4fs_journal *j;
};

static void t_journal(struct ext4fs_mkfs_params *p)
{
	p->journal_blocks = JBLOCKS;
}

static void t_journal_fc(struct ext4fs_mkfs_params *p)
{
	p->journal_blocks = JBLOCKS + 16;
}

static void t_journal_1k(struct ext4fs_mkfs_params *p)
{
	p->journal_blocks = JBLOCKS;
	p->block_size = 1024;
}

static unsigned char *blockp(struct jt *t, uint64_t blk)
{
	return t->img.buf + blk * t->bs;
}

static unsigned char *jblock(struct jt *t, uint32_t lblk)
{
	return blockp(t, t->jmap[lblk]);
}

/* Rewrite the primary superblock's features through a decode/encode round trip. */
static void set_sb_incompat(struct jt *t, uint32_t set, uint32_t clear)
{
	unsigned char *raw = t->img.buf + 1024;
	struct ext4fs_super sb;

	ext4fs_super_decode(&sb, raw);
	sb.s_feature_incompat = (sb.s_feature_incompat | set) & ~clear;
	ext4fs_super_encode(&sb, raw);
	if (sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) {
		uint32_t c = ext4fs_super_csum(raw);
		raw[0x3FC] = (unsigned char)c;
		raw[0x3FD] = (unsigned char)(c >> 8);
		raw[0x3FE] = (unsigned char)(c >> 16);
		raw[0x3FF] = (unsigned char)(c >> 24);
	}
}

static struct ext4fs_super read_sb(struct jt *t)
{
	struct ext4fs_super sb;

	ext4fs_super_decode(&sb, t->img.buf + 1024);
	return sb;
}

static void jsb_update(struct jt *t, uint32_t start, uint32_t sequence)
{
	unsigned char *jsb = jblock(t, 0);

	put32(jsb + 0x1C, start);
	put32(jsb + 0x18, sequence);
	put32(jsb + 0x24, t->compat);
	put32(jsb + 0x28, t->incompat);
	jsb[0x50] = (t->incompat & (EXT4FS_JBD2_INCOMPAT_CSUM_V2 | EXT4FS_JBD2_INCOMPAT_CSUM_V3)) ?
		    EXT4FS_JBD2_CRC32C_CHKSUM : 0;
	put32(jsb + 0xFC, ext4fs_journal_sb_csum(jsb));
}

/* Make the image, map its journal, choose the journal's features. */
static void jt_setup(struct jt *t, void (*tweak)(struct ext4fs_mkfs_params *), uint64_t blocks,
		     uint32_t bs, uint32_t incompat, uint32_t compat)
{
	struct ext4fs_inode inode;

	memset(t, 0, sizeof(*t));
	rw_image_open(&t->img, blocks, bs, tweak);
	t->bs = bs;
	t->blocks = ext4fs_geom(t->img.fs)->blocks_count;
	assert_int_equal(ext4fs_inode_read(t->img.fs, 8, &inode), 0);
	assert_true(ext4fs_inode_size(&inode) / bs <= JMAP_MAX);
	for (uint32_t l = 0; l < ext4fs_inode_size(&inode) / bs; l++) {
		uint64_t pblk, run;
		assert_int_equal(ext4fs_bmap(t->img.fs, 8, &inode, l, &pblk, &run, NULL), 0);
		assert_true(pblk != 0);
		t->jmap[l] = pblk;
	}
	assert_int_equal(ext4fs_close_flush(t->img.fs), 0);
	t->img.fs = NULL;
	memcpy(t->uuid, jblock(t, 0) + 0x30, 16);
	t->seed = ext4fs_journal_csum_seed(t->uuid);
	t->incompat = incompat;
	t->compat = compat;
	t->pos = 1;
	t->commit_sec = 1700000000;
	jsb_update(t, 0, 1);
}

static int csum_v23(const struct jt *t)
{
	return (t->incompat & (EXT4FS_JBD2_INCOMPAT_CSUM_V2 | EXT4FS_JBD2_INCOMPAT_CSUM_V3)) != 0;
}

static void tail_csum(struct jt *t, unsigned char *b)
{
	if (!csum_v23(t))
		return;
	put32(b + t->bs - 4, 0);
	put32(b + t->bs - 4, ext4fs_crc32c(t->seed, b, t->bs));
}

static void header(unsigned char *b, uint32_t type, uint32_t tid)
{
	put32(b, EXT4FS_JBD2_MAGIC);
	put32(b + 4, type);
	put32(b + 8, tid);
}

static uint32_t next_pos(uint32_t pos)
{
	return pos + 1 >= JBLOCKS ? 1 : pos + 1;
}

static void begin(struct jt *t, uint32_t tid)
{
	t->tid = tid;
	t->ntags = 0;
	t->nrevokes = 0;
}

/* Log a copy of data (bs bytes, caller keeps it) for block home. */
static void add_block(struct jt *t, uint64_t home, unsigned char *data)
{
	assert_true(t->ntags < MAX_TAGS);
	t->home[t->ntags] = home;
	t->data[t->ntags] = data;
	t->extra_flags[t->ntags] = 0;
	t->ntags++;
}

static void add_revoke(struct jt *t, uint64_t blk)
{
	t->revokes[t->nrevokes++] = blk;
}

enum commit_how { COMMIT_OK, COMMIT_NONE, COMMIT_BAD_CSUM, COMMIT_OLD_TIME };

static unsigned char *fill(struct jt *t, unsigned seed)
{
	unsigned char *b = malloc(t->bs);

	assert_non_null(b);
	for (uint32_t i = 0; i < t->bs; i++)
		b[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
	return b;
}

/* Write the transaction: descriptor, data, revoke block, commit block. */
static void commit(struct jt *t, enum commit_how how)
{
	size_t tag_bytes = ext4fs_journal_tag_bytes(t->incompat);
	uint32_t crc1 = ~0U;
	unsigned char *b;

	if (t->ntags) {
		uint32_t dpos = t->pos;
		size_t off = 12;

		b = jblock(t, dpos);
		memset(b, 0, t->bs);
		header(b, EXT4FS_JBD2_DESCRIPTOR_BLOCK, t->tid);
		t->pos = next_pos(t->pos);
		for (int i = 0; i < t->ntags; i++) {
			unsigned char *dst = jblock(t, t->pos);
			uint32_t flags = t->extra_flags[i];
			unsigned char seq[4];
			uint32_t crc;

			memcpy(dst, t->data[i], t->bs);
			if (get32(dst) == EXT4FS_JBD2_MAGIC) {
				put32(dst, 0);
				flags |= EXT4FS_JBD2_FLAG_ESCAPE;
			}
			if (i > 0)
				flags |= EXT4FS_JBD2_FLAG_SAME_UUID;
			if (i == t->ntags - 1)
				flags |= EXT4FS_JBD2_FLAG_LAST_TAG;
			put32(seq, t->tid);
			crc = ext4fs_crc32c(ext4fs_crc32c(t->seed, seq, 4), dst, t->bs);
			put32(b + off, (uint32_t)t->home[i]);
			if (t->incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V3) {
				put32(b + off + 4, flags);
				put32(b + off + 8, (uint32_t)(t->home[i] >> 32));
				put32(b + off + 12, crc);
			} else {
				put16(b + off + 4, (t->incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V2) ? (uint16_t)crc : 0);
				put16(b + off + 6, (uint16_t)flags);
				if (t->incompat & EXT4FS_JBD2_INCOMPAT_64BIT)
					put32(b + off + 8, (uint32_t)(t->home[i] >> 32));
			}
			off += tag_bytes;
			if (i == 0) {
				memcpy(b + off, t->uuid, 16);
				off += 16;
			}
			assert_true(off <= t->bs - 4);
			t->pos = next_pos(t->pos);
		}
		tail_csum(t, b);
		crc1 = ext4fs_journal_crc32_be(crc1, b, t->bs);
		for (int i = 0; i < t->ntags; i++) {
			uint32_t p = dpos;
			for (int k = 0; k <= i; k++)
				p = next_pos(p);
			crc1 = ext4fs_journal_crc32_be(crc1, jblock(t, p), t->bs);
		}
	}
	if (t->nrevokes) {
		size_t rec = (t->incompat & EXT4FS_JBD2_INCOMPAT_64BIT) ? 8 : 4;
		size_t off = 16;

		b = jblock(t, t->pos);
		memset(b, 0, t->bs);
		header(b, EXT4FS_JBD2_REVOKE_BLOCK, t->tid);
		for (int i = 0; i < t->nrevokes; i++) {
			if (rec == 8) {
				put32(b + off, (uint32_t)(t->revokes[i] >> 32));
				put32(b + off + 4, (uint32_t)t->revokes[i]);
			} else {
				put32(b + off, (uint32_t)t->revokes[i]);
			}
			off += rec;
		}
		put32(b + 12, (uint32_t)off);
		tail_csum(t, b);
		t->pos = next_pos(t->pos);
	}
	if (how == COMMIT_NONE)
		return;
	b = jblock(t, t->pos);
	memset(b, 0, t->bs);
	header(b, EXT4FS_JBD2_COMMIT_BLOCK, t->tid);
	t->commit_sec += how == COMMIT_OLD_TIME ? (uint64_t)-100 : 10;
	put32(b + 0x30, (uint32_t)(t->commit_sec >> 32));
	put32(b + 0x34, (uint32_t)t->commit_sec);
	if (t->compat & EXT4FS_JBD2_COMPAT_CHECKSUM) {
		b[0x0C] = EXT4FS_JBD2_CRC32_CHKSUM;
		b[0x0D] = EXT4FS_JBD2_CRC32_CHKSUM_SIZE;
		put32(b + 0x10, crc1);
	} else if (csum_v23(t)) {
		put32(b + 0x10, ext4fs_crc32c(t->seed, b, t->bs));
	}
	if (how == COMMIT_BAD_CSUM)
		b[0x10] ^= 0x55;
	t->pos = next_pos(t->pos);
}

/* Mark the log as starting at block start with transaction tid, and set needs_recovery. */
static void arm(struct jt *t, uint32_t start, uint32_t tid)
{
	jsb_update(t, start, tid);
	set_sb_incompat(t, EXT4FS_FEATURE_INCOMPAT_RECOVER, 0);
}

static int open_fs(struct jt *t, unsigned flags, char *msg, size_t len)
{
	struct ext4fs_io *io = NULL;
	struct ext4fs_open_opts opts = { .flags = flags };

	assert_int_equal(ext4fs_io_open_memory(t->img.buf, t->img.size, flags != 0, &io), 0);
	return ext4fs_open_io(io, &opts, &t->fs, msg, len);
}

static void open_journal(struct jt *t, unsigned flags)
{
	char msg[256];

	if (open_fs(t, flags, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	if (ext4fs_journal_open(t->fs, &t->j))
		fail_msg("journal open: %s", ext4fs_errmsg(t->fs));
}

static void close_journal(struct jt *t)
{
	ext4fs_journal_close(t->j);
	ext4fs_close(t->fs);
	t->j = NULL;
	t->fs = NULL;
}

static void recover(struct jt *t, struct ext4fs_journal_info *info)
{
	int err;

	open_journal(t, EXT4FS_OPEN_RECOVERY);
	err = ext4fs_journal_recover(t->j, info);
	if (err)
		fail_msg("recover: %s (%s)", ext4fs_errmsg(t->fs), ext4fs_strerror(err));
	assert_true(info->recovered);
	close_journal(t);
}

/* After recovery: flag cleared, journal empty, the next sequence, e2fsck clean. */
static void assert_recovered(struct jt *t, uint32_t next_seq)
{
	char msg[256];

	assert_false(read_sb(t).s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER);
	assert_int_equal(get32(jblock(t, 0) + 0x1C), 0);
	assert_int_equal(get32(jblock(t, 0) + 0x18), next_seq);
	if (csum_v23(t))
		assert_int_equal(get32(jblock(t, 0) + 0xFC), ext4fs_journal_sb_csum(jblock(t, 0)));
	/* A writable open works again, and e2fsck agrees nothing is left to do. */
	if (open_fs(t, EXT4FS_OPEN_RW, msg, sizeof(msg)))
		fail_msg("reopen: %s", msg);
	t->img.fs = t->fs;
	t->fs = NULL;
	rw_image_assert_clean(&t->img);
}

static void jt_free(struct jt *t)
{
	close_journal(t);
	rw_image_close(&t->img);
}

/* Free blocks at the end of the file system to replay into. */
static uint64_t target(struct jt *t, unsigned i)
{
	return t->blocks - 2 - i;
}

static const uint32_t V3_64 = EXT4FS_JBD2_INCOMPAT_REVOKE | EXT4FS_JBD2_INCOMPAT_64BIT |
			      EXT4FS_JBD2_INCOMPAT_CSUM_V3;

/* -- tests -- */

static void one_transaction__replays_its_blocks(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *d[3];
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	begin(&t, 5);
	for (unsigned i = 0; i < 3; i++) {
		d[i] = fill(&t, i + 1);
		add_block(&t, target(&t, i), d[i]);
	}
	commit(&t, COMMIT_OK);
	arm(&t, 1, 5);

	open_journal(&t, 0);
	assert_true(ext4fs_journal_needs_recovery(t.j));
	assert_int_equal(ext4fs_journal_scan(t.j, &info), 0);
	assert_int_equal(info.first_tid, 5);
	assert_int_equal(info.end_tid, 6);
	assert_int_equal(info.transactions, 1);
	assert_int_equal(info.descriptor_blocks, 1);
	assert_int_equal(info.data_blocks, 3);
	assert_int_equal(info.replayed, 3);
	assert_int_equal(info.head_block, 6);
	assert_int_equal(info.end_reason, EXT4FS_JOURNAL_END_NO_MAGIC);
	/* Scanning wrote nothing. */
	for (unsigned i = 0; i < 3; i++)
		assert_memory_not_equal(blockp(&t, target(&t, i)), d[i], t.bs);
	close_journal(&t);

	recover(&t, &info);
	assert_int_equal(info.replayed, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_memory_equal(blockp(&t, target(&t, i)), d[i], t.bs);
		free(d[i]);
	}
	assert_recovered(&t, 7);
	jt_free(&t);
}

static void several_transactions__the_latest_copy_wins(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a = NULL, *b = NULL, *c = NULL;
	(void)state;

	jt_setup(&t, t_journal_1k, 16384, 1024, V3_64, 0);
	a = fill(&t, 10);
	b = fill(&t, 11);
	c = fill(&t, 12);
	begin(&t, 100);
	add_block(&t, target(&t, 0), a);
	add_block(&t, target(&t, 1), c);
	commit(&t, COMMIT_OK);
	begin(&t, 101);
	add_block(&t, target(&t, 0), b);
	commit(&t, COMMIT_OK);
	begin(&t, 102);
	add_block(&t, target(&t, 2), c);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 100);

	recover(&t, &info);
	assert_int_equal(info.transactions, 3);
	assert_int_equal(info.replayed, 4);
	assert_memory_equal(blockp(&t, target(&t, 0)), b, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 1)), c, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 2)), c, t.bs);
	assert_recovered(&t, 104);
	free(a);
	free(b);
	free(c);
	jt_free(&t);
}

static void revoke__cancels_the_block_in_earlier_and_same_transactions(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *zero;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 3);
	zero = calloc(1, t.bs);
	begin(&t, 7);
	add_block(&t, target(&t, 0), a);
	add_block(&t, target(&t, 1), a);
	commit(&t, COMMIT_OK);
	begin(&t, 8);
	add_block(&t, target(&t, 2), a);
	add_revoke(&t, target(&t, 0));
	add_revoke(&t, target(&t, 2));
	commit(&t, COMMIT_OK);
	arm(&t, 1, 7);

	recover(&t, &info);
	assert_int_equal(info.revoke_blocks, 1);
	assert_int_equal(info.revoke_records, 2);
	assert_int_equal(info.revoked, 2);
	assert_int_equal(info.replayed, 1);
	assert_memory_equal(blockp(&t, target(&t, 0)), zero, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 1)), a, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 2)), zero, t.bs);
	assert_recovered(&t, 10);
	free(a);
	free(zero);
	jt_free(&t);
}

static void revoke__does_not_cancel_a_later_transaction(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *b;
	(void)state;

	/* 32-bit revoke records and tags: no 64bit feature, no checksums. */
	jt_setup(&t, t_journal, 8192, 4096, EXT4FS_JBD2_INCOMPAT_REVOKE, 0);
	a = fill(&t, 4);
	b = fill(&t, 5);
	begin(&t, 20);
	add_block(&t, target(&t, 0), a);
	add_revoke(&t, target(&t, 0));
	commit(&t, COMMIT_OK);
	begin(&t, 21);
	add_block(&t, target(&t, 0), b);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 20);

	recover(&t, &info);
	assert_int_equal(info.revoked, 1);
	assert_int_equal(info.replayed, 1);
	assert_memory_equal(blockp(&t, target(&t, 0)), b, t.bs);
	assert_recovered(&t, 23);
	free(a);
	free(b);
	jt_free(&t);
}

static void torn_last_transaction__is_ignored(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *b, *zero;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 6);
	b = fill(&t, 7);
	zero = calloc(1, t.bs);
	begin(&t, 30);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	begin(&t, 31);
	add_block(&t, target(&t, 1), b);
	commit(&t, COMMIT_NONE);
	arm(&t, 1, 30);

	recover(&t, &info);
	assert_int_equal(info.transactions, 1);
	assert_int_equal(info.end_tid, 31);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 1)), zero, t.bs);
	/* The torn transaction's ID is skipped too. */
	assert_recovered(&t, 32);
	free(a);
	free(b);
	free(zero);
	jt_free(&t);
}

static void bad_commit_checksum__ends_the_log(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *b, *zero;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 8);
	b = fill(&t, 9);
	zero = calloc(1, t.bs);
	begin(&t, 40);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	begin(&t, 41);
	add_block(&t, target(&t, 1), b);
	commit(&t, COMMIT_BAD_CSUM);
	begin(&t, 42);
	add_block(&t, target(&t, 2), b);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 40);

	recover(&t, &info);
	assert_int_equal(info.end_tid, 41);
	assert_int_equal(info.failed_commit, 41);
	assert_int_equal(info.end_reason, EXT4FS_JOURNAL_END_COMMIT_CSUM);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 1)), zero, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 2)), zero, t.bs);
	/* As e2fsck does, the superblock records the error. */
	assert_true(read_sb(&t).s_state & EXT4FS_STATE_ERROR);
	assert_int_equal(get32(jblock(&t, 0) + 0x18), 42);
	assert_false(read_sb(&t).s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER);
	free(a);
	free(b);
	free(zero);
	jt_free(&t);
}

static void checksum_v2__short_tags_and_16_bit_checksums(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *b;
	(void)state;

	jt_setup(&t, t_journal_1k, 16384, 1024, EXT4FS_JBD2_INCOMPAT_REVOKE | EXT4FS_JBD2_INCOMPAT_CSUM_V2,
		 0);
	a = fill(&t, 13);
	b = fill(&t, 14);
	begin(&t, 2);
	for (unsigned i = 0; i < 20; i++)
		add_block(&t, target(&t, i), (i & 1) ? a : b);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 2);

	recover(&t, &info);
	assert_int_equal(info.replayed, 20);
	assert_int_equal(info.bad_block_csums, 0);
	for (unsigned i = 0; i < 20; i++)
		assert_memory_equal(blockp(&t, target(&t, i)), (i & 1) ? a : b, t.bs);
	assert_recovered(&t, 4);
	free(a);
	free(b);
	jt_free(&t);
}

static void checksum_v1__a_bad_transaction_crc_ends_the_log(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *zero;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, EXT4FS_JBD2_INCOMPAT_REVOKE, EXT4FS_JBD2_COMPAT_CHECKSUM);
	a = fill(&t, 15);
	zero = calloc(1, t.bs);
	begin(&t, 9);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	begin(&t, 10);
	add_block(&t, target(&t, 1), a);
	commit(&t, COMMIT_BAD_CSUM);
	arm(&t, 1, 9);

	recover(&t, &info);
	assert_int_equal(info.transactions, 1);
	assert_int_equal(info.failed_commit, 10);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 1)), zero, t.bs);
	free(a);
	free(zero);
	jt_free(&t);
}

static void tags_64bit__high_words_are_read(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a;
	(void)state;

	/* Checksum v2 with 64bit: 14-byte tags. */
	jt_setup(&t, t_journal, 8192, 4096,
		 EXT4FS_JBD2_INCOMPAT_REVOKE | EXT4FS_JBD2_INCOMPAT_64BIT | EXT4FS_JBD2_INCOMPAT_CSUM_V2, 0);
	assert_int_equal(ext4fs_journal_tag_bytes(t.incompat), 14);
	a = fill(&t, 16);
	begin(&t, 3);
	add_block(&t, target(&t, 0), a);
	add_block(&t, target(&t, 1) | (1ULL << 32), a);   /* same low word, far beyond the end */
	add_revoke(&t, target(&t, 2) | (1ULL << 32));      /* must not revoke target 2 */
	commit(&t, COMMIT_OK);
	begin(&t, 4);
	add_block(&t, target(&t, 2), a);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 3);

	recover(&t, &info);
	assert_int_equal(info.replayed, 2);
	assert_int_equal(info.bad_block_tags, 1);
	assert_int_equal(info.revoked, 0);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 2)), a, t.bs);
	free(a);
	jt_free(&t);
}

static void escaped_block__gets_its_magic_back(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 17);
	put32(a, EXT4FS_JBD2_MAGIC);
	begin(&t, 11);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 11);
	/* The log holds the block with its first word zeroed. */
	assert_int_equal(get32(jblock(&t, 2)), 0);

	recover(&t, &info);
	assert_int_equal(info.replayed, 1);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	assert_recovered(&t, 13);
	free(a);
	jt_free(&t);
}

struct events {
	int bad_tags;
	uint64_t last_bad;
	int commits;
};

static void count_events(const struct ext4fs_journal_event *ev, void *arg)
{
	struct events *e = arg;

	if (ev->kind == EXT4FS_JOURNAL_EV_BAD_BLOCK_TAG) {
		e->bad_tags++;
		e->last_bad = ev->fs_block;
	}
	if (ev->kind == EXT4FS_JOURNAL_EV_COMMIT)
		e->commits++;
}

static void tag_outside_the_fs_or_in_the_journal__is_refused_and_reported(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	struct events ev = { 0 };
	unsigned char *a, *jcopy;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 18);
	begin(&t, 50);
	add_block(&t, target(&t, 0), a);
	add_block(&t, t.blocks, a);              /* one past the end */
	add_block(&t, t.jmap[600], a);           /* a block of the journal itself */
	commit(&t, COMMIT_OK);
	arm(&t, 1, 50);
	jcopy = malloc(t.bs);
	memcpy(jcopy, jblock(&t, 600), t.bs);

	open_journal(&t, EXT4FS_OPEN_RECOVERY);
	ext4fs_journal_set_event_fn(t.j, count_events, &ev);
	assert_int_equal(ext4fs_journal_recover(t.j, &info), 0);
	close_journal(&t);
	assert_int_equal(info.replayed, 1);
	assert_int_equal(info.bad_block_tags, 2);
	assert_int_equal(ev.bad_tags, 2);
	assert_int_equal(ev.commits, 1);
	assert_int_equal(ev.last_bad, t.jmap[600]);
	assert_memory_equal(jblock(&t, 600), jcopy, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	/* Skipped blocks: the file system is no longer marked valid, so a full check follows. */
	assert_false(read_sb(&t).s_state & EXT4FS_STATE_VALID);
	free(a);
	free(jcopy);
	jt_free(&t);
}

static void bad_data_checksum__skips_that_block(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *zero;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 19);
	zero = calloc(1, t.bs);
	begin(&t, 60);
	add_block(&t, target(&t, 0), a);
	add_block(&t, target(&t, 1), a);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 60);
	jblock(&t, 3)[100] ^= 1;   /* the second data block */

	recover(&t, &info);
	assert_int_equal(info.replayed, 1);
	assert_int_equal(info.bad_block_csums, 1);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 1)), zero, t.bs);
	free(a);
	free(zero);
	jt_free(&t);
}

static void bad_descriptor_checksum__refuses_or_ends_a_stale_log(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *zero, *before;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 20);
	zero = calloc(1, t.bs);
	begin(&t, 70);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	begin(&t, 71);
	add_block(&t, target(&t, 1), a);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 70);
	jblock(&t, 4)[40] ^= 1;    /* descriptor of 71, committed later in time: corruption */
	before = malloc(t.img.size);
	memcpy(before, t.img.buf, t.img.size);

	open_journal(&t, EXT4FS_OPEN_RECOVERY);
	assert_int_equal(ext4fs_journal_recover(t.j, &info), EXT4FS_E_JOURNAL_CSUM);
	assert_non_null(strstr(ext4fs_errmsg(t.fs), "transaction 71"));
	assert_false(info.recovered);
	close_journal(&t);
	/* Nothing was written: the journal still needs recovery. */
	assert_memory_equal(t.img.buf, before, t.img.size);

	/* The same block left from an older cycle (its commit is older): the log just ends. */
	t.pos = 4;
	t.commit_sec -= 20;
	begin(&t, 71);
	add_block(&t, target(&t, 1), a);
	commit(&t, COMMIT_OLD_TIME);
	jblock(&t, 4)[40] ^= 1;
	recover(&t, &info);
	assert_int_equal(info.end_reason, EXT4FS_JOURNAL_END_STALE);
	assert_int_equal(info.transactions, 1);
	assert_memory_equal(blockp(&t, target(&t, 0)), a, t.bs);
	assert_memory_equal(blockp(&t, target(&t, 1)), zero, t.bs);
	free(a);
	free(zero);
	free(before);
	jt_free(&t);
}

static void log_wrapping_round_the_ring__is_followed(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *d[6];
	(void)state;

	jt_setup(&t, t_journal_1k, 16384, 1024, V3_64, 0);
	t.pos = JBLOCKS - 3;
	begin(&t, 0xFFFFFFFFU);    /* the transaction ID wraps too */
	for (unsigned i = 0; i < 6; i++) {
		d[i] = fill(&t, 30 + i);
		add_block(&t, target(&t, i), d[i]);
	}
	commit(&t, COMMIT_OK);
	begin(&t, 0);
	add_revoke(&t, target(&t, 5));
	commit(&t, COMMIT_OK);
	arm(&t, JBLOCKS - 3, 0xFFFFFFFFU);

	recover(&t, &info);
	assert_int_equal(info.transactions, 2);
	assert_int_equal(info.replayed, 5);
	assert_int_equal(info.revoked, 1);
	assert_int_equal(info.head_block, 8);
	for (unsigned i = 0; i < 5; i++)
		assert_memory_equal(blockp(&t, target(&t, i)), d[i], t.bs);
	assert_recovered(&t, 2);
	for (unsigned i = 0; i < 6; i++)
		free(d[i]);
	jt_free(&t);
}

static void damaged_log__is_refused_and_discard_skips_past_it(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 25);
	begin(&t, 200);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	begin(&t, 201);
	add_revoke(&t, target(&t, 1));
	commit(&t, COMMIT_OK);
	begin(&t, 202);
	add_block(&t, target(&t, 1), a);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 200);
	/* The revoke block (journal block 4) claims more bytes than a block holds. */
	put32(jblock(&t, 4) + 12, t.bs + 4);
	tail_csum(&t, jblock(&t, 4));

	open_journal(&t, EXT4FS_OPEN_RECOVERY);
	assert_int_equal(ext4fs_journal_scan(t.j, &info), EXT4FS_E_JOURNAL_LOG);
	assert_non_null(strstr(ext4fs_errmsg(t.fs), "r_count"));
	/* Discarding still starts the next transaction past every ID the log holds. */
	assert_int_equal(ext4fs_journal_discard(t.j), 0);
	close_journal(&t);
	assert_int_equal(get32(jblock(&t, 0) + 0x1C), 0);
	assert_int_equal(get32(jblock(&t, 0) + 0x18), 200 + (JBLOCKS - 1) + 1);
	assert_false(read_sb(&t).s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER);
	free(a);
	jt_free(&t);
}

/* A channel over memory that stops writing after a number of writes (a crash). */
static const struct ext4fs_io_ops *real_ops;
static struct ext4fs_io_ops crashing_ops;
static int writes_left;

static int crashing_write(struct ext4fs_io *io, uint64_t off, const void *buf, size_t len)
{
	if (writes_left-- <= 0)
		return -5;   /* -EIO */
	return real_ops->write(io, off, buf, len);
}

static void interrupted_replay__replays_again_to_the_same_result(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RECOVERY };
	unsigned char *a = NULL, *b = NULL, *armed, *reference;
	char msg[256];
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 21);
	b = fill(&t, 22);
	begin(&t, 80);
	for (unsigned i = 0; i < 8; i++)
		add_block(&t, target(&t, i), a);
	commit(&t, COMMIT_OK);
	begin(&t, 81);
	for (unsigned i = 0; i < 8; i += 2)
		add_block(&t, target(&t, i), b);
	add_revoke(&t, target(&t, 7));
	commit(&t, COMMIT_OK);
	arm(&t, 1, 80);
	armed = malloc(t.img.size);
	memcpy(armed, t.img.buf, t.img.size);

	recover(&t, &info);
	reference = malloc(t.img.size);
	memcpy(reference, t.img.buf, t.img.size);

	/* Stop after every possible number of writes, then run again. */
	for (int crash_at = 0; crash_at < 14; crash_at++) {
		struct ext4fs_io *io = NULL;
		int err;

		memcpy(t.img.buf, armed, t.img.size);
		assert_int_equal(ext4fs_io_open_memory(t.img.buf, t.img.size, 1, &io), 0);
		real_ops = io->ops;
		crashing_ops = *io->ops;
		crashing_ops.write = crashing_write;
		io->ops = &crashing_ops;
		writes_left = crash_at;
		if (ext4fs_open_io(io, &opts, &t.fs, msg, sizeof(msg)))
			fail_msg("open: %s", msg);
		assert_int_equal(ext4fs_journal_open(t.fs, &t.j), 0);
		err = ext4fs_journal_recover(t.j, &info);
		close_journal(&t);
		if (err == 0)
			break;   /* every write done: nothing left to interrupt */
		recover(&t, &info);
		assert_memory_equal(t.img.buf, reference, t.img.size);
	}
	free(a);
	free(b);
	free(armed);
	free(reference);
	jt_free(&t);
}

static void recovery__needs_a_handle_opened_for_it(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	char msg[256];
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	begin(&t, 2);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 2);
	/* A writable open is refused while the journal needs recovery. */
	assert_int_equal(open_fs(&t, EXT4FS_OPEN_RW, msg, sizeof(msg)), EXT4FS_E_NEEDS_RECOVERY);
	open_journal(&t, 0);
	assert_int_equal(ext4fs_journal_recover(t.j, &info), EXT4FS_E_READ_ONLY);
	assert_int_equal(ext4fs_journal_discard(t.j), EXT4FS_E_READ_ONLY);
	close_journal(&t);
	assert_true(read_sb(&t).s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER);
	jt_free(&t);
}

static void empty_journal__only_clears_the_flag(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	arm(&t, 0, 9);
	open_journal(&t, 0);
	assert_false(ext4fs_journal_needs_recovery(t.j));
	assert_int_equal(ext4fs_journal_scan(t.j, &info), 0);
	assert_int_equal(info.end_reason, EXT4FS_JOURNAL_END_EMPTY);
	close_journal(&t);
	recover(&t, &info);
	assert_int_equal(info.replayed, 0);
	assert_recovered(&t, 9);
	jt_free(&t);
}

static void discard__empties_the_journal_without_replaying(void **state)
{
	struct jt t;
	unsigned char *a, *zero;
	(void)state;

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	a = fill(&t, 23);
	zero = calloc(1, t.bs);
	begin(&t, 90);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 90);
	open_journal(&t, EXT4FS_OPEN_RECOVERY);
	assert_int_equal(ext4fs_journal_discard(t.j), 0);
	close_journal(&t);
	assert_memory_equal(blockp(&t, target(&t, 0)), zero, t.bs);
	assert_int_equal(get32(jblock(&t, 0) + 0x1C), 0);
	assert_int_equal(get32(jblock(&t, 0) + 0x18), 92);
	assert_false(read_sb(&t).s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER);
	assert_false(read_sb(&t).s_state & EXT4FS_STATE_VALID);
	free(a);
	free(zero);
	jt_free(&t);
}

static void fast_commit_area__is_detected_not_replayed(void **state)
{
	struct jt t;
	struct ext4fs_journal_info info;
	unsigned char *a, *fc;
	(void)state;

	/* 1024 log blocks and 16 for fast commits, as mke2fs -O fast_commit makes it. */
	jt_setup(&t, t_journal_fc, 8192, 4096, V3_64 | EXT4FS_JBD2_INCOMPAT_FAST_COMMIT, 0);
	put32(jblock(&t, 0) + 0x54, 16);
	a = fill(&t, 24);
	begin(&t, 5);
	add_block(&t, target(&t, 0), a);
	commit(&t, COMMIT_OK);
	arm(&t, 1, 5);
	/* Head tag (little-endian TLV) for transaction 6 in the area's first used block. */
	fc = jblock(&t, JBLOCKS + 1);   /* s_maxlen 1040 - 16 fast-commit blocks, + 1 */
	memset(fc, 0, t.bs);
	fc[0] = 9;
	fc[2] = 8;
	fc[8] = 6;

	open_journal(&t, 0);
	assert_int_equal(ext4fs_journal_scan(t.j, &info), 0);
	close_journal(&t);
	assert_int_equal(info.fc_blocks, 16);
	assert_true(info.fc_pending);
	assert_int_equal(info.replayed, 1);
	fc[8] = 5;   /* an old fast commit: nothing pending */
	open_journal(&t, 0);
	assert_int_equal(ext4fs_journal_scan(t.j, &info), 0);
	assert_false(info.fc_pending);
	free(a);
	jt_free(&t);
}

/* Damage the journal superblock with fn, then expect err and a message naming the field. */
static void expect_sb_error(void (*damage)(struct jt *), int expected, const char *field)
{
	struct jt t;
	struct ext4fs_journal *j = NULL;
	char msg[256];

	jt_setup(&t, t_journal, 8192, 4096, V3_64, 0);
	damage(&t);
	if (open_fs(&t, 0, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(ext4fs_journal_open(t.fs, &j), expected);
	assert_null(j);
	if (!strstr(ext4fs_errmsg(t.fs), field))
		fail_msg("message \"%s\" does not name %s", ext4fs_errmsg(t.fs), field);
	jt_free(&t);
}

static void rechecksum(struct jt *t)
{
	put32(jblock(t, 0) + 0xFC, ext4fs_journal_sb_csum(jblock(t, 0)));
}

static void dmg_magic(struct jt *t) { put32(jblock(t, 0), 0x12345678); rechecksum(t); }
static void dmg_type(struct jt *t) { put32(jblock(t, 0) + 4, 7); rechecksum(t); }
static void dmg_bsize(struct jt *t) { put32(jblock(t, 0) + 0x0C, 2048); rechecksum(t); }
static void dmg_maxlen(struct jt *t) { put32(jblock(t, 0) + 0x10, JBLOCKS + 1); rechecksum(t); }
static void dmg_first(struct jt *t) { put32(jblock(t, 0) + 0x14, 0); rechecksum(t); }
static void dmg_start(struct jt *t) { put32(jblock(t, 0) + 0x1C, JBLOCKS); rechecksum(t); }
static void dmg_users(struct jt *t) { put32(jblock(t, 0) + 0x40, 2); rechecksum(t); }
static void dmg_feature(struct jt *t) { put32(jblock(t, 0) + 0x28, V3_64 | 0x100); rechecksum(t); }
static void dmg_both_csum(struct jt *t)
{
	put32(jblock(t, 0) + 0x28, V3_64 | EXT4FS_JBD2_INCOMPAT_CSUM_V2);
	rechecksum(t);
}
static void dmg_csum(struct jt *t) { jblock(t, 0)[0x200] ^= 1; }

static void corrupt_journal_superblock__is_reported_by_field(void **state)
{
	(void)state;
	expect_sb_error(dmg_magic, EXT4FS_E_JOURNAL_CORRUPT, "magic");
	expect_sb_error(dmg_type, EXT4FS_E_JOURNAL_CORRUPT, "h_blocktype");
	expect_sb_error(dmg_bsize, EXT4FS_E_JOURNAL_CORRUPT, "s_blocksize");
	expect_sb_error(dmg_maxlen, EXT4FS_E_JOURNAL_CORRUPT, "s_maxlen");
	expect_sb_error(dmg_first, EXT4FS_E_JOURNAL_CORRUPT, "s_first");
	expect_sb_error(dmg_start, EXT4FS_E_JOURNAL_CORRUPT, "s_start");
	expect_sb_error(dmg_users, EXT4FS_E_JOURNAL_CORRUPT, "s_nr_users");
	expect_sb_error(dmg_feature, EXT4FS_E_JOURNAL_UNSUPP, "0x100");
	expect_sb_error(dmg_both_csum, EXT4FS_E_JOURNAL_CORRUPT, "v2 and v3");
	expect_sb_error(dmg_csum, EXT4FS_E_JOURNAL_CSUM, "s_checksum");
}

static void dmg_inode_mode(struct jt *t)
{
	struct ext4fs_fs *fs;
	struct ext4fs_io *io = NULL;
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_inode inode;
	char msg[256];

	assert_int_equal(ext4fs_io_open_memory(t->img.buf, t->img.size, 1, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &opts, &fs, msg, sizeof(msg)), 0);
	assert_int_equal(ext4fs_inode_read(fs, 8, &inode), 0);
	inode.i_mode = 0x41C0;   /* a directory */
	assert_int_equal(ext4fs_inode_write(fs, 8, &inode), 0);
	assert_int_equal(ext4fs_close_flush(fs), 0);
}

static void dmg_external(struct jt *t)
{
	unsigned char *raw = t->img.buf + 1024;
	struct ext4fs_super sb;

	ext4fs_super_decode(&sb, raw);
	memset(sb.s_journal_uuid, 0x11, 16);
	ext4fs_super_encode(&sb, raw);
	set_sb_incompat(t, 0, 0);
}

static void dmg_no_journal(struct jt *t)
{
	unsigned char *raw = t->img.buf + 1024;
	struct ext4fs_super sb;

	ext4fs_super_decode(&sb, raw);
	sb.s_feature_compat &= ~(uint32_t)EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
	ext4fs_super_encode(&sb, raw);
	set_sb_incompat(t, 0, 0);
}

static void bad_journal_inode_or_none__are_refused_by_name(void **state)
{
	(void)state;
	expect_sb_error(dmg_inode_mode, EXT4FS_E_JOURNAL_INODE, "not a regular file");
	expect_sb_error(dmg_external, EXT4FS_E_UNSUPP_FEATURE, "external");
	expect_sb_error(dmg_no_journal, EXT4FS_E_NO_JOURNAL, "has_journal");
}

static void crc32_be__matches_the_reference_value(void **state)
{
	(void)state;
	/* The CRC-32/MPEG-2 check value: crc32_be seeded with ~0, no final xor. */
	assert_int_equal(ext4fs_journal_crc32_be(~0U, "123456789", 9), 0x0376E6E7);
	assert_int_equal(ext4fs_journal_tag_bytes(0), 8);
	assert_int_equal(ext4fs_journal_tag_bytes(EXT4FS_JBD2_INCOMPAT_64BIT), 12);
	assert_int_equal(ext4fs_journal_tag_bytes(EXT4FS_JBD2_INCOMPAT_CSUM_V2), 10);
	assert_int_equal(ext4fs_journal_tag_bytes(EXT4FS_JBD2_INCOMPAT_CSUM_V3), 16);
}

/* -- an external journal device ------------------------------------------------ */

#define EXT_JBLOCKS 1100u   /* blocks of the journal device */

/*
 * A journal device in memory (as mke2fs -O journal_dev makes one: an ext4
 * superblock with journal_dev and the journal's UUID, the journal
 * superblock in the next block, the log from the one after), and a file
 * system without a journal inode that names it: has_journal,
 * s_journal_inum 0, s_journal_uuid.
 */
struct ext {
	struct rw_image img;
	unsigned char *dev;
	uint32_t bs;
	uint8_t uuid[16];
	struct ext4fs_fs *fs;
	struct ext4fs_io *dev_io;
	struct ext4fs_journal *j;
};

static void ext_setup(struct ext *e)
{
	unsigned char *raw;
	struct ext4fs_super sb;
	struct ext4fs_journal_sb jsb;

	memset(e, 0, sizeof(*e));
	e->bs = 4096;
	rw_image_open(&e->img, 4096, e->bs, NULL);
	assert_int_equal(ext4fs_close_flush(e->img.fs), 0);
	e->img.fs = NULL;
	for (int i = 0; i < 16; i++)
		e->uuid[i] = (uint8_t)(0x40 + i);
	/* The device's superblock, then its journal superblock. */
	e->dev = calloc(EXT_JBLOCKS, e->bs);
	assert_non_null(e->dev);
	memset(&sb, 0, sizeof(sb));
	sb.s_magic = EXT4FS_SUPER_MAGIC;
	sb.s_log_block_size = 2;
	sb.s_blocks_count_lo = EXT_JBLOCKS;
	sb.s_feature_incompat = EXT4FS_FEATURE_INCOMPAT_JOURNAL_DEV;
	memcpy(sb.s_uuid, e->uuid, 16);
	ext4fs_super_encode(&sb, e->dev + 1024);
	ext4fs_journal_sb_format(e->dev + e->bs, e->bs, EXT_JBLOCKS, 0, e->uuid, 0);
	ext4fs_journal_sb_decode(&jsb, e->dev + e->bs);
	jsb.first = 2;
	ext4fs_journal_sb_encode(&jsb, e->dev + e->bs);
	/* The file system names it. */
	raw = e->img.buf + 1024;
	ext4fs_super_decode(&sb, raw);
	sb.s_feature_compat |= EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
	sb.s_journal_inum = 0;
	memcpy(sb.s_journal_uuid, e->uuid, 16);
	ext4fs_super_encode(&sb, raw);
	if (sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) {
		uint32_t c = ext4fs_super_csum(raw);
		for (int i = 0; i < 4; i++)
			raw[0x3FC + i] = (unsigned char)(c >> (8 * i));
	}
}

static int ext_open(struct ext *e, unsigned flags)
{
	struct ext4fs_io *io = NULL;
	struct ext4fs_open_opts opts = { .flags = flags };
	char msg[256];

	assert_int_equal(ext4fs_io_open_memory(e->img.buf, e->img.size, flags != 0, &io), 0);
	if (ext4fs_open_io(io, &opts, &e->fs, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	assert_int_equal(ext4fs_io_open_memory(e->dev, (size_t)EXT_JBLOCKS * e->bs, flags != 0, &e->dev_io), 0);
	return ext4fs_journal_open_external(e->fs, e->dev_io, &e->j);
}

static void ext_close(struct ext *e)
{
	ext4fs_journal_close(e->j);
	ext4fs_io_close(e->dev_io);
	ext4fs_close(e->fs);
	e->j = NULL;
	e->dev_io = NULL;
	e->fs = NULL;
}

static void ext_free(struct ext *e)
{
	ext_close(e);
	rw_image_close(&e->img);
	free(e->dev);
}

static void external_journal__is_checked_before_use(void **state)
{
	struct ext e;
	struct ext4fs_super sb;
	struct ext4fs_journal_sb jsb;

	(void)state;
	ext_setup(&e);
	assert_int_equal(ext_open(&e, 0), 0);
	assert_int_equal(ext4fs_journal_super(e.j)->maxlen, EXT_JBLOCKS);
	assert_false(ext4fs_journal_needs_recovery(e.j));
	ext_close(&e);

	/* Another file system's journal. */
	e.dev[1024 + 0x68] ^= 1;
	assert_int_equal(ext_open(&e, 0), EXT4FS_E_INVALID_ARG);
	assert_non_null(strstr(ext4fs_errmsg(e.fs), "UUID"));
	ext_close(&e);
	e.dev[1024 + 0x68] ^= 1;

	/* A file system, not a journal device. */
	ext4fs_super_decode(&sb, e.dev + 1024);
	sb.s_feature_incompat = 0;
	ext4fs_super_encode(&sb, e.dev + 1024);
	assert_int_equal(ext_open(&e, 0), EXT4FS_E_BAD_MAGIC);
	ext_close(&e);
	sb.s_feature_incompat = EXT4FS_FEATURE_INCOMPAT_JOURNAL_DEV;
	ext4fs_super_encode(&sb, e.dev + 1024);

	/* Blocks of another size, and a log that starts on the journal superblock. */
	sb.s_log_block_size = 1;
	ext4fs_super_encode(&sb, e.dev + 1024);
	assert_int_equal(ext_open(&e, 0), EXT4FS_E_JOURNAL_CORRUPT);
	ext_close(&e);
	sb.s_log_block_size = 2;
	ext4fs_super_encode(&sb, e.dev + 1024);
	ext4fs_journal_sb_decode(&jsb, e.dev + e.bs);
	jsb.first = 1;
	ext4fs_journal_sb_encode(&jsb, e.dev + e.bs);
	assert_int_equal(ext_open(&e, 0), EXT4FS_E_JOURNAL_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(e.fs), "s_first"));
	ext_free(&e);
}

static void external_journal__one_transaction_replays(void **state)
{
	struct ext e;
	struct ext4fs_journal_sb jsb;
	struct ext4fs_journal_info info;
	unsigned char *b;
	uint64_t home;

	(void)state;
	ext_setup(&e);
	home = e.img.size / e.bs - 1;   /* the last block: free in a fresh file system */
	/* Transaction 1 at journal block 2: a descriptor with one tag, the data, the commit. */
	b = e.dev + 2 * e.bs;
	put32(b, EXT4FS_JBD2_MAGIC);
	put32(b + 4, EXT4FS_JBD2_DESCRIPTOR_BLOCK);
	put32(b + 8, 1);
	put32(b + 12, (uint32_t)home);
	put16(b + 12 + 6, EXT4FS_JBD2_FLAG_SAME_UUID | EXT4FS_JBD2_FLAG_LAST_TAG);
	memset(e.dev + 3 * e.bs, 0xA5, e.bs);
	b = e.dev + 4 * e.bs;
	put32(b, EXT4FS_JBD2_MAGIC);
	put32(b + 4, EXT4FS_JBD2_COMMIT_BLOCK);
	put32(b + 8, 1);
	ext4fs_journal_sb_decode(&jsb, e.dev + e.bs);
	jsb.start = 2;
	jsb.sequence = 1;
	ext4fs_journal_sb_encode(&jsb, e.dev + e.bs);

	assert_int_equal(ext_open(&e, EXT4FS_OPEN_RECOVERY), 0);
	assert_true(ext4fs_journal_needs_recovery(e.j));
	assert_int_equal(ext4fs_journal_recover(e.j, &info), 0);
	assert_int_equal(info.transactions, 1);
	assert_int_equal(info.replayed, 1);
	ext_close(&e);
	/* The block is home, the log on the device is empty, the next transaction is 3. */
	for (uint32_t i = 0; i < e.bs; i++)
		assert_int_equal(e.img.buf[home * e.bs + i], 0xA5);
	ext4fs_journal_sb_decode(&jsb, e.dev + e.bs);
	assert_int_equal(jsb.start, 0);
	assert_int_equal(jsb.sequence, 3);
	ext_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32_be__matches_the_reference_value),
		cmocka_unit_test(one_transaction__replays_its_blocks),
		cmocka_unit_test(several_transactions__the_latest_copy_wins),
		cmocka_unit_test(revoke__cancels_the_block_in_earlier_and_same_transactions),
		cmocka_unit_test(revoke__does_not_cancel_a_later_transaction),
		cmocka_unit_test(torn_last_transaction__is_ignored),
		cmocka_unit_test(bad_commit_checksum__ends_the_log),
		cmocka_unit_test(checksum_v2__short_tags_and_16_bit_checksums),
		cmocka_unit_test(checksum_v1__a_bad_transaction_crc_ends_the_log),
		cmocka_unit_test(tags_64bit__high_words_are_read),
		cmocka_unit_test(escaped_block__gets_its_magic_back),
		cmocka_unit_test(tag_outside_the_fs_or_in_the_journal__is_refused_and_reported),
		cmocka_unit_test(bad_data_checksum__skips_that_block),
		cmocka_unit_test(bad_descriptor_checksum__refuses_or_ends_a_stale_log),
		cmocka_unit_test(log_wrapping_round_the_ring__is_followed),
		cmocka_unit_test(damaged_log__is_refused_and_discard_skips_past_it),
		cmocka_unit_test(interrupted_replay__replays_again_to_the_same_result),
		cmocka_unit_test(recovery__needs_a_handle_opened_for_it),
		cmocka_unit_test(empty_journal__only_clears_the_flag),
		cmocka_unit_test(discard__empties_the_journal_without_replaying),
		cmocka_unit_test(fast_commit_area__is_detected_not_replayed),
		cmocka_unit_test(corrupt_journal_superblock__is_reported_by_field),
		cmocka_unit_test(bad_journal_inode_or_none__are_refused_by_name),
		cmocka_unit_test(external_journal__is_checked_before_use),
		cmocka_unit_test(external_journal__one_transaction_replays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
