/*
 * context.h - the checker's shared state: options, the file system, what
 * the passes found, answers, timings.  One struct e4fsck per run, passed to
 * every pass, and the helpers every step calls on it (context.c); see
 * DESIGN.md for how the passes use it.  The steps themselves are declared
 * in passes.h, the driver in check.h.
 */
#ifndef E4FSCK_CONTEXT_H
#define E4FSCK_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "support/exitcodes.h"
#include "encrypt.h"
#include "maps.h"
#include "stats.h"
#include "xattr_refs.h"

/* struct e4fsck's restart: why the check starts again. */
#define RESTART_CLEARED 1   /* pass 1 cleared an inode whose blocks it had partly claimed */
#define RESTART_MOVED   2   /* passes 1B-1D moved map blocks off the file system's metadata */
#define RESTART_LPF     3   /* pass 3 unlinked an inline-data or encrypted /lost+found, a directory now unconnected */
#define RESTART_UNSCANNED 4 /* pass 2 opened a group's inodes pass 1 had skipped (INODE_UNINIT, itable_unused) */
#define RESTART_RELOCATED 5 /* pass 1 gave a group's inode table a new place */
#define RESTART_BAD_LIST 6  /* pass 1 cleared the bad-blocks inode, which lay in a block on its own list */


/* How problems are answered. */
enum fsck_mode {
	MODE_ASK,       /* interactive: ask on the terminal */
	MODE_NO,        /* -n: answer no, open read-only */
	MODE_YES,       /* -y */
	MODE_PREEN,     /* -p / -a: fix what is safe, stop on anything else */
};

/* Per-pass figures for -t / -tt and --json. */
struct pass_time {
	const char *name;           /* "Pass 1", ... */
	int ran;
	double wall, user, sys;     /* seconds */
	uint64_t read_bytes, write_bytes;
	size_t mem_bytes;           /* the maps' size at the end of the pass */
};

enum { TIME_JOURNAL, TIME_PASS1, TIME_PASS1B, TIME_PASS2, TIME_PASS3, TIME_PASS3A, TIME_PASS4,
       TIME_PASS5, TIME_SLOTS };

/* A directory found in pass 1; parent and dotdot are filled in by passes 2 and 3. */
struct dir_info {
	uint32_t ino;
	uint32_t dotdot;            /* what its '..' names (pass 2), 0 when missing */
	uint32_t parent;            /* the directory naming it (pass 2), 0 when none yet */
};

/* A directory block to check in pass 2 (collected in pass 1, sorted by pblk there). */
struct dir_block {
	uint32_t ino;
	uint32_t lblk;
	uint64_t pblk;              /* checked in pass 1; 0 only for a hole, and only in pass 2 (or a block
				       pass 1 cleared, listed as e2fsck lists it) */
};

/* One problem as found and answered, for --json. */
struct problem_record {
	uint32_t code;
	const char *id;             /* stable name, e.g. "PR_1_BAD_I_SIZE" */
	int pass;
	uint32_t ino;
	uint64_t blk;
	uint64_t num;
	uint32_t group;
	int fixed;
	char *message;              /* as printed, owned */
};

struct e4fsck {
	/* options */
	const char *device;         /* for messages: the label when there is one, else the path */
	const char *path;           /* the device or image as given */
	char label[17];
	const char *prog;
	/*
	 * The check's clock, read once at the start as e2fsck reads its own:
	 * the times e4fsck writes (the library's included, ext4fs_set_time())
	 * and the times it judges are all this one, so a superblock written
	 * before a restart is never "in the future" of the check that follows.
	 */
	int64_t now;
	enum fsck_mode mode;
	int force;                  /* -f */
	int timing;                 /* -t given this many times */
	int verbose;                /* -v */
	int threads;                /* -m; 0 = number of cores */
	int progress_fd;            /* -C fd, -1 for none */
	int progress_held;          /* -C -fd: report only after SIGUSR1, as e2fsck */
	struct progress *progress;  /* -C's state (progress.c) */
	struct ext4fs_open_opts open_opts;  /* how the file system was opened (for pass 1's workers) */
	int optimize_dirs;          /* -D */
	int journal_only;           /* -E journal_only: replay the journal, check only with -f */
	int check_encoding;         /* -E check_encoding: names of casefolded dirs checked as in strict mode */
	int fixes_only;             /* -E fixes_only: no extent tree rebuilding (and not with -D) */
	int no_optimize_extents;    /* -E no_optimize_extents (and fixes_only): no pass 1E suggestions */
	int discard;                /* -E discard: free blocks discarded after a check that changed nothing */
	uint64_t superblock;        /* -b, 0 = primary */
	unsigned blocksize;         /* -B */
	int from_backup;            /* the primary superblock was unusable: a backup is in use */
	int despite_errors;         /* opened as e2fsck opens "despite errors" (EXT4FS_OPEN_SB_ERRORS_OK) */
	const char *json_path;      /* --json FILE */
	const char *undo_path;      /* -z FILE: the undo file of every writable open */
	const char *journal_path;   /* -j: the external journal device, NULL to look for none */
	int check_blocks;           /* -c given this many times: run badblocks (twice: read-write test) */
	int keep_badblocks;         /* -k: -c adds to the bad-block list instead of replacing it */
	const char *badblocks_file; /* -l / -L FILE: blocks to add to (or, with -L, to make) the list */
	int badblocks_replace;      /* -L */
	int fs_invalid;             /* a question before the passes was answered no (e2fsck's unmark_valid) */

	/* the file system */
	struct ext4fs_fs *fs;
	const struct ext4fs_geom *geo;
	int read_only;

	/*
	 * latch questions asked so far: code and answer (see struct problem);
	 * quiet: the members are answered without a word (e2fsck's "Suppress messages")
	 */
	struct { uint32_t code; int answer; int quiet; } latches[8];
	int nlatches;

	/*
	 * e2fsck's restart: pass 1 cleared an inode it had partly accounted for
	 * (RESTART_CLEARED), or a map or extent tree block of an inode lay on the
	 * file system's metadata (fs_meta, below) and passes 1B-1D have moved it
	 * since (RESTART_MOVED, set by pass 2 after its directory blocks): the
	 * check starts again from the superblock checks.  Or pass 3 unlinked a
	 * /lost+found with inline data or encrypted and made a new one (RESTART_LPF).
	 */
	int restart;                /* 0 or RESTART_* */
	uint32_t *restart_cleared;  /* the inodes cleared so, over all runs: none may come back */
	size_t nrestart_cleared, caprestart_cleared;
	size_t restart_mark;        /* nrestart_cleared when the run began: each restart must add to it */
	int restart_later;          /* a collision was reported (not with -n): restart after pass 2 if one moved */
	int restart_unscanned;      /* pass 2 made pass 1 scan more of a group: restart after its directory blocks */
	uint32_t large_dirs;        /* indexed directories that need largedir, counted as e2fsck's pass 1 counts them */
	struct meta_collision {
		uint32_t ino;
		uint64_t blk;
	} *collisions;              /* this run's, each once */
	size_t ncollisions, capcollisions;

	/* results */
	int exit_status;            /* FSCK_* bits gathered so far */
	int fs_changed;             /* a repair was written */
	int fs_modified;            /* written, but nothing repaired (orphans finished, trees optimized) */
	int aborted;                /* preen met an unsafe problem: stop */
	int fatal;                  /* a PF_FATAL problem: stop, and end as e2fsck's fatal_error() */
	int recreate_journal;       /* the journal step removed a bad journal: offer a new one after pass 5 */
	int recreate_resize_inode;  /* the resize inode was cleared before pass 1: write it anew at pass 1's end */
	struct fsck_relocation *relocate;  /* tables to give new places at pass 1's end (relocate.c) */
	int relocate_hint_latched;  /* PR_0_RELOCATE_HINT was said (or not to be said): never again */
	unsigned long problems, problems_fixed;
	unsigned long repairs_answered;   /* yes to a question that is a repair: e2fsck's PROBLEMS_FIXED */
	struct problem_record *log;
	size_t nlog, caplog;

	/*
	 * e2fsck's metadata map: every group's superblock and descriptor copies
	 * (reserved descriptor blocks included), bitmaps and inode table, as the
	 * descriptors place them.  Filled by pass 1 before its workers start.
	 * An inode's map or tree block found there is walked but not repaired,
	 * and no repair of an inode's map writes into it.
	 */
	struct range_set fs_meta;
	int bad_list_walked;        /* badblocks.c walked inode 1's list before the workers: they leave it alone */
	uint64_t *bad_list;         /* the list as e2fsck's library reads it before pass 1: its blocks, sorted */
	size_t nbad_list, capbad_list;

	/* what pass 1 finds */
	struct bitmap_paged inode_used;   /* in use (links or mode) */
	struct bitmap_paged inode_dir;
	struct bitmap_paged inode_reg;
	struct bitmap_paged inode_bad;    /* damaged: pass 2 offers to clear entries naming them */
	struct bitmap_paged block_found;  /* claimed by some inode or by the fs's own metadata */
	struct bitmap_paged block_dup;    /* claimed more than once */
	struct counter_paged links_disk;  /* i_links_count as read */
	struct counter_paged links_seen;  /* entries naming the inode (pass 2) */
	struct dir_info *dirs;            /* sorted by ino */
	size_t ndirs, capdirs;
	struct dir_block *dir_blocks;
	size_t ndir_blocks, capdir_blocks;
	struct xattr_table xattrs;        /* xattr blocks and how many inodes name them */
	struct xattr_table ea_inode_refs; /* EA inodes (as blk) and the attribute entries naming them (refs) */
	struct fsck_encrypted encrypted;  /* encrypted inodes and their policies (encrypt.h) */
	uint64_t files_fragmented;        /* for the summary's "non-contiguous" share */
	struct fsck_stats stats;          /* for -v's statistics and --json (stats.c) */
	uint64_t inodes_in_use, blocks_in_use;
	uint32_t *rebuild;                /* inodes whose extent trees pass 1E rebuilds */
	size_t nrebuild, caprebuild;
	struct fsck_kept_blocks {         /* i_blocks kept wrong (a no): what pass 1 counted, for quota.c */
		uint32_t ino;
		uint64_t bytes;
	} *kept_blocks;
	size_t nkept_blocks, capkept_blocks;

	/* passes 3 and 4 (pass3.c, dirs.c) */
	uint32_t lost_found;              /* /lost+found once found or made, 0 before */
	uint64_t root_repair_block;       /* kept aside after pass 1 for a new root, 0 for none */
	uint64_t lnf_repair_block;        /* ... for a new /lost+found, 0 for none */
	int lost_found_bad;               /* it could not be found or made: do not ask again */

	/* pass 3A (rehash.c): directories to rebuild, sorted, each once */
	uint32_t *rehash;
	size_t nrehash, caprehash;
	int rehash_on;                    /* linear directories of 3+ blocks go on the list too */

	struct pass_time times[TIME_SLOTS];
};

/*
 * e2fsck's refusal of feature bits e2fsprogs 1.47 does not support, printed
 * on stderr ("... has unsupported feature(s): ...", "Get a newer version").
 * Returns 0 when every bit of features[] (compat, incompat, ro_compat) is
 * supported; 2 when e2fsck's open itself fails on them (incompatible bits,
 * or read-only-compatible ones for a check that writes: exit 8); 1 when it
 * stops after opening (exit 12, "still has errors").
 */
int fsck_say_unsupported(struct e4fsck *ctx, const uint32_t features[3]);

/*
 * Open the file system at ctx->path with EXT4FS_OPEN_IGNORE_CSUM and flags
 * (0 for a read-only handle, EXT4FS_OPEN_RW, EXT4FS_OPEN_RECOVERY) into
 * ctx->fs, with ctx->geo and the label for messages.  0, or -1 after a
 * message (exit 8).
 */
int fsck_open(struct e4fsck *ctx, unsigned flags);

/*
 * Close the file system (writing what is pending) and open it again with
 * flags (EXT4FS_OPEN_RW, EXT4FS_OPEN_RECOVERY, 0).  0, or -1 after a
 * message (exit 8).
 */
int fsck_reopen(struct e4fsck *ctx, unsigned flags);

/* Record an operational failure (exit 8) with a message on stderr. */
void fsck_fatal(struct e4fsck *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Replace the superblock (ext4fs_super_set()); changed: the repair counts
 * as a change to the file system (exit 1).  0, or -1 after fsck_fatal().
 */
int fsck_super_set(struct e4fsck *ctx, const struct ext4fs_super *sb, int changed);

/* The dir_info of directory ino, or NULL. */
struct dir_info *fsck_dir_info(struct e4fsck *ctx, uint32_t ino);

/* Add a directory block to check; -ENOMEM on failure. */
int fsck_add_dir_block(struct e4fsck *ctx, uint32_t ino, uint32_t lblk, uint64_t pblk);

/*
 * Whether inode ino (in) has a block map to walk: a regular file, a
 * directory, a slow symlink, or the bad-blocks inode; not inline data.
 */
int fsck_inode_has_blocks(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *in);

/*
 * e2fsck's "Clear inode": *in (the caller writes it) is no longer in use
 * (no links, dtime now, no flags), and the inode maps forget it; its blocks
 * and the entries naming it are left to the later passes.
 */
void fsck_clear_inode(struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in);

/*
 * What e2fsck's clear does to the record alone (fsck_clear_inode() without
 * the maps): no flags, no links, the check's time as dtime, a reserved
 * inode's map zeroed, the bad blocks inode's base record zeroed.
 */
void fsck_cleared_record(const struct e4fsck *ctx, uint32_t ino, struct ext4fs_inode *in);


/* Bytes held by the maps and lists (for -tt). */
size_t fsck_memory(const struct e4fsck *ctx);

/* e2fsck's advice to try a backup superblock, on out. */
void fsck_super_advice(FILE *out);

/* The maps pass 1 fills, sized by the file system; 0, or -1 after fsck_fatal(). */
int fsck_init_maps(struct e4fsck *ctx);

/* Forget what one run of the passes found (at the end, and before a restart). */
void fsck_free_run_state(struct e4fsck *ctx);

/* Free everything ctx holds and close the file system. */
void fsck_free_ctx(struct e4fsck *ctx);

#endif
