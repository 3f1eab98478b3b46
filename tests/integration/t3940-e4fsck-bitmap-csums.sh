#!/bin/bash
# t3940-e4fsck-bitmap-csums.sh - the end of e4fsck's pass 5, judged by
# e2fsck 1.47: the block and inode bitmap checksums kept in the group
# descriptors (metadata_csum), and the padding of the bitmap blocks (the
# bytes past a group's bits, and in the last group the bits for blocks past
# the end of the file system).
#
# Layouts: ext4 with metadata_csum at 4 KiB (one group) and 1 KiB (two
# groups, the last one short), ext4 without metadata_csum at 1 KiB with
# 4096 blocks per group (a block bitmap tail in every group), ext3 at 4 KiB.
#
# Every case goes through damage_case (tests/lib/fsck-damage.sh): e4fsck
# prints and exits as e2fsck in -n, -p and -y, -n changes nothing, a second
# -y finds nothing, e2fsck finds the result clean and /big is intact.
# Besides each kind alone, the kinds are mixed with repairs that rewrite a
# bitmap anyway (differences in it, a lost+found to make), after which
# e2fsck no longer reports a checksum or the last group's end bits.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd dumpe2fs
need_cmd od
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

# Layout spec: "mke2fs options@size".
L4K="-t ext4 -b 4096@16M"
L1K="-t ext4 -b 1024@16M"
LG="-t ext4 -O ^metadata_csum -b 1024 -g 4096@16M"
L3="-t ext3 -b 4096@16M"

base_image() { spec_image "$@"; }

# @BIG0@: the block holding /big's first block.
expand() { printf '%s\n' "${2//@BIG0@/$(debugfs -R "bmap /big 0" "$1" 2>/dev/null)}"; }

# poke IMG block|inode GROUP OFFSET MASK: AND the byte at OFFSET of the
# group's block or inode bitmap block with MASK (a byte edit: debugfs
# cannot reach the padding).
poke() {
	local img=$1 kind=$2 g=$3 off=$4 mask=$5 bs blk old
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Block size/ { print $2 + 0 }')
	blk=$(dumpe2fs "$img" 2>/dev/null | awk -v g="$g" -v k="$kind" '
		/^Group [0-9]+:/ { cur = $2 + 0 }
		cur == g && $0 ~ (k == "inode" ? "Inode bitmap at" : "Block bitmap at") {
			s = $0; sub(/.*bitmap at /, "", s); print s + 0; exit }')
	old=$(od -An -tu1 -j $((blk * bs + off)) -N1 "$img" | tr -d ' ')
	printf '%b' "\\$(printf '%03o' $((old & mask)))" |
		dd of="$img" bs=1 seek=$((blk * bs + off)) conv=notrunc status=none
}
export -f poke

# each IMG CMD...: run each debugfs command in a session of its own.
each() {
	local img=$1 c
	shift
	for c in "$@"; do debugfs -w -R "$c" "$img" >/dev/null 2>&1; done
}
export -f each

# ------------------------------------------------ checksums (metadata_csum)
for spec in "$L4K" "$L1K"; do
	tag="[${spec%@*}]"
	damage_case "block bitmap checksum zeroed $tag" "$spec" "set_bg 0 block_bitmap_csum 0
set_bg 0 checksum calc"
	damage_case "inode bitmap checksum zeroed $tag" "$spec" "set_bg 0 inode_bitmap_csum 0
set_bg 0 checksum calc"
	# The descriptor's own checksum left stale too: found before pass 1 as well.
	damage_case "block bitmap checksum, stale descriptor $tag" "$spec" "set_bg 0 block_bitmap_csum 1"
	damage_case "both bitmap checksums wrong $tag" "$spec" "set_bg 0 block_bitmap_csum 7
set_bg 0 inode_bitmap_csum 7
set_bg 0 checksum calc"
	# debugfs rewrites the bitmaps it changed, checksums fresh, when it
	# closes: the checksums are damaged after, in sessions of their own.
	# shellcheck disable=SC2016 # $1 is the image, for the damage command's shell
	zero_csums='each "$1" "set_bg 0 block_bitmap_csum 0" "set_bg 0 inode_bitmap_csum 0" "set_bg 0 checksum calc"'
	# A lost+found to make rewrites both bitmaps: e2fsck then asks about no checksum.
	DAMAGE_CMD=1 damage_case "bitmap checksums, lost+found to make $tag" "$spec" \
		"each \"\$1\" \"rmdir lost+found\"; $zero_csums"
	# Differences in the block bitmap rewrite it; the inode bitmap's checksum is still asked.
	DAMAGE_CMD=1 damage_case "checksums and a used block marked free $tag" "$spec" \
		"each \"\$1\" \"freeb @BIG0@\"; $zero_csums"
done
# Two groups: -n reports each, -y repairs the first and rewrites them all.
damage_case "inode bitmap checksums of two groups [${L1K%@*}]" "$L1K" "set_bg 0 inode_bitmap_csum 0
set_bg 0 checksum calc
set_bg 1 inode_bitmap_csum 0
set_bg 1 checksum calc
set_bg 1 block_bitmap_csum 0
set_bg 1 checksum calc"

# ------------------------------------------------ padding
# Offsets: the first byte past inodes_per_group bits in the inode bitmap
# block; for the block bitmap, a byte in the last group past the file
# system's end (4 KiB: blocks 4096-32767 of the only group; 1 KiB: the top
# bit of the last group's last byte is block 16384, one past the end), or,
# with 4096 blocks per group at 1 KiB, a byte past the group's bits.
for spec in "$L4K" "$L1K" "$LG" "$L3"; do
	tag="[${spec%@*}]"
	base_image "$T/probe.img" "$spec"
	ipg=$(dumpe2fs -h "$T/probe.img" 2>/dev/null | awk -F: '/^Inodes per group/ { print $2 + 0 }')
	groups=$(dumpe2fs "$T/probe.img" 2>/dev/null | grep -c '^Group [0-9]')
	last=$((groups - 1))
	case $spec in
	"$L4K" | "$L3") bend="block $last 600 0" ;;
	"$L1K") bend="block $last 1023 127" ;;
	"$LG") bend="block 0 700 0" ;;
	esac
	DAMAGE_CMD=1 damage_case "inode bitmap padding cleared $tag" "$spec" "poke \"\$1\" inode 0 $((ipg / 8)) 0"
	DAMAGE_CMD=1 damage_case "block bitmap padding cleared $tag" "$spec" "poke \"\$1\" $bend"
	# The block bitmap's differences repaired rewrite the end bits too; a tail is still asked about.
	DAMAGE_CMD=1 damage_case "block padding and a used block marked free $tag" "$spec" \
		"each \"\$1\" \"freeb @BIG0@\"; poke \"\$1\" $bend"
	DAMAGE_CMD=1 damage_case "inode padding and a free inode marked in use $tag" "$spec" \
		"each \"\$1\" \"seti <40>\"; poke \"\$1\" inode 0 $((ipg / 8 + 1)) 0"
done

# A group flagged INODE_UNINIT keeps no inode bitmap: e2fsck does not read
# the block, so whatever it holds is no problem.
base_image "$T/u.img" "$L1K"
poke "$T/u.img" inode 1 300 0
poke "$T/u.img" inode 1 5 0
rc=0; "$E4FSCK" -fn "$T/u.img" >"$T/u.ours" 2>&1 || rc=$?
want=0; e2fsck -fn "$T/u.img" >"$T/u.theirs" 2>&1 || want=$?
if [ "$rc" != 0 ] || [ "$want" != 0 ] ||
   ! diff <(neutral "$T/u.ours" "$T/u.img") <(neutral "$T/u.theirs" "$T/u.img") >"$T/diff"; then
	bad "uninitialised group's inode bitmap block: exit $rc (e2fsck $want) or output differs"
	sed 's/^/    /' "$T/diff" | head -n 10
else
	pass "uninitialised group's inode bitmap block [${L1K%@*}]"
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on bitmap checksums or padding"
