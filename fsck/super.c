/*
 * super.c - checks before pass 1: the group descriptors' checksums.
 *
 * A descriptor whose checksum fails is not trusted by the library (its
 * uninit flags are ignored, so its inode table is read in full); e2fsck
 * asks once whether to fix them all, then names each group.
 */
#include "config.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/super.h"
#include "e4fsck.h"
#include "problem.h"
#include "problems.h"

/* Write group g's descriptor (with a fresh checksum). */
static int set_desc(struct e4fsck *ctx, uint32_t g, const struct ext4fs_group_desc *gd)
{
	struct ext4fs_group_desc copy = *gd;
	int err = ext4fs_group_desc_set(ctx->fs, g, &copy);

	if (err) {
		fsck_fatal(ctx, "%s while fixing the descriptor of group %u: %s", ext4fs_strerror(err), g,
			   ext4fs_errmsg(ctx->fs));
		return -1;
	}
	ctx->fs_changed = 1;
	return 0;
}

int fsck_check_super(struct e4fsck *ctx)
{
	int has_csum = ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM) ||
		       ext4fs_has_ro_compat(ctx->fs, EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM);

	for (uint32_t g = 0; g < ctx->geo->group_count; g++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(ctx->fs, g);
		struct problem_ctx pctx = { .group = g };

		if (ext4fs_group_desc_csum_ok(ctx->fs, g))
			goto unused;
		pctx.num = gd->checksum;
		pctx.num2 = ext4fs_group_desc_csum(ctx->fs, g);
		if (!fix_problem(ctx, PR_0_GDT_CSUM, &pctx))
			goto unused;
		/* As e2fsck: a descriptor that failed its checksum keeps no uninit shortcuts. */
		struct ext4fs_group_desc copy = *gd;
		copy.flags &= (uint16_t)~(EXT4FS_BG_BLOCK_UNINIT | EXT4FS_BG_INODE_UNINIT);
		copy.itable_unused = 0;
		if (set_desc(ctx, g, &copy))
			return -1;
unused:
		gd = ext4fs_group(ctx->fs, g);
		if (has_csum && gd->itable_unused > gd->free_inodes_count) {
			pctx.num = gd->itable_unused;
			if (fix_problem(ctx, PR_0_GDT_ITABLE_UNUSED, &pctx)) {
				struct ext4fs_group_desc fixed = *gd;
				fixed.itable_unused = 0;
				if (set_desc(ctx, g, &fixed))
					return -1;
			}
		}
	}
	return 0;
}
