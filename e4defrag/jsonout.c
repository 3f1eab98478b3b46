/*
 * jsonout.c - defrag4fs --json: the figures of figures.h and free space,
 * numbers as numbers.  The score is given both as computed and as e4defrag
 * prints it ("%.0f"), so a script can compare either.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "defrag4fs.h"
#include "support/json.h"

void df_json_head(struct json *j, const struct df_ctx *ctx, const char *mode)
{
	json_string(j, "program", DF_PROG);
	json_string(j, "version", PACKAGE_VERSION);
	json_string(j, "device", ctx->device);
	json_string(j, "mode", mode);
	json_uint(j, "block_size", ext4fs_geom(ctx->fs)->block_size);
}

void df_json_figures(struct json *j, const char *key, const struct df_figures *f, uint32_t block_size,
		     const struct ext4fs_frag_free *ff)
{
	struct ext4fs_frag_score_summary sum;
	int have = !ext4fs_frag_score_summary(&f->score, block_size, &sum);

	json_object_begin(j, key);
	json_object_begin(j, "e4defrag");
	json_uint(j, "files", f->score.files);
	json_uint(j, "blocks", f->score.blocks);
	json_uint(j, "total_extents", f->score.now_extents);
	json_uint(j, "best_extents", f->score.best_extents);
	if (have) {
		char printed[32];
		snprintf(printed, sizeof(printed), "%.0f", (double)sum.score);
		json_uint(j, "size_per_extent_kb", sum.size_per_extent_kb);
		json_double(j, "score", (double)sum.score);
		json_uint(j, "score_printed", strtoull(printed, NULL, 10));
		json_bool(j, "needs_defrag", sum.needs_defrag);
	} else {
		json_null(j, "size_per_extent_kb");
		json_null(j, "score");
		json_null(j, "score_printed");
		json_bool(j, "needs_defrag", 0);
	}
	json_object_end(j);
	json_uint(j, "files", f->files);
	json_uint(j, "files_with_blocks", f->files_with_blocks);
	json_uint(j, "blocks", f->blocks);
	json_uint(j, "extents", f->extents);
	json_uint(j, "ideal_extents", f->ideal_extents);
	json_uint(j, "files_above_ideal", f->files_above_ideal);
	json_uint(j, "dirs", f->dirs);
	json_uint(j, "dirs_with_files", f->dirs_with_files);
	json_double(j, "groups_per_dir_mean", df_groups_per_dir(f));
	json_uint(j, "groups_per_dir_max", f->groups_max);
	json_double(j, "dir_file_distance_mean", df_dir_distance(f));
	json_object_begin(j, "tree_read");
	json_uint(j, "dirs", f->tree.dirs);
	json_uint(j, "files", f->tree.files);
	json_uint(j, "blocks", f->tree.blocks);
	json_uint(j, "runs", f->tree.runs);
	json_uint(j, "seek_blocks", f->tree.seek_blocks);
	json_object_end(j);
	if (ff) {
		json_uint(j, "free_extents", ff->extents);
		json_uint(j, "free_blocks", ff->sum);
		json_uint(j, "free_large_extents", ff->large_extents);
		json_double(j, "free_share_large", ff->sum ? (double)ff->large_blocks / (double)ff->sum : 0.0);
	}
	json_object_end(j);
}

void df_json_top(struct json *j, const char *key, const struct df_figures *f)
{
	json_array_begin(j, key);
	for (int i = 0; i < DF_TOP && f->top[i].path; i++) {
		const struct ext4fs_frag_score_row *r = &f->top[i].row;
		json_object_begin(j, NULL);
		json_string(j, "path", f->top[i].path);
		json_uint(j, "now", r->now);
		json_uint(j, "best", r->best);
		json_uint(j, "size_per_extent_kb", r->size_per_extent_kb);
		json_double(j, "ratio", (double)r->ratio);
		json_object_end(j);
	}
	json_array_end(j);
}

int df_json_close(struct df_ctx *ctx, struct json *j)
{
	FILE *f = ctx->json;
	int bad;

	json_object_end(j);
	json_finish(j);
	ctx->json = NULL;
	bad = ferror(f);
	if (f == stdout)
		bad |= fflush(f) != 0;
	else
		bad |= fclose(f) != 0;
	if (bad) {
		fprintf(stderr, "%s: %s while writing %s\n", DF_PROG, strerror(errno ? errno : EIO), ctx->json_path);
		return DF_EXIT_ERROR;
	}
	return 0;
}
