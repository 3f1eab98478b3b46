/*
 * mmp.c - multi-mount protection: the MMP block's codec, and the claim a
 * writable handle makes on open and gives back at close, as e2fsprogs'
 * ext2fs_mmp_start() and ext2fs_mmp_stop() do.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "ext4fs/crc.h"
#include "ext4fs/mmp.h"
#include "fs_internal.h"
#include "fs_write_internal.h"
#include "io_stage_internal.h"
#include "mmp_internal.h"
#include "ondisk_le.h"

/* Field offsets of the on-disk record. */
#define MMP_OFF_MAGIC     0x00
#define MMP_OFF_SEQ       0x04
#define MMP_OFF_TIME      0x08
#define MMP_OFF_NODENAME  0x10
#define MMP_OFF_BDEVNAME  0x50
#define MMP_OFF_INTERVAL  0x70
#define MMP_OFF_CHECKSUM  0x3FC

/* e2fsprogs and the kernel never wait more than a minute beyond one interval. */
#define MMP_MAX_EXTRA_WAIT 60

void ext4fs_mmp_decode(const unsigned char *raw, struct ext4fs_mmp *out)
{
	memset(out, 0, sizeof(*out));
	out->magic = le32_load(raw + MMP_OFF_MAGIC);
	out->seq = le32_load(raw + MMP_OFF_SEQ);
	out->time = le64_load(raw + MMP_OFF_TIME);
	memcpy(out->nodename, raw + MMP_OFF_NODENAME, EXT4FS_MMP_NODENAME_LEN);
	memcpy(out->bdevname, raw + MMP_OFF_BDEVNAME, EXT4FS_MMP_BDEVNAME_LEN);
	out->check_interval = le16_load(raw + MMP_OFF_INTERVAL);
	out->checksum = le32_load(raw + MMP_OFF_CHECKSUM);
}

uint32_t ext4fs_mmp_csum(uint32_t seed, const unsigned char *raw)
{
	return ext4fs_crc32c(seed, raw, MMP_OFF_CHECKSUM);
}

void ext4fs_mmp_encode(const struct ext4fs_mmp *m, int has_csum, uint32_t seed, unsigned char *raw)
{
	memset(raw, 0, EXT4FS_MMP_SIZE);
	le32_store(raw + MMP_OFF_MAGIC, m->magic);
	le32_store(raw + MMP_OFF_SEQ, m->seq);
	le64_store(raw + MMP_OFF_TIME, m->time);
	memcpy(raw + MMP_OFF_NODENAME, m->nodename, strnlen(m->nodename, EXT4FS_MMP_NODENAME_LEN));
	memcpy(raw + MMP_OFF_BDEVNAME, m->bdevname, strnlen(m->bdevname, EXT4FS_MMP_BDEVNAME_LEN));
	le16_store(raw + MMP_OFF_INTERVAL, m->check_interval);
	le32_store(raw + MMP_OFF_CHECKSUM, has_csum ? ext4fs_mmp_csum(seed, raw) : 0);
}

int ext4fs_mmp_block_in_range(const struct ext4fs_fs *fs, uint64_t blk)
{
	return blk > fs->geom.first_data_block && blk < fs->geom.blocks_count;
}

int ext4fs_mmp_block_is_metadata(const struct ext4fs_fs *fs, uint64_t blk)
{
	uint64_t super_blk, old_desc, new_desc;
	uint32_t old_count;
	uint32_t g = ext4fs_group_of_block(fs, blk);

	ext4fs_group_meta_location(fs, g, &super_blk, &old_desc, &old_count, &new_desc, NULL);
	if ((super_blk && blk == super_blk) || (new_desc && blk == new_desc) ||
	    (old_desc && blk >= old_desc && blk - old_desc < old_count))
		return 1;
	/* With flex_bg any group's bitmaps and table may lie here. */
	for (uint32_t i = 0; i < fs->geom.group_count; i++) {
		const struct ext4fs_group_desc *gd = &fs->groups[i];
		if (blk == gd->block_bitmap || blk == gd->inode_bitmap ||
		    (blk >= gd->inode_table && blk - gd->inode_table < fs->geom.inode_blocks_per_group))
			return 1;
	}
	return 0;
}

unsigned ext4fs_mmp_check_interval(const struct ext4fs_fs *fs, const struct ext4fs_mmp *m)
{
	unsigned interval = fs->sb.s_mmp_update_interval;

	if (interval < EXT4FS_MMP_MIN_CHECK_INTERVAL)
		interval = EXT4FS_MMP_MIN_CHECK_INTERVAL;
	if (m && m->check_interval > interval)
		interval = m->check_interval;
	return interval;
}

/* The block through the handle's channel, never its cache; raw holds EXT4FS_MMP_SIZE bytes. */
static int read_raw(struct ext4fs_fs *fs, unsigned char *raw)
{
	uint64_t blk = fs->sb.s_mmp_block;
	int err;

	if (!ext4fs_mmp_block_in_range(fs, blk))
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_BAD_BLOCK, "the MMP block %llu is outside the file system",
				       (unsigned long long)blk);
	err = ext4fs_io_read(fs->io, blk * fs->geom.block_size, raw, EXT4FS_MMP_SIZE);
	if (err)
		return ext4fs__fs_fail(fs, err, "reading the MMP block %llu: %s", (unsigned long long)blk,
				       ext4fs_strerror(err));
	return 0;
}

/* Judge a record read: the magic first, then the checksum, as e2fsprogs orders them. */
static int judge(struct ext4fs_fs *fs, const unsigned char *raw, const struct ext4fs_mmp *m)
{
	if (m->magic != EXT4FS_MMP_MAGIC)
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_MAGIC, "the MMP block %llu has magic 0x%x",
				       (unsigned long long)fs->sb.s_mmp_block, m->magic);
	if (fs->geom.has_metadata_csum && m->checksum != ext4fs_mmp_csum(fs->geom.csum_seed, raw))
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_CSUM, "the MMP block %llu has a bad checksum",
				       (unsigned long long)fs->sb.s_mmp_block);
	return 0;
}

int ext4fs_mmp_read(struct ext4fs_fs *fs, struct ext4fs_mmp *out)
{
	unsigned char raw[EXT4FS_MMP_SIZE];
	int err = read_raw(fs, raw);

	if (err)
		return err;
	ext4fs_mmp_decode(raw, out);
	return judge(fs, raw, out);
}

/* Stamp m with the time, this node and the device, and write it straight to the disk. */
static int write_record(struct ext4fs_fs *fs, struct ext4fs_mmp *m)
{
	unsigned char raw[EXT4FS_MMP_SIZE];
	uint64_t blk = fs->sb.s_mmp_block;
	int64_t sec;
	uint32_t nsec;
	int err;

	if (!ext4fs_mmp_block_in_range(fs, blk))
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_BAD_BLOCK, "the MMP block %llu is outside the file system",
				       (unsigned long long)blk);
	ext4fs_now(fs, &sec, &nsec);
	m->time = sec < 0 ? 0 : (uint64_t)sec;
	if (gethostname(m->nodename, sizeof(m->nodename) - 1) != 0)
		m->nodename[0] = '\0';
	m->nodename[sizeof(m->nodename) - 1] = '\0';
	snprintf(m->bdevname, sizeof(m->bdevname), "%s", ext4fs_fs_name(fs) ? ext4fs_fs_name(fs) : "");
	ext4fs_mmp_encode(m, fs->geom.has_metadata_csum, fs->geom.csum_seed, raw);
	/* Whoever reads the block next must see this at once: past any staging, and flushed. */
	if (ext4fs__stage_is(fs->io))
		err = ext4fs__stage_write_through(fs->io, blk * fs->geom.block_size, raw, EXT4FS_MMP_SIZE);
	else
		err = ext4fs_io_write(fs->io, blk * fs->geom.block_size, raw, EXT4FS_MMP_SIZE);
	if (!err)
		err = ext4fs_io_flush(ext4fs__stage_is(fs->io) ? ext4fs__stage_inner(fs->io) : fs->io);
	if (err)
		return ext4fs__fs_fail(fs, err, "writing the MMP block %llu: %s", (unsigned long long)blk,
				       ext4fs_strerror(err));
	return 0;
}

int ext4fs_mmp_reset(struct ext4fs_fs *fs)
{
	struct ext4fs_mmp m;
	int err = ext4fs__fs_require_rw(fs, "resetting the MMP block");

	if (err)
		return err;
	memset(&m, 0, sizeof(m));
	m.magic = EXT4FS_MMP_MAGIC;
	m.seq = EXT4FS_MMP_SEQ_CLEAN;
	m.check_interval = (uint16_t)ext4fs_mmp_check_interval(fs, NULL);
	return write_record(fs, &m);
}

/* -- the claim ------------------------------------------------------------ */

/* What a handle holding the claim keeps: the record as it last wrote it. */
struct mmp_claim {
	struct ext4fs_mmp written;
	int released;
};

/* A sequence no one else is likely to pick: the kernel's and e2fsprogs' are random too. */
static uint32_t new_seq(void)
{
	uint32_t seq;

	do {
		if (getrandom(&seq, sizeof(seq), GRND_NONBLOCK) != (ssize_t)sizeof(seq)) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			seq = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec ^ ((uint32_t)getpid() << 16);
		}
	} while (seq > EXT4FS_MMP_SEQ_MAX);
	return seq;
}

static void wait_for(const struct ext4fs_open_opts *opts, unsigned interval)
{
	unsigned seconds = 2 * interval + 1;

	if (seconds > interval + MMP_MAX_EXTRA_WAIT)
		seconds = interval + MMP_MAX_EXTRA_WAIT;
	if (opts && opts->mmp_sleep) {
		opts->mmp_sleep(opts->mmp_sleep_ctx, seconds);
		return;
	}
	for (unsigned left = seconds; left > 0;)
		left = sleep(left);
}

/* Read the block again and fail unless it still holds seq (someone else is claiming it). */
static int still_ours(struct ext4fs_fs *fs, struct ext4fs_mmp *m, uint32_t seq)
{
	int err = ext4fs_mmp_read(fs, m);

	if (err)
		return err;
	if (m->seq != seq)
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_FAILED,
				       "the MMP block's sequence moved from 0x%x to 0x%x: the file system is in use "
				       "on node \"%s\"", seq, m->seq, m->nodename);
	return 0;
}

/*
 * Give the claim back: the clean sequence, unless the block changed since
 * this handle wrote it (another node took it over: its work must not be
 * declared finished).
 */
static int release(struct ext4fs_fs *fs, struct mmp_claim *c)
{
	struct ext4fs_mmp now;
	int err;

	if (c->released)
		return 0;
	c->released = 1;
	err = ext4fs_mmp_read(fs, &now);
	if (err)
		return err;
	if (now.seq != c->written.seq || now.time != c->written.time ||
	    strcmp(now.nodename, c->written.nodename) != 0 || strcmp(now.bdevname, c->written.bdevname) != 0)
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_CHANGE_ABORT,
				       "the MMP block changed while the file system was open (now node \"%s\", "
				       "sequence 0x%x)", now.nodename, now.seq);
	now.seq = EXT4FS_MMP_SEQ_CLEAN;
	return write_record(fs, &now);
}

/* At close, when ext4fs_close_flush() has not released the claim already. */
static void claim_close(struct ext4fs_fs *fs, void *ctx)
{
	struct mmp_claim *c = ctx;

	/* Everything else must be on the disk before another node may take over. */
	if (!c->released && fs->group_dirty && !fs->flushed_for_close)
		(void)ext4fs_flush(fs);
	(void)release(fs, c);
	free(c);
}

/* ext4fs_close_flush(): the claim is given back after its flush, and a failure reported. */
static int claim_close_flush(struct ext4fs_fs *fs, void *ctx)
{
	return release(fs, ctx);
}

static const struct ext4fs__listener_ops claim_listener = { .close_flush = claim_close_flush,
							    .close = claim_close };

int ext4fs__mmp_start(struct ext4fs_fs *fs, const struct ext4fs_open_opts *opts)
{
	struct ext4fs_mmp m;
	struct mmp_claim *c;
	unsigned interval;
	uint32_t seq;
	int err;

	if (!(fs->sb.s_feature_incompat & EXT4FS_FEATURE_INCOMPAT_MMP) || (opts && opts->mmp_skip))
		return 0;
	if (ext4fs_mmp_block_in_range(fs, fs->sb.s_mmp_block) &&
	    ext4fs_mmp_block_is_metadata(fs, fs->sb.s_mmp_block))
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_BAD_BLOCK, "the MMP block %llu lies on the group metadata",
				       (unsigned long long)fs->sb.s_mmp_block);
	err = ext4fs_mmp_read(fs, &m);
	if (err)
		return err;
	interval = ext4fs_mmp_check_interval(fs, NULL);
	seq = m.seq;
	if (seq == EXT4FS_MMP_SEQ_FSCK)
		return ext4fs__fs_fail(fs, EXT4FS_E_MMP_FSCK_ON, "the MMP block says a checker has the file system "
				       "open on node \"%s\"", m.nodename);
	if (seq != EXT4FS_MMP_SEQ_CLEAN) {
		if (seq > EXT4FS_MMP_SEQ_FSCK)
			return ext4fs__fs_fail(fs, EXT4FS_E_MMP_UNKNOWN_SEQ, "the MMP block has sequence 0x%x", seq);
		/* A live user updates the sequence within its interval: wait past two of them. */
		interval = ext4fs_mmp_check_interval(fs, &m);
		wait_for(opts, interval);
		err = still_ours(fs, &m, seq);
		if (err)
			return err;
	}
	m.seq = seq = new_seq();
	err = write_record(fs, &m);
	if (err)
		return err;
	wait_for(opts, interval);
	err = still_ours(fs, &m, seq);
	if (err)
		return err;
	m.seq = EXT4FS_MMP_SEQ_FSCK;
	err = write_record(fs, &m);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ext4fs__fs_fail(fs, EXT4FS_E_NO_MEMORY, "no memory for the MMP claim");
	c->written = m;
	err = ext4fs__fs_listen(fs, &claim_listener, c);
	if (err)
		free(c);
	return err;
}
