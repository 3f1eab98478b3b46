#!/bin/bash
# t0100-read-vs-debugfs: build the image corpus (cached) and compare
# debug4fs with e2fsprogs' debugfs on every image.
#
# Environment:
#   EXT4FS_IMAGE_CACHE   corpus dir (default $top_builddir/tests/images)
#   EXT4FS_QUICK         if set and not 0, only the --quick subset
#   EXT4FS_COMPARE_ARGS  extra options for compare-debugfs.sh
#                        (e.g. "--max-inodes 500 --hunks 2")
#   DEBUG4FS             the tool (default $top_builddir/debugfs/debug4fs)

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

[ -n "$REAL_DEBUGFS" ] || skip "debugfs (e2fsprogs) not found"
[ -x "$DEBUG4FS" ] || skip "debug4fs is not built ($DEBUG4FS)"
need_cmd mke2fs e2fsck

here=$(_ext4fs_abs_dir "$(dirname -- "$0")")
read -r -a cmp_args <<<"${EXT4FS_COMPARE_ARGS:-}"
build_corpus

passed=0
failed=0
for name in "${images[@]}"; do
	img=$CACHE/$name.img
	rc=0
	"$here/compare-debugfs.sh" "${cmp_args[@]}" "$img" "$DEBUG4FS" || rc=$?
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) skip "compare-debugfs.sh skipped on $name" ;;
	*)
		echo "FAIL: $name (compare-debugfs.sh exit $rc)"
		failed=$((failed + 1))
		;;
	esac
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
