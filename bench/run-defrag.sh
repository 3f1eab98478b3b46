#!/bin/bash
# run-defrag.sh [SIZE_MB [FILES]]
#
# defrag4fs against e4defrag and a rewrite, side by side, on the three
# kinds of fragmentation, built by the kernel at benchmark scale
# (tests/lib/defrag-images.sh; SIZE_MB MiB images, default 1024; the aged
# tree gets FILES files, default 20000):
#
#   concurrent   writers taking turns appending: files in many extents
#   aged         an aged source tree: a directory's files scattered
#   shattered    a nearly full volume with shattered free space, then one
#                large file written into it
#
# For each kind: the image as built ("before"); a copy defragmented by
# defrag4fs (offline, all three modes); a copy defragmented by e4defrag
# (online, on a loop mount); and a rewrite ("cp -a" of the mounted image
# into a fresh mke2fs file system of the same size and options; its
# manifest is compared without inode numbers, atimes, ctimes, maps, flags
# and sizes, which a copy does not keep: a directory written afresh is
# smaller than one that grew and shrank, and a file's bytes are compared
# by their sha256 all the same; e4defrag's without times, as it
# creates and removes its donor files in every directory it works in, so
# their mtimes and ctimes change).  Every
# column is measured by tests/tools/layout-figures.py on a read-only mount
# (FIEMAP, e2freefrag): files above their ideal extent count (ceil(blocks /
# 32768)), extents, block groups per directory, mean distance from a
# directory to its files, the seek distance of reading the tree depth
# first, free extents and the share of free space in extents of 64 MiB or
# more; then the bytes written (defrag4fs: its own count of bytes moved;
# e4defrag and the rewrite: what the loop device wrote) and the wall time
# of the defragmenting command alone.  Every copy must pass e2fsck -fn and
# keep the manifest of the image (tests/tools/manifest.py); a copy that does
# not is reported as FAILED.  Never passes or fails on figures.
#
# Needs root and loop devices.  Environment: DEFRAG4FS (the binary;
# default e4defrag/defrag4fs under the current directory, the build tree),
# TMPDIR (room for four images of SIZE_MB).
set -eu

SIZE=${1:-1024}
FILES=${2:-20000}
here=$(cd "$(dirname -- "$0")" && pwd)
top_srcdir=$(cd "$here/.." && pwd)
export top_srcdir
die() { echo "run-defrag: $*" >&2; exit 1; }

DEFRAG4FS=${DEFRAG4FS:-}
[ -n "$DEFRAG4FS" ] || { [ -x e4defrag/defrag4fs ] && DEFRAG4FS=$PWD/e4defrag/defrag4fs; }
[ -n "$DEFRAG4FS" ] && [ -x "$DEFRAG4FS" ] || die "defrag4fs not found: run from the build directory, or set DEFRAG4FS"
for c in mke2fs e2fsck e4defrag e2freefrag losetup python3; do
	command -v "$c" >/dev/null || die "$c is needed"
done
[ "$(id -u)" = 0 ] || die "root is needed (loop mounts)"

# The test suite's image builders and loop helpers.
TEST_NAME=run-defrag.sh
# shellcheck source=../tests/lib/common.sh
. "$top_srcdir/tests/lib/common.sh"
make_tmpdir
# shellcheck source=../tests/lib/defrag-images.sh
. "$EXT4FS_TESTS_LIB/defrag-images.sh"
TOOLS=$top_srcdir/tests/tools
mnt=$T/mnt src=$T/src
mkdir -p "$mnt" "$src"

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }

# The loop device's sectors written so far (/sys/block/loopN/stat, field 7).
loop_written() {
	local dev
	dev=$(findmnt -n -o SOURCE "$1") || return 1
	awk '{ printf "%.0f\n", $7 * 512 }' "/sys/block/$(basename "$dev")/stat"
}

# figures IMG NAME: layout figures and manifest of IMG on a read-only mount.
figures() {
	loop_mount "$1" "$mnt" ro || die "cannot mount $1"
	python3 "$TOOLS/layout-figures.py" "$mnt" --image "$1" --json >"$T/$2.fig"
	python3 "$TOOLS/manifest.py" take "$mnt" >"$T/$2.man"
	loop_umount "$mnt" || die "cannot unmount $1"
}

# verdict NAME IMG [IGNORE]: "ok" when e2fsck is clean and the manifest is
# the image's (but for the fields IGNORE lists).
verdict() {
	if ! e2fsck -fn "$2" >"$T/$1.fsck" 2>&1; then
		echo "FAILED (e2fsck)"
	elif ! python3 "$TOOLS/manifest.py" compare "$T/before.man" "$T/$1.man" --ignore "${3:-}" >"$T/$1.cmp" 2>&1; then
		echo "FAILED (contents)"
	else
		echo ok
	fi
}

# The mke2fs options each kind is built with (the rewrite uses the same).
opts_for() {
	case $1 in
	shattered) echo "-i 4096" ;;
	*) echo "" ;;
	esac
}

table() {
	python3 - "$T" "$1" <<'EOF'
import json, sys
T, kind = sys.argv[1], sys.argv[2]
cols = ["before", "defrag4fs", "e4defrag", "rewrite"]
fig = {c: json.load(open(f"{T}/{c}.fig")) for c in cols}
extra = {c: dict(l.split("=", 1) for l in open(f"{T}/{c}.extra").read().split()) for c in cols}
rows = [("files above ideal", "files_above_ideal", "{:d}"),
        ("extents", "extents", "{:d}"),
        ("largest file's extents", "largest_file_extents", "{:d}"),
        ("block groups per directory", "groups_per_dir_mean", "{:.2f}"),
        ("directory-to-file distance", "dir_file_distance_mean", "{:.0f}"),
        ("tree-read seek (blocks)", "tree_read_seek_blocks", "{:d}"),
        ("free extents", "free_extents", "{:d}"),
        ("free share in >= 64 MiB", "free_share_64m", "{:.3f}")]
print(f"\n{kind}: " + ", ".join(f"{c} {extra[c]['verdict']}" for c in cols[1:]))
print(f"{'':30}" + "".join(f"{c:>14}" for c in cols))
for label, key, fmt in rows:
    print(f"{label:30}" + "".join(f"{fmt.format(fig[c][key]):>14}" for c in cols))
for label, key in (("MiB written", "bytes"), ("seconds", "seconds")):
    vals = []
    for c in cols:
        v = extra[c].get(key, "-")
        if v != "-" and key == "bytes":
            v = f"{int(float(v)) / 1048576:.1f}"
        elif v != "-":
            v = f"{float(v):.2f}"
        vals.append(v)
    print(f"{label:30}" + "".join(f"{v:>14}" for v in vals))
EOF
}

echo "run-defrag: images of $SIZE MiB; aged tree of $FILES files"
for kind in concurrent aged shattered; do
	base=$T/base.img
	rm -f "$T"/*.img
	case $kind in
	concurrent) defrag_img_concurrent "$base" "$SIZE" ;;
	aged) defrag_img_aged_tree "$base" "$SIZE" "$FILES" ;;
	shattered) defrag_img_shattered "$base" "$SIZE" ;;
	esac >"$T/build.log" || die "building the $kind image failed: $(cat "$T/build.log")"
	figures "$base" before
	echo "verdict=image" >"$T/before.extra"

	# defrag4fs, offline.
	cp --sparse=always "$base" "$T/a.img"
	sync
	t0=$(now)
	rc=0
	"$DEFRAG4FS" --json "$T/a.json" "$T/a.img" >"$T/a.out" 2>&1 || rc=$?
	t1=$(now)
	[ "$rc" -le 1 ] || die "defrag4fs failed (exit $rc): $(tail -5 "$T/a.out")"
	bytes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["bytes_copied"])' "$T/a.json")
	figures "$T/a.img" defrag4fs
	echo "verdict=$(verdict defrag4fs "$T/a.img" | tr ' ' _) bytes=$bytes seconds=$(elapsed "$t0" "$t1")" \
		>"$T/defrag4fs.extra"

	# e4defrag, online on a loop mount.
	cp --sparse=always "$base" "$T/b.img"
	loop_mount "$T/b.img" "$mnt" || die "cannot mount the e4defrag copy"
	sync
	w0=$(loop_written "$mnt")
	t0=$(now)
	e4defrag "$mnt" >"$T/b.out" 2>&1 || true
	sync
	t1=$(now)
	w1=$(loop_written "$mnt")
	loop_umount "$mnt" || die "cannot unmount the e4defrag copy"
	figures "$T/b.img" e4defrag
	echo "verdict=$(verdict e4defrag "$T/b.img" atime,mtime,ctime | tr ' ' _) bytes=$((w1 - w0)) seconds=$(elapsed "$t0" "$t1")" \
		>"$T/e4defrag.extra"

	# A rewrite: cp -a into a fresh file system of the same size and options.
	# shellcheck disable=SC2046
	mke2fs -q -F -t ext4 $(opts_for "$kind") "$T/c.img" "${SIZE}M" || die "mke2fs for the rewrite failed"
	loop_mount "$base" "$src" ro || die "cannot mount the image to copy"
	loop_mount "$T/c.img" "$mnt" || die "cannot mount the rewrite"
	sync
	w0=$(loop_written "$mnt")
	t0=$(now)
	cp -a "$src/." "$mnt/"
	sync
	t1=$(now)
	w1=$(loop_written "$mnt")
	loop_umount "$mnt" || die "cannot unmount the rewrite"
	loop_umount "$src" || die "cannot unmount the image"
	figures "$T/c.img" rewrite
	echo "verdict=$(verdict rewrite "$T/c.img" ino,atime,ctime,map,mapflags,flags,size | tr ' ' _) bytes=$((w1 - w0)) seconds=$(elapsed "$t0" "$t1")" \
		>"$T/rewrite.extra"

	table "$kind"
done
