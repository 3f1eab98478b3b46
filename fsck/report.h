/*
 * report.h - what e4fsck prints besides problems: -t / -tt timing lines in
 * e2fsck's format, the closing summary, and the --json document.
 */
#ifndef E4FSCK_REPORT_H
#define E4FSCK_REPORT_H

#include <time.h>
#include "context.h"

struct pass_timer {
	struct timespec wall;
	double user, sys;
	uint64_t read_bytes, write_bytes;
};

/* Start of the whole run (for -t's total line). */
void timing_begin(struct e4fsck *ctx);

/* Around one pass: fills ctx->times[slot] and, with -tt, prints its lines. */
void timer_start(struct e4fsck *ctx, struct pass_timer *t);
void timer_stop(struct e4fsck *ctx, struct pass_timer *t, int slot, const char *title);

/* End of the run: with -t, the total memory / time / I/O lines. */
void timing_end(struct e4fsck *ctx);

/* The closing lines: "FILE SYSTEM WAS MODIFIED", "still has errors", the counts. */
void report_summary(struct e4fsck *ctx);

/*
 * The lines e2fsck prints when it cannot go on: "FILE SYSTEM WAS MODIFIED"
 * when something was written, "still has errors" when something is left.
 * Printed once right after the fatal problem and once more after
 * "e4fsck: aborted", as e2fsck does.
 */
void report_abort(struct e4fsck *ctx);

/* Write --json FILE: every problem and the timings.  0 or -1 (message printed). */
int report_json(struct e4fsck *ctx);

#endif
