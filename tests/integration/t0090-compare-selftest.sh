#!/bin/bash
# t0090-compare-selftest: check the compare-debugfs.sh harness itself,
# without debug4fs: the real debugfs compared with itself must give no
# difference, and a deliberately broken wrapper around debugfs must be
# caught (exit 1, the mangled commands reported).
#
# Uses one corpus image (ext4-1k) from ${EXT4FS_IMAGE_CACHE:-$top_builddir/tests/images}.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

[ -n "$REAL_DEBUGFS" ] || skip "debugfs (e2fsprogs) not found"
need_cmd mke2fs e2fsck

here=$(_ext4fs_abs_dir "$(dirname -- "$0")")
CACHE=${EXT4FS_IMAGE_CACHE:-$top_builddir/tests/images}
make_tmpdir

rc=0
"$EXT4FS_TESTS_LIB/make-images.sh" "$CACHE" --only ext4-1k >"$T/mk.log" 2>&1 || rc=$?
case $rc in
0) ;;
77) skip "cannot build the test image: $(tail -n 1 "$T/mk.log")" ;;
*) cat "$T/mk.log" >&2; fail "building the test image failed" ;;
esac
img=$CACHE/ext4-1k.img
args=(--max-inodes 400)
passed=0
failed=0
check() {
	# check NAME CONDITION-RESULT
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
	else
		echo "FAIL: $1"
		failed=$((failed + 1))
	fi
}

# 1. debugfs against itself: 0 differences.
rc=0
"$here/compare-debugfs.sh" "${args[@]}" "$img" "$REAL_DEBUGFS" >"$T/self.out" 2>&1 || rc=$?
grep -q ' commands, 0 differ$' "$T/self.out" && r=0 || r=1
[ "$rc" = 0 ] || r=1
check "debugfs vs itself: exit $rc: $(head -n 1 "$T/self.out")" "$r"

# 2. A broken clone: wrong link counts, a missing command output, a
#    corrupted dump and a different exit status.
cat >"$T/broken-debugfs" <<BROKEN
#!/bin/bash
out=\$("$REAL_DEBUGFS" "\$@" 2>&1)
printf '%s\n' "\$out" | sed -e 's/^Links: 2 /Links: 3 /' -e '/^debugfs: ffi\$/,+1d'
if [ -d dumps ]; then
	f=\$(ls dumps | sort -n | sed -n 5p)
	if [ -n "\$f" ]; then printf X | dd of="dumps/\$f" conv=notrunc status=none; fi
fi
exit 3
BROKEN
chmod +x "$T/broken-debugfs"
rc=0
"$here/compare-debugfs.sh" --hunks 100 "${args[@]}" "$img" "$T/broken-debugfs" >"$T/broken.out" 2>&1 || rc=$?
r=0
[ "$rc" = 1 ] || r=1
grep -qE ' commands, [1-9][0-9]* differ' "$T/broken.out" || r=1
grep -q '^-Links: 2 ' "$T/broken.out" || r=1
grep -q '^+Links: 3 ' "$T/broken.out" || r=1
grep -q '^--- command: ffi$' "$T/broken.out" || r=1
grep -q 'dumped file differs' "$T/broken.out" || r=1
grep -q '^exit status: debugfs [0-9]*, tool 3$' "$T/broken.out" || r=1
if [ "$r" != 0 ]; then
	sed 's/^/  | /' "$T/broken.out" | head -n 40
fi
check "broken wrapper must be caught (exit $rc)" "$r"

# 3. A missing tool is a skip, not a pass.
rc=0
"$here/compare-debugfs.sh" "$img" "$T/no-such-tool" >"$T/missing.out" 2>&1 || rc=$?
[ "$rc" = 77 ] && r=0 || r=1
check "missing tool must skip (exit $rc)" "$r"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
