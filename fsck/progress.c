/*
 * progress.c - e4fsck -C (see progress.h).
 *
 * Interface facts kept from e2fsck: the completion line format, pass
 * numbers 1-5 with current starting at 0 and ending at max, "-C -fd" to
 * hold the report until SIGUSR1 (fsck(8) gives it to all but the checker
 * showing progress), and the bar: the device, a bar whose width is a
 * multiple of 8 within 66 columns, a spinner ('|' when full), the
 * percentage of the whole check with passes 1-5 ending at 70, 90, 92, 95
 * and 100 %, redrawn at most 8 times a second and wrapped in \001..\002
 * when stdin is not a terminal (so a front end can strip it).  Unlike
 * e2fsck, completion lines are throttled like the bar: a pipe reader gets
 * a few lines a second instead of one per directory block, and the bar is
 * never drawn when stdout is not a terminal, so logs stay clean.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "progress.h"

/* Pass 1's workers add to the shared counter once per this many inode numbers. */
#define PASS1_BATCH 256

/* Where each pass ends on the bar, in percent of the whole check (index: pass number). */
static const double pass_end_percent[] = { 0, 70, 90, 92, 95, 100 };

#define BAR_ROOM 66             /* columns for the label and the bar */
#define ERASE_WIDTH 79          /* blanks that erase a drawn bar */

enum { REQUEST_NONE, REQUEST_START, REQUEST_STOP };

/* A signal handler may only leave a note; the next report acts on it. */
static atomic_int signal_request;

struct progress {
	pthread_mutex_t lock;       /* one reporter at a time; guards everything below but the atomics */
	atomic_int on;              /* reporting now (read without the lock by pass 1's workers) */
	atomic_uint_fast64_t done;  /* units of the current pass */
	int fd;                     /* completion lines go here; 0: the bar */
	int bar_ok;                 /* stdout is a terminal */
	const char *meta_start, *meta_stop;
	int pass;                   /* 1-5 while a pass runs, else 0 */
	uint64_t max;
	unsigned lines;             /* lines written in this pass since reporting started */
	uint64_t last_cur;
	long last_tick;             /* eighths of a second of the last line or drawing */
	int last_permille;          /* of the bar on screen, -1 when none */
	unsigned spin;
	int bar_shown;
};

static void on_signal(int sig)
{
	atomic_store(&signal_request, sig == SIGUSR1 ? REQUEST_START : REQUEST_STOP);
}

static long now_tick(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 8 + ts.tv_nsec / 125000000;
}

static int wanted(struct progress *p)
{
	return atomic_load_explicit(&p->on, memory_order_relaxed) ||
	       atomic_load_explicit(&signal_request, memory_order_relaxed) != REQUEST_NONE;
}

static void erase_bar(struct progress *p)
{
	if (!p->bar_shown)
		return;
	printf("%s%*s\r%s", p->meta_start, ERASE_WIDTH, "", p->meta_stop);
	fflush(stdout);
	p->bar_shown = 0;
	p->last_permille = -1;
}

static void apply_signal(struct progress *p)
{
	int request = atomic_exchange(&signal_request, REQUEST_NONE);

	if (request == REQUEST_START && !atomic_load(&p->on)) {
		atomic_store(&p->on, 1);
		p->lines = 0;
		p->last_permille = -1;
	} else if (request == REQUEST_STOP && atomic_load(&p->on)) {
		erase_bar(p);
		atomic_store(&p->on, 0);
	}
}

/* The whole line or nothing more: a reader that went away is not an error of the check. */
static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void write_line(struct e4fsck *ctx, struct progress *p, uint64_t cur, long tick, int pass_edge)
{
	char line[512];

	if (p->lines && (cur == p->last_cur || (!pass_edge && tick == p->last_tick)))
		return;
	int len = snprintf(line, sizeof(line), "%d %" PRIu64 " %" PRIu64 " %s\n", p->pass, cur, p->max,
			   ctx->device);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(line)) {
		len = sizeof(line) - 1;
		line[len - 1] = '\n';
	}
	write_all(p->fd, line, (size_t)len);
	p->lines++;
	p->last_cur = cur;
	p->last_tick = tick;
}

static void draw_bar(struct e4fsck *ctx, struct progress *p, uint64_t cur, long tick)
{
	static const char spinner[] = "\\|/-";
	double from = pass_end_percent[p->pass - 1], to = pass_end_percent[p->pass];
	double percent = from + (to - from) * (p->max ? (double)cur / (double)p->max : 1.0);
	int permille = (int)(10 * percent + 0.5);

	if (permille == p->last_permille)
		return;
	if (p->bar_shown && tick == p->last_tick && permille != 1000)
		return;
	int width = (BAR_ROOM - (int)strlen(ctx->device)) / 8 * 8;
	if (width < 8)
		width = 8;
	int filled = (int)((percent * width + 50) / 100);
	if (filled > width)
		filled = width;
	p->spin = (p->spin + 1) & 3;
	printf("%s%s: |%.*s%*s%c %4.1f%%   \r%s", p->meta_start, ctx->device, filled,
	       "================================================================================",
	       width - filled, "", permille == 1000 ? '|' : spinner[p->spin], percent, p->meta_stop);
	fflush(stdout);
	p->bar_shown = 1;
	p->last_permille = permille;
	p->last_tick = tick;
}

/* With p->lock held. */
static void report(struct e4fsck *ctx, struct progress *p, int pass_edge)
{
	apply_signal(p);
	if (!atomic_load(&p->on) || !p->pass)
		return;
	uint64_t cur = atomic_load(&p->done);
	if (cur > p->max)
		cur = p->max;
	long tick = now_tick();
	if (p->fd > 0)
		write_line(ctx, p, cur, tick, pass_edge);
	else if (p->bar_ok)
		draw_bar(ctx, p, cur, tick);
}

int progress_init(struct e4fsck *ctx)
{
	struct sigaction sa;
	struct progress *p;

	if (ctx->progress_fd > 0 && fcntl(ctx->progress_fd, F_GETFD) < 0) {
		fprintf(stderr, "Error validating file descriptor %d: %s\n", ctx->progress_fd, strerror(errno));
		fsck_fatal(ctx, "Invalid completion information file descriptor");
		return -1;
	}
	p = calloc(1, sizeof(*p));
	if (!p || pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		fsck_fatal(ctx, "out of memory");
		return -1;
	}
	p->fd = ctx->progress_fd > 0 ? ctx->progress_fd : 0;
	atomic_init(&p->on, ctx->progress_fd >= 0 && !ctx->progress_held);
	atomic_init(&p->done, 0);
	p->bar_ok = isatty(STDOUT_FILENO);
	p->meta_start = isatty(STDIN_FILENO) ? "" : "\001";
	p->meta_stop = isatty(STDIN_FILENO) ? "" : "\002";
	p->last_permille = -1;
	ctx->progress = p;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	return 0;
}

void progress_free(struct e4fsck *ctx)
{
	struct progress *p = ctx->progress;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	erase_bar(p);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_destroy(&p->lock);
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
	pthread_mutex_lock(&p->lock);
	p->pass = pass;
	p->max = max;
	p->lines = 0;
	atomic_store(&p->done, 0);
	report(ctx, p, 1);
	pthread_mutex_unlock(&p->lock);
}

void progress_pass_end(struct e4fsck *ctx)
{
	struct progress *p = ctx->progress;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->pass) {
		atomic_store(&p->done, p->max);
		if (p->fd > 0)
			report(ctx, p, 1);
		else
			apply_signal(p);
		erase_bar(p);
	}
	p->pass = 0;
	pthread_mutex_unlock(&p->lock);
}

void progress_advance(struct e4fsck *ctx, uint64_t n)
{
	struct progress *p = ctx->progress;

	if (!p)
		return;
	atomic_fetch_add_explicit(&p->done, n, memory_order_relaxed);
	if (!wanted(p))
		return;
	pthread_mutex_lock(&p->lock);
	report(ctx, p, 0);
	pthread_mutex_unlock(&p->lock);
}

void progress_pass1_inode(struct e4fsck *ctx, uint32_t *mark, uint32_t ino)
{
	struct progress *p = ctx->progress;

	if (!p || ino <= *mark || ino - *mark < PASS1_BATCH)
		return;
	atomic_fetch_add_explicit(&p->done, ino - *mark, memory_order_relaxed);
	*mark = ino;
	/* A worker that finds another one reporting goes on checking: the next batch will tell. */
	if (!wanted(p) || pthread_mutex_trylock(&p->lock))
		return;
	report(ctx, p, 0);
	pthread_mutex_unlock(&p->lock);
}

void progress_clear(struct e4fsck *ctx)
{
	struct progress *p = ctx->progress;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	erase_bar(p);
	pthread_mutex_unlock(&p->lock);
}
