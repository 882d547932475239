package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;

/** One step as parsed from its message, with everything made before the clock starts. */
final class Step {
    static final int CONNECT = 0, SCAN = 1, EXEC = 2, BATCH = 3;
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
    Object[][] params;    // n rows of nparams values, generated and adapted before the clock
    String[] texts;       // literal mode: n statements with values inlined; record exec: n keyed reads
    String recordTable;   // record mode: the table, its index (exec: the key's) and the handler's
    String recordIndex;   // name (one per step, the same on every connection: HANDLER names are per
    String handler;       // session)
    JsonNode endpoint;
    Checksum sink;        // verification: every decoded row goes here; null when timed
    int ncols;            // set by the driver: columns of the rows it read
    final Row row = new Row(); // the decode buffer, reused for every row

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
        s.params = params;
        s.texts = texts;
        s.recordTable = recordTable;
        s.recordIndex = recordIndex;
        s.handler = handler;
        s.endpoint = endpoint;
        return s;
    }

    /** Hands one decoded row to the verification checksum (nothing when timed). */
    void emit(Row r) {
        if (sink != null)
            sink.add(r);
    }

    boolean reads() {
        return fetch && (kind == SCAN || kind == EXEC);
    }
}
