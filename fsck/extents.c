/*
 * extents.c - checking an extent tree entry by entry (extents.h).
 *
 * The order of the checks and what each entry is measured against follow
 * e2fsck, so the same tree gives the same questions in the same order:
 * every entry must point inside the file system and start at or after
 * where its node (or the previous extent) starts; an entry must end
 * within the range its parent's index gives it, unless it is unwritten
 * space past the end of the file; a leaf extent must have a length, end
 * inside the file system, not map a logical block twice and, in a
 * directory, stay below the directory size limit.  An index entry's child
 * must have a sane header, start where the index says, and carry its
 * checksum; a checksum that fails on a node whose entries are all fine is
 * its own question, asked after the node's entries.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/super.h"
#include "clusters.h"
#include "context.h"
#include "dirs.h"
#include "extents.h"
#include "guard.h"
#include "problems.h"

#define ROOT_SIZE 60

struct scan {
	struct ext4fs_fs *fs;
	const struct ext4fs_geom *g;
	const struct ext4fs_inode *in;
	uint32_t ino;
	const struct extent_scan_ops *ops;
	void *arg;
	unsigned max_depth;
	int is_dir;
	uint64_t dir_limit;
	uint64_t eof_block;         /* last logical block within i_size (wraps below 0 for an empty file) */
	uint64_t next_lblock;       /* end of the mapped range so far (leaf extents) */
	uint64_t dir_next;          /* a directory: the logical block after its last believed extent */
	int dir_gap;                /* a directory: a believed extent met after a gap */
	uint64_t nodes[EXTENT_PATH_MAX];
	struct problem_ctx pctx;    /* the entry being looked at; a node's checksum question reuses the last */
	struct {
		uint64_t entries, room; /* over the nodes visited at this level */
	} levels[EXTENT_PATH_MAX];
	unsigned char *bufs[EXTENT_PATH_MAX];
};

/* e2fsck's header test: the right magic, entries within eh_max, eh_max within two of what fits. */
static int header_sane(const struct ext4fs_extent_header *h, size_t size)
{
	unsigned room = ext4fs_extent_node_room(size);

	return h->magic == EXT4FS_EXTENT_MAGIC && h->entries <= h->max && h->max <= room && (unsigned)h->max + 2 >= room;
}

static int report(struct scan *s, uint32_t code, enum extent_fix_kind kind, unsigned level, int leaf,
		  const struct ext4fs_extent_entry *e, uint32_t new_lblk)
{
	struct extent_fix fix = { .kind = kind, .level = level, .leaf = leaf, .new_lblk = new_lblk };

	memcpy(fix.nodes, s->nodes, sizeof(fix.nodes));
	if (e)
		fix.entry = *e;
	return s->ops->problem(s->arg, code, &s->pctx, &fix);
}

static int scan_node(struct scan *s, unsigned level, const unsigned char *node, uint64_t start_block,
		     uint64_t end_block, uint64_t node_end, int try_repairs, int failed_csum);

/* An index entry that passed its own checks: its child, then the child's block. */
static int scan_child(struct scan *s, unsigned level, const struct ext4fs_extent_entry *e, uint64_t last_lblk,
		      uint64_t child_end)
{
	int next_try_repairs = 1, rc;
	unsigned child = level + 1;

	if (s->ino != EXT4FS_RESIZE_INO && s->ops->is_metadata(s->arg, e->pblk)) {
		/* Pass 1B moves the block first; the subtree is checked but not repaired. */
		next_try_repairs = 0;
		s->pctx.blk = e->pblk;
		if ((rc = s->ops->problem(s->arg, PR_1_CRITICAL_METADATA_COLLISION, &s->pctx, NULL)))
			return rc;
	}
	struct ext4fs_extent_header h = { 0 };
	int readable = child < EXTENT_PATH_MAX && ext4fs_block_read(s->fs, e->pblk, s->bufs[child]) == 0;
	if (readable)
		ext4fs_extent_node_header(s->bufs[child], &h);
	if (!readable || !header_sane(&h, s->g->block_size)) {
		/*
		 * Deleting the entry would be a repair of the colliding block's
		 * parent, which e2fsck does not make here: it gives up the whole
		 * walk instead (see fsck_extents_scan()).
		 */
		if (!next_try_repairs) {
			s->pctx.blk = e->pblk;
			s->pctx.blk2 = e->lblk;
			s->pctx.str = "EXT2_EXTENT_DOWN";
			s->pctx.errmsg = readable ? "Corrupt extent header"
						  : "Attempt to read block from filesystem resulted in short read";
			return EXTENT_SCAN_STOPPED;
		}
		return report(s, PR_1_EXTENT_HEADER_INVALID, EXTENT_FIX_DELETE, level, 0, e, 0);
	}
	int csum_bad = !ext4fs_extent_node_csum_ok(s->fs, s->ino, s->in->i_generation, s->bufs[child],
						   s->g->block_size);
	uint64_t child_start = e->lblk;
	if (h.entries) {
		struct ext4fs_extent_entry first;
		ext4fs_extent_node_entry(s->bufs[child], 0, child == s->max_depth, &first);
		child_start = first.lblk;
		if (first.lblk != e->lblk) {
			s->pctx.blk = e->lblk;
			s->pctx.blk2 = first.lblk;
			s->pctx.num = level;
			if ((rc = report(s, PR_1_EXTENT_INDEX_START_INVALID, EXTENT_FIX_INDEX_START, level, 0, e,
					 first.lblk)))
				return rc;
		}
	}
	s->nodes[child] = e->pblk;
	rc = scan_node(s, child, s->bufs[child], child_start, last_lblk, child_end, next_try_repairs, csum_bad);
	s->nodes[child] = 0;
	if (rc)
		return rc;
	struct ext4fs_block_visit v = { .kind = EXT4FS_BLOCK_EXTENT_NODE, .pblk = e->pblk, .lblk = e->lblk,
					.count = 1 };
	return s->ops->claim(&v, s->arg);
}

static int scan_node(struct scan *s, unsigned level, const unsigned char *node, uint64_t start_block,
		     uint64_t end_block, uint64_t node_end, int try_repairs, int failed_csum)
{
	const struct ext4fs_geom *g = s->g;
	struct ext4fs_extent_header h;
	int leaf = level == s->max_depth, rc;

	ext4fs_extent_node_header(node, &h);
	s->levels[level].entries += h.entries;
	/*
	 * Appending splits leave the old block one entry short of full, so a
	 * block below the root that is not full counts one entry less, as
	 * e2fsck counts it: such trees are not worth rebuilding.
	 */
	s->levels[level].room += h.max - (level && h.entries < h.max ? 1 : 0);
	for (unsigned i = 0; i < h.entries; i++) {
		struct ext4fs_extent_entry e;
		uint32_t len;

		ext4fs_extent_node_entry(node, i, leaf, &e);
		if (leaf) {
			len = e.len;
		} else {
			/* An index entry covers up to the next one, the last up to where its node ends. */
			uint64_t end = node_end;
			if (i + 1 < h.entries) {
				struct ext4fs_extent_entry next;
				ext4fs_extent_node_entry(node, i + 1, 0, &next);
				end = next.lblk;
			}
			len = (uint32_t)(end - e.lblk);
		}
		uint64_t last_lblk = (uint64_t)e.lblk + len - 1;
		uint32_t problem = 0;

		s->pctx.blk = e.pblk;
		s->pctx.blk2 = e.lblk;
		s->pctx.num = len;
		if (!ext4fs_block_ptr_valid(s->fs, e.pblk))
			problem = PR_1_EXTENT_BAD_START_BLK;
		else if (e.lblk < start_block)
			problem = PR_1_OUT_OF_ORDER_EXTENTS;
		else if (end_block && last_lblk > end_block && !(last_lblk > s->eof_block && e.unwritten))
			problem = PR_1_EXTENT_END_OUT_OF_BOUNDS;
		else if (leaf && len == 0)
			problem = PR_1_EXTENT_LENGTH_ZERO;
		else if (leaf && e.pblk + len > g->blocks_count)
			problem = PR_1_EXTENT_ENDS_BEYOND;
		else if (leaf && s->is_dir && (uint64_t)e.lblk + len > s->dir_limit) {
			problem = PR_1_TOOBIG_DIR;
			s->pctx.num = (uint64_t)e.lblk + len;
		}
		if (leaf && !problem && len) {
			if (e.lblk < s->next_lblock)
				problem = PR_1_EXTENT_COLLISION;
			else if (e.lblk + (uint64_t)len > s->next_lblock)
				s->next_lblock = e.lblk + (uint64_t)len;
		}
		if (try_repairs && s->is_dir && !problem && e.unwritten) {
			if ((rc = report(s, PR_1_UNINIT_DBLOCK, EXTENT_FIX_WRITTEN, level, leaf, &e, 0)))
				return rc;
			e.unwritten = 0;
		}
		if (problem && try_repairs) {
			/* Not believed whatever the answer: its blocks are not claimed. */
			if ((rc = report(s, problem, EXTENT_FIX_DELETE, level, leaf, &e, 0)))
				return rc;
			continue;
		}
		/*
		 * In a tree block on the metadata e2fsck asks nothing and believes a
		 * bad leaf extent as it is: its blocks count for the file (and any
		 * inside the file system are claimed).  A bad index entry there is
		 * left alone here, where e2fsck would try to go down it.
		 */
		if (problem && !leaf)
			continue;
		if (!leaf) {
			if ((rc = scan_child(s, level, &e, last_lblk, (uint64_t)e.lblk + len)))
				return rc;
			continue;
		}
		struct ext4fs_block_visit v = { .kind = EXT4FS_BLOCK_DATA, .pblk = e.pblk, .lblk = e.lblk,
						.count = len, .unwritten = e.unwritten };
		if ((rc = s->ops->claim(&v, s->arg)))
			return rc;
		/*
		 * A directory's logical blocks must follow each other: e2fsck moves
		 * an extent down to close a gap.  Whether one is asked about depends
		 * on the answers before it (a moved extent moves the next gap), so
		 * from the first gap on every extent goes to the asking thread, the
		 * first one with the block where it was expected.
		 */
		if (try_repairs && s->is_dir && (s->dir_gap || e.lblk > s->dir_next)) {
			s->dir_gap = 1;
			if ((rc = report(s, PR_1_COLLAPSE_DBLOCK, EXTENT_FIX_COLLAPSE, level, leaf, &e,
					 (uint32_t)s->dir_next)))
				return rc;
		}
		s->dir_next = (uint64_t)e.lblk + len;
		start_block = last_lblk;
	}
	if (failed_csum)
		return report(s, PR_1_EXTENT_ONLY_CSUM_INVALID, EXTENT_FIX_CSUM, level, leaf, NULL, 0);
	return 0;
}

/*
 * e2fsck's test for a tree worth rebuilding: a level with more than a
 * block's worth of free entries could be narrower, a level whose entries
 * would fit in the room of a level above could go (the tree could be
 * shorter).  Asked as a suggestion; a yes queues the inode for pass 1E.
 */
static int suggest_rebuild(struct scan *s)
{
	uint64_t per_block = ext4fs_extent_node_room(s->g->block_size);

	for (unsigned i = 0; i <= s->max_depth; i++) {
		uint32_t code = 0;
		if (s->levels[i].room - s->levels[i].entries > per_block && s->levels[i].room > s->levels[i].entries)
			code = PR_1E_CAN_NARROW_EXTENT_TREE;
		for (unsigned j = 0; j < i && !code; j++)
			if (s->levels[i].entries < s->levels[j].room)
				code = PR_1E_CAN_COLLAPSE_EXTENT_TREE;
		if (code) {
			s->pctx.blk = i;
			return report(s, code, EXTENT_FIX_REBUILD, 0, 0, NULL, 0);
		}
	}
	return 0;
}

/*
 * The depth e2fsck allows a tree (ext2fs_max_extent_depth()): enough levels
 * of full blocks below the four root entries to map 2^32 logical blocks,
 * counted in whole powers of two.
 */
static unsigned depth_allowed(uint32_t block_size)
{
	unsigned per_bits = 0, root_bits = 0;

	for (unsigned per = ext4fs_extent_node_room(block_size); per > 1; per >>= 1)
		per_bits++;
	for (unsigned root = ext4fs_extent_node_room(ROOT_SIZE); root > 1; root >>= 1)
		root_bits++;
	return 1 + (31 - root_bits) / per_bits;
}

int fsck_extents_scan(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in, uint64_t dir_limit,
		      const struct extent_scan_ops *ops, void *arg)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	struct scan s = { .fs = fs, .g = g, .in = in, .ino = ino, .ops = ops, .arg = arg,
			  .is_dir = EXT4FS_ISDIR(in->i_mode), .dir_limit = dir_limit };
	struct ext4fs_extent_header h;
	int rc;

	s.pctx.ino = ino;
	ext4fs_extent_node_header(in->i_block, &h);
	if (!header_sane(&h, ROOT_SIZE) || h.depth > EXTENT_DEPTH_WALKED)
		return ops->problem(arg, PR_1_MISSING_EXTENT_HEADER, &s.pctx, NULL);
	s.max_depth = h.depth;
	if (h.depth > depth_allowed(g->block_size)) {
		/* Asked before the entries, as e2fsck does; a yes rebuilds the tree whatever its levels hold. */
		s.pctx.blk = h.depth;
		s.pctx.blk2 = depth_allowed(g->block_size);
		if ((rc = report(&s, PR_1_EXTENT_BAD_MAX_DEPTH, EXTENT_FIX_REBUILD, 0, 0, NULL, 0)))
			return rc;
		s.pctx.blk = s.pctx.blk2 = 0;
	}
	for (unsigned k = 1; k <= s.max_depth; k++)
		if (!(s.bufs[k] = malloc(g->block_size))) {
			rc = -ENOMEM;
			goto out;
		}
	uint64_t size_blocks = (ext4fs_inode_size(in) + g->block_size - 1) / g->block_size;
	s.eof_block = size_blocks - 1;
	rc = scan_node(&s, 0, (const unsigned char *)in->i_block, 0, 0, size_blocks, 1, 0);
	if (rc == EXTENT_SCAN_STOPPED) {
		/* e2fsck's order: the failure, the suggestion for what it walked, then its fatal error. */
		rc = ops->problem(arg, PR_1_EXTENT_ITERATE_FAILURE, &s.pctx, NULL);
		if (!rc)
			rc = suggest_rebuild(&s);
		if (!rc)
			rc = ops->problem(arg, PR_1_BLOCK_ITERATE, &s.pctx, NULL);
		if (!rc)
			rc = EXTENT_SCAN_STOPPED;
	} else if (!rc) {
		rc = suggest_rebuild(&s);
	}
out:
	for (unsigned k = 1; k < EXTENT_PATH_MAX; k++)
		free(s.bufs[k]);
	return rc;
}

/* ---------------------------------------------------------------- repairs */

struct node_ref {
	unsigned char *buf;         /* the root in the inode, or a block buffer */
	size_t size;
	int in_inode;               /* the root: i_block, written with the inode by the caller */
	uint64_t blk;               /* the node's block, unless in_inode */
};

/*
 * The node at level of a path from the root: level 0 is i_block, deeper
 * levels the blocks nodes[level].  The level says where the node is, never
 * its block number: 0 is what a damaged index can hold.
 */
static int node_load(struct e4fsck *ctx, struct ext4fs_inode *in, const uint64_t *nodes, unsigned level,
		     unsigned char *buf, struct node_ref *n)
{
	struct ext4fs_extent_header h;

	n->in_inode = level == 0;
	n->blk = n->in_inode ? 0 : nodes[level];
	if (n->in_inode) {
		n->buf = (unsigned char *)in->i_block;
		n->size = ROOT_SIZE;
	} else {
		n->buf = buf;
		n->size = ctx->geo->block_size;
		if (!ext4fs_block_ptr_valid(ctx->fs, n->blk) || ext4fs_block_read(ctx->fs, n->blk, buf))
			return -1;
	}
	ext4fs_extent_node_header(n->buf, &h);
	return h.magic == EXT4FS_EXTENT_MAGIC && h.entries <= ext4fs_extent_node_room(n->size) ? 0 : -1;
}

static int node_store(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, struct node_ref *n)
{
	/*
	 * A tree block on the file system's metadata is only ever walked: e2fsck
	 * answers some questions about it all the same (a checksum, an index
	 * start below it), but the write would land on the metadata.  Pass 1B
	 * gives the inode a copy, which the next run repairs.
	 */
	if (n->in_inode || range_set_test(&ctx->fs_meta, n->blk))
		return 0;
	ext4fs_extent_node_csum_set(ctx->fs, ino, in->i_generation, n->buf, n->size);
	int err = ext4fs_block_write(ctx->fs, n->blk, n->buf);
	if (err) {
		fsck_fatal(ctx, "%s while writing extent block %llu of inode %u: %s", ext4fs_strerror(err),
			   (unsigned long long)n->blk, ino, ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

/* The entry of node n that fix names (leaf: same extent; index: same child), or -1. */
static int find_entry(const struct node_ref *n, int leaf, const struct ext4fs_extent_entry *want)
{
	struct ext4fs_extent_header h;

	ext4fs_extent_node_header(n->buf, &h);
	for (unsigned i = 0; i < h.entries; i++) {
		struct ext4fs_extent_entry e;
		ext4fs_extent_node_entry(n->buf, i, leaf, &e);
		if (e.lblk == want->lblk && e.pblk == want->pblk &&
		    (!leaf || (e.len == want->len && e.unwritten == want->unwritten)))
			return (int)i;
	}
	return -1;
}

/*
 * The node at level (nodes[level]) now starts at first: the index entries
 * above that point at it follow, as far up as each is its node's first.
 * Returns 1 when the root changed, 0 when it did not, -1 after fsck_fatal().
 */
static int fix_parents(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in, const uint64_t *nodes,
		       unsigned level, uint32_t first, unsigned char *buf)
{
	for (; level > 0; level--) {
		struct node_ref up;
		struct ext4fs_extent_header h;
		if (node_load(ctx, in, nodes, level - 1, buf, &up))
			return 0;
		ext4fs_extent_node_header(up.buf, &h);
		unsigned i;
		struct ext4fs_extent_entry e;
		for (i = 0; i < h.entries; i++) {
			ext4fs_extent_node_entry(up.buf, i, 0, &e);
			if (e.pblk == nodes[level])
				break;
		}
		if (i == h.entries || e.lblk == first)
			return 0;
		e.lblk = first;
		ext4fs_extent_node_set_entry(up.buf, i, 0, &e);
		if (node_store(ctx, ino, in, &up))
			return -1;
		if (up.in_inode)
			return 1;
		if (i != 0)
			return 0;
	}
	return 0;
}

int fsck_extent_repair(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in, const struct extent_fix *fix)
{
	unsigned char *buf = malloc(ctx->geo->block_size);
	struct extent_fix f = *fix;
	struct node_ref n;
	int rc = 0, inode_changed = 0;

	if (!buf) {
		fsck_fatal(ctx, "out of memory repairing the extent tree of inode %u", ino);
		return -1;
	}
	for (;;) {
		struct ext4fs_extent_header h;
		if (node_load(ctx, in, f.nodes, f.level, buf, &n))
			break;          /* gone with an earlier repair, or unreadable: nothing to do */
		ext4fs_extent_node_header(n.buf, &h);
		int i = f.kind == EXTENT_FIX_CSUM ? 0 : find_entry(&n, f.leaf, &f.entry);
		if (i < 0)
			break;
		struct ext4fs_extent_entry e = f.entry;
		if (f.kind == EXTENT_FIX_WRITTEN) {
			e.unwritten = 0;
			ext4fs_extent_node_set_entry(n.buf, (unsigned)i, f.leaf, &e);
		} else if (f.kind == EXTENT_FIX_INDEX_START || f.kind == EXTENT_FIX_COLLAPSE) {
			e.lblk = f.new_lblk;
			ext4fs_extent_node_set_entry(n.buf, (unsigned)i, f.leaf, &e);
		} else if (f.kind == EXTENT_FIX_DELETE) {
			ext4fs_extent_node_remove(n.buf, (unsigned)i);
			h.entries--;
			if (!h.entries && f.level > 0) {
				/* An empty node below the root goes, and its entry in the parent with it. */
				bitmap_paged_clear_range(&ctx->block_found, n.blk, 1);
				ext4fs_inode_add_blocks(ctx->fs, in, -1);
				inode_changed = 1;
				f.entry = (struct ext4fs_extent_entry){ .pblk = n.blk };
				f.level--;
				f.leaf = 0;
				if (node_load(ctx, in, f.nodes, f.level, buf, &n))
					break;
				struct ext4fs_extent_header ph;
				ext4fs_extent_node_header(n.buf, &ph);
				for (unsigned k = 0; k < ph.entries; k++) {
					struct ext4fs_extent_entry pe;
					ext4fs_extent_node_entry(n.buf, k, 0, &pe);
					if (pe.pblk == f.entry.pblk)
						f.entry.lblk = pe.lblk;
				}
				continue;
			}
			if (!h.entries) {
				h.depth = 0;    /* an empty root is a leaf */
				ext4fs_extent_node_set_header(n.buf, &h);
			}
		}
		if (n.in_inode)
			inode_changed = 1;
		if (node_store(ctx, ino, in, &n)) {
			rc = -1;
			break;
		}
		if ((f.kind == EXTENT_FIX_DELETE || f.kind == EXTENT_FIX_INDEX_START || f.kind == EXTENT_FIX_COLLAPSE) &&
		    i == 0 && h.entries) {
			struct ext4fs_extent_entry first;
			ext4fs_extent_node_entry(n.buf, 0, f.leaf, &first);
			int up = fix_parents(ctx, ino, in, f.nodes, f.level, first.lblk, buf);
			if (up < 0)
				rc = -1;
			else if (up > 0)
				inode_changed = 1;
		}
		break;
	}
	free(buf);
	return rc < 0 ? -1 : inode_changed;
}

/* ---------------------------------------------------------------- pass 1E */

struct tree_parts {
	struct ext4fs_extent_entry *ext;    /* leaf extents in order */
	size_t next, cap;
	uint64_t *blocks;                   /* the tree's blocks below the root */
	size_t nblocks, capblocks;
};

static int collect_part(const struct ext4fs_block_visit *v, void *arg)
{
	struct tree_parts *t = arg;

	if (v->kind == EXT4FS_BLOCK_DATA) {
		if (t->next == t->cap) {
			void *grown = ext4fs_array_grow(t->ext, &t->cap, t->next + 1, sizeof(*t->ext), 64);
			if (!grown)
				return -ENOMEM;
			t->ext = grown;
		}
		t->ext[t->next++] = (struct ext4fs_extent_entry){ (uint32_t)v->lblk, v->pblk, v->count, v->unwritten };
		return 0;
	}
	if (t->nblocks == t->capblocks) {
		void *grown =
			ext4fs_array_grow(t->blocks, &t->capblocks, t->nblocks + 1, sizeof(*t->blocks), 16);
		if (!grown)
			return -ENOMEM;
		t->blocks = grown;
	}
	t->blocks[t->nblocks++] = v->pblk;
	return 0;
}

/*
 * Write one level of the new tree: n entries (leaf extents, or index
 * entries naming the level below) packed into nodes of per entries, in the
 * blocks taken from *spare.  firsts/children receive each node's first
 * logical block and block for the level above.
 */
static int write_level(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, int leaf, unsigned depth,
		       const struct ext4fs_extent_entry *entries, size_t n, const uint64_t *spare, size_t *used,
		       struct ext4fs_extent_entry *up, unsigned char *buf)
{
	unsigned per = ext4fs_extent_node_room(ctx->geo->block_size);
	size_t nodes = 0;

	for (size_t at = 0; at < n; at += per, nodes++) {
		size_t k = n - at < per ? n - at : per;
		memset(buf, 0, ctx->geo->block_size);
		struct ext4fs_extent_header h = { EXT4FS_EXTENT_MAGIC, (uint16_t)k, (uint16_t)per, (uint16_t)depth };
		ext4fs_extent_node_set_header(buf, &h);
		for (size_t i = 0; i < k; i++)
			ext4fs_extent_node_set_entry(buf, (unsigned)i, leaf, &entries[at + i]);
		uint64_t blk = spare[(*used)++];
		ext4fs_extent_node_csum_set(ctx->fs, ino, in->i_generation, buf, ctx->geo->block_size);
		int err = ext4fs_block_write(ctx->fs, blk, buf);
		if (err) {
			fsck_fatal(ctx, "%s while writing extent block %llu of inode %u: %s", ext4fs_strerror(err),
				   (unsigned long long)blk, ino, ext4fs_errmsg(ctx->fs));
			return -1;
		}
		up[nodes] = (struct ext4fs_extent_entry){ .lblk = entries[at].lblk, .pblk = blk };
	}
	return 0;
}

/*
 * Write a tree of the n leaf extents ext with depth levels below the root:
 * the nodes into blocks[*used...] (so many as the levels need), the root
 * into in's i_block.  0, -1 after fsck_fatal(), or -ENOMEM (nothing
 * written).
 */
static int write_tree(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in, const struct ext4fs_extent_entry *ext,
		      size_t n, unsigned depth, const uint64_t *blocks, size_t *used)
{
	const unsigned root_room = ext4fs_extent_node_room(ROOT_SIZE);
	unsigned per = ext4fs_extent_node_room(ctx->geo->block_size);
	unsigned char *buf = malloc(ctx->geo->block_size);
	struct ext4fs_extent_entry *level = malloc((n ? n : 1) * sizeof(*level));
	struct ext4fs_extent_entry *up = malloc((n ? n : 1) * sizeof(*up));
	size_t width = n;
	int rc = 0;

	if (!buf || !level || !up) {
		rc = -ENOMEM;
		goto out;
	}
	if (n)
		memcpy(level, ext, n * sizeof(*level));
	for (unsigned d = 0; d < depth; d++) {
		if (write_level(ctx, ino, in, d == 0, d, level, width, blocks, used, up, buf)) {
			rc = -1;
			goto out;
		}
		width = (width + per - 1) / per;
		memcpy(level, up, width * sizeof(*level));
	}
	memset(in->i_block, 0, sizeof(in->i_block));
	struct ext4fs_extent_header h = { EXT4FS_EXTENT_MAGIC, (uint16_t)width, (uint16_t)root_room, (uint16_t)depth };
	ext4fs_extent_node_set_header(in->i_block, &h);
	for (size_t i = 0; i < width; i++)
		ext4fs_extent_node_set_entry(in->i_block, (unsigned)i, depth == 0, &level[i]);
out:
	free(buf);
	free(level);
	free(up);
	return rc;
}

/* A tree block given back leaves the found map and the inode's count: a cluster of its own with bigalloc. */
static void unclaim_tree_block(struct e4fsck *ctx, struct ext4fs_inode *in, uint64_t blk)
{
	cluster_unclaim(&ctx->block_found, ctx->geo->cluster_ratio, blk, 1);
	ext4fs_inode_add_blocks(ctx->fs, in, -(int64_t)ctx->geo->cluster_ratio);
}

/* The block map's data runs, merged as e2fsck merges them, and its mapping blocks. */
static int collect_mapped(const struct ext4fs_block_visit *v, void *arg)
{
	struct tree_parts *t = arg;

	if (v->kind != EXT4FS_BLOCK_DATA) {
		if (t->nblocks == t->capblocks) {
			void *grown = ext4fs_array_grow(t->blocks, &t->capblocks, t->nblocks + 1, sizeof(*t->blocks), 16);
			if (!grown)
				return -ENOMEM;
			t->blocks = grown;
		}
		t->blocks[t->nblocks++] = v->pblk;
		return 0;
	}
	for (uint32_t k = 0; k < v->count; k++) {
		struct ext4fs_extent_entry *last = t->next ? &t->ext[t->next - 1] : NULL;
		if (last && last->lblk + last->len == v->lblk + k && last->pblk + last->len == v->pblk + k &&
		    last->len < 32768) {
			last->len++;
			continue;
		}
		if (t->next == t->cap) {
			void *grown = ext4fs_array_grow(t->ext, &t->cap, t->next + 1, sizeof(*t->ext), 64);
			if (!grown)
				return -ENOMEM;
			t->ext = grown;
		}
		t->ext[t->next++] = (struct ext4fs_extent_entry){ (uint32_t)(v->lblk + k), v->pblk + k, 1, 0 };
	}
	return 0;
}

/* Whether needed clusters can be taken once the map's own freed clusters are given back. */
static int room_for_tree(struct e4fsck *ctx, size_t needed, size_t freed)
{
	uint64_t from = ctx->geo->first_data_block;

	for (size_t found = freed; found < needed; found++) {
		from = fsck_next_free_cluster(ctx, from);
		if (from >= ctx->geo->blocks_count)
			return 0;
		from += ctx->geo->cluster_ratio;
	}
	return 1;
}

/*
 * No cluster is left for the tree: e2fsck's pass 1E reports that it failed
 * (in the words its allocator's failure reaches it with), after inserting
 * the extents the root holds and losing the rest.  The inode is left as it
 * was instead, its data whole, and the file system still has the error.
 */
static void no_room_for_tree(struct e4fsck *ctx, uint32_t ino)
{
	char *path = fsck_path(ctx, ino, 0);
	struct problem_ctx pctx = { .ino = ino, .errmsg = ext4fs_strerror(-EPERM), .path = path };

	fix_problem(ctx, PR_1E_OPTIMIZE_EXT_ERR, &pctx);
	free(path);
	ctx->exit_status |= FSCK_UNCORRECTED;
}

/*
 * Pass 1E for a block-mapped inode (on bigalloc, where the kernel allows
 * none): as e2fsck converts it, its data runs become an extent tree and
 * its mapping blocks are freed (a cluster each, with the inode's count);
 * tree blocks the extents need are taken (and counted) as clusters no
 * inode uses.  An unlinked inode is left alone, as e2fsck leaves it, and
 * so is one whose tree finds no room.  0, or -1 after fsck_fatal().
 */
static int extent_from_blockmap(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in)
{
	const unsigned root_room = ext4fs_extent_node_room(ROOT_SIZE);
	unsigned per = ext4fs_extent_node_room(ctx->geo->block_size);
	struct tree_parts t = { 0 };
	uint64_t *nodes = NULL;
	const struct ext4fs_bitmap *bb;
	int rc = -1, err;

	if (!in->i_links_count)
		return 0;
	err = ext4fs_block_iterate(ctx->fs, ino, in, 0, collect_mapped, &t);
	if (err == -ENOMEM)
		goto nomem;
	if (err) {
		rc = 0;         /* a map this cannot read: left as it is */
		goto out;
	}
	size_t n = t.next, nodes_needed = 0, used = 0;
	unsigned depth = 0;
	for (size_t width = n; width > root_room; width = (width + per - 1) / per, depth++)
		nodes_needed += (width + per - 1) / per;
	nodes = malloc((nodes_needed ? nodes_needed : 1) * sizeof(*nodes));
	if (!nodes)
		goto nomem;
	if (!room_for_tree(ctx, nodes_needed, t.nblocks)) {
		no_room_for_tree(ctx, ino);
		rc = 0;
		goto out;
	}
	/* The mapping blocks go first, as e2fsck frees them while it reads the map. */
	err = ext4fs_fs_block_bitmap(ctx->fs, &bb);
	for (size_t i = 0; i < t.nblocks && !err; i++) {
		if (ext4fs_bitmap_test(bb, t.blocks[i]) > 0)
			err = ext4fs_free_blocks(ctx->fs, t.blocks[i], 1);
		if (!err)
			unclaim_tree_block(ctx, in, t.blocks[i]);
	}
	for (size_t i = 0; i < nodes_needed && !err; i++) {
		err = fsck_take_block_counted(ctx, ctx->geo->first_data_block, &nodes[i]);
		if (!err)
			err = ext4fs_inode_add_blocks(ctx->fs, in, ctx->geo->cluster_ratio);
	}
	if (err) {
		fsck_fatal(ctx, "%s while converting inode %u to extents: %s", ext4fs_strerror(err), ino,
			   ext4fs_errmsg(ctx->fs));
		goto out;
	}
	in->i_flags |= EXT4FS_EXTENTS_FL;
	err = write_tree(ctx, ino, in, t.ext, n, depth, nodes, &used);
	if (err == -ENOMEM)
		goto nomem;
	if (err)
		goto out;
	err = ext4fs_inode_write(ctx->fs, ino, in);
	if (err) {
		fsck_fatal(ctx, "%s while writing inode %u: %s", ext4fs_strerror(err), ino, ext4fs_errmsg(ctx->fs));
		goto out;
	}
	ctx->fs_changed = 1;   /* a repair, unlike pass 1E's optimizing */
	rc = 0;
	goto out;
nomem:
	fsck_fatal(ctx, "out of memory converting inode %u to extents", ino);
out:
	free(t.ext);
	free(t.blocks);
	free(nodes);
	return rc;
}

static int walk_tree(struct ext4fs_fs *fs, const struct ext4fs_inode *in, int strict, ext4fs_block_visit_fn fn,
		     void *arg);

int fsck_extent_rebuild(struct e4fsck *ctx, uint32_t ino)
{
	const unsigned root_room = ext4fs_extent_node_room(ROOT_SIZE);
	unsigned per = ext4fs_extent_node_room(ctx->geo->block_size);
	struct tree_parts t = { 0 };
	struct ext4fs_inode in;
	int rc = -1, err;

	err = ext4fs_inode_read(ctx->fs, ino, &in);
	if (!err && !(in.i_flags & EXT4FS_EXTENTS_FL) && !ext4fs_inode_has_inline_data(&in))
		return extent_from_blockmap(ctx, ino, &in);
	if (!err)
		err = walk_tree(ctx->fs, &in, 1, collect_part, &t);
	if (err == -ENOMEM)
		goto nomem;
	if (err) {
		rc = 0;         /* not a tree this can rebuild (a repair was declined): leave it */
		goto out;
	}
	/* Levels needed: each holds the entries of the one below, the root at most four. */
	size_t n = t.next, nodes_needed = 0;
	unsigned depth = 0;
	for (size_t width = n; width > root_room; width = (width + per - 1) / per, depth++)
		nodes_needed += (width + per - 1) / per;
	if (depth > EXT4FS_EXTENT_MAX_DEPTH || nodes_needed > t.nblocks) {
		rc = 0;         /* cannot be smaller than it is */
		goto out;
	}
	/* Its blocks are rewritten in place: not one on the file system's metadata (a clone was declined). */
	for (size_t i = 0; i < t.nblocks; i++)
		if (range_set_test(&ctx->fs_meta, t.blocks[i])) {
			rc = 0;
			goto out;
		}
	size_t used = 0;
	err = write_tree(ctx, ino, &in, t.ext, n, depth, t.blocks, &used);
	if (err == -ENOMEM)
		goto nomem;
	if (err)
		goto out;
	/* The blocks left over go back (pass 5 settles any the bitmap already called free). */
	const struct ext4fs_bitmap *bb;
	err = ext4fs_fs_block_bitmap(ctx->fs, &bb);
	for (size_t i = used; i < t.nblocks && !err; i++) {
		if (ext4fs_bitmap_test(bb, t.blocks[i]) > 0)
			err = ext4fs_free_blocks(ctx->fs, t.blocks[i], 1);
		if (err) {
			fsck_fatal(ctx, "%s while freeing extent block %llu of inode %u: %s", ext4fs_strerror(err),
				   (unsigned long long)t.blocks[i], ino, ext4fs_errmsg(ctx->fs));
			goto out;
		}
		unclaim_tree_block(ctx, &in, t.blocks[i]);
	}
	if (err) {
		fsck_fatal(ctx, "%s while reading the block bitmap: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
		goto out;
	}
	err = ext4fs_inode_write(ctx->fs, ino, &in);
	if (err) {
		fsck_fatal(ctx, "%s while writing inode %u: %s", ext4fs_strerror(err), ino, ext4fs_errmsg(ctx->fs));
		goto out;
	}
	ctx->fs_modified = 1;
	rc = 0;
	goto out;
nomem:
	fsck_fatal(ctx, "out of memory rebuilding the extent tree of inode %u", ino);
out:
	free(t.ext);
	free(t.blocks);
	return rc;
}

/* ---------------------------------------------------------------- lenient walk */

struct any_walk {
	struct ext4fs_fs *fs;
	const struct ext4fs_geom *g;
	ext4fs_block_visit_fn fn;
	void *arg;
	int strict;                 /* a node that cannot be entered fails the walk instead of being passed over */
	unsigned char *bufs[EXTENT_PATH_MAX];
};

static int walk_any(struct any_walk *w, const unsigned char *node, size_t size, unsigned depth, unsigned level)
{
	struct ext4fs_extent_header h;
	const int skip = w->strict ? EXT4FS_E_EXTENT_CORRUPT : 0;

	ext4fs_extent_node_header(node, &h);
	if (!header_sane(&h, size) || h.depth != depth)
		return skip;
	for (unsigned i = 0; i < h.entries; i++) {
		struct ext4fs_extent_entry e;
		int rc;
		ext4fs_extent_node_entry(node, i, depth == 0, &e);
		if (depth == 0) {
			struct ext4fs_block_visit v = { .kind = EXT4FS_BLOCK_DATA, .pblk = e.pblk, .lblk = e.lblk,
							.count = e.len, .unwritten = e.unwritten };
			if (e.len && (rc = w->fn(&v, w->arg)))
				return rc;
			continue;
		}
		/* e2fsck's walks skip a pointer of 0 too; it would lead to the superblock's block. */
		if (!ext4fs_block_ptr_valid(w->fs, e.pblk) || level + 1 >= EXTENT_PATH_MAX) {
			if (skip)
				return skip;
			continue;
		}
		struct ext4fs_block_visit v = { .kind = EXT4FS_BLOCK_EXTENT_NODE, .pblk = e.pblk, .lblk = e.lblk,
						.count = 1 };
		if ((rc = w->fn(&v, w->arg)))
			return rc;
		if ((rc = ext4fs_block_read(w->fs, e.pblk, w->bufs[level + 1]))) {
			if (skip)
				return rc;
			continue;
		}
		if ((rc = walk_any(w, w->bufs[level + 1], w->g->block_size, depth - 1, level + 1)))
			return rc;
	}
	return 0;
}

static int walk_tree(struct ext4fs_fs *fs, const struct ext4fs_inode *in, int strict, ext4fs_block_visit_fn fn,
		     void *arg)
{
	struct any_walk w = { .fs = fs, .g = ext4fs_geom(fs), .fn = fn, .arg = arg, .strict = strict };
	struct ext4fs_extent_header h;
	int rc = 0;

	ext4fs_extent_node_header(in->i_block, &h);
	if (h.depth > EXTENT_DEPTH_WALKED)
		return strict ? EXT4FS_E_EXTENT_CORRUPT : 0;
	for (unsigned k = 1; k <= h.depth; k++)
		if (!(w.bufs[k] = malloc(w.g->block_size))) {
			rc = -ENOMEM;
			goto out;
		}
	rc = walk_any(&w, (const unsigned char *)in->i_block, ROOT_SIZE, h.depth, 0);
out:
	for (unsigned k = 1; k < EXTENT_PATH_MAX; k++)
		free(w.bufs[k]);
	return rc;
}

int fsck_extent_blocks(struct ext4fs_fs *fs, const struct ext4fs_inode *in, ext4fs_block_visit_fn fn, void *arg)
{
	return walk_tree(fs, in, 0, fn, arg);
}
