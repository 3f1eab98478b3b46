#!/bin/bash
# t1700-debug4fs-write: debug4fs -w, judged by e2fsprogs (and the kernel).
#
#  1. Consistent changes: on images from mke2fs (ext4 with 1 KiB and 4 KiB
#     blocks, without metadata_csum, without flex_bg, ext3, ext2 with
#     128-byte inodes) and from mke4fs, one command file writes files
#     (empty, tiny, 60/61 bytes, random, 3 MiB, sparse with a zero block and
#     a tail hole), makes nested directories, fast and slow symlinks, a fifo
#     and device nodes, removes files and directories, links and unlinks
#     with matching link-count fixes, punches, fallocates, sets inode and
#     superblock fields.  Then `e2fsck -fn` must be clean, `debugfs` must
#     show every file's content, mode, owner, times, device numbers and
#     extents as written, and (as root, with loop mounts) the kernel must
#     read the same contents.
#  2. Damage on purpose: clri, kill_file, freeb, setb, freei, seti,
#     sif links_count 0 / size 0 / checksum, link and unlink without count
#     changes, set_bg counts and checksums: e2fsck -fn must fail and name
#     the problem; "set_bg N checksum calc" must leave only the count error.
#  3. Same result as `debugfs -w`: a command file of set_super_value,
#     set_inode_field and set_block_group commands (valid and invalid) run
#     by both tools on copies of one image: identical transcripts (stdout,
#     and stderr without debug4fs's " (detail: ...)"), identical dumpe2fs
#     output (write time and superblock checksum masked) and identical
#     `stat` of the changed inodes.
#  4. Refusals: every write command without -w ("Filesystem opened
#     read/only"), without a file system, bad field names and values,
#     geometry changes through ssv: exit 1, no crash, image unchanged.  As
#     root with loop mounts: -w on a mounted image and on its loop device is
#     refused (read-only use still works).
#
# Environment: DEBUG4FS, MKE4FS, REAL_DEBUGFS; EXT4FS_KEEP_TMP=1 keeps the
# work directory.

# ok() always succeeds, so "test && ok || bad" is an if/else here.
# shellcheck disable=SC2015
set -u

here=$(cd -- "$(dirname -- "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

[ -x "$DEBUG4FS" ] || skip "debug4fs is not built ($DEBUG4FS)"
[ -n "${REAL_DEBUGFS:-}" ] || skip "debugfs (e2fsprogs) not found"
need_cmd mke2fs e2fsck dumpe2fs python3 sha256sum
make_tmpdir
W=$T

export TZ=UTC LC_ALL=C DEBUGFS_PAGER=__none__ PAGER=__none__
unset LANG LANGUAGE DEBUGFS_HOOK 2>/dev/null || true

PASS=0
FAIL=0
SKIPPED=0
ok() { PASS=$((PASS + 1)); }
bad() {
	FAIL=$((FAIL + 1))
	printf 'FAIL %s\n' "$*"
}
skipcase() {
	SKIPPED=$((SKIPPED + 1))
	printf 'SKIP %s\n' "$*"
}

sum() { sha256sum <"$1" | cut -d' ' -f1; }
firstlines() { grep -v '^debug4fs [0-9]\|^e2fsck [0-9]\|^Pass [0-9]' "$1" | sed '/^[[:space:]]*$/d' | head -n 3 | tr '\n' ' ' | cut -c1-240; }

# d4 IMG ARGS...: debug4fs on IMG, output in $W/out and $W/err, status in $rc.
d4() {
	local img=$1
	shift
	"$DEBUG4FS" "$@" "$img" >"$W/out" 2>"$W/err"
	rc=$?
	sed -i '/^debug4fs [0-9]/d' "$W/err"
}
# rdebugfs IMG REQUEST: the real debugfs, stdout only.
rdebugfs() { "$REAL_DEBUGFS" -R "$2" "$1" 2>/dev/null; }

fsck_clean() {
	# fsck_clean NAME IMG
	if e2fsck -fn "$2" >"$W/fsck" 2>&1; then
		ok
	else
		bad "$1: e2fsck -fn is not clean: $(firstlines "$W/fsck")"
	fi
}

# ------------------------------------------------------------ native files

H=$W/host
mkdir -p "$H"
python3 - "$H" <<'EOF'
import os, random, sys
h = sys.argv[1]
r = random.Random(700)
def blob(n):
    return bytes(r.getrandbits(8) for _ in range(n))
open(os.path.join(h, 'empty'), 'wb').close()
open(os.path.join(h, 'one'), 'wb').write(b'1')
open(os.path.join(h, 'f60'), 'wb').write(b'b' * 60)
open(os.path.join(h, 'f61'), 'wb').write(b'c' * 61)
open(os.path.join(h, 'f5000'), 'wb').write(blob(5000))
with open(os.path.join(h, 'big'), 'wb') as f:
    for i in range(48):
        f.write(blob(65536))
# Data at 100 KiB and from 2 MiB (with 64 KiB of explicit zeros inside), and
# a hole up to 6 MiB: the zeros and the tail must come out as holes.
with open(os.path.join(h, 'sparse'), 'wb') as f:
    f.seek(100 * 1024)
    f.write(b'hello')
    f.seek(2 * 1024 * 1024)
    f.write(blob(200 * 1024))
    f.write(bytes(64 * 1024))
    f.write(blob(100 * 1024))
    f.truncate(6 * 1024 * 1024)
open(os.path.join(h, 'exec'), 'wb').write(b'#!/bin/sh\necho hi\n')
EOF
chmod 0755 "$H/exec"
chmod 0640 "$H/f61"
LONG_TARGET=$(printf '/a/rather/long/symlink/target/%s' "$(printf 'x%.0s' $(seq 1 60))")

# ------------------------------------------------------------ 1. consistent changes

# Commands that leave a consistent file system; @H@ is the native directory.
cat >"$W/build.cmd" <<EOF
mkdir d
mkdir d/sub
mkdir /d/sub/deeper
write @H@/empty empty
write @H@/one d/one
write @H@/f60 f60
write @H@/f61 d/sub/f61
write @H@/f5000 f5000
write @H@/big big
write @H@/sparse sparse
write @H@/exec exec
symlink short /d/one
symlink d/long $LONG_TARGET
mknod fifo p
mknod d/chr c 1 3
mknod blk b 8 17
mknod bigdev c 300 70000
write @H@/f5000 gone
rm gone
mkdir tmpdir
mkdir tmpdir/inner
rmdir tmpdir/inner
rmdir tmpdir
write @H@/f5000 twice
link twice d/twice2
sif twice links_count 2
sif d/twice2 links_count 1
unlink d/twice2
write @H@/big holey
punch holey 10 19
punch holey 500
sif exec uid 1000
sif exec gid 0x10001
sif exec mtime 20200102030405
sif exec atime @1234567890
ssv mnt_count 7
ssv volume_name written
write @H@/one once
unlink once
EOF
# "once" is unlinked with its inode kept: kill_file frees it below, by the
# number "write" printed last.

# Extent-only commands (unwritten extents need the extent format).
cat >"$W/extents.cmd" <<'EOF'
fallocate f5000 10 20
fallocate big 3000 3009
EOF

# check_built NAME IMG EXTENTS: what debugfs and e2fsck see after build.cmd.
check_built() {
	local name=$1 img=$2 extents=$3 f out bs
	fsck_clean "$name" "$img"
	for f in empty f60 f5000 big sparse exec; do
		rdebugfs "$img" "dump /$f $W/dump" >/dev/null
		cmp -s "$W/dump" "$H/$f" && ok || bad "$name: /$f differs from the native file"
	done
	rdebugfs "$img" "dump /d/one $W/dump" >/dev/null
	cmp -s "$W/dump" "$H/one" && ok || bad "$name: /d/one differs"
	rdebugfs "$img" "dump /d/sub/f61 $W/dump" >/dev/null
	cmp -s "$W/dump" "$H/f61" && ok || bad "$name: /d/sub/f61 differs"
	# holey = big with blocks 10-19 and 500.. punched: compare against a model.
	rdebugfs "$img" "dump /holey $W/dump" >/dev/null
	bs=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block size:/ { print $3 }')
	python3 - "$H/big" "$W/dump" "$bs" <<'EOF' && ok || bad "$name: /holey is not big with blocks 10-19 and 500- punched"
import sys
big = open(sys.argv[1], 'rb').read()
got = open(sys.argv[2], 'rb').read()
bs = int(sys.argv[3])
want = bytearray(big)
want[10 * bs:20 * bs] = bytes(10 * bs)
if len(want) > 500 * bs:
    want[500 * bs:] = bytes(len(want) - 500 * bs)
sys.exit(0 if bytes(want) == got else 1)
EOF
	out=$(rdebugfs "$img" "stat /exec")
	grep -q 'Mode:  0755' <<<"$out" && grep -q 'User:  1000   Group: 65537' <<<"$out" &&
		grep -q 'mtime: 0x5e0d5da5' <<<"$out" && grep -q 'atime: 0x499602d2' <<<"$out" &&
		ok || bad "$name: stat /exec shows the wrong mode, owner or times: $(grep -E 'Mode|User|time' <<<"$out" | tr '\n' ' ')"
	grep -q 'Mode:  0640' <<<"$(rdebugfs "$img" "stat /d/sub/f61")" && ok ||
		bad "$name: /d/sub/f61 did not keep the native mode 0640"
	grep -q 'Fast link dest: "/d/one"' <<<"$(rdebugfs "$img" "stat /short")" && ok ||
		bad "$name: /short is not a fast symlink to /d/one"
	[ "$(rdebugfs "$img" "cat /d/long")" = "$LONG_TARGET" ] && ok ||
		bad "$name: the slow symlink /d/long has the wrong target"
	out=$(rdebugfs "$img" "ls -l /")
	for f in fifo blk bigdev d empty; do
		grep -q " $f\$" <<<"$out" && ok || bad "$name: / has no entry $f"
	done
	for f in gone tmpdir once; do
		grep -q " $f\$" <<<"$out" && bad "$name: / still has $f" || ok
	done
	grep -q 'Type: FIFO' <<<"$(rdebugfs "$img" "stat /fifo")" && ok || bad "$name: /fifo is not a fifo"
	grep -q 'major/minor number: 01:03' <<<"$(rdebugfs "$img" "stat /d/chr")" && ok ||
		bad "$name: /d/chr is not 1:3"
	grep -q 'Type: block special' <<<"$(rdebugfs "$img" "stat /blk")" &&
		grep -q 'major/minor number: 08:17' <<<"$(rdebugfs "$img" "stat /blk")" && ok ||
		bad "$name: /blk is not block device 8:17"
	grep -q '300:70000' <<<"$(rdebugfs "$img" "stat /bigdev")" && ok ||
		bad "$name: /bigdev is not 300:70000 (new-style encoding)"
	grep -q 'Links: 1 ' <<<"$(rdebugfs "$img" "stat /twice")" && ok || bad "$name: /twice has the wrong link count"
	[ "$(rdebugfs "$img" "bmap /holey 15")" = 0 ] && ok || bad "$name: block 15 of /holey was not punched"
	[ "$(rdebugfs "$img" "bmap /sparse 50")" = 0 ] && [ "$(rdebugfs "$img" "bmap /sparse 5000")" = 0 ] && ok ||
		bad "$name: /sparse lost a hole"
	out=$(rdebugfs "$img" "bmap /sparse $(((2 * 1024 * 1024 + 220 * 1024) / bs))")
	[ "$out" = 0 ] && ok || bad "$name: the zero block inside /sparse's data was written (block $out)"
	out=$(dumpe2fs -h "$img" 2>/dev/null)
	grep -q 'Mount count:              7' <<<"$out" && grep -q 'Filesystem volume name:   written' <<<"$out" &&
		ok || bad "$name: ssv mnt_count / volume_name did not stick"
	if [ "$extents" = yes ]; then
		grep -q '10 -    20 .*Uninit' <<<"$(rdebugfs "$img" "ex /f5000")" && ok ||
			bad "$name: fallocate f5000 10 20 did not map unwritten blocks: $(rdebugfs "$img" "ex /f5000" | tr '\n' ' ')"
		[ "$(rdebugfs "$img" "stat /f5000" | grep -o 'Size: [0-9]*' | head -n 1)" = "Size: 5000" ] && ok ||
			bad "$name: fallocate changed the size of /f5000"
	fi
}

# kernel_check NAME IMG: the kernel reads what debugfs read.
kernel_check() {
	local name=$1 img=$2 mnt=$W/mnt f
	mkdir -p "$mnt"
	if ! loop_mount "$img" "$mnt" ro; then
		bad "$name: the kernel cannot mount the image"
		return
	fi
	for f in empty f60 f5000 big sparse exec; do
		cmp -s "$mnt/$f" "$H/$f" && ok || bad "$name: kernel: /$f differs"
	done
	cmp -s "$mnt/d/sub/f61" "$H/f61" && ok || bad "$name: kernel: /d/sub/f61 differs"
	[ "$(readlink "$mnt/d/long")" = "$LONG_TARGET" ] && [ "$(readlink "$mnt/short")" = /d/one ] && ok ||
		bad "$name: kernel: symlink targets differ"
	[ "$(stat -c '%F %t:%T' "$mnt/d/chr")" = "character special file 1:3" ] && ok ||
		bad "$name: kernel: /d/chr is $(stat -c '%F %t:%T' "$mnt/d/chr")"
	[ "$(stat -c '%a %u %g' "$mnt/exec")" = "755 1000 65537" ] && ok ||
		bad "$name: kernel: /exec is $(stat -c '%a %u %g' "$mnt/exec")"
	[ -d "$mnt/d/sub/deeper" ] && [ ! -e "$mnt/gone" ] && ok || bad "$name: kernel: wrong tree"
	loop_umount "$mnt"
}

build_image() {
	# build_image NAME: make $W/NAME.img with the tool the name says.
	local img=$W/$1.img
	rm -f "$img"
	case $1 in
	ext4-1k) mke2fs -q -F -t ext4 -b 1024 "$img" 32M ;;
	ext4-4k) mke2fs -q -F -t ext4 -b 4096 "$img" 64M ;;
	ext4-nocsum) mke2fs -q -F -t ext4 -b 1024 -O ^metadata_csum,uninit_bg "$img" 32M ;;
	ext4-noflex) mke2fs -q -F -t ext4 -b 4096 -O ^flex_bg "$img" 64M ;;
	ext3) mke2fs -q -F -t ext3 -b 1024 "$img" 32M ;;
	ext2) mke2fs -q -F -t ext2 -b 1024 -I 128 "$img" 32M ;;
	mke4fs) "$MKE4FS" -q -F -t ext4 "$img" 64M ;;
	esac >/dev/null 2>&1
}

for name in ext4-1k ext4-4k ext4-nocsum ext4-noflex ext3 ext2 mke4fs; do
	if [ "$name" = mke4fs ] && [ ! -x "$MKE4FS" ]; then
		skipcase "$name: mke4fs is not built"
		continue
	fi
	if ! build_image "$name"; then
		bad "$name: cannot make the image"
		continue
	fi
	img=$W/$name.img
	sed "s|@H@|$H|g" "$W/build.cmd" >"$W/run.cmd"
	d4 "$img" -w -f "$W/run.cmd"
	if [ "$rc" -ne 0 ]; then
		bad "$name: debug4fs -w -f build.cmd exited $rc: $(firstlines "$W/err")"
		continue
	fi
	ok
	once=$(grep -o 'Allocated inode: [0-9]*' "$W/out" | tail -n 1 | cut -d' ' -f3)
	d4 "$img" -w -R "kill_file <$once>"
	[ "$rc" -eq 0 ] && ok || bad "$name: kill_file <$once> exited $rc: $(firstlines "$W/err")"
	extents=no
	case $name in ext4* | mke4fs) extents=yes ;; esac
	if [ $extents = yes ]; then
		d4 "$img" -w -f "$W/extents.cmd"
		[ "$rc" -eq 0 ] && ok || bad "$name: fallocate exited $rc: $(firstlines "$W/err")"
	fi
	check_built "$name" "$img" "$extents"
	if have_root_loop; then
		kernel_check "$name" "$img"
		fsck_clean "$name after the kernel read it" "$img"
	fi
done
have_root_loop || skipcase "kernel reads: $(root_loop_reason)"

# -j: the new inode of write and mknod as JSON.
img=$W/json.img
mke2fs -q -F -t ext4 -b 1024 "$img" 16M >/dev/null 2>&1
d4 "$img" -j -w -R "write $H/one jone"
python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); sys.exit(0 if d["inode"] > 11 else 1)' "$W/out" &&
	ok || bad "json: write -j printed '$(head -c 80 "$W/out")'"

# ------------------------------------------------------------ 2. damage on purpose

SRC=$W/src
mkdir -p "$SRC/d"
cp "$H/f5000" "$H/one" "$SRC/"
cp "$H/f60" "$SRC/d/"
DMG=$W/damage.img
mke2fs -q -F -t ext4 -b 1024 -d "$SRC" "$DMG" 16M >/dev/null 2>&1 || fail "mke2fs -d failed"
fsck_clean damage-base "$DMG"
FBLK=$(rdebugfs "$DMG" "bmap /f5000 0")
FREEBLK=$(rdebugfs "$DMG" "ffb 1 5000" | awk '{ print $NF }')
FREEINO=$(rdebugfs "$DMG" "ffi" | awk '{ print $NF }')

# damage NAME PATTERN [NOT-PATTERN] -- commands...: e2fsck must fail with PATTERN.
damage() {
	local name=$1 pat=$2 notpat=$3 c
	shift 3
	cp "$DMG" "$W/d.img"
	for c in "$@"; do
		d4 "$W/d.img" -w -R "$c"
		if [ "$rc" -ne 0 ]; then
			bad "damage $name: '$c' exited $rc: $(firstlines "$W/err")"
			return
		fi
	done
	if e2fsck -fn "$W/d.img" >"$W/fsck" 2>&1; then
		bad "damage $name: e2fsck -fn finds nothing"
	elif ! grep -Eq "$pat" "$W/fsck"; then
		bad "damage $name: e2fsck does not report /$pat/: $(firstlines "$W/fsck")"
	elif [ -n "$notpat" ] && grep -Eq "$notpat" "$W/fsck"; then
		bad "damage $name: e2fsck also reports /$notpat/: $(firstlines "$W/fsck")"
	else
		ok
	fi
}

damage clri 'deleted/unused inode' '' 'clri f5000'
damage kill_file 'deleted/unused inode' '' 'kill_file f5000'
damage freeb 'Block bitmap differences: +\+\(?'"$FBLK" '' "freeb $FBLK"
damage setb 'Block bitmap differences: +-\(?'"$FREEBLK" '' "setb $FREEBLK"
damage setb-range 'Block bitmap differences: +-\('"$FREEBLK--$((FREEBLK + 2))" '' "setb $FREEBLK 3"
damage freei 'Inode bitmap differences: +\+' '' 'freei f5000'
damage seti 'Inode bitmap differences: +-'"$FREEINO" '' "seti <$FREEINO>"
damage links0 'deleted/unused inode' '' 'sif f5000 links_count 0'
damage size0 'i_size is 0, should be 5120' '' 'sif f5000 size 0'
damage unlink 'Unattached inode' '' 'unlink f5000'
damage link 'ref count is 1, should be 2' '' 'link f5000 again'
damage inode-csum 'checksum does not match inode' '' 'sif f5000 checksum 0x1234'
damage gd-count 'Free blocks count wrong for group #0' '' 'set_bg 0 free_blocks_count 0'
damage gd-csum 'Group descriptor 1 checksum is 0x1234' '' 'set_bg 1 checksum 0x1234'
damage gd-calc 'Free blocks count wrong for group #0' 'checksum' 'set_bg 0 free_blocks_count 0' \
	'set_bg 0 checksum calc'
damage dtime 'has dtime set' '' 'sif f5000 dtime 12345'
damage extent-bad 'invalid physical block 99999999' '' 'sif f5000 block[5] 99999999'

# ------------------------------------------------------------ 3. same as debugfs -w

CMP=$W/cmp.img
mke2fs -q -F -t ext4 -b 1024 -d "$SRC" "$CMP" 16M >/dev/null 2>&1 || fail "mke2fs -d failed"
cat >"$W/same.cmd" <<'EOF'
ssv mnt_count 9
ssv max_mnt_count -5
ssv volume_name hello
ssv last_mounted /mnt/test
ssv hash_seed 01234567-89ab-cdef-0123-456789abcdef
ssv def_hash_version tea
ssv errors 2
ssv lastcheck 20200101
ssv mkfs_time @1000000000
ssv first_error_time 1000
ssv first_error_func myfunc
ssv r_blocks_count 100
ssv s_def_resuid 77
ssv backup_bgs[1] 3
ssv mmp_interval 5
ssv state 0x10000
ssv mnt_count -5
ssv volume_name 12345678901234567
ssv uuid foo
ssv def_hash_version bogus
ssv nosuchfield 1
ssv jnl_blocks[17] 1
ssv
sif <11> mode 040755
sif <11> uid 0x12345678
sif <11> gid 7
sif <11> atime 0x80000000
sif <11> mtime 20400101000000
sif <11> ctime -5
sif <11> crtime @1234567890
sif <11> dtime 20200101
sif <11> generation 42
sif <11> version 0x1122334455667788
sif <11> projid 3
sif <11> atime_extra 0x10
sif <11> i_faddr 9
sif <11> size 0x100003000
sif <11> blocks_hi 1
sif /one block[2] 1234
sif /one block[IND] 99
sif /one frag 3
sif /one fsize 4
sif <11> links_count 70000
sif <11> mode xyz
sif <11> nosuch 1
sif <11> block[15] 1
sif <11> atime bogus
sif <11> atime_lo 0x100000000
sif /nonexistent mode 1
sif
sif <12> checksum 0x1234
sif <13> checksum calc
set_bg 1 itable_unused 5
set_bg 0 checksum calc
set_bg 1 free_blocks_count 0x10000
set_bg 1 bg_flags 0
set_bg 1 checksum 0x4321
set_bg 1 reserved 1
set_bg 99 flags 1
set_bg x flags 1
set_bg 0 nosuch 1
set_bg 0 flags 0x10000
set_bg 0
EOF
cp "$CMP" "$W/ref.img"
cp "$CMP" "$W/ours.img"
"$REAL_DEBUGFS" -w -f "$W/same.cmd" "$W/ref.img" >"$W/ref.out" 2>"$W/ref.err"
"$DEBUG4FS" -w -f "$W/same.cmd" "$W/ours.img" >"$W/ours.out" 2>"$W/ours.err"
rc=$?
[ "$rc" -eq 1 ] && ok || bad "same: debug4fs -f with failing commands exited $rc, not 1"
diff -u "$W/ref.out" "$W/ours.out" >"$W/diff" && ok || bad "same: stdout differs: $(head -c 600 "$W/diff")"
sed -i '/^debugfs [0-9]/d' "$W/ref.err"
sed -i -e '/^debug4fs [0-9]/d' -e 's/ (detail: .*)$//' "$W/ours.err"
diff -u "$W/ref.err" "$W/ours.err" >"$W/diff" && ok || bad "same: stderr differs: $(head -c 600 "$W/diff")"
mask() { sed -E -e '/^(Last write time|Checksum):/d' -e 's/^(Lifetime writes:).*/\1/' -e "s|$W/[a-z]*.img|IMG|"; }
dumpe2fs "$W/ref.img" 2>&1 | mask >"$W/ref.dump"
dumpe2fs "$W/ours.img" 2>&1 | mask >"$W/ours.dump"
diff -u "$W/ref.dump" "$W/ours.dump" >"$W/diff" && ok || bad "same: dumpe2fs differs: $(head -c 600 "$W/diff")"
dumpe2fs -o superblock=8193 -o blocksize=1024 -h "$W/ours.img" 2>/dev/null | grep -q 'Mount count:              0' &&
	ok || bad "same: the backup superblock was rewritten (debugfs leaves it alone)"
for i in '<11>' '<12>' '<13>' '/one'; do
	diff <("$REAL_DEBUGFS" -n -R "stat $i" "$W/ref.img" 2>&1) <("$REAL_DEBUGFS" -n -R "stat $i" "$W/ours.img" 2>&1) \
		>"$W/diff" && ok || bad "same: stat $i differs: $(head -c 600 "$W/diff")"
done

# ------------------------------------------------------------ 4. refusals

REF=$W/refuse.img
mke2fs -q -F -t ext4 -b 1024 -d "$SRC" "$REF" 16M >/dev/null 2>&1 || fail "mke2fs -d failed"
before=$(sum "$REF")

# refuse NAME PATTERN ARGS...: exit 1 (no crash), PATTERN on stderr, image unchanged.
refuse() {
	local name=$1 pat=$2
	shift 2
	d4 "$REF" "$@"
	if [ "$rc" -ne 1 ]; then
		bad "refuse $name: exit $rc (want 1): $(firstlines "$W/err")"
	elif ! grep -Eq -- "$pat" "$W/err"; then
		bad "refuse $name: stderr does not match /$pat/: $(firstlines "$W/err")"
	elif [ "$(sum "$REF")" != "$before" ]; then
		bad "refuse $name: the image CHANGED"
		cp "$W/refuse.orig" "$REF" 2>/dev/null
	else
		ok
	fi
}
cp "$REF" "$W/refuse.orig"

while IFS= read -r c; do
	refuse "ro: $c" "^${c%% *}: Filesystem opened read/only\$" -R "$c"
done <<EOF
sif <2> mode 0
ssv mnt_count 1
set_bg 0 flags 0
setb 100
freeb 100
seti <20>
freei <2>
clri <2>
copy_inode <2> <20>
kill_file <2>
write $H/one x
mkdir x
rm one
rmdir d
link one two
unlink one
symlink s t
mknod p p
punch f5000 0
fallocate f5000 0 1
EOF

while IFS='|' read -r pat c; do
	c=${c//@H@/$H}
	refuse "rw: $c" "$pat" -w -R "$c"
done <<'EOF'
invalid field specifier: nosuch|sif <2> nosuch 1
invalid field specifier: block\[12\]|sif <2> block[12] 1
Couldn't parse 'abc' for field mode|sif <2> mode abc
exceeds field links_count maximum 65535|sif <2> links_count 65536
exceeds field uid maximum 4294967295|sif <2> uid 0x100000000
Couldn't parse '2020-01-01' for field atime|sif <2> atime 2020-01-01
Usage: set_inode|sif <2> mode
File not found|sif /nonexistent mode 1
invalid field specifier: magic|ssv magic 1
exceeds field state maximum 65535|ssv state 65536
Error maximum size for volume_name is 16|ssv volume_name 0123456789abcdef
Invalid UUID format: xyz|ssv uuid xyz
Invalid hash algorithm: sha1|ssv def_hash_version sha1
geometry|ssv blocks_count 5
geometry|ssv blocks_count_lo 5
geometry|ssv inodes_count 5
geometry|ssv log_block_size 2
geometry|ssv feature_incompat 0
geometry|ssv inodes_per_group 1
block group number too big: 2|set_bg 2 flags 0
invalid block group number: x|set_bg x flags 0
invalid field specifier: nosuch|set_bg 0 nosuch 0
exceeds field flags maximum 65535|set_bg 0 flags 0x10000
Bad block number - x|setb x
Invalid block number 0|freeb 0
Illegal block number|setb 16384
Illegal block number|freeb 16380 10
Bad count - y|setb 5 y
Bad length - z|seti <20> z
Usage|clri
Usage|copy_inode <2>
already exists|write @H@/one one
already exists|mkdir d
already exists|symlink one x
No such file or directory|write /nonexistent/file x
not a regular file|write /dev/null x
File not found|mkdir nodir/x
file is a directory|rm d
file is not a directory|rmdir one
directory not empty|rmdir d
File not found by ext2_lookup while trying to resolve filename|rm nonexistent
Usage: mknod|mknod x z
Usage: mknod|mknod x c 1
Usage: mknod|mknod x c 4096 1
Bad logical block - q|punch f5000 q
Invalid argument while truncating inode|punch f5000 5 3
Bad logical block - q|fallocate f5000 0 q
already in the requested allocation state|kill_file <30>
Command not found|frobnicate
EOF

d4 /nonexistent/image -w -R 'ssv mnt_count 1'
[ "$rc" -eq 1 ] && grep -q 'ssv: Filesystem not open' "$W/err" && ok ||
	bad "refuse: ssv on a missing image: exit $rc: $(firstlines "$W/err")"
"$DEBUG4FS" -w -R 'sif <2> mode 0' >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'sif: Filesystem not open' "$W/err" && ok ||
	bad "refuse: sif without a file system: exit $rc: $(firstlines "$W/err")"

if have_root_loop; then
	MNT_IMG=$W/mounted.img
	mke2fs -q -F -t ext4 -b 1024 "$MNT_IMG" 16M >/dev/null 2>&1
	mkdir -p "$W/mnt2"
	if loop_mount "$MNT_IMG" "$W/mnt2" noinit_itable; then
		dev=$(findmnt -n -o SOURCE --mountpoint "$W/mnt2")
		for target in "$MNT_IMG" "$dev"; do
			d4 "$target" -w -R 'ssv mnt_count 42'
			if [ "$rc" -ne 1 ] || ! grep -q 'is mounted.*will not open it read-write' "$W/err"; then
				bad "mounted: -w on $target: exit $rc: $(firstlines "$W/err")"
			else
				ok
			fi
			d4 "$target" -R 'stats'
			[ "$rc" -eq 0 ] && ok || bad "mounted: read-only stats on $target exited $rc"
		done
		loop_umount "$W/mnt2"
		dumpe2fs -h "$MNT_IMG" 2>/dev/null | grep -q 'Mount count:              42' &&
			bad "mounted: the image was written" || ok
		fsck_clean mounted "$MNT_IMG"
	else
		bad "mounted: cannot loop-mount the image"
	fi
else
	skipcase "mounted: $(root_loop_reason)"
fi

printf '%d passed, %d failed, %d skipped\n' "$PASS" "$FAIL" "$SKIPPED"
[ "$FAIL" -eq 0 ]
