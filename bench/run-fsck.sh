#!/bin/bash
# run-fsck.sh [IMAGE ...]
#
# e4fsck against e2fsck on the same images in one run: `-fn -tt` for both
# (e4fsck with -m 1 and with one thread per CPU), cold cache and warm,
# and a table per image of every pass's wall time, the total wall and CPU
# time and the peak memory, with the ratios ours / e2fsck.  Both print
# -tt lines in the same format, so one parser reads both.  Never passes or
# fails on time: the exit status is 1 only when the two checkers disagree
# on the exit status or the summary line.
#
# Default images (built once under BENCH_DIR, needs root for the first):
#   big600k.img  the kernel-written image of make-big-image.sh (604k inodes)
#   empty1t.img  a sparse 1 TiB file system made by mke2fs with a few files
#
# Environment:
#   E4FSCK      our e4fsck (default: fsck/e4fsck under the current directory,
#               then next to this script's parent)
#   E2FSCK      e2fsck (default: from PATH)
#   BENCH_DIR   where the images live (default /var/tmp/libext4fs-bench)
#   FSCK_JOBS   e4fsck thread counts (default "1 N", N = CPUs)
set -eu

NAME=run-fsck
# shellcheck source=fsck-common.sh
. "$(dirname "$0")/fsck-common.sh"
NCPU=$(nproc 2>/dev/null || echo 1)
JOBS=${FSCK_JOBS:-1 $NCPU}

if [ $# = 0 ]; then
	big=$BENCH_DIR/big600k.img
	if [ ! -e "$big" ]; then
		rc=0; "$HERE/make-big-image.sh" "$big" || rc=$?
		[ $rc = 0 ] || echo "run-fsck: no big image (make-big-image.sh: $rc); only the sparse one"
	fi
	empty=$BENCH_DIR/empty1t.img
	if [ ! -e "$empty" ]; then
		mke2fs -q -F -t ext4 "$empty" 1T >/dev/null
		debugfs -w -f - "$empty" >/dev/null 2>&1 <<-EOF
			mkdir a
			write /etc/services a/services
			write /etc/passwd a/passwd
		EOF
	fi
	set --
	[ -e "$big" ] && set -- "$big"
	set -- "$@" "$empty"
fi

CAN_DROP=0
if [ "$(id -u)" = 0 ] && [ -w /proc/sys/vm/drop_caches ]; then CAN_DROP=1; fi
drop_caches() { if [ $CAN_DROP = 1 ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi; }

# "Pass N: Memory used: ..., time: W/ U/ S" -> W
pass_wall() {
	sed -n "s|^Pass $2: Memory used:.*time: *\([0-9.]*\)/.*|\1|p" "$TMPD/$1.out" | head -n 1
}

echo "run-fsck: $($E2FSCK -V 2>&1 | head -n 1), e4fsck $E4FSCK, $NCPU CPUs"
[ $CAN_DROP = 1 ] || echo "run-fsck: not root: 'cold' is only the first run"
status=0
for img in "$@"; do
	echo
	echo "== $img ($(du -h --apparent-size "$img" | cut -f1) apparent, $(du -h "$img" | cut -f1) allocated)"
	tools="e2fsck"
	for j in $JOBS; do tools="$tools e4fsck-j$j"; done
	for t in $tools; do
		drop_caches
		for temp in cold warm; do
			case $t in
			e2fsck) run "$t.$temp" "$E2FSCK" -fn -tt "$img" ;;
			e4fsck-j*) run "$t.$temp" "$E4FSCK" -fn -tt -m "${t#e4fsck-j}" "$img" ;;
			esac
		done
	done
	# Same verdict and the same summary line.
	want_rc=$(cat "$TMPD/e2fsck.cold.rc")
	want_sum=$(grep ' files (' "$TMPD/e2fsck.cold.out" | tail -n 1)
	for t in $tools; do
		[ "$t" = e2fsck ] && continue
		rc=$(cat "$TMPD/$t.cold.rc"); sum=$(grep ' files (' "$TMPD/$t.cold.out" | tail -n 1)
		if [ "$rc" != "$want_rc" ] || [ "$sum" != "$want_sum" ]; then
			echo "run-fsck: $t disagrees with e2fsck: exit $rc vs $want_rc, '$sum' vs '$want_sum'"
			status=1
		fi
	done
	echo "e2fsck: $want_sum (exit $want_rc)"
	{
		for temp in cold warm; do
			for t in $tools; do
				read -r w u s m <"$TMPD/$t.$temp.t"
				printf '%s %s %s %s %s %s' "$temp" "$t" "$w" "$u" "$s" "$m"
				for p in 1 2 3 4 5; do
					v=$(pass_wall "$t.$temp" $p); printf ' %s' "${v:-0}"
				done
				echo
			done
		done
	} >"$TMPD/table"
	awk '
	function r(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "n/a" }
	{ rows[++n] = $0; W[$1, $2] = $3; C[$1, $2] = $4 + $5; M[$1, $2] = $6; for (p = 1; p <= 5; p++) P[$1, $2, p] = $(6 + p) }
	END {
		printf "%-5s %-11s %7s %7s %7s %7s %7s %8s %8s %10s\n", "cache", "checker", "pass1", "pass2", "pass3", "pass4", "pass5", "wall s", "cpu s", "RSS KiB"
		for (i = 1; i <= n; i++) {
			split(rows[i], f, " ")
			printf "%-5s %-11s %7.2f %7.2f %7.2f %7.2f %7.2f %8.2f %8.2f %10d\n", f[1], f[2], f[7], f[8], f[9], f[10], f[11], f[3], f[4] + f[5], f[6]
		}
		print ""
		printf "%-5s %-11s %7s %7s %7s %7s %7s %8s %8s %10s\n", "ratio", "ours/e2fsck", "pass1", "pass2", "pass3", "pass4", "pass5", "wall", "cpu", "RSS"
		for (i = 1; i <= n; i++) {
			split(rows[i], f, " ")
			if (f[2] == "e2fsck") continue
			t = f[1]; c = f[2]
			printf "%-5s %-11s %7s %7s %7s %7s %7s %8s %8s %10s\n", t, c, r(P[t,c,1], P[t,"e2fsck",1]), r(P[t,c,2], P[t,"e2fsck",2]), r(P[t,c,3], P[t,"e2fsck",3]), r(P[t,c,4], P[t,"e2fsck",4]), r(P[t,c,5], P[t,"e2fsck",5]), r(W[t,c], W[t,"e2fsck"]), r(C[t,c], C[t,"e2fsck"]), r(M[t,c], M[t,"e2fsck"])
		}
	}' "$TMPD/table"
done
echo
echo "(pass columns: each checker's own -tt wall times; wall, cpu and RSS: /usr/bin/time)"
exit $status
