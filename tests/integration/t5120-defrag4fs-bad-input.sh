#!/bin/bash
# t5120-defrag4fs-bad-input.sh - what defrag4fs refuses, and that a refusal
# writes nothing.  Each case runs defrag4fs on a small ext4 image (made by
# mke2fs -d, so the refusals test without root) and checks:
#   - the exit status (8 for every refusal and usage error; 0 for -c, which
#     only warns);
#   - a message on stderr that names the object (the image, the loop
#     device, the path, the option) and what is wrong;
#   - the image (and the undo file's absence) byte for byte as before
#     (sha256), where a run that is not refused changes it (the control
#     case proves the check can see a change).
# Cases: a bad option, -c with -n, an empty --mode or a word it does not
# know, a bad -C, -t or --json, a path that does not exist (run, -n, -c),
# a damaged superblock magic, the errors flag (debugfs ssv state 2),
# needs_recovery, no journal without -z or -f; as root with loop devices:
# the image mounted (read-only, so that the kernel does not write either),
# by its file and by its loop device, a read-only loop device, and an
# image file made immutable (chattr +i: root can open a mode 0444 file for
# writing, not an immutable one).  Last, `make install` puts the man page
# in share/man/man8.
set -eu
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
need_cmd mke2fs debugfs sha256sum "$DEFRAG4FS"
make_tmpdir


mkdir -p "$T/src/d"
for i in 1 2 3; do
	head -c $((i * 40000)) /dev/urandom >"$T/src/d/f$i"
done
base=$T/base.img
mke2fs -q -F -t ext4 -d "$T/src" "$base" 8M >/dev/null 2>&1 || fail "mke2fs -d failed"

# fresh NAME: a copy of the base image, named NAME.img.
fresh() {
	cp "$base" "$T/$1.img"
	echo "$T/$1.img"
}

# expect NAME RC PATTERN IMG [ARG...]: run defrag4fs ARG...; want exit
# status RC, stderr matching the extended regex PATTERN, and IMG (a file)
# unchanged, with no undo file left behind.
expect() {
	local name=$1 want=$2 pattern=$3 img=$4 before rc=0
	shift 4
	before=$(sha256sum <"$img")
	"$DEFRAG4FS" "$@" >"$T/out" 2>"$T/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		failed "$name: exit status $rc, not $want; stderr: $(cat "$T/err")"
	elif ! grep -Eq -- "$pattern" "$T/err"; then
		failed "$name: stderr does not say /$pattern/: $(cat "$T/err")"
	fi
	[ "$(sha256sum <"$img")" = "$before" ] || failed "$name: the image changed"
	[ ! -e "$T/undo" ] || failed "$name: an undo file was made"
	rm -f "$T/undo"
}

img=$(fresh plain)
b=$(basename -- "$img")

# The control: a run that is not refused changes the image.
ctl=$(fresh control)
before=$(sha256sum <"$ctl")
"$DEFRAG4FS" "$ctl" >/dev/null 2>&1 || failed "control: defrag4fs on a sound image failed"
[ "$(sha256sum <"$ctl")" != "$before" ] || failed "control: a run left the image byte for byte as it was"

expect "bad option" 8 'Usage: defrag4fs' "$img" -Q "$img"
expect "no device" 8 'Usage: defrag4fs' "$img"
expect "-c with -n" 8 '-c and -n cannot be used together' "$img" -c -n "$img"
expect "--mode=" 8 '--mode needs at least one of file, dir, free' "$img" --mode= "$img"
expect "--mode=bogus" 8 "unknown mode 'bogus'" "$img" --mode=bogus "$img"
expect "-C 99" 8 'invalid completion fd 99' "$img" -C 99 "$img"
expect "-C x" 8 'invalid completion fd: x' "$img" -C x "$img"
expect "-t soon" 8 'invalid time limit.*soon' "$img" -t soon "$img"
expect "--json in a missing directory" 8 "No such file or directory while opening $T/nodir/x.json" \
	"$img" --json "$T/nodir/x.json" "$img"
expect "missing path" 8 "/no/such: no such file or directory in .*$b" "$img" "$img" /d/f1 /no/such
expect "missing path, -n" 8 "/no/such: no such file or directory" "$img" -n "$img" /no/such
expect "missing path, -c" 8 "d/nothing: no such file or directory" "$img" -c "$img" d/nothing
expect "not a directory" 8 "d/f1/x" "$img" "$img" d/f1/x
expect "missing image" 8 "$T/none.img: No such file or directory while trying to open" "$img" "$T/none.img"

img=$(fresh nomagic)
printf '\0\0' | dd of="$img" bs=1 seek=1080 conv=notrunc status=none
expect "bad magic" 8 "bad magic .* while trying to open .*nomagic.img" "$img" "$img"
expect "bad magic, -c" 8 "bad magic .* while trying to open .*nomagic.img" "$img" -c "$img"

img=$(fresh errors)
debugfs -w -R 'ssv state 2' "$img" >/dev/null 2>&1 || fail "debugfs ssv state 2 failed"
expect "errors flag" 8 "errors.img is marked as having errors: run e4fsck on it first" "$img" "$img"
expect "errors flag, -n" 8 "errors.img is marked as having errors: run e4fsck" "$img" -n "$img"
expect "errors flag, -c" 0 "warning: .*errors.img is marked as having errors" "$img" -c "$img"

img=$(fresh recover)
debugfs -w -R 'feature needs_recovery' "$img" >/dev/null 2>&1 || fail "debugfs feature needs_recovery failed"
expect "needs_recovery" 8 "recover.img needs journal recovery: run e4fsck on it first" "$img" "$img"
expect "needs_recovery, -z" 8 "recover.img needs journal recovery" "$img" -z "$T/undo" "$img"

img=$T/ext2.img
mke2fs -q -F -t ext2 -d "$T/src" "$img" 8M >/dev/null 2>&1 || fail "mke2fs -t ext2 failed"
expect "no journal" 8 "ext2.img has no journal: give an undo file \(-z FILE\).* or -f" "$img" "$img"

if have_root_loop; then
	need_cmd losetup
	img=$(fresh mounted)
	mkdir "$T/mnt"
	loop_mount "$img" "$T/mnt" ro || fail "cannot mount $img"
	dev=$(findmnt -n -o SOURCE --mountpoint "$T/mnt")
	expect "mounted image" 8 "mounted.img is mounted \(through $dev\); .*unmount it first" "$img" "$img"
	expect "mounted image, -n" 8 "mounted.img is mounted \(through $dev\)" "$img" -n "$img"
	expect "mounted image, -z" 8 "mounted.img is mounted" "$img" -z "$T/undo" "$img"
	expect "mounted device" 8 "$dev is mounted; .*unmount it first" "$img" "$dev"
	expect "mounted image, -c" 0 "warning: .*mounted.img is mounted" "$img" -c "$img"
	loop_umount "$T/mnt" || fail "cannot unmount $T/mnt"

	img=$(fresh rodev)
	rodev=$(losetup -r -f --show -- "$img") || fail "losetup -r failed"
	at_exit "losetup -d $rodev 2>/dev/null || true"
	# Linux lets a read-only loop device be opened for writing; the first write fails.
	expect "read-only loop device" 8 "$rodev: .*(Operation not permitted|Read-only file system|Permission denied)" \
		"$img" "$rodev"
	losetup -d "$rodev"

	img=$(fresh immutable)
	if chattr +i "$img" 2>/dev/null; then
		at_exit "chattr -i '$img' 2>/dev/null || true"
		expect "immutable image" 8 "immutable.img: Operation not permitted while trying to open .*immutable.img for writing" \
			"$img" "$img"
		chattr -i "$img"
	else
		note "chattr +i is not supported under $T: the immutable-image case is left out"
	fi
else
	note "$(root_loop_reason): the mounted, read-only device and immutable cases are left out"
fi

# The man page is installed with the tool.  Only from an up-to-date build:
# an install that relinks the tool would pull it from under the tests that
# run beside this one.
if ! make -q -C "$top_builddir/e4defrag" all >/dev/null 2>&1; then
	failed "$top_builddir/e4defrag is not up to date: build it before the tests"
elif make -s -C "$top_builddir/e4defrag" install DESTDIR="$T/inst" >"$T/install.log" 2>&1; then
	find "$T/inst" -path '*/share/man/man8/defrag4fs.8' | grep -q . ||
		failed "make install put no share/man/man8/defrag4fs.8 under $T/inst"
	find "$T/inst" -path '*/sbin/defrag4fs' | grep -q . || failed "make install put no sbin/defrag4fs"
else
	failed "make install failed: $(tail -n 5 "$T/install.log")"
fi

[ "$fails" = 0 ] || fail "$fails check(s) failed"
echo "ok"
