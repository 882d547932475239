package AccessBench::Worker::Dbms::PostgreSQL;
# PostgreSQL for DBD::Pg (libpq underneath): the endpoint as a libpq connection string (TLS keys
# in libpq's own words, read_only and the schema in the startup packet), each value type bound
# with its pg_type and the server's text of its value, each result column decoded by its type
# name, COPY's text format, and the SQLSTATE of an error.
use strict;
use warnings;
use utf8;

use DBD::Pg qw(:pg_types);

use AccessBench::Worker::Calendar qw(date_text timestamp_text parse_sql_timestamp parse_sql_date parse_sql_time);
use AccessBench::Worker::Errors qw(protocol_error unsupported);
use AccessBench::Worker::SqlText qw(shortest_float);

sub dbms { 'postgresql' }

my %SSLMODES = map { $_ => 1 } qw(disable allow prefer require verify-ca verify-full);
my %VERSIONS = map { $_ => 1 } qw(TLSv1.2 TLSv1.3);

# a libpq connection-string value, single-quoted (DBD::Pg turns ';' outside quotes into spaces)
sub _quoted { "'" . ($_[0] =~ s/([\\'])/\\$1/gr) . "'" }

# The endpoint's TLS keys → libpq's: sslmode as it is (libpq is what the protocol's words come
# from), sslrootcert, ssl_min/max_protocol_version for a pinned version; gssencmode=disable so
# libpq never tries GSSAPI encryption first
sub tls_keys {
    my ($ep) = @_;
    my $mode = $ep->{sslmode} // 'prefer';
    protocol_error("unknown sslmode '$mode'") unless $SSLMODES{$mode};
    my @keys = (sslmode => $mode, gssencmode => 'disable');
    push @keys, sslrootcert => $ep->{sslrootcert} if $ep->{sslrootcert} && $mode =~ /\Averify-/;
    if (my $version = $ep->{tls_version}) {
        protocol_error("unknown tls_version '$version' (TLSv1.2 or TLSv1.3)") unless $VERSIONS{$version};
        push @keys, ssl_min_protocol_version => $version, ssl_max_protocol_version => $version;
    }
    if (($ep->{sslnegotiation} // 'postgres') eq 'direct') {
        unsupported('sslnegotiation=direct: DBD::Pg here runs on Debian\'s libpq 15, which has no sslnegotiation '
                    . '(libpq 17 and later)');
    }
    return @keys;
}

use constant TLS_SETTING => 'libpq\'s own keys in the connection string DBD::Pg hands to PQconnectdb: sslmode as '
    . 'the endpoint says (disable: no SSLRequest; prefer/absent: libpq\'s default, TLS when the server offers it; '
    . 'require: encrypted, nothing checked; verify-ca: the chain to sslrootcert; verify-full: the chain and the host '
    . 'name), sslrootcert, ssl_min_protocol_version = ssl_max_protocol_version for a pinned tls_version; '
    . 'gssencmode=disable (no GSSAPI probe); sslnegotiation=direct unsupported (libpq 15); libpq reads the CA and '
    . 'makes its SSL context per connection, inside connect\'s time';

use constant READ_ONLY_SETTING => 'endpoint read_only: options=\'-c default_transaction_read_only=on\' in the '
    . 'startup packet (beside -c search_path), on every connection the worker opens (open\'s, a connect step\'s, '
    . 'per-request\'s)';

# (dsn, user, password, DBI attributes) of the endpoint
sub connection {
    my ($class, $ep, $driver) = @_;
    my @options = map { "-c $_" } grep { defined } ($ep->{schema} ? "search_path=$ep->{schema}" : undef),
        ($ep->{read_only} ? 'default_transaction_read_only=on' : undef), @{$driver->startup};
    my %keys = (host => $ep->{host}, port => $ep->{port}, dbname => $ep->{database}, tls_keys($ep),
                (@options ? (options => "@options") : ()));
    my $dsn = 'dbi:Pg:' . join ';', map { "$_=" . _quoted($keys{$_}) } grep { defined $keys{$_} } sort keys %keys;
    return ($dsn, $ep->{user}, $ep->{password}, {pg_server_prepare => 1, pg_bool_tf => 0, pg_expand_array => 0});
}

sub ready { }

# server_pid, server_version; DateStyle checked to be ISO (the decoders read ISO dates): if the
# server's is not, SET on this connection and asked for in the startup packet of the later ones
sub describe {
    my ($class, $dbh, $driver) = @_;
    my ($datestyle) = $dbh->selectrow_array('SHOW DateStyle');
    if ($datestyle !~ /\AISO/) {
        $dbh->do('SET DateStyle = ISO');
        $driver->add_startup('DateStyle=ISO');
    }
    my $v = $dbh->{pg_server_version};
    return {server_pid => $dbh->{pg_pid}, server_version => sprintf('%d.%d', $v / 10000, $v % 10000)};
}

sub sqlstate {
    my ($class, $state) = @_;
    return defined $state && $state =~ /\A[0-9A-Z]{5}\z/ && $state ne 'S1000' ? $state : undef;
}

# ---- parameters -----------------------------------------------------------------------------------
# Each type with its pg_type (the OID DBD::Pg passes to PQexecParams/PQprepare) and its value in
# PostgreSQL's text input form, made before the clock: a double as its shortest round-trip text
# (Perl would stringify it with 15 digits), dates and timestamps as their ISO texts, booleans 1/0;
# bytea as the bytes themselves, which DBD::Pg sends in binary format.

my %PG_TYPE = (int => PG_INT8, bool => PG_BOOL, float => PG_FLOAT8, decimal => PG_NUMERIC, text => PG_TEXT,
               date => PG_DATE, timestamp => PG_TIMESTAMP, bytes => PG_BYTEA);

sub bind_attr { {pg_type => $PG_TYPE{$_[1]}} }

my $same = sub { $_[0] };
my %ADAPT = (float => \&shortest_float, date => \&date_text, timestamp => sub { timestamp_text($_[0]) },
             bool => sub { $_[0] ? 1 : 0 });

sub adapter { $ADAPT{$_[1]} // $same }

use constant PARAMETER_SETTING => 'bind_param with pg_type per value type, before the first execute (sticky): '
    . 'int8, bool (1/0), float8 (the shortest round-trip text: Perl would stringify a double with 15 digits), '
    . 'numeric (its plain text), text, date (YYYY-MM-DD), timestamp (YYYY-MM-DD HH:MM:SS[.ffffff]), bytea (the '
    . 'bytes, sent by DBD::Pg in binary format); NULL as undef with its type';

# ---- COPY's text format ------------------------------------------------------------------------------

my %ESCAPE = ("\\" => '\\\\', "\t" => '\\t', "\n" => '\\n', "\r" => '\\r');
my %COPY_TEXT = (bool => sub { $_[0] ? 't' : 'f' }, bytes => sub { '\\\\x' . unpack 'H*', $_[0] },
                 text => sub { $_[0] =~ s/([\\\t\n\r])/$ESCAPE{$1}/gr });

# a generated row as one line of COPY … FROM STDIN (text format): tab-separated, \N for NULL
sub copy_line {
    my ($class, $row, $types) = @_;
    my @fields = map {
        my ($v, $type) = ($row->[$_], $types->[$_]);
        !defined $v ? '\\N' : ($COPY_TEXT{$type} // $ADAPT{$type} // $same)->($v);
    } 0 .. $#$row;
    my $line = join("\t", @fields) . "\n";
    utf8::encode($line);
    return $line;
}

# ---- results -----------------------------------------------------------------------------------------
# DBD::Pg reads text results and already makes int2/int4/int8 integers, float4/float8 doubles (the
# server's shortest text through strtod: a real is the double of PostgreSQL's text for it), bool
# 1/0 and bytea bytes; numeric stays its text; timestamps, dates and times are parsed here.

my %KIND = (int2 => 'I', int4 => 'I', int8 => 'I', oid => 'I', xid => 'I', cid => 'I', float4 => 'F',
            float8 => 'F', numeric => 'D', bool => 'B', bytea => 'X', timestamp => 'T', timestamptz => 'T',
            date => 'd', time => 't');
my %DECODE = (timestamp => \&parse_sql_timestamp, timestamptz => \&parse_sql_timestamp, date => \&parse_sql_date,
              time => \&parse_sql_time, oid => sub { 0 + $_[0] }, xid => sub { 0 + $_[0] }, cid => sub { 0 + $_[0] });

sub result_plan {
    my ($class, $sth) = @_;
    my $types = $sth->{pg_type} // [];
    my @decoders = map { $DECODE{$types->[$_]} ? ($_, $DECODE{$types->[$_]}) : () } 0 .. $#$types;
    return {kinds => [map { $KIND{$_} // 'S' } @$types], decoders => \@decoders, width => scalar @$types};
}

use constant RESULT_SETTING => 'text results as DBD::Pg makes them (pg_bool_tf 0, pg_expand_array 0, no '
    . 'ChopBlanks): int2/int4/int8 → integer, float4/float8 → double (strtod of the server\'s shortest text), '
    . 'bool → 1/0, bytea → bytes, numeric → its text, char(n) padded as sent, text types → character strings '
    . '(client_encoding UTF8); then by the column\'s pg_type: timestamp/timestamptz → µs since 1970 (parsed from '
    . 'ISO text, timestamptz by its printed offset), date → days, time → µs, oid/xid/cid → integer';

1;
