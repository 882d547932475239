package AccessBench::Worker::Errors;
# The errors a worker answers with (protocol/PROTOCOL.md, "Answers and errors"): each kind is a
# class, thrown with die and turned into an answer by the host. Anything else that dies (a plain
# string, a bug) is answered as kind `internal`.
use strict;
use warnings;
use utf8;

use Exporter 'import';
our @EXPORT_OK = qw(unsupported protocol_error db_error error_kind);

sub new {
    my ($class, %fields) = @_;
    return bless {%fields}, $class;
}

sub message { $_[0]{message} }

# the driver cannot do what was asked, as asked
sub unsupported { die AccessBench::Worker::Errors::Unsupported->new(message => join '', @_) }

# the message was malformed
sub protocol_error { die AccessBench::Worker::Errors::Protocol->new(message => join '', @_) }

# the database or the driver refused: with the SQLSTATE where the DBMS gives one
sub db_error {
    my (%fields) = @_;
    die AccessBench::Worker::Errors::Db->new(%fields);
}

# the answer's kind of an error: its class's, or `internal` for anything else that died
sub error_kind {
    my ($e) = @_;
    return (ref $e && $e->isa(__PACKAGE__)) ? $e->kind : 'internal';
}

package AccessBench::Worker::Errors::Unsupported;
our @ISA = ('AccessBench::Worker::Errors');
sub kind { 'unsupported' }

package AccessBench::Worker::Errors::Protocol;
our @ISA = ('AccessBench::Worker::Errors');
sub kind { 'protocol' }

package AccessBench::Worker::Errors::Db;
our @ISA = ('AccessBench::Worker::Errors');
sub kind { 'db' }
sub sqlstate { $_[0]{sqlstate} }

1;
