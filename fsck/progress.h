/*
 * progress.h - e4fsck -C: completion lines for fsck(8) and front ends, or
 * e2fsck's progress bar on the terminal (both drawn by lib/support's
 * checker report, support/progress.h).
 *
 * With -C fd (fd > 0) each pass writes "pass current max device\n" lines to
 * fd, as e2fsck does; with -C 0 the bar is drawn on stdout when stdout is a
 * terminal.  SIGUSR1 starts the report (the bar when no fd was given),
 * SIGUSR2 stops it, as fsck(8) uses them to hand the bar from one checker
 * to the next.
 *
 * Work units: pass 1 inode numbers scanned past (max: the inode count),
 * pass 2 directory blocks, pass 3 directories, pass 4 inodes in use,
 * pass 5 groups, once for the block bitmap and once for the inode bitmap.
 * Pass 1's workers count concurrently; one reporter at a time writes, so
 * lines never interleave and current never goes back within a pass.
 */
#ifndef E4FSCK_PROGRESS_H
#define E4FSCK_PROGRESS_H

#include <stdint.h>
#include "context.h"

/*
 * Set up from ctx->progress_fd and ctx->progress_held (the -C option) and
 * install the SIGUSR1/SIGUSR2 handlers.  The state is owned by ctx until
 * progress_free().  Returns 0, or -1 after a message (the fd is not open, or
 * no memory) with FSCK_ERROR in ctx->exit_status.
 */
int progress_init(struct e4fsck *ctx);

/* Erase the bar if it is drawn and release the state; safe when never set up. */
void progress_free(struct e4fsck *ctx);

/*
 * Around a pass: slot is its TIME_PASSn slot (others are not reported).
 * Begin reports current 0 with the pass's maximum taken from what the
 * earlier passes found; end reports the maximum and erases the bar, so the
 * next line printed starts on a clean line.
 */
void progress_pass_begin(struct e4fsck *ctx, int slot);
void progress_pass_end(struct e4fsck *ctx);

/* Passes 2-5 (one thread): n more units done. */
void progress_advance(struct e4fsck *ctx, uint64_t n);

/*
 * Pass 1, from any worker: the worker has scanned up to inode ino.  *mark
 * is the worker's own count so far, starting at the inode before its first
 * group; the shared counter is updated in batches.
 */
void progress_pass1_inode(struct e4fsck *ctx, uint32_t *mark, uint32_t ino);

/* Erase the bar before something else is printed mid-pass (a problem message). */
void progress_clear(struct e4fsck *ctx);

#endif
