/*
 * maps.c - paged bit and counter maps (see maps.h).
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "maps.h"

static uint64_t words_per_page(unsigned shift)
{
	return (1ULL << shift) / 64;
}

static int paged_init(struct paged *p, uint64_t limit, unsigned page_shift, size_t bytes_per_number_x8)
{
	memset(p, 0, sizeof(*p));
	if (page_shift < 6 || page_shift > 30)
		return -EINVAL;
	p->limit = limit;
	p->page_shift = page_shift;
	p->page_bytes = (size_t)((1ULL << page_shift) * bytes_per_number_x8 / 8);
	p->npages = (limit + (1ULL << page_shift) - 1) >> page_shift;
	if (p->npages) {
		p->pages = calloc(p->npages, sizeof(*p->pages));
		if (!p->pages)
			return -ENOMEM;
	}
	return 0;
}

static void paged_free(struct paged *p)
{
	for (uint64_t i = 0; i < p->npages; i++)
		free(p->pages[i]);
	free(p->pages);
	memset(p, 0, sizeof(*p));
}

/* Page pg, allocated zeroed when missing; NULL on ENOMEM. */
static void *paged_page(struct paged *p, uint64_t pg)
{
	if (!p->pages[pg]) {
		p->pages[pg] = calloc(1, p->page_bytes);
		if (!p->pages[pg])
			return NULL;
		p->pages_used++;
	}
	return p->pages[pg];
}

static size_t paged_bytes(const struct paged *p)
{
	return (size_t)(p->npages * sizeof(*p->pages) + p->pages_used * p->page_bytes);
}

int bitmap_paged_init(struct bitmap_paged *m, uint64_t limit, unsigned page_shift)
{
	return paged_init(&m->p, limit, page_shift, 1);
}

void bitmap_paged_free(struct bitmap_paged *m)
{
	paged_free(&m->p);
}

/* The bit page holding number n (NULL: missing). */
static uint64_t *bit_page(const struct bitmap_paged *m, uint64_t pg)
{
	return m->p.pages[pg];
}

int bitmap_paged_test(const struct bitmap_paged *m, uint64_t n)
{
	if (n >= m->p.limit)
		return 0;
	const uint64_t *pg = bit_page(m, n >> m->p.page_shift);
	uint64_t off = n & ((1ULL << m->p.page_shift) - 1);

	return pg ? (int)((pg[off / 64] >> (off % 64)) & 1) : 0;
}

/* Bits [lo, hi) of a 64-bit word, lo < hi <= 64. */
static uint64_t word_mask(unsigned lo, unsigned hi)
{
	uint64_t upper = hi == 64 ? ~0ULL : (1ULL << hi) - 1;

	return upper & ~((1ULL << lo) - 1);
}

enum range_op { RANGE_SET, RANGE_CLEAR, RANGE_COUNT };

/*
 * Apply op to [n, n + count) (already within limit), word by word.  Returns
 * the number of bits that were set before (SET, COUNT), or -ENOMEM when
 * SET could not allocate a page.  Missing pages are created only by SET.
 */
static int64_t range_walk(struct bitmap_paged *m, uint64_t n, uint64_t count, enum range_op op)
{
	uint64_t page_bits = 1ULL << m->p.page_shift;
	int64_t set_before = 0;

	while (count) {
		uint64_t pg = n >> m->p.page_shift, off = n & (page_bits - 1);
		uint64_t take = count < page_bits - off ? count : page_bits - off;
		uint64_t *words = op == RANGE_SET ? paged_page(&m->p, pg) : bit_page(m, pg);
		if (!words && op == RANGE_SET)
			return -ENOMEM;
		for (uint64_t b = off, end = off + take; words && b < end;) {
			unsigned lo = (unsigned)(b % 64);
			unsigned hi = end - b + lo >= 64 ? 64 : (unsigned)(end - b + lo);
			uint64_t mask = word_mask(lo, hi), *w = &words[b / 64];
			set_before += __builtin_popcountll(*w & mask);
			if (op == RANGE_SET)
				*w |= mask;
			else if (op == RANGE_CLEAR)
				*w &= ~mask;
			b += hi - lo;
		}
		n += take;
		count -= take;
	}
	return set_before;
}

int64_t bitmap_paged_set_range(struct bitmap_paged *m, uint64_t n, uint64_t count)
{
	if (n > m->p.limit || count > m->p.limit - n)
		return -ERANGE;
	return range_walk(m, n, count, RANGE_SET);
}

void bitmap_paged_clear_range(struct bitmap_paged *m, uint64_t n, uint64_t count)
{
	if (n >= m->p.limit)
		return;
	range_walk(m, n, count < m->p.limit - n ? count : m->p.limit - n, RANGE_CLEAR);
}

uint64_t bitmap_paged_count(const struct bitmap_paged *m, uint64_t n, uint64_t count)
{
	if (n >= m->p.limit)
		return 0;
	/* COUNT neither allocates nor writes, so the map is only read. */
	return (uint64_t)range_walk((struct bitmap_paged *)m, n,
				    count < m->p.limit - n ? count : m->p.limit - n, RANGE_COUNT);
}

int bitmap_paged_find_clear_run(const struct bitmap_paged *m, uint64_t first, uint64_t finish, uint64_t count,
				uint64_t limit, uint64_t *start)
{
	uint64_t b = first;

	if (count == 0)
		return -1;
	while (b < finish && b < limit && count <= limit - b) {
		uint64_t set = bitmap_paged_next_set(m, b);
		if (set >= b + count) {
			*start = b;
			return 0;
		}
		/* Every start up to the set number would cover it. */
		b = bitmap_paged_next_clear(m, set);
	}
	return -1;
}

uint64_t bitmap_paged_next_set(const struct bitmap_paged *m, uint64_t from)
{
	uint64_t page_bits = 1ULL << m->p.page_shift, words = words_per_page(m->p.page_shift);

	while (from < m->p.limit) {
		uint64_t pg = from >> m->p.page_shift, off = from & (page_bits - 1);
		const uint64_t *p = bit_page(m, pg);
		for (uint64_t w = off / 64; p && w < words; w++) {
			uint64_t bits = p[w];
			if (w == off / 64)
				bits &= ~((1ULL << (off % 64)) - 1);
			if (bits) {
				uint64_t n = (pg << m->p.page_shift) + w * 64 + (uint64_t)__builtin_ctzll(bits);
				return n < m->p.limit ? n : m->p.limit;
			}
		}
		from = (pg + 1) << m->p.page_shift;
	}
	return m->p.limit;
}

uint64_t bitmap_paged_next_clear(const struct bitmap_paged *m, uint64_t from)
{
	uint64_t page_bits = 1ULL << m->p.page_shift, words = words_per_page(m->p.page_shift);

	while (from < m->p.limit) {
		uint64_t pg = from >> m->p.page_shift, off = from & (page_bits - 1);
		const uint64_t *p = bit_page(m, pg);
		if (!p)
			return from;
		for (uint64_t w = off / 64; w < words; w++) {
			uint64_t clear = ~p[w];
			if (w == off / 64)
				clear &= ~((1ULL << (off % 64)) - 1);
			if (clear) {
				uint64_t n = (pg << m->p.page_shift) + w * 64 + (uint64_t)__builtin_ctzll(clear);
				return n < m->p.limit ? n : m->p.limit;
			}
		}
		from = (pg + 1) << m->p.page_shift;
	}
	return m->p.limit;
}

int64_t bitmap_paged_merge(struct bitmap_paged *dst, const struct bitmap_paged *src,
			   struct bitmap_paged *dup)
{
	uint64_t words = words_per_page(dst->p.page_shift);
	int64_t both = 0;

	if (dst->p.limit != src->p.limit || dst->p.page_shift != src->p.page_shift ||
	    (dup && (dup->p.limit != dst->p.limit || dup->p.page_shift != dst->p.page_shift)))
		return -EINVAL;
	for (uint64_t pg = 0; pg < src->p.npages; pg++) {
		const uint64_t *s = bit_page(src, pg);
		if (!s)
			continue;
		uint64_t *d = paged_page(&dst->p, pg);
		if (!d)
			return -ENOMEM;
		for (uint64_t w = 0; w < words; w++) {
			uint64_t common = d[w] & s[w];
			if (common) {
				both += __builtin_popcountll(common);
				uint64_t *dp = dup ? paged_page(&dup->p, pg) : NULL;
				if (dup && !dp)
					return -ENOMEM;
				if (dp)
					dp[w] |= common;
			}
			d[w] |= s[w];
		}
	}
	return both;
}

size_t bitmap_paged_bytes(const struct bitmap_paged *m)
{
	return paged_bytes(&m->p);
}

int counter_paged_init(struct counter_paged *c, uint64_t limit, unsigned page_shift)
{
	return paged_init(&c->p, limit, page_shift, 16);
}

void counter_paged_free(struct counter_paged *c)
{
	paged_free(&c->p);
}

uint16_t counter_paged_get(const struct counter_paged *c, uint64_t n)
{
	if (n >= c->p.limit)
		return 0;
	const uint16_t *pg = c->p.pages[n >> c->p.page_shift];

	return pg ? pg[n & ((1ULL << c->p.page_shift) - 1)] : 0;
}

int counter_paged_set(struct counter_paged *c, uint64_t n, uint16_t v)
{
	if (n >= c->p.limit)
		return -ERANGE;
	if (!v && !c->p.pages[n >> c->p.page_shift])
		return 0;
	uint16_t *pg = paged_page(&c->p, n >> c->p.page_shift);
	if (!pg)
		return -ENOMEM;
	pg[n & ((1ULL << c->p.page_shift) - 1)] = v;
	return 0;
}

int counter_paged_inc(struct counter_paged *c, uint64_t n)
{
	if (n >= c->p.limit)
		return -ERANGE;
	uint16_t *pg = paged_page(&c->p, n >> c->p.page_shift);
	if (!pg)
		return -ENOMEM;
	uint16_t *v = &pg[n & ((1ULL << c->p.page_shift) - 1)];
	if (*v < UINT16_MAX)
		(*v)++;
	return *v;
}

size_t counter_paged_bytes(const struct counter_paged *c)
{
	return paged_bytes(&c->p);
}

int counter_paged_merge(struct counter_paged *dst, const struct counter_paged *src)
{
	uint64_t per_page = 1ULL << src->p.page_shift;

	if (dst->p.limit != src->p.limit || dst->p.page_shift != src->p.page_shift)
		return -EINVAL;
	for (uint64_t pg = 0; pg < src->p.npages; pg++) {
		const uint16_t *s = src->p.pages[pg];
		uint16_t *d = NULL;
		if (!s)
			continue;
		for (uint64_t i = 0; i < per_page; i++) {
			if (!s[i])
				continue;
			if (!d && !(d = paged_page(&dst->p, pg)))
				return -ENOMEM;
			d[i] = s[i];
		}
	}
	return 0;
}

void range_set_init(struct range_set *s)
{
	memset(s, 0, sizeof(*s));
}

void range_set_free(struct range_set *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}

int range_set_add(struct range_set *s, uint64_t start, uint64_t count)
{
	if (!count)
		return 0;
	if (start + count < start)
		return -ERANGE;
	if (s->n == s->cap) {
		struct block_range *grown = ext4fs_array_grow(s->r, &s->cap, s->n + 1, sizeof(*grown), 64);
		if (!grown)
			return -ENOMEM;
		s->r = grown;
	}
	s->r[s->n++] = (struct block_range){ start, start + count };
	s->sealed = 0;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct block_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void range_set_seal(struct range_set *s)
{
	size_t kept = 0;

	if (s->n > 1)
		qsort(s->r, s->n, sizeof(*s->r), cmp_range);
	for (size_t i = 0; i < s->n; i++) {
		if (kept && s->r[i].start <= s->r[kept - 1].end) {
			if (s->r[i].end > s->r[kept - 1].end)
				s->r[kept - 1].end = s->r[i].end;
			continue;
		}
		s->r[kept++] = s->r[i];
	}
	s->n = kept;
	s->sealed = 1;
}

int range_set_test(const struct range_set *s, uint64_t n)
{
	size_t lo = 0, hi = s->n;

	if (!s->sealed) {
		/* Slow but right: a set not sealed yet must not answer "no" to what it holds. */
		for (size_t i = 0; i < s->n; i++)
			if (n >= s->r[i].start && n < s->r[i].end)
				return 1;
		return 0;
	}
	/* The last range starting at or before n is the only one that can hold it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->r[mid].start <= n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && n < s->r[lo - 1].end;
}

size_t range_set_bytes(const struct range_set *s)
{
	return s->cap * sizeof(*s->r);
}
