/*
 * mke4fs.c - make an ext2/ext3/ext4 file system, mke2fs 1.47-compatible.
 *
 * main() runs the stages in mke2fs's order, so messages come out in the
 * same order too:
 *
 *   1. options (options.c), the banner on stderr
 *   2. the target: stat, existing contents (ask or refuse), mounted (refuse),
 *      creating a missing image file ("Creating regular file ...")
 *   3. policy (profile.c): every default and every contradiction
 *   4. the plan (libext4fs): geometry, placement, counts; nothing written
 *   5. -n: the summary, then stop
 *   6. write: open with O_EXCL, wipe old signatures, and let the library
 *      discard and write while output.c prints the stages
 *
 * An image file that step 2 created is removed again when a later step
 * fails, so a refused command leaves nothing behind.  Exit status: 0 on
 * success, 1 on any error (as mke2fs).
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/errors.h"
#include "ext4fs/io.h"
#include "mke4fs.h"
#include "support/comerr.h"
#include "support/fsopen.h"
#include "support/exitcodes.h"
#include "support/version.h"

const char *prog_name = "mke4fs";

static struct mk_target *created_target;   /* removed on failure */

static int fail(void)
{
	if (created_target) {
		unlink(created_target->path);
		created_target = NULL;
	}
	return SUP_EXIT_FAILURE;
}

/* Plan, with the last group trimmed by the library.  Prints errors. */
static int make_plan(struct mk_config *c, struct ext4fs_mkfs_plan **plan)
{
	char msg[512];
	int err = ext4fs_mkfs_plan(&c->p, plan, msg, sizeof(msg));

	if (err) {
		size_t n = strlen(prog_name);

		if (err == EXT4FS_E_TOO_SMALL || err == EXT4FS_E_NO_SPACE || err == EXT4FS_E_TOO_MANY_INODES)
			fprintf(stderr, "%s: %s while setting up superblock (%s)\n", c->device,
				ext4fs_strerror(err), msg);
		else if (!strncmp(msg, prog_name, n) && msg[n] == ' ')
			fprintf(stderr, "%s\n", msg);   /* the library already named mke4fs */
		else
			fprintf(stderr, "%s: %s\n", prog_name, msg[0] ? msg : ext4fs_strerror(err));
		return -1;
	}
	if (c->journal_too_small)
		fputs("\nFilesystem too small for a journal\n", stderr);
	/* mke2fs: a journal asked for by size may take at most half the free space. */
	if (c->journal_requested_size) {
		const struct ext4fs_super *s = ext4fs_mkfs_plan_super(*plan);
		uint64_t fr = (uint64_t)s->s_free_blocks_count_lo | (uint64_t)s->s_free_blocks_count_hi << 32;
		uint64_t j = ext4fs_mkfs_plan_journal_blocks(*plan);

		if (j > (fr + j) / 2) {
			fputs("\nTotal journal size too big for filesystem.\n", stderr);
			ext4fs_mkfs_plan_free(*plan);
			*plan = NULL;
			return -1;
		}
	}
	return 0;
}

static int write_fs(const struct mk_opts *o, struct mk_target *t, struct mk_config *c,
		    const struct ext4fs_mkfs_plan *plan)
{
	const struct ext4fs_geom *g = ext4fs_mkfs_plan_geom(plan);
	uint64_t fs_bytes = g->blocks_count * g->block_size;
	struct ext4fs_io *io = NULL;
	struct ext4fs_mkfs_result res;
	struct mk_progress pr;
	char msg[512];
	int err;

	if (mk_target_prepare_file(o, t, c->offset + fs_bytes))
		return -1;
	err = sup_io_open(t->path, EXT4FS_IO_RDWR | EXT4FS_IO_EXCL, c->offset, NULL, &io, msg, sizeof(msg));
	if (err == EXT4FS_E_INVALID_ARG && getenv(SUP_FAULT_ENV)) {
		fprintf(stderr, "%s: %s\n", prog_name, msg);
		return -1;
	}
	if (err == -EBUSY) {
		fprintf(stderr, "%s: %s is apparently in use by the system; will not make a filesystem here!\n",
			prog_name, t->path);
		return -1;
	}
	if (err) {
		sup_com_err(prog_name, err, "while trying to open %s", t->path);
		return -1;
	}
	if (io->size < fs_bytes) {
		fprintf(stderr, "%s: %s holds %llu bytes but the file system needs %llu "
			"(Filesystem larger than apparent device size.)\n", prog_name, t->path,
			(unsigned long long)io->size, (unsigned long long)fs_bytes);
		ext4fs_io_close(io);
		return -1;
	}
	if ((err = mk_target_zap(io, fs_bytes, g->block_size))) {
		sup_com_err(prog_name, err, "while wiping old signatures on %s", t->path);
		ext4fs_io_close(io);
		return -1;
	}

	memset(&pr, 0, sizeof(pr));
	pr.quiet = o->quiet;
	pr.verbose = o->verbose;
	pr.open_stage = -1;
	pr.last_closed = -1;
	pr.meter.last_second = -1;
	pr.plan = plan;
	pr.config = c;
	pr.io = io;
	err = ext4fs_mkfs_write(plan, io, mk_progress_cb, &pr, &res, msg, sizeof(msg));
	mk_progress_finish(&pr, err != 0);
	if (!err && (err = ext4fs_io_flush(io)))
		snprintf(msg, sizeof(msg), "flushing %s", t->path);
	ext4fs_io_close(io);
	if (err) {
		fprintf(stderr, "%s: %s while writing the file system\n", prog_name,
			msg[0] ? msg : ext4fs_strerror(err));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mk_opts o;
	struct mk_target t;
	struct mk_config c;
	struct ext4fs_mkfs_plan *plan = NULL;
	int rc = SUP_EXIT_FAILURE;

	/* Unbuffered like mke2fs, so stdout and stderr interleave as written. */
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	memset(&c, 0, sizeof(c));

	if (mk_parse_args(argc, argv, &o))
		goto out;
	if (!o.quiet)
		sup_version_banner(stderr, prog_name);

	if (mk_target_stat(o.device, o.size_arg != NULL, &t) ||
	    mk_target_check_contents(&o, &t) || mk_target_check_mounted(&t))
		goto out;
	if (!t.exists && !o.noaction) {
		if (mk_target_prepare_file(&o, &t, 0))
			goto out;
		created_target = &t;
	}

	if (mk_build_config(&o, &t, &c) || make_plan(&c, &plan))
		goto out;

	if (o.noaction) {
		if (!o.json)
			mk_show_stats(plan, &c, o.verbose);
		else
			mk_print_json(stdout, plan, &c, o.device, 0);
		rc = SUP_EXIT_OK;
		goto out;
	}
	if (write_fs(&o, &t, &c, plan))
		goto out;
	if (o.root_dir && mk_populate(t.path, c.offset, o.root_dir, !c.no_copy_xattrs,
				      c.root_owner_set, c.p.now, o.quiet))
		goto out;
	created_target = NULL;
	if (o.json)
		mk_print_json(stdout, plan, &c, o.device, 1);
	rc = SUP_EXIT_OK;
out:
	if (rc)
		rc = fail();
	ext4fs_mkfs_plan_free(plan);
	mk_config_free(&c);
	mk_opts_free(&o);
	return rc;
}
