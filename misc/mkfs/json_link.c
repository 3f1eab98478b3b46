/*
 * json_link.c - mke4fs --json uses debug4fs's JSON writer; this compiles
 * that one source file into mke4fs, so both tools share the same code.
 */
#include "../../debugfs/json.c"
