#!/bin/bash
# t3946-e4fsck-journal-more.sh - more of e4fsck's journal step, judged by
# e2fsck 1.47:
#   - a replay that meets a commit block whose checksum fails ("Journal
#     transaction N was corrupt, replay was aborted."): the kernel writes
#     the log (metadata_csum, so checksums v3), one commit block is damaged;
#   - a journal that old tune2fs made as a visible file (/.journal and its
#     other names) moved into inode 8 ("Moving journal from /NAME to hidden
#     inode."), and the cases e2fsck leaves alone (two links, another name);
#   - an external journal device whose own superblock checksum is wrong,
#     and s_journal_dev naming another device than the one carrying the
#     journal's UUID (a loop device: the hint is a device number);
#   - a journal superblock recording an error (s_errno) that needs no replay;
#   - a journal inode cleared as invalid whose i_block still holds words
#     past the first: making the journal again fails as e2fsprogs'
#     maker fails there ("Corrupt extent header: while trying to create
#     journal"), and the file system stays without one;
#   - a move that fails half way ("Error moving journal: %m"), under the
#     library's fault hook: e2fsck cannot be made to fail there, so only the
#     message and what a second run repairs are judged.
# All through same_as_e2fsck: e2fsck calls these repairs no change (exit 0)
# or replays (exit 1 without a question).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

base_image() { spec_image "$@"; }

# visible.sh IMG NAME LINKS: a journal file in the root, as old tune2fs made one on a mounted file
# system: a valid journal superblock (inode 8 of a file system mke2fs -j made alike), the rest of
# its blocks written (holes would make it no journal), s_journal_inum naming it, has_journal set.
cat >"$T/visible.sh" <<'EOS2'
img=$1 name=$2 links=$3
ref=$img.ref
bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
blocks=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block count: *//p')
mke2fs -q -F -j -b "$bs" "$ref" "$blocks" >/dev/null 2>&1
debugfs -R "dump <8> $img.jnl" "$ref" >/dev/null 2>&1
python3 - "$img.jnl" "$bs" <<'EOP'
import sys
path, bs = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, 'rb').read())
data[bs:] = b'\xa5' * (len(data) - bs)
open(path, 'wb').write(data)
EOP
ino=$(debugfs -w -f - "$img" 2>/dev/null <<EOF | sed -n 's/^Inode: \([0-9]*\).*/\1/p'
write $img.jnl $name
stat $name
EOF
)
cmds="ssv journal_inum $ino
feature has_journal"
[ "$links" = 2 ] && cmds="$cmds
ln <$ino> second
sif <$ino> links_count 2"
debugfs -w -f - "$img" >/dev/null 2>&1 <<<"$cmds"
rm -f "$ref" "$img.jnl"
EOS2
visible() { printf 'bash %q "$1" %q %s' "$T/visible.sh" "$1" "$2"; }

for spec in "-t ext4 -O ^has_journal -b 1024@32M" "-t ext4 -O ^has_journal -b 4096@64M" "-t ext3 -O ^has_journal@32M"; do
	tag="[${spec%@*}]"
	for name in .journal journal .journal.dat journal.dat; do
		same_as_e2fsck "journal in /$name moved to inode 8 $tag" "$spec" "$(visible "$name" 1)" sh
		grep -q "Moving journal from /$name to hidden inode" "$T/t.y" ||
			bad "journal in /$name $tag: e2fsck did not move it"
		# The journal inode and the root (whose times the unlink leaves alone) as e2fsck leaves them.
		for i in 2 8; do
			cmp -s <(debugfs -R "stat <$i>" "$T/oy.img" 2>&1) <(debugfs -R "stat <$i>" "$T/ty.img" 2>&1) ||
				bad "journal in /$name $tag: inode $i differs from e2fsck's"
		done
	done
	same_as_e2fsck "journal in /.journal with two links stays $tag" "$spec" "$(visible .journal 2)" sh
	same_as_e2fsck "journal in /jnl stays $tag" "$spec" "$(visible jnl 1)" sh
done

# A failed write in the move: e2fsck's message with the error, and a second run repairs what was left.
name="a failed move is reported"
for fault in write=1 write=2 write=4; do
	base_image "$T/f.img" "-t ext4 -O ^has_journal -b 1024@32M"
	bash "$T/visible.sh" "$T/f.img" .journal 1
	rc=0; EXT4FS_FAULT="$fault,mode=fail" "$E4FSCK" -fy "$T/f.img" >"$T/ours.f" 2>&1 || rc=$?
	if ! grep -q '^Error moving journal: Input/output error$' "$T/ours.f"; then
		bad "$name ($fault): exit $rc, no message:"; sed 's/^/    /' "$T/ours.f" | head -n 12; continue
	fi
	rc=0; "$E4FSCK" -fy "$T/f.img" >"$T/ours.f2" 2>&1 || rc=$?
	if [ "$rc" -gt 1 ] || ! e2fsck -fn "$T/f.img" >"$T/check" 2>&1; then
		bad "$name ($fault): second e4fsck -fy exit $rc, or not clean:"; sed 's/^/    /' "$T/check" | head -n 12
		continue
	fi
	pass "$name ($fault)"
done

# unforced_same NAME: -p and -y without -f on copies of $T/s.img (same_as_e2fsck's image) exit and
# print as e2fsck's: the reasons to check, or "clean".
unforced_same() {
	local name=$1 m rc want
	for m in p y; do
		cp "$T/s.img" "$T/o.img"; cp "$T/s.img" "$T/t.img"
		rc=0; "$E4FSCK" -$m "$T/o.img" >"$T/o.out" 2>&1 || rc=$?
		want=0; e2fsck -$m "$T/t.img" >"$T/t.out" 2>&1 || want=$?
		if [ "$rc" != "$want" ] || ! diff <(clean_out "$T/o.out" "$T/o.img") <(clean_out "$T/t.out" "$T/t.img") >"$T/diff"; then
			bad "$name: -$m exit $rc (e2fsck's $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 12
		else
			pass "$name (-$m)"
		fi
	done
}

# A journal that recorded an error (s_errno, as when the kernel aborts it) and needs no replay: the
# file system gets the error state, so the whole check follows, and the journal forgets the error.
# Not compared under -n: e2fsck 1.47 -n tries to write the cleared journal superblock and aborts
# (exit 9); e4fsck -n says the check is forced and writes nothing.
cat >"$T/jerrno.sh" <<'EOS2'
img=$1
blk=$(debugfs -R 'bmap <8> 0' "$img" 2>/dev/null)
bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
# s_errno, big-endian at byte 32 of the journal superblock: -5 (EIO).
printf '\xff\xff\xff\xfb' | dd of="$img" bs=1 seek=$((blk * bs + 32)) conv=notrunc status=none
EOS2
for spec in "-t ext4 -b 1024@32M" "-t ext4 -b 4096@64M" "-t ext3@32M"; do
	name="journal recorded an error [${spec%@*}]"
	SAME_MODES="p y" same_as_e2fsck "$name" "$spec" "bash '$T/jerrno.sh' \"\$1\"" sh
	unforced_same "$name"
	grep -q "contains a file system with errors, check forced" "$T/t.out" || bad "$name: e2fsck did not force the check"
	rc=0; "$E4FSCK" -n "$T/s.img" >"$T/o.out" 2>&1 || rc=$?
	if [ "$rc" != 0 ] || ! grep -q "contains a file system with errors, check forced" "$T/o.out"; then
		bad "$name: e4fsck -n exit $rc, or the check not forced:"; sed 's/^/    /' "$T/o.out" | head -n 8
	else
		pass "$name (-n)"
	fi
done

# The kernel's log with one commit block damaged: the replay stops before that transaction.  With
# a descriptor block damaged instead, e2fsck replays nothing ("Journal checksum error found in"),
# empties the log and checks the whole file system.
# corrupt.sh IMG KIND: mounted, three transactions synced, the image copied while still mounted (so
# it needs recovery), then the checksum of the second transaction's commit or descriptor block
# changed.
cat >"$T/corrupt.sh" <<'EOS2'
img=$1 kind=$2 mnt=$1.mnt
mkdir -p "$mnt"
mount -o loop,noinit_itable "$img" "$mnt" || exit 1
for i in 1 2 3; do
	mkdir "$mnt/new$i"
	head -c 50000 /dev/urandom >"$mnt/new$i/f"
	sync
done
cp "$img" "$img.copy"
umount "$mnt"
mv "$img.copy" "$img"
at=$(debugfs -R logdump "$img" 2>/dev/null | sed -n "s/.*($kind block) at block \\([0-9]*\\).*/\\1/p" | sed -n 2p)
[ -n "$at" ] || exit 1
bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
blk=$(debugfs -R "bmap <8> $at" "$img" 2>/dev/null)
# A commit block's h_chksum[0] follows magic, type, sequence, checksum type and size, padding; a
# descriptor block's checksum is its last 4 bytes.
off=16
[ "$kind" = descriptor ] && off=$((bs - 4))
printf '\x12\x34\x56\x78' | dd of="$img" bs=1 seek=$((blk * bs + off)) conv=notrunc status=none
EOS2
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null 2>&1; then
	for spec in "-t ext4 -O metadata_csum -b 1024@32M" "-t ext4 -O metadata_csum -b 4096@64M"; do
	for kind in commit descriptor; do
		name="journal transaction with a bad $kind checksum [${spec%@*}]"
		same_as_e2fsck "$name" "$spec" "bash '$T/corrupt.sh' \"\$1\" $kind" sh
		if [ $kind = commit ]; then
			grep -q "^Journal transaction [0-9]* was corrupt, replay was aborted\.$" "$T/t.y" ||
				bad "$name: e2fsck did not meet the corrupt transaction"
		else
			grep -q "^Journal checksum error found in " "$T/t.y" || bad "$name: e2fsck did not meet the bad checksum"
		fi
		# Without -f: the error state the failed commit left forces the check, as in e2fsck.
		unforced_same "$name"
	done
	done
else
	echo "SKIP journal transaction with a bad commit checksum: needs root and loop devices"
fi

# The journal maker of e2fsprogs starts from inode 8 as it is: i_block[0]
# zero (pass 1 leaves such an inode alone) but i_block[1] not, under the
# extents feature, is a corrupt extent header to it.
for spec in "-t ext4 -b 1024@8M" "-t ext4@16M"; do
	same_as_e2fsck "journal inode invalid, its i_block not empty: no new journal [${spec%@*}]" "$spec" \
		"$(printf '%s\n' 'sif <8> links_count 0' 'sif <8> blocks 0' 'sif <8> block[0] 0' 'sif <8> block[1] 12345')"
done

# ext_same NAME FS JDEV MODES [-j]: each mode's e4fsck and e2fsck, one after the other (both
# open the journal device for themselves), on copies of FS and of the journal device JDEV (named
# by -j when asked, else found by its UUID on a loop device the caller attached): the same lines,
# exit status, file system and journal device left as e2fsck leaves them (e2fsck -fn's verdict).
ext_same() {
	local name=$1 fs=$2 jdev=$3 modes=$4 byj=${5:-} m rc want ok=1
	for m in $modes; do
		cp "$fs" "$T/eo.img"; cp "$fs" "$T/et.img"
		local jo=() jt=()
		if [ -n "$byj" ]; then
			cp "$jdev" "$T/eoj.img"; cp "$jdev" "$T/etj.img"
			jo=(-j "$T/eoj.img"); jt=(-j "$T/etj.img")
		fi
		rc=0; "$E4FSCK" "$m" "${jo[@]}" "$T/eo.img" >"$T/eo.out" 2>&1 || rc=$?
		want=0; e2fsck "$m" "${jt[@]}" "$T/et.img" >"$T/et.out" 2>&1 || want=$?
		if [ "$rc" != "$want" ] || ! diff <(clean_out "$T/eo.out" "$T/eo.img") <(clean_out "$T/et.out" "$T/et.img") >"$T/diff"; then
			bad "$name: $m exit $rc (e2fsck's $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 12; ok=0
			continue
		fi
		if [ -n "$byj" ] && ! cmp -s "$T/eoj.img" "$T/etj.img"; then
			bad "$name: $m left the journal device otherwise than e2fsck"; ok=0
		fi
		[ -n "$byj" ] && jt=(-j "$T/eoj.img")
		rc=0; e2fsck -fn "${jt[@]}" "$T/eo.img" >/dev/null 2>&1 || rc=$?
		want=0; e2fsck -fn "${jt[@]/eoj/etj}" "$T/et.img" >/dev/null 2>&1 || want=$?
		[ "$rc" = "$want" ] || { bad "$name: $m: e2fsck -fn gives $rc after e4fsck, $want after e2fsck"; ok=0; }
	done
	[ $ok = 0 ] || pass "$name"
}

# External journals (mke2fs -J device= wants a block device: a loop device over the file).
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null 2>&1; then
	mke2fs -q -F -O journal_dev,metadata_csum -b 4096 "$T/jdev.img" 8M >/dev/null 2>&1
	truncate -s 32M "$T/ext.img"
	loop=$(losetup -f --show "$T/jdev.img")
	mke2fs -q -F -t ext4 -b 4096 -J device="$loop" "$T/ext.img" >/dev/null 2>&1 || bad "mke2fs -J device=$loop failed"
	losetup -d "$loop"
	# The journal device's own superblock checksum (s_checksum, its last 4 bytes) wrong.
	cp "$T/jdev.img" "$T/jdev-csum.img"
	printf '\x12\x34\x56\x78' | dd of="$T/jdev-csum.img" bs=1 seek=$((1024 + 1020)) conv=notrunc status=none
	ext_same "external journal superblock checksum wrong" "$T/ext.img" "$T/jdev-csum.img" "-fn -fp -fy -n -p -y" -j
	grep -q "^External journal superblock checksum does not match superblock.  Fix? yes$" "$T/et.out" ||
		bad "external journal superblock checksum wrong: e2fsck did not see it"
	# s_journal_dev naming another device than the one carrying the journal's UUID.
	cp "$T/ext.img" "$T/hint.img"
	debugfs -w -R "ssv journal_dev 0x1234" "$T/hint.img" >/dev/null 2>&1
	loop=$(losetup -f --show "$T/jdev.img")
	at_exit "losetup -d $loop 2>/dev/null"
	ext_same "external journal hint wrong" "$T/hint.img" "$T/jdev.img" "-fn -fp -fy -n -p -y"
	grep -q "^Superblock hint for external superblock should be 0x[0-9a-f]*.  Fix? yes$" "$T/et.out" ||
		bad "external journal hint wrong: e2fsck did not see it"
	losetup -d "$loop"
else
	echo "SKIP external journals: needs root and loop devices"
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on the journal"
