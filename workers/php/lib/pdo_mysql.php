<?php

declare(strict_types=1);

/**
 * php-pdo-mysql: PDO's MySQL driver (mysqlnd underneath), on MariaDB, as a page and the CLI
 * worker use it.
 *
 * - Connection: unix_socket when the endpoint has a socket, else host and port; charset
 *   utf8mb4 in the DSN (set in the handshake, no SET NAMES); MYSQL_ATTR_FOUND_ROWS
 *   (CLIENT_FOUND_ROWS: an UPDATE counts the rows it matched, as every method does).
 *   per-request: a new PDO, released at the end of the request; persistent:
 *   PDO::ATTR_PERSISTENT (pdo_mysql pings a reused connection, a round trip every request, as
 *   every persistent PDO page pays).
 * - literal: query() with ATTR_EMULATE_PREPARES on: COM_QUERY, the text protocol. With
 *   emulation off, query() would COM_STMT_PREPARE, EXECUTE and CLOSE the text.
 * - extended: emulation off, prepare()->execute(): COM_STMT_PREPARE and COM_STMT_EXECUTE (binary
 *   protocol) every request, COM_STMT_CLOSE when the statement is freed.
 * - prepared: a page has none. A PDOStatement does not outlive the request, so a page prepares
 *   again every request: that is extended. The CLI worker keeps one PDOStatement per step:
 *   COM_STMT_PREPARE in the first operation, COM_STMT_EXECUTE after, COM_STMT_CLOSE when freed.
 * - batch: beginTransaction(), the prepared insert per row, commit().
 * - Parameters: ints PARAM_INT (LONGLONG), booleans PARAM_BOOL (TINY 1/0), bytes PARAM_LOB,
 *   the rest PARAM_STR (VAR_STRING): a float goes as its shortest round-trip text, for the
 *   server to convert (PDO has no float parameter type), decimals, dates and timestamps as text.
 * - Values: mysqlnd's (ints and floats native in both protocols since PHP 8.1, DECIMAL, dates
 *   and times as text), decoded by getColumnMeta()'s native_type and len, which pdo_mysql answers
 *   from the result's own metadata, without a round trip (lib/decode.php mysql_native_kind: the
 *   TEXT and BLOB columns told apart by their length).
 */

namespace AccessBench\Php;

use PDO;
use PDOStatement;

require_once __DIR__ . '/pdo.php';

final class PdoMysqlDriver extends PdoDriver
{
    private ?int $pid = null;                               // the serving thread, asked at describe()

    protected function method(): string
    {
        return 'php-pdo-mysql';
    }

    protected function dsn(array $endpoint): string
    {
        $where = empty($endpoint['socket'])
            ? 'host=' . ($endpoint['host'] ?? '') . (isset($endpoint['port']) ? ';port=' . $endpoint['port'] : '')
            : 'unix_socket=' . $endpoint['socket'];
        return "mysql:{$where};dbname=" . ($endpoint['database'] ?? '') . ';charset=utf8mb4';
    }

    /**
     * CLIENT_FOUND_ROWS; TLS as lib/tls.php allows mysqlnd (mysqlnd_tls): pdo_mysql asks for TLS
     * only when given a certificate option, so without sslrootcert (require) MYSQL_ATTR_SSL_CA is
     * the system's CA bundle (OpenSSL's default_cert_file), as hosted MySQL services tell PHP
     * users to configure it, with the certificate unchecked under require; compression by
     * MYSQL_ATTR_COMPRESS; read_only by MYSQL_ATTR_INIT_COMMAND (lib/session.php), which a reused
     * persistent connection keeps (pdo_mysql only pings it).
     */
    protected function attributes(array $endpoint): array
    {
        $tls = mysqlnd_tls($endpoint, 'php-pdo-mysql');
        $attributes = [PDO::MYSQL_ATTR_FOUND_ROWS => true];
        if ($tls->required()) {
            $attributes[PDO::MYSQL_ATTR_SSL_CA] = $tls->rootcert ?? openssl_get_cert_locations()['default_cert_file'];
            $attributes[PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT] = $tls->sslmode === 'verify-full';
        }
        if ($tls->compress) {
            $attributes[PDO::MYSQL_ATTR_COMPRESS] = true;
        }
        $statement = mysql_session_statement($endpoint);
        if ($statement !== null) {
            $attributes[PDO::MYSQL_ATTR_INIT_COMMAND] = $statement;
        }
        return $attributes;
    }

    /** @return list<list<array{0: string, 1: mixed}>> */
    protected function rows(PDOStatement $statement, Op $op): array
    {
        $kinds = [];
        for ($c = 0, $n = $statement->columnCount(); $c < $n; $c++) {
            $meta = $statement->getColumnMeta($c);
            $kinds[] = mysql_native_kind((string) ($meta['native_type'] ?? ''), (int) ($meta['len'] ?? 0));
        }
        $rows = [];
        while (($row = $statement->fetch(PDO::FETCH_NUM)) !== false) {
            $typed = [];
            foreach ($row as $c => $v) {
                $typed[] = mysql_value($kinds[$c], $v);
            }
            $rows[] = $typed;
        }
        return $rows;
    }

    // ---- the CLI worker's (WorkerDriver) ------------------------------------------------------

    public function name(): string
    {
        return 'pdo_mysql (PHP extension)';
    }

    public function version(): string
    {
        return phpversion('pdo_mysql') . ' (' . $this->client() . ')';
    }

    /** The client library's version: mysqlnd's, as mysqli reports it (a PDO tells it only once connected). */
    private function client(): string
    {
        return function_exists('mysqli_get_client_info') ? mysqli_get_client_info() : 'mysqlnd';
    }

    public function dbms(): array
    {
        return ['mariadb'];
    }

    public function settings(): array
    {
        return [
            'connection' => 'new PDO("mysql:…;charset=utf8mb4") with ERRMODE_EXCEPTION, STRINGIFY_FETCHES off, '
                . 'MYSQL_ATTR_FOUND_ROWS (CLIENT_FOUND_ROWS), autocommit on, kept for the session (a page\'s '
                . 'persistent connection is ATTR_PERSISTENT; a CLI process keeps its own PDO, which is that reuse); '
                . 'per-request: a new PDO, released, inside each operation',
            'literal' => 'query() with ATTR_EMULATE_PREPARES on: COM_QUERY, the text protocol, values inlined',
            'extended' => 'prepare()->execute() with emulation off, the statement freed after: COM_STMT_PREPARE, '
                . 'COM_STMT_EXECUTE (binary protocol), COM_STMT_CLOSE every operation',
            'prepared' => 'one PDOStatement per step, emulation off: COM_STMT_PREPARE in the first operation, then '
                . 'COM_STMT_EXECUTE; COM_STMT_CLOSE after the step',
            'parameters' => 'ints PARAM_INT (LONGLONG), booleans PARAM_BOOL (TINY 1/0), bytes PARAM_LOB, the rest '
                . 'PARAM_STR (VAR_STRING): floats as shortest round-trip text for the server to convert (PDO has no '
                . 'float parameter type), decimals, dates and timestamps as text',
            'results' => 'mysqlnd\'s values (ints and floats native in both protocols; DECIMAL, dates and times as '
                . 'text) decoded by getColumnMeta()\'s native_type and len, from the result\'s metadata (no round '
                . 'trip); BOOLEAN is TINYINT(1): an int; pdo_mysql gives no character set and names every TEXT and '
                . 'BLOB column BLOB: TINYTEXT, TEXT and MEDIUMTEXT are told by their utf8mb4 length (4 × their '
                . 'BLOB\'s) and read as text, LONGTEXT and LONGBLOB (both 2^32 − 1) as bytes; CHAR, VARCHAR, BINARY '
                . 'and VARBINARY as text',
            'batch' => $this->batch_style(),
        ];
    }

    public function describe(): array
    {
        $this->pid = (int) $this->one('SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()');
        return ['server_pid' => $this->pid, 'server_version' => $this->server_version()];
    }

    public function server_pid(): ?int
    {
        return $this->pid;
    }
}
