#!/bin/bash
# t5000-defrag-images.sh - the kernel-fragmented images defrag4fs is tested
# and benchmarked on (lib/defrag-images.sh), and the oracles it is judged
# by (tools/manifest.py, tools/layout-figures.py), at CI size.
#
# Each image kind (concurrent writers, aged tree, shattered free space) is
# built on ext4 with 4 KiB blocks, ext4 with 1 KiB blocks and ext3
# (block-mapped), then:
#   - the real `e2fsck -fn` must find it clean;
#   - it must hold what a defragmenter must keep (hard links, holes,
#     unwritten extents on ext4, fast and slow symlinks, xattrs, a fifo, a
#     device, immutable and append-only files), and no extent-mapped file
#     on ext3;
#   - a manifest taken on a read-only mount must equal one taken after a
#     remount (manifest.py compare finds nothing);
#   - after deliberate changes (a byte of a file, an xattr of a hard-linked
#     file, the immutable flag, an atime) compare must report exactly them,
#     so the oracle can fail;
#   - layout-figures.py must show the image fragmented: concurrent, at
#     least 8 of the 16 writers' files above their ideal extent count;
#     shattered, the large file in 100 extents or more and no free extent
#     of 64 MiB; aged tree, a directory's files in 2 block groups or more
#     on average.
# The figures are printed to the log.
#
# T5000_CASES=REGEX runs only the cases (NAME-KIND, e.g. ext3-aged) that
# match; T5000_MB sets the image size in MiB (default 48).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs e2fsck dumpe2fs e2freefrag python3 losetup
need_root_loop
make_tmpdir
# shellcheck source-path=SCRIPTDIR source=../lib/defrag-images.sh
. "$EXT4FS_TESTS_LIB/defrag-images.sh"

TOOLS=$top_srcdir/tests/tools
MB=${T5000_MB:-48}
CASES=${T5000_CASES:-.}
mnt=$T/mnt
mkdir "$mnt"

# json_get FILE KEY: one figure of layout-figures.py --json.
json_get() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# ro_manifest IMG OUT [FIGURES]: a manifest (and the layout figures) of IMG
# from a read-only mount.
ro_manifest() {
	loop_mount "$1" "$mnt" ro || fail "cannot mount $1 read-only"
	python3 "$TOOLS/manifest.py" take "$mnt" >"$2" || fail "manifest.py take failed on $1"
	if [ -n "${3:-}" ]; then
		python3 "$TOOLS/layout-figures.py" "$mnt" --image "$1" >"$3.txt" &&
			python3 "$TOOLS/layout-figures.py" "$mnt" --image "$1" --json >"$3" ||
			fail "layout-figures.py failed on $1"
	fi
	loop_umount "$mnt" || fail "cannot unmount $1"
}

# check_contents NAME FSTYPE MANIFEST: the objects a defragmenter must keep.
check_contents() {
	local name=$1 fstype=$2 m=$3 what
	for what in '"nlink": 3' '"type": "symlink"' '"type": "fifo"' '"type": "chr"' \
		'"flags": "i"' '"flags": "a"' '"user.big": "sha256:' '"trusted.md5"' \
		'"security.label"' '"size": 0' '"path": "special/sparse"'; do
		grep -qF "$what" "$m" || fail "$name: no $what in its manifest"
	done
	grep -q '"path": "special/slow-link", "size": [0-9][0-9][0-9]' "$m" ||
		fail "$name: no slow symlink"
	case $fstype in
	ext3)
		! grep -q '"mapflags": "e' "$m" || fail "$name: an extent-mapped file on ext3"
		;;
	*)
		grep -qF '"unwritten"' "$m" || fail "$name: no unwritten extent"
		;;
	esac
}

# mutate IMG: the deliberate changes whose report check_mutations expects.
mutate() {
	loop_mount "$1" "$mnt" || fail "cannot mount $1"
	python3 - "$mnt" "$TOOLS" <<-'EOF' || fail "cannot change $1"
		import os, sys
		mnt, tools = sys.argv[1], sys.argv[2]
		sys.path.insert(0, tools)
		import kernelfs
		s = os.path.join(mnt, "special")
		fd = os.open(os.path.join(s, "xattrs"), os.O_RDWR | os.O_NOATIME)
		os.pwrite(fd, bytes([os.pread(fd, 1, 100)[0] ^ 1]), 100)
		os.close(fd)
		os.setxattr(os.path.join(s, "linked"), "user.new", b"1")
		fd = os.open(os.path.join(s, "immutable"), os.O_RDONLY)
		kernelfs.set_flags(fd, kernelfs.get_flags(fd) & ~kernelfs.FS_IMMUTABLE_FL)
		os.close(fd)
		st = os.lstat(os.path.join(s, "sparse"))
		os.utime(os.path.join(s, "sparse"), ns=(st.st_atime_ns + 1, st.st_mtime_ns))
	EOF
	loop_umount "$mnt" || fail "cannot unmount $1"
}

check_mutations() {
	local name=$1 a=$2 b=$3 rc=0
	python3 "$TOOLS/manifest.py" compare "$a" "$b" --ignore ctime,mtime >"$T/diff" || rc=$?
	[ "$rc" = 1 ] || fail "$name: compare exited $rc after deliberate changes, not 1"
	cat >"$T/diff.want" <<-'EOF'
		special/immutable: flags
		special/linked.2: xattrs
		special/linked: xattrs
		special/sparse: atime
		special/sub/linked.3: xattrs
		special/xattrs: sha256
	EOF
	sed 's/^\([^ ]*\) \([a-z0-9]*\) .*/\1 \2/' "$T/diff" | sort >"$T/diff.got"
	if ! diff -u "$T/diff.want" "$T/diff.got"; then
		cat "$T/diff"
		fail "$name: compare did not report exactly the deliberate changes"
	fi
	# Without --ignore, the times of the changed files differ too.
	python3 "$TOOLS/manifest.py" compare "$a" "$b" | grep -q '^special/xattrs: mtime ' ||
		fail "$name: compare does not see an mtime change"
}

# check_fragmented NAME KIND FIGURES
check_fragmented() {
	local name=$1 kind=$2 f=$3 v
	case $kind in
	concurrent)
		v=$(json_get "$f" files_above_ideal)
		[ "$v" -ge 8 ] || fail "$name: only $v files above their ideal"
		;;
	shattered)
		[ "$(json_get "$f" largest_file)" = large.bin ] ||
			fail "$name: large.bin is not the largest file"
		v=$(json_get "$f" largest_file_extents)
		[ "$v" -ge 100 ] || fail "$name: large.bin is in only $v extents"
		v=$(json_get "$f" free_share_64m)
		[ "$v" = 0.0 ] || fail "$name: $v of free space in extents >= 64 MiB"
		;;
	aged)
		v=$(json_get "$f" groups_per_dir_mean)
		python3 -c "import sys; sys.exit(not float(sys.argv[1]) >= 2.0)" "$v" ||
			fail "$name: a directory's files span $v block groups on average"
		;;
	esac
}

# Small block groups on the 4 KiB images, so that a CI-sized volume has
# several (1 KiB blocks have 8 MiB groups already).
CONFIGS=(
	"ext4-4k:ext4:-g 2048"
	"ext4-1k:ext4:-b 1024"
	"ext3:ext3:-t ext3 -g 2048"
)
ran=0
for cfg in "${CONFIGS[@]}"; do
	fs=${cfg%%:*}
	rest=${cfg#*:}
	fstype=${rest%%:*}
	read -r -a opts <<<"${rest#*:}"
	for kind in concurrent aged shattered; do
		name=$fs-$kind
		[[ $name =~ $CASES ]] || continue
		ran=$((ran + 1))
		img=$T/$name.img
		start=$(date +%s.%N)
		case $kind in
		concurrent) defrag_img_concurrent "$img" "$MB" "${opts[@]}" >"$T/build.log" ;;
		aged) defrag_img_aged_tree "$img" "$MB" 1500 "${opts[@]}" >"$T/build.log" ;;
		shattered) defrag_img_shattered "$img" "$MB" "${opts[@]}" >"$T/build.log" ;;
		esac || fail "$name: building the image failed"
		secs=$(python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' \
			"$start" "$(date +%s.%N)")
		echo "$name: built in ${secs}s: $(cat "$T/build.log")"
		if ! e2fsck -fn "$img" >"$T/fsck.log" 2>&1; then
			cat "$T/fsck.log"
			fail "$name: e2fsck -fn does not find the image clean"
		fi
		ro_manifest "$img" "$T/$name.m1" "$T/$name.fig"
		check_contents "$name" "$fstype" "$T/$name.m1"
		ro_manifest "$img" "$T/$name.m2"
		if ! python3 "$TOOLS/manifest.py" compare "$T/$name.m1" "$T/$name.m2"; then
			fail "$name: the manifest changed across a read-only remount"
		fi
		sed 's/^/    /' "$T/$name.fig.txt"
		check_fragmented "$name" "$kind" "$T/$name.fig"
		mutate "$img"
		ro_manifest "$img" "$T/$name.m3"
		check_mutations "$name" "$T/$name.m1" "$T/$name.m3"
		rm -f "$img"
	done
done
[ "$ran" -gt 0 ] || fail "T5000_CASES=$CASES matches no case"
echo "PASS: $ran images built, clean, fragmented, and their manifests compared"
