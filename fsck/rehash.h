/*
 * rehash.h - pass 3A: the directories to rebuild (rehash.c).
 *
 * The earlier passes put directories on the list; pass 3 runs pass 3A at
 * its end, after /lost+found is settled.  With -D every directory is
 * rebuilt and the list is not consulted.
 */
#ifndef E4FSCK_REHASH_H
#define E4FSCK_REHASH_H

#include <stdint.h>
#include "context.h"

/* Put directory ino on the list (once).  0, or -1 without memory (reported). */
int fsck_rehash_later(struct e4fsck *ctx, uint32_t ino);

/* Whether directory ino will be rebuilt in pass 3A (listed, or -D). */
int fsck_rehash_pending(const struct e4fsck *ctx, uint32_t ino);

/*
 * Pass 3A: rebuild the listed directories (every directory with -D),
 * offering to clear or rename names found twice; with -n only the
 * duplicates are reported.  A directory that cannot be rebuilt is reported
 * (PR_3A_OPTIMIZE_DIR_ERR) and left as it was.  0, or -1 when the run must
 * stop.
 */
int fsck_pass3a(struct e4fsck *ctx);

#endif
