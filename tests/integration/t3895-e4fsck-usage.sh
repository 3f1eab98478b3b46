#!/bin/bash
# t3895-e4fsck-usage.sh - e4fsck's command line and bad input: usage errors
# exit 16, --help and -V exit 0, an image that is not a file system or does
# not exist exits 8 with a message naming it, interactive mode without a
# terminal exits 8, -E takes e2fsck's journal_only, discard, fixes_only and
# (no_)optimize_extents, bigalloc is checked with -n but refused a repairing run, quota usage said
# unchecked, --json writes a document that parses, and (as root) a
# mounted file system is refused without a byte changing, while -n checks
# it with a warning, and an orphan file with entries is finished as e2fsck does.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir

failed=0
expect() {   # expect NAME STATUS PATTERN CMD...: exit status and a line matching PATTERN
	local name=$1 want=$2 pattern=$3 rc=0
	shift 3
	"$@" >"$T/out" 2>&1 </dev/null || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, want $want"; sed 's/^/    /' "$T/out" | head -n 10; failed=1
	elif [ -n "$pattern" ] && ! grep -q -e "$pattern" "$T/out"; then
		echo "FAIL $name: no line matching '$pattern'"; sed 's/^/    /' "$T/out" | head -n 10; failed=1
	else
		echo "PASS $name"
	fi
}

img="$T/fs.img"
mke2fs -q -F -t ext4 "$img" 16M >/dev/null 2>&1
head -c 1048576 /dev/zero >"$T/zeros.img"

expect "--help" 0 "Emergency help" "$E4FSCK" --help
expect "-V" 0 "Using libext4fs" "$E4FSCK" -V
expect "-n with -y (exit 8, as e2fsck)" 8 "Only one of the options -p/-a, -n or -y" "$E4FSCK" -n -y "$img"
expect "no device" 16 "Usage:" "$E4FSCK" -n
expect "unknown option" 16 "Usage:" "$E4FSCK" -Q "$img"
expect "bad -m" 16 "Invalid number of threads" "$E4FSCK" -n -m 0 "$img"
expect "bad -B with -b" 8 "Invalid blocksize" "$E4FSCK" -n -b 8193 -B 3000 "$img"
expect "missing image" 8 "No such file" "$E4FSCK" -fn "$T/none.img"
expect "not a file system" 8 "superblock" "$E4FSCK" -fn "$T/zeros.img"
expect "interactive without a terminal" 8 "need terminal" "$E4FSCK" -f "$img"
expect "clean without -f" 0 "clean, 11/" "$E4FSCK" -n "$img"
# Features e4fsck cannot judge are said so, never misjudged: bigalloc is checked and
# repaired (t3933, t3939 judge it); the quota feature's files are checked (t3975 judges them);
# mmp's block is metadata, not a free block.
rm -f "$T/feat.img"; mke2fs -q -F -t ext4 -O bigalloc "$T/feat.img" 64M >/dev/null 2>&1
expect "bigalloc checked with -n" 0 "files (" "$E4FSCK" -fn "$T/feat.img"
expect "bigalloc: repairs allowed" 0 "files (" "$E4FSCK" -fy "$T/feat.img"
rm -f "$T/feat.img"; mke2fs -q -F -t ext4 -O quota "$T/feat.img" 64M >/dev/null 2>&1
expect "quota: checked without a warning" 0 "files (" "$E4FSCK" -fn "$T/feat.img"
if grep -q "quota usage" "$T/out"; then
	echo "FAIL quota: a warning about quota usage"; failed=1
fi
expect "quota: repairs allowed" 0 "files (" "$E4FSCK" -fy "$T/feat.img"
rm -f "$T/feat.img"; mke2fs -q -F -t ext4 -O mmp "$T/feat.img" 64M >/dev/null 2>&1
expect "mmp block claimed" 0 "files (" "$E4FSCK" -fn "$T/feat.img"
# -E, with e2fsck's option names and its answers to a wrong one.
expect "-E unknown option (exit 1, as e2fsck)" 1 "Valid extended options are" "$E4FSCK" -n -E nonsense "$img"
expect "-E fixes_only with -D" 8 "The -D and -E fixes_only options are incompatible" "$E4FSCK" -fy -D -E fixes_only "$img"
cp "$img" "$T/jo.img"
expect "-E journal_only without -f: nothing but the journal" 0 "" "$E4FSCK" -y -E journal_only "$T/jo.img"
if grep -q "clean," "$T/out"; then
	echo "FAIL -E journal_only printed the summary"; failed=1
fi
expect "-E journal_only with -f: the whole check" 0 "files (" "$E4FSCK" -fy -E journal_only "$T/jo.img"
# -E discard: the free blocks of a file system without faults become holes in the image.
cp "$img" "$T/dc.img"
head -c 4000000 /dev/urandom >"$T/junk"
debugfs -w -R "write $T/junk junk" "$T/dc.img" >/dev/null 2>&1
debugfs -w -R "rm junk" "$T/dc.img" >/dev/null 2>&1
before=$(du -k "$T/dc.img" | cut -f1)
expect "-E discard" 0 "files (" "$E4FSCK" -fy -E discard "$T/dc.img"
after=$(du -k "$T/dc.img" | cut -f1)
if [ "$after" -ge $((before - 3000)) ]; then
	echo "FAIL -E discard: the image holds ${after} KiB, ${before} KiB before"; failed=1
elif ! e2fsck -fn "$T/dc.img" >/dev/null 2>&1; then
	echo "FAIL -E discard: e2fsck -fn is not clean afterwards"; failed=1
else
	echo "PASS -E discard: ${before} KiB to ${after} KiB, clean"
fi
backup=$(dumpe2fs "$img" 2>/dev/null | sed -n 's/.*Backup superblock at \([0-9]*\).*/\1/p' | head -n 1)
bsize=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
# Read-only on a backup, the descriptors lose their uninit flags and pass 5 finds the
# untouched groups' bitmaps wanting, as e2fsck -fn -b does: exit 4 from both.
want=0; e2fsck -fn -b "$backup" -B "$bsize" "$img" >/dev/null 2>&1 || want=$?
expect "backup superblock (-b $backup -B $bsize)" "$want" "files (" "$E4FSCK" -fn -b "$backup" -B "$bsize" "$img"

# --json: a document with the problems found and the passes' timings.
if command -v python3 >/dev/null 2>&1; then
	cp "$img" "$T/json.img"
	debugfs -w -R "set_bg 0 free_blocks_count 1" "$T/json.img" >/dev/null 2>&1 || true
	rc=0; "$E4FSCK" -fn --json "$T/out.json" "$T/json.img" >/dev/null 2>&1 || rc=$?
	if python3 - "$T/out.json" <<-'EOF'
		import json, sys
		d = json.load(open(sys.argv[1]))
		assert d["exit_status"] == 4, d["exit_status"]
		ids = [p["id"] for p in d["problems"]]
		assert "PR_5_FREE_BLOCK_COUNT_GROUP" in ids, ids
		assert [p["name"].split(":")[0] for p in d["passes"]] == ["Pass %d" % i for i in range(1, 6)]
	EOF
	then echo "PASS --json (exit $rc)"; else echo "FAIL --json"; cat "$T/out.json" | head -n 20; failed=1; fi
else
	echo "SKIP --json: python3 is missing"
fi

if [ "$(root_loop_reason)" = yes ]; then
	mkdir -p "$T/mnt"
	loop_mount "$img" "$T/mnt"
	sync
	before=$(md5sum <"$img")
	expect "mounted, -fy refused" 8 "is mounted" "$E4FSCK" -fy "$img"
	expect "mounted, -n warns and checks" 0 "Warning!.*is mounted" "$E4FSCK" -fn "$img"
	# An idle mount writes nothing, so any change would be e4fsck's.
	if [ "$(md5sum <"$img")" != "$before" ]; then
		echo "FAIL mounted: the image changed"; failed=1
	fi
	loop_umount "$T/mnt"

	# An orphan file with entries (a deleted file held open at the copy) is
	# finished as e2fsck finishes it (t3950 compares the details).
	of="$T/of.img"
	mke2fs -q -F -t ext4 -O orphan_file "$of" 64M >/dev/null 2>&1
	loop_mount "$of" "$T/mnt"
	head -c 100000 /dev/urandom >"$T/mnt/x"
	sync
	exec 3<"$T/mnt/x"
	rm "$T/mnt/x"
	sync
	cp --sparse=always "$of" "$T/of-copy.img"
	exec 3<&-
	loop_umount "$T/mnt"
	if dumpe2fs -h "$T/of-copy.img" 2>/dev/null | grep -q orphan_present; then
		cp "$T/of-copy.img" "$T/of-ref.img"
		want=0; e2fsck -fy "$T/of-ref.img" >/dev/null 2>&1 || want=$?
		expect "orphan file with entries finished" "$want" "Clearing orphaned inode" "$E4FSCK" -fy "$T/of-copy.img"
	else
		echo "SKIP orphan file: the copy has no orphan_present flag"
	fi
else
	echo "SKIP mounted file system and orphan file: $(root_loop_reason)"
fi

[ $failed = 0 ] || fail "e4fsck's command line or bad-input handling is wrong"
