/* io.c - file/device and memory channels. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_SYS_IOCTL_H
#include <sys/ioctl.h>
#endif
#ifdef HAVE_LINUX_FS_H
#include <linux/fs.h>
#endif
#include "ext4fs/errors.h"
#include "ext4fs/io.h"
#include "io_internal.h"

struct unix_channel {
	int fd;
	uint64_t base;      /* byte offset of the file system within the file */
	int writable;
};

struct memory_channel {
	unsigned char *buf;
	int writable;
};

int ext4fs__pread_full(int fd, void *buf, size_t len, uint64_t offset)
{
	unsigned char *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)offset);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return EXT4FS_E_SHORT_READ;
		p += n;
		offset += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int ext4fs__pwrite_full(int fd, const void *buf, size_t len, uint64_t offset)
{
	const unsigned char *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)offset);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		offset += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int unix_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len)
{
	struct unix_channel *uc = io->priv;

	return ext4fs__pread_full(uc->fd, buf, len, uc->base + offset);
}

static int unix_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len)
{
	struct unix_channel *uc = io->priv;

	if (!uc->writable)
		return EXT4FS_E_READ_ONLY;
	return ext4fs__pwrite_full(uc->fd, buf, len, uc->base + offset);
}

static int unix_flush(struct ext4fs_io *io)
{
	struct unix_channel *uc = io->priv;

	if (uc->writable && fsync(uc->fd) < 0)
		return -errno;
	return 0;
}

static void unix_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
#ifdef HAVE_POSIX_FADVISE
	struct unix_channel *uc = io->priv;
	(void)posix_fadvise(uc->fd, (off_t)(uc->base + offset), (off_t)len, POSIX_FADV_WILLNEED);
#endif
}

static void unix_close(struct ext4fs_io *io)
{
	struct unix_channel *uc = io->priv;

	close(uc->fd);
	free(uc);
}

static int unix_discard(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct unix_channel *uc = io->priv;

	if (!uc->writable)
		return EXT4FS_E_READ_ONLY;
	if (io->is_regular_file) {
#if defined(FALLOC_FL_PUNCH_HOLE) && defined(FALLOC_FL_KEEP_SIZE)
		if (fallocate(uc->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)(uc->base + offset), (off_t)len) < 0)
			return -errno;
		return 0;
#else
		return -EOPNOTSUPP;
#endif
	}
#ifdef BLKDISCARD
	uint64_t range[2] = { uc->base + offset, len };
	if (ioctl(uc->fd, BLKDISCARD, range) < 0)
		return -errno;
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

static int unix_zeroout(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct unix_channel *uc = io->priv;

	if (io->is_regular_file)
		return unix_discard(io, offset, len);
#ifdef BLKZEROOUT
	uint64_t range[2] = { uc->base + offset, len };
	if (ioctl(uc->fd, BLKZEROOUT, range) < 0)
		return -errno;
	return 0;
#else
	(void)uc;
	return -EOPNOTSUPP;
#endif
}

static const struct ext4fs_io_ops unix_ops = {
	unix_read, unix_write, unix_flush, unix_readahead, unix_close, unix_discard, unix_zeroout,
};

static int device_size(int fd, const struct stat *st, uint64_t *size)
{
	if (S_ISREG(st->st_mode)) {
		*size = (uint64_t)st->st_size;
		return 0;
	}
#ifdef BLKGETSIZE64
	if (S_ISBLK(st->st_mode)) {
		uint64_t bytes;
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			return -errno;
		*size = bytes;
		return 0;
	}
#endif
	return -EINVAL;
}

static struct ext4fs_io *io_new(const struct ext4fs_io_ops *ops, void *priv, uint64_t size,
				const char *name)
{
	struct ext4fs_io *io = calloc(1, sizeof(*io));

	if (!io)
		return NULL;
	io->name = strdup(name);
	if (!io->name) {
		free(io);
		return NULL;
	}
	io->ops = ops;
	io->priv = priv;
	io->size = size;
	return io;
}

struct ext4fs_io *ext4fs__io_wrapper(const struct ext4fs_io_ops *ops, void *priv, const struct ext4fs_io *inner)
{
	struct ext4fs_io *io = io_new(ops, priv, inner->size, inner->name ? inner->name : "");

	if (io) {
		io->discard_zeroes = inner->discard_zeroes;
		io->is_regular_file = inner->is_regular_file;
	}
	return io;
}

int ext4fs_io_open_file(const char *path, unsigned flags, uint64_t offset,
			struct ext4fs_io **out)
{
	struct unix_channel *uc = NULL;
	struct stat st;
	uint64_t size = 0;
	int fd, oflags, err;

	*out = NULL;
	oflags = (flags & EXT4FS_IO_RDWR) ? O_RDWR : O_RDONLY;
	fd = open(path, oflags | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	if ((flags & EXT4FS_IO_EXCL) && S_ISBLK(st.st_mode)) {
		/* Reopen exclusively so a mounted or busy device is refused. */
		int xfd = open(path, oflags | O_CLOEXEC | O_EXCL);
		if (xfd < 0) {
			err = -errno;
			goto out_close;
		}
		close(fd);
		fd = xfd;
	}
	err = device_size(fd, &st, &size);
	if (err)
		goto out_close;
	if (offset > size) {
		err = EXT4FS_E_INVALID_ARG;
		goto out_close;
	}
	uc = calloc(1, sizeof(*uc));
	if (!uc) {
		err = EXT4FS_E_NO_MEMORY;
		goto out_close;
	}
	uc->fd = fd;
	uc->base = offset;
	uc->writable = (flags & EXT4FS_IO_RDWR) != 0;
	*out = io_new(&unix_ops, uc, size - offset, path);
	if (!*out) {
		free(uc);
		err = EXT4FS_E_NO_MEMORY;
		goto out_close;
	}
	(*out)->is_regular_file = S_ISREG(st.st_mode);
	(*out)->discard_zeroes = S_ISREG(st.st_mode);
	return 0;

out_close:
	close(fd);
	return err;
}

static int memory_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len)
{
	struct memory_channel *mc = io->priv;

	memcpy(buf, mc->buf + offset, len);
	return 0;
}

static int memory_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len)
{
	struct memory_channel *mc = io->priv;

	if (!mc->writable)
		return EXT4FS_E_READ_ONLY;
	memcpy(mc->buf + offset, buf, len);
	return 0;
}

static int memory_flush(struct ext4fs_io *io)
{
	return 0;
}

static void memory_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
}

static void memory_close(struct ext4fs_io *io)
{
	free(io->priv);
}

static int memory_discard(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct memory_channel *mc = io->priv;

	if (!mc->writable)
		return EXT4FS_E_READ_ONLY;
	memset(mc->buf + offset, 0, len);
	return 0;
}

static const struct ext4fs_io_ops memory_ops = {
	memory_read, memory_write, memory_flush, memory_readahead, memory_close,
	memory_discard, memory_discard,
};

int ext4fs_io_open_memory(void *buf, size_t size, int writable, struct ext4fs_io **out)
{
	struct memory_channel *mc = calloc(1, sizeof(*mc));

	*out = NULL;
	if (!mc)
		return EXT4FS_E_NO_MEMORY;
	mc->buf = buf;
	mc->writable = writable;
	*out = io_new(&memory_ops, mc, size, "(memory)");
	if (!*out) {
		free(mc);
		return EXT4FS_E_NO_MEMORY;
	}
	(*out)->discard_zeroes = 1;
	return 0;
}

static int in_range(const struct ext4fs_io *io, uint64_t offset, size_t len)
{
	return offset <= io->size && len <= io->size - offset;
}

int ext4fs_io_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len)
{
	int err;

	if (!in_range(io, offset, len))
		return EXT4FS_E_OUT_OF_IMAGE;
	err = io->ops->read(io, offset, buf, len);
	if (!err) {
		io->stats.reads++;
		io->stats.bytes_read += len;
	}
	return err;
}

int ext4fs_io_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len)
{
	int err;

	if (!in_range(io, offset, len))
		return EXT4FS_E_OUT_OF_IMAGE;
	err = io->ops->write(io, offset, buf, len);
	if (!err) {
		io->stats.writes++;
		io->stats.bytes_written += len;
	}
	return err;
}

int ext4fs_io_flush(struct ext4fs_io *io)
{
	return io->ops->flush(io);
}

void ext4fs_io_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	if (offset >= io->size)
		return;
	if (len > io->size - offset)
		len = io->size - offset;
	io->ops->readahead(io, offset, len);
}

void ext4fs_io_close(struct ext4fs_io *io)
{
	if (!io)
		return;
	io->ops->close(io);
	free(io->name);
	free(io);
}

int ext4fs_io_discard(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	if (!in_range(io, offset, len))
		return EXT4FS_E_OUT_OF_IMAGE;
	if (!io->ops->discard)
		return -EOPNOTSUPP;
	return io->ops->discard(io, offset, len);
}

int ext4fs_io_zeroout(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	static const unsigned char zeros[65536];
	int err;

	if (!in_range(io, offset, len))
		return EXT4FS_E_OUT_OF_IMAGE;
	if (io->ops->zeroout && io->ops->zeroout(io, offset, len) == 0)
		return 0;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		if ((err = ext4fs_io_write(io, offset, zeros, n)))
			return err;
		offset += n;
		len -= n;
	}
	return 0;
}
