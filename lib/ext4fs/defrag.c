/*
 * defrag.c - the tree order, and compaction (defrag.h); the sweep is in
 * defrag_sweep.c.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/defrag.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/frag.h"
#include "ext4fs/inode.h"
#include "ext4fs/relocate.h"
#include "ext4fs/scan.h"
#include "blockmap_internal.h"
#include "defrag_internal.h"
#include "fs_internal.h"

struct order {
	uint32_t *inos;
	size_t n, cap;
	struct map_blkset files_seen;   /* regular files with more than one link, met already */
};

static int add_member(uint32_t ino, const struct ext4fs_inode *inode, void *arg)
{
	struct order *o = arg;
	uint32_t *grown;

	if (EXT4FS_ISREG(inode->i_mode) && inode->i_links_count > 1) {
		int seen = ext4fs__map_blkset_add(&o->files_seen, ino);
		if (seen < 0)
			return seen;
		if (seen == 1)
			return 0;
	}
	if (!(grown = ext4fs_array_grow(o->inos, &o->cap, o->n + 1, sizeof(*o->inos), 64)))
		return EXT4FS_E_NO_MEMORY;
	o->inos = grown;
	o->inos[o->n++] = ino;
	return 0;
}

int ext4fs_defrag_tree_order(struct ext4fs_fs *fs, uint32_t root, uint32_t **inos, size_t *n)
{
	struct order o = { 0 };
	int err = ext4fs_frag_tree_walk(fs, root, add_member, &o, NULL);

	ext4fs__map_blkset_free(&o.files_seen);
	if (err) {
		free(o.inos);
		*inos = NULL;
		*n = 0;
		return err == EXT4FS_E_NO_MEMORY ? ext4fs__fs_fail(fs, err, "no memory to list the tree") : err;
	}
	*inos = o.inos;
	*n = o.n;
	return 0;
}

/* -- Leaving alone what is laid out well enough ---------------------------- */

/* The regular files (by their entries' inode numbers) a directory names. */
struct kids {
	uint32_t inodes_count;
	uint32_t *v;
	size_t n, cap;
};

static int add_kid(const struct ext4fs_dirent *d, void *arg)
{
	struct kids *k = arg;
	uint32_t *grown;

	if ((d->name_len == 1 && d->name[0] == '.') || (d->name_len == 2 && d->name[0] == '.' && d->name[1] == '.'))
		return 0;
	if (d->inode == 0 || d->inode > k->inodes_count || (d->file_type && d->file_type != EXT4FS_FT_REG_FILE))
		return 0;
	if (!(grown = ext4fs_array_grow(k->v, &k->cap, k->n + 1, sizeof(*k->v), 32)))
		return EXT4FS_E_NO_MEMORY;
	k->v = grown;
	k->v[k->n++] = d->inode;
	return 0;
}

/* The most free runs between a settled directory's files. */
#define SETTLED_HOLES 2

/*
 * Whether directory dir is settled (see ext4fs_defrag_settled()).
 * Its regular files are listed in *k.
 */
static int dir_settled(struct ext4fs_fs *fs, uint32_t dir, struct kids *k, int *settled, uint64_t *span_lo,
		       uint64_t *span_hi)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	const struct ext4fs_bitmap *bm;
	struct ext4fs_inode inode;
	uint64_t lo = UINT64_MAX, hi = 0, blocks = 0, window, free_inside;
	int err;

	*settled = 0;
	k->n = 0;
	if ((err = ext4fs_inode_read(fs, dir, &inode)) || !EXT4FS_ISDIR(inode.i_mode))
		return err;
	if ((err = ext4fs_dir_iterate(fs, dir, &inode, 0, add_kid, k)))
		return err == EXT4FS_E_NO_MEMORY ? ext4fs__fs_fail(fs, err, "no memory to read a directory") : err;
	for (size_t i = 0; i < k->n; i++) {
		struct ext4fs_reloc_file f;
		int regular;

		if ((err = ext4fs_reloc_load(fs, k->v[i], &f))) {
			ext4fs_reloc_release(&f);
			return err;
		}
		regular = EXT4FS_ISREG(f.inode.i_mode);
		if (regular && f.blocks && f.nruns) {
			if (f.skip == EXT4FS_RELOC_MOVABLE && f.extents > ext4fs_reloc_fewest_extents(&f)) {
				ext4fs_reloc_release(&f);
				return 0;
			}
			blocks += f.blocks;
			for (size_t r = 0; r < f.nruns; r++) {
				if (f.runs[r].pblk < lo)
					lo = f.runs[r].pblk;
				if (f.runs[r].pblk + f.runs[r].len > hi)
					hi = f.runs[r].pblk + f.runs[r].len;
			}
		}
		if (!regular)
			k->v[i] = 0;   /* named as a file, is none: not the directory's to keep */
		ext4fs_reloc_release(&f);
	}
	if (!blocks)
		return 0;   /* no file data to keep together: the directory's own block or two is cheap to place */
	window = blocks + blocks / 4 > 2ull * geo->blocks_per_group ? blocks + blocks / 4 : 2ull * geo->blocks_per_group;
	if (hi - lo > window)
		return 0;
	if ((err = ext4fs_fs_block_bitmap(fs, &bm)))
		return err;
	free_inside = (hi - lo) - ext4fs_bitmap_count_set(bm, lo, hi - 1);
	if (free_inside > blocks / 2)
		return 0;
	/* A hole or two is the kernel's preallocation given back; more is free space shattered between the files. */
	for (uint64_t at = lo, holes = 0, free_at, used_at; at < hi; at = used_at) {
		if (ext4fs_bitmap_find(bm, at, hi - 1, 0, &free_at))
			break;
		if (++holes > SETTLED_HOLES)
			return 0;
		if (ext4fs_bitmap_find(bm, free_at, hi - 1, 1, &used_at))
			break;
	}
	*settled = 1;
	*span_lo = lo;
	*span_hi = hi;
	return 0;
}

/* A directory that may stay: its files' span and its inode numbers (itself first) in a shared list. */
struct candidate {
	uint64_t lo, hi;
	size_t first, count;
	int alive;
};

/* How many candidates still alive name an inode. */
struct holders {
	uint32_t ino;
	uint32_t alive;
};

struct settling {
	struct candidate *c;
	size_t nc, ccap;
	uint32_t *inos;                    /* the candidates' directories and files */
	size_t ninos, icap;
	struct holders *held;              /* by inode number */
	size_t nheld;
	struct ext4fs__owner_index movers; /* blocks of members that may move */
};

static int by_holder(const void *a, const void *b)
{
	const struct holders *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Count the candidates naming each inode (a file linked in two directories has two). */
static int count_holders(struct ext4fs_fs *fs, struct settling *st)
{
	size_t k = 0;

	if (!(st->held = malloc((st->ninos ? st->ninos : 1) * sizeof(*st->held))))
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to list what stays");
	for (size_t i = 0; i < st->ninos; i++)
		st->held[i] = (struct holders){ st->inos[i], 1 };
	qsort(st->held, st->ninos, sizeof(*st->held), by_holder);
	for (size_t i = 0; i < st->ninos; i++) {
		if (k && st->held[k - 1].ino == st->held[i].ino)
			st->held[k - 1].alive++;
		else
			st->held[k++] = st->held[i];
	}
	st->nheld = k;
	return 0;
}

static int in_list(const uint32_t *sorted, size_t n, uint32_t ino)
{
	return n && bsearch(&ino, sorted, n, sizeof(*sorted), ext4fs__cmp_u32) != NULL;
}

/* Add to the movers the blocks of ino when it may move. */
static int add_mover(struct ext4fs_fs *fs, struct settling *st, uint32_t ino)
{
	struct ext4fs_reloc_file f;
	struct ext4fs__owners_list l = { 0 };
	int err = ext4fs_reloc_load(fs, ino, &f);

	if (!err && f.skip == EXT4FS_RELOC_MOVABLE)
		err = ext4fs__owners_gather(fs, ino, &l);
	ext4fs_reloc_release(&f);
	if (!err && l.n) {
		/* A file named twice is added once. */
		const struct ext4fs__owner *e = ext4fs__owners_after(&st->movers, l.v[0].pblk);
		if (e && e->pblk == l.v[0].pblk && e->ino == ino)
			l.n = 0;
	}
	for (size_t i = 0; i < l.n && !err; i++)
		err = ext4fs__owners_add(fs, &st->movers, &l.v[i]);
	free(l.v);
	return err;
}

/* Whether a block of [lo, hi) belongs to a member that may move. */
static int mover_inside(const struct settling *st, uint64_t lo, uint64_t hi)
{
	const struct ext4fs__owner *e = ext4fs__owners_after(&st->movers, lo);

	return e && e->pblk < hi;
}

/*
 * A candidate whose span holds a block of a member that may move does not
 * stay: that member's leaving would leave a hole in it, the next run
 * would find it holey, and the free space there would be in pieces.  Its
 * own members then may move too, so this goes round until nothing
 * changes.
 */
static int drop_crossed(struct ext4fs_fs *fs, struct settling *st)
{
	int changed = 1, err = 0;

	while (changed && !err) {
		changed = 0;
		for (size_t i = 0; i < st->nc && !err; i++) {
			struct candidate *c = &st->c[i];

			if (!c->alive || !mover_inside(st, c->lo, c->hi))
				continue;
			c->alive = 0;
			changed = 1;
			for (size_t j = 0; j < c->count && !err; j++) {
				struct holders key = { st->inos[c->first + j], 0 }, *h;

				/* A file another directory that stays also names stays with it. */
				h = bsearch(&key, st->held, st->nheld, sizeof(*st->held), by_holder);
				if (h && --h->alive == 0)
					err = add_mover(fs, st, key.ino);
			}
		}
	}
	return err;
}

static int by_pblk(const void *a, const void *b)
{
	const struct ext4fs_prun *x = a, *y = b;

	return x->pblk < y->pblk ? -1 : x->pblk > y->pblk;
}

int ext4fs_defrag_settled(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, uint32_t **keep, size_t *nkeep,
			  struct ext4fs_prun **spans, size_t *nspans, size_t *dirs)
{
	struct kids k = { .inodes_count = ext4fs_geom(fs)->inodes_count };
	struct settling st = { 0 };
	uint32_t *sorted = NULL, *out = NULL;
	struct ext4fs_prun *span = NULL;
	size_t nout = 0, nspan = 0;
	int err = 0;

	*keep = NULL;
	*nkeep = 0;
	*spans = NULL;
	*nspans = 0;
	*dirs = 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct ext4fs_inode inode;
		uint64_t lo = 0, hi = 0;
		int settled;
		void *grown;

		if ((err = ext4fs_inode_read(fs, inos[i], &inode)) || !EXT4FS_ISDIR(inode.i_mode))
			continue;
		if ((err = dir_settled(fs, inos[i], &k, &settled, &lo, &hi)) || !settled)
			continue;
		if (!(grown = ext4fs_array_grow(st.c, &st.ccap, st.nc + 1, sizeof(*st.c), 64)) ||
		    !((st.c = grown), (grown = ext4fs_array_grow(st.inos, &st.icap, st.ninos + k.n + 1, sizeof(*st.inos),
								 256)))) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to list what stays");
			break;
		}
		st.inos = grown;
		st.c[st.nc++] = (struct candidate){ lo, hi, st.ninos, 0, 1 };
		st.inos[st.ninos++] = inos[i];
		for (size_t j = 0; j < k.n; j++)
			if (k.v[j])
				st.inos[st.ninos++] = k.v[j];
		st.c[st.nc - 1].count = st.ninos - st.c[st.nc - 1].first;
	}
	free(k.v);
	if (!err && st.nc) {
		/* The members that may move: every one but the candidates'. */
		if (!(sorted = malloc(st.ninos * sizeof(*sorted)))) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to list what stays");
		} else {
			memcpy(sorted, st.inos, st.ninos * sizeof(*sorted));
			qsort(sorted, st.ninos, sizeof(*sorted), ext4fs__cmp_u32);
		}
		for (size_t i = 0; i < n && !err; i++)
			if (!in_list(sorted, st.ninos, inos[i]))
				err = add_mover(fs, &st, inos[i]);
		if (!err)
			err = count_holders(fs, &st);
		if (!err)
			err = drop_crossed(fs, &st);
	}
	if (!err && st.nc && (!(out = malloc(st.ninos * sizeof(*out))) || !(span = malloc(st.nc * sizeof(*span)))))
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to list what stays");
	for (size_t i = 0; i < st.nc && !err; i++) {
		if (!st.c[i].alive)
			continue;
		memcpy(out + nout, st.inos + st.c[i].first, st.c[i].count * sizeof(*out));
		nout += st.c[i].count;
		span[nspan++] = (struct ext4fs_prun){ st.c[i].lo, st.c[i].hi - st.c[i].lo };
		(*dirs)++;
	}
	if (!err && nspan) {
		/* In block order, those that meet merged. */
		size_t last = 0;

		qsort(span, nspan, sizeof(*span), by_pblk);
		for (size_t i = 1; i < nspan; i++) {
			if (span[i].pblk <= span[last].pblk + span[last].len) {
				uint64_t end = span[i].pblk + span[i].len;
				if (end > span[last].pblk + span[last].len)
					span[last].len = end - span[last].pblk;
			} else {
				span[++last] = span[i];
			}
		}
		nspan = last + 1;
	}
	free(sorted);
	free(st.c);
	free(st.inos);
	free(st.held);
	ext4fs__owners_free(&st.movers);
	if (err) {
		free(out);
		free(span);
		*dirs = 0;
		return err;
	}
	if (out)
		qsort(out, nout, sizeof(*out), ext4fs__cmp_u32);
	*keep = out;
	*nkeep = nout;
	*spans = span;
	*nspans = nspan;
	return 0;
}

/* The block after the member's highest data block. */
static uint64_t member_end(const struct ext4fs_reloc_file *f)
{
	uint64_t end = 0;

	for (size_t i = 0; i < f->nruns; i++)
		if (f->runs[i].pblk + f->runs[i].len > end)
			end = f->runs[i].pblk + f->runs[i].len;
	return end;
}

/* -- Compaction -------------------------------------------------------- */

struct member_pos {
	uint64_t pblk;              /* its lowest data block */
	uint32_t ino;
};

static int by_position(const void *a, const void *b)
{
	const struct member_pos *x = a, *y = b;

	if (x->pblk != y->pblk)
		return x->pblk < y->pblk ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static uint64_t lowest_block(const struct ext4fs_reloc_file *f)
{
	uint64_t lo = UINT64_MAX;

	for (size_t i = 0; i < f->nruns; i++)
		if (f->runs[i].pblk < lo)
			lo = f->runs[i].pblk;
	return lo;
}

/* The end of the run holding the lowest block. */
static uint64_t lowest_run_end(const struct ext4fs_reloc_file *f)
{
	uint64_t lo = UINT64_MAX, end = 0;

	for (size_t i = 0; i < f->nruns; i++)
		if (f->runs[i].pblk < lo) {
			lo = f->runs[i].pblk;
			end = lo + f->runs[i].len;
		}
	return end;
}

/* Every inode with data blocks, by its lowest block. */
static int list_by_position(struct ext4fs_fs *fs, struct member_pos **out, size_t *n)
{
	struct ext4fs_scan *scan;
	struct ext4fs_inode inode;
	const unsigned char *raw;
	size_t cap = 0;
	uint32_t ino;
	int err, more;

	*out = NULL;
	*n = 0;
	err = ext4fs_scan_open(fs, 0, UINT32_MAX, 0, &scan);
	if (err)
		return err;
	while ((more = ext4fs_scan_next(scan, &ino, &inode, &raw, NULL)) == 1) {
		struct ext4fs_reloc_file f;
		struct member_pos *grown;

		if (inode.i_links_count == 0 || ext4fs_inode_has_inline_data(&inode) ||
		    !(EXT4FS_ISREG(inode.i_mode) || EXT4FS_ISDIR(inode.i_mode) || EXT4FS_ISLNK(inode.i_mode)))
			continue;
		err = ext4fs_reloc_load(fs, ino, &f);
		if (!err && f.blocks) {
			if (!(grown = ext4fs_array_grow(*out, &cap, *n + 1, sizeof(**out), 256)))
				err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to list the files");
			else {
				*out = grown;
				(*out)[(*n)++] = (struct member_pos){ lowest_block(&f), ino };
			}
		}
		ext4fs_reloc_release(&f);
		if (err)
			break;
	}
	ext4fs_scan_close(scan);
	if (!err && more < 0)
		err = more;
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
		return err;
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), by_position);
	return 0;
}

int ext4fs__defrag_all_inodes(struct ext4fs_fs *fs, uint32_t **inos, size_t *n)
{
	struct member_pos *m;
	int err = list_by_position(fs, &m, n);

	*inos = NULL;
	if (err)
		return err;
	if (!(*inos = malloc((*n ? *n : 1) * sizeof(**inos)))) {
		free(m);
		*n = 0;
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to list the files");
	}
	for (size_t i = 0; i < *n; i++)
		(*inos)[i] = m[i].ino;
	free(m);
	return 0;
}

/* The first run of need free blocks in [from, to), 1 when found. */
static int first_fit(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t to, uint64_t need, uint64_t *at)
{
	while (from < to) {
		uint64_t start, used;

		if (ext4fs_bitmap_find(bm, from, to - 1, 0, &start))
			return 0;
		if (ext4fs_bitmap_find(bm, start, to - 1, 1, &used))
			used = to;
		if (used - start >= need) {
			*at = start;
			return 1;
		}
		from = used;
	}
	return 0;
}

/* Which flex group (or group, without flex_bg) block blk lies in, and where that starts. */
static uint64_t region_start(struct ext4fs_fs *fs, uint64_t blk, uint32_t *region)
{
	uint32_t per = ext4fs_geom(fs)->groups_per_flex ? ext4fs_geom(fs)->groups_per_flex : 1;

	*region = ext4fs_group_of_block(fs, blk) / per;
	return ext4fs_group_first_block(fs, *region * per);
}

static int slide_down(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, uint64_t *cursor,
		      struct ext4fs_defrag_step *step)
{
	const struct ext4fs_bitmap *bm;
	uint64_t lo = lowest_block(f), at;
	int err;

	if (f->skip != EXT4FS_RELOC_MOVABLE || f->extents > ext4fs_reloc_fewest_extents(f)) {
		/* Fragmented files are single-file work; here they are obstacles, like metadata. */
		step->why = f->skip != EXT4FS_RELOC_MOVABLE ? f->skip : EXT4FS_RELOC_NO_SPACE;
		if (lowest_run_end(f) > *cursor)
			*cursor = lowest_run_end(f);
		return 0;
	}
	if ((err = ext4fs_fs_block_bitmap(fs, &bm)))
		return err;
	if (first_fit(bm, *cursor, lo, f->blocks, &at)) {
		struct ext4fs_prun t = { at, f->blocks };

		if (ext4fs_reloc_predict(f, &t, 1) <= f->extents) {
			if ((err = ext4fs_reloc_move(fs, f, &t, 1, &step->res)))
				return err;
			step->moved = 1;
		}
	}
	if (member_end(f) > *cursor)
		*cursor = member_end(f);
	return 0;
}

int ext4fs_defrag_compact(struct ext4fs_fs *fs, const struct ext4fs_defrag_opts *o)
{
	struct member_pos *m;
	uint64_t cursor = 0;
	uint32_t region = UINT32_MAX;
	size_t n;
	int err = list_by_position(fs, &m, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		struct ext4fs_defrag_step step = { .ino = m[i].ino, .why = EXT4FS_RELOC_MOVABLE };
		struct ext4fs_reloc_file f;
		uint32_t r;

		err = ext4fs_reloc_load(fs, m[i].ino, &f);
		if (!err && f.blocks) {
			uint64_t start = region_start(fs, lowest_block(&f), &r);
			if (r != region) {
				region = r;
				cursor = start;
			}
			err = slide_down(fs, &f, &cursor, &step);
		}
		ext4fs_reloc_release(&f);
		if (!err && o->each)
			err = o->each(&step, o->arg);
	}
	free(m);
	return err;
}
