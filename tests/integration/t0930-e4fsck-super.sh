#!/bin/bash
# t0930-e4fsck-super.sh - e4fsck's superblock step before pass 1, judged by
# e2fsck 1.47: falling back on a backup superblock when the primary is
# unusable, the fatal "Corruption found in superblock" values, and the
# fixable fields.
#
# Layouts: ext4 with 4 KiB blocks and metadata_csum (two groups, so there
# is a backup), ext4 with 1 KiB blocks without metadata_csum, ext3.
#
# Kinds that e2fsck repairs (exit 1 with -y) go through damage_case
# (tests/lib/fsck-damage.sh): the same output and exit status as e2fsck in
# -n, -p and -y, a clean second run and result, /big intact.  Kinds where
# e2fsck stops with exit 8, or repairs without calling the file system
# changed (exit 0), are compared here in the three modes by same_as_e2fsck.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

e2fsck -V 2>&1 | grep -q '^e2fsck 1\.4[7-9]' || skip "the oracle is e2fsck 1.47 or later"
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup

src="$T/tree"
mkdir -p "$src"
head -c 300000 /dev/urandom >"$src/big"

# Layout spec: "mke2fs options@size".
L4K="-t ext4 -b 4096@136M"
L1K="-t ext4 -O ^metadata_csum -b 1024@16M"
L3="-t ext3@16M"

base_image() {
	local img=$1 spec=$2
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F ${spec%@*} "$img" "${spec#*@}" >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		mkdir d
	EOF
}

# Byte edits of the primary superblock (debugfs cannot set these).
zero_magic='printf "\0\0" | dd of="$1" bs=1 seek=$((1024 + 0x38)) conv=notrunc status=none'
future_wtime='printf "\0\0\0\x70" | dd of="$1" bs=1 seek=$((1024 + 0x30)) conv=notrunc status=none'

for spec in "$L4K" "$L1K" "$L3"; do
	tag="[${spec%@*}]"
	DAMAGE_CMD=1 damage_case "zeroed magic: backup superblock $tag" "$spec" "$zero_magic"
	damage_case "blocks_per_group 0: backup superblock $tag" "$spec" "ssv blocks_per_group 0"
	damage_case "log_block_size 10: backup superblock $tag" "$spec" "ssv log_block_size 10"
	damage_case "inodes_count wrong: backup, preen halts $tag" "$spec" "ssv inodes_count 5000"
	damage_case "no resize_inode, reserved GDT blocks $tag" "$spec" "feature -resize_inode"
	if [ "$spec" != "$L3" ]; then   # 128-byte inodes on the small ext3 have no extra size
		damage_case "bad min_extra_isize $tag" "$spec" "ssv min_extra_isize 3"
		damage_case "bad want_extra_isize $tag" "$spec" "ssv want_extra_isize 200"
	fi
done
damage_case "metadata_csum with uninit_bg [$L4K]" "$L4K" "feature uninit_bg"

# ------------------------------------------------ e2fsck's exit 8 and exit 0 kinds
# Output compared with the clock and the names made neutral.
clean_out() { neutral "$1" "$2" | sed -e 's/now = [^)]*)/now = NOW)/'; }

# same_as_e2fsck NAME SPEC CMDS [sh]: in -n, -p and -y, e4fsck exits and prints
# as e2fsck on a copy; -n changes nothing; the result is what e2fsck leaves
# (clean, or still refused with exit 8).
same_as_e2fsck() {
	local name=$1 spec=$2 cmds=$3 how=${4:-debugfs} m rc want ok=1
	base_image "$T/s.img" "$spec"
	if [ "$how" = sh ]; then bash -c "$cmds" damage "$T/s.img"; else debugfs -w -f - "$T/s.img" >/dev/null 2>&1 <<<"$cmds"; fi
	local before; before=$(md5sum <"$T/s.img")
	for m in n p y; do
		cp "$T/s.img" "$T/o$m.img"; cp "$T/s.img" "$T/t$m.img"
		rc=0; "$E4FSCK" -f$m "$T/o$m.img" >"$T/o.$m" 2>&1 || rc=$?
		want=0; e2fsck -f$m "$T/t$m.img" >"$T/t.$m" 2>&1 || want=$?
		if [ "$rc" != "$want" ]; then
			bad "$name: -f$m exit $rc, e2fsck's $want"; sed 's/^/    /' "$T/o.$m" | head -n 12; ok=0; continue
		fi
		if ! diff <(clean_out "$T/o.$m" "$T/o$m.img") <(clean_out "$T/t.$m" "$T/t$m.img") >"$T/diff"; then
			bad "$name: -f$m output differs from e2fsck's:"; sed 's/^/    /' "$T/diff" | head -n 12; ok=0
		fi
	done
	[ "$(md5sum <"$T/on.img")" = "$before" ] || { bad "$name: -fn changed the image"; ok=0; }
	rc=0; e2fsck -fn "$T/oy.img" >/dev/null 2>&1 || rc=$?
	want=0; e2fsck -fn "$T/ty.img" >/dev/null 2>&1 || want=$?
	[ "$rc" = "$want" ] || { bad "$name: e2fsck -fn gives $rc after e4fsck -fy, $want after e2fsck -fy"; ok=0; }
	[ $ok = 1 ] && pass "$name"
	return 0
}

for spec in "$L4K" "$L1K" "$L3"; do
	tag="[${spec%@*}]"
	same_as_e2fsck "r_blocks_count too big: fatal $tag" "$spec" "ssv r_blocks_count 9000"
	same_as_e2fsck "first_ino 5: fatal $tag" "$spec" "ssv first_ino 5"
	same_as_e2fsck "last mount time in the future $tag" "$spec" "ssv mtime 20991231"
done
same_as_e2fsck "last write time in the future [$L1K]" "$L1K" "$future_wtime" sh
same_as_e2fsck "image shorter than the file system [$L1K]" "$L1K" 'truncate -s 15M "$1"' sh
same_as_e2fsck "no UUID [$L1K]" "$L1K" "ssv uuid null"
same_as_e2fsck "uninit flags without the feature [$L3]" "$L3" "set_bg 1 flags 1"

exit "$failed"
