#!/usr/bin/env python3
"""Check that libext4fs's files keep to their layers (README.md, "Library layers").

Usage: check-layers.py SRCDIR [BUILDDIR]

Every file of lib/ext4fs/ has a layer in LAYERS below.  A file may use its
own layer and those under it, never one above.  The check fails (exit 1,
one line per fault) when:
  - a file of lib/ext4fs/ is not in the table (or the table names a file
    that is gone), or README.md's table of layers lists other files;
  - a file includes a header of a higher layer;
  - files of one layer include each other in a circle;
  - with BUILDDIR (the library built there): an object calls or uses a
    name defined by an object of a higher layer, or objects of one layer
    do so in a circle.  A public header may declare functions of several
    layers (fs.h declares the write layer's ext4fs_flush()), so this is the
    check that sees every call.
"""
import os
import re
import subprocess
import sys

# The layers, lowest first; README.md's list says the same.
LAYERS = [
    ("base", "errors, a set of block ranges, growing arrays: no file system yet",
     "errors.c errors.h extset.c extset.h array.c array.h"),
    ("io", "I/O channels; is a device mounted",
     "io.c io.h io_internal.h mountcheck.c mountcheck.h io_stage.c io_stage_internal.h io_fault.c io_fault.h io_overlay.c io_overlay.h"),
    ("ondisk", "on-disk formats that need no handle: superblock fields, checksums, hashes, casefolding, features",
     "ondisk_le.h super.c super.h crc.h crc32c.c crc16.c dxhash.c dxhash.h utf8fold.c utf8fold.h utf8data.c utf8data.h fsfeatures.c fsfeatures.h ondisk_names.c ondisk_names.h codec.c codec.h"),
    ("fs", "the handle: validation, geometry, descriptors, block cache, listeners; undo files",
     "fs.c fs.h fs_internal.h undo.c undo.h"),
    ("objects", "reading inodes, extent trees, block maps, xattrs, file data, directories and "
     "htree, bitmaps, the jbd2 journal and its recovery",
     "inode.c inode.h extent.c extent_node.c extent.h blockmap.c blockmap.h blockmap_internal.h "
     "xattr.c xattr.h xattr_internal.h file.c file.h dir.c dir.h htree.c htree.h "
     "bitmap.c bitmap.h bitmap_internal.h journal.c journal.h journal_internal.h journal_recover.c "
     "journal_write.c"),
    ("write", "a writable handle: opening, live bitmaps, accounting, block writes, flush",
     "fs_write.c fs_open.c fs_write_internal.h mmp.c mmp.h mmp_internal.h"),
    ("alloc", "the block allocator (buddies, preallocation) and the inode allocator",
     "alloc.c buddy.c buddy_internal.h ialloc.c alloc.h"),
    ("edit", "the objects' writing side: inodes, extent trees and block maps, file data, "
     "directory blocks, directories and htree, xattrs, a new journal, the orphan file",
     "inode_write.c extent_write.c extent_write_internal.h blockmap_write.c blockmap_write_internal.h file_write.c "
     "dir_block.c dir_internal.h dir_write.c htree_write.c htree_write_internal.h dir_rebuild.c "
     "xattr_write.c journal_create.c orphan_file.c orphan_file.h quota.c quota.h resize_inode.c resize_inode.h"),
    ("namespace", "names: lookup in a directory, paths, mknod/mkdir/symlink/link/unlink/rmdir/rename",
     "namei.c namei.h fsops.c fsops.h"),
    ("services", "the inode-table scanner; fragmentation measures; moving a file's blocks; "
     "laying out sets of files (the defragmenter's planner); mkfs planning and writing; "
     "journalled mode (transactions)",
     "scan.c scan.h frag.c frag.h relocate.c relocate.h defrag.c defrag_sweep.c defrag_index.c defrag_internal.h defrag.h mkfs_plan.c mkfs_write.c mkfs.h mkfs_internal.h txn.c txn.h"),
]

# Files in lib/ext4fs/ that are no library source.
NOT_SOURCE = {"Makefile.am", "Makefile.in", "ext4fs.pc.in", "libext4fs.sym"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"(?:ext4fs/)?([^"/]+)"', re.M)


def table():
    layer = {}
    for rank, (name, _, files) in enumerate(LAYERS):
        for f in files.split():
            if f in layer:
                raise SystemExit("check-layers: %s is in the table twice" % f)
            layer[f] = (rank, name)
    return layer


def circles(edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def check_includes(libdir, layer, faults):
    present = {f for f in os.listdir(libdir)
               if os.path.isfile(os.path.join(libdir, f)) and f not in NOT_SOURCE
               and not f.endswith(".am")}
    for f in sorted(present - set(layer)):
        faults.append("%s: not in the layer table of scripts/check-layers.py" % f)
    for f in sorted(set(layer) - present):
        faults.append("%s: in the layer table of scripts/check-layers.py, but there is no such file" % f)
    same = {}
    for f in sorted(present & set(layer)):
        rank, name = layer[f]
        with open(os.path.join(libdir, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for h in INCLUDE.findall(text):
            if h == "config.h" or h == f or h not in layer:
                continue
            hrank, hname = layer[h]
            if hrank > rank:
                faults.append("%s (layer %s) includes %s (layer %s, higher)" % (f, name, h, hname))
            elif hrank == rank:
                same.setdefault(module(f), set()).add(module(h))
    for comp in circles(same):
        faults.append("files of layer %s include each other in a circle: %s"
                      % (layer_of_module(comp[0], layer), " -> ".join(comp)))


def module(f):
    """A .c file and the headers named after it (x.h, x_internal.h) are one module."""
    stem = os.path.splitext(f)[0]
    return stem[:-len("_internal")] if stem.endswith("_internal") else stem


def layer_of_module(m, layer):
    for ext in (".c", ".h"):
        if m + ext in layer:
            return layer[m + ext][1]
    return "?"


def objects(builddir):
    """name.o -> (defined, undefined) global symbols, from the built library."""
    d = os.path.join(builddir, "lib", "ext4fs")
    for sub in (".libs", ""):
        objs = sorted(o for o in os.listdir(os.path.join(d, sub)) if o.endswith(".o")) \
            if os.path.isdir(os.path.join(d, sub)) else []
        if objs:
            break
    else:
        return None
    syms = {}
    for o in objs:
        path = os.path.join(d, sub, o)
        defined = subprocess.run(["nm", "-g", "--defined-only", path], check=True,
                                 capture_output=True, text=True).stdout
        undef = subprocess.run(["nm", "-u", path], check=True,
                               capture_output=True, text=True).stdout
        syms[o[:-2]] = ({l.split()[-1] for l in defined.splitlines() if l.strip()},
                        {l.split()[-1] for l in undef.splitlines() if l.strip()})
    return syms


def check_links(builddir, layer, faults):
    syms = objects(builddir)
    if syms is None:
        print("check-layers: no objects under %s/lib/ext4fs: calls not checked" % builddir)
        return
    owner = {}
    for m, (defined, _) in syms.items():
        for s in defined:
            owner[s] = m
    same = {}
    for m, (_, undef) in sorted(syms.items()):
        if m + ".c" not in layer:
            faults.append("%s.o: %s.c is not in the layer table" % (m, m))
            continue
        rank, name = layer[m + ".c"]
        for s in sorted(undef):
            o = owner.get(s)
            if o is None or o == m or o + ".c" not in layer:
                continue
            orank, oname = layer[o + ".c"]
            if orank > rank:
                faults.append("%s.c (layer %s) uses %s of %s.c (layer %s, higher)"
                              % (m, name, s, o, oname))
            elif orank == rank:
                same.setdefault(m, set()).add(o)
    for comp in circles(same):
        faults.append("files of layer %s call each other in a circle: %s"
                      % (layer[comp[0] + ".c"][1], ", ".join(c + ".c" for c in comp)))


# Header-only files that README.md's table names beside the .c files (listed by stem).
README_ALSO = {"ondisk_le.h"}


def check_readme(srcdir, faults):
    """README.md's table: | layer | x for each x.c, and README_ALSO | what |."""
    path = os.path.join(srcdir, "README.md")
    rows = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 3 and cells[0] in {n for n, _, _ in LAYERS}:
                rows[cells[0]] = {m.strip() for m in cells[1].split(",")}
    for name, _, files in LAYERS:
        want = {f[:-2] for f in files.split() if f.endswith(".c")}
        want |= README_ALSO & set(files.split())
        have = rows.get(name)
        if have is None:
            faults.append("README.md: no row for layer %s in the table of layers" % name)
        elif have != want:
            faults.append("README.md: layer %s lists %s; the table here has %s"
                          % (name, ", ".join(sorted(have)), ", ".join(sorted(want))))


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    layer = table()
    faults = []
    check_includes(os.path.join(argv[1], "lib", "ext4fs"), layer, faults)
    check_readme(argv[1], faults)
    if len(argv) == 3:
        check_links(argv[2], layer, faults)
    for f in faults:
        print("check-layers: " + f)
    if not faults:
        print("check-layers: %d files in %d layers, no include or call goes up"
              % (len(layer), len(LAYERS)))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
