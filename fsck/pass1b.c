/*
 * pass1b.c - blocks claimed more than once, resolved as e2fsck resolves
 * them (passes 1B, 1C and 1D).
 *
 * Pass 1 only learns that a block was claimed twice (ctx->block_dup), not
 * by whom.  Pass 1B reads every inode in use again and lists, per inode,
 * the claimed-twice blocks it maps; pass 1C reads the directory blocks to
 * name those inodes; pass 1D goes through them in inode order, says with
 * which files (and whether with the file system's own metadata) each
 * shares blocks, and offers to clone: the inode gets fresh copies of its
 * shared blocks, after which the other owners may hold theirs alone ("already
 * reassigned or cloned").  A file that is not cloned may be deleted.
 *
 * The order of the lists follows e2fsck's: a block's owners and an
 * inode's blocks are walked newest first, so "shared with" names the
 * files in the order e2fsck prints them.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ext4fs/array.h"
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/scan.h"
#include "ext4fs/super.h"
#include "ext4fs/xattr.h"
#include "dirs.h"
#include "clusters.h"
#include "context.h"
#include "passes.h"
#include "extents.h"
#include "guard.h"
#include "indirect.h"
#include "problem.h"
#include "problems.h"

/* A block claimed twice: the inodes mapping it, in the order pass 1B met them. */
struct dup_block {
	int in_use;                 /* the slot holds a block (any number: with 4 KiB blocks 0 is one) */
	uint64_t blk;
	uint32_t nbad;              /* references by inodes still unresolved */
	uint32_t *owners;
	uint32_t nowners, capowners;
};

/* An inode mapping blocks claimed twice. */
struct dup_inode {
	uint32_t ino;
	uint32_t dir;               /* the directory naming it (pass 1C), 0 when none found */
	int64_t mtime;
	uint64_t *blocks;           /* its claimed-twice blocks, one per reference, in map order */
	size_t nblocks, capblocks;
};

struct dups {
	struct e4fsck *ctx;
	struct dup_block *table;    /* open addressing on blk */
	size_t cap, used;
	struct dup_inode *inodes;   /* in inode order */
	size_t n, capinodes;
	uint64_t named_needed;      /* inodes pass 1C still has to name */
	/* pass 1B: the range of claimed-twice blocks being printed for the current inode */
	uint64_t range_first, range_last;
	int printing;
};

static size_t slot_of(const struct dups *d, uint64_t blk)
{
	uint64_t h = blk * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h ^ (h >> 29)) & (d->cap - 1);
}

static struct dup_block *lookup(const struct dups *d, uint64_t blk)
{
	if (!d->cap)
		return NULL;
	for (size_t i = slot_of(d, blk);; i = (i + 1) & (d->cap - 1)) {
		if (!d->table[i].in_use)
			return NULL;
		if (d->table[i].blk == blk)
			return &d->table[i];
	}
}

static struct dup_block *lookup_add(struct dups *d, uint64_t blk)
{
	if ((d->used + 1) * 2 > d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 256;
		struct dup_block *old = d->table, *grown = calloc(cap, sizeof(*grown));
		size_t oldcap = d->cap;
		if (!grown)
			return NULL;
		d->table = grown;
		d->cap = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].in_use) {
				size_t j = slot_of(d, old[i].blk);
				while (d->table[j].in_use)
					j = (j + 1) & (cap - 1);
				d->table[j] = old[i];
			}
		free(old);
	}
	size_t i = slot_of(d, blk);
	while (d->table[i].in_use && d->table[i].blk != blk)
		i = (i + 1) & (d->cap - 1);
	if (!d->table[i].in_use) {
		d->table[i].in_use = 1;
		d->table[i].blk = blk;
		d->used++;
	}
	return &d->table[i];
}

static struct dup_inode *find_inode(const struct dups *d, uint32_t ino)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->inodes[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->inodes[lo].ino == ino ? &d->inodes[lo] : NULL;
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q = ext4fs_array_grow(*p, cap, n + 1, size, 8);
	if (!q)
		return -1;
	*p = q;
	return 0;
}

/* Inode ino (met in inode order) maps claimed-twice block blk once more. */
static int add_dup(struct dups *d, uint32_t ino, const struct ext4fs_inode *in, uint64_t blk)
{
	struct dup_block *b = lookup_add(d, blk);
	size_t capo;

	if (!b)
		return -1;
	capo = b->capowners;
	if (grow((void **)&b->owners, &capo, b->nowners, sizeof(*b->owners)))
		return -1;
	b->capowners = (uint32_t)capo;
	b->owners[b->nowners++] = ino;
	b->nbad++;

	struct dup_inode *di = d->n ? &d->inodes[d->n - 1] : NULL;
	if (!di || di->ino != ino) {
		if (grow((void **)&d->inodes, &d->capinodes, d->n, sizeof(*d->inodes)))
			return -1;
		di = &d->inodes[d->n++];
		memset(di, 0, sizeof(*di));
		di->ino = ino;
		di->mtime = ext4fs_inode_time(in, 'm', NULL);
		/* The root needs no name: it is "/". */
		if (ino == EXT4FS_ROOT_INO)
			di->dir = EXT4FS_ROOT_INO;
	}
	if (grow((void **)&di->blocks, &di->capblocks, di->nblocks, sizeof(*di->blocks)))
		return -1;
	di->blocks[di->nblocks++] = blk;
	return 0;
}

/*
 * e2fsck's test for "file system metadata" (its pass 1's metadata map, as
 * 1.47 tests it): superblock and descriptor copies with the reserved
 * descriptor blocks, bitmaps, inode tables.
 */
static int is_meta(const struct dups *d, uint64_t blk)
{
	return range_set_test(&d->ctx->fs_meta, blk);
}

/* ------------------------------------------------------------------ pass 1B */

/*
 * An inode's blocks as e2fsck's iterator sees them: pass 1 may have left
 * damage it was told not to repair, or could not repair (pointers in a
 * map block on the file system's metadata).  INDIRECT_SCAN_BAD_MAP where
 * e2fsck's iterator fails with "Illegal indirect block found".
 */
static int walk_blocks(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, ext4fs_block_visit_fn fn,
		       void *arg)
{
	return fsck_map_walk(ctx->fs, ino, in, 1, fn, arg);
}

/* The words of e2fsck's library for INDIRECT_SCAN_BAD_MAP. */
static const char bad_map_msg[] = "Illegal indirect block found";

static void flush_range(struct dups *d, uint32_t ino)
{
	struct problem_ctx pctx = { .ino = ino, .blk = d->range_first, .blk2 = d->range_last };

	fix_problem(d->ctx, d->range_first == d->range_last ? PR_1B_DUP_BLOCK : PR_1B_DUP_RANGE, &pctx);
}

struct scan_inode {
	struct dups *d;
	uint32_t ino;
	const struct ext4fs_inode *in;
	uint64_t dups;
	/*
	 * Bigalloc: the logical and physical cluster of the block before, so
	 * that a cluster is counted once for each stretch of the map in it.
	 */
	uint64_t cur_cluster, phys_cluster;
};

/*
 * Block blk of the inode, at blockcnt (its logical block, or negative for
 * a map or attribute block, as e2fsck counts them).  A block claimed twice
 * is printed; the inode's references are counted, as e2fsck counts them,
 * by cluster: once where the map enters a logical or physical cluster
 * (every block with a ratio of 1), keyed by the cluster's first block.
 */
static int note_block(struct scan_inode *s, uint64_t blk, int64_t blockcnt)
{
	struct dups *d = s->d;
	unsigned shift = 0;

	while ((1U << shift) < d->ctx->geo->cluster_ratio)
		shift++;
	uint64_t lc = (uint64_t)blockcnt >> shift, pc = blk >> shift;
	int enters = blockcnt < 0 || lc != s->cur_cluster || pc != s->phys_cluster;
	s->cur_cluster = lc;
	s->phys_cluster = pc;
	if (!bitmap_paged_test(&d->ctx->block_dup, blk))
		return 0;
	if (s->ino != EXT4FS_BAD_INO) {
		if (!d->printing) {
			struct problem_ctx pctx = { .ino = s->ino };
			fix_problem(d->ctx, PR_1B_DUP_BLOCK_HEADER, &pctx);
			d->printing = 1;
			d->range_first = d->range_last = blk;
		} else if (blk == d->range_last + 1) {
			d->range_last = blk;
		} else {
			flush_range(d, s->ino);
			d->range_first = d->range_last = blk;
		}
	}
	s->dups++;
	return enters && add_dup(d, s->ino, s->in, pc << shift) ? -ENOMEM : 0;
}

static int visit_1b(const struct ext4fs_block_visit *v, void *arg)
{
	struct scan_inode *s = arg;

	for (uint32_t k = 0; k < v->count; k++) {
		/* Entries are believed as they are: a pointer of 0 or past the end is skipped, as e2fsck skips it. */
		if (!ext4fs_block_ptr_valid(s->d->ctx->fs, v->pblk + k))
			continue;
		/* e2fsck's block counts of map blocks: -1, -2, -3 for single, double, triple indirect (and a tree block). */
		int64_t cnt = v->kind == EXT4FS_BLOCK_DATA ? (int64_t)(v->lblk + k)
							    : v->kind == EXT4FS_BLOCK_EXTENT_NODE ? -1 : -(int64_t)v->kind;
		int rc = note_block(s, v->pblk + k, cnt);
		if (rc)
			return rc;
	}
	return 0;
}

static int pass1b(struct dups *d)
{
	struct e4fsck *ctx = d->ctx;
	const struct ext4fs_geom *g = ctx->geo;
	struct ext4fs_scan *scan = NULL;
	struct ext4fs_inode in;
	const unsigned char *raw;
	uint32_t ino;
	int csum_ok, r;

	if (ctx->mode != MODE_PREEN)
		fix_problem(ctx, PR_1B_PASS_HEADER, NULL);
	if (ext4fs_scan_open(ctx->fs, 0, g->group_count - 1, 0, &scan)) {
		fsck_fatal(ctx, "%s while scanning inodes again for pass 1B", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	while ((r = ext4fs_scan_next(scan, &ino, &in, &raw, &csum_ok)) == 1 && !ctx->aborted) {
		if (ino > g->inodes_count)
			break;
		if (ino != EXT4FS_BAD_INO && !bitmap_paged_test(&ctx->inode_used, ino))
			continue;
		struct scan_inode s = { d, ino, &in, 0, UINT64_MAX, UINT64_MAX };
		int err = 0;
		d->printing = 0;
		if (fsck_inode_has_blocks(ctx->fs, ino, &in))
			err = walk_blocks(ctx, ino, &in, visit_1b, &s);
		uint64_t acl = ext4fs_inode_file_acl(ctx->fs, &in);
		if (err != -ENOMEM && ext4fs_block_ptr_valid(ctx->fs, acl) &&
		    ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR) && note_block(&s, acl, -5))
			err = -ENOMEM;
		if (err == -ENOMEM) {
			ext4fs_scan_close(scan);
			fsck_fatal(ctx, "out of memory in pass 1B");
			return -1;
		}
		if (s.dups && ino != EXT4FS_BAD_INO) {
			flush_range(d, ino);
			fix_problem(ctx, PR_1B_DUP_BLOCK_END, NULL);
		}
		if (s.dups && (ino >= g->first_ino || ino == EXT4FS_ROOT_INO))
			d->named_needed++;
		if (err) {
			struct problem_ctx pctx = { .ino = ino, .str = "pass1b",
						    .errmsg = err == INDIRECT_SCAN_BAD_MAP ? bad_map_msg : NULL };
			fix_problem(ctx, PR_1B_BLOCK_ITERATE, &pctx);
		}
	}
	ext4fs_scan_close(scan);
	if (r < 0) {
		fsck_fatal(ctx, "%s while scanning inodes again for pass 1B", ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ pass 1C */

struct name_search {
	struct dups *d;
	unsigned seen;              /* entries met in the directory's first block */
	uint32_t dir;
};

static int name_entry(const struct ext4fs_dirent *e, void *arg)
{
	struct name_search *ns = arg;
	struct dups *d = ns->d;
	const struct ext4fs_geom *g = d->ctx->geo;

	/* '.' and '..' lead the first block; they name no file. */
	if (e->lblk == 0 && ns->seen++ < 2)
		return 0;
	if (!e->inode || e->inode > g->inodes_count || e->inode < g->first_ino)
		return 0;
	struct dup_inode *di = find_inode(d, e->inode);
	if (!di || di->dir)
		return 0;
	di->dir = ns->dir;
	return --d->named_needed ? 0 : 1;
}

static int cmp_pblk(const void *a, const void *b)
{
	const struct dir_block *x = a, *y = b;

	if (x->pblk != y->pblk)
		return x->pblk < y->pblk ? -1 : 1;
	return x->lblk < y->lblk ? -1 : x->lblk > y->lblk;
}

static int pass1c(struct dups *d)
{
	struct e4fsck *ctx = d->ctx;
	unsigned char *buf = malloc(ctx->geo->block_size);

	if (!buf) {
		fsck_fatal(ctx, "out of memory in pass 1C");
		return -1;
	}
	if (ctx->mode != MODE_PREEN)
		fix_problem(ctx, PR_1C_PASS_HEADER, NULL);
	/* Indexed: with no inode listed the array is NULL, and NULL + 0 is undefined. */
	for (size_t k = 0; k < d->n; k++)
		if (d->inodes[k].dir == EXT4FS_ROOT_INO && d->named_needed)
			d->named_needed--;
	/* In block order, as e2fsck reads its directory block list. */
	if (ctx->ndir_blocks > 1)   /* with none the list is NULL, which qsort() may not take */
		qsort(ctx->dir_blocks, ctx->ndir_blocks, sizeof(*ctx->dir_blocks), cmp_pblk);
	for (size_t i = 0; i < ctx->ndir_blocks && d->named_needed; i++) {
		const struct dir_block *db = &ctx->dir_blocks[i];
		struct name_search ns = { d, 0, db->ino };
		if (ext4fs_block_read(ctx->fs, db->pblk, buf))
			continue;
		ext4fs_dir_block_iterate(ctx->fs, db->ino, buf, ctx->geo->block_size, db->lblk, db->pblk, 0, 0,
					 name_entry, &ns);
	}
	free(buf);
	return 0;
}

/* ------------------------------------------------------------------ pass 1D */

/* One fewer inode holds b unresolved; left to one inode, and not metadata, it is no longer shared. */
static void release_ref(struct dups *d, struct dup_block *b)
{
	if (b->nbad)
		b->nbad--;
	if (b->nbad <= 1 && !is_meta(d, b->blk))
		bitmap_paged_clear_range(&d->ctx->block_dup, b->blk, 1);
}

/*
 * One step of a clone, in the order the map is walked (a mapping block
 * before the blocks it maps, as e2fsck's iterator hands them to its
 * clone_file_block()): a run of shared data blocks, or one shared mapping
 * block (an extent tree node below the root, an indirect block), which is
 * copied and its parent pointed at the copy before the blocks below it
 * are looked at.
 */
struct clone_run {
	uint64_t lblk, pblk;
	uint32_t count;
	int unwritten;
	int map;                    /* pblk is a mapping block (count 1) */
};

struct clone_plan {
	struct dups *d;
	struct clone_run *runs;
	size_t n, cap;
};

static int plan_block(const struct ext4fs_block_visit *v, void *arg)
{
	struct clone_plan *p = arg;
	struct e4fsck *ctx = p->d->ctx;

	for (uint32_t k = 0; k < v->count; k++) {
		uint64_t b = v->pblk + k;
		if (!ext4fs_block_ptr_valid(ctx->fs, b) || !bitmap_paged_test(&ctx->block_dup, b))
			continue;
		/* As e2fsck: counted off before the copy, so a later mapping of the same block in this file keeps it. */
		struct dup_block *db = lookup(p->d, b);
		if (db && !is_meta(p->d, b))
			release_ref(p->d, db);
		struct clone_run *last = p->n ? &p->runs[p->n - 1] : NULL;
		int map = v->kind != EXT4FS_BLOCK_DATA;
		if (last && !map && !last->map && last->lblk + last->count == v->lblk + k && last->pblk + last->count == b &&
		    last->unwritten == v->unwritten) {
			last->count++;
			continue;
		}
		if (grow((void **)&p->runs, &p->cap, p->n, sizeof(*p->runs)))
			return -ENOMEM;
		p->runs[p->n++] = (struct clone_run){ v->lblk + k, b, 1, map ? 0 : v->unwritten, map };
	}
	return 0;
}

/* Point the directory blocks pass 2 will read at the copies. */
static void move_dir_blocks(struct e4fsck *ctx, uint32_t ino, uint64_t lblk, uint64_t pblk, uint32_t n)
{
	for (size_t i = 0; i < ctx->ndir_blocks; i++) {
		struct dir_block *db = &ctx->dir_blocks[i];
		if (db->ino == ino && db->lblk >= lblk && db->lblk < lblk + n)
			db->pblk = pblk + (db->lblk - lblk);
	}
}

/* A block for a copy, taken as e2fsck takes it: the lowest block nobody was found to use. */
static int take_block(struct e4fsck *ctx, uint64_t *blk)
{
	return fsck_take_block(ctx, ctx->geo->first_data_block, blk);
}

/*
 * Bigalloc, as e2fsck clones by cluster: the physical cluster the copies
 * of logical block lblk's cluster go to.  Where the file maps another
 * block of that logical cluster outside old's physical cluster (one
 * already cloned, or one logical cluster on two physical ones), that
 * cluster; else a free cluster, the lowest, as e2fsck takes it.
 */
static int clone_cluster(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, uint64_t lblk,
			 uint64_t old, uint64_t *cluster)
{
	uint64_t mask = (uint64_t)ctx->geo->cluster_ratio - 1, first = lblk & ~mask;

	for (uint64_t l = first; l <= first + mask; l++) {
		uint64_t pblk = 0, run = 1;
		if (l == lblk || ext4fs_bmap(ctx->fs, ino, in, l, &pblk, &run, NULL) || !pblk ||
		    (pblk & ~mask) == (old & ~mask))
			continue;
		*cluster = pblk & ~mask;
		return 0;
	}
	int err = take_block(ctx, cluster);
	*cluster &= ~mask;
	return err;
}

/*
 * Bigalloc: a run of shared data blocks of an extent file copied a logical
 * cluster's stretch at a time, each copy at its logical offset in the new
 * cluster, and mapped in place of the old blocks; the old clusters stay in
 * use for their other owners.  i_blocks comes out as before: the unmap
 * gives back what the mapping charges.  0 or a library error.
 */
static int clone_run_clusters(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in, const struct clone_run *run,
			      unsigned char *buf)
{
	uint64_t mask = (uint64_t)ctx->geo->cluster_ratio - 1;
	const struct ext4fs_bitmap *bb;
	int err = ext4fs_fs_block_bitmap(ctx->fs, &bb);

	for (uint64_t done = 0, n; done < run->count && !err; done += n) {
		uint64_t lblk = run->lblk + done, old = run->pblk + done, cluster = 0;
		n = mask + 1 - (lblk & mask);
		if (n > run->count - done)
			n = run->count - done;
		err = clone_cluster(ctx, ino, in, lblk, old, &cluster);
		for (uint64_t k = 0; k < n && !err; k++) {
			err = ext4fs_block_read(ctx->fs, old + k, buf);
			if (!err)
				err = ext4fs_block_write(ctx->fs, cluster + ((lblk + k) & mask), buf);
		}
		if (!err)
			err = ext4fs_bmap_unmap(ctx->fs, ino, in, lblk, n);
		/* The unmap may free an old cluster its other owners still use: in use again. */
		for (uint64_t k = 0; k < n && !err; k++)
			if (ext4fs_bitmap_test(bb, old + k) == 0)
				err = ext4fs_blocks_mark_used(ctx->fs, old + k, 1);
		if (!err)
			err = ext4fs_bmap_set(ctx->fs, ino, in, lblk, cluster + (lblk & mask), (uint32_t)n,
					      run->unwritten);
		if (!err)
			move_dir_blocks(ctx, ino, lblk, cluster + (lblk & mask), (uint32_t)n);
	}
	return err;
}

/*
 * Copy one run of shared data blocks to new blocks and map the copies in
 * their place.  The old blocks stay in use: other owners keep them.
 * 0, or a library error (message in the handle).
 */
static int clone_run(struct dups *d, uint32_t ino, struct ext4fs_inode *in, const struct clone_run *run,
		     unsigned char *buf)
{
	struct e4fsck *ctx = d->ctx;
	uint64_t done = 0;

	if (ctx->geo->cluster_ratio > 1 && (in->i_flags & EXT4FS_EXTENTS_FL))
		return clone_run_clusters(ctx, ino, in, run, buf);

	if (!(in->i_flags & EXT4FS_EXTENTS_FL)) {
		/*
		 * An indirect map: each entry is pointed at its copy where it is, as
		 * e2fsck does.  Unmapping could empty (and free) the indirect block
		 * holding it, and the map may hold pointers outside the file system
		 * that pass 1 could not clear (it lay on the metadata until copied).
		 */
		int in_changed = 0;
		for (uint64_t k = 0; k < run->count; k++) {
			uint64_t copy;
			int changed, err = take_block(ctx, &copy);
			if (!err)
				err = ext4fs_block_read(ctx->fs, run->pblk + k, buf);
			if (!err)
				err = ext4fs_block_write(ctx->fs, copy, buf);
			if (!err)
				err = fsck_indirect_repoint(ctx, in, run->lblk + k, run->pblk + k, copy, &changed);
			if (err)
				return err;
			in_changed |= changed;
			move_dir_blocks(ctx, ino, run->lblk + k, copy, 1);
		}
		return in_changed ? ext4fs_inode_write(ctx->fs, ino, in) : 0;
	}
	while (done < run->count) {
		uint64_t start, next;
		uint32_t got = 1;
		int err = take_block(ctx, &start);
		/* Blocks taken one by one; consecutive ones are mapped as one piece. */
		while (!err && done + got < run->count && bitmap_paged_next_clear(&ctx->block_found,
		       ctx->geo->first_data_block) == start + got) {
			err = take_block(ctx, &next);
			got++;
		}
		for (uint32_t k = 0; k < got && !err; k++) {
			err = ext4fs_block_read(ctx->fs, run->pblk + done + k, buf);
			if (!err)
				err = ext4fs_block_write(ctx->fs, start + k, buf);
		}
		/*
		 * Unmapping frees the old blocks, which their other owners still use: mark them again.
		 * The first block is swapped alone, so the rest never leaves the indirect block or tree
		 * node holding them empty (which would free it, where e2fsck keeps it in place).
		 */
		for (uint32_t k = 0, step = 1; k < got && !err; k += step, step = got - k) {
			err = ext4fs_bmap_unmap(ctx->fs, ino, in, run->lblk + done + k, step);
			if (!err)
				err = ext4fs_blocks_mark_used(ctx->fs, run->pblk + done + k, step);
			if (!err)
				err = ext4fs_bmap_set(ctx->fs, ino, in, run->lblk + done + k, start + k, step,
						      run->unwritten);
		}
		if (err)
			return err;
		move_dir_blocks(ctx, ino, run->lblk + done, start, got);
		done += got;
	}
	return 0;
}

/*
 * Give inode ino its own copy of shared mapping block old: a block taken
 * as for data, the parent pointed at it.  The blocks it maps are cloned
 * after it, if shared, through the copy.  (Read from e2fsck 1.47's source,
 * not seen run: its cluster shortcut keys on the logical block number,
 * which is the same negative number for every mapping block, so after one
 * clone it would copy the next mapping block met onto the same new block.
 * Not reproduced: each mapping block gets a block of its own here.)
 */
static int clone_map_block(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in, uint64_t old)
{
	uint64_t nb;
	int err = take_block(ctx, &nb);

	return err ? err : ext4fs_bmap_move_map_block(ctx->fs, ino, in, old, nb);
}

static int has_xattr_blocks(const struct e4fsck *ctx)
{
	return ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR);
}

/* Point inode ino's attribute block at blk and write the record.  0 or a library error. */
static int set_xattr_block(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in, uint64_t blk)
{
	in->i_file_acl_lo = (uint32_t)blk;
	in->i_file_acl_high = (uint16_t)(blk >> 32);
	return ext4fs_inode_write(ctx->fs, ino, in);
}

/*
 * Give inode ino its own copy of its attribute block old, which something
 * else claims too (another file's data, most likely).  Every other inode
 * naming old as its attribute block shares it through h_refcount and
 * follows to the copy, as in e2fsck, so the copy's h_refcount stays true
 * and old is left to the remaining claimant.  Unlike e2fsck 1.47, the copy
 * gets the checksum of its new place (the block number is part of it), and
 * the claim the clone gave up is counted off, so the other claimant is not
 * cloned as well, leaving old to nobody.  0 or a library error.
 */
static int clone_xattr_block(struct dups *d, uint32_t ino, struct ext4fs_inode *in, uint64_t old,
			     unsigned char *buf)
{
	struct e4fsck *ctx = d->ctx;
	struct dup_block *b = lookup(d, old);
	int meta = is_meta(d, old);
	uint64_t copy;
	/* Read again: cloning the data rewrote the record. */
	int err = ext4fs_inode_read(ctx->fs, ino, in);

	if (!err)
		err = take_block(ctx, &copy);
	if (!err)
		err = ext4fs_block_read(ctx->fs, old, buf);
	if (!err && ctx->geo->has_metadata_csum)
		ext4fs_xattr_header_csum_set(buf, ext4fs_xattr_block_csum(ctx->fs, copy, buf));
	if (!err)
		err = ext4fs_block_write(ctx->fs, copy, buf);
	if (!err)
		err = set_xattr_block(ctx, ino, in, copy);
	if (err)
		return err;
	if (b && !meta)
		release_ref(d, b);
	for (uint32_t o = 0; b && o < b->nowners; o++) {
		struct ext4fs_inode other;
		uint32_t oino = b->owners[o];
		if (oino == ino || ext4fs_inode_read(ctx->fs, oino, &other) ||
		    ext4fs_inode_file_acl(ctx->fs, &other) != old)
			continue;
		err = set_xattr_block(ctx, oino, &other, copy);
		if (err)
			return err;
		release_ref(d, b);
	}
	return 0;
}

/* Clone the shared blocks of inode ino.  0, or -1 with the reason in *why (for PR_1D_CLONE_ERROR). */
static int clone_file(struct dups *d, uint32_t ino, const char **why)
{
	struct e4fsck *ctx = d->ctx;
	struct clone_plan plan = { .d = d };
	struct ext4fs_inode in;
	unsigned char *buf = malloc(ctx->geo->block_size);
	int err = buf ? ext4fs_inode_read(ctx->fs, ino, &in) : EXT4FS_E_NO_MEMORY;

	*why = NULL;
	int bad_map = 0;
	if (!err && fsck_inode_has_blocks(ctx->fs, ino, &in))
		err = walk_blocks(ctx, ino, &in, plan_block, &plan);
	if (err == INDIRECT_SCAN_BAD_MAP) {
		bad_map = 1;
		err = 0;
	}
	for (size_t i = 0; i < plan.n && !err; i++)
		err = plan.runs[i].map ? clone_map_block(ctx, ino, &in, plan.runs[i].pblk)
				       : clone_run(d, ino, &in, &plan.runs[i], buf);
	ext4fs_alloc_release_inode(ctx->fs, ino);
	if (!err && bad_map) {
		/* As e2fsck: what its iterator reached is cloned, then its error ends the clone, attribute block and all. */
		struct problem_ctx pctx = { .ino = ino, .str = "clone_file", .errmsg = bad_map_msg };
		fix_problem(ctx, PR_1B_BLOCK_ITERATE, &pctx);
		*why = bad_map_msg;
		err = EXT4FS_E_IND_CORRUPT;
		ctx->fs_changed = 1;
		if (fsck_claim_blocks(ctx, ino))
			*why = ext4fs_strerror(EXT4FS_E_NO_MEMORY);
	}
	/* The attribute block last, as e2fsck clones it. */
	if (!err && has_xattr_blocks(ctx)) {
		uint64_t acl = ext4fs_inode_file_acl(ctx->fs, &in);
		if (ext4fs_block_ptr_valid(ctx->fs, acl) && bitmap_paged_test(&ctx->block_dup, acl))
			err = clone_xattr_block(d, ino, &in, acl, buf);
	}
	if (!err && fsck_claim_blocks(ctx, ino))
		err = EXT4FS_E_NO_MEMORY;
	if (!err)
		ctx->fs_changed = 1;
	if (err && !*why)
		*why = ext4fs_errmsg(ctx->fs)[0] ? ext4fs_errmsg(ctx->fs) : ext4fs_strerror(err);
	free(plan.runs);
	free(buf);
	return err ? -1 : 0;
}

struct delete_walk {
	struct dups *d;
};

static int delete_block(const struct ext4fs_block_visit *v, void *arg)
{
	struct delete_walk *w = arg;
	struct e4fsck *ctx = w->d->ctx;
	const struct ext4fs_bitmap *bb;
	int err = ext4fs_fs_block_bitmap(ctx->fs, &bb);

	for (uint32_t k = 0; k < v->count && !err; k++) {
		uint64_t b = v->pblk + k;
		/* Never free what a pointer of 0 names: block 0 holds the superblock with 4 KiB blocks. */
		if (!ext4fs_block_ptr_valid(ctx->fs, b))
			continue;
		/* With bigalloc a shared cluster is keyed by its first block; its other blocks are shared too. */
		if (bitmap_paged_test(&ctx->block_dup, b)) {
			struct dup_block *db = lookup(w->d, b);
			if (db)
				release_ref(w->d, db);
			continue;
		}
		cluster_unclaim(&ctx->block_found, ctx->geo->cluster_ratio, b, 1);
		if (ext4fs_bitmap_test(bb, b) > 0)
			err = ext4fs_blocks_mark_free(ctx->fs, b, 1);
	}
	return err;
}

/*
 * Deleted inode ino named attribute block blk: one reference fewer in its
 * h_refcount (a block that cannot be read or has a bad header is reported
 * and counted as still held).  Left with no reference, the block is freed,
 * unless another file claims it too: then only the claim is counted off.
 * 0, or -1 after fsck_fatal().
 */
static int drop_xattr_ref(struct dups *d, uint32_t ino, uint64_t blk)
{
	struct e4fsck *ctx = d->ctx;
	const struct ext4fs_geom *g = ctx->geo;
	struct problem_ctx pctx = { .ino = ino, .blk = blk };
	unsigned char *buf;
	uint32_t left = 1;
	int err;

	if (!ext4fs_block_ptr_valid(ctx->fs, blk))
		return 0;
	buf = malloc(g->block_size);
	err = buf ? ext4fs_block_read(ctx->fs, blk, buf) : EXT4FS_E_NO_MEMORY;
	struct ext4fs_xattr_header head = { 0 };
	if (!err)
		ext4fs_xattr_header_decode(buf, &head);
	if (!err && (head.magic != EXT4FS_XATTR_MAGIC || head.blocks != 1)) {
		pctx.str = "Extended attribute block has a bad header";
		fix_problem(ctx, PR_1B_ADJ_EA_REFCOUNT, &pctx);
	} else if (!err) {
		left = head.refcount ? head.refcount - 1 : 0;
		ext4fs_xattr_header_refcount_set(buf, left);
		if (g->has_metadata_csum)
			ext4fs_xattr_header_csum_set(buf, ext4fs_xattr_block_csum(ctx->fs, blk, buf));
		err = ext4fs_block_write(ctx->fs, blk, buf);
	}
	if (err) {
		pctx.str = ext4fs_strerror(err);
		fix_problem(ctx, PR_1B_ADJ_EA_REFCOUNT, &pctx);
	}
	free(buf);
	struct dup_block *db = bitmap_paged_test(&ctx->block_dup, blk) ? lookup(d, blk) : NULL;
	if (db) {
		release_ref(d, db);
	} else if (left == 0) {
		const struct ext4fs_bitmap *bb;
		cluster_unclaim(&ctx->block_found, ctx->geo->cluster_ratio, blk, 1);
		if (!ext4fs_fs_block_bitmap(ctx->fs, &bb) && ext4fs_bitmap_test(bb, blk) > 0 &&
		    ext4fs_blocks_mark_free(ctx->fs, blk, 1)) {
			fsck_fatal(ctx, "could not free extended attribute block %llu: %s", (unsigned long long)blk,
				   ext4fs_errmsg(ctx->fs));
			return -1;
		}
	}
	return 0;
}

/* Delete inode ino: its blocks no one else holds are freed, the inode is cleared.  0 or -1 (reported). */
static int delete_file(struct dups *d, uint32_t ino)
{
	struct e4fsck *ctx = d->ctx;
	struct delete_walk w = { d };
	struct ext4fs_inode in;
	int err = ext4fs_inode_read(ctx->fs, ino, &in);

	if (!err && fsck_inode_has_blocks(ctx->fs, ino, &in))
		err = walk_blocks(ctx, ino, &in, delete_block, &w);
	if (err) {
		struct problem_ctx pctx = { .ino = ino, .str = "delete_file",
					    .errmsg = err == INDIRECT_SCAN_BAD_MAP ? bad_map_msg : NULL };
		fix_problem(ctx, PR_1B_BLOCK_ITERATE, &pctx);
	}
	int is_dir = EXT4FS_ISDIR(in.i_mode);
	const struct ext4fs_bitmap *ib;
	if (!ext4fs_fs_inode_bitmap(ctx->fs, &ib) && ext4fs_bitmap_test(ib, ino) > 0)
		ext4fs_inode_mark_free(ctx->fs, ino, is_dir);
	fsck_clear_inode(ctx, ino, &in);
	err = ext4fs_inode_write(ctx->fs, ino, &in);
	if (err) {
		fsck_fatal(ctx, "%s while writing inode %u: %s", ext4fs_strerror(err), ino, ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	uint64_t acl = ext4fs_inode_file_acl(ctx->fs, &in);
	return acl && has_xattr_blocks(ctx) ? drop_xattr_ref(d, ino, acl) : 0;
}

/* e2fsck's "mod time": the inode's mtime as ctime(3) prints it, without the newline. */
static void mod_time(int64_t t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(out, size, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(out, size, "%" PRId64, t);
}

static int pass1d(struct dups *d)
{
	struct e4fsck *ctx = d->ctx;
	uint32_t *shared = calloc(d->n ? d->n : 1, sizeof(*shared));
	int meta_seen = 0;          /* as in e2fsck, once one file shares with metadata every later one says so */
	struct alloc_guard guard = { 0 };
	int rc = -1;

	if (!shared) {
		fsck_fatal(ctx, "out of memory in pass 1D");
		return -1;
	}
	if (ctx->mode != MODE_PREEN)
		fix_problem(ctx, PR_1D_PASS_HEADER, NULL);
	struct problem_ctx count = { .num = 0 };
	for (size_t i = 0; i < d->n; i++)
		if (d->inodes[i].ino >= ctx->geo->first_ino || d->inodes[i].ino == EXT4FS_ROOT_INO)
			count.num++;
	fix_problem(ctx, PR_1D_NUM_DUP_INODES, &count);
	/* Clones allocate: keep the allocator off blocks found in use that the bitmaps call free. */
	if (!ctx->read_only && fsck_guard_on(ctx, &guard))
		goto out;

	for (size_t i = 0; i < d->n && !ctx->aborted; i++) {
		struct dup_inode *di = &d->inodes[i];
		size_t nshared = 0;
		int file_ok = 1;

		if (di->ino == EXT4FS_BAD_INO || di->ino == EXT4FS_RESIZE_INO)
			continue;
		for (size_t k = di->nblocks; k-- > 0;) {
			struct dup_block *b = lookup(d, di->blocks[k]);
			if (!b)
				continue;
			if (b->nbad > 1)
				file_ok = 0;
			if (is_meta(d, b->blk)) {
				file_ok = 0;
				meta_seen = 1;
			}
			for (uint32_t o = b->nowners; o-- > 0;) {
				uint32_t other = b->owners[o];
				size_t s;
				if (other == di->ino)
					continue;
				for (s = 0; s < nshared && shared[s] != other; s++)
					;
				if (s == nshared)
					shared[nshared++] = other;
			}
		}

		char when[64], *path = fsck_path(ctx, di->dir, di->ino);
		mod_time(di->mtime, when, sizeof(when));
		struct problem_ctx pctx = { .ino = di->ino, .dir = di->dir, .path = path ? path : "???",
					    .str = when, .num = nshared + (meta_seen ? 1 : 0), .num2 = di->nblocks };
		fix_problem(ctx, PR_1D_DUP_FILE, &pctx);
		free(path);
		if (meta_seen)
			fix_problem(ctx, PR_1D_SHARE_METADATA, NULL);
		for (size_t s = 0; s < nshared; s++) {
			struct dup_inode *other = find_inode(d, shared[s]);
			if (!other)
				continue;
			char owhen[64], *opath = fsck_path(ctx, other->dir, other->ino);
			mod_time(other->mtime, owhen, sizeof(owhen));
			struct problem_ctx o = { .ino = other->ino, .dir = other->dir, .path = opath ? opath : "???",
						 .str = owhen };
			fix_problem(ctx, PR_1D_DUP_FILE_LIST, &o);
			free(opath);
		}
		if (file_ok && nshared + (meta_seen ? 1 : 0)) {
			fix_problem(ctx, PR_1D_DUP_BLOCKS_DEALT, NULL);
			continue;
		}
		struct problem_ctx q = { .ino = di->ino };
		if (fix_problem(ctx, PR_1D_CLONE_QUESTION, &q)) {
			const char *why;
			if (!clone_file(d, di->ino, &why))
				continue;
			q.str = why;
			fix_problem(ctx, PR_1D_CLONE_ERROR, &q);
		}
		if (ctx->aborted)
			break;
		if (fix_problem(ctx, PR_1D_DELETE_QUESTION, &q) && delete_file(d, di->ino))
			goto out;
	}
	rc = 0;
out:
	if (guard.runs && fsck_guard_off(ctx, &guard))
		rc = -1;
	free(guard.runs);
	free(shared);
	return rc;
}

/* Whether a mapping block of an inode's map is the block sought. */
struct map_probe {
	uint64_t blk;
	int found;
};

static int probe_map_block(const struct ext4fs_block_visit *v, void *arg)
{
	struct map_probe *m = arg;

	if (v->kind == EXT4FS_BLOCK_DATA || v->pblk != m->blk)
		return 0;
	m->found = 1;
	return -ECANCELED;          /* found: no need to go on */
}

int fsck_collisions_moved(struct e4fsck *ctx)
{
	for (size_t i = 0; i < ctx->ncollisions; i++) {
		const struct meta_collision *c = &ctx->collisions[i];
		struct map_probe m = { c->blk, 0 };
		struct ext4fs_inode in;
		int err = ext4fs_inode_read(ctx->fs, c->ino, &in);
		if (err) {
			fsck_fatal(ctx, "%s while reading inode %u again after pass 1D: %s", ext4fs_strerror(err),
				   c->ino, ext4fs_errmsg(ctx->fs));
			return -1;
		}
		/* Deleted in pass 1D, or no map any more: the block is no longer the inode's. */
		if (!bitmap_paged_test(&ctx->inode_used, c->ino) || !fsck_inode_has_blocks(ctx->fs, c->ino, &in))
			return 1;
		err = fsck_map_walk(ctx->fs, c->ino, &in, 0, probe_map_block, &m);
		if (err == -ENOMEM) {
			fsck_fatal(ctx, "out of memory after pass 1D");
			return -1;
		}
		if (!m.found)
			return 1;
	}
	return 0;
}

int fsck_pass1_dups(struct e4fsck *ctx)
{
	struct dups d = { .ctx = ctx };
	int rc = -1;

	if (pass1b(&d) || ctx->aborted)
		goto out;
	if (pass1c(&d) || ctx->aborted)
		goto out;
	rc = pass1d(&d);
out:
	for (size_t i = 0; i < d.cap; i++)
		free(d.table[i].owners);
	free(d.table);
	for (size_t i = 0; i < d.n; i++)
		free(d.inodes[i].blocks);
	free(d.inodes);
	return rc;
}
