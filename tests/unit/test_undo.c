/*
 * test_undo.c - undo files (undo.h): changes made through the undo channel,
 * by the library's file system calls and by raw writes, are rolled back
 * byte for byte by ext4fs_undo_apply(); the file is durable and valid
 * before each change reaches the image; the header's state follows flushes;
 * damaged and hostile undo files are refused before anything is written;
 * an existing undo file is kept unless the caller asks to replace it.
 * e2fsprogs' own e2undo judges the same files in t0130.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/crc.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/super.h"
#include "ext4fs/undo.h"
#include "../lib/rw_image.h"

/* The format's numbers, spelled out here so the test does not share the module's. */
#define T_HDR_NUM_KEYS   8
#define T_HDR_KEY_OFFSET 24
#define T_HDR_STATE      44
#define T_HDR_CRC        508
#define T_KB_CRC         4
#define T_KEY0           16

struct image {
	unsigned char *orig;     /* the file system as made */
	unsigned char *work;     /* the copy the change is made in */
	size_t size;
	uint32_t bs;
};

static char undo_dir[64];
static char undo_path[128];

static int setup(void **state)
{
	(void)state;
	strcpy(undo_dir, "/tmp/test_undo.XXXXXX");
	if (!mkdtemp(undo_dir))
		return -1;
	snprintf(undo_path, sizeof(undo_path), "%s/fs.e2undo", undo_dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(undo_path);
	rmdir(undo_dir);
	return 0;
}

static void image_make(struct image *im, uint64_t blocks, uint32_t bs,
		       void (*tweak)(struct ext4fs_mkfs_params *))
{
	struct rw_image rw;

	struct ext4fs_bitmap *bm;

	rw_image_open(&rw, blocks, bs, tweak);
	assert_int_equal(ext4fs_flush(rw.fs), 0);
	/*
	 * Free blocks hold a pattern of their own, not zeros: old contents
	 * saved at the wrong place in the undo file then show.
	 */
	assert_int_equal(ext4fs_block_bitmap_load(rw.fs, &bm), 0);
	for (uint64_t b = ext4fs_bitmap_start(bm); b <= ext4fs_bitmap_end(bm); b++)
		if (ext4fs_bitmap_test(bm, b) == 0)
			memset(rw.buf + b * bs, (int)(b * 7 + 3) & 0xff, bs);
	ext4fs_bitmap_free(bm);
	im->size = rw.size;
	im->bs = bs;
	im->orig = malloc(rw.size);
	im->work = malloc(rw.size);
	assert_non_null(im->orig);
	assert_non_null(im->work);
	memcpy(im->orig, rw.buf, rw.size);
	memcpy(im->work, rw.buf, rw.size);
	rw_image_close(&rw);
	unlink(undo_path);
}

static void image_free(struct image *im)
{
	free(im->orig);
	free(im->work);
}

/* An undo channel over the working copy. */
static struct ext4fs_io *undo_open_flags(struct image *im, unsigned flags)
{
	struct ext4fs_io *mem, *undo;

	assert_int_equal(ext4fs_io_open_memory(im->work, im->size, 1, &mem), 0);
	assert_int_equal(ext4fs_io_undo_wrap(mem, undo_path, flags, &undo), 0);
	return undo;
}

static struct ext4fs_io *undo_open(struct image *im)
{
	return undo_open_flags(im, 0);
}

static int apply(struct image *im, unsigned flags, struct ext4fs_undo_result *res)
{
	struct ext4fs_io *mem;
	int err;

	assert_int_equal(ext4fs_io_open_memory(im->work, im->size, 1, &mem), 0);
	err = ext4fs_undo_apply(undo_path, mem, flags, res);
	ext4fs_io_close(mem);
	return err;
}

/* Files, a directory, data and an unlink through the library's calls, then close. */
static void change_fs_flags(struct image *im, unsigned flags)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_new_attrs reg = { .mode = 0100644 }, dir = { .mode = 040755 };
	struct ext4fs_fs *fs;
	struct ext4fs_inode in;
	unsigned char data[20000];
	uint32_t d, f, g;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 1);
	assert_int_equal(ext4fs_open_io(undo_open_flags(im, flags), &opts, &fs, NULL, 0), 0);
	assert_int_equal(ext4fs_mkdir(fs, 2, "dir", &dir, &d), 0);
	assert_int_equal(ext4fs_mknod(fs, d, "file", &reg, &f), 0);
	assert_int_equal(ext4fs_inode_read(fs, f, &in), 0);
	assert_int_equal(ext4fs_file_write(fs, f, &in, 0, data, sizeof(data), sizeof(data)), 0);
	assert_int_equal(ext4fs_mknod(fs, 2, "gone", &reg, &g), 0);
	assert_int_equal(ext4fs_inode_read(fs, g, &in), 0);
	assert_int_equal(ext4fs_file_write(fs, g, &in, 0, data, 5000, 0), 0);
	assert_int_equal(ext4fs_unlink(fs, 2, "gone"), 0);
	assert_int_equal(ext4fs_flush(fs), 0);
	ext4fs_close(fs);
}

static void change_fs(struct image *im)
{
	change_fs_flags(im, 0);
}

static void roundtrip(uint64_t blocks, uint32_t bs, void (*tweak)(struct ext4fs_mkfs_params *))
{
	struct ext4fs_undo_result res;
	struct image im;

	image_make(&im, blocks, bs, tweak);
	change_fs(&im);
	assert_memory_not_equal(im.orig, im.work, im.size);
	assert_int_equal(apply(&im, EXT4FS_UNDO_APPLY_DRY_RUN, &res), 0);
	assert_memory_not_equal(im.orig, im.work, im.size);
	assert_int_equal(apply(&im, 0, &res), 0);
	assert_true(res.keys > 0);
	assert_int_equal(res.block_size, bs);
	assert_int_equal(res.fs_block_size, bs);
	assert_int_equal(res.finished, 1);
	assert_int_equal(res.marked_unclean, 0);
	assert_memory_equal(im.orig, im.work, im.size);
	/* Applied once, the file system no longer matches the saved superblock. */
	assert_int_equal(apply(&im, 0, &res), EXT4FS_E_UNDO_WRONG_FS);
	image_free(&im);
}

static void test_roundtrip_1k(void **state)
{
	(void)state;
	roundtrip(8192, 1024, rw_tweak_1k_gdt_csum);
}

static void test_roundtrip_4k(void **state)
{
	(void)state;
	roundtrip(8192, 4096, NULL);
}

/* Scattered and long runs of raw writes: several key blocks, keys cut at 512 blocks. */
static void test_raw_writes_many_keys(void **state)
{
	struct ext4fs_undo_result res;
	struct image im;
	struct ext4fs_io *undo;
	unsigned char blk[1024];

	(void)state;
	image_make(&im, 8192, 1024, rw_tweak_1k_gdt_csum);
	undo = undo_open(&im);
	memset(blk, 0xa5, sizeof(blk));
	for (uint64_t b = 3000; b < 3400; b += 2)       /* 200 keys: four key blocks of 63 */
		assert_int_equal(ext4fs_io_write(undo, b * 1024 + 100, blk, 10), 0);
	for (uint64_t b = 4000; b < 5024; b++)          /* one run of 1024: keys of 511, 511 and 2 blocks */
		assert_int_equal(ext4fs_io_write(undo, b * 1024, blk, sizeof(blk)), 0);
	assert_int_equal(ext4fs_io_zeroout(undo, 6000 * 1024 + 5, 3000), 0);
	assert_int_equal(ext4fs_io_discard(undo, 7000 * 1024, 4096), 0);
	/* A second write to a saved block goes straight through. */
	assert_int_equal(ext4fs_io_write(undo, 3000 * 1024, blk, sizeof(blk)), 0);
	ext4fs_io_close(undo);
	assert_int_equal(apply(&im, EXT4FS_UNDO_APPLY_DRY_RUN, &res), 0);
	assert_int_equal(res.keys, 200 + 3 + 1 + 1);
	assert_int_equal(res.bytes, (200 + 1024 + 3 + 4) * 1024);
	assert_int_equal(apply(&im, 0, &res), 0);
	assert_memory_equal(im.orig, im.work, im.size);
	image_free(&im);
}

/*
 * An inner channel that, at each write, checks that the undo file on disk
 * already covers it: a dry run of the apply must pass and count the bytes.
 */
struct spy {
	struct ext4fs_io *mem;
	int writes;
};

static int spy_read(struct ext4fs_io *io, uint64_t off, void *buf, size_t len)
{
	return ext4fs_io_read(((struct spy *)io->priv)->mem, off, buf, len);
}

static int spy_write(struct ext4fs_io *io, uint64_t off, const void *buf, size_t len)
{
	struct spy *s = io->priv;
	struct ext4fs_undo_result res;

	assert_int_equal(ext4fs_undo_apply(undo_path, s->mem, EXT4FS_UNDO_APPLY_DRY_RUN, &res), 0);
	assert_int_equal(res.finished, 0);
	assert_true(res.bytes >= (uint64_t)(off % 1024 + len));
	s->writes++;
	return ext4fs_io_write(s->mem, off, buf, len);
}

static int spy_flush(struct ext4fs_io *io)
{
	return ext4fs_io_flush(((struct spy *)io->priv)->mem);
}

static void spy_readahead(struct ext4fs_io *io, uint64_t off, uint64_t len)
{
	(void)io, (void)off, (void)len;
}

static void spy_close(struct ext4fs_io *io)
{
	ext4fs_io_close(((struct spy *)io->priv)->mem);
}

static const struct ext4fs_io_ops spy_ops = {
	spy_read, spy_write, spy_flush, spy_readahead, spy_close, NULL, NULL,
};

static void test_durable_before_write(void **state)
{
	struct image im;
	struct spy s = { 0 };
	struct ext4fs_io *spy = calloc(1, sizeof(*spy)), *undo;
	unsigned char blk[2048];

	(void)state;
	assert_non_null(spy);
	image_make(&im, 8192, 1024, rw_tweak_1k_gdt_csum);
	assert_int_equal(ext4fs_io_open_memory(im.work, im.size, 1, &s.mem), 0);
	spy->ops = &spy_ops;
	spy->priv = &s;
	spy->size = im.size;
	spy->name = strdup("spy");
	assert_int_equal(ext4fs_io_undo_wrap(spy, undo_path, 0, &undo), 0);
	memset(blk, 0x5a, sizeof(blk));
	assert_int_equal(ext4fs_io_write(undo, 5000 * 1024 + 1000, blk, sizeof(blk)), 0);
	assert_int_equal(ext4fs_io_write(undo, 5001 * 1024, blk, 10), 0);
	assert_int_equal(ext4fs_io_write(undo, 6000 * 1024, blk, 10), 0);
	assert_int_equal(s.writes, 3);
	ext4fs_io_close(undo);      /* closes the spy and its memory channel */
	assert_int_equal(apply(&im, 0, NULL), 0);
	assert_memory_equal(im.orig, im.work, im.size);
	image_free(&im);
}

static uint32_t header_state(void)
{
	unsigned char hdr[512];
	int fd = open(undo_path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	close(fd);
	assert_int_equal(hdr[T_HDR_CRC] | hdr[T_HDR_CRC + 1] << 8 | hdr[T_HDR_CRC + 2] << 16 |
			 (uint32_t)hdr[T_HDR_CRC + 3] << 24, ext4fs_crc32c(~0U, hdr, T_HDR_CRC));
	return hdr[T_HDR_STATE];
}

/* Unfinished while changing, finished after a flush, unfinished at the next change. */
static void test_state_follows_flush(void **state)
{
	struct image im;
	struct ext4fs_io *undo;
	unsigned char b = 1;

	(void)state;
	image_make(&im, 8192, 1024, rw_tweak_1k_gdt_csum);
	undo = undo_open(&im);
	assert_int_equal(header_state(), 0);
	assert_int_equal(ext4fs_io_write(undo, 5000 * 1024, &b, 1), 0);
	assert_int_equal(header_state(), 0);
	assert_int_equal(ext4fs_io_flush(undo), 0);
	assert_int_equal(header_state(), 1);
	assert_int_equal(ext4fs_io_write(undo, 5000 * 1024 + 1, &b, 1), 0);   /* already saved */
	assert_int_equal(header_state(), 0);
	ext4fs_io_close(undo);
	assert_int_equal(header_state(), 1);
	image_free(&im);
}

static void put32le(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

static void file_patch(uint64_t off, const void *bytes, size_t len)
{
	int fd = open(undo_path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void file_read(uint64_t off, void *bytes, size_t len)
{
	int fd = open(undo_path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, bytes, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* Give the header a fresh checksum after an edit, as a hostile file would. */
static void header_reseal(void)
{
	unsigned char hdr[512];

	file_read(0, hdr, sizeof(hdr));
	put32le(hdr + T_HDR_CRC, ext4fs_crc32c(~0U, hdr, T_HDR_CRC));
	file_patch(0, hdr, sizeof(hdr));
}

/* The same for key block blk of size bs. */
static void keyblock_reseal(uint64_t blk, uint32_t bs)
{
	unsigned char *kb = malloc(bs);

	file_read(blk * bs, kb, bs);
	put32le(kb + T_KB_CRC, 0);
	put32le(kb + T_KB_CRC, ext4fs_crc32c(~0U, kb, bs));
	file_patch(blk * bs, kb, bs);
	free(kb);
}

/* Damage the undo file made by change_fs() with fn; the apply must fail with want and write nothing. */
static void refused(void (*damage)(uint32_t bs), int want)
{
	struct image im;
	unsigned char *before;

	image_make(&im, 8192, 1024, rw_tweak_1k_gdt_csum);
	change_fs(&im);
	before = malloc(im.size);
	assert_non_null(before);
	memcpy(before, im.work, im.size);
	damage(im.bs);
	assert_int_equal(apply(&im, 0, NULL), want);
	assert_memory_equal(before, im.work, im.size);
	free(before);
	image_free(&im);
}

static void flip(uint64_t off)
{
	unsigned char c;

	file_read(off, &c, 1);
	c ^= 0x10;
	file_patch(off, &c, 1);
}

static void damage_header(uint32_t bs)        { (void)bs; flip(T_HDR_NUM_KEYS); }
static void damage_key_block(uint32_t bs)     { flip(2 * bs + T_KEY0 + 2); }
static void damage_data(uint32_t bs)          { flip(3 * bs + 17); }
static void damage_magic(uint32_t bs)         { (void)bs; flip(0); }
static void damage_sb_copy(uint32_t bs)       { flip(bs + 0x78); }   /* s_volume_name */

static void hostile_num_keys(uint32_t bs)
{
	unsigned char v[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };

	(void)bs;
	file_patch(T_HDR_NUM_KEYS, v, sizeof(v));
	header_reseal();
}

static void hostile_key_offset(uint32_t bs)
{
	unsigned char v[8] = { 0, 0, 0, 0, 0, 0, 0, 0x10 };

	(void)bs;
	file_patch(T_HDR_KEY_OFFSET, v, sizeof(v));
	header_reseal();
}

static void hostile_fsblk(uint32_t bs)
{
	unsigned char v[8] = { 0, 0, 0, 0, 0, 0, 1, 0 };   /* block 2^48 */

	file_patch(2 * bs + T_KEY0, v, sizeof(v));
	keyblock_reseal(2, bs);
}

static void hostile_fsblk_end(uint32_t bs)
{
	unsigned char v[8] = { 0xff, 0x1f, 0, 0, 0, 0, 0, 0 };   /* the last block, */
	unsigned char len[4] = { 0, 0x08, 0, 0 };                 /* and two blocks long */

	file_patch(2 * bs + T_KEY0, v, sizeof(v));
	file_patch(2 * bs + T_KEY0 + 12, len, sizeof(len));
	keyblock_reseal(2, bs);
}

static void hostile_size_zero(uint32_t bs)
{
	unsigned char v[4] = { 0 };

	file_patch(2 * bs + T_KEY0 + 12, v, sizeof(v));
	keyblock_reseal(2, bs);
}

static void hostile_size_huge(uint32_t bs)
{
	unsigned char v[4] = { 0xff, 0xff, 0xff, 0xff };

	file_patch(2 * bs + T_KEY0 + 12, v, sizeof(v));
	keyblock_reseal(2, bs);
}

static void hostile_truncated(uint32_t bs)
{
	struct stat st;

	assert_int_equal(stat(undo_path, &st), 0);
	assert_int_equal(truncate(undo_path, st.st_size - bs / 2), 0);
}

static void test_corrupt_header(void **state)    { (void)state; refused(damage_header, EXT4FS_E_UNDO_CORRUPT); }
static void test_corrupt_magic(void **state)     { (void)state; refused(damage_magic, EXT4FS_E_UNDO_CORRUPT); }
static void test_corrupt_key_block(void **state) { (void)state; refused(damage_key_block, EXT4FS_E_UNDO_CORRUPT); }
static void test_corrupt_data(void **state)      { (void)state; refused(damage_data, EXT4FS_E_UNDO_CORRUPT); }
static void test_corrupt_sb_copy(void **state)   { (void)state; refused(damage_sb_copy, EXT4FS_E_UNDO_WRONG_FS); }

static void test_hostile_numbers(void **state)
{
	(void)state;
	refused(hostile_num_keys, EXT4FS_E_UNDO_CORRUPT);
	refused(hostile_key_offset, EXT4FS_E_UNDO_CORRUPT);
	refused(hostile_fsblk, EXT4FS_E_UNDO_CORRUPT);
	refused(hostile_fsblk_end, EXT4FS_E_UNDO_CORRUPT);
	refused(hostile_size_zero, EXT4FS_E_UNDO_CORRUPT);
	refused(hostile_size_huge, EXT4FS_E_UNDO_CORRUPT);
	refused(hostile_truncated, EXT4FS_E_UNDO_CORRUPT);
}

/* A file system changed after the undo file was closed is refused; forced, it is rolled back and marked. */
static void test_changed_fs(void **state)
{
	struct ext4fs_undo_result res;
	struct ext4fs_super sb;
	struct image im;

	(void)state;
	image_make(&im, 8192, 1024, rw_tweak_1k_gdt_csum);
	change_fs(&im);
	im.work[1024 + 0x78] ^= 1;                   /* s_volume_name */
	assert_int_equal(apply(&im, 0, &res), EXT4FS_E_UNDO_WRONG_FS);
	assert_int_equal(apply(&im, EXT4FS_UNDO_APPLY_FORCE, &res), 0);
	assert_int_equal(res.marked_unclean, 1);
	ext4fs_super_decode(&sb, im.work + 1024);
	assert_int_equal(sb.s_state & EXT4FS_STATE_VALID, 0);
	/* Apart from the state, the original came back. */
	im.work[1024 + 0x3A] |= EXT4FS_STATE_VALID;
	assert_memory_equal(im.orig, im.work, im.size);
	image_free(&im);
}

/* An unfinished file is applied and the file system marked for a check, as e2undo does. */
static void test_unfinished(void **state)
{
	struct ext4fs_undo_result res;
	struct image im;
	unsigned char zero[4] = { 0 };

	(void)state;
	image_make(&im, 8192, 4096, NULL);
	change_fs(&im);
	file_patch(T_HDR_STATE, zero, sizeof(zero));
	header_reseal();
	assert_int_equal(apply(&im, 0, &res), 0);
	assert_int_equal(res.finished, 0);
	assert_int_equal(res.marked_unclean, 1);
	/* metadata_csum: the superblock's checksum follows the change. */
	assert_int_equal(ext4fs_super_csum(im.work + 1024),
			 (uint32_t)(im.work[1024 + 0x3FC] | im.work[1024 + 0x3FD] << 8 |
				    im.work[1024 + 0x3FE] << 16 | (uint32_t)im.work[1024 + 0x3FF] << 24));
	image_free(&im);
}

static void test_existing_file(void **state)
{
	struct image im;
	struct ext4fs_io *mem, *undo = NULL;
	int fd;

	(void)state;
	image_make(&im, 8192, 1024, rw_tweak_1k_gdt_csum);
	fd = open(undo_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(ext4fs_io_open_memory(im.work, im.size, 1, &mem), 0);
	assert_int_equal(ext4fs_io_undo_wrap(mem, undo_path, 0, &undo), -EEXIST);
	assert_null(undo);
	assert_int_equal(ext4fs_io_undo_wrap(mem, undo_path, EXT4FS_UNDO_APPEND, &undo), EXT4FS_E_UNDO_CORRUPT);
	assert_null(undo);
	{
		char keep[5] = { 0 };
		file_read(0, keep, 4);
		assert_string_equal(keep, "keep");
	}
	/* inner is still the caller's and usable. */
	assert_int_equal(ext4fs_io_undo_wrap(mem, undo_path, EXT4FS_UNDO_OVERWRITE, &undo), 0);
	assert_int_equal(header_state(), 0);
	ext4fs_io_close(undo);
	assert_int_equal(header_state(), 1);
	assert_int_equal(apply(&im, 0, NULL), 0);
	assert_memory_equal(im.orig, im.work, im.size);
	image_free(&im);
}

/* Separate one-byte writes to every other block from block `first`, count of them. */
static void scattered(struct ext4fs_io *undo, uint64_t first, unsigned count)
{
	unsigned char b = 0x77;

	for (unsigned i = 0; i < count; i++)
		assert_int_equal(ext4fs_io_write(undo, (first + 2 * i) * 1024 + 9, &b, 1), 0);
}

/*
 * EXT4FS_UNDO_APPEND carries on with the file of an earlier change: one
 * apply rolls both back.  The earlier file ends with a part-filled key
 * block, a full one, or holds the library's calls.
 */
static void append_case(unsigned first_keys)
{
	struct ext4fs_undo_result res;
	struct image im;
	struct ext4fs_io *undo;

	image_make(&im, 8192, 1024, rw_tweak_1k_gdt_csum);
	undo = undo_open(&im);
	scattered(undo, 3000, first_keys);
	ext4fs_io_close(undo);
	undo = undo_open_flags(&im, EXT4FS_UNDO_APPEND);
	assert_int_equal(header_state(), 0);
	scattered(undo, 3000, first_keys);              /* saved before: nothing new */
	scattered(undo, 3000 + 2 * first_keys, 10);     /* ten new keys */
	scattered(undo, 3001, 1);                       /* between saved blocks: a key of its own */
	ext4fs_io_close(undo);
	assert_int_equal(apply(&im, EXT4FS_UNDO_APPLY_DRY_RUN, &res), 0);
	assert_int_equal(res.keys, first_keys + 11);
	assert_int_equal(res.bytes, (first_keys + 11) * 1024);
	assert_int_equal(apply(&im, 0, &res), 0);
	assert_memory_equal(im.orig, im.work, im.size);
	image_free(&im);
}

static void test_append_part_filled(void **state) { (void)state; append_case(20); }
static void test_append_full_block(void **state)  { (void)state; append_case(63); }

static void test_append_fs_calls(void **state)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_new_attrs dir = { .mode = 040755 };
	struct ext4fs_fs *fs;
	struct image im;
	unsigned char *after_first, *undo_before;
	struct stat st;
	uint32_t d;
	int fd;

	(void)state;
	image_make(&im, 8192, 4096, NULL);
	change_fs(&im);
	after_first = malloc(im.size);
	assert_non_null(after_first);
	memcpy(after_first, im.work, im.size);
	assert_int_equal(ext4fs_open_io(undo_open_flags(&im, EXT4FS_UNDO_APPEND), &opts, &fs, NULL, 0), 0);
	assert_int_equal(ext4fs_mkdir(fs, 2, "second", &dir, &d), 0);
	assert_int_equal(ext4fs_rmdir(fs, 2, "dir"), EXT4FS_E_DIR_NOT_EMPTY);
	assert_int_equal(ext4fs_mkdir(fs, d, "third", &dir, &d), 0);
	ext4fs_close(fs);
	assert_memory_not_equal(after_first, im.work, im.size);
	/* Changed behind the undo file's back: appending is refused and the file kept as it was. */
	im.work[1024 + 0x78] ^= 1;
	assert_int_equal(stat(undo_path, &st), 0);
	undo_before = malloc((size_t)st.st_size);
	assert_non_null(undo_before);
	file_read(0, undo_before, (size_t)st.st_size);
	{
		struct ext4fs_io *mem, *undo = NULL;
		unsigned char *now = malloc((size_t)st.st_size);

		assert_non_null(now);
		assert_int_equal(ext4fs_io_open_memory(im.work, im.size, 1, &mem), 0);
		assert_int_equal(ext4fs_io_undo_wrap(mem, undo_path, EXT4FS_UNDO_APPEND, &undo),
				 EXT4FS_E_UNDO_WRONG_FS);
		assert_int_equal(ext4fs_io_undo_wrap(mem, undo_path, EXT4FS_UNDO_APPEND | EXT4FS_UNDO_OVERWRITE,
						     &undo), EXT4FS_E_INVALID_ARG);
		ext4fs_io_close(mem);
		file_read(0, now, (size_t)st.st_size);
		assert_memory_equal(undo_before, now, (size_t)st.st_size);
		free(now);
	}
	im.work[1024 + 0x78] ^= 1;
	assert_int_equal(apply(&im, 0, NULL), 0);
	assert_memory_equal(im.orig, im.work, im.size);
	/* An empty existing file is started anew. */
	fd = open(undo_path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	close(fd);
	change_fs_flags(&im, EXT4FS_UNDO_APPEND);
	assert_int_equal(apply(&im, 0, NULL), 0);
	assert_memory_equal(im.orig, im.work, im.size);
	free(undo_before);
	free(after_first);
	image_free(&im);
}

/*
 * Hostile files: bytes of the header and of both key blocks changed at
 * random and the checksums made right again, 400 times.  Every apply must
 * end (0 or an error, never a crash or a read or write outside the file or
 * the image: the sanitizer build judges that), and one that fails must
 * leave the image as it was.
 */
static void test_hostile_random(void **state)
{
	struct image im;
	struct ext4fs_io *undo;
	unsigned char *file, *changed, *target;
	uint32_t seed = 12345;
	struct stat st;
	int fd;

	(void)state;
	image_make(&im, 2048, 1024, rw_tweak_1k_gdt_csum);
	undo = undo_open(&im);
	scattered(undo, 600, 70);                 /* 70 keys: two key blocks */
	ext4fs_io_close(undo);
	assert_int_equal(stat(undo_path, &st), 0);
	file = malloc((size_t)st.st_size);
	changed = malloc(im.size);
	target = malloc(im.size);
	assert_non_null(file);
	assert_non_null(changed);
	assert_non_null(target);
	file_read(0, file, (size_t)st.st_size);
	memcpy(changed, im.work, im.size);
	for (int round = 0; round < 400; round++) {
		struct ext4fs_io *mem;
		int err, n = 1 + round % 4;

		fd = open(undo_path, O_WRONLY | O_TRUNC);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, file, (size_t)st.st_size), st.st_size);
		close(fd);
		for (int k = 0; k < n; k++) {
			uint64_t off;
			unsigned char v;

			seed = seed * 1103515245 + 12345;
			switch ((seed >> 8) % 3) {
			case 0:
				off = (seed >> 12) % 72;                        /* header fields */
				break;
			case 1:
				off = 2 * 1024 + (seed >> 12) % 1024;           /* first key block */
				break;
			default:
				off = (3 + 63) * 1024 + (seed >> 12) % 1024;    /* second key block */
				break;
			}
			seed = seed * 1103515245 + 12345;
			v = (unsigned char)(seed >> 16);
			file_patch(off, &v, 1);
		}
		header_reseal();
		keyblock_reseal(2, 1024);
		keyblock_reseal(3 + 63, 1024);
		memcpy(target, changed, im.size);
		assert_int_equal(ext4fs_io_open_memory(target, im.size, 1, &mem), 0);
		err = ext4fs_undo_apply(undo_path, mem, round % 8 == 0 ? EXT4FS_UNDO_APPLY_FORCE : 0, NULL);
		ext4fs_io_close(mem);
		assert_true(err <= 0);
		if (err)
			assert_memory_equal(target, changed, im.size);
	}
	free(file);
	free(changed);
	free(target);
	image_free(&im);
}

/* Not a file system: refused, and no undo file is left. */
static void test_no_superblock(void **state)
{
	unsigned char *buf = calloc(1, 65536);
	struct ext4fs_io *mem, *undo = NULL;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(ext4fs_io_open_memory(buf, 65536, 1, &mem), 0);
	assert_int_equal(ext4fs_io_undo_wrap(mem, undo_path, EXT4FS_UNDO_OVERWRITE, &undo), EXT4FS_E_BAD_MAGIC);
	assert_int_equal(access(undo_path, F_OK), -1);
	assert_int_equal(ext4fs_io_undo_set_fs_offset(mem, 1), EXT4FS_E_INVALID_ARG);
	ext4fs_io_close(mem);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip_1k, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_4k, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_writes_many_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_durable_before_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_follows_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_key_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_sb_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_fs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unfinished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_part_filled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_full_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_fs_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_random, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_superblock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
