/*
 * populate.c - mke4fs -d: copy a host directory tree into the new file
 * system through libext4fs.
 *
 * Every regular file is written in large chunks with its final size
 * announced (EXT4FS_ALLOC_WHOLE_FILE), so the allocator places the whole
 * file in one piece right after the previous one; holes (found with
 * SEEK_DATA / SEEK_HOLE) stay holes.  Entries are copied in name order,
 * a directory's files before its subdirectories, so the same tree always
 * gives the same image and each directory's files lie together.  Hard links
 * are recognised by (st_dev, st_ino); directory times are set after their
 * contents, since adding entries changes them.
 *
 * A file with several names gets its data next to one of them only.  A
 * directory made mostly of such names (a "links" directory, a snapshot)
 * is a poor home for it: the data then waits for the file's first name in
 * a directory where at most half of the regular files have other names,
 * or for its last name in the tree, or for the end of the copy when some
 * names lie outside the tree.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include "ext4fs/array.h"
#include "ext4fs/alloc.h"
#include "ext4fs/dir.h"
#include "ext4fs/file.h"
#include "ext4fs/fsops.h"
#include "ext4fs/inode.h"
#include "ext4fs/xattr.h"
#include "mke4fs.h"
#include "support/fsopen.h"
#include "support/comerr.h"

#define COPY_CHUNK (8U << 20)       /* bytes read and written per call */
#define MAX_DEPTH 4096              /* deeper trees are refused rather than exhausting fds */

struct hardlink {
	dev_t dev;
	ino_t host_ino;
	uint32_t ino;
	nlink_t names_seen;
	char *pending;                 /* host path while the data is still to be copied */
};

struct populate {
	struct ext4fs_fs *fs;
	int copy_xattrs;
	unsigned char *buf;
	struct hardlink *links;        /* open-addressing table, size a power of two */
	size_t links_cap, links_used;
	char path[8192];               /* host path of the entry being copied, for messages */
	unsigned long files;
};

static int fail_lib(struct populate *p, int err, const char *what)
{
	const char *detail = ext4fs_errmsg(p->fs);

	fprintf(stderr, "%s: %s while %s %s%s%s\n", prog_name, ext4fs_strerror(err), what, p->path,
		detail[0] ? ": " : "", detail);
	return -1;
}

static int fail_sys(struct populate *p, const char *what)
{
	fprintf(stderr, "%s: %s while %s %s\n", prog_name, strerror(errno), what, p->path);
	return -1;
}

static size_t link_slot(const struct populate *p, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)dev;

	return (size_t)(h ^ (h >> 29)) & (p->links_cap - 1);
}

static struct hardlink *link_find(const struct populate *p, dev_t dev, ino_t ino)
{
	if (!p->links_cap)
		return NULL;
	for (size_t i = link_slot(p, dev, ino);; i = (i + 1) & (p->links_cap - 1)) {
		if (!p->links[i].ino)
			return NULL;
		if (p->links[i].dev == dev && p->links[i].host_ino == ino)
			return &p->links[i];
	}
}

/* Remember the first name's inode; pending (copied) is the host path when the data waits. */
static int link_add(struct populate *p, dev_t dev, ino_t host_ino, uint32_t ino, const char *pending)
{
	char *path = NULL;

	if (pending && !(path = strdup(pending)))
		return -1;
	if ((p->links_used + 1) * 2 > p->links_cap) {
		size_t cap = p->links_cap ? p->links_cap * 2 : 1024;
		struct hardlink *old = p->links, *n = calloc(cap, sizeof(*n));
		size_t old_cap = p->links_cap;
		if (!n) {
			free(path);
			return -1;
		}
		p->links = n;
		p->links_cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].ino) {
				size_t s = link_slot(p, old[i].dev, old[i].host_ino);
				while (n[s].ino)
					s = (s + 1) & (cap - 1);
				n[s] = old[i];
			}
		free(old);
	}
	size_t s = link_slot(p, dev, host_ino);
	while (p->links[s].ino)
		s = (s + 1) & (p->links_cap - 1);
	p->links[s] = (struct hardlink){ dev, host_ino, ino, 1, path };
	p->links_used++;
	return 0;
}

/* Copy the host file's bytes; only the data segments are written, so holes stay holes. */
static int copy_data(struct populate *p, int fd, uint32_t ino, struct ext4fs_inode *in,
		     const struct stat *st)
{
	off_t pos = 0, size = st->st_size;
	int err;

	while (pos < size) {
		off_t data = lseek(fd, pos, SEEK_DATA), hole;
		if (data < 0) {
			if (errno == ENXIO)
				break;          /* only a hole is left */
			data = pos;             /* no SEEK_DATA support: copy everything */
			hole = size;
		} else {
			hole = lseek(fd, data, SEEK_HOLE);
			if (hole < 0 || hole > size)
				hole = size;
		}
		for (off_t at = data; at < hole;) {
			size_t want = (size_t)(hole - at < COPY_CHUNK ? hole - at : COPY_CHUNK);
			ssize_t got = pread(fd, p->buf, want, at);
			if (got < 0)
				return fail_sys(p, "reading");
			if (got == 0)
				return 0;       /* the file shrank while we copied it */
			err = ext4fs_file_write(p->fs, ino, in, (uint64_t)at, p->buf, (size_t)got,
						(uint64_t)size);
			if (err)
				return fail_lib(p, err, "writing");
			at += got;
		}
		pos = hole;
	}
	if (ext4fs_inode_size(in) < (uint64_t)size) {
		err = ext4fs_file_truncate(p->fs, ino, in, (uint64_t)size);
		if (err)
			return fail_lib(p, err, "setting the size of");
	}
	return 0;
}

/*
 * Copy the extended attributes of the host object at xpath (a
 * /proc/self/fd/N[/name] path, so names stay relative to an open directory
 * and the l*xattr calls do not follow a final symlink).
 */
static int copy_xattrs(struct populate *p, const char *xpath, uint32_t ino, struct ext4fs_inode *in)
{
	char *names = NULL, *value = NULL;
	ssize_t len;
	int rc = -1;

	if (!p->copy_xattrs)
		return 0;
	len = llistxattr(xpath, NULL, 0);
	if (len <= 0)
		return (len == 0 || errno == ENOTSUP) ? 0 : fail_sys(p, "listing attributes of");
	names = malloc((size_t)len);
	if (!names || (len = llistxattr(xpath, names, (size_t)len)) < 0) {
		fail_sys(p, "listing attributes of");
		goto out;
	}
	for (char *n = names; n < names + len; n += strlen(n) + 1) {
		ssize_t vlen = lgetxattr(xpath, n, NULL, 0);
		if (vlen < 0) {
			fail_sys(p, "reading attributes of");
			goto out;
		}
		free(value);
		value = malloc((size_t)vlen + 1);
		if (!value || (vlen = lgetxattr(xpath, n, value, (size_t)vlen)) < 0) {
			fail_sys(p, "reading attributes of");
			goto out;
		}
		int err = ext4fs_xattr_set(p->fs, ino, in, n, value, (size_t)vlen, 0);
		if (err) {
			fail_lib(p, err, "copying attributes of");
			goto out;
		}
	}
	rc = 0;
out:
	free(names);
	free(value);
	return rc;
}

static int copy_entry_xattrs(struct populate *p, int dirfd, const char *name, uint32_t ino,
			     struct ext4fs_inode *in)
{
	char xpath[64 + EXT4FS_NAME_LEN];

	snprintf(xpath, sizeof(xpath), "/proc/self/fd/%d/%s", dirfd, name);
	return copy_xattrs(p, xpath, ino, in);
}

/* Owner, mode bits and times of the host entry; written with the inode. */
static int copy_attrs(struct populate *p, uint32_t ino, const struct stat *st, int keep_owner)
{
	struct ext4fs_inode in;
	int err = ext4fs_inode_read(p->fs, ino, &in);

	if (err)
		return fail_lib(p, err, "reading back");
	in.i_mode = (uint16_t)((in.i_mode & EXT4FS_S_IFMT) | (st->st_mode & 07777));
	if (!keep_owner)
		ext4fs_inode_set_owner(&in, (uint32_t)st->st_uid, (uint32_t)st->st_gid);
	ext4fs_inode_set_time(&in, 'a', st->st_atim.tv_sec, (uint32_t)st->st_atim.tv_nsec);
	ext4fs_inode_set_time(&in, 'm', st->st_mtim.tv_sec, (uint32_t)st->st_mtim.tv_nsec);
	ext4fs_inode_set_time(&in, 'c', st->st_ctim.tv_sec, (uint32_t)st->st_ctim.tv_nsec);
	err = ext4fs_inode_write(p->fs, ino, &in);
	return err ? fail_lib(p, err, "writing the attributes of") : 0;
}

/* A directory entry of the source: its name and what lstat says of it. */
struct src_entry {
	char *name;
	struct stat st;
};

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct src_entry *)a)->name, ((const struct src_entry *)b)->name);
}

/*
 * The entries of dirfd with their lstat, sorted by name; "." and ".." left
 * out.  Caller frees each name and the array.
 */
static int read_names(struct populate *p, int dirfd, struct src_entry **out, size_t *count)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct src_entry *ents = NULL;
	size_t n = 0, cap = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return fail_sys(p, "opening directory");
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			struct src_entry *grown = ext4fs_array_grow(ents, &cap, n + 1, sizeof(*ents), 64);
			if (!grown)
				goto nomem;
			ents = grown;
		}
		if (fstatat(dirfd, de->d_name, &ents[n].st, AT_SYMLINK_NOFOLLOW)) {
			fprintf(stderr, "%s: %s while reading %s/%s\n", prog_name, strerror(errno),
				p->path, de->d_name);
			goto fail;
		}
		if (!(ents[n].name = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(ents, n, sizeof(*ents), entry_cmp);
	*out = ents;
	*count = n;
	return 0;
nomem:
	fprintf(stderr, "%s: %s while reading directory %s\n", prog_name, strerror(ENOMEM), p->path);
fail:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
	return -1;
}

/*
 * Copy the data of the regular file opened as fd into inode ino, whose
 * record is in *in; the allocator's reserve for it is given back after.
 */
static int write_file_data(struct populate *p, int fd, uint32_t ino, struct ext4fs_inode *in,
			   const struct stat *st)
{
	int rc = copy_data(p, fd, ino, in, st);

	/* The file is complete: what the allocator kept in reserve for it goes back. */
	ext4fs_alloc_release_inode(p->fs, ino);
	return rc;
}

/*
 * The data of a file with several names, held back so far: copy it now
 * (from dirfd/name, or from its remembered path when dirfd < 0) and put
 * the source's times back, which writing changed.
 */
static int copy_pending(struct populate *p, struct hardlink *hl, int dirfd, const char *name,
			const struct stat *st)
{
	struct ext4fs_inode in;
	struct stat now;
	int fd = dirfd >= 0 ? openat(dirfd, name, O_RDONLY | O_NOFOLLOW)
			    : open(hl->pending, O_RDONLY | O_NOFOLLOW);
	int rc, err;

	if (fd < 0)
		return fail_sys(p, "opening");
	if (!st) {
		if (fstat(fd, &now)) {
			close(fd);
			return fail_sys(p, "reading");
		}
		st = &now;
	}
	err = ext4fs_inode_read(p->fs, hl->ino, &in);
	rc = err ? fail_lib(p, err, "reading back") : write_file_data(p, fd, hl->ino, &in, st);
	close(fd);
	if (!rc)
		rc = copy_attrs(p, hl->ino, st, 0);
	free(hl->pending);
	hl->pending = NULL;
	return rc;
}

/* Data still held back at the end of the copy: names of those files lie outside the tree. */
static int copy_all_pending(struct populate *p)
{
	for (size_t i = 0; i < p->links_cap; i++) {
		struct hardlink *hl = &p->links[i];
		if (!hl->ino || !hl->pending)
			continue;
		snprintf(p->path, sizeof(p->path), "%s", hl->pending);
		if (copy_pending(p, hl, -1, NULL, NULL))
			return -1;
	}
	return 0;
}

static int populate_dir(struct populate *p, int dirfd, uint32_t dir_ino, unsigned depth);

/* home: this directory may take the data of files with several names (see the top). */
static int copy_entry(struct populate *p, int dirfd, const struct src_entry *ent, uint32_t dir_ino,
		      unsigned depth, int home)
{
	const char *name = ent->name;
	const struct stat *st = &ent->st;
	struct ext4fs_new_attrs a;
	struct ext4fs_inode in;
	struct hardlink *hl;
	uint32_t ino = 0;
	int err, rc, multi = !S_ISDIR(st->st_mode) && st->st_nlink > 1;

	memset(&a, 0, sizeof(a));
	a.mode = (uint16_t)st->st_mode;
	a.uid = (uint32_t)st->st_uid;
	a.gid = (uint32_t)st->st_gid;

	if (multi && (hl = link_find(p, st->st_dev, st->st_ino))) {
		err = ext4fs_link(p->fs, dir_ino, name, hl->ino);
		if (err)
			return fail_lib(p, err, "linking");
		hl->names_seen++;
		if (hl->pending && (home || hl->names_seen >= st->st_nlink))
			return copy_pending(p, hl, dirfd, name, st);
		return 0;
	}

	if (S_ISDIR(st->st_mode)) {
		err = ext4fs_mkdir(p->fs, dir_ino, name, &a, &ino);
		if (err == EXT4FS_E_EXISTS) {
			/* lost+found exists already: merge into it, as mke2fs -d does. */
			err = ext4fs_dir_lookup(p->fs, dir_ino, name, strlen(name), &ino);
			if (!err && (err = ext4fs_inode_read(p->fs, ino, &in)) == 0 &&
			    !EXT4FS_ISDIR(in.i_mode))
				err = EXT4FS_E_EXISTS;
		}
		if (err)
			return fail_lib(p, err, "creating directory");
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (fd < 0)
			return fail_sys(p, "opening directory");
		rc = populate_dir(p, fd, ino, depth + 1);
		if (!rc && (rc = ext4fs_inode_read(p->fs, ino, &in)) != 0)
			rc = fail_lib(p, rc, "reading back");
		if (!rc)
			rc = copy_entry_xattrs(p, dirfd, name, ino, &in);
		if (!rc)
			rc = copy_attrs(p, ino, st, 0);
		close(fd);
		return rc;
	}

	if (S_ISLNK(st->st_mode)) {
		char target[EXT4FS_NAME_LEN * 16 + 1];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return fail_sys(p, "reading symlink");
		target[n] = '\0';
		a.mode = (uint16_t)(st->st_mode & 07777);
		err = ext4fs_symlink(p->fs, dir_ino, name, target, &a, &ino);
		if (err)
			return fail_lib(p, err, "creating symlink");
	} else if (S_ISREG(st->st_mode) || S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ||
		   S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode)) {
		unsigned maj = major(st->st_rdev), min = minor(st->st_rdev);
		a.rdev = (min & 0xFF) | (maj << 8) | ((min & ~0xFFU) << 12);
		err = ext4fs_mknod(p->fs, dir_ino, name, &a, &ino);
		if (err)
			return fail_lib(p, err, "creating");
	} else {
		fprintf(stderr, "%s: ignoring %s: unknown file type\n", prog_name, p->path);
		return 0;
	}

	if ((err = ext4fs_inode_read(p->fs, ino, &in)) != 0)
		return fail_lib(p, err, "reading back");
	int has_data = S_ISREG(st->st_mode) && st->st_size > 0;
	int wait = has_data && multi && !home;
	if (has_data && !wait) {
		int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW);
		if (fd < 0)
			return fail_sys(p, "opening");
		rc = write_file_data(p, fd, ino, &in, st);
		close(fd);
		if (rc)
			return rc;
	}
	if (copy_entry_xattrs(p, dirfd, name, ino, &in) || copy_attrs(p, ino, st, 0))
		return -1;
	if (multi && link_add(p, st->st_dev, st->st_ino, ino, wait ? p->path : NULL)) {
		errno = ENOMEM;
		return fail_sys(p, "remembering hard links of");
	}
	p->files++;
	return 0;
}

static void free_entries(struct src_entry *ents, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(ents[i].name);
	free(ents);
}

/*
 * On a striped file system, the first file of the directory that fills a
 * stripe should start on a stripe boundary.  The files before it in name
 * order are written first, so the stream moves on by their size's
 * remainder now: the gap lies between the directory's block and its first
 * file, not between two of its files.  Files with data elsewhere (a name
 * seen before, or data held back) do not count; holes and extent tree
 * blocks make the estimate approximate, which costs only a smaller gap.
 */
static int align_first_large(struct populate *p, const struct src_entry *ents, size_t count, int home)
{
	uint32_t stripe = ext4fs_alloc_stripe(p->fs);
	uint64_t bs = ext4fs_geom(p->fs)->block_size, ahead = 0;

	if (!stripe)
		return 0;
	for (size_t i = 0; i < count; i++) {
		const struct stat *st = &ents[i].st;
		if (!S_ISREG(st->st_mode) || st->st_size <= 0)
			continue;
		if (st->st_nlink > 1 && (!home || link_find(p, st->st_dev, st->st_ino)))
			continue;
		uint64_t size_blocks = ((uint64_t)st->st_size + bs - 1) / bs;
		if (size_blocks >= stripe) {
			int err = ext4fs_alloc_stream_align(p->fs, ahead);
			return err ? fail_lib(p, err, "placing the files of") : 0;
		}
		uint64_t held = (uint64_t)st->st_blocks * 512 / bs;
		ahead += held < size_blocks ? held : size_blocks;
	}
	return 0;
}

static int populate_dir(struct populate *p, int dirfd, uint32_t dir_ino, unsigned depth)
{
	struct src_entry *ents = NULL;
	size_t count = 0, base = strlen(p->path), regular = 0, multi = 0;
	int rc = 0;

	if (depth > MAX_DEPTH) {
		fprintf(stderr, "%s: %s: directory tree deeper than %u levels\n", prog_name, p->path,
			MAX_DEPTH);
		return -1;
	}
	if (read_names(p, dirfd, &ents, &count))
		return -1;
	for (size_t i = 0; i < count; i++)
		if (S_ISREG(ents[i].st.st_mode)) {
			regular++;
			multi += ents[i].st.st_nlink > 1;
		}
	if (align_first_large(p, ents, count, multi * 2 <= regular)) {
		free_entries(ents, count);
		return -1;
	}
	/*
	 * A directory's own files first, its subdirectories after: the files
	 * then lie together right after the directory's block, not split by
	 * whole subtrees written between them.
	 */
	for (int pass = 0; pass < 2 && !rc; pass++) {
		for (size_t i = 0; i < count && !rc; i++) {
			if ((S_ISDIR(ents[i].st.st_mode) ? 1 : 0) != pass)
				continue;
			snprintf(p->path + base, sizeof(p->path) - base, "/%s", ents[i].name);
			rc = copy_entry(p, dirfd, &ents[i], dir_ino, depth, multi * 2 <= regular);
			p->path[base] = '\0';
		}
	}
	free_entries(ents, count);
	return rc;
}

int mk_populate(const char *image, uint64_t offset, const char *src_dir, int copy_xattrs_flag,
		int keep_root_owner, int64_t fixed_time, int quiet)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW, .offset = offset };
	struct populate p;
	struct stat st;
	struct ext4fs_inode root;
	char msg[512];
	int fd, rc = -1, err;

	memset(&p, 0, sizeof(p));
	p.copy_xattrs = copy_xattrs_flag;
	snprintf(p.path, sizeof(p.path), "%s", src_dir);
	if (!quiet)
		fputs("Copying files into the device: ", stdout);
	fd = open(src_dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s: %s while opening %s to copy files\n", prog_name, strerror(errno),
			src_dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	err = sup_fs_open(image, &opts, NULL, &p.fs, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "%s: %s while opening the new file system to copy files\n", prog_name, msg);
		close(fd);
		return -1;
	}
	ext4fs_set_time(p.fs, fixed_time, 0);
	p.buf = malloc(COPY_CHUNK);
	if (!p.buf) {
		errno = ENOMEM;
		fail_sys(&p, "copying");
		goto out;
	}
	if (populate_dir(&p, fd, EXT4FS_ROOT_INO, 0) || copy_all_pending(&p))
		goto out;
	/* The root takes the source directory's attributes, as the tree's top. */
	p.path[strlen(src_dir)] = '\0';
	if ((err = ext4fs_inode_read(p.fs, EXT4FS_ROOT_INO, &root)) != 0) {
		fail_lib(&p, err, "reading back");
		goto out;
	}
	{
		char xpath[64];
		snprintf(xpath, sizeof(xpath), "/proc/self/fd/%d", fd);
		rc = copy_xattrs(&p, xpath, EXT4FS_ROOT_INO, &root);
		if (!rc)
			rc = copy_attrs(&p, EXT4FS_ROOT_INO, &st, keep_root_owner);
	}
out:
	free(p.buf);
	for (size_t i = 0; i < p.links_cap; i++)
		free(p.links[i].pending);
	free(p.links);
	close(fd);
	ext4fs_alloc_release_all(p.fs);
	err = ext4fs_close_flush(p.fs);
	if (!rc && err) {
		sup_com_err(prog_name, err, "while writing the file system after copying files");
		rc = -1;
	}
	if (!quiet && !rc)
		fputs("done\n", stdout);
	return rc;
}
