/* fuzz_walk.h - the image walker shared by the libFuzzer target and replay. */
#ifndef EXT4FS_FUZZ_WALK_H
#define EXT4FS_FUZZ_WALK_H

#include <stddef.h>
#include <stdint.h>

/* Open data as an image in every way the walker knows and read all of it; returns 0. */
int fuzz_walk_image(const uint8_t *data, size_t size);

/* The libFuzzer entry point (defined by each target: fuzz_image.c, fuzz_undo.c, fuzz_fsck.c, fuzz_quota.c). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
