/*
 * journal_recover.c - reading and replaying the log of an internal jbd2
 * journal.
 *
 * How the log is laid out
 *   The journal is the data of inode s_journal_inum.  Journal block 0 is
 *   the journal superblock; the log is the ring of blocks [s_first,
 *   log_end), where log_end is s_maxlen less the fast-commit area (the
 *   area's first block is left unused, the next ones hold fast commits).
 *   A transaction is: descriptor blocks, each followed by the data blocks
 *   its tags describe; revoke blocks; then one commit block.  Every
 *   descriptor, revoke and commit block carries the jbd2 magic and its
 *   transaction ID.  The log starts at s_start with transaction s_sequence;
 *   s_start == 0 means there is nothing to replay.
 *
 * Recovery, in three passes over the same walk (as jbd2 does it)
 *   1. scan: walk from s_start expecting s_sequence, s_sequence + 1, ...
 *      The log ends at the first block without the magic, with another
 *      transaction ID or of an unknown type, or at a commit block whose
 *      checksum fails (v1: crc32 of the transaction; v2/v3: crc32c of the
 *      commit block, also accepted when only its header part matches, as
 *      jbd2 writes short commit blocks).  A failed commit drops that
 *      transaction and everything after it; with synchronous commits it is
 *      reported as failed_commit.  A bad checksum in a descriptor or revoke
 *      block makes the next commit block decide: if its time is older than
 *      the previous commit's, the block is stale, left from an earlier pass
 *      round the ring, and the log just ends; otherwise the journal is
 *      corrupt and nothing is replayed (EXT4FS_E_JOURNAL_CSUM).  The
 *      transaction IDs s_sequence .. end_tid - 1 are complete.
 *   2. revoke: collect every revoke record of the complete transactions
 *      into a table: block -> the latest transaction that revoked it.
 *   3. replay: for each tag of each complete transaction, in log order,
 *      write the data block to its home unless a revoke record of the same
 *      or a later transaction covers it.  Tags whose data fails its v2/v3
 *      checksum, whose block lies outside the file system or inside the
 *      journal itself, or whose log block cannot be read are skipped and
 *      counted (jbd2 skips bad checksums and unreadable blocks too, but has
 *      no range check).  Escaped
 *      blocks get the magic back in their first four bytes.
 *
 * Invariants that make a replay safe to repeat
 *   - Only blocks of the file system outside the journal are written while
 *     replaying, so the log reads the same on a second run.
 *   - The journal superblock is rewritten (s_start 0) only after every
 *     replayed block is written and flushed, and the RECOVER flag is cleared
 *     only after that; a stop anywhere before leaves a journal that replays
 *     to the same result, a stop between the two leaves an empty journal
 *     with RECOVER still set, which a second run simply clears.
 *   - The new s_sequence is one past end_tid, so blocks of the dropped
 *     (torn) transaction can never be taken for the next one.
 *
 * Bounds: a pass walks at most one ring of the log (a transaction that
 * never commits cannot make it loop), a descriptor's tags stop at the end of
 * its block, revoke records at r_count, which must fit in the block.
 *
 * External journals: ext4fs_journal_open_external() reads the journal
 * from a journal device's channel, whose block n is journal block n (the
 * journal superblock follows the device's ext4 superblock); the replay
 * writes the file system's blocks as for an internal journal.
 *
 * Not done: fast commits are detected (a head tag for end_tid in the
 * area's first block) and reported, never replayed; jbd2's async_commit continues scanning past a failed
 * commit only to report it, which this code does not.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/crc.h"
#include "ext4fs/inode.h"
#include "ext4fs/journal.h"
#include "ext4fs/super.h"
#include "fs_internal.h"
#include "journal_internal.h"
#include "ondisk_le.h"

/* ext4 fast-commit area: a tag-length-value log whose first tag is the head. */
#define FC_TAG_HEAD      0x0009
#define FC_HEAD_LEN      8
#define FC_HEAD_TID      8     /* byte offset of fc_tid: tag, length, fc_features */

#define S_IFMT_MASK      0xF000
#define S_IFREG_MODE     0x8000

/* -- Opening ------------------------------------------------------------- */

struct run_collect {
	struct ext4fs_journal *j;
	size_t cap;
};

static int collect_run(const struct ext4fs_block_visit *v, void *arg)
{
	struct run_collect *rc = arg;
	struct ext4fs_journal *j = rc->j;
	uint64_t count = v->count;
	struct jrun *last;

	if (v->kind != EXT4FS_BLOCK_DATA || v->lblk >= j->nblocks)
		return 0;
	if (count > j->nblocks - v->lblk)
		count = j->nblocks - v->lblk;
	if (!ext4fs_block_ptr_valid(j->fs, v->pblk) ||
	    count > ext4fs_geom(j->fs)->blocks_count - v->pblk)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_INODE,
				       "journal inode %u: logical block %llu maps to block %llu, outside the file system",
				       j->ino, (unsigned long long)v->lblk, (unsigned long long)v->pblk);
	last = j->nruns ? &j->runs[j->nruns - 1] : NULL;
	if (last && last->lblk + last->count == v->lblk && last->pblk + last->count == v->pblk) {
		last->count += count;
		return 0;
	}
	if (j->nruns == rc->cap) {
		struct jrun *n = ext4fs_array_grow(j->runs, &rc->cap, j->nruns + 1, sizeof(*n), 16);
		if (!n)
			return ext4fs__fs_fail(j->fs, EXT4FS_E_NO_MEMORY, "no memory for the journal's block map");
		j->runs = n;
	}
	j->runs[j->nruns++] = (struct jrun){ v->lblk, v->pblk, count };
	return 0;
}

static int cmp_pblk(const void *a, const void *b)
{
	const struct jrun *x = a, *y = b;

	return x->pblk < y->pblk ? -1 : x->pblk > y->pblk;
}

/* Read the journal inode's map into j->runs and check it has no holes. */
static int load_map(struct ext4fs_journal *j, const struct ext4fs_inode *inode)
{
	struct run_collect rc = { j, 0 };
	uint64_t next = 0;
	int err;

	err = ext4fs_block_iterate(j->fs, j->ino, inode, EXT4FS_ITER_DATA_ONLY, collect_run, &rc);
	if (err)
		return err;
	for (size_t i = 0; i < j->nruns; i++) {
		if (j->runs[i].lblk != next)
			break;
		next += j->runs[i].count;
	}
	if (next < j->nblocks)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_INODE,
				       "journal inode %u has a hole at logical block %llu", j->ino,
				       (unsigned long long)next);
	j->by_pblk = malloc(j->nruns * sizeof(*j->by_pblk));
	if (!j->by_pblk)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_NO_MEMORY, "no memory for the journal's block map");
	memcpy(j->by_pblk, j->runs, j->nruns * sizeof(*j->by_pblk));
	qsort(j->by_pblk, j->nruns, sizeof(*j->by_pblk), cmp_pblk);
	return 0;
}

/* Physical block of journal block lblk (< nblocks, so always mapped). */
uint64_t ext4fs__journal_pblk(const struct ext4fs_journal *j, uint64_t lblk)
{
	size_t lo = 0, hi = j->nruns;

	if (j->ext_io)
		return lblk;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (j->runs[mid].lblk <= lblk)
			lo = mid;
		else
			hi = mid;
	}
	return j->runs[lo].pblk + (lblk - j->runs[lo].lblk);
}

/*
 * Nonzero when a tag's home block lies in the file system.  Unlike a map
 * pointer, a home block may be block 0: with 4 KiB blocks the superblock lives
 * there, and the kernel journals it.
 */
static int home_in_fs(const struct ext4fs_fs *fs, uint64_t home)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);

	return home >= g->first_data_block && home < g->blocks_count;
}

/* Nonzero when file-system block blk is one of the journal's own blocks. */
int ext4fs__journal_holds(const struct ext4fs_journal *j, uint64_t blk)
{
	size_t lo = 0, hi = j->nruns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct jrun *r = &j->by_pblk[mid];
		if (blk < r->pblk)
			hi = mid;
		else if (blk - r->pblk >= r->count)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

static int journal_read(struct ext4fs_journal *j, uint64_t lblk, void *buf)
{
	if (j->ext_io)
		return ext4fs_io_read(j->ext_io, lblk * j->bs, buf, j->bs);
	return ext4fs_blocks_read(j->fs, ext4fs__journal_pblk(j, lblk), 1, buf);
}

/* The channel holding the journal's blocks: the journal device, or the file system's. */
static struct ext4fs_io *journal_io(const struct ext4fs_journal *j)
{
	return j->ext_io ? j->ext_io : j->fs->io;
}

/*
 * The handle's fields that follow from the journal superblock (j->jsb,
 * checked), once the blocks and their size are known.  Cannot fail.
 */
static void derive_fields(struct ext4fs_journal *j)
{
	j->fc_blocks = ext4fs__journal_fc_blocks(&j->jsb);
	j->log_first = j->jsb.first;
	j->log_end = j->jsb.maxlen - j->fc_blocks;
	j->csum_v3 = (j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V3) != 0;
	j->csum_v23 = j->csum_v3 || (j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V2);
	j->is_64bit = (j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_64BIT) != 0;
	j->async_commit = (j->jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_ASYNC_COMMIT) != 0;
	j->v1_csum = (j->jsb.feature_compat & EXT4FS_JBD2_COMPAT_CHECKSUM) != 0;
	j->tag_bytes = ext4fs_journal_tag_bytes(j->jsb.feature_incompat);
	j->csum_seed = ext4fs_journal_csum_seed(j->jsb.uuid);
}

int ext4fs_journal_open(struct ext4fs_fs *fs, struct ext4fs_journal **out)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	const struct ext4fs_geom *geom = ext4fs_geom(fs);
	struct ext4fs_journal *j = NULL;
	struct ext4fs_inode inode;
	unsigned char *raw = NULL;
	char why[160];
	int err;

	*out = NULL;
	if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_JOURNAL_DEV)
		return ext4fs__fs_fail(fs, EXT4FS_E_UNSUPP_FEATURE,
				       "this is an external journal device, not a file system with a journal");
	if (!(sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL))
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_JOURNAL, "the file system has no journal (no has_journal feature)");
	/* As e2fsck decides it: a journal UUID in the superblock names an external journal. */
	for (int i = 0; i < 16; i++)
		if (sb->s_journal_uuid[i])
			return ext4fs__fs_fail(fs, EXT4FS_E_UNSUPP_FEATURE,
					       "the journal is on an external device (s_journal_dev 0x%x): not supported",
					       sb->s_journal_dev);
	if (sb->s_journal_inum == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_JOURNAL, "s_journal_inum is 0");
	if (sb->s_journal_inum > geom->inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_INODE, "s_journal_inum %u is beyond the last inode %u",
				       sb->s_journal_inum, geom->inodes_count);
	j = calloc(1, sizeof(*j));
	raw = malloc(geom->block_size);
	if (!j || !raw) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the journal");
		goto out;
	}
	j->fs = fs;
	j->ino = sb->s_journal_inum;
	j->bs = geom->block_size;
	err = ext4fs_inode_read(fs, j->ino, &inode);
	if (err)
		goto out;
	if ((inode.i_mode & S_IFMT_MASK) != S_IFREG_MODE) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_INODE, "journal inode %u is not a regular file (mode 0%o)",
				      j->ino, inode.i_mode);
		goto out;
	}
	if (inode.i_links_count == 0) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_INODE, "journal inode %u has no links", j->ino);
		goto out;
	}
	if (ext4fs_inode_has_inline_data(&inode)) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_INODE, "journal inode %u has inline data", j->ino);
		goto out;
	}
	j->nblocks = ext4fs_inode_size(&inode) / j->bs;
	if (j->nblocks < EXT4FS_JBD2_MIN_BLOCKS) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_INODE,
				      "journal inode %u holds %llu blocks, fewer than 1024", j->ino,
				      (unsigned long long)j->nblocks);
		goto out;
	}
	if (j->nblocks > geom->blocks_count) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_INODE,
				      "journal inode %u is %llu blocks long, larger than the file system", j->ino,
				      (unsigned long long)j->nblocks);
		goto out;
	}
	err = load_map(j, &inode);
	if (err)
		goto out;
	err = journal_read(j, 0, raw);
	if (err) {
		err = ext4fs__fs_fail(fs, err, "reading the journal superblock (block %llu): %s",
				      (unsigned long long)ext4fs__journal_pblk(j, 0), ext4fs_strerror(err));
		goto out;
	}
	ext4fs_journal_sb_decode(&j->jsb, raw);
	err = ext4fs_journal_sb_check(&j->jsb, raw, j->bs, j->nblocks, why, sizeof(why));
	if (err) {
		err = ext4fs__fs_fail(fs, err, "journal inode %u: %s", j->ino, why);
		goto out;
	}
	derive_fields(j);
	*out = j;
	j = NULL;
out:
	free(raw);
	ext4fs_journal_close(j);
	return err;
}

/* Nonzero when the 16 bytes are all zero. */
static int uuid_null(const uint8_t u[16])
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

/*
 * The journal device's own superblock: an ext4 superblock with journal_dev,
 * the UUID the file system names, the file system's block size.  Its block
 * count into *blocks.  0 or an error recorded on fs.
 */
static int check_journal_device(struct ext4fs_fs *fs, struct ext4fs_io *io, uint64_t *blocks)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	unsigned char raw[EXT4FS_SUPER_SIZE];
	struct ext4fs_super dsb;
	int err;

	err = ext4fs_io_read(io, EXT4FS_SUPER_OFFSET, raw, sizeof(raw));
	if (err)
		return ext4fs__fs_fail(fs, err, "reading the journal device's superblock: %s", ext4fs_strerror(err));
	ext4fs_super_decode(&dsb, raw);
	if (dsb.s_magic != EXT4FS_SUPER_MAGIC || !(dsb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_JOURNAL_DEV))
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_MAGIC,
				       "the journal device has no journal-device superblock (magic 0x%x, incompat 0x%x)",
				       dsb.s_magic, dsb.s_feature_incompat);
	if (memcmp(dsb.s_uuid, sb->s_journal_uuid, sizeof(dsb.s_uuid)))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "the journal device's UUID is not the file system's s_journal_uuid");
	if (dsb.s_log_block_size > 6 || (1024U << dsb.s_log_block_size) != ext4fs_geom(fs)->block_size)
		return ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_CORRUPT,
				       "the journal device's s_log_block_size %u is not the file system's block size",
				       dsb.s_log_block_size);
	*blocks = dsb.s_blocks_count_lo;
	if (dsb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT)
		*blocks |= (uint64_t)dsb.s_blocks_count_hi << 32;
	return 0;
}

/* The log of an external journal must start after its superblock. */
static int sb_fail_first(const struct ext4fs_journal *j, char *why, size_t why_len)
{
	snprintf(why, why_len, "journal superblock s_first %u is not past the superblock in block %u", j->jsb.first,
		 j->jsb_block);
	return EXT4FS_E_JOURNAL_CORRUPT;
}

int ext4fs_journal_open_external(struct ext4fs_fs *fs, struct ext4fs_io *io, struct ext4fs_journal **out)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	uint32_t bs = ext4fs_geom(fs)->block_size;
	struct ext4fs_journal *j = NULL;
	unsigned char *raw = NULL;
	uint64_t blocks = 0;
	char why[160];
	int err;

	*out = NULL;
	if (!(sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) || uuid_null(sb->s_journal_uuid))
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_JOURNAL, "the file system names no external journal");
	err = check_journal_device(fs, io, &blocks);
	if (err)
		return err;
	j = calloc(1, sizeof(*j));
	raw = malloc(bs);
	if (!j || !raw) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the journal");
		goto out;
	}
	j->fs = fs;
	j->bs = bs;
	j->ext_io = io;
	/* The block after the device's ext4 superblock, which is in block 1 with 1 KiB blocks. */
	j->jsb_block = bs == 1024 ? 2 : 1;
	/* jbd2 numbers an external journal's blocks in 32 bits. */
	j->nblocks = blocks < UINT32_MAX ? blocks : UINT32_MAX;
	err = journal_read(j, j->jsb_block, raw);
	if (err) {
		err = ext4fs__fs_fail(fs, err, "reading the external journal's superblock (block %u): %s",
				      j->jsb_block, ext4fs_strerror(err));
		goto out;
	}
	ext4fs_journal_sb_decode(&j->jsb, raw);
	err = ext4fs_journal_sb_check(&j->jsb, raw, bs, j->nblocks, why, sizeof(why));
	if (!err && j->jsb.first <= j->jsb_block)
		err = sb_fail_first(j, why, sizeof(why));
	if (err) {
		err = ext4fs__fs_fail(fs, err, "external journal: %s", why);
		goto out;
	}
	derive_fields(j);
	*out = j;
	j = NULL;
out:
	free(raw);
	ext4fs_journal_close(j);
	return err;
}

void ext4fs_journal_close(struct ext4fs_journal *j)
{
	if (!j)
		return;
	free(j->runs);
	free(j->by_pblk);
	free(j);
}

const struct ext4fs_journal_sb *ext4fs_journal_super(const struct ext4fs_journal *j)
{
	return &j->jsb;
}

int ext4fs_journal_needs_recovery(const struct ext4fs_journal *j)
{
	return j->jsb.start != 0;
}

void ext4fs_journal_set_event_fn(struct ext4fs_journal *j, ext4fs_journal_event_fn fn, void *arg)
{
	j->ev_fn = fn;
	j->ev_arg = arg;
}

/* -- The revoke table ------------------------------------------------------ */

/* Open addressing; sized from the scan's record count so it never fills. */
struct revoke_table {
	uint64_t *blk;
	uint32_t *tid;
	unsigned char *used;
	size_t mask;
};

static int revoke_init(struct revoke_table *rt, uint64_t records)
{
	size_t cap = 64;

	memset(rt, 0, sizeof(*rt));
	while (cap < records * 2) {
		if (cap > SIZE_MAX / 2 / sizeof(uint64_t))
			return EXT4FS_E_NO_MEMORY;
		cap *= 2;
	}
	rt->blk = malloc(cap * sizeof(*rt->blk));
	rt->tid = malloc(cap * sizeof(*rt->tid));
	rt->used = calloc(cap, 1);
	if (!rt->blk || !rt->tid || !rt->used)
		return EXT4FS_E_NO_MEMORY;
	rt->mask = cap - 1;
	return 0;
}

static void revoke_free(struct revoke_table *rt)
{
	free(rt->blk);
	free(rt->tid);
	free(rt->used);
	memset(rt, 0, sizeof(*rt));
}

static size_t revoke_slot(const struct revoke_table *rt, uint64_t blk)
{
	size_t s = (size_t)((blk * 0x9E3779B97F4A7C15ULL) >> 20) & rt->mask;

	while (rt->used[s] && rt->blk[s] != blk)
		s = (s + 1) & rt->mask;
	return s;
}

/* Remember that transaction tid revoked blk, keeping the latest revoking transaction. */
static void revoke_set(struct revoke_table *rt, uint64_t blk, uint32_t tid)
{
	size_t s = revoke_slot(rt, blk);

	if (!rt->used[s]) {
		rt->used[s] = 1;
		rt->blk[s] = blk;
		rt->tid[s] = tid;
	} else if (tid_gt(tid, rt->tid[s])) {
		rt->tid[s] = tid;
	}
}

/* Nonzero when a revoke record of transaction tid or a later one covers blk. */
static int revoke_test(const struct revoke_table *rt, uint64_t blk, uint32_t tid)
{
	size_t s;

	if (!rt->used)
		return 0;
	s = revoke_slot(rt, blk);
	return rt->used[s] && tid_geq(rt->tid[s], tid);
}

/* -- Checksums of log blocks ------------------------------------------------ */

/* Descriptor and revoke blocks end with a crc32c of the block (tail zeroed). */
static int tail_csum_ok(const struct ext4fs_journal *j, unsigned char *blk)
{
	unsigned char *tail = blk + j->bs - JBD2_TAIL_SIZE;
	uint32_t stored = be32_load(tail), crc;

	if (!j->csum_v23)
		return 1;
	memset(tail, 0, JBD2_TAIL_SIZE);
	crc = ext4fs_crc32c(j->csum_seed, blk, j->bs);
	be32_store(tail, stored);
	return crc == stored;
}

/* v2/v3 commit block checksum; scratch is a block-sized buffer. */
static int commit_csum_ok(const struct ext4fs_journal *j, const unsigned char *blk,
			  unsigned char *scratch)
{
	uint32_t stored = be32_load(blk + JC_CHKSUM);

	memcpy(scratch, blk, j->bs);
	memset(scratch + JC_CHKSUM, 0, 4);
	if (ext4fs_crc32c(j->csum_seed, scratch, j->bs) == stored)
		return 1;
	/* jbd2 accepts a commit block whose header alone matches (the rest zeros). */
	memset(scratch + JC_HEADER_SIZE, 0, j->bs - JC_HEADER_SIZE);
	return ext4fs_crc32c(j->csum_seed, scratch, j->bs) == stored;
}

/* v2/v3 data block checksum: crc32c of the transaction ID, then the block as logged. */
static int tag_csum_ok(const struct ext4fs_journal *j, const unsigned char *tag,
		       const unsigned char *data, uint32_t tid)
{
	unsigned char seq[4];
	uint32_t crc;

	if (!j->csum_v23)
		return 1;
	be32_store(seq, tid);
	crc = ext4fs_crc32c(j->csum_seed, seq, 4);
	crc = ext4fs_crc32c(crc, data, j->bs);
	if (j->csum_v3)
		return be32_load(tag + JT_CSUM32) == crc;
	return be16_load(tag + JT_CSUM16) == (uint16_t)crc;
}

/* -- Walking the log --------------------------------------------------------- */

enum pass { PASS_SCAN, PASS_REVOKE, PASS_REPLAY };

struct recovery {
	struct ext4fs_journal *j;
	struct ext4fs_journal_info *info;
	struct revoke_table revokes;
	uint64_t scan_revoke_records;   /* counted by the scan, to size the table */
	int write;                      /* the replay pass writes (recover) or only checks (scan) */
	int end_known;
	unsigned char *blk;             /* the descriptor, revoke or commit block */
	unsigned char *data;            /* a data block */
};

static uint32_t log_advance(const struct ext4fs_journal *j, uint32_t pos, uint64_t n)
{
	uint32_t len = j->log_end - j->log_first;

	return j->log_first + (uint32_t)(((uint64_t)(pos - j->log_first) + n) % len);
}

static void emit(struct recovery *r, enum ext4fs_journal_event_kind kind, uint32_t tid,
		 uint32_t log_block, uint64_t fs_block, uint32_t count, uint64_t commit_sec)
{
	struct ext4fs_journal_event ev = { kind, tid, log_block, fs_block, count, commit_sec };

	if (r->j->ev_fn)
		r->j->ev_fn(&ev, r->j->ev_arg);
}

/* Tags in descriptor block blk: up to the last-tag flag, at most what fits before the tail. */
static uint32_t count_tags(const struct ext4fs_journal *j, const unsigned char *blk)
{
	size_t limit = j->bs - (j->csum_v23 ? JBD2_TAIL_SIZE : 0);
	size_t off = JH_SIZE;
	uint32_t n = 0;

	while (off + j->tag_bytes <= limit) {
		uint16_t flags = be16_load(blk + off + JT_FLAGS16);
		n++;
		off += j->tag_bytes;
		if (!(flags & EXT4FS_JBD2_FLAG_SAME_UUID))
			off += 16;
		if (flags & EXT4FS_JBD2_FLAG_LAST_TAG)
			break;
	}
	return n;
}

/* Write a replayed block straight to the channel: the handle is read-only for all else. */
static int home_write(struct recovery *r, uint64_t blk, const void *buf)
{
	struct ext4fs_fs *fs = r->j->fs;
	unsigned slot = (unsigned)(blk % EXT4FS_CACHE_SLOTS);
	int err;

	if (blk >= fs->geom.blocks_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_BLOCK_NUM, "journal replay: block %llu is beyond the end",
				       (unsigned long long)blk);
	if (fs->cache_blk[slot] == blk)
		fs->cache_valid[slot] = 0;
	err = ext4fs_io_write(fs->io, blk * r->j->bs, buf, r->j->bs);
	if (err)
		return ext4fs__fs_fail(fs, err, "journal replay: writing block %llu: %s", (unsigned long long)blk,
				       ext4fs_strerror(err));
	return 0;
}

/* Pass 3 over one descriptor block: check, and write unless r->write is 0. */
static int replay_tags(struct recovery *r, uint32_t tid, uint32_t *pos)
{
	struct ext4fs_journal *j = r->j;
	struct ext4fs_journal_info *info = r->info;
	size_t limit = j->bs - (j->csum_v23 ? JBD2_TAIL_SIZE : 0);
	size_t off = JH_SIZE;

	while (off + j->tag_bytes <= limit) {
		const unsigned char *tag = r->blk + off;
		uint16_t flags = be16_load(tag + JT_FLAGS16);
		uint64_t home = be32_load(tag + JT_BLOCKNR);
		uint32_t log_block = *pos;
		int err;

		if (j->is_64bit)
			home |= (uint64_t)be32_load(tag + JT_BLOCKNR_HIGH) << 32;
		*pos = log_advance(j, *pos, 1);
		info->data_blocks++;
		if (journal_read(j, log_block, r->data)) {
			info->unreadable_blocks++;
			emit(r, EXT4FS_JOURNAL_EV_UNREADABLE, tid, log_block, home, 0, 0);
		} else if (revoke_test(&r->revokes, home, tid)) {
			info->revoked++;
		} else if (!tag_csum_ok(j, tag, r->data, tid)) {
			info->bad_block_csums++;
			emit(r, EXT4FS_JOURNAL_EV_BAD_BLOCK_CSUM, tid, log_block, home, 0, 0);
		} else if (!home_in_fs(j->fs, home) || ext4fs__journal_holds(j, home)) {
			info->bad_block_tags++;
			emit(r, EXT4FS_JOURNAL_EV_BAD_BLOCK_TAG, tid, log_block, home, 0, 0);
		} else {
			if (flags & EXT4FS_JBD2_FLAG_ESCAPE)
				be32_store(r->data, EXT4FS_JBD2_MAGIC);
			if (r->write && (err = home_write(r, home, r->data)))
				return err;
			info->replayed++;
		}
		off += j->tag_bytes;
		if (!(flags & EXT4FS_JBD2_FLAG_SAME_UUID))
			off += 16;
		if (flags & EXT4FS_JBD2_FLAG_LAST_TAG)
			break;
	}
	return 0;
}

/* v1 transaction checksum: crc32_be over the descriptor and the blocks it describes. */
static int crc_descriptor(struct recovery *r, uint32_t ntags, uint32_t *pos, uint32_t *crc)
{
	struct ext4fs_journal *j = r->j;

	*crc = ext4fs_journal_crc32_be(*crc, r->blk, j->bs);
	for (uint32_t i = 0; i < ntags; i++) {
		int err = journal_read(j, *pos, r->data);
		if (err)
			return ext4fs__fs_fail(j->fs, err, "reading journal block %u: %s", *pos, ext4fs_strerror(err));
		*crc = ext4fs_journal_crc32_be(*crc, r->data, j->bs);
		*pos = log_advance(j, *pos, 1);
	}
	return 0;
}

/* Records in a revoke block, or -1 when r_count does not fit in the block. */
static int64_t revoke_records(const struct ext4fs_journal *j, const unsigned char *blk,
			      size_t *rec_len)
{
	uint32_t count = be32_load(blk + JR_COUNT);
	size_t limit = j->bs - (j->csum_v23 ? JBD2_TAIL_SIZE : 0);

	*rec_len = j->is_64bit ? 8 : 4;
	if (count > limit)
		return -1;
	if (count < JR_RECORDS)
		return 0;
	return (int64_t)((count - JR_RECORDS) / *rec_len);
}

static int do_pass(struct recovery *r, enum pass pass)
{
	struct ext4fs_journal *j = r->j;
	struct ext4fs_journal_info *info = r->info;
	uint32_t tid = j->jsb.sequence, pos = j->jsb.start;
	uint64_t walked = 0, log_len = j->log_end - j->log_first;
	uint64_t last_commit_sec = 0;
	uint32_t crc = ~0U;
	int need_commit_time_check = 0;
	int err;

	for (;;) {
		uint32_t here = pos, type, seq, ntags;

		if (pass != PASS_SCAN && tid_geq(tid, info->end_tid))
			break;
		if (walked > log_len) {
			/* Only an uncommitted transaction can run round the whole ring. */
			info->end_reason = EXT4FS_JOURNAL_END_WRAPPED;
			break;
		}
		err = journal_read(j, pos, r->blk);
		if (err)
			return ext4fs__fs_fail(j->fs, err, "reading journal block %u: %s", pos, ext4fs_strerror(err));
		pos = log_advance(j, pos, 1);
		walked++;
		if (be32_load(r->blk + JH_MAGIC) != EXT4FS_JBD2_MAGIC) {
			info->end_reason = EXT4FS_JOURNAL_END_NO_MAGIC;
			break;
		}
		type = be32_load(r->blk + JH_BLOCKTYPE);
		seq = be32_load(r->blk + JH_SEQUENCE);
		if (seq != tid) {
			info->end_reason = EXT4FS_JOURNAL_END_SEQUENCE;
			break;
		}
		switch (type) {
		case EXT4FS_JBD2_DESCRIPTOR_BLOCK:
			ntags = count_tags(j, r->blk);
			if (!tail_csum_ok(j, r->blk)) {
				if (pass != PASS_SCAN)
					return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_CSUM,
							       "transaction %u: descriptor block %u fails its checksum",
							       tid, here);
				need_commit_time_check = 1;
			}
			walked += ntags;
			if (pass == PASS_SCAN && j->v1_csum && !r->end_known) {
				err = crc_descriptor(r, ntags, &pos, &crc);
				if (err)
					return err;
			} else if (pass == PASS_REPLAY) {
				info->descriptor_blocks++;
				emit(r, EXT4FS_JOURNAL_EV_DESCRIPTOR, tid, here, 0, ntags, 0);
				err = replay_tags(r, tid, &pos);
				if (err)
					return err;
			} else {
				pos = log_advance(j, pos, ntags);
			}
			continue;

		case EXT4FS_JBD2_COMMIT_BLOCK: {
			uint64_t commit_sec = be64_load(r->blk + JC_COMMIT_SEC);
			int ok = 1;

			if (pass != PASS_SCAN) {
				if (pass == PASS_REPLAY)
					emit(r, EXT4FS_JOURNAL_EV_COMMIT, tid, here, 0, 0, commit_sec);
				tid++;
				continue;
			}
			if (need_commit_time_check) {
				if (commit_sec >= last_commit_sec)
					return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_CSUM,
							       "transaction %u: a descriptor or revoke block fails its checksum",
							       tid);
				info->end_reason = EXT4FS_JOURNAL_END_STALE;
				goto done;
			}
			if (j->v1_csum) {
				uint32_t found = be32_load(r->blk + JC_CHKSUM);
				uint8_t ctype = r->blk[JC_CHKSUM_TYPE], csize = r->blk[JC_CHKSUM_SIZE];

				if (r->end_known) {
					info->failed_commit = info->end_tid;
					goto done;
				}
				ok = (crc == found && ctype == EXT4FS_JBD2_CRC32_CHKSUM &&
				      csize == EXT4FS_JBD2_CRC32_CHKSUM_SIZE) ||
				     (ctype == 0 && csize == 0 && found == 0);
				if (ok)
					crc = ~0U;
			} else if (j->csum_v23) {
				ok = commit_csum_ok(j, r->blk, r->data);
			}
			if (!ok) {
				if (commit_sec < last_commit_sec) {
					info->end_reason = EXT4FS_JOURNAL_END_STALE;
					goto done;
				}
				info->end_tid = tid;
				info->end_reason = EXT4FS_JOURNAL_END_COMMIT_CSUM;
				r->end_known = 1;
				if (!j->async_commit) {
					info->failed_commit = tid;
					goto done;
				}
			} else if (!r->end_known) {
				info->head_block = pos;
			}
			last_commit_sec = commit_sec;
			tid++;
			continue;
		}

		case EXT4FS_JBD2_REVOKE_BLOCK: {
			size_t rec_len;
			int64_t n;

			if (pass == PASS_REPLAY) {
				info->revoke_blocks++;
				n = revoke_records(j, r->blk, &rec_len);
				info->revoke_records += n > 0 ? (uint64_t)n : 0;
				emit(r, EXT4FS_JOURNAL_EV_REVOKE, tid, here, 0, n > 0 ? (uint32_t)n : 0, 0);
				continue;
			}
			if (pass == PASS_SCAN && !tail_csum_ok(j, r->blk))
				need_commit_time_check = 1;
			n = revoke_records(j, r->blk, &rec_len);
			if (n < 0)
				return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_LOG,
						       "transaction %u: revoke block %u has r_count %u, more than the block holds",
						       tid, here, be32_load(r->blk + JR_COUNT));
			if (pass == PASS_SCAN) {
				r->scan_revoke_records += (uint64_t)n;
				continue;
			}
			for (int64_t i = 0; i < n; i++) {
				const unsigned char *rec = r->blk + JR_RECORDS + (size_t)i * rec_len;
				revoke_set(&r->revokes, rec_len == 8 ? be64_load(rec) : be32_load(rec), tid);
			}
			continue;
		}

		default:
			info->end_reason = EXT4FS_JOURNAL_END_UNKNOWN_TYPE;
			goto done;
		}
	}
done:
	if (pass == PASS_SCAN) {
		if (!r->end_known) {
			info->end_tid = tid;
			r->end_known = 1;
		}
		if (info->head_block == 0)
			info->head_block = j->jsb.start;
		return 0;
	}
	if (tid != info->end_tid)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_JOURNAL_LOG,
				       "journal pass %d ended at transaction %u, the scan at %u", (int)pass, tid,
				       info->end_tid);
	return 0;
}

/* Whether the fast-commit area starts with a head for the transaction after the log. */
static int fc_pending(struct recovery *r)
{
	struct ext4fs_journal *j = r->j;
	uint64_t first = (uint64_t)j->log_end + 1;

	if (!j->fc_blocks || first >= j->jsb.maxlen || journal_read(j, first, r->data))
		return 0;
	return le16_load(r->data) == FC_TAG_HEAD && le16_load(r->data + 2) == FC_HEAD_LEN &&
	       le32_load(r->data + FC_HEAD_TID) == r->info->end_tid;
}

static void recovery_free(struct recovery *r)
{
	revoke_free(&r->revokes);
	free(r->blk);
	free(r->data);
}

/* All three passes; the third writes when r->write.  r->info is zeroed first. */
static int run_passes(struct recovery *r)
{
	struct ext4fs_journal *j = r->j;
	struct ext4fs_journal_info *info = r->info;
	int err;

	memset(info, 0, sizeof(*info));
	info->first_tid = info->end_tid = j->jsb.sequence;
	info->start_block = j->jsb.start;
	info->journal_errno = j->jsb.errnum;
	info->fc_blocks = j->fc_blocks;
	r->blk = malloc(j->bs);
	r->data = malloc(j->bs);
	if (!r->blk || !r->data)
		return ext4fs__fs_fail(j->fs, EXT4FS_E_NO_MEMORY, "no memory to read the journal");
	if (!j->jsb.start)
		return 0;
	err = do_pass(r, PASS_SCAN);
	if (err)
		return err;
	info->transactions = info->end_tid - info->first_tid;
	info->fc_pending = fc_pending(r);
	if (revoke_init(&r->revokes, r->scan_revoke_records))
		return ext4fs__fs_fail(j->fs, EXT4FS_E_NO_MEMORY, "no memory for %llu revoke records",
				       (unsigned long long)r->scan_revoke_records);
	err = do_pass(r, PASS_REVOKE);
	if (err)
		return err;
	return do_pass(r, PASS_REPLAY);
}

int ext4fs_journal_scan(struct ext4fs_journal *j, struct ext4fs_journal_info *info)
{
	struct recovery r = { .j = j, .info = info, .write = 0 };
	int err = run_passes(&r);

	recovery_free(&r);
	return err;
}

/* -- Writing the result ------------------------------------------------------ */

static int require_recovery_handle(struct ext4fs_journal *j)
{
	unsigned flags = ext4fs_fs_flags(j->fs);

	if (!(flags & EXT4FS_OPEN_RECOVERY) || (flags & EXT4FS_OPEN_RW))
		return ext4fs__fs_fail(j->fs, EXT4FS_E_READ_ONLY,
				       "journal recovery needs a handle opened with EXT4FS_OPEN_RECOVERY only");
	return 0;
}

/* Flush the file system's channel, and the journal device's when the journal is external. */
static int io_flush(struct ext4fs_journal *j)
{
	int err = ext4fs_io_flush(j->fs->io);

	if (err)
		return ext4fs__fs_fail(j->fs, err, "flushing %s: %s", j->fs->io->name, ext4fs_strerror(err));
	if (j->ext_io && (err = ext4fs_io_flush(j->ext_io)) != 0)
		return ext4fs__fs_fail(j->fs, err, "flushing %s: %s", j->ext_io->name, ext4fs_strerror(err));
	return 0;
}

/* Mark the journal empty: s_start 0, the next transaction next_tid, no error. */
static int write_empty_jsb(struct ext4fs_journal *j, uint32_t next_tid, unsigned char *buf)
{
	uint64_t pblk = ext4fs__journal_pblk(j, j->jsb_block);
	int err;

	err = journal_read(j, j->jsb_block, buf);
	if (err)
		return ext4fs__fs_fail(j->fs, err, "reading the journal superblock (block %llu): %s",
				       (unsigned long long)pblk, ext4fs_strerror(err));
	be32_store(buf + JSB_START, 0);
	be32_store(buf + JSB_SEQUENCE, next_tid);
	be32_store(buf + JSB_ERRNO, 0);
	if (j->csum_v23)
		be32_store(buf + JSB_CHECKSUM, ext4fs_journal_sb_csum(buf));
	err = ext4fs_io_write(journal_io(j), pblk * j->bs, buf, j->bs);
	if (err)
		return ext4fs__fs_fail(j->fs, err, "writing the journal superblock (block %llu): %s",
				       (unsigned long long)pblk, ext4fs_strerror(err));
	err = io_flush(j);
	if (err)
		return err;
	ext4fs_journal_sb_decode(&j->jsb, buf);
	return 0;
}

/*
 * Clear RECOVER in the primary superblock as it is on disk now (replay may
 * have rewritten it), adding state_set and removing state_clear.
 */
static int finish_super(struct ext4fs_journal *j, uint16_t state_set, uint16_t state_clear)
{
	struct ext4fs_fs *fs = j->fs;
	unsigned char raw[EXT4FS_SUPER_SIZE];
	struct ext4fs_super sb;
	int err;

	err = ext4fs_io_read(fs->io, EXT4FS_SUPER_OFFSET, raw, sizeof(raw));
	if (err)
		return ext4fs__fs_fail(fs, err, "reading the superblock after replay: %s", ext4fs_strerror(err));
	ext4fs_super_decode(&sb, raw);
	if (sb.s_magic != EXT4FS_SUPER_MAGIC)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_MAGIC,
				       "the primary superblock has bad magic 0x%x after replay", sb.s_magic);
	sb.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_RECOVER;
	sb.s_state = (uint16_t)((sb.s_state | state_set) & ~state_clear);
	ext4fs_super_encode(&sb, raw);
	if (sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM)
		le32_store(raw + 0x3FC, ext4fs_super_csum(raw));
	err = ext4fs_io_write(fs->io, EXT4FS_SUPER_OFFSET, raw, sizeof(raw));
	if (err)
		return ext4fs__fs_fail(fs, err, "writing the superblock: %s", ext4fs_strerror(err));
	/* The cached copy of the superblock's block is stale now. */
	memset(fs->cache_valid, 0, sizeof(fs->cache_valid));
	return io_flush(j);
}

int ext4fs_journal_recover(struct ext4fs_journal *j, struct ext4fs_journal_info *info)
{
	struct ext4fs_journal_info local;
	struct recovery r = { .j = j, .write = 1 };
	uint16_t set = 0, clear = 0;
	int err;

	r.info = info ? info : &local;
	err = require_recovery_handle(j);
	if (err) {
		memset(r.info, 0, sizeof(*r.info));
		return err;
	}
	err = run_passes(&r);
	/* Replay wrote behind the block cache's back, also when it stopped half way. */
	memset(j->fs->cache_valid, 0, sizeof(j->fs->cache_valid));
	if (err)
		goto out;
	if (j->jsb.start) {
		err = io_flush(j);
		if (err)
			goto out;
		if (r.info->journal_errno || r.info->failed_commit)
			set |= EXT4FS_STATE_ERROR;
		if (r.info->bad_block_tags || r.info->bad_block_csums || r.info->unreadable_blocks)
			clear |= EXT4FS_STATE_VALID;
		err = write_empty_jsb(j, r.info->end_tid + 1, r.data);
		if (err)
			goto out;
	}
	err = finish_super(j, set, clear);
	if (!err)
		r.info->recovered = 1;
out:
	recovery_free(&r);
	return err;
}

int ext4fs_journal_discard(struct ext4fs_journal *j)
{
	struct ext4fs_journal_info info;
	struct recovery r = { .j = j, .info = &info, .write = 0 };
	uint32_t next_tid;
	int err;

	err = require_recovery_handle(j);
	if (err)
		return err;
	if (!j->jsb.start)
		return finish_super(j, 0, 0);
	memset(&info, 0, sizeof(info));
	r.blk = malloc(j->bs);
	r.data = malloc(j->bs);
	if (!r.blk || !r.data) {
		err = ext4fs__fs_fail(j->fs, EXT4FS_E_NO_MEMORY, "no memory to read the journal");
		goto out;
	}
	info.end_tid = j->jsb.sequence;
	/*
	 * Past a damaged log, jump beyond any ID it can hold (each transaction
	 * takes a block at least), so none of its blocks passes for a new one.
	 */
	if (do_pass(&r, PASS_SCAN) == 0)
		next_tid = info.end_tid + 1;
	else
		next_tid = j->jsb.sequence + (j->log_end - j->log_first) + 1;
	ext4fs_errmsg_clear(j->fs);
	err = write_empty_jsb(j, next_tid, r.data);
	if (!err)
		err = finish_super(j, 0, EXT4FS_STATE_VALID);
out:
	recovery_free(&r);
	return err;
}
