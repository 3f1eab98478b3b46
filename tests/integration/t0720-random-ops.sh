#!/bin/bash
# t0720-random-ops.sh - random operation sequences through the library
# (create, write, append, truncate, punch, unlink, link, rename, mkdir,
# rmdir, symlink) checked against an in-memory model of the tree, with the
# real `e2fsck -fn` after every batch (tests/tools/opsmodel.c), and by our
# e4fsck -fn as well (it must find them clean too).
#
# Configurations: 1 KiB and 4 KiB blocks; with metadata_csum and with
# uninit_bg instead; with and without flex_bg; and a block-mapped (no
# extents) file system.  Each runs with its own seed; a failure prints the
# operation number and the seed, so `opsmodel -s SEED ...` replays it.
# OPSMODEL_BATCHES / OPSMODEL_OPS scale the run (defaults 12 x 500).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck
OPSMODEL=${OPSMODEL:-$top_builddir/tests/tools/opsmodel}
[ -x "$OPSMODEL" ] || skip "opsmodel is not built ($OPSMODEL)"
make_tmpdir

# Our checker judges every batch too, next to e2fsck: no false positives on aged images.
if [ -x "$E4FSCK" ]; then export OPSMODEL_E4FSCK="$E4FSCK"; fi
batches=${OPSMODEL_BATCHES:-12}
ops=${OPSMODEL_OPS:-500}
failed=0
run() {
	local name=$1; shift
	if "$OPSMODEL" -B "$batches" -o "$ops" "$@" "$T/$name.img" >"$T/$name.log" 2>&1; then
		echo "PASS $name: $(tail -n 1 "$T/$name.log")"
	else
		echo "FAIL $name ($*):"
		tail -n 30 "$T/$name.log"
		failed=1
	fi
	rm -f "$T/$name.img"
}

run ext4-4k        -b 4096 -n 16384 -s 11
run ext4-1k        -b 1024 -n 65536 -s 12
run ext4-4k-nocsum -b 4096 -n 16384 -s 13 -C
run ext4-1k-noflex -b 1024 -n 65536 -s 14 -F -C
run ext4-4k-noflex -b 4096 -n 32768 -s 15 -F
run blockmap-1k    -b 1024 -n 65536 -s 16 -E -F -C
run blockmap-4k    -b 4096 -n 16384 -s 17 -E -F -C

[ $failed = 0 ] || fail "some operation sequences disagreed with the model or e2fsck"
