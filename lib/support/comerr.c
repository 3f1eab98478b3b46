/* comerr.c - com_err-style error lines (see comerr.h). */
#include "config.h"
#include <stdio.h>
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "support/comerr.h"

void sup_vcom_err_unflushed(const char *who, int err, const struct ext4fs_fs *fs, const char *fmt,
			    va_list ap)
{
	if (who)
		fprintf(stderr, "%s: ", who);
	if (err)
		fprintf(stderr, "%s ", ext4fs_strerror(err));
	if (fmt)
		vfprintf(stderr, fmt, ap);
	if (fs && ext4fs_errmsg(fs)[0])
		fprintf(stderr, " (detail: %s)", ext4fs_errmsg(fs));
	fputc('\n', stderr);
}

void sup_vcom_err(const char *who, int err, const struct ext4fs_fs *fs, const char *fmt, va_list ap)
{
	fflush(stdout);
	sup_vcom_err_unflushed(who, err, fs, fmt, ap);
}

void sup_com_err(const char *who, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sup_vcom_err(who, err, NULL, fmt, ap);
	va_end(ap);
}

void sup_com_err_fs(const char *who, int err, const struct ext4fs_fs *fs, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sup_vcom_err(who, err, fs, fmt, ap);
	va_end(ap);
}
