/*
 * layout.c - ext4fs-layout: how well the data of an image is laid out.
 *
 * Opens an image read-only and measures what a writer's block allocator
 * decided, so that bench/run-populate.sh can compare the images written
 * from the same source tree by mke4fs -d, mke2fs -d and the kernel:
 *
 *  - extents: each regular file's data as physically contiguous runs (taken
 *    in logical order; neighbouring extents, or blocks of a block-mapped
 *    file, merge when one starts right after the other ends), a run longer
 *    than an extent can be (32768 blocks) counting as several.  The ideal
 *    is ceil(blocks / 32768), 0 for a file without blocks.
 *  - consecutive-file distance: the regular files of a directory that have
 *    blocks, sorted by name (or in on-disk entry order with -o disk); for
 *    each neighbouring pair |first block of the next - (last block of the
 *    previous + 1)|, where first and last mean the blocks holding the
 *    lowest and highest logical block.  0 means a reader going through the
 *    directory never seeks.
 *  - directory-to-file distance: for each such file, |its first block -
 *    the first block of the directory naming it|.
 *  - stripe alignment: of the files with at least --large-min blocks, the
 *    share whose first block is a multiple of the stripe width.
 *  - free space: free extents (maximal runs of free blocks in the block
 *    bitmap) and the largest one.
 *
 * Only regular files named by some directory entry count as files (so the
 * journal, resize inode, quota or EA inodes do not); a file with several
 * names counts once for extents and once per name for the distances.
 * Nothing is checked beyond what the library validates while reading.
 *
 * usage: ext4fs-layout [--json] [-o name|disk] [--stripe N] [--large-min N]
 *                      [-i] [-v] IMAGE
 *   --json         one JSON object instead of the table (bench/README.md)
 *   -o name|disk   order of a directory's files for the consecutive-file
 *                  distance (default name: bytewise, the same for every writer)
 *   --stripe N     stripe width in blocks (default s_raid_stripe_width;
 *                  0 there and no --stripe: no alignment figure)
 *   --large-min N  smallest file, in blocks, judged for alignment (default
 *                  the stripe width)
 *   -i             do not fail on checksum mismatches
 *   -v             list the files above their ideal, the consecutive-file
 *                  pairs 1024 blocks or more apart, and every error
 *
 * Exit status: 0, 1 when some inode or directory could not be read (the
 * numbers then leave it out), 2 on bad usage or an image that does not open.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext4fs/bitmap.h"
#include "ext4fs/blockmap.h"
#include "ext4fs/dir.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/scan.h"

#define MAX_EXTENT_LEN 32768u   /* blocks an initialised extent can map */
#define ERRORS_SHOWN 10

struct file_rec {
	uint32_t ino;
	unsigned named : 1;       /* some directory entry names it */
	uint64_t first;           /* block holding the lowest logical block */
	uint64_t last;            /* block holding the highest logical block */
	uint64_t blocks;          /* data blocks (0: empty, inline or unreadable) */
	uint64_t extents;         /* physically contiguous runs, split at MAX_EXTENT_LEN */
};

struct dir_rec {
	uint32_t ino;
	uint64_t first;           /* block holding logical block 0; 0 when it has none */
};

/* A growable array of distances, kept for the median. */
struct dist {
	uint64_t *v;
	size_t n, cap;
	long double sum;
};

struct layout {
	struct ext4fs_fs *fs;
	int by_name;              /* sort a directory's files by name (else entry order) */
	int verbose;
	uint64_t stripe, large_min;
	int stripe_from_sb;
	struct file_rec *files;   /* by increasing inode number (the scan's order) */
	size_t nfiles, files_cap;
	struct dir_rec *dirs;
	size_t ndirs, dirs_cap;
	struct dist pair, to_dir;
	uint64_t files_in_dirless;   /* files whose directory has no block */
	uint64_t errors;
};

/* One named regular file met in a directory. */
struct child {
	size_t name_off;          /* into dir_scan.names, which may move while it grows */
	const char *name;         /* set once the directory has been read */
	uint8_t name_len;
	const struct file_rec *f;
};

struct dir_scan {
	struct layout *L;
	struct child *c;
	size_t n, cap;
	char *names;              /* name bytes of this directory's children */
	size_t names_len, names_cap;
};

/* The run being built while a file's blocks are visited. */
struct run_state {
	struct file_rec *f;
	uint64_t run_start, run_len;
};

static void report(struct layout *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(struct layout *L, const char *fmt, ...)
{
	va_list ap;

	if (L->errors++ >= ERRORS_SHOWN && !L->verbose)
		return;
	va_start(ap, fmt);
	fputs("ext4fs-layout: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(p, ncap * size);
	if (!np) {
		fprintf(stderr, "ext4fs-layout: out of memory\n");
		exit(2);
	}
	*cap = ncap;
	return np;
}

static void dist_add(struct dist *d, uint64_t v)
{
	d->v = grow(d->v, &d->cap, d->n + 1, sizeof(*d->v));
	d->v[d->n++] = v;
	d->sum += v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double dist_mean(const struct dist *d)
{
	return d->n ? (double)(d->sum / d->n) : 0.0;
}

/* Sorts d->v. */
static double dist_median(struct dist *d)
{
	if (!d->n)
		return 0.0;
	qsort(d->v, d->n, sizeof(*d->v), cmp_u64);
	if (d->n % 2)
		return (double)d->v[d->n / 2];
	return ((double)d->v[d->n / 2 - 1] + (double)d->v[d->n / 2]) / 2.0;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static void run_close(struct run_state *rs)
{
	if (rs->run_len)
		rs->f->extents += div_up(rs->run_len, MAX_EXTENT_LEN);
	rs->run_len = 0;
}

static int data_visit(const struct ext4fs_block_visit *v, void *arg)
{
	struct run_state *rs = arg;
	struct file_rec *f = rs->f;

	if (v->kind != EXT4FS_BLOCK_DATA || !v->count)
		return 0;
	if (!f->blocks)
		f->first = v->pblk;
	f->last = v->pblk + v->count - 1;
	f->blocks += v->count;
	if (rs->run_len && v->pblk == rs->run_start + rs->run_len) {
		rs->run_len += v->count;
	} else {
		run_close(rs);
		rs->run_start = v->pblk;
		rs->run_len = v->count;
	}
	return 0;
}

static void add_file(struct layout *L, uint32_t ino, const struct ext4fs_inode *inode)
{
	L->files = grow(L->files, &L->files_cap, L->nfiles + 1, sizeof(*L->files));
	struct file_rec *f = &L->files[L->nfiles++];
	struct run_state rs = { f, 0, 0 };

	memset(f, 0, sizeof(*f));
	f->ino = ino;
	if (ext4fs_inode_has_inline_data(inode))
		return;
	int err = ext4fs_block_iterate(L->fs, ino, inode, EXT4FS_ITER_DATA_ONLY, data_visit, &rs);
	run_close(&rs);
	if (err) {
		report(L, "%s", ext4fs_errmsg(L->fs));
		memset(f, 0, sizeof(*f));
		f->ino = ino;
	}
}

static int first_block_visit(const struct ext4fs_block_visit *v, void *arg)
{
	uint64_t *first = arg;

	if (v->kind != EXT4FS_BLOCK_DATA || !v->count)
		return 0;
	if (v->lblk == 0)
		*first = v->pblk;
	return 1;
}

static void add_dir(struct layout *L, uint32_t ino, const struct ext4fs_inode *inode)
{
	L->dirs = grow(L->dirs, &L->dirs_cap, L->ndirs + 1, sizeof(*L->dirs));
	struct dir_rec *d = &L->dirs[L->ndirs++];

	d->ino = ino;
	d->first = 0;
	if (ext4fs_inode_has_inline_data(inode))
		return;
	int err = ext4fs_block_iterate(L->fs, ino, inode, EXT4FS_ITER_DATA_ONLY,
				       first_block_visit, &d->first);
	if (err < 0)
		report(L, "%s", ext4fs_errmsg(L->fs));
}

/* Pass 1: every in-use regular file's runs and every directory's first block. */
static int scan_inodes(struct layout *L)
{
	const struct ext4fs_geom *g = ext4fs_geom(L->fs);
	struct ext4fs_bitmap *ibm = NULL;
	struct ext4fs_scan *scan = NULL;
	struct ext4fs_inode inode;
	uint32_t ino;
	int csum_ok, err;

	err = ext4fs_inode_bitmap_load(L->fs, &ibm);
	if (!err)
		err = ext4fs_scan_open(L->fs, 0, g->group_count - 1, 0, &scan);
	if (err)
		goto out;
	while ((err = ext4fs_scan_next(scan, &ino, &inode, NULL, &csum_ok)) > 0) {
		if (ext4fs_bitmap_test(ibm, ino) != 1 || !inode.i_links_count)
			continue;
		if (!csum_ok && !(ext4fs_fs_flags(L->fs) & EXT4FS_OPEN_IGNORE_CSUM)) {
			report(L, "inode %" PRIu32 " checksum does not match", ino);
			continue;
		}
		if (EXT4FS_ISREG(inode.i_mode))
			add_file(L, ino, &inode);
		else if (EXT4FS_ISDIR(inode.i_mode))
			add_dir(L, ino, &inode);
	}
out:
	if (err < 0)
		fprintf(stderr, "ext4fs-layout: %s\n", ext4fs_errmsg(L->fs));
	ext4fs_scan_close(scan);
	ext4fs_bitmap_free(ibm);
	return err < 0 ? err : 0;
}

static struct file_rec *find_file(struct layout *L, uint32_t ino)
{
	size_t lo = 0, hi = L->nfiles;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->files[mid].ino == ino)
			return &L->files[mid];
		if (L->files[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int child_visit(const struct ext4fs_dirent *d, void *arg)
{
	struct dir_scan *ds = arg;

	if (d->name_len <= 2 && d->name[0] == '.' && (d->name_len == 1 || d->name[1] == '.'))
		return 0;
	struct file_rec *f = find_file(ds->L, d->inode);
	if (!f)
		return 0;
	f->named = 1;
	ds->names = grow(ds->names, &ds->names_cap, ds->names_len + d->name_len, 1);
	memcpy(ds->names + ds->names_len, d->name, d->name_len);
	ds->c = grow(ds->c, &ds->cap, ds->n + 1, sizeof(*ds->c));
	ds->c[ds->n].name_off = ds->names_len;
	ds->c[ds->n].name_len = d->name_len;
	ds->c[ds->n].f = f;
	ds->n++;
	ds->names_len += d->name_len;
	return 0;
}

static int cmp_child(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (int)x->name_len - (int)y->name_len;
}

/* -v lists the consecutive-file pairs at least this far apart. */
#define FAR_PAIR 1024

/* Pass 2: each directory's files, in name (or entry) order. */
static void walk_dirs(struct layout *L)
{
	struct dir_scan ds = { .L = L };
	struct ext4fs_inode inode;

	for (size_t i = 0; i < L->ndirs; i++) {
		const struct dir_rec *d = &L->dirs[i];
		ds.n = 0;
		ds.names_len = 0;
		int err = ext4fs_inode_read(L->fs, d->ino, &inode);
		if (!err)
			err = ext4fs_dir_iterate(L->fs, d->ino, &inode, 0, child_visit, &ds);
		if (err) {
			report(L, "%s", ext4fs_errmsg(L->fs));
			continue;
		}
		for (size_t k = 0; k < ds.n; k++)
			ds.c[k].name = ds.names + ds.c[k].name_off;
		if (L->by_name && ds.n > 1)
			qsort(ds.c, ds.n, sizeof(*ds.c), cmp_child);
		const struct file_rec *prev = NULL;
		for (size_t k = 0; k < ds.n; k++) {
			const struct file_rec *f = ds.c[k].f;
			if (!f->blocks)
				continue;
			if (prev) {
				uint64_t gap = absdiff(f->first, prev->last + 1);
				dist_add(&L->pair, gap);
				if (L->verbose && gap >= FAR_PAIR)
					printf("far pair in directory %u: inode %u (%" PRIu64 "-%" PRIu64 ", %" PRIu64
					       " blocks) then inode %u at %" PRIu64 " (%" PRIu64 " blocks): %" PRIu64 "\n",
					       d->ino, prev->ino, prev->first, prev->last, prev->blocks,
					       f->ino, f->first, f->blocks, gap);
			}
			prev = f;
			if (d->first)
				dist_add(&L->to_dir, absdiff(f->first, d->first));
			else
				L->files_in_dirless++;
		}
	}
	free(ds.c);
	free(ds.names);
}

struct free_space {
	uint64_t free_blocks, extents, largest;
};

static int measure_free(struct ext4fs_fs *fs, struct free_space *fsp)
{
	struct ext4fs_bitmap *bbm = NULL;
	uint64_t pos, start, end;
	int err = ext4fs_block_bitmap_load(fs, &bbm);

	memset(fsp, 0, sizeof(*fsp));
	if (err) {
		fprintf(stderr, "ext4fs-layout: %s\n", ext4fs_errmsg(fs));
		return err;
	}
	pos = ext4fs_bitmap_start(bbm);
	end = ext4fs_bitmap_end(bbm);
	while (pos <= end && ext4fs_bitmap_find(bbm, pos, end, 0, &start) == 0) {
		uint64_t used;
		if (ext4fs_bitmap_find(bbm, start, end, 1, &used) != 0)
			used = end + 1;
		uint64_t len = used - start;
		fsp->free_blocks += len;
		fsp->extents++;
		if (len > fsp->largest)
			fsp->largest = len;
		pos = used;
	}
	ext4fs_bitmap_free(bbm);
	return 0;
}

struct totals {
	uint64_t files, files_with_blocks, data_blocks, extents, ideal, above_ideal, excess;
	uint64_t large, aligned;
};

static void sum_files(struct layout *L, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < L->nfiles; i++) {
		const struct file_rec *f = &L->files[i];
		if (!f->named)
			continue;
		t->files++;
		if (!f->blocks)
			continue;
		uint64_t ideal = div_up(f->blocks, MAX_EXTENT_LEN);
		t->files_with_blocks++;
		t->data_blocks += f->blocks;
		t->extents += f->extents;
		t->ideal += ideal;
		if (f->extents > ideal) {
			t->above_ideal++;
			t->excess += f->extents - ideal;
			if (L->verbose)
				printf("above ideal: inode %" PRIu32 ": %" PRIu64 " blocks, %" PRIu64
				       " extents (ideal %" PRIu64 "), first block %" PRIu64 "\n",
				       f->ino, f->blocks, f->extents, ideal, f->first);
		}
		if (L->stripe && f->blocks >= L->large_min) {
			t->large++;
			if (f->first % L->stripe == 0)
				t->aligned++;
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: ext4fs-layout [--json] [-o name|disk] [--stripe BLOCKS] "
		"[--large-min BLOCKS] [-i] [-v] IMAGE\n");
	exit(2);
}

static uint64_t parse_u64(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || end == s || *end || *s == '-')
		usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "order", required_argument, NULL, 'o' },
		{ "stripe", required_argument, NULL, 's' },
		{ "large-min", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct layout L = { .by_name = 1 };
	struct ext4fs_open_opts opts = { 0 };
	struct free_space fsp;
	struct totals t;
	char msg[256];
	int opt, json = 0, have_stripe = 0, have_large = 0;

	while ((opt = getopt_long(argc, argv, "o:iv", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = 1; break;
		case 'o':
			if (!strcmp(optarg, "name"))
				L.by_name = 1;
			else if (!strcmp(optarg, "disk"))
				L.by_name = 0;
			else
				usage();
			break;
		case 's': L.stripe = parse_u64(optarg); have_stripe = 1; break;
		case 'l': L.large_min = parse_u64(optarg); have_large = 1; break;
		case 'i': opts.flags |= EXT4FS_OPEN_IGNORE_CSUM; break;
		case 'v': L.verbose = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	const char *path = argv[optind];

	int err = ext4fs_open(path, &opts, &L.fs, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "ext4fs-layout: %s: %s\n", path, msg);
		return 2;
	}
	const struct ext4fs_geom *g = ext4fs_geom(L.fs);
	if (!have_stripe) {
		L.stripe = ext4fs_sb(L.fs)->s_raid_stripe_width;
		L.stripe_from_sb = 1;
	}
	if (!have_large)
		L.large_min = L.stripe;
	if (!L.large_min)
		L.large_min = 1;

	if (scan_inodes(&L) || measure_free(L.fs, &fsp)) {
		ext4fs_close(L.fs);
		return 2;
	}
	walk_dirs(&L);
	sum_files(&L, &t);

	uint64_t fs_blocks = g->blocks_count - g->first_data_block;
	uint64_t used = fs_blocks - fsp.free_blocks;
	double pair_mean = dist_mean(&L.pair), pair_median = dist_median(&L.pair);
	double dir_mean = dist_mean(&L.to_dir), dir_median = dist_median(&L.to_dir);
	double aligned_pct = t.large ? 100.0 * (double)t.aligned / (double)t.large : 0.0;
	const char *order = L.by_name ? "name" : "disk";

	if (json) {
		printf("{\"image\": \"");
		for (const char *p = path; *p; p++) {
			if (*p == '"' || *p == '\\')
				putchar('\\');
			putchar(*p);
		}
		printf("\", \"block_size\": %" PRIu32 ", \"blocks\": %" PRIu64
		       ", \"used_blocks\": %" PRIu64 ", \"files\": %" PRIu64
		       ", \"files_with_blocks\": %" PRIu64 ", \"dirs\": %zu"
		       ", \"data_blocks\": %" PRIu64 ", \"extents\": %" PRIu64
		       ", \"ideal_extents\": %" PRIu64 ", \"files_above_ideal\": %" PRIu64
		       ", \"excess_extents\": %" PRIu64 ", \"order\": \"%s\""
		       ", \"pair_count\": %zu, \"pair_mean\": %.3f, \"pair_median\": %.1f"
		       ", \"dir_file_count\": %zu, \"dir_file_mean\": %.3f, \"dir_file_median\": %.1f"
		       ", \"stripe\": %" PRIu64 ", \"large_min\": %" PRIu64
		       ", \"large_files\": %" PRIu64 ", \"large_aligned\": %" PRIu64
		       ", \"large_aligned_pct\": %.2f, \"free_blocks\": %" PRIu64
		       ", \"free_extents\": %" PRIu64 ", \"largest_free\": %" PRIu64
		       ", \"errors\": %" PRIu64 "}\n",
		       g->block_size, g->blocks_count, used, t.files, t.files_with_blocks, L.ndirs,
		       t.data_blocks, t.extents, t.ideal, t.above_ideal, t.excess, order,
		       L.pair.n, pair_mean, pair_median, L.to_dir.n, dir_mean, dir_median,
		       L.stripe, L.large_min, t.large, t.aligned, aligned_pct, fsp.free_blocks,
		       fsp.extents, fsp.largest, L.errors);
	} else {
		printf("image:               %s\n", path);
		printf("blocks:              %" PRIu64 " of %" PRIu32 " bytes, %" PRIu64
		       " used, %" PRIu64 " free\n",
		       g->blocks_count, g->block_size, used, fsp.free_blocks);
		printf("files:               %" PRIu64 " regular (%" PRIu64 " with blocks, %" PRIu64
		       " data blocks), %zu directories\n",
		       t.files, t.files_with_blocks, t.data_blocks, L.ndirs);
		printf("extents:             %" PRIu64 " (ideal %" PRIu64 "); %" PRIu64
		       " files above their ideal by %" PRIu64 " extents\n",
		       t.extents, t.ideal, t.above_ideal, t.excess);
		printf("next-file distance:  mean %.1f, median %.1f blocks over %zu pairs (%s order)\n",
		       pair_mean, pair_median, L.pair.n, order);
		printf("dir-to-file:         mean %.1f, median %.1f blocks over %zu files",
		       dir_mean, dir_median, L.to_dir.n);
		if (L.files_in_dirless)
			printf(" (%" PRIu64 " more in directories without blocks)", L.files_in_dirless);
		putchar('\n');
		if (L.stripe)
			printf("stripe alignment:    %" PRIu64 " of %" PRIu64 " files of >= %" PRIu64
			       " blocks start on a multiple of %" PRIu64 " (%.1f%%; stripe from %s)\n",
			       t.aligned, t.large, L.large_min, L.stripe, aligned_pct,
			       L.stripe_from_sb ? "the superblock" : "--stripe");
		else
			printf("stripe alignment:    n/a (no stripe width in the superblock; --stripe N)\n");
		printf("free space:          %" PRIu64 " free extents, largest %" PRIu64 " blocks\n",
		       fsp.extents, fsp.largest);
		if (L.errors)
			printf("errors:              %" PRIu64 " (those objects are left out)\n", L.errors);
	}

	free(L.files);
	free(L.dirs);
	free(L.pair.v);
	free(L.to_dir.v);
	ext4fs_close(L.fs);
	return L.errors ? 1 : 0;
}
