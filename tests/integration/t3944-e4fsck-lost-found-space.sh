#!/bin/bash
# t3944-e4fsck-lost-found-space.sh - no room for /lost+found, judged by
# e2fsck 1.47 in -n, -p and -y: on a file system without a free block, or
# without a free inode, a lost file needs /lost+found, which cannot be made.
# e2fsck offers to put lost files in the root directory instead (and says
# there is no space to recover them); preen stops there.  With one free
# block, the block kept aside for /lost+found (and a new root) after pass 1.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

# Without /lost+found: no free block left (a file fills the rest), or no free
# inode left (small files take every one).  /lost file is then unlinked by the case.
base_image() {
	local img=$1 what=$2
	rm -f "$img"
	case $what in
	blocks)
		mke2fs -q -F -t ext4 -b 1024 -N 64 "$img" 4M >/dev/null 2>&1
		head -c 5000000 /dev/zero | tr '\0' z >"$T/fill"
		debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
			rmdir lost+found
			write $src/big big
			write /etc/hostname lost
			write $T/fill fill
		EOF
		;;
	hole | dirhole)
		# A block-mapped directory of three blocks (the root, or /d); the file fills the rest.
		local dir=/ mk=
		if [ "$what" = dirhole ]; then dir=d; mk="mkdir d"; fi
		mke2fs -q -F -t ext2 -b 1024 -N 32 "$img" 4M >/dev/null 2>&1
		head -c 5000000 /dev/zero | tr '\0' z >"$T/fill"
		debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
			rmdir lost+found
			$mk
			expand_dir $dir
			expand_dir $dir
			write $src/big big
			write $T/fill fill
		EOF
		;;
	inodes)
		mke2fs -q -F -t ext4 -b 1024 -N 16 "$img" 4M >/dev/null 2>&1
		{
			echo "rmdir lost+found"
			echo "write $src/big big"
			echo "write /etc/hostname lost"
			for i in $(seq 1 20); do echo "write /etc/hostname f$i"; done
		} | debugfs -w -f - "$img" >/dev/null 2>&1
		;;
	esac
}

damage_case "no free blocks, a lost file, no /lost+found" blocks "unlink lost"
# One free block, the root's second (punched out: a hole).  e2fsck keeps
# the last free block aside at the end of pass 1 for /lost+found, which it
# will have to make: pass 2 then cannot fill the hole, pass 3 makes
# /lost+found in that block, and pass 3A rebuilds the root without the hole.
damage_case "one free block, kept for /lost+found over a directory hole" hole "punch <2> 1 1"
# The punched block taken by a new small file: no block at all for
# /lost+found, so the root takes lost files; pass 3A rebuilds it, and as
# /lost+found it would keep its blocks, but its hole cannot be filled: it is
# rebuilt to its entries' size instead (e2fsck leaves the hole, and its own
# next run finds it).  The blocks the rebuild gave back make room for
# /lost+found, which the second run makes.
printf 'one block\n' >"$T/small"
DAMAGE_SECOND_FY_EXIT=1 damage_case "no free block, the root with a hole takes lost files" hole "punch <2> 1 1
write $T/small small"
# The root cleared too: its block and the punched one are kept aside, the
# first for the new root, the second for /lost+found; /d's hole stays a
# hole until pass 3A.  /big ends in /lost+found, under its number.
DAMAGE_NO_BIG=1 damage_case "root cleared, blocks kept for it and /lost+found over a directory hole" dirhole "punch d 1 1
clri <2>"
# Without a free inode e2fsck makes no /lost+found at every run, and every
# run takes a block for it that its pass 5 then counts free again: it never
# leaves this file system clean, nor does e4fsck.
DAMAGE_NEVER_CLEAN=1 damage_case "no free inodes, a lost file, no /lost+found" inodes "unlink lost"

exit "$failed"
