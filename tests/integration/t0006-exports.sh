#!/bin/bash
# t0006-exports: lib/ext4fs/libext4fs.sym lists exactly the functions the
# installed headers declare, libext4fs.so exports exactly those, and the
# static library defines no global name without the ext4fs_ prefix
# (functions shared inside the library are ext4fs__ names):
# scripts/check-exports.py.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd python3 nm
python3 "$top_srcdir/scripts/check-exports.py" "$top_srcdir" "$top_builddir" ||
	fail "the export list, the headers and the library disagree (see above)"
