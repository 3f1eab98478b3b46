/*
 * resize_inode.c - the resize inode's map: laying it out, judging it,
 * writing it anew (see resize_inode.h for the layout).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "ext4fs/inode.h"
#include "ext4fs/resize_inode.h"
#include "ext4fs/super.h"
#include "fs_internal.h"
#include "ondisk_le.h"

uint64_t ext4fs_resize_reserved_block(const struct ext4fs_fs *fs, uint32_t k)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint64_t blk = (uint64_t)geo->first_data_block + 1 + geo->desc_blocks + k;

	/* 1 KiB blocks with bigalloc start at block 0, and the superblock still fills block 1. */
	if (geo->block_size == 1024 && geo->first_data_block == 0)
		blk++;
	return blk;
}

void ext4fs_resize_dind_fill(const struct ext4fs_fs *fs, void *buf)
{
	uint32_t apb = fs->geom.block_size / 4;

	memset(buf, 0, fs->geom.block_size);
	for (uint32_t k = 0; k < fs->sb.s_reserved_gdt_blocks; k++)
		le32_store((unsigned char *)buf + 4 * ((fs->geom.desc_blocks + k) % apb),
			   (uint32_t)ext4fs_resize_reserved_block(fs, k));
}

void ext4fs_resize_ind_fill(const struct ext4fs_fs *fs, uint32_t k, void *buf)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t apb = geo->block_size / 4, slot = 0;
	uint64_t primary = ext4fs_resize_reserved_block(fs, k);

	memset(buf, 0, geo->block_size);
	for (uint32_t g = 1; g < geo->group_count && slot < apb; g++)
		if (ext4fs_group_has_super(fs, g))
			le32_store((unsigned char *)buf + 4 * slot++,
				   (uint32_t)(primary + (uint64_t)g * geo->blocks_per_group));
}

int ext4fs_resize_inode_valid(struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint32_t bs = fs->geom.block_size, apb = bs / 4;
	uint32_t dind = le32_load(in->i_block + 4 * EXT4FS_DIND_BLOCK);
	unsigned char *buf, *want;
	int ok = 1;

	for (int i = 0; i < 15; i++)
		if (i != EXT4FS_DIND_BLOCK && le32_load(in->i_block + 4 * i))
			return 0;
	if (!dind || !in->i_links_count || !(in->i_mode & EXT4FS_S_IFREG) || !ext4fs_block_ptr_valid(fs, dind))
		return 0;
	buf = malloc(2 * (size_t)bs);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to check the resize inode");
	want = buf + bs;
	if (ext4fs_block_read(fs, dind, buf) != 0) {
		free(buf);
		return 0;
	}
	/*
	 * Only what e2fsck 1.47 compares: the double-indirect slots of the
	 * first quarter of the reserved blocks, and the leading entries (one
	 * per backup group) of each of those blocks' lists.
	 */
	uint32_t checked = fs->sb.s_reserved_gdt_blocks / 4;
	for (uint32_t k = 0; k < checked && ok; k++)
		ok = le32_load(buf + 4 * ((fs->geom.desc_blocks + k) % apb)) == ext4fs_resize_reserved_block(fs, k);
	for (uint32_t k = 0; k < checked && ok; k++) {
		ext4fs_resize_ind_fill(fs, k, want);
		uint32_t listed = 0;
		while (listed < apb && le32_load(want + 4 * listed))
			listed++;
		ok = ext4fs_block_read(fs, ext4fs_resize_reserved_block(fs, k), buf) == 0 &&
		     memcmp(buf, want, 4 * (size_t)listed) == 0;
	}
	free(buf);
	return ok;
}

/*
 * Walk the reserved blocks as e2fsprogs' maker does around an existing
 * double-indirect block: every slot of dind and of each named block's list
 * of copies is empty or as the layout has it.  With fill, empty slots are
 * filled (a block newly named in dind starts as an empty list) and the
 * blocks written; *added counts the slots that were (or would be) filled,
 * each a block of the inode's count.  Errors: EXT4FS_E_RESIZE_CORRUPT (a
 * slot names something else; with fill, what came before is written),
 * EXT4FS_E_BAD_BLOCK_NUM, EXT4FS_E_NO_MEMORY, I/O errors.
 */
static int reuse_walk(struct ext4fs_fs *fs, uint64_t dind, int fill, uint32_t *added)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t apb = geo->block_size / 4, n = 0;
	unsigned char *dbuf, *gbuf, *wbuf;
	int err, dind_dirty = 0;

	if (!ext4fs_block_ptr_valid(fs, dind))
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_BLOCK_NUM, "resize inode: block %llu is not in the file system",
				       (unsigned long long)dind);
	dbuf = malloc(3 * (size_t)geo->block_size);
	if (!dbuf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the resize inode");
	gbuf = dbuf + geo->block_size;
	wbuf = gbuf + geo->block_size;
	err = ext4fs_block_read(fs, dind, dbuf);
	for (uint32_t k = 0; !err && k < fs->sb.s_reserved_gdt_blocks; k++) {
		uint64_t primary = ext4fs_resize_reserved_block(fs, k);
		unsigned char *slotp = dbuf + 4 * ((geo->desc_blocks + k) % apb);
		uint32_t named = le32_load(slotp);
		int list_dirty = 0;

		if (!named) {
			memset(gbuf, 0, geo->block_size);
			le32_store(slotp, (uint32_t)primary);
			n++;
			dind_dirty = list_dirty = 1;
		} else if (named != primary) {
			err = EXT4FS_E_RESIZE_CORRUPT;
			break;
		} else if ((err = ext4fs_block_read(fs, primary, gbuf))) {
			break;
		}
		/* Each copy slot empty or as the layout lists it (wbuf: the list the maker writes). */
		ext4fs_resize_ind_fill(fs, k, wbuf);
		for (uint32_t slot = 0; slot < apb && le32_load(wbuf + 4 * slot) && !err; slot++) {
			uint32_t copy = le32_load(gbuf + 4 * slot);
			if (!copy) {
				le32_store(gbuf + 4 * slot, le32_load(wbuf + 4 * slot));
				n++;
				list_dirty = 1;
			} else if (copy != le32_load(wbuf + 4 * slot)) {
				err = EXT4FS_E_RESIZE_CORRUPT;
			}
		}
		if (fill && list_dirty && (!err || err == EXT4FS_E_RESIZE_CORRUPT)) {
			int werr = ext4fs_block_write(fs, primary, gbuf);
			err = err ? err : werr;
		}
	}
	if (fill && dind_dirty && (!err || err == EXT4FS_E_RESIZE_CORRUPT)) {
		int werr = ext4fs_block_write(fs, dind, dbuf);
		err = err ? err : werr;
	}
	free(dbuf);
	if (added)
		*added = n;
	if (err == EXT4FS_E_RESIZE_CORRUPT)
		return ext4fs__fs_fail(fs, err, "resize inode: double-indirect block %llu does not list the reserved GDT blocks",
				       (unsigned long long)dind);
	return err;
}

int ext4fs_resize_inode_reusable(struct ext4fs_fs *fs, uint64_t dind)
{
	return reuse_walk(fs, dind, 0, NULL);
}

int ext4fs_resize_inode_create(struct ext4fs_fs *fs, uint64_t dind, uint32_t now)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t rsv = fs->sb.s_reserved_gdt_blocks, copies = 1;
	struct ext4fs_inode in;
	unsigned char *buf;
	int err;

	if (!ext4fs_has_compat(fs, EXT4FS_FEATURE_COMPAT_RESIZE_INODE) || !ext4fs_block_ptr_valid(fs, dind) ||
	    dind > UINT32_MAX)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "resize inode: no feature, or block %llu unusable",
				       (unsigned long long)dind);
	if ((err = ext4fs_inode_read(fs, EXT4FS_RESIZE_INO, &in)))
		return err;
	if (le32_load(in.i_block + 4 * EXT4FS_DIND_BLOCK) == dind) {
		/*
		 * As e2fsprogs' maker around the block the inode already names:
		 * the record stays, what is missing is added and counted, and
		 * the times say so.
		 */
		uint32_t added = 0;
		if ((err = reuse_walk(fs, dind, 1, &added)))
			return err;
		in.i_mtime = now;
		if (added) {
			in.i_atime = now;
			if ((err = ext4fs_inode_add_blocks(fs, &in, added)))
				return err;
		}
		return ext4fs_inode_write(fs, EXT4FS_RESIZE_INO, &in);
	}
	buf = malloc(geo->block_size);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the resize inode");
	for (uint32_t k = 0; k < rsv && !err; k++) {
		ext4fs_resize_ind_fill(fs, k, buf);
		err = ext4fs_block_write(fs, ext4fs_resize_reserved_block(fs, k), buf);
	}
	if (!err) {
		ext4fs_resize_dind_fill(fs, buf);
		err = ext4fs_block_write(fs, dind, buf);
	}
	free(buf);
	if (err)
		return err;
	for (uint32_t g = 1; g < geo->group_count; g++)
		copies += ext4fs_group_has_super(fs, g) != 0;
	uint32_t extra = in.i_extra_isize, on_disk = in.on_disk_size;
	memset(&in, 0, sizeof(in));
	in.on_disk_size = on_disk;
	in.i_extra_isize = (uint16_t)extra;
	in.i_mode = EXT4FS_S_IFREG | 0600;
	in.i_links_count = 1;
	in.i_ctime = in.i_mtime = now;
	uint64_t apb = geo->block_size / 4;
	ext4fs_inode_set_size(&in, (apb * apb + apb + EXT4FS_NDIR_BLOCKS) * geo->block_size);
	le32_store(in.i_block + 4 * EXT4FS_DIND_BLOCK, (uint32_t)dind);
	err = ext4fs_inode_add_blocks(fs, &in, 1 + (int64_t)copies * rsv);
	if (!err)
		err = ext4fs_inode_write(fs, EXT4FS_RESIZE_INO, &in);
	return err;
}
