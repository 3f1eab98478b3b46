/*
 * test_file_write.c - file data: ext4fs_file_write / _truncate / _punch /
 * _fallocate, read back through ext4fs_file_read and compared with an
 * in-memory model of the file, the map checked with the extent walker, and
 * every image judged by e2fsck -fn.  Extent and block-mapped files, 1 KiB
 * and 4 KiB blocks, with and without metadata_csum, running out of space
 * part way.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "../lib/map_test.h"

/* -- image variants -- */

static void ext2_small_files(struct ext4fs_mkfs_params *p)
{
	rw_tweak_ext3ish_4k(p);
	p->feature_compat = 0;
	p->feature_ro_compat &= ~EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE;
}

/* -- the model: the bytes the file must read back, zeros past its size -- */

struct model {
	unsigned char *data;
	uint64_t cap;
	uint64_t size;
};

static void model_init(struct model *m, uint64_t cap)
{
	m->data = calloc(1, cap);
	assert_non_null(m->data);
	m->cap = cap;
	m->size = 0;
}

static void fill(unsigned char *buf, size_t len, uint64_t *rng)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(map_test_rand(rng) >> 7);
}

static void check_file(struct rw_image *img, uint32_t ino, const struct ext4fs_inode *in,
		       const struct model *m)
{
	struct ext4fs_inode disk;
	unsigned char *back = malloc(m->size + 1);
	size_t got = 0;

	assert_non_null(back);
	assert_int_equal(ext4fs_inode_read(img->fs, ino, &disk), 0);
	assert_memory_equal(&disk.i_block, in->i_block, sizeof(in->i_block));
	assert_int_equal(ext4fs_inode_size(&disk), m->size);
	assert_int_equal(ext4fs_file_read(img->fs, ino, &disk, 0, back, m->size + 1, &got), 0);
	assert_int_equal(got, m->size);
	for (uint64_t i = 0; i < m->size; i++)
		if (back[i] != m->data[i])
			fail_msg("byte %llu reads 0x%02x, expected 0x%02x", (unsigned long long)i, back[i],
				 m->data[i]);
	free(back);
}

static void do_write(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, struct model *m,
		     uint64_t off, size_t len, uint64_t *rng)
{
	unsigned char *buf = malloc(len);

	assert_non_null(buf);
	fill(buf, len, rng);
	assert_int_equal(ext4fs_file_write(img->fs, ino, in, off, buf, len, 0), 0);
	memcpy(m->data + off, buf, len);
	if (off + len > m->size)
		m->size = off + len;
	free(buf);
}

static void do_punch(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, struct model *m,
		     uint64_t off, uint64_t len)
{
	assert_int_equal(ext4fs_file_punch(img->fs, ino, in, off, len), 0);
	if (off < m->cap)
		memset(m->data + off, 0, (size_t)(len < m->cap - off ? len : m->cap - off));
}

static void do_truncate(struct rw_image *img, uint32_t ino, struct ext4fs_inode *in, struct model *m,
			uint64_t size)
{
	assert_int_equal(ext4fs_file_truncate(img->fs, ino, in, size), 0);
	if (size < m->size)
		memset(m->data + size, 0, (size_t)(m->size - size));
	m->size = size;
}

/* -- tests -- */

static void one_write_is_one_extent(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct map_test_tree t;
	struct model m;
	uint64_t rng = 1, free0, writes0;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	ino = map_test_new_file(&img, "big", &in);
	model_init(&m, 16 << 20);
	free0 = map_test_free(img.fs);
	writes0 = ext4fs_fs_io(img.fs)->stats.writes;
	do_write(&img, ino, &in, &m, 0, 16 << 20, &rng);
	/* The data goes down in one request, then the inode, once. */
	assert_int_equal(ext4fs_fs_io(img.fs)->stats.writes - writes0, 2);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, 1);
	assert_int_equal(t.blocks, 4096);
	assert_int_equal(map_test_free(img.fs), free0 - 4096);
	check_file(&img, ino, &in, &m);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(m.data);
}

static void partial_blocks_and_gaps(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct model m;
	uint64_t rng = 2;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 8192, 1024, rw_tweak_1k);
	ino = map_test_new_file(&img, "bits", &in);
	model_init(&m, 1 << 20);
	do_write(&img, ino, &in, &m, 100, 10, &rng);          /* inside one block */
	do_write(&img, ino, &in, &m, 5000, 3000, &rng);       /* a gap, then across blocks */
	do_write(&img, ino, &in, &m, 1000, 30, &rng);         /* across a block boundary */
	do_write(&img, ino, &in, &m, 4000, 2000, &rng);       /* over data and a hole */
	do_write(&img, ino, &in, &m, 9999, 1, &rng);          /* past the end, partial block */
	check_file(&img, ino, &in, &m);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(m.data);
}

/* Random writes, punches, truncates and preallocations, checked against the model. */
static void random_ops(uint32_t bs, void (*tweak)(struct ext4fs_mkfs_params *), unsigned ops,
		       int with_others)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct model m;
	uint64_t rng = 42 + bs, limit = 1 << 20, free0;
	uint32_t ino;
	int extents;

	rw_image_open(&img, 16384, bs, tweak);
	free0 = map_test_free(img.fs);
	ino = map_test_new_file(&img, "random", &in);
	extents = ext4fs_inode_has_extents(&in);
	model_init(&m, limit);
	for (unsigned i = 0; i < ops; i++) {
		uint32_t r = map_test_rand(&rng) % 100;
		uint64_t off = map_test_rand(&rng) % limit;
		uint64_t len = 1 + map_test_rand(&rng) % (r < 50 ? 3 * bs : 16 * bs);

		if (off + len > limit)
			len = limit - off;
		if (!with_others || r < 70) {
			do_write(&img, ino, &in, &m, off, (size_t)len, &rng);
		} else if (r < 85) {
			do_punch(&img, ino, &in, &m, off, len);
		} else if (r < 92) {
			do_truncate(&img, ino, &in, &m, off);
		} else {
			int keep = r & 1;
			int rc = ext4fs_file_fallocate(img.fs, ino, &in, off, len,
						       keep ? EXT4FS_FALLOC_KEEP_SIZE : 0);
			if (!extents && keep && (off + len + bs - 1) / bs > (m.size + bs - 1) / bs) {
				assert_int_equal(rc, EXT4FS_E_INVALID_ARG);
				continue;
			}
			assert_int_equal(rc, 0);
			if (!keep && off + len > m.size)
				m.size = off + len;
		}
		if (i % 97 == 0)
			check_file(&img, ino, &in, &m);
	}
	check_file(&img, ino, &in, &m);
	rw_image_assert_clean(&img);
	rw_image_reopen(&img);
	assert_int_equal(ext4fs_inode_read(img.fs, ino, &in), 0);
	check_file(&img, ino, &in, &m);
	/* Truncating to 0 gives every block back. */
	do_truncate(&img, ino, &in, &m, 0);
	assert_int_equal(in.i_blocks_lo, 0);
	assert_int_equal(map_test_free(img.fs), free0);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(m.data);
}

static void thousand_random_writes_1k(void **state)
{
	(void)state;
	random_ops(1024, rw_tweak_1k, 1000, 0);
}

static void thousand_random_writes_4k(void **state)
{
	(void)state;
	random_ops(4096, NULL, 1000, 0);
}

static void random_mixed_ops_1k(void **state)
{
	(void)state;
	random_ops(1024, rw_tweak_1k, 1500, 1);
}

static void random_mixed_ops_4k_nocsum(void **state)
{
	(void)state;
	random_ops(4096, rw_tweak_gdt_csum, 1500, 1);
}

static void random_mixed_ops_blockmap_1k(void **state)
{
	(void)state;
	random_ops(1024, rw_tweak_ext3ish_1k, 1500, 1);
}

static void random_mixed_ops_blockmap_4k(void **state)
{
	(void)state;
	random_ops(4096, rw_tweak_ext3ish_4k, 800, 1);
}

static void fallocate_then_partial_writes(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct map_test_tree t;
	struct model m;
	uint64_t rng = 3;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	ino = map_test_new_file(&img, "falloc", &in);
	model_init(&m, 1 << 20);
	/* Kept past the end: i_size stays 0, the blocks are one unwritten extent. */
	assert_int_equal(ext4fs_file_fallocate(img.fs, ino, &in, 0, 400 * 1024, EXT4FS_FALLOC_KEEP_SIZE), 0);
	assert_int_equal(ext4fs_inode_size(&in), 0);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.extents, 1);
	assert_int_equal(t.unwritten, 1);
	assert_int_equal(t.blocks, 100);
	rw_image_assert_clean(&img);
	/* Writes into it: written pieces, zeros around them in the same blocks. */
	do_write(&img, ino, &in, &m, 10000, 5000, &rng);
	do_write(&img, ino, &in, &m, 100000, 1, &rng);
	check_file(&img, ino, &in, &m);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.blocks, 100);
	assert_int_equal(t.extents, 5);
	assert_int_equal(t.unwritten, 3);
	rw_image_assert_clean(&img);
	/* Growing over the preallocation: the unwritten parts read as zeros. */
	assert_int_equal(ext4fs_file_fallocate(img.fs, ino, &in, 300000, 300000, 0), 0);
	m.size = 600000;
	check_file(&img, ino, &in, &m);
	map_test_tree(img.fs, ino, &in, &t);
	assert_int_equal(t.blocks, (600000 + 4095) / 4096);
	/* Writing all of it leaves written extents only, merged back together (the second
	   preallocation need not be physically next to the first). */
	do_write(&img, ino, &in, &m, 0, 600000, &rng);
	map_test_tree(img.fs, ino, &in, &t);
	assert_true(t.extents <= 2);
	assert_int_equal(t.unwritten, 0);
	check_file(&img, ino, &in, &m);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(m.data);
}

static void truncate_zeroes_the_tail_and_grows_sparse(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct model m;
	uint64_t rng = 4, p, run;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 8192, 1024, rw_tweak_1k);
	ino = map_test_new_file(&img, "trunc", &in);
	model_init(&m, 1 << 20);
	do_write(&img, ino, &in, &m, 0, 50000, &rng);
	do_truncate(&img, ino, &in, &m, 20500);
	check_file(&img, ino, &in, &m);
	/* Growing again: the old tail reads as zeros (it was zeroed on disk), the rest is a hole. */
	do_truncate(&img, ino, &in, &m, 300000);
	check_file(&img, ino, &in, &m);
	assert_int_equal(ext4fs_bmap(img.fs, ino, &in, 100, &p, &run, NULL), 0);
	assert_int_equal(p, 0);
	/* Writing past the end after the hole keeps the hole. */
	do_write(&img, ino, &in, &m, 299000, 5000, &rng);
	check_file(&img, ino, &in, &m);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(m.data);
}

static void punch_edges_and_middle(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct model m;
	uint64_t rng = 5, free0;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 16384, 4096, NULL);
	ino = map_test_new_file(&img, "punch", &in);
	model_init(&m, 1 << 20);
	free0 = map_test_free(img.fs);
	do_write(&img, ino, &in, &m, 0, 1 << 20, &rng);
	do_punch(&img, ino, &in, &m, 5000, 100000);      /* partial edges, whole blocks between */
	do_punch(&img, ino, &in, &m, 200000, 10);        /* inside one block */
	do_punch(&img, ino, &in, &m, 409600, 8192);      /* exactly two blocks */
	check_file(&img, ino, &in, &m);
	/* Whole blocks 2..24 and 100, 101 were freed. */
	assert_int_equal(map_test_free(img.fs), free0 - 256 + 23 + 2);
	rw_image_assert_clean(&img);
	/* Punching past the end frees nothing and keeps i_size. */
	do_punch(&img, ino, &in, &m, 2 << 20, 4096);
	check_file(&img, ino, &in, &m);
	rw_image_close(&img);
	free(m.data);
}

static void sparse_file_in_triple_indirect_range(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct model m;
	uint64_t rng = 6, far = (12ULL + 256 + 256 * 256 + 5) * 1024 + 123;
	unsigned char buf[3000], back[3000];
	size_t got;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 16384, 1024, rw_tweak_ext3ish_1k);
	ino = map_test_new_file(&img, "sparse", &in);
	model_init(&m, 300000);
	do_write(&img, ino, &in, &m, 0, 300000, &rng);   /* direct, single and double indirect */
	check_file(&img, ino, &in, &m);
	fill(buf, sizeof(buf), &rng);
	assert_int_equal(ext4fs_file_write(img.fs, ino, &in, far, buf, sizeof(buf), 0), 0);
	assert_int_equal(ext4fs_inode_size(&in), far + sizeof(buf));
	assert_int_equal(ext4fs_file_read(img.fs, ino, &in, far, back, sizeof(back), &got), 0);
	assert_int_equal(got, sizeof(back));
	assert_memory_equal(back, buf, sizeof(buf));
	assert_int_equal(ext4fs_file_read(img.fs, ino, &in, far - 3000, back, 3000, &got), 0);
	assert_int_equal(got, 3000);
	for (unsigned i = 0; i < 3000; i++)
		assert_int_equal(back[i], 0);
	rw_image_assert_clean(&img);
	/* The far end goes with a truncate back into the written part. */
	m.size = 300000;
	do_truncate(&img, ino, &in, &m, 250001);
	check_file(&img, ino, &in, &m);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(m.data);
}

static void large_files_need_large_file(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char b = 1;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 4096, 4096, ext2_small_files);
	ino = map_test_new_file(&img, "small", &in);
	assert_int_equal(ext4fs_file_write(img.fs, ino, &in, 0x80000000ULL, &b, 1, 0), EXT4FS_E_FILE_TOO_BIG);
	assert_int_equal(ext4fs_file_truncate(img.fs, ino, &in, 0x80000000ULL), EXT4FS_E_FILE_TOO_BIG);
	assert_int_equal(ext4fs_file_write(img.fs, ino, &in, 0x7FFFFFFEULL, &b, 1, 0), 0);
	assert_int_equal(ext4fs_inode_size(&in), 0x7FFFFFFFULL);
	assert_false(ext4fs_has_ro_compat(img.fs, EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE));
	rw_image_assert_clean(&img);
	rw_image_close(&img);
}

static void out_of_space(void (*tweak)(struct ext4fs_mkfs_params *), uint32_t bs)
{
	struct rw_image img;
	struct ext4fs_inode in;
	struct model m;
	uint64_t rng = 7, size = 40 << 20, free0;
	unsigned char *buf = malloc(size);
	uint32_t ino, ino2;

	assert_non_null(buf);
	fill(buf, size, &rng);
	rw_image_open(&img, (16 << 20) / bs, bs, tweak);
	ino = map_test_new_file(&img, "full", &in);
	free0 = map_test_free(img.fs);
	assert_int_equal(ext4fs_file_write(img.fs, ino, &in, 0, buf, size, size), EXT4FS_E_NO_SPACE);
	/* What was written stays, i_size covers exactly that, and nothing leaked. */
	assert_true(ext4fs_inode_size(&in) > 0);
	assert_true(ext4fs_inode_size(&in) < size);
	model_init(&m, size);
	memcpy(m.data, buf, ext4fs_inode_size(&in));
	m.size = ext4fs_inode_size(&in);
	check_file(&img, ino, &in, &m);
	rw_image_assert_clean(&img);
	/* Freeing gives it all back. */
	do_truncate(&img, ino, &in, &m, 0);
	assert_int_equal(map_test_free(img.fs), free0);
	/* A second file in small unaligned pieces runs out the same way. */
	ino2 = map_test_new_file(&img, "full2", &in);
	uint64_t off = 0;
	int rc = 0;
	while (!rc && off < size) {
		rc = ext4fs_file_write(img.fs, ino2, &in, off, buf + off, 7777, 0);
		if (!rc)
			off += 7777;
	}
	assert_int_equal(rc, EXT4FS_E_NO_SPACE);
	assert_true(ext4fs_inode_size(&in) >= off);
	memcpy(m.data, buf, ext4fs_inode_size(&in));
	m.size = ext4fs_inode_size(&in);
	check_file(&img, ino2, &in, &m);
	rw_image_assert_clean(&img);
	rw_image_close(&img);
	free(m.data);
	free(buf);
}

static void out_of_space_extents_1k(void **state)
{
	(void)state;
	out_of_space(rw_tweak_1k, 1024);
}

static void out_of_space_extents_4k(void **state)
{
	(void)state;
	out_of_space(NULL, 4096);
}

static void out_of_space_blockmap_1k(void **state)
{
	(void)state;
	out_of_space(rw_tweak_ext3ish_1k, 1024);
}

static void special_inodes_are_refused(void **state)
{
	struct rw_image img;
	struct ext4fs_inode in;
	unsigned char b = 0;
	uint32_t ino;

	(void)state;
	rw_image_open(&img, 4096, 4096, NULL);
	ino = map_test_new_file(&img, "link", &in);
	in.i_mode = EXT4FS_S_IFLNK | 0777;
	in.i_flags &= ~EXT4FS_EXTENTS_FL;
	ext4fs_inode_set_size(&in, 5);
	memcpy(in.i_block, "abcde", 5);
	assert_int_equal(ext4fs_file_write(img.fs, ino, &in, 0, &b, 1, 0), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_file_truncate(img.fs, ino, &in, 0), EXT4FS_E_INVALID_ARG);
	in.i_mode = EXT4FS_S_IFREG | 0644;
	in.i_flags |= EXT4FS_INLINE_DATA_FL;
	assert_int_equal(ext4fs_file_punch(img.fs, ino, &in, 0, 1), EXT4FS_E_INVALID_ARG);
	assert_int_equal(ext4fs_file_fallocate(img.fs, ino, &in, 0, 1, 0), EXT4FS_E_INVALID_ARG);
	rw_image_close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_write_is_one_extent),
		cmocka_unit_test(partial_blocks_and_gaps),
		cmocka_unit_test(thousand_random_writes_1k),
		cmocka_unit_test(thousand_random_writes_4k),
		cmocka_unit_test(random_mixed_ops_1k),
		cmocka_unit_test(random_mixed_ops_4k_nocsum),
		cmocka_unit_test(random_mixed_ops_blockmap_1k),
		cmocka_unit_test(random_mixed_ops_blockmap_4k),
		cmocka_unit_test(fallocate_then_partial_writes),
		cmocka_unit_test(truncate_zeroes_the_tail_and_grows_sparse),
		cmocka_unit_test(punch_edges_and_middle),
		cmocka_unit_test(sparse_file_in_triple_indirect_range),
		cmocka_unit_test(large_files_need_large_file),
		cmocka_unit_test(out_of_space_extents_1k),
		cmocka_unit_test(out_of_space_extents_4k),
		cmocka_unit_test(out_of_space_blockmap_1k),
		cmocka_unit_test(special_inodes_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
