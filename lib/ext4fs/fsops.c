/*
 * fsops.c - the namespace operations: each one is a short sequence of
 * inode, directory and block-map changes, ordered so that a failure part
 * way leaves nothing allocated and nothing pointing at a freed inode.
 */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/extent.h"
#include "ext4fs/file.h"
#include "ext4fs/fsops.h"
#include "ext4fs/xattr.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "ondisk_le.h"

#define LINK_MAX 65000U            /* the kernel's EXT4_LINK_MAX */
#define FAST_SYMLINK_MAX 59        /* i_block holds 60 bytes; the kernel keeps room for a NUL */

static int check_name(struct ext4fs_fs *fs, const char *name, size_t *len)
{
	size_t n = strnlen(name, EXT4FS_NAME_LEN + 1);

	if (n == 0 || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "\"%s\" is not a valid file name", name);
	if (n > EXT4FS_NAME_LEN)
		return ext4fs__fs_fail(fs, EXT4FS_E_NAME_TOO_LONG, "file name \"%.40s...\" is longer than %u bytes",
				       name, EXT4FS_NAME_LEN);
	*len = n;
	return 0;
}

static int read_dir(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *in)
{
	int err = ext4fs_inode_read(fs, dir, in);

	if (err)
		return err;
	if (!EXT4FS_ISDIR(in->i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "inode %u is not a directory", dir);
	return 0;
}

static void touch_ctime(struct ext4fs_fs *fs, struct ext4fs_inode *in)
{
	int64_t sec;
	uint32_t nsec;

	ext4fs_now(fs, &sec, &nsec);
	ext4fs_inode_set_time(in, 'c', sec, nsec);
}

/* A directory gains a subdirectory link; past the limit dir_nlink pins the count at 1. */
static int dir_link_inc(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *in)
{
	if (in->i_links_count == 1)
		return 0;
	if (in->i_links_count + 1U >= LINK_MAX) {
		if (!ext4fs_has_ro_compat(fs, EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK))
			return ext4fs__fs_fail(fs, EXT4FS_E_TOO_MANY_LINKS,
					       "directory %u has %u subdirectories already", dir,
					       in->i_links_count - 2U);
		in->i_links_count = 1;
		return 0;
	}
	in->i_links_count++;
	return 0;
}

static void dir_link_dec(struct ext4fs_inode *in)
{
	/* A count pinned at 1 by dir_nlink no longer says how many subdirectories there are. */
	if (in->i_links_count > 2)
		in->i_links_count--;
}

int ext4fs_inode_release(struct ext4fs_fs *fs, uint32_t ino)
{
	const struct ext4fs_bitmap *imap;
	struct ext4fs_inode in;
	int64_t sec;
	uint32_t nsec;
	int err = ext4fs__fs_require_rw(fs, "releasing an inode");

	if (err)
		return err;
	err = ext4fs_fs_inode_bitmap(fs, &imap);
	if (err)
		return err;
	if (ino == 0 || ino > ext4fs_geom(fs)->inodes_count)
		return ext4fs__fs_fail(fs, EXT4FS_E_BAD_INODE_NUM, "inode %u is not in the file system", ino);
	if (ext4fs_bitmap_test(imap, ino) != 1)
		return ext4fs__fs_fail(fs, EXT4FS_E_INODE_STATE, "inode %u is not in use", ino);
	err = ext4fs_inode_read(fs, ino, &in);
	if (err)
		return err;
	ext4fs_alloc_release_inode(fs, ino);
	if (!ext4fs_inode_is_fast_symlink(fs, &in) && !ext4fs_inode_has_inline_data(&in) &&
	    (EXT4FS_ISREG(in.i_mode) || EXT4FS_ISDIR(in.i_mode) || EXT4FS_ISLNK(in.i_mode))) {
		err = ext4fs_bmap_unmap(fs, ino, &in, 0, UINT64_MAX);
		if (err)
			return err;
	}
	if (ext4fs_inode_file_acl(fs, &in)) {
		err = ext4fs_xattr_release(fs, ino, &in);
		if (err)
			return err;
	}
	ext4fs_now(fs, &sec, &nsec);
	in.i_links_count = 0;
	in.i_dtime = (uint32_t)sec;
	ext4fs_inode_set_size(&in, 0);
	err = ext4fs_inode_write(fs, ino, &in);
	if (err)
		return err;
	return ext4fs_inode_mark_free(fs, ino, EXT4FS_ISDIR(in.i_mode));
}

/*
 * Allocate and write a new inode of the given mode near dir.  The caller
 * finishes it (directory block, symlink target) and links it; on failure
 * it undoes this with ext4fs_inode_release().
 */
static int new_inode(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_new_attrs *a,
		     uint16_t mode, struct ext4fs_inode *in, uint32_t *ino)
{
	int err = ext4fs_inode_alloc(fs, dir, mode, ino);

	if (err)
		return err;
	ext4fs_inode_init_new(fs, *ino, mode, a->uid, a->gid, in);
	/* The whole record: a reused inode's old in-inode xattrs must not come back to life. */
	unsigned char *raw = calloc(1, ext4fs_geom(fs)->inode_size);
	if (!raw)
		err = ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for inode %u", *ino);
	if (raw) {
		ext4fs_inode_encode(in, raw, ext4fs_geom(fs)->inode_size);
		err = ext4fs_inode_write_raw(fs, *ino, raw);
		free(raw);
	}
	if (err) {
		(void)ext4fs_inode_mark_free(fs, *ino, EXT4FS_ISDIR(mode));
		return err;
	}
	return 0;
}

/* Link a finished new inode into dir, or release it when that fails. */
static int link_new(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *dir_in,
		    const char *name, size_t len, uint32_t ino, uint16_t mode)
{
	int err = ext4fs_dir_add(fs, dir, dir_in, name, len, ino, ext4fs_file_type_of_mode(mode));

	if (err) {
		char msg[sizeof(fs->errmsg)];
		memcpy(msg, fs->errmsg, sizeof(msg));
		(void)ext4fs_inode_release(fs, ino);
		memcpy(fs->errmsg, msg, sizeof(msg));
	}
	return err;
}

static void encode_rdev(struct ext4fs_inode *in, uint32_t rdev)
{
	uint32_t major = (rdev >> 8) & 0xFFF, minor = (rdev & 0xFF) | ((rdev >> 12) & 0xFFF00);

	memset(in->i_block, 0, sizeof(in->i_block));
	/* Numbers that fit the old 8:8 encoding go in i_block[0], the rest in i_block[1], as Linux does. */
	if (major < 256 && minor < 256)
		le32_store(in->i_block, (major << 8) | minor);
	else
		le32_store(in->i_block + 4, (minor & 0xFF) | (major << 8) | ((minor & ~0xFFU) << 12));
}

int ext4fs_mknod(struct ext4fs_fs *fs, uint32_t dir, const char *name,
		 const struct ext4fs_new_attrs *attrs, uint32_t *ino)
{
	struct ext4fs_inode dir_in, in;
	uint16_t type = attrs->mode & EXT4FS_S_IFMT;
	size_t len;
	uint32_t new_ino;
	int err = ext4fs__fs_require_rw(fs, "creating a file");

	if (err || (err = check_name(fs, name, &len)) || (err = read_dir(fs, dir, &dir_in)))
		return err;
	if (type != EXT4FS_S_IFREG && type != EXT4FS_S_IFCHR && type != EXT4FS_S_IFBLK &&
	    type != EXT4FS_S_IFIFO && type != EXT4FS_S_IFSOCK)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "%s: mode 0%o is not a file or device node",
				       name, attrs->mode);
	err = new_inode(fs, dir, attrs, attrs->mode, &in, &new_ino);
	if (err)
		return err;
	if (type == EXT4FS_S_IFCHR || type == EXT4FS_S_IFBLK) {
		encode_rdev(&in, attrs->rdev);
		err = ext4fs_inode_write(fs, new_ino, &in);
		if (err) {
			(void)ext4fs_inode_release(fs, new_ino);
			return err;
		}
	}
	err = link_new(fs, dir, &dir_in, name, len, new_ino, attrs->mode);
	if (!err && ino)
		*ino = new_ino;
	return err;
}

int ext4fs_mkdir(struct ext4fs_fs *fs, uint32_t dir, const char *name,
		 const struct ext4fs_new_attrs *attrs, uint32_t *ino)
{
	struct ext4fs_inode dir_in, in;
	uint16_t mode = (uint16_t)((attrs->mode & ~EXT4FS_S_IFMT) | EXT4FS_S_IFDIR);
	size_t len;
	uint32_t new_ino;
	int err = ext4fs__fs_require_rw(fs, "creating a directory");

	if (err || (err = check_name(fs, name, &len)) || (err = read_dir(fs, dir, &dir_in)))
		return err;
	if (dir_in.i_links_count + 1U >= LINK_MAX &&
	    !ext4fs_has_ro_compat(fs, EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK))
		return ext4fs__fs_fail(fs, EXT4FS_E_TOO_MANY_LINKS, "directory %u has too many subdirectories", dir);
	err = new_inode(fs, dir, attrs, mode, &in, &new_ino);
	if (err)
		return err;
	in.i_links_count = 2;
	err = ext4fs_dir_init(fs, new_ino, &in, dir);
	if (err) {
		(void)ext4fs_inode_release(fs, new_ino);
		return err;
	}
	err = link_new(fs, dir, &dir_in, name, len, new_ino, mode);
	if (err)
		return err;
	/* The entry was added; re-read the parent, which ext4fs_dir_add may have grown. */
	err = ext4fs_inode_read(fs, dir, &dir_in);
	if (!err)
		err = dir_link_inc(fs, dir, &dir_in);
	if (!err)
		err = ext4fs_inode_write(fs, dir, &dir_in);
	if (!err && ino)
		*ino = new_ino;
	return err;
}

int ext4fs_symlink(struct ext4fs_fs *fs, uint32_t dir, const char *name, const char *target,
		   const struct ext4fs_new_attrs *attrs, uint32_t *ino)
{
	struct ext4fs_inode dir_in, in;
	uint16_t mode = (uint16_t)((attrs->mode & 07777) | EXT4FS_S_IFLNK);
	size_t len, tlen = strlen(target);
	uint32_t new_ino;
	int err = ext4fs__fs_require_rw(fs, "creating a symlink");

	if (err || (err = check_name(fs, name, &len)) || (err = read_dir(fs, dir, &dir_in)))
		return err;
	if (tlen == 0 || tlen >= ext4fs_geom(fs)->block_size)
		return ext4fs__fs_fail(fs, tlen ? EXT4FS_E_NAME_TOO_LONG : EXT4FS_E_INVALID_ARG,
				       "%s: a symlink target must be 1 to %u bytes", name,
				       ext4fs_geom(fs)->block_size - 1);
	err = new_inode(fs, dir, attrs, mode, &in, &new_ino);
	if (err)
		return err;
	if (tlen <= FAST_SYMLINK_MAX) {
		memset(in.i_block, 0, sizeof(in.i_block));
		memcpy(in.i_block, target, tlen);
		ext4fs_inode_set_size(&in, tlen);
		err = ext4fs_inode_write(fs, new_ino, &in);
	} else {
		if (ext4fs_geom(fs)->has_extents) {
			in.i_flags |= EXT4FS_EXTENTS_FL;
			le16_store(in.i_block + 0, EXT4FS_EXTENT_MAGIC);
			le16_store(in.i_block + 4, 4);
		}
		err = ext4fs_file_write(fs, new_ino, &in, 0, target, tlen, tlen);
	}
	if (err) {
		(void)ext4fs_inode_release(fs, new_ino);
		return err;
	}
	err = link_new(fs, dir, &dir_in, name, len, new_ino, mode);
	if (!err && ino)
		*ino = new_ino;
	return err;
}

int ext4fs_link(struct ext4fs_fs *fs, uint32_t dir, const char *name, uint32_t ino)
{
	struct ext4fs_inode dir_in, in;
	size_t len;
	int err = ext4fs__fs_require_rw(fs, "linking");

	if (err || (err = check_name(fs, name, &len)) || (err = read_dir(fs, dir, &dir_in)))
		return err;
	err = ext4fs_inode_read(fs, ino, &in);
	if (err)
		return err;
	if (EXT4FS_ISDIR(in.i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_IS_DIR, "inode %u is a directory: no hard links", ino);
	if (in.i_links_count >= LINK_MAX)
		return ext4fs__fs_fail(fs, EXT4FS_E_TOO_MANY_LINKS, "inode %u has %u links already", ino,
				       in.i_links_count);
	err = ext4fs_dir_add(fs, dir, &dir_in, name, len, ino, ext4fs_file_type_of_mode(in.i_mode));
	if (err)
		return err;
	in.i_links_count++;
	touch_ctime(fs, &in);
	return ext4fs_inode_write(fs, ino, &in);
}

/* One link fewer on a non-directory; the inode goes when none is left. */
static int drop_link(struct ext4fs_fs *fs, uint32_t ino)
{
	struct ext4fs_inode in;
	int err = ext4fs_inode_read(fs, ino, &in);

	if (err)
		return err;
	if (in.i_links_count <= 1)
		return ext4fs_inode_release(fs, ino);
	in.i_links_count--;
	touch_ctime(fs, &in);
	return ext4fs_inode_write(fs, ino, &in);
}

static int lookup(struct ext4fs_fs *fs, uint32_t dir, const char *name, size_t len,
		  uint32_t *ino, struct ext4fs_inode *in)
{
	int err = ext4fs_dir_lookup(fs, dir, name, len, ino);

	if (err == EXT4FS_E_NOT_FOUND)
		return ext4fs__fs_fail(fs, err, "\"%s\" not found in directory %u", name, dir);
	if (err)
		return err;
	return ext4fs_inode_read(fs, *ino, in);
}

int ext4fs_unlink(struct ext4fs_fs *fs, uint32_t dir, const char *name)
{
	struct ext4fs_inode dir_in, in;
	uint32_t ino;
	size_t len;
	int err = ext4fs__fs_require_rw(fs, "unlinking");

	if (err || (err = check_name(fs, name, &len)) || (err = read_dir(fs, dir, &dir_in)))
		return err;
	err = lookup(fs, dir, name, len, &ino, &in);
	if (err)
		return err;
	if (EXT4FS_ISDIR(in.i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_IS_DIR, "\"%s\" is a directory", name);
	err = ext4fs_dir_remove(fs, dir, &dir_in, name, len, NULL);
	if (err)
		return err;
	return drop_link(fs, ino);
}

int ext4fs_rmdir(struct ext4fs_fs *fs, uint32_t dir, const char *name)
{
	struct ext4fs_inode dir_in, in;
	uint32_t ino;
	size_t len;
	int empty = 0;
	int err = ext4fs__fs_require_rw(fs, "removing a directory");

	if (err || (err = check_name(fs, name, &len)) || (err = read_dir(fs, dir, &dir_in)))
		return err;
	err = lookup(fs, dir, name, len, &ino, &in);
	if (err)
		return err;
	if (!EXT4FS_ISDIR(in.i_mode))
		return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "\"%s\" is not a directory", name);
	err = ext4fs_dir_is_empty(fs, ino, &in, &empty);
	if (err)
		return err;
	if (!empty)
		return ext4fs__fs_fail(fs, EXT4FS_E_DIR_NOT_EMPTY, "directory \"%s\" is not empty", name);
	err = ext4fs_dir_remove(fs, dir, &dir_in, name, len, NULL);
	if (err)
		return err;
	err = ext4fs_inode_read(fs, dir, &dir_in);
	if (err)
		return err;
	dir_link_dec(&dir_in);
	touch_ctime(fs, &dir_in);
	err = ext4fs_inode_write(fs, dir, &dir_in);
	if (err)
		return err;
	return ext4fs_inode_release(fs, ino);
}

/* Is dir at or below ancestor?  Walks ".." up to the root, bounded by the inode count. */
static int is_within(struct ext4fs_fs *fs, uint32_t dir, uint32_t ancestor, int *within)
{
	uint32_t cur = dir;

	*within = 0;
	for (uint32_t steps = 0; steps <= ext4fs_geom(fs)->inodes_count; steps++) {
		uint32_t parent;
		if (cur == ancestor) {
			*within = 1;
			return 0;
		}
		if (cur == EXT4FS_ROOT_INO)
			return 0;
		int err = ext4fs_dir_lookup(fs, cur, "..", 2, &parent);
		if (err)
			return err;
		cur = parent;
	}
	return ext4fs__fs_fail(fs, EXT4FS_E_DIR_CORRUPT, "directory %u: \"..\" chain does not reach the root", dir);
}

int ext4fs_rename(struct ext4fs_fs *fs, uint32_t old_dir, const char *old_name,
		  uint32_t new_dir, const char *new_name)
{
	struct ext4fs_inode odir_in, ndir_in, src_in, tgt_in;
	uint32_t src, tgt = 0;
	size_t olen, nlen;
	int src_is_dir, err = ext4fs__fs_require_rw(fs, "renaming");

	if (err || (err = check_name(fs, old_name, &olen)) || (err = check_name(fs, new_name, &nlen)) ||
	    (err = read_dir(fs, old_dir, &odir_in)) || (err = read_dir(fs, new_dir, &ndir_in)))
		return err;
	err = lookup(fs, old_dir, old_name, olen, &src, &src_in);
	if (err)
		return err;
	src_is_dir = EXT4FS_ISDIR(src_in.i_mode);
	/* Like rename(2), a move into the directory's own subtree fails before the target is looked at. */
	if (src_is_dir && old_dir != new_dir) {
		int within = 0;
		err = is_within(fs, new_dir, src, &within);
		if (err)
			return err;
		if (within)
			return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
					       "cannot move directory \"%s\" into itself", old_name);
	}
	err = ext4fs_dir_lookup(fs, new_dir, new_name, nlen, &tgt);
	if (err == EXT4FS_E_NOT_FOUND) {
		tgt = 0;
	} else if (err) {
		return err;
	} else {
		if (tgt == src)
			return 0;   /* two names of one inode: rename(2) does nothing */
		err = ext4fs_inode_read(fs, tgt, &tgt_in);
		if (err)
			return err;
		if (src_is_dir && !EXT4FS_ISDIR(tgt_in.i_mode))
			return ext4fs__fs_fail(fs, EXT4FS_E_NOT_DIR, "\"%s\" is not a directory", new_name);
		if (!src_is_dir && EXT4FS_ISDIR(tgt_in.i_mode))
			return ext4fs__fs_fail(fs, EXT4FS_E_IS_DIR, "\"%s\" is a directory", new_name);
		if (EXT4FS_ISDIR(tgt_in.i_mode)) {
			int empty = 0;
			err = ext4fs_dir_is_empty(fs, tgt, &tgt_in, &empty);
			if (err)
				return err;
			if (!empty)
				return ext4fs__fs_fail(fs, EXT4FS_E_DIR_NOT_EMPTY, "directory \"%s\" is not empty",
						       new_name);
		}
	}
	if (src_is_dir && old_dir != new_dir) {
		if (!tgt && ndir_in.i_links_count + 1U >= LINK_MAX &&
		    !ext4fs_has_ro_compat(fs, EXT4FS_FEATURE_RO_COMPAT_DIR_NLINK))
			return ext4fs__fs_fail(fs, EXT4FS_E_TOO_MANY_LINKS,
					       "directory %u has too many subdirectories", new_dir);
	}

	/* New name first: at every step the source stays reachable by at least one name. */
	if (tgt)
		err = ext4fs_dir_set_entry(fs, new_dir, &ndir_in, new_name, nlen, src,
					   ext4fs_file_type_of_mode(src_in.i_mode), NULL);
	else
		err = ext4fs_dir_add(fs, new_dir, &ndir_in, new_name, nlen, src,
				     ext4fs_file_type_of_mode(src_in.i_mode));
	if (err)
		return err;
	if (old_dir == new_dir)
		odir_in = ndir_in;
	err = ext4fs_dir_remove(fs, old_dir, &odir_in, old_name, olen, NULL);
	if (err)
		return err;

	if (tgt) {
		if (EXT4FS_ISDIR(tgt_in.i_mode)) {
			err = ext4fs_inode_release(fs, tgt);
			if (!err)
				err = ext4fs_inode_read(fs, new_dir, &ndir_in);
			if (!err) {
				dir_link_dec(&ndir_in);
				err = ext4fs_inode_write(fs, new_dir, &ndir_in);
			}
		} else {
			err = drop_link(fs, tgt);
		}
		if (err)
			return err;
	}
	if (src_is_dir && old_dir != new_dir) {
		err = ext4fs_inode_read(fs, src, &src_in);
		if (!err)
			err = ext4fs_dir_set_entry(fs, src, &src_in, "..", 2, new_dir, EXT4FS_FT_DIR, NULL);
		if (!err)
			err = ext4fs_inode_read(fs, old_dir, &odir_in);
		if (!err) {
			dir_link_dec(&odir_in);
			err = ext4fs_inode_write(fs, old_dir, &odir_in);
		}
		if (!err)
			err = ext4fs_inode_read(fs, new_dir, &ndir_in);
		if (!err)
			err = dir_link_inc(fs, new_dir, &ndir_in);
		if (!err)
			err = ext4fs_inode_write(fs, new_dir, &ndir_in);
		if (err)
			return err;
	}
	err = ext4fs_inode_read(fs, src, &src_in);
	if (err)
		return err;
	touch_ctime(fs, &src_in);
	return ext4fs_inode_write(fs, src, &src_in);
}
