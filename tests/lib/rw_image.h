/*
 * rw_image.h - writable in-memory images for the write-path unit tests,
 * made by the library's own mkfs engine, and e2fsck as the judge.
 *
 * rw_image_open() plans a file system (mke2fs's ext4 defaults, adjusted by
 * a tweak function), writes it into a fresh memory buffer and opens it
 * with EXT4FS_OPEN_RW and strict checksums.  rw_image_fsck() flushes the
 * handle, writes the buffer to a temporary file and runs the real
 * `e2fsck -fn` on it: it returns e2fsck's exit status (0 = clean), or -1
 * when e2fsck is not installed (the caller then skips that check);
 * rw_image_assert_clean() is the usual way to judge with it.
 *
 * The rw_tweak_* functions are the tweaks several test programs share.
 */
#ifndef RW_IMAGE_H
#define RW_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/mkfs.h"

struct rw_image {
	unsigned char *buf;
	size_t size;
	struct ext4fs_fs *fs;
};

/*
 * Make and open an image of `blocks` blocks of `bs` bytes; tweak (may be
 * NULL) edits the parameters first (features, inode ratio...).  The time
 * is fixed so runs are reproducible.  Fails the test on any error.
 */
void rw_image_open(struct rw_image *img, uint64_t blocks, uint32_t bs,
		   void (*tweak)(struct ext4fs_mkfs_params *));

/* Close the handle (flushing) and reopen the same bytes, as a later session would. */
void rw_image_reopen(struct rw_image *img);

/* Open the buffer again after the caller closed the handle itself (img->fs NULL). */
void rw_image_reopen_raw(struct rw_image *img);

/* Flush and run e2fsck -fn; its exit status, or -1 without e2fsck.  Prints its output on failure. */
int rw_image_fsck(struct rw_image *img);

/* As rw_image_fsck(), and e2fsck's output is kept in out (size bytes, NUL-terminated, cut short if longer). */
int rw_image_fsck_output(struct rw_image *img, char *out, size_t size);

/* e2fsck -fn must find nothing: fails the test otherwise, prints SKIP when e2fsck is missing. */
void rw_image_assert_clean(struct rw_image *img);

/* Close the handle and free the buffer. */
void rw_image_close(struct rw_image *img);

/* 1 KiB blocks. */
void rw_tweak_1k(struct ext4fs_mkfs_params *p);

/* metadata_csum replaced by the older group descriptor checksums (uninit_bg). */
void rw_tweak_gdt_csum(struct ext4fs_mkfs_params *p);

/* No checksums at all: neither metadata_csum nor uninit_bg. */
void rw_tweak_no_csum(struct ext4fs_mkfs_params *p);

/* 1 KiB blocks with uninit_bg instead of metadata_csum. */
void rw_tweak_1k_gdt_csum(struct ext4fs_mkfs_params *p);

/* ext3 style at 1 KiB: a journal but block maps, no flex_bg, no checksums. */
void rw_tweak_ext3ish_1k(struct ext4fs_mkfs_params *p);

/* rw_tweak_ext3ish_1k with 4 KiB blocks. */
void rw_tweak_ext3ish_4k(struct ext4fs_mkfs_params *p);

#endif
