#!/bin/bash
# t0130-undo-e2undo.sh - undo files written by the library are applied by
# e2fsprogs' e2undo, and by the library, back to the original bytes.
#
# For each configuration below mke2fs formats a small image without a
# journal and the image is copied.  tools/undodrv changes the image through
# ext4fs_io_undo_wrap() with the library's calls (directories, files of
# several sizes, a sparse one, a hard link, a symlink, an unlink, an rmdir)
# after rewriting one byte of every other block of a 2.5 MB file mke2fs -d
# put there (hundreds of keys, several key blocks); e2fsck -fn must find the
# change clean.  Then:
#   - the real `e2undo UNDO IMAGE` restores the image byte for byte (cmp)
#     and e2fsck -fn finds it clean;
#   - `undodrv apply` (ext4fs_undo_apply()) does the same on another copy
#     and reports a finished file and no unclean mark;
#   - after a later change to the file system (tune2fs -L) both e2undo and
#     ext4fs_undo_apply() refuse the undo file and leave the image as it was;
#   - a damaged data block in the undo file is refused by both, the image
#     untouched;
#   - an existing undo file is refused unless undodrv is given -w;
#   - a second change with -a (EXT4FS_UNDO_APPEND) adds to the undo file of
#     the first, and one e2undo rolls both back; -a after a later change
#     (tune2fs -L) is refused;
#   - with e2fsprogs' own undo writer: an undo file tune2fs -z started is
#     carried on by undodrv -a, and one undodrv started is carried on by
#     tune2fs -z; e2undo rolls both back.
# One configuration puts the file system 1 MiB into its file (mke2fs -E
# offset=): e2undo takes the offset from the undo file's header.
#
# Environment: T0130_CASES=REGEX runs only matching configurations.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs e2fsck e2undo tune2fs cmp
UNDODRV=${UNDODRV:-$top_builddir/tests/tools/undodrv}
[ -x "$UNDODRV" ] || skip "undodrv is not built ($UNDODRV; run make check)"

make_tmpdir
export LC_ALL=C
export E2FSPROGS_UNDO_DIR=none

mkdir "$T/src"
head -c 2500000 /dev/urandom >"$T/src/pre"

# name | size | offset | mke2fs options
CONFIGS=$(
	cat <<'EOF'
ext2-1k        | 8M  | 0       | -t ext2 -b 1024
ext2-4k        | 16M | 0       | -t ext2 -b 4096
ext4-nojournal | 16M | 0       | -t ext4 -O ^has_journal -b 4096
ext2-offset    | 8M  | 1048576 | -t ext2 -b 1024
EOF
)

# Flip one byte of file $1 at offset $2.
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $(((b ^ 0x10) & 255)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

fsck_clean() { # image offset what
	local out
	if [ "$2" = 0 ]; then
		out=$(e2fsck -fn "$1" 2>&1) || fail "$3: e2fsck -fn is not clean: $out"
	else
		out=$(e2fsck -fn "$1?offset=$2" 2>&1) || fail "$3: e2fsck -fn is not clean: $out"
	fi
}

# tune2fs -L $3 on image $1 whose file system is $2 bytes in.
relabel() {
	local dev=$1
	[ "$2" = 0 ] || dev="$1?offset=$2"
	tune2fs -L "$3" "$dev" >/dev/null 2>&1 || fail "$name: tune2fs -L failed"
}

# Undo file $1 on image $2: e2undo must refuse with message $3, undodrv apply
# with message $4, and the image stay as it was; $5 says what is refused.
refused_by_both() {
	local out
	cp "$2" "$d/before"
	out=$(e2undo "$1" "$2" 2>&1) && fail "$name: e2undo applied $5: $out"
	echo "$out" | grep -q "$3" || fail "$name: e2undo on $5: $out"
	cmp "$2" "$d/before" || fail "$name: e2undo changed the image with $5"
	out=$("$UNDODRV" apply -o "$offset" "$1" "$2" 2>&1) && fail "$name: ext4fs_undo_apply applied $5: $out"
	echo "$out" | grep -q "$4" || fail "$name: ext4fs_undo_apply on $5: $out"
	cmp "$2" "$d/before" || fail "$name: ext4fs_undo_apply changed the image with $5"
}

ran=0
while IFS='|' read -r name size offset opts; do
	name=$(echo "$name" | xargs)
	size=$(echo "$size" | xargs)
	offset=$(echo "$offset" | xargs)
	if [ -n "${T0130_CASES:-}" ] && ! [[ $name =~ $T0130_CASES ]]; then
		continue
	fi
	ran=$((ran + 1))
	d=$T/$name
	mkdir -p "$d"
	img=$d/img
	undo=$d/undo
	# Free blocks keep random bytes (nodiscard), so that old contents saved
	# at the wrong place in an undo file cannot pass for the zeros there.
	head -c $((offset + ${size%M} * 1048576)) /dev/urandom >"$img"
	# shellcheck disable=SC2086
	if [ "$offset" = 0 ]; then
		mke2fs -q -F $opts -E nodiscard -d "$T/src" "$img" "$size" >/dev/null 2>&1 ||
			fail "$name: mke2fs failed"
	else
		mke2fs -q -F $opts -d "$T/src" -E nodiscard,offset="$offset" "$img" "$size" >/dev/null 2>&1 ||
			fail "$name: mke2fs failed"
	fi
	cp "$img" "$d/orig"

	out=$("$UNDODRV" change -o "$offset" "$img" "$undo" 2>&1) || fail "$name: undodrv change: $out"
	cmp -s "$img" "$d/orig" && fail "$name: the change changed nothing"
	fsck_clean "$img" "$offset" "$name: after the change"
	cp "$img" "$d/changed"

	# e2undo, the oracle.
	hdr=$(e2undo -h "$undo" "$img" 2>&1 || true)
	echo "$hdr" | grep -q "^state:[[:space:]]*0x1$" || fail "$name: e2undo -h: not finished: $hdr"
	bs=$(echo "$hdr" | sed -n 's/^block size:[[:space:]]*//p')
	keys=$(echo "$hdr" | sed -n 's/^nr keys:[[:space:]]*//p')
	[ "$keys" -gt $((bs / 16 - 1)) ] || fail "$name: only $keys keys: not several key blocks"
	if [ "$offset" != 0 ]; then
		echo "$hdr" | grep -q "^fs offset:[[:space:]]*$offset$" ||
			fail "$name: e2undo -h shows no fs offset $offset: $hdr"
	fi
	out=$(e2undo "$undo" "$img" 2>&1) || fail "$name: e2undo failed: $out"
	cmp "$img" "$d/orig" || fail "$name: e2undo did not restore the original bytes"
	fsck_clean "$img" "$offset" "$name: after e2undo"

	# The library's apply.
	cp "$d/changed" "$img"
	out=$("$UNDODRV" apply -o "$offset" "$undo" "$img" 2>&1) || fail "$name: undodrv apply: $out"
	case $out in
	*"finished 1 unclean 0 fs_offset $offset"*) ;;
	*) fail "$name: undodrv apply reports: $out" ;;
	esac
	cmp "$img" "$d/orig" || fail "$name: ext4fs_undo_apply did not restore the original bytes"
	fsck_clean "$img" "$offset" "$name: after ext4fs_undo_apply"

	# A file system changed after the undo file was closed is refused by both.
	cp "$d/changed" "$img"
	relabel "$img" "$offset" later
	refused_by_both "$undo" "$img" "doesn't match the undo file" "Wrong undo file" "a file system changed later"

	# A damaged data block (the first after the first key block) is refused by both.
	cp "$undo" "$d/bad"
	flip_byte "$d/bad" $((3 * bs + 5))
	cp "$d/changed" "$img"
	refused_by_both "$d/bad" "$img" "checksum error" "Undo file corrupt" "a damaged undo file"

	# An existing undo file is kept unless -w.
	cp "$d/orig" "$img"
	out=$("$UNDODRV" change -o "$offset" "$img" "$undo" 2>&1) && fail "$name: an existing undo file was overwritten"
	echo "$out" | grep -q "File exists" || fail "$name: refusing an existing undo file: $out"
	cmp "$img" "$d/orig" || fail "$name: refusing the undo file changed the image"
	out=$("$UNDODRV" change -w -o "$offset" "$img" "$undo" 2>&1) || fail "$name: undodrv change -w: $out"
	out=$(e2undo "$undo" "$img" 2>&1) || fail "$name: e2undo after -w failed: $out"
	cmp "$img" "$d/orig" || fail "$name: e2undo after -w did not restore the original bytes"

	# Two changes, one undo file.
	out=$("$UNDODRV" change -w -o "$offset" "$img" "$undo" 2>&1) || fail "$name: undodrv change: $out"
	keys1=$(e2undo -h "$undo" "$img" 2>&1 | sed -n 's/^nr keys:[[:space:]]*//p' || true)
	out=$("$UNDODRV" change -a -p second- -o "$offset" "$img" "$undo" 2>&1) ||
		fail "$name: undodrv change -a: $out"
	keys2=$(e2undo -h "$undo" "$img" 2>&1 | sed -n 's/^nr keys:[[:space:]]*//p' || true)
	[ "$keys2" -gt "$keys1" ] || fail "$name: -a added no keys ($keys1, then $keys2)"
	fsck_clean "$img" "$offset" "$name: after two changes"
	cp "$img" "$d/twice"
	out=$(e2undo "$undo" "$img" 2>&1) || fail "$name: e2undo after two changes failed: $out"
	cmp "$img" "$d/orig" || fail "$name: e2undo did not roll both changes back"
	cp "$d/twice" "$img"
	out=$("$UNDODRV" apply -o "$offset" "$undo" "$img" 2>&1) || fail "$name: undodrv apply after two changes: $out"
	cmp "$img" "$d/orig" || fail "$name: ext4fs_undo_apply did not roll both changes back"
	cp "$d/twice" "$img"
	relabel "$img" "$offset" later
	cp "$undo" "$d/undo-before"
	out=$("$UNDODRV" change -a -p third- -o "$offset" "$img" "$undo" 2>&1) &&
		fail "$name: -a carried on after a later change: $out"
	echo "$out" | grep -q "Wrong undo file" || fail "$name: refusing -a after a later change: $out"
	cmp "$undo" "$d/undo-before" || fail "$name: a refused -a changed the undo file"

	# Carrying on with e2fsprogs' undo files, and e2fsprogs carrying on with ours.
	if [ "$offset" = 0 ]; then
		cp "$d/orig" "$img"
		rm -f "$undo"
		tune2fs -z "$undo" -L first "$img" >/dev/null 2>&1 || fail "$name: tune2fs -z failed"
		out=$("$UNDODRV" change -a "$img" "$undo" 2>&1) || fail "$name: -a after tune2fs -z: $out"
		out=$(e2undo "$undo" "$img" 2>&1) || fail "$name: e2undo after tune2fs -z and -a: $out"
		cmp "$img" "$d/orig" || fail "$name: e2undo did not roll back tune2fs -z and undodrv -a"
		rm -f "$undo"
		out=$("$UNDODRV" change "$img" "$undo" 2>&1) || fail "$name: undodrv change: $out"
		tune2fs -z "$undo" -L last "$img" >/dev/null 2>&1 || fail "$name: tune2fs -z after undodrv failed"
		out=$(e2undo "$undo" "$img" 2>&1) || fail "$name: e2undo after undodrv and tune2fs -z: $out"
		cmp "$img" "$d/orig" || fail "$name: e2undo did not roll back undodrv and tune2fs -z"
	fi
	note "$name: e2undo and ext4fs_undo_apply restore the original (also after two changes); later changes and damage refused"
	rm -rf "$d"
done <<<"$CONFIGS"

[ "$ran" -gt 0 ] || skip "no configuration matches T0130_CASES=${T0130_CASES:-}"
