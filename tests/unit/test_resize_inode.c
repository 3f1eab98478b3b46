/*
 * test_resize_inode.c - the resize inode module (resize_inode.h): the
 * layout mke4fs writes is the one judged valid (and the real e2fsck calls
 * the image clean), each kind of damage e2fsck notices is noticed, damage
 * past what e2fsck looks at is not, a resize inode written anew over
 * a cleared one gives back the same blocks and inode, and one remade around
 * its own block keeps its record and fills what is missing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/resize_inode.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

static void no_tweak(struct ext4fs_mkfs_params *p)
{
	(void)p;
}

static const struct {
	void (*tweak)(struct ext4fs_mkfs_params *);
	uint32_t bs;
} kinds[] = { { no_tweak, 4096 }, { rw_tweak_1k, 1024 }, { rw_tweak_ext3ish_1k, 1024 }, { rw_tweak_ext3ish_4k, 4096 } };

static uint32_t word(const unsigned char *b, uint32_t i)
{
	return (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
	       (uint32_t)b[4 * i + 3] << 24;
}

static void set_word(unsigned char *b, uint32_t i, uint32_t v)
{
	b[4 * i] = (unsigned char)v;
	b[4 * i + 1] = (unsigned char)(v >> 8);
	b[4 * i + 2] = (unsigned char)(v >> 16);
	b[4 * i + 3] = (unsigned char)(v >> 24);
}

static int valid_now(struct ext4fs_fs *fs)
{
	struct ext4fs_inode in;

	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &in), 0);
	return ext4fs_resize_inode_valid(fs, &in);
}

/* Change word i of block blk to v, judge (judge(fs, arg)), and put it back. */
static int with_word(struct ext4fs_fs *fs, uint64_t blk, uint32_t i, uint32_t v,
		     int (*judge)(struct ext4fs_fs *, uint64_t), uint64_t arg)
{
	unsigned char *b = malloc(ext4fs_geom(fs)->block_size);
	uint32_t was;
	int rc;

	assert_non_null(b);
	assert_int_equal(ext4fs_block_read(fs, blk, b), 0);
	was = word(b, i);
	set_word(b, i, v);
	assert_int_equal(ext4fs_block_write(fs, blk, b), 0);
	rc = judge(fs, arg);
	set_word(b, i, was);
	assert_int_equal(ext4fs_block_write(fs, blk, b), 0);
	free(b);
	return rc;
}

static int judge_valid(struct ext4fs_fs *fs, uint64_t unused)
{
	(void)unused;
	return valid_now(fs);
}

static int valid_with_word(struct ext4fs_fs *fs, uint64_t blk, uint32_t i, uint32_t v)
{
	return with_word(fs, blk, i, v, judge_valid, 0);
}

static uint32_t dind_of(struct ext4fs_fs *fs)
{
	struct ext4fs_inode in;

	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &in), 0);
	return word(in.i_block, EXT4FS_DIND_BLOCK);
}

static void mkfs_layout_is_valid(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof(kinds) / sizeof(kinds[0]); t++) {
		struct rw_image img;
		rw_image_open(&img, 16384, kinds[t].bs, kinds[t].tweak);
		assert_true(ext4fs_has_compat(img.fs, EXT4FS_FEATURE_COMPAT_RESIZE_INODE));
		assert_true(ext4fs_sb(img.fs)->s_reserved_gdt_blocks >= 1);
		assert_int_equal(valid_now(img.fs), 1);
		/* e2fsck reads the same layout as its own. */
		rw_image_assert_clean(&img);
		rw_image_close(&img);
	}
}

static void damage_is_seen(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in, saved;

	(void)state;
	rw_image_open(&img, 16384, 1024, rw_tweak_1k);
	struct ext4fs_fs *fs = img.fs;
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	uint32_t apb = g->block_size / 4, rsv = ext4fs_sb(fs)->s_reserved_gdt_blocks;
	uint32_t dind = dind_of(fs);
	uint64_t first = ext4fs_resize_reserved_block(fs, 0);

	assert_int_equal(first, (uint64_t)g->first_data_block + 1 + g->desc_blocks);
	assert_true(rsv >= 8);
	/* The double-indirect slot of the first reserved block, and its first copy. */
	assert_int_equal(valid_with_word(fs, dind, g->desc_blocks % apb, 0), 0);
	assert_int_equal(valid_with_word(fs, dind, g->desc_blocks % apb, (uint32_t)first + 1), 0);
	assert_int_equal(valid_with_word(fs, first, 0, 0), 0);
	assert_int_equal(valid_with_word(fs, first, 0, 12345), 0);
	/* Past the listed copies, and past the first quarter of the reserved blocks: not looked at. */
	assert_int_equal(valid_with_word(fs, first, apb - 1, 77), 1);
	assert_int_equal(valid_with_word(fs, ext4fs_resize_reserved_block(fs, rsv - 1), 0, 0), 1);
	assert_int_equal(valid_now(fs), 1);

	/* The inode's own fields. */
	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &saved), 0);
	in = saved;
	set_word(in.i_block, 0, 5);
	assert_int_equal(ext4fs_resize_inode_valid(fs, &in), 0);
	in = saved;
	in.i_links_count = 0;
	assert_int_equal(ext4fs_resize_inode_valid(fs, &in), 0);
	in = saved;
	in.i_mode = 040755;
	assert_int_equal(ext4fs_resize_inode_valid(fs, &in), 0);
	in = saved;
	set_word(in.i_block, EXT4FS_DIND_BLOCK, (uint32_t)g->blocks_count);
	assert_int_equal(ext4fs_resize_inode_valid(fs, &in), 0);
	in = saved;
	set_word(in.i_block, EXT4FS_DIND_BLOCK, 0);
	assert_int_equal(ext4fs_resize_inode_valid(fs, &in), 0);
	rw_image_close(&img);
}

/* Reusable as e2fsprogs' maker judges a double-indirect block before writing: nothing else is. */
static int reusable_with_word(struct ext4fs_fs *fs, uint64_t dind, uint64_t blk, uint32_t i, uint32_t v)
{
	return with_word(fs, blk, i, v, ext4fs_resize_inode_reusable, dind);
}

static void reusable_only_where_the_maker_would_write(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof(kinds) / sizeof(kinds[0]); t++) {
		struct rw_image img;
		rw_image_open(&img, 16384, kinds[t].bs, kinds[t].tweak);
		struct ext4fs_fs *fs = img.fs;
		const struct ext4fs_geom *g = ext4fs_geom(fs);
		uint32_t apb = g->block_size / 4, dind = dind_of(fs);
		uint64_t first = ext4fs_resize_reserved_block(fs, 0);

		assert_int_equal(ext4fs_resize_inode_reusable(fs, dind), 0);
		/* Empty slots are the maker's to fill; a wrong one, or a wrong copy, is not the resize inode's. */
		assert_int_equal(reusable_with_word(fs, dind, dind, g->desc_blocks % apb, 0), 0);
		assert_int_equal(reusable_with_word(fs, dind, dind, g->desc_blocks % apb, (uint32_t)first + 1),
				 EXT4FS_E_RESIZE_CORRUPT);
		assert_int_equal(reusable_with_word(fs, dind, first, 0, 0), 0);
		if (g->group_count > 1)
			assert_int_equal(reusable_with_word(fs, dind, first, 0, 12345), EXT4FS_E_RESIZE_CORRUPT);
		/* The descriptor table as the double-indirect block: refused before anything is written. */
		uint64_t gdt = (uint64_t)g->first_data_block + 1;
		assert_int_equal(ext4fs_resize_inode_reusable(fs, gdt), EXT4FS_E_RESIZE_CORRUPT);
		assert_int_equal(ext4fs_resize_inode_reusable(fs, g->blocks_count), EXT4FS_E_BAD_BLOCK_NUM);
		rw_image_assert_clean(&img);
		rw_image_close(&img);
	}
}

/* Everything cleared, then written anew at the same place: the same bytes, and e2fsck clean. */
static void create_gives_back_the_layout(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof(kinds) / sizeof(kinds[0]); t++) {
		struct rw_image img;
		rw_image_open(&img, 16384, kinds[t].bs, kinds[t].tweak);
		struct ext4fs_fs *fs = img.fs;
		uint32_t bs = ext4fs_geom(fs)->block_size, rsv = ext4fs_sb(fs)->s_reserved_gdt_blocks;
		uint32_t dind = dind_of(fs);
		unsigned char *orig = malloc((size_t)(rsv + 1) * bs), *now = malloc(bs), *zero = calloc(1, bs);
		struct ext4fs_inode before, after, cleared;

		assert_non_null(orig);
		assert_non_null(now);
		assert_non_null(zero);
		assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &before), 0);
		assert_int_equal(ext4fs_block_read(fs, dind, orig), 0);
		for (uint32_t k = 0; k < rsv; k++) {
			uint64_t b = ext4fs_resize_reserved_block(fs, k);
			assert_int_equal(ext4fs_block_read(fs, b, orig + (size_t)(k + 1) * bs), 0);
			assert_int_equal(ext4fs_block_write(fs, b, zero), 0);
		}
		assert_int_equal(ext4fs_block_write(fs, dind, zero), 0);
		cleared = before;
		memset(cleared.i_block, 0, sizeof(cleared.i_block));
		cleared.i_mode = 0;
		cleared.i_links_count = 0;
		assert_int_equal(ext4fs_inode_write(fs, EXT4FS_RESIZE_INO, &cleared), 0);
		assert_int_equal(valid_now(fs), 0);

		assert_int_equal(ext4fs_resize_inode_create(fs, dind, 1234), 0);
		assert_int_equal(valid_now(fs), 1);
		assert_int_equal(ext4fs_block_read(fs, dind, now), 0);
		assert_memory_equal(now, orig, bs);
		for (uint32_t k = 0; k < rsv; k++) {
			assert_int_equal(ext4fs_block_read(fs, ext4fs_resize_reserved_block(fs, k), now), 0);
			assert_memory_equal(now, orig + (size_t)(k + 1) * bs, bs);
		}
		assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &after), 0);
		assert_int_equal(after.i_mode, before.i_mode);
		assert_int_equal(after.i_links_count, before.i_links_count);
		assert_int_equal(after.i_blocks_lo, before.i_blocks_lo);
		assert_int_equal(ext4fs_inode_size(&after), ext4fs_inode_size(&before));
		assert_int_equal(after.i_mtime, 1234);
		rw_image_assert_clean(&img);
		free(orig);
		free(now);
		free(zero);
		rw_image_close(&img);
	}
}

/*
 * Remade around the block the inode already names, as e2fsprogs' maker
 * remakes it: the record stays (its flags here), the empty slots of the
 * double-indirect block and of a list are filled and each counted in
 * i_blocks, mtime is set, and atime only when a slot was filled.
 */
static void create_around_its_own_block(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof(kinds) / sizeof(kinds[0]); t++) {
		struct rw_image img;
		rw_image_open(&img, 16384, kinds[t].bs, kinds[t].tweak);
		struct ext4fs_fs *fs = img.fs;
		const struct ext4fs_geom *g = ext4fs_geom(fs);
		uint32_t bs = g->block_size, apb = bs / 4, dind = dind_of(fs);
		uint64_t first = ext4fs_resize_reserved_block(fs, 0);
		unsigned char *dorig = malloc(bs), *lorig = malloc(bs), *b = malloc(bs);
		struct ext4fs_inode in, after;

		assert_non_null(dorig);
		assert_non_null(lorig);
		assert_non_null(b);
		assert_int_equal(ext4fs_block_read(fs, dind, dorig), 0);
		assert_int_equal(ext4fs_block_read(fs, first, lorig), 0);
		/* The second reserved block unnamed, and its list empty: one block and its copies to add. */
		uint64_t second = ext4fs_resize_reserved_block(fs, 1);
		unsigned char *sorig = malloc(bs);
		assert_non_null(sorig);
		assert_int_equal(ext4fs_block_read(fs, second, sorig), 0);
		memcpy(b, dorig, bs);
		set_word(b, (g->desc_blocks + 1) % apb, 0);
		assert_int_equal(ext4fs_block_write(fs, dind, b), 0);
		uint32_t holes = 1;
		for (uint32_t i = 0; i < apb && word(sorig, i); i++)
			holes++;
		memset(b, 0, bs);
		assert_int_equal(ext4fs_block_write(fs, second, b), 0);
		if (g->group_count > 1) {
			memcpy(b, lorig, bs);
			set_word(b, 0, 0);                       /* the first list's first copy gone */
			assert_int_equal(ext4fs_block_write(fs, first, b), 0);
			holes++;
		}
		assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &in), 0);
		uint32_t blocks = in.i_blocks_lo;
		in.i_flags |= EXT4FS_NODUMP_FL;
		in.i_atime = 5;
		assert_int_equal(ext4fs_inode_add_blocks(fs, &in, -(int64_t)holes), 0);
		assert_int_equal(ext4fs_inode_write(fs, EXT4FS_RESIZE_INO, &in), 0);

		assert_int_equal(ext4fs_resize_inode_create(fs, dind, 999), 0);
		assert_int_equal(ext4fs_block_read(fs, dind, b), 0);
		assert_memory_equal(b, dorig, bs);
		assert_int_equal(ext4fs_block_read(fs, first, b), 0);
		assert_memory_equal(b, lorig, bs);
		assert_int_equal(ext4fs_block_read(fs, second, b), 0);
		assert_memory_equal(b, sorig, bs);
		free(sorig);
		assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &after), 0);
		assert_true(after.i_flags & EXT4FS_NODUMP_FL);
		assert_int_equal(after.i_blocks_lo, blocks);
		assert_int_equal(after.i_mtime, 999);
		assert_int_equal(after.i_atime, 999);
		/* Nothing missing: only mtime moves. */
		assert_int_equal(ext4fs_resize_inode_create(fs, dind, 1001), 0);
		assert_int_equal(ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &after), 0);
		assert_int_equal(after.i_blocks_lo, blocks);
		assert_int_equal(after.i_mtime, 1001);
		assert_int_equal(after.i_atime, 999);
		/* A slot naming something else: refused. */
		memcpy(b, dorig, bs);
		set_word(b, g->desc_blocks % apb, (uint32_t)first + 1);
		assert_int_equal(ext4fs_block_write(fs, dind, b), 0);
		assert_int_equal(ext4fs_resize_inode_create(fs, dind, 1002), EXT4FS_E_RESIZE_CORRUPT);
		assert_int_equal(ext4fs_block_write(fs, dind, dorig), 0);
		rw_image_assert_clean(&img);
		free(dorig);
		free(lorig);
		free(b);
		rw_image_close(&img);
	}
}

static void create_refuses(void **state)
{
	struct rw_image img;

	(void)state;
	rw_image_open(&img, 8192, 4096, NULL);
	assert_int_equal(ext4fs_resize_inode_create(img.fs, 0, 1), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_resize_inode_create(img.fs, ext4fs_geom(img.fs)->blocks_count, 1),
			 EXT4FS_E_INVALID_ARG);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mkfs_layout_is_valid),
		cmocka_unit_test(damage_is_seen),
		cmocka_unit_test(reusable_only_where_the_maker_would_write),
		cmocka_unit_test(create_gives_back_the_layout),
		cmocka_unit_test(create_around_its_own_block),
		cmocka_unit_test(create_refuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
