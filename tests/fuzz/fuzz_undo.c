/*
 * fuzz_undo.c - the undo file parser (ext4fs_undo_apply) against hostile
 * undo files.
 *
 * The input is the undo file.  It is applied to a 1 MiB in-memory target
 * twice: as a dry run, then forced (so the target's superblock need not
 * match and every key, block checksum and bound is exercised) for real.
 * Nothing may be read outside the undo file or written outside the
 * target; a bad file must end in an error.  The undo file is handed over
 * as a memfd, named by its /proc/self/fd path.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ext4fs/io.h"
#include "ext4fs/undo.h"
#include "fuzz_walk.h"

#define TARGET_SIZE (1024 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char target[TARGET_SIZE];
	struct ext4fs_undo_result result;
	struct ext4fs_io *io;
	char path[64];
	int fd = memfd_create("undo", 0);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(target, 0, sizeof(target));
	if (ext4fs_io_open_memory(target, sizeof(target), 1, &io) == 0) {
		(void)ext4fs_undo_apply(path, io, EXT4FS_UNDO_APPLY_DRY_RUN | EXT4FS_UNDO_APPLY_FORCE, &result);
		(void)ext4fs_undo_apply(path, io, EXT4FS_UNDO_APPLY_FORCE, &result);
		ext4fs_io_close(io);
	}
	close(fd);
	return 0;
}
