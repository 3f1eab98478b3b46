#!/bin/bash
# t3902-e4fsck-inline.sh - e4fsck's checks of inline data, judged by e2fsck.
#
# Each case makes a small file system with `mke2fs -O inline_data` holding
# /big (block mapped by extents) and the inline files /f and /f2 (under 60
# bytes: their data lives in i_block and the system.data attribute), in
# some cases the inline directory /sub holding /sub/g too, damages it in one
# way with `debugfs -w`, then tests/lib/fsck-damage.sh's damage_case
# requires e4fsck to print and exit as e2fsck does in -fn, -fp and -fy, a
# second -fy to be clean, e2fsck -fn to be clean on the result, and /big
# and the undamaged inline file /f2 to be intact.  The problems:
#
#   both the inline-data and the extents flag: an extent tree (the inline
#   flag goes), data short enough to be inline (the extents flag goes),
#   i_block that could be a block map (both go), junk (the inode goes), a
#   fifo (e2fsck's special-file question); on a terminal, a no to one
#   question and a yes to the next;
#   the inline-data flag without a system.data attribute (truncated);
#   the inline_data feature dropped: the first inline inode sets it again,
#   an inode without the attribute is cleared first, or truncated after;
#   /lost+found with inline data (a directory, a file): unlinked and made
#   again, the old one connected to the new one after a restart.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"

damage_setup
damage_need_e2fsck_147

printf 'forty bytes of inline data, kept inline\n' >"$src/small"
printf 'another inline file\n' >"$src/small2"

# base_image IMG LAYOUT: LAYOUT "files" (/big, /f, /f2) or "dirs" (and /sub/g).
base_image() {
	local img=$1 layout=$2
	rm -f "$img"
	mke2fs -q -F -t ext4 -O inline_data "$img" 8M >/dev/null 2>&1
	{
		echo "write $src/big big"
		echo "write $src/small f"
		echo "write $src/small2 f2"
		if [ "$layout" = dirs ]; then
			echo "mkdir sub"
			echo "write $src/small sub/g"
		fi
	} | debugfs -w -f - "$img" >/dev/null 2>&1
}

# inline_case NAME LAYOUT CMDS: damage_case, then /f2's bytes after the
# repair (when CMDS leave /f2 alone).
inline_case() {
	local before=$failed
	damage_case "$@"
	[ "$failed" = "$before" ] || return 0
	case $3 in *f2*) return 0 ;; esac
	debugfs -R "stat /f2" "$T/dmg.img" 2>/dev/null | grep -q "Size: $(stat -c %s "$src/small2")\$" ||
		bad "$1: /f2's size changed"
	# debugfs 1.47.0's cat prints an inline file's whole inline area: its first i_size bytes are the file.
	debugfs -R "cat /f2" "$T/dmg.img" 2>/dev/null >"$T/f2.out"
	cmp -s -n "$(stat -c %s "$src/small2")" "$T/f2.out" "$src/small2" || bad "$1: /f2 changed"
}

# i_block's fifteen words zeroed: a block map naming no block.
zero_map=$(for i in $(seq 0 14); do echo "sif f block[$i] 0"; done)

# ------------------------------------------------- inline data and extents
inline_case "extent file with the inline-data flag" files "sif big flags 0x10080000"
inline_case "inline file with the extents flag" files "sif f flags 0x10080000"
inline_case "inline directory with the extents flag" dirs "sif sub flags 0x10080000"
inline_case "both flags, too big for inline data, i_block junk" files "sif f flags 0x10080000
sif f size 5000"
inline_case "both flags, too big for inline data, i_block a block map" files "sif f flags 0x10080000
sif f size 5000
$zero_map"
# A no leaves both flags, and e2fsck's fifo check stays quiet about them.
DAMAGE_N_QUIET=1 inline_case "fifo with both flags" files "mknod p p
sif p flags 0x10080000"

# On a terminal, a no to the first question of the chain brings the next:
# "seems to have inline data" declined, "contains junk" accepted clears /f.
name="inline file with the extents flag, answered no then yes on a terminal"
base_image "$T/tty.img" files
debugfs -w -R "sif f flags 0x10080000" "$T/tty.img" >/dev/null 2>&1
tty_case "$name" ny '^Clear inode<y>? yes' && pass "$name"

# ------------------------------------------------------- system.data gone
inline_case "inline file without system.data" files "ea_rm f system.data"
inline_case "inline directory without system.data" dirs "ea_rm sub system.data"

# ------------------------------------------------- the feature dropped
inline_case "inline_data feature dropped" files "feature -inline_data"
inline_case "inline_data feature dropped, the first file without system.data" files "feature -inline_data
ea_rm f system.data"
inline_case "inline_data feature dropped, the second file without system.data" files "feature -inline_data
ea_rm f2 system.data"

# ------------------------------------------------------- /lost+found
# e2fsck -n never looks at /lost+found when nothing needs it.  A directory
# unlinked, the check starts again to connect it to the new /lost+found.
DAMAGE_N_QUIET=1 inline_case "/lost+found an inline directory" files "rmdir lost+found
mkdir lost+found"
DAMAGE_N_QUIET=1 inline_case "/lost+found an inline directory holding a file" files "rmdir lost+found
mkdir lost+found
write $src/small lost+found/x"
DAMAGE_N_QUIET=1 inline_case "/lost+found an inline file" files "rmdir lost+found
write $src/small lost+found"

exit "$failed"
