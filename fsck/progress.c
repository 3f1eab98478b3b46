/*
 * progress.c - e4fsck -C (see progress.h) over lib/support's checker report.
 *
 * What is e4fsck's own: the five passes and their units, where each ends on
 * the bar (70, 90, 92, 95 and 100 %, e2fsck's split), the messages for a bad
 * -C fd, and pass 1's workers counting in batches.  Unlike e2fsck,
 * completion lines are throttled like the bar: a pipe reader gets a few
 * lines a second instead of one per directory block, and the bar is never
 * drawn when stdout is not a terminal, so logs stay clean.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "progress.h"
#include "support/progress.h"

/* Pass 1's workers add to the shared counter once per this many inode numbers. */
#define PASS1_BATCH 256

/* Where each pass ends on the bar, in percent of the whole check (index: pass number). */
static const double pass_end_percent[] = { 0, 70, 90, 92, 95, 100 };

struct progress {
	struct sup_report *report;
};

int progress_init(struct e4fsck *ctx)
{
	struct progress *p = calloc(1, sizeof(*p));
	int err = p ? sup_report_new(ctx->progress_fd, ctx->progress_held, ctx->device, pass_end_percent,
				     5, &p->report) : -ENOMEM;

	if (err == -EBADF) {
		fprintf(stderr, "Error validating file descriptor %d: %s\n", ctx->progress_fd, strerror(EBADF));
		fsck_fatal(ctx, "Invalid completion information file descriptor");
	} else if (err) {
		fsck_fatal(ctx, "out of memory");
	}
	if (err) {
		free(p);
		return -1;
	}
	ctx->progress = p;
	return 0;
}

void progress_free(struct e4fsck *ctx)
{
	struct progress *p = ctx->progress;

	if (!p)
		return;
	sup_report_free(p->report);
	free(p);
	ctx->progress = NULL;
}

void progress_pass_begin(struct e4fsck *ctx, int slot)
{
	struct progress *p = ctx->progress;
	const struct ext4fs_geom *g = ctx->geo;
	uint64_t max;
	int pass;

	if (!p)
		return;
	switch (slot) {
	case TIME_PASS1: pass = 1; max = g->inodes_count; break;
	case TIME_PASS2: pass = 2; max = ctx->ndir_blocks; break;
	case TIME_PASS3: pass = 3; max = ctx->ndirs; break;
	case TIME_PASS4: pass = 4; max = bitmap_paged_count(&ctx->inode_used, 1, g->inodes_count); break;
	case TIME_PASS5: pass = 5; max = 2 * (uint64_t)g->group_count; break;
	default: return;
	}
	sup_report_begin(p->report, pass, max);
}

void progress_pass_end(struct e4fsck *ctx)
{
	if (ctx->progress)
		sup_report_end(ctx->progress->report);
}

void progress_advance(struct e4fsck *ctx, uint64_t n)
{
	if (ctx->progress)
		sup_report_add(ctx->progress->report, n);
}

void progress_pass1_inode(struct e4fsck *ctx, uint32_t *mark, uint32_t ino)
{
	struct progress *p = ctx->progress;
	uint32_t n;

	if (!p || ino <= *mark || ino - *mark < PASS1_BATCH)
		return;
	n = ino - *mark;
	*mark = ino;
	sup_report_add_nowait(p->report, n);
}

void progress_clear(struct e4fsck *ctx)
{
	if (ctx->progress)
		sup_report_clear(ctx->progress->report);
}
