<?php

declare(strict_types=1);

/**
 * php-pdo-sqlite: PDO's SQLite driver (the system's libsqlite3), for the CLI worker: PDO's generic
 * API beside php-sqlite3's native one over the same library (study S3's generic-vs-native question).
 *
 * - Connection: new PDO("sqlite:FILE") with ATTR_TIMEOUT 5 (sqlite3_busy_timeout 5000 ms);
 *   read_only: SQLITE_ATTR_OPEN_FLAGS SQLITE_OPEN_READONLY.
 * - literal: query(text): pdo_sqlite has no emulated prepares, so that is sqlite3_prepare_v2,
 *   step, finalize of the text with values inlined (SQLite has no other way to run a statement).
 * - extended: prepare(), bindValue, execute(), the statement freed (finalized) every operation.
 * - prepared: one PDOStatement per step, prepared in the first operation; execute() resets and
 *   binds it after; finalized after the step.
 * - Parameters: ints PARAM_INT (sqlite3_bind_int64), booleans PARAM_INT 1/0, bytes PARAM_LOB
 *   (sqlite3_bind_blob), the rest PARAM_STR (sqlite3_bind_text): pdo_sqlite has no float binding,
 *   so a double goes as its shortest round-trip text, which a REAL column's affinity converts.
 * - Values: PDO's (INTEGER → int, REAL → float, TEXT and BLOB → string, NULL → null); a string is
 *   bytes when its column is declared BLOB (getColumnMeta's sqlite:decl_type, asked once per
 *   result), or, for a column of no declared type (an expression), when getColumnMeta says that
 *   value's storage class is BLOB.
 */

namespace AccessBench\Php;

use PDO;
use PDOException;
use PDOStatement;

require_once __DIR__ . '/pdo.php';
require_once __DIR__ . '/sqlite.php';

final class PdoSqliteDriver extends PdoDriver
{
    protected function method(): string
    {
        return 'php-pdo-sqlite';
    }

    protected function dsn(array $endpoint): string
    {
        return 'sqlite:' . sqlite_file($endpoint);
    }

    protected function attributes(array $endpoint): array
    {
        $attributes = [PDO::ATTR_TIMEOUT => intdiv(SQLITE_BUSY_MS, 1000)];
        if (!empty($endpoint['read_only'])) {
            $attributes[PDO::SQLITE_ATTR_OPEN_FLAGS] = PDO::SQLITE_OPEN_READONLY;
        }
        return $attributes;
    }

    protected function literal_attributes(): array
    {
        return [];                                          // no emulation to switch: query() runs the text
    }

    protected function extended_attributes(): array
    {
        return [];
    }

    protected function error(PDOException $e): DbError
    {
        $info = $e->errorInfo ?? [];
        return isset($info[1]) ? sqlite_error((string) ($info[2] ?? $e->getMessage()), (int) $info[1])
            : pdo_error($e);
    }

    /** Booleans as integers 1/0 (PARAM_INT), floats as text (pdo_sqlite binds no double), the rest as PDO does. */
    public function bind(array $args): array
    {
        return parent::bind(array_map(static fn (array $a): array => $a[0] === 'bool' ? ['int', sqlite_argument($a)]
            : $a, $args));
    }

    /** @return list<list<array{0: string, 1: mixed}>> */
    protected function rows(PDOStatement $statement, Op $op): array
    {
        $blobs = null;                                      // per column: true, false, or null (ask each value)
        $rows = [];
        while (($row = $statement->fetch(PDO::FETCH_NUM)) !== false) {
            $blobs ??= self::declared_blobs($statement, count($row));
            $typed = [];
            foreach ($row as $c => $v) {
                $blob = is_string($v) && ($blobs[$c] ?? in_array('blob', $statement->getColumnMeta($c)['flags'], true));
                $typed[] = sqlite_value($v, $blob);
            }
            $rows[] = $typed;
        }
        return $rows;
    }

    /** @return list<?bool> per column, whether it is declared BLOB (null: no declared type) */
    private static function declared_blobs(PDOStatement $statement, int $columns): array
    {
        $blobs = [];
        for ($c = 0; $c < $columns; $c++) {
            $declared = $statement->getColumnMeta($c)['sqlite:decl_type'] ?? null;
            $blobs[] = $declared === null ? null : stripos($declared, 'BLOB') !== false;
        }
        return $blobs;
    }

    // ---- the CLI worker's (WorkerDriver) ------------------------------------------------------

    public function name(): string
    {
        return 'pdo_sqlite (PHP extension)';
    }

    public function version(): string
    {
        $memory = new PDO('sqlite::memory:');
        return phpversion('pdo_sqlite') . ' (SQLite ' . $memory->getAttribute(PDO::ATTR_CLIENT_VERSION) . ')';
    }

    public function dbms(): array
    {
        return ['sqlite'];
    }

    public function settings(): array
    {
        return sqlite_settings('new PDO("sqlite:FILE") (sqlite3_open_v2 READWRITE|CREATE) with ERRMODE_EXCEPTION, '
            . 'ATTR_TIMEOUT 5') + [
            'literal' => 'query(text with values inlined): sqlite3_prepare_v2, step, finalize (pdo_sqlite has no '
                . 'emulated prepares)',
            'extended' => 'prepare(), bindValue, execute(), the PDOStatement freed (finalized) every operation',
            'prepared' => 'one PDOStatement per step, prepared in the first operation, then bindValue and execute() '
                . '(sqlite3_reset, bind, step); finalized after the step',
            'floats' => 'bound as their shortest round-trip text (PARAM_STR: pdo_sqlite has no double binding); a '
                . 'REAL column\'s affinity converts it, a comparison with one too',
            'results' => 'PDO\'s values by storage class (INTEGER → int, REAL → float, TEXT and BLOB → string, NULL); '
                . 'a string is bytes when its column is declared BLOB (getColumnMeta\'s sqlite:decl_type, once per '
                . 'result), or, without a declared type, when getColumnMeta says its storage class is BLOB',
            'batch' => $this->batch_style(),
        ];
    }

    public function describe(): array
    {
        return ['server_version' => (string) $this->one('SELECT sqlite_version()')];
    }

    public function server_pid(): ?int
    {
        return null;
    }
}
