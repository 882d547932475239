<?php

declare(strict_types=1);

/**
 * The operation page (docs/tier.md): /op.php?step=ID runs one operation of an exec step with an
 * argument row drawn at random (the page's processes share no counter) and answers `rows=N`;
 * /op.php?step=ID&verify=1 runs every row in order and answers the checksum of every value
 * read. The driver comes from endpoint.json's page_driver (the PHP worker's method whose class the
 * page runs: lib/registry.php); the connection policy from the step:
 * per-request (connect, run, disconnect, all inside the request) or persistent (the process
 * keeps its connection across requests). PHP has no pool of its own: pooled is unsupported.
 * /op.php?connect=1 makes one new connection to the endpoint and closes it, answering
 * {"ok": true} or the error as the verify form does: what a worker's `open` does, so that an
 * endpoint the driver cannot reach as asked (TLS it lacks, another authority's certificate)
 * fails there rather than at the first step.
 */

namespace AccessBench\Php;

require __DIR__ . '/lib/values.php';
require __DIR__ . '/lib/checksum.php';
require __DIR__ . '/lib/driver.php';
require __DIR__ . '/lib/decode.php';
require __DIR__ . '/lib/step.php';
require __DIR__ . '/lib/tls.php';
require __DIR__ . '/lib/session.php';
require __DIR__ . '/lib/registry.php';
require __DIR__ . '/lib/page.php';

ini_set('display_errors', '0');       // a warning must never become part of an answer
ini_set('html_errors', '0');          // error_get_last(): the driver's message as plain text
ini_set('serialize_precision', '-1'); // float_text(): shortest round-trip digits

/**
 * One operation under the policy: per-request connects and disconnects around it.
 *
 * @return list<list<array{0: string, 1: mixed}>>|int
 */
function run_one(Driver $driver, array $endpoint, ?string $password, bool $persistent, Op $op): array|int
{
    $driver->connect($endpoint, $password, $persistent);
    try {
        return $driver->run($op);
    } finally {
        $driver->disconnect();
    }
}

/** The verification pass: operations 0 … count-1 in order, every value read checksummed. */
function verify(Driver $driver, array $endpoint, ?string $password, bool $persistent, string $id, array $step,
                int $dump = 0): array
{
    $checksum = new Checksum();
    $dumped = [];                                           // the first $dump rows read, to explain a mismatch
    $count = (int) $step['count'];
    $changed = 0;
    $width = 0;
    for ($i = 0; $i < $count; $i++) {
        $result = run_one($driver, $endpoint, $password, $persistent, operation($driver, $id, $step, $i, true));
        if (is_int($result)) {
            $changed += $result;
            continue;
        }
        foreach ($result as $row) {
            $checksum->add($row);
            $width = $width ?: count($row);
            if (count($dumped) < $dump) {
                $dumped[] = array_map(to_protocol(...), $row);
            }
        }
    }
    $reads = !empty($step['fetch']) || $step['kind'] === 'scan';
    $rows = $reads ? $checksum->rows : $changed;
    $answer = ['n' => $count, 'rows' => $rows, 'values' => $rows * $width, 'checksum' => $checksum->hex()];
    return $dump > 0 && $reads ? $answer + ['dump' => $dumped] : $answer;
}

function main(): void
{
    $verify = ($_GET['verify'] ?? '') === '1';
    $connect = ($_GET['connect'] ?? '') === '1';
    try {
        [$tierDir, $pageDriver, $endpoint, $password] = tier();
        if ($connect) {
            $driver = driver_for($pageDriver);
            $driver->connect($endpoint, $password, false);
            $driver->disconnect();
            answer(200, 'application/json', json_encode(['ok' => true]) . "\n");
            return;
        }
        $id = (string) ($_GET['step'] ?? '');
        $step = load_step($tierDir, $id);
        $policy = (string) ($step['policy'] ?? 'persistent');
        if ($policy !== 'per-request' && $policy !== 'persistent') {
            throw new Unsupported("{$policy} connections: PHP has no pool in a page's process (a persistent "
                . 'connection is its reuse)');
        }
        $persistent = $policy === 'persistent';
        $driver = driver_for($pageDriver);
        if ($verify) {
            $result = verify($driver, $endpoint, $password, $persistent, $id, $step, (int) ($_GET['dump'] ?? 0));
            answer(200, 'application/json', json_encode($result, JSON_UNESCAPED_SLASHES) . "\n");
            return;
        }
        $op = operation($driver, $id, $step, mt_rand(0, max(0, (int) $step['count'] - 1)), false);
        $result = run_one($driver, $endpoint, $password, $persistent, $op);
        answer(200, 'text/plain', 'rows=' . (is_int($result) ? $result : count($result)) . "\n");
    } catch (\Throwable $e) {
        failed($e, $verify || $connect, 'op.php');
    }
}

main();
