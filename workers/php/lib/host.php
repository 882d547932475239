<?php

declare(strict_types=1);

/**
 * The CLI worker's host (protocol/PROTOCOL.md; the Python reference is
 * src/accessbench/pyworker/host.py): parse a message → dispatch on its op (and a step's kind) →
 * the loop, owned here → the answer. A step is parsed and checked whole first (lib/plan.php:
 * every argument made before the clock), then run here: the untimed verification pass, the plain
 * timed loop, or the loop under load (lib/load.php). The driver (lib/driver.php WorkerDriver)
 * supplies operations only.
 *
 * The clock is hrtime(true): CLOCK_MONOTONIC in integer ns, read once before the loop and once
 * after each operation, so the latencies add up to elapsed_ns exactly. CPU is getrusage() around
 * the loop (the whole process: PHP runs no other thread).
 */

namespace AccessBench\Php;

final class Session
{
    private ?array $endpoint = null;
    private ?string $password = null;
    private ?int $pid = null;
    /** @var array<string, int> columns per statement, as the last rows read had them */
    private array $widths = [];
    private int $steps = 0;

    /**
     * @param WorkerDriver|null $driver null when the method cannot be used: every message is then
     *        answered `unsupported` with $why (bye still ends)
     */
    public function __construct(
        private readonly string $method,
        private readonly ?WorkerDriver $driver,
        private readonly ?string $why,
    ) {
    }

    public function handle(mixed $msg): array
    {
        if (!is_array($msg) || array_is_list($msg) && $msg !== []) {
            throw new ProtocolError('not a JSON object');
        }
        $op = $msg['op'] ?? null;
        if ($this->driver === null && $op !== 'bye') {
            throw new Unsupported((string) $this->why);
        }
        return ['ok' => true] + match ($op) {
            'hello' => $this->hello(),
            'open' => $this->open($msg),
            'close', 'bye' => $this->close(),
            'step' => $this->step($msg),
            'generate' => generate_op($msg),
            'checksum' => checksum_op($msg),
            'histogram' => histogram_op($msg),
            'schedule' => schedule_op($msg),
            default => throw new ProtocolError('unknown op ' . json_encode($op)),
        };
    }

    private function hello(): array
    {
        $d = $this->driver;
        $base = explode('/', $this->method, 2)[0];
        return [
            'protocol' => 1,
            'name' => $this->method,
            'language' => 'php',
            'runtime' => 'PHP ' . PHP_VERSION . ' (' . PHP_SAPI . ', ' . (PHP_ZTS ? 'ZTS' : 'NTS') . ')',
            'driver' => $d->name(),
            'driver_version' => $d->version(),
            'methods' => array_keys(DRIVERS),
            'settings' => $d->settings() + tls_settings($base) + session_settings($base) + HOST_SETTINGS
                + ['runtime' => runtime_setting(), 'load' => BY_HAND],
            'capabilities' => [
                'dbms' => $d->dbms(),
                'kinds' => KINDS,
                'modes' => $d->modes(),
                'batch' => $d->batch_style(),
                'concurrency' => 'processes',
                'load' => ['policies' => POLICIES, 'latencies' => true],
            ],
        ];
    }

    private function open(array $msg): array
    {
        $endpoint = $msg['endpoint'] ?? null;
        if (!is_array($endpoint)) {
            throw new ProtocolError('open needs an endpoint object');
        }
        if (!in_array($endpoint['dbms'] ?? null, $this->driver->dbms(), true)) {
            throw new Unsupported("{$this->method} does not reach dbms '" . ($endpoint['dbms'] ?? '') . "'");
        }
        $this->close();
        $password = $endpoint['password'] ?? null;
        unset($endpoint['password']);
        $start = hrtime(true);
        $this->driver->connect($endpoint, $password, false);
        $connect = hrtime(true) - $start;
        [$this->endpoint, $this->password] = [$endpoint, $password];
        $info = $this->driver->describe();
        $this->pid = $info['server_pid'] ?? null;
        return ['connect_ns' => $connect] + $info;
    }

    private function close(): array
    {
        if ($this->endpoint !== null) {
            $this->endpoint = null;
            $this->driver->disconnect();
        }
        return [];
    }

    private function step(array $msg): array
    {
        if ($this->endpoint === null) {
            throw new ProtocolError('step before open');
        }
        $step = parse_step($msg, $this->driver, (string) $this->endpoint['dbms'], 'abw' . ++$this->steps);
        return $this->run($step);
    }

    /**
     * The step's verification pass, plain timed loop or loop under load. After a db error the
     * transaction it left is rolled back; what the step prepared is released, or, after a
     * per-request step, the session's own connection made again (untimed).
     */
    private function run(Step $step): array
    {
        $d = $this->driver;
        $op = $this->operation($step);
        if ($step->policy === 'per-request') {
            $d->disconnect();                               // the session's connection sits the step out
            $op = $this->per_request($op);
        }
        try {
            return match (true) {
                $step->verify => $this->verify($op, $step),
                $step->loaded => $this->loaded($op, $step),
                default => $this->timed($op, $step),
            };
        } catch (DbError $e) {
            $d->recover();
            throw $e;
        } finally {
            if ($step->policy === 'per-request') {
                $d->connect($this->endpoint, $this->password, false);
                $this->pid = $d->describe()['server_pid'] ?? null;
            } else {
                $d->end_step();
            }
        }
    }

    /** One operation of the step's kind (commit_every's transactions around them): argument → rows read or changed. */
    private function operation(Step $step): \Closure
    {
        $d = $this->driver;
        $op = match ($step->kind) {
            'connect' => $this->connect_once(...),
            'batch' => $d->batch(...),
            'load' => $step->loader->load(...),
            default => $d->run(...),
        };
        if ($step->every === 0) {
            return $op;
        }
        [$every, $total, $done] = [$step->every, count($step->args), 0];
        return static function (mixed $arg) use ($d, $op, $every, $total, &$done): array|int {
            if ($done % $every === 0) {
                $d->begin();
            }
            $result = $op($arg);
            if (++$done % $every === 0 || $done === $total) {
                $d->commit();
            }
            return $result;
        };
    }

    /** A connect step's operation: a new connection to the endpoint, closed. */
    private function connect_once(): int
    {
        $fresh = driver_for($this->method, cli: true);
        $fresh->connect($this->endpoint, $this->password, false);
        $fresh->disconnect();
        return 0;
    }

    /** Connect, run the operation, disconnect — all inside the operation's time. */
    private function per_request(\Closure $op): \Closure
    {
        [$d, $endpoint, $password] = [$this->driver, $this->endpoint, $this->password];
        return static function (mixed $arg) use ($d, $op, $endpoint, $password): array|int {
            $d->connect($endpoint, $password, false);
            try {
                return $op($arg);
            } finally {
                $d->disconnect();
            }
        };
    }

    /**
     * The untimed verification pass: every value read checksummed, the first `dump` rows kept as
     * typed values; the first operation (its rows checksummed) is the cold start.
     */
    private function verify(\Closure $op, Step $step): array
    {
        $checksum = new Checksum();
        [$dumped, $changed, $values, $first] = [[], 0, 0, 0];
        $start = hrtime(true);
        foreach ($step->args as $i => $arg) {
            $result = $op($arg);
            if (!$step->reads) {
                $changed += $result;
            }
            foreach ($step->reads ? $result : [] as $row) {
                $checksum->add($row);
                $values += count($row);
                if (count($dumped) < $step->dump) {
                    $dumped[] = array_map(to_protocol(...), $row);
                }
            }
            $this->remember($step, $result);
            if ($i === 0) {
                $first = hrtime(true) - $start;
            }
        }
        $answer = ['n' => count($step->args), 'rows' => $step->reads ? $checksum->rows : $changed, 'values' => $values,
                   'checksum' => $checksum->hex(), 'first_op_ns' => $first];
        if ($step->loader !== null) {
            $answer['statements'] = $step->loader->sent;  // what the pass's loads sent, by the code that sent them
        }
        return $step->dump > 0 && $step->reads ? $answer + ['dump' => $dumped] : $answer;
    }

    /** The plain timed loop: one clock read per operation, each latency from the end of the one before. */
    private function timed(\Closure $op, Step $step): array
    {
        [$lat, $rows, $result] = [[], 0, null];
        $before = getrusage();
        $start = $prev = hrtime(true);
        if ($step->reads) {
            foreach ($step->args as $arg) {
                $rows += count($result = $op($arg));
                $now = hrtime(true);
                $lat[] = $now - $prev;
                $prev = $now;
            }
        } else {
            foreach ($step->args as $arg) {
                $rows += $op($arg);
                $now = hrtime(true);
                $lat[] = $now - $prev;
                $prev = $now;
            }
        }
        $after = getrusage();
        $this->remember($step, $result);
        if ($step->latencyFile !== null) {
            write_latencies($step->latencyFile, $lat);
        }
        return $this->answer(['first_op_ns' => $lat[0] ?? 0], count($lat), $prev - $start, $rows, $step, $before,
                             $after, true);
    }

    /** A loaded step's one client (concurrency "processes"), started at the barrier. */
    private function loaded(\Closure $op, Step $step): array
    {
        $load = $step->load;
        barrier($load->startAt);
        $before = getrusage();
        $r = run_client($op, $step->args, $step->reads, $load, hrtime(true));
        $after = getrusage();
        if ($load->latencyFile !== null) {
            write_latencies($load->latencyFile, $r->raw);
        }
        $answer = ['first_op_ns' => $r->first, 'histogram' => $r->histogram->wire(), 'late' => $r->late,
                   'skipped' => $r->skipped, 'clients' => 1,
                   'per_client' => [['n' => $r->n, 'elapsed_ns' => $r->elapsed]]];
        return $this->answer($answer, $r->n, $r->elapsed, $r->rows, $step, $before, $after,
                             $step->policy === 'persistent');
    }

    /** What every timed answer carries: counts, the process's CPU around the loop, values read, the backend. */
    private function answer(array $answer, int $n, int $elapsed, int $rows, Step $step, array $before, array $after,
                            bool $ownBackend): array
    {
        $answer += ['n' => $n, 'elapsed_ns' => $elapsed, 'rows' => $rows,
                    'user_ns' => cpu_ns($after, 'ru_utime') - cpu_ns($before, 'ru_utime'),
                    'sys_ns' => cpu_ns($after, 'ru_stime') - cpu_ns($before, 'ru_stime')];
        if ($step->reads && isset($this->widths[$step->sql])) {
            $answer['values'] = $rows * $this->widths[$step->sql];
        }
        if ($ownBackend && $this->pid) {
            $answer['server_pids'] = [$this->pid];
        }
        return $answer;
    }

    /** The columns of a statement, from rows it read (for `values` of the timed answers). */
    private function remember(Step $step, mixed $result): void
    {
        if ($step->reads && $step->loader === null && is_array($result) && $result !== []) {
            $this->widths[$step->sql] = count($result[0]);
        }
    }
}

/** What the host pins, for hello's settings beside the driver's. */
const HOST_SETTINGS = [
    'timing' => 'hrtime(true) (CLOCK_MONOTONIC, integer ns) once before the loop and once after each operation; '
        . 'arguments generated, bound in the driver\'s form and literal statements rendered before the clock',
    'cpu' => 'getrusage() around the loop: the whole process (PHP runs one thread), microsecond resolution',
    'under load' => 'one client per worker process (the runner starts one process per client), waiting for the '
        . 'wall-clock barrier start_at_unix_ns (microtime, usleep then a spin of the last 100 µs); per operation '
        . 'one hrtime read and the latency recorded into the log-linear histogram (a PHP array of bucket counts); '
        . 'by duration a closed loop runs while its previous operation ended before start + duration, cycling '
        . 'through the generated arguments; open loop: splitmix64 arrivals (32-bit halves) at the rate, uniform '
        . 'from phase_ns, latency from the intended start, ahead of it usleep then a spin of the last 100 µs, no '
        . 'arrival started at or after the duration (idle until it has passed; the ones due but not started when '
        . 'behind count as skipped); commit_every only with persistent connections and by count',
    'persistent' => 'the session\'s own connection for the whole trial (in a CLI process a connection kept is the '
        . 'persistent one; pg_pconnect, ATTR_PERSISTENT and the p: host are for pages)',
];

/** php-cli's own settings that change how fast PHP code runs, as this process has them (php.ini's). */
function runtime_setting(): string
{
    $opcache = (bool) ini_get('opcache.enable_cli') && function_exists('opcache_get_status');
    $jit = $opcache && (int) ini_get('opcache.jit_buffer_size') > 0
        && !in_array(ini_get('opcache.jit'), ['', '0', 'off', 'disable'], true);
    return 'php-cli, one operation at a time; OPcache for the CLI ' . ($opcache ? 'on' : 'off')
        . ' (opcache.enable_cli), its JIT ' . ($jit ? 'on (opcache.jit=' . ini_get('opcache.jit') . ')' : 'off')
        . ', as php.ini has them';
}

/** A getrusage() time in ns. */
function cpu_ns(array $usage, string $which): int
{
    return $usage["{$which}.tv_sec"] * 1_000_000_000 + $usage["{$which}.tv_usec"] * 1000;
}

/** Latencies as u64 little-endian, nothing else. */
function write_latencies(string $path, array $latencies): void
{
    $file = fopen($path, 'wb') ?: throw new \RuntimeException("cannot write {$path}");
    foreach (array_chunk($latencies, 8192) as $chunk) {
        fwrite($file, pack('P*', ...$chunk));
    }
    fclose($file);
}

// ---- conformance: the worker's own generators, checksum, histogram and schedule -------------------

function generate_op(array $msg): array
{
    $generator = new Generator($msg['spec'] ?? null);
    $values = [];
    for ($i = 0, $n = int_of($msg, 'count', 0); $i < $n; $i++) {
        $values[] = json_value($generator->type, $generator->next());
    }
    return ['values' => $values];
}

function checksum_op(array $msg): array
{
    if (!is_array($msg['rows'] ?? null)) {
        throw new ProtocolError('checksum needs rows');
    }
    $checksum = new Checksum();
    foreach ($msg['rows'] as $row) {
        $checksum->add(array_map(from_protocol(...), (array) $row));
    }
    return ['checksum' => $checksum->hex(), 'rows' => $checksum->rows];
}

function histogram_op(array $msg): array
{
    $histogram = new Histogram();
    foreach ((array) ($msg['values'] ?? throw new ProtocolError('histogram needs values')) as $v) {
        $histogram->record(is_int($v) ? $v : throw new ProtocolError('histogram values are integers'));
    }
    return ['histogram' => $histogram->wire()];
}

function schedule_op(array $msg): array
{
    $rate = $msg['rate'] ?? null;
    $schedule = new Schedule(is_int($rate) || is_float($rate) ? (float) $rate : 0.0,
                             (string) ($msg['arrival'] ?? 'poisson'), u64_of_hex((string) ($msg['seed'] ?? '')));
    $offsets = [];
    for ($i = 0, $n = int_of($msg, 'count'); $i < $n; $i++) {
        $offsets[] = $schedule->next();
    }
    return ['offsets' => $offsets];
}

// ---- the message loop ----------------------------------------------------------------------------

/** A failure as an answer: kind, the message's first line, the SQLSTATE; the trace to stderr when internal. */
function error_answer(\Throwable $e): array
{
    [$kind, $sqlstate] = match (true) {
        $e instanceof DbError => ['db', $e->sqlstate],
        $e instanceof Unsupported => ['unsupported', null],
        $e instanceof ProtocolError, $e instanceof \JsonException => ['protocol', null],
        default => ['internal', null],
    };
    fwrite(STDERR, "abworker-php: {$kind}: " . ($kind === 'internal' ? (string) $e : $e->getMessage()) . "\n");
    $message = first_line($e->getMessage());
    $error = ['kind' => $kind, 'message' => $message === '' ? $kind : $message];
    return ['ok' => false, 'error' => $sqlstate ? $error + ['sqlstate' => $sqlstate] : $error];
}

/** The session of the method named on the command line, or one that answers every message with why not. */
function session_for(string $method): Session
{
    try {
        [$base, $settings] = array_pad(explode('/', $method, 2), 2, '');
        if (str_contains($base, '@')) {
            throw new Unsupported("{$base}: the PHP worker runs the installed extensions only (no other versions)");
        }
        $driver = driver_for($base, cli: true);
        foreach (array_filter(preg_split('~[/,]~', $settings)) as $setting) {
            [$key, $value] = array_pad(explode('=', $setting, 2), 2, '');
            $driver->configure($key, $value);
        }
        return new Session($method, $driver, null);
    } catch (Unsupported $e) {
        fwrite(STDERR, "abworker-php: {$e->getMessage()}\n");
        return new Session($method, null, $e->getMessage());
    }
}

/** Answer each line of stdin, one line each on stdout, until bye (or the end of input). */
function serve(Session $session): void
{
    $flags = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE;
    while (($line = fgets(STDIN)) !== false) {
        if (trim($line) === '') {
            continue;
        }
        $op = null;
        try {
            $msg = json_decode($line, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
            $op = is_array($msg) ? ($msg['op'] ?? null) : null;
            $answer = $session->handle($msg);
        } catch (\Throwable $e) {
            $answer = error_answer($e);
        }
        fwrite(STDOUT, json_encode($answer, $flags | JSON_THROW_ON_ERROR) . "\n");
        if ($op === 'bye') {
            return;
        }
    }
    try {
        $session->handle(['op' => 'bye']);              // closes what is open (and answers even without a driver)
    } catch (\Throwable $e) {
        fwrite(STDERR, "abworker-php: close at end of input: {$e}\n");
    }
}
