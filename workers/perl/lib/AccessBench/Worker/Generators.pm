package AccessBench::Worker::Generators;
# The value generators (protocol/PROTOCOL.md, Generators), matching the Python reference
# (src/accessbench/protocol/generators.py) value for value. Every value has one of TYPES, each
# with its one Perl representation, so that a value's type is its column's and never a guess:
#   int → integer, bool → 1/0, float → number (a double), decimal → its plain text,
#   text → string, date → days since 1970-01-01, timestamp → µs since 1970-01-01 00:00:00,
#   bytes → byte string; NULL → undef.
use strict;
use warnings;
use utf8;

use POSIX ();
use Scalar::Util qw(looks_like_number);

use AccessBench::Worker::Calendar qw(floor_div parse_iso_date parse_iso_timestamp date_text timestamp_text);
use AccessBench::Worker::Errors qw(protocol_error);
use AccessBench::Worker::Json qw(is_bool is_string json_bool);
use AccessBench::Worker::Random;
use AccessBench::Worker::SqlText qw(decimal_plain);

use Exporter 'import';
our @EXPORT_OK = qw(generate_rows generate_values json_value TYPES);

use constant TYPES => qw(int bool float decimal text date timestamp bytes);
my %IS_TYPE = map { $_ => 1 } TYPES;
my %KIND_TYPE = (seq => 'int', uniform => 'int', text => 'text', timestamp => 'timestamp', float => 'float',
                 decimal => 'decimal', date => 'date', bytes => 'bytes');

sub _int_field {
    my ($spec, $key, $default) = @_;
    my $v = $spec->{$key};
    return $default unless defined $v;
    protocol_error("generator field '$key' must be an integer") unless $v =~ /\A-?[0-9]+\z/;
    return $v;
}

sub _num_field {
    my ($spec, $key) = @_;
    my $v = $spec->{$key};
    protocol_error("generator field '$key' must be a number") unless defined $v && looks_like_number($v);
    return 0 + $v;
}

# the type of a spec's values: its kind's, or for choice and const the spec's `type` (without
# one, the type of the first value as JSON has it, as the reference reads the older vectors)
sub _spec_type {
    my ($spec) = @_;
    my ($declared, $own) = ($spec->{type}, $KIND_TYPE{$spec->{kind} // ''});
    protocol_error("unknown value type '$declared'") if defined $declared && !$IS_TYPE{$declared};
    if (defined $own) {
        protocol_error("a $spec->{kind} generator makes $own, not $declared") if $declared && $declared ne $own;
        return $own;
    }
    return $declared if $declared;
    my $first = $spec->{kind} eq 'choice' ? (ref $spec->{values} eq 'ARRAY' ? $spec->{values}[0] : undef) : $spec->{value};
    return 'bool' if is_bool($first);
    return 'text' unless defined $first && !ref $first && !is_string($first);
    return $first =~ /\A-?[0-9]+\z/ ? 'int' : 'float';
}

# a choice's or const's JSON value as a value of `type`
sub _typed {
    my ($v, $type) = @_;
    my $bad = sub { protocol_error((defined $v ? "'$v'" : 'null') . " is not a $type value") };
    if ($type eq 'bool') { return is_bool($v) ? ($v ? 1 : 0) : $bad->() }
    if ($type eq 'int') { return (defined $v && !ref $v && $v =~ /\A-?[0-9]+\z/) ? 0 + $v : $bad->() }
    if ($type eq 'float') { return (defined $v && !ref $v && looks_like_number($v)) ? 0.0 + $v : $bad->() }
    if ($type eq 'text') { return (defined $v && !ref $v) ? "$v" : $bad->() }
    if ($type eq 'decimal') { return decimal_plain($v) // $bad->() }
    if ($type eq 'date') { return parse_iso_date($v) // $bad->() }
    if ($type eq 'timestamp') { return parse_iso_timestamp($v) // $bad->() }
    if ($type eq 'bytes') { return (defined $v && $v =~ /\A(?:[0-9a-fA-F]{2})*\z/) ? pack('H*', $v) : $bad->() }
    $bad->();
}

# integer count of 10^-scale → plain decimal text: (-1234, 2) → "-12.34"
sub _decimal_text {
    my ($units, $scale) = @_;
    my $digits = sprintf '%0*d', $scale + 1, abs $units;
    my $body = $scale ? substr($digits, 0, -$scale) . '.' . substr($digits, -$scale) : $digits;
    return ($units < 0 ? '-' : '') . $body;
}

# a span hi − lo + 1 that must be positive (uniform, decimal)
sub _span {
    my ($spec, $kind) = @_;
    protocol_error("$kind: lo and hi are required") unless defined $spec->{lo} && defined $spec->{hi};
    my ($lo, $hi) = (_int_field($spec, 'lo'), _int_field($spec, 'hi'));
    protocol_error("$kind: hi must be >= lo") if $hi < $lo;
    return ($lo, $hi - $lo + 1);
}

# Each kind: spec, its stream → a function of the value's index i
my %MAKERS = (
    seq => sub {
        my ($spec) = @_;
        my ($start, $step) = (_int_field($spec, 'start', 1), _int_field($spec, 'step', 1));
        my ($div, $mod) = (_int_field($spec, 'div', 1), _int_field($spec, 'mod', 0));
        protocol_error('seq: div must not be 0') if $div == 0;
        return sub {
            my $v = floor_div($start + $_[0] * $step, $div);
            return $mod ? $v - floor_div($v, $mod) * $mod : $v;
        };
    },
    uniform => sub {
        my ($spec, $rng) = @_;
        my ($lo, $span) = _span($spec, 'uniform');
        return sub { $lo + $rng->next_u64 % $span };
    },
    choice => sub {
        my ($spec, $rng, $type) = @_;
        protocol_error('choice: values must be a non-empty list') unless ref $spec->{values} eq 'ARRAY' && @{$spec->{values}};
        my @values = map { _typed($_, $type) } @{$spec->{values}};
        my $n = @values;
        return sub { $values[$rng->next_u64 % $n] };
    },
    text => sub {
        my ($spec, $rng) = @_;
        my $pattern = $spec->{pattern};
        protocol_error('text: pattern must be a string') unless defined $pattern && !ref $pattern;
        my @chars = split //, $pattern;
        return sub {
            join '', map { $_ eq '#' ? chr(48 + $rng->next_u64 % 10) : $_ eq '?' ? chr(97 + $rng->next_u64 % 26) : $_ } @chars;
        };
    },
    timestamp => sub {
        my ($spec, $rng) = @_;
        my $start = parse_iso_timestamp($spec->{start})
            // protocol_error('timestamp: start must be an ISO timestamp without time zone, like 2001-01-01T00:00:00');
        my ($step, $jitter) = (_int_field($spec, 'step_us', 1_000_000), _int_field($spec, 'jitter_us', 0));
        protocol_error('timestamp: jitter_us must be >= 0') if $jitter < 0;
        return $jitter ? sub { $start + $_[0] * $step + $rng->next_u64 % ($jitter + 1) } : sub { $start + $_[0] * $step };
    },
    const => sub {
        my ($spec, $rng, $type) = @_;
        protocol_error('const: value is missing') unless exists $spec->{value};
        my $value = _typed($spec->{value}, $type);
        return sub { $value };
    },
    float => sub {
        my ($spec, $rng) = @_;
        # all in binary64: v = lo + unit()·(hi − lo); with digits d, floor(v·P + 0.5) / P where
        # P = 10^d made by multiplying 1.0 by 10.0 d times (exact up to 10^22)
        my ($lo, $width) = (_num_field($spec, 'lo'), _num_field($spec, 'hi') - _num_field($spec, 'lo'));
        my $digits = $spec->{digits};
        return sub { $lo + $rng->unit * $width } unless defined $digits;
        $digits = _int_field($spec, 'digits');
        protocol_error('float: digits must be 0…15') if $digits < 0 || $digits > 15;
        my $p = 1.0;
        $p *= 10.0 for 1 .. $digits;
        return sub { POSIX::floor(($lo + $rng->unit * $width) * $p + 0.5) / $p };
    },
    decimal => sub {
        my ($spec, $rng) = @_;
        my ($lo, $span) = _span($spec, 'decimal');
        my $scale = _int_field($spec, 'scale', 0);
        protocol_error('decimal: scale must be >= 0') if $scale < 0;
        return sub { _decimal_text($lo + $rng->next_u64 % $span, $scale) };
    },
    date => sub {
        my ($spec, $rng) = @_;
        my $start = parse_iso_date($spec->{start}) // protocol_error('date: start must be a date YYYY-MM-DD');
        my ($step, $jitter) = (_int_field($spec, 'step_days', 1), _int_field($spec, 'jitter_days', 0));
        protocol_error('date: jitter_days must be >= 0') if $jitter < 0;
        return $jitter ? sub { $start + $_[0] * $step + $rng->next_u64 % ($jitter + 1) } : sub { $start + $_[0] * $step };
    },
    bytes => sub {
        my ($spec, $rng) = @_;
        my $length = _int_field($spec, 'length', -1);
        protocol_error('bytes: length must be >= 0') if $length < 0;
        return sub { pack 'C*', map { $rng->next_u64 & 0xff } 1 .. $length };
    },
);

# One spec's stream: (type, a function returning value i for i = 0, 1, … in turn)
sub stream {
    my ($spec) = @_;
    protocol_error('a generator spec must be an object') unless ref $spec eq 'HASH';
    my $kind = $spec->{kind} // '';
    my $maker = $MAKERS{$kind} or protocol_error("unknown generator kind '$kind'");
    my $rng = AccessBench::Worker::Random->new(_int_field($spec, 'seed', 0));
    my $type = _spec_type($spec);
    my $make = $maker->($spec, $rng, $type);
    my $null = defined $spec->{null} ? 0 + $spec->{null} : 0;
    my $i = 0;
    # the null draw comes first; a NULL value makes no value draws
    my $next = $null ? sub { my $k = $i++; $rng->unit < $null ? undef : $make->($k) } : sub { $make->($i++) };
    return ($type, $next);
}

# `count` values of one spec, and their type
sub generate_values {
    my ($spec, $count) = @_;
    my ($type, $next) = stream($spec);
    return ([map { $next->() } 1 .. $count], $type);
}

# `count` rows, one value from each spec per row, and the columns' types
sub generate_rows {
    my ($specs, $count) = @_;
    my @streams = map { [stream($_)] } @$specs;
    my @rows = map { [map { $_->[1]->() } @streams] } 1 .. $count;
    return (\@rows, [map { $_->[0] } @streams]);
}

# A generated value as the `generate` op answers it: floats as their IEEE-754 bits in hex,
# dates YYYY-MM-DD, timestamps with six fraction digits, bytes in hex, booleans as JSON's.
sub json_value {
    my ($v, $type) = @_;
    return undef unless defined $v;
    return unpack('H*', pack 'd>', $v) if $type eq 'float';
    return date_text($v) if $type eq 'date';
    return timestamp_text($v, 'T', 1) if $type eq 'timestamp';
    return unpack('H*', $v) if $type eq 'bytes';
    return json_bool($v) if $type eq 'bool';
    return 0 + $v if $type eq 'int';
    return "$v";
}

1;
