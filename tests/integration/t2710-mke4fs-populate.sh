#!/bin/bash
# t2710-mke4fs-populate.sh - mke4fs -d copies a host tree exactly.
#
# Trees:
#   usr    a copy of /usr/include and /usr/share/doc;
#   synth  files from 0 bytes to 200 MiB (block-boundary sizes around
#          4096), sparse files (leading, middle and trailing holes), a
#          directory of 100k entries, a 40-level deep path, hard links
#          (within and across directories), fast and slow symlinks, a fifo,
#          a socket, character and block devices (root), owners and odd
#          modes (setuid, sticky), times with nanoseconds (also before 1970
#          and after 2038), user and security xattrs (large ones too, that
#          must spill into a block) and POSIX ACLs.
# Each tree goes into a 1 KiB and a 4 KiB block image.  Judges:
#   - `e2fsck -fn` exits 0;
#   - mounted read-only by the kernel (root + loop), a manifest of every
#     entry (type, mode, owner, size, mtime and atime to the nanosecond,
#     link count, device numbers, symlink target, md5 of the bytes, every
#     xattr via getfattr) equals the source's, taken before the copy;
#     hard-linked names share one inode; sparse files keep their holes
#     (allocated blocks no more than the source's).
# Without root the kernel part is skipped (SKIP line) and e2fsck still judges.
# EXT4FS_SAN_BUILD=1 (the sanitizer build in scripts/test.sh) uses a
# smaller synthetic tree: the point there is memory errors, not volume.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck dumpe2fs mke2fs md5sum getfattr setfattr truncate dd find
[ -x "$MKE4FS" ] || skip "mke4fs is not built ($MKE4FS)"
make_tmpdir

small=${EXT4FS_SAN_BUILD:-0}
big_dir_entries=100000
big_file_mb=200
if [ "$small" = 1 ]; then
	big_dir_entries=5000
	big_file_mb=8
fi
is_root=0
[ "$(id -u)" = 0 ] && is_root=1

# ---------------------------------------------------------------- trees
make_synth() {
	local d=$1 i
	mkdir -p "$d/sizes" "$d/sparse" "$d/big" "$d/links/a" "$d/links/b" "$d/special" "$d/attrs"
	for s in 0 1 100 1023 1024 1025 4095 4096 4097 8191 65536 1048579; do
		head -c "$s" /dev/urandom >"$d/sizes/f$s"
	done
	head -c $((big_file_mb << 20)) /dev/urandom >"$d/sizes/big${big_file_mb}m"
	head -c $((20 << 20)) /dev/urandom >"$d/sizes/mid20m"
	# Sparse: a leading hole, a middle hole, a trailing hole, all holes.
	truncate -s 10M "$d/sparse/lead"; printf tail | dd of="$d/sparse/lead" bs=1 seek=$((10 << 20)) conv=notrunc status=none
	head -c 8192 /dev/urandom >"$d/sparse/middle"
	dd if=/dev/urandom of="$d/sparse/middle" bs=4096 count=3 seek=5000 conv=notrunc status=none
	head -c 5000 /dev/urandom >"$d/sparse/trail"; truncate -s 3M "$d/sparse/trail"
	truncate -s 1G "$d/sparse/empty1g"
	# A big directory.
	(cd "$d/big" && seq -f "entry-%06g-with-a-longer-name" 1 "$big_dir_entries" | xargs touch)
	# Deep path.
	local p="$d/deep"
	for i in $(seq 1 40); do p="$p/level$i"; done
	mkdir -p "$p"; echo bottom >"$p/file"
	# Hard links within and across directories.
	echo shared >"$d/links/a/one"
	ln "$d/links/a/one" "$d/links/a/two"
	ln "$d/links/a/one" "$d/links/b/three"
	head -c 70000 /dev/urandom >"$d/links/a/bigone"; ln "$d/links/a/bigone" "$d/links/b/bigtwo"
	# Symlinks: fast (< 60 bytes) and slow.
	ln -s ../sizes/f4096 "$d/links/fast"
	ln -s "$(printf 'x%.0s' $(seq 1 59))" "$d/links/fast59"
	ln -s "$(printf 'long/path/component%.0s' $(seq 1 30))" "$d/links/slow"
	ln -s /nonexistent "$d/links/dangling"
	# Special files.
	mkfifo "$d/special/fifo"
	if command -v python3 >/dev/null; then
		python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$d/special/sock"
	fi
	if [ $is_root = 1 ]; then
		mknod "$d/special/null" c 1 3
		mknod "$d/special/loopish" b 7 200
		mknod "$d/special/bigdev" c 300 70000
	fi
	# Modes, owners, times.
	echo m >"$d/attrs/setuid"; chmod 4755 "$d/attrs/setuid"
	mkdir "$d/attrs/sticky"; chmod 1777 "$d/attrs/sticky"
	echo m >"$d/attrs/none"; chmod 000 "$d/attrs/none"
	echo t >"$d/attrs/old"; touch -h -d '1965-03-04 05:06:07.123456789' "$d/attrs/old"
	echo t >"$d/attrs/future"; touch -h -d '2100-01-02 03:04:05.987654321' "$d/attrs/future"
	if [ $is_root = 1 ]; then
		echo o >"$d/attrs/owned"; chown 12345:54321 "$d/attrs/owned"
		chown -h 777:888 "$d/links/fast"
	fi
	# Xattrs: small ones (in the inode), big ones (an xattr block), ACLs, a security label.
	if setfattr -n user.test -v small "$d/attrs/none" 2>/dev/null; then
		setfattr -n user.big -v "$(head -c 700 /dev/zero | tr '\0' 'v')" "$d/attrs/setuid"
		setfattr -n user.a -v 1 -n user.b "$d/attrs/sticky" 2>/dev/null || setfattr -n user.a -v 1 "$d/attrs/sticky"
		setfattr -n user.onlink -v l "$d/sizes/f0"
		[ $is_root = 1 ] && setfattr -n security.test -v label "$d/attrs/old"
		[ $is_root = 1 ] && setfattr -n trusted.x -v tx "$d/attrs/future"
	else
		note "the temp file system has no user xattrs; xattr cases not exercised"
	fi
	if command -v setfacl >/dev/null; then
		setfacl -m u:1234:rw,g:99:r "$d/attrs/old" 2>/dev/null || true
		setfacl -d -m u:1234:rwx "$d/attrs/sticky" 2>/dev/null || true
	fi
	# Root directory's own attributes are copied too.
	chmod 0751 "$d"
}

make_usr() {
	local d=$1
	mkdir -p "$d"
	cp -a /usr/include "$d/include"
	cp -a /usr/share/doc "$d/doc"
}

# ------------------------------------------------------------- manifest
# Metadata, one line per entry, sorted: path, type, mode, uid, gid, size
# (not for directories), mtime, atime, links, device numbers.  Directories
# have no size, link count (lost+found adds one at the root) or atime (any
# walk of the source, this one included, reads them).  No file is read, so
# taking it changes no file's atime.
meta_manifest() {
	(cd "$1" && find . -path ./lost+found -prune -o \
		\( -type d -printf '%p\t%y\t%m\t%U\t%G\t-\t%T@\t-\t-\n' \) -o \
		\( \( -type c -o -type b \) -printf '%p\t%y\t%m\t%U\t%G\t%s\t%T@\t%A@\t%n\t' -exec stat -c '%t:%T' {} \; \) -o \
		-printf '%p\t%y\t%m\t%U\t%G\t%s\t%T@\t%A@\t%n\n' | grep -v '^\./lost+found' | sort)
}

# Contents: md5 of every regular file, target of every symlink.
content_manifest() {
	(cd "$1" && find . -path ./lost+found -prune -o -type f -print0 | sort -z | xargs -0r md5sum
	 cd "$1" && find . -path ./lost+found -prune -o -type l -printf '%p -> %l\n' | sort)
}

# Every xattr as "path<TAB>name=hexvalue", sorted (getfattr -R walks in readdir order).
xattr_manifest() {
	(cd "$1" && getfattr -R -h -d -m - -e hex --absolute-names . 2>/dev/null |
		awk '/^# file: / { f = substr($0, 9); next } /=/ { print f "\t" $0 }' |
		grep -v -e '^\./lost+found' -e $'\tsecurity.selinux=' | sort || true)
}

# Hard-link groups: the sorted names of every multiply-linked inode, one group a line.
link_groups() {
	(cd "$1" && find . -path ./lost+found -prune -o ! -type d -links +1 -printf '%i %p\n' |
		sort -k1,1n -k2 | awk '{ if ($1 != last && NR > 1) print line; if ($1 != last) line = $2; else line = line " " $2; last = $1 } END { if (NR) print line }' | sort)
}

# Blocks allocated to sparse files must not exceed the source's.
sparse_check() {
	local src=$1 img=$2 f sb ib
	for f in lead middle trail empty1g; do
		sb=$(stat -c %b "$src/sparse/$f"); ib=$(stat -c %b "$img/sparse/$f")
		if [ "$ib" -gt $((sb + 64)) ]; then
			echo "sparse/$f: $ib sectors allocated, the source has $sb"
			return 1
		fi
	done
}

failed=0
check_one() {
	local tree=$1 src=$2 bs=$3 img size_mb
	img="$T/$tree-$bs.img"
	size_mb=$(( $(du -sm --apparent-size "$src" | cut -f1) * 3 / 2 + 300 ))
	[ "$bs" = 1024 ] && size_mb=$(( size_mb + size_mb / 4 ))
	rm -f "$img"
	# Taken just before the copy: reading a file can move its atime (relatime).
	meta_manifest "$src" >"$T/src.manifest"
	if ! "$MKE4FS" -q -F -b "$bs" -d "$src" "$img" "${size_mb}M" >"$T/mk.log" 2>&1; then
		echo "FAIL $tree/$bs: mke4fs -d failed:"; cat "$T/mk.log"; failed=1; return
	fi
	if ! e2fsck -fn "$img" >"$T/fsck.log" 2>&1; then
		echo "FAIL $tree/$bs: e2fsck -fn is not clean:"; head -n 40 "$T/fsck.log"; failed=1; return
	fi
	if [ "$kernel_ok" != 1 ]; then
		echo "PASS $tree/$bs: e2fsck clean (kernel comparison skipped: $kernel_reason)"
		rm -f "$img"; return
	fi
	mkdir -p "$T/mnt"
	loop_mount "$img" "$T/mnt" ro,noatime
	local bad=0
	meta_manifest "$T/mnt" >"$T/img.manifest"
	if ! diff -u "$T/src.manifest" "$T/img.manifest" >"$T/diff" 2>&1; then
		echo "FAIL $tree/$bs: metadata differs from the source:"; head -n 40 "$T/diff"; bad=1
	fi
	content_manifest "$T/mnt" >"$T/img.content"
	if ! diff -u "$T/$tree.content" "$T/img.content" >"$T/diff" 2>&1; then
		echo "FAIL $tree/$bs: contents differ from the source:"; head -n 40 "$T/diff"; bad=1
	fi
	xattr_manifest "$T/mnt" >"$T/img.xattrs"
	if ! diff -u "$T/$tree.xattrs" "$T/img.xattrs" >"$T/diff" 2>&1; then
		echo "FAIL $tree/$bs: xattrs differ:"; head -n 40 "$T/diff"; bad=1
	fi
	link_groups "$T/mnt" >"$T/img.links"
	if ! diff -u "$T/$tree.links" "$T/img.links" >"$T/diff" 2>&1; then
		echo "FAIL $tree/$bs: hard links differ:"; head -n 20 "$T/diff"; bad=1
	fi
	if [ "$tree" = synth ] && ! sparse_check "$src" "$T/mnt"; then
		echo "FAIL $tree/$bs: holes were filled"; bad=1
	fi
	loop_umount "$T/mnt"
	rm -f "$img"
	if [ $bad = 0 ]; then
		echo "PASS $tree/$bs: e2fsck clean, kernel sees exactly the source ($(wc -l <"$T/img.manifest") entries)"
	else
		failed=1
	fi
}

kernel_ok=0
kernel_reason=$(root_loop_reason)
[ "$kernel_reason" = yes ] && kernel_ok=1

for tree in synth usr; do
	src="$T/src-$tree"
	if [ "$tree" = synth ]; then make_synth "$src"; else make_usr "$src"; fi
	content_manifest "$src" >"$T/$tree.content"
	xattr_manifest "$src" >"$T/$tree.xattrs"
	link_groups "$src" >"$T/$tree.links"
	for bs in 1024 4096; do
		check_one "$tree" "$src" "$bs"
	done
	rm -rf "$src"
	[ "$small" = 1 ] && break
done

# A file whose names in the tree are all in directories of hard links, with
# one more name outside the tree: its data is held back to the end of the
# copy, and must still arrive with the source's bytes and mtime.
o="$T/outside"
mkdir -p "$o/tree/links" "$o/tree/home"
head -c 50000 /dev/urandom >"$o/tree/links/held"
ln "$o/tree/links/held" "$o/elsewhere"
ln "$o/tree/links/held" "$o/tree/links/held2"
echo plain >"$o/tree/home/plain"
touch -d '2001-02-03 04:05:06' "$o/tree/links/held"
if ! "$MKE4FS" -q -F -d "$o/tree" "$o/img" 8M >"$T/mk.log" 2>&1; then
	echo "FAIL outside-link: mke4fs -d failed:"; cat "$T/mk.log"; failed=1
elif ! e2fsck -fn "$o/img" >"$T/fsck.log" 2>&1; then
	echo "FAIL outside-link: e2fsck -fn is not clean:"; head -n 20 "$T/fsck.log"; failed=1
else
	debugfs -R "dump /links/held2 $o/out" "$o/img" >/dev/null 2>&1
	mtime=$(printf '0x%08x' "$(stat -c %Y "$o/tree/links/held")")
	if ! cmp -s "$o/tree/links/held" "$o/out"; then
		echo "FAIL outside-link: the data differs"; failed=1
	elif ! debugfs -R "stat /links/held" "$o/img" 2>/dev/null | grep -q "mtime: $mtime"; then
		echo "FAIL outside-link: mtime is not $mtime"; failed=1
	else
		echo "PASS outside-link: data held back to the end arrives intact"
	fi
fi

# "Lifetime writes" counts what populating wrote too, as mke2fs -d's does:
# 8 MiB of data must show as at least 8 MiB, within 10% of mke2fs's figure.
o=$T/lifetime
mkdir -p "$o/src"
head -c $((8 * 1024 * 1024)) /dev/urandom >"$o/src/data"
lifetime_kib() {
	dumpe2fs -h "$1" 2>/dev/null | awk '/^Lifetime writes:/ {
		n = $3; u = $4
		if (u == "MB") n *= 1024; else if (u == "GB") n *= 1024 * 1024; else if (u != "kB") n = -1
		print int(n) }'
}
if ! "$MKE4FS" -q -F -b 4096 -d "$o/src" "$o/ours.img" 32M >"$o/log" 2>&1 ||
   ! mke2fs -q -F -t ext4 -b 4096 -d "$o/src" "$o/theirs.img" 32M >>"$o/log" 2>&1; then
	echo "FAIL lifetime-writes: making the images failed:"; cat "$o/log"; failed=1
else
	ours=$(lifetime_kib "$o/ours.img"); theirs=$(lifetime_kib "$o/theirs.img")
	if [ -z "$ours" ] || [ -z "$theirs" ] || [ "$ours" -lt 8192 ] ||
	   [ $((ours * 10)) -lt $((theirs * 9)) ] || [ $((ours * 10)) -gt $((theirs * 11)) ]; then
		echo "FAIL lifetime-writes: mke4fs -d says ${ours:-?} KiB, mke2fs -d ${theirs:-?} KiB"; failed=1
	else
		echo "PASS lifetime-writes: ${ours} KiB against mke2fs's ${theirs} KiB"
	fi
fi

[ $failed = 0 ] || fail "mke4fs -d did not copy every tree exactly"
