#!/bin/bash
# t3910-e4fsck-extents.sh - e4fsck's check of extent trees, entry by entry,
# judged by e2fsck.
#
# Each case writes a small file system with debugfs (a file whose extents
# fill a tree block, a file of two extents in the inode, a directory),
# damages one extent tree in one way with `debugfs -w` (an entry pointing
# outside the file system, a zero length, out of order or overlapping
# entries, a corrupt header in the inode or in a tree block, a tree block
# whose checksum alone is wrong, an index that starts elsewhere than its
# child, an i_size that leaves extents out of bounds, a directory extent
# marked unwritten or beyond the directory size limit), and requires what
# tests/lib/fsck-damage.sh describes: e4fsck prints and exits as e2fsck in
# -n, -p and -y (also with 1 and 4 threads), -y leaves a file system
# e2fsck calls clean, and /big is intact.  Removing an index leaves a tree
# that could be shorter: e4fsck asks, as e2fsck, and rebuilds it in pass 1E.
# Indirect maps (ext2/ext3) get their illegal block pointers the same way.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd python3
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup
head -c 5000 /dev/urandom >"$src/small"
# frag: 12 data runs 64 KiB apart, so 12 extents: more than the inode holds.
# two: two runs, two extents in the inode.
python3 - "$src" <<'EOF'
import os, sys
d = sys.argv[1]
with open(os.path.join(d, 'frag'), 'wb') as f:
    for i in range(12):
        f.seek(i * 65536)
        f.write(os.urandom(8192))
with open(os.path.join(d, 'two'), 'wb') as f:
    f.write(os.urandom(16384))
    f.seek(65536)
    f.write(os.urandom(4096))
EOF

base_image() {
	local img=$1 opts=$2
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 16M >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		write $src/frag frag
		write $src/two two
		write $src/small small
		mkdir d
		write $src/small d/s
	EOF
}

# @LEAF@: the tree block holding /frag's extents; @TWO_LAST@: the last
# logical block of /two's first extent.
expand() {
	local leaf last cmds=$2
	leaf=$(debugfs -R "ex /frag" "$1" 2>/dev/null | awk '$1 == "0/" && $2 == "1" { print $8; exit }')
	last=$(debugfs -R "ex /two" "$1" 2>/dev/null | awk '$1 == "0/" && $3 == "1/" { print $7; exit }')
	cmds=${cmds//@LEAF@/$leaf}
	cmds=${cmds//@TWO_LAST@/$last}
	# @IND@: /frag's (first) indirect block, in an indirect-mapped image.
	printf '%s\n' "${cmds//@IND@/$(debugfs -R "stat /frag" "$1" 2>/dev/null | sed -n 's/.*(IND):\([0-9]*\).*/\1/p' | head -n 1)}"
}

# The layouts must give /frag a tree of depth 1, or the cases below test nothing.
for opts in "-t ext4" "-t ext4 -b 4096" "-t ext4 -b 4096 -O ^metadata_csum"; do
	base_image "$T/probe.img" "$opts"
	[ -n "$(expand "$T/probe.img" @LEAF@)" ] || fail "mke2fs $opts: /frag has no tree block"
done

for opts in "-t ext4" "-t ext4 -b 4096" "-t ext4 -b 4096 -O ^metadata_csum"; do
	tag="[$opts]"
	# In the inode: i_block[3..5] is the first extent, [6..8] the second.
	damage_case "extent starts outside the fs $tag" "$opts" "sif /two block[5] 99999999"
	damage_case "zero-length extent $tag" "$opts" "sif /two block[4] 0"
	damage_case "extent ends beyond the fs $tag" "$opts" "sif /two block[4] 20000"
	damage_case "extents out of order $tag" "$opts" "sif /two block[6] 0"
	damage_case "extents map a block twice $tag" "$opts" "sif /two block[6] @TWO_LAST@"
	damage_case "corrupt extent header in the inode $tag" "$opts" "sif /two block[0] 0"
	damage_case "directory with a corrupt extent header $tag" "$opts" "sif /d block[0] 0"
	damage_case "directory extent unwritten $tag" "$opts" "sif /d block[4] 32769"
	damage_case "directory extent past the size limit $tag" "$opts" "sif /d block[3] 3000000"
	# The root of /frag holds one index entry: block[3] its start, block[4] its child.
	damage_case "index start differs from its child $tag" "$opts" "sif /frag block[3] 1"
	damage_case "index points outside the fs $tag" "$opts" "sif /frag block[4] 99999999"
	# e2fsck's -E no_optimize_extents (and fixes_only) leave such a tree as it is.
	for e in no_optimize_extents fixes_only; do
		DAMAGE_OPTS="-E $e" damage_case "index points outside the fs, -E $e $tag" "$opts" \
			"sif /frag block[4] 99999999"
	done
	damage_case "tree block with a bad header $tag" "$opts" "zap_block -o 0 -l 2 -p 0 @LEAF@"
	damage_case "i_size below the tree's extents $tag" "$opts" "sif /frag size 20000"
	case $opts in
	*metadata_csum*) ;;
	# e2fsck rewrites the block but does not count it as a change: exit 0.
	*) DAMAGE_FY_EXIT=0 damage_case "tree block checksum $tag" "$opts" "zap_block -o 600 -l 1 -p 0x55 @LEAF@" ;;
	esac
done

# Indirect maps (ext2, ext3): pointers outside the file system, each asked
# about under e2fsck's "has illegal block(s)" question and zeroed on a yes.
for opts in "-t ext3" "-t ext2 -b 4096"; do
	tag="[$opts]"
	damage_case "illegal direct block $tag" "$opts" "sif /two block[1] 99999999"
	damage_case "two illegal direct blocks $tag" "$opts" "sif /two block[0] 99999999
sif /two block[1] 99999998"
	# With -n, e2fsck gives up ("Illegal indirect block found", exit 12) when no
	# indirect block is read after the illegal one, as on the 4 KiB layout; so does e4fsck.
	damage_case "illegal indirect block pointer $tag" "$opts" "sif /frag block[IND] 99999999"
	# A pointer zeroed in an indirect block leaves the inode as it was: e2fsck exits 0.
	DAMAGE_FY_EXIT=0 damage_case "illegal block inside an indirect block $tag" "$opts" \
		"zap_block -o 8 -l 4 -p 0xff @IND@"
done

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on extent tree or block map damage"
