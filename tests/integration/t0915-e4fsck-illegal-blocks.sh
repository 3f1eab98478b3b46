#!/bin/bash
# t0915-e4fsck-illegal-blocks.sh - an inode with many illegal blocks, and
# e2fsck's restart, judged by e2fsck.
#
# e2fsck asks "Too many illegal blocks in inode N. Clear inode?" before
# every twelfth pointer of a block map that lies outside the file system;
# -n answers no and is asked "Suppress messages?" too, -y clears the inode
# and e2fsck starts again from the beginning ("Restarting e2fsck from the
# beginning..."), after which pass 2 drops the entries naming the inode and
# pass 5 frees its blocks.  Extent trees have no such count.
#
# Each case writes an ext3 (1 KiB blocks) or ext2 (4 KiB) file system with
# debugfs holding /victim (direct, indirect and, with 1 KiB blocks, double
# indirect blocks) and /d, a directory of 420 entries (16 blocks, one of
# them indirect, with 1 KiB blocks) with a subdirectory, then points block
# map entries outside the file system: 11 (no question yet), 12, 13 and 30
# pointers, some in the indirect or in a double indirect's indirect block,
# in a file, in the directory, or in both.  tests/lib/fsck-damage.sh then
# requires the lines and exit codes of e2fsck -n, -p and -y (-n also with 1
# and 4 threads), a second -fy exiting 0, e2fsck -fn clean afterwards and
# /big intact.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_setup

src="$T/tree"
mkdir -p "$src"
head -c 300000 /dev/urandom >"$src/big"
head -c 300000 /dev/urandom >"$src/victim"
head -c 5000 /dev/urandom >"$src/small"
head -c 1500 /dev/urandom >"$src/tiny"

base_image() {
	local img=$1 opts=$2 i
	rm -f "$img"
	# shellcheck disable=SC2086
	mke2fs -q -F $opts "$img" 16M >/dev/null 2>&1
	{
		echo "write $src/big big"
		echo "write $src/victim victim"
		echo "write $src/small small"
		echo "mkdir d"
		echo "mkdir d/inner"
		echo "write $src/small d/inner/x"
		for i in $(seq 1 420); do
			echo "write $src/tiny d/a_file_with_a_rather_long_name_$i"
		done
	} | debugfs -w -f - "$img" >/dev/null 2>&1
}

# The first block a `stat` of path lists after "(NAME):", e.g. IND.
blk_of() {
	debugfs -R "stat $2" "$1" 2>/dev/null | tr ',' '\n' | sed -n "s/^ *($3):\([0-9]*\).*/\1/p" | head -n 1
}

# @IND@: /victim's indirect block; @IND2@: the indirect block below its double
# indirect one (the second "(IND)" listed); @DIND@: the double indirect
# block; @DIR_IND@: /d's indirect block.
expand() {
	local img=$1 cmds=$2 ind2
	ind2=$(debugfs -R "stat /victim" "$img" 2>/dev/null | tr ',' '\n' | sed -n 's/^ *(IND):\([0-9]*\).*/\1/p' | sed -n 2p)
	cmds=${cmds//@IND@/$(blk_of "$img" /victim IND)}
	cmds=${cmds//@IND2@/$ind2}
	cmds=${cmds//@DIND@/$(blk_of "$img" /victim DIND)}
	printf '%s\n' "${cmds//@DIR_IND@/$(blk_of "$img" /d IND)}"
}

# sif lines pointing entries FIRST..LAST of PATH's i_block outside the file system.
direct() {
	local path=$1 first=$2 last=$3 i
	for i in $(seq "$first" "$last"); do
		echo "sif $path block[$i] $((90000000 + i))"
	done
}

# The layouts must give the files the maps the cases damage.
for opts in "-t ext3 -b 1024" "-t ext2 -b 4096"; do
	base_image "$T/probe.img" "$opts"
	[ -n "$(blk_of "$T/probe.img" /victim IND)" ] || fail "mke2fs $opts: /victim has no indirect block"
	case $opts in
	*1024*)
		[ -n "$(blk_of "$T/probe.img" /victim DIND)" ] || fail "mke2fs $opts: /victim has no double indirect block"
		[ -n "$(blk_of "$T/probe.img" /d IND)" ] || fail "mke2fs $opts: /d has no indirect block" ;;
	esac
done

for opts in "-t ext3 -b 1024" "-t ext2 -b 4096"; do
	tag="[$opts]"
	damage_case "eleven illegal blocks: no question yet $tag" "$opts" "$(direct /victim 0 10)"
	damage_case "twelve illegal direct blocks $tag" "$opts" "$(direct /victim 0 11)"
	damage_case "twelve direct and one in the indirect block $tag" "$opts" "$(direct /victim 0 11)
zap_block -o 0 -l 4 -p 0xff @IND@"
	# 30: asked at the twelfth and the twenty-fourth with -n.
	damage_case "thirty illegal blocks in the indirect block $tag" "$opts" "zap_block -o 0 -l 120 -p 0xff @IND@"
	case $opts in
	*1024*)
		damage_case "fifteen illegal blocks below the double indirect block $tag" "$opts" \
			"zap_block -o 0 -l 60 -p 0xff @IND2@"
		# An illegal indirect block counts once and is not read.  (e2fsck -n aborts
		# when no indirect block follows it, as t0910 says: here the DIND does.)
		damage_case "eleven direct and an illegal indirect block $tag" "$opts" "$(direct /victim 0 10)
sif /victim block[IND] 4000000000"
		# A cleared directory: its entries' inodes come back through /lost+found.
		damage_case "a directory with twelve illegal blocks $tag" "$opts" "$(direct /d 1 11)
zap_block -o 0 -l 4 -p 0xff @DIR_IND@"
		damage_case "a directory and a file, each with too many $tag" "$opts" "$(direct /d 1 11)
zap_block -o 0 -l 8 -p 0xff @DIR_IND@
zap_block -o 0 -l 200 -p 0xff @IND@" ;;
	esac
done

# Interactively, on a terminal: "Clear inode? no" then "Suppress messages? yes"
# (every other question yes) leaves the rest of the inode's illegal blocks
# cleared without a word and asks no more "Too many" questions about it.
# Both checkers run on a pseudo-terminal without echo; e2fsck reads keys,
# e4fsck lines.  e2fsck prints one newline after a typed answer where
# e4fsck prints two, so blank lines are not compared.
if command -v python3 >/dev/null 2>&1; then
	cat >"$T/drive.py" <<'EOF'
import os, pty, select, sys, termios
answers, eol, cmd = list(sys.argv[1]), sys.argv[2].replace('NL', '\n'), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    attrs = termios.tcgetattr(0)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(0, termios.TCSANOW, attrs)
    os.execvp(cmd[0], cmd)
out, pending = b'', b''
while select.select([fd], [], [], 20)[0]:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
    pending += data
    while b'? ' in pending:
        pending = pending[pending.index(b'? ') + 2:]
        os.write(fd, ((answers.pop(0) if answers else 'y') + eol).encode())
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace').replace('\r\n', '\n'))
sys.exit(os.waitstatus_to_exitcode(status))
EOF
	name="interactive: no to Clear inode, yes to Suppress messages [-t ext3 -b 1024]"
	base_image "$T/tty.img" "-t ext3 -b 1024"
	debugfs -w -f - "$T/tty.img" >/dev/null 2>&1 <<<"$(expand "$T/tty.img" "zap_block -o 0 -l 120 -p 0xff @IND@")"
	cp "$T/tty.img" "$T/tty-ref.img"
	rc=0; python3 "$T/drive.py" yn NL "$E4FSCK" -f "$T/tty.img" >"$T/ours.tty" 2>&1 || rc=$?
	want=0; python3 "$T/drive.py" yn "" e2fsck -f "$T/tty-ref.img" >"$T/theirs.tty" 2>&1 || want=$?
	if ! grep -q '^Suppress messages<y>? yes' "$T/theirs.tty"; then
		bad "$name: e2fsck was not asked as expected:"; sed 's/^/    /' "$T/theirs.tty" | head -n 30
	elif [ "$rc" != "$want" ] ||
	     ! diff <(neutral "$T/ours.tty" "$T/tty.img" | grep -v '^$') \
		    <(neutral "$T/theirs.tty" "$T/tty-ref.img" | grep -v '^$') >"$T/diff" 2>&1; then
		bad "$name: exit $rc (e2fsck $want) or output differs:"; sed 's/^/    /' "$T/diff" | head -n 20
	elif ! e2fsck -fn "$T/tty.img" >"$T/check" 2>&1; then
		bad "$name: e2fsck -fn is not clean afterwards:"; sed 's/^/    /' "$T/check" | head -n 20
	else
		pass "$name"
	fi
else
	echo "SKIP interactive case: no python3"
fi

[ $failed = 0 ] || fail "e4fsck disagrees with e2fsck on inodes with many illegal blocks"
