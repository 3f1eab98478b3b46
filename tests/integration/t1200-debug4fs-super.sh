#!/bin/bash
# t1200-debug4fs-super.sh - debug4fs's whole-file-system commands against debugfs.
#
# For a matrix of images made with mke2fs (ext2/ext3/ext4, 1k/2k/4k blocks,
# 1M..2G sparse, with and without checksums, 64bit, flex_bg, bigalloc, ...)
# run stats, stats -h, freefrag, freefrag -c, testb, testi, ffb, ffi and imap
# with both debugfs and debug4fs and compare stdout and stderr (the version
# banner, the first line of stderr, is dropped).  Every debug4fs -j document
# must parse with python3 -m json.tool.
#
# Known, deliberate differences (see debugfs/cmd_super.c) are not compared:
# freefrag on bigalloc (debugfs finds no free extents there), and debugfs's
# "Attempt to write to filesystem opened read-only" complaints at exit after
# ffb/ffi.
#
# Environment: DEBUG4FS, REAL_DEBUGFS (from tests/lib/common.sh);
# T1200_QUICK=1 skips the largest images.

set -u

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

[ -n "${REAL_DEBUGFS:-}" ] || skip "debugfs not found"
need_cmd mke2fs "$REAL_DEBUGFS" "$DEBUG4FS" truncate
# debug4fs follows debugfs 1.47's output; other versions print other lines.
DEBUGFS_VERSION=$("$REAL_DEBUGFS" -V 2>&1 | sed -n '1s/^debugfs \([0-9.]*\).*/\1/p')
case $DEBUGFS_VERSION in
1.47.*) ;;
*) skip "debugfs ${DEBUGFS_VERSION:-of unknown version} is not 1.47.x" ;;
esac
HAVE_PY=""
if command -v python3 >/dev/null 2>&1; then
	HAVE_PY=1
fi

make_tmpdir

# Both tools print dates in local time, so any TZ works; pin one anyway so
# that failures are reproducible.
export TZ=${TZ:-UTC}

PASS=0
FAIL=0

pass() { PASS=$((PASS + 1)); }
failed() {
	FAIL=$((FAIL + 1))
	printf 'FAIL: %s\n' "$*"
}

# run_both IMG CMD: compare the two tools' stdout and stderr.
run_both() {
	local img=$1 cmd=$2 r=$T/r m=$T/m
	"$REAL_DEBUGFS" -R "$cmd" "$img" >"$r.out" 2>"$r.err"
	"$DEBUG4FS" -R "$cmd" "$img" >"$m.out" 2>"$m.err"
	# debugfs clears UNINIT flags in memory while ffb/ffi search and then
	# cannot write them back; debug4fs changes nothing (deliberate).
	sed -i -e '1{/^debugfs [0-9]/d}' \
		-e '/^ext2fs_[a-z_]*: Attempt to write to filesystem opened read-only $/d' "$r.err"
	sed -i '1{/^debug4fs /d}' "$m.err"
	if cmp -s "$r.out" "$m.out" && cmp -s "$r.err" "$m.err"; then
		pass
	else
		failed "$(basename "$img"): '$cmd' differs"
		diff -u "$r.out" "$m.out" | head -n 20
		diff -u "$r.err" "$m.err" | head -n 10
	fi
}

# run_json IMG CMD: debug4fs -j must print one valid JSON document.  The
# documents are collected and parsed at the end by one python3 process (the
# parser python3 -m json.tool uses), which is much faster than one each.
JSON_N=0
run_json() {
	local img=$1 cmd=$2 out
	[ -n "$HAVE_PY" ] || return 0
	JSON_N=$((JSON_N + 1))
	out=$T/json/$JSON_N
	mkdir -p "$T/json"
	printf '%s: -j %s\n' "$(basename "$img")" "$cmd" >"$out.name"
	if ! "$DEBUG4FS" -j -R "$cmd" "$img" >"$out.json" 2>"$out.err"; then
		failed "$(basename "$img"): -j '$cmd' exited nonzero: $(head -n 3 "$out.err")"
		rm -f "$out.json"
	fi
}

check_json() {
	local line
	[ -n "$HAVE_PY" ] && [ -d "$T/json" ] || return 0
	while IFS= read -r line; do
		case $line in
		ok) pass ;;
		*) failed "$line" ;;
		esac
	done < <(python3 - "$T/json" <<'PYEOF'
import json, os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith('.json'):
        continue
    base = os.path.join(d, f[:-5])
    name = open(base + '.name').read().strip()
    try:
        with open(base + '.json') as fh:
            json.load(fh)
        print('ok')
    except ValueError as e:
        print('%s: not valid JSON: %s' % (name, e))
PYEOF
)
}

# mkimg NAME SIZE MKE2FS-ARGS...: make $T/NAME.img; returns 1 (with a note) if
# this mke2fs cannot make it.
mkimg() {
	local name=$1 size=$2 img=$T/$1.img
	shift 2
	rm -f "$img"
	truncate -s "$size" "$img" || return 1
	if ! mke2fs -q -F "$@" "$img" >"$T/mkfs.log" 2>&1; then
		note "skipping $name: mke2fs $* failed: $(head -n 1 "$T/mkfs.log")"
		rm -f "$img"
		return 1
	fi
	return 0
}

# Make a file system with a fragmented free space: files of many sizes, then
# every third one removed.
populate() {
	local tree=$T/tree i
	rm -rf "$tree"
	mkdir -p "$tree/d1/d2"
	for i in $(seq 1 120); do
		head -c $((i * 1371 % 40000 + 1)) /dev/zero | tr '\0' x >"$tree/f$i"
	done
	for i in $(seq 1 20); do
		: >"$tree/d1/e$i"
	done
	mkdir -p "$tree/d1/d2/d3"
	echo hello >"$tree/d1/d2/d3/hello"
	for i in $(seq 1 3 120); do
		echo "rm /f$i"
	done >"$T/rm.cmds"
	printf '%s\n' "$tree"
}

check_image() {
	local name=$1 img=$T/$1.img bigalloc=$2
	local c
	local cmds=(
		"stats"
		"stats -h"
		"show_super_stats -h"
		"testb 1"
		"testb 2 3"
		"testb 500"
		"testb 99999999 2"
		"testi <2>"
		"testi <11>"
		"testi <12>"
		"testi /"
		"ffb"
		"ffb 5 100"
		"ffb 3 0"
		"ffi"
		"ffi 0"
		"find_free_inode 2"
		"imap <2>"
		"imap <12>"
		"imap /"
	)
	if [ "$bigalloc" = 0 ]; then
		cmds+=("freefrag" "freefrag -c 64" "e2freefrag -c 1024" "freefrag -c 4")
	fi
	for c in "${cmds[@]}"; do
		run_both "$img" "$c"
	done
	# The last block and one past it; the last inode and one past it.
	local blocks inodes
	blocks=$("$REAL_DEBUGFS" -R "stats -h" "$img" 2>/dev/null | sed -n 's/^Block count: *//p')
	inodes=$("$REAL_DEBUGFS" -R "stats -h" "$img" 2>/dev/null | sed -n 's/^Inode count: *//p')
	if [ -n "$blocks" ] && [ -n "$inodes" ]; then
		run_both "$img" "testb $((blocks - 2)) 3"
		run_both "$img" "imap <$inodes>"
		run_both "$img" "testi <$inodes>"
		run_both "$img" "ffi $inodes"
		run_both "$img" "ffb 2 $((blocks - 1))"
	fi
	for c in "stats" "stats -h" "freefrag -c 64" "testb 1 3" "testi <2>" "ffb 5 100" "ffi" "imap <12>"; do
		run_json "$img" "$c"
	done
}

# Error handling and argument parsing only need one image.
check_errors() {
	local img=$T/$1.img c
	for c in "stats -x" "stats a" "testb" "testb x" "testb 0" "testb 1 x" "testb 1 0" \
		"testb 1 2 3" "testi" "testi a b" "testi /nope" "ffb x" "ffb 1 x" "ffb 1 2 3" \
		"ffb ?" "ffb 0" "ffb -1" "ffb 2 -5" "ffi x" "ffi 2 x" "ffi ?" "ffi 1 2 3" "ffi -1" \
		"imap" "imap a b" "imap /nope" "freefrag -h" "freefrag -c 3" "freefrag -c x" \
		"freefrag -c" "freefrag -q" "freefrag -c 0"; do
		run_both "$img" "$c"
	done
}

# name size bigalloc mke2fs-args...
IMAGES=(
	"ext2-1k-1M|1M|0|-t ext2 -b 1024"
	"ext2-4k-64M|64M|0|-t ext2 -b 4096"
	"ext2-rev0|8M|0|-t ext2 -r 0"
	"ext3-1k-16M|16M|0|-t ext3 -b 1024"
	"ext3-2k-64M|64M|0|-t ext3 -b 2048"
	"ext4-1k-8M|8M|0|-t ext4 -b 1024"
	"ext4-2k-128M|128M|0|-t ext4 -b 2048"
	"ext4-4k-256M|256M|0|-t ext4 -b 4096"
	"ext4-gdtcsum|32M|0|-t ext4 -O ^metadata_csum,uninit_bg"
	"ext4-32bit|32M|0|-t ext4 -O ^64bit"
	"ext4-32bit-gdtcsum|64M|0|-t ext4 -O ^64bit,^metadata_csum,uninit_bg"
	"ext4-noflex|64M|0|-t ext4 -O ^flex_bg"
	"ext4-G4|64M|0|-t ext4 -G 4"
	"ext4-raid|64M|0|-t ext4 -E stride=16,stripe_width=64"
	"ext4-seed-orphan|32M|0|-t ext4 -O metadata_csum_seed,orphan_file"
	"ext4-quota|32M|0|-t ext4 -O quota,project"
	"ext4-label|16M|0|-t ext4 -L label -M /mnt"
	"ext4-metabg|64M|0|-t ext4 -O meta_bg,^resize_inode"
	"ext4-sparse2|64M|0|-t ext4 -O sparse_super2"
	"ext4-casefold|16M|0|-t ext4 -O casefold"
	"ext4-i128|16M|0|-t ext4 -I 128"
	"ext4-nolazy|16M|0|-t ext4 -E lazy_itable_init=0"
	"ext4-bigalloc|64M|1|-t ext4 -O bigalloc -C 16384"
	"ext4-bigalloc-4k|256M|1|-t ext4 -b 4096 -O bigalloc -C 65536"
)
if [ -z "${T1200_QUICK:-}" ]; then
	IMAGES+=(
		"ext4-4k-2G|2G|0|-t ext4 -b 4096"
		"ext4-1k-1G|1G|0|-t ext4 -b 1024"
	)
fi

for spec in "${IMAGES[@]}"; do
	IFS='|' read -r name size bigalloc args <<<"$spec"
	# shellcheck disable=SC2086
	mkimg "$name" "$size" $args || continue
	check_image "$name" "$bigalloc"
done

# A used, fragmented file system (files written by mke2fs -d, some removed).
tree=$(populate)
if mkimg ext4-frag 16M -t ext4 -b 1024 -d "$tree"; then
	"$REAL_DEBUGFS" -w -f "$T/rm.cmds" "$T/ext4-frag.img" >/dev/null 2>&1
	check_image ext4-frag 0
	run_both "$T/ext4-frag.img" "freefrag -c 16"
	run_both "$T/ext4-frag.img" "ffb 50 1"
	run_both "$T/ext4-frag.img" "testb 1 300"
	run_json "$T/ext4-frag.img" "freefrag"
fi
if mkimg ext2-frag 8M -t ext2 -b 2048 -d "$tree"; then
	"$REAL_DEBUGFS" -w -f "$T/rm.cmds" "$T/ext2-frag.img" >/dev/null 2>&1
	check_image ext2-frag 0
fi

# A full file system: ffb and ffi have nothing to find.
if mkimg ext2-full 1M -t ext2 -b 1024 -N 16 -m 0; then
	i=0
	while [ $i -lt 8 ]; do
		head -c 200000 /dev/zero >"$T/big$i"
		echo "write $T/big$i big$i"
		i=$((i + 1))
	done >"$T/fill.cmds"
	"$REAL_DEBUGFS" -w -f "$T/fill.cmds" "$T/ext2-full.img" >/dev/null 2>&1
	run_both "$T/ext2-full.img" "ffb"
	run_both "$T/ext2-full.img" "freefrag"
	run_both "$T/ext2-full.img" "stats"
fi

# No free inode: ffi has nothing to find.
if mkimg ext2-noinodes 1M -t ext2 -b 1024 -N 16; then
	for i in 1 2 3 4 5 6 7 8; do
		echo "write /dev/null e$i"
	done >"$T/inodes.cmds"
	"$REAL_DEBUGFS" -w -f "$T/inodes.cmds" "$T/ext2-noinodes.img" >/dev/null 2>&1
	run_both "$T/ext2-noinodes.img" "ffi"
	run_both "$T/ext2-noinodes.img" "ffi 5"
	run_both "$T/ext2-noinodes.img" "testi <16>"
fi

# Rarely set superblock fields, set with debugfs's set_super_value.
if mkimg ext4-crafted 16M -t ext4 -b 1024 \
	-O metadata_csum_seed,orphan_file,quota,project,casefold,sparse_super2 \
	-E stride=16,stripe_width=64 -L crafted -M /mnt/crafted; then
	cat >"$T/ssv.cmds" <<'EOF2'
ssv mtime @1000
ssv first_error_time 19700101001640
ssv checkinterval 1000000
ssv kbytes_written 5000000
ssv error_count 3
ssv first_error_func ext4_foo
ssv first_error_line 42
ssv first_error_ino 12
ssv first_error_block 99
ssv last_error_time @2000
ssv last_error_func ext4_bar
ssv last_error_ino 13
ssv journal_dev 0x803
ssv journal_uuid 01020304-0506-0708-090a-0b0c0d0e0f10
ssv last_orphan 13
ssv snapshot_inum 7
ssv snapshot_id 3
ssv snapshot_r_blocks_count 100
ssv snapshot_list 12
ssv backup_bgs[1] 5
ssv mount_opts foo,bar
ssv def_resuid 60000
ssv def_resgid 60000
ssv default_mount_opts 0x7ff
ssv flags 7
ssv errors 3
ssv creator_os 3
ssv state 3
ssv max_mnt_count -2
ssv mnt_count 5
ssv encrypt_pw_salt 01020304-0506-0708-090a-0b0c0d0e0f10
ssv first_meta_bg 3
ssv overhead_clusters 0
ssv def_hash_version tea
EOF2
	"$REAL_DEBUGFS" -w -f "$T/ssv.cmds" "$T/ext4-crafted.img" >/dev/null 2>&1
	run_both "$T/ext4-crafted.img" "stats"
	run_json "$T/ext4-crafted.img" "stats"
	printf 'ssv state 0\nssv errors 0\nssv creator_os 9\nssv flags 0x10\nssv default_mount_opts 0\nssv checkinterval 31536000\nssv def_hash_version 5\n' \
		>"$T/ssv2.cmds"
	"$REAL_DEBUGFS" -w -f "$T/ssv2.cmds" "$T/ext4-crafted.img" >/dev/null 2>&1
	run_both "$T/ext4-crafted.img" "stats -h"
fi

check_errors ext4-1k-8M
check_json

printf '%d passed, %d failed\n' "$PASS" "$FAIL"
[ "$FAIL" -eq 0 ] || exit 1
exit 0
