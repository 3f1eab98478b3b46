/*
 * fs_open.c - opening a handle: the read-only half from fs.c, then, for a
 * writable handle, the write layer's checks and state (fs_write.c), and the
 * descriptors beside a backup superblock, which a writable handle owes to
 * the next flush.
 */
#include "config.h"
#include <stdio.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/fs.h"
#include "ext4fs/io_overlay.h"
#include "bitmap_internal.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "mmp_internal.h"

/*
 * The descriptor copies beside a backup superblock are as old as the backup
 * (mkfs or the last resize): their UNINIT flags and unused-inode counts may
 * hide blocks and inodes in use since.  As e2fsprogs does, they are dropped
 * (checksums recomputed) so readers scan every group in full.  A writable
 * handle first loads the bitmaps (while the flags still say which groups
 * have none on disk) and then owes everything to the next flush: bitmaps
 * with fresh checksums, every descriptor block and the superblock, which is
 * how a damaged primary copy gets repaired.  The blocks it skipped are read
 * for their findings (ext4fs_bitmap_group_flags()) only: a checker that no
 * longer believes the flags finds what they hold.  Errors: as the bitmap
 * loaders.
 */
static int distrust_backup_descs(struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = &fs->geom;
	const struct ext4fs_bitmap *loaded;
	int err = 0;

	if (fs_writable(fs)) {
		err = ext4fs_fs_block_bitmap(fs, &loaded);
		if (!err)
			err = ext4fs_fs_inode_bitmap(fs, &loaded);
		if (err)
			return err;
	}
	for (uint32_t g = 0; g < geo->group_count; g++) {
		if (geo->has_metadata_csum || geo->has_gdt_csum) {
			struct ext4fs_group_desc gd = fs->groups[g];
			if (fs_writable(fs) && fs->gd_csum_ok[g]) {
				if (gd.flags & EXT4FS_BG_BLOCK_UNINIT)
					err = ext4fs__bitmap_note_block(fs, fs->block_map, 0, g);
				if (!err && (gd.flags & EXT4FS_BG_INODE_UNINIT))
					err = ext4fs__bitmap_note_block(fs, fs->inode_map, 1, g);
				if (err)
					return err;
			}
			gd.flags &= (uint16_t)~(EXT4FS_BG_BLOCK_UNINIT | EXT4FS_BG_INODE_UNINIT);
			gd.itable_unused = 0;
			ext4fs__fs_group_desc_store(fs, g, &gd);
		}
		if (fs->group_dirty)
			fs->group_dirty[g] |= FS_DIRTY_DESC | FS_DIRTY_BLOCK_BITMAP | FS_DIRTY_INODE_BITMAP;
	}
	if (fs_writable(fs))
		fs->super_dirty = 1;
	return 0;
}

int ext4fs_open_io(struct ext4fs_io *io, const struct ext4fs_open_opts *opts,
		   struct ext4fs_fs **out, char *errmsg, size_t errmsg_len)
{
	static const struct ext4fs_open_opts defaults;
	struct ext4fs_fs *fs;
	int err;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if ((opts->flags & EXT4FS_OPEN_REHEARSE) &&
	    (!(opts->flags & EXT4FS_OPEN_RW) || !ext4fs_io_is_overlay(io))) {
		/* A rehearsal over a channel that writes through would move maps without the data. */
		if (errmsg && errmsg_len)
			snprintf(errmsg, errmsg_len, "%s: a rehearsal needs a writable handle over an overlay channel",
				 io->name ? io->name : "");
		ext4fs_io_close(io);
		return EXT4FS_E_INVALID_ARG;
	}
	fs = ext4fs__fs_alloc(io, opts->flags);
	if (!fs) {
		if (errmsg && errmsg_len)
			snprintf(errmsg, errmsg_len, "no memory");
		return EXT4FS_E_NO_MEMORY;
	}
	err = ext4fs__fs_load(fs, opts);
	if (err)
		goto fail;
	if (fs->flags & EXT4FS_OPEN_RW) {
		/* A handle that may write bitmaps and inodes must not put them over other metadata. */
		if (!(opts->flags & EXT4FS_OPEN_MISPLACED_OK))
			err = ext4fs_group_descs_check(fs, NULL);
		if (!err)
			err = ext4fs__fs_write_open(fs);
		/* A rehearsal writes nothing to the disk, so it claims nothing either. */
		if (!err && !(opts->flags & EXT4FS_OPEN_REHEARSE))
			err = ext4fs__mmp_start(fs, opts);
		if (err)
			goto fail;
	} else if (opts->flags & EXT4FS_OPEN_RECOVERY) {
		/* A journal replay writes the file system as much as a writable handle does. */
		err = ext4fs__mmp_start(fs, opts);
		if (err)
			goto fail;
	}
	if (opts->superblock) {
		err = distrust_backup_descs(fs);
		if (err)
			goto fail;
	}
	fs->errmsg[0] = '\0';
	*out = fs;
	return 0;

fail:
	return ext4fs__fs_abandon(fs, err, errmsg, errmsg_len);
}

int ext4fs_open(const char *path, const struct ext4fs_open_opts *opts,
		struct ext4fs_fs **out, char *errmsg, size_t errmsg_len)
{
	struct ext4fs_io *io;
	int err;

	*out = NULL;
	err = ext4fs_io_open_file(path,
				  (opts && (opts->flags & (EXT4FS_OPEN_RW | EXT4FS_OPEN_RECOVERY)) &&
				   !(opts->flags & EXT4FS_OPEN_REHEARSE)) ? EXT4FS_IO_RDWR : 0,
				  opts ? opts->offset : 0, &io);
	if (!err && opts && (opts->flags & EXT4FS_OPEN_REHEARSE)) {
		struct ext4fs_io *over;

		if ((err = ext4fs_io_overlay_wrap(io, &over)))
			ext4fs_io_close(io);
		else
			io = over;
	}
	if (err) {
		if (errmsg && errmsg_len)
			snprintf(errmsg, errmsg_len, "%s: %s", path, ext4fs_strerror(err));
		return err;
	}
	return ext4fs_open_io(io, opts, out, errmsg, errmsg_len);
}

