/*
 * quota.c - the quota feature's usage, after pass 5 as in e2fsck: the
 * space and inodes each user, group and project uses are counted from the
 * inodes in use, compared with what the quota files say, and a file that
 * disagrees (or cannot be read) is rewritten on a yes, keeping its limits.
 *
 * e2fsck counts an inode the way its pass 1 sees it: the root and every
 * inode from s_first_ino on, but for the project quota file, the orphan
 * file and EA inodes; space is the blocks its walk claimed (map blocks and
 * the attribute block included), one inode each.  Here the count is taken
 * from i_blocks after the passes: a repairing run has made i_blocks what
 * e2fsck's walk claims; where a wrong i_blocks was kept (a no), pass 1
 * noted what it counted (fsck_quota_keep_blocks()).  Each EA inode holding
 * one of an inode's attribute values counts as one more inode of its owner
 * (the kernel charges it so).
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/inode.h"
#include "ext4fs/quota.h"
#include "ext4fs/super.h"
#include "ext4fs/xattr.h"
#include "context.h"
#include "dirs.h"
#include "passes.h"
#include "problem.h"
#include "problems.h"

/* Reserved inodes the library has no name for: the exclude bitmap's and the replica's. */
#define EXCLUDE_INO 9
#define REPLICA_INO 10

/* i_projid, in the inode's extra space. */
#define PROJID_OFFSET 0x9C

struct usage {
	struct ext4fs_quota_record *v;
	size_t n, cap;
};

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = ((const struct ext4fs_quota_record *)a)->id, y = ((const struct ext4fs_quota_record *)b)->id;

	return x < y ? -1 : x > y;
}

static int usage_add(struct usage *u, uint32_t id, uint64_t space, uint64_t inodes)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 256;
		struct ext4fs_quota_record *v = realloc(u->v, cap * sizeof(*v));
		if (!v)
			return -1;
		u->v = v;
		u->cap = cap;
	}
	u->v[u->n++] = (struct ext4fs_quota_record){ .id = id, .space = space, .inodes = inodes };
	return 0;
}

/* One record per id, sorted. */
static void usage_settle(struct usage *u)
{
	size_t k = 0;

	if (u->n)
		qsort(u->v, u->n, sizeof(*u->v), cmp_id);
	for (size_t i = 0; i < u->n; i++) {
		if (k && u->v[k - 1].id == u->v[i].id) {
			u->v[k - 1].space += u->v[i].space;
			u->v[k - 1].inodes += u->v[i].inodes;
		} else {
			u->v[k++] = u->v[i];
		}
	}
	u->n = k;
}

static int count_ea_inode_ref(const struct ext4fs_xattr *x, void *arg)
{
	if (x->value_inum)
		++*(uint64_t *)arg;
	return 0;
}

/*
 * The inodes an inode is charged for: itself and, as the kernel charges
 * them, each EA inode one of its attributes keeps a value in.  Attributes
 * that cannot be read count up to where reading stopped: the passes before
 * have repaired what e2fsck repairs, and -n counts what e2fsck's walk sees.
 */
static uint64_t charged_inodes(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in)
{
	uint64_t n = 0;

	if (ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_EA_INODE))
		(void)ext4fs_xattr_iterate(ctx->fs, ino, in, EXT4FS_XATTR_ITER_NO_EA_VALUES, count_ea_inode_ref, &n);
	return n + 1;
}

static uint32_t quota_id(const struct ext4fs_inode *in, enum ext4fs_quota_type t)
{
	switch (t) {
	case EXT4FS_QUOTA_USER: return ext4fs_inode_uid(in);
	case EXT4FS_QUOTA_GROUP: return ext4fs_inode_gid(in);
	case EXT4FS_QUOTA_PROJECT: return ext4fs_inode_has_field(in, PROJID_OFFSET, 4) ? in->i_projid : 0;
	}
	return 0;
}

int fsck_quota_keep_blocks(struct e4fsck *ctx, uint32_t ino, uint64_t bytes)
{
	if (ctx->nkept_blocks == ctx->capkept_blocks) {
		size_t cap = ctx->capkept_blocks ? ctx->capkept_blocks * 2 : 16;
		struct fsck_kept_blocks *v = realloc(ctx->kept_blocks, cap * sizeof(*v));
		if (!v) {
			fsck_fatal(ctx, "out of memory in pass 1");
			return -1;
		}
		ctx->kept_blocks = v;
		ctx->capkept_blocks = cap;
	}
	ctx->kept_blocks[ctx->nkept_blocks++] = (struct fsck_kept_blocks){ .ino = ino, .bytes = bytes };
	return 0;
}

static int cmp_kept(const void *a, const void *b)
{
	uint32_t x = ((const struct fsck_kept_blocks *)a)->ino, y = ((const struct fsck_kept_blocks *)b)->ino;

	return x < y ? -1 : x > y;
}

/* The bytes an inode is charged for: what pass 1 counted when its i_blocks was left wrong, else i_blocks. */
static uint64_t charged_space(struct e4fsck *ctx, uint32_t ino, const struct ext4fs_inode *in)
{
	struct fsck_kept_blocks key = { .ino = ino };
	const struct fsck_kept_blocks *k =
		ctx->nkept_blocks ? bsearch(&key, ctx->kept_blocks, ctx->nkept_blocks, sizeof(key), cmp_kept) : NULL;

	return k ? k->bytes : ext4fs_inode_sectors(ctx->fs, in) * 512;
}

/* What the inodes in use charge each id of each type the superblock names a file for. */
static int count_usage(struct e4fsck *ctx, struct usage u[EXT4FS_QUOTA_TYPES], const uint32_t inum[EXT4FS_QUOTA_TYPES])
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	struct ext4fs_inode in;

	/* Sorted for charged_space()'s lookups; an inode is asked about its i_blocks once. */
	if (ctx->nkept_blocks)
		qsort(ctx->kept_blocks, ctx->nkept_blocks, sizeof(*ctx->kept_blocks), cmp_kept);
	for (uint64_t ino = bitmap_paged_next_set(&ctx->inode_used, 1); ino <= ctx->geo->inodes_count;
	     ino = bitmap_paged_next_set(&ctx->inode_used, ino + 1)) {
		if (ino != EXT4FS_ROOT_INO && ino < ctx->geo->first_ino)
			continue;
		if (ino == sb->s_prj_quota_inum || ino == sb->s_orphan_file_inum)
			continue;
		if (ext4fs_inode_read(ctx->fs, (uint32_t)ino, &in)) {
			fsck_fatal(ctx, "%s while reading inode %" PRIu64 " to count quota usage",
				   ext4fs_errmsg(ctx->fs), ino);
			return -1;
		}
		if (in.i_flags & EXT4FS_EA_INODE_FL)
			continue;
		uint64_t space = charged_space(ctx, (uint32_t)ino, &in), inodes = charged_inodes(ctx, (uint32_t)ino, &in);
		for (int t = 0; t < EXT4FS_QUOTA_TYPES; t++)
			if (inum[t] && usage_add(&u[t], quota_id(&in, (enum ext4fs_quota_type)t), space, inodes)) {
				fsck_fatal(ctx, "out of memory counting quota usage");
				return -1;
			}
	}
	for (int t = 0; t < EXT4FS_QUOTA_TYPES; t++)
		usage_settle(&u[t]);
	return 0;
}

/*
 * Compare the file's records with the count, in the file's (id) order, as
 * e2fsck does, with its warnings; the file's limits go into the count, and
 * ids the file has but no inode uses join it.  1 when they disagree, 0
 * when not, -1 out of memory.
 */
static int compare(struct usage *u, const struct ext4fs_quota_file *f)
{
	size_t counted = u->n;
	unsigned char *seen = calloc(counted ? counted : 1, 1);
	int differ = 0;

	if (!seen)
		return -1;
	fflush(stdout);
	for (size_t i = 0; i < f->count; i++) {
		const struct ext4fs_quota_record *disk = &f->recs[i];
		struct ext4fs_quota_record *mem = counted ? bsearch(disk, u->v, counted, sizeof(*u->v), cmp_id) : NULL;
		if (!mem) {
			if (usage_add(u, disk->id, 0, 0)) {
				free(seen);
				return -1;
			}
			mem = &u->v[u->n - 1];
		} else {
			seen[mem - u->v] = 1;
		}
		if (mem->space != disk->space || mem->inodes != disk->inodes) {
			differ = 1;
			fprintf(stderr, "[QUOTA WARNING] Usage inconsistent for ID %u:actual (%lld, %lld) != "
				"expected (%lld, %lld)\n", mem->id, (long long)mem->space, (long long)mem->inodes,
				(long long)disk->space, (long long)disk->inodes);
		}
		mem->block_hard = disk->block_hard;
		mem->block_soft = disk->block_soft;
		mem->inode_hard = disk->inode_hard;
		mem->inode_soft = disk->inode_soft;
	}
	for (size_t i = 0; i < counted; i++)
		if (!seen[i]) {
			differ = 1;
			fprintf(stderr, "[QUOTA WARNING] Missing quota entry ID %d\n", (int)u->v[i].id);
		}
	fflush(stderr);
	free(seen);
	usage_settle(u);
	return differ;
}

/* Name quota file ino in the superblock for type t; 0 or -1. */
static int set_quota_inum(struct e4fsck *ctx, enum ext4fs_quota_type t, uint32_t ino)
{
	struct ext4fs_super sb = *ext4fs_sb(ctx->fs);

	if (t == EXT4FS_QUOTA_USER)
		sb.s_usr_quota_inum = ino;
	else if (t == EXT4FS_QUOTA_GROUP)
		sb.s_grp_quota_inum = ino;
	else
		sb.s_prj_quota_inum = ino;
	return fsck_super_set(ctx, &sb, 1);
}

/* As e2fsprogs' rewrite: a grace period starts now for whoever is over a soft limit, else none. */
static void set_grace(struct ext4fs_quota_record *r, int64_t now, uint32_t grace)
{
	uint64_t kib = (r->space + 1023) / 1024;

	r->block_grace_end = r->block_soft && kib > r->block_soft ? (uint64_t)now + grace : 0;
	r->inode_grace_end = r->inode_soft && r->inodes > r->inode_soft ? (uint64_t)now + grace : 0;
}

/*
 * As e2fsprogs writes a quota file: the user and group files into their
 * reserved inodes (3 and 4) whatever the superblock named, the project
 * file into the inode it names; the superblock then names the file.
 */
static int rewrite(struct e4fsck *ctx, enum ext4fs_quota_type t, uint32_t named, struct usage *u)
{
	struct ext4fs_quota_file q = { .block_grace = EXT4FS_QUOTA_DEFAULT_GRACE,
				       .inode_grace = EXT4FS_QUOTA_DEFAULT_GRACE, .recs = u->v, .count = u->n };
	uint32_t ino = t == EXT4FS_QUOTA_USER ? EXT4FS_USR_QUOTA_INO : t == EXT4FS_QUOTA_GROUP ? EXT4FS_GRP_QUOTA_INO : named;

	for (size_t i = 0; i < u->n; i++)
		set_grace(&u->v[i], ctx->now, EXT4FS_QUOTA_DEFAULT_GRACE);
	int err = ext4fs_quota_write(ctx->fs, ino, t, &q);
	if (err) {
		fsck_fatal(ctx, "%s while writing quota file %u: %s", ext4fs_strerror(err), ino,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return ino != named ? set_quota_inum(ctx, t, ino) : 0;
}

/* The reserved inodes e2fsck will not take as a quota file, and numbers past the last inode. */
static int quota_inum_invalid(const struct e4fsck *ctx, uint32_t ino)
{
	switch (ino) {
	case EXT4FS_BAD_INO:
	case EXT4FS_ROOT_INO:
	case EXT4FS_BOOT_LOADER_INO:
	case EXT4FS_UNDEL_DIR_INO:
	case EXT4FS_RESIZE_INO:
	case EXT4FS_JOURNAL_INO:
	case EXCLUDE_INO:
	case REPLICA_INO:
		return 1;
	}
	return ino > ext4fs_sb(ctx->fs)->s_inodes_count;
}

int fsck_validate_quota_inodes(struct e4fsck *ctx)
{
	for (int t = 0; t < EXT4FS_QUOTA_TYPES; t++) {
		struct problem_ctx pctx = { .ino = ext4fs_quota_inum(ext4fs_sb(ctx->fs), (enum ext4fs_quota_type)t),
					    .num = (uint64_t)t };
		if (!pctx.ino || !quota_inum_invalid(ctx, pctx.ino))
			continue;
		int yes = fix_problem(ctx, PR_0_INVALID_QUOTA_INO, &pctx);
		/* Preen mode stops here (not a problem it repairs alone). */
		if (ctx->aborted)
			return -1;
		if (!yes)
			continue;
		if (set_quota_inum(ctx, (enum ext4fs_quota_type)t, 0))
			return -1;
	}
	return 0;
}

/* e2fsprogs' names for the quota files it links in the root (quota_get_qf_name()). */
static const char *const visible_names[EXT4FS_QUOTA_TYPES] = { "aquota.user", "aquota.group", "aquota.project" };

#define GOOD_OLD_INODE_SIZE 128
#define I_MODE 0x00
#define I_LINKS 0x1A
#define I_FLAGS 0x20
#define I_EXTRA_ISIZE 0x80
#define I_CRTIME 0x90
/* What e2fsprogs gives a new inode's extra space: the fields of its large inode. */
#define NEW_EXTRA_ISIZE 32

static int raw_inode(struct e4fsck *ctx, uint32_t ino, unsigned char *raw, int write)
{
	int err = write ? ext4fs_inode_write_raw(ctx->fs, ino, raw) : ext4fs_inode_read_raw(ctx->fs, ino, raw);

	if (err)
		fsck_fatal(ctx, "%s while %s inode %u to hide a quota file: %s", ext4fs_strerror(err),
			   write ? "writing" : "reading", ino, ext4fs_errmsg(ctx->fs));
	return err ? -1 : 0;
}

/*
 * e2fsck's move of a visible quota file into its reserved inode: to gets
 * from's first 128 bytes as a new inode (a regular file of mode 0600, one
 * link, immutable, the extents flag on an extent file system, an extra
 * space of its own), then from's name in the root is removed, from is
 * freed and its first 128 bytes zeroed.  When the root has no such name
 * the move stops there, with e2fsck's words: the superblock keeps naming
 * from.  1 moved, 0 stopped, -1 fatal.
 */
static int move_quota_inode(struct e4fsck *ctx, uint32_t from, uint32_t to, enum ext4fs_quota_type t)
{
	uint32_t size = ctx->geo->inode_size, named = 0;
	unsigned char *raw = calloc(1, size), *moved = calloc(1, size);
	struct ext4fs_inode root;
	int rc = -1;

	if (!raw || !moved) {
		fsck_fatal(ctx, "out of memory hiding a quota file");
		goto out;
	}
	if (raw_inode(ctx, from, raw, 0))
		goto out;
	memcpy(moved, raw, GOOD_OLD_INODE_SIZE);
	moved[I_LINKS] = 1;
	moved[I_LINKS + 1] = 0;
	uint16_t mode = EXT4FS_S_IFREG | 0600;
	moved[I_MODE] = (unsigned char)mode;
	moved[I_MODE + 1] = (unsigned char)(mode >> 8);
	uint32_t flags = EXT4FS_IMMUTABLE_FL |
			 (ext4fs_has_incompat(ctx->fs, EXT4FS_FEATURE_INCOMPAT_EXTENTS) ? EXT4FS_EXTENTS_FL : 0);
	for (int i = 0; i < 4; i++)
		moved[I_FLAGS + i] = (unsigned char)(flags >> (8 * i));
	if (size > GOOD_OLD_INODE_SIZE) {
		moved[I_EXTRA_ISIZE] = NEW_EXTRA_ISIZE;
		for (int i = 0; i < 4; i++)
			moved[I_CRTIME + i] = (unsigned char)((uint64_t)ctx->now >> (8 * i));
	}
	if (raw_inode(ctx, to, moved, 1))
		goto out;
	ctx->fs_changed = 1;
	const char *name = visible_names[t];
	int err = ext4fs_dir_lookup(ctx->fs, EXT4FS_ROOT_INO, name, strlen(name), &named);
	if (err || named != from) {
		/* libext2fs's unlink says so when no entry matches. */
		fflush(stdout);
		fprintf(stderr, "ext2fs_unlink: No free space in the directory in move_quota_inode\n");
		fflush(stderr);
		rc = 0;
		goto out;
	}
	err = ext4fs_inode_read(ctx->fs, EXT4FS_ROOT_INO, &root);
	if (!err)
		err = ext4fs_dir_remove(ctx->fs, EXT4FS_ROOT_INO, &root, name, strlen(name), NULL);
	if (!err) {
		err = ext4fs_inode_mark_free(ctx->fs, from, 0);
		/* A number the bitmap already calls free is left to pass 5, as e2fsck leaves its counts. */
		if (err == EXT4FS_E_INODE_STATE)
			err = 0;
	}
	if (err) {
		fsck_fatal(ctx, "%s while hiding quota file %u: %s", ext4fs_strerror(err), from, ext4fs_errmsg(ctx->fs));
		goto out;
	}
	memset(raw, 0, GOOD_OLD_INODE_SIZE);
	rc = raw_inode(ctx, from, raw, 1) ? -1 : 1;
out:
	free(raw);
	free(moved);
	return rc;
}

int fsck_hide_quota_inodes(struct e4fsck *ctx)
{
	if (ctx->read_only || !ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_QUOTA))
		return 0;
	for (int t = EXT4FS_QUOTA_USER; t <= EXT4FS_QUOTA_GROUP; t++) {
		uint32_t from = ext4fs_quota_inum(ext4fs_sb(ctx->fs), (enum ext4fs_quota_type)t);
		uint32_t to = t == EXT4FS_QUOTA_USER ? EXT4FS_USR_QUOTA_INO : EXT4FS_GRP_QUOTA_INO;
		if (!from || from == to)
			continue;
		struct problem_ctx pctx = { .ino = from, .dir = EXT4FS_ROOT_INO, .num = (uint64_t)t };
		char *path = fsck_path(ctx, EXT4FS_ROOT_INO, from);
		pctx.path = path ? path : "???";
		/* A message, no question: e2fsck moves the file whatever the mode (but -n, which never gets here). */
		fix_problem(ctx, PR_0_HIDE_QUOTA, &pctx);
		free(path);
		if (ctx->aborted)
			return -1;
		int moved = move_quota_inode(ctx, from, to, (enum ext4fs_quota_type)t);
		if (moved < 0 || (moved && set_quota_inum(ctx, (enum ext4fs_quota_type)t, to)))
			return -1;
	}
	return 0;
}

int fsck_check_quota(struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	struct usage u[EXT4FS_QUOTA_TYPES] = { 0 };
	uint32_t inum[EXT4FS_QUOTA_TYPES];
	int rc = 0;

	if (!ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_QUOTA))
		return 0;
	for (int t = 0; t < EXT4FS_QUOTA_TYPES; t++)
		inum[t] = ext4fs_quota_inum(sb, (enum ext4fs_quota_type)t);
	if (count_usage(ctx, u, inum)) {
		rc = -1;
		goto out;
	}
	for (int t = 0; t < EXT4FS_QUOTA_TYPES && !rc; t++) {
		struct ext4fs_quota_file f;
		if (!inum[t])
			continue;
		int differ = 0, err = ext4fs_quota_read(ctx->fs, inum[t], (enum ext4fs_quota_type)t, &f);
		if (err) {
			/* e2fsck names a file it cannot read on stderr, then offers to write it anew. */
			fflush(stdout);
			fprintf(stderr, "[ERROR] %s\n", ext4fs_errmsg(ctx->fs));
			fflush(stderr);
		} else {
			differ = compare(&u[t], &f);
		}
		ext4fs_quota_file_free(&f);
		if (differ < 0) {
			fsck_fatal(ctx, "out of memory comparing quota usage");
			rc = -1;
			break;
		}
		struct problem_ctx pctx = { .num = (uint64_t)t };
		if ((err || differ) && fix_problem(ctx, PR_6_UPDATE_QUOTAS, &pctx))
			rc = rewrite(ctx, (enum ext4fs_quota_type)t, inum[t], &u[t]);
	}
out:
	for (int t = 0; t < EXT4FS_QUOTA_TYPES; t++)
		free(u[t].v);
	return rc;
}
