package AccessBench::Worker::Driver::MariaDB;
# pl-dbi-mariadb: DBI over DBD::MariaDB (MariaDB Connector/C).
#
# What DBD::MariaDB sends: a handle prepared with mariadb_server_prepare 0 (the connection's
# default here) is emulated on the client and goes by the text protocol (COM_QUERY); with
# mariadb_server_prepare 1, prepare() itself sends COM_STMT_PREPARE, execute COM_STMT_EXECUTE, and
# the handle's destruction COM_STMT_CLOSE; mariadb_server_prepare_disable_fallback 1 makes a
# statement the server cannot prepare an error rather than a silent client-side emulation.
# Connecting, DBD::MariaDB always sends SET NAMES 'utf8mb4', SET character_set_server,
# SET collation_connection and SET collation_server (four round trips after the handshake).
use strict;
use warnings;
use utf8;

use DBD::MariaDB ();

use AccessBench::Worker::Dbms::MariaDB;

use parent -norequire, 'AccessBench::Worker::DbiDriver';
require AccessBench::Worker::DbiDriver;

sub new {
    my ($class, $method) = @_;
    my $self = $class->SUPER::new($method);
    $self->{family} = 'AccessBench::Worker::Dbms::MariaDB';
    return $self;
}

sub driver_name { 'DBD::MariaDB' }
sub driver_version { "$DBD::MariaDB::VERSION (DBI $DBI::VERSION, MariaDB Connector/C of MariaDB 10.11)" }

sub batch_style {
    'one transaction per group: begin_work (SET autocommit=0), the prepared handle (COM_STMT_PREPARE in the first '
    . 'group) executed per row (COM_STMT_EXECUTE each, awaited; DBI\'s execute_array would loop the same), commit '
    . '(COMMIT, then SET autocommit=1)';
}

my %PIN = (text => {mariadb_server_prepare => 0},
           extended => {mariadb_server_prepare => 1, mariadb_server_prepare_disable_fallback => 1},
           prepared => {mariadb_server_prepare => 1, mariadb_server_prepare_disable_fallback => 1});

sub statement {
    my ($self, $dbh, $sql, $mode) = @_;
    return $dbh->prepare($sql, $PIN{$mode});
}

sub settings {
    my ($self) = @_;
    my $family = $self->family;
    return {
        %{$self->dbi_settings},
        connection => 'DBI->connect("DBI:MariaDB:database=…;host=…;port=…" (or mariadb_socket=…), user, password) '
            . 'with mariadb_client_found_rows 1 (CLIENT_FOUND_ROWS: an UPDATE counts the rows it matched), '
            . 'mariadb_server_prepare 0, mariadb_server_prepare_disable_fallback 1, mariadb_auto_reconnect 0, '
            . 'mariadb_multi_statements 0, mariadb_use_result 0; DBD::MariaDB then sends SET NAMES \'utf8mb4\', '
            . 'SET character_set_server = \'utf8mb4\', SET collation_connection and SET collation_server = '
            . '\'utf8mb4_unicode_ci\' on every connection (it always does; inside connect\'s time); open runs '
            . 'SELECT TID, VERSION(), @@autocommit FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID() '
            . '(untimed: server_pid, server_version, autocommit checked on)',
        tls => $family->TLS_SETTING,
        compress => $family->COMPRESS_SETTING,
        read_only => $family->READ_ONLY_SETTING,
        literal => 'reading rows: $dbh->prepare(text, {mariadb_server_prepare => 0}) per operation, execute: '
            . 'COM_QUERY (no placeholders, nothing interpolated); writing: $dbh->do(text): COM_QUERY; values inlined '
            . 'by this worker (strings with \' and \\ doubled, doubles in exponent form, bytes as X\'…\')',
        extended => '$dbh->prepare(sql, {mariadb_server_prepare => 1}) per operation (COM_STMT_PREPARE, awaited), '
            . 'bind_param with types, execute (COM_STMT_EXECUTE), the handle dropped at the operation\'s end '
            . '(COM_STMT_CLOSE, no reply): the binary protocol, prepared and executed every time',
        prepared => '$dbh->prepare(sql, {mariadb_server_prepare => 1}) inside the first operation (COM_STMT_PREPARE), '
            . 'bound with types and executed; later operations $sth->execute(@values) (COM_STMT_EXECUTE); the handle '
            . 'dropped after the step (untimed): COM_STMT_CLOSE',
        'automatic preparation' => 'none: server-side preparation only where the mode says; client-side emulation '
            . '(DBD::MariaDB\'s default) only for the texts this worker inlines itself, which have no placeholders',
        'statement cache' => 'none: no prepare_cached',
        record => 'unsupported: record-level access (MariaDB\'s HANDLER statements) is not built in this worker',
        transactions => 'begin_work: SET autocommit=0 (DBD::MariaDB\'s mysql_autocommit, a round trip); commit: '
            . 'COMMIT, then SET autocommit=1 (DBI turns AutoCommit back on): three round trips per transaction',
        parameters => $family->PARAMETER_SETTING,
        results => $family->RESULT_SETTING,
    };
}

1;
