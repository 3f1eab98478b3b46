/* bitmap.c - loading whole-file-system block and inode bitmaps. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/bitmap.h"
#include "ext4fs/crc.h"
#include "bitmap_internal.h"
#include "fs_internal.h"

struct ext4fs_bitmap {
	uint64_t start;        /* first item number */
	uint64_t end;          /* last item number */
	unsigned shift;        /* log2 of items per bit (cluster ratio for block bitmaps) */
	uint64_t nbits;
	unsigned char *bits;
	uint32_t ngroups;
	unsigned char *group_flags;   /* EXT4FS_BITMAP_*_BAD per group, see ext4fs__bitmap_note_block() */
};

static int bitmap_new(uint64_t start, uint64_t end, unsigned shift, uint32_t ngroups,
		      struct ext4fs_bitmap **out)
{
	struct ext4fs_bitmap *bm = calloc(1, sizeof(*bm));

	if (!bm)
		return EXT4FS_E_NO_MEMORY;
	bm->start = start;
	bm->end = end;
	bm->shift = shift;
	bm->nbits = ((end - start) >> shift) + 1;
	bm->ngroups = ngroups;
	bm->bits = calloc((size_t)((bm->nbits + 7) / 8), 1);
	bm->group_flags = calloc(ngroups ? ngroups : 1, 1);
	if (!bm->bits || !bm->group_flags) {
		ext4fs_bitmap_free(bm);
		return EXT4FS_E_NO_MEMORY;
	}
	*out = bm;
	return 0;
}

void ext4fs_bitmap_free(struct ext4fs_bitmap *bm)
{
	if (!bm)
		return;
	free(bm->bits);
	free(bm->group_flags);
	free(bm);
}

unsigned ext4fs_bitmap_group_flags(const struct ext4fs_bitmap *bm, uint32_t g)
{
	return g < bm->ngroups ? bm->group_flags[g] : 0;
}

uint64_t ext4fs_bitmap_start(const struct ext4fs_bitmap *bm) { return bm->start; }
uint64_t ext4fs_bitmap_end(const struct ext4fs_bitmap *bm) { return bm->end; }

static inline int bit_get(const unsigned char *bits, uint64_t i)
{
	return (bits[i >> 3] >> (i & 7)) & 1;
}

static inline void bit_set(unsigned char *bits, uint64_t i)
{
	bits[i >> 3] |= (unsigned char)(1U << (i & 7));
}

void ext4fs__bitmap_set_range(struct ext4fs_bitmap *bm, uint64_t n, uint64_t count)
{
	uint64_t i = (n - bm->start) >> bm->shift, last = (n + count - 1 - bm->start) >> bm->shift;

	for (; i <= last && (i & 7); i++)
		bit_set(bm->bits, i);
	for (; i + 7 <= last; i += 8)
		bm->bits[i >> 3] = 0xFF;
	for (; i <= last; i++)
		bit_set(bm->bits, i);
}

void ext4fs__bitmap_clear_range(struct ext4fs_bitmap *bm, uint64_t n, uint64_t count)
{
	uint64_t i = (n - bm->start) >> bm->shift, last = (n + count - 1 - bm->start) >> bm->shift;

	for (; i <= last && (i & 7); i++)
		bm->bits[i >> 3] &= (unsigned char)~(1U << (i & 7));
	for (; i + 7 <= last; i += 8)
		bm->bits[i >> 3] = 0;
	for (; i <= last; i++)
		bm->bits[i >> 3] &= (unsigned char)~(1U << (i & 7));
}

void ext4fs__bitmap_copy_out(const struct ext4fs_bitmap *bm, uint64_t first_bit, uint64_t nbits,
			     unsigned char *dst, size_t pad_bytes)
{
	memset(dst, 0, pad_bytes);
	if (first_bit + nbits > bm->nbits)
		nbits = first_bit < bm->nbits ? bm->nbits - first_bit : 0;
	if ((first_bit & 7) == 0) {
		memcpy(dst, bm->bits + (first_bit >> 3), (size_t)(nbits >> 3));
		for (uint64_t i = nbits & ~(uint64_t)7; i < nbits; i++)
			if (bit_get(bm->bits, first_bit + i))
				bit_set(dst, i);
	} else {
		for (uint64_t i = 0; i < nbits; i++)
			if (bit_get(bm->bits, first_bit + i))
				bit_set(dst, i);
	}
	for (uint64_t i = nbits; i < (uint64_t)pad_bytes * 8; i++)
		bit_set(dst, i);
}

const unsigned char *ext4fs__bitmap_bits(const struct ext4fs_bitmap *bm)
{
	return bm->bits;
}

int ext4fs_bitmap_test(const struct ext4fs_bitmap *bm, uint64_t n)
{
	if (n < bm->start || n > bm->end)
		return EXT4FS_E_INVALID_ARG;
	return bit_get(bm->bits, (n - bm->start) >> bm->shift);
}

int ext4fs_bitmap_find(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t to,
		       int want_set, uint64_t *found)
{
	if (from < bm->start || to > bm->end || from > to)
		return EXT4FS_E_INVALID_ARG;
	uint64_t i = (from - bm->start) >> bm->shift, last = (to - bm->start) >> bm->shift;
	unsigned char skip = want_set ? 0x00 : 0xFF;

	while (i <= last) {
		/* Whole bytes that cannot match are skipped eight bits at a time. */
		if ((i & 7) == 0 && i + 7 <= last && bm->bits[i >> 3] == skip) {
			i += 8;
			continue;
		}
		if (bit_get(bm->bits, i) == want_set) {
			uint64_t n = bm->start + (i << bm->shift);
			*found = n < from ? from : n;
			return 0;
		}
		i++;
	}
	return -ENOENT;
}

uint64_t ext4fs_bitmap_count_set(const struct ext4fs_bitmap *bm, uint64_t from, uint64_t to)
{
	uint64_t count = 0;

	if (from < bm->start)
		from = bm->start;
	if (to > bm->end)
		to = bm->end;
	if (from > to)
		return 0;
	for (uint64_t i = (from - bm->start) >> bm->shift; i <= (to - bm->start) >> bm->shift; i++)
		count += (uint64_t)bit_get(bm->bits, i);
	return count;
}

/* An UNINIT flag is believed only when descriptors carry a checksum that verified. */
static int group_flag(const struct ext4fs_fs *fs, uint32_t g, uint16_t flag)
{
	if (!fs->geom.has_metadata_csum && !fs->geom.has_gdt_csum)
		return 0;
	return (fs->groups[g].flags & flag) && fs->gd_csum_ok[g];
}

static void mark_block(struct ext4fs_bitmap *bm, uint64_t blk)
{
	if (blk >= bm->start && blk <= bm->end)
		bit_set(bm->bits, (blk - bm->start) >> bm->shift);
}

static void mark_blocks(struct ext4fs_bitmap *bm, uint64_t blk, uint64_t count)
{
	for (uint64_t i = 0; i < count; i++)
		mark_block(bm, blk + i);
}

static int bitmap_csum_ok(const struct ext4fs_fs *fs, const unsigned char *data, size_t size,
			  uint32_t stored)
{
	uint32_t crc = ext4fs_crc32c(fs->geom.csum_seed, data, size);

	if (fs->geom.desc_size < 64)
		return (crc & 0xFFFF) == (stored & 0xFFFF);
	return crc == stored;
}

/*
 * What group g's bitmap block (block_size bytes read from disk) says beyond
 * its bits: the first map_bytes bytes are the bitmap proper, of which the
 * first nbits bits are items of the file system; the rest must be ones.
 */
static unsigned block_findings(const struct ext4fs_fs *fs, const unsigned char *block, size_t map_bytes,
			       uint64_t nbits, uint32_t stored_csum)
{
	unsigned flags = 0;

	if (fs->geom.has_metadata_csum && !bitmap_csum_ok(fs, block, map_bytes, stored_csum))
		flags |= EXT4FS_BITMAP_CSUM_BAD;
	for (size_t i = map_bytes; i < fs->geom.block_size; i++)
		if (block[i] != 0xFF) {
			flags |= EXT4FS_BITMAP_TAIL_BAD;
			break;
		}
	for (uint64_t i = nbits; i < (uint64_t)map_bytes * 8; i++)
		if (!bit_get(block, i)) {
			flags |= EXT4FS_BITMAP_END_BAD;
			break;
		}
	return flags;
}

/*
 * A group whose bitmap is missing (EXT4FS_OPEN_MISPLACED_OK) reads as all
 * free: its stored checksum and its padding (bits past the file system's
 * last item, which should be set) are judged on that empty map, as
 * e2fsprogs judges the map it holds for the group.  block: block_size
 * bytes of scratch.
 */
static unsigned missing_findings(const struct ext4fs_fs *fs, unsigned char *block, size_t map_bytes,
				 uint64_t nbits, uint32_t stored_csum)
{
	unsigned flags = nbits < (uint64_t)map_bytes * 8 ? EXT4FS_BITMAP_END_BAD : 0;

	memset(block, 0, map_bytes);
	if (fs->geom.has_metadata_csum && !bitmap_csum_ok(fs, block, map_bytes, stored_csum))
		flags |= EXT4FS_BITMAP_CSUM_BAD;
	return flags;
}

int ext4fs__bitmap_note_block(struct ext4fs_fs *fs, struct ext4fs_bitmap *bm, int inodes, uint32_t g)
{
	const struct ext4fs_geom *geo = &fs->geom;
	const struct ext4fs_group_desc *gd = &fs->groups[g];
	uint64_t per_group = inodes ? geo->inodes_per_group : geo->clusters_per_group;
	uint64_t first_bit = (uint64_t)g * per_group, nbits = 0;
	uint64_t blk = inodes ? gd->inode_bitmap : gd->block_bitmap;
	unsigned char *block;
	int err;

	if (g >= bm->ngroups)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "group %u does not exist", g);
	if (first_bit < bm->nbits)
		nbits = bm->nbits - first_bit < per_group ? bm->nbits - first_bit : per_group;
	/* A missing bitmap (EXT4FS_OPEN_MISPLACED_OK) has nothing to note. */
	if (!(ext4fs_group_tables_present(fs, g) & (inodes ? EXT4FS_GROUP_INODE_BITMAP : EXT4FS_GROUP_BLOCK_BITMAP)))
		return 0;
	block = malloc(geo->block_size);
	if (!block)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for a bitmap block");
	err = ext4fs_blocks_read(fs, blk, 1, block);
	if (err)
		ext4fs__fs_fail(fs, err, "group %u: reading %s bitmap at %llu: %s", g, inodes ? "inode" : "block",
				(unsigned long long)blk, ext4fs_strerror(err));
	else
		bm->group_flags[g] = (unsigned char)block_findings(fs, block, (size_t)(per_group / 8), nbits,
								   inodes ? gd->inode_bitmap_csum
									  : gd->block_bitmap_csum);
	free(block);
	return err;
}

int ext4fs_block_bitmap_load(struct ext4fs_fs *fs, struct ext4fs_bitmap **out)
{
	const struct ext4fs_geom *geo = &fs->geom;
	struct ext4fs_bitmap *bm = NULL;
	unsigned char *block = NULL;
	unsigned shift = 0;
	int err;

	*out = NULL;
	while ((1U << shift) < geo->cluster_ratio)
		shift++;
	err = bitmap_new(geo->first_data_block, geo->blocks_count - 1, shift, geo->group_count, &bm);
	if (err)
		return ext4fs__fs_fail(fs, err, "no memory for the block bitmap");
	block = malloc(geo->block_size);
	if (!block) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the block bitmap");
		goto out;
	}
	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t first_bit = (uint64_t)g * geo->clusters_per_group;
		uint64_t nbits = bm->nbits - first_bit;

		if (nbits > geo->clusters_per_group)
			nbits = geo->clusters_per_group;
		if (group_flag(fs, g, EXT4FS_BG_BLOCK_UNINIT)) {
			uint64_t sblk, odesc, ndesc;
			uint32_t odesc_blocks;
			ext4fs_group_meta_location(fs, g, &sblk, &odesc, &odesc_blocks, &ndesc, NULL);
			if (ext4fs_group_has_super(fs, g))
				mark_block(bm, g == 0 ? geo->first_data_block : sblk);
			mark_blocks(bm, odesc, odesc ? odesc_blocks : 0);
			if (ndesc)
				mark_block(bm, ndesc);
			continue;
		}
		/* A missing bitmap (EXT4FS_OPEN_MISPLACED_OK) reads as all free, as e2fsprogs reads one at block 0. */
		if (!(ext4fs_group_tables_present(fs, g) & EXT4FS_GROUP_BLOCK_BITMAP)) {
			bm->group_flags[g] = (unsigned char)missing_findings(fs, block, geo->clusters_per_group / 8, nbits,
									     fs->groups[g].block_bitmap_csum);
			continue;
		}
		err = ext4fs_blocks_read(fs, fs->groups[g].block_bitmap, 1, block);
		if (err) {
			ext4fs__fs_fail(fs, err, "group %u: reading block bitmap at %llu: %s", g,
					(unsigned long long)fs->groups[g].block_bitmap, ext4fs_strerror(err));
			goto out;
		}
		bm->group_flags[g] = (unsigned char)block_findings(fs, block, geo->clusters_per_group / 8, nbits,
								   fs->groups[g].block_bitmap_csum);
		if ((bm->group_flags[g] & EXT4FS_BITMAP_CSUM_BAD) && fs_csum_strict(fs)) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_BITMAP_CSUM,
					      "group %u: block bitmap checksum does not match", g);
			goto out;
		}
		for (uint64_t i = 0; i < nbits; i++)
			if (bit_get(block, i))
				bit_set(bm->bits, first_bit + i);
	}
	/* flex_bg may place a group's bitmaps and inode table inside an uninitialised group. */
	for (uint32_t g = 0; g < geo->group_count; g++) {
		const struct ext4fs_group_desc *gd = &fs->groups[g];
		uint64_t where[3] = { gd->block_bitmap, gd->inode_bitmap, gd->inode_table };
		uint64_t count[3] = { 1, 1, geo->inode_blocks_per_group };
		for (int k = 0; k < 3; k++) {
			if (!ext4fs_block_range_valid(fs, where[k], count[k]))
				continue;
			uint32_t host = ext4fs_group_of_block(fs, where[k]);
			if (group_flag(fs, host, EXT4FS_BG_BLOCK_UNINIT))
				mark_blocks(bm, where[k], count[k]);
		}
	}
	*out = bm;
	bm = NULL;
out:
	free(block);
	ext4fs_bitmap_free(bm);
	return err;
}

int ext4fs_inode_bitmap_load(struct ext4fs_fs *fs, struct ext4fs_bitmap **out)
{
	const struct ext4fs_geom *geo = &fs->geom;
	struct ext4fs_bitmap *bm = NULL;
	unsigned char *block = NULL;
	int err;

	*out = NULL;
	err = bitmap_new(1, geo->inodes_count, 0, geo->group_count, &bm);
	if (err)
		return ext4fs__fs_fail(fs, err, "no memory for the inode bitmap");
	block = malloc(geo->block_size);
	if (!block) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the inode bitmap");
		goto out;
	}
	for (uint32_t g = 0; g < geo->group_count; g++) {
		uint64_t first_bit = (uint64_t)g * geo->inodes_per_group;
		uint64_t nbits = bm->nbits - first_bit;

		if (first_bit >= bm->nbits)
			break;
		if (nbits > geo->inodes_per_group)
			nbits = geo->inodes_per_group;
		if (group_flag(fs, g, EXT4FS_BG_INODE_UNINIT))
			continue;
		if (!(ext4fs_group_tables_present(fs, g) & EXT4FS_GROUP_INODE_BITMAP)) {
			bm->group_flags[g] = (unsigned char)missing_findings(fs, block, geo->inodes_per_group / 8, nbits,
									     fs->groups[g].inode_bitmap_csum);
			continue;
		}
		err = ext4fs_blocks_read(fs, fs->groups[g].inode_bitmap, 1, block);
		if (err) {
			ext4fs__fs_fail(fs, err, "group %u: reading inode bitmap at %llu: %s", g,
					(unsigned long long)fs->groups[g].inode_bitmap, ext4fs_strerror(err));
			goto out;
		}
		bm->group_flags[g] = (unsigned char)block_findings(fs, block, geo->inodes_per_group / 8, nbits,
								   fs->groups[g].inode_bitmap_csum);
		if ((bm->group_flags[g] & EXT4FS_BITMAP_CSUM_BAD) && fs_csum_strict(fs)) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_BITMAP_CSUM,
					      "group %u: inode bitmap checksum does not match", g);
			goto out;
		}
		for (uint64_t i = 0; i < nbits; i++)
			if (bit_get(block, i))
				bit_set(bm->bits, first_bit + i);
	}
	*out = bm;
	bm = NULL;
out:
	free(block);
	ext4fs_bitmap_free(bm);
	return err;
}
