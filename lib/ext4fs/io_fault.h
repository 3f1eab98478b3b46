/*
 * io_fault.h - a fault-injecting I/O channel, for tests: a write or a flush
 * that fails, a process that stops dead at the k-th write or flush, a torn
 * write, and the loss of what the disk's volatile cache held at a power
 * cut.
 *
 * Layer 1 (io).  The channel wraps another and counts the write calls
 * (writes, zeroouts and discards alike) and the flushes that pass through
 * it.  Besides, every read that covers one chosen byte may fail, as a bad
 * sector would.  When the chosen write or flush comes:
 *
 *   fail   that call returns -EIO and changes nothing; later ones go on;
 *   stop   that call and every later write, zeroout, discard and flush
 *          return -EIO and change nothing: the process is dead as far as
 *          the disk can tell (reads still work, so the program can fail
 *          cleanly and be judged afterwards);
 *   tear   as stop, but the triggering write first puts a prefix of its
 *          bytes on the disk (tear_bytes, default half the write rounded
 *          down to tear_align bytes, the disk's atomic unit: 512 unless
 *          given).
 *
 * With stop and tear, lose says what happens to the writes made since the
 * last successful flush, which a disk may still have held in its cache:
 * none are lost, all are lost (the disk holds what it held at that flush),
 * or a pseudo-random subset chosen by lose_seed survives (each sector then
 * holds the last surviving write to it, or its contents at the flush).
 * The channel keeps the old and the new bytes of every write since the last
 * flush to do this.
 */
#ifndef EXT4FS_IO_FAULT_H
#define EXT4FS_IO_FAULT_H

#include <stdint.h>
#include "ext4fs/io.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ext4fs_fault_action {
	EXT4FS_FAULT_FAIL = 0,
	EXT4FS_FAULT_STOP,
	EXT4FS_FAULT_TEAR,
};

enum ext4fs_fault_lose {
	EXT4FS_FAULT_LOSE_NONE = 0,
	EXT4FS_FAULT_LOSE_ALL,
	EXT4FS_FAULT_LOSE_SOME,     /* the subset lose_seed picks */
};

struct ext4fs_io_fault_spec {
	uint64_t at_write;          /* the write call (1 = the first) that triggers, 0 for none */
	uint64_t at_flush;          /* the flush that triggers, 0 for none */
	enum ext4fs_fault_action action;
	uint32_t tear_bytes;        /* tear: bytes of the write that land (0: half, rounded down to tear_align) */
	uint32_t tear_align;        /* tear: the disk's atomic unit in bytes (0: 512) */
	enum ext4fs_fault_lose lose;
	uint64_t lose_seed;
	uint64_t bad_read_byte;     /* 1 + the byte offset every read covering it fails at (-EIO), 0 for none */
	const char *count_path;     /* when not NULL, "writes=N flushes=M triggered=0|1" is appended to
				       this file at close (copied by the wrapper) */
};

/*
 * Parse a spec: comma-separated KEY=VALUE items, in any order:
 *   write=K | flush=K         the trigger (one of them)
 *   mode=fail|stop|tear       the action (default stop)
 *   tear=N                    bytes that land of a torn write
 *   align=N                   the atomic unit a torn write is cut on
 *   lose=none|all|SEED        the cache at a stop (default none; a number
 *                             picks a subset)
 *   count=PATH                where to append the counts at close
 *   readbad=OFFSET            every read covering byte OFFSET fails (-EIO)
 * An empty text gives a spec that only counts.  count points into text,
 * which must outlive the spec's use.  Errors: EXT4FS_E_INVALID_ARG (an
 * unknown key, a bad number, both triggers).
 */
int ext4fs_io_fault_parse(char *text, struct ext4fs_io_fault_spec *spec);

/*
 * Wrap inner, which the new channel owns and closes.  Errors:
 * EXT4FS_E_INVALID_ARG (an unknown action or lose value),
 * EXT4FS_E_NO_MEMORY; inner stays the caller's on error.
 */
int ext4fs_io_fault_wrap(struct ext4fs_io *inner, const struct ext4fs_io_fault_spec *spec,
			 struct ext4fs_io **out);

/* What passed through a fault channel so far. */
struct ext4fs_io_fault_counts {
	uint64_t writes;            /* write calls, zeroouts and discards included */
	uint64_t flushes;
	int triggered;              /* the fault happened */
};

/* Fill *c; zeros when io is not a fault channel.  Cannot fail. */
void ext4fs_io_fault_counts(const struct ext4fs_io *io, struct ext4fs_io_fault_counts *c);

#ifdef __cplusplus
}
#endif
#endif
