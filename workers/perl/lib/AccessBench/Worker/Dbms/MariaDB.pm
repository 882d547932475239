package AccessBench::Worker::Dbms::MariaDB;
# MariaDB for DBD::MariaDB (MariaDB Connector/C underneath): the endpoint as DBD::MariaDB's
# connection attributes (TLS, compression, read_only, CLIENT_FOUND_ROWS), each value type bound
# with its DBI SQL type, each result column decoded by its MySQL type, and the SQLSTATE of an
# error.
use strict;
use warnings;
use utf8;

use DBI qw(:sql_types);
use File::Temp ();

use AccessBench::Worker::Calendar qw(date_text timestamp_text parse_sql_timestamp parse_sql_date parse_sql_time);
use AccessBench::Worker::Errors qw(db_error protocol_error unsupported);
use AccessBench::Worker::SqlText qw(shortest_float);

sub dbms { 'mariadb' }

my %SSLMODES = map { $_ => 1 } qw(disable allow prefer require verify-ca verify-full);

# The endpoint's TLS keys → DBD::MariaDB's attributes. DBD::MariaDB 1.22 over Connector/C 3.x turns
# an enforced TLS (mariadb_ssl without mariadb_ssl_optional) into one that also checks the host
# name, so require and verify-ca ask for TLS as optional and the connection is checked to be
# encrypted after it is made (`ready`); Connector/C checks the chain whenever it has a CA. A pinned
# version has no DBD::MariaDB attribute: it goes to Connector/C's own option file (tls-version),
# read through mariadb_read_default_file.
sub tls_attrs {
    my ($ep) = @_;
    my $mode = $ep->{sslmode} // 'prefer';
    protocol_error("unknown sslmode '$mode'") unless $SSLMODES{$mode};
    unsupported("sslnegotiation=direct is PostgreSQL's; MariaDB's protocol has none")
        if ($ep->{sslnegotiation} // 'postgres') eq 'direct';
    unsupported("sslmode=allow is libpq's; Connector/C has no such mode") if $mode eq 'allow';
    return () if $mode eq 'disable' || $mode eq 'prefer';
    my %attrs = (mariadb_ssl => 1);
    if ($mode eq 'verify-full') {
        $attrs{mariadb_ssl_verify_server_cert} = 1;
    } else {
        $attrs{mariadb_ssl_optional} = 1;
    }
    if ($mode ne 'require') {
        unsupported("sslmode=$mode needs sslrootcert (the CA's PEM file)") unless $ep->{sslrootcert};
        $attrs{mariadb_ssl_ca_file} = $ep->{sslrootcert};
    }
    if (my $version = $ep->{tls_version}) {
        protocol_error("unknown tls_version '$version' (TLSv1.2 or TLSv1.3)") unless $version =~ /\ATLSv1\.[23]\z/;
        $attrs{mariadb_read_default_file} = option_file("[client]\ntls-version=$version\n");
    }
    return %attrs;
}

my @OPTION_FILES;    # kept while the worker runs: libmariadb reads them at every connect

sub option_file {
    my ($text) = @_;
    my $dir = $ENV{ACCESSBENCH_RUN_DIR};    # the run's directory, where a worker keeps what it makes
    my $file = File::Temp->new(TEMPLATE => 'abworker-perl-XXXXXX', SUFFIX => '.cnf',
                               ($dir ? (DIR => $dir) : (TMPDIR => 1)));
    print {$file} $text;
    $file->flush;
    push @OPTION_FILES, $file;
    return $file->filename;
}

use constant TLS_SETTING => 'DBD::MariaDB\'s attributes, set before Connector/C connects: disable, and prefer/absent '
    . '(Connector/C 3.3 asks for no TLS unless told to) → none; require → mariadb_ssl 1, mariadb_ssl_optional 1, no CA '
    . '(encrypted, nothing checked); verify-ca → mariadb_ssl 1, mariadb_ssl_optional 1, mariadb_ssl_ca_file (Connector/C '
    . 'checks the chain whenever it has a CA; no host name check); verify-full → mariadb_ssl 1, mariadb_ssl_ca_file, '
    . 'mariadb_ssl_verify_server_cert 1 (the chain and the host name); require and verify-ca are asked as optional '
    . 'because DBD::MariaDB 1.22 over Connector/C 3.x makes every enforced TLS check the host name too, so every '
    . 'connection asked to be encrypted is checked after connecting ($dbh->{mariadb_ssl_cipher}, no round trip) '
    . 'and fails if it is not; a pinned tls_version → Connector/C\'s option file (tls-version=…, through '
    . 'mariadb_read_default_file; DBD::MariaDB has no attribute for it); sslnegotiation=direct and sslmode=allow: '
    . 'unsupported; Connector/C reads the CA and makes its SSL context per connection, inside connect\'s time';

use constant READ_ONLY_SETTING => 'endpoint read_only: mariadb_init_command \'SET SESSION TRANSACTION READ ONLY\' '
    . '(Connector/C\'s MYSQL_INIT_COMMAND, run right after the handshake of every connection: open\'s, a connect '
    . 'step\'s, per-request\'s)';

use constant COMPRESS_SETTING => 'compress: mariadb_compression 1 (MYSQL_OPT_COMPRESS: CLIENT_COMPRESS, zlib) when '
    . 'the endpoint asks, checked at open (SHOW SESSION STATUS LIKE \'Compression\', untimed); otherwise off';

# (dsn, user, password, DBI attributes) of the endpoint
sub connection {
    my ($class, $ep) = @_;
    my $where = $ep->{socket} ? "mariadb_socket=$ep->{socket}" : "host=$ep->{host};port=$ep->{port}";
    my %attrs = (
        mariadb_client_found_rows => 1, mariadb_server_prepare => 0, mariadb_server_prepare_disable_fallback => 1,
        mariadb_auto_reconnect => 0, mariadb_multi_statements => 0, mariadb_use_result => 0,
        tls_attrs($ep),
        ($ep->{read_only} ? (mariadb_init_command => 'SET SESSION TRANSACTION READ ONLY') : ()),
        ($ep->{compress} ? (mariadb_compression => 1) : ()),
    );
    return ("DBI:MariaDB:database=$ep->{database};$where", $ep->{user}, $ep->{password}, \%attrs);
}

# every new connection: encrypted when TLS was asked for (Connector/C goes on without TLS when the
# server offers none and no host name check was asked)
sub ready {
    my ($class, $dbh, $driver) = @_;
    my $mode = $driver->endpoint->{sslmode} // 'prefer';
    return unless $mode =~ /\A(?:require|verify-ca|verify-full)\z/;
    return if $dbh->{mariadb_ssl_cipher};
    $dbh->disconnect;
    db_error(message => "sslmode=$mode: the server offers no TLS, and Connector/C connected without it");
}

# The serving thread's OS id (the runner reads its CPU time), the version, and checks of what
# open asked for: autocommit on (the server's default), compression granted
sub describe {
    my ($class, $dbh, $driver) = @_;
    my ($tid, $version, $autocommit) = $dbh->selectrow_array(
        'SELECT TID, VERSION(), @@autocommit FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()');
    unsupported('the server starts sessions with autocommit off; DBD::MariaDB assumes it on') unless $autocommit;
    if ($driver->endpoint->{compress}) {
        my (undef, $on) = $dbh->selectrow_array("SHOW SESSION STATUS LIKE 'Compression'");
        db_error(message => 'compress: the server did not accept the protocol\'s compression') unless $on eq 'ON';
    }
    return {server_pid => 0 + $tid, server_version => $version};
}

sub sqlstate {
    my ($class, $state) = @_;
    return defined $state && $state =~ /\A[0-9A-Z]{5}\z/ && $state ne 'S1000' ? $state : undef;
}

# ---- parameters -----------------------------------------------------------------------------------
# Each type with the DBI SQL type DBD::MariaDB maps onto the binary protocol's parameter types:
# SQL_BIGINT → LONGLONG, SQL_TINYINT → TINY (1/0), SQL_DOUBLE → DOUBLE (given as its shortest
# round-trip text: DBD::MariaDB keeps every bound value as its string, which Perl makes with 15 digits),
# SQL_BLOB → BLOB; DBD::MariaDB has no DECIMAL, DATE or DATETIME parameter type (it maps
# SQL_DECIMAL, SQL_TYPE_DATE and SQL_TYPE_TIMESTAMP to STRING): those go as their texts, which the
# server converts; text as STRING (utf8mb4).

my %SQL_TYPE = (int => SQL_BIGINT, bool => SQL_TINYINT, float => SQL_DOUBLE, decimal => SQL_DECIMAL,
                text => SQL_VARCHAR, date => SQL_TYPE_DATE, timestamp => SQL_TYPE_TIMESTAMP, bytes => SQL_BLOB);

sub bind_attr { $SQL_TYPE{$_[1]} }

my $same = sub { $_[0] };
my %ADAPT = (float => \&shortest_float, date => \&date_text, timestamp => sub { timestamp_text($_[0]) }, bool => sub { $_[0] ? 1 : 0 });

sub adapter { $ADAPT{$_[1]} // $same }

use constant PARAMETER_SETTING => 'bind_param with a DBI SQL type per value type, before the first execute (sticky): '
    . 'SQL_BIGINT (LONGLONG), SQL_TINYINT (TINY 1/0), SQL_DOUBLE (DOUBLE, given as its shortest round-trip text: DBD::MariaDB keeps a bound value as its string, and Perl would stringify a double with 15 digits), SQL_BLOB (BLOB), '
    . 'SQL_VARCHAR (STRING); decimals, dates and timestamps as STRING with their texts (DBD::MariaDB maps '
    . 'SQL_DECIMAL, SQL_TYPE_DATE and SQL_TYPE_TIMESTAMP to MYSQL_TYPE_STRING; the server converts); NULL as '
    . 'undef (sent as MYSQL_TYPE_NULL)';

# ---- results -----------------------------------------------------------------------------------------

use constant {
    T_DECIMAL => 0, T_TINY => 1, T_SHORT => 2, T_LONG => 3, T_FLOAT => 4, T_DOUBLE => 5, T_TIMESTAMP => 7,
    T_LONGLONG => 8, T_INT24 => 9, T_DATE => 10, T_TIME => 11, T_DATETIME => 12, T_YEAR => 13, T_NEWDATE => 14,
    T_BIT => 16, T_NEWDECIMAL => 246,
};

# a float32 widened to a double → the shortest decimal that reads back as the same float32 (what
# the text protocol prints), as a double
sub shortest_float32 {
    my ($x) = @_;
    my $bits = pack 'f', $x;
    for my $digits (1 .. 9) {
        my $text = sprintf '%.*g', $digits, $x;
        return 0 + $text if pack('f', $text) eq $bits;
    }
    return $x;
}

# zero dates (0000-00-00) read as NULL, as the other MariaDB methods have them
sub _or_zero {
    my ($parse) = @_;
    return sub { $_[0] =~ /\A0000-00-00/ ? undef : $parse->($_[0]) };
}

my %KIND = (T_TINY, 'I', T_SHORT, 'I', T_LONG, 'I', T_LONGLONG, 'I', T_INT24, 'I', T_YEAR, 'I', T_FLOAT, 'F',
            T_DOUBLE, 'F', T_DECIMAL, 'D', T_NEWDECIMAL, 'D', T_DATE, 'd', T_NEWDATE, 'd', T_DATETIME, 'T',
            T_TIMESTAMP, 'T', T_TIME, 't', T_BIT, 'X');
my %DECODE = (T_FLOAT, sub { 0 + $_[0] }, T_DOUBLE, sub { 0 + $_[0] }, T_DATE, _or_zero(\&parse_sql_date),
              T_NEWDATE, _or_zero(\&parse_sql_date), T_DATETIME, _or_zero(\&parse_sql_timestamp),
              T_TIMESTAMP, _or_zero(\&parse_sql_timestamp), T_TIME, \&parse_sql_time);

# A string or blob column is bytes or text by its character set, which DBD::MariaDB does not
# expose; its reported length tells them apart: the server gives a text column's length in the
# connection's character set, utf8mb4 (characters × 4), while binary strings and BLOBs keep theirs
# (255, 65535, 16777215, 2^32−1: never a multiple of 4). LONGTEXT (capped at 2^32−1 like LONGBLOB)
# and BINARY/VARBINARY(n) with n a multiple of 4 would read wrong; the suites make neither.
sub string_kind { $_[0] % 4 == 0 ? 'S' : 'X' }

sub result_plan {
    my ($class, $sth) = @_;
    my ($types, $lengths) = ($sth->{mariadb_type} // [], $sth->{mariadb_length} // []);
    my $binary = $sth->{mariadb_server_prepare};    # FLOAT read from the binary protocol: a widened float32
    my (@kinds, @decoders);
    for my $c (0 .. $#$types) {
        my $t = $types->[$c];
        push @kinds, $KIND{$t} // string_kind($lengths->[$c]);
        my $decode = $binary && $t == T_FLOAT ? \&shortest_float32 : $DECODE{$t};
        push @decoders, $c, $decode if $decode;
    }
    return {kinds => \@kinds, decoders => \@decoders, width => scalar @$types};
}

use constant RESULT_SETTING => 'as DBD::MariaDB reads them (mysql_store_result / mysql_stmt_store_result: the '
    . 'whole result buffered): integer types (BOOLEAN is TINYINT(1): an integer) → integers, DOUBLE → doubles, '
    . 'DECIMAL → its text, strings → character strings (utf8mb4), binary strings and BLOBs → bytes; then by the '
    . 'column\'s MySQL type: FLOAT from the binary protocol → the shortest decimal of its float32 (the text '
    . 'protocol\'s), DATE → days, DATETIME/TIMESTAMP → µs since 1970 (zero dates → NULL), TIME → µs; a string '
    . 'column is bytes or text by its reported length (DBD::MariaDB exposes no character set: text lengths are '
    . 'characters × 4 in utf8mb4, BLOB lengths odd), so LONGTEXT and VARBINARY(4k) would read wrong';

1;
