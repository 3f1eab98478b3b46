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

#ifdef __cplusplus
}
#endif
#endif
