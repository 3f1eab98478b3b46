/*
 * freefrag.h - the free-space report as e2freefrag 1.47 prints it, and the
 * same figures as JSON, from frag.h's walk of the block bitmap
 * (ext4fs_frag_free_scan()).  debug4fs's freefrag command and defrag4fs -c
 * print through these, so the two never drift apart; e2freefrag's text is
 * an interface (t5010 compares it byte for byte).
 */
#ifndef SUPPORT_FREEFRAG_H
#define SUPPORT_FREEFRAG_H

#include <stdint.h>
#include <stdio.h>
#include "ext4fs/frag.h"
#include "ext4fs/fs.h"
#include "support/json.h"

/*
 * e2freefrag's report to f: the device line (device as the user named it),
 * the totals against free_blocks (the superblock's count, as e2freefrag
 * takes it), the chunk lines when ff was scanned with a chunk size, the
 * extent sizes and the histogram.  Cannot fail (write errors stay in f).
 */
void sup_freefrag_print(FILE *f, const char *device, const struct ext4fs_geom *geo,
			const struct ext4fs_frag_free *ff, uint64_t free_blocks);

/*
 * The same figures as members of the JSON object open in j: block_size,
 * total_blocks, free_blocks, chunks (null without a chunk size),
 * free_extents, min/max/avg_extent_kb, large_extents and histogram (the
 * buckets that hold extents).  Cannot fail.
 */
void sup_freefrag_json(struct json *j, const struct ext4fs_geom *geo, const struct ext4fs_frag_free *ff,
		       uint64_t free_blocks);

#endif
