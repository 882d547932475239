package AccessBench::Worker::DbiDriver;
# What every DBI driver of this worker shares: connecting through DBI, every step kind's op as
# DBI's users write it, reading and decoding rows, transactions and errors. A driver (Driver/*.pm)
# derives from this class and names its DBMS family (Dbms/*.pm: the endpoint's connection and TLS
# settings, how each value type is bound, how each column type is decoded, the SQLSTATE), and says
# how its DBD prepares a statement in each mode (`statement`).
#
# Ops per step kind and mode, on one connection ($dbh):
#   scan, literal reading rows   $dbh->prepare(text) (a new handle: no placeholders), execute, fetch
#   literal writing              $dbh->do(text)
#   extended                     $dbh->prepare(sql) in every operation, bind_param with the type of
#                                each value, execute, fetch; the handle dropped at the operation's end
#   prepared                     $dbh->prepare(sql) in the first operation, bound with the types,
#                                then execute(@values) (the types are sticky) in each operation
#   batch                        begin_work, the prepared mode's handle executed per row, commit
#   load                         each statement of the strategy as the extended mode runs it
use strict;
use warnings;
use utf8;

use DBI ();

use AccessBench::Worker::Errors qw(db_error);
use AccessBench::Worker::Loading qw(load_entities);

use parent -norequire, 'AccessBench::Worker::Driver';
require AccessBench::Worker::Driver;

# hello's words for what every DBI method pins
sub dbi_settings {
    return {
        dbi => "DBI $DBI::VERSION: connect with RaiseError => 1, PrintError => 0, AutoCommit => 1 and a HandleError that "
            . 'throws the error with its SQLSTATE; one connection (DBI->connect), no connect_cached (a cache of '
            . 'handles, not a pool) and no prepare_cached',
        scan => '$dbh->prepare(sql) (a new statement handle) in every operation, execute, fetchrow_arrayref to the end',
        results => 'fetchrow_arrayref, each row copied; the columns to decode, and how, chosen from the statement '
            . "handle's column types at the step's first result (once per step), as the DBMS's settings say",
        'rows changed' => '$sth->rows after execute; $dbh->do\'s return for literal statements',
        autocommit => 'on (AutoCommit => 1); commit_every and batch groups by $dbh->begin_work and $dbh->commit',
        'per-request' => 'DBI->connect with the same settings, the operation (a prepared step prepares in every '
            . "request), \$dbh->disconnect — all inside the operation's time; the session's connection stays open, idle",
        pooled => 'not built: DBI has no pool (connect_cached hands back a cached handle, nothing is borrowed)',
        load => AccessBench::Worker::Loading::HAND_WRITTEN,
    };
}

sub family { $_[0]{family} }
sub endpoint { $_[0]{endpoint} }

# PostgreSQL's session parameters for the startup packet of every later connection, beyond the
# endpoint's (Dbms/PostgreSQL.pm: DateStyle when the server's is not ISO)
sub startup { $_[0]{startup} // [] }

sub add_startup {
    my ($self, @parameters) = @_;
    push @{$self->{startup}}, @parameters;
    $self->use_endpoint($self->endpoint);
}

sub dbms { [$_[0]->family->dbms] }

sub use_endpoint {
    my ($self, $ep) = @_;
    $self->{endpoint} = $ep;
    $self->{connection} = [$self->family->connection($ep, $self)];
}

# A connection as the endpoint says, with every behaviour of the step ops pinned (`ready`: what the
# DBMS checks on each new connection)
sub connect {
    my ($self) = @_;
    my ($dsn, $user, $password, $attrs) = @{$self->{connection}};
    my $dbh = DBI->connect($dsn, $user, $password, {
        %$attrs, RaiseError => 1, PrintError => 0, PrintWarn => 0, AutoCommit => 1,
        HandleError => sub { $self->raise($_[1]) },
    });
    $self->family->ready($dbh, $self);
    return $dbh;
}

# a DBI error as a `db` error, with the SQLSTATE where the DBMS gives one
sub raise {
    my ($self, $h) = @_;
    my $message = $h->errstr // $DBI::errstr // 'DBI error';
    db_error(message => $message, sqlstate => $self->family->sqlstate($h->state // $DBI::state, $h->err // $DBI::err));
}

sub opened {
    my ($self, $dbh) = @_;
    my $info = $self->family->describe($dbh, $self);
    $self->{conn} = $dbh;
    $self->{pid} = $info->{server_pid};
    return $info;
}

sub disconnect { $_[1]->disconnect }

sub close {
    my ($self) = @_;
    my $dbh = delete $self->{conn};
    $dbh->disconnect if $dbh;
}

sub server_pid { $_[0]{conn} ? $_[0]{pid} // 0 : 0 }

sub adapt {
    my ($self, $rows, $types) = @_;
    my $family = $self->family;
    my @adapt = map { $family->adapter($_) } @$types;
    return [map { my $row = $_; [map { defined $row->[$_] ? $adapt[$_]->($row->[$_]) : undef } 0 .. $#$row] } @$rows];
}

# ---- ops ------------------------------------------------------------------------------------------

sub op_for {
    my ($self, $step, $dbh) = @_;
    my $kind = $step->{kind};
    return $self->connect_op if $kind eq 'connect';
    return $self->text_op($step->{sql}, $dbh) if $kind eq 'scan';
    return $self->batch_op($step, $dbh) if $kind eq 'batch';
    return $self->load_op($step, $dbh) if $kind eq 'load';
    my $builder = "$step->{mode}_op";
    return $self->$builder($step, $dbh);
}

sub connect_op {
    my ($self) = @_;
    return sub { $self->connect->disconnect; 0 };
}

# a statement without parameters, its rows read: a new handle per operation (`$text` undef: the
# operation's argument is the text)
sub text_op {
    my ($self, $text, $dbh) = @_;
    return sub {
        my $sth = $self->statement($dbh, $text // $_[0], 'text');
        $sth->execute;
        return $self->read_rows($sth);
    };
}

sub literal_op {
    my ($self, $step, $dbh) = @_;
    return $self->text_op(undef, $dbh) if $step->{reads};
    return sub { 0 + $dbh->do($_[0]) };
}

# the rows a handle read, or the rows it changed
sub outcome {
    my ($self, $sth, $reads) = @_;
    return $reads ? $self->read_rows($sth) : 0 + $sth->rows;
}

# bind_param of every value with its type's attributes (sticky for later executes)
sub bind_row {
    my ($self, $sth, $row, $binds) = @_;
    $sth->bind_param($_ + 1, $row->[$_], $binds->[$_]) for 0 .. $#$row;
}

sub binds {
    my ($self, $step) = @_;
    my $family = $self->family;
    return [map { $family->bind_attr($_) } @{$step->{types}}];
}

sub extended_op {
    my ($self, $step, $dbh) = @_;
    my ($sql, $reads, $binds) = ($step->{sql}, $step->{reads}, $self->binds($step));
    return sub {
        my $sth = $self->statement($dbh, $sql, 'extended');
        $self->bind_row($sth, $_[0], $binds);
        $sth->execute;
        return $self->outcome($sth, $reads);
    };
}

# the prepared mode's handle: prepared, bound with the first row's values and executed in the
# first operation; executed with each later row (`$handle`: a reference to where it is kept)
sub execute_prepared {
    my ($self, $dbh, $handle, $sql, $row, $binds) = @_;
    if ($$handle) {
        $$handle->execute(@$row);
    } else {
        $$handle = $self->statement($dbh, $sql, 'prepared');
        $self->bind_row($$handle, $row, $binds);
        $$handle->execute;
    }
    return $$handle;
}

sub prepared_op {
    my ($self, $step, $dbh) = @_;
    my ($sql, $reads, $binds) = ($step->{sql}, $step->{reads}, $self->binds($step));
    my $sth;
    return sub { $self->outcome($self->execute_prepared($dbh, \$sth, $sql, $_[0], $binds), $reads) };
}

sub batch_op {
    my ($self, $step, $dbh) = @_;
    my ($sql, $binds) = ($step->{sql}, $self->binds($step));
    my $sth;
    return sub {
        my ($group) = @_;
        $dbh->begin_work;
        $self->execute_prepared($dbh, \$sth, $sql, $_, $binds) for @$group;
        $dbh->commit;
        return scalar @$group;
    };
}

# A load (Loading.pm): the driver's hand-written strategies, each statement run as the extended
# mode runs it (a handle per statement, values bound with their types), its result decoded by its
# own columns' types; the entities' levels kept for the verification pass, whose statements are
# counted here.
sub load_op {
    my ($self, $step, $dbh) = @_;
    my ($plan, $family) = ($step->{plan}, $self->family);
    my $query = sub {
        my ($sql, $values, $types) = @_;
        $self->{statements}++ if defined $self->{statements};
        my $sth = $self->statement($dbh, $sql, 'extended');
        $sth->bind_param($_ + 1, $family->adapter($types->[$_])->($values->[$_]), $family->bind_attr($types->[$_]))
            for 0 .. $#$values;
        $sth->execute;
        my $result = $family->result_plan($sth, $self);
        return ($self->read_rows($sth, $result), $result->{kinds});
    };
    return sub {
        my ($rows, $levels) = load_entities($plan, $query, $_[0], $step->{types});
        $self->{levels} = $levels;
        return $rows;
    };
}

# Every row of a handle's result, each value decoded. What to decode is chosen at the step's first
# result from the handle's column types (the DBMS's `result_plan`) and kept for the step (a load
# gives each statement's own).
sub read_rows {
    my ($self, $sth, $given) = @_;
    my $plan = $given // ($self->{plan} //= $self->family->result_plan($sth, $self));
    my $decode = $plan->{decoders};
    my @rows;
    if (@$decode) {
        while (my $r = $sth->fetchrow_arrayref) {
            my @row = @$r;
            for (my $k = 0; $k < @$decode; $k += 2) {
                my $c = $decode->[$k];
                $row[$c] = $decode->[$k + 1]->($row[$c]) if defined $row[$c];
            }
            push @rows, \@row;
        }
    } else {
        while (my $r = $sth->fetchrow_arrayref) { push @rows, [@$r] }
    }
    return \@rows;
}

sub kinds { $_[0]{plan} ? $_[0]{plan}{kinds} : undef }
sub width { $_[0]{plan} ? $_[0]{plan}{width} : undef }

sub txn_begin { $_[1]->begin_work }
sub txn_commit { $_[1]->commit }

sub recover {
    my ($self) = @_;
    my $dbh = $self->{conn} or return;
    $dbh->rollback unless $dbh->{AutoCommit};
}

sub per_request_op {
    my ($self, $make) = @_;
    return sub {
        my $dbh = $self->connect;
        my $result = eval { $make->($dbh)->($_[0]) };
        my $error = $@;
        $dbh->disconnect;
        die $error unless defined $result;
        return $result;
    };
}

sub end_step { delete $_[0]{plan} }

1;
