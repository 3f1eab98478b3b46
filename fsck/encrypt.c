/*
 * encrypt.c - the encryption policies of encrypted inodes (encrypt.h).
 *
 * e2fsck reads an inode's context by its attribute name "c" alone, in the
 * inode and in its attribute block, and takes any failure to read the
 * attributes for a missing context; so does this file.  The policy is kept
 * whole (at most 24 bytes an inode) rather than as a number shared by the
 * inodes of one policy: the lists of the pass-1 workers then join without
 * renumbering.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ext4fs/array.h"
#include "ext4fs/dir.h"
#include "ext4fs/errors.h"
#include "ext4fs/xattr.h"
#include "encrypt.h"
#include "problems_dirs.h"

int fsck_encrypted_add(struct fsck_encrypted *list, struct ext4fs_fs *fs, uint32_t ino,
		       const struct ext4fs_inode *in)
{
	struct fsck_encrypted_file f = { .ino = ino };
	void *value = NULL;
	size_t len, policy_len;
	int err = ext4fs_xattr_get(fs, ino, in, "c", &value, &len);

	/* As e2fsck: every failure but running out of memory is a missing context. */
	if (err == EXT4FS_E_NO_MEMORY || err == -ENOMEM)
		return -1;
	if (err)
		return FSCK_ENCRYPTION_MISSING;
	int verdict = ext4fs_fscrypt_context_policy(value, len, f.policy, &policy_len);
	free(value);
	if (verdict == EXT4FS_FSCRYPT_CORRUPT)
		return FSCK_ENCRYPTION_CORRUPT;
	f.policy_len = (uint8_t)policy_len;
	if (list->n == list->cap) {
		struct fsck_encrypted_file *grown =
			ext4fs_array_grow(list->files, &list->cap, list->n + 1, sizeof(*grown), 64);
		if (!grown)
			return -1;
		list->files = grown;
	}
	list->files[list->n++] = f;
	return FSCK_ENCRYPTION_LISTED;
}

int fsck_encrypted_join(struct fsck_encrypted *dst, struct fsck_encrypted *src)
{
	if (!src->n)
		return 0;
	if (dst->cap < dst->n + src->n) {
		struct fsck_encrypted_file *grown =
			ext4fs_array_grow(dst->files, &dst->cap, dst->n + src->n, sizeof(*grown), 64);
		if (!grown)
			return -1;
		dst->files = grown;
	}
	memcpy(dst->files + dst->n, src->files, src->n * sizeof(*src->files));
	dst->n += src->n;
	fsck_encrypted_free(src);
	return 0;
}

const struct fsck_encrypted_file *fsck_encrypted_find(const struct fsck_encrypted *list, uint32_t ino)
{
	size_t lo = 0, hi = list->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (list->files[mid].ino == ino)
			return &list->files[mid];
		if (list->files[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Whether e2fsck wants an inode of this kind encrypted like its directory: regular files, directories, symlinks. */
static int needs_encryption(uint8_t file_type, int is_reg_or_dir, uint16_t mode)
{
	if (file_type != EXT4FS_FT_UNKNOWN)
		return file_type == EXT4FS_FT_REG_FILE || file_type == EXT4FS_FT_DIR || file_type == EXT4FS_FT_SYMLINK;
	return is_reg_or_dir || EXT4FS_ISREG(mode) || EXT4FS_ISDIR(mode) || EXT4FS_ISLNK(mode);
}

uint32_t fsck_encrypted_entry_problem(const struct fsck_encrypted *list, uint32_t dir, uint32_t ino,
				      uint8_t file_type, int is_reg_or_dir, uint16_t mode)
{
	const struct fsck_encrypted_file *d = fsck_encrypted_find(list, dir), *f = fsck_encrypted_find(list, ino);

	if (!d)
		return 0;
	if (!f)
		return needs_encryption(file_type, is_reg_or_dir, mode) ? PR_2_UNENCRYPTED_FILE : 0;
	if (f->policy_len != d->policy_len || memcmp(f->policy, d->policy, f->policy_len))
		return PR_2_INCONSISTENT_ENCRYPTION_POLICY;
	return 0;
}

void fsck_encrypted_free(struct fsck_encrypted *list)
{
	free(list->files);
	memset(list, 0, sizeof(*list));
}
