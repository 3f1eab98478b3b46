#!/bin/bash
# t2600-mke4fs-matrix.sh - mke4fs against mke2fs 1.47, side by side.
#
# For every case of the table below (name, type, size, flags, options) a
# sparse file of SIZE is formatted twice: by mke4fs ("$MKE4FS -t TYPE
# OPTIONS") and by mke2fs ("mke2fs -t TYPE OPTIONS"), both with -q -F, the
# same -U and the same -E hash_seed= (merged into the case's own -E list:
# mke2fs keeps only the last -E).  Then, per case:
#
#   1. both exit 0; or, for a case flagged "refuse", both refuse;
#   2. e2fsck -fn on mke4fs's image exits 0;
#   3. dumpe2fs -h of mke4fs's image shows what was asked (-b, -I, -i, -N,
#      -m, -G, -O, -L, -M, -e, -J size=, -E stride=/stripe_width=/
#      num_backup_sb=, -U, hash_seed, the size);
#   4. the dumpe2fs -h headers are identical after mkfs-known-differences.sed
#      (every field: features, flags, counts, geometry, RAID, journal, ...);
#   5. the full dumpe2fs output (every group's layout, free ranges, flags
#      and bitmap checksums) is identical after the same sed script, unless
#      the case's flags contain "nolayout" (a layout divergence the lead has
#      accepted; say why next to the case);
#   6. (with debugfs, not for "nolayout" cases) "debugfs stat" of the
#      special inodes <2> <7> <8> <11> <12> is identical after the same sed
#      script: mode, owner, size, links, flags and block maps of the root,
#      resize inode, journal, lost+found and orphan file; and with
#      -E root_owner=U:G the root directory is owned by U:G.
#
# One line per case: "PASS name ..." or "FAIL name: reasons" (then the
# first lines of the differences, indented).  Each image is deleted as soon
# as its case is done.  The two sides run in parallel (2 cores).
#
# Table format: "name | type | size | flags | options", "#" starts a
# comment line.  type is ext2, ext3, ext4, or "-" (mke4fs gets no -t and
# must default to ext4; mke2fs gets -t ext4).  size is anything truncate -s
# takes, or FILE:FS (a FILE-sized file, and FS as the size argument).  flags: "-" or a comma list of: huge (skipped with T2600_QUICK=1),
# nolayout (see 5), refuse (both tools must refuse these options).  Options are split on blanks (no quoting).
#
# Environment: MKE4FS (the tool), T2600_QUICK=1 skips the huge cases,
# T2600_CASES=REGEX runs only the cases whose name matches, T2600_VERBOSE=1
# prints whole diffs, T2600_KNOWN=FILE uses another known-differences
# script, EXT4FS_KEEP_TMP=1 keeps the work dir.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs dumpe2fs e2fsck truncate awk numfmt
[ -x "$MKE4FS" ] || skip "mke4fs is not built ($MKE4FS)"
if "$MKE4FS" -V 2>&1 | grep -q 'not built yet'; then
	skip "mke4fs is still the placeholder"
fi
MKE2FS_VERSION=$(mke2fs -V 2>&1 | sed -n '1s/^mke2fs \([0-9.]*\).*/\1/p')
case $MKE2FS_VERSION in
1.47.*) ;;
*) skip "mke2fs ${MKE2FS_VERSION:-of unknown version} is not 1.47.x" ;;
esac

KNOWN=${T2600_KNOWN:-$top_srcdir/tests/integration/mkfs-known-differences.sed}
[ -r "$KNOWN" ] || fail "missing $KNOWN"

make_tmpdir
export TZ=UTC LC_ALL=C
unset MKE2FS_SYNC MKE2FS_FIRST_META_BG MKE2FS_DEVICE_SECTSIZE \
	MKE2FS_DEVICE_PHYS_SECTSIZE 2>/dev/null || true

# mke2fs reads its policy (features per type, -T usage types, inode ratios)
# from mke2fs.conf; mke4fs has Debian's stock file built in.  Give mke2fs
# exactly that file, so a machine's local edits cannot make a difference.
cat >"$T/mke2fs.conf" <<'CONFEOF'
[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384

[fs_types]
	ext3 = {
		features = has_journal
	}
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
	small = {
		blocksize = 1024
		inode_ratio = 4096
	}
	floppy = {
		blocksize = 1024
		inode_ratio = 8192
	}
	big = {
		inode_ratio = 32768
	}
	huge = {
		inode_ratio = 65536
	}
	news = {
		inode_ratio = 4096
	}
	largefile = {
		inode_ratio = 1048576
		blocksize = -1
	}
	largefile4 = {
		inode_ratio = 4194304
		blocksize = -1
	}
	hurd = {
	     blocksize = 4096
	     inode_size = 128
	     warn_y2038_dates = 0
	}
CONFEOF
export MKE2FS_CONFIG=$T/mke2fs.conf

# The special inodes compared with debugfs: root, resize, journal,
# lost+found, the orphan file (or the first unused inode).
printf 'stat <%s>\n' 2 7 8 11 12 >"$T/inodes.cmd"

UUID=4f6d5e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6
SEED=9c8b7a69-5847-4362-a150-f1e2d3c4b5a6

# ------------------------------------------------------------------ the cases
#
# name                | type | size  | flags | options
CASES=$(
	cat <<'EOF'
# block sizes and sizes (1 MiB .. 15 TiB)
ext4-1k-1M            | ext4 | 1M    | -     | -b 1024
ext2-1k-1M            | ext2 | 1M    | -     | -b 1024
ext3-1k-2M            | ext3 | 2M    | -     | -b 1024
ext4-1k-64M           | ext4 | 64M   | -     | -b 1024
ext4-2k-256M          | ext4 | 256M  | -     | -b 2048
ext4-4k-1G            | ext4 | 1G    | -     |
default-type-512M     | -    | 512M  | -     |
ext4-odd-tail         | ext4 | 100005K | -   | -b 1024
ext4-odd-tail-4k      | ext4 | 1025M | -     |
ext4-1k-4G            | ext4 | 4G    | -     | -b 1024
ext4-2k-8G            | ext4 | 8G    | -     | -b 2048
ext4-4k-16G           | ext4 | 16G   | -     | -b 4096
ext4-4k-1T            | ext4 | 1T    | -     |
ext4-15T              | ext4 | 15T   | huge  |
ext4-15T-32bit        | ext4 | 15T   | huge  | -O ^64bit
# types
ext2-4k-1G            | ext2 | 1G    | -     |
ext2-2k-100M          | ext2 | 100M  | -     | -b 2048
ext2-j                | ext2 | 128M  | -     | -j
ext3-1k-32M           | ext3 | 32M   | -     | -b 1024
ext3-4k-2G            | ext3 | 2G    | -     |
# flex_bg sizes
ext4-G1               | ext4 | 512M  | -     | -G 1
ext4-G2               | ext4 | 256M  | -     | -G 2
ext4-G64              | ext4 | 4G    | -     | -G 64
ext4-G1024            | ext4 | 16G   | -     | -G 1024
ext4-1k-G1024         | ext4 | 512M  | -     | -b 1024 -G 1024
# each default feature off in turn
no-has_journal        | ext4 | 512M  | -     | -O ^has_journal
no-ext_attr           | ext4 | 512M  | -     | -O ^ext_attr
no-resize_inode       | ext4 | 512M  | -     | -O ^resize_inode
no-dir_index          | ext4 | 512M  | -     | -O ^dir_index
no-filetype           | ext4 | 512M  | -     | -O ^filetype
# (mke2fs: "Extents MUST be enabled for a 64-bit filesystem")
no-extent             | ext4 | 512M  | -     | -O ^extent,^64bit
no-64bit              | ext4 | 512M  | -     | -O ^64bit
no-flex_bg            | ext4 | 512M  | -     | -O ^flex_bg
# (mke2fs: "reserved online resize blocks not supported on non-sparse filesystem")
no-sparse_super       | ext4 | 512M  | -     | -O ^sparse_super,^resize_inode
# (at 512M the resize inode's size needs large_file: mke2fs turns it back on)
no-large_file         | ext4 | 64M   | -     | -O ^large_file
no-huge_file          | ext4 | 512M  | -     | -O ^huge_file
no-dir_nlink          | ext4 | 512M  | -     | -O ^dir_nlink
no-extra_isize        | ext4 | 512M  | -     | -O ^extra_isize
no-metadata_csum      | ext4 | 512M  | -     | -O ^metadata_csum
uninit_bg             | ext4 | 512M  | -     | -O ^metadata_csum,uninit_bg
uninit_bg-32bit-1k    | ext4 | 256M  | -     | -b 1024 -O ^metadata_csum,^64bit,uninit_bg
# inode size, ratio, count; reserved blocks
I128                  | ext4 | 512M  | -     | -I 128
I512                  | ext4 | 512M  | -     | -I 512
I1024-1k              | ext4 | 64M   | -     | -b 1024 -I 1024
i4096                 | ext4 | 512M  | -     | -i 4096
i65536                | ext4 | 2G    | -     | -i 65536
i1024-1k              | ext4 | 32M   | -     | -b 1024 -i 1024
N100                  | ext4 | 256M  | -     | -N 100
N1000000              | ext4 | 1G    | -     | -N 1000000
m0                    | ext4 | 256M  | -     | -m 0
m1                    | ext4 | 256M  | -     | -m 1
m0.5                  | ext4 | 256M  | -     | -m 0.5
m50                   | ext4 | 256M  | -     | -m 50
# RAID geometry
stride-stripe         | ext4 | 1G    | -     | -E stride=16,stripe_width=64
stride-only           | ext4 | 1G    | -     | -E stride=8
stripe-G64-1T         | ext4 | 1T    | -     | -E stride=16,stripe_width=64 -G 64
stride-1k             | ext4 | 128M  | -     | -b 1024 -E stride=32,stripe_width=128
# newer features
metadata_csum_seed    | ext4 | 512M  | -     | -O metadata_csum_seed
orphan_file           | ext4 | 512M  | -     | -O orphan_file
orphan-seed-1k        | ext4 | 64M   | -     | -b 1024 -O orphan_file,metadata_csum_seed
sparse_super2-0       | ext4 | 1G    | -     | -O sparse_super2 -E num_backup_sb=0
sparse_super2-1       | ext4 | 1G    | -     | -O sparse_super2 -E num_backup_sb=1
sparse_super2-2       | ext4 | 1G    | -     | -O sparse_super2 -E num_backup_sb=2
# usage types (mke2fs.conf, the copy below)
T-small               | ext4 | 256M  | -     | -T small
T-floppy              | ext4 | 8M    | -     | -T floppy
T-news                | ext4 | 256M  | -     | -T news
T-largefile           | ext4 | 4G    | -     | -T largefile
T-huge                | ext4 | 4G    | -     | -T huge
# layout and misc options
packed_meta_blocks    | ext4 | 1G    | -     | -E packed_meta_blocks=1
nolazy                | ext4 | 128M  | -     | -E lazy_itable_init=0,lazy_journal_init=0
nodiscard             | ext4 | 256M  | -     | -E nodiscard
journal-16M           | ext4 | 512M  | -     | -J size=16
label-mnt-errors      | ext4 | 128M  | -     | -L mylabel -M /mnt/x -e remount-ro
errors-panic          | ext3 | 64M   | -     | -e panic
root_owner            | ext4 | 64M   | -     | -E root_owner=1000:100
# (the file system starts 1 MiB into the file: dumpe2fs/e2fsck get "img?offset=")
offset-1M             | ext4 | 65M:64M | -   | -E offset=1048576 -b 4096
fs-smaller-than-file  | ext4 | 1G:300M | -   |
# contradictions mke2fs refuses (t2620 checks the messages and the target)
refuse-extent-64bit   | ext4 | 64M   | refuse | -O ^extent
refuse-sparse-resize  | ext4 | 64M   | refuse | -O ^sparse_super
refuse-I-above-block  | ext4 | 64M   | refuse | -b 1024 -I 2048
EOF
)

# ------------------------------------------------------------------ helpers

PASS=0
FAIL=0
SKIPPED=0
IDENTICAL_FULL=0
COMPARED_FULL=0
FAILED_NAMES=()

# build_args OPTIONS: ARGS = -q -F -U ... OPTIONS with hash_seed merged into -E.
build_args() {
	local w i hadE=0
	local -a words
	read -r -a words <<<"$1"
	ARGS=(-q -F -U "$UUID")
	for ((i = 0; i < ${#words[@]}; i++)); do
		w=${words[i]}
		if [ "$w" = -E ] && [ $((i + 1)) -lt ${#words[@]} ]; then
			i=$((i + 1))
			ARGS+=(-E "${words[i]},hash_seed=$SEED")
			hadE=1
		else
			ARGS+=("$w")
		fi
	done
	[ $hadE = 1 ] || ARGS+=(-E "hash_seed=$SEED")
}

# side DIR SIZE LAYOUT FSCK IO TOOL ARGS...: make, inspect and delete one
# image.  IO is appended to the image name for e2fsck and dumpe2fs (for
# -E offset=N: "?offset=N").
# Leaves in DIR: mkfs.rc mkfs.log bytes h h.rc [full] [fsck.rc fsck.log].
side() {
	local d=$1 size=$2 layout=$3 fsck=$4 io=$5 rc fpid=""
	shift 5
	local img=$d/img
	mkdir -p "$d"
	rm -f "$img"
	# SIZE is FILE-SIZE or FILE-SIZE:FS-SIZE (FS-SIZE goes after the image).
	local fsize=${size%%:*} blocks=()
	case $size in *:*) blocks=("${size#*:}") ;; esac
	if ! truncate -s "$fsize" "$img" 2>"$d/mkfs.log"; then
		echo 99 >"$d/mkfs.rc"
		return 0
	fi
	if [ ${#blocks[@]} -gt 0 ]; then
		numfmt --from=iec "${blocks[0]}" >"$d/bytes"
	else
		stat -c %s "$img" >"$d/bytes"
	fi
	rc=0
	"$@" "$img" "${blocks[@]}" </dev/null >>"$d/mkfs.log" 2>&1 || rc=$?
	echo "$rc" >"$d/mkfs.rc"
	if [ "$rc" = 0 ]; then
		if [ "$fsck" = 1 ]; then
			(
				r=0
				e2fsck -fn "$img$io" >"$d/fsck.log" 2>&1 || r=$?
				echo "$r" >"$d/fsck.rc"
			) &
			fpid=$!
		fi
		rc=0
		dumpe2fs -h "$img$io" >"$d/h" 2>"$d/h.err" || rc=$?
		echo "$rc" >"$d/h.rc"
		if [ "$layout" = 1 ]; then
			dumpe2fs "$img$io" >"$d/full" 2>/dev/null || true
		fi
		if [ -n "$REAL_DEBUGFS" ]; then
			"$REAL_DEBUGFS" -f "$T/inodes.cmd" "$img$io" >"$d/inodes" 2>&1 || true
		fi
		if [ -n "$fpid" ]; then
			wait "$fpid" || true
		fi
	fi
	rm -f "$img"
}

# hv FILE FIELD: the value of "FIELD:" in a dumpe2fs header (blank if none).
hv() {
	awk -v f="$2" '
		{
			i = index($0, ":")
			if (i == 0) next
			k = substr($0, 1, i - 1)
			if (k != f) next
			v = substr($0, i + 1)
			gsub(/^[ \t]+|[ \t]+$/, "", v)
			print v
			exit
		}' "$1"
}

# field_diff A B: one "Field: ours X, mke2fs Y" per differing header field.
field_diff() {
	awk '
		function key(line,  i) { i = index(line, ":"); return i ? substr(line, 1, i - 1) : line }
		function val(line,  i, v) {
			i = index(line, ":"); if (!i) return ""
			v = substr(line, i + 1); gsub(/^[ \t]+|[ \t]+$/, "", v); return v
		}
		# setdiff OURS REF: "mke4fs adds X Y, lacks Z" for word lists.
		function setdiff(o, r,  no, nr, wo, wr, i, j, add, lack, seen) {
			no = split(o, wo, " "); nr = split(r, wr, " ")
			for (i = 1; i <= nr; i++) seen[wr[i]] = 1
			for (i = 1; i <= no; i++) if (!(wo[i] in seen)) add = add " " wo[i]
			delete seen
			for (i = 1; i <= no; i++) seen[wo[i]] = 1
			for (i = 1; i <= nr; i++) if (!(wr[i] in seen)) lack = lack " " wr[i]
			if (add == "" && lack == "") return "same words, other order: mke4fs " o ", mke2fs " r
			return "mke4fs" (add != "" ? " adds" add : "") (add != "" && lack != "" ? "," : "") (lack != "" ? " lacks" lack : "")
		}
		FNR == NR {
			if ($0 == "") next
			k = key($0); v = val($0)
			if (k in a) a[k] = a[k] " / " v
			else { order[++n] = k; a[k] = v }
			next
		}
		{
			if ($0 == "") next
			k = key($0); v = val($0)
			if (k in b) b[k] = b[k] " / " v
			else { if (!(k in a)) order[++n] = k; b[k] = v }
		}
		END {
			for (i = 1; i <= n; i++) {
				k = order[i]
				if (!(k in a)) printf "%s: only in mke4fs (%s)\n", k, b[k]
				else if (!(k in b)) printf "%s: only in mke2fs (%s)\n", k, a[k]
				else if (a[k] != b[k] && k ~ /features|flags|options/) printf "%s: %s\n", k, setdiff(b[k], a[k])
				else if (a[k] != b[k]) printf "%s: mke4fs %s, mke2fs %s\n", k, b[k], a[k]
			}
		}' "$1" "$2"
}

# has_feature HEADER NAME
has_feature() {
	case " $(hv "$1" 'Filesystem features') " in
	*" $2 "*) return 0 ;;
	*) return 1 ;;
	esac
}

# check_asked TYPE OPTIONS HEADER BYTES: print one line per thing asked but
# not shown by dumpe2fs -h.
check_asked() {
	local type=$1 h=$3 bytes=$4 w v i f
	local -a words
	read -r -a words <<<"$2"
	local bs bc ic
	bs=$(hv "$h" 'Block size')
	bc=$(hv "$h" 'Block count')
	ic=$(hv "$h" 'Inode count')
	if [ -z "$bs" ] || [ -z "$bc" ] || [ -z "$ic" ]; then
		echo "dumpe2fs -h shows no block size/count or inode count"
		return 0
	fi
	[ "$(hv "$h" 'Filesystem UUID')" = "$UUID" ] || echo "UUID is not $UUID"
	[ "$(hv "$h" 'Directory Hash Seed')" = "$SEED" ] || echo "hash seed is not $SEED"
	# The size: every block that fits, less at most one (trimmed) last group.
	local bpg
	bpg=$(hv "$h" 'Blocks per group')
	if [ "$bc" -gt $((bytes / bs)) ] || [ "$bc" -le $((bytes / bs - ${bpg:-0})) ]; then
		echo "block count $bc does not fit a $bytes-byte target"
	fi
	# The type's features.
	case $type in
	ext2)
		case " $2 " in
		*' -j '* | *' -J '* | *has_journal*) ;;
		*) ! has_feature "$h" has_journal || echo "ext2 with has_journal" ;;
		esac ;;
	ext3)
		has_feature "$h" extent && echo "ext3 with extent" ;;
	ext4 | -)
		case " $2 " in *'^extent'*) ;; *) has_feature "$h" extent || echo "ext4 without extent" ;; esac ;;
	esac
	if [ "$type" != ext2 ] && [ "$bc" -ge 2048 ]; then
		case " $2 " in
		*'^has_journal'*) ;;
		*) has_feature "$h" has_journal || echo "$type without has_journal" ;;
		esac
	fi
	for ((i = 0; i < ${#words[@]}; i++)); do
		w=${words[i]}
		v=${words[i + 1]:-}
		case $w in
		-b) [ "$bs" = "$v" ] || echo "-b $v: block size is $bs" ;;
		-I) [ "$(hv "$h" 'Inode size')" = "$v" ] || echo "-I $v: inode size is $(hv "$h" 'Inode size')" ;;
		-N) [ "$ic" -ge "$v" ] || echo "-N $v: inode count is $ic" ;;
		-i)
			awk -v ic="$ic" -v b="$((bc * bs))" -v r="$v" -v ipg="$(hv "$h" 'Inodes per group')" \
				'BEGIN { e = b / r; exit !(ic >= e * 0.9 && ic <= e * 1.1 + ipg) }' ||
				echo "-i $v: inode count $ic for $((bc * bs)) bytes" ;;
		-m)
			local want
			want=$(awk -v p="$v" -v b="$bc" 'BEGIN { printf "%d", p * b / 100.0 }')
			[ "$(hv "$h" 'Reserved block count')" = "$want" ] ||
				echo "-m $v: reserved block count $(hv "$h" 'Reserved block count'), want $want" ;;
		# dumpe2fs prints no flex group size for -G 1 (log2 = 0).
		-G) [ "$(hv "$h" 'Flex block group size')" = "$v" ] || { [ "$v" = 1 ] && [ -z "$(hv "$h" 'Flex block group size')" ]; } ||
			echo "-G $v: flex block group size $(hv "$h" 'Flex block group size')" ;;
		-L) [ "$(hv "$h" 'Filesystem volume name')" = "$v" ] || echo "-L $v: volume name $(hv "$h" 'Filesystem volume name')" ;;
		-M) [ "$(hv "$h" 'Last mounted on')" = "$v" ] || echo "-M $v: last mounted on $(hv "$h" 'Last mounted on')" ;;
		-e)
			local e
			case $v in continue) e=Continue ;; remount-ro) e='Remount read-only' ;; panic) e=Panic ;; *) e=$v ;; esac
			[ "$(hv "$h" 'Errors behavior')" = "$e" ] || echo "-e $v: errors behavior $(hv "$h" 'Errors behavior')" ;;
		-j) has_feature "$h" has_journal || echo "-j: no has_journal" ;;
		-J)
			case $v in size=*)
				[ "$(hv "$h" 'Total journal size')" = "${v#size=}M" ] ||
					echo "-J $v: journal size $(hv "$h" 'Total journal size')" ;;
			esac ;;
		-O)
			local IFS=,
			for f in $v; do
				case $f in
				^*) ! has_feature "$h" "${f#^}" || echo "-O $f: ${f#^} is still on" ;;
				extents) has_feature "$h" extent || echo "-O $f: extent is off" ;;
				*) has_feature "$h" "$f" || echo "-O $f: $f is off" ;;
				esac
			done
			unset IFS ;;
		-E)
			local IFS=,
			for f in $v; do
				case $f in
				stride=*) [ "$(hv "$h" 'RAID stride')" = "${f#*=}" ] || echo "-E $f: RAID stride $(hv "$h" 'RAID stride')" ;;
				stripe_width=* | stripe-width=*)
					[ "$(hv "$h" 'RAID stripe width')" = "${f#*=}" ] ||
						echo "-E $f: RAID stripe width $(hv "$h" 'RAID stripe width')" ;;
				num_backup_sb=*)
					local n
					n=$(hv "$h" 'Backup block groups' | wc -w)
					[ "$n" = "${f#*=}" ] || echo "-E $f: $n backup groups ($(hv "$h" 'Backup block groups'))" ;;
				esac
			done
			unset IFS ;;
		esac
	done
}

# trim STRING: without leading and trailing blanks, runs of blanks squeezed.
trim() {
	local -a w
	read -r -a w <<<"$1"
	printf '%s' "${w[*]}"
}

indent() { sed 's/^/    /' | head -n "${1:-12}"; }

# ------------------------------------------------------------------ one case

run_case() {
	local name=$1 type=$2 size=$3 flags=$4 opts=$5
	local layout=1 reasons=() d=$T/$name ours=$T/$name/ours ref=$T/$name/ref
	local extra=""
	case ",$flags," in *,nolayout,*) layout=0 ;; esac
	rm -rf "$d"
	mkdir -p "$d"
	build_args "$opts"
	local -a tref=(-t "$type") tours=(-t "$type")
	if [ "$type" = - ]; then
		tref=(-t ext4)
		tours=()
	fi
	local io=""
	if [[ $opts =~ (^|[ ,])offset=([0-9]+) ]]; then
		io="?offset=${BASH_REMATCH[2]}"
	fi
	side "$ref" "$size" "$layout" 0 "$io" mke2fs "${tref[@]}" "${ARGS[@]}" &
	local rpid=$!
	side "$ours" "$size" "$layout" 1 "$io" "$MKE4FS" "${tours[@]}" "${ARGS[@]}" &
	local opid=$!
	wait "$rpid" || true
	wait "$opid" || true

	local rrc orc
	rrc=$(cat "$ref/mkfs.rc" 2>/dev/null || echo 98)
	orc=$(cat "$ours/mkfs.rc" 2>/dev/null || echo 98)
	if [ "$rrc" = 99 ] || [ "$orc" = 99 ]; then
		SKIPPED=$((SKIPPED + 1))
		printf 'SKIP %s: cannot make a %s sparse file here: %s\n' "$name" "$size" "$(head -n 1 "$ref/mkfs.log")"
		rm -rf "$d"
		return 0
	fi
	local refmsg oursmsg
	refmsg=$(grep -v '^mke2fs [0-9]' "$ref/mkfs.log" | sed '/^[[:space:]]*$/d' | head -n 2 | tr '\n' ' ' | cut -c1-160)
	oursmsg=$(grep -v '^mke4fs [0-9]' "$ours/mkfs.log" | sed '/^[[:space:]]*$/d' | head -n 2 | tr '\n' ' ' | cut -c1-160)
	case ",$flags," in
	*,refuse,*)
		if [ "$rrc" != 0 ] && [ "$orc" != 0 ]; then
			PASS=$((PASS + 1))
			printf 'PASS %s: both refuse (mke2fs: %s| mke4fs: %s)\n' "$name" "$refmsg" "$oursmsg"
		else
			FAIL=$((FAIL + 1))
			FAILED_NAMES+=("$name")
			printf 'FAIL %s: must be refused; mke2fs exited %s (%s), mke4fs exited %s (%s)\n' \
				"$name" "$rrc" "$refmsg" "$orc" "$oursmsg"
		fi
		rm -rf "$d"
		return 0 ;;
	esac
	if [ "$orc" != 0 ] && [ "$rrc" != 0 ]; then
		reasons+=("both refuse (mke2fs: $refmsg| mke4fs: $oursmsg): the case is wrong")
	elif [ "$orc" != 0 ]; then
		reasons+=("mke4fs exited $orc: $oursmsg")
	elif [ "$rrc" != 0 ]; then
		reasons+=("mke2fs refuses ($refmsg) but mke4fs accepts")
	fi

	if [ "$orc" = 0 ]; then
		local frc
		frc=$(cat "$ours/fsck.rc" 2>/dev/null || echo "?")
		if [ "$frc" != 0 ]; then
			reasons+=("e2fsck -fn exited $frc")
			extra+="$(grep -v '^e2fsck [0-9]' "$ours/fsck.log" | indent 10)"$'\n'
		fi
		if [ "$(cat "$ours/h.rc")" != 0 ]; then
			reasons+=("dumpe2fs -h failed: $(head -n 2 "$ours/h.err" | tr '\n' ' ')")
		else
			local a
			a=$(check_asked "$type" "$opts" "$ours/h" "$(cat "$ours/bytes")")
			if [ -n "$a" ]; then
				reasons+=("not as asked: $(printf '%s' "$a" | tr '\n' ';' | sed 's/;/; /g')")
			fi
		fi
	fi

	if [ "$orc" = 0 ] && [ "$rrc" = 0 ]; then
		sed -E -f "$KNOWN" "$ref/h" >"$ref/h.f"
		sed -E -f "$KNOWN" "$ours/h" >"$ours/h.f"
		if ! cmp -s "$ref/h.f" "$ours/h.f"; then
			local fd
			fd=$(field_diff "$ref/h.f" "$ours/h.f")
			reasons+=("header differs: $(printf '%s' "$fd" | tr '\n' ';' | sed 's/;/; /g')")
		fi
		if [ "$layout" = 1 ]; then
			COMPARED_FULL=$((COMPARED_FULL + 1))
			sed -E -f "$KNOWN" "$ref/full" >"$ref/full.f"
			sed -E -f "$KNOWN" "$ours/full" >"$ours/full.f"
			if cmp -s "$ref/full.f" "$ours/full.f"; then
				IDENTICAL_FULL=$((IDENTICAL_FULL + 1))
			else
				local nd
				nd=$(diff "$ref/full.f" "$ours/full.f" | grep -c '^[<>]' || true)
				reasons+=("group layout differs ($nd lines of dumpe2fs differ; < mke2fs, > mke4fs)")
				if [ -n "${T2600_VERBOSE:-}" ]; then
					extra+="$(diff "$ref/full.f" "$ours/full.f" | indent 200)"$'\n'
				else
					extra+="$(diff "$ref/full.f" "$ours/full.f" | grep -v '^---' | indent 12)"$'\n'
				fi
			fi
		fi
	fi

	# -E root_owner=UID:GID: the root directory's owner.
	if [ "$orc" = 0 ] && [ -n "$REAL_DEBUGFS" ] && [[ $opts =~ root_owner=([0-9]+):([0-9]+) ]]; then
		local owner
		owner=$(awk '/^User:/ { print $2 ":" $4; exit }' "$ours/inodes")
		[ "$owner" = "${BASH_REMATCH[1]}:${BASH_REMATCH[2]}" ] ||
			reasons+=("not as asked: root_owner=${BASH_REMATCH[1]}:${BASH_REMATCH[2]}: the root directory is owned by $owner")
	fi

	# The special inodes (mode, owner, size, links, flags, block maps).
	if [ "$orc" = 0 ] && [ "$rrc" = 0 ] && [ "$layout" = 1 ] && [ -n "$REAL_DEBUGFS" ]; then
		grep -v '^debugfs [0-9]' "$ref/inodes" | sed -E -f "$KNOWN" >"$ref/inodes.f"
		grep -v '^debugfs [0-9]' "$ours/inodes" | sed -E -f "$KNOWN" >"$ours/inodes.f"
		if ! cmp -s "$ref/inodes.f" "$ours/inodes.f"; then
			reasons+=("special inodes differ (debugfs stat <2> <7> <8> <11> <12>)")
			extra+="$(diff "$ref/inodes.f" "$ours/inodes.f" | grep -v '^---' | cut -c1-200 | indent 12)"$'\n'
		fi
	fi

	if [ ${#reasons[@]} -eq 0 ]; then
		PASS=$((PASS + 1))
		if [ "$layout" = 1 ]; then
			printf 'PASS %s: identical dumpe2fs, e2fsck clean\n' "$name"
		else
			printf 'PASS %s: identical dumpe2fs -h, e2fsck clean (layout not compared: nolayout)\n' "$name"
		fi
	else
		FAIL=$((FAIL + 1))
		FAILED_NAMES+=("$name")
		local r
		r=$(printf '%s | ' "${reasons[@]}")
		printf 'FAIL %s: %s\n' "$name" "${r% | }"
		if [ -n "$extra" ]; then
			printf '%s' "$extra" | sed '/^$/d'
		fi
	fi
	rm -rf "$d"
}

# ------------------------------------------------------------------ main

start=$(date +%s)
ncases=0
mapfile -t lines <<<"$CASES"
for line in "${lines[@]}"; do
	IFS='|' read -r name type size flags opts <<<"$line"
	name=$(trim "$name")
	case $name in '' | '#'*) continue ;; esac
	type=$(trim "$type")
	size=$(trim "$size")
	flags=$(trim "$flags")
	opts=$(trim "$opts")
	if [ -n "${T2600_CASES:-}" ] && ! [[ $name =~ $T2600_CASES ]]; then
		continue
	fi
	case ",$flags," in
	*,huge,*)
		if [ -n "${T2600_QUICK:-}" ]; then
			SKIPPED=$((SKIPPED + 1))
			printf 'SKIP %s: huge case (T2600_QUICK)\n' "$name"
			continue
		fi ;;
	esac
	ncases=$((ncases + 1))
	run_case "$name" "$type" "$size" "$flags" "$opts" </dev/null
done

printf '%d cases: %d passed, %d failed, %d skipped; full dumpe2fs identical for %d of %d compared; %d s\n' \
	"$ncases" "$PASS" "$FAIL" "$SKIPPED" "$IDENTICAL_FULL" "$COMPARED_FULL" $(($(date +%s) - start))
if [ "$FAIL" -ne 0 ]; then
	printf 'failed: %s\n' "${FAILED_NAMES[*]}"
	exit 1
fi
exit 0
