/*
 * fsopen.h - how the tools open a file system or device: ext4fs_open() /
 * ext4fs_io_open_file() with the channels a tool may stack on the file.
 *
 *   - An undo file (e2fsprogs' -z FILE): the old contents of every block go
 *     to FILE before the block is overwritten (undo.h); an existing FILE of
 *     the same file system is carried on, as e2fsprogs' tools do.
 *   - The fault hook, for tests only: when the environment variable
 *     EXT4FS_FAULT is set, a writable channel is wrapped in the
 *     fault-injecting channel (io_fault.h) with the spec it holds, e.g.
 *     EXT4FS_FAULT="write=12,mode=tear,lose=all,count=/tmp/counts".  It is
 *     a test hook, documented in tests/README.md, not an option for users;
 *     a malformed value is an error, never ignored.
 *
 * Nothing is printed; errmsg (errmsg_len bytes, may be NULL) says what
 * failed, naming the file.
 */
#ifndef SUPPORT_FSOPEN_H
#define SUPPORT_FSOPEN_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/io.h"

#define SUP_FAULT_ENV "EXT4FS_FAULT"

/*
 * Open path's channel (io_flags as ext4fs_io_open_file(); offset where the
 * file system starts) with the undo file undo_path (NULL for none) and,
 * for a writable channel, the fault hook.  Errors: those of
 * ext4fs_io_open_file() and ext4fs_io_undo_wrap(), EXT4FS_E_INVALID_ARG for
 * a malformed EXT4FS_FAULT, EXT4FS_E_NO_MEMORY.  *out is the caller's,
 * closed with ext4fs_io_close(); NULL on error.
 */
int sup_io_open(const char *path, unsigned io_flags, uint64_t offset, const char *undo_path,
		struct ext4fs_io **out, char *errmsg, size_t errmsg_len);

/*
 * As ext4fs_open() over sup_io_open(): the channel is writable for
 * EXT4FS_OPEN_RW and EXT4FS_OPEN_RECOVERY.  A rehearsal
 * (EXT4FS_OPEN_REHEARSE) is plain ext4fs_open(): it writes nothing, so it
 * takes no undo file and no fault hook.  Errors: those of sup_io_open()
 * and ext4fs_open_io().
 */
int sup_fs_open(const char *path, const struct ext4fs_open_opts *opts, const char *undo_path,
		struct ext4fs_fs **out, char *errmsg, size_t errmsg_len);

/* How a tool's changes are made safe against a crash (sup_make_crash_safe()). */
enum sup_safety {
	SUP_SAFE_JOURNAL,   /* journalled mode: the changes go through the file system's journal */
	SUP_SAFE_UNDO,      /* no journal, but an undo file records every overwritten block */
	SUP_SAFE_FORCED,    /* neither: the user forced it (-f) */
};

/*
 * The rule of the tools that rewrite an existing file system (tune4fs,
 * defrag4fs): journalled mode when it has an internal journal (started here
 * on the writable handle fs), else the undo file the tool opened it with
 * (have_undo), else only when forced.  *how says which.  Errors:
 * EXT4FS_E_NO_JOURNAL when there is neither journal nor undo file and not
 * force (errmsg asks for -z FILE or -f), those of ext4fs_txn_start().
 */
int sup_make_crash_safe(struct ext4fs_fs *fs, int have_undo, int force, enum sup_safety *how, char *errmsg,
			size_t errmsg_len);

#endif
