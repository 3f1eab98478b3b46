/*
 * superlist.h - the superblock listing: one walk over the fields, two
 * renderers.
 *
 * The text form is debugfs 1.47's "stats" header line for line (the same
 * as dumpe2fs -h and tune2fs -l): "Label:" padded to column 26, then the
 * value, lines left out as e2fsprogs leaves them out, superblock times
 * shown from their low 32 bits (e2fsprogs ignores the _hi bytes there).
 * With SUP_SUPER_LIST_EXPECTED_CSUM, "Expected Checksum: 0x..." follows
 * the last field when metadata_csum is on and the stored checksum is wrong
 * (debugfs stats prints that line; dumpe2fs -h and tune2fs -l do not).
 *
 * The JSON form is debug4fs -j stats' "superblock" object: every field is
 * present (null when it does not apply), numbers as numbers, flag words as
 * arrays of names, full 40-bit times.
 *
 * Both read the open handle only (no I/O, nothing allocated); write errors
 * are left in the stream.
 */
#ifndef SUPPORT_SUPERLIST_H
#define SUPPORT_SUPERLIST_H

#include <stdio.h>

struct ext4fs_fs;
struct json;

/* Flags of sup_super_list_text(). */
#define SUP_SUPER_LIST_EXPECTED_CSUM 0x1   /* debugfs's "Expected Checksum:" line */

/* The text listing of fs's superblock to f; flags: SUP_SUPER_LIST_*. */
void sup_super_list_text(FILE *f, const struct ext4fs_fs *fs, unsigned flags);

/* The superblock as a JSON object under key (NULL at the top or in an array). */
void sup_super_list_json(struct json *j, const char *key, const struct ext4fs_fs *fs);

/* 1 and the checksum the superblock should have in *expected when metadata_csum is
 * on and the stored one differs; 0 otherwise. */
int sup_super_csum_mismatch(const struct ext4fs_fs *fs, unsigned *expected);

#endif
