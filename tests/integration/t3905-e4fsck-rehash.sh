#!/bin/bash
# t3905-e4fsck-rehash.sh - e4fsck's pass 3A (rebuilding directories) and -D,
# judged by e2fsck 1.47 run on a copy of the same image.
#
# Each case makes an image, copies it, runs e2fsck on one copy and e4fsck
# on the other with the same options, and requires:
#   - the same exit status and, with e2fsck 1.47, the same output (the
#     banner and the image's name aside);
#   - the same directories afterwards: each listed directory's blocks
#     (debugfs dump), size and flags are byte for byte e2fsck's;
#   - e2fsck -fn finds nothing in e4fsck's result, and a second e4fsck -fy
#     exits 0 without a pass 3A;
#   - the files' data is intact.
# Cases: linear directories of 3+ blocks indexed by -y and -p (1 KiB and 4
# KiB, with and without metadata_csum), a directory of deleted entries
# packed back into one block, -D over a populated tree (a 3000-entry
# directory, subdirectories, lost+found), -D without dir_index (ext2), a
# cleared htree index rebuilt, names given twice (renamed "name~0", or
# cleared when they name the same inode), and -n with -D refused.

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

same_output=0
if e2fsck -V 2>&1 | grep -q '^e2fsck 1\.47'; then
	same_output=1
else
	note "e2fsck is not 1.47: outputs are not compared line by line"
fi

# The size and the flags of an inode, as debugfs shows them.
size_of() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^User: .*Size: \([0-9]*\)$/\1/p'; }
flags_of() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: .*Flags: \(0x[0-9a-f]*\)$/\1/p'; }

# What a directory is after the check: flags, size and its raw blocks.
dir_state() {
	local img=$1 dir=$2
	debugfs -R "stat $dir" "$img" 2>/dev/null | sed -n 's/^Inode: [0-9]* *Type: directory *Mode: *[0-7]* *\(Flags: .*\)/\1/p; s/.*\(Size: [0-9]*\)$/\1/p'
	rm -f "$T/dump"
	debugfs -R "dump $dir $T/dump" "$img" >/dev/null 2>&1
	md5sum <"$T/dump"
}

# poke IMG BLOCK_SIZE BLOCK OFFSET BYTES (printf escapes)
poke() {
	# shellcheck disable=SC2059
	printf "$5" | dd of="$1" bs=1 seek=$(($3 * $2 + $4)) conv=notrunc status=none
}

# run_case NAME IMG "OPTIONS" "DIRS" [EXPECT_3A]
#   DIRS: directories (paths) whose state must equal e2fsck's afterwards.
#   EXPECT_3A: 1 (default) when the output must have a pass 3A header.
run_case() {
	local name=$1 img=$2 opts=$3 dirs=$4 expect_3a=${5:-1} rc2=0 rc4=0 d
	cp "$img" "$T/e2.img"
	cp "$img" "$T/e4.img"
	# shellcheck disable=SC2086
	e2fsck $opts "$T/e2.img" >"$T/e2.out" 2>&1 || rc2=$?
	# shellcheck disable=SC2086
	"$E4FSCK" $opts "$T/e4.img" >"$T/e4.out" 2>&1 || rc4=$?
	sed -i -e '/^e[24]fsck [0-9]/d' -e "s|$T/e[24].img|IMG|g" "$T/e2.out" "$T/e4.out"
	if [ "$rc2" != "$rc4" ]; then
		bad "$name: e4fsck $opts exit $rc4, e2fsck $rc2"
		sed 's/^/    /' "$T/e4.out" | head -n 30
		return
	fi
	if [ "$same_output" = 1 ] && ! diff "$T/e2.out" "$T/e4.out" >"$T/diff.out"; then
		bad "$name: e4fsck $opts prints other lines than e2fsck"
		sed 's/^/    /' "$T/diff.out" | head -n 30
		return
	fi
	if [ "$expect_3a" = 1 ] && [ "$opts" != "${opts#*p}" ]; then
		:   # preen prints no pass headers
	elif [ "$expect_3a" = 1 ] && ! grep -q '^Pass 3A: Optimizing directories$' "$T/e4.out"; then
		bad "$name: no pass 3A"
		sed 's/^/    /' "$T/e4.out" | head -n 30
		return
	fi
	for d in $dirs; do
		if [ "$(dir_state "$T/e2.img" "$d")" != "$(dir_state "$T/e4.img" "$d")" ]; then
			bad "$name: directory $d differs from e2fsck's"
			debugfs -R "htree $d" "$T/e4.img" 2>/dev/null | head -n 12 | sed 's/^/    /'
			return
		fi
	done
	# Errors left (-n, or preen stopping): nothing more to compare.
	if [ $((rc2 & 4)) != 0 ]; then
		pass "$name"
		return
	fi
	rc4=0
	e2fsck -fn "$T/e4.img" >"$T/after.out" 2>&1 || rc4=$?
	if [ "$rc4" != 0 ]; then
		bad "$name: e2fsck -fn exit $rc4 after e4fsck $opts"
		sed 's/^/    /' "$T/after.out" | head -n 20
		return
	fi
	case " $opts " in *n*) pass "$name"; return ;; esac
	rc4=0
	"$E4FSCK" -fy "$T/e4.img" >"$T/again.out" 2>&1 || rc4=$?
	if [ "$rc4" != 0 ] || grep -q '^Pass 3A' "$T/again.out"; then
		bad "$name: a second e4fsck -fy exits $rc4 or rebuilds again"
		sed 's/^/    /' "$T/again.out" | head -n 20
		return
	fi
	if [ -n "${DATA_FILE:-}" ]; then
		debugfs -R "cat $DATA_FILE" "$T/e4.img" >"$T/data.out" 2>/dev/null
		cmp -s "$T/data.out" "$T/data" || { bad "$name: $DATA_FILE changed"; return; }
	fi
	pass "$name"
}

head -c 30000 /dev/urandom >"$T/data"

# grown IMG MKE2FS-OPTIONS NFILES: /d holds NFILES empty files with long names, /d/data some data.
grown() {
	local img=$1 n=$3
	# shellcheck disable=SC2086
	mke2fs -q -F $2 "$img" 16M >/dev/null 2>&1
	{
		echo "mkdir d"
		echo "write $T/data d/data"
		for i in $(seq 1 "$n"); do echo "write /dev/null d/file_with_a_long_name_$i"; done
	} | debugfs -w "$img" -f - >/dev/null 2>&1
}

# ---------------------------------------------------------------- linear directories indexed

DATA_FILE=d/data
for layout in "-t ext4 -b 1024 -O ^metadata_csum" "-t ext4 -b 1024" "-t ext4 -b 4096"; do
	bs=${layout##*-b }
	bs=${bs%% *}
	n=$((bs == 1024 ? 80 : 250))
	grown "$T/lin.img" "$layout" "$n"
	size=$(size_of "$T/lin.img" d)
	[ $((size / bs)) -ge 3 ] || fail "the linear directory has only $size bytes ($layout)"
	[ "$(flags_of "$T/lin.img" d)" = 0x80000 ] || fail "the directory is not linear ($layout)"
	run_case "linear indexed by -fy ($layout)" "$T/lin.img" -fy "d lost+found /"
	[ "$(flags_of "$T/e4.img" d)" = 0x81000 ] ||
		bad "linear indexed by -fy ($layout): the directory is not indexed"
	run_case "linear indexed by -p ($layout)" "$T/lin.img" -fp "d"
	run_case "nothing rebuilt with -n ($layout)" "$T/lin.img" -fn "d" 0
done

# Deleted entries: a directory of 3+ blocks holding almost nothing is packed into one.
grown "$T/del.img" "-t ext4 -b 1024" 80
for i in $(seq 1 80); do echo "rm d/file_with_a_long_name_$i"; done | debugfs -w "$T/del.img" -f - >/dev/null 2>&1
run_case "emptied directory packed" "$T/del.img" -fy "d"
size=$(size_of "$T/e4.img" d)
[ "$size" = 1024 ] || bad "emptied directory packed: size $size, want 1024"

# A fragmented directory (its blocks between its files' data: an extent tree
# of depth 1) emptied and packed: e2fsck then finds its trimmed tree could
# be shorter and rebuilds it; so must e4fsck, with the same question.
mke2fs -q -F -t ext4 -b 1024 "$T/frag.img" 16M >/dev/null 2>&1
{
	echo "mkdir d"
	for i in $(seq 1 300); do echo "write $T/data d/file_number_$i"; done
	for i in $(seq 1 300); do echo "rm d/file_number_$i"; done
} | debugfs -w "$T/frag.img" -f - >/dev/null 2>&1
debugfs -R "ex d" "$T/frag.img" 2>/dev/null | grep -q '^ 1/ 1' || fail "the fragmented directory has no tree block"
DATA_FILE=
run_case "fragmented directory packed, tree made shorter" "$T/frag.img" -fy "d"
grep -q 'extent tree (at level 1) could be shorter' "$T/e4.out" ||
	bad "fragmented directory packed: no question about the tree"

# ---------------------------------------------------------------- -D

src="$T/src"
mkdir -p "$src/big" "$src/a/b/c" "$src/small"
for i in $(seq 1 3000); do : >"$src/big/entry_$i"; done
cp "$T/data" "$src/a/b/c/data"
for i in $(seq 1 30); do : >"$src/small/s$i"; done
ln -s ../b "$src/a/sym"
DATA_FILE=a/b/c/data
mke2fs -q -F -t ext4 -b 1024 -d "$src" "$T/tree.img" 32M >/dev/null 2>&1
run_case "-D over a tree (1 KiB)" "$T/tree.img" -fyD "/ big a a/b a/b/c small lost+found"
mke2fs -q -F -t ext4 -b 4096 -O ^metadata_csum -d "$src" "$T/tree.img" 64M >/dev/null 2>&1
run_case "-D over a tree (4 KiB, no metadata_csum)" "$T/tree.img" -fyD "/ big a small lost+found"
mke2fs -q -F -t ext2 -O ^dir_index -b 1024 -d "$src" "$T/tree.img" 32M >/dev/null 2>&1
run_case "-D without dir_index (ext2)" "$T/tree.img" -fyD "/ big a small lost+found"
[ "$(flags_of "$T/e4.img" big)" = 0x0 ] || bad "-D without dir_index (ext2): big/ has flags $(flags_of "$T/e4.img" big)"
DATA_FILE=

rc=0
"$E4FSCK" -fnD "$T/tree.img" >"$T/nd.out" 2>&1 || rc=$?
if [ "$rc" = 8 ] && grep -q 'The -n and -D options are incompatible' "$T/nd.out"; then
	pass "-n with -D refused"
else
	bad "-n with -D: exit $rc"
	sed 's/^/    /' "$T/nd.out"
fi

# ---------------------------------------------------------------- an index cleared, then rebuilt

mke2fs -q -F -t ext4 -b 1024 -O ^metadata_csum -d "$src" "$T/ht.img" 32M >/dev/null 2>&1
e2fsck -fyD "$T/ht.img" >/dev/null 2>&1 || true
root=$(debugfs -R "bmap big 0" "$T/ht.img" 2>/dev/null)
poke "$T/ht.img" 1024 "$root" 34 '\xff\x01'      # the root's count above its limit
run_case "bad htree count: index rebuilt" "$T/ht.img" -fy "big"
[ "$(flags_of "$T/e4.img" big)" = 0x81000 ] || bad "bad htree count: big/ is not indexed again"
# With -D every index is rebuilt, so e2fsck does not judge an index as a
# whole (hash ranges of its leaves) in pass 2: nor does e4fsck.
cp "$T/ht.img" "$T/ht2.img"
# A fixed hash seed: which leaf a damaged name's new hash falls out of must not be left to chance.
mke2fs -q -F -t ext4 -b 1024 -O ^metadata_csum -E hash_seed=6e1cfd4c-8a43-4f4c-9b5e-0f6c2b8e1d11 \
	-d "$src" "$T/ht2.img" 32M >/dev/null 2>&1
e2fsck -fyD "$T/ht2.img" >/dev/null 2>&1 || true
node=$(debugfs -R "htree big" "$T/ht2.img" 2>/dev/null | sed -n 's/^Entry #0: Hash 0x00000000, block \([0-9]*\)$/\1/p' | head -n 1)
leaf=$(debugfs -R "bmap big $((node == 1 ? 2 : 1))" "$T/ht2.img" 2>/dev/null)
poke "$T/ht2.img" 1024 "$leaf" 10 'zz'      # a name in a leaf: its hash leaves the leaf's range
run_case "leaf hashes out of range, -fy" "$T/ht2.img" -fy "big"
grep -q 'bad m[ai][xn] hash' "$T/e4.out" || bad "leaf hashes out of range, -fy: not reported"
run_case "leaf hashes out of range, -fyD: not judged, rebuilt" "$T/ht2.img" -fyD "big"
! grep -q 'bad m[ai][xn] hash' "$T/e4.out" || bad "-fyD judged the index it rebuilds"

# ---------------------------------------------------------------- names given twice

mke2fs -q -F -t ext4 -b 1024 -O ^metadata_csum "$T/dup.img" 8M >/dev/null 2>&1
debugfs -w "$T/dup.img" -f - >/dev/null 2>&1 <<EOF
mkdir d1
write $T/data d1/f2
write $T/data d1/f3
ln d1/f2 d1/f4
sif d1/f2 links_count 2
EOF
blk=$(debugfs -R "bmap d1 0" "$T/dup.img" 2>/dev/null)
cp "$T/dup.img" "$T/dup2.img"
poke "$T/dup.img" 1024 "$blk" 44 'f2'    # f3 becomes a second f2 (another inode)
poke "$T/dup2.img" 1024 "$blk" 56 'f2'   # f4 becomes a second f2 (the same inode)
DATA_FILE=d1/f2
for img in dup dup2; do
	for o in -fn -fy -fp; do
		run_case "names twice ($img) $o" "$T/$img.img" "$o" "d1" 0
	done
done
cp "$T/dup.img" "$T/e4.img"
"$E4FSCK" -fy "$T/e4.img" >/dev/null 2>&1 || true
if debugfs -R "ls d1" "$T/e4.img" 2>/dev/null | grep -q 'f2~0'; then
	pass "names twice: renamed f2~0"
else
	bad "names twice: no f2~0 after -fy"
fi

[ "$failed" = 0 ] || fail "some cases failed"
