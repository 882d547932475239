<?php

declare(strict_types=1);

/**
 * Loading associations (a `load` step, protocol/PROTOCOL.md "Loading associations"; the reference
 * is src/accessbench/pyworker/association.py): a parent table's rows and, level by level, the
 * rows of each child table that reference the level above (users → posts → comments), as a
 * programmer writes each strategy by hand over any of the worker's drivers:
 *
 * - lazy: the parents' statement, then the level's `one` statement for each row above (the N+1
 *   pattern: one statement per parent and per child);
 * - selectin: the parents' statement, then per level one `in` statement over the distinct values
 *   read above (none once a level reads no rows);
 * - joined: the `joined` statement once, each row split by the levels' column counts, each entity
 *   kept once by its key (a level whose key is NULL in a row has no entity there).
 *
 * Every statement runs as the driver's extended mode runs one (bound, parsed every time); the
 * values read above are bound again as the typed arguments they are. One operation is one whole
 * load and returns every entity read, parents first, as typed rows of their tables' columns.
 */

namespace AccessBench\Php;

const BY_HAND = 'hand-written, as a programmer writes each strategy (lib/loading.php, over any driver of the '
    . 'worker): lazy = the parents\' statement, then the message\'s `one` statement per row of the level above (a '
    . 'statement per parent and per child); selectin = the parents, then one `in` statement per level over the '
    . 'distinct values read above; joined = the one LEFT JOIN statement, each row split by the levels\' column '
    . 'counts and each entity kept once by its key; every statement bound as the extended mode binds it; the '
    . 'statements counted by this code as it sends them (verification pass)';

final class Loader
{
    /** The statements sent since the counter was last read (the verification pass asks for it). */
    public int $sent = 0;
    /** @var list<int> per level, where its parent_column sits in a row of the level above */
    private array $at = [];

    /** @param array $load the message's `load`; $shape the parents' select (table_columns, key) */
    public function __construct(
        private readonly WorkerDriver $driver,
        private readonly string $sql,
        private readonly array $shape,
        private readonly array $load,
        private readonly bool $verify,
    ) {
        if (!in_array($load['strategy'] ?? null, ['lazy', 'joined', 'selectin'], true)) {
            throw new ProtocolError('unknown load strategy ' . json_encode($load['strategy'] ?? null));
        }
        if (!is_array($shape['table_columns'] ?? null) || !is_array($shape['key'] ?? null)) {
            throw new ProtocolError("a load step's shape is the select of its parents' table (table_columns, key)");
        }
        $above = $shape['table_columns'];
        foreach ($load['levels'] ?? throw new ProtocolError('a load step needs load.levels') as $level) {
            $at = array_search($level['parent_column'] ?? null, $above, true);
            if ($at === false || !isset($level['one'], $level['in'], $level['table_columns'], $level['key'])) {
                throw new ProtocolError("load: a level's parent_column is not a column of the level above, or it "
                    . 'lacks one, in, table_columns or key');
            }
            $this->at[] = $at;
            $above = $level['table_columns'];
        }
    }

    /** One load, given the parents' arguments as the driver binds them: every entity read. */
    public function load(mixed $args): array
    {
        return match ($this->load['strategy']) {
            'lazy' => $this->lazy($args),
            'selectin' => $this->selectin($args),
            'joined' => $this->joined($args),
        };
    }

    private function lazy(mixed $args): array
    {
        $above = $this->query($this->sql, $args);
        $found = $above;
        foreach ($this->at as $k => $at) {
            $below = [];
            foreach ($above as $row) {
                if ($row[$at][1] !== null) {
                    array_push($below, ...$this->query($this->load['levels'][$k]['one'], $this->bound([$row[$at]])));
                }
            }
            array_push($found, ...$below);
            $above = $below;
        }
        return $found;
    }

    private function selectin(mixed $args): array
    {
        $above = $this->query($this->sql, $args);
        $found = $above;
        foreach ($this->at as $k => $at) {
            $values = distinct($above, $at);
            if ($values === []) {
                break;
            }
            [$head, $tail] = $this->load['levels'][$k]['in'];
            $above = $this->query($head . implode(', ', array_fill(0, count($values), '?')) . $tail,
                                  $this->bound($values));
            array_push($found, ...$above);
        }
        return $found;
    }

    /** The joined rows split into each level's entities, each once by its key. */
    private function joined(mixed $args): array
    {
        $levels = [[$this->shape['table_columns'], $this->shape['key']]];
        foreach ($this->load['levels'] as $level) {
            $levels[] = [$level['table_columns'], $level['key']];
        }
        $parts = array_fill(0, count($levels), []);
        foreach ($this->query((string) $this->load['joined'], $args) as $row) {
            $from = 0;
            foreach ($levels as $k => [$columns, $key]) {
                $entity = array_slice($row, $from, count($columns));
                $id = entity_key($entity, $columns, $key);
                if ($id !== null && !isset($parts[$k][$id])) {
                    $parts[$k][$id] = $entity;
                }
                $from += count($columns);
            }
        }
        return array_merge(...array_map('array_values', $parts));
    }

    /** Typed values read → arguments bound as the driver binds them (dates and timestamps as their text). */
    private function bound(array $values): mixed
    {
        return $this->driver->bind(array_map(static fn (array $v): array => match ($v[0]) {
            'date' => ['date', date_text($v[1])],
            'timestamp' => ['timestamp', timestamp_text($v[1])],
            default => $v,
        }, $values));
    }

    /** One statement, bound, every row read (counted). */
    private function query(string $sql, mixed $args): array
    {
        $this->sent++;
        return $this->driver->run(new Op(name: '', mode: 'extended', sql: $sql, statement: null, args: $args,
                                         fetch: true, verify: $this->verify));
    }
}

/** The distinct non-NULL typed values of column `at`, in the order first read. */
function distinct(array $rows, int $at): array
{
    $seen = [];
    foreach ($rows as $row) {
        if ($row[$at][1] !== null) {
            $seen[$row[$at][0] . "\0" . $row[$at][1]] ??= $row[$at];
        }
    }
    return array_values($seen);
}

/** An entity's key as text, or null when a key column is NULL (no entity in this row). */
function entity_key(array $entity, array $columns, array $key): ?string
{
    $id = '';
    foreach ($key as $column) {
        $value = $entity[array_search($column, $columns, true)][1];
        if ($value === null) {
            return null;
        }
        $id .= $value . "\0";
    }
    return $id;
}
