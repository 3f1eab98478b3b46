#!/usr/bin/env python3
"""A manifest of everything under a mount point, and the comparison of two.

  manifest.py take MOUNTPOINT > FILE
  manifest.py compare A B [--ignore FIELD,...]

take records, for every object under MOUNTPOINT (lost+found excluded; the
mount point itself is recorded as "."), one JSON object a line, sorted by
path:
  path     relative to MOUNTPOINT
  type     file, dir, symlink, fifo, chr, blk, sock
  ino, nlink, mode (octal string, with the file type bits), uid, gid, size
  rdev     "major:minor" of a device, else absent
  atime, mtime, ctime
           nanoseconds since the epoch
  sha256   of a regular file's contents
  target   a symlink's target
  xattrs   {name: value} for every attribute listxattr shows (as root:
           user, trusted, security and system): the value in hex when it
           is at most 64 bytes, else "sha256:..." of it
  flags    lsattr letters of the flags a user sets (i immutable, a append
           only, d, A, s, S, ...; "-" for none); files and directories only
  mapflags lsattr letters of how the inode maps data: e extents, I indexed
           directory, N inline data (files and directories only)
  map      a regular file's logical layout from FIEMAP, independent of where
           its blocks are: [[first byte, bytes, "data"|"unwritten"|"inline"],
           ...], adjacent ranges of one kind merged; holes are the gaps

Take a manifest on a read-only (or noatime) mount: reading a file on a
read-write relatime mount may change its atime (take opens with O_NOATIME
and records the times before reading, but a later take would see what
another reader changed).  take warns on stderr when the mount is
read-write without noatime.

compare prints one line per difference ("PATH: FIELD A -> B", "PATH: only
in A", ...) and exits 1 when there is one, 0 when there is none.
--ignore FIELD,... leaves those fields out (e.g. atime,ctime,ino after a
tool that may legitimately change them).  Exit 2 on bad usage.
"""

import argparse
import hashlib
import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernelfs  # noqa: E402

TYPES = ((stat.S_ISREG, "file"), (stat.S_ISDIR, "dir"),
         (stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "fifo"),
         (stat.S_ISCHR, "chr"), (stat.S_ISBLK, "blk"),
         (stat.S_ISSOCK, "sock"))


def file_type(mode):
    for test, name in TYPES:
        if test(mode):
            return name
    return "unknown"


def xattrs(path):
    out = {}
    for name in sorted(os.listxattr(path, follow_symlinks=False)):
        v = os.getxattr(path, name, follow_symlinks=False)
        out[name] = v.hex() if len(v) <= 64 else \
            "sha256:" + hashlib.sha256(v).hexdigest()
    return out


def logical_map(fd):
    out = []
    for e in kernelfs.fiemap(fd):
        if e.flags & kernelfs.FIEMAP_EXTENT_DATA_INLINE:
            kind = "inline"
        elif e.flags & kernelfs.FIEMAP_EXTENT_UNWRITTEN:
            kind = "unwritten"
        else:
            kind = "data"
        if out and out[-1][2] == kind and out[-1][0] + out[-1][1] == e.logical:
            out[-1][1] += e.length
        else:
            out.append([e.logical, e.length, kind])
    return out


def record(root, rel):
    path = os.path.join(root, rel) if rel != "." else root
    st = os.lstat(path)
    r = {"path": rel, "type": file_type(st.st_mode), "ino": st.st_ino,
         "nlink": st.st_nlink, "mode": "%o" % st.st_mode, "uid": st.st_uid,
         "gid": st.st_gid, "size": st.st_size, "atime": st.st_atime_ns,
         "mtime": st.st_mtime_ns, "ctime": st.st_ctime_ns}
    if r["type"] in ("chr", "blk"):
        r["rdev"] = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    if r["type"] == "symlink":
        r["target"] = os.readlink(path)
    r["xattrs"] = xattrs(path)
    if r["type"] in ("file", "dir"):
        flags = os.O_RDONLY | (os.O_DIRECTORY if r["type"] == "dir" else 0)
        fd = kernelfs.open_noatime(path, flags)
        try:
            f = kernelfs.get_flags(fd)
            r["flags"] = kernelfs.flag_letters(f, kernelfs.USER_FLAGS)
            r["mapflags"] = kernelfs.flag_letters(f, kernelfs.MAP_FLAGS)
            if r["type"] == "file":
                r["map"] = logical_map(fd)
                h = hashlib.sha256()
                while True:
                    b = os.read(fd, 1 << 20)
                    if not b:
                        break
                    h.update(b)
                r["sha256"] = h.hexdigest()
        finally:
            os.close(fd)
    return r


def walk(root):
    yield "."
    for top, dirs, files in os.walk(root):
        if top == root and "lost+found" in dirs:
            dirs.remove("lost+found")
        for n in dirs + files:
            yield os.path.relpath(os.path.join(top, n), root)


def warn_if_atime_moves(root):
    real = os.path.realpath(root)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == real:
                opts = fields[5].split(",")
                if "ro" not in opts and "noatime" not in opts:
                    print("manifest: %s is mounted read-write without "
                          "noatime: readers may change atimes" % root,
                          file=sys.stderr)


def take(root):
    warn_if_atime_moves(root)
    recs = [record(root, rel) for rel in walk(root)]
    for r in sorted(recs, key=lambda r: r["path"]):
        print(json.dumps(r, sort_keys=True))


def load(path):
    with open(path) as f:
        return {r["path"]: r for r in map(json.loads, f) if r}


def compare(a_path, b_path, ignore):
    a, b = load(a_path), load(b_path)
    diffs = []
    for p in sorted(set(a) | set(b)):
        if p not in b:
            diffs.append("%s: only in %s" % (p, a_path))
        elif p not in a:
            diffs.append("%s: only in %s" % (p, b_path))
        else:
            for k in sorted(set(a[p]) | set(b[p])):
                if k in ignore or k == "path":
                    continue
                va, vb = a[p].get(k), b[p].get(k)
                if va != vb:
                    diffs.append("%s: %s %s -> %s" % (
                        p, k, json.dumps(va), json.dumps(vb)))
    for d in diffs:
        print(d)
    return 1 if diffs else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("take")
    t.add_argument("mountpoint")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--ignore", default="",
                   help="comma-separated fields to leave out")
    a = ap.parse_args()
    if a.cmd == "take":
        if not os.path.isdir(a.mountpoint):
            ap.error("%s is not a directory" % a.mountpoint)
        take(a.mountpoint)
        return 0
    return compare(a.a, a.b, {f for f in a.ignore.split(",") if f})


if __name__ == "__main__":
    sys.exit(main())
