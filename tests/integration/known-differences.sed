# tests/integration/known-differences.sed
#
# Known, documented differences between debug4fs and e2fsprogs' debugfs,
# applied by compare-debugfs.sh to BOTH transcripts (sed -E script) before
# they are compared.  Every rule must say why the difference is acceptable.
#
# Transcript format: the merged stdout+stderr of "TOOL -f commands IMAGE";
# each command's output follows its echo line "debugfs: COMMAND".  Do not
# delete or rewrite echo lines: they are where the transcripts are split.
#
# Already handled inside compare-debugfs.sh, no rule needed here:
#   - the version banner, e.g. "debugfs 1.47.0 (5-Feb-2023)" (stderr)
#     or "debug4fs 0.1.0 (...)": deleted on both sides;
#   - a "debug4fs: " prompt echo is read as "debugfs: ".
#
# Add rules below, one per documented difference, each with its reason,
# e.g. (not active) if debug4fs deliberately fixed debugfs' grammar in
# "<12>: does not uses extent block maps":
#   s/: does not uses extent block maps$/: does not use extent block maps/

# debug4fs appends the library's description of a failure, which names the
# damaged object, to debugfs's error line: " (detail: inode 12: extent block
# 1234 has bad magic 0x0)".  debugfs prints only the first part.
s/ \(detail: .*\)$//

# On file systems without metadata_csum, debugfs 1.47's htree prints
# "htree_dump_int_block: Directory block does not have space for checksum
# ..." and a blank line for every index block; there is no checksum to
# compute there, so debug4fs prints nothing.
/^htree_dump_int_block: Directory block does not have space for checksum/{N;d}
