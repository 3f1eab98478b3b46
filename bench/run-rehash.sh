#!/bin/bash
# run-rehash.sh [IMAGE]
#
# Pass 3A side by side: e4fsck and e2fsck rebuild the same directories on
# copies of the same image in one run, with -fy (every linear directory
# of three blocks or more gets an index) and with -fyD (every directory
# rebuilt), warm cache.  Prints per run the pass 3A time from each
# checker's own -tt line, the whole run's wall and CPU time and peak
# memory, and the ratios ours / e2fsck.  Never passes or fails on time: the
# exit status is 1 only when the checkers disagree on the exit status or
# the summary line, or e2fsck -fn finds e4fsck's result unclean.
#
# Default image (built once under BENCH_DIR): a tree of 40 directories of
# 5000 empty files and one of 100000, copied in by mke4fs -d without
# dir_index (so every directory is linear; mke2fs -d takes quadratic time
# over directories this large), then tune2fs -O dir_index.
#
# Environment: E4FSCK, E2FSCK, BENCH_DIR as for run-fsck.sh; MKE4FS (default
# misc/mkfs/mke4fs next to e4fsck's build).
set -eu

NAME=run-rehash
# shellcheck source=fsck-common.sh
. "$(dirname "$0")/fsck-common.sh"

img=${1:-$BENCH_DIR/dirs140k.img}
if [ ! -e "$img" ]; then
	tree=$(mktemp -d "${TMPDIR:-/var/tmp}/run-rehash-tree.XXXXXX")
	for d in $(seq 1 40); do
		mkdir "$tree/d$d"
		(cd "$tree/d$d" && seq -f "file_%g_with_a_name_of_some_length" 1 5000 | xargs touch)
	done
	mkdir "$tree/huge"
	(cd "$tree/huge" && seq -f "entry_number_%g" 1 100000 | xargs touch)
	MKE4FS=${MKE4FS:-$(dirname "$E4FSCK")/../misc/mkfs/mke4fs}
	[ -x "$MKE4FS" ] || die "mke4fs not found: set MKE4FS"
	"$MKE4FS" -q -F -t ext4 -O ^dir_index -N 400000 -d "$tree" "$img" 2G >/dev/null
	tune2fs -O dir_index "$img" >/dev/null
	rm -rf "$tree"
fi

pass3a() { sed -n 's/^Pass 3A: Memory used: .*time: *\([0-9.]*\)\/.*/\1/p' "$TMPD/$1.out"; }
summary() { grep -E '[0-9]+/[0-9]+ files' "$TMPD/$1.out" | sed 's/^[^:]*: //'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

status=0
printf '%-6s %-8s %10s %8s %8s %10s\n' opts checker "pass 3A s" "wall s" "CPU s" "peak RSS"
for opts in -fy -fyD; do
	for who in e2 e4; do
		cp --sparse=always "$img" "$TMPD/$who.img"
		cat "$TMPD/$who.img" >/dev/null
		if [ $who = e2 ]; then
			run "$who$opts" "$E2FSCK" "$opts" -tt "$TMPD/$who.img"
		else
			run "$who$opts" "$E4FSCK" "$opts" -tt "$TMPD/$who.img"
		fi
		read -r wall user sys rss <"$TMPD/$who$opts.t"
		printf '%-6s %-8s %10s %8s %8s %7s MiB\n' "$opts" "${who}fsck" "$(pass3a "$who$opts")" "$wall" \
			"$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')" "$((rss / 1024))"
	done
	if [ "$(cat "$TMPD/e2$opts.rc")" != "$(cat "$TMPD/e4$opts.rc")" ] ||
	   [ "$(summary "e2$opts")" != "$(summary "e4$opts")" ]; then
		echo "run-rehash: $opts: the checkers disagree: exit $(cat "$TMPD/e2$opts.rc") / $(cat "$TMPD/e4$opts.rc"), '$(summary "e2$opts")' / '$(summary "e4$opts")'"
		status=1
	fi
	if ! "$E2FSCK" -fn "$TMPD/e4.img" >/dev/null 2>&1; then
		echo "run-rehash: $opts: e2fsck -fn finds e4fsck's result unclean"
		status=1
	fi
	read -r w2 u2 s2 r2 <"$TMPD/e2$opts.t"
	read -r w4 u4 s4 r4 <"$TMPD/e4$opts.t"
	echo "$opts ours/e2fsck: pass 3A $(ratio "$(pass3a "e4$opts")" "$(pass3a "e2$opts")"), wall $(ratio "$w4" "$w2"), CPU $(ratio "$(awk -v u="$u4" -v s="$s4" 'BEGIN{print u+s}')" "$(awk -v u="$u2" -v s="$s2" 'BEGIN{print u+s}')"), peak memory $(ratio "$r4" "$r2")"
done
exit $status
