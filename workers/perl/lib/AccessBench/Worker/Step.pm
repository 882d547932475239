package AccessBench::Worker::Step;
# A step message → a step (protocol/PROTOCOL.md, "step"). Every field is read and checked here,
# before anything runs: every protocol error of a step, and every `unsupported` one that the
# message and the driver's declarations decide (a mode, a connection policy, several clients in
# a one-client process). The parameters are generated here too and put in the driver's form (its
# `adapt`; for `literal` rendered into statement texts): all of it before the clock. What runs
# the step (Host.pm) reads the step and never the message.
use strict;
use warnings;
use utf8;

use AccessBench::Worker::Errors qw(protocol_error unsupported);
use AccessBench::Worker::Generators qw(generate_rows);
use AccessBench::Worker::Loading qw(plan_of);
use AccessBench::Worker::Schedule;
use AccessBench::Worker::SqlText qw(count_markers segments inline);

use Exporter 'import';
our @EXPORT_OK = qw(parse_step int_field truthy kinds_of);

use constant KINDS => qw(connect scan exec batch);
# the kinds a driver has: the four, and `load` where it has loading associations
sub kinds_of { return (KINDS, $_[0]->can('load_op') ? 'load' : ()) }
my %EXEC_MODES = map { $_ => 1 } qw(literal extended prepared);

sub int_field {
    my ($msg, $key, $default) = @_;
    my $v = $msg->{$key};
    unless (defined $v) {
        protocol_error("missing field '$key'") if @_ < 3;
        return $default;
    }
    protocol_error("field '$key' must be an integer") unless !ref $v && $v =~ /\A-?[0-9]+\z/;
    return 0 + $v;
}

sub truthy {
    my ($v) = @_;
    return 0 unless defined $v;
    return scalar @$v if ref $v eq 'ARRAY';
    return scalar %$v if ref $v eq 'HASH';
    return $v ? 1 : 0;
}

# The step a message asks for, of a session open on `$dbms`, for `$driver`.
sub parse_step {
    my ($msg, $driver, $dbms) = @_;
    my $kind = $msg->{kind} // '';
    unsupported("$driver->{method} has no load steps") if $kind eq 'load' && !$driver->can('load_op');
    protocol_error("unknown step kind '$kind'") unless grep { $_ eq $kind } kinds_of($driver);
    my $n = int_field($msg, 'iterations');
    protocol_error('a step needs iterations >= 0') if $n < 0;
    my $sql = $kind eq 'connect' ? undef : $msg->{sql};
    protocol_error("a $kind step needs sql") if $kind ne 'connect' && (!defined $sql || ref $sql);
    my $specs = $msg->{params} // [];
    protocol_error('params must be a list') unless ref $specs eq 'ARRAY';
    my $step = {kind => $kind, sql => $sql, n => $n, specs => $specs, markers => defined $sql ? count_markers($sql) : 0,
                mode => ($kind eq 'scan' || $kind eq 'exec') ? $msg->{mode} : undef, every => 0, reads => 0,
                shape => $msg->{shape}, types => [], latency_file => $msg->{latency_file}};
    unsupported("$driver->{method} has no record-level access (mode record)") if ($step->{mode} // '') eq 'record';
    my $parse = __PACKAGE__->can("_parse_$kind");
    $parse->($step, $msg, $driver, $dbms);
    _parse_policy($step, $msg, $driver);
    return $step;
}

sub _check_params {
    my ($step) = @_;
    my ($markers, $params) = ($step->{markers}, scalar @{$step->{specs}});
    protocol_error("$markers markers but $params params") unless $markers == $params;
}

sub _parse_connect {
    my ($step) = @_;
    $step->{args} = [(undef) x $step->{n}];
}

sub _parse_scan {
    my ($step) = @_;
    protocol_error("a scan runs one query without params, but the sql has $step->{markers} markers") if $step->{markers};
    $step->{args} = [(undef) x $step->{n}];
    $step->{reads} = 1;
}

sub _parse_exec {
    my ($step, $msg, $driver, $dbms) = @_;
    my $mode = $step->{mode} // '';
    protocol_error("unknown mode '$mode'") unless $EXEC_MODES{$mode};
    _check_params($step);
    $step->{reads} = truthy($msg->{fetch});
    my ($rows, $types) = generate_rows($step->{specs}, $step->{n});
    $step->{types} = $types;
    if ($mode eq 'literal') {
        my @segs = segments($step->{sql});
        $step->{args} = [map { inline(\@segs, $_, $types, $dbms) } @$rows];
    } else {
        $step->{args} = $driver->adapt($rows, $types);
    }
    $step->{every} = int_field($msg, 'commit_every', 0);
}

# a load: its plan, and the parents' parameters
sub _parse_load {
    my ($step, $msg, $driver) = @_;
    _check_params($step);
    $step->{plan} = plan_of($msg, $step->{shape});
    $step->{reads} = 1;
    my ($rows, $types) = generate_rows($step->{specs}, $step->{n});
    $step->{types} = $types;
    $step->{args} = $rows;    # as generated: the load's statements bind every value by its type
}

# the rows in groups of `batch`, each group one operation
sub _parse_batch {
    my ($step, $msg, $driver) = @_;
    my $size = int_field($msg, 'batch');
    protocol_error('a batch step needs batch >= 1') if $size < 1;
    _check_params($step);
    my ($rows, $types) = generate_rows($step->{specs}, $step->{n});
    $step->{types} = $types;
    my $adapted = $driver->adapt_batch($rows, $types, $step);
    my @groups;
    for (my $i = 0; $i < @$adapted; $i += $size) {
        my $last = $i + $size <= @$adapted ? $i + $size - 1 : $#$adapted;
        push @groups, [@$adapted[$i .. $last]];
    }
    $step->{args} = \@groups;
}

# Verification (and how many rows it dumps) or the timed pass; plain loop or under load; the
# connection policy and the load's fields (read only for a loaded step that is not a verification).
sub _parse_policy {
    my ($step, $msg, $driver) = @_;
    my $policy = $msg->{policy} // 'persistent';
    my @policies = @{$driver->load_policies};
    unsupported("$driver->{method} has no '$policy' connection policy (it has @policies)")
        unless grep { $_ eq $policy } @policies;
    my $clients = int_field($msg, 'clients', 1);
    protocol_error('clients must be >= 1') if $clients < 1;
    my $loaded = $policy ne 'persistent' || $clients != 1 || grep { truthy($msg->{$_}) } qw(duration_ms rate histogram);
    if ($loaded && $step->{every} > 0 && ($policy ne 'persistent' || truthy($msg->{duration_ms}))) {
        unsupported('commit_every under load is built for persistent connections by count only (a transaction '
                    . 'cannot span connections, and by duration its last operation is not known in advance)');
    }
    my $verify = truthy($msg->{verify});
    my $dump = $verify ? int_field($msg, 'dump', 0) : 0;
    protocol_error('dump must be >= 0') if $dump < 0;
    my $load;
    if ($loaded && !$verify) {
        unsupported("$driver->{method} drives one client per process (DBI is synchronous): the runner starts "
                    . 'one worker per client') if $clients > 1;
        $load = _load_fields($msg);
    }
    @$step{qw(verify dump policy clients loaded load)} = ($verify, $dump, $policy, $clients, $loaded, $load);
}

sub _number {
    my ($msg, $key) = @_;
    my $v = $msg->{$key};
    return undef unless truthy($v);
    protocol_error("field '$key' must be a number") unless Scalar::Util::looks_like_number($v);
    return 0 + $v;
}

# What a loaded step asks for beyond the plain loop (falsy fields count as absent, as load.py)
sub _load_fields {
    my ($msg) = @_;
    my ($rate, $duration, $phase) = map { _number($msg, $_) } qw(rate duration_ms phase_ns);
    protocol_error("field 'phase_ns' must not be negative") if ($phase // 0) < 0;
    my $seed = $msg->{schedule_seed} // 0;
    protocol_error("field 'schedule_seed' must be an integer") unless $seed =~ /\A[0-9]+\z/;
    my $load = {duration_ns => $duration ? int($duration * 1e6) : undef, rate => $rate,
                arrival => $msg->{arrival} // 'poisson', seed => $seed, phase_ns => int($phase // 0),
                late_ns => _number($msg, 'late_ns') // 1_000_000, skip_ns => _number($msg, 'skip_ns'),
                start_at => truthy($msg->{start_at_unix_ns}) ? $msg->{start_at_unix_ns} : undef};
    AccessBench::Worker::Schedule->new($rate, $load->{arrival}, 0) if $rate;    # a bad rate or arrival: answered now
    return $load;
}

1;
