#!/bin/bash
# t3946-e4fsck-journal-more.sh - more of e4fsck's journal step, judged by
# e2fsck 1.47:
#   - a replay that meets a commit block whose checksum fails ("Journal
#     transaction N was corrupt, replay was aborted."): the kernel writes
#     the log (metadata_csum, so checksums v3), one commit block is damaged;
#   - a journal that old tune2fs made as a visible file (/.journal and its
#     other names) moved into inode 8 ("Moving journal from /NAME to hidden
#     inode."), and the cases e2fsck leaves alone (two links, another name);
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

# The kernel's log with one commit block damaged: the replay stops before that transaction.
# corrupt.sh IMG: mounted, three transactions synced, the image copied while still mounted (so it
# needs recovery), then the second commit block's checksum changed.
cat >"$T/corrupt.sh" <<'EOS2'
img=$1 mnt=$1.mnt
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
commit=$(debugfs -R logdump "$img" 2>/dev/null | sed -n 's/.*(commit block) at block \([0-9]*\).*/\1/p' | sed -n 2p)
[ -n "$commit" ] || exit 1
bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
blk=$(debugfs -R "bmap <8> $commit" "$img" 2>/dev/null)
# h_chksum[0] of the commit header, after magic, type, sequence, checksum type and size, padding.
printf '\x12\x34\x56\x78' | dd of="$img" bs=1 seek=$((blk * bs + 16)) conv=notrunc status=none
EOS2
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null 2>&1; then
	for spec in "-t ext4 -O metadata_csum -b 1024@32M" "-t ext4 -O metadata_csum -b 4096@64M"; do
		name="journal transaction with a bad commit checksum [${spec%@*}]"
		same_as_e2fsck "$name" "$spec" "bash '$T/corrupt.sh' \"\$1\"" sh
		grep -q "^Journal transaction [0-9]* was corrupt, replay was aborted\.$" "$T/t.y" ||
			bad "$name: e2fsck did not meet the corrupt transaction"
		# Without -f: the error state the failed commit left forces the check, as in e2fsck.
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
	done
else
	echo "SKIP journal transaction with a bad commit checksum: needs root and loop devices"
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on the journal"
