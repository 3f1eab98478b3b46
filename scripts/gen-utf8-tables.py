#!/usr/bin/env python3
"""Generate lib/ext4fs/utf8data.c: the tables of ext4's "utf8-12.1" casefolding.

Usage: gen-utf8-tables.py [UCD_DIR] > lib/ext4fs/utf8data.c

UCD_DIR (default /usr/share/unicode, Debian's unicode-data package) holds the
Unicode Character Database files UnicodeData.txt, CaseFolding.txt,
DerivedAge.txt and DerivedCoreProperties.txt.  Any UCD version from 12.1 on
will do: only code points whose age is 12.1 or less are taken, and the
Unicode stability policies keep their decompositions, combining classes and
case foldings unchanged in later versions.

What ext4 (and e2fsprogs) compare and hash in a casefolded directory is, per
code point of a valid UTF-8 name:
  - nothing for a Default_Ignorable_Code_Point (assigned or not; those that
    became ignorable after 12.1 only with a new assignment are excluded by
    their age);
  - else its full case folding (CaseFolding.txt statuses C and F) if it has
    one, else its canonical decomposition, applied again to every resulting
    code point until nothing changes (Hangul syllables are decomposed by
    arithmetic in the C code, not tabled);
  - else the code point itself;
followed by the canonical ordering of combining marks (a stable sort of each
run of code points with a nonzero canonical combining class by that class).
Code points newer than 12.1 are kept as they are, with class 0.

The output has three tables, all sorted by code point for binary search:
ranges of equal nonzero combining class, ranges of ignorable code points,
and the mapping of every other code point whose folded form differs from
itself, as UTF-8 bytes in one pool.
"""
import os
import sys

MAX_AGE = (12, 1)


def ranges_file(path):
    """Yield (first, last, fields...) of a UCD file of `X..Y ; a ; b # ...' lines."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = [x.strip() for x in line.split(";")]
            cps = fields[0].split("..")
            first = int(cps[0], 16)
            last = int(cps[-1], 16)
            yield (first, last, fields[1:])


def main():
    ucd = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode"

    age = {}
    for first, last, (ver,) in ranges_file(os.path.join(ucd, "DerivedAge.txt")):
        v = tuple(int(x) for x in ver.split("."))
        for cp in range(first, last + 1):
            age[cp] = v

    def old(cp):
        return cp in age and age[cp] <= MAX_AGE

    ccc = {}
    decomp = {}
    with open(os.path.join(ucd, "UnicodeData.txt"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split(";") for line in f if line.strip()]
    for i, row in enumerate(rows):
        cp = int(row[0], 16)
        # Ranges (<CJK Ideograph, First> ... Last>) have class 0 and no decomposition.
        if not old(cp):
            continue
        if int(row[3]):
            ccc[cp] = int(row[3])
        if row[5] and not row[5].startswith("<"):
            decomp[cp] = [int(x, 16) for x in row[5].split()]

    fold = {}
    for first, _, fields in ranges_file(os.path.join(ucd, "CaseFolding.txt")):
        status, mapping = fields[0], fields[1]
        if status in ("C", "F") and old(first):
            fold[first] = [int(x, 16) for x in mapping.split()]

    ignorable = set()
    for first, last, fields in ranges_file(os.path.join(ucd, "DerivedCoreProperties.txt")):
        if fields[0] != "Default_Ignorable_Code_Point":
            continue
        for cp in range(first, last + 1):
            if cp not in age or old(cp):
                ignorable.add(cp)

    def one_step(cp):
        if cp in ignorable:
            return []
        if cp in fold:
            return fold[cp]
        if cp in decomp:
            return decomp[cp]
        return [cp]

    memo = {}

    def folded(cp):
        if cp not in memo:
            step = one_step(cp)
            if step == [cp]:
                memo[cp] = step
            else:
                memo[cp] = [y for x in step for y in folded(x)]
        return memo[cp]

    mapped = sorted((set(decomp) | set(fold)) - ignorable)
    entries = []
    pool = bytearray()
    for cp in mapped:
        out = folded(cp)
        if out == [cp]:
            continue
        data = "".join(chr(x) for x in out).encode("utf-8")
        if len(data) > 255 or len(pool) > 0xffff:
            raise SystemExit("gen-utf8-tables: mapping too long")
        entries.append((cp, len(pool), len(data)))
        pool += data

    classes = []
    for cp in sorted(ccc):
        if classes and classes[-1][1] == cp - 1 and classes[-1][2] == ccc[cp]:
            classes[-1][1] = cp
        else:
            classes.append([cp, cp, ccc[cp]])

    gaps = []
    for cp in sorted(ignorable):
        if gaps and gaps[-1][1] == cp - 1:
            gaps[-1][1] = cp
        else:
            gaps.append([cp, cp])

    w = sys.stdout.write
    w("/*\n * utf8data.c - tables of ext4's utf8-12.1 casefolding (see utf8fold.h).\n *\n")
    w(" * GENERATED by scripts/gen-utf8-tables.py from the Unicode Character\n")
    w(" * Database (%s), code points of age <= %d.%d.  Do not edit.\n */\n" %
      (ucd_version(ucd), MAX_AGE[0], MAX_AGE[1]))
    w('#include "utf8data.h"\n\n')
    w("const struct ext4fs_utf8_class_range ext4fs_utf8_classes[] = {\n")
    for first, last, c in classes:
        w("\t{0x%05x, 0x%05x, %d},\n" % (first, last, c))
    w("};\n")
    w("const unsigned ext4fs_utf8_nclasses = %d;\n\n" % len(classes))
    w("const struct ext4fs_utf8_range ext4fs_utf8_ignorables[] = {\n")
    for first, last in gaps:
        w("\t{0x%05x, 0x%05x},\n" % (first, last))
    w("};\n")
    w("const unsigned ext4fs_utf8_nignorables = %d;\n\n" % len(gaps))
    w("const struct ext4fs_utf8_mapping ext4fs_utf8_mappings[] = {\n")
    for cp, off, n in entries:
        w("\t{0x%05x, %d, %d},\n" % (cp, off, n))
    w("};\n")
    w("const unsigned ext4fs_utf8_nmappings = %d;\n\n" % len(entries))
    w("const unsigned char ext4fs_utf8_pool[%d] = {\n" % max(len(pool), 1))
    for i in range(0, len(pool), 16):
        w("\t" + " ".join("0x%02x," % b for b in pool[i:i + 16]) + "\n")
    w("};\n")


def ucd_version(ucd):
    with open(os.path.join(ucd, "DerivedAge.txt"), encoding="utf-8") as f:
        first = f.readline().strip()
    return first.lstrip("# ").replace("DerivedAge-", "UCD ").replace(".txt", "")


if __name__ == "__main__":
    main()
