#!/bin/bash
# t3920-e4fsck-dups.sh - blocks claimed twice (e4fsck's passes 1B-1D),
# judged by e2fsck.
#
# Each case writes a small file system with debugfs, maps one or more
# logical blocks of a file onto a block something else already uses
# (`debugfs bmap FILE LBLK PBLK`, which works for extent trees and indirect
# maps alike): another file's, a directory's, the file's own, three files
# at once, the inode table's or the block bitmap's, or more blocks than the
# move leaves orphaned (so the copies need new blocks).  Then it requires
# what tests/lib/fsck-damage.sh describes: e4fsck lists the shared blocks,
# names the files and clones as e2fsck does, printing the same in -n, -p
# and -y (also with 1 and 4 threads), -y leaves a file system e2fsck calls
# clean, and /big is intact.  The copies must hold the shared data: after
# the repair, the file that was cloned reads what its blocks held.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup
head -c 20000 /dev/urandom >"$src/two"
head -c 5000 /dev/urandom >"$src/small"

base_image() {
	local img=$1 opts=$2
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 16M >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		write $src/two two
		write $src/small small
		mkdir d
		write $src/small d/s
	EOF
}

# @SMALL0@ @SMALL1@: /small's first two blocks; @TWO0@, @BIG0@: /two's and /big's first;
# @DIR0@: /d's first; @ITABLE@, @BBITMAP@: group 0's inode table and block bitmap.
expand() {
	local img=$1 cmds=$2 k v
	for k in SMALL0 SMALL1 TWO0 DIR0 BIG0; do
		case $k in
		BIG0) v=$(debugfs -R "bmap /big 0" "$img" 2>/dev/null) ;;
		SMALL0) v=$(debugfs -R "bmap /small 0" "$img" 2>/dev/null) ;;
		SMALL1) v=$(debugfs -R "bmap /small 1" "$img" 2>/dev/null) ;;
		TWO0) v=$(debugfs -R "bmap /two 0" "$img" 2>/dev/null) ;;
		DIR0) v=$(debugfs -R "bmap /d 0" "$img" 2>/dev/null) ;;
		esac
		cmds=${cmds//@$k@/$v}
	done
	v=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/^ *Inode table at \([0-9]*\)-.*/\1/p' | head -n 1)
	cmds=${cmds//@ITABLE@/$v}
	v=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/^ *Block bitmap at \([0-9]*\) .*/\1/p' | head -n 1)
	printf '%s\n' "${cmds//@BBITMAP@/$v}"
}

# After the repair /two's first block holds what /small's first block held
# (the clone copied it) and /small is still intact.
clone_check() {
	local name=$1 img="$T/dmg.img"
	debugfs -R "cat /small" "$img" 2>/dev/null >"$T/small.out"
	if ! cmp -s "$T/small.out" "$src/small"; then
		bad "$name: /small changed by the repair"; return
	fi
	debugfs -R "cat /two" "$img" 2>/dev/null | head -c 1024 >"$T/two.out"
	if ! cmp -s "$T/two.out" <(head -c 1024 "$src/small"); then
		bad "$name: /two's cloned block does not hold the shared data"; return
	fi
	pass "$name: the clone holds the shared data"
}

for opts in "-t ext4" "-t ext4 -b 4096" "-t ext3" "-t ext4 -O ^metadata_csum -b 4096"; do
	tag="[$opts]"
	before=$failed; failed=0
	damage_case "two files share a block $tag" "$opts" "bmap /two 0 @SMALL0@"
	[ $failed = 1 ] || clone_check "two files share a block $tag"
	[ "$before" = 0 ] || failed=1
	damage_case "two files share two runs $tag" "$opts" "bmap /two 0 @SMALL0@
bmap /two 2 @SMALL1@"
	damage_case "three files share a block $tag" "$opts" "bmap /two 0 @SMALL0@
bmap /d/s 1 @SMALL0@"
	damage_case "a file maps one block twice $tag" "$opts" "bmap /two 1 @TWO0@"
	damage_case "a file shares a directory's block $tag" "$opts" "bmap /two 0 @DIR0@"
	damage_case "a file shares the inode table $tag" "$opts" "bmap /two 0 @ITABLE@"
	damage_case "a file shares the block bitmap $tag" "$opts" "bmap /two 1 @BBITMAP@"
	# /small's extent stretched over ten of /big's blocks: /big is cloned first, and its
	# copies need more blocks than /small left orphaned (e2fsck then fixes the free counts).
	case $opts in
	*ext3*) ;;
	*) damage_case "more shared blocks than the damage freed $tag" "$opts" "sif /small block[5] @BIG0@
sif /small block[4] 10" ;;
	esac
done

# Shared mapping blocks: e2fsck copies the tree or indirect block to a new
# block for the file it clones, points the parent at the copy, and copies
# the shared data below it.  /frag has holes punched at blocks 10, 20, 30
# and 40, so its five extents need a leaf block; /frag2, punched alike, has
# its root's index entry (i_block[4], the leaf's block number) pointed at
# /frag's leaf.  On ext3, /three's single indirect block pointer is set to
# /two's.  (With metadata_csum e2fsck's pass 1B stops at /frag2's leaf,
# whose checksum is /frag's, and deletes the file: not compared here.)
head -c 100000 /dev/urandom >"$src/frag"
head -c 20000 /dev/urandom >"$src/three"
cp "$src/frag" "$src/frag.want"
for b in 10 20 30 40; do
	dd if=/dev/zero of="$src/frag.want" bs=1024 seek=$b count=1 conv=notrunc status=none
done
head -c 12288 "$src/three" >"$src/three.want"
tail -c +12289 "$src/two" >>"$src/three.want"

# DAMAGE_CMD scripts: $1 is the image.
cat >"$T/share-leaf.sh" <<EOS
printf '%s\n' "write $src/frag frag" "write $src/frag frag2" \
	"punch frag 10 10" "punch frag 20 20" "punch frag 30 30" "punch frag 40 40" \
	"punch frag2 10 10" "punch frag2 20 20" "punch frag2 30 30" "punch frag2 40 40" |
	debugfs -w -f - "\$1" >/dev/null 2>&1
leaf=\$(debugfs -R "stat /frag" "\$1" 2>/dev/null | sed -n 's/.*(ETB0):\([0-9]*\).*/\1/p')
debugfs -w -R "sif /frag2 block[4] \$leaf" "\$1" >/dev/null 2>&1
EOS
cat >"$T/share-ind.sh" <<EOS
debugfs -w -R "write $src/three three" "\$1" >/dev/null 2>&1
ind=\$(debugfs -R "stat /two" "\$1" 2>/dev/null | sed -n 's/.*(IND):\([0-9]*\).*/\1/p')
debugfs -w -R "sif /three block[IND] \$ind" "\$1" >/dev/null 2>&1
EOS

# After the repair: file $2 reads $4 and file $3 reads $5.
map_clone_check() {
	local name=$1 img="$T/dmg.img"
	debugfs -R "cat /$2" "$img" 2>/dev/null >"$T/a.out"
	debugfs -R "cat /$3" "$img" 2>/dev/null >"$T/b.out"
	if ! cmp -s "$T/a.out" "$4"; then
		bad "$name: /$2 does not read what it held"; return
	fi
	if ! cmp -s "$T/b.out" "$5"; then
		bad "$name: /$3 does not read the shared blocks"; return
	fi
	pass "$name: both files read the shared data"
}

before=$failed; failed=0
DAMAGE_CMD=1 damage_case "two files share an extent tree leaf" "-t ext4 -O ^metadata_csum" ". '$T/share-leaf.sh'"
[ $failed = 1 ] || map_clone_check "two files share an extent tree leaf" frag frag2 "$src/frag.want" "$src/frag.want"
[ "$before" = 0 ] || failed=1
before=$failed; failed=0
DAMAGE_CMD=1 damage_case "two files share an indirect block" "-t ext3" ". '$T/share-ind.sh'"
[ $failed = 1 ] || map_clone_check "two files share an indirect block" two three "$src/two" "$src/three.want"
[ "$before" = 0 ] || failed=1

# Issue 20: a shared indirect block reached through the triple-indirect
# slot while the double-indirect slot is 0 (a hole), on 1 KiB and 4 KiB
# blocks; /far comes first in pass 1D (/later, made after it, maps the same
# block as data), so its indirect block is the one copied.  To repoint the
# block's parent, pass 1D looks for the reference to it; it once
# followed the zero slot, read block 0 (the superblock's block on 4 KiB) as
# a double-indirect block, and when block 0 held the shared block's number
# (here in the boot area, 900 bytes in, which nothing else reads)
# wrote the new number at that offset into the 60-byte i_block.  The
# sanitizer build catches the write.
lblk_far=$((12 + 1024 + 1024 * 1024 + 5))   # past the double-indirect range at any block size up to 4 KiB
truncate -s $(((lblk_far + 2) * 4096)) "$src/far"
head -c 8192 /dev/urandom | dd of="$src/far" bs=4096 seek="$lblk_far" conv=notrunc status=none
cat >"$T/share-tind.sh" <<EOS
debugfs -w -R "write $src/far far" "\$1" >/dev/null 2>&1
ind=\$(debugfs -R "stat /far" "\$1" 2>/dev/null | sed -n 's/.*(IND):\([0-9]*\).*/\1/p')
debugfs -w -R "write $src/small later" "\$1" >/dev/null 2>&1
debugfs -w -R "sif /later block[0] \$ind" "\$1" >/dev/null 2>&1
le32=\$(printf '\\\\%03o' \$((ind & 255)) \$((ind >> 8 & 255)) \$((ind >> 16 & 255)) \$((ind >> 24 & 255)))
printf "\$le32" | dd of="\$1" bs=1 seek=900 conv=notrunc status=none
if [ -n "\${DIND:-}" ]; then
	debugfs -w -R "sif /far block[DIND] \$DIND" "\$1" >/dev/null 2>&1
fi
EOS
# After the repair /far's far blocks still read what /far held.
far_check() {
	local name=$1 bs=$2 img="$T/dmg.img" blk
	blk=$(debugfs -R "bmap /far $((lblk_far * 4096 / bs))" "$img" 2>/dev/null)
	dd if="$img" bs="$bs" skip="$blk" count=1 status=none >"$T/far.out"
	if ! cmp -s "$T/far.out" <(tail -c +$((lblk_far * 4096 + 1)) "$src/far" | head -c "$bs"); then
		bad "$name: /far does not read what it held"; return
	fi
	pass "$name: /far reads its data"
}
for bs in 1024 4096; do
	what="a shared indirect block under a zero double-indirect slot [ext3, $bs]"
	before=$failed; failed=0
	DAMAGE_CMD=1 damage_case "$what" "-t ext3 -b $bs" ". '$T/share-tind.sh'"
	[ $failed = 1 ] || far_check "$what" "$bs"
	[ "$before" = 0 ] || failed=1
	# The slot past the end of the file system instead: pass 1 clears it
	# with -y; with -n pass 1B steps over it, as e2fsck's iterator does
	# (e2fsck's library also warns on stderr that the block is outside its
	# map, which is not e2fsck's own output: dropped).
	DIND=$((16 * 1024 * 1024 / bs + 7)) DAMAGE_CMD=1 \
		DAMAGE_SED='/^Illegal block number passed to ext2fs_test_block_bitmap #[0-9]* for multiply claimed block map$/d' \
		damage_case "a shared indirect block under an out-of-range double-indirect slot [ext3, $bs]" \
		"-t ext3 -b $bs" ". '$T/share-tind.sh'"
done

# Shared attribute blocks: /two's attribute block (a value too big for the
# inode) is also mapped as /small's first data block.  /two (inode 13)
# comes first in pass 1D: its attribute block is copied, and the copy
# checksummed for its new place.  In the "sharers" cases /d/s names the
# same attribute block (h_refcount 2, made so by e2fsck before the damage)
# and follows /two to the copy.  In the "data first" case the roles are
# swapped (the attribute is /small's, /two maps it) and /two's data is
# cloned as usual.
head -c 600 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 600 >"$src/value"
cat >"$T/share-ea.sh" <<EOS
owner=\${2:-two} user=\${3:-small}
debugfs -w -R "ea_set -f $src/value \$owner user.big" "\$1" >/dev/null 2>&1
ea=\$(debugfs -R "stat /\$owner" "\$1" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p')
if [ -n "\${SHARERS:-}" ]; then
	debugfs -w -R "sif /d/s file_acl \$ea" "\$1" >/dev/null 2>&1
	e2fsck -fy "\$1" >/dev/null 2>&1
fi
debugfs -w -R "bmap /\$user 0 \$ea" "\$1" >/dev/null 2>&1
EOS

# After the repair: each of files $2... reads the attribute, and /$user's
# first block still holds the attribute block it was given.
ea_clone_check() {
	local name=$1 user=$2 img="$T/dmg.img" f
	shift 2
	for f in "$@"; do
		if ! debugfs -R "ea_get -f $T/v.out /$f user.big" "$img" >/dev/null 2>&1 || ! cmp -s "$T/v.out" "$src/value"; then
			bad "$name: /$f's attribute does not read its value"; return
		fi
	done
	debugfs -R "cat /$user" "$img" 2>/dev/null | head -c 4 | od -An -tx1 >"$T/magic.out"
	if [ "$(tr -d ' \n' <"$T/magic.out")" != 000002ea ]; then
		bad "$name: /$user's first block no longer holds the attribute block"; return
	fi
	pass "$name: the attributes read their values"
}

# e2fsck 1.47 does not count off the claim it gave up when it copies an
# attribute block, so it clones /small as well, leaves the old block to
# nobody (and the copy with the old block's checksum): its result needs a
# second run.  e4fsck says /small's block was dealt with.
ea_fix='/^File \/small /,/^Clone multiply-claimed blocks/s/^Clone multiply-claimed blocks? yes$/Multiply-claimed blocks already reassigned or cloned./
/^Free blocks count wrong/,/^$/d
s|[0-9]*/[0-9]* blocks$|N/N blocks|'
for opts in "-t ext4" "-t ext4 -O ^metadata_csum -b 4096" "-t ext3"; do
	tag="[$opts]"
	for sharers in "" 1; do
		what="a file's data shares an attribute block${sharers:+ (two sharers)} $tag"
		before=$failed; failed=0
		SHARERS=$sharers DAMAGE_FY_SED=$ea_fix DAMAGE_CMD=1 damage_case "$what" "$opts" ". '$T/share-ea.sh'"
		[ $failed = 1 ] || ea_clone_check "$what" small two ${sharers:+d/s}
		[ "$before" = 0 ] || failed=1
	done
	what="an attribute block shares a file's data, data first $tag"
	before=$failed; failed=0
	DAMAGE_CMD=1 damage_case "$what" "$opts" ". '$T/share-ea.sh' \"\$1\" small two"
	[ $failed = 1 ] || ea_clone_check "$what" two small
	[ "$before" = 0 ] || failed=1
done

# Deleting instead of cloning, on a terminal: "Clone? no", "Delete file?
# yes" for /two, yes to the rest.  The deleted /two's reference to the
# attribute block is counted off (h_refcount 2 to 1, /d/s keeps it), then
# /small's data is cloned.
for opts in "-t ext4" "-t ext3"; do
	name="interactive: the attribute block's owner deleted, not cloned [$opts]"
	base_image "$T/tty.img" "$opts"
	SHARERS=1 bash "$T/share-ea.sh" "$T/tty.img"
	tty_case "$name" ny '^Delete file<y>? yes' || continue
	if ! debugfs -R "ea_get -f $T/v.out /d/s user.big" "$T/tty.img" >/dev/null 2>&1 ||
	   ! cmp -s "$T/v.out" "$src/value"; then
		bad "$name: /d/s's attribute does not read its value"
	else
		pass "$name"
	fi
done

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on blocks claimed twice"
