#!/bin/bash
# t0005-layers: libext4fs's files keep to their layers (README.md, "Library
# layers"): scripts/check-layers.py fails when a library file includes a
# header of a higher layer, when files of one layer include or call each
# other in a circle, or, over the objects built in $top_builddir, when a
# file calls a function of a higher layer.  Also fails for a library file
# missing from its table.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd python3 nm
python3 "$top_srcdir/scripts/check-layers.py" "$top_srcdir" "$top_builddir" ||
	fail "a library file uses a higher layer (see above)"
