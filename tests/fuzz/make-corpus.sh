#!/usr/bin/env bash
# tests/fuzz/make-corpus.sh - regenerate the fuzzer's seed images.
#
# usage: make-corpus.sh [OUTDIR]        (default: the corpus/ dir next to this script)
#
# Every seed is a whole, tiny file system image (the fuzz target treats its
# input as an image), made by mke2fs -d from a small tree with files, sparse
# files (indirect blocks, multi-level extent trees), directories, an htree
# directory (e2fsck -D), fast and slow symlinks, a fifo and extended
# attributes.  Everything that could vary is pinned: a private mke2fs.conf,
# fixed UUID and hash seed, E2FSPROGS_FAKE_TIME and file times, so running the
# script again gives the same bytes (with the same e2fsprogs version).
#
# Trailing all-zero blocks are cut off to keep the corpus small, but never
# below the end of the last inode table, so the seeds still read cleanly.
# Reads past the cut are errors the library must report, which is worth
# fuzzing too.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/corpus}
PATH=$PATH:/sbin:/usr/sbin
for c in mke2fs e2fsck dumpe2fs debugfs tune2fs python3; do
	command -v "$c" >/dev/null || { echo "make-corpus.sh: $c is required" >&2; exit 1; }
done

# shellcheck source=corpus-common.sh
. "$here/corpus-common.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/make-corpus.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

corpus_mke2fs_conf "$work/mke2fs.conf" "	ext4 = {
		features = extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}"

# The source tree.  xattrs only when the temp file system takes user xattrs.
src=$work/tree
mkdir -p "$src/dir/sub" "$src/htree"
printf 'hello, world\n' >"$src/hello.txt"
printf 'a\n' >"$src/dir/a"
printf 'b in sub\n' >"$src/dir/sub/b"
: >"$src/empty"
ln -s hello.txt "$src/fastlink"
ln -s "dir/sub/../sub/./b-is-the-target-of-a-symlink-too-long-for-i_block-xxxxxxxx" "$src/slowlink"
ln -s dir/sub/b "$src/dir/rel"
ln -s /nonexistent "$src/dangling"
mkfifo "$src/fifo"
# Five runs apart: five extents (a depth-1 tree), or direct + indirect blocks.
python3 - "$src/sparse" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(5):
        f.seek(i * 20 * 1024)
        f.write(bytes([65 + i]) * 1500)
    f.truncate(100 * 1024)
EOF
# Data beyond 268 KiB: a double-indirect block with 1 KiB blocks; a hole before it.
python3 - "$src/far" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    f.seek(300 * 1024)
    f.write(b"far away\n" * 100)
EOF
# Many names for one inode: a directory of several blocks, indexed by e2fsck -D.
printf 'linked\n' >"$src/htree/target"
for i in $(seq -w 1 60); do
	ln "$src/htree/target" "$src/htree/entry-with-a-longish-name-$i"
done
if setfattr -n user.probe -v 1 "$src/hello.txt" 2>/dev/null; then
	setfattr -x user.probe "$src/hello.txt"
	setfattr -n user.small -v tiny "$src/hello.txt"
	setfattr -n user.big -v "$(printf 'x%.0s' $(seq 1 300))" "$src/hello.txt"
	setfattr -n user.dir -v "on a directory" "$src/dir"
	setfattr -n trusted.t -v 0x00ff00ff "$src/dir/a" 2>/dev/null || true
else
	echo "make-corpus.sh: no user xattrs in $work; seeds will have none" >&2
fi
find "$src" -exec touch -h -d "$STAMP" {} +

# make_seed NAME SIZE_KIB MKE2FS-OPTIONS...  ($TUNE_E: tune2fs -E options to apply)
make_seed() {
	local name=$1 kib=$2 img=$work/$1.img
	shift 2
	rm -f "$img"
	mke2fs -q -F -U "$UUID" -E "hash_seed=$HASH_SEED,root_owner=0:0,nodiscard" \
		-d "$src" "$@" "$img" "${kib}k" >/dev/null
	if [ -n "${TUNE_E:-}" ]; then
		tune2fs -E "$TUNE_E" "$img" >/dev/null 2>&1 || { echo "make-corpus.sh: tune2fs failed on $name" >&2; exit 1; }
	fi
	# mke2fs -d copies atime and ctime from the source tree, which no one
	# can pin: set every used inode's times to the fixed stamp.
	local n i
	n=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ { print $2 + 0 }')
	for ((i = 1; i <= n; i++)); do echo "stat <$i>"; done >"$work/stat.cmds"
	debugfs -f "$work/stat.cmds" "$img" 2>/dev/null |
		awk '/^Inode: / { ino = $2 } /^Links: / && $2 > 0 && ino >= 2 {
			printf "sif <%d> atime @1700000000\nsif <%d> ctime @1700000000\nsif <%d> mtime @1700000000\n", ino, ino, ino }' \
		>"$work/time.cmds"
	debugfs -w -f "$work/time.cmds" "$img" >/dev/null 2>&1
	# Index the directories (htree) and settle anything mke2fs left; 1 = fixed.
	e2fsck -fyD "$img" >/dev/null 2>&1 || [ $? -le 1 ] || {
		echo "make-corpus.sh: e2fsck failed on $name" >&2
		exit 1
	}
	e2fsck -fn "$img" >/dev/null 2>&1 || { echo "make-corpus.sh: $name is not clean" >&2; exit 1; }
	local bs keep
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Block size/ { gsub(/ /, "", $2); print $2 }')
	keep=$(dumpe2fs "$img" 2>/dev/null |
		awk -v bs="$bs" '/Inode table at/ { split($4, r, "-"); if (r[2] + 1 > m) m = r[2] + 1 }
				 END { print m * bs }')
	python3 - "$img" "$keep" "$bs" <<'EOF'
import sys
path, keep, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
end = len(data.rstrip(b"\0"))
end = max(keep, (end + bs - 1) // bs * bs)
open(path, "r+b").truncate(end)
EOF
	mkdir -p "$out"
	cp "$img" "$out/$name"
	printf '%-28s %7d bytes\n' "$name" "$(stat -c %s "$img")"
}

make_seed ext2-1k        160 -t ext2 -b 1024 -N 32 -I 128 -O ^resize_inode
make_seed ext2-1k-resize 256 -t ext2 -b 1024 -N 32
make_seed ext2-rev0      128 -t ext2 -b 1024 -N 32 -r 0
make_seed ext3-uninit    160 -t ext2 -b 1024 -N 32 -O uninit_bg,^resize_inode
make_seed ext4-1k        192 -t ext4 -b 1024 -N 32 -O ^resize_inode
make_seed ext4-2groups   512 -t ext4 -b 1024 -N 32 -g 256 -O ^resize_inode
make_seed ext4-inline    128 -t ext4 -b 1024 -N 32 -O inline_data,^resize_inode
make_seed ext4-4k        512 -t ext4 -b 4096 -N 32 -O ^resize_inode
make_seed ext4-bigalloc  512 -t ext4 -b 1024 -N 32 -O bigalloc,^resize_inode -C 4096
make_seed ext4-nocsum    160 -t ext4 -b 1024 -N 32 -O ^metadata_csum,^64bit,uninit_bg,^resize_inode
make_seed ext4-casefold  160 -t ext4 -b 1024 -N 32 -O casefold,^resize_inode
# The other directory hashes (e2fsck -D indexes with the default one).
TUNE_E=hash_alg=tea    make_seed ext2-tea-hash    160 -t ext2 -b 1024 -N 32 -I 128 -O ^resize_inode
TUNE_E=hash_alg=legacy make_seed ext2-legacy-hash 160 -t ext2 -b 1024 -N 32 -I 128 -O ^resize_inode

# Regression inputs: seeds damaged the way fuzzing found bugs, so that
# "make check" (replay) keeps exercising the fixes.
poke() {
	# poke IMG OFFSET VALUE: store VALUE as a little-endian 32-bit word.
	python3 -c 'import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2], 0)); f.write(struct.pack("<I", int(sys.argv[3], 0)))' "$@"
}
regress() {
	# regress NAME BASE: copy seed BASE to $work/NAME (then damaged) and into the corpus.
	cp "$out/$2" "$work/$1"
	R=$work/$1
}
finish() {
	cp "$R" "$out/$(basename "$R")"
	printf '%-28s %7d bytes\n' "$(basename "$R")" "$(stat -c %s "$R")"
}
# s_blocks_count of 2^38 in a 50 KiB image: descriptors must not be sized by it.
regress regress-huge-blocks-count ext4-1k
poke "$R" 0x404 0xFFFFFFFF
poke "$R" 0x550 0x3F
finish
# s_inodes_count ending inside group 0: the scan must not run past it.
regress regress-inodes-count-short ext4-2groups
poke "$R" 0x400 12
finish
# An inline-data file of enormous i_size: reads past the inline area.
regress regress-inline-huge-size ext4-inline
debugfs -w -R "sif /hello.txt size 0x9f00000000000123" "$R" >/dev/null 2>&1
finish
# An extent index whose child is beyond the file system: never handed to callers.
regress regress-extent-index-beyond-fs ext4-1k
debugfs -w -R "sif /sparse block[4] 11520" "$R" >/dev/null 2>&1
finish

du -cb "$out"/* | tail -n 1
