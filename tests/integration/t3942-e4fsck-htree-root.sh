#!/bin/bash
# t3942-e4fsck-htree-root.sh - the root block of an indexed directory,
# judged by e2fsck 1.47 in -n, -p and -y: the questions e2fsck's pass 1
# asks after walking the directory (no dir_index, a bad header, an unknown
# hash, incompatible flags, a tree too deep), its count of directories that
# need largedir (more than two levels, or 2 GiB and more) with the question
# at the end of pass 1, and pass 2's own test of the root ("root node is
# invalid", also for a depth the file system does not allow).
#
# The root is edited byte by byte on a file system without metadata_csum,
# so that no checksum failure adds its own questions.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

L1K="-t ext4 -O ^metadata_csum -b 1024 -N 1024@8M"
L4K="-t ext4 -O ^metadata_csum -b 4096 -N 1024@16M"

# /d gets enough names for an index of several leaves, which e2fsck -D builds.
base_image() {
	spec_image "$@"
	{
		for i in $(seq 1 150); do echo "write /dev/null d/an_entry_with_a_long_name_$i"; done
	} | debugfs -w -f - "$1" >/dev/null 2>&1
	e2fsck -fyD "$1" >/dev/null 2>&1 || true
}

# root_poke OFFSET BYTES: a shell command writing BYTES (printf escapes) at
# OFFSET of /d's block 0 (the image is the command's $1).
root_poke() {
	printf '%s' "bs=\$(dumpe2fs -h \"\$1\" 2>/dev/null | awk -F: '/^Block size/ { print \$2 + 0 }')
blk=\$(debugfs -R 'bmap /d 0' \"\$1\" 2>/dev/null)
printf '$2' | dd of=\"\$1\" bs=1 seek=\$((blk * bs + $1)) conv=notrunc status=none"
}

for spec in "$L1K" "$L4K"; do
	tag="[${spec%@*}]"
	# The root's dx_root_info: reserved_zero at 24, hash_version 28, info_length 29, indirect_levels 30, flags 31.
	DAMAGE_CMD=1 damage_case "root: reserved field set $tag" "$spec" "$(root_poke 24 '\x01')"
	DAMAGE_CMD=1 damage_case "root: info length 4 $tag" "$spec" "$(root_poke 29 '\x04')"
	DAMAGE_CMD=1 damage_case "root: unknown hash version $tag" "$spec" "$(root_poke 28 '\x09')"
	DAMAGE_CMD=1 damage_case "root: incompatible flag $tag" "$spec" "$(root_poke 31 '\x01')"
	DAMAGE_CMD=1 damage_case "root: two indirect levels without largedir $tag" "$spec" "$(root_poke 30 '\x02')"
	DAMAGE_CMD=1 damage_case "root: three indirect levels without largedir $tag" "$spec" "$(root_poke 30 '\x03')"
	DAMAGE_CMD=1 damage_case "root: five indirect levels $tag" "$spec" "$(root_poke 30 '\x05')"
	damage_case "an indexed directory of 4 GiB without largedir $tag" "$spec" "sif /d size 4294973440"
	damage_case "an indexed directory without dir_index $tag" "$spec" "feature -dir_index"
done

exit "$failed"
