<?php

declare(strict_types=1);

/**
 * php-pdo-pgsql: PDO's PostgreSQL driver, as a page uses it.
 *
 * - per-request: a new PDO, released at the end of the request; persistent:
 *   PDO::ATTR_PERSISTENT, the process's connection reused (pdo_pgsql checks it without a round
 *   trip).
 * - literal: query() with ATTR_EMULATE_PREPARES on, so that PDO sends the text as it is with
 *   PQexec (the simple protocol). With emulation off, query() would prepare a named server-side
 *   statement, execute it and DEALLOCATE it: three messages for what the mode says is one.
 * - extended: prepare()->execute() with PGSQL_ATTR_DISABLE_PREPARES: one PQexecParams, the
 *   unnamed statement parsed every time. Without it PDO would PQprepare a named statement per
 *   PDOStatement and DEALLOCATE it when the statement is freed, two more round trips per request.
 * - prepared: unsupported. A PDOStatement (and so its server-side statement) does not outlive the
 *   request, so a page re-prepares every request: that is extended with extra round trips.
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

namespace AccessBench\Tier;

use PDO;
use PDOStatement;

require_once __DIR__ . '/pdo.php';

final class PdoPgsqlDriver extends PdoDriver
{
    /** @var array<string, list<string>> kinds of each verified statement's columns */
    private array $kinds = [];

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

    protected function extended(): array
    {
        return [PDO::PGSQL_ATTR_DISABLE_PREPARES => true];  // one PQexecParams: the unnamed statement
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

}
