#!/bin/bash
# t3975-e4fsck-quota.sh - the quota feature, judged by e2fsck 1.47: after
# pass 5 the usage each user, group and project has is counted, compared
# with the quota files ("[QUOTA WARNING] ..." lines) and the files are
# rewritten on a yes (PR_6_UPDATE_QUOTAS), keeping their limits.
#
# Layouts: user and group quota with 1 KiB blocks; user, group and project
# quota with 4 KiB blocks.  A clean image is clean for both checkers.  The
# usage is made wrong by changing an owner with debugfs (which does not
# keep the quota files), by writing a file with debugfs, and by editing a
# record of a quota file; each case goes through damage_case (the same
# lines and exit status as e2fsck in -fn, -fp, -fy, a clean result), and
# then the repaired quota files must hold what e2fsck's repair writes
# (debugfs list_quota, and the files' bytes).  Hostile quota files (a tree
# reference or a free list past the end) are rewritten as e2fsck rewrites
# them.  The quota inodes' own
# problems: a quota file that is no regular file (PR_1_QUOTA_BAD_MODE), a
# quota file named by a reserved inode or past the last one
# (PR_0_INVALID_QUOTA_INO), a quota file in a visible inode (PR_0_HIDE_QUOTA).
# Other writers (debug4fs -w) are still refused a quota file system.  As root with loop devices, a repaired image
# must mount.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

# shellcheck source-path=SCRIPTDIR source=../lib/fsck-damage.sh
. "$(dirname -- "$0")/../lib/fsck-damage.sh"
damage_need_e2fsck_147
damage_setup

# Layout spec: "mke2fs options@size".
LUG="-t ext4 -b 1024 -O quota@8M"
LUGP="-t ext4 -b 4096 -O quota,project -E quotatype=usrquota:grpquota:prjquota@16M"

# Neither debugfs nor mke2fs -d (1.47.0) keeps the quota files: e2fsck -fy settles the base's.
# With ea_inode, /big also keeps an attribute value in an EA inode, which its owner is charged for.
base_image() {
	spec_image "$@"
	case $2 in *ea_inode*)
		head -c 6000 /dev/urandom >"$T/value"
		debugfs -w -R "ea_set -f $T/value /big user.big" "$1" >/dev/null 2>&1
	esac
	e2fsck -fy "$1" >/dev/null 2>&1 || true
}

# quota_poke IMG INO QBLOCK OFFSET VALUE: store VALUE (64-bit little-endian)
# at OFFSET of the 1 KiB quota block QBLOCK of quota file INO.
quota_poke() {
	local img=$1 ino=$2 qblk=$3 off=$4 value=$5 bs lblk pblk
	bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	lblk=$((qblk * 1024 / bs))
	pblk=$(debugfs -R "bmap <$ino> $lblk" "$img" 2>/dev/null)
	python3 - "$img" $((pblk * bs + qblk * 1024 % bs + off)) "$value" <<-'PY'
		import struct, sys
		with open(sys.argv[1], "r+b") as f:
		    f.seek(int(sys.argv[2]))
		    f.write(struct.pack("<Q", int(sys.argv[3])))
	PY
}

# damage_case runs a DAMAGE_CMD in a shell of its own.
export -f quota_poke

# The quota files e4fsck's repair left in $T/dmg.img must be e2fsck's ($T/ref.img).
same_quota() {
	local name=$1 t ino
	for t in user group project; do
		debugfs -R "list_quota $t" "$T/dmg.img" >"$T/lq.ours" 2>&1 || true
		debugfs -R "list_quota $t" "$T/ref.img" >"$T/lq.theirs" 2>&1 || true
		if ! diff -u "$T/lq.theirs" "$T/lq.ours" >"$T/diff"; then
			bad "$name: list_quota $t differs from e2fsck's repair:"; sed 's/^/    /' "$T/diff" | head -n 20
			return
		fi
	done
	for ino in $(dumpe2fs -h "$T/ref.img" 2>/dev/null | sed -n 's/^\(User\|Group\|Project\) quota inode: *//p'); do
		if ! cmp -s <(debugfs -R "cat <$ino>" "$T/dmg.img" 2>/dev/null) \
			<(debugfs -R "cat <$ino>" "$T/ref.img" 2>/dev/null); then
			bad "$name: quota file $ino's bytes differ from e2fsck's"; return
		fi
	done
	pass "$name: quota files as e2fsck writes them"
}

for spec in "$LUG" "$LUGP"; do
	tag="(${spec%@*})"
	# A clean image: the same clean output from both, in -n and -p.
	base_image "$T/clean.img" "$spec"
	for mode in -fn -fp; do
		rc=0; "$E4FSCK" "$mode" "$T/clean.img" >"$T/ours" 2>&1 || rc=$?
		want=0; e2fsck "$mode" "$T/clean.img" >"$T/theirs" 2>&1 || want=$?
		if [ "$rc" != 0 ] || [ "$want" != 0 ] ||
			! diff <(neutral "$T/ours" "$T/clean.img") <(neutral "$T/theirs" "$T/clean.img") >"$T/diff"; then
			bad "clean $mode $tag: exit $rc (e2fsck $want)"; sed 's/^/    /' "$T/diff" 2>/dev/null | head -n 10
		else
			pass "clean $mode $tag"
		fi
	done

	damage_case "owner changed (a missing entry) $tag" "$spec" "sif /big uid 1000"
	same_quota "owner changed $tag"
	damage_case "group changed $tag" "$spec" "sif /big gid 4242"
	same_quota "group changed $tag"
	# i_blocks wrong: usage is what e2fsck's walk counts, also when the count is left wrong (-n).
	damage_case "i_blocks wrong $tag" "$spec" "sif /big blocks 10"
	damage_case "a file written by debugfs $tag" "$spec" "write $src/big big2"
	same_quota "a file written by debugfs $tag"
	# The user quota file (inode 3): its first data block is quota block 5, id 0 its first entry.
	# Limits on id 0 (kept by the rewrite) and a space record 4096 bytes too high.  The
	# limits lie above the usage: past a soft limit both checkers set a grace time from
	# their own clock, and the two runs may fall in different seconds.
	DAMAGE_CMD=1 damage_case "a record's space edited, limits kept $tag" "$spec" "
		quota_poke \"\$1\" 3 5 $((16 + 40)) 100000
		quota_poke \"\$1\" 3 5 $((16 + 32)) 200000
		quota_poke \"\$1\" 3 5 $((16 + 16)) 5000
		old=\$(debugfs -R 'list_quota user' \"\$1\" 2>/dev/null | awk '\$1 == 0 { print \$2 }')
		quota_poke \"\$1\" 3 5 $((16 + 48)) \$((old + 4096))"
	same_quota "a record's space edited, limits kept $tag"
	if grep -q " 100000 *200000 " <(debugfs -R "list_quota user" "$T/dmg.img" 2>/dev/null); then
		pass "limits kept $tag"
	else
		bad "limits kept $tag: $(debugfs -R 'list_quota user' "$T/dmg.img" 2>/dev/null | tr '\n' '|')"
	fi
	# Hostile quota files, both checkers naming the fault on stderr in their own words (not
	# compared): the root's first reference past the file, the free block list's head past it.
	DAMAGE_SED='/^\[ERROR\] /d' DAMAGE_CMD=1 damage_case "quota file's tree refers past its end $tag" "$spec" \
		"quota_poke \"\$1\" 3 1 0 99999"
	same_quota "quota file's tree refers past its end $tag"
	DAMAGE_SED='/^\[ERROR\] /d' DAMAGE_CMD=1 damage_case "quota file's free list past its end $tag" "$spec" \
		"quota_poke \"\$1\" 4 0 24 99"
	same_quota "quota file's free list past its end $tag"
	# A quota file that is no regular file (PR_1_QUOTA_BAD_MODE): read all the same, its mode made regular.
	damage_case "user quota file's mode 0 $tag" "$spec" "sif <3> mode 0"
	damage_case "group quota file a character device $tag" "$spec" "sif <4> mode 020644"
	damage_case "user quota file a symbolic link $tag" "$spec" "sif <3> mode 0120777"
	# A quota file named by a reserved inode (PR_0_INVALID_QUOTA_INO); inode 3, unlinked, is not walked.
	# e2fsck's library names a quota file it cannot read with its source's path: not compared.
	DAMAGE_SED='/^\[ERROR\] /d' damage_case "user quota file named by inode 1 $tag" "$spec" "sif <3> links_count 0
ssv usr_quota_inum 1"
	# A quota file in a visible inode (PR_0_HIDE_QUOTA, unless -n): the group file as /aquota.group
	# (inode 4 unlinked) moves into inode 4; a user file named by a free inode cannot move (no
	# name to unlink, e2fsck's words on stderr) and is written anew into inode 3.
	DAMAGE_CMD=1 damage_case "group quota file visible as /aquota.group $tag" "$spec" "
		debugfs -R 'dump <4> $T/gq' \"\$1\" >/dev/null 2>&1
		debugfs -w -f - \"\$1\" >/dev/null 2>&1 <<-END
			write $T/gq aquota.group
			sif <4> links_count 0
		END
		ino=\$(debugfs -R 'ls -l /' \"\$1\" 2>/dev/null | awk '\$NF == \"aquota.group\" { print \$1 }')
		debugfs -w -R \"ssv grp_quota_inum \$ino\" \"\$1\" >/dev/null 2>&1"
	same_quota "group quota file visible as /aquota.group $tag"
	DAMAGE_SED='/^\[ERROR\] /d' damage_case "user quota file named by a free inode $tag" "$spec" "sif <3> links_count 0
ssv usr_quota_inum 15"
	same_quota "user quota file named by a free inode $tag"
	case $spec in *project*)
		damage_case "project id changed $tag" "$spec" "sif /big projid 7"
		same_quota "project id changed $tag"
		# Past the last inode: forgotten; the project file's inode is then an unattached file.
		DAMAGE_SED='/^\[ERROR\] /d' damage_case "project quota file past the last inode $tag" "$spec" "ssv prj_quota_inum 99999"
	esac
done

# An owner charged for an EA inode: /big's value kept in one counts as one more inode of its user.
LEA="-t ext4 -O quota,ea_inode@16M"
base_image "$T/ea.img" "$LEA"
# The EA inode comes after /big (12) and /d (13); its flags carry EXT4_EA_INODE_FL (0x200000).
if debugfs -R "stat <14>" "$T/ea.img" 2>/dev/null | grep -q "Flags: 0x2[0-9a-f]\{5\}\b"; then
	damage_case "owner of a file with an EA-inode value changed (-O quota,ea_inode)" "$LEA" "sif /big uid 1000"
	same_quota "owner of a file with an EA-inode value changed (-O quota,ea_inode)"
else
	echo "SKIP ea_inode: debugfs did not keep the value in an EA inode"
fi

# Other writers, which do not rewrite the quota files, are still refused a quota file system
# (only e4fsck opens it with EXT4FS_OPEN_QUOTA_BY_CALLER).
if [ -x "$DEBUG4FS" ]; then
	base_image "$T/refuse.img" "$LUG"
	if "$DEBUG4FS" -w -R "mkdir x" "$T/refuse.img" 2>&1 | grep -q "writing with feature(s) quota is not supported"; then
		pass "debug4fs -w refused on a quota file system"
	else
		bad "debug4fs -w was not refused on a quota file system"
	fi
else
	echo "SKIP debug4fs refusal: $DEBUG4FS is not built"
fi

# The kernel mounts a repaired image (read-only is enough to read the quota files).
if [ "$(root_loop_reason)" = yes ]; then
	mnt="$T/mnt"; mkdir -p "$mnt"
	if mount -o ro,loop "$T/dmg.img" "$mnt" 2>"$T/mount.err"; then
		umount "$mnt"
		pass "the kernel mounts the repaired image"
	else
		bad "the kernel refuses the repaired image: $(cat "$T/mount.err")"
	fi
else
	echo "SKIP mount: $(root_loop_reason)"
fi

exit "$failed"
