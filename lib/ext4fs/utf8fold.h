/*
 * utf8fold.h - ext4's Unicode casefolding ("utf8-12.1" encoding).
 *
 * Layer 2 (ondisk): pure functions on byte strings, safe from any thread.
 * A directory with EXT4FS_CASEFOLD_FL on a file system with the casefold
 * feature compares names, and hashes them for its index, by their folded
 * form: each code point of a valid UTF-8 name replaced by its full case
 * folding and canonical decomposition (Hangul syllables into their jamo),
 * Default_Ignorable code points dropped, combining marks put in canonical
 * order; Unicode 12.1's data, code points newer than that kept as they are.
 * This is what Linux calls "nfdicf" and e2fsprogs "casefold".  Valid means
 * well-formed UTF-8 (no overlong forms, surrogates or values above
 * U+10FFFF); a name stops at its first NUL byte, as the kernel reads it.
 */
#ifndef EXT4FS_UTF8FOLD_H
#define EXT4FS_UTF8FOLD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room that always holds the folded form of a name of up to 255 bytes. */
#define EXT4FS_UTF8_FOLD_MAX 4096

/*
 * Whether name[0..len) (up to a NUL byte) is valid UTF-8: 0 if so, else 1
 * with *bad_off (may be NULL) the offset of the first byte of the first
 * invalid sequence.  Cannot fail.
 */
int ext4fs_utf8_validate(const void *name, size_t len, size_t *bad_off);

/*
 * Fold name[0..len) (up to a NUL byte) into out (out_size bytes, not
 * NUL-terminated).  Returns the folded length; EXT4FS_E_INVALID_ARG if the
 * name is not valid UTF-8 (the kernel then hashes and compares its raw
 * bytes), EXT4FS_E_NAME_TOO_LONG if the result does not fit out_size or
 * the name is longer than 1024 bytes.
 */
int ext4fs_utf8_casefold(const void *name, size_t len, void *out, size_t out_size);

/*
 * Compare two names as a casefolded directory does: 0 when both are valid
 * and fold alike, 1 when both are valid and differ, EXT4FS_E_INVALID_ARG
 * when either is invalid (e2fsprogs then calls them different, even two
 * identical invalid names).  No allocation.
 */
int ext4fs_utf8_casefold_cmp(const void *a, size_t alen, const void *b, size_t blen);

#ifdef __cplusplus
}
#endif
#endif
