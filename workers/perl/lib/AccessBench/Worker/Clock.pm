package AccessBench::Worker::Clock;
# The clocks: the monotonic clock in integer nanoseconds (one read per operation), the process's
# CPU time from getrusage, the wall clock for the barrier, and waiting for an instant.
#
# Time::HiRes gives clock_gettime(CLOCK_MONOTONIC) as a double of seconds (the vDSO call, no
# system call): at this machine's uptime (days) a double's spacing is below a nanosecond, so each
# read is converted to whole ns once and latencies are differences of those integers — they add
# up to elapsed_ns exactly.
use strict;
use warnings;
use utf8;

use BSD::Resource ();
use Time::HiRes qw(CLOCK_MONOTONIC CLOCK_REALTIME);

use Exporter 'import';
our @EXPORT_OK = qw(now_ns cpu_ns wall_ns sleep_until);

use constant SPIN_NS => 100_000;    # sleep until this close to an instant, then spin

sub now_ns { int(Time::HiRes::clock_gettime(CLOCK_MONOTONIC) * 1e9) }

# (user, system) CPU of this process in ns, from getrusage (microsecond resolution)
sub cpu_ns {
    my ($user, $sys) = BSD::Resource::getrusage(BSD::Resource::RUSAGE_SELF());
    return (int($user * 1e6 + 0.5) * 1000, int($sys * 1e6 + 0.5) * 1000);
}

# the wall clock as ns since 1970 (a double's spacing there is ~240 ns: enough for a barrier)
sub wall_ns { int(Time::HiRes::clock_gettime(CLOCK_REALTIME) * 1e9) }

# wait until the monotonic clock reaches `$at` ns: sleep, then spin the last SPIN_NS
sub sleep_until {
    my ($at) = @_;
    my $left = $at - now_ns();
    Time::HiRes::sleep(($left - SPIN_NS) / 1e9) if $left > SPIN_NS;
    1 while now_ns() < $at;
}

1;
