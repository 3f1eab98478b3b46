#!/bin/bash
# t3896-e4fsck-cli.sh - e4fsck's command line and start-up against e2fsck's:
# each case runs e2fsck and e4fsck with the same arguments on copies of the
# same image (under the same name, so messages naming it agree) and
# compares the exit status and what each prints on stdout and on stderr
# (the version banner left out, the program name and badblocks' backspaces
# normalised).  The cases: option conflicts (-n with -y, -c, -l/-L, -D; -c
# with -l), -r, -d, -k, -I, -P, -F on a file, -b and -C without a number,
# -B without -b, the usage text (e4fsck's own -m and --json lines aside)
# for an unknown option and for -S, a directory as the device, the
# bad-block list (-L and -l with an empty or missing file, -c through
# badblocks), why a file system marked clean is checked (errors, not
# cleanly unmounted, mounted N times, N days, last check in the future) and
# the "(check in N mounts)" note, a truncated image (-n, -y, -p), preen on
# clean file systems with features e4fsck cannot write or check (meta_bg,
# quota, bigalloc, mmp), and, as root with loop devices, a file system
# with an external journal (-j: clean, checked, a device that is not a
# journal, a journal of another file system, a missing path, a journal
# that cannot be found, a log replayed from it, and a log while
# needs_recovery is clear).

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs e2fsck debugfs
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir

failed=0
mkdir -p "$T/e2" "$T/e4"

# norm FILE: the banner dropped, e4fsck named e2fsck, badblocks' backspaces as
# one mark and its progress (share done, time taken) as words.
norm() {
	sed -e '/^e[24]fsck [0-9][0-9.]* (/d' -e 's/e4fsck/e2fsck/g' -e 's/\x08\x08*/<BS>/g' \
		-e 's/[0-9.]*% done, [0-9:]* elapsed/N% done, T elapsed/g' "$1"
}

# same NAME IMAGE|- [JOURNAL|-] ARGS...: e2fsck and e4fsck, each in its own
# directory on t.img (a copy of IMAGE) and j.img (a copy of JOURNAL), must
# exit alike and print alike.  The last argument names the device and is
# given as is (t.img, or something else).  FILTER (a sed script, may be
# empty) is applied to both outputs first.  With MERGE=1 stdout and stderr
# are compared as one text, stdout first.
FILTER="" MERGE=""
same() {
	local name=$1 img=$2 jnl=$3 p out rc
	shift 3
	for p in e2 e4; do
		rm -f "$T/$p/t.img" "$T/$p/j.img"
		[ "$img" = - ] || cp --sparse=always "$img" "$T/$p/t.img"
		[ "$jnl" = - ] || cp --sparse=always "$jnl" "$T/$p/j.img"
		rc=0
		if [ $p = e2 ]; then
			(cd "$T/$p" && e2fsck "$@" >out 2>err </dev/null) || rc=$?
		else
			(cd "$T/$p" && "$E4FSCK" "$@" >out 2>err </dev/null) || rc=$?
		fi
		for out in out err; do
			norm "$T/$p/$out" | sed -e "${FILTER:-b}" >"$T/$p/$out.n"
		done
		if [ -n "$MERGE" ]; then
			cat "$T/$p/err.n" >>"$T/$p/out.n"
			: >"$T/$p/err.n"
		fi
		echo "$rc" >"$T/$p/rc"
	done
	if ! cmp -s "$T/e2/rc" "$T/e4/rc"; then
		echo "FAIL $name: e4fsck exits $(cat "$T/e4/rc"), e2fsck $(cat "$T/e2/rc")"
		diff "$T/e2/out.n" "$T/e4/out.n" | head -n 10 | sed 's/^/    /'
		diff "$T/e2/err.n" "$T/e4/err.n" | head -n 10 | sed 's/^/    /'
		failed=1
	elif ! cmp -s "$T/e2/out.n" "$T/e4/out.n" || ! cmp -s "$T/e2/err.n" "$T/e4/err.n"; then
		echo "FAIL $name: the output differs (< e2fsck, > e4fsck)"
		diff "$T/e2/out.n" "$T/e4/out.n" | head -n 20 | sed 's/^/    /'
		diff "$T/e2/err.n" "$T/e4/err.n" | head -n 20 | sed 's/^/    /'
		failed=1
	else
		echo "PASS $name (exit $(cat "$T/e4/rc"))"
	fi
}

# sb IMAGE 'ssv field value'...: a copy of the base image with superblock fields set.
sb() {
	local img=$1 c
	shift
	cp --sparse=always "$T/base.img" "$img"
	for c in "$@"; do
		debugfs -w -R "$c" "$img" >/dev/null 2>&1 || fail "debugfs -R '$c' failed"
	done
}

mke2fs -q -F -t ext4 "$T/base.img" 8M >/dev/null 2>&1
: >"$T/empty.list"

# -- Options alone -----------------------------------------------------------
# e4fsck's usage has two lines more (-m, --json) and names them on its third line.
FILTER='s/ \[-m threads\] \[--json FILE\]//; /^ -m threads /d; /^ --json FILE /d'
same "usage: no device" - -
same "usage: an unknown option" "$T/base.img" - -Q t.img
same "usage: -S (a letter e2fsck no longer acts on)" "$T/base.img" - -n -S t.img
FILTER=""
same "-n with -y" "$T/base.img" - -n -y t.img
same "-p with -n" "$T/base.img" - -p -n t.img
same "-n with -c" "$T/base.img" - -n -c t.img
same "-n with -l" "$T/base.img" - -n -l /dev/null t.img
same "-n with -L" "$T/base.img" - -L /dev/null -n t.img
same "-n with -D" "$T/base.img" - -n -D t.img
# Without has_journal a journal UUID still names an external journal, which
# e2fsck looks for and, not finding it, stops (exit 12) in every mode.
cp --sparse=always "$T/base.img" "$T/uuid-nofeat.img"
debugfs -w -f - "$T/uuid-nofeat.img" >/dev/null 2>&1 <<<"feature -has_journal
ssv journal_uuid 01234567-89ab-cdef-0123-456789abcdef"
for m in -fn -fp -fy; do
	same "journal UUID without has_journal, $m" "$T/uuid-nofeat.img" - $m t.img
done
# Feature bits e2fsprogs 1.47 does not support, in each word, named or not:
# refused in e2fsck's words, exit 8 before opening (incompatible bits, or
# read-only-compatible ones for a repair), else 12.
for f in FEATURE_C24 lazy_bg FEATURE_I31 compression FEATURE_R30; do
	cp --sparse=always "$T/base.img" "$T/unsupp.img"
	debugfs -w -R "feature $f" "$T/unsupp.img" >/dev/null 2>&1
	for m in -fn -p -fy; do
		same "unsupported feature $f, $m" "$T/unsupp.img" - $m t.img
	done
done
same "-c with -l" "$T/base.img" - -y -c -l /dev/null t.img
same "-r (ignored)" "$T/base.img" - -r -n t.img
same "-d (accepted)" "$T/base.img" - -d -n t.img
same "-k alone" "$T/base.img" - -k -n t.img
same "-F on an image file" "$T/base.img" - -F -n t.img
same "-b not a number" "$T/base.img" - -n -b foo t.img
same "-C not a number" "$T/base.img" - -n -C foo t.img
same "-I and -P (e2fsck's tuning, ignored)" "$T/base.img" - -n -I 8 -P 256 t.img
same "-B without -b (ignored)" "$T/base.img" - -n -B 3000 t.img
mkdir -p "$T/e2/dir" "$T/e4/dir"
same "a directory as the device" - - -n dir

# -- The bad-block list --------------------------------------------------------
same "-L with an empty list, -y" "$T/base.img" - -y -L "$T/empty.list" t.img
same "-l with an empty list, -p" "$T/base.img" - -p -l "$T/empty.list" t.img
same "-l with a missing file" "$T/base.img" - -y -l "$T/none.list" t.img
if command -v badblocks >/dev/null 2>&1; then
	same "-c (badblocks, read-only test), -y" "$T/base.img" - -c -y t.img
	same "-ck, -p" "$T/base.img" - -ck -p t.img
	same "-cc (badblocks, read-write test), -y" "$T/base.img" - -cc -y t.img
else
	echo "SKIP -c: badblocks is missing"
fi

# -- Why a file system marked clean is checked -----------------------------------
sb "$T/mounted.img" "ssv max_mnt_count 20" "ssv mnt_count 30"
sb "$T/mounts4.img" "ssv max_mnt_count 20" "ssv mnt_count 16"
sb "$T/mounts1.img" "ssv max_mnt_count 20" "ssv mnt_count 19"
sb "$T/days.img" "ssv checkinterval 86400" "ssv lastcheck 20200101"
sb "$T/future.img" "ssv checkinterval 86400" "ssv lastcheck 20990101"
sb "$T/dirty.img" "ssv state 0"
sb "$T/errors.img" "ssv state 3"
sb "$T/errors-dirty.img" "ssv state 2"
for m in -n -p -y; do
	same "mounted 30 times, $m" "$T/mounted.img" - $m t.img
	same "not cleanly unmounted, $m" "$T/dirty.img" - $m t.img
	same "errors and not clean, $m" "$T/errors-dirty.img" - $m t.img
done
same "errors, -p" "$T/errors.img" - -p t.img
same "check in 4 mounts, -p" "$T/mounts4.img" - -p t.img
same "check after next mount, -n" "$T/mounts1.img" - -n t.img
same "days without a check, -p" "$T/days.img" - -p t.img
same "last check in the future, -n" "$T/future.img" - -n t.img

# -- A truncated image ---------------------------------------------------------------
cp --sparse=always "$T/base.img" "$T/short.img"
truncate -s 6M "$T/short.img"
for m in -n -y; do
	same "image shorter than the file system, $m" "$T/short.img" - $m t.img
done
# e2fsck 1.47 prints preen's "UNEXPECTED INCONSISTENCY" on stderr, e4fsck (problem.c) on stdout.
MERGE=1
same "image shorter than the file system, -p" "$T/short.img" - -p t.img
MERGE=""

# -- Preen on clean file systems with features e4fsck cannot write or check ----------------
feature() {   # feature NAME MKE2FS-ARGS...
	local name=$1
	shift
	rm -f "$T/feat.img"
	if mke2fs -q -F -t ext4 "$@" "$T/feat.img" 32M >/dev/null 2>&1; then
		same "$name, clean, -p" "$T/feat.img" - -p t.img
		same "$name, clean, -n" "$T/feat.img" - -n t.img
	else
		echo "SKIP $name: mke2fs cannot make it"
	fi
}
feature meta_bg -O meta_bg,^resize_inode
feature quota -O quota
feature bigalloc -O bigalloc -C 16384
feature mmp -O mmp

# -- An external journal (mke2fs -J device= wants a block device) -------------------------
if [ "$(root_loop_reason)" = yes ]; then
	jdev="$T/jdev.img" fs="$T/extj.img"
	mke2fs -q -F -O journal_dev -b 4096 "$jdev" 8M >/dev/null 2>&1
	mke2fs -q -F -O journal_dev -b 4096 "$T/other-jdev.img" 8M >/dev/null 2>&1
	truncate -s 32M "$fs"
	loop=$(losetup -f --show "$jdev")
	at_exit "losetup -d $loop 2>/dev/null"
	mke2fs -q -F -t ext4 -b 4096 -J device="$loop" "$fs" >/dev/null 2>&1 ||
		fail "mke2fs -J device=$loop failed"
	same "external journal, clean, -p" "$fs" "$jdev" -p -j j.img t.img
	same "external journal, -fn" "$fs" "$jdev" -fn -j j.img t.img
	same "external journal, -fy" "$fs" "$jdev" -fy -j j.img t.img
	same "-j names a file system, not a journal" "$fs" "$T/base.img" -fn -j j.img t.img
	same "-j names another file system's journal, -fy" "$fs" "$T/other-jdev.img" -fy -j j.img t.img
	same "-j names another file system's journal, -p" "$fs" "$T/other-jdev.img" -p -j j.img t.img
	same "-j names a missing path" "$fs" - -fn -j none.img t.img
	# A journal device number no device has, and a UUID no device carries: nowhere to look.
	cp --sparse=always "$fs" "$T/lost.img"
	debugfs -w -R "ssv journal_dev 0xfefe" "$T/lost.img" >/dev/null 2>&1
	debugfs -w -R "ssv journal_uuid 01234567-89ab-cdef-0123-456789abcdef" "$T/lost.img" >/dev/null 2>&1
	same "external journal not found" "$T/lost.img" - -fn t.img
	# A log to replay: the kernel's transactions, copied while mounted.
	mkdir -p "$T/mnt"
	loop_mount "$fs" "$T/mnt" "journal_path=$loop,commit=600"
	for i in 1 2 3; do echo "file $i" >"$T/mnt/f$i"; mkdir "$T/mnt/d$i"; done
	sync
	cp --sparse=always "$fs" "$T/rec.img"
	cp --sparse=always "$jdev" "$T/rec-jdev.img"
	loop_umount "$T/mnt"
	if dumpe2fs -h "$T/rec.img" 2>/dev/null | grep -q needs_recovery; then
		for m in -n -p -y; do
			same "external journal replayed, $m" "$T/rec.img" "$T/rec-jdev.img" $m -j j.img t.img
		done
		# The replay's result: what e2fsck's replay gives, a clean file system and an empty log.
		if ! (cd "$T/e4" && e2fsck -fn -j j.img t.img >/dev/null 2>&1); then
			echo "FAIL external journal replayed: e2fsck -fn finds faults afterwards"; failed=1
		elif ! dumpe2fs -h "$T/e4/j.img" 2>/dev/null | grep -q '^Journal start: *0$'; then
			echo "FAIL external journal replayed: the log is not empty afterwards"; failed=1
		else
			echo "PASS external journal replayed: clean afterwards, log empty"
		fi
		# A log while needs_recovery is clear: "Run journal anyway", as for an internal journal.
		cp --sparse=always "$T/rec.img" "$T/norec.img"
		debugfs -w -R "feature -needs_recovery" "$T/norec.img" >/dev/null 2>&1
		same "external journal with a log, needs_recovery clear, -n" "$T/norec.img" "$T/rec-jdev.img" -n -j j.img t.img
		MERGE=1
		same "external journal with a log, needs_recovery clear, -p" "$T/norec.img" "$T/rec-jdev.img" -p -j j.img t.img
		MERGE=""
		same "external journal with a log, needs_recovery clear, -y" "$T/norec.img" "$T/rec-jdev.img" -y -j j.img t.img
	else
		echo "SKIP external journal replay: the copy needs no recovery"
	fi
else
	echo "SKIP external journal: $(root_loop_reason)"
fi

[ $failed = 0 ] || fail "e4fsck's command line or start-up differs from e2fsck's"
