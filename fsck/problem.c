/*
 * problem.c - looking up, printing and answering problems (see problem.h).
 */
#include "config.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/array.h"
#include "ext4fs/errors.h"
#include "context.h"
#include "problem.h"
#include "problems.h"
#include "progress.h"
#include "report.h"
#include "support/prompt.h"

static const struct problem_table *const tables[] = {
	&problems_pass0, &problems_pass1, &problems_pass2, &problems_pass3, &problems_pass4,
	&problems_pass5,
};

const struct problem *problem_find(uint32_t code)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (size_t i = 0; i < tables[t]->n; i++)
			if (tables[t]->rows[i].code == code)
				return &tables[t]->rows[i];
	return NULL;
}

/* The question, and what preen mode prints after a repair: e2fsck's words. */
static const struct {
	const char *ask, *preen;
} prompt_words[] = {
	[PROMPT_NONE] = { "", "" },
	[PROMPT_FIX] = { "Fix", "FIXED" },
	[PROMPT_CLEAR] = { "Clear", "CLEARED" },
	[PROMPT_RELOCATE] = { "Relocate", "RELOCATED" },
	[PROMPT_ALLOCATE] = { "Allocate", "ALLOCATED" },
	[PROMPT_EXPAND] = { "Expand", "EXPANDED" },
	[PROMPT_CONNECT] = { "Connect to /lost+found", "RECONNECTED" },
	[PROMPT_CREATE] = { "Create", "CREATED" },
	[PROMPT_SALVAGE] = { "Salvage", "SALVAGED" },
	[PROMPT_TRUNCATE] = { "Truncate", "TRUNCATED" },
	[PROMPT_CLEAR_INODE] = { "Clear inode", "INODE CLEARED" },
	[PROMPT_ABORT] = { "Abort", "ABORTED" },
	[PROMPT_SPLIT] = { "Split", "SPLIT" },
	[PROMPT_CONTINUE] = { "Continue", "CONTINUING" },
	[PROMPT_CLONE] = { "Clone multiply-claimed blocks", "MULTIPLY-CLAIMED BLOCKS CLONED" },
	[PROMPT_DELETE] = { "Delete file", "FILE DELETED" },
	[PROMPT_SUPPRESS] = { "Suppress messages", "SUPPRESSED" },
	[PROMPT_UNLINK] = { "Unlink", "UNLINKED" },
	[PROMPT_CLEAR_HTREE] = { "Clear HTree index", "HTREE INDEX CLEARED" },
	[PROMPT_RECREATE] = { "Recreate", "WILL RECREATE" },
	[PROMPT_OPTIMIZE] = { "Optimize", "WILL OPTIMIZE" },
	[PROMPT_CLEAR_FLAG] = { "Clear flag", "FLAG CLEARED" },
	[PROMPT_IGNORED] = { "", "IGNORED" },
	[PROMPT_NULL] = { "", "" },
};

const char *problem_prompt_text(enum prompt p)
{
	return (unsigned)p < sizeof(prompt_words) / sizeof(prompt_words[0]) ? prompt_words[p].ask : "";
}

/* Append to buf[*len..size), keeping it terminated. */
/* %U: a quota type's name, as e2fsck says it. */
static const char *quota_type_name(uint64_t type)
{
	static const char *const names[] = { "user", "group", "project" };

	return type < 3 ? names[type] : "unknown quota type";
}

static void put(char *buf, size_t size, size_t *len, const char *s)
{
	while (*s && *len + 1 < size)
		buf[(*len)++] = *s++;
	buf[*len] = '\0';
}

void problem_format(const struct e4fsck *ctx, const struct problem *p, const struct problem_ctx *pctx,
		    char *buf, size_t size)
{
	static const struct problem_ctx none;
	size_t len = 0;
	char num[64];

	if (!size)
		return;
	buf[0] = '\0';
	if (!pctx)
		pctx = &none;
	for (const char *m = p->msg; *m; m++) {
		if (*m != '%' || !m[1]) {
			char c[2] = { *m, '\0' };
			put(buf, size, &len, c);
			continue;
		}
		num[0] = '\0';
		switch (*++m) {
		case 'i': snprintf(num, sizeof(num), "%" PRIu32, pctx->ino); break;
		case 'j': snprintf(num, sizeof(num), "%" PRIu32, pctx->ino2); break;
		case 'd': snprintf(num, sizeof(num), "%" PRIu32, pctx->dir); break;
		case 'b': snprintf(num, sizeof(num), "%" PRIu64, pctx->blk); break;
		case 'c': snprintf(num, sizeof(num), "%" PRIu64, pctx->blk2); break;
		case 'N': snprintf(num, sizeof(num), "%" PRIu64, pctx->num); break;
		case 'M': snprintf(num, sizeof(num), "%" PRIu64, pctx->num2); break;
		case 'g': snprintf(num, sizeof(num), "%" PRIu32, pctx->group); break;
		case 'x': snprintf(num, sizeof(num), "0x%04" PRIx64, pctx->num); break;
		case 'y': snprintf(num, sizeof(num), "0x%04" PRIx64, pctx->num2); break;
		case 'X': snprintf(num, sizeof(num), "0x%" PRIx64, pctx->num); break;
		case 's': put(buf, size, &len, pctx->str ? pctx->str : ""); break;
		case 'B': {
			/* e2fsck's %B: the block's description in str, capitalised when it opens the message. */
			char word[64];
			snprintf(word, sizeof(word), "%s", pctx->str ? pctx->str : "");
			if (!len && word[0] >= 'a' && word[0] <= 'z')
				word[0] = (char)(word[0] - 'a' + 'A');
			put(buf, size, &len, word);
			break;
		}
		case 'U': put(buf, size, &len, quota_type_name(pctx->num)); break;
		/* e2fsck's %Q, ino's path in dir: PR_0_HIDE_QUOTA, its only user, gives it in path. */
		case 'Q': put(buf, size, &len, pctx->path ? pctx->path : ""); break;
		case 'n': put(buf, size, &len, pctx->name ? pctx->name : ""); break;
		case 'p': put(buf, size, &len, pctx->path ? pctx->path : ""); break;
		case 'P': put(buf, size, &len, pctx->path2 ? pctx->path2 : ""); break;
		case 'q': put(buf, size, &len, pctx->path3 ? pctx->path3 : ""); break;
		case 'm':
			put(buf, size, &len, pctx->errmsg ? pctx->errmsg : ctx && ctx->fs ? ext4fs_errmsg(ctx->fs) : "");
			break;
		case '%': put(buf, size, &len, "%"); break;
		default: {
			char c[3] = { '%', *m, '\0' };
			put(buf, size, &len, c);
		}
		}
		put(buf, size, &len, num);
	}
}

static int log_problem(struct e4fsck *ctx, const struct problem *p, const struct problem_ctx *pctx,
		       const char *message, int fixed)
{
	if (!ctx->json_path)
		return 0;
	if (ctx->nlog == ctx->caplog) {
		struct problem_record *grown =
			ext4fs_array_grow(ctx->log, &ctx->caplog, ctx->nlog + 1, sizeof(*grown), 64);
		if (!grown)
			return -1;
		ctx->log = grown;
	}
	struct problem_record *r = &ctx->log[ctx->nlog];
	memset(r, 0, sizeof(*r));
	r->code = p->code;
	r->id = p->id;
	r->pass = (int)(p->code >> 16);
	if (pctx) {
		r->ino = pctx->ino;
		r->blk = pctx->blk;
		r->num = pctx->num;
		r->group = pctx->group;
	}
	r->fixed = fixed;
	r->message = strdup(message);
	if (!r->message)
		return -1;
	ctx->nlog++;
	return 0;
}

/*
 * Ask on the terminal; 1 for yes.  Anything unreadable is a no.  One
 * newline after the answer, where -y and -n print two: e2fsck's way.
 */
static int ask_terminal(const struct problem *p)
{
	int def_yes = !(p->flags & PF_NO_DEFAULT);

	for (;;) {
		printf("%s<%c>? ", problem_prompt_text(p->prompt), def_yes ? 'y' : 'n');
		fflush(stdout);
		enum sup_answer a = sup_read_answer();
		if (a == SUP_ANSWER_EOF) {
			printf("no\n");
			return 0;
		}
		if (a == SUP_ANSWER_EMPTY) {
			printf("%s\n", def_yes ? "yes" : "no");
			return def_yes;
		}
		if (a == SUP_ANSWER_YES || a == SUP_ANSWER_NO) {
			printf("%s\n", a == SUP_ANSWER_YES ? "yes" : "no");
			return a == SUP_ANSWER_YES;
		}
	}
}

/*
 * Latched families: the family's question is asked once, the first time a
 * member turns up, and every member then prints its message followed by
 * "FIXED." or "IGNORED." as answered there (e2fsck's latches).
 */
static const struct {
	uint32_t member, question;
} latch_families[] = {
	{ PR_0_GDT_CSUM, PR_0_GDT_CSUM_LATCH },
	{ PR_1_LOW_DTIME, PR_1_ORPHAN_LIST_REFUGEES },
	{ PR_1_TOOBIG_DIR, PR_1_INODE_TOOBIG },
	{ PR_1_TOOBIG_SYMLINK, PR_1_INODE_TOOBIG },
	{ PR_1_ILLEGAL_BLOCK_NUM, PR_1_INODE_BLOCK_LATCH },
	{ PR_1_BB_ILLEGAL_BLOCK_NUM, PR_1_INODE_BBLOCK_LATCH },
	{ PR_1_BBINODE_BAD_METABLOCK, PR_1_INODE_BBLOCK_LATCH },
	{ PR_1_BB_FS_BLOCK, PR_1_INODE_BBLOCK_LATCH },
	{ PR_5_BLOCK_BITMAP_CSUM_INVALID, PR_5_BLOCK_BITMAP_HEADER },
	{ PR_5_INODE_BITMAP_CSUM_INVALID, PR_5_INODE_BITMAP_HEADER },
};

void problem_latch_end(struct e4fsck *ctx, uint32_t question)
{
	for (int i = 0; i < ctx->nlatches; i++)
		if (ctx->latches[i].code == question) {
			ctx->latches[i] = ctx->latches[--ctx->nlatches];
			return;
		}
}

void problem_latch_quiet(struct e4fsck *ctx, uint32_t question)
{
	for (int i = 0; i < ctx->nlatches; i++)
		if (ctx->latches[i].code == question)
			ctx->latches[i].quiet = 1;
}

static uint32_t latch_of(uint32_t code)
{
	for (size_t i = 0; i < sizeof(latch_families) / sizeof(latch_families[0]); i++)
		if (latch_families[i].member == code)
			return latch_families[i].question;
	return 0;
}

/*
 * A yes: counted, and when the question is a repair (a prompt, not an
 * optimization) remembered for the exit status, as e2fsck's PROBLEMS_FIXED.
 */
static void note_fixed(struct e4fsck *ctx, const struct problem *p)
{
	ctx->problems_fixed++;
	if (p->prompt != PROMPT_NONE && !(p->flags & PF_NOT_A_FIX))
		ctx->repairs_answered++;
}

/* A member of a latched family; returns the family's answer. */
static int latched(struct e4fsck *ctx, const struct problem *p, uint32_t question,
		   const struct problem_ctx *pctx, const char *message)
{
	int answer = -1, quiet = 0;

	for (int i = 0; i < ctx->nlatches; i++)
		if (ctx->latches[i].code == question) {
			answer = ctx->latches[i].answer;
			quiet = ctx->latches[i].quiet;
		}
	if (answer < 0) {
		answer = fix_problem(ctx, question, pctx);
		const struct problem *q = problem_find(question);
		/* A header for a question (the bitmaps' checksums): e2fsck takes the mode's answer unasked. */
		if (q && q->prompt == PROMPT_NONE)
			answer = !(ctx->mode == MODE_NO || ctx->read_only);
		if (ctx->nlatches < (int)(sizeof(ctx->latches) / sizeof(ctx->latches[0]))) {
			ctx->latches[ctx->nlatches].code = question;
			ctx->latches[ctx->nlatches].answer = answer;
			ctx->latches[ctx->nlatches].quiet = 0;
			ctx->nlatches++;
		}
	}
	if (ctx->mode == MODE_PREEN && ctx->aborted)
		return 0;
	/* Suppressed: answered, counted and repaired all the same, only not printed. */
	if (!quiet) {
		if (ctx->mode == MODE_PREEN)
			printf("%s: ", ctx->device);
		fputs(message, stdout);
		printf("%s.\n", answer ? prompt_words[p->prompt].preen : "IGNORED");
	}
	ctx->problems++;
	if (answer)
		note_fixed(ctx, p);
	else if (!(p->flags & (PF_NOT_AN_ERROR | PF_AFTER_NO)))
		ctx->exit_status |= FSCK_UNCORRECTED;
	if (log_problem(ctx, p, pctx, message, answer))
		ctx->exit_status |= FSCK_ERROR;
	return answer;
}

/* Preen mode meets a problem it leaves to a person: e2fsck's halt, after the message when shown.  Returns 0. */
static int preen_stop(struct e4fsck *ctx, const struct problem *p, const struct problem_ctx *pctx, const char *message,
		      int shown)
{
	if (shown) {
		printf("%s: ", ctx->device);
		fputs(message, stdout);
	}
	fsck_preen_halt_message(ctx);
	log_problem(ctx, p, pctx, message, 0);
	return 0;
}

void fsck_preen_halt_message(struct e4fsck *ctx)
{
	printf("\n\n%s: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n"
	       "\t(i.e., without -a or -p options)\n", ctx->device);
	ctx->aborted = 1;
	ctx->exit_status |= FSCK_UNCORRECTED;
}

int fix_problem(struct e4fsck *ctx, uint32_t code, const struct problem_ctx *pctx)
{
	const struct problem *p = problem_find(code);
	char message[1024];
	int answer;

	if (!p) {
		fprintf(stderr, "%s: internal error: unknown problem code 0x%06" PRIx32 "\n", ctx->prog, code);
		ctx->exit_status |= FSCK_ERROR;
		return 0;
	}
	problem_format(ctx, p, pctx, message, sizeof(message));
	/* As e2fsck: a progress bar on the terminal gives way to the message. */
	progress_clear(ctx);
	uint32_t question = latch_of(code);
	if (question)
		return latched(ctx, p, question, pctx, message);
	ctx->problems++;

	if (ctx->mode == MODE_PREEN) {
		if (p->flags & PF_PREEN_STOP_QUIET) {
			/* e2fsck's preen halt after a message it keeps to itself. */
			return preen_stop(ctx, p, pctx, message, 0);
		} else if (p->flags & PF_PREEN_NOMSG) {
			answer = !ctx->read_only;
		} else if (p->prompt == PROMPT_NONE) {
			/* A message with no question never stops preen mode. */
			if (!(p->flags & PF_PREEN_NOHDR))
				printf("%s: ", ctx->device);
			fputs(message, stdout);
			answer = 0;
		} else if (p->flags & (PF_PREEN_OK | PF_PREEN_NO)) {
			answer = (p->flags & PF_PREEN_OK) && !ctx->read_only;
			printf("%s: ", ctx->device);
			fputs(message, stdout);
			/* As e2fsck: the answer follows the message as it is, a message alone ends itself. */
			if (p->prompt != PROMPT_NONE)
				printf("%s.\n", answer || p->prompt == PROMPT_IGNORED ?
						 prompt_words[p->prompt].preen : "IGNORED");
		} else {
			return preen_stop(ctx, p, pctx, message, 1);
		}
	} else {
		fputs(message, stdout);
		if (p->prompt == PROMPT_NONE) {
			answer = 0;
		} else if (p->prompt == PROMPT_IGNORED) {
			printf("IGNORED.\n");
			answer = 0;
		} else if (ctx->mode == MODE_NO || ctx->read_only) {
			printf("%s? no\n\n", prompt_words[p->prompt].ask);
			answer = 0;
		} else if (ctx->mode == MODE_YES) {
			printf("%s? yes\n\n", prompt_words[p->prompt].ask);
			answer = 1;
		} else {
			answer = ask_terminal(p);
		}
	}
	if (answer)
		note_fixed(ctx, p);
	else if (p->prompt != PROMPT_NONE && !(p->flags & (PF_NOT_AN_ERROR | PF_AFTER_NO)))
		ctx->exit_status |= FSCK_UNCORRECTED;
	if (log_problem(ctx, p, pctx, message, answer))
		ctx->exit_status |= FSCK_ERROR;
	if (p->flags & PF_FATAL) {
		ctx->fatal = 1;
		ctx->exit_status |= FSCK_ERROR;
		report_abort(ctx);
	}
	return answer;
}
