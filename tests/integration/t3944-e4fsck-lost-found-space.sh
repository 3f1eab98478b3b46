#!/bin/bash
# t3944-e4fsck-lost-found-space.sh - no room for /lost+found, judged by
# e2fsck 1.47 in -n, -p and -y: on a file system without a free block, or
# without a free inode, a lost file needs /lost+found, which cannot be made.
# e2fsck offers to put lost files in the root directory instead (and says
# there is no space to recover them); preen stops there.

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
# Without a free inode e2fsck makes no /lost+found at every run, and every
# run takes a block for it that its pass 5 then counts free again: it never
# leaves this file system clean, nor does e4fsck.
DAMAGE_NEVER_CLEAN=1 damage_case "no free inodes, a lost file, no /lost+found" inodes "unlink lost"

exit "$failed"
