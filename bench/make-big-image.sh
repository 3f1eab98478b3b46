#!/bin/sh
# make-big-image.sh OUT [NFILES]
#
# Build a large ext4 image written by the kernel (loop mount), for the walk
# benchmark (bench/run-walk.sh).  Default: 600000 regular files, which with
# directories and symlinks gives a little over 600k inodes in use.
#
#   - directories of ~1000 entries each (htree-indexed), two levels deep;
#   - 1 file in 16 holds one block of data, 1 in 64 holds five blocks;
#   - NFILES/3000 bigger files (1-8 MiB), NFILES/6000 sparse files whose
#     extent trees have a level of index (1000+ extents each), a few files
#     written round-robin with fsync (physically interleaved), a few
#     fallocated files (unwritten extents);
#   - NFILES/200 symlinks (half fast, half with a block), some hard links.
#
# The image is a sparse file (4 GiB by default, IMAGE_SIZE to override).  If
# OUT already exists it is reused as is.  Needs root, loop devices and
# python3; otherwise prints "SKIP: why" and exits 77.  Ends by checking the
# result with e2fsck -fn (must exit 0).
set -eu

usage() { echo "usage: $0 OUT [NFILES]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
OUT=$1
NFILES=${2:-600000}
case $NFILES in ''|*[!0-9]*) usage ;; esac

skip() { echo "SKIP: $*"; exit 77; }

if [ -e "$OUT" ]; then
	echo "make-big-image: $OUT exists, reusing it (delete it to rebuild)"
	exit 0
fi
[ "$(id -u)" = 0 ] || skip "building the image needs root (loop mount)"
command -v mke2fs >/dev/null 2>&1 || skip "mke2fs not found"
command -v e2fsck >/dev/null 2>&1 || skip "e2fsck not found"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
[ -e /dev/loop-control ] || [ -e /dev/loop0 ] || skip "no loop devices"

SIZE=${IMAGE_SIZE:-4G}
NINODES=$((NFILES + NFILES / 8 + 20000))
TMP="$OUT.tmp.$$"
MNT=$(mktemp -d "${TMPDIR:-/tmp}/bigimg-mnt.XXXXXX")
mounted=0
cleanup() {
	if [ $mounted = 1 ]; then umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || :; fi
	rmdir "$MNT" 2>/dev/null || :
	rm -f "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -f "$TMP"
truncate -s "$SIZE" "$TMP"
mke2fs -q -F -t ext4 -N "$NINODES" -L bigwalk "$TMP"
mount -o loop "$TMP" "$MNT" 2>/dev/null || skip "cannot loop-mount (no loop device or not permitted)"
mounted=1

start=$(date +%s)
python3 - "$MNT" "$NFILES" <<'EOF'
import os, sys

root, nfiles = sys.argv[1], int(sys.argv[2])
PER_DIR = 1000          # entries per leaf directory: several blocks, htree-indexed
DIRS_PER_TOP = 20
BLK = 4096
one_block = b"x" * 100
five_blocks = b"y" * (5 * BLK)
O = os.O_WRONLY | os.O_CREAT | os.O_EXCL

def leaf_dir(i):
    d = i // PER_DIR
    return os.path.join(root, "t%03d" % (d // DIRS_PER_TOP), "s%04d" % d)

made = set()
for i in range(nfiles):
    d = leaf_dir(i)
    if d not in made:
        os.makedirs(d, exist_ok=True)
        made.add(d)
    # ~27-byte names: 1000 entries take 9 blocks, so every leaf dir is indexed
    fd = os.open(os.path.join(d, "file-%07d-abcdefghijkl" % i), O, 0o644)
    if i % 64 == 0:
        os.write(fd, five_blocks)
    elif i % 16 == 0:
        os.write(fd, one_block)
    os.close(fd)
    if i % 100000 == 99999:
        print("  %d files" % (i + 1), flush=True)

extra = os.path.join(root, "extra")
os.makedirs(extra)

# bigger files, 1-8 MiB, written in one go (a few long extents)
big = os.path.join(extra, "big")
os.makedirs(big)
chunk = os.urandom(1 << 20)
for i in range(max(1, nfiles // 3000)):
    with open(os.path.join(big, "big%04d" % i), "wb") as f:
        for _ in range(1 + i % 8):
            f.write(chunk)

# sparse files: one written block in two, so each block is its own extent and
# the tree needs an index level (a leaf block holds 340 extents)
sparse = os.path.join(extra, "sparse")
os.makedirs(sparse)
blk = b"s" * BLK
for i in range(max(1, nfiles // 6000)):
    fd = os.open(os.path.join(sparse, "sparse%04d" % i), O, 0o644)
    for b in range(0, 2 * (1000 + 37 * i), 2):
        os.pwrite(fd, blk, b * BLK)
    os.close(fd)

# physically interleaved files: appended round-robin, fsync after each round
inter = os.path.join(extra, "interleaved")
os.makedirs(inter)
fds = [os.open(os.path.join(inter, "frag%02d" % i), O, 0o644) for i in range(8)]
piece = b"f" * (4 * BLK)
for r in range(200):
    for fd in fds:
        os.write(fd, piece)
        os.fsync(fd)
for fd in fds:
    os.close(fd)

# preallocated files: unwritten extents, partly written over
pre = os.path.join(extra, "prealloc")
os.makedirs(pre)
for i in range(16):
    fd = os.open(os.path.join(pre, "pre%02d" % i), O, 0o644)
    os.posix_fallocate(fd, 0, (i + 1) * 256 * 1024)
    os.pwrite(fd, blk, (i % 4) * 8 * BLK)
    os.close(fd)

# symlinks: fast (target in the inode) and slow (target in a block)
sl = os.path.join(extra, "symlinks")
os.makedirs(sl)
for i in range(max(2, nfiles // 200)):
    if i % 2:
        target = "../../t000/s0000/file-%07d-abcdefghijkl" % (i % PER_DIR)
        target = target + "/" + "z" * 40      # > 60 bytes: needs a block
    else:
        target = "f%d" % i
    os.symlink(target, os.path.join(sl, "l%05d" % i))

# hard links: more entries than inodes
hl = os.path.join(extra, "hardlinks")
os.makedirs(hl)
for i in range(0, min(nfiles, 5000)):
    os.link(os.path.join(leaf_dir(i), "file-%07d-abcdefghijkl" % i),
            os.path.join(hl, "h%05d" % i))

# small and empty directories
for i in range(200):
    os.makedirs(os.path.join(extra, "small", "d%03d" % i, "sub"))
EOF
sync
echo "make-big-image: populated in $(( $(date +%s) - start ))s"
umount "$MNT"
mounted=0

rc=0
e2fsck -fn "$TMP" >"$TMP.fsck" 2>&1 || rc=$?
if [ $rc != 0 ]; then
	cat "$TMP.fsck" >&2
	rm -f "$TMP.fsck"
	echo "make-big-image: e2fsck -fn exited $rc on the new image" >&2
	exit 1
fi
tail -n 1 "$TMP.fsck"
rm -f "$TMP.fsck"
mv "$TMP" "$OUT"
echo "make-big-image: wrote $OUT"
