package AccessBench::Worker::Host;
# The host: parse message → dispatch on op (and on step kind) → the loop, owned here → answer.
# One JSON object per line each way; stdout carries nothing else (STDOUT is kept for the answers
# and Perl's own STDOUT pointed at stderr, so no library can print into the protocol). A step is
# parsed and checked whole first (Step.pm), then run here: its op built by the driver, then the
# verification pass, the plain timed loop or the loop under load (Load.pm).
use strict;
use warnings;
use utf8;

use IO::Handle;

use AccessBench::Worker::Checksum qw(typed_value);
use AccessBench::Worker::Clock qw(now_ns cpu_ns);
use AccessBench::Worker::Errors qw(protocol_error unsupported error_kind);
use AccessBench::Worker::Generators qw(generate_values json_value);
use AccessBench::Worker::Histogram;
use AccessBench::Worker::Json qw(decode_line encode_line);
use AccessBench::Worker::Load qw(barrier run_client);
use AccessBench::Worker::Registry qw(load_driver method_names);
use AccessBench::Worker::Schedule;
use AccessBench::Worker::Step qw(parse_step int_field kinds_of);

use Exporter 'import';
# what the Perl pages (AccessBench::Web, docs/tier.md) share with this loop: an op under a
# connection policy, the verification pass, an error as the protocol answers it
our @EXPORT_OK = qw(policy_op verify error_of);

sub logline { print STDERR "abworker-perl: @_\n" }

sub new {
    my ($class, $method) = @_;
    my $self = bless {method => $method, driver => undef, why => undef, endpoint => undef}, $class;
    eval { $self->{driver} = load_driver($method); 1 } or do {
        my $e = $@;
        die $e unless error_kind($e) eq 'unsupported';
        $self->{why} = $e->message;
        logline($self->{why});
    };
    return $self;
}

my %OPS = map { $_ => "op_$_" } qw(hello open close bye step generate checksum histogram schedule);

sub handle {
    my ($self, $msg) = @_;
    protocol_error('not a JSON object') unless ref $msg eq 'HASH';
    unsupported($self->{why}) unless $self->{driver};
    my $op = $msg->{op} // '';
    my $method = $OPS{$op} or protocol_error("unknown op '$op'");
    return $self->$method($msg);
}

sub op_hello {
    my ($self) = @_;
    my $d = $self->{driver};
    return {
        protocol => 1, name => $self->{method}, language => 'perl',
        runtime => sprintf('Perl %vd (DBI %s)', $^V, $DBI::VERSION),
        driver => $d->driver_name, driver_version => $d->driver_version,
        methods => [method_names()],
        settings => {%{$d->settings}, %{host_settings()}},
        capabilities => {dbms => $d->dbms, kinds => [kinds_of($d)], modes => $d->modes,
                         batch => $d->batch_style, concurrency => 'processes',
                         load => {policies => $d->load_policies}},
    };
}

sub host_settings {
    return {
        timing => 'Time::HiRes::clock_gettime(CLOCK_MONOTONIC) (a double of seconds, from the vDSO) once before '
            . 'the loop and once after each operation, each read turned into integer ns (a double\'s spacing at '
            . 'this uptime is under 1 ns); latencies are differences of those integers, so they add up to '
            . 'elapsed_ns exactly; packed into the latency file after the loop',
        cpu => 'BSD::Resource::getrusage(RUSAGE_SELF) around the loop (user and system time, microsecond resolution)',
        'under load' => 'one client per worker process (the runner starts one process per client); it waits for '
            . 'start_at_unix_ns on CLOCK_REALTIME (sleep, then a spin of the last 100 µs), then runs by count or by '
            . 'duration; closed loop: latency from the end of the previous operation; open loop: its own arrival '
            . 'stream (splitmix64 from schedule_seed, uniform from phase_ns), latency from the intended start, '
            . 'ahead of time it sleeps then spins the last 100 µs, late/skipped as the protocol says; every '
            . 'latency into the log-linear histogram; commit_every only with persistent connections and by count',
    };
}

sub op_open {
    my ($self, $msg) = @_;
    my $ep = $msg->{endpoint};
    protocol_error('open needs an endpoint object') unless ref $ep eq 'HASH';
    my $d = $self->{driver};
    unsupported("$self->{method} does not reach dbms '" . ($ep->{dbms} // '') . "'")
        unless grep { $_ eq ($ep->{dbms} // '') } @{$d->dbms};
    $self->op_close if $self->{endpoint};    # a second open replaces the first connection
    $d->use_endpoint($ep);                   # untimed: the connection's settings made from the endpoint
    my $start = now_ns();
    my $conn = $d->connect;
    my $connect_ns = now_ns() - $start;
    my $info = eval { $d->opened($conn) } or do { my $e = $@; $d->disconnect($conn); die $e };
    $self->{endpoint} = $ep;
    return {connect_ns => $connect_ns, %$info};
}

sub op_close {
    my ($self) = @_;
    if ($self->{endpoint}) {
        $self->{endpoint} = undef;
        $self->{driver}->close;
    }
    return {};
}

sub op_bye { $_[0]->op_close }

sub op_generate {
    my ($self, $msg) = @_;
    my ($values, $type) = generate_values($msg->{spec}, int_field($msg, 'count', 0));
    return {values => [map { json_value($_, $type) } @$values]};
}

sub op_checksum {
    my ($self, $msg) = @_;
    protocol_error('checksum needs rows') unless ref $msg->{rows} eq 'ARRAY';
    my $sum = AccessBench::Worker::Checksum->new;
    for my $row (@{$msg->{rows}}) {
        protocol_error('a row is a list') unless ref $row eq 'ARRAY';
        my (@values, @kinds);
        for (@$row) {
            my ($v, $kind) = typed_value($_);
            push @values, $v;
            push @kinds, $kind;
        }
        $sum->add_row(\@values, \@kinds);
    }
    return {checksum => $sum->hexdigest, rows => $sum->rows};
}

sub op_histogram {
    my ($self, $msg) = @_;
    protocol_error('histogram needs values') unless ref $msg->{values} eq 'ARRAY';
    my $h = AccessBench::Worker::Histogram->new;
    for (@{$msg->{values}}) {
        protocol_error('histogram values are integers') unless defined && /\A[0-9]+\z/;
        $h->record(0 + $_);
    }
    return {histogram => $h->wire};
}

sub op_schedule {
    my ($self, $msg) = @_;
    my $seed = $msg->{seed} // '';
    protocol_error('schedule needs a hex seed') unless $seed =~ /\A[0-9a-fA-F]{1,16}\z/;
    my $schedule = AccessBench::Worker::Schedule->new(0 + ($msg->{rate} // 0), $msg->{arrival} // 'poisson',
                                                     unpack('Q>', pack 'H16', sprintf '%016s', $seed));
    return {offsets => [map { $schedule->next_offset } 1 .. int_field($msg, 'count')]};
}

sub op_step {
    my ($self, $msg) = @_;
    protocol_error('step before open') unless $self->{endpoint};
    my $step = parse_step($msg, $self->{driver}, $self->{endpoint}{dbms});
    return $self->run($step);
}

# Runs a parsed step: the verification pass, the plain timed loop or the loop under load. After
# a `db` error the driver rolls back what it opened; whatever happened, the step's op (and the
# statements it holds) is dropped and the driver releases what the step prepared (untimed).
sub run {
    my ($self, $step) = @_;
    my $d = $self->{driver};
    my $answer = eval {
        my $op = $self->build($step);
        my $result = $step->{verify} ? verify($d, $op, $step)
            : $step->{loaded} ? $self->loaded($op, $step)
            : timed($d, $op, $step);
        undef $op;
        $result;
    };
    my $error = $@;
    if (!defined $answer && error_kind($error) eq 'db') {
        eval { $d->recover; 1 } or logline("recover failed: $@");
    }
    eval { $d->end_step; 1 } or logline("end of step: $@");
    die $error unless defined $answer;
    return $answer;
}

# The step's op on the session's connection; per-request: one that connects and disconnects
# around it in every operation (inside the operation's time).
sub build {
    my ($self, $step) = @_;
    my $d = $self->{driver};
    my $make = sub {
        my ($conn) = @_;
        my $op = $d->op_for($step, $conn);
        return $step->{every} > 0 ? with_commits($d, $op, $step->{every}, $step->{n}, $conn) : $op;
    };
    return policy_op($d, $step->{policy}, $make);
}

# The op `make` builds on a connection, under a connection policy: per-request, an op that
# connects, builds and runs it, and disconnects, every operation; persistent, the one built on the
# session's connection.
sub policy_op {
    my ($d, $policy, $make) = @_;
    return $policy eq 'per-request' ? $d->per_request_op($make) : $make->($d->session);
}

# commit_every: BEGIN before the first of every K operations, COMMIT after the K-th or the
# last, inside those operations' time
sub with_commits {
    my ($d, $op, $every, $total, $conn) = @_;
    my $done = 0;
    return sub {
        $d->txn_begin($conn) if $done % $every == 0;
        my $result = $op->($_[0]);
        $done++;
        $d->txn_commit($conn) if $done % $every == 0 || $done == $total;
        return $result;
    };
}

# The untimed verification pass: every value read is checksummed; the first operation (with
# its rows checksummed) is the cold start. With `dump`, the first rows read as typed values. The
# statements a load sends are counted by its driver code, for this pass only.
sub verify {
    my ($d, $op, $step) = @_;
    my $sum = AccessBench::Worker::Checksum->new($step->{dump});
    my ($changed, $first, $values) = (0, 0, 0);
    my $load = $step->{kind} eq 'load';
    $d->count_statements($load);
    my $start = now_ns();
    my $args = $step->{args};
    for my $i (0 .. $#$args) {
        my $result = $op->($args->[$i]);
        if ($load) {
            $values += checksum_levels($sum, $result, $d->levels);
        } elsif ($step->{reads}) {
            my $kinds = $d->kinds;
            $sum->add_row($_, $kinds) for @$result;
            $values += @$result * ($d->width // 0);
        } else {
            $changed += $result;
        }
        $first = now_ns() - $start if $i == 0;
    }
    my $rows = $step->{reads} ? $sum->rows : $changed;
    return {n => scalar @$args, rows => $rows, values => $values, checksum => $sum->hexdigest, first_op_ns => $first,
            ($step->{dump} && $step->{reads} ? (dump => $sum->dumped) : ()),
            ($load ? (statements => $d->statements) : ())};
}

# a load's entities, each level's with its own kinds ([count, kinds] per level); the values read
sub checksum_levels {
    my ($sum, $rows, $levels) = @_;
    my ($at, $values) = (0, 0);
    for my $level (@$levels) {
        my ($count, $kinds) = @$level;
        for (1 .. $count) {
            my $row = $rows->[$at++];
            $sum->add_row($row, $kinds);
            $values += @$row;
        }
    }
    return $values;
}

# The plain timed loop. One clock read per operation: operation i runs from the end of i−1 to
# its own end, so the latencies add up to elapsed_ns exactly.
sub timed {
    my ($d, $op, $step) = @_;
    my ($args, $reads) = ($step->{args}, $step->{reads});
    my @ends = (0) x @$args;
    my $rows = 0;
    my @cpu = cpu_ns();
    my $start = now_ns();
    if ($reads) {
        for my $i (0 .. $#$args) { $rows += @{$op->($args->[$i])}; $ends[$i] = now_ns() }
    } else {
        for my $i (0 .. $#$args) { $rows += $op->($args->[$i]); $ends[$i] = now_ns() }
    }
    my @after = cpu_ns();
    my @latencies = map { $ends[$_] - ($_ ? $ends[$_ - 1] : $start) } 0 .. $#ends;
    write_latencies($step->{latency_file}, \@latencies) if defined $step->{latency_file};
    my $answer = {n => scalar @$args, elapsed_ns => @ends ? $ends[-1] - $start : 0, rows => $rows,
                  user_ns => $after[0] - $cpu[0], sys_ns => $after[1] - $cpu[1], first_op_ns => $latencies[0] // 0};
    $answer->{values} = $rows * $d->width if $reads && defined $d->width;
    my $pid = $d->server_pid;
    $answer->{server_pids} = [$pid] if $pid;
    return $answer;
}

sub write_latencies {
    my ($path, $latencies) = @_;
    open my $fh, '>:raw', $path or die "cannot write $path: $!\n";
    print {$fh} pack 'Q<*', @$latencies;
    close $fh or die "cannot write $path: $!\n";
}

# A step under load: this process's one client, started at the barrier.
sub loaded {
    my ($self, $op, $step) = @_;
    my $d = $self->{driver};
    barrier($step->{load}{start_at});
    my @cpu = cpu_ns();
    my $r = run_client($op, $step->{args}, $step->{reads}, $step->{load}, now_ns());
    my @after = cpu_ns();
    my $answer = {n => $r->{n}, elapsed_ns => $r->{elapsed}, rows => $r->{rows}, first_op_ns => $r->{first},
                  user_ns => $after[0] - $cpu[0], sys_ns => $after[1] - $cpu[1], histogram => $r->{histogram}->wire,
                  late => $r->{late}, skipped => $r->{skipped}, clients => 1,
                  per_client => [{n => $r->{n}, elapsed_ns => $r->{elapsed}}]};
    $answer->{values} = $r->{rows} * $d->width if $step->{reads} && defined $d->width;
    my $pid = $step->{policy} eq 'persistent' ? $d->server_pid : 0;    # per-request backends are not the client's
    $answer->{server_pids} = [$pid] if $pid;
    return $answer;
}

# ---- errors and the loop -------------------------------------------------------------------------

# an error as the protocol has it (logged whole on stderr): its kind, its message's first line,
# the SQLSTATE of a db error
sub error_of {
    my ($e) = @_;
    my $kind = error_kind($e);
    my $message = ref $e && $kind ne 'internal' ? $e->message : "$e";
    logline("$kind: $message");
    $message = (grep { /\S/ } split /\n/, $message)[0] // $kind;
    $message =~ s/\A\s+|\s+\z//g;
    my %error = (kind => $kind, message => $message);
    $error{sqlstate} = $e->sqlstate if $kind eq 'db' && defined $e->sqlstate;
    return \%error;
}

sub error_answer { return {ok => Cpanel::JSON::XS::false(), error => error_of($_[0])} }

sub main {
    my @argv = @_;
    if (@argv != 1) {
        logline('usage: perl workers/perl/abworker.pl METHOD[/key=value,...]  (' . join(', ', method_names()) . ')');
        return 2;
    }
    binmode STDERR, ':encoding(UTF-8)';
    open my $out, '>&', \*STDOUT or die "cannot dup stdout: $!\n";
    open STDOUT, '>&', \*STDERR or die "cannot point stdout at stderr: $!\n";
    $out->autoflush(1);
    my $session = __PACKAGE__->new($argv[0]);
    while (my $line = <STDIN>) {
        next unless $line =~ /\S/;
        my $msg = eval { decode_line($line) };
        my $answer = defined $msg
            ? eval { {ok => Cpanel::JSON::XS::true(), %{$session->handle($msg)}} } // error_answer($@)
            : error_answer(AccessBench::Worker::Errors::Protocol->new(message => 'not JSON: ' . ($@ =~ s/ at \S+ line \d+.*//sr)));
        print {$out} encode_line($answer), "\n";
        return 0 if ref $msg eq 'HASH' && ($msg->{op} // '') eq 'bye';
    }
    eval { $session->op_close; 1 } or logline("close at end of input: $@");
    return 0;
}

1;
