#!/bin/bash
# t0730-fill.sh - filling a file system to 100% through the library: files
# of random sizes up to 1 MiB are written until the allocator says ENOSPC.
# Then the reserved blocks must still be free (an ordinary owner cannot
# take them), `e2fsck -fn` must be clean, and after deleting every file the
# free block count must be exactly what it was (nothing leaked) and e2fsck
# clean again (tests/tools/opsmodel.c -f).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck
OPSMODEL=${OPSMODEL:-$top_builddir/tests/tools/opsmodel}
[ -x "$OPSMODEL" ] || skip "opsmodel is not built ($OPSMODEL)"
make_tmpdir

failed=0
for cfg in "4k:-b 4096 -n 8192 -s 21" "1k:-b 1024 -n 32768 -s 22" \
	   "4k-nocsum-noflex:-b 4096 -n 8192 -s 23 -C -F" "1k-blockmap:-b 1024 -n 32768 -s 24 -E -F -C"; do
	name=${cfg%%:*}
	# shellcheck disable=SC2086
	if "$OPSMODEL" -f ${cfg#*:} "$T/$name.img" >"$T/$name.log" 2>&1; then
		echo "PASS $name: $(grep '^fill:' "$T/$name.log")"
	else
		echo "FAIL $name:"
		tail -n 30 "$T/$name.log"
		failed=1
	fi
	rm -f "$T/$name.img"
done
[ $failed = 0 ] || fail "filling to ENOSPC broke something"
