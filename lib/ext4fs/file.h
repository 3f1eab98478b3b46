/*
 * file.h - reading file contents: block-mapped data, inline data and
 * symbolic link targets.
 *
 * Layer 5.  Data is read through ext4fs_bmap(): holes and unwritten extents
 * read as zeros, physically contiguous runs are read with one request, and
 * nothing is read at or beyond i_size.  Inline-data inodes keep their first
 * 60 bytes in i_block and the rest in the value of their in-inode
 * "system.data" attribute; i_size beyond what those hold reads as zeros,
 * as the kernel reads it (mke2fs -d makes such files).  Symbolic links are
 * fast (target in i_block), slow (target in the first data block) or inline;
 * a target is never longer than a block.
 */
#ifndef EXT4FS_FILE_H
#define EXT4FS_FILE_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_INLINE_IBLOCK_SIZE 60   /* inline bytes kept in i_block */

/*
 * Read up to len bytes of inode ino's data from byte offset into buf
 * (caller-owned).  *got receives the number of bytes stored, which is less
 * than len only at end of file (0 at or past i_size).  Errors:
 * EXT4FS_E_INLINE_CORRUPT, the mapping errors of blockmap.h/extent.h, read
 * errors, EXT4FS_E_NO_MEMORY.  On error *got is the number of bytes
 * completed before the failure.
 */
int ext4fs_file_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     uint64_t offset, void *buf, size_t len, size_t *got);

/*
 * The whole inline area of an inline-data inode: the 60 bytes of i_block
 * followed by the value of its in-inode "system.data" attribute (which may
 * be absent or empty).  On success *data is malloc'd (caller frees) and *len
 * is 60 plus the attribute's length; the file's content is the first i_size
 * bytes of it.  Errors: EXT4FS_E_INVALID_ARG when the inode has no inline
 * data flag, EXT4FS_E_INLINE_CORRUPT (system.data kept in an EA inode), the
 * errors of ext4fs_xattr_iterate().
 */
int ext4fs_inline_data_read(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			    unsigned char **data, size_t *len);

/*
 * Target of symbolic link ino.  Stores up to bufsize - 1 bytes and a NUL in
 * buf (so bufsize must be at least 1) and the full target length in *len; a
 * target was cut short when *len >= bufsize.  Errors: EXT4FS_E_INVALID_ARG
 * (not a symlink, bufsize 0), EXT4FS_E_INODE_CORRUPT (i_size not below the
 * block size), and those of ext4fs_file_read().
 */
int ext4fs_symlink_target(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
			  char *buf, size_t bufsize, size_t *len);

/*
 * Whether symbolic link ino (inode as read) is sound by e2fsprogs' rules:
 * a size below 2^32 and not 0, no index flag; inline data exactly i_size
 * long; a fast symlink (no extents flag) or a slow one mapping exactly one
 * block at logical 0 inside the file system; the target NUL-terminated
 * (an encrypted one: its stored length plus 2) within its room and as long
 * as i_size.  Reads the target's block.  1 sound, 0 not (also when the
 * block cannot be read).
 */
int ext4fs_symlink_ok(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode);

/* -- Changing file data --------------------------------------------------
 *
 * These work on a writable handle and on inodes with a block map (extent
 * tree or indirect blocks); inline-data inodes, fast symlinks and special
 * files fail with EXT4FS_E_INVALID_ARG.  Each updates *inode (size, times,
 * i_blocks, the map) and writes it before returning, also on failure, and
 * leaves the file system consistent either way: i_size never covers data
 * that was not written, no written block lies past i_size, and blocks
 * allocated for data that could not be written are given back.  Sizes are
 * limited to what the map addresses (2^32 blocks with extents, 12 + n +
 * n^2 + n^3 blocks of n = block_size / 4 entries with indirect maps) and,
 * for regular files, to 2 GiB without the large_file feature
 * (EXT4FS_E_FILE_TOO_BIG); the features are never changed.  Files owned by
 * the reserved-blocks user or group (s_def_resuid / s_def_resgid, root by
 * default) may use the reserved blocks, as the kernel lets those users.
 */

/*
 * Write len bytes from buf at byte offset.  Holes are allocated with as few
 * allocator requests as possible: expected_size, the file's final size when
 * the caller knows it (0 when not), lets the allocator place the whole file
 * at once.  Partial blocks are read-modified-written; the unwritten parts of
 * new or unwritten blocks are zeroed; unwritten extents written into become
 * written.  i_size grows to cover the data; mtime and ctime are set.
 * Errors: EXT4FS_E_NO_SPACE (the file keeps what was written before, and
 * i_size covers exactly that), EXT4FS_E_FILE_TOO_BIG, EXT4FS_E_INVALID_ARG,
 * the mapping errors of blockmap.h, I/O errors, EXT4FS_E_NO_MEMORY.
 */
int ext4fs_file_write(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t offset, const void *buf, size_t len, uint64_t expected_size);

/*
 * Set the size to size bytes.  Shrinking (or keeping the size) frees every
 * block past the new end, including blocks fallocate kept past the old one,
 * and zeroes the rest of the last partial block on disk; growing only
 * changes i_size (the new range is a hole).  mtime and ctime change when the
 * size does.  Errors as ext4fs_file_write().
 */
int ext4fs_file_truncate(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			 uint64_t size);

/*
 * Punch a hole over [offset, offset + len): whole blocks are unmapped and
 * freed, partial blocks at the edges zeroed in place; i_size does not
 * change.  Splitting an extent may need a tree block (EXT4FS_E_NO_SPACE
 * when none is left; the reserved blocks may be used).  Errors as
 * ext4fs_file_write(), and EXT4FS_E_INVALID_ARG for len 0.
 */
int ext4fs_file_punch(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
		      uint64_t offset, uint64_t len);

#define EXT4FS_FALLOC_KEEP_SIZE 0x1   /* do not grow i_size (FALLOC_FL_KEEP_SIZE) */

/*
 * Allocate the holes in [offset, offset + len): unwritten extents in
 * extent-mapped files (they read as zeros), zeroed blocks in block-mapped
 * ones.  Without EXT4FS_FALLOC_KEEP_SIZE i_size grows to cover the range
 * (on EXT4FS_E_NO_SPACE, the part allocated from offset on).  A block map
 * cannot keep blocks past the end of file, so KEEP_SIZE reaching past it
 * there is EXT4FS_E_INVALID_ARG.  ctime is set, and mtime when i_size
 * grows.  Errors as ext4fs_file_write(), and EXT4FS_E_INVALID_ARG for len 0
 * or unknown flags.
 */
int ext4fs_file_fallocate(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode,
			  uint64_t offset, uint64_t len, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
