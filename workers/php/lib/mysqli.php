<?php

declare(strict_types=1);

/**
 * php-mysqli: the mysqli extension (mysqlnd underneath), on MariaDB, as a page uses it.
 *
 * - Connection: mysqli_init(); MYSQLI_OPT_INT_AND_FLOAT_NATIVE (text-protocol ints and floats as
 *   PHP ints and floats, as the binary protocol gives them); MYSQLI_SET_CHARSET_NAME utf8mb4 (in
 *   the handshake, no SET NAMES); real_connect(…, MYSQLI_CLIENT_FOUND_ROWS), through the socket
 *   when the endpoint has one. per-request: a new connection, closed at the end of the request;
 *   persistent: the 'p:' host (mysqli resets a reused connection with COM_CHANGE_USER, a round
 *   trip every request, as every persistent mysqli page pays). read_only: SET SESSION
 *   TRANSACTION READ ONLY as the first query, on a new or a reused link. Errors as exceptions
 *   (MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT).
 * - literal: query(): COM_QUERY, the text protocol.
 * - extended: prepare(), bind_param(), execute(), get_result(), close(): COM_STMT_PREPARE,
 *   COM_STMT_EXECUTE (binary protocol) and COM_STMT_CLOSE every request. Not execute_query():
 *   it binds every value as a string, where bind_param's type letters bind ints as LONGLONG and
 *   floats as DOUBLE, as the protocol binds them; the round trips are the same.
 * - prepared: unsupported. A mysqli_stmt does not outlive the request, so a page prepares again
 *   every request: that is extended.
 * - Values decoded by fetch_fields(): the column's type and character set (63 = binary: bytes),
 *   from the result's metadata, without a round trip.
 */

namespace AccessBench\Tier;

use mysqli;
use mysqli_result;
use mysqli_sql_exception;

final class MysqliDriver implements Driver
{
    private ?mysqli $conn = null;
    private bool $persistent = false;

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
                $statement = $conn->prepare($op->sql);
                if ($op->args) {
                    $statement->bind_param(self::letters($op->args), ...self::values($op->args));
                }
                $statement->execute();
                $result = $statement->get_result();
                $changed = $statement->affected_rows;
                $statement->close();
            } else {
                throw new Unsupported('php-mysqli has no prepared mode: a mysqli_stmt does not outlive its request, '
                    . 'so a page prepares again every request (that is extended)');
            }
            if (!$op->fetch) {
                return (int) $changed;
            }
            return $result instanceof mysqli_result ? self::rows($result) : [];
        } catch (mysqli_sql_exception $e) {
            throw self::error($e);
        }
    }

    /** bind_param's type letters: i (LONGLONG) for ints and booleans 1/0, d (DOUBLE) for floats, s for the rest. */
    private static function letters(array $args): string
    {
        $letters = '';
        foreach ($args as [$type]) {
            $letters .= match ($type) {
                'int', 'bool' => 'i',
                'float' => 'd',
                default => 's',
            };
        }
        return $letters;
    }

    /** @return list<mixed> */
    private static function values(array $args): array
    {
        return array_map(static fn (array $a): mixed => $a[0] === 'bool' && $a[1] !== null ? (int) $a[1] : $a[1], $args);
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
        if ($this->conn !== null && !$this->persistent) {
            $this->conn->close();
        }
        $this->conn = null;
    }
}
