/*
 * dir_rebuild.c - rewriting a whole directory from a list of entries: the
 * linear layout, or an htree built from scratch (e4fsck's pass 3A and -D;
 * later the defragmenter's directory compaction).
 *
 * The layout is the one e2fsck's rehash gives, so that a directory rebuilt
 * by either checker takes the same number of blocks:
 *
 *  - entries go into leaves in the caller's order, each record just as
 *    long as its name needs; a leaf is closed when the next record does
 *    not fit, or when what is left falls below the slack (indexed: a
 *    share of the leaf kept free for later inserts; linear: one minimal
 *    record), and its last record then takes the rest of the leaf;
 *  - an indexed directory has its root at block 0 ("." and "..", the
 *    fs's default hash version) and its leaves from block 1; the index
 *    entries' hashes are each leaf's first hash, with the low bit set when
 *    that hash continues from the previous leaf (a collision run split
 *    over two leaves), as the kernel expects;
 *  - index nodes are filled to their limit, in the order leaves need
 *    them, and appended after the leaves: no level when the root can name
 *    every leaf, one level, or (largedir only) two.
 *
 * The whole new content is built in memory before the disk is touched.
 * Missing blocks are allocated first, and given back if an allocation
 * fails, so that failure leaves the directory as it was.  Then every block
 * is written, the inode's flags and size are set, and blocks past the new
 * end are freed.  A write error part-way leaves a mixture of old and new
 * blocks for e4fsck to find.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/alloc.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/htree.h"
#include "dir_internal.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define DOT_REC_LEN      12
#define ROOT_HASH_OFF    0x1c
#define ROOT_INFO_LEN_OFF 0x1d
#define ROOT_LEVELS_OFF  0x1e
#define ROOT_INFO_LEN    8
#define MAX_LEVELS       3      /* the root and up to two levels of nodes */
#define MIN_REC          12     /* the smallest record: a one-byte name */

/* The new directory, block by block. */
struct image {
	struct ext4fs_fs *fs;
	uint32_t bs;
	unsigned char *buf;         /* n blocks */
	uint32_t *first_hash;       /* per block: the hash an index entry names it by */
	uint64_t n, cap;
};

static unsigned char *block_at(struct image *im, uint64_t b)
{
	return im->buf + b * im->bs;
}

/* Append a block (an empty leaf); its number in *b.  Errors: EXT4FS_E_NO_MEMORY. */
static int image_add(struct image *im, uint64_t *b)
{
	if (im->n == im->cap) {
		uint64_t cap = im->cap ? im->cap + im->cap / 2 + 16 : 16;
		unsigned char *buf = realloc(im->buf, cap * im->bs);
		if (!buf)
			return EXT4FS_E_NO_MEMORY;
		im->buf = buf;
		uint32_t *h = realloc(im->first_hash, cap * sizeof(*h));
		if (!h)
			return EXT4FS_E_NO_MEMORY;
		im->first_hash = h;
		im->cap = cap;
	}
	*b = im->n++;
	ext4fs__dirw_leaf_init(im->fs, block_at(im, *b));
	im->first_hash[*b] = 0;
	return 0;
}

static void set_rec_len(struct image *im, uint64_t b, uint32_t off, uint32_t len)
{
	ext4fs_dirent_rec_len_set(block_at(im, b) + off, len, im->bs);
}

/* Lay the entries out in leaves from block first on (see the top of the file). */
static int lay_leaves(struct image *im, const struct ext4fs_dir_rebuild_entry *ents, size_t n,
		      uint32_t slack)
{
	uint32_t end = ext4fs__dirw_leaf_end(im->fs), left, off = 0, last_off = 0, last_len = 0;
	uint32_t prev_hash = 1;
	uint64_t b;
	int have_last = 0, err = image_add(im, &b);

	if (err)
		return err;
	left = end;
	for (size_t i = 0; i < n; i++) {
		const struct ext4fs_dir_rebuild_entry *e = &ents[i];
		uint32_t len = dirw_rec_size(e->name_len);

		if (len > left) {
			if (left && have_last)
				set_rec_len(im, b, last_off, last_len + left);
			err = image_add(im, &b);
			if (err)
				return err;
			off = 0;
			have_last = 0;
		}
		left = end - off;
		if (off == 0)
			im->first_hash[b] = e->hash == prev_hash ? e->hash | 1 : e->hash;
		ext4fs__dirw_entry_store(im->fs, block_at(im, b), off, len, e->name, e->name_len, e->inode,
					 e->file_type);
		last_off = off;
		last_len = len;
		have_last = 1;
		off += len;
		left -= len;
		if (left < slack) {
			last_len += left;
			set_rec_len(im, b, last_off, last_len);
			off += left;
			left = 0;
		}
		prev_hash = e->hash;
	}
	if (left && have_last)
		set_rec_len(im, b, last_off, last_len + left);
	return 0;
}

/* Index block b's entry count and where its entries start. */
static uint32_t count_off_of(uint64_t b)
{
	return b == 0 ? EXT4FS_DX_ROOT_COUNT_OFFSET : EXT4FS_DX_NODE_COUNT_OFFSET;
}

/* Add (hash, child) to index block b; entry 0 keeps limit and count in its hash slot. */
static void index_add(struct image *im, uint64_t b, uint32_t hash, uint64_t child)
{
	unsigned char *at = block_at(im, b) + count_off_of(b);
	uint16_t count = le16_load(at + 2);

	if (count)
		le32_store(at + 8 * count, hash);
	le32_store(at + 8 * count + 4, (uint32_t)child);
	le16_store(at + 2, (uint16_t)(count + 1));
}

static uint16_t index_count(struct image *im, uint64_t b)
{
	return le16_load(block_at(im, b) + count_off_of(b) + 2);
}

/*
 * Fill the root (block 0) and append index nodes for leaves 1..n-1.
 * Errors: EXT4FS_E_DIR_FULL (more leaves than the levels allowed can
 * name), EXT4FS_E_NO_MEMORY.
 */
static int build_index(struct image *im, uint32_t dir, uint32_t parent, uint8_t file_type_dir)
{
	struct ext4fs_fs *fs = im->fs;
	uint64_t leaves = im->n - 1, reach;
	unsigned root_limit = ext4fs__dirw_dx_limit(fs, EXT4FS_DX_ROOT_COUNT_OFFSET);
	unsigned node_limit = ext4fs__dirw_dx_limit(fs, EXT4FS_DX_NODE_COUNT_OFFSET);
	unsigned max_levels = ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR) ? 2 : 1;
	unsigned levels = 0;
	uint64_t node[MAX_LEVELS] = { 0 };   /* the index block being filled at each level */
	unsigned char *root = block_at(im, 0);
	int err;

	for (reach = root_limit; leaves > reach; reach *= node_limit)
		if (++levels > max_levels)
			return ext4fs__fs_fail(fs, EXT4FS_E_DIR_FULL,
					       "directory %u: %llu leaves are more than %u index levels can name", dir,
					       (unsigned long long)leaves, max_levels);

	memset(root, 0, im->bs);
	ext4fs__dirw_entry_store(fs, root, 0, DOT_REC_LEN, ".", 1, dir, file_type_dir);
	ext4fs__dirw_entry_store(fs, root, DOT_REC_LEN, im->bs - DOT_REC_LEN, "..", 2, parent, file_type_dir);
	root[ROOT_HASH_OFF] = fs->sb.s_def_hash_version;
	root[ROOT_INFO_LEN_OFF] = ROOT_INFO_LEN;
	root[ROOT_LEVELS_OFF] = (unsigned char)levels;
	le16_store(root + EXT4FS_DX_ROOT_COUNT_OFFSET, (uint16_t)root_limit);

	uint64_t last_leaf = im->n - 1;
	for (uint64_t leaf = 1; leaf <= last_leaf; leaf++) {
		uint32_t hash = im->first_hash[leaf];
		/* The deepest index level whose current block has room; fresh nodes below it. */
		unsigned l = levels;
		while (l > 0 && (!node[l] || index_count(im, node[l]) >= node_limit))
			l--;
		if (l == 0 && index_count(im, 0) >= root_limit)
			return ext4fs__fs_fail(fs, EXT4FS_E_DIR_FULL, "directory %u: the index root is full", dir);
		for (unsigned k = l + 1; k <= levels; k++) {
			uint64_t b;
			err = image_add(im, &b);
			if (err)
				return err;
			ext4fs__dirw_dx_node_init(fs, block_at(im, b), 0);
			index_add(im, node[k - 1], hash, b);
			node[k] = b;
		}
		index_add(im, node[levels], hash, leaf);
	}
	return 0;
}

/* Give back the blocks mapped at [from, from + len) after a failed allocation. */
static void unmap_quietly(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode, uint64_t from,
			  uint64_t len)
{
	(void)ext4fs_bmap_unmap(fs, dir, inode, from, len);
}

/*
 * Map every logical block below total: holes get new blocks.  On failure
 * the blocks this call mapped are unmapped again.
 */
static int map_all(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode, uint64_t total)
{
	struct { uint64_t lblk, len; } *made = NULL;
	size_t nmade = 0, capmade = 0;
	int err = 0;

	for (uint64_t lblk = 0; lblk < total;) {
		uint64_t pblk = 0, run = 1;
		int unwritten = 0;
		err = ext4fs_bmap(fs, dir, inode, lblk, &pblk, &run, &unwritten);
		if (err)
			break;
		if (run > total - lblk)
			run = total - lblk;
		if (pblk && unwritten)
			err = ext4fs_bmap_mark_written(fs, dir, inode, lblk, run);
		if (!pblk) {
			uint32_t got = 0;
			uint32_t want = run > UINT32_MAX ? UINT32_MAX : (uint32_t)run;
			if (nmade == capmade) {
				void *grown = ext4fs_array_grow(made, &capmade, nmade + 1, sizeof(*made), 8);
				if (!grown) {
					err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory", dir);
					break;
				}
				made = grown;
			}
			err = ext4fs_bmap_alloc(fs, dir, inode, lblk, want, total, EXT4FS_ALLOC_DIRECTORY, 0,
						&pblk, &got);
			if (!err) {
				made[nmade].lblk = lblk;
				made[nmade].len = got;
				nmade++;
				run = got;
			}
		}
		if (err)
			break;
		lblk += run;
	}
	if (err)
		for (size_t i = nmade; i-- > 0;)
			unmap_quietly(fs, dir, inode, made[i].lblk, made[i].len);
	free(made);
	return err;
}

/* Seal the image's blocks and write them at their logical places, a mapped run at a time. */
static int write_all(struct image *im, uint32_t dir, const struct ext4fs_inode *inode)
{
	for (uint64_t lblk = 0; lblk < im->n;) {
		uint64_t pblk = 0, run = 1;
		int err = ext4fs_bmap(im->fs, dir, inode, lblk, &pblk, &run, NULL);
		if (!err && !pblk)
			err = ext4fs__fs_fail(im->fs, EXT4FS_E_DIR_CORRUPT,
					      "directory %u: logical block %llu is not mapped", dir,
					      (unsigned long long)lblk);
		if (err)
			return err;
		if (run > im->n - lblk)
			run = im->n - lblk;
		for (uint64_t k = 0; k < run; k++)
			ext4fs__dirw_block_seal(im->fs, dir, inode, lblk + k, block_at(im, lblk + k));
		err = ext4fs_blocks_write(im->fs, pblk, run, block_at(im, lblk));
		if (err)
			return ext4fs__fs_fail(im->fs, err, "directory %u: writing logical blocks %llu-%llu (blocks %llu-): %s",
					       dir, (unsigned long long)lblk, (unsigned long long)(lblk + run - 1),
					       (unsigned long long)pblk, ext4fs_strerror(err));
		lblk += run;
	}
	return 0;
}

int ext4fs_dir_rebuild(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
		       const struct ext4fs_dir_rebuild_entry *ents, size_t n,
		       const struct ext4fs_dir_rebuild_opts *opts, uint64_t *nblocks)
{
	struct image im = { .fs = fs, .bs = fs->geom.block_size };
	uint32_t end = ext4fs__dirw_leaf_end(fs), slack = MIN_REC;
	struct ext4fs_inode next = *inode;
	uint64_t b, total;
	int err;

	if (!fs_writable(fs))
		return ext4fs__fs_fail(fs, EXT4FS_E_READ_ONLY, "directory %u: the file system is open read-only", dir);
	if (!EXT4FS_ISDIR(inode->i_mode) || ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u: only a directory whose entries live in blocks can be rebuilt",
				       dir);
	/* Such a directory files names under hashes kept in the entries, which are not written here. */
	if (opts->indexed && (inode->i_flags & EXT4FS_ENCRYPT_FL) && (inode->i_flags & EXT4FS_CASEFOLD_FL))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u: an encrypted and casefolded directory is not indexed here", dir);
	if (opts->slack_percent > 100)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: slack of %u%%", dir, opts->slack_percent);
	for (size_t i = 0; i < n; i++)
		if (!ents[i].name_len || !ents[i].inode || ents[i].inode > fs->sb.s_inodes_count)
			return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: entry %zu is not valid", dir, i);

	if (opts->indexed) {
		slack = end * opts->slack_percent / 100;
		if (slack < MIN_REC)
			slack = MIN_REC;
		err = image_add(&im, &b);       /* block 0: the root, filled in last */
		if (err)
			goto nomem;
	}
	err = lay_leaves(&im, ents, n, slack);
	if (!err && opts->indexed)
		err = build_index(&im, dir, opts->parent, EXT4FS_FT_DIR);
	while (!err && im.n < opts->min_blocks)
		err = image_add(&im, &b);
	if (err == EXT4FS_E_NO_MEMORY)
		goto nomem;
	if (err)
		goto out;
	total = im.n;

	if (opts->indexed)
		next.i_flags |= EXT4FS_INDEX_FL;
	else
		next.i_flags &= ~(uint32_t)EXT4FS_INDEX_FL;
	err = map_all(fs, dir, &next, total);
	if (!err)
		err = write_all(&im, dir, &next);
	if (!err) {
		ext4fs_inode_set_size(&next, total * im.bs);
		err = ext4fs_bmap_unmap(fs, dir, &next, total, UINT64_MAX - total);
	}
	if (!err)
		err = ext4fs_inode_write(fs, dir, &next);
	if (!err) {
		*inode = next;
		if (nblocks)
			*nblocks = total;
	}
	goto out;
nomem:
	err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory to rebuild it", dir);
out:
	free(im.buf);
	free(im.first_hash);
	return err;
}
