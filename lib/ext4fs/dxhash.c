/*
 * dxhash.c - directory index (htree) name hashes.
 *
 * Every version works on a 4-word state that starts as the file system's
 * hash seed (or the MD4 initial values when there is none) and produces a
 * 32-bit major hash plus, for most versions, a 32-bit minor hash:
 *
 *   legacy    the original dx "hack" hash; no seed, no minor hash.
 *   half_md4  the name in 32-byte chunks, each mixed in by three MD4-style
 *             rounds of eight steps; major = state[1], minor = state[2].
 *   tea       the name in 16-byte chunks, each used as the key of 16 TEA
 *             cycles in Davies-Meyer fashion; major = state[0], minor = state[1].
 *   siphash   SipHash-2-4 keyed with the 16 seed bytes; major = high half,
 *             minor = low half.  Only meaningful with a real key.
 *
 * The signed/unsigned variants differ only in how a name byte >= 0x80 is
 * widened to 32 bits before it is mixed in (sign- or zero-extended), which
 * mirrors whether the original C code ran with signed or unsigned char.
 */
#include "config.h"
#include <stdint.h>
#include <string.h>
#include "ext4fs/dxhash.h"
#include "ext4fs/errors.h"
#include "ext4fs/super.h"
#include "ondisk_le.h"

/* The kernel's EXT4_HTREE_EOF_32BIT; twice it must never be a real hash. */
#define HTREE_EOF_32 0x7fffffffu

static const uint32_t default_seed[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };

static int seed_is_set(const uint32_t seed[4])
{
	return seed && (seed[0] | seed[1] | seed[2] | seed[3]) != 0;
}

/* A name byte as a 32-bit value, sign-extended for the signed variants. */
static uint32_t widen(uint8_t b, int is_unsigned)
{
	if (!is_unsigned && b >= 0x80)
		return 0xffffff00u | b;
	return b;
}

static uint32_t rol32(uint32_t x, unsigned s)
{
	return (x << s) | (x >> (32 - s));
}

static uint64_t rol64(uint64_t x, unsigned s)
{
	return (x << s) | (x >> (64 - s));
}

/* ---- legacy ---- */

static uint32_t legacy_hash(const uint8_t *s, size_t len, int is_unsigned)
{
	uint32_t prev = 0x37abe8f9, cur = 0x12a3fe2d;

	for (size_t i = 0; i < len; i++) {
		uint32_t next = prev + (cur ^ (widen(s[i], is_unsigned) * 7152373u));

		if (next & 0x80000000u)
			next -= 0x7fffffffu;
		prev = cur;
		cur = next;
	}
	return cur << 1;
}

/*
 * Turn the name bytes at s (remaining bytes left in the whole name) into
 * nwords message words.  Every word starts as a filler made of the low
 * bits of remaining and has name bytes shifted in from the right, so a
 * short final word keeps part of the filler in its high bytes and words
 * past the end of the name are pure filler.
 */
static void pack_words(const uint8_t *s, size_t remaining, int is_unsigned, uint32_t *w,
		       size_t nwords)
{
	uint32_t half = (uint32_t)remaining | ((uint32_t)remaining << 8);
	uint32_t filler = half | (half << 16);
	size_t avail = remaining < 4 * nwords ? remaining : 4 * nwords;

	for (size_t i = 0; i < nwords; i++) {
		uint32_t v = filler;

		for (size_t k = 4 * i; k < 4 * i + 4 && k < avail; k++)
			v = (v << 8) + widen(s[k], is_unsigned);
		w[i] = v;
	}
}

/* ---- half MD4 ---- */

static uint32_t md4_select(uint32_t x, uint32_t y, uint32_t z)
{
	return z ^ (x & (y ^ z));
}

static uint32_t md4_majority(uint32_t x, uint32_t y, uint32_t z)
{
	return (x & y) | (x & z) | (y & z);
}

static uint32_t md4_parity(uint32_t x, uint32_t y, uint32_t z)
{
	return x ^ y ^ z;
}

/* MD4's three rounds, cut down to eight steps each over an 8-word block. */
static void half_md4_mix(uint32_t st[4], const uint32_t in[8])
{
	static const uint8_t word[3][8] = {
		{ 0, 1, 2, 3, 4, 5, 6, 7 },
		{ 1, 3, 5, 7, 0, 2, 4, 6 },
		{ 3, 7, 2, 6, 1, 5, 0, 4 },
	};
	static const uint8_t shift[3][4] = { { 3, 7, 11, 19 }, { 3, 5, 9, 13 }, { 3, 9, 11, 15 } };
	static const uint32_t add[3] = { 0, 0x5a827999, 0x6ed9eba1 };
	uint32_t (*const fn[3])(uint32_t, uint32_t, uint32_t) = { md4_select, md4_majority,
								  md4_parity };
	uint32_t v[4] = { st[0], st[1], st[2], st[3] };

	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 8; i++) {
			/* Steps update a, d, c, b, a, ... from the other three. */
			int t = (4 - (i & 3)) & 3;
			uint32_t f = fn[r](v[(t + 1) & 3], v[(t + 2) & 3], v[(t + 3) & 3]);

			v[t] = rol32(v[t] + f + in[word[r][i]] + add[r], shift[r][i & 3]);
		}
	}
	for (int i = 0; i < 4; i++)
		st[i] += v[i];
}

/* ---- TEA ---- */

static void tea_mix(uint32_t st[4], const uint32_t key[4])
{
	uint32_t y = st[0], z = st[1], sum = 0;

	for (int cycle = 0; cycle < 16; cycle++) {
		sum += 0x9e3779b9u;
		y += ((z << 4) + key[0]) ^ (z + sum) ^ ((z >> 5) + key[1]);
		z += ((y << 4) + key[2]) ^ (y + sum) ^ ((y >> 5) + key[3]);
	}
	st[0] += y;
	st[1] += z;
}

/* ---- SipHash-2-4 ---- */

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rol64(v[1], 13) ^ v[0];
	v[0] = rol64(v[0], 32);
	v[2] += v[3];
	v[3] = rol64(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rol64(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rol64(v[1], 17) ^ v[2];
	v[2] = rol64(v[2], 32);
}

static void sip_absorb(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

static uint64_t siphash24(uint64_t k0, uint64_t k1, const uint8_t *m, size_t len)
{
	uint64_t v[4] = {
		k0 ^ 0x736f6d6570736575ull,
		k1 ^ 0x646f72616e646f6dull,
		k0 ^ 0x6c7967656e657261ull,
		k1 ^ 0x7465646279746573ull,
	};
	size_t whole = len - len % 8;
	uint64_t last = (uint64_t)(len & 0xff) << 56;

	for (size_t i = 0; i < whole; i += 8)
		sip_absorb(v, le64_load(m + i));
	for (size_t i = whole; i < len; i++)
		last |= (uint64_t)m[i] << (8 * (i - whole));
	sip_absorb(v, last);
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

int ext4fs_dx_hash(int version, const char *name, size_t len, const uint32_t seed[4],
		   uint32_t *hash, uint32_t *minor_hash)
{
	const uint8_t *s = (const uint8_t *)name;
	uint32_t st[4], in[8], major, minor = 0;
	int is_unsigned = 0;

	if (hash)
		*hash = 0;
	if (minor_hash)
		*minor_hash = 0;
	if (!hash || (!name && len))
		return EXT4FS_E_INVALID_ARG;
	memcpy(st, seed_is_set(seed) ? seed : default_seed, sizeof(st));

	switch (version) {
	case EXT4FS_HASH_LEGACY_UNSIGNED:
		is_unsigned = 1;
		/* fall through */
	case EXT4FS_HASH_LEGACY:
		major = legacy_hash(s, len, is_unsigned);
		break;
	case EXT4FS_HASH_HALF_MD4_UNSIGNED:
		is_unsigned = 1;
		/* fall through */
	case EXT4FS_HASH_HALF_MD4:
		for (size_t off = 0; off < len; off += 32) {
			pack_words(s + off, len - off, is_unsigned, in, 8);
			half_md4_mix(st, in);
		}
		major = st[1];
		minor = st[2];
		break;
	case EXT4FS_HASH_TEA_UNSIGNED:
		is_unsigned = 1;
		/* fall through */
	case EXT4FS_HASH_TEA:
		for (size_t off = 0; off < len; off += 16) {
			pack_words(s + off, len - off, is_unsigned, in, 4);
			tea_mix(st, in);
		}
		major = st[0];
		minor = st[1];
		break;
	case EXT4FS_HASH_SIPHASH: {
		uint64_t h;

		if (!seed_is_set(seed))
			return EXT4FS_E_INVALID_ARG;
		/* The key is the seed's 16 bytes as stored on disk (little-endian words). */
		h = siphash24((uint64_t)seed[0] | (uint64_t)seed[1] << 32,
			      (uint64_t)seed[2] | (uint64_t)seed[3] << 32, s, len);
		major = (uint32_t)(h >> 32);
		minor = (uint32_t)h;
		break;
	}
	default:
		return EXT4FS_E_UNKNOWN_HASH;
	}

	/*
	 * htree keeps the low bit for collision chaining, and readdir uses
	 * (HTREE_EOF_32 << 1) as its end-of-directory position, so a name that
	 * lands there is moved one step down, as the kernel does.
	 */
	major &= ~1u;
	if (major == HTREE_EOF_32 << 1)
		major = (HTREE_EOF_32 - 1) << 1;
	*hash = major;
	if (minor_hash)
		*minor_hash = minor;
	return 0;
}

int ext4fs_dx_hash_version_effective(int version, uint32_t s_flags)
{
	if (version >= EXT4FS_HASH_LEGACY && version <= EXT4FS_HASH_TEA &&
	    (s_flags & EXT4FS_FLAGS_UNSIGNED_HASH))
		return version + (EXT4FS_HASH_LEGACY_UNSIGNED - EXT4FS_HASH_LEGACY);
	return version;
}

static const char *const hash_names[] = {
	[EXT4FS_HASH_LEGACY] = "legacy",
	[EXT4FS_HASH_HALF_MD4] = "half_md4",
	[EXT4FS_HASH_TEA] = "tea",
	[EXT4FS_HASH_LEGACY_UNSIGNED] = "legacy_unsigned",
	[EXT4FS_HASH_HALF_MD4_UNSIGNED] = "half_md4_unsigned",
	[EXT4FS_HASH_TEA_UNSIGNED] = "tea_unsigned",
	[EXT4FS_HASH_SIPHASH] = "siphash",
};

#define HASH_NAME_COUNT ((int)(sizeof(hash_names) / sizeof(hash_names[0])))

const char *ext4fs_dx_hash_name(int version)
{
	if (version < 0 || version >= HASH_NAME_COUNT)
		return NULL;
	return hash_names[version];
}

/* ASCII-only case-insensitive equality; independent of the C locale. */
static int same_name(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;

		if (ca >= 'A' && ca <= 'Z')
			ca = (unsigned char)(ca - 'A' + 'a');
		if (cb >= 'A' && cb <= 'Z')
			cb = (unsigned char)(cb - 'A' + 'a');
		if (ca != cb)
			return 0;
		if (ca == '\0')
			return 1;
	}
}

int ext4fs_dx_hash_by_name(const char *name)
{
	if (!name)
		return -1;
	for (int v = 0; v < HASH_NAME_COUNT; v++)
		if (same_name(name, hash_names[v]))
			return v;
	return -1;
}
