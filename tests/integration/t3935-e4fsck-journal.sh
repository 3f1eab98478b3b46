#!/bin/bash
# t3935-e4fsck-journal.sh - e4fsck's journal step (before the superblock
# checks), judged by e2fsck 1.47: a damaged journal inode or journal
# superblock, the superblock's journal flags disagreeing with the journal,
# the backup of the journal inode's map, the journal inode in pass 1, and
# the new journal made after pass 5 ("Recreate journal").
#
# Layouts: ext4 with 1 KiB blocks, ext4 with 4 KiB blocks, ext3 (whose
# indirect-mapped journal e2fsck can restore from the superblock's backup).
# Kinds e2fsck repairs go through damage_case (tests/lib/fsck-damage.sh);
# kinds where e2fsck stops, or repairs without calling the file system
# changed, through same_as_e2fsck.  A recreated journal is then used by the
# kernel (as root with loop devices).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

L1K="-t ext4 -b 1024@32M"
L4K="-t ext4 -b 4096@64M"
L3="-t ext3@32M"
L2="-t ext2@32M"

base_image() { spec_image "$@"; }

# jpoke OFFSET VALUE: a shell command (for DAMAGE_CMD) that stores VALUE as
# a big-endian 32-bit number at OFFSET of image $1's journal superblock.
cat >"$T/jpoke.sh" <<'EOS'
img=$1 off=$2 val=$3
blk=$(debugfs -R 'bmap <8> 0' "$img" 2>/dev/null)
bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
bytes=$(printf '\\%03o' $(( (val >> 24) & 255 )) $(( (val >> 16) & 255 )) $(( (val >> 8) & 255 )) $(( val & 255 )))
# shellcheck disable=SC2059
printf "$bytes" | dd of="$img" bs=1 seek=$(( blk * bs + off )) conv=notrunc status=none
EOS
jpoke() { printf 'bash %q "$1" %s %s' "$T/jpoke.sh" "$1" "$2"; }

for spec in "$L1K" "$L4K" "$L3"; do
	tag="[${spec%@*}]"
	# The journal is removed, pass 1 clears its inode, pass 5 frees its blocks, a new one is made.
	DAMAGE_CMD=1 damage_case "journal superblock magic zeroed $tag" "$spec" "$(jpoke 0 0)"
	damage_case "journal inode cleared $tag" "$spec" "clri <8>"
	damage_case "journal inode too small $tag" "$spec" "sif <8> size 8192"
	damage_case "has_journal cleared beside a journal $tag" "$spec" "feature -has_journal"
	damage_case "has_journal cleared, needs_recovery set $tag" "$spec" "feature -has_journal needs_recovery"
	# A new, empty journal superblock.
	DAMAGE_CMD=1 damage_case "journal block size wrong $tag" "$spec" "$(jpoke 12 2048)"
	DAMAGE_CMD=1 damage_case "journal longer than its inode $tag" "$spec" "$(jpoke 16 999999)"
	DAMAGE_CMD=1 damage_case "journal superblock of a descriptor block $tag" "$spec" "$(jpoke 4 1)"
	DAMAGE_CMD=1 damage_case "journal superblock damaged, needs_recovery set $tag" "$spec" \
		"debugfs -w -R 'feature needs_recovery' \"\$1\" >/dev/null 2>&1
$(jpoke 12 2048)"
	# e2fsck stops: "Abort? yes" (exit 12), or a no answered in -n.
	same_as_e2fsck "journal incompatible feature unknown $tag" "$spec" "$(jpoke 40 256)" sh
	same_as_e2fsck "journal read-only feature unknown $tag" "$spec" "$(jpoke 44 16)" sh
	same_as_e2fsck "journal superblock version unknown $tag" "$spec" "$(jpoke 4 9)" sh
	# Repaired without calling the file system changed (exit 0).
	same_as_e2fsck "journal has data, needs_recovery clear $tag" "$spec" "$(jpoke 28 1)" sh
	same_as_e2fsck "journal with two users $tag" "$spec" "$(jpoke 64 2)" sh
	same_as_e2fsck "version 1 journal superblock with version 2 fields $tag" "$spec" "$(jpoke 4 3)" sh
	same_as_e2fsck "journal inode map not backed up $tag" "$spec" "ssv jnl_backup_type 0"
done
for spec in "$L1K" "$L4K"; do
	tag="[${spec%@*}]"
	# An extent-mapped journal has no usable backup (e2fsck reads it as an indirect map).
	damage_case "journal inode a directory $tag" "$spec" "sif <8> mode 040755"
	damage_case "journal inode maps a block outside $tag" "$spec" "sif <8> block[5] 99999999"
	# e2fsck's library reads the inode checksum and all: a bad one sends the
	# journal step to the backup, which it reads as an indirect map (corrupt).
	damage_case "journal inode checksum wrong $tag" "$spec" "sif <8> checksum 0x1234"
	# No journal named, the old inode is judged in pass 1: kept (-n), as a
	# file in use (its blocks, fragmentation), and its checksum last.
	damage_case "old journal inode left, no journal named $tag" "$spec" "ssv journal_inum 0
feature -has_journal"
	damage_case "old journal inode left with a bad checksum, no journal named $tag" "$spec" "ssv journal_inum 0
feature -has_journal
sif <8> checksum 0x1234"
done
damage_case "needs_recovery without a journal [${L2%@*}]" "$L2" "feature needs_recovery"

# A journal superblock with checksum v3 (the kernel sets it when mounted with journal_checksum)
# whose checksum is wrong: e2fsck offers a new superblock.
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null 2>&1; then
	mkdir -p "$T/mnt"
	for spec in "$L1K" "$L4K"; do
		same_as_e2fsck "journal superblock checksum v3 wrong [${spec%@*}]" "$spec" \
			"mount -o loop,journal_checksum \"\$1\" '$T/mnt' && touch '$T/mnt/new' && umount '$T/mnt' &&
$(jpoke 252 305419896)" sh
		grep -q "Journal superblock is corrupt" "$T/t.n" ||
			bad "journal superblock checksum v3 wrong [${spec%@*}]: e2fsck -n did not see the damage"
	done
else
	echo "SKIP journal superblock checksum v3: needs root and loop devices"
fi

# mke4fs backs up the journal inode's map as mke2fs does: e2fsck -fy finds nothing to do.
for spec in "$L1K" "$L3"; do
	name="mke4fs backs up the journal inode's map [${spec%@*}]"
	rm -f "$T/m.img"
	# shellcheck disable=SC2086
	"$MKE4FS" -q -F ${spec%@*} "$T/m.img" "${spec#*@}" >/dev/null 2>&1
	rc=0; e2fsck -fy "$T/m.img" >"$T/m.out" 2>&1 || rc=$?
	if [ "$rc" != 0 ] || grep -q 'Backing up' "$T/m.out"; then
		bad "$name: e2fsck -fy exit $rc:"; sed 's/^/    /' "$T/m.out" | head -n 8
	else
		pass "$name"
	fi
done

# The recreated journal works: the kernel mounts the result, writes through it, and
# e2fsck finds the file system clean afterwards.
name="the kernel uses a recreated journal"
if [ "$(id -u)" != 0 ] || ! command -v losetup >/dev/null 2>&1; then
	echo "SKIP $name: needs root and loop devices"
else
	base_image "$T/k.img" "$L4K"
	debugfs -w -R "clri <8>" "$T/k.img" >/dev/null 2>&1
	"$E4FSCK" -fy "$T/k.img" >"$T/k.out" 2>&1 || true
	mkdir -p "$T/mnt"
	if ! grep -q 'journal has been regenerated' "$T/k.out"; then
		bad "$name: no journal was made:"; sed 's/^/    /' "$T/k.out" | head -n 20
	elif ! mount -o loop,data=journal "$T/k.img" "$T/mnt" 2>"$T/mount.err"; then
		bad "$name: mount failed: $(cat "$T/mount.err")"
	else
		head -c 2000000 /dev/urandom >"$T/mnt/new"
		sync
		umount "$T/mnt"
		if ! e2fsck -fn "$T/k.img" >"$T/k.check" 2>&1; then
			bad "$name: not clean after the kernel wrote:"; sed 's/^/    /' "$T/k.check" | head -n 20
		else
			pass "$name"
		fi
	fi
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on the journal"
