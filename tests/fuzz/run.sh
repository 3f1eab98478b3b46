#!/usr/bin/env bash
# tests/fuzz/run.sh - a bounded libFuzzer run over image parsing.
#
# usage: run.sh BUILD_FUZZ_DIR SECONDS
#
#   BUILD_FUZZ_DIR  the tests/fuzz directory of a build configured with
#                   --enable-fuzzing CC=clang (it holds fuzz_image, fuzz_undo,
#                   fuzz_fsck and fuzz_quota)
#   SECONDS         total fuzzing time (-max_total_time)
#
# The seed corpus is copied to a temp dir (the fuzzer adds to it there) and
# fuzz_image runs with ASan + UBSan, leak checking, a 10 s per-input timeout
# and a 2 GiB RSS limit.  On a crash, leak, timeout or OOM the reproducer is
# kept in BUILD_FUZZ_DIR/artifacts/, its path is printed, and the exit status
# is 1.  Replay a reproducer with "BUILD_FUZZ_DIR/fuzz_image FILE" or, in any
# build, "tests/fuzz/replay FILE" (replay_undo, replay_fsck, replay_quota for the other
# targets; FUZZ_FSCK_VERBOSE=1 shows what the checker says, see fuzz_fsck.c).
#
# Environment: FUZZ_TARGET (fuzz_image, the default, fuzz_undo,
# fuzz_fsck: the whole checker, -fn, -fy, -fn, seeded by corpus-fsck/, or
# fuzz_quota: quota files, seeded by corpus-quota/),
# FUZZ_JOBS (parallel workers, default 1), FUZZ_CORPUS_OUT (a
# directory to keep the grown corpus in instead of throwing it away),
# FUZZ_ARGS (extra libFuzzer options; "-fork=1 -ignore_crashes=1" goes on
# after a finding, to collect several in one run).
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_FUZZ_DIR SECONDS" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
seconds=$2
# FUZZ_TARGET picks the target: fuzz_image (images, corpus/), fuzz_undo (undo
# files, corpus-undo/), fuzz_fsck (the checker over images, corpus-fsck/) or
# fuzz_quota (quota files, corpus-quota/).
target=${FUZZ_TARGET:-fuzz_image}
case $target in
fuzz_image) seeds=$here/corpus ;;
fuzz_undo) seeds=$here/corpus-undo ;;
fuzz_fsck) seeds=$here/corpus-fsck ;;
fuzz_quota) seeds=$here/corpus-quota ;;
*) echo "run.sh: unknown FUZZ_TARGET $target" >&2; exit 2 ;;
esac
fuzzer=$build/$target
if [ ! -x "$fuzzer" ]; then
	echo "run.sh: $fuzzer not found (configure with --enable-fuzzing CC=clang and build)" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-image.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
mkdir -p "$tmp/corpus" "$build/artifacts"
cp "$seeds"/* "$tmp/corpus/"
corpus=$tmp/corpus
if [ -n "${FUZZ_CORPUS_OUT:-}" ]; then
	mkdir -p "$FUZZ_CORPUS_OUT"
	cp -n "$seeds"/* "$FUZZ_CORPUS_OUT/" 2>/dev/null || true
	corpus=$FUZZ_CORPUS_OUT
fi

# Room for the largest seed plus some growth.
max_len=$(find "$corpus" -type f -printf '%s\n' | sort -n | tail -n 1)
max_len=$(( ${max_len:-65536} + 65536 ))

dict=()
[ "$target" != fuzz_undo ] && [ -f "$here/ext4.dict" ] && dict=(-dict="$here/ext4.dict")

stamp=$(date +%s)
log=$tmp/fuzz.log
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}:allocator_may_return_null=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
jobs=${FUZZ_JOBS:-1}
par=()
if [ "$jobs" -gt 1 ]; then
	par=(-jobs="$jobs" -workers="$jobs")
fi

echo "run.sh: fuzzing for ${seconds}s ($jobs job(s)), corpus $corpus, max_len $max_len"
status=0
# shellcheck disable=SC2086
(cd "$tmp" && exec "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
	-max_len="$max_len" -artifact_prefix="$build/artifacts/" -print_final_stats=1 \
	"${dict[@]}" "${par[@]}" ${FUZZ_ARGS:-} "$corpus") >"$log" 2>&1 || status=$?
if [ "$jobs" -gt 1 ]; then
	cat "$tmp"/fuzz-*.log >>"$log" 2>/dev/null || true
fi

grep -E '^(#[0-9]+.*(DONE|pulse)|stat::)' "$log" | tail -n 12 || true
found=$(find "$build/artifacts" -type f -newermt "@$stamp" \
	\( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'slow-unit-*' \) | sort)
if [ "$status" -ne 0 ] || [ -n "$found" ]; then
	echo "run.sh: FAILED (fuzzer exit status $status)"
	grep -m 1 -B 2 -A 40 -E 'broken promise|==ERROR|runtime error|ERROR: libFuzzer|SUMMARY' "$log" ||
		tail -n 40 "$log"
	for f in $found; do
		echo "run.sh: reproducer: $f"
	done
	exit 1
fi
echo "run.sh: no crash in ${seconds}s"
