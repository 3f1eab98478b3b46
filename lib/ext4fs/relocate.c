/*
 * relocate.c - moving a file's data blocks (see relocate.h).
 *
 * Design
 *   A move works piece by piece through the file's runs, in logical order.
 *   A piece is a span of logical blocks [first, end) and the target blocks
 *   its data goes to.  For each piece:
 *
 *     1. (journalled) begin a transaction;
 *     2. claim the piece's target blocks (bitmap, counts): they are fresh,
 *        so data written there goes straight to the disk (txn.h), after a
 *        flush if the last commit freed any of them;
 *     3. copy the piece's written blocks, old to new, through the handle
 *        (reads see anything staged);
 *     4. unmap [first, end): the old blocks' frees are held until commit;
 *     5. map each run to its new blocks (unwritten stays unwritten);
 *     6. commit: the map, bitmaps, counts and checksums of the piece land
 *        in the journal as one transaction, the held frees are done.
 *
 *   A crash before 6's commit block is durable leaves the old map, whose
 *   blocks were never written; after, the new map, whose blocks hold the
 *   copies (ordered: flushed before the commit block).  A failure within
 *   3-5 aborts the transaction, so the half-switched map never commits.
 *
 *   Pieces are sized to fit the journal: each old run touches up to a
 *   bitmap block, a descriptor block and an extent leaf; each new run a
 *   bitmap and descriptor block; an indirect map one indirect block per
 *   block_size / 4 logical blocks spanned.  A piece's estimate is kept
 *   under a quarter of the largest transaction the journal takes
 *   (ext4fs_txn_room(); the kernel keeps its transactions to a quarter of
 *   the journal too), so a commit never finds the journal too small and
 *   checkpoints stay rare.
 *
 *   The targets of every piece are fenced from the allocator (alloc.h)
 *   before the first piece starts and until the move ends: step 5 may
 *   allocate a tree leaf or an indirect block, and the allocator would
 *   take it from the free targets of a later piece, whose claim (step 2)
 *   would then fail half way.
 *
 *   Without journalled mode the same steps write through, in one piece.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/array.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/file.h"
#include "ext4fs/frag.h"
#include "ext4fs/relocate.h"
#include "ext4fs/super.h"
#include "ext4fs/txn.h"
#include "fs_internal.h"

/* Bytes copied per read and write. */
#define COPY_BYTES (1u << 20)
/* The longest run one mapping call is given: an extent's limit. */
#define MAP_CALL_MAX 32768u

const char *ext4fs_reloc_skip_name(enum ext4fs_reloc_skip why)
{
	switch (why) {
	case EXT4FS_RELOC_MOVABLE: return "movable";
	case EXT4FS_RELOC_NO_BLOCKS: return "no data blocks";
	case EXT4FS_RELOC_IMMUTABLE: return "immutable";
	case EXT4FS_RELOC_SWAP: return "swap file";
	case EXT4FS_RELOC_SYSTEM: return "reserved inode";
	case EXT4FS_RELOC_QUOTA: return "quota file";
	case EXT4FS_RELOC_ORPHAN: return "orphan";
	case EXT4FS_RELOC_IDEAL: return "already in its fewest extents";
	case EXT4FS_RELOC_NO_SPACE: return "no free space to improve it";
	}
	return "unknown";
}

/* -- Loading ---------------------------------------------------------- */

struct collector {
	struct ext4fs_reloc_file *f;
	size_t cap;
};

static int collect_run(const struct ext4fs_block_visit *v, void *arg)
{
	struct collector *c = arg;
	struct ext4fs_reloc_file *f = c->f;
	struct ext4fs_reloc_run *last = f->nruns ? &f->runs[f->nruns - 1] : NULL;

	if (last && last->lblk + last->len == v->lblk && last->pblk + last->len == v->pblk &&
	    last->unwritten == v->unwritten) {
		last->len += v->count;
	} else {
		struct ext4fs_reloc_run *grown = ext4fs_array_grow(f->runs, &c->cap, f->nruns + 1, sizeof(*f->runs), 16);
		if (!grown)
			return EXT4FS_E_NO_MEMORY;
		f->runs = grown;
		f->runs[f->nruns++] = (struct ext4fs_reloc_run){ v->lblk, v->pblk, v->count, v->unwritten };
	}
	f->blocks += v->count;
	return 0;
}

/* The swap header's signature ends the first page (4096 bytes): "SWAPSPACE2" or "SWAP-SPACE". */
#define SWAP_SIG_LEN 10u
#define SWAP_SIG_AT (4096u - SWAP_SIG_LEN)

static int swap_signature(const unsigned char *p)
{
	return !memcmp(p, "SWAPSPACE2", SWAP_SIG_LEN) || !memcmp(p, "SWAP-SPACE", SWAP_SIG_LEN);
}

static int is_swap_file(struct ext4fs_fs *fs, const struct ext4fs_reloc_file *f)
{
	unsigned char sig[SWAP_SIG_LEN];
	size_t got = 0;

	if (ext4fs_inode_size(&f->inode) < 4096)
		return 0;
	if (ext4fs_file_read(fs, f->ino, &f->inode, SWAP_SIG_AT, sig, sizeof(sig), &got) || got != sizeof(sig))
		return 0;
	return swap_signature(sig);
}

static enum ext4fs_reloc_skip classify(struct ext4fs_fs *fs, const struct ext4fs_reloc_file *f)
{
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	uint32_t ino = f->ino;
	uint16_t mode = f->inode.i_mode;

	if ((ino < sb->s_first_ino && ino != EXT4FS_ROOT_INO) || ino == sb->s_journal_inum ||
	    ino == sb->s_orphan_file_inum)
		return EXT4FS_RELOC_SYSTEM;
	if (ino == sb->s_usr_quota_inum || ino == sb->s_grp_quota_inum || ino == sb->s_prj_quota_inum)
		return EXT4FS_RELOC_QUOTA;
	if (!EXT4FS_ISREG(mode) && !EXT4FS_ISDIR(mode) && !EXT4FS_ISLNK(mode))
		return EXT4FS_RELOC_NO_BLOCKS;
	if (f->blocks == 0)
		return EXT4FS_RELOC_NO_BLOCKS;
	if (f->inode.i_links_count == 0)
		return EXT4FS_RELOC_ORPHAN;
	if (f->inode.i_flags & EXT4FS_IMMUTABLE_FL)
		return EXT4FS_RELOC_IMMUTABLE;
	if (EXT4FS_ISREG(mode) && is_swap_file(fs, f))
		return EXT4FS_RELOC_SWAP;
	return EXT4FS_RELOC_MOVABLE;
}

int ext4fs_reloc_load(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_reloc_file *f)
{
	struct ext4fs_frag_file ff;
	struct collector c = { .f = f };
	int err;

	memset(f, 0, sizeof(*f));
	f->ino = ino;
	err = ext4fs_inode_read(fs, ino, &f->inode);
	if (err)
		return err;
	if (ext4fs_inode_has_inline_data(&f->inode) || ext4fs_inode_is_fast_symlink(fs, &f->inode) ||
	    !(EXT4FS_ISREG(f->inode.i_mode) || EXT4FS_ISDIR(f->inode.i_mode) || EXT4FS_ISLNK(f->inode.i_mode))) {
		f->skip = classify(fs, f);
		if (f->skip == EXT4FS_RELOC_MOVABLE)
			f->skip = EXT4FS_RELOC_NO_BLOCKS;
		return 0;
	}
	err = ext4fs_block_iterate(fs, ino, &f->inode, EXT4FS_ITER_DATA_ONLY, collect_run, &c);
	if (!err)
		err = ext4fs_frag_file(fs, ino, &f->inode, &ff);
	if (err)
		return err;
	f->extents = ff.extents;
	f->map_blocks = ff.map_blocks;
	f->skip = classify(fs, f);
	return 0;
}

void ext4fs_reloc_release(struct ext4fs_reloc_file *f)
{
	free(f->runs);
	memset(f, 0, sizeof(*f));
}

/* -- Choosing space --------------------------------------------------- */

struct free_runs {
	struct ext4fs_prun *r;
	size_t n;
	uint64_t total;
};

/* Every free run of the live bitmap, in block order. */
static int list_free(struct ext4fs_fs *fs, struct free_runs *out)
{
	const struct ext4fs_bitmap *bm;
	uint64_t at, end;
	size_t cap = 0;
	int err = ext4fs_fs_block_bitmap(fs, &bm);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	at = ext4fs_bitmap_start(bm);
	end = ext4fs_bitmap_end(bm);
	while (at <= end) {
		struct ext4fs_prun *grown;
		uint64_t start, used;

		if (ext4fs_bitmap_find(bm, at, end, 0, &start))
			break;
		if (ext4fs_bitmap_find(bm, start, end, 1, &used))
			used = end + 1;
		grown = ext4fs_array_grow(out->r, &cap, out->n + 1, sizeof(*out->r), 64);
		if (!grown) {
			free(out->r);
			out->r = NULL;
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to list free space");
		}
		out->r = grown;
		out->r[out->n++] = (struct ext4fs_prun){ start, used - start };
		out->total += used - start;
		at = used;
	}
	return 0;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static int by_len_desc(const void *a, const void *b)
{
	const struct ext4fs_prun *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? 1 : -1;
	return x->pblk < y->pblk ? -1 : x->pblk > y->pblk;
}

static int by_pblk(const void *a, const void *b)
{
	const struct ext4fs_prun *x = a, *y = b;

	return x->pblk < y->pblk ? -1 : x->pblk > y->pblk;
}

/* The one run to take need blocks from, or NULL when none is long enough. */
/* Where a file of need blocks starts in run r: on a stripe boundary (stripe > 1) when r holds it so, else r's start. */
static uint64_t aligned_start(const struct ext4fs_prun *r, uint64_t need, uint32_t stripe)
{
	uint64_t at;

	if (stripe <= 1)
		return r->pblk;
	at = (r->pblk + stripe - 1) / stripe * stripe;
	return at + need <= r->pblk + r->len ? at : r->pblk;
}

/*
 * The free run for need blocks, as ext4fs_reloc_find_space() says; with a
 * stripe (> 1), only runs that hold the file starting on a stripe boundary.
 */
static const struct ext4fs_prun *one_run(const struct free_runs *fr, uint64_t need, uint64_t goal, unsigned flags,
					 uint32_t stripe)
{
	const struct ext4fs_prun *best = NULL, *first_wrapped = NULL;

	for (size_t i = 0; i < fr->n; i++) {
		const struct ext4fs_prun *r = &fr->r[i];

		if (r->len < need || (stripe > 1 && aligned_start(r, need, stripe) % stripe))
			continue;
		if (flags & EXT4FS_RELOC_NEAR) {
			if (r->pblk + r->len > goal)
				return r;
			if (!first_wrapped)
				first_wrapped = r;
			continue;
		}
		if (!best || r->len < best->len ||
		    (r->len == best->len && distance(r->pblk, goal) < distance(best->pblk, goal)))
			best = r;
	}
	return (flags & EXT4FS_RELOC_NEAR) ? first_wrapped : best;
}

int ext4fs_reloc_find_space(struct ext4fs_fs *fs, uint64_t need, uint64_t goal, size_t max_pieces,
			    uint64_t reserve, unsigned flags, struct ext4fs_prun **out, size_t *n)
{
	struct free_runs fr;
	const struct ext4fs_prun *one;
	uint64_t got = 0;
	uint32_t stripe;
	size_t k = 0;
	int err;

	*out = NULL;
	*n = 0;
	if (need == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "finding space for 0 blocks");
	err = list_free(fs, &fr);
	if (err)
		return err;
	if (fr.total < need || fr.total - need < reserve) {
		free(fr.r);
		return EXT4FS_E_NO_SPACE;
	}
	/* A stripe-sized file or larger starts on a stripe boundary where one fits it, as the kernel places it. */
	stripe = (flags & EXT4FS_RELOC_NEAR) ? 0 : ext4fs_alloc_stripe(fs);
	if (need < stripe)
		stripe = 0;
	if (stripe <= 1 || !(one = one_run(&fr, need, goal, flags, stripe)))
		one = one_run(&fr, need, goal, flags, 0);
	if (one) {
		struct ext4fs_prun t = { aligned_start(one, need, stripe), need };

		/* Near the goal: start at it when the run holds it with room to spare. */
		if ((flags & EXT4FS_RELOC_NEAR) && goal > one->pblk && goal + need <= one->pblk + one->len)
			t.pblk = goal;
		free(fr.r);
		*out = malloc(sizeof(**out));
		if (!*out)
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a plan");
		**out = t;
		*n = 1;
		return 0;
	}
	qsort(fr.r, fr.n, sizeof(*fr.r), by_len_desc);
	while (got < need && k < fr.n && (max_pieces == 0 || k < max_pieces))
		got += fr.r[k++].len;
	if (got < need) {
		free(fr.r);
		return EXT4FS_E_NO_SPACE;
	}
	fr.r[k - 1].len -= got - need;
	qsort(fr.r, k, sizeof(*fr.r), by_pblk);
	*out = realloc(fr.r, k * sizeof(*fr.r));
	if (!*out) {
		free(fr.r);
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a plan");
	}
	*n = k;
	return 0;
}

/* -- Laying a file into target runs ------------------------------------ */

/*
 * Walks the file's runs and the targets side by side, handing out pieces
 * of a run that land in one target run: (lblk, old pblk, new pblk, len).
 */
struct layout {
	const struct ext4fs_reloc_file *f;
	const struct ext4fs_prun *t;
	size_t nt;
	size_t run, target;      /* current file run and target run */
	uint64_t run_off, target_off;
};

struct placed {
	uint64_t lblk, old_pblk, new_pblk, len;
	int unwritten;
	size_t run;              /* the file run it comes from */
};

static void layout_init(struct layout *l, const struct ext4fs_reloc_file *f, const struct ext4fs_prun *t, size_t nt)
{
	memset(l, 0, sizeof(*l));
	l->f = f;
	l->t = t;
	l->nt = nt;
}

/* 1 with the next piece, 0 at the end of the file, -1 when the targets ran out. */
static int layout_next(struct layout *l, struct placed *p)
{
	const struct ext4fs_reloc_run *r;
	uint64_t len;

	if (l->run >= l->f->nruns)
		return 0;
	while (l->target < l->nt && l->target_off >= l->t[l->target].len) {
		l->target++;
		l->target_off = 0;
	}
	if (l->target >= l->nt)
		return -1;
	r = &l->f->runs[l->run];
	len = r->len - l->run_off;
	if (len > l->t[l->target].len - l->target_off)
		len = l->t[l->target].len - l->target_off;
	*p = (struct placed){ r->lblk + l->run_off, r->pblk + l->run_off, l->t[l->target].pblk + l->target_off, len,
			      r->unwritten, l->run };
	l->run_off += len;
	l->target_off += len;
	if (l->run_off == r->len) {
		l->run++;
		l->run_off = 0;
	}
	return 1;
}

uint64_t ext4fs_reloc_predict(const struct ext4fs_reloc_file *f, const struct ext4fs_prun *t, size_t n)
{
	struct layout l;
	struct placed p;
	uint64_t extents = 0, next_l = 0, next_p = 0;
	int r;

	layout_init(&l, f, t, n);
	while ((r = layout_next(&l, &p)) == 1) {
		/* frag.h: a run continues where the disk continues, across a hole too. */
		if (!extents || p.lblk < next_l || p.new_pblk != next_p + (p.lblk - next_l))
			extents++;
		next_l = p.lblk + p.len;
		next_p = p.new_pblk + p.len;
	}
	return r < 0 ? 0 : extents;
}

/* -- Moving ------------------------------------------------------------ */

struct mover {
	struct ext4fs_fs *fs;
	struct ext4fs_reloc_file *f;
	struct ext4fs_reloc_result *res;
	unsigned char *buf;
	uint64_t buf_blocks;
	int journalled;
};

/* Copy len written blocks from old to new. */
static int copy_blocks(struct mover *m, uint64_t old, uint64_t new_blk, uint64_t len)
{
	uint32_t bs = ext4fs_geom(m->fs)->block_size;

	while (len) {
		uint64_t k = len < m->buf_blocks ? len : m->buf_blocks;
		int err = ext4fs_blocks_read(m->fs, old, k, m->buf);

		if (!err)
			err = ext4fs_data_write(m->fs, new_blk, k, m->buf);
		if (err)
			return err;
		m->res->bytes_copied += k * bs;
		old += k;
		new_blk += k;
		len -= k;
	}
	return 0;
}

/*
 * Copy one placed run.  A rehearsal (EXT4FS_OPEN_REHEARSE) copies no
 * regular file's data, only counts it, so its memory stays the metadata's:
 * the data is opaque here, while directories and symlinks are read again
 * by whoever measures the result.  Only the swap check reads a regular
 * file again (classify()): where the stale bytes at the new place would
 * show it a signature the file does not have, the file's own block goes
 * there, so the rehearsal classifies the file as the run would.
 */
static int copy_piece(struct mover *m, const struct placed *p)
{
	uint32_t bs = ext4fs_geom(m->fs)->block_size;
	uint64_t sig_lblk = SWAP_SIG_AT / bs;
	int err;

	if (!(ext4fs_fs_flags(m->fs) & EXT4FS_OPEN_REHEARSE) || !EXT4FS_ISREG(m->f->inode.i_mode))
		return copy_blocks(m, p->old_pblk, p->new_pblk, p->len);
	m->res->bytes_copied += p->len * bs;
	if (sig_lblk < p->lblk || sig_lblk - p->lblk >= p->len)
		return 0;
	if ((err = ext4fs_blocks_read(m->fs, p->new_pblk + (sig_lblk - p->lblk), 1, m->buf)))
		return err;
	if (!swap_signature(m->buf + SWAP_SIG_AT % bs))
		return 0;
	m->res->bytes_copied -= bs;   /* copy_blocks() counts it again */
	return copy_blocks(m, p->old_pblk + (sig_lblk - p->lblk), p->new_pblk + (sig_lblk - p->lblk), 1);
}

/* Steps 2-5 for pieces p[0..np) covering logical [first, end). */
static int switch_piece(struct mover *m, const struct placed *p, size_t np, uint64_t first, uint64_t end)
{
	struct ext4fs_fs *fs = m->fs;
	int err = 0;
	size_t i;

	for (i = 0; i < np && !err; i++)
		err = ext4fs_blocks_mark_used(fs, p[i].new_pblk, p[i].len);
	if (err) {
		/* Give back what was claimed: nothing else changed yet. */
		for (size_t k = 0; k + 1 < i; k++)
			(void)ext4fs_blocks_mark_free(fs, p[k].new_pblk, p[k].len);
		return err;
	}
	for (i = 0; i < np && !err; i++)
		if (!p[i].unwritten)
			err = copy_piece(m, &p[i]);
	if (!err)
		err = ext4fs_bmap_unmap(fs, m->f->ino, &m->f->inode, first, end - first);
	for (i = 0; i < np && !err; i++) {
		for (uint64_t done = 0; done < p[i].len && !err;) {
			uint64_t k = p[i].len - done;
			if (k > MAP_CALL_MAX)
				k = MAP_CALL_MAX;
			err = ext4fs_bmap_set(fs, m->f->ino, &m->f->inode, p[i].lblk + done, p[i].new_pblk + done,
					      (uint32_t)k, p[i].unwritten);
			done += k;
		}
		if (!err)
			m->res->blocks_moved += p[i].len;
	}
	return err;
}

/*
 * Refuse a piece, before anything changes, when too few blocks would stay
 * free, once its target is claimed, for the mapping blocks it may need:
 * splits at both ends of the range unmapped, new leaves for its runs,
 * indirect blocks for its span (the map calls may take them from the
 * reserved blocks).  The targets of the pieces still to come are fenced,
 * so they do not count either (unclaimed: the move's target blocks not
 * claimed yet, this piece's included).  Blocks it frees are held until
 * the commit, so they do not count.  A switch that ran out half way would
 * have to be given up.
 */
static int room_for_piece(struct ext4fs_fs *fs, uint32_t ino, size_t np, uint64_t span, uint64_t unclaimed)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	uint64_t need = 8 + np / 64 + 2 * (span / (geo->block_size / 4) + 1);

	if (geo->free_blocks_count < unclaimed + need)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_SPACE,
				       "inode %u: no room for the mapping blocks a move may need (%llu free)", ino,
				       (unsigned long long)geo->free_blocks_count);
	return 0;
}

/* The journal blocks a piece may touch (see the design block). */
static uint64_t piece_cost(const struct ext4fs_fs *fs, size_t old_runs, size_t new_runs, uint64_t span)
{
	uint32_t per_ind = ext4fs_geom(fs)->block_size / 4;

	return 16 + 3 * (uint64_t)old_runs + 2 * (uint64_t)new_runs + 2 * (span / per_ind + 1);
}

/* Move the runs f lists (all of the file, or a view of part of it) into t; f->inode follows the map. */
static int move_runs(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, const struct ext4fs_prun *t, size_t n,
		     struct ext4fs_reloc_result *res)
{
	struct ext4fs_reloc_result local;
	struct mover m = { .fs = fs, .f = f };
	struct layout l;
	struct placed *pieces = NULL, p;
	size_t np = 0, cap = 0;
	uint64_t budget = UINT64_MAX, capacity = 0, unclaimed = 0;
	uint32_t bs = ext4fs_geom(fs)->block_size;
	int err = 0, r;

	m.res = res ? res : &local;
	memset(m.res, 0, sizeof(*m.res));
	m.res->extents_before = f->extents;
	if (f->skip != EXT4FS_RELOC_MOVABLE)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u cannot be moved: %s", f->ino,
				       ext4fs_reloc_skip_name(f->skip));
	for (size_t i = 0; i < n; i++)
		capacity += t[i].len;
	if (capacity < f->blocks)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: %llu target blocks for %llu blocks", f->ino,
				       (unsigned long long)capacity, (unsigned long long)f->blocks);
	m.journalled = ext4fs_txn_active(fs);
	if (m.journalled) {
		struct ext4fs_txn_room room;
		err = ext4fs_txn_room(fs, &room);
		if (err)
			return err;
		budget = room.max_blocks / 4;
		if (piece_cost(fs, 1, 1, 1) > budget)
			return ext4fs__fs_fail(fs, EXT4FS_E_JOURNAL_FULL,
					       "inode %u: the journal is too small to move even one run", f->ino);
	}
	m.buf_blocks = COPY_BYTES / bs ? COPY_BYTES / bs : 1;
	m.buf = malloc(m.buf_blocks * bs);
	if (!m.buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to copy blocks");

	/*
	 * A piece's map calls may allocate (tree leaves, indirect blocks), and
	 * the allocator would gladly take the free targets of a piece still to
	 * come: fence them all until the move is over.
	 */
	layout_init(&l, f, t, n);
	while ((r = layout_next(&l, &p)) == 1) {
		if ((err = ext4fs_alloc_fence(fs, p.new_pblk, p.len)))
			goto out;
		unclaimed += p.len;
	}
	layout_init(&l, f, t, n);
	for (;;) {
		size_t old_runs = 0, last_run = (size_t)-1;
		uint64_t first = 0, end = 0;

		/* Gather a piece: whole file runs while the journal estimate allows (at least one). */
		np = 0;
		while ((r = layout_next(&l, &p)) == 1) {
			int new_run = p.run != last_run;
			uint64_t cost = piece_cost(fs, old_runs + new_run, np + 1, p.lblk + p.len - (np ? first : p.lblk));

			if (np && new_run && cost > budget) {
				/* Put it back: the next piece starts with this run. */
				l.run = p.run;
				l.run_off = p.lblk - f->runs[p.run].lblk;
				l.target_off -= p.len;
				break;
			}
			if (np == cap) {
				struct placed *grown = ext4fs_array_grow(pieces, &cap, np + 1, sizeof(*pieces), 16);
				if (!grown) {
					err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to plan a move");
					goto out;
				}
				pieces = grown;
			}
			if (!np)
				first = p.lblk;
			pieces[np++] = p;
			old_runs += new_run;
			last_run = p.run;
			end = p.lblk + p.len;
		}
		if (np == 0)
			break;
		if ((err = room_for_piece(fs, f->ino, np, end - first, unclaimed)))
			goto out;
		for (size_t i = 0; i < np; i++)
			unclaimed -= pieces[i].len;
		if (m.journalled && (err = ext4fs_txn_begin(fs)))
			goto out;
		err = switch_piece(&m, pieces, np, first, end);
		if (err) {
			/* Half switched: never let a caller take this for "no room, nothing done". */
			if (m.journalled)
				(void)ext4fs_txn_abort(fs);
			err = ext4fs__fs_fail(fs, EXT4FS_E_TXN_FAILED,
					      "inode %u: moving its blocks failed half way (%s)%s", f->ino,
					      ext4fs_strerror(err),
					      m.journalled ? ": the transaction was given up" : "");
			goto out;
		}
		if (m.journalled) {
			err = ext4fs_txn_commit(fs);
			if (err)
				goto out;
			m.res->transactions++;
		}
		if (r != 1)
			break;
	}
	if (r < 0)
		err = ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: the target runs are too short", f->ino);
out:
	ext4fs_alloc_unfence_all(fs);
	free(pieces);
	free(m.buf);
	return err;
}

/* Load f again after a move: its runs describe the new place. */
static int reload(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, struct ext4fs_reloc_result *res)
{
	uint32_t ino = f->ino;
	int err;

	ext4fs_reloc_release(f);
	err = ext4fs_reloc_load(fs, ino, f);
	if (!err && res)
		res->extents_after = f->extents;
	return err;
}

int ext4fs_reloc_move(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, const struct ext4fs_prun *t, size_t n,
		      struct ext4fs_reloc_result *res)
{
	int err = move_runs(fs, f, t, n, res);

	return err ? err : reload(fs, f, res);
}

int ext4fs_reloc_move_range(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, uint64_t lblk, uint64_t lend,
			    const struct ext4fs_prun *t, size_t n, struct ext4fs_reloc_result *res)
{
	struct ext4fs_reloc_file part = *f;
	size_t k = 0;
	int err;

	part.runs = malloc((f->nruns ? f->nruns : 1) * sizeof(*part.runs));
	if (!part.runs)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to move part of inode %u", f->ino);
	part.blocks = 0;
	for (size_t i = 0; i < f->nruns; i++) {
		struct ext4fs_reloc_run r = f->runs[i];
		uint64_t lo = r.lblk > lblk ? r.lblk : lblk;
		uint64_t hi = r.lblk + r.len < lend ? r.lblk + r.len : lend;

		if (lo >= hi)
			continue;
		part.runs[k++] = (struct ext4fs_reloc_run){ lo, r.pblk + (lo - r.lblk), hi - lo, r.unwritten };
		part.blocks += hi - lo;
	}
	part.nruns = k;
	if (k == 0) {
		free(part.runs);
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u maps nothing in blocks %llu-%llu", f->ino,
				       (unsigned long long)lblk, (unsigned long long)lend - 1);
	}
	err = move_runs(fs, &part, t, n, res);
	free(part.runs);
	f->inode = part.inode;
	return err ? err : reload(fs, f, res);
}

uint64_t ext4fs_reloc_fewest_extents(const struct ext4fs_reloc_file *f)
{
	struct ext4fs_prun one = { 0, f->blocks };
	uint64_t packed = ext4fs_reloc_predict(f, &one, 1);
	uint64_t ideal = (f->blocks + EXT4FS_FRAG_IDEAL_BLOCKS - 1) / EXT4FS_FRAG_IDEAL_BLOCKS;

	return packed > ideal ? packed : ideal;
}

int ext4fs_reloc_defrag_file(struct ext4fs_fs *fs, uint32_t ino, uint64_t reserve, enum ext4fs_reloc_skip *why,
			     struct ext4fs_reloc_result *res)
{
	struct ext4fs_reloc_file f;
	struct ext4fs_prun *t = NULL;
	size_t n = 0;
	int err;

	if (res)
		memset(res, 0, sizeof(*res));
	err = ext4fs_reloc_load(fs, ino, &f);
	if (err)
		goto out;
	if (res)
		res->extents_before = res->extents_after = f.extents;
	*why = f.skip;
	if (f.skip != EXT4FS_RELOC_MOVABLE)
		goto out;
	if (f.extents <= ext4fs_reloc_fewest_extents(&f)) {
		*why = EXT4FS_RELOC_IDEAL;
		goto out;
	}
	err = ext4fs_reloc_find_space(fs, f.blocks, f.runs[0].pblk, (size_t)(f.extents - 1), reserve, 0, &t, &n);
	if (err == EXT4FS_E_NO_SPACE || (!err && ext4fs_reloc_predict(&f, t, n) >= f.extents)) {
		*why = EXT4FS_RELOC_NO_SPACE;
		err = 0;
		goto out;
	}
	if (!err) {
		err = ext4fs_reloc_move(fs, &f, t, n, res);
		if (err == EXT4FS_E_NO_SPACE) {
			/* Refused before a piece changed anything (what was switched before stays switched). */
			*why = EXT4FS_RELOC_NO_SPACE;
			err = 0;
		}
	}
out:
	free(t);
	ext4fs_reloc_release(&f);
	return err;
}
