#!/bin/bash
# t3970-e4fsck-random-damage.sh - e4fsck -fn, then -fy, then -fn on
# kernel-written images whose metadata was damaged at random (issue 20).
#
# The images are those of tests/lib/make-damage-images.sh (ext2, ext3 and
# ext4 with 1k and 4k blocks, 16 MiB each, with indirect maps down to
# triple indirect, extent trees, an htree, symlinks, hard links and shared
# attribute blocks); tests/tools/damage.py damages 1-6 of an image's
# metadata blocks for each seed (bytes, words set to 0, ~0, small numbers
# or block numbers already in use, bits, whole blocks zeroed or copied).
# Whatever the damage, every run must end in time with one of e4fsck's
# exit statuses (below 64), without a signal, without a sanitizer report,
# -fn must not change the image, and e2fsck -fn must get as far as pass 1
# on what -fy left whenever it does on the damaged image (a repair that
# writes over the superblock or the descriptors loses the file system).  A failing damaged image is kept
# (the temp dir stays) with what was done to it.
#
# Verdicts (issue 17): e4fsck -fn may call the damaged image clean only
# when e2fsck -fn does too.  Where it does not, e2fsck's output is matched
# against its problem table (tests/tools/problem-table.py gaps): a miss
# explained by a problem fsck/DESIGN.md lists as not covered yet is
# counted as a known gap, with the codes; any other is a failure.
#
# What is not judged, only counted: whether the second -fn finds the
# repaired image clean, and whether e2fsck -fn does; e2fsck's own -fy on
# the same damage is counted beside them for comparison.
#
# Environment: T3970_SEEDS (seeds per image after the kept ones, default
# 100), T3970_FIRST_SEED (default 1), T3970_IMAGES (a subset, e.g.
# "ext4-1k ext2-4k"), T3970_TIMEOUT (seconds a run may take, default 60),
# T3970_SAVE (a directory to keep failing and not-clean cases in, for long
# sweeps by hand), T3970_DAMAGE (more options for damage.py, e.g.
# --heavy).  The damage of a seed depends on the image, and the kernel's
# layout of an image differs a little from one build to the next: a kept
# seed reproduces the same kind of damage, not always the same bytes (the
# failing image itself is what reproduces a failure).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd python3 e2fsck mke2fs dumpe2fs debugfs timeout cmp
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir

CACHE=${EXT4FS_IMAGE_CACHE:-$top_builddir/tests/images}
images=${T3970_IMAGES:-ext2-1k ext2-4k ext3-1k ext3-4k ext4-1k ext4-4k}
only=()
for img in $images; do only+=(--only "$img"); done
rc=0
"$EXT4FS_TESTS_LIB/make-damage-images.sh" "$CACHE" "${only[@]}" >"$T/build.log" 2>&1 || rc=$?
case $rc in
0) cat "$T/build.log" ;;
77) skip "cannot build the damage images: $(grep -m1 SKIP "$T/build.log" || true)" ;;
*) cat "$T/build.log"; fail "building the damage images in $CACHE failed (exit $rc)" ;;
esac

damage_py="$top_srcdir/tests/tools/damage.py"
first=${T3970_FIRST_SEED:-1}
nseeds=${T3970_SEEDS:-100}
tmo=${T3970_TIMEOUT:-60}
save=${T3970_SAVE:-$T/failed}
dmg_opts=${T3970_DAMAGE:-}

# Seeds that found a bug once (IMAGE:SEED), run before the others:
#   ext3-4k:74  a triple-indirect pointer set to 2: pass 1D followed a zero
#               pointer and wrote past the inode on the stack (issue 20)
#   ext2-4k:34  the first descriptor block damaged (in ext4-4k:382 with its
#   ext4-4k:382 checksum made right, found in -fy): pass 1C called qsort()
#               with a null array (UBSan)
#   ext3-1k:176 a triple-indirect pointer set to 1 (the superblock), and
#   ext2-1k:264 one into the inode table leading there: -fy cleared
#               "illegal" entries inside the superblock (e2fsck could not
#               open the result)
kept="ext3-4k:74 ext2-4k:34 ext4-4k:382 ext3-1k:176 ext2-1k:264"
kept_seeds() {
	local k
	for k in $kept; do
		[ "${k%%:*}" != "$1" ] || printf '%s ' "${k#*:}"
	done
}

failed=0 cases=0 runs=0
n_fy_stopped=0        # -fy ended with exit 8 or more (gave up)
n_dups=0              # -fy went through passes 1B-1D (blocks claimed twice)
n_e4_notclean=0       # second e4fsck -fn not clean after e4fsck -fy
n_e4_only=0           # ... while e2fsck -fn is clean
n_e2_notclean=0       # e2fsck -fn not clean after e4fsck -fy
n_e2_stopped=0        # ... and stops (exit 8 or more: cannot open it, or aborts)
n_e2own_notclean=0    # e2fsck -fn not clean after e2fsck -fy (for comparison)
n_worse=0             # e2fsck -fn not clean after e4fsck -fy, clean after e2fsck -fy
worse_list=""
n_e4_stricter=0       # e4fsck -fn finds damage where e2fsck -fn calls the image clean
n_known_gap=0         # e4fsck -fn clean where e2fsck -fn is not, for a problem not covered yet
gap_codes=""
problem_table="$top_srcdir/tests/tools/problem-table.py"

# Seeds where e4fsck -fn is clean and e2fsck -fn is not, each an e2fsck
# behaviour written down in fsck/DESIGN.md ("Verdicts unlike e2fsck's").
known_verdicts=""
known_verdict() {
	case " $known_verdicts " in *" $1 "*) return 0 ;; esac
	return 1
}

# keep DIR WHY: save the damaged image of this case in DIR, and beside it
# what was done to it and WHY it is kept (more lines may follow).
keep() {
	local base="$1/$img-seed$seed"
	mkdir -p "$1"
	if [ ! -e "$base.img" ]; then
		cp --sparse=always "$T/d.img" "$base.img"
		{
			printf 'image: %s (%s)\n' "$CACHE/dmg-$img.img" "$(sed -n 's/^description: //p' "$CACHE/dmg-$img.info")"
			printf 'damage: python3 %s damage %s %s %s OUT --tag %s%s\n' "$damage_py" \
				"$CACHE/dmg-$img.img" "$CACHE/dmg-$img.meta" "$seed" "$img" "${dmg_opts:+ $dmg_opts}"
			cat "$T/damage.txt"
		} >"$base.txt"
	fi
	printf '\n%s\n' "$2" >>"$base.txt"
}

# apply_patch PREFIX IMG: write damage.py's PREFIX.data blocks over IMG
# at the places PREFIX.blocks gives.
apply_patch() {
	local bs b i=0
	{
		read -r bs
		while read -r b; do
			dd if="$1.data" of="$2" bs="$bs" skip=$i seek="$b" count=1 conv=notrunc status=none
			i=$((i + 1))
		done
	} <"$1.blocks"
}

# run MODE: e4fsck MODE on $T/w.img; a failure is reported and kept.
run() {
	local mode=$1 why=""
	rc=0
	timeout -k 10 "$tmo" "$E4FSCK" "$mode" "$T/w.img" </dev/null >"$T/out" 2>&1 || rc=$?
	runs=$((runs + 1))
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="timed out after ${tmo}s (exit $rc)"
	elif grep -q -e 'Sanitizer' -e 'runtime error' "$T/out"; then
		why="sanitizer report (exit $rc)"
	elif [ "$rc" -ge 128 ]; then
		why="killed by signal $((rc - 128))"
	elif [ "$rc" -ge 64 ]; then
		why="exit $rc"
	fi
	[ -z "$why" ] && return 0
	failed=1
	# The report (a sanitizer's, else the end of the output).
	grep -A 40 -e 'ERROR: ' -e 'runtime error' "$T/out" | head -n 40 >"$T/report" || true
	[ -s "$T/report" ] || tail -n 15 "$T/out" >"$T/report"
	echo "FAIL $img seed $seed: e4fsck $mode (step $step): $why"
	sed 's/^/    /' "$T/damage.txt"
	head -n 30 "$T/report" | sed 's/^/  | /'
	keep "$save" "e4fsck $mode (step $step of -fn, -fy, -fn): $why"
	{ echo "command: e4fsck $mode IMG (on a copy, after the steps before it)"; echo "report:"; cat "$T/report"
	  echo "output:"; head -n 60 "$T/out"; } >>"$save/$img-seed$seed.txt"
	echo "    kept: $save/$img-seed$seed.img"
	return 0
}

start=$SECONDS
for img in $images; do
	[ -f "$CACHE/dmg-$img.img" ] || fail "no damage image $img in $CACHE"
	seeds=$(printf '%s\n' $(kept_seeds "$img") $(seq "$first" $((first + nseeds - 1))) | awk '!seen[$0]++')
	# One python run makes every seed's damage (python starts slowly).
	rm -rf "$T/patch"
	mkdir "$T/patch"
	# shellcheck disable=SC2086
	python3 "$damage_py" patch "$CACHE/dmg-$img.img" "$CACHE/dmg-$img.meta" "$T/patch" $seeds --tag "$img" $dmg_opts
	for seed in $seeds; do
		cp --sparse=always "$CACHE/dmg-$img.img" "$T/d.img"
		apply_patch "$T/patch/$seed" "$T/d.img"
		cp "$T/patch/$seed.txt" "$T/damage.txt"
		cases=$((cases + 1))
		cp --sparse=always "$T/d.img" "$T/w.img"
		step=1; run -fn; n1=$rc
		# The verdicts on the damaged image: e4fsck may call clean only what
		# e2fsck calls clean.
		e2in=0; timeout "$tmo" e2fsck -fn "$T/d.img" </dev/null >"$T/e2in.out" 2>&1 || e2in=$?
		if [ "$n1" = 0 ] && [ "$e2in" != 0 ] && ! known_verdict "$img:$seed"; then
			if python3 "$problem_table" gaps "$top_srcdir" "$T/e2in.out" >"$T/gaps" 2>&1; then
				n_known_gap=$((n_known_gap + 1))
				gap_codes="$gap_codes $(awk '$2 == "not-covered-yet" { print $1 }' "$T/gaps")"
			else
				echo "FAIL $img seed $seed: e4fsck -fn calls the damaged image clean, e2fsck -fn exits $e2in"
				sed 's/^/    /' "$T/damage.txt"
				grep -v -e '^e2fsck [0-9]' -e '^Pass [0-9]' "$T/e2in.out" | head -n 8 | sed 's/^/  | /'
				keep "$save" "e4fsck -fn exit 0, e2fsck -fn exit $e2in"
				failed=1
			fi
		fi
		[ "$n1" = 0 ] || [ "$e2in" != 0 ] || n_e4_stricter=$((n_e4_stricter + 1))
		if ! cmp -s "$T/d.img" "$T/w.img"; then
			echo "FAIL $img seed $seed: e4fsck -fn changed the image"
			sed 's/^/    /' "$T/damage.txt"
			keep "$save" "e4fsck -fn changed the image"
			failed=1
			cp "$T/d.img" "$T/w.img"
		fi
		step=2; run -fy; fy=$rc
		! grep -q '^Pass 1B' "$T/out" || n_dups=$((n_dups + 1))
		cp "$T/out" "$T/fy.out"
		step=3; run -fn; n2=$rc
		e2=0; timeout "$tmo" e2fsck -fn "$T/w.img" </dev/null >"$T/e2.out" 2>&1 || e2=$?
		# e2fsck's own repair of the same damage, for comparison.
		cp --sparse=always "$T/d.img" "$T/r.img"
		timeout "$tmo" e2fsck -fy "$T/r.img" </dev/null >/dev/null 2>&1 || true
		e2own=0; timeout "$tmo" e2fsck -fn "$T/r.img" </dev/null >/dev/null 2>&1 || e2own=$?
		# A repair must never lose the file system: e2fsck -fn gets as far as
		# pass 1 on the damaged image but not on what e4fsck -fy left (a
		# superblock or descriptors written over).
		if ! grep -q '^Pass 1: ' "$T/e2.out"; then
			if grep -q '^Pass 1: ' "$T/e2in.out"; then
				echo "FAIL $img seed $seed: e2fsck can check the damaged image, not what e4fsck -fy left"
				sed 's/^/    /' "$T/damage.txt"
				grep -v '^e2fsck [0-9]' "$T/e2.out" | head -n 3 | sed 's/^/  | /'
				keep "$save" "e2fsck can check the damaged image, not what e4fsck -fy left"
				failed=1
			fi
		fi
		[ "$fy" -lt 8 ] || n_fy_stopped=$((n_fy_stopped + 1))
		[ "$n2" = 0 ] || n_e4_notclean=$((n_e4_notclean + 1))
		[ "$n2" = 0 ] || [ "$e2" != 0 ] || n_e4_only=$((n_e4_only + 1))
		[ "$e2own" = 0 ] || n_e2own_notclean=$((n_e2own_notclean + 1))
		if [ "$e2" != 0 ]; then
			n_e2_notclean=$((n_e2_notclean + 1))
			[ $((e2 & 8)) = 0 ] || n_e2_stopped=$((n_e2_stopped + 1))
			if [ "$e2own" = 0 ]; then
				n_worse=$((n_worse + 1))
				worse_list="$worse_list $img:$seed"
				if [ -n "${T3970_SAVE:-}" ]; then
					keep "$save/not-clean" "e4fsck -fy exit $fy, then e4fsck -fn exit $n2, e2fsck -fn exit $e2 (after e2fsck -fy: clean)"
					{ echo "e2fsck -fn after e4fsck -fy:"; head -n 40 "$T/e2.out";
					  echo; echo "e4fsck -fy:"; head -n 80 "$T/fy.out"; } >>"$save/not-clean/$img-seed$seed.txt"
				fi
			fi
		fi
		printf '%-8s seed %-6s -fy %-2s then e4fsck -fn %-2s e2fsck -fn %-2s (e2fsck -fy then -fn %s)\n' \
			"$img" "$seed" "$fy" "$n2" "$e2" "$e2own"
	done
done
secs=$((SECONDS - start))

echo "e4fsck ran $runs times on $cases damaged images in ${secs}s"
echo "e4fsck -fy went through passes 1B-1D (blocks claimed twice) on $n_dups of them"
echo "findings (counted, not judged), of $cases:"
echo "  e4fsck -fn not clean where e2fsck -fn is:            $n_e4_stricter"
echo "  e4fsck -fn clean where e2fsck -fn is not, for a problem fsck/DESIGN.md lists"
gap_summary=""
[ -z "$gap_codes" ] || gap_summary=$(printf '%s\n' $gap_codes | sort | uniq -c | awk '{ printf " %s(%s)", $2, $1 }')
echo "  as not covered yet:                                   $n_known_gap$gap_summary"
echo "  e4fsck -fy stopped (exit 8 or more):                 $n_fy_stopped"
echo "  e4fsck -fn not clean after e4fsck -fy:                $n_e4_notclean ($n_e4_only where e2fsck -fn is clean)"
echo "  e2fsck -fn not clean after e4fsck -fy:                $n_e2_notclean ($n_e2_stopped where it stops: exit 8 or more)"
echo "  e2fsck -fn not clean after e2fsck's own -fy:          $n_e2own_notclean"
echo "  not clean after e4fsck -fy, clean after e2fsck -fy:   $n_worse${worse_list:+ (}$(echo $worse_list | cut -c1-400)${worse_list:+)}"
if [ $failed != 0 ]; then
	# Keep the temp dir: the failing images are in it.
	[ "$save" != "$T/failed" ] || EXT4FS_KEEP_TMP=1
	fail "e4fsck crashed, hung, tripped a sanitizer, wrote under -n or lost the file system (cases kept in $save)"
fi
echo "PASS: no crash, hang, sanitizer report, write under -n or file system lost"
