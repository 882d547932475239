package AccessBench::Worker::SqlText;
# SQL text as the protocol has it (src/accessbench/protocol/sqltext.py): the neutral `?` markers
# (not inside quoted strings, quoted identifiers or comments), values as SQL literals by their
# type ("Literal rules"), and the texts of numbers that must survive a round trip.
use strict;
use warnings;
use utf8;

use AccessBench::Worker::Calendar qw(date_text timestamp_text);
use AccessBench::Worker::Errors qw(protocol_error);

use Exporter 'import';
our @EXPORT_OK = qw(segments count_markers convert_markers literal inline shortest_float float_exp_text
                    plain_float decimal_plain);

# sql split at its markers: n markers → n + 1 segments
sub segments {
    my ($sql) = @_;
    my @out;
    my $current = '';
    while (length $sql) {
        if ($sql =~ s/\A('(?:[^']|'')*'?|"(?:[^"]|"")*"?|--[^\n]*|\/\*.*?(?:\*\/|\z))//s) {
            $current .= $1;    # a quoted string or identifier, or a comment, as it is
        } elsif ($sql =~ s/\A\?//) {
            push @out, $current;
            $current = '';
        } else {
            $sql =~ s/\A([^'"?\/-]+|.)//s;
            $current .= $1;
        }
    }
    return (@out, $current);
}

sub count_markers {
    my @segs = segments($_[0]);
    return @segs - 1;
}

# '?' markers → 'qmark' (?) or 'numeric' ($1, $2, …)
sub convert_markers {
    my ($sql, $style) = @_;
    my ($out, @rest) = segments($sql);
    my $k = 0;
    $out .= ($style eq 'numeric' ? '$' . ++$k : '?') . $_ for @rest;
    return $out;
}

# A double's shortest round-trip text (%.Ng with the fewest digits N that read back as the same
# double; -0 keeps its sign). Never NaN or ±Infinity here: generators make finite values.
sub shortest_float {
    my ($x) = @_;
    for my $digits (1 .. 17) {
        my $text = sprintf '%.*g', $digits, $x;
        return $text if $text == $x;
    }
    return sprintf '%.17g', $x;
}

# the shortest text always in exponent form: MariaDB reads 0.1 as DECIMAL, 0.1e0 as DOUBLE
sub float_exp_text {
    my $text = shortest_float($_[0]);
    return $text =~ /e/ ? $text : "${text}e0";
}

# The same double as plain decimal text without an exponent, with the fewest fraction digits
# that read back as it (sprintf '%.Nf'): what DBD::SQLite needs to bind a text as a REAL (it
# takes a text for a double only when '%.Nf' of its value prints the text again).
sub plain_float {
    my ($x) = @_;
    my ($exponent) = sprintf('%.16e', $x) =~ /e([-+][0-9]+)\z/;
    for my $places (0 .. 1100) {
        next if $places + $exponent < -1;    # too few places to show a significant digit
        my $text = sprintf '%.*f', $places, $x;
        return $text if $text == $x;
    }
    return sprintf '%.1100f', $x;
}

# format(Decimal(text), "f"): a decimal's plain text (no exponent), or undef if not a decimal
sub decimal_plain {
    my ($text) = @_;
    return undef unless defined $text && !ref $text;
    my ($sign, $int, $frac, $exp) = "$text" =~ /\A\s*([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?\s*\z/
        or return undef;
    $frac //= '';
    return undef if $int eq '' && $frac eq '';
    my $coef = ($int . $frac) =~ s/\A0+//r;
    my $e = ($exp // 0) - length $frac;
    if ($coef eq '') {
        $coef = '0';
        $e = 0 if $e > 0;
    }
    my $out;
    if ($e >= 0) {
        $out = $coef . ('0' x $e);
    } else {
        my $k = length($coef) + $e;
        $out = $k > 0 ? substr($coef, 0, $k) . '.' . substr($coef, $k) : '0.' . ('0' x -$k) . $coef;
    }
    return ($sign eq '-' ? '-' : '') . $out;
}

# A value of `type` as an SQL literal of `dialect` (postgresql, mariadb, sqlite)
sub literal {
    my ($v, $type, $dialect) = @_;
    return 'NULL' unless defined $v;
    if ($type eq 'bool') {    # SQLite has no boolean type: bound as integer 1/0, so written as one
        return $dialect eq 'sqlite' ? ($v ? '1' : '0') : ($v ? 'TRUE' : 'FALSE');
    }
    return "$v" if $type eq 'int' || $type eq 'decimal';
    if ($type eq 'float') {    # PostgreSQL reads any such text as numeric: cast
        return $dialect eq 'postgresql' ? float_exp_text($v) . '::float8' : float_exp_text($v);
    }
    if ($type eq 'text') {     # on MariaDB backslash is an escape character in strings: doubled
        my $s = $dialect eq 'mariadb' ? $v =~ s/\\/\\\\/gr : $v;
        return "'" . ($s =~ s/'/''/gr) . "'";
    }
    return "'" . timestamp_text($v) . "'" if $type eq 'timestamp';
    return ($dialect eq 'postgresql' ? "DATE '" : "'") . date_text($v) . "'" if $type eq 'date';
    if ($type eq 'bytes') {
        my $hex = unpack 'H*', $v;
        return $dialect eq 'postgresql' ? "'\\x$hex'::bytea" : "X'$hex'";
    }
    protocol_error("cannot inline a $type value as an SQL literal");
}

# the statement (as its segments) with each marker replaced by its value as a literal
sub inline {
    my ($segs, $row, $types, $dialect) = @_;
    my $out = $segs->[0];
    $out .= literal($row->[$_ - 1], $types->[$_ - 1], $dialect) . $segs->[$_] for 1 .. $#$segs;
    return $out;
}

1;
