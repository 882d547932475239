<?php

declare(strict_types=1);

/**
 * php-pgsql: the pgsql extension (libpq underneath), as a page and the CLI worker use it.
 *
 * - per-request: pg_connect(…, PGSQL_CONNECT_FORCE_NEW), pg_close at the end: a new backend
 *   every request. persistent: a page's pg_pconnect, the process's connection reused across
 *   requests; the CLI worker's own pg_connect(…, PGSQL_CONNECT_FORCE_NEW), kept for the trial.
 * - literal: pg_query (PQexec: the simple protocol, values inlined); extended: pg_query_params
 *   (PQexecParams: the unnamed statement, parsed every time); prepared: pg_prepare once per
 *   connection (in the first operation), then pg_execute; DEALLOCATE after the CLI worker's step.
 * - batch: BEGIN, the prepared insert per row, COMMIT; /batch=copy: BEGIN, pg_copy_from (COPY …
 *   FROM STDIN, text format) with the group's rows, COMMIT.
 * - Parameters go as text with their types left for the server to infer (pg_query_params and
 *   pg_execute send no type OIDs): floats as shortest round-trip text, booleans t/f, bytea as
 *   '\x…' hex.
 * - Values come back as text and are decoded by the column's type OID (pg_field_type_oid:
 *   PQftype, no round trip). pg_field_type is not used: it looks type names up with a query
 *   on pg_type.
 * - Errors: error verbosity VERBOSE (client-side, no round trip) so that libpq's message
 *   carries the SQLSTATE, which the page reads from it.
 */

namespace AccessBench\Php;

final class PgsqlDriver implements WorkerDriver
{
    use RowBatches {
        batch_group as private row_group;
        batch as private row_batch;
    }

    /** @var \PgSql\Connection|null */
    private $conn = null;
    private bool $persistent = false;
    /** @var array<string, true> the statements prepared on this connection, by name */
    private array $prepared = [];
    private bool $copy = false;                             // /batch=copy

    /**
     * @param bool $cli the CLI worker's or a page's (lib/registry.php): the same here, as pgsql names
     *        its prepared statements on the connection, which outlives a page's request when persistent
     */
    public function __construct(bool $cli = false)
    {
    }

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
        $this->prepared = [];
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
            'extended' => @pg_query_params($conn, self::dollar($op->sql), $op->args),
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
     * Prepared once per connection, named after the step (the CLI worker's: after its first
     * operation the name is in $prepared). A page's persistent connection keeps its statements
     * across requests, but the page keeps nothing between requests to know which it has, so it
     * executes and prepares when the server says the name does not exist (SQLSTATE 26000): once
     * per process and step. A per-request connection is new, so it prepares every time (inside
     * the request, as a page must).
     */
    private function execute_prepared(Op $op): \PgSql\Result|false
    {
        if (isset($this->prepared[$op->name])) {
            return @pg_execute($this->conn, $op->name, $op->args);
        }
        if ($this->persistent) {
            $result = @pg_execute($this->conn, $op->name, $op->args);
            if ($result !== false || $this->error()->sqlstate !== '26000') {
                return $result;
            }
        }
        $prepared = @pg_prepare($this->conn, $op->name, self::dollar($op->sql));
        if ($prepared === false) {
            return false;
        }
        pg_free_result($prepared);
        $this->prepared[$op->name] = true;
        return @pg_execute($this->conn, $op->name, $op->args);
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
    public function bind(array $args): array
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
        $this->prepared = [];
    }

    // ---- the CLI worker's (WorkerDriver) ------------------------------------------------------

    public function name(): string
    {
        return 'pgsql (PHP extension)';
    }

    public function version(): string
    {
        return phpversion('pgsql') . ' (libpq ' . PGSQL_LIBPQ_VERSION . ')';
    }

    public function dbms(): array
    {
        return ['postgresql'];
    }

    public function modes(): array
    {
        return ['literal', 'extended', 'prepared'];
    }

    public function batch_style(): string
    {
        return $this->copy
            ? 'BEGIN; pg_copy_from(conn, "table (columns)", rows): COPY … FROM STDIN, text format (tab-separated, '
                . 'NULL as \\N), the group as one COPY; COMMIT'
            : 'BEGIN; the insert per row as the prepared mode runs it (pg_prepare in the first group, then '
                . 'pg_execute); COMMIT';
    }

    public function configure(string $key, string $value): void
    {
        if ($key !== 'batch' || !in_array($value, ['rows', 'copy'], true)) {
            throw new Unsupported("php-pgsql has no setting {$key}={$value} (its settings: batch=rows|copy)");
        }
        $this->copy = $value === 'copy';
    }

    public function settings(): array
    {
        return [
            'connection' => 'pg_connect(conninfo, PGSQL_CONNECT_FORCE_NEW): a libpq connection of its own, kept for '
                . 'the session (a page\'s persistent connection is pg_pconnect; a CLI process keeps its own '
                . 'connection, which is that reuse); per-request: pg_connect and pg_close inside each operation',
            'literal' => 'pg_query: PQexec, the simple query protocol, values inlined',
            'extended' => 'pg_query_params: PQexecParams, the unnamed statement parsed every time',
            'prepared' => 'pg_prepare (PQprepare, a named statement) in the first operation on a connection, then '
                . 'pg_execute (PQexecPrepared); DEALLOCATE after the step',
            'parameters' => 'all as text with no type OIDs (pg_query_params and pg_execute send none): the server '
                . 'infers each type from the statement; floats as shortest round-trip text, booleans t/f, bytea '
                . '\\x hex, timestamps YYYY-MM-DD HH:MM:SS[.ffffff], dates YYYY-MM-DD, decimals their plain text',
            'results' => 'text format; every value decoded by its column\'s type OID (pg_field_type_oid: PQftype, no '
                . 'round trip): int2/4/8 and oid → int, float4/8 → float, numeric → its text, bool, bytea '
                . '(pg_unescape_bytea), date, time, timestamp[tz] parsed by the worker; all rows buffered (PQexec)',
            'errors' => 'PGSQL_ERRORS_VERBOSE (client-side), the SQLSTATE read from the message',
            'batch' => $this->batch_style(),
        ];
    }

    public function describe(): array
    {
        return ['server_pid' => pg_get_pid($this->conn),
                'server_version' => (string) pg_parameter_status($this->conn, 'server_version')];
    }

    public function server_pid(): ?int
    {
        return $this->conn === null ? null : pg_get_pid($this->conn);
    }

    public function begin(): void
    {
        $this->command('BEGIN');
    }

    public function commit(): void
    {
        $this->command('COMMIT');
    }

    public function recover(): void
    {
        if ($this->conn !== null && pg_transaction_status($this->conn) !== PGSQL_TRANSACTION_IDLE) {
            @pg_query($this->conn, 'ROLLBACK');
        }
    }

    public function end_step(): void
    {
        foreach (array_keys($this->prepared) as $name) {
            $this->command('DEALLOCATE ' . pg_ident($name));
        }
        $this->prepared = [];
    }

    /** COPY's: [the table and columns, each row as one line of COPY text]; otherwise a row per operation. */
    public function batch_group(Op $op, ?array $shape, array $rows): mixed
    {
        if (!$this->copy) {
            return $this->row_group($op, $shape, $rows);
        }
        [$table, $columns] = insert_target($shape, 'php-pgsql/batch=copy');
        $target = pg_ident($table) . ' (' . implode(', ', array_map(pg_ident(...), $columns)) . ')';
        return [$target, array_map(static fn (array $row): string => implode("\t", array_map(copy_field(...), $row)),
                                   $rows)];
    }

    public function batch(mixed $group): int
    {
        if (!$this->copy) {
            return $this->row_batch($group);
        }
        [$target, $lines] = $group;
        $this->begin();
        if (!@pg_copy_from($this->conn, $target, $lines, "\t", '\\\\N')) {
            throw $this->error();
        }
        $this->commit();
        return count($lines);
    }

    private function command(string $sql): void
    {
        $result = @pg_query($this->conn, $sql);
        if ($result === false) {
            throw $this->error();
        }
        pg_free_result($result);
    }
}
