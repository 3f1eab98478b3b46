#!/bin/bash
# t3950-e4fsck-orphan-file.sh - e4fsck and the orphan file (orphan_file
# feature), judged by e2fsck 1.47.
#
# Kernel-made images (root and a loop mount): files held open and unlinked
# while the image is copied leave entries in the orphan file and
# orphan_present set.  Copies with the journal still to replay and copies
# replayed by `debugfs journal_run` are checked with -n, -p, -y, -fn, -fp
# and -fy: the orphans finished before pass 1, the entries cleared after
# pass 5, as e2fsck does.
#
# Damage made with debugfs and byte edits, on mke2fs images and on the
# replayed kernel image: orphan_present on an empty file or without the
# feature, a block's magic, checksum or a stale slot, i_size not whole
# blocks, a hole in a block-mapped orphan file, an orphan file without a
# journal; the orphan file's inode not a regular file, or holding data
# with the feature off, or without links (pass 1), also with a size or
# pointers that need a new file, or s_orphan_file_inum 0.
#
# Each case requires, on copies of the same image, that e4fsck prints the
# same lines (apart from the version banner) and exits as e2fsck in each
# mode; that -n changes no byte; that after -fy `e2fsck -fn` says the same
# of e4fsck's result as of e2fsck's, and a second -fy exits the same; and
# that /big's bytes are intact.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck
need_cmd mke2fs
need_cmd debugfs
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
mke2fs -q -F -t ext4 -O orphan_file "${TMPDIR:-/tmp}/t3950-probe.$$" 8M >/dev/null 2>&1 ||
	{ rm -f "${TMPDIR:-/tmp}/t3950-probe.$$"; skip "mke2fs cannot make orphan_file file systems"; }
rm -f "${TMPDIR:-/tmp}/t3950-probe.$$"
make_tmpdir

failed=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

# Output without the version banner, with the image's name made neutral.
neutral() {
	grep -v -e '^e2fsck [0-9]' -e '^e4fsck [0-9]' "$1" | sed -e "s|$2|IMG|g" -e 's/\be4fsck\b/e2fsck/g'
}

src="$T/src"
mkdir -p "$src"
head -c 300000 /dev/urandom >"$src/big"

# judge NAME IMG MODES...: e4fsck against e2fsck on copies of IMG in each mode.
judge() {
	local name=$1 img=$2 m rc want ok=1
	shift 2
	for m in "$@"; do
		cp "$img" "$T/ours.img"; cp "$img" "$T/theirs.img"
		local before; before=$(md5sum <"$img")
		rc=0; "$E4FSCK" "$m" "$T/ours.img" >"$T/ours.out" 2>&1 || rc=$?
		want=0; e2fsck "$m" "$T/theirs.img" >"$T/theirs.out" 2>&1 || want=$?
		if [ "$rc" != "$want" ] ||
		   ! diff <(neutral "$T/ours.out" "$T/ours.img") <(neutral "$T/theirs.out" "$T/theirs.img") >"$T/diff"; then
			bad "$name $m: exit $rc (e2fsck $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 20
			ok=0; continue
		fi
		case $m in
		*n*)
			if [ "$(md5sum <"$T/ours.img")" != "$before" ]; then
				bad "$name $m: the image changed"; ok=0
			fi
			continue ;;
		esac
		# What e2fsck says of the result, and what a second repair does, must not tell them apart.
		rc=0; e2fsck -fn "$T/ours.img" >"$T/ours.chk" 2>&1 || rc=$?
		want=0; e2fsck -fn "$T/theirs.img" >"$T/theirs.chk" 2>&1 || want=$?
		if [ "$rc" != "$want" ] ||
		   ! diff <(neutral "$T/ours.chk" "$T/ours.img") <(neutral "$T/theirs.chk" "$T/theirs.img") >"$T/diff"; then
			bad "$name $m: e2fsck -fn on the result: exit $rc (on e2fsck's $want) or output differs:"
			sed 's/^/    /' "$T/diff" | head -n 20; ok=0; continue
		fi
		rc=0; "$E4FSCK" -fy "$T/ours.img" >"$T/ours.y2" 2>&1 || rc=$?
		want=0; e2fsck -fy "$T/theirs.img" >"$T/theirs.y2" 2>&1 || want=$?
		if [ "$rc" != "$want" ]; then
			bad "$name $m: a second -fy exits $rc, e2fsck's $want"; sed 's/^/    /' "$T/ours.y2" | head; ok=0
			continue
		fi
		if debugfs -R "stat /big" "$T/ours.img" 2>/dev/null | grep -q '^Inode:'; then
			debugfs -R "cat /big" "$T/ours.img" 2>/dev/null >"$T/big.out"
			if ! cmp -s "$T/big.out" "$src/big"; then
				bad "$name $m: /big changed"; ok=0
			fi
		fi
	done
	[ $ok = 0 ] || pass "$name ($*)"
}

# fresh_n NAME IMG PATTERN: e4fsck -fn exits 4, says PATTERN and changes no byte.
fresh_n() {
	local rc=0 before
	cp "$2" "$T/ours.img"
	before=$(md5sum <"$T/ours.img")
	"$E4FSCK" -fn "$T/ours.img" >"$T/ours.out" 2>&1 || rc=$?
	if [ "$rc" != 4 ] || ! grep -q -e "$3" "$T/ours.out" || [ "$(md5sum <"$T/ours.img")" != "$before" ]; then
		bad "$1 -fn: exit $rc, or no /$3/, or the image changed"; sed 's/^/    /' "$T/ours.out" | head -n 20
	else
		pass "$1 (-fn)"
	fi
}

# repaired NAME IMG PATTERN: e4fsck -fy exits 1 saying PATTERN; then a second
# -fy exits 0 and e2fsck -fn finds the result clean.
repaired() {
	local rc=0
	cp "$2" "$T/ours.img"
	"$E4FSCK" -fy "$T/ours.img" >"$T/ours.out" 2>&1 || rc=$?
	if [ "$rc" != 1 ] || ! grep -q -e "$3" "$T/ours.out"; then
		bad "$1 -fy: exit $rc, or no /$3/"; sed 's/^/    /' "$T/ours.out" | head -n 20; return
	fi
	rc=0; "$E4FSCK" -fy "$T/ours.img" >"$T/ours.y2" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { bad "$1: a second -fy exits $rc"; sed 's/^/    /' "$T/ours.y2" | head; return; }
	rc=0; e2fsck -fn "$T/ours.img" >"$T/ours.chk" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { bad "$1: e2fsck -fn exits $rc on the result"; sed 's/^/    /' "$T/ours.chk" | head; return; }
	pass "$1 (-fy, then clean)"
}

# flip IMG LBLK OFF: invert the byte at OFF (negative: from the block's end) of
# the orphan file's logical block LBLK.
flip() {
	local img=$1 lblk=$2 off=$3 pblk bs at v
	pblk=$(debugfs -R "bmap <$(orphan_ino "$img")> $lblk" "$img" 2>/dev/null)
	bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	if [ "$off" -lt 0 ]; then at=$((pblk * bs + bs + off)); else at=$((pblk * bs + off)); fi
	v=$(dd if="$img" bs=1 skip="$at" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	# shellcheck disable=SC2059 # the format is the octal escape of the new byte
	printf "\\$(printf %03o $((v ^ 255)))" | dd of="$img" bs=1 seek="$at" conv=notrunc 2>/dev/null
}

orphan_ino() {
	dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Orphan file inode: *//p'
}

# The orphan file's logical block holding entries (the kernel picks it per CPU).
used_block() {
	local img=$1 ino bs n l pblk
	ino=$(orphan_ino "$img")
	bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	n=$(( $(debugfs -R "stat <$ino>" "$img" 2>/dev/null | sed -n 's/.*Size: *\([0-9]*\).*/\1/p' | head -n 1) / bs ))
	for ((l = 0; l < n; l++)); do
		pblk=$(debugfs -R "bmap <$ino> $l" "$img" 2>/dev/null)
		if dd if="$img" bs="$bs" skip="$pblk" count=1 2>/dev/null | head -c $((bs - 8)) | od -An -tx1 |
			grep -q '[1-9a-f]'; then
			echo "$l"; return
		fi
	done
	echo 0
}

# ---------------------------------------------------------------- mke2fs images
mkimg() {   # mkimg IMG OPTS
	rm -f "$1"
	# shellcheck disable=SC2086
	mke2fs -q -F $2 "$1" 16M >/dev/null 2>&1
	debugfs -w -R "write $src/big big" "$1" >/dev/null 2>&1
}

for opts in "-t ext4 -O orphan_file" "-t ext4 -O orphan_file,^metadata_csum -b 4096" "-t ext3 -O orphan_file"; do
	tag="[$opts]"
	img="$T/d.img"
	mkimg "$img" "$opts"
	judge "clean $tag" "$img" -fn -fy
	mkimg "$img" "$opts"; debugfs -w -R "feature orphan_present" "$img" >/dev/null 2>&1
	judge "orphan_present on an empty orphan file $tag" "$img" -n -p -y -fn -fp -fy
	mkimg "$img" "$opts"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"feature -orphan_file orphan_present
clri <12>"
	judge "orphan_present without orphan_file $tag" "$img" -fn -fp -fy
	mkimg "$img" "$opts"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"feature -orphan_file orphan_present
ssv orphan_file_inum 0"
	judge "orphan_present without orphan_file, no orphan inode $tag" "$img" -fn -fp -fy
	mkimg "$img" "$opts"; flip "$img" 3 -8
	judge "orphan block with a wrong magic $tag" "$img" -fn -fp -fy
	mkimg "$img" "$opts"; flip "$img" 3 -1
	judge "orphan block with a wrong checksum (ignored without metadata_csum) $tag" "$img" -fn -fy
	mkimg "$img" "$opts"; flip "$img" 0 0
	judge "orphan block with a stale slot $tag" "$img" -fn -fp -fy
	mkimg "$img" "$opts"; debugfs -w -R "sif <12> size 32000" "$img" >/dev/null 2>&1
	judge "orphan file size not whole blocks $tag" "$img" -fn -fp -fy
	mkimg "$img" "$opts"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"feature -has_journal
clri <8>
ssv journal_inum 0"
	judge "orphan file without a journal $tag" "$img" -fn -fp -fy
	# A journal removed in the journal step is made anew after pass 5, and
	# only then is the orphan file judged (it has a journal again).  Not
	# with 4 KiB blocks: on this small image e2fsck's new journal comes out
	# in two pieces where e4fsck's is one (a placement difference of the
	# journal's re-creation, left for now).
	if [ "${opts#*-b 4096}" = "$opts" ]; then
		mkimg "$img" "$opts"; debugfs -w -R "clri <8>" "$img" >/dev/null 2>&1
		judge "journal inode cleared, orphan file kept $tag" "$img" -fn -fp -fy
	fi
	# The orphan file's inode itself (pass 1).  With -n, e2fsck goes on to
	# check the kept directory in pass 2 and stops at its first salvage
	# question; e4fsck does not check it as a directory, so -n is judged
	# apart.
	mkimg "$img" "$opts"; debugfs -w -R "sif <12> mode 040755" "$img" >/dev/null 2>&1
	judge "orphan file inode not a regular file $tag" "$img" -fp -fy
	fresh_n "orphan file inode not a regular file $tag" "$img" '^Orphan file inode 12 is not regular file\.  Clear? no$'
	# Without the feature, e2fsck zeroes the inode but keeps it marked in
	# use, so that its next run frees it in pass 5; e4fsck frees it in the
	# same run (pass 5 then says so), so -y is judged apart.
	mkimg "$img" "$opts"; debugfs -w -R "feature -orphan_file" "$img" >/dev/null 2>&1
	judge "orphan file inode with data, feature off $tag" "$img" -fn
	repaired "orphan file inode with data, feature off $tag" "$img" \
		'^Orphan file inode 12 is not in use, but contains data\.  Clear? yes$'
done
img="$T/d.img"
mkimg "$img" "-t ext3 -O orphan_file"; debugfs -w -R "punch <12> 5 5" "$img" >/dev/null 2>&1
judge "hole in a block-mapped orphan file" "$img" -fn -fp -fy
# Made a regular file by a yes, the orphan file's inode is walked as one: its illegal pointer is found.
mkimg "$img" "-t ext3 -O orphan_file"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"sif <12> mode 020644
sif <12> block[2] 99999999"
judge "orphan file inode a device, with an illegal pointer" "$img" -fp -fy
mkimg "$img" "-t ext4 -O orphan_file"; debugfs -w -R "punch <12> 5 5" "$img" >/dev/null 2>&1
judge "hole in an extent-mapped orphan file" "$img" -fn -fp -fy
# Without links the orphan file's inode is an unused one to e2fsck, like any
# other past the reserved ones: not checked in pass 1 (its mode, its
# blocks), and pass 5 frees what it held.
mkimg "$img" "-t ext4 -O orphan_file"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"sif <12> links_count 0
sif <12> mode 0
sif <12> dtime 1700000000"
judge "orphan file inode cleared (no links, mode 0, a dtime)" "$img" -fn -fp -fy
# The same inode with i_size not whole blocks: after pass 5 the orphan file
# is made anew.  The old record owns nothing by then (pass 5 gave its
# blocks back), so e4fsck frees none of them again and takes the inode back
# into use; e2fsck 1.47.0 frees them a second time and leaves the inode
# unmarked, so that its own next run finds the counts and "+12" wrong.
# -fn is judged against e2fsck, the repair by its result.
mkimg "$img" "-t ext4 -O orphan_file"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"sif <12> links_count 0
sif <12> mode 0
sif <12> dtime 1700000000
sif <12> size 32000"
judge "orphan file inode cleared, size not whole blocks" "$img" -fn
repaired "orphan file inode cleared, size not whole blocks" "$img" '^Creating orphan file (32 blocks):  Done\.$'
# ... and with a pointer outside the file system, which e2fsck cannot
# truncate ("Failed to truncate orphan file."): e4fsck does not need to.
mkimg "$img" "-t ext4 -O orphan_file"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"sif <12> links_count 0
sif <12> mode 0
sif <12> dtime 1700000000
sif <12> size 32000
sif <12> block[5] 99999999"
judge "orphan file inode cleared, an illegal pointer" "$img" -fn
repaired "orphan file inode cleared, an illegal pointer" "$img" '^Creating orphan file (32 blocks):  Done\.$'
# orphan_file with s_orphan_file_inum 0: e2fsck gives up ("Illegal inode
# number while reading inode 0"), e4fsck offers a new file in a new inode.
mkimg "$img" "-t ext4 -O orphan_file"; debugfs -w -R "ssv orphan_file_inum 0" "$img" >/dev/null 2>&1
fresh_n "orphan file inode number 0" "$img" '^Failed to initialize orphan file\.$'
repaired "orphan file inode number 0" "$img" '^Creating orphan file (32 blocks):  Done\.$'
# ... and without a journal: the feature goes, with no file to truncate
# (e2fsck: "Failed to truncate orphan file.", the feature left on).
mkimg "$img" "-t ext4 -O orphan_file"; debugfs -w -f - "$img" >/dev/null 2>&1 <<<"feature -has_journal
clri <8>
ssv journal_inum 0
ssv orphan_file_inum 0"
judge "orphan file inode number 0, no journal" "$img" -fp
fresh_n "orphan file inode number 0, no journal" "$img" '^Superblock has orphan file without journal\.$'
repaired "orphan file inode number 0, no journal" "$img" '^Superblock has orphan file without journal\.$'

# ---------------------------------------------------------------- kernel images
if [ "$(root_loop_reason)" != yes ]; then
	echo "SKIP kernel-made orphan files: $(root_loop_reason)"
	[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on the orphan file"
	exit 0
fi

# kernel_orphans IMG COPY OPTS: COPY is taken while two files and a directory are open and unlinked.
kernel_orphans() {
	local img=$1 copy=$2 opts=$3
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 64M >/dev/null
	mkdir -p "$T/mnt"
	loop_mount "$img" "$T/mnt"
	cp "$src/big" "$T/mnt/big"
	head -c 100000 /dev/urandom >"$T/mnt/x"
	head -c 250000 /dev/urandom >"$T/mnt/y"
	mkdir "$T/mnt/d"
	sync
	exec 3<"$T/mnt/x" 4<"$T/mnt/y" 5<"$T/mnt/d"
	rm "$T/mnt/x" "$T/mnt/y"
	rmdir "$T/mnt/d"
	sync
	cp --sparse=always "$img" "$copy"
	exec 3<&- 4<&- 5<&-
	loop_umount "$T/mnt"
}

for opts in "-t ext4 -O orphan_file" "-t ext4 -O orphan_file,^metadata_csum -b 4096"; do
	tag="[$opts]"
	kernel_orphans "$T/k-src.img" "$T/k.img" "$opts"
	if ! dumpe2fs -h "$T/k.img" 2>/dev/null | grep -q orphan_present; then
		echo "SKIP kernel copy $tag: the copy has no orphan_present flag"
		continue
	fi
	judge "kernel copy, journal to replay $tag" "$T/k.img" -n -p -y -fn -fp -fy
	cp "$T/k.img" "$T/kr.img"
	debugfs -w -R "journal_run" "$T/kr.img" >/dev/null 2>&1
	if dumpe2fs -h "$T/kr.img" 2>/dev/null | grep -q needs_recovery; then
		echo "SKIP replayed kernel copy $tag: debugfs journal_run left needs_recovery"
		continue
	fi
	judge "kernel copy, replayed $tag" "$T/kr.img" -n -p -y -fn -fp -fy
	used=$(used_block "$T/kr.img")
	cp "$T/kr.img" "$img"; flip "$img" "$used" -8
	judge "entries in a block with a wrong magic $tag" "$img" -p -fn -fp -fy
	cp "$T/kr.img" "$img"; flip "$img" "$used" -1
	judge "entries in a block with a wrong checksum $tag" "$img" -p -fn -fp -fy
	cp "$T/kr.img" "$img"; debugfs -w -R "sif <12> size 32000" "$img" >/dev/null 2>&1
	judge "entries, orphan file size not whole blocks $tag" "$img" -p -fn -fp -fy
done

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on the orphan file"
