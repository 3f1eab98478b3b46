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
#include "../debugfs/json.h"
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

void report_summary(struct e4fsck *ctx)
{
	const struct ext4fs_super *sb = ext4fs_sb(ctx->fs);
	uint64_t inodes_used = (uint64_t)sb->s_inodes_count - sb->s_free_inodes_count;
	uint64_t blocks = ctx->geo->blocks_count, free_blocks = ctx->geo->free_blocks_count;
	/* Tenths of a percent, rounded, as e2fsck prints them. */
	uint64_t frag = inodes_used ? (ctx->files_fragmented * 10000 / inodes_used + 5) / 10 : 0;

	if ((ctx->fs_changed || ctx->fs_modified) && ctx->mode != MODE_PREEN)
		printf("\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n", ctx->device);
	if ((ctx->exit_status & FSCK_UNCORRECTED) && ctx->mode != MODE_PREEN)
		printf("\n%s: ********** WARNING: Filesystem still has errors **********\n\n", ctx->device);
	printf("%s: %" PRIu64 "/%" PRIu32 " files (%" PRIu64 ".%" PRIu64 "%% non-contiguous), %" PRIu64
	       "/%" PRIu64 " blocks\n",
	       ctx->device, inodes_used, sb->s_inodes_count, frag / 10, frag % 10,
	       blocks - (free_blocks < blocks ? free_blocks : blocks), blocks);
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
	json_object_end(&j);
	json_finish(&j);
	if (f != stdout && fclose(f)) {
		fprintf(stderr, "%s: %s while writing %s\n", ctx->prog, strerror(errno), ctx->json_path);
		return -1;
	}
	return 0;
}
