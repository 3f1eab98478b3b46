#!/bin/bash
# t3900-e4fsck-dirs.sh - e4fsck's passes 2, 3 and 4 (directory structure,
# connectivity, reference counts), judged by e2fsck.
#
# No false positives: mke2fs images (ext2, ext3, ext4; 1 KiB and 4 KiB
# blocks) holding a tree with a 5000-entry htree directory, symlinks and a
# fifo, and mke4fs -d images, must give `e4fsck -fn` exit 0 and no problem
# lines.
#
# Damage: each case copies a small populated image, damages it in one way
# (debugfs -w unlink/link/clri/set_inode_field/rmdir, or bytes of a
# directory block written at the offset `debugfs bmap` gives: '.', '..',
# rec_len, names, file types, inode numbers, htree root and index nodes,
# checksum tails) and requires
#   - `e4fsck -fn` exits as expected (4; 0 where e2fsck -n reports nothing
#     either; 12 where a declined salvage aborts the check, as it aborts
#     e2fsck's), names the problem in e2fsck's words and changes no byte;
#   - `e4fsck -fy` exits 1, a second `e4fsck -fy` exits 0, and
#     `e2fsck -fn` exits 0 on the result;
#   - the data files' bytes (read by inode number) are intact;
#   - for the cases marked "same", e4fsck's problem lines with -n and -y are
#     e2fsck 1.47's lines (checked only when e2fsck is 1.47).
# Differences from e2fsck in the other cases are listed in pass2.c and in
# the report of issue 5: e2fsck asks some questions twice with -n, and
# prints "???" for paths through blocks failing checksums.
#
# Environment: T3900_CASES=REGEX runs only the matching damage cases.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd e2fsck mke2fs debugfs cmp md5sum
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir
export LC_ALL=C

failed=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

same_ok=0
if e2fsck -V 2>&1 | grep -q '^e2fsck 1\.47'; then
	same_ok=1
else
	note "e2fsck is not 1.47: its messages are not compared line by line"
fi

# The lines that report problems: no banner, pass titles, summary or blank lines.
problems() {
	grep -v -e '^e[24]fsck [0-9]' -e '^Pass [1-5]' -e 'files (.*non-contiguous)' -e '^$' "$1" |
		sed -e "s|$2: ||" -e 's/^Restarting e[24]fsck /Restarting e2fsck /'
}

le32() {
	printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) \
		$(($1 >> 24 & 255))
}

# poke IMG BLOCK_SIZE BLOCK OFFSET BYTES (printf escapes)
poke() {
	# shellcheck disable=SC2059
	printf "$5" | dd of="$1" bs=1 seek=$(($3 * $2 + $4)) conv=notrunc status=none
}

ino_of() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }
bmap() { debugfs -R "bmap $2 $3" "$1" 2>/dev/null; }

# ---------------------------------------------------------------- images

src="$T/src"
mkdir -p "$src/big" "$src/a/b/c"
for i in $(seq 1 5000); do : >"$src/big/file_with_a_longish_name_$i"; done
head -c 70000 /dev/urandom >"$src/a/b/c/data"
ln -s ../b "$src/a/sym"
ln -s "$(printf 'x%.0s' $(seq 1 100))" "$src/a/longsym"
mkfifo "$src/a/fifo"
head -c 3000 /dev/urandom >"$T/f1"
head -c 5000 /dev/urandom >"$T/f2"
head -c 20000 /dev/urandom >"$T/f3"
: >"$T/empty"

# small IMG MKE2FS-OPTIONS: d1, d1/sub, f1, d1/f2, d1/sub/f3, e0 (empty), a symlink and a fifo.
small() {
	local img=$1
	shift
	mke2fs -q -F "$@" "$img" 8M >/dev/null 2>&1
	debugfs -w "$img" -f - >/dev/null 2>&1 <<EOF
mkdir d1
mkdir d1/sub
write $T/f1 f1
write $T/f2 d1/f2
write $T/f3 d1/sub/f3
write $T/empty e0
symlink sym d1/sub/f3
mknod pipe p
EOF
}

# indexed IMG MKE2FS-OPTIONS: the tree, with big/ made an htree by e2fsck -D.
# The hash seed is fixed: a damaged name's new hash must fall outside its
# leaf's range every run, not by chance.
indexed() {
	local img=$1
	shift
	mke2fs -q -F "$@" -E hash_seed=6e1cfd4c-8a43-4f4c-9b5e-0f6c2b8e1d11 -d "$src" "$img" 32M >/dev/null 2>&1
	e2fsck -fyD "$img" >/dev/null 2>&1 || true
}

small "$T/lin.img" -t ext4 -b 1024 -O ^metadata_csum
small "$T/csum.img" -t ext4 -b 1024 -O metadata_csum
indexed "$T/htree.img" -t ext4 -b 1024 -O ^metadata_csum
indexed "$T/htcsum.img" -t ext4 -b 4096 -O metadata_csum
for img in lin csum htree htcsum; do
	e2fsck -fn "$T/$img.img" >/dev/null 2>&1 || fail "the $img image is not clean for e2fsck"
done

D1=$(ino_of "$T/lin.img" d1)
SUB=$(ino_of "$T/lin.img" d1/sub)
F1=$(ino_of "$T/lin.img" f1)
F2=$(ino_of "$T/lin.img" d1/f2)
F3=$(ino_of "$T/lin.img" d1/sub/f3)
[ "$(ino_of "$T/csum.img" d1/f2)" = "$F2" ] || fail "the two small images differ in inode numbers"
D1BLK=$(bmap "$T/lin.img" d1 0)
ROOTBLK=$(bmap "$T/lin.img" '<2>' 0)
D1CBLK=$(bmap "$T/csum.img" d1 0)
ROOT1K=$(bmap "$T/htree.img" big 0)
NODE_LBLK=$(debugfs -R "htree big" "$T/htree.img" 2>/dev/null | sed -n 's/^Entry #0: Hash 0x00000000, block \([0-9]*\)$/\1/p' | head -n 1)
if [ -z "$NODE_LBLK" ] || ! debugfs -R "htree big" "$T/htree.img" 2>/dev/null | grep -q 'Indirect levels: 1'; then
	fail "the 1 KiB htree is not two levels deep"
fi
NODE1K=$(bmap "$T/htree.img" big "$NODE_LBLK")
LEAF1K=$(bmap "$T/htree.img" big $((NODE_LBLK == 1 ? 2 : 1)))
ROOT4K=$(bmap "$T/htcsum.img" big 0)
LEAF4K=$(bmap "$T/htcsum.img" big 3)

# ---------------------------------------------------------------- clean images

clean_case() {
	local name=$1 img=$2 out="$T/clean.out" rc=0
	"$E4FSCK" -fn "$img" >"$out" 2>&1 || rc=$?
	if [ "$rc" != 0 ] || [ -n "$(problems "$out" "$img")" ]; then
		bad "clean $name: e4fsck -fn exit $rc"
		sed 's/^/    /' "$out" | head -n 20
	else
		pass "clean $name"
	fi
}

for t in ext2 ext3 ext4; do
	for b in 1024 4096; do
		indexed "$T/clean.img" -t $t -b $b
		if ! debugfs -R "htree big" "$T/clean.img" 2>/dev/null | grep -q 'Root node dump'; then
			bad "clean $t $b: big/ is not indexed"
			continue
		fi
		clean_case "mke2fs -t $t -b $b (htree of 5000)" "$T/clean.img"
	done
done
indexed "$T/clean.img" -t ext4 -O inline_data
clean_case "mke2fs -t ext4 -O inline_data" "$T/clean.img"
clean_case "mke2fs small, no metadata_csum" "$T/lin.img"
clean_case "mke2fs small, metadata_csum" "$T/csum.img"
for opts in "-b 1024" "-b 4096 -O ^metadata_csum"; do
	rm -f "$T/clean.img"
	# shellcheck disable=SC2086
	"$MKE4FS" -q -F $opts -d "$src" "$T/clean.img" 64M >/dev/null 2>&1 || { bad "mke4fs $opts"; continue; }
	clean_case "mke4fs $opts -d" "$T/clean.img"
done

# ---------------------------------------------------------------- damage

# name | base image | e4fsck -fn exit | grep pattern (-n output, or -y output if -n is clean) |
# same as e2fsck (-n, -y, both, no) | inodes whose data is not checked | damage (eval'd on $img)
CASES=$(
	cat <<EOF
unconnected-dir | lin | 4 | ^Unconnected directory inode $SUB (was in /d1)\$ | both | | dbg 'unlink d1/sub'
unattached-file | lin | 4 | ^Unattached inode $F1\$ | both | | dbg 'unlink f1'
unconnected-tree | lin | 4 | ^Unconnected directory inode $D1 (was in /)\$ | both | | dbg 'unlink d1'
no-lost-found-unattached | csum | 4 | ^Unattached inode $F1\$ | both | | dbg 'unlink f1'; dbg 'rmdir lost+found'
root-dotdot | lin | 4 | ^'\.\.' in [./]* (2) is [./]* ($D1), should be [./]* (2)\.\$ | both | | poke "\$img" 1024 $ROOTBLK 12 "\$(le32 $D1)"
ref-count-high | lin | 4 | ^Inode $F1 ref count is 5, should be 1\. | both | | dbg 'sif f1 links_count 5'
ref-count-low | lin | 4 | ^Inode $F1 ref count is 1, should be 2\. | both | | dbg 'link f1 d1/f1b'
dir-ref-count | lin | 4 | ^Inode $D1 ref count is 7, should be 3\. | both | | dbg 'sif d1 links_count 7'
entry-unused-inode | lin | 4 | ^Entry 'f2' in /d1 ($D1) has deleted/unused inode $F2\. | both | $F2 | dbg 'clri <$F2>'
no-lost-found | lin | 0 | ^/lost+found not found\.  Create? yes | both | | dbg 'rmdir lost+found'
lost-found-file | lin | 0 | ^/lost+found is not a directory | both | | dbg 'rmdir lost+found'; dbg "write $T/f1 lost+found"
dir-hard-link | lin | 4 | is a link to directory /subalias ($SUB)\.\$ | both | | dbg 'link d1/sub subalias'
dir-link-up | lin | 4 | ^Entry 'loop' in /d1/sub ($SUB) is a link to directory /d1 ($D1)\. | both | | dbg 'link d1 d1/sub/loop'
root-link | lin | 4 | is a link to the root inode\. | y | | dbg 'link <2> d1/rootlink'
zero-length-unattached | lin | 4 | ^Unattached zero-length inode | both | | dbg 'unlink e0'
invalid-mode | lin | 4 | ^Inode $F1 (/f1) has invalid mode (0170644)\. | no | $F1 | dbg 'sif f1 mode 0170644'
index-flag-linear | lin | 4 | ^HTREE directory inode $D1 has an invalid root node\. | y | | dbg 'sif d1 flags 0x81000'
dot-inode | lin | 4 | ^Invalid inode number for '\.' in directory inode $D1\. | both | | lin 0 "\$(le32 $SUB)"
first-not-dot | lin | 4 | ^First entry 'x' (inode=$D1) in directory inode $D1 (/d1) should be '\.' | both | | lin 8 x
dotdot-missing | lin | 4 | ^Missing '\.\.' in directory inode $D1\. | both | | lin 12 '\x00\x00\x00\x00'
dotdot-wrong | lin | 4 | ^'\.\.' in /d1 ($D1) is <$F1> ($F1), should be / (2)\. | both | | lin 12 "\$(le32 $F1)"
bad-file-type | lin | 4 | ^Entry 'f2' in /d1 ($D1) has an incorrect filetype (was 5, should be 1)\. | both | | lin 43 '\x05'
no-file-type | lin | 0 | ^Setting filetype for entry 'f2' in /d1 ($D1) to 1\. | no | | lin 43 '\x00'
illegal-name | lin | 4 | ^Entry 'a/b' in /d1 ($D1) has illegal characters in its name\. | both | | lin 32 'a/b'
rec-len-odd | lin | 12 | ^Directory inode $D1, block #0, offset 36: directory corrupted\$ | y | | lin 40 '\x0d\x00'
rec-len-past-end | lin | 12 | ^Directory inode $D1, block #0, offset 36: directory corrupted\$ | y | | lin 40 '\x00\x08'
link-to-dot | lin | 4 | ^Entry 'f2' in /d1 ($D1) is a link to '\.'  Clear? no | y | | lin 36 "\$(le32 $D1)"
inode-out-of-range | lin | 4 | ^Entry 'f2' in /d1 ($D1) has invalid inode #: 65536\. | both | | lin 36 '\x00\x00\x01\x00'
reserved-inode | lin | 4 | ^Entry 'f2' in /d1 ($D1) has invalid inode #: 5\. | both | | lin 36 '\x05\x00\x00\x00'
duplicate-dot | lin | 4 | ^Entry '\.' in /d1 ($D1) is duplicate '\.' entry\. | y | | lin 42 '\x01\x02.'
zero-length-name | lin | 4 | ^Entry '' in /d1 ($D1) has a zero-length name\. | y | | lin 42 '\x00'
duplicate-name | lin | 4 | ^Entry 'sub' in /d1 ($D1) has a non-unique filename\.\$ | both | | lin 42 '\x03\x01sub'
duplicate-same-inode | lin | 4 | ^Duplicate entry 'f2' in /d1 ($D1) found\.  Clear? no | both | | dbg 'ln d1/f2 d1/zz'; dbg 'sif d1/f2 links_count 2'; lin 54 '\x02\x01f2'
csum-leaf | csum | 4 | ^Directory inode $D1, block #0: directory passes checks but fails checksum\. | both | | csum 43 '\x05'
csum-unused-area | csum | 4 | ^Entry 'f2' in ??? ($D1) has deleted/unused inode 1000\. | both | | csum 36 '\xe8\x03\x00\x00'
htree-count | htree | 4 | ^Problem in HTREE directory inode [0-9]*: block #0 has invalid count (511) | both | | poke "\$img" 1024 $ROOT1K 34 '\xff\x01'
htree-hash-version | htree | 4 | has an unsupported hash version (7)\$ | y | | poke "\$img" 1024 $ROOT1K 28 '\x07'
htree-depth | htree | 4 | has a tree depth (5) which is too big\$ | y | | poke "\$img" 1024 $ROOT1K 30 '\x05'
htree-dup-ref | htree | 4 | block #$NODE_LBLK referenced twice\$ | both | | poke "\$img" 1024 $ROOT1K 44 "\$(le32 $NODE_LBLK)"
htree-node-entries | htree | 4 | ^Invalid HTREE directory inode [0-9]* (/big)\. | both | | poke "\$img" 1024 $NODE1K 16 '\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
htree-root-limit | htree | 4 | block #0 has invalid limit (16)\$ | both | | poke "\$img" 1024 $ROOT1K 32 '\x10\x00'
htree-leaf-hash | htree | 4 | has bad m[ai][xn] hash\$ | both | | poke "\$img" 1024 $LEAF1K 20 zz
htree-overflow-count | htree | 0 | ref count set to overflow but could be exact value 2\. | both | | dbg 'sif big links_count 1'
csum-no-tail | htcsum | 4 | ^Directory inode [0-9]*, block #3, offset 0: directory has no checksum\. | both | | poke "\$img" 4096 $LEAF4K 4091 '\x00'
csum-htree-root | htcsum | 4 | root node fails checksum\. | both | | poke "\$img" 4096 $ROOT4K 4092 '\x00\x00'
EOF
)

dbg() { debugfs -w -R "$1" "$img" >/dev/null 2>&1; }
lin() { poke "$img" 1024 "$D1BLK" "$1" "$2"; }
csum() { poke "$img" 1024 "$D1CBLK" "$1" "$2"; }

# The data files of the small images, by inode: their bytes must survive.
check_data() {
	local name=$1 img=$2 skip=$3 ino file
	case $4 in lin | csum) ;; *) return 0 ;; esac
	for pair in "$F1:f1" "$F2:f2" "$F3:f3"; do
		ino=${pair%%:*}
		file=${pair#*:}
		case " $skip " in *" $ino "*) continue ;; esac
		debugfs -R "cat <$ino>" "$img" >"$T/out.data" 2>/dev/null
		cmp -s "$T/out.data" "$T/$file" || { bad "$name: $file (inode $ino) changed"; return 1; }
	done
}

compare_e2fsck() {
	local name=$1 mode=$2 ours=$3 theirs=$4 img=$5 img2=$6
	if ! diff <(problems "$theirs" "$img2") <(problems "$ours" "$img") >"$T/diff.out"; then
		bad "$name: e4fsck $mode prints other lines than e2fsck $mode"
		sed 's/^/    /' "$T/diff.out" | head -n 20
		return 1
	fi
}

run_case() {
	local name=$1 base=$2 want_n=$3 pattern=$4 same=$5 skip=$6 damage=$7
	local img="$T/case.img" ref="$T/ref.img" rc before after
	cp "$T/$base.img" "$img"
	eval "$damage"
	cp "$img" "$ref"
	before=$(md5sum <"$img")

	rc=0
	"$E4FSCK" -fn "$img" >"$T/n.out" 2>&1 || rc=$?
	after=$(md5sum <"$img")
	[ "$rc" = "$want_n" ] || { bad "$name: e4fsck -fn exit $rc, want $want_n"; sed 's/^/    /' "$T/n.out" | head -n 20; return; }
	[ "$before" = "$after" ] || { bad "$name: e4fsck -fn changed the image"; return; }
	if [ "$same_ok" = 1 ] && { [ "$same" = n ] || [ "$same" = both ]; }; then
		e2fsck -fn "$ref" >"$T/e2n.out" 2>&1 || true
		compare_e2fsck "$name" -fn "$T/n.out" "$T/e2n.out" "$img" "$ref" || return
	fi

	# The exit status is e2fsck's (1 for a repair; 0 when only a note such as
	# "Setting filetype" was acted on), or 1 without e2fsck 1.47 to ask.
	local want_y=1
	if [ "$same_ok" = 1 ]; then
		cp "$ref" "$T/ref-y.img"
		want_y=0; e2fsck -fy "$T/ref-y.img" >/dev/null 2>&1 || want_y=$?
	fi
	rc=0
	"$E4FSCK" -fy "$img" >"$T/y.out" 2>&1 || rc=$?
	[ "$rc" = "$want_y" ] || { bad "$name: e4fsck -fy exit $rc, want $want_y"; sed 's/^/    /' "$T/y.out" | head -n 30; return; }
	if [ "$want_n" = 0 ]; then
		grep -q -e "$pattern" "$T/y.out" || { bad "$name: e4fsck -fy does not say /$pattern/"; sed 's/^/    /' "$T/y.out" | head -n 20; return; }
	else
		grep -q -e "$pattern" "$T/n.out" || { bad "$name: e4fsck -fn does not say /$pattern/"; sed 's/^/    /' "$T/n.out" | head -n 20; return; }
	fi
	if [ "$same_ok" = 1 ] && { [ "$same" = y ] || [ "$same" = both ]; }; then
		e2fsck -fy "$ref" >"$T/e2y.out" 2>&1 || true
		compare_e2fsck "$name" -fy "$T/y.out" "$T/e2y.out" "$img" "$ref" || return
	fi

	rc=0
	"$E4FSCK" -fy "$img" >"$T/y2.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { bad "$name: second e4fsck -fy exit $rc"; sed 's/^/    /' "$T/y2.out" | head -n 20; return; }
	rc=0
	e2fsck -fn "$img" >"$T/e2after.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { bad "$name: e2fsck -fn exit $rc after the repair"; sed 's/^/    /' "$T/e2after.out" | head -n 20; return; }
	check_data "$name" "$img" "$skip" "$base" || return
	pass "$name"
}

trim() {
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	printf '%s' "${s%"${s##*[![:space:]]}"}"
}

ncases=0
while IFS='|' read -r name base want_n pattern same skip damage; do
	name=$(trim "$name")
	[ -n "$name" ] || continue
	if [ -n "${T3900_CASES:-}" ] && ! [[ $name =~ $T3900_CASES ]]; then
		continue
	fi
	ncases=$((ncases + 1))
	run_case "$name" "$(trim "$base")" "$(trim "$want_n")" "$(trim "$pattern")" "$(trim "$same")" \
		"$(trim "$skip")" "$damage"
done <<<"$CASES"

# /lost+found full: 1100 files lose their names, more than its 12 blocks
# hold; e2fsck asks to expand it (once per block it adds) and so must
# e4fsck, with the same lines, exit status and result.
if [ -z "${T3900_CASES:-}" ] || [[ lost-found-full =~ $T3900_CASES ]]; then
	img="$T/lf.img"
	mke2fs -q -F -t ext4 -b 1024 -N 4096 "$img" 32M >/dev/null 2>&1
	{
		echo "mkdir d"
		for i in $(seq 1 1100); do echo "write $T/f1 d/f$i"; done
		for i in $(seq 1 1100); do echo "unlink d/f$i"; done
	} | debugfs -w "$img" -f - >/dev/null 2>&1
	cp "$img" "$T/lf-ref.img"
	rc=0; "$E4FSCK" -fy "$img" >"$T/y.out" 2>&1 || rc=$?
	e2fsck -fy "$T/lf-ref.img" >"$T/e2y.out" 2>&1 || true
	if [ "$rc" != 1 ] || ! grep -q '^No room in lost+found directory\.  Expand? yes$' "$T/y.out"; then
		bad "lost-found-full: e4fsck -fy exit $rc or no expansion asked"
	elif [ "$same_ok" = 1 ] && ! compare_e2fsck lost-found-full -fy "$T/y.out" "$T/e2y.out" "$img" "$T/lf-ref.img"; then
		:
	elif ! "$E4FSCK" -fy "$img" >/dev/null 2>&1 || ! e2fsck -fn "$img" >/dev/null 2>&1; then
		bad "lost-found-full: not clean after the repair"
	else
		pass "lost-found-full"
	fi
fi

echo "$ncases damage cases"
[ "$failed" = 0 ] || fail "some cases failed"
