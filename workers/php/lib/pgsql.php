<?php

declare(strict_types=1);

/**
 * php-pgsql: the pgsql extension (libpq underneath), as a page uses it.
 *
 * - per-request: pg_connect(…, PGSQL_CONNECT_FORCE_NEW), pg_close at the end: a new backend
 *   every request. persistent: pg_pconnect, the process's connection reused across requests.
 * - literal: pg_query (PQexec: the simple protocol, values inlined); extended: pg_query_params
 *   (PQexecParams: the unnamed statement, parsed every time); prepared: pg_prepare once per
 *   connection, then pg_execute.
 * - Parameters go as text with their types left for the server to infer (pg_query_params and
 *   pg_execute send no type OIDs): floats as shortest round-trip text, booleans t/f, bytea as
 *   '\x…' hex.
 * - Values come back as text and are decoded by the column's type OID (pg_field_type_oid:
 *   PQftype, no round trip). pg_field_type is not used: it looks type names up with a query
 *   on pg_type.
 * - Errors: error verbosity VERBOSE (client-side, no round trip) so that libpq's message
 *   carries the SQLSTATE, which the page reads from it.
 */

namespace AccessBench\Tier;

final class PgsqlDriver implements Driver
{
    /** @var \PgSql\Connection|null */
    private $conn = null;
    private bool $persistent = false;

    public function connect(array $endpoint, ?string $password, bool $persistent): void
    {
        $this->persistent = $persistent;
        $dsn = self::conninfo($endpoint, $password);
        error_clear_last();
        $conn = $persistent ? @pg_pconnect($dsn) : @pg_connect($dsn, PGSQL_CONNECT_FORCE_NEW);
        if ($conn === false) {
            $message = preg_replace('/^pg_p?connect\(\): /', '', error_get_last()['message'] ?? 'cannot connect');
            throw pg_unknown_keyword($message, 'php-pgsql') ?? new DbError($message);
        }
        pg_set_error_verbosity($conn, PGSQL_ERRORS_VERBOSE);
        $this->conn = $conn;
    }

    /**
     * libpq's key='value' form: host (a directory is a unix socket directory), the schema and
     * read_only as lib/session.php puts them in options (pg_options), the TLS keys as lib/tls.php
     * maps them (pg_tls_params).
     */
    public static function conninfo(array $endpoint, ?string $password): string
    {
        $pairs = [
            'host' => $endpoint['host'] ?? null,
            'port' => $endpoint['port'] ?? null,
            'dbname' => $endpoint['database'] ?? null,
            'user' => $endpoint['user'] ?? null,
            'password' => $password ?: null,
            'options' => pg_options($endpoint),
        ] + pg_tls_params($endpoint, 'php-pgsql');
        $parts = [];
        foreach ($pairs as $key => $value) {
            if ($value !== null && $value !== '') {
                $parts[] = libpq_pair($key, (string) $value);
            }
        }
        return implode(' ', $parts);
    }

    public function run(Op $op): array|int
    {
        $conn = $this->conn;
        $result = match ($op->mode) {
            'literal' => @pg_query($conn, $op->statement),
            'extended' => @pg_query_params($conn, self::dollar($op->sql), self::params($op->args)),
            'prepared' => $this->execute_prepared($op),
            default => throw new Unsupported("php-pgsql has no mode {$op->mode}"),
        };
        if ($result === false) {
            throw $this->error();
        }
        try {
            return $op->fetch ? self::rows($result) : pg_affected_rows($result);
        } finally {
            pg_free_result($result);
        }
    }

    /**
     * Prepared once per connection, named after the step. A persistent connection keeps its
     * statements across requests, but the page keeps nothing between requests to know which it
     * has, so it executes and prepares when the server says the name does not exist (SQLSTATE
     * 26000): once per process and step. A per-request connection is new, so it prepares every
     * time (inside the request, as a page must).
     */
    private function execute_prepared(Op $op): \PgSql\Result|false
    {
        $params = self::params($op->args);
        if ($this->persistent) {
            $result = @pg_execute($this->conn, $op->name, $params);
            if ($result !== false || $this->error()->sqlstate !== '26000') {
                return $result;
            }
        }
        $prepared = @pg_prepare($this->conn, $op->name, self::dollar($op->sql));
        if ($prepared === false) {
            return false;
        }
        pg_free_result($prepared);
        return @pg_execute($this->conn, $op->name, $params);
    }

    /** @return list<list<array{0: string, 1: mixed}>> */
    private static function rows(\PgSql\Result $result): array
    {
        $kinds = [];
        for ($c = 0, $n = pg_num_fields($result); $c < $n; $c++) {
            $kinds[] = PG_OIDS[(int) pg_field_type_oid($result, $c)] ?? 'text';
        }
        $rows = [];
        while (($row = pg_fetch_row($result)) !== false) {
            $typed = [];
            foreach ($row as $c => $text) {
                $typed[] = pg_text($kinds[$c], $text);
            }
            $rows[] = $typed;
        }
        return $rows;
    }

    /** PostgreSQL's $1, $2 … markers. */
    public static function dollar(string $sql): string
    {
        return convert_markers($sql, static fn (int $k): string => '$' . ($k + 1));
    }

    /** @return list<?string> each argument as the text pg_query_params and pg_execute send */
    private static function params(array $args): array
    {
        return array_map(static fn (array $a): ?string => $a[1] === null ? null : match ($a[0]) {
            'bool' => $a[1] ? 't' : 'f',
            'float' => float_text($a[1]),
            'bytes' => '\\x' . bin2hex($a[1]),
            default => (string) $a[1],
        }, $args);
    }

    /** The last error, its SQLSTATE read from the verbose message ("ERROR:  42P01: relation …"). */
    private function error(): DbError
    {
        $message = (string) pg_last_error($this->conn);
        if (preg_match('/^(\w+):\s+([0-9A-Z]{5}): (.*)$/m', $message, $m)) {
            return new DbError("{$m[1]}:  {$m[3]}", $m[2]);
        }
        return new DbError($message ?: 'query failed');
    }

    public function disconnect(): void
    {
        if ($this->conn !== null && !$this->persistent) {
            pg_close($this->conn);
        }
        $this->conn = null;
    }
}
