/*
 * journal_internal.h - byte offsets of jbd2 structures and the journal
 * handle, for journal.c and journal_recover.c only (not installed).
 */
#ifndef EXT4FS_JOURNAL_INTERNAL_H
#define EXT4FS_JOURNAL_INTERNAL_H

#include <stdint.h>
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
