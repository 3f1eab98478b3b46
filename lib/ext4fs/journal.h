/*
 * journal.h - the jbd2 journal's on-disk superblock.
 *
 * Layer 2 (ondisk): no I/O.  jbd2 structures are big-endian.  Only what
 * creating a journal needs is here so far; reading and replaying the
 * journal (e4fsck) will extend this module.
 */
#ifndef EXT4FS_JOURNAL_H
#define EXT4FS_JOURNAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_JBD2_MAGIC              0xC03B3998U
#define EXT4FS_JBD2_SUPERBLOCK_V1      3
#define EXT4FS_JBD2_SUPERBLOCK_V2      4
#define EXT4FS_JBD2_SB_SIZE            1024
#define EXT4FS_JBD2_MIN_BLOCKS         1024   /* smallest journal jbd2 accepts */
#define EXT4FS_JBD2_MAX_BLOCKS         10240000U

#define EXT4FS_JBD2_INCOMPAT_REVOKE       0x01
#define EXT4FS_JBD2_INCOMPAT_64BIT        0x02
#define EXT4FS_JBD2_INCOMPAT_ASYNC_COMMIT 0x04
#define EXT4FS_JBD2_INCOMPAT_CSUM_V2      0x08
#define EXT4FS_JBD2_INCOMPAT_CSUM_V3      0x10
#define EXT4FS_JBD2_INCOMPAT_FAST_COMMIT  0x20
#define EXT4FS_JBD2_CRC32C_CHKSUM         4

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

#ifdef __cplusplus
}
#endif
#endif
