package AccessBench::Worker::Driver::Pg;
# pl-dbi-pg: DBI over DBD::Pg (libpq). Setting (part of the method name): batch=rows|copy
# (default rows: the prepared handle executed per row; copy: COPY … FROM STDIN with
# pg_putcopydata per row, the table and columns from the step's insert shape).
#
# What DBD::Pg sends for each mode (its dbd_st_execute picks PQexec, PQexecParams or
# PQexecPrepared): a statement without placeholders goes by PQexec (the simple query protocol);
# with placeholders, pg_switch_prepared decides: 0 → PQexecParams on every execute (unnamed,
# parsed every time), 1 → PQprepare of a named statement dbdpg_pPID_N at the first execute, then
# PQexecPrepared; the named statement is DEALLOCATEd when its handle is destroyed.
use strict;
use warnings;
use utf8;

use DBD::Pg ();

use AccessBench::Worker::Dbms::PostgreSQL;
use AccessBench::Worker::Errors qw(unsupported);

use parent -norequire, 'AccessBench::Worker::DbiDriver';
require AccessBench::Worker::DbiDriver;

sub new {
    my ($class, $method) = @_;
    my $self = $class->SUPER::new($method);
    @$self{qw(family copy)} = ('AccessBench::Worker::Dbms::PostgreSQL', 0);
    return $self;
}

sub configure {
    my ($self, $key, $value) = @_;
    unsupported("pl-dbi-pg has no setting $key=$value (batch=rows|copy)")
        unless $key eq 'batch' && ($value eq 'rows' || $value eq 'copy');
    $self->{copy} = $value eq 'copy';
}

sub driver_name { 'DBD::Pg' }
sub driver_version { "$DBD::Pg::VERSION (DBI $DBI::VERSION, libpq 15)" }

sub batch_style {
    return $_[0]{copy}
        ? 'one transaction per group: begin_work, $dbh->do(COPY table (columns) FROM STDIN), $dbh->pg_putcopydata per '
          . 'row (text format, each line made before the clock), pg_putcopyend, commit'
        : 'one transaction per group: begin_work, the prepared handle (PQprepare in the first group) executed per '
          . 'row, each a round trip (DBI has no batch protocol for DBD::Pg: execute_array loops execute), commit';
}

my %PIN = (text => {pg_placeholder_dollaronly => 1}, extended => {}, prepared => {});
my %SWITCH = (extended => 0, prepared => 1);

# the statement handle of a mode: text without placeholders (only $1-style markers would count,
# and no text this worker sends has one), or with pg_switch_prepared pinned for the bound modes
sub statement {
    my ($self, $dbh, $sql, $mode) = @_;
    my $sth = $dbh->prepare($sql, $PIN{$mode});
    $sth->{pg_switch_prepared} = $SWITCH{$mode} if exists $SWITCH{$mode};
    return $sth;
}

sub settings {
    my ($self) = @_;
    my $family = $self->family;
    return {
        %{$self->dbi_settings},
        connection => 'DBI->connect("dbi:Pg:host=…;port=…;dbname=…;options=…;sslmode=…", user, password): the '
            . 'endpoint\'s keys in libpq\'s connection string; options=\'-c search_path=<schema>\' in the startup '
            . 'packet; DateStyle checked to be ISO at open (SHOW DateStyle, untimed; SET and asked for at startup of '
            . 'later connections if not); pg_server_prepare 1, pg_bool_tf 0, pg_expand_array 0',
        tls => $family->TLS_SETTING,
        read_only => $family->READ_ONLY_SETTING,
        literal => 'reading rows: $dbh->prepare(text, {pg_placeholder_dollaronly => 1}) per operation, execute: no '
            . 'placeholders, so PQexec (simple query protocol); writing: $dbh->do(text): PQexec',
        extended => '$dbh->prepare(sql) per operation, $sth->{pg_switch_prepared} = 0, bind_param with types, execute: '
            . 'PQexecParams (Parse of the unnamed statement, Bind, Describe, Execute, Sync: parsed every time)',
        prepared => '$dbh->prepare(sql) in the first operation, $sth->{pg_switch_prepared} = 1, bind_param with types, '
            . 'execute: PQprepare of dbdpg_pPID_N (Parse + Sync, a round trip) then PQexecPrepared, inside the first '
            . 'operation; later operations $sth->execute(@values): PQexecPrepared; the handle dropped after the step '
            . '(untimed): DEALLOCATE',
        'automatic preparation' => 'pinned: pg_switch_prepared per handle as above (DBD::Pg\'s default, 2, would '
            . 'switch a handle to a named statement at its second execute); pg_prepare_now 0; pg_server_prepare 1 '
            . '(0 would interpolate values on the client)',
        'statement cache' => 'none: no prepare_cached; a handle is made where the mode says and dropped with its op',
        parameters => $family->PARAMETER_SETTING,
        results => $family->RESULT_SETTING,
        batch => $self->{copy} ? 'copy' : 'rows',
    };
}

# ---- batch=copy ---------------------------------------------------------------------------------------

sub adapt_batch {
    my ($self, $rows, $types, $step) = @_;
    return $self->SUPER::adapt_batch($rows, $types) unless $self->{copy};
    my $shape = $step->{shape};
    unsupported('pl-dbi-pg/batch=copy writes the table and columns of an insert; this statement has no insert shape')
        unless ref $shape eq 'HASH' && ($shape->{kind} // '') eq 'insert';
    my $columns = join ', ', map { qq("$_") } @{$shape->{columns}};
    $step->{copy} = qq(COPY "$shape->{table}" ($columns) FROM STDIN);
    return [map { $self->family->copy_line($_, $types) } @$rows];
}

sub batch_op {
    my ($self, $step, $dbh) = @_;
    return $self->SUPER::batch_op($step, $dbh) unless $self->{copy};
    my $copy = $step->{copy};
    return sub {
        my ($group) = @_;
        $dbh->begin_work;
        $dbh->do($copy);
        $dbh->pg_putcopydata($_) for @$group;
        $dbh->pg_putcopyend;
        $dbh->commit;
        return scalar @$group;
    };
}

1;
