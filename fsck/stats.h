/*
 * stats.h - the figures behind e4fsck -v's statistics block (e2fsck's):
 * inodes by kind, how their blocks are mapped, and how many directory
 * entries name them.  Counted by pass 1's workers and pass 2 (stats.c),
 * printed and put in --json by report.c.
 */
#ifndef E4FSCK_STATS_H
#define E4FSCK_STATS_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

struct e4fsck;

/* e2fsck's histogram has five bars; deeper trees count in the last. */
#define FSCK_EXTENT_DEPTHS 5

struct fsck_stats {
	/* pass 1: inodes in use, by kind */
	uint64_t regular, directories, chardevs, blockdevs, fifos, sockets;
	uint64_t symlinks, fast_symlinks;
	uint64_t large_files;                 /* regular files of 2 GiB or more */
	uint64_t ind, dind, tind;             /* block-mapped inodes with that indirect level */
	uint64_t extent_depth[FSCK_EXTENT_DEPTHS];
	uint64_t dirs_fragmented;             /* the directories among ctx->files_fragmented */
	uint64_t bad_blocks;                  /* blocks listed in the bad blocks inode */
	/* pass 2 */
	uint64_t entries;                     /* entries naming an inode, '.' and '..' included */
	uint64_t extra_links;                 /* entries naming an inode an earlier entry named */
	/* which inode the fragmentation found since the last call belongs to (stats.c) */
	uint64_t frag_mark;
	int pending_dir;
};

/*
 * Pass 1: count inode ino (as read, in a worker's handle fs) into s.  Call
 * it for every inode the worker scans, before checking it; fragmented is
 * the worker's count of non-contiguous inodes so far.
 */
void fsck_stats_inode(struct fsck_stats *s, struct ext4fs_fs *fs, uint32_t ino,
		      const struct ext4fs_inode *in, uint64_t fragmented);

/* Add a worker's figures (its final non-contiguous count: fragmented) into dst. */
void fsck_stats_merge(struct fsck_stats *dst, struct fsck_stats *src, uint64_t fragmented);

/*
 * Pass 2: a directory entry names inode ino.  Counts it in ctx->links_seen
 * and the statistics; returns the inode's new count or -ENOMEM / -ERANGE.
 */
int fsck_count_entry(struct e4fsck *ctx, uint32_t ino);

#endif
