#!/bin/bash
# t3936-e4fsck-badblocks.sh - e4fsck checks the bad-blocks inode's list
# (inode 1) as e2fsck 1.47 does (issue 17), judged against e2fsck in -fn,
# -fp and -fy.
#
# The list is written into inode 1 with debugfs ("sif <1> block[N]"), so
# that it can name what mke2fs -l would refuse: numbers outside the file
# system, the primary superblock and descriptors, a backup's, a bitmap, a
# reserved descriptor block, an inode table block, a block of /big, and an
# indirect block of the list on the metadata or on a listed block.  Layouts:
# ext2 with 1 KiB blocks (block maps, resize inode, four groups with
# backups in 1 and 3) and ext4 with 4 KiB blocks (flex_bg, extents,
# metadata_csum).  Last, a list written by mke2fs -l is checked clean.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

EXT2="-t ext2 -b 1024 -g 1024 -N 256@4M"
EXT4="-t ext4 -b 4096 -g 2048 -N 256@32M"

base_image() { spec_image "$@"; }

# layout IMG: the blocks the cases list, read from dumpe2fs: $first (the
# primary superblock), $per_block (inodes per table block), $gdt, $bsb and $bgdt (group 1's copies), $bbm and
# $ibm (group 0's bitmaps), $itable (group 0's inode table), $rgdt (a
# reserved descriptor block, empty without one), $count, $bigblk (/big's
# fourth block) and $free (a free block).
layout() {
	local d; d=$(dumpe2fs "$1" 2>/dev/null)
	first=$(awk '/^First block:/ { print $3 }' <<<"$d")
	count=$(awk '/^Block count:/ { print $3 }' <<<"$d")
	per_block=$(( $(awk '/^Block size:/ { print $3 }' <<<"$d") / $(awk '/^Inode size:/ { print $3 }' <<<"$d") ))
	gdt=$((first + 1))
	bsb=$(awk '/Backup superblock at/ { sub(",", "", $4); print $4; exit }' <<<"$d")
	bgdt=$((bsb + 1))
	bbm=$(awk '/Block bitmap at/ { print $4; exit }' <<<"$d")
	ibm=$(awk '/Inode bitmap at/ { print $4; exit }' <<<"$d")
	itable=$(awk '/Inode table at/ { split($4, r, "-"); print r[1]; exit }' <<<"$d")
	rgdt=$(awk '/Reserved GDT blocks at/ { split($5, r, "-"); print r[1] + 1; exit }' <<<"$d")
	bigblk=$(debugfs -R "bmap /big 3" "$1" 2>/dev/null)
	free=$(awk '/Free blocks: [0-9]/ { sub(/.*Free blocks: /, ""); split($0, r, "-"); print r[1] + 40; exit }' <<<"$d")
}

# list B0 B1 ... : debugfs commands making the list these pointers, "-" for a
# hole; the 13th is the list's indirect block.
list() {
	local i=0 b slot
	for b in "$@"; do
		slot=$i
		[ $i = 12 ] && slot=IND
		[ "$b" = - ] || echo "sif <1> block[$slot] $b"
		i=$((i + 1))
	done
	echo "sif <1> size $((i * 1024))"
	echo "sif <1> blocks $((i * 2))"
}

# big_intact NAME: /big as e4fsck -fy left it (same_as_e2fsck's $T/oy.img).
big_intact() {
	debugfs -R "cat /big" "$T/oy.img" 2>/dev/null >"$T/big.out"
	cmp -s "$T/big.out" "$src/big" || bad "$1: /big changed"
}

for spec in "$EXT2" "$EXT4"; do
	tag="[${spec%@*}]"
	base_image "$T/probe.img" "$spec"
	layout "$T/probe.img"

	same_as_e2fsck "a number past the end and one before the start $tag" "$spec" \
		"$(list $((count + 5)) "$free" 4294967295)"
	big_intact "illegal numbers $tag"
	if [ "$first" = 1 ]; then
		same_as_e2fsck "the primary superblock listed $tag" "$spec" "$(list "$first")"
		big_intact "primary superblock $tag"
	fi
	same_as_e2fsck "a primary descriptor block listed $tag" "$spec" "$(list "$free" "$gdt")"
	same_as_e2fsck "group 1's superblock and descriptors listed $tag" "$spec" "$(list "$bsb" "$bgdt" "$free")"
	if [ -n "$rgdt" ]; then
		same_as_e2fsck "a reserved descriptor block listed $tag" "$spec" "$(list "$rgdt")"
	fi
	same_as_e2fsck "a block listed twice $tag" "$spec" "$(list "$free" "$free")"
	# e2fsck relocates a bitmap on the list, which e4fsck cannot do yet: -fn and -fp only.
	SAME_MODES="n p" same_as_e2fsck "the block bitmap listed $tag" "$spec" "$(list "$bbm")"
	SAME_MODES="n p" same_as_e2fsck "the inode bitmap listed $tag" "$spec" "$(list "$ibm")"
	# A table block of unused inodes: the indirect block reads as an empty list.
	same_as_e2fsck "the list's indirect block on the inode table $tag" "$spec" \
		"$(list "$free" - - - - - - - - - - - $((itable + 3)))"
	same_as_e2fsck "the list's indirect block is a listed block $tag" "$spec" \
		"$(list "$free" - - - - - - - - - - - "$free")"
	same_as_e2fsck "the list's indirect block past the end $tag" "$spec" \
		"$(list "$free" - - - - - - - - - - - $((count + 1)))"
	same_as_e2fsck "a block of /big listed $tag" "$spec" "$(list "$bigblk")"
	# The table block holding inode 1 itself, then one holding named inodes (files made past 16 with 4 KiB blocks).
	same_as_e2fsck "the list names the block of its own inode $tag" "$spec" "$(list "$itable")"
	files=$(for i in $(seq 1 24); do echo "write /dev/null f$i"; done)
	same_as_e2fsck "entries name inodes in a listed table block $tag" "$spec" \
		"$(printf '%s\n' "$files"; list $((itable + 16 / per_block)))"
done

# A list written by mke2fs -l: clean to both.
printf '%s\n' 3000 3001 3500 >"$T/bb.list"
for opts in "-t ext2 -b 1024 -g 1024" "-t ext4 -b 1024"; do
	rm -f "$T/l.img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts -l "$T/bb.list" "$T/l.img" 4M >/dev/null 2>&1
	rc=0; "$E4FSCK" -fn "$T/l.img" >"$T/l.out" 2>&1 || rc=$?
	if [ "$rc" = 0 ] && ! grep -q "?" "$T/l.out"; then pass "mke2fs -l's list is clean [$opts]"
	else bad "mke2fs -l's list [$opts]: exit $rc"; sed 's/^/    /' "$T/l.out" | head; fi
done

exit "$failed"
