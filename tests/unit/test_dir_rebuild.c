/*
 * test_dir_rebuild.c - ext4fs_dir_rebuild(): linear and indexed layouts,
 * index levels, blocks kept, grown into holes and given back, refusals.
 *
 * Each test fills a directory "d" through ext4fs_dir_add(), then rebuilds
 * it from a list of entries made by the test (not read back from the
 * directory, so a rebuild that drops or duplicates entries is caught), and
 * reads the result back through ext4fs_dir_iterate(), ext4fs_htree_walk()
 * and ext4fs_dir_lookup().  The real e2fsck -fn judges every image.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/alloc.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/dxhash.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/htree.h"
#include "ext4fs/inode.h"
#include "ext4fs/super.h"
#include "../lib/rw_image.h"

struct fixture {
	struct rw_image img;
	uint32_t dir, target;           /* every entry names the one target inode */
	struct ext4fs_inode din;
	unsigned nlinks;
	struct ext4fs_dir_rebuild_entry *ents;
	char (*names)[32];
	size_t n;
};

static void bs1k_no_index(struct ext4fs_mkfs_params *p)
{
	p->block_size = 1024;
	p->feature_compat &= ~EXT4FS_FEATURE_COMPAT_DIR_INDEX;
}

static void bs1k_largedir(struct ext4fs_mkfs_params *p)
{
	p->block_size = 1024;
	p->feature_incompat |= EXT4FS_FEATURE_INCOMPAT_LARGEDIR;
}

static void setup(struct fixture *fx, uint64_t blocks, uint32_t bs, void (*tweak)(struct ext4fs_mkfs_params *))
{
	struct ext4fs_fs *fs;
	struct ext4fs_inode root, in;
	uint16_t dmode = EXT4FS_S_IFDIR | 0755, fmode = EXT4FS_S_IFREG | 0644;

	memset(fx, 0, sizeof(*fx));
	rw_image_open(&fx->img, blocks, bs, tweak);
	fs = fx->img.fs;
	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_ROOT_INO, &root), 0);
	assert_int_equal(ext4fs_inode_alloc(fs, EXT4FS_ROOT_INO, dmode, &fx->dir), 0);
	ext4fs_inode_init_new(fs, fx->dir, dmode, 0, 0, &fx->din);
	fx->din.i_links_count = 2;
	assert_int_equal(ext4fs_dir_init(fs, fx->dir, &fx->din, EXT4FS_ROOT_INO), 0);
	assert_int_equal(ext4fs_dir_add(fs, EXT4FS_ROOT_INO, &root, "d", 1, fx->dir, EXT4FS_FT_DIR), 0);
	root.i_links_count++;
	assert_int_equal(ext4fs_inode_write(fs, EXT4FS_ROOT_INO, &root), 0);
	assert_int_equal(ext4fs_inode_alloc(fs, fx->dir, fmode, &fx->target), 0);
	ext4fs_inode_init_new(fs, fx->target, fmode, 0, 0, &in);
	assert_int_equal(ext4fs_inode_write(fs, fx->target, &in), 0);
}

static void teardown(struct fixture *fx)
{
	free(fx->ents);
	free(fx->names);
	rw_image_close(&fx->img);
}

/* Fill d with n entries "name<i>" through the ordinary add path. */
static void fill(struct fixture *fx, size_t n)
{
	char name[32];

	for (size_t i = 0; i < n; i++) {
		int len = snprintf(name, sizeof(name), "name%zu", i);
		assert_int_equal(ext4fs_dir_add(fx->img.fs, fx->dir, &fx->din, name, (size_t)len, fx->target,
						EXT4FS_FT_REG_FILE), 0);
	}
}

/* The rebuild's list: "." and ".." first when linear, then "name<i>" for i in [0, n). */
static void make_list(struct fixture *fx, size_t n, int with_dots)
{
	size_t total = n + (with_dots ? 2 : 0), k = 0;

	fx->ents = calloc(total ? total : 1, sizeof(*fx->ents));
	fx->names = calloc(total ? total : 1, sizeof(*fx->names));
	assert_non_null(fx->ents);
	assert_non_null(fx->names);
	if (with_dots) {
		fx->ents[k++] = (struct ext4fs_dir_rebuild_entry){ ".", 1, EXT4FS_FT_DIR, fx->dir, 0 };
		fx->ents[k++] = (struct ext4fs_dir_rebuild_entry){ "..", 2, EXT4FS_FT_DIR, EXT4FS_ROOT_INO, 0 };
	}
	for (size_t i = 0; i < n; i++, k++) {
		int len = snprintf(fx->names[k], sizeof(fx->names[k]), "name%zu", i);
		fx->ents[k] = (struct ext4fs_dir_rebuild_entry){ fx->names[k], (uint8_t)len, EXT4FS_FT_REG_FILE,
								 fx->target, 0 };
	}
	fx->n = total;
}

static int by_hash(const void *a, const void *b)
{
	const struct ext4fs_dir_rebuild_entry *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return strncmp(x->name, y->name, 32);
}

/* Hash every entry as the root will record, and sort by hash. */
static void hash_and_sort(struct fixture *fx)
{
	const struct ext4fs_super *sb = ext4fs_sb(fx->img.fs);
	int version = ext4fs_dx_hash_version_effective(sb->s_def_hash_version, sb->s_flags);

	for (size_t i = 0; i < fx->n; i++) {
		uint32_t minor;
		int approx = 0;
		assert_int_equal(ext4fs_htree_name_hash(fx->img.fs, &fx->din, version, fx->ents[i].name,
							fx->ents[i].name_len, &fx->ents[i].hash, &minor, &approx), 0);
	}
	qsort(fx->ents, fx->n, sizeof(*fx->ents), by_hash);
}

/* Link count of the target: one per entry naming it. */
static void judge(struct fixture *fx, unsigned entries)
{
	struct ext4fs_inode in;

	assert_int_equal(ext4fs_inode_read(fx->img.fs, fx->target, &in), 0);
	in.i_links_count = (uint16_t)entries;
	assert_int_equal(ext4fs_inode_write(fx->img.fs, fx->target, &in), 0);
	rw_image_assert_clean(&fx->img);
}

struct order {
	char seen[64][32];
	unsigned n, live;
};

static int order_visit(const struct ext4fs_dirent *d, void *arg)
{
	struct order *o = arg;

	if (o->n < 64) {
		memcpy(o->seen[o->n], d->name, d->name_len);
		o->seen[o->n][d->name_len] = '\0';
	}
	o->n++;
	if (!(d->name_len == 1 && d->name[0] == '.') && !(d->name_len == 2 && !memcmp(d->name, "..", 2)))
		o->live++;
	return 0;
}

static int count_leaves(const struct ext4fs_htree_event *ev, void *arg)
{
	unsigned *leaves = arg;

	if (ev->type == EXT4FS_HTREE_EV_LEAF)
		(*leaves)++;
	return 0;
}

static uint64_t dir_blocks(const struct fixture *fx)
{
	return ext4fs_inode_size(&fx->din) / ext4fs_geom(fx->img.fs)->block_size;
}

/* -- tests ----------------------------------------------------------------------- */

static void linear_keeps_the_order_given_and_packs(void **state)
{
	struct fixture fx;
	struct order o = { 0 };
	uint64_t blocks = 0, free_before;

	(void)state;
	setup(&fx, 8192, 1024, bs1k_no_index);
	fill(&fx, 300);
	assert_true(dir_blocks(&fx) >= 5);
	/* Only the last 40 names stay, in reverse order after "." and "..". */
	make_list(&fx, 300, 1);
	memmove(fx.ents + 2, fx.ents + 2 + 260, 40 * sizeof(*fx.ents));
	fx.n = 42;
	for (size_t i = 0; i < 20; i++) {
		struct ext4fs_dir_rebuild_entry t = fx.ents[2 + i];
		fx.ents[2 + i] = fx.ents[41 - i];
		fx.ents[41 - i] = t;
	}
	free_before = ext4fs_geom(fx.img.fs)->free_blocks_count;
	struct ext4fs_dir_rebuild_opts opts = { .indexed = 0 };
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, &blocks), 0);
	/* 40 records of 16 bytes and two of 12 fit in one 1 KiB block; the rest are freed. */
	assert_int_equal(blocks, 1);
	assert_int_equal(dir_blocks(&fx), 1);
	assert_true(ext4fs_geom(fx.img.fs)->free_blocks_count >= free_before + 4);
	assert_int_equal(ext4fs_dir_iterate(fx.img.fs, fx.dir, &fx.din, 0, order_visit, &o), 0);
	assert_int_equal(o.live, 40);
	assert_string_equal(o.seen[0], ".");
	assert_string_equal(o.seen[1], "..");
	assert_string_equal(o.seen[2], "name299");
	assert_string_equal(o.seen[41], "name260");
	judge(&fx, 40);
	teardown(&fx);
}

static void indexed_one_level_finds_every_name(void **state)
{
	struct fixture fx;
	unsigned leaves = 0;
	uint64_t blocks = 0;

	(void)state;
	setup(&fx, 16384, 1024, rw_tweak_1k);
	fill(&fx, 3000);
	make_list(&fx, 3000, 0);
	hash_and_sort(&fx);
	struct ext4fs_dir_rebuild_opts opts = { .indexed = 1, .parent = EXT4FS_ROOT_INO, .slack_percent = 20 };
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, &blocks), 0);
	assert_true(fx.din.i_flags & EXT4FS_INDEX_FL);
	assert_int_equal(dir_blocks(&fx), blocks);
	assert_int_equal(ext4fs_htree_walk(fx.img.fs, fx.dir, &fx.din, 0, count_leaves, &leaves), 0);
	/* Leaves are 80% full: more of them than the 1000-odd 12-16 byte records strictly need. */
	assert_true(leaves > 3000 * 16 / 1012 && leaves < 3000 * 16 / 600);
	for (unsigned i = 0; i < 3000; i += 7) {
		char name[32];
		uint32_t ino = 0;
		int len = snprintf(name, sizeof(name), "name%u", i);
		assert_int_equal(ext4fs_dir_lookup(fx.img.fs, fx.dir, name, (size_t)len, &ino), 0);
		assert_int_equal(ino, fx.target);
	}
	judge(&fx, 3000);
	teardown(&fx);
}

/* A full leaf per entry (slack 100%) needs two index levels for a few thousand names at 1 KiB. */
static void two_levels_need_largedir(void **state)
{
	struct fixture fx;
	uint64_t blocks = 0, size_before;

	(void)state;
	setup(&fx, 32768, 1024, rw_tweak_1k);
	fill(&fx, 16000);
	make_list(&fx, 16000, 0);
	hash_and_sort(&fx);
	size_before = ext4fs_inode_size(&fx.din);
	struct ext4fs_dir_rebuild_opts opts = { .indexed = 1, .parent = EXT4FS_ROOT_INO, .slack_percent = 100 };
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, &blocks),
			 EXT4FS_E_DIR_FULL);
	/* Refused before anything was written. */
	assert_int_equal(ext4fs_inode_size(&fx.din), size_before);
	judge(&fx, 16000);
	teardown(&fx);

	setup(&fx, 65536, 1024, bs1k_largedir);
	fill(&fx, 16000);
	make_list(&fx, 16000, 0);
	hash_and_sort(&fx);
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, &blocks), 0);
	unsigned char *buf = malloc(1024);
	assert_non_null(buf);
	assert_int_equal(ext4fs_dir_block_read(fx.img.fs, fx.dir, &fx.din, 0, buf, NULL), 0);
	assert_int_equal(buf[0x1e], 2);          /* indirect_levels */
	free(buf);
	unsigned leaves = 0;
	assert_int_equal(ext4fs_htree_walk(fx.img.fs, fx.dir, &fx.din, 0, count_leaves, &leaves), 0);
	assert_int_equal(leaves, 16000);
	judge(&fx, 16000);
	teardown(&fx);
}

static void min_blocks_keeps_empty_leaves(void **state)
{
	struct fixture fx;
	uint64_t blocks = 0;
	struct order o = { 0 };

	(void)state;
	setup(&fx, 8192, 4096, NULL);
	fill(&fx, 3);
	make_list(&fx, 3, 1);
	struct ext4fs_dir_rebuild_opts opts = { .indexed = 0, .min_blocks = 4 };
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, &blocks), 0);
	assert_int_equal(blocks, 4);
	assert_int_equal(dir_blocks(&fx), 4);
	assert_int_equal(ext4fs_dir_iterate(fx.img.fs, fx.dir, &fx.din, 0, order_visit, &o), 0);
	assert_int_equal(o.live, 3);
	judge(&fx, 3);
	teardown(&fx);
}

/* A directory with a hole below i_size gets the hole filled when the new layout needs the block. */
static void holes_are_filled(void **state)
{
	struct fixture fx;
	uint64_t blocks = 0, pblk = 0, run = 0;

	(void)state;
	setup(&fx, 8192, 1024, bs1k_no_index);
	fill(&fx, 200);
	assert_true(dir_blocks(&fx) >= 4);
	assert_int_equal(ext4fs_bmap_unmap(fx.img.fs, fx.dir, &fx.din, 1, 1), 0);
	assert_int_equal(ext4fs_bmap(fx.img.fs, fx.dir, &fx.din, 1, &pblk, &run, NULL), 0);
	assert_int_equal(pblk, 0);
	make_list(&fx, 200, 1);
	struct ext4fs_dir_rebuild_opts opts = { .indexed = 0 };
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, &blocks), 0);
	assert_true(blocks >= 3);
	assert_int_equal(ext4fs_bmap(fx.img.fs, fx.dir, &fx.din, 1, &pblk, &run, NULL), 0);
	assert_true(pblk != 0);
	struct order o = { 0 };
	assert_int_equal(ext4fs_dir_iterate(fx.img.fs, fx.dir, &fx.din, 0, order_visit, &o), 0);
	assert_int_equal(o.live, 200);
	judge(&fx, 200);
	teardown(&fx);
}

static void bad_requests_change_nothing(void **state)
{
	struct fixture fx;
	uint64_t size_before;

	(void)state;
	setup(&fx, 8192, 1024, rw_tweak_1k);
	fill(&fx, 50);
	make_list(&fx, 50, 0);
	hash_and_sort(&fx);
	size_before = ext4fs_inode_size(&fx.din);
	struct ext4fs_dir_rebuild_opts opts = { .indexed = 1, .parent = EXT4FS_ROOT_INO, .slack_percent = 20 };
	fx.ents[7].inode = 0;
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, NULL),
			 EXT4FS_E_INVALID_ARG);
	fx.ents[7].inode = fx.target;
	opts.slack_percent = 101;
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.dir, &fx.din, fx.ents, fx.n, &opts, NULL),
			 EXT4FS_E_INVALID_ARG);
	opts.slack_percent = 20;
	struct ext4fs_inode file;
	assert_int_equal(ext4fs_inode_read(fx.img.fs, fx.target, &file), 0);
	assert_int_equal(ext4fs_dir_rebuild(fx.img.fs, fx.target, &file, fx.ents, fx.n, &opts, NULL),
			 EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_inode_size(&fx.din), size_before);
	judge(&fx, 50);
	teardown(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(linear_keeps_the_order_given_and_packs),
		cmocka_unit_test(indexed_one_level_finds_every_name),
		cmocka_unit_test(two_levels_need_largedir),
		cmocka_unit_test(min_blocks_keeps_empty_leaves),
		cmocka_unit_test(holes_are_filled),
		cmocka_unit_test(bad_requests_change_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
