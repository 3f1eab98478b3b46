/*
 * exitcodes.h - the tools' exit statuses, by name.
 *
 * mke4fs and debug4fs exit 0 or 1 as mke2fs and debugfs do (debug4fs's
 * rules are in debug4fs(8)).  e4fsck sums e2fsck's bits; fsck(8) and boot
 * scripts read them, so the values are an interface.  The FSCK_ names are
 * e2fsck's own (fsck/e4fsck.h still spells the same values out; an identical
 * definition is no conflict for the C preprocessor).
 */
#ifndef SUPPORT_EXITCODES_H
#define SUPPORT_EXITCODES_H

/* mke4fs, debug4fs */
#define SUP_EXIT_OK       0
#define SUP_EXIT_FAILURE  1   /* any error, usage included */

/* e4fsck: bits, summed */
#define FSCK_OK           0
#define FSCK_NONDESTRUCT  1   /* errors corrected */
#define FSCK_REBOOT       2   /* corrected, the system should be rebooted */
#define FSCK_UNCORRECTED  4   /* errors left uncorrected */
#define FSCK_ERROR        8   /* operational error */
#define FSCK_USAGE        16
#define FSCK_CANCELED     32
#define FSCK_LIBRARY      128 /* shared library error (e2fsck's value; unused so far) */

#endif
