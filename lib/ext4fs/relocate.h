/*
 * relocate.h - moving a file's data blocks to other blocks of the same file
 * system, safely: what an offline defragmenter, a shrinking resizer or a
 * repair that evacuates a region needs.
 *
 * Layer: services.  A move is planned, then done:
 *
 *   ext4fs_reloc_load()        the file's data runs in logical order, and
 *                              whether it may be moved at all;
 *   ext4fs_reloc_find_space()  free runs to put it in (one if there is one
 *                              long enough, else the fewest longest);
 *   ext4fs_reloc_predict()     the extents (frag.h's count) it would have;
 *   ext4fs_reloc_move()        claim the new blocks, copy the written data,
 *                              switch the mapping, free the old blocks.
 *
 * ext4fs_reloc_defrag_file() strings them together for one file.
 *
 * Crash safety.  In journalled mode (txn.h) the data is copied to the new
 * blocks, which no committed state points at, and the switch (map, bitmaps,
 * counts, checksums) commits as one transaction; a large file switches in
 * several pieces, each its own transaction, so at every instant each
 * logical block of the file maps either its old or its new block, holding
 * the same bytes.  The old blocks stay in use until the switch commits, and
 * are not overwritten before that commit is durable.  Without journalled
 * mode the writes go through (an undo file below the handle can revert
 * them).  Holes stay holes, unwritten extents stay unwritten (not copied),
 * an extent file stays an extent file (losing index blocks it no longer
 * needs), a block-mapped file stays block-mapped.  Times, size, owner and
 * xattrs are not touched; i_blocks changes only by the mapping blocks the
 * new map needs fewer or more of.
 */
#ifndef EXT4FS_RELOCATE_H
#define EXT4FS_RELOCATE_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A run of physical blocks. */
struct ext4fs_prun {
	uint64_t pblk;
	uint64_t len;
};

/* One mapped run of a file: logical blocks lblk.. at pblk.., len blocks. */
struct ext4fs_reloc_run {
	uint64_t lblk;
	uint64_t pblk;
	uint64_t len;
	int unwritten;
};

/* Why a file is not moved (ext4fs_reloc_load(), ext4fs_reloc_defrag_file()). */
enum ext4fs_reloc_skip {
	EXT4FS_RELOC_MOVABLE = 0,
	EXT4FS_RELOC_NO_BLOCKS,      /* inline data, fast symlink, empty, or a device, fifo, socket */
	EXT4FS_RELOC_IMMUTABLE,      /* immutable: boot loaders record its blocks */
	EXT4FS_RELOC_SWAP,           /* holds a swap signature: the kernel's swap map records its blocks */
	EXT4FS_RELOC_SYSTEM,         /* reserved inode (the root directory excepted): bad blocks, the journal, the resize inode, ... */
	EXT4FS_RELOC_QUOTA,          /* a quota file of the superblock */
	EXT4FS_RELOC_ORPHAN,         /* on the orphan list, or the orphan file */
	EXT4FS_RELOC_IDEAL,          /* (defrag_file) already in its fewest extents */
	EXT4FS_RELOC_NO_SPACE,       /* (defrag_file) no free space that would give fewer extents */
};

/* A short text for a reason ("immutable", "swap file", ...).  Cannot fail. */
const char *ext4fs_reloc_skip_name(enum ext4fs_reloc_skip why);

/* A file's data as a move sees it. */
struct ext4fs_reloc_file {
	uint32_t ino;
	struct ext4fs_inode inode;      /* as loaded; updated by a move */
	struct ext4fs_reloc_run *runs;  /* mapped runs, logical order, each contiguous on disk */
	size_t nruns;
	uint64_t blocks;                /* data blocks mapped (sum of runs' len) */
	uint64_t extents;               /* frag.h's extent count */
	uint64_t map_blocks;            /* extent tree nodes or indirect blocks */
	enum ext4fs_reloc_skip skip;    /* EXT4FS_RELOC_MOVABLE, or why it must stay */
};

/*
 * Load inode ino's runs into *f (which the caller releases with
 * ext4fs_reloc_release(), also on error) and decide whether it may move:
 * f->skip.  A file that must stay is still loaded (its runs are counted as
 * in use by planners).  Errors: those of ext4fs_inode_read() and
 * ext4fs_block_iterate() (a corrupt map), EXT4FS_E_NO_MEMORY.
 */
int ext4fs_reloc_load(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_reloc_file *f);

/* Free what ext4fs_reloc_load() allocated; *f is zeroed.  Cannot fail. */
void ext4fs_reloc_release(struct ext4fs_reloc_file *f);

#define EXT4FS_RELOC_NEAR 0x1  /* the first fitting run at or after goal (wrapping), not the tightest */

/*
 * Choose free runs for need blocks from the handle's live block bitmap:
 * with one free run of at least need blocks, the one that fits tightest
 * (the nearest to goal among equals; EXT4FS_RELOC_NEAR: the first at or
 * after goal), its first need blocks; else the longest free runs, longest
 * first, at most max_pieces of them (0: no limit), the last one cut to
 * size.  With a RAID stripe (ext4fs_alloc_stripe()) and need at least a
 * stripe, the one run starts on a stripe boundary, as the kernel's
 * allocator places such a file, when a run holds it that way (the
 * tightest of those; without EXT4FS_RELOC_NEAR).  Runs may span block groups where the free blocks are contiguous
 * (flex_bg).  Nothing is claimed.  *out (the caller frees it with free())
 * lists the runs in the order to fill them, *n of them.  Errors:
 * EXT4FS_E_NO_SPACE (not enough free blocks in max_pieces runs, or fewer
 * than reserve blocks would stay free besides), EXT4FS_E_INVALID_ARG
 * (need 0), EXT4FS_E_NO_MEMORY, bitmap load errors.
 */
int ext4fs_reloc_find_space(struct ext4fs_fs *fs, uint64_t need, uint64_t goal, size_t max_pieces,
			    uint64_t reserve, unsigned flags, struct ext4fs_prun **out, size_t *n);

/*
 * The extents (frag.h's count) file f would have with its data laid into
 * the target runs t[0..n) in logical order, holes skipped.  Cannot fail;
 * returns 0 when t is too short for f.
 */
uint64_t ext4fs_reloc_predict(const struct ext4fs_reloc_file *f, const struct ext4fs_prun *t, size_t n);

/*
 * The fewest extents file f can have: its data packed in one run, which
 * splits it at each hole (frag.h's count), and never fewer than the shared
 * ideal, ceil(blocks / 32768).  Cannot fail.
 */
uint64_t ext4fs_reloc_fewest_extents(const struct ext4fs_reloc_file *f);

/* What a move did. */
struct ext4fs_reloc_result {
	uint64_t blocks_moved;     /* data blocks that changed place (written and unwritten) */
	uint64_t bytes_copied;     /* of written blocks */
	uint64_t extents_before;
	uint64_t extents_after;
	uint64_t transactions;     /* commits made (0 without journalled mode) */
};

/*
 * Move file f (loaded, movable) into the target runs t[0..n), which must be
 * free and hold at least f->blocks blocks: data blocks are laid in logical
 * order, holes skipped.  See the top of this file for the order of writes.
 * f is reloaded afterwards (its runs describe the new place).  Errors:
 * EXT4FS_E_INVALID_ARG (f not movable, t too short), EXT4FS_E_BLOCK_STATE
 * (a target block in use), EXT4FS_E_JOURNAL_FULL (the journal cannot take
 * even a one-run piece), EXT4FS_E_NO_SPACE (before a piece, when the
 * allocator, the reserved blocks left alone, could not give the mapping
 * blocks it may need: that piece and the ones after it were not started),
 * EXT4FS_E_TXN_FAILED (a switch failed half way: in journalled mode the
 * transaction is given up, ext4fs_txn_abort(), so the disk stays at the
 * last commit and the handle accepts nothing more; without it the map is
 * half switched and an undo file is the way back), I/O errors, corrupt
 * maps.  Pieces switched before an error stay switched.  *res (may be
 * NULL) counts what was done, also on error.  While it runs, the targets
 * of the pieces still to come are fenced from the allocator, and at its
 * end every fence is lifted (ext4fs_alloc_unfence_all(), the caller's
 * too).
 */
int ext4fs_reloc_move(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, const struct ext4fs_prun *t, size_t n,
		      struct ext4fs_reloc_result *res);

/*
 * As ext4fs_reloc_move(), for the data of f in logical blocks [lblk, lend)
 * only: they are laid into t in logical order (t holds at least as many
 * blocks as they are), the rest of the file stays.  f is reloaded.
 * Errors: those of ext4fs_reloc_move(), EXT4FS_E_INVALID_ARG when f maps
 * nothing there.
 */
int ext4fs_reloc_move_range(struct ext4fs_fs *fs, struct ext4fs_reloc_file *f, uint64_t lblk, uint64_t lend,
			    const struct ext4fs_prun *t, size_t n, struct ext4fs_reloc_result *res);

/*
 * Defragment one file: load it; unless it must stay or is already in its
 * fewest extents (the shared ideal, ceil(blocks / 32768), or, for a file
 * with holes, the extents of its data packed in one run: each hole splits
 * it, as e4defrag leaves it too), find space for it near its first
 * block (fewer pieces than its extents, leaving `reserve` blocks free for
 * mapping blocks) and move it there when that gives fewer extents.  *why
 * says what happened: EXT4FS_RELOC_MOVABLE when moved, else the reason it
 * stayed.  Errors: those of ext4fs_reloc_load() and ext4fs_reloc_move();
 * no free space is not an error (*why = EXT4FS_RELOC_NO_SPACE).
 */
int ext4fs_reloc_defrag_file(struct ext4fs_fs *fs, uint32_t ino, uint64_t reserve, enum ext4fs_reloc_skip *why,
			     struct ext4fs_reloc_result *res);

#ifdef __cplusplus
}
#endif
#endif
