/*
 * deferred.h - questions found where they cannot be asked, asked later.
 *
 * Pass 1's workers check inodes in parallel and may not print, ask or
 * repair: each problem they find becomes a record, and after the join one
 * thread replays the records in inode order through fix_problem().  e2fsck
 * asks as it walks, so some of its questions depend on the answers before
 * them: a question is asked only after a no, or not once the inode is
 * cleared, or only when a repair it assumed was made, or its numbers are
 * only known once the earlier answers are.  Each record carries that rule,
 * and deferred_replay() applies it, so that -n and -y each print what
 * e2fsck prints.  What a yes repairs is the pass's business (its ops).
 * DESIGN.md has the table of which problems use which rule, and why.
 */
#ifndef E4FSCK_DEFERRED_H
#define E4FSCK_DEFERRED_H

#include <stddef.h>
#include <stdint.h>
#include "problem.h"

/* When a record is asked (struct deferred's rules; none: always). */
#define DEFER_AFTER_NO     0x01 /* only when the inode's previous question was answered no */
#define DEFER_NOT_CLEARED  0x02 /* not once the inode has been cleared */
#define DEFER_IF_YES_BACK  0x04 /* only when the record back places before, same inode, was answered yes */
#define DEFER_JUDGED       0x08 /* its numbers are judged when it comes to be asked (ops->judge) */
#define DEFER_IF_NO_BACK   0x10 /* only when the record back places before, same inode, was asked and answered no */

/*
 * One problem as found: the first member of the pass's own record type,
 * which adds what the repair needs.  The records of one inode follow each
 * other, in the order e2fsck would ask them.
 */
struct deferred {
	uint32_t code;
	struct problem_ctx pctx;    /* pctx.ino: the inode */
	unsigned rules;             /* DEFER_* */
	unsigned back;              /* DEFER_IF_YES_BACK, DEFER_IF_NO_BACK: how many records back */
	int asked;                  /* set when asked */
	int answered_yes;           /* set when asked and answered yes */
};

/* Fill d for problem code with pctx, asked always (rules and back may be added after). */
void deferred_init(struct deferred *d, uint32_t code, const struct problem_ctx *pctx);

/* The inode being answered, as the replay and the pass's ops see it. */
struct deferred_inode {
	uint32_t ino;
	size_t first;               /* index of its first record */
	int last_answer;            /* the answer to its last question asked by the replay */
	int cleared;                /* the inode was cleared: DEFER_NOT_CLEARED records are passed over */
	int stopped;                /* nothing more is asked about it (e2fsck stopped walking it) */
};

/* ops->prepare's verdicts. */
enum deferred_verdict {
	DEFER_SKIP,                 /* not asked */
	DEFER_ASK,                  /* asked by the replay (after ops->judge for DEFER_JUDGED) */
	DEFER_DONE,                 /* handled by the pass itself (it may have asked) */
};

/* What the pass does around each question.  arg is deferred_replay()'s. */
struct deferred_ops {
	/* A new inode's records begin: reset the pass's state for it. */
	void (*begin)(void *arg, const struct deferred_inode *st);
	/*
	 * A record the rules let through: the pass's own reasons not to ask it
	 * (DEFER_SKIP), to handle it itself (DEFER_DONE), or to let the replay
	 * ask it (DEFER_ASK); -1 after fsck_fatal().  May be NULL (ask).
	 */
	int (*prepare)(void *arg, struct deferred_inode *st, struct deferred *d);
	/*
	 * A DEFER_JUDGED record about to be asked: 1 when, the answers so far
	 * known, it is still a problem (d->pctx updated to say so), 0 when
	 * not (it is not asked), -1 after fsck_fatal().
	 */
	int (*judge)(void *arg, struct deferred_inode *st, struct deferred *d);
	/* The answer yes to d (1 or 0): the repair.  May set st->cleared, st->stopped.  0, or -1 after fsck_fatal(). */
	int (*answered)(void *arg, struct deferred_inode *st, struct deferred *d, int yes);
	/* After the inode's last record (or a preen abort): write what changed.  0, or -1 after fsck_fatal(). */
	int (*end)(void *arg, const struct deferred_inode *st);
};

/*
 * Ask about n records (each stride bytes, struct deferred first) at recs in
 * their order, inode by inode, applying each record's rules and then ops.
 * Stops early when preen mode aborts (ctx->aborted; the current inode still
 * gets ops->end).  0, or -1 when the check must stop (an op failed, or a
 * fatal problem was answered: ctx->fatal).
 */
int deferred_replay(struct e4fsck *ctx, void *recs, size_t n, size_t stride, const struct deferred_ops *ops,
		    void *arg);

#endif
