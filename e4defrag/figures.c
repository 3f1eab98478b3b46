/* figures.c - measuring a tree (see figures.h). */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "figures.h"
#include "walk.h"

struct measure {
	struct ext4fs_fs *fs;
	struct df_figures *f;
	const struct df_measure_hooks *hooks;
};

void df_figures_init(struct df_figures *f)
{
	memset(f, 0, sizeof(*f));
	ext4fs_frag_score_init(&f->score);
}

void df_figures_free(struct df_figures *f)
{
	for (int i = 0; i < DF_TOP; i++) {
		free(f->top[i].path);
		f->top[i].path = NULL;
	}
}

/*
 * e4defrag's ranking: the file goes before the first entry whose ratio is
 * not above its own, an empty slot counting as ratio 0, so among equals
 * the file met last comes first, and a file with a negative ratio never
 * enters.  Copying the rule is what makes the two lists agree.
 */
static int rank(struct df_figures *f, const char *path, const struct ext4fs_frag_score_row *row)
{
	for (int i = 0; i < DF_TOP; i++) {
		float held = f->top[i].path ? f->top[i].row.ratio : 0.0f;
		char *copy;

		if (!(row->ratio >= held))
			continue;
		if (!(copy = strdup(path)))
			return -ENOMEM;
		free(f->top[DF_TOP - 1].path);
		memmove(&f->top[i + 1], &f->top[i], (size_t)(DF_TOP - 1 - i) * sizeof(f->top[0]));
		f->top[i].path = copy;
		f->top[i].row = *row;
		return 0;
	}
	return 0;
}

static int add_file(struct measure *m, const struct df_walk_entry *e)
{
	struct df_figures *f = m->f;
	struct ext4fs_frag_file ff;
	int err;

	if ((err = ext4fs_frag_file(m->fs, e->ino, e->inode, &ff)))
		return err;
	if (ext4fs_frag_score_counts(e->inode, &ff)) {
		struct ext4fs_frag_score_row row;
		uint64_t before = f->score.files;
		ext4fs_frag_score_add(&f->score, &ff, ext4fs_geom(m->fs)->block_size, &row);
		if (f->score.files != before) {
			if ((err = rank(f, e->path, &row)))
				return err;
			if (m->hooks && m->hooks->file)
				m->hooks->file(m->hooks->arg, f->entries, e->path, &row);
		}
	}
	if (!e->first_visit)
		return 0;
	f->files++;
	f->blocks += ff.blocks;
	f->extents += ff.extents;
	f->ideal_extents += ff.ideal;
	if (ff.blocks)
		f->files_with_blocks++;
	if (ff.extents > ff.ideal)
		f->files_above_ideal++;
	return 0;
}

static int add_dir(struct measure *m, const struct df_walk_entry *e)
{
	struct df_figures *f = m->f;
	struct ext4fs_frag_dir d;
	int err;

	if ((err = ext4fs_frag_dir(m->fs, e->ino, e->inode, &d)))
		return err;
	f->dirs++;
	if (d.files) {
		f->dirs_with_files++;
		f->groups_sum += d.groups;
		if (d.groups > f->groups_max)
			f->groups_max = d.groups;
		if (d.dir_first_pblk) {
			f->distance_files += d.files;
			f->distance_sum += d.distance_sum;
		}
	}
	if (m->hooks && m->hooks->dir)
		m->hooks->dir(m->hooks->arg, e->path, &d);
	return 0;
}

static int measure_one(const struct df_walk_entry *e, void *arg)
{
	struct measure *m = arg;

	m->f->entries++;
	if (m->hooks && m->hooks->tick)
		m->hooks->tick(m->hooks->arg);
	if (EXT4FS_ISREG(e->inode->i_mode))
		return add_file(m, e);
	if (EXT4FS_ISDIR(e->inode->i_mode))
		return add_dir(m, e);
	return 0;
}

int df_measure(struct ext4fs_fs *fs, uint32_t start, const char *path, const struct df_measure_hooks *hooks,
	       struct df_figures *f)
{
	struct measure m = { .fs = fs, .f = f, .hooks = hooks };
	struct ext4fs_frag_tree t;
	struct ext4fs_inode inode;
	int err;

	if ((err = df_walk(fs, start, path, measure_one, &m)))
		return err;
	if ((err = ext4fs_inode_read(fs, start, &inode)))
		return err;
	if (!EXT4FS_ISDIR(inode.i_mode))
		return 0;
	if ((err = ext4fs_frag_tree(fs, start, &t)))
		return err;
	f->tree.dirs += t.dirs;
	f->tree.files += t.files;
	f->tree.blocks += t.blocks;
	f->tree.runs += t.runs;
	f->tree.seek_blocks += t.seek_blocks;
	f->tree.dirs_skipped += t.dirs_skipped;
	return 0;
}

static int count_one(const struct df_walk_entry *e, void *arg)
{
	(void)e;
	(*(uint64_t *)arg)++;
	return 0;
}

int df_count_names(struct ext4fs_fs *fs, uint32_t start, const char *path, uint64_t *count)
{
	*count = 0;
	return df_walk(fs, start, path, count_one, count);
}

double df_groups_per_dir(const struct df_figures *f)
{
	return f->dirs_with_files ? (double)f->groups_sum / (double)f->dirs_with_files : 0.0;
}

double df_dir_distance(const struct df_figures *f)
{
	return f->distance_files ? (double)f->distance_sum / (double)f->distance_files : 0.0;
}
