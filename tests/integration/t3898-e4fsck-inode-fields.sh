#!/bin/bash
# t3898-e4fsck-inode-fields.sh - e4fsck's checks of inode fields, modes,
# special files and symlinks (issue 17), judged by e2fsck.
#
# Each case makes a small file system with mke2fs (holding /big and an
# empty /d), adds the inode to damage with debugfs (mknod, symlink, write)
# (debugfs's mknod makes its name in the current directory: "cd /d"
# first) and damages it in one way with `debugfs -w` (set_inode_field), then
# tests/lib/fsck-damage.sh's damage_case requires e4fsck to print and exit
# as e2fsck does in -fn, -fp and -fy, a second -fy to be clean, e2fsck -fn
# to be clean on the result and /big to be intact.  The kinds:
#
#   pass 1  a device, fifo or socket with the immutable or append-only
#           flag, with a size, with the inline-data flag, with i_blocks; a
#           file with an attribute block and the inline-data flag; a
#           directory whose mode says device, fifo or socket (e2fsck's "looks
#           like it is really a directory"); a symlink with
#           the immutable flag; a fast symlink with the extents flag; the
#           imagic flag; a reserved inode with a mode; the index flag on a
#           file that is no directory (with and without dir_index); the
#           extents flag on a file system without extents (empty file, file
#           with blocks, directory); an extent file without the flag;
#   pass 2  at the entry naming the inode: a device, fifo or socket that
#           does not look like one (immutable with stray i_block words, the
#           extents flag), symlinks of the wrong size (fast, slow, 0),
#           i_faddr, i_blocks_hi without huge_file, i_file_acl_hi without
#           64bit, a directory's i_size_high without largedir, the Hurd's
#           i_frag and i_fsize, an attribute block on a file system without
#           ext_attr.
#
# ext2 (block maps) and ext4 (extents, 4 KiB blocks, metadata_csum) where
# the check differs between them.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"

damage_setup
damage_need_e2fsck_147

# base_image IMG SPEC: "mke2fs options@size" holding /big and an empty /d.
base_image() { spec_image "$1" "$2"; }

ext2="-t ext2@8M"
ext4="-t ext4@16M"
long_target=/$(printf 'x%.0s' $(seq 1 80))

# ------------------------------------------------------------------ pass 1
for spec in "$ext2" "$ext4"; do
	tag="[${spec%@*}]"
	# Files on ext4 keep their extents flag: the damage adds to it.
	ext=0; [ "$spec" = "$ext4" ] && ext=0x80000
	damage_case "char device immutable $tag" "$spec" "cd /d
mknod c c 1 2
cd /
set_inode_field /d/c flags 0x10"
	damage_case "block device append-only $tag" "$spec" "cd /d
mknod b b 8 1
cd /
set_inode_field /d/b flags 0x20"
	damage_case "fifo with a size $tag" "$spec" "cd /d
mknod p p
cd /
set_inode_field /d/p size 9"
	damage_case "socket with a size $tag" "$spec" "cd /d
mknod s p
cd /
set_inode_field /d/s mode 0140644
set_inode_field /d/s size 4096"
	damage_case "imagic flag $tag" "$spec" "write /dev/null /d/f
set_inode_field /d/f flags $((ext | 0x2000))"
	# Inode 3 holding a link while no quota file is named: e2fsck offers to zero it.
	damage_case "unnamed quota inode with a link $tag" "$spec" "set_inode_field <3> links_count 1"
	# A file of no kind: e2fsck walks no map for it (i_blocks should be 0, its blocks look free).
	damage_case "a file with mode 0 $tag" "$spec" "write $src/big /d/m
set_inode_field /d/m mode 0"
	# Pass 4 asks about a damaged inode no entry names before reconnecting it
	# (e2fsck's process_bad_inode with no directory: the path is "...").
	damage_case "unattached inodes, one with i_faddr, one with a bad mode $tag" "$spec" "write $src/big /d/a
write /dev/null /d/b
set_inode_field /d/a faddr 5
set_inode_field /d/b mode 0170644
unlink /d/a
unlink /d/b"
	# Cleared there, its attribute block number that names no block is let go of (a fuzzer's find).
	damage_case "unattached inode with a bad mode and an attribute block outside $tag" "$spec" "write /dev/null /d/b
set_inode_field /d/b mode 0170644
set_inode_field /d/b file_acl 419430400
unlink /d/b"
	damage_case "reserved inode 9 with a mode $tag" "$spec" "set_inode_field <9> mode 0100644"
	# Unused (no mode, no links), its block count is judged all the same.
	damage_case "reserved inode 10 with i_blocks $tag" "$spec" "set_inode_field <10> blocks 8"
	damage_case "reserved inode 6 a device $tag" "$spec" "set_inode_field <6> mode 020644"
	damage_case "index flag on an empty file $tag" "$spec" "write /dev/null /d/f
set_inode_field /d/f flags $((ext | 0x1000))"
	damage_case "char device with i_blocks $tag" "$spec" "cd /d
mknod c c 1 2
cd /
set_inode_field /d/c blocks 8"
	# A directory whose mode was lost: e2fsck offers to make it a directory again.
	damage_case "directory with a char device's mode $tag" "$spec" "mkdir /d/sub
set_inode_field /d/sub mode 020755"
	damage_case "directory with a fifo's mode $tag" "$spec" "mkdir /d/sub
set_inode_field /d/sub mode 010755"
	damage_case "directory holding a file, with a socket's mode $tag" "$spec" "mkdir /d/sub
write $src/big /d/sub/f
set_inode_field /d/sub mode 0140755"
	damage_case "index flag on a fifo $tag" "$spec" "cd /d
mknod p p
cd /
set_inode_field /d/p flags 0x1000"
done
# A lost directory of several blocks between its files' blocks: non-contiguous only if made a directory again.
cmds="mkdir /d/sub"
head -c 3000 /dev/urandom >"$T/small"
for i in $(seq 1 40); do cmds="$cmds
write $T/small /d/sub/file_with_a_rather_long_name_$i"; done
damage_case "fragmented directory with a socket's mode [-t ext2]" "$ext2" "$cmds
set_inode_field /d/sub mode 0140755"
damage_case "symlink immutable [-t ext2]" "$ext2" "symlink /d/l /tmp/target
set_inode_field /d/l flags 0x10"
damage_case "index flag without dir_index [-t ext2]" "-t ext2 -O ^dir_index@8M" "write /dev/null /d/f
set_inode_field /d/f flags 0x1000"
damage_case "fast symlink with the extents flag [-t ext4]" "$ext4" "symlink /d/l /tmp/target
set_inode_field /d/l flags 0x80000"
# Sound once the flag is gone: then, and only then, its immutable flag is asked about.
damage_case "fast symlink with the extents and immutable flags [-t ext4]" "$ext4" "symlink /d/l /tmp/target
set_inode_field /d/l flags 0x80010"
DAMAGE_N_QUIET=1 damage_case "fifo with the inline-data flag [-t ext4 -O inline_data]" \
	"-t ext4 -O inline_data@16M" "cd /d
mknod p p
cd /
ea_set /d/p system.data \"\"
set_inode_field /d/p flags 0x10000000"
# Cleared for the flag before its attribute block is looked at: the block
# has no owner then and is freed in pass 5 (a fuzzed image's -fy left it in use).
damage_case "file with an attribute block and the inline-data flag [-t ext2]" "$ext2" "write /dev/null /d/f
ea_set /d/f user.long $(printf 'v%.0s' $(seq 1 300))
set_inode_field /d/f flags 0x10000000"
# Kept without the flag, both read the extent root as a block map (e2fsck's
# library then warns on stderr of the block number it cannot test).
no_warning='/^Illegal block number passed to ext2fs_test_block_bitmap/d'
DAMAGE_SED=$no_warning damage_case "extent file missing the extents flag [-t ext4]" "$ext4" "write $src/big /d/f
set_inode_field /d/f flags 0"
DAMAGE_SED=$no_warning damage_case "empty extent file missing the extents flag [-t ext4]" "$ext4" "write /dev/null /d/f
set_inode_field /d/f flags 0"
damage_case "extents flag without extents, empty file [-t ext2]" "$ext2" "write /dev/null /d/f
set_inode_field /d/f flags 0x80000"
damage_case "extents flag without extents, file with blocks [-t ext2]" "$ext2" "write $src/big /d/f
set_inode_field /d/f flags 0x80000"
# A file bigger than its map can address: twelve direct and three levels of
# indirect blocks for a block map, 2^32 blocks for an extent tree.
damage_case "file size beyond a block map's reach [-t ext2]" "$ext2" "write $src/big /d/f
set_inode_field /d/f size 0x7FFFFFFFFFFF"
damage_case "file size beyond an extent tree's reach [${ext4%@*}]" "$ext4" "write $src/big /d/f
set_inode_field /d/f size 0x7FFFFFFFFFFF"
# Devices have that bound too: asked about as any file, and (a fifo that
# looks like one) only after a no to its own nonzero-size question.
damage_case "fifo with a size beyond a block map's reach [-t ext2]" "$ext2" "cd /d
mknod p p
cd /
set_inode_field /d/p size 0x7FFFFFFFFFFF"
damage_case "fifo with the index flag and a size beyond reach [-t ext2]" "$ext2" "cd /d
mknod p p
cd /
set_inode_field /d/p flags 0x1000
set_inode_field /d/p size 0x7FFFFFFFFFFF"
# The bad blocks inode: a mode, an owner, links or an attribute block make
# it "look invalid" (zeroed on a yes); its size and block count are never
# judged (e2fsck walks its list for the blocks alone).
for c in "mode 0100644" "uid 5" "links_count 1" "file_acl 300"; do
	damage_case "bad blocks inode with $c [${ext4%@*}]" "$ext4" "set_inode_field <1> $c"
done
same_as_e2fsck "bad blocks inode's i_blocks and size not judged [${ext4%@*}]" "$ext4" "set_inode_field <1> blocks 100
set_inode_field <1> size 5000"
# Cleared for another reason (the extents flag on ext2), it loses its whole
# record as in e2fsck, so it does not look invalid to the next check.
damage_case "bad blocks inode with a mode, an owner and the extents flag [-t ext2]" "$ext2" "set_inode_field <1> flags 0x80000
set_inode_field <1> mode 0100644
set_inode_field <1> uid 5"
# The casefold flag on a file or fifo (cleared, asked by inode), and on a
# directory of a file system without the feature (asked by its path).
damage_case "casefold flag on a file and a fifo [${ext4%@*}]" "$ext4" "write $src/big /d/f
set_inode_field /d/f flags 0x40080000
cd /d
mknod p p
cd /
set_inode_field /d/p flags 0x40000000"
damage_case "casefold flag on a directory without the feature [${ext4%@*}]" "$ext4" "mkdir /d/sub
set_inode_field /d/sub flags 0x40080000"
damage_case "casefold flag on a file [-t ext4 -O casefold]" "-t ext4 -O casefold@16M" "write $src/big /d/f
set_inode_field /d/f flags 0x40080000"
# A slow symlink mapping more than its one block: the others "cause it to
# be too big" (e2fsck's latch: "Inode N is too big.  Truncate?" first).
long_target=/tmp/$(printf 'x%.0s' $(seq 1 100))
damage_case "slow symlink with blocks past its first [${ext2%@*}]" "$ext2" "symlink /d/l $long_target
set_inode_field /d/l block[1] 3000
set_inode_field /d/l block[2] 3001
set_inode_field /d/l block[IND] 3002"
# A never-used record (links and mode 0) with a stray byte, inside the part
# of the inode table that is in use: e2fsck judges its checksum too.
stray_byte='ino=$(debugfs -R "stat /d" "$1" 2>/dev/null | sed -n "s/^Inode: \([0-9]*\).*/\1/p")
ino=$((ino + 1))
printf "%s\n" "write /dev/null /d/gone" "rm /d/gone" "clri <$ino>" | debugfs -w -f - "$1" >/dev/null 2>&1
it=$(dumpe2fs "$1" 2>/dev/null | sed -n "s/^ *Inode table at \([0-9]*\)-.*/\1/p" | head -n 1)
bs=$(dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^Block size: *//p")
isz=$(dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^Inode size: *//p")
printf "\002" | dd of="$1" bs=1 seek=$((it * bs + (ino - 1) * isz + 0x34)) conv=notrunc status=none'
DAMAGE_CMD=1 damage_case "unused inode with a bad checksum [${ext4%@*}]" "$ext4" "$stray_byte"
# The same byte past the base record: a record whose first 128 bytes are
# zero has no checksum to judge (e2fsprogs' rule), so both call it clean.
same_as_e2fsck "unused inode with a stray byte past its base record [${ext4%@*}]" "$ext4" \
	"${stray_byte/+ 0x34/+ 0x90}" sh
# A never-used record with a dtime below the inode count: a link of an
# orphan list never finished, which e2fsck finds in records of mode 0 too.
damage_case "unused inode left in an orphan list [${ext4%@*}]" "$ext4" "write /dev/null /d/gone
rm /d/gone
clri <14>
set_inode_field <14> dtime 5"
# A sparse file of 3 GB without large_file: the feature is added after pass 2.
for spec in "$ext2" "$ext4"; do
	damage_case "large file without large_file [${spec%@*}]" "$spec" "write $src/big /d/f
set_inode_field /d/f size 3000000000
feature -large_file"
done
damage_case "extents flag without extents, directory [-t ext2]" "$ext2" "mkdir /d/sub
set_inode_field /d/sub flags 0x80000"

# ------------------------------------------------------------------ pass 2
for spec in "$ext2" "$ext4"; do
	tag="[${spec%@*}]"
	damage_case "illegal char device $tag" "$spec" "cd /d
mknod c c 1 2
cd /
set_inode_field /d/c flags 0x10
set_inode_field /d/c block[6] 7"
	damage_case "illegal block device $tag" "$spec" "cd /d
mknod b b 8 1
cd /
set_inode_field /d/b flags 0x10
set_inode_field /d/b block[5] 7"
	damage_case "illegal socket $tag" "$spec" "cd /d
mknod s p
cd /
set_inode_field /d/s mode 0140644
set_inode_field /d/s flags 0x80000"
	damage_case "fast symlink size wrong $tag" "$spec" "symlink /d/l /tmp/target
set_inode_field /d/l size 3"
	damage_case "symlink size 0 $tag" "$spec" "symlink /d/l /tmp/target
set_inode_field /d/l size 0"
	damage_case "slow symlink size wrong $tag" "$spec" "symlink /d/l $long_target
set_inode_field /d/l size 90"
	damage_case "i_faddr $tag" "$spec" "write /dev/null /d/f
set_inode_field /d/f faddr 5"
	damage_case "directory i_size_high $tag" "$spec" "mkdir /d/sub
set_inode_field /d/sub size_hi 1"
done
damage_case "illegal fifo [-t ext4]" "$ext4" "cd /d
mknod p p
cd /
set_inode_field /d/p flags 0x80000"
damage_case "i_blocks_hi without huge_file [-t ext2]" "$ext2" "write /dev/null /d/f
set_inode_field /d/f blocks_hi 1"
damage_case "i_file_acl_hi without 64bit [-t ext2]" "$ext2" "write /dev/null /d/f
set_inode_field /d/f file_acl_hi 1"
# The Hurd keeps i_frag and i_fsize where Linux keeps i_blocks_hi.
damage_case "i_frag on the Hurd [-t ext2 -o hurd]" "-t ext2 -o hurd@8M" "write /dev/null /d/f
set_inode_field /d/f frag 3"
damage_case "i_fsize on the Hurd [-t ext2 -o hurd]" "-t ext2 -o hurd@8M" "write /dev/null /d/f
set_inode_field /d/f fsize 5"
damage_case "attribute block without ext_attr [-t ext2]" "-t ext2 -O ^ext_attr@8M" "write /dev/null /d/f
set_inode_field /d/f file_acl 5"

exit "$failed"
