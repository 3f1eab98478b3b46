#!/bin/sh
# make-tree.sh OUT KIND
#
# Build a source tree for run-populate.sh in directory OUT (which must not
# exist yet; it is built under OUT.tmp and renamed at the end, so a
# half-built tree is never taken for a whole one).
#
# KIND
#   usr    a copy (cp -a) of /usr/include and /usr/share/doc: real headers
#          and documentation, mostly small files in many directories.
#   synth  a synthetic tree, the same bytes for the same parameters
#          (everything is drawn from one seeded generator):
#            - small files, 0-16 KiB (about 12% of the bytes; 1 in 10 empty),
#              medium files 16 KiB-1 MiB (28%), large files 1-200 MiB (60%;
#              one of 150 MiB when that share is at least 450 MiB), sizes
#              log-uniform within each class, spread over a tree of
#              directories about 40 files each;
#            - sparse/: files with 3-12 data regions of 4 KiB-1 MiB at
#              random offsets in up to 256 MiB, and one that is all hole;
#            - big/: one directory with SYNTH_BIG_DIR entries (0-2 KiB files,
#              a quarter of them empty);
#            - deep/: a path 30 directories deep with files at every level;
#            - links/: hard links to 200 files elsewhere in the tree, and
#              300 symbolic links (short ones, stored in the inode, and
#              long ones, which need a block).
#          File contents are pseudo-random (so no block is all zeros,
#          which mke2fs -d would leave as a hole).
#
# Environment (synth):
#   SYNTH_MB       total bytes of file data, in MiB (default 1536); the big
#                  directory's files count towards it
#   SYNTH_BIG_DIR  entries in big/ (default 100000)
#   SYNTH_SEED     generator seed (default 1)
set -eu

usage() { echo "usage: make-tree.sh OUT usr|synth" >&2; exit 2; }
[ $# = 2 ] || usage
OUT=$1
KIND=$2
[ ! -e "$OUT" ] || { echo "make-tree: $OUT exists; remove it first" >&2; exit 1; }
TMP=$OUT.tmp
rm -rf "$TMP"
mkdir -p "$TMP"

case $KIND in
usr)
	for d in /usr/include /usr/share/doc; do
		[ -d "$d" ] || { echo "make-tree: $d is missing" >&2; exit 1; }
	done
	cp -a /usr/include "$TMP/include"
	cp -a /usr/share/doc "$TMP/doc"
	;;
synth)
	command -v perl >/dev/null 2>&1 || { echo "make-tree: perl is needed for KIND synth" >&2; exit 1; }
	perl -e '
use strict;
use warnings;

my ($root, $total_mb, $big_n, $seed) = @ARGV;
my $MiB = 1 << 20;
my $budget = $total_mb * $MiB;

# Park-Miller "minimal standard" generator: every product stays below 2^47,
# so it is exact in any perl and the tree depends on nothing but the seed
my $st = 1 + $seed % 2147483646;
sub rnd31 { $st = ($st * 48271) % 2147483647; return $st }
rnd31() for 1 .. 16;    # small seeds give small first outputs
sub uniform { return (rnd31() - 1) / 2147483646.0 }        # [0, 1)
sub below { return int(uniform() * $_[0]) }                  # [0, n)
sub loguni { my ($lo, $hi) = @_; return int(exp(log($lo) + uniform() * (log($hi) - log($lo)))) }

# 1 MiB of pseudo-random bytes; a file is a window of it rotated by its index
my $pool = pack("N*", map { rnd31() } 1 .. ($MiB / 4));
$pool .= $pool;
my $nfile = 0;
sub put {
	my ($fh, $len) = @_;
	my $off = ($nfile * 4099) % $MiB;
	while ($len > 0) {
		my $n = $len < $MiB ? $len : $MiB;
		my $chunk = substr($pool, $off, $n);
		substr($chunk, 0, 8) = pack("NN", $nfile, $len) if $n >= 8;
		defined(syswrite($fh, $chunk)) or die "write: $!";
		$len -= $n;
		$off = ($off + 7919) % $MiB;
	}
}
sub mkfile {
	my ($path, $size) = @_;
	open(my $fh, ">", $path) or die "$path: $!";
	put($fh, $size);
	close($fh) or die "$path: $!";
	$nfile++;
	$budget -= $size;
}

# big/: the wide directory
mkdir "$root/big" or die;
for my $i (1 .. $big_n) {
	my $size = below(4) == 0 ? 0 : 1 + below(2048);
	mkfile(sprintf("%s/big/entry-%06d.dat", $root, $i), $size);
}

# deep/: 30 levels
my $p = "$root/deep";
mkdir $p or die;
for my $l (1 .. 30) {
	$p .= sprintf("/level%02d", $l);
	mkdir $p or die;
	mkfile("$p/file-a.txt", loguni(64, 16384));
	mkfile("$p/file-b.bin", loguni(16384, 262144)) if $l % 5 == 0;
}

# sparse/
mkdir "$root/sparse" or die;
for my $i (1 .. 8) {
	my $path = "$root/sparse/sparse-$i.img";
	open(my $fh, ">", $path) or die "$path: $!";
	my $span = loguni(16 * $MiB, 256 * $MiB);
	my $regions = 3 + below(10);
	my @offs = sort { $a <=> $b } map { below($span >> 12) << 12 } 1 .. $regions;
	my $end = 0;
	for my $o (@offs) {
		$o = $end if $o < $end;
		my $len = loguni(4096, $MiB) & ~4095 || 4096;
		sysseek($fh, $o, 0) or die;
		put($fh, $len);
		$budget -= $len;
		$end = $o + $len;
	}
	truncate($fh, $span > $end ? $span : $end) or die;
	close($fh);
	$nfile++;
}
open(my $hole, ">", "$root/sparse/all-hole.img") or die;
truncate($hole, 64 * $MiB) or die;
close($hole);

# the rest: small, medium and large files in a tree of directories
$budget = 0 if $budget < 0;
my ($small_b, $medium_b, $large_b) = (int($budget * 0.12), int($budget * 0.28), 0);
$large_b = $budget - $small_b - $medium_b;
my @sizes;
while ($small_b > 0) {
	my $s = below(10) == 0 ? 0 : loguni(64, 16384);
	$s = $small_b if $s > $small_b;
	push @sizes, $s;
	$small_b -= $s > 0 ? $s : 1024;
}
while ($medium_b > 16384) {
	my $s = loguni(16384, $MiB);
	$s = $medium_b if $s > $medium_b;
	push @sizes, $s;
	$medium_b -= $s;
}
my @large;
if ($large_b >= 450 * $MiB) {
	push @large, 150 * $MiB;
	$large_b -= 150 * $MiB;
}
while ($large_b >= $MiB) {
	my $s = loguni($MiB, 200 * $MiB);
	$s = $large_b if $s > $large_b;
	push @large, $s;
	$large_b -= $s;
}
# shuffle the small and medium files together
for (my $i = $#sizes; $i > 0; $i--) {
	my $j = below($i + 1);
	@sizes[$i, $j] = @sizes[$j, $i];
}
my $ndirs = int(@sizes / 40) + 1;
my @dirs = ("$root/tree");
mkdir $dirs[0] or die;
for my $d (1 .. $ndirs - 1) {
	my $parent = $dirs[below(scalar @dirs)];
	my $path = sprintf("%s/dir%05d", $parent, $d);
	mkdir $path or die "$path: $!";
	push @dirs, $path;
}
my @regular;
my @ext = qw(c h txt html png o json md);
for my $i (0 .. $#sizes) {
	my $path = sprintf("%s/f%06d.%s", $dirs[below(scalar @dirs)], $i, $ext[below(scalar @ext)]);
	mkfile($path, $sizes[$i]);
	push @regular, $path;
}
mkdir "$root/data" or die;
for my $i (0 .. $#large) {
	my $dir = below(3) == 0 ? $dirs[below(scalar @dirs)] : "$root/data";
	mkfile(sprintf("%s/large%03d.bin", $dir, $i), $large[$i]);
}

# links/
mkdir "$root/links" or die;
for my $i (1 .. 200) {
	last unless @regular;
	my $target = $regular[below(scalar @regular)];
	link($target, "$root/links/hard$i") or die "link $target: $!";
}
for my $i (1 .. 300) {
	last unless @regular;
	my $target = $regular[below(scalar @regular)];
	my $rel = substr($target, length($root) + 1);
	# odd: a short target (kept in the inode); even: one over 60 bytes (a block)
	my $t = $i % 2 ? "../$rel" : "../" . ("./" x 40) . $rel;
	symlink($t, "$root/links/sym$i") or die "symlink: $!";
}
' "$TMP" "${SYNTH_MB:-1536}" "${SYNTH_BIG_DIR:-100000}" "${SYNTH_SEED:-1}"
	;;
*)
	rm -rf "$TMP"
	usage
	;;
esac
mv "$TMP" "$OUT"
echo "make-tree: $OUT: $(du -sh "$OUT" | cut -f1) allocated, $(find "$OUT" | wc -l) names"
