#!/bin/bash
# t0830-tool-undo-fault.sh - what the tools take from lib/support/fsopen.h:
# the -z undo file of e4fsck and debug4fs (judged by e2fsprogs' e2undo, which
# must give back the image byte for byte), and the EXT4FS_FAULT test hook
# (tests/README.md) of e4fsck, debug4fs and mke4fs: a malformed value is a
# clear error and a nonzero exit with nothing written, a count file says how
# many writes a run makes, and a stop at a write makes the tool fail.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs
need_cmd debugfs
need_cmd e2undo
need_cmd e2fsck
[ -x "$DEBUG4FS" ] || skip "debug4fs is not built ($DEBUG4FS)"
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
[ -x "$MKE4FS" ] || skip "mke4fs is not built ($MKE4FS)"
make_tmpdir
failed=0
bad() { echo "FAIL $*"; failed=1; }
ok() { echo "PASS $*"; }

mke2fs -q -F -t ext4 -E nodiscard "$T/base.img" 16M
dd if=/dev/urandom of="$T/base.img" bs=4096 seek=4095 count=1 conv=notrunc status=none

# debug4fs -w -z: a few changes, rolled back by e2undo.
cp "$T/base.img" "$T/d.img"
"$DEBUG4FS" -w -z "$T/d.undo" -f - "$T/d.img" >"$T/d.log" 2>&1 <<'CMDS'
mkdir a
mkdir a/b
write /etc/services a/services
symlink s /a/services
rm a/services
CMDS
if cmp -s "$T/d.img" "$T/base.img"; then
	bad "debug4fs -w -z changed nothing"
elif ! e2undo "$T/d.undo" "$T/d.img" >"$T/d.e2undo" 2>&1; then
	bad "e2undo refused debug4fs's undo file: $(cat "$T/d.e2undo")"
elif ! cmp -s "$T/d.img" "$T/base.img"; then
	bad "after e2undo the image differs from before debug4fs -w -z"
else
	ok "debug4fs -w -z: e2undo restores the image"
fi
# Read-only: no undo file is made.
"$DEBUG4FS" -z "$T/ro.undo" -R "ls" "$T/base.img" >/dev/null 2>&1 || true
[ ! -e "$T/ro.undo" ] || bad "debug4fs without -w made an undo file"

# e4fsck -fy -z: a repair, rolled back by e2undo; nothing saved with -n.
cp "$T/base.img" "$T/f.img"
debugfs -w -R "set_inode_field <2> links_count 9" "$T/f.img" >/dev/null 2>&1
cp "$T/f.img" "$T/f.damaged"
rc=0
"$E4FSCK" -fy -z "$T/f.undo" "$T/f.img" >"$T/f.log" 2>&1 || rc=$?
if [ $rc != 1 ]; then
	bad "e4fsck -fy -z exits $rc, not 1"; cat "$T/f.log"
elif ! e2fsck -fn "$T/f.img" >/dev/null 2>&1; then
	bad "e4fsck -fy -z did not repair"
elif ! e2undo "$T/f.undo" "$T/f.img" >"$T/f.e2undo" 2>&1; then
	bad "e2undo refused e4fsck's undo file: $(cat "$T/f.e2undo")"
elif ! cmp -s "$T/f.img" "$T/f.damaged"; then
	bad "after e2undo the image differs from before e4fsck -fy -z"
else
	ok "e4fsck -fy -z: e2undo restores the damaged image"
fi
"$E4FSCK" -fn -z "$T/n.undo" "$T/f.img" >/dev/null 2>&1 || true
[ ! -e "$T/n.undo" ] || bad "e4fsck -n made an undo file"

# The fault hook: a malformed spec is refused by name, before anything is written.
cp "$T/base.img" "$T/h.img"
for tool in debug4fs e4fsck mke4fs; do
	rc=0
	case $tool in
	debug4fs) EXT4FS_FAULT="write=x" "$DEBUG4FS" -w -R "mkdir z" "$T/h.img" >"$T/h.log" 2>&1 || rc=$? ;;
	e4fsck) EXT4FS_FAULT="write=x" "$E4FSCK" -fy "$T/h.img" >"$T/h.log" 2>&1 || rc=$? ;;
	mke4fs) EXT4FS_FAULT="write=x" "$MKE4FS" -q -F "$T/h.img" >"$T/h.log" 2>&1 || rc=$? ;;
	esac
	if [ $rc = 0 ] || ! grep -q 'EXT4FS_FAULT="write=x" is not a fault spec' "$T/h.log"; then
		bad "$tool with a malformed EXT4FS_FAULT: exit $rc, $(tail -n 2 "$T/h.log")"
	elif ! cmp -s "$T/h.img" "$T/base.img"; then
		bad "$tool with a malformed EXT4FS_FAULT changed the image"
	else
		ok "$tool refuses a malformed EXT4FS_FAULT"
	fi
done

# Counting, then a stop at a write in the middle: the tool fails.
for tool in debug4fs e4fsck mke4fs; do
	cp "$T/f.damaged" "$T/c.img"
	run_tool() {
		case $tool in
		debug4fs) "$DEBUG4FS" -w -R "mkdir z" "$T/c.img" ;;
		e4fsck) "$E4FSCK" -fy "$T/c.img" ;;
		mke4fs) "$MKE4FS" -q -F -t ext4 "$T/c.img" ;;
		esac
	}
	rm -f "$T/counts"
	EXT4FS_FAULT="count=$T/counts" run_tool >"$T/c.log" 2>&1 || true
	writes=$(sed -n 's/^writes=\([0-9]*\) .*/\1/p' "$T/counts" 2>/dev/null | head -n 1)
	if [ -z "$writes" ] || [ "$writes" -lt 2 ]; then
		bad "$tool: the count file says $(cat "$T/counts" 2>/dev/null || echo nothing)"
		continue
	fi
	cp "$T/f.damaged" "$T/c.img"
	rc=0
	EXT4FS_FAULT="write=$((writes / 2 + 1)),count=$T/counts2" run_tool >"$T/c.log" 2>&1 || rc=$?
	if [ $rc = 0 ] || { [ $rc = 1 ] && [ $tool = e4fsck ]; }; then
		bad "$tool stopped at write $((writes / 2 + 1)) of $writes exits $rc"; tail -n 3 "$T/c.log"
	elif ! grep -q "triggered=1" "$T/counts2"; then
		bad "$tool: the fault did not strike"
	else
		ok "$tool: $writes writes; stopped at write $((writes / 2 + 1)), it fails (exit $rc)"
	fi
done

[ $failed = 0 ] || fail "undo files or the fault hook misbehaved"
