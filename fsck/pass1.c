/*
 * pass1.c - every inode that may be in use: its mode, dtime, size and
 * block count, the flags and fields that do not fit its kind (devices,
 * fifos, sockets and symlinks, the index, extents and imagic flags, a
 * lost directory mode), and every block it claims.  Fills the maps the
 * later passes read: inodes in use / directories / regular files /
 * damaged, blocks claimed (and claimed twice), the link counts as
 * recorded, the directories and their blocks for pass 2.
 *
 * In parallel: the groups are cut into -j ranges of about equal numbers of
 * inodes in use, and each range is checked by a worker thread with its own
 * read-only handle and scanner (the library's handles share nothing), into
 * maps and lists of its own.  Workers never print, ask or write; they
 * record each problem with the repair it would need.  After the join, in
 * range order, the maps are merged (a block claimed in two ranges is a
 * duplicate, as one claimed twice within a range), and the problems are
 * answered and repaired in inode order by this thread.  So what is printed
 * and what is repaired does not depend on the number of threads.
 *
 * The inode tables come from the library's scanner, which skips the parts
 * that uninit_bg / metadata_csum mark unused when the group descriptor's
 * checksum verifies.  The file system's own metadata (superblocks,
 * descriptors, reserved descriptor blocks, bitmaps, inode tables) is
 * claimed first, and extended-attribute blocks after the merge (one claim
 * per block however many inodes share it).
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/array.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/dxhash.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/resize_inode.h"
#include "ext4fs/scan.h"
#include "ext4fs/super.h"
#include "ext4fs/xattr.h"
#include "deferred.h"
#include "dirs.h"
#include "clusters.h"
#include "badblocks.h"
#include "context.h"
#include "passes.h"
#include "extents.h"
#include "guard.h"
#include "ibody.h"
#include "indirect.h"
#include "problem.h"
#include "progress.h"
#include "problems.h"
#include "problems_dirs.h"
#include "relocate.h"
#include "xattr_check.h"

/* The repair a recorded problem needs when answered yes. */
enum p1_fix {
	FIX_NONE,
	FIX_DTIME,          /* i_dtime = 0 */
	FIX_DTIME_NOW,      /* i_dtime = the check's time (a deleted inode) */
	FIX_SIZE,           /* i_size = value */
	FIX_BLOCKS,         /* i_blocks to value file system blocks' worth */
	FIX_CSUM,           /* rewrite the inode (its checksum is recomputed) */
	FIX_EXTENT,         /* the extent tree repair in ext */
	FIX_CLEAR_INODE,    /* the inode is no longer in use (e2fsck's "Clear inode") */
	FIX_CLEAR_ROOT,     /* the same for the root, its block map zeroed too (pass 3 makes a new root) */
	FIX_MODE_REGULAR,   /* the orphan file's, journal's or a quota file's mode becomes a plain regular file */
	FIX_ZERO_INODE,     /* yes: the unused orphan file's or journal inode's record is zeroed; no: its blocks are claimed */
	FIX_ZERO_ONLY,      /* yes: an unused quota inode's record is zeroed; no: nothing (its blocks are not claimed) */
	FIX_IND_CLEAR,      /* the illegal pointer in ind is zeroed */
	FIX_EA_CHECK,       /* not a problem yet: check the xattr block value now, in inode order */
	FIX_EXTRA_ISIZE,    /* i_extra_isize = value */
	FIX_EA_IBODY_CLEAR, /* the in-inode attribute magic at byte value of the record is zeroed */
	FIX_EA_INODE_FL,    /* inode value gets EXT4FS_EA_INODE_FL */
	FIX_EPOCH,          /* pre-1970 timestamps lose their wrong epoch bits */
	FIX_CLEAR_RESTART,  /* too many illegal blocks: cleared, and the check starts again (a no: see answer_problems) */
	FIX_RESTART_LATER,  /* a message: a map block lies on metadata; unless -n, the check starts again after pass 2 */
	FIX_ITERATE_CLEAR,  /* the extent walk gave up: cleared, i_blocks zeroed, and the check starts again */
	FIX_FLAGS_CLEAR,    /* i_flags loses the bits in value */
	FIX_EXTENTS_FL,     /* yes: i_flags gets the extents flag; either way the answer's walk is claimed (held[]) */
	FIX_CLEAR_FULLY,    /* cleared as e2fsck's clear_inode: a reserved inode's map too, the bad blocks inode kept in use */
	FIX_MODE_ZERO,      /* i_mode = 0 (a reserved inode's mode) */
	FIX_MODE_DIR,       /* yes: a directory's mode, its held blocks claimed (value: 1 when fragmented); no: none */
	FIX_SET_INCOMPAT,   /* the superblock gets the incompat feature in value (inline_data, extents) */
	FIX_INLINE_DROP,    /* i_size = 0, no inline-data flag, i_block zeroed (its data is lost) */
	FIX_LARGE_DIR,      /* no question: an indexed directory that needs largedir is counted (ctx->large_dirs) */
};

/* A problem a worker found: when it is asked (q, deferred.h) and what a yes repairs. */
struct p1_problem {
	struct deferred q;          /* first: deferred_replay() walks these */
	enum p1_fix fix;
	uint64_t value;
	int ea_counted;             /* FIX_BLOCKS: value counts the xattr block, which a repair may drop;
				       FIX_EA_CHECK: the block's owners count this inode */
	uint64_t ea_block;          /* FIX_BLOCKS with ea_counted: that block, whose EA-inode values count too */
	uint64_t ibody_blocks;      /* FIX_BLOCKS: value counts these for in-inode values kept in EA inodes */
	uint32_t unit;              /* FIX_BLOCKS: i_blocks units per block */
	char detail[200];           /* the library's message, for %s */
	uint32_t held_frag[2];      /* FIX_EXTENTS_FL, FIX_MODE_DIR: files found non-contiguous by the no (0) and yes (1) walks */
	struct extent_fix ext;      /* FIX_EXTENT */
	struct indirect_fix ind;    /* FIX_IND_CLEAR */
};

/* One worker: a range of groups and everything it found there. */
struct p1_worker {
	struct e4fsck *ctx;
	struct ext4fs_fs *fs;       /* its own read-only handle, or ctx->fs with one worker */
	int own_fs;
	uint32_t first_group, last_group;
	struct bitmap_paged inode_used, inode_dir, inode_reg, inode_bad, block_found, block_dup;
	struct counter_paged links_disk;
	struct dir_info *dirs;
	size_t ndirs, capdirs;
	struct dir_block *dblocks;
	size_t ndblocks, capdblocks;
	struct xattr_table xattrs;
	struct xattr_table ea_inode_refs;   /* EA inodes named by in-inode attributes, and how often */
	struct fsck_encrypted encrypted;    /* its encrypted inodes and their policies */
	struct p1_problem *probs;
	size_t nprobs, capprobs;
	uint64_t inodes_in_use, files_fragmented;
	struct fsck_stats stats;
	int low_dtime_check;        /* a dtime below the inode count is an orphan-list link */
	uint32_t cur_ino;           /* the inode being checked, for callbacks that record problems */
	uint64_t ibody_value_blocks; /* the current inode's in-inode values kept in EA inodes, in blocks */
	uint32_t no_map_ino;        /* an inode whose map e2fsck's walk finds empty (0: none) */
	uint32_t unset_ino;         /* an inode asked about a missing extents flag (0: none) ... */
	size_t unset_rec;           /* ... and that question's record */
	uint32_t nonzero_size_ino;  /* a device, fifo or socket asked about its size (0: none) ... */
	size_t nonzero_size_rec;    /* ... and that question's record */
	uint32_t hold_ino;          /* an inode whose blocks are held back, not claimed (0: none) */
	int hold_answer;            /* the answer (1 yes, 0 no) the walk being held assumes */
	uint32_t acl_seen_ino;      /* an inode whose attribute block a first walk already recorded */
	int extents_assumed;        /* the extents feature is missing, and a yes to adding it is expected */
	uint32_t extent_root_ino;   /* an inode walked as an extent tree although the feature is missing (0: none) */
	struct held_run {
		uint32_t ino, lblk;     /* lblk: a directory block's, with dir set */
		uint64_t blk, n;
		uint8_t answer, dir;    /* claimed (dir: listed for pass 2) only on this answer */
	} *held;                    /* blocks walked assuming an answer, claimed once it is given */
	size_t nheld, capheld;
	int failed;                 /* the range could not be checked: error says why */
	char error[300];
};

/* What the walk of one inode's blocks learns. */
struct block_walk {
	struct p1_worker *w;
	uint32_t ino;
	int is_dir;
	int block_mapped;           /* indirect map: its own blocks count in the fragmentation chain */
	uint64_t blocks;            /* data and mapping blocks claimed */
	uint64_t last_lblk_plus1;   /* end of the last mapped block, 0 when none */
	uint64_t last_init_plus1;   /* the same, written (not unwritten) blocks only */
	uint64_t prev_end;          /* physical block after the previous run */
	int fragmented;
	unsigned illegal;           /* pointers outside the file system (indirect maps) */
	int dir_collapse;           /* a directory's extents after a gap went to the asking thread */
	uint64_t first_pblk;        /* where logical block 0 is, 0 when unmapped */
	/*
	 * The resize inode: only its double-indirect block is its own; the
	 * blocks under it are the reserved descriptor blocks and their copies,
	 * claimed as the file system's metadata.  They count in its i_blocks.
	 */
	int resize_map;
	/*
	 * The record of the first illegal pointer to an indirect block under
	 * the inode pointer being walked, + 1 (0: none).  Left in place, such a
	 * pointer makes e2fsck's block iterator give up the rest of that
	 * subtree and then fail ("Illegal indirect block found"), which is fatal.
	 */
	size_t bad_map_rec;
	int bad_map_top;            /* under which of the inode's pointers that one lies (struct indirect_fix's top) */
	int map_top_seen;           /* the last of the inode's pointers under which an indirect block was met */
	struct cluster_walk cw;     /* bigalloc: the clusters charged so far (clusters.h) */
	size_t max_depth_rec;       /* PR_1_EXTENT_BAD_MAX_DEPTH's record + 1 (0: none) */
};

static void worker_fail(struct p1_worker *w, const char *what)
{
	if (!w->failed)
		snprintf(w->error, sizeof(w->error), "%s", what);
	w->failed = 1;
}

static int record(struct p1_worker *w, uint32_t code, const struct problem_ctx *pctx, enum p1_fix fix,
		  uint64_t value, const char *detail)
{
	if (w->nprobs == w->capprobs) {
		struct p1_problem *grown =
			ext4fs_array_grow(w->probs, &w->capprobs, w->nprobs + 1, sizeof(*grown), 64);
		if (!grown) {
			worker_fail(w, "out of memory recording problems");
			return -1;
		}
		w->probs = grown;
	}
	struct p1_problem *p = &w->probs[w->nprobs++];
	deferred_init(&p->q, code, pctx);
	p->fix = fix;
	p->value = value;
	p->ea_counted = 0;
	p->held_frag[0] = p->held_frag[1] = 0;
	p->ea_block = 0;
	p->ibody_blocks = 0;
	p->unit = 0;
	snprintf(p->detail, sizeof(p->detail), "%s", detail ? detail : "");
	return 0;
}

/*
 * Claim [blk, blk + n) in map found, whole clusters with bigalloc; those
 * claimed before go to dup.  0 or -1 (ENOMEM).
 */
static int claim_in(const struct ext4fs_geom *g, struct bitmap_paged *found, struct bitmap_paged *dup,
		    uint64_t blk, uint64_t n)
{
	return cluster_claim(found, dup, g->cluster_ratio, blk, n);
}

/*
 * Claim range blk, n as the file system's own, and remember it in
 * ctx->fs_meta (e2fsck's metadata map).  0 or -1 (ENOMEM).
 */
static int claim_meta(struct e4fsck *ctx, uint64_t blk, uint64_t n)
{
	if (range_set_add(&ctx->fs_meta, blk, n))
		return -1;
	/* Metadata shares clusters (bitmaps side by side) without being claimed twice. */
	if (ctx->geo->cluster_ratio > 1)
		return cluster_mark(&ctx->block_found, ctx->geo->cluster_ratio, blk, n);
	return claim_in(ctx->geo, &ctx->block_found, &ctx->block_dup, blk, n);
}

/*
 * The file system's own blocks: superblock and descriptor copies, bitmaps,
 * inode tables; claimed, and (but for the MMP block, as in e2fsck) kept in
 * ctx->fs_meta for the walks to test.
 */
static int claim_fs_metadata(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;

	for (uint32_t grp = 0; grp < g->group_count; grp++) {
		uint64_t super_blk, old_desc, new_desc;
		uint32_t old_n, meta_n;

		ext4fs_group_meta_location(ctx->fs, grp, &super_blk, &old_desc, &old_n, &new_desc, &meta_n);
		/*
		 * Whether a group has a superblock follows from its number, not from
		 * super_blk: group 0's is block 0 with 4 KiB blocks, a number that
		 * elsewhere means "none".
		 */
		if (ext4fs_group_has_super(ctx->fs, grp) && claim_meta(ctx, super_blk, 1))
			return -1;
		if ((old_desc && ext4fs_block_range_valid(ctx->fs, old_desc, old_n) && claim_meta(ctx, old_desc, old_n)) ||
		    (new_desc && ext4fs_block_range_valid(ctx->fs, new_desc, 1) && claim_meta(ctx, new_desc, 1)))
			return -1;
		/* The bitmaps and inode table; those on blocks claimed before are reported, for relocation. */
		if (fsck_claim_group_tables(ctx, grp, claim_meta))
			return -1;
	}
	range_set_seal(&ctx->fs_meta);
	/* The multiple-mount protection block, claimed where e2fsck claims it: past the first data block. */
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	if (ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_MMP) && sb->s_mmp_block > g->first_data_block &&
	    ext4fs_block_ptr_valid(ctx->fs, sb->s_mmp_block) &&
	    claim_in(ctx->geo, &ctx->block_found, &ctx->block_dup, sb->s_mmp_block, 1))
		return -1;
	return 0;
}

/* Keep run blk, n of inode ino back (see hold_ino); dir: a directory block at lblk.  0 or -1 (ENOMEM). */
static int hold_run(struct p1_worker *w, uint32_t ino, uint64_t blk, uint64_t n, int dir, uint32_t lblk)
{
	if (w->nheld == w->capheld) {
		struct held_run *grown = ext4fs_array_grow(w->held, &w->capheld, w->nheld + 1, sizeof(*grown), 16);
		if (!grown)
			return -1;
		w->held = grown;
	}
	w->held[w->nheld++] = (struct held_run){ ino, lblk, blk, n, (uint8_t)w->hold_answer, (uint8_t)dir };
	return 0;
}

/* Under which of an indirect map's pointers (1-3: the (double, triple) indirect one) logical block lblk lies. */
static int map_top(const struct ext4fs_geom *g, uint64_t lblk)
{
	uint64_t apb = g->block_size / 4;

	if (lblk < EXT4FS_NDIR_BLOCKS + apb)
		return 1;
	return lblk < EXT4FS_NDIR_BLOCKS + apb + apb * apb ? 2 : 3;
}

/* Claim run blk, n of the inode being walked, or hold it back (see hold_ino).  0 or -ENOMEM. */
static int claim_run(struct block_walk *b, uint64_t blk, uint64_t n)
{
	struct p1_worker *w = b->w;

	if (b->ino == w->hold_ino)
		return hold_run(w, b->ino, blk, n, 0, 0) ? -ENOMEM : 0;
	return claim_in(w->ctx->geo, &w->block_found, &w->block_dup, blk, n) ? -ENOMEM : 0;
}

/*
 * Bigalloc: claim what run v brings into the inode's clusters, and say in
 * *charged how many blocks (whole clusters) it adds to the inode's count,
 * by e2fsck's rules (clusters.h).  0 or -ENOMEM.
 */
static int charge_clusters(struct block_walk *b, const struct ext4fs_block_visit *v, int valid, uint64_t *charged)
{
	uint32_t ratio = b->w->ctx->geo->cluster_ratio;
	uint64_t from;

	*charged = 0;
	if (v->kind == EXT4FS_BLOCK_EXTENT_NODE) {
		*charged = ratio;
		return valid ? claim_run(b, v->pblk, 1) : 0;
	}
	if (b->block_mapped) {
		for (uint32_t j = 0; j < v->count; j++) {
			/* e2fsck's block counts of map blocks: -1, -2, -3 for single, double, triple indirect. */
			int64_t cnt = v->kind == EXT4FS_BLOCK_DATA ? (int64_t)(v->lblk + j) : -(int64_t)v->kind;
			if (!cluster_walk_block(&b->cw, v->pblk + j, cnt))
				continue;
			*charged += ratio;
			if (valid && claim_run(b, v->pblk + j, 1))
				return -ENOMEM;
		}
		return 0;
	}
	if (cluster_misaligned(&b->cw, v->pblk, v->lblk)) {
		/* As e2fsck: every block of the extent is reported, and its cluster claimed twice, for pass 1B. */
		for (uint32_t i = 0; i < v->count; i++) {
			struct problem_ctx pctx = { .ino = b->ino, .blk = v->lblk + i, .blk2 = v->pblk + i };
			if (record(b->w, PR_1_MISALIGNED_CLUSTER, &pctx, FIX_NONE, 0, NULL))
				return -ENOMEM;
			if (valid && (claim_run(b, v->pblk + i, 1) || claim_run(b, v->pblk + i, 1)))
				return -ENOMEM;
		}
	}
	*charged = cluster_walk_extent(&b->cw, v->pblk, v->lblk, v->count, &from) * ratio;
	if (valid && from < v->pblk + v->count)
		return claim_run(b, from, v->pblk + v->count - from);
	return 0;
}

static int visit_block(const struct ext4fs_block_visit *v, void *arg)
{
	struct block_walk *b = arg;
	struct p1_worker *w = b->w;

	/*
	 * The walks report blocks outside the file system as problems of their
	 * own and do not hand them here, but for one case: an extent below a
	 * tree block on the metadata, which e2fsck believes without a question
	 * (extents.c).  As e2fsck, such blocks count in the file's size and
	 * block count, and are not claimed (nor read as directory blocks).
	 */
	int valid = ext4fs_block_range_valid(w->fs, v->pblk, v->count);
	if (v->kind == EXT4FS_BLOCK_IND || v->kind == EXT4FS_BLOCK_DIND || v->kind == EXT4FS_BLOCK_TIND) {
		int top = map_top(w->ctx->geo, v->lblk);
		if (top > b->map_top_seen)
			b->map_top_seen = top;
	}
	if (b->resize_map) {
		/* Counted block by block, as e2fsck counts the resize inode's map, and charged in clusters' worth. */
		b->blocks += (uint64_t)v->count * w->ctx->geo->cluster_ratio;
		if (valid && v->kind == EXT4FS_BLOCK_DIND && claim_in(w->ctx->geo, &w->block_found, &w->block_dup, v->pblk, 1))
			return -ENOMEM;
		return 0;
	}
	uint64_t charged = v->count;
	int rc = 0;
	if (w->ctx->geo->cluster_ratio > 1)
		rc = charge_clusters(b, v, valid, &charged);
	else if (valid)
		rc = claim_run(b, v->pblk, v->count);
	if (rc)
		return rc;
	b->blocks += charged;
	/*
	 * "Non-contiguous" as e2fsck counts it: a run that does not start where
	 * the previous one ended; an indirect block placed among the data it
	 * maps is part of the chain, an extent tree block is not.
	 */
	if (v->kind == EXT4FS_BLOCK_DATA || b->block_mapped) {
		if (b->prev_end && v->pblk != b->prev_end)
			b->fragmented = 1;
		b->prev_end = v->pblk + v->count;
	}
	if (v->kind != EXT4FS_BLOCK_DATA)
		return 0;
	if (v->lblk == 0 && valid)
		b->first_pblk = v->pblk;
	if (v->lblk + v->count > b->last_lblk_plus1)
		b->last_lblk_plus1 = v->lblk + v->count;
	if (!v->unwritten && v->lblk + v->count > b->last_init_plus1)
		b->last_init_plus1 = v->lblk + v->count;
	if (b->is_dir && valid && b->ino == w->hold_ino) {
		if (hold_run(w, b->ino, v->pblk, v->count, 1, (uint32_t)v->lblk))
			return -ENOMEM;
	} else if (b->is_dir && valid) {
		for (uint32_t k = 0; k < v->count; k++) {
			if (w->ndblocks == w->capdblocks) {
				struct dir_block *grown =
					ext4fs_array_grow(w->dblocks, &w->capdblocks, w->ndblocks + 1, sizeof(*grown), 1024);
				if (!grown)
					return -ENOMEM;
				w->dblocks = grown;
			}
			w->dblocks[w->ndblocks++] = (struct dir_block){ b->ino, (uint32_t)(v->lblk + k), v->pblk + k };
		}
	}
	return 0;
}

static int add_dir(struct p1_worker *w, uint32_t ino)
{
	if (w->ndirs == w->capdirs) {
		struct dir_info *grown =
			ext4fs_array_grow(w->dirs, &w->capdirs, w->ndirs + 1, sizeof(*grown), 256);
		if (!grown)
			return -1;
		w->dirs = grown;
	}
	w->dirs[w->ndirs++] = (struct dir_info){ .ino = ino };
	return 0;
}

/* A problem found in an extent tree: recorded with the repair a yes brings. */
static int extent_problem(void *arg, uint32_t code, const struct problem_ctx *pctx, const struct extent_fix *fix)
{
	struct block_walk *b = arg;
	enum p1_fix kind = fix ? FIX_EXTENT : FIX_NONE;

	if (code == PR_1_MISSING_EXTENT_HEADER)
		kind = FIX_CLEAR_INODE;
	else if (code == PR_1_CRITICAL_METADATA_COLLISION)
		kind = FIX_RESTART_LATER;
	else if (code == PR_1_EXTENT_ITERATE_FAILURE)
		kind = FIX_ITERATE_CLEAR;

	/*
	 * As e2fsck: with -D a directory is rebuilt in pass 3A, so its tree is not
	 * offered for pass 1E; -E no_optimize_extents (or fixes_only) offers none.
	 */
	int suggestion = code == PR_1E_CAN_NARROW_EXTENT_TREE || code == PR_1E_CAN_COLLAPSE_EXTENT_TREE;
	if (suggestion && ((b->is_dir && b->w->ctx->optimize_dirs) || b->w->ctx->no_optimize_extents))
		return 0;
	/* A tree too deep is asked about whatever the options; a directory pass 3A rebuilds keeps it till then. */
	if (code == PR_1_EXTENT_BAD_MAX_DEPTH && b->is_dir && b->w->ctx->optimize_dirs) {
		fix = NULL;
		kind = FIX_NONE;
	}
	if (code == PR_1_COLLAPSE_DBLOCK)
		b->dir_collapse = 1;
	if (record(b->w, code, pctx, kind, fix ? fix->new_lblk : 0, NULL))
		return -ENOMEM;
	struct p1_problem *p = &b->w->probs[b->w->nprobs - 1];
	if (fix)
		p->ext = *fix;
	if (code == PR_1_EXTENT_BAD_MAX_DEPTH)
		b->max_depth_rec = b->w->nprobs;
	/* After a yes to the depth question the tree is rebuilt unasked: e2fsck weighs its levels only after a no. */
	if (suggestion && b->max_depth_rec) {
		p->q.rules |= DEFER_IF_NO_BACK;
		p->q.back = (unsigned)(b->w->nprobs - b->max_depth_rec);
	}
	/* e2fsck's fatal error follows a kept inode only. */
	if (code == PR_1_BLOCK_ITERATE)
		p->q.rules |= DEFER_NOT_CLEARED;
	return 0;
}

/* ctx->fs_meta was filled before the workers started; they only read it. */
static int is_fs_metadata(void *arg, uint64_t blk)
{
	const struct block_walk *b = arg;

	return blk < b->w->ctx->geo->blocks_count && range_set_test(&b->w->ctx->fs_meta, blk);
}

static const struct extent_scan_ops extent_ops = { visit_block, extent_problem, is_fs_metadata };

/*
 * A pointer of an indirect map outside the file system.  As e2fsck: each
 * is asked about under one question per inode, and every twelfth is
 * preceded by the question whether to clear the whole inode, which stops
 * the walk and restarts the check (answer_problems() skips what was
 * recorded after it, and those after a "Suppress messages").  Extent
 * trees have no such count in e2fsck, nor here.
 */
/* Records first.. of the walk, met below an illegal indirect pointer of the same subtree: asked once it is cleared. */
static void asked_if_cleared(struct block_walk *b, size_t first)
{
	struct p1_worker *w = b->w;

	for (size_t r = first; r < w->nprobs; r++) {
		w->probs[r].q.rules |= DEFER_IF_YES_BACK;
		w->probs[r].q.back = (unsigned)(r + 1 - b->bad_map_rec);
	}
}

static int indirect_illegal(void *arg, const struct problem_ctx *pctx, const struct indirect_fix *fix)
{
	struct block_walk *b = arg;
	struct p1_worker *w = b->w;

	/* e2fsck compares an illegal pointer with the block before it, but does not follow it. */
	if (b->prev_end && pctx->blk != b->prev_end)
		b->fragmented = 1;
	/*
	 * In a map block on the metadata: counted, as e2fsck counts it, but
	 * neither reported nor cleared (the write would land on the metadata),
	 * and e2fsck leaves before its "Too many" question for it.
	 */
	if (fix->in_metadata) {
		b->illegal++;
		return 0;
	}
	/*
	 * Below an illegal pointer to an indirect block left in place, e2fsck's
	 * iterator gives up the rest of that pointer's subtree (and then fails,
	 * see check_blocks()): what comes after it there is asked only once the
	 * pointer was cleared.
	 */
	size_t first = w->nprobs;
	int after_bad_map = b->bad_map_rec && b->bad_map_top == fix->top && fix->top;
	if (++b->illegal % 12 == 0 && record(w, PR_1_TOO_MANY_BAD_BLOCKS, pctx, FIX_CLEAR_RESTART, 0, NULL))
		return -ENOMEM;
	/*
	 * A symlink's blocks past the first, and a directory's past its limit,
	 * are cleared as illegal ones are, under e2fsck's "too big" latch.
	 */
	uint32_t code = !fix->too_big ? PR_1_ILLEGAL_BLOCK_NUM : b->is_dir ? PR_1_TOOBIG_DIR : PR_1_TOOBIG_SYMLINK;
	if (record(w, code, pctx, FIX_IND_CLEAR, 0, pctx->str))
		return -ENOMEM;
	w->probs[w->nprobs - 1].ind = *fix;
	if (after_bad_map)
		asked_if_cleared(b, first);
	if (fix->level && !after_bad_map) {
		b->bad_map_rec = w->nprobs;
		b->bad_map_top = fix->top;
	}
	return 0;
}

/* An indirect block on the file system's metadata: e2fsck's message, and (unless -n) a restart after pass 2. */
static int indirect_collision(void *arg, const struct problem_ctx *pctx, int top)
{
	struct block_walk *b = arg;
	size_t first = b->w->nprobs;

	if (record(b->w, PR_1_CRITICAL_METADATA_COLLISION, pctx, FIX_RESTART_LATER, 0, NULL))
		return -ENOMEM;
	if (b->bad_map_rec && b->bad_map_top == top && top)
		asked_if_cleared(b, first);
	return 0;
}

/* Illegal pointers are asked about one by one, as e2fsck asks: the walk goes on past them. */
static const struct indirect_scan_ops indirect_ops = { visit_block, indirect_illegal, is_fs_metadata,
							indirect_collision, 0, 1, 1 };

/*
 * Fields e2fsck wants zero (i_faddr, the Hurd's i_frag and i_fsize, a
 * directory's i_size_high without largedir, i_file_acl_hi without 64bit,
 * i_blocks_hi without huge_file): found here, the inode is marked damaged
 * and pass 2 asks about them at an entry naming it, where a path is known.
 */
static int fields_to_zero(const struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint32_t os = ext4fs_sb(fs)->s_creator_os;

	if (in->i_faddr || (os == EXT4FS_OS_HURD && in->i_blocks_high))
		return 1;
	if (EXT4FS_ISDIR(in->i_mode) && in->i_size_high && !ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR))
		return 1;
	if (os != EXT4FS_OS_HURD && in->i_file_acl_high && !ext4fs_geom(fs)->is_64bit)
		return 1;
	return os != EXT4FS_OS_HURD && in->i_blocks_high && !ext4fs_has_ro_compat(fs, EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE);
}

/*
 * A device, fifo or socket that looks like one (ext4fs_inode_special_ok()):
 * e2fsck's questions about its flags and its size.  0 or -1.
 */
static int check_special(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };
	const uint32_t map_flags = EXT4FS_EXTENTS_FL | EXT4FS_INLINE_DATA_FL;
	const uint32_t frozen = EXT4FS_IMMUTABLE_FL | EXT4FS_APPEND_FL;

	if ((in->i_flags & map_flags) && record(w, PR_1_SPECIAL_EXTENTS_IDATA, &pctx, FIX_FLAGS_CLEAR, map_flags, NULL))
		return -1;
	if ((in->i_flags & frozen) && record(w, PR_1_SET_IMMUTABLE, &pctx, FIX_FLAGS_CLEAR, frozen, NULL))
		return -1;
	if (ext4fs_inode_size(in)) {
		if (record(w, PR_1_SET_NONZSIZE, &pctx, FIX_SIZE, 0, NULL))
			return -1;
		w->nonzero_size_ino = ino;
		w->nonzero_size_rec = w->nprobs - 1;
	}
	return 0;
}

/*
 * Whether the inode's extents flag means an extent tree: the feature is
 * set, or this worker met an inode whose yes to adding it is expected
 * (e2fsck walks every later inode as an extent file once it said yes).
 */
static int extents_fs(const struct p1_worker *w)
{
	return w->extents_assumed || ext4fs_has_incompat(w->fs, EXT4FS_FEATURE_INCOMPAT_EXTENTS);
}

/*
 * A symlink, by e2fsck's rules: an extents flag on one without blocks is
 * offered to be cleared; a sound one (judged as a yes would leave it) with
 * the immutable or append-only flag is offered to lose them.  An unsound
 * one is marked damaged, for pass 2's "Symlink ... is invalid" (pass 2
 * judges it again as it then is).  0 or -1.
 */
static int check_symlink(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };
	struct ext4fs_inode judged = *in;
	size_t flag_rec = 0;
	int flag_asked = 0;

	if (extents_fs(w) && (in->i_flags & EXT4FS_EXTENTS_FL) && !ext4fs_symlink_has_map(w->fs, in)) {
		if (record(w, PR_1_FAST_SYMLINK_EXTENT_FL, &pctx, FIX_FLAGS_CLEAR, EXT4FS_EXTENTS_FL, NULL))
			return -1;
		flag_rec = w->nprobs - 1;
		flag_asked = 1;
		judged.i_flags &= ~(uint32_t)EXT4FS_EXTENTS_FL;
	}
	if (!ext4fs_symlink_ok(w->fs, ino, in))
		bitmap_paged_set_range(&w->inode_bad, ino, 1);
	if (!ext4fs_symlink_ok(w->fs, ino, &judged))
		return 0;
	if (judged.i_flags & (EXT4FS_IMMUTABLE_FL | EXT4FS_APPEND_FL)) {
		if (record(w, PR_1_SET_IMMUTABLE, &pctx, FIX_FLAGS_CLEAR, EXT4FS_IMMUTABLE_FL | EXT4FS_APPEND_FL, NULL))
			return -1;
		if (flag_asked) {
			/* Sound only once the extents flag is gone: asked after that yes. */
			w->probs[w->nprobs - 1].q.rules |= DEFER_IF_YES_BACK;
			w->probs[w->nprobs - 1].q.back = (unsigned)(w->nprobs - 1 - flag_rec);
		}
	}
	return 0;
}

/* The imagic flag on a file system without the feature: offered to be cleared.  0 or -1. */
static int check_imagic(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };

	/* With the feature, e2fsck keeps a map of such inodes for pass 4; e4fsck does not handle imagic inodes yet. */
	if (!(in->i_flags & EXT4FS_IMAGIC_FL) || ext4fs_has_compat(w->fs, EXT4FS_FEATURE_COMPAT_IMAGIC_INODES))
		return 0;
	return record(w, PR_1_SET_IMAGIC, &pctx, FIX_FLAGS_CLEAR, EXT4FS_IMAGIC_FL, NULL);
}

/* The checks of the inode's kind; kinds that do not look like what their mode says are marked damaged.  0 or -1. */
static int check_kind(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	switch (in->i_mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFDIR: case EXT4FS_S_IFREG:
		return 0;
	case EXT4FS_S_IFCHR: case EXT4FS_S_IFBLK: case EXT4FS_S_IFIFO: case EXT4FS_S_IFSOCK:
		if (!ext4fs_inode_special_ok(in))
			break;
		return check_special(w, ino, in) ? -1 : 0;
	case EXT4FS_S_IFLNK:
		return check_symlink(w, ino, in);
	}
	bitmap_paged_set_range(&w->inode_bad, ino, 1);
	return 0;
}

/*
 * e2fsck's test of an index deeper than two levels on a file system
 * without largedir: the directory is too small for such a tree.  The
 * bounds are e2fsck 1.47's as its code computes them, in 32-bit unsigned
 * arithmetic, block size bits counted ten too many, so they are far below
 * the size of a real two-level tree (2 MiB with 1 KiB blocks, 8 MiB with
 * 4 KiB): smaller directories are asked about.
 */
static int too_small_for_depth(const struct ext4fs_geom *g, const struct ext4fs_inode *in)
{
	unsigned bits = 0;

	while ((1u << bits) < g->block_size)
		bits++;
	bits += 10;
	uint32_t per_block = 1u << (bits - 3);
	uint32_t blocks_squared = (per_block - 1) * (per_block - 2);
	uint32_t size_bound = blocks_squared << bits, sectors_bound = blocks_squared << (bits - 9);
	return ext4fs_inode_size(in) < size_bound && in->i_blocks_lo < sectors_bound;
}

/*
 * The index flag, judged as e2fsck's pass 1 judges it after the walk: on a
 * file that is no directory, without dir_index, then the root's block and
 * header, its hash, incompatible flags and depth.  Each question comes
 * only after a no to the one before (a yes clears the flag; a directory's
 * index is rebuilt by pass 3A); pass 2 judges a directory's tree.  An
 * inode kept indexed that needs largedir (more than two levels, or 2 GiB)
 * is counted for the question at the end of pass 1.  0 or -1.
 */
static int check_index(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in, uint64_t first_pblk)
{
	const struct ext4fs_geom *g = ext4fs_geom(w->fs);
	struct problem_ctx pctx = { .ino = ino };
	struct ext4fs_dx_root_info ri;
	unsigned char *buf;
	int asked = 0, rc = -1;

	if (!(in->i_flags & EXT4FS_INDEX_FL) || (EXT4FS_ISDIR(in->i_mode) && (in->i_flags & EXT4FS_INLINE_DATA_FL)))
		return 0;
#define ASK(code)                                                                                          \
	do {                                                                                               \
		if (record(w, (code), &pctx, FIX_FLAGS_CLEAR, EXT4FS_INDEX_FL, NULL))                      \
			goto out;                                                                          \
		w->probs[w->nprobs - 1].q.rules |= asked ? DEFER_AFTER_NO : 0;                             \
		asked = 1;                                                                                 \
	} while (0)
	buf = malloc(g->block_size);
	if (!buf) {
		worker_fail(w, "out of memory");
		return -1;
	}
	if (!EXT4FS_ISDIR(in->i_mode))
		ASK(PR_1_HTREE_NODIR);
	if (!ext4fs_has_compat(w->fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX))
		ASK(PR_1_HTREE_SET);
	/* As e2fsck: without a readable root a no leaves the index to pass 2, and nothing is counted. */
	if (!first_pblk || !ext4fs_block_ptr_valid(w->fs, first_pblk) || ext4fs_block_read(w->fs, first_pblk, buf)) {
		ASK(PR_1_HTREE_BADROOT);
		rc = 0;
		goto out;
	}
	ext4fs_dx_root_info_decode(buf, &ri);
	if (ri.reserved_zero || ri.info_length < 8)
		ASK(PR_1_HTREE_BADROOT);
	pctx.num = ri.hash_version;
	if (ri.hash_version != EXT4FS_HASH_LEGACY && ri.hash_version != EXT4FS_HASH_HALF_MD4 &&
	    ri.hash_version != EXT4FS_HASH_TEA && ri.hash_version != EXT4FS_HASH_SIPHASH)
		ASK(PR_1_HTREE_HASHV);
	/* Names with their hashes stored after them (encrypted and casefolded) are filed under SipHash alone. */
	int hash_in_entry = (in->i_flags & EXT4FS_ENCRYPT_FL) && (in->i_flags & EXT4FS_CASEFOLD_FL);
	if (hash_in_entry && ri.hash_version != EXT4FS_HASH_SIPHASH)
		ASK(PR_1_HTREE_NEEDS_SIPHASH);
	if (!hash_in_entry && ri.hash_version == EXT4FS_HASH_SIPHASH)
		ASK(PR_1_HTREE_CANNOT_SIPHASH);
	if (ri.unused_flags & 1)
		ASK(PR_1_HTREE_INCOMPAT);
	pctx.num = ri.indirect_levels;
	int largedir = ext4fs_has_incompat(w->fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR);
	/* Deeper than any tree e2fsck knows; or deeper than two levels without largedir, in a small directory. */
	if (ri.indirect_levels > 3)
		ASK(PR_1_HTREE_DEPTH);
	if (ri.indirect_levels > 2 && !largedir && too_small_for_depth(g, in))
		ASK(PR_1_HTREE_DEPTH);
	if (ri.indirect_levels > 2 || ext4fs_inode_size(in) > INT32_MAX) {
		pctx.num = 0;
		if (record(w, PR_2_FEATURE_LARGE_DIRS, &pctx, FIX_LARGE_DIR, 0, NULL))
			goto out;
		w->probs[w->nprobs - 1].q.rules |= DEFER_NOT_CLEARED | (asked ? DEFER_AFTER_NO : 0);
	}
	rc = 0;
out:
#undef ASK
	free(buf);
	return rc;
}

static int check_blocks(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in);

/* A device, fifo or socket: their size has a question of its own. */
static int special_file(uint16_t mode)
{
	switch (mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFCHR: case EXT4FS_S_IFBLK: case EXT4FS_S_IFIFO: case EXT4FS_S_IFSOCK:
		return 1;
	}
	return 0;
}

/*
 * The size e2fsck wants an inline directory to have: the 60 bytes of
 * i_block and its system.data value, wherever kept.  *unreadable: 1 when
 * the value cannot be read (the size wanted is then 0), -1 after a memory
 * failure.
 */
static uint64_t inline_dir_size(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in, int *unreadable)
{
	void *value = NULL;
	size_t len = 0;
	int err = ext4fs_xattr_get(w->fs, ino, in, "system.data", &value, &len);

	free(value);
	if (err == EXT4FS_E_NO_MEMORY) {
		worker_fail(w, "out of memory reading the system.data attribute");
		*unreadable = -1;
		return 0;
	}
	if (err && err != -ENODATA) {
		*unreadable = 1;
		return 0;
	}
	return EXT4FS_INLINE_IBLOCK_SIZE + (err ? 0 : len);
}

/*
 * The largest i_size e2fsck lets a file have: what twelve direct blocks and
 * single, double and triple indirect blocks address for a block map; for
 * an extent tree, 2^32 blocks less a byte.
 */
static uint64_t max_file_size(const struct p1_worker *w, const struct ext4fs_inode *in)
{
	uint64_t bs = w->ctx->geo->block_size, per = bs / 4;

	if (extents_fs(w) && (in->i_flags & EXT4FS_EXTENTS_FL))
		return (bs << 32) - 1;
	return (EXT4FS_NDIR_BLOCKS + per + per * per + per * per * per) * bs;
}

/* e2fsck's name of an inode's kind (its "%It"), into buf. */
static const char *kind_name(uint16_t mode, char *buf, size_t size)
{
	switch (mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFREG: return "regular file";
	case EXT4FS_S_IFDIR: return "directory";
	case EXT4FS_S_IFCHR: return "character device";
	case EXT4FS_S_IFBLK: return "block device";
	case EXT4FS_S_IFIFO: return "named pipe";
	case EXT4FS_S_IFLNK: return "symbolic link";
	case EXT4FS_S_IFSOCK: return "socket";
	}
	snprintf(buf, size, "unknown file type with mode 0%o", mode);
	return buf;
}

/*
 * Whether blk is claimed already: by the file system or by an inode this
 * worker checked before.  e2fsck also knows the claims of every inode
 * before this one; a block claimed in an earlier worker's range is not
 * seen here (only a map crossing another file's blocks can tell).
 */
static int claimed_before(const struct p1_worker *w, uint64_t blk)
{
	return bitmap_paged_test(&w->block_found, blk) || bitmap_paged_test(&w->ctx->block_found, blk);
}

/*
 * Where an inode whose mode says it is no directory would keep its first
 * directory block, by e2fsck's rule, or 0 when it cannot be a directory:
 * its first map word must be set; a block map's words must all be free,
 * unclaimed blocks; an extent tree must map block 0.  *not_device: the map
 * cannot be a device's (extents, or words past the fourth).
 */
static uint64_t dir_block_guess(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in, int *not_device)
{
	const struct ext4fs_geom *g = ext4fs_geom(w->fs);
	uint64_t pblk = 0;

	*not_device = 0;
	if (!ext4fs_blockmap_slot_get(in->i_block, 0))
		return 0;
	if ((in->i_flags & EXT4FS_INLINE_DATA_FL) && ext4fs_has_incompat(w->fs, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA))
		return 0;       /* e2fsck's look at inline entries is not made here yet */
	if ((in->i_flags & EXT4FS_EXTENTS_FL) && extents_fs(w)) {
		uint32_t run;
		int unwritten;
		*not_device = 1;
		if (ext4fs_extent_map(w->fs, ino, in, 0, &pblk, &run, &unwritten) ||
		    !ext4fs_block_ptr_valid(w->fs, pblk))
			return 0;
		return pblk;
	}
	for (unsigned i = 0; i < sizeof(in->i_block) / 4; i++) {
		uint32_t blk = ext4fs_blockmap_slot_get(in->i_block, i);
		if (!blk)
			continue;
		if (i >= 4)
			*not_device = 1;
		if (blk < g->first_data_block || blk >= g->blocks_count || claimed_before(w, blk))
			return 0;
	}
	return ext4fs_blockmap_slot_get(in->i_block, 0);
}

/* Whether block buf starts as directory ino's block 0 does: '.' naming ino, then '..', by e2fsck's measure. */
static int starts_like_dir(const struct p1_worker *w, uint32_t ino, const unsigned char *buf)
{
	uint32_t bs = ext4fs_geom(w->fs)->block_size;
	uint32_t len = ext4fs_dirent_rec_len(ext4fs_dirent_rec_len_raw(buf), bs);
	const unsigned char *dotdot;

	if (buf[EXT4FS_DIRENT_OFF_NAME_LEN] != 1 || buf[EXT4FS_DIRENT_OFF_NAME] != '.' ||
	    ext4fs_dirent_inode_get(buf) != ino || len < 12 || len % 4 || len >= bs - 12)
		return 0;
	dotdot = buf + len;
	len = ext4fs_dirent_rec_len(ext4fs_dirent_rec_len_raw(dotdot), bs);
	return dotdot[EXT4FS_DIRENT_OFF_NAME_LEN] == 2 && dotdot[EXT4FS_DIRENT_OFF_NAME] == '.' &&
	       dotdot[EXT4FS_DIRENT_OFF_NAME + 1] == '.' && len >= 12 && len % 4 == 0;
}

/*
 * e2fsck's test of an inode whose mode says device, fifo or socket (or
 * nothing it knows) but whose first block reads as a directory's first
 * block ('.' naming the inode, then '..'), when its map can hold such a
 * block.  A device with one link and a device's map is believed.  With
 * metadata_csum, the block must carry its right leaf checksum, as e2fsck
 * reads it.  1 or 0.
 */
static int looks_like_dir(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	uint16_t type = in->i_mode & EXT4FS_S_IFMT;
	int not_device, ok = 0;
	uint64_t pblk;
	unsigned char *buf;

	if (type == EXT4FS_S_IFDIR || type == EXT4FS_S_IFREG || type == EXT4FS_S_IFLNK)
		return 0;
	pblk = dir_block_guess(w, ino, in, &not_device);
	if (!pblk || ((type == EXT4FS_S_IFCHR || type == EXT4FS_S_IFBLK) && in->i_links_count == 1 && !not_device))
		return 0;
	buf = malloc(ext4fs_geom(w->fs)->block_size);
	if (buf && ext4fs_block_read(w->fs, pblk, buf) == 0) {
		uint32_t bs = ext4fs_geom(w->fs)->block_size;
		ok = starts_like_dir(w, ino, buf);
		if (ok && ext4fs_geom(w->fs)->has_metadata_csum)
			ok = ext4fs_dirent_tail_offset(w->fs, buf) >= 0 &&
			     ext4fs_dirent_csum(w->fs, ino, in->i_generation, buf, bs - EXT4FS_DIRENT_TAIL_SIZE) ==
				     ext4fs_dirent_tail_csum_get(buf, bs);
	}
	free(buf);
	return ok;
}

/* Records first.. of the inode: asked only as record treat was answered (rule DEFER_IF_YES_BACK or _NO_BACK). */
static void follow_answer(struct p1_worker *w, size_t first, size_t treat, unsigned rule)
{
	for (size_t i = first; i < w->nprobs; i++) {
		struct deferred *q = &w->probs[i].q;
		if (q->rules & (DEFER_IF_YES_BACK | DEFER_IF_NO_BACK))
			continue;       /* tied to a question of its own, itself tied to this one */
		q->rules |= rule;
		q->back = (unsigned)(i - treat);
	}
}

/*
 * An inode that looks like a directory though its mode says otherwise:
 * e2fsck offers to make it one.  Both answers are prepared: as what its
 * mode says, its kind's questions (and i_blocks, as a device's map holds
 * nothing) are asked only after a no; as a directory, its blocks are walked
 * and held back (claimed at the yes, FIX_MODE_DIR) and their questions asked
 * only after that yes.  It is listed as a directory until a no drops it.
 * 0 or -1.
 */
static int check_really_dir(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };
	struct ext4fs_inode as_dir = *in;
	char name[48];
	size_t treat, first;
	int rc;

	if (record(w, PR_1_TREAT_AS_DIRECTORY, &pctx, FIX_MODE_DIR, 0, kind_name(in->i_mode, name, sizeof(name))))
		return -1;
	treat = w->nprobs - 1;
	bitmap_paged_set_range(&w->inode_dir, ino, 1);
	if (add_dir(w, ino)) {
		worker_fail(w, "out of memory");
		return -1;
	}
	first = w->nprobs;
	if (check_kind(w, ino, in))
		return -1;
	uint64_t have = ext4fs_inode_blocks_raw(w->fs, in);
	if (have && !ext4fs_inode_file_acl(w->fs, in)) {
		pctx.num = 0;
		pctx.num2 = have;
		if (record(w, PR_1_BAD_I_BLOCKS, &pctx, FIX_BLOCKS, 0, NULL))
			return -1;
	}
	follow_answer(w, first, treat, DEFER_IF_NO_BACK);
	first = w->nprobs;
	as_dir.i_mode = (uint16_t)((in->i_mode & 07777) | EXT4FS_S_IFDIR);
	uint64_t fragmented = w->files_fragmented;
	w->hold_ino = ino;
	w->hold_answer = 1;
	rc = check_blocks(w, ino, &as_dir);
	w->hold_ino = 0;
	if (rc)
		return -1;
	/* Its blocks count as non-contiguous only once it is a directory (the yes). */
	w->probs[treat].held_frag[1] = (uint32_t)(w->files_fragmented - fragmented);
	w->files_fragmented = fragmented;
	follow_answer(w, first, treat, DEFER_IF_YES_BACK);
	return 0;
}

/* The blocks of one inode, and the size and block count that follow from them. */
static int check_blocks(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	const struct ext4fs_geom *g = w->ctx->geo;
	struct block_walk b = { .w = w, .ino = ino, .is_dir = EXT4FS_ISDIR(in->i_mode),
				.block_mapped = !(in->i_flags & EXT4FS_EXTENTS_FL),
				.resize_map = ino == EXT4FS_RESIZE_INO };
	cluster_walk_init(&b.cw, g->cluster_ratio);
	/* As e2fsck: a directory's blocks past 2 GiB (without largedir) are damage, not data. */
	uint64_t dir_limit = ext4fs_has_incompat(w->fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR) ? UINT32_MAX
										   : (1ULL << 31) / g->block_size;
	struct problem_ctx pctx = { .ino = ino };
	uint64_t acl = ext4fs_inode_file_acl(w->fs, in);
	/*
	 * Without the feature, e2fsck neither reads nor counts the block: pass 2
	 * offers to zero the field.  The bad blocks inode's list is walked for
	 * its blocks alone: e2fsck looks at no attribute block, size or block
	 * count of it.
	 */
	int bad_list = ino == EXT4FS_BAD_INO;
	if (bad_list && w->ctx->bad_list_walked)
		return 0;
	if (bad_list)
		acl = 0;
	int acl_valid = ext4fs_has_compat(w->fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR) && ext4fs_block_ptr_valid(w->fs, acl);
	int no_map = ino == w->no_map_ino;
	/* A symlink's map is walked by e2fsck's rule, which goes by i_blocks, not by its size. */
	int mapped = (EXT4FS_ISLNK(in->i_mode) ? ext4fs_symlink_has_map(w->fs, in) : fsck_inode_has_blocks(w->fs, ino, in)) &&
		     !no_map, err = 0;

	/* As e2fsck: the attribute block is looked at before the block map (once, when walked twice). */
	int acl_first = ino != w->acl_seen_ino;
	size_t ea_rec = w->nprobs;
	if (acl_valid && acl_first && record(w, PR_1_BAD_EA_BLOCK, &pctx, FIX_EA_CHECK, acl, NULL))
		return -1;

	int stopped = 0;            /* the extent walk gave up as e2fsck's does: nothing more about the blocks */
	size_t first_rec = w->nprobs;
	if (mapped && (in->i_flags & EXT4FS_EXTENTS_FL) && (extents_fs(w) || w->extent_root_ino == ino))
		err = fsck_extents_scan(w->fs, ino, in, dir_limit, &extent_ops, &b);
	else if (mapped)
		err = fsck_indirect_scan(w->fs, ino, in, &indirect_ops, &b);
	if (err == EXTENT_SCAN_STOPPED) {
		stopped = 1;
		err = 0;
	}
	/* The walks fail only for want of memory: what they cannot read on disk is a problem they report. */
	if (err) {
		worker_fail(w, "out of memory walking blocks");
		return -1;
	}
	/* An illegal pointer to an indirect block that stays: e2fsck's iterator fails, and it stops there. */
	/*
	 * e2fsck's iterator forgets the failure when it reads an indirect block
	 * afterwards, that is under a later pointer of the inode.
	 */
	if (b.bad_map_rec && b.map_top_seen <= b.bad_map_top) {
		struct problem_ctx iter = pctx;
		iter.errmsg = "Illegal indirect block found";     /* libext2fs's words for EXT2_ET_BAD_IND_BLOCK */
		if (record(w, PR_1_BLOCK_ITERATE, &iter, FIX_NONE, 0, NULL))
			return -1;
		w->probs[w->nprobs - 1].q.rules |= DEFER_IF_NO_BACK | DEFER_NOT_CLEARED;
		w->probs[w->nprobs - 1].q.back = (unsigned)(w->nprobs - b.bad_map_rec);
	}
	if (acl) {
		if (!acl_valid) {
			/* As e2fsck: pass 2 offers to clear it when an entry names the inode. */
			bitmap_paged_set_range(&w->inode_bad, ino, 1);
		} else {
			/* Claimed once for all its owners after the merge; each owner counts it. */
			if (acl_first && xattr_table_add(&w->xattrs, acl, 1, ino)) {
				worker_fail(w, "out of memory counting extended attribute blocks");
				return -1;
			}
			if (acl_first)
				w->probs[ea_rec].ea_counted = 1;
			b.blocks += g->cluster_ratio;
		}
	}
	/* As e2fsck: files bigger than a group cannot be contiguous, and the bad blocks list is no file. */
	if (b.fragmented && b.blocks / g->cluster_ratio < g->blocks_per_group && !bad_list)
		w->files_fragmented++;
	if (bad_list)
		return 0;
	if (stopped) {
		/*
		 * e2fsck counts no blocks for an inode whose walk failed: cleared
		 * (a yes), a directory is then also empty, and asked about as such.
		 * Kept (a no), its fatal error has ended the check.
		 */
		if (b.is_dir && !(in->i_flags & EXT4FS_INLINE_DATA_FL)) {
			size_t at = w->nprobs;
			while (at > first_rec && w->probs[at - 1].q.code != PR_1_EXTENT_ITERATE_FAILURE)
				at--;
			if (at > first_rec) {
				if (record(w, PR_1_ZERO_LENGTH_DIR, &pctx, FIX_CLEAR_INODE, 0, NULL))
					return -1;
				w->probs[w->nprobs - 1].q.rules |= DEFER_IF_YES_BACK;
				w->probs[w->nprobs - 1].q.back = (unsigned)(w->nprobs - at);
			}
		}
		return 0;
	}
	if (check_index(w, ino, in, b.first_pblk))
		return -1;
	int after_no = 0;
	if (!b.blocks && b.is_dir && !(in->i_flags & EXT4FS_INLINE_DATA_FL)) {
		/* Cleared when answered yes; the size questions follow only a no. */
		if (record(w, PR_1_ZERO_LENGTH_DIR, &pctx, FIX_CLEAR_INODE, 0, NULL))
			return -1;
		after_no = 1;
	}

	uint64_t size = ext4fs_inode_size(in), bs = g->block_size, want_size = b.last_lblk_plus1 * bs;
	int bad_size = 0;
	if (b.is_dir && (in->i_flags & EXT4FS_INLINE_DATA_FL)) {
		int unreadable = 0;
		want_size = inline_dir_size(w, ino, in, &unreadable);
		if (unreadable < 0)
			return -1;
		bad_size = unreadable || size != want_size;
	} else if (b.is_dir)
		bad_size = size != b.last_lblk_plus1 * bs;
	else if (EXT4FS_ISREG(in->i_mode) && b.last_init_plus1 && size < (b.last_init_plus1 - 1) * bs)
		bad_size = 1;
	else if (!b.is_dir && !EXT4FS_ISLNK(in->i_mode))
		bad_size = size > max_file_size(w, in);
	/*
	 * Every kind but directories and symlinks has its size bounded, devices
	 * too, as in e2fsck.  A device's own nonzero-size question came first,
	 * and its yes leaves nothing to ask.
	 */
	int after_special = special_file(in->i_mode) && w->nonzero_size_ino == ino;
	/* e2fsck asks about i_size before i_blocks. */
	if (bad_size || b.dir_collapse) {
		pctx.num = want_size;
		pctx.num2 = size;
		/* As e2fsck: an inline directory's size of 0 takes its inline data with it. */
		int drop = want_size == 0 && (in->i_flags & EXT4FS_INLINE_DATA_FL);
		if (record(w, PR_1_BAD_I_SIZE, &pctx, drop ? FIX_INLINE_DROP : FIX_SIZE, pctx.num, NULL))
			return -1;
		/* A directory's extents after a gap may move: its size is judged when asked. */
		w->probs[w->nprobs - 1].q.rules |= (after_no ? DEFER_NOT_CLEARED : 0) |
						   (b.dir_collapse ? DEFER_JUDGED : 0);
		if (after_special) {
			w->probs[w->nprobs - 1].q.rules |= DEFER_IF_NO_BACK;
			w->probs[w->nprobs - 1].q.back = (unsigned)(w->nprobs - 1 - w->nonzero_size_rec);
		}
	}

	/* i_blocks: 512-byte sectors, or file system blocks with huge_file's flag. */
	uint64_t unit = (in->i_flags & EXT4FS_HUGE_FILE_FL) ? 1 : g->block_size / 512;
	/* Values kept in EA inodes are charged to the owner's i_blocks, as the kernel charges them. */
	uint64_t ibody = w->ibody_value_blocks;
	uint64_t have = ext4fs_inode_blocks_raw(w->fs, in), want = (b.blocks + ibody) * unit;
	/*
	 * As e2fsck: every inode whose blocks are looked at gets its i_blocks
	 * checked, devices and fast symlinks too (their count is 0), but on
	 * the Hurd.  With an attribute block or EA-inode values, the answer is
	 * known only once their checks are answered.
	 */
	if (ext4fs_sb(w->fs)->s_creator_os != EXT4FS_OS_HURD && (have != want || acl_valid || ibody)) {
		pctx.num = want;
		pctx.num2 = have;
		if (record(w, PR_1_BAD_I_BLOCKS, &pctx, FIX_BLOCKS, b.blocks + ibody, NULL))
			return -1;
		struct p1_problem *p = &w->probs[w->nprobs - 1];
		p->q.rules |= (after_no ? DEFER_NOT_CLEARED : 0) | (acl_valid || ibody ? DEFER_JUDGED : 0);
		p->ea_counted = acl_valid;
		p->ea_block = acl_valid ? acl : 0;
		p->ibody_blocks = ibody;
		p->unit = (uint32_t)unit;
	}
	/*
	 * As e2fsck: the kernel allocates no clusters to a block-mapped file, so
	 * a file or directory with data blocks (i_blocks beyond its attribute
	 * block's cluster) must have an extent tree.
	 */
	uint64_t ea_share = acl ? (uint64_t)g->block_size * g->cluster_ratio / 512 : 0;
	if (g->cluster_ratio > 1 && (EXT4FS_ISREG(in->i_mode) || EXT4FS_ISDIR(in->i_mode)) && have - ea_share > 0 &&
	    (ino == EXT4FS_ROOT_INO || ino >= g->first_ino) &&
	    !(in->i_flags & (EXT4FS_EXTENTS_FL | EXT4FS_INLINE_DATA_FL))) {
		/* A yes converts it to an extent tree in pass 1E, as e2fsck's rebuild does. */
		if (record(w, PR_1_NO_BIGALLOC_BLOCKMAP_FILES, &pctx, FIX_EXTENT, 0, NULL))
			return -1;
		w->probs[w->nprobs - 1].ext = (struct extent_fix){ .kind = EXTENT_FIX_REBUILD };
		w->probs[w->nprobs - 1].q.rules |= after_no ? DEFER_NOT_CLEARED : 0;
	}

	return 0;
}

/* A problem of the inode's extra space (ibody.c), recorded like the others. */
static int ibody_problem(void *arg, const struct ibody_problem *ip)
{
	static const enum p1_fix kinds[] = {
		[IBODY_FIX_NONE] = FIX_NONE,
		[IBODY_FIX_EXTRA_ISIZE] = FIX_EXTRA_ISIZE,
		[IBODY_FIX_EA_CLEAR] = FIX_EA_IBODY_CLEAR,
		[IBODY_FIX_EA_INODE_FL] = FIX_EA_INODE_FL,
		[IBODY_FIX_EPOCH] = FIX_EPOCH,
	};
	struct p1_worker *w = arg;
	struct problem_ctx pctx = { .ino = w->cur_ino, .num = ip->num };

	if (record(w, ip->code, &pctx, kinds[ip->fix], ip->value, NULL))
		return -ENOMEM;
	w->probs[w->nprobs - 1].q.rules = ip->rules;
	w->probs[w->nprobs - 1].q.back = ip->back;
	return 0;
}

static int ibody_value_inode(void *arg, uint32_t inum, uint64_t blocks)
{
	struct p1_worker *w = arg;

	w->ibody_value_blocks += blocks;
	return xattr_table_add(&w->ea_inode_refs, inum, 1, w->cur_ino) ? -ENOMEM : 0;
}

static const struct ibody_ops ibody_ops = { ibody_problem, ibody_value_inode };

/*
 * The root, by e2fsck's rules.  One that is not a directory is offered to be
 * cleared.  Its dtime is a question of its own (old mke2fs set it), asked
 * before the one every inode in use gets.  Without links the root is not in
 * use, whatever its mode: pass 2 then finds the entries naming it and pass 3
 * offers a new root.  Returns 1 when it is to be checked as an inode in use,
 * 0 when not, -1.
 */
static int check_root(struct p1_worker *w, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = EXT4FS_ROOT_INO };

	if (!EXT4FS_ISDIR(in->i_mode) && record(w, PR_1_ROOT_NO_DIR, &pctx, FIX_CLEAR_ROOT, 0, NULL))
		return -1;
	if (in->i_dtime && in->i_links_count && record(w, PR_1_ROOT_DTIME, &pctx, FIX_DTIME, 0, NULL))
		return -1;
	return in->i_links_count != 0;
}

static int answer_expected(const struct p1_worker *w, uint32_t code);

/*
 * The orphan file's inode (s_orphan_file_inum), checked as e2fsck checks
 * it, as a reserved inode: always in use for pass 4 and 5.  With the
 * feature, a mode other than a regular file is offered to be made one and
 * its blocks are claimed, nothing else; without it, an inode holding
 * anything is offered to be zeroed (its blocks are then claimed only after
 * a no, when answering) and otherwise checked as any other.  Returns 1
 * when it is to be checked as an ordinary inode, 0 done, -1.
 */
static int check_orphan_file(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };

	if (bitmap_paged_set_range(&w->inode_used, ino, 1) < 0) {
		worker_fail(w, "out of memory");
		return -1;
	}
	if (ext4fs_has_compat(w->fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE)) {
		struct ext4fs_inode walked = *in;
		if (!EXT4FS_ISREG(in->i_mode)) {
			if (record(w, PR_1_ORPHAN_FILE_BAD_MODE, &pctx, FIX_MODE_REGULAR, 0, NULL))
				return -1;
			/* As e2fsck: made a regular file by a yes, it is walked as one. */
			if (answer_expected(w, PR_1_ORPHAN_FILE_BAD_MODE))
				walked.i_mode = EXT4FS_S_IFREG;
		}
		return check_blocks(w, ino, &walked) ? -1 : 0;
	}
	uint32_t first_block;
	memcpy(&first_block, in->i_block, sizeof(first_block));
	if (in->i_links_count || ext4fs_inode_blocks_raw(w->fs, in) || first_block) {
		if (record(w, PR_1_ORPHAN_FILE_NOT_CLEAR, &pctx, FIX_ZERO_INODE, 0, NULL))
			return -1;
		return 0;
	}
	return 1;
}

/*
 * The journal inode, as e2fsck checks it: when the superblock names it as
 * the journal, a mode other than a regular file is offered to be made one
 * and its blocks are claimed; otherwise an inode holding anything (links,
 * blocks, a map) is offered to be zeroed, its blocks claimed only after a
 * no.  0 done, -1.
 */
static int check_journal_inode(struct p1_worker *w, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = EXT4FS_JOURNAL_INO };
	uint32_t first_block;

	if (ext4fs_sb(w->fs)->s_journal_inum == EXT4FS_JOURNAL_INO) {
		if (!EXT4FS_ISREG(in->i_mode) &&
		    record(w, PR_1_JOURNAL_BAD_MODE, &pctx, FIX_MODE_REGULAR, 0, NULL))
			return -1;
		return check_blocks(w, EXT4FS_JOURNAL_INO, in) ? -1 : 0;
	}
	memcpy(&first_block, in->i_block, sizeof(first_block));
	if ((in->i_links_count || ext4fs_inode_blocks_raw(w->fs, in) || first_block) &&
	    record(w, PR_1_JOURNAL_INODE_NOT_CLEAR, &pctx, FIX_ZERO_INODE, 0, NULL))
		return -1;
	/* Kept with its links (a no), e2fsck goes on to walk it as a file in use. */
	if (in->i_links_count && !answer_expected(w, PR_1_JOURNAL_INODE_NOT_CLEAR))
		return check_blocks(w, EXT4FS_JOURNAL_INO, in) ? -1 : 0;
	return 0;
}

/*
 * e2fsck's rule for the mode of a reserved inode without a role of its own
 * (not the bad blocks, root, quota or journal inodes): the boot loader's may
 * be anything but a directory's, the resize inode's a regular file's or 0,
 * the others' only 0.
 */
static int reserved_mode_bad(const struct ext4fs_fs *fs, uint32_t ino, uint16_t mode)
{
	uint32_t prj = ext4fs_sb(fs)->s_prj_quota_inum;

	if (ino == EXT4FS_BAD_INO || ino == EXT4FS_USR_QUOTA_INO || ino == EXT4FS_GRP_QUOTA_INO || (prj && ino == prj))
		return 0;
	if (ino == EXT4FS_BOOT_LOADER_INO)
		return EXT4FS_ISDIR(mode);
	if (ino == EXT4FS_RESIZE_INO)
		return mode && !EXT4FS_ISREG(mode);
	return mode != 0;
}

/* Reserved inodes below s_first_ino but the root: returns 1 when checked as an ordinary inode, 0 done, -1. */
/*
 * Inodes 3 and 4 when the superblock does not name them as quota files
 * (no quota feature, or other numbers): as e2fsck, one holding anything
 * (links, blocks, a first block pointer) is offered to be zeroed, and its
 * map is never walked.  Returns 1 when ino is such an inode (done), 0 when
 * it is a quota file the superblock names, -1.
 */
static int check_unnamed_quota_inode(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	const struct ext4fs_super *sb = ext4fs_sb(w->fs);
	struct problem_ctx pctx = { .ino = ino };
	uint32_t first_block;

	if (ext4fs_has_ro_compat(w->fs, EXT4FS_FEATURE_RO_COMPAT_QUOTA) &&
	    (sb->s_usr_quota_inum == ino || sb->s_grp_quota_inum == ino || sb->s_prj_quota_inum == ino))
		return 0;
	memcpy(&first_block, in->i_block, sizeof(first_block));
	if ((in->i_links_count || ext4fs_inode_blocks_raw(w->fs, in) || first_block) &&
	    record(w, PR_1_QUOTA_INODE_NOT_CLEAR, &pctx, FIX_ZERO_ONLY, 0, NULL))
		return -1;
	return 1;
}

/*
 * e2fsck's test of the bad blocks inode before it reads the list: a mode,
 * an owner, links, inline data, an attribute block, a bad checksum or a
 * table block that looks like garbage (with or without checksums: the
 * scan's verdict on the record) mean the record is something else (the low
 * 16 bits of the owner and the low 32 of the block, as e2fsck's base record
 * holds them).
 */
static int bad_blocks_inode_invalid(const struct p1_worker *w, const struct ext4fs_inode *in, int csum_ok,
				    int garbage)
{
	return (!csum_ok && w->ctx->geo->has_metadata_csum) || garbage || in->i_mode || in->i_uid || in->i_gid ||
	       in->i_links_count || (in->i_flags & EXT4FS_INLINE_DATA_FL) || in->i_file_acl_lo;
}

static int check_reserved(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in, int csum_ok,
			  int garbage)
{
	struct problem_ctx pctx = { .ino = ino };
	struct ext4fs_inode walked = *in;

	if (ino == EXT4FS_BAD_INO && bad_blocks_inode_invalid(w, in, csum_ok, garbage)) {
		/* A yes zeroes the record: the list walked is then empty. */
		if (record(w, PR_1_INVALID_BAD_INODE, &pctx, FIX_ZERO_ONLY, 0, NULL))
			return -1;
		if (answer_expected(w, PR_1_INVALID_BAD_INODE)) {
			memset(&walked, 0, sizeof(walked));
			return check_blocks(w, ino, &walked);
		}
		/*
		 * Kept with its bad checksum, e2fsck's walk of the list reads the
		 * inode again, checksum and all, and the check ends there.
		 */
		if (!csum_ok && w->ctx->geo->has_metadata_csum) {
			struct problem_ctx iter = pctx;
			iter.errmsg = ext4fs_strerror(EXT4FS_E_INODE_CSUM);
			return record(w, PR_1_BLOCK_ITERATE, &iter, FIX_NONE, 0, NULL);
		}
	}

	if (ino == EXT4FS_USR_QUOTA_INO || ino == EXT4FS_GRP_QUOTA_INO) {
		int r = check_unnamed_quota_inode(w, ino, in);
		if (r)
			return r < 0 ? -1 : 0;
		/*
		 * A named quota file: its map is walked whatever its mode, as
		 * e2fsck walks it, by the mode the answer leaves (a yes makes it a
		 * regular file's; -n keeps it; an interactive no is walked as a yes).
		 */
		if (!EXT4FS_ISREG(in->i_mode) && record(w, PR_1_QUOTA_BAD_MODE, &pctx, FIX_MODE_REGULAR, 0, NULL))
			return -1;
		if (w->ctx->mode != MODE_NO)
			walked.i_mode = EXT4FS_S_IFREG;
		return check_blocks(w, ino, &walked) ? -1 : 0;
	}

	/*
	 * A yes zeroes the mode, and e2fsck then walks no map (a file of no
	 * kind has none): the walk here assumes that yes (after a no, e2fsck
	 * would walk a reserved directory as a directory; e4fsck does not).
	 */
	if (ino != EXT4FS_JOURNAL_INO && reserved_mode_bad(w->fs, ino, in->i_mode)) {
		if (record(w, PR_1_RESERVED_BAD_MODE, &pctx, FIX_MODE_ZERO, 0, NULL))
			return -1;
		walked.i_mode = 0;
	}
	if (ino == EXT4FS_JOURNAL_INO)
		return check_journal_inode(w, in);
	/* As e2fsck: every reserved inode's map and block count are judged, even one cleared or never used. */
	return check_blocks(w, ino, &walked);
}

/*
 * The extents flag on a file system without the feature, on an inode e2fsck
 * checks (in use, or the bad blocks, root or journal inode): e2fsck offers
 * to set the feature when i_block is an extent root, and (otherwise, or
 * after a no) to clear the inode.
 */
static int extents_flag_unsupported(const struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	if (!(in->i_flags & EXT4FS_EXTENTS_FL) || extents_fs(w))
		return 0;
	if (!in->i_links_count && ino != EXT4FS_BAD_INO && ino != EXT4FS_ROOT_INO && ino != EXT4FS_JOURNAL_INO)
		return 0;
	return 1;
}

/*
 * A regular file or directory in use whose i_block is an extent root but
 * which lacks the extents flag, on a file system with extents: e2fsck
 * offers to set it.  (The reserved inodes e2fsck also asks this of are
 * checked as before here.)
 */
static int extents_flag_missing(const struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	if ((in->i_flags & EXT4FS_EXTENTS_FL) || !extents_fs(w))
		return 0;
	if (!in->i_links_count || (ino < ext4fs_geom(w->fs)->first_ino && ino != EXT4FS_ROOT_INO))
		return 0;
	if (!EXT4FS_ISREG(in->i_mode) && !EXT4FS_ISDIR(in->i_mode))
		return 0;
	return ext4fs_extent_node_header_ok(in->i_block, sizeof(in->i_block));
}

/*
 * The answer the mode gives to code, where e2fsck goes on checking the inode
 * as that answer left it: the worker, which cannot ask, goes on with the
 * inode as it will be.  On a terminal the answer is taken to be yes (a no
 * there is still obeyed, but the later questions about that inode are those
 * of a yes).
 */
static int answer_expected(const struct p1_worker *w, uint32_t code)
{
	const struct problem *p = problem_find(code);

	if (!p || w->ctx->read_only || w->ctx->mode == MODE_NO)
		return 0;
	if (w->ctx->mode == MODE_PREEN)
		return (p->flags & (PF_PREEN_OK | PF_PREEN_NOMSG)) != 0;
	return 1;
}

/* e2fsck's test of i_block as a block map: every word names a block inside the file system (or none). */
static int could_be_block_map(const struct p1_worker *w, const struct ext4fs_inode *in)
{
	for (unsigned i = 0; i < sizeof(in->i_block) / 4; i++)
		if (ext4fs_blockmap_slot_get(in->i_block, i) >= w->ctx->geo->blocks_count)
			return 0;
	return 1;
}

/*
 * Record code for the inode, asked only after a no to the question before
 * it when after_no; *after_no is then set for the next one.  0 or -1.
 */
static int record_chain(struct p1_worker *w, uint32_t code, const struct problem_ctx *pctx, enum p1_fix fix,
			uint64_t value, int *after_no)
{
	if (record(w, code, pctx, fix, value, NULL))
		return -1;
	w->probs[w->nprobs - 1].q.rules |= *after_no ? DEFER_AFTER_NO : 0;
	*after_no = 1;
	return 0;
}

/* The first question of a chain expected to be answered yes: *in loses flags (*settled: one was). */
static void expect_flags_cleared(const struct p1_worker *w, uint32_t code, struct ext4fs_inode *in, uint32_t flags,
				 int *settled)
{
	if (*settled || !answer_expected(w, code))
		return;
	in->i_flags &= ~flags;
	*settled = 1;
}

/*
 * Both the inline-data and the extents flag on an inode in use (of a file
 * system with either feature): e2fsck's questions, from the most telling
 * sign down, each after a no to the one before (all are recorded, for a
 * terminal's answers).  *in becomes the inode as the expected answers leave
 * it (check_inode() keeps the questions after a yes that clears it from
 * being asked).  0 or -1.
 */
static int check_inline_and_extents(struct p1_worker *w, uint32_t ino, struct ext4fs_inode *in)
{
	const uint32_t both = EXT4FS_INLINE_DATA_FL | EXT4FS_EXTENTS_FL;
	const struct ext4fs_inode seen = *in;       /* each test follows a no: the inode as found */
	struct problem_ctx pctx = { .ino = ino };
	int after_no = 0, settled = 0;

	if ((seen.i_flags & both) != both || (!extents_fs(w) &&
					      !ext4fs_has_incompat(w->fs, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA)))
		return 0;
	uint16_t type = seen.i_mode & EXT4FS_S_IFMT;
	if (type == EXT4FS_S_IFCHR || type == EXT4FS_S_IFBLK || type == EXT4FS_S_IFIFO || type == EXT4FS_S_IFSOCK) {
		if (record(w, PR_1_SPECIAL_EXTENTS_IDATA, &pctx, FIX_FLAGS_CLEAR, both, NULL))
			return -1;
		expect_flags_cleared(w, PR_1_SPECIAL_EXTENTS_IDATA, in, both, &settled);
		return 0;
	}
	if (ext4fs_extent_node_header_ok(seen.i_block, sizeof(seen.i_block))) {
		if (record_chain(w, PR_1_CLEAR_INLINE_DATA_FOR_EXTENT, &pctx, FIX_FLAGS_CLEAR, EXT4FS_INLINE_DATA_FL,
				 &after_no))
			return -1;
		expect_flags_cleared(w, PR_1_CLEAR_INLINE_DATA_FOR_EXTENT, in, EXT4FS_INLINE_DATA_FL, &settled);
	}
	/* What fits in i_block and the rest of the record, computed as e2fsck computes it (unsigned). */
	uint64_t isize = w->ctx->geo->inode_size;
	uint64_t ea_room = isize > 128 ? isize - (128 + (uint64_t)seen.i_extra_isize) : 0;
	if (ext4fs_inode_size(&seen) < EXT4FS_INLINE_IBLOCK_SIZE + ea_room) {
		if (record_chain(w, PR_1_CLEAR_EXTENT_FOR_INLINE_DATA, &pctx, FIX_FLAGS_CLEAR, EXT4FS_EXTENTS_FL,
				 &after_no))
			return -1;
		expect_flags_cleared(w, PR_1_CLEAR_EXTENT_FOR_INLINE_DATA, in, EXT4FS_EXTENTS_FL, &settled);
	}
	if (could_be_block_map(w, &seen)) {
		if (record_chain(w, PR_1_CLEAR_EXTENT_INLINE_DATA_FLAGS, &pctx, FIX_FLAGS_CLEAR, both, &after_no))
			return -1;
		expect_flags_cleared(w, PR_1_CLEAR_EXTENT_INLINE_DATA_FLAGS, in, both, &settled);
	}
	/* Cleared, the inode is asked nothing more, whatever *in says. */
	return record_chain(w, PR_1_CLEAR_EXTENT_INLINE_DATA_INODE, &pctx, FIX_CLEAR_INODE, 0, &after_no);
}

/*
 * The casefold flag belongs on directories of a file system with the
 * feature: e2fsck offers to clear it on anything else, first because the
 * inode is no directory, then (after a no, or for a directory) because the
 * feature is off.  *in becomes the inode as the expected answers leave it.
 * 0 or -1.
 */
static int check_casefold_flag(struct p1_worker *w, uint32_t ino, struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };
	int after_no = 0, settled = 0;

	if (!(in->i_flags & EXT4FS_CASEFOLD_FL))
		return 0;
	if (!EXT4FS_ISDIR(in->i_mode)) {
		if (record_chain(w, PR_1_CASEFOLD_NONDIR, &pctx, FIX_FLAGS_CLEAR, EXT4FS_CASEFOLD_FL, &after_no))
			return -1;
		expect_flags_cleared(w, PR_1_CASEFOLD_NONDIR, in, EXT4FS_CASEFOLD_FL, &settled);
	}
	if (settled || ext4fs_has_incompat(w->fs, EXT4FS_FEATURE_INCOMPAT_CASEFOLD))
		return 0;
	/* Named by its path, which only the answering thread may look up. */
	if (record_chain(w, PR_1_CASEFOLD_FEATURE, &pctx, FIX_FLAGS_CLEAR, EXT4FS_CASEFOLD_FL, &after_no))
		return -1;
	expect_flags_cleared(w, PR_1_CASEFOLD_FEATURE, in, EXT4FS_CASEFOLD_FL, &settled);
	return 0;
}

/* Whether the inode's system.data attribute can be read, by e2fsck's measure: 1, 0, or -1 (an I/O or memory failure). */
static int inline_attr_found(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	void *value = NULL;
	size_t len;
	int err = ext4fs_xattr_get(w->fs, ino, in, "system.data", &value, &len);

	free(value);
	if (!err)
		return 1;
	/* A missing or damaged attribute (in the record or its block) is e2fsck's "not found". */
	if (err == -ENODATA || err == EXT4FS_E_XATTR_CORRUPT || err == EXT4FS_E_XATTR_CSUM ||
	    err == EXT4FS_E_INLINE_CORRUPT)
		return 0;
	worker_fail(w, "reading the system.data attribute failed");
	return -1;
}

/*
 * The inline-data flag on an inode in use past the reserved ones: without
 * the feature, e2fsck offers to set it (when the attribute is there) or else
 * to clear the inode; with it, the attribute must be there.  Whether the
 * feature is set is known only when asked (an earlier inode's yes sets it):
 * answer_prepare() decides which question is asked.  *in becomes the inode
 * as the expected answers leave it.  0 or -1.
 */
static int check_inline_flag(struct p1_worker *w, uint32_t ino, struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };

	if (!(in->i_flags & EXT4FS_INLINE_DATA_FL) || ino < w->ctx->geo->first_ino)
		return 0;
	int found = inline_attr_found(w, ino, in);
	if (found < 0)
		return -1;
	if (!ext4fs_has_incompat(w->fs, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA)) {
		if (found && record(w, PR_1_INLINE_DATA_FEATURE, &pctx, FIX_SET_INCOMPAT,
				    EXT4FS_FEATURE_INCOMPAT_INLINE_DATA, NULL))
			return -1;
		if (found && answer_expected(w, PR_1_INLINE_DATA_FEATURE))
			return 0;
		if (record(w, PR_1_INLINE_DATA_SET, &pctx, FIX_CLEAR_INODE, 0, NULL))
			return -1;
		if (found)
			return 0;
	}
	if (found)
		return 0;
	if (record(w, PR_1_INLINE_DATA_NO_ATTR, &pctx, FIX_INLINE_DROP, 0, NULL))
		return -1;
	if (answer_expected(w, PR_1_INLINE_DATA_NO_ATTR)) {
		ext4fs_inode_set_size(in, 0);
		in->i_flags &= ~(uint32_t)EXT4FS_INLINE_DATA_FL;
		memset(in->i_block, 0, sizeof(in->i_block));
	}
	return 0;
}

static int check_inode_in_use(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in,
			      const unsigned char *raw, int csum_ok, int garbage, int low_dtime);

/*
 * The encrypt flag: the inode's context is read and its policy listed for
 * pass 2 (encrypt.h).  Without a context e2fsck offers to clear the flag;
 * with a corrupt one, the inode, and a yes to that ends its check: 1 when
 * that yes is expected (nothing more of it is walked or claimed), else 0;
 * -1 on failure.
 */
static int check_encryption(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	struct problem_ctx pctx = { .ino = ino };

	if (!(in->i_flags & EXT4FS_ENCRYPT_FL))
		return 0;
	int verdict = fsck_encrypted_add(&w->encrypted, w->fs, ino, in);
	if (verdict < 0) {
		worker_fail(w, "out of memory listing encrypted inodes");
		return -1;
	}
	if (verdict == FSCK_ENCRYPTION_MISSING)
		return record(w, PR_1_MISSING_ENCRYPTION_XATTR, &pctx, FIX_FLAGS_CLEAR, EXT4FS_ENCRYPT_FL, NULL);
	if (verdict != FSCK_ENCRYPTION_CORRUPT)
		return 0;
	if (record(w, PR_1_CORRUPT_ENCRYPTION_XATTR, &pctx, FIX_CLEAR_INODE, 0, NULL))
		return -1;
	return answer_expected(w, PR_1_CORRUPT_ENCRYPTION_XATTR);
}
static int check_blocks_of(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in, size_t probs_before);

static int check_inode(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in, const unsigned char *raw,
		       int csum_ok, int garbage)
{
	const struct ext4fs_geom *g = w->ctx->geo;
	struct problem_ctx pctx = { .ino = ino };
	struct ext4fs_inode cleared;

	/*
	 * As e2fsck: an inode in use in a block of the table that looks like
	 * garbage is offered to be cleared first.  Cleared, it is checked as
	 * e2fsck goes on checking it: no longer in use, its record written
	 * afresh (a reserved inode without its map).
	 */
	if (garbage && in->i_links_count) {
		if (record(w, PR_1_INODE_IS_GARBAGE, &pctx, FIX_CLEAR_FULLY, 0, NULL))
			return -1;
		if (answer_expected(w, PR_1_INODE_IS_GARBAGE)) {
			cleared = *in;
			fsck_cleared_record(w->ctx, ino, &cleared);
			in = &cleared;
			csum_ok = 1;
			garbage = 0;
		}
	}
	fsck_stats_inode(&w->stats, w->fs, ino, in, w->files_fragmented);
	int low_dtime = 0;

	/*
	 * The orphan list links inodes through i_dtime, so a dtime below the
	 * inode count is a link of a list that was never finished.
	 */
	if ((ino >= g->first_ino || ino == EXT4FS_ROOT_INO) && in->i_dtime && w->low_dtime_check &&
	    in->i_dtime < g->inodes_count) {
		if (record(w, PR_1_LOW_DTIME, &pctx, in->i_links_count ? FIX_DTIME : FIX_DTIME_NOW, 0, NULL))
			return -1;
		low_dtime = 1;
	}
	/*
	 * e2fsck's questions about the inline-data flag come before the extents
	 * flag's, on inodes in use; the rest is checked on the inode as their
	 * expected answers leave it.
	 */
	struct ext4fs_inode fixed = *in;
	if ((in->i_links_count || ino < g->first_ino) && check_casefold_flag(w, ino, &fixed))
		return -1;
	size_t inline_rec = w->nprobs;
	if (in->i_links_count || ino < g->first_ino) {
		if (check_inline_and_extents(w, ino, &fixed) ||
		    (in->i_links_count && check_inline_flag(w, ino, &fixed)))
			return -1;
		in = &fixed;
	}
	size_t flag_rec = w->nprobs;
	int flag_unsupported = extents_flag_unsupported(w, ino, in), after_no = 0;
	if (flag_unsupported && ext4fs_extent_node_header_ok(in->i_block, sizeof(in->i_block))) {
		/*
		 * An extent root: e2fsck first offers the feature, whose yes makes
		 * this inode and every later one extent files (at the answer, a
		 * yes given for an earlier inode skips the question).
		 */
		if (record_chain(w, PR_1_EXTENT_FEATURE, &pctx, FIX_SET_INCOMPAT, EXT4FS_FEATURE_INCOMPAT_EXTENTS,
				 &after_no))
			return -1;
		if (answer_expected(w, PR_1_EXTENT_FEATURE)) {
			w->extents_assumed = 1;
			flag_unsupported = 0;
		}
		/* Kept (a no), e2fsck's block walk still follows the extent root: the blocks are claimed. */
		w->extent_root_ino = ino;
		flag_rec = w->nprobs;
	}
	if (flag_unsupported) {
		/*
		 * Kept (a no), e2fsck's walk of a map with the extents flag but no
		 * extent root finds no blocks: none are claimed, the size and
		 * block count questions follow from an empty map.
		 */
		if (record_chain(w, PR_1_EXTENTS_SET, &pctx, FIX_CLEAR_FULLY, 0, &after_no))
			return -1;
		flag_rec = w->nprobs - 1;
		if (w->extent_root_ino != ino)
			w->no_map_ino = ino;
	}
	if (!flag_unsupported && extents_flag_missing(w, ino, in)) {
		if (record(w, PR_1_UNSET_EXTENT_FL, &pctx, FIX_EXTENTS_FL, 0, NULL))
			return -1;
		w->unset_ino = ino;
		w->unset_rec = w->nprobs - 1;
	}
	int rc = check_inode_in_use(w, ino, in, raw, csum_ok, garbage, low_dtime);
	w->no_map_ino = 0;
	w->extent_root_ino = 0;
	w->unset_ino = 0;
	/* A yes to that question cleared the inode: e2fsck asks nothing more about it. */
	for (size_t i = flag_rec + 1; flag_unsupported && i < w->nprobs; i++)
		w->probs[i].q.rules |= DEFER_NOT_CLEARED;
	/* Nor after a yes that cleared it for its inline-data flag. */
	for (size_t i = inline_rec; i < flag_rec; i++)
		for (size_t k = i + 1; w->probs[i].fix == FIX_CLEAR_INODE && k < w->nprobs; k++)
			w->probs[k].q.rules |= DEFER_NOT_CLEARED;
	return rc;
}

/* The rest of check_inode(): the inode's role, its kind and its blocks.  0 or -1. */
static int check_inode_in_use(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in,
			      const unsigned char *raw, int csum_ok, int garbage, int low_dtime)
{
	const struct ext4fs_geom *g = w->ctx->geo;
	struct problem_ctx pctx = { .ino = ino };
	size_t probs_before = w->nprobs;

	if (ino == EXT4FS_ROOT_INO) {
		int rc = check_root(w, in);
		if (rc <= 0)
			return rc;
	} else if (ino < g->first_ino) {
		bitmap_paged_set_range(&w->inode_used, ino, 1);
		int rc = check_reserved(w, ino, in, csum_ok, garbage);
		if (rc < 0)
			return rc;
		/*
		 * As e2fsck: a reserved inode's checksum is judged last too (asked
		 * unless a repair rewrote it).  Not the bad blocks inode's, which
		 * "looks invalid" for it.  (A journal inode with a bad one stopped
		 * the journal step or was replaced there, unless no journal named it.)
		 */
		if (rc == 0 && !csum_ok && g->has_metadata_csum && ino != EXT4FS_BAD_INO &&
		    record(w, PR_1_INODE_ONLY_CSUM_INVALID, &pctx, FIX_CSUM, 0, NULL))
			return -1;
		if (rc == 0)
			return 0;
	} else if (ino == ext4fs_sb(w->fs)->s_orphan_file_inum && in->i_links_count) {
		/* As e2fsck: without links it is an unused inode like any other (below). */
		int rc = check_orphan_file(w, ino, in);
		if (rc <= 0)
			return rc;
	} else if (!in->i_links_count) {
		/* Not in use (pass 5 checks its bitmap bit); a deleted inode has its dtime set. */
		if (!in->i_dtime && in->i_mode && record(w, PR_1_ZERO_DTIME, &pctx, FIX_DTIME_NOW, 0, NULL))
			return -1;
		/* As e2fsck: its record's checksum is judged too (an all-zero record needs none). */
		if (!csum_ok && g->has_metadata_csum &&
		    record(w, PR_1_INODE_ONLY_CSUM_INVALID, &pctx, FIX_CSUM, 0, NULL))
			return -1;
		return 0;
	}
	if (bitmap_paged_set_range(&w->inode_used, ino, 1) < 0 ||
	    counter_paged_set(&w->links_disk, ino, in->i_links_count)) {
		worker_fail(w, "out of memory");
		return -1;
	}
	w->inodes_in_use++;
	if (in->i_dtime && (ino >= g->first_ino || ino == EXT4FS_ROOT_INO)) {
		if (record(w, PR_1_SET_DTIME, &pctx, FIX_DTIME, 0, NULL))
			return -1;
		w->probs[w->nprobs - 1].q.rules |= low_dtime ? DEFER_AFTER_NO : 0;
	}
	if (fields_to_zero(w->fs, in))
		bitmap_paged_set_range(&w->inode_bad, ino, 1);
	if (check_imagic(w, ino, in))
		return -1;
	if (EXT4FS_ISDIR(in->i_mode)) {
		bitmap_paged_set_range(&w->inode_dir, ino, 1);
		if (add_dir(w, ino)) {
			worker_fail(w, "out of memory");
			return -1;
		}
	} else if (EXT4FS_ISREG(in->i_mode)) {
		bitmap_paged_set_range(&w->inode_reg, ino, 1);
	}
	/* As e2fsck: the extra space after the dtime questions and before the blocks (reserved inodes: never). */
	w->cur_ino = ino;
	w->ibody_value_blocks = 0;
	if (fsck_ibody_check(w->fs, ino, in, raw, &ibody_ops, w)) {
		worker_fail(w, "out of memory checking in-inode extended attributes");
		return -1;
	}
	int cleared = check_encryption(w, ino, in);
	if (cleared)
		return cleared < 0 ? -1 : 0;
	if (ino != EXT4FS_ROOT_INO && looks_like_dir(w, ino, in)) {
		if (check_really_dir(w, ino, in))
			return -1;
	} else {
		if (check_kind(w, ino, in))
			return -1;
		if (check_blocks_of(w, ino, in, probs_before))
			return -1;
	}
	/* A bad checksum: asked last, and only when no repair rewrote the inode (see answer_problems). */
	if (!csum_ok && g->has_metadata_csum && record(w, PR_1_INODE_ONLY_CSUM_INVALID, &pctx, FIX_CSUM, 0, NULL))
		return -1;
	return 0;
}

/*
 * The blocks of an inode asked about a missing extents flag: walked both
 * ways, as e2fsck walks them after each answer, a block map for a no, an
 * extent tree for a yes.  Each walk's claims wait for its answer, and its
 * questions are asked only after it (the attribute block is looked at once).
 * 0 or -1.
 */
static int check_blocks_both_ways(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in)
{
	struct ext4fs_inode as_tree = *in;
	size_t q = w->unset_rec, first;
	uint64_t fragmented = w->files_fragmented;
	int rc;

	w->hold_ino = ino;
	w->hold_answer = 0;
	first = w->nprobs;
	rc = check_blocks(w, ino, in);
	follow_answer(w, first, q, DEFER_IF_NO_BACK);
	w->probs[q].held_frag[0] = (uint32_t)(w->files_fragmented - fragmented);
	w->files_fragmented = fragmented;
	if (!rc) {
		as_tree.i_flags |= EXT4FS_EXTENTS_FL;
		w->acl_seen_ino = ino;
		w->hold_answer = 1;
		first = w->nprobs;
		rc = check_blocks(w, ino, &as_tree);
		follow_answer(w, first, q, DEFER_IF_YES_BACK);
		w->probs[q].held_frag[1] = (uint32_t)(w->files_fragmented - fragmented);
		w->files_fragmented = fragmented;
	}
	w->hold_ino = 0;
	w->acl_seen_ino = 0;
	return rc;
}

/* The blocks of an inode in use, but the root's when it is no directory.  0 or -1. */
static int check_blocks_of(struct p1_worker *w, uint32_t ino, const struct ext4fs_inode *in, size_t probs_before)
{
	if (ino == w->unset_ino)
		return check_blocks_both_ways(w, ino, in);
	if (ino == EXT4FS_ROOT_INO && !EXT4FS_ISDIR(in->i_mode)) {
		/*
		 * A yes clears it and its blocks were never the root's to claim; after a
		 * no pass 3 stops.  So its map is not walked (e2fsck walks it after a no).
		 */
		for (size_t i = probs_before; i < w->nprobs; i++)
			w->probs[i].q.rules |= DEFER_NOT_CLEARED;
		return 0;
	}
	return check_blocks(w, ino, in);
}

static void *worker_run(void *arg)
{
	struct p1_worker *w = arg;
	struct ext4fs_scan *scan = NULL;
	struct ext4fs_inode in;
	const unsigned char *raw;
	uint32_t ino, progress_mark = w->first_group * w->ctx->geo->inodes_per_group;
	int csum_ok, r;

	if (w->first_group > w->last_group)
		return NULL;            /* more threads than ranges worth cutting */
	if (ext4fs_scan_open(w->fs, w->first_group, w->last_group,
			     EXT4FS_SCAN_SUSPECT_UNUSED | EXT4FS_SCAN_JUDGE_GARBAGE | EXT4FS_SCAN_TRUST_UNVERIFIED, &scan)) {
		worker_fail(w, ext4fs_errmsg(w->fs));
		return NULL;
	}
	while ((r = ext4fs_scan_next(scan, &ino, &in, &raw, &csum_ok)) == 1) {
		if (ino > w->ctx->geo->inodes_count)
			break;
		/* As e2fsck's scan: an inode in a block on the bad-block list is never read (badblocks.c marks it). */
		if (fsck_bad_list_holds_inode(w->ctx, ino))
			continue;
		if (check_inode(w, ino, &in, raw, csum_ok, ext4fs_scan_in_garbage(scan)))
			break;
		progress_pass1_inode(w->ctx, &progress_mark, ino);
	}
	if (r < 0)
		worker_fail(w, ext4fs_errmsg(w->fs));
	ext4fs_scan_close(scan);
	return NULL;
}

static int worker_init(struct e4fsck *ctx, struct p1_worker *w, uint32_t first, uint32_t last, int own_fs)
{
	const struct bitmap_paged *im = &ctx->inode_used, *bm = &ctx->block_found;

	memset(w, 0, sizeof(*w));
	w->ctx = ctx;
	w->first_group = first;
	w->last_group = last;
	/* As e2fsck: with a clock that was wrong when the file system was written, dtimes say nothing. */
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	uint32_t icount = sb->s_inodes_count;
	w->low_dtime_check = !((sb->s_wtime && sb->s_wtime < icount) || (sb->s_mtime && sb->s_mtime < icount) ||
			       (sb->s_mkfs_time && sb->s_mkfs_time < icount));
	if (bitmap_paged_init(&w->inode_used, im->p.limit, im->p.page_shift) ||
	    bitmap_paged_init(&w->inode_dir, im->p.limit, im->p.page_shift) ||
	    bitmap_paged_init(&w->inode_reg, im->p.limit, im->p.page_shift) ||
	    bitmap_paged_init(&w->inode_bad, im->p.limit, im->p.page_shift) ||
	    bitmap_paged_init(&w->block_found, bm->p.limit, bm->p.page_shift) ||
	    bitmap_paged_init(&w->block_dup, bm->p.limit, bm->p.page_shift) ||
	    counter_paged_init(&w->links_disk, ctx->links_disk.p.limit, ctx->links_disk.p.page_shift)) {
		fsck_fatal(ctx, "out of memory for pass 1");
		return -1;
	}
	if (!own_fs) {
		w->fs = ctx->fs;
		return 0;
	}
	struct ext4fs_open_opts opts = ctx->open_opts;
	char msg[512];
	opts.flags &= ~(unsigned)EXT4FS_OPEN_RW;
	if (ext4fs_open(ctx->path, &opts, &w->fs, msg, sizeof(msg))) {
		fsck_fatal(ctx, "%s while opening %s for a pass 1 thread", msg, ctx->path);
		return -1;
	}
	w->own_fs = 1;
	return 0;
}

static void worker_free(struct p1_worker *w)
{
	bitmap_paged_free(&w->inode_used);
	bitmap_paged_free(&w->inode_dir);
	bitmap_paged_free(&w->inode_reg);
	bitmap_paged_free(&w->inode_bad);
	bitmap_paged_free(&w->block_found);
	bitmap_paged_free(&w->block_dup);
	counter_paged_free(&w->links_disk);
	free(w->dirs);
	free(w->dblocks);
	xattr_table_free(&w->xattrs);
	xattr_table_free(&w->ea_inode_refs);
	fsck_encrypted_free(&w->encrypted);
	free(w->probs);
	free(w->held);
	if (w->own_fs)
		ext4fs_close(w->fs);
}

/* Append n items of size sz from src to *dst (count *dn, capacity *dcap).  0 or -1. */
static int append(void **dst, size_t *dn, size_t *dcap, const void *src, size_t n, size_t sz)
{
	if (*dn + n > *dcap) {
		void *grown = ext4fs_array_grow(*dst, dcap, *dn + n, sz, 256);
		if (!grown)
			return -1;
		*dst = grown;
	}
	if (n)
		memcpy((char *)*dst + *dn * sz, src, n * sz);
	*dn += n;
	return 0;
}

static int merge_worker(struct e4fsck *ctx, struct p1_worker *w)
{
	if (bitmap_paged_merge(&ctx->inode_used, &w->inode_used, NULL) < 0 ||
	    bitmap_paged_merge(&ctx->inode_dir, &w->inode_dir, NULL) < 0 ||
	    bitmap_paged_merge(&ctx->inode_reg, &w->inode_reg, NULL) < 0 ||
	    bitmap_paged_merge(&ctx->inode_bad, &w->inode_bad, NULL) < 0 ||
	    bitmap_paged_merge(&ctx->block_dup, &w->block_dup, NULL) < 0 ||
	    bitmap_paged_merge(&ctx->block_found, &w->block_found, &ctx->block_dup) < 0 ||
	    counter_paged_merge(&ctx->links_disk, &w->links_disk) ||
	    append((void **)&ctx->dirs, &ctx->ndirs, &ctx->capdirs, w->dirs, w->ndirs, sizeof(*w->dirs)) ||
	    append((void **)&ctx->dir_blocks, &ctx->ndir_blocks, &ctx->capdir_blocks, w->dblocks, w->ndblocks,
		   sizeof(*w->dblocks)) ||
	    xattr_table_merge(&ctx->xattrs, &w->xattrs) || xattr_table_merge(&ctx->ea_inode_refs, &w->ea_inode_refs) ||
	    fsck_encrypted_join(&ctx->encrypted, &w->encrypted)) {
		fsck_fatal(ctx, "out of memory merging pass 1's results");
		return -1;
	}
	ctx->inodes_in_use += w->inodes_in_use;
	ctx->files_fragmented += w->files_fragmented;
	fsck_stats_merge(&ctx->stats, &w->stats, w->files_fragmented);
	return 0;
}

/*
 * Which extent node a repair rewrites: the root in the inode, or a tree
 * block.  The root is told apart by a flag, not by a block number a
 * damaged index could also hold.
 */
struct node_key {
	int in_inode;
	uint64_t blk;               /* unless in_inode */
};

static struct node_key node_key(const struct extent_fix *f)
{
	return (struct node_key){ f->level == 0, f->level ? f->nodes[f->level] : 0 };
}

static int node_touched(const struct node_key *touched, unsigned n, const struct extent_fix *f)
{
	struct node_key k = node_key(f);

	for (unsigned i = 0; i < n; i++)
		if (touched[i].in_inode == k.in_inode && touched[i].blk == k.blk)
			return 1;
	return 0;
}

static int queue_rebuild(struct e4fsck *ctx, uint32_t ino)
{
	/* The list outlives a restart (see pass1e()): an inode asked about again is on it once. */
	for (size_t i = 0; i < ctx->nrebuild; i++)
		if (ctx->rebuild[i] == ino)
			return 0;
	if (append((void **)&ctx->rebuild, &ctx->nrebuild, &ctx->caprebuild, &ino, 1, sizeof(ino))) {
		fsck_fatal(ctx, "out of memory in pass 1");
		return -1;
	}
	return 0;
}

/*
 * Pass 1E: the extent trees a yes asked to be made smaller.  As in e2fsck,
 * the list is kept when the check restarts before pass 1E (a run's pass 1E
 * then also sees the inodes an earlier run queued, cleared ones included,
 * which still bring the pass's header) and emptied once done.
 */
static int pass1e(struct e4fsck *ctx)
{
	if (!ctx->nrebuild || ctx->aborted)
		return 0;
	fix_problem(ctx, PR_1E_PASS_HEADER, NULL);
	for (size_t i = 0; i < ctx->nrebuild; i++)
		if (bitmap_paged_test(&ctx->inode_used, ctx->rebuild[i]) && fsck_extent_rebuild(ctx, ctx->rebuild[i]))
			return -1;
	ctx->nrebuild = 0;
	return 0;
}

/* FIX_EA_INODE_FL: the inode holding an attribute's value gets its flag; 0 or -1 after fsck_fatal(). */
static int set_ea_inode_flag(struct e4fsck *ctx, uint32_t inum)
{
	unsigned char *raw = malloc(ctx->geo->inode_size);
	int err = raw ? ext4fs_inode_read_raw(ctx->fs, inum, raw) : -ENOMEM;

	if (!err) {
		uint32_t flags = ext4fs_inode_raw_get32(raw, EXT4FS_INODE_OFF_FLAGS);
		ext4fs_inode_raw_set32(raw, EXT4FS_INODE_OFF_FLAGS, flags | EXT4FS_EA_INODE_FL);
		err = ext4fs_inode_write_raw(ctx->fs, inum, raw);
	}
	free(raw);
	if (err) {
		fsck_fatal(ctx, "%s while setting the EA_INODE flag of inode %u", ext4fs_strerror(err), inum);
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/* e2fsck's yes to an inode that needs an incompat feature the superblock lacks (inline_data, extents). */
static int set_incompat_feature(struct e4fsck *ctx, uint32_t feature)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);

	sb.s_feature_incompat |= feature;
	return fsck_super_set(ctx, &sb, 1);
}

/* The in-inode repairs that edit the record's raw bytes (ibody.c), after the decoded fields were written. */
static int ibody_rewrite(struct e4fsck *ctx, uint32_t ino, uint32_t ea_off, int epoch)
{
	unsigned char *raw = malloc(ctx->geo->inode_size);
	int err = raw ? ext4fs_inode_read_raw(ctx->fs, ino, raw) : -ENOMEM;

	if (!err) {
		fsck_ibody_apply(raw, ctx->geo->inode_size, ea_off, epoch);
		err = ext4fs_inode_write_raw(ctx->fs, ino, raw);
	}
	free(raw);
	if (err) {
		fsck_fatal(ctx, "%s while writing inode %u", ext4fs_strerror(err), ino);
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/* Write inode ino's record as all zeros (with its checksum); 0 or -1 after fsck_fatal(). */
static int zero_inode(struct e4fsck *ctx, uint32_t ino)
{
	unsigned char *raw = calloc(1, ctx->geo->inode_size);
	int err = raw ? ext4fs_inode_write_raw(ctx->fs, ino, raw) : -ENOMEM;

	free(raw);
	if (err) {
		fsck_fatal(ctx, "%s while zeroing inode %u", ext4fs_strerror(err), ino);
		return -1;
	}
	counter_paged_set(&ctx->links_disk, ino, 0);
	/*
	 * A reserved inode (the journal's) stays in use.  e2fsck keeps the
	 * orphan file's marked in use too, and its next run then frees it in
	 * pass 5; this run lets pass 5 free it at once.
	 */
	if (ino >= ctx->geo->first_ino)
		bitmap_paged_clear_range(&ctx->inode_used, ino, 1);
	ctx->fs_changed = 1;
	return 0;
}

/*
 * An inode cleared for too many illegal blocks: remembered over all runs.
 * Cleared, it is no longer in use when the check starts again, so it can
 * never be asked about again; if it were, the clear did not hold and
 * restarting once more would go on for ever: stop instead.  0 or -1.
 */
static int note_restart_clear(struct e4fsck *ctx, uint32_t ino)
{
	for (size_t k = 0; k < ctx->nrestart_cleared; k++)
		if (ctx->restart_cleared[k] == ino) {
			fsck_fatal(ctx, "inode %u is still in use after it was cleared and the check restarted; "
				   "stopping rather than restarting again", ino);
			return -1;
		}
	if (append((void **)&ctx->restart_cleared, &ctx->nrestart_cleared, &ctx->caprestart_cleared, &ino, 1,
		   sizeof(ino))) {
		fsck_fatal(ctx, "out of memory in pass 1");
		return -1;
	}
	return 0;
}

/*
 * A map or tree block of inode ino at blk lies on the file system's
 * metadata, and the file system is writable: e2fsck then restarts after
 * pass 2, once passes 1B-1D have moved the block.  Listed, so that pass 2
 * can tell whether they did (a clone may be declined, or fail: a restart
 * would then meet the same blocks again).  0, or -1 after fsck_fatal().
 */
static int note_collision(struct e4fsck *ctx, uint32_t ino, uint64_t blk)
{
	ctx->restart_later = 1;
	for (size_t k = 0; k < ctx->ncollisions; k++)
		if (ctx->collisions[k].ino == ino && ctx->collisions[k].blk == blk)
			return 0;
	struct meta_collision c = { ino, blk };
	if (append((void **)&ctx->collisions, &ctx->ncollisions, &ctx->capcollisions, &c, 1, sizeof(c))) {
		fsck_fatal(ctx, "out of memory in pass 1");
		return -1;
	}
	return 0;
}

/* Directory ino's blocks [lblk, lblk + len) are now at new_lblk: pass 2's list follows. */
static void move_dir_blocks(struct e4fsck *ctx, uint32_t ino, uint64_t lblk, uint64_t len, uint64_t new_lblk)
{
	for (size_t i = 0; i < ctx->ndir_blocks; i++) {
		struct dir_block *db = &ctx->dir_blocks[i];
		if (db->ino == ino && db->lblk >= lblk && db->lblk < lblk + len)
			db->lblk = new_lblk + (db->lblk - lblk);
	}
}

/*
 * One extent of a directory, from its first gap on (EXTENT_FIX_COLLAPSE):
 * when it starts past the block expected next, e2fsck's "should be at
 * block" is asked, and a yes moves it down there.  *next is the block
 * expected next (UINT64_MAX before the first such extent, whose record
 * carries it); *in is read once for the inode's repairs.  Returns 1 when
 * *in changed, 0 when not, -1 after fsck_fatal().
 */
static int answer_collapse(struct e4fsck *ctx, uint32_t ino, struct p1_problem *p, struct ext4fs_inode *in,
			   int *have_inode, uint64_t *next)
{
	uint64_t lblk = p->ext.entry.lblk, len = p->ext.entry.len;
	int r = 0;

	if (*next == UINT64_MAX)
		*next = p->value;
	if (lblk > *next) {
		/* With bigalloc, as e2fsck: the next logical cluster, at the block's offset in its physical one. */
		uint64_t m = (uint64_t)ctx->geo->cluster_ratio - 1, to = ((*next + m) & ~m) | (p->ext.entry.pblk & m);
		p->q.pctx.blk = lblk;
		p->q.pctx.blk2 = to;
		p->q.answered_yes = fix_problem(ctx, PR_1_COLLAPSE_DBLOCK, &p->q.pctx);
		if (p->q.answered_yes) {
			int err = *have_inode ? 0 : ext4fs_inode_read(ctx->fs, ino, in);
			if (err) {
				fsck_fatal(ctx, "%s while reading inode %u to repair it: %s", ext4fs_strerror(err), ino,
					   ext4fs_errmsg(ctx->fs));
				return -1;
			}
			*have_inode = 1;
			p->ext.new_lblk = (uint32_t)to;
			r = fsck_extent_repair(ctx, ino, in, &p->ext);
			if (r < 0)
				return -1;
			move_dir_blocks(ctx, ino, lblk, len, to);
			ctx->fs_changed = 1;
			lblk = to;
		}
	}
	*next = lblk + len;
	return r;
}

/* The answering thread's state for the inode whose problems are being answered (answer_problems()). */
struct p1_answer {
	struct e4fsck *ctx;
	const struct p1_worker *w;  /* whose records these are */
	struct ext4fs_inode in;     /* read at the first repair that needs it, written at the inode's end */
	int have_inode;
	int changed;                /* in changed */
	int ea_dropped;             /* the inode let go of its attribute block */
	int ea_reached;             /* its FIX_EA_CHECK record came to be answered */
	int epoch;                  /* FIX_EPOCH answered yes */
	int dtime_fixed;            /* FIX_DTIME answered yes */
	int quiet;                  /* "Suppress messages? yes": no more "Too many" questions for this inode */
	uint32_t ea_off;            /* FIX_EA_IBODY_CLEAR answered yes: where the magic is zeroed */
	uint64_t dir_next;          /* a directory's extents being moved: the block expected next */
	struct node_key touched[16]; /* extent nodes rewritten: their checksums are right now */
	unsigned ntouched;
};

static void answer_begin(void *arg, const struct deferred_inode *st)
{
	struct p1_answer *a = arg;
	struct e4fsck *ctx = a->ctx;
	const struct p1_worker *w = a->w;

	memset(a, 0, sizeof(*a));
	a->ctx = ctx;
	a->w = w;
	a->dir_next = UINT64_MAX;
}

/* Pass 1's own reasons to pass a question over, and the records it handles itself. */
static int answer_prepare(void *arg, struct deferred_inode *st, struct deferred *d)
{
	struct p1_answer *a = arg;
	struct e4fsck *ctx = a->ctx;
	struct p1_problem *p = (struct p1_problem *)d;
	uint32_t ino = st->ino;

	if (p->fix == FIX_CLEAR_RESTART && a->quiet)
		return DEFER_SKIP;
	/* The root's dtime is asked about twice, as in e2fsck, the second time only while still set. */
	if (p->fix == FIX_DTIME && a->dtime_fixed)
		return DEFER_SKIP;
	if (p->fix == FIX_EXTENT && p->ext.kind == EXTENT_FIX_CSUM && node_touched(a->touched, a->ntouched, &p->ext))
		return DEFER_SKIP;
	/* As e2fsck: a repair that rewrote the record already gave it its checksum. */
	if (p->fix == FIX_CSUM && (a->changed || st->cleared || a->ea_off || a->epoch))
		return DEFER_SKIP;
	if (p->fix == FIX_LARGE_DIR) {
		ctx->large_dirs++;
		return DEFER_DONE;
	}
	if (p->fix == FIX_EA_CHECK) {
		a->ea_reached = 1;
		int keep = xattr_block_check(ctx, ino, p->value);
		if (keep < 0)
			return -1;
		if (keep)
			return DEFER_DONE;
		/* Let go of the block, as e2fsck's "Clear" does. */
		struct xattr_ref *r = xattr_table_find(&ctx->xattrs, p->value);
		if (r && r->refs)
			r->refs--;
		if (!a->have_inode && ext4fs_inode_read(ctx->fs, ino, &a->in)) {
			fsck_fatal(ctx, "%s while reading inode %u to repair it", ext4fs_errmsg(ctx->fs), ino);
			return -1;
		}
		a->have_inode = 1;
		a->in.i_file_acl_lo = 0;
		a->in.i_file_acl_high = 0;
		a->ea_dropped = 1;
		a->changed = 1;
		return DEFER_DONE;
	}
	/* An earlier inode's yes may have set the feature since: e2fsck then asks about the attribute instead. */
	int inline_fs = ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA);
	if ((p->q.code == PR_1_INLINE_DATA_FEATURE || p->q.code == PR_1_INLINE_DATA_SET) && inline_fs)
		return DEFER_SKIP;
	if (p->q.code == PR_1_INLINE_DATA_NO_ATTR && !inline_fs)
		return DEFER_SKIP;
	if (p->q.code == PR_1_EXTENT_FEATURE && ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_EXTENTS))
		return DEFER_SKIP;
	if (p->fix == FIX_RESTART_LATER) {
		/* A message only: whatever follows is asked as if it had not been said. */
		fix_problem(ctx, p->q.code, &p->q.pctx);
		if (!ctx->read_only && note_collision(ctx, ino, p->q.pctx.blk))
			return -1;
		return DEFER_DONE;
	}
	if (p->fix == FIX_EXTENT && p->ext.kind == EXTENT_FIX_COLLAPSE) {
		int r = answer_collapse(ctx, ino, p, &a->in, &a->have_inode, &a->dir_next);
		if (r < 0)
			return -1;
		a->changed |= r;
		return DEFER_DONE;
	}
	if (p->q.code == PR_1_CASEFOLD_FEATURE) {
		char *path = fsck_path(ctx, ino, 0);
		snprintf(p->detail, sizeof(p->detail), "%s", path ? path : "???");
		free(path);
		p->q.pctx.path = p->detail;
		return DEFER_ASK;
	}
	if (p->q.code == PR_1_RESERVED_BAD_MODE) {
		/* Named as e2fsck names reserved inodes ("<Reserved inode 9>"); only this thread may look paths up. */
		char *path = fsck_path(ctx, 0, ino);
		snprintf(p->detail, sizeof(p->detail), "%s", path ? path : "???");
		free(path);
		p->q.pctx.path = p->detail;
		return DEFER_ASK;
	}
	if (p->detail[0])
		p->q.pctx.str = p->detail;
	return DEFER_ASK;
}

/* DEFER_JUDGED: a directory's i_size after its extents moved, an i_blocks that counts attributes. */
static int answer_judge(void *arg, struct deferred_inode *st, struct deferred *d)
{
	struct p1_answer *a = arg;
	struct p1_problem *p = (struct p1_problem *)d;

	if (p->fix == FIX_SIZE) {
		/* Judged now that the moves are known: e2fsck's i_size follows the last block. */
		uint64_t want = a->dir_next * a->ctx->geo->block_size;
		if (want == p->q.pctx.num2)
			return 0;
		p->q.pctx.num = p->value = want;
		return 1;
	}
	/* FIX_BLOCKS, judged now: the attribute block and the in-inode attributes may have gone. */
	uint64_t blocks = p->value;
	if (p->ea_counted && a->ea_dropped) {
		blocks -= a->ctx->geo->cluster_ratio;
	} else if (p->ea_counted) {
		const struct xattr_ref *r = xattr_table_find(&a->ctx->xattrs, p->ea_block);
		if (r && r->checked)
			blocks += r->value_blocks;
	}
	if (a->ea_off)
		blocks -= p->ibody_blocks;
	if (blocks * p->unit == p->q.pctx.num2)
		return 0;
	p->value = blocks;
	p->q.pctx.num = blocks * p->unit;
	return 1;
}

/*
 * The blocks of ino its walk assuming answer held back: claimed, and a
 * directory's listed for pass 2, now that the answer is given; the files
 * that walk found non-contiguous count.  0, or -1 after fsck_fatal().
 */
static int claim_held(struct p1_answer *a, uint32_t ino, int answer, const struct p1_problem *p)
{
	for (size_t i = 0; i < a->w->nheld; i++) {
		const struct held_run *h = &a->w->held[i];
		if (h->ino != ino || h->answer != answer)
			continue;
		int err = h->dir ? 0 : claim_in(a->ctx->geo, &a->ctx->block_found, &a->ctx->block_dup, h->blk, h->n);
		for (uint64_t k = 0; h->dir && !err && k < h->n; k++)
			err = fsck_add_dir_block(a->ctx, ino, (uint32_t)(h->lblk + k), h->blk + k);
		if (err) {
			fsck_fatal(a->ctx, "out of memory in pass 1");
			return -1;
		}
	}
	a->ctx->files_fragmented += p->held_frag[answer];
	return 0;
}

/* The repair of a question answered (yes or, for a few, no). */
static int answer_repair(void *arg, struct deferred_inode *st, struct deferred *d, int yes)
{
	struct p1_answer *a = arg;
	struct e4fsck *ctx = a->ctx;
	struct p1_problem *p = (struct p1_problem *)d;
	uint32_t ino = st->ino;

	if (p->fix == FIX_ZERO_INODE || p->fix == FIX_ZERO_ONLY) {
		/* Kept (no): it holds its blocks, but for a quota inode; zeroed (yes): they are left for pass 5 to free. */
		if (yes ? zero_inode(ctx, ino) : p->fix == FIX_ZERO_INODE && fsck_claim_blocks(ctx, ino))
			return -1;
		/* Zeroed, what earlier answers changed in the record (a garbage inode cleared) is not written over it. */
		if (yes) {
			a->have_inode = 0;
			a->changed = 0;
			a->ea_off = 0;
			a->epoch = 0;
		}
		st->cleared = yes;
		return 0;
	}
	if (p->fix == FIX_CLEAR_RESTART && !yes) {
		/* Kept: e2fsck then offers to go on about its illegal blocks without a word. */
		if (fix_problem(ctx, PR_1_SUPPRESS_MESSAGES, &p->q.pctx)) {
			a->quiet = 1;
			problem_latch_quiet(ctx, PR_1_INODE_BLOCK_LATCH);
		}
		return 0;
	}
	if (p->fix == FIX_MODE_DIR || p->fix == FIX_EXTENTS_FL) {
		if (claim_held(a, ino, yes, p))
			return -1;
		/* Not a directory after all: pass 2 drops it (drop_cleared_dirs()). */
		if (p->fix == FIX_MODE_DIR && !yes)
			bitmap_paged_clear_range(&ctx->inode_dir, ino, 1);
	}
	/* As e2fsck, quota usage follows the blocks counted, not a count left wrong. */
	if (!yes && p->fix == FIX_BLOCKS && ino &&
	    fsck_quota_keep_blocks(ctx, ino, p->value * ctx->geo->block_size))
		return -1;
	if (!yes || p->fix == FIX_NONE || !ino)
		return 0;
	if (p->fix == FIX_EA_IBODY_CLEAR || p->fix == FIX_EPOCH) {
		/* Raw bytes of the record: edited once the decoded fields are written. */
		if (p->fix == FIX_EPOCH)
			a->epoch = 1;
		else
			a->ea_off = (uint32_t)p->value;
		return 0;
	}
	if (p->fix == FIX_EA_INODE_FL)
		return set_ea_inode_flag(ctx, (uint32_t)p->value) ? -1 : 0;
	if (p->fix == FIX_SET_INCOMPAT)
		return set_incompat_feature(ctx, (uint32_t)p->value);
	if (!a->have_inode) {
		int err = ext4fs_inode_read(ctx->fs, ino, &a->in);
		if (err) {
			fsck_fatal(ctx, "%s while reading inode %u to repair it: %s",
				   ext4fs_strerror(err), ino, ext4fs_errmsg(ctx->fs));
			return -1;
		}
		a->have_inode = 1;
	}
		switch (p->fix) {
		case FIX_DTIME:
			a->in.i_dtime = 0;
			a->dtime_fixed = 1;
			break;
		case FIX_DTIME_NOW: {
			int64_t sec;
			uint32_t nsec;
			ext4fs_now(ctx->fs, &sec, &nsec);
			a->in.i_dtime = (uint32_t)sec;
			break;
		}
		case FIX_SIZE: ext4fs_inode_set_size(&a->in, p->value); break;
		case FIX_EXTRA_ISIZE: a->in.i_extra_isize = (uint16_t)p->value; break;
		case FIX_BLOCKS: {
			/* As e2fsck: the count is stored whole (a remainder of the old one must not survive). */
			uint64_t unit = (a->in.i_flags & EXT4FS_HUGE_FILE_FL) ? 1 : ctx->geo->block_size / 512;
			uint64_t raw = p->value * unit;
			a->in.i_blocks_lo = (uint32_t)raw;
			a->in.i_blocks_high = (uint16_t)(raw >> 32);
			break;
		}
		case FIX_EXTENT: {
			if (p->ext.kind == EXTENT_FIX_REBUILD) {
				/* Unlike the suggestions, a yes to a tree too deep is a repair (e2fsck exits 1). */
				if (p->q.code == PR_1_EXTENT_BAD_MAX_DEPTH)
					ctx->fs_changed = 1;
				return queue_rebuild(ctx, ino) ? -1 : 0;
			}
			int r = fsck_extent_repair(ctx, ino, &a->in, &p->ext);
			if (r < 0)
				return -1;
			if (a->ntouched < sizeof(a->touched) / sizeof(a->touched[0]))
				a->touched[a->ntouched++] = node_key(&p->ext);
			/* A tree block rewritten alone does not count as a change, as in e2fsck. */
			if (!r)
				return 0;
			break;
		}
		case FIX_CLEAR_INODE:
			fsck_clear_inode(ctx, ino, &a->in);
			st->cleared = 1;
			/* e2fsck's statistics stop counting a directory cleared for being empty (only then). */
			if (p->q.code == PR_1_ZERO_LENGTH_DIR && ctx->stats.directories)
				ctx->stats.directories--;
			break;
		case FIX_MODE_REGULAR:
			a->in.i_mode = EXT4FS_S_IFREG;
			break;
		case FIX_CLEAR_FULLY:
			/* As e2fsck: a reserved inode also loses its map, the bad blocks inode stays in use. */
			fsck_clear_inode(ctx, ino, &a->in);
			if (ino < ctx->geo->first_ino)
				memset(a->in.i_block, 0, sizeof(a->in.i_block));
			/*
			 * The bad blocks inode stays in use; so does any other reserved
			 * inode but the root cleared as garbage, which e2fsck goes on
			 * checking as a reserved inode (marked in use) after the clear.
			 */
			if (ino == EXT4FS_BAD_INO || (p->q.code == PR_1_INODE_IS_GARBAGE && ino < ctx->geo->first_ino &&
						      ino != EXT4FS_ROOT_INO)) {
				if (!bitmap_paged_test(&ctx->inode_used, ino))
					ctx->inodes_in_use++;
				bitmap_paged_set_range(&ctx->inode_used, ino, 1);
			}
			st->cleared = 1;
			break;
		case FIX_EXTENTS_FL:
			a->in.i_flags |= EXT4FS_EXTENTS_FL;
			break;
		case FIX_MODE_DIR:
			a->in.i_mode = (uint16_t)((a->in.i_mode & 07777) | EXT4FS_S_IFDIR);
			break;
		case FIX_MODE_ZERO:
			a->in.i_mode = 0;
			break;
		case FIX_FLAGS_CLEAR:
			a->in.i_flags &= ~(uint32_t)p->value;
			break;
		case FIX_INLINE_DROP:
			ext4fs_inode_set_size(&a->in, 0);
			a->in.i_flags &= ~(uint32_t)EXT4FS_INLINE_DATA_FL;
			memset(a->in.i_block, 0, sizeof(a->in.i_block));
			break;
		case FIX_CLEAR_ROOT:
			/* As e2fsck does for reserved inodes: a map left behind would be walked again. */
			fsck_clear_inode(ctx, ino, &a->in);
			memset(a->in.i_block, 0, sizeof(a->in.i_block));
			st->cleared = 1;
			break;
		case FIX_CLEAR_RESTART:
			/*
			 * Its blocks were partly claimed already, as in e2fsck's walk, which
			 * stops here: the whole check is run again once pass 1 has asked
			 * about every other inode (check.c).  The pointers cleared so far
			 * are zero in in; a reserved inode, checked whatever its links say,
			 * also loses its map.
			 */
			if (note_restart_clear(ctx, ino))
				return -1;
			fsck_clear_inode(ctx, ino, &a->in);
			if (ino < ctx->geo->first_ino)
				memset(a->in.i_block, 0, sizeof(a->in.i_block));
			st->cleared = 1;
			st->stopped = 1;
			ctx->restart = RESTART_CLEARED;
			break;
		case FIX_ITERATE_CLEAR:
			/*
			 * As e2fsck: the inode's blocks were partly claimed, so the check
			 * starts again, but the questions recorded after this one (the
			 * tree suggestion, an empty directory) are still asked.
			 */
			if (note_restart_clear(ctx, ino))
				return -1;
			fsck_clear_inode(ctx, ino, &a->in);
			a->in.i_blocks_lo = 0;
			st->cleared = 1;
			ctx->restart = RESTART_CLEARED;
			break;
		case FIX_IND_CLEAR: {
			int r = fsck_indirect_clear(ctx, &a->in, &p->ind);
			if (r < 0)
				return -1;
			if (!r)
				return 0;
			/* As e2fsck: a directory's block cleared stays listed, a hole (block 0) for pass 2 to offer. */
			if (EXT4FS_ISDIR(a->in.i_mode) && !p->ind.level && p->ind.lblk <= UINT32_MAX &&
			    fsck_add_dir_block(ctx, ino, (uint32_t)p->ind.lblk, 0)) {
				fsck_fatal(ctx, "out of memory in pass 1");
				return -1;
			}
			break;
		}
		case FIX_CSUM: case FIX_NONE: case FIX_EA_CHECK: case FIX_EA_IBODY_CLEAR: case FIX_EA_INODE_FL: case FIX_LARGE_DIR:
		case FIX_EPOCH: case FIX_ZERO_INODE: case FIX_ZERO_ONLY: case FIX_RESTART_LATER: case FIX_SET_INCOMPAT:
			break;
		}
	a->changed = 1;
	return 0;
}

/*
 * An inode cleared before e2fsck would have looked at its attribute block
 * (the inline-data or extents flag questions come first) never named the
 * block there: it is no owner, and the block stays free when nothing else
 * names it.
 */
static void drop_unreached_ea(struct p1_answer *a, const struct deferred_inode *st)
{
	for (size_t i = st->first; i < a->w->nprobs && a->w->probs[i].q.pctx.ino == st->ino; i++) {
		const struct p1_problem *p = &a->w->probs[i];
		if (p->fix != FIX_EA_CHECK || !p->ea_counted)
			continue;
		struct xattr_ref *r = xattr_table_find(&a->ctx->xattrs, p->value);
		if (r && r->refs)
			r->refs--;
		return;
	}
}

/* The inode's questions are all asked: its record is written once, with every repair. */
static int answer_end(void *arg, const struct deferred_inode *st)
{
	struct p1_answer *a = arg;
	struct e4fsck *ctx = a->ctx;

	if (st->cleared && !a->ea_reached)
		drop_unreached_ea(a, st);
	problem_latch_end(ctx, PR_1_INODE_TOOBIG);
	problem_latch_end(ctx, PR_1_INODE_BLOCK_LATCH);
	if (a->changed) {
		int err = ext4fs_inode_write(ctx->fs, st->ino, &a->in);
		if (err) {
			fsck_fatal(ctx, "%s while writing inode %u: %s", ext4fs_strerror(err), st->ino,
				   ext4fs_errmsg(ctx->fs));
			return -1;
		}
		ctx->fs_changed = 1;
	}
	if ((a->ea_off || a->epoch) && ibody_rewrite(ctx, st->ino, a->ea_off, a->epoch))
		return -1;
	return 0;
}

/* Ask about the worker's problems in inode order, by their rules (deferred.h), repairing each inode once. */
static int answer_problems(struct e4fsck *ctx, struct p1_worker *w)
{
	static const struct deferred_ops ops = { answer_begin, answer_prepare, answer_judge, answer_repair,
						 answer_end };
	struct p1_answer a = { .ctx = ctx, .w = w };

	return deferred_replay(ctx, w->probs, w->nprobs, sizeof(*w->probs), &ops, &a);
}

/* Directories cleared by an answer leave pass 2's lists, as e2fsck skips blocks of inodes no longer in use. */
static void drop_cleared_dirs(struct e4fsck *ctx)
{
	size_t kept = 0;

	for (size_t i = 0; i < ctx->ndirs; i++)
		if (bitmap_paged_test(&ctx->inode_dir, ctx->dirs[i].ino))
			ctx->dirs[kept++] = ctx->dirs[i];
	ctx->ndirs = kept;
	kept = 0;
	for (size_t i = 0; i < ctx->ndir_blocks; i++)
		if (bitmap_paged_test(&ctx->inode_dir, ctx->dir_blocks[i].ino))
			ctx->dir_blocks[kept++] = ctx->dir_blocks[i];
	ctx->ndir_blocks = kept;
}

/* Cut the groups into n ranges of about equal numbers of inodes that may be in use. */
static void split_groups(struct e4fsck *ctx, unsigned n, uint32_t *first, uint32_t *last)
{
	const struct ext4fs_geom *g = ctx->geo;
	uint64_t total = 0, acc = 0;
	unsigned k = 0;

	for (uint32_t grp = 0; grp < g->group_count; grp++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, grp);
		total += 1 + (gd->free_inodes_count < g->inodes_per_group ? g->inodes_per_group - gd->free_inodes_count : 0);
	}
	first[0] = 0;
	for (uint32_t grp = 0; grp < g->group_count; grp++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, grp);
		acc += 1 + (gd->free_inodes_count < g->inodes_per_group ? g->inodes_per_group - gd->free_inodes_count : 0);
		if (k + 1 < n && acc * n >= total * (k + 1) && grp + 1 < g->group_count) {
			last[k] = grp;
			first[++k] = grp + 1;
		}
	}
	last[k] = g->group_count - 1;
	for (unsigned i = k + 1; i < n; i++) {
		first[i] = 1;
		last[i] = 0;    /* empty */
	}
}

/*
 * The resize inode cleared before pass 1 (super.c), written anew as e2fsck
 * writes it at the end of its pass 1: the double-indirect block is the
 * first block no inode claimed from where e2fsck's allocator starts (past
 * group 0's descriptors, reserved blocks and inode table), and the
 * group's and the superblock's free counts drop by one, as e2fsck's
 * allocation statistics drop them even when the bitmap already had the
 * block; pass 5 then puts the counts right, with e2fsck's messages.
 */
static int recreate_resize_inode(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	struct problem_ctx pctx = { .ino = EXT4FS_RESIZE_INO };
	uint64_t goal = (uint64_t)g->first_data_block + g->desc_blocks + ext4fs_sb(ctx->fs)->s_reserved_gdt_blocks + 2 +
			g->inode_blocks_per_group, dind = 0;
	int err;

	if (!ctx->recreate_resize_inode)
		return 0;
	ctx->recreate_resize_inode = 0;
	/*
	 * As e2fsck: the inode is read again first (-n left a bad checksum as it
	 * was, and that fails), and a double-indirect block it has is used again.
	 */
	struct ext4fs_inode in;
	err = ext4fs_inode_read_strict(ctx->fs, EXT4FS_RESIZE_INO, &in);
	if (!err && ctx->read_only)
		err = EXT4FS_E_READ_ONLY;
	if (!err) {
		dind = ext4fs_blockmap_slot_get(in.i_block, EXT4FS_DIND_BLOCK);
		if (!dind || dind < g->first_data_block || dind >= g->blocks_count)
			err = fsck_take_block_counted(ctx, goal, &dind);
		else
			/* As e2fsck's maker: a block that does not list the reserved GDT blocks is not written. */
			err = ext4fs_resize_inode_reusable(ctx->fs, dind);
	}
	if (!err)
		err = ext4fs_resize_inode_create(ctx->fs, dind, (uint32_t)ctx->now);
	if (err) {
		/* As e2fsck: "Continue" goes on without the inode, "no" ends the check. */
		pctx.errcode = err;
		pctx.errmsg = ext4fs_strerror(err);
		if (!fix_problem(ctx, PR_1_RESIZE_INODE_CREATE, &pctx)) {
			/* e2fsck's fatal_error(): "aborted" and the closing lines, no summary. */
			if (!ctx->aborted) {
				ctx->fatal = 1;
				ctx->exit_status |= FSCK_ERROR;
			}
			return -1;
		}
		return 0;
	}
	ctx->fs_changed = 1;
	return 0;
}

/*
 * As e2fsck at the end of pass 1: indexed directories that need largedir
 * get the feature, and a revision 0 file system is asked to be raised
 * (whatever the answer).  0 or -1.
 */
static int large_dirs_feature(struct e4fsck *ctx)
{
	if (!ctx->large_dirs || ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR))
		return 0;
	if (fsck_offer_feature(ctx, PR_2_FEATURE_LARGE_DIRS, 0, EXT4FS_FEATURE_INCOMPAT_LARGEDIR))
		return -1;
	return fsck_raise_rev_level(ctx, PR_1_FS_REV_LEVEL);
}

int fsck_pass1(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = ctx->threads > 0 ? (unsigned)ctx->threads : cpus > 0 ? (unsigned)cpus : 1;
	int rc = -1;

	if (n > g->group_count)
		n = g->group_count;
	if (claim_fs_metadata(ctx)) {
		if (!(ctx->exit_status & FSCK_ERROR))
			fsck_fatal(ctx, "out of memory while claiming the file system's metadata");
		return -1;
	}
	/* Preen met a conflict of the metadata's own (relocate.c): it stops there, as e2fsck. */
	if (ctx->aborted)
		return 0;
	if (fsck_bad_list_check(ctx))
		return -1;
	if (ctx->restart)
		return 0;
	/*
	 * Workers read the disk through handles of their own: earlier repairs
	 * must be there, also those that count as no change (an unused inodes
	 * count set right).
	 */
	if (n > 1 && !ctx->read_only && ext4fs_flush(ctx->fs)) {
		fsck_fatal(ctx, "%s while writing repairs before pass 1", ext4fs_errmsg(ctx->fs));
		return -1;
	}

	struct p1_worker *w = calloc(n, sizeof(*w));
	uint32_t *first = calloc(n, sizeof(uint32_t)), *last = calloc(n, sizeof(uint32_t));
	pthread_t *tid = calloc(n, sizeof(pthread_t));
	unsigned started = 0, inited = 0;
	if (!w || !first || !last || !tid) {
		fsck_fatal(ctx, "out of memory for pass 1");
		goto out;
	}
	split_groups(ctx, n, first, last);
	for (; inited < n; inited++)
		if (worker_init(ctx, &w[inited], first[inited], last[inited], n > 1))
			goto out;
	if (n == 1) {
		worker_run(&w[0]);
	} else {
		for (; started < n; started++)
			if (pthread_create(&tid[started], NULL, worker_run, &w[started])) {
				fsck_fatal(ctx, "cannot start pass 1 thread %u", started);
				break;
			}
		for (unsigned i = 0; i < started; i++)
			pthread_join(tid[i], NULL);
		if (started < n)
			goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		if (w[i].failed) {
			fsck_fatal(ctx, "pass 1 could not check groups %u-%u: %s", w[i].first_group, w[i].last_group,
				   w[i].error);
			goto out;
		}
		if (merge_worker(ctx, &w[i]))
			goto out;
	}
	for (unsigned i = 0; i < n && !ctx->aborted; i++)
		if (answer_problems(ctx, &w[i]))
			goto out;
	/* Extended-attribute blocks: claimed once each, whoever names them. */
	for (size_t i = 0; i < ctx->xattrs.cap; i++)
		if (ctx->xattrs.slots[i].in_use && ctx->xattrs.slots[i].refs &&
		    claim_in(ctx->geo, &ctx->block_found, &ctx->block_dup, ctx->xattrs.slots[i].blk, 1)) {
			fsck_fatal(ctx, "out of memory in pass 1");
			goto out;
		}
	if (!ctx->aborted && fsck_reserve_repair_blocks(ctx))
		goto out;
	if (!ctx->aborted && xattr_refcounts_check(ctx))
		goto out;
	if (!ctx->aborted && fsck_relocate_tables(ctx))
		goto out;
	if (!ctx->aborted && recreate_resize_inode(ctx))
		goto out;
	/*
	 * As e2fsck: once an inode was cleared for too many illegal blocks, the
	 * blocks claimed twice and the trees to rebuild are left to the next run.
	 */
	if (ctx->restart) {
		rc = 0;
		goto out;
	}
	if (!ctx->aborted && large_dirs_feature(ctx))
		goto out;
	if (!ctx->aborted && bitmap_paged_next_set(&ctx->block_dup, 0) < g->blocks_count) {
		if (ctx->mode == MODE_PREEN)
			fix_problem(ctx, PR_1_DUP_BLOCKS_PREENSTOP, NULL);
		if (fsck_pass1_dups(ctx))
			goto out;
	}
	drop_cleared_dirs(ctx);
	if (pass1e(ctx))
		goto out;
	rc = 0;
out:
	for (unsigned i = 0; w && i < inited; i++)
		worker_free(&w[i]);
	free(w);
	free(first);
	free(last);
	free(tid);
	return rc;
}
