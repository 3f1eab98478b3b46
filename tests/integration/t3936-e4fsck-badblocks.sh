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
# metadata_csum).  Then -l, -L and -c rewrite the list as e2fsck does (the
# same blocks and map blocks in inode 1), and pass 1 checks the new list.
# Last, a list written by mke2fs -l is checked clean.

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
	# A bitmap on the list is relocated at the end of pass 1.
	same_as_e2fsck "the block bitmap listed $tag" "$spec" "$(list "$bbm")"
	same_as_e2fsck "the inode bitmap listed $tag" "$spec" "$(list "$ibm")"
	# A table block of unused inodes: the indirect block reads as an empty list.
	same_as_e2fsck "the list's indirect block on the inode table $tag" "$spec" \
		"$(list "$free" - - - - - - - - - - - $((itable + 3)))"
	same_as_e2fsck "the list's indirect block is a listed block $tag" "$spec" \
		"$(list "$free" - - - - - - - - - - - "$free")"
	same_as_e2fsck "the list's indirect block past the end $tag" "$spec" \
		"$(list "$free" - - - - - - - - - - - $((count + 1)))"
	same_as_e2fsck "a block of /big listed $tag" "$spec" "$(list "$bigblk")"
	if [ "$spec" = "$EXT4" ]; then
		# e2fsck's library reads no list from an inode whose checksum is wrong
		# (its warning before pass 1); pass 1 finds the inode invalid.
		same_as_e2fsck "a free block listed, the inode's checksum wrong $tag" "$spec" \
			"$(list "$free"; echo "sif <1> checksum 0x1234")"
	fi
	# The table block holding inode 1 itself, then one holding named inodes (files made past 16 with 4 KiB blocks).
	same_as_e2fsck "the list names the block of its own inode $tag" "$spec" "$(list "$itable")"
	files=$(for i in $(seq 1 24); do echo "write /dev/null f$i"; done)
	same_as_e2fsck "entries name inodes in a listed table block $tag" "$spec" \
		"$(printf '%s\n' "$files"; list $((itable + 16 / per_block)))"
done

# list_case NAME SPEC OPT FILE [CMDS]: e4fsck -f[yp] OPT FILE (-l or -L FILE, or two options) on the
# base image (damaged by the debugfs CMDS) exits and prints as e2fsck, writes
# the same list into inode 1 (its map blocks too), and leaves a file system
# e2fsck -fn judges as it judges e2fsck's own result; /big intact.
list_case() {
	local name=$1 spec=$2 opt=$3 file=$4 cmds=${5:-} m rc want
	base_image "$T/lc.img" "$spec"
	[ -z "$cmds" ] || debugfs -w -f - "$T/lc.img" >/dev/null 2>&1 <<<"$cmds"
	for m in y p; do
		cp "$T/lc.img" "$T/lo.img"; cp "$T/lc.img" "$T/lt.img"
		rc=0; "$E4FSCK" -f$m "$opt" "$file" "$T/lo.img" >"$T/lo.out" 2>&1 || rc=$?
		want=0; e2fsck -f$m "$opt" "$file" "$T/lt.img" >"$T/lt.out" 2>&1 || want=$?
		if [ "$rc" != "$want" ] || ! diff <(clean_out "$T/lo.out" "$T/lo.img") <(clean_out "$T/lt.out" "$T/lt.img") >"$T/diff"; then
			bad "$name -f$m: exit $rc (e2fsck $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 12; return 0
		fi
		if [ "$(debugfs -R 'stat <1>' "$T/lo.img" 2>/dev/null | sed -n '/^BLOCKS/,$p')" != \
		     "$(debugfs -R 'stat <1>' "$T/lt.img" 2>/dev/null | sed -n '/^BLOCKS/,$p')" ]; then
			bad "$name -f$m: the list in inode 1 differs from e2fsck's"; return 0
		fi
		rc=0; e2fsck -fn "$T/lo.img" >/dev/null 2>&1 || rc=$?
		want=0; e2fsck -fn "$T/lt.img" >/dev/null 2>&1 || want=$?
		[ "$rc" = "$want" ] || { bad "$name -f$m: e2fsck -fn gives $rc after e4fsck, $want after e2fsck"; return 0; }
		debugfs -R "cat /big" "$T/lo.img" 2>/dev/null >"$T/big.out"
		cmp -s "$T/big.out" "$src/big" || { bad "$name -f$m: /big changed"; return 0; }
	done
	pass "$name"
}

for spec in "$EXT2" "$EXT4"; do
	tag="[${spec%@*}]"
	base_image "$T/probe.img" "$spec"
	layout "$T/probe.img"
	seq $((free + 100)) $((free + 101)) >"$T/two"
	echo $((count + 9)) >>"$T/two"
	list_case "-l adds two blocks (and one out of range) $tag" "$spec" -l "$T/two"
	seq $((free + 100)) $((free + 130)) >"$T/many"
	list_case "-l adds 31 blocks: an indirect block $tag" "$spec" -l "$T/many" "$(list $((free + 300)))"
	list_case "-L replaces the list, whose old indirect block serves again $tag" "$spec" -L "$T/two" \
		"$(list $((free + 300)) - - - - - - - - - - - $((free + 301)))"
	printf '%s\n' "$gdt" "$bigblk" >"$T/used"
	list_case "-l adds a descriptor block and a block of /big $tag" "$spec" -l "$T/used"
	list_case "-l with a number out of range already listed $tag" "$spec" -l "$T/two" "$(list $((count + 77)) "$free")"
	# badblocks finds nothing in an image: -c empties the list, -c -k keeps it (-f again fills the option slot).
	list_case "-c replaces the list $tag" "$spec" -c -f "$(list "$free")"
	list_case "-c -k keeps the list $tag" "$spec" -c -k "$(list "$free")"
done
seq 2200 2500 >"$T/dind"
list_case "-L makes a list of 301 blocks: a doubly indirect block [$EXT2]" "$EXT2" -L "$T/dind"

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
