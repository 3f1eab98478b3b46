/* files.c - the files a run examines (see files.h). */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "defrag4fs.h"
#include "ext4fs/array.h"
#include "ext4fs/errors.h"
#include "ext4fs/scan.h"
#include "files.h"
#include "inoset.h"
#include "walk.h"

struct collect {
	struct df_files *out;
	struct df_inoset seen;     /* across targets: a file under two paths given is examined once */
};

static int add(struct df_files *out, uint32_t ino, const char *path)
{
	struct df_file *v = ext4fs_array_grow(out->v, &out->cap, out->n + 1, sizeof(*v), 256);
	char *copy = NULL;

	if (!v)
		return EXT4FS_E_NO_MEMORY;
	out->v = v;
	if (path && !(copy = strdup(path)))
		return EXT4FS_E_NO_MEMORY;
	out->v[out->n].ino = ino;
	out->v[out->n].path = copy;
	out->n++;
	return 0;
}

static int from_walk(const struct df_walk_entry *e, void *arg)
{
	struct collect *c = arg;
	int fresh;

	if (!EXT4FS_ISREG(e->inode->i_mode) || !e->first_visit)
		return 0;
	fresh = df_inoset_add(&c->seen, e->ino);
	if (fresh < 0)
		return EXT4FS_E_NO_MEMORY;
	return fresh ? add(c->out, e->ino, e->path) : 0;
}

static int from_scan(struct df_ctx *ctx, struct df_files *out)
{
	const struct ext4fs_geom *geo = ext4fs_geom(ctx->fs);
	struct ext4fs_scan *scan = NULL;
	struct ext4fs_inode inode;
	const unsigned char *raw;
	uint32_t ino;
	int err;

	err = ext4fs_scan_open(ctx->fs, 0, geo->group_count - 1, 0, &scan);
	while (!err && (err = ext4fs_scan_next(scan, &ino, &inode, &raw, NULL)) > 0) {
		err = 0;
		if (ino >= geo->first_ino && inode.i_links_count && EXT4FS_ISREG(inode.i_mode))
			err = add(out, ino, NULL);
	}
	ext4fs_scan_close(scan);
	if (err < 0) {
		df_error(ctx, err, "while reading the inode tables of %s", ctx->device);
		return DF_EXIT_ERROR;
	}
	return 0;
}

int df_files_collect(struct df_ctx *ctx, struct df_files *out)
{
	struct collect c = { .out = out };
	int err = 0;

	if (ctx->targets[0].kind == DF_KIND_DEVICE)
		return from_scan(ctx, out);
	for (int i = 0; i < ctx->ntargets && !err; i++) {
		const struct df_target *t = &ctx->targets[i];
		if ((err = df_walk(ctx->fs, t->ino, t->walk_path, from_walk, &c)))
			df_error(ctx, err, "while listing the files under %s", t->name);
	}
	df_inoset_free(&c.seen);
	return err ? DF_EXIT_ERROR : 0;
}

void df_files_free(struct df_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].path);
	free(f->v);
	memset(f, 0, sizeof(*f));
}
