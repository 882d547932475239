<?php

declare(strict_types=1);

// TechEmpower's queries test (docs/tier.md, TechEmpower's tests): lib/tfb.php.
require __DIR__ . '/lib/tfb.php';
\AccessBench\Php\tfb_page('queries');
