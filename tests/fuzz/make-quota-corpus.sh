#!/usr/bin/env bash
# tests/fuzz/make-quota-corpus.sh - regenerate corpus-quota/, the seed
# quota files of fuzz_quota: the user, group and project files mke2fs
# writes, and those e2fsck writes after files of other owners appear
# (more ids, more tree branches).
#
# usage: make-quota-corpus.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/corpus-quota
tmp=$(mktemp -d "${TMPDIR:-/tmp}/quota-corpus.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
mkdir -p "$out"
img=$tmp/q.img
export E2FSPROGS_FAKE_TIME=1700000000
mke2fs -q -F -t ext4 -O quota,project -E quotatype=usrquota:grpquota:prjquota,nodiscard \
	-U 5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a "$img" 4M
prj=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Project quota inode: *//p')
debugfs -R "dump <3> $out/user-new" "$img" >/dev/null 2>&1
debugfs -R "dump <4> $out/group-new" "$img" >/dev/null 2>&1
debugfs -R "dump <$prj> $out/project-new" "$img" >/dev/null 2>&1
# Owners spread over the tree's levels, and enough of one id range to fill data blocks.
{
	for id in 1 255 256 65536 16777216 4294967294; do
		echo "write /dev/null f$id"
		echo "sif /f$id uid $id"
		echo "sif /f$id gid $id"
		echo "sif /f$id projid $id"
	done
	for id in $(seq 1000 1030); do
		echo "write /dev/null g$id"
		echo "sif /g$id uid $id"
	done
} | debugfs -w -f - "$img" >/dev/null 2>&1
e2fsck -fy "$img" >/dev/null 2>&1 || true
prj=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Project quota inode: *//p')
debugfs -R "dump <3> $out/user-many" "$img" >/dev/null 2>&1
debugfs -R "dump <4> $out/group-many" "$img" >/dev/null 2>&1
debugfs -R "dump <$prj> $out/project-many" "$img" >/dev/null 2>&1
ls -l "$out"
