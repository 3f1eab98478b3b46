/*
 * journal_internal.h - byte offsets of jbd2 structures and the journal
 * handle, for journal.c and journal_recover.c only (not installed).
 */
#ifndef EXT4FS_JOURNAL_INTERNAL_H
#define EXT4FS_JOURNAL_INTERNAL_H

#include <stdint.h>
#include "ext4fs/io.h"
#include "ext4fs/journal.h"

/* Journal superblock. */
#define JSB_MAGIC            0x00
#define JSB_BLOCKTYPE        0x04
#define JSB_SEQUENCE_HDR     0x08
#define JSB_BLOCKSIZE        0x0C
#define JSB_MAXLEN           0x10
#define JSB_FIRST            0x14
#define JSB_SEQUENCE         0x18
#define JSB_START            0x1C
#define JSB_ERRNO            0x20
#define JSB_COMPAT           0x24
#define JSB_INCOMPAT         0x28
#define JSB_RO_COMPAT        0x2C
#define JSB_UUID             0x30
#define JSB_NR_USERS         0x40
#define JSB_MAX_TRANSACTION  0x48
#define JSB_MAX_TRANS_DATA   0x4C
#define JSB_CHECKSUM_TYPE    0x50
#define JSB_NUM_FC_BLOCKS    0x54
#define JSB_HEAD             0x58
#define JSB_CHECKSUM         0xFC

/* Every log block starts with magic, block type and sequence (12 bytes). */
#define JH_MAGIC             0x00
#define JH_BLOCKTYPE         0x04
#define JH_SEQUENCE          0x08
#define JH_SIZE              12

/* Commit block. */
#define JC_CHKSUM_TYPE       0x0C
#define JC_CHKSUM_SIZE       0x0D
#define JC_CHKSUM            0x10
#define JC_COMMIT_SEC        0x30
#define JC_HEADER_SIZE       0x3C   /* what a commit block holds besides padding */

/* Revoke block: byte count after the header, records from 16. */
#define JR_COUNT             0x0C
#define JR_RECORDS           0x10

/* Tag fields (both tag layouts keep the 16 flag bits at byte 6). */
#define JT_BLOCKNR           0x00
#define JT_CSUM16            0x04   /* v2: low 16 bits of the data checksum */
#define JT_FLAGS16           0x06
#define JT_BLOCKNR_HIGH      0x08
#define JT_CSUM32            0x0C   /* v3 */

/* The 4-byte checksum tail of descriptor and revoke blocks (v2/v3). */
#define JBD2_TAIL_SIZE       4

/* A run of the journal inode: journal blocks [lblk, lblk + count) at pblk. */
struct jrun {
	uint64_t lblk;
	uint64_t pblk;
	uint64_t count;
};

struct ext4fs_journal {
	struct ext4fs_fs *fs;
	uint32_t ino;               /* 0 for an external journal */
	/*
	 * An external journal: the journal device's channel (the caller's), in
	 * which journal block n is device block n, the journal superblock at
	 * jsb_block; NULL for an internal journal (jsb_block 0, blocks by runs).
	 */
	struct ext4fs_io *ext_io;
	uint32_t jsb_block;
	uint32_t bs;
	struct ext4fs_journal_sb jsb;
	struct jrun *runs;          /* in logical order, covering [0, nblocks) */
	struct jrun *by_pblk;       /* the same runs in physical order */
	size_t nruns;
	uint64_t nblocks;           /* journal blocks the inode maps */
	uint32_t log_first;         /* the log ring is [log_first, log_end) */
	uint32_t log_end;
	uint32_t fc_blocks;
	uint32_t csum_seed;
	size_t tag_bytes;
	int csum_v23, csum_v3, is_64bit, v1_csum, async_commit;
	ext4fs_journal_event_fn ev_fn;
	void *ev_arg;
	/* Writing (journal_write.c): the log is [tail, head) of the ring, empty when tail is 0. */
	int writer;                 /* ext4fs__journal_writer_start() succeeded */
	uint32_t tail;              /* s_start of the log on disk, 0 when empty */
	uint32_t head;              /* where the next transaction goes */
	uint32_t next_tid;          /* ID of the next transaction */
	uint64_t last_commit_sec;   /* commit times never go backwards (recovery relies on it) */
};

/* Physical block of journal block lblk (lblk < nblocks): on the journal device when external.  Cannot fail. */
uint64_t ext4fs__journal_pblk(const struct ext4fs_journal *j, uint64_t lblk);

/* Nonzero when file-system block blk is one of the journal's own blocks.  Cannot fail. */
int ext4fs__journal_holds(const struct ext4fs_journal *j, uint64_t blk);

/* -- Writing transactions (journal_write.c) --------------------------------
 *
 * The log is written through an explicit channel (the one under a staging
 * channel: the journal's blocks are never staged).  What goes in a
 * transaction and when the log is emptied is the caller's (txn.c) business;
 * these calls only lay blocks out in jbd2's format.
 */

/* A block to log: its home and its contents. */
struct ext4fs__jblock {
	uint64_t home;
	const unsigned char *data;
};

/*
 * Make j writable: the log must be empty (s_start 0) and the journal free
 * of errors, of the fast-commit feature and of features we cannot write.
 * Like ext4 loading a journal, turn on the features its transactions need
 * (revoke; 64-bit tags on a 64bit file system; checksum v3 with
 * metadata_csum), writing the journal superblock through io.  The next
 * transaction goes at the start of the ring with ID s_sequence.  Errors:
 * EXT4FS_E_JOURNAL_UNSUPP (features), EXT4FS_E_JOURNAL_LOG (a log to
 * replay, or s_errno set), EXT4FS_E_JOURNAL_INODE (a ring under 4 blocks),
 * write and flush errors.
 */
int ext4fs__journal_writer_start(struct ext4fs_journal *j, struct ext4fs_io *io);

/* Blocks of the ring. */
uint32_t ext4fs__journal_ring_blocks(const struct ext4fs_journal *j);

/* Ring blocks in use by committed, not yet emptied transactions. */
uint32_t ext4fs__journal_ring_used(const struct ext4fs_journal *j);

/* Log blocks a transaction of nblocks blocks and nrevokes revoke records takes. */
uint64_t ext4fs__journal_txn_blocks(const struct ext4fs_journal *j, uint64_t nblocks, uint64_t nrevokes);

/*
 * Append one transaction: descriptor blocks and the blocks they describe
 * (escaped when they begin with the jbd2 magic), revoke blocks, then, after
 * a flush, the commit block, unflushed: the caller flushes io before it
 * writes anything home.  When the log was empty the
 * journal superblock gets s_start and s_sequence first.  Returns
 * EXT4FS_E_JOURNAL_FULL (nothing written) when the ring lacks room.  After
 * any other error the transaction did not commit and nothing more may be
 * written to the journal.  sec/nsec: the commit time (an earlier time than
 * the last commit's is raised to it).
 */
int ext4fs__journal_write_txn(struct ext4fs_journal *j, struct ext4fs_io *io, const struct ext4fs__jblock *blocks,
			      size_t nblocks, const uint64_t *revokes, size_t nrevokes, int64_t sec, uint32_t nsec);

/*
 * The transactions in the log are home and flushed: mark the log empty
 * (s_start 0, s_sequence the next ID) and flush.  Errors: write and flush
 * errors of io.
 */
int ext4fs__journal_write_empty(struct ext4fs_journal *j, struct ext4fs_io *io);

/* Blocks in the fast-commit area (0 without the feature). */
uint32_t ext4fs__journal_fc_blocks(const struct ext4fs_journal_sb *jsb);

/* Wrap-around comparisons of transaction IDs, as jbd2 compares them. */
static inline int tid_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline int tid_geq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

#endif
