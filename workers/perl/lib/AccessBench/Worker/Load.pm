package AccessBench::Worker::Load;
# Steps under load (protocol/PROTOCOL.md, "Steps under load"), for one client in this process
# (concurrency "processes": the runner starts one worker per client): wait for the wall-clock
# barrier, then run by count or by duration, closed loop or open loop on its own arrival stream,
# every latency into the histogram. As the Python reference (src/accessbench/pyworker/load.py):
# uniform arrivals start at phase_ns; an open loop by duration starts no arrival at or after the
# duration, idles (untimed) until it has passed when its arrivals are over, and when still behind
# schedule at the end counts the arrivals due before it that it had not started as skipped.
use strict;
use warnings;
use utf8;

use Time::HiRes ();

use AccessBench::Worker::Clock qw(now_ns wall_ns sleep_until);
use AccessBench::Worker::Histogram;
use AccessBench::Worker::Schedule;

use Exporter 'import';
our @EXPORT_OK = qw(barrier run_client);

# Return when the wall clock reaches `$unix_ns` (undef: at once); untimed.
sub barrier {
    my ($unix_ns) = @_;
    return unless defined $unix_ns;
    my $left = $unix_ns - wall_ns();
    return if $left <= 0;
    sleep_until(now_ns() + $left);
}

# The one client's loop: `$op` over `$args` (cycling through them by duration). Times are ns since
# `$start`. Returns n, rows, elapsed, late, skipped, first and the histogram.
sub run_client {
    my ($op, $args, $reads, $load, $start) = @_;
    my %out = (n => 0, rows => 0, elapsed => 0, late => 0, skipped => 0, first => 0,
               histogram => AccessBench::Worker::Histogram->new);
    my $count = @$args;
    return \%out unless $count;
    my ($stop, $hist) = ($load->{duration_ns}, $out{histogram});
    my $schedule = $load->{rate} ? AccessBench::Worker::Schedule->new($load->{rate}, $load->{arrival}, $load->{seed}) : undef;
    my $phase = $schedule && $load->{arrival} eq 'uniform' ? $load->{phase_ns} : 0;
    my ($prev, $i, $rows, $late, $skipped) = (0, 0, 0, 0, 0);
    while (defined $stop ? $prev < $stop : $i < $count) {
        my ($result, $now, $latency);
        if ($schedule) {
            my $intended = $phase + $schedule->next_offset;
            last if defined $stop && $intended >= $stop;    # the arrivals are over; the trial is not
            $now = now_ns() - $start;
            if ($now < $intended) {
                sleep_until($start + $intended);
            } elsif (defined $load->{skip_ns} && $now - $intended > $load->{skip_ns}) {
                $skipped++;
                $i++;
                next;
            } elsif ($now - $intended > $load->{late_ns}) {
                $late++;
            }
            $result = $op->($args->[$i % $count]);
            $now = now_ns() - $start;
            $latency = $now - $intended;
        } else {
            $result = $op->($args->[$i % $count]);
            $now = now_ns() - $start;
            $latency = $now - $prev;
        }
        $rows += $reads ? scalar @$result : $result;
        $hist->record($latency);
        $out{first} = $latency if $i == $skipped;
        $prev = $now;
        $i++;
    }
    if ($schedule && defined $stop) {
        if ($prev < $stop) {    # an open loop lasts its duration: idle (untimed) until it has passed
            while ((my $left = $stop - (now_ns() - $start)) > 0) { Time::HiRes::sleep($left / 1e9) }
            $prev = $stop;
        } else {                # behind schedule at the end: the arrivals due before it that never started
            while ($phase + $schedule->next_offset < $stop) { $skipped++; $i++ }
        }
    }
    @out{qw(n rows elapsed late skipped)} = ($i - $skipped, $rows, $prev, $late, $skipped);
    return \%out;
}

1;
