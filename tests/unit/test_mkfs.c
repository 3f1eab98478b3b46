/*
 * test_mkfs.c - the mkfs engine, judged by the library's own strict reader:
 * plan a file system, write it into memory, open it with checksums
 * enforced, and check that every count the plan promised is what the
 * bitmaps say.  (The real e2fsck and the kernel judge the same images in
 * tests/integration/t2600 and t2610.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/mkfs.h"

/* Make a file system of `bytes` with params tweaked by fn, reopen it, run the checks. */
static void make_and_check(uint64_t bytes, uint32_t bs, void (*tweak)(struct ext4fs_mkfs_params *))
{
	struct ext4fs_mkfs_params p;
	struct ext4fs_mkfs_plan *plan = NULL;
	struct ext4fs_io *io = NULL;
	struct ext4fs_fs *fs = NULL;
	struct ext4fs_bitmap *bmap = NULL, *imap = NULL;
	struct ext4fs_open_opts opts = { 0 };
	char msg[256];
	unsigned char *img = calloc(1, bytes);

	assert_non_null(img);
	ext4fs_mkfs_params_init(&p, bytes / bs);
	p.block_size = bs;
	p.inode_ratio = 4096;
	p.now = 1700000000;
	memset(p.uuid, 0x42, sizeof(p.uuid));
	memset(p.hash_seed, 0x17, sizeof(p.hash_seed));
	if (tweak)
		tweak(&p);
	assert_int_equal(ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)), 0);
	const struct ext4fs_super *psb = ext4fs_mkfs_plan_super(plan);
	const struct ext4fs_geom *pgeo = ext4fs_mkfs_plan_geom(plan);
	uint64_t plan_free = psb->s_free_blocks_count_lo | (uint64_t)psb->s_free_blocks_count_hi << 32;
	uint32_t plan_free_inodes = psb->s_free_inodes_count;
	uint32_t groups = pgeo->group_count;

	assert_int_equal(ext4fs_io_open_memory(img, bytes, 1, &io), 0);
	assert_int_equal(ext4fs_mkfs_write(plan, io, NULL, NULL, NULL, msg, sizeof(msg)), 0);
	ext4fs_io_close(io);
	ext4fs_mkfs_plan_free(plan);

	assert_int_equal(ext4fs_io_open_memory(img, bytes, 0, &io), 0);
	assert_int_equal(ext4fs_open_io(io, &opts, &fs, msg, sizeof(msg)), 0);
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	assert_int_equal(geo->group_count, groups);
	assert_int_equal(geo->free_blocks_count, plan_free);

	/* Every group's free count is what its bitmap says. */
	assert_int_equal(ext4fs_block_bitmap_load(fs, &bmap), 0);
	assert_int_equal(ext4fs_inode_bitmap_load(fs, &imap), 0);
	uint64_t free_total = 0;
	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t first = ext4fs_group_first_block(fs, g), last = ext4fs_group_last_block(fs, g);
		uint64_t used = ext4fs_bitmap_count_set(bmap, first, last);
		assert_int_equal(ext4fs_group(fs, g)->free_blocks_count, last - first + 1 - used);
		free_total += last - first + 1 - used;
	}
	assert_int_equal(free_total, plan_free);
	uint64_t used_inodes = ext4fs_bitmap_count_set(imap, 1, geo->inodes_count);
	assert_int_equal(geo->inodes_count - used_inodes, plan_free_inodes);

	/* The root directory holds lost+found, and both verify. */
	struct ext4fs_inode root;
	uint32_t ino = 0;
	assert_int_equal(ext4fs_inode_read(fs, 2, &root), 0);
	assert_int_equal(root.i_mode, 040755);
	assert_int_equal(ext4fs_dir_lookup(fs, 2, "lost+found", 10, &ino), 0);
	assert_int_equal(ino, 11);

	ext4fs_bitmap_free(bmap);
	ext4fs_bitmap_free(imap);
	ext4fs_close(fs);
	free(img);
}

static void ext4_default(struct ext4fs_mkfs_params *p) { (void)p; }

static void ext2_1k(struct ext4fs_mkfs_params *p)
{
	p->feature_compat = EXT4FS_FEATURE_COMPAT_EXT_ATTR | EXT4FS_FEATURE_COMPAT_RESIZE_INODE |
			    EXT4FS_FEATURE_COMPAT_DIR_INDEX;
	p->feature_incompat = EXT4FS_FEATURE_INCOMPAT_FILETYPE;
	p->feature_ro_compat = EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE;
}

static void ext3_blockmapped_journal(struct ext4fs_mkfs_params *p)
{
	ext2_1k(p);
	p->feature_compat |= EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
	p->journal_blocks = 4096;   /* 1 KiB blocks: direct, indirect and double-indirect blocks */
}

static void orphan_file_and_seed(struct ext4fs_mkfs_params *p)
{
	p->feature_compat |= EXT4FS_FEATURE_COMPAT_ORPHAN_FILE;
	p->feature_incompat |= EXT4FS_FEATURE_INCOMPAT_CSUM_SEED;
}

static void uninit_bg_no_flex(struct ext4fs_mkfs_params *p)
{
	p->feature_ro_compat &= ~EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM;
	p->feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
	p->feature_incompat &= ~EXT4FS_FEATURE_INCOMPAT_FLEX_BG;
	p->raid_stride = 16;
}

static void mkfs__ext4_defaults_read_back_consistent(void **state)
{
	(void)state;
	make_and_check(64ULL << 20, 4096, ext4_default);
}

static void mkfs__ext2_1k_read_back_consistent(void **state)
{
	(void)state;
	make_and_check(32ULL << 20, 1024, ext2_1k);
}

static void mkfs__ext3_block_mapped_journal(void **state)
{
	(void)state;
	make_and_check(32ULL << 20, 1024, ext3_blockmapped_journal);
}

static void mkfs__orphan_file_and_csum_seed(void **state)
{
	(void)state;
	make_and_check(64ULL << 20, 1024, orphan_file_and_seed);
}

static void mkfs__uninit_bg_without_flex_bg(void **state)
{
	(void)state;
	make_and_check(48ULL << 20, 2048, uninit_bg_no_flex);
}

static void mkfs__rejects_bad_parameters(void **state)
{
	struct ext4fs_mkfs_params p;
	struct ext4fs_mkfs_plan *plan = NULL;
	char msg[256];

	(void)state;
	ext4fs_mkfs_params_init(&p, 1024);
	p.block_size = 3000;
	assert_int_equal(ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)), EXT4FS_E_INVALID_ARG);
	assert_null(plan);
	assert_non_null(strstr(msg, "3000"));

	ext4fs_mkfs_params_init(&p, 10);        /* 40 KiB: no room for a group's metadata */
	p.feature_compat &= ~EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
	assert_int_equal(ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)), EXT4FS_E_TOO_SMALL);

	ext4fs_mkfs_params_init(&p, 16384);
	p.inodes_count = 10000000;              /* far more than 64 MiB can hold */
	assert_int_equal(ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)), EXT4FS_E_TOO_MANY_INODES);

	ext4fs_mkfs_params_init(&p, 16384);
	p.feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_BIGALLOC;
	assert_int_equal(ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)), EXT4FS_E_UNSUPP_FEATURE);
	assert_non_null(strstr(msg, "bigalloc"));

	ext4fs_mkfs_params_init(&p, 16384);
	p.raid_stride = 40000;                  /* larger than a 32768-block group */
	assert_int_equal(ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)), EXT4FS_E_INVALID_ARG);
	assert_null(plan);
}

static void mkfs__trims_a_too_small_last_group(void **state)
{
	struct ext4fs_mkfs_params p;
	struct ext4fs_mkfs_plan *plan = NULL;
	char msg[256];

	(void)state;
	/* 1 KiB blocks: 8193 data blocks fill group 0; 67 more cannot hold group 1's metadata. */
	ext4fs_mkfs_params_init(&p, 8260);
	p.block_size = 1024;
	p.inode_ratio = 4096;
	assert_int_equal(ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)), 0);
	assert_int_equal(ext4fs_mkfs_plan_geom(plan)->blocks_count, 8193);
	assert_int_equal(ext4fs_mkfs_plan_super(plan)->s_inodes_count, 2064);
	assert_int_equal(ext4fs_mkfs_plan_super(plan)->s_r_blocks_count_lo, 409);
	ext4fs_mkfs_plan_free(plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mkfs__ext4_defaults_read_back_consistent),
		cmocka_unit_test(mkfs__ext2_1k_read_back_consistent),
		cmocka_unit_test(mkfs__ext3_block_mapped_journal),
		cmocka_unit_test(mkfs__orphan_file_and_csum_seed),
		cmocka_unit_test(mkfs__uninit_bg_without_flex_bg),
		cmocka_unit_test(mkfs__rejects_bad_parameters),
		cmocka_unit_test(mkfs__trims_a_too_small_last_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
