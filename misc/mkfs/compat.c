/*
 * compat.c - the --compat profiles: feature sets older readers accept.
 *
 * The reasons for each set are in mke4fs.8 (COMPATIBILITY PROFILES):
 *  - grub2.06: GRUB's ext2 driver refuses any incompatible feature it does
 *    not know.  2.06 knows filetype, extent, flex_bg, meta_bg, 64bit and
 *    encrypt (and ignores needs_recovery); metadata_csum_seed and large_dir
 *    were only added to its ignore list after 2.06.
 *  - e2fsprogs1.46: e2fsck before 1.47 refuses orphan_file (FEATURE_C12).
 *  - rhel7: Linux 3.10 and e2fsprogs 1.42.9; metadata_csum is replaced by
 *    uninit_bg, as mke2fs 1.42 made ext4.
 */
#include "config.h"
#include <string.h>
#include "ext4fs/super.h"
#include "mke4fs.h"

#define ALL_BITS 0xFFFFFFFFu

static const struct mk_compat_profile compat_profiles[] = {
	{ "grub2.06",
	  "GRUB 2.06 and older: no metadata_csum_seed, large_dir, inline_data, casefold, ea_inode",
	  { ALL_BITS,
	    EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_RECOVER |
		    EXT4FS_FEATURE_INCOMPAT_META_BG | EXT4FS_FEATURE_INCOMPAT_EXTENTS |
		    EXT4FS_FEATURE_INCOMPAT_64BIT | EXT4FS_FEATURE_INCOMPAT_FLEX_BG |
		    EXT4FS_FEATURE_INCOMPAT_ENCRYPT,
	    ALL_BITS },
	  0 },
	{ "e2fsprogs1.46",
	  "e2fsck 1.46 and older (Debian 11, Ubuntu 22.04, RHEL 9): no orphan_file",
	  { ALL_BITS & ~EXT4FS_FEATURE_COMPAT_ORPHAN_FILE,
	    ALL_BITS,
	    ALL_BITS & ~EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT },
	  0 },
	{ "rhel7",
	  "Linux 3.10 with e2fsprogs 1.42.9 (RHEL/CentOS 7): no metadata_csum (uninit_bg instead), "
	  "no feature newer than Linux 3.10",
	  { EXT4FS_FEATURE_COMPAT_HAS_JOURNAL | EXT4FS_FEATURE_COMPAT_EXT_ATTR |
		    EXT4FS_FEATURE_COMPAT_RESIZE_INODE | EXT4FS_FEATURE_COMPAT_DIR_INDEX,
	    EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_RECOVER |
		    EXT4FS_FEATURE_INCOMPAT_META_BG | EXT4FS_FEATURE_INCOMPAT_EXTENTS |
		    EXT4FS_FEATURE_INCOMPAT_64BIT | EXT4FS_FEATURE_INCOMPAT_FLEX_BG,
	    EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE |
		    EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE | EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM |
		    EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK | EXT4FS_FEATURE_RO_COMPAT_EXTRA_ISIZE },
	  EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM },
};

#define N_COMPAT (sizeof(compat_profiles) / sizeof(compat_profiles[0]))

const struct mk_compat_profile *mk_find_compat(const char *name)
{
	for (size_t i = 0; name && i < N_COMPAT; i++)
		if (!strcmp(compat_profiles[i].name, name))
			return &compat_profiles[i];
	return NULL;
}

int mk_compat_known(const char *name)
{
	return mk_find_compat(name) != NULL;
}

void mk_compat_list(FILE *f)
{
	fprintf(f, "Compatibility profiles (--compat=NAME):\n");
	for (size_t i = 0; i < N_COMPAT; i++)
		fprintf(f, "  %-14s %s\n", compat_profiles[i].name, compat_profiles[i].summary);
}
