#!/bin/bash
# t3965-e4fsck-root.sh - e4fsck and a damaged root directory, judged by
# e2fsck 1.47 line by line.
#
# Images: mke2fs ext4 with 1 KiB and 4 KiB blocks, each with and without
# metadata_csum, and ext2 (1 KiB), each holding /f1, /d1/f2, /d1/sub/f3.
# Damage (debugfs -w):
#   mode    the root made a regular file (sif <2> mode 0100644)
#   clri    the root's inode zeroed (clri <2>)
#   freei   the root's bit cleared in the inode bitmap (freei <2>)
#   links0  the root's links_count 0 (e2fsck: then it is not in use)
#   dtime   the root's dtime set (12345678)
#   lowdtime  the root's dtime 5, below the inode count (an orphan-list link)
#   lost-bit-clear   links0 with the root's inode bit cleared too
#   lost-block-free  links0 with the root's block freed in the bitmap
#                    (e2fsck sets the new root's bits without moving the
#                    counts; pass 5 then has nothing to say, nor has e4fsck's)
# For each image and damage:
#   - `e4fsck -fn` exits as `e2fsck -fn` does (12 where the root is lost:
#     e2fsck aborts in pass 3), prints the same problem lines, changes no
#     byte, and prints the same with pass 1 in 1 and in 4 threads;
#   - `e4fsck -fp` exits and prints as `e2fsck -fp`;
#   - `e4fsck -fy` exits as `e2fsck -fy` (1) with the same problem lines;
#   - a second `e4fsck -fy` exits 0 and `e2fsck -fn` exits 0 on the result;
#   - f1, f2 and f3 (read by inode number) hold their bytes, and where the
#     root was lost they are reached through /lost+found (#F1, #D1/f2,
#     #D1/sub/f3) under a new root directory.
# Not covered: a root whose mode is neither a directory nor a regular file,
# with the answer no: e2fsck then checks it as the file its mode says
# ("looks like it is really a directory", its i_blocks, an illegal device
# in pass 2), where e4fsck asks only PR_1_ROOT_NO_DIR about it and then
# stops in pass 3 as e2fsck does.  With -y both clear it alike.
# The whole output is compared, pass titles and the summary line included:
# e2fsck -y also runs its pass 3A on these images (it packs the old
# /lost+found, which it no longer finds by name, into one block), and so
# does e4fsck, freeing the same blocks.
#
# Environment: T3965_CASES=REGEX runs only the matching "image/damage" cases.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck mke2fs debugfs cmp md5sum
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
e2fsck -V 2>&1 | grep -q '^e2fsck 1\.47' || skip "e2fsck is not 1.47: its lines are the reference"
make_tmpdir
export LC_ALL=C

failed=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

# The output without the banner and blank lines; the image's name and the
# program's own name made neutral.
problems() {
	grep -v -e '^e[24]fsck [0-9]' -e '^$' "$1" |
		sed -e "s|$2|IMG|g" -e 's/^e4fsck: /e2fsck: /'
}

same_lines() {
	local what=$1 ours=$2 theirs=$3 img=$4 ref=$5
	if ! diff <(problems "$theirs" "$ref") <(problems "$ours" "$img") >"$T/diff.out"; then
		bad "$what: e4fsck prints other lines than e2fsck (< e2fsck, > e4fsck)"
		sed 's/^/    /' "$T/diff.out" | head -n 20
		return 1
	fi
}

ino_of() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }

head -c 3000 /dev/urandom >"$T/f1"
head -c 5000 /dev/urandom >"$T/f2"
head -c 20000 /dev/urandom >"$T/f3"

# image NAME MKE2FS-OPTIONS
image() {
	local img="$T/$1.img"
	shift
	mke2fs -q -F "$@" "$img" 8M >/dev/null 2>&1
	debugfs -w "$img" -f - >/dev/null 2>&1 <<EOF
mkdir d1
mkdir d1/sub
write $T/f1 f1
write $T/f2 d1/f2
write $T/f3 d1/sub/f3
EOF
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "the $(basename "$img") image is not clean for e2fsck"
}

image ext4-1k-csum -t ext4 -b 1024 -O metadata_csum
image ext4-1k -t ext4 -b 1024 -O ^metadata_csum
image ext4-4k-csum -t ext4 -b 4096 -O metadata_csum
image ext4-4k -t ext4 -b 4096 -O ^metadata_csum
image ext2-1k -t ext2 -b 1024

# The data files, by inode number and, when the root was lost, by their
# way in from /lost+found.
check_data() {
	local what=$1 img=$2 lost=$3 f1 d1 f2 f3
	f1=$(ino_of "$T/base.img" f1)
	d1=$(ino_of "$T/base.img" d1)
	f2=$(ino_of "$T/base.img" d1/f2)
	f3=$(ino_of "$T/base.img" d1/sub/f3)
	for pair in "<$f1>:f1" "<$f2>:f2" "<$f3>:f3"; do
		debugfs -R "cat ${pair%%:*}" "$img" >"$T/out.data" 2>/dev/null
		cmp -s "$T/out.data" "$T/${pair#*:}" || { bad "$what: ${pair#*:} (inode ${pair%%:*}) changed"; return 1; }
	done
	[ "$lost" = 1 ] || return 0
	for pair in "/lost+found/#$f1:f1" "/lost+found/#$d1/f2:f2" "/lost+found/#$d1/sub/f3:f3"; do
		debugfs -R "cat ${pair%%:*}" "$img" >"$T/out.data" 2>/dev/null
		cmp -s "$T/out.data" "$T/${pair#*:}" || { bad "$what: ${pair%%:*} does not hold ${pair#*:}"; return 1; }
	done
	debugfs -R "stat <2>" "$img" 2>/dev/null | grep -q 'Type: directory' || { bad "$what: the new root is no directory"; return 1; }
	debugfs -R "stat <2>" "$img" 2>/dev/null | grep -q 'Links: 3 ' || { bad "$what: the new root's links are not 3"; return 1; }
}

# run_case IMAGE DAMAGE-NAME LOST DEBUGFS-COMMANDS (';' between them, @ROOTBLK@ the root's block)
run_case() {
	local what="$1/$2" lost=$3 cmd=$4 img="$T/case.img" ref="$T/ref.img" rc want before j nrc rootblk
	if [ -n "${T3965_CASES:-}" ] && ! [[ $what =~ $T3965_CASES ]]; then
		return 0
	fi
	ncases=$((ncases + 1))
	cp "$T/$1.img" "$T/base.img"
	cp "$T/base.img" "$img"
	rootblk=$(debugfs -R "bmap <2> 0" "$img" 2>/dev/null)
	printf '%s\n' "${cmd//@ROOTBLK@/$rootblk}" | tr ';' '\n' | debugfs -w -f - "$img" >/dev/null 2>&1
	cp "$img" "$ref"
	before=$(md5sum <"$img")

	rc=0; "$E4FSCK" -fn "$img" >"$T/n.out" 2>&1 || rc=$?
	want=0; e2fsck -fn "$ref" >"$T/e2n.out" 2>&1 || want=$?
	[ "$rc" = "$want" ] || { bad "$what: e4fsck -fn exit $rc, e2fsck's $want"; sed 's/^/    /' "$T/n.out" | head -n 20; return; }
	nrc=$rc
	[ "$(md5sum <"$img")" = "$before" ] || { bad "$what: e4fsck -fn changed the image"; return; }
	grep -q -e '? no$' -e 'IGNORED' "$T/n.out" || { bad "$what: e4fsck -fn found nothing"; return; }
	same_lines "$what -fn" "$T/n.out" "$T/e2n.out" "$img" "$ref" || return 0
	for j in 1 4; do
		"$E4FSCK" -fn -m "$j" "$img" >"$T/n$j.out" 2>&1 || true
		cmp -s "$T/n.out" "$T/n$j.out" || { bad "$what: e4fsck -fn -m $j prints otherwise"; return; }
	done

	cp "$ref" "$T/p.img"
	cp "$ref" "$T/p-ref.img"
	rc=0; "$E4FSCK" -fp "$T/p.img" >"$T/p.out" 2>&1 || rc=$?
	want=0; e2fsck -fp "$T/p-ref.img" >"$T/e2p.out" 2>&1 || want=$?
	[ "$rc" = "$want" ] || { bad "$what: e4fsck -fp exit $rc, e2fsck's $want"; sed 's/^/    /' "$T/p.out" | head -n 20; return; }
	same_lines "$what -fp" "$T/p.out" "$T/e2p.out" "$T/p.img" "$T/p-ref.img" || return 0

	rc=0; "$E4FSCK" -fy "$img" >"$T/y.out" 2>&1 || rc=$?
	want=0; e2fsck -fy "$ref" >"$T/e2y.out" 2>&1 || want=$?
	[ "$rc" = "$want" ] || { bad "$what: e4fsck -fy exit $rc, e2fsck's $want"; sed 's/^/    /' "$T/y.out" | head -n 30; return; }
	same_lines "$what -fy" "$T/y.out" "$T/e2y.out" "$img" "$ref" || return 0

	rc=0; "$E4FSCK" -fy "$img" >"$T/y2.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { bad "$what: second e4fsck -fy exit $rc"; sed 's/^/    /' "$T/y2.out" | head -n 20; return; }
	rc=0; e2fsck -fn "$img" >"$T/after.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { bad "$what: e2fsck -fn exit $rc after the repair"; sed 's/^/    /' "$T/after.out" | head -n 20; return; }
	check_data "$what" "$img" "$lost" || return 0
	pass "$what (exits: -n $nrc, -y $want)"
}

ncases=0
for im in ext4-1k-csum ext4-1k ext4-4k-csum ext4-4k ext2-1k; do
	run_case "$im" mode 1 'sif <2> mode 0100644'
	run_case "$im" clri 1 'clri <2>'
	run_case "$im" freei 0 'freei <2>'
	run_case "$im" links0 1 'sif <2> links_count 0'
	run_case "$im" dtime 0 'sif <2> dtime 12345678'
	run_case "$im" lowdtime 0 'sif <2> dtime 5'
	run_case "$im" lost-bit-clear 1 'freei <2>;sif <2> links_count 0'
	run_case "$im" lost-block-free 1 'freeb @ROOTBLK@;sif <2> links_count 0'
done

echo "$ncases cases"
[ "$ncases" -gt 0 ] || fail "no case ran"
[ "$failed" = 0 ] || fail "some cases failed"
