/*
 * alloc.c - block allocator.  PLACEHOLDER: first fit from the goal, to be
 * replaced by the buddy-based allocator (mballoc.c).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "fs_internal.h"

void balloc_note(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, int used)
{
	(void)fs; (void)blk; (void)count; (void)used;
}

void balloc_destroy(struct ext4fs_fs *fs)
{
	(void)fs;
}

int ext4fs_alloc_blocks(struct ext4fs_fs *fs, const struct ext4fs_alloc_request *req,
			uint64_t *start, uint32_t *got)
{
	const struct ext4fs_bitmap *bm;
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	uint64_t first = geo->first_data_block, last = geo->blocks_count - 1, goal = req->goal, b;
	uint32_t min = req->min_len ? req->min_len : 1;
	int err = fs_require_rw(fs, "allocating blocks");

	if (err)
		return err;
	if (req->len == 0 || min > req->len)
		return fs_fail(fs, EXT4FS_E_INVALID_ARG, "bad allocation request");
	err = ext4fs_fs_block_bitmap(fs, &bm);
	if (err)
		return err;
	if (goal < first || goal > last)
		goal = first;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t from = pass ? first : goal, to = pass ? goal : last;
		while (from <= to && ext4fs_bitmap_find(bm, from, to, 0, &b) == 0) {
			uint64_t e = b;
			while (e < last && e - b + 1 < req->len && ext4fs_bitmap_test(bm, e + 1) == 0)
				e++;
			if (e - b + 1 >= min) {
				uint64_t avail = geo->free_blocks_count;
				if (!(req->flags & EXT4FS_ALLOC_USE_RESERVED) &&
				    avail < geo->r_blocks_count + (e - b + 1))
					return fs_fail(fs, EXT4FS_E_NO_SPACE, "no space left outside the reserved blocks");
				err = ext4fs_blocks_mark_used(fs, b, e - b + 1);
				if (err)
					return err;
				*start = b;
				*got = (uint32_t)(e - b + 1);
				return 0;
			}
			from = e + 1;
		}
	}
	return fs_fail(fs, EXT4FS_E_NO_SPACE, "no free run of %u blocks", min);
}

int ext4fs_free_blocks(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return ext4fs_blocks_mark_free(fs, blk, count);
}

void ext4fs_alloc_release_inode(struct ext4fs_fs *fs, uint32_t ino)
{
	(void)fs; (void)ino;
}

void ext4fs_alloc_release_all(struct ext4fs_fs *fs)
{
	(void)fs;
}

void ext4fs_alloc_get_params(const struct ext4fs_fs *fs, struct ext4fs_alloc_params *p)
{
	(void)fs;
	memset(p, 0, sizeof(*p));
}

int ext4fs_alloc_tune(struct ext4fs_fs *fs, const struct ext4fs_alloc_params *p)
{
	(void)fs; (void)p;
	return 0;
}

void ext4fs_alloc_get_stats(const struct ext4fs_fs *fs, struct ext4fs_alloc_stats *st)
{
	(void)fs;
	memset(st, 0, sizeof(*st));
}
