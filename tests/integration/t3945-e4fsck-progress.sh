#!/bin/bash
# t3945-e4fsck-progress.sh - e4fsck -C: completion lines "pass current max
# device" on the given descriptor for passes 1-5 (well formed, current
# never above max nor going back, each pass from 0 to max, a few lines a
# second at most), shaped like e2fsck -C's on the same image (the same
# passes, the same directory-block and directory counts); -C changes
# neither the output nor the exit status (-n, -p, -y, damaged images,
# -m 1 and 4); -C 0 draws nothing when stdout is not a terminal, and on a
# terminal (script(1)) draws e2fsck's bar, erased before anything else is
# printed; a bad descriptor exits 8 as e2fsck; "-C -fd" waits for SIGUSR1
# and SIGUSR2 stops the lines.

set -eu

# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname -- "$0")/../lib/common.sh"

need_cmd mke2fs e2fsck debugfs perl
[ -x "$E4FSCK" ] || skip "e4fsck is not built ($E4FSCK)"
make_tmpdir
cd "$T"

failed=0
ok() { echo "PASS $*"; }
bad() { echo "FAIL $*"; failed=1; }

# check_lines FILE DEVICE MODE: the completion lines' grammar and order.
# MODE "full": passes 1-5 each from 0 to max; "partial": any passes (a
# report started or stopped by a signal).  Prints "passes=1,2,3,4,5
# max2=N max3=N" and, per pass, "lines<pass>=N"; problems on stderr, exit 1.
check_lines() {
	perl -e '
		my ($file, $dev, $mode) = @ARGV;
		open(my $f, "<", $file) or die "$file: $!\n";
		my (@order, %max, %last, %lines, $err);
		while (my $l = <$f>) {
			chomp $l;
			if ($l !~ /^([1-5]) (\d+) (\d+) (.+)$/ || $4 ne $dev) {
				print STDERR "malformed line: [$l]\n"; $err = 1; next;
			}
			my ($p, $cur, $max) = ($1, $2, $3);
			if (!@order || $order[-1] != $p) {
				if (@order && $p < $order[-1] || exists $max{$p}) {
					print STDERR "pass $p out of order: [$l]\n"; $err = 1;
				}
				push @order, $p;
				$max{$p} = $max;
				if ($mode eq "full" && $cur != 0) {
					print STDERR "pass $p starts at $cur: [$l]\n"; $err = 1;
				}
			} elsif ($cur < $last{$p}) {
				print STDERR "pass $p goes back: [$l]\n"; $err = 1;
			}
			if ($max != $max{$p}) { print STDERR "pass $p max changes: [$l]\n"; $err = 1; }
			if ($cur > $max) { print STDERR "current above max: [$l]\n"; $err = 1; }
			$last{$p} = $cur;
			$lines{$p}++;
		}
		for my $p (@order) {
			if ($last{$p} != $max{$p} && ($mode eq "full" || $p != $order[-1])) {
				print STDERR "pass $p ends at $last{$p} of $max{$p}\n"; $err = 1;
			}
		}
		if ($mode eq "full" && join(",", @order) ne "1,2,3,4,5") {
			print STDERR "passes: @order\n"; $err = 1;
		}
		printf "passes=%s max2=%s max3=%s\n", join(",", @order), $max{2} // "-", $max{3} // "-";
		printf "lines%d=%d\n", $_, $lines{$_} for @order;
		exit($err ? 1 : 0);
	' "$@"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A few thousand files in 30 directories.
mkdir src
for d in $(seq 1 30); do
	mkdir "src/d$d"
	(cd "src/d$d" && touch $(seq -f f%g 1 100))
done
mke2fs -q -F -t ext4 -N 8192 -d src fs.img 32M >/dev/null 2>&1 || skip "mke2fs -d is not available"

# The oracle: e2fsck's lines have the shape checked here.
e2rc=0
e2fsck -fn -C 3 fs.img 3>e2.prog >/dev/null 2>&1 || e2rc=$?
if e2shape=$(check_lines e2.prog fs.img full 2>e2.err); then
	ok "e2fsck -C 3 lines have the checked shape (rc $e2rc)"
else
	bad "e2fsck -C 3 lines do not fit the check:"; sed 's/^/    /' e2.err
fi

# run_same NAME IMAGE ARGS...: e4fsck with -C 3 and without on copies of
# IMAGE give the same output and exit status; the lines are checked.
run_same() {
	local name=$1 image=$2 rc_plain=0 rc_prog=0 t0 t1
	shift 2
	cp "$image" plain.img
	cp "$image" prog.img
	"$E4FSCK" "$@" plain.img >plain.out 2>&1 </dev/null || rc_plain=$?
	t0=$(now_ms)
	"$E4FSCK" "$@" -C 3 prog.img 3>prog.lines >prog.out 2>&1 </dev/null || rc_prog=$?
	t1=$(now_ms)
	sed -i 's/prog\.img/plain.img/g' prog.out
	if [ "$rc_plain" != "$rc_prog" ] || ! cmp -s plain.out prog.out; then
		bad "$name: -C 3 changes the result (exit $rc_plain vs $rc_prog)"
		diff plain.out prog.out | head -n 10 | sed 's/^/    /'
		return
	fi
	if ! shape=$(check_lines prog.lines prog.img full 2>prog.err); then
		bad "$name: bad completion lines"; sed 's/^/    /' prog.err | head -n 10
		return
	fi
	# A few lines a second, whatever the number of units (pass 4 has thousands).
	local limit=$((3 + 8 * ((t1 - t0) / 1000 + 1)))
	local most
	most=$(echo "$shape" | sed -n 's/^lines[0-9]=//p' | sort -n | tail -n 1)
	if [ "$most" -gt "$limit" ]; then
		bad "$name: $most lines in one pass in $((t1 - t0)) ms (at most $limit)"
		return
	fi
	ok "$name (exit $rc_prog, $(echo "$shape" | head -n 1))"
	last_shape=$shape
}

last_shape=
run_same "-fn -m 1" fs.img -fn -m 1
e4shape=$last_shape
run_same "-fn -m 4" fs.img -fn -m 4
run_same "-fp" fs.img -fp
run_same "-fy" fs.img -fy

# Same passes and the same units as e2fsck in passes 2 and 3.
want=$(echo "$e2shape" | head -n 1)
have=$(echo "$e4shape" | head -n 1)
if [ -n "$have" ] && [ "$want" = "$have" ]; then
	ok "shape as e2fsck's: $have"
else
	bad "shape: e2fsck '$want', e4fsck '$have'"
fi

# Damaged: every file's link count wrong, so pass 4 prints a few hundred KiB.
for d in $(seq 1 30); do
	for f in $(seq 1 100); do echo "sif /d$d/f$f links_count 2"; done
done >damage.cmds
cp fs.img damaged.img
debugfs -w -f damage.cmds damaged.img >/dev/null 2>&1
run_same "-fn damaged" damaged.img -fn
run_same "-fy damaged" damaged.img -fy
run_same "-fp damaged" damaged.img -fp

# -C 0 without a terminal: nothing extra.
rc_a=0 rc_b=0
"$E4FSCK" -fn fs.img >plain0.out 2>&1 || rc_a=$?
"$E4FSCK" -fn -C 0 fs.img >bar0.out 2>&1 || rc_b=$?
if [ "$rc_a" = "$rc_b" ] && cmp -s plain0.out bar0.out; then
	ok "-C 0 with stdout not a terminal prints nothing extra"
else
	bad "-C 0 with stdout not a terminal changes the output"; diff plain0.out bar0.out | cat -A | head -n 5
fi

# A descriptor that is not open: exit 8, as e2fsck.
exec 9>&-
rc_e2=0 rc_e4=0
e2fsck -fn -C 9 fs.img >/dev/null 2>&1 || rc_e2=$?
"$E4FSCK" -fn -C 9 fs.img >badfd.out 2>&1 || rc_e4=$?
if [ "$rc_e4" = "$rc_e2" ] && grep -q "Invalid completion information file descriptor" badfd.out; then
	ok "-C on a closed descriptor exits $rc_e4"
else
	bad "-C on a closed descriptor: exit $rc_e4 (e2fsck $rc_e2)"; head -n 3 badfd.out
fi

# "-C -3": held until SIGUSR1.
"$E4FSCK" -fn -C -3 fs.img 3>held.prog >/dev/null 2>&1 || true
if [ ! -s held.prog ]; then
	ok "-C -3 writes nothing without SIGUSR1"
else
	bad "-C -3 wrote lines without SIGUSR1"
fi

# signal_run SIG ARGS: e4fsck -fn ARGS on damaged.img, its stdout a FIFO
# nobody reads, so it blocks writing pass 4's messages; then SIG, then the
# output is drained.  Returns 2 when the block cannot be seen in /proc.
signal_run() {
	local sig=$1 pid i blocked=0 drain
	shift
	rm -f out.fifo
	mkfifo out.fifo
	exec 5<>out.fifo
	"$E4FSCK" -fn "$@" damaged.img 3>sig.prog >out.fifo 2>/dev/null 5>&- &
	pid=$!
	for i in $(seq 1 300); do
		if grep -q pipe_write "/proc/$pid/wchan" 2>/dev/null; then
			blocked=1
			break
		fi
		sleep 0.1
	done
	[ "$blocked" = 1 ] && kill "-$sig" "$pid"
	cat out.fifo >/dev/null 5>&- &
	drain=$!
	wait "$pid" || true
	exec 5>&-
	wait "$drain" || true
	[ "$blocked" = 1 ] || return 2
}

src=0
signal_run USR1 -C -3 || src=$?
if [ "$src" = 2 ]; then
	note "cannot see e4fsck blocked on its output in /proc/PID/wchan: signals not checked"
else
	if shape=$(check_lines sig.prog damaged.img partial 2>sig.err) && [ "$(echo "$shape" | head -n 1 | cut -d' ' -f1)" = "passes=4,5" ]; then
		ok "SIGUSR1 during pass 4 starts the lines: $(echo "$shape" | head -n 1)"
	else
		bad "SIGUSR1 during pass 4: $(echo "$shape" | head -n 1)"; sed 's/^/    /' sig.err | head -n 5
	fi
	signal_run USR2 -C 3 || true
	if shape=$(check_lines sig.prog damaged.img partial 2>sig.err) &&
	   echo "$shape" | head -n 1 | grep -q "^passes=1,2,3\(,4\)\? "; then
		ok "SIGUSR2 during pass 4 stops the lines: $(echo "$shape" | head -n 1)"
	else
		bad "SIGUSR2 during pass 4: $(echo "$shape" | head -n 1)"; sed 's/^/    /' sig.err | head -n 5
	fi
fi

# -C 0 on a terminal: the bar as e2fsck draws it, erased before other output.
# check_bar FILE PLAIN DEVICE: every bar drawn is followed by another or by
# the erasing blanks; without them the output is PLAIN.  Prints the count
# of bars and the bar's width.
check_bar() {
	perl -e '
		my ($file, $plain, $dev) = @ARGV;
		local $/;
		open(my $f, "<", $file) or die; my $s = <$f>;
		open(my $g, "<", $plain) or die; my $p = <$g>;
		$s =~ s/\r\n/\n/g;
		my $bar = qr/\Q$dev\E: \|([= ]*)[-\\|\/] [ \d]\d*\.\d%   \r/;
		my $erase = qr/ {79}\r/;
		my ($n, $width) = (0, -1);
		while ($s =~ /$bar/g) {
			$n++;
			$width = length($1);
			my $rest = substr($s, pos($s));
			if ($rest !~ /^(?:$bar|$erase)/) {
				print STDERR "bar not erased before: [", substr($rest, 0, 40), "]\n";
				exit 1;
			}
		}
		$s =~ s/$bar//g;
		$s =~ s/$erase//g;
		if ($s ne $p) { print STDERR "output differs once the bars are removed\n"; exit 1; }
		if (!$n) { print STDERR "no bar drawn\n"; exit 1; }
		print "bars=$n width=$width\n";
	' "$@"
}

if command -v script >/dev/null 2>&1 && script -qc true /dev/null </dev/null >/dev/null 2>&1; then
	e2fsck -fn fs.img >plain2.out 2>&1 || true
	script -qc "e2fsck -fn -C 0 fs.img" /dev/null </dev/null >tty2.out 2>&1 || true
	script -qc "'$E4FSCK' -fn -C 0 fs.img" /dev/null </dev/null >tty4.out 2>&1 || true
	if e2bar=$(check_bar tty2.out plain2.out fs.img 2>bar.err); then
		ok "e2fsck's bar fits the check: $e2bar"
	else
		bad "e2fsck's bar does not fit the check"; sed 's/^/    /' bar.err
	fi
	if e4bar=$(check_bar tty4.out plain0.out fs.img 2>bar.err); then
		if [ "${e4bar#* }" = "${e2bar#* }" ]; then
			ok "-C 0 on a terminal: $e4bar, erased, as wide as e2fsck's"
		else
			bad "-C 0 bar: $e4bar, e2fsck: $e2bar"
		fi
	else
		bad "-C 0 on a terminal"; sed 's/^/    /' bar.err; cat -A tty4.out | head -n 5
	fi
else
	note "script(1) is missing or has no terminal to give: the bar is not checked"
fi

exit "$failed"
