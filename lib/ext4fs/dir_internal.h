/*
 * dir_internal.h - directory blocks edited in memory (dir_block.c), for the
 * modules that change directories: dir_write.c, htree_write.c and
 * dir_rebuild.c (not installed).
 *
 * Leaf blocks are edited in memory: scanned (validating every record),
 * given a new entry in the first record with room, stripped of an entry,
 * then sealed (checksum tail) and written.  The htree side calls these for
 * its leaves and keeps its index blocks to itself.
 */
#ifndef EXT4FS_DIR_INTERNAL_H
#define EXT4FS_DIR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/codec.h"
#include "ext4fs/dir.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

/* Short names for the entry layout codec.h defines. */
#define DIRW_DE_INODE     EXT4FS_DIRENT_OFF_INODE
#define DIRW_DE_REC_LEN   EXT4FS_DIRENT_OFF_REC_LEN
#define DIRW_DE_NAME_LEN  EXT4FS_DIRENT_OFF_NAME_LEN
#define DIRW_DE_FILE_TYPE EXT4FS_DIRENT_OFF_FILE_TYPE
#define DIRW_DE_NAME      EXT4FS_DIRENT_OFF_NAME
#define DIRW_DE_HEADER    EXT4FS_DIRENT_HEAD_SIZE

#define DIRW_NO_PREV   UINT32_MAX  /* the entry found is the first of its block */

/* Record length that holds a name of name_len bytes. */
static inline uint32_t dirw_rec_size(uint32_t name_len)
{
	return (DIRW_DE_HEADER + name_len + 3U) & ~3U;
}

/* What a scan of one leaf block found. */
struct dirw_scan {
	int found;           /* a live entry carries the name */
	uint32_t off;        /* ... at this offset */
	uint32_t prev;       /* ... after the record at prev (DIRW_NO_PREV when first) */
	uint32_t found_ino;  /* ... naming this inode */
	int has_room;        /* a record can take `need' more bytes */
	uint32_t room;       /* ... this one (the first such) */
};

/* Where entries end in a leaf block: before the checksum tail with metadata_csum. */
uint32_t ext4fs__dirw_leaf_end(const struct ext4fs_fs *fs);


/* Decoded rec_len of the record at off. */
uint32_t ext4fs__dirw_rec_len(const struct ext4fs_fs *fs, const unsigned char *buf, uint32_t off);

/*
 * Scan leaf block buf (logical block lblk of directory dir) for a live entry
 * named name (stops there) and for the first record with `need' bytes to
 * spare (need 0: do not look).  Every record is checked on the way, and with
 * metadata_csum the tail must be present.  Errors: EXT4FS_E_DIR_CORRUPT.
 */
int ext4fs__dirw_leaf_scan(struct ext4fs_fs *fs, uint32_t dir, const unsigned char *buf, uint64_t lblk,
			   const char *name, size_t len, uint32_t need, struct dirw_scan *s);

/*
 * Put a new entry into the record at off, which has room (a scan said so):
 * an unused record is taken whole, a live one gives up its slack.  Cannot fail.
 */
void ext4fs__dirw_leaf_put(struct ext4fs_fs *fs, unsigned char *buf, uint32_t off, const char *name,
			   size_t len, uint32_t ino, uint8_t file_type);

/*
 * Write an entry record at off of rec_len bytes (name and file type as
 * given; file_type is dropped without the filetype feature).  Cannot fail.
 */
void ext4fs__dirw_entry_store(struct ext4fs_fs *fs, unsigned char *buf, uint32_t off, uint32_t rec_len,
			      const char *name, size_t len, uint32_t ino, uint8_t file_type);

/* Start an empty leaf block: one unused record over the entry area, then the tail
 * (its checksum is filled in by ext4fs__dirw_block_seal()). */
void ext4fs__dirw_leaf_init(struct ext4fs_fs *fs, unsigned char *buf);

/*
 * Compute buf's checksum (metadata_csum; nothing otherwise) for logical
 * block lblk of dir: a dx tail for index blocks, the dirent tail (rewritten
 * whole) for leaves.  An index block whose `limit' leaves no room for the
 * tail inside the block is left as it is.  Cannot fail.
 */
void ext4fs__dirw_block_seal(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode,
			     uint64_t lblk, unsigned char *buf);

/* Seal and write block buf (logical lblk, physical pblk) of dir.  Errors: write errors. */
int ext4fs__dirw_block_write(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode,
			     uint64_t lblk, uint64_t pblk, unsigned char *buf);

/*
 * Read logical block lblk of dir for changing it: the checksum is verified
 * unless the handle ignores checksums.  Errors: as ext4fs_dir_block_read(),
 * the checksum errors.
 */
int ext4fs__dirw_block_read(struct ext4fs_fs *fs, uint32_t dir, const struct ext4fs_inode *inode,
			    uint64_t lblk, unsigned char *buf, uint64_t *pblk);

/*
 * Allocate and map the block after the directory's last one and grow i_size
 * over it (in *inode, which the caller writes).  Errors: EXT4FS_E_DIR_FULL
 * (the directory reached its size limit), the allocation errors; nothing
 * changed then.
 */
int ext4fs__dirw_block_append(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode,
			      uint32_t *lblk, uint64_t *pblk);

/* Stamp mtime and ctime with ext4fs_now() and write the directory's inode. */
int ext4fs__dirw_touch(struct ext4fs_fs *fs, uint32_t dir, struct ext4fs_inode *inode);

/* How many index entries fit in an index block whose limit/count pair sits at count_off. */
unsigned ext4fs__dirw_dx_limit(const struct ext4fs_fs *fs, uint32_t count_off);

/* Start interior index node buf: a fake empty record over the block, the limit, count entries. */
void ext4fs__dirw_dx_node_init(struct ext4fs_fs *fs, unsigned char *buf, unsigned count);

#endif
