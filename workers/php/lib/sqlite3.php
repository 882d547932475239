<?php

declare(strict_types=1);

/**
 * php-sqlite3: PHP's SQLite3 class (the system's libsqlite3), for the CLI worker: SQLite's native
 * API beside php-pdo-sqlite's generic one over the same library (study S3's generic-vs-native
 * question).
 *
 * - Connection: new SQLite3(FILE, SQLITE3_OPEN_READWRITE | SQLITE3_OPEN_CREATE), or
 *   SQLITE3_OPEN_READONLY for read_only; enableExceptions(true); busyTimeout(5000).
 * - literal: query(text) (sqlite3_prepare_v2, step, finalize) for a statement that reads rows,
 *   exec(text) (sqlite3_exec) for one that does not.
 * - extended: prepare(), bindValue, execute(), close() (finalize) every operation.
 * - prepared: one SQLite3Stmt per step, prepared in the first operation; execute() resets and
 *   binds it after; closed after the step.
 * - Parameters by their SQLite type: SQLITE3_INTEGER (booleans 1/0), SQLITE3_FLOAT, SQLITE3_BLOB,
 *   SQLITE3_TEXT for text, decimals, dates and timestamps, SQLITE3_NULL.
 * - Values by storage class: fetchArray(SQLITE3_NUM) gives INTEGER an int, REAL a float, TEXT and
 *   BLOB a string, told apart by columnType() (the current row's storage class, no allocation).
 */

namespace AccessBench\Php;

use SQLite3;
use SQLite3Result;
use SQLite3Stmt;

require_once __DIR__ . '/sqlite.php';

final class Sqlite3Driver implements WorkerDriver
{
    use RowBatches;

    private ?SQLite3 $db = null;
    /** @var array<string, SQLite3Stmt> the prepared mode's statements, by the step's name */
    private array $statements = [];

    /** @param bool $cli the CLI worker's (lib/registry.php): php-sqlite3 has no page */
    public function __construct(bool $cli = true)
    {
    }

    public function connect(array $endpoint, ?string $password, bool $persistent): void
    {
        $flags = empty($endpoint['read_only']) ? SQLITE3_OPEN_READWRITE | SQLITE3_OPEN_CREATE : SQLITE3_OPEN_READONLY;
        try {
            $db = new SQLite3(sqlite_file($endpoint), $flags);
        } catch (\Exception $e) {
            throw new DbError($e->getMessage(), 'SQLITE_CANTOPEN');
        }
        $db->enableExceptions(true);
        $db->busyTimeout(SQLITE_BUSY_MS);
        $this->db = $db;
        $this->statements = [];
    }

    /** @return list<array{0: mixed, 1: int}> each value and its SQLITE3_* type */
    public function bind(array $args): array
    {
        return array_map(static fn (array $a): array => [sqlite_argument($a), sqlite3_type($a)], $args);
    }

    public function run(Op $op): array|int
    {
        try {
            if ($op->mode === 'literal' && !$op->fetch) {
                $this->db->exec($op->statement);
                return $this->db->changes();
            }
            $result = match ($op->mode) {
                'literal' => $this->db->query($op->statement),
                'extended' => self::execute($this->db->prepare($op->sql), $op->args),
                'prepared' => self::execute($this->statements[$op->name] ??= $this->db->prepare($op->sql), $op->args),
                default => throw new Unsupported("php-sqlite3 has no mode {$op->mode}"),
            };
            $rows = $op->fetch ? self::rows($result) : $this->db->changes();
            $result->finalize();                            // literal: finalized; (extended,) prepared: reset
            return $rows;
        } catch (\Exception $e) {
            throw $e instanceof Unsupported ? $e : sqlite_error($e->getMessage(), $this->db->lastErrorCode());
        }
    }

    /** @param list<array{0: mixed, 1: int}> $args */
    private static function execute(SQLite3Stmt $statement, array $args): SQLite3Result
    {
        foreach ($args as $k => [$value, $type]) {
            $statement->bindValue($k + 1, $value, $type);
        }
        return $statement->execute();
    }

    /** @return list<list<array{0: string, 1: mixed}>> */
    private static function rows(SQLite3Result $result): array
    {
        $rows = [];
        while (($row = $result->fetchArray(SQLITE3_NUM)) !== false) {
            $typed = [];
            foreach ($row as $c => $v) {
                $typed[] = sqlite_value($v, is_string($v) && $result->columnType($c) === SQLITE3_BLOB);
            }
            $rows[] = $typed;
        }
        return $rows;
    }

    public function disconnect(): void
    {
        $this->end_step();
        $this->db?->close();
        $this->db = null;
    }

    // ---- the CLI worker's (WorkerDriver) ------------------------------------------------------

    public function name(): string
    {
        return 'sqlite3 (PHP extension)';
    }

    public function version(): string
    {
        return phpversion('sqlite3') . ' (SQLite ' . SQLite3::version()['versionString'] . ')';
    }

    public function dbms(): array
    {
        return ['sqlite'];
    }

    public function modes(): array
    {
        return ['literal', 'extended', 'prepared'];
    }

    public function batch_style(): string
    {
        return 'exec("BEGIN"); the insert per row as the prepared mode runs it (one SQLite3Stmt, prepared in the '
            . 'first group, bindValue and execute per row); exec("COMMIT")';
    }

    public function configure(string $key, string $value): void
    {
        throw new Unsupported("php-sqlite3 has no setting {$key}={$value} (it has none)");
    }

    public function settings(): array
    {
        return sqlite_settings('new SQLite3(FILE, SQLITE3_OPEN_READWRITE | SQLITE3_OPEN_CREATE), enableExceptions, '
            . 'busyTimeout(' . SQLITE_BUSY_MS . ')') + [
            'literal' => 'query(text with values inlined) for a statement reading rows (prepare, step, finalize), '
                . 'exec(text) (sqlite3_exec) for one that does not',
            'extended' => 'prepare(), bindValue, execute(), close() (finalize) every operation',
            'prepared' => 'one SQLite3Stmt per step, prepared in the first operation, then bindValue and execute() '
                . '(sqlite3_reset, bind, step); closed after the step',
            'results' => 'fetchArray(SQLITE3_NUM) by storage class: INTEGER → int, REAL → float, TEXT → string, BLOB '
                . '→ string told apart by columnType(), NULL',
            'batch' => $this->batch_style(),
        ];
    }

    public function describe(): array
    {
        return ['server_version' => SQLite3::version()['versionString']];
    }

    public function server_pid(): ?int
    {
        return null;
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
        try {
            $this->db?->exec('ROLLBACK');
        } catch (\Exception) {
            // no transaction was open
        }
    }

    public function end_step(): void
    {
        foreach ($this->statements as $statement) {
            $statement->close();
        }
        $this->statements = [];
    }

    private function command(string $sql): void
    {
        try {
            $this->db->exec($sql);
        } catch (\Exception $e) {
            throw sqlite_error($e->getMessage(), $this->db->lastErrorCode());
        }
    }
}

/** The SQLITE3_* type a typed argument is bound as. */
function sqlite3_type(array $arg): int
{
    return $arg[1] === null ? SQLITE3_NULL : match ($arg[0]) {
        'int', 'bool' => SQLITE3_INTEGER,
        'float' => SQLITE3_FLOAT,
        'bytes' => SQLITE3_BLOB,
        default => SQLITE3_TEXT,
    };
}
