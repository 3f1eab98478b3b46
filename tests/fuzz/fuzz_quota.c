/*
 * fuzz_quota.c - the quota file decoder (ext4fs_quota_decode) against
 * hostile quota files.
 *
 * The input is a quota file's bytes.  It is decoded as each quota type
 * (only the type whose magic it carries can pass the header).  Nothing may
 * be read outside the input; a bad file must end in an error.  What
 * decodes must survive a round trip: encoded again and decoded, it gives
 * the same records (the process aborts otherwise, which the fuzzer
 * reports).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "ext4fs/errors.h"
#include "ext4fs/quota.h"
#include "fuzz_walk.h"

static int same(const struct ext4fs_quota_record *a, const struct ext4fs_quota_record *b)
{
	return a->id == b->id && a->space == b->space && a->inodes == b->inodes && a->block_hard == b->block_hard &&
	       a->block_soft == b->block_soft && a->inode_hard == b->inode_hard && a->inode_soft == b->inode_soft &&
	       a->block_grace_end == b->block_grace_end && a->inode_grace_end == b->inode_grace_end;
}

static void round_trip(enum ext4fs_quota_type type, const struct ext4fs_quota_file *q)
{
	struct ext4fs_quota_file back;
	unsigned char *buf;
	size_t len;

	if (ext4fs_quota_encode(type, q, &buf, &len))
		return;         /* out of memory only: the records are sorted and unique */
	if (ext4fs_quota_decode(buf, len, type, &back, NULL, 0) || back.count != q->count ||
	    back.block_grace != q->block_grace || back.inode_grace != q->inode_grace || back.flags != q->flags)
		abort();
	for (size_t i = 0; i < q->count; i++)
		if (!same(&back.recs[i], &q->recs[i]))
			abort();
	ext4fs_quota_file_free(&back);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int t = 0; t < EXT4FS_QUOTA_TYPES; t++) {
		struct ext4fs_quota_file q;
		char why[160];
		if (ext4fs_quota_decode(data, size, (enum ext4fs_quota_type)t, &q, why, sizeof(why)) == 0)
			round_trip((enum ext4fs_quota_type)t, &q);
		ext4fs_quota_file_free(&q);
	}
	return 0;
}
