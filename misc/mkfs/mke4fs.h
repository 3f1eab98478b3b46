/*
 * mke4fs.h - shared declarations of the mke4fs tool.
 *
 * mke4fs is split by stage, and each stage only hands data forward:
 *
 *   options.c  argv -> struct mk_opts          (syntax only; no I/O)
 *   extended.c the -E list -> struct mk_ext_opts (syntax only)
 *   target.c   the device or image file        (stat, size, sector sizes,
 *                                                RAID topology, mounted and
 *                                                existing-content checks,
 *                                                creating and zapping)
 *   profile.c  struct mk_opts + struct mk_target -> struct mk_config
 *              (mke2fs's policy: fs types and usage types, block size,
 *               features, inode ratio, journal size, --compat masks;
 *               the built-in table equals Debian's /etc/mke2fs.conf)
 *   compat.c   the --compat profiles (feature sets older readers accept)
 *   output.c   what mke2fs prints: the summary, -v details, the progress
 *              meter, and --json
 *   mke4fs.c   main: runs the stages, plans with libext4fs, writes
 *
 * Every stage that finds a problem prints the message itself and returns
 * -1; main then exits with status 1, as mke2fs does.  Nothing is written
 * to the target before every check has passed and the plan exists (a
 * missing image file is created early, and removed again on failure).
 */
#ifndef MKE4FS_H
#define MKE4FS_H

#include <stdint.h>
#include <stdio.h>
#include "ext4fs/mkfs.h"
#include "support/progress.h"

extern const char *prog_name;           /* "mke4fs", for messages */

/* ------------------------------------------------------------------ options */

/* What the command line asked for; 0 / -1 / NULL mean "not given". */
struct mk_opts {
	const char *device;
	const char *size_arg;           /* the optional fs-size argument */

	uint32_t blocksize;             /* -b */
	uint32_t inode_ratio;           /* -i */
	uint32_t inode_size;            /* -I */
	unsigned long long num_inodes;  /* -N */
	double reserved_ratio;          /* -m; < 0 when not given */
	uint32_t blocks_per_group;      /* -g */
	unsigned long flex_bg_size;     /* -G */
	const char *label;              /* -L */
	const char *mount_dir;          /* -M */
	const char *fs_type;            /* -t */
	const char *usage_types;        /* -T */
	const char *uuid;               /* -U */
	const char *creator_os;         /* -o */
	const char *compat;             /* --compat */
	char *features;                 /* every -O, joined with commas (owned) */
	char *extended;                 /* the last -E, as mke2fs keeps only that (owned) */
	int errors_behavior;            /* -e: 1 continue, 2 remount-ro, 3 panic */
	int r_opt;                      /* -r */
	int s_opt;                      /* -s (deprecated sparse_super switch) */

	int journal_size;               /* MiB from -J size=; -1 from -j; 0 none */
	int journal_fc_size;            /* KiB from -J fast_commit_size=; -1 from -j */

	int force;                      /* -F, counted */
	int noaction;                   /* -n */
	int quiet;                      /* -q (and --json) */
	int verbose;                    /* -v */
	int json;                       /* --json */
	int nodiscard_K;                /* -K */
	const char *root_dir;           /* -d: populate from this directory */
};

/* Parse argv.  Handles --help, -V/--version and usage errors itself (it exits
 * for those, like mke2fs).  Returns 0 or -1 after printing a message. */
int mk_parse_args(int argc, char **argv, struct mk_opts *o);
void mk_opts_free(struct mk_opts *o);
void mk_usage(FILE *f);

/* -E: what was given; -1 / 0 / NULL mean not given. */
struct mk_ext_opts {
	uint64_t offset;
	int offset_set;
	int num_backups;            /* -1: not given */
	int packed;                 /* -1: not given */
	uint32_t stride, stripe;
	int stride_set, stripe_set;
	int lazy_itable;            /* -1: not given */
	int lazy_journal;           /* -1 */
	int discard;                /* -1 */
	int prezeroed;              /* -1 */
	int root_owner_set;
	uint32_t root_uid, root_gid;
	uint8_t hash_seed[16];
	int hash_seed_set;
	const char *resize;
	const char *orphan_size;
	int casefold;
	int no_copy_xattrs;         /* with -d */
};

/* Parse a comma-separated -E list into *e (which the caller initialised).
 * -1 after printing mke2fs's "Bad option(s)" text or a refusal. */
int mk_parse_extended(const char *opts, struct mk_ext_opts *e);
void mk_ext_usage(const char *badopt);

/* ------------------------------------------------------------------ target */

struct mk_target {
	const char *path;
	int exists;                     /* the path existed when mke4fs started */
	int created;                    /* mke4fs created it (empty, sparse) */
	int is_dev;                     /* a block device */
	int is_reg;                     /* a regular file (or will be one) */
	uint64_t size;                  /* bytes: device or file size (0 for a new file) */
	uint32_t lsector;               /* logical sector size, 0 when unknown (files) */
	uint32_t psector;               /* physical sector size, 0 when unknown */
	unsigned long min_io, opt_io;   /* blkid topology, bytes (0 when unknown) */
	unsigned long align_offset;
	int topology_ok;                /* the topology could be read (or is n/a) */
};

int mk_target_stat(const char *path, int size_given, struct mk_target *t);
/* Existing file system or partition table: ask or refuse; -1 to stop. */
int mk_target_check_contents(const struct mk_opts *o, const struct mk_target *t);
/* Mounted or in use: always refused. */
int mk_target_check_mounted(const struct mk_target *t);
/* Create a missing regular file; make a regular file at least `bytes` long. */
int mk_target_prepare_file(const struct mk_opts *o, struct mk_target *t, uint64_t bytes);
/* Wipe what mke2fs wipes: sectors 0-1 (unless a BSD disklabel is there),
 * bytes 2048-4095, and the last 64 KiB-aligned chunk (old MD RAID metadata).
 * Only blocks that are not already zero are written. */
int mk_target_zap(struct ext4fs_io *io, uint64_t fs_bytes, uint32_t block_size);

/* ------------------------------------------------------------------ policy */

/* Everything decided, ready for ext4fs_mkfs_plan(). */
struct mk_config {
	struct ext4fs_mkfs_params p;
	const char *device;             /* for messages */
	char *fs_types[16];             /* resolution list for -v, NULL-terminated (owned) */
	uint64_t requested_blocks;      /* before the library trims the last group */
	uint64_t offset;                /* -E offset=, bytes */
	uint64_t dev_blocks;            /* device size in blocks (0: a new file) */
	int journal_requested_size;     /* -J size given: stricter checks apply */
	int journal_too_small;          /* has_journal was dropped: too small */
	int root_owner_set;
	int discard;
	int no_copy_xattrs;             /* -E no_copy_xattrs (with -d) */
};

int mk_build_config(const struct mk_opts *o, const struct mk_target *t, struct mk_config *c);
void mk_config_free(struct mk_config *c);
/*
 * A profile lists the features an older reader accepts.  Defaults outside
 * the list are left out silently; asking for one with -O is an error.  The
 * reasons are in mke4fs.8 (COMPATIBILITY PROFILES).
 */
struct mk_compat_profile {
	const char *name;
	const char *summary;
	uint32_t allowed[3];
	uint32_t instead_of_csum;   /* ro_compat bits set when metadata_csum had to go */
};

const struct mk_compat_profile *mk_find_compat(const char *name);
int mk_compat_known(const char *name);
/* --compat=help */
void mk_compat_list(FILE *f);

/* ------------------------------------------------------------------ output */

struct mk_progress {
	int quiet;
	int verbose;
	int open_stage;                 /* stage being printed, -1 none */
	int last_closed;                /* stage that last printed "done", -1 none */
	int discard_pending;            /* discard started; label not printed yet */
	int discard_done;               /* the discard stage completed */
	struct sup_meter meter;         /* the numbers of the stage being printed */
	const struct ext4fs_mkfs_plan *plan;
	const struct mk_config *config;
	const struct ext4fs_io *io;
};

void mk_show_stats(const struct ext4fs_mkfs_plan *plan, const struct mk_config *c, int verbose);
void mk_progress_cb(void *arg, enum ext4fs_mkfs_stage stage, uint64_t done, uint64_t total);
void mk_progress_finish(struct mk_progress *pr, int failed);
void mk_print_json(FILE *f, const struct ext4fs_mkfs_plan *plan, const struct mk_config *c,
		   const char *device, int written);

/* ----------------------------------------------------------------- populate */

/*
 * mke4fs -d: open the new file system at offset of image read-write and copy
 * the tree under src_dir into it (populate.c).  keep_root_owner leaves the
 * root directory's owner as -E root_owner set it; fixed_time stamps new
 * inodes' creation times.  Prints "Copying files into the device: done"
 * unless quiet.  Returns 0, or -1 after printing what failed and where.
 */
int mk_populate(const char *image, uint64_t offset, const char *src_dir, int copy_xattrs,
		int keep_root_owner, int64_t fixed_time, int quiet);

#endif
