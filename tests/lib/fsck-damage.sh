# shellcheck shell=bash
# tests/lib/fsck-damage.sh - damage one image in one way, then judge e4fsck
# against e2fsck on copies of it.  Sourced after common.sh by the e4fsck
# corruption tests.
#
# The caller defines:
#   base_image IMG OPTS   make the undamaged image (OPTS: its own meaning)
#   expand IMG CMDS       optional: print CMDS with the caller's @NAME@
#                         placeholders replaced by values read from IMG
#   $src                  the tree whose file "big" the image holds as /big
#                         (set DAMAGE_NO_BIG=1 when the case loses /big)
#
# damage_case NAME OPTS CMDS makes the base image, applies CMDS with
# `debugfs -w -f -`, and requires
#   - `e4fsck -fn` finds something (unless $DAMAGE_N_QUIET: e2fsck -n
#     ignores some damage, such as an orphan list), exits as `e2fsck -fn`, prints the same
#     lines (apart from the version banner), changes no byte of the image,
#     and prints the same with pass 1 in 1 and in 4 threads;
#   - `e4fsck -fp` exits and prints as `e2fsck -fp` on a copy;
#   - `e4fsck -fy` exits 1 (or $DAMAGE_FY_EXIT, where e2fsck repairs
#     without calling it a change) and prints the same lines as `e2fsck -fy`;
#   - a second `e4fsck -fy` exits 0, `e2fsck -fn` is clean on the result,
#     and /big's bytes are intact.
# With DAMAGE_PREEN_REFUSED set, `e4fsck -fp` must instead stop with exit 8
# and change nothing, where e2fsck -p goes on to repairs e4fsck does not
# make yet (the value says which).
# With DAMAGE_CMD set, CMDS is run as a shell command on the image ($1)
# instead of going to debugfs.  DAMAGE_OPTS: more options for both
# checkers (-E ...).  With DAMAGE_FY_SED set, both -fy outputs go
# through that sed script before they are compared: for a case where
# e2fsck 1.47's own repair is known to be wrong, the script turns its lines
# into those of the right repair (and leaves right lines as they are).
# DAMAGE_SED does the same for the outputs of all three modes (for e2fsck's
# own slips in what it prints, such as its library's warnings on stderr).
# DAMAGE_E2FSCK_FY_EXIT: e2fsck's -fy exit status where it is known to
# differ from e4fsck's (say why at the case).  DAMAGE_NEVER_CLEAN: e2fsck
# itself never leaves this file system clean (say why at the case): the
# second -fy must print and exit as e2fsck's second -fy, and the result is
# not required to be clean.  DAMAGE_SECOND_FY_EXIT: the second e4fsck -fy's
# exit status where the first could not finish for want of room (say why at
# the case); e2fsck -fn must still call the result clean.
#
# pass/bad print PASS/FAIL lines; $failed becomes 1 on a failure.

# damage_setup: skip without the oracles (e2fsck, mke2fs, debugfs) or a
# built e4fsck, then make $T and $src, a directory holding the 300 kB file
# "big" that base images carry as /big (the caller may add files).
damage_setup() {
	need_cmd e2fsck
	need_cmd mke2fs
	need_cmd debugfs
	[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
	make_tmpdir
	src="$T/tree"
	mkdir -p "$src"
	head -c 300000 /dev/urandom >"$src/big"
}

# damage_need_e2fsck_147: skip unless the oracle is e2fsck 1.47 or later
# (the tests match its wording and its repairs).
damage_need_e2fsck_147() {
	e2fsck -V 2>&1 | grep -q '^e2fsck 1\.4[7-9]' || skip "the oracle is e2fsck 1.47 or later"
}

# spec_image IMG SPEC: the base image of tests whose OPTS are a layout spec
# "mke2fs options@size": that file system holding /big and an empty /d.
spec_image() {
	local img=$1 spec=$2
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F ${spec%@*} "$img" "${spec#*@}" >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		mkdir d
	EOF
}

failed=0
pass() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

# Output without the version banner, with the image's name made neutral and
# e4fsck naming itself where e2fsck does.  Read as text whatever it holds
# (a name's byte 128 is printed as it is, as e2fsck prints it).
neutral() {
	grep -a -v -e '^e2fsck [0-9]' -e '^e4fsck [0-9]' "$1" | sed -e "s|$2|IMG|g" -e 's/\be4fsck\b/e2fsck/g'
}

damage_case() {
	local name=$1 opts=$2 cmds=$3
	local img="$T/dmg.img" ref="$T/ref.img" rc want
	base_image "$img" "$opts"
	if declare -F expand >/dev/null; then
		cmds=$(expand "$img" "$cmds")
	fi
	if [ -n "${DAMAGE_CMD:-}" ]; then
		bash -c "$cmds" damage "$img"
	else
		debugfs -w -f - "$img" >/dev/null 2>&1 <<<"$cmds"
	fi
	cp "$img" "$ref"
	cp "$img" "$T/preen.img"; cp "$img" "$T/preen-ref.img"
	local before; before=$(md5sum <"$img")

	# shellcheck disable=SC2086
	rc=0; "$E4FSCK" -fn ${DAMAGE_OPTS:-} "$img" >"$T/ours.n" 2>&1 || rc=$?
	# shellcheck disable=SC2086
	want=0; e2fsck -fn ${DAMAGE_OPTS:-} "$ref" >"$T/theirs.n" 2>&1 || want=$?
	if [ -z "${DAMAGE_N_QUIET:-}" ] && ! grep -q -e '? no$' -e 'IGNORED' "$T/ours.n" && [ "$rc" = 0 ]; then
		bad "$name: e4fsck -fn found nothing"; sed 's/^/    /' "$T/ours.n" | head -n 20; return
	fi
	if [ "$rc" != "$want" ]; then
		bad "$name: e4fsck -fn exit $rc, e2fsck's $want"; sed 's/^/    /' "$T/ours.n" | head -n 20; return
	fi
	if [ "$(md5sum <"$img")" != "$before" ]; then
		bad "$name: e4fsck -fn changed the image"; return
	fi
	# Pass 1 in 1 or 4 threads: the same output, byte for byte.
	local j
	for j in 1 4; do
		# shellcheck disable=SC2086
		"$E4FSCK" -fn ${DAMAGE_OPTS:-} -m "$j" "$img" >"$T/ours.n$j" 2>&1 || true
		if ! cmp -s "$T/ours.n" "$T/ours.n$j"; then
			bad "$name: e4fsck -fn -m $j prints something else:"
			diff "$T/ours.n" "$T/ours.n$j" | sed 's/^/    /' | head -n 10; return
		fi
	done
	if ! diff <(neutral "$T/ours.n" "$img" | sed -e "${DAMAGE_SED:-}") \
		  <(neutral "$T/theirs.n" "$ref" | sed -e "${DAMAGE_SED:-}") >"$T/diff" 2>&1; then
		bad "$name: -fn output differs from e2fsck's:"; sed 's/^/    /' "$T/diff" | head -n 20; return
	fi

	# Preen: the same lines (each prefixed with the image) and exit status as e2fsck -p.
	# shellcheck disable=SC2086
	rc=0; "$E4FSCK" -fp ${DAMAGE_OPTS:-} "$T/preen.img" >"$T/ours.p" 2>&1 || rc=$?
	# shellcheck disable=SC2086
	want=0; e2fsck -fp ${DAMAGE_OPTS:-} "$T/preen-ref.img" >"$T/theirs.p" 2>&1 || want=$?
	if [ -n "${DAMAGE_PREEN_REFUSED:-}" ]; then
		if [ "$rc" != 8 ] || ! cmp -s "$T/preen.img" "$ref"; then
			bad "$name: -fp exit $rc (want 8, the refusal) or the image changed:"
			sed 's/^/    /' "$T/ours.p" | head -n 20; return
		fi
	elif [ "$rc" != "$want" ] ||
	   ! diff <(neutral "$T/ours.p" "$T/preen.img" | sed -e "${DAMAGE_SED:-}") \
		  <(neutral "$T/theirs.p" "$T/preen-ref.img" | sed -e "${DAMAGE_SED:-}") >"$T/diff" 2>&1; then
		bad "$name: -fp exit $rc (e2fsck $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 20; return
	fi

	local want_y=${DAMAGE_FY_EXIT:-1}
	# shellcheck disable=SC2086
	rc=0; "$E4FSCK" -fy ${DAMAGE_OPTS:-} "$img" >"$T/ours.y" 2>&1 || rc=$?
	# shellcheck disable=SC2086
	want=0; e2fsck -fy ${DAMAGE_OPTS:-} "$ref" >"$T/theirs.y" 2>&1 || want=$?
	if [ "$rc" != "$want_y" ] || [ "$want" != "${DAMAGE_E2FSCK_FY_EXIT:-$want_y}" ]; then
		bad "$name: e4fsck -fy exit $rc, e2fsck's $want, want $want_y"; sed 's/^/    /' "$T/ours.y" | head -n 20; return
	fi
	if ! diff <(neutral "$T/ours.y" "$img" | sed -e "${DAMAGE_SED:-}" -e "${DAMAGE_FY_SED:-}") \
		  <(neutral "$T/theirs.y" "$ref" | sed -e "${DAMAGE_SED:-}" -e "${DAMAGE_FY_SED:-}") >"$T/diff" 2>&1; then
		bad "$name: -fy output differs from e2fsck's:"; sed 's/^/    /' "$T/diff" | head -n 20; return
	fi
	# shellcheck disable=SC2086
	rc=0; "$E4FSCK" -fy ${DAMAGE_OPTS:-} "$img" >"$T/ours.y2" 2>&1 || rc=$?
	if [ -n "${DAMAGE_NEVER_CLEAN:-}" ]; then
		# shellcheck disable=SC2086
		want=0; e2fsck -fy ${DAMAGE_OPTS:-} "$ref" >"$T/theirs.y2" 2>&1 || want=$?
		if [ "$rc" != "$want" ] || ! diff <(neutral "$T/ours.y2" "$img") <(neutral "$T/theirs.y2" "$ref") >"$T/diff" 2>&1; then
			bad "$name: second e4fsck -fy exit $rc (e2fsck's $want) or output differs:"
			sed 's/^/    /' "$T/diff" | head -n 20; return
		fi
	elif [ "$rc" != "${DAMAGE_SECOND_FY_EXIT:-0}" ]; then
		bad "$name: second e4fsck -fy exit $rc"; sed 's/^/    /' "$T/ours.y2" | head -n 20; return
	fi
	if [ -z "${DAMAGE_NEVER_CLEAN:-}" ] && ! e2fsck -fn "$img" >"$T/check" 2>&1; then
		bad "$name: e2fsck -fn is not clean after the repair:"; sed 's/^/    /' "$T/check" | head -n 20; return
	fi
	if [ -z "${DAMAGE_NO_BIG:-}" ]; then
		debugfs -R "cat /big" "$img" 2>/dev/null >"$T/big.out"
		# A repaired i_size covers the last block whole, as e2fsck's does: compare the source's length.
		if ! cmp -s -n "$(stat -c %s "$src/big")" "$T/big.out" "$src/big"; then
			bad "$name: /big changed"; return
		fi
	fi
	pass "$name"
}

# tty_case NAME ANSWERS PATTERN: both checkers check a copy of $T/tty.img
# on a pseudo-terminal (tests/lib/pty-answers.py: ANSWERS typed in order,
# then "y"); e2fsck must print a line matching PATTERN (the case asks what
# it means to ask), and e4fsck must exit and print as e2fsck did and leave
# a file system `e2fsck -fn` calls clean (not judged with TTY_UNJUDGED set,
# for a check that aborts).  Returns 0 when all held (the caller adds its
# own checks of $T/tty.img, then says pass), 1 after bad.
tty_case() {
	local name=$1 answers=$2 pattern=$3 rc want
	if ! command -v python3 >/dev/null 2>&1; then
		echo "SKIP $name: no python3"; return 1
	fi
	cp "$T/tty.img" "$T/tty-ref.img"
	rc=0; python3 "$top_srcdir/tests/lib/pty-answers.py" "$answers" NL "$E4FSCK" -f "$T/tty.img" >"$T/ours.tty" 2>&1 || rc=$?
	want=0; python3 "$top_srcdir/tests/lib/pty-answers.py" "$answers" "" e2fsck -f "$T/tty-ref.img" >"$T/theirs.tty" 2>&1 || want=$?
	if ! grep -q "$pattern" "$T/theirs.tty"; then
		bad "$name: e2fsck was not asked as expected:"; sed 's/^/    /' "$T/theirs.tty" | head -n 30; return 1
	fi
	if [ "$rc" != "$want" ] ||
	   ! diff <(neutral "$T/ours.tty" "$T/tty.img") <(neutral "$T/theirs.tty" "$T/tty-ref.img") >"$T/diff" 2>&1; then
		bad "$name: exit $rc (e2fsck $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 20; return 1
	fi
	if [ -z "${TTY_UNJUDGED:-}" ] && ! e2fsck -fn "$T/tty.img" >"$T/check" 2>&1; then
		bad "$name: e2fsck -fn is not clean afterwards:"; sed 's/^/    /' "$T/check" | head -n 20; return 1
	fi
	return 0
}

# Output compared with the clock and the names made neutral.
clean_out() {
	# The bad blocks inode's mod time is the clock's when -l, -L or -c rewrote the list.
	neutral "$1" "$2" | sed -e 's/now = [^)]*)/now = NOW)/' -e 's/(inode #1, mod time [^)]*)/(inode #1, mod time NOW)/'
}

# same_as_e2fsck NAME OPTS CMDS [sh]: for kinds where e2fsck stops with exit 8
# or repairs without calling the file system changed (exit 0), which
# damage_case does not fit.  The image is made by base_image IMG OPTS and
# damaged by CMDS (debugfs commands, or with "sh" a shell command on $1);
# in -n, -p and -y, e4fsck exits and prints as e2fsck on a copy (the clock
# made neutral); -n changes nothing; the result is what e2fsck leaves
# (clean, or still refused).  SAME_MODES: the modes compared, when some
# other problem makes one of them differ (say why at the case).
same_as_e2fsck() {
	local name=$1 spec=$2 cmds=$3 how=${4:-debugfs} m rc want ok=1
	rm -f "$T/on.img"
	base_image "$T/s.img" "$spec"
	if [ "$how" = sh ]; then bash -c "$cmds" damage "$T/s.img"; else debugfs -w -f - "$T/s.img" >/dev/null 2>&1 <<<"$cmds"; fi
	local before; before=$(md5sum <"$T/s.img")
	for m in ${SAME_MODES:-n p y}; do
		cp "$T/s.img" "$T/o$m.img"; cp "$T/s.img" "$T/t$m.img"
		rc=0; "$E4FSCK" -f$m "$T/o$m.img" >"$T/o.$m" 2>&1 || rc=$?
		want=0; e2fsck -f$m "$T/t$m.img" >"$T/t.$m" 2>&1 || want=$?
		if [ "$rc" != "$want" ]; then
			bad "$name: -f$m exit $rc, e2fsck's $want"; sed 's/^/    /' "$T/o.$m" | head -n 12; ok=0; continue
		fi
		if ! diff <(clean_out "$T/o.$m" "$T/o$m.img") <(clean_out "$T/t.$m" "$T/t$m.img") >"$T/diff"; then
			bad "$name: -f$m output differs from e2fsck's:"; sed 's/^/    /' "$T/diff" | head -n 12; ok=0
		fi
	done
	[ ! -f "$T/on.img" ] || [ "$(md5sum <"$T/on.img")" = "$before" ] || { bad "$name: -fn changed the image"; ok=0; }
	rc=0; e2fsck -fn "$T/oy.img" >/dev/null 2>&1 || rc=$?
	want=0; e2fsck -fn "$T/ty.img" >/dev/null 2>&1 || want=$?
	[ "$rc" = "$want" ] || { bad "$name: e2fsck -fn gives $rc after e4fsck -fy, $want after e2fsck -fy"; ok=0; }
	[ $ok = 1 ] && pass "$name"
	return 0
}
