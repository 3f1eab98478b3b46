/* rw_image.c - see rw_image.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "ext4fs/io.h"
#include "rw_image.h"

static void open_rw(struct rw_image *img)
{
	struct ext4fs_io *io = NULL;
	struct ext4fs_open_opts opts = { .flags = EXT4FS_OPEN_RW };
	char msg[256];
	int err;

	assert_int_equal(ext4fs_io_open_memory(img->buf, img->size, 1, &io), 0);
	err = ext4fs_open_io(io, &opts, &img->fs, msg, sizeof(msg));
	if (err)
		fail_msg("opening the image read-write: %s", msg);
	ext4fs_set_time(img->fs, 1700000000, 123456789);
}

void rw_image_open(struct rw_image *img, uint64_t blocks, uint32_t bs,
		   void (*tweak)(struct ext4fs_mkfs_params *))
{
	struct ext4fs_mkfs_params p;
	struct ext4fs_mkfs_plan *plan = NULL;
	struct ext4fs_io *io = NULL;
	char msg[256];

	memset(img, 0, sizeof(*img));
	ext4fs_mkfs_params_init(&p, blocks);
	p.block_size = bs;
	p.blocks_count = blocks;
	p.now = 1700000000;
	memset(p.uuid, 0x42, sizeof(p.uuid));
	memset(p.hash_seed, 0x17, sizeof(p.hash_seed));
	if (tweak)
		tweak(&p);
	if (ext4fs_mkfs_plan(&p, &plan, msg, sizeof(msg)))
		fail_msg("planning the image: %s", msg);
	img->size = (size_t)blocks * bs;
	img->buf = calloc(1, img->size);
	assert_non_null(img->buf);
	assert_int_equal(ext4fs_io_open_memory(img->buf, img->size, 1, &io), 0);
	if (ext4fs_mkfs_write(plan, io, NULL, NULL, NULL, msg, sizeof(msg)))
		fail_msg("writing the image: %s", msg);
	ext4fs_io_close(io);
	ext4fs_mkfs_plan_free(plan);
	open_rw(img);
}

void rw_image_reopen_raw(struct rw_image *img)
{
	assert_null(img->fs);
	open_rw(img);
}

void rw_image_reopen(struct rw_image *img)
{
	assert_int_equal(ext4fs_close_flush(img->fs), 0);
	img->fs = NULL;
	open_rw(img);
}

static int have_e2fsck(void)
{
	return system("command -v e2fsck >/dev/null 2>&1") == 0;
}

int rw_image_fsck(struct rw_image *img)
{
	char out[65536];

	return rw_image_fsck_output(img, out, sizeof(out));
}

int rw_image_fsck_output(struct rw_image *img, char *out, size_t size)
{
	char path[] = "/tmp/rw_image_XXXXXX";
	char cmd[512];
	int fd, status;
	FILE *f;

	out[0] = '\0';
	assert_int_equal(ext4fs_flush(img->fs), 0);
	if (!have_e2fsck())
		return -1;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_true(write(fd, img->buf, img->size) == (ssize_t)img->size);
	close(fd);
	snprintf(cmd, sizeof(cmd), "e2fsck -fn %s 2>&1", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	status = pclose(f);
	unlink(path);
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	if (status != 0)
		print_message("e2fsck -fn exited %d:\n%s\n", status, out);
	return status;
}

void rw_image_assert_clean(struct rw_image *img)
{
	int rc = rw_image_fsck(img);

	if (rc == -1)
		print_message("SKIP: e2fsck not installed\n");
	else
		assert_int_equal(rc, 0);
}

void rw_image_close(struct rw_image *img)
{
	if (img->fs)
		assert_int_equal(ext4fs_close_flush(img->fs), 0);
	free(img->buf);
	memset(img, 0, sizeof(*img));
}

void rw_tweak_1k(struct ext4fs_mkfs_params *p)
{
	p->block_size = 1024;
}

void rw_tweak_gdt_csum(struct ext4fs_mkfs_params *p)
{
	p->feature_ro_compat &= ~(uint32_t)EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM;
	p->feature_ro_compat |= EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM;
}

void rw_tweak_no_csum(struct ext4fs_mkfs_params *p)
{
	p->feature_ro_compat &= ~(uint32_t)(EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM |
					    EXT4FS_FEATURE_RO_COMPAT_GDT_CSUM);
}

void rw_tweak_1k_gdt_csum(struct ext4fs_mkfs_params *p)
{
	rw_tweak_1k(p);
	rw_tweak_gdt_csum(p);
}

void rw_tweak_ext3ish_1k(struct ext4fs_mkfs_params *p)
{
	p->block_size = 1024;
	p->feature_incompat = EXT4FS_FEATURE_INCOMPAT_FILETYPE;
	p->feature_ro_compat = EXT4FS_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT4FS_FEATURE_RO_COMPAT_LARGE_FILE;
	p->log_groups_per_flex = 0;
}

void rw_tweak_ext3ish_4k(struct ext4fs_mkfs_params *p)
{
	rw_tweak_ext3ish_1k(p);
	p->block_size = 4096;
}
