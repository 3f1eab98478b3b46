#!/usr/bin/env bash
# Set everything up, build, make a small ext4 image and show it through debug4fs.
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
# mke2fs -d builds the demo image from the directory above (our mke4fs comes in a later issue).
E2FSPROGS_FAKE_TIME=1700000000 mke2fs -q -F -t ext4 -b 4096 -d "$src" \
	-U 6f1c9e2a-4f3b-4d2c-9a51-1b2c3d4e5f60 -E hash_seed=0b5d3e7e-8f6a-4b1c-a2d3-e4f5a6b7c8d9 \
	"$img" 16M

d4=$build/debugfs/debug4fs
run() {
	echo
	echo "\$ debug4fs -R '$1' demo.img"
	"$d4" -R "$1" "$img" 2>/dev/null
}
run "stats -h"
run "ls -l /"
run "stat /docs/numbers.txt"
run "ex /docs/numbers.txt"
run "cat /hello.txt"
run "ncheck 12 13"
run "freefrag"
echo
echo "\$ debug4fs -j -R 'stat /hello.txt' demo.img"
"$d4" -j -R "stat /hello.txt" "$img"
echo
echo "demo: done (image was $img, removed on exit)"
