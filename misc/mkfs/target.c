/*
 * target.c - the device or image file mke4fs formats.
 *
 * Everything here runs before the first write, except mk_target_zap()
 * (called with the channel open, just before the library writes) and the
 * creation of a missing regular file, which main undoes if a later check
 * fails.  Safety rules:
 *  - a mounted target is always refused, even with -F (mke2fs lets -F -F
 *    through); for a regular file that means a mounted loop device backed
 *    by it;
 *  - a target holding a file system or a partition table is named, and is
 *    only overwritten with -F or after "y" on a terminal.
 */
#include "config.h"
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#ifdef HAVE_LINUX_FS_H
#include <linux/fs.h>
#endif
#include "ext4fs/io.h"
#include "ext4fs/mountcheck.h"
#include "ext4fs/super.h"
#include "mke4fs.h"
#include "support/prompt.h"

/* ------------------------------------------------------------------ size and geometry */

static void read_topology(const char *path, struct mk_target *t)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	blkid_topology tp;

	if (!pr)
		return;
	tp = blkid_probe_get_topology(pr);
	if (tp) {
		t->min_io = blkid_topology_get_minimum_io_size(tp);
		t->opt_io = blkid_topology_get_optimal_io_size(tp);
		t->align_offset = blkid_topology_get_alignment_offset(tp);
		t->topology_ok = 1;
	}
	blkid_free_probe(pr);
}

int mk_target_stat(const char *path, int size_given, struct mk_target *t)
{
	struct stat st;
	int fd;

	memset(t, 0, sizeof(*t));
	t->path = path;
	if (stat(path, &st) < 0) {
		if (errno == ENOENT && !size_given) {
			fprintf(stderr, "The file %s does not exist and no size was specified.\n", path);
			return -1;
		}
		if (errno == ENOENT) {
			t->is_reg = 1;           /* to be created */
			t->topology_ok = 1;
			return 0;
		}
		fprintf(stderr, "Could not open %s: %s\n", path, strerror(errno));
		return -1;
	}
	t->exists = 1;
	if (S_ISREG(st.st_mode)) {
		t->is_reg = 1;
		t->size = (uint64_t)st.st_size;
		t->topology_ok = 1;
		return 0;
	}
	if (!S_ISBLK(st.st_mode)) {
		fprintf(stderr, "%s: %s is neither a block device nor a regular file\n", prog_name, path);
		return -1;
	}
	t->is_dev = 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "Could not open %s: %s\n", path, strerror(errno));
		return -1;
	}
#ifdef BLKGETSIZE64
	if (ioctl(fd, BLKGETSIZE64, &t->size) < 0) {
		fprintf(stderr, "%s: %s while trying to determine filesystem size\n", prog_name,
			strerror(errno));
		close(fd);
		return -1;
	}
#endif
#ifdef BLKSSZGET
	{
		int s = 0;
		if (ioctl(fd, BLKSSZGET, &s) == 0 && s > 0)
			t->lsector = (uint32_t)s;
	}
#endif
#ifdef BLKPBSZGET
	{
		unsigned int s = 0;
		if (ioctl(fd, BLKPBSZGET, &s) == 0)
			t->psector = s;
	}
#endif
	close(fd);
	read_topology(path, t);
	return 0;
}

/* ------------------------------------------------------------------ existing contents */

/* "\tcreated on <ctime>" and friends for an ext2/3/4 superblock at offset. */
static void print_ext_info(FILE *out, int fd, uint64_t offset)
{
	unsigned char raw[EXT4FS_SUPER_SIZE];
	struct ext4fs_super sb;
	time_t tm;

	if (pread(fd, raw, sizeof(raw), (off_t)(offset + EXT4FS_SUPER_OFFSET)) != (ssize_t)sizeof(raw))
		return;
	ext4fs_super_decode(&sb, raw);
	if (sb.s_magic != EXT4FS_SUPER_MAGIC)
		return;
	if ((tm = (time_t)((uint64_t)sb.s_mtime | (uint64_t)sb.s_mtime_hi << 32))) {
		if (sb.s_last_mounted[0])
			fprintf(out, "\tlast mounted on %.*s on %s", (int)strnlen((const char *)sb.s_last_mounted, 64),
			       (const char *)sb.s_last_mounted, ctime(&tm));
		else
			fprintf(out, "\tlast mounted on %s", ctime(&tm));
	} else if ((tm = (time_t)((uint64_t)sb.s_mkfs_time | (uint64_t)sb.s_mkfs_time_hi << 32))) {
		fprintf(out, "\tcreated on %s", ctime(&tm));
	} else if ((tm = (time_t)((uint64_t)sb.s_wtime | (uint64_t)sb.s_wtime_hi << 32))) {
		fprintf(out, "\tlast modified on %s", ctime(&tm));
	}
}

/* 1 when something was found (and reported), 0 when not, -1 when probing failed. */
static int probe_contents(const char *path, uint64_t offset, FILE *out)
{
	blkid_probe pr = NULL;
	const char *type = NULL, *label = NULL, *pttype = NULL;
	int fd, found = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, fd, (blkid_loff_t)offset, 0)) {
		found = -1;
		goto out;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL);
	blkid_probe_enable_partitions(pr, offset == 0);
	if (blkid_do_safeprobe(pr) == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL))
			type = NULL;
		if (type && blkid_probe_lookup_value(pr, "LABEL", &label, NULL))
			label = NULL;
		if (blkid_probe_lookup_value(pr, "PTTYPE", &pttype, NULL))
			pttype = NULL;
	}
	if (type) {
		if (label)
			fprintf(out, "%s contains a %s file system labelled '%s'\n", path, type, label);
		else
			fprintf(out, "%s contains a %s file system\n", path, type);
		if (!strncmp(type, "ext", 3))
			print_ext_info(out, fd, offset);
		found = 1;
	} else if (pttype) {
		fprintf(stderr, "Found a %s partition table in %s\n", pttype, path);
		found = 1;
	}
out:
	if (pr)
		blkid_free_probe(pr);
	close(fd);
	return found;
}

int mk_target_check_contents(const struct mk_opts *o, const struct mk_target *t)
{
	int tty = isatty(0) && isatty(1);
	uint64_t offset = 0;
	const char *e;

	if (!t->exists || t->size == 0)
		return 0;
	/* With -n or -F nothing is asked: only a person at a terminal is told (as mke2fs). */
	if ((o->noaction || o->force) && !tty)
		return 0;
	/* -E offset= is parsed later; look for it here only to probe the right place. */
	if (o->extended && (e = strstr(o->extended, "offset=")) &&
	    (e == o->extended || e[-1] == ','))
		offset = strtoull(e + 7, NULL, 0);
	if (offset >= t->size || probe_contents(t->path, offset, o->json ? stderr : stdout) <= 0)
		return 0;
	if (o->force || o->noaction)
		return 0;
	return sup_proceed_question(prog_name, "it holds data");
}

/* ------------------------------------------------------------------ mounted? */

int mk_target_check_mounted(const struct mk_target *t)
{
	char via[300];
	unsigned flags;

	if (!t->exists || ext4fs_check_mount_via(t->path, &flags, via, sizeof(via)) < 0)
		return 0;
	if (flags & EXT4FS_MOUNT_LOOP) {
		fprintf(stderr, "%s: %s is %s (through %s); will not make a filesystem here!\n",
			prog_name, t->path, (flags & EXT4FS_MOUNT_MOUNTED) ? "mounted" : "in use as swap",
			via);
		return -1;
	}
	if (flags & (EXT4FS_MOUNT_MOUNTED | EXT4FS_MOUNT_SWAP)) {
		fprintf(stderr, "%s: %s is %s; will not make a filesystem here!\n", prog_name,
			t->path, (flags & EXT4FS_MOUNT_MOUNTED) ? "mounted" : "in use as swap");
		return -1;
	}
	if (flags & EXT4FS_MOUNT_BUSY) {
		fprintf(stderr, "%s: %s is apparently in use by the system; will not make a filesystem here!\n",
			prog_name, t->path);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ creating and wiping */

int mk_target_prepare_file(const struct mk_opts *o, struct mk_target *t, uint64_t bytes)
{
	int fd;

	if (!t->is_reg)
		return 0;
	if (!t->exists && !t->created) {
		fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			fprintf(stderr, "Could not open %s: %s\n", t->path, strerror(errno));
			return -1;
		}
		if (!o->json)   /* mke2fs says so even with -q */
			printf("Creating regular file %s\n", t->path);
		t->created = 1;
	} else {
		fd = open(t->path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "Could not open %s: %s\n", t->path, strerror(errno));
			return -1;
		}
	}
	if (bytes > t->size && ftruncate(fd, (off_t)bytes) < 0) {
		fprintf(stderr, "%s: could not extend %s to %llu bytes: %s\n", prog_name, t->path,
			(unsigned long long)bytes, strerror(errno));
		close(fd);
		return -1;
	}
	if (bytes > t->size)
		t->size = bytes;
	close(fd);
	return 0;
}

/* Zero [off, off+len) unless it already reads as zeros. */
static int zero_if_needed(struct ext4fs_io *io, uint64_t off, size_t len, unsigned char *buf)
{
	int err = ext4fs_io_read(io, off, buf, len);

	if (err)
		return err;
	for (size_t i = 0; i < len; i++)
		if (buf[i]) {
			memset(buf, 0, len);
			return ext4fs_io_write(io, off, buf, len);
		}
	return 0;
}

#define BSD_DISKMAGIC 0x82564557U
#define BSD_MAGICDISK 0x57455682U

int mk_target_zap(struct ext4fs_io *io, uint64_t fs_bytes, uint32_t block_size)
{
	const uint64_t rsv = 65536 / block_size;
	uint64_t blocks = fs_bytes / block_size, start;
	unsigned char *buf = malloc(65536 * 2);
	int err = 0;

	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	/* Sectors 0-1, kept when they hold a BSD disklabel. */
	if (fs_bytes >= 4096 && !(err = ext4fs_io_read(io, 0, buf, 1024))) {
		uint32_t magic = (uint32_t)buf[64] | (uint32_t)buf[65] << 8 |
				 (uint32_t)buf[66] << 16 | (uint32_t)buf[67] << 24;
		if (magic != BSD_DISKMAGIC && magic != BSD_MAGICDISK)
			err = zero_if_needed(io, 0, 1024, buf);
		if (!err)
			err = zero_if_needed(io, 2048, 2048, buf);
	}
	/* The last 64 KiB-aligned stretch: old MD RAID superblocks live there. */
	start = blocks & ~(rsv - 1);
	if (start > rsv)
		start -= rsv;
	if (!err && start > 0 && blocks > start)
		err = zero_if_needed(io, start * block_size, (size_t)((blocks - start) * block_size), buf);
	free(buf);
	return err;
}
