#!/bin/bash
# t0110-read-vs-kernel: on every corpus image, the tree debug4fs extracts
# (rdump) equals what the Linux kernel shows through a read-only loop
# mount: the same names, types, permission bits, owners, sizes, mtimes,
# symlink targets and file contents.  Needs root and a loop device.

set -eu -o pipefail

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

[ -x "$DEBUG4FS" ] || skip "debug4fs is not built ($DEBUG4FS)"
need_cmd mke2fs e2fsck losetup mount
need_root_loop
make_tmpdir

build_corpus

# One line per regular file, directory and symlink (rdump skips device nodes,
# fifos and sockets, as debugfs does).  Directory sizes depend on how the
# directory was written, so they are left out; so are the setuid, setgid and
# sticky bits, which rdump (like debugfs's) does not restore, and symlink
# times, which it does not set.
listing() {
	(cd "$1" && find . -mindepth 1 \( -type f -o -type d -o -type l \) \
		-printf '%m\t%y\t%U\t%G\t%P\t%l\t' \
		\( -type d -printf 'dir\t' -o -printf '%s\t' \) \
		\( -type l -printf 'link\n' -o -printf '%TY-%Tm-%Td+%TH:%TM:%.2TS\n' \) |
		sed -E 's/^[0-7]*([0-7]{3})\t/\1\t/' | LC_ALL=C sort -t "$(printf '\t')" -k5)
}

passed=0
failed=0
for name in "${images[@]}"; do
	img=$CACHE/$name.img
	work=$T/$name
	mkdir -p "$work/mnt" "$work/ours"
	# A private copy, so neither the kernel nor anything else can touch the cache.
	cp --sparse=always "$img" "$work/img"
	if ! loop_mount "$work/img" "$work/mnt" ro,noload; then
		note "$name: the kernel cannot mount it here; skipped"
		continue
	fi
	ok=1
	if ! "$DEBUG4FS" -R "rdump / $work/ours" "$work/img" >"$work/rdump.log" 2>&1; then
		note "$name: rdump failed: $(tail -n 3 "$work/rdump.log")"
		ok=0
	fi
	# rdump puts the root's contents under a directory named after "/".
	ours=$work/ours
	[ -d "$work/ours/root" ] && [ ! -e "$work/mnt/root" ] && ours=$work/ours/root
	listing "$work/mnt" >"$work/kernel.list"
	listing "$ours" >"$work/ours.list"
	if ! diff -u "$work/kernel.list" "$work/ours.list" >"$work/list.diff"; then
		note "$name: metadata differs from the kernel's view:"
		head -n 20 "$work/list.diff" >&2
		ok=0
	fi
	# File contents, compared with the kernel's bytes.
	while IFS= read -r -d '' f; do
		if ! cmp -s "$work/mnt/$f" "$ours/$f"; then
			note "$name: contents of /$f differ from the kernel's"
			ok=0
		fi
	done < <(cd "$work/mnt" && find . -type f -printf '%P\0')
	loop_umount "$work/mnt"
	rm -rf "$work"
	if [ $ok = 1 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $name"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
