#!/bin/bash
# t0800-journal-replay.sh - jreplay replays journals the kernel wrote, as e2fsck does.
#
# For each configuration below: mke2fs formats a sparse file, the kernel
# mounts it (loop device), rounds of file creation, sync and deletion fill
# the journal with committed transactions (descriptor, revoke and commit
# blocks; escaped data blocks with data=journal), and the image is copied
# while still mounted, so the copy needs recovery.  Then:
#   - jreplay -n reports at least one transaction and changes no byte;
#   - one copy is replayed by e2fsck -E journal_only (the oracle), another
#     by jreplay: the two images must be identical apart from the
#     superblock's write time, lifetime-writes counter and checksum;
#   - e2fsck -fn finds jreplay's copy clean, with no journal to recover;
#   - every file read back with debugfs rdump matches between the two.
# A fast_commit file system with fsync'd appends checks that pending fast
# commits are reported (and jreplay exits 1), not replayed.
#
# Needs root and loop mounts (SKIP otherwise).  Environment:
# T0800_CASES=REGEX runs only matching configurations.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck debugfs mke2fs dumpe2fs cmp md5sum truncate diff
JREPLAY=${JREPLAY:-$top_builddir/tests/tools/jreplay}
[ -x "$JREPLAY" ] || skip "jreplay is not built ($JREPLAY; run make check)"
need_root_loop

make_tmpdir
export LC_ALL=C

# name | size | mke2fs options | mount options
CONFIGS=$(
	cat <<'EOF'
4k-csum-64bit     | 64M | -b 4096 -O metadata_csum,64bit   | noinit_itable
1k-csum-64bit     | 32M | -b 1024 -O metadata_csum,64bit   | noinit_itable
4k-nocsum-32bit   | 64M | -b 4096 -O ^metadata_csum,^64bit | noinit_itable
1k-nocsum-32bit   | 32M | -b 1024 -O ^metadata_csum,^64bit | noinit_itable
4k-jcsum-only     | 64M | -b 4096 -O ^metadata_csum        | noinit_itable,journal_checksum
4k-data-journal   | 64M | -b 4096 -O ^metadata_csum,^64bit | noinit_itable,data=journal
1k-data-journal   | 32M | -b 1024 -O metadata_csum,64bit   | noinit_itable,data=journal
EOF
)

head -c 2M /dev/urandom >"$T/rand"

# A file whose blocks begin with the jbd2 magic: data=journal must escape them.
magic_file() {
	local out=$1 bs=$2 i
	: >"$out"
	for i in 1 2 3; do
		printf '\xc0\x3b\x39\x98' >>"$out"
		head -c $((bs - 4)) "$T/rand" >>"$out"
	done
}

# Rounds of writes, each synced, with deletions so the log holds revoke records.
workload() {
	local mnt=$1 bs=$2 round=$3 fill=$4 r i
	for r in $(seq "$round" $((round + 3))); do
		mkdir -p "$mnt/d$((r % 5))"
		for i in $(seq 1 25); do
			tail -c +$((r * 997 + i * 131)) "$T/rand" | head -c $(((i * i * 37 + r) % 30000)) \
				>"$mnt/d$((r % 5))/f$i.$r"
		done
		magic_file "$mnt/d$((r % 5))/magic.$r" "$bs"
		sync
		rm -rf "$mnt/d$(((r + 2) % 5))"
		sync
	done
	# A directory of many blocks, deleted (its blocks are revoked), then the
	# whole free space filled with file data, which must reuse those blocks:
	# a replay that ignored the revoke records would write the old directory
	# blocks over the new data.  (Not with data=journal: the fill would push
	# the escaped blocks out of the log.)
	[ "$fill" = 1 ] || return 0
	mkdir -p "$mnt/big"
	for i in $(seq 1 300); do
		: >"$mnt/big/a-rather-long-file-name-to-fill-directory-blocks-quickly.$i"
	done
	sync
	rm -rf "$mnt/big"
	sync
	dd if=/dev/urandom of="$mnt/fill.$round" bs=64k status=none 2>/dev/null || true
	sync
}

needs_recovery() {
	dumpe2fs -h "$1" 2>/dev/null | grep -q '^Filesystem features:.*needs_recovery' &&
		! dumpe2fs -h "$1" 2>/dev/null | grep -q '^Journal start: *0$'
}

# Bytes that may differ between e2fsck's and jreplay's result: in the
# superblock (at byte 1024), s_wtime (0x30), s_kbytes_written (0x178) and
# s_checksum (0x3FC).  cmp -l numbers bytes from 1.
unexpected_diffs() {
	cmp -l "$1" "$2" | awk '{
		o = $1 - 1 - 1024
		if (o >= 48 && o < 52) next        # s_wtime
		if (o >= 376 && o < 384) next      # s_kbytes_written
		if (o >= 1020 && o < 1024) next    # s_checksum
		print "byte " $1 - 1 " (block of 1 KiB " int(($1 - 1) / 1024) "): " $2 " vs " $3
	}' | head -5
}

# e2fsck -E journal_only (1.46 and later) replays and stops; older ones check too.
journal_only=1

run_case() {
	local name=$1 size=$2 mkfs_opts=$3 mnt_opts=$4
	local img=$T/$name.img mnt=$T/mnt copy=$T/$name.copy a=$T/$name.A b=$T/$name.B
	local bs sum1 sum2 out try fill=1

	case $mnt_opts in *data=journal*) fill=0 ;; esac
	bs=$(sed -n 's/.*-b \([0-9]*\).*/\1/p' <<<"$mkfs_opts")
	rm -f "$img"
	truncate -s "$size" "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F -t ext4 $mkfs_opts "$img" || fail "$name: mke2fs"
	mkdir -p "$mnt"
	loop_mount "$img" "$mnt" "$mnt_opts" || fail "$name: mount -o $mnt_opts"
	for try in 0 4 8; do
		workload "$mnt" "$bs" $((try + 1)) "$fill"
		cp --sparse=always "$img" "$copy"
		needs_recovery "$copy" && break
	done
	loop_umount "$mnt"
	needs_recovery "$copy" || fail "$name: the copy does not need recovery after 3 tries"

	# jreplay -n: a report, and not a byte changed.
	sum1=$(md5sum <"$copy")
	out=$("$JREPLAY" -n "$copy") || fail "$name: jreplay -n exited $?: $out"
	sum2=$(md5sum <"$copy")
	[ "$sum1" = "$sum2" ] || fail "$name: jreplay -n changed the image"
	grep -q '^Transactions [0-9]* to [0-9]* complete' <<<"$out" ||
		fail "$name: jreplay -n found no complete transaction: $out"
	if [ "$fill" = 1 ]; then
		grep -q 'revoke blocks: [1-9]' <<<"$out" || fail "$name: no revoke records in the log: $out"
	fi

	# The oracle and us.
	cp --sparse=always "$copy" "$a"
	cp --sparse=always "$copy" "$b"
	if [ "$journal_only" = 1 ] && ! e2fsck -E journal_only -y "$a" >"$T/e2fsck.out" 2>&1; then
		grep -q 'nknown extended option' "$T/e2fsck.out" ||
			fail "$name: e2fsck -E journal_only failed: $(cat "$T/e2fsck.out")"
		note "e2fsck has no -E journal_only: comparing file contents only"
		journal_only=0
		cp --sparse=always "$copy" "$a"
	fi
	if [ "$journal_only" = 0 ]; then
		e2fsck -fy "$a" >"$T/e2fsck.out" 2>&1 || [ $? -le 1 ] ||
			fail "$name: e2fsck -fy failed: $(cat "$T/e2fsck.out")"
	fi
	out=$("$JREPLAY" "$b") || fail "$name: jreplay exited $?: $out"
	if needs_recovery "$b"; then
		fail "$name: still needs recovery after jreplay"
	fi
	if ! e2fsck -fn "$b" >"$T/fsck.out" 2>&1; then
		fail "$name: e2fsck -fn after jreplay: $(cat "$T/fsck.out")"
	fi
	if grep -qi 'recover' "$T/fsck.out"; then
		fail "$name: e2fsck still sees a journal to recover: $(cat "$T/fsck.out")"
	fi
	if [ "$journal_only" = 1 ]; then
		local diffs
		diffs=$(unexpected_diffs "$a" "$b")
		[ -z "$diffs" ] || fail "$name: e2fsck's and jreplay's replays differ: $diffs"
	fi

	# Every file, as debugfs reads it.
	rm -rf "$T/ra" "$T/rb"
	mkdir -p "$T/ra" "$T/rb"
	debugfs -R "rdump / $T/ra" "$a" >/dev/null 2>&1 || fail "$name: debugfs rdump (oracle)"
	debugfs -R "rdump / $T/rb" "$b" >/dev/null 2>&1 || fail "$name: debugfs rdump (jreplay)"
	diff -r "$T/ra" "$T/rb" >/dev/null || fail "$name: file contents differ after replay"
	[ -n "$(find "$T/rb" -type f -name 'magic.*' | head -1)" ] || fail "$name: no files read back"
	for f in "$T"/rb/*/magic.*; do
		[ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' ')" = c03b3998 ] ||
			fail "$name: $f lost its leading jbd2 magic"
	done
	printf '%-18s ok  (%s; %s)\n' "$name" "$(grep '^Transactions' <<<"$out")" \
		"$(sed -n 's/.*\(revoke blocks: .*\)/\1/p' <<<"$out")"
	rm -f "$img" "$copy" "$a" "$b"
}

fast_commit_case() {
	local img=$T/fc.img mnt=$T/mnt copy=$T/fc.copy out rc=0 i
	truncate -s 64M "$img"
	mke2fs -q -F -t ext4 -b 4096 -O fast_commit "$img" 2>/dev/null || {
		note "mke2fs has no fast_commit: fast-commit case skipped"
		return 0
	}
	mkdir -p "$mnt"
	loop_mount "$img" "$mnt" noinit_itable || fail "fast_commit: mount"
	echo start >"$mnt/a"
	sync
	for i in 1 2 3; do
		echo "line $i" | dd of="$mnt/a" oflag=append conv=notrunc,fsync status=none
	done
	cp --sparse=always "$img" "$copy"
	loop_umount "$mnt"
	if ! debugfs -R logdump "$copy" 2>/dev/null | grep -q 'tag TAIL'; then
		note "the kernel wrote no fast commit: fast-commit case skipped"
		return 0
	fi
	out=$("$JREPLAY" -n "$copy") || rc=$?
	[ "$rc" = 1 ] || fail "fast_commit: jreplay -n exited $rc, expected 1: $out"
	grep -q 'present/unsupported, NOT replayed' <<<"$out" ||
		fail "fast_commit: pending fast commits not reported: $out"
	printf '%-18s ok  (fast commits reported, not replayed)\n' fast-commit
}

while IFS='|' read -r name size mkfs_opts mnt_opts; do
	name=$(echo "$name" | xargs)
	[ -n "$name" ] || continue
	if [ -n "${T0800_CASES:-}" ] && ! [[ $name =~ $T0800_CASES ]]; then
		continue
	fi
	run_case "$name" "$(echo "$size" | xargs)" "$(echo "$mkfs_opts" | xargs)" "$(echo "$mnt_opts" | xargs)"
done <<<"$CONFIGS"
if [ -z "${T0800_CASES:-}" ] || [[ fast-commit =~ $T0800_CASES ]]; then
	fast_commit_case
fi
