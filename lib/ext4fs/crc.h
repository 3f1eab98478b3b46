/*
 * crc.h - the checksums ext4 uses.
 *
 * Layer 2 (ondisk): pure functions, no state beyond constant tables, safe
 * from any thread.
 *
 * ext4fs_crc32c() is the raw Castagnoli CRC update the kernel calls
 * ext4_chksum(): the caller supplies the starting value (~0 for a fresh
 * checksum, or the file system's checksum seed) and no final inversion is
 * applied, which is exactly what metadata_csum stores.  It uses the SSE4.2
 * crc32 instruction when the CPU has it and a slicing-by-8 table otherwise.
 *
 * ext4fs_crc16() is the CRC-16 (polynomial 0x8005, bit-reflected) that
 * uninit_bg / gdt_csum group descriptor checksums use; again a raw update
 * with the caller's starting value (~0 for group descriptors).
 */
#ifndef EXT4FS_CRC_H
#define EXT4FS_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Update crc with len bytes at buf.  Cannot fail; buf may be NULL when len is 0. */
uint32_t ext4fs_crc32c(uint32_t crc, const void *buf, size_t len);

/* The portable table version, always available; for tests and benchmarks. */
uint32_t ext4fs_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* Nonzero when ext4fs_crc32c() uses the CPU's crc32 instruction. */
int ext4fs_crc32c_hw_available(void);

/* Update a CRC-16 with len bytes at buf.  Cannot fail. */
uint16_t ext4fs_crc16(uint16_t crc, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
