# tests/integration/mkfs-known-differences.sed
#
# Known, documented differences between a file system made by mke4fs and
# one made by mke2fs 1.47 with the same options, the same -U and the same
# -E hash_seed=.  t2600-mke4fs-matrix.sh applies this sed -E script to BOTH
# sides' dumpe2fs output (the -h header, and the full output with the group
# lines) before comparing them.  One rule per difference, each with a
# comment saying why it is acceptable.  To accept a new difference, add a
# rule here (and say why); to stop accepting one, delete or comment it out.
#
# Header lines look like "Field name:   value" (dumpe2fs pads with spaces,
# and "Inode size:" with a tab); group lines start with "Group N:" or two
# spaces.

# Times: the two runs are made seconds apart.  mke2fs stamps s_mkfs_time,
# s_wtime and s_lastcheck with the time of the run.
/^Filesystem created:/d
/^Last mount time:/d
/^Last write time:/d
/^Last checked:/d
# Only printed when a periodic check is enabled (enable_periodic_fsck): a time.
/^Next check after:/d

# s_kbytes_written: how many bytes each tool happened to write.  mke2fs
# counts what its I/O channel wrote; mke4fs does not write runs of zeros to
# a target that already reads as zeros, so the numbers differ by design.
/^Lifetime writes:/d

# The superblock checksum covers the times above, so it differs whenever
# they do.  (Every other checksum dumpe2fs prints -- group descriptors,
# bitmaps, the journal superblock -- must still be identical.)
/^Checksum:/d

# debugfs "stat <N>" of the special inodes (root, resize, journal,
# lost+found, orphan file), compared in the same run: their times are the
# time of each run, and the inode checksum covers those times.
/^ ?(c|a|m|cr)time: 0x[0-9a-f]+/d
/^Inode checksum: 0x/d

# Decision (issue 3): a new journal on a metadata_csum file system carries
# checksum v3 (crc32c) from the start, where mke2fs 1.47 leaves it without
# and the kernel turns v3 on at the first mount anyway.  The journal
# superblock is then checksummed from birth, so e4fsck and debug4fs can
# verify it before any kernel has touched the file system.
s/^(Journal features:[[:space:]]+)journal_checksum_v3$/\1(none)/
s/^(Journal features:.*) journal_checksum_v3/\1/
/^Journal checksum( type)?:/d
