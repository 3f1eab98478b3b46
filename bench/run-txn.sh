#!/bin/bash
# run-txn.sh [OPS [RUNS]]
#
# Journalled mode against write-through, side by side: the same random
# operation sequence (ext4fs-txn-bench, OPS operations, default 4000) on
# fresh copies of one image (mke2fs -t ext4, 256 MiB, 4 KiB blocks), run
# RUNS times each way (default 5), alternating.  Journalled mode commits
# every 256 operations (a kernel commits every 5 seconds, thousands of
# operations), every 16, and, as the worst case, after every operation.
# Prints the median wall time of each and the ratios of time and of
# metadata bytes written (journalled / write-through; the issue's targets
# are at most 1.5 for time and 2 for metadata: once to the log, once home).
# Never passes or fails on time.
#
# Environment: EXT4FS_TXN_BENCH (the binary; default bench/ext4fs-txn-bench
# under the current directory, built with make when missing), TMPDIR.
set -eu

OPS=${1:-4000}
RUNS=${2:-5}
die() { echo "run-txn: $*" >&2; exit 1; }

BENCH=${EXT4FS_TXN_BENCH:-}
if [ -z "$BENCH" ] && [ -f bench/Makefile ]; then
	make -s -C bench ext4fs-txn-bench >/dev/null || die "building ext4fs-txn-bench failed"
	BENCH=./bench/ext4fs-txn-bench
fi
[ -n "$BENCH" ] && [ -x "$BENCH" ] || die "ext4fs-txn-bench not found: run from the build directory, or set EXT4FS_TXN_BENCH"
command -v mke2fs >/dev/null || die "mke2fs is needed"

T=$(mktemp -d "${TMPDIR:-/tmp}/run-txn.XXXXXX")
trap 'rm -rf "$T"' EXIT
mke2fs -q -F -t ext4 -b 4096 -E nodiscard "$T/base.img" 256M

# run MODE-ARGS: time one run on a fresh copy; prints "seconds metadata-bytes".
run() {
	cp --sparse=always "$T/base.img" "$T/run.img"
	sync
	local start end line
	start=$(date +%s.%N)
	line=$("$BENCH" "$@" -o "$OPS" -s 7 "$T/run.img")
	end=$(date +%s.%N)
	echo "$(echo "$end - $start" | bc) $(echo "$line" | sed -n 's/.* file data, \([0-9]*\) metadata$/\1/p')"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

compare() {
	local label=$1; shift
	: >"$T/through" ; : >"$T/journal"
	for _ in $(seq "$RUNS"); do
		run >>"$T/through"
		run -j "$@" >>"$T/journal"
	done
	local t_time j_time t_meta j_meta
	t_time=$(cut -d' ' -f1 "$T/through" | median)
	j_time=$(cut -d' ' -f1 "$T/journal" | median)
	t_meta=$(cut -d' ' -f2 "$T/through" | median)
	j_meta=$(cut -d' ' -f2 "$T/journal" | median)
	printf '%-28s %10s %10s %8s   %12s %12s %8s\n' "$label" "$t_time" "$j_time" \
		"$(echo "scale=2; $j_time / $t_time" | bc)" "$t_meta" "$j_meta" \
		"$(echo "scale=2; $j_meta / $t_meta" | bc)"
}

printf '%-28s %10s %10s %8s   %12s %12s %8s\n' "$OPS operations, $RUNS runs" "through s" "journal s" "ratio" \
	"through meta" "journal meta" "ratio"
compare "commit every 256 operations" -c 256
compare "commit every 16 operations" -c 16
compare "commit after each operation" -c 1
