/*
 * xattr_internal.h - the on-disk layout of attribute blocks and entries,
 * shared by the reader (xattr.c) and the writer (xattr_write.c).  Not
 * installed.
 */
#ifndef EXT4FS_XATTR_INTERNAL_H
#define EXT4FS_XATTR_INTERNAL_H

#include <stdint.h>
#include "ext4fs/codec.h"
#include "ext4fs/xattr.h"

/* Short names for the block and entry layout codec.h defines. */
#define XH_MAGIC       EXT4FS_XATTR_HDR_OFF_MAGIC
#define XH_REFCOUNT    EXT4FS_XATTR_HDR_OFF_REFCOUNT
#define XH_BLOCKS      EXT4FS_XATTR_HDR_OFF_BLOCKS
#define XH_HASH        EXT4FS_XATTR_HDR_OFF_HASH
#define XH_CHECKSUM    EXT4FS_XATTR_HDR_OFF_CHECKSUM
#define XE_NAME_LEN    EXT4FS_XATTR_ENT_OFF_NAME_LEN
#define XE_NAME_INDEX  EXT4FS_XATTR_ENT_OFF_NAME_INDEX
#define XE_VALUE_OFFS  EXT4FS_XATTR_ENT_OFF_VALUE_OFFS
#define XE_VALUE_INUM  EXT4FS_XATTR_ENT_OFF_VALUE_INUM
#define XE_VALUE_SIZE  EXT4FS_XATTR_ENT_OFF_VALUE_SIZE
#define XE_HASH        EXT4FS_XATTR_ENT_OFF_HASH
#define XE_NAME        EXT4FS_XATTR_ENT_OFF_NAME

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
