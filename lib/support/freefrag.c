/* freefrag.c - e2freefrag's report and its JSON form (see freefrag.h). */
#include "config.h"
#include <inttypes.h>
#include "support/freefrag.h"

void sup_freefrag_json(struct json *j, const struct ext4fs_geom *geo, const struct ext4fs_frag_free *ff,
		       uint64_t free_blocks)
{
	uint64_t scale = geo->block_size >> 10;

	json_uint(j, "block_size", geo->block_size);
	json_uint(j, "total_blocks", geo->blocks_count);
	json_uint(j, "free_blocks", free_blocks);
	if (ff->chunk_bytes) {
		json_object_begin(j, "chunks");
		json_uint(j, "chunk_bytes", ff->chunk_bytes);
		json_uint(j, "chunk_blocks", ff->chunk_blocks);
		json_uint(j, "total", ff->total_chunks);
		json_uint(j, "free", ff->free_chunks);
		json_object_end(j);
	} else {
		json_null(j, "chunks");
	}
	json_uint(j, "free_extents", ff->extents);
	json_uint(j, "min_extent_kb", ff->extents ? ff->min * scale : 0);
	json_uint(j, "max_extent_kb", ff->max * scale);
	json_uint(j, "avg_extent_kb", ff->extents ? ff->sum / ff->extents * scale : 0);
	json_object_begin(j, "large_extents");
	json_uint(j, "min_bytes", ff->large_bytes);
	json_uint(j, "extents", ff->large_extents);
	json_uint(j, "blocks", ff->large_blocks);
	json_object_end(j);
	json_array_begin(j, "histogram");
	for (unsigned i = 1; i < EXT4FS_FRAG_FREE_HIST; i++) {
		if (!ff->hist_extents[i])
			continue;
		json_object_begin(j, NULL);
		json_uint(j, "min_bytes", (uint64_t)geo->block_size << (i - 1));
		if (i == EXT4FS_FRAG_FREE_HIST - 1)
			json_null(j, "max_bytes");
		else
			json_uint(j, "max_bytes", (uint64_t)geo->block_size << i);
		json_uint(j, "extents", ff->hist_extents[i]);
		json_uint(j, "blocks", ff->hist_blocks[i]);
		json_object_end(j);
	}
	json_array_end(j);
}

void sup_freefrag_print(FILE *f, const char *device, const struct ext4fs_geom *geo,
			const struct ext4fs_frag_free *ff, uint64_t free_blocks)
{
	static const char units[] = "KMGTPEZY";
	uint64_t total = geo->blocks_count, scale = geo->block_size >> 10;
	unsigned bs_bits = geo->log_block_size + 10, unit_shift = 10, u = 0;
	uint64_t start = 0;

	fprintf(f, "Device: %s\n", device);
	fprintf(f, "Blocksize: %u bytes\n", geo->block_size);
	fprintf(f, "Total blocks: %" PRIu64 "\nFree blocks: %" PRIu64 " (%0.1f%%)\n", total,
		free_blocks, (double)free_blocks * 100 / (double)total);
	if (ff->chunk_bytes) {
		fprintf(f, "\nChunksize: %" PRIu64 " bytes (%u blocks)\n", ff->chunk_bytes,
			ff->chunk_blocks);
		fprintf(f, "Total chunks: %" PRIu64 "\nFree chunks: %" PRIu64 " (%0.1f%%)\n",
			ff->total_chunks, ff->free_chunks,
			(double)ff->free_chunks * 100 / (double)ff->total_chunks);
	}
	fprintf(f, "\nMin. free extent: %" PRIu64 " KB \nMax. free extent: %" PRIu64 " KB\n"
		"Avg. free extent: %" PRIu64 " KB\n",
		ff->extents ? ff->min * scale : 0, ff->max * scale,
		ff->extents ? ff->sum / ff->extents * scale : 0);
	fprintf(f, "Num. free extent: %" PRIu64 "\n", ff->extents);
	fprintf(f, "\nHISTOGRAM OF FREE EXTENT SIZES:\n");
	fprintf(f, "%s :  %12s  %12s  %7s\n", "Extent Size Range", "Free extents", "Free Blocks",
		"Percent");
	/* Bucket i holds extents of [2^(i-1), 2^i) blocks; labels in K, M, G... */
	for (unsigned i = 0; i < EXT4FS_FRAG_FREE_HIST; i++) {
		uint64_t end = (uint64_t)1 << (i + bs_bits - unit_shift);
		if (ff->hist_extents[i]) {
			char end_str[32];
			if (i == EXT4FS_FRAG_FREE_HIST - 1)
				snprintf(end_str, sizeof(end_str), "max ");
			else
				snprintf(end_str, sizeof(end_str), "%5" PRIu64 "%c-", end, units[u]);
			fprintf(f, "%5" PRIu64 "%c...%7s  :  %12" PRIu64 "  %12" PRIu64 "  %6.2f%%\n",
				start, units[u], end_str, ff->hist_extents[i], ff->hist_blocks[i],
				(double)ff->hist_blocks[i] * 100 / (double)free_blocks);
		}
		start = end;
		if (start == 1024 && u + 1 < sizeof(units) - 1) {
			start = 1;
			unit_shift += 10;
			u++;
		}
	}
}
