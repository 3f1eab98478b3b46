/*
 * run.c - defrag4fs without -c: each regular file examined in turn and,
 * unless -n, moved by the library (ext4fs_reloc_defrag_file()) into free
 * space where it needs fewer extents; the figures before and after; the
 * files left; the summary and the JSON document.
 *
 * A run opens the file system read-write only after open.c's refusals,
 * then makes itself crash safe (support/fsopen.h): journalled mode when
 * there is a journal, in which each file switches to its new blocks in
 * transactions of its own, so a kill between files or inside one leaves
 * every file whole after a replay.  The measures after the moves are taken
 * once the journal has been checkpointed, from what is on the disk.
 *
 * -n rehearses the run (EXT4FS_OPEN_REHEARSE): the same steps on a
 * handle whose writes stay in memory and that copies no file data, so
 * what it says would move, and the figures after, are what the run would
 * give (a run stopped by -t stops at a different point), and the disk is
 * not written.  Its memory is the metadata the run would change.
 *
 * Which files make the exit status 1: those left in more extents than
 * their ideal (ceil(blocks / 32768), frag.h's), unless the library says
 * they already are in their fewest extents (a file with holes cannot be
 * in fewer extents than its runs of data).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "defrag4fs.h"
#include "ext4fs/array.h"
#include "ext4fs/defrag.h"
#include "ext4fs/errors.h"
#include "ext4fs/relocate.h"
#include "ext4fs/super.h"
#include "ext4fs/txn.h"
#include "files.h"
#include "layout.h"
#include "names.h"
#include "support/fsopen.h"
#include "support/json.h"
#include "walk.h"

struct move_rec {
	uint32_t ino;
	const char *path;          /* the df_file's, or NULL */
	uint64_t blocks;           /* blocks that changed place (-n: the file's blocks) */
	uint64_t bytes_copied;
	uint64_t extents_before, extents_after;
	uint64_t transactions;
};

struct left_rec {
	uint32_t ino;
	char *path;                /* owned: the df_file's copy, or found after the run; NULL if unknown */
	enum ext4fs_reloc_skip why;
	uint64_t extents, ideal, fewest;
	int above;                 /* above its ideal, and not for want of a better layout */
};

struct run {
	struct df_ctx *ctx;
	struct df_files files;
	struct df_figures before, after;
	struct ext4fs_frag_free free_before, free_after;
	int have_after;
	enum sup_safety how;
	uint64_t reserve;
	struct move_rec *moves;
	size_t nmoves, moves_cap;
	struct left_rec *left;
	size_t nleft, left_cap;
	uint64_t examined, moved, nleft_all, left_above;
	uint64_t blocks_moved, bytes_copied, transactions;
	struct timespec start;
	double seconds;
	int stopped_early;
	struct df_layout_totals layout;  /* the dir or free mode's pass */
	int layout_ran;
	uint64_t room_tried, room_moved;  /* free mode: files room was made for */
	int room_ran;
	uint32_t *want_room;              /* files file mode left in more than their fewest extents */
	size_t nwant, want_cap;
};

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Free blocks a move must leave: room for the tree or indirect blocks the
 * new map needs, and so a run never fills the file system to the last block.
 */
static uint64_t reserve_of(struct ext4fs_fs *fs)
{
	return 64 + ext4fs_geom(fs)->blocks_count / 4096;
}

/* -- the figures before and after ------------------------------------------ */

static void tick(void *arg)
{
	df_progress_tick(arg);
}

static int measure(struct run *r, int pass, struct df_figures *f, struct ext4fs_frag_free *ff)
{
	struct df_ctx *ctx = r->ctx;
	struct df_measure_hooks hooks = { .arg = ctx, .tick = tick };
	int err = 0;

	df_figures_init(f);
	df_progress_begin(ctx, pass, df_inodes_used(ctx));
	for (int i = 0; i < ctx->ntargets && !err; i++)
		err = df_measure(ctx->fs, ctx->targets[i].ino, ctx->targets[i].walk_path, &hooks, f);
	df_progress_end(ctx);
	if (!err)
		err = ext4fs_frag_free_scan(ctx->fs, NULL, 0, 0, ff);
	if (err) {
		df_error(ctx, err, "while measuring %s", ctx->device);
		return DF_EXIT_ERROR;
	}
	return 0;
}

/* -- one file ---------------------------------------------------------------- */

static int note_move(struct run *r, const struct df_file *file, const struct move_rec *m)
{
	struct df_ctx *ctx = r->ctx;
	uint32_t bs = ext4fs_geom(ctx->fs)->block_size;

	r->moved++;
	r->blocks_moved += m->blocks;
	r->bytes_copied += m->bytes_copied;
	r->transactions += m->transactions;
	if (ctx->verbose) {
		df_progress_clear(ctx);
		df_names_print(ctx->out, ctx->names, file->ino, file->path);
		fprintf(ctx->out, ": %" PRIu64 " extents -> %" PRIu64 ", %" PRIu64 " KiB %s\n", m->extents_before,
			m->extents_after, m->blocks * (bs / 1024), ctx->dry_run ? "would move" : "moved");
	}
	if (!ctx->json)
		return 0;
	if (r->nmoves == r->moves_cap) {
		struct move_rec *v = ext4fs_array_grow(r->moves, &r->moves_cap, r->nmoves + 1, sizeof(*v), 64);
		if (!v)
			return EXT4FS_E_NO_MEMORY;
		r->moves = v;
	}
	r->moves[r->nmoves++] = *m;
	return 0;
}

static int note_left(struct run *r, const struct df_file *file, struct left_rec *l)
{
	struct df_ctx *ctx = r->ctx;

	r->nleft_all++;
	l->above = l->extents > l->ideal && l->why != EXT4FS_RELOC_IDEAL;
	if (l->above)
		r->left_above++;
	if (ctx->verbose) {
		df_progress_clear(ctx);
		df_names_print(ctx->out, ctx->names, file->ino, file->path);
		fprintf(ctx->out, ": left in %" PRIu64 " extents: %s\n", l->extents, ext4fs_reloc_skip_name(l->why));
	}
	/* Every left file goes to the JSON; the text names only those above their ideal. */
	if (!l->above && !ctx->json)
		return 0;
	if (r->nleft == r->left_cap) {
		struct left_rec *v = ext4fs_array_grow(r->left, &r->left_cap, r->nleft + 1, sizeof(*v), 64);
		if (!v)
			return EXT4FS_E_NO_MEMORY;
		r->left = v;
	}
	if (file->path && !(l->path = strdup(file->path)))
		return EXT4FS_E_NO_MEMORY;
	r->left[r->nleft++] = *l;
	return 0;
}

static int one_file(struct run *r, const struct df_file *file)
{
	struct df_ctx *ctx = r->ctx;
	struct ext4fs_reloc_file f;
	struct ext4fs_reloc_result res;
	struct move_rec m = { .ino = file->ino, .path = file->path };
	struct left_rec l = { .ino = file->ino };
	enum ext4fs_reloc_skip why;
	int err;

	if (df_inoset_has(&r->layout.laid_out, file->ino))
		return 0;   /* the tree's layout placed it: moving it whole elsewhere would undo that */
	err = ext4fs_reloc_load(ctx->fs, file->ino, &f);
	if (!err) {
		l.extents = f.extents;
		l.ideal = (f.blocks + EXT4FS_FRAG_IDEAL_BLOCKS - 1) / EXT4FS_FRAG_IDEAL_BLOCKS;
		l.fewest = ext4fs_reloc_fewest_extents(&f);
	}
	ext4fs_reloc_release(&f);
	if (!err) {
		err = ext4fs_reloc_defrag_file(ctx->fs, file->ino, r->reserve, &why, &res);
		if (!err && why == EXT4FS_RELOC_MOVABLE) {
			m.blocks = res.blocks_moved;
			m.bytes_copied = res.bytes_copied;
			m.extents_before = res.extents_before;
			m.extents_after = res.extents_after;
			m.transactions = res.transactions;
		}
	}
	if (err) {
		df_error(ctx, err, "while %s inode %" PRIu32 "%s%s", ctx->dry_run ? "rehearsing the move of" : "moving",
			 file->ino,
			 file->path ? " " : "", file->path ? file->path : "");
		return DF_EXIT_ERROR;
	}
	r->examined++;
	l.why = why;
	if ((why == EXT4FS_RELOC_MOVABLE && m.extents_after > l.fewest) || why == EXT4FS_RELOC_NO_SPACE) {
		uint32_t *v = ext4fs_array_grow(r->want_room, &r->want_cap, r->nwant + 1, sizeof(*v), 64);
		if (!v) {
			fprintf(stderr, "%s: out of memory\n", DF_PROG);
			return DF_EXIT_ERROR;
		}
		r->want_room = v;
		r->want_room[r->nwant++] = file->ino;
	}
	err = why == EXT4FS_RELOC_MOVABLE ? note_move(r, file, &m) : note_left(r, file, &l);
	if (err) {
		free(l.path);
		fprintf(stderr, "%s: out of memory\n", DF_PROG);
		return DF_EXIT_ERROR;
	}
	return 0;
}

static int each_file(struct run *r)
{
	struct df_ctx *ctx = r->ctx;
	int rc = 0;

	df_progress_begin(ctx, 2, r->files.n);
	for (size_t i = 0; i < r->files.n && !rc; i++) {
		if (ctx->have_time_limit && since(&r->start) >= (double)ctx->time_limit) {
			r->stopped_early = 1;
			break;
		}
		rc = one_file(r, &r->files.v[i]);
		df_progress_tick(ctx);
	}
	df_progress_end(ctx);
	return rc;
}

/* -- making room (free mode) ------------------------------------------------------ */

/* The path the run was given ino under (paths named on the command line), or NULL. */
static const char *file_path(const struct run *r, uint32_t ino)
{
	for (size_t i = 0; i < r->files.n; i++)
		if (r->files.v[i].ino == ino)
			return r->files.v[i].path;
	return NULL;
}

static int room_step(const struct ext4fs_defrag_step *step, void *arg)
{
	struct run *r = arg;
	struct df_ctx *ctx = r->ctx;
	uint32_t bs = ext4fs_geom(ctx->fs)->block_size;
	struct left_rec *l = NULL;

	for (size_t i = 0; i < r->nleft && !l; i++)
		if (r->left[i].ino == step->ino)
			l = &r->left[i];
	/* What was moved out of the way counts even when the file could not follow. */
	r->blocks_moved += step->res.blocks_moved;
	r->bytes_copied += step->res.bytes_copied;
	if (!step->moved || step->why != EXT4FS_RELOC_MOVABLE)
		return 0;
	r->room_moved++;
	if (ctx->verbose) {
		df_progress_clear(ctx);
		df_names_print(ctx->out, ctx->names, step->ino, file_path(r, step->ino));
		fprintf(ctx->out, ": room made, %" PRIu64 " extents -> %" PRIu64 ", %" PRIu64 " KiB %s\n",
			step->res.extents_before, step->res.extents_after, step->res.blocks_moved * (bs / 1024),
			ctx->dry_run ? "would move" : "moved");
	}
	if (ctx->json) {
		struct move_rec m = { .ino = step->ino, .path = file_path(r, step->ino), .blocks = step->res.blocks_moved,
				      .bytes_copied = step->res.bytes_copied,
				      .extents_before = step->res.extents_before, .extents_after = step->res.extents_after };
		struct move_rec *v = ext4fs_array_grow(r->moves, &r->moves_cap, r->nmoves + 1, sizeof(*v), 64);
		if (!v)
			return EXT4FS_E_NO_MEMORY;
		r->moves = v;
		r->moves[r->nmoves++] = m;
	}
	if (!l)
		return 0;   /* moved by file mode already, now whole */
	/* No longer left: out of the list, and of the counts. */
	if (l->above)
		r->left_above--;
	r->nleft_all--;
	r->moved++;
	free(l->path);
	*l = r->left[--r->nleft];
	return 0;
}

/*
 * Free mode: the files file mode left above their ideal for want of free
 * space get room made for them (ext4fs_defrag_make_room(): the stretch
 * where the fewest bytes of other files must move).
 */
static int make_room(struct run *r)
{
	struct df_ctx *ctx = r->ctx;
	struct ext4fs_defrag_opts o = { .reserve = r->reserve, .each = room_step, .arg = r };
	struct ext4fs_txn_stats before, after;
	uint32_t *inos;
	size_t n;
	int err;

	inos = r->want_room;
	n = r->nwant;
	r->room_ran = 1;
	r->room_tried = n;
	ext4fs_txn_get_stats(ctx->fs, &before);
	err = n ? ext4fs_defrag_make_room(ctx->fs, inos, n, &o) : 0;
	ext4fs_txn_get_stats(ctx->fs, &after);
	r->transactions += after.commits - before.commits;
	if (err) {
		df_error(ctx, err, "while making room for the files left");
		return DF_EXIT_ERROR;
	}
	return 0;
}

/* -- naming the files left, after a whole-volume run -------------------------- */

static int by_ino(const void *a, const void *b)
{
	const struct left_rec *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int name_left(const struct df_walk_entry *e, void *arg)
{
	struct run *r = arg;
	struct left_rec key = { .ino = e->ino }, *l;

	if (!EXT4FS_ISREG(e->inode->i_mode) || !e->first_visit)
		return 0;
	l = bsearch(&key, r->left, r->nleft, sizeof(*l), by_ino);
	if (l && !l->path && !(l->path = strdup(e->path)))
		return EXT4FS_E_NO_MEMORY;
	return 0;
}

/*
 * The inode scan finds files without their names; the files named at the
 * end get theirs from one walk of the tree (a file only in lost+found, or
 * in no directory, keeps its inode number).
 */
static void find_names(struct run *r)
{
	struct df_ctx *ctx = r->ctx;

	if (ctx->targets[0].kind != DF_KIND_DEVICE || !r->nleft)
		return;
	qsort(r->left, r->nleft, sizeof(*r->left), by_ino);
	if (ctx->names) {
		/* -v named everything already. */
		for (size_t i = 0; i < r->nleft; i++) {
			const char *path = df_names_get(ctx->names, r->left[i].ino);
			if (!r->left[i].path && path && !(r->left[i].path = strdup(path)))
				return;   /* out of memory: the numbers stay */
		}
		return;
	}
	if (df_walk(ctx->fs, EXT4FS_ROOT_INO, "/", name_left, r))
		ext4fs_errmsg_clear(ctx->fs);   /* names are a courtesy: inode numbers stay */
}

/* -- output ------------------------------------------------------------------- */

static void score_text(char *buf, size_t len, const struct df_figures *f, uint32_t bs)
{
	struct ext4fs_frag_score_summary s;

	if (ext4fs_frag_score_summary(&f->score, bs, &s))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f", (double)s.score);
}

static void print_summary(struct run *r)
{
	struct df_ctx *ctx = r->ctx;
	uint32_t bs = ext4fs_geom(ctx->fs)->block_size;
	FILE *out = ctx->out;
	char before[32], after[32];

	if (r->left_above) {
		fprintf(out, "%s above their ideal extent count:\n",
			ctx->dry_run ? "Files that would be left" : "Files left");
		for (size_t i = 0; i < r->nleft; i++) {
			const struct left_rec *l = &r->left[i];
			if (!l->above)
				continue;
			fputs("  ", out);
			df_names_print(out, ctx->names, l->ino, l->path);
			if (l->path && ctx->targets[0].kind == DF_KIND_DEVICE)
				fprintf(out, " (<%" PRIu32 ">)", l->ino);
			fprintf(out, ": %" PRIu64 " extents, ideal %" PRIu64 ": %s\n", l->extents, l->ideal,
				ext4fs_reloc_skip_name(l->why));
		}
	}
	if (r->stopped_early)
		fprintf(out, "Stopped early: the time limit of %" PRIu64 " s was reached after %" PRIu64
			" of %zu files.\n", ctx->time_limit, r->examined, r->files.n);
	score_text(before, sizeof(before), &r->before, bs);
	fprintf(out, "\n Files examined\t\t\t\t\t%" PRIu64 "\n", r->examined);
	fprintf(out, " Files %s\t\t\t\t\t%" PRIu64 "\n", ctx->dry_run ? "to move" : "moved", r->moved);
	fprintf(out, " Files left\t\t\t\t\t%" PRIu64 " (%" PRIu64 " above their ideal)\n", r->nleft_all,
		r->left_above);
	if (r->layout_ran) {
		fprintf(out, " %s: files and directories moved\t%" PRIu64 " of %" PRIu64 " (%" PRIu64 " left)\n",
			ctx->modes & DF_MODE_DIR ? "Layout" : "Compaction", r->layout.moved, r->layout.members,
			r->layout.stayed);
		if (ctx->modes & DF_MODE_DIR)
			fprintf(out, " Layout: directories already in order\t%" PRIu64 "\n", r->layout.dirs_settled);
		if (r->layout.stopped_early)
			fprintf(out, "Stopped early: the time limit of %" PRIu64 " s was reached while %s.\n",
				ctx->time_limit, ctx->modes & DF_MODE_DIR ? "laying out the tree" : "compacting");
	}
	if (r->room_ran)
		fprintf(out, " Room made: files moved whole\t\t%" PRIu64 " of %" PRIu64 "\n", r->room_moved,
			r->room_tried);
	fprintf(out, " Bytes %s\t\t\t\t\t%" PRIu64 " (%" PRIu64 " KiB)\n", ctx->dry_run ? "to move" : "moved",
		r->blocks_moved * bs, r->blocks_moved * (bs / 1024));
	score_text(after, sizeof(after), &r->after, bs);
	if (!r->have_after)
		snprintf(after, sizeof(after), "-");
	fprintf(out, " Extents %s\t\t\t\t%" PRIu64 "/%" PRIu64 "\n",
		ctx->dry_run ? "now/planned" : "before/after", r->before.extents, r->after.extents);
	fprintf(out, " Fragmentation score %s\t\t%s/%s\n", ctx->dry_run ? "now/planned" : "before/after",
		before, after);
	fprintf(out, " Time%s\t\t\t\t\t%.1f s\n", ctx->dry_run ? " to plan" : "\t", r->seconds);
}

static int write_json(struct run *r, int status)
{
	static const char *const safety[] = { "journal", "undo", "forced" };
	struct df_ctx *ctx = r->ctx;
	uint32_t bs = ext4fs_geom(ctx->fs)->block_size;
	struct json j;

	json_init(&j, ctx->json);
	json_object_begin(&j, NULL);
	df_json_head(&j, ctx, "file");
	json_bool(&j, "dry_run", ctx->dry_run);
	if (ctx->dry_run)
		json_null(&j, "safety");
	else
		json_string(&j, "safety", safety[r->how]);
	df_json_figures(&j, "before", &r->before, bs, &r->free_before);
	if (r->have_after)
		df_json_figures(&j, "after", &r->after, bs, &r->free_after);
	else
		json_null(&j, "after");
	json_array_begin(&j, "moves");
	for (size_t i = 0; i < r->nmoves; i++) {
		const struct move_rec *m = &r->moves[i];
		json_object_begin(&j, NULL);
		json_uint(&j, "ino", m->ino);
		json_string(&j, "path", m->path);
		json_uint(&j, "blocks", m->blocks);
		json_uint(&j, "bytes_copied", m->bytes_copied);
		json_uint(&j, "extents_before", m->extents_before);
		json_uint(&j, "extents_after", m->extents_after);
		json_uint(&j, "transactions", m->transactions);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_array_begin(&j, "left");
	for (size_t i = 0; i < r->nleft; i++) {
		const struct left_rec *l = &r->left[i];
		json_object_begin(&j, NULL);
		json_uint(&j, "ino", l->ino);
		json_string(&j, "path", l->path);
		json_string(&j, "reason", ext4fs_reloc_skip_name(l->why));
		json_uint(&j, "extents", l->extents);
		json_uint(&j, "ideal", l->ideal);
		json_uint(&j, "fewest", l->fewest);
		json_bool(&j, "above_ideal", l->above);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_begin(&j, "totals");
	json_uint(&j, "files_examined", r->examined);
	json_uint(&j, "files_total", r->files.n);
	json_uint(&j, "files_moved", r->moved);
	json_uint(&j, "files_left", r->nleft_all);
	json_uint(&j, "files_left_above_ideal", r->left_above);
	json_uint(&j, "blocks_moved", r->blocks_moved);
	json_uint(&j, "bytes_moved", r->blocks_moved * bs);
	json_uint(&j, "bytes_copied", r->bytes_copied);
	json_uint(&j, "transactions", r->transactions);
	json_double(&j, "seconds", r->seconds);
	json_bool(&j, "stopped_early", r->stopped_early || r->layout.stopped_early);
	json_object_end(&j);
	if (r->layout_ran) {
		json_object_begin(&j, "layout");
		json_string(&j, "pass", ctx->modes & DF_MODE_DIR ? "sweep" : "compact");
		json_uint(&j, "members", r->layout.members);
		json_uint(&j, "moved", r->layout.moved);
		json_uint(&j, "left", r->layout.stayed);
		json_uint(&j, "directories_settled", r->layout.dirs_settled);
		json_uint(&j, "blocks_moved", r->layout.blocks_moved);
		json_uint(&j, "bytes_copied", r->layout.bytes_copied);
		json_uint(&j, "transactions", r->layout.transactions);
		json_bool(&j, "stopped_early", r->layout.stopped_early);
		json_object_end(&j);
	} else {
		json_null(&j, "layout");
	}
	if (r->room_ran) {
		json_object_begin(&j, "room");
		json_uint(&j, "files_tried", r->room_tried);
		json_uint(&j, "files_moved", r->room_moved);
		json_object_end(&j);
	} else {
		json_null(&j, "room");
	}
	json_int(&j, "exit_status", status);
	return df_json_close(ctx, &j);
}

/* -- the steps ---------------------------------------------------------------- */

/* Close the read-only handle of the checks and open the file system for writing, made crash safe. */
static int open_for_writing(struct run *r)
{
	struct df_ctx *ctx = r->ctx;
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW | (ctx->dry_run ? EXT4FS_OPEN_REHEARSE : 0) };
	char msg[512];
	int err;

	ext4fs_close(ctx->fs);
	ctx->fs = NULL;
	err = sup_fs_open(ctx->device, &opts, ctx->undo_path, &ctx->fs, msg, sizeof(msg));
	if (err) {
		ctx->fs = NULL;
		fprintf(stderr, "%s: %s while trying to open %s %s\n", DF_PROG, msg, ctx->device,
			ctx->dry_run ? "to plan a run" : "for writing");
		return DF_EXIT_ERROR;
	}
	/* A rehearsal runs as the run would (journalled when it can), but needs no undo file. */
	err = sup_make_crash_safe(ctx->fs, ctx->undo_path != NULL, ctx->force || ctx->dry_run, &r->how, msg,
				  sizeof(msg));
	if (err) {
		/* The refusal names the file system itself; a failure to start the journal does not. */
		if (err == EXT4FS_E_NO_JOURNAL)
			fprintf(stderr, "%s: %s\n", DF_PROG, msg);
		else
			fprintf(stderr, "%s: %s: %s\n", DF_PROG, ctx->device, msg);
		return DF_EXIT_ERROR;
	}
	return 0;
}

/* Everything committed and home; then the handle writes through again. */
static int finish_writing(struct run *r)
{
	struct df_ctx *ctx = r->ctx;
	int err = 0;

	if (ext4fs_txn_active(ctx->fs))
		err = ext4fs_txn_stop(ctx->fs);
	if (!err)
		err = ext4fs_flush(ctx->fs);
	if (err) {
		df_error(ctx, err, "while writing out %s", ctx->device);
		return DF_EXIT_ERROR;
	}
	return 0;
}

/* The dir or free mode's pass; its moves count in the run's totals. */
static int layout(struct run *r)
{
	int rc = df_layout(r->ctx, r->reserve, &r->start, &r->layout);

	r->layout_ran = 1;
	r->blocks_moved += r->layout.blocks_moved;
	r->bytes_copied += r->layout.bytes_copied;
	r->transactions += r->layout.transactions;
	return rc;
}

static void run_free(struct run *r)
{
	df_files_free(&r->files);
	df_figures_free(&r->before);
	df_figures_free(&r->after);
	for (size_t i = 0; i < r->nleft; i++)
		free(r->left[i].path);
	free(r->left);
	free(r->moves);
	free(r->want_room);
	df_inoset_free(&r->layout.laid_out);
}

/* -v: every file and directory named by path, from one walk of each tree. */
static int name_everything(struct run *r, struct df_names *names)
{
	struct df_ctx *ctx = r->ctx;

	for (int i = 0; i < ctx->ntargets; i++) {
		const struct df_target *t = &ctx->targets[i];
		int err = df_names_add(ctx->fs, t->ino, t->walk_path, names);

		if (err) {
			df_error(ctx, err, "while listing the names under %s", t->name);
			return DF_EXIT_ERROR;
		}
	}
	ctx->names = names;
	return 0;
}

int df_run(struct df_ctx *ctx)
{
	struct run r = { .ctx = ctx };
	struct df_names names = { 0 };
	int rc = 0, status;

	clock_gettime(CLOCK_MONOTONIC, &r.start);
	df_figures_init(&r.before);
	df_figures_init(&r.after);
	if (ctx->dry_run && !ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) && !ctx->undo_path &&
	    !ctx->force)
		fprintf(stderr, "%s: note: %s has no journal: a run will need an undo file (-z FILE) or -f\n",
			DF_PROG, ctx->device);
	rc = open_for_writing(&r);
	if (!rc) {
		r.reserve = reserve_of(ctx->fs);
		rc = measure(&r, 1, &r.before, &r.free_before);
	}
	if (!rc && ctx->verbose)
		rc = name_everything(&r, &names);
	/* The tree's layout first: it leaves every file it moves contiguous, so file mode has less to do. */
	if (!rc && (ctx->modes & DF_MODE_DIR))
		rc = layout(&r);
	if (!rc)
		rc = df_files_collect(ctx, &r.files);
	if (!rc && (ctx->modes & DF_MODE_FILE) && !r.layout.stopped_early)
		rc = each_file(&r);
	/*
	 * Without the tree's layout, free mode makes room for the files file mode left for want of free
	 * space (with it, the layout made room already, and moving victims out of it would undo it),
	 * then compacts: compaction leaves fragmented files where they are, and gathers what the moves
	 * before left behind.
	 */
	if (!rc && (ctx->modes & DF_MODE_FREE) && (ctx->modes & DF_MODE_FILE) && !(ctx->modes & DF_MODE_DIR) &&
	    !r.stopped_early)
		rc = make_room(&r);
	if (!rc && (ctx->modes & DF_MODE_FREE) && !(ctx->modes & DF_MODE_DIR) && !r.stopped_early)
		rc = layout(&r);
	/* What was moved before an error is on the disk: commit it and say so (a rehearsal: in memory). */
	if (ctx->fs && (ext4fs_fs_flags(ctx->fs) & EXT4FS_OPEN_RW)) {
		int frc = finish_writing(&r);
		rc = rc ? rc : frc;
	}
	if (!rc) {
		df_figures_free(&r.after);
		rc = measure(&r, 3, &r.after, &r.free_after);
		r.have_after = !rc;
	}
	r.seconds = since(&r.start);
	if (ctx->fs && (r.examined || !rc)) {
		find_names(&r);
		print_summary(&r);
	}
	status = rc ? rc : r.left_above ? DF_EXIT_LEFT : DF_EXIT_OK;
	if (ctx->json && ctx->fs && write_json(&r, status))
		status = DF_EXIT_ERROR;
	run_free(&r);
	ctx->names = NULL;
	df_names_free(&names);
	return status;
}
