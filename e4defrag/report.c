/*
 * report.c - defrag4fs -c: for each target, e4defrag -c's report (its
 * columns, wording, arithmetic and ranking: e2fsprogs 1.47's text is an
 * interface that scripts parse), then the figures e4defrag cannot show;
 * at the end the free space as e2freefrag prints it.  Nothing is written
 * to the file system.
 *
 * Differences from e4defrag -c, on purpose:
 *  - names are paths inside the image ("/dir/file"), or below the path
 *    given, not below a mount point;
 *  - -v's per-file rows are plain lines, without the escape sequences that
 *    make e4defrag's redraw in place, and only for the files it counts;
 *    a single file's -v list of extents is not printed (the row is);
 *  - the version banner goes to stderr, as the other tools' do.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "defrag4fs.h"
#include "ext4fs/errors.h"
#include "support/freefrag.h"
#include "support/json.h"

#define TABLE_HEAD "%-40s%10s/%-10s%9s\n"

struct verbose_rows {
	FILE *out;
	uint64_t total;         /* names under the target: e4defrag's "[i/N]" */
	FILE *dirs;             /* per-directory lines, printed after e4defrag's part */
	struct ext4fs_frag_score_row single;  /* a file target's row */
	char *dirs_text;
	size_t dirs_len;
	struct df_ctx *ctx;
};

static void row_line(FILE *out, const char *name, const struct ext4fs_frag_score_row *r, size_t width)
{
	if (strlen(name) > width)
		fprintf(out, "%s\n%*" PRIu64 "/%-10" PRIu64 "%6" PRIu64 " KB\n", name, (int)width + 10, r->now,
			r->best, r->size_per_extent_kb);
	else
		fprintf(out, "%-*s%10" PRIu64 "/%-10" PRIu64 "%6" PRIu64 " KB\n", (int)width, name, r->now, r->best,
			r->size_per_extent_kb);
}

static void file_row(void *arg, uint64_t index, const char *path, const struct ext4fs_frag_score_row *row)
{
	struct verbose_rows *v = arg;
	char *label = NULL;

	if (!v->total) {
		v->single = *row;
		return;
	}
	if (asprintf(&label, "[%" PRIu64 "/%" PRIu64 "]%s", index, v->total, path) < 0)
		return;
	df_progress_clear(v->ctx);
	row_line(v->out, label, row, 40);
	free(label);
}

static void dir_row(void *arg, const char *path, const struct ext4fs_frag_dir *d)
{
	struct verbose_rows *v = arg;

	if (!v->dirs)
		return;
	if (strlen(path) > 40)
		fprintf(v->dirs, "%s\n%40s", path, "");
	else
		fprintf(v->dirs, "%-40s", path);
	if (d->files && d->dir_first_pblk)
		fprintf(v->dirs, "%6" PRIu64 "%8" PRIu64 "%12.1f\n", d->files, d->groups, d->mean_distance);
	else
		fprintf(v->dirs, "%6" PRIu64 "%8" PRIu64 "%12s\n", d->files, d->groups, "-");
}

static void tick(void *arg)
{
	struct verbose_rows *v = arg;

	df_progress_tick(v->ctx);
}

/* e4defrag's lines from the empty one before "Total/best extents" to the verdict. */
static void print_summary(FILE *out, const struct df_target *t, const struct ext4fs_frag_score_summary *s)
{
	static const char *const what[] = { "device", "directory", "file" };

	fprintf(out, "\n Total/best extents\t\t\t\t%" PRIu64 "/%" PRIu64 "\n"
		" Average size per extent\t\t\t%" PRIu64 " KB\n"
		" Fragmentation score\t\t\t\t%.0f\n", s->total_extents, s->best_extents, s->size_per_extent_kb,
		(double)s->score);
	fprintf(out, " [0-30 no problem: 31-55 a little bit fragmented: 56- needs defrag]\n");
	fprintf(out, " This %s (%s) %s\n", what[t->kind], t->name,
		s->needs_defrag ? "needs defragmentation." : "does not need defragmentation.");
}

static void print_e4defrag(struct df_ctx *ctx, const struct df_target *t, const struct df_figures *f,
			   const struct verbose_rows *v)
{
	uint32_t bs = ext4fs_geom(ctx->fs)->block_size;
	struct ext4fs_frag_score_summary sum;
	int have = !ext4fs_frag_score_summary(&f->score, bs, &sum);
	FILE *out = ctx->out;

	if (t->kind == DF_KIND_FILE) {
		if (!have) {
			fprintf(out, " This file(%s) can't be defragmented.\n", t->name);
		} else {
			fprintf(out, TABLE_HEAD, "<File>", "now", "best", "size/ext");
			row_line(out, t->name, &v->single, 40);
			print_summary(out, t, &sum);
		}
		fprintf(out, " Done.\n");
		return;
	}
	if (ctx->verbose)
		fputc('\n', out);
	if (!have) {
		fprintf(out, " In this %s(%s), none can be defragmented.\n",
			t->kind == DF_KIND_DEVICE ? "device" : "directory", t->name);
		fprintf(out, " Done.\n");
		return;
	}
	fprintf(out, TABLE_HEAD, "<Fragmented files>", "now", "best", "size/ext");
	for (int i = 0; i < DF_TOP && f->top[i].path; i++) {
		char *label = NULL;
		if (asprintf(&label, "%d. %s", i + 1, f->top[i].path) < 0)
			break;
		/* e4defrag measures the name alone against 37 columns; "N. " takes the other 3. */
		if (strlen(f->top[i].path) > 37)
			fprintf(out, "%s\n%50" PRIu64 "/%-10" PRIu64 "%6" PRIu64 " KB\n", label, f->top[i].row.now,
				f->top[i].row.best, f->top[i].row.size_per_extent_kb);
		else
			row_line(out, label, &f->top[i].row, 40);
		free(label);
	}
	print_summary(out, t, &sum);
	fprintf(out, " Done.\n");
}

static void print_beyond(struct df_ctx *ctx, const struct df_target *t, const struct df_figures *f,
			 const struct verbose_rows *v)
{
	FILE *out = ctx->out;

	if (v->dirs_len) {
		fprintf(out, "\n%-40s%6s%8s%12s\n", "<Directory>", "files", "groups", "distance");
		fwrite(v->dirs_text, 1, v->dirs_len, out);
	}
	fprintf(out, "\n Files above their ideal extent count\t\t%" PRIu64 "/%" PRIu64 "\n", f->files_above_ideal,
		f->files);
	fprintf(out, " Extents/ideal extents\t\t\t\t%" PRIu64 "/%" PRIu64 "\n", f->extents, f->ideal_extents);
	if (t->kind == DF_KIND_FILE)
		return;
	fprintf(out, " Directories with files\t\t\t\t%" PRIu64 "/%" PRIu64 "\n", f->dirs_with_files, f->dirs);
	fprintf(out, " Block groups per directory, mean/max\t\t%.2f/%" PRIu64 "\n", df_groups_per_dir(f),
		f->groups_max);
	fprintf(out, " Directory-to-file distance, mean\t\t%.1f blocks\n", df_dir_distance(f));
	fprintf(out, " Tree-read seek distance\t\t\t%" PRIu64 " blocks in %" PRIu64 " runs\n", f->tree.seek_blocks,
		f->tree.runs);
}

/* Measure and print one target; its figures stay in *f for the JSON. */
static int report_target(struct df_ctx *ctx, const struct df_target *t, struct df_figures *f)
{
	struct verbose_rows v = { .out = ctx->out, .ctx = ctx };
	struct df_measure_hooks hooks = { .arg = &v, .tick = tick };
	int err = 0;

	if (ctx->verbose && t->kind != DF_KIND_FILE) {
		if ((err = df_count_names(ctx->fs, t->ino, t->walk_path, &v.total)))
			goto out;
		fprintf(ctx->out, TABLE_HEAD, "<File>", "now", "best", "size/ext");
		hooks.file = file_row;
		hooks.dir = dir_row;
		v.dirs = open_memstream(&v.dirs_text, &v.dirs_len);
		if (!v.dirs) {
			err = EXT4FS_E_NO_MEMORY;
			goto out;
		}
	} else if (t->kind == DF_KIND_FILE) {
		/* total 0: file_row() keeps the row instead of printing it. */
		hooks.file = file_row;
	}
	err = df_measure(ctx->fs, t->ino, t->walk_path, &hooks, f);
	if (v.dirs)
		fclose(v.dirs);
	if (err)
		goto out;
	print_e4defrag(ctx, t, f, &v);
	print_beyond(ctx, t, f, &v);
out:
	free(v.dirs_text);
	if (err)
		df_error(ctx, err, "while measuring %s", t->name);
	return err ? DF_EXIT_ERROR : 0;
}

int df_report(struct df_ctx *ctx)
{
	const struct ext4fs_geom *geo = ext4fs_geom(ctx->fs);
	struct ext4fs_frag_free ff;
	struct json j;
	int rc = 0, err;

	if (ctx->json) {
		json_init(&j, ctx->json);
		json_object_begin(&j, NULL);
		df_json_head(&j, ctx, "report");
		json_array_begin(&j, "targets");
	}
	df_progress_begin(ctx, 1, df_inodes_used(ctx));
	for (int i = 0; i < ctx->ntargets && !rc; i++) {
		const struct df_target *t = &ctx->targets[i];
		static const char *const kinds[] = { "device", "directory", "file" };
		struct df_figures f;

		if (i)
			fputc('\n', ctx->out);
		df_figures_init(&f);
		rc = report_target(ctx, t, &f);
		if (!rc && ctx->json) {
			json_object_begin(&j, NULL);
			json_string(&j, "name", t->name);
			json_string(&j, "kind", kinds[t->kind]);
			df_json_figures(&j, "figures", &f, geo->block_size, NULL);
			df_json_top(&j, "fragmented_files", &f);
			json_object_end(&j);
		}
		df_figures_free(&f);
	}
	df_progress_end(ctx);
	if (rc)
		return rc;
	if ((err = ext4fs_frag_free_scan(ctx->fs, NULL, 0, 0, &ff))) {
		df_error(ctx, err, "while reading the block bitmap of %s", ctx->device);
		return DF_EXIT_ERROR;
	}
	fputc('\n', ctx->out);
	sup_freefrag_print(ctx->out, ctx->device, geo, &ff, geo->free_blocks_count);
	if (ctx->json) {
		json_array_end(&j);
		json_object_begin(&j, "free_space");
		sup_freefrag_json(&j, geo, &ff, geo->free_blocks_count);
		json_object_end(&j);
		rc = df_json_close(ctx, &j);
	}
	return rc;
}
