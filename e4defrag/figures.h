/*
 * figures.h - how fragmented a tree is: e4defrag -c's sums and its list of
 * the most fragmented files, and what e4defrag cannot see (extents against
 * the shared ideal, directory locality, the seeks of reading the tree).
 * defrag4fs -c prints them; a run measures them before and after.
 *
 * Two ways of counting on purpose: e4defrag's sums count every name of a
 * hard-linked file (nftw meets each), so they stay equal to e4defrag's;
 * the figures of our own count each file once.
 */
#ifndef DEFRAG4FS_FIGURES_H
#define DEFRAG4FS_FIGURES_H

#include <stdint.h>
#include <stdio.h>
#include "ext4fs/frag.h"
#include "ext4fs/fs.h"

/* e4defrag -c lists this many of the most fragmented files. */
#define DF_TOP 5

struct df_top {
	char *path;                          /* NULL: the slot is empty */
	struct ext4fs_frag_score_row row;
};

struct df_figures {
	struct ext4fs_frag_score score;      /* e4defrag's sums, a file once per name */
	struct df_top top[DF_TOP];           /* e4defrag's ranking, most fragmented first */
	uint64_t entries;                    /* names walked, the starts included */
	uint64_t files;                      /* regular files, each once */
	uint64_t files_with_blocks;
	uint64_t blocks;                     /* their data blocks */
	uint64_t extents;                    /* their extents (frag.h's count) */
	uint64_t ideal_extents;              /* sum of ceil(blocks / 32768) */
	uint64_t files_above_ideal;          /* files in more extents than that */
	uint64_t dirs;                       /* directories walked */
	uint64_t dirs_with_files;            /* of which hold a regular file with blocks */
	uint64_t groups_sum, groups_max;     /* block groups their files start in */
	uint64_t distance_files;             /* (directory, file) pairs measured for distance */
	uint64_t distance_sum;               /* blocks from a directory's first block to its files' */
	struct ext4fs_frag_tree tree;        /* the seeks of reading each start that is a directory */
};

/* What a caller may watch while a tree is measured; any member may be NULL. */
struct df_measure_hooks {
	void *arg;
	/* A file e4defrag counts, with its row; index counts every name walked from 1. */
	void (*file)(void *arg, uint64_t index, const char *path, const struct ext4fs_frag_score_row *row);
	/* A directory's locality. */
	void (*dir)(void *arg, const char *path, const struct ext4fs_frag_dir *d);
	/* One more name walked. */
	void (*tick)(void *arg);
};

/* Empty figures to add to.  Cannot fail. */
void df_figures_init(struct df_figures *f);

/* Free the paths the ranking holds; f may be used again after df_figures_init(). */
void df_figures_free(struct df_figures *f);

/*
 * Add the tree under start (an inode number, shown as path: "/" for the
 * root) to *f: walk.h's walk, each regular file measured (frag.h), each
 * directory's locality, and, for a directory, the seeks of reading it.
 * hooks may be NULL.  Errors: those of the walk and of the frag.h calls
 * (ext4fs_errmsg(fs) names the object), -ENOMEM; *f then holds part of the
 * tree.
 */
int df_measure(struct ext4fs_fs *fs, uint32_t start, const char *path, const struct df_measure_hooks *hooks,
	       struct df_figures *f);

/* Number of names under start, the start included (e4defrag's "[i/N]" total).  Errors as df_measure(). */
int df_count_names(struct ext4fs_fs *fs, uint32_t start, const char *path, uint64_t *count);

/* Means over the directories: 0 when there is nothing to average. */
double df_groups_per_dir(const struct df_figures *f);
double df_dir_distance(const struct df_figures *f);

#endif
