/*
 * alloc-bench.c - ext4fs-alloc-bench: throughput and quality of the block
 * allocator on a fresh file system and on an aged one.
 *
 * The image is made in memory by the library's mkfs engine (mke2fs's ext4
 * defaults, no reserved blocks unless -m) and opened read-write.  "Aged"
 * means fragmented to the fill ratio (-f, default 90%): extents are laid
 * out back to back in pairs, a kept one of 9x the size of a small one
 * (1-16 blocks), until the file system is full, then every other extent
 * (the small ones) is freed, leaving the free space in small holes all
 * over the disk.
 *
 * Each workload creates files the way the write path does: a file's
 * blocks are requested in writes of `chunk` blocks, each with the goal
 * just after the file's previous block, with the file's final size in
 * file_blocks when the workload knows it; got < len is followed by a
 * request for the rest.  Files are made in rounds of at most half of the
 * free space; after a round everything it took is freed and all
 * preallocations forgotten, so every round sees the same aged state.
 * Only the allocation calls are timed (CPU time of the process).
 *
 * Quality: extents per file (physically contiguous runs, as the extent
 * tree would merge them) and the allocator's own counters: goal hits,
 * preallocation hits, the pass that served each searched request, groups
 * scanned.
 *
 * usage: ext4fs-alloc-bench [-s MiB] [-b BLOCKSIZE] [-f FILL%] [-n FILES]
 *                           [-m RESERVED%] [-S SEED] [-w WORKLOAD] [-c]
 *   -s  file-system size (default 2048 MiB)
 *   -b  block size (default 4096)
 *   -f  fill of the aged file system, 50-98 (default 90)
 *   -n  small files per small-file workload (default 100000; large
 *       workloads make n/50, the mixed one n/10)
 *   -m  reserved blocks percent (default 0)
 *   -S  random seed (default 1)
 *   -w  run only the workloads whose name contains WORKLOAD
 *   -c  run ext4fs_alloc_check() after each workload (slow)
 *
 * Prints a table; exit status 0, or 1 when an allocation or the check
 * failed, 2 on bad usage or when the image cannot be made.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ext4fs/alloc.h"
#include "ext4fs/fs.h"
#include "ext4fs/io.h"
#include "ext4fs/mkfs.h"

struct opts {
	uint64_t size_mib;
	uint32_t block_size;
	unsigned fill;
	unsigned files;
	double reserved;
	uint64_t seed;
	const char *only;
	int check;
};

struct workload {
	const char *name;
	unsigned small_pct;      /* share of small files */
	uint32_t small_min, small_max;   /* small file sizes, blocks */
	uint64_t large_min_kib, large_max_kib;
	uint32_t chunk_kib;      /* write size; 0 = the whole file in one request */
	int size_known;          /* file_blocks given */
	unsigned files_div;      /* files = opts.files / files_div */
};

static const struct workload workloads[] = {
	{ "small 1-4 blocks, size known", 100, 1, 4, 0, 0, 0, 1, 1 },
	{ "small 1-4 blocks, 1-block writes", 100, 1, 4, 0, 0, 0, 0, 1 },
	{ "large 1-16 MiB, size known", 0, 0, 0, 1024, 16384, 1024, 1, 50 },
	{ "large 1-16 MiB, 256 KiB writes", 0, 0, 0, 1024, 16384, 256, 0, 50 },
	{ "mixed 90% small / 10% 64 KiB-8 MiB", 90, 1, 4, 64, 8192, 128, 0, 10 },
};
#define NWORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

struct ext {
	uint64_t start;
	uint32_t len;
};

struct extents {
	struct ext *v;
	size_t n, cap;
};

struct result {
	uint64_t files, requests, blocks, extents;
	uint64_t small_files, small_extents, large_files, large_extents;
	double cpu;
	struct ext4fs_alloc_stats st;
	int failed;
};

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33);
}

static uint32_t rnd_between(uint32_t lo, uint32_t hi)
{
	return hi > lo ? lo + rnd() % (hi - lo + 1) : lo;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int push(struct extents *x, uint64_t start, uint32_t len)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 4096;
		struct ext *v = realloc(x->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n].start = start;
	x->v[x->n].len = len;
	x->n++;
	return 0;
}

static uint64_t free_blocks(struct ext4fs_fs *fs)
{
	return ext4fs_geom(fs)->free_blocks_count;
}

static int make_image(const struct opts *o, unsigned char **buf, size_t *size, struct ext4fs_fs **fs)
{
	struct ext4fs_mkfs_params p;
	struct ext4fs_mkfs_plan *plan = NULL;
	struct ext4fs_io *io = NULL;
	struct ext4fs_open_opts oo = { .flags = EXT4FS_OPEN_RW };
	uint64_t blocks = o->size_mib * 1024 * 1024 / o->block_size;
	char msg[256];
	int err;

	ext4fs_mkfs_params_init(&p, blocks);
	p.block_size = o->block_size;
	p.reserved_percent = o->reserved;
	p.now = 1700000000;
	p.flags = EXT4FS_MKFS_LAZY_ITABLE_INIT | EXT4FS_MKFS_ASSUME_ZEROED;
	memset(p.uuid, 0x42, sizeof(p.uuid));
	memset(p.hash_seed, 0x17, sizeof(p.hash_seed));
	err = ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "ext4fs-alloc-bench: planning: %s\n", msg);
		return err;
	}
	*size = (size_t)ext4fs_mkfs_plan_geom(plan)->blocks_count * o->block_size;
	*buf = calloc(1, *size);
	if (!*buf) {
		ext4fs_mkfs_plan_free(plan);
		fprintf(stderr, "ext4fs-alloc-bench: no memory for a %zu-byte image\n", *size);
		return -ENOMEM;
	}
	err = ext4fs_io_open_memory(*buf, *size, 1, &io);
	if (!err)
		err = ext4fs_mkfs_write(plan, io, NULL, NULL, NULL, msg, sizeof(msg));
	if (io)
		ext4fs_io_close(io);
	ext4fs_mkfs_plan_free(plan);
	if (err) {
		fprintf(stderr, "ext4fs-alloc-bench: writing the image: %s\n", msg);
		return err;
	}
	io = NULL;
	err = ext4fs_io_open_memory(*buf, *size, 1, &io);
	if (!err)
		err = ext4fs_open_io(io, &oo, fs, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "ext4fs-alloc-bench: opening the image: %s\n", msg);
	else
		ext4fs_set_time(*fs, 1700000000, 0);
	return err;
}

/*
 * Fragment: pairs of (9 * k, k) blocks, k in 1..16, back to back until
 * full, then the small one of each pair freed.
 */
static int age(struct ext4fs_fs *fs, unsigned fill)
{
	struct extents keep = { 0 }, holes = { 0 };
	uint64_t goal = 0;
	unsigned ratio = fill * 10 / (100 - fill);   /* kept : freed, in tenths */
	int err = 0;

	for (int which = 0;; which ^= 1) {
		uint32_t k = rnd_between(1, 16);
		uint32_t len = which ? k : (k * ratio + 5) / 10;
		struct ext4fs_alloc_request req = { .len = len ? len : 1, .min_len = 1, .goal = goal,
						    .flags = EXT4FS_ALLOC_NO_PREALLOC |
							     EXT4FS_ALLOC_USE_RESERVED };
		uint64_t s;
		uint32_t got;

		err = ext4fs_alloc_blocks(fs, &req, &s, &got);
		if (err == EXT4FS_E_NO_SPACE) {
			err = 0;
			break;
		}
		if (err)
			goto out;
		err = push(which ? &holes : &keep, s, got);
		if (err)
			goto out;
		goal = s + got;
	}
	for (size_t i = 0; i < holes.n && !err; i++)
		err = ext4fs_free_blocks(fs, holes.v[i].start, holes.v[i].len);
out:
	if (err)
		fprintf(stderr, "ext4fs-alloc-bench: aging: %s\n", ext4fs_errmsg(fs));
	free(keep.v);
	free(holes.v);
	return err;
}

/* Allocate one file of `blocks` blocks as the write path would; counts its extents. */
static int make_file(struct ext4fs_fs *fs, const struct workload *wl, uint32_t ino, uint64_t blocks,
		     uint32_t chunk, struct extents *taken, struct result *r, uint64_t *next)
{
	uint64_t lblk = 0, prev_end = 0;
	uint64_t extents = 0;
	double t0 = cpu_now();
	int err = 0;

	while (lblk < blocks) {
		uint64_t left = blocks - lblk;
		struct ext4fs_alloc_request req = {
			.ino = ino, .lblk = (uint32_t)lblk, .min_len = 1,
			.len = (uint32_t)(chunk && left > chunk ? chunk : (left > UINT32_MAX ? UINT32_MAX : left)),
			.goal = prev_end, .file_blocks = wl->size_known ? blocks : 0,
		};
		uint64_t s;
		uint32_t got;

		err = ext4fs_alloc_blocks(fs, &req, &s, &got);
		if (err)
			break;
		r->requests++;
		if (s != prev_end || lblk == 0)
			extents++;
		prev_end = s + got;
		lblk += got;
		err = push(taken, s, got);
		if (err)
			break;
	}
	ext4fs_alloc_release_inode(fs, ino);
	r->cpu += cpu_now() - t0;
	r->blocks += lblk;
	r->extents += extents;
	*next = extents;
	return err;
}

/* Counters of one workload: now minus before. */
static void stats_since(struct ext4fs_alloc_stats *now, const struct ext4fs_alloc_stats *before)
{
	now->requests -= before->requests;
	now->blocks_allocated -= before->blocks_allocated;
	now->goal_hits -= before->goal_hits;
	now->prealloc_hits -= before->prealloc_hits;
	for (unsigned i = 0; i < 4; i++)
		now->pass_used[i] -= before->pass_used[i];
	now->groups_scanned -= before->groups_scanned;
	now->buddies_built -= before->buddies_built;
	now->stripe_aligned -= before->stripe_aligned;
	now->extents_examined -= before->extents_examined;
	now->preallocs -= before->preallocs;
	now->prealloc_dropped -= before->prealloc_dropped;
}

static int run_workload(struct ext4fs_fs *fs, const struct workload *wl, const struct opts *o,
			struct result *r)
{
	struct extents taken = { 0 };
	struct ext4fs_alloc_stats before;
	uint32_t bs = ext4fs_geom(fs)->block_size;
	uint32_t chunk = wl->chunk_kib ? (uint32_t)((uint64_t)wl->chunk_kib * 1024 / bs) : 0;
	unsigned files = o->files / wl->files_div;
	uint64_t free0 = free_blocks(fs), r_blocks = ext4fs_geom(fs)->r_blocks_count, used = 0;
	uint64_t budget = (free0 > r_blocks ? free0 - r_blocks : 0) / 2;
	int err = 0;

	memset(r, 0, sizeof(*r));
	ext4fs_alloc_get_stats(fs, &before);
	if (chunk == 0 && wl->chunk_kib)
		chunk = 1;
	if (!wl->size_known && wl->small_pct == 100)
		chunk = 1;
	for (unsigned f = 0; f < files && !err; f++) {
		int small = rnd() % 100 < wl->small_pct;
		uint64_t blocks = small ? rnd_between(wl->small_min, wl->small_max)
					: (uint64_t)rnd_between((uint32_t)wl->large_min_kib,
								(uint32_t)wl->large_max_kib) * 1024 / bs;
		uint64_t ext = 0;
		if (!blocks)
			blocks = 1;
		if (blocks > budget)
			blocks = budget;   /* a small or very full image: no file beyond a round */
		if (used + blocks > budget) {
			/* End of a round: give everything back. */
			for (size_t i = 0; i < taken.n && !err; i++)
				err = ext4fs_free_blocks(fs, taken.v[i].start, taken.v[i].len);
			taken.n = 0;
			used = 0;
			ext4fs_alloc_release_all(fs);
			if (err)
				break;
		}
		err = make_file(fs, wl, 12 + f % 1000000, blocks, chunk, &taken, r, &ext);
		if (err)
			break;
		used += blocks;
		r->files++;
		if (small) {
			r->small_files++;
			r->small_extents += ext;
		} else {
			r->large_files++;
			r->large_extents += ext;
		}
	}
	if (err)
		fprintf(stderr, "ext4fs-alloc-bench: %s: %s\n", wl->name, ext4fs_errmsg(fs));
	for (size_t i = 0; i < taken.n && !err; i++)
		err = ext4fs_free_blocks(fs, taken.v[i].start, taken.v[i].len);
	ext4fs_alloc_release_all(fs);
	free(taken.v);
	ext4fs_alloc_get_stats(fs, &r->st);
	stats_since(&r->st, &before);
	if (!err && free_blocks(fs) != free0) {
		fprintf(stderr, "ext4fs-alloc-bench: %s: free count %llu after, %llu before\n", wl->name,
			(unsigned long long)free_blocks(fs), (unsigned long long)free0);
		err = -EIO;
	}
	if (!err && o->check) {
		err = ext4fs_alloc_check(fs);
		if (err)
			fprintf(stderr, "ext4fs-alloc-bench: %s: check: %s\n", wl->name, ext4fs_errmsg(fs));
	}
	r->failed = err != 0;
	return err;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_row(const char *state, const struct workload *wl, const struct result *r,
		      uint32_t bs)
{
	uint64_t searched = r->st.pass_used[0] + r->st.pass_used[1] + r->st.pass_used[2] +
			    r->st.pass_used[3];
	double cpu = r->cpu > 1e-9 ? r->cpu : 1e-9;
	char small[16] = "-", large[16] = "-", passes[32];

	if (r->small_files)
		snprintf(small, sizeof(small), "%.2f", (double)r->small_extents / (double)r->small_files);
	if (r->large_files)
		snprintf(large, sizeof(large), "%.1f", (double)r->large_extents / (double)r->large_files);
	snprintf(passes, sizeof(passes), "%.1f/%.1f/%.1f/%.1f", pct(r->st.pass_used[0], searched),
		 pct(r->st.pass_used[1], searched), pct(r->st.pass_used[2], searched),
		 pct(r->st.pass_used[3], searched));
	printf("%-6s %-36s %7llu %8llu %7.3f %10.0f %8.0f %6s %7s %6.1f %6.1f %-22s %6.2f\n",
	       state, wl->name, (unsigned long long)r->files, (unsigned long long)r->requests, r->cpu,
	       (double)r->requests / cpu, (double)r->blocks * bs / (1024.0 * 1024.0) / cpu, small,
	       large, pct(r->st.goal_hits, r->requests), pct(r->st.prealloc_hits, r->requests), passes,
	       searched ? (double)r->st.groups_scanned / (double)searched : 0.0);
}

static void usage(void)
{
	fprintf(stderr, "usage: ext4fs-alloc-bench [-s MiB] [-b BLOCKSIZE] [-f FILL%%] [-n FILES] "
			"[-m RESERVED%%] [-S SEED] [-w WORKLOAD] [-c]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .size_mib = 2048, .block_size = 4096, .fill = 90, .files = 100000, .seed = 1 };
	unsigned char *buf = NULL;
	size_t size = 0;
	struct ext4fs_fs *fs = NULL;
	int c, status = 0;

	while ((c = getopt(argc, argv, "s:b:f:n:m:S:w:c")) != -1) {
		switch (c) {
		case 's': o.size_mib = strtoull(optarg, NULL, 0); break;
		case 'b': o.block_size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'f': o.fill = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'n': o.files = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': o.reserved = strtod(optarg, NULL); break;
		case 'S': o.seed = strtoull(optarg, NULL, 0); break;
		case 'w': o.only = optarg; break;
		case 'c': o.check = 1; break;
		default: usage();
		}
	}
	if (optind != argc || o.size_mib < 64 || o.fill < 50 || o.fill > 98 || o.files < 50)
		usage();
	rng_state = o.seed;
	if (make_image(&o, &buf, &size, &fs)) {
		free(buf);
		return 2;
	}
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	printf("ext4fs-alloc-bench: %llu MiB, %u-byte blocks, %u groups of %u blocks, %u groups per flex, "
	       "%llu reserved; aged = %u%% full in holes of 1-16 blocks; seed %llu\n",
	       (unsigned long long)o.size_mib, geo->block_size, geo->group_count, geo->blocks_per_group,
	       geo->groups_per_flex, (unsigned long long)geo->r_blocks_count, o.fill,
	       (unsigned long long)o.seed);
	printf("(cpu s: allocation calls only; ext/file: physically contiguous runs per small / large file;\n"
	       " goal%%, pa%%: of requests; passes: share of searched requests served by pass 0/1/2/3;\n"
	       " grp/srch: groups examined per searched request)\n\n");
	printf("%-6s %-36s %7s %8s %7s %10s %8s %6s %7s %6s %6s %-22s %6s\n", "state", "workload", "files",
	       "requests", "cpu s", "req/s", "MiB/s", "ext/sm", "ext/lg", "goal%", "pa%",
	       "pass0/1/2/3%", "grp/sr");
	for (int aged = 0; aged < 2 && !status; aged++) {
		if (aged) {
			double t0 = cpu_now();
			if (age(fs, o.fill)) {
				status = 1;
				break;
			}
			printf("(aged in %.3f s CPU: %llu of %llu blocks free)\n", cpu_now() - t0,
			       (unsigned long long)free_blocks(fs), (unsigned long long)geo->blocks_count);
		}
		for (unsigned w = 0; w < NWORKLOADS; w++) {
			struct result r;
			if (o.only && !strstr(workloads[w].name, o.only))
				continue;
			if (run_workload(fs, &workloads[w], &o, &r))
				status = 1;
			print_row(aged ? "aged" : "fresh", &workloads[w], &r, geo->block_size);
			fflush(stdout);
		}
	}
	ext4fs_close(fs);
	free(buf);
	return status;
}
