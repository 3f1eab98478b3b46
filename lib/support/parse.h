/*
 * parse.h - numbers and sizes on the tools' command lines.
 *
 * Both accept C's forms (decimal, 0x hex, leading-0 octal) and must use
 * the whole string; nothing is allocated and nothing is printed (the
 * caller names the bad argument in its own words).
 */
#ifndef SUPPORT_PARSE_H
#define SUPPORT_PARSE_H

#include <stdint.h>

/*
 * An unsigned number no larger than max into *out.  Returns 0, or -1 for
 * an empty string, a leading '-', trailing characters, overflow or a value
 * above max (*out is then unchanged).
 */
int sup_parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * A size as mke2fs reads one (-b, -i, the size argument, -E resize= and
 * orphan_file_size=): a number with an optional one-letter suffix k, m, g
 * or t (either case: KiB, MiB, GiB, TiB) or s (512-byte sectors); without
 * a suffix the number is already in the caller's units.  With a suffix the
 * byte count is divided by 2^unit_shift (0: bytes; 10: KiB; 10 + log2 of
 * the block size in KiB: blocks), rounding down.  Returns the value, or 0
 * for anything unreadable (empty, negative, two suffix letters, an unknown
 * suffix, or a byte count beyond 64 bits).
 */
uint64_t sup_parse_size(const char *arg, int unit_shift);

#endif
