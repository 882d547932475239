<?php

declare(strict_types=1);

/**
 * What the SQLite methods share (php-pdo-sqlite over PDO, php-sqlite3 over the SQLite3 class, both
 * on the system's libsqlite3): the file and how it is opened, values by SQLite's storage classes,
 * and errors named by SQLite's result codes (SQLite has no SQLSTATE).
 *
 * Parameters as SQLite keeps each type (protocol/PROTOCOL.md, Types), as the data loader writes
 * them: integers INTEGER, booleans integers 1/0, doubles REAL, decimals, dates and timestamps as
 * their text, bytes BLOB.
 */

namespace AccessBench\Php;

/** The busy timeout, as c-sqlite, py-sqlite3 and node-better-sqlite3 set it. */
const SQLITE_BUSY_MS = 5000;

/** SQLite's primary result codes → their names (sqlite3.h), for the `sqlstate` of a db error. */
const SQLITE_CODES = [
    1 => 'SQLITE_ERROR', 2 => 'SQLITE_INTERNAL', 3 => 'SQLITE_PERM', 4 => 'SQLITE_ABORT', 5 => 'SQLITE_BUSY',
    6 => 'SQLITE_LOCKED', 7 => 'SQLITE_NOMEM', 8 => 'SQLITE_READONLY', 9 => 'SQLITE_INTERRUPT', 10 => 'SQLITE_IOERR',
    11 => 'SQLITE_CORRUPT', 13 => 'SQLITE_FULL', 14 => 'SQLITE_CANTOPEN', 17 => 'SQLITE_SCHEMA', 18 => 'SQLITE_TOOBIG',
    19 => 'SQLITE_CONSTRAINT', 20 => 'SQLITE_MISMATCH', 21 => 'SQLITE_MISUSE', 25 => 'SQLITE_RANGE',
    26 => 'SQLITE_NOTADB',
];

/** The endpoint's database file. */
function sqlite_file(array $endpoint): string
{
    $file = $endpoint['file'] ?? null;
    if (!is_string($file) || $file === '') {
        throw new ProtocolError('the sqlite endpoint needs a file');
    }
    return $file;
}

/** A SQLite error: the message, and the result code's name in place of a SQLSTATE. */
function sqlite_error(string $message, int $code): DbError
{
    return new DbError($message, SQLITE_CODES[$code & 0xFF] ?? ($code ? "SQLITE_{$code}" : null));
}

/**
 * A value as the driver hands it (by its storage class: int, float, string, null) → a typed
 * value; a string is bytes when its storage class is BLOB.
 */
function sqlite_value(mixed $v, bool $blob): array
{
    return match (true) {
        $v === null => ['null', null],
        is_int($v) => ['int', $v],
        is_float($v) => ['float', $v],
        default => [$blob ? 'bytes' : 'text', (string) $v],
    };
}

/** The typed argument's value as SQLite keeps its type: booleans 1/0; the rest as generated (text forms included). */
function sqlite_argument(array $arg): mixed
{
    return $arg[0] === 'bool' && $arg[1] !== null ? (int) $arg[1] : $arg[1];
}

/** What both SQLite methods say alike in hello. */
function sqlite_settings(string $opened): array
{
    return [
        'open' => "{$opened}, busy timeout " . SQLITE_BUSY_MS . ' ms (as c-sqlite and py-sqlite3); no pragmas (the '
            . 'stock defaults of the system\'s libsqlite3; journal_mode is the file\'s)',
        'autocommit' => 'yes: BEGIN/COMMIT explicit (commit_every, a batch group)',
        'parameters' => 'integers INTEGER, booleans integers 1/0, text as text, decimals as their plain text, '
            . 'dates as YYYY-MM-DD text, timestamps as \'YYYY-MM-DD HH:MM:SS[.ffffff]\' text (SQLite has no decimal, '
            . 'date or timestamp type: as the target stores them), bytes BLOB, NULL',
        'errors' => 'SQLite has no SQLSTATE: a db error\'s sqlstate is its result code\'s name (SQLITE_ERROR, '
            . 'SQLITE_READONLY, …)',
        'per-request' => 'the file opened and closed inside each operation (statements prepared on that connection)',
        'pooled' => 'not built: PHP has no pool',
    ];
}
