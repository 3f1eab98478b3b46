#!/bin/sh
# run-alloc.sh [EXTRA-ARGS...]
#
# Build ext4fs-alloc-bench (when run from a build directory) and run it on
# in-memory images: 2 GiB of 4 KiB blocks and 1 GiB of 1 KiB blocks, each
# fresh and aged to 90% full.  Prints the benchmark's tables and the one
# number the allocator is held to: CPU time of 100000 small-file
# allocations on the fresh 4 KiB image (target: well under a second).
# There is no external allocator to compare with; the numbers are ours.
# Never passes or fails on time: the exit status is 0 unless the benchmark
# failed (an allocation error, or with -c an inconsistent allocator).
#
# EXTRA-ARGS go to every run (e.g. -c to check the allocator after each
# workload, -n 20000 for a quicker run, -f 95).
#
# Environment:
#   EXT4FS_ALLOC_BENCH  path of the binary (default: bench/ext4fs-alloc-bench
#                       under the current directory, built with make when
#                       missing, then next to this script)
#   ALLOC_CONFIGS       ";"-separated argument sets, one run each
#                       (default "-s 2048 -b 4096;-s 1024 -b 1024")
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
CONFIGS=${ALLOC_CONFIGS:--s 2048 -b 4096;-s 1024 -b 1024}

die() { echo "run-alloc: $*" >&2; exit 1; }

BENCH=${EXT4FS_ALLOC_BENCH:-}
if [ -z "$BENCH" ]; then
	if [ -f bench/Makefile ]; then
		make -s -C bench ext4fs-alloc-bench >/dev/null || die "building ext4fs-alloc-bench failed"
		BENCH=./bench/ext4fs-alloc-bench
	elif [ -x "$HERE/ext4fs-alloc-bench" ]; then
		BENCH=$HERE/ext4fs-alloc-bench
	fi
fi
[ -n "$BENCH" ] && [ -x "$BENCH" ] || die "ext4fs-alloc-bench not found: run from the build directory, or set EXT4FS_ALLOC_BENCH"

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/run-alloc.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT

echo "run-alloc: $BENCH; $(nproc 2>/dev/null || echo ?) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
status=0
i=0
key=""
OLDIFS=$IFS
IFS=';'
set -f
for cfg in $CONFIGS; do
	IFS=$OLDIFS
	i=$((i + 1))
	echo
	rc=0
	# shellcheck disable=SC2086 # each config is a list of arguments
	"$BENCH" $cfg "$@" >"$TMPD/run$i.out" 2>&1 || rc=$?
	cat "$TMPD/run$i.out"
	if [ $rc != 0 ]; then
		echo "run-alloc: ext4fs-alloc-bench $cfg exited $rc"
		status=1
	fi
	if [ -z "$key" ] && grep -q ' 4096-byte blocks' "$TMPD/run$i.out"; then
		key=$(awk '$1 == "fresh" && /small 1-4 blocks, size known/ { print $(NF - 9), $(NF - 8) }' \
			"$TMPD/run$i.out")
	fi
	IFS=';'
done
IFS=$OLDIFS
set +f

echo
if [ -n "$key" ]; then
	set -- $key
	echo "run-alloc: small-file allocations on the fresh 4 KiB image: $1 requests in $2 s CPU (target: 100000 well under 1 s)"
fi
exit $status
