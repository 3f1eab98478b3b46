/*
 * journal.h - the jbd2 journal: its on-disk format, and reading and
 * replaying the log of an internal journal (e4fsck, jreplay).
 *
 * Two layers live here.  The first section is layer 2 (ondisk, no I/O):
 * the journal superblock's fields, decoding and checking it, making a new
 * one (mke4fs), and the checksums.  jbd2 structures are big-endian.
 *
 * The rest is layer 4 (objects): an open journal is a handle over the
 * journal inode of an open file system.  ext4fs_journal_scan() reads the log
 * without writing; ext4fs_journal_recover() replays it into the file system
 * and marks the journal empty.  How the log is read, what ends it and which
 * damage is tolerated is described at the top of journal_recover.c.
 *
 * An internal journal (an inode of the file system) is opened with
 * ext4fs_journal_open(), an external journal device with
 * ext4fs_journal_open_external() from a channel the caller opened; both
 * are scanned and replayed alike.  Fast commits are detected and reported
 * but never replayed.
 */
#ifndef EXT4FS_JOURNAL_H
#define EXT4FS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- On-disk format ------------------------------------------------------ */

#define EXT4FS_JBD2_MAGIC              0xC03B3998U
#define EXT4FS_JBD2_DESCRIPTOR_BLOCK   1
#define EXT4FS_JBD2_COMMIT_BLOCK       2
#define EXT4FS_JBD2_SUPERBLOCK_V1      3
#define EXT4FS_JBD2_SUPERBLOCK_V2      4
#define EXT4FS_JBD2_REVOKE_BLOCK       5
#define EXT4FS_JBD2_SB_SIZE            1024
#define EXT4FS_JBD2_MIN_BLOCKS         1024   /* smallest journal jbd2 accepts */
#define EXT4FS_JBD2_MAX_BLOCKS         10240000U
#define EXT4FS_JBD2_DEFAULT_FC_BLOCKS  256    /* fast-commit area when s_num_fc_blks is 0 */

#define EXT4FS_JBD2_COMPAT_CHECKSUM       0x01  /* v1: crc32 of each transaction in its commit block */

#define EXT4FS_JBD2_INCOMPAT_REVOKE       0x01
#define EXT4FS_JBD2_INCOMPAT_64BIT        0x02
#define EXT4FS_JBD2_INCOMPAT_ASYNC_COMMIT 0x04
#define EXT4FS_JBD2_INCOMPAT_CSUM_V2      0x08
#define EXT4FS_JBD2_INCOMPAT_CSUM_V3      0x10
#define EXT4FS_JBD2_INCOMPAT_FAST_COMMIT  0x20
#define EXT4FS_JBD2_INCOMPAT_KNOWN        0x3F

#define EXT4FS_JBD2_CRC32_CHKSUM          1     /* h_chksum_type of a v1 commit block */
#define EXT4FS_JBD2_CRC32_CHKSUM_SIZE     4
#define EXT4FS_JBD2_CRC32C_CHKSUM         4     /* s_checksum_type for v2/v3 */

/* Descriptor block tag flags. */
#define EXT4FS_JBD2_FLAG_ESCAPE     0x1   /* the block began with the jbd2 magic, stored as zeros */
#define EXT4FS_JBD2_FLAG_SAME_UUID  0x2   /* no 16-byte UUID follows the tag */
#define EXT4FS_JBD2_FLAG_DELETED    0x4
#define EXT4FS_JBD2_FLAG_LAST_TAG   0x8

/* The journal superblock as native numbers (the first 0x100 bytes of it). */
struct ext4fs_journal_sb {
	uint32_t magic;
	uint32_t blocktype;        /* EXT4FS_JBD2_SUPERBLOCK_V1 or _V2 */
	uint32_t blocksize;
	uint32_t maxlen;           /* blocks in the journal, fast-commit area included */
	uint32_t first;            /* first block of the log */
	uint32_t sequence;         /* first transaction expected in the log */
	uint32_t start;            /* block where the log starts; 0 = nothing to replay */
	int32_t  errnum;           /* s_errno: the error the journal was aborted with, or 0 */
	uint32_t feature_compat;   /* the feature words read as 0 in a v1 superblock */
	uint32_t feature_incompat;
	uint32_t feature_ro_compat;
	uint8_t  uuid[16];
	uint32_t nr_users;
	uint32_t max_transaction;
	uint32_t max_trans_data;
	uint8_t  checksum_type;
	uint32_t num_fc_blocks;    /* s_num_fc_blks */
	uint32_t head;             /* s_head */
	uint32_t checksum;
};

/* Decode the first 1024 bytes of a journal superblock.  Cannot fail. */
void ext4fs_journal_sb_decode(struct ext4fs_journal_sb *jsb, const void *raw);

/*
 * Store every field of *jsb at its place in raw, the inverse of
 * ext4fs_journal_sb_decode(): bytes the structure does not hold (s_users,
 * padding) and, in a version 1 superblock, the feature words are left as
 * they were.  The checksum is stored as given (ext4fs_journal_sb_csum()
 * computes it).  Writes within the first 1024 bytes.  Cannot fail.
 */
void ext4fs_journal_sb_encode(const struct ext4fs_journal_sb *jsb, void *raw);

/*
 * Check a decoded journal superblock (raw: its bytes, for the checksum) for
 * a journal of block_size-byte blocks whose inode holds journal_blocks
 * blocks.  Returns 0, EXT4FS_E_JOURNAL_CORRUPT (bad magic, block type,
 * block size, s_maxlen, s_first, s_start, s_nr_users, both checksum
 * versions, unknown checksum type, fast-commit area too large),
 * EXT4FS_E_JOURNAL_UNSUPP (unknown incompatible or read-only features) or
 * EXT4FS_E_JOURNAL_CSUM (superblock checksum); why (why_len bytes, may be
 * NULL) names the field and its value.  Cannot fail otherwise.
 */
int ext4fs_journal_sb_check(const struct ext4fs_journal_sb *jsb, const void *raw,
			    uint32_t block_size, uint64_t journal_blocks, char *why, size_t why_len);

/*
 * Fill buf (block_size bytes) with a new, empty v2 journal superblock: a
 * journal of maxlen blocks in all (fc_blocks of them for fast commits, at
 * the end), log starting at block 1, sequence 1, one user.  With csum_v3 the
 * superblock announces checksum v3 (crc32c) and carries its checksum.
 * Cannot fail.
 */
void ext4fs_journal_sb_format(void *buf, uint32_t block_size, uint32_t maxlen, uint32_t fc_blocks,
			      const uint8_t uuid[16], int csum_v3);

/* Checksum of a journal superblock (crc32c over its 1024 bytes with the field zeroed). */
uint32_t ext4fs_journal_sb_csum(const void *sb);

/* Bytes of one descriptor-block tag (without its UUID) for these incompat features. */
size_t ext4fs_journal_tag_bytes(uint32_t feature_incompat);

/* crc32c seed of checksum v2/v3 blocks: the crc of the journal UUID. */
uint32_t ext4fs_journal_csum_seed(const uint8_t uuid[16]);

/*
 * The big-endian CRC-32 (polynomial 0x04C11DB7, no reflection, no final
 * inversion) of v1 transaction checksums (EXT4FS_JBD2_COMPAT_CHECKSUM):
 * start with ~0 and update block by block.  Cannot fail.
 */
uint32_t ext4fs_journal_crc32_be(uint32_t crc, const void *buf, size_t len);

/* s_jnl_backup_type: s_jnl_blocks[0..14] hold the journal inode's i_block, [15] and [16] its size. */
#define EXT4FS_JNL_BACKUP_BLOCKS 1

/*
 * Give a file system that has no journal a new internal one (e4fsck's
 * "Recreate journal"): inode 8 (which must be unused: no links, no blocks)
 * becomes a regular file of blocks + fc_blocks zeroed blocks, taken from
 * the start of a group near the middle of the file system as e2fsprogs
 * takes them, with an empty v2 journal superblock (fc_blocks of them a
 * fast-commit area); the superblock gets has_journal, s_journal_inum and
 * the backup of the inode's map (s_jnl_blocks).  Needs a writable handle;
 * written at once, the superblock at flush.  Errors: EXT4FS_E_READ_ONLY,
 * EXT4FS_E_EXISTS (a journal, or inode 8 in use), EXT4FS_E_INVALID_ARG
 * (fewer than EXT4FS_JBD2_MIN_BLOCKS blocks, or too many), EXT4FS_E_NO_SPACE,
 * EXT4FS_E_NO_MEMORY, I/O errors; on failure the blocks taken are given back.
 */
int ext4fs_journal_create(struct ext4fs_fs *fs, uint32_t blocks, uint32_t fc_blocks);

/* -- Reading and replaying a journal ------------------------------------------ */

struct ext4fs_journal;

/*
 * Load the journal of an open file system: the journal inode
 * (s_journal_inum) with its block map, and the journal superblock, both
 * validated (see ext4fs_journal_sb_check; the journal's block size must be
 * the file system's, s_maxlen must fit in the inode).  On success *out is a
 * handle the caller frees with ext4fs_journal_close(); it borrows fs, which
 * must stay open until then.  Errors: EXT4FS_E_NO_JOURNAL (no has_journal
 * feature, or s_journal_inum 0), EXT4FS_E_UNSUPP_FEATURE (an external
 * journal device), EXT4FS_E_JOURNAL_INODE (inode number out of range, not
 * a regular file, unlinked, smaller than 1024 blocks, holes, blocks outside
 * the file system; the message says which), the inode and map reading
 * errors, the errors of ext4fs_journal_sb_check(), EXT4FS_E_NO_MEMORY.
 * ext4fs_errmsg(fs) names the field or block.  On failure *out is NULL.
 */
int ext4fs_journal_open(struct ext4fs_fs *fs, struct ext4fs_journal **out);

/*
 * Load the external journal of an open file system from the journal
 * device on channel io: the device's ext4 superblock must have the
 * journal_dev feature, the UUID the file system names (s_journal_uuid)
 * and the file system's block size; the journal superblock, in the block
 * after it, is validated as by ext4fs_journal_sb_check() against the
 * device's block count.  The handle borrows fs and io, which must stay
 * open until ext4fs_journal_close() (which closes neither); scanning,
 * recovery and discarding work as for an internal journal, writing the
 * journal superblock through io.  Transactions cannot be written to it.
 * Errors: EXT4FS_E_NO_JOURNAL (fs has no has_journal feature or no journal
 * UUID), EXT4FS_E_BAD_MAGIC (no ext4 superblock on the device, or no
 * journal_dev feature), EXT4FS_E_INVALID_ARG (the device's UUID is not
 * the one fs names), EXT4FS_E_JOURNAL_CORRUPT (block size, or s_first not
 * past the journal superblock), the read errors of io, the errors of
 * ext4fs_journal_sb_check(), EXT4FS_E_NO_MEMORY; ext4fs_errmsg(fs) says
 * which.  On failure *out is NULL.
 */
int ext4fs_journal_open_external(struct ext4fs_fs *fs, struct ext4fs_io *io, struct ext4fs_journal **out);

/* Free the handle; NULL is allowed.  Nothing is written. */
void ext4fs_journal_close(struct ext4fs_journal *j);

/* The decoded journal superblock, owned by the handle (updated by recovery). */
const struct ext4fs_journal_sb *ext4fs_journal_super(const struct ext4fs_journal *j);

/* Nonzero when the log holds transactions to replay (s_start != 0). */
int ext4fs_journal_needs_recovery(const struct ext4fs_journal *j);

/* What scanning (or replaying) the log found. */
enum ext4fs_journal_end {
	EXT4FS_JOURNAL_END_EMPTY = 0,     /* s_start is 0: nothing to scan */
	EXT4FS_JOURNAL_END_NO_MAGIC,      /* the next block is not a jbd2 block */
	EXT4FS_JOURNAL_END_SEQUENCE,      /* the next block belongs to another transaction */
	EXT4FS_JOURNAL_END_UNKNOWN_TYPE,  /* a jbd2 block of a type jbd2 does not write */
	EXT4FS_JOURNAL_END_COMMIT_CSUM,   /* a commit block's checksum failed: that transaction is dropped */
	EXT4FS_JOURNAL_END_STALE,         /* a block with a bad checksum from an older journal cycle */
	EXT4FS_JOURNAL_END_WRAPPED,       /* an uncommitted transaction ran over the whole log */
};

struct ext4fs_journal_info {
	uint32_t first_tid;            /* s_sequence: the first transaction of the log */
	uint32_t end_tid;              /* first transaction not replayed (end of the log) */
	uint32_t transactions;         /* complete transactions: end_tid - first_tid */
	uint32_t start_block;          /* journal block where the log starts (s_start) */
	uint32_t head_block;           /* journal block after the last complete transaction */
	enum ext4fs_journal_end end_reason;
	uint64_t descriptor_blocks;    /* in complete transactions */
	uint64_t data_blocks;          /* tags in complete transactions */
	uint64_t revoke_blocks;
	uint64_t revoke_records;
	uint64_t replayed;             /* blocks written (recover) or to write (scan) */
	uint64_t revoked;              /* tags not replayed because a revoke record covers them */
	uint64_t bad_block_tags;       /* tags naming a block outside the file system or inside the journal */
	uint64_t bad_block_csums;      /* data blocks whose tag checksum failed (v2/v3) */
	uint64_t unreadable_blocks;    /* log blocks that could not be read */
	uint32_t failed_commit;        /* transaction whose commit checksum failed (sync commits), or 0 */
	int32_t journal_errno;         /* s_errno of the journal superblock */
	uint32_t fc_blocks;            /* size of the fast-commit area, 0 without one */
	int fc_pending;                /* the fast-commit area holds commits following end_tid */
	int recovered;                 /* recover: the journal was marked empty and RECOVER cleared */
};

/* One thing the scan met, for a caller that lists the log (jreplay, e4fsck -v). */
enum ext4fs_journal_event_kind {
	EXT4FS_JOURNAL_EV_DESCRIPTOR,     /* a descriptor block: count tags */
	EXT4FS_JOURNAL_EV_REVOKE,         /* a revoke block: count records */
	EXT4FS_JOURNAL_EV_COMMIT,         /* a commit block ends transaction tid */
	EXT4FS_JOURNAL_EV_BAD_BLOCK_TAG,  /* tag for fs_block refused (out of range or in the journal) */
	EXT4FS_JOURNAL_EV_BAD_BLOCK_CSUM, /* data for fs_block failed its checksum: not written */
	EXT4FS_JOURNAL_EV_UNREADABLE,     /* log block could not be read */
};

struct ext4fs_journal_event {
	enum ext4fs_journal_event_kind kind;
	uint32_t tid;
	uint32_t log_block;   /* journal block of the descriptor, revoke or commit block, or the data */
	uint64_t fs_block;    /* target of a refused tag */
	uint32_t count;       /* tags or revoke records */
	uint64_t commit_sec;  /* commit time (commit blocks) */
};

typedef void (*ext4fs_journal_event_fn)(const struct ext4fs_journal_event *ev, void *arg);

/*
 * Have ext4fs_journal_scan() and ext4fs_journal_recover() call fn for each
 * event of the replay pass (fn NULL: none, the default).  Cannot fail.
 */
void ext4fs_journal_set_event_fn(struct ext4fs_journal *j, ext4fs_journal_event_fn fn, void *arg);

/*
 * Scan the log as recovery would and fill *info, writing nothing: find its
 * end, collect the revoke records, and check every tag and data block
 * checksum of the transactions that would be replayed.  With s_start 0 the
 * info says so (end_reason EXT4FS_JOURNAL_END_EMPTY) and 0 is returned.
 * Errors: EXT4FS_E_JOURNAL_CSUM (a descriptor or revoke block of a
 * committed transaction fails its checksum: jbd2 refuses to replay such a
 * journal), EXT4FS_E_JOURNAL_LOG (a revoke block's byte count is too
 * large), read errors of descriptor, revoke and commit blocks,
 * EXT4FS_E_NO_MEMORY.  On error *info holds what was found so far.  Bad
 * tags, bad data block checksums and unreadable data blocks are not
 * errors: they are counted.
 */
int ext4fs_journal_scan(struct ext4fs_journal *j, struct ext4fs_journal_info *info);

/*
 * Replay the log into the file system, then mark the journal empty
 * (s_start 0, s_sequence one past the dropped end of the log, s_errno 0)
 * and clear the RECOVER feature in the primary superblock.  The file
 * system must have been opened with EXT4FS_OPEN_RECOVERY (and without
 * EXT4FS_OPEN_RW), on its primary superblock; the handle is stale
 * afterwards: close it and open the file system again.
 *
 * Like e2fsck, the superblock gets the ERROR state when the journal
 * recorded an error (s_errno) or a commit failed its checksum, and loses the
 * VALID state when blocks were skipped (bad tags, bad data checksums,
 * unreadable log blocks), so a full check follows.  Replay writes only
 * blocks of the file system outside the journal, and changes the journal
 * only at the end: a replay stopped half way (crash, write error) leaves a
 * journal that replays again to the same result.
 *
 * *info (may be NULL) is filled as by ext4fs_journal_scan(); info->recovered
 * tells whether the journal was marked empty.  With nothing to replay only
 * the RECOVER flag is cleared.  Errors: EXT4FS_E_READ_ONLY (not opened
 * for recovery), the errors of ext4fs_journal_scan() (nothing is written
 * then), write and flush errors (the journal still needs recovery).
 */
int ext4fs_journal_recover(struct ext4fs_journal *j, struct ext4fs_journal_info *info);

/*
 * Mark the journal empty without replaying it (what e2fsck does when told
 * not to replay, or when the log is unusable): s_start 0, s_sequence one
 * past the end of the log (past every ID the log could hold when a scan
 * fails), RECOVER cleared and the VALID state dropped in the primary
 * superblock.  Same handle requirements and errors as
 * ext4fs_journal_recover(), except that log damage is not an error here.
 */
int ext4fs_journal_discard(struct ext4fs_journal *j);

#ifdef __cplusplus
}
#endif
#endif
