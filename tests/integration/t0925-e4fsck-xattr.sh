#!/bin/bash
# t0925-e4fsck-xattr.sh - e4fsck's check of extended attribute blocks,
# judged by e2fsck.
#
# Each case writes a small file system with debugfs where two files carry
# an attribute too large for the inode (so each has an attribute block),
# damages one block in one way (its magic, h_blocks, an entry's name index,
# value offset or hash, the block checksum, its reference count, or a second
# file made to share it), and requires what tests/lib/fsck-damage.sh
# describes: e4fsck prints and exits as e2fsck in -n, -p and -y (also with
# 1 and 4 threads), -y leaves a file system e2fsck calls clean, and /big is
# intact.  Reference counts are damaged only without metadata_csum: with
# it, e2fsck -n stops at the checksum the damage breaks ("aborted").

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup

src="$T/tree"
mkdir -p "$src"
head -c 300000 /dev/urandom >"$src/big"
head -c 5000 /dev/urandom >"$src/small"
head -c 600 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 700 >"$src/value"

base_image() {
	local img=$1 opts=$2
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 16M >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		write $src/small small
		mkdir d
		write $src/small d/s
		ea_set -f $src/value /small user.big
		ea_set -f $src/value /d/s user.big
	EOF
}

# @EA@: /small's attribute block.
expand() {
	local ea
	ea=$(debugfs -R "stat /small" "$1" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p')
	printf '%s\n' "${2//@EA@/$ea}"
}

for opts in "-t ext4" "-t ext4 -b 4096 -O ^metadata_csum" "-t ext3"; do
	tag="[$opts]"
	base_image "$T/probe.img" "$opts"
	[ "$(expand "$T/probe.img" @EA@)" -gt 0 ] 2>/dev/null || fail "mke2fs $opts: /small has no attribute block"
	# The header: magic at 0, h_refcount at 4, h_blocks at 8, checksum at 16; the first entry at 32:
	# name length, name index, value offset (2 bytes), value inode, value size, hash at 44.
	damage_case "xattr block magic $tag" "$opts" "zap_block -o 0 -l 4 -p 0 @EA@"
	damage_case "xattr block h_blocks $tag" "$opts" "zap_block -o 8 -l 1 -p 2 @EA@"
	damage_case "xattr entry name index 0 $tag" "$opts" "zap_block -o 33 -l 1 -p 0 @EA@"
	damage_case "xattr entry value past the block $tag" "$opts" "zap_block -o 34 -l 2 -p 0xff @EA@"
	damage_case "xattr entry hash $tag" "$opts" "zap_block -o 44 -l 1 -p 0x55 @EA@"
	case $opts in
	*^metadata_csum* | *ext3*)
		damage_case "xattr block reference count too high $tag" "$opts" "zap_block -o 4 -l 1 -p 5 @EA@"
		damage_case "xattr block shared, count too low $tag" "$opts" "sif /d/s file_acl @EA@" ;;
	*)
		damage_case "xattr block checksum $tag" "$opts" "zap_block -o 16 -l 4 -p 0 @EA@" ;;
	esac
done

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on extended attribute block damage"
