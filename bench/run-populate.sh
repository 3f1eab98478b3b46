#!/bin/bash
# run-populate.sh [TREE ...]
#
# Write the same source tree into a fresh image three ways and compare how
# the data was laid out and how long it took:
#
#   mke4fs -d     ours: mke4fs ... -d TREE IMG
#   mke2fs -d     e2fsprogs: mke2fs ... -d TREE IMG
#   kernel cp -a  mke2fs ... IMG, mount -o loop, cp -a TREE/. MNT/, umount
#
# once with default options and once with "-E stride=16,stripe_width=64"
# (given to every mkfs).  All images of a tree have the same size (the
# tree's allocated size x 1.5, plus 256 bytes per inode and 128 MiB) and
# the same options (-t ext4 -b 4096 -N inodes, inodes = names in the tree
# x 5/4 + 4096).  Each image is checked with e2fsck -fn and measured with
# ext4fs-layout (see bench/README.md for the metrics); one table per tree
# and option set shows the metrics of the three writers, the better of the
# two others ("best other") and ours / best other.
#
# TREE is a directory, or "usr" / "synth" for a tree built by make-tree.sh
# under BENCH_DIR (reused when it exists); default "usr synth".
#
# Populate time ("populate wall s") is the wall time of the whole writer,
# from an empty image file to its data being on stable storage: the mkfs
# run, mount, cp -a and umount for the kernel, and in every case a final
# "sync IMG".  Before each run the tree is read once (so every writer reads
# it from the page cache) and everything is synced.
#
# Root is needed for the kernel column (loop mount): without it the column
# is n/a.  Until mke4fs has -d, the "mke4fs -d" column is n/a.  Nothing
# passes or fails on the figures: the exit status is 1 only when a writer
# failed or left an image that e2fsck -fn does not pass, 77 when mke2fs or
# e2fsck is missing.
#
# Environment:
#   MKE4FS         our mke4fs (default: misc/mkfs/mke4fs under the current
#                  directory, then next to this script's parent, then PATH)
#   EXT4FS_LAYOUT  ext4fs-layout (default: bench/ext4fs-layout under the
#                  current directory, then next to this script)
#   MKE2FS, E2FSCK the e2fsprogs tools (default: from PATH)
#   BENCH_DIR      images and built trees (default /var/tmp/libext4fs-bench)
#   KEEP=1         keep the images (BENCH_DIR/populate-TREE-OPTS-WRITER.img)
#   POPULATE_WRITERS  columns to run (default "ours mke2fs kernel"; the
#                  others are n/a), e.g. "ours kernel" to skip the slow one
#   POPULATE_OPTS  option sets (default "default stripe")
#   SYNTH_MB, SYNTH_BIG_DIR, SYNTH_SEED   passed to make-tree.sh synth
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_DIR=${BENCH_DIR:-/var/tmp/libext4fs-bench}
MKE2FS=${MKE2FS:-mke2fs}
E2FSCK=${E2FSCK:-e2fsck}
KEEP=${KEEP:-0}
STRIPE_OPTS="stride=16,stripe_width=64"

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "run-populate: $*" >&2; exit 1; }

case ":$PATH:" in *:/sbin:*) ;; *) PATH=$PATH:/sbin:/usr/sbin ;; esac
command -v "$MKE2FS" >/dev/null 2>&1 || skip "mke2fs not found"
command -v "$E2FSCK" >/dev/null 2>&1 || skip "e2fsck not found"

# -- tools -------------------------------------------------------------------
LAYOUT=${EXT4FS_LAYOUT:-}
if [ -z "$LAYOUT" ]; then
	for l in ./bench/ext4fs-layout ./ext4fs-layout "$HERE/ext4fs-layout"; do
		if [ -x "$l" ]; then LAYOUT=$l; break; fi
	done
fi
[ -n "$LAYOUT" ] && [ -x "$LAYOUT" ] ||
	die "ext4fs-layout not found: build it (make) and run from the build directory, or set EXT4FS_LAYOUT"

if [ -z "${MKE4FS:-}" ]; then
	for m in ./misc/mkfs/mke4fs ../misc/mkfs/mke4fs "$HERE/../misc/mkfs/mke4fs"; do
		if [ -x "$m" ]; then MKE4FS=$m; break; fi
	done
	[ -n "${MKE4FS:-}" ] || MKE4FS=$(command -v mke4fs 2>/dev/null || :)
fi
# An uninstalled build's mke4fs is a libtool wrapper script: run the real
# binary with the uninstalled library instead, so its start-up is not timed.
MKE4FS_ENV=()
if [ -n "${MKE4FS:-}" ] && [ -x "$MKE4FS" ] && head -c 4096 "$MKE4FS" | grep -q 'libtool'; then
	mdir=$(cd "$(dirname "$MKE4FS")" && pwd)
	if [ -x "$mdir/.libs/mke4fs" ] && [ -d "$mdir/../../lib/ext4fs/.libs" ]; then
		MKE4FS_ENV=(env "LD_LIBRARY_PATH=$(cd "$mdir/../../lib/ext4fs/.libs" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
		MKE4FS=$mdir/.libs/mke4fs
	fi
fi

TIME=/usr/bin/time
if [ ! -x $TIME ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "run-populate: /usr/bin/time is missing; installing package 'time' with apt-get"
		if ! apt-get install -y -q time >/dev/null 2>&1; then
			apt-get update -q >/dev/null 2>&1 || :
			apt-get install -y -q time >/dev/null 2>&1 || :
		fi
	fi
	[ -x $TIME ] || skip "/usr/bin/time is missing (install package 'time')"
fi

mkdir -p "$BENCH_DIR"
WORK=$(mktemp -d "$BENCH_DIR/run-populate.XXXXXX")
MNT=$WORK/mnt
mkdir "$MNT"
cleanup() {
	if mountpoint -q "$MNT" 2>/dev/null; then umount "$MNT" || :; fi
	rm -rf "$WORK"
}
trap cleanup EXIT

# -- which columns can run ----------------------------------------------------
OURS_OK=1
if [ -z "${MKE4FS:-}" ] || [ ! -x "$MKE4FS" ]; then
	echo "ours: not available yet (mke4fs not found: build it, or set MKE4FS)"
	OURS_OK=0
else
	mkdir "$WORK/empty"
	if ! "${MKE4FS_ENV[@]}" "$MKE4FS" -q -F -t ext4 -d "$WORK/empty" "$WORK/probe.img" 16M \
		</dev/null >"$WORK/probe.out" 2>&1; then
		echo "ours: not available yet ($MKE4FS -d: $(head -n 1 "$WORK/probe.out"))"
		OURS_OK=0
	fi
	rm -f "$WORK/probe.img"
fi
KERNEL_OK=1
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: kernel column needs root"
	KERNEL_OK=0
else
	"$MKE2FS" -q -F -t ext4 "$WORK/probe.img" 16M >/dev/null 2>&1 || die "$MKE2FS failed on a 16 MiB image"
	if mount -o loop "$WORK/probe.img" "$MNT" 2>"$WORK/probe.out"; then
		umount "$MNT"
	else
		echo "SKIP: kernel column: mount -o loop failed: $(head -n 1 "$WORK/probe.out")"
		KERNEL_OK=0
	fi
	rm -f "$WORK/probe.img"
fi

echo "run-populate: $("$MKE2FS" -V 2>&1 | head -n 1), kernel $(uname -r), layout $LAYOUT"
[ $OURS_OK = 0 ] || echo "run-populate: mke4fs $MKE4FS"
echo "run-populate: $(nproc 2>/dev/null || echo ?) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"

# -- one writer ---------------------------------------------------------------
# JSON value of key in file (numbers and strings without quotes or commas).
jget() { sed -n "s/.*\"$2\": \"\{0,1\}\([^\",}]*\).*/\1/p" "$1"; }

warm_tree() {
	tar -C "$1" -cf - . 2>/dev/null | cat >/dev/null || :
	sync
}

# populate WRITER TREE IMG BLOCKS INODES EXTOPT OUTPREFIX
# Leaves OUTPREFIX.{time,err,rc}; rc 0 = the image is written.
populate() {
	local writer=$1 tree=$2 img=$3 blocks=$4 inodes=$5 extopt=$6 out=$7 rc=0
	local -a mkfs=(-q -F -t ext4 -b 4096 -N "$inodes")
	[ -z "$extopt" ] || mkfs+=(-E "$extopt")
	rm -f "$img"
	warm_tree "$tree"
	case $writer in
	ours)
		$TIME -f %e -o "$out.time" bash -c 'img=$1; shift; "$@" && sync "$img"' bash "$img" \
			"${MKE4FS_ENV[@]}" "$MKE4FS" "${mkfs[@]}" -d "$tree" "$img" "$blocks" \
			</dev/null >"$out.err" 2>&1 || rc=$?
		;;
	mke2fs)
		$TIME -f %e -o "$out.time" bash -c 'img=$1; shift; "$@" && sync "$img"' bash "$img" \
			"$MKE2FS" "${mkfs[@]}" -d "$tree" "$img" "$blocks" \
			</dev/null >"$out.err" 2>&1 || rc=$?
		;;
	kernel)
		$TIME -f %e -o "$out.time" bash -c \
			'img=$1 tree=$2 mnt=$3 blocks=$4; shift 4
			 "$@" "$img" "$blocks" && mount -o loop "$img" "$mnt" || exit 1
			 cp -a "$tree/." "$mnt/"; rc=$?
			 umount "$mnt" || rc=1
			 sync "$img"; exit $rc' \
			bash "$img" "$tree" "$MNT" "$blocks" "$MKE2FS" "${mkfs[@]}" \
			</dev/null >"$out.err" 2>&1 || rc=$?
		if mountpoint -q "$MNT"; then umount "$MNT" || :; fi
		;;
	esac
	echo $rc >"$out.rc"
}

STATUS=0
WRITERS=${POPULATE_WRITERS:-ours mke2fs kernel}
OPTSETS=${POPULATE_OPTS:-default stripe}
for w in $WRITERS; do
	case $w in ours|mke2fs|kernel) ;; *) die "POPULATE_WRITERS: unknown writer '$w'" ;; esac
done
KEYS="files dirs used_blocks extents ideal_extents files_above_ideal excess_extents pair_mean pair_median dir_file_mean dir_file_median large_files large_aligned_pct free_extents largest_free"

# measure TREE NAME VARIANT EXTOPT: every writer, then the table
measure() {
	local tree=$1 name=$2 variant=$3 extopt=$4
	local tree_kb names inodes blocks writer img out rc data=$WORK/$name.$variant.data
	tree_kb=$(du -sk "$tree" | cut -f1)
	names=$(find "$tree" | wc -l)
	inodes=$((names * 5 / 4 + 4096))
	blocks=$(((tree_kb * 3 / 2 + inodes / 4 + 131072 + 3) / 4))
	echo
	echo "== $name ($tree): $((tree_kb / 1024)) MiB allocated, $names names; image $((blocks / 256)) MiB," \
		"-N $inodes${extopt:+, -E $extopt}"
	: >"$data"
	for writer in $WRITERS; do
		if { [ $writer = ours ] && [ $OURS_OK = 0 ]; } || { [ $writer = kernel ] && [ $KERNEL_OK = 0 ]; }; then
			echo "$writer fsck n/a" >>"$data"
			continue
		fi
		img=$BENCH_DIR/populate-$name-$variant-$writer.img
		out=$WORK/$name.$variant.$writer
		populate "$writer" "$tree" "$img" "$blocks" "$inodes" "$extopt" "$out"
		rc=$(cat "$out.rc")
		if [ "$rc" != 0 ]; then
			echo "run-populate: $writer ($variant) failed ($rc):"
			head -n 5 "$out.err" | sed 's/^/    /'
			echo "$writer fsck failed" >>"$data"
			STATUS=1
			[ "$KEEP" = 1 ] || rm -f "$img"
			continue
		fi
		echo "$writer time $(tail -n 1 "$out.time")" >>"$data"
		rc=0
		"$E2FSCK" -fn "$img" >"$out.fsck" 2>&1 || rc=$?
		if [ $rc = 0 ]; then
			echo "$writer fsck clean" >>"$data"
		else
			echo "$writer fsck NOT-CLEAN" >>"$data"
			echo "run-populate: e2fsck -fn exited $rc on the $writer image ($variant):"
			grep -v '^Pass \|^e2fsck [0-9]' "$out.fsck" | head -n 8 | sed 's/^/    /'
			STATUS=1
		fi
		rc=0
		"$LAYOUT" --json "$img" >"$out.json" 2>"$out.lerr" || rc=$?
		if [ $rc != 0 ]; then
			echo "run-populate: ext4fs-layout exited $rc on the $writer image:"
			head -n 5 "$out.lerr" | sed 's/^/    /'
			[ $rc = 1 ] || { [ "$KEEP" = 1 ] || rm -f "$img"; continue; }
		fi
		for k in $KEYS; do
			echo "$writer $k $(jget "$out.json" $k)" >>"$data"
		done
		[ "$KEEP" = 1 ] || rm -f "$img"
	done
	table "$data" "$variant"
}

# table DATA VARIANT: metric rows x writer columns
table() {
	awk -v variant="$2" '
	{ V[$1, $2] = $3; have[$1, $2] = 1 }
	function val(w, k) { return ((w, k) in have) ? V[w, k] : "n/a" }
	function num(w, k) { return ((w, k) in have) && V[w, k] ~ /^[0-9.]+$/ }
	function fmt(w, k,   v) {
		v = val(w, k)
		if (v ~ /^[0-9]+\.[0-9]+$/ && k != "time")
			return sprintf("%.1f", v)
		return v
	}
	# row KEY LABEL DIR: DIR low / high (better), info (must agree), fsck;
	# "low-mke2fs": lower is better, judged against mke2fs -d alone
	function row(k, label, dir,   o, b, best, r, ok, w, same, first, nw) {
		o = ""; b = ""; r = ""; ok = ""
		if (dir == "low-mke2fs") {
			dir = "low"
			nw = 2
		} else {
			nw = 3
		}
		if (dir == "low" || dir == "high") {
			best = ""
			for (w = 2; w <= nw; w++) {
				if (!num(W[w], k))
					continue
				if (best == "" || (dir == "low" ? V[W[w], k] + 0 < best + 0 : V[W[w], k] + 0 > best + 0))
					best = V[W[w], k]
			}
			if (best != "") {
				b = (best ~ /\./ && k != "time") ? sprintf("%.1f", best) : best
				if (num("ours", k)) {
					o = V["ours", k] + 0
					if (best + 0 == 0)
						r = o == 0 ? "1.000" : "inf"
					else
						r = sprintf("%.3f", o / best)
					ok = (dir == "low" ? o <= best + 0 : o >= best + 0) ? "yes" : "NO"
					rows++; if (ok == "yes") met++
				}
			}
		} else if (dir == "info") {
			same = 1; first = ""
			for (w = 1; w <= 3; w++) {
				if (!num(W[w], k))
					continue
				if (first == "") first = V[W[w], k]
				else if (V[W[w], k] != first) same = 0
			}
			ok = first == "" ? "" : (same ? "same" : "DIFF")
		} else if (dir == "fsck") {
			ok = val("ours", k) == "clean" ? "yes" : (val("ours", k) == "n/a" ? "" : "NO")
		}
		printf "%-30s %12s %12s %12s %12s %10s %6s\n", label, fmt("ours", k), fmt("mke2fs", k), fmt("kernel", k), b, r, ok
	}
	END {
		W[1] = "ours"; W[2] = "mke2fs"; W[3] = "kernel"
		printf "%-30s %12s %12s %12s %12s %10s %6s\n", "metric", "mke4fs -d", "mke2fs -d", "kernel cp -a", "best other", "ours/best", "ok"
		row("time", "populate wall s (vs mke2fs)", "low-mke2fs")
		row("fsck", "e2fsck -fn", "fsck")
		row("files", "regular files", "info")
		row("dirs", "directories", "info")
		row("used_blocks", "used blocks", "low")
		row("extents", "extents", "low")
		row("ideal_extents", "ideal extents", "info")
		row("files_above_ideal", "files above ideal", "low")
		row("excess_extents", "extents above ideal", "low")
		row("pair_mean", "next-file distance mean", "low")
		row("pair_median", "next-file distance median", "low")
		row("dir_file_mean", "dir-to-file distance mean", "low")
		row("dir_file_median", "dir-to-file distance median", "low")
		if (variant == "stripe") {
			row("large_files", "files >= stripe (64 blocks)", "info")
			row("large_aligned_pct", "of those stripe-aligned %", "high")
		}
		row("free_extents", "free extents", "low")
		row("largest_free", "largest free extent", "high")
		if (rows)
			printf "ours at least as good as the best other on %d of %d rows\n", met, rows
		else
			print "ours: n/a"
	}' "$1"
}

# -- trees --------------------------------------------------------------------
[ $# -gt 0 ] || set -- usr synth
for t in "$@"; do
	case $t in
	usr)
		tree=$BENCH_DIR/tree-usr name=usr ;;
	synth)
		tree=$BENCH_DIR/tree-synth-${SYNTH_MB:-1536}M-${SYNTH_BIG_DIR:-100000}-s${SYNTH_SEED:-1}
		name=synth ;;
	*)
		[ -d "$t" ] || die "$t: not a directory (nor usr / synth)"
		tree=$(cd "$t" && pwd) name=$(basename "$tree") ;;
	esac
	if [ ! -d "$tree" ]; then
		echo "run-populate: building $tree"
		"$HERE/make-tree.sh" "$tree" "$t"
	fi
	for o in $OPTSETS; do
		case $o in
		default) measure "$tree" "$name" default "" ;;
		stripe) measure "$tree" "$name" stripe "$STRIPE_OPTS" ;;
		*) die "POPULATE_OPTS: unknown option set '$o'" ;;
		esac
	done
done
exit $STATUS
