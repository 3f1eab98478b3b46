/* scan.c - chunked inode table reads with uninit_bg skipping. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/extent.h"
#include "ext4fs/scan.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define SCAN_CHUNK_BYTES (1024 * 1024)   /* one request per MiB of inode table */

struct ext4fs_scan {
	struct ext4fs_fs *fs;
	unsigned flags;
	uint32_t group, last_group;
	uint32_t index;            /* next inode index within the group */
	uint32_t limit;            /* inodes of this group worth reading */
	unsigned char *chunk;
	uint32_t chunk_blocks;     /* capacity in blocks */
	uint32_t chunk_first;      /* first inode index held in chunk */
	uint32_t chunk_count;      /* inodes held */
	uint64_t blocks_read, blocks_skipped;
	/* EXT4FS_SCAN_JUDGE_GARBAGE: per inode of the chunk its checksum verdict, per block the garbage verdict. */
	uint8_t *csum_ok;
	uint8_t *garbage;
	int last_garbage;          /* the inode last returned lies in a garbage block */
};

static uint32_t group_inode_limit(struct ext4fs_scan *s, uint32_t g)
{
	const struct ext4fs_fs *fs = s->fs;
	const struct ext4fs_group_desc *gd = &fs->groups[g];
	uint32_t ipg = fs->geom.inodes_per_group;
	int trusted = (fs->geom.has_metadata_csum || fs->geom.has_gdt_csum) &&
		      (fs->gd_csum_ok[g] || (s->flags & EXT4FS_SCAN_TRUST_UNVERIFIED)) &&
		      !(s->flags & EXT4FS_SCAN_ALL_INODES);
	uint64_t first_ino = (uint64_t)g * ipg;

	/* s_inodes_count may end before this group does, or before it starts. */
	if (first_ino >= fs->geom.inodes_count)
		return 0;
	if (first_ino + ipg > fs->geom.inodes_count)
		ipg = (uint32_t)(fs->geom.inodes_count - first_ino);
	/* A group whose inode table is missing (EXT4FS_OPEN_MISPLACED_OK) has no inodes to give, as in e2fsprogs. */
	if (!(ext4fs_group_tables_present(fs, g) & EXT4FS_GROUP_INODE_TABLE))
		return 0;
	if (!trusted)
		return ipg;
	if (gd->flags & EXT4FS_BG_INODE_UNINIT)
		return 0;
	if (gd->itable_unused <= ipg)
		return ipg - gd->itable_unused;
	return ipg;
}

static void enter_group(struct ext4fs_scan *s)
{
	uint32_t ipb = s->fs->geom.block_size / s->fs->geom.inode_size;
	uint32_t limit = group_inode_limit(s, s->group);
	uint32_t used_blocks = (limit + ipb - 1) / ipb;

	s->index = 0;
	s->limit = limit;
	s->chunk_count = 0;
	s->blocks_skipped += s->fs->geom.inode_blocks_per_group - used_blocks;
}

int ext4fs_scan_open(struct ext4fs_fs *fs, uint32_t first_group, uint32_t last_group,
		     unsigned flags, struct ext4fs_scan **out)
{
	struct ext4fs_scan *s;

	*out = NULL;
	if (last_group >= fs->geom.group_count)
		last_group = fs->geom.group_count - 1;
	if (first_group > last_group)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "scan of groups %u-%u is empty", first_group,
				       last_group);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for an inode scan");
	s->fs = fs;
	s->flags = flags;
	s->group = first_group;
	s->last_group = last_group;
	s->chunk_blocks = SCAN_CHUNK_BYTES / fs->geom.block_size;
	if (s->chunk_blocks == 0)
		s->chunk_blocks = 1;
	if (s->chunk_blocks > fs->geom.inode_blocks_per_group)
		s->chunk_blocks = fs->geom.inode_blocks_per_group;
	s->chunk = malloc((size_t)s->chunk_blocks * fs->geom.block_size);
	if (flags & EXT4FS_SCAN_JUDGE_GARBAGE) {
		s->csum_ok = malloc((size_t)s->chunk_blocks * (fs->geom.block_size / fs->geom.inode_size));
		s->garbage = malloc(s->chunk_blocks);
	}
	if (!s->chunk || ((flags & EXT4FS_SCAN_JUDGE_GARBAGE) && (!s->csum_ok || !s->garbage))) {
		ext4fs_scan_close(s);
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for an inode scan");
	}
	enter_group(s);
	*out = s;
	return 0;
}

/*
 * A used file, directory or slow symlink mapped by blocks whose map holds
 * more than seven numbers outside the file system: e2fsprogs' sign that
 * the record is not an inode at all.
 */
static int block_map_insane(const struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	unsigned bad = 0;

	if ((in->i_flags & (EXT4FS_INLINE_DATA_FL | EXT4FS_EXTENTS_FL)) || !in->i_links_count)
		return 0;
	if (!EXT4FS_ISREG(in->i_mode) && !EXT4FS_ISDIR(in->i_mode) && !EXT4FS_ISLNK(in->i_mode))
		return 0;
	if (EXT4FS_ISLNK(in->i_mode) && ext4fs_inode_size(in) <= sizeof(in->i_block))
		return 0;
	for (unsigned i = 0; i < EXT4FS_N_BLOCKS; i++) {
		uint32_t blk = le32_load(in->i_block + 4 * i);
		if (blk && (blk < fs->geom.first_data_block || blk >= fs->geom.blocks_count))
			bad++;
	}
	return bad > EXT4FS_N_BLOCKS / 2;
}

/*
 * e2fsprogs' judgment of a block of inode records: garbage when more than
 * half of the records it holds (of those the scan reads) fail their
 * checksum or, checksum aside, have an extent header or a block map that
 * cannot be.  Also keeps each record's checksum verdict.
 */
static void judge_chunk(struct ext4fs_scan *s, uint32_t blocks)
{
	struct ext4fs_fs *fs = s->fs;
	uint32_t isz = fs->geom.inode_size, ipb = fs->geom.block_size / isz;

	for (uint32_t b = 0; b < blocks; b++) {
		unsigned badness = 0;
		for (uint32_t k = 0; k < ipb; k++) {
			uint32_t i = b * ipb + k, index = s->chunk_first + i;
			const unsigned char *rec = s->chunk + (size_t)i * isz;
			if (index >= s->limit)
				break;
			s->csum_ok[i] = (uint8_t)ext4fs_inode_csum_ok(fs, s->group * fs->geom.inodes_per_group + index + 1,
								     rec);
			if (!s->csum_ok[i]) {
				badness++;
				continue;
			}
			struct ext4fs_inode in;
			ext4fs_inode_decode(&in, rec, isz);
			if (((in.i_flags & EXT4FS_EXTENTS_FL) && !ext4fs_extent_node_header_ok(in.i_block, sizeof(in.i_block))) ||
			    block_map_insane(fs, &in))
				badness++;
		}
		/* With one record to a block there is no majority to speak of. */
		s->garbage[b] = ipb >= 2 && badness > ipb / 2;
	}
}

static int load_chunk(struct ext4fs_scan *s)
{
	struct ext4fs_fs *fs = s->fs;
	uint32_t ipb = fs->geom.block_size / fs->geom.inode_size;
	uint32_t first_block = s->index / ipb;
	uint32_t want = (s->limit - s->index + ipb - 1) / ipb;
	uint64_t table = fs->groups[s->group].inode_table;
	int err;

	if (want > s->chunk_blocks)
		want = s->chunk_blocks;
	err = ext4fs_blocks_read(fs, table + first_block, want, s->chunk);
	if (err)
		return ext4fs__fs_fail(fs, err, "group %u: reading inode table blocks %llu-%llu: %s", s->group,
				       (unsigned long long)(table + first_block),
				       (unsigned long long)(table + first_block + want - 1), ext4fs_strerror(err));
	s->blocks_read += want;
	s->chunk_first = first_block * ipb;
	s->chunk_count = want * ipb;
	if (s->flags & EXT4FS_SCAN_JUDGE_GARBAGE)
		judge_chunk(s, want);
	/* Ask for the next chunk while this one is being decoded. */
	ext4fs_blocks_readahead(fs, table + first_block + want, s->chunk_blocks);
	return 0;
}

int ext4fs_scan_next(struct ext4fs_scan *s, uint32_t *ino, struct ext4fs_inode *inode,
		     const unsigned char **raw, int *csum_ok)
{
	struct ext4fs_fs *fs = s->fs;
	uint32_t isz = fs->geom.inode_size;

	for (;;) {
		if (s->index >= s->limit) {
			if (s->group >= s->last_group)
				return 0;
			s->group++;
			enter_group(s);
			continue;
		}
		if (s->index < s->chunk_first || s->index >= s->chunk_first + s->chunk_count) {
			int err = load_chunk(s);
			if (err)
				return err;
		}
		uint32_t at = s->index - s->chunk_first;
		const unsigned char *rec = s->chunk + (size_t)at * isz;
		uint32_t n = s->group * fs->geom.inodes_per_group + s->index + 1;
		s->index++;
		ext4fs_inode_decode(inode, rec, isz);
		int ok = -1;    /* not computed yet */
		if (s->flags & EXT4FS_SCAN_JUDGE_GARBAGE) {
			ok = s->csum_ok[at];
			s->last_garbage = s->garbage[at / (fs->geom.block_size / isz)];
		}
		if (inode->i_links_count == 0 && inode->i_mode == 0 && n >= fs->geom.first_ino &&
		    (!(s->flags & EXT4FS_SCAN_SUSPECT_UNUSED) ||
		     (!inode->i_dtime && (ok = ext4fs_inode_csum_ok(fs, n, rec)))))
			continue;
		*ino = n;
		if (raw)
			*raw = rec;
		if (csum_ok)
			*csum_ok = ok >= 0 ? ok : ext4fs_inode_csum_ok(fs, n, rec);
		return 1;
	}
}

int ext4fs_scan_in_garbage(const struct ext4fs_scan *s) { return s->last_garbage; }
uint64_t ext4fs_scan_blocks_read(const struct ext4fs_scan *s) { return s->blocks_read; }
uint64_t ext4fs_scan_blocks_skipped(const struct ext4fs_scan *s) { return s->blocks_skipped; }

void ext4fs_scan_close(struct ext4fs_scan *s)
{
	if (!s)
		return;
	free(s->chunk);
	free(s->csum_ok);
	free(s->garbage);
	free(s);
}
