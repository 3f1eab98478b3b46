/*
 * deferred.c - replaying recorded problems through fix_problem() by their
 * rules (see deferred.h).
 */
#include "config.h"
#include <string.h>
#include "context.h"
#include "deferred.h"

void deferred_init(struct deferred *d, uint32_t code, const struct problem_ctx *pctx)
{
	memset(d, 0, sizeof(*d));
	d->code = code;
	d->pctx = *pctx;
}

static struct deferred *record_at(void *recs, size_t stride, size_t i)
{
	return (struct deferred *)((char *)recs + i * stride);
}

/* Whether record i's rules let it be asked, given the answers before it. */
static int due(void *recs, size_t stride, const struct deferred_inode *st, size_t i)
{
	const struct deferred *d = record_at(recs, stride, i);

	if (st->stopped)
		return 0;
	if ((d->rules & DEFER_AFTER_NO) && st->last_answer)
		return 0;
	if ((d->rules & DEFER_NOT_CLEARED) && st->cleared)
		return 0;
	/* Found assuming an earlier repair: asked only if that repair was made. */
	if ((d->rules & DEFER_IF_YES_BACK) &&
	    (d->back > i - st->first || !record_at(recs, stride, i - d->back)->answered_yes))
		return 0;
	/* Found assuming an earlier question declined: asked only after that no. */
	if ((d->rules & DEFER_IF_NO_BACK) &&
	    (d->back > i - st->first || !record_at(recs, stride, i - d->back)->asked ||
	     record_at(recs, stride, i - d->back)->answered_yes))
		return 0;
	return 1;
}

int deferred_replay(struct e4fsck *ctx, void *recs, size_t n, size_t stride, const struct deferred_ops *ops,
		    void *arg)
{
	for (size_t i = 0; i < n && !ctx->aborted;) {
		struct deferred_inode st = { .ino = record_at(recs, stride, i)->pctx.ino, .first = i };

		if (ops->begin)
			ops->begin(arg, &st);
		for (; i < n && record_at(recs, stride, i)->pctx.ino == st.ino && !ctx->aborted; i++) {
			struct deferred *d = record_at(recs, stride, i);
			if (!due(recs, stride, &st, i))
				continue;
			int verdict = ops->prepare ? ops->prepare(arg, &st, d) : DEFER_ASK;
			if (verdict < 0)
				return -1;
			if (verdict != DEFER_ASK)
				continue;
			if (d->rules & DEFER_JUDGED) {
				int still = ops->judge(arg, &st, d);
				if (still < 0)
					return -1;
				if (!still)
					continue;
			}
			st.last_answer = fix_problem(ctx, d->code, &d->pctx);
			d->asked = 1;
			d->answered_yes = st.last_answer;
			/* e2fsck's fatal errors (an extent walk that failed on a kept inode) end the check here. */
			if (ctx->fatal)
				return -1;
			if (ops->answered(arg, &st, d, st.last_answer))
				return -1;
		}
		if (ops->end && ops->end(arg, &st))
			return -1;
	}
	return 0;
}
