#!/bin/bash
# t3938-e4fsck-casefold.sh - e4fsck on casefolded directories, judged by e2fsck.
#
# Each image is a small `mke2fs -O casefold -E encoding=utf8` file system
# (strict or not: encoding_flags=strict) holding /big and the casefolded
# directory /d (debugfs sets EXT4_CASEFOLD_FL on it while it is empty),
# filled with names in Latin, Greek, Cyrillic and Hangul, some with
# combining marks; the "htree" ones hold 400 such names, indexed by
# `e2fsck -fyD` (the oracle builds the index: debugfs does not).
#
#   - the undamaged images are clean for e4fsck -fn, and -fyD gives the
#     same output as e2fsck -fyD and byte for byte the same directory
#     blocks (the index files the names under their casefolded hashes),
#     which each checker then calls clean; also with names that fold alike
#     in a directory that is not strict (-D renames one, as e2fsck does);
#   - damage judged by tests/lib/fsck-damage.sh's damage_case (e4fsck as
#     e2fsck in -fn, -fp, -fy, then clean for both): a name that is not
#     valid UTF-8 in strict mode (0x020053) and with -E check_encoding,
#     and names that fold alike in one block (0x020043, then pass 3A's
#     rename 0x020042): ß and SS, final and capital sigma, precomposed
#     Hangul syllables and their jamo, combining marks in two orders; in a
#     linear directory and in an indexed one.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"

damage_setup
damage_need_e2fsck_147
need_cmd python3
mke2fs -q -F -O casefold -E encoding=utf8 "$T/probe.img" 4M >/dev/null 2>&1 ||
	skip "mke2fs cannot make a casefold file system"

echo x >"$src/one"

# A few names for a linear directory, 400 for an indexed one.
python3 - "$src/one" >"$T/few.cmd" <<'PY'
import sys
for n in ["Ärger", "straße", "σοφος", "Привет", "한국어", "서울ab", "ạ́b", "café", "naïve", "Zoë", "ﬁle"]:
    sys.stdout.buffer.write(("write %s d/%s\n" % (sys.argv[1], n)).encode())
PY
python3 - "$src/one" >"$T/many.cmd" <<'PY'
import random, sys
random.seed(7)
bases = ["Ärger", "straße", "STRASSE", "Ωμέγα", "ΣΟΦΟΣ", "σοφος", "Привет", "ПРИВЕТ", "한국어", "서울",
         "Émile", "Zoë", "naïve", "café", "CAFÉ", "Ångström", "İstanbul", "ﬁle", "Ǆemal", "ΐota", "ᾳδης"]
marks = ["\u0301", "\u0323", "\u0308", "\u0327", "\u030a"]
names, i = set(), 0
while len(names) < 400:
    n = random.choice(bases) + "_" + str(i)
    if random.random() < 0.3:
        n = "a" + random.choice(marks) + random.choice(marks) + "_" + n
    if random.random() < 0.2:
        n += chr(random.choice([0xAC00 + random.randint(0, 11171), 0x3b1 + random.randint(0, 20),
                                0x430 + random.randint(0, 30)]))
    names.add(n)
    i += 1
for n in sorted(names):
    sys.stdout.buffer.write(("write %s d/%s\n" % (sys.argv[1], n)).encode())
PY

# base_image IMG KIND: KIND is strict or relaxed, then linear or htree ("strict-htree").
base_image() {
	local img=$1 kind=$2 flags=""
	case $kind in strict*) flags=",encoding_flags=strict" ;; esac
	rm -f "$img"
	mke2fs -q -F -t ext4 -O casefold,metadata_csum -E "encoding=utf8$flags" -N 1024 "$img" 16M >/dev/null 2>&1
	debugfs -w -f - "$img" >/dev/null 2>&1 <<-EOF
		write $src/big big
		mkdir d
		set_inode_field d flags 0x40080000
	EOF
	case $kind in
	*htree)
		debugfs -w -f "$T/many.cmd" "$img" >/dev/null 2>&1
		e2fsck -fyD "$img" >/dev/null 2>&1 || true
		;;
	*) debugfs -w -f "$T/few.cmd" "$img" >/dev/null 2>&1 ;;
	esac
}

# The blocks of /d, in logical order.
dir_bytes() {
	local b
	for b in $(debugfs -R "blocks d" "$1" 2>/dev/null); do
		dd if="$1" bs=1024 skip="$b" count=1 2>/dev/null
	done
}

# rebuild_case KIND [WHAT CMDS]: the image (after debugfs CMDS) is clean;
# -fyD as e2fsck's.
rebuild_case() {
	local kind=$1 name="$1${2:+, $2}: clean, and -fyD as e2fsck -fyD" rc want
	base_image "$T/rb.img" "$kind"
	[ -z "${3:-}" ] || debugfs -w -f - "$T/rb.img" >/dev/null 2>&1 <<<"$3"
	if ! "$E4FSCK" -fn "$T/rb.img" >"$T/ours.clean" 2>&1; then
		bad "$name: e4fsck -fn is not clean on e2fsprogs' image:"; sed 's/^/    /' "$T/ours.clean" | head -n 20; return
	fi
	cp "$T/rb.img" "$T/rb-ref.img"
	rc=0; "$E4FSCK" -fyD "$T/rb.img" >"$T/ours.D" 2>&1 || rc=$?
	want=0; e2fsck -fyD "$T/rb-ref.img" >"$T/theirs.D" 2>&1 || want=$?
	if [ "$rc" != "$want" ] ||
	   ! diff <(neutral "$T/ours.D" "$T/rb.img") <(neutral "$T/theirs.D" "$T/rb-ref.img") >"$T/diff" 2>&1; then
		bad "$name: exit $rc (e2fsck $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 20; return
	fi
	if ! cmp -s <(dir_bytes "$T/rb.img") <(dir_bytes "$T/rb-ref.img"); then
		bad "$name: /d's blocks differ from e2fsck's"; return
	fi
	if ! e2fsck -fn "$T/rb.img" >"$T/check" 2>&1; then
		bad "$name: e2fsck -fn is not clean on ours:"; sed 's/^/    /' "$T/check" | head -n 20; return
	fi
	if ! "$E4FSCK" -fn "$T/rb-ref.img" >"$T/check" 2>&1; then
		bad "$name: e4fsck -fn is not clean on e2fsck's:"; sed 's/^/    /' "$T/check" | head -n 20; return
	fi
	pass "$name"
}

# ---------------------------------------------------------- clean and rebuilt
rebuild_case strict
rebuild_case relaxed
rebuild_case strict-htree
rebuild_case relaxed-htree
# Not strict: pass 2 calls no name a duplicate, -D's rebuild renames one.
rebuild_case relaxed-htree "names that fold alike" "write $src/one d/ΣΟΦΟΣ_1000
write $src/one d/σοφος_1000
write $src/one d/STRASSE_1000
write $src/one d/straße_1000"

# A name that is not UTF-8 is no fault where nothing asks for valid names.
name="relaxed: a name that is not UTF-8 is left alone"
base_image "$T/rb.img" relaxed
debugfs -w -f - "$T/rb.img" >/dev/null 2>&1 <<<$'write '"$src/one"$' d/bad\xff\xfeX'
if "$E4FSCK" -fn "$T/rb.img" >"$T/ours.clean" 2>&1 && e2fsck -fn "$T/rb.img" >/dev/null 2>&1; then
	pass "$name"
else
	bad "$name:"; sed 's/^/    /' "$T/ours.clean" | head -n 20
fi

# Lookups in a casefolded directory (libext4fs's ext4fs_dir_lookup, through
# debug4fs's stat): another case, accents, final sigma, jamo find the entry.
name="lookups by casefolded name"
base_image "$T/rb.img" strict
ino_of() { sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }
lookups_ok=1
for pair in ΣΟΦΟΣ=σοφος σοφοσ=σοφος STRASSE=straße ÄRGER=Ärger "$(printf 'A\u0323\u0301')B=ạ́b" \
	    "$(printf '\u1109\u1165\u110b\u116e\u11af')AB=서울ab"; do
	alias=${pair%%=*} real=${pair#*=}
	want=$(debugfs -R "stat /d/$real" "$T/rb.img" 2>/dev/null | ino_of)
	got=$("$DEBUG4FS" -R "stat /d/$alias" "$T/rb.img" 2>/dev/null | ino_of)
	if [ -z "$want" ] || [ "$got" != "$want" ]; then
		bad "$name: /d/$alias is inode '$got', want '$want' (/d/$real)"; lookups_ok=0
	fi
done
[ "$lookups_ok" = 0 ] || pass "$name"

# ---------------------------------------------------------- names not UTF-8
damage_case "strict: a name that is not UTF-8" strict $'write '"$src/one"$' d/bad\xff\xfeX'
damage_case "strict: a name cut inside a sequence" strict $'write '"$src/one"$' d/caf\xc3'
DAMAGE_OPTS="-E check_encoding" damage_case "relaxed, -E check_encoding: a name that is not UTF-8" relaxed \
	$'write '"$src/one"$' d/\xe2\x82ok\xc0\xaf'

# ---------------------------------------------------------- names that fold alike
damage_case "strict: ß and SS" strict "write $src/one d/STRASSE"
damage_case "strict: final and capital sigma" strict "write $src/one d/ΣΟΦΟΣ"
# (The name renamed ends in ASCII: e2fsck's "~0" would cut a multibyte
# character, a name its next run calls illegal UTF-8; e4fsck does the same.)
damage_case "strict: Hangul syllables and their jamo" strict "write $src/one d/$(printf '\u1109\u1165\u110b\u116e\u11af')ab"
damage_case "strict: combining marks in two orders" strict "write $src/one d/$(printf 'a\u0301\u0323')b"
damage_case "strict, indexed: final and capital sigma" strict-htree "write $src/one d/ΣΟΦΟΣ_1000
write $src/one d/σοφος_1000"
DAMAGE_OPTS="-E check_encoding" damage_case "relaxed, -E check_encoding, indexed: ß and SS" relaxed-htree \
	"write $src/one d/straße_1000
write $src/one d/STRASSE_1000"

exit "$failed"
