#!/bin/bash
# t3933-e4fsck-bigalloc.sh - e4fsck -n on bigalloc file systems, judged
# line by line against e2fsck -n.
#
# Three layouts from mke2fs -O bigalloc: 4 KiB blocks in clusters of 16 KiB
# and of 64 KiB, and 1 KiB blocks in clusters of 4 KiB, each in four
# groups, holding files written by debugfs: a small file, a 300 kB one, a
# fragmented one (written into the holes two deleted files left), a
# directory of 150 entries and a file with an attribute block.  Clean, they
# must be clean with -fn (exit 0, e2fsck's summary line) and without -f.
# Damaged with debugfs -w (a used cluster freed and a free one set in the
# bitmap, a group's and the superblock's free counts, i_blocks, a file
# moved onto another's cluster, aligned and not, onto its own cluster, an
# attribute block named by a second file, a file turned into a block map),
# e4fsck -fn must print what e2fsck -fn prints and exit as it does, without
# changing a byte, and print the same with pass 1 in 4 threads.  A
# directory extent after a gap must be offered e2fsck's cluster-aligned
# block, and attribute values in EA inodes are charged in whole clusters.
# Repairs are t3939's.
# Last, a few random damages (tests/tools/damage.py) on one image: -fn
# must end in time with one of e4fsck's statuses, change nothing, and call
# the image clean only when e2fsck does; how often its output equals
# e2fsck's is printed.  T3933_SEEDS sets how many (default 20).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs e2fsck debugfs cmp python3 timeout
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
e2fsck -V 2>&1 | grep -q '^e2fsck 1\.4[7-9]' || skip "the oracle is e2fsck 1.47 or later"
make_tmpdir

failed=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

head -c 300000 /dev/urandom >"$T/big"
head -c 5000 /dev/urandom >"$T/small"
head -c 40000 /dev/urandom >"$T/frag"
head -c 700 /dev/urandom >"$T/value"

# make_image IMG BLOCKSIZE CLUSTERSIZE CLUSTERS-PER-GROUP SIZE
make_image() {
	local img=$1 i
	rm -f "$img"
	mke2fs -q -F -t ext4 -b "$2" -O bigalloc -C "$3" -g "$4" -I 256 "$img" "$5" >/dev/null 2>&1 ||
		return 1
	{
		echo "write $T/big big"
		echo "write $T/small small"
		echo "write $T/small hole1"
		echo "write $T/small keep1"
		echo "write $T/small hole2"
		echo "write $T/small keep2"
		echo "rm hole1"
		echo "rm hole2"
		echo "write $T/frag frag"
		echo "mkdir d"
		for i in $(seq 1 150); do echo "write $T/small d/entry-with-a-long-name-$i"; done
		echo "write $T/small attrs"
		echo "ea_set -f $T/value attrs user.big"
	} | debugfs -w -f - "$img" >/dev/null 2>&1
}

# first_block IMG FILE: the physical block of FILE's logical block 0
first_block() {
	debugfs -R "bmap $2 0" "$1" 2>/dev/null
}

# inode_field IMG FILE FIELD (debugfs's name: file_acl, ...)
inode_field() {
	debugfs -R "stat $2" "$1" 2>/dev/null | sed -n "s/.*$3: \([0-9]*\).*/\1/p" | head -1
}

# same NAME IMG OPTS...: e4fsck and e2fsck agree on a copy of IMG, and -n changes nothing.
same() {
	local name=$1 img=$2 e2 e4
	shift 2
	# The same name in both outputs: each checker gets t.img in a directory of its own.
	mkdir -p "$T/e2" "$T/e4"
	cp "$img" "$T/e2/t.img"
	cp "$img" "$T/e4/t.img"
	e2=0; (cd "$T/e2" && e2fsck "$@" t.img) >"$T/e2.out" 2>&1 || e2=$?
	e4=0; (cd "$T/e4" && "$E4FSCK" -m 1 "$@" t.img) >"$T/e4.out" 2>&1 || e4=$?
	sed -i '/^e[24]fsck [0-9]/d' "$T/e2.out" "$T/e4.out"
	if [ "$e2" != "$e4" ]; then
		bad "$name: exit $e4, e2fsck $e2"
		diff "$T/e2.out" "$T/e4.out" | head -20 || true
	elif ! diff "$T/e2.out" "$T/e4.out" >"$T/diff"; then
		bad "$name: the output differs from e2fsck's"
		head -30 "$T/diff"
	elif ! cmp -s "$img" "$T/e4/t.img"; then
		bad "$name: e4fsck $* changed the image"
	elif ! (cd "$T/e4" && "$E4FSCK" -m 4 "$@" t.img 2>&1 | sed '/^e4fsck [0-9]/d' | cmp -s - "$T/e4.out"); then
		bad "$name: pass 1 in 4 threads prints otherwise"
	else
		pass "$name (exit $e4)"
	fi
}

# damage NAME BASE CMDS...: the debugfs commands applied to a copy of BASE, then judged with -fn
damage() {
	local name=$1 base=$2
	shift 2
	cp "$base" "$T/dmg.img"
	printf '%s\n' "$@" | debugfs -w -f - "$T/dmg.img" >/dev/null 2>&1
	if cmp -s "$base" "$T/dmg.img"; then
		bad "$name: debugfs changed nothing"
		return
	fi
	same "$name, -fn" "$T/dmg.img" -fn
	if ! grep -q "Fix\|Clone\|Clear\|violates\|differences" "$T/e4.out"; then
		bad "$name: e4fsck -fn found nothing"
	fi
}

layouts="4k-16k:4096:16384:1024:48M 4k-64k:4096:65536:256:48M 1k-4k:1024:4096:1024:16M"
for layout in $layouts; do
	IFS=: read -r tag bs cs cpg size <<<"$layout"
	base="$T/$tag.img"
	if ! make_image "$base" "$bs" "$cs" "$cpg" "$size"; then
		echo "SKIP $tag: mke2fs cannot make it"
		continue
	fi
	ratio=$((cs / bs))
	same "$tag clean, -fn" "$base" -fn
	grep -q "files (" "$T/e4.out" || bad "$tag clean, -fn: no summary line"
	same "$tag clean, -n" "$base" -n
	grep -q "clean," "$T/e4.out" || bad "$tag clean, -n: not said clean"

	big=$(first_block "$base" big)
	small=$(first_block "$base" small)
	frag=$(first_block "$base" frag)
	acl=$(inode_field "$base" attrs "File ACL")
	if [ -z "$big" ] || [ -z "$small" ] || [ -z "$acl" ] || [ "$acl" = 0 ]; then
		bad "$tag: the base image lacks its files (big $big, small $small, acl $acl)"
		continue
	fi
	damage "$tag: a used cluster freed" "$base" "freeb $((big + 2 * ratio + 1))"
	damage "$tag: clusters of two files freed" "$base" "freeb $big $((3 * ratio))" "freeb $frag"
	# A free cluster after the files, in a group whose bitmap is written.
	free=$(debugfs -R "ffb 1 $frag" "$base" 2>/dev/null | sed -n 's/^Free blocks found: \([0-9]*\).*/\1/p')
	damage "$tag: a free cluster marked used" "$base" "setb $((free + ratio - 1))"
	damage "$tag: free clusters marked used" "$base" "setb $free $((2 * ratio + 1))"
	# Group 0: debugfs leaves a wrong descriptor checksum, and e4fsck's library then does not
	# believe a BLOCK_UNINIT flag where e2fsck still marks the group's metadata in use.
	damage "$tag: a group's free count" "$base" "set_bg 0 free_blocks_count 7"
	damage "$tag: i_blocks" "$base" "sif small i_blocks 8"
	damage "$tag: i_blocks of the attribute file" "$base" "sif attrs i_blocks 2"
	# The extent in the inode: i_block[5] is the first extent's start.
	damage "$tag: a file on another's cluster" "$base" "sif small block[5] $((big + ratio))"
	damage "$tag: a file inside another's cluster" "$base" "sif small block[5] $((big + ratio + 1))"
	damage "$tag: a file inside its own cluster" "$base" "sif small block[5] $((small + 1))"
	# Two extents in one cluster around a hole (blocks 0 and 2): the cluster is charged once.
	keep1=$(first_block "$base" keep1)
	damage "$tag: two extents in one cluster" "$base" "sif keep1 block[0] $((0xF30A + (2 << 16)))" \
		"sif keep1 block[4] 1" "sif keep1 block[6] 2" "sif keep1 block[7] 1" "sif keep1 block[8] $((keep1 + 2))"
	damage "$tag: an attribute block named twice" "$base" "sif keep1 file_acl $acl"
	# A one-block file made a block map: its only pointer in i_block[0].
	damage "$tag: a block-mapped file" "$base" "sif keep2 flags 0" \
		"sif keep2 block[0] $(first_block "$base" keep2)" "sif keep2 block[1] 0" "sif keep2 block[2] 0" \
		"sif keep2 block[3] 0" "sif keep2 block[4] 0" "sif keep2 block[5] 0"
done

# A directory's second extent moved past a gap: e2fsck offers the next logical cluster, at the
# block's offset in its physical cluster.  Only that question is compared: after the answer no,
# e2fsck also reports the gap's blocks in pass 2, which e4fsck does not yet (bigalloc or not).
base="$T/4k-16k.img"
dir=$(first_block "$base" d)
cp "$base" "$T/dmg.img"
printf '%s\n' "sif d block[0] $((0xF30A + (2 << 16)))" "sif d block[4] 1" "sif d block[6] 9" "sif d block[7] 1" \
	"sif d block[8] $((dir + 1))" | debugfs -w -f - "$T/dmg.img" >/dev/null 2>&1
e2fsck -fn "$T/dmg.img" 2>&1 | grep "should be at block" >"$T/e2.line" || true
"$E4FSCK" -fn "$T/dmg.img" 2>&1 | grep "should be at block" >"$T/e4.line" || true
if [ -s "$T/e2.line" ] && cmp -s "$T/e2.line" "$T/e4.line"; then
	pass "a directory's extent after a gap: $(cat "$T/e4.line")"
else
	bad "a directory's extent after a gap: e2fsck '$(cat "$T/e2.line")', e4fsck '$(cat "$T/e4.line")'"
fi

# Values in EA inodes are charged to their owner in whole clusters (debugfs charges nothing:
# both checkers ask about the owners' i_blocks).
rm -f "$T/ea.img"
if mke2fs -q -F -t ext4 -b 4096 -O bigalloc,ea_inode -C 16384 -g 1024 -I 256 "$T/ea.img" 48M >/dev/null 2>&1; then
	head -c 9000 /dev/urandom >"$T/bigvalue"
	printf '%s\n' "write $T/small f" "ea_set -f $T/bigvalue f user.huge" "write $T/small g" \
		"ea_set -f $T/value g user.mid" "ea_set -f $T/bigvalue g user.huge2" |
		debugfs -w -f - "$T/ea.img" >/dev/null 2>&1
	same "values in EA inodes, -fn" "$T/ea.img" -fn
else
	echo "SKIP values in EA inodes: mke2fs cannot make bigalloc with ea_inode"
fi

# The superblock's free count alone: e2fsck -fn corrects it silently, in the units of blocks.
base="$T/4k-16k.img"
damage_quiet() {
	cp "$base" "$T/dmg.img"
	debugfs -w -R "ssv free_blocks_count 1000" "$T/dmg.img" >/dev/null 2>&1
	same "4k-16k: the superblock's free count, -fn" "$T/dmg.img" -fn
}
damage_quiet

# Random damage on the 16 KiB-cluster image: no crash, no change, no false "clean".
damage_py="$top_srcdir/tests/tools/damage.py"
if python3 "$damage_py" meta "$base" >"$T/base.meta" 2>"$T/meta.err"; then
	nseeds=${T3933_SEEDS:-20} equal=0 total=0
	for seed in $(seq 1 "$nseeds"); do
		python3 "$damage_py" damage "$base" "$T/base.meta" "$seed" "$T/rnd.img" --tag bigalloc >"$T/what" 2>&1 ||
			{ bad "seed $seed: damage.py failed"; continue; }
		mkdir -p "$T/e2" "$T/e4"
		cp "$T/rnd.img" "$T/e2/t.img"
		cp "$T/rnd.img" "$T/e4/t.img"
		e2=0; (cd "$T/e2" && timeout 60 e2fsck -fn t.img) >"$T/e2.out" 2>&1 || e2=$?
		e4=0; (cd "$T/e4" && timeout 60 "$E4FSCK" -fn t.img) >"$T/e4.out" 2>&1 || e4=$?
		total=$((total + 1))
		if [ "$e4" -ge 64 ]; then
			bad "seed $seed: e4fsck -fn exit $e4"; cat "$T/what"
		elif ! cmp -s "$T/rnd.img" "$T/e4/t.img"; then
			bad "seed $seed: e4fsck -fn changed the image"
		elif [ "$e4" = 0 ] && [ "$e2" != 0 ]; then
			bad "seed $seed: e4fsck -fn says clean, e2fsck exits $e2"; cat "$T/what"
		fi
		sed -i '/^e[24]fsck [0-9]/d' "$T/e2.out" "$T/e4.out"
		if [ "$e2" = "$e4" ] && cmp -s "$T/e2.out" "$T/e4.out"; then equal=$((equal + 1)); fi
	done
	echo "random damage: $equal of $total outputs equal to e2fsck's"
else
	echo "SKIP random damage: damage.py cannot list the metadata ($(head -1 "$T/meta.err"))"
fi

[ "$failed" = 0 ] || fail "some bigalloc checks differ from e2fsck's"
echo "PASS t3933-e4fsck-bigalloc"
