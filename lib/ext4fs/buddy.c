/*
 * buddy.c - per-group buddy bitmaps for the block allocator (see
 * buddy_internal.h for the representation and its invariants).
 *
 * Everything works on 64-bit words: building a group is about
 * blocks_per_group / 32 word operations, and an update touches, at each
 * order, only the words covering the changed range (stopping at the first
 * order where nothing changed).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "buddy_internal.h"

static inline unsigned popcount64(uint64_t w)
{
	return (unsigned)__builtin_popcountll(w);
}

static inline unsigned ctz64(uint64_t w)
{
	return (unsigned)__builtin_ctzll(w);
}

/* Bit i of the result is bit 2i AND bit 2i+1 of w: one order up. */
static inline uint64_t pairs_and(uint64_t w)
{
	uint64_t x = w & (w >> 1) & 0x5555555555555555ULL;

	x = (x | (x >> 1)) & 0x3333333333333333ULL;
	x = (x | (x >> 2)) & 0x0f0f0f0f0f0f0f0fULL;
	x = (x | (x >> 4)) & 0x00ff00ff00ff00ffULL;
	x = (x | (x >> 8)) & 0x0000ffff0000ffffULL;
	x = (x | (x >> 16)) & 0x00000000ffffffffULL;
	return x;
}

/* Each of the 32 low bits of x doubled: one order down. */
static inline uint64_t spread(uint64_t x)
{
	x &= 0xffffffffULL;
	x = (x | (x << 16)) & 0x0000ffff0000ffffULL;
	x = (x | (x << 8)) & 0x00ff00ff00ff00ffULL;
	x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0fULL;
	x = (x | (x << 2)) & 0x3333333333333333ULL;
	x = (x | (x << 1)) & 0x5555555555555555ULL;
	return x | (x << 1);
}

void ext4fs__buddy_geom_init(struct buddy_geom *bg, uint32_t blocks_per_group)
{
	uint32_t size = 1;
	unsigned orders = 1;

	memset(bg, 0, sizeof(*bg));
	while (size < blocks_per_group && orders < BUDDY_MAX_ORDERS) {
		size <<= 1;
		orders++;
	}
	bg->bits = blocks_per_group;
	bg->orders = orders;
	for (unsigned k = 0; k < orders; k++) {
		uint32_t bits = size >> k;
		bg->words[k] = bits < 64 ? 1 : bits / 64;
		bg->off[k] = bg->total;
		bg->total += bg->words[k];
	}
}

static inline uint64_t *order_map(const struct buddy *b, const struct buddy_geom *bg, unsigned k)
{
	return b->map + bg->off[k];
}

/* Word j of order k (>= 1), from order k - 1. */
static inline uint64_t derive_word(const struct buddy *b, const struct buddy_geom *bg, unsigned k,
				   uint32_t j)
{
	const uint64_t *prev = order_map(b, bg, k - 1);
	uint64_t w = pairs_and(prev[2 * j]);

	if (2 * j + 1 < bg->words[k - 1])
		w |= pairs_and(prev[2 * j + 1]) << 32;
	return w;
}

/* Order-0 positions that start a run (set, with the bit before clear). */
static inline uint64_t starts_word(const uint64_t *m, uint32_t j)
{
	uint64_t carry = j ? m[j - 1] >> 63 : 0;

	return m[j] & ~((m[j] << 1) | carry);
}

/* Run starts at order-0 positions lo..hi (hi clamped to the map). */
static uint32_t count_starts(const uint64_t *m, uint32_t words, uint32_t lo, uint32_t hi)
{
	uint32_t n = 0;

	if (hi >= words * 64)
		hi = words * 64 - 1;
	for (uint32_t j = lo >> 6; j <= hi >> 6; j++) {
		uint64_t s = starts_word(m, j);
		if (j == lo >> 6)
			s &= ~0ULL << (lo & 63);
		if (j == hi >> 6 && (hi & 63) != 63)
			s &= (2ULL << (hi & 63)) - 1;
		n += popcount64(s);
	}
	return n;
}

static void set_largest(struct buddy *b, const struct buddy_geom *bg)
{
	b->largest = -1;
	for (unsigned k = bg->orders; k-- > 0;)
		if (b->count[k]) {
			b->largest = (int)k;
			break;
		}
}

/* Set (value 1) or clear order-0 bits [first, first + count); returns how many changed. */
static uint32_t set_bits0(uint64_t *m, uint32_t first, uint32_t count, int value)
{
	uint32_t last = first + count - 1, changed = 0;

	for (uint32_t j = first >> 6; j <= last >> 6; j++) {
		uint64_t mask = ~0ULL;
		if (j == first >> 6)
			mask &= ~0ULL << (first & 63);
		if (j == last >> 6 && (last & 63) != 63)
			mask &= (2ULL << (last & 63)) - 1;
		uint64_t old = m[j];
		m[j] = value ? old | mask : old & ~mask;
		changed += popcount64(old ^ m[j]);
	}
	return changed;
}

/* Order 0 from the block bitmap: available = not in use, nothing past nbits. */
static void load_order0(uint64_t *m, uint32_t words, const unsigned char *used_bits, uint32_t nbits)
{
	uint32_t nbytes = (nbits + 7) / 8;

	for (uint32_t j = 0; j < words; j++) {
		uint64_t w = 0;
		for (uint32_t i = 0; i < 8 && j * 8 + i < nbytes; i++)
			w |= (uint64_t)used_bits[j * 8 + i] << (8 * i);
		w = ~w;
		if ((uint64_t)j * 64 + 64 > nbits)
			w = (uint64_t)j * 64 >= nbits ? 0 : w & ((1ULL << (nbits - j * 64)) - 1);
		m[j] = w;
	}
}

/* Higher orders and every summary from order 0. */
static void derive_all(struct buddy *b, const struct buddy_geom *bg)
{
	const uint64_t *m0 = order_map(b, bg, 0);

	for (unsigned k = 0; k < bg->orders; k++) {
		uint64_t *m = order_map(b, bg, k);
		uint32_t n = 0;
		for (uint32_t j = 0; j < bg->words[k]; j++) {
			if (k)
				m[j] = derive_word(b, bg, k, j);
			n += popcount64(m[j]);
		}
		b->count[k] = n;
	}
	b->free = b->count[0];
	b->frags = count_starts(m0, bg->words[0], 0, bg->words[0] * 64 - 1);
	set_largest(b, bg);
}

int ext4fs__buddy_build(struct buddy *b, const struct buddy_geom *bg, const unsigned char *used_bits,
			uint32_t nbits)
{
	memset(b, 0, sizeof(*b));
	b->map = malloc((size_t)bg->total * sizeof(uint64_t));
	if (!b->map)
		return EXT4FS_E_NO_MEMORY;
	b->nbits = nbits;
	load_order0(b->map, bg->words[0], used_bits, nbits);
	derive_all(b, bg);
	return 0;
}

void ext4fs__buddy_release(struct buddy *b)
{
	free(b->map);
	memset(b, 0, sizeof(*b));
	b->largest = -1;
}

uint32_t ext4fs__buddy_update(struct buddy *b, const struct buddy_geom *bg, uint32_t first,
			      uint32_t count, int busy)
{
	uint64_t *m0 = order_map(b, bg, 0);
	uint32_t last, before, changed;

	if (count == 0 || first >= b->nbits)
		return 0;
	if (count > b->nbits - first)
		count = b->nbits - first;
	last = first + count - 1;
	before = count_starts(m0, bg->words[0], first, last + 1);
	changed = set_bits0(m0, first, count, !busy);
	if (!changed)
		return 0;
	b->frags = b->frags - before + count_starts(m0, bg->words[0], first, last + 1);
	b->free = busy ? b->free - changed : b->free + changed;
	b->count[0] = b->free;
	for (unsigned k = 1; k < bg->orders; k++) {
		uint64_t *m = order_map(b, bg, k);
		int any = 0;
		for (uint32_t j = (first >> k) >> 6; j <= (last >> k) >> 6; j++) {
			uint64_t w = derive_word(b, bg, k, j);
			if (w == m[j])
				continue;
			b->count[k] = b->count[k] - popcount64(m[j]) + popcount64(w);
			m[j] = w;
			any = 1;
		}
		if (!any)
			break;
	}
	set_largest(b, bg);
	return changed;
}

int ext4fs__buddy_test(const struct buddy *b, uint32_t i)
{
	return i < b->nbits && ((b->map[i >> 6] >> (i & 63)) & 1);
}

uint32_t ext4fs__buddy_run_at(const struct buddy *b, uint32_t i, uint32_t max)
{
	uint32_t n = 0;

	while (i < b->nbits && n < max) {
		uint64_t w = ~(b->map[i >> 6] >> (i & 63));
		uint32_t room = 64 - (i & 63);
		uint32_t run = w ? ctz64(w) : 64;
		if (run > room)
			run = room;
		n += run;
		i += run;
		if (run < room)
			break;
	}
	return n < max ? n : max;
}

int ext4fs__buddy_next_run(const struct buddy *b, uint32_t from, uint32_t *start, uint32_t *len)
{
	uint32_t words = (b->nbits + 63) / 64, j = from >> 6;
	uint64_t w;

	if (from >= b->nbits)
		return -1;
	w = b->map[j] & (~0ULL << (from & 63));
	while (!w) {
		if (++j >= words)
			return -1;
		w = b->map[j];
	}
	*start = j * 64 + ctz64(w);
	*len = ext4fs__buddy_run_at(b, *start, b->nbits);
	return 0;
}

int ext4fs__buddy_find_chunk(const struct buddy *b, const struct buddy_geom *bg, unsigned order,
			     uint32_t from, uint32_t *start)
{
	for (unsigned o = order; o < bg->orders; o++) {
		uint32_t maximal = b->count[o] - (o + 1 < bg->orders ? 2 * b->count[o + 1] : 0);
		const uint64_t *m = order_map(b, bg, o);
		const uint64_t *up = o + 1 < bg->orders ? order_map(b, bg, o + 1) : NULL;
		uint32_t words = bg->words[o], j0 = ((from >> o) >> 6) % words;

		if (!maximal)
			continue;
		for (uint32_t t = 0; t < words; t++) {
			uint32_t j = (j0 + t) % words;
			uint64_t w = m[j];
			if (up)
				w &= ~spread(up[j >> 1] >> ((j & 1) * 32));
			if (w) {
				*start = (j * 64 + ctz64(w)) << o;
				return 0;
			}
		}
	}
	return -1;
}

uint32_t ext4fs__buddy_run_bound(const struct buddy *b, const struct buddy_geom *bg)
{
	uint32_t bound;

	if (b->largest < 0)
		return 0;
	/* No free chunk of order largest + 1: a run spans at most two partial ones. */
	if ((unsigned)b->largest + 1 >= bg->orders)
		return b->nbits;
	bound = (4U << b->largest) - 2;
	return bound < b->nbits ? bound : b->nbits;
}

int ext4fs__buddy_verify(const struct buddy *b, const struct buddy_geom *bg, const unsigned char *used_bits,
			 const uint32_t *busy, unsigned nbusy)
{
	struct buddy ref;
	int err = ext4fs__buddy_build(&ref, bg, used_bits, b->nbits), differ = 0;

	if (err)
		return err;
	for (unsigned i = 0; i < nbusy; i++)
		if (busy[2 * i + 1] && busy[2 * i] < ref.nbits)
			set_bits0(ref.map, busy[2 * i],
				  busy[2 * i + 1] < ref.nbits - busy[2 * i] ? busy[2 * i + 1]
									 : ref.nbits - busy[2 * i], 0);
	derive_all(&ref, bg);
	if (memcmp(ref.map, b->map, (size_t)bg->total * sizeof(uint64_t)) ||
	    memcmp(ref.count, b->count, sizeof(ref.count)) || ref.free != b->free ||
	    ref.frags != b->frags || ref.largest != b->largest)
		differ = 1;
	ext4fs__buddy_release(&ref);
	return differ;
}
