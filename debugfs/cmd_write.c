/*
 * cmd_write.c - debug4fs commands that change allocation state and whole
 * inodes (debug4fs -w):
 *
 *   setb <block> [count]       mark blocks in use
 *   freeb <block> [count]      mark blocks free
 *   seti <file> [num]          mark inodes in use
 *   freei <file> [num]         mark inodes free
 *   clri <file>                zero an inode's first 128 bytes
 *   copy_inode <src> <dest>    copy a whole inode record over another
 *
 * Syntax and messages are debugfs 1.47's: "Filesystem opened read/only"
 * without -w, "Warning: block N already set" and the like.  These are the
 * tools for making damaged images on purpose (fsck tests): nothing here
 * looks at what the blocks and inodes are used for.
 *
 * Deliberate differences from debugfs 1.47:
 *  - setb / freeb / seti / freei keep the group and superblock free counts
 *    (and the directory count, for an inode whose mode is a directory) in
 *    step with the bitmap, through the library's accounting; debugfs
 *    changes the bitmap alone.  e2fsck still reports the bitmap
 *    difference, with one counter problem less.
 *  - a range that leaves the file system is refused before anything
 *    changes ("Illegal block number ..."); debugfs warns per block and
 *    changes the blocks that exist.  A count above the number of blocks or
 *    inodes is refused too.
 *  - clri and copy_inode read the inode without checking its checksum (the
 *    point is to overwrite it) and write a correct one.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "debug4fs.h"
#include "ext4fs/bitmap.h"

int dbg_require_rw(struct dbg *d, const char *cmd)
{
	if (!d->fs) {
		fflush(d->out);
		fprintf(stderr, "%s: Filesystem not open\n", cmd);
		return 1;
	}
	if (!(ext4fs_fs_flags(d->fs) & EXT4FS_OPEN_RW)) {
		fflush(d->out);
		fprintf(stderr, "%s: Filesystem opened read/only\n", cmd);
		return 1;
	}
	return 0;
}

/* strtoull over the whole word (base 0), debugfs's rule for numbers. */
static int parse_ull(const char *s, unsigned long long *v)
{
	char *end;

	if (!*s)
		return -1;
	*v = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}

/* ------------------------------------------------------------------ blocks */

/* "<block> [count]" as debugfs's setb, freeb and testb read it. */
static int block_args(struct dbg *d, int argc, char **argv, uint64_t *blk, uint64_t *count)
{
	const struct ext4fs_geom *geo;
	unsigned long long b, n = 1;

	if (dbg_check_args(argc, argv, 2, 3, "<block> [count]") || dbg_require_rw(d, argv[0]))
		return 1;
	if (parse_ull(argv[1], &b)) {
		fprintf(stderr, "%s: Bad block number - %s\n", argv[0], argv[1]);
		return 1;
	}
	if (b == 0) {
		fprintf(stderr, "%s: Invalid block number 0\n", argv[0]);
		return 1;
	}
	if (argc > 2 && parse_ull(argv[2], &n)) {
		fprintf(stderr, "%s: Bad count - %s\n", argv[0], argv[2]);
		return 1;
	}
	geo = ext4fs_geom(d->fs);
	if (n == 0 || n > geo->blocks_count) {
		fprintf(stderr, "%s: Bad count - %s\n", argv[0], argv[2]);
		return 1;
	}
	if (b < geo->first_data_block || b >= geo->blocks_count || n > geo->blocks_count - b) {
		uint64_t bad = b < geo->first_data_block || b >= geo->blocks_count ? b : geo->blocks_count;
		fprintf(stderr, "Illegal block number passed to ext2fs_%smark_block_bitmap #%" PRIu64
			" for block bitmap for %s\n", strcmp(argv[0], "setb") ? "un" : "", bad,
			d->device);
		return 1;
	}
	*blk = b;
	*count = n;
	return 0;
}

/*
 * Mark [blk, blk+count) used or free.  Blocks already in that state are
 * named in a warning (debugfs's words) and left alone; the others are
 * changed a run at a time.
 */
static int mark_blocks(struct dbg *d, const char *cmd, uint64_t blk, uint64_t count, int used)
{
	const struct ext4fs_bitmap *bm;
	uint64_t end = blk + count, b = blk;
	int err = ext4fs_fs_block_bitmap(d->fs, &bm);

	if (err) {
		dbg_error(d, cmd, err, "while reading block bitmap");
		return 1;
	}
	while (b < end) {
		uint64_t run_end;

		if (ext4fs_bitmap_test(bm, b) == used) {
			fprintf(stderr, "%s: Warning: block %" PRIu64 " already %s\n", cmd, b,
				used ? "set" : "clear");
			b++;
			continue;
		}
		if (ext4fs_bitmap_find(bm, b, end - 1, used, &run_end))
			run_end = end;
		err = used ? ext4fs_blocks_mark_used(d->fs, b, run_end - b) :
			     ext4fs_blocks_mark_free(d->fs, b, run_end - b);
		if (err) {
			dbg_error(d, cmd, err, "while marking blocks %" PRIu64 "-%" PRIu64 " %s", b,
				  run_end - 1, used ? "in use" : "free");
			return 1;
		}
		b = run_end;
	}
	return 0;
}

static int do_setb(struct dbg *d, int argc, char **argv)
{
	uint64_t blk, count;

	if (block_args(d, argc, argv, &blk, &count))
		return 1;
	return mark_blocks(d, argv[0], blk, count, 1);
}

static int do_freeb(struct dbg *d, int argc, char **argv)
{
	uint64_t blk, count;

	if (block_args(d, argc, argv, &blk, &count))
		return 1;
	return mark_blocks(d, argv[0], blk, count, 0);
}

/* ------------------------------------------------------------------ inodes */

/* Is inode ino's record a directory (read without checksum verification)? */
static int inode_is_dir(struct dbg *d, uint32_t ino)
{
	uint32_t size = ext4fs_geom(d->fs)->inode_size;
	unsigned char *raw = malloc(size);
	struct ext4fs_inode in;
	int dir = 0;

	if (raw && ext4fs_inode_read_raw(d->fs, ino, raw) == 0) {
		ext4fs_inode_decode(&in, raw, size);
		dir = EXT4FS_ISDIR(in.i_mode);
	}
	free(raw);
	return dir;
}

/*
 * seti / freei: "<file> [num]".  One inode already in the wanted state gets
 * debugfs's warning; in a range such inodes are passed over silently
 * (debugfs sets or clears the whole range without looking).
 */
static int mark_inodes(struct dbg *d, int argc, char **argv, int used)
{
	const struct ext4fs_bitmap *bm;
	unsigned long long num = 1;
	uint32_t ino, count;
	int err;

	if (dbg_check_args(argc, argv, 2, 3, "<file> [num]") || dbg_require_rw(d, argv[0]))
		return 1;
	if (argc == 3 && (parse_ull(argv[2], &num) || num == 0)) {
		fprintf(stderr, "%s: Bad length - %s\n", argv[0], argv[2]);
		return 1;
	}
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (num > ext4fs_geom(d->fs)->inodes_count - ino + 1) {
		fprintf(stderr, "%s: Bad length - %s (inode %u is the last one)\n", argv[0], argv[2],
			ext4fs_geom(d->fs)->inodes_count);
		return 1;
	}
	err = ext4fs_fs_inode_bitmap(d->fs, &bm);
	if (err) {
		dbg_error(d, argv[0], err, "while reading inode bitmap");
		return 1;
	}
	count = (uint32_t)num;
	if (count == 1 && ext4fs_bitmap_test(bm, ino) == used) {
		fprintf(stderr, "%s: Warning: inode already %s\n", argv[0], used ? "set" : "clear");
		return 0;
	}
	for (uint32_t i = ino; i - ino < count; i++) {
		if (ext4fs_bitmap_test(bm, i) == used)
			continue;
		err = used ? ext4fs_inode_mark_used(d->fs, i, inode_is_dir(d, i)) :
			     ext4fs_inode_mark_free(d->fs, i, inode_is_dir(d, i));
		if (err) {
			dbg_error(d, argv[0], err, "while marking inode %u %s", i,
				  used ? "in use" : "free");
			return 1;
		}
	}
	return 0;
}

static int do_seti(struct dbg *d, int argc, char **argv)
{
	return mark_inodes(d, argc, argv, 1);
}

static int do_freei(struct dbg *d, int argc, char **argv)
{
	return mark_inodes(d, argc, argv, 0);
}

/* Read inode ino's raw record into a buffer the caller frees; NULL after a message. */
static unsigned char *read_raw(struct dbg *d, const char *who, uint32_t ino)
{
	unsigned char *raw = malloc(ext4fs_geom(d->fs)->inode_size);
	int err;

	if (!raw) {
		dbg_error(d, who, EXT4FS_E_NO_MEMORY, "while reading inode %u", ino);
		return NULL;
	}
	err = ext4fs_inode_read_raw(d->fs, ino, raw);
	if (err) {
		dbg_error(d, who, err, "while reading inode %u", ino);
		free(raw);
		return NULL;
	}
	return raw;
}

static int write_raw(struct dbg *d, const char *who, uint32_t ino, const unsigned char *raw)
{
	int err = ext4fs_inode_write_raw(d->fs, ino, raw);

	if (err) {
		dbg_error(d, who, err, "while writing inode %u", ino);
		return 1;
	}
	return 0;
}

/* Zero the classic 128 bytes; the large-inode fields (crtime, extra size) stay, as in debugfs. */
static int do_clri(struct dbg *d, int argc, char **argv)
{
	unsigned char *raw;
	uint32_t ino;
	int rc;

	if (dbg_check_args(argc, argv, 2, 2, "<file>") || dbg_require_rw(d, argv[0]))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	raw = read_raw(d, argv[0], ino);
	if (!raw)
		return 1;
	memset(raw, 0, EXT4FS_INODE_BASE_SIZE);
	rc = write_raw(d, argv[0], ino, raw);
	free(raw);
	return rc;
}

static int do_copy_inode(struct dbg *d, int argc, char **argv)
{
	unsigned char *raw;
	uint32_t src, dst;
	int rc;

	if (dbg_check_args(argc, argv, 3, 3, "<source file> <dest_name>") ||
	    dbg_require_rw(d, argv[0]))
		return 1;
	if (dbg_parse_inode(d, argv[1], &src) || dbg_parse_inode(d, argv[2], &dst))
		return 1;
	raw = read_raw(d, argv[0], src);
	if (!raw)
		return 1;
	rc = write_raw(d, argv[0], dst, raw);
	free(raw);
	return rc;
}

const struct dbg_cmd dbg_cmds_write[] = {
	{ { "setb", NULL }, do_setb, 0, "Set a block's in-use flag" },
	{ { "freeb", NULL }, do_freeb, 0, "Clear a block's in-use flag" },
	{ { "seti", NULL }, do_seti, 0, "Set an inode's in-use flag" },
	{ { "freei", NULL }, do_freei, 0, "Clear an inode's in-use flag" },
	{ { "clri", NULL }, do_clri, 0, "Clear an inode's contents" },
	{ { "copy_inode", NULL }, do_copy_inode, 0, "Copy the inode structure" },
	{ { NULL }, NULL, 0, NULL },
};
