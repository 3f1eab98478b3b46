#!/bin/bash
# tests/lib/make-images.sh - build the integration-test image corpus.
#
# usage: make-images.sh OUTDIR [--quick] [--force] [--no-kernel] [--only NAME]... [--list]
#
#   OUTDIR       where NAME.img (and NAME.info, a short description) go.
#                An image whose NAME.img exists and whose NAME.info has the
#                current recipe version and build method is reused (cache).
#                Images are built under a temp name, checked with
#                "e2fsck -fn" and renamed into place only when complete.
#   --quick      build only a small subset (for fast runs)
#   --force      rebuild even when a cached image looks complete
#   --no-kernel  do not use loop mounts even when we could (use mke2fs -d)
#   --only NAME  build only NAME (repeatable)
#   --list       print the names and descriptions of the images that
#                would be built (honours --quick and --only), build nothing
#
# Each image is made by mke2fs with a fixed UUID, hash seed and time
# (E2FSPROGS_FAKE_TIME) from a private mke2fs.conf, so the empty file
# systems are reproducible.  They are then populated through the kernel
# over a loop mount (needs root); the file data is deterministic but the
# kernel's allocation decisions and timestamps are not.  Without root or
# loop devices the same tree (what can be made without the kernel) is
# put in with "mke2fs -d" instead, and the script says so.
#
# Images are populated in /dev/shm when it has room (set
# EXT4FS_IMAGE_WORKDIR to choose another place).
#
# Prints one line per image, and a summary line.

set -eu

# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname -- "$0")/common.sh"
# shellcheck source-path=SCRIPTDIR source=image-build.sh
. "$(dirname -- "$0")/image-build.sh"

CORPUS_VERSION=1
FAKE_TIME=1700000000   # 2023-11-14 22:13:20 UTC

usage() {
	sed -n '4,16s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

OUTDIR=""
QUICK=""
FORCE=""
NO_KERNEL=""
LIST=""
ONLY=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--force) FORCE=1 ;;
	--no-kernel) NO_KERNEL=1 ;;
	--list) LIST=1 ;;
	--only)
		[ $# -ge 2 ] || usage
		ONLY+=("$2")
		shift
		;;
	--only=*) ONLY+=("${1#--only=}") ;;
	-h | --help) usage ;;
	-*) echo "make-images.sh: unknown option $1" >&2; usage ;;
	*)
		[ -z "$OUTDIR" ] || usage
		OUTDIR=$1
		;;
	esac
	shift
done

ALL_IMAGES=(
	ext2-1k ext3-2k ext4-4k ext4-1k ext4-nocsum-uninit ext4-no64bit
	ext4-noflex-2k ext4-inline ext4-csumseed-orphan ext4-dense-i4096
	ext4-i128-nojournal ext4-i1024-eainode ext4-bigalloc
)
QUICK_IMAGES=(ext2-1k ext4-4k ext4-1k)

# ---------------------------------------------------------------- recipes
#
# recipe NAME sets:
#   SIZE      image size (sparse file)
#   MKFS      mke2fs arguments (array), besides the common ones
#   EXT       1 if files use extents (fallocate, punch work)
#   BS        block size
#   BIG_KIB   size of big/large
#   NHTREE    entries in the big directory
#   FRAG_N    blocks appended to each of the two interleaved files
#   PUNCH_N   blocks in frag/punched (every other one punched out)
#   XBIG      size of the large xattr value (goes to an xattr block)
#   XHUGE     size of an extra huge xattr value (ea_inode), 0 = none
#   DESC      one-line description
recipe() {
	EXT=1 BIG_KIB=4096 NHTREE=1000 FRAG_N=40 PUNCH_N=64 XHUGE=0 MKFS=()
	case $1 in
	ext2-1k)
		SIZE=64M BS=1024 EXT=0 BIG_KIB=8192 NHTREE=5000 FRAG_N=100 PUNCH_N=128
		MKFS=(-t ext2 -b 1024 -I 128 -i 4096 -O ^dir_index)
		DESC="ext2, 1k blocks, 128-byte inodes, indirect block maps (incl. triple indirect), no dir_index: linear 5000-entry dir"
		;;
	ext3-2k)
		SIZE=64M BS=2048 EXT=0 NHTREE=3000
		MKFS=(-t ext3 -b 2048 -I 256 -i 4096)
		DESC="ext3, 2k blocks, journal, indirect block maps, htree dirs"
		;;
	ext4-4k)
		SIZE=128M BS=4096 BIG_KIB=40960 NHTREE=5000 FRAG_N=100 PUNCH_N=256
		MKFS=(-t ext4 -b 4096 -I 256 -i 8192)
		DESC="ext4 defaults (metadata_csum, 64bit, flex_bg), 4k blocks, 40 MiB file, 5000-entry htree"
		;;
	ext4-1k)
		SIZE=64M BS=1024 BIG_KIB=8192 NHTREE=5000 FRAG_N=200 PUNCH_N=1200
		MKFS=(-t ext4 -b 1024 -I 256 -i 4096)
		DESC="ext4 defaults, 1k blocks, extent trees of depth 1 and 2, two-level htree"
		;;
	ext4-nocsum-uninit)
		SIZE=48M BS=4096
		MKFS=(-t ext4 -b 4096 -I 256 -i 8192 -g 2048 -O "^metadata_csum,uninit_bg")
		DESC="ext4 with uninit_bg (crc16 group checksums) instead of metadata_csum, 6 groups"
		;;
	ext4-no64bit)
		SIZE=48M BS=4096
		MKFS=(-t ext4 -b 4096 -I 256 -i 8192 -g 2048 -O ^64bit)
		DESC="ext4 without 64bit: 32-byte group descriptors, 6 groups"
		;;
	ext4-noflex-2k)
		SIZE=64M BS=2048
		MKFS=(-t ext4 -b 2048 -I 256 -i 8192 -g 4096 -O ^flex_bg)
		DESC="ext4 without flex_bg, 2k blocks, 8 groups with their own bitmaps/tables"
		;;
	ext4-inline)
		SIZE=32M BS=4096
		MKFS=(-t ext4 -b 4096 -I 256 -i 4096 -O inline_data)
		DESC="ext4 with inline_data: tiny files and small dirs stored in the inode"
		;;
	ext4-csumseed-orphan)
		SIZE=32M BS=4096
		MKFS=(-t ext4 -b 4096 -I 256 -i 4096 -O "metadata_csum_seed${ORPHAN_FILE:+,$ORPHAN_FILE}")
		DESC="ext4 with metadata_csum_seed${ORPHAN_FILE:+ and orphan_file}"
		;;
	ext4-dense-i4096)
		SIZE=64M BS=4096 NHTREE=5000
		MKFS=(-t ext4 -b 4096 -I 256 -i 4096)
		DESC="ext4, 4k blocks, 256-byte inodes, one inode per 4 KiB (full inode tables)"
		;;
	ext4-i128-nojournal)
		SIZE=32M BS=4096
		MKFS=(-t ext4 -b 4096 -I 128 -i 4096 -O ^has_journal)
		DESC="ext4, 128-byte inodes (no extra fields, xattrs only in blocks), no journal"
		;;
	ext4-i1024-eainode)
		SIZE=32M BS=4096 XHUGE=20000
		MKFS=(-t ext4 -b 4096 -I 1024 -i 8192 -O ea_inode)
		DESC="ext4, 1024-byte inodes (big in-inode xattr area), ea_inode with a 20000-byte xattr value"
		;;
	ext4-bigalloc)
		SIZE=64M BS=4096
		MKFS=(-t ext4 -b 4096 -C 16384 -I 256 -i 8192 -O bigalloc)
		DESC="ext4 with bigalloc, 16 KiB clusters"
		;;
	*)
		return 1
		;;
	esac
	if [ "$BS" -ge 4096 ]; then
		XBIG=3000
	elif [ "$BS" -ge 2048 ]; then
		XBIG=1500
	else
		XBIG=700
	fi
}

# ---------------------------------------------------------------- helpers

image_index() {
	local i
	for i in "${!ALL_IMAGES[@]}"; do
		if [ "${ALL_IMAGES[i]}" = "$1" ]; then
			echo $((i + 1))
			return 0
		fi
	done
	return 1
}

# fill TAG BYTES: deterministic, position-dependent, per-file-distinct data.
# Every 16-byte record holds TAG and its own record number.
fill() {
	local tag bytes=$2
	[ "$bytes" -gt 0 ] || return 0
	printf -v tag '%-4.4s' "$1"
	seq -f "$tag%011.0f" 0 $((bytes / 16 + 1)) | head -c "$bytes"
}

# fill_at FILE TAG OFFSET BYTES: write data at OFFSET without truncating.
fill_at() {
	fill "$2" "$4" | dd of="$1" bs=4096 seek="$3" oflag=seek_bytes conv=notrunc status=none
}

# ksync FILE: in kernel mode, force block allocation (delalloc) for FILE
# now, so that interleaved appends really get interleaved blocks.
ksync() {
	if [ "$POP_MODE" = kernel ]; then
		sync -- "$1" 2>/dev/null || sync
	fi
}

# xset NAME VALUE FILE: set an xattr ("" = empty value).  Must work on
# the mounted image; best effort in a staging dir, whose file system may
# not take it (e.g. a value bigger than its block size).
xset() {
	local v=()
	[ -z "$2" ] || v=(-v "$2")
	if ! setfattr -n "$1" "${v[@]}" -- "$3" 2>/dev/null; then
		if [ "$POP_MODE" = kernel ]; then
			fail "setfattr -n $1 failed on the mounted image"
		fi
		note "could not set xattr $1 (${#2} bytes) on ${3##*/} in the staging dir; skipped"
	fi
}

# populate ROOT MODE: build the test tree under ROOT.
# MODE is "kernel" (ROOT is the mounted image) or "staging" (a plain
# directory for mke2fs -d; some steps are then best effort or skipped).
populate() {
	local r=$1 i d g hb name target
	local root=""
	POP_MODE=$2
	[ "$(id -u)" = 0 ] && root=1

	# Tiny files: inline-data boundaries (60 bytes of i_block; ~ +72 in
	# the in-inode system.data xattr on 256-byte inodes) and block edges.
	mkdir "$r/tiny"
	for i in 0 1 59 60 61 100 132 133 160 $((BS - 1)) "$BS" $((BS + 1)); do
		fill "t$i" "$i" >"$r/tiny/size-$i"
	done
	: >"$r/empty"                # empty file, empty extent tree on ext4
	mkdir "$r/empty-dir"

	# A large file.
	mkdir "$r/big"
	fill big "$((BIG_KIB * 1024))" >"$r/big/large"

	# Sparse files: holes at the start, in the middle, at the end.
	mkdir "$r/sparse"
	fill_at "$r/sparse/hole-start" hs $((1024 * 1024)) 5000
	fill_at "$r/sparse/hole-middle" hm 0 $((3 * BS))
	fill_at "$r/sparse/hole-middle" hm $((2 * 1024 * 1024)) $((2 * BS + 100))
	fill_at "$r/sparse/hole-end" he 0 $((BS + 10))
	truncate -s 3M "$r/sparse/hole-end"
	truncate -s 10M "$r/sparse/all-hole"
	# A few blocks far out: reaches the triple-indirect map with 1k
	# blocks (starts at 12+256+65536 blocks, ~64.3 MiB).
	fill_at "$r/sparse/far" fa 0 100
	fill_at "$r/sparse/far" fa $((70 * 1024 * 1024)) $((BS + 1))
	fill_at "$r/sparse/far" fa $((100 * 1024 * 1024 + 12345)) 777

	# Preallocated / unwritten extents.
	if [ "$EXT" = 1 ]; then
		mkdir "$r/prealloc"
		if fallocate -l 1M "$r/prealloc/unwritten" 2>/dev/null; then
			fallocate -l 256K "$r/prealloc/mixed"
			fill_at "$r/prealloc/mixed" mx 65536 $((BS + 7))
			fill "ks" 10 >"$r/prealloc/keep-size"
			fallocate -n -l 64K "$r/prealloc/keep-size"
			: >"$r/prealloc/past-eof-only"
			fallocate -n -o 1M -l 64K "$r/prealloc/past-eof-only"
			ksync "$r/prealloc/mixed"
		elif [ "$POP_MODE" = kernel ]; then
			fail "fallocate does not work on the mounted image"
		else
			rm -f "$r/prealloc/unwritten"
		fi
	fi

	# Fragmented files: two files appended in interleaved one-block
	# chunks, each append forced to disk, so their blocks alternate.
	mkdir "$r/frag"
	for ((i = 0; i < FRAG_N; i++)); do
		fill "a$i" "$BS" >>"$r/frag/a"
		ksync "$r/frag/a"
		fill "b$i" "$BS" >>"$r/frag/b"
		ksync "$r/frag/b"
	done
	# A file with every other block punched out: PUNCH_N/2 extents
	# (depth 2 on ext4-1k), or a sparse block map without extents.
	# In a staging dir, holes must be whole blocks of the staging file
	# system (mke2fs -d keeps holes): punch in units of its block size.
	if [ "$PUNCH_N" -gt 0 ]; then
		g=$BS
		if [ "$POP_MODE" != kernel ]; then
			hb=$(stat -f -c %S -- "$r" 2>/dev/null) || hb=$BS
			[ "$hb" -le "$g" ] || g=$hb
		fi
		fill pun "$((PUNCH_N * g))" >"$r/frag/punched"
		ksync "$r/frag/punched"
		for ((i = 1; i < PUNCH_N; i += 2)); do
			if ! fallocate -p -o $((i * g)) -l "$g" "$r/frag/punched" 2>/dev/null; then
				if [ "$POP_MODE" = kernel ]; then
					fail "fallocate -p failed on the mounted image"
				fi
				break
			fi
		done
	fi

	# Directories: a big one (htree where dir_index is on), one with
	# holes left by deleted entries, and a deep path.
	# (mke2fs -d inserts entries one by one, in quadratic time: fewer there.)
	local nht=$NHTREE
	if [ "$POP_MODE" != kernel ] && [ "$nht" -gt 2000 ]; then
		nht=2000
	fi
	mkdir "$r/htree"
	(
		cd "$r/htree"
		for ((i = 0; i < nht; i++)); do
			printf -v name 'entry-%05d-with-a-fairly-long-name-to-fill-directory-blocks' "$i"
			: >"$name"
		done
	)
	mkdir "$r/holes"
	(
		cd "$r/holes"
		for ((i = 0; i < 600; i++)); do
			: >"file-$i-padding-padding"
		done
		for ((i = 0; i < 600; i += 3)); do
			rm -f "file-$i-padding-padding"
		done
	)
	d="$r/deep"
	for ((i = 1; i <= 30; i++)); do
		d="$d/level-$i"
	done
	mkdir -p "$d"
	fill leaf 123 >"$d/leaf"

	# Names.
	mkdir "$r/names"
	fill sp 10 >"$r/names/with space"
	fill ut 10 >"$r/names/café-ünïcødé"
	name=$(printf 'n%.0s' {1..255})
	fill lg 10 >"$r/names/$name"
	fill dh 10 >"$r/names/-dash"
	fill dt 10 >"$r/names/.hidden"

	# Symlinks: fast (< 60 bytes, in i_block) and slow (a block).
	mkdir "$r/links"
	ln -s ../tiny/size-1 "$r/links/fast"
	ln -s /nonexistent/dangling "$r/links/dangling"
	ln -s ../deep "$r/links/to-dir"
	for i in 59 60 61 200; do
		target=$(printf 'x%.0s' $(seq 1 "$i"))
		ln -s "$target" "$r/links/len-$i"
	done
	target=$(printf 'long/%.0s' $(seq 1 190))   # 950 bytes, fits any block
	ln -s "$target" "$r/links/slow-long"

	# Hard links: three names for one inode, in different directories.
	mkdir "$r/hardlinks"
	fill hl 3000 >"$r/hardlinks/one"
	ln "$r/hardlinks/one" "$r/hardlinks/two"
	ln "$r/hardlinks/one" "$d/third-link"

	# Extended attributes.
	mkdir "$r/xattr"
	if command -v setfattr >/dev/null 2>&1 &&
		setfattr -n user.probe -v 1 "$r/xattr" 2>/dev/null; then
		setfattr -x user.probe "$r/xattr"
		xset user.dir "on a directory" "$r/xattr"
		fill xs 10 >"$r/xattr/small"
		xset user.x small "$r/xattr/small"
		fill xb 10 >"$r/xattr/big"
		xset user.big "$(fill XB "$XBIG")" "$r/xattr/big"
		xset user.tiny t "$r/xattr/big"
		fill xm 10 >"$r/xattr/mixed"
		for ((i = 0; i < 12; i++)); do
			xset "user.attr$i" "$(fill "m$i" 40)" "$r/xattr/mixed"
		done
		for i in 1 2; do
			fill "s$i" 10 >"$r/xattr/shared$i"
			xset user.shared "$(fill SH 300)" "$r/xattr/shared$i"
		done
		fill xe 10 >"$r/xattr/empty-value"
		xset user.empty "" "$r/xattr/empty-value"
		if [ -n "$root" ]; then
			fill xt 10 >"$r/xattr/trusted"
			xset trusted.t trusted-value "$r/xattr/trusted"
			xset security.s security-value "$r/xattr/trusted"
		fi
		if [ "$XHUGE" -gt 0 ]; then
			fill xh 10 >"$r/xattr/huge"
			xset user.huge "$(fill XH "$XHUGE")" "$r/xattr/huge"
		fi
	else
		note "xattrs not supported here (install 'attr' for setfattr); none added"
	fi

	# Special files.
	mkdir "$r/special"
	mkfifo "$r/special/fifo"
	if [ -n "$root" ]; then
		mknod "$r/special/null" c 1 3
		mknod "$r/special/loop0" b 7 0
		mknod "$r/special/big-dev" c 300 70000   # new (large) encoding
	fi

	# Owners, modes, times.
	mkdir "$r/attrs"
	for i in 0000 0755 4755 2755 1777 0600; do
		fill "m$i" 10 >"$r/attrs/mode-$i"
		# (mke2fs -d must be able to read it back)
		if [ -n "$root" ] || [ "$i" != 0000 ]; then
			chmod "$i" "$r/attrs/mode-$i"
		fi
	done
	if [ -n "$root" ]; then
		chown 1234:5678 "$r/attrs/mode-0755"
		chown 70000:70001 "$r/attrs/mode-0600"   # needs the high uid/gid halves
	fi
	fill tm 10 >"$r/attrs/time-1960"
	touch -h -d @-315619200 "$r/attrs/time-1960"
	fill tm 10 >"$r/attrs/time-2100"
	touch -h -d @4102444800 "$r/attrs/time-2100"
	fill tm 10 >"$r/attrs/time-nsec"
	touch -h -d @1234567890.123456789 "$r/attrs/time-nsec"

	# Something in lost+found.
	mkdir -p "$r/lost+found"
	fill lf 5000 >"$r/lost+found/#4242"
	mkdir "$r/lost+found/recovered-dir"
	fill lr 10 >"$r/lost+found/recovered-dir/file"
}

# ---------------------------------------------------------------- build

# build_one NAME: build OUTDIR/NAME.img; prints one line.
build_one() {
	local name=$1 idx uuid seed tmp work info start secs log
	recipe "$name" || fail "no recipe for image '$name'"
	idx=$(image_index "$name")
	uuid=$(printf '6ea4f5e0-c0de-4e57-8000-%012d' "$idx")
	seed=$(printf '6ea4f5e0-5eed-4e57-8000-%012d' "$idx")
	tmp="$OUTDIR/.$name.img.tmp.$$"
	work="$WORKDIR/$name.img"
	info="$OUTDIR/$name.info"
	log="$T/$name.log"
	start=$SECONDS

	# A cached image is good if it is from this recipe version and was
	# made the same way (a kernel-populated one is also fine when we can
	# only do mke2fs -d now).
	if [ -z "$FORCE" ] && [ -f "$OUTDIR/$name.img" ] && [ -f "$info" ] &&
		{ grep -qxF "recipe: v$CORPUS_VERSION $METHOD" "$info" ||
			grep -qxF "recipe: v$CORPUS_VERSION kernel" "$info"; }; then
		printf 'cached %-22s %s\n' "$name.img" "$DESC"
		return 0
	fi

	rm -f -- "$tmp" "$work"
	at_exit "rm -f -- '$tmp' '$work'"
	run_mkfs "$work" "corpus-$idx" || fail "mke2fs failed for $name"
	populate_image "$name" "$work" "corpus-$idx" /mnt/corpus
	cp --sparse=always -- "$work" "$tmp"
	rm -f -- "$work"

	if ! e2fsck -fn "$tmp" >"$log" 2>&1; then
		cat "$log" >&2
		mv -f -- "$tmp" "$OUTDIR/$name.img.failed"
		fail "e2fsck -fn found problems in $name (kept as $OUTDIR/$name.img.failed)"
	fi

	{
		printf 'recipe: v%s %s\n' "$CORPUS_VERSION" "$METHOD"
		printf 'description: %s\n' "$DESC"
		printf 'mke2fs: %s -U %s -E hash_seed=%s (E2FSPROGS_FAKE_TIME=%s)\n' \
			"${MKFS[*]}" "$uuid" "$seed" "$FAKE_TIME"
		printf 'size: %s, block size %s\n' "$SIZE" "$BS"
	} >"$info.tmp.$$"
	mv -f -- "$info.tmp.$$" "$info"
	mv -f -- "$tmp" "$OUTDIR/$name.img"
	secs=$((SECONDS - start))
	printf 'built  %-22s %s (%s, %ss)\n' "$name.img" "$DESC" "$METHOD" "$secs"
}

# ---------------------------------------------------------------- main

ORPHAN_FILE=orphan_file   # cleared below if this mke2fs lacks it


if [ ${#ONLY[@]} -gt 0 ]; then
	SELECTED=("${ONLY[@]}")
elif [ -n "$QUICK" ]; then
	SELECTED=("${QUICK_IMAGES[@]}")
else
	SELECTED=("${ALL_IMAGES[@]}")
fi
for n in "${SELECTED[@]}"; do
	recipe "$n" || { echo "make-images.sh: no image named '$n'" >&2; exit 2; }
	if [ -n "$LIST" ]; then
		printf '%-22s %s\n' "$n" "$DESC"
	fi
done
[ -z "$LIST" ] || exit 0

[ -n "$OUTDIR" ] || usage
need_cmd mke2fs e2fsck seq truncate
mkdir -p -- "$OUTDIR"
OUTDIR=$(cd -- "$OUTDIR" && pwd -P)
make_tmpdir
write_mke2fs_conf "$T/mke2fs.conf"

# Finished images are copied (sparse) to OUTDIR.
pick_workdir ext4fs-images 1048576

# orphan_file needs e2fsprogs 1.47; drop it (and say so) if unknown.
truncate -s 8M "$T/probe.img"
if ! MKE2FS_CONFIG=$T/mke2fs.conf mke2fs -F -q -t ext4 -O orphan_file "$T/probe.img" >/dev/null 2>&1; then
	ORPHAN_FILE=""
	echo "note: this mke2fs does not know orphan_file; ext4-csumseed-orphan is built without it"
fi
rm -f "$T/probe.img"

pick_method
lock_outdir .lock

built_start=$SECONDS
for n in "${SELECTED[@]}"; do
	build_one "$n"
done
echo "corpus: ${#SELECTED[@]} images in $OUTDIR ($((SECONDS - built_start))s)"
