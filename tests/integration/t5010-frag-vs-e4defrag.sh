#!/bin/bash
# t5010-frag-vs-e4defrag.sh - the library's fragmentation figures (frag.h)
# judged by e2fsprogs and the kernel: files made fragmented by the kernel
# on a loop mount (interleaved fsynced writers, punched holes refilled by
# another file, unwritten preallocation), then per file our extent count
# against filefrag's (FIEMAP), e4defrag -c's "Total/best extents" and
# score against ours, and, unmounted, debug4fs freefrag (the library's
# free-space walk) against e2freefrag, byte for byte.
# Images: ext4 with 4 KiB blocks, and ext3 (block maps) with 1 KiB blocks.
set -eu
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
need_cmd mke2fs filefrag e2freefrag e4defrag "$DEBUG4FS"
FRAGDUMP=$top_builddir/tests/tools/fragdump
[ -x "$FRAGDUMP" ] || skip "tests/tools/fragdump is not built"
need_root_loop
make_tmpdir


# Make files fragmented by the kernel in the mounted directory $1.
fragment() {
	local m=$1 i
	for i in $(seq 0 23); do
		dd if=/dev/urandom of="$m/a" bs=12k count=1 seek="$i" conv=notrunc,fsync status=none
		dd if=/dev/urandom of="$m/b" bs=12k count=1 seek="$i" conv=notrunc,fsync status=none
	done
	dd if=/dev/urandom of="$m/big" bs=64k count=64 status=none
	sync
	# Extent files only: punching and preallocating fail on block maps.
	for i in $(seq 0 2 62); do
		fallocate -p -o $((i * 65536)) -l 65536 "$m/big" 2>/dev/null || true
	done
	sync
	dd if=/dev/urandom of="$m/fill" bs=64k count=40 conv=fsync status=none
	dd if=/dev/urandom of="$m/sparse" bs=4k count=3 status=none
	dd if=/dev/urandom of="$m/sparse" bs=4k count=2 seek=100 conv=notrunc status=none
	fallocate -o $((200 * 4096)) -l $((50 * 4096)) "$m/sparse" 2>/dev/null || true
	fallocate -n -o $((300 * 4096)) -l $((8 * 4096)) "$m/sparse" 2>/dev/null || true
	mkdir "$m/d"
	for i in $(seq 1 20); do
		head -c $((i * 3000)) /dev/urandom >"$m/d/f$i"
	done
	sync
}

check_image() {
	local name=$1 opts=$2 size=$3 img=$T/$1.img m=$T/mnt.$1 f ino want got line
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" "$size" >/dev/null || { failed "$name: mke2fs $opts"; return; }
	mkdir -p "$m"
	loop_mount "$img" "$m" || { failed "$name: mount"; return; }
	fragment "$m"
	: >"$T/$name.filefrag"
	for f in a b big fill sparse d/f1 d/f7 d/f20; do
		ino=$(stat -c %i "$m/$f")
		want=$(filefrag "$m/$f" | sed -n 's/.*: \([0-9]*\) extents\? found$/\1/p')
		echo "$ino $want $f" >>"$T/$name.filefrag"
	done
	e4defrag -c "$m" >"$T/$name.e4defrag" 2>&1 || true
	loop_umount "$m"

	"$FRAGDUMP" "$img" >"$T/$name.ours" || { failed "$name: fragdump"; return; }
	local multi=0
	while read -r ino want f; do
		got=$(awk -v i="$ino" '$1 == "file" && $2 == i { print $4 }' "$T/$name.ours")
		[ "$want" -gt 1 ] && multi=1
		[ "$got" = "$want" ] || failed "$name: $f (inode $ino): filefrag says $want extents, we say ${got:-nothing}"
	done <"$T/$name.filefrag"
	[ "$multi" = 1 ] || failed "$name: no file came out fragmented; the test proves nothing"

	# e4defrag -c's totals and score against ours.
	want=$(sed -n 's/^ Total\/best extents[[:space:]]*\([0-9]*\/[0-9]*\)$/\1/p' "$T/$name.e4defrag")
	line=$(grep '^score ' "$T/$name.ours" || true)
	got=$(echo "$line" | awk '{ print $2 "/" $3 }')
	[ -n "$want" ] && [ "$want" = "$got" ] ||
		failed "$name: e4defrag -c Total/best extents '${want}', ours '${got}'"
	want=$(sed -n 's/^ Average size per extent[[:space:]]*\([0-9]*\) KB$/\1/p' "$T/$name.e4defrag")
	got=$(echo "$line" | awk '{ print $4 }')
	[ "$want" = "$got" ] || failed "$name: e4defrag -c average size per extent '$want' KB, ours '$got'"
	want=$(sed -n 's/^ Fragmentation score[[:space:]]*\([0-9]*\)$/\1/p' "$T/$name.e4defrag")
	got=$(echo "$line" | awk '{ print $5 }')
	[ "$want" = "$got" ] || failed "$name: e4defrag -c score '$want', ours '$got'"

	# The free-space histogram, as e2freefrag prints it.
	for c in "" "-c 64" "-c 1024"; do
		# shellcheck disable=SC2086
		e2freefrag $c "$img" >"$T/$name.e2freefrag" 2>&1 || true
		"$DEBUG4FS" -R "freefrag $c" "$img" >"$T/$name.freefrag" 2>/dev/null || true
		diff -u "$T/$name.e2freefrag" "$T/$name.freefrag" >"$T/$name.diff" ||
			failed "$name: freefrag $c differs from e2freefrag: $(head -n 20 "$T/$name.diff")"
	done
	note "$name: $(wc -l <"$T/$name.filefrag") files against filefrag; $(grep '^score' "$T/$name.ours")"
}

check_image ext4-4k "-t ext4 -b 4096 -E lazy_itable_init=0" 64M
check_image ext3-1k "-t ext3 -b 1024 -E lazy_itable_init=0" 32M

[ "$fails" = 0 ] || fail "$fails check(s) failed"
echo "ok"
