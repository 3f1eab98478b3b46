#!/bin/bash
# t3925-e4fsck-xattr.sh - e4fsck's check of extended attribute blocks,
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
# it, e2fsck -n stops at the checksum the damage breaks ("aborted").  With
# ea_inode, values kept in EA inodes count in their owner's i_blocks: debugfs
# leaves them out, the kernel does not.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup
head -c 5000 /dev/urandom >"$src/small"
head -c 600 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 700 >"$src/value"

head -c 9000 /dev/urandom >"$src/value9k"

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
	# With ea_inode, values too big for a block go to EA inodes; debugfs leaves
	# them out of the owner's i_blocks, where the kernel charges them.
	case $opts in
	*ea_inode*) debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF ;;
		ea_set -f $src/value9k /small user.huge
		ea_set -f $src/value9k /d/s user.huge
	EOF
	esac
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

# Values kept in EA inodes count in their owner's i_blocks, in the inode and in the block;
# an EA inode's reference count (i_ctime:version) is the number of entries naming it, and one
# named by none is an unattached inode.
cat >"$T/ea-inode.sh" <<'EOS'
# ea-inode.sh IMG refcount|unnamed: damage the first EA inode's count, or the attributes naming it.
img=$1
for ino in $(seq 12 40); do
	if debugfs -R "stat <$ino>" "$img" 2>/dev/null | head -n 1 | grep -q 'Flags: 0x2.....$'; then
		break
	fi
done
case $2 in
refcount) debugfs -w -R "sif <$ino> version 7" "$img" >/dev/null 2>&1 ;;
unnamed)
	# /small's in-inode attribute magic, after its 32-byte extra fields.
	set -- $(debugfs -R "imap /small" "$img" 2>/dev/null | sed -n 's/.*block \([0-9]*\), offset \(0x[0-9a-f]*\).*/\1 \2/p')
	bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	printf '\0\0\0\0' | dd of="$img" bs=1 seek=$(( $1 * bs + $2 + 160 )) conv=notrunc status=none ;;
esac
EOS
for opts in "-t ext4 -O ea_inode" "-t ext4 -b 4096 -O ea_inode"; do
	damage_case "EA-inode values left out of i_blocks [$opts]" "$opts" ""
	DAMAGE_CMD=1 damage_case "EA inode reference count wrong [$opts]" "$opts" "bash '$T/ea-inode.sh' \"\$1\" refcount"
	DAMAGE_CMD=1 damage_case "EA inode named by no attribute [$opts]" "$opts" "bash '$T/ea-inode.sh' \"\$1\" unnamed"
done

# No false positive on what the kernel writes: values in EA inodes, named in
# the inode and in a shared attribute block, charged to each owner.
name="kernel-written EA-inode values"
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	echo "SKIP $name: needs root, loop devices and python3"
else
	rm -f "$T/k.img"
	mke2fs -q -F -t ext4 -O ea_inode -b 4096 "$T/k.img" 64M >/dev/null 2>&1
	mkdir -p "$T/mnt"
	if ! mount -o loop "$T/k.img" "$T/mnt" 2>"$T/mount.err"; then
		bad "$name: mount failed: $(cat "$T/mount.err")"
	else
		python3 - "$T/mnt" <<-'EOF'
			import os, sys
			d = sys.argv[1]
			v, w = os.urandom(9000), os.urandom(30000)
			for n in ('a', 'b', 'c'):
			    p = os.path.join(d, n)
			    open(p, 'w').write('x')
			    for i in range(6):
			        os.setxattr(p, 'user.small%d' % i, b'v' * 40)
			    os.setxattr(p, 'user.big', v)
			    os.setxattr(p, 'user.big2', w)
			p = os.path.join(d, 'lone')
			open(p, 'w').write('y')
			os.setxattr(p, 'user.only', os.urandom(5000))
		EOF
		umount "$T/mnt"
		rc=0; "$E4FSCK" -fn "$T/k.img" >"$T/k.out" 2>&1 || rc=$?
		want=0; e2fsck -fn "$T/k.img" >"$T/k.ref" 2>&1 || want=$?
		if [ "$want" != 0 ]; then
			bad "$name: e2fsck -fn exits $want on the kernel's image"
		elif [ "$rc" != 0 ]; then
			bad "$name: e4fsck -fn exits $rc:"; sed 's/^/    /' "$T/k.out" | head -n 10
		else
			pass "$name"
		fi
	fi
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on extended attribute block damage"
