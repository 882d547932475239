<?php

declare(strict_types=1);

/**
 * php-pdo-pgsql: PDO's PostgreSQL driver, as a page and the CLI worker use it.
 *
 * - per-request: a new PDO, released at the end of the request; persistent: a page's
 *   PDO::ATTR_PERSISTENT, the process's connection reused (pdo_pgsql checks it without a round
 *   trip); the CLI worker's own PDO, kept for the session.
 * - literal: query() with ATTR_EMULATE_PREPARES on, so that PDO sends the text as it is with
 *   PQexec (the simple protocol). With emulation off, query() would prepare a named server-side
 *   statement, execute it and DEALLOCATE it: three messages for what the mode says is one.
 * - extended: prepare()->execute() with PGSQL_ATTR_DISABLE_PREPARES: one PQexecParams, the
 *   unnamed statement parsed every time. Without it PDO would PQprepare a named statement per
 *   PDOStatement and DEALLOCATE it when the statement is freed, two more round trips per request.
 * - prepared: a page has none. A PDOStatement (and so its server-side statement) does not outlive
 *   the request, so a page re-prepares every request: that is extended with extra round trips. The
 *   CLI worker keeps one PDOStatement per step, prepared without PGSQL_ATTR_DISABLE_PREPARES: a named
 *   statement (PQprepare, on its first execute()), then PQexecPrepared; DEALLOCATE when it is freed.
 * - batch: beginTransaction(), the prepared insert per row, commit(); /batch=copy:
 *   pgsqlCopyFromArray (COPY … FROM STDIN, text format) with the group's rows inside the
 *   transaction.
 * - Parameters: ints and strings as text of unspecified type (the server infers it), booleans
 *   as PARAM_BOOL (PDO sends t/f), bytea as PARAM_LOB (binary format), floats as their shortest
 *   round-trip text (PDO would stringify them with `precision`, 14 digits).
 * - Values: PDO's own conversion (int2/int4/int8 → int, bool → bool, bytea → a stream, read to
 *   its end; everything else a string). The loaded page decodes no further: pdo_pgsql's only
 *   source of a column's type, getColumnMeta(), costs catalogue queries every call (SELECT
 *   RELNAME FROM PG_CLASS for every column, SELECT TYPNAME FROM PG_TYPE for a type it has no
 *   label for: numeric, bpchar, float4/8, time), which would put round trips into every request.
 *   A verification pass asks getColumnMeta() once and decodes each string by its native_type.
 */

namespace AccessBench\Php;

use PDO;
use PDOStatement;

require_once __DIR__ . '/pdo.php';

final class PdoPgsqlDriver extends PdoDriver
{
    /** @var array<string, list<string>> kinds of each verified statement's columns */
    private array $kinds = [];
    private ?int $pid = null;                               // the backend, asked at describe()
    private bool $copy = false;                             // /batch=copy

    protected function method(): string
    {
        return 'php-pdo-pgsql';
    }

    /**
     * The DSN, which pdo_pgsql hands to libpq as a conninfo (';' read as ' '): options as
     * lib/session.php builds them (pg_options), the TLS keys as lib/tls.php maps them.
     */
    protected function dsn(array $endpoint): string
    {
        $options = pg_options($endpoint);
        $tls = [];
        foreach (pg_tls_params($endpoint, 'php-pdo-pgsql') as $keyword => $value) {
            $tls[] = libpq_pair($keyword, $value);
        }
        return 'pgsql:' . implode(';', array_filter([
            'host=' . ($endpoint['host'] ?? ''),
            isset($endpoint['port']) ? 'port=' . $endpoint['port'] : '',
            'dbname=' . ($endpoint['database'] ?? ''),
            $options === null ? '' : libpq_pair('options', $options),
            ...$tls,
        ]));
    }

    protected function connect_error(DbError $e): \RuntimeException
    {
        return pg_unknown_keyword($e->getMessage(), 'php-pdo-pgsql') ?? $e;
    }

    protected function extended_attributes(): array
    {
        return [PDO::ATTR_EMULATE_PREPARES => false,
                PDO::PGSQL_ATTR_DISABLE_PREPARES => true];  // one PQexecParams: the unnamed statement
    }

    protected function prepared_attributes(): array
    {
        return [PDO::ATTR_EMULATE_PREPARES => false,
                PDO::PGSQL_ATTR_DISABLE_PREPARES => false]; // a named statement: PQprepare, then PQexecPrepared
    }

    protected function no_prepared(): string
    {
        return 'a PDOStatement does not outlive its request, so a page prepares again every request (that is '
            . 'extended, with extra round trips)';
    }

    /** @return list<list<array{0: string, 1: mixed}>> */
    protected function rows(PDOStatement $statement, Op $op): array
    {
        $rows = [];
        $kinds = null;
        while (($row = $statement->fetch(PDO::FETCH_NUM)) !== false) {
            if ($op->verify) {
                $kinds ??= $this->kinds[$op->sql] ??= self::kinds($statement);
            }
            $typed = [];
            foreach ($row as $c => $v) {
                if (is_resource($v)) {                      // bytea: PDO hands a stream
                    $v = stream_get_contents($v);
                }
                $typed[] = $kinds === null ? self::native($v) : self::exact($kinds[$c], $v);
            }
            $rows[] = $typed;
        }
        return $rows;
    }

    /** @return list<string> */
    private static function kinds(PDOStatement $statement): array
    {
        $kinds = [];
        for ($c = 0, $n = $statement->columnCount(); $c < $n; $c++) {
            $kinds[] = PG_NAMES[$statement->getColumnMeta($c)['native_type'] ?? ''] ?? 'text';
        }
        return $kinds;
    }

    /** A value as PDO gave it (loaded requests): its PHP type says what it is. */
    private static function native(mixed $v): array
    {
        return match (true) {
            $v === null => ['null', null],
            is_int($v) => ['int', $v],
            is_bool($v) => ['bool', $v],
            is_float($v) => ['float', $v],
            default => ['text', (string) $v],
        };
    }

    /** A value by its column's type (verification). */
    private static function exact(string $kind, mixed $v): array
    {
        return match (true) {
            $v === null => ['null', null],
            is_int($v) => ['int', $v],
            is_bool($v) => ['bool', $v],
            $kind === 'bytes' => ['bytes', (string) $v],
            default => pg_text($kind, (string) $v),
        };
    }


    // ---- the CLI worker's (WorkerDriver) ------------------------------------------------------

    public function name(): string
    {
        return 'pdo_pgsql (PHP extension)';
    }

    public function version(): string
    {
        return phpversion('pdo_pgsql') . ' (libpq ' . PGSQL_LIBPQ_VERSION . ')';
    }

    public function dbms(): array
    {
        return ['postgresql'];
    }

    public function configure(string $key, string $value): void
    {
        if ($key !== 'batch' || !in_array($value, ['rows', 'copy'], true)) {
            throw new Unsupported("php-pdo-pgsql has no setting {$key}={$value} (its settings: batch=rows|copy)");
        }
        $this->copy = $value === 'copy';
    }

    public function batch_style(): string
    {
        return $this->copy
            ? 'beginTransaction(); pgsqlCopyFromArray(table, rows, "\\t", "\\\\N", columns): COPY … FROM STDIN, text '
                . 'format (tab-separated, NULL as \\N), the group as one COPY; commit()'
            : parent::batch_style();
    }

    public function settings(): array
    {
        return [
            'connection' => 'new PDO("pgsql:…") with ERRMODE_EXCEPTION, STRINGIFY_FETCHES off, kept for the session (a '
                . 'page\'s persistent connection is ATTR_PERSISTENT; a CLI process keeps its own PDO, which is that '
                . 'reuse); per-request: a new PDO, released, inside each operation',
            'literal' => 'query() with ATTR_EMULATE_PREPARES on: PQexec, the simple query protocol, values inlined',
            'extended' => 'prepare()->execute() with emulation off and PGSQL_ATTR_DISABLE_PREPARES: PQexecParams, the '
                . 'unnamed statement parsed every time',
            'prepared' => 'one PDOStatement per step, prepared with emulation off and PGSQL_ATTR_DISABLE_PREPARES off: '
                . 'PQprepare of a named statement on its first execute(), then PQexecPrepared; freed (DEALLOCATE) '
                . 'after the step',
            'parameters' => 'ints PARAM_INT, booleans PARAM_BOOL, bytea PARAM_LOB (binary format), the rest '
                . 'PARAM_STR: all sent without type OIDs, the server infers them; floats as shortest round-trip text '
                . '(PDO has no float parameter type and would print 14 digits)',
            'results' => 'timed operations keep PDO\'s own values (int2/4/8 → int, bool → bool, bytea → a stream read '
                . 'to its end, the rest strings); a verification pass asks getColumnMeta() once per statement (it '
                . 'runs catalogue queries) and decodes each string by its native_type',
            'batch' => $this->batch_style(),
        ];
    }

    public function describe(): array
    {
        $this->pid = (int) $this->one('SELECT pg_backend_pid()');
        return ['server_pid' => $this->pid, 'server_version' => $this->server_version()];
    }

    public function server_pid(): ?int
    {
        return $this->pid;
    }

    /** COPY's: [the table, the columns, each row as one line of COPY text]; otherwise a row per operation. */
    public function batch_group(Op $op, ?array $shape, array $rows): mixed
    {
        if (!$this->copy) {
            return parent::batch_group($op, $shape, $rows);
        }
        [$table, $columns] = insert_target($shape, 'php-pdo-pgsql/batch=copy');
        return [pg_ident($table), implode(', ', array_map(pg_ident(...), $columns)),
                array_map(static fn (array $row): string => implode("\t", array_map(copy_field(...), $row)), $rows)];
    }

    public function batch(mixed $group): int
    {
        if (!$this->copy) {
            return parent::batch($group);
        }
        [$table, $columns, $lines] = $group;
        $this->begin();
        try {
            $this->pdo->pgsqlCopyFromArray($table, $lines, "\t", '\\\\N', $columns);
        } catch (\PDOException $e) {
            throw pdo_error($e);
        }
        $this->commit();
        return count($lines);
    }
}
