#!/bin/bash
# t5110-defrag4fs-file.sh - defrag4fs --mode=file (single-file) on
# kernel-fragmented images (lib/defrag-images.sh: concurrent writers on
# ext4 4k and on ext3 1k, an aged tree on ext4 1k, shattered free space on
# ext4 4k), judged by e2fsprogs and the kernel:
#   - -n writes nothing (sha256) and names as many files to move, and as
#     many bytes, as the run then moves (it rehearses the run in memory);
#   - the run: exit status 0, or 1 with each file left above its ideal
#     named; the real `e2fsck -fn` finds the result clean; a manifest taken
#     on a read-only mount (tools/manifest.py: every object's bytes,
#     metadata, times, xattrs, flags and logical map) equals the one taken
#     before, with nothing ignored; the extents (frag.h's count) do not
#     grow and, on the concurrent images, fall; e4defrag -c on the result
#     gives the score and totals the run says it left;
#   - --json parses and agrees with the summary (moves, bytes, the figures
#     after);
#   - paths given: only files under them move (every move's path in the
#     JSON is below the path);
#   - -t 0 stops before the first file, says so, exits 0, moves nothing;
#   - on a file system without a journal, -z FILE: e2undo FILE puts the
#     image back byte for byte.
#
# T5110_CASES=REGEX runs only the cases that match.
set -eu
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
need_cmd mke2fs e2fsck e4defrag e2undo tune2fs python3 losetup "$DEFRAG4FS"
need_root_loop
make_tmpdir
# shellcheck source-path=SCRIPTDIR source=../lib/defrag-images.sh
. "$EXT4FS_TESTS_LIB/defrag-images.sh"

TOOLS=$top_srcdir/tests/tools
CASES=${T5110_CASES:-.}
mnt=$T/mnt
mkdir "$mnt"

# summary FILE KEY: a number from defrag4fs's summary lines.
summary() {
	sed -n "s/^ $2[[:space:]]*\\([0-9/-]*\\).*/\\1/p" "$1" | head -n 1
}

check_image() {
	local name=$1 kind=$2 img=$T/$1.img sum rc=0 planned moved
	sum=$(sha256sum <"$img")
	defrag_manifest "$img" "$T/m1"

	"$DEFRAG4FS" --mode=file -n "$img" >"$T/plan" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || failed "$name: -n exited $rc: $(cat "$T/err")"
	[ "$(sha256sum <"$img")" = "$sum" ] || failed "$name: -n changed the image"
	planned=$(summary "$T/plan" "Files to move")

	rc=0
	"$DEFRAG4FS" --mode=file --json "$T/run.json" "$img" >"$T/run" 2>"$T/err" || rc=$?
	moved=$(summary "$T/run" "Files moved")
	note "$name: exit $rc; planned $planned, moved $moved; extents $(summary "$T/run" "Extents before\/after"); score $(summary "$T/run" "Fragmentation score before\/after")"
	case $rc in
	0) ! grep -q '^Files left above' "$T/run" || failed "$name: exit 0 but files are named as left above their ideal" ;;
	1) grep -q '^  .*: [0-9]* extents, ideal [0-9]*: ' "$T/run" || failed "$name: exit 1 names no file left" ;;
	*) failed "$name: the run exited $rc: $(cat "$T/err")"; return ;;
	esac
	[ -n "$moved" ] && [ "$planned" = "$moved" ] || failed "$name: -n planned $planned moves, the run made $moved"
	[ "$(summary "$T/plan" "Bytes to move")" = "$(summary "$T/run" "Bytes moved")" ] ||
		failed "$name: -n planned $(summary "$T/plan" "Bytes to move") bytes, the run moved $(summary "$T/run" "Bytes moved")"
	if ! e2fsck -fn "$img" >"$T/fsck" 2>&1; then
		failed "$name: e2fsck -fn does not find the result clean: $(head -n 20 "$T/fsck")"
	fi
	defrag_manifest "$img" "$T/m2"
	python3 "$TOOLS/manifest.py" compare "$T/m1" "$T/m2" >"$T/mdiff" ||
		failed "$name: the files changed: $(head -n 20 "$T/mdiff")"

	loop_mount "$img" "$mnt" ro || fail "cannot mount $img"
	e4defrag -c "$mnt" >/dev/null 2>&1 || true   # fills the kernel's extent cache (see t5100)
	e4defrag -c "$mnt" >"$T/e4" 2>&1 || true
	loop_umount "$mnt" || fail "cannot unmount $mnt"

	python3 - "$T/run.json" "$T/run" "$T/e4" "$kind" "$rc" <<-'EOF' || failed "$name: the run's figures"
		import json, re, sys
		doc = json.load(open(sys.argv[1]))
		text, e4 = open(sys.argv[2]).read(), open(sys.argv[3]).read()
		kind, rc = sys.argv[4], int(sys.argv[5])
		bad = []
		def want(what, a, b):
		    if a != b:
		        bad.append("%s: %r, expected %r" % (what, a, b))
		t = doc["totals"]
		want("files moved", t["files_moved"], int(re.search(r"Files moved\s+(\d+)", text).group(1)))
		want("moves listed", len(doc["moves"]), t["files_moved"])
		want("bytes moved", t["bytes_moved"], int(re.search(r"Bytes moved\s+(\d+)", text).group(1)))
		want("exit_status", doc["exit_status"], rc)
		want("safety", doc["safety"], "journal")
		b, a = doc["before"], doc["after"]
		if a["extents"] > b["extents"]:
		    bad.append("extents grew: %d -> %d" % (b["extents"], a["extents"]))
		if kind == "concurrent" and not a["extents"] < b["extents"]:
		    bad.append("the writers' files were not defragmented: %d -> %d extents" % (b["extents"], a["extents"]))
		if kind == "concurrent" and not t["files_moved"]:
		    bad.append("nothing moved")
		tot = re.search(r"Total/best extents\s+(\d+)/(\d+)", e4)
		sc = re.search(r"Fragmentation score\s+(\d+)", e4)
		if not tot or not sc:
		    bad.append("e4defrag -c gave no figures: " + e4)
		else:
		    want("e4defrag total after", a["e4defrag"]["total_extents"], int(tot.group(1)))
		    want("e4defrag best after", a["e4defrag"]["best_extents"], int(tot.group(2)))
		    want("e4defrag score after", a["e4defrag"]["score_printed"], int(sc.group(1)))
		for l in doc["left"]:
		    above = l["extents"] > l["ideal"] and l["reason"] != "already in its fewest extents"
		    want("above_ideal of %r" % l, l["above_ideal"], above)
		left = [l for l in doc["left"] if l["above_ideal"]]
		want("exit status for the files left", rc, 1 if left else 0)
		want("files left above ideal", len(left), t["files_left_above_ideal"])
		for l in left:
		    line = "%s%s: %d extents, ideal %d: %s" % (l["path"] or "<%d>" % l["ino"],
		                                               " (<%d>)" % l["ino"] if l["path"] else "",
		                                               l["extents"], l["ideal"], l["reason"])
		    if "  " + line + "\n" not in text:
		        bad.append("left file not named in the text as %r" % line)
		if bad:
		    sys.exit("\n".join(bad))
	EOF
}

# check_paths NAME IMG: with a path, only files under it move.
check_paths() {
	local name=$1 img=$2 rc=0
	"$DEFRAG4FS" --mode=file -v --json "$T/p.json" "$img" /writers/ >"$T/p.out" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || { failed "$name: with a path: exit $rc: $(cat "$T/err")"; return; }
	python3 - "$T/p.json" "$T/p.out" <<-'EOF' || failed "$name: with a path"
		import json, sys
		doc = json.load(open(sys.argv[1]))
		text = open(sys.argv[2]).read()
		if not doc["moves"]:
		    sys.exit("nothing moved under /writers/")
		for m in doc["moves"]:
		    if not (m["path"] or "").startswith("/writers/"):
		        sys.exit("a file outside /writers/ moved: %r" % m)
		    if "%s: %d extents -> %d," % (m["path"], m["extents_before"], m["extents_after"]) not in text:
		        sys.exit("-v does not name the move of %s" % m["path"])
	EOF
	e2fsck -fn "$img" >"$T/fsck" 2>&1 || failed "$name: e2fsck -fn after a run with a path: $(head "$T/fsck")"
}

ran=0
for cfg in "ext4-4k-concurrent" "ext3-1k-concurrent" "ext4-1k-aged" "ext4-4k-shattered"; do
	[[ $cfg =~ $CASES ]] || continue
	ran=$((ran + 1))
	img=$T/$cfg.img
	kind=${cfg##*-}
	case $cfg in
	ext4-4k-concurrent) defrag_img_concurrent "$img" 24 -g 2048 ;;
	ext3-1k-concurrent) defrag_img_concurrent "$img" 24 -t ext3 -b 1024 ;;
	ext4-1k-aged) defrag_img_aged_tree "$img" 24 300 -b 1024 ;;
	ext4-4k-shattered) defrag_img_shattered "$img" 24 -g 2048 ;;
	esac >"$T/build.log" || fail "$cfg: building the image failed"
	cp "$img" "$T/orig.img"
	check_image "$cfg" "$kind"

	if [ "$kind" = concurrent ]; then
		cp "$T/orig.img" "$img"
		check_paths "$cfg" "$img"

		# -t 0: stops before the first file.
		cp "$T/orig.img" "$img"
		rc=0
		"$DEFRAG4FS" --mode=file -t 0 "$img" >"$T/t0" 2>"$T/err" || rc=$?
		[ "$rc" = 0 ] || failed "$cfg: -t 0 exited $rc: $(cat "$T/err")"
		grep -q '^Stopped early: the time limit of 0 s was reached after 0 of' "$T/t0" ||
			failed "$cfg: -t 0 does not say it stopped early: $(cat "$T/t0")"
		[ "$(summary "$T/t0" "Files moved")" = 0 ] || failed "$cfg: -t 0 moved files"

		# Without a journal: an undo file, and e2undo puts everything back.
		cp "$T/orig.img" "$img"
		tune2fs -O ^has_journal "$img" >/dev/null 2>&1 || fail "tune2fs -O ^has_journal failed"
		cp "$img" "$T/nojournal.img"
		rm -f "$T/undo"
		rc=0
		"$DEFRAG4FS" --mode=file -z "$T/undo" "$img" >"$T/z" 2>"$T/err" || rc=$?
		[ "$rc" = 0 ] || [ "$rc" = 1 ] || failed "$cfg: -z exited $rc: $(cat "$T/err")"
		[ "$(summary "$T/z" "Files moved")" -gt 0 ] || failed "$cfg: -z moved nothing"
		e2fsck -fn "$img" >"$T/fsck" 2>&1 || failed "$cfg: e2fsck -fn after -z: $(head "$T/fsck")"
		e2undo "$T/undo" "$img" >"$T/e2undo" 2>&1 || failed "$cfg: e2undo failed: $(cat "$T/e2undo")"
		cmp -s "$img" "$T/nojournal.img" || failed "$cfg: e2undo did not put the image back"
	fi
	rm -f "$img" "$T/orig.img" "$T/nojournal.img"
done
[ "$ran" -gt 0 ] || fail "T5110_CASES=$CASES matches no case"
[ "$fails" = 0 ] || fail "$fails check(s) failed"
echo "ok"
