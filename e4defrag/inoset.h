/*
 * inoset.h - a set of inode numbers, for the walks that must see a hard-linked
 * file or a directory only once, and for the files a run laid out.  Only the inodes that can be met twice go
 * in (directories, files with more than one link), so the set stays small
 * on volumes of millions of files, where a bitmap of every inode number
 * would not.
 */
#ifndef DEFRAG4FS_INOSET_H
#define DEFRAG4FS_INOSET_H

#include <stddef.h>
#include <stdint.h>

struct df_inoset {
	uint32_t *slots;   /* open addressing; 0 marks a free slot (inode 0 never exists) */
	size_t cap;        /* a power of two, or 0 */
	size_t count;
};

/* Add ino (nonzero): 1 when it was new, 0 when already there, -ENOMEM. */
int df_inoset_add(struct df_inoset *s, uint32_t ino);

/* 1 when ino is in the set, else 0.  Cannot fail. */
int df_inoset_has(const struct df_inoset *s, uint32_t ino);

/* Empty the set and free its memory; the set may be used again. */
void df_inoset_free(struct df_inoset *s);

#endif
