/*
 * frag.h - fragmentation measures: of one file, of a set of files scored
 * as e4defrag -c scores them, of the free space as e2freefrag reports it,
 * and of a directory tree's layout (locality, the seeks of reading it).
 *
 * Layer: services.  defrag4fs -c, debug4fs (freefrag) and e4fsck share
 * these so a figure means the same thing in every tool.
 *
 * What an "extent" of a file is, here and in every tool that prints one:
 * a maximal run of data blocks, taken in logical order, each of which lies
 * on disk where the one before it leads: right after it, or, after a hole
 * of h blocks, h blocks further on (where the block would be had the hole
 * been written).  Adjacent mapping records that continue each other
 * physically count as one extent; written and unwritten blocks count
 * alike; a hole splits a run only when the disk does not continue across
 * it.  This is filefrag's count (e2fsprogs 1.47: each FIEMAP extent's
 * start is compared with the end of the one before plus the logical gap,
 * flags ignored), so a test can compare the two on a mounted file system.
 *
 * e4defrag -c (e2fsprogs misc/e4defrag.c) computes its figures from FIEMAP:
 *  - it counts regular files outside lost+found with i_size > 0, st_blocks
 *    > 0 and at least one FIEMAP extent;
 *  - "now" is the number of FIEMAP extents, unmerged (map_extents below):
 *    one per run contiguous logically and physically, written or
 *    unwritten alike, which is what the kernel shows once its extent cache
 *    holds the file (it merges such neighbours, also two leaf extents of
 *    an extent tree; just after a mount it may show each leaf extent, and
 *    cut a block-mapped file's runs where a mapping block's range ends);
 *  - "best" is ((blocks - 1) / (s_blocks_per_group << s_log_groups_per_flex
 *    with flex_bg, else s_blocks_per_group)) + 1 (ideal_e4defrag below);
 *  - a file's "size/ext" is blocks * (block_size / 1024) / now, in KiB;
 *  - its rank among the most fragmented files is by ratio = (float)(e4defrag
 *    extents - best) * 100 / blocks, where e4defrag extents are runs that
 *    are logically and physically contiguous (e4defrag_extents below);
 *  - the totals: "Total/best extents" are the sums of now and best; the
 *    average size per extent is sum(blocks) * (block_size / 1024) /
 *    sum(now); the score is computed in float from ratio =
 *    (float)(sum(now) - sum(best)) * 100 / sum(blocks) as
 *    ratio > 10 ? 80 + 20 * ratio / 100 : 8 * ratio, printed "%.0f", and a
 *    score above 55 "needs defragmentation".
 * The score here uses e4defrag's best, not the shared ideal, so it stays
 * comparable with e4defrag's; the shared ideal (ceil(blocks / 32768), the
 * fewest extents an extent tree can hold the file in) is summed beside it.
 */
#ifndef EXT4FS_FRAG_H
#define EXT4FS_FRAG_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/bitmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks in the longest extent an extent tree holds: the unit of the shared ideal. */
#define EXT4FS_FRAG_IDEAL_BLOCKS 32768

/* -- One file ------------------------------------------------------------ */

struct ext4fs_frag_file {
	uint64_t blocks;            /* data blocks mapped, written and unwritten */
	uint64_t unwritten_blocks;  /* of which unwritten */
	uint64_t extents;           /* extents as defined above (filefrag's count) */
	uint64_t e4defrag_extents;  /* runs contiguous logically and physically (e4defrag's per-file count) */
	uint64_t map_extents;       /* FIEMAP's extents, e4defrag's "now": runs contiguous logically
				     * and physically, in one written or unwritten state */
	uint64_t ideal;             /* ceil(blocks / 32768): 0 without blocks */
	uint64_t ideal_e4defrag;    /* e4defrag's best: ceil(blocks / blocks per (flex) group), 0 without blocks */
	uint64_t first_pblk;        /* physical block of the lowest mapped logical block; 0 without blocks */
	uint64_t last_pblk;         /* physical block of the highest mapped logical block; 0 without blocks */
	uint64_t map_blocks;        /* extent tree nodes or indirect blocks */
};

/*
 * Measure the blocks of inode ino (decoded record inode): *out is filled.
 * Inline-data inodes, fast symlinks and device/fifo/socket inodes have no
 * blocks (all zero).  Errors: those of ext4fs_block_iterate() (corrupt
 * maps, read errors); *out is then unspecified.  Nothing is kept.
 */
int ext4fs_frag_file(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		     struct ext4fs_frag_file *out);

/* -- e4defrag -c's score -------------------------------------------------- */

/* The sums over the files counted; zero it (or ext4fs_frag_score_init()) to start. */
struct ext4fs_frag_score {
	uint64_t files;             /* files added */
	uint64_t blocks;            /* sum of blocks */
	uint64_t now_extents;       /* sum of map_extents: "Total" */
	uint64_t best_extents;      /* sum of ideal_e4defrag: "best" */
	uint64_t ideal_extents;     /* sum of the shared ideal (not in the score) */
	uint64_t extents;           /* sum of extents (not in the score) */
};

/* One file's row of e4defrag -c's table, and its rank key. */
struct ext4fs_frag_score_row {
	uint64_t now;               /* map_extents */
	uint64_t best;              /* ideal_e4defrag */
	uint64_t size_per_extent_kb;
	float ratio;                /* (e4defrag_extents - best) * 100 / blocks, as e4defrag ranks files */
};

/* The summary lines of e4defrag -c. */
struct ext4fs_frag_score_summary {
	uint64_t total_extents;     /* "Total/best extents" */
	uint64_t best_extents;
	uint64_t size_per_extent_kb; /* "Average size per extent" */
	float score;                /* "Fragmentation score", printed with "%.0f" */
	int needs_defrag;           /* score > 55 */
};

/* Start an empty sum.  Cannot fail. */
void ext4fs_frag_score_init(struct ext4fs_frag_score *s);

/*
 * Whether e4defrag -c counts a file with this inode and these figures: a
 * regular file with i_size > 0 and data blocks.  (e4defrag also skips
 * lost+found by path, which is the caller's business.)  Cannot fail.
 */
int ext4fs_frag_score_counts(const struct ext4fs_inode *inode, const struct ext4fs_frag_file *f);

/*
 * The file's row (block_size in bytes) into *row, and its figures added to
 * *s.  A file without blocks changes nothing and gives a zero row.
 * Cannot fail.
 */
void ext4fs_frag_score_add(struct ext4fs_frag_score *s, const struct ext4fs_frag_file *f, uint32_t block_size,
			   struct ext4fs_frag_score_row *row);

/*
 * The summary of the files added, with e4defrag's integer and float
 * arithmetic.  Returns 0, or EXT4FS_E_INVALID_ARG when no file with blocks
 * was added (e4defrag then prints "none can be defragmented").
 */
int ext4fs_frag_score_summary(const struct ext4fs_frag_score *s, uint32_t block_size,
			      struct ext4fs_frag_score_summary *out);

/* -- Free space as e2freefrag reports it ----------------------------------- */

#define EXT4FS_FRAG_FREE_HIST 32                  /* bucket i: free extents of [2^(i-1), 2^i) blocks */
#define EXT4FS_FRAG_FREE_DEFAULT_CHUNK (1024 * 1024)
#define EXT4FS_FRAG_FREE_LARGE_DEFAULT (64ULL << 20)

struct ext4fs_frag_free {
	uint64_t chunk_bytes;        /* as asked; 0: none (chunks are then not counted) */
	unsigned chunk_bits;         /* log2 of the chunk size in bytes, rounded down */
	uint32_t chunk_blocks;       /* blocks per chunk (32 bits, as e2freefrag keeps it) */
	uint64_t total_chunks;
	uint64_t free_chunks;        /* chunks whose every block is free (counted only with chunk_bytes) */
	uint64_t extents;            /* free extents: maximal runs of free blocks */
	uint64_t min, max, sum;      /* their lengths in blocks (min is UINT64_MAX without any) */
	uint64_t hist_extents[EXT4FS_FRAG_FREE_HIST];
	uint64_t hist_blocks[EXT4FS_FRAG_FREE_HIST];
	uint64_t large_bytes;        /* the size asked for below */
	uint64_t large_extents;      /* free extents of at least large_bytes */
	uint64_t large_blocks;       /* the free blocks in them; their share is large_blocks / sum */
};

/*
 * Walk the block bitmap as e2freefrag walks it (each chunk of chunk_bytes,
 * 1 MiB when 0, in turn; the first chunk tested from the first data block;
 * the last one may be short and is then never free) and fill *out.
 * chunk_bytes is taken as given, as e2freefrag takes it (its chunk size is
 * the largest power of two not above it); it must be 0 or at least the
 * block size.  large_bytes (0: 64 MiB) sets what counts as a large free
 * extent.  bm is the block bitmap to read, or NULL to load it (and free it
 * again).  Errors:
 * EXT4FS_E_INVALID_ARG (chunk_bytes below the block size), the errors of
 * ext4fs_block_bitmap_load().  Nothing is kept.
 */
int ext4fs_frag_free_scan(struct ext4fs_fs *fs, const struct ext4fs_bitmap *bm, uint64_t chunk_bytes,
			  uint64_t large_bytes, struct ext4fs_frag_free *out);

/* -- Directories ------------------------------------------------------------ */

struct ext4fs_frag_dir {
	uint64_t files;              /* entries naming regular files with data blocks */
	uint64_t groups;             /* distinct block groups of those files' first blocks */
	uint64_t flex_groups;        /* distinct flex groups of them (= groups without flex_bg) */
	uint64_t dir_first_pblk;     /* the directory's first block; 0 when it has none (inline) */
	uint64_t distance_sum;       /* sum of |file's first block - dir_first_pblk|, blocks */
	double mean_distance;        /* distance_sum / files; 0 without files or without dir_first_pblk */
};

/*
 * Locality of directory ino (decoded record inode): its entries are taken
 * in readdir order ("." and ".." left out; a file linked twice counts
 * twice; one naming an inode number outside the file system is passed
 * over), each one's inode read, and the regular files with data blocks
 * measured by their first block (first_pblk of ext4fs_frag_file()).
 * Errors: EXT4FS_E_NOT_DIR, the errors of ext4fs_dir_iterate(), of reading
 * an entry's inode and of its block map, EXT4FS_E_NO_MEMORY.  Nothing is kept.
 */
int ext4fs_frag_dir(struct ext4fs_fs *fs, uint32_t ino, const struct ext4fs_inode *inode,
		    struct ext4fs_frag_dir *out);

struct ext4fs_frag_tree {
	uint64_t dirs;               /* directories read */
	uint64_t files;              /* regular files read (a file linked twice is read twice) */
	uint64_t blocks;             /* data blocks read, directories' and files' */
	uint64_t runs;               /* runs read: a run continues only where the last one ended */
	uint64_t seek_blocks;        /* sum of |start of a run - end of the run before| */
	uint64_t dirs_skipped;       /* directory entries not followed: read before (a cycle, a second link) */
};

/*
 * The seeks of reading the tree under directory root (inode number) as tar
 * or `find -exec cat` reads it: depth first, each directory's blocks read
 * in logical order, then its entries in the kernel's readdir order (hash
 * order where ext4fs_htree_readdir_hashed() says so, else disk order), a regular file's
 * data read in logical order when met, a subdirectory descended into when
 * met.  Each run of blocks read costs |its first block - the block after
 * the last one read|; the first run costs nothing.  Every directory is read
 * at most once (a hostile image's cycles end there) and the walk keeps one
 * list of entries per directory on its path.  Entries naming an inode
 * number outside the file system are passed over, as in ext4fs_frag_dir().  Errors: EXT4FS_E_NOT_DIR
 * (root), EXT4FS_E_NO_MEMORY, the errors of ext4fs_dir_iterate(), of
 * reading inodes and of their block maps.  Nothing is kept.
 */
int ext4fs_frag_tree(struct ext4fs_fs *fs, uint32_t root, struct ext4fs_frag_tree *out);

/*
 * The walk ext4fs_frag_tree() makes, for other users (defrag4fs lays a tree
 * out in this order): fn(ino, inode, arg) is called for root, then, depth
 * first, for each entry in readdir order that is a regular file (each time
 * it is met: a file linked twice is visited twice) or a directory not met
 * before (a directory is visited before its entries).  fn returns 0 to go
 * on, nonzero to stop the walk (returned as is).  *dirs_skipped (may be
 * NULL) counts directory entries not followed.  Errors: as
 * ext4fs_frag_tree().
 */
typedef int (*ext4fs_frag_tree_fn)(uint32_t ino, const struct ext4fs_inode *inode, void *arg);
int ext4fs_frag_tree_walk(struct ext4fs_fs *fs, uint32_t root, ext4fs_frag_tree_fn fn, void *arg,
			  uint64_t *dirs_skipped);

#ifdef __cplusplus
}
#endif
#endif
