/*
 * progress.h - the two progress displays of e2fsprogs' tools.
 *
 * 1. The checker's report (e2fsck -C): a run of numbered passes, each
 *    counting units of work up to a maximum known when it starts.  With a
 *    file descriptor, "pass current max label\n" completion lines go to it
 *    (fsck(8) and front ends read them); without one, a bar is drawn on
 *    stdout when stdout is a terminal: the label, a bar whose width is a
 *    multiple of 8 within 66 columns, a spinner ('|' when full) and the
 *    percentage of the whole run, each pass ending at the percentage the
 *    caller gives.  Redrawn at most 8 times a second, and wrapped in
 *    \001..\002 when stdin is not a terminal (so a front end can strip it).
 *    Completion lines are throttled like the bar.  SIGUSR1 starts the
 *    report and SIGUSR2 stops it (fsck(8) hands the bar from one checker to
 *    the next that way); the handlers are installed by sup_report_new().
 *    Counting is safe from several threads; one reporter writes at a time.
 *
 * 2. The numeric meter (mke2fs, tune2fs): "label" then "  3/128" redrawn in
 *    place with backspaces at most once a second, the same on a terminal and
 *    in a pipe, numbers left out when E2FSPROGS_SKIP_PROGRESS is set.
 */
#ifndef SUPPORT_PROGRESS_H
#define SUPPORT_PROGRESS_H

#include <stdint.h>

/* ------------------------------------------------------------------ checker's report */

struct sup_report;

/*
 * A report for passes 1..npasses.  fd > 0: completion lines to fd; fd 0:
 * the bar; held: say nothing until SIGUSR1.  label (not copied: it must
 * outlive the report) names the device; pass_end_percent[n] is where pass
 * n ends on the bar (index 0 is the start, 0), npasses + 1 entries, also
 * not copied.  Returns 0 with *out set (free it with sup_report_free()),
 * -EBADF when fd > 0 is not open, -ENOMEM.  Nothing is printed.
 */
int sup_report_new(int fd, int held, const char *label, const double *pass_end_percent,
		   int npasses, struct sup_report **out);

/* Erase the bar if it is drawn and free r; NULL is allowed. */
void sup_report_free(struct sup_report *r);

/* Pass `pass` (1..npasses) starts with max units; current 0 is reported. */
void sup_report_begin(struct sup_report *r, int pass, uint64_t max);

/* The pass ends: current = max is reported and the bar erased. */
void sup_report_end(struct sup_report *r);

/* n more units done, reported if due (waits for another thread reporting). */
void sup_report_add(struct sup_report *r, uint64_t n);

/* n more units done from a worker thread: reported if due and no other thread is reporting. */
void sup_report_add_nowait(struct sup_report *r, uint64_t n);

/* Erase the bar before something else is printed mid-pass. */
void sup_report_clear(struct sup_report *r);

/* ------------------------------------------------------------------ numeric meter */

struct sup_meter {
	uint64_t max;
	int width;          /* digits of max */
	int plain;          /* this stage shows its label only */
	long last_second;   /* of the last drawing */
};

/* Print label and start counting to max (drawing "0/max" at once). */
void sup_meter_start(struct sup_meter *m, const char *label, uint64_t max);

/* Print label only: a stage without numbers, closed by sup_meter_close(). */
void sup_meter_start_plain(struct sup_meter *m, const char *label);

/* Draw val/max, at most once a second unless force. */
void sup_meter_update(struct sup_meter *m, uint64_t val, int force);

/* Blank the numbers and print msg (e.g. "done\n") after the label. */
void sup_meter_close(struct sup_meter *m, const char *msg);

/* Decimal digits of n (0 for 0), the meter's field width and mke2fs's wrapping unit. */
int sup_decimal_digits(uint64_t n);

#endif
