#!/bin/bash
# t3932-e4fsck-mmp.sh - multi-mount protection (issue 17): e4fsck checks
# and repairs mmp file systems as e2fsck 1.47 does, and the library's
# writable opens (e4fsck, debug4fs -w) claim the MMP block and give it
# back clean.
#
# Images: mke2fs -t ext4 -O mmp -E mmp_update_interval=1, 8 MiB (1 KiB
# blocks, metadata_csum).  Each writable open waits 2 * 5 + 1 s while it
# claims the block, in e2fsck as in e4fsck; so that the test takes seconds,
# both run with sleep(3) replaced by one that returns at once (an
# LD_PRELOAD shim built here; the waits' lengths are test_mmp's business).
# The kernel's mount, which waits as long, is not sped up.
#
# Compared with e2fsck in -n, -p and -y (same_as_e2fsck: exit 0 after the
# repair, or 8/12 where e2fsck stops): a clean image, a bad MMP magic, a
# bad MMP checksum, the fsck sequence left behind, an unknown sequence, a
# stale active sequence, an MMP block number outside the file system, a
# long interval (announced), a journal to replay.  With damage_case: a wrong link count on an
# mmp file system.  After e4fsck -fy, dumpe2fs -h shows the clean
# sequence.  An MMP block number on the inode table is e4fsck's own
# (DESIGN.md): reported as an invalid block, the table left alone, where
# e2fsck writes an MMP record over it.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup
need_cmd dumpe2fs python3

cc=${CC:-cc}
printf 'unsigned int sleep(unsigned int s) { (void)s; return 0; }\n' >"$T/nosleep.c"
"$cc" -shared -fPIC -o "$T/nosleep.so" "$T/nosleep.c" 2>/dev/null ||
	skip "no C compiler ($cc) for the sleep shim: every claim would wait 11 s"
export LD_PRELOAD="$T/nosleep.so"

SPEC="-t ext4 -O mmp -E mmp_update_interval=1@8M"
base_image() { spec_image "$@"; }
spec_image "$T/probe.img" "$SPEC"
dumpe2fs -h "$T/probe.img" 2>/dev/null | grep -q '^MMP block number' || skip "mke2fs cannot make mmp file systems"

# The MMP block's byte offset in image $1.
mmp_offset='b=$(dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^MMP block number: *//p")
bs=$(dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^Block size: *//p")
off=$((b * bs))'
# The sequence set to $2 (with its checksum made right), by hand: debugfs's
# set_mmp_value is undone by its own close.
set_seq() {
	python3 - "$1" "$2" <<-EOF
		import struct, sys
		sys.path.insert(0, "$top_srcdir/tests/tools")
		from damage import Geometry, crc32c
		img, seq = sys.argv[1], int(sys.argv[2], 0)
		g = Geometry(img)
		with open(img, 'r+b') as f:
		    f.seek(1024 + 0x168)
		    off = struct.unpack('<Q', f.read(8))[0] * g.bs
		    f.seek(off)
		    m = bytearray(f.read(1024))
		    struct.pack_into('<I', m, 4, seq)
		    if g.csum:
		        struct.pack_into('<I', m, 0x3FC, crc32c(g.csum_seed, bytes(m[:0x3FC])))
		    f.seek(off)
		    f.write(m)
	EOF
}
export -f set_seq
export top_srcdir

mmp_clean() {
	local seq
	seq=$(dumpe2fs -h "$2" 2>/dev/null | sed -n 's/^ *mmp_sequence: *//p')
	if [ "$seq" = 0xff4d4d50 ]; then pass "$1: MMP sequence clean"; else bad "$1: MMP sequence '$seq', not clean"; fi
}

same_as_e2fsck "clean mmp file system" "$SPEC" ""
mmp_clean "clean, after -fy" "$T/oy.img"
same_as_e2fsck "bad MMP magic" "$SPEC" "$mmp_offset"'
printf "\0\0\0\0" | dd of="$1" bs=1 seek=$off conv=notrunc status=none' sh
mmp_clean "bad MMP magic, after -fy" "$T/oy.img"
same_as_e2fsck "bad MMP checksum" "$SPEC" "$mmp_offset"'
printf "\x55" | dd of="$1" bs=1 seek=$((off + 0x3FC)) conv=notrunc status=none' sh
mmp_clean "bad MMP checksum, after -fy" "$T/oy.img"
same_as_e2fsck "MMP sequence left at fsck" "$SPEC" 'set_seq "$1" 0xE24D4D50' sh
same_as_e2fsck "unknown MMP sequence" "$SPEC" 'set_seq "$1" 0xF0000000' sh
# A node that died holding the block: waited out, then claimed.
same_as_e2fsck "stale active MMP sequence" "$SPEC" 'set_seq "$1" 42' sh
mmp_clean "stale active sequence, after -fy" "$T/oy.img"
same_as_e2fsck "MMP block beyond the end" "$SPEC" "ssv mmp_block 100000"
# A wait of more than 20 s is announced ("MMP interval is 15 seconds...").
same_as_e2fsck "long MMP interval announced" "-t ext4 -O mmp -E mmp_update_interval=15@8M" ""

# A journal to replay: the replay's handle claims the block too (test_mmp), and gives it back.
same_as_e2fsck "mmp file system needing recovery" "$SPEC" "jo
jw -b 300 $src/big
jc"
mmp_clean "needing recovery, after -fy" "$T/oy.img"
# -z: the MMP repair goes through the undo file, as e2fsck's does; e2undo restores the damage.
if command -v e2undo >/dev/null 2>&1; then
	name="bad MMP magic repaired with -z, undone by e2undo"
	spec_image "$T/undo.img" "$SPEC"
	bash -c "$mmp_offset"'
printf "\0\0\0\0" | dd of="$1" bs=1 seek=$off conv=notrunc status=none' damage "$T/undo.img"
	cp "$T/undo.img" "$T/undo-ref.img"
	rm -f "$T/fsck.undo"
	rc=0; "$E4FSCK" -fy -z "$T/fsck.undo" "$T/undo.img" >"$T/undo.out" 2>&1 || rc=$?
	if [ "$rc" = 0 ] && e2undo "$T/fsck.undo" "$T/undo.img" >/dev/null 2>&1 && cmp -s "$T/undo.img" "$T/undo-ref.img"; then
		pass "$name"
	else
		bad "$name: exit $rc, or e2undo did not restore the image"; sed 's/^/    /' "$T/undo.out" | head -n 5
	fi
else
	echo "SKIP -z: no e2undo"
fi

damage_case "wrong link count on an mmp file system" "$SPEC" "sif /d links_count 5"
mmp_clean "wrong link count, after -fy" "$T/dmg.img"

# -- The MMP block on the inode table ---------------------------------------------------
name="MMP block on the inode table"
spec_image "$T/it.img" "$SPEC"
it=$(dumpe2fs "$T/it.img" 2>/dev/null | sed -n 's/^ *Inode table at \([0-9]*\)-.*/\1/p' | head -n 1)
debugfs -w -R "ssv mmp_block $((it + 2))" "$T/it.img" >/dev/null 2>&1
table_before=$(dd if="$T/it.img" bs=1024 skip="$it" count=8 status=none | md5sum)
rc=0; "$E4FSCK" -fn "$T/it.img" >"$T/it.n" 2>&1 || rc=$?
if [ "$rc" = 12 ] && grep -q '^Superblock has invalid MMP block.  Clear? no$' "$T/it.n"; then
	pass "$name: -fn"
else
	bad "$name: -fn exit $rc:"; sed 's/^/    /' "$T/it.n" | head -n 10
fi
rc=0; "$E4FSCK" -fy "$T/it.img" >"$T/it.y" 2>&1 || rc=$?
if [ "$rc" = 8 ] && grep -q 'MMP: block number beyond filesystem range while trying to open' "$T/it.y" &&
   [ "$(dd if="$T/it.img" bs=1024 skip="$it" count=8 status=none | md5sum)" = "$table_before" ]; then
	pass "$name: -fy clears the number, writes nothing on the table"
else
	bad "$name: -fy exit $rc, or the table changed:"; sed 's/^/    /' "$T/it.y" | head -n 10
fi

# -- debug4fs -w claims and gives back -----------------------------------------------------
name="debug4fs -w on an mmp file system"
spec_image "$T/dbg.img" "$SPEC"
if "$DEBUG4FS" -w -R "mkdir newdir" "$T/dbg.img" >"$T/dbg.out" 2>&1 && e2fsck -fn "$T/dbg.img" >"$T/dbg.chk" 2>&1; then
	pass "$name: e2fsck -fn clean"
else
	bad "$name:"; sed 's/^/    /' "$T/dbg.out" "$T/dbg.chk" | head -n 10
fi
mmp_clean "$name" "$T/dbg.img"
set_seq "$T/dbg.img" 0xE24D4D50
rc=0; "$DEBUG4FS" -w -R "mkdir other" "$T/dbg.img" >"$T/dbg.out" 2>&1 || rc=$?
if grep -q -e 'MMP: e2fsck being run' -e 'a checker has the file system open' "$T/dbg.out" && ! debugfs -R "stat /other" "$T/dbg.img" 2>/dev/null | grep -q Inode; then
	pass "$name: refused while a checker holds the block"
else
	bad "$name: not refused while a checker holds the block (exit $rc):"; sed 's/^/    /' "$T/dbg.out" | head -n 5
fi

# -- The kernel mounts what e4fsck -fy left ----------------------------------------------
if [ "$(root_loop_reason)" = yes ]; then
	mkdir -p "$T/mnt"
	unset LD_PRELOAD
	if loop_mount "$T/dmg.img" "$T/mnt" && [ -d "$T/mnt/d" ] && loop_umount "$T/mnt" &&
	   e2fsck -fn "$T/dmg.img" >"$T/mnt.chk" 2>&1; then
		pass "the kernel mounts the repaired mmp file system"
	else
		bad "the kernel does not mount the repaired mmp file system, or e2fsck -fn is not clean after"
		sed 's/^/    /' "$T/mnt.chk" 2>/dev/null | head -n 10
	fi
	mmp_clean "after the kernel's mount" "$T/dmg.img"
else
	echo "SKIP kernel mount: $(root_loop_reason)"
fi

exit $failed
