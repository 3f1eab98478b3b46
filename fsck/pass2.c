/*
 * pass2.c - directory structure: every directory block pass 1 found is read
 * (block 0 of each directory first, then the rest in physical order, in
 * runs) and its entries are checked the way e2fsck checks them:
 *
 *  - records: rec_len a multiple of 4, at least 12, large enough for the
 *    name, inside the block (before the checksum tail); a bad record is
 *    salvaged by e2fsck's rules (drop an 8-byte hole, shorten a record that
 *    runs past the end, let the previous record absorb it, else give up on
 *    the rest of the block);
 *  - '.' first and '..' second in block 0, and nowhere else;
 *  - the inode an entry names: a legal number, in use, not the root or
 *    the directory itself, not damaged (pass 1's inode_bad: an invalid
 *    mode, a device, fifo, socket or symlink that does not look like one,
 *    fields e2fsck wants zero; asked about here, where its path is known,
 *    as e2fsck's e2fsck_process_bad_inode() asks), not skipped by the scan
 *    (uninit groups), named by only one
 *    entry if it is a directory; the name (no '/' or NUL, not empty, not
 *    twice in the block); the file type against the inode's mode;
 *  - metadata_csum: the leaf tail and the htree index tails;
 *  - htree directories: the root (e2fsck's pass 1 checks), each index
 *    block's limit, count, hash order and child numbers, and at the end
 *    every block referenced once, at the right depth, with hashes inside
 *    the range its parent gives it.
 *
 * Each entry that survives counts one link for the inode it names
 * (links_seen, '.' and '..' included); '..' is recorded as the directory's
 * dotdot and the first other entry naming a directory as its parent, for
 * pass 3.
 *
 * A name found twice in a block is reported and the directory put on pass
 * 3A's list, even with -n (rehash.c then offers to clear or rename it, as
 * e2fsck does).  A leaf missing its checksum tail gets one when its last 12
 * bytes are free, else the directory is rebuilt in pass 3A; in a directory
 * pass 3A rebuilds anyway (-D) the missing tail is not reported.  On a
 * dir_index file system checked without -n, linear directories of three
 * blocks or more are listed for pass 3A as they are loaded (e2fsck's pass
 * 1 lists them).
 *
 * Repairs change the block in memory and write it back (with its checksum)
 * once the block is done.  A declined salvage ends the check ("aborted"),
 * as it ends e2fsck's.  An htree index found bad is dropped: the index
 * blocks are rewritten as empty leaves, the directory becomes a linear one,
 * and pass 3A indexes it anew.
 *
 * Inline directories (on an inline_data file system) are checked as e2fsck
 * checks them, as two "blocks": i_block ('.' made up, '..' its first 4
 * bytes) before every directory's block 0, the system.data value after
 * them; the area's size is judged first (a multiple of 4), and repairs are
 * written back through the library's inline-data writer.
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/dxhash.h"
#include "ext4fs/errors.h"
#include "ext4fs/file.h"
#include "ext4fs/htree.h"
#include "ext4fs/super.h"
#include "ext4fs/utf8fold.h"
#include "ext4fs/xattr.h"
#include "dirs.h"
#include "badblocks.h"
#include "context.h"
#include "passes.h"
#include "guard.h"
#include "indirect.h"
#include "problem.h"
#include "progress.h"
#include "problems.h"
#include "problems_dirs.h"
#include "rehash.h"
#include "report.h"

/* Short names for the entry layout codec.h defines. */
#define DE_NAME_LEN  EXT4FS_DIRENT_OFF_NAME_LEN
#define DE_TYPE      EXT4FS_DIRENT_OFF_FILE_TYPE
#define DE_NAME      EXT4FS_DIRENT_OFF_NAME
#define DE_MIN_LEN   12     /* the smallest record e2fsck accepts */

#define RUN_BYTES    (256 * 1024)   /* directory blocks read per request, at most */
#define HTREE_MAX_DEPTH 32

/* -- State of the pass --------------------------------------------------------- */

enum dx_type { DX_NONE, DX_LEAF, DX_NODE, DX_ROOT };

#define DXF_REFERENCED 0x01
#define DXF_DUP_REF    0x02
#define DXF_FIRST      0x04
#define DXF_LAST       0x08

/* One block of an indexed directory, as the pass learns it. */
struct dx_block {
	uint64_t pblk;
	uint32_t parent;                    /* the index block naming it */
	uint32_t previous;                  /* the block its parent names just before it, 0 for none */
	uint32_t min_hash, max_hash;        /* of its entries (leaf) or index entries (node) */
	uint32_t node_min_hash, node_max_hash;  /* the range its parent gives it */
	uint8_t type;                       /* enum dx_type; DX_NONE: not read */
	uint8_t flags;                      /* DXF_* */
};

struct dx_dir {
	uint32_t nblocks;
	int hash_version;                   /* effective (unsigned per s_flags) */
	unsigned depth;                     /* indirect_levels + 1 */
	struct dx_block *blocks;
};

/* What pass 2 keeps per directory, parallel to ctx->dirs[]. */
struct dir_state {
	uint32_t i_flags;
	uint32_t generation;
	uint64_t nblocks;                   /* i_size in blocks */
	uint64_t mapped;                    /* the last block pass 1 found mapped, plus one */
	struct dx_dir *dx;                  /* an index being checked, or NULL */
	uint8_t clear_index;                /* the index is to be dropped (answered yes) */
	uint8_t unreadable;                 /* the inode could not be read */
	uint8_t record_csum_bad;            /* the inode's own checksum is wrong (left so by -n) */
	uint8_t inline_dir;                 /* inline data on an inline_data file system: checked as e2fsck does */
	uint8_t inline_value;               /* and its system.data value was not empty (e2fsck's block #1) */
};

/* An index block to rewrite as an empty leaf once the pass is done. */
struct rewrite {
	uint32_t ino, lblk;
	uint64_t pblk;
};

struct pass2 {
	struct e4fsck *ctx;
	struct ext4fs_fs *fs;
	uint32_t bs;
	int filetype, csum, dir_index, largedir;
	int check_encoding;         /* names in casefolded directories must be valid UTF-8 (strict, -E check_encoding) */
	int inline_fs;              /* the inline_data feature: inline directories are checked */
	struct dir_state *st;
	struct rewrite *rewrites;
	size_t nrewrites, caprewrites;
	/* the path of the directory whose entries are being reported */
	uint32_t path_dir;
	char *path;
	/* names seen in the current block (offset + 1 per slot; 0 empty) */
	uint32_t *names;
	uint32_t names_mask;
	/* the list's entries in (inode, logical block) order, for a hole's goal */
	struct by_lblk *by_lblk;
	size_t nby_lblk;
};

struct by_lblk {
	uint32_t ino, lblk;
	size_t at;                  /* its index in ctx->dir_blocks */
};

/* The block being checked. */
struct block_ctx {
	struct pass2 *p;
	const struct dir_block *db;
	struct dir_info *di;
	struct dir_state *ds;
	unsigned char *buf;
	uint32_t max;               /* end of the entries: the block less its checksum tail */
	int modified;               /* buf differs from the disk */
	int dups_found;             /* a name was found twice: no more are looked for (e2fsck) */
	struct dx_block *dxb;       /* this block in an index being checked, or NULL */
	char name[4 * 255 + 1];     /* the current entry's name as printed */
};

static void forget_path(struct pass2 *p)
{
	free(p->path);
	p->path = NULL;
	p->path_dir = 0;
}

static const char *dir_path(struct pass2 *p, uint32_t dir)
{
	if (p->path && p->path_dir == dir)
		return p->path;
	forget_path(p);
	p->path = fsck_path(p->ctx, dir, 0);
	p->path_dir = dir;
	return p->path ? p->path : "???";
}

static struct dir_state *state_of(struct pass2 *p, uint32_t ino, struct dir_info **di_out)
{
	struct dir_info *di = fsck_dir_info(p->ctx, ino);

	if (di_out)
		*di_out = di;
	return di ? &p->st[di - p->ctx->dirs] : NULL;
}

/* The inode flags the library's block-kind test looks at. */
static unsigned block_kind(const struct pass2 *p, const struct dir_state *ds, uint32_t lblk,
			   const unsigned char *buf)
{
	struct ext4fs_inode fake;

	memset(&fake, 0, sizeof(fake));
	fake.i_flags = ds->i_flags;
	return ext4fs_dir_block_kind(p->fs, &fake, lblk, buf);
}

static uint32_t rec_len_of(const struct pass2 *p, const unsigned char *de)
{
	return ext4fs_dirent_rec_len(ext4fs_dirent_rec_len_raw(de), p->bs);
}

static void set_rec_len(const struct pass2 *p, unsigned char *de, uint32_t len)
{
	ext4fs_dirent_rec_len_set(de, len, p->bs);
}

/*
 * Whether the entries of directory ino carry their name's hash after the
 * name, as e2fsck judges it: casefolded (on a casefold file system) and
 * encrypted with a policy pass 1 listed.
 */
static int hashes_in_entries(const struct pass2 *p, const struct dir_state *ds, uint32_t ino)
{
	return (ds->i_flags & EXT4FS_CASEFOLD_FL) && ext4fs_has_incompat(p->fs, EXT4FS_FEATURE_INCOMPAT_CASEFOLD) &&
	       fsck_encrypted_find(&p->ctx->encrypted, ino);
}

/* The record length a name of name_len bytes needs (with_hash: and a stored hash, '.' and '..' never). */
static uint32_t needed_len(unsigned name_len, int with_hash)
{
	return (name_len + 8 + (with_hash ? 8 : 0) + 3) & ~3U;
}

/* Store the checksum block buf should carry, as a leaf or as an index block. */
static void set_block_csum(struct pass2 *p, const struct dir_state *ds, uint32_t ino, uint32_t lblk,
			   unsigned char *buf)
{
	unsigned kind = block_kind(p, ds, lblk, buf);
	uint32_t calc, have;

	if (!p->csum)
		return;
	if (kind) {
		uint32_t off = kind == EXT4FS_DIRENT_DX_ROOT ? EXT4FS_DX_ROOT_COUNT_OFFSET
							     : EXT4FS_DX_NODE_COUNT_OFFSET;
		/* The tail follows the limit's worth of entries: the limit is the disk's, checked against buf. */
		uint16_t limit, count;
		ext4fs_dx_countlimit_get(buf + off, &limit, &count);
		uint32_t tail = off + (uint32_t)limit * 8;
		if (ext4fs_dx_block_csum(p->fs, ino, ds->generation, buf, off, &calc, &have) == 0 &&
		    tail + EXT4FS_DX_TAIL_SIZE <= p->bs)
			ext4fs_dx_tail_csum_set(buf, tail, calc);
		return;
	}
	if (ext4fs_dirent_tail_offset(p->fs, buf) >= 0)
		ext4fs_dirent_tail_csum_set(buf, p->bs, ext4fs_dirent_csum(p->fs, ino, ds->generation, buf,
									   p->bs - EXT4FS_DIRENT_TAIL_SIZE));
}

static int write_block(struct pass2 *p, const struct dir_state *ds, uint32_t ino, uint32_t lblk,
		       uint64_t pblk, unsigned char *buf)
{
	struct problem_ctx pc = { .ino = ino, .blk = lblk, .blk2 = pblk };
	int err;

	set_block_csum(p, ds, ino, lblk, buf);
	err = ext4fs_block_write(p->fs, pblk, buf);
	forget_path(p);
	if (err) {
		pc.errcode = err;
		if (!fix_problem(p->ctx, PR_2_WRITE_DIRBLOCK, &pc))
			fsck_fatal(p->ctx, "aborted");
		p->ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	p->ctx->fs_changed = 1;
	return 0;
}

/* -- htree -------------------------------------------------------------------- */

static int add_rewrite(struct pass2 *p, uint32_t ino, uint32_t lblk, uint64_t pblk)
{
	if (p->nrewrites == p->caprewrites) {
		struct rewrite *grown =
			ext4fs_array_grow(p->rewrites, &p->caprewrites, p->nrewrites + 1, sizeof(*grown), 16);
		if (!grown)
			return -1;
		p->rewrites = grown;
	}
	p->rewrites[p->nrewrites++] = (struct rewrite){ ino, lblk, pblk };
	return 0;
}

/*
 * The index of ds is to be dropped: note the index blocks read so far; the
 * later ones are noted as they are read (check_block).
 */
static void clear_index(struct pass2 *p, struct dir_state *ds, uint32_t ino, uint64_t root_pblk)
{
	if (ds->clear_index)
		return;
	ds->clear_index = 1;
	if (p->ctx->read_only)
		return;
	if (p->ctx->rehash_on)
		fsck_rehash_later(p->ctx, ino);     /* pass 3A builds a new index */
	if (ds->dx) {
		for (uint32_t b = 0; b < ds->dx->nblocks; b++) {
			const struct dx_block *x = &ds->dx->blocks[b];
			if ((x->type == DX_ROOT || x->type == DX_NODE) && add_rewrite(p, ino, b, x->pblk))
				p->ctx->exit_status |= FSCK_ERROR;
		}
	} else if (root_pblk && add_rewrite(p, ino, 0, root_pblk)) {
		p->ctx->exit_status |= FSCK_ERROR;
	}
}

/*
 * Block 0 of a directory flagged as indexed: e2fsck's root checks.  Sets
 * up ds->dx when the root is sound; drops the index when a problem is
 * answered yes.  0, or -1 without memory.
 */
static int check_root(struct pass2 *p, struct dir_info *di, struct dir_state *ds, uint64_t pblk,
		      const unsigned char *buf)
{
	struct problem_ctx pc = { .ino = di->ino };
	struct ext4fs_dx_root_info ri;
	ext4fs_dx_root_info_decode(buf, &ri);
	uint32_t reserved = ri.reserved_zero;
	unsigned hash_version = ri.hash_version, info_len = ri.info_length, levels = ri.indirect_levels;
	unsigned max_levels = p->largedir ? 3 : 2;

	/*
	 * Pass 1 asked e2fsck's questions about the root (check_index() in pass1.c);
	 * the flag is still set after a no.  Where e2fsck would then read a
	 * tree with an unknown hash or without dir_index, the directory is
	 * read as a linear one.
	 */
	if (!p->dir_index)
		return 0;
	/*
	 * e2fsck's pass 2 test of the root: the header, and no deeper than the
	 * file system allows.  Declined, the tree is read as it stands, as
	 * e2fsck reads it (an unknown hash makes every name's hash 0).
	 */
	if (reserved || info_len < 8 || levels >= max_levels) {
		if (fix_problem(p->ctx, PR_2_HTREE_BAD_ROOT, &pc))
			goto clear;
	} else if (!block_kind(p, ds, 0, buf)) {
		return 0;
	}
	/*
	 * As e2fsck: the index covers the blocks the directory maps, not what
	 * i_size claims, which damage can make terabytes.
	 */
	if (ds->mapped > UINT32_MAX / 2)
		return 0;
	ds->dx = calloc(1, sizeof(*ds->dx));
	if (!ds->dx)
		return -1;
	ds->dx->nblocks = (uint32_t)ds->mapped;
	ds->dx->blocks = calloc(ds->dx->nblocks ? ds->dx->nblocks : 1, sizeof(*ds->dx->blocks));
	if (!ds->dx->blocks)
		return -1;
	ds->dx->hash_version = ext4fs_dx_hash_version_effective((int)hash_version,
								 ext4fs_sb(p->fs)->s_flags);
	ds->dx->depth = levels + 1;
	ds->dx->blocks[0].flags = DXF_REFERENCED;
	return 0;
clear:
	clear_index(p, ds, di->ino, pblk);
	return 0;
}

/* An index block (root or interior node): its count/limit and entries.  Returns 1 if the index was dropped. */
static int check_index_block(struct block_ctx *b, int failed_csum)
{
	struct pass2 *p = b->p;
	struct dx_dir *dx = b->ds->dx;
	uint32_t lblk = b->db->lblk, ino = b->di->ino;
	struct problem_ctx pc = { .ino = ino, .dir = ino, .blk = lblk, .blk2 = b->db->pblk };
	uint32_t ent, limit, count, expect, hash = 0, min_hash = UINT32_MAX, max_hash = 0;

	if (lblk == 0) {
		ent = 0x18 + b->buf[0x1D];
		if (failed_csum && fix_problem(p->ctx, PR_2_HTREE_ROOT_CSUM_INVALID, &pc))
			goto clear;
	} else {
		ent = EXT4FS_DX_NODE_COUNT_OFFSET;
		if (failed_csum && fix_problem(p->ctx, PR_2_HTREE_NODE_CSUM_INVALID, &pc))
			goto clear;
	}
	if (ent + 8 > p->bs)
		return 0;
	uint16_t limit16, count16;
	ext4fs_dx_countlimit_get(b->buf + ent, &limit16, &count16);
	limit = limit16;
	count = count16;
	expect = (p->bs - ent - (p->csum ? EXT4FS_DX_TAIL_SIZE : 0)) / 8;
	if (limit != expect) {
		pc.num = limit;
		if (fix_problem(p->ctx, PR_2_HTREE_BAD_LIMIT, &pc))
			goto clear;
	}
	if (count > expect) {
		pc.num = count;
		if (fix_problem(p->ctx, PR_2_HTREE_BAD_COUNT, &pc))
			goto clear;
		count = expect;
	}
	const unsigned char *entries = b->buf + ent;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t prev_hash = hash, child, raw_hash, unused;
		ext4fs_dx_entry_get(entries, i, &raw_hash, &child);
		child &= EXT4FS_DX_BLOCK_MASK;
		hash = i ? raw_hash & ~1U : 0;
		if (child >= dx->nblocks) {
			pc.num = child;
			pc.path3 = dir_path(p, ino);
			int yes = fix_problem(p->ctx, PR_2_HTREE_BADBLK, &pc);
			pc.path3 = NULL;
			if (yes)
				goto clear;
			continue;
		}
		if (hash < prev_hash && fix_problem(p->ctx, PR_2_HTREE_HASH_ORDER, &pc))
			goto clear;
		struct dx_block *x = &dx->blocks[child];
		if (x->flags & DXF_REFERENCED) {
			x->flags |= DXF_DUP_REF;
		} else {
			x->flags |= DXF_REFERENCED;
			x->parent = lblk;
		}
		if (hash < min_hash)
			min_hash = hash;
		if (hash > max_hash)
			max_hash = hash;
		x->previous = 0;
		if (i) {
			ext4fs_dx_entry_get(entries, i - 1, &unused, &x->previous);
			x->previous &= EXT4FS_DX_BLOCK_MASK;
		}
		x->node_min_hash = hash;
		if (i + 1 < count) {
			uint32_t next_hash;
			ext4fs_dx_entry_get(entries, i + 1, &next_hash, &unused);
			x->node_max_hash = next_hash & ~1U;
		} else {
			x->node_max_hash = 0xfffffffe;
			x->flags |= DXF_LAST;
		}
		if (i == 0)
			x->flags |= DXF_FIRST;
	}
	b->dxb->min_hash = min_hash;
	b->dxb->max_hash = max_hash;
	return 0;
clear:
	clear_index(p, b->ds, ino, 0);
	return 1;
}

/*
 * An index block's own range is that of the blocks under it: the first
 * child's lowest hash and the last child's highest (which also bounds the
 * block before it in its parent).
 */
static void take_children_hashes(struct dx_dir *dx, uint8_t type)
{
	for (uint32_t b = 0; b < dx->nblocks; b++) {
		const struct dx_block *x = &dx->blocks[b];
		struct dx_block *up = &dx->blocks[x->parent < dx->nblocks ? x->parent : 0];
		if (x->type != type)
			continue;
		if (x->flags & DXF_FIRST) {
			up->min_hash = x->min_hash;
			if (up->previous && up->previous < dx->nblocks)
				dx->blocks[up->previous].node_max_hash = up->min_hash;
		}
		if (x->flags & DXF_LAST)
			up->max_hash = x->max_hash;
	}
}

/* After every block: each index block and leaf where the index says it should be. */
static void check_index_final(struct pass2 *p, struct dir_info *di, struct dir_state *ds)
{
	struct dx_dir *dx = ds->dx;
	struct problem_ctx pc = { .ino = di->ino, .dir = di->ino };
	int bad = 0;

	take_children_hashes(dx, DX_LEAF);
	take_children_hashes(dx, DX_NODE);
	for (uint32_t b = 0; b < dx->nblocks; b++) {
		const struct dx_block *x = &dx->blocks[b];
		pc.blk = b;
		pc.blk2 = x->pblk;
		if (!(x->flags & DXF_FIRST) && x->min_hash < x->node_min_hash) {
			fix_problem(p->ctx, PR_2_HTREE_MIN_HASH, &pc);
			bad++;
		}
		if (x->type == DX_LEAF) {
			const struct dx_block *up = x;
			unsigned depth = 0;
			while (up->type != DX_ROOT && depth < HTREE_MAX_DEPTH) {
				up = &dx->blocks[up->parent < dx->nblocks ? up->parent : 0];
				depth++;
			}
			if (depth != dx->depth) {
				pc.num = dx->depth;
				fix_problem(p->ctx, PR_2_HTREE_BAD_DEPTH, &pc);
				bad++;
			}
		}
		if (b && x->max_hash > x->node_max_hash) {
			fix_problem(p->ctx, PR_2_HTREE_MAX_HASH, &pc);
			bad++;
		}
		if (!(x->flags & DXF_REFERENCED)) {
			fix_problem(p->ctx, PR_2_HTREE_NOTREF, &pc);
			bad++;
		} else if (x->flags & DXF_DUP_REF) {
			fix_problem(p->ctx, PR_2_HTREE_DUPREF, &pc);
			bad++;
		}
	}
	if (!bad)
		return;
	pc.blk = pc.blk2 = 0;
	pc.path3 = dir_path(p, di->ino);
	if (fix_problem(p->ctx, PR_2_HTREE_CLEAR, &pc))
		clear_index(p, ds, di->ino, 0);
}

/*
 * Drop the indexes answered away: rewrite their index blocks as empty
 * leaves ('.' and '..' kept in the root), then clear the inode's flag.
 */
static int drop_indexes(struct pass2 *p)
{
	unsigned char *buf = malloc(p->bs);
	int rc = 0;

	if (!buf)
		return -1;
	for (size_t i = 0; i < p->nrewrites; i++) {
		const struct rewrite *r = &p->rewrites[i];
		struct dir_state *ds = state_of(p, r->ino, NULL);
		uint32_t end = p->bs - (p->csum ? EXT4FS_DIRENT_TAIL_SIZE : 0);
		if (!ds || ext4fs_block_read(p->fs, r->pblk, buf))
			continue;
		if (r->lblk == 0) {
			/* Only a '..' hiding the rest of the block is an index to drop; else leave the entries be. */
			if (rec_len_of(p, buf) != 12 || rec_len_of(p, buf + 12) != p->bs - 12)
				continue;
			set_rec_len(p, buf + 12, end - 12);
			memset(buf + 24, 0, p->bs - 24);
		} else {
			memset(buf, 0, p->bs);
			set_rec_len(p, buf, end);
		}
		if (p->csum) {
			unsigned char *t = buf + end;
			memset(t, 0, EXT4FS_DIRENT_TAIL_SIZE);
			set_rec_len(p, t, EXT4FS_DIRENT_TAIL_SIZE);
			t[DE_TYPE] = EXT4FS_FT_DIR_CSUM;
		}
		struct dir_state linear = *ds;
		linear.i_flags &= ~(uint32_t)EXT4FS_INDEX_FL;
		if (write_block(p, &linear, r->ino, r->lblk, r->pblk, buf))
			rc = -1;
	}
	for (size_t i = 0; i < p->ctx->ndirs; i++) {
		struct ext4fs_inode in;
		uint32_t ino = p->ctx->dirs[i].ino;
		if (!p->st[i].clear_index || p->ctx->read_only)
			continue;
		if (ext4fs_inode_read(p->fs, ino, &in))
			continue;
		in.i_flags &= ~(uint32_t)EXT4FS_INDEX_FL;
		int err = ext4fs_inode_write(p->fs, ino, &in);
		if (err) {
			fsck_fatal(p->ctx, "%s while clearing the htree flag of inode %u: %s",
				   ext4fs_strerror(err), ino, ext4fs_errmsg(p->fs));
			rc = -1;
			continue;
		}
		p->ctx->fs_changed = 1;
	}
	free(buf);
	return rc;
}

/* -- Entries -------------------------------------------------------------------- */

/*
 * A bad record at *off: e2fsck's salvage rules.  prev is the previous
 * record's offset, or -1 for the first.  *off moves past what was given up:
 * when the previous record takes the rest of the block, to the block's end
 * as e2fsck's walk goes, past b->max when a checksum tail is kept or the
 * "block" is an inline area (e2fsck then asks about the length of the
 * record given up, final_rec_len()).
 */
static void salvage(struct block_ctx *b, uint32_t *off, int64_t prev)
{
	struct pass2 *p = b->p;
	unsigned char *de = b->buf + *off;
	int room = *off + 8 <= b->max;      /* else the fields cannot be read: the rest is one record */
	uint32_t rec_len = room ? rec_len_of(p, de) : b->max - *off;
	unsigned name_len = room ? de[DE_NAME_LEN] : 0;
	int64_t left = (int64_t)b->max - *off - rec_len;

	/* An 8-byte hole: close it by moving the rest of the block down. */
	if (left >= 12 && rec_len == 8) {
		memmove(de, de + 8, (size_t)left);
		memset(de + left, 0, 8);
		return;
	}
	/* A record running past the end whose name still fits: end it at the end. */
	if (left < 0 && (int64_t)rec_len + left > 8 && name_len + 8 <= (int64_t)rec_len + left &&
	    ext4fs_dirent_inode_get(de) <= p->ctx->geo->inodes_count &&
	    memchr(de + DE_NAME, '\0', name_len) == NULL) {
		set_rec_len(p, de, (uint32_t)(rec_len + left));
		return;
	}
	/* A plausible length: the previous record absorbs this one. */
	if (prev >= 0 && rec_len && rec_len % 4 == 0 && *off + rec_len <= b->max) {
		unsigned char *pde = b->buf + prev;
		set_rec_len(p, pde, rec_len_of(p, pde) + rec_len);
		*off += rec_len;
		return;
	}
	/* Give up on the rest of the block. */
	if (prev >= 0) {
		unsigned char *pde = b->buf + prev;
		set_rec_len(p, pde, rec_len_of(p, pde) + (b->max - *off));
		*off = p->bs;
	} else if (room) {
		set_rec_len(p, de, b->max - *off);
		ext4fs_dirent_inode_set(de, 0);
		de[DE_NAME_LEN] = 0;
		de[DE_TYPE] = 0;
	} else {
		*off = b->max;
	}
}

/* Fill pc for a message about the entry at de. */
static void describe(struct block_ctx *b, struct problem_ctx *pc, const unsigned char *de, uint32_t off)
{
	memset(pc, 0, sizeof(*pc));
	pc->ino = b->di->ino;
	pc->ino2 = ext4fs_dirent_inode_get(de);
	pc->blk = b->db->lblk;
	pc->blk2 = b->db->pblk;
	pc->num = off;
	fsck_safe_name((const char *)de + DE_NAME, de[DE_NAME_LEN], b->name, sizeof(b->name));
	pc->name = b->name;
}

/* Report a problem about an entry (the directory's path is found only now) or the block. */
static int say(struct block_ctx *b, uint32_t code, struct problem_ctx *pc)
{
	if (pc->name)
		pc->path = dir_path(b->p, b->di->ino);
	return fix_problem(b->p->ctx, code, pc);
}

/* The same, and the block will need writing if the answer is yes. */
static int ask(struct block_ctx *b, uint32_t code, struct problem_ctx *pc)
{
	int yes = say(b, code, pc);

	if (yes)
		b->modified = 1;
	return yes;
}

static uint8_t dir_file_type(const struct pass2 *p)
{
	return p->filetype ? EXT4FS_FT_DIR : EXT4FS_FT_UNKNOWN;
}

/* The first entry of block 0.  Returns nothing; repairs in place. */
static void check_dot(struct block_ctx *b, unsigned char *de, uint32_t off)
{
	struct problem_ctx pc;
	uint32_t ino = b->di->ino, rec_len = rec_len_of(b->p, de);
	uint32_t code = 0;
	int created = 0;

	describe(b, &pc, de, off);
	if (!ext4fs_dirent_inode_get(de))
		code = PR_2_MISSING_DOT;
	else if (de[DE_NAME_LEN] != 1 || de[DE_NAME] != '.')
		code = PR_2_1ST_NOT_DOT;
	else if (de[DE_NAME + 1] != '\0')
		code = PR_2_DOT_NULL_TERM;
	if (code && ask(b, code, &pc)) {
		ext4fs_dirent_inode_set(de, ino);
		de[DE_NAME_LEN] = 1;
		de[DE_TYPE] = dir_file_type(b->p);
		de[DE_NAME] = '.';
		de[DE_NAME + 1] = '\0';
		created = 1;
	}
	if (ext4fs_dirent_inode_get(de) != ino && ask(b, PR_2_BAD_INODE_DOT, &pc))
		ext4fs_dirent_inode_set(de, ino);
	if (rec_len > 12 && rec_len - 12 > 12 && (created || ask(b, PR_2_SPLIT_DOT, &pc))) {
		unsigned char *next = de + 12;
		b->modified = 1;
		set_rec_len(b->p, de, 12);
		memset(next, 0, 8);
		set_rec_len(b->p, next, rec_len - 12);
	}
}

/* The second entry of block 0: records dotdot when it is sound. */
static void check_dotdot(struct block_ctx *b, unsigned char *de, uint32_t off)
{
	struct problem_ctx pc;
	uint32_t code = 0;

	describe(b, &pc, de, off);
	if (!ext4fs_dirent_inode_get(de))
		code = PR_2_MISSING_DOT_DOT;
	else if (de[DE_NAME_LEN] != 2 || de[DE_NAME] != '.' || de[DE_NAME + 1] != '.')
		code = PR_2_2ND_NOT_DOT_DOT;
	else if (de[DE_NAME + 2] != '\0')
		code = PR_2_DOT_DOT_NULL_TERM;
	if (code) {
		/* The parent is not known yet: the root for now, pass 3 puts the right one. */
		if (ask(b, code, &pc)) {
			ext4fs_dirent_inode_set(de, EXT4FS_ROOT_INO);
			de[DE_NAME_LEN] = 2;
			de[DE_TYPE] = dir_file_type(b->p);
			de[DE_NAME] = '.';
			de[DE_NAME + 1] = '.';
			de[DE_NAME + 2] = '\0';
		}
		return;
	}
	b->di->dotdot = ext4fs_dirent_inode_get(de);
}

/* Whether ino lies where pass 1's scan did not look (uninit group, unused table tail). */
static uint32_t scan_skipped(struct pass2 *p, uint32_t ino, uint32_t *group)
{
	const struct ext4fs_geom *g = p->ctx->geo;
	uint32_t grp = (ino - 1) / g->inodes_per_group;
	const struct ext4fs_group_desc *gd;

	/* As e2fsck: the descriptor's word is taken whether or not its checksum verifies (as the scan took it). */
	if (!(g->has_gdt_csum || g->has_metadata_csum) || grp >= g->group_count)
		return 0;
	gd = ext4fs_group(p->fs, grp);
	*group = grp;
	if (gd->flags & EXT4FS_BG_INODE_UNINIT)
		return PR_2_INOREF_BG_INO_UNINIT;
	if (gd->itable_unused <= g->inodes_per_group &&
	    ino >= grp * g->inodes_per_group + 1 + g->inodes_per_group - gd->itable_unused)
		return PR_2_INOREF_IN_UNUSED;
	return 0;
}

/*
 * A yes to PR_2_INOREF_BG_INO_UNINIT or PR_2_INOREF_IN_UNUSED: the group's
 * summary hid inodes in use from pass 1.  As e2fsck, drop INODE_UNINIT
 * (the first) or the never-used tail (the second), and start the check
 * again after the directory blocks, so that pass 1 scans the inodes.  Each
 * yes settles a group for good, so the restarts end.  0, or -1 (reported).
 */
static int open_group_to_scan(struct pass2 *p, uint32_t group, uint32_t code)
{
	struct ext4fs_group_desc gd = *ext4fs_group(p->fs, group);
	int err;

	if (code == PR_2_INOREF_BG_INO_UNINIT)
		gd.flags &= (uint16_t)~EXT4FS_BG_INODE_UNINIT;
	else
		gd.itable_unused = 0;
	err = ext4fs_group_desc_set(p->fs, group, &gd);
	if (err) {
		fsck_fatal(p->ctx, "%s while writing group %u's descriptor: %s", ext4fs_strerror(err), group,
			   ext4fs_errmsg(p->fs));
		return -1;
	}
	p->ctx->fs_changed = 1;
	p->ctx->restart_unscanned = 1;
	return 0;
}

static int valid_mode_type(uint16_t mode)
{
	switch (mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFREG: case EXT4FS_S_IFDIR: case EXT4FS_S_IFLNK: case EXT4FS_S_IFCHR:
	case EXT4FS_S_IFBLK: case EXT4FS_S_IFIFO: case EXT4FS_S_IFSOCK:
		return 1;
	}
	return 0;
}

/*
 * What is wrong with the kind of inode ino is, by e2fsck's rules (the mode,
 * then the device, fifo, socket or symlink rules), as a problem code; 0
 * when nothing is.
 */
static uint32_t bad_kind(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in)
{
	if (!valid_mode_type(in->i_mode))
		return PR_2_BAD_MODE;
	switch (in->i_mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFCHR: return ext4fs_inode_special_ok(in) ? 0 : PR_2_BAD_CHAR_DEV;
	case EXT4FS_S_IFBLK: return ext4fs_inode_special_ok(in) ? 0 : PR_2_BAD_BLOCK_DEV;
	case EXT4FS_S_IFIFO: return ext4fs_inode_special_ok(in) ? 0 : PR_2_BAD_FIFO;
	case EXT4FS_S_IFSOCK: return ext4fs_inode_special_ok(in) ? 0 : PR_2_BAD_SOCKET;
	case EXT4FS_S_IFLNK: return ext4fs_symlink_ok(fs, ino, in) ? 0 : PR_2_INVALID_SYMLINK;
	}
	return 0;
}

/*
 * A symlink whose i_block e2fsck does not read as a map (ext4fs_symlink_has_map())
 * but the library's release would: its i_block is zeroed first, so that
 * nothing is freed for it.  0, or -1 (reported).
 */
static int forget_map(struct e4fsck *ctx, uint32_t ino)
{
	struct problem_ctx pc = { .ino = ino };
	struct ext4fs_inode in;
	int err = ext4fs_inode_read(ctx->fs, ino, &in);

	if (!err) {
		memset(in.i_block, 0, sizeof(in.i_block));
		in.i_flags &= ~(uint32_t)EXT4FS_EXTENTS_FL;
		err = ext4fs_inode_write(ctx->fs, ino, &in);
	}
	if (err) {
		pc.errcode = err;
		fix_problem(ctx, PR_2_DEALLOC_INODE, &pc);
		return -1;
	}
	return 0;
}

/* One of the inode's fields that should be zero, asked about as e2fsck asks ("i_faddr for inode ..."). */
struct zero_field {
	uint32_t code;
	uint64_t value;
	int counts;                 /* a no leaves the inode damaged (e2fsck's not_fixed; i_blocks_hi does not count) */
};

/* Ask about one field (the inode changes, not the block); 1 when it is to be zeroed.  *unfixed counts the ones left. */
static int ask_zero(struct e4fsck *ctx, struct problem_ctx *pc, const struct zero_field *f, int *unfixed)
{
	pc->num = f->value;
	if (fix_problem(ctx, f->code, pc))
		return 1;
	if (f->counts)
		(*unfixed)++;
	return 0;
}

/*
 * The fields e2fsck wants zero, in its order: i_faddr, the Hurd's i_frag
 * and i_fsize, i_blocks_hi without huge_file, i_file_acl_hi without 64bit,
 * an attribute block outside the file system, i_size_high of a directory
 * without largedir.  Each yes zeroes the field in *in; returns 1 when one did.
 */
static int zero_fields(struct e4fsck *ctx, struct problem_ctx *pc, struct ext4fs_inode *in, int *unfixed)
{
	uint32_t os = ext4fs_sb(ctx->fs)->s_creator_os;
	int changed = 0;

	if (in->i_faddr) {
		struct zero_field f = { PR_2_FADDR_ZERO, in->i_faddr, 1 };
		if (ask_zero(ctx, pc, &f, unfixed)) {
			in->i_faddr = 0;
			changed = 1;
		}
	}
	if (os == EXT4FS_OS_HURD) {
		/* The Hurd keeps i_frag and i_fsize where Linux keeps i_blocks_hi. */
		struct zero_field frag = { PR_2_FRAG_ZERO, in->i_blocks_high & 0xff, 1 };
		struct zero_field fsize = { PR_2_FSIZE_ZERO, in->i_blocks_high >> 8, 1 };
		if (frag.value && ask_zero(ctx, pc, &frag, unfixed)) {
			in->i_blocks_high &= 0xff00;
			changed = 1;
		}
		if (fsize.value && ask_zero(ctx, pc, &fsize, unfixed)) {
			in->i_blocks_high &= 0x00ff;
			changed = 1;
		}
	}
	if (os == EXT4FS_OS_LINUX && in->i_blocks_high &&
	    !ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE)) {
		struct zero_field f = { PR_2_BLOCKS_HI_ZERO, in->i_blocks_high, 0 };
		if (ask_zero(ctx, pc, &f, unfixed)) {
			in->i_blocks_high = 0;
			changed = 1;
		}
	}
	if (os == EXT4FS_OS_LINUX && in->i_file_acl_high && !ctx->geo->is_64bit) {
		struct zero_field f = { PR_2_FILE_ACL_HI_ZERO, in->i_file_acl_high, 1 };
		if (ask_zero(ctx, pc, &f, unfixed)) {
			in->i_file_acl_high = 0;
			changed = 1;
		}
	}
	uint64_t acl = ext4fs_inode_file_acl(ctx->fs, in);
	if (acl && !ext4fs_block_ptr_valid(ctx->fs, acl)) {
		struct zero_field f = { PR_2_FILE_ACL_BAD, acl, 1 };
		if (ask_zero(ctx, pc, &f, unfixed)) {
			in->i_file_acl_lo = 0;
			in->i_file_acl_high = ctx->geo->is_64bit ? 0 : in->i_file_acl_high;
			changed = 1;
		}
	}
	if (in->i_size_high && EXT4FS_ISDIR(in->i_mode) && !ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR)) {
		struct zero_field f = { PR_2_DIR_ACL_ZERO, in->i_size_high, 1 };
		if (ask_zero(ctx, pc, &f, unfixed)) {
			in->i_size_high = 0;
			changed = 1;
		}
	}
	return changed;
}

int fsck_process_bad_inode(struct e4fsck *ctx, uint32_t dir, uint32_t ino)
{
	struct problem_ctx pc = { 0 };
	struct ext4fs_inode in;
	char mode[16];
	int changed = 0, unfixed = 0;
	uint32_t code;

	if (ext4fs_inode_read(ctx->fs, ino, &in))
		return 0;
	pc.ino = ino;
	pc.dir = dir;
	/* Pass 4 names no directory: e2fsck's path is then "...". */
	pc.path = dir ? fsck_path(ctx, dir, ino) : strdup("...");
	uint64_t acl = ext4fs_inode_file_acl(ctx->fs, &in);
	if (acl && !ext4fs_has_compat(ctx->fs, EXT4FS_FEATURE_COMPAT_EXT_ATTR)) {
		struct zero_field f = { PR_2_FILE_ACL_ZERO, acl, 1 };
		if (ask_zero(ctx, &pc, &f, &unfixed)) {
			in.i_file_acl_lo = 0;
			in.i_file_acl_high = ctx->geo->is_64bit ? 0 : in.i_file_acl_high;
			changed = 1;
		}
	}
	/* Preen mode stopped at the question: nothing more is asked. */
	if (ctx->aborted) {
		free((char *)pc.path);
		return 0;
	}
	code = bad_kind(ctx->fs, ino, &in);
	if (code) {
		snprintf(mode, sizeof(mode), "0%o", in.i_mode);
		pc.str = mode;
		pc.num = 0;
		if (fix_problem(ctx, code, &pc)) {
			free((char *)pc.path);
			/* As e2fsck: the inode is deallocated as it is on the disk, its map only if e2fsck would walk it. */
			if (code == PR_2_INVALID_SYMLINK && !ext4fs_symlink_has_map(ctx->fs, &in) && forget_map(ctx, ino))
				return 0;
			fsck_release_inode(ctx, ino);
			return 1;
		}
		unfixed++;
		pc.str = NULL;
	}
	/* Preen mode stopped at the question: nothing more is asked. */
	if (ctx->aborted) {
		free((char *)pc.path);
		return 0;
	}
	changed |= zero_fields(ctx, &pc, &in, &unfixed);
	free((char *)pc.path);
	if (changed) {
		if (ext4fs_inode_write(ctx->fs, ino, &in) == 0)
			ctx->fs_changed = 1;
	}
	if (!unfixed)
		bitmap_paged_clear_range(&ctx->inode_bad, ino, 1);
	return 0;
}

/* An entry naming an inode pass 1 found damaged: returns 1 when the inode, and so the entry, was cleared. */
static int check_bad_inode(struct block_ctx *b, unsigned char *de, uint32_t ino)
{
	if (!fsck_process_bad_inode(b->p->ctx, b->di->ino, ino))
		return 0;
	forget_path(b->p);
	ext4fs_dirent_inode_set(de, 0);
	b->modified = 1;
	return 1;
}

/* The file type an entry naming ino should carry. */
static uint8_t file_type_of(struct pass2 *p, uint32_t ino)
{
	struct ext4fs_inode in;

	if (bitmap_paged_test(&p->ctx->inode_dir, ino))
		return EXT4FS_FT_DIR;
	if (bitmap_paged_test(&p->ctx->inode_reg, ino))
		return EXT4FS_FT_REG_FILE;
	if (bitmap_paged_test(&p->ctx->inode_bad, ino) || ext4fs_inode_read(p->fs, ino, &in))
		return EXT4FS_FT_UNKNOWN;
	return ext4fs_file_type_of_mode(in.i_mode);
}

static void check_filetype(struct block_ctx *b, unsigned char *de, struct problem_ctx *pc)
{
	struct pass2 *p = b->p;
	uint8_t have = de[DE_TYPE], want;

	if (!p->filetype) {
		if (have && ask(b, PR_2_CLEAR_FILETYPE, pc))
			de[DE_TYPE] = 0;
		return;
	}
	want = file_type_of(p, ext4fs_dirent_inode_get(de));
	if (have == want)
		return;
	pc->num = want;
	pc->num2 = have;
	if (have) {
		if (ask(b, PR_2_BAD_FILETYPE, pc))
			de[DE_TYPE] = want;
	} else if (!p->ctx->read_only) {
		/* Not a question: e2fsck sets it and says so, and says nothing with -n. */
		say(b, PR_2_SET_FILETYPE, pc);
		de[DE_TYPE] = want;
		b->modified = 1;
	}
}

static uint32_t name_hash(const unsigned char *name, unsigned len)
{
	uint32_t h = 2166136261U;

	for (unsigned i = 0; i < len; i++)
		h = (h ^ name[i]) * 16777619U;
	return h;
}

/*
 * Whether names in the block's directory are told apart by their
 * casefolded form: e2fsck does so where it checks their encoding.
 */
static int folds_names(const struct block_ctx *b)
{
	return b->p->check_encoding && (b->ds->i_flags & EXT4FS_CASEFOLD_FL) &&
	       !(b->ds->i_flags & EXT4FS_ENCRYPT_FL);
}

/*
 * Remember the name at off; 1 when the block named it already.  In a
 * casefolded directory checked for its encoding, names that fold alike are
 * the same name; one that is not valid UTF-8 is like no other (e2fsck's
 * comparison fails on it).
 */
static int seen_name(struct block_ctx *b, uint32_t off)
{
	struct pass2 *p = b->p;
	const unsigned char *de = b->buf + off;
	unsigned len = de[DE_NAME_LEN];
	uint8_t folded[EXT4FS_UTF8_FOLD_MAX];
	int fold = folds_names(b), flen = -1;

	if (fold)
		flen = ext4fs_utf8_casefold(de + DE_NAME, len, folded, sizeof(folded));
	uint32_t slot = (flen >= 0 ? name_hash(folded, (unsigned)flen) : name_hash(de + DE_NAME, len)) &
			p->names_mask;

	for (uint32_t probes = 0; probes <= p->names_mask; probes++) {
		uint32_t have = p->names[slot];
		if (!have) {
			p->names[slot] = off + 1;
			return 0;
		}
		const unsigned char *o = b->buf + have - 1;
		if (ext4fs_dirent_inode_get(o)) {
			if (fold ? flen >= 0 && ext4fs_utf8_casefold_cmp(o + DE_NAME, o[DE_NAME_LEN], de + DE_NAME, len) == 0
				 : o[DE_NAME_LEN] == len && !memcmp(o + DE_NAME, de + DE_NAME, len))
				return 1;
		}
		slot = (slot + 1) & p->names_mask;
	}
	return 0;
}

/*
 * An entry of an encrypted directory, by e2fsck's rules: a name shorter
 * than one cipher block, then an inode that should share the directory's
 * policy and does not.  1 when a yes clears the entry.
 */
static int check_encrypted_entry(struct block_ctx *b, const unsigned char *de, uint32_t ino, struct problem_ctx *pc)
{
	struct e4fsck *ctx = b->p->ctx;
	struct ext4fs_inode in = { 0 };
	uint8_t type = b->p->filetype ? de[DE_TYPE] : EXT4FS_FT_UNKNOWN;
	int reg_or_dir = bitmap_paged_test(&ctx->inode_reg, ino) || bitmap_paged_test(&ctx->inode_dir, ino);

	if (de[DE_NAME_LEN] < EXT4FS_FSCRYPT_NAME_MIN && ask(b, PR_2_BAD_ENCRYPTED_NAME, pc))
		return 1;
	if (type == EXT4FS_FT_UNKNOWN && !reg_or_dir && ext4fs_inode_read(b->p->fs, ino, &in))
		memset(&in, 0, sizeof(in));
	uint32_t code = fsck_encrypted_entry_problem(&ctx->encrypted, b->di->ino, ino, type, reg_or_dir, in.i_mode);
	return code && ask(b, code, pc);
}

/*
 * A name of a casefolded directory that is not valid UTF-8: on a yes,
 * everything from the first bad sequence up to the end or a NUL byte
 * becomes '.', as e2fsck fixes it.  Returns 1 when the name was fixed
 * (e2fsck then skips the check for '/' and NUL).
 */
static int check_encoding(struct block_ctx *b, unsigned char *de, struct problem_ctx *pc)
{
	unsigned name_len = de[DE_NAME_LEN];
	size_t bad;

	if (!ext4fs_utf8_validate(de + DE_NAME, name_len, &bad) || !ask(b, PR_2_BAD_ENCODED_NAME, pc))
		return 0;
	for (size_t i = bad; i < name_len && de[DE_NAME + i]; i++)
		de[DE_NAME + i] = '.';
	fsck_safe_name((const char *)de + DE_NAME, name_len, b->name, sizeof(b->name));
	return 1;
}

/*
 * One entry (not '.' or '..' in their places, which came first).  Returns
 * 1 when the entry still names an inode and counts as one of its links.
 */
static int check_entry(struct block_ctx *b, unsigned char *de, uint32_t off, int dot_state)
{
	struct pass2 *p = b->p;
	struct e4fsck *ctx = p->ctx;
	uint32_t dir = b->di->ino, ino = ext4fs_dirent_inode_get(de), code = 0, group = 0;
	unsigned name_len = de[DE_NAME_LEN];
	struct problem_ctx pc;

	describe(b, &pc, de, off);
	if (dot_state > 1 && ino == dir && ask(b, PR_2_LINK_DOT, &pc)) {
		ext4fs_dirent_inode_set(de, 0);
		return 0;
	}
	if (!ino)
		return 0;
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	/* As e2fsck: no entry may name a quota file, also one the superblock names above s_first_ino. */
	if ((ino != EXT4FS_ROOT_INO && ino < ctx->geo->first_ino) || ino > ctx->geo->inodes_count ||
	    ino == sb->s_usr_quota_inum || ino == sb->s_grp_quota_inum || ino == sb->s_prj_quota_inum)
		code = PR_2_BAD_INO;
	else if (fsck_bad_list_holds_inode(ctx, ino) && bitmap_paged_test(&ctx->inode_used, ino))
		code = PR_2_BB_INODE;
	else if (dot_state > 1 && name_len == 1 && de[DE_NAME] == '.')
		code = PR_2_DUP_DOT;
	else if (dot_state > 1 && name_len == 2 && de[DE_NAME] == '.' && de[DE_NAME + 1] == '.')
		code = PR_2_DUP_DOT_DOT;
	else if (dot_state > 1 && ino == EXT4FS_ROOT_INO)
		code = PR_2_LINK_ROOT;
	else if (dot_state > 1 && name_len == 0)
		code = PR_2_NULL_NAME;
	if (code) {
		if (ask(b, code, &pc)) {
			ext4fs_dirent_inode_set(de, 0);
			return 0;
		}
		if (code == PR_2_BAD_INO)
			return 0;
		/* As e2fsck, which asks about the entry again after its other checks of it. */
		if (code == PR_2_BB_INODE && !ctx->aborted && ask(b, code, &pc)) {
			ext4fs_dirent_inode_set(de, 0);
			return 0;
		}
	}
	if (bitmap_paged_test(&ctx->inode_bad, ino) && (check_bad_inode(b, de, ino) || ctx->aborted))
		return 0;
	code = scan_skipped(p, ino, &group);
	if (code) {
		pc.group = group;
		if (say(b, code, &pc) && open_group_to_scan(p, group, code))
			return 0;
	}
	/* As e2fsck: once a group is to be scanned again, unused inodes wait for that scan. */
	if (!ctx->restart_unscanned && !bitmap_paged_test(&ctx->inode_used, ino)) {
		if (ask(b, PR_2_UNUSED_INODE, &pc)) {
			ext4fs_dirent_inode_set(de, 0);
			return 0;
		}
	}
	/* As e2fsck: a directory is encrypted when pass 1 listed its policy, not for its flag alone. */
	int encrypted = fsck_encrypted_find(&ctx->encrypted, dir) != NULL;
	if (folds_names(b) && check_encoding(b, de, &pc))
		;
	else if (!encrypted && (memchr(de + DE_NAME, '/', name_len) || memchr(de + DE_NAME, '\0', name_len))) {
		if (ask(b, PR_2_BAD_NAME, &pc)) {
			for (unsigned i = 0; i < name_len; i++)
				if (de[DE_NAME + i] == '/' || de[DE_NAME + i] == '\0')
					de[DE_NAME + i] = '.';
			fsck_safe_name((const char *)de + DE_NAME, name_len, b->name, sizeof(b->name));
		}
	}
	check_filetype(b, de, &pc);
	if (encrypted && dot_state > 1 && check_encrypted_entry(b, de, ino, &pc)) {
		ext4fs_dirent_inode_set(de, 0);
		return 0;
	}
	if (b->dxb && b->dxb->type == DX_LEAF && !b->ds->clear_index &&
	    !(b->ds->i_flags & EXT4FS_ENCRYPT_FL)) {
		struct ext4fs_inode fake;
		uint32_t hash, minor;
		int approx = 0;
		memset(&fake, 0, sizeof(fake));
		fake.i_flags = b->ds->i_flags;
		int known = ext4fs_dx_hash_name(b->ds->dx->hash_version) != NULL;
		/* As e2fsck: a hash it does not know is 0 for every name. */
		if (!known) {
			hash = 0;
			approx = 0;
		}
		if ((!known || ext4fs_htree_name_hash(p->fs, &fake, b->ds->dx->hash_version,
						      (const char *)de + DE_NAME, name_len, &hash, &minor,
						      &approx) == 0) && !approx) {
			if (hash < b->dxb->min_hash)
				b->dxb->min_hash = hash;
			if (hash > b->dxb->max_hash)
				b->dxb->max_hash = hash;
		}
	}
	if (dot_state > 1 && bitmap_paged_test(&ctx->inode_dir, ino)) {
		struct dir_info *sub = fsck_dir_info(ctx, ino);
		if (sub && sub->parent) {
			pc.path2 = fsck_path(ctx, sub->parent, ino);
			int yes = ask(b, PR_2_LINK_DIR, &pc);
			free((char *)pc.path2);
			pc.path2 = NULL;
			if (yes) {
				ext4fs_dirent_inode_set(de, 0);
				return 0;
			}
		} else if (sub) {
			sub->parent = dir;
		}
	}
	if (dot_state > 1 && !b->dups_found && seen_name(b, off)) {
		/* As e2fsck: the directory is rebuilt in pass 3A, which sees all of its names at once. */
		b->dups_found = 1;
		say(b, PR_2_REPORT_DUP_DIRENT, &pc);
		fsck_rehash_later(ctx, dir);    /* a failure is reported; the entry still counts */
	}
	return 1;
}

/* -- Blocks --------------------------------------------------------------------- */

/*
 * A leaf's checksum tail as e2fsprogs' library finds it: by walking the
 * records from the start (raw rec_len values) to 12 bytes before the end.
 * A walk that breaks (a record shorter than 8 bytes or unaligned, or one
 * running past the block) is CORRUPT, which e2fsck's "has a tail" test
 * counts as having one; a walk that steps over the tail's place, or lands
 * on something that is not a tail, is NO_SPACE.
 */
enum tail_walk { TAIL_FOUND, TAIL_NO_SPACE, TAIL_CORRUPT };

static enum tail_walk walk_to_tail(const struct pass2 *p, const unsigned char *buf)
{
	uint32_t top = p->bs - EXT4FS_DIRENT_TAIL_SIZE, off = 0;

	while (off < top) {
		uint32_t rec_len = ext4fs_dirent_rec_len_raw(buf + off);

		if (rec_len < 8 || rec_len % 4)
			return TAIL_CORRUPT;
		off += rec_len;
	}
	if (off > p->bs)
		return TAIL_CORRUPT;
	if (off != top || ext4fs_dirent_inode_get(buf + top) || ext4fs_dirent_rec_len_raw(buf + top) != EXT4FS_DIRENT_TAIL_SIZE ||
	    buf[top + DE_NAME_LEN] != 0 || buf[top + DE_TYPE] != EXT4FS_FT_DIR_CSUM)
		return TAIL_NO_SPACE;
	return TAIL_FOUND;
}

/*
 * Give a modified leaf that has no room marked for its tail one, as e2fsck
 * does before writing it: the record that reaches over the tail's place is
 * cut short there, when it keeps the length the block's first name needs
 * (e2fsck measures that one, whichever record it cuts).  0, or -1 when it
 * cannot (the directory is then rebuilt in pass 3A).
 */
static int insert_tail(const struct pass2 *p, unsigned char *buf)
{
	uint32_t top = p->bs - EXT4FS_DIRENT_TAIL_SIZE, off = 0;
	unsigned char *tail = buf + top;

	for (;;) {
		uint32_t rec_len = ext4fs_dirent_rec_len_raw(buf + off);

		if (!rec_len || rec_len % 4 || off + rec_len > top)
			break;
		off += rec_len;
	}
	if (off != top) {
		if (needed_len(buf[DE_NAME_LEN], 0) > top - off)
			return -1;
		set_rec_len(p, buf + off, top - off);
	}
	if (ext4fs_dirent_inode_get(tail) || ext4fs_dirent_rec_len_raw(tail) != EXT4FS_DIRENT_TAIL_SIZE ||
	    tail[DE_NAME_LEN] != 0 || tail[DE_TYPE] != EXT4FS_FT_DIR_CSUM) {
		memset(tail, 0, EXT4FS_DIRENT_TAIL_SIZE);
		set_rec_len(p, tail, EXT4FS_DIRENT_TAIL_SIZE);
		tail[DE_TYPE] = EXT4FS_FT_DIR_CSUM;
	}
	return 0;
}

/*
 * After a salvage that gave the rest of the block to the previous record,
 * e2fsck's walk stands at the block's end, past where the records end: it
 * asks about the length of the record it last read (the one given up,
 * rec_len as its walk read it), and a yes stores the difference there,
 * inside the previous record, where nothing reads it again.
 */
static void final_rec_len(struct block_ctx *b, uint32_t at, uint32_t rec_len, uint32_t off)
{
	unsigned char *de = b->buf + at;
	uint32_t want = rec_len + off - b->max;
	struct problem_ctx pc;

	describe(b, &pc, de, at);
	pc.num = want;
	pc.num2 = rec_len;
	if (say(b, PR_2_FINAL_RECLEN, &pc) && at + 8 <= b->max)
		set_rec_len(b->p, de, want);
}

/*
 * The records of b's block from off on (dot_state: 0 at '.', 1 at '..', 2
 * past them), each checked and counted.  A declined salvage ends the
 * check, as it ends e2fsck's ("aborted").  0, or -1 when the check must
 * stop.
 */
static int check_records(struct block_ctx *b, uint32_t off, int dot_state)
{
	int64_t prev = -1;   /* the last record's offset */
	struct pass2 *p = b->p;
	struct e4fsck *ctx = p->ctx;
	struct problem_ctx pc = { .ino = b->db->ino, .blk = b->db->lblk, .blk2 = b->db->pblk };
	int hashed = hashes_in_entries(p, b->ds, b->db->ino);
	uint32_t guard = 0;

	memset(p->names, 0, ((size_t)p->names_mask + 1) * sizeof(*p->names));
	while (off < b->max && guard++ < 2 * p->bs) {
		unsigned char *de = b->buf + off;
		uint32_t rec_len = off + 8 <= b->max ? rec_len_of(p, de) : 0;

		int with_hash = dot_state > 1 && hashed;
		if (off + 8 > b->max || off + rec_len > b->max || rec_len < needed_len(1, with_hash) || rec_len % 4 ||
		    needed_len(de[DE_NAME_LEN], with_hash) > rec_len) {
			uint32_t at = off;
			pc.num = off;
			if (!fix_problem(ctx, PR_2_DIR_CORRUPTED, &pc)) {
				if (!ctx->aborted) {
					ctx->fatal = 1;
					ctx->exit_status |= FSCK_ERROR;
				}
				return -1;
			}
			salvage(b, &off, prev);
			b->modified = 1;
			if (off > b->max)
				final_rec_len(b, at, at + 8 <= b->max ? rec_len : needed_len(1, with_hash), off);
			continue;
		}
		if (dot_state == 0)
			check_dot(b, de, off);
		else if (dot_state == 1)
			check_dotdot(b, de, off);
		if (check_entry(b, de, off, dot_state) && fsck_count_entry(ctx, ext4fs_dirent_inode_get(de)) < 0) {
			fsck_fatal(ctx, "out of memory in pass 2");
			return -1;
		}
		prev = off;
		off += rec_len_of(p, de);
		dot_state++;
		if (ctx->aborted)
			return 0;
	}
	return 0;
}

static int check_block(struct pass2 *p, const struct dir_block *db, unsigned char *buf)
{
	struct e4fsck *ctx = p->ctx;
	struct block_ctx b = { .p = p, .db = db, .buf = buf, .max = p->bs };
	struct problem_ctx pc = { .ino = db->ino, .blk = db->lblk, .blk2 = db->pblk };
	int failed_csum = 0, leaf = 0, dot_state = db->lblk == 0 ? 0 : 2;
	unsigned kind;

	b.ds = state_of(p, db->ino, &b.di);
	if (!b.ds || b.ds->unreadable || (b.ds->i_flags & EXT4FS_INLINE_DATA_FL))
		return 0;
	if (db->lblk == 0 && (b.ds->i_flags & EXT4FS_INDEX_FL) && !b.ds->dx && !b.ds->clear_index &&
	    check_root(p, b.di, b.ds, db->pblk, buf)) {
		fsck_fatal(ctx, "out of memory in pass 2");
		return -1;
	}
	/* A block past those the index was sized for: a hole pass 2 filled where pass 1 cleared a block. */
	if (b.ds->dx && !b.ds->clear_index && db->lblk >= b.ds->dx->nblocks) {
		struct problem_ctx upc = { .dir = db->ino, .path3 = dir_path(p, db->ino) };
		if (!fix_problem(ctx, PR_2_UNEXPECTED_HTREE_BLOCK, &upc)) {
			/* e2fsck's fatal_error(): its message and closing lines, then "aborted" and them again. */
			if (!ctx->aborted) {
				fsck_fatal(ctx, "Can not continue.");
				ctx->fatal = 1;
				report_abort(ctx);
			}
			return -1;
		}
		clear_index(p, b.ds, db->ino, 0);
	}
	kind = block_kind(p, b.ds, db->lblk, buf);
	if (b.ds->clear_index && kind && db->lblk && !ctx->read_only &&
	    add_rewrite(p, db->ino, db->lblk, db->pblk)) {
		fsck_fatal(ctx, "out of memory in pass 2");
		return -1;
	}
	if (b.ds->dx && !b.ds->clear_index && db->lblk < b.ds->dx->nblocks) {
		b.dxb = &b.ds->dx->blocks[db->lblk];
		b.dxb->pblk = db->pblk;
		b.dxb->min_hash = UINT32_MAX;
		b.dxb->max_hash = 0;
		if (db->lblk == 0) {
			b.dxb->type = DX_ROOT;
			b.dxb->flags |= DXF_FIRST | DXF_LAST;
		} else {
			b.dxb->type = kind == EXT4FS_DIRENT_DX_NODE ? DX_NODE : DX_LEAF;
		}
	}

	if (p->csum && !(kind && b.ds->clear_index)) {
		uint32_t calc, have;
		if (kind) {
			uint32_t coff = kind == EXT4FS_DIRENT_DX_ROOT ? EXT4FS_DX_ROOT_COUNT_OFFSET
								      : EXT4FS_DX_NODE_COUNT_OFFSET;
			failed_csum = ext4fs_dx_block_csum(p->fs, db->ino, b.ds->generation, buf, coff, &calc,
							   &have) || calc != have || b.ds->record_csum_bad;
		} else {
			/*
			 * As e2fsck: a leaf whose walk finds no tail fails its
			 * checksum; one with no room marked for it is asked
			 * about before its records (a yes rebuilds the directory
			 * in pass 3A), and its records may use the whole block.
			 */
			enum tail_walk tw = walk_to_tail(p, buf);

			leaf = 1;
			b.max = p->bs - EXT4FS_DIRENT_TAIL_SIZE;
			failed_csum = tw != TAIL_FOUND || b.ds->record_csum_bad ||
				      ext4fs_dirent_csum(p->fs, db->ino, b.ds->generation, buf, b.max) !=
					      ext4fs_dirent_tail_csum_get(buf, p->bs);
			if (tw == TAIL_NO_SPACE) {
				b.max = p->bs;
				if (fsck_rehash_pending(ctx, db->ino)) {
					failed_csum = 0;
				} else if (say(&b, PR_2_LEAF_NODE_MISSING_CSUM, &pc)) {
					/* The rebuild that gives it its tail is a repair (e2fsck then exits 1). */
					if (fsck_rehash_later(ctx, db->ino) == 0 && !ctx->read_only)
						ctx->fs_changed = 1;
					failed_csum = 0;
				}
			}
		}
	}

	if (check_records(&b, 0, dot_state))
		return -1;
	if (ctx->aborted)
		return 0;

	if (b.dxb && (b.dxb->type == DX_ROOT || b.dxb->type == DX_NODE))
		check_index_block(&b, failed_csum);
	if (b.modified && leaf && walk_to_tail(p, buf) == TAIL_NO_SPACE && insert_tail(p, buf))
		fsck_rehash_later(ctx, db->ino);
	else if (!b.modified && leaf && failed_csum)
		ask(&b, PR_2_LEAF_NODE_ONLY_CSUM_INVALID, &pc);
	if (b.modified && !ctx->read_only)
		write_block(p, b.ds, db->ino, db->lblk, db->pblk, buf);   /* a failure is reported */
	return 0;
}

/* -- Inline directories ---------------------------------------------------------- */

/*
 * e2fsck checks an inline directory as two "blocks": #0 is i_block, where
 * '.' is made up and '..' is the first 4 bytes, its records following;
 * #1 is the value of system.data, when pass 1 found one.  The area must
 * end on a record boundary: a size that is no multiple of 4 (or too short
 * for a record in the value) is repaired first, at each block, as e2fsck
 * repairs it.
 */
#define INLINE_HEAD   EXT4FS_INLINE_IBLOCK_SIZE
#define INLINE_PARENT 4          /* '..' takes the first 4 bytes of i_block */

struct inline_dir {
	struct ext4fs_inode in;
	unsigned char *data;        /* the area, with room for 3 bytes more */
	size_t len;
};

/*
 * The area as e2fsck reads it: i_block, then the value of system.data
 * wherever it is kept (e2fsck takes one from the attribute block too, which
 * its repair then cannot write).  *data has room for 3 bytes more.  0; 1
 * when it cannot be read; -1 without memory.
 */
static int inline_area(struct pass2 *p, uint32_t ino, const struct ext4fs_inode *in, unsigned char **data,
		       size_t *len)
{
	void *value = NULL;
	size_t vlen = 0;
	int err = ext4fs_xattr_get(p->fs, ino, in, "system.data", &value, &vlen);

	*data = NULL;
	if (err == EXT4FS_E_NO_MEMORY)
		return -1;
	if (err && err != -ENODATA)
		return 1;
	if (err)
		vlen = 0;
	*len = INLINE_HEAD + vlen;
	*data = malloc(*len + 4);
	if (*data) {
		memcpy(*data, in->i_block, INLINE_HEAD);
		if (vlen)
			memcpy(*data + INLINE_HEAD, value, vlen);
	}
	free(value);
	return *data ? 0 : -1;
}

/* 0, 1 when the area cannot be read (the directory is passed over), -1 without memory. */
static int read_inline(struct pass2 *p, uint32_t ino, struct inline_dir *d)
{
	d->data = NULL;
	if (ext4fs_inode_read(p->fs, ino, &d->in) || !(d->in.i_flags & EXT4FS_INLINE_DATA_FL))
		return 1;
	return inline_area(p, ino, &d->in, &d->data, &d->len);
}

static int inline_size_bad(size_t len)
{
	return (len & 3) || (len > INLINE_HEAD && len < INLINE_HEAD + DE_MIN_LEN);
}

/*
 * e2fsck's repair of the size: a value too short for a record is dropped,
 * else the area grows to the next multiple of 4 (zeros) or, without room,
 * shrinks to the one before; i_size follows.  When that cannot be written
 * either, a yes truncates the directory to nothing.  0; 1 when the
 * directory lost its inline data; 2 when the truncation was declined (as
 * e2fsck, this "block" is then passed over); -1 when the check must stop.
 */
static int fix_inline_size(struct pass2 *p, uint32_t ino, struct inline_dir *d)
{
	struct e4fsck *ctx = p->ctx;
	struct problem_ctx pc = { .ino = ino, .num = d->len };
	size_t want;
	int err;

	if (d->len > INLINE_HEAD && d->len < INLINE_HEAD + DE_MIN_LEN)
		d->len = want = INLINE_HEAD;
	else
		want = d->len + (4 - (d->len & 3));
	memset(d->data + d->len, 0, want - d->len);
	err = ext4fs_inline_data_write(p->fs, ino, &d->in, d->data, want);
	if (err == EXT4FS_E_XATTR_NO_SPACE) {
		want -= 4;
		err = ext4fs_inline_data_write(p->fs, ino, &d->in, d->data, want);
	}
	if (err) {
		/* e2fsck's writer has rewritten i_block before it fails: it calls the file system modified. */
		ctx->fs_changed = 1;
		if (!fix_problem(ctx, PR_2_FIX_INLINE_DIR_FAILED, &pc))
			return 2;
		/* Nothing of the area is kept: i_block must not be read as a map (e2fsck reads it as block 0). */
		want = 0;
		d->in.i_flags &= ~(uint32_t)EXT4FS_INLINE_DATA_FL;
		memset(d->in.i_block, 0, sizeof(d->in.i_block));
	}
	ext4fs_inode_set_size(&d->in, want);
	err = ext4fs_inode_write(p->fs, ino, &d->in);
	if (err) {
		fsck_fatal(ctx, "%s while fixing the size of inline directory inode %u: %s", ext4fs_strerror(err), ino,
			   ext4fs_errmsg(p->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	d->len = want;
	return want == 0;
}

/* '.' and '..' of an inline directory, made up as e2fsck makes them: its fixes to them are not kept. */
static int check_inline_dots(struct block_ctx *b, const unsigned char *area)
{
	unsigned char de[DE_MIN_LEN];

	for (int dot_state = 0; dot_state < 2; dot_state++) {
		memset(de, 0, sizeof(de));
		ext4fs_dirent_inode_set(de, dot_state ? ext4fs_dirent_inode_get(area) : b->di->ino);
		set_rec_len(b->p, de, DE_MIN_LEN);
		de[DE_NAME_LEN] = (unsigned char)(dot_state + 1);
		de[DE_TYPE] = dir_file_type(b->p);
		memset(de + DE_NAME, '.', (size_t)dot_state + 1);
		if (dot_state == 0)
			check_dot(b, de, 0);
		else
			check_dotdot(b, de, 0);
		if (check_entry(b, de, 0, dot_state) && fsck_count_entry(b->p->ctx, ext4fs_dirent_inode_get(de)) < 0) {
			fsck_fatal(b->p->ctx, "out of memory in pass 2");
			return -1;
		}
		if (b->p->ctx->aborted)
			return 0;
	}
	return 0;
}

#define NO_SLOT SIZE_MAX     /* fill_hole()'s slot: the block is added to the list */
static int offer_hole(struct pass2 *p, struct alloc_guard *guard, uint32_t ino, const struct dir_block *prev,
		      uint64_t lblk, size_t slot);

/*
 * A directory left without a block: e2fsck's next run finds block 0
 * missing and offers a new one ('.' and '..'), so e4fsck offers it at once
 * (e2fsck itself reads what was inline as block 0 of the file system).
 * It is checked with the blocks after the first ones.  0 or -1.
 */
static int give_block0(struct pass2 *p, uint32_t ino)
{
	struct alloc_guard guard = { 0 };
	int rc = offer_hole(p, &guard, ino, NULL, 0, NO_SLOT);

	if (guard.runs && fsck_guard_off(p->ctx, &guard))
		rc = -1;
	free(guard.runs);
	return rc;
}

/* Block #which of inline directory di.  0, or -1 when the check must stop. */
static int check_inline_block(struct pass2 *p, struct dir_info *di, struct dir_state *ds, uint32_t which)
{
	struct e4fsck *ctx = p->ctx;
	struct dir_block db = { .ino = di->ino, .lblk = which };
	struct block_ctx b = { .p = p, .db = &db, .di = di, .ds = ds };
	struct inline_dir d;
	int truncated = 0, rc = read_inline(p, di->ino, &d);

	if (rc)
		goto out;
	if (inline_size_bad(d.len)) {
		struct problem_ctx pc = { .ino = di->ino, .num = d.len };
		if (fix_problem(ctx, PR_2_BAD_INLINE_DIR_SIZE, &pc) && (rc = fix_inline_size(p, di->ino, &d))) {
			truncated = rc == 1;
			rc = rc < 0 ? -1 : 0;
			goto out;
		}
	}
	if (ctx->aborted)
		goto out;
	if (which == 0) {
		b.buf = d.data;
		b.max = INLINE_HEAD;
		rc = check_inline_dots(&b, d.data);
		if (!rc && !ctx->aborted)
			rc = check_records(&b, INLINE_PARENT, 2);
	} else if (d.len > INLINE_HEAD) {
		b.buf = d.data + INLINE_HEAD;
		b.max = (uint32_t)(d.len - INLINE_HEAD);
		rc = check_records(&b, 0, 2);
	}
	if (!rc && b.modified && !ctx->read_only && !ctx->aborted) {
		int err = ext4fs_inline_data_write(p->fs, di->ino, &d.in, d.data, d.len);
		struct problem_ctx pc = { .ino = di->ino, .blk = which, .errcode = err };
		forget_path(p);
		if (!err)
			ctx->fs_changed = 1;
		else if (!fix_problem(ctx, PR_2_WRITE_DIRBLOCK, &pc))
			fsck_fatal(ctx, "aborted");
		else
			ctx->exit_status |= FSCK_ERROR;
	}
out:
	free(d.data);
	if (truncated) {
		/* Nothing is left of it: it has no block 0, which is offered as any hole is. */
		ds->i_flags &= ~(uint32_t)EXT4FS_INLINE_DATA_FL;
		return give_block0(p, di->ino);
	}
	return rc == 1 ? 0 : rc;    /* unreadable: passed over, as e2fsck passes it over */
}

/* Block #which of every inline directory (#1: of those pass 1 found a system.data value in), in inode order. */
static int check_inline_dirs(struct pass2 *p, uint32_t which)
{
	for (size_t d = 0; d < p->ctx->ndirs && !p->ctx->aborted; d++) {
		struct dir_state *ds = &p->st[d];
		if (!ds->inline_dir || (which == 1 && !ds->inline_value) || ds->unreadable ||
		    !(ds->i_flags & EXT4FS_INLINE_DATA_FL))
			continue;
		if (check_inline_block(p, &p->ctx->dirs[d], ds, which))
			return -1;
	}
	return 0;
}

/* Entries of an inline directory on a file system without inline_data: counted, not checked. */
struct inline_count {
	struct e4fsck *ctx;
	struct dir_info *di;
};

static int count_inline_entry(const struct ext4fs_dirent *d, void *arg)
{
	struct inline_count *ic = arg;
	struct e4fsck *ctx = ic->ctx;
	int is_dotdot = d->name_len == 2 && d->name[0] == '.' && d->name[1] == '.';

	if ((d->inode != EXT4FS_ROOT_INO && d->inode < ctx->geo->first_ino) ||
	    d->inode > ctx->geo->inodes_count)
		return 0;
	if ((d->flags & EXT4FS_DIRENT_SYNTHETIC) && is_dotdot)
		ic->di->dotdot = d->inode;
	if (!(d->flags & EXT4FS_DIRENT_SYNTHETIC) && bitmap_paged_test(&ctx->inode_dir, d->inode)) {
		struct dir_info *sub = fsck_dir_info(ctx, d->inode);
		if (sub && !sub->parent)
			sub->parent = ic->di->ino;
	}
	return fsck_count_entry(ctx, d->inode) < 0 ? -ENOMEM : 0;
}

static int cmp_ino_lblk(const void *a, const void *b)
{
	const struct dir_block *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->lblk < y->lblk ? -1 : x->lblk > y->lblk;
}

/* e2fsck's order: every directory's block 0 first (htree roots before their leaves), then by block. */
static int cmp_read_order(const void *a, const void *b)
{
	const struct dir_block *x = a, *y = b;

	if ((x->lblk == 0) != (y->lblk == 0))
		return x->lblk == 0 ? -1 : 1;
	if (x->pblk != y->pblk)
		return x->pblk < y->pblk ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->lblk < y->lblk ? -1 : x->lblk > y->lblk;
}

/*
 * Where e2fsck looks first for a block to fill a hole: an indirect-mapped
 * directory's first block, else (extents) where the block before the hole
 * would be followed, else the start of the inode's (flex) group.
 */
static uint64_t hole_goal(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, const struct dir_block *prev,
			  uint64_t lblk)
{
	uint32_t log_flex = ext4fs_sb(ctx->fs)->s_log_groups_per_flex;
	uint32_t group = ext4fs_inode_group(ctx->fs, ino);

	if (!(in->i_flags & EXT4FS_EXTENTS_FL) && ext4fs_blockmap_slot_get(in->i_block, 0))
		return ext4fs_blockmap_slot_get(in->i_block, 0);
	if ((in->i_flags & EXT4FS_EXTENTS_FL) && prev && prev->pblk)
		return prev->pblk + (lblk - prev->lblk);
	if (log_flex < 32)
		group &= ~((1U << log_flex) - 1);
	return ext4fs_group_first_block(ctx->fs, group);
}

/*
 * Allocate? yes: a block no inode claims, an empty directory block in it,
 * mapped at lblk; listed in entry slot of the list (a hole listed there)
 * or added to it (NO_SLOT).  Without a free block the hole stays, as in
 * e2fsck.  0 or -1.
 */
static int fill_hole(struct pass2 *p, struct alloc_guard *guard, uint32_t ino, const struct dir_block *prev,
		     uint64_t lblk, size_t slot)
{
	struct e4fsck *ctx = p->ctx;
	struct ext4fs_inode in;
	uint64_t blk;
	int err = ext4fs_inode_read(p->fs, ino, &in);

	/*
	 * Mapping the new block rewrites the map: not one passes 1B-1D left on
	 * the file system's metadata (a clone declined).  The hole stays.
	 */
	if (!err && fsck_map_on_metadata(ctx, ino, &in))
		return 0;
	/* The library may need a tree or indirect block: keep it off blocks pass 1 found in use. */
	if (!err && !guard->runs && fsck_guard_on(ctx, guard))
		return -1;
	if (!err)
		err = fsck_take_file_block(ctx, ino, &in, lblk, hole_goal(ctx, ino, &in, prev, lblk), &blk);
	if (err == EXT4FS_E_NO_SPACE) {
		struct problem_ctx pc = { .ino = ino, .str = "ext2fs_new_block",
					  .errmsg = "Could not allocate block in ext2 filesystem" };
		fix_problem(ctx, PR_2_ALLOC_DIRBOCK, &pc);
		return 0;
	}
	if (!err)
		err = ext4fs_dir_fill_hole(p->fs, ino, &in, lblk, blk);
	/* The new block is checked with the others, as e2fsck checks it ("." and ".." of a block 0 count). */
	if (!err && fsck_claim_blocks(ctx, ino))
		err = EXT4FS_E_NO_MEMORY;
	if (!err && slot != NO_SLOT)
		ctx->dir_blocks[slot].pblk = blk;
	else if (!err && fsck_add_dir_block(ctx, ino, (uint32_t)lblk, blk))
		err = EXT4FS_E_NO_MEMORY;
	if (err) {
		fsck_fatal(ctx, "%s while allocating block %llu of directory inode %u: %s", ext4fs_strerror(err),
			   (unsigned long long)lblk, ino, ext4fs_errmsg(p->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/* Ask about hole lblk of directory ino, and fill it on a yes (see fill_hole()).  0 or -1. */
static int offer_hole(struct pass2 *p, struct alloc_guard *guard, uint32_t ino, const struct dir_block *prev,
		      uint64_t lblk, size_t slot)
{
	struct problem_ctx pc = { .ino = ino, .blk = lblk };

	if (!fix_problem(p->ctx, PR_2_DIRECTORY_HOLE, &pc))
		return 0;
	return fill_hole(p, guard, ino, prev, lblk, slot);
}

/*
 * As e2fsck's list of a directory's blocks: each gap below a listed block
 * (mapped, or cleared by pass 1 and listed at block 0) is listed too, at
 * block 0, and offered when its turn comes in the read order, whatever
 * i_size says (check_hole()).  The list is in (inode, logical block) order
 * here; the holes go after it.  A directory gets at most MAX_HOLES (pass
 * 1 bounds a directory's size, but largedir allows 2^32 blocks): e2fsck
 * lists them all, each offered and, once the free blocks are gone, failing.
 * 0 or -1 without memory (reported).
 */
#define MAX_HOLES (1u << 22)
static int list_holes(struct pass2 *p)
{
	struct e4fsck *ctx = p->ctx;
	size_t i = 0, n = ctx->ndir_blocks;

	for (size_t d = 0; d < ctx->ndirs; d++) {
		uint32_t ino = ctx->dirs[d].ino;
		uint64_t want = 0, added = 0;
		int skip = p->st[d].unreadable || (p->st[d].i_flags & EXT4FS_INLINE_DATA_FL);

		while (i < n && ctx->dir_blocks[i].ino < ino)
			i++;
		for (; i < n && ctx->dir_blocks[i].ino == ino; i++) {
			uint32_t lblk = ctx->dir_blocks[i].lblk;
			for (; !skip && want < lblk && added < MAX_HOLES; want++, added++)
				if (fsck_add_dir_block(ctx, ino, (uint32_t)want, 0)) {
					fsck_fatal(ctx, "out of memory in pass 2");
					return -1;
				}
			want = (uint64_t)lblk + 1;
		}
	}
	return 0;
}

static int cmp_by_lblk(const void *a, const void *b)
{
	const struct by_lblk *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->lblk < y->lblk ? -1 : x->lblk > y->lblk;
}

/* The list in (inode, logical block) order, made once it is in the read order.  0 or -1 (reported). */
static int index_by_lblk(struct pass2 *p)
{
	struct e4fsck *ctx = p->ctx;

	p->nby_lblk = ctx->ndir_blocks;
	p->by_lblk = malloc((p->nby_lblk ? p->nby_lblk : 1) * sizeof(*p->by_lblk));
	if (!p->by_lblk) {
		fsck_fatal(ctx, "out of memory in pass 2");
		return -1;
	}
	for (size_t i = 0; i < p->nby_lblk; i++)
		p->by_lblk[i] = (struct by_lblk){ ctx->dir_blocks[i].ino, ctx->dir_blocks[i].lblk, i };
	qsort(p->by_lblk, p->nby_lblk, sizeof(*p->by_lblk), cmp_by_lblk);
	return 0;
}

/* The mapped block of ino listed last before lblk (where e2fsck's goal for a hole comes from), or NULL. */
static const struct dir_block *mapped_before(const struct pass2 *p, uint32_t ino, uint32_t lblk)
{
	struct by_lblk key = { ino, lblk, 0 };
	size_t lo = 0, hi = p->nby_lblk;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_by_lblk(&p->by_lblk[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0 && p->by_lblk[lo].ino == ino) {
		const struct dir_block *db = &p->ctx->dir_blocks[p->by_lblk[lo].at];
		if (db->pblk)
			return db;
	}
	return NULL;
}

/*
 * A hole's turn (entry i of the list, at block 0): offered as e2fsck
 * offers it, and on a yes filled and checked at once.  0 or -1.
 */
static int check_hole(struct pass2 *p, size_t i, unsigned char *buf)
{
	struct e4fsck *ctx = p->ctx;
	struct dir_block db = ctx->dir_blocks[i];
	struct dir_state *ds = state_of(p, db.ino, NULL);
	struct alloc_guard guard = { 0 };
	int rc;

	if (!ds || ds->unreadable || (ds->i_flags & EXT4FS_INLINE_DATA_FL))
		return 0;
	/* The index for the goal is made at the first hole: most checks meet none. */
	if (!p->by_lblk && index_by_lblk(p))
		return -1;
	rc = offer_hole(p, &guard, db.ino, mapped_before(p, db.ino, db.lblk), db.lblk, i);
	if (guard.runs && fsck_guard_off(ctx, &guard))
		rc = -1;
	free(guard.runs);
	if (rc || !ctx->dir_blocks[i].pblk || ctx->aborted)
		return rc;
	db = ctx->dir_blocks[i];
	if (ext4fs_block_read(p->fs, db.pblk, buf)) {
		fsck_fatal(ctx, "reading block %llu of directory inode %u, just written: %s", (unsigned long long)db.pblk,
			   db.ino, ext4fs_errmsg(p->fs));
		return -1;
	}
	return check_block(p, &db, buf);
}

/* Holes declined (or without a free block) are no blocks: the list keeps its rule (context.h). */
static void drop_holes(struct e4fsck *ctx)
{
	size_t kept = 0;

	for (size_t k = 0; k < ctx->ndir_blocks; k++)
		if (ctx->dir_blocks[k].pblk)
			ctx->dir_blocks[kept++] = ctx->dir_blocks[k];
	ctx->ndir_blocks = kept;
}

/* Each directory's mapped end, from pass 1's list of its blocks (sorted by inode, then logical block). */
static void note_mapped(struct pass2 *p)
{
	struct e4fsck *ctx = p->ctx;
	size_t d = 0;

	for (size_t i = 0; i < ctx->ndir_blocks; i++) {
		const struct dir_block *db = &ctx->dir_blocks[i];
		while (d < ctx->ndirs && ctx->dirs[d].ino < db->ino)
			d++;
		/* As e2fsck's index size: a block pass 1 cleared (at block 0) is not mapped. */
		if (d < ctx->ndirs && ctx->dirs[d].ino == db->ino && db->pblk && (uint64_t)db->lblk + 1 > p->st[d].mapped)
			p->st[d].mapped = (uint64_t)db->lblk + 1;
	}
}

static int load_states(struct pass2 *p)
{
	struct e4fsck *ctx = p->ctx;
	uint32_t lost_found = 0;

	/*
	 * e2fsck does not index /lost+found behind the user's back: the
	 * directory the root names so, as the root is before pass 3's repairs.
	 */
	if (ctx->rehash_on && ext4fs_dir_lookup(p->fs, EXT4FS_ROOT_INO, "lost+found", 10, &lost_found))
		lost_found = 0;

	p->st = calloc(ctx->ndirs ? ctx->ndirs : 1, sizeof(*p->st));
	if (!p->st)
		return -1;
	for (size_t i = 0; i < ctx->ndirs; i++) {
		struct ext4fs_inode in;
		struct dir_state *ds = &p->st[i];
		int err = ext4fs_inode_read_strict(ctx->fs, ctx->dirs[i].ino, &in);
		if (err && err != EXT4FS_E_INODE_CSUM) {
			ds->unreadable = 1;
			continue;
		}
		/*
		 * e2fsck's library checksums a directory block with the inode's
		 * generation, read checksum and all: every block of a directory
		 * whose record is bad fails its checksum.
		 */
		ds->record_csum_bad = err != 0;
		ds->i_flags = in.i_flags;
		ds->generation = in.i_generation;
		ds->nblocks = (ext4fs_inode_size(&in) + p->bs - 1) / p->bs;
		/* e2fsck's pass 1 lists linear directories of three blocks or more for indexing. */
		if (ctx->rehash_on && !(in.i_flags & EXT4FS_INDEX_FL) && ctx->dirs[i].ino != lost_found &&
		    ext4fs_inode_size(&in) / p->bs >= 3 && fsck_rehash_later(ctx, ctx->dirs[i].ino))
			return -1;
		if ((in.i_flags & EXT4FS_INLINE_DATA_FL) && p->inline_fs) {
			unsigned char *data = NULL;
			size_t len = 0;
			ds->inline_dir = 1;
			if (inline_area(p, ctx->dirs[i].ino, &in, &data, &len) < 0)
				return -1;
			ds->inline_value = data && len > INLINE_HEAD;
			free(data);
		} else if (in.i_flags & EXT4FS_INLINE_DATA_FL) {
			struct inline_count ic = { ctx, &ctx->dirs[i] };
			if (ext4fs_dir_iterate(p->fs, ctx->dirs[i].ino, &in, 0, count_inline_entry, &ic) ==
			    -ENOMEM)
				return -1;
		}
	}
	return 0;
}

static void free_pass2(struct pass2 *p)
{
	if (p->st)
		for (size_t i = 0; i < p->ctx->ndirs; i++)
			if (p->st[i].dx) {
				free(p->st[i].dx->blocks);
				free(p->st[i].dx);
			}
	free(p->st);
	free(p->rewrites);
	free(p->names);
	forget_path(p);
}

/*
 * Regular files of 2 GiB or more (pass 1 counted them, the count -v
 * prints) need the large_file feature; e2fsck adds it at the end of pass 2,
 * and then asks to raise a revision 0 file system (whether or not it added
 * the feature).  0 or -1.
 */
static int check_large_file_feature(struct e4fsck *ctx)
{
	if (!ctx->stats.large_files)
		return 0;
	if (fsck_offer_feature(ctx, PR_2_FEATURE_LARGE_FILES, 1, EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE))
		return -1;
	return fsck_raise_rev_level(ctx, PR_1_FS_REV_LEVEL);
}

/* Directory blocks [from, to) of the sorted list, read in runs.  0, or -1 when the check must stop. */
static int check_blocks_range(struct pass2 *p, size_t from, size_t to, unsigned char *run, size_t run_max)
{
	struct e4fsck *ctx = p->ctx;

	for (size_t i = from; i < to && !ctx->aborted;) {
		size_t n = 1;
		if (!ctx->dir_blocks[i].pblk) {
			if (check_hole(p, i, run))
				return -1;
			i++;
			progress_advance(ctx, 1);
			continue;
		}
		while (i + n < to && n < run_max && ctx->dir_blocks[i + n].pblk == ctx->dir_blocks[i + n - 1].pblk + 1)
			n++;
		int run_failed = ext4fs_blocks_read(p->fs, ctx->dir_blocks[i].pblk, n, run) != 0;
		for (size_t k = 0; k < n; k++) {
			const struct dir_block *db = &ctx->dir_blocks[i + k];
			unsigned char *buf = run + k * p->bs;
			int err = run_failed ? ext4fs_block_read(p->fs, db->pblk, buf) : 0;
			if (err) {
				struct problem_ctx pc = { .ino = db->ino, .blk = db->lblk, .blk2 = db->pblk,
							  .errcode = err };
				if (!fix_problem(ctx, PR_2_READ_DIRBLOCK, &pc)) {
					fsck_fatal(ctx, "aborted");
					return -1;
				}
				ctx->exit_status |= FSCK_UNCORRECTED;
				continue;
			}
			if (check_block(p, db, buf))
				return -1;
		}
		i += n;
		progress_advance(ctx, n);
	}
	return 0;
}

int fsck_pass2(struct e4fsck *ctx)
{
	struct pass2 p = { .ctx = ctx, .fs = ctx->fs, .bs = ctx->geo->block_size };
	struct dir_info *root = fsck_dir_info(ctx, EXT4FS_ROOT_INO);
	unsigned char *run = NULL;
	size_t run_max = RUN_BYTES / p.bs ? RUN_BYTES / p.bs : 1;
	uint32_t slots = 16;
	int rc = -1;

	p.filetype = ext4fs_has_incompat(p.fs, EXT4FS_FEATURE_INCOMPAT_FILETYPE);
	p.csum = ctx->geo->has_metadata_csum;
	p.dir_index = ext4fs_has_compat(p.fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX);
	p.largedir = ext4fs_has_incompat(p.fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR);
	p.inline_fs = ext4fs_has_incompat(p.fs, EXT4FS_FEATURE_INCOMPAT_INLINE_DATA);
	p.check_encoding = ext4fs_has_incompat(p.fs, EXT4FS_FEATURE_INCOMPAT_CASEFOLD) &&
			   ((ext4fs_sb(p.fs)->s_encoding_flags & EXT4FS_ENC_STRICT_MODE_FL) || ctx->check_encoding);
	while (slots < 2 * (p.bs / DE_MIN_LEN))
		slots *= 2;
	p.names = malloc(slots * sizeof(*p.names));
	p.names_mask = slots - 1;
	run = malloc(run_max * p.bs);
	if (root)
		root->parent = EXT4FS_ROOT_INO;
	if (!p.names || !run || load_states(&p))
		goto nomem;

	if (ctx->ndir_blocks > 1)   /* with none the list is NULL, which qsort() may not take */
		qsort(ctx->dir_blocks, ctx->ndir_blocks, sizeof(*ctx->dir_blocks), cmp_ino_lblk);
	note_mapped(&p);
	if (list_holes(&p))
		goto out;
	if (ctx->ndir_blocks > 1)
		qsort(ctx->dir_blocks, ctx->ndir_blocks, sizeof(*ctx->dir_blocks), cmp_read_order);

	/* e2fsck's order: inline directories' first "blocks" come before every block 0, their second ones after. */
	size_t later = 0;
	while (later < ctx->ndir_blocks && ctx->dir_blocks[later].lblk == 0)
		later++;
	if (check_inline_dirs(&p, 0) || check_blocks_range(&p, 0, later, run, run_max) ||
	    check_inline_dirs(&p, 1) || check_blocks_range(&p, later, ctx->ndir_blocks, run, run_max))
		goto out;
	drop_holes(ctx);   /* before the passes that walk the list again */
	/*
	 * As e2fsck: a map block on the file system's metadata was walked but
	 * not repaired in pass 1, and passes 1B-1D have given the inode a copy
	 * of it since; the check starts again here, after the directory blocks,
	 * to repair what the copy holds.  Unlike e2fsck, not when no such block
	 * was moved (clones declined): the next run would meet them all again,
	 * and again; the check goes on without repairing under them.
	 */
	if (ctx->restart_unscanned && !ctx->aborted) {
		ctx->restart = RESTART_UNSCANNED;
		rc = 0;
		goto out;
	}
	if (ctx->restart_later && !ctx->aborted) {
		int moved = fsck_collisions_moved(ctx);
		if (moved < 0)
			goto out;
		if (moved) {
			ctx->restart = RESTART_MOVED;
			rc = 0;
			goto out;
		}
	}
	/* As e2fsck: an index pass 3A rebuilds anyway is not judged as a whole. */
	for (size_t d = 0; d < ctx->ndirs && !ctx->aborted; d++)
		if (p.st[d].dx && !p.st[d].clear_index && !fsck_rehash_pending(ctx, ctx->dirs[d].ino))
			check_index_final(&p, &ctx->dirs[d], &p.st[d]);
	if (!ctx->read_only && drop_indexes(&p))
		goto nomem;
	rc = check_large_file_feature(ctx);
	goto out;
nomem:
	fsck_fatal(ctx, "out of memory in pass 2");
out:
	drop_holes(ctx);
	free(run);
	free(p.by_lblk);
	free_pass2(&p);
	return rc;
}
