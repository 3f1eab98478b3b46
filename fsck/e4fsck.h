/*
 * e4fsck.h - the checker's shared state, under its first name: the same as
 * context.h, for the files that still include it by this name.
 */
#ifndef E4FSCK_H
#define E4FSCK_H

#include "context.h"

#endif
