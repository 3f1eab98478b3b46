/*
 * encrypt.h - which encryption policy each encrypted inode has, for
 * e2fsck's encryption checks.
 *
 * Pass 1 reads the encryption context (attribute "c") of every inode in
 * use with the encrypt flag: a missing one and a corrupt one are problems
 * of that inode; a sound one (or one of a version not known here, which
 * may be valid) is listed with its policy.  Pass 2 asks that each regular
 * file, directory and symlink named in an encrypted directory carries the
 * directory's policy, as e2fsck does; a directory counts as encrypted when
 * it is listed, not merely flagged.  Each pass-1 worker keeps a list of its
 * own, in inode order, and the lists are joined in worker order, so the
 * whole list stays sorted for lookups.
 */
#ifndef E4FSCK_ENCRYPT_H
#define E4FSCK_ENCRYPT_H

#include <stddef.h>
#include <stdint.h>
#include "ext4fs/codec.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"

/* One encrypted inode and its policy (policy_len 0: a context of a version not known here). */
struct fsck_encrypted_file {
	uint32_t ino;
	uint8_t policy_len;
	uint8_t policy[EXT4FS_FSCRYPT_POLICY_MAX];
};

/* Encrypted inodes in increasing inode order. */
struct fsck_encrypted {
	struct fsck_encrypted_file *files;
	size_t n, cap;
};

/* fsck_encrypted_add()'s verdicts on an inode's context. */
enum fsck_encryption_context {
	FSCK_ENCRYPTION_LISTED,     /* sound or of an unknown version: listed */
	FSCK_ENCRYPTION_MISSING,    /* no context (or an attribute area that cannot be read): not listed */
	FSCK_ENCRYPTION_CORRUPT,    /* a context e2fsck calls corrupt: not listed */
};

/*
 * Read the encryption context of inode ino (decoded record in) and list
 * it when sound; ino must be above every inode listed so far.  Returns an
 * fsck_encryption_context verdict, or -1 out of memory (the list is
 * unchanged).  As e2fsck, a context that cannot be read is a missing one.
 */
int fsck_encrypted_add(struct fsck_encrypted *list, struct ext4fs_fs *fs, uint32_t ino,
		       const struct ext4fs_inode *in);

/* Move src's inodes, all above dst's, to the end of dst (src left empty).  0, or -1 out of memory. */
int fsck_encrypted_join(struct fsck_encrypted *dst, struct fsck_encrypted *src);

/* Inode ino's entry, or NULL when it is not listed (valid until the list changes). */
const struct fsck_encrypted_file *fsck_encrypted_find(const struct fsck_encrypted *list, uint32_t ino);

/*
 * e2fsck's verdict on an entry of encrypted directory dir naming inode ino
 * of file type file_type (the entry's, EXT4FS_FT_UNKNOWN when it has none:
 * then is_reg_or_dir says whether pass 1 found a regular file or a
 * directory, and mode is the inode's): 0 when it is fine,
 * PR_2_UNENCRYPTED_FILE or PR_2_INCONSISTENT_ENCRYPTION_POLICY.
 * Inodes of an unknown version's context all count as one policy.
 */
uint32_t fsck_encrypted_entry_problem(const struct fsck_encrypted *list, uint32_t dir, uint32_t ino,
				      uint8_t file_type, int is_reg_or_dir, uint16_t mode);

/* Free the list (it may be used again, empty). */
void fsck_encrypted_free(struct fsck_encrypted *list);

#endif
