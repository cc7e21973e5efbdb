# A known chain of Perl subs that spins in its innermost one, for
# tests/e2e/test_perl.c. Usage: perl perl_chain.pl SECONDS MODE
#   chain  main -> Report::build -> Report::row -> Report::cell (leaf)
#   anon   main -> Report::build -> an anonymous sub -> Report::cell
#   sort   main -> Report::build -> sort { Report::by_cmp } (Perl -> C -> Perl)
#   sortnamed  main -> Report::build -> sort Report::by_num (mostly sort's C code)
#   eval   main -> Report::build -> string eval -> Report::cell
#   deep   main -> Report::build -> Report::deep x 500 -> Report::cell
#   threads  three ithreads, each its own interpreter: Worker::a/b/c -> Report::cell
# Lines the test checks carry a "# at:NAME" marker: the test finds them here.
use strict;
use warnings;
no warnings "recursion"; # deep: 500 levels on purpose

package Report;

our $deadline;

sub cell {
    my $x = 0;
    while (time() < $deadline) {
        for my $i (1 .. 2000) { $x = ($x * 31 + $i) % 1000003; } # at:cell
    }
    return $x;
}

sub row {
    return cell() + 1; # at:row
}

sub by_cmp {
    cell() if time() < $deadline; # at:by_cmp
    return $a <=> $b;
}

sub by_num { $a <=> $b }

sub deep {
    my ($n) = @_;
    return cell() if $n == 0; # at:deep_leaf
    return deep($n - 1) + 1; # at:deep
}

sub build {
    my ($mode) = @_;
    # Every branch has two statements or more: perl drops the statement
    # marker (COP) of a one-statement block, and such a call reports the
    # line of the `if`, as caller() does too.
    if ($mode eq 'chain') {
        my $n = 1;
        return row() * $n; # at:build_chain
    } elsif ($mode eq 'anon') {
        my $f = sub { return cell() + 2; }; # at:anon
        return $f->(); # at:build_anon
    } elsif ($mode eq 'sort') {
        my @s = sort { by_cmp() } (3, 1, 2); # at:build_sort
        return $s[0];
    } elsif ($mode eq 'eval') {
        my $r = eval "\n\nReport::cell() + 3;\n"; # at:build_eval
        die $@ if $@;
        return $r;
    } elsif ($mode eq 'sortnamed') {
        # A named comparator (MULTICALL): most of the time in sort's C code.
        my @x = map { ($_ * 7919) % 10007 } 1 .. 20000;
        my @s;
        @s = sort by_num @x while time() < $deadline; # at:build_sortnamed
        return $s[0];
    } elsif ($mode eq 'deep') {
        my $n = 500;
        return deep($n); # at:build_deep
    }
    return sorteval() if $mode eq 'sorteval'; die "unknown mode $mode"; # at:build_sorteval
}

package Worker;

sub a { return Report::cell() + 1; } # at:worker_a
sub b { return Report::cell() + 2; } # at:worker_b
sub c { return Report::cell() + 3; } # at:worker_c

package main;

$| = 1;
$Report::deadline = time() + $ARGV[0];
syswrite(STDOUT, "ready\n");
if ($ARGV[1] eq 'threads') {
    require threads;
    my @t = map { my $f = $_; threads->create(sub { Worker->can($f)->() }) } qw(a b c);
    $_->join() for @t;
    exit(0);
}
my $r = Report::build($ARGV[1]); # at:main
exit($r < 0);

# Added below the main program: the lines above keep their numbers (the
# replay cases name them).
#   sorteval  main -> Report::build -> Report::sorteval -> sort { eval {
#          Report::cell } }: the eval block in sort's comparator runs under
#          docatch(), in a runops loop of its own
package Report;

sub sorteval {
    my @s = sort { my $r = eval { cell() }; $a <=> $b } (3, 1, 2); # at:sorteval
    return $s[0];
}
