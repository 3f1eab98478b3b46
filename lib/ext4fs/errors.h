/*
 * errors.h - error codes of libext4fs.
 *
 * Every library function that can fail returns 0 on success or a negative
 * code.  A code is either -errno (from the C library, for I/O and memory
 * failures) or one of the EXT4FS_E_* values below, which all lie below
 * -EXT4FS_ERR_BASE and so never collide with an errno.  ext4fs_strerror()
 * turns either kind into a message.  The message names the kind of failure;
 * the object that failed (inode number, block number) is available from
 * ext4fs_errmsg() on the file-system handle that saw it.
 */
#ifndef EXT4FS_ERRORS_H
#define EXT4FS_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

#define EXT4FS_ERR_BASE 10000

/*
 * APPEND ONLY.  A code's value is its place in this table
 * (EXT4FS_E_x == -(EXT4FS_ERR_BASE + 1 + its index)), and programs built
 * against the library keep the values they were compiled with.  A new code
 * goes at the end, with its EXT4FS_E_* define at the end of the list below;
 * no code is ever removed, moved or given another meaning.
 */

#define EXT4FS_ERROR_TABLE(X) \
	X(BAD_MAGIC,        "Bad magic number in super-block") \
	X(CORRUPT_SUPER,    "The ext2 superblock is corrupt") \
	X(SB_CSUM,          "Superblock checksum does not match superblock") \
	X(UNSUPP_FEATURE,   "Filesystem has unsupported feature(s)") \
	X(RO_UNSUPP_FEATURE,"Filesystem has unsupported read-only feature(s)") \
	X(GD_CORRUPT,       "Corrupt group descriptor") \
	X(GD_CSUM,          "Group descriptor checksum does not match") \
	X(BAD_INODE_NUM,    "Illegal inode number") \
	X(INODE_CSUM,       "Inode checksum does not match inode") \
	X(INODE_CORRUPT,    "Corrupt inode") \
	X(BAD_BLOCK_NUM,    "Illegal block number") \
	X(EXTENT_HEADER,    "Corrupt extent header") \
	X(EXTENT_CSUM,      "Extent block checksum does not match extent block") \
	X(EXTENT_CORRUPT,   "Corrupt extent tree") \
	X(IND_CORRUPT,      "Corrupt indirect block map") \
	X(DIR_CORRUPT,      "Corrupt directory block") \
	X(DIR_CSUM,         "Directory block checksum does not match directory block") \
	X(HTREE_CORRUPT,    "Corrupt htree directory index") \
	X(HTREE_CSUM,       "Htree index block checksum does not match") \
	X(BITMAP_CSUM,      "Bitmap checksum does not match bitmap") \
	X(XATTR_CORRUPT,    "Corrupt extended attribute") \
	X(XATTR_CSUM,       "Extended attribute block checksum does not match block") \
	X(INLINE_CORRUPT,   "Corrupt inline data") \
	X(JOURNAL_CORRUPT,  "Corrupt journal superblock") \
	X(SHORT_READ,       "Attempt to read block from filesystem resulted in short read") \
	X(OUT_OF_IMAGE,     "Attempt to access beyond the end of the device") \
	X(NOT_FOUND,        "File not found by ext2_lookup") \
	X(NOT_DIR,          "Ext2 inode is not a directory") \
	X(SYMLINK_LOOP,     "Too many symbolic links encountered") \
	X(FILE_TOO_BIG,     "File too big") \
	X(NO_MEMORY,        "Memory allocation failed") \
	X(INVALID_ARG,      "Invalid argument passed to ext2 library") \
	X(READ_ONLY,        "Attempt to write to filesystem opened read-only") \
	X(UNKNOWN_HASH,     "Unknown directory hash version") \
	X(TOO_SMALL,        "Not enough space to build proposed filesystem") \
	X(TOO_MANY_INODES,  "Cannot create filesystem with requested number of inodes") \
	X(NO_SPACE,         "Could not allocate block in ext2 filesystem") \
	X(NO_FREE_INODES,   "Could not allocate inode in ext2 filesystem") \
	X(NEEDS_RECOVERY,   "Filesystem needs journal recovery") \
	X(BLOCK_STATE,      "Block is already in the requested allocation state") \
	X(INODE_STATE,      "Inode is already in the requested allocation state") \
	X(EXISTS,           "Ext2 directory already exists") \
	X(DIR_NOT_EMPTY,    "Directory not empty") \
	X(IS_DIR,           "Is a directory") \
	X(TOO_MANY_LINKS,   "Too many links") \
	X(NAME_TOO_LONG,    "File name too long") \
	X(DIR_FULL,         "Directory index full") \
	X(XATTR_NO_SPACE,   "No space left for extended attribute") \
	X(ALLOC_STATE,      "Block allocator state does not match the block bitmap") \
	X(NO_JOURNAL,       "Journal not found") \
	X(JOURNAL_INODE,    "The journal inode is invalid") \
	X(JOURNAL_UNSUPP,   "Journal has unsupported feature(s)") \
	X(JOURNAL_CSUM,     "Journal checksum error") \
	X(JOURNAL_LOG,      "Corrupt block in the journal log") \
	X(DIR_NO_SPACE,     "No free space in the directory") \
	X(GD_BAD_BLOCK_MAP, "Corrupt group descriptor: bad block for block bitmap") \
	X(GD_BAD_INODE_MAP, "Corrupt group descriptor: bad block for inode bitmap") \
	X(GD_BAD_INODE_TABLE, "Corrupt group descriptor: bad block for inode table") \
	X(UNDO_CORRUPT,     "Undo file corrupt") \
	X(UNDO_WRONG_FS,    "Wrong undo file for this filesystem") \
	X(JOURNAL_FULL, "Transaction is too large for the journal") \
	X(TXN_FAILED, "A transaction failed to commit; the handle accepts no more changes") \
	X(MMP_MAGIC,        "MMP: invalid magic number") \
	X(MMP_FAILED,       "MMP: device currently active") \
	X(MMP_FSCK_ON,      "MMP: e2fsck being run") \
	X(MMP_BAD_BLOCK,    "MMP: block number beyond filesystem range") \
	X(MMP_UNKNOWN_SEQ,  "MMP: undergoing an unknown operation") \
	X(MMP_CHANGE_ABORT, "MMP: filesystem still in use") \
	X(MMP_CSUM,         "MMP block checksum does not match") \
	X(RESIZE_CORRUPT,   "Resize inode is corrupt")

/* Library error codes: -(EXT4FS_ERR_BASE + index in the table + 1). */
enum ext4fs_error_index {
#define EXT4FS_ERR_INDEX_(name, msg) EXT4FS_ERRIDX_##name,
	EXT4FS_ERROR_TABLE(EXT4FS_ERR_INDEX_)
#undef EXT4FS_ERR_INDEX_
	EXT4FS_ERRIDX_COUNT_
};

#define EXT4FS_ERRCODE_(name) (-(EXT4FS_ERR_BASE + 1 + EXT4FS_ERRIDX_##name))
#define EXT4FS_E_BAD_MAGIC          EXT4FS_ERRCODE_(BAD_MAGIC)
#define EXT4FS_E_CORRUPT_SUPER      EXT4FS_ERRCODE_(CORRUPT_SUPER)
#define EXT4FS_E_SB_CSUM            EXT4FS_ERRCODE_(SB_CSUM)
#define EXT4FS_E_UNSUPP_FEATURE     EXT4FS_ERRCODE_(UNSUPP_FEATURE)
#define EXT4FS_E_RO_UNSUPP_FEATURE  EXT4FS_ERRCODE_(RO_UNSUPP_FEATURE)
#define EXT4FS_E_GD_CORRUPT         EXT4FS_ERRCODE_(GD_CORRUPT)
#define EXT4FS_E_GD_CSUM            EXT4FS_ERRCODE_(GD_CSUM)
#define EXT4FS_E_BAD_INODE_NUM      EXT4FS_ERRCODE_(BAD_INODE_NUM)
#define EXT4FS_E_INODE_CSUM         EXT4FS_ERRCODE_(INODE_CSUM)
#define EXT4FS_E_INODE_CORRUPT      EXT4FS_ERRCODE_(INODE_CORRUPT)
#define EXT4FS_E_BAD_BLOCK_NUM      EXT4FS_ERRCODE_(BAD_BLOCK_NUM)
#define EXT4FS_E_EXTENT_HEADER      EXT4FS_ERRCODE_(EXTENT_HEADER)
#define EXT4FS_E_EXTENT_CSUM        EXT4FS_ERRCODE_(EXTENT_CSUM)
#define EXT4FS_E_EXTENT_CORRUPT     EXT4FS_ERRCODE_(EXTENT_CORRUPT)
#define EXT4FS_E_IND_CORRUPT        EXT4FS_ERRCODE_(IND_CORRUPT)
#define EXT4FS_E_DIR_CORRUPT        EXT4FS_ERRCODE_(DIR_CORRUPT)
#define EXT4FS_E_DIR_CSUM           EXT4FS_ERRCODE_(DIR_CSUM)
#define EXT4FS_E_HTREE_CORRUPT      EXT4FS_ERRCODE_(HTREE_CORRUPT)
#define EXT4FS_E_HTREE_CSUM         EXT4FS_ERRCODE_(HTREE_CSUM)
#define EXT4FS_E_BITMAP_CSUM        EXT4FS_ERRCODE_(BITMAP_CSUM)
#define EXT4FS_E_XATTR_CORRUPT      EXT4FS_ERRCODE_(XATTR_CORRUPT)
#define EXT4FS_E_XATTR_CSUM         EXT4FS_ERRCODE_(XATTR_CSUM)
#define EXT4FS_E_INLINE_CORRUPT     EXT4FS_ERRCODE_(INLINE_CORRUPT)
#define EXT4FS_E_JOURNAL_CORRUPT    EXT4FS_ERRCODE_(JOURNAL_CORRUPT)
#define EXT4FS_E_SHORT_READ         EXT4FS_ERRCODE_(SHORT_READ)
#define EXT4FS_E_OUT_OF_IMAGE       EXT4FS_ERRCODE_(OUT_OF_IMAGE)
#define EXT4FS_E_NOT_FOUND          EXT4FS_ERRCODE_(NOT_FOUND)
#define EXT4FS_E_NOT_DIR            EXT4FS_ERRCODE_(NOT_DIR)
#define EXT4FS_E_SYMLINK_LOOP       EXT4FS_ERRCODE_(SYMLINK_LOOP)
#define EXT4FS_E_FILE_TOO_BIG       EXT4FS_ERRCODE_(FILE_TOO_BIG)
#define EXT4FS_E_NO_MEMORY          EXT4FS_ERRCODE_(NO_MEMORY)
#define EXT4FS_E_INVALID_ARG        EXT4FS_ERRCODE_(INVALID_ARG)
#define EXT4FS_E_READ_ONLY          EXT4FS_ERRCODE_(READ_ONLY)
#define EXT4FS_E_UNKNOWN_HASH       EXT4FS_ERRCODE_(UNKNOWN_HASH)
#define EXT4FS_E_TOO_SMALL          EXT4FS_ERRCODE_(TOO_SMALL)
#define EXT4FS_E_TOO_MANY_INODES    EXT4FS_ERRCODE_(TOO_MANY_INODES)
#define EXT4FS_E_NO_SPACE           EXT4FS_ERRCODE_(NO_SPACE)
#define EXT4FS_E_NO_FREE_INODES     EXT4FS_ERRCODE_(NO_FREE_INODES)
#define EXT4FS_E_NEEDS_RECOVERY     EXT4FS_ERRCODE_(NEEDS_RECOVERY)
#define EXT4FS_E_BLOCK_STATE        EXT4FS_ERRCODE_(BLOCK_STATE)
#define EXT4FS_E_INODE_STATE        EXT4FS_ERRCODE_(INODE_STATE)
#define EXT4FS_E_EXISTS             EXT4FS_ERRCODE_(EXISTS)
#define EXT4FS_E_DIR_NOT_EMPTY      EXT4FS_ERRCODE_(DIR_NOT_EMPTY)
#define EXT4FS_E_IS_DIR             EXT4FS_ERRCODE_(IS_DIR)
#define EXT4FS_E_TOO_MANY_LINKS     EXT4FS_ERRCODE_(TOO_MANY_LINKS)
#define EXT4FS_E_NAME_TOO_LONG      EXT4FS_ERRCODE_(NAME_TOO_LONG)
#define EXT4FS_E_DIR_FULL           EXT4FS_ERRCODE_(DIR_FULL)
#define EXT4FS_E_XATTR_NO_SPACE     EXT4FS_ERRCODE_(XATTR_NO_SPACE)
#define EXT4FS_E_ALLOC_STATE        EXT4FS_ERRCODE_(ALLOC_STATE)
#define EXT4FS_E_NO_JOURNAL         EXT4FS_ERRCODE_(NO_JOURNAL)
#define EXT4FS_E_JOURNAL_INODE      EXT4FS_ERRCODE_(JOURNAL_INODE)
#define EXT4FS_E_JOURNAL_UNSUPP     EXT4FS_ERRCODE_(JOURNAL_UNSUPP)
#define EXT4FS_E_JOURNAL_CSUM       EXT4FS_ERRCODE_(JOURNAL_CSUM)
#define EXT4FS_E_JOURNAL_LOG        EXT4FS_ERRCODE_(JOURNAL_LOG)
#define EXT4FS_E_DIR_NO_SPACE       EXT4FS_ERRCODE_(DIR_NO_SPACE)
#define EXT4FS_E_GD_BAD_BLOCK_MAP   EXT4FS_ERRCODE_(GD_BAD_BLOCK_MAP)
#define EXT4FS_E_GD_BAD_INODE_MAP   EXT4FS_ERRCODE_(GD_BAD_INODE_MAP)
#define EXT4FS_E_GD_BAD_INODE_TABLE EXT4FS_ERRCODE_(GD_BAD_INODE_TABLE)
#define EXT4FS_E_UNDO_CORRUPT       EXT4FS_ERRCODE_(UNDO_CORRUPT)
#define EXT4FS_E_UNDO_WRONG_FS      EXT4FS_ERRCODE_(UNDO_WRONG_FS)
#define EXT4FS_E_JOURNAL_FULL       EXT4FS_ERRCODE_(JOURNAL_FULL)
#define EXT4FS_E_TXN_FAILED         EXT4FS_ERRCODE_(TXN_FAILED)
#define EXT4FS_E_MMP_MAGIC          EXT4FS_ERRCODE_(MMP_MAGIC)
#define EXT4FS_E_MMP_FAILED         EXT4FS_ERRCODE_(MMP_FAILED)
#define EXT4FS_E_MMP_FSCK_ON        EXT4FS_ERRCODE_(MMP_FSCK_ON)
#define EXT4FS_E_MMP_BAD_BLOCK      EXT4FS_ERRCODE_(MMP_BAD_BLOCK)
#define EXT4FS_E_MMP_UNKNOWN_SEQ    EXT4FS_ERRCODE_(MMP_UNKNOWN_SEQ)
#define EXT4FS_E_MMP_CHANGE_ABORT   EXT4FS_ERRCODE_(MMP_CHANGE_ABORT)
#define EXT4FS_E_MMP_CSUM           EXT4FS_ERRCODE_(MMP_CSUM)
#define EXT4FS_E_RESIZE_CORRUPT     EXT4FS_ERRCODE_(RESIZE_CORRUPT)

/*
 * Message for a code returned by the library (negative library code or
 * -errno).  Never NULL; the string is static and must not be freed.
 */
const char *ext4fs_strerror(int err);

/* Nonzero when err is one of the EXT4FS_E_* codes rather than an -errno. */
int ext4fs_is_library_error(int err);

#ifdef __cplusplus
}
#endif
#endif
