#!/bin/bash
# t3915-e4fsck-illegal-blocks.sh - an inode with many illegal blocks, and
# e2fsck's restart, judged by e2fsck.
#
# e2fsck asks "Too many illegal blocks in inode N. Clear inode?" before
# every twelfth pointer of a block map that lies outside the file system;
# -n answers no and is asked "Suppress messages?" too, -y clears the inode
# and e2fsck starts again from the beginning ("Restarting e2fsck from the
# beginning..."), after which pass 2 drops the entries naming the inode and
# pass 5 frees its blocks.  Extent trees have no such count.
#
# Each case writes an ext3 (1 KiB blocks) or ext2 (4 KiB) file system with
# debugfs holding /victim (direct, indirect and, with 1 KiB blocks, double
# indirect blocks) and /d, a directory of 420 entries (16 blocks, one of
# them indirect, with 1 KiB blocks) with a subdirectory, then points block
# map entries outside the file system: 11 (no question yet), 12, 13 and 30
# pointers, some in the indirect or in a double indirect's indirect block,
# in a file, in the directory, or in both.  tests/lib/fsck-damage.sh then
# requires the lines and exit codes of e2fsck -n, -p and -y (-n also with 1
# and 4 threads), a second -fy exiting 0, e2fsck -fn clean afterwards and
# /big intact.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup
head -c 300000 /dev/urandom >"$src/victim"
head -c 5000 /dev/urandom >"$src/small"
head -c 1500 /dev/urandom >"$src/tiny"

base_image() {
	local img=$1 opts=$2 i
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 16M >/dev/null 2>&1
	{
		echo "write $src/big big"
		echo "write $src/victim victim"
		echo "write $src/small small"
		echo "mkdir d"
		echo "mkdir d/inner"
		echo "write $src/small d/inner/x"
		for i in $(seq 1 420); do
			echo "write $src/tiny d/a_file_with_a_rather_long_name_$i"
		done
	} | debugfs -w -f - "$img" >/dev/null 2>&1
}

# The first block a `stat` of path lists after "(NAME):", e.g. IND.
blk_of() {
	debugfs -R "stat $2" "$1" 2>/dev/null | tr ',' '\n' | sed -n "s/^ *($3):\([0-9]*\).*/\1/p" | head -n 1
}

# @IND@: /victim's indirect block; @IND2@: the indirect block below its double
# indirect one (the second "(IND)" listed); @DIND@: the double indirect
# block; @DIR_IND@: /d's indirect block.
expand() {
	local img=$1 cmds=$2 ind2
	ind2=$(debugfs -R "stat /victim" "$img" 2>/dev/null | tr ',' '\n' | sed -n 's/^ *(IND):\([0-9]*\).*/\1/p' | sed -n 2p)
	cmds=${cmds//@IND@/$(blk_of "$img" /victim IND)}
	cmds=${cmds//@IND2@/$ind2}
	cmds=${cmds//@DIND@/$(blk_of "$img" /victim DIND)}
	printf '%s\n' "${cmds//@DIR_IND@/$(blk_of "$img" /d IND)}"
}

# sif lines pointing entries FIRST..LAST of PATH's i_block outside the file system.
direct() {
	local path=$1 first=$2 last=$3 i
	for i in $(seq "$first" "$last"); do
		echo "sif $path block[$i] $((90000000 + i))"
	done
}

# The layouts must give the files the maps the cases damage.
for opts in "-t ext3 -b 1024" "-t ext2 -b 4096"; do
	base_image "$T/probe.img" "$opts"
	[ -n "$(blk_of "$T/probe.img" /victim IND)" ] || fail "mke2fs $opts: /victim has no indirect block"
	case $opts in
	*1024*)
		[ -n "$(blk_of "$T/probe.img" /victim DIND)" ] || fail "mke2fs $opts: /victim has no double indirect block"
		[ -n "$(blk_of "$T/probe.img" /d IND)" ] || fail "mke2fs $opts: /d has no indirect block" ;;
	esac
done

for opts in "-t ext3 -b 1024" "-t ext2 -b 4096"; do
	tag="[$opts]"
	damage_case "eleven illegal blocks: no question yet $tag" "$opts" "$(direct /victim 0 10)"
	damage_case "twelve illegal direct blocks $tag" "$opts" "$(direct /victim 0 11)"
	damage_case "twelve direct and one in the indirect block $tag" "$opts" "$(direct /victim 0 11)
zap_block -o 0 -l 4 -p 0xff @IND@"
	# 30: asked at the twelfth and the twenty-fourth with -n.
	damage_case "thirty illegal blocks in the indirect block $tag" "$opts" "zap_block -o 0 -l 120 -p 0xff @IND@"
	case $opts in
	*1024*)
		damage_case "fifteen illegal blocks below the double indirect block $tag" "$opts" \
			"zap_block -o 0 -l 60 -p 0xff @IND2@"
		# An illegal indirect block counts once and is not read.  (e2fsck -n aborts
		# when no indirect block follows it, as t3910 says: here the DIND does.)
		damage_case "eleven direct and an illegal indirect block $tag" "$opts" "$(direct /victim 0 10)
sif /victim block[IND] 4000000000"
		# A cleared directory: its entries' inodes come back through /lost+found.
		damage_case "a directory with twelve illegal blocks $tag" "$opts" "$(direct /d 1 11)
zap_block -o 0 -l 4 -p 0xff @DIR_IND@"
		damage_case "a directory and a file, each with too many $tag" "$opts" "$(direct /d 1 11)
zap_block -o 0 -l 8 -p 0xff @DIR_IND@
zap_block -o 0 -l 200 -p 0xff @IND@" ;;
	esac
done

# Interactively, on a terminal: "Clear inode? no" then "Suppress messages? yes"
# (every other question yes) leaves the rest of the inode's illegal blocks
# cleared without a word and asks no more "Too many" questions about it.
name="interactive: no to Clear inode, yes to Suppress messages [-t ext3 -b 1024]"
base_image "$T/tty.img" "-t ext3 -b 1024"
debugfs -w -f - "$T/tty.img" >/dev/null 2>&1 <<<"$(expand "$T/tty.img" "zap_block -o 0 -l 120 -p 0xff @IND@")"
tty_case "$name" yn '^Suppress messages<y>? yes' && pass "$name"

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on inodes with many illegal blocks"
