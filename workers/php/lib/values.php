<?php

declare(strict_types=1);

/**
 * Typed values: what a page reads and binds, as the protocol's types.
 *
 * A value read is a pair [type, value] (protocol/PROTOCOL.md, Checksum): ['null', null],
 * ['bool', bool], ['int', int], ['float', float], ['decimal', plain text], ['text', UTF-8
 * string], ['bytes', binary string], ['timestamp', µs since 1970-01-01], ['date', days since
 * 1970-01-01], ['time', µs since midnight]. The drivers decode what they read into these; the
 * checksum encodes them (lib/checksum.php).
 *
 * Dates and times are parsed by hand in integer arithmetic: no time zone, no DateTime object,
 * nothing that depends on the page's php.ini.
 */

namespace AccessBench\Php;

/** Days from 1970-01-01 to the proleptic Gregorian date y-m-d (negative before). */
function days_from_civil(int $y, int $m, int $d): int
{
    $y -= $m <= 2 ? 1 : 0;
    $era = intdiv($y >= 0 ? $y : $y - 399, 400);
    $yoe = $y - $era * 400;
    $doy = intdiv(153 * ($m + ($m > 2 ? -3 : 9)) + 2, 5) + $d - 1;
    $doe = $yoe * 365 + intdiv($yoe, 4) - intdiv($yoe, 100) + $doy;
    return $era * 146097 + $doe - 719468;
}

/**
 * Days since 1970-01-01 → [year, month, day] (proleptic Gregorian): days_from_civil's inverse.
 *
 * @return array{0: int, 1: int, 2: int}
 */
function civil_from_days(int $z): array
{
    $z += 719468;
    $era = intdiv($z >= 0 ? $z : $z - 146096, 146097);
    $doe = $z - $era * 146097;
    $yoe = intdiv($doe - intdiv($doe, 1460) + intdiv($doe, 36524) - intdiv($doe, 146096), 365);
    $doy = $doe - (365 * $yoe + intdiv($yoe, 4) - intdiv($yoe, 100));
    $mp = intdiv(5 * $doy + 2, 153);
    $d = $doy - intdiv(153 * $mp + 2, 5) + 1;
    $m = $mp < 10 ? $mp + 3 : $mp - 9;
    return [$era * 400 + $yoe + ($m <= 2 ? 1 : 0), $m, $d];
}

/** Days since 1970-01-01 → 'YYYY-MM-DD'. */
function date_text(int $days): string
{
    return vsprintf('%04d-%02d-%02d', civil_from_days($days));
}

/**
 * µs since 1970-01-01 → 'YYYY-MM-DD HH:MM:SS[.ffffff]' (Python's isoformat: the fraction only
 * when there is one), or with six fraction digits always when $full (the `generate` op's form).
 */
function timestamp_text(int $us, string $sep = ' ', bool $full = false): string
{
    $days = intdiv($us, 86_400_000_000) - ($us % 86_400_000_000 < 0 ? 1 : 0);
    $rest = $us - $days * 86_400_000_000;
    $seconds = intdiv($rest, 1_000_000);
    $fraction = $rest % 1_000_000;
    $text = date_text($days) . $sep . sprintf('%02d:%02d:%02d', intdiv($seconds, 3600), intdiv($seconds, 60) % 60,
                                               $seconds % 60);
    return $full || $fraction !== 0 ? $text . sprintf('.%06d', $fraction) : $text;
}

/** 'YYYY-MM-DD' → days since 1970-01-01. */
function parse_date(string $text): int
{
    if (!preg_match('/^(\d{4,})-(\d\d)-(\d\d)$/', $text, $m)) {
        throw new \UnexpectedValueException("not a date the page can read: {$text}");
    }
    return days_from_civil((int) $m[1], (int) $m[2], (int) $m[3]);
}

/** Up to six fraction digits → microseconds ('5' is 500000). */
function fraction_us(string $digits): int
{
    return $digits === '' ? 0 : (int) str_pad($digits, 6, '0');
}

/**
 * 'YYYY-MM-DD HH:MM:SS[.ffffff]' (or with 'T') → µs since 1970-01-01. A zone offset (PostgreSQL's
 * timestamptz text, '+02' or '-03:30') is subtracted, so an aware value counts in UTC.
 */
function parse_timestamp(string $text): int
{
    $re = '/^(\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(?:(Z)|([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?)?$/';
    if (!preg_match($re, $text, $m)) {
        throw new \UnexpectedValueException("not a timestamp the page can read: {$text}");
    }
    $days = days_from_civil((int) $m[1], (int) $m[2], (int) $m[3]);
    $seconds = $days * 86400 + (int) $m[4] * 3600 + (int) $m[5] * 60 + (int) $m[6];
    if (($m[9] ?? '') !== '') {
        $offset = (int) $m[10] * 3600 + (int) ($m[11] ?? 0) * 60 + (int) ($m[12] ?? 0);
        $seconds -= $m[9] === '+' ? $offset : -$offset;
    }
    return $seconds * 1_000_000 + fraction_us($m[7] ?? '');
}

/** '[-]HH:MM:SS[.ffffff]' → µs since midnight (MariaDB's TIME may exceed a day or be negative). */
function parse_time(string $text): int
{
    if (!preg_match('/^(-)?(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/', $text, $m)) {
        throw new \UnexpectedValueException("not a time the page can read: {$text}");
    }
    $us = (((int) $m[2] * 60 + (int) $m[3]) * 60 + (int) $m[4]) * 1_000_000 + fraction_us($m[5] ?? '');
    return $m[1] === '-' ? -$us : $us;
}

/** The protocol's float form (IEEE-754 binary64 bits, 16 hex digits, big-endian) → float. */
function float_from_hex(string $hex): float
{
    return unpack('E', hex2bin($hex))[1];
}

/**
 * A float as text a server reads back as the same double. PHP's own string conversion uses
 * `precision` (14 digits: lossy), so floats are never left for PHP or a driver to stringify;
 * var_export writes the shortest round-trip digits (serialize_precision = -1, set by the page).
 */
function float_text(float $value): string
{
    if (is_nan($value)) {
        return 'NaN';
    }
    if (is_infinite($value)) {
        return $value > 0 ? 'Infinity' : '-Infinity';
    }
    return var_export($value, true);
}

/**
 * One argument row as the tier worker wrote it (the `generate` op's form: null, int, bool,
 * text, float as hex bits, decimal text, date 'YYYY-MM-DD', timestamp 'YYYY-MM-DDTHH:MM:SS.ffffff',
 * bytes as hex) → typed PHP values [type, value] ready to bind: float a PHP float, timestamp
 * 'YYYY-MM-DD HH:MM:SS.ffffff', bytes a binary string; NULL stays [type, null].
 *
 * @param list<string> $types
 * @param list<mixed>  $row
 * @return list<array{0: string, 1: mixed}>
 */
function arguments(array $types, array $row): array
{
    $out = [];
    foreach ($types as $k => $type) {
        $v = $row[$k] ?? null;
        $out[] = [$type, $v === null ? null : match ($type) {
            'int' => is_int($v) ? $v : (int) $v,
            'bool' => (bool) $v,
            'float' => float_from_hex((string) $v),
            'timestamp' => str_replace('T', ' ', (string) $v),
            'bytes' => (string) hex2bin((string) $v),
            'decimal', 'text', 'date' => (string) $v,
            default => throw new \UnexpectedValueException("unknown parameter type {$type}"),
        }];
    }
    return $out;
}
