/*
 * context.c - the state of one check (struct e4fsck, context.h) and the
 * helpers every step calls on it: opening the file system again, fatal
 * errors, the directories and directory blocks pass 1 lists, the maps'
 * size, and freeing what a run found.  The order of the steps is check.c's.
 */
#include "config.h"
#include <stddef.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/errors.h"
#include "ext4fs/fsfeatures.h"
#include "ext4fs/super.h"
#include "support/comerr.h"
#include "support/fsopen.h"
#include "context.h"
#include "relocate.h"
#include "mmp_check.h"

void fsck_fatal(struct e4fsck *ctx, const char *fmt, ...)
{
	va_list ap;

	/* e2fsck's com_err does not flush stdout: neither do we. */
	va_start(ap, fmt);
	sup_vcom_err_unflushed(ctx->prog, 0, NULL, fmt, ap);
	va_end(ap);
	ctx->exit_status |= FSCK_ERROR;
}

int fsck_super_set(struct e4fsck *ctx, const struct ext4fs_super *sb, int changed)
{
	int err = ext4fs_super_set(ctx->fs, sb);

	if (err) {
		fsck_fatal(ctx, "%s while fixing the superblock: %s", ext4fs_strerror(err), ext4fs_errmsg(ctx->fs));
		return -1;
	}
	if (changed)
		ctx->fs_changed = 1;
	return 0;
}

void fsck_super_advice(FILE *out)
{
	fprintf(out, "\nThe superblock could not be read or does not describe a valid ext2/ext3/ext4\n"
		"filesystem.  If the device is valid and it really contains an ext2/ext3/ext4\n"
		"filesystem (and not swap or ufs or something else), then the superblock\n"
		"is corrupt, and you might try running e4fsck with an alternate superblock:\n"
		"    e4fsck -b 8193 <device>\n or\n    e4fsck -b 32768 <device>\n\n");
}

/*
 * The feature bits e2fsprogs 1.47's library supports (ext2fs.h's
 * EXT2_LIB_FEATURE_*_SUPP, with MMP): e2fsck refuses a file system with any
 * other bit set, compat bits too, and so does e4fsck, in e2fsck's words.
 */
static const uint32_t e2fsck_supported[3] = {
	0x1E3Fu,        /* dir_prealloc imagic_inodes has_journal ext_attr resize_inode dir_index
			   sparse_super2 fast_commit stable_inodes orphan_file */
	0x3E7DEu,       /* filetype needs_recovery journal_dev meta_bg extent 64bit mmp flex_bg
			   ea_inode metadata_csum_seed large_dir inline_data encrypt casefold */
	0x1F77Bu,       /* sparse_super large_file huge_file uninit_bg dir_nlink extra_isize quota
			   bigalloc metadata_csum read-only project shared_blocks verity orphan_present */
};

int fsck_say_unsupported(struct e4fsck *ctx, const uint32_t features[3])
{
	uint32_t unknown[3];

	for (int w = 0; w < 3; w++)
		unknown[w] = features[w] & ~e2fsck_supported[w];
	if (!unknown[0] && !unknown[1] && !unknown[2])
		return 0;
	fflush(stdout);
	fprintf(stderr, "%s has unsupported feature(s):", ctx->path);
	for (int w = 0; w < 3; w++)
		for (int bit = 0; bit < 32; bit++) {
			uint32_t m = (uint32_t)1 << bit;
			const char *name = (unknown[w] & m) ? ext4fs_feature_name(w, m) : NULL;
			if (name)
				fprintf(stderr, " %s", name);
			else if (unknown[w] & m)
				fprintf(stderr, " FEATURE_%c%d", "CIR"[w], bit);
		}
	fprintf(stderr, "\n%s: Get a newer version of %s!\n", ctx->prog, ctx->prog);
	/* e2fsck's open fails on these: incompatible bits, read-only-compatible ones for writing. */
	return unknown[1] || (!ctx->read_only && unknown[2]) ? 2 : 1;
}

/* The primary superblock's feature words, read raw; 1 when e2fsck's refusal was printed for them. */
static int primary_features_unsupported(struct e4fsck *ctx)
{
	unsigned char raw[1024];
	struct ext4fs_super sb;
	FILE *f = fopen(ctx->path, "rb");
	int ok = f && fseek(f, 1024, SEEK_SET) == 0 && fread(raw, 1, sizeof(raw), f) == sizeof(raw);

	if (f)
		fclose(f);
	if (!ok)
		return 0;
	ext4fs_super_decode(&sb, raw);
	const uint32_t features[3] = { sb.s_feature_compat, sb.s_feature_incompat, sb.s_feature_ro_compat };
	return fsck_say_unsupported(ctx, features) != 0;
}

/*
 * Open the file system with EXT4FS_OPEN_IGNORE_CSUM and flags (0 for a
 * read-only handle, EXT4FS_OPEN_RW, EXT4FS_OPEN_RECOVERY).
 */
int fsck_open(struct e4fsck *ctx, unsigned flags)
{
	struct ext4fs_open_opts opts = { 0 };
	char msg[512];
	int err;

	/*
	 * The quota files are rewritten after pass 5 (quota.c); misplaced
	 * bitmaps and inode tables are the checker's to relocate (relocate.c);
	 * with bigalloc, blocks are taken from e4fsck's own maps a cluster at a
	 * time.
	 */
	opts.flags = EXT4FS_OPEN_IGNORE_CSUM | EXT4FS_OPEN_QUOTA_BY_CALLER | EXT4FS_OPEN_MISPLACED_OK |
		     EXT4FS_OPEN_CLUSTERS_BY_CALLER | (ctx->despite_errors ? EXT4FS_OPEN_SB_ERRORS_OK : 0) | flags;
	opts.superblock = ctx->superblock;
	opts.block_size = ctx->blocksize;
	ctx->open_opts = opts;
	err = sup_fs_open(ctx->path, &opts, ctx->undo_path, &ctx->fs, msg, sizeof(msg));
	if (err && fsck_mmp_open_failed(ctx, err)) {
		ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	/* Bits the library does not know: refused in e2fsck's words, read from the primary superblock. */
	if (err == EXT4FS_E_UNSUPP_FEATURE && !ctx->superblock && primary_features_unsupported(ctx)) {
		ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	if (err) {
		fprintf(stderr, "%s: %s while trying to open %s\n", ctx->prog, msg, ctx->path);
		if (err == EXT4FS_E_BAD_MAGIC || err == EXT4FS_E_CORRUPT_SUPER)
			fsck_super_advice(stderr);
		ctx->exit_status |= FSCK_ERROR;
		return -1;
	}
	ctx->geo = ext4fs_geom(ctx->fs);
	ext4fs_set_time(ctx->fs, ctx->now, 0);
	/* On a backup the library rewrites the primary at flush; e2fsck counts that as a change. */
	if (ctx->superblock && (flags & EXT4FS_OPEN_RW))
		ctx->fs_changed = 1;
	/* Like e2fsck, messages name the file system by its label when it has one. */
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	if (sb->s_volume_name[0]) {
		memcpy(ctx->label, sb->s_volume_name, sizeof(sb->s_volume_name));
		ctx->label[sizeof(sb->s_volume_name)] = '\0';
		ctx->device = ctx->label;
	}
	return 0;
}

int fsck_reopen(struct e4fsck *ctx, unsigned flags)
{
	int err = ext4fs_close_flush(ctx->fs);

	ctx->fs = NULL;
	if (err) {
		fsck_fatal(ctx, "%s while writing %s", ext4fs_strerror(err), ctx->device);
		return -1;
	}
	return fsck_open(ctx, flags);
}

/* The maps pass 1 fills, sized by the file system; pages of one group each. */
int fsck_init_maps(struct e4fsck *ctx)
{
	const struct ext4fs_geom *g = ctx->geo;
	unsigned ishift = 6, bshift = 6;

	while ((1U << ishift) < g->inodes_per_group && ishift < 20)
		ishift++;
	while ((1U << bshift) < g->blocks_per_group && bshift < 20)
		bshift++;
	uint64_t ilimit = (uint64_t)g->inodes_count + 1;
	if (bitmap_paged_init(&ctx->inode_used, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->inode_dir, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->inode_reg, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->inode_bad, ilimit, ishift) ||
	    bitmap_paged_init(&ctx->block_found, g->blocks_count, bshift) ||
	    bitmap_paged_init(&ctx->block_dup, g->blocks_count, bshift) ||
	    counter_paged_init(&ctx->links_disk, ilimit, ishift) ||
	    counter_paged_init(&ctx->links_seen, ilimit, ishift)) {
		fsck_fatal(ctx, "out of memory for the check's maps");
		return -1;
	}
	return 0;
}

/*
 * What one run of the passes found: the maps, the lists and the counts.
 * Freed at the end, and before a restart, which starts from nothing but
 * the extent trees pass 1 was told to rebuild: as in e2fsck, a run that
 * restarts before pass 1E leaves them to the next run's pass 1E.
 */
void fsck_free_run_state(struct e4fsck *ctx)
{
	bitmap_paged_free(&ctx->inode_used);
	bitmap_paged_free(&ctx->inode_dir);
	bitmap_paged_free(&ctx->inode_reg);
	bitmap_paged_free(&ctx->inode_bad);
	bitmap_paged_free(&ctx->block_found);
	bitmap_paged_free(&ctx->block_dup);
	counter_paged_free(&ctx->links_disk);
	counter_paged_free(&ctx->links_seen);
	free(ctx->dirs);
	ctx->dirs = NULL;
	ctx->ndirs = ctx->capdirs = 0;
	free(ctx->dir_blocks);
	ctx->dir_blocks = NULL;
	ctx->ndir_blocks = ctx->capdir_blocks = 0;
	free(ctx->rehash);
	ctx->rehash = NULL;
	ctx->nrehash = ctx->caprehash = 0;
	xattr_table_free(&ctx->xattrs);
	xattr_table_free(&ctx->ea_inode_refs);
	fsck_encrypted_free(&ctx->encrypted);
	free(ctx->kept_blocks);
	ctx->kept_blocks = NULL;
	ctx->nkept_blocks = ctx->capkept_blocks = 0;
	ctx->files_fragmented = 0;
	memset(&ctx->stats, 0, sizeof(ctx->stats));
	ctx->inodes_in_use = ctx->blocks_in_use = 0;
	ctx->lost_found = 0;
	ctx->lost_found_bad = 0;
	ctx->restart = 0;
	ctx->restart_later = 0;
	ctx->restart_unscanned = 0;
	ctx->large_dirs = 0;
	ctx->ncollisions = 0;
	range_set_free(&ctx->fs_meta);
}

void fsck_free_ctx(struct e4fsck *ctx)
{
	fsck_free_run_state(ctx);
	fsck_relocate_free(ctx);
	free(ctx->bad_list);
	free(ctx->restart_cleared);
	free(ctx->collisions);
	free(ctx->rebuild);
	for (size_t i = 0; i < ctx->nlog; i++)
		free(ctx->log[i].message);
	free(ctx->log);
	if (ctx->fs)
		ext4fs_close(ctx->fs);
	ctx->fs = NULL;
}

struct dir_info *fsck_dir_info(struct e4fsck *ctx, uint32_t ino)
{
	size_t lo = 0, hi = ctx->ndirs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->dirs[mid].ino == ino)
			return &ctx->dirs[mid];
		if (ctx->dirs[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int fsck_add_dir_block(struct e4fsck *ctx, uint32_t ino, uint32_t lblk, uint64_t pblk)
{
	if (ctx->ndir_blocks == ctx->capdir_blocks) {
		struct dir_block *grown =
			ext4fs_array_grow(ctx->dir_blocks, &ctx->capdir_blocks, ctx->ndir_blocks + 1, sizeof(*grown), 1024);
		if (!grown)
			return -ENOMEM;
		ctx->dir_blocks = grown;
	}
	ctx->dir_blocks[ctx->ndir_blocks++] = (struct dir_block){ ino, lblk, pblk };
	return 0;
}

int fsck_inode_has_blocks(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in)
{
	uint16_t type = in->i_mode & EXT4FS_S_IFMT;

	if (in->i_flags & EXT4FS_INLINE_DATA_FL)
		return 0;
	if (type == EXT4FS_S_IFLNK)
		return !ext4fs_inode_is_fast_symlink(fs, in);
	/*
	 * As e2fsck's rule: a file of no kind has no map it would walk (its
	 * i_blocks should then be 0), but the bad-blocks inode, whose mode is 0,
	 * is walked by a rule of its own.
	 */
	return type == EXT4FS_S_IFREG || type == EXT4FS_S_IFDIR || (type == 0 && ino == EXT4FS_BAD_INO);
}

void fsck_cleared_record(const struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in)
{
	in->i_flags = 0;
	in->i_links_count = 0;
	in->i_dtime = (uint32_t)ctx->now;
	/*
	 * As e2fsck: a reserved inode is looked at whatever its link count, so
	 * its map goes too, or the next run would find the same blocks again.
	 */
	if (ino < ctx->geo->first_ino)
		memset(in->i_block, 0, sizeof(in->i_block));
	/* As e2fsck: the bad blocks inode loses every field of the base record, so it no longer looks invalid. */
	if (ino == EXT4FS_BAD_INO)
		memset(in, 0, offsetof(struct ext4fs_inode, i_extra_isize));
}

void fsck_clear_inode(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in)
{
	fsck_cleared_record(ctx, ino, in);
	if (bitmap_paged_test(&ctx->inode_used, ino))
		ctx->inodes_in_use--;
	bitmap_paged_clear_range(&ctx->inode_used, ino, 1);
	bitmap_paged_clear_range(&ctx->inode_dir, ino, 1);
	bitmap_paged_clear_range(&ctx->inode_reg, ino, 1);
	bitmap_paged_clear_range(&ctx->inode_bad, ino, 1);
	counter_paged_set(&ctx->links_disk, ino, 0);
}

size_t fsck_memory(const struct e4fsck *ctx)
{
	return bitmap_paged_bytes(&ctx->inode_used) + bitmap_paged_bytes(&ctx->inode_dir) +
	       bitmap_paged_bytes(&ctx->inode_reg) + bitmap_paged_bytes(&ctx->inode_bad) +
	       bitmap_paged_bytes(&ctx->block_found) + bitmap_paged_bytes(&ctx->block_dup) +
	       counter_paged_bytes(&ctx->links_disk) + counter_paged_bytes(&ctx->links_seen) +
	       ctx->capdirs * sizeof(*ctx->dirs) + ctx->capdir_blocks * sizeof(*ctx->dir_blocks);
}
