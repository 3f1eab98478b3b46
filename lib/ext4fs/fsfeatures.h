/*
 * fsfeatures.h - names of the superblock feature bits, and e2fsprogs-style
 * feature lists ("has_journal,^resize_inode").
 *
 * Layer 2 (ondisk): no I/O, no state.  The names are the ones users know
 * from mke2fs -O, tune2fs -O and dumpe2fs, so they are an interface: the
 * same spelling, the same aliases, the same printing order (compat, then
 * incompat, then ro_compat, each by increasing bit).
 */
#ifndef EXT4FS_FSFEATURES_H
#define EXT4FS_FSFEATURES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Index of a feature word in a uint32_t features[3] array. */
#define EXT4FS_FEATURE_WORD_COMPAT    0
#define EXT4FS_FEATURE_WORD_INCOMPAT  1
#define EXT4FS_FEATURE_WORD_RO_COMPAT 2

/* Name of the single bit mask in feature word `word`, or NULL when the bit has no name.
 * The string is static.  Cannot fail. */
const char *ext4fs_feature_name(int word, uint32_t mask);

/*
 * Look up a feature by name, case-insensitively, including e2fsprogs'
 * aliases ("extents" for extent, "FEATURE_C12"/"FEATURE_I3"/"FEATURE_R7" for
 * unnamed bits).  On success stores the word and the bit mask and returns 0;
 * EXT4FS_E_INVALID_ARG for an unknown name.
 */
int ext4fs_feature_lookup(const char *name, int *word, uint32_t *mask);

/*
 * Apply an edit list to features[3]: names separated by commas, spaces or
 * tabs; "name" or "+name" sets, "^name" or "-name" clears; "none" or "clear"
 * clears everything.  On an unknown name returns EXT4FS_E_INVALID_ARG, copies
 * the offending word into bad (bad_len bytes, NUL-terminated, when bad is not
 * NULL) and leaves features[] as they were.
 */
int ext4fs_features_edit(const char *list, uint32_t features[3], char *bad, size_t bad_len);

/*
 * Write the names of the set bits, space-separated, in dumpe2fs' order, into
 * buf (NUL-terminated, truncated to len).  Unnamed bits print as FEATURE_Xn.
 * Returns the length the full string needs (like snprintf).
 */
size_t ext4fs_features_format(const uint32_t features[3], char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
