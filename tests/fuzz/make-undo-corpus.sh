#!/usr/bin/env bash
# tests/fuzz/make-undo-corpus.sh - regenerate corpus-undo/, the seed undo
# files of fuzz_undo: a few changes made by debug4fs -w -z on 1 MiB images
# (1 KiB and 4 KiB blocks) made by mke2fs.
#
# usage: make-undo-corpus.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
debug4fs=$(cd "$1" && pwd)/debugfs/debug4fs
out=$here/corpus-undo
tmp=$(mktemp -d "${TMPDIR:-/tmp}/undo-corpus.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
mkdir -p "$out"
for cfg in "ext2 1024" "ext4 1024" "ext4 4096"; do
	set -- $cfg
	img=$tmp/$1-$2.img
	mke2fs -q -F -t "$1" -b "$2" -U 5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a -E hash_seed=3c3c3c3c-3c3c-3c3c-3c3c-3c3c3c3c3c3c,nodiscard "$img" 1M
	E2FSPROGS_FAKE_TIME=1700000000 "$debug4fs" -w -z "$out/$1-$2.undo" -R "mkdir a" "$img" >/dev/null 2>&1
done
ls -l "$out"
