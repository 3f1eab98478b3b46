#!/usr/bin/env python3
"""Compare two images of one ext2/3/4 file system block by block.

Usage: imgcmp.py A B

Left out: every copy of the superblock and the backup group descriptors
(replaying tools stamp times and counts there, and the kernel leaves the
backups alone), and the journal's own blocks.  Everything else (primary
descriptors, bitmaps, inode tables, directories, trees, data) must be
equal.  The layout is read from A with dumpe2fs and debugfs.  Exit 0 when
equal, 1 with the first differing blocks listed, 2 on a usage or tool
error.
"""
import re
import subprocess
import sys


def layout(path):
    out = subprocess.run(["dumpe2fs", path], capture_output=True, text=True, check=True).stdout
    bs = int(re.search(r"^Block size:\s+(\d+)", out, re.M).group(1))
    skip = set()
    for m in re.finditer(r"(?:Primary|Backup) superblock at (\d+)(?:, Group descriptors at (\d+)-(\d+))?", out):
        skip.add(int(m.group(1)))
        if m.group(0).startswith("Backup") and m.group(2):
            skip.update(range(int(m.group(2)), int(m.group(3)) + 1))
    if bs == 1024:
        skip.add(0)   # the boot block shares nothing with the file system
    jout = subprocess.run(["debugfs", "-R", "blocks <8>", path], capture_output=True, text=True).stdout
    for tok in jout.split():
        if tok.isdigit():
            skip.add(int(tok))
    return bs, skip


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    a, b = sys.argv[1], sys.argv[2]
    try:
        bs, skip = layout(a)
    except (subprocess.CalledProcessError, AttributeError, FileNotFoundError) as e:
        print("imgcmp: cannot read the layout of %s: %s" % (a, e), file=sys.stderr)
        return 2
    diff = []
    with open(a, "rb") as fa, open(b, "rb") as fb:
        blk = 0
        while True:
            x, y = fa.read(bs), fb.read(bs)
            if not x and not y:
                break
            if x != y and blk not in skip:
                diff.append(blk)
            blk += 1
    if diff:
        print("imgcmp: %d blocks differ between %s and %s: %s%s" %
              (len(diff), a, b, " ".join(map(str, diff[:20])), " ..." if len(diff) > 20 else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
