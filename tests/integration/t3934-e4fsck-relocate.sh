#!/bin/bash
# t3934-e4fsck-relocate.sh - e4fsck gives a group's block bitmap, inode
# bitmap or inode table a new place (issue 17, fsck/relocate.c), judged by
# e2fsck 1.47 in -fn, -fp and -fy: a location outside the group (without
# flex_bg), outside the file system, zeroed, or on other metadata (another
# group's bitmap, a backup superblock).
#
# With more than one group e2fsck (without -p) falls back on group 1's
# descriptors when the primary ones look bad, so the damage is written into
# every copy of the descriptor table (all_copies).  A zeroed location on a
# read-only run is where e2fsck 1.47 goes astray (it "relocates" under -n
# and fails writing later, exit 12), and so is a location outside the file
# system (its library's warnings for every block, then exit 8): there only
# -fp and -fy are compared and -fn must exit 4 leaving the image alone.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

base_image() { spec_image "$@"; }

# all_copies IMG CMD...: debugfs's set_bg commands on the primary
# descriptors, then the primary table copied over every backup.
all_copies() {
	local img=$1 c b first count
	shift
	for c in "$@"; do debugfs -w -R "$c" "$img" >/dev/null 2>&1; done
	read -r first count < <(dumpe2fs "$img" 2>/dev/null |
		awk '/Primary superblock/ { s = $NF; split(s, a, "-"); print a[1], (a[2] ? a[2] - a[1] + 1 : 1); exit }')
	for b in $(dumpe2fs "$img" 2>/dev/null | awk '/Backup superblock/ { s = $NF; split(s, a, "-"); print a[1] }'); do
		dd if="$img" of="$img" bs=1024 skip="$first" seek="$b" count="$count" conv=notrunc status=none
	done
}
export -f all_copies
export DAMAGE_CMD=1

EXT3="-t ext3 -b 1024@32M"
EXT4="-t ext4 -b 1024 -O ^metadata_csum,^uninit_bg@32M"
EXT4N="-t ext4 -b 1024 -O ^flex_bg,^metadata_csum,^uninit_bg@32M"
ONE="-t ext2 -b 1024@8M"

damage_case "inode bitmap outside its group (ext3)" "$EXT3" \
	'all_copies "$1" "set_bg 2 inode_bitmap 100"'
damage_case "block bitmap on another group's inode bitmap (ext4, flex_bg)" "$EXT4" \
	'all_copies "$1" "set_bg 2 block_bitmap $(dumpe2fs "$1" 2>/dev/null | awk "/^Group 2:/ { g = 1 } g && /Inode bitmap at/ { print \$4; exit }")"'
damage_case "inode bitmap on a backup superblock (ext4, flex_bg)" "$EXT4" \
	'all_copies "$1" "set_bg 3 inode_bitmap 8193"'
damage_case "block bitmap on its group's backup superblock (ext3)" "$EXT3" \
	'all_copies "$1" "set_bg 1 block_bitmap 8193"'
damage_case "inode bitmap on a reserved descriptor block (one group)" "$ONE" \
	'debugfs -w -R "set_bg 0 inode_bitmap 10" "$1"'
# With metadata_csum (a sound descriptor checksum): e2fsck zeroes the
# location for the relocation without a new checksum, so it asks to fix the
# descriptor's checksum next; under -n the missing bitmap reads as empty and
# fails its checksum in pass 5.  (e2fsck's library warns on stderr of the
# block number it cannot test.)
ONECSUM="-t ext4 -b 1024@4M"
no_warning='/^Illegal block number passed to ext2fs_/d'
for t in inode block; do
	DAMAGE_SED=$no_warning damage_case "$t bitmap outside the file system (one group, metadata_csum)" "$ONECSUM" \
		"debugfs -w -R 'set_bg 0 ${t}_bitmap 5000' \"\$1\"; debugfs -w -R 'set_bg 0 checksum calc' \"\$1\""
done

# compare NAME IMG MODES: on copies of IMG, e4fsck -f<m> exits and prints as e2fsck -f<m> for each mode
# m of MODES; $T/ours.img is left as e4fsck's last mode left it.  0, or 1 after bad.
compare() {
	local name=$1 img=$2 m rc want
	for m in $3; do
		cp "$img" "$T/ours.img"; cp "$img" "$T/theirs.img"
		rc=0; "$E4FSCK" -f$m "$T/ours.img" >"$T/ours.$m" 2>&1 || rc=$?
		want=0; e2fsck -f$m "$T/theirs.img" >"$T/theirs.$m" 2>&1 || want=$?
		if [ "$rc" != "$want" ] || ! diff <(neutral "$T/ours.$m" "$T/ours.img") \
						<(neutral "$T/theirs.$m" "$T/theirs.img") >"$T/diff" 2>&1; then
			bad "$name: -f$m exit $rc (e2fsck $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 20
			return 1
		fi
	done
}

# repair_case NAME SPEC CMDS [N_EXIT]: a location zeroed or outside the file system, where e2fsck 1.47
# -n goes astray (see the top): -fp and -fy as e2fsck, -fn exit N_EXIT (4) and nothing written, and
# after -fy both checkers call the file system clean.
repair_case() {
	local name=$1 img="$T/z.img" rc want_n=${4:-4}
	base_image "$img" "$2"
	bash -c "$3" damage "$img"
	local before; before=$(md5sum <"$img")
	rc=0; "$E4FSCK" -fn "$img" >"$T/ours.n" 2>&1 || rc=$?
	if [ "$rc" != "$want_n" ] || [ "$(md5sum <"$img")" != "$before" ]; then
		bad "$name: -fn exit $rc (want $want_n) or the image changed"; sed 's/^/    /' "$T/ours.n" | head -n 20; return
	fi
	compare "$name" "$img" "p y" || return
	if ! e2fsck -fn "$T/ours.img" >"$T/check" 2>&1 || ! "$E4FSCK" -fn "$T/ours.img" >"$T/check" 2>&1; then
		bad "$name: not clean after -fy"; sed 's/^/    /' "$T/check" | head -n 20; return
	fi
	# /big is kept wherever e2fsck keeps it (not when its inode's table is lost).
	if debugfs -R "cat /big" "$T/theirs.img" 2>/dev/null | cmp -s - "$src/big" &&
	   ! debugfs -R "cat /big" "$T/ours.img" 2>/dev/null | cmp -s - "$src/big"; then
		bad "$name: /big changed"; return
	fi
	pass "$name"
}
repair_case "block bitmap zeroed (one group)" "$ONE" 'debugfs -w -R "set_bg 0 block_bitmap 0" "$1"'
repair_case "inode bitmap zeroed (one group)" "$ONE" 'debugfs -w -R "set_bg 0 inode_bitmap 0" "$1"'
# Without its inode table there is no root either: -fn ends as e2fsck's does, exit 12.
repair_case "inode table zeroed (one group): the check restarts" "$ONE" 'debugfs -w -R "set_bg 0 inode_table 0" "$1"' 12
# Left in place (-n), the table in group 3 gives garbage inodes (problems e4fsck does not cover yet).
repair_case "inode table outside its group (ext4 without flex_bg)" "$EXT4N" \
	'all_copies "$1" "set_bg 2 inode_table 24600"'
repair_case "inode table past the end of the file system (ext3)" "$EXT3" 'all_copies "$1" "set_bg 1 inode_table 40000"'
repair_case "block bitmap zeroed in every copy (ext4)" "$EXT4" 'all_copies "$1" "set_bg 2 block_bitmap 0"'

# No room for a new inode table (the file system is full and group 1's inode bitmap lies in its old
# table): e2fsck's "Error allocating ... contiguous block(s)" and its abort, exit 12, in every mode.
rm -f "$T/full.img"
mke2fs -q -F -t ext2 -b 1024 "$T/full.img" 32M >/dev/null 2>&1
head -c 31000000 /dev/zero | tr '\0' x >"$T/fill"
debugfs -w -R "write $T/fill fill" "$T/full.img" >/dev/null 2>&1
all_copies "$T/full.img" "set_bg 1 inode_bitmap 8500" "set_bg 1 inode_table 0"
if compare "no room for the inode table" "$T/full.img" "n p y"; then
	if grep -q "^Error allocating 512 contiguous block(s) in block group 1 for inode table" "$T/ours.y"; then
		pass "no room for the inode table"
	else
		bad "no room for the inode table: e2fsck's words are missing"; sed 's/^/    /' "$T/ours.y" | head -n 20
	fi
fi

# fault_case NAME DEBUGFS_CMD FAULT PATTERN...: e4fsck -fy under the fault hook (EXT4FS_FAULT=FAULT) on
# the one-group image damaged by DEBUGFS_CMD exits 1, prints a line matching each PATTERN, and leaves a
# file system e2fsck -fn calls clean.
fault_case() {
	local name=$1 cmd=$2 fault=$3 rc pattern
	shift 3
	base_image "$T/f.img" "$ONE"
	debugfs -w -R "$cmd" "$T/f.img" >/dev/null 2>&1
	rc=0; EXT4FS_FAULT="$fault" "$E4FSCK" -fy "$T/f.img" >"$T/ours.f" 2>&1 || rc=$?
	for pattern in "$@"; do
		grep -q "$pattern" "$T/ours.f" || rc="$rc, no '$pattern'"
	done
	if [ "$rc" = 1 ] && e2fsck -fn "$T/f.img" >"$T/check" 2>&1; then
		pass "$name"
	else
		bad "$name: exit $rc"; sed 's/^/    /' "$T/ours.f" | head -n 20
	fi
}
# The first write, the relocation's, fails: e2fsck's warning, and the check goes on.
fault_case "a failed write of the relocated bitmap is reported" "set_bg 0 block_bitmap 0" "write=1,mode=fail" \
	"^Warning: could not write block [0-9]* for block bitmap: "
# The old inode bitmap lies on a bad sector: e2fsck's warning, the block relocated all the same, and
# pass 5 rebuilds it.
fault_case "an unreadable old bitmap is reported and relocated" "set_bg 0 inode_bitmap 10" "readbad=$((10 * 1024))" \
	"^Warning: could not read block 0 of inode bitmap: Input/output error" \
	"^Relocating group 0's inode bitmap from 10 to "

# The kernel mounts a repaired image and reads /big.
base_image "$T/k.img" "$EXT3"
all_copies "$T/k.img" "set_bg 2 inode_bitmap 100" "set_bg 1 block_bitmap 30000"
"$E4FSCK" -fy "$T/k.img" >/dev/null 2>&1 || true
if have_root_loop; then
	mnt="$T/mnt"; mkdir -p "$mnt"
	if loop_mount "$T/k.img" "$mnt" ro && cmp -s "$mnt/big" "$src/big"; then
		pass "the kernel mounts the repaired image and reads /big"
	else
		bad "the kernel does not mount or read the repaired image"
	fi
	loop_umount "$mnt" || true
else
	echo "SKIP kernel mount: $(root_loop_reason)"
fi

exit "$failed"
