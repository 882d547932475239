<?php

declare(strict_types=1);

/**
 * php-pdo-mysql: PDO's MySQL driver (mysqlnd underneath), on MariaDB, as a page uses it.
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
 * - prepared: unsupported. A PDOStatement does not outlive the request, so a page prepares
 *   again every request: that is extended.
 * - Parameters: ints PARAM_INT (LONGLONG), booleans PARAM_BOOL (TINY 1/0), bytes PARAM_LOB,
 *   the rest PARAM_STR (VAR_STRING): a float goes as its shortest round-trip text, for the
 *   server to convert (PDO has no float parameter type), decimals, dates and timestamps as text.
 * - Values: mysqlnd's (ints and floats native in both protocols since PHP 8.1, DECIMAL, dates
 *   and times as text), decoded by getColumnMeta()'s native_type, which pdo_mysql answers from
 *   the result's own metadata, without a round trip.
 */

namespace AccessBench\Tier;

use PDO;
use PDOStatement;

require_once __DIR__ . '/pdo.php';

final class PdoMysqlDriver extends PdoDriver
{
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
            $kinds[] = mysql_native_kind((string) ($statement->getColumnMeta($c)['native_type'] ?? ''));
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
}
