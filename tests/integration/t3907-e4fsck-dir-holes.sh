#!/bin/bash
# t3907-e4fsck-dir-holes.sh - holes in a directory's logical blocks, judged
# by e2fsck 1.47 through damage_case (tests/lib/fsck-damage.sh): the same
# lines and exit status in -n, -p and -y, a clean result.
#
# An extent-mapped directory gets its extents moved down to close the gaps
# in pass 1 ("Directory inode I block B should be at block C"), then its
# i_size follows; an indirect-mapped one gets a new, empty block in each
# hole in pass 2 ("has an unallocated block #B.  Allocate").  The holes are
# punched with debugfs into /d, a directory of 600 long names (about 40
# blocks of 1 KiB): one block, several, block 0, enough to need an extent
# tree block, an htree directory, and past the direct blocks of an
# indirect map.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

base_image() {
	local img=$1 spec=$2
	spec_image "$img" "$spec"
	for i in $(seq 1 600); do
		echo "write /dev/null d/a_file_with_a_rather_long_name_number_$i"
	done | debugfs -w -f - "$img" >/dev/null 2>&1
}

punches() {
	local b
	for b in "$@"; do echo "punch /d $b $b"; done
}

for spec in "-t ext4 -b 1024 -O ^dir_index@16M" "-t ext4 -b 1024@16M" "-t ext3 -b 1024 -O ^dir_index@16M"; do
	tag="[${spec%@*}]"
	damage_case "directory with a hole $tag" "$spec" "$(punches 1)"
	damage_case "directory with three holes $tag" "$spec" "$(punches 2 5 6)"
	damage_case "directory without block 0 $tag" "$spec" "$(punches 0)"
	damage_case "directory with seven holes $tag" "$spec" "$(punches 1 3 5 7 9 11 13)"
	case $spec in
	*ext3*) damage_case "directory with a hole past the direct blocks $tag" "$spec" "$(punches 14 20)" ;;
	esac
done

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on directory holes"
