<?php

declare(strict_types=1);

/**
 * From what a PHP driver hands back to typed values (lib/values.php), by the column's type as
 * the driver reports it. Each driver first maps its column metadata to a kind (once per
 * result), then decodes each value by kind.
 *
 * Kinds: int, float, decimal, bool, text, bytes, date, timestamp, time.
 */

namespace AccessBench\Php;

/** PostgreSQL type OIDs (pg_type.h) → kind; a type not listed reads as its text. */
const PG_OIDS = [
    16 => 'bool', 17 => 'bytes', 18 => 'text', 19 => 'text', 20 => 'int', 21 => 'int', 23 => 'int',
    25 => 'text', 26 => 'int', 700 => 'float', 701 => 'float', 1042 => 'text', 1043 => 'text',
    1082 => 'date', 1083 => 'time', 1114 => 'timestamp', 1184 => 'timestamp', 1700 => 'decimal',
];

/** PostgreSQL type names (PDO's native_type) → kind. */
const PG_NAMES = [
    'bool' => 'bool', 'bytea' => 'bytes', 'char' => 'text', 'name' => 'text', 'int8' => 'int', 'int2' => 'int',
    'int4' => 'int', 'text' => 'text', 'oid' => 'int', 'float4' => 'float', 'float8' => 'float', 'bpchar' => 'text',
    'varchar' => 'text', 'date' => 'date', 'time' => 'time', 'timestamp' => 'timestamp',
    'timestamptz' => 'timestamp', 'numeric' => 'decimal',
];

/**
 * A value in PostgreSQL's text output (DateStyle ISO, the server's default) → a typed value.
 * float4 is read from its text, the shortest decimal of the float32, as the protocol asks.
 */
function pg_text(string $kind, ?string $text): array
{
    if ($text === null) {
        return ['null', null];
    }
    return match ($kind) {
        'int' => ['int', (int) $text],
        'float' => ['float', match ($text) {
            'NaN' => NAN, 'Infinity' => INF, '-Infinity' => -INF, default => (float) $text,
        }],
        'bool' => ['bool', $text === 't'],
        'bytes' => ['bytes', pg_unescape_bytea($text)],
        'date' => ['date', parse_date($text)],
        'timestamp' => ['timestamp', parse_timestamp($text)],
        'time' => ['time', parse_time($text)],
        'decimal' => ['decimal', $text],
        default => ['text', $text],
    };
}

/** MariaDB column types (mysqli's MYSQLI_TYPE_* numbers) → kind; strings by character set. */
function mysql_kind(int $type, int $charset): string
{
    return match ($type) {
        MYSQLI_TYPE_TINY, MYSQLI_TYPE_SHORT, MYSQLI_TYPE_LONG, MYSQLI_TYPE_LONGLONG, MYSQLI_TYPE_INT24,
        MYSQLI_TYPE_YEAR => 'int',
        MYSQLI_TYPE_FLOAT, MYSQLI_TYPE_DOUBLE => 'float',
        MYSQLI_TYPE_DECIMAL, MYSQLI_TYPE_NEWDECIMAL => 'decimal',
        MYSQLI_TYPE_DATE, MYSQLI_TYPE_NEWDATE => 'date',
        MYSQLI_TYPE_DATETIME, MYSQLI_TYPE_TIMESTAMP => 'timestamp',
        MYSQLI_TYPE_TIME => 'time',
        MYSQLI_TYPE_BIT => 'bytes',
        default => $charset === 63 ? 'bytes' : 'text',   // 63: the binary character set (BLOB, VARBINARY)
    };
}

/**
 * The column lengths of the BLOB family's text types in utf8mb4 (TINYTEXT, TEXT, MEDIUMTEXT: four
 * bytes a character, 4 × their BLOB's 255, 65535, 16777215).
 */
const MYSQL_TEXT_LENGTHS = [1020, 262140, 67108860];

/**
 * MariaDB types as PDO names them (getColumnMeta's native_type, and its len) → kind. pdo_mysql
 * reports no character set, and names every TEXT and BLOB column BLOB, so the BLOB family is
 * told apart by its length in the utf8mb4 result: TINYTEXT, TEXT and MEDIUMTEXT report four times
 * their BLOB's (text); LONGTEXT and LONGBLOB both report 2^32 − 1 and read as bytes (the suites'
 * `bytes` is LONGBLOB, their `text` TEXT). CHAR/VARCHAR read as text, and so do BINARY/VARBINARY
 * (their lengths overlap).
 */
function mysql_native_kind(string $name, int $length = 0): string
{
    return match ($name) {
        'TINY', 'SHORT', 'LONG', 'LONGLONG', 'INT24', 'YEAR' => 'int',
        'FLOAT', 'DOUBLE' => 'float',
        'DECIMAL', 'NEWDECIMAL' => 'decimal',
        'DATE', 'NEWDATE' => 'date',
        'DATETIME', 'TIMESTAMP' => 'timestamp',
        'TIME' => 'time',
        'TINY_BLOB', 'BLOB', 'MEDIUM_BLOB', 'LONG_BLOB' => in_array($length, MYSQL_TEXT_LENGTHS, true)
            ? 'text' : 'bytes',
        'BIT' => 'bytes',
        default => 'text',
    };
}

/**
 * A value as mysqlnd gives it (ints and floats native, in the binary protocol and, with
 * MYSQLI_OPT_INT_AND_FLOAT_NATIVE or PDO since PHP 8.1, in the text protocol too; DECIMAL,
 * dates and times as their text) → a typed value.
 */
function mysql_value(string $kind, mixed $v): array
{
    if ($v === null) {
        return ['null', null];
    }
    return match ($kind) {
        'int' => ['int', is_int($v) ? $v : (int) $v],
        'float' => ['float', is_float($v) ? $v : (float) $v],
        'date' => ['date', parse_date((string) $v)],
        'timestamp' => ['timestamp', parse_timestamp((string) $v)],
        'time' => ['time', parse_time((string) $v)],
        default => [$kind, (string) $v],                     // decimal, text, bytes
    };
}
