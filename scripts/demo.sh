#!/usr/bin/env bash
# Set everything up, build, and show the tools' main jobs end to end on an
# image the demo makes itself: format and populate it with mke4fs (RAID
# geometry, files copied in with -d), inspect it with debug4fs (text and
# JSON, as scripts read it), report its fragmentation with defrag4fs -c,
# and check it with e4fsck (per-pass timing).
# Each new tool adds its step here.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
"$top/scripts/setup.sh" "$build"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$work/src
mkdir -p "$src/docs/deep/er" "$src/bin"
printf 'hello, ext4\n' > "$src/hello.txt"
seq 1 20000 > "$src/docs/numbers.txt"
head -c 300000 /dev/urandom > "$src/bin/blob"
ln -s hello.txt "$src/link-to-hello"
ln -s "docs/deep/er/$(printf 'a%.0s' {1..70})" "$src/long-symlink"
ln "$src/hello.txt" "$src/docs/hardlink"
for i in $(seq 1 300); do : > "$src/docs/deep/file-$i"; done

img=$work/demo.img
mke4fs=$build/misc/mkfs/mke4fs
d4=$build/debugfs/debug4fs
e4fsck=$build/fsck/e4fsck
defrag4fs=$build/e4defrag/defrag4fs

# run SHOWN COMMAND...: show the command as a user would type it, then run
# it (the version banner that debugfs and its kind print on stderr is left out).
run() {
	local shown=$1
	shift
	echo
	echo "\$ $shown"
	"$@" 2>/dev/null
}

# A 64 MiB file system on a RAID of 4 data disks with 64 KiB chunks
# (stride 16 blocks of 4 KiB, stripe width 64), filled from $src.
truncate -s 64M "$img"
run "mke4fs -t ext4 -b 4096 -E stride=16,stripe_width=64 -d src demo.img" \
	"$mke4fs" -q -F -t ext4 -b 4096 -E stride=16,stripe_width=64 -d "$src" "$img"
run "debug4fs -R 'stats' demo.img | grep -E 'RAID|Block count|Inode count|Flex'" \
	sh -c "'$d4' -R stats '$img' 2>/dev/null | grep -E 'RAID|Block count|Inode count|Flex'"
run "debug4fs -R 'ls -l /' demo.img" "$d4" -R "ls -l /" "$img"
run "debug4fs -R 'stat /docs/numbers.txt' demo.img" "$d4" -R "stat /docs/numbers.txt" "$img"
run "debug4fs -R 'ex /bin/blob' demo.img" "$d4" -R "ex /bin/blob" "$img"
run "debug4fs -R 'cat /hello.txt' demo.img" "$d4" -R "cat /hello.txt" "$img"
run "debug4fs -R 'ncheck 12 13' demo.img" "$d4" -R "ncheck 12 13" "$img"
run "debug4fs -R 'freefrag' demo.img" "$d4" -R "freefrag" "$img"
run "debug4fs -j -R 'stat /hello.txt' demo.img" "$d4" -j -R "stat /hello.txt" "$img"
run "defrag4fs -c demo.img | head -n 20" sh -c "'$defrag4fs' -c '$img' 2>/dev/null | head -n 20"
run "e4fsck -fn -tt demo.img" "$e4fsck" -fn -tt "$img"
echo
echo "demo: done (image was $img, removed on exit)"
