/*
 * orphans.c - inodes the kernel was still truncating or deleting when the
 * file system went down, and the orphan file that records them.
 *
 * Before pass 1, as e2fsck does, the orphan list (chained from
 * s_last_orphan through i_dtime) and then the orphan file's entries are
 * finished: an inode without links is freed with everything it owns, one
 * with links is truncated to its i_size.  The list head is cleared first,
 * so a list that turns out to be damaged is dropped rather than followed
 * again; a damaged list or orphan file stops the processing and marks the
 * file system not clean, and whatever is left, the passes find.  The
 * orphan file's entries stay where they are until after pass 5 (e2fsck
 * does not clear what it has not checked): fsck_check_orphan_file() then
 * checks the file itself and writes its blocks back empty, clearing
 * orphan_present.  Read-only checks leave the list and the entries alone
 * (as e2fsck -n) but still report an orphan file that is not clean.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/array.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/orphan_file.h"
#include "ext4fs/super.h"
#include "context.h"
#include "extents.h"
#include "indirect.h"
#include "passes.h"
#include "problem.h"
#include "problems.h"

/* Outcome of a step that may stop the processing the way e2fsck's "return 1" does. */
enum { GO_ON = 0, STOPPED = 1, FATAL = -1 };

static int failed(struct e4fsck *ctx, int err, const char *what, uint32_t ino)
{
	fsck_fatal(ctx, "%s while %s orphaned inode %u: %s", ext4fs_strerror(err), what, ino, ext4fs_errmsg(ctx->fs));
	return FATAL;
}

/*
 * An orphan that is already free: e2fsck counts it free once more all the
 * same (and pass 5 then corrects the counts); the inode gets its dtime.
 */
static int count_free_again(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in)
{
	uint32_t grp = ext4fs_inode_group(ctx->fs, ino);
	struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, grp);
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	int64_t sec;
	uint32_t nsec;
	int err;

	gd.free_inodes_count++;
	if (EXT4FS_ISDIR(in->i_mode) && gd.used_dirs_count)
		gd.used_dirs_count--;
	sb.s_free_inodes_count++;
	ext4fs_now(ctx->fs, &sec, &nsec);
	in->i_dtime = (uint32_t)sec;
	err = ext4fs_group_desc_set(ctx->fs, grp, &gd);
	if (!err)
		err = ext4fs_super_set(ctx->fs, &sb);
	if (!err)
		err = ext4fs_inode_write(ctx->fs, ino, in);
	return err;
}

/* -- an orphan's blocks, as e2fsck frees them ------------------------------
 *
 * e2fsck frees an orphan's blocks one by one while it walks the map, each
 * mapping block after what it maps, and gives up at the first block outside
 * the file system or already free (freed earlier in the same walk, too):
 * what it freed before stays free.  The library frees a file whole, so the
 * walk is made here first, in e2fsck's order, to find such a block; the
 * library's release runs only when there is none.
 */

/* One block as e2fsck's walk meets it: blkcount is the logical block, or -1..-3 for mapping blocks. */
struct orphan_blk {
	uint64_t blk;
	int64_t blkcount;
};

#define PENDING_MAX 8               /* mapping blocks waiting for what they map: deeper than any map */

struct orphan_seq {
	struct e4fsck *ctx;
	struct orphan_blk *v;
	size_t n, cap;
	struct orphan_blk pending[PENDING_MAX];
	int height[PENDING_MAX];        /* 1 for a block mapping data, 2 for one above, ... */
	int npending;
	uint64_t last_cluster;
	unsigned char *node;            /* scratch block for an extent node's header */
	int truncating;                 /* the orphan keeps its links: only what lies past i_size goes */
	size_t bad_map_at;              /* blocks met before the first pointer to an indirect block out of range */
};

static int seq_add(struct orphan_seq *s, uint64_t blk, int64_t blkcount)
{
	/* e2fsck skips holes, and a block in the cluster just met (its last_cluster starts at 0). */
	uint64_t cluster = blk / s->ctx->geo->cluster_ratio;
	if (!blk || cluster == s->last_cluster)
		return 0;
	s->last_cluster = cluster;
	struct orphan_blk *v = ext4fs_array_grow(s->v, &s->cap, s->n + 1, sizeof(*v), 64);
	if (!v)
		return -ENOMEM;
	s->v = v;
	s->v[s->n++] = (struct orphan_blk){ blk, blkcount };
	return 0;
}

/* Mapping blocks of height at most upto have been walked under: they come now. */
static int seq_flush(struct orphan_seq *s, int upto)
{
	int rc = 0;

	while (!rc && s->npending && s->height[s->npending - 1] <= upto) {
		s->npending--;
		rc = seq_add(s, s->pending[s->npending].blk, s->pending[s->npending].blkcount);
	}
	return rc;
}

/* The height of an extent tree node: read from its header (a node e2fsck could not enter has none below). */
static int node_height(struct orphan_seq *s, uint64_t blk)
{
	struct ext4fs_extent_header h;

	if (ext4fs_block_read(s->ctx->fs, blk, s->node) ||
	    !ext4fs_extent_node_header_ok(s->node, s->ctx->geo->block_size))
		return 1;
	ext4fs_extent_node_header(s->node, &h);
	return h.depth + 1;
}

static int seq_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct orphan_seq *s = arg;
	int height, rc = 0;

	if (v->kind == EXT4FS_BLOCK_DATA) {
		for (uint32_t i = 0; i < v->count && !rc; i++)
			rc = seq_add(s, v->pblk + i, (int64_t)(v->lblk + i));
		return rc;
	}
	/* Truncating an extent tree, e2fsck's library frees the nodes it empties unlooked at. */
	if (v->kind == EXT4FS_BLOCK_EXTENT_NODE && s->truncating)
		return 0;
	height = v->kind == EXT4FS_BLOCK_EXTENT_NODE ? node_height(s, v->pblk) : (int)v->kind;
	if ((rc = seq_flush(s, height)))
		return rc;
	if (s->npending == PENDING_MAX)
		return -EINVAL;
	int64_t blkcount = v->kind == EXT4FS_BLOCK_EXTENT_NODE ? -1 : -(int64_t)v->kind;
	s->pending[s->npending] = (struct orphan_blk){ v->pblk, blkcount };
	s->height[s->npending++] = height;
	return 0;
}

/*
 * An illegal data pointer is met in the walk; one to an indirect block is
 * where e2fsck's walk fails (once the mapping blocks before it are met).
 */
static int seq_illegal(void *arg, const struct problem_ctx *pctx, const struct indirect_fix *fix)
{
	struct orphan_seq *s = arg;
	int rc;

	(void)pctx;
	if (!fix->level)
		return seq_add(s, fix->value, (int64_t)fix->lblk);
	if ((rc = seq_flush(s, fix->level)))
		return rc;
	if (s->bad_map_at == SIZE_MAX)
		s->bad_map_at = s->n;
	return 0;
}

/* seq_build(): the walk cannot be followed as e2fsck walks it. */
#define WALK_UNFOLLOWED (INDIRECT_SCAN_BAD_MAP + 1)

/*
 * The blocks of orphan ino in e2fsck's order into s (the caller frees
 * s->v): 0, WALK_UNFOLLOWED, INDIRECT_SCAN_BAD_MAP (e2fsck's walk ends in
 * "Illegal indirect block found": s->bad_map_at), or -ENOMEM.
 */
static int seq_build(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, struct orphan_seq *s)
{
	struct indirect_scan_ops ops = { .claim = seq_visit, .illegal = seq_illegal, .stop_at_bad_map = 1 };
	int rc;

	*s = (struct orphan_seq){ .ctx = ctx, .truncating = in->i_links_count != 0, .bad_map_at = SIZE_MAX };
	if (!fsck_inode_has_blocks(ctx->fs, ino, in))
		return 0;
	if (!(s->node = malloc(ctx->geo->block_size)))
		return -ENOMEM;
	if (ext4fs_inode_has_extents(in))
		rc = fsck_extent_blocks(ctx->fs, in, seq_visit, s);
	else
		rc = fsck_indirect_scan(ctx->fs, ino, in, &ops, s);
	if (rc >= 0) {
		int flushed = seq_flush(s, INT_MAX);
		rc = flushed ? flushed : rc;
	}
	free(s->node);
	return rc == -EINVAL ? WALK_UNFOLLOWED : rc;
}

static int by_block(const void *a, const void *b)
{
	const struct orphan_blk *x = a, *y = b;

	return x->blk < y->blk ? -1 : x->blk > y->blk ? 1 : x->blkcount < y->blkcount ? -1 : x->blkcount > y->blkcount;
}

/*
 * Where e2fsck's walk would meet a cluster a second time, freed by then
 * (when it was met at a blkcount from freed_from on): the place of the
 * earliest second meeting, or s->n.
 */
static size_t first_repeat(const struct orphan_seq *s, int64_t freed_from)
{
	struct orphan_blk *sorted = malloc(s->n * sizeof(*sorted) + 1);
	size_t at = s->n, n = 0;

	if (!sorted)
		return SIZE_MAX;
	/* blkcount is replaced by the place in the walk, so that equal clusters sort by when they are met. */
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].blkcount >= freed_from)
			sorted[n++] = (struct orphan_blk){ s->v[i].blk / s->ctx->geo->cluster_ratio, (int64_t)i };
	qsort(sorted, n, sizeof(*sorted), by_block);
	for (size_t i = 1; i < n; i++)
		if (sorted[i].blk == sorted[i - 1].blk && (size_t)sorted[i].blkcount < at)
			at = (size_t)sorted[i].blkcount;
	free(sorted);
	return at;
}

/* e2fsck's %B: where in the file a block sits. */
static void block_place(int64_t blkcount, char *buf, size_t size)
{
	static const char *const names[] = { "indirect block", "double indirect block", "triple indirect block" };

	if (blkcount >= 0)
		snprintf(buf, size, "block #%" PRId64, blkcount);
	else
		snprintf(buf, size, "%s", names[-blkcount - 1]);
}

/*
 * Truncating, e2fsck unmaps and frees the data past i_size that its walk
 * met before the block it stopped at (and the mapping blocks left empty),
 * but i_blocks is left as it was: pass 1 corrects it.  Not followed when
 * it stopped at a mapping block (the library's unmap would free that one
 * too): then nothing is freed.
 */
static int truncate_before(struct e4fsck *ctx, uint32_t ino, const struct orphan_seq *s, size_t bad,
			   uint64_t start)
{
	struct ext4fs_inode in;
	uint64_t end = 0;
	int err;

	for (size_t i = 0; i < bad; i++)
		if (s->v[i].blkcount >= 0 && (uint64_t)s->v[i].blkcount + 1 > end)
			end = (uint64_t)s->v[i].blkcount + 1;
	if ((err = ext4fs_inode_read(ctx->fs, ino, &in)))
		return err;
	if (end <= start)
		return 0;
	uint32_t blocks_lo = in.i_blocks_lo;
	uint16_t blocks_hi = in.i_blocks_high;
	if ((err = ext4fs_bmap_unmap(ctx->fs, ino, &in, start, end - start)))
		return err;
	in.i_blocks_lo = blocks_lo;
	in.i_blocks_high = blocks_hi;
	return ext4fs_inode_write(ctx->fs, ino, &in);
}

/* Where e2fsck's walk of s stops at a block it will not free: its place and problem (code 0: nowhere). */
static int first_bad(struct e4fsck *ctx, const struct orphan_seq *s, uint64_t size_blocks, size_t *at,
		     uint32_t *code)
{
	/* Truncating frees only the data past i_size: a block met twice inside it was not freed the first time. */
	size_t repeat = first_repeat(s, s->truncating ? (int64_t)size_blocks : INT64_MIN);
	const struct ext4fs_bitmap *bmap;
	int err;

	if (repeat == SIZE_MAX)
		return -ENOMEM;
	if ((err = ext4fs_fs_block_bitmap(ctx->fs, &bmap)))
		return err;
	*code = 0;
	for (*at = 0; *at < s->n; ++*at) {
		uint64_t b = s->v[*at].blk;
		if (b < ctx->geo->first_data_block || b >= ctx->geo->blocks_count)
			*code = PR_0_ORPHAN_ILLEGAL_BLOCK_NUM;
		else if (*at >= repeat || ext4fs_bitmap_test(bmap, b) == 0)
			*code = PR_0_ORPHAN_ALREADY_CLEARED_BLOCK;
		if (*code)
			break;
	}
	return 0;
}

/*
 * Where e2fsck's walk of orphan ino (the blocks in s) stops: at a block it
 * will not free, or with bad_map at the end, failing on an indirect
 * pointer out of range.  The blocks met before are freed (when truncating,
 * only those past i_size: see truncate_before()), the stop is reported.
 * GO_ON when the walk does not stop, STOPPED, or a negative error.
 */
static int stop_orphan_walk(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in,
			    const struct orphan_seq *s, int bad_map)
{
	uint64_t size_blocks = (ext4fs_inode_size(in) + ctx->geo->block_size - 1) / ctx->geo->block_size;
	uint32_t code;
	size_t bad;
	int err = first_bad(ctx, s, size_blocks, &bad, &code);

	if (err)
		return err;
	if (!code && !bad_map)
		return GO_ON;
	if (s->truncating && s->v[bad].blkcount >= 0)
		err = truncate_before(ctx, ino, s, bad, size_blocks);
	for (size_t i = 0; i < bad && !s->truncating && !err; i++)
		err = ext4fs_free_blocks(ctx->fs, s->v[i].blk, 1);
	if (err)
		return err;
	if (code) {
		char place[48];
		struct problem_ctx pctx = { .ino = ino, .blk = s->v[bad].blk, .str = place };
		block_place(s->v[bad].blkcount, place, sizeof(place));
		fix_problem(ctx, code, &pctx);
	}
	/* e2fsck's library gets that far only when no block stopped it before. */
	if (bad_map && bad >= s->bad_map_at) {
		fflush(stdout);
		fprintf(stderr, "release_inode_blocks: Illegal indirect block found while calling "
				"ext2fs_block_iterate for inode %u\n", ino);
	}
	return STOPPED;
}

/*
 * Walk orphan ino's blocks as e2fsck frees them, and stop where it stops
 * (stop_orphan_walk()).  GO_ON when it does not stop: the library then
 * releases or truncates the orphan.  STOPPED, or FATAL.
 */
static int check_orphan_blocks(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in)
{
	struct orphan_seq s;
	int rc = seq_build(ctx, ino, in, &s);

	/* A truncation through a broken map is left to the library's truncation, which refuses it. */
	if (rc == WALK_UNFOLLOWED || (rc == INDIRECT_SCAN_BAD_MAP && in->i_links_count)) {
		free(s.v);
		return GO_ON;
	}
	rc = rc < 0 ? rc : stop_orphan_walk(ctx, ino, in, &s, rc == INDIRECT_SCAN_BAD_MAP);
	free(s.v);
	return rc < 0 ? failed(ctx, rc, "freeing", ino) : rc;
}

/*
 * Finish orphan *ino and set *ino to the next one on the list (its
 * i_dtime; 0 at the end).  The orphan file's entries call it too: their
 * dtime is 0 but a stale link is still checked, as e2fsck does.
 */
static int release_one(struct e4fsck *ctx, uint32_t *ino)
{
	const struct ext4fs_geom *g = ctx->geo;
	struct ext4fs_inode in;
	char detail[128];
	struct problem_ctx pctx = { .ino = *ino };
	int err;

	err = ext4fs_inode_read(ctx->fs, *ino, &in);
	if (err)
		return failed(ctx, err, "reading", *ino);
	uint32_t next = in.i_dtime;
	snprintf(detail, sizeof(detail), "(uid=%" PRIu32 ", gid=%" PRIu32 ", mode=0%o, size=%" PRIu64 ")",
		 ext4fs_inode_uid(&in), ext4fs_inode_gid(&in), (unsigned)in.i_mode, ext4fs_inode_size(&in));
	pctx.str = in.i_links_count ? "Truncating" : "Clearing";
	pctx.name = detail;
	fix_problem(ctx, PR_0_ORPHAN_CLEAR_INODE, &pctx);
	if (next && (next < g->first_ino || next > g->inodes_count)) {
		pctx.ino = next;
		fix_problem(ctx, PR_0_ORPHAN_ILLEGAL_INODE, &pctx);
		return STOPPED;
	}
	int rc = check_orphan_blocks(ctx, *ino, &in);
	if (rc != GO_ON)
		return rc;
	if (!in.i_links_count) {
		const struct ext4fs_bitmap *ib;
		err = ext4fs_fs_inode_bitmap(ctx->fs, &ib);
		if (!err && ext4fs_bitmap_test(ib, *ino) == 0)
			err = count_free_again(ctx, *ino, &in);
		else if (!err)
			err = ext4fs_inode_release(ctx->fs, *ino);
		if (err)
			return failed(ctx, err, "freeing", *ino);
	} else {
		err = ext4fs_file_truncate(ctx->fs, *ino, &in, ext4fs_inode_size(&in));
		if (!err) {
			in.i_dtime = 0;
			err = ext4fs_inode_write(ctx->fs, *ino, &in);
		}
		if (err)
			return failed(ctx, err, "truncating", *ino);
	}
	*ino = next;
	return GO_ON;
}

/* -- walking the orphan file --------------------------------------------- */

/*
 * What to do with each block of the orphan file, in logical order.  lblk
 * is the block's place in the file (e2fsck's "block %b"), buf a scratch
 * block.  Returns GO_ON, STOPPED or FATAL.
 */
typedef int (*orphan_block_fn)(struct e4fsck *ctx, uint64_t lblk, uint64_t pblk, void *arg);

struct orphan_walk {
	struct e4fsck *ctx;
	orphan_block_fn fn;
	void *arg;
	uint32_t hole_code;         /* the problem reporting a hole inside the file */
	uint32_t ino;
	uint64_t nblocks;           /* i_size in blocks */
	uint64_t next;              /* the logical block expected next */
	int block_mapped;
	int outcome;
};

/*
 * A gap before logical block upto.  As e2fsck walks the file: an extent
 * tree's gaps are skipped unseen; in a block map a gap inside i_size ends
 * the walk with the hole reported, and one right at i_size ends it quietly.
 */
static int walk_gap(struct orphan_walk *w, uint64_t upto)
{
	if (!w->block_mapped || w->next >= upto)
		return GO_ON;
	if (w->next == w->nblocks)
		return STOPPED;
	struct problem_ctx pctx = { .ino = w->ino, .blk = w->next };
	fix_problem(w->ctx, w->hole_code, &pctx);
	w->outcome = STOPPED;
	return STOPPED;
}

static int walk_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct orphan_walk *w = arg;

	if (v->kind != EXT4FS_BLOCK_DATA)
		return 0;
	if (walk_gap(w, v->lblk) != GO_ON)
		return 1;
	for (uint32_t i = 0; i < v->count; i++) {
		int rc = w->fn(w->ctx, v->lblk + i, v->pblk + i, w->arg);
		if (rc != GO_ON) {
			w->outcome = rc;
			return 1;
		}
	}
	w->next = v->lblk + v->count;
	return 0;
}

/*
 * Read the orphan file's inode into *in, or report why it cannot be
 * walked: size_code is the problem for a size that is not whole blocks.
 */
static int orphan_inode(struct e4fsck *ctx, uint32_t size_code, struct ext4fs_inode *in)
{
	uint32_t ino = ext4fs_sb(ctx->fs)->s_orphan_file_inum;
	struct problem_ctx pctx = { .ino = ino };
	int err;

	/* e2fsck reads whatever s_orphan_file_inum names; a number out of range cannot be read at all. */
	if (ino < 1 || ino > ctx->geo->inodes_count)
		return STOPPED;
	err = ext4fs_inode_read(ctx->fs, ino, in);
	if (err) {
		fsck_fatal(ctx, "%s while reading the orphan file (inode %u): %s", ext4fs_strerror(err), ino,
			   ext4fs_errmsg(ctx->fs));
		return FATAL;
	}
	if (ext4fs_inode_size(in) % ctx->geo->block_size) {
		fix_problem(ctx, size_code, &pctx);
		return STOPPED;
	}
	return GO_ON;
}

/* Call fn on every block of the orphan file; size_code and hole_code report a damaged file. */
static int walk_orphan_file(struct e4fsck *ctx, uint32_t size_code, uint32_t hole_code, orphan_block_fn fn,
			    void *arg, uint32_t *generation)
{
	struct ext4fs_inode in;
	int rc = orphan_inode(ctx, size_code, &in);

	if (rc != GO_ON)
		return rc;
	struct orphan_walk w = {
		.ctx = ctx, .fn = fn, .arg = arg, .hole_code = hole_code,
		.ino = ext4fs_sb(ctx->fs)->s_orphan_file_inum,
		.nblocks = ext4fs_inode_size(&in) / ctx->geo->block_size,
		.block_mapped = !ext4fs_inode_has_extents(&in),
	};
	*generation = in.i_generation;
	if (!fsck_inode_has_blocks(ctx->fs, w.ino, &in))
		return GO_ON;
	int err = ext4fs_block_iterate(ctx->fs, w.ino, &in, EXT4FS_ITER_DATA_ONLY, walk_visit, &w);
	if (err < 0) {
		fsck_fatal(ctx, "%s while walking the orphan file (inode %u): %s", ext4fs_strerror(err), w.ino,
			   ext4fs_errmsg(ctx->fs));
		return FATAL;
	}
	if (w.outcome != GO_ON)
		return w.outcome;
	/* A block map's direct slots past the last block are holes e2fsck visits too. */
	if (w.block_mapped && w.next < 12)
		(void)walk_gap(&w, w.next + 1);
	return w.outcome;
}

/* Read block pblk of the orphan file into buf. */
static int read_orphan_block(struct e4fsck *ctx, uint64_t pblk, void *buf)
{
	int err = ext4fs_block_ptr_valid(ctx->fs, pblk) ? ext4fs_block_read(ctx->fs, pblk, buf)
						    : EXT4FS_E_BAD_BLOCK_NUM;
	if (err) {
		fsck_fatal(ctx, "%s while reading block %" PRIu64 " of the orphan file: %s", ext4fs_strerror(err),
			   pblk, ext4fs_errmsg(ctx->fs));
		return FATAL;
	}
	return GO_ON;
}

/* -- before pass 1: finishing the entries ---------------------------------- */

struct release_state {
	unsigned char *buf;
	uint32_t generation;
};

static int release_block(struct e4fsck *ctx, uint64_t lblk, uint64_t pblk, void *arg)
{
	struct release_state *rs = arg;
	uint32_t ino = ext4fs_sb(ctx->fs)->s_orphan_file_inum;
	struct ext4fs_orphan_block_info info;
	struct problem_ctx pctx = { .ino = ino, .blk = lblk };
	int rc = read_orphan_block(ctx, pblk, rs->buf);

	if (rc != GO_ON)
		return rc;
	ext4fs_orphan_block_inspect(ctx->fs, ino, rs->generation, pblk, rs->buf, &info);
	if (!info.magic_ok) {
		fix_problem(ctx, PR_0_ORPHAN_FILE_BAD_MAGIC, &pctx);
		return STOPPED;
	}
	if (!info.csum_ok) {
		fix_problem(ctx, PR_0_ORPHAN_FILE_BAD_CHECKSUM, &pctx);
		return STOPPED;
	}
	for (uint32_t i = 0; i < info.slots; i++) {
		uint32_t entry = ext4fs_orphan_block_entry(ctx->fs, rs->buf, i);
		if (!entry)
			continue;
		if (entry < ctx->geo->first_ino || entry > ctx->geo->inodes_count) {
			pctx.ino = entry;
			fix_problem(ctx, PR_0_ORPHAN_ILLEGAL_INODE, &pctx);
			return STOPPED;
		}
		if ((rc = release_one(ctx, &entry)) != GO_ON)
			return rc;
	}
	return GO_ON;
}

static int release_orphan_file(struct e4fsck *ctx)
{
	struct release_state rs = { 0 };
	int rc;

	if (!ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE))
		return GO_ON;
	rs.buf = malloc(ctx->geo->block_size);
	if (!rs.buf) {
		fsck_fatal(ctx, "out of memory for the orphan file");
		return FATAL;
	}
	rc = walk_orphan_file(ctx, PR_0_ORPHAN_FILE_WRONG_SIZE, PR_0_ORPHAN_FILE_HOLE, release_block, &rs,
			      &rs.generation);
	free(rs.buf);
	return rc;
}

/* Orphan processing stopped on damage: as e2fsck, the file system is no longer clean. */
static int stop_not_clean(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	int err;

	sb.s_state &= (uint16_t)~EXT4FS_STATE_VALID;
	err = ext4fs_super_set(ctx->fs, &sb);
	if (err)
		return failed(ctx, err, "marking the file system not clean after", sb.s_last_orphan);
	ctx->fs_changed = 1;
	return GO_ON;
}

int fsck_release_orphans(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	uint32_t ino = sb.s_last_orphan;
	int present = ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT);
	int err, rc = GO_ON;

	if (ctx->read_only || (!ino && !present))
		return 0;
	sb.s_last_orphan = 0;
	err = ext4fs_super_set(ctx->fs, &sb);
	if (err)
		return failed(ctx, err, "clearing the list head before", ino);
	/* Finishing what the kernel started is not a repair: e2fsck says "modified" and exits 0. */
	ctx->fs_modified = 1;
	/* A file system with errors gets the full check; neither the list nor the file is to be trusted. */
	if (sb.s_state & EXT4FS_STATE_ERROR)
		return 0;
	if (ino && (ino < g->first_ino || ino > g->inodes_count)) {
		struct problem_ctx pctx = { .ino = ino };
		fix_problem(ctx, PR_0_ORPHAN_ILLEGAL_HEAD_INODE, &pctx);
		return stop_not_clean(ctx) == GO_ON ? 0 : -1;
	}
	/* A list is at most as long as there are inodes: a cycle cannot keep us here. */
	for (uint32_t steps = 0; ino && steps < g->inodes_count && rc == GO_ON; steps++)
		rc = release_one(ctx, &ino);
	/* orphan_present without an orphan file: nothing to read, and something is wrong. */
	if (rc == GO_ON && present && !ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE))
		rc = STOPPED;
	if (rc == GO_ON)
		rc = release_orphan_file(ctx);
	if (rc == STOPPED)
		rc = stop_not_clean(ctx);
	return rc == GO_ON ? 0 : -1;
}

/* -- after pass 5: the orphan file itself ----------------------------------- */

struct reinit_state {
	unsigned char *want, *have;
	uint32_t generation;
	int clearing;               /* a block was found dirty and the answer was yes: write the rest unasked */
};

static int reinit_block(struct e4fsck *ctx, uint64_t lblk, uint64_t pblk, void *arg)
{
	struct reinit_state *rs = arg;
	uint32_t ino = ext4fs_sb(ctx->fs)->s_orphan_file_inum;
	int err;

	/* Once clearing, blocks are written unread: the number is checked here, not by read_orphan_block(). */
	if (!ext4fs_block_ptr_valid(ctx->fs, pblk)) {
		fsck_fatal(ctx, "block %" PRIu64 " of the orphan file is not in the file system", pblk);
		return FATAL;
	}
	ext4fs_orphan_block_init(ctx->fs, ino, rs->generation, pblk, rs->want);
	if (!rs->clearing) {
		int rc = read_orphan_block(ctx, pblk, rs->have);
		if (rc != GO_ON)
			return rc;
		if (!memcmp(rs->have, rs->want, ctx->geo->block_size))
			return GO_ON;
		struct problem_ctx pctx = { .ino = ino, .blk = lblk };
		if (!fix_problem(ctx, PR_6_ORPHAN_BLOCK_DIRTY, &pctx))
			return STOPPED;
		rs->clearing = 1;
		ctx->fs_changed = 1;
	}
	err = ext4fs_block_write(ctx->fs, pblk, rs->want);
	if (err) {
		fsck_fatal(ctx, "%s while clearing block %" PRIu64 " of the orphan file: %s", ext4fs_strerror(err),
			   pblk, ext4fs_errmsg(ctx->fs));
		return FATAL;
	}
	return GO_ON;
}

/* Every block of the orphan file empty?  GO_ON (all were), STOPPED (damaged), 2 (cleared), FATAL. */
static int check_init_orphan_file(struct e4fsck *ctx)
{
	struct reinit_state rs = { 0 };
	int rc;

	rs.want = malloc(ctx->geo->block_size);
	rs.have = malloc(ctx->geo->block_size);
	if (!rs.want || !rs.have) {
		free(rs.want);
		free(rs.have);
		fsck_fatal(ctx, "out of memory for the orphan file");
		return FATAL;
	}
	rc = walk_orphan_file(ctx, PR_6_ORPHAN_FILE_WRONG_SIZE, PR_6_ORPHAN_FILE_HOLE, reinit_block, &rs,
			      &rs.generation);
	free(rs.want);
	free(rs.have);
	if (rc == GO_ON && rs.clearing)
		return 2;
	return rc;
}

/* e2fsck's "Failed to truncate orphan file." after a library failure. */
static void trunc_failed(struct e4fsck *ctx)
{
	fix_problem(ctx, PR_6_ORPHAN_FILE_TRUNC_FAILED, NULL);
}

static int clear_present(struct e4fsck *ctx)
{
	int err = ext4fs_orphan_present_set(ctx->fs, 0);

	if (err) {
		fsck_fatal(ctx, "%s while clearing orphan_present: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/* The orphan file could not be made clean: e2fsck offers to make a new one. */
static int recreate(struct e4fsck *ctx)
{
	uint32_t ino = ext4fs_sb(ctx->fs)->s_orphan_file_inum;
	struct problem_ctx pctx = { .ino = ino };
	int err;

	if (!fix_problem(ctx, PR_6_ORPHAN_FILE_CORRUPTED, &pctx))
		return 0;
	ctx->fs_changed = 1;
	/* A number that names no inode has no file to truncate: the new file takes a fresh inode. */
	if (ino < ctx->geo->first_ino || ino > ctx->geo->inodes_count)
		ino = 0;
	else if (ext4fs_orphan_file_truncate(ctx->fs)) {
		trunc_failed(ctx);
		return 0;
	}
	uint32_t n = ext4fs_orphan_file_default_blocks(ctx->fs);
	printf("Creating orphan file (%u blocks): ", n);
	fflush(stdout);
	err = ext4fs_orphan_file_create(ctx->fs, ino, n);
	if (err) {
		printf("%s: while trying to create orphan file\n", ext4fs_strerror(err));
		fix_problem(ctx, PR_6_ORPHAN_FILE_CREATE_FAILED, &pctx);
		return 0;
	}
	printf(" Done.\n");
	return 0;
}

int fsck_check_orphan_file(struct e4fsck *ctx)
{
	if (!ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE)) {
		if (ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT) &&
		    fix_problem(ctx, PR_6_ORPHAN_PRESENT_NO_FILE, NULL))
			return clear_present(ctx);
		return 0;
	}
	/* The orphan file exists for the journal's sake; without one it is only in the way. */
	if (!ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) &&
	    fix_problem(ctx, PR_6_ORPHAN_FILE_WITHOUT_JOURNAL, NULL)) {
		ctx->fs_changed = 1;
		if (ext4fs_orphan_file_truncate(ctx->fs))
			trunc_failed(ctx);
		return 0;
	}
	int rc = check_init_orphan_file(ctx);
	if (rc == FATAL)
		return -1;
	if (rc == 2 || (rc == GO_ON && ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT) &&
			fix_problem(ctx, PR_6_ORPHAN_PRESENT_CLEAN_FILE, NULL)))
		return clear_present(ctx);
	if (rc == STOPPED)
		return recreate(ctx);
	return 0;
}

int fsck_backup_super_differs(const struct e4fsck *ctx)
{
	/* The bits the kernel sets in the primary alone (e2fsck 1.47.0's list; orphan_present is not on it). */
	const uint32_t incompat_ignore = EXT4FS_FEATURE_INCOMPAT_EXTENTS | EXT4FS_FEATURE_INCOMPAT_RECOVER;
	const uint32_t ro_ignore = EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE | EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK;
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	int differs = 0;

	if (ctx->read_only || ctx->from_backup || ctx->superblock || !(sb->s_state & EXT4FS_STATE_VALID) ||
	    (sb->s_state & EXT4FS_STATE_ERROR))
		return 0;
	unsigned char *buf = malloc(ctx->geo->block_size);
	if (!buf)
		return 0;
	for (uint32_t grp = 1; grp < ctx->geo->group_count; grp++) {
		if (!ext4fs_group_has_super(ctx->fs, grp))
			continue;
		uint64_t blk = ext4fs_group_first_block(ctx->fs, grp);
		struct ext4fs_super b;
		if (ext4fs_block_read(ctx->fs, blk, buf))
			continue;
		ext4fs_super_decode(&b, buf);
		/* Not a superblock e2fsck would compare with: try the next backup. */
		if (b.s_magic != EXT4FS_SUPER_MAGIC || b.s_rev_level > 1 || b.s_log_block_size > 6 ||
		    (b.s_rev_level && b.s_inode_size < 128))
			continue;
		differs = b.s_feature_compat != sb->s_feature_compat ||
			  (b.s_feature_incompat & ~incompat_ignore) != (sb->s_feature_incompat & ~incompat_ignore) ||
			  (b.s_feature_ro_compat & ~ro_ignore) != (sb->s_feature_ro_compat & ~ro_ignore) ||
			  b.s_blocks_count_lo != sb->s_blocks_count_lo || b.s_blocks_count_hi != sb->s_blocks_count_hi ||
			  b.s_inodes_count != sb->s_inodes_count || memcmp(b.s_uuid, sb->s_uuid, sizeof(b.s_uuid));
		break;
	}
	free(buf);
	return differs;
}
