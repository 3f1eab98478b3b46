/*
 * rehash.c - pass 3A: rebuilding directories, as e2fsck's rehash does.
 *
 * Which directories: with -D every one; otherwise those put on the list by
 * the earlier passes (rehash.h): on a dir_index file system that is not
 * checked with -n, every linear directory of three blocks or more (pass 2
 * notes them when it loads the directories, where e2fsck's pass 1 does),
 * a directory whose index was cleared, one with a leaf that needs a
 * checksum tail it has no room for, and - even with -n - one holding a name
 * twice in a block.  The directory the root names lost+found when pass 2
 * starts is not indexed for its size (e2fsck leaves it too); a rebuilt
 * /lost+found keeps all its blocks, empty ones included, so that files can
 * be reconnected there without allocating.
 *
 * Each directory is read whole into memory.  Its live entries are sorted
 * by hash (or, for the linear layout, by name), so that names given twice
 * sit side by side: the same name for the same inode is offered to be
 * cleared, the same name for another inode to be renamed "name~0" (then
 * ~1, ...), as e2fsck renames.  With -n that is where it stops.  Otherwise
 * the entries are written back by ext4fs_dir_rebuild(): indexed when the
 * file system has dir_index, the directory had at least two blocks and its
 * entries fill more than one block, else linear, sorted by inode number
 * after "." and "..".  The checker's maps follow the blocks the rebuild
 * allocated and freed.
 *
 * Rebuilding is not a repair by itself: like e2fsck, a run that only
 * optimized directories says the file system was modified and exits 0.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/dxhash.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/htree.h"
#include "ext4fs/super.h"
#include "ext4fs/utf8fold.h"
#include "dirs.h"
#include "context.h"
#include "extents.h"
#include "indirect.h"
#include "problem.h"
#include "problems.h"
#include "problems_dirs.h"
#include "progress.h"
#include "rehash.h"
#include "report.h"

#define SLACK_PERCENT 20        /* e2fsck's indexed_dir_slack_percentage default */
#define ROOT_SPACE    24        /* "." and ".." in an htree root: less than this is one block */
#define REHASH_STOP   1         /* rehash_dir(): the run must stop (reported) */

/* -- The list ------------------------------------------------------------------ */

static size_t list_pos(const struct e4fsck *ctx, uint32_t ino)
{
	size_t lo = 0, hi = ctx->nrehash;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->rehash[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int fsck_rehash_later(struct e4fsck *ctx, uint32_t ino)
{
	size_t at = list_pos(ctx, ino);

	ctx->rehash_on = 1;
	if (at < ctx->nrehash && ctx->rehash[at] == ino)
		return 0;
	if (ctx->nrehash == ctx->caprehash) {
		uint32_t *grown =
			ext4fs_array_grow(ctx->rehash, &ctx->caprehash, ctx->nrehash + 1, sizeof(*grown), 64);
		if (!grown) {
			fsck_fatal(ctx, "out of memory while listing directories to rebuild");
			return -1;
		}
		ctx->rehash = grown;
	}
	memmove(ctx->rehash + at + 1, ctx->rehash + at, (ctx->nrehash - at) * sizeof(*ctx->rehash));
	ctx->rehash[at] = ino;
	ctx->nrehash++;
	return 0;
}

int fsck_rehash_pending(const struct e4fsck *ctx, uint32_t ino)
{
	size_t at;

	if (ctx->optimize_dirs)
		return 1;
	at = list_pos(ctx, ino);
	return at < ctx->nrehash && ctx->rehash[at] == ino;
}

/* -- Reading a directory ---------------------------------------------------------- */

struct entry {
	const char *name;           /* in the directory's name pool */
	uint32_t inode;
	uint32_t hash, minor_hash;
	uint8_t name_len, file_type;
	const char *folded;         /* casefolded directories: the name's folded form (pool) */
	int folded_len;             /* its length; -1 elsewhere and for a name that is not valid UTF-8 */
};

/*
 * Names, copied into chunks that never move (entries point into them and
 * are sorted and renamed meanwhile); freed together.
 */
#define POOL_CHUNK 65536
struct name_chunk {
	struct name_chunk *next;
	size_t used;
	char bytes[POOL_CHUNK];
};

static const char *pool_copy(struct name_chunk **pool, const void *name, size_t len)
{
	struct name_chunk *c = *pool;

	if (!c || c->used + len > POOL_CHUNK) {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->next = *pool;
		c->used = 0;
		*pool = c;
	}
	char *at = c->bytes + c->used;
	memcpy(at, name, len);
	c->used += len;
	return at;
}

static void pool_free(struct name_chunk *pool)
{
	while (pool) {
		struct name_chunk *next = pool->next;
		free(pool);
		pool = next;
	}
}

struct dir_read {
	struct e4fsck *ctx;
	int casefold;               /* names are compared by their casefolded form */
	int keep;                   /* encrypted and casefolded: hashes need the key, left as it is */
	uint32_t ino;
	struct ext4fs_inode in;
	int compress;               /* the linear layout: "." and ".." are entries too */
	int hash_version;
	uint32_t parent;            /* what ".." names (indexed layout) */
	struct entry *ents;
	size_t n, cap;
	struct name_chunk *names;
	uint64_t dir_size;          /* bytes the live entries need */
};

/* The entry's hashes; the linear layout sorts by name and leaves them 0. */
static int name_hash(struct dir_read *d, struct entry *e)
{
	int approx = 0;

	e->hash = e->minor_hash = 0;
	if (d->compress)
		return 0;
	return ext4fs_htree_name_hash(d->ctx->fs, &d->in, d->hash_version, e->name, e->name_len, &e->hash,
				      &e->minor_hash, &approx);
}

/*
 * A renamed entry is hashed whatever the layout, as e2fsck hashes it: in
 * the linear layout it then sorts after the others, which decides where it
 * lands among entries for the same inode.  A name that cannot be hashed
 * keeps hash 0.
 */
static void renamed_hash(struct dir_read *d, struct entry *e)
{
	int approx = 0;

	if (ext4fs_htree_name_hash(d->ctx->fs, &d->in, d->hash_version, e->name, e->name_len, &e->hash,
				   &e->minor_hash, &approx))
		e->hash = e->minor_hash = 0;
}

/* The entry's folded form, in a casefolded directory; 0 or -ENOMEM. */
static int name_fold(struct dir_read *d, struct entry *e)
{
	uint8_t folded[EXT4FS_UTF8_FOLD_MAX];
	int n;

	e->folded = NULL;
	e->folded_len = -1;
	if (!d->casefold)
		return 0;
	n = ext4fs_utf8_casefold(e->name, e->name_len, folded, sizeof(folded));
	if (n < 0)
		return 0;
	e->folded = pool_copy(&d->names, (const char *)folded, (size_t)n);
	if (!e->folded && n)
		return -ENOMEM;
	e->folded_len = n;
	return 0;
}

/* The entries of one block; EXT4FS_E_DIR_CORRUPT for a record e2fsck's rehash would not accept. */
static int read_block(struct dir_read *d, const unsigned char *buf)
{
	uint32_t bs = d->ctx->geo->block_size, off = 0;

	while (off < bs) {
		const unsigned char *de = buf + off;
		if (off + EXT4FS_DIRENT_HEAD_SIZE > bs)
			return EXT4FS_E_DIR_CORRUPT;
		struct ext4fs_dirent_head h;
		ext4fs_dirent_head_decode(de, &h);
		const unsigned char *name = de + EXT4FS_DIRENT_OFF_NAME;
		uint32_t rec_len = ext4fs_dirent_rec_len(h.rec_len_raw, bs);
		unsigned name_len = h.name_len;
		if (off + rec_len > bs || rec_len < 8 || rec_len % 4 || name_len + 8 > rec_len)
			return EXT4FS_E_DIR_CORRUPT;
		off += rec_len;
		uint32_t ino = h.inode;
		if (!ino)
			continue;
		if (!name_len)
			return EXT4FS_E_DIR_CORRUPT;
		int dot = name_len == 1 && name[0] == '.';
		int dotdot = name_len == 2 && name[0] == '.' && name[1] == '.';
		if (!d->compress && (dot || dotdot)) {
			if (dotdot)
				d->parent = ino;
			continue;
		}
		if (d->n == d->cap) {
			struct entry *grown =
				ext4fs_array_grow(d->ents, &d->cap, d->n + 1, sizeof(*grown), 64);
			if (!grown)
				return -ENOMEM;
			d->ents = grown;
		}
		struct entry *e = &d->ents[d->n++];
		e->inode = ino;
		e->name_len = (uint8_t)name_len;
		e->file_type = h.file_type;
		e->name = pool_copy(&d->names, name, name_len);
		if (!e->name)
			return -ENOMEM;
		d->dir_size += (8 + name_len + 3) & ~3U;
		int err = name_fold(d, e);
		if (!err)
			err = name_hash(d, e);
		if (err)
			return err;
	}
	return 0;
}

#define READ_RUN 64             /* directory blocks read per request, at most */

struct run_read {
	struct dir_read *d;
	uint64_t nblocks;           /* the blocks i_size covers: those past it are not read */
	unsigned char *buf;         /* READ_RUN blocks */
};

/* One run of the directory's blocks, read in pieces of at most READ_RUN; 1 once past i_size. */
static int read_run(const struct ext4fs_block_visit *v, void *arg)
{
	struct run_read *r = arg;
	struct ext4fs_fs *fs = r->d->ctx->fs;
	uint32_t bs = r->d->ctx->geo->block_size;

	if (v->lblk >= r->nblocks)
		return 1;       /* runs come in logical order: the rest lie past it too */
	for (uint64_t done = 0; done < v->count && v->lblk + done < r->nblocks;) {
		uint64_t n = v->count - done, pblk = v->pblk + done;
		if (n > r->nblocks - (v->lblk + done))
			n = r->nblocks - (v->lblk + done);
		if (n > READ_RUN)
			n = READ_RUN;
		int err = ext4fs_block_range_valid(fs, pblk, n) ? ext4fs_blocks_read(fs, pblk, n, r->buf)
								  : EXT4FS_E_DIR_CORRUPT;
		for (uint64_t k = 0; k < n && !err; k++)
			err = read_block(r->d, r->buf + k * bs);
		if (err)
			return err;
		done += n;
	}
	return 0;
}

/*
 * The entries of every block the directory maps below i_size, in logical
 * order.  The map is walked, not i_size, so a damaged size cannot make the
 * walk go on for ever through holes.
 */
static int read_dir(struct dir_read *d)
{
	struct run_read r = { d, ext4fs_inode_size(&d->in) / d->ctx->geo->block_size,
			      malloc((size_t)d->ctx->geo->block_size * READ_RUN) };
	int err;

	if (!r.buf)
		return -ENOMEM;
	d->n = 0;
	d->dir_size = 0;
	d->parent = 0;
	err = ext4fs_block_iterate(d->ctx->fs, d->ino, &d->in, EXT4FS_ITER_DATA_ONLY, read_run, &r);
	free(r.buf);
	return err > 0 ? 0 : err;
}

/* -- Order and duplicates ---------------------------------------------------------- */

/*
 * By name; in a casefolded directory by the folded names (e2fsck's
 * comparison there), where a name that is not valid UTF-8 is compared as
 * its bytes.
 */
static int name_order(const struct entry *a, const struct entry *b)
{
	const char *an = a->name, *bn = b->name;
	unsigned alen = a->name_len, blen = b->name_len;

	if (a->folded_len >= 0 && b->folded_len >= 0) {
		an = a->folded, alen = (unsigned)a->folded_len;
		bn = b->folded, blen = (unsigned)b->folded_len;
	}
	unsigned min = alen < blen ? alen : blen;
	int c = min ? memcmp(an, bn, min) : 0;

	if (c)
		return c;
	if (alen != blen)
		return alen < blen ? -1 : 1;
	/* Names that fold alike: the shorter first (e2fsck's tie-break). */
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	/* The same name: the higher inode first, as e2fsck sorts. */
	return a->inode > b->inode ? -1 : a->inode < b->inode;
}

static int hash_order(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->minor_hash != b->minor_hash)
		return a->minor_hash < b->minor_hash ? -1 : 1;
	return name_order(a, b);
}

static int inode_order(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	return a->inode < b->inode ? -1 : a->inode > b->inode;
}

/*
 * Sort by hash: a stable radix sort on the 32-bit major hash (four passes
 * of a byte), then the few runs of equal hashes by hash_order.  Directories
 * hold up to millions of entries; this costs a fraction of a comparison
 * sort's time.  Falls back to qsort without memory for the copy.
 */
static void sort_by_hash(struct entry *e, size_t n)
{
	struct entry *tmp = malloc(n * sizeof(*tmp)), *from = e, *to = tmp;

	if (!tmp) {
		qsort(e, n, sizeof(*e), hash_order);
		return;
	}
	for (unsigned shift = 0; shift < 32; shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((from[i].hash >> shift) & 0xff) + 1]++;
		for (unsigned b = 1; b <= 256; b++)
			count[b] += count[b - 1];
		for (size_t i = 0; i < n; i++)
			to[count[(from[i].hash >> shift) & 0xff]++] = from[i];
		struct entry *t = from;
		from = to;
		to = t;
	}
	/* Four passes: the sorted entries are back in e. */
	free(tmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && e[j].hash == e[i].hash)
			j++;
		if (j - i > 1)
			qsort(e + i, j - i, sizeof(*e), hash_order);
		i = j;
	}
}

/* The linear layout keeps "." and ".." in front: only what follows them moves. */
static void sort_entries(struct dir_read *d, int (*order)(const void *, const void *))
{
	size_t skip = d->compress ? 2 : 0;

	if (d->n <= skip + 1)
		return;
	if (order == hash_order)
		sort_by_hash(d->ents + skip, d->n - skip);
	else
		qsort(d->ents + skip, d->n - skip, sizeof(*d->ents), order);
}

/*
 * The next name e2fsck would try for a name given twice: "name~0" (the
 * last one or two bytes give way so the record does not grow past its
 * 4-byte padding), then "~1", ... "~9", "~10", and so on.
 */
static void next_unique_name(char *s, uint8_t *lenp)
{
	int l = *lenp, i;

	for (i = l - 1; i > 0 && isdigit((unsigned char)s[i]); i--)
		;
	if (i == l - 1 || s[i] != '~') {
		l = ((l - 1) & 3) < 2 ? l + 2 : (l + 3) & ~3;
		if (l > 255)
			l = 255;
		s[l - 2] = '~';
		s[l - 1] = '0';
		*lenp = (uint8_t)l;
		return;
	}
	for (i = l - 1; i >= 0; i--) {
		if (isdigit((unsigned char)s[i])) {
			if (s[i] != '9') {
				s[i]++;
				return;
			}
			s[i] = '0';
			continue;
		}
		if (i == 1) {
			if (s[0] == 'z')
				s[0] = 'A';
			else if (s[0] == 'Z') {
				s[0] = '~';
				s[1] = '0';
			} else
				s[0]++;
		} else if (i > 0) {
			s[i] = '1';
			s[i - 1] = '~';
		} else {
			s[0] = s[0] == '~' ? 'a' : (char)(s[0] + 1);
		}
		return;
	}
}

/*
 * Whether name (len bytes) is entry e's name: in a casefolded directory,
 * whether both fold alike (never when either is not valid UTF-8, as in
 * e2fsck).
 */
static int same_name(const struct dir_read *d, const char *name, unsigned len, const struct entry *e)
{
	if (d->casefold)
		return ext4fs_utf8_casefold_cmp(name, len, e->name, e->name_len) == 0;
	return len == e->name_len && memcmp(name, e->name, len) == 0;
}

static int same_entry_name(const struct entry *a, const struct entry *b)
{
	if (a->folded_len >= 0 || b->folded_len >= 0)
		return a->folded_len == b->folded_len && !memcmp(a->folded, b->folded, (size_t)a->folded_len);
	return a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0;
}

/*
 * Offer to clear or rename each entry whose name equals the one before it
 * (sorted).  Returns how many were changed, or -1 (reported).
 */
static int fix_duplicates(struct dir_read *d)
{
	struct e4fsck *ctx = d->ctx;
	char shown[4 * 255 + 1], *path = fsck_path(ctx, d->ino, 0);
	int fixed = 0;

	for (size_t i = 1; i < d->n && !ctx->aborted; i++) {
		struct entry *e = &d->ents[i], *prev = e - 1;
		if (!e->inode || (d->casefold && (e->folded_len < 0 || prev->folded_len < 0)) ||
		    !same_entry_name(e, prev))
			continue;
		fsck_safe_name(e->name, e->name_len, shown, sizeof(shown));
		struct problem_ctx pc = { .ino = d->ino, .name = shown, .path = path ? path : "???" };
		/*
		 * The same inode twice: one entry goes.  Without the key an encrypted
		 * name cannot be changed: e2fsck offers to drop the entry before it
		 * asks to rename it.
		 */
		int drop = e->inode == prev->inode && fix_problem(ctx, PR_2_DUPLICATE_DIRENT, &pc);
		if (!drop && !ctx->aborted && (d->in.i_flags & EXT4FS_ENCRYPT_FL))
			drop = fix_problem(ctx, PR_2_NON_UNIQUE_FILE_NO_RENAME, &pc);
		if (drop) {
			if (fsck_adjust_links(ctx, e->inode, -1))
				goto fail;
			e->inode = 0;
			fixed++;
			continue;
		}
		if (ctx->aborted)
			break;
		char name[256];
		uint8_t len = e->name_len;
		memcpy(name, e->name, len);
		next_unique_name(name, &len);
		/* Each clash moves the name on and starts the comparison again; names are finite. */
		for (size_t j = 0, rounds = 0; j < d->n && rounds <= d->n; j++) {
			if (j == i || !same_name(d, name, len, &d->ents[j]))
				continue;
			next_unique_name(name, &len);
			j = (size_t)-1;
			rounds++;
		}
		name[len] = '\0';
		pc.str = name;
		if (fix_problem(ctx, PR_2_NON_UNIQUE_FILE, &pc)) {
			e->name = pool_copy(&d->names, name, len);
			if (!e->name) {
				fsck_fatal(ctx, "out of memory while renaming an entry");
				goto fail;
			}
			e->name_len = len;
			if (name_fold(d, e)) {
				fsck_fatal(ctx, "out of memory while renaming an entry");
				goto fail;
			}
			renamed_hash(d, e);
			fixed++;
		}
	}
	free(path);
	return fixed;
fail:
	free(path);
	return -1;
}

/* -- The extent tree after a rebuild ------------------------------------------------- */

/*
 * e2fsck trims a rebuilt directory with a punch that keeps the tree's depth
 * and drops only the entries past the new end, then asks whether that tree
 * could be shorter or narrower (its pass 1E test) and rebuilds it on a yes.
 * The library's unmap may already have made the tree smaller, so e4fsck
 * notes the tree before the rebuild and asks about the tree e2fsck would
 * have: the same question, then the same rebuild.
 */
struct tree_note {
	struct { unsigned level, max_entries; uint32_t lblk; uint64_t node; } *e;
	size_t n, cap;
	unsigned depth;
};

static int note_entry(const struct ext4fs_extent_visit *v, void *arg)
{
	struct tree_note *t = arg;

	if (t->n == t->cap) {
		void *grown = ext4fs_array_grow(t->e, &t->cap, t->n + 1, sizeof(*t->e), 32);
		if (!grown)
			return -ENOMEM;
		t->e = grown;
	}
	t->e[t->n].level = v->level;
	t->e[t->n].max_entries = v->max_entries;
	t->e[t->n].lblk = v->lblk;
	t->e[t->n].node = v->node_block;
	t->n++;
	t->depth = v->max_level;
	return 0;
}

/* After the rebuild left total blocks: ask e2fsck's question about its trimmed tree.  0 or -1. */
static int ask_tree_after(struct e4fsck *ctx, uint32_t ino, const struct tree_note *t, uint64_t total)
{
	struct { uint64_t entries, room, last_node; } lv[EXT4FS_EXTENT_MAX_DEPTH + 1];
	uint64_t per_block = ext4fs_extent_node_room(ctx->geo->block_size);

	if (!t->n || t->depth == 0 || t->depth > EXT4FS_EXTENT_MAX_DEPTH)
		return 0;
	for (unsigned i = 0; i <= t->depth; i++) {
		lv[i].entries = lv[i].room = 0;
		lv[i].last_node = UINT64_MAX;
	}
	/* A walk visits each node's entries together: the room of each node kept counts once. */
	for (size_t i = 0; i < t->n; i++) {
		unsigned l = t->e[i].level;
		if (t->e[i].lblk >= total || l > t->depth)
			continue;
		lv[l].entries++;
		if (t->e[i].node != lv[l].last_node) {
			lv[l].room += t->e[i].max_entries;
			lv[l].last_node = t->e[i].node;
		}
	}
	for (unsigned i = 0; i <= t->depth; i++) {
		uint32_t code = 0;
		if (lv[i].room - lv[i].entries > per_block && lv[i].room > lv[i].entries)
			code = PR_1E_CAN_NARROW_EXTENT_TREE;
		for (unsigned j = 0; j < i && !code; j++)
			if (lv[i].entries < lv[j].room)
				code = PR_1E_CAN_COLLAPSE_EXTENT_TREE;
		if (code) {
			struct problem_ctx pc = { .ino = ino, .blk = i };
			if (fix_problem(ctx, code, &pc) && fsck_extent_rebuild(ctx, ino))
				return -1;
			return 0;
		}
	}
	return 0;
}

/* -- Rebuilding one directory ------------------------------------------------------ */

static int count_blocks(const struct ext4fs_block_visit *v, void *arg)
{
	*(uint64_t *)arg += v->count;
	return 0;
}

static int rebuild(struct dir_read *d)
{
	struct e4fsck *ctx = d->ctx;
	struct ext4fs_dir_rebuild_entry *out = NULL;
	struct fsck_block_list before = { 0 };
	struct tree_note tree = { 0 };
	uint64_t old_blocks = ext4fs_inode_size(&d->in) / ctx->geo->block_size, total = 0;
	struct ext4fs_dir_rebuild_opts opts = {
		.indexed = !d->compress,
		.parent = d->parent,
		.slack_percent = SLACK_PERCENT,
	};
	size_t n = 0;
	int err;

	/*
	 * As e2fsck: /lost+found keeps the blocks it maps, however many i_size
	 * claims (the rebuild would make them all, in memory and on disk).
	 */
	if (d->ino == ctx->lost_found &&
	    (err = ext4fs_block_iterate(ctx->fs, d->ino, &d->in, EXT4FS_ITER_DATA_ONLY, count_blocks,
					&opts.min_blocks)))
		return err;
	out = malloc((d->n ? d->n : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++) {
		const struct entry *e = &d->ents[i];
		if (!e->inode)
			continue;
		out[n++] = (struct ext4fs_dir_rebuild_entry){ .name = e->name, .name_len = e->name_len,
							      .file_type = e->file_type, .inode = e->inode,
							      .hash = e->hash };
	}
	/* The sorted list has served: let the rebuild's own copy of the directory take its place. */
	free(d->ents);
	d->ents = NULL;
	d->n = d->cap = 0;
	err = fsck_block_list_take(ctx, d->ino, &before);
	if (!err && ext4fs_inode_has_extents(&d->in) &&
	    ext4fs_extent_walk(ctx->fs, d->ino, &d->in, note_entry, &tree) == -ENOMEM)
		err = -ENOMEM;
	if (!err)
		err = ext4fs_dir_rebuild(ctx->fs, d->ino, &d->in, out, n, &opts, &total);
	/*
	 * Keeping lost+found's blocks is a wish, not a need: when its holes
	 * cannot be filled (a full file system), it is rebuilt to its entries'
	 * size like any other directory (a failed rebuild changes nothing).
	 */
	if (err == EXT4FS_E_NO_SPACE && opts.min_blocks) {
		opts.min_blocks = 0;
		err = ext4fs_dir_rebuild(ctx->fs, d->ino, &d->in, out, n, &opts, &total);
	}
	if (!err)
		err = fsck_block_list_settle(ctx, d->ino, &before);
	/* A directory that grew has blocks e2fsck would have placed elsewhere: no prediction then. */
	if (!err && total <= old_blocks && ask_tree_after(ctx, d->ino, &tree, total))
		err = REHASH_STOP;
	free(tree.e);
	free(before.runs);
	free(out);
	return err;
}

/* e2fsck's rehash of one directory; 0 or an error code for PR_3A_OPTIMIZE_DIR_ERR. */
static int rehash_dir(struct e4fsck *ctx, uint32_t ino)
{
	struct dir_read d = { .ctx = ctx, .ino = ino };
	uint32_t bs = ctx->geo->block_size;
	int err = ext4fs_inode_read(ctx->fs, ino, &d.in), fixed, fixed_any = 0, rounds = 0;

	if (err)
		return err;
	if (ext4fs_inode_has_inline_data(&d.in))
		return 0;
	d.compress = !ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX) ||
		     ext4fs_inode_size(&d.in) / bs < 2;
	d.casefold = (d.in.i_flags & EXT4FS_CASEFOLD_FL) &&
		     ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_CASEFOLD);
	d.keep = d.casefold && (d.in.i_flags & EXT4FS_ENCRYPT_FL);
	d.hash_version = ext4fs_dx_hash_version_effective(ext4fs_sb(ctx->fs)->s_def_hash_version,
							  ext4fs_sb(ctx->fs)->s_flags);
	err = read_dir(&d);
	if (!err && !d.compress && d.dir_size < bs - ROOT_SPACE) {
		/* Less than a block of entries: not worth an index. */
		d.compress = 1;
		err = read_dir(&d);
	}
	while (!err) {
		sort_entries(&d, hash_order);
		fixed = fix_duplicates(&d);
		if (fixed < 0) {
			free(d.ents);
			pool_free(d.names);
			return REHASH_STOP;
		}
		if (!fixed || ++rounds > 16)
			break;
		fixed_any = 1;
	}
	/*
	 * An encrypted and casefolded directory files its names under hashes
	 * only the key gives, and a map passes 1B-1D left on the metadata (a
	 * clone declined) must not be rewritten: leave the directory be.  An
	 * empty one ('.' and '..' alone, in the linear layout) carries no such
	 * hash and is rebuilt as e2fsck rebuilds it.
	 */
	if (d.keep && d.compress && d.n <= 2)
		d.keep = 0;
	if (!err && !ctx->read_only && !ctx->aborted && !d.keep && !fsck_map_on_metadata(ctx, ino, &d.in)) {
		if (d.compress)
			sort_entries(&d, inode_order);
		err = rebuild(&d);
		/* A name cleared or renamed is a repair; the rebuild alone is not (e2fsck exits 0). */
		if (!err && fixed_any)
			ctx->fs_changed = 1;
		else if (!err)
			ctx->fs_modified = 1;
	}
	free(d.ents);
	pool_free(d.names);
	return err;
}

int fsck_pass3a(struct e4fsck *ctx)
{
	struct pass_timer t;
	size_t total = ctx->optimize_dirs ? ctx->ndirs : ctx->nrehash;
	int started = 0;

	if (!total)
		return 0;
	for (size_t i = 0; i < total && !ctx->aborted; i++) {
		uint32_t ino = ctx->optimize_dirs ? ctx->dirs[i].ino : ctx->rehash[i];
		if (!bitmap_paged_test(&ctx->inode_dir, ino))
			continue;
		if (!started) {
			progress_clear(ctx);
			if (ctx->mode != MODE_PREEN)
				printf("Pass 3A: Optimizing directories\n");
			fflush(stdout);
			timer_start(ctx, &t);
			started = 1;
		}
		int err = rehash_dir(ctx, ino);
		if (err == REHASH_STOP)
			return -1;
		if (err) {
			struct problem_ctx pc = { .dir = ino, .errcode = err, .str = ext4fs_strerror(err) };
			char *path = fsck_path(ctx, ino, 0);
			pc.path3 = path ? path : "???";
			fix_problem(ctx, PR_3A_OPTIMIZE_DIR_ERR, &pc);
			free(path);
		}
	}
	if (started)
		timer_stop(ctx, &t, TIME_PASS3A, "Pass 3A: Optimizing directories");
	return ctx->aborted ? -1 : 0;
}
