/*
 * alloc.c - the block allocator: an mballoc equivalent for one process.
 *
 * State (struct balloc, made on first use, the ctx of the allocator's
 * listener on the handle, freed at close or when descriptors are set):
 *  - per group: a buddy (buddy_internal.h, with the free count, free
 *    fragments and largest free order), built from the block bitmap the
 *    first time the group is examined; `avail`, the blocks free in the
 *    bitmap and not preallocated (exact whether or not the buddy is
 *    built); `bound`, a length no free run of the group exceeds;
 *  - per flex group: the sum of its groups' avail and the largest of their
 *    bounds, so a search passes over whole flex groups that cannot hold
 *    the request;
 *  - preallocations: at most one per inode (hashed by inode number, at
 *    most INODE_PA_MAX, the oldest dropped first) and up to LG_SLOTS for
 *    the locality group that small files share;
 *  - fences (ext4fs_alloc_fence): ranges kept from every request.  Their
 *    free blocks are busy in the buddy, like a preallocation's, but are
 *    in no preallocation, and no search drops them: only unfencing makes
 *    them available again (the ones still free in the bitmap).
 *
 * Invariant: for every built group, order 0 of its buddy is exactly "free
 * in the block bitmap, not inside a preallocation's unused range and not
 * fenced", and
 * a preallocation's unused blocks are free in the bitmap.  hear_space()
 * (the listener the handle calls for every change ext4fs_blocks_mark_used/
 * free make to the bitmap, ours or a tool's) keeps it: a block marked in use that a preallocation was
 * holding is cut out of that preallocation (its head is skipped, or its
 * tail given back), so a reservation is never handed to anyone twice.
 * ext4fs_alloc_check() verifies all of it against the bitmap.
 *
 * Preallocation life cycle: made from the rest of a found extent (the part
 * beyond what the request takes), consumed from its front by later
 * requests, cut by external bitmap changes, and forgotten by
 * ext4fs_alloc_release_inode() / _release_all(), when a search comes up
 * empty (all are dropped, or for an exact goal those holding it, and the
 * search retried once), when its inode asks for blocks it cannot serve, or
 * when the locality group or the inode table needs a slot.  Its blocks
 * are never in the on-disk bitmap, so forgetting is all a release does.
 *
 * Allocation flow (ext4fs_alloc_blocks):
 *  1. cap the request to what may be handed out (reserved blocks) and to a
 *     group; derive the goal from the owner inode when there is none;
 *  2. serve it from the inode's preallocation when its next logical block
 *     is in there, or, for a small file, from the locality-group
 *     preallocation nearest the goal;
 *  3. normalise: small files (file_blocks, else lblk + len, below
 *     stream_req) ask for group_prealloc blocks; larger ones for the rest
 *     of the file when its size is known, else for the kernel's size
 *     bucket (16 KiB .. 1 MiB, then 2/4/8 MiB chunks); rounded up to the
 *     stripe, capped to a group and to the largest extent;
 *  4. search: pass 0 the free extent at the goal; then for the normalised
 *     size, and again for the bare request, pass 1 a free buddy of that
 *     order (power-of-two sizes) and pass 2 best fit over at most
 *     max_to_scan free extents (stopping min_to_scan after the first good
 *     one, or at the end of its group; first the goal's group and groups
 *     whose average free extent is long enough, then all); pass 3 the
 *     longest of the next min_to_scan free extents of at least min_len
 *     from the goal on.  Groups are taken from the goal's on, passing over
 *     those whose summaries (avail, largest free order, flex summaries)
 *     rule them out; stripe-sized requests start on a stripe boundary in
 *     passes 0-2;
 *  5. mark the request's part in use and keep the rest as a preallocation.
 *
 * Tunables (ext4fs_alloc_tune, the kernel's mb_* knobs): stream_req 16,
 * group_prealloc 512, stripe from the superblock, max_to_scan 200,
 * min_to_scan 10.  Not thread-safe, like the handle.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "buddy_internal.h"
#include "bitmap_internal.h"
#include "fs_internal.h"
#include "fs_write_internal.h"

#define PA_HASH_SIZE 1024          /* inode preallocation buckets */
#define LG_SLOTS 8                 /* locality-group preallocations kept */
#define INODE_PA_MAX 4096          /* inode preallocations kept; the oldest goes first */
#define MAX_EXTENT_LEN 32768       /* longest initialised extent */
#define FLEX_DIR_SCHEME 4          /* flex groups this large keep their first group for directories */

enum pa_kind { PA_NONE, PA_GROUP, PA_INODE };

struct pa {
	struct pa *group_next;     /* the group's preallocations */
	struct pa *hash_next;      /* same inode hash bucket */
	struct pa *older, *newer;  /* inode preallocations in the order they were made */
	uint32_t ino;              /* owner; 0 for the locality group */
	uint32_t lblk;             /* logical block pstart is for (inode preallocations) */
	uint64_t pstart;           /* first unused block */
	uint32_t len;              /* unused blocks */
	uint32_t group;
};

struct bgroup {
	struct buddy bd;
	uint32_t avail;            /* free in the bitmap and not preallocated */
	uint32_t bound;            /* no free run is longer (largest order, or avail unbuilt) */
	struct pa *pa;
};

/* A flex group's summary, so a search passes over it in one step. */
struct bflex {
	uint64_t avail;            /* sum of its groups' avail */
	uint32_t bound;            /* largest of its groups' bound */
};

struct balloc {
	struct buddy_geom geom;
	struct bgroup *groups;
	struct bflex *flex;
	uint32_t ngroups;
	uint32_t gpf;              /* groups per flex group (1 without flex_bg) */
	struct pa *by_ino[PA_HASH_SIZE];
	struct pa *lg[LG_SLOTS];
	struct pa *oldest, *newest;
	uint32_t nino;             /* inode preallocations */
	uint32_t npa;
	uint64_t pa_blocks;        /* unused blocks held by all preallocations */
	struct ext4fs_alloc_params params;
	struct ext4fs_alloc_stats stats;
	uint64_t cursor;           /* end of the last whole-file or directory allocation, 0: none */
	struct extset fence;       /* fenced ranges; their free blocks are busy in built buddies */
};

/* One allocation in progress. */
struct want {
	uint64_t goal;
	uint32_t goal_group;
	uint32_t len;              /* the caller's request, capped */
	uint32_t min;
	uint32_t target;           /* normalised: the request plus what is to be preallocated */
	unsigned flags;
	int unaligned;             /* the rest of a whole file: continues its data, no stripe alignment */
	int forward;               /* a whole-file stream: first fit from the goal onwards */
};

struct found {
	uint64_t start;
	uint32_t len;
	int pass;
};

static const struct ext4fs_alloc_params default_params = {
	.stream_req = 16, .group_prealloc = 512, .stripe = 0, .max_to_scan = 200, .min_to_scan = 10,
};

/* -- state ----------------------------------------------------------------- */

static void hear_space(struct ext4fs_fs *fs, void *ctx, uint64_t blk, uint64_t count, int used);
static void hear_descs(struct ext4fs_fs *fs, void *ctx);
static void hear_close(struct ext4fs_fs *fs, void *ctx);

/* How the allocator listens on the handle (fs_internal.h); its state is the listener's ctx. */
static const struct ext4fs__listener_ops listener = {
	.space_changed = hear_space, .descs_changed = hear_descs, .close = hear_close,
};

/* The allocator's state on fs, or NULL before its first use. */
static struct balloc *state_of(const struct ext4fs_fs *fs)
{
	return ext4fs__fs_listener_ctx(fs, &listener);
}

static void state_free(struct ext4fs_fs *fs, struct balloc *ba);

static int get_state(struct ext4fs_fs *fs, struct balloc **out)
{
	const struct ext4fs_geom *geo = &fs->geom;
	struct balloc *ba = state_of(fs);
	int err;

	if (ba) {
		*out = ba;
		return 0;
	}
	ba = calloc(1, sizeof(*ba));
	if (!ba)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the block allocator");
	ba->gpf = geo->groups_per_flex ? geo->groups_per_flex : 1;
	ba->ngroups = geo->group_count;
	ba->groups = calloc(geo->group_count, sizeof(*ba->groups));
	ba->flex = calloc((geo->group_count + ba->gpf - 1) / ba->gpf, sizeof(*ba->flex));
	if (!ba->groups || !ba->flex) {
		free(ba->groups);
		free(ba->flex);
		free(ba);
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the block allocator's %u groups",
				       geo->group_count);
	}
	ext4fs__buddy_geom_init(&ba->geom, geo->blocks_per_group);
	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t size = ext4fs_group_last_block(fs, g) - ext4fs_group_first_block(fs, g) + 1;
		uint32_t avail = fs->groups[g].free_blocks_count;
		/* Until the buddy is built the descriptor is all we know; never more than the group. */
		struct bgroup *bg = &ba->groups[g];
		struct bflex *fx = &ba->flex[g / ba->gpf];
		bg->avail = bg->bound = avail < size ? avail : (uint32_t)size;
		bg->bd.largest = -1;
		fx->avail += bg->avail;
		if (bg->bound > fx->bound)
			fx->bound = bg->bound;
	}
	ba->params = default_params;
	err = ext4fs__fs_listen(fs, &listener, ba);
	if (err) {
		state_free(fs, ba);
		return err;
	}
	*out = ba;
	return 0;
}

static void pa_free_all(struct balloc *ba)
{
	for (unsigned i = 0; i < PA_HASH_SIZE; i++)
		while (ba->by_ino[i]) {
			struct pa *pa = ba->by_ino[i];
			ba->by_ino[i] = pa->hash_next;
			free(pa);
		}
	for (unsigned i = 0; i < LG_SLOTS; i++) {
		free(ba->lg[i]);
		ba->lg[i] = NULL;
	}
}

static void state_free(struct ext4fs_fs *fs, struct balloc *ba)
{
	pa_free_all(ba);
	ext4fs__extset_free(&ba->fence);
	for (uint32_t g = 0; g < fs->geom.group_count; g++)
		ext4fs__buddy_release(&ba->groups[g].bd);
	free(ba->groups);
	free(ba->flex);
	free(ba);
}

static uint32_t group_bound(const struct balloc *ba, const struct bgroup *bg)
{
	uint32_t b;

	if (!bg->bd.map)
		return bg->avail;
	b = ext4fs__buddy_run_bound(&bg->bd, &ba->geom);
	return b < bg->bd.free ? b : bg->bd.free;
}

/* After group g changed (its avail, its buddy): its avail and bounds, and its flex group's. */
static void avail_add(struct balloc *ba, uint32_t g, int64_t delta)
{
	struct bgroup *bg = &ba->groups[g];
	struct bflex *fx = &ba->flex[g / ba->gpf];
	uint32_t old = bg->bound;

	if (delta < 0 && (uint64_t)-delta > bg->avail)
		delta = -(int64_t)bg->avail;
	bg->avail = (uint32_t)(bg->avail + delta);
	fx->avail += (uint64_t)delta;
	bg->bound = group_bound(ba, bg);
	if (bg->bound > fx->bound) {
		fx->bound = bg->bound;
	} else if (bg->bound < old && old == fx->bound) {
		uint32_t first = g - g % ba->gpf;
		fx->bound = 0;
		for (uint32_t i = first; i < first + ba->gpf && i < ba->ngroups; i++)
			if (ba->groups[i].bound > fx->bound)
				fx->bound = ba->groups[i].bound;
	}
}

/* Build group g's buddy if it is not yet; the bitmap must be loaded. */
static int build_group(struct ext4fs_fs *fs, struct balloc *ba, uint32_t g)
{
	struct bgroup *bg = &ba->groups[g];
	uint64_t first_bit = (uint64_t)g * fs->geom.clusters_per_group;
	uint32_t nbits = (uint32_t)(ext4fs_group_last_block(fs, g) - ext4fs_group_first_block(fs, g) + 1);
	int err;

	if (bg->bd.map)
		return 0;
	err = ext4fs__buddy_build(&bg->bd, &ba->geom, ext4fs__bitmap_bits(fs->block_map) + first_bit / 8, nbits);
	if (err)
		return ext4fs__fs_fail(fs, err, "no memory for the buddy bitmap of group %u", g);
	/* No preallocation lives in an unbuilt group, so the bitmap's count is avail. */
	avail_add(ba, g, (int64_t)bg->bd.free - bg->avail);
	ba->stats.buddies_built++;
	return 0;
}

/* Mark [blk, blk + count) of group g (built) available or not, keeping avail in step. */
static void set_busy(struct balloc *ba, uint32_t g, uint64_t group_first, uint64_t blk,
		     uint32_t count, int busy)
{
	uint32_t changed = ext4fs__buddy_update(&ba->groups[g].bd, &ba->geom, (uint32_t)(blk - group_first),
						count, busy);

	avail_add(ba, g, busy ? -(int64_t)changed : (int64_t)changed);
}

/* -- preallocations -------------------------------------------------------- */

static struct pa **ino_bucket(struct balloc *ba, uint32_t ino)
{
	return &ba->by_ino[(ino * 2654435761U) >> 22 & (PA_HASH_SIZE - 1)];
}

static struct pa *ino_pa(struct balloc *ba, uint32_t ino)
{
	for (struct pa *pa = *ino_bucket(ba, ino); pa; pa = pa->hash_next)
		if (pa->ino == ino)
			return pa;
	return NULL;
}

/* Forget pa: its unused blocks become available again. */
static void pa_drop(struct ext4fs_fs *fs, struct balloc *ba, struct pa *pa)
{
	struct bgroup *bg = &ba->groups[pa->group];
	struct pa **pp;

	for (pp = &bg->pa; *pp && *pp != pa; pp = &(*pp)->group_next)
		;
	if (*pp)
		*pp = pa->group_next;
	if (pa->ino) {
		for (pp = ino_bucket(ba, pa->ino); *pp && *pp != pa; pp = &(*pp)->hash_next)
			;
		if (*pp)
			*pp = pa->hash_next;
		if (pa->older)
			pa->older->newer = pa->newer;
		else
			ba->oldest = pa->newer;
		if (pa->newer)
			pa->newer->older = pa->older;
		else
			ba->newest = pa->older;
		ba->nino--;
	} else {
		for (unsigned i = 0; i < LG_SLOTS; i++)
			if (ba->lg[i] == pa)
				ba->lg[i] = NULL;
	}
	if (pa->len) {
		set_busy(ba, pa->group, ext4fs_group_first_block(fs, pa->group), pa->pstart, pa->len, 0);
		ba->pa_blocks -= pa->len;
		ba->stats.prealloc_dropped += pa->len;
	}
	ba->npa--;
	free(pa);
}

/* Give back the first n unused blocks of pa (skipped over by its owner). */
static void pa_skip(struct ext4fs_fs *fs, struct balloc *ba, struct pa *pa, uint32_t n)
{
	set_busy(ba, pa->group, ext4fs_group_first_block(fs, pa->group), pa->pstart, n, 0);
	pa->pstart += n;
	pa->lblk += n;
	pa->len -= n;
	ba->pa_blocks -= n;
	ba->stats.prealloc_dropped += n;
}

/*
 * Keep [start, start + len) of group g (available now) for owner ino, or
 * for the locality group (ino 0).  Cannot fail: without memory the blocks
 * are simply not kept.
 */
static void pa_make(struct ext4fs_fs *fs, struct balloc *ba, uint32_t g, uint32_t ino, uint32_t lblk,
		    uint64_t start, uint32_t len)
{
	struct pa *pa = calloc(1, sizeof(*pa));
	unsigned slot = 0;

	if (!pa)
		return;
	if (!ino) {
		/* The locality group keeps LG_SLOTS; make room by dropping the emptiest. */
		for (unsigned i = 0; i < LG_SLOTS; i++) {
			if (!ba->lg[i]) {
				slot = i;
				break;
			}
			if (ba->lg[i]->len < ba->lg[slot]->len)
				slot = i;
		}
		if (ba->lg[slot])
			pa_drop(fs, ba, ba->lg[slot]);
		ba->lg[slot] = pa;
	} else {
		struct pa **bucket = ino_bucket(ba, ino);
		/* Owners that never release would otherwise hold blocks and memory without bound. */
		if (ba->nino >= INODE_PA_MAX)
			pa_drop(fs, ba, ba->oldest);
		pa->hash_next = *bucket;
		*bucket = pa;
		pa->older = ba->newest;
		if (ba->newest)
			ba->newest->newer = pa;
		else
			ba->oldest = pa;
		ba->newest = pa;
		ba->nino++;
	}
	pa->ino = ino;
	pa->lblk = lblk;
	pa->pstart = start;
	pa->len = len;
	pa->group = g;
	pa->group_next = ba->groups[g].pa;
	ba->groups[g].pa = pa;
	set_busy(ba, g, ext4fs_group_first_block(fs, g), start, len, 1);
	ba->npa++;
	ba->pa_blocks += len;
	ba->stats.preallocs++;
}

/*
 * Blocks [blk, blk + count) of built group g are being marked in use by
 * someone other than their preallocation: cut them out of it.  A hit at
 * the head skips the preallocation past them; elsewhere its tail from the
 * hit on is given back.
 */
static void pa_cut(struct ext4fs_fs *fs, struct balloc *ba, uint32_t g, uint64_t blk, uint64_t count)
{
	struct pa *pa = ba->groups[g].pa;

	while (pa) {
		struct pa *next = pa->group_next;
		uint64_t end = pa->pstart + pa->len;

		if (blk < end && blk + count > pa->pstart) {
			if (blk <= pa->pstart) {
				uint32_t n = (uint32_t)((blk + count < end ? blk + count : end) - pa->pstart);
				/* The hit blocks stay unavailable: they are becoming used. */
				pa->pstart += n;
				pa->lblk += n;
				pa->len -= n;
				ba->pa_blocks -= n;
			} else {
				uint32_t keep = (uint32_t)(blk - pa->pstart);
				uint32_t hit = (uint32_t)((blk + count < end ? blk + count : end) - blk);
				uint32_t tail = pa->len - keep - hit;
				if (tail)
					set_busy(ba, g, ext4fs_group_first_block(fs, g), blk + hit, tail, 0);
				ba->pa_blocks -= hit + tail;
				ba->stats.prealloc_dropped += tail;
				pa->len = keep;
			}
			if (!pa->len)
				pa_drop(fs, ba, pa);
		}
		pa = next;
	}
}

/* -- listening ------------------------------------------------------------- */

/* The handle is closing. */
static void hear_close(struct ext4fs_fs *fs, void *ctx)
{
	state_free(fs, ctx);
}

/* Descriptors were set by hand: the summaries were built from the old counts; start afresh. */
static void hear_descs(struct ext4fs_fs *fs, void *ctx)
{
	ext4fs__fs_unlisten(fs, &listener);
	state_free(fs, ctx);
}

/* Blocks changed state in the bitmap. */
static void hear_space(struct ext4fs_fs *fs, void *ctx, uint64_t blk, uint64_t count, int used)
{
	struct balloc *ba = ctx;

	for (uint64_t b = blk; b < blk + count;) {
		uint32_t g = ext4fs_group_of_block(fs, b);
		uint64_t first = ext4fs_group_first_block(fs, g), last = ext4fs_group_last_block(fs, g);
		uint32_t n = (uint32_t)(last - b + 1 < blk + count - b ? last - b + 1 : blk + count - b);

		if (ba->groups[g].bd.map && used) {
			pa_cut(fs, ba, g, b, n);
			set_busy(ba, g, first, b, n, 1);
		} else if (ba->groups[g].bd.map) {
			/* A fenced block freed again stays fenced: busy until unfenced. */
			for (uint64_t at = b, stop; at < b + n; at = stop) {
				size_t i = ext4fs__extset_first_after(&ba->fence, at);

				if (i < ba->fence.n && ba->fence.r[i].start <= at) {
					stop = ba->fence.r[i].start + ba->fence.r[i].len;
					continue;
				}
				stop = i < ba->fence.n && ba->fence.r[i].start < b + n ? ba->fence.r[i].start : b + n;
				set_busy(ba, g, first, at, (uint32_t)(stop - at), 0);
			}
		} else {
			avail_add(ba, g, used ? -(int64_t)n : (int64_t)n);
		}
		b += n;
	}
}

/* -- choosing ---------------------------------------------------------------- */

static uint32_t stripe_of(const struct ext4fs_fs *fs, const struct balloc *ba)
{
	uint32_t s = ba->params.stripe;

	if (!s) {
		s = fs->sb.s_raid_stripe_width;
		if (!s || s > fs->geom.blocks_per_group)
			s = fs->sb.s_raid_stride;
	}
	return s > 1 && s <= fs->geom.blocks_per_group ? s : 0;
}

/*
 * The goal when the request has none: the owner's group, or with flex
 * groups of FLEX_DIR_SCHEME or more, the first group of its flex group for
 * directories and the second for files (the first holds the flex group's
 * bitmaps and inode tables).
 */
static uint64_t pick_goal(const struct ext4fs_fs *fs, const struct balloc *ba,
			  const struct ext4fs_alloc_request *req)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t g = 0;

	if (req->goal && req->goal >= geo->first_data_block && req->goal < geo->blocks_count)
		return req->goal;
	if (req->ino >= 1 && req->ino <= geo->inodes_count)
		g = (req->ino - 1) / geo->inodes_per_group;
	if (ba->gpf >= FLEX_DIR_SCHEME) {
		g -= g % ba->gpf;
		if (!(req->flags & EXT4FS_ALLOC_DIRECTORY) && g + 1 < geo->group_count)
			g++;
	}
	return ext4fs_group_first_block(fs, g < geo->group_count ? g : 0);
}

static uint32_t round_up(uint32_t n, uint32_t unit)
{
	return (n + unit - 1) / unit * unit;
}

/*
 * The kernel's size buckets: where a file being written at lblk .. lblk +
 * len - 1 probably ends.
 */
static uint64_t bucket_end(uint32_t block_size, uint32_t lblk, uint32_t len)
{
	uint64_t size = ((uint64_t)lblk + len) * block_size, chunk;

	if (size <= 1024 * 1024) {
		uint64_t end = 16 * 1024;
		while (end < size)
			end <<= 1;
		return (end + block_size - 1) / block_size;
	}
	if (size <= 4 * 1024 * 1024)
		chunk = 2 * 1024 * 1024;
	else if (size <= 8 * 1024 * 1024)
		chunk = 4 * 1024 * 1024;
	else if ((uint64_t)len * block_size <= 8 * 1024 * 1024)
		chunk = 8 * 1024 * 1024;
	else
		return (uint64_t)lblk + len;
	return ((uint64_t)lblk * block_size / chunk * chunk + chunk + block_size - 1) / block_size;
}

/* How much to look for, and what kind of preallocation keeps the rest. */
static uint32_t normalize(const struct ext4fs_fs *fs, const struct balloc *ba,
			  const struct ext4fs_alloc_request *req, uint32_t len, enum pa_kind *kind)
{
	const struct ext4fs_alloc_params *p = &ba->params;
	uint64_t fsize = (uint64_t)req->lblk + len, target;
	uint32_t cap = fs->geom.blocks_per_group < MAX_EXTENT_LEN ? fs->geom.blocks_per_group
								   : MAX_EXTENT_LEN;
	uint32_t stripe = stripe_of(fs, ba);

	*kind = PA_NONE;
	if (req->file_blocks > fsize)
		fsize = req->file_blocks;
	/* Directory blocks come one at a time, near their files: nothing to keep for later. */
	if (req->flags & (EXT4FS_ALLOC_METADATA | EXT4FS_ALLOC_NO_PREALLOC | EXT4FS_ALLOC_DIRECTORY))
		return len;
	if (req->flags & EXT4FS_ALLOC_WHOLE_FILE) {
		/* Look for room for the whole rest; the caller asks for it piece by piece. */
		target = req->file_blocks > req->lblk ? req->file_blocks - req->lblk : len;
		if (target > cap)
			target = cap;
		return target > len ? (uint32_t)target : len;
	}
	if (fsize < p->stream_req) {
		if (!p->group_prealloc)
			return len;
		*kind = PA_GROUP;
		target = p->group_prealloc;
	} else {
		if (!req->ino)
			return len;
		*kind = PA_INODE;
		if (req->file_blocks > req->lblk)
			target = req->file_blocks - req->lblk;
		else
			target = bucket_end(fs->geom.block_size, req->lblk, len) - req->lblk;
	}
	if (stripe && target >= stripe)
		target = round_up((uint32_t)(target < cap ? target : cap), stripe);
	if (target > cap)
		target = stripe && cap >= stripe ? cap / stripe * stripe : cap;
	return target > len ? (uint32_t)target : len;
}

/* -- searching --------------------------------------------------------------- */

/* Usable part of run [s, s + l) of a group starting at group_first, aligned to stripe. */
static uint32_t usable_run(uint64_t group_first, uint32_t s, uint32_t l, uint32_t stripe,
			   uint32_t *ustart)
{
	uint64_t p = group_first + s, a;

	*ustart = s;
	if (!stripe)
		return l;
	a = (p + stripe - 1) / stripe * stripe;
	if (a >= p + l)
		return 0;
	*ustart = (uint32_t)(a - group_first);
	return (uint32_t)(p + l - a);
}

/*
 * Whether group g may hold t blocks in a row, building its buddy when its
 * count allows: 1 yes, 0 no, or an error.
 */
static int group_usable(struct ext4fs_fs *fs, struct balloc *ba, uint32_t g, uint32_t t)
{
	struct bgroup *bg = &ba->groups[g];
	int err;

	if (bg->avail < t)
		return 0;
	err = build_group(fs, ba, g);
	if (err)
		return err;
	return bg->bound >= t;
}

/*
 * The group i steps after the goal's, or UINT32_MAX past the end; whole
 * flex groups whose summary rules out t blocks are passed over.
 */
static uint32_t next_group(const struct ext4fs_fs *fs, const struct balloc *ba, const struct want *w,
			   uint32_t *i, uint32_t t)
{
	uint32_t n = fs->geom.group_count;

	while (*i < n) {
		uint32_t g = (uint32_t)(((uint64_t)w->goal_group + *i) % n);
		const struct bflex *fx = &ba->flex[g / ba->gpf];
		if (ba->gpf > 1 && (fx->avail < t || fx->bound < t)) {
			uint32_t rest = ba->gpf - g % ba->gpf;
			/* The last flex group may be short: never skip past the wrap. */
			*i += rest < n - g ? rest : n - g;
			continue;
		}
		(*i)++;
		return g;
	}
	return UINT32_MAX;
}

/* Where a group's scan starts: at the goal in the goal's group, else at its start. */
static uint32_t scan_from(const struct ext4fs_fs *fs, const struct want *w, uint32_t g)
{
	return g == w->goal_group ? (uint32_t)(w->goal - ext4fs_group_first_block(fs, g)) : 0;
}

/* Pass 0: the free extent at the goal, if long enough (at least min_ok). */
static int pass_goal(struct ext4fs_fs *fs, struct balloc *ba, const struct want *w, uint32_t stripe,
		     uint32_t min_ok, struct found *f)
{
	uint32_t g = w->goal_group;
	uint64_t first = ext4fs_group_first_block(fs, g);
	uint32_t run;
	int err;

	if (stripe && w->goal % stripe)
		return 0;
	err = build_group(fs, ba, g);
	if (err)
		return err;
	ba->stats.groups_scanned++;
	run = ext4fs__buddy_run_at(&ba->groups[g].bd, (uint32_t)(w->goal - first), w->target);
	if (run < min_ok)
		return 0;
	f->start = w->goal;
	f->len = run;
	f->pass = 0;
	return 1;
}

/* Pass 1: a free buddy of order log2(t), the smallest order that has one. */
static int pass_buddy(struct ext4fs_fs *fs, struct balloc *ba, const struct want *w, uint32_t t,
		      struct found *f)
{
	unsigned order = (unsigned)__builtin_ctz(t);
	uint32_t i = 0, g;

	while ((g = next_group(fs, ba, w, &i, t)) != UINT32_MAX) {
		struct bgroup *bg = &ba->groups[g];
		uint64_t first = ext4fs_group_first_block(fs, g);
		uint32_t s;
		int ok = group_usable(fs, ba, g, t);

		if (ok < 0)
			return ok;
		if (!ok || bg->bd.largest < (int)order)
			continue;
		ba->stats.groups_scanned++;
		if (ext4fs__buddy_find_chunk(&bg->bd, &ba->geom, order, scan_from(fs, w, g), &s) == 0) {
			f->start = first + s;
			f->len = t;
			f->pass = 1;
			return 1;
		}
	}
	return 0;
}

/* The free runs of a group from block `from` to its end, then from its start up to from. */
struct run_iter {
	const struct buddy *bd;
	uint32_t from, pos;
	int wrapped;
};

static void run_iter_init(struct run_iter *it, const struct buddy *bd, uint32_t from)
{
	it->bd = bd;
	it->from = it->pos = from;
	it->wrapped = 0;
}

static int run_iter_next(struct run_iter *it, uint32_t *s, uint32_t *l)
{
	if (!it->wrapped) {
		if (ext4fs__buddy_next_run(it->bd, it->pos, s, l) == 0) {
			it->pos = *s + *l;
			return 1;
		}
		it->wrapped = 1;
		it->pos = 0;
	}
	if (it->pos < it->from && ext4fs__buddy_next_run(it->bd, it->pos, s, l) == 0 && *s < it->from) {
		it->pos = *s + *l;
		return 1;
	}
	return 0;
}

struct fit {
	uint64_t start;
	uint32_t len;
	uint64_t examined;
	uint64_t stop_at;
	int have;
};

/* Consider one free run for best fit; returns 1 when the search may stop. */
static int fit_consider(struct balloc *ba, struct fit *fit, uint64_t group_first, uint32_t s,
			uint32_t l, uint32_t t, uint32_t stripe, int first_fit)
{
	uint32_t us, u = usable_run(group_first, s, l, stripe, &us);

	fit->examined++;
	ba->stats.extents_examined++;
	if (u >= t && (!fit->have || u < fit->len)) {
		if (!fit->have)
			fit->stop_at = fit->examined + ba->params.min_to_scan;
		fit->have = 1;
		fit->start = group_first + us;
		fit->len = u;
		if (u == t || first_fit)
			return 1;
	}
	return fit->examined >= ba->params.max_to_scan || (fit->have && fit->examined >= fit->stop_at);
}

/*
 * Pass 2: best fit for t blocks (stripe-aligned when stripe) over the free
 * runs of the groups that can hold it, the goal's group scanned from the
 * goal on.  A first sweep looks, after the goal's group, only at groups
 * whose average free extent is at least t (where a fit is found quickly);
 * the second at all of them.  Metadata takes the first fit, which is the
 * nearest after the goal.
 */
static int pass_best_fit(struct ext4fs_fs *fs, struct balloc *ba, const struct want *w, uint32_t t,
			 uint32_t stripe, struct found *f)
{
	int first_fit = (w->flags & EXT4FS_ALLOC_METADATA) != 0;

	for (int sweep = 0; sweep < 2; sweep++) {
		struct fit fit = { .stop_at = UINT64_MAX };
		uint32_t i = 0, g;

		while ((g = next_group(fs, ba, w, &i, t)) != UINT32_MAX) {
			const struct buddy *bd = &ba->groups[g].bd;
			uint64_t first = ext4fs_group_first_block(fs, g);
			struct run_iter it;
			uint32_t s, l;
			int ok = group_usable(fs, ba, g, t), stop = 0;

			if (ok < 0)
				return ok;
			if (!ok || (sweep == 0 && g != w->goal_group && bd->free / bd->frags < t))
				continue;
			ba->stats.groups_scanned++;
			run_iter_init(&it, bd, scan_from(fs, w, g));
			while (!stop && run_iter_next(&it, &s, &l))
				stop = fit_consider(ba, &fit, first, s, l, t, stripe, first_fit);
			if (fit.have)
				break;
			if (fit.examined >= ba->params.max_to_scan) {
				if (sweep || g != w->goal_group)
					break;
				/* The goal's group had its own allowance. */
				fit.examined = 0;
			}
		}
		if (fit.have) {
			f->start = fit.start;
			f->len = t;
			f->pass = 2;
			return 1;
		}
	}
	return 0;
}

/*
 * Pass 3: anything of at least min blocks: the longest of the first
 * min_to_scan such free runs from the goal on (one of t or more ends the
 * look at once), so a fragmented file system answers in a few steps.
 */
static int pass_any(struct ext4fs_fs *fs, struct balloc *ba, const struct want *w, uint32_t t,
		    struct found *f)
{
	uint32_t enough = ba->params.min_to_scan ? ba->params.min_to_scan : 1;
	uint32_t i = 0, g, seen = 0, best_l = 0;
	uint64_t best_s = 0;

	while (seen < enough && best_l < t && (g = next_group(fs, ba, w, &i, w->min)) != UINT32_MAX) {
		uint64_t first = ext4fs_group_first_block(fs, g);
		struct run_iter it;
		uint32_t s, l;
		int ok = group_usable(fs, ba, g, w->min);

		if (ok < 0)
			return ok;
		if (!ok)
			continue;
		ba->stats.groups_scanned++;
		run_iter_init(&it, &ba->groups[g].bd, scan_from(fs, w, g));
		while (seen < enough && best_l < t && run_iter_next(&it, &s, &l)) {
			ba->stats.extents_examined++;
			if (l < w->min)
				continue;
			seen++;
			if (l > best_l) {
				best_s = first + s;
				best_l = l;
			}
		}
	}
	if (!best_l)
		return 0;
	f->start = best_s;
	f->len = best_l < t ? best_l : t;
	f->pass = 3;
	return 1;
}

/*
 * The stream pass, for whole files written in a row: the first free run
 * of t blocks (stripe-aligned when stripe) from the goal onwards, through
 * the following groups and only then round to the part of the goal's
 * group before the goal.  Best fit would fill holes left behind and
 * scatter the files of one directory; going forward keeps them in order.
 * Gives up (to the other passes) after max_to_scan runs too short.
 */
static int pass_forward(struct ext4fs_fs *fs, struct balloc *ba, const struct want *w, uint32_t t,
			uint32_t stripe, struct found *f)
{
	uint32_t n = fs->geom.group_count, examined = 0;

	for (uint32_t i = 0; i <= n; i++) {
		uint32_t g = (uint32_t)(((uint64_t)w->goal_group + i) % n);
		uint64_t first = ext4fs_group_first_block(fs, g);
		const struct buddy *bd = &ba->groups[g].bd;
		uint32_t pos = i == 0 ? (uint32_t)(w->goal - first) : 0, s, l, us;
		int ok = group_usable(fs, ba, g, t);

		if (ok < 0)
			return ok;
		if (!ok)
			continue;
		ba->stats.groups_scanned++;
		while (ext4fs__buddy_next_run(bd, pos, &s, &l) == 0) {
			if (i == n && first + s >= w->goal)
				break;
			ba->stats.extents_examined++;
			if (usable_run(first, s, l, stripe, &us) >= t) {
				f->start = first + us;
				f->len = t;
				f->pass = 2;
				return 1;
			}
			if (++examined >= ba->params.max_to_scan)
				return 0;
			pos = s + l;
		}
	}
	return 0;
}

static int search(struct ext4fs_fs *fs, struct balloc *ba, const struct want *w, struct found *f)
{
	uint32_t stripe = (w->flags & EXT4FS_ALLOC_METADATA) || w->unaligned ? 0 : stripe_of(fs, ba);
	uint32_t sizes[2] = { w->target, w->len };
	int r;

	if (w->flags & EXT4FS_ALLOC_EXACT_GOAL)
		return pass_goal(fs, ba, w, 0, w->min, f);
	r = pass_goal(fs, ba, w, stripe && w->target >= stripe ? stripe : 0, w->len, f);
	for (unsigned k = 0; k < 2 && r == 0; k++) {
		uint32_t t = sizes[k], align = stripe && t >= stripe ? stripe : 0;
		if (k && t == sizes[0])
			break;
		if (w->forward)
			r = pass_forward(fs, ba, w, t, align, f);
		if (r == 0 && !align && !(w->flags & EXT4FS_ALLOC_METADATA) && (t & (t - 1)) == 0)
			r = pass_buddy(fs, ba, w, t, f);
		if (r == 0)
			r = pass_best_fit(fs, ba, w, t, align, f);
		if (r == 1 && align)
			ba->stats.stripe_aligned++;
	}
	if (r == 0)
		r = pass_any(fs, ba, w, w->target, f);
	return r;
}

/* -- allocating -------------------------------------------------------------- */

/* Hand out n blocks from the front of pa (n <= pa->len). */
static int pa_take(struct ext4fs_fs *fs, struct balloc *ba, struct pa *pa, uint32_t n, uint64_t goal,
		   uint64_t *start, uint32_t *got)
{
	uint64_t at = pa->pstart;
	int err;

	/* Moved first, so marking the blocks does not read as cutting into pa. */
	pa->pstart += n;
	pa->lblk += n;
	pa->len -= n;
	ba->pa_blocks -= n;
	err = ext4fs_blocks_mark_used(fs, at, n);
	if (err) {
		pa->pstart = at;
		pa->lblk -= n;
		pa->len += n;
		ba->pa_blocks += n;
		return err;
	}
	if (!pa->len)
		pa_drop(fs, ba, pa);
	ba->stats.prealloc_hits++;
	ba->stats.blocks_allocated += n;
	if (at == goal)
		ba->stats.goal_hits++;
	*start = at;
	*got = n;
	return 0;
}

/* The locality-group preallocation with room for len nearest the goal (at it when exact). */
static struct pa *lg_pick(struct balloc *ba, uint64_t goal, uint32_t len, int exact)
{
	struct pa *best = NULL;
	uint64_t best_d = 0;

	for (unsigned i = 0; i < LG_SLOTS; i++) {
		struct pa *pa = ba->lg[i];
		uint64_t d;
		if (!pa || pa->len < len || (exact && pa->pstart != goal))
			continue;
		d = pa->pstart > goal ? pa->pstart - goal : goal - pa->pstart;
		if (!best || d < best_d) {
			best = pa;
			best_d = d;
		}
	}
	return best;
}

static void drop_all(struct ext4fs_fs *fs, struct balloc *ba)
{
	for (unsigned i = 0; i < PA_HASH_SIZE; i++)
		while (ba->by_ino[i])
			pa_drop(fs, ba, ba->by_ino[i]);
	for (unsigned i = 0; i < LG_SLOTS; i++)
		if (ba->lg[i])
			pa_drop(fs, ba, ba->lg[i]);
}

/* Drop the preallocations of group g that hold block blk. */
static void drop_at(struct ext4fs_fs *fs, struct balloc *ba, uint32_t g, uint64_t blk)
{
	struct pa *pa = ba->groups[g].pa;

	while (pa) {
		struct pa *next = pa->group_next;
		if (blk >= pa->pstart && blk - pa->pstart < pa->len)
			pa_drop(fs, ba, pa);
		pa = next;
	}
}

/*
 * Bigalloc: whole free clusters, the first run found from the goal's
 * cluster on (then from the start), within one group.  Data starts at its
 * logical block's offset in the first cluster, as the cluster rules want;
 * a tree block at the cluster's start.  No preallocation, no buddy: a
 * checker's few repairs are what this serves.
 */
static int alloc_clusters(struct ext4fs_fs *fs, const struct ext4fs_alloc_request *req, uint64_t *start,
			  uint32_t *got)
{
	const struct ext4fs_geom *geo = &fs->geom;
	const struct ext4fs_bitmap *bm;
	uint64_t ratio = geo->cluster_ratio, mask = ratio - 1;
	uint64_t offset = (req->flags & EXT4FS_ALLOC_METADATA) ? 0 : req->lblk & mask;
	uint64_t want = (offset + req->len + mask) / ratio, from = geo->first_data_block;
	uint64_t usable = geo->free_blocks_count;
	const struct balloc *ba = state_of(fs);
	const struct extset *fence = ba ? &ba->fence : &(struct extset){ 0 };
	int err = ext4fs_fs_block_bitmap(fs, &bm);

	if (err)
		return err;
	if (!(req->flags & EXT4FS_ALLOC_USE_RESERVED))
		usable = usable > geo->r_blocks_count ? usable - geo->r_blocks_count : 0;
	if (usable < ratio)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_SPACE, "no free cluster left");
	if (req->goal >= geo->first_data_block && req->goal < geo->blocks_count)
		from = req->goal & ~mask;
	for (int wrapped = 0; wrapped < 2; wrapped++, from = geo->first_data_block) {
		uint64_t c;
		while (from < geo->blocks_count && ext4fs_bitmap_find(bm, from, geo->blocks_count - 1, 0, &c) == 0) {
			c &= ~mask;
			uint64_t group_end = ext4fs_group_last_block(fs, ext4fs_group_of_block(fs, c)) + 1, n = 1;
			if (c + offset >= geo->blocks_count || c < geo->first_data_block ||
			    !ext4fs__extset_is_clear(fence, c, ratio)) {
				from = c + ratio;
				continue;
			}
			while (n < want && n * ratio < usable && c + (n + 1) * ratio <= group_end &&
			       ext4fs_bitmap_test(bm, c + n * ratio) == 0 &&
			       ext4fs__extset_is_clear(fence, c + n * ratio, ratio))
				n++;
			uint64_t end = c + n * ratio < geo->blocks_count ? c + n * ratio : geo->blocks_count;
			uint64_t take = end - c - offset < req->len ? end - c - offset : req->len;
			if (take < (req->min_len ? req->min_len : 1) && n < want) {
				from = c + n * ratio;
				continue;
			}
			err = ext4fs_blocks_mark_used(fs, c, end - c);
			if (err)
				return err;
			*start = c + offset;
			*got = (uint32_t)take;
			return 0;
		}
	}
	return ext4fs__fs_fail(fs, EXT4FS_E_NO_SPACE, "no free cluster left");
}

int ext4fs_alloc_blocks(struct ext4fs_fs *fs, const struct ext4fs_alloc_request *req,
			uint64_t *start, uint32_t *got)
{
	const struct ext4fs_geom *geo = &fs->geom;
	const struct ext4fs_bitmap *bm;
	struct balloc *ba;
	struct want w = { 0 };
	struct found f = { 0 };
	enum pa_kind kind;
	uint64_t usable;
	uint32_t take;
	int err = ext4fs__fs_require_rw(fs, "allocating blocks"), r;

	if (err)
		return err;
	if (!req || !start || !got || req->len == 0 || req->min_len > req->len)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "bad allocation request (len %u, min_len %u)",
				       req ? req->len : 0, req ? req->min_len : 0);
	if (geo->cluster_ratio != 1)
		return alloc_clusters(fs, req, start, got);
	err = ext4fs_fs_block_bitmap(fs, &bm);
	if (!err)
		err = get_state(fs, &ba);
	if (err)
		return err;
	ba->stats.requests++;

	/* What may be handed out: never the last r_blocks_count free blocks unless allowed. */
	usable = geo->free_blocks_count;
	if (!(req->flags & EXT4FS_ALLOC_USE_RESERVED))
		usable = usable > geo->r_blocks_count ? usable - geo->r_blocks_count : 0;
	w.flags = req->flags;
	w.unaligned = (req->flags & EXT4FS_ALLOC_WHOLE_FILE) && req->lblk > 0;
	w.forward = w.unaligned;
	w.min = req->min_len ? req->min_len : 1;
	w.len = req->len;
	if (w.len > usable)
		w.len = (uint32_t)usable;
	if (w.len > geo->blocks_per_group)
		w.len = geo->blocks_per_group;
	if (w.len < w.min)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_SPACE,
				       "no room for %u blocks: %llu may be allocated%s", w.min,
				       (unsigned long long)usable,
				       req->flags & EXT4FS_ALLOC_USE_RESERVED ? "" : " outside the reserved blocks");
	w.goal = pick_goal(fs, ba, req);
	if (!req->goal && (req->flags & (EXT4FS_ALLOC_WHOLE_FILE | EXT4FS_ALLOC_DIRECTORY)) &&
	    ba->cursor > geo->first_data_block && ba->cursor < geo->blocks_count) {
		uint32_t stripe = stripe_of(fs, ba);
		w.goal = ba->cursor;
		w.forward = (req->flags & EXT4FS_ALLOC_WHOLE_FILE) != 0;
		/* A file that fills a stripe starts on a stripe boundary. */
		if (stripe && req->file_blocks >= stripe && (req->flags & EXT4FS_ALLOC_WHOLE_FILE) &&
		    (w.goal + stripe - 1) / stripe * stripe < geo->blocks_count)
			w.goal = (w.goal + stripe - 1) / stripe * stripe;
	}
	w.goal_group = ext4fs_group_of_block(fs, w.goal);

	if (!(req->flags & EXT4FS_ALLOC_METADATA)) {
		struct pa *pa = req->ino ? ino_pa(ba, req->ino) : NULL;
		if (pa && req->lblk >= pa->lblk && req->lblk - pa->lblk < pa->len) {
			uint32_t skip = req->lblk - pa->lblk, left = pa->len - skip;
			if (left >= w.min && (!(req->flags & EXT4FS_ALLOC_EXACT_GOAL) ||
					      pa->pstart + skip == w.goal)) {
				if (skip)
					pa_skip(fs, ba, pa, skip);
				return pa_take(fs, ba, pa, w.len < left ? w.len : left, w.goal, start, got);
			}
			/* Too short to serve the request: its blocks go back to the search. */
			pa_drop(fs, ba, pa);
		}
	}
	w.target = normalize(fs, ba, req, w.len, &kind);
	if (w.target > usable)
		w.target = (uint32_t)usable;
	if (kind == PA_GROUP) {
		struct pa *pa = lg_pick(ba, w.goal, w.len, req->flags & EXT4FS_ALLOC_EXACT_GOAL);
		if (pa)
			return pa_take(fs, ba, pa, w.len, w.goal, start, got);
	} else if (kind == PA_INODE) {
		struct pa *old = ino_pa(ba, req->ino);
		if (old)
			pa_drop(fs, ba, old);
	}

	r = search(fs, ba, &w, &f);
	if (r == 0 && ba->npa) {
		/* Free blocks held back for later: give them up rather than fail. */
		if (req->flags & EXT4FS_ALLOC_EXACT_GOAL)
			drop_at(fs, ba, w.goal_group, w.goal);
		else
			drop_all(fs, ba);
		r = search(fs, ba, &w, &f);
	}
	if (r < 0)
		return r;
	if (r == 0) {
		if (req->flags & EXT4FS_ALLOC_EXACT_GOAL)
			return ext4fs__fs_fail(fs, EXT4FS_E_NO_SPACE, "block %llu: fewer than %u free blocks there",
					       (unsigned long long)w.goal, w.min);
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_SPACE, "no free extent of %u blocks", w.min);
	}

	take = f.len < w.len ? f.len : w.len;
	err = ext4fs_blocks_mark_used(fs, f.start, take);
	if (err)
		return err;
	if (kind != PA_NONE && f.len > take)
		pa_make(fs, ba, ext4fs_group_of_block(fs, f.start), kind == PA_INODE ? req->ino : 0,
			req->lblk + take, f.start + take, f.len - take);
	/* A directory's later blocks go where its index needs them, not where the tree is being written. */
	if ((req->flags & EXT4FS_ALLOC_WHOLE_FILE) ||
	    ((req->flags & EXT4FS_ALLOC_DIRECTORY) && req->lblk == 0))
		ba->cursor = f.start + take;
	ba->stats.pass_used[f.pass]++;
	ba->stats.blocks_allocated += take;
	if (f.start == w.goal)
		ba->stats.goal_hits++;
	*start = f.start;
	*got = take;
	return 0;
}

int ext4fs_free_blocks(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	const struct ext4fs_geom *geo = &fs->geom;
	const struct ext4fs_bitmap *bm;
	uint64_t mask = (uint64_t)geo->cluster_ratio - 1, end = blk + count;
	int err;

	if (geo->cluster_ratio == 1 || count == 0 || blk >= geo->blocks_count || count > geo->blocks_count - blk)
		return ext4fs_blocks_mark_free(fs, blk, count);
	/*
	 * Bigalloc: extents next to each other in a file may share a cluster,
	 * and the first to go frees it; each cluster is freed once.
	 */
	err = ext4fs_fs_block_bitmap(fs, &bm);
	for (uint64_t c = blk & ~mask; c < end && !err; c += mask + 1) {
		uint64_t from = c < blk ? blk : c;
		if (ext4fs_bitmap_test(bm, from) == 1)
			err = ext4fs_blocks_mark_free(fs, from, 1);
	}
	return err;
}

void ext4fs_alloc_release_inode(struct ext4fs_fs *fs, uint32_t ino)
{
	struct balloc *ba = state_of(fs);
	struct pa *pa;

	if (ba && ino && (pa = ino_pa(ba, ino)) != NULL)
		pa_drop(fs, ba, pa);
}

void ext4fs_alloc_release_all(struct ext4fs_fs *fs)
{
	struct balloc *ba = state_of(fs);

	if (ba)
		drop_all(fs, ba);
}

/* -- fences ------------------------------------------------------------------ */

/* Fence [blk, blk + len): free in the bitmap, not fenced yet. */
static int fence_free_run(struct ext4fs_fs *fs, struct balloc *ba, uint64_t blk, uint64_t len)
{
	int err = ext4fs__extset_add(&ba->fence, blk, len);

	if (err)
		return ext4fs__fs_fail(fs, err, "no memory to fence blocks %llu-%llu", (unsigned long long)blk,
				       (unsigned long long)(blk + len - 1));
	if (fs->geom.cluster_ratio != 1)
		return 0;   /* bigalloc has no buddies: alloc_clusters() asks the set itself */
	for (uint64_t b = blk; b < blk + len;) {
		uint32_t g = ext4fs_group_of_block(fs, b);
		uint64_t first = ext4fs_group_first_block(fs, g), last = ext4fs_group_last_block(fs, g);
		uint32_t n = (uint32_t)(last - b + 1 < blk + len - b ? last - b + 1 : blk + len - b);

		if ((err = build_group(fs, ba, g)))
			return err;   /* fenced in the set, not yet busy: unfencing only frees what it finds busy */
		/* A preallocation holding any of them gives them all up: they are busy once, as fenced. */
		for (struct pa *pa = ba->groups[g].pa, *next; pa; pa = next) {
			next = pa->group_next;
			if (pa->pstart < b + n && b < pa->pstart + pa->len)
				pa_drop(fs, ba, pa);
		}
		set_busy(ba, g, first, b, n, 1);
		b += n;
	}
	return 0;
}

int ext4fs_alloc_fence(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	const struct ext4fs_geom *geo = &fs->geom;
	const struct ext4fs_bitmap *bm;
	struct balloc *ba;
	uint64_t end = blk + count, at = blk;
	int err = ext4fs__fs_require_rw(fs, "fencing blocks");

	if (err || count == 0)
		return err;
	if (blk < geo->first_data_block || blk >= geo->blocks_count || count > geo->blocks_count - blk)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_BLOCK_NUM, "fencing blocks %llu-%llu: not all in the file system",
				       (unsigned long long)blk, (unsigned long long)(end - 1));
	if ((err = ext4fs_fs_block_bitmap(fs, &bm)) || (err = get_state(fs, &ba)))
		return err;
	while (at < end && !err) {
		size_t i = ext4fs__extset_first_after(&ba->fence, at);
		uint64_t start, used, stop = end;

		if (i < ba->fence.n && ba->fence.r[i].start <= at) {
			at = ba->fence.r[i].start + ba->fence.r[i].len;   /* fenced already */
			continue;
		}
		if (i < ba->fence.n && ba->fence.r[i].start < stop)
			stop = ba->fence.r[i].start;
		/* The free runs of [at, stop): what is in use needs no fence. */
		while (at < stop && !err) {
			if (ext4fs_bitmap_find(bm, at, stop - 1, 0, &start)) {
				at = stop;
				break;
			}
			if (ext4fs_bitmap_find(bm, start, stop - 1, 1, &used))
				used = stop;
			err = fence_free_run(fs, ba, start, used - start);
			at = used;
		}
	}
	return err;
}

void ext4fs_alloc_unfence_all(struct ext4fs_fs *fs)
{
	struct balloc *ba = state_of(fs);
	const struct ext4fs_bitmap *bm = fs->block_map;

	if (!ba)
		return;
	for (size_t i = 0; i < ba->fence.n && bm && fs->geom.cluster_ratio == 1; i++) {
		uint64_t b = ba->fence.r[i].start, end = b + ba->fence.r[i].len;

		while (b < end) {
			uint32_t g = ext4fs_group_of_block(fs, b);
			uint64_t first = ext4fs_group_first_block(fs, g), last = ext4fs_group_last_block(fs, g);
			uint64_t stop = last + 1 < end ? last + 1 : end, start, used;

			/* Its free blocks (those the caller did not claim) become available; set_busy counts what changes. */
			for (uint64_t at = b; ba->groups[g].bd.map && at < stop; at = used) {
				if (ext4fs_bitmap_find(bm, at, stop - 1, 0, &start))
					break;
				if (ext4fs_bitmap_find(bm, start, stop - 1, 1, &used))
					used = stop;
				set_busy(ba, g, first, start, (uint32_t)(used - start), 0);
			}
			b = stop;
		}
	}
	ext4fs__extset_free(&ba->fence);
}

uint32_t ext4fs_alloc_stripe(const struct ext4fs_fs *fs)
{
	const struct balloc *ba = state_of(fs);

	return ba ? stripe_of(fs, ba) : stripe_of(fs, &(struct balloc){ .params = default_params });
}

int ext4fs_alloc_stream_align(struct ext4fs_fs *fs, uint64_t ahead)
{
	const struct ext4fs_geom *geo = &fs->geom;
	struct balloc *ba;
	int err = ext4fs__fs_require_rw(fs, "aligning the allocation stream");

	if (!err)
		err = get_state(fs, &ba);
	if (err)
		return err;
	uint32_t stripe = stripe_of(fs, ba);
	uint64_t cur = ba->cursor;
	if (!stripe || cur <= geo->first_data_block || cur >= geo->blocks_count ||
	    ahead >= geo->blocks_count - cur)
		return 0;
	uint64_t next = (cur + ahead + stripe - 1) / stripe * stripe - ahead;
	if (next < geo->blocks_count &&
	    ext4fs_group_of_block(fs, next + ahead) == ext4fs_group_of_block(fs, cur))
		ba->cursor = next;
	return 0;
}

/* -- tuning, statistics, checking ----------------------------------------- */

void ext4fs_alloc_get_params(const struct ext4fs_fs *fs, struct ext4fs_alloc_params *p)
{
	const struct balloc *ba = state_of(fs);

	*p = ba ? ba->params : default_params;
}

int ext4fs_alloc_tune(struct ext4fs_fs *fs, const struct ext4fs_alloc_params *p)
{
	struct balloc *ba;
	int err = ext4fs__fs_require_rw(fs, "tuning the block allocator");

	if (err)
		return err;
	if (!p || p->max_to_scan == 0 || p->min_to_scan > p->max_to_scan)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "allocator tunables: max_to_scan must be >= 1 and >= min_to_scan");
	err = get_state(fs, &ba);
	if (err)
		return err;
	ba->params = *p;
	return 0;
}

void ext4fs_alloc_get_stats(const struct ext4fs_fs *fs, struct ext4fs_alloc_stats *st)
{
	const struct balloc *ba = state_of(fs);

	if (ba)
		*st = ba->stats;
	else
		memset(st, 0, sizeof(*st));
}

/* Append [start, start + len) of the group (offsets) to the busy ranges of check_group(). */
static int add_range(uint32_t **ranges, uint32_t *n, uint32_t *cap, uint32_t start, uint32_t len)
{
	if (*n == *cap) {
		uint32_t grown_cap = *cap ? 2 * *cap : 8;
		uint32_t *grown = realloc(*ranges, grown_cap * 2 * sizeof(**ranges));
		if (!grown)
			return EXT4FS_E_NO_MEMORY;
		*ranges = grown;
		*cap = grown_cap;
	}
	(*ranges)[2 * *n] = start;
	(*ranges)[2 * *n + 1] = len;
	(*n)++;
	return 0;
}

/* Check group g (its buddy built) against the bitmap, its preallocations and the fences. */
static int check_group(struct ext4fs_fs *fs, struct balloc *ba, uint32_t g, uint64_t *held)
{
	struct bgroup *bg = &ba->groups[g];
	uint64_t first = ext4fs_group_first_block(fs, g), last = ext4fs_group_last_block(fs, g);
	uint64_t first_bit = (uint64_t)g * fs->geom.clusters_per_group;
	uint32_t *ranges = NULL, n = 0, cap = 0;
	uint64_t reserved = 0, fenced = 0, found;
	int err = 0, differ;

	for (struct pa *pa = bg->pa; pa; pa = pa->group_next) {
		if (pa->group != g || pa->len == 0 || pa->pstart < first || pa->pstart + pa->len - 1 > last) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE,
					      "group %u: preallocation of %u blocks at %llu is out of place", g,
					      pa->len, (unsigned long long)pa->pstart);
			goto out;
		}
		if (ext4fs_bitmap_find(fs->block_map, pa->pstart, pa->pstart + pa->len - 1, 1, &found) == 0) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE,
					      "group %u: preallocated block %llu is in use", g,
					      (unsigned long long)found);
			goto out;
		}
		if (add_range(&ranges, &n, &cap, (uint32_t)(pa->pstart - first), pa->len)) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to check group %u", g);
			goto out;
		}
		reserved += pa->len;
	}
	/* A fence's blocks still free are busy too (those marked in use are the bitmap's). */
	for (size_t i = ext4fs__extset_first_after(&ba->fence, first);
	     i < ba->fence.n && ba->fence.r[i].start <= last; i++) {
		uint64_t at = ba->fence.r[i].start > first ? ba->fence.r[i].start : first;
		uint64_t stop = ba->fence.r[i].start + ba->fence.r[i].len;
		uint64_t start, used;

		if (stop > last + 1)
			stop = last + 1;
		for (; at < stop; at = used) {
			if (ext4fs_bitmap_find(fs->block_map, at, stop - 1, 0, &start))
				break;
			if (ext4fs_bitmap_find(fs->block_map, start, stop - 1, 1, &used))
				used = stop;
			if (add_range(&ranges, &n, &cap, (uint32_t)(start - first), (uint32_t)(used - start))) {
				err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to check group %u", g);
				goto out;
			}
			fenced += used - start;
		}
	}
	*held += reserved;
	differ = ext4fs__buddy_verify(&bg->bd, &ba->geom, ext4fs__bitmap_bits(fs->block_map) + first_bit / 8, ranges, n);
	if (differ < 0)
		err = ext4fs__fs_fail(fs, differ, "no memory to check group %u", g);
	else if (differ)
		err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE,
				      "group %u: buddy bitmap does not match the block bitmap and preallocations", g);
	else if (bg->avail != bg->bd.free || bg->bd.free + reserved + fenced != fs->groups[g].free_blocks_count)
		err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE,
				      "group %u: %u available + %llu preallocated + %llu fenced, but the descriptor says %u free",
				      g, bg->avail, (unsigned long long)reserved, (unsigned long long)fenced,
				      fs->groups[g].free_blocks_count);
out:
	free(ranges);
	return err;
}

int ext4fs_alloc_check(struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = &fs->geom;
	struct balloc *ba = state_of(fs);
	const struct ext4fs_bitmap *bm;
	struct bflex *flex;
	uint64_t held = 0;
	uint32_t nflex, npa = 0;
	int err;

	if (!ba)
		return 0;
	err = ext4fs_fs_block_bitmap(fs, &bm);
	if (err)
		return err;
	nflex = (geo->group_count + ba->gpf - 1) / ba->gpf;
	flex = calloc(nflex, sizeof(*flex));
	if (!flex)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to check the block allocator");
	for (uint32_t g = 0; g < geo->group_count && !err; g++) {
		struct bgroup *bg = &ba->groups[g];
		flex[g / ba->gpf].avail += bg->avail;
		if (bg->bound > flex[g / ba->gpf].bound)
			flex[g / ba->gpf].bound = bg->bound;
		for (struct pa *pa = bg->pa; pa; pa = pa->group_next)
			npa++;
		if (bg->bound != group_bound(ba, bg))
			err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE, "group %u: run bound %u, should be %u", g,
					      bg->bound, group_bound(ba, bg));
		else if (bg->bd.map)
			err = check_group(fs, ba, g, &held);
		else if (bg->pa || bg->avail != fs->groups[g].free_blocks_count)
			err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE,
					      "group %u (no buddy yet): %u available, the descriptor says %u free",
					      g, bg->avail, fs->groups[g].free_blocks_count);
	}
	for (uint32_t f = 0; f < nflex && !err; f++)
		if (flex[f].avail != ba->flex[f].avail || flex[f].bound != ba->flex[f].bound)
			err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE,
					      "flex group %u: %llu available, run bound %u counted; %llu and %u in its groups",
					      f, (unsigned long long)ba->flex[f].avail, ba->flex[f].bound,
					      (unsigned long long)flex[f].avail, flex[f].bound);
	if (!err && (held != ba->pa_blocks || npa != ba->npa))
		err = ext4fs__fs_fail(fs, EXT4FS_E_ALLOC_STATE,
				      "%u preallocations hold %llu blocks, %u holding %llu counted", npa,
				      (unsigned long long)held, ba->npa, (unsigned long long)ba->pa_blocks);
	free(flex);
	return err;
}
