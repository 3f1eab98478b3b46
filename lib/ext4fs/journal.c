/*
 * journal.c - jbd2 superblock.
 */
#include "config.h"
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/journal.h"
#include "ondisk_le.h"

/* Byte offsets in the jbd2 superblock. */
#define JSB_MAGIC          0x00
#define JSB_BLOCKTYPE      0x04
#define JSB_BLOCKSIZE      0x0C
#define JSB_MAXLEN         0x10
#define JSB_FIRST          0x14
#define JSB_SEQUENCE       0x18
#define JSB_INCOMPAT       0x28
#define JSB_UUID           0x30
#define JSB_NR_USERS       0x40
#define JSB_CHECKSUM_TYPE  0x50
#define JSB_NUM_FC_BLOCKS  0x54
#define JSB_CHECKSUM       0xFC

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
