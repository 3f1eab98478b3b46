/*
 * pass4.c - reference counts: every inode in use against the entries that
 * name it (links_seen, from pass 2 and the repairs since).
 *
 * An inode no entry names is unattached: one without data (no blocks, no
 * in-inode attributes, a regular file or directory) is offered to be
 * cleared, any other to be linked into /lost+found.  Then i_links_count
 * must equal the entries counted, with the dir_nlink rule: a directory
 * with more than 65000 links counts as 1, and a directory whose count is
 * the overflow value 1 although it could hold the real one is given the
 * real one (not an error; only when writable, as e2fsck).
 *
 * Inodes no directory can name are skipped: the reserved ones below
 * s_first_ino except the root, the project quota and orphan-file inodes, and
 * extended-attribute inodes (their count is references from attributes).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/codec.h"
#include "ext4fs/errors.h"
#include "ext4fs/inode.h"
#include "ext4fs/super.h"
#include "ext4fs/xattr.h"
#include "dirs.h"
#include "badblocks.h"
#include "context.h"
#include "passes.h"
#include "problem.h"
#include "progress.h"
#include "problems_dirs.h"

#define LINK_MAX_DIR 65000   /* above this a directory's links count is 1 (dir_nlink) */

static int not_named_by_entries(struct e4fsck *ctx, uint32_t ino)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);

	if (ino == EXT4FS_BAD_INO || (ino > EXT4FS_ROOT_INO && ino < ctx->geo->first_ino))
		return 1;
	/* As e2fsck: an inode in a block on the bad-block list was never read, its count is not judged. */
	if (fsck_bad_list_holds_inode(ctx, ino))
		return 1;
	/* As e2fsck, of the quota files only the project one: a user or group file above s_first_ino is counted. */
	return ino == sb->s_prj_quota_inum || ino == sb->s_orphan_file_inum;
}

/* Attributes stored in the inode's extra space (they make a file worth keeping). */
static int has_inode_xattrs(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in)
{
	uint32_t size = ctx->geo->inode_size, off;
	unsigned char *raw;
	int has = 0;

	if (size <= EXT4FS_INODE_BASE_SIZE)
		return 0;
	off = EXT4FS_INODE_BASE_SIZE + in->i_extra_isize;
	if (off + 4 > size)
		return 0;
	raw = malloc(size);
	if (raw && ext4fs_inode_read_raw(ctx->fs, ino, raw) == 0)
		has = ext4fs_xattr_ibody_magic_get(raw + off) == EXT4FS_XATTR_MAGIC;
	free(raw);
	return has;
}

/*
 * An inode in use that no entry names.  Returns 1 when pass 4 is done with
 * it (cleared, or left unattached), 0 to go on to the count check.
 */
static int unattached(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in)
{
	struct problem_ctx pc = { .ino = ino };

	/* As e2fsck: a damaged inode is asked about first, and a wrong kind cleared rather than reconnected. */
	if (bitmap_paged_test(&ctx->inode_bad, ino)) {
		if (fsck_process_bad_inode(ctx, 0, ino) || ctx->aborted)
			return 1;
		if (ext4fs_inode_read(ctx->fs, ino, in))
			return 1;
	}
	if (ext4fs_inode_blocks_raw(ctx->fs, in) == 0 && !has_inode_xattrs(ctx, ino, in) &&
	    (EXT4FS_ISREG(in->i_mode) || EXT4FS_ISDIR(in->i_mode)) &&
	    fix_problem(ctx, PR_4_ZERO_LEN_INODE, &pc)) {
		fsck_release_inode(ctx, ino);
		return 1;
	}
	if (!fix_problem(ctx, PR_4_UNATTACHED_INODE, &pc))
		return 1;       /* nothing to gain from forcing its count to 0 */
	fsck_reconnect(ctx, ino);
	return 0;
}

static int set_dir_nlink(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	int err;

	sb.s_feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK;
	err = ext4fs_super_set(ctx->fs, &sb);
	if (err) {
		fsck_fatal(ctx, "%s while setting dir_nlink: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

/*
 * EA inode ino (*in): its reference count (kept in i_ctime and the osd1
 * version field) against the attribute entries pass 1 found naming it, as
 * e2fsck checks it; old Lustre value inodes, which keep none, have i_ctime
 * equal to i_atime.  Returns 1 when entries name it, 0 when none does
 * (then it is an unattached inode), -1 after fsck_fatal().
 */
static int ea_inode_refs(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in)
{
	const struct xattr_ref *r = xattr_table_find(&ctx->ea_inode_refs, ino);
	uint64_t stored = (uint64_t)in->i_ctime << 32 | in->i_version_lo;
	struct problem_ctx pc = { .ino = ino };

	if (!r || !r->refs)
		return 0;
	if (stored == r->refs || in->i_ctime == in->i_atime)
		return 1;
	pc.num = stored;
	pc.num2 = r->refs;
	if (!fix_problem(ctx, PR_4_EA_INODE_REF_COUNT, &pc))
		return 1;
	in->i_ctime = 0;
	in->i_version_lo = r->refs;
	int err = ext4fs_inode_write(ctx->fs, ino, in);
	if (err) {
		fsck_fatal(ctx, "%s while writing inode %u: %s", ext4fs_strerror(err), ino, ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 1;
}

int fsck_pass4(struct e4fsck *ctx)
{
	uint64_t limit = (uint64_t)ctx->geo->inodes_count + 1;
	int dir_nlink = ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK);

	for (uint64_t next = bitmap_paged_next_set(&ctx->inode_used, 1); next < limit && !ctx->aborted;
	     next = bitmap_paged_next_set(&ctx->inode_used, next + 1)) {
		uint32_t ino = (uint32_t)next;
		struct problem_ctx pc = { .ino = ino };
		struct ext4fs_inode in;
		uint32_t disk, seen;
		int isdir, yes;

		progress_advance(ctx, 1);
		if (not_named_by_entries(ctx, ino))
			continue;
		disk = counter_paged_get(&ctx->links_disk, ino);
		seen = counter_paged_get(&ctx->links_seen, ino);
		if (seen == 0) {
			if (ext4fs_inode_read(ctx->fs, ino, &in))
				continue;
			/* An EA inode named by attributes counts as linked once, as in e2fsck. */
			int named = (in.i_flags & EXT4FS_EA_INODE_FL) ? ea_inode_refs(ctx, ino, &in) : 0;
			if (named < 0)
				return -1;
			seen = (uint32_t)named;
			if (!named) {
				if (unattached(ctx, ino, &in))
					continue;
				disk = counter_paged_get(&ctx->links_disk, ino);
				seen = counter_paged_get(&ctx->links_seen, ino);
			}
		}
		isdir = bitmap_paged_test(&ctx->inode_dir, ino);
		if (isdir && seen > LINK_MAX_DIR) {
			if (!dir_nlink && fix_problem(ctx, PR_4_DIR_NLINK_FEATURE, &pc)) {
				if (set_dir_nlink(ctx))
					return -1;
				dir_nlink = 1;
			}
			seen = 1;
		}
		if (seen == disk)
			continue;
		if (ext4fs_inode_read(ctx->fs, ino, &in))
			continue;
		pc.num = seen;
		pc.num2 = in.i_links_count;
		if (isdir && seen > 1 && (in.i_flags & EXT4FS_INDEX_FL) && disk == 1)
			yes = !ctx->read_only && fix_problem(ctx, PR_4_DIR_OVERFLOW_REF_COUNT, &pc);
		else
			yes = fix_problem(ctx, PR_4_BAD_REF_COUNT, &pc);
		if (!yes)
			continue;
		in.i_links_count = (uint16_t)seen;
		int err = ext4fs_inode_write(ctx->fs, ino, &in);
		if (err) {
			fsck_fatal(ctx, "%s while writing inode %u: %s", ext4fs_strerror(err), ino,
				   ext4fs_errmsg(ctx->fs));
			return -1;
		}
		counter_paged_set(&ctx->links_disk, ino, (uint16_t)seen);
		ctx->fs_changed = 1;
	}
	/* Pass 5 reads the bitmaps from disk: write what passes 2-4 allocated and freed. */
	if (ctx->fs_changed && !ctx->read_only) {
		int err = ext4fs_flush(ctx->fs);
		if (err) {
			fsck_fatal(ctx, "%s while writing the file system's summaries: %s", ext4fs_strerror(err),
				   ext4fs_errmsg(ctx->fs));
			return -1;
		}
	}
	return 0;
}
