#!/usr/bin/env bash
# tests/fuzz/make-fsck-corpus.sh - regenerate the seeds of the checker's fuzz
# target (fuzz_fsck.c, issue 17).
#
# usage: make-fsck-corpus.sh [OUTDIR]   (default: the corpus-fsck/ dir next to this script)
#
# Every seed is a small, clean file system (e2fsck -fn finds nothing) made
# by mke2fs -d from a small tree: files, a sparse file, a file behind a
# double-indirect block (1 KiB blocks), directories, an htree directory
# (e2fsck -D), fast and slow symlinks and a fifo.  ext2, ext3 and ext4 with
# 1 KiB and 4 KiB blocks, with and without a journal, one with a journal
# that needs recovery (a transaction written by debugfs), one with inline
# data, one with an orphan file, one with uninit_bg instead of
# metadata_csum.  Everything that could vary is pinned as in
# make-corpus.sh (corpus-common.sh), so running the script again gives the
# same bytes (with the same e2fsprogs version), but for the two seeds with a
# transaction debugfs writes: their journal blocks differ from run to run.
#
# All trailing zero bytes are cut off: the fuzz target pads an image back
# with zeros to the size its superblock gives, so the seeds are small but
# whole file systems.
#
# The regress-* files beside them are not made here: they are inputs the
# fuzz target found that broke its promise (-fy, then -fn not clean), kept,
# trailing zeros cut, so that "make check" replays each repair (issue 17).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/corpus-fsck}
PATH=$PATH:/sbin:/usr/sbin
for c in mke2fs e2fsck dumpe2fs debugfs python3; do
	command -v "$c" >/dev/null || { echo "make-fsck-corpus.sh: $c is required" >&2; exit 1; }
done

# shellcheck source=corpus-common.sh
. "$here/corpus-common.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/make-fsck-corpus.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

corpus_mke2fs_conf "$work/mke2fs.conf" "	ext3 = {
		features = has_journal
	}
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}"

# The source tree: small, but with something for every pass to walk.
src=$work/tree
mkdir -p "$src/dir/sub" "$src/htree" "$src/empty-dir"
printf 'hello, world\n' >"$src/hello.txt"
printf 'a\n' >"$src/dir/a"
printf 'b in sub\n' >"$src/dir/sub/b"
: >"$src/empty"
ln -s hello.txt "$src/fastlink"
ln -s "dir/sub/../sub/./b-is-the-target-of-a-symlink-too-long-for-i_block-xxxxxxxx" "$src/slowlink"
mkfifo "$src/fifo"
# Three runs apart: several extents, or direct blocks with holes.
python3 - "$src/sparse" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(3):
        f.seek(i * 20 * 1024)
        f.write(bytes([65 + i]) * 1500)
    f.truncate(64 * 1024)
EOF
# Data beyond 268 KiB: a double-indirect block with 1 KiB blocks.
python3 - "$src/far" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    f.seek(300 * 1024)
    f.write(b"far away\n")
EOF
# Many names for one inode: a directory of several 1 KiB blocks, indexed by e2fsck -D.
printf 'linked\n' >"$src/htree/target"
for i in $(seq -w 1 40); do
	ln "$src/htree/target" "$src/htree/entry-with-a-longish-name-$i"
done
find "$src" -exec touch -h -d "$STAMP" {} +

# Pin every used inode's times (mke2fs -d copies atime and ctime, which no one can pin).
pin_times() {
	local img=$1 n i
	n=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ { print $2 + 0 }')
	for ((i = 1; i <= n; i++)); do echo "stat <$i>"; done >"$work/stat.cmds"
	debugfs -f "$work/stat.cmds" "$img" 2>/dev/null |
		awk '/^Inode: / { ino = $2 } /^Links: / && $2 > 0 && ino >= 2 {
			printf "sif <%d> atime @1700000000\nsif <%d> ctime @1700000000\nsif <%d> mtime @1700000000\n", ino, ino, ino }' \
		>"$work/time.cmds"
	debugfs -w -f "$work/time.cmds" "$img" >/dev/null 2>&1
}

# make_seed NAME SIZE_KIB MKE2FS-OPTIONS...: a clean image in $work/NAME.img
make_seed() {
	local name=$1 kib=$2 img=$work/$1.img
	shift 2
	rm -f "$img"
	mke2fs -q -F -U "$UUID" -E "hash_seed=$HASH_SEED,root_owner=0:0,nodiscard" \
		-d "$src" "$@" "$img" "${kib}k" >/dev/null
	pin_times "$img"
	# Index the directories (htree) and settle anything mke2fs left; 1 = fixed.
	e2fsck -fyD "$img" >/dev/null 2>&1 || [ $? -le 1 ] || {
		echo "make-fsck-corpus.sh: e2fsck failed on $name" >&2
		exit 1
	}
	e2fsck -fn "$img" >/dev/null 2>&1 || { echo "make-fsck-corpus.sh: $name is not clean" >&2; exit 1; }
}

# needs_recovery NAME: log a transaction rewriting hello.txt's block, left for replay.
needs_recovery() {
	local img=$work/$1.img blk
	blk=$(debugfs -R "bmap /hello.txt 0" "$img" 2>/dev/null)
	printf 'hello, journal\n' >"$work/payload"
	debugfs -w -f - "$img" >/dev/null 2>&1 <<EOF
jo
jw -b $blk $work/payload
jc
EOF
	dumpe2fs -h "$img" 2>/dev/null | grep -q needs_recovery ||
		{ echo "make-fsck-corpus.sh: $1 does not need recovery" >&2; exit 1; }
}

# finish NAME: cut the trailing zeros (fuzz_fsck pads them back) and copy to the corpus.
finish() {
	local img=$work/$1.img
	python3 - "$img" <<'EOF'
import sys
path = sys.argv[1]
data = open(path, "rb").read()
open(path, "r+b").truncate(len(data.rstrip(b"\0")))
EOF
	mkdir -p "$out"
	cp "$img" "$out/$1"
	printf '%-24s %7d bytes\n' "$1" "$(stat -c %s "$img")"
}

seed() {
	make_seed "$@"
	finish "$1"
}

seed ext2-1k            256 -t ext2 -b 1024 -N 32
seed ext2-4k           1024 -t ext2 -b 4096 -N 32
seed ext3-1k           2560 -t ext3 -b 1024 -N 32 -J size=1
seed ext3-4k           10240 -t ext3 -b 4096 -N 32 -J size=4 -O ^resize_inode
seed ext4-1k           2560 -t ext4 -b 1024 -N 32 -J size=1
seed ext4-4k           1024 -t ext4 -b 4096 -N 32 -O ^has_journal,^resize_inode
seed ext4-1k-inline     512 -t ext4 -b 1024 -N 32 -O ^has_journal,inline_data
seed ext4-1k-nocsum     512 -t ext4 -b 1024 -N 32 -O ^has_journal,^metadata_csum,^64bit,uninit_bg
seed ext4-1k-orphan-file 2560 -t ext4 -b 1024 -N 32 -J size=1 -O orphan_file
make_seed ext4-1k-recover 2560 -t ext4 -b 1024 -N 32 -J size=1
needs_recovery ext4-1k-recover
finish ext4-1k-recover
make_seed ext3-1k-recover 2560 -t ext3 -b 1024 -N 32 -J size=1
needs_recovery ext3-1k-recover
finish ext3-1k-recover

du -cb "$out"/* | tail -n 1
