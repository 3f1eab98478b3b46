/*
 * defrag.h - laying out whole sets of files: the planner of an offline
 * defragmenter, above relocate.h's moves of one file.
 *
 * Layer: services.  Relevant-file fragmentation is a directory's files
 * scattered away from each other and from the directory, so reading the
 * tree (find, tar, a build) seeks all over the disk.  The cure here is the
 * layout a fresh copy of the tree would get: directories and files in the
 * order a depth-first reader meets them (ext4fs_frag_tree_walk()), each
 * starting where the one before ended.  Reaching it in place:
 *
 *   - members are taken in that order, with a cursor at the end of the
 *     last one placed;
 *   - a member that is in its fewest extents and starts within `window`
 *     blocks of the cursor (before or after it) is where it should be and
 *     stays: healthy trees are left alone, and moves are what the layout
 *     really needs;
 *   - any other member goes to the first free run at or after the cursor
 *     that holds it whole, when that is nearer the cursor than it is now
 *     (or it is fragmented now); else it stays;
 *   - the cursor then moves to the member's end, wherever it is.
 *
 * A second pass over the result finds every member in place, unless moves
 * freed space closer to a member than the space it was given.
 */
#ifndef EXT4FS_DEFRAG_H
#define EXT4FS_DEFRAG_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/relocate.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The members of the tree under directory root in layout order: root, then
 * depth first in readdir order each directory and each regular file, an
 * inode linked more than once at its first link.  *inos (the caller frees
 * it with free()) holds *n inode numbers.  Errors: those of
 * ext4fs_frag_tree_walk(), EXT4FS_E_NO_MEMORY.
 */
int ext4fs_defrag_tree_order(struct ext4fs_fs *fs, uint32_t root, uint32_t **inos, size_t *n);

/* What happened to one member. */
struct ext4fs_defrag_step {
	uint32_t ino;
	int moved;                       /* 1 when its blocks moved */
	enum ext4fs_reloc_skip why;      /* not moved: EXT4FS_RELOC_MOVABLE when in place, else why it stayed */
	struct ext4fs_reloc_result res;  /* the move's figures (zero when not moved) */
};

/* Called after each member; nonzero stops the pass and is returned by it. */
typedef int (*ext4fs_defrag_step_fn)(const struct ext4fs_defrag_step *step, void *arg);

struct ext4fs_defrag_opts {
	uint64_t window;           /* in place within this many blocks of the cursor (0: a block group) */
	uint64_t reserve;          /* blocks left free for mapping blocks (relocate.h) */
	ext4fs_defrag_step_fn each;  /* may be NULL */
	void *arg;
};

/*
 * Lay out members inos[0..n) in that order as the top of this file says.
 * Errors: those of ext4fs_reloc_load() and ext4fs_reloc_move() (after a
 * move's error in journalled mode the handle accepts nothing more; see
 * relocate.h), or what each returned.  No room for a member is not an
 * error: it stays (why EXT4FS_RELOC_NO_SPACE).
 */
int ext4fs_defrag_pack(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, const struct ext4fs_defrag_opts *o);

/*
 * Free-space fragmentation: compact each flex group (each group without
 * flex_bg) so its free space ends up in one run at its end.  Every inode
 * with data blocks is taken in the order of its lowest block; a cursor
 * starts at each flex group's first block; a member in its fewest extents
 * moves to the first free run between the cursor and itself that holds it
 * whole; the cursor moves to its end.  Fragmented files, and files that
 * must stay, are obstacles (single-file work).  Gaps left behind the cursor
 * were too small for what came after, and nothing moves into them later,
 * so a second pass moves nothing.  Steps are reported as for
 * ext4fs_defrag_pack() (o->window is not used).  Errors: as
 * ext4fs_defrag_pack(), and the inode scanner's read errors.
 */
int ext4fs_defrag_compact(struct ext4fs_fs *fs, const struct ext4fs_defrag_opts *o);

#ifdef __cplusplus
}
#endif
#endif
