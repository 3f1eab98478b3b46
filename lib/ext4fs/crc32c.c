/*
 * crc32c.c - the Castagnoli CRC-32 that metadata_csum uses.
 *
 * Bit-reflected polynomial 0x82F63B78, raw update: the caller passes the
 * starting value and gets the register back without a final inversion.
 *
 * Two implementations:
 *   - slicing-by-8 tables (portable), built once under pthread_once;
 *   - the SSE4.2 crc32 instruction, compiled with a per-function target
 *     attribute so the rest of the library stays baseline x86-64, and used
 *     only when the CPU reports SSE4.2 at run time.
 */
#include "config.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ondisk_le.h"

#if defined(HAVE_SSE42_TARGET_ATTR) && defined(__x86_64__)
#define CRC32C_HW 1
#include <nmmintrin.h>
#endif

#define CRC32C_POLY 0x82F63B78u

/*
 * slice[0][b] is the register after feeding byte b into a zero register;
 * slice[k][b] is the same byte followed by k zero bytes.  With these, eight
 * input bytes are folded in with eight independent lookups.
 */
static uint32_t slice[8][256];
static pthread_once_t slice_once = PTHREAD_ONCE_INIT;

static void slice_build(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint32_t r = b;

		for (int bit = 0; bit < 8; bit++)
			r = (r >> 1) ^ (CRC32C_POLY & (0u - (r & 1u)));
		slice[0][b] = r;
	}
	for (int k = 1; k < 8; k++)
		for (uint32_t b = 0; b < 256; b++)
			slice[k][b] = (slice[k - 1][b] >> 8) ^ slice[0][slice[k - 1][b] & 0xff];
}

uint32_t ext4fs_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&slice_once, slice_build);
	for (; len >= 8; p += 8, len -= 8) {
		uint32_t lo = crc ^ le32_load(p);
		uint32_t hi = le32_load(p + 4);

		crc = slice[7][lo & 0xff] ^ slice[6][(lo >> 8) & 0xff] ^
		      slice[5][(lo >> 16) & 0xff] ^ slice[4][lo >> 24] ^
		      slice[3][hi & 0xff] ^ slice[2][(hi >> 8) & 0xff] ^
		      slice[1][(hi >> 16) & 0xff] ^ slice[0][hi >> 24];
	}
	for (; len > 0; p++, len--)
		crc = slice[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
	return crc;
}

#ifdef CRC32C_HW
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t r = crc;

	/* Byte steps up to an 8-byte boundary, then whole words, then the tail. */
	for (; len > 0 && ((uintptr_t)p & 7) != 0; p++, len--)
		r = _mm_crc32_u8((uint32_t)r, *p);
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t word;

		memcpy(&word, p, sizeof(word));
		r = _mm_crc32_u64(r, word);
	}
	for (; len > 0; p++, len--)
		r = _mm_crc32_u8((uint32_t)r, *p);
	return (uint32_t)r;
}

/* 0 = not probed yet, 1 = table version, 2 = crc32 instruction. */
static atomic_int crc32c_impl;
#endif

int ext4fs_crc32c_hw_available(void)
{
#ifdef CRC32C_HW
	int impl = atomic_load_explicit(&crc32c_impl, memory_order_relaxed);

	if (impl == 0) {
		/* Probing is idempotent, so racing first callers agree. */
		__builtin_cpu_init();
		impl = __builtin_cpu_supports("sse4.2") ? 2 : 1;
		atomic_store_explicit(&crc32c_impl, impl, memory_order_relaxed);
	}
	return impl == 2;
#else
	return 0;
#endif
}

uint32_t ext4fs_crc32c(uint32_t crc, const void *buf, size_t len)
{
#ifdef CRC32C_HW
	if (ext4fs_crc32c_hw_available())
		return crc32c_hw(crc, buf, len);
#endif
	return ext4fs_crc32c_sw(crc, buf, len);
}
