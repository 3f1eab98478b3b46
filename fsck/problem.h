/*
 * problem.h - every problem e4fsck can report, and how it is answered.
 *
 * Each pass owns a table of the problems it finds (problems_pass1.c, ...).
 * A row gives the problem's code (e2fsck's number where it has one, so a
 * user's e2fsck habits and --json consumers agree), a stable name, the
 * message in e2fsck's wording, the question asked and how preen mode
 * treats it.  Passes never print: they describe what they found in a
 * struct problem_ctx and call fix_problem(), which prints, decides from
 * the mode (-n no, -y yes, -p the preen answer, else ask), records the
 * problem for --json and the exit status, and says whether to repair.
 */
#ifndef E4FSCK_PROBLEM_H
#define E4FSCK_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

struct e4fsck;

/* The question after the message, as e2fsck words it. */
enum prompt {
	PROMPT_NONE,        /* a message only */
	PROMPT_FIX,
	PROMPT_CLEAR,
	PROMPT_RELOCATE,
	PROMPT_ALLOCATE,
	PROMPT_EXPAND,
	PROMPT_CONNECT,     /* "Connect to /lost+found" */
	PROMPT_CREATE,
	PROMPT_SALVAGE,
	PROMPT_TRUNCATE,
	PROMPT_CLEAR_INODE,
	PROMPT_ABORT,
	PROMPT_SPLIT,
	PROMPT_CONTINUE,
	PROMPT_CLONE,
	PROMPT_DELETE,
	PROMPT_SUPPRESS,
	PROMPT_UNLINK,
	PROMPT_CLEAR_HTREE,
	PROMPT_RECREATE,
	PROMPT_OPTIMIZE,
	PROMPT_CLEAR_FLAG,
	PROMPT_IGNORED,     /* no question: the message is followed by "IGNORED." */
	PROMPT_NULL,        /* a question the message ends with: only "? yes" follows */
};

/* Row flags. */
#define PF_PREEN_OK      0x01   /* preen mode repairs it ("... FIXED.") */
#define PF_PREEN_NOMSG   0x02   /* preen mode repairs it without a word */
#define PF_NOT_AN_ERROR  0x04   /* answering no leaves nothing wrong (a suggestion) */
#define PF_NO_DEFAULT    0x08   /* interactive default is no */
#define PF_PREEN_NO      0x10   /* preen answers no and goes on (not worth stopping for) */
#define PF_AFTER_NO      0x20   /* "no" still counts as handled: the pass copes another way */
#define PF_PREEN_NOHDR   0x80   /* preen mode prints it without the device name (it continues a line) */
#define PF_FATAL         0x100  /* the check cannot go on: e2fsck's closing lines follow at once (ctx->fatal) */
#define PF_PREEN_STOP_QUIET 0x200 /* preen mode stops at it without printing its message */
#define PF_NOT_A_FIX     0x400  /* a yes is no repair (an optimization): it does not make the exit status 1 */

struct problem {
	uint32_t code;              /* (pass << 16) | n, e2fsck's numbering */
	const char *id;             /* "PR_1_BAD_I_SIZE" */
	const char *msg;            /* template, see below */
	enum prompt prompt;
	unsigned flags;
};

/*
 * What a message's placeholders are filled from:
 *   %i ino   %j ino2   %d dir   %b blk   %c blk2   %N num   %M num2
 *   %g group %s str    %m errmsg, or else the library's last error message   %% a percent
 *   %x num and %y num2 as 0x%04x (checksums)
 *   %n name  %p path  %P path2  %q path3 (NULL prints as "")
 * Inode numbers print as "%u", blocks and numbers as "%llu".
 */
struct problem_ctx {
	uint32_t ino, ino2, dir;
	uint64_t blk, blk2, num, num2;
	uint32_t group;
	const char *str;
	const char *errmsg;         /* %m: a failure the checker names itself, as e2fsck's library would */
	int errcode;
	/* Passes 2-4 name entries and directories the way e2fsck does: */
	const char *name;           /* %n: a directory entry's name */
	const char *path, *path2, *path3;   /* %p %P %q: path names (dirs.c: fsck_path()) */
};

/* A pass's table, registered in problem.c. */
struct problem_table {
	const struct problem *rows;
	size_t n;
};

extern const struct problem_table problems_pass0, problems_pass1, problems_pass2, problems_pass3,
	problems_pass4, problems_pass5;

/* The row for code, or NULL. */
const struct problem *problem_find(uint32_t code);

/*
 * Report problem code with the details in pctx (may be NULL) and decide:
 * returns 1 when the caller should repair, 0 when not.  Never 1 when the
 * file system is open read-only.  In preen mode an unsafe problem sets
 * ctx->aborted and FSCK_UNCORRECTED; the passes then stop as soon as they
 * can.  An unknown code is a bug: it is reported as such and answered no.
 */
int fix_problem(struct e4fsck *ctx, uint32_t code, const struct problem_ctx *pctx);

/*
 * Preen stops at something it leaves to a person: e2fsck's "UNEXPECTED
 * INCONSISTENCY" lines, the check aborted, errors left (exit 4).
 */
void fsck_preen_halt_message(struct e4fsck *ctx);

/*
 * The expanded message of code for pctx, into buf (always terminated).
 * For tests and --json.
 */
void problem_format(const struct e4fsck *ctx, const struct problem *p, const struct problem_ctx *pctx,
		    char *buf, size_t size);

/* Forget the answer to latch question code, so the next member asks it again (e2fsck ends some per inode). */
void problem_latch_end(struct e4fsck *ctx, uint32_t question);

/*
 * From now on the members of latch question's family are answered as the
 * latch was, without printing them, until problem_latch_end() (e2fsck's
 * "Suppress messages? yes" for the rest of an inode's illegal blocks).
 * Nothing happens when the latch has not been asked.
 */
void problem_latch_quiet(struct e4fsck *ctx, uint32_t question);

/* The words of a prompt ("Fix", "Clear", ...). */
const char *problem_prompt_text(enum prompt p);

#endif
