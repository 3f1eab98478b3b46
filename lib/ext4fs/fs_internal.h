/*
 * fs_internal.h - the file-system handle's insides, for library modules only
 * (not installed).
 */
#ifndef EXT4FS_FS_INTERNAL_H
#define EXT4FS_FS_INTERNAL_H

#include <stdint.h>
#include "ext4fs/fs.h"

#define EXT4FS_CACHE_SLOTS 64   /* direct-mapped block cache: metadata re-reads are local */

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

	/* Writable handles only (fs_write.c). */
	struct ext4fs_bitmap *block_map;        /* live block bitmap, loaded on first use */
	struct ext4fs_bitmap *inode_map;        /* live inode bitmap, loaded on first use */
	unsigned char *group_dirty;             /* group_count entries of FS_DIRTY_* bits */
	int super_dirty;
	/* The live bitmaps changed since open (ext4fs_bitmap_changed()), by EXT4FS_*_BITMAP. */
	unsigned char bitmap_changed[2];
	int primary_only;                       /* flush leaves the backup copies alone */
	int time_fixed;
	int64_t fixed_sec;
	uint32_t fixed_nsec;
	struct balloc *balloc;                  /* block allocator state (alloc.c), or NULL */
};

#define FS_DIRTY_BLOCK_BITMAP 0x1
#define FS_DIRTY_INODE_BITMAP 0x2
#define FS_DIRTY_DESC         0x4

/*
 * Record a description of a failure and return err, so a failing path reads
 * "return fs_fail(fs, EXT4FS_E_X, "inode %u: ...", ino);".
 */
int fs_fail(struct ext4fs_fs *fs, int err, const char *fmt, ...)
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
int fs_new_in_memory(const struct ext4fs_super *sb, struct ext4fs_fs **out, char *errmsg,
		     size_t errmsg_len);

/* Set group g's descriptor: encode it and its checksum into the raw table. */
void fs_group_desc_store(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd);

/* Encode fs->sb into fs->sb_raw with its checksum (metadata_csum). */
void fs_super_store(struct ext4fs_fs *fs);

/* Nonzero for a handle that may write. */
static inline int fs_writable(const struct ext4fs_fs *fs)
{
	return (fs->flags & EXT4FS_OPEN_RW) && fs->io != NULL;
}

/* Refuse with EXT4FS_E_READ_ONLY (and a message naming what) unless writable. */
int fs_require_rw(struct ext4fs_fs *fs, const char *what);

/* Check a writable open: features we keep up to date, no journal to replay (fs_write.c). */
int fs_write_open_check(struct ext4fs_fs *fs);

/* Release what a writable handle holds (bitmaps, allocator state) at close. */
void fs_write_release(struct ext4fs_fs *fs);

/* Update group g's descriptor in memory (counts, flags) and mark it dirty. */
void fs_group_desc_update(struct ext4fs_fs *fs, uint32_t g, const struct ext4fs_group_desc *gd);

/* -- Bitmap internals (bitmap.c) -- */
void bitmap_set_range(struct ext4fs_bitmap *bm, uint64_t n, uint64_t count);
void bitmap_clear_range(struct ext4fs_bitmap *bm, uint64_t n, uint64_t count);
/* Copy nbits bits from bit first_bit into dst (bit 0 of dst = first_bit), padding
   the rest of pad_bytes with ones, as on-disk bitmaps are padded. */
void bitmap_copy_out(const struct ext4fs_bitmap *bm, uint64_t first_bit, uint64_t nbits,
		     unsigned char *dst, size_t pad_bytes);
/* The raw bit array (bit i = item start + (i << shift)) for the allocator. */
const unsigned char *bitmap_bits(const struct ext4fs_bitmap *bm);
/*
 * Read group g's block (inodes != 0: inode) bitmap block and record its
 * findings in bm without touching bm's bits: a backup open that stops
 * believing a group's UNINIT flag reports the block as a checker then
 * finds it.  Errors: EXT4FS_E_INVALID_ARG, EXT4FS_E_NO_MEMORY, read errors.
 */
int bitmap_note_block(struct ext4fs_fs *fs, struct ext4fs_bitmap *bm, int inodes, uint32_t g);

/* -- Block allocator hooks (alloc.c) -- */
struct balloc;
/* Told about every change ext4fs_blocks_mark_used/free made, to keep buddies in step. */
void balloc_note(struct ext4fs_fs *fs, uint64_t blk, uint64_t count, int used);
/* Free the allocator's state. */
void balloc_destroy(struct ext4fs_fs *fs);

#endif
