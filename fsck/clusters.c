/*
 * clusters.c - pass 1's block accounting on bigalloc file systems (see
 * clusters.h for the rules).
 */
#include "config.h"
#include "clusters.h"

/* [blk, blk + n) widened to whole clusters and clamped to the map; 0 when nothing is left. */
static int cluster_span(const struct bitmap_paged *found, uint32_t ratio, uint64_t blk, uint64_t n,
			uint64_t *first, uint64_t *end)
{
	uint64_t mask = (uint64_t)ratio - 1;

	if (!n || blk >= found->p.limit)
		return 0;
	*first = blk & ~mask;
	*end = (blk + n + mask) & ~mask;
	if (*end > found->p.limit)
		*end = found->p.limit;
	return 1;
}

int cluster_claim(struct bitmap_paged *found, struct bitmap_paged *dup, uint32_t ratio, uint64_t blk,
		  uint64_t n)
{
	uint64_t first, end;

	if (!cluster_span(found, ratio, blk, n, &first, &end))
		return 0;
	if (!bitmap_paged_count(found, first, end - first))
		return bitmap_paged_set_range(found, first, end - first) < 0 ? -1 : 0;
	for (uint64_t c = first; c < end; c += ratio) {
		uint64_t len = end - c < ratio ? end - c : ratio;
		struct bitmap_paged *into = bitmap_paged_test(found, c) ? dup : found;
		if (bitmap_paged_set_range(into, c, len) < 0)
			return -1;
	}
	return 0;
}

void cluster_unclaim(struct bitmap_paged *found, uint32_t ratio, uint64_t blk, uint64_t n)
{
	uint64_t first, end;

	if (cluster_span(found, ratio, blk, n, &first, &end))
		bitmap_paged_clear_range(found, first, end - first);
}

int cluster_mark(struct bitmap_paged *found, uint32_t ratio, uint64_t blk, uint64_t n)
{
	uint64_t first, end;

	if (!cluster_span(found, ratio, blk, n, &first, &end))
		return 0;
	return bitmap_paged_set_range(found, first, end - first) < 0 ? -1 : 0;
}

void cluster_walk_init(struct cluster_walk *cw, uint32_t ratio)
{
	cw->mask = (uint64_t)ratio - 1;
	cw->previous = 0;
	cw->last_lblk = UINT64_MAX;
}

int cluster_misaligned(const struct cluster_walk *cw, uint64_t pblk, uint64_t lblk)
{
	uint64_t m = cw->mask;

	if (!m)
		return 0;
	if ((lblk & m) != (pblk & m))
		return 1;
	/* A logical cluster that continues in another physical one. */
	return cw->previous && (lblk & m) && (lblk & ~m) == (cw->last_lblk & ~m) &&
	       (pblk & ~m) != (cw->previous & ~m);
}

uint64_t cluster_walk_extent(struct cluster_walk *cw, uint64_t pblk, uint64_t lblk, uint32_t len,
			     uint64_t *claim_from)
{
	uint64_t m = cw->mask, end = pblk + len, charged = 0;

	/* The first cluster was charged already when the previous extent ended in it. */
	*claim_from = (pblk & ~m) + (m && cw->previous && (pblk & ~m) == (cw->previous & ~m) ? m + 1 : 0);
	if (*claim_from < end)
		charged = (end - *claim_from + m) / (m + 1);
	cw->last_lblk = lblk + len - 1;
	cw->previous = end - 1;
	return charged;
}

int cluster_walk_block(struct cluster_walk *cw, uint64_t pblk, int64_t blockcnt)
{
	uint64_t m = cw->mask;
	/* e2fsck takes the offset of a negative count from its low 32 bits. */
	uint64_t offset = (uint64_t)(uint32_t)blockcnt & m;
	int enters = !(m && cw->previous && (pblk & ~m) == (cw->previous & ~m) && (pblk & m) == offset);

	if (blockcnt >= 0)
		cw->last_lblk = (uint64_t)blockcnt;
	cw->previous = pblk;
	return enters;
}

uint64_t cluster_value_blocks(uint32_t block_size, uint32_t ratio, uint64_t size)
{
	uint64_t cluster_size = (uint64_t)block_size * ratio;

	return (size + cluster_size - 1) / cluster_size * ratio;
}
