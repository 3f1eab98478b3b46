#!/bin/bash
# t3990-e4fsck-problem-table.sh - e4fsck's problem table against the
# installed e2fsck's (tests/tools/problem-table.py reads e2fsck's rows from
# its binary):
#   - a row of ours with an e2fsck number has e2fsck's wording, prompt and
#     preen answer;
#   - every e2fsck problem has a row, or fsck/DESIGN.md rules it out or
#     lists it as not covered yet, and that list holds nothing covered.
# The counts are printed, so the log shows how far issue 17 has come.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd python3 readelf e2fsck
rc=0
python3 "$top_srcdir/tests/tools/problem-table.py" check "$top_srcdir" || rc=$?
case $rc in
0) echo "PASS problem table" ;;
77) skip "e2fsck's problem table cannot be read from its binary" ;;
*) fail "e4fsck's problem table disagrees with e2fsck's or with fsck/DESIGN.md (see above)" ;;
esac
