<?php

declare(strict_types=1);

/**
 * TechEmpower's tests as PHP pages (docs/tier.md, TechEmpower's tests): db.php, queries.php,
 * fortunes.php and updates.php with ?step=ID each call tfb_page(). The page runs the test's
 * statements with the page driver (a PHP worker method's class, as op.php does): World rows by
 * keys it draws at random per query, or every Fortune row; `&verify=1` reads the keys (and writes
 * the updates' numbers) the shared generators made and answers their checksum instead, as the
 * operation page's verify form does.
 */

namespace AccessBench\Php;

// the page's first moment (its Server-Timing app time): before it loads the rest of its code
\define(__NAMESPACE__ . '\\PAGE_BEGAN', hrtime(true));

require __DIR__ . '/values.php';
require __DIR__ . '/literal.php';
require __DIR__ . '/checksum.php';
require __DIR__ . '/driver.php';
require __DIR__ . '/decode.php';
require __DIR__ . '/step.php';
require __DIR__ . '/tls.php';
require __DIR__ . '/session.php';
require __DIR__ . '/registry.php';
require __DIR__ . '/page.php';

const ADDED_FORTUNE = 'Additional fortune added at request time.'; // TechEmpower's rule: id 0, added per request

/**
 * One request: the fortunes (every row, the added one, sorted by message) or a World row per key
 * (updates: given its number and written back, one statement per row; read again when $readBack).
 *
 * @return list<list<array{0: string, 1: mixed}>>
 */
function tfb_request(Driver $driver, string $id, array $step, string $dbms, array $keys, array $numbers,
                     bool $readBack, bool $verify): array
{
    $mode = (string) $step['mode'];
    $run = static function (string $name, string $sql, array $types, array $values, bool $fetch) use ($driver, $mode, $dbms, $verify) {
        return $driver->run(new Op(
            name: $name, mode: $mode, sql: $sql,
            statement: $mode === 'literal' ? inline($sql, $values, $types, $dbms) : null,
            args: $mode === 'literal' ? [] : $driver->bind(arguments($types, $values)),
            fetch: $fetch, verify: $verify,
        ));
    };
    $sql = (string) $step['sql'];
    if ($step['page'] === 'fortunes') {
        return $run($id, $sql, [], [], true);
    }
    $read = static fn (int $key): array => $run($id, $sql, ['int'], [$key], true)[0];
    $worlds = array_map($read, $keys);
    if ($step['page'] === 'updates') {
        foreach ($worlds as $i => $world) {
            $run("{$id}w", (string) $step['write'], ['int', 'int'], [$numbers[$i], (int) $world[0][1]], false);
            $worlds[$i] = [$world[0], ['int', $numbers[$i]]];
        }
        if ($readBack) {
            $worlds = array_map(static fn (array $w): array => $read((int) $w[0][1]), $worlds);
        }
    }
    return $worlds;
}

/**
 * The fortunes a page shows: the rows read, the added one, sorted by message (the page's own
 * work, after the driver's).
 */
function with_added(array $rows): array
{
    $rows[] = [['int', 0], ['text', ADDED_FORTUNE]];
    usort($rows, static fn (array $a, array $b): int => strcmp((string) $a[1][1], (string) $b[1][1]));
    return $rows;
}

/** Requests 0 … count-1, each on the next `queries` keys (and numbers) the generators made, checksummed. */
function tfb_verify(Driver $driver, string $id, array $step, string $dbms, int $dump): array
{
    $checksum = new Checksum();
    $dumped = [];
    $count = (int) $step['count'];
    $queries = (int) ($step['queries'] ?? 1);
    $keys = array_map(static fn (array $row): int => (int) $row[0], $step['params'] ? $step['args'] : []);
    $numbers = $step['numbers'] ?? [];
    $width = 0;
    for ($i = 0; $i < $count; $i++) {
        $at = $keys ? array_map(static fn (int $k): int => ($i * $queries + $k) % $count, range(0, $queries - 1)) : [];
        $rows = tfb_request($driver, $id, $step, $dbms, array_map(static fn (int $j): int => $keys[$j], $at),
                            array_map(static fn (int $j): int => (int) $numbers[$j], $numbers ? $at : []), true, true);
        $rows = $step['page'] === 'fortunes' ? with_added($rows) : $rows;
        foreach ($rows as $row) {
            $checksum->add($row);
            $width = $width ?: count($row);
            if (count($dumped) < $dump) {
                $dumped[] = array_map(to_protocol(...), $row);
            }
        }
    }
    $answer = ['n' => $count, 'rows' => $checksum->rows, 'values' => $checksum->rows * $width, 'checksum' => $checksum->hex()];
    return $dump > 0 ? $answer + ['dump' => $dumped] : $answer;
}

function fortunes_page(array $rows): string
{
    $cells = '';
    foreach ($rows as [$id, $message]) {
        $cells .= '<tr><td>' . (int) $id[1] . '</td><td>'
            . htmlspecialchars((string) $message[1], ENT_QUOTES | ENT_HTML5, 'UTF-8') . '</td></tr>';
    }
    return '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>'
        . "<tr><th>id</th><th>message</th></tr>{$cells}</table></body></html>";
}

/**
 * The page's Server-Timing value (tier/tfb.py): its time in the driver and in the whole page,
 * in milliseconds to the microsecond.
 */
function server_timing(int $dbNs, int $appNs): string
{
    return sprintf('db;dur=%.3f, app;dur=%.3f', $dbNs / 1e6, $appNs / 1e6);
}

function tfb_page(string $page): void
{
    ini_set('display_errors', '0');                         // a warning must never become part of an answer
    ini_set('html_errors', '0');
    $verify = ($_GET['verify'] ?? '') === '1';
    try {
        [$tierDir, $pageDriver, $endpoint, $password] = tier();
        $id = (string) ($_GET['step'] ?? '');
        if (!preg_match('/^[A-Za-z0-9_-]+$/', $id) || !is_file("{$tierDir}/steps/{$id}.json")) {
            answer(404, 'text/plain', "no {$page} step '{$id}'\n");
            return;
        }
        $step = load_json("{$tierDir}/steps/{$id}.json");
        if (($step['page'] ?? null) !== $page) {
            answer(404, 'text/plain', "no {$page} step '{$id}'\n");
            return;
        }
        $policy = (string) ($step['policy'] ?? 'persistent');
        if ($policy !== 'per-request' && $policy !== 'persistent') {
            throw new Unsupported("{$policy} connections: PHP has no pool in a page's process (a persistent "
                . 'connection is its reuse)');
        }
        $driver = driver_for($pageDriver);
        $inDriver = hrtime(true);  // the request's time in the driver: connecting, its statements, disconnecting
        $driver->connect($endpoint, $password, $policy === 'persistent');
        try {
            if ($verify) {
                $result = tfb_verify($driver, $id, $step, (string) $endpoint['dbms'], (int) ($_GET['dump'] ?? 0));
                answer(200, 'application/json', json_encode($result, JSON_UNESCAPED_SLASHES) . "\n");
                return;
            }
            $lo = (int) ($step['params'][0]['lo'] ?? 0);
            $hi = (int) ($step['params'][0]['hi'] ?? 0);
            $draw = static fn (): int => mt_rand($lo, $hi);
            $keys = $page === 'fortunes' ? [] : array_map(static fn () => $draw(), range(1, (int) ($step['queries'] ?? 1)));
            $numbers = $page === 'updates' ? array_map(static fn () => $draw(), $keys) : [];
            $rows = tfb_request($driver, $id, $step, (string) $endpoint['dbms'], $keys, $numbers, false, false);
        } finally {
            $driver->disconnect();
            $dbNs = hrtime(true) - $inDriver;
        }
        if ($page === 'fortunes') {
            [$type, $body] = ['text/html; charset=utf-8', fortunes_page(with_added($rows))];
        } else {
            $worlds = array_map(static fn (array $r): array => ['id' => (int) $r[0][1], 'randomNumber' => (int) $r[1][1]], $rows);
            [$type, $body] = ['application/json', json_encode($page === 'db' ? $worlds[0] : $worlds)];
        }
        header('Server-Timing: ' . server_timing($dbNs, hrtime(true) - PAGE_BEGAN));
        answer(200, $type, $body);
    } catch (\Throwable $e) {
        failed($e, $verify, "{$page}.php");
    }
}
