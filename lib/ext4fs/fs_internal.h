/*
 * fs_internal.h - the file-system handle's insides, for library modules only
 * (not installed).
 */
#ifndef EXT4FS_FS_INTERNAL_H
#define EXT4FS_FS_INTERNAL_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "extset.h"

#define EXT4FS_CACHE_SLOTS 64   /* direct-mapped block cache: metadata re-reads are local */
#define FS_LISTENERS_MAX 6      /* write layer, MMP claim, block allocator, transactions, and room to spare */

struct ext4fs_fs;

/*
 * A listener: how a layer above the handle hears about it without the
 * handle knowing that layer.  The write layer (fs_write.c) registers one
 * when it takes a handle on (a writable open, or live bitmaps loaded), the
 * block allocator (alloc.c) one when it builds its state; the handle calls
 * them and calls nothing else above it.  Any callback may be NULL; ctx is
 * the listener's own state, given back to it.
 */
struct ext4fs__listener_ops {
	/* Blocks [blk, blk + count) were marked in use (used 1) or free in the live block bitmap. */
	void (*space_changed)(struct ext4fs_fs *fs, void *ctx, uint64_t blk, uint64_t count, int used);
	/* Group descriptors were set by hand: drop what was derived from the old counts
	   (a listener may unregister itself here, and only itself). */
	void (*descs_changed)(struct ext4fs_fs *fs, void *ctx);
	/* ext4fs_close_flush() has flushed and will close: a last write whose failure it reports. */
	int (*close_flush)(struct ext4fs_fs *fs, void *ctx);
	/* The handle is closing (the listener is already unregistered): release ctx. */
	void (*close)(struct ext4fs_fs *fs, void *ctx);
};

struct ext4fs_fs {
	struct ext4fs_io *io;
	unsigned flags;
	struct ext4fs_super sb;
	unsigned char sb_raw[EXT4FS_SUPER_SIZE];
	struct ext4fs_geom geom;
	struct ext4fs_group_desc *groups;       /* group_count entries */
	unsigned char *gd_raw;                  /* group_count * desc_size bytes */
	unsigned char *gd_csum_ok;              /* group_count flags */
	uint64_t cache_blk[EXT4FS_CACHE_SLOTS];
	unsigned char cache_valid[EXT4FS_CACHE_SLOTS];
	unsigned char *cache_data;              /* EXT4FS_CACHE_SLOTS * block_size */
	char errmsg[256];

	/* The write layer's state (fs_write.c), released by its listener at close. */
	struct ext4fs_bitmap *block_map;        /* live block bitmap, loaded on first use */
	struct ext4fs_bitmap *inode_map;        /* live inode bitmap, loaded on first use */
	unsigned char *group_dirty;             /* group_count entries of FS_DIRTY_* bits */
	int super_dirty;
	/* The live bitmaps changed since open (ext4fs_bitmap_changed()), by EXT4FS_*_BITMAP. */
	unsigned char bitmap_changed[2];
	int primary_only;                       /* flush leaves the backup copies alone */
	int hold_frees;                         /* journalled (txn.c): frees are recorded in held, not done, */
	struct extset held;
	struct extset fresh;                    /* and blocks taken since the last commit are noted here */
	struct extset unsynced_frees;           /* freed by a commit whose commit block may not be durable yet */
	int unsynced_all;                       /* ...or, short of memory to list them, any block may be */
	int flushed_for_close;                  /* ext4fs_close_flush() flushed: closing writes nothing more */
	uint64_t io_written_counted;            /* io bytes written already in s_kbytes_written */
	int time_fixed;
	int64_t fixed_sec;
	uint32_t fixed_nsec;
	/* The layers above, listening (ext4fs__fs_listen() below); called newest first. */
	struct ext4fs__listener_slot {
		const struct ext4fs__listener_ops *ops;
		void *ctx;
	} listeners[FS_LISTENERS_MAX];
	unsigned nlisteners;
};

#define FS_DIRTY_BLOCK_BITMAP 0x1
#define FS_DIRTY_INODE_BITMAP 0x2
#define FS_DIRTY_DESC         0x4

/*
 * Record a description of a failure and return err, so a failing path reads
 * "return ext4fs__fs_fail(fs, EXT4FS_E_X, "inode %u: ...", ino);".
 */
int ext4fs__fs_fail(struct ext4fs_fs *fs, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Nonzero when checksum mismatches are to be reported as errors. */
static inline int fs_csum_strict(const struct ext4fs_fs *fs)
{
	return !(fs->flags & EXT4FS_OPEN_IGNORE_CSUM);
}

/*
 * A handle for a file system that exists only in memory so far (mkfs): the
 * superblock is validated and the geometry derived as ext4fs_open() does;
 * the descriptors start zeroed and there is no I/O channel.  Errors as
 * validation reports them, EXT4FS_E_NO_MEMORY; errmsg says which field.
 */
int ext4fs__fs_new_in_memory(const struct ext4fs_super *sb, struct ext4fs_fs **out, char *errmsg,
			     size_t errmsg_len);

/* Set group g's descriptor: encode it and its checksum into the raw table. */
void ext4fs__fs_group_desc_store(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd);

/* Encode fs->sb into fs->sb_raw with its checksum (metadata_csum). */
void ext4fs__fs_super_store(struct ext4fs_fs *fs);

/* Nonzero for a handle that may write. */
static inline int fs_writable(const struct ext4fs_fs *fs)
{
	return (fs->flags & EXT4FS_OPEN_RW) && fs->io != NULL;
}

/*
 * Register a listener (ops, ctx) on fs.  Errors: EXT4FS_E_INVALID_ARG when
 * FS_LISTENERS_MAX are registered already (a library bug).
 */
int ext4fs__fs_listen(struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops, void *ctx);

/* Unregister the listener with these ops, if there is one. */
void ext4fs__fs_unlisten(struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops);

/* The ctx of the listener with these ops; NULL when none is registered. */
void *ext4fs__fs_listener_ctx(const struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops);

/* Nonzero when a listener with these ops is registered. */
int ext4fs__fs_listening(const struct ext4fs_fs *fs, const struct ext4fs__listener_ops *ops);

/* Tell every listener that blocks changed state in the live bitmap (the write layer calls this). */
void ext4fs__fs_space_changed(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, int used);

/* Tell every listener that the handle is about to close after a flush; the first error, else 0. */
int ext4fs__fs_close_flush_notify(struct ext4fs_fs *fs);

/* Tell every listener that group descriptors were set by hand. */
void ext4fs__fs_descs_changed(struct ext4fs_fs *fs);

/*
 * The read-only half of ext4fs_open_io(), whose writable half and backup
 * handling are the write layer's (fs_open.c).  ext4fs__fs_alloc() makes a
 * handle over io (which it takes) with these flags: NULL when out of
 * memory (io closed then).  ext4fs__fs_load() reads and validates the
 * superblock (at opts->superblock when given) and the group descriptors.
 * Errors: as ext4fs_open(), with fs->errmsg set; the caller closes fs.
 */
struct ext4fs_fs *ext4fs__fs_alloc(struct ext4fs_io *io, unsigned flags);
int ext4fs__fs_load(struct ext4fs_fs *fs, const struct ext4fs_open_opts *opts);

/* A handle that failed to open: fs->errmsg (else err's text) into errmsg, fs closed; returns err. */
int ext4fs__fs_abandon(struct ext4fs_fs *fs, int err, char *errmsg, size_t errmsg_len);

#endif
