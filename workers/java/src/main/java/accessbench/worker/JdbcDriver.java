package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.Properties;

/** What the JDBC drivers (java-pgjdbc, java-sqlite-jdbc, java-mariadb) share: the session's
 * connection and the one clock around its connect, one operation per step kind and mode, the
 * step's Statement and PreparedStatement, parameters bound, batch groups, rows decoded by
 * per-column decoders, transactions as autocommit off … on, and the connections of more clients.
 *
 * A driver keeps only what is its own: its URL and connection properties (useEndpoint), what
 * open says of the server (opened), its settings, the decoder of each column (decoders), and
 * the operations it makes otherwise than the JDBC default here (an override each). */
abstract class JdbcDriver extends Driver {
    java.sql.Driver jdbc;  // made before open's clock: its classes are loaded by then
    String url;
    Properties props;      // the properties of conn, and of every connect step's connection
    Connection conn;       // the session's connection (java-pgjdbc: its main one)

    // per step
    Statement stmt;        // the step's Statement (literal, scan), where one serves the step
    PreparedStatement ps;  // the step's PreparedStatement (prepared, batch): made in the first operation
    byte[] decoders;       // per column, from the step's first result
    byte[][] loadDecoders; // a load step's: per statement slot (parents, each level, joined), from its first result
    int[] nullTypes;       // per parameter: the SQL type setNull binds (sqlType of its ValueType)

    JdbcDriver() {
    }

    /** A driver of the same endpoint with no connection (client()): the JDBC driver, URL and
     * connection properties are the same. */
    JdbcDriver(JdbcDriver of) {
        jdbc = of.jdbc;
        url = of.url;
        props = of.props;
    }

    // ---- the session's connection -----------------------------------------------------------------

    /** Sets jdbc, url and props for the endpoint, untimed; unsupported where the driver cannot
     * reach it (a native library that does not load). */
    abstract void useEndpoint(JsonNode ep) throws SQLException, WorkerError;

    /** After open's connect, untimed: server_pid and server_version in the answer. */
    abstract void opened(ObjectNode answer) throws SQLException;

    /** Connects: only the driver's connect call is inside connect_ns. */
    @Override
    final void open(JsonNode ep, ObjectNode answer) throws SQLException, WorkerError {
        useEndpoint(ep);
        long start = System.nanoTime();
        conn = jdbc.connect(url, props);
        answer.put("connect_ns", System.nanoTime() - start);
        opened(answer);
    }

    @Override
    void close() {
        closeQuietly(conn);
        conn = null;
    }

    /** the connection the step runs on */
    Connection conn(Step st) {
        return conn;
    }

    // ---- more clients (steps under load) --------------------------------------------------------

    @Override
    void connect(Step st) throws SQLException {
        conn = jdbc.connect(url, props);
    }

    @Override
    void attach(Step st, Connection c) {
        conn = c;
    }

    /** Closes the step's statements (with no round trip of its own where the driver defers it). */
    @Override
    void release(Step st) {
        closeQuietly(stmt, ps);
        stmt = null;
        ps = null;
        decoders = null;
    }

    @Override
    String jdbcUrl() {
        return url;
    }

    @Override
    Properties connectProperties(Step st) {
        return props;
    }

    // ---- steps --------------------------------------------------------------------------------

    /** Timestamps as LocalDateTime, bound with setObject (no zone). */
    @Override
    Object adapt(Object v) {
        return v instanceof GenTimestamp t ? Times.toLocal(t.micros()) : v;
    }

    /** The step's statements are made in its first operation; its NULLs' bind types now. */
    @Override
    void stepBegin(Step st) throws SQLException, WorkerError {
        stmt = null;
        ps = null;
        decoders = null;
        loadDecoders = st.association != null ? new byte[st.association.levels.length + 2][] : null;
        nullTypes = null;
        if (st.types != null) {
            nullTypes = new int[st.types.length];
            for (int k = 0; k < nullTypes.length; k++)
                nullTypes[k] = sqlType(st.types[k]);
        }
    }

    /** The JDBC type a NULL of a value type is bound as (setNull): the type its values bind as,
     * so that a server statement prepared for the one is not prepared again for the other
     * (pgjdbc: the OIDs int8, bool, float8, numeric, varchar, date, bytea; a timestamp's NULL
     * goes unspecified, as setNull cannot tell timestamp from timestamptz, and pgjdbc binds it
     * on the statement prepared for timestamps as it is). */
    static int sqlType(ValueType t) {
        return switch (t) {
            case INT -> Types.BIGINT;
            case BOOL -> Types.BOOLEAN;
            case FLOAT -> Types.DOUBLE;
            case DECIMAL -> Types.NUMERIC;
            case TEXT -> Types.VARCHAR;
            case DATE -> Types.DATE;
            case TIMESTAMP -> Types.TIMESTAMP;
            case BYTES -> Types.VARBINARY;
        };
    }

    /** One operation of the step's kind and mode. */
    @Override
    final long op(Step st, int i) throws SQLException, WorkerError {
        return switch (st.kind) {
            case Step.CONNECT -> connectOp(st);
            case Step.SCAN -> st.mode == Step.RECORD ? recordOp(st, i) : scanOp(st);
            case Step.EXEC -> switch (st.mode) {
                case Step.LITERAL -> literalOp(st, i);
                case Step.EXTENDED -> extendedOp(st, i);
                case Step.RECORD -> recordOp(st, i);
                default -> preparedOp(st, i);
            };
            case Step.LOAD -> loadOp(st, i);
            default -> batchOp(st, i); // Step.BATCH
        };
    }

    /** Whether the verification answer gives the statements the pass sent (Step.statements):
     * a driver counts what its own code sends for a load (PROTOCOL.md, Loading associations). */
    @Override
    boolean countsStatements(Step st) {
        return st.kind == Step.LOAD;
    }

    /** A load by hand (Association: lazy, selectin or joined), every statement bound and run as
     * the extended mode runs it (loadStatement). */
    long loadOp(Step st, int i) throws SQLException, WorkerError {
        return st.association.run(st, st.params[i], this::loadQuery);
    }

    /** One statement of a load: a new PreparedStatement, bound, executed, every row decoded with
     * the decoders of its slot (chosen at the slot's first result), closed. */
    void loadQuery(Step st, int slot, String sql, Object[] args, Association.Rows rows) throws SQLException {
        try (PreparedStatement p = loadStatement(st, sql)) {
            bind(p, args, loadNullTypes(st, args));
            try (ResultSet rs = p.executeQuery()) {
                byte[] dec = loadDecoders[slot];
                if (dec == null)
                    dec = loadDecoders[slot] = decoders(rs);
                decoders = dec; // binaryColumns reads the step's decoders
                final Row row = st.row;
                final int nc = dec.length;
                boolean[] binary = binaryColumns(rs);
                while (rs.next()) {
                    row.reset(nc);
                    decode(rs, row, dec, binary);
                    rows.row(row);
                }
            }
        }
    }

    /** A load statement, prepared as the extended mode prepares (a driver's own override). */
    PreparedStatement loadStatement(Step st, String sql) throws SQLException {
        return conn(st).prepareStatement(sql);
    }

    /** The NULL bind types of a load statement's parameters: the parents' are the step's; a
     * level's keys are never NULL. */
    private int[] loadNullTypes(Step st, Object[] args) {
        return nullTypes != null && nullTypes.length == args.length ? nullTypes : new int[args.length];
    }

    /** A connect step's operation: connect and close, with the session's URL and properties. */
    long connectOp(Step st) throws SQLException {
        Connection c = jdbc.connect(url, props);
        c.close();
        return 0;
    }

    /** A scan: the query on the step's Statement, every row read. */
    long scanOp(Step st) throws SQLException {
        return read(st, statement(st).executeQuery(st.sql));
    }

    /** literal: the statement text i (values inlined) on the step's Statement. */
    long literalOp(Step st, int i) throws SQLException {
        return execute(st, statement(st), st.texts[i]);
    }

    /** extended: a new PreparedStatement per operation, bound, executed, closed. */
    long extendedOp(Step st, int i) throws SQLException {
        try (PreparedStatement p = prepare(st)) {
            bind(p, st.params[i], nullTypes);
            return execute(st, p);
        }
    }

    /** prepared: the step's PreparedStatement (prepared inside the first operation's time),
     * bound and executed. */
    long preparedOp(Step st, int i) throws SQLException {
        PreparedStatement p = preparedStatement(st);
        bind(p, st.params[i], nullTypes);
        return execute(st, p);
    }

    /** Batch group i in a transaction of its own, on the step's PreparedStatement (prepared in
     * the first group). */
    long batchOp(Step st, int i) throws SQLException {
        txnBegin(st);
        int rows = batchGroup(preparedStatement(st), st, i, nullTypes);
        txnCommit(st);
        return rows;
    }

    /** mode record, for a driver whose modes() list it (never sent to another). */
    long recordOp(Step st, int i) throws SQLException, WorkerError {
        throw WorkerError.unsupported("no record mode");
    }

    /** The step's Statement, made in its first operation. */
    Statement statement(Step st) throws SQLException {
        if (stmt == null)
            stmt = createStatement(st);
        return stmt;
    }

    Statement createStatement(Step st) throws SQLException {
        return conn(st).createStatement();
    }

    /** The step's PreparedStatement, made in its first operation (inside that operation's time). */
    PreparedStatement preparedStatement(Step st) throws SQLException {
        if (ps == null)
            ps = prepare(st);
        return ps;
    }

    PreparedStatement prepare(Step st) throws SQLException {
        return conn(st).prepareStatement(st.sql);
    }

    /** Runs a bound statement: every row read, or the rows changed. */
    long execute(Step st, PreparedStatement p) throws SQLException {
        return st.fetch ? read(st, p.executeQuery()) : p.executeUpdate();
    }

    /** Runs a statement text: every row read, or the rows changed. */
    long execute(Step st, Statement s, String text) throws SQLException {
        return st.fetch ? read(st, s.executeQuery(text)) : s.executeUpdate(text);
    }

    /** The decoder of each column of a result (D_…), from the driver's own column metadata:
     * chosen at the step's first result, kept for the step. */
    abstract byte[] decoders(ResultSet rs) throws SQLException;

    /** Per column, whether its values come in binary (read only for D_FLOAT4 columns); null:
     * none do, or no column needs to know. */
    boolean[] binaryColumns(ResultSet rs) throws SQLException {
        return null;
    }

    /** Reads every row of rs (and closes it), decoding every value; returns the number of rows. */
    long read(Step st, ResultSet rs) throws SQLException {
        try (rs) {
            if (decoders == null)
                decoders = decoders(rs);
            return readRows(st, rs, decoders, binaryColumns(rs));
        }
    }

    /** BEGIN: autocommit off (the driver sends BEGIN, or 'set autocommit=0', its own way). */
    @Override
    void txnBegin(Step st) throws SQLException {
        conn(st).setAutoCommit(false);
    }

    /** COMMIT: autocommit back on, which commits the open transaction (JDBC). */
    @Override
    void txnCommit(Step st) throws SQLException {
        conn(st).setAutoCommit(true);
    }

    @Override
    void recover(Step st) {
        rollbackIfOpen(conn);
    }

    @Override
    void stepEnd(Step st) {
        release(st);
    }

    // ---- shared helpers: URL, credentials, parameters, decoding, clean-up -----------------------

    /** A client/server endpoint's JDBC URL: prefix (e.g. "jdbc:postgresql://"), host (an IPv6
     * address bracketed), port and the endpoint's database, percent-encoded. */
    static String serverUrl(String prefix, String host, String port, JsonNode ep) {
        String urlHost = host.contains(":") ? "[" + host + "]" : host;
        return prefix + urlHost + ":" + port + "/"
                + URLEncoder.encode(ep.path("database").asText(""), StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** The endpoint's read_only (PROTOCOL.md, open): every connection a session the server (or
     * the library) keeps from writing, set by each driver where it makes its connection options. */
    static boolean readOnly(JsonNode ep) {
        return ep.path("read_only").asBoolean(false);
    }

    /** New connection properties with the endpoint's user and (when it has one) password. */
    static Properties credentials(JsonNode ep) {
        Properties p = new Properties();
        p.setProperty("user", ep.path("user").asText(""));
        String pw = ep.path("password").asText("");
        if (!pw.isEmpty())
            p.setProperty("password", pw);
        return p;
    }

    /** Binds one row of adapted parameters, each by its class (ValueType's, as the driver
     * adapted it): Long setLong, String setString, LocalDateTime and LocalDate setObject, Double
     * setDouble, Boolean setBoolean, BigDecimal (and BigInteger) setBigDecimal, byte[] setBytes;
     * NULL as setNull with nullTypes[k]. */
    static void bind(PreparedStatement p, Object[] values, int[] nullTypes) throws SQLException {
        for (int k = 0; k < values.length; k++) {
            Object v = values[k];
            int j = k + 1;
            if (v == null)
                p.setNull(j, nullTypes[k]);
            else if (v instanceof Long x)
                p.setLong(j, x);
            else if (v instanceof String x)
                p.setString(j, x);
            else if (v instanceof LocalDateTime x)
                p.setObject(j, x);
            else if (v instanceof Double x)
                p.setDouble(j, x);
            else if (v instanceof Boolean x)
                p.setBoolean(j, x);
            else if (v instanceof BigDecimal x)
                p.setBigDecimal(j, x);
            else if (v instanceof LocalDate x)
                p.setObject(j, x);
            else if (v instanceof byte[] x)
                p.setBytes(j, x);
            else if (v instanceof BigInteger x)
                p.setBigDecimal(j, new BigDecimal(x));
            else
                p.setString(j, v.toString());
        }
    }

    /** Batch group i of the step on p: addBatch per row (bound as bind does), then executeBatch;
     * returns the group's rows. The transaction around it is the caller's. */
    static int batchGroup(PreparedStatement p, Step st, int i, int[] nullTypes) throws SQLException {
        int first = i * st.batch, last = Math.min(first + st.batch, st.n);
        for (int r = first; r < last; r++) {
            bind(p, st.params[r], nullTypes);
            p.addBatch();
        }
        p.executeBatch();
        return last - first;
    }

    /** Column decoders: how readRows reads a column's values (each driver chooses them from its
     * own column metadata). */
    static final byte D_TEXT = 0,  // getString
            D_INT = 1,             // getLong
            D_UINT64 = 2,          // getObject(BigInteger): its low 64 bits
            D_DOUBLE = 3,          // getDouble
            D_FLOAT = 4,           // getFloat as its shortest decimal (float4AsText)
            D_FLOAT4 = 5,          // by the column's result format: binary as D_FLOAT, text as D_DOUBLE
            D_DECIMAL = 6,         // getBigDecimal
            D_NUMERIC = 7,         // getBigDecimal, or the text of a value with none (NaN, ±Infinity)
            D_BOOL = 8,            // getBoolean
            D_TIMESTAMP = 9,       // getObject(LocalDateTime)
            D_TIMESTAMPTZ = 10,    // getObject(OffsetDateTime)
            D_DATE = 11,           // getObject(LocalDate)
            D_TIME = 12,           // getObject(LocalTime)
            D_BYTES = 13,          // getBytes
            D_VALUE = 14;          // getObject, by the value's own class (sqlite-jdbc: its storage class)

    /** Reads every row of rs (not closed here), decoding every value by dec; binary: per
     * column, whether its results are binary (read only for D_FLOAT4 columns). Returns the rows. */
    static long readRows(Step st, ResultSet rs, byte[] dec, boolean[] binary) throws SQLException {
        final int nc = dec.length;
        final Row row = st.row;
        long count = 0;
        while (rs.next()) {
            row.reset(nc);
            decode(rs, row, dec, binary);
            st.emit(row);
            count++;
        }
        st.ncols = nc;
        return count;
    }

    /** Decodes the current row of rs into row (reset to dec.length columns) by dec. */
    static void decode(ResultSet rs, Row row, byte[] dec, boolean[] binary) throws SQLException {
        final int nc = dec.length;
        for (int c = 0; c < nc; c++) {
            int j = c + 1;
            switch (dec[c]) {
                case D_INT -> {
                    long v = rs.getLong(j);
                    if (v == 0 && rs.wasNull())
                        row.setNull(c);
                    else
                        row.setLong(c, v);
                }
                case D_UINT64 -> {
                    BigInteger v = rs.getObject(j, BigInteger.class);
                    if (v == null)
                        row.setNull(c);
                    else
                        row.setLong(c, v.longValue()); // the same 64 bits
                }
                case D_DOUBLE -> {
                    double v = rs.getDouble(j);
                    // a NULL reads as 0 (JDBC's rule), or NaN (DuckDB's driver)
                    if ((v == 0 || v != v) && rs.wasNull())
                        row.setNull(c);
                    else
                        row.setDouble(c, v);
                }
                case D_FLOAT -> {
                    float v = rs.getFloat(j);
                    if ((v == 0 || v != v) && rs.wasNull())
                        row.setNull(c);
                    else
                        row.setDouble(c, float4AsText(v));
                }
                case D_FLOAT4 -> {
                    double v = binary[c] ? float4AsText(rs.getFloat(j)) : rs.getDouble(j);
                    if (v == 0 && rs.wasNull())
                        row.setNull(c);
                    else
                        row.setDouble(c, v);
                }
                case D_DECIMAL -> row.set(c, Row.DECIMAL, rs.getBigDecimal(j));
                case D_NUMERIC -> {
                    Object v;
                    try {
                        v = rs.getBigDecimal(j);
                    } catch (SQLException e) { // NaN, ±Infinity: no BigDecimal; their text
                        v = rs.getString(j);
                    }
                    row.set(c, Row.DECIMAL, v);
                }
                case D_BOOL -> {
                    boolean v = rs.getBoolean(j);
                    if (!v && rs.wasNull())
                        row.setNull(c);
                    else
                        row.setBool(c, v);
                }
                case D_TIMESTAMP -> row.set(c, Row.TIMESTAMP, rs.getObject(j, LocalDateTime.class));
                case D_TIMESTAMPTZ -> row.set(c, Row.TIMESTAMP, rs.getObject(j, OffsetDateTime.class));
                case D_DATE -> row.set(c, Row.DATE, rs.getObject(j, LocalDate.class));
                case D_TIME -> row.set(c, Row.TIME, rs.getObject(j, LocalTime.class));
                case D_BYTES -> row.set(c, Row.BYTES, rs.getBytes(j));
                case D_VALUE -> setValue(row, c, rs.getObject(j));
                default -> row.set(c, Row.TEXT, rs.getString(j));
            }
        }
    }

    /** A value by its own class: Integer/Long → long, Double → double, String → text, byte[] →
     * bytes, null; anything else as its text. */
    private static void setValue(Row row, int c, Object v) {
        if (v == null)
            row.setNull(c);
        else if (v instanceof Integer x)
            row.setLong(c, x);
        else if (v instanceof Long x)
            row.setLong(c, x);
        else if (v instanceof Double x)
            row.setDouble(c, x);
        else if (v instanceof String)
            row.set(c, Row.TEXT, v);
        else if (v instanceof byte[])
            row.set(c, Row.BYTES, v);
        else
            row.set(c, Row.TEXT, v.toString());
    }

    /** A binary float4 as a text-format driver reads it: PostgreSQL prints the shortest text
     * that reads back as the same float4 (the closest such text when several have that length),
     * and that text is parsed as a double. */
    static double float4AsText(float f) {
        if (Float.isNaN(f) || Float.isInfinite(f) || f == 0)
            return f;
        BigDecimal exact = new BigDecimal((double) f);
        for (int p = 1; p <= 9; p++) {
            BigDecimal c = exact.round(new MathContext(p, RoundingMode.HALF_EVEN)), best = null;
            BigDecimal ulp = c.ulp();
            // the nearest p-digit decimal may miss where the float's neighbours are unevenly
            // spaced (powers of two) while the next one still reads back
            for (BigDecimal cand : new BigDecimal[] {c, c.subtract(ulp), c.add(ulp)}) {
                if (cand.signum() == 0 || cand.precision() > p || Float.parseFloat(cand.toString()) != f)
                    continue;
                if (best == null || cand.subtract(exact).abs().compareTo(best.subtract(exact).abs()) < 0)
                    best = cand;
            }
            if (best != null)
                return Double.parseDouble(best.toString());
        }
        return (double) f; // not reached: 9 digits always read back
    }

    /** Closes what is there, logging (not throwing) a failure: clean-up must go on. */
    static void closeQuietly(AutoCloseable... things) {
        for (AutoCloseable thing : things) {
            try {
                if (thing != null)
                    thing.close();
            } catch (Exception e) {
                System.err.println("abworker-java: closing " + thing.getClass().getSimpleName() + ": " + e);
            }
        }
    }

    /** Rolls back the connection's open transaction, if it has one, back to autocommit. */
    static void rollbackIfOpen(Connection c) {
        try {
            if (c != null && !c.getAutoCommit()) {
                c.rollback();
                c.setAutoCommit(true);
            }
        } catch (SQLException e) {
            System.err.println("abworker-java: rollback: " + e);
        }
    }
}
