/*
 * utf8data.h - the generated tables behind utf8fold.c (internal).
 *
 * Layer 2 (ondisk).  utf8data.c is written by scripts/gen-utf8-tables.py
 * from the Unicode Character Database, restricted to code points of age
 * 12.1 or less (ext4's "utf8-12.1" encoding); both tables are sorted by
 * code point.
 */
#ifndef EXT4FS_UTF8DATA_H
#define EXT4FS_UTF8DATA_H

#include <stdint.h>

/* Code points first..last all have canonical combining class ccc (nonzero). */
struct ext4fs_utf8_class_range {
	uint32_t first, last;
	uint8_t ccc;
};

/* Code points first..last are Default_Ignorable_Code_Points: they fold to nothing. */
struct ext4fs_utf8_range {
	uint32_t first, last;
};

/* Code point cp folds to pool[off .. off + len) (UTF-8; len 0: it vanishes). */
struct ext4fs_utf8_mapping {
	uint32_t cp;
	uint16_t off;
	uint8_t len;
};

extern const struct ext4fs_utf8_class_range ext4fs_utf8_classes[];
extern const unsigned ext4fs_utf8_nclasses;
extern const struct ext4fs_utf8_range ext4fs_utf8_ignorables[];
extern const unsigned ext4fs_utf8_nignorables;
extern const struct ext4fs_utf8_mapping ext4fs_utf8_mappings[];
extern const unsigned ext4fs_utf8_nmappings;
extern const unsigned char ext4fs_utf8_pool[];

#endif
