/* util.c - argument parsing and error printing shared by debug4fs commands. */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "debug4fs.h"
#include "ext4fs/namei.h"
#include "support/comerr.h"
#include "support/parse.h"

void dbg_error(struct dbg *d, const char *who, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sup_vcom_err(who, err, d->fs, fmt, ap);
	va_end(ap);
}

int dbg_usage(const char *cmd, const char *usage)
{
	fprintf(stderr, "%s: Usage: %s %s\n", cmd, cmd, usage);
	return 1;
}

int dbg_check_args(int argc, char **argv, int min, int max, const char *usage)
{
	if (argc < min || argc > max)
		return dbg_usage(argv[0], usage);
	return 0;
}

int dbg_parse_inode(struct dbg *d, const char *spec, uint32_t *ino)
{
	size_t len = strlen(spec);
	int err;

	if (len > 2 && spec[0] == '<' && spec[len - 1] == '>') {
		char num[32];
		uint64_t v;
		if (len - 2 < sizeof(num)) {
			memcpy(num, spec + 1, len - 2);
			num[len - 2] = '\0';
			if (sup_parse_u64(num, UINT64_MAX, &v) == 0) {
				if (v == 0)     /* debugfs says nothing for <0> */
					return 1;
				if (v > ext4fs_geom(d->fs)->inodes_count) {
					sup_com_err(spec, EXT4FS_E_NOT_FOUND, NULL);
					return 1;
				}
				*ino = (uint32_t)v;
				return 0;
			}
		}
	}
	err = ext4fs_namei(d->fs, d->root, d->cwd, spec, 0, ino);
	if (err) {
		sup_com_err(spec, err, NULL);
		return 1;
	}
	return 0;
}

int dbg_read_inode(struct dbg *d, const char *cmd, uint32_t ino, struct ext4fs_inode *inode)
{
	int err = ext4fs_inode_read(d->fs, ino, inode);

	if (err) {
		dbg_error(d, cmd, err, "while reading inode %u", ino);
		return 1;
	}
	return 0;
}

