#!/bin/bash
# t1300-debug4fs-inode: compare debug4fs's inode commands (stat, dump_extents,
# blocks, bmap, icheck, ncheck) with e2fsprogs' debugfs.
#
# Images: ext2 (1 KiB blocks, 128-byte inodes), ext3, ext4 (defaults),
# ext4 with inline_data, ext4 without metadata_csum but with uninit_bg, all
# populated with "mke2fs -d"; a copy of the ext4 image with odd inode fields
# set by "debugfs -w" (dtime, post-2038 times, huge sizes, i_extra_isize
# variants, a wrong directory file type); and, when we are root and loop
# mounts work, a kernel-written ext4 image with fragmented files (extent
# trees of depth 1 and 2), unwritten extents and a deleted inode.
#
# For every in-use inode one command file per tool runs stat / ex / blocks /
# bmap; icheck and ncheck get a command file each.  The stdout transcripts
# must be identical; stderr must be identical once the version banners are
# removed and debug4fs's extra " (detail)" at the end of an error line is
# dropped.  The -j output of each command file must be valid JSON lines.
#
# Environment: DEBUG4FS (the tool), REAL_DEBUGFS (the reference),
# EXT4FS_KEEP_TMP=1 keeps the work directory.

set -u

here=$(cd -- "$(dirname -- "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

[ -n "${REAL_DEBUGFS:-}" ] || skip "debugfs (e2fsprogs) not found"
[ -x "$DEBUG4FS" ] || skip "debug4fs is not built ($DEBUG4FS)"
command -v mke2fs >/dev/null 2>&1 || skip "mke2fs not found"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
make_tmpdir
W=$T

export TZ=UTC LC_ALL=C DEBUGFS_PAGER=__none__ PAGER=__none__
unset LANG LANGUAGE DEBUGFS_HOOK 2>/dev/null || true

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() {
	failed=$((failed + 1))
	printf 'FAIL: %s\n' "$*"
}

# ------------------------------------------------------------ source tree

SRC=$W/src
mkdir -p "$SRC/d/sub" "$SRC/small"
: >"$SRC/empty"
printf 'a' >"$SRC/one"
head -c 60 /dev/zero | tr '\0' 'b' >"$SRC/f60"
head -c 61 /dev/zero | tr '\0' 'c' >"$SRC/f61"
python3 - "$SRC" <<'EOF'
import os, random, sys
src = sys.argv[1]
r = random.Random(300)
def blob(n):
    return bytes(r.getrandbits(8) for _ in range(n))
open(os.path.join(src, 'f5000'), 'wb').write(blob(5000))
with open(os.path.join(src, 'big3m'), 'wb') as f:
    chunk = blob(65536)
    for i in range(48):
        f.write(chunk)
with open(os.path.join(src, 'sparse'), 'wb') as f:
    f.truncate(10 * 1024 * 1024)
    f.seek(4096 * 1000)
    f.write(blob(3 * 4096))
with open(os.path.join(src, 'sparse_end'), 'wb') as f:
    f.seek(300 * 1024)
    f.write(b'tail')
for i in range(1, 501):
    open(os.path.join(src, 'd', 'file%d' % i), 'w').write('%d\n' % i)
for i in range(3):
    open(os.path.join(src, 'small', 's%d' % i), 'w').write('x' * i)
try:
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(src, 'sock'))
    s.close()
except OSError:
    pass
EOF
ln -s one "$SRC/shortlink"
ln -s "$(head -c 59 /dev/zero | tr '\0' 'y')" "$SRC/link59"
ln -s "$(head -c 80 /dev/zero | tr '\0' 'x')" "$SRC/longlink"
ln "$SRC/f5000" "$SRC/hardlink"
ln "$SRC/one" "$SRC/d/sub/one_again"
mkfifo "$SRC/fifo" 2>/dev/null || true
mknod "$SRC/cdev" c 4 5 2>/dev/null || true
mknod "$SRC/bdev" b 8 1 2>/dev/null || true
mknod "$SRC/bigdev" c 300 70000 2>/dev/null || true
if command -v setfattr >/dev/null 2>&1 && setfattr -n user.t -v 1 "$SRC/one" 2>/dev/null; then
	setfattr -n user.foo -v bar "$SRC/one"
	setfattr -n user.big -v "$(head -c 500 /dev/zero | tr '\0' y)" "$SRC/f61"
	setfattr -n user.v39 -v "$(head -c 39 /dev/zero | tr '\0' a)" "$SRC/f60"
	setfattr -n user.v40 -v "$(head -c 40 /dev/zero | tr '\0' a)" "$SRC/f60"
	setfattr -n trusted.t -v 1 "$SRC/f60" 2>/dev/null || true
	setfattr -n security.selinux -v "system_u:object_r:foo_t:s0" "$SRC/empty" 2>/dev/null || true
	python3 - "$SRC" <<'EOF' || true
import os, struct, sys
src = sys.argv[1]
f = os.path.join(src, 'f5000')
os.setxattr(f, 'user.bin', b'\x01\x02\xff')
os.setxattr(f, 'user.h7', b'abcdefg\x01')
os.setxattr(f, 'user.h8', b'abcdefgh\x01')
os.setxattr(f, 'user.quote', b'a"b\\c\'d')
os.setxattr(f, 'user.esc', b'abcdefghijklmnop\a\b\t\n\v\f\r\x1b\x7f\xff')
for i, c in enumerate(b'\a\b\t\n\v\f\r\x1b\x7f\xff\x80?%'):
    os.setxattr(os.path.join(src, 'sparse_end'), 'user.e%02d' % i, b'abcdefghijklmnop' + bytes([c]))
os.setxattr(f, 'user.empty', b'')
v = struct.pack('<I', 2)
for tag, perm, ident in [(1, 6, 0xffffffff), (2, 6, 1000), (4, 4, 0xffffffff),
                         (8, 4, 100), (0x10, 6, 0xffffffff), (0x20, 4, 0xffffffff)]:
    v += struct.pack('<HHI', tag, perm, ident)
try:
    os.setxattr(os.path.join(src, 'f60'), 'system.posix_acl_access', v)
except OSError:
    pass
EOF
fi

# ------------------------------------------------------------ images

IMAGES=()
mkimg() {
	# mkimg NAME SIZE mke2fs-args...
	local name=$1 size=$2
	shift 2
	rm -f "$W/$name.img"
	truncate -s "$size" "$W/$name.img"
	if mke2fs -q -F -N 1200 -E root_owner=0:0 "$@" -d "$SRC" "$W/$name.img" >"$W/$name.mkfs" 2>&1; then
		IMAGES+=("$name")
	else
		bad "mke2fs $* failed: $(tail -n 3 "$W/$name.mkfs")"
	fi
}
mkimg ext2 32M -t ext2 -b 1024 -I 128
mkimg ext3 64M -t ext3
mkimg ext4 64M -t ext4
mkimg inline 64M -t ext4 -O inline_data
mkimg uninit 64M -t ext4 -O ^metadata_csum,uninit_bg
mkimg ext4-4k 64M -t ext4 -b 4096 -I 512
mkimg hurd 32M -o hurd -t ext2 -b 1024 -I 128
if [ -f "$W/hurd.img" ]; then
	# A translator block shows up first in a Hurd file's block list.
	"$REAL_DEBUGFS" -w -R 'sif /f5000 translator 1234' "$W/hurd.img" >/dev/null 2>&1
fi

# A copy of the ext4 image with odd fields (written by the real debugfs).
if [ -f "$W/ext4.img" ]; then
	cp "$W/ext4.img" "$W/odd.img"
	cat >"$W/odd.w" <<'EOF'
sif /one dtime 0x12345678
sif /one ctime_extra 0x00000007
sif /one mtime_extra 0xfffffffd
sif /one crtime_extra 0x1
sif /one mtime 0x80000000
sif /one flags 0x10080020
sif /one projid 77
sif /one version 0x1234
sif /one uid 70000
sif /one gid 80000
sif /one generation 999
sif /one size 0x100000005
sif /one blocks_hi 1
sif /f60 mode 0120644
sif /f61 uid 0xffffffff
sif /f61 faddr 77
sif /f61 links_count 65535
sif /f5000 extra_isize 200
sif /hardlink atime 0xffffffff
sif /big3m extra_isize 0
sif /sparse extra_isize 4
sif /sparse_end extra_isize 24
sif /empty extra_isize 28
sif /fifo mode 0070644
sif /shortlink mode 0104755
EOF
	"$REAL_DEBUGFS" -w -f "$W/odd.w" "$W/odd.img" >/dev/null 2>&1
	IMAGES+=(odd)
fi

# A kernel-written image: extent trees of depth 1 and 2, unwritten extents.
if have_root_loop; then
	K=$W/kernel.img
	truncate -s 64M "$K"
	mkdir -p "$W/mnt"
	if mke2fs -q -F -t ext4 -b 1024 "$K" >/dev/null 2>&1 && loop_mount "$K" "$W/mnt"; then
		python3 - "$W/mnt" <<'EOF'
import os, sys
m = sys.argv[1]
a = open(os.path.join(m, 'frag_a'), 'wb')
b = open(os.path.join(m, 'frag_b'), 'wb')
for i in range(50):
    for f in (a, b):
        f.write(os.urandom(1024)); f.flush(); os.fsync(f.fileno())
a.close(); b.close()
fd = os.open(os.path.join(m, 'holey'), os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(1200):
    os.pwrite(fd, b'h' * 1024, 2 * i * 1024)
os.close(fd)
fd = os.open(os.path.join(m, 'holey_unw'), os.O_WRONLY | os.O_CREAT, 0o644)
for i in range(150):
    os.posix_fallocate(fd, 3 * i * 1024, 1024)
    if i % 2:
        os.pwrite(fd, b'x' * 1024, 3 * i * 1024)
os.close(fd)
fd = os.open(os.path.join(m, 'unwritten'), os.O_WRONLY | os.O_CREAT, 0o644)
os.posix_fallocate(fd, 0, 100 * 1024)
os.pwrite(fd, b'y' * 3072, 10 * 1024)
os.close(fd)
open(os.path.join(m, 'small'), 'w').write('hi\n')
os.mkdir(os.path.join(m, 'bigdir'))
for i in range(300):
    open(os.path.join(m, 'bigdir', 'a_rather_long_file_name_%04d' % i), 'w').close()
os.link(os.path.join(m, 'small'), os.path.join(m, 'bigdir', 'link_to_small'))
open(os.path.join(m, 'doomed'), 'w').write('z' * 5000)
# Unwritten extents past i_size (FALLOC_FL_KEEP_SIZE), enough for a tree of
# depth >= 1 whose last index entries lie beyond the end of the file.
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(os.path.join(m, 'keepsize'), os.O_WRONLY | os.O_CREAT, 0o644)
    for i in range(0, 600, 2):
        libc.fallocate(fd, 1, ctypes.c_long(i * 1024), ctypes.c_long(1024))
    os.pwrite(fd, b'k' * 3000, 0)
    os.close(fd)
except OSError:
    pass
EOF
		sync
		DOOMED=$(stat -c %i "$W/mnt/doomed")
		rm -f "$W/mnt/doomed"
		sync
		loop_umount "$W/mnt"
		IMAGES+=(kernel)
	else
		bad "cannot make or mount the kernel image"
	fi
fi

# ------------------------------------------------------------ running

# run_ref/run_new IMG CMDFILE OUT: stdout to OUT.out, stderr (banner removed) to OUT.err
run_ref() {
	"$REAL_DEBUGFS" -f "$2" "$1" >"$3.out" 2>"$3.err.raw"
	grep -v '^debugfs [0-9][0-9.]* (' "$3.err.raw" >"$3.err"
}
run_new() {
	"$DEBUG4FS" -f "$2" "$1" >"$3.out" 2>"$3.err.raw"
	grep -v '^debug4fs [0-9][^ ]* ([0-9]*-[A-Z][a-z][a-z]-[0-9]*)$' "$3.err.raw" >"$3.err"
}

# same_errors REF NEW: the same lines, except that a debug4fs line may add
# " (detail)" (the library's description of the failure) to debugfs's.
same_errors() {
	python3 - "$1" "$2" <<'EOF'
import sys
ref = open(sys.argv[1], 'rb').read().split(b'\n')
new = open(sys.argv[2], 'rb').read().split(b'\n')
ok = len(ref) == len(new) and all(
    r == n or (n.startswith(r + b' (') and n.endswith(b')')) for r, n in zip(ref, new))
sys.exit(0 if ok else 1)
EOF
}

compare() {
	# compare IMAGE-NAME KIND
	local name=$1 kind=$2 img=$W/$1.img cmd=$W/$1.$2.cmd
	run_ref "$img" "$cmd" "$W/$name.$kind.ref"
	run_new "$img" "$cmd" "$W/$name.$kind.new"
	if cmp -s "$W/$name.$kind.ref.out" "$W/$name.$kind.new.out"; then
		ok
	else
		bad "$name $kind: stdout differs"
		diff -u "$W/$name.$kind.ref.out" "$W/$name.$kind.new.out" | head -n 30
	fi
	if same_errors "$W/$name.$kind.ref.err" "$W/$name.$kind.new.err"; then
		ok
	else
		bad "$name $kind: stderr differs"
		diff -u "$W/$name.$kind.ref.err" "$W/$name.$kind.new.err" | head -n 20
	fi
	# JSON: one document per successful command, one per line.
	if "$DEBUG4FS" -j -f "$cmd" "$img" 2>/dev/null >"$W/$name.$kind.json"; [ -s "$W/$name.$kind.json" ]; then
		if python3 -m json.tool --json-lines "$W/$name.$kind.json" >/dev/null 2>"$W/$name.$kind.json.err"; then
			ok
		else
			bad "$name $kind: -j output is not valid JSON: $(head -c 300 "$W/$name.$kind.json.err")"
		fi
	fi
}

for name in "${IMAGES[@]}"; do
	img=$W/$name.img
	ninodes=$("$REAL_DEBUGFS" -R 'stats -h' "$img" 2>/dev/null | sed -n 's/^Inode count: *//p')
	[ -n "$ninodes" ] || { bad "$name: debugfs cannot read the image"; continue; }
	: >"$W/$name.testi"
	for ((i = 1; i <= ninodes; i++)); do
		printf 'testi <%d>\n' "$i"
	done >"$W/$name.testi"
	mapfile -t used < <("$REAL_DEBUGFS" -f "$W/$name.testi" "$img" 2>/dev/null |
		sed -n 's/^Inode \([0-9]*\) is marked in use$/\1/p')
	if [ "${#used[@]}" -lt 11 ]; then
		bad "$name: found only ${#used[@]} inodes in use"
		continue
	fi
	# a few inodes not in use (and the deleted one on the kernel image)
	extra=("$((ninodes))" "$((used[${#used[@]} - 1] + 1))")
	[ "$name" = kernel ] && [ -n "${DOOMED:-}" ] && extra+=("$DOOMED")

	for i in "${used[@]}" "${extra[@]}"; do printf 'stat <%s>\n' "$i"; done >"$W/$name.stat.cmd"
	printf 'stat /\nshow_inode_info /d\nstat\nstat a b\nstat /nonexistent\n' >>"$W/$name.stat.cmd"

	for i in "${used[@]}"; do
		printf 'ex <%s>\n' "$i"
		printf 'ex -n <%s>\n' "$i"
		printf 'extents -l <%s>\n' "$i"
	done >"$W/$name.ex.cmd"
	printf 'dump_extents\nex -n -l /\nex a b\n' >>"$W/$name.ex.cmd"

	for i in "${used[@]}"; do printf 'blocks <%s>\n' "$i"; done >"$W/$name.blocks.cmd"
	printf 'blocks\nblocks /nonexistent\n' >>"$W/$name.blocks.cmd"

	for i in "${used[@]}"; do
		for l in 0 1 11 12 300 4000 70000; do printf 'bmap <%s> %s\n' "$i" "$l"; done
	done >"$W/$name.bmap.cmd"
	cat >>"$W/$name.bmap.cmd" <<'EOF'
bmap
bmap /one
bmap /one x
bmap -x /one 0
bmap /one 1 2 3
bmap -a /one 0 5
bmap /one 0 5
bmap /f5000 99999999999
bmap /f5000 4294967295
bmap /f5000 16843020
bmap -a /f5000 0
bmap /nonexistent 0
EOF

	# icheck: blocks owned by files (first and last of each "blocks" line),
	# plus metadata and out-of-range blocks; ncheck: every inode in use.
	"$REAL_DEBUGFS" -f "$W/$name.blocks.cmd" "$img" 2>/dev/null |
		awk '!/^debugfs:/ && NF { print $1; print $NF }' | sort -un | head -n 400 >"$W/$name.blist"
	{
		printf 'icheck 0 1 2 3 4 5 10 100 1000 99999999 18446744073709551615\n'
		xargs -n 40 echo icheck <"$W/$name.blist"
		printf 'icheck\nicheck abc\nicheck 5 -1\n'
	} >"$W/$name.icheck.cmd"
	{
		printf '%s\n' "${used[@]}" | xargs -n 40 echo ncheck
		printf '%s\n' "${used[@]}" | xargs -n 40 echo ncheck -c
		printf 'ncheck\nncheck -c\nncheck abc\nncheck <12>\nncheck 0x0c 12\nncheck 12 99999999\nncheck <15\nncheck 15>\nncheck 0\n'
		printf 'ncheck %s\n' "$((ninodes))"
	} >"$W/$name.ncheck.cmd"

	for kind in stat ex blocks bmap icheck ncheck; do
		compare "$name" "$kind"
	done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
