#!/usr/bin/env python3
"""Layout figures of a mounted ext2/3/4 file system: how fragmented it is.

  layout-figures.py MOUNTPOINT [--image IMG] [--json]

File figures come from FIEMAP through the kernel mount; free-space figures
from e2freefrag run on IMG (the image or device behind the mount).  Mount
read-only for exact free-space figures: a read-write mount may hold newer
bitmaps in its journal than e2freefrag reads (the tool says so on stderr).
Without --image the free-space figures are left out.

One definition of "extent" for every figure: a run of physically
contiguous blocks of one file (FIEMAP's extents merged where one ends
where the next begins; inline data has none).  A file's ideal is
ceil(blocks / 32768), the fewest extents ext4 can map it in.  The block
group of block B is (B - first_data_block) // blocks_per_group (from
dumpe2fs -h).  Hard-linked files count once, under the first name met.

Figures (JSON keys; the table prints the same, in this order):
  files                 regular files (inodes)
  extents               their extents
  files_above_ideal     files with more extents than their ideal
  largest_file, largest_file_bytes, largest_file_extents
                        the largest regular file (by allocated blocks)
  dirs_with_files       directories holding a regular file with blocks
  groups_per_dir_mean   mean over those directories of the number of
  groups_per_dir_max    distinct block groups their files start in (a
                        file is in every directory it has a name in)
  dir_file_distance_mean
                        mean over (directory, file) pairs of |file's first
                        block - directory's first block|, in blocks
  tree_read_seek_blocks walk the tree depth first in readdir order (the
                        order os.scandir returns): each directory's blocks,
                        then its entries, reading each regular file's
                        extents the first time it is met, going into each
                        subdirectory when it is met; the sum over
                        consecutive extents of |start - previous end|
  free_blocks, free_extents, free_share_64m
                        from e2freefrag: free blocks, free extents, and the
                        share (0-1) of free blocks in free extents of at
                        least 64 MiB
  block_size, blocks_per_group, groups
"""

import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernelfs  # noqa: E402

IDEAL_BLOCKS = 32768


def mount_info(mnt):
    """(source, options) of the mount at mnt, from /proc/self/mountinfo."""
    mnt = os.path.realpath(mnt)
    found = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[4] == mnt:
                found = (fields[sep + 2], fields[5])
    if found is None:
        sys.exit("layout-figures: %s is not a mount point" % mnt)
    return found


def super_figures(dev):
    """first_data_block, blocks_per_group, block count from dumpe2fs -h."""
    out = subprocess.run(["dumpe2fs", "-h", dev], capture_output=True,
                         text=True, check=True).stdout
    want = {"First block": "first", "Blocks per group": "bpg",
            "Block count": "count", "Block size": "bs"}
    got = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in want:
            got[want[key.strip()]] = int(value.strip())
    return got


def freefrag(img, block_size):
    """(free blocks, free extents, share in extents >= 64 MiB)."""
    out = subprocess.run(["e2freefrag", img], capture_output=True,
                         text=True, check=True).stdout
    free = int(re.search(r"^Free blocks: (\d+)", out, re.M).group(1))
    extents = int(re.search(r"^Num\. free extent: (\d+)", out, re.M).group(1))
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
             "P": 1 << 50}
    big = 0
    for m in re.finditer(r"^\s*(\d+)([KMGTP])\.\.\.\s*\S*\s*:\s*(\d+)\s+(\d+)",
                         out, re.M):
        if int(m.group(1)) * units[m.group(2)] >= 64 << 20:
            big += int(m.group(4))
    return free, extents, (big / free if free else 0.0)


def runs_of(path, bs):
    fd = kernelfs.open_noatime(path)
    try:
        return kernelfs.merge_physical(kernelfs.fiemap(fd), bs)
    finally:
        os.close(fd)


class Walk:
    def __init__(self, bs, first, bpg):
        self.bs, self.first, self.bpg = bs, first, bpg
        self.files = {}      # ino -> (path, runs)
        self.dirs = []       # (path, dir runs, [file runs])
        self.seek = 0
        self.pos = None

    def read(self, runs):
        for start, count in runs:
            if self.pos is not None:
                self.seek += abs(start - self.pos)
            self.pos = start + count

    def walk(self, path, top=False):
        druns = runs_of(path, self.bs)
        self.read(druns)
        members = []
        fd = kernelfs.open_noatime(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            entries = list(os.scandir(fd))
        finally:
            os.close(fd)
        for e in entries:
            if top and e.name == "lost+found":
                continue
            p = os.path.join(path, e.name)
            if e.is_dir(follow_symlinks=False):
                self.walk(p)
            elif e.is_file(follow_symlinks=False):
                ino = e.inode()
                if ino not in self.files:
                    runs = runs_of(p, self.bs)
                    self.files[ino] = (p, runs)
                    self.read(runs)
                members.append(self.files[ino][1])
        self.dirs.append((path, druns, members))

    def group(self, block):
        return (block - self.first) // self.bpg


def figures(mnt, image):
    source, opts = mount_info(mnt)
    sb = super_figures(image or source)
    bs = os.statvfs(mnt).f_frsize
    w = Walk(bs, sb["first"], sb["bpg"])
    w.walk(os.path.realpath(mnt), top=True)
    r = {"block_size": bs, "blocks_per_group": sb["bpg"],
         "groups": (sb["count"] - sb["first"] + sb["bpg"] - 1) // sb["bpg"]}
    r["files"] = len(w.files)
    r["extents"] = sum(len(runs) for _, runs in w.files.values())
    above = 0
    largest = (None, -1, 0)
    for path, runs in w.files.values():
        blocks = sum(c for _, c in runs)
        if len(runs) > (blocks + IDEAL_BLOCKS - 1) // IDEAL_BLOCKS:
            above += 1
        if blocks > largest[1] or (blocks == largest[1] and largest[0]
                                   and path < largest[0]):
            largest = (path, blocks, len(runs))
    r["files_above_ideal"] = above
    r["largest_file"] = (os.path.relpath(largest[0], mnt)
                         if largest[0] else None)
    r["largest_file_bytes"] = max(0, largest[1]) * bs
    r["largest_file_extents"] = largest[2]
    groups, dists = [], []
    for _, druns, members in w.dirs:
        starts = [runs[0][0] for runs in members if runs]
        if not starts:
            continue
        groups.append(len({w.group(b) for b in starts}))
        if druns:
            dists.extend(abs(b - druns[0][0]) for b in starts)
    r["dirs_with_files"] = len(groups)
    r["groups_per_dir_mean"] = (round(sum(groups) / len(groups), 3)
                                if groups else 0.0)
    r["groups_per_dir_max"] = max(groups, default=0)
    r["dir_file_distance_mean"] = (round(sum(dists) / len(dists), 1)
                                   if dists else 0.0)
    r["tree_read_seek_blocks"] = w.seek
    if image:
        if "ro" not in opts.split(","):
            print("layout-figures: %s is mounted read-write: the free-space "
                  "figures may be stale" % mnt, file=sys.stderr)
        r["free_blocks"], r["free_extents"], share = freefrag(image, bs)
        r["free_share_64m"] = round(share, 4)
    return r


LABELS = (
    ("files", "regular files"),
    ("extents", "extents (physically contiguous runs)"),
    ("files_above_ideal", "files above their ideal extent count"),
    ("largest_file", "largest file"),
    ("largest_file_bytes", "  its allocated bytes"),
    ("largest_file_extents", "  its extents"),
    ("dirs_with_files", "directories with files"),
    ("groups_per_dir_mean", "block groups per directory, mean"),
    ("groups_per_dir_max", "block groups per directory, max"),
    ("dir_file_distance_mean", "directory-to-file distance, mean (blocks)"),
    ("tree_read_seek_blocks", "tree-read seek distance (blocks)"),
    ("free_blocks", "free blocks"),
    ("free_extents", "free extents"),
    ("free_share_64m", "share of free space in extents >= 64 MiB"),
    ("block_size", "block size"),
    ("blocks_per_group", "blocks per group"),
    ("groups", "block groups"),
)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mountpoint")
    ap.add_argument("--image", help="the image or device behind the mount "
                    "(for e2freefrag's free-space figures)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = figures(a.mountpoint, a.image)
    if a.json:
        json.dump(r, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    for key, label in LABELS:
        if key in r:
            print("%-44s %s" % (label, r[key]))


if __name__ == "__main__":
    main()
