"""Schema migrations, applied in order; ``PRAGMA user_version`` is how many have run.
Never edit a released migration: add the next one."""

MIGRATIONS = [
    # 1: the first schema
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,            -- running | complete | interrupted | failed
        suite TEXT NOT NULL,
        suite_source TEXT NOT NULL,
        suite_text TEXT NOT NULL,
        settings TEXT NOT NULL,          -- JSON: trials, warmup, quick, timeout, selection
        environment TEXT NOT NULL,       -- JSON: host, CPU, memory, kernel, Python
        version TEXT NOT NULL,           -- accessbench version
        message TEXT
    );
    CREATE TABLE run_targets (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        dbms TEXT NOT NULL,
        managed INTEGER NOT NULL,
        server_version TEXT,
        settings TEXT NOT NULL,          -- JSON
        PRIMARY KEY (run_id, target)
    );
    CREATE TABLE run_methods (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        method TEXT NOT NULL,
        language TEXT,
        runtime TEXT,
        driver TEXT,
        driver_version TEXT,
        settings TEXT NOT NULL,          -- JSON, as the worker reported in hello
        capabilities TEXT NOT NULL,      -- JSON
        PRIMARY KEY (run_id, method)
    );
    CREATE TABLE cells (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        variant TEXT NOT NULL,
        target TEXT NOT NULL,
        path TEXT NOT NULL,
        method TEXT NOT NULL,
        step TEXT NOT NULL,
        step_index INTEGER NOT NULL,
        kind TEXT NOT NULL,
        mode TEXT,
        description TEXT NOT NULL,
        status TEXT NOT NULL,            -- planned | ok | unsupported | error | timeout | mismatch
        message TEXT,
        checksum TEXT,                   -- of the rows the worker read in the verification pass
        check_checksum TEXT,             -- of the step's check query after that pass
        verify_rows INTEGER,
        verify_values INTEGER,
        UNIQUE (run_id, variant, target, path, method, step)
    );
    CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
        phase TEXT NOT NULL,             -- warmup | trial
        seq INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        n INTEGER NOT NULL,
        elapsed_ns INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        values_read INTEGER,
        user_ns INTEGER,
        sys_ns INTEGER,
        first_op_ns INTEGER,
        server_pids TEXT,
        latencies BLOB                   -- zlib of little-endian u64 nanoseconds per op
    );
    CREATE INDEX trials_cell ON trials (cell_id);
    """,
    # 2: cold start and adaptive warm-up (JIT runtimes)
    """
    ALTER TABLE cells ADD COLUMN cold_first_op_ns INTEGER;  -- first operation of the verification pass
    ALTER TABLE cells ADD COLUMN warmups INTEGER;            -- warmup trials actually run
    """,
    # 3: where the time went: the server process's CPU during each trial
    """
    ALTER TABLE trials ADD COLUMN server_ns INTEGER;  -- CPU of the backend(s) serving the worker
    """,
    # 4: what crossed the latency proxy during each trial (proxied paths only)
    """
    ALTER TABLE trials ADD COLUMN round_trips INTEGER;
    ALTER TABLE trials ADD COLUMN bytes_to_server INTEGER;
    ALTER TABLE trials ADD COLUMN bytes_to_client INTEGER;
    """,
    # 5: steps under load: clients, connection policy, open-loop rate; latencies as a histogram
    """
    ALTER TABLE cells ADD COLUMN clients INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE cells ADD COLUMN policy TEXT NOT NULL DEFAULT 'persistent';
    ALTER TABLE cells ADD COLUMN rate REAL;             -- intended operations/s, all clients (open loop)
    ALTER TABLE trials ADD COLUMN histogram TEXT;       -- merged latency histogram (protocol/histogram), JSON
    ALTER TABLE trials ADD COLUMN late INTEGER;         -- open loop: operations started over 1 ms late
    ALTER TABLE trials ADD COLUMN skipped INTEGER;      -- open loop: operations not started (too late)
    ALTER TABLE trials ADD COLUMN per_client TEXT;      -- JSON [{n, elapsed_ns}] per client
    ALTER TABLE trials ADD COLUMN processes INTEGER;    -- worker processes that drove the clients
    """,
    # 6: steps that sweep clients or rate, so that reports can draw them as curves
    """
    ALTER TABLE cells ADD COLUMN sweep TEXT;            -- the [[steps]] entry's name as written
    ALTER TABLE cells ADD COLUMN sweep_series TEXT;     -- its other varied values, e.g. policy=pooled
    """,
    # 7: resumable runs: which process measures a run, so that one still going is never resumed
    """
    ALTER TABLE runs ADD COLUMN pid INTEGER;            -- the accessbench process that began or last resumed it
    """,
    # 8: run-to-run drift, calibrated per host from two runs of identical settings
    """
    CREATE TABLE drift (
        host TEXT NOT NULL,
        run_a TEXT NOT NULL,
        run_b TEXT NOT NULL,
        measured_at TEXT NOT NULL,
        cells INTEGER NOT NULL,            -- paired cells behind the floor
        floor REAL NOT NULL,               -- 95th percentile of |ratio - 1| over them
        PRIMARY KEY (host, run_a, run_b)
    );
    """,
    # 9: how a trial's server CPU was read: the serving backends', or the whole managed server's
    """
    ALTER TABLE trials ADD COLUMN server_scope TEXT;    -- backends | server (NULL: not read)
    """,
    # 10: the worker's memory around a plain trial (runner/memory.py)
    """
    ALTER TABLE trials ADD COLUMN start_rss_bytes INTEGER;  -- resident just before the trial
    ALTER TABLE trials ADD COLUMN peak_rss_bytes INTEGER;   -- the high-water mark during it
    """,
    # 11: clients on a cluster's hosts (--cluster): each host's part of a loaded trial
    """
    ALTER TABLE trials ADD COLUMN per_host TEXT;  -- JSON [{host, processes, clients, n, cpu_ns, wall_ns, cpus, busy, barrier_late_ns, clock_offset_ns, clock_uncertainty_ns}]
    """,
    # 12: how a layer reached a step, and the statements a verification pass sent (round trips)
    """
    ALTER TABLE cells ADD COLUMN api TEXT;            -- 'raw': the layer ran it through its raw-SQL API
    ALTER TABLE cells ADD COLUMN statements_per_op REAL;  -- statements the verification pass sent, per operation
    ALTER TABLE cells ADD COLUMN parents_per_op REAL;     -- load steps: the parent rows each operation loads
    """,
    # 13: profiles (run --profile): where a cell's client and server spent their CPU, in
    # a trial of its own (never a timed figure), as the sampler's folded stacks
    """
    CREATE TABLE profiles (
        cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
        side TEXT NOT NULL,              -- client | native (a Python client's native frames, perf) | server
        sampler TEXT,                    -- perf | py-spy | jfr (NULL: none was taken; note says why)
        seconds REAL,                    -- how long it sampled
        operations INTEGER,              -- in the profile's one trial, never stored as a timed one
        samples INTEGER,
        folded TEXT,                     -- root;...;leaf count, a stack a line
        note TEXT,
        PRIMARY KEY (cell_id, side)
    );
    """,
    # 14: the PHP tier methods are php-apache-* since their plain names became the PHP CLI
    # worker's (docs/tier.md): every one stored before was a page under Apache, and keeps
    # meaning that (a run's methods, its cells, the methods its resume runs)
    """
    UPDATE cells SET method = 'php-apache-' || substr(method, 5) WHERE method = 'php-pgsql' OR method LIKE 'php-pgsql/%' OR method = 'php-pdo-pgsql' OR method LIKE 'php-pdo-pgsql/%' OR method = 'php-mysqli' OR method LIKE 'php-mysqli/%' OR method = 'php-pdo-mysql' OR method LIKE 'php-pdo-mysql/%';
    UPDATE run_methods SET method = 'php-apache-' || substr(method, 5) WHERE method = 'php-pgsql' OR method LIKE 'php-pgsql/%' OR method = 'php-pdo-pgsql' OR method LIKE 'php-pdo-pgsql/%' OR method = 'php-mysqli' OR method LIKE 'php-mysqli/%' OR method = 'php-pdo-mysql' OR method LIKE 'php-pdo-mysql/%';
    UPDATE runs SET settings = replace(replace(replace(replace(replace(replace(replace(replace(settings, '"php-pgsql"', '"php-apache-pgsql"'), '"php-pgsql/', '"php-apache-pgsql/'), '"php-pdo-pgsql"', '"php-apache-pdo-pgsql"'), '"php-pdo-pgsql/', '"php-apache-pdo-pgsql/'), '"php-mysqli"', '"php-apache-mysqli"'), '"php-mysqli/', '"php-apache-mysqli/'), '"php-pdo-mysql"', '"php-apache-pdo-mysql"'), '"php-pdo-mysql/', '"php-apache-pdo-mysql/');
    """,
    # 15: where a loaded page's time went: the requests of one of the load's connections, their
    # Server-Timing read (tier/sampler.py)
    """
    ALTER TABLE trials ADD COLUMN sampled TEXT;  -- JSON {n, db_ns, app_ns, latency_ns}: those requests' sums
    """,
]
