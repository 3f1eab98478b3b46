/*
 * json_link.c - e4fsck --json uses debug4fs's JSON writer; this compiles
 * that one source file into e4fsck, as mke4fs does.
 */
#include "../debugfs/json.c"
