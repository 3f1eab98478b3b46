/*
 * xattr_internal.h - the on-disk layout of attribute blocks and entries,
 * shared by the reader (xattr.c) and the writer (xattr_write.c).  Not
 * installed.
 */
#ifndef EXT4FS_XATTR_INTERNAL_H
#define EXT4FS_XATTR_INTERNAL_H

#include <stdint.h>
#include "ext4fs/xattr.h"

/* Block header fields. */
#define XH_MAGIC     0x00
#define XH_REFCOUNT  0x04
#define XH_BLOCKS    0x08
#define XH_HASH      0x0C
#define XH_CHECKSUM  0x10

/* Entry fields. */
#define XE_NAME_LEN    0x00
#define XE_NAME_INDEX  0x01
#define XE_VALUE_OFFS  0x02
#define XE_VALUE_INUM  0x04
#define XE_VALUE_SIZE  0x08
#define XE_HASH        0x0C
#define XE_NAME        0x10

/* An entry takes its 16 bytes plus the name, padded to 4 bytes. */
static inline uint32_t xattr_entry_len(uint8_t name_len)
{
	return ((uint32_t)EXT4FS_XATTR_ENTRY_SIZE + name_len + 3U) & ~3U;
}

/* Values are padded to 4 bytes too. */
static inline uint32_t xattr_value_padded(uint32_t size)
{
	return (size + 3U) & ~3U;
}

#endif
