/*
 * defrag.c - laying out sets of files in order (see defrag.h for the rule
 * and why it is idempotent on its own result).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/defrag.h"
#include "ext4fs/errors.h"
#include "ext4fs/frag.h"
#include "ext4fs/relocate.h"
#include "blockmap_internal.h"
#include "fs_internal.h"

struct order {
	uint32_t *inos;
	size_t n, cap;
	struct map_blkset files_seen;   /* regular files with more than one link, met already */
};

static int add_member(uint32_t ino, const struct ext4fs_inode *inode, void *arg)
{
	struct order *o = arg;
	uint32_t *grown;

	if (EXT4FS_ISREG(inode->i_mode) && inode->i_links_count > 1) {
		int seen = ext4fs__map_blkset_add(&o->files_seen, ino);
		if (seen < 0)
			return seen;
		if (seen == 1)
			return 0;
	}
	if (!(grown = ext4fs_array_grow(o->inos, &o->cap, o->n + 1, sizeof(*o->inos), 64)))
		return EXT4FS_E_NO_MEMORY;
	o->inos = grown;
	o->inos[o->n++] = ino;
	return 0;
}

int ext4fs_defrag_tree_order(struct ext4fs_fs *fs, uint32_t root, uint32_t **inos, size_t *n)
{
	struct order o = { 0 };
	int err = ext4fs_frag_tree_walk(fs, root, add_member, &o, NULL);

	ext4fs__map_blkset_free(&o.files_seen);
	if (err) {
		free(o.inos);
		*inos = NULL;
		*n = 0;
		return err == EXT4FS_E_NO_MEMORY ? ext4fs__fs_fail(fs, err, "no memory to list the tree") : err;
	}
	*inos = o.inos;
	*n = o.n;
	return 0;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* The block after the member's highest data block. */
static uint64_t member_end(const struct ext4fs_reloc_file *f)
{
	uint64_t end = 0;

	for (size_t i = 0; i < f->nruns; i++)
		if (f->runs[i].pblk + f->runs[i].len > end)
			end = f->runs[i].pblk + f->runs[i].len;
	return end;
}

/*
 * Place one member after the cursor (*have_cursor, *cursor) as defrag.h
 * says, filling *step; the cursor moves to its end.
 */
static int place(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, const struct ext4fs_defrag_opts *o,
		 uint64_t window, int *have_cursor, uint64_t *cursor, struct ext4fs_defrag_step *step)
{
	struct ext4fs_prun *t = NULL;
	uint64_t first, now_dist;
	size_t n = 0;
	int contiguous, err;

	if (f->skip != EXT4FS_RELOC_MOVABLE) {
		step->why = f->skip;
		goto stays;
	}
	first = f->runs[0].pblk;
	contiguous = f->extents <= ext4fs_reloc_fewest_extents(f);
	now_dist = *have_cursor ? distance(first, *cursor) : 0;
	if (contiguous && now_dist <= window)
		goto stays;
	err = ext4fs_reloc_find_space(fs, f->blocks, *have_cursor ? *cursor : first, 1, o->reserve,
				      EXT4FS_RELOC_NEAR, &t, &n);
	if (err == EXT4FS_E_NO_SPACE) {
		step->why = EXT4FS_RELOC_NO_SPACE;
		goto stays;
	}
	if (err)
		return err;
	if ((contiguous && distance(t[0].pblk, *cursor) >= now_dist) || ext4fs_reloc_predict(f, t, n) > f->extents) {
		free(t);
		goto stays;
	}
	err = ext4fs_reloc_move(fs, f, t, n, &step->res);
	free(t);
	if (err)
		return err;
	step->moved = 1;
stays:
	if (f->blocks) {
		*have_cursor = 1;
		*cursor = member_end(f);
	}
	return 0;
}

int ext4fs_defrag_pack(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, const struct ext4fs_defrag_opts *o)
{
	uint64_t window = o->window ? o->window : ext4fs_geom(fs)->blocks_per_group;
	uint64_t cursor = 0;
	int have_cursor = 0;

	for (size_t i = 0; i < n; i++) {
		struct ext4fs_defrag_step step = { .ino = inos[i], .why = EXT4FS_RELOC_MOVABLE };
		struct ext4fs_reloc_file f;
		int err = ext4fs_reloc_load(fs, inos[i], &f);

		if (!err)
			err = place(fs, &f, o, window, &have_cursor, &cursor, &step);
		ext4fs_reloc_release(&f);
		if (!err && o->each)
			err = o->each(&step, o->arg);
		if (err)
			return err;
	}
	return 0;
}
