package AccessBench::Worker::Checksum;
# The verification checksum (protocol/PROTOCOL.md, Checksum): per row FNV-1a 64 over its values'
# canonical encodings, summed mod 2^64 over the rows. A row's values are native Perl values with
# one kind per column (the canonical encoding's tag), chosen from the result's column types by
# the driver; a column of no fixed kind (SQLite's: its values carry their own storage class)
# has kind undef, and each of its values is encoded by what the scalar holds (see dynamic_kind).
use strict;
use warnings;
use utf8;

use B ();

use AccessBench::Worker::Errors qw(protocol_error);
use AccessBench::Worker::Json qw(json_bool);
use AccessBench::Worker::SqlText qw(decimal_plain);

use Exporter 'import';
our @EXPORT_OK = qw(typed_value);

use constant {
    FNV_OFFSET => -3750763034362895579,    # 0xcbf29ce484222325 as a signed 64-bit integer
    FNV_PRIME  => 1099511628211,           # 0x100000001b3
};

# kind → the canonical encoding of a non-NULL value of it
my %ENCODE = (
    B => sub { 'B' . ($_[0] ? "\x01" : "\x00") },
    I => sub { 'I' . pack('q<', $_[0]) },
    F => sub { 'F' . pack('d<', $_[0]) },
    D => sub { 'D' . pack('V', length $_[0]) . $_[0] },
    S => sub { my $b = $_[0]; utf8::encode($b); 'S' . pack('V', length $b) . $b },
    X => sub { 'X' . pack('V', length $_[0]) . $_[0] },
    T => sub { 'T' . pack('q<', $_[0]) },
    d => sub { 'd' . pack('l<', $_[0]) },
    t => sub { 't' . pack('q<', $_[0]) },
);

# The kind of a value by what its scalar holds: a string marked as characters is text (DBD::SQLite
# marks every TEXT value so, and never a BLOB), an integer is an integer, a double a double, and
# any other string bytes.
sub dynamic_kind {
    return 'S' if utf8::is_utf8($_[0]);
    my $flags = B::svref_2object(\$_[0])->FLAGS;
    return 'I' if $flags & B::SVf_IOK;
    return 'F' if $flags & B::SVf_NOK;
    return 'X';
}

sub new {
    my ($class, $dump) = @_;
    return bless {total => 0, rows => 0, dump => $dump // 0, dumped => []}, $class;
}

sub rows { $_[0]{rows} }
sub dumped { $_[0]{dumped} }

sub fnv1a64 {
    my $h = FNV_OFFSET;
    for my $byte (unpack 'C*', $_[0]) {
        $h ^= $byte;
        use integer;
        $h *= FNV_PRIME;
    }
    return $h;
}

# one row of values with their kinds (undef: by each value)
sub add_row {
    my ($self, $row, $kinds) = @_;
    my ($bytes, @typed) = ('');
    my $dumping = $self->{rows} < $self->{dump};
    for my $c (0 .. $#$row) {
        my $v = $row->[$c];
        my $kind = defined $v ? ($kinds->[$c] // dynamic_kind($v)) : 'N';
        $bytes .= $kind eq 'N' ? 'N' : $ENCODE{$kind}->($v);
        push @typed, typed_json($v, $kind) if $dumping;
    }
    push @{$self->{dumped}}, \@typed if $dumping;
    my $h = fnv1a64($bytes);
    { use integer; $self->{total} += $h; }
    $self->{rows}++;
}

sub hexdigest { sprintf '%016x', $_[0]{total} }

my %TYPE_NAME = (B => 'bool', I => 'int', F => 'float', D => 'decimal', S => 'text', X => 'bytes',
                 T => 'timestamp', d => 'date', t => 'time');

# A value read, as the protocol writes it out (the `checksum` op's input form, a verification
# pass's `dump`): what its encoding encodes, readable.
sub typed_json {
    my ($v, $kind) = @_;
    return {type => 'null'} if $kind eq 'N';
    my $type = $TYPE_NAME{$kind};
    my $value = $kind eq 'B' ? json_bool($v)
        : $kind eq 'F' ? unpack('H*', pack 'd>', $v)
        : $kind eq 'X' ? unpack('H*', $v)
        : $kind =~ /[ITdt]/ ? 0 + $v
        : "$v";
    return {type => $type, value => $value};
}

# A typed conformance value ({type, value}) → (native value, kind)
sub typed_value {
    my ($t) = @_;
    protocol_error('a typed value is an object') unless ref $t eq 'HASH';
    my ($type, $v) = ($t->{type} // '', $t->{value});
    return (undef, 'N') if $type eq 'null';
    return ($v ? 1 : 0, 'B') if $type eq 'bool';
    my %integer = (int => 'I', timestamp => 'T', time => 't', date => 'd');
    if (my $kind = $integer{$type}) {
        protocol_error("a $type value must be an integer") unless defined $v && $v =~ /\A-?[0-9]+\z/;
        return (0 + $v, $kind);
    }
    if ($type eq 'float') {
        protocol_error('a float value is 16 hex digits') unless defined $v && $v =~ /\A[0-9a-fA-F]{16}\z/;
        return (unpack('d>', pack 'H*', $v), 'F');
    }
    return (decimal_plain($v) // protocol_error("not a decimal: $v"), 'D') if $type eq 'decimal';
    return ("$v", 'S') if $type eq 'text' && defined $v;
    if ($type eq 'bytes') {
        protocol_error('a bytes value is hex') unless defined $v && $v =~ /\A(?:[0-9a-fA-F]{2})*\z/;
        return (pack('H*', $v), 'X');
    }
    protocol_error("unknown value type '$type'");
}

1;
