/*
 * jreplay.c - show what a file system's journal holds and replay it.
 *
 *   jreplay [-n] [-v] IMAGE
 *     -n   only scan and report: nothing is written
 *     -v   list the log block by block (descriptor, revoke and commit blocks,
 *          refused tags), like debugfs's logdump
 *
 * Prints a summary: the journal's geometry and features, the first and
 * last complete transaction, where and why the log ends, the numbers of
 * descriptor, data and revoke blocks, and how many blocks are (or would be)
 * replayed, revoked or refused.  Without -n the log is replayed, the
 * journal marked empty and the needs_recovery flag cleared.
 *
 * Exit status: 0 done (or nothing to do), 1 done but the journal was
 * damaged (refused tags, bad checksums, a failed commit, pending fast
 * commits that are not replayed), 2 the journal could not be read or
 * replayed (the message names the field or block).
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ext4fs/fs.h"
#include "ext4fs/journal.h"
#include "ext4fs/super.h"

static const char *end_reason(enum ext4fs_journal_end e)
{
	switch (e) {
	case EXT4FS_JOURNAL_END_EMPTY:
		return "the journal is empty";
	case EXT4FS_JOURNAL_END_NO_MAGIC:
		return "no jbd2 magic";
	case EXT4FS_JOURNAL_END_SEQUENCE:
		return "block of another transaction";
	case EXT4FS_JOURNAL_END_UNKNOWN_TYPE:
		return "unknown block type";
	case EXT4FS_JOURNAL_END_COMMIT_CSUM:
		return "commit block checksum error";
	case EXT4FS_JOURNAL_END_STALE:
		return "stale block from an earlier cycle";
	case EXT4FS_JOURNAL_END_WRAPPED:
		return "uncommitted transaction fills the log";
	}
	return "?";
}

static void print_event(const struct ext4fs_journal_event *ev, void *arg)
{
	(void)arg;
	switch (ev->kind) {
	case EXT4FS_JOURNAL_EV_DESCRIPTOR:
		printf("  block %u: transaction %u, descriptor block, %u tags\n", ev->log_block, ev->tid,
		       ev->count);
		break;
	case EXT4FS_JOURNAL_EV_REVOKE:
		printf("  block %u: transaction %u, revoke block, %u records\n", ev->log_block, ev->tid,
		       ev->count);
		break;
	case EXT4FS_JOURNAL_EV_COMMIT:
		printf("  block %u: transaction %u, commit block (time %llu)\n", ev->log_block, ev->tid,
		       (unsigned long long)ev->commit_sec);
		break;
	case EXT4FS_JOURNAL_EV_BAD_BLOCK_TAG:
		printf("  block %u: transaction %u, tag for block %llu refused: outside the file system or in the journal\n",
		       ev->log_block, ev->tid, (unsigned long long)ev->fs_block);
		break;
	case EXT4FS_JOURNAL_EV_BAD_BLOCK_CSUM:
		printf("  block %u: transaction %u, data for block %llu fails its checksum: skipped\n",
		       ev->log_block, ev->tid, (unsigned long long)ev->fs_block);
		break;
	case EXT4FS_JOURNAL_EV_UNREADABLE:
		printf("  block %u: transaction %u, data for block %llu cannot be read: skipped\n",
		       ev->log_block, ev->tid, (unsigned long long)ev->fs_block);
		break;
	}
}

static void print_features(const struct ext4fs_journal_sb *jsb)
{
	static const struct { uint32_t bit; const char *name; } incompat[] = {
		{ EXT4FS_JBD2_INCOMPAT_REVOKE, "revoke" },
		{ EXT4FS_JBD2_INCOMPAT_64BIT, "64bit" },
		{ EXT4FS_JBD2_INCOMPAT_ASYNC_COMMIT, "async_commit" },
		{ EXT4FS_JBD2_INCOMPAT_CSUM_V2, "checksum_v2" },
		{ EXT4FS_JBD2_INCOMPAT_CSUM_V3, "checksum_v3" },
		{ EXT4FS_JBD2_INCOMPAT_FAST_COMMIT, "fast_commit" },
	};
	int any = 0;

	printf("Journal features:");
	if (jsb->feature_compat & EXT4FS_JBD2_COMPAT_CHECKSUM) {
		printf(" checksum");
		any = 1;
	}
	for (size_t i = 0; i < sizeof(incompat) / sizeof(incompat[0]); i++)
		if (jsb->feature_incompat & incompat[i].bit) {
			printf(" %s", incompat[i].name);
			any = 1;
		}
	printf("%s\n", any ? "" : " (none)");
}

static void print_info(const struct ext4fs_journal_info *in, int replayed)
{
	if (in->end_reason == EXT4FS_JOURNAL_END_EMPTY && in->start_block == 0) {
		printf("Journal is empty (s_start 0): nothing to replay\n");
		return;
	}
	printf("Log starts at block %u, transaction %u\n", in->start_block, in->first_tid);
	if (in->transactions)
		printf("Transactions %u to %u complete (%u)\n", in->first_tid, in->end_tid - 1,
		       in->transactions);
	else
		printf("No complete transaction\n");
	printf("Log ends before transaction %u, at block %u: %s\n", in->end_tid, in->head_block,
	       end_reason(in->end_reason));
	printf("Descriptor blocks: %llu, data blocks: %llu, revoke blocks: %llu (%llu records)\n",
	       (unsigned long long)in->descriptor_blocks, (unsigned long long)in->data_blocks,
	       (unsigned long long)in->revoke_blocks, (unsigned long long)in->revoke_records);
	printf("Blocks %s: %llu, revoked: %llu, refused tags: %llu, bad checksums: %llu, unreadable: %llu\n",
	       replayed ? "replayed" : "to replay", (unsigned long long)in->replayed,
	       (unsigned long long)in->revoked, (unsigned long long)in->bad_block_tags,
	       (unsigned long long)in->bad_block_csums, (unsigned long long)in->unreadable_blocks);
	if (in->failed_commit)
		printf("Transaction %u failed its commit checksum: it and later ones are dropped\n",
		       in->failed_commit);
	if (in->journal_errno)
		printf("The journal recorded error %d\n", in->journal_errno);
}

static int damaged(const struct ext4fs_journal_info *in)
{
	return in->bad_block_tags || in->bad_block_csums || in->unreadable_blocks ||
	       in->failed_commit || in->fc_pending || in->journal_errno;
}

int main(int argc, char **argv)
{
	struct ext4fs_open_opts opts = { 0 };
	struct ext4fs_journal_info info;
	struct ext4fs_journal *j = NULL;
	struct ext4fs_fs *fs = NULL;
	const struct ext4fs_journal_sb *jsb;
	int scan_only = 0, verbose = 0, opt, err, status = 2;
	char msg[256];

	while ((opt = getopt(argc, argv, "nv")) != -1) {
		switch (opt) {
		case 'n':
			scan_only = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: jreplay [-n] [-v] IMAGE\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: jreplay [-n] [-v] IMAGE\n");
		return 2;
	}
	opts.flags = scan_only ? 0 : EXT4FS_OPEN_RECOVERY;
	err = ext4fs_open(argv[optind], &opts, &fs, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "jreplay: %s: %s\n", argv[optind], msg);
		return 2;
	}
	printf("Filesystem needs recovery: %s\n",
	       ext4fs_has_incompat(fs, EXT4FS_FEATURE_INCOMPAT_RECOVER) ? "yes" : "no");
	err = ext4fs_journal_open(fs, &j);
	if (err) {
		fprintf(stderr, "jreplay: %s: %s (%s)\n", argv[optind], ext4fs_errmsg(fs),
			ext4fs_strerror(err));
		goto out;
	}
	jsb = ext4fs_journal_super(j);
	printf("Journal: inode %u, %u blocks of %u bytes, log from block %u, sequence %u, start %u\n",
	       ext4fs_sb(fs)->s_journal_inum, jsb->maxlen, jsb->blocksize, jsb->first, jsb->sequence,
	       jsb->start);
	print_features(jsb);
	if (verbose)
		ext4fs_journal_set_event_fn(j, print_event, NULL);
	if (scan_only)
		err = ext4fs_journal_scan(j, &info);
	else
		err = ext4fs_journal_recover(j, &info);
	if (info.fc_blocks)
		printf("Fast commit area: %u blocks, %s\n", info.fc_blocks,
		       info.fc_pending ? "holds fast commits: present/unsupported, NOT replayed"
				       : "no pending fast commits");
	print_info(&info, !scan_only);
	if (err) {
		fprintf(stderr, "jreplay: %s: %s (%s)\n", argv[optind], ext4fs_errmsg(fs),
			ext4fs_strerror(err));
		goto out;
	}
	if (!scan_only && info.recovered)
		printf("Journal marked empty; needs_recovery cleared\n");
	status = damaged(&info) ? 1 : 0;
out:
	ext4fs_journal_close(j);
	ext4fs_close(fs);
	return status;
}
