/*
 * io_internal.h - whole-buffer reads and writes on a file descriptor, shared
 * by the file channel (io.c) and the undo file (undo.c); making a channel
 * that wraps another.
 */
#ifndef EXT4FS_IO_INTERNAL_H
#define EXT4FS_IO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read exactly len bytes at offset, retrying short reads and EINTR.  0,
 * -errno, or EXT4FS_E_SHORT_READ when the file ends first.
 */
int ext4fs__pread_full(int fd, void *buf, size_t len, uint64_t offset);

/* Write exactly len bytes at offset, retrying short writes and EINTR.  0 or -errno. */
int ext4fs__pwrite_full(int fd, const void *buf, size_t len, uint64_t offset);

struct ext4fs_io;
struct ext4fs_io_ops;

/*
 * A new channel over inner for a wrapping channel (staging, faults): its
 * ops and priv, inner's size, name and properties, statistics at zero.
 * NULL when out of memory.  Freed by ext4fs_io_close(), which calls
 * ops->close first.
 */
struct ext4fs_io *ext4fs__io_wrapper(const struct ext4fs_io_ops *ops, void *priv, const struct ext4fs_io *inner);

#endif
