<?php

declare(strict_types=1);

/**
 * The verification checksum (protocol/PROTOCOL.md, Checksum; the reference is
 * src/accessbench/protocol/checksum.py): FNV-1a 64 over each row's canonical encoding, summed
 * over rows mod 2^64 so that row order does not matter.
 *
 * PHP's integers are signed 64-bit and overflow to float, so the sum is kept in two 32-bit
 * halves with the carry moved by hand; the hash itself is hash('fnv1a64'), whose binary output
 * is the 64-bit value big-endian.
 */

namespace AccessBench\Php;

/** A typed value [type, value] (lib/values.php) → its canonical encoding. */
function encode(array $value): string
{
    [$type, $v] = $value;
    if ($v === null) {
        return 'N';
    }
    return match ($type) {
        'bool' => $v ? "B\x01" : "B\x00",
        'int' => 'I' . pack('P', $v),                      // i64 little-endian (pack keeps the bits)
        'float' => 'F' . pack('e', $v),                    // binary64 little-endian
        'decimal' => 'D' . pack('V', strlen($v)) . $v,
        'text' => 'S' . pack('V', strlen($v)) . $v,        // strlen counts bytes: UTF-8 as read
        'bytes' => 'X' . pack('V', strlen($v)) . $v,
        'timestamp' => 'T' . pack('P', $v),
        'date' => 'd' . pack('V', $v),                     // i32: pack('V') keeps the low 32 bits
        'time' => 't' . pack('P', $v),
        'null' => 'N',
        default => throw new \UnexpectedValueException("no canonical encoding for a {$type}"),
    };
}

final class Checksum
{
    private int $hi = 0;
    private int $lo = 0;
    public int $rows = 0;

    /** @param list<array{0: string, 1: mixed}> $row */
    public function add(array $row): void
    {
        $bytes = '';
        foreach ($row as $value) {
            $bytes .= encode($value);
        }
        ['hi' => $hi, 'lo' => $lo] = unpack('Nhi/Nlo', hash('fnv1a64', $bytes, true));
        $lo += $this->lo;                                   // < 2^33: no overflow
        $this->lo = $lo & 0xFFFFFFFF;
        $this->hi = ($this->hi + $hi + ($lo >> 32)) & 0xFFFFFFFF;
        $this->rows++;
    }

    public function hex(): string
    {
        return sprintf('%08x%08x', $this->hi, $this->lo);
    }
}

/**
 * The protocol's `checksum` op input form of one value ({"type": T, "value": V}: float as hex
 * bits, timestamp/time as µs integers, date as days, bytes as hex, decimal as text) → a typed
 * value as the drivers produce it.
 */
function from_protocol(array $item): array
{
    $type = (string) $item['type'];
    $v = $item['value'] ?? null;
    if ($type === 'null' || $v === null) {
        return ['null', null];
    }
    return [$type, match ($type) {
        'bool' => (bool) $v,
        'int', 'timestamp', 'date', 'time' => (int) $v,
        'float' => float_from_hex((string) $v),
        'bytes' => (string) hex2bin((string) $v),
        'decimal', 'text' => (string) $v,
        default => throw new \UnexpectedValueException("unknown value type {$type}"),
    }];
}

/** A typed value → the protocol's form of it (a verification pass's `dump`): from_protocol's inverse. */
function to_protocol(array $value): array
{
    [$type, $v] = $value;
    if ($type === 'null' || $v === null) {
        return ['type' => 'null'];
    }
    return ['type' => $type, 'value' => match ($type) {
        'float' => bin2hex(pack('E', $v)),                 // binary64 big-endian, as hex
        'bytes' => bin2hex($v),
        default => $v,
    }];
}
