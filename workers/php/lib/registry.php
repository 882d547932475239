<?php

declare(strict_types=1);

/**
 * The one registry of PHP drivers: method name → driver file and class. The CLI worker's
 * `hello` methods, its usage line and its `unknown method` answer come from it, and a web page
 * (op.php) finds its driver here by endpoint.json's `page_driver`: a page and the CLI worker run
 * the same class.
 */

namespace AccessBench\Php;

const DRIVERS = [
    'php-pgsql' => ['pgsql.php', PgsqlDriver::class],
    'php-pdo-pgsql' => ['pdo_pgsql.php', PdoPgsqlDriver::class],
    'php-mysqli' => ['mysqli.php', MysqliDriver::class],
    'php-pdo-mysql' => ['pdo_mysql.php', PdoMysqlDriver::class],
    'php-pdo-sqlite' => ['pdo_sqlite.php', PdoSqliteDriver::class],
    'php-sqlite3' => ['sqlite3.php', Sqlite3Driver::class],
];

/**
 * The driver of a method (its base name, before any `/settings`): a page's (`cli` false) or the
 * CLI worker's.
 */
function driver_for(string $method, bool $cli = false): WorkerDriver
{
    $base = explode('/', $method, 2)[0];
    if (!isset(DRIVERS[$base])) {
        throw new Unsupported("no PHP driver for method {$method} (the PHP methods: "
            . implode(', ', array_keys(DRIVERS)) . ')');
    }
    [$file, $class] = DRIVERS[$base];
    require_once __DIR__ . '/' . $file;
    return new $class(cli: $cli);
}
