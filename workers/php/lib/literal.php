<?php

declare(strict_types=1);

/**
 * The `literal` mode's statements (protocol/PROTOCOL.md, Literal rules; the reference is
 * src/accessbench/protocol/sqltext.py's inline()): each generated value written as a literal of
 * the endpoint's DBMS, in place of its `?` marker (lib/driver.php's convert_markers skips quoted
 * strings, quoted identifiers and comments). Made before the clock.
 */

namespace AccessBench\Php;

/** A generated value (lib/generate.php's form) of `type` as an SQL literal of `dbms`. */
function literal(string $type, mixed $v, string $dbms): string
{
    if ($v === null) {
        return 'NULL';
    }
    return match ($type) {
        'bool' => $dbms === 'sqlite' ? ($v ? '1' : '0') : ($v ? 'TRUE' : 'FALSE'),
        'int' => (string) $v,
        'decimal' => $v,
        'float' => float_literal($v) . ($dbms === 'postgresql' ? '::float8' : ''),
        'timestamp' => "'" . timestamp_text($v) . "'",
        'date' => ($dbms === 'postgresql' ? "DATE '" : "'") . date_text($v) . "'",
        'bytes' => $dbms === 'postgresql' ? "'\\x" . bin2hex($v) . "'::bytea" : "X'" . bin2hex($v) . "'",
        default => "'" . str_replace("'", "''", $dbms === 'mariadb' ? str_replace('\\', '\\\\', $v) : $v) . "'",
    };
}

/**
 * A float's shortest round-trip digits, always in exponent form (MariaDB reads 0.1 as DECIMAL,
 * 0.1e0 as DOUBLE): var_export's text ('1.0E+300', '0.1') with 'e0' appended when it has none.
 */
function float_literal(float $v): string
{
    if (!is_finite($v)) {
        throw new ProtocolError("cannot write {$v} as an SQL literal");
    }
    $text = float_text($v);
    return stripos($text, 'e') === false ? $text . 'e0' : $text;
}

/**
 * The statement with each marker replaced by its value as a literal.
 *
 * @param list<mixed>  $row   generated values
 * @param list<string> $types their types
 */
function inline(string $sql, array $row, array $types, string $dbms): string
{
    return convert_markers($sql, static fn (int $k): string => literal($types[$k], $row[$k], $dbms));
}

/** How many `?` markers the statement has (outside quotes and comments). */
function count_markers(string $sql): int
{
    $n = 0;
    convert_markers($sql, static function () use (&$n): string {
        $n++;
        return '?';
    });
    return $n;
}
