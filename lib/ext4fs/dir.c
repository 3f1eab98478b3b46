/* dir.c - directory entry iteration, block checksums and name lookup. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/crc.h"
#include "ext4fs/dir.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define DE_INODE     0
#define DE_REC_LEN   4
#define DE_NAME_LEN  6
#define DE_FILE_TYPE 7
#define DE_NAME      8
#define DE_HEADER    8
#define DX_ENTRY_SIZE 8

#define DIR_READ_BLOCKS 16U         /* blocks fetched per request while iterating */
#define INLINE_DOTDOT_SIZE 4        /* parent inode number at the start of i_block */
#define CHAIN_MIN_ROOM 12           /* a slack entry must start this far before the end */

int ext4fs_dx_block_csum(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			 const void *block, uint32_t count_offset, uint32_t *csum_calc,
			 uint32_t *csum)
{
	static const unsigned char zero[4];
	const unsigned char *b = block;
	uint32_t limit = le16_load(b + count_offset);
	uint32_t count = le16_load(b + count_offset + 2);
	uint32_t tail = count_offset + limit * DX_ENTRY_SIZE;
	uint32_t crc;

	if (count > limit || tail > fs->geom.block_size - EXT4FS_DX_TAIL_SIZE)
		return EXT4FS_E_HTREE_CORRUPT;
	crc = ext4fs_crc32c(ext4fs_inode_csum_seed(fs, ino, generation), b,
			    count_offset + count * DX_ENTRY_SIZE);
	crc = ext4fs_crc32c(crc, b + tail, 4);
	*csum_calc = ext4fs_crc32c(crc, zero, sizeof(zero));
	*csum = le32_load(b + tail + 4);
	return 0;
}

/* Smallest record that holds a name of name_len bytes. */
static uint32_t dirent_min_len(uint32_t name_len)
{
	return (DE_HEADER + name_len + 3U) & ~3U;
}

uint32_t ext4fs_dirent_rec_len(uint16_t raw, uint32_t block_size)
{
	if (block_size < 65536)
		return raw;
	if (raw == 65535 || raw == 0)
		return block_size;
	return (raw & 65532U) | ((uint32_t)(raw & 3U) << 16);
}

uint32_t ext4fs_dirent_csum(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			    const void *block, uint32_t len)
{
	return ext4fs_crc32c(ext4fs_inode_csum_seed(fs, ino, generation), block, len);
}

int ext4fs_dirent_tail_offset(const struct ext4fs_fs *fs, const void *block)
{
	const unsigned char *b = block;
	uint32_t off = fs->geom.block_size - EXT4FS_DIRENT_TAIL_SIZE;

	if (le32_load(b + off + DE_INODE) != 0 ||
	    le16_load(b + off + DE_REC_LEN) != EXT4FS_DIRENT_TAIL_SIZE ||
	    b[off + DE_NAME_LEN] != 0 || b[off + DE_FILE_TYPE] != EXT4FS_FT_DIR_CSUM)
		return -1;
	return (int)off;
}

unsigned ext4fs_dir_block_kind(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode,
			       uint64_t lblk, const void *buf)
{
	const unsigned char *b = buf;
	uint32_t bs = fs->geom.block_size;

	if (!(inode->i_flags & EXT4FS_INDEX_FL))
		return 0;
	if (lblk == 0) {
		/* ".", then ".." covering the rest, then an 8-byte dx_root_info. */
		if (ext4fs_dirent_rec_len(le16_load(b + DE_REC_LEN), bs) == 12 && b[DE_NAME_LEN] == 1 &&
		    ext4fs_dirent_rec_len(le16_load(b + 12 + DE_REC_LEN), bs) == bs - 12 &&
		    b[12 + DE_NAME_LEN] == 2 && le32_load(b + 0x18) == 0 && b[0x1D] == 8)
			return EXT4FS_DIRENT_DX_ROOT;
		return 0;
	}
	if (le32_load(b + DE_INODE) != 0 || b[DE_NAME_LEN] != 0 ||
	    ext4fs_dirent_rec_len(le16_load(b + DE_REC_LEN), bs) != bs)
		return 0;
	uint32_t want = (bs - EXT4FS_DX_NODE_COUNT_OFFSET -
			 (fs->geom.has_metadata_csum ? EXT4FS_DX_TAIL_SIZE : 0)) / 8;
	uint16_t limit = le16_load(b + EXT4FS_DX_NODE_COUNT_OFFSET);
	uint16_t count = le16_load(b + EXT4FS_DX_NODE_COUNT_OFFSET + 2);
	if (limit == want && count >= 1 && count <= limit)
		return EXT4FS_DIRENT_DX_NODE;
	return 0;
}

int ext4fs_dir_block_csum_verify(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
				 uint64_t lblk, const void *buf)
{
	const unsigned char *b = buf;
	uint32_t bs = fs->geom.block_size;
	unsigned kind;
	uint32_t want, have;

	if (!fs->geom.has_metadata_csum)
		return 0;
	kind = ext4fs_dir_block_kind(fs, inode, lblk, buf);
	if (kind) {
		uint32_t count_off = kind == EXT4FS_DIRENT_DX_ROOT ? EXT4FS_DX_ROOT_COUNT_OFFSET
								   : EXT4FS_DX_NODE_COUNT_OFFSET;
		if (ext4fs_dx_block_csum(fs, ino, inode->i_generation, buf, count_off, &want, &have))
			return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CORRUPT,
					       "directory %u: htree index block %llu has count %u, limit %u: no room for a checksum",
					       ino, (unsigned long long)lblk, le16_load(b + count_off + 2),
					       le16_load(b + count_off));
		if (want != have)
			return ext4fs__fs_fail(fs, EXT4FS_E_HTREE_CSUM,
					       "directory %u: htree index block %llu checksum is 0x%08x, should be 0x%08x",
					       ino, (unsigned long long)lblk, have, want);
		return 0;
	}
	if (ext4fs_dirent_tail_offset(fs, buf) < 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CSUM,
				       "directory %u: block %llu has no checksum tail", ino,
				       (unsigned long long)lblk);
	want = ext4fs_dirent_csum(fs, ino, inode->i_generation, buf, bs - EXT4FS_DIRENT_TAIL_SIZE);
	have = le32_load(b + bs - 4);
	if (want != have)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CSUM,
				       "directory %u: block %llu checksum is 0x%08x, should be 0x%08x", ino,
				       (unsigned long long)lblk, have, want);
	return 0;
}

/* -- parsing a run of entries ------------------------------------------------ */

struct parse {
	struct ext4fs_fs *fs;
	uint32_t ino;
	const unsigned char *buf;
	uint32_t size;
	uint32_t rec_len_bs;        /* block size for rec_len decoding; 0 = as stored */
	uint32_t offset_base;       /* added to offsets when reporting */
	const char *where;          /* NULL for a block, else the inline area's name */
	uint64_t lblk, pblk;
	unsigned base_flags;        /* EXT4FS_DIRENT_INLINE*, EXT4FS_DIRENT_DX_* */
	int tail_possible;          /* a metadata_csum tail may end the run */
	int slack;                  /* search slack space (EXT4FS_DIR_ITER_DELETED) */
	unsigned flags;             /* EXT4FS_DIR_ITER_* */
	ext4fs_dir_iterate_fn fn;
	void *arg;
};

static uint32_t parse_rec_len(const struct parse *p, uint32_t off)
{
	uint16_t raw = le16_load(p->buf + off + DE_REC_LEN);

	return p->rec_len_bs ? ext4fs_dirent_rec_len(raw, p->rec_len_bs) : raw;
}

static int parse_corrupt(const struct parse *p, uint32_t off, const char *what, uint32_t rec_len,
			 uint32_t name_len)
{
	if (p->where)
		return ext4fs__fs_fail(p->fs, EXT4FS_E_DIR_CORRUPT,
				       "directory %u: %s, offset %u: %s (rec_len %u, name_len %u)", p->ino,
				       p->where, off + p->offset_base, what, rec_len, name_len);
	return ext4fs__fs_fail(p->fs, EXT4FS_E_DIR_CORRUPT,
			       "directory %u: logical block %llu, offset %u: %s (rec_len %u, name_len %u)",
			       p->ino, (unsigned long long)p->lblk, off + p->offset_base, what, rec_len,
			       name_len);
}

/* Nonzero when plausible entries starting at pos end exactly at final. */
static int slack_chain_ok(const struct parse *p, uint32_t pos, uint32_t final)
{
	while (pos < final && p->size - pos >= CHAIN_MIN_ROOM) {
		uint32_t rl = parse_rec_len(p, pos);
		uint32_t nl = p->buf[pos + DE_NAME_LEN];

		if (rl < DE_HEADER || rl % 4 || dirent_min_len(nl) > rl)
			return 0;
		pos += rl;
	}
	return pos == final;
}

static int parse_entries(const struct parse *p)
{
	uint32_t off = 0, next_real = 0;
	char name[EXT4FS_NAME_LEN + 1];
	int has_ft = p->fs->geom.has_filetype;

	while (off < p->size) {
		if (p->size - off < DE_HEADER)
			return parse_corrupt(p, off, "entry header runs past the end", 0, 0);
		uint32_t ino = le32_load(p->buf + off + DE_INODE);
		uint32_t rl = parse_rec_len(p, off);
		uint8_t nl = p->buf[off + DE_NAME_LEN];
		uint8_t ft_raw = p->buf[off + DE_FILE_TYPE];

		if (rl < DE_HEADER || rl % 4)
			return parse_corrupt(p, off, "rec_len is not a multiple of 4 of at least 8", rl, nl);
		if (rl > p->size - off)
			return parse_corrupt(p, off, "rec_len runs past the end", rl, nl);
		if (dirent_min_len(nl) > rl)
			return parse_corrupt(p, off, "name_len does not fit in rec_len", rl, nl);

		int deleted = off < next_real;
		/* Recognised wherever it sits at the end, as debugfs does (also in slack). */
		int is_tail = p->tail_possible &&
			      off == p->size - EXT4FS_DIRENT_TAIL_SIZE && ino == 0 &&
			      rl == EXT4FS_DIRENT_TAIL_SIZE && nl == 0 && ft_raw == EXT4FS_FT_DIR_CSUM;
		struct ext4fs_dirent d = {
			.inode = ino, .rec_len = rl, .name_len = nl,
			.file_type = has_ft ? ft_raw : 0, .name = name,
			.lblk = p->lblk, .pblk = p->pblk, .offset = off + p->offset_base,
			.flags = p->base_flags | (deleted ? EXT4FS_DIRENT_DELETED : 0),
		};
		int want = 1;
		if (is_tail) {
			d.flags |= EXT4FS_DIRENT_CSUM_TAIL;
			d.file_type = ft_raw;
			want = (p->flags & EXT4FS_DIR_ITER_CSUM_TAIL) != 0;
		} else if (ino == 0) {
			d.flags |= EXT4FS_DIRENT_EMPTY;
			want = (p->flags & EXT4FS_DIR_ITER_EMPTY) != 0;
		}
		if (want) {
			memcpy(name, p->buf + off + DE_NAME, nl);
			name[nl] = '\0';
			int err = p->fn(&d, p->arg);
			if (err)
				return err;
		}
		if (off == next_real)
			next_real = off + rl;
		if (p->slack && !is_tail && rl > dirent_min_len(nl)) {
			/* Look for deleted entries in the unused end of this record. */
			uint32_t final = off + rl, pos = off + dirent_min_len(nl);
			while (pos < final && !slack_chain_ok(p, pos, final))
				pos += 4;
			off = pos;
			continue;
		}
		off += rl;
	}
	return 0;
}

int ext4fs_dir_block_iterate(struct ext4fs_fs *fs, uint32_t ino, const void *block, uint32_t size,
			     uint64_t lblk, uint64_t pblk, unsigned dx_flags, unsigned flags,
			     ext4fs_dir_iterate_fn fn, void *arg)
{
	struct parse p = {
		.fs = fs, .ino = ino, .buf = block, .size = size, .rec_len_bs = fs->geom.block_size,
		.lblk = lblk, .pblk = pblk, .base_flags = dx_flags,
		.tail_possible = fs->geom.has_metadata_csum,
		.slack = (flags & EXT4FS_DIR_ITER_DELETED) != 0,
		.flags = flags, .fn = fn, .arg = arg,
	};

	return parse_entries(&p);
}

/* -- whole directories ------------------------------------------------------- */

struct dir_iter {
	struct ext4fs_fs *fs;
	uint32_t ino;
	const struct ext4fs_inode *inode;
	uint64_t nblocks;
	unsigned flags;
	ext4fs_dir_iterate_fn fn;
	void *arg;
	unsigned char *buf;          /* DIR_READ_BLOCKS blocks */
};

static int dir_process_block(struct dir_iter *it, uint64_t lblk, uint64_t pblk,
			     const unsigned char *b)
{
	struct ext4fs_fs *fs = it->fs;
	unsigned kind = ext4fs_dir_block_kind(fs, it->inode, lblk, b);
	int err;

	if (fs->geom.has_metadata_csum && (fs_csum_strict(fs) || (it->flags & EXT4FS_DIR_ITER_VERIFY))) {
		err = ext4fs_dir_block_csum_verify(fs, it->ino, it->inode, lblk, b);
		if (err)
			return err;
	}
	return ext4fs_dir_block_iterate(fs, it->ino, b, fs->geom.block_size, lblk, pblk, kind,
					it->flags, it->fn, it->arg);
}

static int dir_block_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct dir_iter *it = arg;
	uint32_t bs = it->fs->geom.block_size;
	int err;

	if (v->kind != EXT4FS_BLOCK_DATA || v->unwritten)
		return 0;
	for (uint64_t i = 0; i < v->count;) {
		uint64_t lblk = v->lblk + i;
		if (lblk >= it->nblocks)
			break;
		uint64_t n = v->count - i;
		if (n > it->nblocks - lblk)
			n = it->nblocks - lblk;
		if (n > DIR_READ_BLOCKS)
			n = DIR_READ_BLOCKS;
		err = ext4fs_blocks_read(it->fs, v->pblk + i, n, it->buf);
		if (err)
			return ext4fs__fs_fail(it->fs, err, "directory %u: reading logical block %llu: %s",
					       it->ino, (unsigned long long)lblk, ext4fs_strerror(err));
		for (uint64_t j = 0; j < n; j++) {
			err = dir_process_block(it, lblk + j, v->pblk + i + j, it->buf + j * bs);
			if (err)
				return err;
		}
		i += n;
	}
	return 0;
}

static int dir_iterate_inline(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			      unsigned flags, ext4fs_dir_iterate_fn fn, void *arg)
{
	unsigned char *data = NULL;
	size_t len = 0;
	int err = ext4fs_inline_data_read(fs, ino, inode, &data, &len);

	if (err)
		return err;
	struct ext4fs_dirent d = {
		.inode = ino, .rec_len = 12, .name_len = 1, .name = ".",
		.flags = EXT4FS_DIRENT_SYNTHETIC | EXT4FS_DIRENT_INLINE,
	};
	err = fn(&d, arg);
	if (err)
		goto out;
	d.inode = le32_load(data);
	d.name_len = 2;
	d.name = "..";
	err = fn(&d, arg);
	if (err)
		goto out;

	struct parse p = {
		.fs = fs, .ino = ino, .buf = data + INLINE_DOTDOT_SIZE,
		.size = EXT4FS_INLINE_IBLOCK_SIZE - INLINE_DOTDOT_SIZE,
		.offset_base = INLINE_DOTDOT_SIZE, .where = "inline data in i_block",
		.base_flags = EXT4FS_DIRENT_INLINE, .slack = (flags & EXT4FS_DIR_ITER_DELETED) != 0,
		.flags = flags, .fn = fn, .arg = arg,
	};
	err = parse_entries(&p);
	if (err || len <= EXT4FS_INLINE_IBLOCK_SIZE)
		goto out;
	if (len - EXT4FS_INLINE_IBLOCK_SIZE > UINT32_MAX) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_INLINE_CORRUPT, "directory %u: system.data is too large", ino);
		goto out;
	}
	p.buf = data + EXT4FS_INLINE_IBLOCK_SIZE;
	p.size = (uint32_t)(len - EXT4FS_INLINE_IBLOCK_SIZE);
	p.offset_base = 0;
	p.where = "inline data in system.data";
	p.base_flags = EXT4FS_DIRENT_INLINE_EA;
	err = parse_entries(&p);
out:
	free(data);
	return err;
}

static uint64_t dir_nblocks(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode)
{
	uint64_t size = ext4fs_inode_size(inode);

	return size / fs->geom.block_size + (size % fs->geom.block_size != 0);
}

int ext4fs_dir_iterate(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       unsigned flags, ext4fs_dir_iterate_fn fn, void *arg)
{
	struct dir_iter it = {
		.fs = fs, .ino = ino, .inode = inode, .flags = flags, .fn = fn, .arg = arg,
	};
	int err;

	if (!EXT4FS_ISDIR(inode->i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "inode %u is not a directory", ino);
	if (ext4fs_inode_has_inline_data(inode))
		return dir_iterate_inline(fs, ino, inode, flags, fn, arg);
	it.nblocks = dir_nblocks(fs, inode);
	if (it.nblocks == 0)
		return 0;
	it.buf = malloc((size_t)DIR_READ_BLOCKS * fs->geom.block_size);
	if (!it.buf)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory for blocks", ino);
	err = ext4fs_block_iterate(fs, ino, inode, EXT4FS_ITER_DATA_ONLY, dir_block_visit, &it);
	free(it.buf);
	return err;
}

int ext4fs_dir_block_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  uint64_t lblk, void *buf, uint64_t *pblk)
{
	uint64_t p = 0, run;
	int unwritten = 0, err;

	if (pblk)
		*pblk = 0;
	if (ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u keeps its entries inline", ino);
	if (lblk >= dir_nblocks(fs, inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT,
				       "directory %u: logical block %llu is past its end (%llu blocks)", ino,
				       (unsigned long long)lblk, (unsigned long long)dir_nblocks(fs, inode));
	err = ext4fs_bmap(fs, ino, inode, lblk, &p, &run, &unwritten);
	if (err)
		return err;
	if (!p || unwritten)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT, "directory %u has a hole at logical block %llu",
				       ino, (unsigned long long)lblk);
	err = ext4fs_block_read(fs, p, buf);
	if (err)
		return ext4fs__fs_fail(fs, err, "directory %u: reading logical block %llu (block %llu): %s",
				       ino, (unsigned long long)lblk, (unsigned long long)p, ext4fs_strerror(err));
	if (pblk)
		*pblk = p;
	return 0;
}

uint8_t ext4fs_file_type_of_mode(uint16_t mode)
{
	switch (mode & EXT4FS_S_IFMT) {
	case EXT4FS_S_IFREG:  return EXT4FS_FT_REG_FILE;
	case EXT4FS_S_IFDIR:  return EXT4FS_FT_DIR;
	case EXT4FS_S_IFCHR:  return EXT4FS_FT_CHRDEV;
	case EXT4FS_S_IFBLK:  return EXT4FS_FT_BLKDEV;
	case EXT4FS_S_IFIFO:  return EXT4FS_FT_FIFO;
	case EXT4FS_S_IFSOCK: return EXT4FS_FT_SOCK;
	case EXT4FS_S_IFLNK:  return EXT4FS_FT_SYMLINK;
	default:              return EXT4FS_FT_UNKNOWN;
	}
}
