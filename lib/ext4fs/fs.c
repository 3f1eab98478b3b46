/*
 * fs.c - the handle: superblock validation, descriptors, block cache, and
 * the listeners through which the layers above hear about it.  Opening is
 * fs_open.c's (the write layer); the read-only half of it is here.
 */
#include "config.h"
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/fs.h"
#include "fs_internal.h"
#include "ondisk_le.h"

/* Incompatible features this library reads correctly. */
#define READ_INCOMPAT_SUPPORTED \
	(EXT4FS_FEATURE_INCOMPAT_FILETYPE | EXT4FS_FEATURE_INCOMPAT_RECOVER | \
	 EXT4FS_FEATURE_INCOMPAT_META_BG | EXT4FS_FEATURE_INCOMPAT_EXTENTS | \
	 EXT4FS_FEATURE_INCOMPAT_64BIT | EXT4FS_FEATURE_INCOMPAT_MMP | \
	 EXT4FS_FEATURE_INCOMPAT_FLEX_BG | EXT4FS_FEATURE_INCOMPAT_EA_INODE | \
	 EXT4FS_FEATURE_INCOMPAT_CSUM_SEED | EXT4FS_FEATURE_INCOMPAT_LARGEDIR | \
	 EXT4FS_FEATURE_INCOMPAT_INLINE_DATA | EXT4FS_FEATURE_INCOMPAT_ENCRYPT | \
	 EXT4FS_FEATURE_INCOMPAT_CASEFOLD)

#define GD_CSUM_OFFSET 0x1E
#define GD_MIN_64BIT_SIZE 64
#define GD_MAX_SIZE 1024

int ext4fs__fs_fail(struct ext4fs_fs *fs, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fs->errmsg, sizeof(fs->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

const char *ext4fs_errmsg(const struct ext4fs_fs *fs) { return fs->errmsg; }
void ext4fs_errmsg_clear(struct ext4fs_fs *fs) { fs->errmsg[0] = '\0'; }
const struct ext4fs_super *ext4fs_sb(const struct ext4fs_fs *fs) { return &fs->sb; }
const struct ext4fs_geom *ext4fs_geom(const struct ext4fs_fs *fs) { return &fs->geom; }
const unsigned char *ext4fs_sb_raw(const struct ext4fs_fs *fs) { return fs->sb_raw; }
struct ext4fs_io *ext4fs_fs_io(const struct ext4fs_fs *fs) { return fs->io; }
const char *ext4fs_fs_name(const struct ext4fs_fs *fs) { return fs->io->name; }
unsigned ext4fs_fs_flags(const struct ext4fs_fs *fs) { return fs->flags; }

int ext4fs_has_compat(const struct ext4fs_fs *fs, uint32_t mask)
{
	return (fs->sb.s_feature_compat & mask) != 0;
}

int ext4fs_has_incompat(const struct ext4fs_fs *fs, uint32_t mask)
{
	return (fs->sb.s_feature_incompat & mask) != 0;
}

int ext4fs_has_ro_compat(const struct ext4fs_fs *fs, uint32_t mask)
{
	return (fs->sb.s_feature_ro_compat & mask) != 0;
}

uint32_t ext4fs_super_csum(const unsigned char *raw_super)
{
	return ext4fs_crc32c(~0U, raw_super, 0x3FC);
}

static int is_power_of(uint32_t n, uint32_t base)
{
	while (n > 1 && n % base == 0)
		n /= base;
	return n == 1;
}

int ext4fs_group_has_super(const struct ext4fs_fs *fs, uint32_t g)
{
	if (g == 0)
		return 1;
	if (fs->sb.s_feature_compat & EXT4FS_FEATURE_COMPAT_SPARSE_SUPER2)
		return g == fs->sb.s_backup_bgs[0] || g == fs->sb.s_backup_bgs[1];
	if (g <= 1 || !(fs->sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER))
		return 1;
	if (!(g & 1))
		return 0;
	return is_power_of(g, 3) || is_power_of(g, 5) || is_power_of(g, 7);
}

uint64_t ext4fs_group_first_block(const struct ext4fs_fs *fs, uint32_t g)
{
	return fs->geom.first_data_block + (uint64_t)g * fs->geom.blocks_per_group;
}

uint64_t ext4fs_group_last_block(const struct ext4fs_fs *fs, uint32_t g)
{
	if (g == fs->geom.group_count - 1)
		return fs->geom.blocks_count - 1;
	return ext4fs_group_first_block(fs, g) + fs->geom.blocks_per_group - 1;
}

uint32_t ext4fs_group_of_block(const struct ext4fs_fs *fs, uint64_t blk)
{
	return (uint32_t)((blk - fs->geom.first_data_block) / fs->geom.blocks_per_group);
}

int ext4fs_block_ptr_valid(const struct ext4fs_fs *fs, uint64_t blk)
{
	return blk != 0 && blk >= fs->geom.first_data_block && blk < fs->geom.blocks_count;
}

int ext4fs_block_range_valid(const struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	return count != 0 && ext4fs_block_ptr_valid(fs, blk) && count <= fs->geom.blocks_count - blk;
}

void ext4fs_group_meta_location(const struct ext4fs_fs *fs, uint32_t g, uint64_t *super_blk,
				uint64_t *old_desc_blk, uint32_t *old_desc_blocks,
				uint64_t *new_desc_blk, uint32_t *meta_blocks)
{
	const struct ext4fs_geom *geo = &fs->geom;
	uint64_t first = ext4fs_group_first_block(fs, g);
	uint64_t sblk = 0, odesc = 0, ndesc = 0;
	uint32_t odesc_blocks = 0, count = 0;
	int has_super = ext4fs_group_has_super(fs, g);
	int meta_bg = (fs->sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_META_BG) != 0;
	uint32_t table_blocks = meta_bg ? fs->sb.s_first_meta_bg
					: geo->desc_blocks + fs->sb.s_reserved_gdt_blocks;

	/* With 1 KiB blocks and a 4 KiB-aligned group 0, block 0 is the boot block. */
	if (g == 0 && geo->block_size == 1024 && geo->cluster_ratio > 1)
		first = 1;
	if (has_super) {
		sblk = first;
		count++;
	}
	uint32_t meta_group = g / geo->desc_per_block;
	if (!meta_bg || meta_group < fs->sb.s_first_meta_bg) {
		if (has_super) {
			odesc = first + 1;
			/* A s_first_meta_bg opened despite errors may reach past the end: counted up to it. */
			odesc_blocks = odesc >= geo->blocks_count ? 0
				       : table_blocks > geo->blocks_count - odesc ? (uint32_t)(geo->blocks_count - odesc)
										    : table_blocks;
			count += odesc_blocks;
		}
	} else {
		uint32_t r = g % geo->desc_per_block;
		if (r == 0 || r == 1 || r == geo->desc_per_block - 1) {
			ndesc = first + (uint64_t)has_super;
			count++;
		}
	}
	if (super_blk) *super_blk = sblk;
	if (old_desc_blk) *old_desc_blk = odesc;
	if (old_desc_blocks) *old_desc_blocks = odesc_blocks;
	if (new_desc_blk) *new_desc_blk = ndesc;
	if (meta_blocks) *meta_blocks = count;
}

/* -- block cache -- */

int ext4fs_blocks_read(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, void *buf)
{
	uint32_t bs = fs->geom.block_size;
	int err;

	if (count == 0)
		return 0;
	if (blk >= fs->geom.blocks_count || count > fs->geom.blocks_count - blk)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_BLOCK_NUM,
				   "block %llu (+%llu) is beyond the end of the file system (%llu blocks)",
				   (unsigned long long)blk, (unsigned long long)count,
				   (unsigned long long)fs->geom.blocks_count);
	if (count > SIZE_MAX / bs)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "read of %llu blocks is too large",
				   (unsigned long long)count);
	err = ext4fs_io_read(fs->io, blk * bs, buf, (size_t)(count * bs));
	if (err)
		return ext4fs__fs_fail(fs, err, "reading block %llu%s: %s", (unsigned long long)blk,
				   count > 1 ? " and following" : "", ext4fs_strerror(err));
	return 0;
}

int ext4fs_block_read(struct ext4fs_fs *fs, uint64_t blk, void *buf)
{
	uint32_t bs = fs->geom.block_size;
	unsigned slot = (unsigned)(blk % EXT4FS_CACHE_SLOTS);
	unsigned char *data = fs->cache_data + (size_t)slot * bs;
	int err;

	if (fs->cache_valid[slot] && fs->cache_blk[slot] == blk) {
		memcpy(buf, data, bs);
		return 0;
	}
	err = ext4fs_blocks_read(fs, blk, 1, data);
	if (err) {
		fs->cache_valid[slot] = 0;
		return err;
	}
	fs->cache_blk[slot] = blk;
	fs->cache_valid[slot] = 1;
	memcpy(buf, data, bs);
	return 0;
}

void ext4fs_blocks_readahead(struct ext4fs_fs *fs, uint64_t blk, uint64_t count)
{
	uint32_t bs = fs->geom.block_size;

	if (blk >= fs->geom.blocks_count)
		return;
	if (count > fs->geom.blocks_count - blk)
		count = fs->geom.blocks_count - blk;
	ext4fs_io_readahead(fs->io, blk * bs, count * bs);
}

/* -- group descriptors -- */

const struct ext4fs_group_desc *ext4fs_group(const struct ext4fs_fs *fs, uint32_t g)
{
	return &fs->groups[g];
}

const unsigned char *ext4fs_group_desc_raw(const struct ext4fs_fs *fs, uint32_t g)
{
	return fs->gd_raw + (size_t)g * fs->geom.desc_size;
}

int ext4fs_group_desc_csum_ok(const struct ext4fs_fs *fs, uint32_t g)
{
	return fs->gd_csum_ok[g];
}

uint16_t ext4fs_group_desc_csum(const struct ext4fs_fs *fs, uint32_t g)
{
	const unsigned char *raw = ext4fs_group_desc_raw(fs, g);
	uint32_t size = fs->geom.desc_size;
	unsigned char le_group[4];

	le32_store(le_group, g);
	if (fs->geom.has_metadata_csum) {
		uint32_t crc = ext4fs_crc32c(fs->geom.csum_seed, le_group, 4);
		static const unsigned char zero_csum[2];
		crc = ext4fs_crc32c(crc, raw, GD_CSUM_OFFSET);
		crc = ext4fs_crc32c(crc, zero_csum, 2);
		crc = ext4fs_crc32c(crc, raw + GD_CSUM_OFFSET + 2, size - GD_CSUM_OFFSET - 2);
		return (uint16_t)(crc & 0xFFFF);
	}
	if (fs->geom.has_gdt_csum) {
		uint16_t crc = ext4fs_crc16(0xFFFF, fs->sb.s_uuid, 16);
		crc = ext4fs_crc16(crc, le_group, 4);
		crc = ext4fs_crc16(crc, raw, GD_CSUM_OFFSET);
		if (size > GD_CSUM_OFFSET + 2)
			crc = ext4fs_crc16(crc, raw + GD_CSUM_OFFSET + 2, size - GD_CSUM_OFFSET - 2);
		return crc;
	}
	return 0;
}

static void group_desc_decode(struct ext4fs_group_desc *gd, const unsigned char *d, uint32_t size)
{
	memset(gd, 0, sizeof(*gd));
	gd->block_bitmap = le32_load(d + 0x00);
	gd->inode_bitmap = le32_load(d + 0x04);
	gd->inode_table = le32_load(d + 0x08);
	gd->free_blocks_count = le16_load(d + 0x0C);
	gd->free_inodes_count = le16_load(d + 0x0E);
	gd->used_dirs_count = le16_load(d + 0x10);
	gd->flags = le16_load(d + 0x12);
	gd->exclude_bitmap = le32_load(d + 0x14);
	gd->block_bitmap_csum = le16_load(d + 0x18);
	gd->inode_bitmap_csum = le16_load(d + 0x1A);
	gd->itable_unused = le16_load(d + 0x1C);
	gd->checksum = le16_load(d + 0x1E);
	if (size < GD_MIN_64BIT_SIZE)
		return;
	gd->block_bitmap |= (uint64_t)le32_load(d + 0x20) << 32;
	gd->inode_bitmap |= (uint64_t)le32_load(d + 0x24) << 32;
	gd->inode_table |= (uint64_t)le32_load(d + 0x28) << 32;
	gd->free_blocks_count |= (uint32_t)le16_load(d + 0x2C) << 16;
	gd->free_inodes_count |= (uint32_t)le16_load(d + 0x2E) << 16;
	gd->used_dirs_count |= (uint32_t)le16_load(d + 0x30) << 16;
	gd->itable_unused |= (uint32_t)le16_load(d + 0x32) << 16;
	gd->exclude_bitmap |= (uint64_t)le32_load(d + 0x34) << 32;
	gd->block_bitmap_csum |= (uint32_t)le16_load(d + 0x38) << 16;
	gd->inode_bitmap_csum |= (uint32_t)le16_load(d + 0x3A) << 16;
}

/* Block holding descriptor block number i (0-based) of the table. */
static uint64_t desc_block_location(const struct ext4fs_fs *fs, uint64_t sb_block, uint32_t i)
{
	const struct ext4fs_geom *geo = &fs->geom;
	int meta_bg = (fs->sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_META_BG) != 0;

	if (!meta_bg || i < fs->sb.s_first_meta_bg)
		return sb_block + 1 + i;
	uint32_t g = i * geo->desc_per_block;
	uint64_t first = ext4fs_group_first_block(fs, g);
	/* A backup superblock open reads the primary meta_bg copies. */
	return first + (uint64_t)ext4fs_group_has_super(fs, g);
}

static int load_group_descs(struct ext4fs_fs *fs, uint64_t sb_block)
{
	const struct ext4fs_geom *geo = &fs->geom;
	unsigned char *block = NULL;
	int err = 0;

	/*
	 * Every descriptor block must be read from the image, so a table larger
	 * than the image cannot load; say so before sizing anything by a
	 * group count that a tiny corrupt image can make huge.
	 */
	if (geo->desc_blocks > fs->io->size / geo->block_size)
		return ext4fs__fs_fail(fs, EXT4FS_E_OUT_OF_IMAGE,
				       "the group descriptor table (%u blocks for %u groups) is larger than the image",
				       geo->desc_blocks, geo->group_count);
	fs->groups = calloc(geo->group_count, sizeof(*fs->groups));
	fs->gd_raw = calloc(geo->group_count, geo->desc_size);
	fs->gd_csum_ok = calloc(geo->group_count, 1);
	block = malloc(geo->block_size);
	if (!fs->groups || !fs->gd_raw || !fs->gd_csum_ok || !block) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for %u group descriptors",
				  geo->group_count);
		goto out;
	}
	for (uint32_t i = 0; i < geo->desc_blocks; i++) {
		uint64_t blk = desc_block_location(fs, sb_block, i);
		uint32_t first = i * geo->desc_per_block;
		uint32_t n = geo->group_count - first;

		if (n > geo->desc_per_block)
			n = geo->desc_per_block;
		err = ext4fs_blocks_read(fs, blk, 1, block);
		if (err) {
			ext4fs__fs_fail(fs, err, "reading group descriptor block %llu: %s",
				    (unsigned long long)blk, ext4fs_strerror(err));
			goto out;
		}
		memcpy(fs->gd_raw + (size_t)first * geo->desc_size, block, (size_t)n * geo->desc_size);
	}
	/*
	 * The locations are pointers like any other: with 4 KiB blocks
	 * first_data_block is 0, and a zeroed descriptor would put a bitmap or
	 * the inode table on the superblock's block, which a flush or an inode
	 * write would then overwrite.
	 */
	for (uint32_t g = 0; g < geo->group_count; g++) {
		struct ext4fs_group_desc *gd = &fs->groups[g];

		group_desc_decode(gd, ext4fs_group_desc_raw(fs, g), geo->desc_size);
		fs->gd_csum_ok[g] = (!geo->has_metadata_csum && !geo->has_gdt_csum) ||
				    ext4fs_group_desc_csum(fs, g) == gd->checksum;
		/* The caller relocates what is missing; every use of a location asks ext4fs_group_tables_present(). */
		if (fs->flags & EXT4FS_OPEN_MISPLACED_OK)
			continue;
		if (!ext4fs_block_ptr_valid(fs, gd->block_bitmap)) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_GD_BAD_BLOCK_MAP,
					  "group %u: block bitmap at %llu is not in the file system",
					  g, (unsigned long long)gd->block_bitmap);
			goto out;
		}
		if (!ext4fs_block_ptr_valid(fs, gd->inode_bitmap)) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_GD_BAD_INODE_MAP,
					  "group %u: inode bitmap at %llu is not in the file system",
					  g, (unsigned long long)gd->inode_bitmap);
			goto out;
		}
		if (!ext4fs_block_range_valid(fs, gd->inode_table, geo->inode_blocks_per_group)) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_GD_BAD_INODE_TABLE,
					  "group %u: inode table at %llu is not in the file system",
					  g, (unsigned long long)gd->inode_table);
			goto out;
		}
	}
out:
	free(block);
	return err;
}

/*
 * The layout rule e2fsprogs applies to descriptors (its check_desc), on
 * locations already known to lie in the file system: the superblock and
 * descriptor copies (with the reserved GDT blocks) are taken first; then,
 * group by group, the block bitmap, the inode bitmap and the inode table
 * must lie in the group (anywhere without flex_bg's packing, in the group
 * itself otherwise) and on blocks nothing taken before uses.
 */
int ext4fs_group_descs_check(struct ext4fs_fs *fs, uint32_t *bad_group)
{
	const struct ext4fs_geom *geo = &fs->geom;
	int flex = (fs->sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_FLEX_BG) != 0;
	/* One bit a block, allocated zeroed: only the pages holding metadata are touched. */
	unsigned char *taken = calloc(geo->blocks_count / 8 + 1, 1);
	int err = 0;

	if (!taken)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory to check the group descriptors");
#define TAKEN(b) (taken[(b) >> 3] & (1u << ((b) & 7)))
#define TAKE(b) (taken[(b) >> 3] |= (unsigned char)(1u << ((b) & 7)))
	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t sblk, odesc, ndesc;
		uint32_t on;

		ext4fs_group_meta_location(fs, g, &sblk, &odesc, &on, &ndesc, NULL);
		if (ext4fs_group_has_super(fs, g) && sblk < geo->blocks_count)
			TAKE(sblk);
		for (uint64_t b = odesc; odesc && b < odesc + on && b < geo->blocks_count; b++)
			TAKE(b);
		if (ndesc && ndesc < geo->blocks_count)
			TAKE(ndesc);
	}
	for (uint32_t g = 0; g < geo->group_count && !err; g++) {
		const struct ext4fs_group_desc *gd = &fs->groups[g];
		uint64_t lo = flex ? geo->first_data_block : ext4fs_group_first_block(fs, g);
		uint64_t hi = flex ? geo->blocks_count - 1 : ext4fs_group_last_block(fs, g);
		const char *what = NULL;

		if (gd->block_bitmap < lo || gd->block_bitmap > hi || TAKEN(gd->block_bitmap)) {
			err = EXT4FS_E_GD_BAD_BLOCK_MAP;
			what = "block bitmap";
		} else {
			TAKE(gd->block_bitmap);
			if (gd->inode_bitmap < lo || gd->inode_bitmap > hi || TAKEN(gd->inode_bitmap)) {
				err = EXT4FS_E_GD_BAD_INODE_MAP;
				what = "inode bitmap";
			}
		}
		if (!err) {
			TAKE(gd->inode_bitmap);
			uint64_t t = gd->inode_table, n = geo->inode_blocks_per_group;
			if (t < lo || t > hi || n > hi - t + 1) {
				err = EXT4FS_E_GD_BAD_INODE_TABLE;
				what = "inode table";
			}
			for (uint64_t b = t; !err && b < t + n; b++) {
				if (TAKEN(b)) {
					err = EXT4FS_E_GD_BAD_INODE_TABLE;
					what = "inode table";
				}
				TAKE(b);
			}
		}
		if (err) {
			if (bad_group)
				*bad_group = g;
			ext4fs__fs_fail(fs, err, "group %u: the %s is outside the group or on blocks other metadata uses", g,
					what);
		}
	}
#undef TAKEN
#undef TAKE
	free(taken);
	return err;
}

unsigned ext4fs_group_tables_present(const struct ext4fs_fs *fs, uint32_t g)
{
	const struct ext4fs_group_desc *gd = &fs->groups[g];
	unsigned present = 0;

	assert(g < fs->geom.group_count);
	if (ext4fs_block_ptr_valid(fs, gd->block_bitmap))
		present |= EXT4FS_GROUP_BLOCK_BITMAP;
	if (ext4fs_block_ptr_valid(fs, gd->inode_bitmap))
		present |= EXT4FS_GROUP_INODE_BITMAP;
	if (ext4fs_block_range_valid(fs, gd->inode_table, fs->geom.inode_blocks_per_group))
		present |= EXT4FS_GROUP_INODE_TABLE;
	return present;
}

#define BAD_SUPER(...) ext4fs__fs_fail(fs, EXT4FS_E_CORRUPT_SUPER, __VA_ARGS__)

/* Check the superblock and derive the geometry; every bound later code relies on is set here. */
static int validate_super(struct ext4fs_fs *fs)
{
	const struct ext4fs_super *sb = &fs->sb;
	struct ext4fs_geom *geo = &fs->geom;

	if (sb->s_magic != EXT4FS_SUPER_MAGIC)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_MAGIC, "bad magic 0x%04x in superblock (expected 0x%04x)",
				   sb->s_magic, EXT4FS_SUPER_MAGIC);
	if (sb->s_rev_level > 1)
		return BAD_SUPER("superblock revision level %u is not supported", sb->s_rev_level);
	if (sb->s_log_block_size > 6)
		return BAD_SUPER("s_log_block_size %u gives a block size above 64 KiB", sb->s_log_block_size);
	geo->log_block_size = sb->s_log_block_size;
	geo->block_size = 1024U << sb->s_log_block_size;
	geo->is_64bit = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_64BIT) != 0;
	geo->has_extents = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_EXTENTS) != 0;
	geo->has_filetype = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_FILETYPE) != 0;
	geo->has_metadata_csum = (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) != 0;
	geo->has_gdt_csum = !geo->has_metadata_csum &&
			    (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM) != 0;

	geo->blocks_count = sb->s_blocks_count_lo;
	geo->r_blocks_count = sb->s_r_blocks_count_lo;
	geo->free_blocks_count = sb->s_free_blocks_count_lo;
	if (geo->is_64bit) {
		geo->blocks_count |= (uint64_t)sb->s_blocks_count_hi << 32;
		geo->r_blocks_count |= (uint64_t)sb->s_r_blocks_count_hi << 32;
		geo->free_blocks_count |= (uint64_t)sb->s_free_blocks_count_hi << 32;
	}
	if (geo->blocks_count == 0)
		return BAD_SUPER("s_blocks_count is 0");
	if (geo->blocks_count > (UINT64_MAX >> 16) / geo->block_size)
		return BAD_SUPER("s_blocks_count %llu is too large", (unsigned long long)geo->blocks_count);
	if (sb->s_first_data_block >= geo->blocks_count)
		return BAD_SUPER("s_first_data_block %u is beyond s_blocks_count %llu",
				 sb->s_first_data_block, (unsigned long long)geo->blocks_count);
	if (sb->s_first_data_block != (geo->block_size == 1024 ? 1U : 0U) &&
	    !(sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_BIGALLOC))
		return BAD_SUPER("s_first_data_block is %u, should be %u for %u-byte blocks",
				 sb->s_first_data_block, geo->block_size == 1024 ? 1U : 0U, geo->block_size);
	geo->first_data_block = sb->s_first_data_block;

	if (sb->s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_BIGALLOC) {
		if (sb->s_log_cluster_size < sb->s_log_block_size || sb->s_log_cluster_size > 16)
			return BAD_SUPER("s_log_cluster_size %u is invalid", sb->s_log_cluster_size);
		geo->cluster_ratio = 1U << (sb->s_log_cluster_size - sb->s_log_block_size);
	} else {
		geo->cluster_ratio = 1;
	}
	geo->blocks_per_group = sb->s_blocks_per_group;
	geo->clusters_per_group = geo->cluster_ratio > 1 ? sb->s_clusters_per_group
							 : sb->s_blocks_per_group;
	if (geo->clusters_per_group == 0 || geo->clusters_per_group > 8 * geo->block_size ||
	    geo->clusters_per_group % 8)
		return BAD_SUPER("s_blocks_per_group %u is invalid for %u-byte blocks",
				 sb->s_blocks_per_group, geo->block_size);
	if ((uint64_t)geo->clusters_per_group * geo->cluster_ratio != geo->blocks_per_group)
		return BAD_SUPER("s_blocks_per_group %u does not match s_clusters_per_group %u",
				 sb->s_blocks_per_group, sb->s_clusters_per_group);

	uint64_t groups = (geo->blocks_count - geo->first_data_block + geo->blocks_per_group - 1) /
			  geo->blocks_per_group;
	if (groups > UINT32_MAX)
		return BAD_SUPER("too many block groups (%llu)", (unsigned long long)groups);
	geo->group_count = (uint32_t)groups;

	if (sb->s_rev_level == 0) {
		geo->inode_size = 128;
		geo->first_ino = 11;
	} else {
		geo->inode_size = sb->s_inode_size;
		geo->first_ino = sb->s_first_ino;
	}
	if (geo->inode_size < 128 || geo->inode_size > geo->block_size ||
	    (geo->inode_size & (geo->inode_size - 1)))
		return BAD_SUPER("s_inode_size %u is invalid", geo->inode_size);
	geo->inodes_per_group = sb->s_inodes_per_group;
	geo->inodes_count = sb->s_inodes_count;
	if (geo->inodes_per_group == 0 || geo->inodes_per_group > 8 * geo->block_size)
		return BAD_SUPER("s_inodes_per_group %u is invalid", geo->inodes_per_group);
	if ((uint64_t)geo->inodes_per_group * geo->group_count < geo->inodes_count ||
	    geo->inodes_count < 11)
		return BAD_SUPER("s_inodes_count %u does not fit %u groups of %u inodes",
				 geo->inodes_count, geo->group_count, geo->inodes_per_group);
	if (geo->first_ino < 11 || geo->first_ino >= geo->inodes_count)
		return BAD_SUPER("s_first_ino %u is invalid", geo->first_ino);
	geo->inode_blocks_per_group =
		(uint32_t)(((uint64_t)geo->inodes_per_group * geo->inode_size + geo->block_size - 1) /
			   geo->block_size);
	if (geo->inode_blocks_per_group > geo->blocks_per_group)
		return BAD_SUPER("the inode table (%u blocks) is larger than a group",
				 geo->inode_blocks_per_group);

	if (geo->is_64bit) {
		geo->desc_size = sb->s_desc_size;
		if (geo->desc_size < GD_MIN_64BIT_SIZE || geo->desc_size > GD_MAX_SIZE ||
		    (geo->desc_size & (geo->desc_size - 1)))
			return BAD_SUPER("s_desc_size %u is invalid", sb->s_desc_size);
	} else {
		geo->desc_size = 32;
	}
	if (geo->desc_size > geo->block_size)
		return BAD_SUPER("s_desc_size %u exceeds the block size", geo->desc_size);
	geo->desc_per_block = geo->block_size / geo->desc_size;
	geo->desc_blocks = (geo->group_count + geo->desc_per_block - 1) / geo->desc_per_block;
	if (sb->s_reserved_gdt_blocks > geo->block_size / 4)
		return BAD_SUPER("s_reserved_gdt_blocks %u is too large", sb->s_reserved_gdt_blocks);
	if ((sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_META_BG) &&
	    sb->s_first_meta_bg > geo->desc_blocks && !(fs->flags & EXT4FS_OPEN_SB_ERRORS_OK))
		return BAD_SUPER("s_first_meta_bg %u is beyond the %u descriptor blocks",
				 sb->s_first_meta_bg, geo->desc_blocks);
	if (sb->s_log_groups_per_flex > 31)
		return BAD_SUPER("s_log_groups_per_flex %u is too large", sb->s_log_groups_per_flex);
	geo->groups_per_flex = (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_FLEX_BG)
				       ? 1U << sb->s_log_groups_per_flex : 1;

	if (geo->has_metadata_csum) {
		if (sb->s_checksum_type != 1)
			return BAD_SUPER("unknown checksum type %u", sb->s_checksum_type);
		if (sb->s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_CSUM_SEED)
			geo->csum_seed = sb->s_checksum_seed;
		else
			geo->csum_seed = ext4fs_crc32c(~0U, sb->s_uuid, sizeof(sb->s_uuid));
	}
	return 0;
}

void ext4fs_close(struct ext4fs_fs *fs)
{
	if (!fs)
		return;
	/* Newest first: the allocator goes before the write layer it sits on. */
	while (fs->nlisteners) {
		struct ext4fs__listener_slot l = fs->listeners[--fs->nlisteners];
		if (l.ops->close)
			l.ops->close(fs, l.ctx);
	}
	ext4fs_io_close(fs->io);
	free(fs->groups);
	free(fs->gd_raw);
	free(fs->gd_csum_ok);
	free(fs->cache_data);
	free(fs);
}

static int read_super_at(struct ext4fs_fs *fs, uint64_t byte_offset)
{
	int err = ext4fs_io_read(fs->io, byte_offset, fs->sb_raw, EXT4FS_SUPER_SIZE);

	if (err)
		return ext4fs__fs_fail(fs, err, "reading the superblock at byte %llu: %s",
				   (unsigned long long)byte_offset, ext4fs_strerror(err));
	ext4fs_super_decode(&fs->sb, fs->sb_raw);
	return 0;
}

struct ext4fs_fs *ext4fs__fs_alloc(struct ext4fs_io *io, unsigned flags)
{
	struct ext4fs_fs *fs = calloc(1, sizeof(*fs));

	if (!fs) {
		ext4fs_io_close(io);
		return NULL;
	}
	fs->io = io;
	fs->flags = flags;
	return fs;
}

int ext4fs__fs_load(struct ext4fs_fs *fs, const struct ext4fs_open_opts *opts)
{
	uint64_t sb_block = 0;
	int err;

	if (opts->superblock) {
		/* A backup: try the given block size, else each one until the magic matches. */
		unsigned bs = opts->block_size ? opts->block_size : 1024;
		for (;;) {
			err = read_super_at(fs, opts->superblock * bs);
			if (!err && fs->sb.s_magic == EXT4FS_SUPER_MAGIC &&
			    (1024U << (fs->sb.s_log_block_size & 7)) == bs)
				break;
			if (opts->block_size || bs >= 65536) {
				if (!err)
					err = ext4fs__fs_fail(fs, EXT4FS_E_BAD_MAGIC,
							  "no superblock at block %llu",
							  (unsigned long long)opts->superblock);
				return err;
			}
			bs <<= 1;
		}
		sb_block = opts->superblock;
	} else {
		err = read_super_at(fs, EXT4FS_SUPER_OFFSET);
		if (err)
			return err;
	}
	err = validate_super(fs);
	if (err)
		return err;
	/* The primary is at byte 1024: block 1 with 1 KiB blocks even when bigalloc makes s_first_data_block 0. */
	if (!opts->superblock)
		sb_block = EXT4FS_SUPER_OFFSET / fs->geom.block_size;
	if (fs->geom.has_metadata_csum && fs_csum_strict(fs) &&
	    ext4fs_super_csum(fs->sb_raw) != fs->sb.s_checksum)
		return ext4fs__fs_fail(fs, EXT4FS_E_SB_CSUM, "superblock checksum is 0x%08x, should be 0x%08x",
				       fs->sb.s_checksum, ext4fs_super_csum(fs->sb_raw));
	if ((fs->sb.s_feature_incompat & ~READ_INCOMPAT_SUPPORTED) &&
	    !(fs->flags & EXT4FS_OPEN_FORCE))
		return ext4fs__fs_fail(fs, EXT4FS_E_UNSUPP_FEATURE,
				       "unsupported incompatible features 0x%x",
				       fs->sb.s_feature_incompat & ~READ_INCOMPAT_SUPPORTED);
	fs->cache_data = malloc((size_t)EXT4FS_CACHE_SLOTS * fs->geom.block_size);
	if (!fs->cache_data)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the block cache");
	return load_group_descs(fs, sb_block);
}

/* -- listeners -- */

int ext4fs__fs_listen(struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops, void *ctx)
{
	if (fs->nlisteners == FS_LISTENERS_MAX)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "too many listeners on the handle");
	fs->listeners[fs->nlisteners].ops = ops;
	fs->listeners[fs->nlisteners].ctx = ctx;
	fs->nlisteners++;
	return 0;
}

void ext4fs__fs_unlisten(struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops)
{
	for (unsigned i = 0; i < fs->nlisteners; i++)
		if (fs->listeners[i].ops == ops) {
			memmove(&fs->listeners[i], &fs->listeners[i + 1],
				(fs->nlisteners - i - 1) * sizeof(fs->listeners[0]));
			fs->nlisteners--;
			return;
		}
}

void *ext4fs__fs_listener_ctx(const struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops)
{
	for (unsigned i = 0; i < fs->nlisteners; i++)
		if (fs->listeners[i].ops == ops)
			return fs->listeners[i].ctx;
	return NULL;
}

int ext4fs__fs_listening(const struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops)
{
	for (unsigned i = 0; i < fs->nlisteners; i++)
		if (fs->listeners[i].ops == ops)
			return 1;
	return 0;
}

void ext4fs__fs_space_changed(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, int used)
{
	for (unsigned i = fs->nlisteners; i-- > 0;)
		if (fs->listeners[i].ops->space_changed)
			fs->listeners[i].ops->space_changed(fs, fs->listeners[i].ctx, blk, count, used);
}

void ext4fs__fs_descs_changed(struct ext4fs_fs *fs)
{
	/* Downwards: a listener that unregisters itself moves only those above it. */
	for (unsigned i = fs->nlisteners; i-- > 0;)
		if (fs->listeners[i].ops->descs_changed)
			fs->listeners[i].ops->descs_changed(fs, fs->listeners[i].ctx);
}

static void group_desc_encode(const struct ext4fs_group_desc *gd, unsigned char *d, uint32_t size)
{
	le32_store(d + 0x00, (uint32_t)gd->block_bitmap);
	le32_store(d + 0x04, (uint32_t)gd->inode_bitmap);
	le32_store(d + 0x08, (uint32_t)gd->inode_table);
	le16_store(d + 0x0C, (uint16_t)gd->free_blocks_count);
	le16_store(d + 0x0E, (uint16_t)gd->free_inodes_count);
	le16_store(d + 0x10, (uint16_t)gd->used_dirs_count);
	le16_store(d + 0x12, gd->flags);
	le32_store(d + 0x14, (uint32_t)gd->exclude_bitmap);
	le16_store(d + 0x18, (uint16_t)gd->block_bitmap_csum);
	le16_store(d + 0x1A, (uint16_t)gd->inode_bitmap_csum);
	le16_store(d + 0x1C, (uint16_t)gd->itable_unused);
	le16_store(d + 0x1E, gd->checksum);
	if (size < GD_MIN_64BIT_SIZE)
		return;
	le32_store(d + 0x20, (uint32_t)(gd->block_bitmap >> 32));
	le32_store(d + 0x24, (uint32_t)(gd->inode_bitmap >> 32));
	le32_store(d + 0x28, (uint32_t)(gd->inode_table >> 32));
	le16_store(d + 0x2C, (uint16_t)(gd->free_blocks_count >> 16));
	le16_store(d + 0x2E, (uint16_t)(gd->free_inodes_count >> 16));
	le16_store(d + 0x30, (uint16_t)(gd->used_dirs_count >> 16));
	le16_store(d + 0x32, (uint16_t)(gd->itable_unused >> 16));
	le32_store(d + 0x34, (uint32_t)(gd->exclude_bitmap >> 32));
	le16_store(d + 0x38, (uint16_t)(gd->block_bitmap_csum >> 16));
	le16_store(d + 0x3A, (uint16_t)(gd->inode_bitmap_csum >> 16));
}

void ext4fs__fs_group_desc_store(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd)
{
	unsigned char *raw = fs->gd_raw + (size_t)g * fs->geom.desc_size;

	fs->groups[g] = *gd;
	group_desc_encode(gd, raw, fs->geom.desc_size);
	fs->groups[g].checksum = ext4fs_group_desc_csum(fs, g);
	le16_store(raw + GD_CSUM_OFFSET, fs->groups[g].checksum);
	fs->gd_csum_ok[g] = 1;
}

void ext4fs__fs_super_store(struct ext4fs_fs *fs)
{
	ext4fs_super_encode(&fs->sb, fs->sb_raw);
	if (fs->geom.has_metadata_csum) {
		fs->sb.s_checksum = ext4fs_super_csum(fs->sb_raw);
		le32_store(fs->sb_raw + 0x3FC, fs->sb.s_checksum);
	}
}

int ext4fs__fs_new_in_memory(const struct ext4fs_super *sb, struct ext4fs_fs **out, char *errmsg,
			     size_t errmsg_len)
{
	struct ext4fs_fs *fs = calloc(1, sizeof(*fs));
	int err;

	*out = NULL;
	if (!fs)
		return EXT4FS_E_NO_MEMORY;
	fs->sb = *sb;
	fs->flags = EXT4FS_OPEN_RW;
	err = validate_super(fs);
	if (err)
		goto fail;
	fs->groups = calloc(fs->geom.group_count, sizeof(*fs->groups));
	fs->gd_raw = calloc(fs->geom.group_count, fs->geom.desc_size);
	fs->gd_csum_ok = calloc(fs->geom.group_count, 1);
	if (!fs->groups || !fs->gd_raw || !fs->gd_csum_ok) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for %u group descriptors",
				      fs->geom.group_count);
		goto fail;
	}
	ext4fs__fs_super_store(fs);
	*out = fs;
	return 0;
fail:
	return ext4fs__fs_abandon(fs, err, errmsg, errmsg_len);
}

int ext4fs__fs_abandon(struct ext4fs_fs *fs, int err, char *errmsg, size_t errmsg_len)
{
	if (errmsg && errmsg_len)
		snprintf(errmsg, errmsg_len, "%s", fs->errmsg[0] ? fs->errmsg : ext4fs_strerror(err));
	ext4fs_close(fs);
	return err;
}

int ext4fs__fs_close_flush_notify(struct ext4fs_fs *fs)
{
	int first = 0;

	for (unsigned i = fs->nlisteners; i-- > 0;)
		if (fs->listeners[i].ops->close_flush) {
			int err = fs->listeners[i].ops->close_flush(fs, fs->listeners[i].ctx);
			if (err && !first)
				first = err;
		}
	return first;
}
