package AccessBench::Worker::Schedule;
# When each operation of an open-loop step is meant to start (src/accessbench/protocol/schedule.py):
# offsets in ns from the trial's start, the first at 0, then `at += gap` in a double, each offset
# truncated toward zero. Uniform gaps are 10^9 / rate; Poisson gaps −ln(1 − u) · 10^9 / rate with
# u from splitmix64 (pgbench -R).
use strict;
use warnings;
use utf8;

use AccessBench::Worker::Errors qw(protocol_error);
use AccessBench::Worker::Random;

sub new {
    my ($class, $rate, $arrival, $seed) = @_;
    protocol_error('rate must be positive') unless $rate > 0;
    protocol_error("unknown arrival '$arrival'") unless $arrival eq 'poisson' || $arrival eq 'uniform';
    return bless {gap => 1e9 / $rate, poisson => $arrival eq 'poisson', at => 0.0,
                  rng => AccessBench::Worker::Random->new($seed)}, $class;
}

sub next_offset {
    my ($self) = @_;
    my $offset = $self->{at};
    $self->{at} += $self->{poisson} ? -log(1.0 - $self->{rng}->unit) * $self->{gap} : $self->{gap};
    return int $offset;
}

1;
