#!/bin/bash
# t5130-defrag4fs-layout.sh - defrag4fs's dir and free modes (the default
# runs all three) on kernel-fragmented images (lib/defrag-images.sh: an
# aged tree on ext4 4k and on ext3 1k, block-mapped; shattered free space
# with a large file on ext4 4k; concurrent writers on ext4 1k), judged by
# e2fsprogs and the kernel:
#   - the run exits 0 or 1; the real `e2fsck -fn` finds the result clean;
#     a manifest taken on a read-only mount (tools/manifest.py: bytes,
#     metadata, times, xattrs, flags, logical maps) equals the one before,
#     with nothing ignored;
#   - the layout improved, by tools/layout-figures.py (FIEMAP, e2freefrag)
#     before and after: on the aged trees a directory's files in at most
#     1.5 block groups on average and the tree read with a fifth of the
#     seeks or less; on the shattered image the large file in at most 8
#     extents (from hundreds: the journal, backup superblocks and the files
#     that must stay split it) and the free space in at most 10 extents;
#     everywhere, no file above its ideal that was not before it, and fewer
#     free extents;
#   - -n -v first: the image is unchanged (sha256), every member is named
#     by its path (none by its inode number), and its JSON equals the
#     run's (every move, the files left, the totals but the time, the
#     layout pass, the figures after, the exit status);
#   - a second run moves nothing (its JSON says 0 blocks moved);
#   - --mode=free alone (compaction) on the aged tree: the free extents
#     fall, the manifest holds, and a second run moves nothing;
#   - --mode=file,free on the shattered image (file mode, compaction, then
#     room made for the files still fragmented): the same checks but the
#     fall of free extents (file mode splits the free runs it fills, and
#     on a 92% full volume compaction cannot gather them all again);
#   - a fresh copy (cp -a of an aged tree into a new file system through
#     the kernel): e2fsck is clean, the manifest holds, groups per
#     directory and free extents do not grow, and a second run moves
#     nothing (the directories the first left as they were stay so);
#   - a volume with no free block left (two files appended in turns until
#     the kernel says ENOSPC): the run finishes (exit 0 or 1, never a
#     crash or an error), e2fsck finds it clean and the manifest holds.
#
# T5130_CASES=REGEX runs only the cases that match.
set -eu
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"
need_cmd mke2fs e2fsck e2freefrag python3 losetup "$DEFRAG4FS"
need_root_loop
make_tmpdir
# shellcheck source-path=SCRIPTDIR source=../lib/defrag-images.sh
. "$EXT4FS_TESTS_LIB/defrag-images.sh"

TOOLS=$top_srcdir/tests/tools
CASES=${T5130_CASES:-.}
mnt=$T/mnt
mkdir "$mnt"

# observe IMG NAME: manifest and layout figures from a read-only mount.
observe() {
	loop_mount "$1" "$mnt" ro || fail "cannot mount $1"
	python3 "$TOOLS/manifest.py" take "$mnt" >"$T/$2.man" || fail "manifest.py take failed on $1"
	python3 "$TOOLS/layout-figures.py" "$mnt" --image "$1" --json >"$T/$2.fig" ||
		fail "layout-figures.py failed on $1"
	loop_umount "$mnt" || fail "cannot unmount $mnt"
}

# moved JSON: the blocks a run moved.
moved() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["totals"]["blocks_moved"])' "$1"
}

# same_as_plan PLAN RUN: -n's JSON and the run's agree on every move, the
# totals (time aside), the layout pass, the figures after and the exit status.
same_as_plan() {
	python3 - "$1" "$2" <<-'EOF'
		import json, sys
		p, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
		for d in (p, r):
		    d["totals"].pop("seconds")
		bad = [k for k in ("moves", "left", "totals", "layout", "after", "exit_status") if p[k] != r[k]]
		if not p["dry_run"] or r["dry_run"]:
		    bad.append("dry_run")
		for k in bad:
		    print("%s: planned %s, run %s" % (k, json.dumps(p[k])[:300], json.dumps(r[k])[:300]))
		sys.exit(1 if bad else 0)
	EOF
}

# run_case NAME KIND MODE: defrag4fs (MODE: "" for the default, else a --mode list) and the checks.
run_case() {
	local name=$1 kind=$2 mode=$3 img=$T/$1.img rc=0 args=() sum
	[ -z "$mode" ] || args=(--mode="$mode")
	observe "$img" before
	sum=$(sha256sum <"$img")
	"$DEFRAG4FS" "${args[@]}" -n -v --json "$T/plan.json" "$img" >"$T/plan" 2>"$T/err" || rc=$?
	[ "$rc" -le 1 ] || failed "$name: -n exited $rc: $(cat "$T/err")"
	[ "$(sha256sum <"$img")" = "$sum" ] || failed "$name: -n changed the image"
	! grep -q '^<[0-9]*>: ' "$T/plan" || failed "$name: -v names files by number: $(grep -m 3 '^<' "$T/plan")"
	grep -Eq '^/[^:]*: would be (laid out|moved down), [0-9]+ KiB to move$' "$T/plan" ||
		failed "$name: -v names no file it would move: $(head -n 5 "$T/plan")"
	rc=0
	"$DEFRAG4FS" "${args[@]}" --json "$T/run1.json" "$img" >"$T/run1" 2>"$T/err" || rc=$?
	same_as_plan "$T/plan.json" "$T/run1.json" || failed "$name: the run did not do what -n planned"
	case $rc in
	0 | 1) ;;
	*) failed "$name: defrag4fs exited $rc: $(cat "$T/err")"; return ;;
	esac
	if ! e2fsck -fn "$img" >"$T/fsck" 2>&1; then
		failed "$name: e2fsck -fn does not find the result clean: $(head -n 20 "$T/fsck")"
	fi
	observe "$img" after
	python3 "$TOOLS/manifest.py" compare "$T/before.man" "$T/after.man" >"$T/mdiff" ||
		failed "$name: the files changed: $(head -n 20 "$T/mdiff")"
	python3 - "$T/before.fig" "$T/after.fig" "$kind" "${mode:-all}" <<-'EOF' || failed "$name: the layout"
		import json, sys
		b, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
		kind, mode = sys.argv[3], sys.argv[4]
		print("%s %s: " % (kind, mode) + ", ".join("%s %s -> %s" % (k, b[k], a[k]) for k in
		      ("files_above_ideal", "groups_per_dir_mean", "tree_read_seek_blocks", "free_extents",
		       "largest_file_extents")))
		bad = []
		# File mode first fills free runs, splitting them; on a 92% full volume compaction cannot
		# gather them all again, so with file,free the free extents are not held to falling.
		if not a["free_extents"] < b["free_extents"] and mode != "file,free":
		    bad.append("free extents did not fall")
		if a["files_above_ideal"] > b["files_above_ideal"]:
		    bad.append("more files above their ideal")
		if mode == "all" and kind == "aged":
		    if a["groups_per_dir_mean"] > 1.5:
		        bad.append("a directory's files in %.2f groups" % a["groups_per_dir_mean"])
		    if a["tree_read_seek_blocks"] * 5 > b["tree_read_seek_blocks"]:
		        bad.append("tree-read seeks only %d -> %d" % (b["tree_read_seek_blocks"], a["tree_read_seek_blocks"]))
		if mode == "all" and kind == "shattered":
		    if a["largest_file_extents"] > 8:
		        bad.append("the large file in %d extents" % a["largest_file_extents"])
		    if a["free_extents"] > 10:
		        bad.append("%d free extents" % a["free_extents"])
		if bad:
		    sys.exit("\n".join(bad))
	EOF
	rc=0
	"$DEFRAG4FS" "${args[@]}" --json "$T/run2.json" "$img" >"$T/run2" 2>"$T/err" || rc=$?
	[ "$rc" -le 1 ] || failed "$name: the second run exited $rc: $(cat "$T/err")"
	[ "$(moved "$T/run2.json")" = 0 ] || failed "$name: a second run moved $(moved "$T/run2.json") blocks"
	note "$name: first run moved $(moved "$T/run1.json") blocks; a second run $(moved "$T/run2.json")"
}

case_on() {
	local name=$1 kind=$2 mode=$3
	shift 3
	echo "$name" | grep -Eq -- "$CASES" || return 0
	case $kind in
	aged) defrag_img_aged_tree "$T/$name.img" 48 1500 "$@" >/dev/null ;;
	shattered) defrag_img_shattered "$T/$name.img" 48 "$@" >/dev/null ;;
	concurrent) defrag_img_concurrent "$T/$name.img" 48 "$@" >/dev/null ;;
	esac || fail "$name: building the image failed"
	run_case "$name" "$kind" "$mode"
}

case_on ext4-4k-aged aged "" -g 2048
case_on ext3-1k-aged aged "" -t ext3 -b 1024
case_on ext4-4k-shattered shattered "" -g 2048
case_on ext4-1k-concurrent concurrent "" -b 1024
case_on ext4-4k-aged-free aged free -g 2048
case_on ext4-4k-shattered-room shattered file,free -g 2048

# A fresh copy (the kernel's own layout of a tree just copied).
if echo ext4-fresh-copy | grep -Eq -- "$CASES"; then
	defrag_img_aged_tree "$T/src.img" 48 1500 -g 2048 >/dev/null || fail "fresh copy: building the source failed"
	mke2fs -q -F -t ext4 -E nodiscard "$T/fresh.img" 48M || fail "mke2fs for the fresh copy failed"
	mkdir "$T/src"
	loop_mount "$T/src.img" "$T/src" ro || fail "cannot mount the source"
	loop_mount "$T/fresh.img" "$mnt" || fail "cannot mount the fresh copy"
	cp -a "$T/src/." "$mnt/" || fail "cp -a failed"
	loop_umount "$mnt" || fail "cannot unmount the fresh copy"
	loop_umount "$T/src" || fail "cannot unmount the source"
	observe "$T/fresh.img" before
	rc=0
	"$DEFRAG4FS" --json "$T/fresh.json" "$T/fresh.img" >"$T/fresh.out" 2>"$T/err" || rc=$?
	[ "$rc" -le 1 ] || failed "ext4-fresh-copy: defrag4fs exited $rc: $(cat "$T/err")"
	e2fsck -fn "$T/fresh.img" >"$T/fsck" 2>&1 || failed "ext4-fresh-copy: e2fsck -fn: $(head -n 15 "$T/fsck")"
	observe "$T/fresh.img" after
	python3 "$TOOLS/manifest.py" compare "$T/before.man" "$T/after.man" >"$T/mdiff" ||
		failed "ext4-fresh-copy: the files changed: $(head -n 10 "$T/mdiff")"
	rc=0
	"$DEFRAG4FS" --json "$T/fresh2.json" "$T/fresh.img" >"$T/fresh2.out" 2>"$T/err" || rc=$?
	[ "$rc" -le 1 ] || failed "ext4-fresh-copy: the second run exited $rc: $(cat "$T/err")"
	[ "$(moved "$T/fresh2.json")" = 0 ] || failed "ext4-fresh-copy: a second run moved $(moved "$T/fresh2.json") blocks"
	python3 - "$T/fresh.json" "$T/before.fig" "$T/after.fig" <<-'EOF' || failed "ext4-fresh-copy: the layout"
		import json, sys
		r, b, a = (json.load(open(p)) for p in sys.argv[1:])
		moved, settled = r["totals"]["bytes_moved"], r["layout"]["directories_settled"]
		total = r["before"]["blocks"] * r["block_size"]
		print("fresh copy: %d bytes moved of %d, %d directories left as they were; groups per dir %s -> %s;"
		      " free extents %s -> %s" % (moved, total, settled, b["groups_per_dir_mean"], a["groups_per_dir_mean"],
		      b["free_extents"], a["free_extents"]))
		bad = []
		if a["groups_per_dir_mean"] > max(1.5, b["groups_per_dir_mean"]):
		    bad.append("groups per directory grew")
		if a["free_extents"] > max(10, 2 * b["free_extents"]):
		    bad.append("the free space is more fragmented")
		sys.exit("\n".join(bad) if bad else 0)
	EOF
fi

# A full volume: nothing can move, and nothing may break.
if echo ext4-full | grep -Eq -- "$CASES"; then
	mke2fs -q -F -t ext4 -b 1024 -N 64 -E nodiscard "$T/full.img" 8M || fail "mke2fs for the full volume failed"
	loop_mount "$T/full.img" "$mnt" || fail "cannot mount the full volume"
	python3 - "$mnt" <<-'EOF' || fail "filling the volume failed"
		import errno, os, sys
		fds = [os.open(os.path.join(sys.argv[1], n), os.O_WRONLY | os.O_CREAT, 0o644) for n in ("a", "b")]
		chunk, i = bytes(range(256)) * 16, 0
		try:
		    while True:
		        os.write(fds[i % 2], chunk)
		        os.fsync(fds[i % 2])
		        i += 1
		except OSError as e:
		    if e.errno != errno.ENOSPC:
		        raise
	EOF
	loop_umount "$mnt" || fail "cannot unmount the full volume"
	observe "$T/full.img" before
	free=$(dumpe2fs -h "$T/full.img" 2>/dev/null | sed -n 's/^Free blocks: *//p')
	rc=0
	"$DEFRAG4FS" "$T/full.img" >"$T/full.out" 2>"$T/err" || rc=$?
	[ "$rc" -le 1 ] || failed "ext4-full ($free blocks free): defrag4fs exited $rc: $(cat "$T/err")"
	e2fsck -fn "$T/full.img" >"$T/fsck" 2>&1 || failed "ext4-full: e2fsck -fn: $(head -n 15 "$T/fsck")"
	observe "$T/full.img" after
	python3 "$TOOLS/manifest.py" compare "$T/before.man" "$T/after.man" >"$T/mdiff" ||
		failed "ext4-full: the files changed: $(head -n 10 "$T/mdiff")"
	note "ext4-full: $free blocks free; exit $rc; $(grep -c 'extents, ideal' "$T/full.out") file(s) named as left"
fi

[ "$fails" = 0 ] || fail "$fails check(s) failed"
echo "ok"
