<?php

declare(strict_types=1);

/**
 * TLS and compression as the endpoint asks for them (protocol/PROTOCOL.md, `open`: "TLS, for both
 * DBMSs"), in libpq's words, and the one mapping of them per DBMS:
 *
 * - PostgreSQL: libpq's own keywords (sslmode, sslrootcert, ssl_min_protocol_version,
 *   ssl_max_protocol_version, sslnegotiation), which pg_connect's conninfo and PDO pgsql's DSN
 *   both hand to libpq (pg_tls_params).
 * - MariaDB: mysqlnd's, under mysqli and pdo_mysql alike (mysqlnd_tls): what it cannot do is
 *   refused here; each driver file sets the rest with its own API (mysqli's ssl_set and client
 *   flags, pdo_mysql's MYSQL_ATTR_* attributes).
 *
 * Read per request from endpoint.json (a page keeps nothing between requests); neither libpq
 * nor mysqlnd keeps a TLS context to reuse: each connection makes its own and reads the CA file,
 * inside the request (and for per-request connections inside each operation's time).
 */

namespace AccessBench\Php;

/** The endpoint's TLS keys and compress. */
final class Tls
{
    public const MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];

    public function __construct(
        public readonly ?string $sslmode,   // null: absent (the driver's own default)
        public readonly ?string $rootcert,  // the CA's PEM file
        public readonly ?string $version,   // TLSv1.2 | TLSv1.3 pinned; null: the highest both ends have
        public readonly bool $direct,       // sslnegotiation=direct (PostgreSQL 17+)
        public readonly bool $compress,     // the MariaDB protocol's compression
    ) {
    }

    public static function of(array $endpoint): self
    {
        $mode = $endpoint['sslmode'] ?? null;
        if ($mode !== null && !in_array($mode, self::MODES, true)) {
            throw new \InvalidArgumentException("endpoint sslmode '{$mode}': expected disable, prefer, require, "
                . 'verify-ca or verify-full');
        }
        $version = $endpoint['tls_version'] ?? null;
        if ($version !== null && $version !== 'TLSv1.2' && $version !== 'TLSv1.3') {
            throw new \InvalidArgumentException("endpoint tls_version '{$version}': expected TLSv1.2 or TLSv1.3");
        }
        return new self($mode, ($endpoint['sslrootcert'] ?? '') ?: null, $version,
                        ($endpoint['sslnegotiation'] ?? null) === 'direct', (bool) ($endpoint['compress'] ?? false));
    }

    /** The mode asks for an encrypted connection. */
    public function required(): bool
    {
        return in_array($this->sslmode, ['require', 'verify-ca', 'verify-full'], true);
    }
}

/**
 * PostgreSQL: the endpoint's TLS as libpq's keywords (keyword => value). sslmode as given (absent:
 * libpq's default, prefer); sslrootcert with verify-ca and verify-full (not with require: libpq
 * would check the chain against it, which require does not ask); a pinned version as both
 * ssl_min_protocol_version and ssl_max_protocol_version; sslnegotiation=direct only where libpq
 * is 17 or later.
 *
 * @param string $who the method, for an unsupported answer
 * @return array<string, string>
 */
function pg_tls_params(array $endpoint, string $who): array
{
    $tls = Tls::of($endpoint);
    if ($tls->compress) {
        throw new Unsupported("{$who}: PostgreSQL's protocol has no compression (compress is MariaDB's)");
    }
    $libpq = defined('PGSQL_LIBPQ_VERSION') ? (string) PGSQL_LIBPQ_VERSION : null;
    if ($tls->direct && $libpq !== null && version_compare($libpq, '17', '<')) {
        throw new Unsupported("{$who}: libpq {$libpq} has no sslnegotiation=direct (libpq 17 and later)");
    }
    $params = [];
    if ($tls->sslmode !== null) {
        $params['sslmode'] = $tls->sslmode;
    }
    if ($tls->sslmode === 'disable') {
        return $params;
    }
    if ($tls->rootcert !== null && $tls->sslmode !== 'require') {
        $params['sslrootcert'] = $tls->rootcert;
    }
    if ($tls->version !== null) {
        $params['ssl_min_protocol_version'] = $tls->version;
        $params['ssl_max_protocol_version'] = $tls->version;
    }
    if ($tls->direct) {
        $params['sslnegotiation'] = 'direct';
    }
    return $params;
}

/**
 * libpq's refusal of a keyword it does not know (a libpq older than a key asks for, where its
 * version could not be told before connecting) as unsupported; null for any other error.
 */
function pg_unknown_keyword(string $message, string $who): ?Unsupported
{
    if (preg_match('/invalid connection option "(\w+)"/', $message, $m)) {
        return new Unsupported("{$who}: this libpq has no connection option {$m[1]}");
    }
    return null;
}

/** libpq's keyword='value', quoted as a conninfo string quotes (backslash and quote escaped). */
function libpq_pair(string $keyword, string $value): string
{
    return $keyword . "='" . addcslashes($value, "'\\") . "'";
}

/**
 * MariaDB over mysqlnd (PHP 8.2): the endpoint's TLS, with what mysqlnd cannot do refused.
 * mysqlnd checks the chain and the host name together (it sets its stream's verify_peer and
 * verify_peer_name from one switch): no verify-ca. It has no TLS version setting (it starts TLS
 * as STREAM_CRYPTO_METHOD_TLS_CLIENT, any version, in a stream context of its own). It asks for
 * TLS only when told (no off switch is needed for disable), and refuses to connect when TLS is
 * asked and the server offers none.
 */
function mysqlnd_tls(array $endpoint, string $who): Tls
{
    $tls = Tls::of($endpoint);
    if ($tls->direct) {
        throw new Unsupported("{$who}: sslnegotiation=direct is PostgreSQL's; MariaDB's protocol has none");
    }
    if ($tls->sslmode === 'allow') {
        throw new Unsupported("{$who}: sslmode=allow is libpq's; mysqlnd has no such mode");
    }
    if ($tls->sslmode === 'verify-ca') {
        throw new Unsupported("{$who}: mysqlnd checks the server's host name whenever it checks the chain (one switch "
            . 'sets its verify_peer and verify_peer_name): no verify-ca');
    }
    if ($tls->version !== null && $tls->required()) {
        throw new Unsupported("{$who}: mysqlnd (PHP " . PHP_VERSION . ') has no TLS version setting: it starts TLS as '
            . 'STREAM_CRYPTO_METHOD_TLS_CLIENT (any version) in a stream context of its own');
    }
    return $tls;
}

/**
 * How each tier method maps the keys (hello's `tls` and `compress` settings, which the tier shows
 * for a page too).
 *
 * @return array<string, string>
 */
function tls_settings(string $method): array
{
    $base = explode('/', $method, 2)[0];
    $libpq = 'libpq\'s own keywords in the conninfo: sslmode as given (absent: libpq\'s default, prefer), '
        . 'sslrootcert=<the CA file> with verify-ca and verify-full (not with require: libpq would check the chain '
        . 'against it), a pinned version as ssl_min_protocol_version and ssl_max_protocol_version both, '
        . 'sslnegotiation=direct only with libpq 17 or later (this one: libpq '
        . (defined('PGSQL_LIBPQ_VERSION') ? PGSQL_LIBPQ_VERSION : '?') . ', else unsupported); '
        . 'libpq makes its SSL context and reads the CA file per connection: nothing is built once to reuse';
    $mysqlnd = 'verify-ca unsupported (mysqlnd checks the host name whenever it checks the chain), a pinned '
        . 'version unsupported (mysqlnd has no TLS version setting), sslnegotiation unsupported (PostgreSQL\'s); '
        . 'disable, prefer or no sslmode: no TLS asked (mysqlnd asks for none unless told); a server offering no '
        . 'TLS when it is asked is a failed connection; mysqlnd makes its TLS context and reads the CA file per '
        . 'connection: nothing is built once to reuse';
    return match ($base) {
        'php-pgsql' => ['tls' => "pg_connect/pg_pconnect's conninfo, {$libpq}"],
        'php-pdo-pgsql' => ['tls' => "the PDO pgsql DSN (handed to libpq as a conninfo), {$libpq}"],
        'php-mysqli' => [
            'tls' => 'mysqli over mysqlnd: require → real_connect flags MYSQLI_CLIENT_SSL | '
                . 'MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT (encrypted, nothing checked); verify-full → '
                . 'ssl_set(null, null, <the CA file>, null, null) and MYSQLI_CLIENT_SSL | '
                . "MYSQLI_CLIENT_SSL_VERIFY_SERVER_CERT (chain and host name); {$mysqlnd}",
            'compress' => 'compress → real_connect flag MYSQLI_CLIENT_COMPRESS (CLIENT_COMPRESS, zlib); otherwise off',
        ],
        'php-pdo-mysql' => [
            'tls' => 'pdo_mysql over mysqlnd: require → PDO::MYSQL_ATTR_SSL_CA (pdo_mysql asks for TLS only when '
                . 'given a certificate option: the sslrootcert file, else the system\'s CA bundle, OpenSSL\'s '
                . 'default_cert_file) with PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT false (encrypted, nothing checked); '
                . 'verify-full → PDO::MYSQL_ATTR_SSL_CA <the CA file> (without sslrootcert: the system\'s bundle) and '
                . "PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT true (chain and host name); {$mysqlnd}",
            'compress' => 'compress → PDO::MYSQL_ATTR_COMPRESS true (CLIENT_COMPRESS, zlib); otherwise off',
        ],
        default => [],
    };
}
