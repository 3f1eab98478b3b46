/*
 * io.h - I/O channels: the only layer that touches a file descriptor.
 *
 * Layer 1.  A channel reads and writes bytes at 64-bit offsets of an image
 * file or block device.  Every read is checked against the channel's size
 * first, so a block number taken from a corrupt image can never read beyond
 * the end of the image: such a read fails with EXT4FS_E_OUT_OF_IMAGE and
 * touches nothing.
 *
 * The operations live behind a table (struct ext4fs_io_ops) so tests can
 * supply other channels (fault-injecting, counting, in-memory) without the
 * layers above knowing.  A channel is used by one thread at a time; separate
 * channels are independent.
 */
#ifndef EXT4FS_IO_H
#define EXT4FS_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ext4fs_io;

/* Counters every channel keeps; read by benchmarks and e4fsck -tt. */
struct ext4fs_io_stats {
	uint64_t reads;
	uint64_t bytes_read;
	uint64_t writes;
	uint64_t bytes_written;
};

struct ext4fs_io_ops {
	/* Read exactly len bytes at offset; offset+len is already within size. */
	int (*read)(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len);
	/* Write exactly len bytes at offset. */
	int (*write)(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len);
	/* Make written data durable. */
	int (*flush)(struct ext4fs_io *io);
	/* Hint that [offset, offset+len) will be read soon; may do nothing. */
	void (*readahead)(struct ext4fs_io *io, uint64_t offset, uint64_t len);
	/* Release the channel's private state (not the struct ext4fs_io). */
	void (*close)(struct ext4fs_io *io);
	/* Tell the device [offset, offset+len) is unused (TRIM; a hole in a file).  May be NULL. */
	int (*discard)(struct ext4fs_io *io, uint64_t offset, uint64_t len);
	/* Make [offset, offset+len) read as zeros without sending the zeros when the device can.  May be NULL. */
	int (*zeroout)(struct ext4fs_io *io, uint64_t offset, uint64_t len);
};

struct ext4fs_io {
	const struct ext4fs_io_ops *ops;
	void *priv;
	uint64_t size;             /* bytes addressable through this channel */
	struct ext4fs_io_stats stats;
	char *name;                /* path, for messages; owned by the channel */
	int discard_zeroes;        /* a successful discard leaves zeros (files, memory) */
	int is_regular_file;
};

#define EXT4FS_IO_RDWR 0x1     /* open for writing as well */
#define EXT4FS_IO_EXCL 0x2     /* O_EXCL on block devices */

/*
 * Open an image file or block device.  offset is where the file system
 * starts within it (mke2fs -E offset=).  On success *out is a new channel the
 * caller frees with ext4fs_io_close().  Errors: -errno from open/fstat, or
 * EXT4FS_E_INVALID_ARG if offset is beyond the end.  On error *out is NULL.
 */
int ext4fs_io_open_file(const char *path, unsigned flags, uint64_t offset,
			struct ext4fs_io **out);

/*
 * Make a channel over a caller-owned memory buffer (for fuzzers and unit
 * tests).  The buffer must outlive the channel; writes go into it when
 * writable is nonzero.  Errors: EXT4FS_E_NO_MEMORY.
 */
int ext4fs_io_open_memory(void *buf, size_t size, int writable, struct ext4fs_io **out);

/* Read len bytes at offset.  EXT4FS_E_OUT_OF_IMAGE beyond the end, -errno or EXT4FS_E_SHORT_READ on I/O failure. */
int ext4fs_io_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len);

/* Write len bytes at offset.  EXT4FS_E_OUT_OF_IMAGE beyond the end, EXT4FS_E_READ_ONLY on a read-only channel. */
int ext4fs_io_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len);

/*
 * Discard [offset, offset+len): punch a hole in a regular file, BLKDISCARD on
 * a block device.  -EOPNOTSUPP when the channel cannot; other -errno on
 * failure; EXT4FS_E_OUT_OF_IMAGE beyond the end; EXT4FS_E_READ_ONLY.
 */
int ext4fs_io_discard(struct ext4fs_io *io, uint64_t offset, uint64_t len);

/*
 * Make [offset, offset+len) read as zeros: a hole in a regular file,
 * BLKZEROOUT on a block device, and plain writes of zeros where neither
 * works.  Errors as ext4fs_io_write().
 */
int ext4fs_io_zeroout(struct ext4fs_io *io, uint64_t offset, uint64_t len);

/* Flush; -errno on failure. */
int ext4fs_io_flush(struct ext4fs_io *io);

/* Readahead hint; never fails. */
void ext4fs_io_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len);

/* Close and free the channel; NULL is allowed. */
void ext4fs_io_close(struct ext4fs_io *io);

#ifdef __cplusplus
}
#endif
#endif
