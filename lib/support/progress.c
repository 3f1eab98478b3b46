/*
 * progress.c - the checker's report and the numeric meter (see progress.h).
 *
 * Interface facts kept from e2fsprogs: the completion line format, current
 * starting at 0 and ending at max in each pass, the bar's layout and its
 * \001..\002 wrapping, SIGUSR1/SIGUSR2, and the meter's "val/max" with
 * backspaces and E2FSPROGS_SKIP_PROGRESS.
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
#include "support/progress.h"

#define BAR_ROOM 66             /* columns for the label and the bar */
#define ERASE_WIDTH 79          /* blanks that erase a drawn bar */

enum { REQUEST_NONE, REQUEST_START, REQUEST_STOP };

/* A signal handler may only leave a note; the next report acts on it. */
static atomic_int signal_request;

struct sup_report {
	pthread_mutex_t lock;       /* one reporter at a time; guards everything below but the atomics */
	atomic_int on;              /* reporting now (read without the lock by workers) */
	atomic_uint_fast64_t done;  /* units of the current pass */
	int fd;                     /* completion lines go here; 0: the bar */
	int bar_ok;                 /* stdout is a terminal */
	const char *label;
	const double *pass_end;     /* percent where each pass ends, index: pass number */
	int npasses;
	const char *meta_start, *meta_stop;
	int pass;                   /* while a pass runs, else 0 */
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

static int wanted(struct sup_report *r)
{
	return atomic_load_explicit(&r->on, memory_order_relaxed) ||
	       atomic_load_explicit(&signal_request, memory_order_relaxed) != REQUEST_NONE;
}

static void erase_bar(struct sup_report *r)
{
	if (!r->bar_shown)
		return;
	printf("%s%*s\r%s", r->meta_start, ERASE_WIDTH, "", r->meta_stop);
	fflush(stdout);
	r->bar_shown = 0;
	r->last_permille = -1;
}

static void apply_signal(struct sup_report *r)
{
	int request = atomic_exchange(&signal_request, REQUEST_NONE);

	if (request == REQUEST_START && !atomic_load(&r->on)) {
		atomic_store(&r->on, 1);
		r->lines = 0;
		r->last_permille = -1;
	} else if (request == REQUEST_STOP && atomic_load(&r->on)) {
		erase_bar(r);
		atomic_store(&r->on, 0);
	}
}

/* The whole line or nothing more: a reader that went away is not an error of the run. */
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

static void write_line(struct sup_report *r, uint64_t cur, long tick, int pass_edge)
{
	char line[512];

	if (r->lines && (cur == r->last_cur || (!pass_edge && tick == r->last_tick)))
		return;
	int len = snprintf(line, sizeof(line), "%d %" PRIu64 " %" PRIu64 " %s\n", r->pass, cur, r->max,
			   r->label);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(line)) {
		len = sizeof(line) - 1;
		line[len - 1] = '\n';
	}
	write_all(r->fd, line, (size_t)len);
	r->lines++;
	r->last_cur = cur;
	r->last_tick = tick;
}

static void draw_bar(struct sup_report *r, uint64_t cur, long tick)
{
	static const char spinner[] = "\\|/-";
	double from = r->pass_end[r->pass - 1], to = r->pass_end[r->pass];
	double percent = from + (to - from) * (r->max ? (double)cur / (double)r->max : 1.0);
	int permille = (int)(10 * percent + 0.5);

	if (permille == r->last_permille)
		return;
	if (r->bar_shown && tick == r->last_tick && permille != 1000)
		return;
	int width = (BAR_ROOM - (int)strlen(r->label)) / 8 * 8;
	if (width < 8)
		width = 8;
	int filled = (int)((percent * width + 50) / 100);
	if (filled > width)
		filled = width;
	r->spin = (r->spin + 1) & 3;
	printf("%s%s: |%.*s%*s%c %4.1f%%   \r%s", r->meta_start, r->label, filled,
	       "================================================================================",
	       width - filled, "", permille == 1000 ? '|' : spinner[r->spin], percent, r->meta_stop);
	fflush(stdout);
	r->bar_shown = 1;
	r->last_permille = permille;
	r->last_tick = tick;
}

/* With r->lock held. */
static void report(struct sup_report *r, int pass_edge)
{
	apply_signal(r);
	if (!atomic_load(&r->on) || !r->pass)
		return;
	uint64_t cur = atomic_load(&r->done);
	if (cur > r->max)
		cur = r->max;
	long tick = now_tick();
	if (r->fd > 0)
		write_line(r, cur, tick, pass_edge);
	else if (r->bar_ok)
		draw_bar(r, cur, tick);
}

int sup_report_new(int fd, int held, const char *label, const double *pass_end_percent,
		   int npasses, struct sup_report **out)
{
	struct sigaction sa;
	struct sup_report *r;

	*out = NULL;
	if (fd > 0 && fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	r = calloc(1, sizeof(*r));
	if (!r || pthread_mutex_init(&r->lock, NULL)) {
		free(r);
		return -ENOMEM;
	}
	r->fd = fd > 0 ? fd : 0;
	atomic_init(&r->on, fd >= 0 && !held);
	atomic_init(&r->done, 0);
	r->bar_ok = isatty(STDOUT_FILENO);
	r->label = label;
	r->pass_end = pass_end_percent;
	r->npasses = npasses;
	r->meta_start = isatty(STDIN_FILENO) ? "" : "\001";
	r->meta_stop = isatty(STDIN_FILENO) ? "" : "\002";
	r->last_permille = -1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	*out = r;
	return 0;
}

void sup_report_free(struct sup_report *r)
{
	if (!r)
		return;
	sup_report_clear(r);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void sup_report_begin(struct sup_report *r, int pass, uint64_t max)
{
	if (pass < 1 || pass > r->npasses)
		return;
	pthread_mutex_lock(&r->lock);
	r->pass = pass;
	r->max = max;
	r->lines = 0;
	atomic_store(&r->done, 0);
	report(r, 1);
	pthread_mutex_unlock(&r->lock);
}

void sup_report_end(struct sup_report *r)
{
	pthread_mutex_lock(&r->lock);
	if (r->pass) {
		atomic_store(&r->done, r->max);
		if (r->fd > 0)
			report(r, 1);
		else
			apply_signal(r);
		erase_bar(r);
	}
	r->pass = 0;
	pthread_mutex_unlock(&r->lock);
}

void sup_report_add(struct sup_report *r, uint64_t n)
{
	atomic_fetch_add_explicit(&r->done, n, memory_order_relaxed);
	if (!wanted(r))
		return;
	pthread_mutex_lock(&r->lock);
	report(r, 0);
	pthread_mutex_unlock(&r->lock);
}

void sup_report_add_nowait(struct sup_report *r, uint64_t n)
{
	atomic_fetch_add_explicit(&r->done, n, memory_order_relaxed);
	/* A worker that finds another one reporting goes on working: the next batch will tell. */
	if (!wanted(r) || pthread_mutex_trylock(&r->lock))
		return;
	report(r, 0);
	pthread_mutex_unlock(&r->lock);
}

void sup_report_clear(struct sup_report *r)
{
	pthread_mutex_lock(&r->lock);
	erase_bar(r);
	pthread_mutex_unlock(&r->lock);
}

/* ------------------------------------------------------------------ numeric meter */

int sup_decimal_digits(uint64_t n)
{
	int l = 0;

	for (; n; n /= 10)
		l++;
	return l;
}

static void put_repeat(char ch, int n)
{
	for (int i = 0; i < n; i++)
		putchar(ch);
}

void sup_meter_update(struct sup_meter *m, uint64_t val, int force)
{
	long now = (long)time(NULL);

	if (m->plain || getenv("E2FSPROGS_SKIP_PROGRESS"))
		return;
	if (!force && now == m->last_second)
		return;
	m->last_second = now;
	printf("%*" PRIu64 "/%*" PRIu64, m->width, val, m->width, m->max);
	put_repeat('\b', 2 * m->width + 1);
	fflush(stdout);
}

void sup_meter_start(struct sup_meter *m, const char *label, uint64_t max)
{
	m->max = max;
	m->width = sup_decimal_digits(max);
	m->plain = 0;
	fputs(label, stdout);
	fflush(stdout);
	sup_meter_update(m, 0, 1);
}

void sup_meter_start_plain(struct sup_meter *m, const char *label)
{
	fputs(label, stdout);
	m->plain = 1;
}

void sup_meter_close(struct sup_meter *m, const char *msg)
{
	if (!m->plain) {
		put_repeat(' ', 2 * m->width + 1);
		put_repeat('\b', 2 * m->width + 1);
	}
	m->plain = 0;
	fputs(msg, stdout);
	fflush(stdout);
}
