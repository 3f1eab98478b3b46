#!/usr/bin/env bash
# Set everything up, then run the whole test suite:
#   1. a warnings-as-errors build: unit tests (CMocka) and integration tests
#      (judged by e2fsprogs and, as root, the kernel),
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer,
#   3. bounded libFuzzer runs over image parsing, undo files and the whole
#      checker (clang),
#   4. make distcheck.
# Set QUICK=1 to skip steps 2-4.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
"$top/scripts/setup.sh" "$top/build" --enable-werror

status=0
step() { echo; echo "=== $*"; }

step "unit and integration tests (-Werror build)"
export EXT4FS_IMAGE_CACHE=${EXT4FS_IMAGE_CACHE:-$top/build/tests/images}
if ! make -C "$top/build" -s -j"$jobs" check; then
	status=1
	find "$top/build/tests" -name '*.log' -newer "$top/build/config.status" -exec grep -l -E '^(FAIL|ERROR)' {} + 2>/dev/null |
		while read -r f; do echo "--- $f"; tail -n 60 "$f"; done
fi

if [ "${QUICK:-0}" != 1 ]; then
	step "unit and integration tests (ASan + UBSan build)"
	mkdir -p "$top/build-san"
	(cd "$top/build-san" && "$top/configure" -q --enable-werror --enable-sanitizers CC=gcc)
	# verify_asan_link_order=0: the debugfs harness runs tools under stdbuf, which preloads a library.
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	# Tests that copy large trees use smaller ones here: this run hunts memory errors, not volume.
	export EXT4FS_SAN_BUILD=1
	if ! make -C "$top/build-san" -s -j"$jobs" check; then
		status=1
		find "$top/build-san/tests" -name '*.log' -exec grep -l -E '^(FAIL|ERROR)' {} + 2>/dev/null |
			while read -r f; do echo "--- $f"; tail -n 60 "$f"; done
	fi

	step "libFuzzer (bounded run)"
	if command -v clang >/dev/null; then
		mkdir -p "$top/build-fuzz"
		(cd "$top/build-fuzz" && "$top/configure" -q --enable-fuzzing --disable-shared CC=clang)
		make -C "$top/build-fuzz" -s -j"$jobs" >/dev/null
		if ! "$top/tests/fuzz/run.sh" "$top/build-fuzz/tests/fuzz" "${FUZZ_SECONDS:-60}"; then
			status=1
		fi
		if ! FUZZ_TARGET=fuzz_undo "$top/tests/fuzz/run.sh" "$top/build-fuzz/tests/fuzz" "${FUZZ_UNDO_SECONDS:-30}"; then
			status=1
		fi
		if ! FUZZ_TARGET=fuzz_quota "$top/tests/fuzz/run.sh" "$top/build-fuzz/tests/fuzz" "${FUZZ_QUOTA_SECONDS:-20}"; then
			status=1
		fi
		# The whole checker (e4fsck -fn, -fy, -fn in process, issue 17): crashes,
		# hangs and sanitizer reports.  The rule that -fy leaves what a second -fn
		# calls clean is off here until the repairs the fuzzer found wrong are
		# fixed (issue 17's note; FUZZ_FSCK_PROMISE=1 turns it on).
		if ! FUZZ_FSCK_PROMISE=${FUZZ_FSCK_PROMISE:-0} FUZZ_TARGET=fuzz_fsck "$top/tests/fuzz/run.sh" \
			"$top/build-fuzz/tests/fuzz" "${FUZZ_FSCK_SECONDS:-60}"; then
			status=1
		fi
	else
		echo "SKIP: clang is not installed"
	fi

	step "make distcheck"
	if ! EXT4FS_SKIP_INTEGRATION=1 make -C "$top/build" -s distcheck >"$top/build/distcheck.log" 2>&1; then
		tail -n 40 "$top/build/distcheck.log"
		status=1
	else
		echo "distcheck: ok"
	fi
fi

# One closing line over every automake test run above (each build's suites).
totals() {
	local pass=0 fail=0 skip=0 f n
	for f in "$top"/build/*/test-suite.log "$top"/build/tests/*/test-suite.log \
		 "$top"/build-san/*/test-suite.log "$top"/build-san/tests/*/test-suite.log; do
		[ -f "$f" ] || continue
		n=$(sed -n 's/^# PASS: *//p' "$f" | head -n1); pass=$((pass + ${n:-0}))
		n=$(sed -n 's/^# FAIL: *//p' "$f" | head -n1); fail=$((fail + ${n:-0}))
		n=$(sed -n 's/^# ERROR: *//p' "$f" | head -n1); fail=$((fail + ${n:-0}))
		n=$(sed -n 's/^# SKIP: *//p' "$f" | head -n1); skip=$((skip + ${n:-0}))
	done
	echo "tests: $pass passed, $fail failed, $skip skipped"
}

echo
totals
if [ $status = 0 ]; then echo "test.sh: all steps passed"; else echo "test.sh: FAILED"; fi
exit $status
