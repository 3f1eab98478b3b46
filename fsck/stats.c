/*
 * stats.c - counting what e4fsck -v reports (see stats.h).
 *
 * The rules are e2fsck's, so that the statistics block matches its output:
 * an inode counts by kind when it is in use (the root directory or an
 * ordinary inode with links); a device, fifo, socket or symlink whose
 * fields e2fsck would call damaged does not count as one.  Reserved inodes
 * (the journal, quota files) and the orphan file are not counted by kind,
 * but e2fsck walks their blocks, so they count in the extent depth
 * histogram and as large files.
 *
 * Fragmentation is found by pass 1 while walking an inode's blocks, after
 * fsck_stats_inode() has seen the inode: whatever the worker's count of
 * non-contiguous inodes grew by before the next call (or the merge) belongs
 * to the inode seen last, which tells directories apart from files.
 */
#include "config.h"
#include <string.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/extent.h"
#include "ext4fs/super.h"
#include "context.h"
#include "stats.h"

#define I_BLOCK_IND   12          /* i_block word of the single indirect block */
#define LARGE_FILE    (1ULL << 31)

static uint32_t i_block_word(const struct ext4fs_inode *in, unsigned k)
{
	return ext4fs_blockmap_slot_get(in->i_block, k);
}

static void settle_fragmentation(struct fsck_stats *s, uint64_t fragmented)
{
	if (s->pending_dir)
		s->dirs_fragmented += fragmented - s->frag_mark;
	s->frag_mark = fragmented;
	s->pending_dir = 0;
}

/* e2fsck's test of a device, fifo or socket: no block map flags, and no stray pointers once immutable. */
static int special_ok(const struct ext4fs_inode *in)
{
	if (in->i_flags & (EXT4FS_INDEX_FL | EXT4FS_EXTENTS_FL))
		return 0;
	if (in->i_flags & (EXT4FS_IMMUTABLE_FL | EXT4FS_APPEND_FL))
		for (unsigned k = 4; k < sizeof(in->i_block) / 4; k++)
			if (i_block_word(in, k))
				return 0;
	return 1;
}

/* e2fsck's test of a symlink, short of reading a slow symlink's block or an inline one's attribute. */
static int symlink_ok(struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint64_t size = ext4fs_inode_size(in);
	size_t len;

	if (!size || size >= 1ULL << 32 || (in->i_flags & EXT4FS_INDEX_FL))
		return 0;
	if (in->i_flags & EXT4FS_INLINE_DATA_FL)
		return !(in->i_flags & EXT4FS_EXTENTS_FL);
	if (!ext4fs_inode_is_fast_symlink(fs, in))
		return 1;
	if (in->i_flags & EXT4FS_EXTENTS_FL)
		return 0;
	if (in->i_flags & EXT4FS_ENCRYPT_FL)
		len = (size_t)ext4fs_encrypted_symlink_len_get(in->i_block) + 2;
	else
		len = strnlen((const char *)in->i_block, sizeof(in->i_block));
	return len < sizeof(in->i_block) && len == size;
}

/* Whether e2fsck walks the inode's extent tree (and so puts it in the histogram). */
static int has_extent_tree(struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	uint16_t type = in->i_mode & EXT4FS_S_IFMT;

	if (!(in->i_flags & EXT4FS_EXTENTS_FL) || (in->i_flags & EXT4FS_INLINE_DATA_FL) ||
	    !ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_EXTENTS))
		return 0;
	if (type == EXT4FS_S_IFLNK)
		return !ext4fs_inode_is_fast_symlink(fs, in);
	return type == EXT4FS_S_IFREG || type == EXT4FS_S_IFDIR;
}

/* What e2fsck learns while walking the blocks of any inode it checks. */
static void count_mapping(struct fsck_stats *s, struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	if (EXT4FS_ISREG(in->i_mode) && ext4fs_inode_size(in) >= LARGE_FILE)
		s->large_files++;
	if (has_extent_tree(fs, in)) {
		struct ext4fs_extent_header root;
		ext4fs_extent_node_header(in->i_block, &root);
		uint16_t magic = root.magic, entries = root.entries, max = root.max;
		unsigned depth = root.depth;
		/* A root e2fsck cannot open is a problem, not a tree. */
		if (magic != EXT4FS_EXTENT_MAGIC || entries > max)
			return;
		s->extent_depth[depth < FSCK_EXTENT_DEPTHS ? depth : FSCK_EXTENT_DEPTHS - 1]++;
	}
}

static int count_bad_block(const struct ext4fs_block_visit *v, void *arg)
{
	struct fsck_stats *s = arg;

	s->bad_blocks += v->count;
	return 0;
}

/* Counts by kind; returns 0 for the symlinks whose blocks e2fsck does not walk. */
static int count_kind(struct fsck_stats *s, struct ext4fs_fs *fs, const struct ext4fs_inode *in)
{
	switch (in->i_mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFDIR: s->directories++; break;
	case EXT4FS_S_IFREG: s->regular++; break;
	case EXT4FS_S_IFCHR: s->chardevs += special_ok(in); break;
	case EXT4FS_S_IFBLK: s->blockdevs += special_ok(in); break;
	case EXT4FS_S_IFIFO: s->fifos += special_ok(in); break;
	case EXT4FS_S_IFSOCK: s->sockets += special_ok(in); break;
	case EXT4FS_S_IFLNK:
		if (!symlink_ok(fs, in))
			break;
		s->symlinks++;
		if (in->i_flags & EXT4FS_INLINE_DATA_FL)
			return 0;
		if (ext4fs_inode_is_fast_symlink(fs, in)) {
			s->fast_symlinks++;
			return 0;
		}
		break;
	}
	return 1;
}

/* The orphan file is an ordinary inode number that e2fsck checks as a reserved one. */
static int is_orphan_file(struct ext4fs_fs *fs, uint32_t ino)
{
	return ext4fs_has_compat(fs, EXT4FS_FEATURE_COMPAT_ORPHAN_FILE) && ino == ext4fs_sb(fs)->s_orphan_file_inum;
}

void fsck_stats_inode(struct fsck_stats *s, struct ext4fs_fs *fs, uint32_t ino,
		      const struct ext4fs_inode *in, uint64_t fragmented)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);

	settle_fragmentation(s, fragmented);
	s->pending_dir = EXT4FS_ISDIR(in->i_mode);
	if (ino == EXT4FS_BAD_INO) {
		/* Its blocks are the list; pass 1 reports a list that cannot be read. */
		if (ext4fs_inode_blocks_raw(fs, in))
			ext4fs_block_iterate(fs, ino, in, EXT4FS_ITER_DATA_ONLY, count_bad_block, s);
		return;
	}
	if ((ino < g->first_ino && ino != EXT4FS_ROOT_INO) || is_orphan_file(fs, ino)) {
		count_mapping(s, fs, in);
		return;
	}
	if (!in->i_links_count)
		return;
	if (count_kind(s, fs, in) && !(in->i_flags & (EXT4FS_EXTENTS_FL | EXT4FS_INLINE_DATA_FL))) {
		s->ind += i_block_word(in, I_BLOCK_IND) != 0;
		s->dind += i_block_word(in, I_BLOCK_IND + 1) != 0;
		s->tind += i_block_word(in, I_BLOCK_IND + 2) != 0;
	}
	count_mapping(s, fs, in);
}

void fsck_stats_merge(struct fsck_stats *dst, struct fsck_stats *src, uint64_t fragmented)
{
	settle_fragmentation(src, fragmented);
	dst->regular += src->regular;
	dst->directories += src->directories;
	dst->chardevs += src->chardevs;
	dst->blockdevs += src->blockdevs;
	dst->fifos += src->fifos;
	dst->sockets += src->sockets;
	dst->symlinks += src->symlinks;
	dst->fast_symlinks += src->fast_symlinks;
	dst->large_files += src->large_files;
	dst->ind += src->ind;
	dst->dind += src->dind;
	dst->tind += src->tind;
	for (unsigned d = 0; d < FSCK_EXTENT_DEPTHS; d++)
		dst->extent_depth[d] += src->extent_depth[d];
	dst->dirs_fragmented += src->dirs_fragmented;
	dst->bad_blocks += src->bad_blocks;
}

int fsck_count_entry(struct e4fsck *ctx, uint32_t ino)
{
	int seen = counter_paged_inc(&ctx->links_seen, ino);

	if (seen < 0)
		return seen;
	ctx->stats.entries++;
	if (seen > 1)
		ctx->stats.extra_links++;
	return seen;
}
