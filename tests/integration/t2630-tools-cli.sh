#!/bin/bash
# t2630-tools-cli.sh - what the three tools share on the command line
# (lib/support, issue 14):
#   - one version banner: "<tool> <version> (<DD-Mon-YYYY>)", the same
#     version and date for mke4fs, e4fsck and debug4fs, with -V and at start;
#   - mke4fs --help lists -d;
#   - repeated -E (and -R) options: mke4fs keeps only the last, as mke2fs
#     1.47 does (same exit status, same RAID fields as mke2fs's image);
#   - debug4fs's exit status for -R / -f requests that name no command is
#     debugfs's (1 for -R; the number of such lines for -f; 1 for a command
#     file that cannot be opened).
#
# Environment: MKE4FS, E4FSCK, DEBUG4FS, REAL_DEBUGFS (tests/lib/common.sh).

set -u

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs dumpe2fs truncate
for t in "$MKE4FS" "$E4FSCK" "$DEBUG4FS"; do
	[ -x "$t" ] || skip "$t is not built"
done
make_tmpdir

failed=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

# ------------------------------------------------------------------ banners
banner_re='^[a-z0-9]+ [0-9][0-9.]* \([0-9]{1,2}-[A-Z][a-z]{2}-[0-9]{4}\)$'
want=""
for t in "$MKE4FS" "$E4FSCK" "$DEBUG4FS"; do
	name=$(basename -- "$t")
	line=$("$t" -V 2>&1 | head -n 1)
	if ! grep -Eq "$banner_re" <<<"$line" || [ "${line%% *}" != "$name" ]; then
		bad "banner: $name -V prints '$line'"
		continue
	fi
	rest=${line#* }
	[ -z "$want" ] && want=$rest
	[ "$rest" = "$want" ] && pass "banner: $line" || bad "banner: '$line' differs from '$want'"
done
img="$T/fs.img"
rm -f "$img"
start=$("$MKE4FS" -F -t ext4 "$img" 16M 2>&1 >/dev/null | head -n 1)
[ "$start" = "mke4fs $want" ] && pass "banner: mke4fs at start" || bad "banner: mke4fs starts with '$start'"
start=$("$E4FSCK" -fn "$img" 2>&1 >/dev/null | head -n 1)
[ "$start" = "e4fsck $want" ] && pass "banner: e4fsck at start" || bad "banner: e4fsck starts with '$start'"
start=$("$DEBUG4FS" -R stats "$img" 2>&1 >/dev/null | head -n 1)
[ "$start" = "debug4fs $want" ] && pass "banner: debug4fs at start" || bad "banner: debug4fs starts with '$start'"

# ------------------------------------------------------------------ mke4fs --help
if "$MKE4FS" --help 2>&1 | grep -q -- '-d root-directory'; then
	pass "mke4fs --help lists -d"
else
	bad "mke4fs --help does not list -d"
fi

# ------------------------------------------------------------------ repeated -E
raid() { dumpe2fs -h "$1" 2>/dev/null | grep '^RAID' | tr -s ' ' | tr '\n' ';'; }
for opts in "-E stride=4 -E stripe_width=8" "-E stride=4 -E nosuchoption" \
	"-E nosuchoption -E stride=4" "-R stride=4 -E stripe_width=16,stride=2"; do
	rm -f "$T/ours.img" "$T/ref.img"
	truncate -s 32M "$T/ours.img" "$T/ref.img"
	# shellcheck disable=SC2086
	"$MKE4FS" -q -F -t ext4 $opts "$T/ours.img" >"$T/ours.log" 2>&1
	rc_ours=$?
	# shellcheck disable=SC2086
	mke2fs -q -F -t ext4 $opts "$T/ref.img" >"$T/ref.log" 2>&1
	rc_ref=$?
	if [ "$rc_ours" != "$rc_ref" ]; then
		bad "$opts: mke4fs exits $rc_ours, mke2fs $rc_ref"
	elif [ "$rc_ours" = 0 ] && [ "$(raid "$T/ours.img")" != "$(raid "$T/ref.img")" ]; then
		bad "$opts: mke4fs gives '$(raid "$T/ours.img")', mke2fs '$(raid "$T/ref.img")'"
	else
		pass "$opts: as mke2fs (exit $rc_ours; $(raid "$T/ours.img"))"
	fi
done

# ------------------------------------------------------------------ debug4fs exit status
rm -f "$img"
mke2fs -q -F -t ext4 "$img" 8M >/dev/null 2>&1
printf 'nosuchcmd\nls /\n' >"$T/one"
printf 'nosuchcmd\nnosuchcmd2\nstats -h\nnosuchcmd3\n' >"$T/three"
# name|expected status|debug4fs arguments (debugfs gets the same)
cases=(
	"-R unknown|1|-R nosuchcmd"
	"-R known|0|-R stats"
	"-f one unknown|1|-f $T/one"
	"-f three unknown|3|-f $T/three"
	"-f missing file|1|-f $T/nosuchfile"
)
for c in "${cases[@]}"; do
	IFS='|' read -r name want args <<<"$c"
	# shellcheck disable=SC2086
	"$DEBUG4FS" $args "$img" >/dev/null 2>&1 </dev/null
	rc=$?
	ref=""
	if [ -n "${REAL_DEBUGFS:-}" ]; then
		# shellcheck disable=SC2086
		"$REAL_DEBUGFS" $args "$img" >/dev/null 2>&1 </dev/null
		ref=$?
	fi
	if [ "$rc" != "$want" ]; then
		bad "debug4fs $name: exit $rc, want $want"
	elif [ -n "$ref" ] && [ "$ref" != "$want" ]; then
		bad "debug4fs $name: debugfs exits $ref here, the test wants $want"
	else
		pass "debug4fs $name: exit $rc${ref:+ (debugfs: $ref)}"
	fi
done

exit $failed
