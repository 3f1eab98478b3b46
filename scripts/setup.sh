#!/usr/bin/env bash
# Install what building and testing libext4fs needs, then configure and build.
# As root, missing Debian packages are installed with apt-get; otherwise the
# exact install command is printed and the script stops.
#
# Usage: scripts/setup.sh [BUILD_DIR] [configure options...]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift

# Build tools, libraries, test oracles (e2fsprogs; attr and acl for xattrs and ACLs), and clang for libFuzzer.
packages=(autoconf automake libtool pkg-config make gcc clang
          uuid-dev libblkid-dev zlib1g-dev libcmocka-dev
          e2fsprogs attr acl util-linux mount python3)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "setup: installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq "${missing[@]}" >/dev/null
	else
		echo "setup: missing packages: ${missing[*]}" >&2
		echo "setup: run: sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
fi

cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ] || [ $# -gt 0 ]; then
	"$top/configure" -q "$@"
fi
make -s -j"$(nproc)" >/dev/null
echo "setup: built in $build"
