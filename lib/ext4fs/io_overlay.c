/*
 * io_overlay.c - the overlay channel (see io_overlay.h).
 *
 * Written pages live in an open-addressing hash table keyed by page
 * number (linear probing, never more than half full, nothing ever removed,
 * so a probe ends at the first empty slot).  A write that covers part of
 * a page not yet kept first reads the page from below, so a kept page is
 * always whole.  A read takes each run of pages from one side: the kept
 * pages one by one, the lower channel in one call per run of pages it
 * still holds.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "ext4fs/io_overlay.h"
#include "io_internal.h"

#define PAGE 4096u

struct slot {
	uint64_t page;
	unsigned char *bytes;    /* NULL: empty slot */
};

struct overlay {
	struct ext4fs_io *lower;
	struct slot *slots;
	size_t cap;              /* a power of two */
	size_t used;
};

static const struct ext4fs_io_ops overlay_ops;

static size_t hash(uint64_t page, size_t cap)
{
	return (size_t)((page * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static unsigned char *kept(const struct overlay *o, uint64_t page)
{
	for (size_t i = hash(page, o->cap);; i = (i + 1) & (o->cap - 1)) {
		if (!o->slots[i].bytes)
			return NULL;
		if (o->slots[i].page == page)
			return o->slots[i].bytes;
	}
}

static void put(struct slot *slots, size_t cap, uint64_t page, unsigned char *bytes)
{
	size_t i = hash(page, cap);

	while (slots[i].bytes)
		i = (i + 1) & (cap - 1);
	slots[i] = (struct slot){ page, bytes };
}

static int grow(struct overlay *o)
{
	size_t cap = o->cap * 2;
	struct slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return EXT4FS_E_NO_MEMORY;
	for (size_t i = 0; i < o->cap; i++)
		if (o->slots[i].bytes)
			put(slots, cap, o->slots[i].page, o->slots[i].bytes);
	free(o->slots);
	o->slots = slots;
	o->cap = cap;
	return 0;
}

/* The bytes of page, kept from now on: read from below the first time. */
static int keep(struct overlay *o, uint64_t page, unsigned char **out)
{
	uint64_t at = page * PAGE, len;
	unsigned char *bytes = kept(o, page);
	int err;

	if (bytes) {
		*out = bytes;
		return 0;
	}
	if ((o->used + 1) * 2 > o->cap && (err = grow(o)))
		return err;
	if (!(bytes = calloc(1, PAGE)))
		return EXT4FS_E_NO_MEMORY;
	len = o->lower->size - at < PAGE ? o->lower->size - at : PAGE;
	if ((err = ext4fs_io_read(o->lower, at, bytes, (size_t)len))) {
		free(bytes);
		return err;
	}
	put(o->slots, o->cap, page, bytes);
	o->used++;
	*out = bytes;
	return 0;
}

static int overlay_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len)
{
	struct overlay *o = io->priv;
	unsigned char *out = buf;

	while (len) {
		uint64_t page = offset / PAGE;
		size_t in = (size_t)(offset % PAGE), k = PAGE - in < len ? PAGE - in : len;
		const unsigned char *bytes = kept(o, page);
		int err;

		if (bytes) {
			memcpy(out, bytes + in, k);
		} else {
			/* Widen to the pages below that follow, kept by nobody. */
			while (k < len && !kept(o, (offset + k) / PAGE))
				k += len - k < PAGE ? len - k : PAGE;
			if ((err = ext4fs_io_read(o->lower, offset, out, k)))
				return err;
		}
		out += k;
		offset += k;
		len -= k;
	}
	return 0;
}

static int overlay_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len)
{
	struct overlay *o = io->priv;
	const unsigned char *in = buf;

	while (len) {
		size_t at = (size_t)(offset % PAGE), k = PAGE - at < len ? PAGE - at : len;
		unsigned char *bytes;
		int err;

		if (at == 0 && k == PAGE && !kept(o, offset / PAGE)) {
			/* A whole new page: nothing below is needed. */
			if ((o->used + 1) * 2 > o->cap && (err = grow(o)))
				return err;
			if (!(bytes = malloc(PAGE)))
				return EXT4FS_E_NO_MEMORY;
			put(o->slots, o->cap, offset / PAGE, bytes);
			o->used++;
		} else if ((err = keep(o, offset / PAGE, &bytes))) {
			return err;
		}
		memcpy(bytes + at, in, k);
		in += k;
		offset += k;
		len -= k;
	}
	return 0;
}

static int overlay_flush(struct ext4fs_io *io)
{
	(void)io;
	return 0;
}

static void overlay_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct overlay *o = io->priv;

	ext4fs_io_readahead(o->lower, offset, len);
}

static void overlay_close(struct ext4fs_io *io)
{
	struct overlay *o = io->priv;

	for (size_t i = 0; i < o->cap; i++)
		free(o->slots[i].bytes);
	free(o->slots);
	ext4fs_io_close(o->lower);
	free(o);
}

static const struct ext4fs_io_ops overlay_ops = {
	.read = overlay_read,
	.write = overlay_write,
	.flush = overlay_flush,
	.readahead = overlay_readahead,
	.close = overlay_close,
	/* No discard: a hole punched below would be a write.  Zeroout falls back to writing zeros here. */
};

int ext4fs_io_overlay_wrap(struct ext4fs_io *lower, struct ext4fs_io **out)
{
	struct overlay *o = calloc(1, sizeof(*o));
	struct ext4fs_io *io;

	*out = NULL;
	if (!o || !(o->slots = calloc(1024, sizeof(*o->slots)))) {
		free(o);
		return EXT4FS_E_NO_MEMORY;
	}
	o->cap = 1024;
	o->lower = lower;
	if (!(io = ext4fs__io_wrapper(&overlay_ops, o, lower))) {
		free(o->slots);
		free(o);
		return EXT4FS_E_NO_MEMORY;
	}
	/* A discard would not reach the disk, so it cannot promise zeros. */
	io->discard_zeroes = 0;
	*out = io;
	return 0;
}

int ext4fs_io_is_overlay(const struct ext4fs_io *io)
{
	return io && io->ops == &overlay_ops;
}

uint64_t ext4fs_io_overlay_bytes(const struct ext4fs_io *io)
{
	const struct overlay *o;

	if (!ext4fs_io_is_overlay(io))
		return 0;
	o = io->priv;
	return (uint64_t)o->used * PAGE + (uint64_t)o->cap * sizeof(struct slot);
}
