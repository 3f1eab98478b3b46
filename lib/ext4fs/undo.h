/*
 * undo.h - undo files in e2undo's format ("E2UNDO02").
 *
 * Layer "fs" (uses the channels, the superblock codec, crc32c and the
 * superblock checksum).  For a file system without a journal, an undo file
 * keeps the old contents of every block a change overwrites, so that the
 * change can be rolled back: by e2fsprogs' e2undo(8), which reads the files
 * mke2fs, tune2fs, e2fsck, resize2fs and debugfs write with -z, or by
 * ext4fs_undo_apply() below.
 *
 * The file, cut into blocks of the file system's block size B:
 *   block 0      the header (512 bytes, little-endian): magic "E2UNDO02",
 *                number of keys, the block of the superblock copy (1), the
 *                block of the first key block (2), B, the file system's
 *                block size, crc32c of the file system's superblock, state
 *                (bit 0: finished), compat/incompat/ro_compat feature words
 *                (compat bit 0: fs_offset is valid), fs_offset (where the
 *                file system starts in its device), and last the header's
 *                own crc32c over the 508 bytes before it;
 *   block 1      the file system's superblock (1024 bytes) as it is when the
 *                header is written, with s_magic inverted, so that the undo
 *                file is applied only to the file system it was made
 *                against, in the state the change left it in;
 *   block 2...   a key block (magic 0xCADECADE, its crc32c computed with
 *                the crc field zero, 8 reserved bytes, then B / 16 - 1
 *                keys of 16 bytes: file system block, crc32c of the data,
 *                size in bytes), followed by the data of its keys, one after
 *                the other, each rounded up to whole blocks; then the next
 *                key block, and so on.  A key covers up to 512 blocks: old
 *                contents of consecutive file system blocks saved one after
 *                the other extend the last key.
 * All crc32c values are the raw update from ~0 with no final inversion.
 */
#ifndef EXT4FS_UNDO_H
#define EXT4FS_UNDO_H

#include <stdint.h>
#include "ext4fs/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ext4fs_io_undo_wrap() flags. */
#define EXT4FS_UNDO_OVERWRITE 0x1   /* delete an existing undo file first */
#define EXT4FS_UNDO_APPEND    0x2   /* carry on with an existing undo file of this file system */

/*
 * Make a channel that writes through inner and, before the first write,
 * discard or zeroout touching a block of the file system, appends that
 * block's old contents to the undo file at undo_path with its key and makes
 * the undo file durable (the data, the key block, the header and the
 * superblock copy, then fsync) before the change reaches inner.  Blocks
 * already saved are written straight through.  Reads go to inner.
 *
 * The block size and the superblock are read through inner at the start:
 * inner must hold an ext2/3/4 file system at its offset 0 (open the image
 * with the file system's offset, and tell the undo file with
 * ext4fs_io_undo_set_fs_offset()).  A new undo file is created with mode
 * 0600 and at once holds a valid header with no keys.  An existing one is
 * refused with -EEXIST unless flags says what to do with it:
 * EXT4FS_UNDO_OVERWRITE deletes it first (e2fsprogs' tools do so with the
 * undo file they name themselves in E2FSPROGS_UNDO_DIR); EXT4FS_UNDO_APPEND
 * carries on with it, as e2fsprogs' tools do with the file given to -z: an
 * empty file is started anew, otherwise it must be an undo file with this
 * file system's block size whose superblock copy is inner's superblock as
 * it now is (the file system was not changed since), its blocks count as
 * saved and new ones are added after them, so that one e2undo rolls back
 * both changes.  Both flags at once are EXT4FS_E_INVALID_ARG.
 *
 * ext4fs_io_flush() on the channel flushes inner, then writes the header
 * marked finished with a copy of the superblock as it now is; the next
 * change first marks the header unfinished again.  ext4fs_io_close() does
 * the same as a flush, closes the undo file and closes inner.  When old
 * contents cannot be saved (reading them from inner or writing the undo
 * file failed), the change does not reach inner, the channel refuses every
 * further change with that error, and the undo file keeps what its last
 * commit made durable.
 *
 * On success *out is the new channel, which owns inner; the caller frees it
 * with ext4fs_io_close().  Errors: -EEXIST, other -errno from the undo file,
 * EXT4FS_E_BAD_MAGIC or EXT4FS_E_CORRUPT_SUPER (inner holds no usable
 * superblock), read errors from inner, EXT4FS_E_NO_MEMORY; with
 * EXT4FS_UNDO_APPEND also EXT4FS_E_UNDO_CORRUPT, EXT4FS_E_UNSUPP_FEATURE and
 * EXT4FS_E_UNDO_WRONG_FS (as ext4fs_undo_apply() says them; a block size
 * other than the file system's is EXT4FS_E_UNDO_WRONG_FS).  On failure *out
 * is NULL, inner is still open and still the caller's, and an undo file
 * this call created is removed (an existing one may have been rewritten
 * only by a failing EXT4FS_UNDO_APPEND that got as far as its header).
 */
int ext4fs_io_undo_wrap(struct ext4fs_io *inner, const char *undo_path, unsigned flags,
			struct ext4fs_io **out);

/*
 * Record that the file system starts fs_offset bytes into its device (the
 * offset inner was opened with), so that e2undo writes the blocks back
 * there.  Written with the next header.  Errors: EXT4FS_E_INVALID_ARG when
 * undo is not a channel made by ext4fs_io_undo_wrap().
 */
int ext4fs_io_undo_set_fs_offset(struct ext4fs_io *undo, uint64_t fs_offset);

/* ext4fs_undo_apply() flags. */
#define EXT4FS_UNDO_APPLY_FORCE   0x1   /* apply even when the superblock does not match (e2undo -f) */
#define EXT4FS_UNDO_APPLY_DRY_RUN 0x2   /* check everything, write nothing (e2undo -n) */

/* What ext4fs_undo_apply() found; filled as far as the file was read. */
struct ext4fs_undo_result {
	uint64_t keys;            /* keys in the file */
	uint64_t bytes;           /* bytes of old contents written back (or, in a dry run, to write) */
	uint64_t fs_offset;       /* the recorded offset of the file system, 0 when none */
	uint32_t block_size;      /* the undo file's block size */
	uint32_t fs_block_size;   /* the file system's block size the keys count in */
	int finished;             /* the header says the change was finished (closed or flushed) */
	int marked_unclean;       /* the target's superblock state was set "not clean" */
};

/*
 * Roll the target file system back with the undo file at undo_path.  target
 * is a writable channel starting at the file system (for an undo file with
 * an fs_offset, open the device at result->fs_offset, which a dry run
 * reports).  Everything is checked before the first byte is written: the
 * header's magic, checksum, block sizes and feature words, that the target's
 * superblock is byte for byte the copy in the undo file and the copy's
 * checksum (skipped with EXT4FS_UNDO_APPLY_FORCE), every key block's magic
 * and checksum, every key's size (1 byte to 512 blocks), that its data lies
 * inside the undo file and its destination inside target, and every block's
 * checksum.  Then the old contents are written back and target flushed.
 * Like e2undo, when the undo file is not marked finished or the apply was
 * forced, the target's primary superblock is then marked not clean (its
 * checksum updated) so that fsck checks it; result->marked_unclean says so.
 *
 * result may be NULL.  Errors: -errno from the undo file, EXT4FS_E_UNDO_CORRUPT
 * (not an undo file, or a bad checksum, size or location; nothing was
 * written), EXT4FS_E_UNSUPP_FEATURE (feature words this library does not
 * know), EXT4FS_E_UNDO_WRONG_FS (the target's superblock is not the one
 * the undo file was made against), EXT4FS_E_OUT_OF_IMAGE or read errors from
 * target, write errors (the target is then partly rolled back),
 * EXT4FS_E_NO_MEMORY.
 */
int ext4fs_undo_apply(const char *undo_path, struct ext4fs_io *target, unsigned flags,
		      struct ext4fs_undo_result *result);

#ifdef __cplusplus
}
#endif
#endif
