/*
 * journal.c - the jbd2 superblock: decode, check, create; jbd2 checksums.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/errors.h"
#include "ext4fs/journal.h"
#include "journal_internal.h"
#include "ondisk_le.h"

uint32_t ext4fs_journal_sb_csum(const void *sb)
{
	unsigned char copy[EXT4FS_JBD2_SB_SIZE];

	memcpy(copy, sb, sizeof(copy));
	memset(copy + JSB_CHECKSUM, 0, 4);
	return ext4fs_crc32c(~0U, copy, sizeof(copy));
}

void ext4fs_journal_sb_format(void *buf, uint32_t block_size, uint32_t maxlen, uint32_t fc_blocks,
			      const uint8_t uuid[16], int csum_v3)
{
	unsigned char *b = buf;

	memset(b, 0, block_size);
	be32_store(b + JSB_MAGIC, EXT4FS_JBD2_MAGIC);
	be32_store(b + JSB_BLOCKTYPE, EXT4FS_JBD2_SUPERBLOCK_V2);
	be32_store(b + JSB_BLOCKSIZE, block_size);
	be32_store(b + JSB_MAXLEN, maxlen);
	be32_store(b + JSB_FIRST, 1);
	be32_store(b + JSB_SEQUENCE, 1);
	memcpy(b + JSB_UUID, uuid, 16);
	be32_store(b + JSB_NR_USERS, 1);
	be32_store(b + JSB_NUM_FC_BLOCKS, fc_blocks);
	if (csum_v3) {
		be32_store(b + JSB_INCOMPAT, EXT4FS_JBD2_INCOMPAT_CSUM_V3);
		b[JSB_CHECKSUM_TYPE] = EXT4FS_JBD2_CRC32C_CHKSUM;
		be32_store(b + JSB_CHECKSUM, ext4fs_journal_sb_csum(b));
	}
}

void ext4fs_journal_sb_decode(struct ext4fs_journal_sb *jsb, const void *raw)
{
	const unsigned char *b = raw;

	memset(jsb, 0, sizeof(*jsb));
	jsb->magic = be32_load(b + JSB_MAGIC);
	jsb->blocktype = be32_load(b + JSB_BLOCKTYPE);
	jsb->blocksize = be32_load(b + JSB_BLOCKSIZE);
	jsb->maxlen = be32_load(b + JSB_MAXLEN);
	jsb->first = be32_load(b + JSB_FIRST);
	jsb->sequence = be32_load(b + JSB_SEQUENCE);
	jsb->start = be32_load(b + JSB_START);
	jsb->errnum = (int32_t)be32_load(b + JSB_ERRNO);
	/* A v1 superblock has no feature words: whatever lies there means nothing. */
	if (jsb->blocktype == EXT4FS_JBD2_SUPERBLOCK_V2) {
		jsb->feature_compat = be32_load(b + JSB_COMPAT);
		jsb->feature_incompat = be32_load(b + JSB_INCOMPAT);
		jsb->feature_ro_compat = be32_load(b + JSB_RO_COMPAT);
	}
	memcpy(jsb->uuid, b + JSB_UUID, 16);
	jsb->nr_users = be32_load(b + JSB_NR_USERS);
	jsb->max_transaction = be32_load(b + JSB_MAX_TRANSACTION);
	jsb->max_trans_data = be32_load(b + JSB_MAX_TRANS_DATA);
	jsb->checksum_type = b[JSB_CHECKSUM_TYPE];
	jsb->num_fc_blocks = be32_load(b + JSB_NUM_FC_BLOCKS);
	jsb->head = be32_load(b + JSB_HEAD);
	jsb->checksum = be32_load(b + JSB_CHECKSUM);
}

void ext4fs_journal_sb_encode(const struct ext4fs_journal_sb *jsb, void *raw)
{
	unsigned char *b = raw;

	be32_store(b + JSB_MAGIC, jsb->magic);
	be32_store(b + JSB_BLOCKTYPE, jsb->blocktype);
	be32_store(b + JSB_BLOCKSIZE, jsb->blocksize);
	be32_store(b + JSB_MAXLEN, jsb->maxlen);
	be32_store(b + JSB_FIRST, jsb->first);
	be32_store(b + JSB_SEQUENCE, jsb->sequence);
	be32_store(b + JSB_START, jsb->start);
	be32_store(b + JSB_ERRNO, (uint32_t)jsb->errnum);
	/* As decoding: a v1 superblock's bytes there are not feature words, and are left alone. */
	if (jsb->blocktype == EXT4FS_JBD2_SUPERBLOCK_V2) {
		be32_store(b + JSB_COMPAT, jsb->feature_compat);
		be32_store(b + JSB_INCOMPAT, jsb->feature_incompat);
		be32_store(b + JSB_RO_COMPAT, jsb->feature_ro_compat);
	}
	memcpy(b + JSB_UUID, jsb->uuid, 16);
	be32_store(b + JSB_NR_USERS, jsb->nr_users);
	be32_store(b + JSB_MAX_TRANSACTION, jsb->max_transaction);
	be32_store(b + JSB_MAX_TRANS_DATA, jsb->max_trans_data);
	b[JSB_CHECKSUM_TYPE] = jsb->checksum_type;
	be32_store(b + JSB_NUM_FC_BLOCKS, jsb->num_fc_blocks);
	be32_store(b + JSB_HEAD, jsb->head);
	be32_store(b + JSB_CHECKSUM, jsb->checksum);
}

uint32_t ext4fs__journal_fc_blocks(const struct ext4fs_journal_sb *jsb)
{
	if (!(jsb->feature_incompat & EXT4FS_JBD2_INCOMPAT_FAST_COMMIT))
		return 0;
	return jsb->num_fc_blocks ? jsb->num_fc_blocks : EXT4FS_JBD2_DEFAULT_FC_BLOCKS;
}

static int sb_bad(char *why, size_t why_len, int err, const char *fmt, unsigned long long v)
{
	if (why && why_len)
		snprintf(why, why_len, fmt, v);
	return err;
}

int ext4fs_journal_sb_check(const struct ext4fs_journal_sb *jsb, const void *raw,
			    uint32_t block_size, uint64_t journal_blocks, char *why, size_t why_len)
{
	const int C = EXT4FS_E_JOURNAL_CORRUPT;
	uint32_t fc = ext4fs__journal_fc_blocks(jsb);
	uint32_t csum_bits = jsb->feature_incompat &
			     (EXT4FS_JBD2_INCOMPAT_CSUM_V2 | EXT4FS_JBD2_INCOMPAT_CSUM_V3);

	if (jsb->magic != EXT4FS_JBD2_MAGIC)
		return sb_bad(why, why_len, C, "journal superblock has bad magic 0x%llx", jsb->magic);
	if (jsb->blocktype != EXT4FS_JBD2_SUPERBLOCK_V1 && jsb->blocktype != EXT4FS_JBD2_SUPERBLOCK_V2)
		return sb_bad(why, why_len, C, "journal superblock h_blocktype is %llu (not 3 or 4)",
			      jsb->blocktype);
	if (jsb->blocksize != block_size)
		return sb_bad(why, why_len, C,
			      "journal superblock s_blocksize is %llu, not the file system's block size",
			      jsb->blocksize);
	if (jsb->maxlen < EXT4FS_JBD2_MIN_BLOCKS)
		return sb_bad(why, why_len, C, "journal superblock s_maxlen %llu is below 1024 blocks",
			      jsb->maxlen);
	if (jsb->maxlen > journal_blocks)
		return sb_bad(why, why_len, C,
			      "journal superblock s_maxlen %llu is larger than the journal inode",
			      jsb->maxlen);
	if (jsb->feature_incompat & ~(uint32_t)EXT4FS_JBD2_INCOMPAT_KNOWN)
		return sb_bad(why, why_len, EXT4FS_E_JOURNAL_UNSUPP,
			      "journal superblock has unknown incompatible features 0x%llx",
			      jsb->feature_incompat & ~(uint32_t)EXT4FS_JBD2_INCOMPAT_KNOWN);
	if (jsb->feature_ro_compat)
		return sb_bad(why, why_len, EXT4FS_E_JOURNAL_UNSUPP,
			      "journal superblock has unknown read-only features 0x%llx",
			      jsb->feature_ro_compat);
	if (fc && (uint64_t)jsb->maxlen < (uint64_t)EXT4FS_JBD2_MIN_BLOCKS + fc)
		return sb_bad(why, why_len, C,
			      "journal superblock s_num_fc_blks %llu leaves fewer than 1024 log blocks",
			      fc);
	if (jsb->first == 0 || jsb->first >= jsb->maxlen - fc)
		return sb_bad(why, why_len, C, "journal superblock s_first %llu is outside the log",
			      jsb->first);
	if (jsb->start != 0 && (jsb->start < jsb->first || jsb->start >= jsb->maxlen - fc))
		return sb_bad(why, why_len, C, "journal superblock s_start %llu is outside the log",
			      jsb->start);
	if (jsb->blocktype == EXT4FS_JBD2_SUPERBLOCK_V2 && jsb->nr_users > 1)
		return sb_bad(why, why_len, C,
			      "journal superblock s_nr_users is %llu: a shared journal is not supported",
			      jsb->nr_users);
	if (csum_bits == (EXT4FS_JBD2_INCOMPAT_CSUM_V2 | EXT4FS_JBD2_INCOMPAT_CSUM_V3))
		return sb_bad(why, why_len, C,
			      "journal superblock has both checksum v2 and v3 (features 0x%llx)",
			      jsb->feature_incompat);
	if (csum_bits) {
		if (jsb->checksum_type != EXT4FS_JBD2_CRC32C_CHKSUM)
			return sb_bad(why, why_len, C,
				      "journal superblock s_checksum_type is %llu (not crc32c)",
				      jsb->checksum_type);
		if (ext4fs_journal_sb_csum(raw) != jsb->checksum)
			return sb_bad(why, why_len, EXT4FS_E_JOURNAL_CSUM,
				      "journal superblock s_checksum 0x%llx does not match", jsb->checksum);
	}
	return 0;
}

size_t ext4fs_journal_tag_bytes(uint32_t feature_incompat)
{
	size_t bytes = 12;   /* block number, checksum and flags, high block number */

	if (feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V3)
		return 16;
	/* v2 reserves two more bytes although its 16-bit checksum sits inside the 12. */
	if (feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V2)
		bytes += 2;
	if (!(feature_incompat & EXT4FS_JBD2_INCOMPAT_64BIT))
		bytes -= 4;
	return bytes;
}

uint32_t ext4fs_journal_csum_seed(const uint8_t uuid[16])
{
	return ext4fs_crc32c(~0U, uuid, 16);
}

/* crc32_be of a nibble at the top of the register: two lookups a byte keep the table tiny. */
static const uint32_t crc32_be_nibble[16] = {
	0x00000000U, 0x04C11DB7U, 0x09823B6EU, 0x0D4326D9U, 0x130476DCU, 0x17C56B6BU,
	0x1A864DB2U, 0x1E475005U, 0x2608EDB8U, 0x22C9F00FU, 0x2F8AD6D6U, 0x2B4BCB61U,
	0x350C9B64U, 0x31CD86D3U, 0x3C8EA00AU, 0x384FBDBDU,
};

uint32_t ext4fs_journal_crc32_be(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		crc ^= (uint32_t)p[i] << 24;
		crc = (crc << 4) ^ crc32_be_nibble[crc >> 28];
		crc = (crc << 4) ^ crc32_be_nibble[crc >> 28];
	}
	return crc;
}
