#!/usr/bin/env python3
"""problem-table.py - e4fsck's problem table against e2fsck's.

e2fsck's table is read from the installed e2fsck binary itself (its
problem rows: code, message template, prompt, flags), so the comparison
needs no copy of e2fsprogs' sources and follows whatever version is
installed.  e4fsck's table is read from fsck/problems*.[ch].
fsck/DESIGN.md names, by code, the problems ruled out here (section
"e2fsck's problems that cannot arise here") and those not covered yet
(section "e2fsck's problems not covered yet").

  problem-table.py check SRCDIR [E2FSCK]
      exit 1 when a row of ours with an e2fsck number disagrees with
      e2fsck's row (no such code, other wording, prompt or preen
      answer), when an e2fsck code is neither covered, ruled out nor
      listed as not covered yet, or when a code is listed twice or
      listed as missing although a row covers it fully.  Prints the
      counts.  Exit 77 when e2fsck's table cannot be found.
  problem-table.py missing SRCDIR [E2FSCK]
      print the e2fsck codes with no row of ours, with e2fsck's message.
  problem-table.py gaps SRCDIR OUTPUT [E2FSCK]
      the problems e2fsck printed in OUTPUT (a saved run), one a line:
      code, "covered", "ruled-out", "not-covered-yet" or "unlisted", the
      message; exit 0 when one of them is listed as not covered yet (a
      known gap explains what e4fsck missed), 1 otherwise.  Only messages
      with enough fixed words to be told apart are looked for.
"""
import os
import re
import shutil
import struct
import subprocess
import sys

# e2fsck's message abbreviations (its problem.c): "@x" -> words.
ABBREV = {
    'a': 'extended attribute', 'A': 'error allocating', 'b': 'block',
    'B': 'bitmap', 'c': 'compress', 'C': 'conflicts with some other fs @b',
    'd': 'directory', 'D': 'deleted', 'e': 'entry', 'E': "@e '%Dn' in %p (%i)",
    'f': 'filesystem', 'F': 'for @i %i (%Q) is', 'g': 'group',
    'h': 'HTREE @d @i', 'i': 'inode', 'I': 'illegal', 'j': 'journal',
    'l': 'lost+found', 'L': 'is a link', 'm': 'multiply-claimed',
    'n': 'invalid', 'o': 'orphaned', 'p': 'problem in', 'q': 'quota',
    'r': 'root @i', 's': 'should be', 'S': 'superblock', 'u': 'unattached',
    'v': 'device', 'x': 'extent', 'z': 'zero-length',
}

# e2fsck's prompt numbers, by the word e4fsck's enum uses.
PROMPTS = ['NONE', 'FIX', 'CLEAR', 'RELOCATE', 'ALLOCATE', 'EXPAND', 'CONNECT',
           'CREATE', 'SALVAGE', 'TRUNCATE', 'CLEAR_INODE', 'ABORT', 'SPLIT',
           'CONTINUE', 'CLONE', 'DELETE', 'SUPPRESS', 'UNLINK', 'CLEAR_HTREE',
           'RECREATE', 'OPTIMIZE', 'CLEAR_FLAG', 'NULL']

E2_PREEN_OK = 0x000001
E2_PREEN_NO = 0x020000
E2_LATCH_MASK = 0x000ff0

# Rows whose output equals e2fsck's although the template differs.
SAME_OUTPUT = {
    0x000020: 'the inode\'s uid, gid, mode and size are formatted by orphans.c into %n',
}

# Rows whose preen answer differs from e2fsck's row where e2fsck's preen run
# never asks the question: e4fsck's run prints and does what e2fsck's does.
SAME_PREEN = {
    0x000019: 'after "Run journal anyway" declined, e2fsck -p goes on silently (t3935); so does e4fsck',
}


def e2_preen(flags):
    """What e2fsck's preen mode answers: fix, no (and go on), or stop."""
    if flags & E2_PREEN_NO:
        return 'no'
    return 'fix' if flags & E2_PREEN_OK else 'stop'


def our_preen(flags):
    names = set(re.findall(r'\w+', flags))
    if 'PF_PREEN_NO' in names:
        return 'no'
    return 'fix' if names & {'PF_PREEN_OK', 'PF_PREEN_NOMSG'} else 'stop'


def expand(msg, first=True):
    """e2fsck's template with its abbreviations written out; like e2fsck,
    only the message's first word is capitalised."""
    out, i = [], 0
    while i < len(msg):
        if msg[i] == '@' and i + 1 < len(msg) and msg[i + 1] in ABBREV:
            words = expand(ABBREV[msg[i + 1]], first)
            if first:
                words = words[:1].upper() + words[1:]
            out.append(words)
            i += 2
        else:
            out.append(msg[i])
            i += 1
        first = False
    return ''.join(out)


def normalise(msg):
    """A template with every placeholder reduced to '%', for comparing.
    e2fsck's %B ("block #N", "indirect block", ...) is written out as
    "block #%b" by e4fsck, and e4fsck names itself where e2fsck does."""
    msg = msg.replace('%%', '\0').replace('e4fsck', 'e2fsck')
    msg = re.sub(r'%[DIT][a-zA-Z]|%[0-9]*[a-zA-Z]', '%', msg)
    msg = re.sub(r'[Bb]lock #%', '%', msg)
    return msg.replace('\0', '%%')


def _elf(binary):
    """Sections (name -> (addr, offset, size)) and RELATIVE relocations."""
    secs, rel = {}, {}
    out = subprocess.run(['readelf', '-SW', binary], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)', line)
        if m:
            secs[m.group(1)] = tuple(int(m.group(k), 16) for k in (2, 3, 4))
    out = subprocess.run(['readelf', '-rW', binary], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 4 and 'RELATIVE' in p[2]:
            rel[int(p[0], 16)] = int(p[3], 16)
    return secs, rel


def e2fsck_table(binary):
    """e2fsck's rows {code: (prompt, flags, expanded message)}, or None."""
    data = open(binary, 'rb').read()
    secs, rel = _elf(binary)

    def file_off(addr):
        for name, (va, off, size) in secs.items():
            if va and va <= addr < va + size and name != '.bss':
                return off + addr - va
        return None

    def pointer(addr):
        if addr in rel:
            return rel[addr]
        off = file_off(addr)
        return struct.unpack_from('<Q', data, off)[0] if off is not None else 0

    def cstring(addr):
        off = file_off(addr)
        if off is None:
            return None
        end = data.find(b'\0', off)
        return data[off:end].decode('latin-1') if end >= 0 else None

    # The first row is code 1, whose message names the block bitmap;
    # the second (code 2) gives the row size.
    for sec in ('.data', '.data.rel.ro'):
        if sec not in secs:
            continue
        va, off, size = secs[sec]
        for addr in range(va, va + size - 64, 8):
            if struct.unpack_from('<I', data, off + addr - va)[0] != 1:
                continue
            msg = cstring(pointer(addr + 8)) or ''
            if not msg.startswith('@b @B for @g'):
                continue
            for stride in (32, 40, 48, 56, 64):
                if struct.unpack_from('<I', data, off + addr + stride - va)[0] == 2:
                    break
            else:
                continue
            rows, a = {}, addr
            while a + stride <= va + size:
                o = off + a - va
                code = struct.unpack_from('<I', data, o)[0]
                text = cstring(pointer(a + 8))
                if code == 0 or text is None:
                    break
                prompt = data[o + 16]
                flags = struct.unpack_from('<i', data, o + 20)[0]
                rows[code] = (prompt, flags, expand(text))
                a += stride
            return rows
    return None


def c_strings(text):
    """The concatenation of adjacent C string literals in text."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    s = ''.join(parts)
    return (s.replace('\\n', '\n').replace('\\t', '\t').replace('\\"', '"')
            .replace('\\\\', '\\'))


def our_table(srcdir):
    """e4fsck's rows {code: (name, prompt word, flags text, message)}."""
    fsck = os.path.join(srcdir, 'fsck')
    codes = {}
    for h in ('problems.h', 'problems_dirs.h'):
        for m in re.finditer(r'#define\s+(PR_\w+)\s+(0x[0-9A-Fa-f]+)', open(os.path.join(fsck, h)).read()):
            codes[m.group(1)] = int(m.group(2), 16)
    rows = {}
    for f in sorted(os.listdir(fsck)):
        if not re.match(r'problems_\w+\.c$', f):
            continue
        text = open(os.path.join(fsck, f)).read()
        text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
        # The file's own macros (a message prefix, a set of flags) written out.
        for mname, value in re.findall(r'^#define\s+(\w+)\s+(.*)$', text, flags=re.M):
            text = re.sub(r'^#define\s+%s\s.*$' % mname, '', text, flags=re.M)
            parts = re.split(r'("(?:[^"\\]|\\.)*")', text)   # odd parts: string literals
            text = ''.join(part if k % 2 else re.sub(r'\b%s\b' % mname, lambda _m, v=value: v, part)
                           for k, part in enumerate(parts))
        rows_before = len(rows)
        for m in re.finditer(r'\{\s*(PR_\w+)\s*,\s*"(PR_\w+)"\s*,((?:\s*"(?:[^"\\]|\\.)*")+)\s*,\s*'
                             r'PROMPT_(\w+)\s*,\s*([^}]*)\}', text):
            name = m.group(1)
            if name not in codes:
                raise SystemExit('%s: %s has no #define' % (f, name))
            rows[codes[name]] = (name, m.group(4), m.group(5).strip(), c_strings(m.group(3)))
        # Every row must have been read: a row the pattern misses would
        # count as a problem not covered.
        if len(rows) - rows_before != text.count('"PR_'):
            raise SystemExit('%s: %d rows read of %d' % (f, len(rows) - rows_before, text.count('"PR_')))
    return rows


def design_lists(srcdir):
    """The codes DESIGN.md rules out, and those it lists as not covered yet."""
    text = open(os.path.join(srcdir, 'fsck', 'DESIGN.md')).read()
    lists = {}
    for title in ("e2fsck's problems that cannot arise here", "e2fsck's problems not covered yet"):
        m = re.search(r'^## ' + re.escape(title) + r'\n(.*?)(?=^## |\Z)', text, flags=re.M | re.S)
        found = []
        if m:
            for line in m.group(1).splitlines():
                if line.startswith('|') or line.startswith('- '):
                    found += [int(c, 16) for c in re.findall(r'`(0x[0-9A-Fa-f]{6})`', line)]
        lists[title] = found
    return lists["e2fsck's problems that cannot arise here"], lists["e2fsck's problems not covered yet"]


def template_regex(msg):
    """A regex for e2fsck's printed message, or None when the template is
    too unspecific to find in an output ("%b", "\\n", " -%i"...)."""
    parts = re.split(r'%[DIT][a-zA-Z]|%[0-9]*[a-zA-Z]', msg.replace('%%', '%'))
    words = [p.strip() for p in parts]
    if sum(len(w) for w in words) < 12:
        return None
    parts[-1] = parts[-1].rstrip()
    return re.compile(r'.*?'.join(re.escape(p) for p in parts))


def gaps(srcdir, theirs, output):
    ours = our_table(srcdir)
    ruled_out, todo = design_lists(srcdir)
    text = open(output, errors='replace').read()
    found = []
    for code, (_prompt, _flags, msg) in sorted(theirs.items()):
        rx = template_regex(msg)
        if rx and rx.search(text):
            state = ('not-covered-yet' if code in todo else 'covered' if code in ours
                     else 'ruled-out' if code in ruled_out else 'unlisted')
            found.append((code, state, msg))
    for code, state, msg in found:
        print('0x%06X\t%s\t%r' % (code, state, msg[:70]))
    return 0 if any(st == 'not-covered-yet' for _c, st, _m in found) else 1


def find_e2fsck(argv, at=3):
    if len(argv) > at:
        return argv[at]
    return shutil.which('e2fsck') or next((p for p in ('/sbin/e2fsck', '/usr/sbin/e2fsck')
                                            if os.path.exists(p)), None)


def main(argv):
    if len(argv) < 3 or argv[1] not in ('check', 'missing', 'gaps') or (argv[1] == 'gaps' and len(argv) < 4):
        sys.stderr.write(__doc__)
        return 2
    srcdir = argv[2]
    binary = find_e2fsck(argv, 4 if argv[1] == 'gaps' else 3)
    if not binary or not shutil.which('readelf'):
        print('SKIP: no e2fsck or no readelf')
        return 77
    theirs = e2fsck_table(binary)
    if not theirs:
        print('SKIP: no problem table found in %s' % binary)
        return 77
    if argv[1] == 'gaps':
        return gaps(srcdir, theirs, argv[3])
    ours = our_table(srcdir)
    if argv[1] == 'missing':
        for code in sorted(theirs):
            if code not in ours:
                print('0x%06X\t%r' % (code, theirs[code][2]))
        return 0

    errors = []
    for code, (name, prompt, flags, msg) in sorted(ours.items()):
        if (code & 0xF000) == 0xE000:
            continue   # e4fsck's own
        if code not in theirs:
            errors.append('%s 0x%06X: no such e2fsck problem' % (name, code))
            continue
        e_prompt, e_flags, e_msg = theirs[code]
        if normalise(msg) != normalise(e_msg) and code not in SAME_OUTPUT:
            errors.append('%s 0x%06X: message %r, e2fsck %r' % (name, code, msg, e_msg))
        want = PROMPTS[e_prompt] if e_prompt < len(PROMPTS) else str(e_prompt)
        if prompt != want and not (prompt == 'IGNORED' and want == 'NONE'):
            errors.append('%s 0x%06X: prompt %s, e2fsck %s' % (name, code, prompt, want))
        # Preen's answer matters only where a question is asked, and a
        # latched problem's is its latch question's.
        if (want != 'NONE' and not (e_flags & E2_LATCH_MASK) and 'PF_CHECK_ONLY' not in flags
                and our_preen(flags) != e2_preen(e_flags) and code not in SAME_PREEN):
            errors.append('%s 0x%06X: preen answer %s, e2fsck %s' % (
                name, code, our_preen(flags), e2_preen(e_flags)))

    ruled_out, todo = design_lists(srcdir)
    partial = {c for c, r in ours.items() if 'PF_CHECK_ONLY' in r[2]}
    listed = ruled_out + todo
    for code in sorted({c for c in listed if listed.count(c) > 1}):
        errors.append('0x%06X is listed twice in DESIGN.md' % code)
    for code in ruled_out:
        if code in ours:
            errors.append('0x%06X is ruled out in DESIGN.md but has a row (%s)' % (code, ours[code][0]))
        if code not in theirs:
            errors.append('0x%06X is ruled out in DESIGN.md but is no e2fsck problem' % code)
    for code in todo:
        if code in ours and code not in partial:
            errors.append('0x%06X is listed as not covered yet but %s covers it' % (code, ours[code][0]))
    for code in sorted(partial):
        if code not in todo:
            errors.append('0x%06X (%s) cannot be repaired yet (PF_CHECK_ONLY) but is not listed as '
                          'not covered yet' % (code, ours[code][0]))
    for code in sorted(theirs):
        if code not in ours and code not in listed:
            errors.append('0x%06X (%r) is neither covered, ruled out nor listed as not covered yet'
                          % (code, theirs[code][2][:60]))

    covered = len([c for c in theirs if c in ours and c not in partial])
    print('e2fsck problems: %d; covered: %d; ruled out: %d; not covered yet: %d (%d of them partly)'
          % (len(theirs), covered, len([c for c in ruled_out if c in theirs]),
             len([c for c in todo if c in theirs]), len(partial)))
    for e in errors:
        print('FAIL ' + e)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
