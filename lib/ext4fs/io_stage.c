/* io_stage.c - the staging channel (see io_stage_internal.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "io_internal.h"
#include "io_stage_internal.h"

struct staged_block {
	uint64_t blk;
	unsigned char *data;        /* the block as the file system sees it now */
	unsigned char *committed;   /* logged and changed since: what the log holds */
	unsigned state;             /* EXT4FS__STAGE_* */
	size_t pend_index;          /* place in the pending list while pending */
	struct staged_block *next;  /* hash chain */
};

struct stage {
	struct ext4fs_io *inner;
	uint32_t bs;
	unsigned shift;             /* log2(bs) */
	struct staged_block **buckets;
	size_t nbuckets;            /* a power of two */
	size_t count;
	struct staged_block **pend; /* the pending blocks, in no order: a commit walks only these */
	size_t pending, pend_cap;
	uint64_t *freed;            /* blocks marked freed since the last commit */
	size_t nfreed, freed_cap;
};

static const struct ext4fs_io_ops stage_ops;

static size_t bucket_of(const struct stage *st, uint64_t blk)
{
	return (size_t)((blk * 0x9E3779B97F4A7C15ULL) >> 32) & (st->nbuckets - 1);
}

static struct staged_block *find(const struct stage *st, uint64_t blk)
{
	for (struct staged_block *b = st->buckets[bucket_of(st, blk)]; b; b = b->next)
		if (b->blk == blk)
			return b;
	return NULL;
}

static void block_free(struct staged_block *b)
{
	free(b->data);
	free(b->committed);
	free(b);
}

/* Double the table when chains grow past two on average. */
static void maybe_grow(struct stage *st)
{
	size_t n = st->nbuckets * 2;
	struct staged_block **nb;

	if (st->count < st->nbuckets * 2 || n > SIZE_MAX / sizeof(*nb))
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return;   /* longer chains, still correct */
	for (size_t i = 0; i < st->nbuckets; i++) {
		struct staged_block *b = st->buckets[i], *next;
		for (; b; b = next) {
			size_t k = (size_t)((b->blk * 0x9E3779B97F4A7C15ULL) >> 32) & (n - 1);
			next = b->next;
			b->next = nb[k];
			nb[k] = b;
		}
	}
	free(st->buckets);
	st->buckets = nb;
	st->nbuckets = n;
}

/* The staged copy of blk, made (from the disk when fill) when there is none. */
static int get_block(struct stage *st, uint64_t blk, int fill, struct staged_block **out)
{
	struct staged_block *b = find(st, blk);
	int err;

	if (b) {
		*out = b;
		return 0;
	}
	b = calloc(1, sizeof(*b));
	if (!b || !(b->data = malloc(st->bs))) {
		free(b);
		return EXT4FS_E_NO_MEMORY;
	}
	b->blk = blk;
	if (fill) {
		err = ext4fs_io_read(st->inner, blk << st->shift, b->data, st->bs);
		if (err) {
			block_free(b);
			return err;
		}
	}
	size_t k = bucket_of(st, blk);
	b->next = st->buckets[k];
	st->buckets[k] = b;
	st->count++;
	maybe_grow(st);
	*out = b;
	return 0;
}

static void pend_remove(struct stage *st, struct staged_block *b)
{
	struct staged_block *last = st->pend[--st->pending];

	st->pend[b->pend_index] = last;
	last->pend_index = b->pend_index;
}

static void unlink_block(struct stage *st, struct staged_block *victim)
{
	struct staged_block **p = &st->buckets[bucket_of(st, victim->blk)];

	while (*p != victim)
		p = &(*p)->next;
	*p = victim->next;
	st->count--;
	if (victim->state & EXT4FS__STAGE_PENDING)
		pend_remove(st, victim);
	block_free(victim);
}

/* Mark b changed by the running transaction, keeping the committed contents of a logged block. */
static int make_pending(struct stage *st, struct staged_block *b)
{
	/* Written again after being freed (only a caller bug does that): log it as any block. */
	b->state &= ~(unsigned)EXT4FS__STAGE_FREED;
	if ((b->state & EXT4FS__STAGE_LOGGED) && !(b->state & EXT4FS__STAGE_PENDING) && !b->committed) {
		b->committed = malloc(st->bs);
		if (!b->committed)
			return EXT4FS_E_NO_MEMORY;
		memcpy(b->committed, b->data, st->bs);
	}
	if (!(b->state & EXT4FS__STAGE_PENDING)) {
		if (st->pending == st->pend_cap) {
			size_t cap = st->pend_cap ? st->pend_cap * 2 : 256;
			struct staged_block **n = realloc(st->pend, cap * sizeof(*n));
			if (!n)
				return EXT4FS_E_NO_MEMORY;
			st->pend = n;
			st->pend_cap = cap;
		}
		b->pend_index = st->pending;
		st->pend[st->pending++] = b;
		b->state |= EXT4FS__STAGE_PENDING;
	}
	return 0;
}

static int stage_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len)
{
	struct stage *st = io->priv;
	unsigned char *out = buf;

	if (st->count == 0)
		return ext4fs_io_read(st->inner, offset, buf, len);
	while (len) {
		uint64_t blk = offset >> st->shift;
		size_t in = (size_t)(offset & (st->bs - 1));
		size_t n = st->bs - in < len ? st->bs - in : len;
		struct staged_block *b = find(st, blk);

		if (b) {
			memcpy(out, b->data + in, n);
		} else {
			/* Read the whole run of unstaged blocks at once. */
			while (n < len && !find(st, (offset + n) >> st->shift))
				n += st->bs < len - n ? st->bs : len - n;
			int err = ext4fs_io_read(st->inner, offset, out, n);
			if (err)
				return err;
		}
		out += n;
		offset += n;
		len -= n;
	}
	return 0;
}

/* Copy len bytes of src (NULL: zeros) at offset into staged blocks, all pending. */
static int stage_store(struct stage *st, uint64_t offset, const unsigned char *src, uint64_t len)
{
	while (len) {
		uint64_t blk = offset >> st->shift;
		size_t in = (size_t)(offset & (st->bs - 1));
		size_t n = st->bs - in < len ? st->bs - in : (size_t)len;
		struct staged_block *b;
		int err = get_block(st, blk, n != st->bs, &b);

		if (!err)
			err = make_pending(st, b);
		if (err)
			return err;
		if (src)
			memcpy(b->data + in, src, n);
		else
			memset(b->data + in, 0, n);
		if (src)
			src += n;
		offset += n;
		len -= n;
	}
	return 0;
}

static int stage_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len)
{
	return stage_store(io->priv, offset, buf, len);
}

static int stage_zeroout(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	return stage_store(io->priv, offset, NULL, len);
}

/* Durability comes from committing; a flush of staged blocks has nothing to do. */
static int stage_flush(struct ext4fs_io *io)
{
	(void)io;
	return 0;
}

static void stage_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct stage *st = io->priv;

	ext4fs_io_readahead(st->inner, offset, len);
}

static void drop_all(struct stage *st)
{
	for (size_t i = 0; i < st->nbuckets; i++) {
		struct staged_block *b = st->buckets[i], *next;
		for (; b; b = next) {
			next = b->next;
			block_free(b);
		}
		st->buckets[i] = NULL;
	}
	st->count = st->pending = 0;
}

static void stage_free(struct stage *st)
{
	drop_all(st);
	free(st->freed);
	free(st->pend);
	free(st->buckets);
	free(st);
}

static void stage_close(struct ext4fs_io *io)
{
	struct stage *st = io->priv;

	ext4fs_io_close(st->inner);
	stage_free(st);
}

static const struct ext4fs_io_ops stage_ops = {
	.read = stage_read, .write = stage_write, .flush = stage_flush, .readahead = stage_readahead,
	.close = stage_close, .discard = NULL, .zeroout = stage_zeroout,
};

int ext4fs__stage_wrap(struct ext4fs_io *inner, uint32_t block_size, struct ext4fs_io **out)
{
	struct ext4fs_io *io = NULL;
	struct stage *st = NULL;
	unsigned shift = 10;

	*out = NULL;
	while (shift <= 16 && (1U << shift) != block_size)
		shift++;
	if (shift > 16)
		return EXT4FS_E_INVALID_ARG;
	st = calloc(1, sizeof(*st));
	if (st) {
		st->nbuckets = 256;
		st->buckets = calloc(st->nbuckets, sizeof(*st->buckets));
	}
	io = st && st->buckets ? ext4fs__io_wrapper(&stage_ops, st, inner) : NULL;
	if (!io) {
		if (st)
			free(st->buckets);
		free(st);
		return EXT4FS_E_NO_MEMORY;
	}
	st->inner = inner;
	st->bs = block_size;
	st->shift = shift;
	io->stats = inner->stats;
	*out = io;
	return 0;
}

int ext4fs__stage_is(const struct ext4fs_io *io)
{
	return io && io->ops == &stage_ops;
}

struct ext4fs_io *ext4fs__stage_unwrap(struct ext4fs_io *io)
{
	struct stage *st = io->priv;
	struct ext4fs_io *inner = st->inner;

	stage_free(st);
	free(io->name);
	free(io);
	return inner;
}

struct ext4fs_io *ext4fs__stage_inner(const struct ext4fs_io *io)
{
	return ((const struct stage *)io->priv)->inner;
}

int ext4fs__stage_write_through(struct ext4fs_io *io, uint64_t offset, const void *buf, uint64_t len)
{
	struct stage *st = io->priv;
	const unsigned char *src = buf;
	int err;

	err = buf ? ext4fs_io_write(st->inner, offset, buf, (size_t)len) : ext4fs_io_zeroout(st->inner, offset, len);
	if (err)
		return err;
	io->stats.writes++;
	io->stats.bytes_written += len;
	if (st->count == 0)
		return 0;
	for (uint64_t pos = offset; pos < offset + len;) {
		uint64_t blk = pos >> st->shift;
		size_t in = (size_t)(pos & (st->bs - 1));
		size_t n = st->bs - in < offset + len - pos ? st->bs - in : (size_t)(offset + len - pos);
		struct staged_block *b = find(st, blk);

		if (b && n == st->bs) {
			unlink_block(st, b);
		} else if (b) {
			if (src)
				memcpy(b->data + in, src + (pos - offset), n);
			else
				memset(b->data + in, 0, n);
		}
		pos += n;
	}
	return 0;
}

unsigned ext4fs__stage_state(const struct ext4fs_io *io, uint64_t blk)
{
	const struct staged_block *b = find(io->priv, blk);

	return b ? b->state : 0;
}

int ext4fs__stage_freed(struct ext4fs_io *io, uint64_t blk)
{
	struct stage *st = io->priv;
	struct staged_block *b = find(st, blk);

	if (!b)
		return 0;
	if (!(b->state & EXT4FS__STAGE_LOGGED)) {
		unlink_block(st, b);
		return 0;
	}
	if (st->nfreed == st->freed_cap) {
		size_t cap = st->freed_cap ? st->freed_cap * 2 : 64;
		uint64_t *n = realloc(st->freed, cap * sizeof(*n));
		if (!n)
			return EXT4FS_E_NO_MEMORY;
		st->freed = n;
		st->freed_cap = cap;
	}
	st->freed[st->nfreed++] = blk;
	if (b->state & EXT4FS__STAGE_PENDING) {
		pend_remove(st, b);
		b->state &= ~(unsigned)EXT4FS__STAGE_PENDING;
	}
	/* What a checkpoint writes home is what the log holds. */
	if (b->committed) {
		free(b->data);
		b->data = b->committed;
		b->committed = NULL;
	}
	b->state |= EXT4FS__STAGE_FREED;
	return 0;
}

size_t ext4fs__stage_pending(const struct ext4fs_io *io)
{
	return ((const struct stage *)io->priv)->pending;
}

size_t ext4fs__stage_count(const struct ext4fs_io *io)
{
	return ((const struct stage *)io->priv)->count;
}

static int cmp_staged(const void *a, const void *b)
{
	uint64_t x = ((const struct ext4fs__staged *)a)->blk, y = ((const struct ext4fs__staged *)b)->blk;

	return x < y ? -1 : x > y;
}

/* Every block with one of the state bits in mask, sorted; data is the committed contents when logged_view. */
static int list_blocks(const struct stage *st, unsigned mask, int logged_view, struct ext4fs__staged **out,
		       size_t *n)
{
	struct ext4fs__staged *v;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	v = malloc((st->count ? st->count : 1) * sizeof(*v));
	if (!v)
		return EXT4FS_E_NO_MEMORY;
	for (size_t i = 0; i < st->nbuckets; i++)
		for (const struct staged_block *b = st->buckets[i]; b; b = b->next)
			if (b->state & mask) {
				v[k].blk = b->blk;
				v[k].data = logged_view && b->committed ? b->committed : b->data;
				k++;
			}
	qsort(v, k, sizeof(*v), cmp_staged);
	*out = v;
	*n = k;
	return 0;
}

int ext4fs__stage_pending_list(const struct ext4fs_io *io, struct ext4fs__staged **out, size_t *n)
{
	const struct stage *st = io->priv;
	struct ext4fs__staged *v = malloc((st->pending ? st->pending : 1) * sizeof(*v));

	*out = NULL;
	*n = 0;
	if (!v)
		return EXT4FS_E_NO_MEMORY;
	for (size_t i = 0; i < st->pending; i++)
		v[i] = (struct ext4fs__staged){ st->pend[i]->blk, st->pend[i]->data };
	qsort(v, st->pending, sizeof(*v), cmp_staged);
	*out = v;
	*n = st->pending;
	return 0;
}

void ext4fs__stage_committed(struct ext4fs_io *io)
{
	struct stage *st = io->priv;

	/* Their freeing is committed: the log's copies are revoked, home no longer matters. */
	for (size_t i = 0; i < st->nfreed; i++) {
		struct staged_block *b = find(st, st->freed[i]);
		if (b && (b->state & EXT4FS__STAGE_FREED))
			unlink_block(st, b);
	}
	st->nfreed = 0;

	for (size_t i = 0; i < st->pending; i++) {
		struct staged_block *b = st->pend[i];
		b->state = EXT4FS__STAGE_LOGGED;
		free(b->committed);
		b->committed = NULL;
	}
	st->pending = 0;
}

int ext4fs__stage_checkpoint(struct ext4fs_io *io)
{
	struct stage *st = io->priv;
	struct ext4fs__staged *v;
	unsigned char *run = NULL;
	size_t n, i = 0;
	int err = list_blocks(st, EXT4FS__STAGE_LOGGED, 1, &v, &n);

	if (err)
		return err;
	/* Neighbours go out in one write of up to 64 blocks. */
	run = malloc((size_t)st->bs * 64);
	if (!run) {
		free(v);
		return EXT4FS_E_NO_MEMORY;
	}
	while (i < n && !err) {
		size_t len = 1;
		memcpy(run, v[i].data, st->bs);
		while (i + len < n && len < 64 && v[i + len].blk == v[i].blk + len) {
			memcpy(run + len * st->bs, v[i + len].data, st->bs);
			len++;
		}
		err = ext4fs_io_write(st->inner, v[i].blk << st->shift, run, len * st->bs);
		i += len;
	}
	free(run);
	free(v);
	if (err)
		return err;
	for (size_t k = 0; k < st->nbuckets; k++) {
		struct staged_block **p = &st->buckets[k];
		while (*p) {
			struct staged_block *b = *p;
			if (!(b->state & EXT4FS__STAGE_LOGGED)) {
				p = &b->next;
			} else if (b->state & EXT4FS__STAGE_PENDING) {
				b->state = EXT4FS__STAGE_PENDING;
				free(b->committed);
				b->committed = NULL;
				p = &b->next;
			} else {
				*p = b->next;
				st->count--;
				block_free(b);
			}
		}
	}
	return 0;
}
