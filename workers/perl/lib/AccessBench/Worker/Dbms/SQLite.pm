package AccessBench::Worker::Dbms::SQLite;
# SQLite for DBD::SQLite: the file opened read-write or read-only, each value type bound as the
# storage class the data loader writes it with, and values read with the storage class each
# one has (SQLite types values, not columns).
use strict;
use warnings;
use utf8;

use DBI qw(:sql_types);
use DBD::SQLite::Constants qw(:dbd_sqlite_string_mode :flags_for_file_open_operations);

use AccessBench::Worker::Calendar qw(date_text timestamp_text);
use AccessBench::Worker::Errors qw(protocol_error);
use AccessBench::Worker::SqlText qw(plain_float);

sub dbms { 'sqlite' }

use constant BUSY_TIMEOUT_MS => 5000;    # as c-sqlite and Python's sqlite3

use constant READ_ONLY_SETTING => 'endpoint read_only: sqlite_open_flags SQLITE_OPEN_READONLY (sqlite3_open_v2), for '
    . 'every connection (open\'s, a connect step\'s, per-request\'s): SQLite itself refuses every write';

# (dsn, user, password, DBI attributes) of the endpoint: the file, read-only when asked; strings
# read as characters only for TEXT values (BLOBs stay bytes); begin_work sends a deferred BEGIN
sub connection {
    my ($class, $ep) = @_;
    protocol_error('the sqlite endpoint needs a file') unless defined $ep->{file} && !ref $ep->{file};
    my $flags = $ep->{read_only} ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    return ("dbi:SQLite:dbname=$ep->{file}", '', '', {
        sqlite_open_flags => $flags, sqlite_string_mode => DBD_SQLITE_STRING_MODE_UNICODE_STRICT,
        sqlite_use_immediate_transaction => 0,
    });
}

sub ready {
    my ($class, $dbh) = @_;
    $dbh->sqlite_busy_timeout(BUSY_TIMEOUT_MS);
}

sub describe {
    my ($class, $dbh) = @_;
    my ($version) = $dbh->selectrow_array('SELECT sqlite_version()');
    return {server_version => $version};
}

# SQLite has no SQLSTATE: DBD::SQLite's state is a generic one
sub sqlstate { undef }

# ---- parameters -----------------------------------------------------------------------------------
# As SQLite keeps each type (the data loader writes them so): integers and booleans (1/0) as
# INTEGER (SQL_BIGINT, SQL_INTEGER), doubles as REAL (SQL_DOUBLE), bytes as BLOB (SQL_BLOB),
# decimals, dates and timestamps as their TEXT. DBD::SQLite binds a value from its string, and
# binds a double only when '%.Nf' of the value prints that string again (else as TEXT): a double
# is given as its plain decimal text with the fewest fraction digits that read back as it.

my %SQL_TYPE = (int => SQL_BIGINT, bool => SQL_INTEGER, float => SQL_DOUBLE, decimal => SQL_VARCHAR,
                text => SQL_VARCHAR, date => SQL_VARCHAR, timestamp => SQL_VARCHAR, bytes => SQL_BLOB);

sub bind_attr { $SQL_TYPE{$_[1]} }

my $same = sub { $_[0] };
my %ADAPT = (float => \&plain_float, date => \&date_text, timestamp => sub { timestamp_text($_[0]) },
             bool => sub { $_[0] ? 1 : 0 });

sub adapter { $ADAPT{$_[1]} // $same }

use constant PARAMETER_SETTING => 'bind_param with a DBI SQL type per value type, before the first execute (sticky): '
    . 'integers SQL_BIGINT and booleans SQL_INTEGER 1/0 (sqlite3_bind_int64), doubles SQL_DOUBLE given as plain '
    . 'decimal text with the fewest fraction digits that read back as the double (DBD::SQLite binds a double only '
    . 'when \'%.Nf\' of the value prints the given text again; Perl\'s own 15-digit text would lose bits) → '
    . 'sqlite3_bind_double, bytes SQL_BLOB (sqlite3_bind_blob); decimals, dates (YYYY-MM-DD) and timestamps '
    . '(YYYY-MM-DD HH:MM:SS[.ffffff]) as TEXT, as the target stores them; NULL as undef';

# ---- results -----------------------------------------------------------------------------------------
# DBD::SQLite reads each value by its storage class: INTEGER → integer, REAL → double, TEXT →
# a character string (DBD_SQLITE_STRING_MODE_UNICODE_STRICT marks every one), BLOB → bytes. No
# column has a fixed kind: the checksum takes each value's own.

sub result_plan {
    my ($class, $sth) = @_;
    my $width = $sth->{NUM_OF_FIELDS} // 0;
    return {kinds => [(undef) x $width], decoders => [], width => $width};
}

use constant RESULT_SETTING => 'as DBD::SQLite reads them, by each value\'s storage class: INTEGER → integer '
    . '(64-bit IV), REAL → double, TEXT → character string (sqlite_string_mode DBD_SQLITE_STRING_MODE_UNICODE_STRICT: '
    . 'every TEXT value decoded from UTF-8, BLOBs left as bytes), BLOB → bytes, NULL → undef';

1;
