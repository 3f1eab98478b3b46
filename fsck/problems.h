/*
 * problems.h - the codes of the problems found before pass 1, in pass 1
 * and in pass 5 (passes 2-4: problems_dirs.h).  e2fsck's numbers where it
 * has the same problem; 0x..E0xx are e4fsck's own.
 */
#ifndef E4FSCK_PROBLEMS_H
#define E4FSCK_PROBLEMS_H

/* Before pass 1: superblock and group descriptors. */
#define PR_0_BB_NOT_GROUP              0x000001
#define PR_0_IB_NOT_GROUP              0x000002
#define PR_0_ITABLE_NOT_GROUP          0x000003
#define PR_0_FS_SIZE_WRONG             0x000005
#define PR_0_FIRST_DATA_BLOCK          0x000008
#define PR_0_ADD_UUID                  0x000009
#define PR_0_MISC_CORRUPT_SUPER        0x00000B
#define PR_0_INODE_COUNT_WRONG         0x00000D
#define PR_0_JOURNAL_BAD_INODE         0x00000F
#define PR_0_JOURNAL_UNSUPP_MULTIFS    0x000010
#define PR_0_CANT_FIND_JOURNAL         0x000011
#define PR_0_EXT_JOURNAL_BAD_SUPER     0x000012
#define PR_0_JOURNAL_BAD_UUID          0x000013
#define PR_0_JOURNAL_BAD_SUPER         0x000015
#define PR_0_JOURNAL_HAS_JOURNAL       0x000016
#define PR_0_JOURNAL_RECOVER_SET       0x000017
#define PR_0_JOURNAL_RECOVERY_CLEAR    0x000018
#define PR_0_JOURNAL_RESET_JOURNAL     0x000019
#define PR_0_JOURNAL_UNSUPP_ROCOMPAT   0x000025
#define PR_0_JOURNAL_UNSUPP_INCOMPAT   0x000026
#define PR_0_JOURNAL_UNSUPP_VERSION    0x000027
#define PR_0_CLEAR_V2_JOURNAL          0x00002A
#define PR_0_JOURNAL_RUN               0x00002B
#define PR_0_JOURNAL_RUN_DEFAULT       0x00002C
#define PR_0_BACKUP_JNL                0x00002D
#define PR_0_NONZERO_RESERVED_GDT_BLOCKS 0x00002E
#define PR_0_CLEAR_RESIZE_INODE        0x00002F
#define PR_0_FUTURE_SB_LAST_MOUNT      0x000031
#define PR_0_FUTURE_SB_LAST_WRITE      0x000032
#define PR_0_GDT_UNINIT                0x000036
#define PR_0_BB_UNINIT_LAST            0x000039
#define PR_0_FUTURE_SB_LAST_MOUNT_FUDGED 0x00003C
#define PR_0_FUTURE_SB_LAST_WRITE_FUDGED 0x00003D
#define PR_0_OPEN_FAILED               0x000044
#define PR_0_CHECK_DESC_FAILED         0x000045
#define PR_0_META_AND_GDT_CSUM_SET     0x000046
#define PR_0_BAD_MIN_EXTRA_ISIZE       0x00004D
#define PR_0_BAD_WANT_EXTRA_ISIZE      0x00004E
#define PR_0_INODE_COUNT_BIG           0x000050
#define PR_0_ORPHAN_CLEAR_INODE        0x000020
#define PR_0_ORPHAN_ILLEGAL_HEAD_INODE 0x000023
#define PR_0_ORPHAN_ILLEGAL_INODE      0x000024
#define PR_0_ORPHAN_FILE_HOLE          0x000052
#define PR_0_ORPHAN_FILE_BAD_MAGIC     0x000053
#define PR_0_ORPHAN_FILE_BAD_CHECKSUM  0x000054
#define PR_0_ORPHAN_FILE_WRONG_SIZE    0x000055
#define PR_0_GDT_CSUM                  0x00E001
#define PR_0_GDT_CSUM_LATCH            0x00E002
#define PR_0_GDT_ITABLE_UNUSED         0x00E003

/* After pass 5: the orphan file (e2fsck's pass 6 numbers; rows in problems_pass0.c). */
#define PR_6_RECREATE_JOURNAL          0x060001
#define PR_6_ORPHAN_FILE_WITHOUT_JOURNAL 0x060007
#define PR_6_ORPHAN_FILE_TRUNC_FAILED  0x060008
#define PR_6_ORPHAN_FILE_CORRUPTED     0x060009
#define PR_6_ORPHAN_FILE_CREATE_FAILED 0x06000B
#define PR_6_ORPHAN_BLOCK_DIRTY        0x06000C
#define PR_6_ORPHAN_PRESENT_CLEAN_FILE 0x06000D
#define PR_6_ORPHAN_PRESENT_NO_FILE    0x06000E
#define PR_6_ORPHAN_FILE_WRONG_SIZE    0x06000F
#define PR_6_ORPHAN_FILE_HOLE          0x060010

/* Pass 1 */
#define PR_1_JOURNAL_INODE_NOT_CLEAR   0x010034
#define PR_1_COLLAPSE_DBLOCK           0x010072
#define PR_1_JOURNAL_BAD_MODE          0x010035
#define PR_1_ROOT_NO_DIR               0x010001
#define PR_1_ROOT_DTIME                0x010002
#define PR_1_ORPHAN_FILE_BAD_MODE      0x01008F
#define PR_1_ORPHAN_FILE_NOT_CLEAR     0x010090
#define PR_1_ZERO_DTIME                0x010004
#define PR_1_SET_DTIME                 0x010005
#define PR_1_LOW_DTIME                 0x010036
#define PR_1_ORPHAN_LIST_REFUGEES      0x010037
#define PR_1_BAD_I_SIZE                0x01000C
#define PR_1_BAD_I_BLOCKS              0x01000D
#define PR_1_ILLEGAL_BLOCK_NUM         0x01000E
#define PR_1_INODE_BLOCK_LATCH         0x010010
#define PR_1_TOO_MANY_BAD_BLOCKS       0x010011
#define PR_1_SUPPRESS_MESSAGES         0x01002D
#define PR_1_INODE_TOOBIG              0x010043
#define PR_1_TOOBIG_DIR                0x010044
#define PR_1_TOOBIG_DIR_MAPPED         0x01E004
#define PR_1_EXTATTR_REFCOUNT          0x01003C
#define PR_1_BAD_EA_BLOCK              0x01003A
#define PR_1_EA_MULTI_BLOCK            0x01003E
#define PR_1_EA_ALLOC_COLLISION        0x010040
#define PR_1_EA_BAD_NAME               0x010041
#define PR_1_EA_BAD_VALUE              0x010042
#define PR_1_ATTR_HASH                 0x010054
#define PR_1_EXTRA_ISIZE               0x01004F
#define PR_1_ATTR_NAME_LEN             0x010050
#define PR_1_ATTR_VALUE_SIZE           0x010053
#define PR_1_INODE_EA_ALLOC_COLLISION  0x010069
#define PR_1_EA_TIME_OUT_OF_RANGE      0x010082
#define PR_1_ATTR_VALUE_EA_INODE       0x010083
#define PR_1_ATTR_NO_EA_INODE_FL       0x010085
#define PR_1_ATTR_SET_EA_INODE_FL      0x010086
#define PR_1_EA_BLOCK_ONLY_CSUM_INVALID 0x01006C
#define PR_1_ZERO_LENGTH_DIR           0x010006
#define PR_1_READ_EXTENT               0x010056
#define PR_1_EXTENT_ITERATE_FAILURE    0x010057
#define PR_1_BLOCK_ITERATE             0x010029
#define PR_1_EXTENT_BAD_START_BLK      0x010058
#define PR_1_EXTENT_ENDS_BEYOND        0x010059
#define PR_1_OUT_OF_ORDER_EXTENTS      0x01005E
#define PR_1_EXTENT_HEADER_INVALID     0x01005F
#define PR_1_EXTENT_LENGTH_ZERO        0x010066
#define PR_1_EXTENT_ONLY_CSUM_INVALID  0x01006A
#define PR_1_EXTENT_INDEX_START_INVALID 0x01006D
#define PR_1_EXTENT_END_OUT_OF_BOUNDS  0x01006E
#define PR_1_CRITICAL_METADATA_COLLISION 0x010071
#define PR_1_UNINIT_DBLOCK             0x010073
#define PR_1_EXTENT_COLLISION          0x01007D
#define PR_1_MISSING_EXTENT_HEADER     0x010081
#define PR_1_INODE_ONLY_CSUM_INVALID   0x01E002
#define PR_1_READ_EA_BLOCK             0x010039
#define PR_1_DUP_BLOCKS_PREENSTOP      0x010014
#define PR_1B_PASS_HEADER              0x011000
#define PR_1B_DUP_BLOCK_HEADER         0x011001
#define PR_1B_DUP_BLOCK                0x011002
#define PR_1B_DUP_BLOCK_END            0x011003
#define PR_1B_BLOCK_ITERATE            0x011006
#define PR_1B_ADJ_EA_REFCOUNT          0x011007
#define PR_1B_DUP_RANGE                0x011008
#define PR_1C_PASS_HEADER              0x012000
#define PR_1D_PASS_HEADER              0x013000
#define PR_1D_DUP_FILE                 0x013001
#define PR_1D_DUP_FILE_LIST            0x013002
#define PR_1D_SHARE_METADATA           0x013003
#define PR_1D_NUM_DUP_INODES           0x013004
#define PR_1D_DUP_BLOCKS_DEALT         0x013005
#define PR_1D_CLONE_QUESTION           0x013006
#define PR_1D_DELETE_QUESTION          0x013007
#define PR_1D_CLONE_ERROR              0x013008
#define PR_1E_PASS_HEADER              0x014000
#define PR_1E_CAN_COLLAPSE_EXTENT_TREE 0x014006
#define PR_1E_CAN_NARROW_EXTENT_TREE   0x014007

/* Pass 5 */
#define PR_5_INODE_BMAP_PADDING        0x050001
#define PR_5_BLOCK_BMAP_PADDING        0x050002
#define PR_5_BLOCK_BITMAP_HEADER       0x050003
#define PR_5_BLOCK_UNUSED              0x050004
#define PR_5_BLOCK_USED                0x050005
#define PR_5_BLOCK_BITMAP_END          0x050006
#define PR_5_INODE_BITMAP_HEADER       0x050007
#define PR_5_INODE_UNUSED              0x050008
#define PR_5_INODE_USED                0x050009
#define PR_5_INODE_BITMAP_END          0x05000A
#define PR_5_FREE_INODE_COUNT_GROUP    0x05000B
#define PR_5_FREE_DIR_COUNT_GROUP      0x05000C
#define PR_5_FREE_INODE_COUNT          0x05000D
#define PR_5_FREE_BLOCK_COUNT_GROUP    0x05000E
#define PR_5_FREE_BLOCK_COUNT          0x05000F
#define PR_5_BLOCK_RANGE_UNUSED        0x050014
#define PR_5_BLOCK_RANGE_USED          0x050015
#define PR_5_INODE_RANGE_UNUSED        0x050016
#define PR_5_INODE_RANGE_USED          0x050017
#define PR_5_INODE_BITMAP_CSUM_INVALID 0x05001A
#define PR_5_BLOCK_BITMAP_CSUM_INVALID 0x05001B

#endif
