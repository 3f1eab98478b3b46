#!/bin/bash
# t3955-e4fsck-verbose.sh - e4fsck -v prints e2fsck's statistics block:
# `e4fsck -fnv` and `e2fsck -fnv` print the same (the version banner on
# stderr aside), with -m 1 and -m 4, on images from mke2fs -d at 1 KiB and
# 4 KiB blocks, ext4 (extents) and ext3 (indirect maps), holding every kind
# of file: regular files, directories, hard links, fast and slow symlinks,
# a fifo, a socket, character and block devices, a sparse file above
# 2 GiB, files and a directory made non-contiguous, a file spanning block
# groups, an orphan file, and (on one image) a bad blocks list.  --json carries the same
# numbers as an object "statistics".

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs e2fsck debugfs python3
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir
cd "$T"

failed=0
ok() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

# The tree mke2fs -d copies: every kind of file it can make without root.
mkdir -p tree/d1/d2/d3 tree/d4
echo hello >tree/f1
ln tree/f1 tree/d1/f1-second-name
ln tree/f1 tree/d1/d2/f1-third-name
head -c 50000 /dev/urandom >tree/d4/medium
ln tree/d4/medium tree/medium-again
ln -s f1 tree/fast-symlink
ln -s "$(printf 'long-target-%.0s' $(seq 1 10))" tree/slow-symlink
mkfifo tree/fifo tree/d1/fifo2
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' tree/socket
truncate -s 3G tree/large-sparse
printf 'tail' | dd of=tree/large-sparse bs=1 seek=$((100 << 20)) conv=notrunc 2>/dev/null
head -c $((12 << 20)) /dev/urandom >tree/spans-groups
head -c $((40 << 10)) /dev/urandom >tree/to-punch
: >empty
head -c 300 /dev/urandom >small
truncate -s 1M sparse-source
printf 'a' | dd of=sparse-source bs=1 seek=0 conv=notrunc 2>/dev/null
printf 'b' | dd of=sparse-source bs=1 seek=$((300 << 10)) conv=notrunc 2>/dev/null
printf 'c' | dd of=sparse-source bs=1 seek=$((700 << 10)) conv=notrunc 2>/dev/null

# What debugfs adds after mke2fs: devices, a sparse file, a punched file, and
# a directory whose blocks interleave with its files' (long names fill a
# block with a few entries).
{
	echo "mknod char-device c 1 3"
	echo "mknod block-device b 7 0"
	echo "write sparse-source /sparse-written"
	echo "punch /to-punch 10 19"
	echo "mkdir /grown"
	for i in $(seq 1 24); do
		echo "write small /grown/$(printf "entry-%02d-%0200d" "$i" 0)"
	done
	echo "write empty /empty-file"
} >debugfs.cmds

printf '%s\n' 3000 3001 3007 5000 >badblocks.list

# make_image NAME TYPE BLOCKSIZE MB [mke2fs args...]
make_image() {
	local name=$1 type=$2 bs=$3 mb=$4
	shift 4
	rm -f "$name"
	mke2fs -q -F -t "$type" -b "$bs" -d tree "$@" "$name" "${mb}M" >mkfs.out 2>&1 ||
		{ cat mkfs.out; fail "mke2fs $type -b $bs failed"; }
	debugfs -w -f debugfs.cmds "$name" >debugfs.out 2>&1 || { cat debugfs.out; fail "debugfs on $name failed"; }
	e2fsck -fn "$name" >e2fsck.out 2>&1 || { cat e2fsck.out; fail "$name is not clean to e2fsck"; }
}

# compare NAME: e4fsck -fnv (-m 1 and 4) prints what e2fsck -fnv prints.
compare() {
	local name=$1 j
	e2fsck -fnv "$name" >"$name.e2" 2>/dev/null || true
	grep -q 'files$' "$name.e2" || { bad "$name: e2fsck -fnv printed no statistics"; return; }
	for j in 1 4; do
		"$E4FSCK" -fnv -m "$j" "$name" >"$name.e4.$j" 2>/dev/null || true
		if diff -u "$name.e2" "$name.e4.$j" >"$name.diff.$j"; then
			ok "$name -m $j: statistics as e2fsck's"
		else
			bad "$name -m $j: e4fsck -fnv differs from e2fsck -fnv"
			cat "$name.diff.$j"
		fi
	done
}

make_image ext4-1k ext4 1024 96
# The orphan file (mke2fs 1.47) is an ordinary inode number checked as a reserved one.
make_image ext4-4k ext4 4096 600 -O orphan_file
make_image ext3-1k ext3 1024 96
make_image ext3-4k ext3 4096 600
make_image ext4-1k-bad ext4 1024 64 -l badblocks.list
for img in ext4-1k ext4-4k ext3-1k ext3-4k ext4-1k-bad; do
	compare "$img"
done

# The images must exercise what the block reports: each kind of file, links,
# both kinds of symlink, large files, non-contiguous files and directories,
# indirect levels, deep enough extent trees, bad blocks.
all=$(cat ./*.e2)
for want in '^ +[1-9][0-9]* character device file' '^ +[1-9][0-9]* block device file' '^ +[1-9][0-9]* fifo' \
	'^ +[1-9][0-9]* socket' '^ +[1-9][0-9]* links?$' '\([1-9][0-9]* fast symbolic link' \
	'^ +[1-9][0-9]* large file' '^ +[1-9][0-9]* non-contiguous files? ' \
	'^ +[1-9][0-9]* non-contiguous director' 'blocks: [1-9][0-9]*/[1-9][0-9]*/[1-9]' \
	'histogram: [0-9]+/[1-9]' '^ +[1-9][0-9]* bad block'; do
	if grep -Eq "$want" <<<"$all"; then
		ok "some image shows /$want/"
	else
		bad "no image shows /$want/: the test images lost a case"
	fi
done

# --json: "statistics" holds the block's numbers (compared with e2fsck's text).
for img in ext4-1k ext3-4k; do
	"$E4FSCK" -fn -m 4 --json "$img.json" "$img" >/dev/null 2>&1 || true
	if python3 - "$img.json" "$img.e2" <<-'EOF'; then
		import json, re, sys
		stats = json.load(open(sys.argv[1]))["statistics"]
		text = open(sys.argv[2]).read()
		def num(pattern):
		    return int(re.search(r"^ *(\d+) " + pattern, text, re.M).group(1))
		want = {
		    "inodes_used": num(r"inodes? used"),
		    "noncontiguous_files": num(r"non-contiguous files? "),
		    "noncontiguous_directories": num(r"non-contiguous director"),
		    "blocks_used": num(r"blocks? used"),
		    "bad_blocks": num(r"bad blocks?$"),
		    "large_files": num(r"large files?$"),
		    "regular_files": num(r"regular files?$"),
		    "directories": num(r"director(y|ies)$"),
		    "character_devices": num(r"character device files?$"),
		    "block_devices": num(r"block device files?$"),
		    "fifos": num(r"fifos?$"),
		    "links": num(r"links?$"),
		    "symbolic_links": num(r"symbolic links? "),
		    "sockets": num(r"sockets?$"),
		    "files": num(r"files?$"),
		}
		m = re.search(r"\((\d+) fast symbolic link", text)
		want["fast_symbolic_links"] = int(m.group(1))
		m = re.search(r"ind/dind/tind blocks: (\d+)/(\d+)/(\d+)", text)
		want["inodes_with_ind"], want["inodes_with_dind"], want["inodes_with_tind"] = map(int, m.groups())
		m = re.search(r"Extent depth histogram: ([\d/]+)", text)
		bars = [int(x) for x in m.group(1).split("/")] if m else []
		want["extent_depth_histogram"] = bars + [0] * (5 - len(bars))
		wrong = {k: (stats.get(k), v) for k, v in want.items() if stats.get(k) != v}
		if wrong:
		    print("json differs (json, e2fsck):", wrong)
		    sys.exit(1)
		EOF
		ok "$img: --json statistics as the block"
	else
		bad "$img: --json statistics"
	fi
done

# After repairs: a directory cleared for being empty no longer counts (nor do its links).
# A small tree of its own: with -y, e2fsck also indexes linear directories of three or
# more blocks (pass 3A), which e4fsck does not do yet (README).
mkdir -p small-tree/d1 small-tree/d4
echo x >small-tree/d1/f
echo y >small-tree/d4/g
mke2fs -q -F -t ext4 -b 1024 -d small-tree rep-ours 16M >/dev/null 2>&1
debugfs -w -R "sif /d4 block[0] 0" rep-ours >/dev/null 2>&1 || true
cp rep-ours rep-ref
"$E4FSCK" -fyv rep-ours >rep.e4 2>/dev/null || true
e2fsck -fyv rep-ref >rep.e2 2>/dev/null || true
if ! grep -q 'zero-length directory' rep.e2; then
	bad "-fyv after clearing an empty directory: e2fsck did not clear /d4"
elif diff <(sed 's/rep-ours/IMG/' rep.e4 | grep -v '^e[24]fsck [0-9]') \
	<(sed 's/rep-ref/IMG/' rep.e2 | grep -v '^e[24]fsck [0-9]') >rep.diff; then
	ok "-fyv after clearing an empty directory: output and statistics as e2fsck's"
else
	bad "-fyv after clearing an empty directory"; sed 's/^/    /' rep.diff | head
fi

# Without -v, the one-line summary and no block.
"$E4FSCK" -fn ext4-1k >plain.out 2>/dev/null || true
if grep -q 'non-contiguous), ' plain.out && ! grep -q '^------------$' plain.out; then
	ok "no -v: the one-line summary"
else
	bad "no -v: expected only the one-line summary"
	cat plain.out
fi

exit "$failed"
