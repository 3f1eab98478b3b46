#!/bin/bash
# t3930-e4fsck-super.sh - e4fsck's superblock step before pass 1, judged by
# e2fsck 1.47: falling back on a backup superblock when the primary is
# unusable, the fatal "Corruption found in superblock" values, and the
# fixable fields.
#
# Layouts: ext4 with 4 KiB blocks and metadata_csum (two groups, so there
# is a backup), ext4 with 1 KiB blocks without metadata_csum, ext3.
#
# Kinds that e2fsck repairs (exit 1 with -y) go through damage_case
# (tests/lib/fsck-damage.sh): the same output and exit status as e2fsck in
# -n, -p and -y, a clean second run and result, /big intact.  Kinds where
# e2fsck stops with exit 8, or repairs without calling the file system
# changed (exit 0), are compared here in the three modes by same_as_e2fsck.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

# Layout spec: "mke2fs options@size".
L4K="-t ext4 -b 4096@136M"
L1K="-t ext4 -O ^metadata_csum -b 1024@16M"
L3="-t ext3@16M"

base_image() { spec_image "$@"; }

# @RGDT@: the first reserved descriptor block (the resize inode's first list).
expand() {
	local rgdt
	rgdt=$(dumpe2fs "$1" 2>/dev/null | sed -n 's/^  Reserved GDT blocks at \([0-9]*\)-.*/\1/p' | head -n 1)
	printf '%s\n' "${2//@RGDT@/$rgdt}"
}

# Byte edits of the primary superblock (debugfs cannot set these).
zero_magic='printf "\0\0" | dd of="$1" bs=1 seek=$((1024 + 0x38)) conv=notrunc status=none'
future_wtime='printf "\0\0\0\x70" | dd of="$1" bs=1 seek=$((1024 + 0x30)) conv=notrunc status=none'

for spec in "$L4K" "$L1K" "$L3"; do
	tag="[${spec%@*}]"
	DAMAGE_CMD=1 damage_case "zeroed magic: backup superblock $tag" "$spec" "$zero_magic"
	damage_case "blocks_per_group 0: backup superblock $tag" "$spec" "ssv blocks_per_group 0"
	damage_case "log_block_size 10: backup superblock $tag" "$spec" "ssv log_block_size 10"
	damage_case "inodes_count wrong: backup, preen halts $tag" "$spec" "ssv inodes_count 5000"
	damage_case "no resize_inode, reserved GDT blocks $tag" "$spec" "feature -resize_inode"
	# The resize inode (issue 17): judged before pass 1 as e2fsck judges it,
	# made anew after pass 1; its map walked in pass 1 (illegal pointers in
	# the reserved descriptor blocks, its block count).
	damage_case "resize inode without its double indirect block $tag" "$spec" "sif <7> block[DIND] 0"
	damage_case "resize inode with a direct block $tag" "$spec" "sif <7> block[2] 100"
	damage_case "resize inode not a regular file $tag" "$spec" "sif <7> mode 0"
	# Declined before pass 1, as e2fsck asks it, a question leaves no error: -n exits 0.
	damage_case "resize inode without links $tag" "$spec" "sif <7> links_count 0"
	damage_case "a reserved descriptor block's list wrong $tag" "$spec" "zap_block -o 0 -l 4 -p 0x11 @RGDT@"
	# Pointers zeroed in a map block leave the inode as it was: e2fsck exits 0.
	DAMAGE_FY_EXIT=0 damage_case "illegal pointers in a reserved descriptor block $tag" "$spec" \
		"zap_block -o 512 -l 8 -p 0xff @RGDT@"
	damage_case "resize inode's block count wrong $tag" "$spec" "sif <7> blocks 8"
	if [ "$spec" != "$L3" ]; then   # 128-byte inodes on the small ext3 have no extra size
		damage_case "bad min_extra_isize $tag" "$spec" "ssv min_extra_isize 3"
		damage_case "bad want_extra_isize $tag" "$spec" "ssv want_extra_isize 200"
	fi
done
damage_case "metadata_csum with uninit_bg [$L4K]" "$L4K" "feature uninit_bg"
# The resize inode's record with a wrong checksum: e2fsck reads inodes before
# pass 1 without forgiving checksums, so its check of inode 7 is skipped and
# a new one is made after pass 1, which fails on -n (the checksum is still
# wrong then: "aborted", exit 12) and reuses the map after a yes.
bad_resize_csum='it=$(dumpe2fs "$1" 2>/dev/null | sed -n "s/^ *Inode table at \([0-9]*\)-.*/\1/p" | head -n 1)
bs=$(dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^Block size: *//p")
isz=$(dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^Inode size: *//p")
python3 -c "import sys; f = open(sys.argv[1], \"r+b\"); f.seek(int(sys.argv[2])); b = f.read(1)[0]; f.seek(-1, 1); f.write(bytes([b ^ 0xff]))" \
	"$1" $((it * bs + 6 * isz + 0x7c))'
DAMAGE_CMD=1 damage_case "resize inode with a bad checksum [$L4K]" "$L4K" "$bad_resize_csum"
# ... and with the inline-data flag, so that pass 1 walks no blocks of it
# (i_blocks "should be 0", its map block freed in pass 5): remade around the
# map block it names, the record is kept as e2fsprogs' maker keeps it (flag,
# count and all), where a fresh record would claim the freed block again.
DAMAGE_CMD=1 damage_case "resize inode with the inline-data flag and a bad checksum [$L4K]" "$L4K" \
	"debugfs -w -R 'sif <7> flags 0x10000000' \"\$1\" >/dev/null 2>&1
$bad_resize_csum"
# Without the feature the skipped check leaves inode 7's map for the next run
# to clear (its double-indirect block is then freed): e2fsck takes two runs.
DAMAGE_NEVER_CLEAN=1 DAMAGE_CMD=1 damage_case "no resize_inode, inode 7 kept with a bad checksum [$L4K]" "$L4K" \
	"debugfs -w -R 'feature -resize_inode' \"\$1\" >/dev/null 2>&1
$bad_resize_csum"

# Primary descriptors that put a bitmap or an inode table where it cannot
# be (block 0, another group's inode table, the descriptor blocks): e2fsck's
# check of the descriptors fails ("ext2fs_check_desc: Corrupt group
# descriptor: ...") and it takes group 1's backup copies.  e4fsck once
# opened such descriptors and wrote a bitmap over what lay there.  With -p
# e2fsck keeps the primary and relocates the bitmap or stops at the
# conflict, and so does e4fsck (fsck/relocate.c; t3934 has more).
bb_on_itable='it=$(dumpe2fs "$1" 2>/dev/null | sed -n "s/^ *Inode table at \([0-9]*\)-.*/\1/p" | head -n 1)
printf "%s\n" "set_bg 1 inode_bitmap $((it + 1))" "set_bg 1 checksum calc" | debugfs -w -f - "$1" >/dev/null 2>&1'
for spec in "$L4K" "$L1K" "$L3"; do
	tag="[${spec%@*}]"
	# e2fsck -p relocates without recomputing the descriptor's checksum, so it then reads the
	# INODE_UNINIT group's inode bitmap block and asks to set its padding; e4fsck keeps the
	# descriptor whole and has nothing to ask.
	DAMAGE_SED='/Padding at end of inode bitmap is not set/d' \
	damage_case "block bitmap at block 0: backup descriptors $tag" "$spec" "set_bg 1 block_bitmap 0
set_bg 1 checksum calc"
	DAMAGE_CMD=1 damage_case "inode bitmap on another group's inode table: backup descriptors $tag" "$spec" \
		"$bb_on_itable"
	damage_case "inode table over the descriptor blocks: backup descriptors $tag" "$spec" "set_bg 0 inode_table 2
set_bg 0 checksum calc"
done

# ------------------------------------------------ e2fsck's exit 8 and exit 0 kinds
for spec in "$L4K" "$L1K" "$L3"; do
	tag="[${spec%@*}]"
	same_as_e2fsck "r_blocks_count too big: fatal $tag" "$spec" "ssv r_blocks_count 9000"
	same_as_e2fsck "first_ino 5: fatal $tag" "$spec" "ssv first_ino 5"
	same_as_e2fsck "last mount time in the future $tag" "$spec" "ssv mtime 20991231"
done
same_as_e2fsck "last write time in the future [$L1K]" "$L1K" "$future_wtime" sh
same_as_e2fsck "image shorter than the file system [$L1K]" "$L1K" 'truncate -s 15M "$1"' sh
same_as_e2fsck "no UUID [$L1K]" "$L1K" "ssv uuid null"
same_as_e2fsck "uninit flags without the feature [$L3]" "$L3" "set_bg 1 flags 1"

# The superblock's features and flags that e2fsck fixes (issue 17).
for spec in "$L4K" "$L3"; do
	tag="[${spec%@*}]"
	same_as_e2fsck "no dirhash hint $tag" "$spec" "ssv flags 0"
	same_as_e2fsck "test_fs flag set $tag" "$spec" "ssv flags 5"
	same_as_e2fsck "Hurd with the filetype feature $tag" "$spec" "ssv creator_os 1"
done
same_as_e2fsck "metadata_csum_seed without metadata_csum [$L4K]" "$L4K" "feature -metadata_csum metadata_csum_seed"
# With -n e2fsck goes on to ask of every extent-mapped inode whether to
# set the feature (PR_1_EXTENT_FEATURE), and walks it as an extent file
# after the no.
same_as_e2fsck "64bit without extents [$L1K]" "$L1K" "feature -extent"
# Without 64bit the question is pass 1's, at the first extent-mapped inode.
damage_case "extents feature missing [-O ^64bit]" "-t ext4 -O ^64bit,^metadata_csum -b 1024@16M" "feature -extent"
# A first_meta_bg past the descriptor blocks: e2fsck's open refuses the
# primary and the backup is taken.  With -p e2fsck loads the primary despite
# errors and stops at "First_meta_bg is too big" (t3947 has a file system
# without a backup).
same_as_e2fsck "first_meta_bg too big: backup superblock [$L1K]" "$L1K" "feature meta_bg
ssv first_meta_bg 50"
same_as_e2fsck "superblock free counts wrong [$L1K]" "$L1K" "ssv free_blocks_count 100
ssv free_inodes_count 100"

exit "$failed"
