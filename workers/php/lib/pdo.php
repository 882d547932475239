<?php

declare(strict_types=1);

/**
 * What PDO's drivers share, as a page and the CLI worker use them: the connection (a new PDO per
 * request, or a page's PDO::ATTR_PERSISTENT; the CLI worker's own PDO kept for the session), literal
 * mode through emulated prepares (one simple query: without emulation query() prepares, executes
 * and frees a server-side statement), extended mode as prepare()->execute() with emulation off,
 * prepared mode (the CLI worker only) as one PDOStatement per connection and step, prepared in
 * the first operation and executed after, and how arguments are bound. A page has no prepared
 * mode: a PDOStatement does not outlive its request, so a page prepares again every request,
 * which is extended. Each driver names its DSN, its extra attributes and how it reads a row's
 * values.
 */

namespace AccessBench\Php;

use PDO;
use PDOException;
use PDOStatement;

abstract class PdoDriver implements WorkerDriver
{
    use RowBatches;

    protected ?PDO $pdo = null;
    /** @var array<string, PDOStatement> the CLI worker's prepared statements, by the step's name */
    private array $statements = [];

    /** @param bool $cli the CLI worker's (lib/driver.php WorkerDriver); a page's otherwise */
    public function __construct(private readonly bool $cli = false)
    {
    }

    /** The method's name, for its messages. */
    abstract protected function method(): string;

    /** The PDO DSN of the endpoint. */
    abstract protected function dsn(array $endpoint): string;

    /** @return list<list<array{0: string, 1: mixed}>> every row read, as typed values */
    abstract protected function rows(PDOStatement $statement, Op $op): array;

    /** @return array<int, mixed> attributes beyond the shared ones, at connect time (the endpoint's TLS among them) */
    protected function attributes(array $endpoint): array
    {
        return [];
    }

    /** A failed connection as the page reports it (a driver may name what it lacks instead). */
    protected function connect_error(DbError $e): \RuntimeException
    {
        return $e;
    }

    /** @return array<int, mixed> attributes set before a literal statement runs: emulated prepares, one simple query */
    protected function literal_attributes(): array
    {
        return [PDO::ATTR_EMULATE_PREPARES => true];
    }

    /** @return array<int, mixed> attributes set before an extended statement is prepared */
    protected function extended_attributes(): array
    {
        return [PDO::ATTR_EMULATE_PREPARES => false];
    }

    /** @return array<int, mixed> attributes set before the prepared mode's statement is prepared */
    protected function prepared_attributes(): array
    {
        return $this->extended_attributes();
    }

    /** Why a page has no prepared mode, as the method says it. */
    protected function no_prepared(): string
    {
        return 'a PDOStatement does not outlive its request, so a page prepares again every request (that is extended)';
    }

    /** A PDOException as the method reports it (SQLite names its error codes instead of SQLSTATEs). */
    protected function error(PDOException $e): DbError
    {
        return pdo_error($e);
    }

    public function connect(array $endpoint, ?string $password, bool $persistent): void
    {
        try {
            $this->pdo = new PDO($this->dsn($endpoint), $endpoint['user'] ?? null, $password ?: null, [
                PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
                PDO::ATTR_PERSISTENT => $persistent,
                PDO::ATTR_STRINGIFY_FETCHES => false,
            ] + $this->attributes($endpoint));
        } catch (PDOException $e) {
            throw $this->connect_error($this->error($e));
        }
        $this->statements = [];
    }

    public function run(Op $op): array|int
    {
        try {
            $statement = match ($op->mode) {
                'literal' => $this->with($this->literal_attributes())->query($op->statement),
                'extended' => $this->execute($this->with($this->extended_attributes())->prepare($op->sql),
                                             $op->args),
                'prepared' => $this->execute($this->prepared($op), $op->args),
                default => throw new Unsupported("{$this->method()} has no mode {$op->mode}"),
            };
            return $op->fetch ? $this->rows($statement, $op) : $statement->rowCount();
        } catch (PDOException $e) {
            throw $this->error($e);
        }
    }

    /** The connection with these attributes set (PDO keeps them; setting one is a field write). */
    private function with(array $attributes): PDO
    {
        foreach ($attributes as $attribute => $value) {
            $this->pdo->setAttribute($attribute, $value);
        }
        return $this->pdo;
    }

    /** The step's PDOStatement on this connection, prepared in its first operation (the CLI worker's). */
    private function prepared(Op $op): PDOStatement
    {
        if (!$this->cli) {
            throw new Unsupported("{$this->method()} has no prepared mode: {$this->no_prepared()}");
        }
        return $this->statements[$op->name] ??= $this->with($this->prepared_attributes())->prepare($op->sql);
    }

    /** @param list<array{0: mixed, 1: int}> $args */
    private function execute(PDOStatement $statement, array $args): PDOStatement
    {
        foreach ($args as $k => [$value, $type]) {
            $statement->bindValue($k + 1, $value, $type);
        }
        $statement->execute();
        return $statement;
    }

    /**
     * Ints PARAM_INT, booleans PARAM_BOOL, bytes PARAM_LOB, the rest PARAM_STR: a float as its
     * shortest round-trip text (PDO has no float parameter type, and would stringify one with
     * `precision`, 14 digits).
     *
     * @return list<array{0: mixed, 1: int}> each value as bound and its PDO::PARAM_* type
     */
    public function bind(array $args): array
    {
        return array_map(static fn (array $a): array => $a[1] === null ? [null, PDO::PARAM_NULL] : match ($a[0]) {
            'int' => [$a[1], PDO::PARAM_INT],
            'bool' => [$a[1], PDO::PARAM_BOOL],
            'bytes' => [$a[1], PDO::PARAM_LOB],
            'float' => [float_text($a[1]), PDO::PARAM_STR],
            default => [$a[1], PDO::PARAM_STR],
        }, $args);
    }

    public function disconnect(): void
    {
        $this->statements = [];
        $this->pdo = null;                                  // a persistent handle stays with the process
    }

    // ---- the CLI worker's (WorkerDriver) ------------------------------------------------------

    public function modes(): array
    {
        return ['literal', 'extended', 'prepared'];
    }

    public function batch_style(): string
    {
        return 'beginTransaction(); the insert per row as the prepared mode runs it (one PDOStatement, prepared in '
            . 'the first group, execute() per row); commit()';
    }

    public function configure(string $key, string $value): void
    {
        throw new Unsupported("{$this->method()} has no setting {$key}={$value} (it has none)");
    }

    public function begin(): void
    {
        $this->pdo->beginTransaction();
    }

    public function commit(): void
    {
        try {
            $this->pdo->commit();
        } catch (PDOException $e) {
            throw $this->error($e);
        }
    }

    public function recover(): void
    {
        if ($this->pdo !== null && $this->pdo->inTransaction()) {
            try {
                $this->pdo->rollBack();
            } catch (PDOException) {
                // the connection is gone: the next operation says so
            }
        }
    }

    /** Freeing a PDOStatement closes its server-side statement (DEALLOCATE, COM_STMT_CLOSE, finalize). */
    public function end_step(): void
    {
        $this->statements = [];
    }

    /** The connection's server version, as the driver reports it. */
    protected function server_version(): string
    {
        return (string) $this->pdo->getAttribute(PDO::ATTR_SERVER_VERSION);
    }

    /** One value read by a statement of the open connection (untimed: open's describe()). */
    protected function one(string $sql): mixed
    {
        return $this->pdo->query($sql)->fetchColumn();
    }
}
