/* scan.c - chunked inode table reads with uninit_bg skipping. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/scan.h"
#include "fs_internal.h"

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
};

static uint32_t group_inode_limit(struct ext4fs_scan *s, uint32_t g)
{
	const struct ext4fs_fs *fs = s->fs;
	const struct ext4fs_group_desc *gd = &fs->groups[g];
	uint32_t ipg = fs->geom.inodes_per_group;
	int trusted = (fs->geom.has_metadata_csum || fs->geom.has_gdt_csum) && fs->gd_csum_ok[g] &&
		      !(s->flags & EXT4FS_SCAN_ALL_INODES);
	uint64_t first_ino = (uint64_t)g * ipg;

	/* s_inodes_count may end before this group does, or before it starts. */
	if (first_ino >= fs->geom.inodes_count)
		return 0;
	if (first_ino + ipg > fs->geom.inodes_count)
		ipg = (uint32_t)(fs->geom.inodes_count - first_ino);
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
	if (!s->chunk) {
		free(s);
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for an inode scan");
	}
	enter_group(s);
	*out = s;
	return 0;
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
		const unsigned char *rec = s->chunk + (size_t)(s->index - s->chunk_first) * isz;
		uint32_t n = s->group * fs->geom.inodes_per_group + s->index + 1;
		s->index++;
		ext4fs_inode_decode(inode, rec, isz);
		int ok = -1;    /* not computed yet */
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

uint64_t ext4fs_scan_blocks_read(const struct ext4fs_scan *s) { return s->blocks_read; }
uint64_t ext4fs_scan_blocks_skipped(const struct ext4fs_scan *s) { return s->blocks_skipped; }

void ext4fs_scan_close(struct ext4fs_scan *s)
{
	if (!s)
		return;
	free(s->chunk);
	free(s);
}
