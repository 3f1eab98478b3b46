#!/bin/bash
# t3949-e4fsck-extents-more.sh - block maps past what e2fsck allows, judged
# by e2fsck 1.47 in -n, -p and -y.  e2fsck asks first whether an extent tree
# deeper than its block size needs (4 levels with 4 KiB blocks, 5 with
# 1 KiB) may be made shallower; a yes rebuilds it in pass 1E unasked, a no
# leaves it to the usual "could be shorter" suggestion.  A block-mapped
# directory's block past 2 GiB is cleared under the "too big" question.  A
# block map on bigalloc becomes an extent tree in pass 1E, whose failure
# for want of a free cluster is reported.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
need_cmd python3
damage_setup

free_blocks() { dumpe2fs -h "$1" 2>/dev/null | awk '/^Free blocks:/ { print $3 }'; }

# BS: ext4 with /big, and /deep: 40 blocks with every other one punched
# out, so twenty one-block extents in a leaf below the root (a tree of
# depth 1).  "map": ext3 with 1 KiB blocks, /big, a directory /d and a
# file /pad of four contiguous blocks.
base_image() {
	local img=$1 bs=$2
	rm -f "$img"
	if [ "${bs%:*}" = bigalloc ]; then
		# "bigalloc:N": 4 KiB clusters, /big, /frag (twelve blocks), and N clusters free.
		mke2fs -q -F -t ext4 -O bigalloc,^metadata_csum -b 1024 -C 4096 "$img" 8M >/dev/null 2>&1
		head -c 12288 /dev/urandom >"$T/frag"
		debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
			write $src/big big
			write $T/frag frag
		EOF
		# /fill leaves a few clusters (its tree may need one), one-cluster files the rest.
		local free i=0
		free=$(free_blocks "$img")
		# (not zeros: debugfs writes those as holes)
		head -c $(((free - 64) * 1024)) /dev/zero | tr '\0' z >"$T/fill"
		head -c 4096 /dev/zero | tr '\0' z >"$T/cluster"
		debugfs -w -R "write $T/fill fill" "$img" >/dev/null 2>&1
		while [ "$(free_blocks "$img")" -gt $((4 * ${bs#*:})) ] && [ $i -lt 64 ]; do
			i=$((i + 1))
			debugfs -w -R "write $T/cluster c$i" "$img" >/dev/null 2>&1
		done
		return
	fi
	if [ "$bs" = map ]; then
		mke2fs -q -F -t ext3 -b 1024 "$img" 8M >/dev/null 2>&1
		head -c 4096 /dev/urandom >"$T/pad"
		debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
			write $src/big big
			mkdir d
			write $T/pad pad
		EOF
		return
	fi
	mke2fs -q -F -t ext4 -O ^metadata_csum -b "$bs" "$img" 8M >/dev/null 2>&1
	head -c $((40 * bs)) /dev/urandom >"$T/deep"
	{
		echo "write $src/big big"
		echo "write $T/deep deep"
		for i in $(seq 1 2 39); do echo "punch deep $i $i"; done
	} | debugfs -w -f - "$img" >/dev/null 2>&1
}

# deepen DEPTH [1]: the command that makes /deep's tree DEPTH levels deep
# (the blocks of its last DEPTH - 1 extents become a chain of one-entry index
# nodes above the leaf); with 1, the leaf's fourth extent then points
# outside the file system.
deepen() {
	echo "python3 - \"\$1\" $1 ${2:-0} <<'PY'
import re, struct, subprocess, sys
img, depth, bad = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = subprocess.run(['debugfs', '-R', 'imap deep', img], capture_output=True, text=True).stdout
blk, off = re.search(r'located at block (\d+), offset (0x[0-9a-f]+)', out).groups()
bs = 1024 << struct.unpack_from('<I', open(img, 'rb').read(2048), 1024 + 24)[0]
f = open(img, 'r+b')
at = int(blk) * bs + int(off, 16) + 40
f.seek(at)
root = bytearray(f.read(60))
leaf = struct.unpack_from('<I', root, 16)[0]
f.seek(leaf * bs)
node = bytearray(f.read(bs))
n = struct.unpack_from('<H', node, 2)[0]
k = depth - 1
chain = [struct.unpack_from('<I', node, 20 + 12 * i)[0] for i in range(n - k, n)] + [leaf]
struct.pack_into('<H', node, 2, n - k)
node[12 + 12 * (n - k):12 + 12 * n] = bytes(12 * k)
if bad:
    struct.pack_into('<I', node, 12 + 12 * 3 + 8, 0x7fffffff)
f.seek(leaf * bs)
f.write(node)
for i in range(k):
    index = bytearray(bs)
    struct.pack_into('<HHHHIIIHH', index, 0, 0xF30A, 1, (bs - 12) // 12, depth - 1 - i, 0, 0, chain[i + 1], 0, 0)
    f.seek(chain[i] * bs)
    f.write(index)
struct.pack_into('<HIIIHH', root, 6, depth, 0, 0, chain[0], 0, 0)
f.seek(at)
f.write(root)
PY"
}

DAMAGE_CMD=1 damage_case "a tree of depth 5 with 4 KiB blocks" 4096 "$(deepen 5)"
DAMAGE_CMD=1 damage_case "a tree of depth 6 with 1 KiB blocks, a bad extent in its leaf" 1024 "$(deepen 6 1)"
# e2fsck rebuilds a tree too deep whatever -E no_optimize_extents says.
DAMAGE_OPTS="-E no_optimize_extents" DAMAGE_CMD=1 damage_case "a tree of depth 7, no_optimize_extents" 1024 "$(deepen 7)"

# /d's triple indirect pointer leads, through one indirect block per level
# taken from /pad (left with none), to a block at logical 2097420, past the
# 2^21 blocks a directory may have with 1 KiB blocks.
far_dir_block() {
	cat <<-'EOF'
		p=$(debugfs -R "bmap pad 0" "$1" 2>/dev/null)
		debugfs -w -f - "$1" >/dev/null 2>&1 <<-CMDS
			sif pad block[0] 0
			sif pad block[1] 0
			sif pad block[2] 0
			sif pad block[3] 0
			sif pad size 0
			sif pad blocks 0
			sif d block[TIND] $p
			sif d blocks 10
		CMDS
		python3 - "$1" "$p" <<-'PY'
			import struct, sys
			img, p = sys.argv[1], int(sys.argv[2])
			f = open(img, 'r+b')
			for blk, slot, val in ((p, 31, p + 1), (p + 1, 0, p + 2), (p + 2, 0, p + 3)):
			    b = bytearray(1024)
			    struct.pack_into('<I', b, 4 * slot, val)
			    f.seek(blk * 1024)
			    f.write(b)
		PY
	EOF
}

DAMAGE_CMD=1 damage_case "a block-mapped directory's block past 2 GiB" map "$(far_dir_block)"

# /frag becomes block-mapped, every other block of its three clusters a
# hole: six runs, one more than an extent root holds, so its conversion
# (e2fsck's answer to a block map on bigalloc) needs a tree block.
holey_map() {
	cat <<-'EOF'
		b=$(debugfs -R "bmap frag 0" "$1" 2>/dev/null)
		{
			echo "sif frag flags 0"
			for i in $(seq 0 14); do
				if [ $((i % 2)) = 0 ] && [ "$i" -lt 12 ]; then
					echo "sif frag block[$i] $((b + i))"
				else
					echo "sif frag block[$i] 0"
				fi
			done
		} | debugfs -w -f - "$1" >/dev/null 2>&1
	EOF
}

DAMAGE_CMD=1 damage_case "a block map on bigalloc converted into the last free cluster" bigalloc:1 "$(holey_map)"

# Without a free cluster for the tree block e2fsck's pass 1E fails, after
# writing the four extents the root holds: the file loses its last two
# blocks, and e2fsck calls the file system modified (exit 1).  e4fsck
# prints the same failure but leaves the inode as it was, its data whole,
# and says that errors are left (exit 4).  Both say the same in -n and -p.
no_room_case() {
	local name="a block map on bigalloc without a free cluster for its tree" m rc want
	base_image "$T/nr.img" bigalloc:0
	bash -c "$(holey_map)" damage "$T/nr.img"
	debugfs -R "cat frag" "$T/nr.img" 2>/dev/null >"$T/frag.before"
	for m in n p y; do
		cp "$T/nr.img" "$T/nr-o$m.img"; cp "$T/nr.img" "$T/nr-t$m.img"
		rc=0; "$E4FSCK" -f$m "$T/nr-o$m.img" >"$T/nr.o$m" 2>&1 || rc=$?
		want=0; e2fsck -f$m "$T/nr-t$m.img" >"$T/nr.t$m" 2>&1 || want=$?
		if [ $m = y ]; then
			[ "$rc/$want" = 4/1 ] || { bad "$name: -fy exit $rc, e2fsck's $want (want 4 and 1)"; return; }
			sed -i -e 's/\*\*\*\*\* FILE SYSTEM WAS MODIFIED \*\*\*\*\*/********** WARNING: Filesystem still has errors **********\n/' \
				"$T/nr.t$m"
		elif [ "$rc" != "$want" ]; then
			bad "$name: -f$m exit $rc, e2fsck's $want"; return
		fi
		if ! diff <(neutral "$T/nr.o$m" "$T/nr-o$m.img") <(neutral "$T/nr.t$m" "$T/nr-t$m.img") >"$T/diff"; then
			bad "$name: -f$m output differs from e2fsck's:"; sed 's/^/    /' "$T/diff" | head -n 12; return
		fi
	done
	grep -q '^Failed to optimize extent tree <13> (13): Operation not permitted$' "$T/nr.oy" ||
		{ bad "$name: no failure reported"; return; }
	debugfs -R "cat frag" "$T/nr-oy.img" 2>/dev/null >"$T/frag.after"
	cmp -s "$T/frag.before" "$T/frag.after" || { bad "$name: /frag changed"; return; }
	cmp -s "$T/nr.img" "$T/nr-on.img" || { bad "$name: -fn changed the image"; return; }
	pass "$name"
}
no_room_case

exit "$failed"
