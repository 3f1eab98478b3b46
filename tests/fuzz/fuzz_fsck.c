/*
 * fuzz_fsck.c - libFuzzer target: the whole checker (e4fsck's fsck_check())
 * against hostile images, in process (issue 17).
 *
 * The input is a file-system image, possibly cut short: seeds are stored
 * without their trailing zeros (make-fsck-corpus.sh), so the image is
 * padded back with zeros to the size its superblock gives, up to
 * MAX_IMAGE.  It is checked three times, as a user would:
 *
 *   1. -fn: must not change a byte of the image;
 *   2. -fy: repairs the image (a private copy: the input is never touched);
 *   3. -fn on the repaired image: must find nothing (exit 0) unless the
 *      repair said it could not finish (see repair_claims_clean()).
 *
 * and no check may leave a file descriptor open (a leak would end a long
 * fuzzing run in EMFILE, and e4fsck's restarts and reopenings are where
 * one would hide).
 *
 * Crashes, hangs, reads outside the image, leaks and undefined behaviour
 * are judged by libFuzzer and the sanitizers; a broken promise of 1. or 3.
 * aborts after printing what the last check said.
 *
 * The checker opens paths, not channels (and opens the image again and
 * again: superblock choice, reopening writable, pass 1's workers), so the
 * image lives in a memfd named by its /proc/self/fd path.  Every check
 * starts from a zeroed struct e4fsck as main() does (e4fsck.c), with -f, one
 * pass 1 thread, a fixed clock (so a reproducer replays the same way on
 * any day) and an external journal that cannot be found (so a fuzzed
 * s_journal_dev never sends the checker to a real block device in /dev).
 *
 * The checker's output is silenced by pointing stdio's stdout and stderr
 * at /dev/null for the length of a check (glibc documents them as plain
 * variables): libFuzzer's own FILE and the sanitizers write to fd 2 and are
 * left alone.  FUZZ_FSCK_VERBOSE=1 shows the checker's output instead;
 * FUZZ_FSCK_SAVE=FILE writes the image as -fy left it to FILE, to look at
 * with e4fsck, e2fsck or debugfs; FUZZ_FSCK_PROMISE=0 drops the promise of
 * 3. (the third check still runs), for hunting memory errors past inputs
 * that break it: those end the run, and libFuzzer keeps no input that does.
 * FUZZ_FSCK_ORACLE=PATH names an e2fsck: a broken promise of 3. is then
 * forgiven when that e2fsck breaks the same promise on the same input (its
 * -fy claims all repaired, its -fn then finds problems), since e4fsck
 * repairs as e2fsck does.
 *
 * The same function is linked into tests/fuzz/replay_fsck (no libFuzzer)
 * so the seeds run under "make check" in every build.
 */
#include "config.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "context.h"
#include "fuzz_walk.h"

/* Padding stops here: a fuzzed block count must not cost the fuzzer memory or time. */
#define MAX_IMAGE (16u << 20)
/* The check's clock: after the seeds were made (1700000000), fixed for reproducibility. */
#define CHECK_TIME ((int64_t)1700000000 + 30 * 86400)
/* Where the checker looks for an external journal: nowhere. */
#define NO_EXTERNAL_JOURNAL "/nonexistent/fuzz_fsck-external-journal"

static int verbose = -1;
static int promise = 1;         /* FUZZ_FSCK_PROMISE: hold -fy to its word */
static const char *oracle;      /* FUZZ_FSCK_ORACLE: an e2fsck whose own broken promise excuses ours */
static FILE *devnull;

/* Read the environment once; 0, or -1 when /dev/null cannot be opened. */
static int setup(void)
{
	if (verbose >= 0)
		return devnull || verbose ? 0 : -1;
	const char *v = getenv("FUZZ_FSCK_VERBOSE");
	verbose = v && *v && *v != '0';
	v = getenv("FUZZ_FSCK_PROMISE");
	promise = !v || !*v || *v != '0';
	oracle = getenv("FUZZ_FSCK_ORACLE");
	if (oracle && !*oracle)
		oracle = NULL;
	if (!verbose) {
		devnull = fopen("/dev/null", "we");
		if (!devnull)
			return -1;
		/* The checker prints a lot; a large buffer keeps that to few write()s. */
		setvbuf(devnull, NULL, _IOFBF, 1 << 16);
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (setup())
		abort();
	return 0;
}

/*
 * The size to give the image: what its superblock says the file system
 * takes (s_blocks_count, the high half only with the 64bit feature),
 * capped at MAX_IMAGE; the input's own size when that is larger or the
 * superblock is not there.
 */
static size_t image_size(const uint8_t *data, size_t size)
{
	const uint8_t *sb = data + 1024;

	if (size < 1024 + 0x154)
		return size;
	uint64_t blocks = (uint64_t)sb[4] | (uint64_t)sb[5] << 8 | (uint64_t)sb[6] << 16 | (uint64_t)sb[7] << 24;
	if (sb[0x60] & 0x80)    /* INCOMPAT_64BIT: s_blocks_count_hi */
		blocks |= ((uint64_t)sb[0x150] | (uint64_t)sb[0x151] << 8 | (uint64_t)sb[0x152] << 16 |
			   (uint64_t)sb[0x153] << 24) << 32;
	uint32_t log = sb[0x18] | (uint32_t)sb[0x19] << 8 | (uint32_t)sb[0x1a] << 16 | (uint32_t)sb[0x1b] << 24;
	if (log > 6)
		return size;
	/* Blocks are at least 1 KiB: more than MAX_IMAGE of them is too many, and fewer cannot overflow. */
	uint64_t bytes = blocks > MAX_IMAGE ? MAX_IMAGE : blocks << (10 + log);
	if (bytes > MAX_IMAGE)
		bytes = MAX_IMAGE;
	return bytes > size ? (size_t)bytes : size;
}

/* How many file descriptors the process has open (-1 when /proc cannot say). */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A memfd holding data, zero-padded to total bytes; -1 on failure. */
static int make_image(const uint8_t *data, size_t size, size_t total)
{
	int fd = memfd_create("fuzz_fsck", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if ((size && write(fd, data, size) != (ssize_t)size) || ftruncate(fd, (off_t)total) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One check of path in mode with -f, as main() would run it; returns its
 * exit status.  Output goes to /dev/null unless loud or FUZZ_FSCK_VERBOSE.
 */
static int run_check(const char *path, enum fsck_mode mode, int loud)
{
	FILE *out = stdout, *err = stderr;
	struct e4fsck ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.prog = "e4fsck";
	ctx.device = ctx.path = path;
	ctx.now = CHECK_TIME;
	ctx.mode = mode;
	ctx.force = 1;
	ctx.threads = 1;
	ctx.progress_fd = -1;
	ctx.journal_path = NO_EXTERNAL_JOURNAL;
	if (loud) {
		stdout = stderr;
	} else if (!verbose) {
		stdout = devnull;
		stderr = devnull;
	}
	fsck_check(&ctx);
	fsck_free_ctx(&ctx);
	fflush(stdout);
	fflush(stderr);
	stdout = out;
	stderr = err;
	if (verbose)
		fprintf(stderr, "fuzz_fsck: -f%c exited %d\n", mode == MODE_NO ? 'n' : 'y', ctx.exit_status);
	return ctx.exit_status;
}

/* Whether the image in fd is still exactly data followed by zeros (total bytes). */
static int image_unchanged(int fd, const uint8_t *data, size_t size, size_t total)
{
	if (total == 0)
		return 1;
	const uint8_t *map = mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 1;       /* cannot tell: not a finding */
	static const uint8_t zeros[65536];
	int same = size == 0 || memcmp(map, data, size) == 0;
	for (size_t at = size; same && at < total; at += sizeof(zeros)) {
		size_t n = total - at < sizeof(zeros) ? total - at : sizeof(zeros);
		same = memcmp(map + at, zeros, n) == 0;
	}
	munmap((void *)map, total);
	return same;
}

/*
 * Whether a -fy check that exited status claims to have left a clean file
 * system.  The bits are gathered in ctx->exit_status: FSCK_UNCORRECTED for
 * a question answered no (under -y only those that stop the check), FSCK_ERROR for an
 * operational error or a fatal problem (fatal_end() keeps 4 with it when
 * errors were left).  Without either, every problem met was repaired or
 * needs no repair, so a second check must find nothing: e2fsck's promise.
 */
static int repair_claims_clean(int status)
{
	return !(status & (FSCK_UNCORRECTED | FSCK_ERROR));
}

/* Keep the repaired image for a look with the tools (FUZZ_FSCK_SAVE=FILE). */
static void save_image(int fd, size_t total)
{
	const char *to = getenv("FUZZ_FSCK_SAVE");
	if (!to || !*to)
		return;
	FILE *f = fopen(to, "wb");
	char buf[65536];
	ssize_t n;
	off_t off = 0;
	if (!f)
		return;
	while (off < (off_t)total && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		fwrite(buf, 1, (size_t)n, f);
		off += n;
	}
	fclose(f);
}

/*
 * A broken promise: say which, show what -fn says of path after -fy (when
 * there is a path and -fy ran), and abort for libFuzzer.
 */
static void broken(const char *path, const char *what, int status_y, int status_n)
{
	fprintf(stderr, "fuzz_fsck: broken promise: %s (-fy exited %d, -fn exited %d)\n", what, status_y,
		status_n);
	if (path && status_y >= 0) {
		fprintf(stderr, "fuzz_fsck: what -fn says after -fy:\n");
		run_check(path, MODE_NO, 1);
	}
	fflush(stderr);
	abort();
}

/*
 * Run the oracle on path with one option (-fy or -fn), its output thrown
 * away, killed after a minute.  Its exit status, or -1.
 */
static int run_oracle(const char *path, const char *option)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		/* No configuration file, and no external journal found on a real device. */
		setenv("E2FSCK_CONFIG", "/dev/null", 1);
		execl(oracle, oracle, option, "-j", NO_EXTERNAL_JOURNAL, path, (char *)NULL);
		_exit(127);
	}
	for (int waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited++) {
		if (waited >= 600) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		struct timespec tenth = { 0, 100000000 };
		nanosleep(&tenth, NULL);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * Whether e2fsck (FUZZ_FSCK_ORACLE) breaks the same promise on the same
 * input: its -fy says everything was repaired and its -fn then finds
 * problems.  Such an input shows an e2fsck bug e4fsck follows (issue 17
 * asks for e2fsck's repairs), not one of e4fsck's own.
 */
static int oracle_breaks_it_too(const uint8_t *data, size_t size, size_t total)
{
	char path[] = "/tmp/fuzz_fsck-oracle-XXXXXX";
	int fd = mkstemp(path), same = 0;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size && ftruncate(fd, (off_t)total) == 0) {
		int status_y = run_oracle(path, "-fy");
		if (status_y >= 0 && !(status_y & (FSCK_UNCORRECTED | FSCK_ERROR))) {
			int status_n = run_oracle(path, "-fn");
			same = status_n > 0 && status_n != 127;
		}
	}
	close(fd);
	unlink(path);
	return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t total = image_size(data, size);
	char path[64];
	int fd;

	if (setup())
		return 0;
	/* Counted after setup(), which opens /dev/null once. */
	int fds = open_fds();
	if ((fd = make_image(data, size, total)) < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int status_n = run_check(path, MODE_NO, 0);
	if (!image_unchanged(fd, data, size, total))
		broken(path, "-fn changed the image", -1, status_n);
	int status_y = run_check(path, MODE_YES, 0);
	save_image(fd, total);
	if (repair_claims_clean(status_y)) {
		int again = run_check(path, MODE_NO, 0);
		if (again != FSCK_OK && promise && !(oracle && oracle_breaks_it_too(data, size, total)))
			broken(path, "-fn finds problems after -fy said it repaired everything", status_y, again);
	}
	close(fd);
	if (open_fds() > fds && fds >= 0)
		broken(NULL, "a check left a file descriptor open", status_y, -1);
	return 0;
}
