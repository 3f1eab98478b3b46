/* file.c - file data, inline data and symbolic link targets. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/blockmap.h"
#include "ext4fs/codec.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/xattr.h"
#include "blockmap_internal.h"
#include "fs_internal.h"

struct inline_find {
	const unsigned char *value;
	uint32_t len;
	uint32_t inum;
	unsigned char *copy;
	int found;
};

static int find_system_data(const struct ext4fs_xattr *x, void *arg)
{
	struct inline_find *f = arg;

	if (x->name_index != EXT4FS_XATTR_INDEX_SYSTEM || strcmp(x->suffix, "data") != 0)
		return 0;
	f->found = 1;
	f->len = x->value_len;
	f->inum = x->value_inum;
	if (x->value_inum)
		return 1;
	f->copy = malloc(EXT4FS_INLINE_IBLOCK_SIZE + (size_t)x->value_len);
	if (!f->copy)
		return EXT4FS_E_NO_MEMORY;
	if (x->value_len)
		memcpy(f->copy + EXT4FS_INLINE_IBLOCK_SIZE, x->value, x->value_len);
	return 1;
}

int ext4fs_inline_data_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			    unsigned char **data, size_t *len)
{
	struct inline_find f = { 0 };
	int err;

	*data = NULL;
	*len = 0;
	if (!ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u has no inline data", ino);
	err = ext4fs_xattr_iterate(fs, ino, inode,
				   EXT4FS_XATTR_ITER_NO_BLOCK | EXT4FS_XATTR_ITER_NO_EA_VALUES,
				   find_system_data, &f);
	if (err == EXT4FS_E_NO_MEMORY) {
		err = ext4fs__fs_fail(fs, err, "inode %u: no memory for inline data", ino);
		goto out;
	}
	if (err < 0)
		goto out;
	err = 0;
	if (f.found && f.inum) {
		err = ext4fs__fs_fail(fs, EXT4FS_E_INLINE_CORRUPT,
				      "inode %u: system.data is stored in EA inode %u", ino, f.inum);
		goto out;
	}
	if (!f.found) {
		f.len = 0;
		f.copy = malloc(EXT4FS_INLINE_IBLOCK_SIZE);
		if (!f.copy) {
			err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory for inline data", ino);
			goto out;
		}
	}
	memcpy(f.copy, inode->i_block, EXT4FS_INLINE_IBLOCK_SIZE);
	*data = f.copy;
	*len = EXT4FS_INLINE_IBLOCK_SIZE + (size_t)f.len;
	f.copy = NULL;
out:
	free(f.copy);
	return err;
}

static int read_inline(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       uint64_t offset, unsigned char *buf, size_t len, size_t *got)
{
	unsigned char *data = NULL;
	size_t have;
	int err = ext4fs_inline_data_read(fs, ino, inode, &data, &have);

	if (err)
		goto out;
	/*
	 * Bytes past the inline area read as zeros, as the kernel reads them
	 * (mke2fs -d stores an all-hole file as an empty inline one, and
	 * e2fsck accepts it).
	 */
	size_t n = offset < have ? (have - offset < len ? (size_t)(have - offset) : len) : 0;
	if (n)
		memcpy(buf, data + offset, n);   /* data + offset is out of bounds when n is 0 */
	memset(buf + n, 0, len - n);
	*got = len;
out:
	free(data);
	return err;
}

int ext4fs_file_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     uint64_t offset, void *buf, size_t len, size_t *got)
{
	uint64_t size = ext4fs_inode_size(inode);

	*got = 0;
	if (offset >= size || len == 0)
		return 0;
	if (len > size - offset)
		len = (size_t)(size - offset);
	if (ext4fs_inode_has_inline_data(inode))
		return read_inline(fs, ino, inode, offset, buf, len, got);
	if (ext4fs_inode_is_fast_symlink(fs, inode)) {
		/* size < 60 here, so offset + len stays inside i_block. */
		memcpy(buf, inode->i_block + offset, len);
		*got = len;
		return 0;
	}
	return ext4fs__blockmap_read(fs, ino, inode, offset, buf, len, got);
}

int ext4fs_symlink_target(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  char *buf, size_t bufsize, size_t *len)
{
	uint64_t size = ext4fs_inode_size(inode);
	char *target = NULL;
	size_t got = 0, n;
	int err;

	*len = 0;
	if (!EXT4FS_ISLNK(inode->i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u is not a symbolic link", ino);
	if (bufsize == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "no room for the target of symlink %u", ino);
	if (size >= fs->geom.block_size)
		return ext4fs__fs_fail(fs, EXT4FS_E_INODE_CORRUPT,
				       "symlink %u: size %llu is not below the block size %u", ino,
				       (unsigned long long)size, fs->geom.block_size);
	target = malloc((size_t)size + 1);
	if (!target)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the target of symlink %u", ino);
	err = ext4fs_file_read(fs, ino, inode, 0, target, (size_t)size, &got);
	if (err)
		goto out;
	n = got < bufsize - 1 ? got : bufsize - 1;
	memcpy(buf, target, n);
	buf[n] = '\0';
	*len = got;
out:
	free(target);
	return err;
}

/* The block a slow symlink keeps its target in, by e2fsprogs' rule; 0 when the map is not one block at 0. */
static uint64_t symlink_block(const struct ext4fs_inode *in)
{
	struct ext4fs_extent_header h;
	struct ext4fs_extent_entry e;

	if (!(in->i_flags & EXT4FS_EXTENTS_FL)) {
		/* Only the first pointer may be set: one block, no indirect ones. */
		for (size_t i = 4; i < sizeof(in->i_block); i++)
			if (in->i_block[i])
				return 0;
		return ext4fs_blockmap_slot_get(in->i_block, 0);
	}
	if (!ext4fs_extent_node_header_ok(in->i_block, sizeof(in->i_block)))
		return 0;
	ext4fs_extent_node_header(in->i_block, &h);
	if (h.entries != 1 || h.depth != 0)
		return 0;
	ext4fs_extent_node_entry(in->i_block, 0, 1, &e);
	return e.lblk == 0 && e.len == 1 ? e.pblk : 0;
}

/* Whether target (room bytes) is as long as size, by e2fsprogs' measure. */
static int symlink_len_ok(const struct ext4fs_inode *in, const unsigned char *target, size_t room, uint64_t size)
{
	size_t len;

	if (in->i_flags & EXT4FS_ENCRYPT_FL)
		len = (size_t)ext4fs_encrypted_symlink_len_get(target) + 2;
	else
		len = strnlen((const char *)target, room);
	return len < room && len == size;
}

int ext4fs_symlink_ok(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in)
{
	uint64_t size = ext4fs_inode_size(in), blk;
	unsigned char *buf;
	int ok;

	if (in->i_size_high || !size || (in->i_flags & EXT4FS_INDEX_FL))
		return 0;
	if (in->i_flags & EXT4FS_INLINE_DATA_FL) {
		size_t have = 0;
		if ((in->i_flags & EXT4FS_EXTENTS_FL) || ext4fs_inline_data_read(fs, ino, in, &buf, &have))
			return 0;
		free(buf);
		return have == size;
	}
	if (ext4fs_inode_is_fast_symlink(fs, in))
		return !(in->i_flags & EXT4FS_EXTENTS_FL) && symlink_len_ok(in, in->i_block, sizeof(in->i_block), size);
	blk = symlink_block(in);
	if (!blk || blk < fs->geom.first_data_block || blk >= fs->geom.blocks_count)
		return 0;
	buf = malloc(fs->geom.block_size);
	if (!buf)
		return 0;
	ok = ext4fs_block_read(fs, blk, buf) == 0 && symlink_len_ok(in, buf, fs->geom.block_size, size);
	free(buf);
	return ok;
}
