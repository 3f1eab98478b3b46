#!/bin/bash
# t3890-e4fsck-inodes-bitmaps.sh - e4fsck's pass 1 (inodes, sizes, block
# counts) and pass 5 (bitmaps and counters), judged by e2fsck.
#
# No false positives: clean images from mke2fs (ext2, ext3, ext4; 1 KiB and
# 4 KiB; with and without metadata_csum), from mke4fs (empty and -d with a
# tree) and, as root, from the kernel (files copied in through a loop
# mount) must give `e4fsck -fn` exit 0 and no problem lines.
#
# Damage: each case writes a small file system with debugfs, damages it in
# one way with `debugfs -w` (dtime, i_size, i_blocks, bitmap bits, group
# and superblock counters, orphan lists, an extended attribute block out
# of range, a symlink pass 2 clears whose block the bitmap calls free,
# /lost+found missing while the bitmaps call its inode or block used), and then requires
#   - `e4fsck -fn` exits as `e2fsck -fn` does, prints the same lines (apart
#     from the version banner), changes no byte of the image, and prints
#     the same with pass 1 in 1 and in 4 threads;
#   - `e4fsck -fp` exits and prints as `e2fsck -fp` on a copy;
#   - `e4fsck -fy` exits 1 and prints the same lines as `e2fsck -fy` on a
#     copy of the same damaged image;
#   - a second `e4fsck -fy` exits 0, `e2fsck -fn` exits 0 on the result,
#     and the files' bytes are intact.
#
# Journal and orphans: as root, copies of an image taken while the kernel
# had it mounted (one also holding a deleted file open, so the copy has an
# orphan list) are checked with -fy, -p and -fn and compared with e2fsck.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck
need_cmd mke2fs
need_cmd debugfs
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"

# ---------------------------------------------------------------- clean images
clean_case() {
	local name=$1 img=$2
	local out="$T/clean.out" rc=0
	"$E4FSCK" -fn "$img" >"$out" 2>&1 || rc=$?
	if [ "$rc" != 0 ] || grep -q -e '? no' -e 'IGNORED' "$out"; then
		bad "clean $name: e4fsck -fn exit $rc"; sed 's/^/    /' "$out" | head -n 20
	else
		pass "clean $name"
	fi
}

src="$T/tree"
mkdir -p "$src/sub/deeper" "$src/many"
head -c 300000 /dev/urandom >"$src/big"
head -c 5000 /dev/urandom >"$src/sub/small"
printf 'x' >"$src/sub/deeper/one"
truncate -s 5M "$src/sparse"; printf 'end' >>"$src/sparse"
for i in $(seq 1 400); do printf '%s' "$i" >"$src/many/f$i"; done
ln -s sub/small "$src/link"

for opts in "-t ext2 -b 1024" "-t ext2 -b 4096" "-t ext3 -b 1024" "-t ext3 -b 4096" \
	    "-t ext4 -b 1024" "-t ext4 -b 4096" "-t ext4 -O ^metadata_csum" "-t ext4 -O ^flex_bg" \
	    "-t ext4 -O ^extents,^64bit -b 1024"; do
	img="$T/clean.img"; rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts -d "$src" "$img" 32M >/dev/null 2>&1 || { bad "mke2fs $opts"; continue; }
	clean_case "mke2fs $opts -d" "$img"
done
for opts in "" "-b 1024" "-O ^metadata_csum"; do
	img="$T/clean.img"; rm -f "$img"
	# shellcheck disable=SC2086
	"$MKE4FS" -q -F $opts -d "$src" "$img" 32M >/dev/null 2>&1 || { bad "mke4fs $opts"; continue; }
	clean_case "mke4fs $opts -d" "$img"
done

# kernel_copy IMG [CRASH_COPY]: a fresh 64 MiB ext4 image with the tree copied
# in by the kernel; with CRASH_COPY, a copy of the image taken while mounted.
kernel_copy() {
	rm -f "$1"
	mke2fs -q -F -t ext4 "$1" 64M >/dev/null
	mkdir -p "$T/mnt"
	loop_mount "$1" "$T/mnt"
	cp -a "$src/." "$T/mnt/"
	if [ $# = 2 ]; then
		sync
		cp --sparse=always "$1" "$2"
	fi
	rm -rf "$T/mnt/many"/f1?? "$T/mnt/sub/small"
	loop_umount "$T/mnt"
}

# orphan_copy IMG COPY: COPY is taken while a deleted file is still held open.
orphan_copy() {
	rm -f "$1"
	mke2fs -q -F -t ext4 "$1" 64M >/dev/null
	mkdir -p "$T/mnt"
	loop_mount "$1" "$T/mnt"
	head -c 300000 /dev/urandom >"$T/mnt/gone"
	cp "$src/big" "$T/mnt/kept"
	sync
	exec 3<"$T/mnt/gone"
	rm "$T/mnt/gone"
	sync
	cp --sparse=always "$1" "$2"
	exec 3<&-
	loop_umount "$T/mnt"
}

if [ "$(root_loop_reason)" = yes ]; then
	kernel_copy "$T/kernel.img"
	clean_case "kernel-written (copy, then deletes)" "$T/kernel.img"
else
	echo "SKIP kernel-written image: $(root_loop_reason)"
fi

# ---------------------------------------------------------------- damage
# A small populated image; $1 = mke2fs options.
base_image() {
	local img=$1 opts=$2
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 16M >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		mkdir d
		write $src/sub/small d/small
		write $src/sub/deeper/one d/one
	EOF
}

# @BIG0@: the block holding /big's first block in this image; @SMALL@: /d/small's inode.
expand() {
	local cmds=${2//@BIG0@/$(debugfs -R "bmap /big 0" "$1" 2>/dev/null)}
	printf '%s\n' "${cmds//@SMALL@/$(debugfs -R "stat /d/small" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')}"
}

for opts in "-t ext4" "-t ext4 -O ^metadata_csum -b 1024" "-t ext3"; do
	tag="[$opts]"
	damage_case "dtime on a file $tag" "$opts" "set_inode_field /d/small dtime 12345"
	damage_case "i_size too small $tag" "$opts" "set_inode_field /big size 1000"
	damage_case "i_blocks wrong $tag" "$opts" "set_inode_field /d/small blocks 200"
	# Not a whole number of blocks: the repair stores the count whole (no remainder survives).
	damage_case "i_blocks wrong, odd $tag" "$opts" "set_inode_field /d/small blocks 101"
	damage_case "directory size wrong $tag" "$opts" "set_inode_field /d size 9999"
	damage_case "used block free in the bitmap $tag" "$opts" "freeb @BIG0@"
	# /lost+found is made again while /big's blocks look free: it must not take them.
	damage_case "no lost+found, used blocks free $tag" "$opts" "rmdir lost+found
freeb @BIG0@ 40"
	# Cleared in pass 2 while its block looks free already: freed all the
	# same, as e2fsck frees it (no "Error deallocating", nothing left in use).
	DAMAGE_CMD=1 damage_case "invalid symlink, its block free in the bitmap $tag" "$opts" '
debugfs -w -R "symlink /d/l /$(printf "t%.0s" $(seq 1 80))" "$1" >/dev/null 2>&1
blk=$(debugfs -R "bmap /d/l 0" "$1" 2>/dev/null)
debugfs -w -f - "$1" >/dev/null 2>&1 <<EOF
freeb $blk
set_inode_field /d/l size 200
EOF'
	# /lost+found is made from the inodes and blocks no inode uses, as e2fsck
	# makes it, whatever the bitmaps say: every inode marked in use, or its
	# old block still marked (taken again, not left behind in use).
	damage_case "no lost+found, every inode marked in use $tag" "$opts" "rmdir lost+found
seti <11> 4086"
	# Inode 11 taken by a file: /lost+found goes to the first inode past the
	# ones in use, in the group's never-used tail, its bit already set.
	damage_case "no lost+found, its new inode marked in use in the unused tail $tag" "$opts" "rmdir lost+found
write /dev/null f
seti <16>"
	DAMAGE_CMD=1 damage_case "no lost+found, its old block still marked in use $tag" "$opts" '
blk=$(debugfs -R "bmap /lost+found 0" "$1" 2>/dev/null)
debugfs -w -f - "$1" >/dev/null 2>&1 <<EOF
rmdir lost+found
setb $blk
EOF'
	damage_case "free blocks marked in use $tag" "$opts" "setb 3900 5"
	damage_case "used inode free in the bitmap $tag" "$opts" "freei /d/one"
	damage_case "free inode marked in use $tag" "$opts" "seti <40>"
	damage_case "group free blocks count $tag" "$opts" "set_bg 0 free_blocks_count 3"
	damage_case "group free inodes count $tag" "$opts" "set_bg 0 free_inodes_count 7"
	damage_case "group directories count $tag" "$opts" "set_bg 0 used_dirs_count 40"
	damage_case "superblock free blocks $tag" "$opts" "set_super_value free_blocks_count 11"
	damage_case "superblock free inodes $tag" "$opts" "set_super_value free_inodes_count 11"
	damage_case "xattr block out of range, file $tag" "$opts" "set_inode_field /d/small file_acl 99999999"
	damage_case "xattr block out of range, directory $tag" "$opts" "set_inode_field /d file_acl 99999999"
	# Orphan lists (e2fsck -n leaves them alone; finishing one is not a repair).
	DAMAGE_N_QUIET=1 DAMAGE_FY_EXIT=0 damage_case "orphan list through a file in use $tag" "$opts" \
		"set_super_value last_orphan @SMALL@"
	DAMAGE_N_QUIET=1 damage_case "orphan list head out of range $tag" "$opts" "set_super_value last_orphan 9999999"
	damage_case "orphan list with a deleted file $tag" "$opts" "set_super_value last_orphan @SMALL@
set_inode_field /d/small links_count 0"
	damage_case "orphan list running into a free inode $tag" "$opts" "set_super_value last_orphan @SMALL@
set_inode_field /d/small dtime 99"
	damage_case "orphan list linking out of range $tag" "$opts" "set_super_value last_orphan @SMALL@
set_inode_field /d/small dtime 9999999"
done

# ---------------------------------------------------------------- threads
# Damage in many groups (the kernel spreads top-level directories): pass 1
# in 1, 2 and 4 threads must print exactly what e2fsck prints.
if [ "$(root_loop_reason)" = yes ]; then
	img="$T/spread.img"; rm -f "$img"
	mke2fs -q -F -t ext4 -b 1024 -G 4 "$img" 128M >/dev/null
	mkdir -p "$T/mnt"
	loop_mount "$img" "$T/mnt"
	for i in $(seq 1 40); do mkdir "$T/mnt/d$i"; head -c $((i * 700)) /dev/urandom >"$T/mnt/d$i/f"; done
	loop_umount "$T/mnt"
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		set_inode_field /d1/f dtime 7
		set_inode_field /d13/f size 10
		set_inode_field /d27/f blocks 1
		set_inode_field /d40/f dtime 9
		set_inode_field /d40/f size 1
	EOF
	e2fsck -fn "$img" >"$T/spread.theirs" 2>&1 || true
	ok=1
	for j in 1 2 4; do
		"$E4FSCK" -fn -m "$j" "$img" >"$T/spread.$j" 2>&1 || true
		if ! diff <(neutral "$T/spread.$j" "$img") <(neutral "$T/spread.theirs" "$img") >"$T/diff"; then
			bad "damage in many groups, -m $j: output differs from e2fsck's:"; sed 's/^/    /' "$T/diff" | head
			ok=0
		fi
	done
	groups=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ {i=$2} /^Inodes per group/ {p=$2} END {print int(i / p)}')
	[ $ok = 1 ] && pass "damage in many groups ($groups groups): -m 1, 2, 4 print what e2fsck prints"
else
	echo "SKIP damage in many groups: $(root_loop_reason)"
fi

# ---------------------------------------------------------------- journal
# A copy taken while the kernel had the file system mounted needs its
# journal replayed: e4fsck -fy, -p and -fn must print and exit as e2fsck
# does, and the replayed image must be clean for e2fsck.
if [ "$(root_loop_reason)" = yes ]; then
	kernel_copy "$T/crash-src.img" "$T/crash.img"
	# The same with a file deleted while still open: an orphan list to finish.
	orphan_copy "$T/orphan-src.img" "$T/orphan.img"
	for crash in crash orphan; do
		if ! dumpe2fs -h "$T/$crash.img" 2>/dev/null | grep -q needs_recovery; then
			echo "SKIP $crash copy: it did not need recovery"
			continue
		fi
		for m in -fy -p -fn; do
			cp "$T/$crash.img" "$T/j-ours.img"; cp "$T/$crash.img" "$T/j-ref.img"
			rc=0; "$E4FSCK" $m "$T/j-ours.img" >"$T/j.ours" 2>&1 || rc=$?
			want=0; e2fsck $m "$T/j-ref.img" >"$T/j.theirs" 2>&1 || want=$?
			if [ "$rc" != "$want" ] ||
			   ! diff <(neutral "$T/j.ours" "$T/j-ours.img") <(neutral "$T/j.theirs" "$T/j-ref.img") >"$T/diff"; then
				bad "$crash copy $m: exit $rc (e2fsck $want) or output differs:"
				sed 's/^/    /' "$T/diff" | head -n 20
			elif [ "$m" != -fn ] && ! e2fsck -fn "$T/j-ours.img" >"$T/check" 2>&1; then
				bad "$crash copy $m: e2fsck -fn is not clean afterwards"; sed 's/^/    /' "$T/check" | head
			else
				pass "$crash copy $m"
			fi
		done
	done
else
	echo "SKIP journal replay: $(root_loop_reason)"
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck or missed damage"
