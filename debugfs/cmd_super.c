/*
 * cmd_super.c - debug4fs commands about the file system as a whole:
 *
 *   show_super_stats, stats [-h]     superblock listing and group summary
 *   freefrag, e2freefrag [-c kb]     free-space fragmentation report
 *   testb <block> [count]            block in-use test
 *   testi <file>                     inode in-use test
 *   find_free_block, ffb [count [goal]]
 *   find_free_inode, ffi [dir [mode]]
 *   imap <file>                      where an inode lives
 *
 * The text output follows debugfs 1.47.0 line for line (the layout was
 * learnt by running debugfs and dumpe2fs on many images).  With -j every
 * command prints one JSON document instead, with numbers as numbers and
 * flag words as arrays of names.
 *
 * Deliberate differences from debugfs 1.47.0:
 *  - freefrag on a bigalloc file system: debugfs tests the wrong bitmap bit
 *    (it shifts the block number to a cluster twice) and so reports no free
 *    extents at all.  We report the real free extents, measured in blocks.
 *  - ffb / ffi never change anything.  debugfs clears BLOCK_UNINIT /
 *    INODE_UNINIT in memory while searching, and then complains at exit
 *    ("ext2fs_write_block_bitmap: Attempt to write to filesystem opened
 *    read-only"); we print no such lines.
 *  - debugfs does not exit from freefrag's usage message; neither do we (the
 *    report follows), but the command's status is then nonzero.
 *  - A command that fails returns nonzero (debugfs has no per-command status);
 *    testb counts a block outside the file system as a failure, and refuses a
 *    count larger than the file system's block count ("Bad count"; debugfs
 *    goes on printing for as many as 2^64 blocks).
 *
 * The superblock listing itself (text and JSON) is lib/support's
 * (support/superlist.h), one walk over the fields that tune4fs -l can share;
 * so is freefrag's report (support/freefrag.h), which defrag4fs -c prints too.
 *
 * Not a difference: superblock times are shown from their low 32 bits only,
 * because 1.47.0 ignores the s_*_time_hi bytes there (so "n/a" means the low
 * 32 bits are 0); the JSON output has the full 40-bit times.
 *
 * Error messages that debugfs produces through com_err and the library's
 * bitmap warnings ("Illegal block number passed to ext2fs_test_block_bitmap
 * #N for block bitmap for DEV") are reproduced on stderr.
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "debug4fs.h"
#include "ext4fs/bitmap.h"
#include "ext4fs/frag.h"
#include "ext4fs/ondisk_names.h"
#include "support/freefrag.h"
#include "support/superlist.h"

/* ------------------------------------------------------------------ stats */

static int has_group_csum(const struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);

	return geo->has_metadata_csum || geo->has_gdt_csum;
}

static uint32_t count_dirs(const struct ext4fs_fs *fs)
{
	uint32_t dirs = 0;

	for (uint32_t g = 0; g < ext4fs_geom(fs)->group_count; g++)
		dirs += ext4fs_group(fs, g)->used_dirs_count;
	return dirs;
}

static void print_groups(FILE *f, const struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	const char *unit = geo->cluster_ratio > 1 ? "cluster" : "block";
	int csum = has_group_csum(fs);

	for (uint32_t g = 0; g < geo->group_count; g++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(fs, g);
		int open = 0;

		fprintf(f, " Group %2u: block bitmap at %" PRIu64 ", inode bitmap at %" PRIu64
			", inode table at %" PRIu64 "\n",
			g, gd->block_bitmap, gd->inode_bitmap, gd->inode_table);
		fprintf(f, "           %u free %s%s, %u free %s, %u used %s",
			gd->free_blocks_count, unit, gd->free_blocks_count == 1 ? "" : "s",
			gd->free_inodes_count, gd->free_inodes_count == 1 ? "inode" : "inodes",
			gd->used_dirs_count, gd->used_dirs_count == 1 ? "directory" : "directories");
		if (csum)
			fprintf(f, ", %u unused %s", gd->itable_unused,
				gd->itable_unused == 1 ? "inode" : "inodes");
		fputc('\n', f);
		if (gd->flags & EXT4FS_BG_INODE_UNINIT) {
			fputs("           [Inode not init", f);
			open = 1;
		}
		if (gd->flags & EXT4FS_BG_BLOCK_UNINIT) {
			fputs(open ? ", Block not init" : "           [Block not init", f);
			open = 1;
		}
		if (csum) {
			fprintf(f, "%sChecksum 0x%04x", open ? ", " : "           [", gd->checksum);
			open = 1;
		}
		if (open)
			fputs("]\n", f);
	}
}

/* ------------------------------------------------------------------ stats: JSON */

static void json_groups(struct json *j, const struct ext4fs_fs *fs)
{
	const struct ext4fs_geom *geo = ext4fs_geom(fs);
	int csum = has_group_csum(fs);

	json_array_begin(j, "groups");
	for (uint32_t g = 0; g < geo->group_count; g++) {
		const struct ext4fs_group_desc *gd = ext4fs_group(fs, g);
		json_object_begin(j, NULL);
		json_uint(j, "group", g);
		json_uint(j, "block_bitmap", gd->block_bitmap);
		json_uint(j, "inode_bitmap", gd->inode_bitmap);
		json_uint(j, "inode_table", gd->inode_table);
		json_uint(j, geo->cluster_ratio > 1 ? "free_clusters" : "free_blocks",
			  gd->free_blocks_count);
		json_uint(j, "free_inodes", gd->free_inodes_count);
		json_uint(j, "used_dirs", gd->used_dirs_count);
		if (csum)
			json_uint(j, "itable_unused", gd->itable_unused);
		else
			json_null(j, "itable_unused");
		json_uint(j, "flags_value", gd->flags);
		json_array_begin(j, "flags");
		for (unsigned b = 0; b < 16; b++)
			if ((gd->flags & (1U << b)) && ext4fs_bg_flag_name(b))
				json_string(j, NULL, ext4fs_bg_flag_name(b));
		json_array_end(j);
		if (csum) {
			json_uint(j, "checksum", gd->checksum);
			json_bool(j, "checksum_ok", ext4fs_group_desc_csum_ok(fs, g));
		} else {
			json_null(j, "checksum");
			json_null(j, "checksum_ok");
		}
		json_object_end(j);
	}
	json_array_end(j);
}

static int do_stats(struct dbg *d, int argc, char **argv)
{
	int c, header_only = 0;

	while ((c = getopt(argc, argv, "h")) != -1) {
		if (c != 'h')
			goto usage;
		header_only = 1;
	}
	if (optind != argc)
		goto usage;

	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		sup_super_list_json(&j, "superblock", d->fs);
		json_uint(&j, "directories", count_dirs(d->fs));
		if (!header_only)
			json_groups(&j, d->fs);
		json_object_end(&j);
		json_finish(&j);
		return 0;
	}
	sup_super_list_text(d->out, d->fs, SUP_SUPER_LIST_EXPECTED_CSUM);
	fprintf(d->out, "%-26s%u\n", "Directories:", count_dirs(d->fs));
	if (!header_only)
		print_groups(d->out, d->fs);
	return 0;
usage:
	fflush(d->out);
	fprintf(stderr, "%s: Usage: show_super_stats [-h]\n", argv[0]);
	return 1;
}

/* ------------------------------------------------------------------ bitmaps */

static int load_block_bitmap(struct dbg *d, const char *cmd, struct ext4fs_bitmap **bm)
{
	int err = ext4fs_block_bitmap_load(d->fs, bm);

	if (err)
		dbg_error(d, cmd, err, "while reading block bitmap");
	return err;
}

static int load_inode_bitmap(struct dbg *d, const char *cmd, struct ext4fs_bitmap **bm)
{
	int err = ext4fs_inode_bitmap_load(d->fs, bm);

	if (err)
		dbg_error(d, cmd, err, "while reading inode bitmap");
	return err;
}

static unsigned cluster_bits(const struct ext4fs_geom *geo)
{
	unsigned bits = 0;

	while ((1U << bits) < geo->cluster_ratio)
		bits++;
	return bits;
}

/*
 * Test block blk the way debugfs's bitmap does: the range check is on
 * clusters, and an out-of-range block is reported on stderr and reads as free.
 */
static int test_block(struct dbg *d, const struct ext4fs_bitmap *bm, uint64_t blk)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	unsigned cb = cluster_bits(geo);
	uint64_t c = blk >> cb;

	if (c < (geo->first_data_block >> cb) || c > ((geo->blocks_count - 1) >> cb)) {
		fflush(d->out);
		fprintf(stderr, "Illegal block number passed to ext2fs_test_block_bitmap #%" PRIu64
			" for block bitmap for %s\n", c, d->device);
		return -1;
	}
	if (blk > ext4fs_bitmap_end(bm))
		blk = ext4fs_bitmap_end(bm);
	if (blk < ext4fs_bitmap_start(bm))
		blk = ext4fs_bitmap_start(bm);
	return ext4fs_bitmap_test(bm, blk) == 1;
}

/* strtoull with base 0 that must consume the whole string (debugfs's rule). */
static int parse_ull(const char *s, unsigned long long *v)
{
	char *end;

	*v = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}

static int parse_long(const char *s, long *v)
{
	char *end;

	*v = strtol(s, &end, 0);
	return *end ? -1 : 0;
}

static int do_testb(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_bitmap *bm;
	unsigned long long blk, count = 1;
	struct json j;
	int rc = 0;

	if (dbg_check_args(argc, argv, 2, 3, "<block> [count]"))
		return 1;
	if (parse_ull(argv[1], &blk)) {
		fflush(d->out);
		fprintf(stderr, "%s: Bad block number - %s\n", argv[0], argv[1]);
		return 1;
	}
	if (blk == 0) {
		fflush(d->out);
		fprintf(stderr, "%s: Invalid block number 0\n", argv[0]);
		return 1;
	}
	if (argc > 2 && parse_ull(argv[2], &count)) {
		fflush(d->out);
		fprintf(stderr, "%s: Bad count - %s\n", argv[0], argv[2]);
		return 1;
	}
	if (count > ext4fs_geom(d->fs)->blocks_count) {
		/* Bounded so a typo cannot print 2^64 lines. */
		fflush(d->out);
		fprintf(stderr, "%s: Bad count - %s (more than the %llu blocks of the file system)\n",
			argv[0], argv[2], (unsigned long long)ext4fs_geom(d->fs)->blocks_count);
		return 1;
	}
	if (load_block_bitmap(d, argv[0], &bm))
		return 1;
	if (d->json) {
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "blocks");
	}
	for (; count > 0; count--, blk++) {
		int used = test_block(d, bm, blk);
		if (used < 0)
			rc = 1;         /* reported on stderr; the block reads as free */
		if (d->json) {
			json_object_begin(&j, NULL);
			json_uint(&j, "block", blk);
			json_bool(&j, "in_use", used == 1);
			json_bool(&j, "valid", used >= 0);
			json_object_end(&j);
		} else {
			fprintf(d->out, used == 1 ? "Block %llu marked in use\n" : "Block %llu not in use\n",
				blk);
		}
	}
	if (d->json) {
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	}
	ext4fs_bitmap_free(bm);
	return rc;
}

static int do_testi(struct dbg *d, int argc, char **argv)
{
	struct ext4fs_bitmap *bm;
	uint32_t ino;
	int used;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	if (load_inode_bitmap(d, argv[0], &bm))
		return 1;
	used = ext4fs_bitmap_test(bm, ino) == 1;
	ext4fs_bitmap_free(bm);
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "inode", ino);
		json_bool(&j, "in_use", used);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, used ? "Inode %u is marked in use\n" : "Inode %u is not in use\n", ino);
	}
	return 0;
}

/*
 * The first free block at or after goal, wrapping to the first data block,
 * as the library allocator of debugfs finds it: a goal outside the file
 * system means the first data block, and with bigalloc the search starts at
 * the goal's cluster and answers with the first block of a free cluster.
 */
static int next_free_block(const struct ext4fs_geom *geo, const struct ext4fs_bitmap *bm,
			   uint64_t goal, uint64_t *out)
{
	uint64_t fdb = geo->first_data_block, last = geo->blocks_count - 1;
	int err;

	if (goal == 0 || goal >= geo->blocks_count)
		goal = fdb;
	goal &= ~(uint64_t)(geo->cluster_ratio - 1);
	if (goal < fdb)
		goal = fdb;
	err = ext4fs_bitmap_find(bm, goal, last, 0, out);
	if (err == -ENOENT && goal != fdb)
		err = ext4fs_bitmap_find(bm, fdb, goal - 1, 0, out);
	if (!err && geo->cluster_ratio > 1)
		*out &= ~(uint64_t)(geo->cluster_ratio - 1);
	return err;
}

static int do_ffb(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	struct ext4fs_bitmap *bm;
	long count = 1, v;
	uint64_t goal = geo->first_data_block, blk, first = 0;
	int rc = 0, n;
	struct json j;

	if (argc > 3 || (argc == 2 && argv[1][0] == '?')) {
		fflush(d->out);
		fprintf(stderr, "%s: Usage: find_free_block [count [goal]]\n", argv[0]);
		return 1;
	}
	if (argc > 1) {
		if (parse_long(argv[1], &count)) {
			fflush(d->out);
			fprintf(stderr, "%s: Bad count - %s\n", argv[0], argv[1]);
			return 1;
		}
	}
	if (argc > 2) {
		if (parse_long(argv[2], &v)) {
			/* debugfs names the count argument here; so do we. */
			fflush(d->out);
			fprintf(stderr, "%s: Bad goal - %s\n", argv[0], argv[1]);
			return 1;
		}
		goal = (uint64_t)(int64_t)v;
	}
	if (load_block_bitmap(d, argv[0], &bm))
		return 1;
	n = (int)count;
	if (d->json) {
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "free_blocks");
	} else {
		fputs("Free blocks found: ", d->out);
	}
	blk = goal - 1;
	for (; n > 0; n--) {
		int err = next_free_block(geo, bm, blk + 1, &blk);
		if (first) {
			if (first == blk)
				break;
		} else {
			first = blk;
		}
		if (err) {
			fflush(d->out);
			fputs("ext2fs_new_block: Could not allocate block in ext2 filesystem \n", stderr);
			rc = 1;
			break;
		}
		if (d->json)
			json_uint(&j, NULL, blk);
		else
			fprintf(d->out, "%" PRIu64 " ", blk);
	}
	if (d->json) {
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else if (!rc) {
		fputc('\n', d->out);
	}
	ext4fs_bitmap_free(bm);
	return rc;
}

static int do_ffi(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	struct ext4fs_bitmap *bm;
	uint32_t dir = d->root, start = 0;
	uint64_t found = 0;
	long v;
	int err;

	if (argc > 3 || (argc > 1 && argv[1][0] == '?')) {
		fflush(d->out);
		fprintf(stderr, "%s: Usage: find_free_inode [dir [mode]]\n", argv[0]);
		return 1;
	}
	if (argc > 1) {
		if (parse_long(argv[1], &v)) {
			fflush(d->out);
			fprintf(stderr, "%s: Bad dir - %s\n", argv[0], argv[1]);
			return 1;
		}
		dir = (uint32_t)v;
	}
	if (argc > 2 && parse_long(argv[2], &v)) {
		fflush(d->out);
		fprintf(stderr, "%s: Bad mode - %s\n", argv[0], argv[2]);
		return 1;
	}
	/* The search starts at the first inode of dir's group (32-bit arithmetic, as debugfs). */
	if (dir > 0)
		start = (dir - 1) / geo->inodes_per_group * geo->inodes_per_group + 1;
	if (start < geo->first_ino)
		start = geo->first_ino;
	if (start > geo->inodes_count) {
		err = -ENOENT;
	} else {
		if (load_inode_bitmap(d, argv[0], &bm))
			return 1;
		err = ext4fs_bitmap_find(bm, start, geo->inodes_count, 0, &found);
		if (err == -ENOENT && start > geo->first_ino)
			err = ext4fs_bitmap_find(bm, geo->first_ino, start - 1, 0, &found);
		ext4fs_bitmap_free(bm);
	}
	if (err) {
		fflush(d->out);
		fputs("ext2fs_new_inode: Could not allocate inode in ext2 filesystem \n", stderr);
		return 1;
	}
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "free_inode", found);
		json_uint(&j, "start", start);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, "Free inode found: %" PRIu64 "\n", found);
	}
	return 0;
}

static int do_imap(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	uint32_t ino, group;
	uint64_t offset, blk;

	if (dbg_check_args(argc, argv, 2, 2, "<file>"))
		return 1;
	if (dbg_parse_inode(d, argv[1], &ino))
		return 1;
	group = (ino - 1) / geo->inodes_per_group;
	offset = (uint64_t)((ino - 1) % geo->inodes_per_group) * geo->inode_size;
	if (ext4fs_group(d->fs, group)->inode_table == 0) {
		fflush(d->out);
		fprintf(stderr, "%s: Inode table for group %u is missing\n\n", argv[0], group);
		return 1;
	}
	blk = ext4fs_group(d->fs, group)->inode_table + offset / geo->block_size;
	offset %= geo->block_size;
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_uint(&j, "inode", ino);
		json_uint(&j, "group", group);
		json_uint(&j, "block", blk);
		json_uint(&j, "offset", offset);
		json_object_end(&j);
		json_finish(&j);
	} else {
		fprintf(d->out, "Inode %u is part of block group %u\n\tlocated at block %" PRIu64
			", offset 0x%04" PRIx64 "\n", ino, group, blk, offset);
	}
	return 0;
}

/* ------------------------------------------------------------------ freefrag */

static void freefrag_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-c chunksize in kb] [-h] device_name\n", prog);
}

static int do_freefrag(struct dbg *d, int argc, char **argv)
{
	const struct ext4fs_geom *geo = ext4fs_geom(d->fs);
	struct ext4fs_frag_free ff;
	struct ext4fs_bitmap *bm;
	uint64_t chunk_bytes = 0;
	unsigned long long v;
	int c, rc = 0, err;
	char *end;

	while ((c = getopt(argc, argv, "c:h")) != -1) {
		switch (c) {
		case 'c':
			v = strtoull(optarg, &end, 0);
			if (*end) {
				fflush(d->out);
				fprintf(stderr, "%s: bad chunk size '%s'\n", argv[0], optarg);
				freefrag_usage(argv[0]);
				rc = 1;
			}
			if (v & (v - 1)) {
				fflush(d->out);
				fprintf(stderr, "%s: chunk size must be a power of 2.\n", argv[0]);
				freefrag_usage(argv[0]);
				rc = 1;
			}
			chunk_bytes = (uint64_t)v * 1024;
			break;
		default:
			/* -h and unknown options: the usage, then the report anyway (as debugfs). */
			fflush(d->out);
			freefrag_usage(argv[0]);
			if (c != 'h')
				rc = 1;
			break;
		}
	}
	/* A device name after the options is accepted and ignored, as in debugfs. */
	if (chunk_bytes && chunk_bytes < geo->block_size) {
		fflush(d->out);
		fprintf(stderr, "%s: chunksize must be greater than or equal to filesystem blocksize.\n",
			argv[0]);
		return 1;
	}
	if (load_block_bitmap(d, argv[0], &bm))
		return 1;
	err = ext4fs_frag_free_scan(d->fs, bm, chunk_bytes, 0, &ff);
	ext4fs_bitmap_free(bm);
	if (err) {
		dbg_error(d, argv[0], err, "while scanning the block bitmap");
		return 1;
	}
	if (d->json) {
		struct json j;
		json_init(&j, d->out);
		json_object_begin(&j, NULL);
		json_string(&j, "device", d->device);
		sup_freefrag_json(&j, geo, &ff, geo->free_blocks_count);
		json_object_end(&j);
		json_finish(&j);
	} else {
		sup_freefrag_print(d->out, d->device, geo, &ff, geo->free_blocks_count);
	}
	return rc;
}

const struct dbg_cmd dbg_cmds_super[] = {
	{ { "show_super_stats", "stats", NULL }, do_stats, 1, "Show superblock statistics" },
	{ { "freefrag", "e2freefrag", NULL }, do_freefrag, 1, "Report free space fragmentation" },
	{ { "testb", NULL }, do_testb, 1, "Test a block's in-use flag" },
	{ { "testi", NULL }, do_testi, 1, "Test an inode's in-use flag" },
	{ { "find_free_block", "ffb", NULL }, do_ffb, 1, "Find free block(s)" },
	{ { "find_free_inode", "ffi", NULL }, do_ffi, 1, "Find free inode(s)" },
	{ { "imap", NULL }, do_imap, 1, "Calculate the location of an inode" },
	{ { NULL }, NULL, 0, NULL },
};
