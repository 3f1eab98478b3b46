#!/bin/bash
# t2610-mke4fs-kernel.sh - the kernel uses what mke4fs makes.
#
# For each configuration below: mke4fs formats a sparse file, e2fsck -fn
# must find it clean, the kernel mounts it (loop device), a generated tree
# is copied in (cp -a: small and large files, a sparse file, a directory
# with 3000 entries, nested directories, fast, slow and dangling symlinks,
# hard links, a fifo, odd modes and owners, and user xattrs when setfattr
# works here), the file system is unmounted and mounted again, the tree is
# read back and compared with the source (diff -r, a manifest of types,
# modes, owners, sizes and link counts, and the xattrs), it is unmounted,
# and e2fsck -fn must still find it clean.
#
# Needs root and loop mounts (SKIP otherwise).  One line per configuration.
# Environment: MKE4FS, T2610_CASES=REGEX runs only matching configurations.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck truncate diff find sort cp
[ -x "$MKE4FS" ] || skip "mke4fs is not built ($MKE4FS)"
if "$MKE4FS" -V 2>&1 | grep -q 'not built yet'; then
	skip "mke4fs is still the placeholder"
fi
need_root_loop

make_tmpdir
export TZ=UTC LC_ALL=C

# name | size | mke4fs options
CONFIGS=$(
	cat <<'EOF'
ext4-default-1G   | 1G   | -t ext4
ext4-1k-64M       | 64M  | -t ext4 -b 1024
ext3-256M         | 256M | -t ext3
ext4-gdtcsum      | 512M | -t ext4 -O ^metadata_csum,uninit_bg
ext4-orphan-seed  | 512M | -t ext4 -O orphan_file,metadata_csum_seed
ext4-raid-G64     | 2G   | -t ext4 -E stride=16,stripe_width=64 -G 64
EOF
)

# ------------------------------------------------------------------ the tree

SRC=$T/src
mkdir -p "$SRC"
head -c 4M /dev/urandom >"$T/rand"
XATTR_FILES=()
make_tree() {
	local i
	# Small files of many sizes (0 .. ~40 KiB), cut from the random pool.
	mkdir -p "$SRC/small"
	for i in $(seq 1 150); do
		head -c $((i * i * 7 % 40000)) "$T/rand" >"$SRC/small/f$i"
	done
	: >"$SRC/empty"
	# Large files: 12 MiB of data; one that is not a whole number of blocks.
	mkdir -p "$SRC/large"
	for i in 1 2 3; do
		cat "$T/rand"
	done >"$SRC/large/twelve"
	head -c 1234567 "$T/rand" >"$SRC/large/odd"
	# A sparse file: 64 MiB long, three runs of data.
	truncate -s 64M "$SRC/large/sparse"
	for i in 0 17 63; do
		dd if="$T/rand" of="$SRC/large/sparse" bs=64K count=2 seek=$((i * 16)) conv=notrunc status=none
	done
	# A directory with 3000 entries (htree), a few with data.
	mkdir -p "$SRC/many"
	(
		cd "$SRC/many"
		for i in $(seq 1 3000); do
			: >"entry-with-a-reasonably-long-name-$i"
		done
		for i in 7 700 2999; do
			echo "data $i" >"entry-with-a-reasonably-long-name-$i"
		done
	)
	# Deep nesting.
	local p=$SRC/deep
	for i in $(seq 1 20); do
		p=$p/level$i
	done
	mkdir -p "$p"
	echo bottom >"$p/file"
	mkdir -p "$SRC/emptydir"
	# Symlinks: fast (in the inode), slow (a block), dangling, to a directory.
	ln -s small/f1 "$SRC/fastlink"
	ln -s "$(printf 'long/%.0s' $(seq 1 40))target" "$SRC/slowlink"
	ln -s nowhere "$SRC/dangling"
	ln -s many "$SRC/dirlink"
	# Hard links, in several directories.
	echo "linked" >"$SRC/small/linked"
	ln "$SRC/small/linked" "$SRC/linked2"
	ln "$SRC/small/linked" "$SRC/many/linked3"
	ln "$SRC/small/linked" "$SRC/deep/linked4"
	# Odd modes and owners, a fifo.
	echo suid >"$SRC/suid"
	chmod 4755 "$SRC/suid"
	mkdir "$SRC/sticky"
	chmod 1777 "$SRC/sticky"
	echo owned >"$SRC/owned"
	chown 1234:5678 "$SRC/owned"
	chmod 640 "$SRC/owned"
	mkfifo "$SRC/fifo"
	# Extended attributes (user.*), small ones in the inode and one that
	# needs a block (900 bytes: fits a 1 KiB block).
	if command -v setfattr >/dev/null 2>&1 && command -v getfattr >/dev/null 2>&1 &&
		setfattr -n user.probe -v 1 "$SRC/empty" 2>/dev/null; then
		setfattr -x user.probe "$SRC/empty"
		setfattr -n user.small -v tiny "$SRC/small/f2"
		setfattr -n user.big -v "$(head -c 900 /dev/zero | tr '\0' x)" "$SRC/small/f3"
		setfattr -n user.a -v 1 "$SRC/emptydir"
		setfattr -n user.b -v 2 "$SRC/emptydir"
		setfattr -n user.onlink -v yes "$SRC/small/linked"
		XATTR_FILES=(small/f2 small/f3 emptydir small/linked linked2)
	else
		note "no user xattrs here (setfattr/getfattr missing or unsupported): not testing them"
	fi
}
make_tree

# manifest DIR: one line per object: path, type, mode, owner, size (not for
# directories: their size depends on the file system), link count, target.
manifest() {
	(
		cd "$1"
		find . ! -type d -printf '%p %y %m %U:%G %s %n %l\n'
		find . -type d -printf '%p %y %m %U:%G\n'
	) | LC_ALL=C sort
}

xattrs() {
	local f
	for f in "${XATTR_FILES[@]}"; do
		printf '%s\n' "== $f"
		(cd "$1" && getfattr -h -d -m '^user\.' -- "$f" 2>&1 | sed '/^# file:/d')
	done
}

manifest "$SRC" >"$T/src.manifest"
xattrs "$SRC" >"$T/src.xattrs"

# ------------------------------------------------------------------ one configuration

PASS=0
FAIL=0
FAILED_NAMES=()
MNT=$T/mnt
mkdir -p "$MNT"

run_config() {
	local name=$1 size=$2 opts=$3 img=$T/img why=()
	local -a args
	read -r -a args <<<"$opts"
	rm -f "$img"
	truncate -s "$size" "$img"
	if ! "$MKE4FS" -q -F "${args[@]}" "$img" </dev/null >"$T/mkfs.log" 2>&1; then
		why+=("mke4fs failed: $(head -n 2 "$T/mkfs.log" | tr '\n' ' ')")
	elif ! e2fsck -fn "$img" >"$T/fsck0" 2>&1; then
		why+=("e2fsck -fn of the new image: $(grep -v '^e2fsck [0-9]' "$T/fsck0" | head -n 3 | tr '\n' ' ')")
	elif ! loop_mount "$img" "$MNT" 2>"$T/mount.err"; then
		why+=("the kernel does not mount it: $(head -n 2 "$T/mount.err" | tr '\n' ' ')")
	else
		if ! cp -a "$SRC" "$MNT/tree" 2>"$T/cp.err"; then
			why+=("cp -a into it failed: $(head -n 3 "$T/cp.err" | tr '\n' ' ')")
		fi
		sync
		loop_umount "$MNT" || why+=("umount failed")
		if [ ${#why[@]} -eq 0 ] && ! loop_mount "$img" "$MNT" 2>"$T/mount.err"; then
			why+=("the second mount fails: $(head -n 2 "$T/mount.err" | tr '\n' ' ')")
		elif [ ${#why[@]} -eq 0 ]; then
			# (the fifo is in the manifest; diff cannot compare fifos)
			if ! diff -r --no-dereference -x fifo "$SRC" "$MNT/tree" >"$T/diff" 2>&1; then
				why+=("diff -r: $(head -n 3 "$T/diff" | tr '\n' ' ')")
			fi
			manifest "$MNT/tree" >"$T/img.manifest"
			if ! cmp -s "$T/src.manifest" "$T/img.manifest"; then
				why+=("manifest differs: $(diff "$T/src.manifest" "$T/img.manifest" | grep '^[<>]' | head -n 4 | tr '\n' ' ')")
			fi
			xattrs "$MNT/tree" >"$T/img.xattrs"
			if ! cmp -s "$T/src.xattrs" "$T/img.xattrs"; then
				why+=("xattrs differ: $(diff "$T/src.xattrs" "$T/img.xattrs" | grep '^[<>]' | head -n 4 | tr '\n' ' ')")
			fi
			loop_umount "$MNT" || why+=("umount failed")
		fi
		if ! mountpoint -q "$MNT" && ! e2fsck -fn "$img" >"$T/fsck1" 2>&1; then
			why+=("e2fsck -fn after the kernel wrote: $(grep -v '^e2fsck [0-9]' "$T/fsck1" | head -n 4 | tr '\n' ' ')")
		fi
	fi
	mountpoint -q "$MNT" && loop_umount "$MNT"
	rm -f "$img"
	if [ ${#why[@]} -eq 0 ]; then
		PASS=$((PASS + 1))
		printf 'PASS %s: mounted, tree written and read back identical, e2fsck clean\n' "$name"
	else
		FAIL=$((FAIL + 1))
		FAILED_NAMES+=("$name")
		local r
		r=$(printf '%s | ' "${why[@]}")
		printf 'FAIL %s: %s\n' "$name" "${r% | }"
	fi
	return 0
}

trim() {
	local -a w
	read -r -a w <<<"$1"
	printf '%s' "${w[*]}"
}

mapfile -t lines <<<"$CONFIGS"
for line in "${lines[@]}"; do
	IFS='|' read -r name size opts <<<"$line"
	name=$(trim "$name")
	[ -n "$name" ] || continue
	if [ -n "${T2610_CASES:-}" ] && ! [[ $name =~ $T2610_CASES ]]; then
		continue
	fi
	run_config "$name" "$(trim "$size")" "$(trim "$opts")" </dev/null
done

printf '%d passed, %d failed\n' "$PASS" "$FAIL"
if [ "$FAIL" -ne 0 ]; then
	printf 'failed: %s\n' "${FAILED_NAMES[*]}"
	exit 1
fi
exit 0
