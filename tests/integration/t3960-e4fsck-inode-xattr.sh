#!/bin/bash
# t3960-e4fsck-inode-xattr.sh - e4fsck's check of the space after the
# 128-byte inode base (i_extra_isize, the extended attributes stored there,
# pre-1970 timestamps), judged by e2fsck.
#
# Each case writes a small file system with 256-byte inodes where /small
# carries two small attributes in its inode body and the root directory
# one, edits bytes of one inode record (an entry's name length, value
# offset, value inode, value size or hash, the area's magic, i_extra_isize,
# a timestamp's epoch bits), recomputes the inode checksum so that only the
# damage is wrong, and requires what tests/lib/fsck-damage.sh describes:
# e4fsck prints and exits as e2fsck in -n, -p and -y (also with 1 and 4
# threads), -y leaves a file system e2fsck calls clean, and /big is intact.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup
head -c 5000 /dev/urandom >"$src/small"

base_image() {
	local img=$1 opts=$2
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts -I 256 "$img" 16M >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		write $src/small small
		ea_set /small user.foo bar
		ea_set /small user.second hello-world
		ea_set / user.r rootvalue
	EOF
}

# poke IMG PATH OFFSET HEX...: write the bytes at OFFSET of PATH's inode
# record, then let debugfs recompute the inode checksum (metadata_csum).
poke() {
	local img=$1 path=$2 rel=$3 blk off bs pos
	shift 3
	read -r blk off < <(debugfs -R "imap $path" "$img" 2>/dev/null |
		sed -n 's/.*located at block \([0-9]*\), offset 0x\([0-9a-f]*\).*/\1 \2/p')
	bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	pos=$((blk * bs + 16#$off + rel))
	# shellcheck disable=SC2059
	printf "$(printf '\\x%s' "$@")" | dd of="$img" bs=1 seek="$pos" conv=notrunc 2>/dev/null
	debugfs -n -w -R "sif $path checksum calc" "$img" >/dev/null 2>&1 || true
}
export -f poke
DAMAGE_CMD=1

# expect_case NAME OPTS CMDS PATTERN [YPATTERN]: damage_case, then require
# e2fsck -n's output to hold PATTERN (and -y's YPATTERN): the damage is the
# one the case is named after.
expect_case() {
	local name=$1 opts=$2 cmds=$3 pattern=$4 ypattern=${5:-} before=$failed
	failed=0
	damage_case "$name" "$opts" "$cmds"
	if [ $failed = 0 ] && ! grep -q -e "$pattern" "$T/theirs.n"; then
		bad "$name: e2fsck -n does not say '$pattern':"; sed 's/^/    /' "$T/theirs.n" | head -n 8
	fi
	if [ $failed = 0 ] && [ -n "$ypattern" ] && ! grep -q -e "$ypattern" "$T/theirs.y"; then
		bad "$name: e2fsck -y does not say '$ypattern':"; sed 's/^/    /' "$T/theirs.y" | head -n 8
	fi
	[ $before = 0 ] || failed=1
}

# The layout debugfs gives /small (i_extra_isize 32): the magic at 160, the
# first entry (user.foo) at 164: name length 164, name index 165, value
# offset 166-167, value inode 168-171, value size 172-175, hash 176-179;
# the second (user.second) at 184 with its value size at 192.  Its hashes
# are zero, which e2fsck accepts in an inode.  The root's one entry is at
# 164 too.  i_extra_isize is at 128, i_ctime at 12, i_ctime_extra at 132.
for opts in "-t ext4" "-t ext4 -O ^metadata_csum"; do
	tag="[$opts]"
	base_image "$T/probe.img" "$opts"
	debugfs -R "stat /small" "$T/probe.img" 2>/dev/null | grep -q 'user.second (11)' ||
		fail "mke2fs $opts: /small has no in-inode attributes"
	expect_case "attribute hash $tag" "$opts" 'poke "$1" /small 176 78 56 34 12' \
		'has a hash (305419896) which is invalid'
	expect_case "attribute hash in the root directory $tag" "$opts" 'poke "$1" / 176 01 00 00 00' \
		'inode 2 has a hash (1) which is invalid'
	expect_case "attribute value size $tag" "$opts" 'poke "$1" /small 192 c8' \
		'has a value size (200) which is invalid'
	expect_case "attribute name length past the area $tag" "$opts" 'poke "$1" /small 184 40' \
		'allocation collision'
	expect_case "attribute name length 0 $tag" "$opts" 'poke "$1" /small 164 00' \
		'allocation collision'
	expect_case "attribute value offset past the area $tag" "$opts" 'poke "$1" /small 166 5c' \
		'allocation collision'
	expect_case "attribute value inode out of range $tag" "$opts" 'poke "$1" /small 168 ff ff ff 00' \
		'illegal extended attribute value inode 16777215'
	expect_case "attribute value inode not an EA inode $tag" "$opts" 'poke "$1" /small 168 0c 00 00 00' \
		'illegal extended attribute value inode 12'
	expect_case "attribute list without its end $tag" "$opts" 'poke "$1" /small 208 ff 01 00 00' \
		'allocation collision'
	expect_case "i_extra_isize not a multiple of 4 $tag" "$opts" 'poke "$1" /small 128 06' \
		'has a extra size (6) which is invalid'
	expect_case "i_extra_isize too large, then a hash $tag" "$opts" \
		'poke "$1" /small 128 c8; poke "$1" /small 176 78 56 34 12' 'has a extra size (200) which is invalid' \
		'has a hash (305419896) which is invalid'
	expect_case "pre-1970 ctime with epoch bits $tag" "$opts" 'poke "$1" /small 15 80; poke "$1" /small 132 03' \
		'likely pre-1970'
	# A bad magic only hides the attributes: e2fsck has nothing to say.
	DAMAGE_N_QUIET=1 DAMAGE_FY_EXIT=0 damage_case "attribute magic $tag" "$opts" 'poke "$1" /small 160 00'
done

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on in-inode extended attribute damage"
