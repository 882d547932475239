package AccessBench::Web;
# The web tier's Perl pages (docs/tier.md): one PSGI application (app.psgi), run by the tier
# worker as
#
#   starman --listen 127.0.0.1:PORT --workers N --disable-keepalive … workers/perl/app.psgi
#
# Pages: /static.html, /hello, /op?step=ID[&verify=1[&dump=N]], /op?connect=1 (one connection
# made and closed: the host's open), and TechEmpower's tests, /db, /queries, /fortunes and
# /updates with ?step=ID[&verify=1]. The operation page is the Perl worker's driver as a page
# uses it: the worker method $ACCESSBENCH_TIER_DIR/endpoint.json names as its page_driver
# (pl-starman-pg → pl-dbi-pg …), with the step's arguments (Step.pm's parse_step: the worker's
# generators, its literal texts, its driver's adapt), its op (the driver's op_for under Host.pm's
# policy_op), its verification pass (Host.pm's verify) and checksum (Checksum.pm) all the worker's
# own, so the page measures the same operation as the worker does, plus the app server around it.
# A page supplies operations; the tier worker owns the loops (the load generator's).
#
# A Starman worker is one process serving one request at a time: everything kept here (the
# steps and their ops, the process's connection) belongs to that process and needs no lock.
# Starman loads the application in each worker process after it forks (no --preload-app), and
# nothing connects before a request asks for it.
use strict;
use warnings;
use utf8;

use File::Basename ();
use HTML::Entities qw(encode_entities);

use AccessBench::Worker::Checksum;
use AccessBench::Worker::Clock qw(now_ns);
use AccessBench::Worker::Errors qw(unsupported error_kind);
use AccessBench::Worker::Host qw(policy_op verify error_of);
use AccessBench::Worker::Json qw(decode_line encode_line);
use AccessBench::Worker::Registry qw(load_driver);
use AccessBench::Worker::SqlText qw(segments inline);
use AccessBench::Worker::Step qw(parse_step);

use constant {
    HELLO     => "Hello, world!\n",
    ADDED     => 'Additional fortune added at request time.',    # TechEmpower's rule: id 0, added per request
    JSON_TYPE => 'application/json',
    HTML_TYPE => 'text/html; charset=utf-8',
};
my %TFB_PAGES = map { ("/$_" => $_) } qw(db queries fortunes updates);

sub logline { print STDERR "abworker-perl web: @_\n" }

sub slurp {
    my ($path) = @_;
    open my $fh, '<:raw', $path or return undef;
    local $/;
    return scalar <$fh>;
}

# The static page's bytes, read once per process (the path from the tier worker; by default the
# repository's): Starman has no file serving of its own, so the page hands them over as they are.
my $STATIC_PATH = $ENV{ACCESSBENCH_STATIC_PAGE}
    // File::Basename::dirname(__FILE__) . '/../../../../src/accessbench/tier/static.html';
my $STATIC = slurp($STATIC_PATH) // die "cannot read the static page $STATIC_PATH: $!\n";

# ---- the process's side of the tier ------------------------------------------------------------
# Made by the first request for a page that runs the driver: the static and hello pages need none
# of it. A request that fails to make it leaves it to the next.

my $TIER;
# The time this request spent making the process's connection (session, below): time in the
# driver, which the Server-Timing of the request that made it counts in its db (0 at every request)
our $CONNECT_NS = 0;

sub tier {
    return $TIER //= do {
        my $dir = $ENV{ACCESSBENCH_TIER_DIR} or die "ACCESSBENCH_TIER_DIR is not set\n";
        my $config = decode_line(slurp("$dir/endpoint.json") // die "cannot read $dir/endpoint.json: $!\n");
        my %ep = %{$config->{endpoint}};
        $ep{password} = $ENV{ACCESSBENCH_DB_PASSWORD} if length($ENV{ACCESSBENCH_DB_PASSWORD} // '');    # in memory only
        # the worker driver the tier method's pages reuse: its catalog entry's page_driver (the
        # registry refuses, as unsupported, a name the Perl worker lacks)
        my $driver = load_driver($config->{page_driver} // '');
        $driver->use_endpoint(\%ep);
        {dir => $dir, dbms => $ep{dbms}, driver => $driver, steps => {}};
    };
}

# The process's connection, opened as the worker's open opens it (connect, then the driver's
# opened: PostgreSQL's DateStyle checked, and asked for in the startup packet of every later
# connection if it is not ISO; MariaDB's autocommit checked) before the process's first step and
# kept for its life: the persistent policy's steps run on it, the per-request policy's leave it
# idle, as the worker's session does.
sub session {
    my ($t) = @_;
    my $d = $t->{driver};
    unless ($d->session) {
        my $start = now_ns();
        my $dbh = $d->connect;
        eval { $d->opened($dbh); 1 } or do { my $e = $@; $d->disconnect($dbh); die $e };
        $CONNECT_NS += now_ns() - $start;
    }
    return $d;
}

# The policies DBI has: a new connection per request, or the process's own across requests.
sub check_policy {
    my ($d, $policy) = @_;
    return if $policy eq 'per-request' || $policy eq 'persistent';
    unsupported("$d->{method}'s pages have no $policy connections: DBI has no pool of its own (connect_cached "
                . 'hands back a cached handle; nothing is borrowed and given back)') if $policy eq 'pooled';
    unsupported("unknown connection policy '$policy'");
}

# An op on the process's connection: after a db error, an open transaction rolled back (the
# driver's recover) so that the next request finds the connection usable.
sub recovering {
    my ($d, $policy, $op) = @_;
    return $op if $policy eq 'per-request';    # nothing outlives the request
    return sub {
        my $result = eval { $op->($_[0]) };
        return $result if defined $result;
        my $e = $@;
        if (error_kind($e) eq 'db') {
            eval { $d->recover; 1 } or logline("recover failed: $@");
        }
        die $e;
    };
}

# ---- steps ---------------------------------------------------------------------------------------
# steps/ID.json never changes once written: read once per process, its op built once (on the
# process's connection; per-request, in every request), as an app keeps its statements.

sub step {
    my ($t, $id) = @_;
    return $t->{steps}{$id} //= do {
        my $text = slurp("$t->{dir}/steps/$id.json") // die AccessBench::Web::NoStep->new;
        my $spec = decode_line($text);
        my $d = session($t)->for_step;    # the step's own result plan, on the process's connection
        my $policy = $spec->{policy} // 'persistent';
        check_policy($d, $policy);
        defined $spec->{page} ? tfb_step($t, $d, $spec, $policy) : op_step($t, $d, $spec, $policy);
    };
}

# An exec or scan step: its arguments made as the worker makes a step message's (parse_step:
# generated, then put in the driver's form or rendered into literal texts), its op the worker's.
sub op_step {
    my ($t, $d, $spec, $policy) = @_;
    my $kind = $spec->{kind} // '';
    unsupported("the operation page runs exec and scan steps, not '$kind'") unless $kind eq 'exec' || $kind eq 'scan';
    my $step = parse_step({kind => $kind, sql => $spec->{sql}, mode => $spec->{mode}, fetch => $spec->{fetch},
                           params => $spec->{params}, iterations => $spec->{count}}, $d, $t->{dbms});
    $step->{policy} = $policy;
    $step->{driver} = $d;
    $step->{op} = recovering($d, $policy, policy_op($d, $policy, sub { $d->op_for($step, $_[0]) }));
    return $step;
}

# A page step of TechEmpower's tests (tier/tfb.py): its statements as exec steps of one key (the
# read) and of a number and a key (the updates' write) in the step's mode; the keys' range the page
# draws from per query; and, for the verify form, the keys (and the updates' numbers) the shared
# generators made, so that every language reads alike.
sub tfb_step {
    my ($t, $d, $spec, $policy) = @_;
    my ($page, $mode, $dbms) = ($spec->{page}, $spec->{mode} // '', $t->{dbms});
    unsupported("$d->{method} has no $mode mode") unless grep { $_ eq $mode } @{$d->modes};
    my $fortunes = $page eq 'fortunes';
    my $read = statement($d, $mode, $spec->{sql}, 1, $fortunes ? [] : ['int'], $dbms);
    my $write = $spec->{write} ? statement($d, $mode, $spec->{write}, 0, ['int', 'int'], $dbms) : undef;
    # One request's op: the fortunes, or a World row per key (updates: given its number and
    # written back, one statement per row; read again when read_back, as the verify form does to
    # show the write), on one connection under the step's policy.
    my $make = sub {
        my ($dbh) = @_;
        my $select = $d->op_for($read, $dbh);
        my $update = $write && $d->op_for($write, $dbh);
        my $world = sub { $select->($read->{arg}->($_[0]))->[0] };
        return sub {
            my ($keys, $numbers, $read_back) = @{$_[0]};
            return $select->($read->{arg}->()) if $fortunes;
            my @worlds = map { $world->($_) } @$keys;
            if ($update) {
                @worlds = map { [$worlds[$_][0], $numbers->[$_]] } 0 .. $#worlds;
                $update->($write->{arg}->($_->[1], $_->[0])) for @worlds;
                @worlds = map { $world->($_->[0]) } @worlds if $read_back;
            }
            return \@worlds;
        };
    };
    my $key = ($spec->{params} // [])->[0] // {lo => 0, hi => 0};
    return {tfb => 1, page => $page, driver => $d, policy => $policy, count => 0 + $spec->{count},
            queries => 0 + ($spec->{queries} // 1), lo => 0 + $key->{lo}, hi => 0 + $key->{hi},
            keys => [map { $_->[0] } @{$spec->{params} && @{$spec->{params}} ? $spec->{args} : []}],
            numbers => $spec->{numbers} // [],
            op => recovering($d, $policy, policy_op($d, $policy, $make))};
}

# One statement of a test as the driver's op_for takes a step, with what its op takes for one
# request's values (`arg`): its parameters in the driver's form, or under literal the statement
# with them inlined by the worker's literal rules (the page writes the text, as DBI's users do).
sub statement {
    my ($d, $mode, $sql, $reads, $types, $dbms) = @_;
    my @segs = segments($sql);
    my $arg = $mode eq 'literal' ? sub { inline(\@segs, [@_], $types, $dbms) } : sub { $d->adapt([[@_]], $types)->[0] };
    return {kind => 'exec', mode => $mode, sql => $sql, reads => $reads, types => $types, arg => $arg};
}

# One request of a test: its rows (the fortunes with the added one, sorted by message) and its
# time in the driver (its connection got under the policy, or the process's made by this request;
# its statements and their rows), which the page's Server-Timing tells apart from its own. Sorting
# is the page's work, outside the driver.
sub tfb_request {
    my ($s, $keys, $numbers, $read_back) = @_;
    my $start = now_ns();
    my $rows = $s->{op}->([$keys, $numbers, $read_back]);
    my $db_ns = now_ns() - $start + $CONNECT_NS;
    if ($s->{page} eq 'fortunes') {
        $rows = [sort { $a->[1] cmp $b->[1] } @$rows, [0, ADDED]];
    }
    return ($rows, $db_ns);
}

# Requests 0 … count-1, each on the next `queries` keys (and numbers) the shared generators made,
# every value read checksummed: the same reads in every language.
sub tfb_verify {
    my ($s, $dump) = @_;
    my $sum = AccessBench::Worker::Checksum->new($dump);
    my ($q, $n, $keys, $numbers, $values) = (@$s{qw(queries count keys numbers)}, 0);
    for my $i (0 .. $n - 1) {
        my @at = @$keys ? map { ($i * $q + $_) % $n } 0 .. $q - 1 : ();
        my ($rows) = tfb_request($s, [@$keys[@at]], [@$numbers ? @$numbers[@at] : ()], 1);
        my $kinds = $s->{driver}->kinds;
        $sum->add_row($_, $kinds) for @$rows;
        $values += @$_ for @$rows;
    }
    return {n => $n, rows => $sum->rows, values => $values, checksum => $sum->hexdigest,
            ($dump ? (dump => $sum->dumped) : ())};
}

# ---- pages ---------------------------------------------------------------------------------------

sub respond {
    my ($status, $type, $body, @headers) = @_;
    return [$status, ['Content-Type' => $type, 'Content-Length' => length $body, @headers], [$body]];
}

# the query string's fields (only ids and digits are asked for: no decoding beyond %XX and +)
sub query {
    my %q;
    for (split /&/, $_[0] // '') {
        my ($k, $v) = split /=/, $_, 2;
        ($v //= '') =~ tr/+/ /;
        $v =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
        $q{$k} //= $v;
    }
    return \%q;
}

# A 500: the error as JSON for a verify (or connect) form, else its message alone.
sub failed {
    my ($e, $json) = @_;
    my $error = error_of($e);
    return respond(500, JSON_TYPE, encode_line({error => $error})) if $json;
    my $line = "$error->{message}\n";
    utf8::encode($line);
    return respond(500, 'text/plain', $line);
}

sub no_step { respond(404, 'text/plain', "no $_[0]step '$_[1]'\n") }

sub op_page {
    my ($env) = @_;
    my $q = query($env->{QUERY_STRING});
    my $id = $q->{step} // '';
    my $connect = ($q->{connect} // '') eq '1';
    my $json = $connect || ($q->{verify} // '') eq '1';    # both answer JSON
    my $answer = eval {
        if ($connect) {    # the host's open: one connection made and closed, as a page makes one
            my $d = tier()->{driver};
            $d->disconnect($d->connect);
            return respond(200, JSON_TYPE, '{"ok": true}');
        }
        return no_step('', $id) unless $id =~ /\A[A-Za-z0-9_-]+\z/;
        my $s = step(tier(), $id);
        return no_step('', $id) if $s->{tfb};
        if ($json) {    # the worker's verification pass: operations 0 … count-1, every value checksummed
            my $answer = verify($s->{driver}, $s->{op}, {%$s, dump => 0 + ($q->{dump} || 0)});
            delete $answer->{first_op_ns};
            return respond(200, JSON_TYPE, encode_line($answer));
        }
        # one operation, its argument row drawn at random: the processes share no counter
        my $args = $s->{args};
        my $result = $s->{op}->($args->[int rand @$args]);
        return respond(200, 'text/plain', 'rows=' . ($s->{reads} ? scalar @$result : $result));
    };
    return $answer if $answer;
    return no_step('', $id) if ref $@ eq 'AccessBench::Web::NoStep';
    return failed($@, $json);
}

# A TechEmpower test (tier/tfb.py): /db, /queries, /fortunes or /updates with ?step=ID; keys and
# numbers drawn at random per query, as the test's rules ask; &verify=1 answers the checksum of
# the shared generators' keys instead. Its answer says where its time went (Server-Timing): in the
# driver, and in the whole page from its first moment, `began`.
sub tfb_page {
    my ($env, $page, $began) = @_;
    my $q = query($env->{QUERY_STRING});
    my $id = $q->{step} // '';
    my $verify = ($q->{verify} // '') eq '1';
    my $answer = eval {
        return no_step("$page ", $id) unless $id =~ /\A[A-Za-z0-9_-]+\z/;
        my $s = step(tier(), $id);
        return no_step("$page ", $id) unless $s->{tfb} && $s->{page} eq $page;
        return respond(200, JSON_TYPE, encode_line(tfb_verify($s, 0 + ($q->{dump} || 0)))) if $verify;
        my ($lo, $span) = ($s->{lo}, $s->{hi} - $s->{lo} + 1);
        my @keys = $page eq 'fortunes' ? () : map { $lo + int rand $span } 1 .. $s->{queries};
        my @numbers = $page eq 'updates' ? map { $lo + int rand $span } @keys : ();
        my ($rows, $db_ns) = tfb_request($s, \@keys, \@numbers, 0);
        my ($type, $body);
        if ($page eq 'fortunes') {
            ($type, $body) = (HTML_TYPE, fortunes_page($rows));
        } else {
            my @worlds = map { {id => 0 + $_->[0], randomNumber => 0 + $_->[1]} } @$rows;
            ($type, $body) = (JSON_TYPE, encode_line($page eq 'db' ? $worlds[0] : \@worlds));
        }
        return respond(200, $type, $body, 'Server-Timing' => server_timing($db_ns, now_ns() - $began));
    };
    return $answer if $answer;
    return no_step("$page ", $id) if ref $@ eq 'AccessBench::Web::NoStep';
    return failed($@, $verify);
}

# TechEmpower's table template, each message HTML-escaped (& < > " ', HTML::Entities), as UTF-8.
sub fortunes_page {
    my ($rows) = @_;
    my $cells = join '', map { "<tr><td>$_->[0]</td><td>" . encode_entities($_->[1], q{&<>"'}) . '</td></tr>' } @$rows;
    my $html = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>'
        . "<tr><th>id</th><th>message</th></tr>$cells</table></body></html>";
    utf8::encode($html);
    return $html;
}

# The page's Server-Timing value (tier/tfb.py): its time in the driver and in the whole page, in
# milliseconds to the microsecond.
sub server_timing { sprintf 'db;dur=%.3f, app;dur=%.3f', $_[0] / 1e6, $_[1] / 1e6 }

# The PSGI application.
sub app {
    return sub {
        my ($env) = @_;
        my $began = now_ns();    # the page's first moment (its Server-Timing app time)
        local $CONNECT_NS = 0;
        my $path = $env->{PATH_INFO} // '';
        return op_page($env) if $path eq '/op';
        return tfb_page($env, $TFB_PAGES{$path}, $began) if $TFB_PAGES{$path};
        return respond(200, 'text/plain', HELLO) if $path eq '/hello';
        return respond(200, 'text/html', $STATIC) if $path eq '/static.html';
        return respond(404, 'text/plain', "not found\n");
    };
}

# a step id the tier directory does not hold: 404
package AccessBench::Web::NoStep;
sub new { bless {}, $_[0] }

1;
