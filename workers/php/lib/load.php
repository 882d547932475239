<?php

declare(strict_types=1);

/**
 * Steps under load (protocol/PROTOCOL.md, "Steps under load"), as the Python reference does them
 * (src/accessbench/pyworker/load.py, src/accessbench/protocol/{histogram,schedule}.py), for the
 * one client of a worker process (concurrency "processes": the runner starts one process per
 * client): by duration or by count, closed loop or open loop at a rate with latency from each
 * operation's intended start, every latency into the log-linear histogram, the start at a
 * wall-clock barrier. An open loop by duration lasts its duration: no arrival starts at or after
 * it, a client whose arrivals are over idles (untimed) until it has passed, and one still behind
 * schedule then stops, counting the arrivals due before it that it had not started as skipped.
 *
 * The clock is hrtime(true) (CLOCK_MONOTONIC, integer ns); one read per operation.
 */

namespace AccessBench\Php;

/** The latency histogram: log-linear over integer ns, values of 2^40 or more in `overflow`. */
final class Histogram
{
    private const EXACT = 256;
    private const SUB = 128;
    private const LIMIT = 1 << 40;

    /** @var array<int, int> bucket → count */
    private array $counts = [];
    private int $overflow = 0;
    private int $n = 0;
    private int $min = 0;
    private int $max = 0;
    private int $sum = 0;

    /** v < 256 is bucket v; otherwise, L the bit length of v, (L − 8)·128 + (v >> (L − 8)). */
    public static function bucket(int $v): int
    {
        if ($v < self::EXACT) {
            return $v;
        }
        $shift = bit_length($v) - 8;
        return $shift * self::SUB + ($v >> $shift);
    }

    public function record(int $v): void
    {
        if ($v >= self::LIMIT) {
            $this->overflow++;
        } else {
            $b = self::bucket($v);
            $this->counts[$b] = ($this->counts[$b] ?? 0) + 1;
        }
        if ($this->n === 0 || $v < $this->min) {
            $this->min = $v;
        }
        $this->max = max($this->max, $v);
        $this->sum += $v;
        $this->n++;
    }

    /** The wire form: sparse [bucket, count] pairs in bucket order. */
    public function wire(): array
    {
        ksort($this->counts);
        $buckets = [];
        foreach ($this->counts as $b => $c) {
            $buckets[] = [$b, $c];
        }
        return ['buckets' => $buckets, 'overflow' => $this->overflow, 'min' => $this->min, 'max' => $this->max,
                'sum' => $this->sum];
    }
}

/** The bit length of a positive int, by halving the range (no count-leading-zeros in PHP). */
function bit_length(int $v): int
{
    $n = 0;
    foreach ([32, 16, 8, 4, 2, 1] as $step) {
        if ($v >> $step) {
            $v >>= $step;
            $n += $step;
        }
    }
    return $n + $v;
}

/**
 * Intended start offsets in ns from the trial's start: the first at 0, then `at += gap` in a
 * double, each offset truncated. Poisson gaps −ln(1 − u)·10^9 / rate (pgbench -R), u from
 * splitmix64's top 53 bits; uniform gaps 10^9 / rate.
 */
final class Schedule
{
    private float $meanGap;
    private bool $poisson;
    private SplitMix64 $rng;
    private float $at = 0.0;

    public function __construct(float $rate, string $arrival, int $seed)
    {
        if (!($rate > 0)) {
            throw new ProtocolError('rate must be positive');
        }
        if ($arrival !== 'poisson' && $arrival !== 'uniform') {
            throw new ProtocolError("unknown arrival '{$arrival}'");
        }
        $this->meanGap = 1e9 / $rate;
        $this->poisson = $arrival === 'poisson';
        $this->rng = new SplitMix64($seed);
    }

    public function next(): int
    {
        $offset = $this->at;
        $this->at += $this->poisson ? -log(1.0 - $this->rng->unit()) * $this->meanGap : $this->meanGap;
        return (int) $offset;
    }
}

/** What a loaded step asks for beyond the plain loop (falsy fields count as absent, as in load.py). */
final class Load
{
    public function __construct(
        public readonly ?int $durationNs,
        public readonly ?float $rate,
        public readonly string $arrival,
        public readonly int $seed,
        public readonly int $phaseNs,          // uniform: this worker's first intended start
        public readonly int $lateNs,
        public readonly ?int $skipNs,
        public readonly ?int $startAt,         // the barrier, unix ns
        public readonly ?string $latencyFile,  // also every latency, raw (run --raw-latencies)
    ) {
    }

    public static function of(array $msg): self
    {
        $number = static function (string $key) use ($msg): ?float {
            $v = $msg[$key] ?? null;
            if ($v === null || $v === false || $v === 0 || $v === 0.0) {
                return null;
            }
            return is_int($v) || is_float($v) ? (float) $v : throw new ProtocolError("field '{$key}' must be a number");
        };
        $phase = $number('phase_ns') ?? 0.0;
        if ($phase < 0) {
            throw new ProtocolError("field 'phase_ns' must not be negative");
        }
        $rate = $number('rate');
        $load = new self(
            durationNs: ($d = $number('duration_ms')) === null ? null : (int) ($d * 1e6),
            rate: $rate,
            arrival: (string) ($msg['arrival'] ?? 'poisson'),
            seed: u64_of($msg['schedule_seed'] ?? 0),
            phaseNs: (int) $phase,
            lateNs: (int) ($msg['late_ns'] ?? 1_000_000),
            skipNs: ($s = $number('skip_ns')) === null ? null : (int) $s,
            startAt: ($t = $msg['start_at_unix_ns'] ?? null) ? (int) $t : null,
            latencyFile: ($f = $msg['latency_file'] ?? null) ? (string) $f : null,
        );
        if ($rate !== null) {
            new Schedule($rate, $load->arrival, 0);         // a bad rate or arrival: answered before anything runs
        }
        return $load;
    }
}

/** One client's trial: what it did. */
final class LoadResult
{
    public int $n = 0;
    public int $rows = 0;
    public int $elapsed = 0;
    public int $first = 0;
    public int $late = 0;
    public int $skipped = 0;
    public Histogram $histogram;
    /** @var list<int> every latency, when the step asked for them raw */
    public array $raw = [];

    public function __construct()
    {
        $this->histogram = new Histogram();
    }
}

const SPIN_NS = 100_000;  // sleep until this close to an instant, then spin: a sleep overshoots

/** The wall clock in ns (microtime's µs). */
function wall_ns(): int
{
    [$fraction, $seconds] = explode(' ', microtime());
    return (int) $seconds * 1_000_000_000 + (int) round((float) $fraction * 1e9);
}

/** The barrier: return when the wall clock reaches $unixNs (untimed). */
function barrier(?int $unixNs): void
{
    while ($unixNs !== null && ($left = $unixNs - wall_ns()) > 0) {
        if ($left > SPIN_NS) {
            usleep(intdiv($left - SPIN_NS, 1000));
        }
    }
}

/** Wait until hrtime reaches $deadline: usleep to within SPIN_NS, then spin. */
function pause_until(int $deadline): void
{
    $left = $deadline - hrtime(true);
    if ($left > SPIN_NS) {
        usleep(intdiv($left - SPIN_NS, 1000));
    }
    while (hrtime(true) < $deadline) {
    }
}

/**
 * The one client's loop: $run over $args (cycling through them by duration), closed loop
 * (latency from the end of the previous operation) or open loop on its arrival stream (latency
 * from the intended start; uniform arrivals from phase_ns). Times are ns since $start.
 *
 * @param \Closure(mixed): (array|int) $run one operation
 */
function run_client(\Closure $run, array $args, bool $reads, Load $load, int $start): LoadResult
{
    $out = new LoadResult();
    $count = count($args);
    if ($count === 0) {
        return $out;
    }
    $stop = $load->durationNs;
    $schedule = $load->rate === null ? null : new Schedule($load->rate, $load->arrival, $load->seed);
    $phase = $schedule !== null && $load->arrival === 'uniform' ? $load->phaseNs : 0;
    $raw = $load->latencyFile !== null;
    $prev = 0;
    $i = 0;
    while ($stop === null ? $i < $count : $prev < $stop) {
        if ($schedule !== null) {
            $intended = $phase + $schedule->next();
            if ($stop !== null && $intended >= $stop) {
                break;                                      // the arrivals are over; the trial is not
            }
            $now = hrtime(true) - $start;
            if ($now < $intended) {
                pause_until($start + $intended);
            } elseif ($load->skipNs !== null && $now - $intended > $load->skipNs) {
                $out->skipped++;
                $i++;
                continue;
            } elseif ($now - $intended > $load->lateNs) {
                $out->late++;
            }
            $result = $run($args[$i % $count]);
            $now = hrtime(true) - $start;
            $latency = $now - $intended;
        } else {
            $result = $run($args[$i % $count]);
            $now = hrtime(true) - $start;
            $latency = $now - $prev;
        }
        $out->rows += $reads ? count($result) : $result;
        $out->histogram->record($latency);
        if ($raw) {
            $out->raw[] = $latency;
        }
        if ($i === $out->skipped) {
            $out->first = $latency;
        }
        $prev = $now;
        $i++;
    }
    if ($schedule !== null && $stop !== null) {
        [$prev, $i] = end_open_loop($out, $schedule, $phase, $start, $stop, $prev, $i);
    }
    $out->n = $i - $out->skipped;
    $out->elapsed = $prev;
    return $out;
}

/**
 * An open loop's end by duration, after its last operation: [the trial's end, operations
 * counted]. Ahead: idle (untimed) until the duration has passed. Behind: the arrivals due
 * before the end that never started are skipped.
 *
 * @return array{0: int, 1: int}
 */
function end_open_loop(LoadResult $out, Schedule $schedule, int $phase, int $start, int $stop, int $prev, int $i): array
{
    if ($prev < $stop) {
        while (($left = $start + $stop - hrtime(true)) > 0) {
            usleep(intdiv($left, 1000) + 1);
        }
        return [$stop, $i];
    }
    while ($phase + $schedule->next() < $stop) {
        $out->skipped++;
        $i++;
    }
    return [$prev, $i];
}
