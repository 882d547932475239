package AccessBench::Worker::Driver::SQLite;
# pl-dbi-sqlite: DBI over DBD::SQLite (the SQLite library DBD::SQLite was built with, in process).
#
# DBD::SQLite compiles a statement (sqlite3_prepare_v2) when DBI prepares it, binds and steps it
# at execute, resets it for the next execute, and finalizes it when the handle is destroyed.
use strict;
use warnings;
use utf8;

use DBD::SQLite ();

use AccessBench::Worker::Dbms::SQLite;

use parent -norequire, 'AccessBench::Worker::DbiDriver';
require AccessBench::Worker::DbiDriver;

sub new {
    my ($class, $method) = @_;
    my $self = $class->SUPER::new($method);
    $self->{family} = 'AccessBench::Worker::Dbms::SQLite';
    return $self;
}

sub driver_name { 'DBD::SQLite' }
sub driver_version { "$DBD::SQLite::VERSION (DBI $DBI::VERSION, SQLite $DBD::SQLite::sqlite_version)" }

sub batch_style {
    'one transaction per group: begin_work (BEGIN, deferred), the prepared handle (sqlite3_prepare_v2 in the first '
    . 'group) executed per row, commit';
}

sub statement {
    my ($self, $dbh, $sql) = @_;
    return $dbh->prepare($sql);
}

sub settings {
    my ($self) = @_;
    my $family = $self->family;
    return {
        %{$self->dbi_settings},
        open => 'DBI->connect("dbi:SQLite:dbname=<file>") with sqlite_open_flags READWRITE|CREATE, sqlite_string_mode '
            . 'DBD_SQLITE_STRING_MODE_UNICODE_STRICT, sqlite_use_immediate_transaction 0 (DBD::SQLite\'s default, 1, '
            . 'would make begin_work send BEGIN IMMEDIATE), then sqlite_busy_timeout(' . $family->BUSY_TIMEOUT_MS
            . ') (as c-sqlite and py-sqlite3; DBD::SQLite\'s default is 30 s); no pragmas: the SQLite defaults and the '
            . 'file\'s journal mode',
        read_only => $family->READ_ONLY_SETTING,
        literal => 'reading rows: $dbh->prepare(text) per operation (sqlite3_prepare_v2), execute, fetch, the handle '
            . 'finalized at the operation\'s end; writing: $dbh->do(text)',
        extended => '$dbh->prepare(sql) per operation (sqlite3_prepare_v2), bind_param with types, execute '
            . '(sqlite3_step), finalized at the operation\'s end: compiled every time',
        prepared => '$dbh->prepare(sql) inside the first operation (compiled once), bound with types and executed; '
            . 'later operations $sth->execute(@values) (sqlite3_reset, bind, step); finalized after the step',
        'statement cache' => 'none: no prepare_cached (SQLite itself keeps no statement cache)',
        parameters => $family->PARAMETER_SETTING,
        results => $family->RESULT_SETTING,
    };
}

1;
