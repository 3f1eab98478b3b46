/*
 * file_write.c - changing file data: write, truncate, punch, fallocate.
 *
 * Data goes to disk in the largest pieces the map allows.  A hole is
 * filled with one allocator request for all of it (told the file's
 * expected size, so a whole file can be placed at once), and the caller's
 * buffer is written straight to each physically contiguous run; only the
 * partial blocks at the edges of a request go through a bounce buffer,
 * read-modify-write for written blocks, zero-filled for new and unwritten
 * ones.  Unwritten blocks written into become written.
 *
 * Consistency: i_size never covers data not yet written, no written block
 * lies past i_size, and bytes past i_size in the last block read as zeros
 * (they are zeroed before i_size grows over them).  So a call failing part
 * way (no space, an I/O error) leaves the file with what was written
 * before the failure and nothing for e2fsck to fix; blocks allocated for
 * data that could not be written are given back.  Every call writes the
 * inode once, before returning, on failure too (the map changes it makes
 * on the way leave that to it).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/alloc.h"
#include "ext4fs/file.h"
#include "blockmap_write_internal.h"
#include "fs_internal.h"
#include "fs_write_internal.h"

#define SMALL_FILE_LIMIT 0x7FFFFFFFULL   /* largest size without the large_file feature */

static int file_check(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		      const char *what)
{
	int err = ext4fs__fs_require_rw(fs, what);

	if (err)
		return err;
	if (ext4fs__map_kind_of(fs, inode) != MAP_NONE)
		return 0;
	if (ext4fs_inode_has_inline_data(inode))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u keeps its data inline; writing inline data is not supported yet", ino);
	return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
			       "inode %u has no data blocks to change (a fast symlink or a special file)", ino);
}

/* Can the map address size bytes? */
static int reach_check(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		       uint64_t size)
{
	uint64_t limit = ext4fs__map_max_blocks(fs, inode) * fs->geom.block_size;

	if (size > limit)
		return ext4fs__fs_fail(fs, EXT4FS_E_FILE_TOO_BIG,
				       "inode %u: %llu bytes is beyond the %llu its block map addresses", ino,
				       (unsigned long long)size, (unsigned long long)limit);
	return 0;
}

/* Can i_size become size: within the map's reach, and past 2 GiB only with large_file. */
static int size_check(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		      uint64_t size)
{
	int err = reach_check(fs, ino, inode, size);

	if (err)
		return err;
	if (size > SMALL_FILE_LIMIT && EXT4FS_ISREG(inode->i_mode) &&
	    !ext4fs_has_ro_compat(fs, EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE))
		return ext4fs__fs_fail(fs, EXT4FS_E_FILE_TOO_BIG,
				       "inode %u: files over 2 GiB need the large_file feature", ino);
	return 0;
}

/* Files of the reserved-blocks user or group may use the reserved blocks. */
static unsigned data_alloc_flags(const struct ext4fs_fs *fs, const struct ext4fs_inode *inode)
{
	if (ext4fs_inode_uid(inode) == fs->sb.s_def_resuid ||
	    ext4fs_inode_gid(inode) == fs->sb.s_def_resgid)
		return EXT4FS_ALLOC_USE_RESERVED;
	return 0;
}

static int get_bounce(struct ext4fs_fs *fs, uint32_t ino, unsigned char **bounce)
{
	if (!*bounce && !(*bounce = malloc(fs->geom.block_size)))
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "inode %u: no memory to write data", ino);
	return 0;
}

static void stamp(struct ext4fs_fs *fs, struct ext4fs_inode *inode, int mtime)
{
	int64_t sec;
	uint32_t nsec;

	ext4fs_now(fs, &sec, &nsec);
	ext4fs_inode_set_time(inode, 'c', sec, nsec);
	if (mtime)
		ext4fs_inode_set_time(inode, 'm', sec, nsec);
}

/* Zero bytes [from, to) of one block of the file, where it holds written data. */
static int zero_in_block(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			 uint64_t from, uint64_t to, unsigned char **bounce)
{
	uint32_t bs = fs->geom.block_size;
	uint64_t pblk, run;
	int unwritten, err;

	if (from >= to)
		return 0;
	err = ext4fs__map_run(fs, ino, inode, from / bs, 1, &pblk, &run, &unwritten);
	if (err || !pblk || unwritten)
		return err;
	err = get_bounce(fs, ino, bounce);
	if (!err)
		err = ext4fs_blocks_read(fs, pblk, 1, *bounce);
	if (err)
		return err;
	memset(*bounce + from % bs, 0, (size_t)(to - from));
	return ext4fs_data_write(fs, pblk, 1, *bounce);
}

static uint64_t round_up(uint64_t n, uint32_t bs)
{
	return (n + bs - 1) / bs * bs;
}

/*
 * Write bytes [pos, wend) of the file from src (the bytes at pos) into the
 * blocks from logical lblk, which map to pblk...  fresh: the blocks hold
 * nothing yet (new or unwritten), so partial blocks are zero-filled rather
 * than read.
 */
static int write_run(struct ext4fs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		     uint64_t pos, uint64_t wend, const unsigned char *src, int fresh,
		     unsigned char **bounce)
{
	uint32_t bs = fs->geom.block_size;
	uint64_t cur = pos;
	int err = 0;

	while (!err && cur < wend) {
		uint64_t phys = pblk + (cur / bs - lblk);
		uint32_t boff = (uint32_t)(cur % bs);
		const unsigned char *s = src + (cur - pos);

		if (boff || wend - cur < bs) {
			size_t chunk = bs - boff < wend - cur ? bs - boff : (size_t)(wend - cur);
			err = get_bounce(fs, ino, bounce);
			if (err)
				break;
			if (fresh)
				memset(*bounce, 0, bs);
			else
				err = ext4fs_blocks_read(fs, phys, 1, *bounce);
			if (err)
				break;
			memcpy(*bounce + boff, s, chunk);
			err = ext4fs_data_write(fs, phys, 1, *bounce);
			cur += chunk;
		} else {
			uint64_t full = (wend - cur) / bs;
			err = ext4fs_data_write(fs, phys, full, s);
			cur += full * bs;
		}
	}
	return err;
}

/* Undo a mapping whose data could not be written, keeping the first failure's message. */
static void unmap_quietly(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			  uint64_t lblk, uint64_t len)
{
	char msg[sizeof(fs->errmsg)];
	int dirty = 0;

	memcpy(msg, fs->errmsg, sizeof(msg));
	ext4fs__map_unmap(fs, ino, inode, lblk, len, &dirty);
	memcpy(fs->errmsg, msg, sizeof(msg));
}

static int finish(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode, int err,
		  unsigned char *bounce)
{
	int werr = ext4fs_inode_write(fs, ino, inode);

	free(bounce);
	return err ? err : werr;
}

int ext4fs_file_write(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t offset, const void *buf, size_t len, uint64_t expected_size)
{
	const unsigned char *src = buf;
	uint32_t bs = fs->geom.block_size;
	uint64_t end, pos, old_size = ext4fs_inode_size(inode), file_blocks;
	unsigned char *bounce = NULL;
	unsigned flags = data_alloc_flags(fs, inode) | (expected_size ? EXT4FS_ALLOC_WHOLE_FILE : 0);
	int dirty = 0;      /* finish() writes the inode in any case */
	int err = file_check(fs, ino, inode, "writing a file");

	if (err || len == 0)
		return err;
	if (offset > UINT64_MAX - len)
		return ext4fs__fs_fail(fs, EXT4FS_E_FILE_TOO_BIG, "inode %u: write past 2^64 bytes", ino);
	end = offset + len;
	err = size_check(fs, ino, inode, end);
	if (err)
		return err;
	file_blocks = expected_size ? expected_size : (end > old_size ? end : old_size);
	file_blocks = (file_blocks + bs - 1) / bs;
	/* The bytes between the old end of file and the write must read as zeros. */
	if (offset > old_size && old_size % bs)
		err = zero_in_block(fs, ino, inode, old_size,
				    offset < round_up(old_size, bs) ? offset : round_up(old_size, bs),
				    &bounce);
	pos = offset;
	while (!err && pos < end) {
		uint64_t lblk = pos / bs, want = (end - 1) / bs - lblk + 1, pblk, run, wend;
		int unwritten;

		err = ext4fs__map_run(fs, ino, inode, lblk, want, &pblk, &run, &unwritten);
		if (err)
			break;
		if (!pblk) {
			uint32_t got;
			err = ext4fs__map_alloc(fs, ino, inode, lblk, run > UINT32_MAX ? UINT32_MAX : (uint32_t)run,
						file_blocks, flags, 0, &pblk, &got, &dirty);
			if (err)
				break;
			wend = (lblk + got) * bs < end ? (lblk + got) * bs : end;
			err = write_run(fs, ino, lblk, pblk, pos, wend, src + (pos - offset), 1, &bounce);
			if (err) {
				unmap_quietly(fs, ino, inode, lblk, got);
				break;
			}
		} else {
			wend = (lblk + run) * bs < end ? (lblk + run) * bs : end;
			err = write_run(fs, ino, lblk, pblk, pos, wend, src + (pos - offset), unwritten, &bounce);
			if (!err && unwritten)
				err = ext4fs__map_mark_written(fs, ino, inode, lblk,
							       (wend - lblk * bs + bs - 1) / bs, &dirty);
			if (err)
				break;
		}
		pos = wend;
	}
	if (pos > offset) {
		if (pos > old_size)
			ext4fs_inode_set_size(inode, pos);
		stamp(fs, inode, 1);
	}
	return finish(fs, ino, inode, err, bounce);
}

int ext4fs_file_truncate(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			 uint64_t size)
{
	uint32_t bs = fs->geom.block_size;
	uint64_t old_size = ext4fs_inode_size(inode);
	unsigned char *bounce = NULL;
	int dirty = 0;
	int err = file_check(fs, ino, inode, "truncating a file");

	if (err)
		return err;
	err = size_check(fs, ino, inode, size);
	if (err)
		return err;
	if (size <= old_size) {
		/* Everything past the new end goes, blocks kept past the old end (fallocate) too. */
		uint64_t first = (size + bs - 1) / bs;
		err = ext4fs__map_unmap(fs, ino, inode, first, UINT64_MAX - first, &dirty);
		if (!err)
			err = zero_in_block(fs, ino, inode, size, round_up(size, bs), &bounce);
	} else {
		err = zero_in_block(fs, ino, inode, old_size, round_up(old_size, bs), &bounce);
	}
	if (!err && size != old_size) {
		ext4fs_inode_set_size(inode, size);
		stamp(fs, inode, 1);
	}
	return finish(fs, ino, inode, err, bounce);
}

int ext4fs_file_punch(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t offset, uint64_t len)
{
	uint32_t bs = fs->geom.block_size;
	uint64_t end, first, stop, limit;
	unsigned char *bounce = NULL;
	int dirty = 0;
	int err = file_check(fs, ino, inode, "punching a hole");

	if (err)
		return err;
	if (len == 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: punching an empty range", ino);
	/* Nothing past what the map addresses can be mapped: clip there (no overflow after). */
	limit = ext4fs__map_max_blocks(fs, inode) * bs;
	end = offset > limit || len > limit - offset ? limit : offset + len;
	if (offset > end)
		offset = end;
	first = (offset + bs - 1) / bs;   /* whole blocks [first, stop) */
	stop = end / bs;
	if (first < stop)
		err = ext4fs__map_unmap(fs, ino, inode, first, stop - first, &dirty);
	if (!err && first > stop) {
		err = zero_in_block(fs, ino, inode, offset, end, &bounce);
	} else if (!err) {
		err = zero_in_block(fs, ino, inode, offset, first * bs, &bounce);
		if (!err)
			err = zero_in_block(fs, ino, inode, stop * bs, end, &bounce);
	}
	stamp(fs, inode, 1);
	return finish(fs, ino, inode, err, bounce);
}

int ext4fs_file_fallocate(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			  uint64_t offset, uint64_t len, unsigned flags)
{
	uint32_t bs = fs->geom.block_size;
	uint64_t end, lblk, last, old_size = ext4fs_inode_size(inode), file_blocks, covered = 0;
	unsigned char *bounce = NULL;
	unsigned alloc_flags = data_alloc_flags(fs, inode);
	int keep = (flags & EXT4FS_FALLOC_KEEP_SIZE) != 0, extents, dirty = 0;
	int err = file_check(fs, ino, inode, "allocating file space");

	if (err)
		return err;
	if (len == 0 || (flags & ~EXT4FS_FALLOC_KEEP_SIZE))
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG, "inode %u: bad fallocate range or flags", ino);
	if (offset > UINT64_MAX - len)
		return ext4fs__fs_fail(fs, EXT4FS_E_FILE_TOO_BIG, "inode %u: range past 2^64 bytes", ino);
	end = offset + len;
	extents = ext4fs__map_kind_of(fs, inode) == MAP_EXTENTS;
	err = keep ? reach_check(fs, ino, inode, end) : size_check(fs, ino, inode, end);
	if (err)
		return err;
	lblk = offset / bs;
	last = (end + bs - 1) / bs;
	/* Written blocks past i_size are corruption to e2fsck; only unwritten extents may lie there. */
	if (!extents && keep && last > (old_size + bs - 1) / bs)
		return ext4fs__fs_fail(fs, EXT4FS_E_INVALID_ARG,
				       "inode %u: a block map cannot keep blocks past the end of file", ino);
	file_blocks = last > (old_size + bs - 1) / bs ? last : (old_size + bs - 1) / bs;
	while (lblk < last) {
		uint64_t pblk, run;
		uint32_t got;
		int unwritten;

		err = ext4fs__map_run(fs, ino, inode, lblk, last - lblk, &pblk, &run, &unwritten);
		if (err)
			break;
		if (pblk) {
			lblk += run;
			continue;
		}
		err = ext4fs__map_alloc(fs, ino, inode, lblk, run > UINT32_MAX ? UINT32_MAX : (uint32_t)run,
					file_blocks, alloc_flags, extents, &pblk, &got, &dirty);
		if (err)
			break;
		/* A block map has no unwritten state: its new blocks must read as zeros. */
		if (!extents) {
			err = ext4fs_data_zero(fs, pblk, got);
			if (err) {
				unmap_quietly(fs, ino, inode, lblk, got);
				break;
			}
		}
		lblk += got;
	}
	/* [offset, covered) is allocated now, also when the loop stopped early. */
	if (lblk * bs > offset)
		covered = lblk * bs < end ? lblk * bs : end;
	if (!keep && covered > old_size) {
		int zerr = zero_in_block(fs, ino, inode, old_size, round_up(old_size, bs), &bounce);
		if (!zerr) {
			ext4fs_inode_set_size(inode, covered);
			stamp(fs, inode, 1);
		} else if (!err) {
			err = zerr;
		}
	} else {
		stamp(fs, inode, 0);
	}
	return finish(fs, ino, inode, err, bounce);
}
