package accessbench.worker;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import java.util.TreeSet;
import java.util.function.Supplier;

/** abworker-java: the accessbench worker for Java. Protocol v1 (protocol/PROTOCOL.md): one
 * JSON object per line on stdin, one answer per line on stdout, stdout for nothing else. */
public final class Main {
    static final int PROTOCOL_VERSION = 1;

    /** The registry: method base name → its driver's constructor. The names the worker knows
     * are its keys, in this order (hello's methods: the same, sorted). */
    private static final Map<String, Supplier<Driver>> DRIVERS = new LinkedHashMap<>();
    static {
        DRIVERS.put("java-pgjdbc", PgjdbcDriver::new);
        DRIVERS.put("java-sqlite-jdbc", SqliteJdbcDriver::new);
        DRIVERS.put("java-mariadb", MariadbDriver::new);
        DRIVERS.put("java-duckdb", DuckdbJdbcDriver::new);
        // layers: a library above one of the drivers, named with it (catalog: layer, over)
        DRIVERS.put("java-hibernate+pgjdbc", () -> new HibernateDriver(new Over.Pgjdbc()));
        DRIVERS.put("java-hibernate+mariadb", () -> new HibernateDriver(new Over.Mariadb()));
        DRIVERS.put("java-jdbctemplate+pgjdbc", () -> new JdbcTemplateDriver(new Over.Pgjdbc()));
        DRIVERS.put("java-jdbctemplate+mariadb", () -> new JdbcTemplateDriver(new Over.Mariadb()));
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final String methodName;
    private Driver drv;
    private String unsupportedWhy;
    private JsonNode endpoint;
    private final PrintStream out;

    private Main(String methodName, PrintStream out) {
        this.methodName = methodName;
        this.out = out;
        chooseMethod();
    }

    public static void main(String[] args) throws IOException {
        // stdout belongs to the protocol: keep it private and send whatever any library prints
        // with System.out to stderr, the worker's log.
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (args.length != 1) {
            System.err.println("usage: java -jar abworker-java.jar METHOD[/key=value,...]  (" + known() + ")");
            System.exit(2);
        }
        // Deterministic session time zone: pgjdbc sends the JVM's default zone as TimeZone at
        // connect. Timestamps are read as LocalDateTime and never go through a zone.
        TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
        if (System.getenv("ABWORKER_JAVA_TRACE") != null)
            traceDriver();
        Main m = new Main(args[0], out);
        if (m.unsupportedWhy != null)
            System.err.println("abworker-java: " + m.unsupportedWhy);
        m.serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
        m.closeQuietly();
        out.flush();
        System.exit(0);
    }

    /** ABWORKER_JAVA_TRACE=1: pgjdbc's own log at FINEST on stderr, every protocol message it sends
     * and receives (FE=> / <=BE), and Connector/J's at TRACE (through SLF4J's simple logger, to
     * stderr: every packet it sends and reads, in hex): how the pinned behaviour was checked.
     * Never on in measurements. */
    private static void traceDriver() {
        System.setProperty("org.slf4j.simpleLogger.log.org.mariadb.jdbc", "trace");
        java.util.logging.Logger log = java.util.logging.Logger.getLogger("org.postgresql");
        java.util.logging.ConsoleHandler h = new java.util.logging.ConsoleHandler();
        h.setLevel(java.util.logging.Level.FINEST);
        log.setLevel(java.util.logging.Level.FINEST);
        log.addHandler(h);
        log.setUseParentHandlers(false);
        TRACE_LOGGER = log;
    }

    @SuppressWarnings("unused")
    private static java.util.logging.Logger TRACE_LOGGER; // keeps the configured logger alive

    /** the method base names of the registry, in its order */
    private static String known() {
        return String.join(", ", DRIVERS.keySet());
    }

    /** Splits "java-pgjdbc/fetchSize=1000,reWriteBatchedInserts=true", makes the base's driver
     * from the registry and configures it. */
    private void chooseMethod() {
        int slash = methodName.indexOf('/');
        String base = slash < 0 ? methodName : methodName.substring(0, slash);
        // METHOD@VERSION: its driver at another version than the pinned one, that version's jar
        // put ahead of this worker's on the class path (src/accessbench/methods/versions.py);
        // started with any other version of the driver, the worker refuses the name rather than
        // measure one version under another's
        int at = base.indexOf('@');
        String version = at < 0 ? null : base.substring(at + 1);
        if (at >= 0)
            base = base.substring(0, at);
        Supplier<Driver> make = DRIVERS.get(base);
        if (make == null) {
            unsupportedWhy = "unknown method '" + base + "' (abworker-java knows " + known() + ")";
            return;
        }
        drv = make.get();
        if (version != null && !drv.driverVersion().split(" ", 2)[0].equals(version)) {
            unsupportedWhy = methodName + ": this abworker-java runs " + base + "'s driver at " + drv.driverVersion()
                    + ", not " + version + " (its jar is not on the class path ahead of the worker's)";
            return;
        }
        if (slash < 0)
            return;
        for (String kv : methodName.substring(slash + 1).split(",", -1)) {
            int eq = kv.indexOf('=');
            if (eq < 0) {
                unsupportedWhy = methodName + ": setting '" + kv + "' is not key=value";
                return;
            }
            try {
                drv.configure(kv.substring(0, eq), kv.substring(eq + 1));
            } catch (WorkerError e) {
                unsupportedWhy = methodName + ": " + e.getMessage();
                return;
            }
        }
    }

    private void serve(BufferedReader in) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank())
                continue;
            String op = null;
            ObjectNode answer;
            try {
                JsonNode msg;
                try {
                    msg = JSON.readTree(line);
                } catch (JsonProcessingException e) {
                    throw WorkerError.protocol("not JSON: " + e.getOriginalMessage());
                }
                if (msg == null || !msg.isObject())
                    throw WorkerError.protocol("not a JSON object");
                op = msg.path("op").isTextual() ? msg.get("op").textValue() : null;
                if (unsupportedWhy != null)
                    throw WorkerError.unsupported(unsupportedWhy);
                answer = handle(op, msg);
            } catch (WorkerError e) {
                answer = error(e.kind, e.getMessage(), e.sqlstate);
            } catch (BatchUpdateException e) {
                SQLException cause = e.getNextException() != null ? e.getNextException() : e;
                answer = error("db", cause.getMessage(), sqlstate(cause));
            } catch (SQLException e) {
                answer = error("db", e.getMessage(), sqlstate(e));
            } catch (Throwable e) { // the worker answers, never crashes without a word
                e.printStackTrace();
                answer = error("internal", e.toString(), null);
            }
            out.println(JSON.writeValueAsString(answer));
            out.flush();
            if ("bye".equals(op))
                return;
        }
    }

    private String sqlstate(SQLException e) {
        return drv != null ? drv.sqlstate(e) : e.getSQLState();
    }

    private static ObjectNode error(String kind, String message, String sqlstate) {
        ObjectNode a = F.objectNode(), e = F.objectNode();
        String m = firstLine(message);
        a.put("ok", false);
        e.put("kind", kind);
        e.put("message", m.isEmpty() ? kind : m);
        if (sqlstate != null && !sqlstate.isEmpty())
            e.put("sqlstate", sqlstate);
        a.set("error", e);
        return a;
    }

    private static String firstLine(String s) {
        if (s == null)
            return "";
        s = s.strip();
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl).strip();
    }

    private ObjectNode handle(String op, JsonNode msg) throws Exception {
        if (op == null)
            throw WorkerError.protocol("a message needs an op");
        ObjectNode a = F.objectNode();
        a.put("ok", true);
        switch (op) {
            case "hello" -> hello(a);
            case "open" -> open(msg, a);
            case "step" -> step(msg, a);
            case "close", "bye" -> closeQuietly();
            case "generate" -> generate(msg, a);
            case "checksum" -> checksum(msg, a);
            case "histogram" -> histogram(msg, a);
            case "schedule" -> schedule(msg, a);
            default -> throw WorkerError.protocol("unknown op '" + op + "'");
        }
        return a;
    }

    // ---- hello, open, close ------------------------------------------------------------------

    private void hello(ObjectNode a) {
        a.put("protocol", PROTOCOL_VERSION);
        a.put("name", methodName);
        a.put("language", "java");
        a.put("runtime", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
        a.put("driver", drv.driverName());
        a.put("driver_version", drv.driverVersion());
        ArrayNode methods = a.putArray("methods"); // the registry's names, sorted
        new TreeSet<>(DRIVERS.keySet()).forEach(methods::add);
        ObjectNode s = a.putObject("settings");
        s.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version")
                + " (java.version " + System.getProperty("java.version") + ", " + System.getProperty("java.vm.vendor") + ")");
        List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments();
        s.put("jvm flags", flags.isEmpty() ? "none (java -jar with the JVM's defaults)" : String.join(" ", flags));
        List<String> gcs = new ArrayList<>();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
            gcs.add(gc.getName());
        s.put("gc", String.join(", ", gcs) + " (ergonomic choice for " + Runtime.getRuntime().availableProcessors()
                + " CPUs, max heap " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB)");
        s.put("jit", "HotSpot tiered compilation (runs as it warms: capabilities.jit, the runner warms cells until stable)");
        s.put("clock", "System.nanoTime (CLOCK_MONOTONIC), one read per operation");
        s.put("cpu", "the whole JVM process (measuring thread, client threads, GC and JIT compiler threads) in "
                + "nanoseconds around the loop: every thread's time on CPU, from /proc/self/task/TID/schedstat (the "
                + "reading thread's from its own CPU clock, ThreadMXBean.getCurrentThreadCpuTime), summed per thread; "
                + "no user/system split at this resolution: the total is user_ns, sys_ns is 0");
        s.put("time zone", "JVM default set to UTC at start");
        s.put("decoding", "every value of every row read into a Java value (long, double, BigDecimal, String, byte[], "
                + "LocalDateTime, LocalDate, boolean); checksums only in verification passes");
        s.put("clients", "steps under load: a loaded step's C clients are C platform threads (java.lang.Thread, one per client, started "
                + "per step) in this one JVM; connections are opened in those threads before the barrier (untimed); "
                + "the barrier waits for the wall clock (Instant.now) to reach start_at_unix_ns with LockSupport.parkNanos, "
                + "spinning the last 100 µs, then each client starts its own System.nanoTime clock; open loop: client k "
                + "runs its own Schedule at rate / C seeded schedule_seed + k (uniform: starting at phase_ns + k * 1e9 / rate, "
                + "the worker's arrivals dealt to its clients in turn), parkNanos then a spin of the last 100 µs "
                + "to each intended start, latency from the intended start; by duration, open loop or closed, a client loops "
                + "while its previous operation ended before start + duration_ms, and an open loop starts no arrival at or "
                + "after duration_ms: its arrivals over, it parks (untimed) until the duration has passed, elapsed_ns running "
                + "to then; still behind schedule when it has passed, it counts the arrivals due before then that it had not "
                + "started as skipped; every latency into a fixed array of "
                + "log-linear histogram counts (no allocation per operation); user_ns is the whole process's CPU "
                + "(every client thread, GC and JIT; sys_ns 0) from the clients' start to their end, the clients "
                + "kept alive (parked) until it is read");
        s.put("persistent", "client 0 uses the session's connection (from open); clients 1..C-1 each open one "
                + "connection of their own (the kind the step's mode uses), closed after the trial; server_pids "
                + "are those connections' backends");
        s.put("per-request", "each operation connects (" + drv.jdbcDriverClass() + ".connect, as the connect step), "
                + "makes its statement (prepared: prepares it), runs, closes the statement and the connection: all "
                + "inside its time; commit_every=1 runs each operation in a transaction of its own, K > 1 is unsupported");
        s.put("pooled", "HikariCP " + Policy.Pool.version() + " (HikariDataSource with jdbcUrl, driverClassName and the "
                + "same connection properties as this method's other connections), one pool per trial: "
                + "maximumPoolSize = minimumIdle = pool_size, filled before the barrier (every connection borrowed once "
                + "and returned), closed after the trial; "
                + "pinned: connectionTestQuery unset (validation is JDBC4 isValid: " + drv.isValidDoes() + "), "
                + "keepaliveTime=0 (no keepalive query), maxLifetime=0 (never retired), leakDetectionThreshold=0, "
                + "autoCommit=true, registerMbeans=false; Hikari's defaults kept: a connection idle for more than 500 ms "
                + "(aliveBypassWindowMs) is validated when borrowed, connectionTimeout 30 s; each operation borrows "
                + "(getConnection), runs and returns (close) inside its time; statements are made on the pooled "
                + "connection itself (unwrapped from Hikari's proxy, so they outlive a borrow): a prepared step "
                + "prepares once per pooled connection, in the operation that first borrows it; commit_every as "
                + "per-request");
        s.put("load", Association.BY_HAND); // a layer's settings say how it loads instead
        drv.settings(s);
        ObjectNode caps = a.putObject("capabilities");
        ArrayNode dbms = caps.putArray("dbms");
        drv.dbms().forEach(dbms::add);
        ArrayNode kinds = caps.putArray("kinds");
        for (String k : Step.KINDS)
            kinds.add(k);
        ArrayNode modes = caps.putArray("modes");
        drv.modes().forEach(modes::add);
        caps.put("batch", drv.batchStyle());
        drv.capabilities(caps); // a layer's shapes: what it maps through its own API, and why not the rest
        caps.put("concurrency", "threads (one platform thread per client)");
        caps.put("jit", true);
        // user_ns counts nanoseconds (Cpu: schedstat and the thread's CPU clock)
        caps.put("cpu_resolution_ns", 1);
        // steps under load: clients, by duration, open loop at a rate, latency histograms, and
        // the connection policies built for every method of this worker
        ArrayNode policies = caps.putObject("load").putArray("policies");
        for (String p : Policy.NAMES)
            policies.add(p);
    }

    private void open(JsonNode msg, ObjectNode a) throws Exception {
        JsonNode ep = msg.get("endpoint");
        if (ep == null || !ep.isObject())
            throw WorkerError.protocol("open needs an endpoint object");
        String dbms = ep.path("dbms").asText("");
        if (!drv.dbms().contains(dbms))
            throw WorkerError.unsupported(methodName + " does not reach dbms '" + dbms + "'");
        closeQuietly(); // a second open replaces the first connection
        drv.open(ep, a);
        endpoint = ep;
    }

    private void closeQuietly() {
        if (endpoint != null && drv != null) {
            try {
                drv.close();
            } catch (RuntimeException e) {
                e.printStackTrace();
            }
        }
        endpoint = null;
    }

    // ---- conformance: generate and checksum ------------------------------------------------------

    private void generate(JsonNode msg, ObjectNode a) throws WorkerError {
        long count = Fields.integer(msg, "count", 0);
        Gen g = new Gen(msg.get("spec"));
        ArrayNode values = a.putArray("values");
        for (long i = 0; i < count; i++)
            values.add(g.type.toJson(g.next(i)));
    }

    private void checksum(JsonNode msg, ObjectNode a) throws WorkerError {
        JsonNode rows = msg.get("rows");
        if (rows == null || !rows.isArray())
            throw WorkerError.protocol("checksum needs rows");
        Checksum sum = new Checksum();
        Row row = new Row();
        for (JsonNode r : rows) {
            if (!r.isArray())
                throw WorkerError.protocol("a row is a list");
            row.reset(r.size());
            for (int c = 0; c < r.size(); c++)
                typedValue(r.get(c), row, c);
            sum.add(row);
        }
        a.put("checksum", sum.hex());
        a.put("rows", sum.rows);
    }

    /** The worker's own histogram of the given values (conformance: protocol/vectors/load.json). */
    private void histogram(JsonNode msg, ObjectNode a) throws WorkerError {
        JsonNode values = msg.get("values");
        if (values == null || !values.isArray())
            throw WorkerError.protocol("histogram needs values");
        Histogram h = new Histogram();
        for (JsonNode v : values) {
            if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < 0)
                throw WorkerError.protocol("a histogram value is an integer >= 0, not " + v);
            h.record(v.longValue());
        }
        a.set("histogram", h.toJson(F));
    }

    /** The first count intended start offsets of an arrival schedule (conformance). */
    private void schedule(JsonNode msg, ObjectNode a) throws WorkerError {
        JsonNode rate = msg.get("rate");
        if (rate == null || !rate.isNumber())
            throw WorkerError.protocol("schedule needs a rate");
        String seed = msg.path("seed").asText("0");
        long s;
        try {
            s = Long.parseUnsignedLong(seed, 16);
        } catch (NumberFormatException e) {
            throw WorkerError.protocol("schedule seed is 16 hex digits, not '" + seed + "'");
        }
        Schedule sched = new Schedule(rate.doubleValue(), msg.path("arrival").asText("poisson"), s);
        long count = Fields.integer(msg, "count", 0);
        ArrayNode offsets = a.putArray("offsets");
        for (long i = 0; i < count; i++)
            offsets.add(sched.next());
    }

    /** A typed conformance value → the native value the drivers produce. */
    private static void typedValue(JsonNode t, Row row, int c) throws WorkerError {
        String type = t.path("type").asText("");
        JsonNode v = t.get("value");
        try {
            switch (type) {
                case "null" -> row.setNull(c);
                case "bool" -> row.setBool(c, v.asBoolean());
                case "int" -> row.setLong(c, Gen.u64(v, "an int value"));
                case "float" -> row.setDouble(c, Double.longBitsToDouble(Long.parseUnsignedLong(v.textValue(), 16)));
                case "decimal" -> { // Python's format(Decimal(text), "f"); BigDecimal has no -0
                    BigDecimal x = new BigDecimal(v.textValue().strip());
                    boolean negZero = x.signum() == 0 && v.textValue().strip().startsWith("-");
                    row.set(c, Row.DECIMAL, negZero ? "-" + x.toPlainString() : x);
                }
                case "text" -> row.set(c, Row.TEXT, v.textValue());
                case "bytes" -> row.set(c, Row.BYTES, HexFormat.of().parseHex(v.textValue()));
                case "timestamp" -> row.set(c, Row.TIMESTAMP, Times.toLocal(v.longValue()));
                case "date" -> row.set(c, Row.DATE, LocalDate.ofEpochDay(v.longValue()));
                case "time" -> row.set(c, Row.TIME, LocalTime.ofNanoOfDay(v.longValue() * 1000));
                default -> throw WorkerError.protocol("unknown value type '" + type + "'");
            }
        } catch (RuntimeException e) {
            throw WorkerError.protocol("bad " + type + " value " + v + ": " + e.getMessage());
        }
    }

    // ---- steps --------------------------------------------------------------------------------

    /** A step: parsed and checked in full (Step.parse: every protocol error, parameters
     * generated), then run. */
    private void step(JsonNode msg, ObjectNode a) throws Exception {
        if (endpoint == null)
            throw WorkerError.protocol("step before open");
        run(Step.parse(msg, endpoint, drv, methodName), a);
    }

    /** Runs a parsed step: the verification pass, a loaded step or the timed loop, between the
     * driver's stepBegin and stepEnd (untimed). */
    private void run(Step st, ObjectNode a) throws Exception {
        Load load = st.load;
        boolean done = false;
        try {
            drv.stepBegin(st);
            if (st.verify && (load == null || load.policy == Policy.PERSISTENT))
                verify(st, null, a);
            else if (st.verify)
                verifyWithPolicy(st, load, a);
            else if (load != null)
                Load.loaded(drv, st, load, a);
            else
                timed(st, a);
            if (st.api != null) // the layer ran the statement through its raw-SQL API: every report says so
                a.put("api", st.api);
            done = true;
        } finally {
            if (!done) { // leave the connection usable; the first error is the one answered
                try {
                    drv.recover(st);
                } catch (RuntimeException e) {
                    e.printStackTrace();
                }
            }
            try {
                drv.stepEnd(st);
            } catch (RuntimeException e) {
                e.printStackTrace();
            }
        }
    }

    /** One operation, with the BEGIN/COMMIT of commit_every around it. */
    private long runOp(Step st, int i) throws Exception {
        int k = st.commitEvery;
        if (k != 0 && i % k == 0)
            drv.txnBegin(st);
        long count = drv.op(st, i);
        if (k != 0 && ((i + 1) % k == 0 || i + 1 == st.nops))
            drv.txnCommit(st);
        return count;
    }

    /** The verification pass: one client, untimed but for its first operation. client: how an
     * operation runs under a connection policy; null for the session's connection. */
    private void verify(Step st, Policy.Client client, ObjectNode a) throws Exception {
        // asked for a dump (to explain a mismatch), the checksum also writes the first rows it
        // hashes as typed values; statements that read no rows answer none
        ArrayNode dump = st.dump > 0 && st.reads() ? F.arrayNode() : null;
        Checksum sink = new Checksum(dump, st.dump);
        st.sink = sink;
        st.statements = 0;
        st.values = 0;
        long rows = 0, first = 0;
        long start = System.nanoTime();
        for (int i = 0; i < st.nops; i++) {
            rows += client == null ? runOp(st, i) : client.op(i);
            if (i == 0) // the cold start: the first operation, its rows checksummed
                first = System.nanoTime() - start;
        }
        a.put("n", st.nops);
        a.put("rows", rows);
        a.put("values", st.kind == Step.LOAD ? st.values : st.reads() ? rows * Math.max(sink.width, 0) : 0);
        a.put("checksum", sink.hex());
        if (drv.countsStatements(st))
            a.put("statements", st.statements);
        if (dump != null)
            a.set("dump", dump);
        a.put("first_op_ns", first);
    }

    /** Verification of a per-request or pooled step: a single client with the policy applied
     * (Load.client, as a loaded step makes its clients). */
    private void verifyWithPolicy(Step st, Load load, ObjectNode a) throws Exception {
        try (Policy.Pool pool = load.policy == Policy.POOLED ? new Policy.Pool(drv, st, load.poolSize) : null) {
            Policy.Client client = Load.client(drv, st, load, pool, 0);
            client.open();
            verify(st, client, a);
        }
    }

    private void timed(Step st, ObjectNode a) throws Exception {
        final String latencyFile = st.latencyFile;
        final int nops = st.nops;
        final long[] lat = new long[nops]; // allocated before the clock
        long rows = 0;
        st.values = 0;
        Cpu before = Cpu.before();
        final long start = System.nanoTime();
        long prev = start;
        for (int i = 0; i < nops; i++) {
            rows += runOp(st, i);
            long now = System.nanoTime();
            lat[i] = now - prev;
            prev = now;
        }
        Cpu after = Cpu.after();
        if (latencyFile != null) {
            ByteBuffer b = ByteBuffer.allocate(8 * nops).order(ByteOrder.LITTLE_ENDIAN);
            for (long x : lat)
                b.putLong(x);
            try {
                Files.write(Path.of(latencyFile), b.array());
            } catch (IOException e) {
                throw new WorkerError("internal", "latency_file " + latencyFile + ": " + e, null);
            }
        }
        putFigures(a, st, nops, prev - start, rows, st.ncols, before, after, nops > 0 ? lat[0] : 0);
        if (st.kind == Step.LOAD) // entities of several tables: their values counted as read
            a.put("values", st.values);
        putServerPids(a, drv.serverPids(st));
    }

    /** The figures every timed answer has, the plain loop's and a loaded step's
     * (Load.answerLoaded), in this order: values only for a step that reads, its columns known;
     * the process's CPU time from before to after, all of it user_ns (Cpu has no user/system
     * split), sys_ns 0. */
    static void putFigures(ObjectNode a, Step st, long n, long elapsedNs, long rows, int ncols, Cpu before, Cpu after,
            long firstOpNs) {
        a.put("n", n);
        a.put("elapsed_ns", elapsedNs);
        a.put("rows", rows);
        if (st.reads() && ncols > 0)
            a.put("values", rows * ncols);
        a.put("user_ns", after.since(before));
        a.put("sys_ns", 0);
        a.put("first_op_ns", firstOpNs);
    }

    /** server_pids, when there are any: the backends the step's operations ran on. */
    static void putServerPids(ObjectNode a, long[] pids) {
        if (pids.length > 0) {
            ArrayNode p = a.putArray("server_pids");
            for (long pid : pids)
                p.add(pid);
        }
    }
}
