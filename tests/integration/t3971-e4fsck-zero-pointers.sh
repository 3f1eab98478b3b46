#!/bin/bash
# t3971-e4fsck-zero-pointers.sh - e4fsck on numbers from disk that must not
# be followed or believed (issue 20): block 0, which on a file system of
# 4 KiB blocks is the superblock's block but in a pointer means "none",
# and sizes that claim far more than a directory maps.
#
# Cases, each failing before its fix:
#   - an MMP block number of 0 (4 KiB blocks): not claimed a second time,
#     so no blocks are "claimed by more than one inode"; since e4fsck reads
#     the MMP block as e2fsck does (issue 17), -n stops before pass 1 with
#     e2fsck's "invalid MMP block" question and exit status;
#   (a group's bitmap at block 0 is judged in t3930: the backup
#   descriptors are taken, as e2fsck takes them;)
#   - on a terminal, a file whose extent index points at block 0 deleted in
#     pass 1D: block 0 stays in use (it was freed in the bitmap), and the
#     result is what e2fsck calls clean;
#   - -n on an htree directory whose i_size claims 2 TiB: pass 2 sizes the
#     index by the blocks mapped, as e2fsck, not by i_size (it ran out of
#     memory);
#   - -n on a directory with a name given twice whose i_size claims 256 TiB:
#     pass 3A reads the blocks mapped (it walked i_size's holes for ever);
#   - on a terminal, /lost+found rebuilt in pass 3A while its i_size claims
#     64 MiB ("Fix? no"): it keeps the blocks it maps, as e2fsck's does, and
#     the output and the exit status are e2fsck's (the rebuild made 64 MiB
#     of blocks and failed).
# e2fsck's output differs in these cases where e4fsck lacks a check of its
# own (the descriptors' locations, i_size_high of directories); the
# exit status is compared where they agree.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck mke2fs debugfs timeout
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir
export LC_ALL=C

failed=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }
show() { sed 's/^/    /' "$1" | head -n 30; }

# run_fsck NAME IMG OUT OPTS...: e4fsck with a time limit; its exit status in $rc.
run_fsck() {
	local name=$1 img=$2 out=$3
	shift 3
	rc=0
	timeout 120 "$E4FSCK" "$@" "$img" >"$out" 2>&1 || rc=$?
	if [ "$rc" = 124 ]; then
		bad "$name: e4fsck did not finish within two minutes"; show "$out"; return 1
	fi
	if grep -q -e 'AddressSanitizer' -e 'LeakSanitizer' -e 'runtime error' "$out"; then
		bad "$name: the sanitizers object"; show "$out"; return 1
	fi
	return 0
}

head -c 300000 /dev/urandom >"$T/big"

# ---------------------------------------------------------------- MMP block 0
name="an MMP block number of 0 is not claimed"
rm -f "$T/mmp.img"
mke2fs -q -F -t ext4 -b 4096 -O mmp "$T/mmp.img" 64M >/dev/null 2>&1
debugfs -w -R "write $T/big big" "$T/mmp.img" >/dev/null 2>&1
debugfs -w -R "ssv mmp_block 0" "$T/mmp.img" >/dev/null 2>&1
if run_fsck "$name" "$T/mmp.img" "$T/mmp.out" -fn; then
	want=0; e2fsck -fn "$T/mmp.img" >"$T/mmp.e2" 2>&1 || want=$?
	if grep -q '^Pass 1B' "$T/mmp.out" || [ "$rc" != "$want" ] ||
	   ! grep -q '^Superblock has invalid MMP block.  Clear? no$' "$T/mmp.out"; then
		bad "$name: exit $rc (e2fsck's $want), or block 0 claimed twice:"; show "$T/mmp.out"
	else
		pass "$name"
	fi
fi

# ---------------------------------------------------------------- deleting through an index of 0
# /frag has five extents (four holes punched), so its root holds one index
# entry, whose block (i_block[4]) is set to 0.  Its attribute block is also
# /small's first data block, so pass 1D asks about /frag: on a terminal,
# "Clear" (the bad index), "Optimize" and "Fix" (i_blocks) are answered no,
# "Clone" no and "Delete file" yes.
name="deleting a file whose extent index is 0 leaves block 0 in use"
if command -v python3 >/dev/null 2>&1; then
	head -c 100000 /dev/urandom >"$T/frag"
	head -c 5000 /dev/urandom >"$T/small"
	head -c 600 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 600 >"$T/value"
	rm -f "$T/del.img"
	mke2fs -q -F -t ext4 -b 4096 -O ^metadata_csum "$T/del.img" 32M >/dev/null 2>&1
	debugfs -w -f - "$T/del.img" >/dev/null 2>&1 <<-EOF
		write $T/frag frag
		write $T/small small
		punch frag 5 5
		punch frag 10 10
		punch frag 15 15
		punch frag 20 20
		ea_set -f $T/value frag user.big
	EOF
	ea=$(debugfs -R "stat /frag" "$T/del.img" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p')
	debugfs -w -R "bmap /small 0 $ea" "$T/del.img" >/dev/null 2>&1
	debugfs -w -R "sif /frag block[4] 0" "$T/del.img" >/dev/null 2>&1
	rc=0
	timeout 120 python3 "$top_srcdir/tests/lib/pty-answers.py" nnnny NL "$E4FSCK" -f "$T/del.img" >"$T/del.out" 2>&1 || rc=$?
	if ! grep -q '^Delete file<y>? yes' "$T/del.out" || grep -q -e 'AddressSanitizer' -e 'runtime error' "$T/del.out"; then
		bad "$name: e4fsck was not asked as expected, or the sanitizers object:"; show "$T/del.out"
	elif ! e2fsck -fn "$T/del.img" >"$T/del.check" 2>&1; then
		bad "$name: e2fsck -fn is not clean afterwards:"; show "$T/del.check"
	else
		pass "$name"
	fi
else
	echo "SKIP $name: no python3"
fi

# ---------------------------------------------------------------- an htree directory of 2 TiB
name="an htree directory whose i_size claims 2 TiB"
rm -f "$T/ht.img"
echo x >"$T/x"
mke2fs -q -F -t ext4 "$T/ht.img" 16M >/dev/null 2>&1
{ echo "mkdir d"; for i in $(seq 1 120); do echo "write $T/x d/file_with_a_long_name_$i"; done; } |
	debugfs -w -f - "$T/ht.img" >/dev/null 2>&1
e2fsck -fyD "$T/ht.img" >/dev/null 2>&1 || true
debugfs -w -R "sif /d size 0x1FFFFFFFC00" "$T/ht.img" >/dev/null 2>&1
cp "$T/ht.img" "$T/ht-ref.img"
want=0; e2fsck -fn "$T/ht-ref.img" >"$T/ht.ref" 2>&1 || want=$?
if ! debugfs -R "stat /d" "$T/ht.img" 2>/dev/null | grep -q 'Flags: 0x[0-9a-f]*1[0-9a-f]\{3\}$'; then
	bad "$name: the test's directory is not indexed"
elif run_fsck "$name" "$T/ht.img" "$T/ht.out" -fn; then
	if [ "$rc" != "$want" ] || grep -q 'out of memory' "$T/ht.out"; then
		bad "$name: exit $rc (e2fsck $want):"; show "$T/ht.out"
	else
		pass "$name"
	fi
fi

# ---------------------------------------------------------------- a directory to rebuild of 256 TiB
name="a directory to rebuild whose i_size claims 256 TiB"
head -c 3000 /dev/urandom >"$T/data"
rm -f "$T/dup.img"
mke2fs -q -F -t ext4 -b 1024 -O ^metadata_csum "$T/dup.img" 8M >/dev/null 2>&1
printf '%s\n' "mkdir d1" "write $T/data d1/f2" "write $T/data d1/f3" | debugfs -w -f - "$T/dup.img" >/dev/null 2>&1
blk=$(debugfs -R "bmap d1 0" "$T/dup.img" 2>/dev/null)
# The third entry's name, "f3" at byte 44 of the block, becomes a second "f2".
printf 'f2' | dd of="$T/dup.img" bs=1 seek=$((blk * 1024 + 44)) conv=notrunc status=none
debugfs -w -R "sif d1 size 0xFFFFFFFFFC00" "$T/dup.img" >/dev/null 2>&1
cp "$T/dup.img" "$T/dup-ref.img"
want=0; e2fsck -fn "$T/dup-ref.img" >"$T/dup.ref" 2>&1 || want=$?
if run_fsck "$name" "$T/dup.img" "$T/dup.out" -fn; then
	if [ "$rc" != "$want" ] || ! grep -q '^Rename to f2~0? no$' "$T/dup.out"; then
		bad "$name: exit $rc (e2fsck $want), or no rename offered:"; show "$T/dup.out"
	else
		pass "$name"
	fi
fi

# ---------------------------------------------------------------- /lost+found of 64 MiB
name="/lost+found rebuilt while its i_size claims 64 MiB"
if command -v python3 >/dev/null 2>&1; then
	rm -f "$T/lf.img"
	mke2fs -q -F -t ext4 -b 1024 -O ^metadata_csum "$T/lf.img" 8M >/dev/null 2>&1
	printf '%s\n' "write $T/data lost+found/f2" "write $T/data lost+found/f3" |
		debugfs -w -f - "$T/lf.img" >/dev/null 2>&1
	blk=$(debugfs -R "bmap lost+found 0" "$T/lf.img" 2>/dev/null)
	printf 'f2' | dd of="$T/lf.img" bs=1 seek=$((blk * 1024 + 44)) conv=notrunc status=none
	debugfs -w -R "sif lost+found size 0x4000000" "$T/lf.img" >/dev/null 2>&1
	cp "$T/lf.img" "$T/lf-ref.img"
	rc=0
	timeout 120 python3 "$top_srcdir/tests/lib/pty-answers.py" n NL "$E4FSCK" -f "$T/lf.img" >"$T/lf.out" 2>&1 || rc=$?
	want=0
	timeout 120 python3 "$top_srcdir/tests/lib/pty-answers.py" n "" e2fsck -f "$T/lf-ref.img" >"$T/lf.ref" 2>&1 || want=$?
	sed -i -e '/^e[24]fsck [0-9]/d' -e "s|$T/lf\(-ref\)\{0,1\}.img|IMG|g" "$T/lf.out" "$T/lf.ref"
	if ! grep -q '^Rename to f2~0<y>? yes' "$T/lf.ref"; then
		bad "$name: e2fsck was not asked as expected:"; show "$T/lf.ref"
	elif [ "$rc" != "$want" ] || ! diff "$T/lf.ref" "$T/lf.out" >"$T/lf.diff"; then
		bad "$name: exit $rc (e2fsck $want), or other lines than e2fsck's:"; show "$T/lf.diff"
	else
		pass "$name"
	fi
else
	echo "SKIP $name: no python3"
fi

[ "$failed" = 0 ] || fail "e4fsck followed or believed a number it should not have"
