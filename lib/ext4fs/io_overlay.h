/*
 * io_overlay.h - a channel that keeps its writes in memory over another
 * channel that it never writes: the ground of a rehearsal.
 *
 * Layer 1 (io).  A rehearsal runs a change (a defragmentation, a
 * conversion) exactly as it would run, on a writable handle, so that what
 * it reports (what moved, how many bytes, the layout after) is what the
 * real run would do, and the disk stays as it was.  The overlay keeps each
 * 4 KiB page written in memory; reads see those pages and the lower
 * channel elsewhere; flushes do nothing; the lower channel may be
 * read-only.  Memory grows with the pages written, so a rehearsal that
 * moves file data does not copy it (see EXT4FS_OPEN_REHEARSE in fs.h).
 */
#ifndef EXT4FS_IO_OVERLAY_H
#define EXT4FS_IO_OVERLAY_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A writable channel over lower, which the new channel owns and closes;
 * its size and name are lower's.  Errors: EXT4FS_E_NO_MEMORY, and then
 * lower stays the caller's.
 */
int ext4fs_io_overlay_wrap(struct ext4fs_io *lower, struct ext4fs_io **out);

/* 1 when io is an overlay channel.  Cannot fail. */
int ext4fs_io_is_overlay(const struct ext4fs_io *io);

/* Bytes of memory the overlay's kept pages take (0 when io is not one).  Cannot fail. */
uint64_t ext4fs_io_overlay_bytes(const struct ext4fs_io *io);

#ifdef __cplusplus
}
#endif
#endif
