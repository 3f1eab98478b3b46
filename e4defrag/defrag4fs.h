/*
 * defrag4fs.h - what defrag4fs's modules share: the options, the open file
 * system and the targets named on the command line.
 *
 *   defrag4fs.c  main(): options, the refusals, the order of the steps
 *   open.c       opening: the mount check, the state checks, read-write
 *   targets.c    the paths given, resolved inside the image
 *   figures.c    measuring a tree (figures.h), over walk.c (walk.h)
 *   report.c     -c: e4defrag -c's report and the figures beyond it
 *   files.c      the files a run examines (files.h)
 *   run.c        a run and -n's plan: moving, the files left, the summary
 *   jsonout.c    --json
 *
 * Exit statuses (defrag4fs(8)): 0 done; 1 done, but files above their
 * ideal extent count were left as they were; 8 an operational or usage
 * error, nothing (more) written.
 */
#ifndef DEFRAG4FS_H
#define DEFRAG4FS_H

#include <stdint.h>
#include <stdio.h>
#include "ext4fs/fs.h"
#include "figures.h"
#include "support/progress.h"

#define DF_PROG "defrag4fs"

#define DF_EXIT_OK     0
#define DF_EXIT_LEFT   1   /* files above their ideal were left */
#define DF_EXIT_ERROR  8   /* e2fsck's FSCK_ERROR: operational error, usage included */

/* --mode words. */
#define DF_MODE_FILE 0x1
#define DF_MODE_DIR  0x2
#define DF_MODE_FREE 0x4

enum df_kind {
	DF_KIND_DEVICE,     /* the whole file system: no path given */
	DF_KIND_DIR,
	DF_KIND_FILE,
};

/* Something to work on: the device's root, or a path given. */
struct df_target {
	const char *name;   /* as the user wrote it (the device for DF_KIND_DEVICE) */
	char *walk_path;    /* how names below it are shown: "/" for the root, else name without trailing '/' */
	uint32_t ino;
	enum df_kind kind;
};

struct df_names;

struct df_ctx {
	/* Options. */
	const char *device;
	char **paths;
	int npaths;
	int report;              /* -c */
	int dry_run;             /* -n */
	int verbose;             /* -v */
	int force;               /* -f */
	unsigned modes;          /* DF_MODE_* */
	int progress_fd;         /* -C: -1 none, 0 a bar, > 0 completion lines */
	int progress_held;       /* -C -fd: wait for SIGUSR1 */
	uint64_t time_limit;     /* -t seconds */
	int have_time_limit;
	const char *json_path;   /* --json */
	const char *undo_path;   /* -z */

	/* State. */
	struct ext4fs_fs *fs;
	struct df_target *targets;
	int ntargets;
	struct sup_report *progress;
	FILE *json;              /* the --json file, opened before any work */
	FILE *out;               /* the text report: stdout, or nowhere when the JSON goes to stdout */
	const struct df_names *names;  /* -v on a run: paths by inode number (names.h), else NULL */
};

/* open.c */
int df_open_readonly(struct df_ctx *ctx);
int df_check_not_in_use(struct df_ctx *ctx);
int df_check_state(struct df_ctx *ctx);

/* targets.c: resolve ctx->paths (or the device) into ctx->targets; 0 or DF_EXIT_ERROR (said). */
int df_targets_resolve(struct df_ctx *ctx);
void df_targets_free(struct df_ctx *ctx);

/* report.c: defrag4fs -c; an exit status. */
int df_report(struct df_ctx *ctx);

/* run.c: a run, or with ctx->dry_run its plan; an exit status. */
int df_run(struct df_ctx *ctx);

/* jsonout.c: a tree's figures as the member key of the object open in j; ff (may be NULL) adds free space. */
struct json;
void df_json_figures(struct json *j, const char *key, const struct df_figures *f, uint32_t block_size,
		     const struct ext4fs_frag_free *ff);
/* e4defrag's list of the most fragmented files as the member key. */
void df_json_top(struct json *j, const char *key, const struct df_figures *f);
/* The members every document starts with. */
void df_json_head(struct json *j, const struct df_ctx *ctx, const char *mode);
/* End the document and close the file; 0, or DF_EXIT_ERROR (said). */
int df_json_close(struct df_ctx *ctx, struct json *j);

/* defrag4fs.c: progress (-C); no-ops without -C. */
void df_progress_begin(struct df_ctx *ctx, int pass, uint64_t max);
void df_progress_tick(struct df_ctx *ctx);
void df_progress_end(struct df_ctx *ctx);
/* Erase the bar before a line is printed in the middle of a pass. */
void df_progress_clear(struct df_ctx *ctx);
/* Roughly how many names a walk of the whole file system meets: the inodes in use. */
uint64_t df_inodes_used(const struct df_ctx *ctx);

/* A library error as "defrag4fs: <message> while <what>" (plus the object at fault). */
void df_error(const struct df_ctx *ctx, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
