/* inoset.c - a set of inode numbers (see inoset.h). */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include "inoset.h"

static size_t slot_of(uint32_t ino, size_t cap)
{
	/* Fibonacci hashing: inode numbers come in runs, which a plain mask would cluster. */
	return (size_t)(((uint64_t)ino * 0x9E3779B97F4A7C15ULL) >> 32) & (cap - 1);
}

static void put(uint32_t *slots, size_t cap, uint32_t ino)
{
	size_t i = slot_of(ino, cap);

	while (slots[i])
		i = (i + 1) & (cap - 1);
	slots[i] = ino;
}

static int grow(struct df_inoset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	uint32_t *slots;

	if (cap < s->cap)
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i])
			put(slots, cap, s->slots[i]);
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int df_inoset_add(struct df_inoset *s, uint32_t ino)
{
	if (df_inoset_has(s, ino))
		return 0;
	/* Keep the table at most half full so probes stay short. */
	if ((s->count + 1) * 2 > s->cap && grow(s))
		return -ENOMEM;
	put(s->slots, s->cap, ino);
	s->count++;
	return 1;
}

int df_inoset_has(const struct df_inoset *s, uint32_t ino)
{
	if (!s->cap)
		return 0;
	for (size_t i = slot_of(ino, s->cap); s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (s->slots[i] == ino)
			return 1;
	return 0;
}

void df_inoset_free(struct df_inoset *s)
{
	free(s->slots);
	s->slots = NULL;
	s->cap = s->count = 0;
}
