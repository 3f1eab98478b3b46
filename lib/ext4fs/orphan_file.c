/*
 * orphan_file.c - blocks of the orphan file and rebuilding the file (see
 * orphan_file.h for the format).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/errors.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/inode.h"
#include "ext4fs/orphan_file.h"
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/super.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "ondisk_le.h"

#define TAIL_BYTES 8U

uint32_t ext4fs_orphan_block_slots(const struct ext4fs_fs *fs)
{
	return (fs->geom.block_size - TAIL_BYTES) / 4;
}

uint32_t ext4fs_orphan_block_csum(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				  uint64_t pblk, const void *buf)
{
	unsigned char le[8];
	uint32_t crc = ext4fs_inode_csum_seed(fs, ino, generation);

	le64_store(le, pblk);
	crc = ext4fs_crc32c(crc, le, sizeof(le));
	return ext4fs_crc32c(crc, buf, (size_t)ext4fs_orphan_block_slots(fs) * 4);
}

void ext4fs_orphan_block_inspect(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				 uint64_t pblk, const void *buf, struct ext4fs_orphan_block_info *info)
{
	const unsigned char *b = buf;
	uint32_t slots = ext4fs_orphan_block_slots(fs);

	memset(info, 0, sizeof(*info));
	info->slots = slots;
	for (uint32_t i = 0; i < slots; i++)
		if (le32_load(b + (size_t)i * 4))
			info->used++;
	info->magic = le32_load(b + (size_t)slots * 4);
	info->csum = le32_load(b + (size_t)slots * 4 + 4);
	info->magic_ok = info->magic == EXT4FS_ORPHAN_BLOCK_MAGIC;
	if (fs->geom.has_metadata_csum) {
		info->want_csum = ext4fs_orphan_block_csum(fs, ino, generation, pblk, buf);
		info->csum_ok = info->csum == info->want_csum;
	} else {
		info->csum_ok = 1;
	}
}

uint32_t ext4fs_orphan_block_entry(const struct ext4fs_fs *fs, const void *buf, uint32_t i)
{
	if (i >= ext4fs_orphan_block_slots(fs))
		return 0;
	return le32_load((const unsigned char *)buf + (size_t)i * 4);
}

/* Magic and (with metadata_csum) checksum into the tail of buf. */
static void set_tail(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation, uint64_t pblk,
		     unsigned char *buf)
{
	size_t at = (size_t)ext4fs_orphan_block_slots(fs) * 4;

	le32_store(buf + at, EXT4FS_ORPHAN_BLOCK_MAGIC);
	le32_store(buf + at + 4, fs->geom.has_metadata_csum ?
			 ext4fs_orphan_block_csum(fs, ino, generation, pblk, buf) : 0);
}

int ext4fs_orphan_block_set_entry(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				  uint64_t pblk, void *buf, uint32_t i, uint32_t entry)
{
	if (i >= ext4fs_orphan_block_slots(fs))
		return EXT4FS_E_INVALID_ARG;
	le32_store((unsigned char *)buf + (size_t)i * 4, entry);
	set_tail(fs, ino, generation, pblk, buf);
	return 0;
}

void ext4fs_orphan_block_init(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			      uint64_t pblk, void *buf)
{
	memset(buf, 0, fs->geom.block_size);
	set_tail(fs, ino, generation, pblk, buf);
}

uint32_t ext4fs_orphan_file_default_blocks(const struct ext4fs_fs *fs)
{
	uint64_t n = fs->geom.blocks_count;
	uint64_t blocks = 512;
	uint32_t ratio = fs->geom.cluster_ratio ? fs->geom.cluster_ratio : 1;

	if (n < 128 * 1024)
		blocks = 32;
	else if (n < 2 * 1024 * 1024)
		blocks = n / 4096;
	return (uint32_t)((blocks + ratio - 1) / ratio * ratio);
}

int ext4fs_orphan_present_set(struct ext4fs_fs *fs, int on)
{
	int err = ext4fs__fs_require_rw(fs, "setting orphan_present");

	if (err)
		return err;
	/* A flag about the orphan file's contents, not the layout: ext4fs_super_set() refuses ro_compat changes. */
	if (on)
		fs->sb.s_feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT;
	else
		fs->sb.s_feature_ro_compat &= ~EXT4FS_FEATURE_RO_COMPAT_ORPHAN_PRESENT;
	fs->super_dirty = 1;
	return 0;
}

/* s_orphan_file_inum, or EXT4FS_E_BAD_INODE_NUM when it names no ordinary inode. */
static int orphan_ino(struct ext4fs_fs *fs, uint32_t ino)
{
	if (ino < fs->geom.first_ino || ino > fs->geom.inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_INODE_NUM, "orphan file inode %u is out of range", ino);
	return 0;
}

/* Is ino in use according to the inode bitmap?  1, 0 or a negative error. */
static int inode_in_use(struct ext4fs_fs *fs, uint32_t ino)
{
	const struct ext4fs_bitmap *map;
	int err = ext4fs_fs_inode_bitmap(fs, &map);

	return err ? err : ext4fs_bitmap_test(map, ino);
}

/*
 * Free ino's blocks and clear the first 128 bytes of its record.  An inode
 * the bitmap calls free owns no blocks, whatever its record says (a checker
 * that cleared it has given those blocks back, perhaps to another file, and
 * the record may point outside the file system): only the record is cleared.
 */
static int release_file(struct ext4fs_fs *fs, uint32_t ino)
{
	struct ext4fs_inode in;
	unsigned char *raw;
	int err, used = inode_in_use(fs, ino);

	if (used < 0)
		return used;
	if ((err = ext4fs_inode_read(fs, ino, &in)))
		return err;
	if (used && !ext4fs_inode_has_inline_data(&in) && !ext4fs_inode_is_fast_symlink(fs, &in) &&
	    (err = ext4fs_file_truncate(fs, ino, &in, 0)))
		return err;
	raw = malloc(fs->geom.inode_size);
	if (!raw)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "orphan file inode %u", ino);
	err = ext4fs_inode_read_raw(fs, ino, raw);
	if (!err) {
		memset(raw, 0, 128);
		err = ext4fs_inode_write_raw(fs, ino, raw);
	}
	free(raw);
	return err;
}

int ext4fs_orphan_file_truncate(struct ext4fs_fs *fs)
{
	struct ext4fs_super sb;
	int err;

	if ((err = ext4fs__fs_require_rw(fs, "truncating the orphan file")))
		return err;
	sb = fs->sb;
	/* Number 0 names no file: there is nothing to free, only the features to drop. */
	if (sb.s_orphan_file_inum &&
	    ((err = orphan_ino(fs, sb.s_orphan_file_inum)) || (err = release_file(fs, sb.s_orphan_file_inum))))
		return err;
	sb = fs->sb;
	sb.s_feature_compat &= ~EXT4FS_FEATURE_COMPAT_ORPHAN_FILE;
	if ((err = ext4fs_super_set(fs, &sb)))
		return err;
	return ext4fs_orphan_present_set(fs, 0);
}

/* Rewrite every block of the new file with the checksum its place gives it. */
static int stamp_blocks(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in, uint32_t nblocks,
			unsigned char *buf)
{
	for (uint64_t l = 0; l < nblocks;) {
		uint64_t pblk, run;
		int err = ext4fs_bmap(fs, ino, in, l, &pblk, &run, NULL);
		if (err)
			return err;
		if (!pblk)
			return ext4fs__fs_fail(fs, EXT4FS_E_INODE_CORRUPT, "orphan file inode %u: block %llu not mapped",
					       ino, (unsigned long long)l);
		for (uint64_t i = 0; i < run && l < nblocks; i++, l++) {
			ext4fs_orphan_block_init(fs, ino, in->i_generation, pblk + i, buf);
			if ((err = ext4fs_block_write(fs, pblk + i, buf)))
				return err;
		}
	}
	return 0;
}

int ext4fs_orphan_file_create(struct ext4fs_fs *fs, uint32_t ino, uint32_t nblocks)
{
	struct ext4fs_inode in;
	struct ext4fs_super sb;
	uint32_t bs = fs->geom.block_size;
	unsigned char *buf;
	int err;

	if ((err = ext4fs__fs_require_rw(fs, "creating the orphan file")) || (ino && (err = orphan_ino(fs, ino))))
		return err;
	if (!nblocks)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "an orphan file of 0 blocks");
	if (!ino) {
		/* A fresh inode: its old record owns nothing and is overwritten whole below. */
		if ((err = ext4fs_inode_alloc(fs, EXT4FS_ROOT_INO, EXT4FS_S_IFREG | 0600, &ino)))
			return err;
	} else if ((err = release_file(fs, ino)) || (err = inode_in_use(fs, ino)) < 0 ||
		   (!err && (err = ext4fs_inode_mark_used(fs, ino, 0)))) {
		return err;
	}
	ext4fs_inode_init_new(fs, ino, EXT4FS_S_IFREG | 0600, 0, 0, &in);
	in.i_generation = 0;
	if ((err = ext4fs_inode_write(fs, ino, &in)))
		return err;
	buf = malloc(bs);
	if (!buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "orphan file inode %u", ino);
	/* Written with magic only first: a block's checksum depends on where the allocator puts it. */
	ext4fs_orphan_block_init(fs, ino, 0, 0, buf);
	for (uint64_t l = 0; l < nblocks && !err; l++)
		err = ext4fs_file_write(fs, ino, &in, l * bs, buf, bs, (uint64_t)nblocks * bs);
	if (!err && fs->geom.has_metadata_csum)
		err = stamp_blocks(fs, ino, &in, nblocks, buf);
	free(buf);
	if (err)
		return err;
	sb = fs->sb;
	sb.s_orphan_file_inum = ino;
	sb.s_feature_compat |= EXT4FS_FEATURE_COMPAT_ORPHAN_FILE;
	if ((err = ext4fs_super_set(fs, &sb)))
		return err;
	return ext4fs_orphan_present_set(fs, 0);
}
