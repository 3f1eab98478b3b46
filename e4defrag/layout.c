/*
 * layout.c - the run's dir and free modes: the library's sweep
 * (ext4fs_defrag_sweep(), relevant-file and free-space fragmentation at
 * once) over the tree in the order a reader meets it, or with --mode=free
 * alone its compaction (ext4fs_defrag_compact()), which closes the gaps
 * and keeps every file's place in block order.
 *
 * The order is walk.c's, the kernel's readdir order (hash order in an
 * indexed directory), so the tree ends laid out the way tar and find read
 * it: each directory, then its entries, a subdirectory gone into when met;
 * a file linked twice at its first name.  Directories laid out well
 * enough already (ext4fs_defrag_keep_settled(): as a fresh copy lays them
 * out) stay as they are, with their files.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#include "defrag4fs.h"
#include "ext4fs/array.h"
#include "ext4fs/defrag.h"
#include "ext4fs/errors.h"
#include "ext4fs/txn.h"
#include "layout.h"
#include "names.h"
#include "walk.h"

/* Returned by the step callback to stop at the time limit (no library code is positive). */
#define STOP_NOW 1

struct members {
	uint32_t *ino;
	size_t n, cap;
};

static int add_member(const struct df_walk_entry *e, void *arg)
{
	struct members *m = arg;
	uint32_t *grown;

	if (!e->first_visit || !(EXT4FS_ISDIR(e->inode->i_mode) || EXT4FS_ISREG(e->inode->i_mode)))
		return 0;
	if (!(grown = ext4fs_array_grow(m->ino, &m->cap, m->n + 1, sizeof(*m->ino), 256)))
		return EXT4FS_E_NO_MEMORY;
	m->ino = grown;
	m->ino[m->n++] = e->ino;
	return 0;
}

struct stepper {
	struct df_ctx *ctx;
	struct df_layout_totals *t;
	const struct timespec *start;
};

static int each_step(const struct ext4fs_defrag_step *s, void *arg)
{
	struct stepper *st = arg;
	struct df_ctx *ctx = st->ctx;

	st->t->members++;
	if (s->moved) {
		st->t->moved++;
		st->t->blocks_moved += s->res.blocks_moved;
		st->t->bytes_copied += s->res.bytes_copied;
		if (ctx->verbose) {
			df_progress_clear(ctx);
			df_names_print(ctx->out, ctx->names, s->ino, NULL);
			fprintf(ctx->out, ": %s%s, %" PRIu64 " KiB %s\n", ctx->dry_run ? "would be " : "",
				(ctx->modes & DF_MODE_DIR) ? "laid out" : "moved down", s->res.bytes_copied / 1024,
				ctx->dry_run ? "to move" : "moved");
		}
	} else if (s->why != EXT4FS_RELOC_MOVABLE) {
		st->t->stayed++;
	}
	if ((ctx->modes & DF_MODE_DIR) && s->why == EXT4FS_RELOC_MOVABLE && df_inoset_add(&st->t->laid_out, s->ino) < 0)
		return EXT4FS_E_NO_MEMORY;
	df_progress_tick(ctx);
	if (ctx->have_time_limit) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((uint64_t)(now.tv_sec - st->start->tv_sec) >= ctx->time_limit) {
			st->t->stopped_early = 1;
			return STOP_NOW;
		}
	}
	return 0;
}

int df_layout(struct df_ctx *ctx, uint64_t reserve, const struct timespec *start, struct df_layout_totals *t)
{
	struct stepper st = { .ctx = ctx, .t = t, .start = start };
	struct ext4fs_defrag_opts o = { .reserve = reserve, .each = each_step, .arg = &st };
	struct members m = { 0 };
	uint32_t *keep = NULL;
	struct ext4fs_prun *spans = NULL;
	struct ext4fs_txn_stats before, after;
	int sweep = (ctx->modes & DF_MODE_DIR) != 0, err = 0;

	/* The passes share transactions among small moves: their commits are counted here. */
	ext4fs_txn_get_stats(ctx->fs, &before);

	if (sweep) {
		/* With paths, the trees under them are laid out; the rest of the volume stays as it is. */
		for (int i = 0; i < ctx->ntargets && !err; i++)
			err = df_walk(ctx->fs, ctx->targets[i].ino, ctx->targets[i].walk_path, add_member, &m);
		if (!err) {
			/* What a fresh copy would have laid out the same stays as it is. */
			size_t dirs = 0;
			err = ext4fs_defrag_settled(ctx->fs, m.ino, m.n, &keep, &o.nkeep, &spans, &o.nreserved, &dirs);
			o.keep = keep;
			o.reserved = spans;
			t->dirs_settled = dirs;
		}
		if (err) {
			free(m.ino);
			df_error(ctx, err, "while listing the tree to lay out");
			return DF_EXIT_ERROR;
		}
		df_progress_begin(ctx, 2, m.n);
		err = ext4fs_defrag_sweep(ctx->fs, m.ino, m.n, &o);
	} else {
		df_progress_begin(ctx, 2, df_inodes_used(ctx));
		err = ext4fs_defrag_compact(ctx->fs, &o);
	}
	df_progress_end(ctx);
	free(m.ino);
	free(keep);
	free(spans);
	ext4fs_txn_get_stats(ctx->fs, &after);
	t->transactions += after.commits - before.commits;
	if (err == STOP_NOW)
		return 0;
	if (err) {
		df_error(ctx, err, "while %s", sweep ? "laying out the tree" : "compacting the free space");
		return DF_EXIT_ERROR;
	}
	return 0;
}
