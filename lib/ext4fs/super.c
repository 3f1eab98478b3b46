/* super.c - superblock decode and encode, generated from the field list. */
#include "config.h"
#include <stddef.h>
#include "ext4fs/super.h"
#include "ondisk_le.h"

static const struct ext4fs_field super_fields[] = {
#define EXT4FS_SF_SCALAR_(t, n, o) \
	{ #n, o, offsetof(struct ext4fs_super, n), sizeof(t), 1 },
#define EXT4FS_SF_ARRAY_(t, n, o, c) \
	{ #n, o, offsetof(struct ext4fs_super, n), sizeof(t), c },
	EXT4FS_SUPER_FIELDS(EXT4FS_SF_SCALAR_, EXT4FS_SF_ARRAY_)
#undef EXT4FS_SF_SCALAR_
#undef EXT4FS_SF_ARRAY_
};

#define SUPER_FIELD_COUNT (sizeof(super_fields) / sizeof(super_fields[0]))

const struct ext4fs_field *ext4fs_super_fields(size_t *count)
{
	*count = SUPER_FIELD_COUNT;
	return super_fields;
}

void ext4fs_super_decode(struct ext4fs_super *sb, const void *disk)
{
	const unsigned char *d = disk;
	unsigned char *n = (unsigned char *)sb;

	for (size_t i = 0; i < SUPER_FIELD_COUNT; i++) {
		const struct ext4fs_field *f = &super_fields[i];
		for (unsigned j = 0; j < f->count; j++)
			le_field_load(n + f->native_offset + j * f->size,
				      d + f->disk_offset + j * f->size, f->size);
	}
}

void ext4fs_super_encode(const struct ext4fs_super *sb, void *disk)
{
	unsigned char *d = disk;
	const unsigned char *n = (const unsigned char *)sb;

	for (size_t i = 0; i < SUPER_FIELD_COUNT; i++) {
		const struct ext4fs_field *f = &super_fields[i];
		for (unsigned j = 0; j < f->count; j++)
			le_field_store(d + f->disk_offset + j * f->size,
				       n + f->native_offset + j * f->size, f->size);
	}
}
