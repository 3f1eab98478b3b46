#!/bin/bash
# t5140-defrag4fs-crash.sh - defrag4fs killed at write k: after a replay
# the volume is consistent and every file holds its bytes.
#
# A kernel-fragmented image (lib/defrag-images.sh) is defragmented in all
# three modes (file moves, the tree's layout with its evacuations, mapping
# blocks moved) through the EXT4FS_FAULT test hook (support/fsopen.h,
# io_fault.h), which stops the run at write k:
#   - stop: the writes so far stay;
#   - lose=all: a power cut, everything since the last flush lost;
#   - lose=SEED: a power cut keeping a pseudo-random part of it;
#   - tear: half of the stopping write lands, cut on 4 KiB.
# Each stopped image is replayed, in turn, by the kernel (a mount), by
# e2fsck -E journal_only and by our e4fsck -fy; then the real `e2fsck -fn`
# must find it clean and a manifest from a read-only mount (every object's
# bytes, metadata, times, xattrs, flags and logical map) must equal the one
# taken before the run, nothing ignored.  Then a run to the end from the
# replayed image must finish, and a manifest still match.
#
# The ext4 4 KiB aged tree and the ext3 1 KiB concurrent image (block maps,
# indirect blocks moved).  CI takes T5140_POINTS points (default 12) spread
# evenly over the run's writes, plus the first three; T5140_STEP=N takes
# every N-th write instead (T5140_STEP=1: all of them, the full run
# recorded in issue 16's note).  T5140_CASES=REGEX picks the images.
set -eu
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
need_cmd mke2fs e2fsck python3 losetup "$DEFRAG4FS"
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
need_root_loop
make_tmpdir
# shellcheck source-path=SCRIPTDIR source=../lib/defrag-images.sh
. "$EXT4FS_TESTS_LIB/defrag-images.sh"

TOOLS=$top_srcdir/tests/tools
POINTS=${T5140_POINTS:-12}
STEP=${T5140_STEP:-}
CASES=${T5140_CASES:-.}
mnt=$T/mnt
mkdir "$mnt"

# replay IMG HOW: bring a stopped image to its last committed state.
replay() {
	case $2 in
	kernel)
		loop_mount "$1" "$mnt" || return 1
		loop_umount "$mnt"
		;;
	e2fsck)
		e2fsck -y -E journal_only "$1" >"$T/replay.log" 2>&1 || [ $? -le 1 ]
		;;
	e4fsck)
		"$E4FSCK" -fy "$1" >"$T/replay.log" 2>&1 || [ $? -le 1 ]
		;;
	esac
}

# crash_at NAME K SPEC HOW: run stopped at write K, replayed by HOW, judged.
crash_at() {
	local name=$1 k=$2 spec=$3 how=$4 img=$T/crash.img rc=0
	cp --sparse=always "$T/$name.img" "$img"
	EXT4FS_FAULT="write=$k,$spec" "$DEFRAG4FS" "$img" >"$T/run.log" 2>&1 || rc=$?
	[ "$rc" != 0 ] || { failed "$name k=$k: the run did not stop"; return; }
	replay "$img" "$how" || { failed "$name k=$k ($spec): $how could not replay: $(tail -n 5 "$T/replay.log" 2>/dev/null)"; return; }
	if ! e2fsck -fn "$img" >"$T/fsck" 2>&1; then
		failed "$name k=$k ($spec, $how): e2fsck -fn: $(head -n 15 "$T/fsck")"
		return
	fi
	defrag_manifest "$img" "$T/after.man" || return
	python3 "$TOOLS/manifest.py" compare "$T/$name.man" "$T/after.man" >"$T/mdiff" ||
		failed "$name k=$k ($spec, $how): the files changed: $(head -n 10 "$T/mdiff")"
}

run_case() {
	local name=$1 writes points k i spec how
	defrag_manifest "$T/$name.img" "$T/$name.man"
	cp --sparse=always "$T/$name.img" "$T/full.img"
	: >"$T/counts"
	EXT4FS_FAULT="count=$T/counts" "$DEFRAG4FS" "$T/full.img" >"$T/full.log" 2>&1 ||
		[ $? = 1 ] || fail "$name: the run failed: $(tail -n 5 "$T/full.log")"
	writes=$(sed -n 's/.*writes=\([0-9]*\).*/\1/p' "$T/counts" | tail -n 1)
	[ -n "$writes" ] && [ "$writes" -gt 10 ] || fail "$name: no write count ($(cat "$T/counts"))"
	if [ -n "$STEP" ]; then
		points=$(seq 1 "$STEP" "$writes")
	else
		points="1 2 3 $(python3 -c 'import sys; w, n = int(sys.argv[1]), int(sys.argv[2]); print(" ".join(str(max(4, w * i // (n + 1))) for i in range(1, n + 1)))' "$writes" "$POINTS")"
	fi
	i=0
	for k in $points; do
		case $((i % 4)) in
		0) spec="mode=stop" ;;
		1) spec="mode=stop,lose=all" ;;
		2) spec="mode=stop,lose=$((k * 7919 + 1))" ;;
		3) spec="mode=tear,align=4096,lose=$((k * 104729 + 1))" ;;
		esac
		case $((i % 3)) in
		0) how=kernel ;;
		1) how=e2fsck ;;
		2) how=e4fsck ;;
		esac
		crash_at "$name" "$k" "$spec" "$how"
		i=$((i + 1))
	done
	note "$name: $writes writes; crashed at $i points"
	# A run over a replayed image carries on to the end.
	cp --sparse=always "$T/$name.img" "$T/crash.img"
	EXT4FS_FAULT="write=$((writes / 2)),mode=stop,lose=all" "$DEFRAG4FS" "$T/crash.img" >/dev/null 2>&1 || true
	replay "$T/crash.img" kernel || failed "$name: the kernel could not replay the half-done run"
	"$DEFRAG4FS" "$T/crash.img" >"$T/again.log" 2>&1 || [ $? = 1 ] ||
		failed "$name: the run after a crash failed: $(tail -n 5 "$T/again.log")"
	e2fsck -fn "$T/crash.img" >"$T/fsck" 2>&1 || failed "$name: after the second run, e2fsck -fn: $(head -n 15 "$T/fsck")"
	defrag_manifest "$T/crash.img" "$T/after.man" &&
		{ python3 "$TOOLS/manifest.py" compare "$T/$name.man" "$T/after.man" >"$T/mdiff" ||
			failed "$name: after the second run the files changed: $(head -n 10 "$T/mdiff")"; }
}

ran=0
if echo ext4-4k-aged | grep -Eq -- "$CASES"; then
	defrag_img_aged_tree "$T/ext4-4k-aged.img" 32 400 -g 2048 >/dev/null || fail "building ext4-4k-aged failed"
	run_case ext4-4k-aged
	ran=$((ran + 1))
fi
if echo ext3-1k-concurrent | grep -Eq -- "$CASES"; then
	defrag_img_concurrent "$T/ext3-1k-concurrent.img" 24 -t ext3 -b 1024 >/dev/null ||
		fail "building ext3-1k-concurrent failed"
	run_case ext3-1k-concurrent
	ran=$((ran + 1))
fi
[ "$ran" -gt 0 ] || fail "T5140_CASES=$CASES matches no case"
[ "$fails" = 0 ] || fail "$fails check(s) failed"
echo "ok"
