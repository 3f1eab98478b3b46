/*
 * mem_image.h - a tiny ext4 image built in memory for the unit tests (no
 * external tools).
 *
 * The image: 1 KiB blocks, at most MEM_IMAGE_MAX_BLOCKS of them, one group.
 * Block 1 holds the superblock, 2 the group descriptor, 3 and 4 the
 * bitmaps and MEM_IMAGE_ITABLE onwards the inode table; the blocks after
 * the inode table are left to each test.  With metadata_csum the
 * superblock, descriptor and inode checksums are filled in through the
 * library's own helpers when the image is opened.
 *
 * There is one image per test program; mem_image_init() starts it afresh.
 */
#ifndef MEM_IMAGE_H
#define MEM_IMAGE_H

#include <stdint.h>
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

#define MEM_IMAGE_BS          1024U
#define MEM_IMAGE_MAX_BLOCKS  256U
#define MEM_IMAGE_ITABLE      5U

/* What mem_image_init() writes beyond the fixed fields. */
struct mem_image_layout {
	uint32_t blocks;                /* s_blocks_count_lo, at most MEM_IMAGE_MAX_BLOCKS */
	uint32_t inodes;                /* s_inodes_count = s_inodes_per_group */
	uint32_t inode_size;            /* s_inode_size */
	uint32_t compat;                /* s_feature_compat, as given */
	uint32_t incompat;              /* s_feature_incompat, as given */
	uint32_t ro_compat;             /* s_feature_ro_compat, as given */
	const unsigned char *uuid;      /* s_uuid (16 bytes); NULL leaves it zero */
	uint16_t extra_isize;           /* s_min/want_extra_isize and each i_extra_isize; 0: none */
	uint8_t checksum_type;          /* s_checksum_type (1: crc32c); 0 leaves it zero */
};

/* Store v little-endian at p. */
void put16(unsigned char *p, uint16_t v);
/* Store v little-endian at p. */
void put32(unsigned char *p, uint32_t v);
/* The little-endian 32-bit value at p. */
uint32_t get32(const unsigned char *p);

/* Wipe the image and write a superblock and group descriptor for l. */
void mem_image_init(const struct mem_image_layout *l);
/* Block b of the image. */
unsigned char *block(uint32_t b);
/* The superblock (byte 1024 of the image). */
unsigned char *super(void);
/* The on-disk record of inode ino. */
unsigned char *inode_rec(uint32_t ino);
/* Clear inode ino and give it mode, size, one link, flags and i_extra_isize; returns its record. */
unsigned char *mem_image_inode(uint32_t ino, uint16_t mode, uint32_t size, uint32_t flags);
/* Whether the superblock has metadata_csum. */
int csum_image(void);
/* The checksum seed of the file system: crc32c of the superblock's uuid. */
uint32_t mem_image_csum_seed(void);
/* Open the image with these open flags, filling in checksums first under metadata_csum. */
struct ext4fs_fs *open_image(unsigned flags);
/* Read inode ino of fs, failing the test on an error. */
void read_inode(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode);

#endif
