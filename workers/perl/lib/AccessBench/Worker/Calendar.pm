package AccessBench::Worker::Calendar;
# Dates and timestamps as the protocol counts them: days since 1970-01-01 and microseconds since
# 1970-01-01 00:00:00, without time zone (proleptic Gregorian, Howard Hinnant's civil-day
# algorithms in integer arithmetic); their texts ('YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS[.ffffff]')
# both ways.
use strict;
use warnings;
use utf8;
use integer;

use Exporter 'import';
our @EXPORT_OK = qw(days_from_civil civil_from_days date_text timestamp_text parse_iso_date parse_iso_timestamp
                    parse_sql_timestamp parse_sql_date parse_sql_time floor_div);

use constant DAY_US => 86_400_000_000;

# a // b rounded toward minus infinity (Perl's integer division truncates)
sub floor_div {
    my ($a, $b) = @_;
    my $q = $a / $b;
    $q-- if $a % $b != 0 && (($a < 0) != ($b < 0));
    return $q;
}

sub days_from_civil {
    my ($y, $m, $d) = @_;
    $y -= 1 if $m <= 2;
    my $era = floor_div($y, 400);
    my $yoe = $y - $era * 400;
    my $doy = (153 * ($m > 2 ? $m - 3 : $m + 9) + 2) / 5 + $d - 1;
    my $doe = $yoe * 365 + $yoe / 4 - $yoe / 100 + $doy;
    return $era * 146097 + $doe - 719468;
}

sub civil_from_days {
    my ($z) = @_;
    $z += 719468;
    my $era = floor_div($z, 146097);
    my $doe = $z - $era * 146097;
    my $yoe = ($doe - $doe / 1460 + $doe / 36524 - $doe / 146096) / 365;
    my $doy = $doe - (365 * $yoe + $yoe / 4 - $yoe / 100);
    my $mp = (5 * $doy + 2) / 153;
    my $d = $doy - (153 * $mp + 2) / 5 + 1;
    my $m = $mp < 10 ? $mp + 3 : $mp - 9;
    return ($era * 400 + $yoe + ($m <= 2 ? 1 : 0), $m, $d);
}

# days → 'YYYY-MM-DD'
sub date_text {
    return sprintf '%04d-%02d-%02d', civil_from_days($_[0]);
}

# µs → 'YYYY-MM-DD HH:MM:SS[.ffffff]' (the fraction only when not zero, as Python's isoformat),
# or with `$full` always six fraction digits; `$sep` between date and time (default ' ')
sub timestamp_text {
    my ($us, $sep, $full) = @_;
    my $days = floor_div($us, DAY_US);
    my $rem = $us - $days * DAY_US;
    my $secs = $rem / 1_000_000;
    my $frac = $rem % 1_000_000;
    my $text = sprintf '%s%s%02d:%02d:%02d', date_text($days), $sep // ' ', $secs / 3600, $secs / 60 % 60, $secs % 60;
    $text .= sprintf '.%06d', $frac if $full || $frac;
    return $text;
}

sub _valid_day {
    my ($y, $m, $d) = @_;
    return 0 if $y < 1 || $m < 1 || $m > 12 || $d < 1;
    my $leap = ($y % 4 == 0 && $y % 100 != 0) || $y % 400 == 0;
    my $last = (31, $leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[$m - 1];
    return $d <= $last;
}

# 'YYYY-MM-DD' → days, or undef (date.fromisoformat's extended form)
sub parse_iso_date {
    my ($s) = @_;
    return undef unless defined $s && $s =~ /\A([0-9]{4})-([0-9]{2})-([0-9]{2})\z/;
    return undef unless _valid_day($1, $2, $3);
    return days_from_civil($1, $2, $3);
}

# datetime.fromisoformat (3.11) for naive values: a date, then one separator character and
# HH[:MM[:SS[.f…]]] → µs, or undef (a time zone or anything else)
sub parse_iso_timestamp {
    my ($s) = @_;
    return undef unless defined $s
        && $s =~ /\A([0-9]{4})-([0-9]{2})-([0-9]{2})(?:.([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]+))?)?)?)?\z/s;
    my ($y, $mo, $d, $h, $mi, $se, $f) = ($1, $2, $3, $4 // 0, $5 // 0, $6 // 0, $7 // '');
    return undef unless _valid_day($y, $mo, $d) && $h < 24 && $mi < 60 && $se < 60;
    my $frac = substr($f . '000000', 0, 6);
    return days_from_civil($y, $mo, $d) * DAY_US + (($h * 60 + $mi) * 60 + $se) * 1_000_000 + $frac;
}

# A timestamp as a server prints it: 'YYYY-MM-DD HH:MM:SS[.f…]' (years may have more digits, and
# PostgreSQL may append ' BC' or, for timestamptz, an offset ±HH[:MM[:SS]]) → µs. 'infinity'
# and '-infinity' → the i64 extremes, as PostgreSQL's binary format has them.
sub parse_sql_timestamp {
    my ($s) = @_;
    return 9223372036854775807 if $s eq 'infinity';
    return -9223372036854775807 - 1 if $s eq '-infinity';
    $s =~ /\A([0-9]+)-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?([+-][0-9:]+)?( BC)?\z/
        or die "not a timestamp: $s\n";
    my $y = $9 ? 1 - $1 : $1;
    my $us = days_from_civil($y, $2, $3) * DAY_US + (($4 * 60 + $5) * 60 + $6) * 1_000_000;
    $us += substr(($7 // '') . '000000', 0, 6);
    if (defined $8) {
        my ($sign, $oh, $om, $os) = $8 =~ /\A([+-])([0-9]{2})(?::?([0-9]{2}))?(?::?([0-9]{2}))?\z/;
        my $offset = (($oh * 60 + ($om // 0)) * 60 + ($os // 0)) * 1_000_000;
        $us -= $sign eq '-' ? -$offset : $offset;
    }
    return $us;
}

# 'YYYY-MM-DD' (PostgreSQL may append ' BC'; 'infinity' as the i32 extremes) → days
sub parse_sql_date {
    my ($s) = @_;
    return 2147483647 if $s eq 'infinity';
    return -2147483648 if $s eq '-infinity';
    $s =~ /\A([0-9]+)-([0-9]{2})-([0-9]{2})( BC)?\z/ or die "not a date: $s\n";
    return days_from_civil($4 ? 1 - $1 : $1, $2, $3);
}

# '[-]H…H:MM:SS[.f…]' → µs since midnight
sub parse_sql_time {
    my ($s) = @_;
    $s =~ /\A(-?)([0-9]+):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?\z/ or die "not a time: $s\n";
    my $us = (($2 * 60 + $3) * 60 + $4) * 1_000_000 + substr(($5 // '') . '000000', 0, 6);
    return $1 ? -$us : $us;
}

1;
