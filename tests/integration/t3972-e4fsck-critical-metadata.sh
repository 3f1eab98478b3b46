#!/bin/bash
# t3972-e4fsck-critical-metadata.sh - a map or extent tree block of a file
# that lies on the file system's own metadata, judged by e2fsck (issue 20).
#
# e2fsck keeps a map of the metadata (every group's superblock and
# descriptor copies with the reserved descriptor blocks, bitmaps and inode
# table).  An indirect block of a file found there is reported ("Inode N
# block B conflicts with critical metadata, skipping block checks."), walked
# all the same, and the pointers outside the file system it holds are
# counted but neither reported nor cleared: clearing them would write into
# the superblock, a descriptor, a bitmap or an inode table.  An extent index
# pointing there gets the same message, and the subtree below it is checked
# without repairs; when the block is no tree node at all the walk ends
# ("Failed to iterate extents", then, kept with -n, e2fsck's fatal "Error
# while iterating over blocks").  Unless -n, the check starts again after
# pass 2: passes 1B-1D have given the file a copy of the block by then
# (shared with "<filesystem metadata>"), which the next run repairs.
#
# Each case makes an ext3 (1 KiB or 4 KiB blocks) or ext4 file system with
# mke2fs and debugfs and points a file's indirect block, or an extent
# index, at one of those blocks.  tests/lib/fsck-damage.sh then requires
# e2fsck's lines and exit codes with -n, -p and -y (-n also with 1 and 4
# threads), a second -fy exiting 0, e2fsck -fn clean afterwards and /big
# intact; here dumpe2fs must read the result, and its superblock and group
# layout must be what e2fsck's repair leaves.  Then, on a terminal, a clone
# declined: e4fsck must not restart for ever (it does not restart at all:
# nothing moved) nor write into the metadata.  Last, the image the
# random-damage sweep found (a triple indirect block on the superblock)
# when it is there to copy.
#
# Where e2fsck 1.47 prints something wrong, the comparison corrects it:
# its library's warnings on stderr about block numbers outside the file
# system, which its passes 1B-1D pass to it; the range "0--1" it prints
# when a file's first multiply-claimed block is block 1; -n giving up at the
# first illegal pointer to an indirect block it keeps (as t3910 says); and
# after a restart it forgets the repairs of the run before, so a run that
# then finds nothing calls the file system unmodified (exit 0).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd python3 dumpe2fs timeout
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup
damage_need_e2fsck_147
# Patterned, not random, contents: a pointer walk that strays into a file's
# data then meets the same numbers in every run.
python3 - "$src" <<'EOF'
import os, sys
d = sys.argv[1]
with open(os.path.join(d, 'victim'), 'wb') as f:   # 20 blocks of 1 KiB: an indirect block
    f.write(bytes(i % 251 for i in range(20000)))
with open(os.path.join(d, 'frag'), 'wb') as f:     # 12 runs 64 KiB apart: an extent tree block
    for i in range(12):
        f.seek(i * 65536)
        f.write(bytes((i + j) % 253 for j in range(8192)))
with open(os.path.join(d, 'small'), 'wb') as f:
    f.write(bytes(j % 7 for j in range(5000)))
EOF

# LAYOUT: "victim" (an indirect-mapped /victim), "frag" (/frag, a tree of
# depth 1), or "dir" (/dd, a directory whose 120 entries fill 7 blocks that
# files written in between keep apart: a tree of depth 1).
LAYOUT=victim
base_image() {
	local img=$1 opts=$2 i
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 16M >/dev/null 2>&1
	{
		echo "write $src/big big"
		case $LAYOUT in
		victim) echo "write $src/victim victim" ;;
		frag) echo "write $src/frag frag" ;;
		dir)
			echo "mkdir dd"
			for i in $(seq 1 120); do
				echo "write $src/small dd/$(printf 'n%03d_%0200d' "$i" 0)"
			done ;;
		esac
		echo "write $src/small small"
		echo "mkdir d"
		echo "write $src/small d/s"
	} | debugfs -w -f - "$img" >/dev/null 2>&1
}

# Group 0's metadata as dumpe2fs places it: @SB@ the superblock (1 with
# 1 KiB blocks), @GDT@ the descriptors, @RGDT@ the first reserved
# descriptor block, @BB@ and @IB@ the bitmaps, @IT@ the inode table's first
# block and @ITLAST@ its last; @SB1@ group 1's backup superblock.  @LEAF@:
# the tree block of /frag.
meta() {
	dumpe2fs "$1" 2>/dev/null | sed -n "/^Group $2:/,/^Group/p" | sed -n "$3" | head -n 1
}
expand() {
	local img=$1 cmds=$2
	cmds=${cmds//@SB@/$(meta "$img" 0 's/^ *Primary superblock at \([0-9]*\).*/\1/p')}
	cmds=${cmds//@GDT@/$(meta "$img" 0 's/.*Group descriptors at \([0-9]*\).*/\1/p')}
	cmds=${cmds//@RGDT@/$(meta "$img" 0 's/^ *Reserved GDT blocks at \([0-9]*\).*/\1/p')}
	cmds=${cmds//@BB@/$(meta "$img" 0 's/^ *Block bitmap at \([0-9]*\).*/\1/p')}
	cmds=${cmds//@IB@/$(meta "$img" 0 's/^ *Inode bitmap at \([0-9]*\).*/\1/p')}
	cmds=${cmds//@IT@/$(meta "$img" 0 's/^ *Inode table at \([0-9]*\).*/\1/p')}
	cmds=${cmds//@ITLAST@/$(meta "$img" 0 's/^ *Inode table at [0-9]*-\([0-9]*\).*/\1/p')}
	cmds=${cmds//@SB1@/$(meta "$img" 1 's/^ *Backup superblock at \([0-9]*\).*/\1/p')}
	cmds=${cmds//@LEAF@/$(debugfs -R "ex /frag" "$img" 2>/dev/null | awk '$1 == "0/" && $2 == "1" { print $8; exit }')}
	printf '%s\n' "$cmds"
}

# e2fsck's library warns on stderr when its passes 1B-1D test a block
# outside the file system, which e2fsck has left in the map (in the middle
# of a line its stdout had begun): dropped, and the line joined again.
# e2fsck prints "0--1" where a file's first multiply-claimed block is 1
# (its range starts from the 0 it began with): read as the block alone.
warnings='
:a
/Illegal block number passed to ext2fs_[a-z_]*_bitmap #[0-9]* for [a-z -]*map$/{
N
s/Illegal block number passed to ext2fs_[a-z_]*_bitmap #[0-9]* for [a-z -]*map\n//
ba
}'
first_one='s/\(Multiply-claimed block(s) in inode [0-9]*:\) 0--1\( \|$\)/\1 1\2/'
first_range='s/\(Multiply-claimed block(s) in inode [0-9]*:\) 0--\([0-9]\)/\1 1--\2/'

# The result: dumpe2fs reads it, and its superblock and the places of every
# group's superblock copy, descriptors, bitmaps and inode table are those
# e2fsck's repair of a copy leaves (the check's time, the mount count and
# checksums aside, and which blocks are free: a journal made anew does not
# lie where e2fsck puts it).
tables() {
	dumpe2fs "$1" 2>/dev/null | grep -v -e '^Last checked:' -e '^Last write time:' -e '^Mount count:' \
		-e '^Lifetime writes:' -e '^Checksum:' -e 'Free blocks: ' -e 'free blocks, ' |
		sed -e 's/ csum 0x[0-9a-f]*//'
}
metadata_case() {
	local name=$1 opts=$2 cmds=$3 before=$failed
	failed=0
	damage_case "$name" "$opts" "$cmds"
	# The case must be the one it says: the collision is what e2fsck reports first.
	if [ $failed = 0 ] && ! grep -q 'conflicts with critical metadata, skipping block checks' "$T/theirs.n"; then
		bad "$name: e2fsck reports no collision with metadata: the case tests nothing"
	fi
	if [ $failed = 0 ]; then
		if ! tables "$T/dmg.img" >"$T/tables.ours"; then
			bad "$name: dumpe2fs cannot read e4fsck's result"
		elif ! diff <(tables "$T/ref.img") "$T/tables.ours" >"$T/diff"; then
			bad "$name: e4fsck's superblock or group layout differs from e2fsck's:"
			sed 's/^/    /' "$T/diff" | head -n 10
		else
			pass "$name: superblock and group layout as e2fsck leaves them"
		fi
	fi
	[ "$before" = 0 ] || failed=1
}

DAMAGE_SED=$warnings

# (a) ext3, 1 KiB blocks: /victim's indirect, double or triple indirect
# block on the superblock, a descriptor block, a reserved descriptor block
# (a block of the resize inode too) or group 1's backup superblock.
o1k="-t ext3 -b 1024"
DAMAGE_SED="$warnings
$first_one" metadata_case "indirect block on the superblock [$o1k]" "$o1k" "sif /victim block[IND] @SB@"
DAMAGE_SED="$warnings
$first_one" metadata_case "double indirect block on the superblock [$o1k]" "$o1k" "sif /victim block[DIND] @SB@"
# The superblock's words, read as double indirect blocks, lead to the
# journal's superblock: its magic number is an illegal pointer to an
# indirect block, which -n keeps and then gives up at, as e2fsck does (the
# walk ends with the subtree that holds it).  -y clears it there, and the
# journal is made anew after the restart.
metadata_case "triple indirect block on the superblock [$o1k]" "$o1k" "sif /victim block[TIND] @SB@"
metadata_case "indirect block on the descriptors [$o1k]" "$o1k" "sif /victim block[IND] @GDT@"
metadata_case "indirect block on a reserved descriptor block [$o1k]" "$o1k" "sif /victim block[IND] @RGDT@"
metadata_case "indirect block on group 1's superblock [$o1k]" "$o1k" "sif /victim block[IND] @SB1@"

# (b) ext3, 4 KiB blocks: the indirect block on a bitmap, the inode table or
# the descriptors (whose first words point at group 0's bitmaps and table).
o4k="-t ext3 -b 4096"
metadata_case "indirect block on the block bitmap [$o4k]" "$o4k" "sif /victim block[IND] @BB@"
metadata_case "indirect block on the inode bitmap [$o4k]" "$o4k" "sif /victim block[IND] @IB@"
metadata_case "indirect block on the inode table [$o4k]" "$o4k" "sif /victim block[IND] @IT@"
DAMAGE_SED="$warnings
$first_range" metadata_case "indirect block on the descriptors [$o4k]" "$o4k" "sif /victim block[IND] @GDT@"

# (c) ext4: the root of /frag holds one index entry, i_block[4] its child.
# A bitmap, a descriptor block or the superblock is no tree node: the walk
# ends, a yes clears the file and the check restarts at once.
LAYOUT=frag
for opts in "-t ext4 -b 4096" "-t ext4 -b 1024"; do
	metadata_case "extent index on the block bitmap [$opts]" "$opts" "sif /frag block[4] @BB@"
	metadata_case "extent index on the inode bitmap [$opts]" "$opts" "sif /frag block[4] @IB@"
	metadata_case "extent index on the descriptors [$opts]" "$opts" "sif /frag block[4] @GDT@"
done
metadata_case "extent index on the superblock [-t ext4 -b 1024]" "-t ext4 -b 1024" "sif /frag block[4] @SB@"
# A directory cleared so is empty too: "zero-length directory".
LAYOUT=dir
metadata_case "directory's extent index on the block bitmap [-t ext4 -b 4096]" "-t ext4 -b 4096" \
	"sif /dd block[4] @BB@"

# A tree block that is a tree block, but on the inode table: /frag's leaf
# copied into the last block of group 0's table (inodes no scan reads: the
# table's unused tail), the index pointed at the copy.  It is walked
# without repairs; passes 1B-1D copy it for /frag, and the check restarts
# after pass 2.  With one extent made to point outside the file system,
# e2fsck believes it there (counting its blocks) and asks about it only in
# the next run, when the block is /frag's own.
LAYOUT=frag
cat >"$T/copy-leaf.sh" <<'EOF'
img=$1 bad=${2:-}
leaf=$(debugfs -R "ex /frag" "$img" 2>/dev/null | awk '$1 == "0/" && $2 == "1" { print $8; exit }')
it=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/^ *Inode table at [0-9]*-\([0-9]*\).*/\1/p' | head -n 1)
bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
dd if="$img" of="$img" bs="$bs" skip="$leaf" seek="$it" count=1 conv=notrunc status=none
# The second extent's start (ee_start_lo, bytes 32-35 of the node) past the end.
[ -z "$bad" ] || printf '\377\377\377\177' | dd of="$img" bs=1 seek=$((it * bs + 32)) conv=notrunc status=none
debugfs -w -R "sif /frag block[4] $it" "$img" >/dev/null 2>&1
EOF
o="-t ext4 -b 4096 -O ^metadata_csum,uninit_bg"
DAMAGE_CMD=1 metadata_case "extent tree block on the inode table, a bad extent in it [$o]" \
	"$o" "bash '$T/copy-leaf.sh' \"\$1\" bad"
# Nothing to repair in the copy: e2fsck's second run finds nothing and
# forgets that the first one copied the block ("FILE SYSTEM WAS MODIFIED",
# exit 1, are e4fsck's).
o="-t ext4 -b 4096"
DAMAGE_CMD=1 DAMAGE_E2FSCK_FY_EXIT=0 DAMAGE_FY_SED='/^$/{N;/FILE SYSTEM WAS MODIFIED/d}' \
	metadata_case "extent tree block on the inode table [$o]" "$o" "bash '$T/copy-leaf.sh' \"\$1\""

# Interactively, with the clone declined ("no" to "Clone multiply-claimed
# blocks" and to "Delete file"): nothing moved the block, so the check does
# not restart (e2fsck would, and ask again, as often as it is told no); it
# ends with the errors left (exit 4, as e2fsck's whenever errors are left,
# repairs or not), and the reserved descriptor block the
# file's indirect block lies on is as it was.
name="a clone declined: no restart, the metadata left alone [$o1k]"
LAYOUT=victim
base_image "$T/tty.img" "$o1k"
rgdt=$(meta "$T/tty.img" 0 's/^ *Reserved GDT blocks at \([0-9]*\).*/\1/p')
debugfs -w -R "sif /victim block[IND] $rgdt" "$T/tty.img" >/dev/null 2>&1
before=$(dd if="$T/tty.img" bs=1024 skip="$rgdt" count=1 status=none | md5sum)
rc=0; timeout 60 python3 "$top_srcdir/tests/lib/pty-answers.py" ynn NL "$E4FSCK" -f "$T/tty.img" >"$T/ours.tty" 2>&1 || rc=$?
after=$(dd if="$T/tty.img" bs=1024 skip="$rgdt" count=1 status=none | md5sum)
if [ "$rc" != 4 ] || grep -q '^Restarting' "$T/ours.tty" || ! grep -q 'Clone multiply-claimed blocks<y>? no' "$T/ours.tty"; then
	bad "$name: exit $rc"; sed 's/^/    /' "$T/ours.tty" | head -n 30
elif [ "$before" != "$after" ] || ! dumpe2fs "$T/tty.img" >/dev/null 2>&1; then
	bad "$name: the reserved descriptor block $rgdt changed"
else
	pass "$name"
fi

# The image the random-damage sweep kept (t3970, seed 176 on ext3-1k): e4fsck
# -fy used to clear "illegal" pointers in the superblock.  Now it must
# survive, and the result be clean.
found=/work/damage-findings/not-clean/superblock-clobbered-by-fy.img
if [ -r "$found" ]; then
	cp "$found" "$T/found.img"
	rc=0; "$E4FSCK" -fy "$T/found.img" >"$T/found.out" 2>&1 || rc=$?
	clean=0; e2fsck -fn "$T/found.img" >"$T/check" 2>&1 || clean=$?
	if [ "$rc" != 1 ] || ! dumpe2fs -h "$T/found.img" >/dev/null 2>&1 || [ "$clean" != 0 ]; then
		bad "the sweep's image: e4fsck -fy exit $rc, then e2fsck -fn exit $clean"
		sed 's/^/    /' "$T/check" | head -n 10
	else
		pass "the sweep's image: triple indirect block on the superblock"
	fi
else
	echo "SKIP the sweep's image: $found is not there"
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on blocks that lie on critical metadata"
