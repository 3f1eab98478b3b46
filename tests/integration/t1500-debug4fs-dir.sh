#!/bin/bash
# t1500-debug4fs-dir: compare debug4fs's directory and file-content commands
# (ls, htree_dump, dx_hash, dump_inode, rdump, cat) with e2fsprogs' debugfs.
#
# Builds a source tree (a 5000-entry directory, long names for a two-level
# htree on 1 KiB blocks, names with spaces / UTF-8 / high bytes / control
# characters, symlinks fast and slow, hard links, device nodes and fifos
# when root, empty, sparse and big files), makes several images from it
# with "mke2fs -d" (indexes built with "e2fsck -fD"), removes a few entries
# with "debugfs -w unlink" so that "ls -d" has deleted entries to show and,
# when loop mounts work, lets the kernel delete and create files too.
#
# For each image both tools run ONE command file ("-f") in their own
# working directory; the transcripts (version banner stripped) must be
# identical, and so must the trees that dump_inode / rdump wrote there
# (contents, names, modes, sizes, link targets, owners, mtimes to the
# second).  Then "cat" of every regular file is compared with
# 'debugfs -R "cat <ino>"', and the -j output is checked with
# "python3 -m json.tool".
#
# Deliberate differences (see debugfs/cmd_dir.c) that the checks allow for:
# inline-data files are written with i_size bytes (debugfs writes 60), and
# cat of a fast symlink prints its target (debugfs fails).
#
# Environment: DEBUG4FS (the tool), EXT4FS_KEEP_TMP=1 keeps the work dir.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

[ -n "$REAL_DEBUGFS" ] || skip "debugfs (e2fsprogs) not found"
[ -x "$DEBUG4FS" ] || skip "debug4fs is not built ($DEBUG4FS)"
need_cmd mke2fs e2fsck tune2fs truncate dd diff find sort cmp head

export TZ=UTC LC_ALL=C
make_tmpdir

PASSED=0
FAILED=0
IS_ROOT=""
[ "$(id -u)" = 0 ] && IS_ROOT=1
HAVE_PY=""
command -v python3 >/dev/null 2>&1 && HAVE_PY=1

ok() { PASSED=$((PASSED + 1)); }
bad() {
	FAILED=$((FAILED + 1))
	printf 'FAIL: %s\n' "$*"
}

# ------------------------------------------------------------ the source tree

SEED_UUID=4d3c2b1a-8f7e-6d5c-4b3a-29180f1e2d3c
LONG=$(printf 'L%.0s' $(seq 1 500))

make_source() {
	# make_source DIR FULL SPARSE_MB: FULL (0/1) adds the big directories;
	# the sparse file is SPARSE_MB long (70: triple indirect on 1k blocks).
	local s=$1 full=$2 sparse_mb=$3 i
	mkdir -p "$s/sub/deeper/deepest" "$s/empty" "$s/odd" "$s/files"
	echo hello >"$s/sub/with space"
	printf 'x' >"$s/sub/$(printf 'caf\xc3\xa9')"
	printf 'y' >"$s/sub/$(printf 'hi\xff\xfe')"
	printf 'b' >"$s/odd/back\\slash"
	printf 't' >"$s/odd/$(printf 'tab\there')"
	printf 'n' >"$s/odd/$(printf 'new\nline')"
	printf 'q' >"$s/odd/quote\"d"
	printf 'z' >"$s/odd/$(printf '%0255d' 7)"
	ln -s /etc/passwd "$s/sub/abs"
	ln -s "with space" "$s/sub/rel"
	ln -s "$(printf 'T%.0s' $(seq 1 59))" "$s/sub/fast59"
	ln -s "$(printf 'S%.0s' $(seq 1 60))" "$s/sub/slow60"
	ln -s "$LONG" "$s/sub/longlink"
	ln -s deeper "$s/sub/dirlink"
	echo hard >"$s/sub/h1"
	ln "$s/sub/h1" "$s/sub/h2"
	ln "$s/sub/h1" "$s/sub/deeper/h3"
	: >"$s/sub/emptyfile"
	: >"$s/files/zero"
	mkfifo "$s/sub/fifo" 2>/dev/null || true
	if [ -n "$IS_ROOT" ]; then
		mknod "$s/sub/cdev" c 4 5
		mknod "$s/sub/bdev" b 8 1
		chown 1234:5678 "$s/sub/with space" "$s/sub/deeper"
		chown 70000:70001 "$s/sub/h1"
	fi
	printf '%060d' 0 >"$s/files/sixty"
	printf '%0100d' 0 >"$s/files/hundred"
	printf '%03000d' 0 >"$s/files/threek"
	dd if=/dev/urandom of="$s/files/big" bs=1k count=3000 status=none
	truncate -s "${sparse_mb}M" "$s/files/sparse"
	echo start | dd of="$s/files/sparse" conv=notrunc status=none
	echo middle | dd of="$s/files/sparse" bs=1M seek=1 conv=notrunc status=none
	echo tail | dd of="$s/files/sparse" bs=1M seek=$((sparse_mb - 5)) conv=notrunc status=none
	truncate -s 5M "$s/files/allholes"
	echo deep >"$s/sub/deeper/deepest/x"
	chmod 4755 "$s/sub/h1"
	chmod 1777 "$s/sub/deeper"
	chmod 0600 "$s/files/big"
	chmod 0000 "$s/files/hundred"
	touch -d '2001-02-03 04:05:06' "$s/files/sixty"
	touch -d '2040-06-01 12:00:00' "$s/files/threek"
	if [ "$full" = 1 ]; then
		mkdir "$s/big" "$s/long" "$s/cf"
		for i in $(seq 1 5000); do : >"$s/big/file_$i"; done
		# High bytes hash differently with signed and unsigned hashes.
		for i in $(seq 1 50); do : >"$s/big/$(printf 'h\xe9\xff')_$i"; done
		# Mixed case for the casefolded directory (ASCII: see cmd_dir.c).
		for i in $(seq 1 300); do : >"$s/cf/Mixed_Case_$i"; done
		for i in $(seq 1 600); do : >"$s/long/$(printf '%0200d' "$i")"; done
	fi
}

SRC_FULL=$T/src-full
SRC_BIGSPARSE=$T/src-bigsparse
SRC_SMALL=$T/src-small
make_source "$SRC_FULL" 1 12
make_source "$SRC_BIGSPARSE" 1 70
make_source "$SRC_SMALL" 0 12

# ------------------------------------------------------------ images

# mkimg NAME SRC SIZE mke2fs-args...: make the image, index its directories.
mkimg() {
	local name=$1 src=$2 size=$3
	shift 3
	local img=$T/$name.img
	rm -f "$img"
	if ! mke2fs -q -F "$@" -d "$src" "$img" "$size" >"$T/$name.mkfs" 2>&1; then
		bad "$name: mke2fs $* failed: $(head -3 "$T/$name.mkfs")"
		return 1
	fi
	e2fsck -fyD "$img" >"$T/$name.fsck" 2>&1 || true
	return 0
}

# Remove some names the way debugfs does (the entry stays in the slack of
# its predecessor, or gets inode 0 when it is first in its block).
unlink_some() {
	"$REAL_DEBUGFS" -w -f - "$1" >/dev/null 2>&1 <<-'EOF' || true
	unlink /sub/h2
	unlink /sub/emptyfile
	unlink /sub/rel
	unlink /big/file_1
	unlink /big/file_10
	unlink /big/file_4999
	unlink /long/000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000017
	EOF
}

# Let the kernel delete and create entries (its deletions wipe the names).
kernel_changes() {
	local img=$1 mnt=$T/mnt i
	mkdir -p "$mnt"
	if ! loop_mount "$img" "$mnt"; then
		note "loop mount of $img failed; no kernel changes"
		return 0
	fi
	rm -f "$mnt/sub/h2" "$mnt/big/file_2" "$mnt/big/file_20"
	mkdir "$mnt/kdir"
	for i in $(seq 1 1500); do : >"$mnt/kdir/kernel_file_$i"; done
	rm -f "$mnt/kdir/kernel_file_7" "$mnt/kdir/kernel_file_77"
	echo "written by the kernel" >"$mnt/kdir/data"
	loop_umount "$mnt"
}

IMAGES=()
add_image() {
	# add_image NAME SRC SIZE args...
	if mkimg "$@"; then
		IMAGES+=("$1")
	fi
}

add_image ext4 "$SRC_FULL" 128M -t ext4 -b 4096
add_image ext4-1k "$SRC_FULL" 128M -t ext4 -b 1024 -N 16384
add_image ext2 "$SRC_BIGSPARSE" 128M -t ext2 -b 1024 -N 16384
add_image inline "$SRC_SMALL" 128M -t ext4 -O inline_data
add_image nocsum "$SRC_FULL" 128M -t ext4 -b 1024 -N 16384 -O ^metadata_csum,uninit_bg
add_image nodirindex "$SRC_FULL" 128M -t ext4 -O ^dir_index -E "hash_seed=$SEED_UUID"
add_image seeded "$SRC_FULL" 128M -t ext4 -b 1024 -N 16384 -E "hash_seed=$SEED_UUID"
if mkimg tea "$SRC_FULL" 128M -t ext4 -b 1024 -N 16384; then
	# Re-index with TEA and the unsigned variant of the hashes.
	tune2fs -E hash_alg=tea "$T/tea.img" >/dev/null 2>&1 || true
	"$REAL_DEBUGFS" -w -R "ssv flags 2" "$T/tea.img" >/dev/null 2>&1 || true
	e2fsck -fyD "$T/tea.img" >/dev/null 2>&1 || true
	IMAGES+=(tea)
fi
if mkimg legacy "$SRC_FULL" 128M -t ext4 -b 1024 -N 16384; then
	tune2fs -E hash_alg=legacy "$T/legacy.img" >/dev/null 2>&1 || true
	e2fsck -fyD "$T/legacy.img" >/dev/null 2>&1 || true
	IMAGES+=(legacy)
fi
if mkimg casefold "$SRC_FULL" 128M -t ext4 -O casefold; then
	"$REAL_DEBUGFS" -w -R "sif /cf flags 0x40081000" "$T/casefold.img" >/dev/null 2>&1 || true
	e2fsck -fyD "$T/casefold.img" >/dev/null 2>&1 || true
	IMAGES+=(casefold)
fi
if [ -f "$T/ext4.img" ]; then
	# A copy whose /sub claims to be encrypted (ls shows "<encrypted (n)>").
	cp "$T/ext4.img" "$T/encrypt.img"
	"$REAL_DEBUGFS" -w -R "sif /sub flags 0x80800" "$T/encrypt.img" >/dev/null 2>&1 || true
	IMAGES+=(encrypt)
fi

for name in "${IMAGES[@]}"; do
	unlink_some "$T/$name.img"
done
if have_root_loop && [ -f "$T/ext4.img" ]; then
	kernel_changes "$T/ext4.img"
else
	note "no kernel changes: $(root_loop_reason)"
fi

# ------------------------------------------------------------ command files

DIRS=(/ /sub /sub/deeper /big /long /cf /odd /files /empty /lost+found /kdir)
HASH_NAMES=(foo "with space" "$(printf 'caf\xc3\xa9')" "$(printf 'hi\xff\xfe')" file_1 "" "$LONG")

write_commands() {
	local f=$1 d n h
	{
		echo "ls"
		for d in "${DIRS[@]}"; do
			echo "ls $d"
			echo "ls -l $d"
			echo "ls -p $d"
			echo "ls -d $d"
			echo "ls -l -d $d"
			echo "ls -c $d"
			echo "ls -c -l -d $d"
			echo "ls -c -p $d"
			echo "ls -r $d"
			echo "list_directory -d -p $d"
		done
		echo "ls /sub/h1"
		echo "ls -l /sub/fifo"
		echo "ls /nonexistent"
		echo "ls -x /sub"
		echo "ls /sub /big"
		echo "cd /sub"
		echo "ls"
		echo "ls -l deeper"
		echo "cd /"
		for d in /big /long /cf /kdir /sub /files/big /nonexistent; do
			echo "htree $d"
		done
		echo "htree_dump /big"
		echo "htree"
		echo "htree /big /long"
		for h in legacy half_md4 tea 0 1 2 3 4 5 TEA HASHALG_2 99; do
			for n in "${HASH_NAMES[@]}"; do
				echo "dx_hash -h $h \"$n\""
				echo "dx_hash -h $h -s $SEED_UUID \"$n\""
			done
		done
		echo "dx_hash foo"
		echo "hash -s 00000000-0000-0000-0000-000000000000 -h half_md4 foo"
		echo "dx_hash -c -e utf8 FooBar"
		echo "dx_hash -e utf8 FooBar"
		echo "dx_hash -c FooBar"
		echo "dx_hash -s not-a-uuid foo"
		echo "dx_hash -e latin1 foo"
		echo "dx_hash"
		echo "dx_hash a b"
		echo "cat /sub/h1"
		echo "cat \"/sub/with space\""
		echo "cat /sub/deeper/deepest/x"
		echo "cat /files/threek"
		echo "cat /sub/emptyfile"
		echo "cat /sub/fifo"
		echo "cat /nonexistent"
		echo "cat"
		echo "dump /files/big out-big"
		echo "dump_inode -p /files/threek out-threek"
		echo "dump -p /sub/h1 out-h1"
		echo "dump /files/allholes out-allholes"
		echo "dump /sub/h1"
		echo "dump /nonexistent out-x"
		echo "dump /sub/h1 nonexistent-dir/x"
		echo "rdump / rd"
		echo "rdump /sub /files/sixty /sub/abs rd2"
		echo "rdump /sub rd2"
		echo "rdump /sub nonexistent-dir"
		echo "rdump /sub out-h1"
		echo "rdump /sub"
		echo "rdump /sub/deeper/ rd3"
	} >"$f"
}

# run_tool TOOL IMG CMDFILE WORKDIR OUT: run with -f in WORKDIR, banner stripped.
run_tool() {
	local tool=$1 img=$2 cmds=$3 wd=$4 out=$5
	rm -rf "$wd"
	mkdir -p "$wd/rd" "$wd/rd2" "$wd/rd3"
	(cd "$wd" && "$tool" -f "$cmds" "$img" >"$out.raw" 2>&1) || true
	sed '1{/^debugfs [0-9]/d;/^debug4fs /d}' "$out.raw" >"$out"
}

# tree_listing DIR: what must be the same in both dump trees.
tree_listing() {
	(
		cd "$1"
		find . -mindepth 1 -printf '%p %y %m %s %U %G [%l]\n' | sort
		# Times of what rdump and "dump -p" restored, to the second (debug4fs
		# also restores nanoseconds).  threek's mtime (2040) was stored by
		# mke2fs without the extra epoch bits, which debug4fs honours (it
		# means 1904) and debugfs does not.
		{
			find ./rd ./out-h1 ! -type l ! -name threek -printf '%p %T@\n'
			find ./rd2 ./rd3 -mindepth 1 ! -type l ! -name threek -printf '%p %T@\n'
		} 2>/dev/null | sed 's/\.[0-9]*$//' | sort
	)
}

# zero_tail_equal A B: A and B are equal but for trailing NULs in the longer one.
zero_tail_equal() {
	local sa sb n
	sa=$(stat -c %s "$1")
	sb=$(stat -c %s "$2")
	n=$((sa < sb ? sa : sb))
	cmp -s -n "$n" "$1" "$2" || return 1
	[ "$(tail -c +$((n + 1)) "$1" | tr -d '\000' | wc -c)" = 0 ] &&
		[ "$(tail -c +$((n + 1)) "$2" | tr -d '\000' | wc -c)" = 0 ]
}

# Regular files of an image as "ino size" lines, found by walking "ls -p".
regular_files() {
	local img=$1 todo=(2) seen=" 2 " ino line
	while [ ${#todo[@]} -gt 0 ]; do
		ino=${todo[0]}
		todo=("${todo[@]:1}")
		while IFS= read -r line; do
			if [[ $line =~ ^/([0-9]+)/0?10[0-7]{4}/[^/]*/[^/]*/.*/([0-9]+)/$ ]]; then
				echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
			elif [[ $line =~ ^/([0-9]+)/0?4[0-7]{4}/[^/]*/[^/]*/(.*)//$ ]]; then
				case ${BASH_REMATCH[2]} in . | ..) continue ;; esac
				case $seen in *" ${BASH_REMATCH[1]} "*) continue ;; esac
				seen="$seen${BASH_REMATCH[1]} "
				todo+=("${BASH_REMATCH[1]}")
			fi
		done < <("$REAL_DEBUGFS" -R "ls -p <$ino>" "$img" 2>/dev/null)
	done | sort -u -n
}

# ------------------------------------------------------------ compare

for name in "${IMAGES[@]}"; do
	img=$T/$name.img
	cmds=$T/$name.cmds
	write_commands "$cmds"
	run_tool "$REAL_DEBUGFS" "$img" "$cmds" "$T/$name.ref" "$T/$name.ref.out"
	run_tool "$DEBUG4FS" "$img" "$cmds" "$T/$name.new" "$T/$name.new.out"

	if [ "$name" = inline ]; then
		# debugfs writes 60 bytes for inline files smaller than that, and
		# for an inline file with no data at all (an all-hole file): bring
		# its copies to the size debug4fs wrote (i_size) when they differ
		# only by NULs.
		while IFS= read -r -d '' f; do
			rel=${f#"$T/$name.new/"}
			ref=$T/$name.ref/$rel
			if [ -f "$ref" ] && [ ! -L "$ref" ] && zero_tail_equal "$ref" "$f"; then
				mtime=$(stat -c %Y "$ref")
				truncate -s "$(stat -c %s "$f")" "$ref"
				touch -m -d "@$mtime" "$ref"
			fi
		done < <(find "$T/$name.new" -type f -print0)
		# The -f transcript has the same problem for "cat" of inline files.
		sed -i 's/\x00*debugfs: /debugfs: /' "$T/$name.ref.out"
	fi

	# debugfs 1.47.0 complains that index blocks of a file system without
	# metadata_csum have no room for a checksum; debug4fs does not.
	sed -i '/^htree_dump_int_block: Directory block does not have space for checksum while calculating checksum for/{N;d}' \
		"$T/$name.ref.out"
	if diff -a "$T/$name.ref.out" "$T/$name.new.out" >"$T/$name.diff"; then
		ok
	else
		bad "$name: transcripts differ ($(wc -l <"$T/$name.diff") diff lines):"
		head -20 "$T/$name.diff" | cat -v
	fi

	if diff -r --no-dereference "$T/$name.ref" "$T/$name.new" -x '*.out' -x '*.out.raw' \
		>"$T/$name.treediff" 2>&1; then
		ok
	else
		bad "$name: dumped trees differ:"
		head -10 "$T/$name.treediff" | cat -v
	fi
	if diff <(tree_listing "$T/$name.ref") <(tree_listing "$T/$name.new") >"$T/$name.listdiff"; then
		ok
	else
		bad "$name: dumped trees' names/modes/sizes/owners/times differ:"
		head -10 "$T/$name.listdiff" | cat -v
	fi

	# cat of every regular file: one -R each for the files with data
	# and one -f batch for all (debugfs writes each file's data raw).
	mapfile -t files < <(regular_files "$img")
	batch=$T/$name.cat
	: >"$batch"
	cat_bad=0
	for entry in "${files[@]}"; do
		ino=${entry% *}
		size=${entry#* }
		echo "cat <$ino>" >>"$batch"
		# Empty files (the big directories) are left to the batch below.
		[ "$size" != 0 ] || [ "$name" = inline ] || continue
		"$REAL_DEBUGFS" -R "cat <$ino>" "$img" >"$T/cat.ref" 2>/dev/null
		"$DEBUG4FS" -R "cat <$ino>" "$img" >"$T/cat.new" 2>/dev/null || true
		if [ "$(stat -c %s "$T/cat.new")" != "$size" ] ||
			{ ! cmp -s "$T/cat.ref" "$T/cat.new" &&
				! { [ "$name" = inline ] && zero_tail_equal "$T/cat.ref" "$T/cat.new"; }; }; then
			cat_bad=$((cat_bad + 1))
			[ $cat_bad -le 3 ] && note "$name: cat <$ino> differs"
		fi
	done
	if [ ${#files[@]} -lt 10 ]; then
		bad "$name: found only ${#files[@]} regular files"
	elif [ $cat_bad = 0 ]; then
		ok
	else
		bad "$name: cat differs for $cat_bad files"
	fi
	if [ "$name" != inline ]; then
		"$REAL_DEBUGFS" -f "$batch" "$img" 2>/dev/null | md5sum >"$T/cat.ref"
		"$DEBUG4FS" -f "$batch" "$img" 2>/dev/null | md5sum >"$T/cat.new"
		if cmp -s "$T/cat.ref" "$T/cat.new"; then ok; else bad "$name: cat batch differs"; fi
	fi
done

# ------------------------------------------------------------ deliberate differences

if [ -f "$T/ext4.img" ]; then
	# cat of a fast symlink prints its target.
	got=$("$DEBUG4FS" -R "cat /sub/abs" "$T/ext4.img" 2>/dev/null) || true
	if [ "$got" = /etc/passwd ]; then ok; else bad "cat of a fast symlink printed '$got'"; fi
	# dx_hash knows the unsigned names; 6 (siphash) is refused like debugfs does.
	got=$("$DEBUG4FS" -R "dx_hash -h tea_unsigned $(printf 'caf\xc3\xa9')" 2>/dev/null) || true
	want=$("$REAL_DEBUGFS" -R "dx_hash -h 5 $(printf 'caf\xc3\xa9')" 2>/dev/null) || true
	if [ "$got" = "$want" ]; then ok; else bad "dx_hash -h tea_unsigned: '$got' vs '$want'"; fi
	if "$DEBUG4FS" -R "dx_hash -h siphash foo" 2>&1 | grep -q "Directory hash unsupported"; then
		ok
	else
		bad "dx_hash -h siphash is not refused"
	fi
	# Exit status: nonzero on failure.
	if "$DEBUG4FS" -R "ls /nonexistent" "$T/ext4.img" >/dev/null 2>&1; then
		bad "ls of a missing directory exits 0"
	else
		ok
	fi
	if "$DEBUG4FS" -R "htree /big" "$T/ext4.img" >/dev/null 2>&1; then ok; else bad "htree /big failed"; fi
fi

# ------------------------------------------------------------ JSON

if [ -n "$HAVE_PY" ] && [ -f "$T/ext4.img" ]; then
	mkdir -p "$T/json"
	for c in "ls /sub" "ls -l -d -c /sub" "ls -p /big" "ls -d /odd" "ls /sub/h1" \
		"htree /big" "htree /kdir" "htree /long" "dx_hash -h tea -s $SEED_UUID foo" \
		"dx_hash -c -e utf8 $(printf 'CAF\xc3\x89')" "cat /files/zero" \
		"dump -p /files/big $T/json/big" "rdump /sub $T/json"; do
		"$DEBUG4FS" -j -R "$c" "$T/ext4.img" >"$T/json.out" 2>/dev/null || true
		if [ -s "$T/json.out" ] && python3 -m json.tool <"$T/json.out" >/dev/null 2>&1; then
			ok
		else
			bad "-j $c: not one JSON document: $(head -c 200 "$T/json.out")"
		fi
	done
	if [ -f "$T/inline.img" ]; then
		"$DEBUG4FS" -j -R "ls -l /sub" "$T/inline.img" >"$T/json.out" 2>/dev/null || true
		if python3 -m json.tool <"$T/json.out" >/dev/null 2>&1; then ok; else bad "-j ls on inline"; fi
	fi
else
	note "python3 missing: JSON not checked"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
