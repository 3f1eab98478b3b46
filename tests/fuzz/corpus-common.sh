# shellcheck shell=bash
# tests/fuzz/corpus-common.sh - what the seed-making scripts (make-corpus.sh,
# make-fsck-corpus.sh) pin so that a second run gives the same bytes: the
# time, the time zone and locale, the UUID and hash seed, file times
# ($STAMP), and a private mke2fs.conf.  Sourced, after PATH is set.

export E2FSPROGS_FAKE_TIME=1700000000 E2FSCK_TIME=1700000000
export TZ=UTC LC_ALL=C
UUID=6b1f4c2e-3d5a-4e7b-9c8d-0f1e2d3c4b5a
HASH_SEED=0d7c4e2a-9b1f-4a36-8e5d-2c7b6a5f4e3d
STAMP=@1700000000

# corpus_mke2fs_conf FILE FS_TYPES: write the private mke2fs.conf to FILE and
# export MKE2FS_CONFIG.  FS_TYPES holds the caller's fs_types stanzas after
# ext2's (its ext3 and ext4 features), one stanza line a line.
corpus_mke2fs_conf() {
	{
		cat <<'EOF'
[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 1024
	inode_size = 256
	inode_ratio = 4096
	reserved_ratio = 0

[fs_types]
	floppy = {
		inode_ratio = 4096
	}
	small = {
		inode_ratio = 4096
	}
	ext2 = {
		features = ^has_journal
	}
EOF
		printf '%s\n' "$2"
	} >"$1"
	export MKE2FS_CONFIG=$1
}
