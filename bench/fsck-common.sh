# shellcheck shell=bash
# fsck-common.sh - what the checker benchmarks share (sourced by run-fsck.sh
# and run-rehash.sh after they set NAME to their own name):
#   skip, die        print and exit (77 for a missing tool, 1 for an error)
#   E4FSCK, E2FSCK   the two checkers, found or taken from the environment
#   BENCH_DIR        where images are kept (made if missing)
#   TMPD             a private temporary directory, removed at exit
#   run NAME CMD...  run CMD timed: output in $TMPD/NAME.out, "wall user sys
#                    maxrss_kb" in NAME.t, exit status in NAME.rc

HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_DIR=${BENCH_DIR:-/var/tmp/libext4fs-bench}
E2FSCK=${E2FSCK:-e2fsck}
case ":$PATH:" in *:/sbin:*) ;; *) PATH=$PATH:/sbin:/usr/sbin ;; esac

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "$NAME: $*" >&2; exit 1; }

E4FSCK=${E4FSCK:-}
if [ -z "$E4FSCK" ]; then
	for c in ./fsck/e4fsck "$HERE/../fsck/e4fsck"; do
		if [ -x "$c" ]; then E4FSCK=$c; break; fi
	done
fi
[ -n "$E4FSCK" ] && [ -x "$E4FSCK" ] || die "e4fsck not found: build it and run from the build directory, or set E4FSCK"
command -v "$E2FSCK" >/dev/null 2>&1 || skip "e2fsck not found"
[ -x /usr/bin/time ] || skip "/usr/bin/time is missing (install package 'time')"
mkdir -p "$BENCH_DIR"

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT

run() {
	local name=$1 rc=0; shift
	/usr/bin/time -o "$TMPD/$name.time" -f "%e %U %S %M" "$@" >"$TMPD/$name.out" 2>&1 || rc=$?
	tail -n 1 "$TMPD/$name.time" >"$TMPD/$name.t"
	echo $rc >"$TMPD/$name.rc"
}
