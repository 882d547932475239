<?php

declare(strict_types=1);

/**
 * What every driver file implements (one per method; the same classes serve the web tier's pages
 * and the CLI worker): connect by the policy, bind an argument row in the driver's own form (before
 * the clock), run one operation in a mode, give back the rows read as typed values (or the rows
 * changed), disconnect. The page (op.php) or the worker's host (lib/host.php) owns everything
 * else: which row, how many operations, the clock, the checksum, the answer. What only the CLI
 * worker needs (who the method is, transactions, batches, releasing what a step prepared) is
 * WorkerDriver below.
 */

namespace AccessBench\Php;

/** The database or the driver refused: the driver's message, and the SQLSTATE when it gives one. */
final class DbError extends \RuntimeException
{
    public function __construct(string $message, public readonly ?string $sqlstate = null)
    {
        parent::__construct(first_line($message));
    }
}

/** The driver cannot do what was asked as asked (a mode it lacks): the reason. */
final class Unsupported extends \RuntimeException
{
}

/** The message was malformed (the CLI worker's: an unknown op, a missing field, a step before open). */
final class ProtocolError extends \RuntimeException
{
}

/** One operation: a step's statement in its mode with one argument row. */
final class Op
{
    /**
     * @param string      $name      the step's (a page's step id, the worker's abwN): names its prepared statement
     * @param string      $sql       neutral form (`?` markers)
     * @param string|null $statement literal mode: the row rendered into the statement for this DBMS
     * @param mixed       $args      the argument row as the driver binds it (Driver::bind)
     * @param bool        $fetch     the statement returns rows to read to the end
     * @param bool        $verify    a verification pass: values must carry their exact types
     */
    public function __construct(
        public readonly string $name,
        public readonly string $mode,
        public readonly string $sql,
        public readonly ?string $statement,
        public readonly mixed $args,
        public readonly bool $fetch,
        public readonly bool $verify,
    ) {
    }
}

interface Driver
{
    /**
     * Open the connection: a new one (`per-request`) or the process's persistent one
     * (`persistent`: pg_pconnect, PDO::ATTR_PERSISTENT, mysqli's 'p:' host).
     *
     * @param array<string, mixed> $endpoint protocol/PROTOCOL.md's `open` endpoint, without password
     */
    public function connect(array $endpoint, ?string $password, bool $persistent): void;

    /**
     * An argument row in the driver's own form, for an Op (before the clock).
     *
     * @param list<array{0: string, 1: mixed}> $args typed arguments (lib/values.php arguments())
     */
    public function bind(array $args): mixed;

    /**
     * Run one operation. Reads every row to the end, each value decoded ([type, value] pairs).
     *
     * @return list<list<array{0: string, 1: mixed}>>|int the rows read, or the rows changed when
     *         the statement reads none (`fetch` false)
     */
    public function run(Op $op): array|int;

    /** Close a per-request connection (a persistent one stays with the process). */
    public function disconnect(): void;
}

/**
 * What the CLI worker (worker.php, lib/host.php) calls beyond what a page does: who the method is,
 * the connection's backend, transactions, a batch group, and releasing what a step prepared. A
 * driver constructed with `cli: true` lives as long as the worker's connection, so its prepared
 * statements outlive an operation (a page's driver lives one request).
 */
interface WorkerDriver extends Driver
{
    /** The driver as packaged (hello's `driver`). */
    public function name(): string;

    /** Its version, and the client library's beneath it. */
    public function version(): string;

    /** @return list<string> the DBMSs it reaches */
    public function dbms(): array;

    /** @return list<string> the modes it does as protocol/PROTOCOL.md defines them */
    public function modes(): array;

    /** @return array<string, string> every setting that changes behaviour, pinned, in words */
    public function settings(): array;

    /** How a batch group is written (hello's capabilities.batch). */
    public function batch_style(): string;

    /** One `key=value` setting of the method name; Unsupported naming the settings it has. */
    public function configure(string $key, string $value): void;

    /** @return array{server_pid?: int, server_version?: string} of the open connection (untimed) */
    public function describe(): array;

    /** The backend serving the connection, or null where there is none (SQLite). */
    public function server_pid(): ?int;

    /** BEGIN and COMMIT (commit_every; a batch group). */
    public function begin(): void;

    public function commit(): void;

    /** After an error: no transaction left open, the connection usable. */
    public function recover(): void;

    /**
     * A batch group in the driver's form (before the clock): the insert's rows, typed.
     *
     * @param array|null $shape the step's shape (a COPY takes the table and columns of an insert)
     * @param list<list<array{0: string, 1: mixed}>> $rows
     */
    public function batch_group(Op $op, ?array $shape, array $rows): mixed;

    /** Write one group inside one transaction, in the batch style; the rows written. */
    public function batch(mixed $group): int;

    /** Release what the step prepared on the connection (untimed). */
    public function end_step(): void;
}

function first_line(string $message): string
{
    $message = trim($message);
    $end = strpos($message, "\n");
    return $end === false ? $message : rtrim(substr($message, 0, $end));
}

/**
 * The statement with each `?` marker outside quoted strings, quoted identifiers and comments
 * rewritten by $marker(k) (k from 0): src/accessbench/protocol/sqltext.py's convert().
 *
 * @param callable(int): string $marker
 */
function convert_markers(string $sql, callable $marker): string
{
    $out = '';
    $k = 0;
    $n = strlen($sql);
    for ($i = 0; $i < $n;) {
        $ch = $sql[$i];
        if ($ch === "'" || $ch === '"') {
            $end = $i + 1;
            while ($end < $n) {
                if ($sql[$end] === $ch) {
                    if ($end + 1 < $n && $sql[$end + 1] === $ch) {  // a doubled quote inside
                        $end += 2;
                        continue;
                    }
                    break;
                }
                $end++;
            }
            $out .= substr($sql, $i, $end + 1 - $i);
            $i = $end + 1;
        } elseif (substr_compare($sql, '--', $i, 2) === 0) {
            $end = strpos($sql, "\n", $i);
            $end = $end === false ? $n : $end;
            $out .= substr($sql, $i, $end - $i);
            $i = $end;
        } elseif (substr_compare($sql, '/*', $i, 2) === 0) {
            $end = strpos($sql, '*/', $i + 2);
            $end = $end === false ? $n : $end + 2;
            $out .= substr($sql, $i, $end - $i);
            $i = $end;
        } elseif ($ch === '?') {
            $out .= $marker($k++);
            $i++;
        } else {
            $out .= $ch;
            $i++;
        }
    }
    return $out;
}

/**
 * A PDOException as the page reports it: the driver's own message (errorInfo[2]) and the
 * SQLSTATE (errorInfo[0]; a connection failure has no errorInfo, only "SQLSTATE[08006] [7] …").
 */
function pdo_error(\PDOException $e): DbError
{
    $info = $e->errorInfo ?? [];
    if (!empty($info[2])) {
        return new DbError((string) $info[2], $info[0] ?: null);
    }
    $message = $e->getMessage();
    if (preg_match('/^SQLSTATE\[(\w{5})\] (?:\[\d+\] )?(.*)$/s', $message, $m)) {
        return new DbError($m[2], $m[1]);
    }
    return new DbError($message);
}

/**
 * The batch style of the drivers without a bulk path of their own: BEGIN, the insert run per
 * row as the prepared mode runs it (prepared in the step's first group, on the connection), COMMIT.
 */
trait RowBatches
{
    /** @return list<Op> one prepared-mode operation per row */
    public function batch_group(Op $op, ?array $shape, array $rows): mixed
    {
        return array_map(fn (array $row): Op => new Op(name: $op->name, mode: 'prepared', sql: $op->sql,
                                                       statement: null, args: $this->bind($row), fetch: false,
                                                       verify: false), $rows);
    }

    public function batch(mixed $group): int
    {
        $this->begin();
        foreach ($group as $op) {
            $this->run($op);
        }
        $this->commit();
        return count($group);
    }
}

/** The table and columns of an `insert` shape, for a batch variant that writes otherwise (COPY). */
function insert_target(?array $shape, string $who): array
{
    if (($shape['kind'] ?? null) !== 'insert' || empty($shape['table']) || empty($shape['columns'])) {
        throw new Unsupported("{$who} writes a batch by COPY, which needs an insert's table and columns (the step's "
            . 'shape), and this statement has none');
    }
    return [(string) $shape['table'], array_map('strval', $shape['columns'])];
}

/** A name quoted as PostgreSQL reads it as spelled. */
function pg_ident(string $name): string
{
    return '"' . str_replace('"', '""', $name) . '"';
}

/**
 * A typed value (lib/values.php's argument form) as a field of COPY's text format: \N for NULL,
 * booleans t/f, bytea as \\x hex, floats as shortest round-trip text, and backslash, tab, newline
 * and carriage return escaped.
 */
function copy_field(array $arg): string
{
    [$type, $v] = $arg;
    if ($v === null) {
        return '\N';
    }
    $text = match ($type) {
        'bool' => $v ? 't' : 'f',
        'float' => float_text($v),
        'bytes' => '\x' . bin2hex($v),
        default => (string) $v,
    };
    return strtr($text, ['\\' => '\\\\', "\t" => '\t', "\n" => '\n', "\r" => '\r']);
}
