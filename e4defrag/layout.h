/*
 * layout.h - a run's dir and free modes (layout.c): the tree laid out in
 * reading order, or the free space compacted.
 */
#ifndef DEFRAG4FS_LAYOUT_H
#define DEFRAG4FS_LAYOUT_H

#include <stdint.h>
#include <time.h>
#include "inoset.h"

struct df_ctx;

/* What the layout pass did. */
struct df_layout_totals {
	uint64_t members;          /* files and directories examined */
	uint64_t moved;            /* of which moved */
	uint64_t stayed;           /* left where they were: must stay, or no room to make */
	uint64_t dirs_settled;     /* directories laid out well enough already, left with their files */
	uint64_t blocks_moved, bytes_copied, transactions;
	int stopped_early;         /* the time limit stopped it (a later run carries on) */
	struct df_inoset laid_out; /* the sweep's members now where its layout puts them: file mode,
				      which would move a file split around a fixed obstacle back out of
				      its place in the tree, leaves them (freed by the caller) */
};

/*
 * With DF_MODE_DIR in ctx->modes, sweep the trees of ctx->targets into
 * reading order (which also gathers the free space); else compact the
 * free space.  reserve: blocks kept free for mapping blocks.  Stops at the
 * first member after ctx's time limit (counted from *start).  Fills *t
 * (zeroed by the caller); returns 0 or DF_EXIT_ERROR after saying what
 * failed (what was moved before stays moved: each move committed).
 */
int df_layout(struct df_ctx *ctx, uint64_t reserve, const struct timespec *start, struct df_layout_totals *t);

#endif
