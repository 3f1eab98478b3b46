/* extent_node.c - decoding and changing one extent tree node (extent.h). */
#include "config.h"
#include <string.h>
#include "ext4fs/crc.h"
#include "ext4fs/extent.h"
#include "fs_internal.h"
#include "ondisk_le.h"

#define NODE_HEADER 12
#define NODE_ENTRY 12

void ext4fs_extent_node_header(const void *node, struct ext4fs_extent_header *h)
{
	const unsigned char *p = node;

	h->magic = le16_load(p);
	h->entries = le16_load(p + 2);
	h->max = le16_load(p + 4);
	h->depth = le16_load(p + 6);
}

unsigned ext4fs_extent_node_room(size_t size)
{
	return size < NODE_HEADER ? 0 : (unsigned)((size - NODE_HEADER) / NODE_ENTRY);
}

int ext4fs_extent_node_header_ok(const void *node, size_t size)
{
	struct ext4fs_extent_header h;
	unsigned room = ext4fs_extent_node_room(size);

	if (size < NODE_HEADER)
		return 0;
	ext4fs_extent_node_header(node, &h);
	return h.magic == EXT4FS_EXTENT_MAGIC && h.entries <= h.max && h.max <= room && (unsigned)h.max + 2 >= room;
}

void ext4fs_extent_node_set_header(void *node, const struct ext4fs_extent_header *h)
{
	unsigned char *p = node;

	le16_store(p, h->magic);
	le16_store(p + 2, h->entries);
	le16_store(p + 4, h->max);
	le16_store(p + 6, h->depth);
}

void ext4fs_extent_node_entry(const void *node, unsigned i, int leaf, struct ext4fs_extent_entry *e)
{
	const unsigned char *p = (const unsigned char *)node + NODE_HEADER + (size_t)i * NODE_ENTRY;

	memset(e, 0, sizeof(*e));
	e->lblk = le32_load(p);
	if (!leaf) {
		e->pblk = le32_load(p + 4) | ((uint64_t)le16_load(p + 8) << 32);
		return;
	}
	e->len = le16_load(p + 4);
	/* Lengths above 32768 are unwritten extents of len - 32768 blocks. */
	if (e->len > EXT4FS_EXTENT_INIT_MAX_LEN) {
		e->len -= EXT4FS_EXTENT_INIT_MAX_LEN;
		e->unwritten = 1;
	}
	e->pblk = ((uint64_t)le16_load(p + 6) << 32) | le32_load(p + 8);
}

void ext4fs_extent_node_set_entry(void *node, unsigned i, int leaf, const struct ext4fs_extent_entry *e)
{
	unsigned char *p = (unsigned char *)node + NODE_HEADER + (size_t)i * NODE_ENTRY;

	le32_store(p, e->lblk);
	if (!leaf) {
		le32_store(p + 4, (uint32_t)e->pblk);
		le16_store(p + 8, (uint16_t)(e->pblk >> 32));
		le16_store(p + 10, 0);
		return;
	}
	le16_store(p + 4, (uint16_t)(e->len + (e->unwritten ? EXT4FS_EXTENT_INIT_MAX_LEN : 0)));
	le16_store(p + 6, (uint16_t)(e->pblk >> 32));
	le32_store(p + 8, (uint32_t)e->pblk);
}

void ext4fs_extent_node_remove(void *node, unsigned i)
{
	unsigned char *p = node;
	uint16_t n = le16_load(p + 2);

	if (i >= n)
		return;
	memmove(p + NODE_HEADER + (size_t)i * NODE_ENTRY, p + NODE_HEADER + (size_t)(i + 1) * NODE_ENTRY,
		(size_t)(n - i - 1) * NODE_ENTRY);
	memset(p + NODE_HEADER + (size_t)(n - 1) * NODE_ENTRY, 0, NODE_ENTRY);
	le16_store(p + 2, (uint16_t)(n - 1));
}

/* Where the checksum goes, or 0 when there is none to check. */
static size_t csum_offset(const struct ext4fs_fs *fs, const void *node, size_t size)
{
	size_t tail = NODE_HEADER + (size_t)NODE_ENTRY * le16_load((const unsigned char *)node + 4);

	if (!fs->geom.has_metadata_csum || tail + 4 > size)
		return 0;
	return tail;
}

int ext4fs_extent_node_csum_ok(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
			       const void *node, size_t size)
{
	size_t at = csum_offset(fs, node, size);

	if (!at)
		return 1;
	return le32_load((const unsigned char *)node + at) ==
	       ext4fs_crc32c(ext4fs_inode_csum_seed(fs, ino, generation), node, at);
}

void ext4fs_extent_node_csum_set(const struct ext4fs_fs *fs, uint32_t ino, uint32_t generation,
				 void *node, size_t size)
{
	size_t at = csum_offset(fs, node, size);

	if (at)
		le32_store((unsigned char *)node + at,
			   ext4fs_crc32c(ext4fs_inode_csum_seed(fs, ino, generation), node, at));
}
