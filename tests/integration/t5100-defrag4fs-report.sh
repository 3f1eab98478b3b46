#!/bin/bash
# t5100-defrag4fs-report.sh - defrag4fs -c judged by e2fsprogs and the
# kernel, on kernel-fragmented images (lib/defrag-images.sh: concurrent
# writers on ext4 4k and on ext3 1k, an aged tree on ext4 1k, shattered
# free space on ext4 4k):
#   - against the real `e4defrag -c` on a read-only loop mount of the same
#     image, for the whole device, a directory and a single file: "Total/best
#     extents", "Average size per extent", the score and the verdict must be
#     equal, and so must the list of the most fragmented files (names below
#     the mount point, now/best, size/ext, in order);
#   - the free-space part must be e2freefrag's output byte for byte;
#   - against tests/tools/layout-figures.py on the same mount: regular
#     files, directories with files, block groups per directory (mean and
#     max), directory-to-file distance, free extents and free blocks (not
#     extents or tree-read seeks: layout-figures.py splits a file at a hole
#     the disk continues across, frag.h does not, and walks the tree in
#     readdir order where ext4fs_frag_tree() takes the order on disk);
#   - --json must parse (python3) and carry the same figures as the text;
#   - -c, -c -v and --json must leave the image byte for byte as it was.
#
# T5100_CASES=REGEX runs only the cases that match (ext4-4k-concurrent,
# ext3-1k-concurrent, ext4-1k-aged, ext4-4k-shattered).
set -eu
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
need_cmd mke2fs e4defrag e2freefrag dumpe2fs python3 losetup "$DEFRAG4FS"
need_root_loop
make_tmpdir
# shellcheck source-path=SCRIPTDIR source=../lib/defrag-images.sh
. "$EXT4FS_TESTS_LIB/defrag-images.sh"

TOOLS=$top_srcdir/tests/tools
CASES=${T5100_CASES:-.}
mnt=$T/mnt
mkdir "$mnt"
mnt=$(cd "$mnt" && pwd)

# parse FILE [PREFIX]: e4defrag -c's figures in FILE as lines "total T/B",
# "avg KB", "score S", "verdict V" and "top NAME NOW/BEST SIZE" (NAME with
# PREFIX, the mount point, taken off), or "none" when it found no file.
parse() {
	python3 - "$1" "${2:-}" <<-'EOF'
		import re, sys
		text, prefix = open(sys.argv[1]).read().split("\n"), sys.argv[2]
		def name(n):
		    return n[len(prefix):] if prefix and n.startswith(prefix) else n
		out, i = [], 0
		while i < len(text):
		    line = text[i]
		    i += 1
		    if line.startswith("<Fragmented files>") or line.startswith("<File>"):
		        while i < len(text) and text[i].strip():
		            m = re.match(r"^(?:\d+\. )?(\S+)\s+(\d+)/(\d+)\s+(\d+) KB$", text[i])
		            if m:
		                i += 1
		            else:
		                m1 = re.match(r"^(?:\d+\. )?(\S+)$", text[i])
		                m2 = re.match(r"^\s+(\d+)/(\d+)\s+(\d+) KB$", text[i + 1] if i + 1 < len(text) else "")
		                if not (m1 and m2):
		                    sys.exit("cannot read the line %r" % text[i])
		                m = (None, m1.group(1)) + m2.groups()
		                m = dict(enumerate(m))
		                i += 2
		            g = m if isinstance(m, dict) else {k: m.group(k) for k in range(1, 5)}
		            out.append("top %s %s/%s %s" % (name(g[1]), g[2], g[3], g[4]))
		    m = re.match(r"^ Total/best extents\s+(\d+/\d+)$", line)
		    if m:
		        out.append("total " + m.group(1))
		    m = re.match(r"^ Average size per extent\s+(\d+) KB$", line)
		    if m:
		        out.append("avg " + m.group(1))
		    m = re.match(r"^ Fragmentation score\s+(\d+)$", line)
		    if m:
		        out.append("score " + m.group(1))
		    m = re.match(r"^ This \w+ \(.*\) (needs|does not need) defragmentation\.$", line)
		    if m:
		        out.append("verdict " + m.group(1))
		    if "none can be defragmented" in line or "can't be defragmented" in line:
		        out.append("none")
		print("\n".join(out))
	EOF
}

# compare NAME OURS THEIRS: e4defrag's figures equal, and there are some.
compare() {
	local name=$1
	parse "$2" >"$T/ours.p" || { failed "$name: cannot read defrag4fs's report"; return; }
	parse "$3" "$mnt" >"$T/theirs.p" || { failed "$name: cannot read e4defrag's report"; return; }
	grep -q '^total ' "$T/theirs.p" || { failed "$name: e4defrag -c gave no totals: $(cat "$3")"; return; }
	if ! diff -u "$T/theirs.p" "$T/ours.p" >"$T/p.diff"; then
		failed "$name: defrag4fs -c differs from e4defrag -c: $(cat "$T/p.diff")"
	fi
}

check_image() {
	local name=$1 img=$T/$1.img sum
	sum=$(sha256sum <"$img")

	# The oracles, from a read-only mount.
	loop_mount "$img" "$mnt" ro || { failed "$name: cannot mount"; return; }
	# A first run fills the kernel's extent cache: until then FIEMAP cuts a
	# block-mapped file's runs where a mapping block's range ends (frag.h).
	e4defrag -c "$mnt" >/dev/null 2>&1 || true
	e4defrag -c "$mnt" >"$T/e4.dev" 2>&1 || true
	e4defrag -c "$mnt/special" >"$T/e4.dir" 2>&1 || true
	e4defrag -c "$mnt/special/sparse" >"$T/e4.file" 2>&1 || true
	python3 "$TOOLS/layout-figures.py" "$mnt" --image "$img" --json >"$T/layout.json" ||
		{ failed "$name: layout-figures.py failed"; loop_umount "$mnt"; return; }
	loop_umount "$mnt" || fail "cannot unmount $mnt"
	e2freefrag "$img" >"$T/e2freefrag" 2>&1 || true

	"$DEFRAG4FS" -c "$img" >"$T/ours.dev" 2>"$T/err" || { failed "$name: defrag4fs -c: $(cat "$T/err")"; return; }
	"$DEFRAG4FS" -c "$img" /special >"$T/ours.dir" 2>"$T/err" || failed "$name: -c /special: $(cat "$T/err")"
	"$DEFRAG4FS" -c "$img" /special/sparse >"$T/ours.file" 2>"$T/err" ||
		failed "$name: -c /special/sparse: $(cat "$T/err")"
	"$DEFRAG4FS" -c -v "$img" >"$T/ours.v" 2>"$T/err" || failed "$name: defrag4fs -c -v: $(cat "$T/err")"
	"$DEFRAG4FS" -c --json "$T/ours.json" "$img" >/dev/null 2>"$T/err" ||
		failed "$name: defrag4fs -c --json: $(cat "$T/err")"
	[ "$(sha256sum <"$img")" = "$sum" ] || failed "$name: defrag4fs -c changed the image"

	compare "$name (device)" "$T/ours.dev" "$T/e4.dev"
	compare "$name (special/)" "$T/ours.dir" "$T/e4.dir"
	compare "$name (special/sparse)" "$T/ours.file" "$T/e4.file"
	# -v adds rows before the list; the list and the totals stay.
	parse "$T/ours.v" | grep -v '^top \[' >"$T/v.p" || true
	parse "$T/ours.dev" >"$T/dev.p" || true
	diff -q "$T/dev.p" "$T/v.p" >/dev/null || failed "$name: -c -v changes the list or the totals"
	[ "$(grep -c '^\[[0-9]*/[0-9]*\]' "$T/ours.v")" -gt 0 ] || failed "$name: -c -v printed no per-file rows"

	# e2freefrag's report, byte for byte.
	sed -n '/^Device: /,$p' "$T/ours.dev" >"$T/ours.free"
	diff -u "$T/e2freefrag" "$T/ours.free" >"$T/free.diff" ||
		failed "$name: the free-space report differs from e2freefrag: $(head -n 20 "$T/free.diff")"

	# The JSON document: the text's figures, and layout-figures.py's.
	python3 - "$T/ours.json" "$T/ours.dev" "$T/layout.json" <<-'EOF' || failed "$name: the JSON report"
		import json, re, sys
		doc = json.load(open(sys.argv[1]))
		text = open(sys.argv[2]).read()
		lay = json.load(open(sys.argv[3]))
		t = doc["targets"][0]
		f, e = t["figures"], t["figures"]["e4defrag"]
		bad = []
		def want(what, a, b):
		    if a != b:
		        bad.append("%s: JSON %r, expected %r" % (what, a, b))
		tot = re.search(r"Total/best extents\s+(\d+)/(\d+)", text)
		want("total_extents", e["total_extents"], int(tot.group(1)))
		want("best_extents", e["best_extents"], int(tot.group(2)))
		want("score_printed", e["score_printed"], int(re.search(r"Fragmentation score\s+(\d+)", text).group(1)))
		want("size_per_extent_kb", e["size_per_extent_kb"],
		     int(re.search(r"Average size per extent\s+(\d+) KB", text).group(1)))
		want("kind", t["kind"], "device")
		names = re.findall(r"^\d+\. (\S+)", text, re.M)
		want("fragmented_files", [x["path"] for x in t["fragmented_files"]], names)
		want("files", f["files"], lay["files"])
		want("dirs_with_files", f["dirs_with_files"], lay["dirs_with_files"])
		want("groups_per_dir_mean", round(f["groups_per_dir_mean"], 3), lay["groups_per_dir_mean"])
		want("groups_per_dir_max", f["groups_per_dir_max"], lay["groups_per_dir_max"])
		want("dir_file_distance_mean", round(f["dir_file_distance_mean"], 1), lay["dir_file_distance_mean"])
		want("free_extents", doc["free_space"]["free_extents"], lay["free_extents"])
		want("free_blocks", doc["free_space"]["free_blocks"], lay["free_blocks"])
		above = re.search(r"Files above their ideal extent count\s+(\d+)/(\d+)", text)
		want("files_above_ideal", f["files_above_ideal"], int(above.group(1)))
		want("tree seeks", f["tree_read"]["seek_blocks"],
		     int(re.search(r"Tree-read seek distance\s+(\d+) blocks", text).group(1)))
		if bad:
		    sys.exit("\n".join(bad))
	EOF
	note "$name: $(grep -E '^ (Total|Fragmentation score)' "$T/ours.dev" | tr -s '\t ' ' ' | tr '\n' ';')"
}

ran=0
for cfg in "ext4-4k-concurrent" "ext3-1k-concurrent" "ext4-1k-aged" "ext4-4k-shattered"; do
	[[ $cfg =~ $CASES ]] || continue
	ran=$((ran + 1))
	img=$T/$cfg.img
	case $cfg in
	ext4-4k-concurrent) defrag_img_concurrent "$img" 24 -g 2048 ;;
	ext3-1k-concurrent) defrag_img_concurrent "$img" 24 -t ext3 -b 1024 ;;
	ext4-1k-aged) defrag_img_aged_tree "$img" 24 300 -b 1024 ;;
	ext4-4k-shattered) defrag_img_shattered "$img" 24 -g 2048 ;;
	esac >"$T/build.log" || fail "$cfg: building the image failed"
	check_image "$cfg"
	rm -f "$img"
done
[ "$ran" -gt 0 ] || fail "T5100_CASES=$CASES matches no case"
[ "$fails" = 0 ] || fail "$fails check(s) failed"
echo "ok"
