/*
 * debug4fs.h - what every debug4fs command shares.
 *
 * The tool is a thin layer: each command parses its arguments, calls
 * libext4fs and prints in debugfs 1.47's format (or JSON with -j).  Commands
 * live in cmd_*.c files and are listed in the table in commands.c.  A
 * command returns 0 on success and nonzero when it failed; debug4fs exits
 * nonzero if any command failed (debugfs always exits 0).
 */
#ifndef DEBUG4FS_H
#define DEBUG4FS_H

#include <stdint.h>
#include <stdio.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "support/json.h"
#include "support/timefmt.h"

struct dbg {
	struct ext4fs_fs *fs;      /* NULL when no file system is open */
	const char *device;        /* name given on the command line */
	uint32_t root;             /* inode of "/" (chroot) */
	uint32_t cwd;              /* inode of the current directory (cd) */
	int json;                  /* -j: one JSON document per command */
	unsigned open_flags;       /* EXT4FS_OPEN_* used for open */
	uint64_t superblock;       /* -s */
	unsigned block_size;       /* -b */
	const char *undo_path;     /* -z: the undo file of a writable open */
	FILE *out;                 /* command output */
	unsigned unknown;          /* requests naming no command (debugfs's exit status) */
};

typedef int (*dbg_cmd_fn)(struct dbg *d, int argc, char **argv);

struct dbg_cmd {
	const char *names[4];      /* primary name first, then aliases; NULL-terminated */
	dbg_cmd_fn fn;
	int needs_fs;              /* refuse with "Filesystem not open" without one */
	const char *help;
};

/*
 * Commands come in groups, one table per cmd_*.c file, each terminated by an
 * entry with names[0] == NULL; commands.c lists the groups.
 */
extern const struct dbg_cmd dbg_cmds_core[];    /* commands.c: help, cd, pwd, quit */
extern const struct dbg_cmd dbg_cmds_super[];   /* cmd_super.c: stats, freefrag, bitmaps */
extern const struct dbg_cmd dbg_cmds_inode[];   /* cmd_inode.c: stat, ex, blocks, bmap, icheck, ncheck */
extern const struct dbg_cmd dbg_cmds_dir[];     /* cmd_dir.c: ls, htree, dx_hash, dump, rdump, cat */
extern const struct dbg_cmd dbg_cmds_set[];     /* cmd_set.c: sif, ssv, set_bg, set_current_time */
extern const struct dbg_cmd dbg_cmds_write[];   /* cmd_write.c: setb, freeb, seti, freei, clri, copy_inode */
extern const struct dbg_cmd dbg_cmds_files[];   /* cmd_files.c: write, mkdir, rm, rmdir, link, unlink,
						   symlink, mknod, punch, fallocate, kill_file */
extern const struct dbg_cmd *const dbg_command_groups[];

/* Find a command by name or alias; NULL if there is none. */
const struct dbg_cmd *dbg_find_command(const char *name);

/* Run one command line (already split into words). Returns the command's status. */
int dbg_run_argv(struct dbg *d, int argc, char **argv);

/* Split a line into words (debugfs rules: whitespace, "double quotes"). Caller frees with dbg_free_argv. */
int dbg_split_line(const char *line, int *argc, char ***argv);
void dbg_free_argv(int argc, char **argv);

/* -- helpers for commands (util.c) -- */

/*
 * Parse a file specification: "<ino>" or a path (relative to cwd).  On
 * failure prints "<spec>: <message>" the way debugfs does and returns nonzero.
 */
int dbg_parse_inode(struct dbg *d, const char *spec, uint32_t *ino);

/* Read inode ino, printing "<cmd>: <message> while reading inode <ino>" on failure. */
int dbg_read_inode(struct dbg *d, const char *cmd, uint32_t ino, struct ext4fs_inode *inode);

/* Print a library error as debugfs's com_err does: "who: message <context>". */
void dbg_error(struct dbg *d, const char *who, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "<cmd>: Usage: <cmd> <usage>" on stderr; returns 1. */
int dbg_usage(const char *cmd, const char *usage);

/* Check argc is within [min, max]; otherwise print the usage and return nonzero. */
int dbg_check_args(int argc, char **argv, int min, int max, const char *usage);

/*
 * For commands that change the file system: prints debugfs's "<cmd>:
 * Filesystem not open" or "<cmd>: Filesystem opened read/only" (no -w) and
 * returns nonzero unless a writable file system is open (cmd_write.c).
 */
int dbg_require_rw(struct dbg *d, const char *cmd);

#endif
