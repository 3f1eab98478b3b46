#!/bin/bash
# t3931-e4fsck-meta-bg.sh - e4fsck repairs meta_bg file systems (issue 17),
# judged by e2fsck 1.47, and the library writes meta_bg descriptors where
# they live: each descriptor block in the first, second and last group of
# the meta group it describes.
#
# Layouts (small groups, -g 1024, so a 40 MiB image has 40 groups and
# several meta groups): ext4 with 64-bit descriptors (16 to a 1 KiB block:
# meta groups 0-15, 16-31, 32-39, the last without its third copy) and
# ext3 with 32-byte descriptors (32 to a block).
#
# Each damage goes through damage_case (tests/lib/fsck-damage.sh); then the
# repaired image's copies of every descriptor block must be the same bytes.
# Last, debug4fs -w writes files into groups of a later meta group: e2fsck
# calls the result clean and the kernel mounts it and reads the files.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

L64="-t ext4 -b 1024 -g 1024 -N 2048 -O meta_bg,^resize_inode@40M"
L32="-t ext3 -b 1024 -g 1024 -N 2048 -O meta_bg,^resize_inode@40M"

# The base image holds /big and /d, and /late: a file written after
# filling the first groups, so it lies in a later meta group.
base_image() {
	spec_image "$@"
	# Not zeros: debugfs would write those as holes.
	tr '\0' x </dev/zero | head -c 20000000 >"$T/filler"
	debugfs -w -f - "$1" >/dev/null 2>&1 <<-EOF
		write $T/filler filler
		write $src/big late
	EOF
}

# copies_agree IMG: every block dumpe2fs lists as holding descriptors,
# grouped by the meta group it belongs to, holds the same bytes.
copies_agree() {
	local img=$1 dpb=$2
	dumpe2fs "$img" 2>/dev/null | awk -v dpb="$dpb" '
		/^Group [0-9]+:/ { g = $2 + 0 }
		/Group descriptor at/ { sub(/.*Group descriptor at /, ""); sub(/[^0-9].*/, ""); print int(g / dpb), $0 }' |
	while read -r meta blk; do
		printf '%s %s\n' "$meta" "$(dd if="$img" bs=1024 skip="$blk" count=1 status=none | md5sum | cut -c1-32)"
	done | sort -u | awk '{ n[$1]++ } END { bad = 0; for (m in n) if (n[m] > 1) bad = 1; exit bad }'
}

# In this layout, group 20 lies in meta group 1 (ext4) or 0 (ext3); /late's first block too.
late_group() {
	debugfs -R "bmap /late 0" "$1" 2>/dev/null | awk '{ print int(($1 - 1) / 1024) }'
}

for spec in "$L64" "$L32"; do
	tag="[${spec%@*}]"
	case $spec in *ext4*) dpb=16 ;; *) dpb=32 ;; esac
	damage_case "free counts wrong in group 20 $tag" "$spec" \
		"$(printf 'set_bg 20 free_blocks_count 5\nset_bg 20 free_inodes_count 7\nset_bg 20 checksum calc')"
	if copies_agree "$T/dmg.img" "$dpb"; then pass "descriptor copies agree after the counts' repair $tag"
	else bad "descriptor copies differ after the counts' repair $tag"; fi

	base_image "$T/probe.img" "$spec"
	lg=$(late_group "$T/probe.img")
	if [ "$lg" -lt "$dpb" ] && [ "$dpb" = 16 ]; then
		bad "/late is in group $lg, not in a later meta group $tag"
	fi
	damage_case "/late's blocks free in the bitmap $tag" "$spec" "freeb $(debugfs -R 'bmap /late 0' "$T/probe.img" 2>/dev/null) 8"
	if copies_agree "$T/dmg.img" "$dpb"; then pass "descriptor copies agree after the bitmap's repair $tag"
	else bad "descriptor copies differ after the bitmap's repair $tag"; fi
	damage_case "link count wrong $tag" "$spec" "sif /late links_count 5"
done

# The library's write path on meta_bg: files in a later meta group.
base_image "$T/w.img" "$L64"
head -c 3000000 /dev/urandom >"$T/w1"
"$DEBUG4FS" -w -f - "$T/w.img" >/dev/null 2>&1 <<EOF
mkdir new
write $T/w1 new/w1
write $T/w1 new/w2
rm filler
write $T/w1 new/w3
EOF
if e2fsck -fn "$T/w.img" >"$T/check" 2>&1; then pass "debug4fs -w on meta_bg: e2fsck -fn clean"
else bad "debug4fs -w on meta_bg: e2fsck -fn finds damage:"; head -n 20 "$T/check" | sed 's/^/    /'; fi
if have_root_loop; then
	mnt="$T/mnt"; mkdir -p "$mnt"
	if loop_mount "$T/w.img" "$mnt" ro && cmp -s "$mnt/new/w3" "$T/w1" && cmp -s "$mnt/late" "$src/big"; then
		pass "the kernel mounts the meta_bg image and reads the files"
	else
		bad "the kernel does not mount or read the meta_bg image"
	fi
	loop_umount "$mnt" || true
else
	echo "SKIP kernel mount: $(root_loop_reason)"
fi

exit "$failed"
