/*
 * comerr.h - error lines in com_err's shape, for errors the library returns:
 *
 *     prog: <ext4fs_strerror(err)> while <doing X>
 *
 * as e2fsprogs prints "mke2fs: No space left on device while ...".  All go
 * to stderr.  The sup_com_err* forms flush stdout first so the two streams
 * stay in order; the *_unflushed forms leave stdout alone, as e2fsck's
 * com_err does, for a tool whose combined output must interleave as
 * e2fsck's does when stdout is a pipe or a file.
 */
#ifndef SUPPORT_COMERR_H
#define SUPPORT_COMERR_H

#include <stdarg.h>

struct ext4fs_fs;

/*
 * "who: <message for err> <fmt...>\n".  err is a library code (negative,
 * see ext4fs_strerror()); with err 0 the message and its space are left
 * out.  fmt is printf's, usually "while ..."; NULL for none (the space
 * after the message stays, as com_err prints it).  who NULL: no prefix.
 */
void sup_com_err(const char *who, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * As sup_com_err(), then " (detail: <ext4fs_errmsg(fs)>)" when fs is not
 * NULL and holds a message naming the failing object.
 */
void sup_com_err_fs(const char *who, int err, const struct ext4fs_fs *fs, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The va_list form of sup_com_err_fs() (fs may be NULL). */
void sup_vcom_err(const char *who, int err, const struct ext4fs_fs *fs, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/*
 * As sup_vcom_err(), without flushing stdout first: a buffered stdout line
 * written before the error may appear after it, exactly as with e2fsck.
 */
void sup_vcom_err_unflushed(const char *who, int err, const struct ext4fs_fs *fs, const char *fmt,
			    va_list ap) __attribute__((format(printf, 4, 0)));

#endif
