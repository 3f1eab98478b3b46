/* ondisk_names.c - names of the superblock's coded values (see ondisk_names.h). */
#include "config.h"
#include <stdio.h>
#include "ondisk_names.h"
#include "super.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The tables below are indexed by bit number. */
_Static_assert(EXT4FS_FLAGS_SIGNED_HASH == 1 << 0 && EXT4FS_FLAGS_UNSIGNED_HASH == 1 << 1 &&
	       EXT4FS_FLAGS_TEST_FILESYS == 1 << 2, "s_flags bits");
_Static_assert(EXT4FS_BG_INODE_UNINIT == 1 << 0 && EXT4FS_BG_BLOCK_UNINIT == 1 << 1 &&
	       EXT4FS_BG_INODE_ZEROED == 1 << 2, "bg_flags bits");

const char *ext4fs_defm_jmode_name(uint32_t opts)
{
	static const char *const names[4] = {
		NULL, "journal_data", "journal_data_ordered", "journal_data_writeback",
	};

	return names[(opts & EXT4FS_DEFM_JMODE_MASK) >> EXT4FS_DEFM_JMODE_SHIFT];
}

const char *ext4fs_defm_option_name(unsigned bit, char *buf, size_t len)
{
	static const char *const names[12] = {
		[0] = "debug", [1] = "bsdgroups", [2] = "user_xattr", [3] = "acl", [4] = "uid16",
		[8] = "nobarrier", [9] = "block_validity", [10] = "discard", [11] = "nodelalloc",
	};

	if (bit < COUNT(names) && names[bit])
		return names[bit];
	snprintf(buf, len, "MNTOPT_%u", bit);
	return buf;
}

const char *ext4fs_sb_flag_name(unsigned bit)
{
	static const char *const names[] = {
		"signed_directory_hash", "unsigned_directory_hash", "test_filesystem",
	};

	return bit < COUNT(names) ? names[bit] : NULL;
}

const char *ext4fs_bg_flag_name(unsigned bit)
{
	static const char *const names[] = { "inode_uninit", "block_uninit", "itable_zeroed" };

	return bit < COUNT(names) ? names[bit] : NULL;
}

const char *ext4fs_errors_behavior_name(unsigned errors)
{
	switch (errors) {
	case 1: return "Continue";
	case 2: return "Remount read-only";
	case 3: return "Panic";
	default: return "Unknown (continue)";
	}
}

const char *ext4fs_def_hash_name(unsigned v, char *buf, size_t len)
{
	static const char *const names[] = { "legacy", "half_md4", "tea" };

	if (v < COUNT(names))
		return names[v];
	snprintf(buf, len, "HASHALG_%u", v);
	return buf;
}

const char *ext4fs_creator_os_name(uint32_t os)
{
	static const char *const names[] = { "Linux", "Hurd", "Masix", "FreeBSD", "Lites" };

	return os < COUNT(names) ? names[os] : "(unknown os)";
}

const char *ext4fs_revision_name(uint32_t rev)
{
	return rev == 0 ? "original" : rev == 1 ? "dynamic" : "unknown";
}

const char *ext4fs_state_name(uint16_t state)
{
	int clean = (state & EXT4FS_STATE_VALID) != 0, errors = (state & EXT4FS_STATE_ERROR) != 0;

	if (errors)
		return clean ? "clean with errors" : "not clean with errors";
	return clean ? "clean" : "not clean";
}

const char *ext4fs_errcode_name(unsigned code, char *buf, size_t len)
{
	static const char *const names[] = {
		NULL, "UNKNOWN", "EIO", "ENOMEM", "EFSBADCRC", "EFSCORRUPTED", "ENOSPC",
		"ENOKEY", "EROFS", "EFBIG", "EEXIST", "ERANGE", "EOVERFLOW", "EBUSY",
		"ENOTDIR", "ENOTEMPTY", "ESHUTDOWN", "EFAULT",
	};

	if (code > 0 && code < COUNT(names))
		return names[code];
	snprintf(buf, len, "UNKNOWN_ERRCODE_%u", code);
	return buf;
}

const char *ext4fs_encoding_name(unsigned encoding, char *buf, size_t len)
{
	if (encoding == 1)
		return "utf8-12.1";
	snprintf(buf, len, "UNKNOWN_ENCODING_%u", encoding);
	return buf;
}

int ext4fs_uuid_is_null(const uint8_t uuid[16])
{
	for (int i = 0; i < 16; i++)
		if (uuid[i])
			return 0;
	return 1;
}

const char *ext4fs_uuid_format(const uint8_t u[16], char *buf, size_t len)
{
	snprintf(buf, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	return buf;
}
