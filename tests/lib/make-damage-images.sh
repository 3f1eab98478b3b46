#!/bin/bash
# tests/lib/make-damage-images.sh - build the small images that
# t3970-e4fsck-random-damage.sh damages at random, with a list of each
# one's metadata blocks.
#
# usage: make-damage-images.sh OUTDIR [--force] [--no-kernel] [--only NAME]... [--list]
#
#   OUTDIR       where dmg-NAME.img, dmg-NAME.meta (its metadata blocks,
#                tests/tools/damage.py's "meta" format) and dmg-NAME.info go.
#                An image whose .info has the current recipe version and
#                build method is reused (cache).
#   --force      rebuild even when a cached image looks complete
#   --no-kernel  do not use loop mounts even when we could (use mke2fs -d)
#   --only NAME  build only NAME (repeatable; NAME as in --list)
#   --list       print the names and descriptions, build nothing
#
# Each image is made by mke2fs with a fixed UUID, hash seed and time, then
# populated through the kernel over a loop mount, so that block maps,
# extent trees, directories and shared attribute blocks are laid out as
# the kernel lays them out (the kernel's choices and timestamps make the
# bytes differ from one build to the next).  Without root or loop devices
# the same tree goes in with "mke2fs -d" instead, and the script says so;
# such images have no interleaved (fragmented) files.
#
# The images are small (16 MiB) so that checking one takes well under a
# second even in the sanitizer build, yet they reach what random damage
# should reach: indirect maps down to triple indirect (sparse files far
# out), extent trees of depth 1 and 2, an htree directory, slow symlinks,
# hard links and attribute blocks, one shared by two files.
#
# Prints one line per image and a summary line.

set -eu

# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname -- "$0")/common.sh"
# shellcheck source-path=SCRIPTDIR source=image-build.sh
. "$(dirname -- "$0")/image-build.sh"

# Bump when a recipe or the metadata list changes: cached images are rebuilt.
DAMAGE_CORPUS_VERSION=1
FAKE_TIME=1700000000

usage() {
	sed -n '6,14s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

OUTDIR="" FORCE="" NO_KERNEL="" LIST="" ONLY=()
while [ $# -gt 0 ]; do
	case $1 in
	--force) FORCE=1 ;;
	--no-kernel) NO_KERNEL=1 ;;
	--list) LIST=1 ;;
	--only)
		[ $# -ge 2 ] || usage
		ONLY+=("$2")
		shift
		;;
	-h | --help) usage ;;
	-*) echo "make-damage-images.sh: unknown option $1" >&2; usage ;;
	*)
		[ -z "$OUTDIR" ] || usage
		OUTDIR=$1
		;;
	esac
	shift
done

ALL_IMAGES=(ext2-1k ext2-4k ext3-1k ext3-4k ext4-1k ext4-4k)

# recipe NAME sets SIZE, BS, EXT (1: extent-mapped files), MKFS (mke2fs
# arguments besides the common ones) and DESC.  Groups are made smaller
# than the default so that even 16 MiB holds several, with backup
# superblocks and descriptors, and (without flex_bg) bitmaps and inode
# tables in more than one place.
recipe() {
	SIZE=16M EXT=0
	case $1 in
	ext2-1k)
		BS=1024 MKFS=(-t ext2 -b 1024 -I 128 -i 4096 -g 2048)
		DESC="ext2, 1k blocks, 128-byte inodes, 8 groups; indirect maps to triple indirect"
		;;
	ext2-4k)
		BS=4096 MKFS=(-t ext2 -b 4096 -I 256 -i 8192 -g 1024)
		DESC="ext2, 4k blocks, 4 groups; indirect maps to triple indirect (sparse, past 4 GiB)"
		;;
	ext3-1k)
		BS=1024 MKFS=(-t ext3 -b 1024 -I 256 -i 4096 -g 2048)
		DESC="ext3, 1k blocks, 8 groups, journal; indirect maps, htree"
		;;
	ext3-4k)
		BS=4096 MKFS=(-t ext3 -b 4096 -I 256 -i 8192 -g 1024)
		DESC="ext3, 4k blocks, 4 groups, journal; indirect maps, htree"
		;;
	ext4-1k)
		BS=1024 EXT=1 MKFS=(-t ext4 -b 1024 -I 256 -i 4096 -g 2048)
		DESC="ext4 defaults (metadata_csum, flex_bg, 64bit), 1k blocks; extent trees of depth 1 and 2"
		;;
	ext4-4k)
		BS=4096 EXT=1 MKFS=(-t ext4 -b 4096 -I 256 -i 8192 -g 1024)
		DESC="ext4 defaults (metadata_csum, flex_bg, 64bit), 4k blocks; extent trees of depth 1"
		;;
	*) return 1 ;;
	esac
}

image_index() {
	local i
	for i in "${!ALL_IMAGES[@]}"; do
		[ "${ALL_IMAGES[i]}" = "$1" ] && { echo $((i + 1)); return 0; }
	done
	return 1
}

# data TAG BYTES: deterministic bytes, different for each TAG.
data() {
	[ "$2" -gt 0 ] || return 0
	yes "$1-$1-$1-$1-$1-$1-$1" | head -c "$2"
}

# put_at FILE TAG OFFSET BYTES: write BYTES of data at OFFSET, keeping the rest.
put_at() {
	data "$2" "$4" | dd of="$1" bs=65536 seek="$3" oflag=seek_bytes conv=notrunc status=none
}

# Make the kernel allocate now (delayed allocation would otherwise give the
# interleaved appends below neighbouring runs of blocks).
ksync() {
	[ "$POP_MODE" = kernel ] && { sync -- "$1" 2>/dev/null || sync; }
	return 0
}

# populate ROOT MODE: the tree, in the mounted image (MODE kernel) or in a
# staging directory for mke2fs -d (MODE staging).
populate() {
	local r=$1 i n name
	POP_MODE=$2
	# Blocks per indirect block, and where the double- and triple-indirect
	# maps begin (in bytes): 1k blocks: 268 KiB and ~64.3 MiB; 4k blocks:
	# ~4.05 MiB and ~4.004 GiB.
	local per=$((BS / 4))
	local dind=$(((12 + per) * BS)) tind=$(((12 + per + per * per) * BS))

	: >"$r/empty"
	mkdir "$r/empty-dir"

	# Regular files around the block size and the direct/indirect edges.
	mkdir "$r/files"
	for n in 1 100 $((BS - 1)) "$BS" $((BS + 1)) $((12 * BS)) $((13 * BS + 5)) 40000 150000; do
		data "f$n" "$n" >"$r/files/size-$n"
	done
	# Real (not sparse) data through the double-indirect map with 1k
	# blocks; with 4k blocks this is just an indirect one.
	data big $((300 * 1024)) >"$r/files/big"

	# Sparse files whose blocks sit far out: the double- and triple-
	# indirect maps (on ext4, extents at large logical blocks).
	mkdir "$r/sparse"
	put_at "$r/sparse/dind" d1 0 100
	put_at "$r/sparse/dind" d2 $((dind + 5 * BS)) $((2 * BS))
	put_at "$r/sparse/dind" d3 $((dind + (per + 3) * BS)) 500
	put_at "$r/sparse/tind" t1 $((tind + 7 * BS)) "$BS"
	put_at "$r/sparse/tind" t2 $((tind + (per * per + per + 9) * BS)) 300
	# Several blocks under one triple-indirect block, each in its own
	# double- and single-indirect block.
	for i in 0 1 2 3; do
		put_at "$r/sparse/tind-wide" "w$i" $((tind + i * (per * per + 3) * BS)) 64
	done
	put_at "$r/sparse/hole-start" hs $((dind / 2)) 2000
	truncate -s $((2 * tind)) "$r/sparse/all-hole"

	# Fragmented files: interleaved appends, each forced out, so the
	# blocks of the two files alternate (many extents: a tree of depth 1
	# on ext4; interleaved pointers in indirect maps elsewhere).
	mkdir "$r/frag"
	for ((i = 0; i < 60; i++)); do
		data "a$i" "$BS" >>"$r/frag/a"
		ksync "$r/frag/a"
		data "b$i" "$BS" >>"$r/frag/b"
		ksync "$r/frag/b"
	done
	# Every other block punched: 350 extents, a tree of depth 2 with 1k
	# blocks (84 extents a leaf, 4 in the inode).
	if [ "$EXT" = 1 ]; then
		n=$((BS == 1024 ? 700 : 300))
		data pun $((n * BS)) >"$r/frag/punched"
		ksync "$r/frag/punched"
		for ((i = 1; i < n; i += 2)); do
			fallocate -p -o $((i * BS)) -l "$BS" "$r/frag/punched"
		done
		fallocate -l $((64 * BS)) "$r/frag/unwritten" 2>/dev/null || true
	fi

	# Directories: one big enough for an htree, a few small and nested.
	mkdir "$r/htree"
	for ((i = 0; i < 400; i++)); do
		printf -v name 'entry-%04d-with-a-long-name-so-that-the-directory-grows' "$i"
		: >"$r/htree/$name"
	done
	mkdir -p "$r/dirs/a/b/c" "$r/dirs/d" "$r/dirs/e"
	data nested 3000 >"$r/dirs/a/b/c/file"
	for i in 1 2 3 4 5; do data "s$i" $((i * 700)) >"$r/dirs/d/f$i"; done

	# Symlinks: fast (in i_block) and slow (a data block).
	mkdir "$r/links"
	ln -s ../files/size-1 "$r/links/fast"
	ln -s "$(printf 'x%.0s' $(seq 1 59))" "$r/links/fast-59"
	ln -s "$(printf 'y%.0s' $(seq 1 61))" "$r/links/slow-61"
	ln -s "$(printf 'dir/%.0s' $(seq 1 200))" "$r/links/slow-800"

	# Hard links: one inode, three names in three directories.
	data hard 5000 >"$r/files/hard"
	ln "$r/files/hard" "$r/dirs/d/hard2"
	ln "$r/files/hard" "$r/dirs/a/b/hard3"

	# Special files.
	mkfifo "$r/files/fifo"
	[ "$(id -u)" = 0 ] && mknod "$r/files/null" c 1 3

	# Extended attributes: in the inode (256-byte inodes), in a block, and
	# one block shared by two files (same names and values: the kernel
	# shares it).
	mkdir "$r/xattr"
	if command -v setfattr >/dev/null 2>&1; then
		data xs 10 >"$r/xattr/small"
		setfattr -n user.s -v small "$r/xattr/small"
		data xb 10 >"$r/xattr/block"
		setfattr -n user.big -v "$(data XB $((BS / 2)))" "$r/xattr/block"
		setfattr -n user.t -v t "$r/xattr/block"
		for i in 1 2; do
			data "sh$i" 10 >"$r/xattr/shared$i"
			setfattr -n user.shared -v "$(data SH 300)" "$r/xattr/shared$i"
			setfattr -n user.shared2 -v "$(data S2 200)" "$r/xattr/shared$i"
		done
		setfattr -n user.dir -v "$(data XD 400)" "$r/xattr"
	else
		note "setfattr is missing (package attr): no extended attributes in the images"
	fi
}

build_one() {
	local name=$1 idx uuid seed work info log start
	recipe "$name"
	idx=$(image_index "$name")
	uuid=$(printf '6ea4f5e0-da4a-4e57-8000-%012d' "$idx")
	seed=$(printf '6ea4f5e0-da5e-4e57-8000-%012d' "$idx")
	info="$OUTDIR/dmg-$name.info"
	log="$T/$name.log"
	work="$WORKDIR/$name.img"
	start=$SECONDS
	if [ -z "$FORCE" ] && [ -f "$OUTDIR/dmg-$name.img" ] && [ -f "$OUTDIR/dmg-$name.meta" ] &&
		[ -f "$info" ] && { grep -qxF "recipe: v$DAMAGE_CORPUS_VERSION $METHOD" "$info" ||
			grep -qxF "recipe: v$DAMAGE_CORPUS_VERSION kernel" "$info"; }; then
		printf 'cached dmg-%-10s %s\n' "$name.img" "$DESC"
		return 0
	fi
	at_exit "rm -f -- '$work'"
	run_mkfs "$work" "damage-$idx" || fail "mke2fs failed for $name"
	populate_image "$name" "$work" "damage-$idx" /mnt/damage
	if ! e2fsck -fn "$work" >"$log" 2>&1; then
		cat "$log" >&2
		fail "e2fsck -fn finds problems in the freshly built $name"
	fi
	python3 "$top_srcdir/tests/tools/damage.py" meta "$work" >"$T/$name.meta" ||
		fail "cannot list the metadata blocks of $name"
	if ! python3 "$top_srcdir/tests/tools/damage.py" selftest "$work" "$T/$name.meta" >"$log" 2>&1; then
		cat "$log" >&2
		cp --sparse=always -- "$work" "$OUTDIR/dmg-$name.img.failed"
		cp -- "$T/$name.meta" "$OUTDIR/dmg-$name.meta.failed"
		fail "damage.py's checksums disagree with $name's (kept as $OUTDIR/dmg-$name.img.failed)"
	fi
	{
		printf 'recipe: v%s %s\n' "$DAMAGE_CORPUS_VERSION" "$METHOD"
		printf 'description: %s\n' "$DESC"
		printf 'mke2fs: %s -U %s -E hash_seed=%s (E2FSPROGS_FAKE_TIME=%s)\n' \
			"${MKFS[*]}" "$uuid" "$seed" "$FAKE_TIME"
		printf 'metadata blocks: %s\n' "$(grep -vc '^#' "$T/$name.meta")"
	} >"$T/$name.info"
	# Image and list are renamed into place together, the .info last: a
	# crash in between leaves no .info, and the image is rebuilt.
	rm -f -- "$info"
	cp --sparse=always -- "$work" "$OUTDIR/.dmg-$name.img.tmp.$$"
	mv -f -- "$OUTDIR/.dmg-$name.img.tmp.$$" "$OUTDIR/dmg-$name.img"
	mv -f -- "$T/$name.meta" "$OUTDIR/dmg-$name.meta"
	mv -f -- "$T/$name.info" "$info"
	rm -f -- "$work"
	printf 'built  dmg-%-10s %s (%s, %ss)\n' "$name.img" "$DESC" "$METHOD" $((SECONDS - start))
}

if [ ${#ONLY[@]} -gt 0 ]; then SELECTED=("${ONLY[@]}"); else SELECTED=("${ALL_IMAGES[@]}"); fi
for n in "${SELECTED[@]}"; do
	recipe "$n" || { echo "make-damage-images.sh: no image named '$n'" >&2; exit 2; }
	[ -z "$LIST" ] || printf '%-8s %s\n' "$n" "$DESC"
done
[ -z "$LIST" ] || exit 0

[ -n "$OUTDIR" ] || usage
need_cmd mke2fs e2fsck dumpe2fs debugfs tune2fs python3 truncate
mkdir -p -- "$OUTDIR"
OUTDIR=$(cd -- "$OUTDIR" && pwd -P)
make_tmpdir
write_mke2fs_conf "$T/mke2fs.conf"

pick_workdir ext4fs-damage-images 262144
pick_method "(no interleaved files)"
lock_outdir .damage-lock

start_all=$SECONDS
for n in "${SELECTED[@]}"; do
	build_one "$n"
done
echo "damage corpus: ${#SELECTED[@]} images in $OUTDIR ($((SECONDS - start_all))s)"
