/*
 * relocate.c - giving a group's bitmaps and inode table new places.
 *
 * A descriptor can put a group's block bitmap, inode bitmap or inode table
 * where it cannot be: outside the file system (0 included), outside its
 * group without flex_bg, or on blocks that other metadata holds.  e2fsck
 * finds the first two before pass 1 (check_super_block) and offers to
 * "relocate" them, which at that point only forgets the location (the
 * field becomes 0); a 0 is noted whatever the answer, since nothing can
 * be read there.  The third is found by pass 1's claim of the metadata
 * (mark_table_blocks): a block already claimed is not claimed again but
 * reported, and a yes notes the table.  At the end of pass 1 every noted
 * table takes the first run of blocks that pass 1 left free (the group
 * first, with flex_bg the flex group and then the whole file system), gets
 * its old contents when it had a place, zeroes otherwise, and the
 * descriptor is pointed there.  A new inode table means the inodes pass 1
 * saw (none, or another table's) are not the group's: the check starts
 * again.  Pass 5 then finds the bitmaps as the new blocks hold them and
 * puts them right.
 *
 * The library opens such a file system only with EXT4FS_OPEN_MISPLACED_OK
 * (fsck_open() asks for it): a location outside the file system is then
 * "missing", read as empty and never written, and the group's inodes are
 * not scanned, as e2fsprogs passes over a group whose table is 0.
 *
 * Where e4fsck differs on purpose: under -n e2fsck still "relocates" and
 * its writes fail late and oddly (an error writing the zeroed bitmap while
 * pass 2 reads a directory, then an abort); e4fsck says what it would do
 * and writes nothing.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/super.h"
#include "context.h"
#include "problem.h"
#include "problems.h"
#include "badblocks.h"
#include "relocate.h"

/* One of a group's three tables. */
struct table {
	unsigned bit;            /* EXT4FS_GROUP_* */
	const char *name;        /* as e2fsck names it in its messages */
	uint32_t not_group, conflict;
};

static const struct table tables[] = {
	{ EXT4FS_GROUP_BLOCK_BITMAP, "block bitmap", PR_0_BB_NOT_GROUP, PR_1_BB_CONFLICT },
	{ EXT4FS_GROUP_INODE_BITMAP, "inode bitmap", PR_0_IB_NOT_GROUP, PR_1_IB_CONFLICT },
	{ EXT4FS_GROUP_INODE_TABLE, "inode table", PR_0_ITABLE_NOT_GROUP, PR_1_ITABLE_CONFLICT },
};

static const struct table *table_of(unsigned bit)
{
	return &tables[bit == EXT4FS_GROUP_BLOCK_BITMAP ? 0 : bit == EXT4FS_GROUP_INODE_BITMAP ? 1 : 2];
}

/* Where group g's descriptor puts table bit. */
static uint64_t location(const struct e4fsck *ctx, uint32_t g, unsigned bit)
{
	const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, g);

	return bit == EXT4FS_GROUP_BLOCK_BITMAP ? gd->block_bitmap
	       : bit == EXT4FS_GROUP_INODE_BITMAP ? gd->inode_bitmap : gd->inode_table;
}

static uint64_t table_blocks(const struct e4fsck *ctx, unsigned bit)
{
	return bit == EXT4FS_GROUP_INODE_TABLE ? ctx->geo->inode_blocks_per_group : 1;
}

/* A table's old contents, read when its conflict was noted. */
struct saved_table {
	uint32_t group;
	unsigned bit;
	unsigned char *data;     /* its blocks */
	int *errs;               /* each block's read error, or 0 */
};

struct fsck_relocation {
	unsigned char *need;     /* per group: the EXT4FS_GROUP_* bits of the tables to relocate */
	struct saved_table *saved;
	size_t nsaved, capsaved;
};

void fsck_relocate_free(struct e4fsck *ctx)
{
	struct fsck_relocation *r = ctx->relocate;

	if (!r)
		return;
	for (size_t i = 0; i < r->nsaved; i++) {
		free(r->saved[i].data);
		free(r->saved[i].errs);
	}
	free(r->saved);
	free(r->need);
	free(r);
	ctx->relocate = NULL;
}

static int noted(const struct e4fsck *ctx, uint32_t g, unsigned bit)
{
	return ctx->relocate && (ctx->relocate->need[g] & bit);
}

/* Note table bit of group g for relocation.  0, or -1 after fsck_fatal(). */
static int note(struct e4fsck *ctx, uint32_t g, unsigned bit)
{
	if (!ctx->relocate) {
		ctx->relocate = calloc(1, sizeof(*ctx->relocate));
		if (ctx->relocate)
			ctx->relocate->need = calloc(ctx->geo->group_count, 1);
		if (!ctx->relocate || !ctx->relocate->need) {
			fsck_relocate_free(ctx);
			fsck_fatal(ctx, "out of memory noting the tables to relocate");
			return -1;
		}
	}
	ctx->relocate->need[g] |= (unsigned char)bit;
	return 0;
}

/*
 * Read table t of group g (at blk, count blocks) now, for the copy at the
 * end of pass 1: before pass 1 writes anything (its workers need the
 * earlier repairs on the disk, and that flush rewrites the superblock
 * copies a table may lie on), so the copy holds what e2fsck's does, which
 * writes no backup before its end.  A block that cannot be read is noted
 * with its error, for PR_1_RELOC_READ_ERR.  0, or -1 after fsck_fatal().
 */
static int save_contents(struct e4fsck *ctx, uint32_t g, unsigned bit, uint64_t blk, uint64_t count)
{
	struct fsck_relocation *r = ctx->relocate;
	size_t bs = ctx->geo->block_size;

	if (r->nsaved == r->capsaved) {
		struct saved_table *grown = ext4fs_array_grow(r->saved, &r->capsaved, r->nsaved + 1, sizeof(*grown), 4);
		if (!grown)
			goto nomem;
		r->saved = grown;
	}
	struct saved_table *s = &r->saved[r->nsaved];
	s->group = g;
	s->bit = bit;
	s->data = calloc(count, bs);
	s->errs = calloc(count, sizeof(*s->errs));
	if (!s->data || !s->errs) {
		free(s->data);
		free(s->errs);
		goto nomem;
	}
	r->nsaved++;
	for (uint64_t i = 0; i < count; i++)
		s->errs[i] = ext4fs_blocks_read(ctx->fs, blk + i, 1, s->data + i * bs);
	return 0;
nomem:
	fsck_fatal(ctx, "out of memory keeping the old contents of group %u's %s", g, table_of(bit)->name);
	return -1;
}

static const struct saved_table *saved_contents(const struct e4fsck *ctx, uint32_t g, unsigned bit)
{
	for (size_t i = 0; ctx->relocate && i < ctx->relocate->nsaved; i++)
		if (ctx->relocate->saved[i].group == g && ctx->relocate->saved[i].bit == bit)
			return &ctx->relocate->saved[i];
	return NULL;
}

/* Point group g's table bit at blk.  0, or -1 after fsck_fatal(). */
static int set_location(struct e4fsck *ctx, uint32_t g, unsigned bit, uint64_t blk)
{
	struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, g);
	int err;

	if (bit == EXT4FS_GROUP_BLOCK_BITMAP)
		gd.block_bitmap = blk;
	else if (bit == EXT4FS_GROUP_INODE_BITMAP)
		gd.inode_bitmap = blk;
	else
		gd.inode_table = blk;
	err = ext4fs_group_desc_set(ctx->fs, g, &gd);
	if (err) {
		fsck_fatal(ctx, "%s while setting the %s of group %u: %s", ext4fs_strerror(err), table_of(bit)->name, g,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/*
 * A member of e2fsck's "relocate" latch: the hint comes first, once, unless
 * a backup superblock is in use (the hint suggests one).
 */
static int ask_not_group(struct e4fsck *ctx, uint32_t code, const struct problem_ctx *pctx)
{
	if (!ctx->relocate_hint_latched) {
		ctx->relocate_hint_latched = 1;
		if (!ctx->superblock) {
			const struct ext4fs_geom *geo = ctx->geo;
			struct problem_ctx hint = { .num = (uint64_t)geo->blocks_per_group + geo->first_data_block };
			fix_problem(ctx, PR_0_RELOCATE_HINT, &hint);
		}
	}
	return fix_problem(ctx, code, pctx);
}

int fsck_check_group_tables(struct e4fsck *ctx, uint32_t g)
{
	const struct ext4fs_geom *geo = ctx->geo;
	uint64_t first = geo->first_data_block, last = geo->blocks_count - 1;

	if (!ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_FLEX_BG)) {
		first = ext4fs_group_first_block(ctx->fs, g);
		last = ext4fs_group_last_block(ctx->fs, g);
	}
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		uint64_t blk = location(ctx, g, tables[i].bit), n = table_blocks(ctx, tables[i].bit);
		struct problem_ctx pctx = { .group = g, .blk = blk };

		/* As e2fsck: a table must end in the group too, and a 0 is noted whatever was answered. */
		if ((blk < first || blk > last || n - 1 > last - blk) && ask_not_group(ctx, tables[i].not_group, &pctx)) {
			if (set_location(ctx, g, tables[i].bit, 0))
				return -1;
			blk = 0;
		}
		if (ctx->aborted || ctx->fatal)
			return -1;
		if (blk == 0 && note(ctx, g, tables[i].bit))
			return -1;
	}
	return 0;
}

int fsck_relocate_listed_bitmap(struct e4fsck *ctx, uint32_t g, unsigned bit)
{
	if (noted(ctx, g, bit))
		return 0;
	if (note(ctx, g, bit))
		return -1;
	return ctx->read_only ? 0 : save_contents(ctx, g, bit, location(ctx, g, bit), table_blocks(ctx, bit));
}

int fsck_relocate_bad_blocks_warning(struct e4fsck *ctx)
{
	if (ext4fs_group_tables_present(ctx->fs, 0) & EXT4FS_GROUP_INODE_TABLE)
		return 0;
	return fsck_bad_list_unreadable(ctx, "A block group is missing an inode table");
}

int fsck_claim_group_tables(struct e4fsck *ctx, uint32_t g, int (*claim)(struct e4fsck *ctx, uint64_t blk,
									  uint64_t count))
{
	static const unsigned order[] = { EXT4FS_GROUP_INODE_TABLE, EXT4FS_GROUP_BLOCK_BITMAP,
					  EXT4FS_GROUP_INODE_BITMAP };
	unsigned present = ext4fs_group_tables_present(ctx->fs, g);

	/* Preen stopped at a conflict: it asks no more (pass 1 ends at once). */
	if (ctx->aborted)
		return 0;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		const struct table *t = table_of(order[k]);
		uint64_t start = location(ctx, g, t->bit), n = table_blocks(ctx, t->bit);

		if (!(present & t->bit))
			continue;
		/* Bigalloc's metadata shares clusters: what the claim marks there is no conflict. */
		if (ctx->geo->cluster_ratio > 1) {
			if (claim(ctx, start, n))
				return -1;
			continue;
		}
		for (uint64_t b = start; b < start + n;) {
			if (!bitmap_paged_test(&ctx->block_found, b)) {
				/* The free stretch from b, claimed at once. */
				uint64_t end = bitmap_paged_next_set(&ctx->block_found, b);
				if (end > start + n)
					end = start + n;
				if (claim(ctx, b, end - b))
					return -1;
				b = end;
				continue;
			}
			/* As e2fsck: each block of a table taken before is asked about until one yes. */
			struct problem_ctx pctx = { .group = g, .blk = b };
			if (!noted(ctx, g, t->bit) && fix_problem(ctx, t->conflict, &pctx) &&
			    (note(ctx, g, t->bit) || (!ctx->read_only && save_contents(ctx, g, t->bit, start, n))))
				return -1;
			if (ctx->aborted)
				return 0;
			b++;
		}
	}
	return 0;
}

/*
 * The first run of count blocks pass 1 left free for group g's table, as
 * e2fsck looks: in the group (the flex group with flex_bg, then the whole
 * file system).  0, or -1 when there is none.
 */
static int find_place(struct e4fsck *ctx, uint32_t g, uint64_t count, uint64_t *blk)
{
	const struct ext4fs_geom *geo = ctx->geo;
	uint64_t first = ext4fs_group_first_block(ctx->fs, g), last = ext4fs_group_last_block(ctx->fs, g);
	int flex = ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_FLEX_BG);

	if (flex) {
		uint32_t per_flex = 1U << (ext4fs_sb(ctx->fs)->s_log_groups_per_flex & 31);
		uint32_t last_group = g | (per_flex - 1);
		if (last_group >= geo->group_count)
			last_group = geo->group_count - 1;
		first = ext4fs_group_first_block(ctx->fs, g - g % per_flex);
		last = ext4fs_group_last_block(ctx->fs, last_group);
	}
	/* e2fsprogs tries the starts before the range's last block; the run may pass it. */
	if (!bitmap_paged_find_clear_run(&ctx->block_found, first, last, count, geo->blocks_count, blk))
		return 0;
	if (flex && !bitmap_paged_find_clear_run(&ctx->block_found, geo->first_data_block, geo->blocks_count, count,
						 geo->blocks_count, blk))
		return 0;
	return -1;
}

/*
 * No place or no memory for a table: as e2fsck, the file system stays
 * marked with errors and the check ends there ("aborted", exit 8 with 4).
 */
static int relocation_failed(struct e4fsck *ctx)
{
	ctx->fatal = 1;
	ctx->exit_status |= FSCK_ERROR | FSCK_UNCORRECTED;
	return -1;
}

/* Move (or make) group g's table t: e2fsck's new_table_block.  0, or -1 to stop. */
static int relocate_one(struct e4fsck *ctx, uint32_t g, const struct table *t)
{
	uint64_t old = location(ctx, g, t->bit);
	uint64_t count = table_blocks(ctx, t->bit), blk;
	struct problem_ctx pctx = { .group = g, .blk = old, .str = t->name };

	if (find_place(ctx, g, count, &blk)) {
		pctx.num = count;
		pctx.errmsg = "Could not allocate block in ext2 filesystem";
		fix_problem(ctx, PR_1_RELOC_BLOCK_ALLOCATE, &pctx);
		return relocation_failed(ctx);
	}
	const struct saved_table *saved = saved_contents(ctx, g, t->bit);
	unsigned char *buf = malloc(ctx->geo->block_size);
	if (!buf) {
		fix_problem(ctx, PR_1_RELOC_MEMORY_ALLOCATE, &pctx);
		return relocation_failed(ctx);
	}
	pctx.blk2 = blk;
	fix_problem(ctx, old ? PR_1_RELOC_FROM_TO : PR_1_RELOC_TO, &pctx);
	pctx.blk2 = 0;
	if (bitmap_paged_set_range(&ctx->block_found, blk, count) < 0) {
		free(buf);
		fsck_fatal(ctx, "out of memory relocating the %s of group %u", t->name, g);
		return -1;
	}
	for (uint64_t i = 0; i < count && !ctx->read_only; i++) {
		int err = 0;
		memset(buf, 0, ctx->geo->block_size);
		if (old) {
			/* A copy goes on past a block that could not be read, as e2fsck's does. */
			err = saved ? saved->errs[i] : EXT4FS_E_BAD_BLOCK_NUM;
			if (!err)
				memcpy(buf, saved->data + i * ctx->geo->block_size, ctx->geo->block_size);
			if (err) {
				pctx.blk = i;
				pctx.errmsg = ext4fs_strerror(err);
				fix_problem(ctx, PR_1_RELOC_READ_ERR, &pctx);
			}
		}
		err = ext4fs_block_write(ctx->fs, blk + i, buf);
		if (err) {
			pctx.blk = blk + i;
			pctx.errmsg = ext4fs_strerror(err);
			fix_problem(ctx, PR_1_RELOC_WRITE_ERR, &pctx);
		}
	}
	free(buf);
	if (ctx->read_only)
		return 0;
	return set_location(ctx, g, t->bit, blk);
}

int fsck_relocate_tables(struct e4fsck *ctx)
{
	int rc = 0;

	/* The blocks kept for a new root and /lost+found (fsck_reserve_repair_blocks()) are claimed already. */
	if (!ctx->relocate)
		return 0;
	for (uint32_t g = 0; g < ctx->geo->group_count; g++) {
		for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
			if (!noted(ctx, g, tables[i].bit))
				continue;
			if (relocate_one(ctx, g, &tables[i])) {
				rc = -1;
				goto out;
			}
			/* The inodes pass 1 saw are not the new table's: e2fsck starts again. */
			if (tables[i].bit == EXT4FS_GROUP_INODE_TABLE && !ctx->read_only)
				ctx->restart = RESTART_RELOCATED;
		}
	}
out:
	fsck_relocate_free(ctx);
	return rc;
}
