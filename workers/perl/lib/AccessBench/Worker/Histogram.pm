package AccessBench::Worker::Histogram;
# The latency histogram of steps under load (src/accessbench/protocol/histogram.py): log-linear
# over integer nanoseconds, integer operations only, so every language files a value in the same
# bucket. v < 256 is bucket v; otherwise, with L the bit length of v, (L − 8) · 128 + (v >> (L − 8)).
# Values of 2^40 ns or more count in `overflow`.
use strict;
use warnings;
use utf8;

use constant { EXACT => 256, SUB => 128, LIMIT => 2**40 };

sub new { bless {counts => {}, overflow => 0, n => 0, min => 0, max => 0, sum => 0}, $_[0] }

sub bucket {
    my ($v) = @_;
    return $v if $v < EXACT;
    my $shift = 0;
    $shift++ while ($v >> ($shift + 8)) > 0;    # bit length − 8
    return $shift * SUB + ($v >> $shift);
}

sub record {
    my ($self, $v) = @_;
    if ($v >= LIMIT) { $self->{overflow}++ } else { $self->{counts}{bucket($v)}++ }
    $self->{min} = $v if $self->{n} == 0 || $v < $self->{min};
    $self->{max} = $v if $v > $self->{max};
    $self->{sum} += $v;
    $self->{n}++;
}

sub n { $_[0]{n} }

# the wire form: sparse [bucket, count] pairs in bucket order
sub wire {
    my ($self) = @_;
    my $c = $self->{counts};
    return {buckets => [map { [0 + $_, $c->{$_}] } sort { $a <=> $b } keys %$c], overflow => $self->{overflow},
            min => $self->{min}, max => $self->{max}, sum => $self->{sum}};
}

1;
