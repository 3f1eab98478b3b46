#!/bin/bash
# t3943-e4fsck-garbage-inodes.sh - inode-table blocks that look like
# garbage, judged by e2fsck 1.47 in -n, -p and -y.  As e2fsprogs judges a
# block: when more than half of its records fail their checksum or hold an
# impossible extent header or block map, every inode in use there "seems to
# contain garbage" and is offered to be cleared, the sound ones too.
#
# Layouts: ext4 (metadata_csum) with 1 KiB blocks and 256-byte inodes, four
# to a block (inodes 17-20 share one), and with 4 KiB blocks (16 to a
# block: inodes 17-32); ext4 without metadata_csum, where only the extent
# headers count; ext3, where only the block maps count.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd dumpe2fs
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

L1K="-t ext4 -b 1024 -I 256 -N 256@8M"
L4K="-t ext4 -b 4096 -I 256 -N 256@16M"
LNOCSUM="-t ext4 -O ^metadata_csum -b 1024 -I 256 -N 256@8M"

# Forty small files after /big and /d: inodes 13 and on.
base_image() {
	spec_image "$@"
	for i in $(seq 1 40); do echo "write /etc/hostname f$i"; done | debugfs -w -f - "$1" >/dev/null 2>&1
}

# csum_flip INODE...: a shell command that breaks each inode's stored checksum (byte 0x7C).
csum_flip() {
	local cmd="bs=\$(dumpe2fs -h \"\$1\" 2>/dev/null | awk -F: '/^Block size/ { print \$2 + 0 }')
it=\$(dumpe2fs \"\$1\" 2>/dev/null | awk '/Inode table at/ { sub(/.*Inode table at /, \"\"); print \$1 + 0; exit }')"
	for ino in "$@"; do
		cmd="$cmd
printf '\\\\125' | dd of=\"\$1\" bs=1 seek=\$((it * bs + ($ino - 1) * 256 + 124)) conv=notrunc status=none"
	done
	printf '%s' "$cmd"
}

for spec in "$L1K" "$L4K"; do
	tag="[${spec%@*}]"
	DAMAGE_CMD=1 damage_case "three of a block's four checksums broken $tag" "$spec" "$(csum_flip 17 18 19)"
	DAMAGE_CMD=1 damage_case "two of a block's four checksums broken (no garbage) $tag" "$spec" "$(csum_flip 17 18)"
done
# A reserved inode's checksum alone: e2fsck judges it last, as any inode's.
# (Inodes 3-6 are left out: after one of theirs, e2fsck 1.47 also calls the
# resize inode's i_blocks wrong and frees its block, a slip of its own.)
DAMAGE_CMD=1 damage_case "a reserved inode's checksum broken [${L1K%@*}]" "$L1K" "$(csum_flip 9)"
DAMAGE_CMD=1 damage_case "nine of a block's sixteen checksums broken [${L4K%@*}]" "$L4K" \
	"$(csum_flip 17 18 19 20 21 22 23 24 25)"
# A directory's own checksum broken: e2fsck's library then fails to read it,
# so a path through it is "???" and each of its blocks fails its checksum.
DAMAGE_CMD=1 damage_case "a directory's checksum broken, a subdirectory with the casefold flag [${L1K%@*}]" "$L1K" \
	"printf 'mkdir /d/e\\nset_inode_field /d/e flags 0x40080000\\n' | debugfs -w -f - \"\$1\" >/dev/null 2>&1
$(csum_flip 12)"
for spec in "$L1K" "$LNOCSUM"; do
	tag="[${spec%@*}]"
	damage_case "three extent headers of a block zeroed $tag" "$spec" \
		"$(printf 'sif <17> block[0] 0\nsif <18> block[0] 0\nsif <19> block[0] 0')"
done

# Block maps: more than seven of a file's fifteen numbers outside the file system make it impossible.
LMAP="-t ext3 -b 1024 -I 256 -N 256@8M"
map_cmds=$(for ino in 17 18 19; do for k in 0 1 2 3 4 5 6 7; do echo "sif <$ino> block[$k] 99999999"; done; done)
damage_case "three block maps of a block out of range [${LMAP%@*}]" "$LMAP" "$map_cmds"

exit "$failed"
