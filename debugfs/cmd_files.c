/*
 * cmd_files.c - debug4fs commands that change the namespace and file
 * contents (debug4fs -w):
 *
 *   write <native file> <new file>     copy a file in
 *   mkdir <dir>                        make a directory
 *   rm <file>                          unlink(2): drop a link, free at zero
 *   rmdir <dir>                        remove an empty directory
 *   link, ln <file> <dest>             add a directory entry (link count kept)
 *   unlink <file>                      remove a directory entry (link count kept)
 *   symlink <file> <target>            make a symbolic link
 *   mknod <file> [p| [c|b] major minor]
 *   punch, truncate <file> <start_blk> [end_blk]
 *   fallocate <file> <start_blk> [end_blk]
 *   kill_file <file>                   free an inode and its blocks, entries kept
 *
 * Everything goes through the library's namespace and file operations, so
 * each command leaves a consistent file system except the three that exist
 * to break one on purpose, as in debugfs: link and unlink change entries
 * without touching link counts, and kill_file frees an inode that
 * directories still name.
 *
 * What is created, as debugfs creates it: owner root, times from the
 * handle's clock; write takes its permission bits from the native file;
 * mkdir makes 0755, symlink 0777, and mknod an inode with no permission
 * bits at all.  write and mknod print "Allocated inode: N"; rm, rmdir and
 * kill_file print an empty line when they free an inode (debugfs's
 * leftover of a block listing).  write copies the data runs the native file
 * has (SEEK_DATA / SEEK_HOLE) in large requests that tell the allocator the
 * final size, and like debugfs leaves a hole for every block that reads as
 * zeros.
 *
 * Deliberate differences from debugfs 1.47:
 *  - messages name the failing call once ("mkdir: Ext2 directory already
 *    exists while creating directory \"d\""), not twice, and carry the
 *    library's detail; any failure makes the command fail.
 *  - kill_file on an inode that is already free is refused (debugfs frees
 *    its blocks a second time); it also sets the link count to 0.
 *  - mknod accepts majors up to 4095 and minors up to 1048575 (what the
 *    on-disk encoding holds) and gives the usage message for a missing
 *    minor (debugfs says nothing).
 *  - fallocate on a block-mapped file cannot reach past the end of the
 *    file (the library keeps no written blocks beyond i_size, which e2fsck
 *    would flag); debugfs zeroes and maps such blocks.
 *  - write makes no inline-data files; a file that cannot be written
 *    completely is left as far as it got, with the error reported.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "debug4fs.h"
#include "ext4fs/dir.h"
#include "ext4fs/file.h"
#include "ext4fs/fsops.h"
#include "ext4fs/namei.h"

#define COPY_CHUNK (1U << 20)   /* bytes per read from the native file and per library write */
#define MKDIR_MODE 0755         /* debugfs: 0777 less its umask of 022 */
#define SYMLINK_MODE 0777

/* ------------------------------------------------------------------ helpers */

/* The parent directory and last component of a path, as debugfs splits one. */
struct dest {
	char *copy;             /* owned copy of the path; name points into it */
	const char *name;
	uint32_t dir;
};

static void dest_free(struct dest *p)
{
	free(p->copy);
	p->copy = NULL;
}

/*
 * Split path at its last '/': the part before is looked up like any file
 * name (from the root when it starts with '/', else from the current
 * directory), the part after is the new name.  Prints debugfs's message
 * and returns nonzero when the directory part cannot be found.
 */
static int split_dest(struct dbg *d, const char *path, struct dest *p)
{
	char *slash;
	int err;

	memset(p, 0, sizeof(*p));
	p->copy = strdup(path);
	if (!p->copy) {
		fprintf(stderr, "%s: %s\n", path, ext4fs_strerror(EXT4FS_E_NO_MEMORY));
		return 1;
	}
	slash = strrchr(p->copy, '/');
	if (!slash) {
		p->dir = d->cwd;
		p->name = p->copy;
		return 0;
	}
	*slash = '\0';
	p->name = slash + 1;
	if (slash == p->copy) {
		p->dir = d->root;
		return 0;
	}
	err = ext4fs_namei(d->fs, d->root, d->cwd, p->copy, 1, &p->dir);
	if (err) {
		fprintf(stderr, "%s: %s while looking up \"%s\"\n", p->copy, ext4fs_strerror(err),
			p->copy);
		dest_free(p);
		return 1;
	}
	return 0;
}

/*
 * Refuse a name that exists already before anything is allocated (the
 * library would allocate the inode and give it back, rewriting bitmaps for
 * nothing).  A directory that cannot be searched is left to the library to
 * report.
 */
static int name_taken(struct dbg *d, const char *cmd, const struct dest *p, const char *what)
{
	uint32_t ino;

	if (ext4fs_dir_lookup(d->fs, p->dir, p->name, strlen(p->name), &ino) != 0)
		return 0;
	fflush(d->out);
	fprintf(stderr, "%s: Ext2 %s already exists while creating %s \"%s\"\n", cmd,
		strcmp(what, "directory") ? "file" : "directory", what, p->name);
	return 1;
}

/* "who: <message> <context> (detail: ...)" for a failed create, with debugfs's wording. */
static int create_error(struct dbg *d, const char *who, int err, const char *what, const char *name)
{
	if (err == EXT4FS_E_EXISTS && strcmp(what, "directory")) {
		fflush(d->out);
		fprintf(stderr, "%s: Ext2 file already exists while creating %s \"%s\"\n", who, what,
			name);
		return 1;
	}
	dbg_error(d, who, err, "while creating %s \"%s\"", what, name);
	return 1;
}

static void print_allocated(struct dbg *d, uint32_t ino)
{
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "inode", ino);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, "Allocated inode: %u\n", ino);
	}
}

/* The empty line debugfs prints after freeing an inode (none in JSON mode). */
static void print_freed(struct dbg *d)
{
	if (!d->json)
		fputc('\n', d->out);
}

/* A logical block number argument ("Bad logical block - x" otherwise). */
static int parse_lblk(const char *cmd, const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (!*s || *end || errno) {
		fprintf(stderr, "%s: Bad logical block - %s\n", cmd, s);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ write */

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * Write buf (n bytes of the native file from byte off) into the inode,
 * leaving out every whole block that is all zeros.
 */
static int write_sparse(struct dbg *d, uint32_t ino, struct ext4fs_inode *in, uint64_t off,
			const unsigned char *buf, size_t n, uint64_t size)
{
	uint32_t bs = ext4fs_geom(d->fs)->block_size;
	size_t i = 0, run = 0;   /* [run, i) waits to be written */

	while (i < n) {
		size_t piece = bs - (size_t)((off + i) % bs);
		int err;

		if (piece > n - i)
			piece = n - i;
		if (piece < bs || !all_zero(buf + i, piece)) {
			i += piece;
			continue;
		}
		if (run < i) {
			err = ext4fs_file_write(d->fs, ino, in, off + run, buf + run, i - run, size);
			if (err)
				return err;
		}
		i += piece;
		run = i;
	}
	if (run < n)
		return ext4fs_file_write(d->fs, ino, in, off + run, buf + run, n - run, size);
	return 0;
}

/* Copy [start, end) of the native file fd. */
static int copy_range(struct dbg *d, int fd, uint32_t ino, struct ext4fs_inode *in, uint64_t start,
		      uint64_t end, uint64_t size, unsigned char *buf)
{
	while (start < end) {
		size_t want = end - start < COPY_CHUNK ? (size_t)(end - start) : COPY_CHUNK;
		ssize_t got = pread(fd, buf, want, (off_t)start);
		int err;

		if (got < 0)
			return -errno;
		if (got == 0)
			break;          /* the file shrank while we copied */
		err = write_sparse(d, ino, in, start, buf, (size_t)got, size);
		if (err)
			return err;
		start += (uint64_t)got;
	}
	return 0;
}

/* Copy the data runs of fd (size bytes), then give the inode its full size. */
static int copy_file(struct dbg *d, int fd, uint32_t ino, struct ext4fs_inode *in, uint64_t size)
{
	unsigned char *buf = malloc(COPY_CHUNK);
	uint64_t pos = 0;
	int err = 0;

	if (!buf)
		return EXT4FS_E_NO_MEMORY;
	while (pos < size && !err) {
		off_t data = lseek(fd, (off_t)pos, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break;          /* only a hole is left */
		if (data < 0) {
			data = (off_t)pos;      /* no SEEK_DATA here: copy everything */
			hole = (off_t)size;
		} else {
			hole = lseek(fd, data, SEEK_HOLE);
			if (hole < 0 || (uint64_t)hole > size)
				hole = (off_t)size;
		}
		if ((uint64_t)data >= size)
			break;
		err = copy_range(d, fd, ino, in, (uint64_t)data, (uint64_t)hole, size, buf);
		pos = (uint64_t)hole;
	}
	free(buf);
	if (!err && ext4fs_inode_size(in) < size)
		err = ext4fs_file_truncate(d->fs, ino, in, size);
	return err;
}

static int do_write(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_new_attrs attrs = { 0 };
	struct ext4fs_inode in;
	struct dest p;
	struct stat st;
	uint32_t ino;
	int fd, err, rc = 1;

	if (dbg_check_args(argc, argv, 3, 3, "<native file> <new file>") ||
	    dbg_require_rw(d, argv[0]))
		return 1;
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s while opening \"%s\" to copy\n", argv[0], strerror(errno),
			argv[1]);
		return 1;
	}
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: %s while reading \"%s\"\n", argv[0], strerror(errno), argv[1]);
		close(fd);
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: \"%s\" is not a regular file\n", argv[0], argv[1]);
		close(fd);
		return 1;
	}
	if (split_dest(d, argv[2], &p))
		goto out_close;
	if (name_taken(d, argv[0], &p, "file"))
		goto out;
	attrs.mode = (uint16_t)(EXT4FS_S_IFREG | (st.st_mode & 07777));
	err = ext4fs_mknod(d->fs, p.dir, p.name, &attrs, &ino);
	if (err) {
		create_error(d, argv[0], err, "file", argv[2]);
		goto out;
	}
	print_allocated(d, ino);
	err = ext4fs_inode_read(d->fs, ino, &in);
	if (!err)
		err = copy_file(d, fd, ino, &in, (uint64_t)st.st_size);
	if (err) {
		dbg_error(d, argv[0], err, "while copying \"%s\" to inode %u", argv[1], ino);
		goto out;
	}
	rc = 0;
out:
	dest_free(&p);
out_close:
	close(fd);
	return rc;
}

/* ------------------------------------------------------------------ creating */

static int do_mkdir(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_new_attrs attrs = { .mode = EXT4FS_S_IFDIR | MKDIR_MODE };
	struct dest p;
	int err;

	if (dbg_check_args(argc, argv, 2, 2, "<filename>") || dbg_require_rw(d, argv[0]))
		return 1;
	if (split_dest(d, argv[1], &p))
		return 1;
	if (name_taken(d, argv[0], &p, "directory")) {
		dest_free(&p);
		return 1;
	}
	err = ext4fs_mkdir(d->fs, p.dir, p.name, &attrs, NULL);
	dest_free(&p);
	if (err)
		return create_error(d, argv[0], err, "directory", argv[1]);
	return 0;
}

static int do_symlink(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_new_attrs attrs = { .mode = EXT4FS_S_IFLNK | SYMLINK_MODE };
	struct dest p;
	int err;

	if (dbg_check_args(argc, argv, 3, 3, "<filename> <target>") || dbg_require_rw(d, argv[0]))
		return 1;
	if (split_dest(d, argv[1], &p))
		return 1;
	if (name_taken(d, argv[0], &p, "symlink")) {
		dest_free(&p);
		return 1;
	}
	err = ext4fs_symlink(d->fs, p.dir, p.name, argv[2], &attrs, NULL);
	dest_free(&p);
	if (err)
		return create_error(d, argv[0], err, "symlink", argv[1]);
	return 0;
}

/* A major or minor number: the whole word, base 0, at most max. */
static int parse_devnum(const char *s, unsigned long max, uint32_t *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 0);
	if (!*s || *end || errno || n > max || s[0] == '-')
		return -1;
	*v = (uint32_t)n;
	return 0;
}

static int do_mknod(struct dbg *d, int argc, char **argv)
{
	static const char usage[] = "<name> [p| [c|b] <major> <minor>]";
	struct ext4fs_new_attrs attrs = { 0 };
	uint32_t major = 0, minor = 0, ino;
	struct dest p;
	int err;

	if (argc < 3 || argv[2][1]) {
		dbg_usage(argv[0], usage);
		return 1;
	}
	switch (argv[2][0]) {
	case 'p':
		attrs.mode = EXT4FS_S_IFIFO;
		if (argc != 3)
			return dbg_usage(argv[0], usage);
		break;
	case 'c':
	case 'b':
		attrs.mode = argv[2][0] == 'c' ? EXT4FS_S_IFCHR : EXT4FS_S_IFBLK;
		if (argc != 5 || parse_devnum(argv[3], 0xFFF, &major) ||
		    parse_devnum(argv[4], 0xFFFFF, &minor))
			return dbg_usage(argv[0], usage);
		break;
	default:
		return dbg_usage(argv[0], usage);
	}
	if (dbg_require_rw(d, argv[0]))
		return 1;
	/* The kernel's dev_t encoding, which the library stores old- or new-style. */
	attrs.rdev = (minor & 0xFF) | (major << 8) | ((minor & ~0xFFU) << 12);
	if (split_dest(d, argv[1], &p))
		return 1;
	if (name_taken(d, argv[0], &p, "special file")) {
		dest_free(&p);
		return 1;
	}
	err = ext4fs_mknod(d->fs, p.dir, p.name, &attrs, &ino);
	dest_free(&p);
	if (err)
		return create_error(d, argv[0], err, "special file", argv[1]);
	print_allocated(d, ino);
	return 0;
}

/* ------------------------------------------------------------------ links */

/*
 * link <source> <dest>: a new entry for the source's inode; its link count
 * is not changed (debugfs's "ln" is a repair tool, e2fsck fixes the count).
 * An existing directory as dest gets an entry named like the source.
 */
static int do_link(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in, dir_in;
	struct dest p = { 0 };
	const char *base;
	uint32_t ino, target;
	int err, rc = 1;

	if (dbg_check_args(argc, argv, 3, 3, "<source file> <dest_name>") ||
	    dbg_require_rw(d, argv[0]))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino) || dbg_read_inode(d, argv[0], ino, &in))
		return 1;
	base = strrchr(argv[1], '/');
	base = base ? base + 1 : argv[1];
	if (ext4fs_namei(d->fs, d->root, d->cwd, argv[2], 1, &target) == 0 &&
	    ext4fs_inode_read(d->fs, target, &dir_in) == 0 && EXT4FS_ISDIR(dir_in.i_mode)) {
		p.dir = target;
		p.name = base;
	} else if (split_dest(d, argv[2], &p)) {
		return 1;
	}
	err = ext4fs_inode_read(d->fs, p.dir, &dir_in);
	if (!err)
		err = ext4fs_dir_add(d->fs, p.dir, &dir_in, p.name, strlen(p.name), ino,
				     ext4fs_file_type_of_mode(in.i_mode));
	if (err) {
		dbg_error(d, "make_link", err, "while linking \"%s\"", p.name);
		goto out;
	}
	rc = 0;
out:
	dest_free(&p);
	return rc;
}

/* unlink <path>: remove the entry only; the inode and its link count stay. */
static int do_unlink(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode dir_in;
	struct dest p;
	int err;

	if (dbg_check_args(argc, argv, 2, 2, "<pathname>") || dbg_require_rw(d, argv[0]))
		return 1;
	if (split_dest(d, argv[1], &p))
		return 1;
	err = ext4fs_inode_read(d->fs, p.dir, &dir_in);
	if (!err)
		err = ext4fs_dir_remove(d->fs, p.dir, &dir_in, p.name, strlen(p.name), NULL);
	if (err)
		dbg_error(d, "unlink_file_by_name", err, "while removing \"%s\"", p.name);
	dest_free(&p);
	return err ? 1 : 0;
}

/* rm and rmdir: look the file up first, for debugfs's messages. */
static int resolve(struct dbg *d, const char *cmd, const char *path, uint32_t *ino,
		   struct ext4fs_inode *in)
{
	int err = ext4fs_namei(d->fs, d->root, d->cwd, path, 0, ino);

	if (err) {
		fprintf(stderr, "%s: %s while trying to resolve filename\n", cmd, ext4fs_strerror(err));
		return 1;
	}
	return dbg_read_inode(d, cmd, *ino, in);
}

static int do_rm(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	struct dest p;
	uint32_t ino;
	int err;

	if (dbg_check_args(argc, argv, 2, 2, "<filename>") || dbg_require_rw(d, argv[0]))
		return 1;
	if (resolve(d, argv[0], argv[1], &ino, &in))
		return 1;
	if (EXT4FS_ISDIR(in.i_mode)) {
		fprintf(stderr, "%s: file is a directory\n", argv[0]);
		return 1;
	}
	if (split_dest(d, argv[1], &p))
		return 1;
	err = ext4fs_unlink(d->fs, p.dir, p.name);
	dest_free(&p);
	if (err) {
		dbg_error(d, argv[0], err, "while removing \"%s\"", argv[1]);
		return 1;
	}
	if (in.i_links_count <= 1)
		print_freed(d);
	return 0;
}

static int do_rmdir(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	struct dest p;
	uint32_t ino;
	int err;

	if (dbg_check_args(argc, argv, 2, 2, "<filename>") || dbg_require_rw(d, argv[0]))
		return 1;
	if (resolve(d, argv[0], argv[1], &ino, &in))
		return 1;
	if (!EXT4FS_ISDIR(in.i_mode)) {
		fprintf(stderr, "%s: file is not a directory\n", argv[0]);
		return 1;
	}
	if (split_dest(d, argv[1], &p))
		return 1;
	err = ext4fs_rmdir(d->fs, p.dir, p.name);
	dest_free(&p);
	if (err == EXT4FS_E_DIR_NOT_EMPTY) {
		fprintf(stderr, "%s: directory not empty\n", argv[0]);
		return 1;
	}
	if (err) {
		dbg_error(d, argv[0], err, "while removing \"%s\"", argv[1]);
		return 1;
	}
	print_freed(d);
	return 0;
}

static int do_kill_file(struct dbg *d, int argc, char **argv)
{
	uint32_t ino;
	int err;

	if (dbg_check_args(argc, argv, 2, 2, "<file>") || dbg_require_rw(d, argv[0]))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	err = ext4fs_inode_release(d->fs, ino);
	if (err) {
		dbg_error(d, argv[0], err, "while killing inode %u", ino);
		return 1;
	}
	print_freed(d);
	return 0;
}

/* ------------------------------------------------------------------ block ranges */

/* "<file> <start_blk> [end_blk]" for punch and fallocate; end defaults to ~0. */
static int range_args(struct dbg *d, int argc, char **argv, uint32_t *ino,
		      struct ext4fs_inode *in, uint64_t *start, uint64_t *end)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "%s: Usage: %s <file> start_blk [end_blk]\n", argv[0], argv[0]);
		return 1;
	}
	if (dbg_require_rw(d, argv[0]) || dbg_parse_inode(d, argv[1], ino) ||
	    parse_lblk(argv[0], argv[2], start))
		return 1;
	*end = UINT64_MAX;
	if (argc == 4 && parse_lblk(argv[0], argv[3], end))
		return 1;
	return dbg_read_inode(d, argv[0], *ino, in);
}

/* debugfs's failure message for punch / fallocate, with its trailing empty line. */
static int range_error(struct dbg *d, const char *cmd, int err, const char *what, uint32_t ino,
		       uint64_t start, uint64_t end)
{
	fflush(d->out);
	fprintf(stderr, "%s: %s while %s inode %u from %" PRIu64 " to %" PRIu64, cmd,
		ext4fs_strerror(err), what, ino, start, end);
	if (ext4fs_errmsg(d->fs)[0])
		fprintf(stderr, " (detail: %s)", ext4fs_errmsg(d->fs));
	fputs("\n\n", stderr);
	return 1;
}

/* Byte range of blocks [start, end]; one reaching past 2^64 bytes ends there (the map's end). */
static void block_range(struct dbg *d, uint64_t start, uint64_t end, uint64_t *off, uint64_t *len)
{
	uint64_t bs = ext4fs_geom(d->fs)->block_size;
	uint64_t n = end - start;

	*off = start > UINT64_MAX / bs ? UINT64_MAX : start * bs;
	if (n >= (UINT64_MAX - *off) / bs)
		*len = UINT64_MAX - *off;
	else
		*len = (n + 1) * bs;
}

static int do_punch(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	uint64_t start, end, off, len;
	uint32_t ino;
	int err;

	if (range_args(d, argc, argv, &ino, &in, &start, &end))
		return 1;
	if (end < start)
		return range_error(d, argv[0], -EINVAL, "truncating", ino, start, end);
	block_range(d, start, end, &off, &len);
	err = ext4fs_file_punch(d->fs, ino, &in, off, len);
	if (err)
		return range_error(d, argv[0], err, "truncating", ino, start, end);
	return 0;
}

static int do_fallocate(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_inode in;
	uint64_t start, end, off, len, last;
	uint32_t ino;
	int err;

	if (range_args(d, argc, argv, &ino, &in, &start, &end))
		return 1;
	if (end < start)
		return range_error(d, argv[0], -EINVAL, "fallocating", ino, start, end);
	/* Logical block numbers are 32 bits: "to the end" means the last one there is. */
	last = end > UINT32_MAX ? UINT32_MAX : end;
	if (start > last)
		return range_error(d, argv[0], EXT4FS_E_FILE_TOO_BIG, "fallocating", ino, start, end);
	block_range(d, start, last, &off, &len);
	err = ext4fs_file_fallocate(d->fs, ino, &in, off, len, EXT4FS_FALLOC_KEEP_SIZE);
	if (err)
		return range_error(d, argv[0], err, "fallocating", ino, start, end);
	return 0;
}

const struct dbg_cmd dbg_cmds_files[] = {
	{ { "write", NULL }, do_write, 0, "Copy a file from your native filesystem" },
	{ { "mkdir", NULL }, do_mkdir, 0, "Create a directory" },
	{ { "rm", NULL }, do_rm, 0, "Remove a file (unlink and kill_file, if appropriate)" },
	{ { "rmdir", NULL }, do_rmdir, 0, "Remove a directory" },
	{ { "link", "ln", NULL }, do_link, 0, "Create directory link" },
	{ { "unlink", NULL }, do_unlink, 0, "Delete a directory link" },
	{ { "symlink", NULL }, do_symlink, 0, "Create a symbolic link" },
	{ { "mknod", NULL }, do_mknod, 0, "Create a special file" },
	{ { "punch", "truncate", NULL }, do_punch, 0, "Punch (or truncate) blocks from an inode by deallocating them" },
	{ { "fallocate", NULL }, do_fallocate, 0, "Allocate uninitialized blocks to an inode" },
	{ { "kill_file", NULL }, do_kill_file, 0, "Deallocate an inode and its blocks" },
	{ { NULL }, NULL, 0, NULL },
};
