/* io_fault.c - the fault-injecting channel (see io_fault.h). */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "ext4fs/io_fault.h"
#include "io_internal.h"

/* A write since the last flush: what was there and what was put there (NULL: zeros). */
struct unflushed {
	uint64_t offset;
	uint64_t len;
	unsigned char *old;
	unsigned char *new_bytes;
};

struct fault {
	struct ext4fs_io *inner;
	struct ext4fs_io_fault_spec spec;
	char *count_path;
	struct ext4fs_io_fault_counts counts;
	int dead;
	struct unflushed *log;      /* only kept when a stop may lose them */
	size_t nlog, caplog;
	uint64_t rng;
};

static const struct ext4fs_io_ops fault_ops;

static void forget_unflushed(struct fault *f)
{
	for (size_t i = 0; i < f->nlog; i++) {
		free(f->log[i].old);
		free(f->log[i].new_bytes);
	}
	f->nlog = 0;
}

/* Keep the old and new bytes of a write that is about to happen. */
static int remember(struct fault *f, uint64_t offset, const void *buf, uint64_t len)
{
	struct unflushed u = { offset, len, NULL, NULL };
	int err;

	if (f->spec.lose == EXT4FS_FAULT_LOSE_NONE)
		return 0;
	if (f->nlog == f->caplog) {
		size_t cap = f->caplog ? f->caplog * 2 : 64;
		struct unflushed *n = realloc(f->log, cap * sizeof(*n));
		if (!n)
			return EXT4FS_E_NO_MEMORY;
		f->log = n;
		f->caplog = cap;
	}
	u.old = malloc(len ? len : 1);
	if (buf)
		u.new_bytes = malloc(len ? len : 1);
	if (!u.old || (buf && !u.new_bytes)) {
		free(u.old);
		free(u.new_bytes);
		return EXT4FS_E_NO_MEMORY;
	}
	err = ext4fs_io_read(f->inner, offset, u.old, (size_t)len);
	if (err) {
		free(u.old);
		free(u.new_bytes);
		return err;
	}
	if (buf)
		memcpy(u.new_bytes, buf, len);
	f->log[f->nlog++] = u;
	return 0;
}

static uint32_t next_random(struct fault *f)
{
	f->rng = f->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(f->rng >> 33);
}

static int put_back(struct fault *f, uint64_t offset, const unsigned char *bytes, uint64_t len)
{
	return bytes ? ext4fs_io_write(f->inner, offset, bytes, (size_t)len) : ext4fs_io_zeroout(f->inner, offset, len);
}

/*
 * The power is cut: undo every write since the last flush (the disk as it
 * was then), then, unless all are lost, write again those that survive, in
 * their order, so each sector ends with its last surviving write.
 */
static void lose_cache(struct fault *f)
{
	for (size_t i = f->nlog; i-- > 0;)
		(void)put_back(f, f->log[i].offset, f->log[i].old, f->log[i].len);
	if (f->spec.lose == EXT4FS_FAULT_LOSE_SOME)
		for (size_t i = 0; i < f->nlog; i++)
			if (next_random(f) & 1)
				(void)put_back(f, f->log[i].offset, f->log[i].new_bytes, f->log[i].len);
	forget_unflushed(f);
}

static void die_now(struct fault *f)
{
	f->dead = 1;
	f->counts.triggered = 1;
	lose_cache(f);
}

/* Count a write call; nonzero when it must not happen (the fault, or after a stop). */
static int write_gate(struct fault *f, uint64_t offset, const void *buf, uint64_t len, int *err)
{
	if (f->dead) {
		*err = -EIO;
		return 1;
	}
	f->counts.writes++;
	if (f->spec.at_write != f->counts.writes) {
		*err = remember(f, offset, buf, len);
		return *err != 0;
	}
	*err = -EIO;
	switch (f->spec.action) {
	case EXT4FS_FAULT_FAIL:
		f->counts.triggered = 1;
		return 1;
	case EXT4FS_FAULT_TEAR: {
		uint64_t unit = f->spec.tear_align ? f->spec.tear_align : 512;
		uint64_t part = f->spec.tear_bytes ? f->spec.tear_bytes : len / 2 / unit * unit;
		if (part > len)
			part = len;
		/* The torn prefix is one more write the cache may lose. */
		if (part && remember(f, offset, buf, part) == 0)
			(void)put_back(f, offset, buf, part);
		die_now(f);
		return 1;
	}
	default:
		die_now(f);
		return 1;
	}
}

static int fault_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len)
{
	struct fault *f = io->priv;
	uint64_t bad = f->spec.bad_read_byte;

	/* A bad sector: the byte cannot be read, however often it is asked for. */
	if (bad && bad - 1 >= offset && bad - 1 - offset < len)
		return -EIO;
	return ext4fs_io_read(f->inner, offset, buf, len);
}

static int fault_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len)
{
	struct fault *f = io->priv;
	int err;

	if (write_gate(f, offset, buf, len, &err))
		return err;
	return ext4fs_io_write(f->inner, offset, buf, len);
}

static int fault_zeroout(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct fault *f = io->priv;
	int err;

	if (write_gate(f, offset, NULL, len, &err))
		return err;
	return ext4fs_io_zeroout(f->inner, offset, len);
}

static int fault_discard(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct fault *f = io->priv;
	int err;

	if (write_gate(f, offset, NULL, len, &err))
		return err;
	return ext4fs_io_discard(f->inner, offset, len);
}

static int fault_flush(struct ext4fs_io *io)
{
	struct fault *f = io->priv;
	int err;

	if (f->dead)
		return -EIO;
	f->counts.flushes++;
	if (f->spec.at_flush == f->counts.flushes) {
		if (f->spec.action == EXT4FS_FAULT_FAIL)
			f->counts.triggered = 1;
		else
			die_now(f);
		return -EIO;
	}
	err = ext4fs_io_flush(f->inner);
	if (!err)
		forget_unflushed(f);
	return err;
}

static void fault_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct fault *f = io->priv;

	ext4fs_io_readahead(f->inner, offset, len);
}

static void fault_close(struct ext4fs_io *io)
{
	struct fault *f = io->priv;

	if (f->count_path) {
		FILE *out = fopen(f->count_path, "a");
		if (out) {
			fprintf(out, "writes=%llu flushes=%llu triggered=%d\n", (unsigned long long)f->counts.writes,
				(unsigned long long)f->counts.flushes, f->counts.triggered);
			fclose(out);
		}
	}
	forget_unflushed(f);
	free(f->log);
	free(f->count_path);
	ext4fs_io_close(f->inner);
	free(f);
}

static const struct ext4fs_io_ops fault_ops = {
	.read = fault_read, .write = fault_write, .flush = fault_flush, .readahead = fault_readahead,
	.close = fault_close, .discard = fault_discard, .zeroout = fault_zeroout,
};

int ext4fs_io_fault_wrap(struct ext4fs_io *inner, const struct ext4fs_io_fault_spec *spec,
			 struct ext4fs_io **out)
{
	struct ext4fs_io *io;
	struct fault *f;

	*out = NULL;
	if (spec->action > EXT4FS_FAULT_TEAR || spec->lose > EXT4FS_FAULT_LOSE_SOME)
		return EXT4FS_E_INVALID_ARG;
	f = calloc(1, sizeof(*f));
	if (f && spec->count_path)
		f->count_path = strdup(spec->count_path);
	io = f && (f->count_path || !spec->count_path) ? ext4fs__io_wrapper(&fault_ops, f, inner) : NULL;
	if (!io) {
		if (f)
			free(f->count_path);
		free(f);
		return EXT4FS_E_NO_MEMORY;
	}
	f->inner = inner;
	f->spec = *spec;
	f->spec.count_path = NULL;
	f->rng = spec->lose_seed * 0x9E3779B97F4A7C15ULL + 1;
	*out = io;
	return 0;
}

void ext4fs_io_fault_counts(const struct ext4fs_io *io, struct ext4fs_io_fault_counts *c)
{
	if (io && io->ops == &fault_ops)
		*c = ((const struct fault *)io->priv)->counts;
	else
		memset(c, 0, sizeof(*c));
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return EXT4FS_E_INVALID_ARG;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (errno || *end)
		return EXT4FS_E_INVALID_ARG;
	*v = n;
	return 0;
}

int ext4fs_io_fault_parse(char *text, struct ext4fs_io_fault_spec *spec)
{
	char *item, *save = NULL;

	memset(spec, 0, sizeof(*spec));
	spec->action = EXT4FS_FAULT_STOP;
	for (item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *val = strchr(item, '=');
		uint64_t n;

		if (!val)
			return EXT4FS_E_INVALID_ARG;
		*val++ = '\0';
		if (!strcmp(item, "write") || !strcmp(item, "flush")) {
			if (parse_u64(val, &n) || n == 0 || spec->at_write || spec->at_flush)
				return EXT4FS_E_INVALID_ARG;
			if (item[0] == 'w')
				spec->at_write = n;
			else
				spec->at_flush = n;
		} else if (!strcmp(item, "mode")) {
			if (!strcmp(val, "fail"))
				spec->action = EXT4FS_FAULT_FAIL;
			else if (!strcmp(val, "stop"))
				spec->action = EXT4FS_FAULT_STOP;
			else if (!strcmp(val, "tear"))
				spec->action = EXT4FS_FAULT_TEAR;
			else
				return EXT4FS_E_INVALID_ARG;
		} else if (!strcmp(item, "tear")) {
			if (parse_u64(val, &n) || n > UINT32_MAX)
				return EXT4FS_E_INVALID_ARG;
			spec->tear_bytes = (uint32_t)n;
		} else if (!strcmp(item, "align")) {
			if (parse_u64(val, &n) || n == 0 || n > UINT32_MAX)
				return EXT4FS_E_INVALID_ARG;
			spec->tear_align = (uint32_t)n;
		} else if (!strcmp(item, "lose")) {
			if (!strcmp(val, "none")) {
				spec->lose = EXT4FS_FAULT_LOSE_NONE;
			} else if (!strcmp(val, "all")) {
				spec->lose = EXT4FS_FAULT_LOSE_ALL;
			} else if (parse_u64(val, &n) == 0) {
				spec->lose = EXT4FS_FAULT_LOSE_SOME;
				spec->lose_seed = n;
			} else {
				return EXT4FS_E_INVALID_ARG;
			}
		} else if (!strcmp(item, "readbad")) {
			if (parse_u64(val, &n) || n == UINT64_MAX)
				return EXT4FS_E_INVALID_ARG;
			spec->bad_read_byte = n + 1;
		} else if (!strcmp(item, "count")) {
			if (!*val)
				return EXT4FS_E_INVALID_ARG;
			spec->count_path = val;
		} else {
			return EXT4FS_E_INVALID_ARG;
		}
	}
	return 0;
}
