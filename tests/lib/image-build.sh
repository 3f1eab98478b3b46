# shellcheck shell=bash
# tests/lib/image-build.sh - what the two image builders share
# (make-images.sh, the integration-test corpus, and make-damage-images.sh,
# the small images t3970 damages).  Sourced after common.sh, with $T made.
#
#   write_mke2fs_conf FILE   a private mke2fs.conf: the images do not depend
#                            on the machine's /etc/mke2fs.conf
#   pick_workdir PREFIX KIB  $WORKDIR: $EXT4FS_IMAGE_WORKDIR when set, else
#                            /dev/shm when it has KIB KiB free (populating
#                            through the kernel, with its many fsyncs, is
#                            much cheaper in RAM), else $T
#   pick_method [NOTE]       $METHOD: "kernel" (populate over a loop mount)
#                            when root can loop-mount and --no-kernel was not
#                            given ($NO_KERNEL), else "mke2fs-d", said on
#                            stdout with NOTE appended
#   lock_outdir NAME         one builder at a time per $OUTDIR (make check
#                            runs tests in parallel), through $OUTDIR/NAME
#   run_mkfs IMG LABEL [ARG...]
#                            a fresh IMG of $SIZE made by mke2fs with the
#                            recipe's ${MKFS[@]}, UUID $uuid, hash seed $seed,
#                            time $FAKE_TIME and the label; its chatter goes
#                            to $log, shown only when it fails (returns 1)
#   populate_image NAME IMG LABEL MOUNTED_AS
#                            run the caller's `populate DIR MODE` into IMG
#                            (made by run_mkfs IMG LABEL):
#                            over a loop mount (then the last-mounted
#                            directory is set to MOUNTED_AS, so that it does
#                            not record a random temporary path), or in a
#                            staging directory that mke2fs -d copies in and
#                            e2fsck -fyD indexes; fails the test on error

write_mke2fs_conf() {
	cat >"$1" <<-'EOF'
		[defaults]
			base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
			default_mntopts = acl,user_xattr
			enable_periodic_fsck = 0
			blocksize = 4096
			inode_size = 256
			inode_ratio = 16384
			reserved_ratio = 5.0
			lazy_itable_init = false
			lazy_journal_init = false

		[fs_types]
			ext2 = {
				reserved_ratio = 5.0
			}
			ext3 = {
				features = has_journal
			}
			ext4 = {
				features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
			}
			default = {
				reserved_ratio = 5.0
			}
			floppy = {
				reserved_ratio = 5.0
			}
			small = {
				reserved_ratio = 5.0
			}
			big = {
				reserved_ratio = 5.0
			}
			huge = {
				reserved_ratio = 5.0
			}
	EOF
}

pick_workdir() {
	local prefix=$1 kib=$2
	WORKDIR=$T
	if [ -n "${EXT4FS_IMAGE_WORKDIR:-}" ]; then
		WORKDIR=$(mktemp -d "$EXT4FS_IMAGE_WORKDIR/$prefix.XXXXXX")
		at_exit "rm -rf -- '$WORKDIR'"
	elif [ -d /dev/shm ] && [ -w /dev/shm ] &&
		[ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -gt "$kib" ] 2>/dev/null; then
		WORKDIR=$(mktemp -d "/dev/shm/$prefix.XXXXXX")
		at_exit "rm -rf -- '$WORKDIR'"
	fi
}

pick_method() {
	local note=${1:+ $1}
	if [ -z "${NO_KERNEL:-}" ] && have_root_loop; then
		METHOD=kernel
	else
		METHOD=mke2fs-d
		if [ -n "${NO_KERNEL:-}" ]; then
			echo "note: --no-kernel: populating images with mke2fs -d instead of a loop mount$note"
		else
			echo "note: cannot loop-mount ($(root_loop_reason)): populating images with mke2fs -d instead$note"
		fi
	fi
}

lock_outdir() {
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$OUTDIR/$1"
		flock 9
	fi
}

run_mkfs() {
	local img=$1 label=$2
	shift 2
	rm -f -- "$img"
	truncate -s "$SIZE" "$img"
	if ! E2FSPROGS_FAKE_TIME=$FAKE_TIME MKE2FS_CONFIG=$T/mke2fs.conf \
		mke2fs -F -q "${MKFS[@]}" -U "$uuid" -L "$label" \
		-E "hash_seed=$seed,lazy_itable_init=0,lazy_journal_init=0,nodiscard" \
		"$@" "$img" >"$log" 2>&1; then
		cat "$log" >&2
		return 1
	fi
}

populate_image() {
	local name=$1 img=$2 label=$3 mounted_as=$4 m rc=0
	if [ "$METHOD" = kernel ]; then
		m="$T/mnt-$name"
		mkdir "$m"
		loop_mount "$img" "$m" || fail "cannot mount $name"
		populate "$m" kernel
		loop_umount "$m" || fail "cannot unmount $name"
		rmdir "$m"
		tune2fs -M "$mounted_as" "$img" >/dev/null 2>&1 || true
	else
		m="$T/src-$name"
		mkdir "$m"
		populate "$m" staging
		run_mkfs "$img" "$label" -d "$m" || fail "mke2fs -d failed for $name"
		# mke2fs -d makes linear directories: let e2fsck index them (exit 1 = "fixed").
		e2fsck -fyD "$img" >"$log" 2>&1 || rc=$?
		if [ "$rc" -gt 1 ]; then
			cat "$log" >&2
			fail "e2fsck -fyD failed for $name (exit $rc)"
		fi
		rm -rf -- "$m"
	fi
}
