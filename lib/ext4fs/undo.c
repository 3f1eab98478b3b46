/*
 * undo.c - writing and applying undo files in e2undo's format (undo.h).
 *
 * Writing.  The channel saves the file system in regions of one block B
 * (the undo file's block size is the file system's, as e2fsprogs' tools
 * make it), numbered from the start of the file system; a region's number
 * is the file system block its key names.  A set of saved regions says
 * which are in the file.  A change first appends every region it touches
 * that is not saved yet (old contents read from inner), growing the last
 * key when the region follows it and the key stays under 512 blocks; a key
 * block that fills up is written and the next one is placed at the next
 * free block, so the file reads key block, its data, key block, ... as
 * e2undo walks it.  Then one commit makes it durable: the current key
 * block, the header (unfinished) and the superblock copy, and fsync.  Only
 * then does the change go to inner.  A commit is needed even when nothing
 * new was saved if the header on disk says "finished" (after a flush): the
 * file then no longer describes the file system as it will be.
 *
 * With EXT4FS_UNDO_APPEND an existing file is carried on (resume()): its
 * keys are walked as the apply walks them, their regions count as saved,
 * and the writer takes up where the file ends: in the last key block if it
 * has room, else in a new one at the block after the last key's data, the
 * place the writer that filled it had set aside.
 *
 * The header's superblock copy and sb_crc are the file system's superblock
 * at the time of the commit (flush and close write the final one): e2undo
 * refuses to apply the file unless the file system's superblock is still
 * that one, so a file system changed afterwards is never rolled back from
 * under the later change.
 *
 * Applying reads the file twice: a first pass checks every number and every
 * checksum without writing, a second one writes the blocks back (checking
 * the checksums again, since the file is read anew).  Neither pass keeps
 * the keys in memory, so a hostile key count costs reads, not memory, and
 * every loop is bounded by the number of blocks the file holds.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ext4fs/crc.h"
#include "ext4fs/errors.h"
#include "ext4fs/fs.h"
#include "ext4fs/super.h"
#include "ext4fs/undo.h"
#include "extset.h"
#include "io_internal.h"
#include "ondisk_le.h"

#define UNDO_MAGIC            "E2UNDO02"
#define UNDO_KEYBLOCK_MAGIC   0xCADECADEU
#define UNDO_STATE_FINISHED   0x1
#define UNDO_COMPAT_FS_OFFSET 0x1
#define UNDO_MIN_BLOCK        1024U
#define UNDO_MAX_BLOCK        1048576U
#define UNDO_MAX_KEY_BLOCKS   512U     /* a key covers at most this many undo blocks */

#define SB_OFFSET             1024U
#define SB_SIZE               1024U
#define SB_MAGIC_AT           0x38

/* The header, 512 bytes at the start of block 0. */
#define HDR_SIZE              512U
#define HDR_MAGIC             0
#define HDR_NUM_KEYS          8
#define HDR_SUPER_OFFSET      16
#define HDR_KEY_OFFSET        24
#define HDR_BLOCK_SIZE        32
#define HDR_FS_BLOCK_SIZE     36
#define HDR_SB_CRC            40
#define HDR_STATE             44
#define HDR_F_COMPAT          48
#define HDR_F_INCOMPAT        52
#define HDR_F_ROCOMPAT        56
#define HDR_FS_OFFSET         64
#define HDR_CRC               508

/* A key block: magic, crc, 8 reserved bytes, then keys of 16 bytes. */
#define KB_MAGIC              0
#define KB_CRC                4
#define KB_KEYS               16
#define KEY_SIZE              16
#define KEY_FSBLK             0
#define KEY_CRC               8
#define KEY_LEN               12

/* Where the writer puts things (the same places e2fsprogs uses). */
#define SUPER_BLK             1
#define FIRST_KEY_BLK         2

struct undo_channel {
	struct ext4fs_io *inner;
	char *path;
	int fd;
	uint32_t block_size;
	uint64_t fs_offset;
	struct extset saved;       /* region numbers already in the file */
	unsigned char *keyb;       /* the key block being filled */
	unsigned char *buf;        /* one block of old contents */
	uint64_t super_blk;        /* where the superblock copy goes */
	uint64_t first_key_blk;    /* where the first key block is */
	uint64_t key_blk;          /* where keyb goes */
	uint64_t next_blk;         /* next free block of the file */
	uint64_t num_keys;
	size_t keys_in_block;
	size_t keys_per_block;
	int header_finished;       /* the header on disk says finished */
	int failed;                /* the error that stopped the channel, or 0 */
};

/* The undo file's sizes were checked: a read that ends early means it shrank under us. */
static int pread_all(int fd, void *buf, size_t len, uint64_t offset)
{
	int err = ext4fs__pread_full(fd, buf, len, offset);

	return err == EXT4FS_E_SHORT_READ ? EXT4FS_E_UNDO_CORRUPT : err;
}

static uint64_t div_round_up(uint64_t n, uint64_t d)
{
	return n / d + (n % d != 0);
}

/* -- Reading an undo file --------------------------------------------------- */

struct undo_file {
	int fd;
	uint64_t file_size;
	uint64_t file_blocks;      /* blocks the file holds, the last one possibly partial */
	uint32_t block_size;
	uint32_t fs_block_size;
	uint64_t num_keys;
	uint64_t super_blk;
	uint64_t key_blk;
	uint32_t sb_crc;
	uint32_t state;
	uint32_t compat;
	uint64_t fs_offset;
	unsigned char *keyb;       /* after walk_keys(): the last key block read */
	unsigned char *buf;
	uint64_t last_key_blk;     /* after walk_keys(): where the last key block is, */
	size_t last_keys;          /* how many keys it holds, */
	uint64_t end_blk;          /* and the block after the last key's data */
};

/* What walk_keys() calls for each key whose numbers are in range; data_blk is where its data starts. */
typedef int (*key_fn)(struct undo_file *uf, void *ctx, const unsigned char *key, uint64_t data_blk);

/* Read and check the header; res (may be NULL) gets what it says. */
static int read_header(struct undo_file *uf, struct ext4fs_undo_result *res)
{
	unsigned char hdr[HDR_SIZE];
	uint32_t incompat, rocompat;
	int err;

	if (uf->file_size < HDR_SIZE)
		return EXT4FS_E_UNDO_CORRUPT;
	if ((err = pread_all(uf->fd, hdr, sizeof(hdr), 0)))
		return err;
	if (memcmp(hdr + HDR_MAGIC, UNDO_MAGIC, 8) != 0)
		return EXT4FS_E_UNDO_CORRUPT;
	if (le32_load(hdr + HDR_CRC) != ext4fs_crc32c(~0U, hdr, HDR_CRC))
		return EXT4FS_E_UNDO_CORRUPT;
	uf->num_keys = le64_load(hdr + HDR_NUM_KEYS);
	uf->super_blk = le64_load(hdr + HDR_SUPER_OFFSET);
	uf->key_blk = le64_load(hdr + HDR_KEY_OFFSET);
	uf->block_size = le32_load(hdr + HDR_BLOCK_SIZE);
	uf->fs_block_size = le32_load(hdr + HDR_FS_BLOCK_SIZE);
	uf->sb_crc = le32_load(hdr + HDR_SB_CRC);
	uf->state = le32_load(hdr + HDR_STATE);
	incompat = le32_load(hdr + HDR_F_INCOMPAT);
	rocompat = le32_load(hdr + HDR_F_ROCOMPAT);
	uf->compat = le32_load(hdr + HDR_F_COMPAT);
	uf->fs_offset = (uf->compat & UNDO_COMPAT_FS_OFFSET) ? le64_load(hdr + HDR_FS_OFFSET) : 0;
	if (res) {
		res->keys = uf->num_keys;
		res->block_size = uf->block_size;
		res->fs_block_size = uf->fs_block_size;
		res->fs_offset = uf->fs_offset;
		res->finished = (uf->state & UNDO_STATE_FINISHED) != 0;
	}
	if (uf->block_size < UNDO_MIN_BLOCK || uf->block_size > UNDO_MAX_BLOCK ||
	    uf->fs_block_size < UNDO_MIN_BLOCK || uf->fs_block_size > UNDO_MAX_BLOCK)
		return EXT4FS_E_UNDO_CORRUPT;
	if (incompat || rocompat)
		return EXT4FS_E_UNSUPP_FEATURE;
	uf->file_blocks = div_round_up(uf->file_size, uf->block_size);
	/* Each key needs a block of data of its own. */
	if (uf->num_keys > uf->file_blocks)
		return EXT4FS_E_UNDO_CORRUPT;
	if (uf->super_blk >= uf->file_blocks ||
	    uf->super_blk * uf->block_size + SB_SIZE > uf->file_size)
		return EXT4FS_E_UNDO_CORRUPT;
	if (uf->num_keys && uf->key_blk >= uf->file_blocks)
		return EXT4FS_E_UNDO_CORRUPT;
	return 0;
}

/* The file system's superblock must be the copy the undo file holds, magic restored. */
static int check_super(struct undo_file *uf, struct ext4fs_io *target)
{
	unsigned char fs_sb[SB_SIZE], copy[SB_SIZE];
	int err;

	if ((err = ext4fs_io_read(target, SB_OFFSET, fs_sb, SB_SIZE)))
		return err;
	if ((err = pread_all(uf->fd, copy, SB_SIZE, uf->super_blk * uf->block_size)))
		return err;
	copy[SB_MAGIC_AT] = (unsigned char)~copy[SB_MAGIC_AT];
	copy[SB_MAGIC_AT + 1] = (unsigned char)~copy[SB_MAGIC_AT + 1];
	if (memcmp(fs_sb, copy, SB_SIZE) != 0)
		return EXT4FS_E_UNDO_WRONG_FS;
	if (ext4fs_crc32c(~0U, copy, SB_SIZE) != uf->sb_crc)
		return EXT4FS_E_UNDO_CORRUPT;
	return 0;
}

/*
 * Walk every key: check each key block's magic and checksum and each key's
 * size and that its data lies in the file, then call fn.  Bounded by the
 * key count, which read_header() bounded by the file's size.
 */
static int walk_keys(struct undo_file *uf, key_fn fn, void *ctx)
{
	size_t keys_per_block = uf->block_size / KEY_SIZE - 1;
	uint64_t i, lblk = uf->key_blk;
	int err;

	uf->last_key_blk = uf->key_blk;
	uf->last_keys = 0;
	for (i = 0; i < uf->num_keys; ) {
		uint32_t stored;
		size_t j;

		if (lblk >= uf->file_blocks || (lblk + 1) * uf->block_size > uf->file_size)
			return EXT4FS_E_UNDO_CORRUPT;
		if ((err = pread_all(uf->fd, uf->keyb, uf->block_size, lblk * uf->block_size)))
			return err;
		if (le32_load(uf->keyb + KB_MAGIC) != UNDO_KEYBLOCK_MAGIC)
			return EXT4FS_E_UNDO_CORRUPT;
		stored = le32_load(uf->keyb + KB_CRC);
		le32_store(uf->keyb + KB_CRC, 0);
		if (ext4fs_crc32c(~0U, uf->keyb, uf->block_size) != stored)
			return EXT4FS_E_UNDO_CORRUPT;
		uf->last_key_blk = lblk++;
		for (j = 0; j < keys_per_block && i < uf->num_keys; j++, i++) {
			const unsigned char *key = uf->keyb + KB_KEYS + j * KEY_SIZE;
			uint32_t len = le32_load(key + KEY_LEN);

			if (len == 0 || len > UNDO_MAX_KEY_BLOCKS * uf->block_size)
				return EXT4FS_E_UNDO_CORRUPT;
			if (lblk > uf->file_blocks || lblk * uf->block_size + len > uf->file_size)
				return EXT4FS_E_UNDO_CORRUPT;
			if ((err = fn(uf, ctx, key, lblk)))
				return err;
			lblk += div_round_up(len, uf->block_size);
		}
		uf->last_keys = j;
	}
	uf->end_blk = lblk;
	return 0;
}

/* -- Writing -------------------------------------------------------------- */

/* Seal the key block being filled (magic, checksum) and write it at its place. */
static int keyblock_write(struct undo_channel *uc)
{
	le32_store(uc->keyb + KB_MAGIC, UNDO_KEYBLOCK_MAGIC);
	le32_store(uc->keyb + KB_CRC, 0);
	le32_store(uc->keyb + KB_CRC, ext4fs_crc32c(~0U, uc->keyb, uc->block_size));
	return ext4fs__pwrite_full(uc->fd, uc->keyb, uc->block_size, uc->key_blk * uc->block_size);
}

/*
 * Write the current key block (when it has keys), the header and the
 * superblock copy; with finished the header says so.  Then fsync.
 */
static int commit(struct undo_channel *uc, int finished)
{
	unsigned char hdr[HDR_SIZE];
	unsigned char sb[SB_SIZE];
	int err;

	if (uc->keys_in_block && (err = keyblock_write(uc)))
		return err;
	if ((err = ext4fs_io_read(uc->inner, SB_OFFSET, sb, SB_SIZE)))
		return err;
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr + HDR_MAGIC, UNDO_MAGIC, 8);
	le64_store(hdr + HDR_NUM_KEYS, uc->num_keys);
	le64_store(hdr + HDR_SUPER_OFFSET, uc->super_blk);
	le64_store(hdr + HDR_KEY_OFFSET, uc->first_key_blk);
	le32_store(hdr + HDR_BLOCK_SIZE, uc->block_size);
	le32_store(hdr + HDR_FS_BLOCK_SIZE, uc->block_size);
	le32_store(hdr + HDR_SB_CRC, ext4fs_crc32c(~0U, sb, SB_SIZE));
	le32_store(hdr + HDR_STATE, finished ? UNDO_STATE_FINISHED : 0);
	le32_store(hdr + HDR_F_COMPAT, uc->fs_offset ? UNDO_COMPAT_FS_OFFSET : 0);
	le64_store(hdr + HDR_FS_OFFSET, uc->fs_offset);
	le32_store(hdr + HDR_CRC, ext4fs_crc32c(~0U, hdr, HDR_CRC));
	if ((err = ext4fs__pwrite_full(uc->fd, hdr, sizeof(hdr), 0)))
		return err;
	sb[SB_MAGIC_AT] = (unsigned char)~sb[SB_MAGIC_AT];
	sb[SB_MAGIC_AT + 1] = (unsigned char)~sb[SB_MAGIC_AT + 1];
	if ((err = ext4fs__pwrite_full(uc->fd, sb, sizeof(sb), uc->super_blk * uc->block_size)))
		return err;
	if (fsync(uc->fd) < 0)
		return -errno;
	uc->header_finished = finished;
	return 0;
}

/* Append region r's old contents (len bytes, 0 < len <= block size) as a key. */
static int save_region(struct undo_channel *uc, uint64_t r, uint32_t len)
{
	unsigned char *key = NULL;
	uint32_t key_len = 0;
	int err;

	if ((err = ext4fs_io_read(uc->inner, r * uc->block_size, uc->buf, len)))
		return err;
	if ((err = ext4fs__pwrite_full(uc->fd, uc->buf, len, uc->next_blk * uc->block_size)))
		return err;
	uc->next_blk++;
	if (uc->keys_in_block) {
		key = uc->keyb + KB_KEYS + (uc->keys_in_block - 1) * KEY_SIZE;
		key_len = le32_load(key + KEY_LEN);
	}
	if (key && le64_load(key + KEY_FSBLK) + div_round_up(key_len, uc->block_size) == r &&
	    (uint64_t)key_len + len < (uint64_t)UNDO_MAX_KEY_BLOCKS * uc->block_size) {
		le32_store(key + KEY_CRC, ext4fs_crc32c(le32_load(key + KEY_CRC), uc->buf, len));
		le32_store(key + KEY_LEN, key_len + len);
	} else {
		key = uc->keyb + KB_KEYS + uc->keys_in_block * KEY_SIZE;
		le64_store(key + KEY_FSBLK, r);
		le32_store(key + KEY_CRC, ext4fs_crc32c(~0U, uc->buf, len));
		le32_store(key + KEY_LEN, len);
		uc->keys_in_block++;
		uc->num_keys++;
	}
	if ((err = ext4fs__extset_add(&uc->saved, r, 1)))
		return err;
	if (uc->keys_in_block == uc->keys_per_block) {
		/* Full: written now, the next key block takes the next free block. */
		if ((err = keyblock_write(uc)))
			return err;
		memset(uc->keyb, 0, uc->block_size);
		uc->keys_in_block = 0;
		uc->key_blk = uc->next_blk++;
	}
	return 0;
}

/* Save what [offset, offset+len) would overwrite and make it durable. */
static int save_range(struct undo_channel *uc, uint64_t offset, uint64_t len)
{
	uint64_t r, last, size = uc->inner->size;
	int saved = 0, err;

	if (uc->failed)
		return uc->failed;
	if (len == 0 || offset > size || len > size - offset)
		return EXT4FS_E_OUT_OF_IMAGE;
	last = (offset + len - 1) / uc->block_size;
	for (r = offset / uc->block_size; r <= last; r++) {
		uint64_t start = r * uc->block_size;
		uint64_t n = size - start < uc->block_size ? size - start : uc->block_size;

		if (!ext4fs__extset_is_clear(&uc->saved, r, 1))
			continue;
		if ((err = save_region(uc, r, (uint32_t)n)))
			goto fail;
		saved = 1;
	}
	if ((saved || uc->header_finished) && (err = commit(uc, 0)))
		goto fail;
	return 0;
fail:
	uc->failed = err;
	return err;
}

static int undo_read(struct ext4fs_io *io, uint64_t offset, void *buf, size_t len)
{
	struct undo_channel *uc = io->priv;

	return ext4fs_io_read(uc->inner, offset, buf, len);
}

static int undo_write(struct ext4fs_io *io, uint64_t offset, const void *buf, size_t len)
{
	struct undo_channel *uc = io->priv;
	int err;

	if (len && (err = save_range(uc, offset, len)))
		return err;
	return ext4fs_io_write(uc->inner, offset, buf, len);
}

static int undo_discard(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct undo_channel *uc = io->priv;
	int err;

	if (len && (err = save_range(uc, offset, len)))
		return err;
	return ext4fs_io_discard(uc->inner, offset, len);
}

static int undo_zeroout(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct undo_channel *uc = io->priv;
	int err;

	if (len && (err = save_range(uc, offset, len)))
		return err;
	return ext4fs_io_zeroout(uc->inner, offset, len);
}

static int undo_flush(struct ext4fs_io *io)
{
	struct undo_channel *uc = io->priv;
	int err;

	if ((err = ext4fs_io_flush(uc->inner)))
		return err;
	if (uc->failed)
		return uc->failed;
	if ((err = commit(uc, 1)))
		uc->failed = err;
	return err;
}

static void undo_readahead(struct ext4fs_io *io, uint64_t offset, uint64_t len)
{
	struct undo_channel *uc = io->priv;

	ext4fs_io_readahead(uc->inner, offset, len);
}

static void channel_free(struct undo_channel *uc)
{
	ext4fs__extset_free(&uc->saved);
	free(uc->keyb);
	free(uc->buf);
	free(uc->path);
	free(uc);
}

/*
 * The close operation cannot report an error: a failed final commit leaves
 * the file as its last commit made it (marked unfinished, which e2undo
 * still applies, asking for a check afterwards).
 */
static void undo_close(struct ext4fs_io *io)
{
	struct undo_channel *uc = io->priv;

	if (!uc->failed && ext4fs_io_flush(uc->inner) == 0)
		(void)commit(uc, 1);
	close(uc->fd);
	ext4fs_io_close(uc->inner);
	channel_free(uc);
}

static const struct ext4fs_io_ops undo_ops = {
	undo_read, undo_write, undo_flush, undo_readahead, undo_close, undo_discard, undo_zeroout,
};

/* fsync the directory holding path, so that the new file's name is durable too. */
static int sync_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, err = 0;

	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return EXT4FS_E_NO_MEMORY;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)
		err = -errno;
	close(fd);
	return err;
}

/* The file system's block size, from the superblock inner holds. */
static int fs_block_size(struct ext4fs_io *inner, uint32_t *block_size)
{
	unsigned char raw[SB_SIZE];
	struct ext4fs_super sb;
	int err;

	if ((err = ext4fs_io_read(inner, SB_OFFSET, raw, sizeof(raw))))
		return err;
	ext4fs_super_decode(&sb, raw);
	if (sb.s_magic != EXT4FS_SUPER_MAGIC)
		return EXT4FS_E_BAD_MAGIC;
	/* 64 KiB is ext4's largest block, far under the format's 1 MiB. */
	if (sb.s_log_block_size > 6)
		return EXT4FS_E_CORRUPT_SUPER;
	*block_size = 1024U << sb.s_log_block_size;
	return 0;
}

/* Mark a key of the file being resumed as saved. */
static int resume_key(struct undo_file *uf, void *ctx, const unsigned char *key, uint64_t data_blk)
{
	struct undo_channel *uc = ctx;
	uint64_t fsblk = le64_load(key + KEY_FSBLK);
	uint64_t blocks = div_round_up(le32_load(key + KEY_LEN), uf->block_size);
	uint64_t fs_blocks = div_round_up(uc->inner->size, uc->block_size);

	(void)data_blk;
	if (fsblk > fs_blocks || blocks > fs_blocks - fsblk)
		return EXT4FS_E_UNDO_CORRUPT;
	return ext4fs__extset_add(&uc->saved, fsblk, blocks);
}

/*
 * Carry on with an undo file made against this file system as it now is
 * (e2fsprogs' tools do so with -z FILE): its keys' blocks count as saved,
 * new data goes after the last key's, in the last key block while it has
 * room.  The superblock copy and the first key block must come before the
 * data, so that appending never writes over them.
 */
static int resume(struct undo_channel *uc, uint64_t file_size)
{
	struct undo_file uf;
	int err;

	memset(&uf, 0, sizeof(uf));
	uf.fd = uc->fd;
	uf.file_size = file_size;
	uf.keyb = uc->keyb;
	uf.buf = uc->buf;
	if ((err = read_header(&uf, NULL)))
		return err;
	if (uf.block_size != uc->block_size || uf.fs_block_size != uc->block_size)
		return EXT4FS_E_UNDO_WRONG_FS;
	if (uf.super_blk == 0 || uf.key_blk <= uf.super_blk)
		return EXT4FS_E_UNDO_CORRUPT;
	if ((err = check_super(&uf, uc->inner)) || (err = walk_keys(&uf, resume_key, uc)))
		return err;
	uc->num_keys = uf.num_keys;
	uc->super_blk = uf.super_blk;
	uc->first_key_blk = uf.key_blk;
	uc->fs_offset = uf.fs_offset;
	if (uf.last_keys == 0) {
		memset(uc->keyb, 0, uc->block_size);
		uc->key_blk = uf.key_blk;
		uc->next_blk = uf.key_blk + 1;
	} else if (uf.last_keys == uc->keys_per_block) {
		memset(uc->keyb, 0, uc->block_size);
		uc->key_blk = uf.end_blk;
		uc->next_blk = uf.end_blk + 1;
	} else {
		/* uc->keyb holds the last key block, as walk_keys() left it. */
		uc->keys_in_block = uf.last_keys;
		uc->key_blk = uf.last_key_blk;
		uc->next_blk = uf.end_blk;
	}
	return 0;
}

int ext4fs_io_undo_wrap(struct ext4fs_io *inner, const char *undo_path, unsigned flags,
			struct ext4fs_io **out)
{
	struct undo_channel *uc;
	struct ext4fs_io *io = NULL;
	struct stat st;
	uint32_t block_size;
	int err, i, created = 0;

	*out = NULL;
	if ((flags & EXT4FS_UNDO_OVERWRITE) && (flags & EXT4FS_UNDO_APPEND))
		return EXT4FS_E_INVALID_ARG;
	if ((err = fs_block_size(inner, &block_size)))
		return err;
	uc = calloc(1, sizeof(*uc));
	if (!uc)
		return EXT4FS_E_NO_MEMORY;
	uc->fd = -1;
	uc->inner = inner;
	uc->block_size = block_size;
	uc->keys_per_block = block_size / KEY_SIZE - 1;
	uc->super_blk = SUPER_BLK;
	uc->first_key_blk = FIRST_KEY_BLK;
	uc->key_blk = FIRST_KEY_BLK;
	uc->next_blk = FIRST_KEY_BLK + 1;
	uc->keyb = calloc(1, block_size);
	uc->buf = calloc(1, block_size);
	uc->path = strdup(undo_path);
	io = calloc(1, sizeof(*io));
	if (io)
		io->name = strdup(inner->name ? inner->name : "(undo)");
	if (!uc->keyb || !uc->buf || !uc->path || !io || !io->name) {
		err = EXT4FS_E_NO_MEMORY;
		goto fail;
	}
	if ((flags & EXT4FS_UNDO_OVERWRITE) && unlink(undo_path) < 0 && errno != ENOENT) {
		err = -errno;
		goto fail;
	}
	uc->fd = open(undo_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	created = uc->fd >= 0;
	if (uc->fd < 0 && errno == EEXIST && (flags & EXT4FS_UNDO_APPEND))
		uc->fd = open(undo_path, O_RDWR | O_CLOEXEC);
	if (uc->fd < 0) {
		err = -errno;
		goto fail;
	}
	if (fstat(uc->fd, &st) < 0) {
		err = -errno;
		goto fail_unlink;
	}
	if (st.st_size > 0) {
		if ((err = resume(uc, (uint64_t)st.st_size)))
			goto fail_unlink;
	} else {
		/* Blocks 0-2 exist from the start (header, superblock copy, first key block). */
		for (i = 0; i <= FIRST_KEY_BLK; i++)
			if ((err = ext4fs__pwrite_full(uc->fd, uc->keyb, block_size, (uint64_t)i * block_size)))
				goto fail_unlink;
	}
	if ((err = commit(uc, 0)) || (err = sync_parent(undo_path)))
		goto fail_unlink;
	io->ops = &undo_ops;
	io->priv = uc;
	io->size = inner->size;
	io->discard_zeroes = inner->discard_zeroes;
	io->is_regular_file = inner->is_regular_file;
	*out = io;
	return 0;

fail_unlink:
	if (created)
		unlink(undo_path);
fail:
	if (uc->fd >= 0)
		close(uc->fd);
	if (io)
		free(io->name);
	free(io);
	channel_free(uc);
	return err;
}

int ext4fs_io_undo_set_fs_offset(struct ext4fs_io *undo, uint64_t fs_offset)
{
	struct undo_channel *uc;

	if (!undo || undo->ops != &undo_ops)
		return EXT4FS_E_INVALID_ARG;
	uc = undo->priv;
	uc->fs_offset = fs_offset;
	return 0;
}

/* -- Applying --------------------------------------------------------------- */

struct apply_ctx {
	struct ext4fs_io *target;
	int write;
	uint64_t bytes;
};

/* Check a key's place in the target and its data's checksum; write the data back when asked. */
static int apply_key(struct undo_file *uf, void *ctx, const unsigned char *key, uint64_t data_blk)
{
	struct apply_ctx *ac = ctx;
	uint64_t fsblk = le64_load(key + KEY_FSBLK), done;
	uint32_t crc = ~0U, len = le32_load(key + KEY_LEN);
	int err;

	if (fsblk > ac->target->size / uf->fs_block_size ||
	    ac->target->size - fsblk * uf->fs_block_size < len)
		return EXT4FS_E_UNDO_CORRUPT;
	for (done = 0; done < len; ) {
		uint32_t n = len - done < uf->block_size ? (uint32_t)(len - done) : uf->block_size;

		if ((err = pread_all(uf->fd, uf->buf, n, data_blk * uf->block_size + done)))
			return err;
		crc = ext4fs_crc32c(crc, uf->buf, n);
		if (ac->write && (err = ext4fs_io_write(ac->target, fsblk * uf->fs_block_size + done, uf->buf, n)))
			return err;
		done += n;
	}
	if (crc != le32_load(key + KEY_CRC))
		return EXT4FS_E_UNDO_CORRUPT;
	ac->bytes += len;
	return 0;
}

/* Clear the primary superblock's "clean" state, as e2undo does after an incomplete or forced undo. */
static int mark_unclean(struct ext4fs_io *target, int *marked)
{
	unsigned char raw[SB_SIZE];
	struct ext4fs_super sb;
	int err;

	if ((err = ext4fs_io_read(target, SB_OFFSET, raw, SB_SIZE)))
		return err;
	ext4fs_super_decode(&sb, raw);
	if (sb.s_magic != EXT4FS_SUPER_MAGIC)
		return 0;
	sb.s_state &= (uint16_t)~EXT4FS_STATE_VALID;
	ext4fs_super_encode(&sb, raw);
	if (sb.s_feature_ro_compat & EXT4FS_FEATURE_RO_COMPAT_METADATA_CSUM) {
		sb.s_checksum = ext4fs_super_csum(raw);
		ext4fs_super_encode(&sb, raw);
	}
	if ((err = ext4fs_io_write(target, SB_OFFSET, raw, SB_SIZE)) || (err = ext4fs_io_flush(target)))
		return err;
	*marked = 1;
	return 0;
}

int ext4fs_undo_apply(const char *undo_path, struct ext4fs_io *target, unsigned flags,
		      struct ext4fs_undo_result *result)
{
	struct ext4fs_undo_result local;
	struct apply_ctx ac = { target, 0, 0 };
	struct undo_file uf;
	struct stat st;
	int err;

	if (!result)
		result = &local;
	memset(result, 0, sizeof(*result));
	memset(&uf, 0, sizeof(uf));
	uf.fd = open(undo_path, O_RDONLY | O_CLOEXEC);
	if (uf.fd < 0)
		return -errno;
	if (fstat(uf.fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EXT4FS_E_UNDO_CORRUPT;
		goto out;
	}
	uf.file_size = (uint64_t)st.st_size;
	if ((err = read_header(&uf, result)))
		goto out;
	if (!(flags & EXT4FS_UNDO_APPLY_FORCE) && (err = check_super(&uf, target)))
		goto out;
	uf.keyb = malloc(uf.block_size);
	uf.buf = malloc(uf.block_size);
	if (!uf.keyb || !uf.buf) {
		err = EXT4FS_E_NO_MEMORY;
		goto out;
	}
	if ((err = walk_keys(&uf, apply_key, &ac)))
		goto out;
	result->bytes = ac.bytes;
	if (flags & EXT4FS_UNDO_APPLY_DRY_RUN)
		goto out;
	ac.write = 1;
	ac.bytes = 0;
	if ((err = walk_keys(&uf, apply_key, &ac)) || (err = ext4fs_io_flush(target)))
		goto out;
	if (!result->finished || (flags & EXT4FS_UNDO_APPLY_FORCE))
		err = mark_unclean(target, &result->marked_unclean);
out:
	free(uf.keyb);
	free(uf.buf);
	close(uf.fd);
	return err;
}
