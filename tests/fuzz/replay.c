/*
 * replay.c - run files through the fuzz target's walker without libFuzzer.
 *
 * usage: replay [FILE|DIR]...
 *
 * Each FILE (or every regular file in each DIR, in name order) is read into
 * a buffer of exactly its size and handed to the target's
 * LLVMFuzzerTestOneInput() (replay is linked with fuzz_image.c, replay_undo
 * with fuzz_undo.c, replay_fsck with fuzz_fsck.c, replay_quota with
 * fuzz_quota.c), so the seed corpus and
 * any crash reproducer can be checked in a normal or sanitizer build.  With
 * no arguments the directory in $FUZZ_CORPUS is used, else $srcdir/corpus
 * (automake sets srcdir for tests; CORPUS_NAME, a compile-time string,
 * renames "corpus").  Exit status: 0 when every input ran (a crash ends the
 * process, which is the failure), 1 when an input could not be read, 77
 * (skip) when there is nothing to run.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz_walk.h"

#ifndef CORPUS_NAME
#define CORPUS_NAME "corpus"
#endif

static int run_file(const char *path, unsigned *count)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t size = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (;;) {
		if (size == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			unsigned char *nbuf = realloc(buf, ncap);
			if (!nbuf) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(buf);
				fclose(f);
				return 1;
			}
			buf = nbuf;
			cap = ncap;
		}
		size_t n = fread(buf + size, 1, cap - size, f);
		size += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		fclose(f);
		return 1;
	}
	fclose(f);
	/* An exact-size copy, so reading one byte too far is caught by ASan. */
	unsigned char *exact = malloc(size ? size : 1);
	if (!exact) {
		free(buf);
		return 1;
	}
	if (size)
		memcpy(exact, buf, size);
	free(buf);
	printf("replay: %s (%zu bytes)\n", path, size);
	fflush(stdout);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	++*count;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, unsigned *count)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int status = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path, count);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n])
			break;
		snprintf(names[n], len, "%s/%s", path, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
			status |= run_file(names[i], count);
		free(names[i]);
	}
	free(names);
	return status;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int status = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			status |= run_path(argv[i], &count);
	} else {
		const char *dir = getenv("FUZZ_CORPUS");
		char buf[4096];
		if (!dir || !*dir) {
			const char *srcdir = getenv("srcdir");
			snprintf(buf, sizeof(buf), "%s/%s", srcdir && *srcdir ? srcdir : ".", CORPUS_NAME);
			dir = buf;
		}
		status |= run_path(dir, &count);
	}
	printf("replay: %u input(s)\n", count);
	if (status)
		return 1;
	return count ? 0 : 77;
}
