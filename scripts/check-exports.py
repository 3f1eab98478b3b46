#!/usr/bin/env python3
"""Check libext4fs's exports: lib/ext4fs/libext4fs.sym against the public headers.

Usage: check-exports.py SRCDIR [BUILDDIR]

The shared library exports exactly the names in libext4fs.sym (libtool
-export-symbols).  The check fails (exit 1, one line per fault) when:
  - a function the installed headers declare is not in the list, or the
    list names one that no installed header declares (or names it twice,
    or out of order);
  - with BUILDDIR (the library built there): the static library defines a
    global name that does not start with ext4fs_ (internal functions shared
    between library files are named ext4fs__, declared in *_internal.h),
    the shared library exports a name not in the list, or a listed name
    is not defined.
"""
import os
import re
import subprocess
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
DECL = re.compile(r"\b(ext4fs_[A-Za-z0-9_]+)\s*\(")
HEADERS_VAR = re.compile(r"^ext4fsinclude_HEADERS\s*\+?=((?:[^\n]*\\\n)*[^\n]*)", re.M)


def installed_headers(libdir):
    """The headers the Makefile.am files install (ext4fsinclude_HEADERS)."""
    names = []
    for f in sorted(os.listdir(libdir)):
        if f == "Makefile.am" or f.endswith(".am"):
            with open(os.path.join(libdir, f), encoding="utf-8") as fh:
                for m in HEADERS_VAR.finditer(fh.read()):
                    names += m.group(1).replace("\\\n", " ").split()
    return names


def declared(libdir):
    out = {}
    for h in installed_headers(libdir):
        with open(os.path.join(libdir, h), encoding="utf-8") as fh:
            text = COMMENT.sub(" ", fh.read())
        for name in DECL.findall(text):
            if name.startswith("ext4fs__"):
                continue
            out.setdefault(name, h)
    return out


def nm(args):
    r = subprocess.run(["nm"] + args, check=True, capture_output=True, text=True)
    return [l.split() for l in r.stdout.splitlines() if l.strip() and not l.endswith(":")]


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    libdir = os.path.join(argv[1], "lib", "ext4fs")
    symfile = os.path.join(libdir, "libext4fs.sym")
    faults = []
    with open(symfile, encoding="utf-8") as fh:
        listed = [l.strip() for l in fh if l.strip() and not l.startswith("#")]
    decl = declared(libdir)
    if len(set(listed)) != len(listed):
        faults.append("libext4fs.sym names a function twice")
    if listed != sorted(listed):
        faults.append("libext4fs.sym is not sorted (LC_ALL=C sort)")
    for name in sorted(set(decl) - set(listed)):
        faults.append("%s (declared in %s) is not in libext4fs.sym" % (name, decl[name]))
    for name in sorted(set(listed) - set(decl)):
        faults.append("libext4fs.sym names %s, which no installed header declares" % name)
    if len(argv) == 3:
        libs = os.path.join(argv[2], "lib", "ext4fs", ".libs")
        static = os.path.join(libs, "libext4fs.a")
        shared = os.path.join(libs, "libext4fs.so")
        if os.path.exists(static):
            defined = set()
            for f in nm(["-g", "--defined-only", static]):
                defined.add(f[-1])
                # AddressSanitizer marks each global with a "__odr_asan." twin of its own name.
                if f[-1].startswith("__odr_asan.ext4fs_"):
                    continue
                if not f[-1].startswith("ext4fs_"):
                    faults.append("libext4fs.a defines %s, a global name without the ext4fs_ prefix"
                                  % f[-1])
            for name in listed:
                if name not in defined:
                    faults.append("libext4fs.sym names %s, which the library does not define" % name)
        if os.path.exists(shared):
            for f in nm(["-D", "--defined-only", shared]):
                if f[-1] not in listed and f[1] in "TDBR":
                    faults.append("libext4fs.so exports %s, which libext4fs.sym does not name"
                                  % f[-1])
    for f in faults:
        print("check-exports: " + f)
    if not faults:
        print("check-exports: %d public functions, listed and exported, nothing else global"
              % len(listed))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
