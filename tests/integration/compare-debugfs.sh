#!/bin/bash
# tests/integration/compare-debugfs.sh - compare a debugfs clone with the
# real debugfs on one image.
#
# usage: compare-debugfs.sh [options] IMAGE [TOOL]
#
#   TOOL defaults to $DEBUG4FS ($top_builddir/debugfs/debug4fs).
#
#   --reference PROG   the reference debugfs (default: debugfs on PATH/sbin)
#   --filter FILE      sed -E script applied to both transcripts before
#                      comparing (default: known-differences.sed next to
#                      this script, if it exists)
#   --no-filter        do not apply any filter file
#   --max-dump-size N  do not dump regular files bigger than N bytes
#                      (default 268435456; debugfs writes holes as zeros)
#   --max-inodes N     run the per-inode commands on at most N inodes,
#                      evenly spread (default 0 = all in-use inodes)
#   --hunks N          show at most N differing commands (default 5)
#   --timeout SECS     kill a tool run after SECS seconds (default 900)
#   --keep             keep the work dir (commands, transcripts, dumps)
#   -q, --quiet        print nothing but the summary line
#
# One command file is built by enumerating the image with the reference
# debugfs: every in-use inode (from the inode bitmaps, via dumpe2fs, plus
# a recursive "ls -p" walk from the root, plus the reserved inodes 1..11)
# gets stat, ex, blocks, bmap, imap and, for regular files, dump; then
# stats, ls -l, ncheck, icheck, testb, testi, ffb, ffi, freefrag, htree,
# bmap at interesting offsets and path lookups.  Both tools run that file
# with "-f" in their own working directory (so "dump" writes to separate
# places), with stdout line-buffered and stderr merged into it, TZ=UTC,
# LC_ALL=C and the pager off.  The transcripts are split at the command
# echo lines ("debugfs: CMD") and compared command by command; dumped
# files are compared with cmp.
#
# Exit status: 0 no difference, 1 differences, 2 usage or setup error,
# 77 skipped (no debugfs or no tool).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

ME=compare-debugfs

usage() {
	sed -n '5,21s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

script_dir=$(_ext4fs_abs_dir "$(dirname -- "$0")")
FILTER=""
[ -f "$script_dir/known-differences.sed" ] && FILTER="$script_dir/known-differences.sed"
REFERENCE=${REAL_DEBUGFS:-}
MAX_DUMP=268435456
MAX_INODES=0
HUNKS=5
TIMEOUT=900
QUIET=""
IMAGE=""
TOOL=""

while [ $# -gt 0 ]; do
	case $1 in
	--reference) [ $# -ge 2 ] || usage; REFERENCE=$2; shift ;;
	--filter) [ $# -ge 2 ] || usage; FILTER=$2; shift ;;
	--no-filter) FILTER="" ;;
	--max-dump-size) [ $# -ge 2 ] || usage; MAX_DUMP=$2; shift ;;
	--max-inodes) [ $# -ge 2 ] || usage; MAX_INODES=$2; shift ;;
	--hunks) [ $# -ge 2 ] || usage; HUNKS=$2; shift ;;
	--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift ;;
	--keep) export EXT4FS_KEEP_TMP=1 ;;
	-q | --quiet) QUIET=1 ;;
	-h | --help) usage ;;
	--) shift; break ;;
	-*) echo "$ME: unknown option $1" >&2; usage ;;
	*)
		if [ -z "$IMAGE" ]; then
			IMAGE=$1
		elif [ -z "$TOOL" ]; then
			TOOL=$1
		else
			usage
		fi
		;;
	esac
	shift
done
if [ $# -gt 0 ] && [ -z "$IMAGE" ]; then IMAGE=$1; shift; fi
if [ $# -gt 0 ] && [ -z "$TOOL" ]; then TOOL=$1; shift; fi
if [ $# -ne 0 ] || [ -z "$IMAGE" ]; then usage; fi
: "${TOOL:=$DEBUG4FS}"

for n in "$MAX_DUMP" "$MAX_INODES" "$HUNKS" "$TIMEOUT"; do
	case $n in '' | *[!0-9]*) echo "$ME: not a number: '$n'" >&2; exit 2 ;; esac
done

# Resolve programs to absolute paths: the tools run in other directories.
abs_prog() {
	local p=$1
	case $p in
	*/*) [ -x "$p" ] || return 1; printf '%s/%s\n' "$(_ext4fs_abs_dir "$(dirname -- "$p")")" "$(basename -- "$p")" ;;
	*) command -v -- "$p" ;;
	esac
}

[ -n "$REFERENCE" ] || skip "debugfs (e2fsprogs) not found"
REFERENCE=$(abs_prog "$REFERENCE") || skip "reference debugfs '$REFERENCE' not found"
TOOL_ABS=$(abs_prog "$TOOL") || skip "tool '$TOOL' not found or not executable (not built yet?)"
[ -r "$IMAGE" ] || { echo "$ME: cannot read image '$IMAGE'" >&2; exit 2; }
IMAGE=$(_ext4fs_abs_dir "$(dirname -- "$IMAGE")")/$(basename -- "$IMAGE")
if [ -n "$FILTER" ]; then
	[ -r "$FILTER" ] || { echo "$ME: cannot read filter '$FILTER'" >&2; exit 2; }
	FILTER=$(_ext4fs_abs_dir "$(dirname -- "$FILTER")")/$(basename -- "$FILTER")
fi
DUMPE2FS=$(command -v dumpe2fs 2>/dev/null) || DUMPE2FS=""

make_tmpdir
W=$T

# The environment both tools run in.
export TZ=UTC LC_ALL=C DEBUGFS_PAGER=__none__ PAGER=cat
unset LANG LANGUAGE DEBUGFS_HOOK 2>/dev/null || true
LINEBUF=()
if command -v stdbuf >/dev/null 2>&1; then
	LINEBUF=(stdbuf -oL -eL)
fi
TIMEOUT_CMD=()
if [ "$TIMEOUT" -gt 0 ] && command -v timeout >/dev/null 2>&1; then
	TIMEOUT_CMD=(timeout -k 10 "$TIMEOUT")
fi

# ref_run CMDFILE OUT: run the reference quietly for discovery.
ref_run() {
	"$REFERENCE" -f "$1" "$IMAGE" </dev/null >"$2" 2>/dev/null || true
}

say() {
	[ -n "$QUIET" ] || printf '%s\n' "$*"
}

# ---------------------------------------------------------------- discovery

# Superblock facts.
printf 'stats -h\n' >"$W/d.cmd"
ref_run "$W/d.cmd" "$W/d.stats"
sb_get() {
	sed -n "s/^$1: *//p" "$W/d.stats" | head -n 1
}
INODES_COUNT=$(sb_get 'Inode count')
BLOCKS_COUNT=$(sb_get 'Block count')
BLOCK_SIZE=$(sb_get 'Block size')
FIRST_BLOCK=$(sb_get 'First block')
case "$INODES_COUNT$BLOCKS_COUNT$BLOCK_SIZE" in
'' | *[!0-9]*)
	echo "$ME: the reference debugfs cannot read $IMAGE" >&2
	exit 2
	;;
esac
: "${FIRST_BLOCK:=0}"

declare -A MODE=() SIZE=() PATHOF=() USED=() ENTRIES=()

# Recursive walk with "ls -p", one debugfs run per tree level.
MODE[2]=040755
PATHOF[2]=/
frontier=(2)
while [ ${#frontier[@]} -gt 0 ]; do
	: >"$W/d.cmd"
	for d in "${frontier[@]}"; do
		printf 'ls -p <%s>\n' "$d" >>"$W/d.cmd"
	done
	ref_run "$W/d.cmd" "$W/d.ls"
	frontier=()
	# "/ino/mode/uid/gid/name/size/" under each "debugfs: ls -p <dir>".
	while IFS=$'\t' read -r parent ino mode size name; do
		ENTRIES[$parent]=$((${ENTRIES[$parent]:-0} + 1))
		[ -n "${MODE[$ino]:-}" ] && continue
		MODE[$ino]=$mode
		[ "$size" = - ] || SIZE[$ino]=$size
		if [ "${PATHOF[$parent]}" = / ]; then
			PATHOF[$ino]=/$name
		else
			PATHOF[$ino]=${PATHOF[$parent]}/$name
		fi
		case $mode in 04*) frontier+=("$ino") ;; esac
	done < <(awk '
		/^debugfs: ls -p <[0-9]+>$/ { parent = substr($0, 17); sub(/>$/, "", parent); next }
		/^\/[0-9]+\/[0-7]+\/[0-9]+\/[0-9]+\/.*\/[0-9]*\/$/ {
			line = substr($0, 2, length($0) - 2)
			n = split(line, f, "/")
			if (n < 6 || f[1] == 0) next
			name = f[5]
			for (i = 6; i < n; i++) name = name "/" f[i]   # cannot happen in ext4
			if (name == "." || name == "..") next
			print parent "\t" f[1] "\t" f[2] "\t" (f[n] == "" ? "-" : f[n]) "\t" name
		}' "$W/d.ls")
done

# In-use inodes from the bitmaps: everything not listed as free.
if [ -n "$DUMPE2FS" ]; then
	"$DUMPE2FS" "$IMAGE" 2>/dev/null |
		sed -n 's/^  Free inodes: *//p' | tr ',' '\n' | tr -d ' ' |
		awk -v max="$INODES_COUNT" -F- '
			NF == 0 || $1 == "" { next }
			{ hi = (NF > 1) ? $2 : $1; for (i = $1; i <= hi; i++) free[i] = 1 }
			END { for (i = 1; i <= max; i++) if (!(i in free)) print i }
		' >"$W/d.used"
else
	: >"$W/d.used"
fi
while read -r ino; do USED[$ino]=1; done <"$W/d.used"
for ((ino = 1; ino <= 11 && ino <= INODES_COUNT; ino++)); do USED[$ino]=1; done
for ino in "${!MODE[@]}"; do USED[$ino]=1; done

mapfile -t INOS < <(printf '%s\n' "${!USED[@]}" | sort -n)

# Types and sizes of in-use inodes the walk did not reach (reserved
# inodes, the journal, orphan file, EA inodes, unlinked ones).
: >"$W/d.cmd"
for ino in "${INOS[@]}"; do
	[ -n "${MODE[$ino]:-}" ] || printf 'stat <%s>\n' "$ino" >>"$W/d.cmd"
done
if [ -s "$W/d.cmd" ]; then
	ref_run "$W/d.cmd" "$W/d.stat"
	while read -r ino type size; do
		case $type in
		regular) MODE[$ino]=100000 ;;
		directory) MODE[$ino]=040000 ;;
		*) MODE[$ino]=000000 ;;
		esac
		SIZE[$ino]=$size
	done < <(awk '
		/^Inode: [0-9]+ +Type: / { ino = $2; type = $4 }
		/ Size: [0-9]+/ && ino != "" {
			for (i = 1; i < NF; i++) if ($i == "Size:") { print ino, type, $(i + 1); ino = ""; break }
		}' "$W/d.stat")
fi

# Optionally thin out the per-inode commands (keep the reserved ones).
if [ "$MAX_INODES" -gt 0 ] && [ ${#INOS[@]} -gt "$MAX_INODES" ]; then
	mapfile -t INOS < <(printf '%s\n' "${INOS[@]}" |
		awk -v n="${#INOS[@]}" -v m="$MAX_INODES" '$1 <= 11 || int(NR * m / n) != int((NR - 1) * m / n)')
fi

# ---------------------------------------------------------------- command file

CMDS=$W/commands
CMDLINES=()
DUMPLINES=()
emit() {
	CMDLINES+=("$*")
}
is_reg() { case ${MODE[$1]:-} in 10*) return 0 ;; esac; return 1; }
is_dir() { case ${MODE[$1]:-} in 04*) return 0 ;; esac; return 1; }
# Paths debugfs' parser takes as one plain word.
plain_path() { case $1 in *[!A-Za-z0-9._/+-]*) return 1 ;; esac; return 0; }

emit stats
# freefrag first: debugfs 1.47.0 can fail in freefrag after "ffb N GOAL"
# has loaded the bitmaps ("Block bitmap checksum does not match bitmap",
# then a garbage program name in "... while closing the filesystem").
# debugfs 1.47.0's freefrag on bigalloc converts blocks to clusters twice and
# reports no free extents at all; debug4fs reports the real ones
# (t1200 documents this), so there is nothing to compare on bigalloc.
if ! dumpe2fs -h "$IMAGE" 2>/dev/null | grep -q '^Filesystem features:.*bigalloc'; then
	emit "freefrag"
	emit "freefrag -c 16"
fi
emit "ls -l /"

for ino in "${INOS[@]}"; do
	emit "stat <$ino>"
	emit "ex <$ino>"
	emit "blocks <$ino>"
	emit "bmap <$ino> 0"
	emit "imap <$ino>"
	if is_reg "$ino" && [ "${SIZE[$ino]:-0}" -le "$MAX_DUMP" ]; then
		emit "dump <$ino> dumps/$ino"
		DUMPLINES+=("${#CMDLINES[@]} $ino")
	fi
done

# Directories: a few small ones and the biggest one (most entries).
big_dir=2
big_size=0
ndirs=0
for ino in $(printf '%s\n' "${!PATHOF[@]}" | sort -n); do
	is_dir "$ino" || continue
	p=${PATHOF[$ino]}
	if [ "${ENTRIES[$ino]:-0}" -gt "$big_size" ] && plain_path "$p"; then
		big_dir=$ino
		big_size=${ENTRIES[$ino]}
	fi
	if [ "$ndirs" -lt 6 ] && [ "$ino" != 2 ] && plain_path "$p"; then
		emit "ls -l $p"
		ndirs=$((ndirs + 1))
	fi
done
emit "ls -l ${PATHOF[$big_dir]}"
emit "ls -p ${PATHOF[$big_dir]}"
emit "htree ${PATHOF[$big_dir]}"
emit "htree /"

# Path lookups: the deepest paths, then a spread.
mapfile -t paths < <(for ino in "${!PATHOF[@]}"; do
	p=${PATHOF[$ino]}
	if plain_path "$p"; then printf '%s\n' "$p"; fi
done | awk -F/ '{ print NF "\t" $0 }' | sort -k1,1nr -k2 | cut -f2)
for ((i = 0; i < ${#paths[@]} && i < 3; i++)); do
	emit "stat ${paths[i]}"
done
step=$(( (${#paths[@]} + 29) / 30 ))
[ "$step" -gt 0 ] || step=1
for ((i = 0; i < ${#paths[@]}; i += step)); do
	emit "stat ${paths[i]}"
done
emit "stat /does/not/exist"

# Sample regular files: bmap at interesting logical blocks.
mapfile -t regs < <(for ino in "${INOS[@]}"; do is_reg "$ino" && echo "$ino"; done)
bigfiles=$(for ino in "${regs[@]}"; do echo "${SIZE[$ino]:-0} $ino"; done | sort -nr | head -n 8 | cut -d' ' -f2)
for ino in $bigfiles; do
	nb=$(( (${SIZE[$ino]:-0} + BLOCK_SIZE - 1) / BLOCK_SIZE ))
	emit "bmap <$ino> $((nb / 2))"
	emit "bmap <$ino> $((nb > 0 ? nb - 1 : 0))"
	emit "bmap <$ino> $((nb + 10))"
	emit "bmap <$ino> 12"
	emit "bmap <$ino> 300"
	emit "bmap <$ino> 70000"
done

# ncheck / testi on a spread of inodes, plus a free and an invalid one.
step=$(( (${#INOS[@]} + 39) / 40 ))
[ "$step" -gt 0 ] || step=1
sample=()
for ((i = 0; i < ${#INOS[@]}; i += step)); do
	sample+=("${INOS[i]}")
done
emit "ncheck ${sample[*]}"
emit "ncheck -c ${sample[*]}"
for ino in "${sample[@]:0:10}"; do
	emit "testi <$ino>"
done
free_ino=""
for ((ino = 12; ino <= INODES_COUNT; ino++)); do
	if [ -z "${USED[$ino]:-}" ]; then free_ino=$ino; break; fi
done
[ -n "$free_ino" ] && emit "testi <$free_ino>" && emit "stat <$free_ino>"
emit "testi <$((INODES_COUNT + 1))>"
emit "stat <$((INODES_COUNT + 1))>"
emit "ncheck $((INODES_COUNT + 1))"

# Blocks: fixed ones, a spread, and blocks of sampled files.
printf 'stats\n' >"$W/d.cmd"
for ino in "${sample[@]:0:12}"; do
	printf 'blocks <%s>\n' "$ino" >>"$W/d.cmd"
done
ref_run "$W/d.cmd" "$W/d.blocks"
blocks=("$FIRST_BLOCK" $((FIRST_BLOCK + 1)) $((BLOCKS_COUNT - 1)))
for ((i = 1; i < 8; i++)); do
	blocks+=($((BLOCKS_COUNT * i / 8 + i)))
done
mapfile -t more < <(
	{
		# group 0 and 1 metadata from stats
		sed -n 's/^ Group *[0-9]*: block bitmap at \([0-9]*\), inode bitmap at \([0-9]*\), inode table at \([0-9]*\).*/\1\n\2\n\3/p' "$W/d.blocks" | head -n 6
		# the first block listed for each sampled inode
		grep -E '^[0-9]+( [0-9]+)*$' "$W/d.blocks" | awk '{ print $1; if (NF > 2) print $(NF) }' | head -n 16
	} | awk '!seen[$1]++'
)
blocks+=("${more[@]}")
emit "icheck ${blocks[*]}"
for b in "${blocks[@]:0:12}"; do
	emit "testb $b"
done
emit "testb $FIRST_BLOCK 64"
emit "testb $((BLOCKS_COUNT - 16)) 16"
emit "testb $BLOCKS_COUNT"
emit "ffb"
emit "ffb 10"
emit "ffb 1 $((BLOCKS_COUNT / 2))"
emit "ffi"
emit "blocks <$((INODES_COUNT + 1))>"
emit "bmap <2> 999999"

printf '%s\n' "${CMDLINES[@]}" >"$CMDS"
ncmd=${#CMDLINES[@]}
if [ ${#DUMPLINES[@]} -gt 0 ]; then
	printf '%s\n' "${DUMPLINES[@]}" >"$W/dumps.list"
else
	: >"$W/dumps.list"
fi

# ---------------------------------------------------------------- run both

run_tool() {
	# run_tool PROG DIR: output in DIR.raw, exit status in DIR.rc
	local rc=0
	mkdir -p "$2/dumps"
	(cd "$2" && "${TIMEOUT_CMD[@]}" "${LINEBUF[@]}" "$1" -f "$CMDS" "$IMAGE" </dev/null >"$2.raw" 2>&1) || rc=$?
	echo "$rc" >"$2.rc"
}
# Both at once: they only read the image.
run_tool "$REFERENCE" "$W/ref" &
ref_pid=$!
run_tool "$TOOL_ABS" "$W/tool" || true
wait "$ref_pid" || true
ref_rc=$(cat "$W/ref.rc")
tool_rc=$(cat "$W/tool.rc")

# Normalise: drop the version banner, accept the clone's own prompt name,
# then apply the known-differences filter.
normalize() {
	sed -E -e '/^debug(4)?fs [0-9][^ ]* \([^)]*\)$/d' -e 's/^debug4fs: /debugfs: /' "$1" >"$2.tmp"
	if [ -n "$FILTER" ]; then
		sed -E -f "$FILTER" "$2.tmp" >"$2"
		rm -f "$2.tmp"
	else
		mv "$2.tmp" "$2"
	fi
}
normalize "$W/ref.raw" "$W/ref.out"
normalize "$W/tool.raw" "$W/tool.out"

# Dumps: a dump command differs if the files differ or only one tool
# wrote the file.  One "diff -rq" instead of a cmp per file.
{ diff -rq "$W/ref/dumps" "$W/tool/dumps" 2>&1 || true; } |
	awk '
		/^Files .* differ$/ { n = split($2, p, "/"); print p[n], "contents differ" }
		/^Only in / { dir = $3; sub(/:$/, "", dir); print $4, "only in " (dir ~ /\/ref\/dumps$/ ? "debugfs" : "tool") " output" }
	' >"$W/dump.bad"
# Known debugfs 1.47 bug: for a small inline-data file it dumps all 60 bytes
# of i_block whatever i_size says; the kernel (and debug4fs) give i_size
# bytes.  Accept a tool dump that is a proper prefix of a 60-byte debugfs dump.
while read -r name why; do
	[ "$why" = "contents differ" ] || { echo "$name $why"; continue; }
	r=$W/ref/dumps/$name t=$W/tool/dumps/$name
	rs=$(stat -c %s "$r") ts=$(stat -c %s "$t")
	if [ "$rs" = 60 ] && [ "$ts" -lt 60 ] && cmp -s -n "$ts" "$r" "$t"; then
		continue
	fi
	echo "$name $why"
done <"$W/dump.bad" >"$W/dump.bad2"
mv "$W/dump.bad2" "$W/dump.bad"
awk 'NR == FNR { bad[$1] = substr($0, length($1) + 2); next }
     ($2 in bad) { print $1, "dumps/" $2 ": " bad[$2] }' "$W/dump.bad" "$W/dumps.list" >"$W/dump.diff"

# Split both transcripts at the command echo lines and compare section by
# section.  Section 0 is whatever comes before the first command.
mkdir -p "$W/hunks"
awk -v cmds="$CMDS" -v dumpdiff="$W/dump.diff" -v hunks="$HUNKS" -v hd="$W/hunks" '
	BEGIN {
		n = 0
		while ((getline l < cmds) > 0) cmd[++n] = l
		while ((getline l < dumpdiff) > 0) { split(l, f, " "); dd[f[1]] = substr(l, length(f[1]) + 2) }
	}
	FNR == 1 { file++; k = 0 }
	{
		if (k < n && $0 == "debugfs: " cmd[k + 1]) k++
		if (file == 1) ref[k] = ref[k] $0 "\n"; else tool[k] = tool[k] $0 "\n"
	}
	END {
		differ = 0; shown = 0
		for (i = 0; i <= n; i++) {
			if (ref[i] == tool[i] && !(i in dd)) continue
			differ++
			if (shown < hunks) {
				shown++
				printf "%s", ref[i] > (hd "/" shown ".ref")
				printf "%s", tool[i] > (hd "/" shown ".tool")
				print (i == 0 ? "(before the first command)" : cmd[i]) > (hd "/" shown ".cmd")
				if (i in dd) print dd[i] > (hd "/" shown ".dump")
				close(hd "/" shown ".ref"); close(hd "/" shown ".tool")
				close(hd "/" shown ".cmd"); if (i in dd) close(hd "/" shown ".dump")
			}
		}
		print differ
	}
' "$W/ref.out" "$W/tool.out" >"$W/differ"
DIFFER=$(cat "$W/differ")
# debug4fs exits 1 when any command failed, where debugfs often exits 0
# (a documented difference); anything else, and any failure debugfs has
# that the tool does not, counts.
rc_differs() {
	[ "$ref_rc" = "$tool_rc" ] && return 1
	[ "$ref_rc" = 0 ] && [ "$tool_rc" = 1 ] && return 1
	return 0
}
if rc_differs; then
	DIFFER=$((DIFFER + 1))
fi

name=$(basename -- "$IMAGE")
if [ "$DIFFER" -eq 0 ]; then
	say "$ME: $name: $ncmd commands, 0 differ"
	exit 0
fi

echo "$ME: $name: $ncmd commands, $DIFFER differ (reference $(basename -- "$REFERENCE"), tool $TOOL)"
if [ -z "$QUIET" ]; then
	if rc_differs; then
		echo "exit status: debugfs $ref_rc, tool $tool_rc"
	fi
	for ((i = 1; i <= HUNKS; i++)); do
		[ -f "$W/hunks/$i.cmd" ] || break
		echo "--- command: $(cat "$W/hunks/$i.cmd")"
		if [ -f "$W/hunks/$i.dump" ]; then
			echo "dumped file differs: $(cat "$W/hunks/$i.dump")"
		fi
		diff -u --label debugfs --label tool "$W/hunks/$i.ref" "$W/hunks/$i.tool" |
			tail -n +3 | head -n 40 || true
	done
	if [ -z "${EXT4FS_KEEP_TMP:-}" ]; then
		echo "(rerun with --keep to inspect the full transcripts)"
	fi
fi
exit 1
