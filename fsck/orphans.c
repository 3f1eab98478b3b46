/*
 * orphans.c - the orphan list: inodes the kernel was still truncating or
 * deleting when the file system went down, chained from s_last_orphan
 * through i_dtime.  As e2fsck does before pass 1, each is finished: an
 * inode without links is freed with everything it owns, one with links is
 * truncated to its i_size.  The head is cleared first, so a list that
 * turns out to be damaged is dropped rather than followed again; whatever
 * it leaves behind, the passes then find.  Read-only checks leave the list
 * alone (as e2fsck -n).
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/errors.h"
#include "ext4fs/file.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/super.h"
#include "e4fsck.h"
#include "problem.h"
#include "problems.h"

static int failed(struct e4fsck *ctx, int err, const char *what, uint32_t ino)
{
	fsck_fatal(ctx, "%s while %s orphaned inode %u: %s", ext4fs_strerror(err), what, ino, ext4fs_errmsg(ctx->fs));
	return -1;
}

/*
 * An orphan that is already free: e2fsck counts it free once more all the
 * same (and pass 5 then corrects the counts); the inode gets its dtime.
 */
static int count_free_again(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in)
{
	uint32_t grp = ext4fs_inode_group(ctx->fs, ino);
	struct ext4fs_group_desc gd = *ext4fs_group(ctx->fs, grp);
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	int64_t sec;
	uint32_t nsec;
	int err;

	gd.free_inodes_count++;
	if (EXT4FS_ISDIR(in->i_mode) && gd.used_dirs_count)
		gd.used_dirs_count--;
	sb.s_free_inodes_count++;
	ext4fs_now(ctx->fs, &sec, &nsec);
	in->i_dtime = (uint32_t)sec;
	err = ext4fs_group_desc_set(ctx->fs, grp, &gd);
	if (!err)
		err = ext4fs_super_set(ctx->fs, &sb);
	if (!err)
		err = ext4fs_inode_write(ctx->fs, ino, in);
	return err;
}

int fsck_release_orphans(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	uint32_t ino = sb.s_last_orphan;
	int err;

	/*
	 * An orphan file with entries is not read yet: repairing around it would
	 * free blocks that the kernel frees again at the next mount.
	 */
	if (!ctx->read_only && ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT)) {
		fsck_fatal(ctx, "%s: the orphan file holds entries, which e4fsck cannot process yet; run e2fsck, "
			   "or e4fsck -n to check without repairing", ctx->device);
		return -1;
	}
	if (!ino || ctx->read_only)
		return 0;
	sb.s_last_orphan = 0;
	err = ext4fs_super_set(ctx->fs, &sb);
	if (err)
		return failed(ctx, err, "clearing the list head before", ino);
	/* Finishing what the kernel started is not a repair: e2fsck says "modified" and exits 0. */
	ctx->fs_modified = 1;
	/* A file system with errors gets the full check; its list is not to be trusted. */
	if (sb.s_state & EXT4FS_STATE_ERROR)
		return 0;
	if (ino < g->first_ino || ino > g->inodes_count) {
		struct problem_ctx pctx = { .ino = ino };
		fix_problem(ctx, PR_0_ORPHAN_ILLEGAL_HEAD_INODE, &pctx);
		ctx->fs_changed = 1;    /* dropping a damaged list is a repair */
		return 0;
	}
	/* A list is at most as long as there are inodes: a cycle cannot keep us here. */
	for (uint32_t steps = 0; ino && steps < g->inodes_count; steps++) {
		struct ext4fs_inode in;
		char detail[128];
		struct problem_ctx pctx = { .ino = ino };

		err = ext4fs_inode_read(ctx->fs, ino, &in);
		if (err)
			return failed(ctx, err, "reading", ino);
		uint32_t next = in.i_dtime;
		snprintf(detail, sizeof(detail), "(uid=%" PRIu32 ", gid=%" PRIu32 ", mode=0%o, size=%" PRIu64 ")",
			 ext4fs_inode_uid(&in), ext4fs_inode_gid(&in), (unsigned)in.i_mode, ext4fs_inode_size(&in));
		pctx.str = in.i_links_count ? "Truncating" : "Clearing";
		pctx.name = detail;
		fix_problem(ctx, PR_0_ORPHAN_CLEAR_INODE, &pctx);
		if (next && (next < g->first_ino || next > g->inodes_count)) {
			pctx.ino = next;
			fix_problem(ctx, PR_0_ORPHAN_ILLEGAL_INODE, &pctx);
			ctx->fs_changed = 1;
			return 0;
		}
		if (!in.i_links_count) {
			const struct ext4fs_bitmap *ib;
			err = ext4fs_fs_inode_bitmap(ctx->fs, &ib);
			if (!err && ext4fs_bitmap_test(ib, ino) == 0)
				err = count_free_again(ctx, ino, &in);
			else if (!err)
				err = ext4fs_inode_release(ctx->fs, ino);
			if (err)
				return failed(ctx, err, "freeing", ino);
		} else {
			err = ext4fs_file_truncate(ctx->fs, ino, &in, ext4fs_inode_size(&in));
			if (!err) {
				in.i_dtime = 0;
				err = ext4fs_inode_write(ctx->fs, ino, &in);
			}
			if (err)
				return failed(ctx, err, "truncating", ino);
		}
		ino = next;
	}
	return 0;
}
