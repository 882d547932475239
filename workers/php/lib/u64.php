<?php

declare(strict_types=1);

/**
 * Unsigned 64-bit arithmetic for the protocol's PRNG (protocol/PROTOCOL.md, Generators; the
 * reference is src/accessbench/protocol/prng.py).
 *
 * PHP's integers are signed 64-bit and an addition or a multiplication that overflows becomes a
 * float, so splitmix64 keeps its state in two 32-bit halves (each a PHP int below 2^32) and
 * multiplies them in 16-bit pieces, as lib/checksum.php sums its hashes. Shifts, masks and XOR
 * never overflow; a u64 handed out is the same 64 bits as a signed PHP int.
 */

namespace AccessBench\Php;

const MASK32 = 0xFFFFFFFF;

/** (a · b) mod 2^32, for a and b below 2^32: a's 16-bit halves keep every product below 2^48. */
function mul32(int $a, int $b): int
{
    return (($a & 0xFFFF) * $b + (((($a >> 16) * $b) & 0xFFFF) << 16)) & MASK32;
}

/**
 * (ah·2^32 + al) · (bh·2^32 + bl) mod 2^64, as [high half, low half].
 *
 * @return array{0: int, 1: int}
 */
function mul64(int $ah, int $al, int $bh, int $bl): array
{
    $p0 = ($al & 0xFFFF) * $bl;                             // < 2^48
    $p1 = ($al >> 16) * $bl;                                // < 2^48: al·bl = p0 + p1·2^16
    $low = $p0 + (($p1 & 0xFFFF) << 16);                    // < 2^49
    $high = ($p1 >> 16) + ($low >> 32) + mul32($ah, $bl) + mul32($al, $bh);
    return [$high & MASK32, $low & MASK32];
}

/** A u64 held as a signed PHP int (its bits) → remainder by m (0 < m < 2^63), unsigned. */
function umod(int $x, int $m): int
{
    if ($x >= 0) {
        return $x % $m;
    }
    // x as unsigned is 2h + b, h = x >>> 1 (below 2^63): (2·(h mod m) + b) mod m without overflow
    $r = (($x >> 1) & PHP_INT_MAX) % $m;
    $twice = $r >= $m - $r ? $r - ($m - $r) : $r + $r;
    $bit = $x & 1;
    return $twice >= $m - $bit ? $twice - ($m - $bit) : $twice + $bit;
}

/**
 * A u64 as the protocol sends it — a JSON integer (a string of digits when it exceeds
 * PHP_INT_MAX: json_decode's JSON_BIGINT_AS_STRING) — as its bits in a PHP int.
 */
function u64_of(int|string|float|null $value): int
{
    if ($value === null) {
        return 0;
    }
    if (is_int($value)) {
        return $value;
    }
    if (is_float($value) || !preg_match('/^\d{1,20}$/', $value)) {
        throw new ProtocolError("not a u64: {$value}");
    }
    [$hi, $lo] = [0, 0];
    foreach (str_split($value) as $digit) {                 // (hi, lo) · 10 + digit, in halves
        [$hi, $lo] = mul64($hi, $lo, 0, 10);
        $lo += (int) $digit;
        $hi = ($hi + ($lo >> 32)) & MASK32;
        $lo &= MASK32;
    }
    return ($hi << 32) | $lo;
}

/** The 16 hex digits of a u64 (the `schedule` op's seed) → its bits. */
function u64_of_hex(string $hex): int
{
    if (!preg_match('/^[0-9a-fA-F]{1,16}$/', $hex)) {
        throw new ProtocolError("not 1 to 16 hex digits: {$hex}");
    }
    $hex = str_pad($hex, 16, '0', STR_PAD_LEFT);
    return (hexdec(substr($hex, 0, 8)) << 32) | hexdec(substr($hex, 8));
}

/** splitmix64, the one PRNG of every worker. */
final class SplitMix64
{
    private int $hi;
    private int $lo;

    public function __construct(int $seed)
    {
        $this->hi = ($seed >> 32) & MASK32;
        $this->lo = $seed & MASK32;
    }

    /** @return array{0: int, 1: int} the next value's [high half, low half] */
    public function halves(): array
    {
        $lo = $this->lo + 0x7F4A7C15;                       // state += 0x9E3779B97F4A7C15
        $this->hi = ($this->hi + 0x9E3779B9 + ($lo >> 32)) & MASK32;
        $this->lo = $lo & MASK32;
        [$h, $l] = [$this->hi, $this->lo];
        $l = ($l ^ (($l >> 30) | ($h << 2))) & MASK32;      // z ^= z >> 30
        $h ^= $h >> 30;
        [$h, $l] = mul64($h, $l, 0xBF58476D, 0x1CE4E5B9);
        $l = ($l ^ (($l >> 27) | ($h << 5))) & MASK32;      // z ^= z >> 27
        $h ^= $h >> 27;
        [$h, $l] = mul64($h, $l, 0x94D049BB, 0x133111EB);
        $l = ($l ^ (($l >> 31) | ($h << 1))) & MASK32;      // z ^ (z >> 31)
        $h ^= $h >> 31;
        return [$h, $l];
    }

    /** The next u64, as its bits in a PHP int. */
    public function next(): int
    {
        [$h, $l] = $this->halves();
        return ($h << 32) | $l;
    }

    /** (next() >> 11) · 2^-53: a double in [0, 1) from the top 53 bits (h·2^21 < 2^53: exact). */
    public function unit(): float
    {
        [$h, $l] = $this->halves();
        return ($h * 2097152 + ($l >> 11)) * (1.0 / 9007199254740992);
    }
}
