/*
 * journal_check.c - e2fsck's journal step, before the superblock checks: is the
 * journal the superblock names usable, and do the superblock's journal
 * flags agree with it?  Also, after the superblock checks as in e2fsck, the
 * backup of the journal inode's map in the superblock, the move of a journal
 * old tune2fs made as a visible file into inode 8, and the external
 * journal's device-number hint; and a new journal after pass 5 when this
 * step removed a bad one.  (Replaying the log is the library's, see check.c.)
 *
 * The order of questions and their consequences follow e2fsck 1.47:
 *   - the inode: s_journal_inum set, a regular file with links, at least
 *     1024 blocks, mapped without holes or blocks outside the file system;
 *     when it is not, the copy of its map in the superblock (s_jnl_blocks)
 *     is tried, read as an indirect map as e2fsck reads it, and written back
 *     when it serves.  Otherwise "Superblock has an invalid journal": a yes
 *     removes the journal, to be made anew after pass 5;
 *   - the journal superblock: its magic (without it the inode is taken to
 *     be wrong), version, features, checksum, block size and length; damage
 *     there is "Journal superblock is corrupt", and a yes writes a new, empty
 *     journal superblock;
 *   - the flags: has_journal clear beside a journal, needs_recovery set
 *     without one, and a journal holding a log while needs_recovery is
 *     clear ("Run journal anyway", else "Clear journal");
 *   - an error the journal recorded (s_errno) becomes the file system's.
 * A question this step cannot get past ends the check as e2fsck's
 * fatal_error() does (exit 8, with 4 when errors are left).  As in e2fsck,
 * an answer no here does not by itself make the exit status 4: the check
 * that follows starts from a file system it calls valid.
 */
#include "config.h"
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <uuid/uuid.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/journal.h"
#include "ext4fs/mkfs.h"
#include "ext4fs/super.h"
#include "journal_check.h"
#include "context.h"
#include "problem.h"
#include "problems.h"
#include "report.h"

#define JSB_V1_SIZE     0x24      /* a version 1 journal superblock ends here */

/* Why the journal cannot be used, as e2fsck's error codes (their messages are e2fsck's). */
enum jerr {
	J_OK = 0,
	J_BAD_INODE,        /* no inode, or not a usable journal inode */
	J_CORRUPT,          /* EXT2_ET_CORRUPT_JOURNAL_SB */
	J_UNSUPP_FEATURE,   /* EXT2_ET_UNSUPP_FEATURE */
	J_RO_UNSUPP,        /* EXT2_ET_RO_UNSUPP_FEATURE */
	J_UNSUPP_VERSION,   /* EXT2_ET_JOURNAL_UNSUPP_VERSION */
	J_IO,               /* the journal superblock could not be read */
};

static const char *jerr_message(enum jerr e)
{
	switch (e) {
	case J_CORRUPT: return "The journal superblock is corrupt";
	case J_UNSUPP_FEATURE: return "Filesystem has unsupported feature(s)";
	case J_RO_UNSUPP: return "Filesystem has unsupported read-only feature(s)";
	case J_UNSUPP_VERSION: return "Unsupported journal version";
	case J_IO: return "Attempt to read block from filesystem resulted in short read";
	default: return "Illegal inode number";
	}
}

struct jcheck {
	struct e4fsck *ctx;
	struct ext4fs_super sb;     /* the superblock as this step leaves it */
	int sb_dirty;
	struct ext4fs_inode jino;   /* the journal inode (or its backup) */
	int jino_dirty;             /* made from the backup: to be written */
	uint64_t total_len;         /* blocks of the journal: i_size, then at most s_maxlen */
	unsigned char *jsb;         /* the journal superblock's block */
	uint64_t jsb_blk;
	int jsb_dirty;
};

/* s_journal_dev's major and minor, in the kernel's old 16-bit encoding that mke2fs stores. */
static unsigned major_of(uint32_t dev)
{
	return (dev >> 8) & 0xfff;
}

static unsigned minor_of(uint32_t dev)
{
	return (dev & 0xff) | ((dev >> 12) & 0xfff00);
}

static int has_journal(const struct ext4fs_super *sb)
{
	return (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_HAS_JOURNAL) != 0;
}

static int needs_recovery(const struct ext4fs_super *sb)
{
	return (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_RECOVER) != 0;
}

/* e2fsck_clear_recover(): needs_recovery off; after an error a full check is due. */
static void clear_recover(struct jcheck *j, int error)
{
	j->sb.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_RECOVER;
	if (error)
		j->sb.s_state &= (uint16_t)~EXT4FS_STATE_VALID;
	j->sb_dirty = 1;
}

/*
 * Whether the journal inode maps its blocks as a journal must: walking its
 * blocks in order, none is 0 or outside the file system, and the last one
 * reached covers i_size.  Extent trees are walked by the library; an
 * indirect map (also the backup, which e2fsck reads as one) pointer by
 * pointer, stopping at the first hole or bad pointer, as e2fsck's walk with
 * holes reported stops.
 */
struct jwalk {
	struct ext4fs_fs *fs;
	int64_t last;               /* last logical block reached */
	int stopped;
};

static int walk_run(const struct ext4fs_block_visit *v, void *arg)
{
	struct jwalk *w = arg;

	for (uint32_t k = 0; k < v->count; k++) {
		if (!ext4fs_block_ptr_valid(w->fs, v->pblk + k)) {
			w->stopped = 1;
			return 1;
		}
		if (v->kind == EXT4FS_BLOCK_DATA)
			w->last = (int64_t)(v->lblk + k);
	}
	return 0;
}

/* One pointer of an indirect map at depth (0 data, 1 single, ...): 0 to go on, 1 to stop. */
static int walk_pointer(struct e4fsck *ctx, struct jwalk *w, uint32_t ptr, int depth, int64_t *lblk,
			unsigned char *buf, uint64_t size_blocks)
{
	const struct ext4fs_geom *g = ctx->geo;
	uint32_t per = g->block_size / 4;

	if ((uint64_t)*lblk >= size_blocks)
		return 1;
	if (!ext4fs_block_ptr_valid(ctx->fs, ptr))
		return 1;
	if (depth == 0) {
		w->last = (*lblk)++;
		return 0;
	}
	unsigned char *mine = buf + (size_t)(depth - 1) * g->block_size;
	if (ext4fs_block_read(ctx->fs, ptr, mine))
		return 1;
	for (uint32_t i = 0; i < per; i++)
		if (walk_pointer(ctx, w, ext4fs_blockmap_slot_get(mine, i), depth - 1, lblk, buf, size_blocks))
			return 1;
	return 0;
}

static int64_t last_block(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in, uint64_t size_blocks)
{
	struct jwalk w = { ctx->fs, -1, 0 };

	/* No more blocks than the file system has: a hostile size cannot make the walk endless. */
	if (size_blocks > ctx->geo->blocks_count)
		size_blocks = ctx->geo->blocks_count;
	if (in->i_flags & EXT4FS_EXTENTS_FL) {
		if (ext4fs_block_iterate(ctx->fs, ino, in, 0, walk_run, &w) < 0 && !w.stopped)
			return -1;
		return w.last;
	}
	unsigned char *buf = malloc((size_t)3 * ctx->geo->block_size);
	int64_t lblk = 0;
	if (!buf)
		return -1;
	for (int i = 0; i < EXT4FS_N_BLOCKS; i++) {
		int depth = i < EXT4FS_NDIR_BLOCKS ? 0 : i - EXT4FS_NDIR_BLOCKS + 1;
		if (walk_pointer(ctx, &w, ext4fs_blockmap_slot_get(in->i_block, (uint32_t)i), depth, &lblk, buf,
				 size_blocks))
			break;
	}
	free(buf);
	return w.last;
}

/* e2fsck's test of a journal inode: 0 when usable. */
static int inode_usable(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in)
{
	uint64_t size = ext4fs_inode_size(in), bs = ctx->geo->block_size;

	if (!in->i_links_count || !EXT4FS_ISREG(in->i_mode))
		return -1;
	if (size / bs < EXT4FS_JBD2_MIN_BLOCKS)
		return -1;
	return (uint64_t)(last_block(ctx, ino, in, (size + bs - 1) / bs) + 1) * bs < size ? -1 : 0;
}

/* The inode e2fsck makes of the backup in the superblock: i_block and size, nothing else. */
static void inode_from_backup(const struct ext4fs_super *sb, struct ext4fs_inode *in)
{
	struct ext4fs_inode keep = *in;

	memset(in, 0, sizeof(*in));
	in->i_extra_isize = keep.i_extra_isize;
	for (int i = 0; i < EXT4FS_N_BLOCKS; i++)
		ext4fs_blockmap_slot_set(in->i_block, (uint32_t)i, sb->s_jnl_blocks[i]);
	in->i_size_high = sb->s_jnl_blocks[15];
	in->i_size_lo = sb->s_jnl_blocks[16];
	in->i_links_count = 1;
	in->i_mode = EXT4FS_S_IFREG | 0600;
}

/* e2fsck_get_journal(): the journal inode, or its backup.  0, or -1 when there is no usable one. */
static int get_journal(struct jcheck *j)
{
	struct e4fsck *ctx = j->ctx;
	uint32_t ino = j->sb.s_journal_inum;
	int ok;

	if (!ino)
		return -1;
	/* As e2fsck's library reads it here: a bad checksum sends the step to the backup. */
	ok = ino <= ctx->geo->inodes_count && !ext4fs_inode_read_strict(ctx->fs, ino, &j->jino) &&
	     !inode_usable(ctx, ino, &j->jino);
	if (!ok) {
		if (j->sb.s_jnl_backup_type != EXT4FS_JNL_BACKUP_BLOCKS)
			return -1;
		inode_from_backup(&j->sb, &j->jino);
		if (inode_usable(ctx, ino, &j->jino))
			return -1;
		/* Written back with the step's other changes (not with -n). */
		j->jino_dirty = !ctx->read_only;
	}
	j->total_len = ext4fs_inode_size(&j->jino) / ctx->geo->block_size;
	return 0;
}

/* e2fsck_journal_fix_bad_inode(). */
static enum jerr fix_bad_inode(struct jcheck *j)
{
	struct e4fsck *ctx = j->ctx;
	struct problem_ctx pctx = { .ino = j->sb.s_journal_inum };
	int had_journal = has_journal(&j->sb);

	if (had_journal || j->sb.s_journal_inum) {
		if (!fix_problem(ctx, PR_0_JOURNAL_BAD_INODE, &pctx))
			return J_CORRUPT;
		if (had_journal && j->sb.s_journal_inum)
			printf("*** journal has been deleted ***\n\n");
		j->sb.s_feature_compat &= ~(uint32_t)EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
		j->sb.s_journal_inum = 0;
		memset(j->sb.s_jnl_blocks, 0, sizeof(j->sb.s_jnl_blocks));
		ctx->recreate_journal = 1;
		clear_recover(j, 1);
		return J_OK;
	}
	if (needs_recovery(&j->sb)) {
		if (!fix_problem(ctx, PR_0_JOURNAL_RECOVER_SET, &pctx))
			return J_UNSUPP_FEATURE;
		clear_recover(j, 1);
	}
	return J_OK;
}

/* clear_v2_journal_fields(): a message, and the fields past version 1 zeroed (not with -n). */
static void clear_v2_fields(struct jcheck *j)
{
	fix_problem(j->ctx, PR_0_CLEAR_V2_JOURNAL, NULL);
	if (j->ctx->read_only)
		return;
	memset(j->jsb + JSB_V1_SIZE, 0, j->ctx->geo->block_size - JSB_V1_SIZE);
	j->jsb_dirty = 1;
}

/* e2fsck_journal_load(): the journal superblock. */
static enum jerr load_journal(struct jcheck *j)
{
	struct e4fsck *ctx = j->ctx;
	struct ext4fs_journal_sb jsb;
	uint64_t run;
	int unwritten;

	if (ext4fs_bmap(ctx->fs, j->sb.s_journal_inum, &j->jino, 0, &j->jsb_blk, &run, &unwritten) ||
	    !j->jsb_blk || ext4fs_block_read(ctx->fs, j->jsb_blk, j->jsb)) {
		fprintf(stderr, "%s: %s reading journal superblock\n\n", ctx->device, jerr_message(J_IO));
		return J_IO;
	}
	ext4fs_journal_sb_decode(&jsb, j->jsb);
	if (jsb.magic != EXT4FS_JBD2_MAGIC)
		return fix_bad_inode(j);
	switch (jsb.blocktype) {
	case EXT4FS_JBD2_SUPERBLOCK_V1:
		if (jsb.feature_compat || jsb.feature_incompat || jsb.feature_ro_compat || jsb.nr_users)
			clear_v2_fields(j);
		break;
	case EXT4FS_JBD2_SUPERBLOCK_V2:
		if (jsb.nr_users > 1 && uuid_is_null(j->sb.s_journal_uuid))
			clear_v2_fields(j);
		ext4fs_journal_sb_decode(&jsb, j->jsb);
		if (jsb.nr_users > 1) {
			/* Fatal: the closing lines follow, with "still has errors" under -n, as e2fsck's. */
			if (ctx->read_only)
				ctx->exit_status |= FSCK_UNCORRECTED;
			fix_problem(ctx, PR_0_JOURNAL_UNSUPP_MULTIFS, NULL);
			return J_UNSUPP_VERSION;
		}
		break;
	case EXT4FS_JBD2_DESCRIPTOR_BLOCK:
	case EXT4FS_JBD2_COMMIT_BLOCK:
	case EXT4FS_JBD2_REVOKE_BLOCK:
		return J_CORRUPT;
	default:
		return J_UNSUPP_VERSION;
	}
	ext4fs_journal_sb_decode(&jsb, j->jsb);
	if (jsb.feature_incompat & ~(uint32_t)EXT4FS_JBD2_INCOMPAT_KNOWN)
		return J_UNSUPP_FEATURE;
	if (jsb.feature_ro_compat)
		return J_RO_UNSUPP;
	int v2 = (jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V2) != 0;
	int v3 = (jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_CSUM_V3) != 0;
	if (v2 && v3)
		return J_CORRUPT;
	if ((v2 || v3) && (jsb.feature_compat & EXT4FS_JBD2_COMPAT_CHECKSUM))
		return J_CORRUPT;
	if ((v2 || v3) && (jsb.checksum_type != EXT4FS_JBD2_CRC32C_CHKSUM ||
			   jsb.checksum != ext4fs_journal_sb_csum(j->jsb)))
		return J_CORRUPT;
	if (jsb.blocksize != ctx->geo->block_size) {
		fprintf(stderr, "%s: %s %s: no valid journal superblock found\n\n", ctx->prog, jerr_message(J_CORRUPT),
			ctx->device);
		return J_CORRUPT;
	}
	if (jsb.maxlen < j->total_len) {
		j->total_len = jsb.maxlen;
	} else if (jsb.maxlen > j->total_len) {
		fprintf(stderr, "%s: %s %s: journal too short\n\n", ctx->prog, jerr_message(J_CORRUPT), ctx->device);
		return J_CORRUPT;
	}
	if (jsb.feature_incompat & EXT4FS_JBD2_INCOMPAT_FAST_COMMIT) {
		uint32_t fc = jsb.num_fc_blocks ? jsb.num_fc_blocks : EXT4FS_JBD2_DEFAULT_FC_BLOCKS;
		if (jsb.maxlen < fc || jsb.maxlen - fc < EXT4FS_JBD2_MIN_BLOCKS) {
			fprintf(stderr, "%s: %s %s: incorrect fast commit blocks\n\n", ctx->prog,
				jerr_message(J_CORRUPT), ctx->device);
			return J_CORRUPT;
		}
	}
	return J_OK;
}

/* A checksum v2/v3 journal superblock carries its own checksum. */
static void jsb_csum_set(unsigned char *raw)
{
	struct ext4fs_journal_sb jsb;

	ext4fs_journal_sb_decode(&jsb, raw);
	if (jsb.feature_incompat & (EXT4FS_JBD2_INCOMPAT_CSUM_V2 | EXT4FS_JBD2_INCOMPAT_CSUM_V3)) {
		jsb.checksum = ext4fs_journal_sb_csum(raw);
		ext4fs_journal_sb_encode(&jsb, raw);
	}
}

/*
 * e2fsck_journal_reset_super(): an empty journal superblock over the
 * damaged one.  A version 1 header that is whole stays version 1; the
 * sequence number is random, so no old block can pass for a new
 * transaction.
 */
static void reset_super(struct jcheck *j)
{
	unsigned char *b = j->jsb;
	uint32_t bs = j->ctx->geo->block_size;
	struct ext4fs_journal_sb old, fresh;
	uuid_t u;
	uint32_t seq = 0, word;

	ext4fs_journal_sb_decode(&old, b);
	int v1 = old.magic == EXT4FS_JBD2_MAGIC && old.blocktype == EXT4FS_JBD2_SUPERBLOCK_V1;
	memset(b, 0, bs);
	memset(&fresh, 0, sizeof(fresh));
	fresh.magic = EXT4FS_JBD2_MAGIC;
	fresh.blocktype = v1 ? EXT4FS_JBD2_SUPERBLOCK_V1 : EXT4FS_JBD2_SUPERBLOCK_V2;
	fresh.blocksize = bs;
	fresh.maxlen = (uint32_t)j->total_len;
	fresh.first = 1;
	uuid_generate(u);
	for (int i = 0; i < 4; i++) {
		memcpy(&word, u + 4 * i, 4);
		seq ^= word;
	}
	fresh.sequence = seq;
	ext4fs_journal_sb_encode(&fresh, b);
	j->jsb_dirty = 1;
}

/* e2fsck_journal_fix_corrupt_super(). */
static enum jerr fix_corrupt_super(struct jcheck *j)
{
	struct problem_ctx pctx = { .num = j->sb.s_journal_inum };

	if (has_journal(&j->sb)) {
		if (!fix_problem(j->ctx, PR_0_JOURNAL_BAD_SUPER, &pctx))
			return J_CORRUPT;
		if (!j->ctx->read_only)
			reset_super(j);
		clear_recover(j, needs_recovery(&j->sb));
		return J_OK;
	}
	return fix_bad_inode(j) ? J_CORRUPT : J_OK;
}

/* The flags against the journal, once it loaded (the end of e2fsck_check_ext3_journal()). */
static void check_flags(struct jcheck *j, int *reset)
{
	struct e4fsck *ctx = j->ctx;
	struct problem_ctx pctx = { .num = j->sb.s_journal_inum, .str = "inode" };
	struct ext4fs_journal_sb jsb;

	while (!has_journal(&j->sb)) {
		int recover = needs_recovery(&j->sb);
		if (fix_problem(ctx, PR_0_JOURNAL_HAS_JOURNAL, &pctx)) {
			/* A yes then a no asks again, as e2fsck does: only a person can change their mind. */
			if (recover && !fix_problem(ctx, PR_0_JOURNAL_RECOVER_SET, &pctx))
				continue;
			int force = recover || j->sb.s_journal_inum < ctx->geo->first_ino;
			j->sb.s_journal_inum = 0;
			j->sb.s_journal_dev = 0;
			memset(j->sb.s_journal_uuid, 0, sizeof(j->sb.s_journal_uuid));
			clear_recover(j, force);
			if (force)
				ctx->force = 1;
		} else if (!ctx->read_only) {
			j->sb.s_feature_compat |= EXT4FS_FEATURE_COMPAT_HAS_JOURNAL;
			j->sb_dirty = 1;
		}
		break;
	}
	ext4fs_journal_sb_decode(&jsb, j->jsb);
	if (has_journal(&j->sb) && !needs_recovery(&j->sb) && jsb.start) {
		fix_problem(ctx, PR_0_JOURNAL_RECOVERY_CLEAR, &pctx);
		int run;
		if (ctx->superblock) {
			/* A message only: e2fsck runs the journal unless told to change nothing. */
			fix_problem(ctx, PR_0_JOURNAL_RUN_DEFAULT, &pctx);
			run = !ctx->read_only;
		} else {
			run = fix_problem(ctx, PR_0_JOURNAL_RUN, &pctx);
		}
		if (run) {
			ctx->force = 1;
			j->sb.s_feature_incompat |= EXT4FS_FEATURE_INCOMPAT_RECOVER;
			j->sb_dirty = 1;
		} else if (fix_problem(ctx, PR_0_JOURNAL_RESET_JOURNAL, &pctx)) {
			*reset = 1;
			j->sb.s_state &= (uint16_t)~EXT4FS_STATE_VALID;
			j->sb_dirty = 1;
		}
	}
}

/*
 * The end of e2fsck's journal check: a journal that recorded an error
 * (s_errno: the kernel aborted it) and needs no replay gives the file
 * system the error state, so the whole check follows, and forgets the
 * error.  As in e2fsck this is no repair (exit 0).  With -n nothing is
 * written, but the check is still due.  0, or -1 after fsck_fatal().
 */
static int journal_errno(struct jcheck *j)
{
	struct e4fsck *ctx = j->ctx;
	struct ext4fs_journal_sb jsb;

	ext4fs_journal_sb_decode(&jsb, j->jsb);
	if (needs_recovery(&j->sb) || !jsb.errnum)
		return 0;
	if (ctx->read_only) {
		ctx->fs_invalid = 1;
		return 0;
	}
	jsb.errnum = 0;
	ext4fs_journal_sb_encode(&jsb, j->jsb);
	j->jsb_dirty = 1;
	j->sb.s_state |= EXT4FS_STATE_ERROR;
	ctx->fs_modified = 1;
	int err = ext4fs_super_set_journal(ctx->fs, &j->sb);
	if (err)
		fsck_fatal(ctx, "%s while writing the superblock: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
	return err ? -1 : 0;
}

/*
 * Write what the step changed; 0 or -1 after fsck_fatal().  A handle
 * opened for recovery writes nothing but the superblock, so for the
 * journal inode or superblock the file system is opened writable, with
 * needs_recovery off meanwhile, and the flag is put back afterwards.
 */
static int write_changes(struct jcheck *j)
{
	struct e4fsck *ctx = j->ctx;
	const char *what = "the superblock";
	int err = 0;

	if (ctx->read_only)
		return 0;
	if ((j->jsb_dirty || j->jino_dirty) && !(ext4fs_fs_flags(ctx->fs) & EXT4FS_OPEN_RW)) {
		struct ext4fs_super off = j->sb;
		off.s_feature_incompat &= ~(uint32_t)EXT4FS_FEATURE_INCOMPAT_RECOVER;
		err = ext4fs_super_set_journal(ctx->fs, &off);
		if (err)
			goto fail;
		if (fsck_reopen(ctx, EXT4FS_OPEN_RW))
			return -1;
		j->sb_dirty = 1;
	}
	if (j->jino_dirty) {
		what = "the journal inode";
		err = ext4fs_inode_write(ctx->fs, j->sb.s_journal_inum, &j->jino);
		if (err)
			goto fail;
		ctx->fs_changed = 1;
	}
	if (j->jsb_dirty) {
		what = "the journal superblock";
		jsb_csum_set(j->jsb);
		err = ext4fs_block_write(ctx->fs, j->jsb_blk, j->jsb);
		if (err)
			goto fail;
	}
	if (j->sb_dirty) {
		what = "the superblock";
		/* A writable handle writes it with everything else (a flush now would stamp the write time). */
		err = ext4fs_super_set_journal(ctx->fs, &j->sb);
		if (err)
			goto fail;
		ctx->fs_changed = 1;
	}
	return 0;
fail:
	fsck_fatal(ctx, "%s while writing %s: %s", ext4fs_strerror(err), what, ext4fs_errmsg(ctx->fs));
	return -1;
}

/* e2fsck's fatal_error() after "while checking journal": exit 8, and 4 with errors left. */
static int cannot_proceed_msg(struct e4fsck *ctx, const char *why)
{
	fprintf(stderr, "%s: %s while checking journal for %s\n", ctx->prog, why, ctx->device);
	fprintf(stderr, "%s: Cannot proceed with file system check\n", ctx->prog);
	ctx->exit_status |= FSCK_ERROR;
	report_abort(ctx);
	return -1;
}

static int cannot_proceed(struct e4fsck *ctx, enum jerr e)
{
	return cannot_proceed_msg(ctx, jerr_message(e));
}

/* Nonzero when the block device at path holds an ext4 superblock (a journal device's too) with this UUID. */
static int device_has_uuid(const char *path, const uint8_t uuid[16])
{
	unsigned char raw[EXT4FS_SUPER_SIZE];
	struct ext4fs_super dsb;
	struct ext4fs_io *io = NULL;
	struct stat st;

	if (stat(path, &st) || !S_ISBLK(st.st_mode) || ext4fs_io_open_file(path, 0, 0, &io))
		return 0;
	int err = ext4fs_io_read(io, EXT4FS_SUPER_OFFSET, raw, sizeof(raw));
	ext4fs_io_close(io);
	if (err)
		return 0;
	ext4fs_super_decode(&dsb, raw);
	return dsb.s_magic == EXT4FS_SUPER_MAGIC && !memcmp(dsb.s_uuid, uuid, sizeof(dsb.s_uuid));
}

/*
 * The block device carrying this UUID, as e2fsck asks blkid for it: the
 * link udev makes under /dev/disk/by-uuid, else each device the kernel
 * lists in /proc/partitions (loop devices too) read in turn.  NULL when
 * none is found.  The path lives until the program ends.
 */
static const char *device_by_uuid(const uint8_t uuid[16])
{
	static char path[PATH_MAX];
	char text[37], name[NAME_MAX + 1], line[256];
	struct stat st;

	uuid_unparse_lower(uuid, text);
	snprintf(path, sizeof(path), "/dev/disk/by-uuid/%s", text);
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode))
		return path;
	FILE *f = fopen("/proc/partitions", "r");
	if (!f)
		return NULL;
	const char *found = NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned major, minor;
		unsigned long long kib;
		if (sscanf(line, " %u %u %llu %255s", &major, &minor, &kib, name) != 4)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", name);
		if (device_has_uuid(path, uuid))
			found = path;
	}
	fclose(f);
	return found;
}

/*
 * Where the external journal is when -j did not say: as e2fsck looks for
 * it, by its UUID (device_by_uuid()), else by the device number the
 * superblock recorded (s_journal_dev) among the block devices in /dev.
 * NULL when neither is found.  The path lives until the program ends.
 */
static const char *find_external_journal(const struct ext4fs_super *sb)
{
	static char path[PATH_MAX];
	struct stat st;
	const char *by_uuid = device_by_uuid(sb->s_journal_uuid);

	if (by_uuid)
		return by_uuid;
	if (!sb->s_journal_dev)
		return NULL;
	DIR *d = opendir("/dev");
	if (!d)
		return NULL;
	const char *found = NULL;
	for (struct dirent *e = readdir(d); e && !found; e = readdir(d)) {
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		if (stat(path, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == makedev(major_of(sb->s_journal_dev),
											   minor_of(sb->s_journal_dev)))
			found = path;
	}
	closedir(d);
	return found;
}

/*
 * -j's argument as e2fsck takes it (blkid_get_devname()): a path, or
 * UUID=... or LABEL=..., here the links udev makes for them.  The result
 * lives until the program ends.
 */
static const char *resolve_spec(const char *spec)
{
	static char path[PATH_MAX];

	if (!strncmp(spec, "UUID=", 5))
		snprintf(path, sizeof(path), "/dev/disk/by-uuid/%s", spec + 5);
	else if (!strncmp(spec, "LABEL=", 6))
		snprintf(path, sizeof(path), "/dev/disk/by-label/%s", spec + 6);
	else
		return spec;
	return path;
}

/*
 * The superblock's flags against an external journal that loaded: a log
 * while needs_recovery is clear is e2fsck's "Run journal anyway" (then
 * "Clear journal"), as for an internal journal; the journal superblock is
 * read and, when cleared, written on the journal device.  0, or -1 when
 * preen stopped or a write failed.
 */
static int external_flags(struct e4fsck *ctx, struct ext4fs_io *io, const struct ext4fs_journal_sb *jsb)
{
	struct jcheck j = { .ctx = ctx, .sb = *ext4fs_sb(ctx->fs) };
	uint32_t bs = ctx->geo->block_size;
	uint64_t at = (uint64_t)(bs == 1024 ? 2 : 1) * bs;   /* the block after the device's superblock */
	int reset = 0, rc = 0, err;

	if (needs_recovery(&j.sb) || !jsb->start)
		return 0;
	j.jsb = malloc(bs);
	if (!j.jsb) {
		fsck_fatal(ctx, "out of memory checking the journal");
		return -1;
	}
	err = ext4fs_io_read(io, at, j.jsb, bs);
	if (err) {
		fsck_fatal(ctx, "%s while reading the external journal's superblock", ext4fs_strerror(err));
		free(j.jsb);
		return -1;
	}
	check_flags(&j, &reset);
	if (ctx->aborted) {
		free(j.jsb);
		return -1;
	}
	if (reset && !ctx->read_only) {
		struct ext4fs_journal_sb fresh;
		ext4fs_journal_sb_decode(&fresh, j.jsb);
		fresh.start = 0;
		ext4fs_journal_sb_encode(&fresh, j.jsb);
		jsb_csum_set(j.jsb);
		err = ext4fs_io_write(io, at, j.jsb, bs);
		if (!err)
			err = ext4fs_io_flush(io);
		if (err) {
			fsck_fatal(ctx, "%s while writing the external journal's superblock", ext4fs_strerror(err));
			rc = -1;
		}
	}
	if (!rc)
		rc = write_changes(&j);
	free(j.jsb);
	return rc;
}

/*
 * e2fsck's check of the journal device's own superblock checksum, made once
 * the device is known to be this file system's journal (otherwise the open
 * that follows says what is wrong with it).  A yes writes the right
 * checksum on the device.  0, or -1 after fsck_fatal().
 */
static int external_super_csum(struct e4fsck *ctx, struct ext4fs_io *io)
{
	unsigned char raw[EXT4FS_SUPER_SIZE];
	struct ext4fs_super dsb;

	if (ext4fs_io_read(io, EXT4FS_SUPER_OFFSET, raw, sizeof(raw)))
		return 0;
	ext4fs_super_decode(&dsb, raw);
	if (dsb.s_magic != EXT4FS_SUPER_MAGIC || !(dsb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_JOURNAL_DEV) ||
	    memcmp(dsb.s_uuid, ext4fs_sb(ctx->fs)->s_journal_uuid, sizeof(dsb.s_uuid)) ||
	    !(dsb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) ||
	    dsb.s_checksum == ext4fs_super_csum(raw))
		return 0;
	if (!fix_problem(ctx, PR_0_EXT_JOURNAL_SUPER_CSUM_INVALID, NULL) || ctx->read_only)
		return 0;
	/* A fix made: e2fsck checks the whole file system then. */
	ctx->force = 1;
	dsb.s_checksum = ext4fs_super_csum(raw);
	ext4fs_super_encode(&dsb, raw);
	int err = ext4fs_io_write(io, EXT4FS_SUPER_OFFSET, raw, sizeof(raw));
	if (!err)
		err = ext4fs_io_flush(io);
	if (err) {
		fsck_fatal(ctx, "%s while writing the external journal's superblock", ext4fs_strerror(err));
		return -1;
	}
	return 0;
}

/*
 * The external journal step: find the journal device (-j, else as
 * find_external_journal()), open it, check that it is a journal device and
 * the one this file system names, and that its journal superblock loads.
 * e2fsck's problems, all fatal: "Can't find external journal", "External
 * journal has bad superblock", "External journal does not support this
 * filesystem"; any other failure stops as e2fsck's "while checking
 * journal".  As e2fsck, the file system is left with errors then (exit 12).
 * The path found is kept in ctx->journal_path for the replay.  0 or -1.
 */
static int check_external(struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	struct ext4fs_journal *jnl = NULL;
	struct ext4fs_io *io = NULL;

	if (!ctx->journal_path)
		ctx->journal_path = find_external_journal(sb);
	else
		ctx->journal_path = resolve_spec(ctx->journal_path);
	if (!ctx->journal_path) {
		ctx->exit_status |= FSCK_UNCORRECTED;
		fix_problem(ctx, PR_0_CANT_FIND_JOURNAL, NULL);
		return -1;
	}
	int err = ext4fs_io_open_file(ctx->journal_path, ctx->read_only ? 0 : EXT4FS_IO_RDWR, 0, &io);
	if (err) {
		ctx->exit_status |= FSCK_UNCORRECTED;
		return cannot_proceed_msg(ctx, ext4fs_strerror(err));
	}
	if (external_super_csum(ctx, io)) {
		ext4fs_io_close(io);
		return -1;
	}
	err = ext4fs_journal_open_external(ctx->fs, io, &jnl);
	if (!err) {
		int rc = external_flags(ctx, io, ext4fs_journal_super(jnl));
		ext4fs_journal_close(jnl);
		ext4fs_io_close(io);
		return rc;
	}
	ext4fs_io_close(io);
	ctx->exit_status |= FSCK_UNCORRECTED;
	if (err == EXT4FS_E_BAD_MAGIC || err == EXT4FS_E_INVALID_ARG) {
		fix_problem(ctx, err == EXT4FS_E_BAD_MAGIC ? PR_0_EXT_JOURNAL_BAD_SUPER : PR_0_JOURNAL_BAD_UUID, NULL);
		return -1;
	}
	if (err == EXT4FS_E_OUT_OF_IMAGE || err == EXT4FS_E_SHORT_READ) {
		/* e2fsck's read-error handler names the block: the one holding the device's superblock. */
		printf("%s: %s while reading block %u\n\n", ctx->device, jerr_message(J_IO),
		       ctx->geo->block_size == 1024 ? 1U : 0U);
		fflush(stdout);
		return cannot_proceed(ctx, J_IO);
	}
	/* The library's words say which field; e2fsck's first line names the error only. */
	fprintf(stderr, "%s: %s\n", ctx->prog, ext4fs_errmsg(ctx->fs));
	return cannot_proceed_msg(ctx, ext4fs_strerror(err));
}

int fsck_check_journal(struct e4fsck *ctx)
{
	struct jcheck j = { .ctx = ctx, .sb = *ext4fs_sb(ctx->fs) };
	int uncorrected = ctx->exit_status & FSCK_UNCORRECTED;
	enum jerr e = J_OK;
	int reset = 0, rc = 0;

	if (!has_journal(&j.sb) && !needs_recovery(&j.sb) && !j.sb.s_journal_inum && !j.sb.s_journal_dev &&
	    uuid_is_null(j.sb.s_journal_uuid))
		return 0;
	/*
	 * As e2fsck decides it: a journal UUID names an external journal,
	 * has_journal or not (without the flag, one that cannot be found still
	 * stops the check: "Can't find external journal").
	 */
	if (!uuid_is_null(j.sb.s_journal_uuid)) {
		rc = check_external(ctx);
		/* As below: what this step left unanswered is not the check's. */
		if (!rc)
			ctx->exit_status = (ctx->exit_status & ~FSCK_UNCORRECTED) | uncorrected;
		return rc;
	}
	j.jsb = malloc(ctx->geo->block_size);
	if (!j.jsb) {
		fsck_fatal(ctx, "out of memory checking the journal");
		return -1;
	}
	if (get_journal(&j)) {
		e = fix_bad_inode(&j);
	} else {
		e = load_journal(&j);
		if (e == J_UNSUPP_FEATURE || e == J_RO_UNSUPP || e == J_UNSUPP_VERSION) {
			static const uint32_t ask[] = {
				[J_UNSUPP_FEATURE] = PR_0_JOURNAL_UNSUPP_INCOMPAT,
				[J_RO_UNSUPP] = PR_0_JOURNAL_UNSUPP_ROCOMPAT,
				[J_UNSUPP_VERSION] = PR_0_JOURNAL_UNSUPP_VERSION,
			};
			/* A yes aborts; a no goes on to offer a new journal superblock. */
			if (!ctx->fatal && fix_problem(ctx, ask[e], NULL)) {
				ctx->exit_status |= FSCK_ERROR | FSCK_UNCORRECTED;
				report_abort(ctx);
				rc = -1;
				goto out;
			}
		}
		if (ctx->fatal || ctx->aborted) {
			rc = -1;
			goto out;
		}
		if (e == J_CORRUPT || e == J_UNSUPP_FEATURE || e == J_RO_UNSUPP || e == J_UNSUPP_VERSION)
			e = fix_corrupt_super(&j);
		else if (e == J_OK && !ctx->aborted)
			check_flags(&j, &reset);
	}
	if (ctx->aborted) {
		rc = -1;
		goto out;
	}
	if (e != J_OK) {
		rc = cannot_proceed(ctx, e);
		goto out;
	}
	if (reset && !ctx->read_only) {
		struct ext4fs_journal_sb jsb;
		ext4fs_journal_sb_decode(&jsb, j.jsb);
		jsb.start = 0;
		ext4fs_journal_sb_encode(&jsb, j.jsb);
		j.jsb_dirty = 1;
	}
	if (journal_errno(&j)) {
		rc = -1;
		goto out;
	}
	rc = write_changes(&j);
	/* As e2fsck: the check proper starts from a file system called valid. */
	ctx->exit_status = (ctx->exit_status & ~FSCK_UNCORRECTED) | uncorrected;
out:
	free(j.jsb);
	return rc;
}

int fsck_backup_journal_map(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	struct ext4fs_inode in;
	uint32_t map[EXT4FS_N_BLOCKS];

	if (ctx->read_only || !sb.s_journal_inum || !has_journal(&sb) || sb.s_journal_inum > ctx->geo->inodes_count ||
	    ext4fs_inode_read(ctx->fs, sb.s_journal_inum, &in))
		return 0;
	for (int i = 0; i < EXT4FS_N_BLOCKS; i++)
		map[i] = ext4fs_blockmap_slot_get(in.i_block, (uint32_t)i);
	if (sb.s_jnl_backup_type == EXT4FS_JNL_BACKUP_BLOCKS && !memcmp(map, sb.s_jnl_blocks, sizeof(map)))
		return 0;
	if (sb.s_jnl_backup_type && sb.s_jnl_backup_type != EXT4FS_JNL_BACKUP_BLOCKS)
		return 0;
	fix_problem(ctx, PR_0_BACKUP_JNL, NULL);
	memcpy(sb.s_jnl_blocks, map, sizeof(map));
	sb.s_jnl_blocks[15] = in.i_size_high;
	sb.s_jnl_blocks[16] = in.i_size_lo;
	sb.s_jnl_backup_type = EXT4FS_JNL_BACKUP_BLOCKS;
	int err = ext4fs_super_set_journal(ctx->fs, &sb);
	if (err) {
		fsck_fatal(ctx, "%s while backing up the journal inode's map: %s", ext4fs_strerror(err),
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_modified = 1;
	return 0;
}

/* The names old tune2fs gave the journal file it made on a mounted file system, in e2fsck's order. */
static const char *const visible_journal_names[] = { ".journal", "journal", ".journal.dat", "journal.dat" };

/* The root's entry naming the journal inode ino, or NULL. */
static const char *visible_journal_name(struct e4fsck *ctx, uint32_t ino)
{
	for (size_t i = 0; i < sizeof(visible_journal_names) / sizeof(visible_journal_names[0]); i++) {
		const char *name = visible_journal_names[i];
		uint32_t found = 0;
		if (!ext4fs_dir_lookup(ctx->fs, EXT4FS_ROOT_INO, name, strlen(name), &found) && found == ino)
			return name;
	}
	return NULL;
}

/* Remove name from the root as e2fsck's unlink does, which leaves the directory's times as they were. */
static int unlink_keeping_times(struct e4fsck *ctx, struct ext4fs_inode *root, const char *name)
{
	struct ext4fs_inode kept = *root;
	int err = ext4fs_dir_remove(ctx->fs, EXT4FS_ROOT_INO, root, name, strlen(name), NULL);

	if (err)
		return err;
	root->i_ctime = kept.i_ctime;
	root->i_mtime = kept.i_mtime;
	root->i_ctime_extra = kept.i_ctime_extra;
	root->i_mtime_extra = kept.i_mtime_extra;
	return ext4fs_inode_write(ctx->fs, EXT4FS_ROOT_INO, root);
}

/*
 * The move itself, in e2fsck's order: the name goes, inode 8 takes the
 * journal inode's first 128 bytes (its own extra space stays), the
 * superblock names 8, and the old inode is deleted (no links, dtime now)
 * and freed in the bitmap and counts; its blocks are now inode 8's.
 * 0, or the library's error (what was done before it stays done).
 */
static int move_journal_inode(struct e4fsck *ctx, uint32_t ino, const char *name)
{
	uint32_t size = ctx->geo->inode_size;
	unsigned char *from = malloc(size), *to = malloc(size);
	struct ext4fs_inode root, old;
	int err = EXT4FS_E_NO_MEMORY;

	if (!from || !to)
		goto out;
	err = ext4fs_inode_read(ctx->fs, EXT4FS_ROOT_INO, &root);
	if (!err)
		err = unlink_keeping_times(ctx, &root, name);
	if (!err)
		err = ext4fs_inode_read_raw(ctx->fs, ino, from);
	if (!err)
		err = ext4fs_inode_read_raw(ctx->fs, EXT4FS_JOURNAL_INO, to);
	if (err)
		goto out;
	memcpy(to, from, EXT4FS_INODE_BASE_SIZE);
	err = ext4fs_inode_write_raw(ctx->fs, EXT4FS_JOURNAL_INO, to);
	if (err)
		goto out;
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	sb.s_journal_inum = EXT4FS_JOURNAL_INO;
	err = ext4fs_super_set_journal(ctx->fs, &sb);
	if (!err)
		err = ext4fs_inode_read(ctx->fs, ino, &old);
	if (err)
		goto out;
	old.i_links_count = 0;
	old.i_dtime = (uint32_t)ctx->now;
	err = ext4fs_inode_write(ctx->fs, ino, &old);
	if (!err)
		err = ext4fs_inode_mark_free(ctx->fs, ino, 0);
	/* A number the bitmap already calls free is pass 5's to report, as after e2fsck's move. */
	if (err == EXT4FS_E_INODE_STATE)
		err = 0;
out:
	free(from);
	free(to);
	return err;
}

int fsck_move_journal(struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	uint32_t ino = sb->s_journal_inum;
	struct ext4fs_inode in;

	if (ctx->read_only || !ino || !has_journal(sb) || ino == EXT4FS_JOURNAL_INO || ino > ctx->geo->inodes_count ||
	    ext4fs_inode_read(ctx->fs, ino, &in) || in.i_links_count != 1)
		return 0;
	const char *name = visible_journal_name(ctx, ino);
	if (!name)
		return 0;
	struct problem_ctx pctx = { .str = name };
	fix_problem(ctx, PR_0_MOVE_JOURNAL, &pctx);
	ctx->fs_modified = 1;
	int err = move_journal_inode(ctx, ino, name);
	if (!err)
		return 0;
	pctx.errmsg = ext4fs_strerror(err);
	fix_problem(ctx, PR_0_ERR_MOVE_JOURNAL, &pctx);
	/* As e2fsck: a move left half done calls for a full check next time. */
	struct ext4fs_super failed = *ext4fs_sb(ctx->fs);
	failed.s_state &= (uint16_t)~EXT4FS_STATE_VALID;
	err = ext4fs_super_set_journal(ctx->fs, &failed);
	if (err) {
		fsck_fatal(ctx, "%s while writing the superblock: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
		return -1;
	}
	return 0;
}

int fsck_fix_journal_hint(struct e4fsck *ctx)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);
	struct stat st;

	if (!has_journal(&sb) || uuid_is_null(sb.s_journal_uuid))
		return 0;
	const char *path = device_by_uuid(sb.s_journal_uuid);
	/* e2fsck compares the device number as stat gives it, and stores its low 32 bits. */
	if (!path || stat(path, &st) || (uint64_t)st.st_rdev == sb.s_journal_dev)
		return 0;
	struct problem_ctx pctx = { .num = (uint64_t)st.st_rdev };
	/* Either answer makes the whole check due, as in e2fsck: a fix made, or the file system left invalid. */
	if (!fix_problem(ctx, PR_0_EXTERNAL_JOURNAL_HINT, &pctx)) {
		ctx->fs_invalid = 1;
		return ctx->aborted ? -1 : 0;
	}
	ctx->force = 1;
	sb.s_journal_dev = (uint32_t)st.st_rdev;
	return fsck_super_set(ctx, &sb, 1);
}

/*
 * Why e2fsprogs' journal maker would give up on inode 8 as it now is, or
 * NULL: it starts from the record as it is, refuses one that still counts
 * blocks (EEXIST), and adds extents under an i_block that is not empty
 * only when it holds an extent header it accepts.  e4fsck's library makes
 * the inode anew, so the refusal is judged here, and printed as e2fsck
 * prints its error.
 */
static const char *journal_inode_refused(struct e4fsck *ctx)
{
	static const uint32_t zero[EXT4FS_N_BLOCKS];
	struct ext4fs_inode in;

	if (ext4fs_inode_read(ctx->fs, EXT4FS_JOURNAL_INO, &in))
		return NULL;   /* the library's own read reports it */
	if (ext4fs_inode_blocks_raw(ctx->fs, &in))
		return "File exists";
	if (memcmp(in.i_block, zero, sizeof(zero)) &&
	    (ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_EXTENTS) || (in.i_flags & EXT4FS_EXTENTS_FL)) &&
	    !ext4fs_extent_node_header_ok(in.i_block, sizeof(in.i_block)))
		return "Corrupt extent header";
	return NULL;
}

int fsck_recreate_journal(struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);

	if (!ctx->recreate_journal || ctx->read_only || !fix_problem(ctx, PR_6_RECREATE_JOURNAL, NULL))
		return 0;
	uint32_t blocks = ext4fs_mkfs_default_journal_blocks(ctx->geo->blocks_count);
	uint32_t fc = (sb->s_feature_compat & EXT4FS_FEATURE_COMPAT_FAST_COMMIT) ? blocks / 64 : 0;
	if (!blocks) {
		printf("%s: Couldn't determine journal size\n", ctx->prog);
		return 0;
	}
	printf("Creating journal (%u blocks): ", blocks);
	fflush(stdout);
	const char *refused = journal_inode_refused(ctx);
	if (refused) {
		printf("%s: while trying to create journal\n", refused);
		return 0;
	}
	int err = ext4fs_journal_create(ctx->fs, blocks, fc);
	if (err) {
		printf("%s: while trying to create journal\n", ext4fs_errmsg(ctx->fs));
		return 0;
	}
	ctx->fs_changed = 1;
	printf(" Done.\n");
	printf("\n*** journal has been regenerated ***\n");
	return 0;
}
