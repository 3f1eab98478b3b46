#!/bin/bash
# t2620-mke4fs-refuse.sh - what mke4fs must refuse, and -n never writing.
#
# Every refusal case runs mke4fs (stdin /dev/null, so not a tty) on a
# target and checks that it
#   - exits nonzero,
#   - prints a message matching the case's pattern (grep -Ei: the bad value,
#     the option, or the reason: "ext2", "partition", "mounted", ...),
#   - leaves the target byte for byte unchanged (sha256sum before/after),
#     or, when the target did not exist, does not create it.
# The same command is also given to mke2fs 1.47, on a copy, and what it did
# is printed for information only ("mke2fs: refuses too" / "mke2fs:
# ACCEPTS"): mke4fs is deliberately stricter in places (an existing file
# system with no tty to ask on, -b 3000, -T nosuchtype, a stride larger
# than a group).
#
# Cases:
#   existing file system (ext2 and ext4, with and without -q) without -F;
#   -F on the same target must then succeed (the refusal was about the
#   file system); a DOS partition table (sfdisk when present, else an MBR
#   written by hand: one partition entry and 0x55AA); a mounted loop device
#   and a mounted image file (root + loop; skipped otherwise); impossible
#   or invalid geometry and options, all with -F on a target of random
#   bytes; a missing target without a size.
# -n: with -F on random bytes (exit 0, nothing written, also with -E
# discard), on an existing file system, and on a missing file (with and
# without a size: no file may appear; the exit status must be mke2fs's).
#
# One line per case: PASS/FAIL/SKIP name: reason.  Environment: MKE4FS.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs sha256sum truncate dd head
[ -x "$MKE4FS" ] || skip "mke4fs is not built ($MKE4FS)"
if "$MKE4FS" -V 2>&1 | grep -q 'not built yet'; then
	skip "mke4fs is still the placeholder"
fi

make_tmpdir
export TZ=UTC LC_ALL=C

PASS=0
FAIL=0
SKIPPED=0
FAILED_NAMES=()

ok() {
	PASS=$((PASS + 1))
	printf 'PASS %s\n' "$*"
}
bad() {
	# bad NAME: REASON
	FAIL=$((FAIL + 1))
	FAILED_NAMES+=("${1%%:*}")
	printf 'FAIL %s\n' "$*"
}
skipcase() {
	SKIPPED=$((SKIPPED + 1))
	printf 'SKIP %s\n' "$*"
}

sum() { sha256sum <"$1" | cut -d' ' -f1; }
firstlines() { grep -v '^mke[24]fs [0-9]' "$1" | sed '/^[[:space:]]*$/d' | head -n 2 | tr '\n' ' ' | cut -c1-200; }

# ------------------------------------------------------------------ targets

# 16 MiB of random bytes: any write shows in the checksum.
RANDOM_IMG=$T/random.src
head -c 16M /dev/urandom >"$RANDOM_IMG"

EXT2_IMG=$T/ext2.src
truncate -s 16M "$EXT2_IMG"
mke2fs -q -F -t ext2 "$EXT2_IMG" </dev/null >/dev/null 2>&1 || fail "mke2fs -t ext2 failed"
EXT4_IMG=$T/ext4.src
truncate -s 16M "$EXT4_IMG"
mke2fs -q -F -t ext4 -L keepme "$EXT4_IMG" </dev/null >/dev/null 2>&1 || fail "mke2fs -t ext4 failed"

# A DOS partition table on 16 MiB of random bytes (the first sector zeroed
# first, so the random boot code cannot look like a FAT boot sector).
PART_IMG=$T/part.src
cp "$RANDOM_IMG" "$PART_IMG"
dd if=/dev/zero of="$PART_IMG" bs=512 count=1 conv=notrunc status=none
if command -v sfdisk >/dev/null 2>&1; then
	printf 'label: dos\nstart=2048, type=83\n' | sfdisk -q "$PART_IMG" >/dev/null 2>&1 ||
		fail "sfdisk could not write a partition table"
else
	# Entry 1 at 446: not bootable, CHS ignored, type 0x83, LBA 2048, 30720 sectors.
	printf '\x00\x00\x00\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\x78\x00\x00' |
		dd of="$PART_IMG" bs=1 seek=446 conv=notrunc status=none
	printf '\x55\xaa' | dd of="$PART_IMG" bs=1 seek=510 conv=notrunc status=none
fi
if command -v blkid >/dev/null 2>&1; then
	pt=$(blkid -p -o value -s PTTYPE "$PART_IMG" 2>/dev/null || true)
	[ "$pt" = dos ] || note "blkid -p sees PTTYPE='$pt' in the partition-table target"
fi

# ------------------------------------------------------------------ runner

# refuse NAME PATTERN SOURCE ARGS... : copy SOURCE to a fresh target, run
# mke4fs ARGS (@IMG@ stands for the target) and check the refusal.
# SOURCE "none" means the target must not exist (and must not appear).
refuse() {
	local name=$1 pat=$2 src=$3 img=$T/target.img rc=0 before="" after="" a
	shift 3
	local -a args=()
	for a in "$@"; do
		args+=("${a//@IMG@/$img}")
	done
	rm -f "$img"
	[ "$src" = none ] || cp "$src" "$img"
	[ "$src" = none ] || before=$(sum "$img")
	"$MKE4FS" "${args[@]}" </dev/null >"$T/out" 2>&1 || rc=$?
	local why=()
	[ "$rc" != 0 ] || why+=("exited 0")
	[ "$rc" -lt 128 ] || why+=("died of signal $((rc - 128))")
	if ! grep -Eiq -- "$pat" "$T/out"; then
		why+=("message does not match /$pat/: '$(firstlines "$T/out")'")
	fi
	if [ "$src" = none ]; then
		[ ! -e "$img" ] || why+=("created the missing target")
	else
		after=$(sum "$img")
		[ "$before" = "$after" ] || why+=("CHANGED the target")
	fi
	local ref
	ref=$(mke2fs_does "$src" "${args[@]}")
	rm -f "$img"
	if [ ${#why[@]} -eq 0 ]; then
		ok "$name: exit $rc, '$(firstlines "$T/out")' ($ref)"
	else
		local r
		r=$(printf '%s; ' "${why[@]}")
		bad "$name: ${r%; } ($ref)"
	fi
}

# mke2fs_does SOURCE ARGS...: run mke2fs the same way on a copy, say what it did.
mke2fs_does() {
	local src=$1 img=$T/target.img ref=$T/ref.img rc=0 a before=""
	shift
	local -a args=()
	for a in "$@"; do
		args+=("${a//$img/$ref}")
	done
	rm -f "$ref"
	[ "$src" = none ] || { cp "$src" "$ref"; before=$(sum "$ref"); }
	mke2fs "${args[@]}" </dev/null >"$T/ref.out" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		printf 'mke2fs: refuses too: %s' "$(firstlines "$T/ref.out")"
	elif [ "$src" != none ] && [ "$before" = "$(sum "$ref")" ]; then
		printf 'mke2fs: exit 0, target unchanged'
	else
		printf 'mke2fs: ACCEPTS'
	fi
	rm -f "$ref"
}

# ------------------------------------------------------------------ existing data

refuse existing-ext2 'ext2' "$EXT2_IMG" -t ext4 @IMG@
refuse existing-ext2-q 'ext2' "$EXT2_IMG" -q -t ext4 @IMG@
refuse existing-ext4 'ext4' "$EXT4_IMG" -t ext4 @IMG@
refuse existing-ext4-default-type 'ext4' "$EXT4_IMG" @IMG@
refuse partition-table 'partition' "$PART_IMG" -t ext4 @IMG@
refuse missing-no-size 'size|exist|No such' none -t ext4 @IMG@

# -F overrides the existing-file-system check (so the refusals above were
# about the file system, not something else).
img=$T/target.img
cp "$EXT2_IMG" "$img"
rc=0
"$MKE4FS" -q -F -t ext4 "$img" </dev/null >"$T/out" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
	bad "existing-ext2-F: mke4fs -F exited $rc: $(firstlines "$T/out")"
elif ! e2fsck -fn "$img" >"$T/fsck" 2>&1; then
	bad "existing-ext2-F: e2fsck -fn is not clean: $(firstlines "$T/fsck")"
else
	ok "existing-ext2-F: -F formats over the ext2 file system, e2fsck clean"
fi
cp "$PART_IMG" "$img"
rc=0
"$MKE4FS" -q -F -t ext4 "$img" </dev/null >"$T/out" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
	bad "partition-table-F: mke4fs -F exited $rc: $(firstlines "$T/out")"
else
	ok "partition-table-F: -F formats over the partition table"
fi
rm -f "$img"

# ------------------------------------------------------------------ mounted

if have_root_loop; then
	MNT_IMG=$T/mounted.img
	truncate -s 64M "$MNT_IMG"
	# No lazy inode-table init: the kernel must not write while we look.
	mke2fs -q -F -t ext4 -E lazy_itable_init=0 "$MNT_IMG" </dev/null >/dev/null 2>&1 ||
		fail "mke2fs for the mount cases failed"
	mkdir -p "$T/mnt"
	loop_mount "$MNT_IMG" "$T/mnt" noinit_itable || fail "cannot loop-mount $MNT_IMG"
	echo data >"$T/mnt/file"
	sync
	dev=$(findmnt -n -o SOURCE --mountpoint "$T/mnt")
	for spec in "mounted-device|$dev" "mounted-image|$MNT_IMG"; do
		name=${spec%%|*}
		tgt=${spec#*|}
		sync
		before=$(sum "$MNT_IMG")
		rc=0
		"$MKE4FS" -F -t ext4 "$tgt" </dev/null >"$T/out" 2>&1 || rc=$?
		sync
		after=$(sum "$MNT_IMG")
		why=()
		[ "$rc" != 0 ] || why+=("exited 0")
		grep -Eiq 'mounted|in use|busy' "$T/out" || why+=("message does not say mounted: '$(firstlines "$T/out")'")
		[ "$before" = "$after" ] || why+=("CHANGED the mounted image")
		rc2=0
		mke2fs -F -t ext4 "$tgt" </dev/null >"$T/ref.out" 2>&1 || rc2=$?
		ref="mke2fs: exit $rc2: $(firstlines "$T/ref.out")"
		if [ ${#why[@]} -eq 0 ]; then
			ok "$name: exit $rc, '$(firstlines "$T/out")' ($ref)"
		else
			r=$(printf '%s; ' "${why[@]}")
			bad "$name: ${r%; } ($ref)"
		fi
	done
	[ "$(cat "$T/mnt/file")" = data ] || bad "mounted: the file on the mounted file system changed"
	loop_umount "$T/mnt"
	e2fsck -fn "$MNT_IMG" >"$T/fsck" 2>&1 || bad "mounted: the image is not clean after the attempts: $(firstlines "$T/fsck")"
	rm -f "$MNT_IMG"
else
	skipcase "mounted-device: $(root_loop_reason)"
	skipcase "mounted-image: $(root_loop_reason)"
fi

# ------------------------------------------------------------------ impossible geometry, bad options

R=$RANDOM_IMG
refuse size-10k '10k|10240|too small|not enough space' "$R" -F -t ext4 @IMG@ 10k
refuse size-garbage '12xyz' "$R" -F -t ext4 @IMG@ 12xyz
refuse size-zero '(^|[^0-9])0([^0-9]|$)|small|size' "$R" -F -t ext4 @IMG@ 0
refuse N-too-many '99999999|-N|inode count|inodes' "$R" -F -t ext4 -N 99999999 @IMG@
refuse stride-above-group 'stride' "$R" -F -t ext4 -E stride=100000 @IMG@
refuse stride-above-group-1k 'stride' "$R" -F -t ext4 -b 1024 -E stride=9000 @IMG@
refuse feature-foo 'foo' "$R" -F -t ext4 -O foo @IMG@
refuse feature-foo-off 'foo' "$R" -F -t ext4 -O ^foo @IMG@
refuse I-100 '100' "$R" -F -t ext4 -I 100 @IMG@
refuse I-300 '300' "$R" -F -t ext4 -I 300 @IMG@
refuse b-3000 '3000' "$R" -F -t ext4 -b 3000 @IMG@
refuse b-131072 '131072' "$R" -F -t ext4 -b 131072 @IMG@
refuse G-3 '-G|flex' "$R" -F -t ext4 -G 3 @IMG@
refuse m-60 '60' "$R" -F -t ext4 -m 60 @IMG@
refuse m-garbage 'x5|-m|reserved' "$R" -F -t ext4 -m x5 @IMG@
refuse i-512 '512' "$R" -F -t ext4 -i 512 @IMG@
refuse num_backup_sb-3 'num_backup_sb' "$R" -F -t ext4 -O sparse_super2 -E num_backup_sb=3 @IMG@
refuse T-nosuchtype 'nosuchtype' "$R" -F -t ext4 -T nosuchtype @IMG@
refuse t-ext5 'ext5' "$R" -F -t ext5 @IMG@
refuse E-unknown 'frobnicate' "$R" -F -t ext4 -E frobnicate=1 @IMG@
refuse E-bad-hash_seed 'hash_seed|not-a-uuid' "$R" -F -t ext4 -E hash_seed=not-a-uuid @IMG@
refuse U-garbage 'not-a-uuid|uuid' "$R" -F -t ext4 -U not-a-uuid @IMG@
refuse J-size-tiny 'journal|size' "$R" -F -t ext4 -J size=1 @IMG@ 1G
refuse extent-64bit 'extent|64bit|64-bit' "$R" -F -t ext4 -O ^extent @IMG@
refuse unknown-option 'invalid option|unknown option|-Z|usage' "$R" -F -t ext4 -Z @IMG@

# ------------------------------------------------------------------ -n writes nothing

nocheck() {
	# nocheck NAME SOURCE WANT-RC ARGS...: mke4fs -n ... must not change
	# (or create) the target; WANT-RC is 0, "nonzero" or "any".
	local name=$1 src=$2 want=$3 img=$T/target.img rc=0 before="" a
	shift 3
	local -a args=()
	for a in "$@"; do
		args+=("${a//@IMG@/$img}")
	done
	rm -f "$img"
	[ "$src" = none ] || { cp "$src" "$img"; before=$(sum "$img"); }
	"$MKE4FS" "${args[@]}" </dev/null >"$T/out" 2>&1 || rc=$?
	local why=()
	case $want in
	0) [ "$rc" = 0 ] || why+=("exited $rc: $(firstlines "$T/out")") ;;
	nonzero) [ "$rc" != 0 ] || why+=("exited 0") ;;
	esac
	[ "$rc" -lt 128 ] || why+=("died of signal $((rc - 128))")
	if [ "$src" = none ]; then
		[ ! -e "$img" ] || why+=("CREATED the target")
	else
		[ "$before" = "$(sum "$img")" ] || why+=("CHANGED the target")
	fi
	rm -f "$img"
	if [ ${#why[@]} -eq 0 ]; then
		ok "$name: exit $rc, target untouched"
	else
		local r
		r=$(printf '%s; ' "${why[@]}")
		bad "$name: ${r%; }"
	fi
}

nocheck n-random "$R" 0 -n -F -t ext4 @IMG@
nocheck n-random-q "$R" 0 -n -q -F -t ext4 @IMG@
nocheck n-discard "$R" 0 -n -F -t ext4 -E discard @IMG@
nocheck n-nolazy "$R" 0 -n -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 @IMG@
nocheck n-existing-fs "$EXT4_IMG" any -n -t ext4 @IMG@
nocheck n-existing-fs-F "$EXT4_IMG" 0 -n -F -t ext4 @IMG@
nocheck n-bigger-size "$R" 0 -n -F -t ext4 @IMG@ 1G
nocheck n-partition-table "$PART_IMG" any -n -t ext4 @IMG@
# A missing file: -n creates nothing.  With a size, mke4fs reports what it
# would make and exits 0 (decision: mke2fs 1.47 exits 1 because it cannot
# open the file, but -n is for seeing the plan); without a size there is
# nothing to plan and it fails like mke2fs.
nocheck n-missing-size none 0 -n -t ext4 @IMG@ 64M
nocheck n-missing-no-size none nonzero -n -t ext4 @IMG@

printf '%d passed, %d failed, %d skipped\n' "$PASS" "$FAIL" "$SKIPPED"
if [ "$FAIL" -ne 0 ]; then
	printf 'failed: %s\n' "${FAILED_NAMES[*]}"
	exit 1
fi
exit 0
