<?php

declare(strict_types=1);

/**
 * A step message → a Step (protocol/PROTOCOL.md, "step"). Every field is read and checked here,
 * before anything runs: every protocol error of a step, and every `unsupported` the message and
 * the driver's declarations decide (a kind, a mode, a connection policy, several clients in a
 * one-client process). The parameters are generated here too, bound by the driver (Driver::bind)
 * or rendered into literal statements, so that the clock covers none of it. The host
 * (lib/host.php) reads the Step and never the message.
 */

namespace AccessBench\Php;

const KINDS = ['connect', 'scan', 'exec', 'batch', 'load'];
const EXEC_MODES = ['literal', 'extended', 'prepared'];
const POLICIES = ['persistent', 'per-request'];  // PHP has no pool of its own: no pooled

final class Step
{
    /**
     * @param list<mixed> $args one argument per operation: an Op (scan, exec), a batch group
     *        (Driver::batch_group), the parents' arguments as the driver binds them (load), null (connect)
     */
    public function __construct(
        public readonly string $kind,
        public readonly ?string $sql,
        public readonly array $args,
        public readonly bool $reads,        // operations return rows (else the rows they changed)
        public readonly int $every,         // commit_every (0: none)
        public readonly bool $verify,
        public readonly int $dump,
        public readonly string $policy,
        public readonly bool $loaded,
        public readonly ?Load $load,        // a loaded step's fields (null when verifying)
        public readonly ?string $latencyFile,
        public readonly ?Loader $loader = null,  // a load step's strategy over the driver
    ) {
    }
}

function int_of(array $msg, string $key, ?int $default = null): int
{
    $v = $msg[$key] ?? $default;
    if (!is_int($v)) {
        throw new ProtocolError($v === null ? "missing field '{$key}'" : "field '{$key}' must be an integer");
    }
    return $v;
}

function truthy(mixed $v): bool
{
    return !($v === null || $v === false || $v === 0 || $v === 0.0 || $v === '' || $v === []);
}

/** The step a message asks for, of a session open on `dbms`; `name` names its prepared statement. */
function parse_step(array $msg, WorkerDriver $driver, string $dbms, string $name): Step
{
    $kind = $msg['kind'] ?? null;
    if (!in_array($kind, KINDS, true)) {
        throw $kind === 'page'
            ? new Unsupported("the PHP worker has no {$kind} steps (it has " . implode(', ', KINDS) . ')')
            : new ProtocolError('unknown step kind ' . json_encode($kind));
    }
    $n = int_of($msg, 'iterations');
    if ($n < 0) {
        throw new ProtocolError('a step needs iterations >= 0');
    }
    $sql = $kind === 'connect' ? null : ($msg['sql'] ?? null);
    if ($kind !== 'connect' && !is_string($sql)) {
        throw new ProtocolError("a {$kind} step needs sql");
    }
    $specs = $msg['params'] ?? [];
    if (!is_array($specs) || ($specs !== [] && !array_is_list($specs))) {
        throw new ProtocolError('params must be a list');
    }
    if ($sql !== null && count($specs) !== ($markers = count_markers($sql))) {
        throw new ProtocolError("{$markers} markers but " . count($specs) . ' params');
    }
    $every = $kind === 'exec' ? int_of($msg, 'commit_every', 0) : 0;
    [$args, $reads] = match ($kind) {
        'connect' => [array_fill(0, $n, null), false],
        'scan' => [scan_args($msg, $sql, $n), true],
        'exec' => [exec_args($msg, $driver, $dbms, $name, $sql, $specs, $n), truthy($msg['fetch'] ?? false)],
        'batch' => [batch_args($msg, $driver, $name, $sql, $specs, $n), false],
        'load' => [load_args($driver, $specs, $n), true],
    };
    $loader = $kind === 'load' ? loader_of($msg, $driver, $sql) : null;
    return policy_of($msg, $driver, $kind, $sql, $args, $reads, $every, $loader);
}

/** A load step's strategy over the driver, from its `load` and the parents' `shape`. */
function loader_of(array $msg, WorkerDriver $driver, string $sql): Loader
{
    if (!is_array($msg['load'] ?? null) || !is_array($msg['shape'] ?? null)) {
        throw new ProtocolError('a load step needs load: {strategy, levels, joined} and the parents\' shape');
    }
    return new Loader($driver, $sql, $msg['shape'], $msg['load'], truthy($msg['verify'] ?? false));
}

/** A load step's parents' arguments, bound as the driver's extended mode binds them. */
function load_args(WorkerDriver $driver, array $specs, int $n): array
{
    [$rows, $types] = generate_rows($specs, $n);
    return array_map(static fn (array $row) => $driver->bind(typed_row($row, $types)), $rows);
}

/** A scan: the statement as it is, every row read. */
function scan_args(array $msg, string $sql, int $n): array
{
    if (($msg['mode'] ?? null) === 'record') {
        throw new Unsupported('the PHP worker has no record-level access (mode record)');
    }
    return array_fill(0, $n, new Op(name: '', mode: 'literal', sql: $sql, statement: $sql, args: [], fetch: true,
                                    verify: truthy($msg['verify'] ?? false)));
}

/** An exec step's operations: literal statements rendered for the DBMS, or arguments bound by the driver. */
function exec_args(array $msg, WorkerDriver $driver, string $dbms, string $name, string $sql, array $specs,
                   int $n): array
{
    $mode = $msg['mode'] ?? null;
    if ($mode === 'record') {
        throw new Unsupported('the PHP worker has no record-level access (mode record)');
    }
    if (!in_array($mode, EXEC_MODES, true)) {
        throw new ProtocolError('unknown mode ' . json_encode($mode));
    }
    if (!in_array($mode, $driver->modes(), true)) {
        throw new Unsupported("this method has no {$mode} mode: " . ($driver->settings()[$mode] ?? ''));
    }
    [$rows, $types] = generate_rows($specs, $n);
    $fetch = truthy($msg['fetch'] ?? false);
    $verify = truthy($msg['verify'] ?? false);
    return array_map(static fn (array $row): Op => new Op(
        name: $name,
        mode: $mode,
        sql: $sql,
        statement: $mode === 'literal' ? inline($sql, $row, $types, $dbms) : null,
        args: $mode === 'literal' ? [] : $driver->bind(typed_row($row, $types)),
        fetch: $fetch,
        verify: $verify,
    ), $rows);
}

/** A batch step's groups of `batch` rows, each in the driver's form. */
function batch_args(array $msg, WorkerDriver $driver, string $name, string $sql, array $specs, int $n): array
{
    $size = int_of($msg, 'batch');
    if ($size < 1) {
        throw new ProtocolError('a batch step needs batch >= 1');
    }
    [$rows, $types] = generate_rows($specs, $n);
    $template = new Op(name: $name, mode: 'prepared', sql: $sql, statement: null, args: [], fetch: false,
                       verify: false);
    $shape = is_array($msg['shape'] ?? null) ? $msg['shape'] : null;
    return array_map(static fn (array $group) => $driver->batch_group(
        $template, $shape, array_map(static fn (array $row) => typed_row($row, $types), $group)),
        array_chunk($rows, $size));
}

/** @return list<array{0: string, 1: mixed}> a generated row as typed arguments */
function typed_row(array $row, array $types): array
{
    return array_map(argument(...), $types, $row);
}

/** Verification or timed; plain loop or under load; the connection policy and the load's fields. */
function policy_of(array $msg, WorkerDriver $driver, string $kind, ?string $sql, array $args, bool $reads,
                   int $every, ?Loader $loader): Step
{
    $policy = $msg['policy'] ?? 'persistent';
    if (!in_array($policy, POLICIES, true)) {
        throw new Unsupported("no '{$policy}' connection policy: PHP has no pool of its own (the PHP worker has "
            . implode(', ', POLICIES) . ')');
    }
    $clients = int_of($msg, 'clients', 1);
    if ($clients < 1) {
        throw new ProtocolError('clients must be >= 1');
    }
    $loaded = $policy !== 'persistent' || $clients !== 1
        || truthy($msg['duration_ms'] ?? null) || truthy($msg['rate'] ?? null) || truthy($msg['histogram'] ?? null);
    if ($loaded && $every > 0 && ($policy !== 'persistent' || truthy($msg['duration_ms'] ?? null))) {
        throw new Unsupported('commit_every under load is built for persistent connections by count only (a '
            . 'transaction cannot span connections, and by duration its last operation is not known in advance)');
    }
    $verify = truthy($msg['verify'] ?? false);
    $dump = $verify ? int_of($msg, 'dump', 0) : 0;
    if ($loaded && !$verify && $clients > 1) {
        throw new Unsupported('the PHP worker drives one client per process (PHP runs one operation at a time): '
            . 'the runner starts one worker per client');
    }
    return new Step($kind, $sql, $args, $reads, $every, $verify, max(0, $dump), $policy, $loaded,
                    $loaded && !$verify ? Load::of($msg) : null, $msg['latency_file'] ?? null, $loader);
}
