"""What the test tools ask the kernel about files on a mounted ext2/3/4.

Shared by fragment-workload.py, manifest.py and layout-figures.py (they put
this file's directory on sys.path).  Linux only; plain ioctls through fcntl
and one libc call through ctypes, so it needs nothing but python3.

  fiemap(fd)            the file's extents as the kernel maps them
                        (FS_IOC_FIEMAP, delayed allocation flushed first):
                        a list of Extent(logical, physical, length, flags),
                        in bytes, in logical order
  merge_physical(exts, bs)
                        runs of blocks that are physically contiguous, as
                        (first block, block count) pairs: what "an extent"
                        means in every figure we print
  get_flags(fd) / set_flags(fd, flags)
                        the inode flags (FS_IOC_GETFLAGS / FS_IOC_SETFLAGS)
  flag_letters(flags, table)
                        lsattr-style letters of the flags named in table
  fallocate(fd, mode, offset, length)
                        the fallocate(2) system call (no emulation: raises
                        OSError, e.g. EOPNOTSUPP on a block-mapped file)
  open_noatime(path, flags)
                        os.open with O_NOATIME, so that reading does not
                        change what a manifest records
"""

import ctypes
import ctypes.util
import fcntl
import os
import struct
from collections import namedtuple

# linux/fs.h, linux/fiemap.h
FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_UNKNOWN = 0x2
FIEMAP_EXTENT_DELALLOC = 0x4
FIEMAP_EXTENT_DATA_INLINE = 0x200
FIEMAP_EXTENT_UNWRITTEN = 0x800

FALLOC_FL_KEEP_SIZE = 0x1
FALLOC_FL_PUNCH_HOLE = 0x2

# Inode flags that a user sets (chattr) and that a defragmenter must keep,
# with lsattr's letters.
USER_FLAGS = (
    (0x00000001, "s"), (0x00000002, "u"), (0x00000008, "S"),
    (0x00010000, "D"), (0x00000010, "i"), (0x00000020, "a"),
    (0x00000040, "d"), (0x00000080, "A"), (0x00000004, "c"),
    (0x00004000, "j"), (0x00008000, "t"), (0x00020000, "T"),
    (0x00800000, "C"), (0x20000000, "P"), (0x40000000, "F"),
)
# Flags that say how the inode maps its data: extents (e), hashed
# directory index (I), inline data (N).
MAP_FLAGS = ((0x00080000, "e"), (0x00001000, "I"), (0x10000000, "N"))

FS_IMMUTABLE_FL = 0x00000010
FS_APPEND_FL = 0x00000020

Extent = namedtuple("Extent", "logical physical length flags")

_HEAD = struct.Struct("=QQIIII")
_EXT = struct.Struct("=QQQQQIIII")
_BATCH = 256


def fiemap(fd):
    """Every extent of the open file fd, in bytes, in logical order."""
    out = []
    start = 0
    while True:
        buf = bytearray(_HEAD.size + _BATCH * _EXT.size)
        _HEAD.pack_into(buf, 0, start, 0xFFFFFFFFFFFFFFFF - start,
                        FIEMAP_FLAG_SYNC, 0, _BATCH, 0)
        fcntl.ioctl(fd, FS_IOC_FIEMAP, buf, True)
        mapped = _HEAD.unpack_from(buf, 0)[3]
        if mapped == 0:
            return out
        last = None
        for i in range(mapped):
            f = _EXT.unpack_from(buf, _HEAD.size + i * _EXT.size)
            last = Extent(f[0], f[1], f[2], f[5])
            out.append(last)
        if last.flags & FIEMAP_EXTENT_LAST:
            return out
        start = last.logical + last.length


def merge_physical(extents, block_size):
    """(first block, count) runs of physically contiguous blocks."""
    runs = []
    for e in extents:
        if e.flags & (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_UNKNOWN
                      | FIEMAP_EXTENT_DELALLOC):
            continue
        first = e.physical // block_size
        count = (e.length + block_size - 1) // block_size
        if runs and runs[-1][0] + runs[-1][1] == first:
            runs[-1] = (runs[-1][0], runs[-1][1] + count)
        else:
            runs.append((first, count))
    return runs


def get_flags(fd):
    buf = bytearray(8)
    fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
    return struct.unpack_from("=I", buf)[0]


def set_flags(fd, flags):
    buf = bytearray(struct.pack("=Q", flags))
    fcntl.ioctl(fd, FS_IOC_SETFLAGS, buf, True)


def flag_letters(flags, table):
    return "".join(letter for bit, letter in table if flags & bit) or "-"


_libc = None


def fallocate(fd, mode, offset, length):
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        _libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int,
                                    ctypes.c_int64, ctypes.c_int64]
    if _libc.fallocate(fd, mode, offset, length) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def open_noatime(path, flags=os.O_RDONLY):
    """os.open(path) that leaves atime alone (O_NOATIME needs the owner or
    root; fall back to a plain open for anyone else)."""
    try:
        return os.open(path, flags | os.O_NOATIME | os.O_NOFOLLOW)
    except PermissionError:
        return os.open(path, flags | os.O_NOFOLLOW)
