#!/bin/sh
# run-walk.sh [IMAGE]
#
# Time "e2fsck -fn -tt IMAGE" and ext4fs-walk (1 and 2 threads) on the same
# image in one run, cold cache and warm cache, and print the ratios
# ours/e2fsck.  Never passes or fails on time: the exit status is 0 unless a
# tool failed to run or the walk's totals are wrong.
#
# IMAGE defaults to $BENCH_IMAGE or /var/tmp/libext4fs-bench/big600k.img,
# built with make-big-image.sh when missing (needs root; else SKIP, exit 77).
#
# Environment:
#   EXT4FS_WALK  path of the ext4fs-walk binary (default: bench/ext4fs-walk
#                under the current directory, then next to this script)
#   WALK_JOBS    thread counts to run ext4fs-walk with (default "1 2")
#   E2FSCK       e2fsck to compare with (default: e2fsck from PATH)
#
# Cold runs drop the page cache first (sync; echo 3 > drop_caches), which
# needs root; without root the "cold" runs are simply first runs.  Every
# tool is run twice in a row: the second run is the warm one.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
IMAGE=${1:-${BENCH_IMAGE:-/var/tmp/libext4fs-bench/big600k.img}}
JOBS=${WALK_JOBS:-1 2}
E2FSCK=${E2FSCK:-e2fsck}

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "run-walk: $*" >&2; exit 1; }

# -- tools -------------------------------------------------------------------
WALK=${EXT4FS_WALK:-}
if [ -z "$WALK" ]; then
	for w in ./bench/ext4fs-walk ./ext4fs-walk "$HERE/ext4fs-walk"; do
		if [ -x "$w" ]; then WALK=$w; break; fi
	done
fi
[ -n "$WALK" ] && [ -x "$WALK" ] || die "ext4fs-walk not found: build it (make) and run from the build directory, or set EXT4FS_WALK"
command -v "$E2FSCK" >/dev/null 2>&1 || skip "e2fsck not found"

TIME=/usr/bin/time
if [ ! -x $TIME ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "run-walk: /usr/bin/time is missing; installing package 'time' with apt-get"
		if ! apt-get install -y -q time >/dev/null 2>&1; then
			apt-get update -q >/dev/null 2>&1 || :
			apt-get install -y -q time >/dev/null 2>&1 || :
		fi
	fi
	[ -x $TIME ] || skip "/usr/bin/time is missing (install package 'time')"
fi

# -- image -------------------------------------------------------------------
if [ ! -e "$IMAGE" ]; then
	mkdir -p "$(dirname "$IMAGE")"
	rc=0
	"$HERE/make-big-image.sh" "$IMAGE" || rc=$?
	[ $rc = 77 ] && exit 77
	[ $rc = 0 ] || die "make-big-image.sh failed ($rc)"
fi

CAN_DROP=0
if [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; then CAN_DROP=1; fi
drop_caches() {
	if [ $CAN_DROP = 1 ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
}

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/run-walk.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT

# run NAME CMD...: time CMD; leaves "wall user sys maxrss_kb" in $TMPD/NAME.time
# and its output in $TMPD/NAME.out
run() {
	name=$1; shift
	rc=0
	$TIME -o "$TMPD/$name.time" -f "%e %U %S %M" "$@" >"$TMPD/$name.out" 2>&1 || rc=$?
	tail -n 1 "$TMPD/$name.time" >"$TMPD/$name.t"
	echo $rc >"$TMPD/$name.rc"
}

# e2fsck -tt prints "Pass N: Memory used: ..., time:  W/ U/ S" per pass.
pass_time() {  # pass_time NAME N -> "wall user sys"
	sed -n "s|^Pass $2: Memory used:.*time: *\([0-9.]*\)/ *\([0-9.]*\)/ *\([0-9.]*\).*|\1 \2 \3|p" \
		"$TMPD/$1.out" | head -n 1
}

echo "run-walk: image $IMAGE ($(du -h --apparent-size "$IMAGE" | cut -f1) apparent, $(du -h "$IMAGE" | cut -f1) allocated)"
echo "run-walk: e2fsck $($E2FSCK -V 2>&1 | head -n 1 | sed 's/^e2fsck //')"
echo "run-walk: walk binary $WALK"
[ $CAN_DROP = 1 ] || echo "run-walk: not root: cannot drop the page cache; 'cold' = first run only"
echo "run-walk: $(nproc 2>/dev/null || echo ?) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?) before"

# each tool: cold (after dropping caches), then warm (immediately again)
tools="e2fsck"
for j in $JOBS; do tools="$tools walk$j"; done
for t in $tools; do
	drop_caches
	for temp in cold warm; do
		case $t in
		e2fsck) run "$t.$temp" "$E2FSCK" -fn -tt "$IMAGE" ;;
		walk*) run "$t.$temp" "$WALK" -j "${t#walk}" "$IMAGE" ;;
		esac
	done
done

echo "run-walk: load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?) after (wall times are only meaningful on an idle machine; CPU times less affected)"
status=0
# e2fsck: 0 clean; anything else is reported but the numbers still stand
for temp in cold warm; do
	rc=$(cat "$TMPD/e2fsck.$temp.rc")
	[ "$rc" = 0 ] || { echo "run-walk: warning: e2fsck -fn exited $rc ($temp run)"; tail -n 5 "$TMPD/e2fsck.$temp.out"; }
done
ref=""
for j in $JOBS; do
	for temp in cold warm; do
		f=$TMPD/walk$j.$temp
		rc=$(cat "$f.rc")
		if [ "$rc" != 0 ]; then
			echo "run-walk: ext4fs-walk -j $j exited $rc ($temp run):"
			grep -v '^RESULT' "$f.out" | sed 's/^/    /'
			status=1
		fi
		# totals must not depend on -j or on the run
		tot=$(sed -n 's/^RESULT \(.*\) errors=.*/\1/p' "$f.out")
		if [ -z "$ref" ]; then
			ref=$tot
		elif [ "$tot" != "$ref" ]; then
			echo "run-walk: totals differ: '$tot' (-j $j, $temp) vs '$ref'"
			status=1
		fi
	done
done

echo
sed -n '/^inodes in use/,/^dir entries/p' "$TMPD/walk$(echo $JOBS | cut -d' ' -f1).cold.out"
grep '^bigwalk\|files (' "$TMPD/e2fsck.cold.out" | tail -n 1 | sed 's/^/e2fsck: /'
echo

# -- table -------------------------------------------------------------------
{
	for temp in cold warm; do
		read w u s m <"$TMPD/e2fsck.$temp.t"
		echo "$temp e2fsck_-fn $w $u $s $m"
		set -- $(pass_time "e2fsck.$temp" 1) 0 0 0
		p1w=$1 p1u=$2 p1s=$3
		set -- $(pass_time "e2fsck.$temp" 2) 0 0 0
		echo "$temp e2fsck_pass1 $p1w $p1u $p1s -"
		echo "$temp e2fsck_pass2 $1 $2 $3 -"
		for j in $JOBS; do
			read w u s m <"$TMPD/walk$j.$temp.t"
			echo "$temp ext4fs-walk_-j_$j $w $u $s $m"
		done
	done
} >"$TMPD/table"

awk -v jobs="$JOBS" '
function r(a, b) { return b > 0 ? sprintf("%.3f", a / b) : "n/a" }
{
	temp = $1; name = $2; W[temp, name] = $3; U[temp, name] = $4; S[temp, name] = $5; M[temp, name] = $6
	rows[++n] = $0
}
END {
	printf "%-5s %-22s %8s %8s %8s %8s %12s\n", "cache", "run", "wall s", "user s", "sys s", "cpu s", "peak RSS KiB"
	for (i = 1; i <= n; i++) {
		split(rows[i], f, " ")
		nm = f[2]; gsub("_", " ", nm)
		printf "%-5s %-22s %8.2f %8.2f %8.2f %8.2f %12s\n", f[1], nm, f[3], f[4], f[5], f[4] + f[5], f[6]
		if (f[2] == "e2fsck_pass2") {
			t = f[1]
			pw = W[t, "e2fsck_pass1"] + W[t, "e2fsck_pass2"]
			pc = U[t, "e2fsck_pass1"] + S[t, "e2fsck_pass1"] + U[t, "e2fsck_pass2"] + S[t, "e2fsck_pass2"]
			printf "%-5s %-22s %8.2f %8s %8s %8.2f %12s\n", t, "e2fsck pass 1+2", pw, "", "", pc, "-"
		}
	}
	print ""
	print "ratios ours/e2fsck (below 1 = ours is faster or smaller):"
	printf "%-5s %-16s %14s %16s %12s %16s %10s\n", "cache", "run", "wall/e2fsck", "wall/pass1+2", "cpu/e2fsck", "cpu/pass1+2", "RSS"
	nj = split(jobs, J, " ")
	for (k = 1; k <= 2; k++) {
		t = k == 1 ? "cold" : "warm"
		ew = W[t, "e2fsck_-fn"]; ec = U[t, "e2fsck_-fn"] + S[t, "e2fsck_-fn"]; em = M[t, "e2fsck_-fn"]
		pw = W[t, "e2fsck_pass1"] + W[t, "e2fsck_pass2"]
		pc = U[t, "e2fsck_pass1"] + S[t, "e2fsck_pass1"] + U[t, "e2fsck_pass2"] + S[t, "e2fsck_pass2"]
		for (q = 1; q <= nj; q++) {
			nm = "ext4fs-walk_-j_" J[q]
			c = U[t, nm] + S[t, nm]
			printf "%-5s %-16s %14s %16s %12s %16s %10s\n", t, "walk -j " J[q], r(W[t, nm], ew), r(W[t, nm], pw), r(c, ec), r(c, pc), r(M[t, nm], em)
		}
	}
}' "$TMPD/table"

echo
echo "(e2fsck pass times are its own -tt figures; whole-run figures are /usr/bin/time: %e %U %S %M)"
exit $status
