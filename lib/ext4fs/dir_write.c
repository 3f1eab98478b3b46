/*
 * dir_write.c - changing directories: new directories, adding, removing and
 * retargeting entries, the emptiness test.
 *
 * A linear directory is a chain of leaf blocks.  A new entry goes into the
 * first record with room: an unused record is taken whole, a live one is
 * cut after its name (its rec_len shrinks to what the name needs and the
 * new record gets the rest).  When no block has room a block is appended,
 * except that a one-block directory on a dir_index file system is first
 * turned into an htree, as the kernel does (htree_write.c does the rest).
 * The blocks themselves are edited with dir_block.c's calls.
 * A removed entry's record is merged into the previous record of its
 * block, or, when it is the first of its block, kept with inode 0.
 *
 * Every block is validated record by record before it is changed and, in
 * strict mode, its checksum verified, so a damaged block is never given a
 * fresh checksum.  Each call writes the blocks it changed, then the
 * directory's inode with new mtime and ctime.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/htree.h"
#include "dir_internal.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "htree_write_internal.h"
#include "ondisk_le.h"

#define DOT_REC_LEN 12                     /* "." padded to 4 bytes */

/* -- leaf blocks in memory ------------------------------------------------- */

/* Take the entry at off (after prev) out of its block. */
static void leaf_remove(struct ext4fs_fs *fs, unsigned char *buf, uint32_t off, uint32_t prev)
{
	if (prev == DIRW_NO_PREV) {
		le32_store(buf + off + DIRW_DE_INODE, 0);
		return;
	}
	uint32_t merged = ext4fs__dirw_rec_len(fs, buf, prev) + ext4fs__dirw_rec_len(fs, buf, off);
	ext4fs_dirent_rec_len_set(buf + prev, merged, fs->geom.block_size);
}

/* -- checks shared by the public calls ---------------------------------------- */

static int is_dots(const char *name, size_t len)
{
	return name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'));
}

/*
 * A directory this module can change: writable handle, block-based, plain
 * names.  With dots_only the change touches only '.' and '..' in their
 * places, which encrypted and casefolded directories store in the clear
 * too: those may then be changed.
 */
static int check_dir_for(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode, int dots_only)
{
	int err = ext4fs__fs_require_rw(fs, "changing a directory");

	if (err)
		return err;
	if (!EXT4FS_ISDIR(inode->i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "inode %u is not a directory", dir);
	if (ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u keeps its entries inline; changing those is not supported",
				       dir);
	if ((inode->i_flags & EXT4FS_ENCRYPT_FL) && !dots_only)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u is encrypted; changing it is not supported", dir);
	if ((inode->i_flags & EXT4FS_CASEFOLD_FL) && !dots_only)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u is casefolded; changing it is not supported", dir);
	if (ext4fs_inode_size(inode) == 0 || ext4fs_inode_size(inode) % fs->geom.block_size)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT,
				       "directory %u has size %llu, not a whole number of blocks", dir,
				       (unsigned long long)ext4fs_inode_size(inode));
	return 0;
}

static int check_dir(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode)
{
	return check_dir_for(fs, dir, inode, 0);
}

static int check_name(struct ext4fs_fs *fs, uint32_t dir, const char *name, size_t len,
		      int dots_ok)
{
	if (len == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: empty name", dir);
	if (len > EXT4FS_NAME_LEN)
		return ext4fs__fs_fail(fs, EXT4FS_E_NAME_TOO_LONG,
				       "directory %u: a name of %zu bytes is longer than %u", dir, len,
				       EXT4FS_NAME_LEN);
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u: name \"%.*s\" contains '/' or a NUL byte", dir,
				       (int)len, name);
	if (!dots_ok && is_dots(name, len))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: \"%.*s\" cannot be changed",
				       dir, (int)len, name);
	return 0;
}

static int check_target(struct ext4fs_fs *fs, uint32_t dir, uint32_t ino, uint8_t file_type)
{
	if (ino == 0 || ino > fs->geom.inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u: an entry cannot point to inode %u (1-%u)", dir, ino,
				       fs->geom.inodes_count);
	if (file_type > EXT4FS_FT_SYMLINK)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: file type %u is not valid",
				       dir, file_type);
	return 0;
}

static unsigned char *block_buf(struct ext4fs_fs *fs, uint32_t dir)
{
	unsigned char *buf = malloc(fs->geom.block_size);

	if (!buf)
		ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "directory %u: no memory for a block", dir);
	return buf;
}

/* Find name in a linear directory; buf is left holding its block. */
static int linear_find(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode,
		       const char *name, size_t len, unsigned char *buf, struct dirw_loc *loc)
{
	uint64_t nblocks = ext4fs_inode_size(inode) / fs->geom.block_size;
	struct dirw_scan s;
	int err;

	for (uint64_t lblk = 0; lblk < nblocks; lblk++) {
		err = ext4fs__dirw_block_read(fs, dir, inode, lblk, buf, &loc->pblk);
		if (err)
			return err;
		err = ext4fs__dirw_leaf_scan(fs, dir, buf, lblk, name, len, 0, &s);
		if (err)
			return err;
		if (s.found) {
			loc->lblk = lblk;
			loc->off = s.off;
			loc->prev = s.prev;
			loc->ino = s.found_ino;
			return 0;
		}
	}
	return ext4fs__fs_fail(fs, EXT4FS_E_NOT_FOUND, "directory %u has no entry \"%.*s\"", dir, (int)len,
			       name);
}

/* Find name wherever the directory keeps it. */
static int dir_find(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
		    const char *name, size_t len, unsigned char *buf, struct dirw_loc *loc)
{
	if (inode->i_flags & EXT4FS_INDEX_FL)
		return ext4fs__dirw_htree_find(fs, dir, inode, name, len, buf, loc);
	return linear_find(fs, dir, inode, name, len, buf, loc);
}

/*
 * "." or ".." with inode 0 in its place (first or second entry of a block
 * the scan found sound): a checker that cleared an entry naming a lost
 * inode leaves '..' so, and must be able to point it somewhere again.
 */
static int dot_in_place(struct ext4fs_fs *fs, uint32_t dir, const unsigned char *buf, const char *name,
			size_t len, struct dirw_loc *loc)
{
	uint32_t first = ext4fs__dirw_rec_len(fs, buf, 0), off = len == 1 ? 0 : first;

	if (off + DIRW_DE_HEADER + len <= ext4fs__dirw_leaf_end(fs) && buf[off + DIRW_DE_NAME_LEN] == len &&
	    memcmp(buf + off + DIRW_DE_NAME, name, len) == 0) {
		loc->off = off;
		loc->prev = off ? 0 : DIRW_NO_PREV;
		loc->ino = 0;
		return 0;
	}
	return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT, "directory %u has no \"%.*s\" entry", dir, (int)len, name);
}

/*
 * Find "." or ".." in block 0: at fixed places in an htree root (where ".."
 * covers the index), by a scan in a linear block.
 */
static int dots_find(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
		     const char *name, size_t len, unsigned char *buf, struct dirw_loc *loc)
{
	struct dirw_scan s;
	int err;

	memset(loc, 0, sizeof(*loc));
	err = ext4fs__dirw_block_read(fs, dir, inode, 0, buf, &loc->pblk);
	if (err)
		return err;
	if (ext4fs_dir_block_kind(fs, inode, 0, buf) == EXT4FS_DIRENT_DX_ROOT) {
		loc->off = len == 1 ? 0 : DOT_REC_LEN;
		loc->ino = le32_load(buf + loc->off);
		return 0;
	}
	err = ext4fs__dirw_leaf_scan(fs, dir, buf, 0, name, len, 0, &s);
	if (err)
		return err;
	if (!s.found)
		return dot_in_place(fs, dir, buf, name, len, loc);
	loc->off = s.off;
	loc->prev = s.prev;
	loc->ino = s.found_ino;
	return 0;
}

/* -- public calls ---------------------------------------------------------------- */

/* What a new directory's inode must look like before its first block is given to it. */
static int dir_init_check(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode, uint32_t parent)
{
	int err = ext4fs__fs_require_rw(fs, "making a directory");

	if (err)
		return err;
	if (!EXT4FS_ISDIR(inode->i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "inode %u is not a directory", ino);
	if (ext4fs_inode_size(inode) != 0 || ext4fs_inode_has_inline_data(inode) ||
	    (inode->i_flags & (EXT4FS_ENCRYPT_FL | EXT4FS_CASEFOLD_FL)))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "directory %u is not a new, empty, plain directory inode", ino);
	if (parent == 0 || parent > fs->geom.inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: parent %u is not an inode",
				       ino, parent);
	return 0;
}

/* Write "." and ".." into block pblk, now logical block 0 of ino, and give the inode its size. */
static int dir_init_write(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint32_t parent,
			  uint64_t pblk, unsigned char *buf)
{
	uint32_t bs = fs->geom.block_size;
	int err;

	memset(buf, 0, bs);
	ext4fs__dirw_entry_store(fs, buf, 0, DOT_REC_LEN, ".", 1, ino, EXT4FS_FT_DIR);
	ext4fs__dirw_entry_store(fs, buf, DOT_REC_LEN, ext4fs__dirw_leaf_end(fs) - DOT_REC_LEN, "..", 2, parent,
				 EXT4FS_FT_DIR);
	err = ext4fs__dirw_block_write(fs, ino, inode, 0, pblk, buf);
	if (err)
		return err;
	ext4fs_inode_set_size(inode, bs);
	return ext4fs_inode_write(fs, ino, inode);
}

int ext4fs_dir_init(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint32_t parent)
{
	uint32_t got = 0;
	uint64_t pblk = 0;
	unsigned char *buf;
	int err = dir_init_check(fs, ino, inode, parent);

	if (err)
		return err;
	buf = block_buf(fs, ino);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	err = ext4fs_bmap_alloc(fs, ino, inode, 0, 1, 0, EXT4FS_ALLOC_DIRECTORY, 0, &pblk, &got);
	if (!err)
		err = dir_init_write(fs, ino, inode, parent, pblk, buf);
	free(buf);
	return err;
}

int ext4fs_dir_init_at(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, uint32_t parent,
		       uint64_t pblk)
{
	unsigned char *buf;
	int err = dir_init_check(fs, ino, inode, parent);

	if (err)
		return err;
	if (!ext4fs_block_ptr_valid(fs, pblk))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: block %llu is not in the file system",
				       ino, (unsigned long long)pblk);
	if (ext4fs_inode_blocks_raw(fs, inode) != 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u already has blocks", ino);
	buf = block_buf(fs, ino);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	err = ext4fs_bmap_set(fs, ino, inode, 0, pblk, 1, 0);
	if (!err)
		err = dir_init_write(fs, ino, inode, parent, pblk, buf);
	free(buf);
	return err;
}

/* Add to a directory without an index. */
static int linear_add(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
		      const char *name, size_t len, uint32_t ino, uint8_t file_type,
		      unsigned char *buf, unsigned flags)
{
	uint64_t nblocks = ext4fs_inode_size(inode) / fs->geom.block_size;
	uint64_t room_lblk = 0, pblk = 0;
	uint32_t need = dirw_rec_size((uint32_t)len), room_off = 0, lblk;
	int have_room = 0, err;
	struct dirw_scan s;

	/*
	 * Every block is scanned: the name must not be there already.  A hole
	 * (a damaged directory a checker has not mended yet, or could not fill
	 * for want of space) holds no entries and is passed over, as
	 * e2fsprogs' link passes over it.
	 */
	for (uint64_t b = 0; b < nblocks; b++) {
		uint64_t mapped = 0, run = 1;
		int unwritten = 0;
		err = ext4fs_bmap(fs, dir, inode, b, &mapped, &run, &unwritten);
		if (err)
			return err;
		if (!mapped || unwritten) {
			b += (run < nblocks - b ? run : nblocks - b) - 1;
			continue;
		}
		err = ext4fs__dirw_block_read(fs, dir, inode, b, buf, &pblk);
		if (err)
			return err;
		err = ext4fs__dirw_leaf_scan(fs, dir, buf, b, name, len, have_room ? 0 : need, &s);
		if (err)
			return err;
		if (s.found)
			return ext4fs__fs_fail(fs, EXT4FS_E_EXISTS, "directory %u already has \"%.*s\"", dir,
					       (int)len, name);
		if (s.has_room) {
			have_room = 1;
			room_lblk = b;
			room_off = s.room;
		}
	}
	if (have_room) {
		err = ext4fs__dirw_block_read(fs, dir, inode, room_lblk, buf, &pblk);
		if (err)
			return err;
		ext4fs__dirw_leaf_put(fs, buf, room_off, name, len, ino, file_type);
		return ext4fs__dirw_block_write(fs, dir, inode, room_lblk, pblk, buf);
	}
	if (flags & EXT4FS_DIR_ADD_NO_GROW)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_NO_SPACE, "directory %u has no room for \"%.*s\"", dir,
				       (int)len, name);
	if (nblocks == 1 && ext4fs_has_compat(fs, EXT4FS_FEATURE_COMPAT_DIR_INDEX)) {
		/* buf still holds block 0. */
		err = ext4fs__dirw_htree_convert(fs, dir, inode, buf, pblk);
		if (err)
			return err;
		return ext4fs__dirw_htree_add(fs, dir, inode, name, len, ino, file_type);
	}
	err = ext4fs__dirw_block_append(fs, dir, inode, &lblk, &pblk);
	if (err)
		return err;
	ext4fs__dirw_leaf_init(fs, buf);
	ext4fs__dirw_leaf_put(fs, buf, 0, name, len, ino, file_type);
	return ext4fs__dirw_block_write(fs, dir, inode, lblk, pblk, buf);
}

int ext4fs_dir_add(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
		   const char *name, size_t len, uint32_t ino, uint8_t file_type)
{
	return ext4fs_dir_add_flags(fs, dir, dir_inode, name, len, ino, file_type, 0);
}

int ext4fs_dir_add_flags(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
			 const char *name, size_t len, uint32_t ino, uint8_t file_type, unsigned flags)
{
	unsigned char *buf;
	int err = check_dir(fs, dir, dir_inode);

	if (!err && (flags & ~(unsigned)EXT4FS_DIR_ADD_NO_GROW))
		err = ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: unknown flags %#x", dir, flags);
	if (!err)
		err = check_name(fs, dir, name, len, 0);
	if (!err)
		err = check_target(fs, dir, ino, file_type);
	if (err)
		return err;
	if (dir_inode->i_flags & EXT4FS_INDEX_FL) {
		err = ext4fs__dirw_htree_add(fs, dir, dir_inode, name, len, ino, file_type);
	} else {
		buf = block_buf(fs, dir);
		if (!buf)
			return EXT4FS_E_NO_MEMORY;
		err = linear_add(fs, dir, dir_inode, name, len, ino, file_type, buf, flags);
		free(buf);
	}
	if (err)
		return err;
	return ext4fs__dirw_touch(fs, dir, dir_inode);
}

int ext4fs_dir_expand(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode)
{
	struct ext4fs_inode was = *dir_inode;
	unsigned char *buf;
	uint64_t pblk = 0;
	uint32_t lblk = 0;
	int err = check_dir(fs, dir, dir_inode);

	if (!err && (dir_inode->i_flags & EXT4FS_INDEX_FL))
		err = ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u is indexed: it grows by its index", dir);
	if (err)
		return err;
	buf = block_buf(fs, dir);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	err = ext4fs__dirw_block_append(fs, dir, dir_inode, &lblk, &pblk);
	if (!err) {
		ext4fs__dirw_leaf_init(fs, buf);
		err = ext4fs__dirw_block_write(fs, dir, dir_inode, lblk, pblk, buf);
		if (err) {
			/* The new block holds nothing yet: give it back and keep the old size. */
			(void)ext4fs_bmap_unmap(fs, dir, dir_inode, lblk, 1);
			ext4fs_inode_set_size(dir_inode, ext4fs_inode_size(&was));
		}
	}
	free(buf);
	if (!err)
		err = ext4fs_inode_write(fs, dir, dir_inode);
	return err;
}

int ext4fs_dir_fill_hole(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode, uint64_t lblk,
			 uint64_t pblk)
{
	uint32_t bs = fs->geom.block_size;
	unsigned char *buf;
	int err = ext4fs__fs_require_rw(fs, "filling a directory hole");

	if (err)
		return err;
	/* An empty block holds no name: encrypted and casefolded directories take one as well. */
	if (!EXT4FS_ISDIR(dir_inode->i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "inode %u is not a directory", dir);
	if (ext4fs_inode_has_inline_data(dir_inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u keeps its entries inline", dir);
	if (!ext4fs_block_ptr_valid(fs, pblk))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "directory %u: block %llu is not in the file system", dir,
				       (unsigned long long)pblk);
	buf = block_buf(fs, dir);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	if (lblk == 0) {
		/* The first block: "." and ".." (the root as parent, for the checker to correct). */
		memset(buf, 0, bs);
		ext4fs__dirw_entry_store(fs, buf, 0, DOT_REC_LEN, ".", 1, dir, EXT4FS_FT_DIR);
		ext4fs__dirw_entry_store(fs, buf, DOT_REC_LEN, ext4fs__dirw_leaf_end(fs) - DOT_REC_LEN, "..", 2, EXT4FS_ROOT_INO,
					 EXT4FS_FT_DIR);
	} else {
		ext4fs__dirw_leaf_init(fs, buf);
	}
	/* Written before it is mapped: a failure leaves the directory as it was. */
	err = ext4fs__dirw_block_write(fs, dir, dir_inode, lblk, pblk, buf);
	free(buf);
	if (!err)
		err = ext4fs_bmap_set(fs, dir, dir_inode, lblk, pblk, 1, 0);
	if (err)
		return err;
	if (ext4fs_inode_size(dir_inode) < (lblk + 1) * bs)
		ext4fs_inode_set_size(dir_inode, (lblk + 1) * bs);
	return ext4fs_inode_write(fs, dir, dir_inode);
}

int ext4fs_dir_remove(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
		      const char *name, size_t len, uint32_t *ino)
{
	struct dirw_loc loc;
	unsigned char *buf;
	int err = check_dir(fs, dir, dir_inode);

	if (ino)
		*ino = 0;
	if (!err)
		err = check_name(fs, dir, name, len, 0);
	if (err)
		return err;
	buf = block_buf(fs, dir);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	err = dir_find(fs, dir, dir_inode, name, len, buf, &loc);
	if (err)
		goto out;
	leaf_remove(fs, buf, loc.off, loc.prev);
	err = ext4fs__dirw_block_write(fs, dir, dir_inode, loc.lblk, loc.pblk, buf);
	if (err)
		goto out;
	if (ino)
		*ino = loc.ino;
	err = ext4fs__dirw_touch(fs, dir, dir_inode);
out:
	free(buf);
	return err;
}

int ext4fs_dir_set_entry(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_inode,
			 const char *name, size_t len, uint32_t ino, uint8_t file_type,
			 uint32_t *old_ino)
{
	struct dirw_loc loc;
	unsigned char *buf;
	int err = check_dir_for(fs, dir, dir_inode, is_dots(name, len));

	if (old_ino)
		*old_ino = 0;
	if (!err)
		err = check_name(fs, dir, name, len, 1);
	if (!err)
		err = check_target(fs, dir, ino, file_type);
	if (err)
		return err;
	buf = block_buf(fs, dir);
	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	if (is_dots(name, len))
		err = dots_find(fs, dir, dir_inode, name, len, buf, &loc);
	else
		err = dir_find(fs, dir, dir_inode, name, len, buf, &loc);
	if (err)
		goto out;
	le32_store(buf + loc.off + DIRW_DE_INODE, ino);
	buf[loc.off + DIRW_DE_FILE_TYPE] = fs->geom.has_filetype ? file_type : 0;
	err = ext4fs__dirw_block_write(fs, dir, dir_inode, loc.lblk, loc.pblk, buf);
	if (err)
		goto out;
	if (old_ino)
		*old_ino = loc.ino;
	err = ext4fs__dirw_touch(fs, dir, dir_inode);
out:
	free(buf);
	return err;
}

static int empty_visit(const struct ext4fs_dirent *d, void *arg)
{
	(void)arg;
	return is_dots(d->name, d->name_len) ? 0 : 1;
}

int ext4fs_dir_is_empty(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *dir_inode,
			int *empty)
{
	int err = ext4fs_dir_iterate(fs, dir, dir_inode, 0, empty_visit, NULL);

	*empty = 0;
	if (err < 0)
		return err;
	*empty = err == 0;
	return 0;
}
