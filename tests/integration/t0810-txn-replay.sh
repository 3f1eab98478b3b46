#!/bin/bash
# t0810-txn-replay.sh - transactions the library writes in journalled mode
# (txn.h) are replayed by every reader to the same bytes.
#
# For each configuration, tests/tools/opsmodel runs one random operation
# sequence twice with the same seed: once ending in a crash right after the
# last commit (the log still holds transactions, needs_recovery is set) and
# once ending cleanly (the library's own checkpoint writes the blocks home).
# The crash image is then replayed by e2fsck and by our e4fsck (both with
# -E journal_only: a full -fy run also rewrites fields it derives, such as
# bg_itable_unused, whatever the journal held; a -fy run of each must find
# nothing to fix afterwards) and,
# as root with loop devices, by the kernel (a read-only mount replays the
# journal); each result must be clean for e2fsck -fn and equal, block for
# block, to the clean image (tests/lib/imgcmp.py: superblock copies, backup
# descriptors and the journal itself left out).
#
# The configurations cover small transactions (one per operation) and
# large ones, 32-bit tags without checksums (block-mapped, no 64bit) and
# 64-bit tags with checksum v3, a log that wraps round the end of the ring,
# and revoke records.  T0810_OPS scales the run (default 300 x 3 batches).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck
need_cmd dumpe2fs
need_cmd debugfs
need_cmd python3
OPSMODEL=${OPSMODEL:-$top_builddir/tests/tools/opsmodel}
[ -x "$OPSMODEL" ] || skip "opsmodel is not built ($OPSMODEL)"
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir
imgcmp="python3 $top_srcdir/tests/lib/imgcmp.py"
ops=${T0810_OPS:-300}
kernel=1
if ! have_root_loop; then
	note "SKIP: kernel replay: $(root_loop_reason)"
	kernel=0
fi
mkdir -p "$T/mnt"

failed=0
wrapped=0
revoked=0
bad() { echo "FAIL $1"; failed=1; }

replay() {
	# replay WHO IMG: bring the journal of IMG home the way WHO does.
	local who=$1 img=$2 rc=0
	case $who in
	e2fsck) e2fsck -y -E journal_only "$img" >"$img.log" 2>&1 || rc=$? ;;
	e4fsck) "$E4FSCK" -y -E journal_only "$img" >"$img.log" 2>&1 || rc=$? ;;
	kernel)
		loop_mount "$img" "$T/mnt" ro >"$img.log" 2>&1 || return 1
		loop_umount "$T/mnt"
		return 0 ;;
	esac
	# 0: nothing else to fix, 1: fixed (the replay itself counts as a change).
	[ $rc -le 1 ] || { cat "$img.log"; return 1; }
}

run() {
	local name=$1; shift
	local crash="$T/$name-crash.img" clean="$T/$name-clean.img" who
	"$OPSMODEL" -B 3 -o "$ops" "$@" -X crash "$crash" >"$T/$name.crash.log" 2>&1 ||
		{ bad "$name: the crash run failed"; cat "$T/$name.crash.log"; return; }
	"$OPSMODEL" -B 3 -o "$ops" "$@" -X clean "$clean" >"$T/$name.clean.log" 2>&1 ||
		{ bad "$name: the clean run failed"; cat "$T/$name.clean.log"; return; }
	grep -q "needs_recovery" <(dumpe2fs -h "$crash" 2>/dev/null) ||
		{ bad "$name: the crash image does not need recovery"; return; }
	grep -q "wrapping round the end" "$T/$name.crash.log" && wrapped=1
	grep -Eq " [1-9][0-9]* revokes" "$T/$name.crash.log" && revoked=1
	e2fsck -fn "$clean" >"$T/$name.clean.fsck" 2>&1 ||
		{ bad "$name: the clean image is not clean"; cat "$T/$name.clean.fsck"; return; }
	for who in e2fsck e4fsck kernel; do
		[ $who != kernel ] || [ $kernel = 1 ] || continue
		local img="$T/$name-$who.img"
		cp --sparse=always "$crash" "$img"
		if ! replay $who "$img"; then
			bad "$name: $who could not replay the log"
			continue
		fi
		if ! e2fsck -fn "$img" >"$img.fsck" 2>&1; then
			bad "$name: not clean after $who's replay"
			head -n 20 "$img.fsck"
			continue
		fi
		if ! $imgcmp "$clean" "$img"; then
			bad "$name: $who's replay differs from the library's checkpoint"
			continue
		fi
		if [ $who = e2fsck ] && ! e2fsck -fy "$img" >"$img.fsck" 2>&1; then
			bad "$name: e2fsck -fy finds something to fix after the replay"
			head -n 20 "$img.fsck"
			continue
		fi
		if [ $who = e4fsck ] && ! "$E4FSCK" -fy "$img" >"$img.fsck" 2>&1; then
			bad "$name: e4fsck -fy finds something to fix after its replay"
			head -n 20 "$img.fsck"
			continue
		fi
		echo "PASS $name: $who replays it ($(sed -n 's/^log: //p' "$T/$name.crash.log"))"
		rm -f "$img"
	done
	rm -f "$crash" "$clean"
}

# 64-bit tags, checksum v3, a transaction per operation (the log wraps).
run csum-64bit-small  -b 4096 -n 16384 -J 1 -s 1
# 32-bit tags, no checksums, block-mapped files, 1 KiB blocks.
run nocsum-32bit      -b 1024 -n 65536 -C -F -E -J 3 -s 2
# Large transactions: 150 operations each.
run nocsum-64bit-large -b 4096 -n 32768 -C -J 150 -s 3
# 1 KiB blocks with checksums.
run csum-1k           -b 1024 -n 65536 -J 1 -s 4

[ $wrapped = 1 ] || bad "no configuration left a log that wraps round the end of the ring"
[ $revoked = 1 ] || bad "no configuration wrote revoke records"
[ $failed = 0 ] || fail "some replays differ"
