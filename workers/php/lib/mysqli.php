<?php

declare(strict_types=1);

/**
 * php-mysqli: the mysqli extension (mysqlnd underneath), on MariaDB, as a page and the CLI worker
 * use it.
 *
 * - Connection: mysqli_init(); MYSQLI_OPT_INT_AND_FLOAT_NATIVE (text-protocol ints and floats as
 *   PHP ints and floats, as the binary protocol gives them); MYSQLI_SET_CHARSET_NAME utf8mb4 (in
 *   the handshake, no SET NAMES); real_connect(…, MYSQLI_CLIENT_FOUND_ROWS), through the socket
 *   when the endpoint has one. per-request: a new connection, closed at the end of the request;
 *   persistent: a page's 'p:' host (mysqli resets a reused connection with COM_CHANGE_USER, a
 *   round trip every request, as every persistent mysqli page pays); the CLI worker's own
 *   connection, kept for the session. read_only: SET SESSION
 *   TRANSACTION READ ONLY as the first query, on a new or a reused link. Errors as exceptions
 *   (MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT).
 * - literal: query(): COM_QUERY, the text protocol.
 * - extended: prepare(), bind_param(), execute(), get_result(), close(): COM_STMT_PREPARE,
 *   COM_STMT_EXECUTE (binary protocol) and COM_STMT_CLOSE every request. Not execute_query():
 *   it binds every value as a string, where bind_param's type letters bind ints as LONGLONG and
 *   floats as DOUBLE, as the protocol binds them; the round trips are the same.
 * - prepared: a page has none. A mysqli_stmt does not outlive the request, so a page prepares
 *   again every request: that is extended. The CLI worker keeps one mysqli_stmt per step:
 *   COM_STMT_PREPARE in the first operation, then bind_param and COM_STMT_EXECUTE; close() after.
 * - batch: begin_transaction(), the prepared insert per row, commit().
 * - Values decoded by fetch_fields(): the column's type and character set (63 = binary: bytes),
 *   from the result's metadata, without a round trip.
 */

namespace AccessBench\Php;

use mysqli;
use mysqli_result;
use mysqli_sql_exception;
use mysqli_stmt;

final class MysqliDriver implements WorkerDriver
{
    use RowBatches;

    private ?mysqli $conn = null;
    private bool $persistent = false;
    /** @var array<string, mysqli_stmt> the CLI worker's prepared statements, by the step's name */
    private array $statements = [];
    private ?int $pid = null;                               // the serving thread, asked at describe()

    /** @param bool $cli the CLI worker's (lib/driver.php WorkerDriver); a page's otherwise */
    public function __construct(private readonly bool $cli = false)
    {
    }

    public function connect(array $endpoint, ?string $password, bool $persistent): void
    {
        mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
        $this->persistent = $persistent;
        $socket = $endpoint['socket'] ?? null;
        $host = $socket ? 'localhost' : (string) ($endpoint['host'] ?? 'localhost');
        $tls = mysqlnd_tls($endpoint, 'php-mysqli');
        $flags = MYSQLI_CLIENT_FOUND_ROWS | ($tls->compress ? MYSQLI_CLIENT_COMPRESS : 0);
        try {
            $conn = mysqli_init();
            $conn->options(MYSQLI_OPT_INT_AND_FLOAT_NATIVE, 1);
            $conn->options(MYSQLI_SET_CHARSET_NAME, 'utf8mb4');
            if ($tls->sslmode === 'require') {
                $flags |= MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT;
            } elseif ($tls->sslmode === 'verify-full') {
                if ($tls->rootcert !== null) {
                    $conn->ssl_set(null, null, $tls->rootcert, null, null);
                }
                $flags |= MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT;
            }
            error_clear_last();
            @$conn->real_connect(                           // its warnings: tls_cause()
                ($persistent ? 'p:' : '') . $host,
                $endpoint['user'] ?? null,
                $password ?: null,
                $endpoint['database'] ?? null,
                (int) ($endpoint['port'] ?? 3306),
                $socket,
                $flags,
            );
            // Not MYSQLI_INIT_COMMAND: a reused persistent link is reset by COM_CHANGE_USER, which
            // clears the session's read-only, and the init command does not run again.
            $statement = mysql_session_statement($endpoint);
            if ($statement !== null) {
                $conn->query($statement);
            }
            $this->conn = $conn;
        } catch (mysqli_sql_exception $e) {
            throw self::error($e, self::tls_cause());
        }
    }

    /**
     * Why a TLS handshake failed: mysqlnd's exception says only "Cannot connect to MySQL using
     * SSL", the stream's warning before it says why (the certificate, the host name).
     */
    private static function tls_cause(): ?string
    {
        $last = error_get_last()['message'] ?? null;
        return $last === null ? null : preg_replace(['/^mysqli::real_connect\(\): /', '/\s+/'], ['', ' '], $last);
    }

    public function run(Op $op): array|int
    {
        $conn = $this->conn;
        try {
            if ($op->mode === 'literal') {
                $result = $conn->query($op->statement);
                $changed = $conn->affected_rows;
            } elseif ($op->mode === 'extended') {
                $statement = self::execute($conn->prepare($op->sql), $op->args);
                $result = $statement->get_result();
                $changed = $statement->affected_rows;
                $statement->close();
            } else {
                $statement = self::execute($this->prepared($op), $op->args);
                $result = $statement->get_result();
                $changed = $statement->affected_rows;
            }
            if (!$op->fetch) {
                return (int) $changed;
            }
            return $result instanceof mysqli_result ? self::rows($result) : [];
        } catch (mysqli_sql_exception $e) {
            throw self::error($e);
        }
    }

    /** The step's mysqli_stmt on this connection, prepared in its first operation (the CLI worker's). */
    private function prepared(Op $op): mysqli_stmt
    {
        if (!$this->cli) {
            throw new Unsupported('php-mysqli has no prepared mode: a mysqli_stmt does not outlive its request, so a '
                . 'page prepares again every request (that is extended)');
        }
        return $this->statements[$op->name] ??= $this->conn->prepare($op->sql);
    }

    /** @param array{0: string, 1: list<mixed>} $args bind_param's type letters and values */
    private static function execute(mysqli_stmt $statement, array $args): mysqli_stmt
    {
        if ($args[0] !== '') {
            $statement->bind_param($args[0], ...$args[1]);
        }
        $statement->execute();
        return $statement;
    }

    /**
     * bind_param's type letters — i (LONGLONG) for ints and booleans 1/0, d (DOUBLE) for floats, s
     * for the rest — and the values.
     *
     * @return array{0: string, 1: list<mixed>}
     */
    public function bind(array $args): array
    {
        $letters = '';
        $values = [];
        foreach ($args as [$type, $value]) {
            $letters .= match ($type) {
                'int', 'bool' => 'i',
                'float' => 'd',
                default => 's',
            };
            $values[] = $type === 'bool' && $value !== null ? (int) $value : $value;
        }
        return [$letters, $values];
    }

    /** @return list<list<array{0: string, 1: mixed}>> */
    private static function rows(mysqli_result $result): array
    {
        $kinds = [];
        foreach ($result->fetch_fields() as $field) {
            $kinds[] = mysql_kind((int) $field->type, (int) $field->charsetnr);
        }
        $rows = [];
        while (is_array($row = $result->fetch_row())) {
            $typed = [];
            foreach ($row as $c => $v) {
                $typed[] = mysql_value($kinds[$c], $v);
            }
            $rows[] = $typed;
        }
        $result->free();
        return $rows;
    }

    private static function error(mysqli_sql_exception $e, ?string $cause = null): DbError
    {
        $message = $e->getMessage();
        if ($cause !== null && str_contains($message, 'SSL')) {
            $message .= " ({$cause})";
        }
        return new DbError($message, $e->getSqlState() ?: null);
    }

    public function disconnect(): void
    {
        $this->statements = [];
        if ($this->conn !== null && !$this->persistent) {
            $this->conn->close();
        }
        $this->conn = null;
    }

    // ---- the CLI worker's (WorkerDriver) ------------------------------------------------------

    public function name(): string
    {
        return 'mysqli (PHP extension)';
    }

    public function version(): string
    {
        return phpversion('mysqli') . ' (' . mysqli_get_client_info() . ')';
    }

    public function dbms(): array
    {
        return ['mariadb'];
    }

    public function modes(): array
    {
        return ['literal', 'extended', 'prepared'];
    }

    public function batch_style(): string
    {
        return 'begin_transaction(); the insert per row as the prepared mode runs it (one mysqli_stmt, prepared in '
            . 'the first group, bind_param and execute per row); commit()';
    }

    public function configure(string $key, string $value): void
    {
        throw new Unsupported("php-mysqli has no setting {$key}={$value} (it has none)");
    }

    public function settings(): array
    {
        return [
            'connection' => 'mysqli_init(), MYSQLI_OPT_INT_AND_FLOAT_NATIVE, MYSQLI_SET_CHARSET_NAME utf8mb4, '
                . 'real_connect(…, MYSQLI_CLIENT_FOUND_ROWS), autocommit on, errors as exceptions, kept for the '
                . 'session (a page\'s persistent connection is the p: host; a CLI process keeps its own connection, '
                . 'which is that reuse); per-request: real_connect and close() inside each operation',
            'literal' => 'query(): COM_QUERY, the text protocol, values inlined',
            'extended' => 'prepare(), bind_param(), execute(), get_result(), close(): COM_STMT_PREPARE, '
                . 'COM_STMT_EXECUTE (binary protocol), COM_STMT_CLOSE every operation',
            'prepared' => 'one mysqli_stmt per step: COM_STMT_PREPARE in the first operation, then bind_param() and '
                . 'COM_STMT_EXECUTE; close() (COM_STMT_CLOSE) after the step',
            'parameters' => 'bind_param letters: i (LONGLONG) for ints and booleans 1/0, d (DOUBLE) for floats, s '
                . '(strings) for decimals, dates, timestamps, text and bytes (mysqli has no date or decimal type '
                . 'letter: the server converts the text)',
            'results' => 'mysqlnd\'s values (ints and floats native in both protocols; DECIMAL, dates and times as '
                . 'text) decoded by fetch_fields(): the column\'s type and character set (63 = binary: bytes), from '
                . 'the result\'s metadata; BOOLEAN is TINYINT(1): an int; all rows buffered (store_result)',
            'batch' => $this->batch_style(),
        ];
    }

    public function describe(): array
    {
        $tid = $this->conn->query('SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()');
        $this->pid = (int) $tid->fetch_row()[0];
        return ['server_pid' => $this->pid, 'server_version' => $this->conn->server_info];
    }

    public function server_pid(): ?int
    {
        return $this->pid;
    }

    public function begin(): void
    {
        $this->guarded(fn () => $this->conn->begin_transaction());
    }

    public function commit(): void
    {
        $this->guarded(fn () => $this->conn->commit());
    }

    public function recover(): void
    {
        try {
            $this->conn?->rollback();
        } catch (mysqli_sql_exception) {
            // the connection is gone: the next operation says so
        }
    }

    public function end_step(): void
    {
        foreach ($this->statements as $statement) {
            $statement->close();
        }
        $this->statements = [];
    }

    private function guarded(\Closure $call): void
    {
        try {
            $call();
        } catch (mysqli_sql_exception $e) {
            throw self::error($e);
        }
    }
}
