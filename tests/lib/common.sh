# shellcheck shell=bash
# tests/lib/common.sh - helpers sourced by the integration tests.
#
#   . "$(dirname "$0")/../lib/common.sh"
#
# Provides:
#   skip "why"            print "SKIP: why" and exit 77 (automake's skip code)
#   fail "msg"            print "FAIL: msg" on stderr and exit 1
#   note "msg"            print "<test>: msg" on stderr
#   need_cmd CMD...       skip unless every CMD is on PATH (or an executable path)
#   need_root_loop        skip unless we are root and can loop-mount ext4
#   have_root_loop        same test, as a return code (0 = usable), no skip
#   root_loop_reason      print why loop mounts are unusable ("yes" if usable)
#   make_tmpdir           create $T (a private temp dir removed at exit)
#   at_exit "cmd"         run cmd (eval'd) at exit, before $T is removed
#   loop_mount IMG DIR [mount options]
#                         attach IMG to a loop device and mount it on DIR;
#                         both are undone at exit if the test does not
#   loop_umount DIR       unmount DIR and detach its loop device now
#
# Variables (environment wins over the defaults):
#   top_srcdir            walk up from this file to the dir with configure.ac
#   top_builddir          walk up from $PWD to the dir with config.status,
#                         else $top_srcdir
#   DEBUG4FS              $top_builddir/debugfs/debug4fs
#   MKE4FS                $top_builddir/misc/mkfs/mke4fs
#   E4FSCK                $top_builddir/fsck/e4fsck
#   DEFRAG4FS             $top_builddir/e4defrag/defrag4fs
#   REAL_DEBUGFS          debugfs found on PATH, /sbin or /usr/sbin (may be "")
#
# Everything is safe under "set -eu".

if [ -n "${EXT4FS_COMMON_SH_LOADED:-}" ]; then
	return 0
fi
EXT4FS_COMMON_SH_LOADED=1

# Debian keeps e2fsprogs in /sbin, which is not always on a user's PATH.
case ":$PATH:" in
*:/usr/sbin:*) ;;
*) PATH="$PATH:/usr/sbin" ;;
esac
case ":$PATH:" in
*:/sbin:*) ;;
*) PATH="$PATH:/sbin" ;;
esac
export PATH

TEST_NAME=$(basename -- "${0:-test}")

# scripts/test.sh runs these tests in its own builds and sets this for the
# build that "make distcheck" makes, which checks packaging, not behaviour.
if [ -n "${EXT4FS_SKIP_INTEGRATION:-}" ]; then
	printf 'SKIP: %s\n' "integration tests already ran outside this build (EXT4FS_SKIP_INTEGRATION)"
	exit 77
fi

skip() {
	printf 'SKIP: %s\n' "$*"
	exit 77
}

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

note() {
	printf '%s: %s\n' "$TEST_NAME" "$*" >&2
}

# failed MESSAGE: a check that failed, counted in $fails; the test goes on
# (and ends with: [ "$fails" = 0 ] || fail "$fails check(s) failed").
fails=0
failed() {
	printf 'FAIL: %s\n' "$*" >&2
	fails=$((fails + 1))
}

# ---------------------------------------------------------------- locations

_ext4fs_abs_dir() {
	(cd -- "$1" 2>/dev/null && pwd -P)
}

_ext4fs_find_up() {
	# _ext4fs_find_up START MARKER: print the first dir at or above START
	# that contains MARKER.
	local d
	d=$(_ext4fs_abs_dir "$1") || return 1
	while :; do
		if [ -e "$d/$2" ]; then
			printf '%s\n' "$d"
			return 0
		fi
		[ "$d" = / ] && return 1
		d=$(dirname -- "$d")
	done
}

_ext4fs_lib_dir=$(_ext4fs_abs_dir "$(dirname -- "${BASH_SOURCE[0]}")")

if [ -z "${top_srcdir:-}" ]; then
	top_srcdir=$(_ext4fs_find_up "$_ext4fs_lib_dir" configure.ac) ||
		top_srcdir=$(_ext4fs_abs_dir "$_ext4fs_lib_dir/../..")
fi
if [ -z "${top_builddir:-}" ]; then
	top_builddir=$(_ext4fs_find_up . config.status) || top_builddir=$top_srcdir
fi
# Make them absolute: tests may cd around.
top_srcdir=$(_ext4fs_abs_dir "$top_srcdir") || fail "top_srcdir does not exist"
top_builddir=$(_ext4fs_abs_dir "$top_builddir") || fail "top_builddir does not exist"
export top_srcdir top_builddir

: "${DEBUG4FS:=$top_builddir/debugfs/debug4fs}"
export DEBUG4FS
: "${MKE4FS:=$top_builddir/misc/mkfs/mke4fs}"
export MKE4FS
: "${E4FSCK:=$top_builddir/fsck/e4fsck}"
export E4FSCK
: "${DEFRAG4FS:=$top_builddir/e4defrag/defrag4fs}"
export DEFRAG4FS

EXT4FS_TESTS_LIB=$_ext4fs_lib_dir
export EXT4FS_TESTS_LIB

if [ -z "${REAL_DEBUGFS:-}" ]; then
	REAL_DEBUGFS=$(command -v debugfs 2>/dev/null) || REAL_DEBUGFS=""
fi

# ---------------------------------------------------------------- requirements

need_cmd() {
	local c
	for c in "$@"; do
		case $c in
		*/*) [ -x "$c" ] || skip "$c is not executable" ;;
		*) command -v "$c" >/dev/null 2>&1 || skip "command '$c' not found" ;;
		esac
	done
}

# Cached result of the loop-mount probe: "" = not probed, "yes", or the reason.
_ext4fs_loop_status=""

have_root_loop() {
	if [ -z "$_ext4fs_loop_status" ]; then
		_ext4fs_loop_status=$(_ext4fs_probe_loop)
	fi
	[ "$_ext4fs_loop_status" = yes ]
}

# Why loop mounts are unusable ("yes" if they are usable).
root_loop_reason() {
	have_root_loop || true
	printf '%s\n' "$_ext4fs_loop_status"
}

need_root_loop() {
	have_root_loop || skip "$_ext4fs_loop_status"
}

_ext4fs_probe_loop() {
	# Runs in a subshell (command substitution): prints "yes" or a reason.
	# Cleans up after itself whatever happens.
	local d dev="" rc
	if [ "$(id -u)" != 0 ]; then
		echo "not root: loop mounts need root"
		return 0
	fi
	if ! command -v losetup >/dev/null 2>&1 || ! command -v mke2fs >/dev/null 2>&1; then
		echo "losetup or mke2fs missing"
		return 0
	fi
	d=$(mktemp -d "${TMPDIR:-/tmp}/ext4fs-probe.XXXXXX") || {
		echo "cannot create a temp dir"
		return 0
	}
	mkdir "$d/mnt"
	rc="cannot make a probe image"
	if truncate -s 4M "$d/probe.img" 2>/dev/null &&
		mke2fs -q -F -t ext4 -b 1024 "$d/probe.img" >/dev/null 2>&1; then
		if ! dev=$(losetup -f --show "$d/probe.img" 2>/dev/null); then
			dev=""
			rc="no usable loop device (losetup -f failed)"
		elif ! mount -t ext4 "$dev" "$d/mnt" >/dev/null 2>&1; then
			rc="cannot mount ext4 from a loop device"
		else
			if : >"$d/mnt/probe" 2>/dev/null; then
				rc=yes
			else
				rc="loop-mounted ext4 is not writable"
			fi
			umount "$d/mnt" 2>/dev/null || umount -l "$d/mnt" 2>/dev/null || true
		fi
		if [ -n "$dev" ]; then
			losetup -d "$dev" 2>/dev/null || true
		fi
	fi
	rm -rf -- "$d"
	echo "$rc"
}

# ---------------------------------------------------------------- temp dir, cleanup

T=""
_ext4fs_mounts=()       # mount points we made, in order
_ext4fs_loops=()        # loop devices we attached, in order
_ext4fs_exit_cmds=()    # user cleanup commands
_ext4fs_trap_set=""

_ext4fs_cleanup() {
	local rc=$? i m
	set +e
	trap - EXIT INT TERM HUP
	for ((i = ${#_ext4fs_exit_cmds[@]} - 1; i >= 0; i--)); do
		eval "${_ext4fs_exit_cmds[i]}"
	done
	for ((i = ${#_ext4fs_mounts[@]} - 1; i >= 0; i--)); do
		m=${_ext4fs_mounts[i]}
		[ -n "$m" ] || continue
		if mountpoint -q -- "$m" 2>/dev/null; then
			umount -- "$m" 2>/dev/null || umount -l -- "$m" 2>/dev/null
		fi
	done
	for ((i = ${#_ext4fs_loops[@]} - 1; i >= 0; i--)); do
		m=${_ext4fs_loops[i]}
		[ -n "$m" ] || continue
		losetup -d "$m" 2>/dev/null
	done
	if [ -n "$T" ] && [ -d "$T" ]; then
		# Never recurse into something still mounted below $T.
		if grep -qF " $T/" /proc/self/mounts 2>/dev/null; then
			printf '%s: warning: leaving %s, something is still mounted there\n' \
				"$TEST_NAME" "$T" >&2
		elif [ -n "${EXT4FS_KEEP_TMP:-}" ]; then
			printf '%s: keeping %s\n' "$TEST_NAME" "$T" >&2
		else
			rm -rf -- "$T"
		fi
	fi
	exit "$rc"
}

_ext4fs_set_trap() {
	[ -n "$_ext4fs_trap_set" ] && return 0
	_ext4fs_trap_set=1
	trap _ext4fs_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

make_tmpdir() {
	if [ -z "$T" ]; then
		T=$(mktemp -d "${TMPDIR:-/tmp}/ext4fs-${TEST_NAME%.sh}.XXXXXX") ||
			fail "cannot create a temp dir"
		_ext4fs_set_trap
	fi
}

at_exit() {
	_ext4fs_exit_cmds+=("$1")
	_ext4fs_set_trap
}

loop_mount() {
	# loop_mount IMG DIR [OPTIONS]
	local img=$1 dir=$2 opts=${3:-} dev
	_ext4fs_set_trap
	dev=$(losetup -f --show -- "$img") || return 1
	_ext4fs_loops+=("$dev")
	if ! mount -t ext4 ${opts:+-o "$opts"} "$dev" "$dir"; then
		losetup -d "$dev" 2>/dev/null || true
		_ext4fs_forget_loop "$dev"
		return 1
	fi
	_ext4fs_mounts+=("$(_ext4fs_abs_dir "$dir")")
}

_ext4fs_forget_loop() {
	local i
	for i in "${!_ext4fs_loops[@]}"; do
		if [ "${_ext4fs_loops[i]}" = "$1" ]; then
			_ext4fs_loops[i]=""
		fi
	done
}

loop_umount() {
	# loop_umount DIR: unmount and detach the loop device loop_mount attached.
	local dir i dev="" back=""
	dir=$(_ext4fs_abs_dir "$1") || return 1
	dev=$(findmnt -n -o SOURCE --mountpoint "$dir" 2>/dev/null) || dev=""
	umount -- "$dir" || return 1
	for i in "${!_ext4fs_mounts[@]}"; do
		if [ "${_ext4fs_mounts[i]}" = "$dir" ]; then
			_ext4fs_mounts[i]=""
		fi
	done
	if [ -n "$dev" ]; then
		back=$(losetup -n -O BACK-FILE "$dev" 2>/dev/null | sed 's/ *(deleted)$//') || back=""
		for i in "${!_ext4fs_loops[@]}"; do
			if [ "${_ext4fs_loops[i]}" = "$dev" ]; then
				losetup -d "$dev" 2>/dev/null || true
				_ext4fs_loops[i]=""
			fi
		done
		# Detaching completes in the background: a tool run next must not find the image in use.
		for i in $(seq 50); do
			[ -z "$back" ] || [ -z "$(losetup -j "$back" 2>/dev/null)" ] && break
			sleep 0.1
		done
	fi
	return 0
}

# build_corpus: build (or reuse) the image corpus of make-images.sh in
# $CACHE (EXT4FS_IMAGE_CACHE, default $top_builddir/tests/images; only the
# --quick subset when EXT4FS_QUICK is set) and list its names in images[].
# Skips the test when the corpus cannot be built here.
build_corpus() {
	local rc=0 args=()
	CACHE=${EXT4FS_IMAGE_CACHE:-$top_builddir/tests/images}
	case ${EXT4FS_QUICK:-0} in 0 | '') ;; *) args+=(--quick) ;; esac
	"$EXT4FS_TESTS_LIB/make-images.sh" "$CACHE" "${args[@]}" || rc=$?
	case $rc in
	0) ;;
	77) skip "cannot build the image corpus" ;;
	*) fail "building the image corpus in $CACHE failed (exit $rc)" ;;
	esac
	mapfile -t images < <("$EXT4FS_TESTS_LIB/make-images.sh" --list "${args[@]}" | cut -d' ' -f1)
}
