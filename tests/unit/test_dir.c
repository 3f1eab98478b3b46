/*
 * test_dir.c - directory iteration, checksums, htree index, lookup and path
 * resolution over images built in memory with mem_image.c (no external tools).
 *
 * The image: 1 KiB blocks, 256 blocks, one group.  Block 1 holds the
 * superblock, 2 the group descriptor, 3 and 4 the bitmaps, 5-20 the inode
 * table (64 inodes of 256 bytes); each test lays out directories in blocks
 * 21 and up, mapped directly from i_block (no extents).  With
 * metadata_csum the superblock, descriptor and inode checksums are filled
 * in through the library's own helpers just before opening; directory block
 * checksums are computed here from the documented formula.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/crc.h"
#include "ext4fs/dir.h"
#include "ext4fs/dxhash.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/htree.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/namei.h"
#include "ext4fs/super.h"
#include "../lib/mem_image.h"

#define BS          MEM_IMAGE_BS
#define NBLOCKS     256U
#define NINODES     64U
#define INODE_SIZE  256U
#define FIRST_FREE  21U
#define ROOT        2U

static uint32_t next_block;
static const uint32_t hash_seed[4] = { 0x11111111, 0x22222222, 0x33333333, 0x44444444 };
static const unsigned char uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* ---- image building ---- */

/* An empty file system; extra feature bits are or-ed in. */
static void make_image(uint32_t compat, uint32_t incompat, uint32_t ro_compat)
{
	const struct mem_image_layout l = {
		.blocks = NBLOCKS,
		.inodes = NINODES,
		.inode_size = INODE_SIZE,
		.compat = EXT4FS_FEATURE_COMPAT_EXT_ATTR | compat,
		.incompat = EXT4FS_FEATURE_INCOMPAT_FILETYPE | incompat,
		.ro_compat = ro_compat,
		.uuid = uuid,
		.extra_isize = 32,
		.checksum_type = 1,                /* crc32c */
	};

	mem_image_init(&l);
	for (int i = 0; i < 4; i++)
		put32(super() + 0xEC + 4 * i, hash_seed[i]);
	super()[0xFC] = EXT4FS_HASH_HALF_MD4;      /* s_def_hash_version */
	next_block = FIRST_FREE;
}

/* An inode of the given mode and size whose first blocks are blks[0..n). */
static void make_inode(uint32_t ino, uint16_t mode, uint32_t size, uint32_t flags,
		       const uint32_t *blks, unsigned n)
{
	unsigned char *r = mem_image_inode(ino, mode, size, flags);

	put32(r + 0x1C, n * (BS / 512));
	for (unsigned i = 0; i < n; i++)
		put32(r + 0x28 + 4 * i, blks[i]);
	put32(r + 0x64, 0x1000 + ino);             /* i_generation */
}

/* A directory of n blocks starting at a fresh block; returns the first. */
static uint32_t make_dir(uint32_t ino, unsigned n, uint32_t flags)
{
	uint32_t blks[12];

	for (unsigned i = 0; i < n; i++)
		blks[i] = next_block++;
	make_inode(ino, 040755, n * BS, flags, blks, n);
	return blks[0];
}

static void make_file(uint32_t ino)
{
	make_inode(ino, 0100644, 0, 0, NULL, 0);
}

/* A fast symlink to target. */
static void make_symlink(uint32_t ino, const char *target)
{
	make_inode(ino, 0120777, (uint32_t)strlen(target), 0, NULL, 0);
	memcpy(inode_rec(ino) + 0x28, target, strlen(target));
}

/* Entry at off of block b; returns the offset after it. */
static uint32_t dirent(unsigned char *b, uint32_t off, uint32_t ino, uint16_t rec_len,
		       const char *name, uint8_t ft)
{
	size_t len = strlen(name);

	put32(b + off, ino);
	put16(b + off + 4, rec_len);
	b[off + 6] = (unsigned char)len;
	b[off + 7] = ft;
	memcpy(b + off + 8, name, len);
	return off + rec_len;
}

/* Leaf block holding ".", ".." (when dot_ino) and names[] -> inos[] with a tail if csum. */
static void fill_leaf(unsigned char *b, uint32_t dot_ino, uint32_t parent, const char *const *names,
		      const uint32_t *inos, unsigned n)
{
	uint32_t end = csum_image() ? BS - 12 : BS, off = 0;

	memset(b, 0, BS);
	if (dot_ino) {
		off = dirent(b, off, dot_ino, 12, ".", EXT4FS_FT_DIR);
		off = dirent(b, off, parent, n ? 12 : (uint16_t)(end - off), "..", EXT4FS_FT_DIR);
	}
	for (unsigned i = 0; i < n; i++) {
		uint16_t len = (uint16_t)((8 + strlen(names[i]) + 3) & ~3U);
		if (i == n - 1)
			len = (uint16_t)(end - off);
		off = dirent(b, off, inos[i], len, names[i], EXT4FS_FT_REG_FILE);
	}
	if (!dot_ino && n == 0)
		dirent(b, 0, 0, (uint16_t)end, "", 0);
	if (csum_image()) {
		put32(b + BS - 12, 0);
		put16(b + BS - 8, 12);
		b[BS - 6] = 0;
		b[BS - 5] = EXT4FS_FT_DIR_CSUM;
	}
}

/* crc32c seed of inode ino: fs seed (crc of the uuid), inode number, generation. */
static uint32_t inode_seed(uint32_t ino)
{
	unsigned char le[4];
	uint32_t crc = mem_image_csum_seed();

	put32(le, ino);
	crc = ext4fs_crc32c(crc, le, 4);
	put32(le, get32(inode_rec(ino) + 0x64));
	return ext4fs_crc32c(crc, le, 4);
}

static void set_leaf_csum(uint32_t dir_ino, unsigned char *b)
{
	put32(b + BS - 4, ext4fs_crc32c(inode_seed(dir_ino), b, BS - 12));
}

/* Index block checksum: header and count entries, the tail's reserved word, then 4 zero bytes. */
static void set_dx_csum(uint32_t dir_ino, unsigned char *b, uint32_t count_off)
{
	static const unsigned char zero[4];
	uint32_t limit = b[count_off] | (b[count_off + 1] << 8);
	uint32_t count = b[count_off + 2] | (b[count_off + 3] << 8);
	uint32_t tail = count_off + 8 * limit;
	uint32_t crc = ext4fs_crc32c(inode_seed(dir_ino), b, count_off + 8 * count);

	crc = ext4fs_crc32c(crc, b + tail, 4);
	put32(b + tail + 4, ext4fs_crc32c(crc, zero, 4));
}

/* ---- collecting entries ---- */

struct seen {
	unsigned n;
	uint32_t ino[64];
	uint32_t rec_len[64];
	uint32_t offset[64];
	uint64_t lblk[64];
	unsigned flags[64];
	uint8_t ft[64];
	char name[64][256];
};

static int collect(const struct ext4fs_dirent *d, void *arg)
{
	struct seen *s = arg;

	assert_true(s->n < 64);
	assert_int_equal(strlen(d->name), d->name_len);
	s->ino[s->n] = d->inode;
	s->rec_len[s->n] = d->rec_len;
	s->offset[s->n] = d->offset;
	s->lblk[s->n] = d->lblk;
	s->flags[s->n] = d->flags;
	s->ft[s->n] = d->file_type;
	strcpy(s->name[s->n], d->name);
	s->n++;
	return 0;
}

static int iterate(struct ext4fs_fs *fs, uint32_t ino, unsigned flags, struct seen *s)
{
	struct ext4fs_inode inode;

	memset(s, 0, sizeof(*s));
	read_inode(fs, ino, &inode);
	return ext4fs_dir_iterate(fs, ino, &inode, flags, collect, s);
}

/* A one-block root directory with ".", "..", "alpha" (12) and "beta" (13). */
static unsigned char *simple_root(uint32_t ro_compat)
{
	static const char *const names[] = { "alpha", "beta" };
	static const uint32_t inos[] = { 12, 13 };

	make_image(0, 0, ro_compat);
	uint32_t b = make_dir(ROOT, 1, 0);
	fill_leaf(block(b), ROOT, ROOT, names, inos, 2);
	if (csum_image())
		set_leaf_csum(ROOT, block(b));
	make_file(12);
	make_file(13);
	return block(b);
}

/* ---- linear directories ---- */

static void dir_iterate__lists_a_linear_block_in_order(void **state)
{
	unsigned char *b = simple_root(0);
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, 0, &s), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.name[0], ".");
	assert_string_equal(s.name[1], "..");
	assert_string_equal(s.name[2], "alpha");
	assert_string_equal(s.name[3], "beta");
	assert_int_equal(s.ino[2], 12);
	assert_int_equal(s.offset[2], 24);
	assert_int_equal(s.rec_len[2], 16);
	assert_int_equal(s.ft[2], EXT4FS_FT_REG_FILE);
	assert_int_equal(s.ft[0], EXT4FS_FT_DIR);
	assert_int_equal(s.rec_len[3], BS - 40);
	assert_int_equal(s.lblk[3], 0);
	assert_int_equal(s.flags[3], 0);
	(void)b;
	ext4fs_close(fs);
}

static void dir_iterate__rejects_rec_len_past_block_end(void **state)
{
	unsigned char *b = simple_root(0);
	put16(b + 40 + 4, BS);                     /* "beta" at 40 now reaches past the end */
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, 0, &s), EXT4FS_E_DIR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "directory 2"));
	assert_non_null(strstr(ext4fs_errmsg(fs), "logical block 0"));
	assert_non_null(strstr(ext4fs_errmsg(fs), "offset 40"));
	assert_int_equal(s.n, 3);                  /* the good entries before it were seen */
	ext4fs_close(fs);
}

static void dir_iterate__rejects_zero_and_unaligned_rec_len(void **state)
{
	unsigned char *b = simple_root(0);
	put16(b + 24 + 4, 0);
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, 0, &s), EXT4FS_E_DIR_CORRUPT);
	ext4fs_close(fs);

	b = simple_root(0);
	put16(b + 24 + 4, 18);
	fs = open_image(0);
	assert_int_equal(iterate(fs, ROOT, 0, &s), EXT4FS_E_DIR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "offset 24"));
	ext4fs_close(fs);
}

static void dir_iterate__rejects_name_len_longer_than_the_record(void **state)
{
	unsigned char *b = simple_root(0);
	b[24 + 6] = 9;                             /* "alpha" record is 16 bytes: 8 + 9 > 16 */
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, 0, &s), EXT4FS_E_DIR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "name_len"));
	ext4fs_close(fs);
}

static void dir_iterate__shows_empty_entries_only_when_asked(void **state)
{
	unsigned char *b = simple_root(0);
	put32(b + 24, 0);                          /* "alpha" unused */
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, 0, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(iterate(fs, ROOT, EXT4FS_DIR_ITER_EMPTY, &s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.flags[2], EXT4FS_DIRENT_EMPTY);
	assert_int_equal(s.ino[2], 0);
	ext4fs_close(fs);
}

static void dir_iterate__finds_deleted_entries_in_slack_space(void **state)
{
	unsigned char *b = simple_root(0);
	/* "alpha" swallows "beta" the way an unlink merges records. */
	put16(b + 24 + 4, BS - 24);
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, 0, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(iterate(fs, ROOT, EXT4FS_DIR_ITER_DELETED, &s), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.name[3], "beta");
	assert_int_equal(s.ino[3], 13);
	assert_int_equal(s.offset[3], 40);
	assert_int_equal(s.flags[3], EXT4FS_DIRENT_DELETED);
	ext4fs_close(fs);
}

static void dir_iterate__ignores_slack_that_holds_no_plausible_chain(void **state)
{
	unsigned char *b = simple_root(0);
	put16(b + 24 + 4, BS - 24);
	put16(b + 40 + 4, 10);                     /* the old "beta" record is now garbage */
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, EXT4FS_DIR_ITER_DELETED, &s), 0);
	assert_int_equal(s.n, 3);
	ext4fs_close(fs);
}

/* ---- checksums ---- */

static void dir_iterate__accepts_a_correct_leaf_checksum_and_hides_the_tail(void **state)
{
	simple_root(EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, EXT4FS_DIR_ITER_EMPTY, &s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.rec_len[3], BS - 12 - 40);
	assert_int_equal(iterate(fs, ROOT, EXT4FS_DIR_ITER_CSUM_TAIL, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.flags[4], EXT4FS_DIRENT_CSUM_TAIL);
	assert_int_equal(s.offset[4], BS - 12);
	ext4fs_close(fs);
}

static void dir_iterate__detects_a_leaf_checksum_mismatch(void **state)
{
	unsigned char *b = simple_root(EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	b[24 + 8] = 'A';                           /* "alpha" -> "Alpha" after checksumming */
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;
	uint32_t ino;

	assert_int_equal(iterate(fs, ROOT, 0, &s), EXT4FS_E_DIR_CSUM);
	assert_non_null(strstr(ext4fs_errmsg(fs), "directory 2"));
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, "beta", 4, &ino), EXT4FS_E_DIR_CSUM);
	ext4fs_close(fs);
}

static void dir_iterate__ignores_a_checksum_mismatch_when_asked_to(void **state)
{
	unsigned char *b = simple_root(EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	b[24 + 8] = 'A';
	struct ext4fs_fs *fs = open_image(EXT4FS_OPEN_IGNORE_CSUM);
	struct ext4fs_inode inode;
	struct seen s;
	uint32_t ino;

	assert_int_equal(iterate(fs, ROOT, 0, &s), 0);
	assert_string_equal(s.name[2], "Alpha");
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, "Alpha", 5, &ino), 0);
	assert_int_equal(ino, 12);
	/* The explicit check still reports it, and so does an iteration that asks for it. */
	read_inode(fs, ROOT, &inode);
	assert_int_equal(ext4fs_dir_block_csum_verify(fs, ROOT, &inode, 0, b), EXT4FS_E_DIR_CSUM);
	assert_int_equal(iterate(fs, ROOT, EXT4FS_DIR_ITER_VERIFY, &s), EXT4FS_E_DIR_CSUM);
	ext4fs_close(fs);
}

static void dir_iterate__requires_a_checksum_tail_with_metadata_csum(void **state)
{
	unsigned char *b = simple_root(EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	put16(b + 40 + 4, BS - 40);                /* "beta" swallows the tail, */
	memset(b + BS - 12, 0, 12);                /* which is gone */
	struct ext4fs_fs *fs = open_image(0);
	struct seen s;

	assert_int_equal(iterate(fs, ROOT, 0, &s), EXT4FS_E_DIR_CSUM);
	assert_non_null(strstr(ext4fs_errmsg(fs), "no checksum tail"));
	ext4fs_close(fs);
}

static void dirent_csum__matches_the_documented_formula(void **state)
{
	unsigned char *b = simple_root(EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	struct ext4fs_fs *fs = open_image(0);

	assert_int_equal(ext4fs_dirent_tail_offset(fs, b), BS - 12);
	assert_int_equal(ext4fs_dirent_csum(fs, ROOT, 0x1000 + ROOT, b, BS - 12), get32(b + BS - 4));
	ext4fs_close(fs);
}

/* ---- htree ---- */

#define HNAMES 24

struct htree_dir {
	char names[HNAMES][16];
	uint32_t hashes[HNAMES];
	uint32_t split;                            /* hash of the second leaf's first entry */
	uint32_t root_blk, leaf_blk[2];
	const char *leaf_names[2][HNAMES];
	uint32_t leaf_inos[2][HNAMES];
	unsigned leaf_n[2];
};

static int by_hash(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;
	return *x < *y ? -1 : *x > *y;
}

/*
 * Directory ROOT as an htree: root (block 0) indexing two leaves (blocks 1
 * and 2) split at the median hash; names "file00".."file23" -> inodes 20+i.
 */
static void make_htree(struct htree_dir *h, uint32_t ro_compat)
{
	uint32_t sorted[HNAMES];
	int csum = (ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) != 0;

	memset(h, 0, sizeof(*h));
	make_image(EXT4FS_FEATURE_COMPAT_DIR_INDEX, 0, ro_compat);
	h->root_blk = make_dir(ROOT, 3, EXT4FS_INDEX_FL);
	h->leaf_blk[0] = h->root_blk + 1;
	h->leaf_blk[1] = h->root_blk + 2;
	for (unsigned i = 0; i < HNAMES; i++) {
		snprintf(h->names[i], sizeof(h->names[i]), "file%02u", i);
		assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_HALF_MD4, h->names[i], strlen(h->names[i]),
						hash_seed, &h->hashes[i], NULL), 0);
		sorted[i] = h->hashes[i];
		make_file(20 + i);
	}
	qsort(sorted, HNAMES, sizeof(sorted[0]), by_hash);
	h->split = sorted[HNAMES / 2];
	for (unsigned i = 0; i < HNAMES; i++) {
		unsigned leaf = h->hashes[i] >= h->split;
		h->leaf_names[leaf][h->leaf_n[leaf]] = h->names[i];
		h->leaf_inos[leaf][h->leaf_n[leaf]++] = 20 + i;
	}
	for (unsigned l = 0; l < 2; l++)
		fill_leaf(block(h->leaf_blk[l]), 0, 0, h->leaf_names[l], h->leaf_inos[l], h->leaf_n[l]);

	unsigned char *r = block(h->root_blk);
	memset(r, 0, BS);
	dirent(r, 0, ROOT, 12, ".", EXT4FS_FT_DIR);
	dirent(r, 12, ROOT, BS - 12, "..", EXT4FS_FT_DIR);
	r[0x1C] = EXT4FS_HASH_HALF_MD4;            /* hash_version */
	r[0x1D] = 8;                               /* info_length */
	put16(r + 0x20, (uint16_t)((BS - 0x20 - (csum ? 8 : 0)) / 8));   /* limit */
	put16(r + 0x22, 2);                        /* count */
	put32(r + 0x24, 1);                        /* block of entry 0 */
	put32(r + 0x28, h->split);
	put32(r + 0x2C, 2);
	if (csum) {
		set_dx_csum(ROOT, r, 0x20);
		set_leaf_csum(ROOT, block(h->leaf_blk[0]));
		set_leaf_csum(ROOT, block(h->leaf_blk[1]));
	}
}

/* Add name -> ino at the end of leaf l (in space taken from its last entry). */
static void leaf_append(struct htree_dir *h, unsigned l, const char *name, uint32_t ino)
{
	unsigned char *b = block(h->leaf_blk[l]);
	uint32_t off = 0, end = csum_image() ? BS - 12 : BS;

	for (;;) {
		uint32_t rl = b[off + 4] | (b[off + 5] << 8);
		if (off + rl >= end) {
			uint32_t used = (8 + b[off + 6] + 3) & ~3U;
			put16(b + off + 4, (uint16_t)used);
			dirent(b, off + used, ino, (uint16_t)(end - off - used), name, EXT4FS_FT_REG_FILE);
			return;
		}
		off += rl;
	}
}

static void dir_lookup__finds_every_name_through_the_htree_index(void **state)
{
	struct htree_dir h;
	uint32_t ino;

	make_htree(&h, 0);
	struct ext4fs_fs *fs = open_image(0);
	for (unsigned i = 0; i < HNAMES; i++) {
		assert_int_equal(ext4fs_dir_lookup(fs, ROOT, h.names[i], strlen(h.names[i]), &ino), 0);
		assert_int_equal(ino, 20 + i);
	}
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, ".", 1, &ino), 0);
	assert_int_equal(ino, ROOT);
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, "nope", 4, &ino), EXT4FS_E_NOT_FOUND);
	ext4fs_close(fs);
}

static void dir_lookup__uses_the_index_not_a_linear_scan(void **state)
{
	struct htree_dir h;
	struct seen s;
	uint32_t ino, hash;

	make_htree(&h, 0);
	/* Filed in the wrong leaf: only a linear scan could find it. */
	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_HALF_MD4, "stray", 5, hash_seed, &hash, NULL), 0);
	leaf_append(&h, hash < h.split ? 1 : 0, "stray", 50);
	make_file(50);
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, "stray", 5, &ino), EXT4FS_E_NOT_FOUND);
	assert_int_equal(iterate(fs, ROOT, 0, &s), 0);
	assert_int_equal(s.n, 2 + HNAMES + 1);
	ext4fs_close(fs);
}

static void dir_lookup__falls_back_to_a_linear_scan_when_the_index_is_corrupt(void **state)
{
	struct htree_dir h;
	struct ext4fs_inode inode;
	uint32_t ino, hash;

	make_htree(&h, 0);
	assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_HALF_MD4, "stray", 5, hash_seed, &hash, NULL), 0);
	leaf_append(&h, hash < h.split ? 1 : 0, "stray", 50);
	make_file(50);
	put16(block(h.root_blk) + 0x20, 99);       /* limit no longer matches the block */
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, "stray", 5, &ino), 0);
	assert_int_equal(ino, 50);
	read_inode(fs, ROOT, &inode);
	assert_int_equal(ext4fs_htree_lookup(fs, ROOT, &inode, "stray", 5, &ino), EXT4FS_E_HTREE_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "limit 99"));
	ext4fs_close(fs);
}

static void dir_iterate__tags_index_blocks_and_verifies_their_checksums(void **state)
{
	struct htree_dir h;
	struct seen s;
	uint32_t ino;

	make_htree(&h, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(iterate(fs, ROOT, 0, &s), 0);
	assert_int_equal(s.n, 2 + HNAMES);
	assert_int_equal(s.flags[0], EXT4FS_DIRENT_DX_ROOT);
	assert_int_equal(s.rec_len[1], BS - 12);
	assert_int_equal(s.flags[2], 0);
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, h.names[5], 6, &ino), 0);
	ext4fs_close(fs);

	put32(block(h.root_blk) + 0x28, h.split + 2);   /* index changed after checksumming */
	fs = open_image(0);
	assert_int_equal(iterate(fs, ROOT, 0, &s), EXT4FS_E_HTREE_CSUM);
	assert_int_equal(ext4fs_dir_lookup(fs, ROOT, h.names[5], 6, &ino), EXT4FS_E_HTREE_CSUM);
	ext4fs_close(fs);
	fs = open_image(EXT4FS_OPEN_IGNORE_CSUM);
	assert_int_equal(iterate(fs, ROOT, 0, &s), 0);
	ext4fs_close(fs);
}

struct events {
	unsigned n;
	enum ext4fs_htree_event_type type[128];
	uint32_t lblk[128];
	unsigned dirents;
	unsigned bad_hashes;
	unsigned errors;
};

static int record_event(const struct ext4fs_htree_event *ev, void *arg)
{
	struct events *e = arg;
	uint32_t hash;

	if (ev->type == EXT4FS_HTREE_EV_DIRENT) {
		e->dirents++;
		assert_int_equal(ext4fs_dx_hash(EXT4FS_HASH_HALF_MD4, ev->dirent->name, ev->dirent->name_len,
						hash_seed, &hash, NULL), 0);
		if (hash != ev->hash || ev->hash_err)
			e->bad_hashes++;
		return 0;
	}
	assert_true(e->n < 128);
	e->type[e->n] = ev->type;
	e->lblk[e->n] = ev->type == EXT4FS_HTREE_EV_LEAF || ev->type == EXT4FS_HTREE_EV_LEAF_END
				? ev->leaf->lblk : ev->node->lblk;
	if (ev->type == EXT4FS_HTREE_EV_ERROR)
		e->errors++;
	e->n++;
	return 0;
}

static void htree_walk__visits_root_then_leaves_in_hash_order(void **state)
{
	struct htree_dir h;
	struct ext4fs_inode inode;
	struct events e = { 0 };
	static const enum ext4fs_htree_event_type want[] = {
		EXT4FS_HTREE_EV_INDEX, EXT4FS_HTREE_EV_CHILD, EXT4FS_HTREE_EV_LEAF,
		EXT4FS_HTREE_EV_LEAF_END, EXT4FS_HTREE_EV_CHILD, EXT4FS_HTREE_EV_LEAF,
		EXT4FS_HTREE_EV_LEAF_END, EXT4FS_HTREE_EV_INDEX_END,
	};

	make_htree(&h, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, ROOT, &inode);
	assert_int_equal(ext4fs_htree_walk(fs, ROOT, &inode, 0, record_event, &e), 0);
	assert_int_equal(e.n, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < e.n; i++)
		assert_int_equal(e.type[i], want[i]);
	assert_int_equal(e.lblk[2], 1);
	assert_int_equal(e.lblk[5], 2);
	assert_int_equal(e.dirents, HNAMES);
	assert_int_equal(e.bad_hashes, 0);
	ext4fs_close(fs);
}

static void htree_walk__rejects_a_block_referenced_twice(void **state)
{
	struct htree_dir h;
	struct ext4fs_inode inode;
	struct events e = { 0 };

	make_htree(&h, 0);
	put32(block(h.root_blk) + 0x2C, 1);        /* both entries lead to block 1 */
	struct ext4fs_fs *fs = open_image(0);
	read_inode(fs, ROOT, &inode);
	assert_int_equal(ext4fs_htree_walk(fs, ROOT, &inode, 0, record_event, &e),
			 EXT4FS_E_HTREE_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "referenced twice"));
	memset(&e, 0, sizeof(e));
	assert_int_equal(ext4fs_htree_walk(fs, ROOT, &inode, EXT4FS_HTREE_WALK_CONTINUE, record_event, &e), 0);
	assert_int_equal(e.errors, 1);
	assert_int_equal(e.type[e.n - 1], EXT4FS_HTREE_EV_INDEX_END);
	ext4fs_close(fs);
}

static void htree_walk__rejects_bad_root_fields(void **state)
{
	struct htree_dir h;
	struct ext4fs_inode inode;
	struct events e = { 0 };
	static const struct {
		uint32_t off;
		uint32_t value;
		int width;
		const char *msg;
	} cases[] = {
		{ 0x1E, 2, 1, "indirect levels" },        /* two levels need largedir */
		{ 0x1D, 12, 1, "length 12" },
		{ 0x22, 0, 2, "count 0" },
		{ 0x22, 125, 2, "count 125" },
		{ 0x2C, 3, 4, "outside the directory" },
		{ 0x28, 0, 4, NULL },                     /* hash below entry 1? fine: only >=2 ordered */
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_htree(&h, 0);
		unsigned char *p = block(h.root_blk) + cases[i].off;
		if (cases[i].width == 1)
			p[0] = (unsigned char)cases[i].value;
		else if (cases[i].width == 2)
			put16(p, (uint16_t)cases[i].value);
		else
			put32(p, cases[i].value);
		struct ext4fs_fs *fs = open_image(0);
		read_inode(fs, ROOT, &inode);
		int err = ext4fs_htree_walk(fs, ROOT, &inode, 0, record_event, &e);
		if (cases[i].msg) {
			assert_int_equal(err, EXT4FS_E_HTREE_CORRUPT);
			if (!strstr(ext4fs_errmsg(fs), cases[i].msg))
				fail_msg("case %u: \"%s\" lacks \"%s\"", i, ext4fs_errmsg(fs), cases[i].msg);
		} else {
			assert_int_equal(err, 0);
		}
		ext4fs_close(fs);
	}
}

/* ---- inline directories ---- */

/*
 * Directory 12 with inline data: parent 2, "a" (13) and "bb" (14) in
 * i_block, "ccc" (15) and "dddd" (16) in its system.data attribute.
 */
static void make_inline_dir(void)
{
	unsigned char *r;
	uint32_t b;

	make_image(0, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA, 0);
	b = make_dir(ROOT, 1, 0);
	{
		static const char *const names[] = { "idir" };
		static const uint32_t inos[] = { 12 };
		fill_leaf(block(b), ROOT, ROOT, names, inos, 1);
	}
	make_inode(12, 040755, 60 + 24, EXT4FS_INLINE_DATA_FL, NULL, 0);
	r = inode_rec(12);
	put32(r + 0x28, ROOT);
	dirent(r + 0x28, 4, 13, 12, "a", EXT4FS_FT_REG_FILE);
	dirent(r + 0x28, 16, 14, 44, "bb", EXT4FS_FT_REG_FILE);
	/* In-inode attributes at 128 + 32: magic, one entry "data" (index 7), end marker. */
	put32(r + 160, 0xEA020000);
	r[164] = 4;
	r[165] = 7;
	put16(r + 166, (uint16_t)(232 - 164));    /* value at 232, relative to the first entry */
	put32(r + 172, 24);
	memcpy(r + 180, "data", 4);
	dirent(r + 232, 0, 15, 12, "ccc", EXT4FS_FT_REG_FILE);
	dirent(r + 232, 12, 16, 12, "dddd", EXT4FS_FT_REG_FILE);
	for (uint32_t i = 13; i <= 16; i++)
		make_file(i);
}

static void dir_iterate__reads_inline_directories_with_made_up_dot_entries(void **state)
{
	struct seen s;
	uint32_t ino;

	make_inline_dir();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(iterate(fs, 12, 0, &s), 0);
	assert_int_equal(s.n, 6);
	assert_string_equal(s.name[0], ".");
	assert_int_equal(s.ino[0], 12);
	assert_int_equal(s.rec_len[0], 12);
	assert_int_equal(s.ft[0], 0);
	assert_int_equal(s.flags[0], EXT4FS_DIRENT_SYNTHETIC | EXT4FS_DIRENT_INLINE);
	assert_string_equal(s.name[1], "..");
	assert_int_equal(s.ino[1], ROOT);
	assert_string_equal(s.name[2], "a");
	assert_int_equal(s.offset[2], 4);
	assert_int_equal(s.flags[2], EXT4FS_DIRENT_INLINE);
	assert_string_equal(s.name[3], "bb");
	assert_int_equal(s.rec_len[3], 44);
	assert_string_equal(s.name[4], "ccc");
	assert_int_equal(s.flags[4], EXT4FS_DIRENT_INLINE_EA);
	assert_int_equal(s.offset[5], 12);
	assert_string_equal(s.name[5], "dddd");
	assert_int_equal(ext4fs_dir_lookup(fs, 12, "dddd", 4, &ino), 0);
	assert_int_equal(ino, 16);
	assert_int_equal(ext4fs_dir_lookup(fs, 12, "..", 2, &ino), 0);
	assert_int_equal(ino, ROOT);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/idir/bb", 0, &ino), 0);
	assert_int_equal(ino, 14);
	ext4fs_close(fs);
}

static void dir_iterate__rejects_a_bad_entry_in_inline_data(void **state)
{
	struct seen s;

	make_inline_dir();
	put16(inode_rec(12) + 0x28 + 16 + 4, 48);   /* "bb" runs past i_block */
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(iterate(fs, 12, 0, &s), EXT4FS_E_DIR_CORRUPT);
	assert_non_null(strstr(ext4fs_errmsg(fs), "i_block"));
	ext4fs_close(fs);
}

/* ---- path names ---- */

/*
 * /            2: sub (12), file (13), rel -> sub/inner (14), abs -> /sub (15),
 *                 loop_a <-> loop_b (16, 17), c1 -> c2 -> ... -> c8 -> file (31-38),
 *                 c9 -> c1 (39), dangling -> nowhere (18)
 * /sub        12: inner (19)
 */
static void make_tree(void)
{
	static const char *const root_names[] = {
		"sub", "file", "rel", "abs", "loop_a", "loop_b", "dangling",
		"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9",
	};
	static const uint32_t root_inos[] = { 12, 13, 14, 15, 16, 17, 18, 31, 32, 33, 34, 35, 36, 37, 38, 39 };
	static const char *const sub_names[] = { "inner" };
	static const uint32_t sub_inos[] = { 19 };
	char target[8];

	make_image(0, 0, 0);
	fill_leaf(block(make_dir(ROOT, 1, 0)), ROOT, ROOT, root_names, root_inos, 16);
	fill_leaf(block(make_dir(12, 1, 0)), 12, ROOT, sub_names, sub_inos, 1);
	make_file(13);
	make_symlink(14, "sub/inner");
	make_symlink(15, "/sub");
	make_symlink(16, "loop_b");
	make_symlink(17, "loop_a");
	make_symlink(18, "nowhere");
	for (unsigned i = 1; i <= 7; i++) {
		snprintf(target, sizeof(target), "c%u", i + 1);
		make_symlink(30 + i, target);
	}
	make_symlink(38, "file");
	make_symlink(39, "c1");
	make_file(19);
}

static void namei__resolves_absolute_relative_dot_and_dotdot_paths(void **state)
{
	uint32_t ino;

	make_tree();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/sub/inner", 0, &ino), 0);
	assert_int_equal(ino, 19);
	assert_int_equal(ext4fs_namei(fs, ROOT, 12, "inner", 0, &ino), 0);
	assert_int_equal(ino, 19);
	assert_int_equal(ext4fs_namei(fs, ROOT, 12, "../file", 0, &ino), 0);
	assert_int_equal(ino, 13);
	assert_int_equal(ext4fs_namei(fs, ROOT, 12, "//sub//./inner", 0, &ino), 0);
	assert_int_equal(ino, 19);
	assert_int_equal(ext4fs_namei(fs, ROOT, 12, "/", 0, &ino), 0);
	assert_int_equal(ino, ROOT);
	assert_int_equal(ext4fs_namei(fs, ROOT, 12, "", 0, &ino), 0);
	assert_int_equal(ino, 12);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/sub/", 0, &ino), 0);
	assert_int_equal(ino, 12);
	ext4fs_close(fs);
}

static void namei__follows_symlinks_in_the_middle_and_on_request_at_the_end(void **state)
{
	uint32_t ino;

	make_tree();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/rel", 0, &ino), 0);
	assert_int_equal(ino, 14);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/rel", 1, &ino), 0);
	assert_int_equal(ino, 19);
	assert_int_equal(ext4fs_namei(fs, ROOT, 12, "../abs/inner", 0, &ino), 0);
	assert_int_equal(ino, 19);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "abs/", 0, &ino), 0);
	assert_int_equal(ino, 12);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "c1", 1, &ino), 0);      /* 8 nested links */
	assert_int_equal(ino, 13);
	ext4fs_close(fs);
}

static void namei__reports_loops_missing_names_and_non_directories(void **state)
{
	uint32_t ino;

	make_tree();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/loop_a", 0, &ino), 0);
	assert_int_equal(ino, 16);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/loop_a", 1, &ino), EXT4FS_E_SYMLINK_LOOP);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/c9", 1, &ino), EXT4FS_E_SYMLINK_LOOP);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/loop_b/x", 0, &ino), EXT4FS_E_SYMLINK_LOOP);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/nope", 0, &ino), EXT4FS_E_NOT_FOUND);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/dangling", 1, &ino), EXT4FS_E_NOT_FOUND);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/file/x", 0, &ino), EXT4FS_E_NOT_DIR);
	assert_int_equal(ext4fs_namei(fs, ROOT, ROOT, "/file/", 0, &ino), EXT4FS_E_NOT_DIR);
	assert_int_equal(ino, 0);
	ext4fs_close(fs);
}

static void get_pathname__walks_dotdot_up_to_the_root(void **state)
{
	char *path;

	make_tree();
	struct ext4fs_fs *fs = open_image(0);
	assert_int_equal(ext4fs_get_pathname(fs, 12, 19, &path), 0);
	assert_string_equal(path, "/sub/inner");
	free(path);
	assert_int_equal(ext4fs_get_pathname(fs, 12, 0, &path), 0);
	assert_string_equal(path, "/sub");
	free(path);
	assert_int_equal(ext4fs_get_pathname(fs, ROOT, ROOT, &path), 0);
	assert_string_equal(path, "/");
	free(path);
	assert_int_equal(ext4fs_get_pathname(fs, ROOT, 13, &path), 0);
	assert_string_equal(path, "/file");
	free(path);
	assert_int_equal(ext4fs_get_pathname(fs, 12, 44, &path), 0);
	assert_string_equal(path, "/sub/???");
	free(path);
	assert_int_equal(ext4fs_get_pathname(fs, 13, 5, &path), 0);
	assert_string_equal(path, "<13>/<5>");
	free(path);
	ext4fs_close(fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dir_iterate__lists_a_linear_block_in_order),
		cmocka_unit_test(dir_iterate__rejects_rec_len_past_block_end),
		cmocka_unit_test(dir_iterate__rejects_zero_and_unaligned_rec_len),
		cmocka_unit_test(dir_iterate__rejects_name_len_longer_than_the_record),
		cmocka_unit_test(dir_iterate__shows_empty_entries_only_when_asked),
		cmocka_unit_test(dir_iterate__finds_deleted_entries_in_slack_space),
		cmocka_unit_test(dir_iterate__ignores_slack_that_holds_no_plausible_chain),
		cmocka_unit_test(dir_iterate__accepts_a_correct_leaf_checksum_and_hides_the_tail),
		cmocka_unit_test(dir_iterate__detects_a_leaf_checksum_mismatch),
		cmocka_unit_test(dir_iterate__ignores_a_checksum_mismatch_when_asked_to),
		cmocka_unit_test(dir_iterate__requires_a_checksum_tail_with_metadata_csum),
		cmocka_unit_test(dirent_csum__matches_the_documented_formula),
		cmocka_unit_test(dir_lookup__finds_every_name_through_the_htree_index),
		cmocka_unit_test(dir_lookup__uses_the_index_not_a_linear_scan),
		cmocka_unit_test(dir_lookup__falls_back_to_a_linear_scan_when_the_index_is_corrupt),
		cmocka_unit_test(dir_iterate__tags_index_blocks_and_verifies_their_checksums),
		cmocka_unit_test(htree_walk__visits_root_then_leaves_in_hash_order),
		cmocka_unit_test(htree_walk__rejects_a_block_referenced_twice),
		cmocka_unit_test(htree_walk__rejects_bad_root_fields),
		cmocka_unit_test(dir_iterate__reads_inline_directories_with_made_up_dot_entries),
		cmocka_unit_test(dir_iterate__rejects_a_bad_entry_in_inline_data),
		cmocka_unit_test(namei__resolves_absolute_relative_dot_and_dotdot_paths),
		cmocka_unit_test(namei__follows_symlinks_in_the_middle_and_on_request_at_the_end),
		cmocka_unit_test(namei__reports_loops_missing_names_and_non_directories),
		cmocka_unit_test(get_pathname__walks_dotdot_up_to_the_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
