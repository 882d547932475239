<?php

declare(strict_types=1);

/**
 * What every page of the tier shares (docs/tier.md): the tier directory's endpoint and the
 * database password from the app server's environment, an answer, and a failure as the pages
 * answer one.
 */

namespace AccessBench\Php;

/**
 * @return array{0: string, 1: string, 2: array, 3: ?string} the tier directory, the page driver (a PHP
 *         worker method: php-pgsql …), the endpoint and the password (never in a file)
 */
function tier(): array
{
    $tierDir = getenv('ACCESSBENCH_TIER_DIR');
    if ($tierDir === false || $tierDir === '') {
        throw new \RuntimeException('ACCESSBENCH_TIER_DIR is not set');
    }
    $password = getenv('ACCESSBENCH_DB_PASSWORD');
    $config = load_json("{$tierDir}/endpoint.json");
    return [$tierDir, (string) $config['page_driver'], (array) $config['endpoint'],
            $password === false || $password === '' ? null : $password];
}

function answer(int $status, string $type, string $body): void
{
    http_response_code($status);
    header("Content-Type: {$type}");
    echo $body;
}

/** A 500: the error as JSON for a verify (or connect) form, else its message alone. */
function failed(\Throwable $e, bool $json, string $page): void
{
    [$kind, $sqlstate] = match (true) {
        $e instanceof DbError => ['db', $e->sqlstate],
        $e instanceof Unsupported => ['unsupported', null],
        default => ['internal', null],
    };
    if ($kind === 'internal') {
        error_log("accessbench {$page}: " . $e);             // the app server's log keeps the trace
    }
    $message = first_line($e->getMessage());
    if ($json) {
        $error = ['kind' => $kind, 'message' => $message, 'sqlstate' => $sqlstate];
        answer(500, 'application/json', json_encode(['error' => $error], JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE) . "\n");
    } else {
        answer(500, 'text/plain', $message . "\n");
    }
}
