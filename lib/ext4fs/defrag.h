/*
 * defrag.h - laying out whole sets of files: the planner of an offline
 * defragmenter, above relocate.h's moves of one file.
 *
 * Layer: services.  Relevant-file fragmentation is a directory's files
 * scattered away from each other and from the directory, so reading the
 * tree (find, tar, a build) seeks all over the disk; free-space
 * fragmentation is free space left in small pieces.  Two ways out:
 *
 *   - ext4fs_defrag_sweep() lays members out back to back from the start
 *     of the volume in a given order, the tree order of
 *     ext4fs_defrag_tree_order() (the order a depth-first reader meets
 *     them, as a fresh copy writes them): each directory's files end next
 *     to it and each other, every member contiguous, and the free space in
 *     one run at the end.  It moves what is not where that layout puts it.
 *   - ext4fs_defrag_compact() only closes the gaps, flex group by flex
 *     group, keeping every file's place in block order: free space
 *     consolidated with the least change to the layout.
 *
 * Both report each member through ext4fs_defrag_opts.each, and both leave
 * a result that a second pass does not change.
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

/*
 * What is laid out well enough already, as a fresh copy into a new file
 * system lays it out: of inos[0..n) (a layout order, as
 * ext4fs_defrag_tree_order() gives), every settled directory and the
 * regular files it names, sorted by inode number, in *keep (the caller
 * frees it with free()), *nkeep of them; the stretches from the first to
 * the last block of each settled directory's files, merged and in block
 * order, in *spans (the caller frees it), *nspans of them; *dirs is the
 * number of directories.  Given to ext4fs_defrag_sweep() as
 * ext4fs_defrag_opts.keep and .reserved, they stay where they are and
 * nothing is put between their files, so they are settled again the next
 * time.  A directory is settled when its regular files
 * with data are each in their fewest extents and lie within two block
 * groups' length of each other (or, when they are larger, within a
 * quarter more than their size), with at most two free runs, together at
 * most half their size, between the first and the last of them: the
 * kernel writes a directory's files near each other (a hole or two where
 * its preallocations were given back), while an aged tree spreads them
 * over the volume and shattered free space leaves holes between them all
 * (leaving those would leave the free space shattered).  Nor does one
 * stay whose span holds any block of a member that may move: its leaving
 * would leave a hole there (so a directory whose files interleave with
 * others' that move, as a kernel's copy often writes them, moves too).  A directory without file
 * data is not settled (placing it costs its own block or two).  Errors: those of ext4fs_inode_read(), ext4fs_dir_iterate() and
 * ext4fs_reloc_load(), EXT4FS_E_NO_MEMORY.
 */
int ext4fs_defrag_settled(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, uint32_t **keep, size_t *nkeep,
			  struct ext4fs_prun **spans, size_t *nspans, size_t *dirs);

/* What happened to one member. */
struct ext4fs_defrag_step {
	uint32_t ino;
	int moved;                       /* 1 when its blocks moved */
	enum ext4fs_reloc_skip why;      /* not moved: EXT4FS_RELOC_MOVABLE when in place, else why it stayed */
	struct ext4fs_reloc_result res;  /* the move's figures (zero when not moved); transactions: see below */
};

/*
 * Called after each member; nonzero stops the pass and is returned by it.
 * In journalled mode the sweep gathers small moves, of several members,
 * into one transaction, so its steps do not count transactions
 * (res.transactions is 0): ext4fs_txn_get_stats() before and after a pass
 * does.  Whatever a pass did is committed when it returns.
 */
typedef int (*ext4fs_defrag_step_fn)(const struct ext4fs_defrag_step *step, void *arg);

struct ext4fs_defrag_opts {
	uint64_t reserve;          /* blocks left free for mapping blocks (relocate.h) */
	ext4fs_defrag_step_fn each;  /* may be NULL */
	void *arg;
	/*
	 * The sweep only: members to leave where they are (sorted, as
	 * ext4fs_defrag_settled() gives; NULL for none).  One that lies where
	 * the layout would put it is passed as a member in place is.
	 */
	const uint32_t *keep;
	size_t nkeep;
	/* The sweep only: stretches nothing is put in (sorted, disjoint; NULL for none). */
	const struct ext4fs_prun *reserved;
	size_t nreserved;
};


/*
 * Free-space fragmentation: compact each flex group (each group without
 * flex_bg) so its free space ends up in one run at its end.  Every inode
 * with data blocks is taken in the order of its lowest block; a cursor
 * starts at each flex group's first block; a member in its fewest extents
 * moves to the first free run between the cursor and itself that holds it
 * whole; the cursor moves to its end.  Fragmented files, and files that
 * must stay, are obstacles (single-file work).  Gaps left behind the cursor
 * were too small for what came after, and nothing moves into them later,
 * so a second pass moves nothing.  Errors: those of ext4fs_reloc_load()
 * and ext4fs_reloc_move() (after a move's error in journalled mode the
 * handle accepts nothing more; see relocate.h), the inode scanner's read
 * errors, or what o->each returned.
 */
int ext4fs_defrag_compact(struct ext4fs_fs *fs, const struct ext4fs_defrag_opts *o);

/*
 * Lay members inos[0..n) out back to back from the start of the volume, in
 * that order, each contiguous, stepping over what may not move: the
 * layout a fresh copy gets (tree order: relevant-file fragmentation; with
 * the free space left in one run at the end: free-space fragmentation).
 * Room is made as the sweep goes: what lies where the next member goes is
 * evacuated (other members' data by logical range, their extent tree or
 * indirect blocks one by one) to free space at the top of the volume,
 * where the sweep meets it again in its turn.  A member already where the
 * layout puts it does not move, so a second sweep moves nothing; a member
 * there is no room left to make for stays.  See defrag_sweep.c's design
 * block.  A step's figures include what was evacuated to make room for
 * it.  Errors: as ext4fs_defrag_compact(), EXT4FS_E_BLOCK_STATE when two
 * inodes claim a block (run a checker first).
 */
int ext4fs_defrag_sweep(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, const struct ext4fs_defrag_opts *o);

/*
 * Free-space fragmentation, for files left in more extents than they need
 * for want of free space: for each of inos[0..n), find the stretch of its
 * size holding no block of anything that must stay and the fewest blocks
 * of files that may move (the nearest to the file among equals), move
 * those files out of it to free space outside it (evacuated as the sweep
 * does), then move the file in, whole.  Victims are so chosen to move the
 * fewest bytes, as the 2007 ext4 defragmentation design proposed.  A file
 * in its fewest extents already is left (EXT4FS_RELOC_IDEAL); one for
 * which the free blocks, less o->reserve, are fewer than its size, or no
 * such stretch exists, stays (EXT4FS_RELOC_NO_SPACE).  Each file is
 * reported through o->each; a step's figures include what was evacuated.
 * Errors: as ext4fs_defrag_sweep().
 */
int ext4fs_defrag_make_room(struct ext4fs_fs *fs, const uint32_t *inos, size_t n, const struct ext4fs_defrag_opts *o);

#ifdef __cplusplus
}
#endif
#endif
