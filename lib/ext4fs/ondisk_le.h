/*
 * ondisk_le.h - little- and big-endian loads and stores from byte buffers.
 * Internal to the library (not installed).  Byte-wise so they work at any
 * alignment and on any host byte order.
 */
#ifndef EXT4FS_ONDISK_LE_H
#define EXT4FS_ONDISK_LE_H

#include <stdint.h>

static inline uint16_t le16_load(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t le32_load(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
	       ((uint32_t)b[3] << 24);
}

static inline uint64_t le64_load(const void *p)
{
	const uint8_t *b = p;
	return (uint64_t)le32_load(b) | ((uint64_t)le32_load(b + 4) << 32);
}

static inline void le16_store(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void le32_store(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void le64_store(void *p, uint64_t v)
{
	le32_store(p, (uint32_t)v);
	le32_store((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t be16_load(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)((b[0] << 8) | b[1]);
}

static inline uint32_t be32_load(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) |
	       (uint32_t)b[3];
}

static inline uint64_t be64_load(const void *p)
{
	const uint8_t *b = p;
	return ((uint64_t)be32_load(b) << 32) | be32_load(b + 4);
}

static inline void be32_store(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static inline void be16_store(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static inline void be64_store(void *p, uint64_t v)
{
	be32_store(p, (uint32_t)(v >> 32));
	be32_store((uint8_t *)p + 4, (uint32_t)v);
}

/* Load or store one little-endian field of width size (1, 2, 4 or 8) into a native slot. */
static inline void le_field_load(void *native, const void *disk, unsigned size)
{
	switch (size) {
	case 1: *(uint8_t *)native = *(const uint8_t *)disk; break;
	case 2: *(uint16_t *)native = le16_load(disk); break;
	case 4: *(uint32_t *)native = le32_load(disk); break;
	default: *(uint64_t *)native = le64_load(disk); break;
	}
}

static inline void le_field_store(void *disk, const void *native, unsigned size)
{
	switch (size) {
	case 1: *(uint8_t *)disk = *(const uint8_t *)native; break;
	case 2: le16_store(disk, *(const uint16_t *)native); break;
	case 4: le32_store(disk, *(const uint32_t *)native); break;
	default: le64_store(disk, *(const uint64_t *)native); break;
	}
}

#endif
