<?php

declare(strict_types=1);

/**
 * The settings a tier method's pages pin that only the pages know, for hello's `settings`:
 * `php settings-cli.php METHOD` prints {"tls": "…", "compress": "…"} (compress for the MariaDB
 * methods), how lib/tls.php and the driver files map the endpoint's TLS keys.
 */

namespace AccessBench\Tier;

require __DIR__ . '/lib/driver.php';
require __DIR__ . '/lib/tls.php';

echo json_encode(tls_settings((string) ($argv[1] ?? '')), JSON_UNESCAPED_SLASHES), "\n";
