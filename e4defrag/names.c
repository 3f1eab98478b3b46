/* names.c - paths by inode number (see names.h). */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/errors.h"
#include "ext4fs/inode.h"
#include "names.h"
#include "walk.h"

static int add_name(const struct df_walk_entry *e, void *arg)
{
	struct df_names *out = arg;
	struct df_name *v;

	if (!e->first_visit || !(EXT4FS_ISREG(e->inode->i_mode) || EXT4FS_ISDIR(e->inode->i_mode) ||
				 EXT4FS_ISLNK(e->inode->i_mode)))
		return 0;   /* what has no blocks of its own is never moved, so never named */
	if (!(v = ext4fs_array_grow(out->v, &out->cap, out->n + 1, sizeof(*v), 256)))
		return EXT4FS_E_NO_MEMORY;
	out->v = v;
	if (!(v[out->n].path = strdup(e->path)))
		return EXT4FS_E_NO_MEMORY;
	v[out->n++].ino = e->ino;
	return 0;
}

static int by_ino(const void *a, const void *b)
{
	const struct df_name *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int df_names_add(struct ext4fs_fs *fs, uint32_t start, const char *start_path, struct df_names *out)
{
	int err = df_walk(fs, start, start_path, add_name, out);

	/* Stable for equal numbers is not needed: bsearch takes any, and every copy is a true name. */
	if (!err && out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_ino);
	return err;
}

const char *df_names_get(const struct df_names *names, uint32_t ino)
{
	struct df_name key = { .ino = ino };
	const struct df_name *hit;

	if (!names || !names->n)
		return NULL;
	hit = bsearch(&key, names->v, names->n, sizeof(*names->v), by_ino);
	return hit ? hit->path : NULL;
}

void df_names_print(FILE *out, const struct df_names *names, uint32_t ino, const char *path)
{
	if (!path)
		path = df_names_get(names, ino);
	if (path)
		fputs(path, out);
	else
		fprintf(out, "<%" PRIu32 ">", ino);
}

void df_names_free(struct df_names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i].path);
	free(names->v);
	memset(names, 0, sizeof(*names));
}
