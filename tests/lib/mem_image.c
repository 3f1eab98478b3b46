/*
 * mem_image.c - the in-memory ext4 image shared by the unit tests; see
 * mem_image.h for its layout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "ext4fs/crc.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/io.h"
#include "ext4fs/super.h"
#include "mem_image.h"

#define BS MEM_IMAGE_BS

static unsigned char image[MEM_IMAGE_MAX_BLOCKS * BS];
static struct mem_image_layout layout;

void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

void put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

unsigned char *block(uint32_t b)
{
	return image + (size_t)b * BS;
}

unsigned char *super(void)
{
	return image + 1024;
}

void mem_image_init(const struct mem_image_layout *l)
{
	unsigned char *sb = super(), *gd = block(2);

	assert_true(l->blocks <= MEM_IMAGE_MAX_BLOCKS);
	layout = *l;
	memset(image, 0, sizeof(image));
	put32(sb + 0x00, l->inodes);               /* s_inodes_count */
	put32(sb + 0x04, l->blocks);               /* s_blocks_count_lo */
	put32(sb + 0x14, 1);                       /* s_first_data_block */
	put32(sb + 0x18, 0);                       /* s_log_block_size: 1 KiB */
	put32(sb + 0x1C, 0);                       /* s_log_cluster_size */
	put32(sb + 0x20, 8192);                    /* s_blocks_per_group */
	put32(sb + 0x24, 8192);                    /* s_clusters_per_group */
	put32(sb + 0x28, l->inodes);               /* s_inodes_per_group */
	put16(sb + 0x38, EXT4FS_SUPER_MAGIC);
	put16(sb + 0x3A, 1);                       /* s_state: clean */
	put32(sb + 0x4C, 1);                       /* s_rev_level: dynamic */
	put32(sb + 0x54, 11);                      /* s_first_ino */
	put16(sb + 0x58, (uint16_t)l->inode_size); /* s_inode_size */
	put32(sb + 0x5C, l->compat);
	put32(sb + 0x60, l->incompat);
	put32(sb + 0x64, l->ro_compat);
	if (l->uuid)
		memcpy(sb + 0x68, l->uuid, 16);
	put16(sb + 0x15C, l->extra_isize);         /* s_min_extra_isize */
	put16(sb + 0x15E, l->extra_isize);         /* s_want_extra_isize */
	sb[0x175] = l->checksum_type;              /* s_checksum_type */
	put32(gd + 0x00, 3);                       /* bg_block_bitmap */
	put32(gd + 0x04, 4);                       /* bg_inode_bitmap */
	put32(gd + 0x08, MEM_IMAGE_ITABLE);        /* bg_inode_table */
}

unsigned char *inode_rec(uint32_t ino)
{
	return block(MEM_IMAGE_ITABLE) + (size_t)(ino - 1) * layout.inode_size;
}

unsigned char *mem_image_inode(uint32_t ino, uint16_t mode, uint32_t size, uint32_t flags)
{
	unsigned char *r = inode_rec(ino);

	memset(r, 0, layout.inode_size);
	put16(r + 0x00, mode);                     /* i_mode */
	put32(r + 0x04, size);                     /* i_size_lo */
	put16(r + 0x1A, 1);                        /* i_links_count */
	put32(r + 0x20, flags);                    /* i_flags */
	if (layout.extra_isize)
		put16(r + 0x80, layout.extra_isize); /* i_extra_isize */
	return r;
}

int csum_image(void)
{
	return (get32(super() + 0x64) & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) != 0;
}

uint32_t mem_image_csum_seed(void)
{
	return ext4fs_crc32c(~0U, super() + 0x68, 16);
}

/* Fill in superblock, descriptor and inode checksums with the library's helpers. */
static void finish_csums(void)
{
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_IGNORE_CSUM };
	struct ext4fs_io *io = NULL;
	struct ext4fs_fs *fs = NULL;
	char msg[256];

	put32(super() + 0x3FC, ext4fs_super_csum(super()));
	assert_int_equal(ext4fs_io_open_memory(image, (size_t)layout.blocks * BS, 0, &io), 0);
	if (ext4fs_open_io(io, &opts, &fs, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	put16(block(2) + 0x1E, ext4fs_group_desc_csum(fs, 0));
	for (uint32_t ino = 1; ino <= layout.inodes; ino++) {
		unsigned char *r = inode_rec(ino);
		if (get32(r) == 0 && get32(r + 4) == 0)
			continue;
		uint32_t c = ext4fs_inode_csum(fs, ino, r);
		put16(r + 0x7C, (uint16_t)c);
		put16(r + 0x82, (uint16_t)(c >> 16));
	}
	ext4fs_close(fs);
}

struct ext4fs_fs *open_image(unsigned flags)
{
	struct ext4fs_open_opts opts = { .flags = flags };
	struct ext4fs_io *io = NULL;
	struct ext4fs_fs *fs = NULL;
	char msg[256];

	if (csum_image())
		finish_csums();
	assert_int_equal(ext4fs_io_open_memory(image, (size_t)layout.blocks * BS, 0, &io), 0);
	if (ext4fs_open_io(io, &opts, &fs, msg, sizeof(msg)))
		fail_msg("open: %s", msg);
	return fs;
}

void read_inode(struct ext4fs_fs *fs, uint32_t ino, struct ext4fs_inode *inode)
{
	assert_int_equal(ext4fs_inode_read(fs, ino, inode), 0);
}
