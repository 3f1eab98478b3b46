# shellcheck shell=bash
# tests/lib/defrag-images.sh - images fragmented through the kernel, for
# defrag4fs's tests and benchmark.  Sourced after common.sh, with $T made
# (make_tmpdir) and root able to loop-mount (need_root_loop).
#
#   defrag_img_concurrent IMG SIZE_MB [MKE2FS_OPTION...]
#                   writers taking turns appending small chunks to their
#                   own files (one writing its pieces in random order),
#                   fsyncing now and then: files in many extents
#   defrag_img_aged_tree IMG SIZE_MB NFILES [MKE2FS_OPTION...]
#                   an aged source-like tree: nested directories, NFILES
#                   lognormal-sized files created in interleaved order, then
#                   rounds of deletes, rewrites, appends, renames and new
#                   files: a directory's files scattered over block groups
#   defrag_img_shattered IMG SIZE_MB [MKE2FS_OPTION...]
#                   a volume filled with small files, every other one
#                   deleted, then one large file (large.bin) written into
#                   the holes: free space shattered, the large file in many
#                   extents (mke2fs -i 4096 unless the options say
#                   otherwise: the small files need inodes)
#
# Each makes IMG (SIZE_MB MiB, sparse) with mke2fs from the private
# mke2fs.conf of image-build.sh (ext4, 4 KiB blocks unless the options say
# otherwise: "-t ext3" gives block-mapped files, "-b 1024" small blocks),
# loop-mounts it, runs tests/tools/fragment-workload.py KIND on it, and
# unmounts it and detaches the loop device, also when something fails.
# All of them also make special/ (hard links, sparse and fallocated files,
# symlinks, xattrs, empty files, a fifo, a device, immutable and append-only
# files, varied owners, modes and times; see fragment-workload.py).
#
# The mkfs (UUID, hash seed, time) and the workload's calls are fixed by
# $DEFRAG_IMG_SEED (default 1); the kernel's allocation is its own.
# $DEFRAG_IMG_FILL overrides the workload's fill fraction.
# Each prints the workload's summary line and returns 0, or says what
# failed on stderr and returns 1.
#
#   defrag_manifest IMG OUT
#                   tests/tools/manifest.py's manifest of IMG (every
#                   object's bytes, metadata, times, xattrs, flags and
#                   logical map) from a read-only mount on $mnt, into OUT;
#                   a failure to mount or to take it is a failed check
#                   (common.sh), and returns 1 when nothing was taken

# shellcheck source-path=SCRIPTDIR source=image-build.sh
. "$EXT4FS_TESTS_LIB/image-build.sh"

DEFRAG_WORKLOAD=$top_srcdir/tests/tools/fragment-workload.py

defrag_img_concurrent() {
	local img=$1 mb=$2
	shift 2
	_defrag_img_build concurrent "$img" "$mb" "" "$@"
}

defrag_img_aged_tree() {
	local img=$1 mb=$2 nfiles=$3
	shift 3
	_defrag_img_build aged "$img" "$mb" "--files=$nfiles" "$@"
}

defrag_img_shattered() {
	local img=$1 mb=$2
	shift 2
	_defrag_img_build shattered "$img" "$mb" "" -i 4096 "$@"
}

# _defrag_img_build KIND IMG SIZE_MB WORKLOAD_ARG [MKE2FS_OPTION...]
_defrag_img_build() {
	local kind=$1 img=$2 mb=$3 warg=$4 rc=0 m
	shift 4
	# run_mkfs (image-build.sh) reads these.
	local SIZE=${mb}M FAKE_TIME=1700000000 log="$T/defrag-mkfs.log"
	local seed_n=${DEFRAG_IMG_SEED:-1}
	local uuid seed
	uuid=$(printf 'd3f4a600-0000-4000-8000-%012d' "$seed_n")
	seed=$(printf 'd3f4a600-0000-4000-8000-%012d' "$((seed_n + 1000))")
	# ext4 unless the options name a type (mke2fs takes -t only once);
	# the private mke2fs.conf makes 4 KiB blocks unless they say -b.
	local MKFS=(-t ext4) a
	for a in "$@"; do
		case $a in -t | -t*) MKFS=() ;; esac
	done
	[ -f "$T/mke2fs.conf" ] || write_mke2fs_conf "$T/mke2fs.conf"
	if ! run_mkfs "$img" "defrag-$kind" "$@"; then
		echo "defrag-images: mke2fs failed for $img" >&2
		return 1
	fi
	m=$(mktemp -d "$T/defrag-mnt.XXXXXX")
	if ! loop_mount "$img" "$m"; then
		echo "defrag-images: cannot mount $img" >&2
		return 1
	fi
	python3 "$DEFRAG_WORKLOAD" "$kind" "$m" --seed="$seed_n" \
		${warg:+"$warg"} ${DEFRAG_IMG_FILL:+--fill="$DEFRAG_IMG_FILL"} || rc=$?
	if ! loop_umount "$m"; then
		echo "defrag-images: cannot unmount $m" >&2
		return 1
	fi
	rmdir "$m"
	if [ "$rc" != 0 ]; then
		echo "defrag-images: the $kind workload failed on $img (exit $rc)" >&2
		return 1
	fi
}

defrag_manifest() {
	loop_mount "$1" "$mnt" ro || { failed "cannot mount $1"; return 1; }
	python3 "$top_srcdir/tests/tools/manifest.py" take "$mnt" >"$2" || failed "manifest.py take failed on $1"
	loop_umount "$mnt" || fail "cannot unmount $mnt"
}
