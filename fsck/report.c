/*
 * report.c - timing lines, the closing summary and --json (see report.h).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include "ext4fs/io.h"
#include "ext4fs/super.h"
#include "support/json.h"
#include "report.h"

static struct pass_timer whole_run;

static double seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static void timer_read(const struct e4fsck *ctx, struct pass_timer *t)
{
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &t->wall);
	getrusage(RUSAGE_SELF, &ru);
	t->user = seconds(&ru.ru_utime);
	t->sys = seconds(&ru.ru_stime);
	t->read_bytes = t->write_bytes = 0;
	if (ctx->fs) {
		const struct ext4fs_io *io = ext4fs_fs_io(ctx->fs);
		t->read_bytes = io->stats.bytes_read;
		t->write_bytes = io->stats.bytes_written;
	}
}

static double elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* e2fsck's "Memory used: total/mmap (in use/free), time: wall/user/sys" line. */
static void print_resources(const char *prefix, double wall, double user, double sys, uint64_t rd,
			    uint64_t wr)
{
	struct mallinfo2 mi = mallinfo2();
	double mb_read = (double)rd / (1 << 20), mb_written = (double)wr / (1 << 20);

	printf("%sMemory used: %zuk/%zuk (%zuk/%zuk), time: %5.2f/%5.2f/%5.2f\n", prefix,
	       (mi.arena + 1023) / 1024, (mi.hblkhd + 1023) / 1024, (mi.uordblks + 1023) / 1024,
	       (mi.fordblks + 1023) / 1024, wall, user, sys);
	printf("%sI/O read: %lluMB, write: %lluMB, rate: %.2fMB/s\n", prefix,
	       (unsigned long long)((rd + (1 << 20) - 1) >> 20),
	       (unsigned long long)((wr + (1 << 20) - 1) >> 20),
	       wall > 0 ? (mb_read + mb_written) / wall : 0.0);
}

void timing_begin(struct e4fsck *ctx)
{
	timer_read(ctx, &whole_run);
}

void timer_start(struct e4fsck *ctx, struct pass_timer *t)
{
	timer_read(ctx, t);
}

void timer_stop(struct e4fsck *ctx, struct pass_timer *t, int slot, const char *title)
{
	struct pass_timer now;
	struct pass_time *pt = &ctx->times[slot];
	char prefix[16];

	timer_read(ctx, &now);
	pt->name = title;
	pt->ran = 1;
	pt->wall = elapsed(&t->wall, &now.wall);
	pt->user = now.user - t->user;
	pt->sys = now.sys - t->sys;
	pt->read_bytes = now.read_bytes - t->read_bytes;
	pt->write_bytes = now.write_bytes - t->write_bytes;
	pt->mem_bytes = fsck_memory(ctx);
	if (ctx->timing < 2)
		return;
	/* "Pass 1: Checking ..." -> "Pass 1: " */
	const char *colon = strchr(title, ':');
	snprintf(prefix, sizeof(prefix), "%.*s: ", colon ? (int)(colon - title) : 0, title);
	print_resources(prefix, pt->wall, pt->user, pt->sys, pt->read_bytes, pt->write_bytes);
}

void timing_end(struct e4fsck *ctx)
{
	struct pass_timer now;

	if (!ctx->timing)
		return;
	timer_read(ctx, &now);
	/* The channel is the handle's, so the whole run's I/O is what it counted. */
	print_resources("", elapsed(&whole_run.wall, &now.wall), now.user - whole_run.user,
			now.sys - whole_run.sys, now.read_bytes, now.write_bytes);
}

/*
 * The statistics as e2fsck derives them.  Its counters are 32-bit, and
 * directories account for 2 * directories - 1 of the entries and repeated
 * names (each one's '.', and the '..' of each subdirectory); the rest are
 * files and extra links.
 */
struct statistics {
	uint32_t inodes_used, inodes_count;
	uint64_t blocks_used, blocks_count;
	uint32_t frag_files, frag_dirs;
	uint32_t frag_files_tenths, frag_dirs_tenths, frag_total_tenths;   /* of a percent, rounded */
	uint32_t links, files;
};

static uint32_t tenths_of_percent(uint64_t part, uint64_t whole)
{
	return whole ? (uint32_t)((part * 10000 / whole + 5) / 10) : 0;
}

static void gather_statistics(const struct e4fsck *ctx, struct statistics *st)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	const struct fsck_stats *c = &ctx->stats;
	uint64_t free_blocks = ctx->geo->free_blocks_count;
	uint32_t dir_names = (uint32_t)(2 * c->directories - 1);

	st->inodes_count = sb->s_inodes_count;
	st->inodes_used = sb->s_inodes_count - sb->s_free_inodes_count;
	st->blocks_count = ctx->geo->blocks_count;
	st->blocks_used = st->blocks_count - (free_blocks < st->blocks_count ? free_blocks : st->blocks_count);
	st->frag_dirs = (uint32_t)c->dirs_fragmented;
	st->frag_files = (uint32_t)(ctx->files_fragmented - c->dirs_fragmented);
	st->frag_files_tenths = tenths_of_percent(st->frag_files, st->inodes_used);
	st->frag_dirs_tenths = tenths_of_percent(st->frag_dirs, st->inodes_used);
	st->frag_total_tenths = tenths_of_percent(ctx->files_fragmented, st->inodes_used);
	st->links = (uint32_t)c->extra_links - dir_names;
	st->files = (uint32_t)c->entries - dir_names;
}

static void print_count(uint64_t n, const char *one, const char *many)
{
	printf("%12" PRIu64 " %s\n", n, n == 1 ? one : many);
}

/* e2fsck -v's block, in its layout and plural forms. */
static void print_statistics(const struct e4fsck *ctx, const struct statistics *st)
{
	const struct fsck_stats *c = &ctx->stats;
	unsigned depths = FSCK_EXTENT_DEPTHS;

	printf("\n%12" PRIu32 " %s (%2.2f%%, out of %" PRIu32 ")\n", st->inodes_used,
	       st->inodes_used == 1 ? "inode used" : "inodes used",
	       st->inodes_count ? 100.0 * st->inodes_used / st->inodes_count : 0.0, st->inodes_count);
	printf("%12" PRIu32 " %s (%" PRIu32 ".%" PRIu32 "%%)\n", st->frag_files,
	       st->frag_files == 1 ? "non-contiguous file" : "non-contiguous files", st->frag_files_tenths / 10,
	       st->frag_files_tenths % 10);
	printf("%12" PRIu32 " %s (%" PRIu32 ".%" PRIu32 "%%)\n", st->frag_dirs,
	       st->frag_dirs == 1 ? "non-contiguous directory" : "non-contiguous directories",
	       st->frag_dirs_tenths / 10, st->frag_dirs_tenths % 10);
	printf("             # of inodes with ind/dind/tind blocks: %" PRIu64 "/%" PRIu64 "/%" PRIu64 "\n", c->ind,
	       c->dind, c->tind);
	while (depths && !c->extent_depth[depths - 1])
		depths--;
	if (depths) {
		printf("             Extent depth histogram: ");
		for (unsigned d = 0; d < depths; d++)
			printf("%s%" PRIu64, d ? "/" : "", c->extent_depth[d]);
		printf("\n");
	}
	printf("%12" PRIu64 " %s (%2.2f%%, out of %" PRIu64 ")\n", st->blocks_used,
	       st->blocks_used == 1 ? "block used" : "blocks used",
	       st->blocks_count ? 100.0 * (double)st->blocks_used / (double)st->blocks_count : 0.0, st->blocks_count);
	print_count(c->bad_blocks, "bad block", "bad blocks");
	print_count(c->large_files, "large file", "large files");
	printf("\n");
	print_count(c->regular, "regular file", "regular files");
	print_count(c->directories, "directory", "directories");
	print_count(c->chardevs, "character device file", "character device files");
	print_count(c->blockdevs, "block device file", "block device files");
	print_count(c->fifos, "fifo", "fifos");
	print_count(st->links, "link", "links");
	printf("%12" PRIu64 " %s (%" PRIu64 " %s)\n", c->symlinks, c->symlinks == 1 ? "symbolic link" : "symbolic links",
	       c->fast_symlinks, c->fast_symlinks == 1 ? "fast symbolic link" : "fast symbolic links");
	print_count(c->sockets, "socket", "sockets");
	printf("------------\n");
	print_count(st->files, "file", "files");
}

void report_abort(struct e4fsck *ctx)
{
	if (ctx->fs_changed || ctx->fs_modified)
		printf("\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n", ctx->device);
	if (ctx->exit_status & FSCK_UNCORRECTED)
		printf("\n%s: ********** WARNING: Filesystem still has errors **********\n\n", ctx->device);
	fflush(stdout);
}

void report_summary(struct e4fsck *ctx)
{
	struct statistics st;

	gather_statistics(ctx, &st);
	if ((ctx->fs_changed || ctx->fs_modified) && ctx->mode != MODE_PREEN)
		printf("\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n", ctx->device);
	if ((ctx->exit_status & FSCK_UNCORRECTED) && ctx->mode != MODE_PREEN)
		printf("\n%s: ********** WARNING: Filesystem still has errors **********\n\n", ctx->device);
	if (ctx->verbose) {
		print_statistics(ctx, &st);
		return;
	}
	printf("%s: %" PRIu32 "/%" PRIu32 " files (%" PRIu32 ".%" PRIu32 "%% non-contiguous), %" PRIu64
	       "/%" PRIu64 " blocks\n",
	       ctx->device, st.inodes_used, st.inodes_count, st.frag_total_tenths / 10, st.frag_total_tenths % 10,
	       st.blocks_used, st.blocks_count);
}

/* The statistics block's numbers, under names of their own. */
static void json_statistics(struct json *j, const struct e4fsck *ctx)
{
	const struct fsck_stats *c = &ctx->stats;
	struct statistics st;

	gather_statistics(ctx, &st);
	json_object_begin(j, "statistics");
	json_uint(j, "inodes_used", st.inodes_used);
	json_uint(j, "inodes_count", st.inodes_count);
	json_uint(j, "noncontiguous_files", st.frag_files);
	json_uint(j, "noncontiguous_directories", st.frag_dirs);
	json_uint(j, "inodes_with_ind", c->ind);
	json_uint(j, "inodes_with_dind", c->dind);
	json_uint(j, "inodes_with_tind", c->tind);
	json_array_begin(j, "extent_depth_histogram");
	for (unsigned d = 0; d < FSCK_EXTENT_DEPTHS; d++)
		json_uint(j, NULL, c->extent_depth[d]);
	json_array_end(j);
	json_uint(j, "blocks_used", st.blocks_used);
	json_uint(j, "blocks_count", st.blocks_count);
	json_uint(j, "bad_blocks", c->bad_blocks);
	json_uint(j, "large_files", c->large_files);
	json_uint(j, "regular_files", c->regular);
	json_uint(j, "directories", c->directories);
	json_uint(j, "character_devices", c->chardevs);
	json_uint(j, "block_devices", c->blockdevs);
	json_uint(j, "fifos", c->fifos);
	json_uint(j, "links", st.links);
	json_uint(j, "symbolic_links", c->symlinks);
	json_uint(j, "fast_symbolic_links", c->fast_symlinks);
	json_uint(j, "sockets", c->sockets);
	json_uint(j, "files", st.files);
	json_object_end(j);
}

int report_json(struct e4fsck *ctx)
{
	FILE *f = strcmp(ctx->json_path, "-") ? fopen(ctx->json_path, "w") : stdout;
	struct json j;

	if (!f) {
		fprintf(stderr, "%s: %s while opening %s for the JSON report\n", ctx->prog, strerror(errno),
			ctx->json_path);
		return -1;
	}
	json_init(&j, f);
	json_object_begin(&j, NULL);
	json_string(&j, "device", ctx->device);
	json_int(&j, "exit_status", ctx->exit_status);
	json_bool(&j, "modified", ctx->fs_changed);
	json_uint(&j, "problems_found", ctx->problems);
	json_uint(&j, "problems_fixed", ctx->problems_fixed);
	json_array_begin(&j, "problems");
	for (size_t i = 0; i < ctx->nlog; i++) {
		const struct problem_record *r = &ctx->log[i];
		char code[16];
		snprintf(code, sizeof(code), "0x%06" PRIx32, r->code);
		json_object_begin(&j, NULL);
		json_string(&j, "id", r->id);
		json_string(&j, "code", code);
		json_int(&j, "pass", r->pass);
		if (r->ino)
			json_uint(&j, "inode", r->ino);
		if (r->blk)
			json_uint(&j, "block", r->blk);
		if (r->num)
			json_uint(&j, "number", r->num);
		json_uint(&j, "group", r->group);
		json_string(&j, "message", r->message);
		json_string(&j, "action", r->fixed ? "fixed" : "none");
		json_object_end(&j);
	}
	json_array_end(&j);
	json_array_begin(&j, "passes");
	for (int s = 0; s < TIME_SLOTS; s++) {
		const struct pass_time *pt = &ctx->times[s];
		if (!pt->ran)
			continue;
		json_object_begin(&j, NULL);
		json_string(&j, "name", pt->name);
		json_double(&j, "wall_s", pt->wall);
		json_double(&j, "user_s", pt->user);
		json_double(&j, "sys_s", pt->sys);
		json_uint(&j, "read_bytes", pt->read_bytes);
		json_uint(&j, "write_bytes", pt->write_bytes);
		json_uint(&j, "map_bytes", pt->mem_bytes);
		json_object_end(&j);
	}
	json_array_end(&j);
	/* Only a check that went through every pass has figures to give. */
	if (ctx->times[TIME_PASS5].ran)
		json_statistics(&j, ctx);
	json_object_end(&j);
	json_finish(&j);
	if (f != stdout && fclose(f)) {
		fprintf(stderr, "%s: %s while writing %s\n", ctx->prog, strerror(errno), ctx->json_path);
		return -1;
	}
	return 0;
}
