<?php

declare(strict_types=1);

/**
 * What PDO's drivers share as a page uses them: the connection (a new PDO per request, or
 * PDO::ATTR_PERSISTENT), literal mode through emulated prepares (one simple query: without
 * emulation query() prepares, executes and frees a server-side statement), extended mode as
 * prepare()->execute() with emulation off, and how arguments are bound. prepared is
 * unsupported: a PDOStatement does not outlive its request, so a page prepares again every
 * request, which is extended. Each driver names its DSN, its extra attributes and how it reads
 * a row's values.
 */

namespace AccessBench\Tier;

use PDO;
use PDOException;
use PDOStatement;

abstract class PdoDriver implements Driver
{
    protected ?PDO $pdo = null;

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

    /** @return array<int, mixed> attributes set before an extended statement is prepared */
    protected function extended(): array
    {
        return [];
    }

    /** Why prepared mode is unsupported, as the method says it. */
    protected function no_prepared(): string
    {
        return 'a PDOStatement does not outlive its request, so a page prepares again every request (that is extended)';
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
            throw $this->connect_error(pdo_error($e));
        }
    }

    public function run(Op $op): array|int
    {
        $pdo = $this->pdo;
        try {
            if ($op->mode === 'literal') {
                $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
                $statement = $pdo->query($op->statement);
            } elseif ($op->mode === 'extended') {
                $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
                foreach ($this->extended() as $attribute => $value) {
                    $pdo->setAttribute($attribute, $value);
                }
                $statement = $pdo->prepare($op->sql);
                foreach ($op->args as $k => [$type, $value]) {
                    $statement->bindValue($k + 1, ...self::bindable($type, $value));
                }
                $statement->execute();
            } else {
                throw new Unsupported("{$this->method()} has no prepared mode: {$this->no_prepared()}");
            }
            return $op->fetch ? $this->rows($statement, $op) : $statement->rowCount();
        } catch (PDOException $e) {
            throw pdo_error($e);
        }
    }

    /**
     * Ints PARAM_INT, booleans PARAM_BOOL, bytes PARAM_LOB, the rest PARAM_STR: a float as its
     * shortest round-trip text (PDO has no float parameter type, and would stringify one with
     * `precision`, 14 digits).
     *
     * @return array{0: mixed, 1: int} the value as bound and its PDO::PARAM_* type
     */
    private static function bindable(string $type, mixed $value): array
    {
        if ($value === null) {
            return [null, PDO::PARAM_NULL];
        }
        return match ($type) {
            'int' => [$value, PDO::PARAM_INT],
            'bool' => [$value, PDO::PARAM_BOOL],
            'bytes' => [$value, PDO::PARAM_LOB],
            'float' => [float_text($value), PDO::PARAM_STR],
            default => [$value, PDO::PARAM_STR],
        };
    }

    public function disconnect(): void
    {
        $this->pdo = null;                                  // a persistent handle stays with the process
    }
}
