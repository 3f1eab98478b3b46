/*
 * txn-bench.c - one random operation sequence through libext4fs, written
 * through (as debug4fs and mke4fs write) or in journalled mode (txn.h), for
 * run-txn.sh to time side by side.
 *
 *   ext4fs-txn-bench [-j] [-c N] [-o OPS] [-s SEED] IMAGE
 *     -j      journalled mode, a commit every N operations (-c, default 16)
 *     -o OPS  operations (default 4000): create a file with 1-64 KiB of data,
 *             append, overwrite in place, truncate, unlink, mkdir, rename
 *     -s SEED random seed (default 1): the same seed, the same sequence
 *
 * Prints one line of what reached the device: bytes written in all, of
 * which file data (whole blocks, as the library writes them), and the rest
 * (metadata: for journalled mode the log and the checkpoints together).  The image must be an ext4 file system with a
 * journal (mke2fs -t ext4).
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/txn.h"

#define DIRS_MAX 64
#define FILES_MAX 4096
#define DATA_MAX (64 * 1024)

static struct ext4fs_fs *fs;
static uint64_t rng = 1;
static uint64_t data_bytes;        /* file data reaching the device, in whole blocks */
static uint32_t bs;

struct file { uint32_t dir; char name[16]; uint32_t ino; uint64_t size; };
static struct file files[FILES_MAX];
static size_t nfiles;
static uint32_t dirs[DIRS_MAX];
static size_t ndirs;
static unsigned names;

static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return n ? (uint32_t)((rng >> 33) % n) : 0;
}

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "ext4fs-txn-bench: %s: %s (%s)\n", what, ext4fs_strerror(err), ext4fs_errmsg(fs));
		exit(1);
	}
}

static int write_data(struct file *f, uint64_t off, size_t len)
{
	static unsigned char buf[DATA_MAX];
	struct ext4fs_inode in;
	int err;

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(rng >> (i % 56));
	check(ext4fs_inode_read(fs, f->ino, &in), "reading an inode");
	err = ext4fs_file_write(fs, f->ino, &in, off, buf, len, 0);
	if (err == EXT4FS_E_NO_SPACE)
		return err;
	check(err, "writing");
	/* The library writes whole blocks: count what reaches the device. */
	data_bytes += ((off + len + bs - 1) / bs - off / bs) * bs;
	if (off + len > f->size)
		f->size = off + len;
	return 0;
}

static void op_create(void)
{
	static const struct ext4fs_new_attrs attrs = { .mode = EXT4FS_S_IFREG | 0644 };
	struct file *f;

	if (nfiles == FILES_MAX)
		return;
	f = &files[nfiles];
	f->dir = dirs[rnd((uint32_t)ndirs)];
	snprintf(f->name, sizeof(f->name), "f%u", names++);
	f->size = 0;
	check(ext4fs_mknod(fs, f->dir, f->name, &attrs, &f->ino), "creating a file");
	nfiles++;
	(void)write_data(f, 0, 1 + rnd(DATA_MAX));
}

static void op_unlink(size_t i)
{
	check(ext4fs_unlink(fs, files[i].dir, files[i].name), "unlinking");
	files[i] = files[--nfiles];
}

static void op_truncate(struct file *f)
{
	struct ext4fs_inode in;

	uint64_t old = f->size;

	f->size = rnd((uint32_t)f->size + 1);
	/* A cut inside a block zeroes the rest of that block. */
	if (f->size % bs && f->size < old)
		data_bytes += bs;
	check(ext4fs_inode_read(fs, f->ino, &in), "reading an inode");
	check(ext4fs_file_truncate(fs, f->ino, &in, f->size), "truncating");
}

static void op_mkdir(void)
{
	static const struct ext4fs_new_attrs attrs = { .mode = EXT4FS_S_IFDIR | 0755 };
	char name[16];

	if (ndirs == DIRS_MAX)
		return;
	snprintf(name, sizeof(name), "d%u", names++);
	check(ext4fs_mkdir(fs, dirs[rnd((uint32_t)ndirs)], name, &attrs, &dirs[ndirs]), "mkdir");
	ndirs++;
}

static void op_rename(struct file *f)
{
	uint32_t to = dirs[rnd((uint32_t)ndirs)];
	char name[16];

	snprintf(name, sizeof(name), "r%u", names++);
	check(ext4fs_rename(fs, f->dir, f->name, to, name), "renaming");
	f->dir = to;
	memcpy(f->name, name, sizeof(name));
}

static void one_op(void)
{
	uint32_t kind = rnd(16);
	struct file *f;

	if (nfiles == 0 || kind < 5) {
		op_create();
		return;
	}
	size_t i = rnd((uint32_t)nfiles);
	f = &files[i];
	switch (kind) {
	case 5: case 6: (void)write_data(f, f->size, 1 + rnd(16384)); break;
	case 7: case 8: (void)write_data(f, rnd((uint32_t)f->size + 1), 1 + rnd(8192)); break;
	case 9: op_truncate(f); break;
	case 10: case 11: case 12: op_unlink(i); break;
	case 13: op_mkdir(); break;
	default: op_rename(f); break;
	}
}

int main(int argc, char **argv)
{
	struct ext4fs_open_opts o = { .flags = EXT4FS_OPEN_RW };
	unsigned ops = 4000, commit_every = 16;
	int journalled = 0, c;
	struct ext4fs_io *io;
	char msg[256];

	while ((c = getopt(argc, argv, "jc:o:s:")) != -1) {
		switch (c) {
		case 'j': journalled = 1; break;
		case 'c': commit_every = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'o': ops = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': rng = strtoull(optarg, NULL, 0) * 0x9E3779B97F4A7C15ULL + 1; break;
		default:
			fprintf(stderr, "usage: ext4fs-txn-bench [-j] [-c N] [-o OPS] [-s SEED] IMAGE\n");
			return 2;
		}
	}
	if (optind != argc - 1 || commit_every == 0) {
		fprintf(stderr, "usage: ext4fs-txn-bench [-j] [-c N] [-o OPS] [-s SEED] IMAGE\n");
		return 2;
	}
	if (ext4fs_io_open_file(argv[optind], EXT4FS_IO_RDWR, 0, &io)) {
		perror(argv[optind]);
		return 1;
	}
	/* io stays ours to read: under journalled mode it is the channel below the staging one. */
	if (ext4fs_open_io(io, &o, &fs, msg, sizeof(msg))) {
		fprintf(stderr, "ext4fs-txn-bench: %s\n", msg);
		return 1;
	}
	dirs[ndirs++] = EXT4FS_ROOT_INO;
	bs = ext4fs_geom(fs)->block_size;
	uint64_t written0 = io->stats.bytes_written;
	if (journalled)
		check(ext4fs_txn_start(fs), "entering journalled mode");
	for (unsigned i = 1; i <= ops; i++) {
		one_op();
		if (journalled && i % commit_every == 0)
			check(ext4fs_txn_commit(fs), "committing");
	}
	if (journalled)
		check(ext4fs_txn_stop(fs), "leaving journalled mode");
	check(ext4fs_flush(fs), "flushing");
	uint64_t written = io->stats.bytes_written - written0;
	printf("%s: %u operations, %" PRIu64 " bytes written: %" PRIu64 " file data, %" PRIu64 " metadata\n",
	       journalled ? "journalled" : "write-through", ops, written, data_bytes, written - data_bytes);
	check(ext4fs_close_flush(fs), "closing");
	return 0;
}
