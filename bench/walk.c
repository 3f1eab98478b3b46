/*
 * walk.c - ext4fs-walk: read every in-use inode, every extent (or block-map
 * entry) and every directory entry of an image, and say how long it took.
 *
 * This is the read work of e2fsck's passes 1 and 2 done with libext4fs, for
 * bench/run-walk.sh to time against "e2fsck -fn".  With -j N the group range
 * is cut into N contiguous slices of about equal in-use inodes and each
 * thread walks its slice through its own file-system handle; the totals do
 * not depend on N.
 *
 * Each directory is read when its inode is met.  With -W N the walk instead
 * asks the kernel for a directory's blocks (readahead) when it meets the
 * inode and reads them once N more directories have been met, so directory
 * reads could overlap each other and the inode-table scan (on the 2-CPU
 * virtio test machine this was slower, hence off by default).
 *
 * usage: ext4fs-walk [-j N] [-W N] [-i] [-v] IMAGE
 *   -j N  threads (default 1)
 *   -W N  directories in flight per thread, with readahead (default 0)
 *   -i    do not fail on checksum mismatches (EXT4FS_OPEN_IGNORE_CSUM)
 *   -v    print each error met (default: the first 10)
 *
 * Exit status: 0 when the walk met no error and the in-use inode count
 * matches the superblock, 1 otherwise, 2 on bad usage or an image that does
 * not open.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/scan.h"

#define MAX_THREADS 64
#define ERRORS_SHOWN 10
#define DEFAULT_WINDOW 0

struct counts {
	uint64_t scanned;        /* records the scanner returned */
	uint64_t inodes;         /* of those, in use per the inode bitmap */
	uint64_t linked;         /* in use with i_links_count > 0 */
	uint64_t regular, dirs, symlinks, other;
	uint64_t extent_inodes, blockmap_inodes, inline_inodes;
	uint64_t runs;           /* leaf extents, or data blocks of block-mapped files */
	uint64_t data_blocks;
	uint64_t map_blocks;     /* extent tree nodes and indirect blocks */
	uint64_t dir_entries;    /* live entries, "." and ".." included */
	uint64_t dir_blocks;
	uint64_t htree_dirs;
	uint64_t csum_bad;       /* inodes whose checksum failed */
	uint64_t itable_read, itable_skipped;
	uint64_t io_reads, io_bytes;
	uint64_t errors;
};

/* A directory whose blocks were asked for (readahead) and wait to be read. */
struct pending_dir {
	uint32_t ino;
	struct ext4fs_inode inode;
};

struct job {
	const char *path;
	unsigned open_flags;
	unsigned window;         /* directories kept in flight; 0: read each at once */
	struct pending_dir *pending;   /* ring of window entries */
	unsigned pend_head, pend_count;
	uint32_t first_group, last_group;
	const struct ext4fs_bitmap *ibm;
	struct counts c;
	int failed;              /* could not open or scan at all */
};

static int verbose;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned errors_printed;

static void report_error(struct job *job, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void report_error(struct job *job, const char *fmt, ...)
{
	va_list ap;

	job->c.errors++;
	pthread_mutex_lock(&print_lock);
	if (verbose || errors_printed < ERRORS_SHOWN) {
		va_start(ap, fmt);
		fputs("ext4fs-walk: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}
	errors_printed++;
	pthread_mutex_unlock(&print_lock);
}

struct visit_arg {
	struct ext4fs_fs *fs;
	struct counts *c;
	int readahead;           /* a directory whose blocks are read later */
};

static int block_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct visit_arg *va = arg;
	struct counts *c = va->c;

	if (v->kind == EXT4FS_BLOCK_DATA) {
		c->runs++;
		c->data_blocks += v->count;
		if (va->readahead && !v->unwritten)
			ext4fs_blocks_readahead(va->fs, v->pblk, v->count);
	} else {
		c->map_blocks++;
	}
	return 0;
}

static int dirent_visit(const struct ext4fs_dirent *d, void *arg)
{
	struct counts *c = arg;

	(void)d;
	c->dir_entries++;
	return 0;
}

/* Count the live entries (nonzero inode) of directory ino. */
static void walk_dir(struct job *job, struct ext4fs_fs *fs, uint32_t ino,
		     const struct ext4fs_inode *inode)
{
	int err = ext4fs_dir_iterate(fs, ino, inode, 0, dirent_visit, &job->c);

	if (err)
		report_error(job, "%s", ext4fs_errmsg(fs));
}

/* Read the oldest pending directory. */
static void pending_pop(struct job *job, struct ext4fs_fs *fs)
{
	struct pending_dir *p = &job->pending[job->pend_head];

	walk_dir(job, fs, p->ino, &p->inode);
	job->pend_head = (job->pend_head + 1) % job->window;
	job->pend_count--;
}

/*
 * Queue directory ino, whose blocks block_visit() has asked the kernel for:
 * reading it only after `window' more directories lets those reads proceed
 * in parallel with the scan instead of one directory at a time.
 */
static void pending_push(struct job *job, struct ext4fs_fs *fs, uint32_t ino,
			 const struct ext4fs_inode *inode)
{
	if (job->pend_count == job->window)
		pending_pop(job, fs);
	struct pending_dir *p = &job->pending[(job->pend_head + job->pend_count) % job->window];
	p->ino = ino;
	p->inode = *inode;
	job->pend_count++;
}

static void walk_inode(struct job *job, struct ext4fs_fs *fs, uint32_t ino,
		       const struct ext4fs_inode *inode)
{
	struct counts *c = &job->c;
	uint16_t fmt = inode->i_mode & EXT4FS_S_IFMT;
	int err;

	c->inodes++;
	if (inode->i_links_count)
		c->linked++;
	if (fmt == EXT4FS_S_IFREG)
		c->regular++;
	else if (fmt == EXT4FS_S_IFDIR)
		c->dirs++;
	else if (fmt == EXT4FS_S_IFLNK)
		c->symlinks++;
	else
		c->other++;
	int walk_entries = fmt == EXT4FS_S_IFDIR && inode->i_links_count;
	struct visit_arg va = { fs, c, walk_entries && job->window > 0 };
	uint64_t before = c->runs + c->map_blocks, data_before = c->data_blocks;
	err = ext4fs_block_iterate(fs, ino, inode, 0, block_visit, &va);
	if (err)
		report_error(job, "%s", ext4fs_errmsg(fs));
	if (fmt == EXT4FS_S_IFDIR)
		c->dir_blocks += c->data_blocks - data_before;
	if (ext4fs_inode_has_inline_data(inode))
		c->inline_inodes++;
	else if (ext4fs_inode_has_extents(inode))
		c->extent_inodes++;
	else if (c->runs + c->map_blocks > before)
		c->blockmap_inodes++;
	if (walk_entries) {
		if (inode->i_flags & EXT4FS_INDEX_FL)
			c->htree_dirs++;
		if (job->window)
			pending_push(job, fs, ino, inode);
		else
			walk_dir(job, fs, ino, inode);
	}
}

static void *run_job(void *arg)
{
	struct job *job = arg;
	struct ext4fs_open_opts opts = { .flags = job->open_flags };
	struct ext4fs_fs *fs = NULL;
	struct ext4fs_scan *scan = NULL;
	struct ext4fs_inode inode;
	char msg[256];
	uint32_t ino;
	int csum_ok, err;

	err = ext4fs_open(job->path, &opts, &fs, msg, sizeof(msg));
	if (err) {
		report_error(job, "%s: %s", job->path, msg);
		job->failed = 1;
		return NULL;
	}
	if (job->window) {
		job->pending = calloc(job->window, sizeof(*job->pending));
		if (!job->pending) {
			report_error(job, "no memory for %u pending directories", job->window);
			job->failed = 1;
			goto out;
		}
	}
	err = ext4fs_scan_open(fs, job->first_group, job->last_group, 0, &scan);
	if (err) {
		report_error(job, "%s", ext4fs_errmsg(fs));
		job->failed = 1;
		goto out;
	}
	while ((err = ext4fs_scan_next(scan, &ino, &inode, NULL, &csum_ok)) > 0) {
		job->c.scanned++;
		if (ext4fs_bitmap_test(job->ibm, ino) != 1)
			continue;
		if (!csum_ok) {
			job->c.csum_bad++;
			if (!(job->open_flags & EXT4FS_OPEN_IGNORE_CSUM)) {
				report_error(job, "inode %u checksum does not match", ino);
				continue;
			}
		}
		walk_inode(job, fs, ino, &inode);
	}
	while (job->pend_count)
		pending_pop(job, fs);
	if (err < 0) {
		report_error(job, "%s", ext4fs_errmsg(fs));
		job->failed = 1;
	}
	job->c.itable_read = ext4fs_scan_blocks_read(scan);
	job->c.itable_skipped = ext4fs_scan_blocks_skipped(scan);
out:
	if (fs) {
		const struct ext4fs_io_stats *st = &ext4fs_fs_io(fs)->stats;
		job->c.io_reads = st->reads;
		job->c.io_bytes = st->bytes_read;
	}
	ext4fs_scan_close(scan);
	ext4fs_close(fs);
	free(job->pending);
	job->pending = NULL;
	return NULL;
}

static void add_counts(struct counts *t, const struct counts *c)
{
	const uint64_t *src = (const uint64_t *)c;
	uint64_t *dst = (uint64_t *)t;

	for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		dst[i] += src[i];
}

/* Cut [0, group_count) into n slices of roughly equal in-use inodes. */
static void split_groups(struct ext4fs_fs *fs, struct job *jobs, unsigned n)
{
	const struct ext4fs_geom *g = ext4fs_geom(fs);
	uint64_t total = 0, acc = 0;
	uint32_t grp = 0;

	for (uint32_t i = 0; i < g->group_count; i++) {
		uint32_t free_i = ext4fs_group(fs, i)->free_inodes_count;
		total += free_i < g->inodes_per_group ? g->inodes_per_group - free_i : 0;
	}
	for (unsigned t = 0; t < n; t++) {
		uint64_t want = total * (t + 1) / n;
		jobs[t].first_group = grp;
		if (t == n - 1) {
			grp = g->group_count;
		} else {
			/* at least one group each, leaving one for every later slice */
			do {
				uint32_t free_i = ext4fs_group(fs, grp)->free_inodes_count;
				acc += free_i < g->inodes_per_group ? g->inodes_per_group - free_i : 0;
				grp++;
			} while (acc < want && grp < g->group_count - (n - 1 - t));
		}
		jobs[t].last_group = grp - 1;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: ext4fs-walk [-j THREADS] [-W DIRS] [-i] [-v] IMAGE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned nthreads = 1, open_flags = 0, window = DEFAULT_WINDOW;
	struct ext4fs_open_opts opts = { 0 };
	struct ext4fs_fs *fs = NULL;
	struct ext4fs_bitmap *ibm = NULL;
	struct job jobs[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	struct counts t;
	char msg[256];
	int opt, err, failed = 0;
	double t0 = now_s();

	while ((opt = getopt(argc, argv, "j:W:iv")) != -1) {
		switch (opt) {
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > MAX_THREADS)
				usage();
			nthreads = (unsigned)v;
			break;
		}
		case 'W': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 1000000)
				usage();
			window = (unsigned)v;
			break;
		}
		case 'i': open_flags |= EXT4FS_OPEN_IGNORE_CSUM; break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	const char *path = argv[optind];

	opts.flags = open_flags;
	err = ext4fs_open(path, &opts, &fs, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "ext4fs-walk: %s: %s\n", path, msg);
		return 2;
	}
	const struct ext4fs_geom *geom = ext4fs_geom(fs);
	const struct ext4fs_super *sb = ext4fs_sb(fs);
	if (nthreads > geom->group_count)
		nthreads = geom->group_count;
	err = ext4fs_inode_bitmap_load(fs, &ibm);
	if (err) {
		fprintf(stderr, "ext4fs-walk: %s\n", ext4fs_errmsg(fs));
		ext4fs_close(fs);
		return 2;
	}

	memset(jobs, 0, sizeof(jobs));
	for (unsigned i = 0; i < nthreads; i++) {
		jobs[i].path = path;
		jobs[i].open_flags = open_flags;
		jobs[i].ibm = ibm;
		jobs[i].window = window;
	}
	split_groups(fs, jobs, nthreads);
	if (nthreads == 1) {
		run_job(&jobs[0]);
	} else {
		for (unsigned i = 0; i < nthreads; i++) {
			err = pthread_create(&tids[i], NULL, run_job, &jobs[i]);
			if (err) {
				fprintf(stderr, "ext4fs-walk: pthread_create: %s\n", strerror(err));
				return 2;
			}
		}
		for (unsigned i = 0; i < nthreads; i++)
			pthread_join(tids[i], NULL);
	}

	memset(&t, 0, sizeof(t));
	for (unsigned i = 0; i < nthreads; i++) {
		add_counts(&t, &jobs[i].c);
		failed |= jobs[i].failed;
	}
	/* the main handle read the superblock, descriptors and inode bitmaps */
	t.io_reads += ext4fs_fs_io(fs)->stats.reads;
	t.io_bytes += ext4fs_fs_io(fs)->stats.bytes_read;

	uint64_t bitmap_used = ext4fs_bitmap_count_set(ibm, 1, geom->inodes_count);
	uint64_t sb_used = (uint64_t)geom->inodes_count - sb->s_free_inodes_count;
	uint64_t gd_free = 0;
	for (uint32_t i = 0; i < geom->group_count; i++)
		gd_free += ext4fs_group(fs, i)->free_inodes_count;
	uint64_t gd_used = (uint64_t)geom->inodes_count - gd_free;

	double wall = now_s() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);

	int count_ok = t.inodes == sb_used && t.inodes == bitmap_used;
	printf("image:          %s\n", path);
	printf("groups:         %u (%u inodes each), threads: %u, directory window: %u\n",
	       geom->group_count, geom->inodes_per_group, nthreads, window);
	printf("inodes in use:  %llu  (superblock %llu, descriptors %llu, bitmap %llu) %s\n",
	       (unsigned long long)t.inodes, (unsigned long long)sb_used,
	       (unsigned long long)gd_used, (unsigned long long)bitmap_used,
	       count_ok ? "OK" : "MISMATCH");
	printf("  regular %llu, directories %llu, symlinks %llu, other %llu; linked %llu\n",
	       (unsigned long long)t.regular, (unsigned long long)t.dirs,
	       (unsigned long long)t.symlinks, (unsigned long long)t.other,
	       (unsigned long long)t.linked);
	printf("  extent-mapped %llu, block-mapped %llu, inline %llu; bad checksums %llu\n",
	       (unsigned long long)t.extent_inodes, (unsigned long long)t.blockmap_inodes,
	       (unsigned long long)t.inline_inodes, (unsigned long long)t.csum_bad);
	printf("extents/runs:   %llu  (data blocks %llu, extent/indirect blocks %llu)\n",
	       (unsigned long long)t.runs, (unsigned long long)t.data_blocks,
	       (unsigned long long)t.map_blocks);
	printf("dir entries:    %llu  (%llu directory blocks, %llu htree dirs)\n",
	       (unsigned long long)t.dir_entries, (unsigned long long)t.dir_blocks,
	       (unsigned long long)t.htree_dirs);
	printf("inode records:  %llu scanned; inode-table blocks read %llu, skipped %llu\n",
	       (unsigned long long)t.scanned, (unsigned long long)t.itable_read,
	       (unsigned long long)t.itable_skipped);
	printf("I/O:            %llu reads, %.1f MiB\n", (unsigned long long)t.io_reads,
	       (double)t.io_bytes / 1048576.0);
	printf("errors:         %llu\n", (unsigned long long)t.errors);
	printf("time:           wall %.3f s, user %.3f s, sys %.3f s, peak RSS %ld KiB\n", wall,
	       tv_s(ru.ru_utime), tv_s(ru.ru_stime), ru.ru_maxrss);
	printf("RESULT inodes=%llu runs=%llu data_blocks=%llu map_blocks=%llu dir_entries=%llu "
	       "dir_blocks=%llu errors=%llu wall=%.3f user=%.3f sys=%.3f maxrss_kb=%ld\n",
	       (unsigned long long)t.inodes, (unsigned long long)t.runs,
	       (unsigned long long)t.data_blocks, (unsigned long long)t.map_blocks,
	       (unsigned long long)t.dir_entries, (unsigned long long)t.dir_blocks,
	       (unsigned long long)t.errors, wall, tv_s(ru.ru_utime), tv_s(ru.ru_stime),
	       ru.ru_maxrss);

	ext4fs_bitmap_free(ibm);
	ext4fs_close(fs);
	return failed || t.errors || !count_ok ? 1 : 0;
}
