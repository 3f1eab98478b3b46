/*
 * mountcheck.c - is a device or image file mounted, swapped on, or held?
 *
 * Devices are matched by number, never by name: a mount table may say
 * /dev/root, a /dev/mapper symlink or a path with escaped spaces for the
 * device the caller named differently.  /proc/self/mountinfo carries the
 * number of every mounted device, so nothing on the mount side needs a
 * stat() (which could hang on a dead network mount); /proc/mounts, whose
 * sources have to be stat()ed, is only the fallback for kernels without it.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include "ext4fs/mountcheck.h"

/* Undo the octal escapes (\040 for a space) /proc writes in paths, in place. */
static void unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* Nonzero when the comma-separated option list opts holds opt. */
static int has_option(const char *opts, const char *opt)
{
	size_t len = strlen(opt);

	while (opts && *opts) {
		const char *end = strchr(opts, ',');
		size_t n = end ? (size_t)(end - opts) : strlen(opts);
		if (n == len && !strncmp(opts, opt, len))
			return 1;
		opts = end ? end + 1 : NULL;
	}
	return 0;
}

/* What the mounts of one device add up to. */
struct mount_tally {
	int mounted, writable, root;
};

static void tally(struct mount_tally *t, const char *mountpoint, const char *opts)
{
	t->mounted = 1;
	if (!has_option(opts, "ro"))
		t->writable = 1;
	if (!strcmp(mountpoint, "/"))
		t->root = 1;
}

/*
 * One line of /proc/self/mountinfo: "id parent major:minor root mountpoint
 * options [optional fields...] - fstype source super_options".  Whether the
 * kernel may write is a property of the superblock, so the super options
 * decide "read-only", not the per-mount ones.
 */
static void mountinfo_line(char *line, dev_t dev, struct mount_tally *t)
{
	char *field[6] = { NULL }, *save = NULL, *tok, *super_opts = NULL;
	unsigned maj, min;
	int n = 0, after_dash = 0;

	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (n < 6) {
			field[n++] = tok;
		} else if (!after_dash) {
			after_dash = !strcmp(tok, "-");
		} else if (++after_dash == 4) {    /* fstype, source, then the super options */
			super_opts = tok;
			break;
		}
	}
	if (n < 6 || sscanf(field[2], "%u:%u", &maj, &min) != 2 || makedev(maj, min) != dev)
		return;
	unescape(field[4]);
	tally(t, field[4], super_opts ? super_opts : field[5]);
}

/* One line of /proc/mounts: "source mountpoint fstype options dump pass". */
static void mounts_line(char *line, dev_t dev, struct mount_tally *t)
{
	char *save = NULL, *src = strtok_r(line, " \n", &save);
	char *mnt = strtok_r(NULL, " \n", &save);
	char *opts;
	struct stat st;

	if (!src || !mnt || !strtok_r(NULL, " \n", &save) || !(opts = strtok_r(NULL, " \n", &save)))
		return;
	unescape(src);
	unescape(mnt);
	if (src[0] == '/' && stat(src, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev)
		tally(t, mnt, opts);
}

static unsigned dev_mount_flags(dev_t dev)
{
	struct mount_tally t = { 0 };
	int info = 1;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f) {
		info = 0;
		f = fopen("/proc/mounts", "re");
	}
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		if (info)
			mountinfo_line(line, dev, &t);
		else
			mounts_line(line, dev, &t);
	}
	free(line);
	fclose(f);
	if (!t.mounted)
		return 0;
	return EXT4FS_MOUNT_MOUNTED | (t.writable ? 0 : EXT4FS_MOUNT_READONLY) |
	       (t.root ? EXT4FS_MOUNT_ISROOT : 0);
}

/* Nonzero when /proc/swaps names target: the same device, or the same file. */
static int is_swap(const struct stat *target)
{
	FILE *f = fopen("/proc/swaps", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (!f)
		return 0;
	while (!found && getline(&line, &cap, f) > 0) {
		char *save = NULL, *name = strtok_r(line, " \t\n", &save);
		struct stat st;

		if (!name || name[0] != '/')      /* the header line */
			continue;
		unescape(name);
		if (stat(name, &st))
			continue;
		if (S_ISBLK(target->st_mode))
			found = S_ISBLK(st.st_mode) && st.st_rdev == target->st_rdev;
		else
			found = S_ISREG(st.st_mode) && st.st_dev == target->st_dev &&
				st.st_ino == target->st_ino;
	}
	free(line);
	fclose(f);
	return found;
}

static unsigned dev_flags(dev_t dev)
{
	struct stat st = { .st_mode = S_IFBLK, .st_rdev = dev };

	return dev_mount_flags(dev) | (is_swap(&st) ? EXT4FS_MOUNT_SWAP : 0);
}

/* Read a sysfs "major:minor" file. */
static int read_devno(const char *path, dev_t *dev)
{
	FILE *f = fopen(path, "re");
	unsigned maj, min;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%u:%u", &maj, &min) == 2;
	fclose(f);
	if (!ok)
		return -1;
	*dev = makedev(maj, min);
	return 0;
}

/* Is loop device name (as in /sys/block) backed by file? */
static int loop_backs(const char *name, const struct stat *file)
{
	char path[PATH_MAX], backing[PATH_MAX];
	struct stat st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(backing, 1, sizeof(backing) - 1, f);
	fclose(f);
	backing[n] = '\0';
	backing[strcspn(backing, "\n")] = '\0';
	return stat(backing, &st) == 0 && st.st_dev == file->st_dev && st.st_ino == file->st_ino;
}

/* The use of loop device name and of its partitions (loop0p1, ...). */
static unsigned loop_flags(const char *name)
{
	char path[PATH_MAX];
	unsigned flags = 0;
	size_t len = strlen(name);
	struct dirent *de;
	DIR *dir;
	dev_t dev;

	snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
	if (read_devno(path, &dev) == 0)
		flags |= dev_flags(dev);
	snprintf(path, sizeof(path), "/sys/block/%s", name);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		if (strncmp(de->d_name, name, len) || !de->d_name[len])
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/%s/dev", name, de->d_name);
		if (read_devno(path, &dev) == 0)
			flags |= dev_flags(dev);
	}
	if (dir)
		closedir(dir);
	return flags;
}

/* The first loop device backed by file that is in use; its name goes to via. */
static unsigned file_loop_flags(const struct stat *file, char *via, size_t via_len)
{
	DIR *dir = opendir("/sys/block");
	struct dirent *de;
	unsigned flags = 0;

	if (!dir)
		return 0;
	while (!flags && (de = readdir(dir))) {
		if (strncmp(de->d_name, "loop", 4) || !loop_backs(de->d_name, file))
			continue;
		flags = loop_flags(de->d_name);
		if (flags && via_len)
			snprintf(via, via_len, "/dev/%s", de->d_name);
	}
	closedir(dir);
	return flags ? flags | EXT4FS_MOUNT_LOOP : 0;
}

int ext4fs_check_mount_via(const char *path, unsigned *flags, char *via, size_t via_len)
{
	struct stat st;

	*flags = 0;
	if (via_len)
		via[0] = '\0';
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		*flags = dev_flags(st.st_rdev);
		if (!*flags) {
			/* Held by someone we cannot see in the tables (md, dm, another namespace)? */
			int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
			if (fd >= 0)
				close(fd);
			else if (errno == EBUSY)
				*flags = EXT4FS_MOUNT_BUSY;
		}
	} else if (S_ISREG(st.st_mode)) {
		*flags = (is_swap(&st) ? EXT4FS_MOUNT_SWAP : 0) | file_loop_flags(&st, via, via_len);
	}
	return 0;
}

int ext4fs_check_mount(const char *path, unsigned *flags)
{
	return ext4fs_check_mount_via(path, flags, NULL, 0);
}
