<?php

declare(strict_types=1);

/**
 * The settings a tier method's pages pin that only the pages know, for hello's `settings`:
 * `php settings-cli.php METHOD` prints {"tls": "…", "compress": "…", "read_only": "…"} (compress
 * for the MariaDB methods), how lib/tls.php, lib/session.php and the driver files map the
 * endpoint's TLS keys and read_only.
 */

namespace AccessBench\Php;

require __DIR__ . '/lib/driver.php';
require __DIR__ . '/lib/tls.php';
require __DIR__ . '/lib/session.php';

$method = (string) ($argv[1] ?? '');
echo json_encode(tls_settings($method) + session_settings($method), JSON_UNESCAPED_SLASHES), "\n";
