<?php

declare(strict_types=1);

/**
 * The tier directory (docs/tier.md): endpoint.json and steps/ID.json, written by the tier worker
 * before a page is asked for them and never changed after.
 *
 * Why a cache: PHP shares nothing between requests, and a step file holds every argument row
 * (and, in literal mode, every rendered statement): decoding a 500-row file costs about 0.6 ms,
 * a 10,000-row one about 15 ms, in every request — more than the operation being measured,
 * where the Python and Node pages read it once per process. So the first request of a process
 * writes the decoded file as a PHP array (var_export) into the tier directory's cache/, and
 * every request then includes that: with OPcache (Apache's mod_php and PHP-FPM enable it) the
 * array is compiled once into shared memory and an include costs microseconds. Without OPcache
 * an include would recompile the array every time, so then the JSON is read directly.
 */

namespace AccessBench\Php;

/** @return array<string, mixed> the decoded JSON file, through the OPcache'd copy when there is one */
function load_json(string $path): array
{
    $stat = @stat($path);
    if ($stat === false) {
        throw new \RuntimeException("cannot read {$path}");
    }
    $cache = opcache_on() ? cache_path($path, $stat) : null;
    if ($cache !== null && is_file($cache)) {
        return include $cache;
    }
    $data = json_decode((string) file_get_contents($path), true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
    if ($cache !== null) {
        $tmp = $cache . '.' . getmypid() . '.tmp';
        if (@file_put_contents($tmp, "<?php\nreturn " . var_export($data, true) . ";\n") !== false) {
            // Dated a minute back: OPcache does not cache a file modified within the last
            // opcache.file_update_protection seconds (2), and recompiling the array in every
            // request of those seconds costs more than the JSON.
            @touch($tmp, time() - 60);
            @rename($tmp, $cache);                          // atomic: a reader sees all of it or none
        }
    }
    return $data;
}

function opcache_on(): bool
{
    return (bool) ini_get('opcache.enable') && (PHP_SAPI !== 'cli' || (bool) ini_get('opcache.enable_cli'))
        && function_exists('opcache_get_status');
}

/** A file named after the JSON file's path, inode, size and times, in a directory only this user can write. */
function cache_path(string $path, array $stat): ?string
{
    // In the tier directory, so that it goes with the run's work directory.
    $tier = getenv('ACCESSBENCH_TIER_DIR');
    $dir = is_string($tier) && $tier !== '' ? $tier . '/cache' : sys_get_temp_dir() . '/accessbench-php-' . posix_geteuid();
    if (!is_dir($dir) && !@mkdir($dir, 0700) && !is_dir($dir)) {
        return null;
    }
    if (fileowner($dir) !== posix_geteuid()) {
        return null;                                        // someone else's directory: never include from it
    }
    return $dir . '/' . md5($path . "\0" . $stat['ino'] . "\0" . $stat['size'] . "\0" . $stat['mtime'] . "\0" . $stat['ctime']) . '.php';
}

/** steps/ID.json; the id comes from the query string, so only [A-Za-z0-9_-] is accepted. */
function load_step(string $tierDir, string $id): array
{
    if (!preg_match('/^[A-Za-z0-9_-]+$/', $id)) {
        throw new \InvalidArgumentException('step ids are [A-Za-z0-9_-]+');
    }
    $step = load_json("{$tierDir}/steps/{$id}.json");
    if (!in_array($step['kind'] ?? null, ['exec', 'scan'], true)) {
        throw new \InvalidArgumentException("step {$id} is neither an exec nor a scan step");
    }
    return $step;
}

/** Operation i of a step: its argument row bound in the driver's form, or its literal statement. */
function operation(Driver $driver, string $id, array $step, int $i, bool $verify): Op
{
    if ($step['kind'] === 'scan') {                          // the statement as it is, as text, every row read
        return new Op(name: $id, mode: 'literal', sql: (string) $step['sql'], statement: (string) $step['sql'],
                      args: [], fetch: true, verify: $verify);
    }
    $mode = (string) $step['mode'];
    return new Op(
        name: $id,
        mode: $mode,
        sql: (string) $step['sql'],
        statement: $mode === 'literal' ? (string) $step['statements'][$i] : null,
        args: $mode === 'literal' ? [] : $driver->bind(arguments($step['types'] ?? [], $step['args'][$i] ?? [])),
        fetch: (bool) ($step['fetch'] ?? false),
        verify: $verify,
    );
}
