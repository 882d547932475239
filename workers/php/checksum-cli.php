<?php

declare(strict_types=1);

/**
 * The protocol's `checksum` op for the PHP pages' encoder: reads {"rows": [[{"type", "value"},
 * …], …]} on stdin, prints {"checksum": "16 hex digits", "rows": N}. Compared with
 * protocol/vectors/checksum.json by the conformance test.
 */

namespace AccessBench\Php;

require __DIR__ . '/lib/values.php';
require __DIR__ . '/lib/checksum.php';

$input = json_decode((string) stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
$checksum = new Checksum();
foreach ($input['rows'] as $row) {
    $checksum->add(array_map(from_protocol(...), $row));
}
echo json_encode(['checksum' => $checksum->hex(), 'rows' => $checksum->rows]), "\n";
