/*
 * frag.c - fragmentation measures (frag.h): files, e4defrag's score, free
 * space, directory locality and the seeks of reading a tree.
 *
 * Every figure comes from one walk of a block map through
 * ext4fs_block_iterate(), which already bounds the walk and checks each
 * block number; the tree walk adds its own bound, a set of the directories
 * read, so a directory that (through a hostile image) contains itself or
 * an ancestor is read once.  The walk keeps its path on the heap, not on
 * the C stack, so a deep tree cannot overflow it.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/frag.h"
#include "ext4fs/array.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/htree.h"
#include "blockmap_internal.h"

/* -- one file -- */

struct file_walk {
	struct ext4fs_frag_file *out;
	int prev_unwritten;
	int have_prev;
	uint64_t prev_pend;          /* the block after the last data block seen */
	uint64_t prev_lend;          /* the logical block after it */
};

static int file_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct file_walk *w = arg;
	struct ext4fs_frag_file *f = w->out;
	int phys_next, log_next;

	if (v->kind != EXT4FS_BLOCK_DATA) {
		f->map_blocks++;
		return 0;
	}
	if (v->count == 0)
		return 0;
	/* After a hole the disk continues when the blocks lie where the hole's own blocks would end. */
	phys_next = w->have_prev && v->lblk >= w->prev_lend && v->pblk >= w->prev_pend &&
		    v->pblk - w->prev_pend == v->lblk - w->prev_lend;
	log_next = w->have_prev && v->lblk == w->prev_lend;
	if (!phys_next)
		f->extents++;
	if (!phys_next || !log_next)
		f->e4defrag_extents++;
	/*
	 * An indirect map comes a block at a time; an extent tree hands each
	 * leaf extent over as one visit, and two leaf extents may continue each
	 * other both ways (written at different times, or in different leaves).
	 * The kernel's FIEMAP joins both kinds once its extent cache holds them
	 * (it merges neighbours that continue each other with the same
	 * written or unwritten state), so its records are those runs.
	 */
	if (!phys_next || !log_next || v->unwritten != w->prev_unwritten)
		f->map_extents++;
	w->prev_unwritten = v->unwritten;
	if (!w->have_prev)
		f->first_pblk = v->pblk;
	f->last_pblk = v->pblk + v->count - 1;
	f->blocks += v->count;
	if (v->unwritten)
		f->unwritten_blocks += v->count;
	w->have_prev = 1;
	w->prev_pend = v->pblk + v->count;
	w->prev_lend = v->lblk + v->count;
	return 0;
}

int ext4fs_frag_file(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     struct ext4fs_frag_file *out)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	struct file_walk w = { 0 };
	uint64_t per_group;
	int err;

	memset(out, 0, sizeof(*out));
	w.out = out;
	if ((err = ext4fs_block_iterate(fs, ino, inode, 0, file_visit, &w)))
		return err < 0 ? err : 0;
	if (out->blocks == 0)
		return 0;
	out->ideal = (out->blocks - 1) / EXT4FS_FRAG_IDEAL_BLOCKS + 1;
	per_group = (uint64_t)geo->blocks_per_group * (geo->groups_per_flex ? geo->groups_per_flex : 1);
	out->ideal_e4defrag = per_group ? (out->blocks - 1) / per_group + 1 : 1;
	return 0;
}

/* -- e4defrag -c's score -- */

void ext4fs_frag_score_init(struct ext4fs_frag_score *s)
{
	memset(s, 0, sizeof(*s));
}

int ext4fs_frag_score_counts(const struct ext4fs_inode *inode, const struct ext4fs_frag_file *f)
{
	return EXT4FS_ISREG(inode->i_mode) && ext4fs_inode_size(inode) > 0 && f->blocks > 0;
}

void ext4fs_frag_score_add(struct ext4fs_frag_score *s, const struct ext4fs_frag_file *f, uint32_t block_size,
			   struct ext4fs_frag_score_row *row)
{
	memset(row, 0, sizeof(*row));
	if (f->blocks == 0 || f->map_extents == 0)
		return;
	row->now = f->map_extents;
	row->best = f->ideal_e4defrag;
	row->size_per_extent_kb = f->blocks * (block_size / 1024) / f->map_extents;
	/* e4defrag: (float)(int difference) * 100 / blocks, all in float. */
	row->ratio = (float)((double)f->e4defrag_extents - (double)f->ideal_e4defrag) * 100 / (float)f->blocks;
	s->files++;
	s->blocks += f->blocks;
	s->now_extents += f->map_extents;
	s->best_extents += f->ideal_e4defrag;
	s->ideal_extents += f->ideal;
	s->extents += f->extents;
}

int ext4fs_frag_score_summary(const struct ext4fs_frag_score *s, uint32_t block_size,
			      struct ext4fs_frag_score_summary *out)
{
	float ratio;

	memset(out, 0, sizeof(*out));
	if (s->files == 0 || s->blocks == 0 || s->now_extents == 0)
		return EXT4FS_E_INVALID_ARG;
	out->total_extents = s->now_extents;
	out->best_extents = s->best_extents;
	out->size_per_extent_kb = s->blocks * (block_size / 1024) / s->now_extents;
	ratio = (float)((double)s->now_extents - (double)s->best_extents) * 100 / (float)s->blocks;
	out->score = ratio > 10 ? 80 + 20 * ratio / 100 : 8 * ratio;
	out->needs_defrag = out->score > 55;
	return 0;
}

/* -- free space -- */

static unsigned log2_floor(uint64_t v)
{
	unsigned r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static void free_extent(struct ext4fs_frag_free *ff, uint64_t len, uint32_t block_size)
{
	unsigned idx = log2_floor(len) + 1;

	if (idx >= EXT4FS_FRAG_FREE_HIST)
		idx = EXT4FS_FRAG_FREE_HIST - 1;
	ff->hist_extents[idx]++;
	ff->hist_blocks[idx] += len;
	if (len > ff->max)
		ff->max = len;
	if (len < ff->min)
		ff->min = len;
	ff->sum += len;
	ff->extents++;
	if (len >= (ff->large_bytes + block_size - 1) / block_size) {
		ff->large_extents++;
		ff->large_blocks += len;
	}
}

/* Nonzero when every block in [from, from + n) is free. */
static int range_free(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t n)
{
	uint64_t hit;

	if (n == 0)
		return 1;
	return ext4fs_bitmap_find(bm, from, from + n - 1, 1, &hit) == -ENOENT;
}

/*
 * e2freefrag's walk: chunk 0 starts at block 0 but is tested from the
 * first data block on (at least one block), the last chunk may be short
 * and is then not free; free extents are the maximal runs of free blocks
 * over the blocks the chunks cover, across chunk boundaries.
 */
static void free_walk(const struct ext4fs_geom *geo, const struct ext4fs_bitmap *bm, struct ext4fs_frag_free *ff)
{
	uint64_t total = geo->blocks_count, fdb = geo->first_data_block;
	uint64_t pos = 0, scan_end = 0, blk;

	for (uint64_t c = 0; c < ff->total_chunks; c++) {
		uint64_t n = pos + ff->chunk_blocks > total ? total - pos : ff->chunk_blocks;
		uint64_t from = pos;

		if (ff->chunk_blocks == 0) {
			/* Nothing is tested, and an empty chunk counts as free. */
			ff->free_chunks = ff->total_chunks;
			break;
		}
		if (n == 0)
			break;          /* the rest test nothing and cannot be free */
		if (c == 0) {
			from = fdb;
			n = n > fdb ? n - fdb : 1;
		}
		if (ff->chunk_bytes && n == ff->chunk_blocks && range_free(bm, from, n))
			ff->free_chunks++;
		pos = from + n;
		scan_end = pos;
	}

	blk = fdb;
	while (blk < scan_end) {
		uint64_t free_at, used_at;
		if (ext4fs_bitmap_find(bm, blk, scan_end - 1, 0, &free_at))
			break;
		if (ext4fs_bitmap_find(bm, free_at, scan_end - 1, 1, &used_at))
			used_at = scan_end;
		free_extent(ff, used_at - free_at, geo->block_size);
		blk = used_at;
	}
}

int ext4fs_frag_free_scan(struct ext4fs_fs *fs, const struct ext4fs_bitmap *bm, uint64_t chunk_bytes,
			  uint64_t large_bytes, struct ext4fs_frag_free *out)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	struct ext4fs_bitmap *loaded = NULL;
	uint64_t chunk = chunk_bytes ? chunk_bytes : EXT4FS_FRAG_FREE_DEFAULT_CHUNK;
	unsigned shift;
	int err;

	memset(out, 0, sizeof(*out));
	out->min = UINT64_MAX;
	if (chunk_bytes && chunk_bytes < geo->block_size)
		return EXT4FS_E_INVALID_ARG;
	out->chunk_bytes = chunk_bytes;
	out->large_bytes = large_bytes ? large_bytes : EXT4FS_FRAG_FREE_LARGE_DEFAULT;
	out->chunk_bits = log2_floor(chunk);
	out->chunk_blocks = (uint32_t)(chunk >> geo->log_block_size >> 10);
	/* The count e2freefrag makes: (blocks + blocks per chunk) >> log2(blocks per chunk). */
	shift = out->chunk_bits - (10 + geo->log_block_size);
	out->total_chunks = shift >= 64 ? 0 : (geo->blocks_count + out->chunk_blocks) >> shift;
	if (!bm) {
		if ((err = ext4fs_block_bitmap_load(fs, &loaded)))
			return err;
		bm = loaded;
	}
	free_walk(geo, bm, out);
	ext4fs_bitmap_free(loaded);
	return 0;
}

/* -- directories -- */

/* Inode numbers of a directory's entries in readdir order, "." and ".." left out. */
struct entry_list {
	uint32_t *ino;
	size_t n, cap;
	size_t pos;                  /* the tree walk's cursor */
};

/* An entry and its readdir sort key, while a hash-ordered directory is collected. */
struct keyed_entry {
	uint32_t ino;
	uint32_t hash, minor;
	size_t disk_order;
};

struct collector {
	struct ext4fs_fs *fs;
	const struct ext4fs_inode *dir;
	int hashed, version;
	struct entry_list *l;
	struct keyed_entry *keys;
	size_t nkeys, keys_cap;
};

static int collect_entry(const struct ext4fs_dirent *d, void *arg)
{
	struct collector *c = arg;
	struct entry_list *l = c->l;
	uint32_t *grown;

	if (d->name_len <= 2 && d->name[0] == '.' && (d->name_len == 1 || d->name[1] == '.'))
		return 0;
	if (!(grown = ext4fs_array_grow(l->ino, &l->cap, l->n + 1, sizeof(*l->ino), 16)))
		return EXT4FS_E_NO_MEMORY;
	l->ino = grown;
	l->ino[l->n++] = d->inode;
	if (c->hashed) {
		struct keyed_entry *k = ext4fs_array_grow(c->keys, &c->keys_cap, c->nkeys + 1, sizeof(*k), 16);
		int approx;

		if (!k)
			return EXT4FS_E_NO_MEMORY;
		c->keys = k;
		k = &c->keys[c->nkeys];
		k->ino = d->inode;
		k->disk_order = c->nkeys++;
		/* A name that cannot be hashed here leaves the directory in disk order. */
		if (ext4fs_htree_name_hash(c->fs, c->dir, c->version, d->name, d->name_len, &k->hash, &k->minor,
					   &approx))
			c->hashed = 0;
	}
	return 0;
}

static int by_readdir_key(const void *a, const void *b)
{
	const struct keyed_entry *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return x->disk_order < y->disk_order ? -1 : x->disk_order > y->disk_order;
}

/* The entries of directory ino in the order the kernel's readdir gives them. */
static int collect_entries(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			   struct entry_list *l)
{
	struct collector c = { .fs = fs, .dir = inode, .l = l };
	int err;

	c.hashed = ext4fs_htree_readdir_hashed(fs, ino, inode, &c.version);
	err = ext4fs_dir_iterate(fs, ino, inode, 0, collect_entry, &c);
	if (err > 0)
		err = 0;
	if (!err && c.hashed && c.nkeys && c.nkeys == l->n) {
		qsort(c.keys, c.nkeys, sizeof(*c.keys), by_readdir_key);
		for (size_t i = 0; i < c.nkeys; i++)
			l->ino[i] = c.keys[i].ino;
	}
	free(c.keys);
	return err;
}

/* Read entry ino's inode; 1 when there is one, 0 for a number outside the file system. */
static int entry_inode(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode)
{
	int err;

	if (ino == 0 || ino > ext4fs_geom(fs)->inodes_count)
		return 0;
	if ((err = ext4fs_inode_read(fs, ino, inode)))
		return err;
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct values in a sorted array. */
static uint64_t distinct(const uint64_t *v, size_t n)
{
	uint64_t count = 0;

	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i] != v[i - 1])
			count++;
	return count;
}

int ext4fs_frag_dir(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		    struct ext4fs_frag_dir *out)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	struct entry_list l = { 0 };
	struct ext4fs_frag_file df, ff;
	struct ext4fs_inode child;
	uint64_t *groups = NULL;
	size_t n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!EXT4FS_ISDIR(inode->i_mode))
		return EXT4FS_E_NOT_DIR;
	if ((err = ext4fs_frag_file(fs, ino, inode, &df)))
		return err;
	out->dir_first_pblk = df.first_pblk;
	if ((err = collect_entries(fs, ino, inode, &l)))
		goto out;
	if (l.n && !(groups = malloc(l.n * sizeof(*groups)))) {
		err = EXT4FS_E_NO_MEMORY;
		goto out;
	}
	for (size_t i = 0; i < l.n; i++) {
		int have = entry_inode(fs, l.ino[i], &child);
		if (have < 0) {
			err = have;
			goto out;
		}
		if (!have || !EXT4FS_ISREG(child.i_mode))
			continue;
		if ((err = ext4fs_frag_file(fs, l.ino[i], &child, &ff)))
			goto out;
		if (ff.blocks == 0 || ff.first_pblk < geo->first_data_block)
			continue;
		out->files++;
		groups[n++] = (ff.first_pblk - geo->first_data_block) / geo->blocks_per_group;
		if (out->dir_first_pblk)
			out->distance_sum += ff.first_pblk > out->dir_first_pblk ? ff.first_pblk - out->dir_first_pblk
										 : out->dir_first_pblk - ff.first_pblk;
	}
	qsort(groups, n, sizeof(*groups), cmp_u64);
	out->groups = distinct(groups, n);
	/* Flex groups are runs of groups_per_flex groups: the sorted order survives the division. */
	for (size_t i = 0; i < n; i++)
		groups[i] /= geo->groups_per_flex ? geo->groups_per_flex : 1;
	out->flex_groups = distinct(groups, n);
	if (out->files && out->dir_first_pblk)
		out->mean_distance = (double)out->distance_sum / (double)out->files;
out:
	free(groups);
	free(l.ino);
	return err;
}

/* -- reading a tree -- */

struct reader {
	struct ext4fs_frag_tree *out;
	int have_prev;
	uint64_t prev_end;
};

static int read_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct reader *r = arg;

	if (v->kind != EXT4FS_BLOCK_DATA || v->count == 0)
		return 0;
	if (!r->have_prev || v->pblk != r->prev_end) {
		r->out->runs++;
		if (r->have_prev)
			r->out->seek_blocks += v->pblk > r->prev_end ? v->pblk - r->prev_end : r->prev_end - v->pblk;
	}
	r->have_prev = 1;
	r->prev_end = v->pblk + v->count;
	r->out->blocks += v->count;
	return 0;
}

static int read_data(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode, struct reader *r)
{
	int err = ext4fs_block_iterate(fs, ino, inode, EXT4FS_ITER_DATA_ONLY, read_visit, r);

	return err > 0 ? 0 : err;
}

/* Visit directory ino, then push its entries as a new level of the path. */
static int enter_dir(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     ext4fs_frag_tree_fn fn, void *arg, struct entry_list **path, size_t *depth, size_t *cap)
{
	struct entry_list *grown;
	int err;

	if (!(grown = ext4fs_array_grow(*path, cap, *depth + 1, sizeof(**path), 16)))
		return EXT4FS_E_NO_MEMORY;
	*path = grown;
	memset(&grown[*depth], 0, sizeof(grown[*depth]));
	if ((err = fn(ino, inode, arg)))
		return err;
	if ((err = collect_entries(fs, ino, inode, &grown[*depth]))) {
		free(grown[*depth].ino);
		return err;
	}
	(*depth)++;
	return 0;
}

int ext4fs_frag_tree_walk(struct ext4fs_fs *fs, uint32_t root, ext4fs_frag_tree_fn fn, void *arg,
			  uint64_t *dirs_skipped)
{
	struct map_blkset seen = { 0 };     /* the directories met (inode numbers are never 0) */
	struct entry_list *path = NULL;
	size_t depth = 0, cap = 0;
	struct ext4fs_inode inode;
	int err;

	if (dirs_skipped)
		*dirs_skipped = 0;
	if ((err = entry_inode(fs, root, &inode)) <= 0)
		return err < 0 ? err : EXT4FS_E_INVALID_ARG;
	if (!EXT4FS_ISDIR(inode.i_mode))
		return EXT4FS_E_NOT_DIR;
	if ((err = ext4fs__map_blkset_add(&seen, root)) < 0)
		goto out;
	if ((err = enter_dir(fs, root, &inode, fn, arg, &path, &depth, &cap)))
		goto out;
	while (depth > 0) {
		struct entry_list *level = &path[depth - 1];
		uint32_t ino;
		int have;

		if (level->pos >= level->n) {
			free(level->ino);
			depth--;
			continue;
		}
		ino = level->ino[level->pos++];
		if ((have = entry_inode(fs, ino, &inode)) < 0) {
			err = have;
			goto out;
		}
		if (!have)
			continue;
		if (EXT4FS_ISREG(inode.i_mode)) {
			if ((err = fn(ino, &inode, arg)))
				goto out;
		} else if (EXT4FS_ISDIR(inode.i_mode)) {
			if ((err = ext4fs__map_blkset_add(&seen, ino)) < 0)
				goto out;
			if (err == 1) {
				if (dirs_skipped)
					(*dirs_skipped)++;
				continue;
			}
			if ((err = enter_dir(fs, ino, &inode, fn, arg, &path, &depth, &cap)))
				goto out;
		}
	}
	err = 0;
out:
	while (depth > 0)
		free(path[--depth].ino);
	free(path);
	ext4fs__map_blkset_free(&seen);
	return err;
}

struct tree_reader {
	struct ext4fs_fs *fs;
	struct reader r;
};

static int tree_read(uint32_t ino, const struct ext4fs_inode *inode, void *arg)
{
	struct tree_reader *t = arg;

	if (EXT4FS_ISDIR(inode->i_mode))
		t->r.out->dirs++;
	else
		t->r.out->files++;
	return read_data(t->fs, ino, inode, &t->r);
}

int ext4fs_frag_tree(struct ext4fs_fs *fs, uint32_t root, struct ext4fs_frag_tree *out)
{
	struct tree_reader t = { .fs = fs };

	memset(out, 0, sizeof(*out));
	t.r.out = out;
	return ext4fs_frag_tree_walk(fs, root, tree_read, &t, &out->dirs_skipped);
}
