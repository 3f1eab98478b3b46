/*
 * fragdump - print the library's fragmentation figures (frag.h) of an
 * image, for t5010 to hold against filefrag and e4defrag.
 *
 *   fragdump IMAGE
 *
 * One line a regular file with blocks, "file INO BLOCKS EXTENTS
 * MAP_EXTENTS IDEAL IDEAL_E4DEFRAG", then e4defrag -c's summary over the
 * files it would count (lost+found's files included: the test keeps
 * none there): "score TOTAL BEST SIZE_PER_EXTENT_KB SCORE".  Exit status 0,
 * or 1 with a message on stderr.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include "ext4fs/errors.h"
#include "ext4fs/frag.h"
#include "ext4fs/fs.h"
#include "ext4fs/inode.h"
#include "ext4fs/scan.h"

int main(int argc, char **argv)
{
	struct ext4fs_fs *fs = NULL;
	struct ext4fs_scan *scan = NULL;
	struct ext4fs_frag_score score;
	struct ext4fs_frag_score_summary sum;
	struct ext4fs_inode inode;
	const unsigned char *raw;
	char msg[256] = "";
	uint32_t ino;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: fragdump IMAGE\n");
		return 1;
	}
	if ((err = ext4fs_open(argv[1], NULL, &fs, msg, sizeof(msg)))) {
		fprintf(stderr, "fragdump: %s: %s\n", ext4fs_strerror(err), msg);
		return 1;
	}
	ext4fs_frag_score_init(&score);
	err = ext4fs_scan_open(fs, 0, ext4fs_geom(fs)->group_count - 1, 0, &scan);
	while (!err && (err = ext4fs_scan_next(scan, &ino, &inode, &raw, NULL)) > 0) {
		struct ext4fs_frag_file f;
		struct ext4fs_frag_score_row row;
		err = 0;
		if (!inode.i_links_count || !EXT4FS_ISREG(inode.i_mode) || ino < ext4fs_geom(fs)->first_ino)
			continue;
		if ((err = ext4fs_frag_file(fs, ino, &inode, &f)))
			break;
		if (f.blocks)
			printf("file %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", ino,
			       f.blocks, f.extents, f.map_extents, f.ideal, f.ideal_e4defrag);
		if (ext4fs_frag_score_counts(&inode, &f))
			ext4fs_frag_score_add(&score, &f, ext4fs_geom(fs)->block_size, &row);
	}
	if (err < 0) {
		fprintf(stderr, "fragdump: %s: %s\n", ext4fs_strerror(err), ext4fs_errmsg(fs));
		ext4fs_scan_close(scan);
		ext4fs_close(fs);
		return 1;
	}
	if (!ext4fs_frag_score_summary(&score, ext4fs_geom(fs)->block_size, &sum))
		printf("score %" PRIu64 " %" PRIu64 " %" PRIu64 " %.0f\n", sum.total_extents, sum.best_extents,
		       sum.size_per_extent_kb, sum.score);
	ext4fs_scan_close(scan);
	ext4fs_close(fs);
	return 0;
}
