#!/bin/bash
# run-mkfs.sh - mke4fs against mke2fs on big sparse images, in one run.
#
# For every size (default 1 TiB and 15 TiB) and every option set (default
# options, and "-E stride=16,stripe_width=64 -G 64") each tool formats a
# fresh sparse file N times (-q -F -t ext4); the best (lowest) wall time is
# kept, with what that run wrote and what the image then allocates:
#
#   wall s       elapsed time of the whole process, fsync at exit included
#   alloc MiB    bytes the image file allocates afterwards (stat %b * %B):
#                data written plus fallocated/zeroed ranges
#   wchar MiB    bytes passed to write()/pwrite() system calls
#   wbytes MiB   bytes the process caused to be sent to storage
#                (write_bytes of /proc/PID/io, counted when pages dirty)
#
# The I/O figures are read from /proc/$$/io of a small bash wrapper after
# it has reaped the tool: the kernel adds a reaped child's counters to its
# parent's.  Ratios are ours / mke2fs (below 1: ours is faster / smaller).
# Nothing passes or fails on the figures; the exit status is nonzero only
# when a tool fails.
#
# Environment:
#   MKE4FS       the tool (default: misc/mkfs/mke4fs under the current
#                directory, then next to this script's parent); a libtool
#                wrapper script is replaced by the binary it runs
#   MKE2FS       mke2fs to compare with (default: mke2fs from PATH)
#   BENCH_RUNS   runs per tool and case, best kept (default 3)
#   MKFS_SIZES   sizes, as truncate -s takes them (default "1T 15T")
#   BENCH_DIR    where the images go (default $TMPDIR or /var/tmp); each
#                image is deleted after its run.  A 15 TiB ext4 allocates
#                about 1.3 GiB (mostly the 1 GiB journal).
#   BENCH_FSCK=1 also run e2fsck -fn on the last image of every case
#                (15 TiB: ~15 s each), and fail if it is not clean
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=${BENCH_RUNS:-3}
SIZES=${MKFS_SIZES:-1T 15T}
MKE2FS=${MKE2FS:-mke2fs}

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "run-mkfs: $*" >&2; exit 1; }

case ":$PATH:" in *:/sbin:*) ;; *) PATH=$PATH:/sbin:/usr/sbin ;; esac

if [ -z "${MKE4FS:-}" ]; then
	for m in ./misc/mkfs/mke4fs ../misc/mkfs/mke4fs "$HERE/../misc/mkfs/mke4fs"; do
		if [ -x "$m" ]; then MKE4FS=$m; break; fi
	done
fi
if [ -z "${MKE4FS:-}" ] || [ ! -x "$MKE4FS" ]; then
	die "mke4fs not found: build it and run from the build directory, or set MKE4FS"
fi
# An uninstalled build's misc/mkfs/mke4fs is a libtool wrapper script; its
# start-up (a shell, then exec) would be timed too.  Run the real binary
# with the uninstalled library on LD_LIBRARY_PATH instead.
MKE4FS_ENV=()
if head -c 4096 "$MKE4FS" | grep -q 'libtool'; then
	mdir=$(cd "$(dirname "$MKE4FS")" && pwd)
	if [ -x "$mdir/.libs/mke4fs" ] && [ -d "$mdir/../../lib/ext4fs/.libs" ]; then
		MKE4FS_ENV=(env "LD_LIBRARY_PATH=$(cd "$mdir/../../lib/ext4fs/.libs" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
		MKE4FS=$mdir/.libs/mke4fs
	fi
fi
command -v "$MKE2FS" >/dev/null 2>&1 || skip "mke2fs not found"
[ -r /proc/self/io ] || note_io="(no /proc/PID/io here: I/O columns are blank)"

WORK=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/var/tmp}}/run-mkfs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

now() { date +%s%N; }

# one TOOL SIZE OPTIONS: one run; prints "wall_ns alloc_bytes wchar write_bytes".
one() {
	local tool=$1 size=$2 opts=$3 img=$WORK/img t0 t1 rc=0
	local -a pre=()
	[ "$tool" != "$MKE4FS" ] || pre=("${MKE4FS_ENV[@]}")
	local -a args
	read -r -a args <<<"$opts"
	rm -f "$img"
	truncate -s "$size" "$img"
	sync
	t0=$(now)
	bash -c 'rc=0; "$@" </dev/null >/dev/null 2>"$ERRF" || rc=$?; cat /proc/$$/io 2>/dev/null; exit $rc' \
		bash "${pre[@]}" "$tool" -q -F -t ext4 "${args[@]}" "$img" >"$WORK/io" || rc=$?
	t1=$(now)
	if [ "$rc" != 0 ]; then
		echo "run-mkfs: $tool -q -F -t ext4 $opts ($size) exited $rc: $(head -n 3 "$ERRF")" >&2
		return 1
	fi
	if [ -n "${BENCH_FSCK:-}" ] && [ -n "${FSCK_THIS:-}" ]; then
		e2fsck -fn "$img" >"$WORK/fsck" 2>&1 ||
			{ echo "run-mkfs: e2fsck -fn of $tool's $size image failed" >&2; head -n 5 "$WORK/fsck" >&2; return 1; }
	fi
	local blocks bsz
	read -r blocks bsz < <(stat -c '%b %B' "$img")
	rm -f "$img"
	printf '%s %s %s %s\n' "$((t1 - t0))" "$((blocks * bsz))" \
		"$(awk '$1 == "wchar:" { print $2 }' "$WORK/io")" \
		"$(awk '$1 == "write_bytes:" { print $2 }' "$WORK/io")"
}

export ERRF=$WORK/err
RESULTS=$WORK/results
: >"$RESULTS"
CONFIGS=("default|" "raid-G64|-E stride=16,stripe_width=64 -G 64")

echo "mke2fs: $("$MKE2FS" -V 2>&1 | head -n 1)"
echo "mke4fs: ${MKE4FS_ENV[*]} $MKE4FS"
echo "best of $RUNS runs; images in $WORK ${note_io:-}"
echo

for size in $SIZES; do
	for cfg in "${CONFIGS[@]}"; do
		cname=${cfg%%|*}
		opts=${cfg#*|}
		for tool in mke2fs mke4fs; do
			if [ $tool = mke2fs ]; then bin=$MKE2FS; else bin=$MKE4FS; fi
			best=""
			for i in $(seq 1 "$RUNS"); do
				FSCK_THIS=""
				[ "$i" != "$RUNS" ] || FSCK_THIS=1
				r=$(FSCK_THIS=$FSCK_THIS one "$bin" "$size" "$opts") || exit 1
				if [ -z "$best" ] || [ "${r%% *}" -lt "${best%% *}" ]; then
					best=$r
				fi
			done
			echo "$size $cname $tool $best" >>"$RESULTS"
		done
	done
done

mib() { awk -v b="$1" 'BEGIN { if (b == "") print "-"; else printf "%.1f", b / 1048576 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

printf '| size | options | tool | wall s | alloc MiB | wchar MiB | wbytes MiB |\n'
printf '|------|---------|------|-------:|----------:|----------:|-----------:|\n'
while read -r size cname tool wall alloc wchar wbytes; do
	printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$size" "$cname" "$tool" \
		"$(awk -v n="$wall" 'BEGIN { printf "%.3f", n / 1e9 }')" \
		"$(mib "$alloc")" "$(mib "$wchar")" "$(mib "$wbytes")"
done <"$RESULTS"
echo
printf '| size | options | wall ours/mke2fs | alloc ours/mke2fs | wchar ours/mke2fs | wbytes ours/mke2fs |\n'
printf '|------|---------|-----:|------:|------:|------:|\n'
for size in $SIZES; do
	for cfg in "${CONFIGS[@]}"; do
		cname=${cfg%%|*}
		read -r _ _ _ w2 a2 c2 b2 < <(grep "^$size $cname mke2fs " "$RESULTS")
		read -r _ _ _ w4 a4 c4 b4 < <(grep "^$size $cname mke4fs " "$RESULTS")
		printf '| %s | %s | %s | %s | %s | %s |\n' "$size" "$cname" \
			"$(ratio "$w4" "$w2")" "$(ratio "$a4" "$a2")" "$(ratio "$c4" "$c2")" "$(ratio "$b4" "$b2")"
	done
done
