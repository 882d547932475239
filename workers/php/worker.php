<?php

declare(strict_types=1);

/**
 * abworker-php: the PHP worker of accessbench (protocol/PROTOCOL.md, version 1), for every suite.
 *
 *   php workers/php/worker.php METHOD[/key=value,...]      (a method of lib/registry.php)
 *
 * JSON Lines on stdin/stdout, stdout for nothing else: PHP's own warnings and errors go to stderr,
 * the worker's log. The host is lib/host.php; the drivers are the web tier's (lib/*.php), the
 * same classes its pages run.
 */

namespace AccessBench\Php;

ini_set('display_errors', 'stderr');   // a warning must never reach stdout, which is the protocol's
ini_set('log_errors', '0');
ini_set('html_errors', '0');
ini_set('serialize_precision', '-1');  // float_text(): shortest round-trip digits
ini_set('memory_limit', '-1');         // a step's arguments are all made before the clock
error_reporting(E_ALL);

require __DIR__ . '/lib/values.php';
require __DIR__ . '/lib/checksum.php';
require __DIR__ . '/lib/driver.php';
require __DIR__ . '/lib/decode.php';
require __DIR__ . '/lib/tls.php';
require __DIR__ . '/lib/session.php';
require __DIR__ . '/lib/u64.php';
require __DIR__ . '/lib/generate.php';
require __DIR__ . '/lib/literal.php';
require __DIR__ . '/lib/load.php';
require __DIR__ . '/lib/loading.php';
require __DIR__ . '/lib/plan.php';
require __DIR__ . '/lib/registry.php';
require __DIR__ . '/lib/host.php';

if ($argc !== 2) {
    fwrite(STDERR, 'usage: php workers/php/worker.php METHOD[/key=value,...]  (' . implode(', ', array_keys(DRIVERS))
        . ")\n");
    exit(2);
}
serve(session_for($argv[1]));
