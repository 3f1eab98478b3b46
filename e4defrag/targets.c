/*
 * targets.c - the paths named after the device, looked up inside the
 * image from its root (a relative path too: the image has no working
 * directory).  Each must be a directory or a regular file; any that is
 * not is an error naming it, before anything is measured or written.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "defrag4fs.h"
#include "ext4fs/errors.h"
#include "ext4fs/inode.h"
#include "ext4fs/namei.h"

/* name without trailing slashes; "/" (or only slashes) stays "/". */
static char *walk_path_of(const char *name)
{
	size_t len = strlen(name);
	char *p;

	while (len > 1 && name[len - 1] == '/')
		len--;
	p = malloc(len + 1);
	if (p) {
		memcpy(p, name, len);
		p[len] = '\0';
	}
	return p;
}

static int resolve_one(struct df_ctx *ctx, const char *name, struct df_target *t)
{
	struct ext4fs_inode inode;
	int err;

	t->name = name;
	if ((err = ext4fs_namei(ctx->fs, EXT4FS_ROOT_INO, EXT4FS_ROOT_INO, name, 1, &t->ino))) {
		if (err == EXT4FS_E_NOT_FOUND)
			fprintf(stderr, "%s: %s: no such file or directory in %s\n", DF_PROG, name, ctx->device);
		else
			df_error(ctx, err, "while looking up %s in %s", name, ctx->device);
		return DF_EXIT_ERROR;
	}
	if ((err = ext4fs_inode_read(ctx->fs, t->ino, &inode))) {
		df_error(ctx, err, "while reading the inode of %s", name);
		return DF_EXIT_ERROR;
	}
	if (EXT4FS_ISDIR(inode.i_mode)) {
		t->kind = DF_KIND_DIR;
	} else if (EXT4FS_ISREG(inode.i_mode)) {
		t->kind = DF_KIND_FILE;
	} else {
		fprintf(stderr, "%s: %s: not a regular file or directory\n", DF_PROG, name);
		return DF_EXIT_ERROR;
	}
	if (!(t->walk_path = walk_path_of(name))) {
		fprintf(stderr, "%s: out of memory\n", DF_PROG);
		return DF_EXIT_ERROR;
	}
	return 0;
}

int df_targets_resolve(struct df_ctx *ctx)
{
	int n = ctx->npaths ? ctx->npaths : 1;

	ctx->targets = calloc((size_t)n, sizeof(*ctx->targets));
	if (!ctx->targets) {
		fprintf(stderr, "%s: out of memory\n", DF_PROG);
		return DF_EXIT_ERROR;
	}
	ctx->ntargets = n;
	if (!ctx->npaths) {
		struct df_target *t = &ctx->targets[0];
		t->name = ctx->device;
		t->ino = EXT4FS_ROOT_INO;
		t->kind = DF_KIND_DEVICE;
		t->walk_path = walk_path_of("/");
		return t->walk_path ? 0 : DF_EXIT_ERROR;
	}
	for (int i = 0; i < n; i++) {
		int rc = resolve_one(ctx, ctx->paths[i], &ctx->targets[i]);
		if (rc)
			return rc;
	}
	return 0;
}

void df_targets_free(struct df_ctx *ctx)
{
	for (int i = 0; i < ctx->ntargets; i++)
		free(ctx->targets[i].walk_path);
	free(ctx->targets);
	ctx->targets = NULL;
	ctx->ntargets = 0;
}
