#!/usr/bin/env python3
"""Fragment a mounted ext3/ext4 file system through the kernel, deterministically.

  fragment-workload.py concurrent MNT [--seed N] [--fill F]
  fragment-workload.py aged MNT --files N [--seed N] [--fill F]
  fragment-workload.py shattered MNT [--seed N] [--fill F]

The kinds (tests/lib/defrag-images.sh runs them over a loop mount):

  concurrent  writers (appenders and one that writes a file's pieces in
              random order, as a download client does) take turns writing
              small chunks to their own files, each fsyncing now and then,
              so that the kernel allocates the files' blocks interleaved;
              they write until F of the volume is used (default 0.6).
  aged        an aged source-like tree: nested directories, N files of
              lognormal sizes created in an interleaved order (each file
              in a random directory), then rounds of deletes, rewrites,
              appends, renames and new files, with a sync between rounds,
              so that a directory's files are scattered; the data is kept
              under F of the volume (default 0.55).
  shattered   the volume filled with small files (1-8 blocks) until no
              more fit, every other one deleted, then one large file of F
              of the free space (default 0.85) written into the holes.

Every kind also makes special/: hard links (one across directories), a
sparse file, a file with unwritten extents (fallocate; not on block-mapped
ext3), fast and slow symlinks, files with user, trusted and security
xattrs (one too big for the inode), empty files, a fifo and a character
device, an immutable file and an append-only file, and gives files and
directories varied owners, modes and times.

The sequence of calls depends only on the seed, the kind, the volume's
size and block size (statvfs) and N; where the kernel puts the blocks is
its own business.  Needs root (chown, mknod, trusted xattrs, chattr).
Prints a one-line summary.
"""

import argparse
import errno
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernelfs  # noqa: E402

FIXED_TIME_NS = 1_600_000_000 * 10**9  # 2020-09-13


def payload(rng, n):
    """n bytes that do not compress to nothing (so no block is all zeros)."""
    if n <= 0:
        return b""
    seed = rng.getrandbits(64).to_bytes(8, "little")
    reps = n // 8 + 1
    return (seed * reps)[:n]


def volume(mnt):
    st = os.statvfs(mnt)
    return st.f_frsize, st.f_blocks, st.f_bfree


def used_fraction(mnt):
    _, total, free = volume(mnt)
    return 1.0 - free / total


def is_block_mapped(mnt):
    fd = os.open(os.path.join(mnt, "special", "linked"), os.O_RDONLY)
    try:
        return not kernelfs.get_flags(fd) & 0x00080000
    finally:
        os.close(fd)


def write_file(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


# ---------------------------------------------------------------- concurrent

def concurrent(mnt, rng, fill):
    bs, total, _ = volume(mnt)
    d = os.path.join(mnt, "writers")
    os.mkdir(d)
    nwriters = 16
    writers = []
    for i in range(nwriters):
        path = os.path.join(d, "log%02d" % i)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        writers.append({"fd": fd, "pos": 0, "pieces": None})
    # Writer 0 downloads a file in pieces, in random order, into a file
    # whose size it knows (like a download client without preallocation).
    piece = 16 * bs
    npieces = max(8, int(total * bs * fill / nwriters / piece))
    order = list(range(npieces))
    rng.shuffle(order)
    writers[0]["pieces"] = order
    os.ftruncate(writers[0]["fd"], npieces * piece)
    budget = int(total * bs * fill)
    written = 0
    calls = 0
    while written < budget:
        w = rng.choice(writers)
        if w["pieces"] is not None:
            if not w["pieces"]:
                continue
            off = w["pieces"].pop() * piece
            n = piece
        else:
            off = w["pos"]
            n = rng.randint(1, 16) * 1024
            w["pos"] += n
        try:
            os.pwrite(w["fd"], payload(rng, n), off)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                break
            raise
        written += n
        calls += 1
        if rng.random() < 0.3:
            os.fsync(w["fd"])
    for w in writers:
        os.fsync(w["fd"])
        os.close(w["fd"])
    return "%d writers, %d writes, %d KiB" % (nwriters, calls, written // 1024)


# ---------------------------------------------------------------- aged tree

def lognormal_size(rng, cap):
    # Median 4 KiB, a long tail, like the files of a source tree.
    return min(cap, int(rng.lognormvariate(math.log(4096), 1.6)))


def aged(mnt, rng, fill, nfiles):
    bs, total, _ = volume(mnt)
    budget = int(total * bs * fill)
    cap = max(bs, budget // 40)
    root = os.path.join(mnt, "src")
    os.mkdir(root)
    dirs = [root]
    ndirs = max(4, nfiles // 12)
    while len(dirs) < ndirs:
        parent = rng.choice(dirs[: max(1, len(dirs))])
        path = os.path.join(parent, "d%03d" % len(dirs))
        os.mkdir(path)
        dirs.append(path)
    sizes = [lognormal_size(rng, cap) for _ in range(nfiles)]
    scale = min(1.0, budget * 0.7 / max(1, sum(sizes)))
    files = {}
    serial = 0

    def create(size):
        nonlocal serial
        path = os.path.join(rng.choice(dirs), "f%05d.c" % serial)
        serial += 1
        write_file(path, payload(rng, size))
        files[path] = size

    for i, s in enumerate(sizes):
        create(int(s * scale))
        if i % 64 == 63:
            os.sync()
    os.sync()
    rounds = 4
    for _ in range(rounds):
        names = sorted(files)
        rng.shuffle(names)
        k = len(names) // 10
        for p in names[:k + k // 2]:             # deletes
            os.unlink(p)
            del files[p]
        for p in names[k + k // 2:2 * k + k // 2]:   # rewrites
            size = int(lognormal_size(rng, cap) * scale)
            write_file(p, payload(rng, size))
            files[p] = size
        for p in names[2 * k + k // 2:3 * k + k // 2]:   # appends
            n = rng.randint(1, 3 * bs)
            write_file(p, payload(rng, n), "ab")
            files[p] += n
        for p in names[3 * k + k // 2:3 * k + k // 2 + k // 4]:   # renames
            q = os.path.join(rng.choice(dirs), os.path.basename(p))
            if q not in files:
                os.rename(p, q)
                files[q] = files.pop(p)
        for _ in range(k + k // 2):              # new files
            if sum(files.values()) > budget:
                break
            create(int(lognormal_size(rng, cap) * scale))
        os.sync()
    return "%d dirs, %d files, %d KiB" % (len(dirs), len(files),
                                          sum(files.values()) // 1024)


# ---------------------------------------------------------------- shattered

def shattered(mnt, rng, fill):
    bs, total, _ = volume(mnt)
    d = os.path.join(mnt, "filler")
    os.mkdir(d)
    small = []
    sub = None
    stop = False
    while not stop:
        if len(small) % 1000 == 0:
            sub = os.path.join(d, "%03d" % (len(small) // 1000))
            os.mkdir(sub)
            _, _, free = volume(mnt)
            if free < total * 0.03 or free < 64:
                break
        path = os.path.join(sub, "s%05d" % len(small))
        try:
            write_file(path, payload(rng, rng.randint(1, 8) * bs))
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            stop = True
            if os.path.exists(path):
                os.unlink(path)
            continue
        small.append(path)
        if len(small) % 500 == 0:
            os.sync()
    os.sync()
    for p in small[::2]:
        os.unlink(p)
    os.sync()
    _, _, free = volume(mnt)
    size = int(free * bs * fill) // bs * bs
    chunk = 1 << 20
    with open(os.path.join(mnt, "large.bin"), "wb") as f:
        left = size
        while left > 0:
            n = min(chunk, left)
            f.write(payload(rng, n))
            left -= n
    os.sync()
    return "%d small files (%d left), large file %d KiB" % (
        len(small), len(small) - len(small[::2]), size // 1024)


# ---------------------------------------------------------------- specials

def specials(mnt, rng):
    bs, _, _ = volume(mnt)
    d = os.path.join(mnt, "special")
    os.makedirs(os.path.join(d, "sub"))
    # Hard links: three names in one directory and one in another.
    write_file(os.path.join(d, "linked"), payload(rng, 5 * bs + 123))
    os.link(os.path.join(d, "linked"), os.path.join(d, "linked.2"))
    os.link(os.path.join(d, "linked"), os.path.join(d, "sub", "linked.3"))
    # A sparse file: data, a hole, data, a hole up to its size.
    with open(os.path.join(d, "sparse"), "wb") as f:
        f.write(payload(rng, 3 * bs))
        f.seek(64 * bs)
        f.write(payload(rng, bs + 17))
        f.truncate(200 * bs)
    # Unwritten extents: allocated, partly written, and some beyond EOF.
    path = os.path.join(d, "prealloc")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        kernelfs.fallocate(fd, 0, 0, 48 * bs)
        kernelfs.fallocate(fd, kernelfs.FALLOC_FL_KEEP_SIZE, 48 * bs, 16 * bs)
        os.pwrite(fd, payload(rng, 4 * bs), 8 * bs)
        os.fsync(fd)
    except OSError as e:
        if e.errno != errno.EOPNOTSUPP:
            raise
        os.pwrite(fd, payload(rng, 4 * bs), 8 * bs)   # ext3: sparse instead
    os.close(fd)
    # Symlinks: fast (in the inode) and slow (in a block), one dangling.
    os.symlink("linked", os.path.join(d, "fast-link"))
    os.symlink("/" + "/".join("component%02d" % i for i in range(20)),
               os.path.join(d, "slow-link"))
    os.symlink("../special/sub/linked.3", os.path.join(d, "sub", "up-link"))
    # Extended attributes, in the inode and one too large for it.
    xf = os.path.join(d, "xattrs")
    write_file(xf, payload(rng, 2 * bs))
    os.setxattr(xf, "user.comment", b"kept by defrag")
    os.setxattr(xf, "trusted.md5", b"0123456789abcdef")
    os.setxattr(xf, "security.label", b"system_u:object_r:etc_t:s0")
    os.setxattr(xf, "user.big", payload(rng, min(700, bs // 2)))
    os.setxattr(d, "user.dir-note", b"directory xattr")
    os.setxattr(os.path.join(d, "sparse"), "user.holes", b"yes")
    # Empty files.
    for i in range(3):
        write_file(os.path.join(d, "empty%d" % i), b"")
    # A fifo and a character device.
    os.mkfifo(os.path.join(d, "fifo"), 0o620)
    os.mknod(os.path.join(d, "null-dev"), 0o600 | 0o020000, os.makedev(1, 3))
    # Varied owners, modes and times.
    owners = [(0, 0), (1000, 1000), (1001, 100), (65534, 65534), (42, 4242)]
    modes = [0o644, 0o600, 0o755, 0o4755, 0o2750, 0o444, 0o1777]
    for i, name in enumerate(sorted(os.listdir(d))):
        p = os.path.join(d, name)
        uid, gid = owners[i % len(owners)]
        os.chown(p, uid, gid, follow_symlinks=False)
        if not os.path.islink(p) and os.path.isfile(p) and name != "null-dev":
            os.chmod(p, modes[i % len(modes)])
    # Immutable and append-only files (their flags are set last, by
    # set_flags_last: after that nothing may change them).
    for name in ("immutable", "append-only"):
        write_file(os.path.join(d, name), payload(rng, 2 * bs + 5))


def set_flags_last(mnt):
    d = os.path.join(mnt, "special")
    for name, flag in (("immutable", kernelfs.FS_IMMUTABLE_FL),
                       ("append-only", kernelfs.FS_APPEND_FL)):
        fd = os.open(os.path.join(d, name), os.O_RDONLY)
        try:
            kernelfs.set_flags(fd, kernelfs.get_flags(fd) | flag)
        finally:
            os.close(fd)


def vary_times(mnt, rng):
    """Give every object its own atime and mtime (ns), deepest first, so
    that setting a directory's times is the last change made to it."""
    objs = []
    for top, dirnames, filenames in os.walk(mnt):
        if top == mnt and "lost+found" in dirnames:
            dirnames.remove("lost+found")
        objs.extend(os.path.join(top, n) for n in filenames + dirnames)
    objs.sort(key=lambda p: (-p.count("/"), p))
    for p in objs + [mnt]:
        a = FIXED_TIME_NS + rng.randrange(10**9) * 10**6 + rng.randrange(10**9)
        m = FIXED_TIME_NS + rng.randrange(10**9) * 10**6 + rng.randrange(10**9)
        os.utime(p, ns=(a, m), follow_symlinks=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=("concurrent", "aged", "shattered"))
    ap.add_argument("mnt")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--fill", type=float)
    a = ap.parse_args()
    rng = random.Random("%s:%d" % (a.kind, a.seed))
    specials(a.mnt, rng)
    if a.kind == "concurrent":
        what = concurrent(a.mnt, rng, a.fill or 0.6)
    elif a.kind == "aged":
        what = aged(a.mnt, rng, a.fill or 0.55, a.files)
    else:
        what = shattered(a.mnt, rng, a.fill or 0.85)
    vary_times(a.mnt, rng)
    set_flags_last(a.mnt)
    os.sync()
    bs, total, free = volume(a.mnt)
    print("%s: %s; %.0f%% used, %s" % (
        a.kind, what, 100.0 * (1 - free / total),
        "block-mapped" if is_block_mapped(a.mnt) else "extents"))


if __name__ == "__main__":
    main()
