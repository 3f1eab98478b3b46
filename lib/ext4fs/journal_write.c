/*
 * journal_write.c - writing transactions to an internal jbd2 journal in the
 * format jbd2, e2fsck and journal_recover.c replay.
 *
 * One transaction, laid out from the head of the ring (wrapping at its end):
 *
 *   descriptor  tags: home block (32 bits, or 64 with the 64bit feature),
 *               flags, and with checksums v2/v3 the data block's crc32c
 *               (seeded with the journal UUID, then the transaction ID);
 *               the first tag carries the UUID, the others SAME_UUID; the
 *               last has LAST_TAG; v2/v3 end the block with a crc32c tail
 *   data...     the blocks the tags describe, in tag order; a block whose
 *               first four bytes are the jbd2 magic is logged with zeros
 *               there and the ESCAPE flag (replay puts the magic back)
 *   ...         more descriptors and data as needed
 *   revoke      records of blocks that earlier transactions of the log hold
 *               but that are free now, so replay must not write them
 *   commit      after a flush, so it is never durable before the rest;
 *               checksum v1 (crc32 over descriptors and data), v2/v3
 *               (crc32c of the commit block).  It is not flushed here: the
 *               next transaction's flush, or the caller's before writing
 *               anything home, makes it durable (one flush per commit).
 *
 * The journal superblock is written only when the log goes from empty to
 * not empty (s_start, s_sequence: before the commit block, so a crash
 * leaves either no log or a log whose last transaction has no commit and
 * is ignored) and when the caller has written everything home
 * (ext4fs__journal_write_empty).  Commit times never decrease: recovery
 * takes an older commit after a bad checksum as the sign of a stale block.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/errors.h"
#include "fs_internal.h"
#include "journal_internal.h"
#include "ondisk_le.h"

/* jbd2 features this writer can produce blocks for. */
#define WRITABLE_INCOMPAT (EXT4FS_JBD2_INCOMPAT_REVOKE | EXT4FS_JBD2_INCOMPAT_64BIT | \
			   EXT4FS_JBD2_INCOMPAT_CSUM_V2 | EXT4FS_JBD2_INCOMPAT_CSUM_V3)

static uint32_t ring_next(const struct ext4fs_journal *j, uint32_t pos)
{
	return pos + 1 == j->log_end ? j->log_first : pos + 1;
}

uint32_t ext4fs__journal_ring_blocks(const struct ext4fs_journal *j)
{
	return j->log_end - j->log_first;
}

uint32_t ext4fs__journal_ring_used(const struct ext4fs_journal *j)
{
	uint32_t len = ext4fs__journal_ring_blocks(j);

	if (!j->tail)
		return 0;
	return (j->head + len - j->tail) % len;
}

static size_t tail_bytes(const struct ext4fs_journal *j)
{
	return j->csum_v23 ? JBD2_TAIL_SIZE : 0;
}

/* Tags one descriptor block holds: the first one also carries the 16-byte UUID. */
static uint64_t tags_per_descriptor(const struct ext4fs_journal *j)
{
	size_t room = j->bs - JH_SIZE - tail_bytes(j);

	return 1 + (room - j->tag_bytes - 16) / j->tag_bytes;
}

static size_t revoke_record_bytes(const struct ext4fs_journal *j)
{
	return j->is_64bit ? 8 : 4;
}

static uint64_t records_per_revoke_block(const struct ext4fs_journal *j)
{
	return (j->bs - JR_RECORDS - tail_bytes(j)) / revoke_record_bytes(j);
}

uint64_t ext4fs__journal_txn_blocks(const struct ext4fs_journal *j, uint64_t nblocks, uint64_t nrevokes)
{
	uint64_t per_desc = tags_per_descriptor(j), per_rev = records_per_revoke_block(j);

	return (nblocks + per_desc - 1) / per_desc + nblocks + (nrevokes + per_rev - 1) / per_rev + 1;
}

static int write_jsb(struct ext4fs_journal *j, struct ext4fs_io *io, uint32_t start, uint32_t sequence);

/*
 * The journal features ext4 turns on when it loads a journal: revoke
 * records always, 64-bit block numbers on a 64bit file system, checksum v3
 * with metadata_csum (v2 and v1 checksums off then).  Changes j->jsb and
 * says whether anything changed.
 */
static int adopt_ext4_features(struct ext4fs_journal *j)
{
	struct ext4fs_journal_sb *jsb = &j->jsb;
	uint32_t incompat = jsb->feature_incompat | EXT4FS_JBD2_INCOMPAT_REVOKE, compat = jsb->feature_compat;

	if (jsb->blocktype != EXT4FS_JBD2_SUPERBLOCK_V2)
		return 0;   /* a v1 superblock has no feature words */
	if (ext4fs_has_incompat(j->fs, EXT4FS_FEATURE_INCOMPAT_64BIT))
		incompat |= EXT4FS_JBD2_INCOMPAT_64BIT;
	if (ext4fs_has_ro_compat(j->fs, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM)) {
		incompat = (incompat | EXT4FS_JBD2_INCOMPAT_CSUM_V3) & ~(uint32_t)EXT4FS_JBD2_INCOMPAT_CSUM_V2;
		compat &= ~(uint32_t)EXT4FS_JBD2_COMPAT_CHECKSUM;
	}
	if (incompat == jsb->feature_incompat && compat == jsb->feature_compat)
		return 0;
	jsb->feature_incompat = incompat;
	jsb->feature_compat = compat;
	if (incompat & (EXT4FS_JBD2_INCOMPAT_CSUM_V2 | EXT4FS_JBD2_INCOMPAT_CSUM_V3))
		jsb->checksum_type = EXT4FS_JBD2_CRC32C_CHKSUM;
	return 1;
}

/* The handle's derived fields, after the superblock's features changed. */
static void derive(struct ext4fs_journal *j)
{
	j->csum_v3 = (j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V3) != 0;
	j->csum_v23 = j->csum_v3 || (j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V2);
	j->is_64bit = (j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_64BIT) != 0;
	j->v1_csum = (j->jsb.feature_compat & EXT4FS_JBD2_COMPAT_CHECKSUM) != 0;
	j->tag_bytes = ext4fs_journal_tag_bytes(j->jsb.feature_incompat);
	j->csum_seed = ext4fs_journal_csum_seed(j->jsb.uuid);
}

int ext4fs__journal_writer_start(struct ext4fs_journal *j, struct ext4fs_io *io)
{
	uint32_t unknown = j->jsb.feature_incompat & ~(uint32_t)WRITABLE_INCOMPAT;
	int err;

	/* Transactions are written through the file system's channel: an external journal is read only. */
	if (j->ext_io)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_UNSUPP,
				       "writing transactions to an external journal is not supported");
	if (j->jsb.blocktype != EXT4FS_JBD2_SUPERBLOCK_V2 && j->jsb.blocktype != EXT4FS_JBD2_SUPERBLOCK_V1)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_UNSUPP, "journal superblock type %u",
				       j->jsb.blocktype);
	if (unknown)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_UNSUPP,
				       "the journal has incompatible features 0x%x this library does not write",
				       unknown);
	if (j->jsb.start)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_LOG,
				       "the journal holds transactions to replay: recover it first (e2fsck)");
	if (j->jsb.errnum)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_LOG,
				       "the journal was aborted with error %d: check the file system first",
				       (int)j->jsb.errnum);
	if (ext4fs__journal_ring_blocks(j) < 4)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_INODE, "the journal's log has only %u blocks",
				       ext4fs__journal_ring_blocks(j));
	if (adopt_ext4_features(j)) {
		derive(j);
		err = write_jsb(j, io, 0, j->jsb.sequence);
		if (!err && (err = ext4fs_io_flush(io)))
			ext4fs__fs_fail(j->fs, err, "flushing the journal superblock: %s", ext4fs_strerror(err));
		if (err)
			return err;
	}
	j->tail = 0;
	j->head = j->log_first;
	j->next_tid = j->jsb.sequence;
	j->writer = 1;
	return 0;
}

static void header(unsigned char *blk, uint32_t type, uint32_t tid)
{
	be32_store(blk + JH_MAGIC, EXT4FS_JBD2_MAGIC);
	be32_store(blk + JH_BLOCKTYPE, type);
	be32_store(blk + JH_SEQUENCE, tid);
}

static void set_tail_csum(const struct ext4fs_journal *j, unsigned char *blk)
{
	unsigned char *tail = blk + j->bs - JBD2_TAIL_SIZE;

	if (!j->csum_v23)
		return;
	memset(tail, 0, JBD2_TAIL_SIZE);
	be32_store(tail, ext4fs_crc32c(j->csum_seed, blk, j->bs));
}

/* State of one transaction being laid out. */
struct txn_writer {
	struct ext4fs_journal *j;
	struct ext4fs_io *io;
	uint32_t tid;
	uint32_t pos;              /* next ring block */
	uint32_t v1_crc;           /* checksum v1 over descriptors and data */
	unsigned char *blk;        /* descriptor, revoke or commit block */
	unsigned char *data;       /* an escaped data block */
	/* Log blocks on their way out: physically consecutive ones go in one write. */
	unsigned char *batch;
	uint64_t batch_pblk;
	uint32_t batch_pos;        /* ring position of the first */
	size_t batch_n;
};

#define BATCH_BLOCKS 256

static int batch_out(struct txn_writer *w)
{
	struct ext4fs_journal *j = w->j;
	int err;

	if (!w->batch_n)
		return 0;
	err = ext4fs_io_write(w->io, w->batch_pblk * j->bs, w->batch, w->batch_n * j->bs);
	w->batch_n = 0;
	if (err)
		return ext4fs__fs_fail(j->fs, err, "writing journal blocks from %u (block %llu): %s", w->batch_pos,
				       (unsigned long long)w->batch_pblk, ext4fs_strerror(err));
	return 0;
}

static int log_write(struct txn_writer *w, const void *buf)
{
	struct ext4fs_journal *j = w->j;
	uint64_t pblk = ext4fs__journal_pblk(j, w->pos);
	int err;

	if (w->batch_n && (w->batch_n == BATCH_BLOCKS || pblk != w->batch_pblk + w->batch_n) &&
	    (err = batch_out(w)))
		return err;
	if (!w->batch_n) {
		w->batch_pblk = pblk;
		w->batch_pos = w->pos;
	}
	memcpy(w->batch + w->batch_n * j->bs, buf, j->bs);
	w->batch_n++;
	w->pos = ring_next(j, w->pos);
	return 0;
}

static int flush(struct txn_writer *w)
{
	int err = batch_out(w);

	if (err)
		return err;
	err = ext4fs_io_flush(w->io);

	return err ? ext4fs__fs_fail(w->j->fs, err, "flushing the journal: %s", ext4fs_strerror(err)) : 0;
}

/* One descriptor block for blocks[0..n) and the blocks themselves. */
static int write_descriptor(struct txn_writer *w, const struct ext4fs__jblock *blocks, size_t n)
{
	struct ext4fs_journal *j = w->j;
	unsigned char seq[4];
	size_t off = JH_SIZE;
	uint32_t seed;
	int err;

	memset(w->blk, 0, j->bs);
	header(w->blk, EXT4FS_JBD2_DESCRIPTOR_BLOCK, w->tid);
	be32_store(seq, w->tid);
	seed = ext4fs_crc32c(j->csum_seed, seq, 4);
	for (size_t i = 0; i < n; i++) {
		unsigned char *tag = w->blk + off;
		uint16_t flags = 0;

		be32_store(tag + JT_BLOCKNR, (uint32_t)blocks[i].home);
		if (j->is_64bit)
			be32_store(tag + JT_BLOCKNR_HIGH, (uint32_t)(blocks[i].home >> 32));
		if (be32_load(blocks[i].data) == EXT4FS_JBD2_MAGIC)
			flags |= EXT4FS_JBD2_FLAG_ESCAPE;
		if (i)
			flags |= EXT4FS_JBD2_FLAG_SAME_UUID;
		if (i + 1 == n)
			flags |= EXT4FS_JBD2_FLAG_LAST_TAG;
		/* The checksum covers the block as it is logged, escaped or not. */
		if (j->csum_v23) {
			uint32_t crc;
			if (flags & EXT4FS_JBD2_FLAG_ESCAPE) {
				memcpy(w->data, blocks[i].data, j->bs);
				memset(w->data, 0, 4);
				crc = ext4fs_crc32c(seed, w->data, j->bs);
			} else {
				crc = ext4fs_crc32c(seed, blocks[i].data, j->bs);
			}
			if (j->csum_v3)
				be32_store(tag + JT_CSUM32, crc);
			else
				be16_store(tag + JT_CSUM16, (uint16_t)crc);
		}
		be16_store(tag + JT_FLAGS16, flags);
		off += j->tag_bytes;
		if (!i) {
			memcpy(w->blk + off, j->jsb.uuid, 16);
			off += 16;
		}
	}
	set_tail_csum(j, w->blk);
	if (j->v1_csum)
		w->v1_crc = ext4fs_journal_crc32_be(w->v1_crc, w->blk, j->bs);
	if ((err = log_write(w, w->blk)))
		return err;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *src = blocks[i].data;
		if (be32_load(src) == EXT4FS_JBD2_MAGIC) {
			memcpy(w->data, src, j->bs);
			memset(w->data, 0, 4);
			src = w->data;
		}
		if (j->v1_csum)
			w->v1_crc = ext4fs_journal_crc32_be(w->v1_crc, src, j->bs);
		if ((err = log_write(w, src)))
			return err;
	}
	return 0;
}

static int write_revokes(struct txn_writer *w, const uint64_t *revokes, size_t n)
{
	struct ext4fs_journal *j = w->j;
	size_t rec = revoke_record_bytes(j), per = (size_t)records_per_revoke_block(j);

	for (size_t i = 0; i < n; i += per) {
		size_t k = n - i < per ? n - i : per;
		int err;

		memset(w->blk, 0, j->bs);
		header(w->blk, EXT4FS_JBD2_REVOKE_BLOCK, w->tid);
		be32_store(w->blk + JR_COUNT, (uint32_t)(JR_RECORDS + k * rec));
		for (size_t r = 0; r < k; r++) {
			unsigned char *p = w->blk + JR_RECORDS + r * rec;
			if (rec == 8)
				be64_store(p, revokes[i + r]);
			else
				be32_store(p, (uint32_t)revokes[i + r]);
		}
		set_tail_csum(j, w->blk);
		if ((err = log_write(w, w->blk)))
			return err;
	}
	return 0;
}

static int write_commit(struct txn_writer *w, int64_t sec, uint32_t nsec)
{
	struct ext4fs_journal *j = w->j;

	if ((uint64_t)sec < j->last_commit_sec)
		sec = (int64_t)j->last_commit_sec;
	memset(w->blk, 0, j->bs);
	header(w->blk, EXT4FS_JBD2_COMMIT_BLOCK, w->tid);
	be64_store(w->blk + JC_COMMIT_SEC, (uint64_t)sec);
	be32_store(w->blk + JC_COMMIT_SEC + 8, nsec);
	if (j->csum_v23) {
		be32_store(w->blk + JC_CHKSUM, ext4fs_crc32c(j->csum_seed, w->blk, j->bs));
	} else if (j->v1_csum) {
		w->blk[JC_CHKSUM_TYPE] = EXT4FS_JBD2_CRC32_CHKSUM;
		w->blk[JC_CHKSUM_SIZE] = EXT4FS_JBD2_CRC32_CHKSUM_SIZE;
		be32_store(w->blk + JC_CHKSUM, w->v1_crc);
	}
	j->last_commit_sec = (uint64_t)sec;
	return log_write(w, w->blk);
}

/* Store the superblock fields of the log (s_start, s_sequence) and write it. */
static int write_jsb(struct ext4fs_journal *j, struct ext4fs_io *io, uint32_t start, uint32_t sequence)
{
	uint64_t pblk = ext4fs__journal_pblk(j, 0);
	unsigned char *buf = malloc(j->bs);
	int err;

	if (!buf)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_NO_MEMORY, "no memory for the journal superblock");
	err = ext4fs_io_read(io, pblk * j->bs, buf, j->bs);
	if (!err) {
		j->jsb.start = start;
		j->jsb.sequence = sequence;
		ext4fs_journal_sb_encode(&j->jsb, buf);
		if (j->csum_v23)
			be32_store(buf + JSB_CHECKSUM, ext4fs_journal_sb_csum(buf));
		err = ext4fs_io_write(io, pblk * j->bs, buf, j->bs);
	}
	if (!err)
		ext4fs_journal_sb_decode(&j->jsb, buf);
	free(buf);
	/* The handle's cache may hold the old superblock block. */
	memset(j->fs->cache_valid, 0, sizeof(j->fs->cache_valid));
	if (err)
		return ext4fs__fs_fail(j->fs, err, "writing the journal superblock (block %llu): %s",
				       (unsigned long long)pblk, ext4fs_strerror(err));
	return 0;
}

int ext4fs__journal_write_txn(struct ext4fs_journal *j, struct ext4fs_io *io, const struct ext4fs__jblock *blocks,
			      size_t nblocks, const uint64_t *revokes, size_t nrevokes, int64_t sec, uint32_t nsec)
{
	uint64_t need = ext4fs__journal_txn_blocks(j, nblocks, nrevokes);
	uint64_t per_desc = tags_per_descriptor(j);
	struct txn_writer w = { .j = j, .io = io, .tid = j->next_tid, .pos = j->head, .v1_crc = ~0U };
	int err = 0;

	/* One block stays free so a full ring is never taken for an empty one. */
	if (need + ext4fs__journal_ring_used(j) >= ext4fs__journal_ring_blocks(j))
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_FULL,
				       "a transaction of %llu log blocks does not fit in the %u free blocks of the journal",
				       (unsigned long long)need,
				       ext4fs__journal_ring_blocks(j) - ext4fs__journal_ring_used(j) - 1);
	if (nrevokes && !(j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_REVOKE))
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_UNSUPP,
				       "the journal lacks the revoke feature that a freed block needs");
	w.blk = malloc(j->bs);
	w.data = malloc(j->bs);
	w.batch = malloc((size_t)BATCH_BLOCKS * j->bs);
	if (!w.blk || !w.data || !w.batch) {
		err = ext4fs__fs_fail(j->fs, EXT4FS_E_NO_MEMORY, "no memory to write a transaction");
		goto out;
	}
	for (size_t i = 0; i < nblocks && !err; i += per_desc)
		err = write_descriptor(&w, blocks + i, nblocks - i < per_desc ? nblocks - i : (size_t)per_desc);
	if (!err)
		err = write_revokes(&w, revokes, nrevokes);
	if (!err && !j->tail)
		err = write_jsb(j, io, j->head, w.tid);
	if (!err)
		err = flush(&w);
	if (!err)
		err = write_commit(&w, sec, nsec);
	if (!err)
		err = batch_out(&w);
	if (!err) {
		if (!j->tail)
			j->tail = j->head;
		j->head = w.pos;
		j->next_tid++;
	}
out:
	free(w.blk);
	free(w.data);
	free(w.batch);
	return err;
}

int ext4fs__journal_write_empty(struct ext4fs_journal *j, struct ext4fs_io *io)
{
	int err;

	if (!j->tail)
		return 0;
	err = write_jsb(j, io, 0, j->next_tid);
	if (!err) {
		err = ext4fs_io_flush(io);
		if (err)
			ext4fs__fs_fail(j->fs, err, "flushing the journal superblock: %s", ext4fs_strerror(err));
	}
	if (!err)
		j->tail = 0;
	return err;
}
