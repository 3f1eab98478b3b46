/*
 * indirect.c - walking an indirect block map pointer by pointer (indirect.h).
 *
 * The library's walk stops at the first pointer outside the file system;
 * a checker has to go on, report each such pointer where e2fsck reports it
 * ("Illegal block #N", "Illegal indirect block") and believe the rest.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "ext4fs/codec.h"
#include "ext4fs/errors.h"
#include "ext4fs/super.h"
#include "context.h"
#include "extents.h"
#include "indirect.h"

#define DIRECT_BLOCKS 12


struct ind_walk {
	struct ext4fs_fs *fs;
	const struct ext4fs_geom *g;
	const struct indirect_scan_ops *ops;
	void *arg;
	uint32_t per_block;             /* pointers in an indirect block */
	unsigned char *bufs[3];         /* one per level of indirection */
	struct problem_ctx pctx;
	struct ext4fs_block_visit run;  /* data blocks waiting to be claimed as one run */
	int bad_map;                    /* an illegal indirect pointer met since the last indirect block read */
	int top;                        /* which of the inode's map pointers is being walked: 0 direct, 1-3 */
	int one_block;                  /* ops->symlink_limit applies: data past block 0 is "too big" */
	uint64_t last_dir_block;        /* ops->dir_limit applies: data past this block is "too big" (0: none) */
};

/* walk_ind(), with ops->stop_at_bad_map: back to the inode's pointers, the subtree is given up. */
#define STOP_SUBTREE 1

static int flush_run(struct ind_walk *w)
{
	int rc = 0;

	if (w->run.count)
		rc = w->ops->claim(&w->run, w->arg);
	w->run.count = 0;
	return rc;
}

/* A pointer (not 0, a hole) that may be followed. */
static int legal(const struct ind_walk *w, uint32_t blk)
{
	return ext4fs_block_ptr_valid(w->fs, blk);
}

/*
 * An illegal pointer at slot index of indirect block ref, or of i_block
 * when in_inode: described as e2fsck's %B describes its position.
 */
static int illegal(struct ind_walk *w, int in_inode, uint64_t ref, uint32_t index, uint32_t value, int level,
		   uint64_t lblk, int in_metadata)
{
	static const char *const names[] = { "", "indirect block", "double indirect block", "triple indirect block" };
	int past_dir = w->last_dir_block && !level && lblk > w->last_dir_block && legal(w, value);
	struct indirect_fix fix = { in_inode, ref, index, value, in_metadata, level, w->top,
				    w->pctx.ino == EXT4FS_RESIZE_INO, (w->one_block && !level && lblk > 0) || past_dir, lblk };
	char where[48];

	if (level)
		snprintf(where, sizeof(where), "%s", names[level]);
	else
		snprintf(where, sizeof(where), "block #%llu", (unsigned long long)lblk);
	w->pctx.blk = value;
	w->pctx.str = where;
	w->pctx.num = past_dir ? lblk : 0;      /* a directory's message names the block by number */
	int rc = w->ops->illegal(w->arg, &w->pctx, &fix);
	w->pctx.str = NULL;
	w->pctx.num = 0;
	return rc;
}

static int data_block(struct ind_walk *w, uint64_t lblk, uint32_t blk)
{
	if (w->run.count && w->run.lblk + w->run.count == lblk && w->run.pblk + w->run.count == blk &&
	    w->run.count < UINT32_MAX) {
		w->run.count++;
		return 0;
	}
	int rc = flush_run(w);
	w->run = (struct ext4fs_block_visit){ .kind = EXT4FS_BLOCK_DATA, .pblk = blk, .lblk = lblk, .count = 1 };
	return rc;
}

/* The map below indirect block blk (level 1..3) starting at logical block first. */
static int walk_ind(struct ind_walk *w, uint32_t blk, int level, uint64_t first)
{
	static const enum ext4fs_block_kind kinds[] = { EXT4FS_BLOCK_DATA, EXT4FS_BLOCK_IND, EXT4FS_BLOCK_DIND,
							EXT4FS_BLOCK_TIND };
	unsigned char *buf = w->bufs[level - 1];
	uint64_t span = 1;
	int rc;

	for (int l = 1; l < level; l++)
		span *= w->per_block;
	if ((rc = flush_run(w)))
		return rc;
	/*
	 * A map block on the file system's own metadata: as e2fsck, it is still
	 * walked (what it points at must not be handed out as free), but any
	 * repair of it would overwrite the metadata, so its illegal pointers are
	 * only counted; pass 1B gives the inode a copy, and a restart repairs that.
	 */
	int meta = w->pctx.ino != EXT4FS_RESIZE_INO && w->ops->is_metadata && w->ops->is_metadata(w->arg, blk);
	/* e2fsck checks the bad blocks inode's map by rules of its own, without this message. */
	if (meta && w->pctx.ino != EXT4FS_BAD_INO) {
		w->pctx.blk = blk;
		if ((rc = w->ops->collision(w->arg, &w->pctx, w->top)))
			return rc;
	}
	struct ext4fs_block_visit v = { .kind = kinds[level], .pblk = blk, .lblk = first, .count = 1 };
	if ((rc = w->ops->claim(&v, w->arg)))
		return rc;
	if (ext4fs_block_read(w->fs, blk, buf))
		return 0;
	w->bad_map = 0;
	for (uint32_t i = 0; i < w->per_block; i++) {
		uint32_t p = ext4fs_blockmap_slot_get(buf, i);
		uint64_t lblk = first + i * span;
		if (!p)
			continue;
		if (!legal(w, p) || (level == 1 && w->one_block && lblk > 0) ||
		    (level == 1 && w->last_dir_block && lblk > w->last_dir_block)) {
			if ((rc = flush_run(w)) || (rc = illegal(w, 0, blk, i, p, level > 1 ? level - 1 : 0, lblk, meta)))
				return rc;
			if (level > 1) {
				w->bad_map = 1;
				if (w->ops->stop_at_bad_map)
					return STOP_SUBTREE;
			}
			continue;
		}
		/* Each level reads into a buffer of its own, so descending leaves this one intact. */
		rc = level == 1 ? data_block(w, lblk, p) : walk_ind(w, p, level - 1, lblk);
		if (rc)
			return rc;
	}
	return 0;
}

int fsck_indirect_scan(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in,
		       const struct indirect_scan_ops *ops, void *arg)
{
	struct ind_walk w = { .fs = fs, .g = ext4fs_geom(fs), .ops = ops, .arg = arg };
	const unsigned char *ib = (const unsigned char *)in->i_block;
	int rc = 0;

	w.per_block = w.g->block_size / 4;
	w.pctx.ino = ino;
	/* The bad blocks inode (mode 0) is a list, walked by e2fsck's own rules for it. */
	w.one_block = ops->symlink_limit && ino != EXT4FS_BAD_INO && !EXT4FS_ISDIR(in->i_mode) &&
		      !EXT4FS_ISREG(in->i_mode);
	if (ops->dir_limit && EXT4FS_ISDIR(in->i_mode) && !ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR))
		w.last_dir_block = (1ULL << 31) / w.g->block_size;
	for (int k = 0; k < 3; k++)
		if (!(w.bufs[k] = malloc(w.g->block_size))) {
			rc = -ENOMEM;
			goto out;
		}
	for (uint32_t i = 0; i < DIRECT_BLOCKS && !rc; i++) {
		uint32_t p = ext4fs_blockmap_slot_get(ib, i);
		if (!p)
			continue;
		if (!legal(&w, p) || (w.one_block && i > 0)) {
			rc = flush_run(&w);
			if (!rc)
				rc = illegal(&w, 1, 0, i, p, 0, i, 0);
			continue;
		}
		rc = data_block(&w, i, p);
	}
	uint64_t first = DIRECT_BLOCKS, span = w.per_block;
	for (int level = 1; level <= 3 && !rc; level++, first += span, span *= w.per_block) {
		uint32_t p = ext4fs_blockmap_slot_get(ib, DIRECT_BLOCKS + (uint32_t)level - 1);
		if (!p)
			continue;
		w.top = level;
		if (!legal(&w, p)) {
			rc = flush_run(&w);
			if (!rc)
				rc = illegal(&w, 1, 0, DIRECT_BLOCKS + (uint32_t)level - 1, p, level, first, 0);
			w.bad_map = 1;
			continue;
		}
		rc = walk_ind(&w, p, level, first);
		if (rc == STOP_SUBTREE)
			rc = 0;
	}
	if (!rc)
		rc = flush_run(&w);
	if (!rc && ops->stop_at_bad_map && w.bad_map)
		rc = INDIRECT_SCAN_BAD_MAP;
out:
	for (int k = 0; k < 3; k++)
		free(w.bufs[k]);
	return rc;
}

/* fsck_map_walk(): what fsck_indirect_scan() hands it, to the caller's function. */
struct map_walk {
	ext4fs_block_visit_fn fn;
	void *arg;
};

static int map_walk_claim(const struct ext4fs_block_visit *v, void *arg)
{
	const struct map_walk *m = arg;

	return m->fn(v, m->arg);
}

/* Skipped, as e2fsck's later passes skip it: pass 1 asked about it. */
static int map_walk_illegal(void *arg, const struct problem_ctx *pctx, const struct indirect_fix *fix)
{
	(void)arg;
	(void)pctx;
	(void)fix;
	return 0;
}

int fsck_map_walk(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in, int stop_at_bad_map,
		  ext4fs_block_visit_fn fn, void *arg)
{
	struct indirect_scan_ops ops = { .claim = map_walk_claim, .illegal = map_walk_illegal,
					 .stop_at_bad_map = stop_at_bad_map };
	struct map_walk m = { fn, arg };

	if ((in->i_flags & EXT4FS_EXTENTS_FL) && ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_EXTENTS))
		return fsck_extent_blocks(fs, in, fn, arg);
	return fsck_indirect_scan(fs, ino, in, &ops, &m);
}

struct meta_probe {
	const struct range_set *meta;
	int found;
};

static int probe_meta(const struct ext4fs_block_visit *v, void *arg)
{
	struct meta_probe *m = arg;

	if (v->kind == EXT4FS_BLOCK_DATA || !range_set_test(m->meta, v->pblk))
		return 0;
	m->found = 1;
	return -ECANCELED;          /* one is enough */
}

int fsck_map_on_metadata(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in)
{
	struct meta_probe m = { &ctx->fs_meta, 0 };

	if (fsck_inode_has_blocks(ctx->fs, ino, in))
		fsck_map_walk(ctx->fs, ino, in, 0, probe_meta, &m);
	return m.found;
}

int fsck_indirect_repoint(struct e4fsck *ctx, struct ext4fs_inode *in, uint64_t lblk, uint64_t old,
			  uint64_t new_blk, int *in_changed)
{
	uint64_t per = ctx->geo->block_size / 4;
	uint32_t idx[3];
	unsigned depth;             /* indirect blocks between i_block and the entry */
	uint32_t top;               /* the entry's slot in i_block, or the slot of its first indirect block */

	*in_changed = 0;
	if (old > UINT32_MAX || new_blk > UINT32_MAX || !ext4fs_block_ptr_valid(ctx->fs, new_blk))
		return EXT4FS_E_INVALID_ARG;
	if (lblk < DIRECT_BLOCKS) {
		top = (uint32_t)lblk;
		depth = 0;
	} else if ((lblk -= DIRECT_BLOCKS) < per) {
		top = DIRECT_BLOCKS;
		depth = 1;
		idx[0] = (uint32_t)lblk;
	} else if ((lblk -= per) < per * per) {
		top = DIRECT_BLOCKS + 1;
		depth = 2;
		idx[0] = (uint32_t)(lblk / per);
		idx[1] = (uint32_t)(lblk % per);
	} else if ((lblk -= per * per) < per * per * per) {
		top = DIRECT_BLOCKS + 2;
		depth = 3;
		idx[0] = (uint32_t)(lblk / (per * per));
		idx[1] = (uint32_t)(lblk / per % per);
		idx[2] = (uint32_t)(lblk % per);
	} else {
		return EXT4FS_E_INVALID_ARG;
	}
	unsigned char *slot = (unsigned char *)in->i_block + (size_t)top * 4;
	if (!depth) {
		if (ext4fs_blockmap_slot_get(slot, 0) != old)
			return EXT4FS_E_IND_CORRUPT;
		ext4fs_blockmap_slot_set(slot, 0, (uint32_t)new_blk);
		*in_changed = 1;
		return 0;
	}
	unsigned char *buf = malloc(ctx->geo->block_size);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	uint64_t blk = ext4fs_blockmap_slot_get(slot, 0);
	int err = 0;
	for (unsigned l = 0; l < depth && !err; l++) {
		/* Every number read here is followed only once it is a block of the file system. */
		if (!ext4fs_block_ptr_valid(ctx->fs, blk))
			err = EXT4FS_E_IND_CORRUPT;
		else
			err = ext4fs_block_read(ctx->fs, blk, buf);
		if (!err && l + 1 < depth)
			blk = ext4fs_blockmap_slot_get(buf, idx[l]);
	}
	if (!err && ext4fs_blockmap_slot_get(buf, idx[depth - 1]) != old)
		err = EXT4FS_E_IND_CORRUPT;
	/* The block holding the entry is the file's own by now (pass 1D copied it first), never metadata. */
	if (!err && range_set_test(&ctx->fs_meta, blk))
		err = EXT4FS_E_IND_CORRUPT;
	if (!err) {
		ext4fs_blockmap_slot_set(buf, idx[depth - 1], (uint32_t)new_blk);
		err = ext4fs_block_write(ctx->fs, blk, buf);
	}
	free(buf);
	return err;
}

int fsck_indirect_clear(struct e4fsck *ctx, struct ext4fs_inode *in, const struct indirect_fix *fix)
{
	unsigned char *slot;

	if (fix->in_inode) {
		if (fix->index >= sizeof(in->i_block) / 4)
			return 0;
		slot = (unsigned char *)in->i_block + (size_t)fix->index * 4;
		if (ext4fs_blockmap_slot_get(slot, 0) != fix->value)
			return 0;
		ext4fs_blockmap_slot_set(slot, 0, 0);
		return 1;
	}
	/* Whatever was answered, a map block on the metadata is left for pass 1B to move: writing it would destroy it. */
	if (!ext4fs_block_ptr_valid(ctx->fs, fix->ref) || fix->in_metadata ||
	    (!fix->resize && range_set_test(&ctx->fs_meta, fix->ref)))
		return 0;
	unsigned char *buf = malloc(ctx->geo->block_size);
	int err = buf ? ext4fs_block_read(ctx->fs, fix->ref, buf) : EXT4FS_E_NO_MEMORY;
	if (!err && fix->index < ctx->geo->block_size / 4 && ext4fs_blockmap_slot_get(buf, fix->index) == fix->value) {
		slot = buf + (size_t)fix->index * 4;
		ext4fs_blockmap_slot_set(slot, 0, 0);
		err = ext4fs_block_write(ctx->fs, fix->ref, buf);
	}
	free(buf);
	if (err) {
		fsck_fatal(ctx, "%s while clearing a block pointer in block %llu: %s", ext4fs_strerror(err),
			   (unsigned long long)fix->ref, ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}
