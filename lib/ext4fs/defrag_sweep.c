/*
 * defrag_sweep.c - laying members out back to back from the start of the
 * volume, in the order given, making room as the sweep goes (see
 * ext4fs_defrag_sweep() in defrag.h).
 *
 * Design
 *   The target layout is the one a fresh copy writes: member after member,
 *   each contiguous, from the first data block on, stepping over what may
 *   not move (metadata, the journal, files that must stay, members already
 *   placed).  A frontier F marks where the next member goes.  For each
 *   member, its data is taken in logical order in chunks; a chunk's target
 *   T is the next stretch at or after F that holds only free blocks and
 *   blocks of members still to come (or of this member).  Then:
 *
 *     1. a chunk already mapped to T, block for block, stays (so a volume
 *        already laid out moves nothing, and a second sweep neither);
 *     2. whatever T holds is evacuated: the data of other members (and of
 *        this one) by logical range, their extent tree or indirect blocks
 *        one by one, each to free space taken from the top of the volume
 *        down, out of the way of the sweep;
 *     3. the chunk moves into T; F moves past it.
 *
 *   A chunk is at most half the free space, so what lies in its way always
 *   fits elsewhere: on a nearly full volume a large file is laid out in
 *   many small steps, each moving its own misplaced blocks out of the way.
 *   A member's own mapping blocks follow its data.  A member of at most a
 *   block group is not split over an obstacle: the stretch before the
 *   obstacle is left free and the member goes after it, as a fresh copy
 *   would place it.  With a RAID stripe, a member of a stripe or more
 *   starts on a stripe boundary (the gap before it stays free), as the
 *   kernel's allocator places such a file.
 *   When no room is left to evacuate into, the member stays where it is
 *   (and becomes an obstacle).  Every block moves at most once to make room
 *   and once into place, unless the sweep reaches the top of the volume
 *   where evacuated blocks wait.
 *
 *   Transactions (journalled mode): a move of a few blocks is small next
 *   to a commit and its flush, so small moves (evacuations, chunks of small
 *   members, mapping blocks), of one member or several, share a
 *   transaction, up to half the journal's largest one and GROUP_BLOCKS
 *   moved; a larger move commits its own pieces (relocate.h).  Blocks a
 *   transaction frees stay in use until it commits, so the group commits
 *   when a stretch has been cleared, before the chunk moves into it, and
 *   when evacuation finds no room; a group moves at most a sixteenth of
 *   the free space, so on a nearly full volume moves commit alone.  A crash loses the moves of the group under way, whole.
 *
 *   The owners of blocks that may be evacuated are kept in an index by
 *   block (defrag_internal.h): only members still to come are in it, so a
 *   used block outside it is an obstacle.  After each move that touches a
 *   member, its map is walked again and only what changed (one stretch)
 *   goes into the index.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/array.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/defrag.h"
#include "ext4fs/errors.h"
#include "ext4fs/relocate.h"
#include "ext4fs/txn.h"
#include "defrag_internal.h"
#include "fs_internal.h"

/* Blocks of a member moved per chunk. */
#define CHUNK_BLOCKS 8192u

typedef struct ext4fs__owner owner_t;

/* A member still to come: its blocks as last gathered, in the order the map gives them. */
struct member {
	uint32_t ino;
	owner_t *v;
	size_t n;
};

struct sweep {
	struct ext4fs_fs *fs;
	const struct ext4fs_defrag_opts *o;
	struct ext4fs__owner_index ix;    /* the blocks of members still to come */
	struct member *members;           /* sorted by inode number */
	size_t nmembers;
	uint64_t first, end;              /* the volume's data blocks [first, end) */
	uint32_t stripe;                  /* RAID stripe in blocks (0: none) */
	struct ext4fs_defrag_step *step;  /* the member being placed */
	int whole_victims;                /* making room: evacuate whole owners, each to one free run */
	int group_open;                   /* small moves gathered in one transaction (journalled mode) */
	uint64_t group_blocks;            /* blocks moved in it */
};

/* -- The index ------------------------------------------------------------ */

static struct member *member_of(const struct sweep *s, uint32_t ino)
{
	size_t lo = 0, hi = s->nmembers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->members[mid].ino == ino)
			return &s->members[mid];
		if (s->members[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int same_owner(const owner_t *x, const owner_t *y)
{
	return x->pblk == y->pblk && x->len == y->len && x->lblk == y->lblk && x->map == y->map;
}

/*
 * Reindex member ino after a move: gather its blocks again and change in
 * the index only what differs from the last gathering.  A move changes
 * one stretch of the file's map, so the two lists agree at both ends,
 * and a file in twenty thousand extents costs a walk of its map, not a
 * rebuild of the index.
 */
static int index_member(struct sweep *s, uint32_t ino)
{
	struct member *m = member_of(s, ino);
	struct ext4fs__owners_list a = { 0 };
	size_t head = 0, tail = 0;
	int err;

	if (!m || !m->v)
		return 0;   /* not indexed: placed already, or it had to stay */
	if ((err = ext4fs__owners_gather(s->fs, ino, &a))) {
		free(a.v);
		return err;
	}
	while (head < m->n && head < a.n && same_owner(&m->v[head], &a.v[head]))
		head++;
	while (tail < m->n - head && tail < a.n - head && same_owner(&m->v[m->n - 1 - tail], &a.v[a.n - 1 - tail]))
		tail++;
	for (size_t i = head; i < m->n - tail && !err; i++)
		err = ext4fs__owners_remove(s->fs, &s->ix, &m->v[i]);
	for (size_t i = head; i < a.n - tail && !err; i++)
		err = ext4fs__owners_add(s->fs, &s->ix, &a.v[i]);
	free(m->v);
	m->v = a.v;
	m->n = a.n;
	return err;
}

/* Member ino is placed: its blocks leave the index. */
static int forget(struct sweep *s, uint32_t ino)
{
	struct member *m = member_of(s, ino);
	int err = 0;

	if (!m || !m->v)
		return 0;
	for (size_t i = 0; i < m->n && !err; i++)
		err = ext4fs__owners_remove(s->fs, &s->ix, &m->v[i]);
	free(m->v);
	m->v = NULL;
	m->n = 0;
	return err;
}

/* The entry holding blk, or NULL. */
static const owner_t *owner_of(const struct sweep *s, uint64_t blk)
{
	const owner_t *e = ext4fs__owners_after(&s->ix, blk);

	return e && e->pblk <= blk ? e : NULL;
}

/* -- Stretches ------------------------------------------------------------ */

/* Free, or held by a member still to come: the sweep may use it. */
/* The first reserved stretch (ext4fs_defrag_opts.reserved) that ends after blk, or NULL. */
static const struct ext4fs_prun *reserved_after(const struct sweep *s, uint64_t blk)
{
	size_t lo = 0, hi = s->o->nreserved;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->o->reserved[mid].pblk + s->o->reserved[mid].len <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->o->nreserved ? &s->o->reserved[lo] : NULL;
}

static int usable(const struct sweep *s, const struct ext4fs_bitmap *bm, uint64_t blk)
{
	const struct ext4fs_prun *r = reserved_after(s, blk);

	if (r && r->pblk <= blk)
		return 0;
	return ext4fs_bitmap_test(bm, blk) == 0 || owner_of(s, blk) != NULL;
}

/* The first usable block at or after blk (s->end when none). */
static uint64_t next_usable(const struct sweep *s, const struct ext4fs_bitmap *bm, uint64_t blk)
{
	while (blk < s->end) {
		uint64_t free_at = s->end, owned_at = s->end;
		const struct ext4fs_prun *r = reserved_after(s, blk);
		const owner_t *e;

		if (r && r->pblk <= blk) {
			blk = r->pblk + r->len;   /* a settled directory's stretch: nothing goes in it */
			continue;
		}
		if (usable(s, bm, blk))
			return blk;
		if (ext4fs_bitmap_find(bm, blk, s->end - 1, 0, &free_at))
			free_at = s->end;
		if ((e = ext4fs__owners_after(&s->ix, blk)))
			owned_at = e->pblk;
		blk = free_at < owned_at ? free_at : owned_at;
	}
	return s->end;
}

/*
 * The first block at or after blk (a usable one) that is not usable, or
 * limit if there is none before it (the caller asks only whether a stretch
 * is long enough, so the walk never goes past what it needs).
 */
static uint64_t next_obstacle(const struct sweep *s, const struct ext4fs_bitmap *bm, uint64_t blk, uint64_t limit)
{
	const struct ext4fs_prun *r = reserved_after(s, blk);

	if (limit > s->end)
		limit = s->end;
	if (r && r->pblk < limit)
		limit = r->pblk > blk ? r->pblk : blk;
	while (blk < limit) {
		const owner_t *e;
		uint64_t used;

		if (ext4fs_bitmap_find(bm, blk, limit - 1, 1, &used))
			return limit;
		if (!(e = owner_of(s, used)))
			return used;
		blk = e->pblk + e->len;
	}
	return limit;
}

/* -- Making room ------------------------------------------------------------ */

/*
 * Free runs for need blocks outside [avoid_lo, avoid_hi), taken from the
 * top of the volume down.  *out (caller frees) holds *n runs.
 */
static int spill_space(struct sweep *s, uint64_t need, uint64_t avoid_lo, uint64_t avoid_hi,
		       struct ext4fs_prun **out, size_t *n)
{
	const uint64_t window = 65536;
	const struct ext4fs_bitmap *bm;
	struct ext4fs_prun *runs = NULL;
	size_t nr = 0, cap = 0;
	uint64_t got = 0, hi = s->end;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = ext4fs_fs_block_bitmap(s->fs, &bm)))
		return err;
	while (got < need && hi > s->first) {
		uint64_t lo = hi - s->first > window ? hi - window : s->first;
		struct ext4fs_prun *win = NULL;
		size_t nw = 0, wcap = 0;

		/* The free runs of [lo, hi), in block order. */
		for (uint64_t at = lo; at < hi;) {
			uint64_t start, used;
			struct ext4fs_prun *grown;

			if (ext4fs_bitmap_find(bm, at, hi - 1, 0, &start))
				break;
			if (ext4fs_bitmap_find(bm, start, hi - 1, 1, &used))
				used = hi;
			if (!(grown = ext4fs_array_grow(win, &wcap, nw + 1, sizeof(*win), 64))) {
				free(win);
				free(runs);
				return ext4fs__fs_fail(s->fs, EXT4FS_E_NO_MEMORY, "no memory to find room");
			}
			win = grown;
			win[nw++] = (struct ext4fs_prun){ start, used - start };
			at = used;
		}
		/* Take them from the top, clipped to stay out of the way. */
		for (size_t i = nw; i-- > 0 && got < need;) {
			uint64_t a = win[i].pblk, b = win[i].pblk + win[i].len;
			struct ext4fs_prun *grown;

			if (a < avoid_hi && b > avoid_lo) {
				if (b > avoid_hi) {
					a = avoid_hi;
				} else if (a < avoid_lo) {
					b = avoid_lo;
				} else {
					continue;
				}
			}
			if (s->whole_victims && b - a < need - got)
				continue;   /* a victim goes in one piece or not at all */
			if (b - a > need - got)
				a = b - (need - got);
			if (!(grown = ext4fs_array_grow(runs, &cap, nr + 1, sizeof(*runs), 16))) {
				free(win);
				free(runs);
				return ext4fs__fs_fail(s->fs, EXT4FS_E_NO_MEMORY, "no memory to find room");
			}
			runs = grown;
			runs[nr++] = (struct ext4fs_prun){ a, b - a };
			got += b - a;
		}
		free(win);
		hi = lo;
	}
	if (got < need) {
		free(runs);
		return EXT4FS_E_NO_SPACE;
	}
	/* Lowest first, so an evacuated range lands in block order. */
	for (size_t i = 0; i < nr / 2; i++) {
		struct ext4fs_prun t = runs[i];
		runs[i] = runs[nr - 1 - i];
		runs[nr - 1 - i] = t;
	}
	*out = runs;
	*n = nr;
	return 0;
}

/* -- Small moves share transactions ------------------------------------------ */

/* A move of at most this many blocks, in at most this many runs, joins the open group. */
#define GROUP_MOVE_BLOCKS 1024u
#define GROUP_MOVE_RUNS 16u
/*
 * A group ends once it moved this many blocks, or a sixteenth of the free
 * space (the old places of what it moved are held until it commits).
 */
#define GROUP_BLOCKS 8192u

/* Commit the open group, if any. */
static int group_end(struct sweep *s)
{
	if (!s->group_open)
		return 0;
	s->group_open = 0;
	return ext4fs_txn_commit(s->fs);
}

/*
 * Before a move of blocks blocks in runs runs: a small one joins the open
 * group (or opens one), while the group stays under half the journal's
 * largest transaction and its block limit; a large one ends the group and
 * commits its own pieces.  Without journalled mode, nothing.  The limit
 * is a sixteenth of the free space: the blocks a group holds must not be
 * the room the next move needs.
 */
static int group_join(struct sweep *s, uint64_t blocks, size_t runs)
{
	uint64_t free_blocks = ext4fs_geom(s->fs)->free_blocks_count;
	uint64_t limit = free_blocks > s->o->reserve ? (free_blocks - s->o->reserve) / 16 : 0;
	struct ext4fs_txn_room room;
	int err;

	if (!ext4fs_txn_active(s->fs))
		return 0;
	if (limit > GROUP_BLOCKS)
		limit = GROUP_BLOCKS;
	if (blocks > GROUP_MOVE_BLOCKS || runs > GROUP_MOVE_RUNS || blocks > limit)
		return group_end(s);
	if (s->group_open) {
		if ((err = ext4fs_txn_room(s->fs, &room)))
			return err;
		if (room.running_blocks <= room.max_blocks / 2 && s->group_blocks + blocks <= limit) {
			s->group_blocks += blocks;
			return 0;
		}
		if ((err = group_end(s)))
			return err;
	}
	if ((err = ext4fs_txn_begin(s->fs)))
		return err;
	s->group_open = 1;
	s->group_blocks = blocks;
	return 0;
}

/* Count a move made for the member being placed (its commits are counted by the caller of the sweep). */
static void tally(struct sweep *s, const struct ext4fs_reloc_result *r)
{
	s->step->moved = 1;
	s->step->res.blocks_moved += r->blocks_moved;
	s->step->res.bytes_copied += r->bytes_copied;
}

/* Move mapping block old of ino to block new_blk (claimed here), in one transaction or the open group. */
static int move_map_block(struct sweep *s, uint32_t ino, uint64_t old, uint64_t new_blk)
{
	struct ext4fs_fs *fs = s->fs;
	struct ext4fs_inode inode;
	int journalled = ext4fs_txn_active(fs), err;

	if ((err = ext4fs_inode_read(fs, ino, &inode)))
		return err;
	if ((err = group_join(s, 1, 1)))
		return err;
	if (journalled && (err = ext4fs_txn_begin(fs)))
		return err;
	err = ext4fs_blocks_mark_used(fs, new_blk, 1);
	if (!err)
		err = ext4fs_bmap_move_map_block(fs, ino, &inode, old, new_blk);
	if (!err)
		err = ext4fs_blocks_mark_free(fs, old, 1);
	if (err) {
		if (journalled)
			(void)ext4fs_txn_abort(fs);
		return err;
	}
	if (journalled && (err = ext4fs_txn_commit(fs)))
		return err;
	s->step->moved = 1;
	s->step->res.blocks_moved++;
	s->step->res.bytes_copied += ext4fs_geom(fs)->block_size;
	return 0;
}

/* Move what entry e (a copy) holds of [lo, hi) out of the way of [avoid_lo, avoid_hi). */
static int evacuate(struct sweep *s, owner_t e, uint64_t lo, uint64_t hi, uint64_t avoid_lo, uint64_t avoid_hi)
{
	uint64_t a = e.pblk > lo ? e.pblk : lo, b = e.pblk + e.len < hi ? e.pblk + e.len : hi;
	struct ext4fs_reloc_file f;
	struct ext4fs_reloc_result r;
	struct ext4fs_prun *t;
	size_t n;
	int err;

	if (s->whole_victims) {
		/* Not cut at the stretch's edges: a victim is never left in more pieces than it was. */
		a = e.pblk;
		b = e.pblk + e.len;
	}

	err = spill_space(s, b - a, avoid_lo, avoid_hi, &t, &n);
	if (err == EXT4FS_E_NO_SPACE && s->group_open) {
		/* The group holds blocks its moves freed: commit it and look again. */
		if ((err = group_end(s)) == 0)
			err = spill_space(s, b - a, avoid_lo, avoid_hi, &t, &n);
	}
	if (err)
		return err;
	if ((err = group_join(s, b - a, n))) {
		free(t);
		return err;
	}
	if (e.map) {
		err = move_map_block(s, e.ino, e.pblk, t[0].pblk);
	} else if (!(err = ext4fs_reloc_load(s->fs, e.ino, &f))) {
		err = ext4fs_reloc_move_range(s->fs, &f, e.lblk + (a - e.pblk), e.lblk + (b - e.pblk), t, n, &r);
		if (!err)
			tally(s, &r);
		ext4fs_reloc_release(&f);
	}
	free(t);
	return err ? err : index_member(s, e.ino);
}

/* Empty [lo, hi) of everything the index holds there, to room outside [avoid_lo, avoid_hi). */
static int clear_stretch_avoiding(struct sweep *s, uint64_t lo, uint64_t hi, uint64_t avoid_lo, uint64_t avoid_hi)
{
	for (int moved = 0;; moved = 1) {
		const owner_t *e = ext4fs__owners_after(&s->ix, lo);
		int err;

		if (!e || e->pblk >= hi)
			return moved ? group_end(s) : 0;   /* [lo, hi) is free once the frees commit */
		if ((err = evacuate(s, *e, lo, hi, avoid_lo, avoid_hi)))
			return err;
	}
}

/* Empty [lo, hi) of everything the index holds there. */
static int clear_stretch(struct sweep *s, uint64_t lo, uint64_t hi)
{
	return clear_stretch_avoiding(s, lo, hi, lo, hi);
}

/* -- Placing a member ------------------------------------------------------- */

/* The data of f, in logical order, from data block `skip` on: its next chunk of up to len blocks. */
struct chunk {
	uint64_t lblk, lend;     /* logical range holding the chunk (holes inside are not data) */
	uint64_t blocks;
	size_t runs;             /* of the file's runs it takes from */
	int in_place;            /* mapped to [at, at + blocks) block for block */
};

static void take_chunk(const struct ext4fs_reloc_file *f, uint64_t skip, uint64_t len, uint64_t at, struct chunk *c)
{
	uint64_t seen = 0, expect = at;

	memset(c, 0, sizeof(*c));
	c->in_place = 1;
	for (size_t i = 0; i < f->nruns && c->blocks < len; i++) {
		const struct ext4fs_reloc_run *r = &f->runs[i];
		uint64_t from = 0, k;

		if (seen + r->len <= skip) {
			seen += r->len;
			continue;
		}
		if (skip > seen)
			from = skip - seen;
		seen += r->len;
		k = r->len - from;
		if (k > len - c->blocks)
			k = len - c->blocks;
		if (!c->blocks)
			c->lblk = r->lblk + from;
		c->lend = r->lblk + from + k;
		c->runs++;
		if (r->pblk + from != expect)
			c->in_place = 0;
		expect += k;
		c->blocks += k;
	}
}

/* The member's mapping blocks go right after its data, lowest first. */
static int place_map_blocks(struct sweep *s, uint32_t ino, uint64_t *frontier)
{
	for (;;) {
		const struct ext4fs_bitmap *bm;
		struct ext4fs__owners_list a = { 0 };
		uint64_t blk = 0, at;
		int err = ext4fs__owners_gather(s->fs, ino, &a);

		for (size_t i = 0; !err && i < a.n; i++)
			if (a.v[i].map && a.v[i].pblk >= *frontier && (!blk || a.v[i].pblk < blk))
				blk = a.v[i].pblk;
		free(a.v);
		if (err || !blk)
			return err;
		if ((err = ext4fs_fs_block_bitmap(s->fs, &bm)))
			return err;
		at = next_usable(s, bm, *frontier);
		if (at != *frontier && s->group_open) {
			if ((err = group_end(s)))   /* the blocks skipped may be the group's frees */
				return err;
			continue;
		}
		if (at >= s->end)
			return 0;
		if (at != blk) {
			if (owner_of(s, at) && (err = clear_stretch(s, at, at + 1)))
				return err;
			if ((err = move_map_block(s, ino, blk, at)))
				return err;
			if ((err = index_member(s, ino)))
				return err;
		}
		*frontier = at + 1;
	}
}

/*
 * The most a chunk may take: what is in its way must fit in the free space
 * outside it, so half of what is free (less the reserve), at least 1.
 */
static uint64_t room_to_make(const struct sweep *s)
{
	uint64_t free_blocks = ext4fs_geom(s->fs)->free_blocks_count;
	uint64_t room = free_blocks > s->o->reserve ? (free_blocks - s->o->reserve) / 2 : 0;

	return room ? room : 1;
}

/* Place member f from the frontier on. */
static int place_member(struct sweep *s, struct ext4fs_reloc_file *f, uint64_t *frontier)
{
	uint64_t small = ext4fs_geom(s->fs)->blocks_per_group, placed = 0;
	uint32_t ino = f->ino;
	int err;

	while (placed < f->blocks) {
		const struct ext4fs_bitmap *bm;
		uint64_t start, stop, len = f->blocks - placed;
		struct ext4fs_reloc_result r;
		struct chunk c;
		struct ext4fs_prun t;

		if ((err = ext4fs_fs_block_bitmap(s->fs, &bm)))
			return err;
		start = next_usable(s, bm, *frontier);
		if (start >= s->end)
			return EXT4FS_E_NO_SPACE;
		if (placed == 0 && s->stripe > 1 && f->blocks >= s->stripe && start % s->stripe) {
			/* As the kernel places a stripe-sized file: from the next boundary. */
			*frontier = start + (s->stripe - start % s->stripe);
			continue;
		}
		stop = next_obstacle(s, bm, start, start + len);
		if (s->group_open && (start > *frontier || stop - start < len)) {
			/* What looks in the way may be blocks the open group freed: commit it and look again. */
			if ((err = group_end(s)))
				return err;
			continue;
		}
		if (stop - start < len && f->blocks <= small && placed == 0) {
			/* A small member is not split: leave the short stretch and go past the obstacle. */
			*frontier = stop;
			continue;
		}
		if (len > stop - start)
			len = stop - start;
		if (len > CHUNK_BLOCKS)
			len = CHUNK_BLOCKS;
		if (len > room_to_make(s))
			len = room_to_make(s);
		take_chunk(f, placed, len, start, &c);
		if (!c.in_place) {
			if ((err = clear_stretch(s, start, start + c.blocks)))
				return err;
			ext4fs_reloc_release(f);
			if ((err = ext4fs_reloc_load(s->fs, ino, f)))
				return err;
			t = (struct ext4fs_prun){ start, c.blocks };
			if ((err = group_join(s, c.blocks, c.runs)))
				return err;
			if ((err = ext4fs_reloc_move_range(s->fs, f, c.lblk, c.lend, &t, 1, &r)))
				return err;
			tally(s, &r);
			if ((err = index_member(s, ino)))
				return err;
		}
		placed += c.blocks;
		*frontier = start + c.blocks;
	}
	return place_map_blocks(s, ino, frontier);
}

/*
 * A member kept where it is: when the layout would put it just there (no
 * usable block before it from the frontier on, or only free stretches it
 * would not be split over, and no member still to come), the frontier goes
 * past it, as past a member in place.  So a tree laid out once, whose directories are kept the next
 * time, leaves the gaps before obstacles to the members that were kept,
 * and nothing moves into them.
 */
static int pass_kept(struct sweep *s, const struct ext4fs_reloc_file *f, uint64_t *frontier)
{
	const struct ext4fs_bitmap *bm;
	uint64_t lo, hi, at = *frontier;
	int err;

	if (!f->nruns)
		return 0;
	lo = f->runs[0].pblk;
	hi = lo + f->runs[0].len;
	for (size_t i = 1; i < f->nruns; i++) {
		if (f->runs[i].pblk != hi)
			return 0;   /* not in one piece: not where a layout puts a member */
		hi += f->runs[i].len;
	}
	if (lo < at)
		return 0;
	if ((err = ext4fs_fs_block_bitmap(s->fs, &bm)))
		return err;
	for (;;) {
		uint64_t start = next_usable(s, bm, at), stop;

		if (start > lo)
			break;
		if (owner_of(s, start))
			return 0;   /* a member still to come lies before it: the layout puts that one there first */
		if (f->blocks > ext4fs_geom(s->fs)->blocks_per_group)
			return 0;   /* a large member is split over obstacles: it would start there */
		stop = next_obstacle(s, bm, start, start + f->blocks);
		if (stop - start >= f->blocks)
			return 0;   /* it would go there, before where it is */
		at = stop;
	}
	*frontier = hi;
	return 0;
}

static int by_member_ino(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* A member the caller keeps where it is (ext4fs_defrag_opts.keep). */
static int kept(const struct sweep *s, uint32_t ino)
{
	return s->o->nkeep && bsearch(&ino, s->o->keep, s->o->nkeep, sizeof(*s->o->keep), ext4fs__cmp_u32) != NULL;
}

/* Every movable member (each inode once) and its blocks, into s->members and the index. */
static int load_members(struct sweep *s, const uint32_t *inos, size_t n)
{
	owner_t *all = NULL, *grown;
	size_t nall = 0, cap = 0;
	int err = 0;

	if (!(s->members = calloc(n ? n : 1, sizeof(*s->members))))
		return ext4fs__fs_fail(s->fs, EXT4FS_E_NO_MEMORY, "no memory for the members");
	for (size_t i = 0; i < n; i++)
		s->members[i].ino = inos[i];
	qsort(s->members, n, sizeof(*s->members), by_member_ino);
	for (size_t i = 0; i < n && !err; i++) {
		struct member *m = &s->members[i];
		struct ext4fs_reloc_file f;
		struct ext4fs__owners_list a = { 0 };

		if (s->nmembers && s->members[s->nmembers - 1].ino == m->ino)
			continue;
		s->members[s->nmembers++] = (struct member){ .ino = m->ino };
		m = &s->members[s->nmembers - 1];
		if (kept(s, m->ino))
			continue;   /* not in the index: an obstacle */
		if ((err = ext4fs_reloc_load(s->fs, m->ino, &f)) == 0 && f.skip == EXT4FS_RELOC_MOVABLE &&
		    (err = ext4fs__owners_gather(s->fs, m->ino, &a)) == 0) {
			m->v = a.v;
			m->n = a.n;
			a.v = NULL;
			if (!m->n) {
				/* no blocks: nothing to index */
			} else if (!(grown = ext4fs_array_grow(all, &cap, nall + m->n, sizeof(*all), 1024))) {
				err = ext4fs__fs_fail(s->fs, EXT4FS_E_NO_MEMORY, "no memory for the block owners");
			} else {
				all = grown;
				memcpy(all + nall, m->v, m->n * sizeof(*all));
				nall += m->n;
			}
		}
		free(a.v);
		ext4fs_reloc_release(&f);
	}
	if (!err)
		err = ext4fs__owners_load(s->fs, &s->ix, all, nall);
	free(all);
	return err;
}

/* Commit what the last group holds (also after an error that left the handle working), free, return err. */
static int sweep_finish(struct sweep *s, int err)
{
	int gerr = group_end(s);

	for (size_t i = 0; i < s->nmembers; i++)
		free(s->members[i].v);
	free(s->members);
	ext4fs__owners_free(&s->ix);
	return err ? err : gerr;
}

int ext4fs_defrag_sweep(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, const struct ext4fs_defrag_opts *o)
{
	struct sweep s = { .fs = fs, .o = o };
	uint64_t frontier;
	int err = 0;

	s.first = ext4fs_geom(fs)->first_data_block;
	s.end = ext4fs_geom(fs)->blocks_count;
	s.stripe = ext4fs_alloc_stripe(fs);
	frontier = s.first;
	err = load_members(&s, inos, n);
	for (size_t i = 0; i < n && !err; i++) {
		struct ext4fs_defrag_step step = { .ino = inos[i], .why = EXT4FS_RELOC_MOVABLE };
		struct ext4fs_reloc_file f;

		s.step = &step;
		err = ext4fs_reloc_load(fs, inos[i], &f);
		if (!err && kept(&s, inos[i])) {
			if (f.skip != EXT4FS_RELOC_MOVABLE)
				step.why = f.skip;
			else
				err = pass_kept(&s, &f, &frontier);
		} else if (!err && f.skip != EXT4FS_RELOC_MOVABLE) {
			step.why = f.skip;
		} else if (!err && owner_of(&s, f.runs[0].pblk) == NULL) {
			/* Met already through another link, or a member that had to stay. */
			step.why = EXT4FS_RELOC_MOVABLE;
		} else if (!err) {
			uint64_t before = frontier;
			err = place_member(&s, &f, &frontier);
			if (err == EXT4FS_E_NO_SPACE) {
				/* No room left to make: it stays, an obstacle from now on. */
				step.why = EXT4FS_RELOC_NO_SPACE;
				frontier = before;
				err = 0;
			}
			{
				int ferr = forget(&s, inos[i]);
				err = err ? err : ferr;
			}
		}
		ext4fs_reloc_release(&f);
		if (!err && o->each)
			err = o->each(&step, o->arg);
	}
	return sweep_finish(&s, err);
}

/* -- Making room for one file ------------------------------------------------ */

/* What a stretch of the volume holds, for the search of the cheapest window. */
enum seg_kind { SEG_FREE, SEG_MOVABLE, SEG_FIXED };

struct segs {
	uint64_t *start;        /* n + 1 entries: start[n] is the volume's end */
	uint8_t *kind;
	uint64_t *movable_before, *fixed_before;   /* blocks of each kind before segment i */
	size_t *fixed_segs_before;                 /* fixed segments before segment i */
	size_t n, cap;
};

static int seg_add(struct segs *g, uint64_t start, enum seg_kind kind)
{
	if (g->n && g->kind[g->n - 1] == kind)
		return 0;   /* a continuation */
	if (g->n + 2 > g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 1024;
		uint64_t *st = realloc(g->start, cap * sizeof(*st));
		uint8_t *k;

		if (!st)
			return EXT4FS_E_NO_MEMORY;
		g->start = st;
		if (!(k = realloc(g->kind, cap)))
			return EXT4FS_E_NO_MEMORY;
		g->kind = k;
		g->cap = cap;
	}
	g->start[g->n] = start;
	g->kind[g->n++] = (uint8_t)kind;
	return 0;
}

static void segs_free(struct segs *g)
{
	free(g->start);
	free(g->kind);
	free(g->movable_before);
	free(g->fixed_before);
	free(g->fixed_segs_before);
	memset(g, 0, sizeof(*g));
}

/* The volume as free, movable (in the index) and fixed stretches, with running totals. */
static int segs_build(struct sweep *s, const struct ext4fs_bitmap *bm, struct segs *g)
{
	uint64_t at = s->first;
	int err = 0;

	while (at < s->end && !err) {
		uint64_t used, free_at;
		const owner_t *e;

		if (ext4fs_bitmap_find(bm, at, s->end - 1, 1, &used))
			used = s->end;
		if (used > at && (err = seg_add(g, at, SEG_FREE)))
			break;
		if ((at = used) >= s->end)
			break;
		if (ext4fs_bitmap_find(bm, at, s->end - 1, 0, &free_at))
			free_at = s->end;
		while (at < free_at && !err) {
			e = ext4fs__owners_after(&s->ix, at);
			if (e && e->pblk <= at) {
				err = seg_add(g, at, SEG_MOVABLE);
				at = e->pblk + e->len < free_at ? e->pblk + e->len : free_at;
			} else {
				err = seg_add(g, at, SEG_FIXED);
				at = e && e->pblk < free_at ? e->pblk : free_at;
			}
		}
	}
	if (!err && !(g->movable_before = malloc((g->n + 1) * sizeof(*g->movable_before))))
		err = EXT4FS_E_NO_MEMORY;
	if (!err && !(g->fixed_before = malloc((g->n + 1) * sizeof(*g->fixed_before))))
		err = EXT4FS_E_NO_MEMORY;
	if (!err && !(g->fixed_segs_before = malloc((g->n + 1) * sizeof(*g->fixed_segs_before))))
		err = EXT4FS_E_NO_MEMORY;
	if (err)
		return ext4fs__fs_fail(s->fs, EXT4FS_E_NO_MEMORY, "no memory to map the volume");
	g->start[g->n] = s->end;
	g->movable_before[0] = g->fixed_before[0] = 0;
	g->fixed_segs_before[0] = 0;
	for (size_t i = 0; i < g->n; i++) {
		uint64_t len = g->start[i + 1] - g->start[i];
		g->movable_before[i + 1] = g->movable_before[i] + (g->kind[i] == SEG_MOVABLE ? len : 0);
		g->fixed_before[i + 1] = g->fixed_before[i] + (g->kind[i] == SEG_FIXED ? len : 0);
		g->fixed_segs_before[i + 1] = g->fixed_segs_before[i] + (g->kind[i] == SEG_FIXED);
	}
	return 0;
}

/* The segment holding block x (the last whose start is at or before it). */
static size_t seg_of(const struct segs *g, uint64_t x)
{
	size_t lo = 0, hi = g->n;

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->start[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Blocks of movable (fixed: fixed_too) owners in [s->first, x). */
static uint64_t blocks_before(const struct segs *g, uint64_t x, int fixed_too)
{
	const uint64_t *before = fixed_too ? g->fixed_before : g->movable_before;
	enum seg_kind kind = fixed_too ? SEG_FIXED : SEG_MOVABLE;
	size_t i;

	if (g->n == 0 || x <= g->start[0])
		return 0;
	i = seg_of(g, x);
	return before[i] + (g->kind[i] == kind ? x - g->start[i] : 0);
}

/* Blocks that are not fixed in [first, x). */
static uint64_t open_before(const struct sweep *s, const struct segs *g, uint64_t x)
{
	return x - s->first - blocks_before(g, x, 1);
}

/* The first y with need open blocks in [x, y), or s->end + 1 when there is none. */
static uint64_t window_end(const struct sweep *s, const struct segs *g, uint64_t x, uint64_t need)
{
	uint64_t want = open_before(s, g, x) + need, lo = x, hi = s->end;

	if (open_before(s, g, s->end) < want)
		return s->end + 1;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (open_before(s, g, mid) >= want)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The stretches of [x, y) that are not fixed, as target runs; *n of them in *t (caller frees). */
static int open_runs(const struct segs *g, uint64_t x, uint64_t y, struct ext4fs_prun **t, size_t *n)
{
	size_t cap = 0;

	*t = NULL;
	*n = 0;
	for (size_t i = seg_of(g, x); i < g->n && g->start[i] < y; i++) {
		uint64_t a = g->start[i] > x ? g->start[i] : x, b = g->start[i + 1] < y ? g->start[i + 1] : y;
		struct ext4fs_prun *grown;

		if (g->kind[i] == SEG_FIXED || a >= b)
			continue;
		if (*n && (*t)[*n - 1].pblk + (*t)[*n - 1].len == a) {
			(*t)[*n - 1].len += b - a;
			continue;
		}
		if (!(grown = ext4fs_array_grow(*t, &cap, *n + 1, sizeof(**t), 8))) {
			free(*t);
			*t = NULL;
			return EXT4FS_E_NO_MEMORY;
		}
		*t = grown;
		(*t)[(*n)++] = (struct ext4fs_prun){ a, b - a };
	}
	return 0;
}

/*
 * The window holding need blocks that are not fixed, in the fewest pieces
 * (fixed blocks split it), then with the fewest blocks of movable owners,
 * then the nearest to goal.  Pieces and cost change only where the
 * window's start or end crosses a segment boundary, so the windows
 * starting at one are all there is to try.  0 with *at, *end, *pieces, or
 * EXT4FS_E_NO_SPACE.
 */
static int cheapest_window(const struct sweep *s, const struct segs *g, uint64_t need, uint64_t goal, uint64_t *at,
			   uint64_t *end, uint64_t *pieces)
{
	uint64_t best_cost = 0;
	int found = 0;

	for (size_t i = 0; i < g->n; i++) {
		uint64_t x = g->start[i], y, cost, np;

		if (g->kind[i] == SEG_FIXED || (y = window_end(s, g, x, need)) > s->end)
			continue;
		cost = blocks_before(g, y, 0) - blocks_before(g, x, 0);
		/* x and y - 1 are open blocks: each fixed segment between splits the window once more. */
		np = g->fixed_segs_before[seg_of(g, y - 1)] - g->fixed_segs_before[i] + 1;
		if (!found || np < *pieces || (np == *pieces && cost < best_cost) ||
		    (np == *pieces && cost == best_cost && (x > goal ? x - goal : goal - x) < (*at > goal ? *at - goal : goal - *at))) {
			*at = x;
			*end = y;
			*pieces = np;
			best_cost = cost;
			found = 1;
		}
	}
	return found ? 0 : EXT4FS_E_NO_SPACE;
}

static int by_len_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x > y ? -1 : x < y;
}

/*
 * Whether every owner the window's open runs t[0..nt) hold can go whole to
 * a free run outside [lo, hi), largest first, each into the largest run
 * left (a victim is never split): checked before anything moves, so a
 * window is not half emptied for nothing.  1 when it can, 0 when not,
 * or an error.
 */
static int victims_fit(struct sweep *s, const struct ext4fs_prun *t, size_t nt, uint64_t lo, uint64_t hi)
{
	const struct ext4fs_bitmap *bm;
	uint64_t *victims = NULL, *room = NULL;
	size_t nv = 0, vcap = 0, nr = 0, rcap = 0;
	int err, fits = 1;

	if ((err = ext4fs_fs_block_bitmap(s->fs, &bm)))
		return err;
	for (size_t k = 0; k < nt && !err; k++)
		for (uint64_t at = t[k].pblk; at < t[k].pblk + t[k].len;) {
			const owner_t *e = ext4fs__owners_after(&s->ix, at);
			uint64_t *grown;

			if (!e || e->pblk >= t[k].pblk + t[k].len)
				break;
			if (!(grown = ext4fs_array_grow(victims, &vcap, nv + 1, sizeof(*victims), 64))) {
				err = EXT4FS_E_NO_MEMORY;
				break;
			}
			victims = grown;
			victims[nv++] = e->len;
			at = e->pblk + e->len;
		}
	for (uint64_t at = s->first; at < s->end && !err;) {
		uint64_t a, b, *grown;

		if (ext4fs_bitmap_find(bm, at, s->end - 1, 0, &a))
			break;
		if (ext4fs_bitmap_find(bm, a, s->end - 1, 1, &b))
			b = s->end;
		at = b;
		if (a < hi && b > lo) {
			/* Only what lies outside the window. */
			if (a < lo) {
				if (!(grown = ext4fs_array_grow(room, &rcap, nr + 1, sizeof(*room), 64))) {
					err = EXT4FS_E_NO_MEMORY;
					break;
				}
				room = grown;
				room[nr++] = lo - a;
			}
			if (b > hi)
				a = hi;
			else
				continue;
		}
		if (!(grown = ext4fs_array_grow(room, &rcap, nr + 1, sizeof(*room), 64))) {
			err = EXT4FS_E_NO_MEMORY;
			break;
		}
		room = grown;
		room[nr++] = b - a;
	}
	if (!err) {
		if (nv)
			qsort(victims, nv, sizeof(*victims), by_len_desc);
		if (nr)
			qsort(room, nr, sizeof(*room), by_len_desc);
		for (size_t i = 0; i < nv && fits; i++) {
			/* Into the largest run left; keep the runs in order by moving the rest down. */
			if (!nr || room[0] < victims[i]) {
				fits = 0;
				break;
			}
			room[0] -= victims[i];
			for (size_t j = 0; j + 1 < nr && room[j] < room[j + 1]; j++) {
				uint64_t tmp = room[j];
				room[j] = room[j + 1];
				room[j + 1] = tmp;
			}
		}
	}
	free(victims);
	free(room);
	if (err)
		return ext4fs__fs_fail(s->fs, EXT4FS_E_NO_MEMORY, "no memory to plan room");
	return fits;
}

int ext4fs_defrag_make_room(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, const struct ext4fs_defrag_opts *o)
{
	struct sweep s = { .fs = fs, .o = o, .whole_victims = 1 };
	uint32_t *all = NULL;
	size_t nall = 0;
	int err;

	s.first = ext4fs_geom(fs)->first_data_block;
	s.end = ext4fs_geom(fs)->blocks_count;
	if ((err = ext4fs__defrag_all_inodes(fs, &all, &nall)) == 0)
		err = load_members(&s, all, nall);
	free(all);
	for (size_t i = 0; i < n && !err; i++) {
		struct ext4fs_defrag_step step = { .ino = inos[i], .why = EXT4FS_RELOC_MOVABLE };
		struct ext4fs_reloc_file f;
		const struct ext4fs_bitmap *bm;
		struct segs g = { 0 };
		uint64_t at = 0, end = 0, pieces = 0;

		s.step = &step;
		err = ext4fs_reloc_load(fs, inos[i], &f);
		if (!err && f.skip != EXT4FS_RELOC_MOVABLE) {
			step.why = f.skip;
		} else if (!err && f.extents <= ext4fs_reloc_fewest_extents(&f)) {
			step.why = EXT4FS_RELOC_IDEAL;
		} else if (!err && ext4fs_geom(fs)->free_blocks_count < f.blocks + o->reserve) {
			step.why = EXT4FS_RELOC_NO_SPACE;   /* what is evacuated must fit outside the window */
		} else if (!err && !(err = ext4fs_fs_block_bitmap(fs, &bm)) && !(err = segs_build(&s, bm, &g))) {
			struct ext4fs_prun *t = NULL;
			size_t nt = 0;

			err = cheapest_window(&s, &g, f.blocks, f.runs[0].pblk, &at, &end, &pieces);
			if (!err && pieces >= f.extents)
				err = EXT4FS_E_NO_SPACE;   /* no stretch would hold it in fewer pieces */
			if (!err)
				err = open_runs(&g, at, end, &t, &nt);
			if (!err) {
				int fit = victims_fit(&s, t, nt, at, end);
				err = fit < 0 ? fit : fit ? 0 : EXT4FS_E_NO_SPACE;
			}
			for (size_t k = 0; k < nt && !err; k++)
				err = clear_stretch_avoiding(&s, t[k].pblk, t[k].pblk + t[k].len, at, end);
			if (err == EXT4FS_E_NO_SPACE) {
				step.why = EXT4FS_RELOC_NO_SPACE;
				err = 0;
			} else if (!err) {
				struct ext4fs_reloc_result r;

				ext4fs_reloc_release(&f);
				if (!(err = ext4fs_reloc_load(fs, inos[i], &f)) &&
				    !(err = ext4fs_reloc_move(fs, &f, t, nt, &r))) {
					tally(&s, &r);
					step.res.extents_before = r.extents_before;
					step.res.extents_after = r.extents_after;
					err = index_member(&s, inos[i]);
				}
				if (err == EXT4FS_E_NO_SPACE) {
					step.why = EXT4FS_RELOC_NO_SPACE;
					err = 0;
				}
			}
			free(t);
		}
		segs_free(&g);
		ext4fs_reloc_release(&f);
		if (!err && o->each)
			err = o->each(&step, o->arg);
	}
	return sweep_finish(&s, err);
}
