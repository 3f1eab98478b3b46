/*
 * dir_block.c - directory blocks edited in memory, for the modules that
 * change directories (dir_write.c, htree_write.c, dir_rebuild.c; see
 * dir_internal.h): leaf records scanned, filled and initialised, index
 * node headers, checksum tails sealed, blocks read for changing, written,
 * and appended to a directory.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/blockmap.h"
#include "dir_internal.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define SMALL_DIR_MAX_BYTES 0x80000000ULL  /* without largedir: e2fsck's 2 GiB limit */
#define LARGE_DIR_MAX_BLOCKS (1ULL << 28)  /* what an htree's 28-bit block numbers reach */

/* -- leaf blocks in memory ------------------------------------------------- */

uint32_t ext4fs__dirw_leaf_end(const struct ext4fs_fs *fs)
{
	return fs->geom.block_size - (fs->geom.has_metadata_csum ? EXT4FS_DIRENT_TAIL_SIZE : 0);
}

uint32_t ext4fs__dirw_rec_len(const struct ext4fs_fs *fs, const unsigned char *buf, uint32_t off)
{
	return ext4fs_dirent_rec_len(le16_load(buf + off + DIRW_DE_REC_LEN), fs->geom.block_size);
}

static int leaf_corrupt(struct ext4fs_fs *fs, uint32_t dir, uint64_t lblk, uint32_t off,
			const char *what)
{
	return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT, "directory %u: logical block %llu, offset %u: %s",
			       dir, (unsigned long long)lblk, off, what);
}

int ext4fs__dirw_leaf_scan(struct ext4fs_fs *fs, uint32_t dir, const unsigned char *buf, uint64_t lblk,
			   const char *name, size_t len, uint32_t need, struct dirw_scan *s)
{
	uint32_t end = ext4fs__dirw_leaf_end(fs), off = 0, prev = DIRW_NO_PREV;

	memset(s, 0, sizeof(*s));
	if (fs->geom.has_metadata_csum && ext4fs_dirent_tail_offset(fs, buf) < 0)
		return leaf_corrupt(fs, dir, lblk, end, "no checksum tail");
	while (off < end) {
		if (end - off < DIRW_DE_HEADER)
			return leaf_corrupt(fs, dir, lblk, off, "entry header runs past the end");
		uint32_t ino = le32_load(buf + off + DIRW_DE_INODE);
		uint32_t rl = ext4fs__dirw_rec_len(fs, buf, off);
		uint32_t nl = buf[off + DIRW_DE_NAME_LEN];

		if (rl < DIRW_DE_HEADER || rl % 4 || rl > end - off || dirw_rec_size(nl) > rl)
			return leaf_corrupt(fs, dir, lblk, off, "bad rec_len or name_len");
		if (ino && nl == len && memcmp(buf + off + DIRW_DE_NAME, name, len) == 0) {
			s->found = 1;
			s->off = off;
			s->prev = prev;
			s->found_ino = ino;
			return 0;
		}
		if (need && !s->has_room && (ino ? rl - dirw_rec_size(nl) : rl) >= need) {
			s->has_room = 1;
			s->room = off;
		}
		prev = off;
		off += rl;
	}
	return 0;
}

void ext4fs__dirw_entry_store(struct ext4fs_fs *fs, unsigned char *buf, uint32_t off, uint32_t rec_len,
			      const char *name, size_t len, uint32_t ino, uint8_t file_type)
{
	uint32_t size = dirw_rec_size((uint32_t)len);

	le32_store(buf + off + DIRW_DE_INODE, ino);
	ext4fs_dirent_rec_len_set(buf + off, rec_len, fs->geom.block_size);
	buf[off + DIRW_DE_NAME_LEN] = (unsigned char)len;
	buf[off + DIRW_DE_FILE_TYPE] = fs->geom.has_filetype ? file_type : 0;
	memcpy(buf + off + DIRW_DE_NAME, name, len);
	/* Padding up to the next 4 bytes: no stale name bytes behind the name. */
	memset(buf + off + DIRW_DE_NAME + len, 0, size - DIRW_DE_HEADER - len);
}

void ext4fs__dirw_leaf_put(struct ext4fs_fs *fs, unsigned char *buf, uint32_t off, const char *name,
			   size_t len, uint32_t ino, uint8_t file_type)
{
	uint32_t rl = ext4fs__dirw_rec_len(fs, buf, off);

	if (le32_load(buf + off + DIRW_DE_INODE)) {
		uint32_t used = dirw_rec_size(buf[off + DIRW_DE_NAME_LEN]);
		ext4fs_dirent_rec_len_set(buf + off, used, fs->geom.block_size);
		off += used;
		rl -= used;
	}
	ext4fs__dirw_entry_store(fs, buf, off, rl, name, len, ino, file_type);
}

/* The fixed fields of the checksum tail (its checksum is left 0). */
static void tail_init(struct ext4fs_fs *fs, unsigned char *buf)
{
	uint32_t tail = fs->geom.block_size - EXT4FS_DIRENT_TAIL_SIZE;

	memset(buf + tail, 0, EXT4FS_DIRENT_TAIL_SIZE);
	le16_store(buf + tail + DIRW_DE_REC_LEN, EXT4FS_DIRENT_TAIL_SIZE);
	buf[tail + DIRW_DE_FILE_TYPE] = EXT4FS_FT_DIR_CSUM;
}

void ext4fs__dirw_leaf_init(struct ext4fs_fs *fs, unsigned char *buf)
{
	memset(buf, 0, fs->geom.block_size);
	ext4fs_dirent_rec_len_set(buf, ext4fs__dirw_leaf_end(fs), fs->geom.block_size);
	if (fs->geom.has_metadata_csum)
		tail_init(fs, buf);
}

/* -- index blocks ------------------------------------------------------------ */

unsigned ext4fs__dirw_dx_limit(const struct ext4fs_fs *fs, uint32_t count_off)
{
	uint32_t space = fs->geom.block_size - count_off;

	if (fs->geom.has_metadata_csum)
		space -= EXT4FS_DX_TAIL_SIZE;
	return space / 8;   /* le32 hash, le32 block */
}

void ext4fs__dirw_dx_node_init(struct ext4fs_fs *fs, unsigned char *buf, unsigned count)
{
	memset(buf, 0, fs->geom.block_size);
	ext4fs_dirent_rec_len_set(buf, fs->geom.block_size, fs->geom.block_size);
	le16_store(buf + EXT4FS_DX_NODE_COUNT_OFFSET, (uint16_t)ext4fs__dirw_dx_limit(fs, EXT4FS_DX_NODE_COUNT_OFFSET));
	le16_store(buf + EXT4FS_DX_NODE_COUNT_OFFSET + 2, (uint16_t)count);
}

/* -- blocks ------------------------------------------------------------------ */

void ext4fs__dirw_block_seal(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode,
			     uint64_t lblk, unsigned char *buf)
{
	uint32_t bs = fs->geom.block_size, tail, csum, stored;
	unsigned kind;

	if (!fs->geom.has_metadata_csum)
		return;
	kind = ext4fs_dir_block_kind(fs, inode, lblk, buf);
	if (kind) {
		uint32_t count_off = kind == EXT4FS_DIRENT_DX_ROOT ? EXT4FS_DX_ROOT_COUNT_OFFSET
								   : EXT4FS_DX_NODE_COUNT_OFFSET;
		/* The dx tail after `limit' entries: a reserved word, then the checksum. */
		tail = count_off + (uint32_t)le16_load(buf + count_off) * 8;
		/*
		 * `limit' comes from disk, and a root's is not checked by
		 * ext4fs_dir_block_kind(): a damaged one (met with checksums
		 * ignored) puts the tail past the block.  Such a block has no
		 * place for a checksum, so none is written, as the kernel does.
		 */
		if (tail > bs - EXT4FS_DX_TAIL_SIZE)
			return;
		le32_store(buf + tail, 0);
		if (ext4fs_dx_block_csum(fs, dir, inode->i_generation, buf, count_off, &csum,
					 &stored) == 0)
			le32_store(buf + tail + 4, csum);
		return;
	}
	tail = bs - EXT4FS_DIRENT_TAIL_SIZE;
	tail_init(fs, buf);
	le32_store(buf + tail + 8, ext4fs_dirent_csum(fs, dir, inode->i_generation, buf, tail));
}

int ext4fs__dirw_block_write(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode,
			     uint64_t lblk, uint64_t pblk, unsigned char *buf)
{
	int err;

	ext4fs__dirw_block_seal(fs, dir, inode, lblk, buf);
	err = ext4fs_block_write(fs, pblk, buf);
	if (err)
		return ext4fs__fs_fail(fs, err, "directory %u: writing logical block %llu (block %llu): %s",
				       dir, (unsigned long long)lblk, (unsigned long long)pblk,
				       ext4fs_strerror(err));
	return 0;
}

int ext4fs__dirw_block_read(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode,
			    uint64_t lblk, unsigned char *buf, uint64_t *pblk)
{
	int err = ext4fs_dir_block_read(fs, dir, inode, lblk, buf, pblk);

	if (err)
		return err;
	if (fs->geom.has_metadata_csum && fs_csum_strict(fs))
		return ext4fs_dir_block_csum_verify(fs, dir, inode, lblk, buf);
	return 0;
}

int ext4fs__dirw_block_append(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			      uint32_t *lblk, uint64_t *pblk)
{
	uint32_t bs = fs->geom.block_size, got = 0;
	uint64_t n = ext4fs_inode_size(inode) / bs;
	uint64_t max = ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_LARGEDIR)
		       ? LARGE_DIR_MAX_BLOCKS : SMALL_DIR_MAX_BYTES / bs;
	int err;

	if (n >= max)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_FULL, "directory %u already has %llu blocks, the most it may have",
				       dir, (unsigned long long)n);
	err = ext4fs_bmap_alloc(fs, dir, inode, n, 1, 0, EXT4FS_ALLOC_DIRECTORY, 0, pblk, &got);
	if (err)
		return err;
	ext4fs_inode_set_size(inode, (n + 1) * bs);
	*lblk = (uint32_t)n;
	return 0;
}

int ext4fs__dirw_touch(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode)
{
	int64_t sec;
	uint32_t nsec;

	ext4fs_now(fs, &sec, &nsec);
	ext4fs_inode_set_time(inode, 'm', sec, nsec);
	ext4fs_inode_set_time(inode, 'c', sec, nsec);
	return ext4fs_inode_write(fs, dir, inode);
}
