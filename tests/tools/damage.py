#!/usr/bin/env python3
"""Damage the metadata of an ext2/3/4 image at random, deterministically.

  damage.py meta IMG                 list IMG's metadata blocks (stdout)
  damage.py selftest IMG META        check that our checksums match IMG's
  damage.py damage IMG META SEED OUT [--max-blocks N] [--heavy] [--tag NAME]
                                     write a damaged copy of IMG to OUT and
                                     print what was done to it
  damage.py patch IMG META DIR SEED... [--max-blocks N] [--heavy] [--tag NAME]
                                     the same for many seeds at once, as
                                     patches: DIR/SEED.txt (what was done),
                                     DIR/SEED.blocks, DIR/SEED.data (the
                                     damaged blocks, see write_patch)

The list ("meta" format, one block a line: BLOCK KIND OWNERS) is made with
e2fsprogs' dumpe2fs (superblocks, descriptors, bitmaps, inode tables) and
debugfs (stat of every inode in use: indirect, extent tree, directory,
slow symlink and attribute blocks; the journal superblock).  Only inode
table blocks that hold an inode in use are listed: damage elsewhere in a
table finds nothing.  OWNERS is a comma-separated list of inode numbers
(a group number for per-group metadata, "-" for none).

The same IMG, META, SEED (and --tag: t3970 passes the image name, so each
image gets its own damage for a seed) always give the same OUT.  The kinds
of damage: random bytes; a 16- or 32-bit word set to 0, to all ones, to a
small number or (32-bit) to a block number inside the file system (half of
the time a metadata block's: blocks claimed twice, which is what e2fsck's
passes 1B-1D are for); flipped bits; a block zeroed; one metadata block
copied over another.  On metadata_csum file systems the damaged objects'
checksums are made right again half of the time, so that the damage is
judged on its contents and not only for its checksum.

1-6 blocks are damaged (1 half of the time), with 1-3 changes each;
--heavy damages 4-24 blocks with 1-4 changes each; --max-blocks caps the
number of blocks.
"""

import random
import re
import shutil
import struct
import subprocess
import sys

# ------------------------------------------------------------------ crc32c

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(crc, data):
    """ext4's crc32c: no inversion on entry or exit (the caller seeds)."""
    t = _CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


# ------------------------------------------------------------------ geometry

INCOMPAT_64BIT = 0x80
INCOMPAT_CSUM_SEED = 0x2000
RO_COMPAT_METADATA_CSUM = 0x400


class Geometry:
    """What the damage needs to know of the undamaged image."""

    def __init__(self, img):
        with open(img, 'rb') as f:
            f.seek(1024)
            sb = f.read(1024)
            (self.inodes_count, blocks_lo) = struct.unpack_from('<II', sb, 0)
            self.first_data_block = struct.unpack_from('<I', sb, 0x14)[0]
            self.bs = 1024 << struct.unpack_from('<I', sb, 0x18)[0]
            self.blocks_per_group = struct.unpack_from('<I', sb, 0x20)[0]
            self.inodes_per_group = struct.unpack_from('<I', sb, 0x28)[0]
            rev = struct.unpack_from('<I', sb, 0x4C)[0]
            self.inode_size = struct.unpack_from('<H', sb, 0x58)[0] if rev else 128
            self.incompat = struct.unpack_from('<I', sb, 0x60)[0]
            self.ro_compat = struct.unpack_from('<I', sb, 0x64)[0]
            self.uuid = sb[0x68:0x78]
            self.is64 = bool(self.incompat & INCOMPAT_64BIT)
            self.desc_size = struct.unpack_from('<H', sb, 0xFE)[0] if self.is64 else 32
            hi = struct.unpack_from('<I', sb, 0x150)[0] if self.is64 else 0
            self.blocks_count = blocks_lo | (hi << 32)
            self.csum = bool(self.ro_compat & RO_COMPAT_METADATA_CSUM)
            if self.incompat & INCOMPAT_CSUM_SEED:
                self.csum_seed = struct.unpack_from('<I', sb, 0x270)[0]
            else:
                self.csum_seed = crc32c(0xFFFFFFFF, self.uuid)
            self.groups = (self.blocks_count - self.first_data_block +
                           self.blocks_per_group - 1) // self.blocks_per_group
            f.seek((self.first_data_block + 1) * self.bs)
            gdt = f.read(self.groups * self.desc_size)
        self.itable = []
        for g in range(self.groups):
            d = g * self.desc_size
            lo = struct.unpack_from('<I', gdt, d + 8)[0]
            hi = struct.unpack_from('<I', gdt, d + 0x28)[0] if self.desc_size >= 64 else 0
            self.itable.append(lo | (hi << 32))

    def inode_place(self, ino):
        """(block, offset in block) of inode ino."""
        g, i = divmod(ino - 1, self.inodes_per_group)
        byte = i * self.inode_size
        return self.itable[g] + byte // self.bs, byte % self.bs


# ------------------------------------------------------------------ meta

def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, check=True,
                       universal_newlines=True)
    return p.stdout


def parse_ranges(text):
    out = []
    for part in text.split(','):
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition('-')
        out.append((int(a), int(b) if b else int(a)))
    return out


STAT_ITEM = re.compile(r'\(([^)]*)\)(?:\[u\])?:(\d+)(?:-(\d+))?')


def meta(img):
    """Print IMG's metadata blocks: BLOCK KIND OWNERS, sorted by block."""
    geo = Geometry(img)
    found = {}   # block -> [kind, set of owners]

    def add(block, kind, owner):
        if block < geo.first_data_block or block >= geo.blocks_count:
            return
        e = found.setdefault(block, [kind, set()])
        e[1].add(str(owner))

    dump = run(['dumpe2fs', img])
    used = []
    group = None
    for line in dump.splitlines():
        m = re.match(r'Group (\d+):', line)
        if m:
            group = int(m.group(1))
            continue
        if group is None:
            continue
        s = line.strip()
        m = re.match(r'(Primary|Backup) superblock at (\d+), Group descriptors at (\d+)-(\d+)', s)
        if m:
            add(int(m.group(2)), 'sb', group)
            for b in range(int(m.group(3)), int(m.group(4)) + 1):
                add(b, 'gdt', group)
            continue
        m = re.match(r'Reserved GDT blocks at (\d+)-(\d+)', s)
        if m and group == 0:
            # The primary's first few: the rest are more of the same.
            for b in range(int(m.group(1)), min(int(m.group(2)), int(m.group(1)) + 3) + 1):
                add(b, 'rgdt', group)
            continue
        m = re.match(r'Block bitmap at (\d+)', s)
        if m:
            add(int(m.group(1)), 'bbitmap', group)
            continue
        m = re.match(r'Inode bitmap at (\d+)', s)
        if m:
            add(int(m.group(1)), 'ibitmap', group)
            continue
        m = re.match(r'Free inodes: ?(.*)', s)
        if m:
            free = set()
            for a, b in parse_ranges(m.group(1)):
                free.update(range(a, b + 1))
            first = group * geo.inodes_per_group + 1
            used += [i for i in range(first, first + geo.inodes_per_group) if i not in free]

    per_block = {}
    for ino in used:
        b, _ = geo.inode_place(ino)
        per_block.setdefault(b, []).append(ino)
    for b, inos in per_block.items():
        for ino in inos:
            add(b, 'itable', ino)

    cmds = ''.join('stat <%d>\n' % i for i in used)
    out = run(['debugfs', '-f', '-', img], stdin=cmds)
    for sect in re.split(r'^debugfs: ', out, flags=re.M)[1:]:
        m = re.match(r'stat <(\d+)>', sect)
        if not m:
            continue
        ino = int(m.group(1))
        mt = re.search(r'Type: (\S+)', sect)
        kind = mt.group(1) if mt else ''
        m = re.search(r'File ACL: (\d+)', sect)
        if m and int(m.group(1)):
            add(int(m.group(1)), 'xattr', ino)
        m = re.search(r'^(?:BLOCKS|EXTENTS):\n(.*)$', sect, flags=re.M)
        if not m:
            continue
        first_data = True
        for what, a, b in STAT_ITEM.findall(m.group(1)):
            a = int(a)
            b = int(b) if b else a
            if ino == 7:
                # The resize inode's "indirect" blocks are the reserved
                # descriptor blocks (listed above); its map is the DIND.
                if what == 'DIND':
                    add(a, 'resize', ino)
                continue
            if what in ('IND', 'DIND', 'TIND'):
                add(a, what.lower(), ino)
            elif what.startswith('ETB'):
                add(a, 'extent', ino)
            elif ino == 8:
                if first_data:
                    add(a, 'jsb', ino)
            elif kind == 'directory':
                for blk in range(a, b + 1):
                    add(blk, 'dir', ino)
            elif kind == 'symlink':
                add(a, 'symlink', ino)
            first_data = False if what[0].isdigit() else first_data

    print('# %s: block size %d, %d blocks, %d groups' %
          (img.rsplit('/', 1)[-1], geo.bs, geo.blocks_count, geo.groups))
    for b in sorted(found):
        kind, owners = found[b]
        print(b, kind, ','.join(sorted(owners, key=int)))


def read_meta(path):
    entries = []
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        b, kind, owners = line.split()
        entries.append((int(b), kind, [int(o) for o in owners.split(',') if o != '-']))
    return entries


# ------------------------------------------------------------------ checksums

class Image:
    """The image read-only, with the blocks damaged so far kept in memory."""

    def __init__(self, path, geo):
        self.f = open(path, 'rb')
        self.geo = geo
        self.changed = {}

    def read(self, block):
        if block in self.changed:
            return bytearray(self.changed[block])
        self.f.seek(block * self.geo.bs)
        return bytearray(self.f.read(self.geo.bs))

    def write(self, block, data):
        self.changed[block] = bytes(data)

    def inode(self, ino):
        b, off = self.geo.inode_place(ino)
        return self.read(b)[off:off + self.geo.inode_size]

    def inode_seed(self, ino, raw=None):
        raw = raw if raw is not None else self.inode(ino)
        gen = struct.unpack_from('<I', raw, 0x64)[0]
        c = crc32c(self.geo.csum_seed, struct.pack('<I', ino))
        return crc32c(c, struct.pack('<I', gen))


def inode_csum(img, ino, raw):
    """The checksum inode ino should carry (None: no room for one)."""
    geo = img.geo
    r = bytearray(raw)
    struct.pack_into('<H', r, 0x7C, 0)
    has_hi = geo.inode_size > 128 and 128 + struct.unpack_from('<H', r, 0x80)[0] >= 0x84
    if has_hi:
        struct.pack_into('<H', r, 0x82, 0)
    return crc32c(img.inode_seed(ino, raw), bytes(r)), has_hi


def set_inode_csum(img, ino, raw):
    c, has_hi = inode_csum(img, ino, raw)
    struct.pack_into('<H', raw, 0x7C, c & 0xFFFF)
    if has_hi:
        struct.pack_into('<H', raw, 0x82, c >> 16)


def extent_tail(buf):
    if struct.unpack_from('<H', buf, 0)[0] != 0xF30A:
        return None
    end = 12 + 12 * struct.unpack_from('<H', buf, 4)[0]
    return end if end + 4 <= len(buf) else None


def dx_countlimit(buf):
    """Where an htree node's count and limit are, or None (not a node)."""
    bs = len(buf)
    ino0, rec0 = struct.unpack_from('<IH', buf, 0)
    if ino0 and rec0 == 12 and struct.unpack_from('<H', buf, 16)[0] == bs - 12 and buf[0x1D] == 8:
        return 0x18 + 8                                   # the root
    if ino0 == 0 and rec0 == bs:
        return 8                                          # an interior node
    return None


def dir_tail(buf):
    """Offset of a leaf's checksum tail, or None (none, or an htree node)."""
    if dx_countlimit(buf) is not None:
        return None
    t = len(buf) - 12
    ino, rec, nlen, ft = struct.unpack_from('<IHBB', buf, t)
    return t if (ino, rec, nlen, ft) == (0, 12, 0, 0xDE) else None


def block_csum(img, block, kind, owners, buf):
    """(offset, width, value) of the checksum buf should carry, or None."""
    geo = img.geo
    if kind == 'extent' and owners:
        t = extent_tail(buf)
        if t is not None:
            return t, 4, crc32c(img.inode_seed(owners[0]), bytes(buf[:t]))
    elif kind == 'dir' and owners:
        t = dir_tail(buf)
        if t is not None:
            return t + 8, 4, crc32c(img.inode_seed(owners[0]), bytes(buf[:t]))
        cl = dx_countlimit(buf)
        if cl is not None:
            limit, count = struct.unpack_from('<HH', buf, cl)
            t = cl + 8 * limit
            if count <= limit and t + 8 <= len(buf):
                c = crc32c(img.inode_seed(owners[0]), bytes(buf[:cl + 8 * count]))
                return t + 4, 4, crc32c(c, bytes(buf[t:t + 4]) + bytes(4))
    elif kind == 'xattr' and struct.unpack_from('<I', buf, 0)[0] == 0xEA020000:
        r = bytearray(buf)
        struct.pack_into('<I', r, 0x10, 0)
        c = crc32c(geo.csum_seed, struct.pack('<Q', block))
        return 0x10, 4, crc32c(c, bytes(r))
    elif kind == 'sb':
        off = 1024 if block == 0 and geo.bs > 1024 else 0
        return off + 0x3FC, 4, crc32c(0xFFFFFFFF, bytes(buf[off:off + 0x3FC]))
    return None


def gdt_csums(img, block, group_base, buf):
    """[(offset, value)] for the descriptors held in this descriptor block."""
    geo = img.geo
    out = []
    per = geo.bs // geo.desc_size
    for i in range(per):
        g = group_base + i
        if g >= geo.groups:
            break
        d = bytearray(buf[i * geo.desc_size:(i + 1) * geo.desc_size])
        struct.pack_into('<H', d, 0x1E, 0)
        c = crc32c(geo.csum_seed, struct.pack('<I', g))
        out.append((i * geo.desc_size + 0x1E, crc32c(c, bytes(d)) & 0xFFFF))
    return out


def gdt_base(geo, block, entries):
    """Number of the first group whose descriptor block `block` holds."""
    # Each copy of the table starts in the block after its superblock's.
    n = (geo.groups * geo.desc_size + geo.bs - 1) // geo.bs
    for b, kind, _ in entries:
        if kind == 'sb' and b + 1 <= block < b + 1 + n:
            return (block - b - 1) * (geo.bs // geo.desc_size)
    return 0


def slot_inode(geo, owners, off):
    """The inode at byte off of an inode table block whose inodes in use
    are owners (0 if unknown)."""
    if not owners:
        return 0
    first = owners[0] - geo.inode_place(owners[0])[1] // geo.inode_size
    return first + off // geo.inode_size


def selftest(img_path, meta_path):
    """Our checksums must agree with every checksum in the undamaged image."""
    geo = Geometry(img_path)
    if not geo.csum:
        print('no metadata_csum: nothing to check')
        return 0
    img = Image(img_path, geo)
    entries = read_meta(meta_path)
    bad = checked = 0
    for b, kind, owners in entries:
        buf = img.read(b)
        if kind == 'itable':
            for ino in owners:
                _, off = geo.inode_place(ino)
                raw = buf[off:off + geo.inode_size]
                c, has_hi = inode_csum(img, ino, raw)
                have = struct.unpack_from('<H', raw, 0x7C)[0]
                if has_hi:
                    have |= struct.unpack_from('<H', raw, 0x82)[0] << 16
                else:
                    c &= 0xFFFF
                checked += 1
                if c != have:
                    bad += 1
                    print('inode %d: checksum 0x%x, ours 0x%x' % (ino, have, c))
        elif kind == 'gdt':
            for off, c in gdt_csums(img, b, gdt_base(geo, b, entries), buf):
                checked += 1
                if struct.unpack_from('<H', buf, off)[0] != c:
                    bad += 1
                    print('descriptor block %d +%#x: checksum differs' % (b, off))
        else:
            r = block_csum(img, b, kind, owners, buf)
            if r:
                off, _, c = r
                checked += 1
                if struct.unpack_from('<I', buf, off)[0] != c:
                    bad += 1
                    print('%s block %d: checksum 0x%x, ours 0x%x' %
                          (kind, b, struct.unpack_from('<I', buf, off)[0], c))
    print('%d checksums checked, %d differ' % (checked, bad))
    return 1 if bad or not checked else 0


# ------------------------------------------------------------------ damage

KIND_WEIGHT = {
    'itable': 4, 'ind': 2, 'dind': 1.5, 'tind': 1.5, 'extent': 3, 'dir': 3,
    'xattr': 1.5, 'symlink': 0.5, 'gdt': 1, 'bbitmap': 0.7, 'ibitmap': 0.7,
    'sb': 0.4, 'rgdt': 0.3, 'resize': 0.4, 'jsb': 0.6,
}
OPS = [('bytes', 2), ('word0', 1.5), ('wordff', 1), ('wordblk', 3),
       ('wordsmall', 1.5), ('bits', 1.5), ('zero', 0.7), ('copy', 0.8)]


def pick(r, weighted):
    total = sum(w for _, w in weighted)
    x = r.random() * total
    for item, w in weighted:
        x -= w
        if x < 0:
            return item
    return weighted[-1][0]


def damage(geo, img_path, entries, seed, max_blocks, tag, heavy=False):
    """Damage a few metadata blocks (4-24 with heavy); returns
    (description lines, the damaged blocks as {block: bytes})."""
    by_kind = {}
    for e in entries:
        by_kind.setdefault(e[1], []).append(e)
    r = random.Random('%s:%d' % (tag, seed))
    img = Image(img_path, geo)
    lines = []

    if heavy:
        nblocks = r.randint(4, 24)
    else:
        nblocks = pick(r, [(1, 50), (2, 25), (3, 15), (r.randint(4, 6), 10)])
    if max_blocks:
        nblocks = min(max_blocks, nblocks)
    kinds = [(k, KIND_WEIGHT.get(k, 0.5)) for k in by_kind]
    lines.append('seed %d on %s: %d block%s' % (seed, tag, nblocks, 's' if nblocks > 1 else ''))
    touched = []   # (entry, set of changed offsets)
    for _ in range(nblocks):
        ent = r.choice(by_kind[pick(r, kinds)])
        block, kind, owners = ent
        buf = img.read(block)
        before = bytes(buf)
        lo, hi = 0, geo.bs   # the part of the block that means something
        if kind == 'sb':
            lo = 1024 if block == 0 and geo.bs > 1024 else 0
            hi = lo + 1024
        elif kind == 'gdt':
            hi = min(geo.bs, geo.groups * geo.desc_size)
        where = '%d %s %s' % (block, kind, ','.join(map(str, owners)) or '-')
        for _ in range(r.randint(1, 4) if heavy else pick(r, [(1, 60), (2, 30), (3, 10)])):
            op = pick(r, OPS)
            desc = apply_op(r, op, buf, lo, hi, ent, geo, entries, by_kind, img, owners)
            lines.append('  block %s: %s' % (where, desc))
        img.write(block, buf)
        changed = {i for i in range(geo.bs) if buf[i] != before[i]}
        touched.append((ent, changed))

    if geo.csum and r.random() < 0.5:
        fixed = recsum(img, touched, entries)
        if fixed:
            lines.append('  checksums made right again: %s' % ', '.join(fixed))
    img.f.close()
    return lines, img.changed


def write_damaged(img_path, geo, changed, out):
    shutil.copyfile(img_path, out)
    with open(out, 'r+b') as f:
        for b, data in sorted(changed.items()):
            f.seek(b * geo.bs)
            f.write(data)


def write_patch(geo, changed, prefix):
    """PREFIX.blocks: the damaged blocks' numbers, one a line (the block
    size on the first); PREFIX.data: their contents in that order."""
    with open(prefix + '.blocks', 'w') as fb, open(prefix + '.data', 'wb') as fd:
        fb.write('%d\n' % geo.bs)
        for b, data in sorted(changed.items()):
            fb.write('%d\n' % b)
            fd.write(data)


def word_offset(r, buf, lo, hi, width, ent, geo):
    """An aligned offset in [lo, hi): often a nonzero word (a pointer,
    a count), in an inode table often an inode in use, and there often
    its block map or extent root."""
    block, kind, owners = ent
    if kind == 'itable' and owners and r.random() < 0.8:
        ino = r.choice(owners)
        _, off = geo.inode_place(ino)
        x = r.random()
        if x < 0.5:
            o = off + 40 + r.randrange(0, 60 // width) * width        # i_block
        elif x < 0.65:
            o = off + r.randrange(0, 40 // width) * width             # mode..flags
        elif x < 0.75:
            o = off + 0x68 if width == 4 else off + 0x68 + r.choice((0, 2))  # i_file_acl
        else:
            o = off + r.randrange(0, geo.inode_size // width) * width
        return o
    if r.random() < 0.6:
        nz = [o for o in range(lo, hi, width) if any(buf[o:o + width])]
        if nz:
            return r.choice(nz)
    return lo + r.randrange(0, (hi - lo) // width) * width


def apply_op(r, op, buf, lo, hi, ent, geo, entries, by_kind, img, owners):
    if op == 'bytes':
        n = r.randint(1, 8)
        offs = sorted(r.randrange(lo, hi) for _ in range(n))
        for o in offs:
            buf[o] = r.randrange(256)
        return '%d random byte%s at %s' % (n, 's' if n > 1 else '',
                                          ','.join('+%#x' % o for o in offs))
    if op == 'bits':
        n = r.randint(1, 4)
        bits = sorted(r.randrange(lo * 8, hi * 8) for _ in range(n))
        for b in bits:
            buf[b // 8] ^= 1 << (b % 8)
        return 'flipped bit%s %s' % ('s' if n > 1 else '',
                                     ','.join('+%#x.%d' % (b // 8, b % 8) for b in bits))
    if op == 'zero':
        buf[lo:hi] = bytes(hi - lo)
        return 'zeroed' + (' bytes %#x-%#x' % (lo, hi - 1) if (lo, hi) != (0, geo.bs) else '')
    if op == 'copy':
        same = [e for e in by_kind[ent[1]] if e[0] != ent[0]]
        pool = same if same and r.random() < 0.6 else [e for e in entries if e[0] != ent[0]]
        if not pool:
            return 'nothing to copy'
        src = r.choice(pool)
        buf[lo:hi] = img.read(src[0])[lo:hi]
        return 'overwritten with block %d (%s %s)' % (src[0], src[1],
                                                      ','.join(map(str, src[2])) or '-')
    width = 4 if op == 'wordblk' or r.random() < 0.75 else 2
    o = word_offset(r, buf, lo, hi, width, ent, geo)
    if op == 'word0' and not any(buf[o:o + width]):
        # Clearing a clear word does nothing: clear one that is set.
        nz = [x for x in range(lo, hi, width) if any(buf[x:x + width])]
        o = r.choice(nz) if nz else o
    fmt = '<I' if width == 4 else '<H'
    old = struct.unpack_from(fmt, buf, o)[0]
    note = ''
    if op == 'word0':
        new = 0
    elif op == 'wordff':
        new = 0xFFFFFFFF if width == 4 else 0xFFFF
    elif op == 'wordsmall':
        new = r.choice([x for x in range(17) if x != old] or [1])
    else:
        top = min(geo.blocks_count, 1 << 32)
        if r.random() < 0.5:
            t = r.choice(entries)
            new = t[0]
            note = ' (%s %s)' % (t[1], ','.join(map(str, t[2])) or '-')
        else:
            new = r.randrange(geo.first_data_block, top)
    struct.pack_into(fmt, buf, o, new)
    what = ''
    if ent[1] == 'itable' and ent[2]:
        what = ' (inode %d +%#x)' % (slot_inode(geo, ent[2], o), o % geo.inode_size)
    return '%d-bit word at +%#x%s: %#x -> %#x%s' % (width * 8, o, what, old, new, note)


def recsum(img, touched, entries):
    geo = img.geo
    fixed = []
    for (block, kind, owners), changed in touched:
        if not changed:
            continue
        buf = img.read(block)
        if kind == 'itable':
            for s in sorted({o // geo.inode_size for o in changed}):
                ino = slot_inode(geo, owners, s * geo.inode_size)
                if ino not in owners:
                    continue
                raw = buf[s * geo.inode_size:(s + 1) * geo.inode_size]
                set_inode_csum(img, ino, raw)
                buf[s * geo.inode_size:(s + 1) * geo.inode_size] = raw
                fixed.append('inode %d' % ino)
        elif kind == 'gdt':
            for off, c in gdt_csums(img, block, gdt_base(geo, block, entries), buf):
                struct.pack_into('<H', buf, off, c)
            fixed.append('descriptors in block %d' % block)
        else:
            res = block_csum(img, block, kind, owners, buf)
            if not res:
                continue
            off, _, c = res
            struct.pack_into('<I', buf, off, c)
            fixed.append('%s block %d' % (kind, block))
        img.write(block, buf)
    return fixed


def main(argv):
    args, opts = [], {'--max-blocks': '0', '--tag': None}
    heavy = False
    it = iter(argv[1:])
    for a in it:
        if a == '--heavy':
            heavy = True
        elif a in opts:
            opts[a] = next(it, None)
            if opts[a] is None:
                args = []
                break
        else:
            args.append(a)
    cmd = args[0] if args else ''
    if cmd == 'meta' and len(args) == 2:
        meta(args[1])
        return 0
    if cmd == 'selftest' and len(args) == 3:
        return selftest(args[1], args[2])
    if cmd in ('damage', 'patch') and len(args) >= 5:
        img, meta_path = args[1], args[2]
        tag = opts['--tag'] or img.rsplit('/', 1)[-1]
        geo = Geometry(img)
        entries = read_meta(meta_path)
        if cmd == 'damage' and len(args) == 5:
            lines, changed = damage(geo, img, entries, int(args[3]), int(opts['--max-blocks']), tag, heavy)
            write_damaged(img, geo, changed, args[4])
            print('\n'.join(lines))
            return 0
        if cmd == 'patch':
            outdir = args[3]
            for seed in args[4:]:
                lines, changed = damage(geo, img, entries, int(seed), int(opts['--max-blocks']), tag, heavy)
                write_patch(geo, changed, '%s/%s' % (outdir, seed))
                with open('%s/%s.txt' % (outdir, seed), 'w') as f:
                    f.write('\n'.join(lines) + '\n')
            return 0
    sys.stderr.write(__doc__.split('\n\n')[1] + '\n')
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
