/*
 * prompt.h - yes/no questions on the terminal.
 *
 * Answers are read a line at a time from stdin; only the first character
 * counts (y/Y, n/N), as in e2fsprogs.  Nothing is allocated.
 */
#ifndef SUPPORT_PROMPT_H
#define SUPPORT_PROMPT_H

enum sup_answer {
	SUP_ANSWER_EOF = -1,    /* end of input or a read error */
	SUP_ANSWER_OTHER = 0,   /* a line starting with anything else */
	SUP_ANSWER_YES,         /* 'y' or 'Y' */
	SUP_ANSWER_NO,          /* 'n' or 'N' */
	SUP_ANSWER_EMPTY,       /* an empty line: take the default */
};

/* Read one line from stdin (the rest of a long line is consumed too) and classify it. */
enum sup_answer sup_read_answer(void);

/*
 * mke2fs's "Proceed anyway? (y,N) " on stdout; returns 0 for a line starting
 * with y or Y, -1 otherwise (printing a newline after anything else, as
 * mke2fs does).  When stdin is not a terminal nothing is asked: "prog: not
 * going on without -F (why_no_tty; standard input is not a terminal, so
 * prog cannot ask)" goes to stderr and the answer is no.
 */
int sup_proceed_question(const char *prog, const char *why_no_tty);

#endif
