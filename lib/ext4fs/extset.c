/*
 * extset.c - sorted, merged extents of block numbers.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/errors.h"
#include "extset.h"

size_t ext4fs__extset_first_after(const struct extset *s, uint64_t blk)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->r[mid].start + s->r[mid].len <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ext4fs__extset_add(struct extset *s, uint64_t start, uint64_t len)
{
	uint64_t end = start + len;
	size_t i, j;

	if (len == 0)
		return 0;
	/* Ranges from i to j-1 overlap or touch [start, end) and are absorbed. */
	i = ext4fs__extset_first_after(s, start > 0 ? start - 1 : 0);
	j = i;
	while (j < s->n && s->r[j].start <= end)
		j++;
	if (i == j) {
		if (s->n == s->cap) {
			struct extset_range *r = ext4fs_array_grow(s->r, &s->cap, s->n + 1, sizeof(*r), 64);
			if (!r)
				return EXT4FS_E_NO_MEMORY;
			s->r = r;
		}
		memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
		s->r[i].start = start;
		s->r[i].len = len;
		s->n++;
		return 0;
	}
	if (s->r[i].start < start)
		start = s->r[i].start;
	if (s->r[j - 1].start + s->r[j - 1].len > end)
		end = s->r[j - 1].start + s->r[j - 1].len;
	s->r[i].start = start;
	s->r[i].len = end - start;
	memmove(&s->r[i + 1], &s->r[j], (s->n - j) * sizeof(*s->r));
	s->n -= j - i - 1;
	return 0;
}

int ext4fs__extset_is_clear(const struct extset *s, uint64_t start, uint64_t len)
{
	size_t i = ext4fs__extset_first_after(s, start);

	return i == s->n || s->r[i].start >= start + len;
}

uint64_t ext4fs__extset_count(const struct extset *s, uint64_t start, uint64_t len)
{
	uint64_t end = start + len, count = 0;

	for (size_t i = ext4fs__extset_first_after(s, start); i < s->n && s->r[i].start < end; i++) {
		uint64_t a = s->r[i].start > start ? s->r[i].start : start;
		uint64_t b = s->r[i].start + s->r[i].len < end ? s->r[i].start + s->r[i].len : end;
		count += b - a;
	}
	return count;
}

uint64_t ext4fs__extset_total(const struct extset *s)
{
	uint64_t total = 0;

	for (size_t i = 0; i < s->n; i++)
		total += s->r[i].len;
	return total;
}

void ext4fs__extset_free(struct extset *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}
