/*
 * bytes.h - little-endian (and, for the journal, big-endian) loads and
 * stores in on-disk buffers, for the checker's own parsing (directory
 * entries, attribute blocks, block maps, the journal superblock).
 * Byte-wise, so any alignment and host byte order do.
 */
#ifndef E4FSCK_BYTES_H
#define E4FSCK_BYTES_H

#include <stdint.h>

static inline uint16_t ld16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t ld32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void st16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void st32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Big-endian, for the journal's structures. */
static inline uint32_t ld32be(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void st32be(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

#endif
