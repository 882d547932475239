<?php

declare(strict_types=1);

/**
 * What every driver file implements (one per tier method): connect by the step's policy, run one
 * operation in a mode with an argument row, give back the rows read as typed values (or the rows
 * changed), disconnect. The page (op.php) owns everything else: which row, how many operations,
 * the checksum, the answer.
 */

namespace AccessBench\Tier;

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

/** One operation: a step's statement in its mode with one argument row. */
final class Op
{
    /**
     * @param string      $name      the step id: names a server-side prepared statement
     * @param string      $sql       neutral form (`?` markers)
     * @param string|null $statement literal mode: the row rendered into the statement for this DBMS
     * @param list<array{0: string, 1: mixed}> $args typed arguments (lib/values.php arguments())
     * @param bool        $fetch     the statement returns rows to read to the end
     * @param bool        $verify    a verification pass: values must carry their exact types
     */
    public function __construct(
        public readonly string $name,
        public readonly string $mode,
        public readonly string $sql,
        public readonly ?string $statement,
        public readonly array $args,
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
     * Run one operation. Reads every row to the end, each value decoded ([type, value] pairs).
     *
     * @return list<list<array{0: string, 1: mixed}>>|int the rows read, or the rows changed when
     *         the statement reads none (`fetch` false)
     */
    public function run(Op $op): array|int;

    /** Close a per-request connection (a persistent one stays with the process). */
    public function disconnect(): void;
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
