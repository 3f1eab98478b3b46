#!/bin/bash
# t1400-bad-input: debug4fs on damaged images.
#
# Two small images are made with "mke2fs -d" (ext2 with 1 KiB blocks and
# indirect maps, no checksums; ext4 with 1 KiB blocks, extents and
# metadata_csum), each holding a file with an attribute block, a sparse
# file (indirect blocks / a depth-1 extent tree), a directory with a
# subdirectory, an htree directory (e2fsck -D) and a file spilling into the
# second half of the image.  Each case copies one, damages it in exactly
# one way (python3 byte edits, or "debugfs -w" set_inode_field, which
# also keeps the inode checksum right, so the damage under test is the
# only one) and runs debug4fs -R on it with the commands that read the
# damaged object, each under "timeout 20".
#
# Every run must: end by itself (no timeout), not die of a signal (status
# below 128), print nothing from ASan/UBSan.  Per command the case says:
#   fail  status must be nonzero and stderr must match the case's pattern
#         (which names the damaged object: "inode 12", "block", "checksum")
#   ok    status must be 0 (the command reads only intact parts; written
#         down per case below)
#   warn  either status, but stdout or stderr must match the pattern (a
#         damage debugfs reports and then works around)
#   any   either status is fine (the command may or may not touch the
#         damage; only the general rules apply)
# A command debug4fs does not implement yet ("Command not found") is
# counted as skipped.  Checksum cases are also run with -n, where the image
# must open and the command must succeed and print.
#
# Environment: DEBUG4FS (the tool), EXT4FS_KEEP_TMP=1 keeps the work dir,
# T1400_VERBOSE=1 shows every command's output.

set -u

here=$(cd -- "$(dirname -- "$0")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

for c in mke2fs debugfs e2fsck python3 timeout; do
	command -v "$c" >/dev/null 2>&1 || skip "$c not found"
done
[ -x "$DEBUG4FS" ] || skip "debug4fs is not built ($DEBUG4FS)"
make_tmpdir
W=$T

export TZ=UTC LC_ALL=C DEBUGFS_PAGER=__none__ PAGER=__none__
export E2FSPROGS_FAKE_TIME=1700000000 E2FSCK_TIME=1700000000
unset LANG LANGUAGE DEBUGFS_HOOK 2>/dev/null || true

passed=0
failed=0
skipped=0
bad() {
	failed=$((failed + 1))
	printf 'FAIL: %s\n' "$*"
}

# ------------------------------------------------------------ base images

cat >"$W/mke2fs.conf" <<'EOF'
[defaults]
	base_features = sparse_super,large_file,filetype,dir_index,ext_attr
	blocksize = 1024
	inode_size = 256
	inode_ratio = 4096
	reserved_ratio = 0
[fs_types]
	floppy = {
		inode_ratio = 4096
	}
	small = {
		inode_ratio = 4096
	}
	ext2 = {
		features = ^has_journal
	}
	ext4 = {
		features = extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
EOF
export MKE2FS_CONFIG=$W/mke2fs.conf

SRC=$W/src
mkdir -p "$SRC/dir/sub" "$SRC/htree"
printf 'hello, world\n' >"$SRC/hello.txt"
printf 'a\n' >"$SRC/dir/a"
printf 'b\n' >"$SRC/dir/sub/b"
ln -s hello.txt "$SRC/link"
printf 'linked\n' >"$SRC/htree/target"
for i in $(seq -w 1 60); do
	ln "$SRC/htree/target" "$SRC/htree/entry-with-a-longish-name-$i"
done
python3 - "$SRC" <<'EOF'
import os, random, sys
src = sys.argv[1]
r = random.Random(400)
# Five runs 20 KiB apart: indirect blocks on ext2, a depth-1 extent tree on ext4.
with open(os.path.join(src, "sparse"), "wb") as f:
    for i in range(5):
        f.seek(i * 20 * 1024)
        f.write(bytes([65 + i]) * 1500)
    f.truncate(100 * 1024)
# 150 KiB of data: the end of it lies in the second half of a 256 KiB image.
with open(os.path.join(src, "big"), "wb") as f:
    f.write(bytes(r.getrandbits(8) for _ in range(150 * 1024)))
EOF
# An attribute too large for the inode: it goes to an attribute block.
if ! setfattr -n user.big -v "$(printf 'x%.0s' $(seq 1 300))" "$SRC/hello.txt" 2>/dev/null; then
	skip "cannot set user xattrs in $W (needed for the attribute-block case)"
fi
setfattr -n user.small -v tiny "$SRC/hello.txt"

mkimg() {
	# mkimg NAME MKE2FS-OPTIONS...
	local img=$W/$1.img
	shift
	mke2fs -q -F -U 6b1f4c2e-3d5a-4e7b-9c8d-0f1e2d3c4b5a \
		-E hash_seed=0d7c4e2a-9b1f-4a36-8e5d-2c7b6a5f4e3d,root_owner=0:0 \
		-N 32 -d "$SRC" "$@" "$img" 256k >/dev/null 2>&1 || fail "mke2fs $* failed"
	e2fsck -fyD "$img" >/dev/null 2>&1
	e2fsck -fn "$img" >/dev/null 2>&1 || fail "$img is not clean after e2fsck -D"
}
mkimg ext2 -t ext2 -I 128
mkimg ext4 -t ext4

# Facts about the images, taken from e2fsprogs.
dbg() { debugfs -R "$1" "$2" 2>/dev/null; }
ino_of() { dbg "stat $2" "$1" | awk '/^Inode:/ { print $2; exit }'; }
first_block_of() { dbg "blocks $2" "$1" | awk '{ print $1 }'; }
acl_of() { dbg "stat $2" "$1" | awk '/File ACL:/ { print $3; exit }'; }

for v in ext2 ext4; do
	img=$W/$v.img
	[ "$(dbg "htree /htree" "$img" | grep -c 'Root node dump')" -ge 1 ] ||
		fail "$v: /htree is not indexed"
	[ -n "$(acl_of "$img" /hello.txt)" ] && [ "$(acl_of "$img" /hello.txt)" != 0 ] ||
		fail "$v: /hello.txt has no attribute block"
done

# ------------------------------------------------------------ damage tools

# poke IMG OFFSET FORMAT VALUE...: write struct.pack("<FORMAT", VALUE...) at OFFSET.
poke() {
	python3 - "$@" <<'EOF'
import struct, sys
img, off, fmt = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
vals = [int(v, 0) for v in sys.argv[4:]]
with open(img, "r+b") as f:
    f.seek(off)
    f.write(struct.pack("<" + fmt, *vals))
EOF
}

# peek IMG OFFSET FORMAT: print struct.unpack("<FORMAT") at OFFSET.
peek() {
	python3 - "$@" <<'EOF'
import struct, sys
img, off, fmt = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
with open(img, "rb") as f:
    f.seek(off)
    data = f.read(struct.calcsize("<" + fmt))
print(*struct.unpack("<" + fmt, data))
EOF
}

# fix_extent_csum IMG BLOCK INO: recompute the metadata_csum tail of extent
# block BLOCK (1 KiB blocks) of inode INO, so a structural change to the block
# is not reported as a checksum mismatch first.
fix_extent_csum() {
	python3 - "$@" <<'EOF2'
import struct, sys, uuid
img, blk, ino = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
table = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    table.append(c)
def crc32c(crc, data):
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc
with open(img, "r+b") as f:
    f.seek(1024)
    sb = f.read(1024)
    ipg, isz = struct.unpack_from("<I", sb, 0x28)[0], struct.unpack_from("<H", sb, 0x58)[0]
    seed = crc32c(0xFFFFFFFF, sb[0x68:0x78])                  # s_uuid
    f.seek(2048 + 8)
    itable = struct.unpack("<I", f.read(4))[0]                # group 0's inode table
    assert ino <= ipg
    f.seek(itable * 1024 + (ino - 1) * isz + 0x64)
    gen = f.read(4)
    iseed = crc32c(crc32c(seed, struct.pack("<I", ino)), gen)
    f.seek(blk * 1024)
    node = f.read(1024)
    tail = 12 + 12 * struct.unpack_from("<H", node, 4)[0]    # after eh_max entries
    f.seek(blk * 1024 + tail)
    f.write(struct.pack("<I", crc32c(iseed, node[:tail])))
EOF2
}

# sif IMG INODE-SPEC FIELD VALUE: debugfs -w set_inode_field (fixes the inode checksum).
sif() {
	debugfs -w -R "sif $2 $3 $4" "$1" >"$W/sif.out" 2>&1
	if grep -qiE 'error|invalid|not found|usage' "$W/sif.out"; then
		fail "debugfs sif $2 $3 $4: $(cat "$W/sif.out")"
	fi
}

newcase() {
	# newcase NAME BASE: copy the base image to $W/NAME.img and make it $IMG.
	CASE=$1
	IMG=$W/$1.img
	cp "$W/$2.img" "$IMG"
}

# ------------------------------------------------------------ running

declare -A MISSING=()

# run EXPECT PATTERN CMD [debug4fs options...]: run one command on $IMG.
run() {
	local expect=$1 pattern=$2 cmd=$3 rc name=${3%% *}
	shift 3
	local what="$CASE: ${*:+$* }-R '$cmd'"
	if [ -n "${MISSING[$name]:-}" ]; then
		skipped=$((skipped + 1))
		return 0
	fi
	timeout 20 "$DEBUG4FS" "$@" -R "$cmd" "$IMG" >"$W/out" 2>"$W/err"
	rc=$?
	if [ -n "${T1400_VERBOSE:-}" ]; then
		printf '=== %s -> %d\n' "$what" "$rc"
		sed 's/^/  out: /' "$W/out" | head -n 20
		sed 's/^/  err: /' "$W/err"
	fi
	if grep -q "Command not found" "$W/err"; then
		MISSING[$name]=1
		printf 'skip: %s is not implemented\n' "$name"
		skipped=$((skipped + 1))
		return 0
	fi
	if [ "$rc" = 124 ]; then
		bad "$what: timed out"
		return 0
	fi
	if [ "$rc" -ge 128 ]; then
		bad "$what: killed by a signal (status $rc)"
		return 0
	fi
	if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error|Sanitizer' "$W/out" "$W/err"; then
		bad "$what: sanitizer report: $(grep -m 3 -hE 'Sanitizer|runtime error' "$W/out" "$W/err")"
		return 0
	fi
	case $expect in
	fail)
		if [ "$rc" = 0 ]; then
			bad "$what: succeeded on a damaged image (stderr: $(head -c 300 "$W/err"))"
			return 0
		fi
		if ! grep -qiE -- "$pattern" "$W/err"; then
			bad "$what: stderr does not match /$pattern/: $(head -c 400 "$W/err")"
			return 0
		fi
		;;
	ok)
		if [ "$rc" != 0 ]; then
			bad "$what: status $rc, expected success (stderr: $(head -c 300 "$W/err"))"
			return 0
		fi
		if [ -n "$pattern" ] && ! grep -qiE -- "$pattern" "$W/out"; then
			bad "$what: stdout does not match /$pattern/: $(head -c 300 "$W/out")"
			return 0
		fi
		;;
	warn)
		if ! cat "$W/out" "$W/err" | grep -qiE -- "$pattern"; then
			bad "$what: output does not match /$pattern/ (status $rc): $(head -c 300 "$W/err")"
			return 0
		fi
		;;
	any) ;;
	*) fail "bad expectation $expect" ;;
	esac
	passed=$((passed + 1))
}

# The image itself must be intact apart from the damage: check the base.
CASE=base-ext2; IMG=$W/ext2.img
run ok 'Filesystem magic number' stats
run ok 'hello' 'cat /hello.txt'
CASE=base-ext4; IMG=$W/ext4.img
run ok 'Filesystem magic number' stats
run ok 'hello' 'cat /hello.txt'

# ------------------------------------------------------------ superblock

SB=1024
SUPER_CMDS=(stats 'stat /hello.txt' 'ls -l /' 'cat /hello.txt')

# Half the image: the metadata is in the first half, the end of /big is not.
# stats/stat/blocks read only the intact half (ok); reading /big's data fails.
newcase truncated ext4
truncate -s 128k "$IMG"
run ok 'Filesystem magic number' stats
run ok 'Inode:' 'stat /big'
run any '' 'blocks /big'
run fail 'block|beyond|end of|short read' 'cat /big'
run fail 'block|beyond|end of|short read' 'dump /big '"$W/dump.out"

# Cut inside the superblock: nothing can be opened.
newcase truncated-super ext4
truncate -s 1500 "$IMG"
for c in "${SUPER_CMDS[@]}"; do
	run fail 'superblock|short read|beyond|end of' "$c"
done

newcase garbage-super ext2
python3 -c 'import random,sys; r=random.Random(4000); f=open(sys.argv[1],"r+b"); f.seek(1024); f.write(bytes(r.getrandbits(8) for _ in range(1024)))' "$IMG"
for c in "${SUPER_CMDS[@]}"; do
	run fail 'magic|superblock|super-block|corrupt' "$c"
done

newcase bad-magic ext2
poke "$IMG" $((SB + 0x38)) H 0x1234
for c in "${SUPER_CMDS[@]}"; do
	run fail 'magic' "$c"
done

newcase huge-log-block-size ext2
poke "$IMG" $((SB + 0x18)) I 20
for c in "${SUPER_CMDS[@]}"; do
	run fail 'block size|log_block_size|superblock|super-block' "$c"
done

newcase inodes-per-group-0 ext2
poke "$IMG" $((SB + 0x28)) I 0
for c in "${SUPER_CMDS[@]}"; do
	run fail 'inodes_per_group|inodes per group|superblock|super-block' "$c"
done

newcase first-data-block-beyond ext2
poke "$IMG" $((SB + 0x14)) I 1000000
for c in "${SUPER_CMDS[@]}"; do
	run fail 'first_data_block|first data block|superblock|super-block' "$c"
done

# ------------------------------------------------------------ checksums

# debugfs says "Checksum errors in superblock!  Retrying..." and goes on
# without checksums; debug4fs may do the same or refuse, but must say so.
newcase bad-sb-csum ext4
poke "$IMG" $((SB + 0x3FC)) I $(( $(peek "$IMG" $((SB + 0x3FC)) I) ^ 0x5a5a5a5a ))
for c in "${SUPER_CMDS[@]}"; do
	run warn 'checksum' "$c"
done
run ok 'Filesystem magic number' stats -n
run ok 'hello' 'cat /hello.txt' -n

# Group descriptor 0 is at block 2 (1 KiB blocks); bg_checksum at 0x1E.
# debugfs opens such a file system without a word (e2fsck is what reports
# descriptor checksums), and so does debug4fs: the descriptor's locations
# are still range-checked, only its UNINIT flags are no longer trusted.  So
# every command must succeed, strict or not; stats shows the stored value.
newcase bad-gd-csum ext4
poke "$IMG" $((2048 + 0x1E)) H $(( $(peek "$IMG" $((2048 + 0x1E)) H) ^ 0x5a5a ))
run ok "checksum 0x$(printf '%04x' "$(peek "$IMG" $((2048 + 0x1E)) H)")" stats
run ok 'Inode:' 'stat /hello.txt'
run ok 'hello.txt' 'ls -l /'
run ok 'hello' 'cat /hello.txt'
run ok 'Group  0' stats -n
run ok 'hello' 'cat /hello.txt' -n

# Inode checksum: flip i_checksum_lo (0x7C) of /hello.txt's record.
newcase bad-inode-csum ext4
INO=$(ino_of "$IMG" /hello.txt)
read -r iblk ioff < <(dbg "imap <$INO>" "$IMG" | sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-fA-F]*\).*/\1 \2/p')
[ -n "${iblk:-}" ] || fail "imap of inode $INO failed"
loc=$((iblk * 1024 + ioff))
poke "$IMG" $((loc + 0x7C)) H $(( $(peek "$IMG" $((loc + 0x7C)) H) ^ 0x5a5a ))
run ok 'Filesystem magic number' stats                     # the inode is not read
run fail "inode $INO|checksum" "stat <$INO>"
run fail "inode $INO|checksum" 'cat /hello.txt'
run fail "inode $INO|checksum" 'ex /hello.txt'
run any '' 'ls -l /'                                       # ls -l stats every entry
run ok 'Inode:' "stat <$INO>" -n
run ok 'hello' 'cat /hello.txt' -n

# ------------------------------------------------------------ extent trees (ext4)

# /sparse has a depth-1 tree: the root in the inode points to one leaf block.
# Turn the leaf into an index node that points to itself, and the root into
# depth 2, so the walk would come back to the same block forever.
newcase extent-cycle ext4
INO=$(ino_of "$IMG" /sparse)
LEAF=$(dbg "ex /sparse" "$IMG" | awk '$1 == "0/" && $2 == "1" { print $(NF - 1); exit }')
[ -n "$LEAF" ] || fail "extent-cycle: cannot find the leaf block of /sparse"
sif "$IMG" /sparse 'block[1]' $((4 | 2 << 16))            # root: eh_max 4, eh_depth 2
poke "$IMG" $((LEAF * 1024 + 6)) H 1                        # leaf header: depth 1
poke "$IMG" $((LEAF * 1024 + 12)) IIH 0 "$LEAF" 0           # entry 0: index -> itself
fix_extent_csum "$IMG" "$LEAF" "$INO"
# The second visit of the block finds depth 1 where depth 0 must be.
for c in 'ex /sparse' 'blocks /sparse' 'cat /sparse' 'bmap /sparse 30'; do
	run fail "inode $INO.*(depth|extent)|extent.*inode $INO" "$c"
done
run any '' 'stat /sparse'
run any '' "icheck $LEAF"
for c in 'ex /sparse' 'cat /sparse'; do
	run fail "inode $INO|extent" "$c" -n
done

# The same shape, but the index points back to an ancestor... the root is in
# the inode, so the only ancestor on disk is the node itself; instead point
# both of two root index entries at the leaf (a node reached twice).
newcase extent-shared ext4
INO=$(ino_of "$IMG" /sparse)
LEAF=$(dbg "ex /sparse" "$IMG" | awk '$1 == "0/" && $2 == "1" { print $(NF - 1); exit }')
[ -n "$LEAF" ] || fail "extent-shared: cannot find the leaf block of /sparse"
sif "$IMG" /sparse 'block[0]' $((0xF30A | 2 << 16))       # root: two entries
sif "$IMG" /sparse 'block[6]' 1000                          # entry 1: from logical 1000
sif "$IMG" /sparse 'block[7]' "$LEAF"                       # ... to the same leaf
sif "$IMG" /sparse 'block[8]' 0
for c in 'ex /sparse' 'blocks /sparse'; do
	run fail "inode $INO|extent" "$c"
done
run any '' 'cat /sparse'

# /hello.txt's tree is the root alone: i_block[0..2] header, [3..5] the extent.
newcase extent-beyond-fs ext4
INO=$(ino_of "$IMG" /hello.txt)
sif "$IMG" /hello.txt 'block[5]' 5000000
for c in 'cat /hello.txt' 'ex /hello.txt' 'blocks /hello.txt' 'bmap /hello.txt 0'; do
	run fail "inode $INO|block|extent" "$c"
done
run any '' 'stat /hello.txt'
run fail "inode $INO|block|extent" 'cat /hello.txt' -n

newcase extent-bad-magic ext4
INO=$(ino_of "$IMG" /hello.txt)
sif "$IMG" /hello.txt 'block[0]' $((0xF30B | 1 << 16))
for c in 'cat /hello.txt' 'ex /hello.txt' 'blocks /hello.txt'; do
	run fail "inode $INO|extent|header|magic" "$c"
done

newcase extent-entries-above-max ext4
INO=$(ino_of "$IMG" /hello.txt)
sif "$IMG" /hello.txt 'block[0]' $((0xF30A | 5 << 16))
sif "$IMG" /hello.txt 'block[1]' 4
for c in 'cat /hello.txt' 'ex /hello.txt' 'blocks /hello.txt'; do
	run fail "inode $INO|extent|header" "$c"
done

newcase extent-depth-6 ext4
INO=$(ino_of "$IMG" /hello.txt)
sif "$IMG" /hello.txt 'block[1]' $((4 | 6 << 16))
for c in 'cat /hello.txt' 'ex /hello.txt' 'blocks /hello.txt' 'bmap /hello.txt 0'; do
	run fail "inode $INO|extent|header|depth" "$c"
done

# ------------------------------------------------------------ directories (ext2: no checksums in the way)

# The first block of /dir starts with "." (rec_len at 4, name_len at 6).
dir_case() {
	# dir_case NAME OFFSET FORMAT VALUE
	newcase "$1" ext2
	INO=$(ino_of "$IMG" /dir)
	local a_ino
	a_ino=$(ino_of "$IMG" /dir/a)
	local blk
	blk=$(first_block_of "$IMG" /dir)
	[ -n "$blk" ] || fail "$1: no block for /dir"
	poke "$IMG" $((blk * 1024 + $2)) "$3" "$4"
	# ls and lookups read the block (fail); stat reads only the inode (ok).
	run fail "directory $INO|inode $INO|dir|entry|rec_len|corrupt" 'ls -l /dir'
	run fail "directory $INO|inode $INO|dir|entry|rec_len|corrupt|not found" 'cat /dir/a'
	run fail "directory $INO|inode $INO|dir|entry|rec_len|corrupt" "ncheck $a_ino"   # must search /dir
	run ok 'Inode:' 'stat /dir'
	run ok 'hello' 'cat /hello.txt'          # another directory path: unaffected
}
dir_case dirent-rec-len-0 4 H 0
dir_case dirent-rec-len-past-block 4 H 2000
dir_case dirent-name-len-above-rec-len 6 B 200

# The same damage under metadata_csum: strict mode reports the checksum or the entry,
# -n must still refuse the entry itself.
newcase dirent-rec-len-0-csum ext4
INO=$(ino_of "$IMG" /dir)
blk=$(first_block_of "$IMG" /dir)
poke "$IMG" $((blk * 1024 + 4)) H 0
run fail "directory $INO|inode $INO|checksum|rec_len|corrupt" 'ls -l /dir'
run fail "directory $INO|inode $INO|rec_len|corrupt|entry" 'ls -l /dir' -n

# htree root: dx_root_info at 0x18; indirect_levels at 0x1E.  ls reads the
# index blocks as empty space and the entries from the leaves, and lookups fall
# back to a linear scan when the index is corrupt, so only htree must fail.
newcase htree-levels-5 ext2
INO=$(ino_of "$IMG" /htree)
blk=$(first_block_of "$IMG" /htree)
poke "$IMG" $((blk * 1024 + 0x1E)) B 5
run fail "directory $INO|inode $INO|htree|index|levels" 'htree /htree'
run any '' 'ls /htree'
run any '' 'cat /htree/entry-with-a-longish-name-07'

# ------------------------------------------------------------ indirect map (ext2)

newcase indirect-beyond-fs ext2
INO=$(ino_of "$IMG" /sparse)
sif "$IMG" /sparse 'block[IND]' 5000000
for c in 'cat /sparse' 'bmap /sparse 20'; do
	run fail "inode $INO|block" "$c"
done
run ok '^[0-9]+' 'bmap /sparse 0'     # a direct block: the map up to there is fine
# blocks and stat list the IND block number itself and, like debugfs, do not
# complain that it is outside the file system (they do not read through it).
run any '' 'blocks /sparse'
run any '' 'stat /sparse'
run any '' 'icheck 100'

# ------------------------------------------------------------ xattr block (ext2)

# The first entry of the block is at 32: e_name_len, e_name_index, e_value_offs (le16).
newcase xattr-bad-value-offset ext2
INO=$(ino_of "$IMG" /hello.txt)
ACL=$(acl_of "$IMG" /hello.txt)
poke "$IMG" $((ACL * 1024 + 32 + 2)) H 0xFFF0
run fail "inode $INO|attribute|xattr|$ACL" 'ea_list /hello.txt'
run fail "inode $INO|attribute|xattr|$ACL" 'ea_get /hello.txt user.big'
run any '' 'stat /hello.txt'
run ok 'hello' 'cat /hello.txt'        # the data does not depend on the attributes

# e_value_size (at +8 in the entry) running far past the end of the block.
newcase xattr-bad-value-size ext2
INO=$(ino_of "$IMG" /hello.txt)
ACL=$(acl_of "$IMG" /hello.txt)
poke "$IMG" $((ACL * 1024 + 32 + 8)) I 0x10000
run fail "inode $INO|attribute|xattr|$ACL" 'ea_list /hello.txt'
run fail "inode $INO|attribute|xattr|$ACL" 'ea_get /hello.txt user.big'
run any '' 'stat /hello.txt'
run ok 'hello' 'cat /hello.txt'

# ------------------------------------------------------------ summary

printf '%d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
if [ ${#MISSING[@]} -gt 0 ]; then
	printf 'not implemented (skipped): %s\n' "${!MISSING[*]}"
fi
[ "$failed" = 0 ] || exit 1
exit 0
