#!/bin/bash
# t3899-e4fsck-mutations.sh - e4fsck on damaged images it was not written
# for: every image of the fuzz corpus, and copies with 1-20 random bytes
# changed in their first 256 KiB (deterministic seeds), checked with -fn,
# -fy (then -fy again) and -fp.  Whatever it finds, e4fsck must finish in
# time with one of its exit statuses (below 64), never a signal, a hang
# or, in the sanitizer build, a sanitizer report.  Seeds that once found
# a hang are kept in the list.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd python3
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
corpus="$top_srcdir/tests/fuzz/corpus"
[ -d "$corpus" ] || skip "no fuzz corpus at $corpus"
make_tmpdir

seeds="0 386 $(seq -s " " 1 "${T3899_SEEDS:-6}")"
failed=0
runs=0

mutate() {   # mutate SRC DST SEED (seed 0: unchanged)
	python3 - "$1" "$2" "$3" <<-'EOF'
		import random, sys
		src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
		b = bytearray(open(src, 'rb').read())
		if seed:
		    r = random.Random(seed)
		    lim = min(len(b), 262144)
		    for _ in range(r.randint(1, 20)):
		        i = r.randrange(1024, lim) if r.random() < 0.8 else r.randrange(0, lim)
		        b[i] = r.randrange(256)
		open(dst, 'wb').write(b)
	EOF
}

check_run() {   # check_run LABEL MODE IMAGE
	local rc=0
	timeout 60 "$E4FSCK" "$2" "$3" >"$T/out" 2>&1 </dev/null || rc=$?
	runs=$((runs + 1))
	if [ "$rc" -ge 64 ] || grep -q -e 'Sanitizer' -e 'runtime error' "$T/out"; then
		echo "FAIL $1 $2: exit $rc"
		tail -n 15 "$T/out" | sed 's/^/    /'
		cp "$3" "$T/../$(basename "$1")-failed.img" 2>/dev/null || true
		failed=1
	fi
	return 0
}

for f in "$corpus"/*; do
	name=$(basename "$f")
	for seed in $seeds; do
		mutate "$f" "$T/base.img" "$seed"
		for mode in -fn -fy -fp; do
			cp "$T/base.img" "$T/run.img"
			check_run "$name/seed$seed" "$mode" "$T/run.img"
			[ "$mode" = -fy ] && check_run "$name/seed$seed (again)" -fy "$T/run.img"
		done
	done
done
echo "e4fsck ran $runs times on $(ls "$corpus" | wc -l) corpus images with seeds $seeds"
[ $failed = 0 ] || fail "e4fsck crashed, hung or tripped a sanitizer"
echo "PASS: no crash, hang or sanitizer report"
