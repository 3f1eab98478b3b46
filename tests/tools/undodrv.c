/*
 * undodrv.c - change a file system through an undo file, and apply one.
 *
 *   undodrv change [-o OFFSET] [-w | -a] [-p PREFIX] IMAGE UNDO_FILE
 *     Opens IMAGE (the file system OFFSET bytes in) through
 *     ext4fs_io_undo_wrap() and, with the library's calls, makes
 *     directories, files of several sizes (one sparse), a symlink and a
 *     hard link, then removes a file and a directory, and closes.  When the
 *     image holds a file /pre (mke2fs -d), one byte of every other block of
 *     it is rewritten first, so the undo file has many separate keys and
 *     several key blocks.  -w replaces an existing UNDO_FILE, -a carries on
 *     with it (EXT4FS_UNDO_APPEND); -p puts PREFIX before the names made in
 *     the root directory, so that a second change can follow the first.
 *
 *   undodrv apply [-f] [-n] [-o OFFSET] UNDO_FILE IMAGE
 *     ext4fs_undo_apply() onto IMAGE at OFFSET (-f: despite a superblock
 *     that does not match; -n: check only) and prints what it found:
 *     "keys K bytes B finished F unclean U fs_offset O".
 *
 * Exit status: 0 done, 1 the library refused (the message says why), 2 bad
 * usage.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/dir.h"
#include "ext4fs/file.h"
#include "ext4fs/fs.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/undo.h"

static const char *step = "";
static const char *prefix = "";

/* prefix + name, in a static buffer (one at a time). */
static const char *top(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	return buf;
}

static int failed(int err)
{
	fprintf(stderr, "undodrv: %s: %s\n", step, ext4fs_strerror(err));
	return 1;
}

static int write_file(struct ext4fs_fs *fs, uint32_t dir, const char *name, uint64_t at, size_t len,
		      uint32_t *out)
{
	struct ext4fs_new_attrs reg = { .mode = 0100644, .uid = 1000, .gid = 1000 };
	struct ext4fs_inode in;
	unsigned char *data = malloc(len ? len : 1);
	uint32_t ino;
	int err;

	if (!data)
		return EXT4FS_E_NO_MEMORY;
	for (size_t i = 0; i < len; i++)
		data[i] = (unsigned char)(i * 31 + len);
	step = name;
	if (!(err = ext4fs_mknod(fs, dir, name, &reg, &ino)) && !(err = ext4fs_inode_read(fs, ino, &in)))
		err = ext4fs_file_write(fs, ino, &in, at, data, len, 0);
	free(data);
	if (out)
		*out = ino;
	return err;
}

/* One byte of every other block of /pre, when there is one. */
static int scatter(struct ext4fs_fs *fs)
{
	uint32_t bs = ext4fs_geom(fs)->block_size, ino;
	struct ext4fs_inode in;
	unsigned char b = 0x5a;
	uint64_t off;
	int err;

	step = "pre";
	err = ext4fs_dir_lookup(fs, 2, "pre", 3, &ino);
	if (err == EXT4FS_E_NOT_FOUND)
		return 0;
	if (err || (err = ext4fs_inode_read(fs, ino, &in)))
		return err;
	for (off = 0; off < ext4fs_inode_size(&in); off += 2 * (uint64_t)bs)
		if ((err = ext4fs_file_write(fs, ino, &in, off + 7, &b, 1, 0)))
			return err;
	return 0;
}

static int change(const char *image, const char *undo_path, uint64_t offset, unsigned flags)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW };
	struct ext4fs_new_attrs dir = { .mode = 040755 }, lnk = { .mode = 0120777 };
	struct ext4fs_io *inner, *undo;
	struct ext4fs_fs *fs;
	uint32_t d1, d2, gone, ino;
	char msg[256];
	int err;

	step = "open";
	if ((err = ext4fs_io_open_file(image, EXT4FS_IO_RDWR, offset, &inner)))
		return failed(err);
	step = "undo file";
	if ((err = ext4fs_io_undo_wrap(inner, undo_path, flags, &undo))) {
		ext4fs_io_close(inner);
		return failed(err);
	}
	if ((err = ext4fs_io_undo_set_fs_offset(undo, offset))) {
		ext4fs_io_close(undo);
		return failed(err);
	}
	step = "open file system";
	if ((err = ext4fs_open_io(undo, &opts, &fs, msg, sizeof(msg)))) {
		fprintf(stderr, "undodrv: %s\n", msg);
		return 1;
	}
	if ((err = scatter(fs)))
		goto out;
	step = "mkdir";
	if ((err = ext4fs_mkdir(fs, 2, top("d1"), &dir, &d1)) || (err = ext4fs_mkdir(fs, d1, "d2", &dir, &d2)) ||
	    (err = ext4fs_mkdir(fs, 2, top("gone-dir"), &dir, &gone)))
		goto out;
	if ((err = write_file(fs, 2, top("small"), 0, 100, &ino)) ||
	    (err = write_file(fs, d1, "big", 0, 300000, NULL)) ||
	    (err = write_file(fs, d2, "sparse", 1 << 20, 5000, NULL)) ||
	    (err = write_file(fs, 2, top("gone"), 0, 70000, NULL)))
		goto out;
	step = "many";
	for (int i = 0; i < 40 && !err; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%02d", i);
		err = write_file(fs, d2, name, 0, (size_t)i * 700, NULL);
	}
	if (err)
		goto out;
	step = "link";
	if ((err = ext4fs_link(fs, d2, "hard", ino)))
		goto out;
	step = "symlink";
	if ((err = ext4fs_symlink(fs, d1, "link", "../small", &lnk, &ino)))
		goto out;
	step = "unlink";
	if ((err = ext4fs_unlink(fs, 2, top("gone"))))
		goto out;
	step = "rmdir";
	if ((err = ext4fs_rmdir(fs, 2, top("gone-dir"))))
		goto out;
	step = "flush";
	err = ext4fs_flush(fs);
out:
	ext4fs_close(fs);
	return err ? failed(err) : 0;
}

static int apply(const char *undo_path, const char *image, uint64_t offset, unsigned flags)
{
	struct ext4fs_undo_result res;
	struct ext4fs_io *target;
	int err;

	step = "open";
	if ((err = ext4fs_io_open_file(image, (flags & EXT4FS_UNDO_APPLY_DRY_RUN) ? 0 : EXT4FS_IO_RDWR,
				       offset, &target)))
		return failed(err);
	step = "apply";
	err = ext4fs_undo_apply(undo_path, target, flags, &res);
	ext4fs_io_close(target);
	if (err)
		return failed(err);
	printf("keys %llu bytes %llu finished %d unclean %d fs_offset %llu\n",
	       (unsigned long long)res.keys, (unsigned long long)res.bytes, res.finished,
	       res.marked_unclean, (unsigned long long)res.fs_offset);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: undodrv change [-o OFFSET] [-w | -a] [-p PREFIX] IMAGE UNDO_FILE\n"
		"       undodrv apply [-f] [-n] [-o OFFSET] UNDO_FILE IMAGE\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned wrap_flags = 0, apply_flags = 0;
	uint64_t offset = 0;
	int c;

	if (argc < 2)
		return usage();
	optind = 2;
	while ((c = getopt(argc, argv, "afno:p:w")) != -1) {
		switch (c) {
		case 'a':
			wrap_flags |= EXT4FS_UNDO_APPEND;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'f':
			apply_flags |= EXT4FS_UNDO_APPLY_FORCE;
			break;
		case 'n':
			apply_flags |= EXT4FS_UNDO_APPLY_DRY_RUN;
			break;
		case 'o':
			offset = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			wrap_flags |= EXT4FS_UNDO_OVERWRITE;
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2)
		return usage();
	if (strcmp(argv[1], "change") == 0)
		return change(argv[optind], argv[optind + 1], offset, wrap_flags);
	if (strcmp(argv[1], "apply") == 0)
		return apply(argv[optind], argv[optind + 1], offset, apply_flags);
	return usage();
}
