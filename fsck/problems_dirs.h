/*
 * problems_dirs.h - the codes of the problems passes 2, 3 and 4 report
 * (directory structure, connectivity, reference counts).  e2fsck's numbers
 * and, in problems_pass2/3/4.c, e2fsck's wording.
 *
 * The PR_1_HTREE_* rows are e2fsck's pass 1 checks of an htree root; e4fsck
 * makes them in pass 2, where the root block is read anyway, so their rows
 * live in problems_pass2.c.
 */
#ifndef E4FSCK_PROBLEMS_DIRS_H
#define E4FSCK_PROBLEMS_DIRS_H

/* htree roots (e2fsck's pass 1 codes) */
#define PR_1_HTREE_SET                   0x010047
#define PR_1_HTREE_NODIR                 0x010048
#define PR_1_HTREE_BADROOT               0x010049
#define PR_1_HTREE_HASHV                 0x01004A
#define PR_1_HTREE_INCOMPAT              0x01004B
#define PR_1_HTREE_DEPTH                 0x01004C
#define PR_1_HTREE_NEEDS_SIPHASH         0x01008D
#define PR_1_HTREE_CANNOT_SIPHASH        0x01008E

/* Pass 2: directory structure */
#define PR_2_BAD_INODE_DOT               0x020001
#define PR_2_BAD_INO                     0x020002
#define PR_2_UNUSED_INODE                0x020003
#define PR_2_BB_INODE                    0x020005
#define PR_2_LINK_DOT                    0x020004
#define PR_2_LINK_DIR                    0x020006
#define PR_2_LINK_ROOT                   0x020007
#define PR_2_BAD_NAME                    0x020008
#define PR_2_MISSING_DOT                 0x020009
#define PR_2_MISSING_DOT_DOT             0x02000A
#define PR_2_1ST_NOT_DOT                 0x02000B
#define PR_2_2ND_NOT_DOT_DOT             0x02000C
#define PR_2_FADDR_ZERO                  0x02000D
#define PR_2_FILE_ACL_ZERO               0x02000E
#define PR_2_DIR_ACL_ZERO                0x02000F   /* e2fsck 1.47: PR_2_DIR_SIZE_HIGH_ZERO */
#define PR_2_FRAG_ZERO                   0x020010
#define PR_2_FSIZE_ZERO                  0x020011
#define PR_2_BAD_MODE                    0x020012
#define PR_2_FILE_ACL_BAD                0x020032
#define PR_2_DIR_CORRUPTED               0x020013
#define PR_2_FILENAME_LONG               0x020014
#define PR_2_DIRECTORY_HOLE              0x020015
#define PR_2_DOT_NULL_TERM               0x020016
#define PR_2_DOT_DOT_NULL_TERM           0x020017
#define PR_2_BAD_CHAR_DEV                0x020018
#define PR_2_BAD_BLOCK_DEV               0x020019
#define PR_2_DUP_DOT                     0x02001A
#define PR_2_DUP_DOT_DOT                 0x02001B
#define PR_2_FINAL_RECLEN                0x02001D
#define PR_2_READ_DIRBLOCK               0x020020
#define PR_2_WRITE_DIRBLOCK              0x020021
#define PR_2_ALLOC_DIRBOCK               0x020022   /* e2fsck's spelling */
#define PR_2_DEALLOC_INODE               0x020023
#define PR_2_SPLIT_DOT                   0x020024
#define PR_2_BAD_FIFO                    0x020025
#define PR_2_BAD_SOCKET                  0x020026
#define PR_2_SET_FILETYPE                0x020027
#define PR_2_BAD_FILETYPE                0x020028
#define PR_2_CLEAR_FILETYPE              0x020029
#define PR_2_FEATURE_LARGE_FILES         0x020033
#define PR_2_NULL_NAME                   0x020030
#define PR_2_INVALID_SYMLINK             0x020031
#define PR_2_HTREE_NOTREF                0x020034
#define PR_2_HTREE_DUPREF                0x020035
#define PR_2_HTREE_MIN_HASH              0x020036
#define PR_2_HTREE_MAX_HASH              0x020037
#define PR_2_HTREE_CLEAR                 0x020038
#define PR_2_FEATURE_LARGE_DIRS          0x020039
#define PR_2_HTREE_BADBLK                0x02003A
#define PR_2_HTREE_BAD_ROOT              0x02003C
#define PR_2_HTREE_BAD_LIMIT             0x02003D
#define PR_2_HTREE_BAD_COUNT             0x02003E
#define PR_2_HTREE_HASH_ORDER            0x02003F
#define PR_2_HTREE_BAD_DEPTH             0x020040
#define PR_2_DUPLICATE_DIRENT            0x020041
#define PR_2_NON_UNIQUE_FILE             0x020042
#define PR_2_REPORT_DUP_DIRENT           0x020043
#define PR_2_BAD_ENCODED_NAME            0x020053
#define PR_2_NON_UNIQUE_FILE_NO_RENAME   0x020054
#define PR_2_BLOCKS_HI_ZERO              0x020044
#define PR_2_UNEXPECTED_HTREE_BLOCK      0x020045
#define PR_2_INOREF_BG_INO_UNINIT        0x020046
#define PR_2_INOREF_IN_UNUSED            0x020047
#define PR_2_FILE_ACL_HI_ZERO            0x020048   /* e2fsck 1.47: PR_2_I_FILE_ACL_HI_ZERO */
#define PR_2_HTREE_ROOT_CSUM_INVALID     0x020049
#define PR_2_HTREE_NODE_CSUM_INVALID     0x02004A
#define PR_2_LEAF_NODE_MISSING_CSUM      0x02004C
#define PR_2_LEAF_NODE_ONLY_CSUM_INVALID 0x02004D
#define PR_2_BAD_INLINE_DIR_SIZE         0x02004E
#define PR_2_FIX_INLINE_DIR_FAILED       0x02004F
#define PR_2_BAD_ENCRYPTED_NAME          0x020050
#define PR_2_UNENCRYPTED_FILE            0x020051
#define PR_2_INCONSISTENT_ENCRYPTION_POLICY 0x020052

/* Pass 3: connectivity */
#define PR_3_NO_ROOT_INODE               0x030001
#define PR_3_EXPAND_LF_DIR               0x030002
#define PR_3_UNCONNECTED_DIR             0x030003
#define PR_3_NO_LF_DIR                   0x030004
#define PR_3_BAD_DOT_DOT                 0x030005
#define PR_3_NO_LPF                      0x030006
#define PR_3_CANT_EXPAND_LPF             0x030007
#define PR_3_CANT_RECONNECT              0x030008
#define PR_3_ERR_FIND_LPF                0x030009
#define PR_3_ERR_LPF_NEW_BLOCK           0x03000A
#define PR_3_ERR_LPF_NEW_INODE           0x03000B
#define PR_3_ERR_LPF_WRITE_BLOCK         0x03000D
#define PR_3_ADJUST_INODE                0x03000E
#define PR_3_FIX_PARENT_ERR              0x03000F
#define PR_3_FIX_PARENT_NOFIND           0x030010
#define PR_3_CREATE_ROOT_ERROR           0x030012
#define PR_3_CREATE_LPF_ERROR            0x030013
#define PR_3_ROOT_NOT_DIR_ABORT          0x030014
#define PR_3_NO_ROOT_INODE_ABORT         0x030015
#define PR_3_LPF_NOTDIR                  0x030017
#define PR_3_LPF_INLINE_DATA             0x030018
#define PR_3_LPF_NO_SPACE                0x030019
#define PR_3_NO_SPACE_TO_RECOVER         0x03001A
#define PR_3_LPF_ENCRYPTED               0x03001B

/* Pass 3A: rebuilding directories */
#define PR_3A_OPTIMIZE_DIR_ERR           0x031002

/* Pass 4: reference counts */
#define PR_4_ZERO_LEN_INODE              0x040001
#define PR_4_UNATTACHED_INODE            0x040002
#define PR_4_BAD_REF_COUNT               0x040003
#define PR_4_EA_INODE_REF_COUNT          0x040005
#define PR_4_DIR_NLINK_FEATURE           0x040006
#define PR_4_DIR_OVERFLOW_REF_COUNT      0x040007

#endif
