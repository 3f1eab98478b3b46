#!/bin/bash
# t3948-e4fsck-dirs-more.sh - pass 2's rarer directory problems, judged by
# e2fsck 1.47 in -n, -p and -y (tests/lib/fsck-damage.sh's damage_case):
#
#   an inline directory whose area (60 bytes of i_block and the value of
#   system.data) is no multiple of 4 long: a value too short for a record
#   is dropped, a longer one grows to the next multiple of 4 (the record in
#   it is whole again) or, when the inode body has no byte free, shrinks to
#   the one before (the record is then salvaged, its file reconnected).
#   With -n the second "block" is read as it is: directory corrupted,
#   salvage declined, the check aborted, as e2fsck aborts.
#   An inline directory's entries are checked as a block's are, its i_size
#   against its area (pass 1).
#   A value kept in the attribute block cannot be rewritten: fixing the
#   size fails, and the directory is truncated.  -n and -p as e2fsck; with
#   -y e2fsck reads the inline bytes as a block 0 it writes to block 0 of
#   the file system, e4fsck gives the directory a new block 0 instead: its
#   result must be clean.  Declined on a terminal, the "block" is passed
#   over, and a declined salvage of the second one aborts, as in e2fsck.
#
#   An indexed directory whose last block, past those its index covers,
#   was illegal: the hole pass 1's clearing leaves is filled in pass 2,
#   and the index, which cannot cover it, is cleared (0x020045); kept (a no
#   on a terminal), the check cannot go on, as e2fsck's cannot.
#
#   A directory hole on a file system without a free block: the block
#   cannot be allocated (0x020022), the hole stays.
#
#   A leaf of a metadata_csum directory judged as e2fsprogs' library judges
#   it, by walking its records to the tail: no room marked for the tail is
#   asked about before the records (0x02004C; a yes rebuilds the directory
#   in pass 3A), a declined one is then called a checksum failure
#   (0x02004D), and a block repaired for another reason gets its tail; a
#   walk that breaks counts as having the tail, so the records end 12 bytes
#   before the block's end.
#
#   A block-mapped directory of one block whose blocks 4 and 5 were
#   illegal: pass 1 clears them (i_size stays one block), and pass 2 offers
#   the gaps below them and them, blocks 1-5, in e2fsck's order: after
#   every directory's block 0, before the other blocks.
#
#   A file of mode 0 with an attribute block on a file system without
#   attributes: the reference is dropped and the inode released, the block
#   left to pass 5, as e2fsck does.
#
#   An invalid slow symlink whose inode the bitmap already calls free is
#   released all the same: its block is freed, and the free inode count
#   goes up by one (pass 5 then puts it right), as e2fsck does.
#
#   Writing the block of a new /lost+found fails (the fault hook, e4fsck
#   alone: e2fsck's cached writes put the error off): e2fsck's message
#   (0x03000D), the inode and block are given back, pass 4 makes
#   /lost+found again, and the result is clean.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"

need_cmd python3
damage_need_e2fsck_147
damage_setup

# base_image IMG LAYOUT
#   inline: /big, the inline directory /d holding file1-file3 (i_block is
#           full), and /x, a file for the value's record to name
base_image() {
	local img=$1 layout=$2
	rm -f "$img"
	case $layout in
	inline | inline-nocsum)
		local nocsum=
		[ "$layout" = inline ] || nocsum=,^metadata_csum
		mke2fs -q -F -t ext4 -O inline_data$nocsum -I 256 -b 1024 "$img" 4M >/dev/null 2>&1
		debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
			write $src/big big
			mkdir d
			write /etc/hostname d/file1
			write /etc/hostname d/file2
			write /etc/hostname d/file3
			write /etc/hostname x
		EOF
		;;
	htree)
		# /h: 60 entries in 5 blocks, indexed by e2fsck -D.
		mke2fs -q -F -t ext3 -b 1024 "$img" 8M >/dev/null 2>&1
		{
			echo "write $src/big big"
			echo "mkdir h"
			for i in $(seq 1 60); do echo "write /etc/hostname h/a_fairly_long_file_name_number_$i"; done
		} | debugfs -w -f - "$img" >/dev/null 2>&1
		e2fsck -fyD "$img" >/dev/null 2>&1 || true
		;;
	csum)
		# /c: six files in one 1 KiB leaf; /slowlink: a symlink whose 75-byte target takes a block.
		mke2fs -q -F -t ext4 -b 1024 -I 256 "$img" 8M >/dev/null 2>&1
		{
			echo "write $src/big big"
			echo "mkdir c"
			for i in 1 2 3 4 5 6; do echo "write /etc/hostname c/file$i"; done
			echo "symlink slowlink /$(printf 'x%.0s' $(seq 1 74))"
		} | debugfs -w -f - "$img" >/dev/null 2>&1
		;;
	ext3 | ext3-noattr)
		# /d: one block of a block-mapped directory; /e: a second directory; /f: a file.
		local noattr=
		[ "$layout" = ext3 ] || noattr="-O ^ext_attr"
		# shellcheck disable=SC2086 # noattr is one option or none
		mke2fs -q -F -t ext3 $noattr -b 1024 "$img" 8M >/dev/null 2>&1
		printf '%s\n' "write $src/big big" "mkdir d" "mkdir e" "write /etc/hostname f" "write /etc/hostname e/g" |
			debugfs -w -f - "$img" >/dev/null 2>&1
		;;
	full)
		# No free block: /d's blocks 1 and 2 are empty, /taker and the rest fill the file system.
		mke2fs -q -F -t ext3 -O ^dir_index -b 1024 -N 128 "$img" 4M >/dev/null 2>&1
		debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
			write $src/big big
			mkdir d
			write /etc/hostname d/f1
			expand_dir d
			expand_dir d
			write /etc/hostname taker
		EOF
		local free
		free=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/^Free blocks: *//p' | head -n 1)
		head -c $(((free - 40) * 1024)) /dev/zero | tr '\0' f >"$T/fill"
		{
			echo "write $T/fill fill"
			for i in $(seq 1 40); do echo "write /etc/hostname s$i"; done
		} | debugfs -w -f - "$img" >/dev/null 2>&1
		;;
	esac
}

# inline_value IMG BYTES [FILL]: the system.data value of /d becomes a
# record naming /x as "file4" cut to BYTES bytes (x unlinked), i_size
# follows (pass 1 finds nothing); FILL, when given, is a user.a value that
# takes the rest of the inode body.
inline_value() {
	local img=$1 len=$2 fill=${3:-} x
	x=$(debugfs -R "stat x" "$img" 2>/dev/null | sed -n '1s/^Inode: \([0-9]*\).*/\1/p')
	python3 -c "import struct, sys
v = struct.pack('<IHBB', $x, 16, 5, 1) + b'file4' + bytes(16)
sys.stdout.buffer.write(v[:$len])" >"$T/value"
	{
		echo "ea_set -f $T/value d system.data"
		echo "unlink x"
		echo "sif d size $((60 + len))"
		[ -z "$fill" ] || echo "ea_set d user.a $fill"
	} | debugfs -w -f - "$img" >/dev/null 2>&1
}

# value_in_block IMG: /d's system.data moves to its attribute block, 101
# bytes long (metadata_csum off: the block's checksum is not rewritten).
value_in_block() {
	local img=$1 blk
	head -c 101 /dev/zero | tr '\0' z >"$T/value"
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		ea_rm d system.data
		ea_set -f $T/value d user.zzzz
		sif d size 161
	EOF
	blk=$(debugfs -R "stat d" "$img" 2>/dev/null | sed -n 's/^File ACL: \([0-9]*\).*/\1/p')
	python3 - "$img" "$blk" <<-'EOF'
		import struct, sys
		img, blk, bs = sys.argv[1], int(sys.argv[2]), 1024
		with open(img, 'r+b') as f:
		    f.seek(blk * bs)
		    b = bytearray(f.read(bs))
		    e = 32                         # the first entry: user.zzzz, renamed system.data
		    b[e + 1] = 7
		    b[e + 16:e + 20] = b'data'
		    offs, _, size = struct.unpack_from('<HII', b, e + 2)
		    h = 0
		    for c in b'data':
		        h = ((h << 5) ^ (h >> 27) ^ c) & 0xffffffff
		    value = bytes(b[offs:offs + size]) + bytes(-size % 4)
		    for i in range(0, len(value), 4):
		        h = ((h << 16) ^ (h >> 16) ^ struct.unpack_from('<I', value, i)[0]) & 0xffffffff
		    struct.pack_into('<I', b, e + 12, h)
		    struct.pack_into('<I', b, 16, h)    # the block hash of its only entry
		    f.seek(blk * bs)
		    f.write(b)
	EOF
}

# leaf_edit IMG HOW: /c's leaf (1 KiB blocks) edited behind its checksum.
#   notail     the last record takes the tail's 12 bytes too (zeroed)
#   notail-bad the same, and file1's record names inode 200 (unused)
#   badlen     file2's rec_len gains 2: the walk breaks; the tail stays
leaf_edit() {
	local img=$1 how=$2 blk
	blk=$(debugfs -R "bmap c 0" "$img" 2>/dev/null)
	python3 - "$img" "$blk" "$how" <<-'EOF'
		import struct, sys
		img, blk, how, bs = sys.argv[1], int(sys.argv[2]), sys.argv[3], 1024
		with open(img, 'r+b') as f:
		    f.seek(blk * bs)
		    b = bytearray(f.read(bs))
		    offs, off = [], 0
		    while off < bs - 12:
		        offs.append(off)
		        off += struct.unpack_from('<H', b, off + 4)[0]
		    name = lambda o: bytes(b[o + 8:o + 8 + b[o + 6]])
		    if how.startswith('notail'):
		        last = offs[-1]
		        struct.pack_into('<H', b, last + 4, bs - last)
		        b[bs - 12:] = bytes(12)
		    if how == 'notail-bad':
		        o = next(o for o in offs if name(o) == b'file1')
		        struct.pack_into('<I', b, o, 200)
		    if how == 'badlen':
		        o = next(o for o in offs if name(o) == b'file2')
		        struct.pack_into('<H', b, o + 4, struct.unpack_from('<H', b, o + 4)[0] + 2)
		    f.seek(blk * bs)
		    f.write(b)
	EOF
}

DAMAGE_CMD=1
damage_case "a leaf with no room marked for its tail" csum "$(declare -f leaf_edit); leaf_edit \"\$1\" notail"
damage_case "a leaf with no room marked for its tail, an entry repaired too" csum \
	"$(declare -f leaf_edit); leaf_edit \"\$1\" notail-bad"
damage_case "a leaf whose walk to the tail breaks" csum "$(declare -f leaf_edit); leaf_edit \"\$1\" badlen"
damage_case "a one-block directory whose blocks 4 and 5 are illegal: holes 1-5 after every block 0" ext3 \
	"printf '%s\n' 'sif d block[4] 9999999' 'sif d block[5] 9999998' | debugfs -w -f - \"\$1\" >/dev/null 2>&1"
damage_case "a file of mode 0 with an attribute block, no attributes on the file system" ext3-noattr \
	"printf '%s\n' 'sif f mode 0' 'sif f file_acl 4000' | debugfs -w -f - \"\$1\" >/dev/null 2>&1"
damage_case "an invalid slow symlink whose inode the bitmap calls free" csum \
	"printf '%s\n' 'sif slowlink size 80' 'freei slowlink' | debugfs -w -f - \"\$1\" >/dev/null 2>&1"
damage_case "inline directory of 65 bytes: the value is dropped" inline \
	"$(declare -f inline_value); T=$T inline_value \"\$1\" 5"
damage_case "inline directory of 75 bytes: it grows to 76" inline \
	"$(declare -f inline_value); T=$T inline_value \"\$1\" 15"
damage_case "inline directory of 75 bytes, the inode body full: it shrinks to 72" inline \
	"$(declare -f inline_value); T=$T inline_value \"\$1\" 15 0123456789abcdef0123456789abcdef"
# Pass 1 judges an inline directory's i_size by its area: too big for it,
# and the area grown without it.
damage_case "inline directory whose i_size is past its area" inline \
	"debugfs -w -R 'sif d size 61' \"\$1\" >/dev/null 2>&1"
damage_case "inline directory whose area grew without its i_size" inline \
	"debugfs -w -R 'ea_set d system.data abcde' \"\$1\" >/dev/null 2>&1"
damage_case "an inline directory's entry names an unused inode" inline \
	"debugfs -w -R 'clri d/file2' \"\$1\" >/dev/null 2>&1"

# The last block of an indexed directory, past the blocks its index knows
# (expand_dir adds it), holds an illegal number: pass 1 clears it, pass 2
# fills the hole it leaves (e2fsck lists it), and the index cannot cover it.
damage_case "htree directory: a block past the index is cleared and filled" htree \
	"debugfs -w -R 'expand_dir h' \"\$1\" >/dev/null 2>&1; n=\$(debugfs -R 'blocks h' \"\$1\" 2>/dev/null | wc -w);
	 debugfs -w -R \"sif h block[\$((n - 1))] 9999999\" \"\$1\" >/dev/null 2>&1"

# The same on a terminal, the index kept: e2fsck cannot go on ("Can not
# continue.", its closing lines, then "aborted" and them again).
unexpected_block_kept() {
	local name="htree directory: a block past the index, the index kept on a terminal" n
	base_image "$T/tty.img" htree
	debugfs -w -R 'expand_dir h' "$T/tty.img" >/dev/null 2>&1
	n=$(debugfs -R 'blocks h' "$T/tty.img" 2>/dev/null | wc -w)
	debugfs -w -R "sif h block[$((n - 1))] 9999999" "$T/tty.img" >/dev/null 2>&1
	TTY_UNJUDGED=1 tty_case "$name" yyyyn '^e2fsck: Can not continue\.' && pass "$name"
}
unexpected_block_kept

# /d's block 1 is given to /taker: a hole below i_size with no free block to
# fill it.  e2fsck exits 0 (nothing changed) and leaves the hole for ever.
DAMAGE_FY_EXIT=0 DAMAGE_NEVER_CLEAN=1 damage_case "a directory hole on a full file system" full \
	"b=\$(debugfs -R 'blocks d' \"\$1\" 2>/dev/null | awk '{print \$2}');
	 printf '%s\n' 'sif d block[1] 0' 'sif d blocks 4' \"sif taker block[1] \$b\" 'sif taker size 2048' \\
		'sif taker blocks 4' | debugfs -w -f - \"\$1\" >/dev/null 2>&1"
unset DAMAGE_CMD

name="inline directory of 161 bytes, the value in the attribute block: truncated"
SAME_MODES="n p" same_as_e2fsck "$name" inline-nocsum "$(declare -f value_in_block); T=$T value_in_block \"\$1\"" sh
base_image "$T/t.img" inline-nocsum
value_in_block "$T/t.img"
rc=0; "$E4FSCK" -fy "$T/t.img" >"$T/t.y" 2>&1 || rc=$?
if [ "$rc" != 1 ] || ! grep -q '^Fixing size of inline directory inode [0-9]* failed\.$' "$T/t.y"; then
	bad "$name: e4fsck -fy exit $rc, or it did not truncate"; sed 's/^/    /' "$T/t.y" | head -n 20
elif ! "$E4FSCK" -fy "$T/t.img" >"$T/t.y2" 2>&1 || ! e2fsck -fn "$T/t.img" >"$T/t.n" 2>&1; then
	bad "$name: the result of -fy is not clean"; sed 's/^/    /' "$T/t.y2" "$T/t.n" | head -n 20
else
	pass "$name: -fy leaves it clean"
fi

# The same on a terminal, the truncation declined: the first "block" is
# passed over, the second's size declined, its salvage too: aborted.
inline_truncate_declined() {
	local name="inline directory, the value in the attribute block: truncation declined on a terminal"
	base_image "$T/tty.img" inline-nocsum
	value_in_block "$T/tty.img"
	TTY_UNJUDGED=1 tty_case "$name" ynnn '^Truncate<y>? no' && pass "$name"
}
inline_truncate_declined

# lost_found_write_fails: the K-th write of e4fsck -fy fails, for the K
# that is /lost+found's block (found by trying, the order of writes being
# e4fsck's own business).
lost_found_write_fails() {
	local name="writing the block of a new /lost+found fails" k rc found=0
	for k in $(seq 1 20); do
		base_image "$T/lf.img" inline
		debugfs -w -f - "$T/lf.img" >/dev/null 2>&1 <<-EOF
			rmdir lost+found
			unlink x
		EOF
		rc=0; EXT4FS_FAULT="write=$k,mode=fail" "$E4FSCK" -fy "$T/lf.img" >"$T/lf.y" 2>&1 || rc=$?
		grep -q '^ext2fs_write_dir_block: Input/output error while writing the directory block for /lost+found$' \
			"$T/lf.y" && { found=1; break; }
	done
	if [ "$found" = 0 ] || [ "$rc" != 1 ]; then
		bad "$name: no run printed e2fsck's message, or exit $rc"; sed 's/^/    /' "$T/lf.y" | head -n 20
	elif ! e2fsck -fn "$T/lf.img" >"$T/lf.n" 2>&1; then
		bad "$name: e2fsck -fn is not clean afterwards"; sed 's/^/    /' "$T/lf.n" | head -n 20
	else
		pass "$name"
	fi
}
lost_found_write_fails

exit "$failed"
