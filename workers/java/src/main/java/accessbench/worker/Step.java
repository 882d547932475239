package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** One step as parsed from its message, with everything made before the clock starts: parse
 * answers every protocol error (and a mode or policy the method lacks) before anything runs. */
final class Step {
    static final int CONNECT = 0, SCAN = 1, EXEC = 2, BATCH = 3, LOAD = 4;
    static final String[] KINDS = {"connect", "scan", "exec", "batch", "load"};
    static final int NONE = 0, LITERAL = 1, EXTENDED = 2, PREPARED = 3, RECORD = 4;
    static final String[] MODES = {"", "literal", "extended", "prepared", "record"};

    int kind, mode;
    String sql;           // neutral form ('?' markers, which are also JDBC's); null for connect
    int nparams;          // markers = parameters per row
    int n;                // iterations: rows for batch, operations otherwise
    int batch;            // rows per group
    int nops;             // operations: n, or groups for batch
    int commitEvery;      // exec: operations per transaction, 0 = autocommit
    boolean fetch;        // the statement returns rows to read
    boolean verify;
    int dump;             // verification: rows to dump (the first read, as typed values); 0: none
    ValueType[] types;    // per parameter: the type of its values (and of its NULLs)
    Object[][] params;    // n rows of nparams values, generated and adapted before the clock
    String[] texts;       // literal mode: n statements with values inlined; record exec: n keyed reads
    String recordTable;   // record mode: the table, its index (exec: the key's) and the handler's
    String recordIndex;   // name (one per step, the same on every connection: HANDLER names are per
    String handler;       // session)
    Shape shape;          // what the statement does (null: no shape): a layer's builder builds it from this
    Association association; // a load step's: the levels below the parents and the strategy
    String api;           // "raw": a layer ran the statement through its raw-SQL API (answered as such)
    long statements;      // statements the pass's operations sent, where the method counts them
    long values;          // a load's values read (entities × their columns), counted as they are read
    JsonNode endpoint;
    String latencyFile;   // timed pass: where the per-operation latencies go; null: nowhere
    Load load;            // steps under load: clients, duration, rate, policy; null: a plain step
    Checksum sink;        // verification: every decoded row goes here; null when timed
    int ncols;            // set by the driver: columns of the rows it read
    final Row row = new Row(); // the decode buffer, reused for every row

    private static int handlers; // record steps so far: each names its HANDLER ab_h<n>

    /** The step a message asks for, on the session's endpoint, for drv (its modes, and its
     * parameter types: adapt) of the method methodName. Its parameters are generated (and for
     * literal, inlined) here, before any clock starts. */
    static Step parse(JsonNode msg, JsonNode endpoint, Driver drv, String methodName) throws WorkerError {
        Step st = new Step();
        st.kind = kind(msg);
        long n = Fields.integer(msg, "iterations", -1);
        if (n < 0 || n > Integer.MAX_VALUE - 8)
            throw WorkerError.protocol("a step needs iterations >= 0");
        st.n = (int) n;
        long every = Fields.integer(msg, "commit_every", 0);
        st.commitEvery = st.kind == EXEC && every > 0 ? (int) Math.min(every, Integer.MAX_VALUE) : 0;
        long batch = Fields.integer(msg, "batch", 0);
        st.verify = Fields.truthy(msg.get("verify"));
        long dump = st.verify ? Fields.integer(msg, "dump", 0) : 0;
        st.dump = (int) Math.max(0, Math.min(dump, Integer.MAX_VALUE));
        st.fetch = st.kind == SCAN || st.kind == LOAD || (st.kind == EXEC && Fields.truthy(msg.get("fetch")));
        st.endpoint = endpoint;
        JsonNode lf = msg.get("latency_file");
        st.latencyFile = lf != null && lf.isTextual() ? lf.textValue() : null;
        List<String> segments = null;
        if (st.kind != CONNECT) {
            JsonNode sql = msg.get("sql");
            if (sql == null || !sql.isTextual())
                throw WorkerError.protocol("a " + KINDS[st.kind] + " step needs sql");
            st.sql = sql.textValue();
            segments = SqlText.segments(st.sql);
            st.nparams = segments.size() - 1;
        }
        st.shape = Shape.parse(msg);
        if (st.kind == LOAD)
            st.association = Association.parse(msg, st.shape);
        st.mode = mode(msg, st.kind);
        if (st.mode != NONE && !drv.modes().contains(MODES[st.mode])) { // the driver's own reason, where it gives one
            String why = drv.noModeWhy(MODES[st.mode]);
            throw WorkerError.unsupported(methodName + " has no " + MODES[st.mode] + " mode" + (why != null ? ": " + why : ""));
        }
        if (st.mode == RECORD)
            st.record(msg);
        if (st.kind == BATCH) {
            if (batch < 1)
                throw WorkerError.protocol("a batch step needs batch >= 1");
            st.batch = (int) Math.min(batch, Integer.MAX_VALUE);
            st.nops = (int) ((n + st.batch - 1) / st.batch);
        } else {
            st.nops = st.n;
        }
        st.generate(msg.get("params"), segments, drv);
        st.load = Load.parse(msg);
        if (st.load != null)
            Policy.checkCommitEvery(st, st.load.policy);
        return st;
    }

    private static int kind(JsonNode msg) throws WorkerError {
        String kind = msg.path("kind").asText(null);
        if (kind == null)
            throw WorkerError.protocol("a step needs a kind");
        return switch (kind) {
            case "connect" -> CONNECT;
            case "scan" -> SCAN;
            case "exec" -> EXEC;
            case "batch" -> BATCH;
            case "load" -> LOAD;
            default -> throw WorkerError.protocol("unknown step kind '" + kind + "'");
        };
    }

    /** An exec step's mode; a scan's only mode is record (its other modes mean nothing). */
    private static int mode(JsonNode msg, int kind) throws WorkerError {
        String mode = msg.path("mode").asText(null);
        if (kind == EXEC) {
            if (mode == null)
                throw WorkerError.protocol("an exec step needs a mode");
            return switch (mode) {
                case "literal" -> LITERAL;
                case "extended" -> EXTENDED;
                case "prepared" -> PREPARED;
                case "record" -> RECORD;
                default -> throw WorkerError.protocol("unknown mode '" + mode + "'");
            };
        }
        return kind != CONNECT && "record".equals(mode) ? RECORD : NONE;
    }

    /** A record-level step (PROTOCOL.md "Record-level access"): a scan of record.table, or an
     * exec keyed on record.index; the handler's name is chosen here, once for every client. */
    private void record(JsonNode msg) throws WorkerError {
        JsonNode rec = msg.get("record");
        if (rec == null || !rec.isObject() || !rec.path("table").isTextual())
            throw WorkerError.protocol("a record step needs record: {\"table\": …}");
        recordTable = rec.get("table").textValue();
        JsonNode index = rec.get("index");
        recordIndex = index != null && index.isTextual() && !index.textValue().isEmpty() ? index.textValue() : null;
        if (kind == BATCH || (kind == EXEC && recordIndex == null))
            throw WorkerError.unsupported("record-level access reads: a scan, or an exec step keyed on an index");
        handler = "ab_h" + (++handlers);
    }

    /** The parameters, generated (each of its spec's type; and for literal, inlined; for a
     * keyed record read, the key as literals) and adapted to the driver's types: all before the
     * clock. */
    private void generate(JsonNode specs, List<String> segments, Driver drv) throws WorkerError {
        int nspecs = specs != null && specs.isArray() ? specs.size() : 0;
        if (kind == SCAN && nparams != 0)
            throw WorkerError.protocol("a scan runs one query without params, but the sql has " + nparams + " markers");
        if (kind != EXEC && kind != BATCH && kind != LOAD)
            return;
        if (nspecs != nparams)
            throw WorkerError.protocol(nparams + " markers but " + nspecs + " params");
        Gen[] gens = new Gen[nspecs];
        types = new ValueType[nspecs];
        for (int k = 0; k < nspecs; k++) {
            gens[k] = new Gen(specs.get(k));
            types[k] = gens[k].type;
        }
        params = new Object[n][nspecs];
        for (int i = 0; i < n; i++)
            for (int k = 0; k < nspecs; k++)
                params[i][k] = gens[k].next(i);
        String dialect = endpoint.path("dbms").asText();
        if (kind == EXEC && mode == LITERAL) {
            texts = new String[n];
            for (int i = 0; i < n; i++)
                texts[i] = SqlText.inline(segments, params[i], dialect);
        } else if (mode == RECORD) { // the key as literals: HANDLER h READ `index` = (…)
            String read = "HANDLER " + handler + " READ `" + recordIndex + "` = (";
            texts = new String[n];
            for (int i = 0; i < n; i++)
                texts[i] = read + SqlText.literals(params[i], dialect) + ")";
        }
        for (Object[] row : params)
            for (int k = 0; k < nspecs; k++)
                row[k] = drv.adapt(row[k]);
    }

    /** The same step for one more client of a loaded step: the parameters and texts are
     * shared (read only), the decode buffer and what the driver learns are the client's own. */
    Step forClient() {
        Step s = new Step();
        s.kind = kind;
        s.mode = mode;
        s.sql = sql;
        s.nparams = nparams;
        s.n = n;
        s.batch = batch;
        s.nops = nops;
        s.commitEvery = commitEvery;
        s.fetch = fetch;
        s.verify = verify;
        s.types = types;
        s.params = params;
        s.texts = texts;
        s.recordTable = recordTable;
        s.recordIndex = recordIndex;
        s.handler = handler;
        s.shape = shape;
        s.association = association;
        s.api = api;
        s.endpoint = endpoint;
        return s;
    }

    /** Hands one decoded row to the verification checksum (nothing when timed). */
    void emit(Row r) {
        if (sink != null)
            sink.add(r);
    }

    boolean reads() {
        return fetch && (kind == SCAN || kind == EXEC || kind == LOAD);
    }
}
