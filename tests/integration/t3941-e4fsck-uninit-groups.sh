#!/bin/bash
# t3941-e4fsck-uninit-groups.sh - groups whose descriptor says part of them
# is unused (INODE_UNINIT, BLOCK_UNINIT, the never-used inode tail
# bg_itable_unused) while something there is in use, judged by e2fsck 1.47
# in -n, -p and -y.
#
# Pass 2: an entry naming an inode pass 1 did not scan.  A yes opens the
# group to pass 1 (the flag cleared, the tail emptied) and the check starts
# again after pass 2's directory blocks; the inodes are then judged as any
# other.  Cases: entries naming free inodes in both places (dangling), and
# real files and directories hidden by a flag or a tail set by hand.
#
# Pass 5: blocks in use in a group marked BLOCK_UNINIT: e2fsck asks for each
# block until a yes clears the flag (with -n, for every one of them).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd dumpe2fs
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

# Four groups of 16 inodes: /f1-/f4 fill group 0 and begin group 1;
# groups 2-3 start INODE_UNINIT.
L1K="-t ext4 -b 1024 -g 2048 -N 64@8M"
# The same without metadata_csum (gdt_csum's descriptor checksums).
LGDT="-t ext4 -O ^metadata_csum,uninit_bg -b 1024 -g 2048 -N 64@8M"

base_image() {
	spec_image "$@"
	debugfs -w -f - "$1" >/dev/null 2>&1 <<-EOF
		write $src/big d/inner
		write $src/big f1
		write $src/big f2
		mkdir f3
		write $src/big f3/f4
	EOF
}

# @UNINIT@: a free inode of the last group still INODE_UNINIT (@UG@); @TAIL@: a
# free inode in the never-used tail of /f3's group; @G@: that group;
# @HIDE@: the itable_unused that hides /f3 and what follows in it;
# @FREE@: a free inodes count that lets that tail pass the superblock step.
expand() {
	local img=$1 cmds=$2 info ipg ino grp ug used
	info=$(dumpe2fs "$img" 2>/dev/null)
	ipg=$(awk -F: '/^Inodes per group/ { print $2 + 0 }' <<<"$info")
	ug=$(awk '/^Group [0-9]+:/ && /INODE_UNINIT/ { g = $2 + 0 } END { print g }' <<<"$info")
	ino=$(debugfs -R "stat /f3" "$img" 2>/dev/null | awk '/^Inode:/ { print $2; exit }')
	grp=$(((ino - 1) / ipg))
	used=$(debugfs -R "stat /f3/f4" "$img" 2>/dev/null | awk '/^Inode:/ { print $2; exit }')
	cmds=${cmds//@UNINIT@/$((ug * ipg + 7))}
	cmds=${cmds//@TAIL@/$((used + 2))}
	cmds=${cmds//@G@/$grp}
	cmds=${cmds//@UG@/$ug}
	cmds=${cmds//@HIDE@/$((ipg - (ino - 1 - grp * ipg)))}
	cmds=${cmds//@FREE@/$ipg}
	printf '%s\n' "$cmds"
}

for spec in "$L1K" "$LGDT"; do
	tag="[${spec%@*}]"
	damage_case "an entry names a free inode of an INODE_UNINIT group $tag" "$spec" "ln <@UNINIT@> /x"
	damage_case "an entry names a free inode in a group's unused tail $tag" "$spec" "ln <@TAIL@> /y"
	damage_case "entries in both places $tag" "$spec" "$(printf 'ln <@UNINIT@> /x\nln <@TAIL@> /y')"
	damage_case "/f3's group says INODE_UNINIT $tag" "$spec" \
		"$(printf 'set_bg @G@ flags 1\nset_bg @G@ checksum calc')"
	# The group's checksum wrong: e2fsck's scan and pass 2 honour its flag all the same under -n.
	damage_case "an entry names an inode of an INODE_UNINIT group whose checksum is wrong $tag" "$spec" \
		"$(printf 'ln <@UNINIT@> /x\nset_bg @UG@ checksum 0x1234')"
	damage_case "/f3's group's unused tail covers /f3 $tag" "$spec" \
		"$(printf 'set_bg @G@ itable_unused @HIDE@\nset_bg @G@ free_inodes_count @FREE@\nset_bg @G@ checksum calc')"
	# e2fsck writes this repair but does not count it as a change (exit 0);
	# before pass 1's threads open their own handles it must be on disk.
	DAMAGE_FY_EXIT=0 damage_case "a group's unused tail beyond its free inodes $tag" "$spec" \
		"$(printf 'set_bg 0 itable_unused 9\nset_bg 0 checksum calc')"
done

# After -fy e2fsck writes the uninit flags and unused tails that the bitmaps
# now give (e2fsprogs' ext2fs_set_gdt_csum()): the last inodes of group 0
# freed (/f1 and /f2, in that order) lower its tail by two.  e4fsck's
# descriptors must say the same.
groups_of() {
	dumpe2fs "$1" 2>/dev/null | grep -E '^Group [0-9]+:|unused inodes' | sed 's/ csum 0x[0-9a-f]*//'
}
for spec in "$L1K" "$LGDT"; do
	tag="[${spec%@*}]"
	base_image "$T/desc.img" "$spec"
	printf 'clri /f1\nclri /f2\n' | debugfs -w -f - "$T/desc.img" >/dev/null 2>&1
	cp "$T/desc.img" "$T/desc-e2.img"
	e2fsck -fy "$T/desc-e2.img" >/dev/null 2>&1 || true
	"$E4FSCK" -fy "$T/desc.img" >/dev/null 2>&1 || true
	if diff <(groups_of "$T/desc-e2.img") <(groups_of "$T/desc.img") >"$T/desc.diff"; then
		pass "descriptors after -fy as e2fsck leaves them (the last inodes freed) $tag"
	else
		bad "descriptors after -fy differ from e2fsck's $tag:"; sed 's/^/    /' "$T/desc.diff" | head -n 10
	fi
done

# A file that spills past group 0, its group then marked BLOCK_UNINIT again.
spill_cmd() {
	local group=$1
	printf '%s' "tr '\\0' y </dev/zero | head -c 1200000 >$T/spill
debugfs -w -f - \"\$1\" >/dev/null 2>&1 <<EOF
write $T/spill spill
set_bg $group flags 2
set_bg $group checksum calc
EOF"
}
for spec in "$L1K" "$LGDT"; do
	tag="[${spec%@*}]"
	DAMAGE_CMD=1 damage_case "blocks in use in a group marked BLOCK_UNINIT $tag" "$spec" "$(spill_cmd 1)"
done

exit "$failed"
