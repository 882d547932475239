<?php

declare(strict_types=1);

/**
 * The endpoint's session keys (protocol/PROTOCOL.md, `open`), set when each connection is made,
 * one mapping per DBMS: PostgreSQL's schema as search_path, and read_only (the server itself
 * refusing writes on every connection a page makes). Absent or false read_only adds nothing.
 */

namespace AccessBench\Php;

const PG_READ_ONLY = 'default_transaction_read_only=on';
const MYSQL_READ_ONLY = 'SET SESSION TRANSACTION READ ONLY';

/**
 * PostgreSQL: libpq's `options` keyword (the startup packet), -c search_path=<schema> when the
 * schema is present and -c default_transaction_read_only=on when read-only, space-separated;
 * null when neither (no options sent).
 */
function pg_options(array $endpoint): ?string
{
    $options = [];
    if (!empty($endpoint['schema'])) {
        $options[] = '-c search_path=' . $endpoint['schema'];
    }
    if (!empty($endpoint['read_only'])) {
        $options[] = '-c ' . PG_READ_ONLY;
    }
    return $options ? implode(' ', $options) : null;
}

/**
 * MariaDB: the statement a read-only session runs first (pdo_mysql's init command, mysqli's first
 * query); null for an ordinary session.
 */
function mysql_session_statement(array $endpoint): ?string
{
    return empty($endpoint['read_only']) ? null : MYSQL_READ_ONLY;
}

/**
 * How each method sets read_only (hello's `read_only` setting, which the tier shows for a page too).
 *
 * @return array<string, string>
 */
function session_settings(string $method): array
{
    $pg = 'options=-c ' . PG_READ_ONLY . ' in the startup packet, beside -c search_path when the schema is given';
    $setting = match (explode('/', $method, 2)[0]) {
        'php-pgsql' => "endpoint read_only: pg_connect/pg_pconnect's conninfo {$pg}",
        'php-pdo-pgsql' => "endpoint read_only: the PDO pgsql DSN {$pg}",
        'php-mysqli' => 'endpoint read_only: ' . MYSQL_READ_ONLY . ' as the first query after real_connect, on a '
            . 'reused persistent link too (its COM_CHANGE_USER reset clears the setting, and mysqli does not run '
            . 'MYSQLI_INIT_COMMAND again)',
        'php-pdo-mysql' => 'endpoint read_only: PDO::MYSQL_ATTR_INIT_COMMAND ' . MYSQL_READ_ONLY . ' (a reused '
            . 'persistent connection is only pinged, and keeps it)',
        'php-pdo-sqlite' => 'endpoint read_only: PDO::SQLITE_ATTR_OPEN_FLAGS PDO::SQLITE_OPEN_READONLY '
            . '(sqlite3_open_v2 SQLITE_OPEN_READONLY), for every connection',
        'php-sqlite3' => 'endpoint read_only: new SQLite3(FILE, SQLITE3_OPEN_READONLY), for every connection',
        default => null,
    };
    return $setting === null ? [] : ['read_only' => $setting];
}
