#!/bin/bash
# t3947-e4fsck-orphan-super.sh - orphans whose blocks cannot be freed, and
# superblock fields e2fsck 1.47 judges before pass 1, in -n, -p and -y.
#
# Orphan list (s_last_orphan, chained through i_dtime): an orphan being
# deleted (no links) or truncated (to its i_size) has a block outside the
# file system, a block already free in the bitmap, or a block met twice;
# e2fsck frees the blocks its walk meets before that one, reports "Illegal
# block" or "Already cleared block", stops and leaves the rest to the
# passes.  Block-mapped files (ext3) and extent files (ext4, a tree of one
# level too), data blocks and mapping blocks.
#
# Superblock: s_first_meta_bg past the descriptor blocks where there is no
# backup to take instead ("First_meta_bg is too big"); a revision 0 file
# system with feature bits, or with a file that needs large_file.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

# /d/small: 59 blocks of 1 KiB (an indirect block in ext3); /sp: 8 runs of 4
# blocks with holes between (more extents than the inode holds: a tree block).
head -c 60000 /dev/urandom >"$src/small"
python3 - "$src/sp" <<'PY'
import sys
with open(sys.argv[1], 'wb') as f:
    for i in range(8):
        f.seek(i * 16384)
        f.write(b'x' * 4096)
PY

base_image() {
	spec_image "$1" "$2"
	printf 'write %s\n' "$src/small d/small" "$src/sp sp" | debugfs -w -f - "$1" >/dev/null 2>&1
}

# @SMALL@, @SP@: the inodes; @Sn@: /d/small's block n; @SPn@: /sp's block n;
# @IND@: /d/small's indirect block; @ETB@: /sp's tree block; @BIGDIND@: /big's
# double indirect block.
expand() {
	local img=$1 cmds=$2 stat n
	stat=$(debugfs -R "stat /d/small" "$img" 2>/dev/null)
	cmds=${cmds//@SMALL@/$(sed -n 's/^Inode: \([0-9]*\).*/\1/p' <<<"$stat")}
	cmds=${cmds//@IND@/$(grep -o '(IND):[0-9]*' <<<"$stat" | cut -d: -f2)}
	stat=$(debugfs -R "stat /sp" "$img" 2>/dev/null)
	cmds=${cmds//@SP@/$(sed -n 's/^Inode: \([0-9]*\).*/\1/p' <<<"$stat")}
	cmds=${cmds//@ETB@/$(grep -o '(ETB0):[0-9]*' <<<"$stat" | cut -d: -f2)}
	stat=$(debugfs -R "stat /big" "$img" 2>/dev/null)
	cmds=${cmds//@BIGDIND@/$(grep -o '(DIND):[0-9]*' <<<"$stat" | cut -d: -f2)}
	for n in 3 4 10 17 96; do
		cmds=${cmds//@S$n@/$(debugfs -R "bmap /d/small $n" "$img" 2>/dev/null)}
		cmds=${cmds//@SP$n@/$(debugfs -R "bmap /sp $n" "$img" 2>/dev/null)}
	done
	printf '%s\n' "$cmds"
}

# ---------------------------------------------------------------- orphan list blocks
small_del="set_super_value last_orphan @SMALL@
set_inode_field /d/small links_count 0"
small_trunc="set_super_value last_orphan @SMALL@
set_inode_field /d/small size 1000"
sp_del="set_super_value last_orphan @SP@
set_inode_field /sp links_count 0"
# Block maps: each data block, then the indirect block after what it maps.
ext3="-t ext3@16M"
damage_case "deleted orphan, block #0 out of range [ext3]" "$ext3" "$small_del
set_inode_field /d/small block[0] 99999999"
damage_case "deleted orphan, block #5 out of range after 0-4 [ext3]" "$ext3" "$small_del
set_inode_field /d/small block[5] 99999999"
damage_case "deleted orphan, block #4 already free [ext3]" "$ext3" "$small_del
freeb @S4@"
damage_case "deleted orphan, indirect block already free [ext3]" "$ext3" "$small_del
freeb @IND@"
damage_case "deleted orphan, block #10 met again as #4 [ext3]" "$ext3" "$small_del
set_inode_field /d/small block[4] @S10@"
# A pointer to an indirect block out of range: e2fsck's walk goes on past it
# (under the inode's own pointer holding it, no further) and fails at the end,
# in its library's words; with a block out of range before it, it stops there.
damage_case "deleted orphan, indirect block out of range [ext3]" "$ext3" "$small_del
set_inode_field /d/small block[IND] 99999999"
damage_case "deleted orphan, indirect block and block #3 out of range [ext3]" "$ext3" "$small_del
set_inode_field /d/small block[IND] 99999999
set_inode_field /d/small block[3] 99999999"
DAMAGE_NO_BIG=1 damage_case "deleted orphan, double indirect block's first entry out of range [ext3]" "$ext3" \
	"set_super_value last_orphan 12
set_inode_field /big links_count 0
zap_block -o 0 -l 4 -p 0xff @BIGDIND@"
damage_case "truncated orphan, block #3 out of range [ext3]" "$ext3" "$small_trunc
set_inode_field /d/small block[3] 99999999"
damage_case "truncated orphan, block #10 already free [ext3]" "$ext3" "$small_trunc
freeb @S10@"
damage_case "truncated orphan, block #10 met again as #4 [ext3]" "$ext3" "$small_trunc
set_inode_field /d/small block[4] @S10@"

# Extent trees: the first extent's start out of range (i_block[5]), free data
# blocks, and a free tree block, met after the data it maps.
ext4="-t ext4@16M"
damage_case "deleted orphan, extent out of range [ext4]" "$ext4" "$small_del
set_inode_field /d/small block[5] 99999999"
damage_case "deleted orphan, block #4 already free [ext4]" "$ext4" "$small_del
freeb @S4@"
damage_case "deleted orphan, block #17 under a tree block already free [ext4]" "$ext4" "$sp_del
freeb @SP17@"
damage_case "deleted orphan, tree block already free [ext4]" "$ext4" "$sp_del
freeb @ETB@"
damage_case "truncated orphan, block #10 already free [ext4]" "$ext4" "$small_trunc
freeb @S10@"

# ---------------------------------------------------------------- superblock
# s_first_meta_bg past the descriptor blocks, on a file system of one group:
# no backup to fall back on, so e2fsck opens it "despite errors", counts
# that many descriptor blocks after the superblock (its descriptor check
# and pass 1 find the tables inside them) and offers to clear meta_bg.
damage_case "first_meta_bg too big, one group" "-t ext4 -O meta_bg,^resize_inode@4M" "ssv first_meta_bg 100"

# Revision 0 (mke2fs -r 0: 128-byte inodes, first inode 11, no features):
# feature bits set anyway are e2fsck's reason to raise the revision before
# the orphans (unless -n), as is a file of 2 GiB or more at the end of pass 2
# (after it adds large_file).  Filetype added: pass 2 then types every entry.
rev0="-r 0@16M"
same_as_e2fsck "revision 0, nothing wrong" "$rev0" ""
DAMAGE_N_QUIET=1 damage_case "revision 0 with sparse_super" "$rev0" "feature sparse_super"
DAMAGE_N_QUIET=1 damage_case "revision 0 with filetype" "$rev0" "feature filetype"
damage_case "revision 0 with a 3 GB file" "$rev0" "sif /big size 3000000000"

exit "$failed"
