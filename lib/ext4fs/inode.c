/* inode.c - locating, reading, decoding and checksumming inodes. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/inode.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define INODE_CSUM_LO_OFF 0x7C
#define INODE_CSUM_HI_OFF 0x82
#define INODE_EXTRA_ISIZE_OFF 0x80

void ext4fs_inode_decode(struct ext4fs_inode *in, const void *disk, uint32_t size)
{
	const unsigned char *d = disk;

	memset(in, 0, sizeof(*in));
	in->on_disk_size = size;
	in->i_mode = le16_load(d + 0x00);
	in->i_uid = le16_load(d + 0x02);
	in->i_size_lo = le32_load(d + 0x04);
	in->i_atime = le32_load(d + 0x08);
	in->i_ctime = le32_load(d + 0x0C);
	in->i_mtime = le32_load(d + 0x10);
	in->i_dtime = le32_load(d + 0x14);
	in->i_gid = le16_load(d + 0x18);
	in->i_links_count = le16_load(d + 0x1A);
	in->i_blocks_lo = le32_load(d + 0x1C);
	in->i_flags = le32_load(d + 0x20);
	in->i_version_lo = le32_load(d + 0x24);
	memcpy(in->i_block, d + 0x28, sizeof(in->i_block));
	in->i_generation = le32_load(d + 0x64);
	in->i_file_acl_lo = le32_load(d + 0x68);
	in->i_size_high = le32_load(d + 0x6C);
	in->i_faddr = le32_load(d + 0x70);
	in->i_blocks_high = le16_load(d + 0x74);
	in->i_file_acl_high = le16_load(d + 0x76);
	in->i_uid_high = le16_load(d + 0x78);
	in->i_gid_high = le16_load(d + 0x7A);
	in->i_checksum_lo = le16_load(d + 0x7C);
	in->i_reserved = le16_load(d + 0x7E);
	if (size <= EXT4FS_INODE_BASE_SIZE)
		return;
	in->i_extra_isize = le16_load(d + INODE_EXTRA_ISIZE_OFF);
	/* Only fields inside both the record and i_extra_isize are meaningful. */
	uint32_t limit = EXT4FS_INODE_BASE_SIZE + in->i_extra_isize;
	if (limit > size)
		limit = size;
#define LOAD_EXTRA(field, off, bits) \
	if ((off) + (bits) / 8 <= limit) in->field = le##bits##_load(d + (off))
	LOAD_EXTRA(i_checksum_hi, 0x82, 16);
	LOAD_EXTRA(i_ctime_extra, 0x84, 32);
	LOAD_EXTRA(i_mtime_extra, 0x88, 32);
	LOAD_EXTRA(i_atime_extra, 0x8C, 32);
	LOAD_EXTRA(i_crtime, 0x90, 32);
	LOAD_EXTRA(i_crtime_extra, 0x94, 32);
	LOAD_EXTRA(i_version_hi, 0x98, 32);
	LOAD_EXTRA(i_projid, 0x9C, 32);
#undef LOAD_EXTRA
}

int ext4fs_inode_has_field(const struct ext4fs_inode *in, unsigned off, unsigned len)
{
	uint32_t limit = EXT4FS_INODE_BASE_SIZE + in->i_extra_isize;

	if (in->on_disk_size <= EXT4FS_INODE_BASE_SIZE)
		return 0;
	if (limit > in->on_disk_size)
		limit = in->on_disk_size;
	return off + len <= limit;
}

uint32_t ext4fs_inode_group(const struct ext4fs_fs *fs, uint32_t ino)
{
	return (ino - 1) / fs->geom.inodes_per_group;
}

int ext4fs_inode_read_raw(struct ext4fs_fs *fs, uint32_t ino, void *buf)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint32_t g, index;
	uint64_t byte, blk;
	unsigned char *block;
	int err;

	if (ino == 0 || ino > geo->inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_INODE_NUM, "inode %u is out of range (1-%u)",
				   ino, geo->inodes_count);
	g = ext4fs_inode_group(fs, ino);
	index = (ino - 1) % geo->inodes_per_group;
	byte = (uint64_t)index * geo->inode_size;
	if (!(ext4fs_group_tables_present(fs, g) & EXT4FS_GROUP_INODE_TABLE))
		return ext4fs__fs_fail(fs, EXT4FS_E_GD_BAD_INODE_TABLE, "inode %u: group %u has no inode table", ino, g);
	blk = fs->groups[g].inode_table + byte / geo->block_size;
	block = malloc(geo->block_size);
	if (!block)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to read inode %u", ino);
	err = ext4fs_block_read(fs, blk, block);
	if (err) {
		ext4fs__fs_fail(fs, err, "reading inode %u (inode table block %llu): %s", ino,
			    (unsigned long long)blk, ext4fs_strerror(err));
	} else {
		memcpy(buf, block + byte % geo->block_size, geo->inode_size);
	}
	free(block);
	return err;
}

uint32_t ext4fs_inode_csum(const struct ext4fs_fs *fs, uint32_t ino, const void *raw)
{
	static const unsigned char zero[2];
	const unsigned char *d = raw;
	uint32_t size = fs->geom.inode_size;
	unsigned char le[4];
	uint32_t crc;
	int has_hi = 0;

	le32_store(le, ino);
	crc = ext4fs_crc32c(fs->geom.csum_seed, le, 4);
	le32_store(le, le32_load(d + 0x64));            /* i_generation */
	crc = ext4fs_crc32c(crc, le, 4);
	crc = ext4fs_crc32c(crc, d, INODE_CSUM_LO_OFF);
	crc = ext4fs_crc32c(crc, zero, 2);
	crc = ext4fs_crc32c(crc, d + INODE_CSUM_LO_OFF + 2,
			    EXT4FS_INODE_BASE_SIZE - INODE_CSUM_LO_OFF - 2);
	if (size > EXT4FS_INODE_BASE_SIZE) {
		uint16_t extra = le16_load(d + INODE_EXTRA_ISIZE_OFF);
		has_hi = EXT4FS_INODE_BASE_SIZE + extra >= INODE_CSUM_HI_OFF + 2;
		crc = ext4fs_crc32c(crc, d + EXT4FS_INODE_BASE_SIZE,
				    INODE_CSUM_HI_OFF - EXT4FS_INODE_BASE_SIZE);
		if (has_hi) {
			crc = ext4fs_crc32c(crc, zero, 2);
			crc = ext4fs_crc32c(crc, d + INODE_CSUM_HI_OFF + 2,
					    size - INODE_CSUM_HI_OFF - 2);
		} else {
			crc = ext4fs_crc32c(crc, d + INODE_CSUM_HI_OFF, size - INODE_CSUM_HI_OFF);
		}
	}
	return has_hi ? crc : (crc & 0xFFFF);
}

int ext4fs_inode_csum_ok(const struct ext4fs_fs *fs, uint32_t ino, const void *raw)
{
	const unsigned char *d = raw;
	uint32_t stored, want;

	if (!fs->geom.has_metadata_csum)
		return 1;
	want = ext4fs_inode_csum(fs, ino, raw);
	stored = le16_load(d + INODE_CSUM_LO_OFF);
	if (fs->geom.inode_size > EXT4FS_INODE_BASE_SIZE &&
	    EXT4FS_INODE_BASE_SIZE + le16_load(d + INODE_EXTRA_ISIZE_OFF) >= INODE_CSUM_HI_OFF + 2)
		stored |= (uint32_t)le16_load(d + INODE_CSUM_HI_OFF) << 16;
	if (stored == want)
		return 1;
	/*
	 * A record never used has no checksum to check: as e2fsprogs judges it,
	 * one whose base 128 bytes are all zero (what lies beyond them is not
	 * looked at).
	 */
	for (uint32_t i = 0; i < EXT4FS_INODE_BASE_SIZE; i++)
		if (d[i])
			return 0;
	return 1;
}

int ext4fs_inode_read_raw_verified(struct ext4fs_fs *fs, uint32_t ino, void *raw)
{
	int err = ext4fs_inode_read_raw(fs, ino, raw);

	if (err)
		return err;
	if (fs_csum_strict(fs) && !ext4fs_inode_csum_ok(fs, ino, raw))
		return ext4fs__fs_fail(fs, EXT4FS_E_INODE_CSUM, "inode %u checksum does not match", ino);
	return 0;
}

int ext4fs_inode_read(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode)
{
	unsigned char *raw = malloc(fs->geom.inode_size);
	int err;

	if (!raw)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to read inode %u", ino);
	err = ext4fs_inode_read_raw_verified(fs, ino, raw);
	if (err)
		goto out;
	ext4fs_inode_decode(inode, raw, fs->geom.inode_size);
out:
	free(raw);
	return err;
}

int ext4fs_inode_read_strict(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode)
{
	unsigned char *raw = malloc(fs->geom.inode_size);
	int err;

	if (!raw)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to read inode %u", ino);
	err = ext4fs_inode_read_raw(fs, ino, raw);
	if (!err) {
		ext4fs_inode_decode(inode, raw, fs->geom.inode_size);
		if (!ext4fs_inode_csum_ok(fs, ino, raw))
			err = ext4fs__fs_fail(fs, EXT4FS_E_INODE_CSUM, "inode %u checksum does not match", ino);
	}
	free(raw);
	return err;
}

uint64_t ext4fs_inode_size(const struct ext4fs_inode *in)
{
	return (uint64_t)in->i_size_lo | ((uint64_t)in->i_size_high << 32);
}

uint32_t ext4fs_inode_uid(const struct ext4fs_inode *in)
{
	return (uint32_t)in->i_uid | ((uint32_t)in->i_uid_high << 16);
}

uint32_t ext4fs_inode_gid(const struct ext4fs_inode *in)
{
	return (uint32_t)in->i_gid | ((uint32_t)in->i_gid_high << 16);
}

uint64_t ext4fs_inode_file_acl(const struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint64_t acl = in->i_file_acl_lo;

	if (fs->geom.is_64bit)
		acl |= (uint64_t)in->i_file_acl_high << 32;
	return acl;
}

uint64_t ext4fs_inode_blocks_raw(const struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint64_t b = in->i_blocks_lo;

	if (fs->sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE)
		b |= (uint64_t)in->i_blocks_high << 32;
	return b;
}

uint64_t ext4fs_inode_sectors(const struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint64_t b = ext4fs_inode_blocks_raw(fs, in);

	if ((fs->sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_HUGE_FILE) &&
	    (in->i_flags & EXT4FS_HUGE_FILE_FL))
		b *= fs->geom.block_size / 512;
	return b;
}

int64_t ext4fs_inode_time(const struct ext4fs_inode *in, char which, uint32_t *nsec)
{
	uint32_t secs, extra = 0;
	unsigned off;

	switch (which) {
	case 'a': secs = in->i_atime; extra = in->i_atime_extra; off = EXT4FS_INODE_OFF_ATIME_EXTRA; break;
	case 'c': secs = in->i_ctime; extra = in->i_ctime_extra; off = EXT4FS_INODE_OFF_CTIME_EXTRA; break;
	case 'm': secs = in->i_mtime; extra = in->i_mtime_extra; off = EXT4FS_INODE_OFF_MTIME_EXTRA; break;
	default:  secs = in->i_crtime; extra = in->i_crtime_extra; off = EXT4FS_INODE_OFF_CRTIME_EXTRA; break;
	}
	if (!ext4fs_inode_has_field(in, off, 4))
		extra = 0;
	if (nsec)
		*nsec = extra >> 2;
	/* The two low bits of extra extend the signed 32-bit seconds past 2038. */
	return (int64_t)(int32_t)secs + ((int64_t)(extra & 3) << 32);
}

int ext4fs_inode_has_extents(const struct ext4fs_inode *in)
{
	return (in->i_flags & EXT4FS_EXTENTS_FL) != 0;
}

int ext4fs_inode_has_inline_data(const struct ext4fs_inode *in)
{
	return (in->i_flags & EXT4FS_INLINE_DATA_FL) != 0;
}

int ext4fs_inode_special_ok(const struct ext4fs_inode *in)
{
	if (in->i_flags & (EXT4FS_INDEX_FL | EXT4FS_EXTENTS_FL))
		return 0;
	/* The kernel leaves stale words in i_block of devices; only a flag it never sets makes them damage. */
	if (in->i_flags & (EXT4FS_IMMUTABLE_FL | EXT4FS_APPEND_FL)) {
		for (size_t i = 4 * 4; i < sizeof(in->i_block); i++)
			if (in->i_block[i])
				return 0;
	}
	return 1;
}

int ext4fs_symlink_has_map(const struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	if (!ext4fs_inode_file_acl(fs, in)) {
		if (!ext4fs_inode_blocks_raw(fs, in))
			return 0;
	} else {
		/* An attribute block counts in i_blocks: the target's length and i_block decide. */
		uint64_t size = ext4fs_inode_size(in);
		int second = in->i_block[4] || in->i_block[5] || in->i_block[6] || in->i_block[7];
		if (size < sizeof(in->i_block) && !(size > 4 && !second))
			return 0;
	}
	return !(in->i_flags & EXT4FS_INLINE_DATA_FL);
}

int ext4fs_inode_is_fast_symlink(const struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint64_t size = ext4fs_inode_size(in);

	/* Targets shorter than i_block are stored in it; the kernel decides by length alone. */
	return EXT4FS_ISLNK(in->i_mode) && !(in->i_flags & EXT4FS_INLINE_DATA_FL) &&
	       size > 0 && size < sizeof(in->i_block);
}

void ext4fs_inode_encode(const struct ext4fs_inode *in, void *disk, uint32_t size)
{
	unsigned char *d = disk;

	le16_store(d + 0x00, in->i_mode);
	le16_store(d + 0x02, in->i_uid);
	le32_store(d + 0x04, in->i_size_lo);
	le32_store(d + 0x08, in->i_atime);
	le32_store(d + 0x0C, in->i_ctime);
	le32_store(d + 0x10, in->i_mtime);
	le32_store(d + 0x14, in->i_dtime);
	le16_store(d + 0x18, in->i_gid);
	le16_store(d + 0x1A, in->i_links_count);
	le32_store(d + 0x1C, in->i_blocks_lo);
	le32_store(d + 0x20, in->i_flags);
	le32_store(d + 0x24, in->i_version_lo);
	memcpy(d + 0x28, in->i_block, sizeof(in->i_block));
	le32_store(d + 0x64, in->i_generation);
	le32_store(d + 0x68, in->i_file_acl_lo);
	le32_store(d + 0x6C, in->i_size_high);
	le32_store(d + 0x70, in->i_faddr);
	le16_store(d + 0x74, in->i_blocks_high);
	le16_store(d + 0x76, in->i_file_acl_high);
	le16_store(d + 0x78, in->i_uid_high);
	le16_store(d + 0x7A, in->i_gid_high);
	le16_store(d + 0x7C, in->i_checksum_lo);
	le16_store(d + 0x7E, in->i_reserved);
	if (size <= EXT4FS_INODE_BASE_SIZE)
		return;
	le16_store(d + INODE_EXTRA_ISIZE_OFF, in->i_extra_isize);
	uint32_t limit = EXT4FS_INODE_BASE_SIZE + in->i_extra_isize;
	if (limit > size)
		limit = size;
#define STORE_EXTRA(field, off, bits) \
	if ((off) + (bits) / 8 <= limit) le##bits##_store(d + (off), in->field)
	STORE_EXTRA(i_checksum_hi, 0x82, 16);
	STORE_EXTRA(i_ctime_extra, 0x84, 32);
	STORE_EXTRA(i_mtime_extra, 0x88, 32);
	STORE_EXTRA(i_atime_extra, 0x8C, 32);
	STORE_EXTRA(i_crtime, 0x90, 32);
	STORE_EXTRA(i_crtime_extra, 0x94, 32);
	STORE_EXTRA(i_version_hi, 0x98, 32);
	STORE_EXTRA(i_projid, 0x9C, 32);
#undef STORE_EXTRA
}

void ext4fs_inode_csum_set(const struct ext4fs_fs *fs, uint32_t ino, void *raw)
{
	unsigned char *d = raw;
	uint32_t crc;

	if (!fs->geom.has_metadata_csum)
		return;
	crc = ext4fs_inode_csum(fs, ino, raw);
	le16_store(d + INODE_CSUM_LO_OFF, (uint16_t)(crc & 0xFFFF));
	if (fs->geom.inode_size > EXT4FS_INODE_BASE_SIZE &&
	    EXT4FS_INODE_BASE_SIZE + le16_load(d + INODE_EXTRA_ISIZE_OFF) >= INODE_CSUM_HI_OFF + 2)
		le16_store(d + INODE_CSUM_HI_OFF, (uint16_t)(crc >> 16));
}
