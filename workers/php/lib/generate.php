<?php

declare(strict_types=1);

/**
 * The value generators (protocol/PROTOCOL.md, Generators; the reference is
 * src/accessbench/protocol/generators.py): each spec owns one splitmix64 stream, value i is the
 * i-th drawn in order. The CLI worker makes every step's parameters with them, before the clock.
 *
 * A generated value is held in one plain PHP form per type: int an int, bool a bool, float a
 * float, decimal its plain text, text a string, date days since 1970-01-01 (int), timestamp µs
 * since 1970-01-01 (int), bytes a binary string; NULL is null (its type is its spec's). From
 * there: the `generate` op's JSON form (json_value), the typed argument a driver binds
 * (argument, as lib/values.php's arguments() makes them for the pages), and a literal
 * (lib/literal.php).
 */

namespace AccessBench\Php;

const TYPES = ['int', 'bool', 'float', 'decimal', 'text', 'date', 'timestamp', 'bytes'];
/** The type a kind's values always have (choice and const: their spec's `type`). */
const KIND_TYPES = [
    'seq' => 'int', 'uniform' => 'int', 'text' => 'text', 'timestamp' => 'timestamp', 'float' => 'float',
    'decimal' => 'decimal', 'date' => 'date', 'bytes' => 'bytes',
];

/** One spec's stream of values. */
final class Generator
{
    public readonly string $type;
    private SplitMix64 $rng;
    private float $null;
    /** @var \Closure(int): mixed row number → value */
    private \Closure $make;
    private int $i = 0;

    public function __construct(mixed $spec)
    {
        if (!is_array($spec) || array_is_list($spec) && $spec !== []) {
            throw new ProtocolError('a generator spec must be an object');
        }
        $this->type = spec_type($spec);
        $this->rng = new SplitMix64(u64_of($spec['seed'] ?? 0));
        $this->null = (float) ($spec['null'] ?? 0.0);
        $kind = (string) ($spec['kind'] ?? '');
        $maker = MAKERS[$kind] ?? throw new ProtocolError("unknown generator kind '{$kind}'");
        $this->make = $maker($spec, $this->rng, $this->type);
    }

    public function next(): mixed
    {
        $i = $this->i++;
        if ($this->null > 0 && $this->rng->unit() < $this->null) {
            return null;                                    // the null draw first; a NULL makes no more draws
        }
        return ($this->make)($i);
    }
}

/** The type of a spec's values: its kind's, or a choice's or const's declared (or first value's) type. */
function spec_type(array $spec): string
{
    $declared = $spec['type'] ?? null;
    if ($declared !== null && !in_array($declared, TYPES, true)) {
        throw new ProtocolError("unknown value type '{$declared}'");
    }
    $own = KIND_TYPES[$spec['kind'] ?? ''] ?? null;
    if ($own !== null) {
        return $own;
    }
    if ($declared !== null) {
        return $declared;
    }
    $first = ($spec['kind'] ?? '') === 'choice' ? ($spec['values'][0] ?? null) : ($spec['value'] ?? null);
    return match (true) {
        is_bool($first) => 'bool',
        is_int($first) => 'int',
        is_float($first) => 'float',
        default => 'text',
    };
}

function int_field(array $spec, string $key, ?int $default = null): int
{
    $v = $spec[$key] ?? $default;
    if (!is_int($v)) {
        throw new ProtocolError("generator field '{$key}' must be an integer");
    }
    return $v;
}

function number_field(array $spec, string $key): float
{
    $v = $spec[$key] ?? null;
    if (!is_int($v) && !is_float($v)) {
        throw new ProtocolError("generator field '{$key}' must be a number");
    }
    return (float) $v;
}

/** Floored division and modulo, as Python's // and %. */
function floor_div(int $a, int $b): int
{
    $q = intdiv($a, $b);
    return ($a % $b !== 0 && ($a < 0) !== ($b < 0)) ? $q - 1 : $q;
}

function floor_mod(int $a, int $b): int
{
    $m = $a % $b;
    return ($m !== 0 && ($m < 0) !== ($b < 0)) ? $m + $b : $m;
}

/** lo + next() mod (hi − lo + 1), the span a positive int. */
function span_of(array $spec, string $kind): array
{
    if (!isset($spec['lo'], $spec['hi'])) {
        throw new ProtocolError("{$kind}: lo and hi are required");
    }
    $lo = int_field($spec, 'lo');
    $span = int_field($spec, 'hi') - $lo + 1;
    if (!is_int($span) || $span <= 0) {
        throw new ProtocolError("{$kind}: hi must be >= lo, and hi − lo below 2^63");
    }
    return [$lo, $span];
}

/** A choice's or const's JSON value as a value of its type (decimals, dates, timestamps, bytes given as text). */
function typed_value(mixed $v, string $type): mixed
{
    $bad = static fn () => new ProtocolError(json_encode($v) . " is not a {$type} value");
    return match ($type) {
        'bool' => is_bool($v) ? $v : throw $bad(),
        'int' => is_int($v) ? $v : throw $bad(),
        'float' => is_int($v) || is_float($v) ? (float) $v : throw $bad(),
        'text' => is_string($v) ? $v : throw $bad(),
        'decimal' => decimal_plain(is_float($v) ? float_text($v) : (string) $v) ?? throw $bad(),
        'date' => is_string($v) ? parse_date($v) : throw $bad(),
        'timestamp' => is_string($v) ? parse_timestamp($v) : throw $bad(),
        'bytes' => is_string($v) && preg_match('/^([0-9a-fA-F]{2})*$/', $v) ? (string) hex2bin($v) : throw $bad(),
    };
}

/** A decimal's text in plain form (Python's format(Decimal(text), "f")), or null when it is none. */
function decimal_plain(string $text): ?string
{
    $plain = preg_match('/^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/', $text, $m);
    if (!$plain || $m[2] . ($m[3] ?? '') === '') {
        return null;
    }
    $fraction = $m[3] ?? '';
    $coef = ltrim($m[2] . $fraction, '0');
    $exp = (int) ($m[4] ?? 0) - strlen($fraction);
    if ($coef === '') {
        $coef = '0';
        $exp = min($exp, 0);
    }
    if ($exp >= 0) {
        $out = $coef . str_repeat('0', $exp);
    } else {
        $k = strlen($coef) + $exp;
        $out = $k > 0 ? substr($coef, 0, $k) . '.' . substr($coef, $k) : '0.' . str_repeat('0', -$k) . $coef;
    }
    return ($m[1] === '-' ? '-' : '') . $out;
}

/** An integer count of 10^-scale as plain decimal text: (-1234, 2) → "-12.34". */
function decimal_text(int $units, int $scale): string
{
    $digits = str_pad((string) abs($units), $scale + 1, '0', STR_PAD_LEFT);
    $body = $scale > 0 ? substr($digits, 0, -$scale) . '.' . substr($digits, -$scale) : $digits;
    return ($units < 0 ? '-' : '') . $body;
}

/** Every generator kind: spec → (row number → value). */
const MAKERS = [
    'seq' => __NAMESPACE__ . '\make_seq',
    'uniform' => __NAMESPACE__ . '\make_uniform',
    'choice' => __NAMESPACE__ . '\make_choice',
    'text' => __NAMESPACE__ . '\make_text',
    'timestamp' => __NAMESPACE__ . '\make_timestamp',
    'const' => __NAMESPACE__ . '\make_const',
    'float' => __NAMESPACE__ . '\make_float',
    'decimal' => __NAMESPACE__ . '\make_decimal',
    'date' => __NAMESPACE__ . '\make_date',
    'bytes' => __NAMESPACE__ . '\make_bytes',
];

function make_seq(array $spec): \Closure
{
    [$start, $step, $div] = [int_field($spec, 'start', 1), int_field($spec, 'step', 1), int_field($spec, 'div', 1)];
    $mod = int_field($spec, 'mod', 0);
    if ($div === 0) {
        throw new ProtocolError('seq: div must not be 0');
    }
    return $mod !== 0
        ? static fn (int $i): int => floor_mod(floor_div($start + $i * $step, $div), $mod)
        : static fn (int $i): int => floor_div($start + $i * $step, $div);
}

function make_uniform(array $spec, SplitMix64 $rng): \Closure
{
    [$lo, $span] = span_of($spec, 'uniform');
    return static fn (): int => $lo + umod($rng->next(), $span);
}

function make_choice(array $spec, SplitMix64 $rng, string $type): \Closure
{
    $values = $spec['values'] ?? null;
    if (!is_array($values) || $values === []) {
        throw new ProtocolError('choice: values must be a non-empty list');
    }
    $values = array_map(static fn ($v) => typed_value($v, $type), array_values($values));
    $n = count($values);
    return static fn () => $values[umod($rng->next(), $n)];
}

function make_text(array $spec, SplitMix64 $rng): \Closure
{
    $pattern = $spec['pattern'] ?? null;
    if (!is_string($pattern)) {
        throw new ProtocolError('text: pattern must be a string');
    }
    $chars = preg_split('//u', $pattern, -1, PREG_SPLIT_NO_EMPTY);
    return static function () use ($chars, $rng): string {
        $out = '';
        foreach ($chars as $ch) {
            $out .= match ($ch) {
                '#' => chr(48 + umod($rng->next(), 10)),
                '?' => chr(97 + umod($rng->next(), 26)),
                default => $ch,
            };
        }
        return $out;
    };
}

function make_timestamp(array $spec, SplitMix64 $rng): \Closure
{
    $start = is_string($spec['start'] ?? null) ? parse_naive_timestamp($spec['start']) : null;
    if ($start === null) {
        throw new ProtocolError('timestamp: start must be an ISO timestamp without time zone, like '
            . '2001-01-01T00:00:00');
    }
    [$step, $jitter] = [int_field($spec, 'step_us', 1_000_000), int_field($spec, 'jitter_us', 0)];
    if ($jitter < 0) {
        throw new ProtocolError('timestamp: jitter_us must be >= 0');
    }
    return $jitter > 0
        ? static fn (int $i): int => $start + $i * $step + umod($rng->next(), $jitter + 1)
        : static fn (int $i): int => $start + $i * $step;
}

/** An ISO timestamp without a zone ('T' or ' ', up to six fraction digits) → µs, or null. */
function parse_naive_timestamp(string $text): ?int
{
    if (!preg_match('/^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d{1,6})?)?)?$/', $text)) {
        return null;
    }
    $full = strlen($text) === 10 ? "{$text} 00:00:00" : (strlen($text) === 16 ? "{$text}:00" : $text);
    return parse_timestamp($full);
}

function make_const(array $spec, SplitMix64 $rng, string $type): \Closure
{
    if (!array_key_exists('value', $spec)) {
        throw new ProtocolError('const: value is missing');
    }
    $value = typed_value($spec['value'], $type);
    return static fn () => $value;
}

/** lo + unit()·(hi − lo), with digits d rounded as floor(v·P + 0.5) / P, P = 10^d by repeated ·10.0. */
function make_float(array $spec, SplitMix64 $rng): \Closure
{
    $lo = number_field($spec, 'lo');
    $width = number_field($spec, 'hi') - $lo;
    if (!isset($spec['digits'])) {
        return static fn (): float => $lo + $rng->unit() * $width;
    }
    $digits = int_field($spec, 'digits');
    if ($digits < 0 || $digits > 15) {
        throw new ProtocolError('float: digits must be 0…15');
    }
    $p = 1.0;
    for ($k = 0; $k < $digits; $k++) {
        $p *= 10.0;
    }
    return static fn (): float => floor(($lo + $rng->unit() * $width) * $p + 0.5) / $p;
}

function make_decimal(array $spec, SplitMix64 $rng): \Closure
{
    [$lo, $span] = span_of($spec, 'decimal');
    $scale = int_field($spec, 'scale', 0);
    if ($scale < 0) {
        throw new ProtocolError('decimal: scale must be >= 0');
    }
    return static fn (): string => decimal_text($lo + umod($rng->next(), $span), $scale);
}

function make_date(array $spec, SplitMix64 $rng): \Closure
{
    $start = is_string($spec['start'] ?? null) && preg_match('/^\d{4}-\d\d-\d\d$/', $spec['start'])
        ? parse_date($spec['start']) : throw new ProtocolError('date: start must be a date YYYY-MM-DD');
    [$step, $jitter] = [int_field($spec, 'step_days', 1), int_field($spec, 'jitter_days', 0)];
    if ($jitter < 0) {
        throw new ProtocolError('date: jitter_days must be >= 0');
    }
    return $jitter > 0
        ? static fn (int $i): int => $start + $i * $step + umod($rng->next(), $jitter + 1)
        : static fn (int $i): int => $start + $i * $step;
}

function make_bytes(array $spec, SplitMix64 $rng): \Closure
{
    $length = int_field($spec, 'length', -1);
    if ($length < 0) {
        throw new ProtocolError('bytes: length must be >= 0');
    }
    return static function () use ($length, $rng): string {
        $out = '';
        for ($k = 0; $k < $length; $k++) {
            $out .= chr($rng->next() & 0xFF);
        }
        return $out;
    };
}

/**
 * `count` rows, one value from each spec per row, and the columns' types.
 *
 * @return array{0: list<list<mixed>>, 1: list<string>}
 */
function generate_rows(array $specs, int $count): array
{
    $generators = array_map(static fn ($spec) => new Generator($spec), array_values($specs));
    $rows = [];
    for ($i = 0; $i < $count; $i++) {
        $row = [];
        foreach ($generators as $g) {
            $row[] = $g->next();
        }
        $rows[] = $row;
    }
    return [$rows, array_map(static fn (Generator $g) => $g->type, $generators)];
}

/** A generated value as the `generate` op answers it. */
function json_value(string $type, mixed $v): mixed
{
    return $v === null ? null : match ($type) {
        'float' => bin2hex(pack('E', $v)),
        'date' => date_text($v),
        'timestamp' => timestamp_text($v, 'T', true),
        'bytes' => bin2hex($v),
        default => $v,
    };
}

/**
 * A generated value as the typed argument the drivers bind (lib/values.php's form): dates
 * 'YYYY-MM-DD', timestamps 'YYYY-MM-DD HH:MM:SS[.ffffff]' (the fraction only when there is one,
 * as SQLite keeps them), the rest as they are.
 *
 * @return array{0: string, 1: mixed}
 */
function argument(string $type, mixed $v): array
{
    return [$type, $v === null ? null : match ($type) {
        'date' => date_text($v),
        'timestamp' => timestamp_text($v, ' ', false),
        default => $v,
    }];
}
