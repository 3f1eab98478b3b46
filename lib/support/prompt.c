/* prompt.c - yes/no questions (see prompt.h). */
#include "config.h"
#include <stdio.h>
#include <unistd.h>
#include "support/prompt.h"

enum sup_answer sup_read_answer(void)
{
	int first = getchar(), c = first;

	if (first == EOF)
		return SUP_ANSWER_EOF;
	while (c != '\n' && c != EOF)
		c = getchar();
	switch (first) {
	case 'y': case 'Y': return SUP_ANSWER_YES;
	case 'n': case 'N': return SUP_ANSWER_NO;
	case '\n': return SUP_ANSWER_EMPTY;
	default: return SUP_ANSWER_OTHER;
	}
}

int sup_proceed_question(const char *prog, const char *why_no_tty)
{
	fflush(stdout);
	fflush(stderr);
	if (!isatty(STDIN_FILENO)) {
		fprintf(stderr, "%s: not going on without -F (%s; standard input is not a terminal, so "
			"%s cannot ask)\n", prog, why_no_tty, prog);
		return -1;
	}
	fputs("Proceed anyway? (y,N) ", stdout);
	fflush(stdout);
	if (sup_read_answer() != SUP_ANSWER_YES) {
		putc('\n', stdout);
		return -1;
	}
	return 0;
}
