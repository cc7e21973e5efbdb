# SPDX-License-Identifier: Apache-2.0
# A busy Perl workload for the benchmarks: DEPTH nested Perl subs, then a
# loop of pure-Perl arithmetic until SECONDS have passed (or SIGTERM). It
# prints "ready" once running.
# Usage: perl perl_loop.pl SECONDS DEPTH
use strict;
use warnings;
no warnings 'recursion';

my $stop = 0;
$SIG{TERM} = sub { $stop = 1 };

sub leaf_loop {
    my ($deadline) = @_;
    my $x = 1;
    while (!$stop && time() < $deadline) {
        for (1 .. 1000) { $x = ($x * 1103515245 + 12345) & 0xFFFFFFFF; }
    }
    return $x;
}

sub nest {
    my ($n, $deadline) = @_;
    return leaf_loop($deadline) if $n <= 1;
    return nest($n - 1, $deadline) + 1;
}

$| = 1;
print "ready\n";
nest($ARGV[1], time() + $ARGV[0]);
