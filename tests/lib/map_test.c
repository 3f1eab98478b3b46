/* map_test.c - see map_test.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/extent.h"
#include "map_test.h"

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

/* Split the last entry of the root directory's first block to make room for name. */
static void link_into_root(struct rw_image *img, const char *name, uint32_t ino)
{
	struct ext4fs_fs *fs = img->fs;
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	uint32_t bs = geo->block_size, end = geo->has_metadata_csum ? bs - EXT4FS_DIRENT_TAIL_SIZE : bs;
	uint32_t off = 0, last = 0, rec, used, need, len = (uint32_t)strlen(name);
	struct ext4fs_inode root;
	unsigned char *blk = malloc(bs);
	uint64_t pblk;

	assert_non_null(blk);
	assert_int_equal(ext4fs_inode_read(fs, EXT4FS_ROOT_INO, &root), 0);
	assert_int_equal(ext4fs_dir_block_read(fs, EXT4FS_ROOT_INO, &root, 0, blk, &pblk), 0);
	while (off < end) {
		last = off;
		rec = ext4fs_dirent_rec_len(get16(blk + off + 4), bs);
		assert_true(rec >= 8);
		off += rec;
	}
	assert_int_equal(off, end);
	rec = end - last;
	used = blk[last + 0] | blk[last + 1] | blk[last + 2] | blk[last + 3] ? (8u + blk[last + 6] + 3) & ~3u : 0;
	need = (8 + len + 3) & ~3u;
	assert_true(rec - used >= need);
	if (used)
		put16(blk + last + 4, (uint16_t)used);
	unsigned char *d = blk + last + used;
	put32(d, ino);
	put16(d + 4, (uint16_t)(rec - used));
	d[6] = (unsigned char)len;
	d[7] = geo->has_filetype ? EXT4FS_FT_REG_FILE : 0;
	memcpy(d + 8, name, len);
	if (geo->has_metadata_csum)
		put32(blk + end + 8, ext4fs_dirent_csum(fs, EXT4FS_ROOT_INO, root.i_generation, blk, end));
	assert_int_equal(ext4fs_block_write(fs, pblk, blk), 0);
	free(blk);
}

uint32_t map_test_new_file(struct rw_image *img, const char *name, struct ext4fs_inode *in)
{
	uint16_t mode = EXT4FS_S_IFREG | 0644;
	uint32_t ino;

	assert_int_equal(ext4fs_inode_alloc(img->fs, EXT4FS_ROOT_INO, mode, &ino), 0);
	ext4fs_inode_init_new(img->fs, ino, mode, 1000, 1000, in);
	assert_int_equal(ext4fs_inode_write(img->fs, ino, in), 0);
	link_into_root(img, name, ino);
	return ino;
}

static int tree_visit(const struct ext4fs_extent_visit *v, void *arg)
{
	struct map_test_tree *t = arg;

	t->depth = v->max_level;
	if (!v->is_leaf) {
		t->nodes++;
		return 0;
	}
	t->extents++;
	t->unwritten += v->unwritten != 0;
	t->blocks += v->len;
	return 0;
}

void map_test_tree(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in,
		   struct map_test_tree *t)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(ext4fs_extent_walk(fs, ino, in, tree_visit, t), 0);
}

void map_test_pick_runs(struct ext4fs_fs *fs, uint64_t from, unsigned n, unsigned runlen,
			uint64_t *out)
{
	const struct ext4fs_bitmap *bm;
	uint64_t b = from, last = ext4fs_geom(fs)->blocks_count - 1;

	assert_int_equal(ext4fs_fs_block_bitmap(fs, &bm), 0);
	for (unsigned i = 0; i < n; i++) {
		unsigned got = 0;
		while (got < runlen) {
			assert_true(b + got <= last);
			if (ext4fs_bitmap_test(bm, b + got)) {
				b += got + 1;
				got = 0;
			} else {
				got++;
			}
		}
		assert_int_equal(ext4fs_blocks_mark_used(fs, b, runlen), 0);
		out[i] = b;
		b += runlen + 1;   /* leave a gap so runs never touch */
	}
}

uint64_t map_test_free(struct ext4fs_fs *fs)
{
	return ext4fs_geom(fs)->free_blocks_count;
}

uint32_t map_test_rand(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*state >> 33);
}
