/* inode_write.c - writing inode records and setting up new inodes. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/extent.h"
#include "ext4fs/inode.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "ondisk_le.h"

#define DEFAULT_EXTRA_ISIZE 32   /* through i_projid: nanosecond times, crtime, checksum hi */

/* Locate ino's record: inode table block and byte offset in it. */
static int inode_location(struct ext4fs_fs *fs, uint32_t ino, uint64_t *blk, uint32_t *off)
{
	const struct ext4fs_geom *geo = &fs->geom;

	if (ino == 0 || ino > geo->inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_INODE_NUM, "inode %u is out of range (1-%u)", ino,
				       geo->inodes_count);
	uint32_t g = (ino - 1) / geo->inodes_per_group;
	uint64_t byte = (uint64_t)((ino - 1) % geo->inodes_per_group) * geo->inode_size;
	if (!(ext4fs_group_tables_present(fs, g) & EXT4FS_GROUP_INODE_TABLE))
		return ext4fs__fs_fail(fs, EXT4FS_E_GD_BAD_INODE_TABLE, "inode %u: group %u has no inode table", ino, g);
	*blk = fs->groups[g].inode_table + byte / geo->block_size;
	*off = (uint32_t)(byte % geo->block_size);
	return 0;
}

/*
 * Read-modify-write of ino's record from *inode, or from raw when it is not
 * NULL; the checksum is computed unless exact.
 */
static int inode_update(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			const void *raw, int exact)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint64_t blk = 0;
	uint32_t off = 0;
	unsigned char *block;
	int err = ext4fs__fs_require_rw(fs, "writing an inode");

	if (err)
		return err;
	err = inode_location(fs, ino, &blk, &off);
	if (err)
		return err;
	block = malloc(geo->block_size);
	if (!block)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to write inode %u", ino);
	err = ext4fs_block_read(fs, blk, block);
	if (err)
		goto out;
	if (raw)
		memcpy(block + off, raw, geo->inode_size);
	else
		ext4fs_inode_encode(inode, block + off, geo->inode_size);
	if (!exact)
		ext4fs_inode_csum_set(fs, ino, block + off);
	err = ext4fs_block_write(fs, blk, block);
	if (err)
		ext4fs__fs_fail(fs, err, "writing inode %u (inode table block %llu): %s", ino,
				(unsigned long long)blk, ext4fs_strerror(err));
out:
	free(block);
	return err;
}

int ext4fs_inode_write(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode)
{
	return inode_update(fs, ino, inode, NULL, 0);
}

int ext4fs_inode_write_raw(struct ext4fs_fs *fs, uint32_t ino, const void *raw)
{
	return inode_update(fs, ino, NULL, raw, 0);
}

int ext4fs_inode_write_raw_exact(struct ext4fs_fs *fs, uint32_t ino, const void *raw)
{
	return inode_update(fs, ino, NULL, raw, 1);
}

void ext4fs_inode_set_time(struct ext4fs_inode *in, char which, int64_t sec, uint32_t nsec)
{
	/* Seconds are stored as a signed 32-bit value plus two epoch bits in the extra field. */
	uint32_t lo = (uint32_t)sec;
	uint32_t epoch = (uint32_t)(((uint64_t)(sec - (int64_t)(int32_t)lo) >> 32) & 3);
	uint32_t extra = (nsec << 2) | epoch;

	switch (which) {
	case 'a': in->i_atime = lo; in->i_atime_extra = extra; break;
	case 'c': in->i_ctime = lo; in->i_ctime_extra = extra; break;
	case 'm': in->i_mtime = lo; in->i_mtime_extra = extra; break;
	default:  in->i_crtime = lo; in->i_crtime_extra = extra; break;
	}
}

void ext4fs_inode_set_size(struct ext4fs_inode *in, uint64_t size)
{
	in->i_size_lo = (uint32_t)size;
	in->i_size_high = (uint32_t)(size >> 32);
}

void ext4fs_inode_set_owner(struct ext4fs_inode *in, uint32_t uid, uint32_t gid)
{
	in->i_uid = (uint16_t)uid;
	in->i_uid_high = (uint16_t)(uid >> 16);
	in->i_gid = (uint16_t)gid;
	in->i_gid_high = (uint16_t)(gid >> 16);
}

int ext4fs_inode_add_blocks(const struct ext4fs_fs *fs, struct ext4fs_inode *in, int64_t delta)
{
	uint64_t sectors = ext4fs_inode_sectors(fs, in);
	int64_t d = delta * (int64_t)(fs->geom.block_size / 512);
	uint64_t limit = (fs->sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE) ?
			 0xFFFFFFFFFFFFULL : 0xFFFFFFFFULL;

	if (d < 0 && (uint64_t)-d > sectors)
		sectors = 0;
	else
		sectors += (uint64_t)d;
	if (sectors > limit)
		return EXT4FS_E_FILE_TOO_BIG;
	in->i_flags &= ~EXT4FS_HUGE_FILE_FL;
	in->i_blocks_lo = (uint32_t)sectors;
	in->i_blocks_high = (uint16_t)(sectors >> 32);
	return 0;
}

void ext4fs_inode_init_new(struct ext4fs_fs *fs, uint32_t ino, uint16_t mode, uint32_t uid,
			   uint32_t gid, struct ext4fs_inode *in)
{
	const struct ext4fs_geom *geo = &fs->geom;
	int64_t sec;
	uint32_t nsec, extra = DEFAULT_EXTRA_ISIZE;
	unsigned char key[24];

	memset(in, 0, sizeof(*in));
	in->on_disk_size = geo->inode_size;
	in->i_mode = mode;
	in->i_links_count = 1;
	ext4fs_inode_set_owner(in, uid, gid);
	if (geo->inode_size > EXT4FS_INODE_BASE_SIZE) {
		if (fs->sb.s_want_extra_isize >= 4 &&
		    fs->sb.s_want_extra_isize <= geo->inode_size - EXT4FS_INODE_BASE_SIZE)
			extra = fs->sb.s_want_extra_isize;
		if (extra > geo->inode_size - EXT4FS_INODE_BASE_SIZE)
			extra = geo->inode_size - EXT4FS_INODE_BASE_SIZE;
		in->i_extra_isize = (uint16_t)extra;
	}
	ext4fs_now(fs, &sec, &nsec);
	ext4fs_inode_set_time(in, 'a', sec, nsec);
	ext4fs_inode_set_time(in, 'c', sec, nsec);
	ext4fs_inode_set_time(in, 'm', sec, nsec);
	ext4fs_inode_set_time(in, 'r', sec, nsec);
	/* A generation that differs per inode and per creation, yet is reproducible under a fixed clock. */
	memcpy(key, fs->sb.s_uuid, 16);
	le32_store(key + 16, ino);
	le32_store(key + 20, (uint32_t)sec ^ nsec);
	in->i_generation = ext4fs_crc32c(0x5A17u, key, sizeof(key));
	if (geo->has_extents && (EXT4FS_ISREG(mode) || EXT4FS_ISDIR(mode))) {
		in->i_flags |= EXT4FS_EXTENTS_FL;
		le16_store(in->i_block + 0, EXT4FS_EXTENT_MAGIC);
		le16_store(in->i_block + 2, 0);
		le16_store(in->i_block + 4, 4);
		le16_store(in->i_block + 6, 0);
		le32_store(in->i_block + 8, 0);
	}
}
