/*
 * check.h - one check of the file system from start to end (check.c): what
 * main() calls once the options are in ctx.
 */
#ifndef E4FSCK_CHECK_H
#define E4FSCK_CHECK_H

#include "context.h"

/*
 * Check ctx->path as the options in ctx say, in e2fsck's order, and print
 * the summary.  The outcome is in ctx->exit_status; ctx is left for
 * report_json() and fsck_free_ctx().
 */
void fsck_check(struct e4fsck *ctx);

#endif
