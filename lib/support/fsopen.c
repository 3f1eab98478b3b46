/* fsopen.c - the tools' way to open a file system (see fsopen.h). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "ext4fs/io_fault.h"
#include "ext4fs/super.h"
#include "ext4fs/txn.h"
#include "ext4fs/undo.h"
#include "support/fsopen.h"

static void say(char *errmsg, size_t len, const char *fmt, const char *a, const char *b)
{
	if (errmsg && len)
		snprintf(errmsg, len, fmt, a, b);
}

/* Wrap *io in the fault channel EXT4FS_FAULT describes, if it is set. */
static int fault_hook(struct ext4fs_io **io, char *errmsg, size_t errmsg_len)
{
	const char *env = getenv(SUP_FAULT_ENV);
	struct ext4fs_io_fault_spec spec;
	struct ext4fs_io *wrapped;
	char *text;
	int err;

	if (!env)
		return 0;
	text = strdup(env);
	if (!text)
		return EXT4FS_E_NO_MEMORY;
	err = ext4fs_io_fault_parse(text, &spec);
	if (err) {
		say(errmsg, errmsg_len, "%s=\"%s\" is not a fault spec (test hook: see tests/README.md)",
		    SUP_FAULT_ENV, env);
		free(text);
		return err;
	}
	err = ext4fs_io_fault_wrap(*io, &spec, &wrapped);
	free(text);
	if (err)
		return err;
	*io = wrapped;
	return 0;
}

int sup_io_open(const char *path, unsigned io_flags, uint64_t offset, const char *undo_path,
		struct ext4fs_io **out, char *errmsg, size_t errmsg_len)
{
	struct ext4fs_io *io, *undo;
	int err;

	*out = NULL;
	err = ext4fs_io_open_file(path, io_flags, offset, &io);
	if (err) {
		say(errmsg, errmsg_len, "%s: %s", path, ext4fs_strerror(err));
		return err;
	}
	if (io_flags & EXT4FS_IO_RDWR) {
		err = fault_hook(&io, errmsg, errmsg_len);
		if (err) {
			ext4fs_io_close(io);
			return err;
		}
	}
	if (undo_path) {
		err = ext4fs_io_undo_wrap(io, undo_path, EXT4FS_UNDO_APPEND, &undo);
		if (err) {
			say(errmsg, errmsg_len, "undo file %s: %s", undo_path, ext4fs_strerror(err));
			ext4fs_io_close(io);
			return err;
		}
		io = undo;
	}
	*out = io;
	return 0;
}

int sup_fs_open(const char *path, const struct ext4fs_open_opts *opts, const char *undo_path,
		struct ext4fs_fs **out, char *errmsg, size_t errmsg_len)
{
	unsigned writable = opts && (opts->flags & (EXT4FS_OPEN_RW | EXT4FS_OPEN_RECOVERY));
	struct ext4fs_io *io;
	int err;

	*out = NULL;
	if (opts && (opts->flags & EXT4FS_OPEN_REHEARSE))
		return ext4fs_open(path, opts, out, errmsg, errmsg_len);   /* nothing written: no undo, no faults */
	err = sup_io_open(path, writable ? EXT4FS_IO_RDWR : 0, opts ? opts->offset : 0, writable ? undo_path : NULL,
			  &io, errmsg, errmsg_len);
	if (err)
		return err;
	return ext4fs_open_io(io, opts, out, errmsg, errmsg_len);
}

int sup_make_crash_safe(struct ext4fs_fs *fs, int have_undo, int force, enum sup_safety *how, char *errmsg,
			size_t errmsg_len)
{
	int err;

	if (ext4fs_has_compat(fs, EXT4FS_FEATURE_COMPAT_HAS_JOURNAL)) {
		err = ext4fs_txn_start(fs);
		if (err)
			say(errmsg, errmsg_len, "%s: %s", "starting journalled mode", ext4fs_errmsg(fs));
		else
			*how = SUP_SAFE_JOURNAL;
		return err;
	}
	if (have_undo) {
		*how = SUP_SAFE_UNDO;
		return 0;
	}
	if (force) {
		*how = SUP_SAFE_FORCED;
		return 0;
	}
	say(errmsg, errmsg_len, "%s has no journal%s: give an undo file (-z FILE) to be able to go back, "
	    "or -f to go on without one", ext4fs_fs_name(fs), "");
	return EXT4FS_E_NO_JOURNAL;
}
