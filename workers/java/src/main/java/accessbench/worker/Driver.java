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
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Properties;

/** One driver: Main parses a step and generates its parameters, then calls stepBegin
 * (untimed), op once per operation (timed or verified), and stepEnd (untimed). */
abstract class Driver {
    /** the method name as given (base and settings) */
    String name;

    abstract String base();

    abstract String driverName();

    abstract String driverVersion();

    abstract List<String> dbms();

    abstract String batchStyle();

    /** the exec modes it has (capabilities.modes); "record" also reads scans record by record */
    List<String> modes() {
        return List.of("literal", "extended", "prepared");
    }

    /** a key=value setting from the method name; throws unsupported for an unknown one */
    abstract void configure(String key, String value) throws WorkerError;

    /** every setting that changes behaviour, pinned, in words a reader can check */
    abstract void settings(ObjectNode s);

    /** connects; puts connect_ns and, when known, server_pid and server_version in the answer */
    abstract void open(JsonNode endpoint, ObjectNode answer) throws SQLException, WorkerError;

    abstract void close();

    /** parameters as the driver binds them (before the clock): e.g. timestamps */
    Object adapt(Object v) {
        return v;
    }

    /** untimed preparation of a step (no statement is prepared here: that is the first op's) */
    void stepBegin(Step st) throws SQLException, WorkerError {
    }

    /** operation i: returns rows read (reads), or rows changed/written */
    abstract long op(Step st, int i) throws SQLException, WorkerError;

    abstract void txnBegin(Step st) throws SQLException;

    abstract void txnCommit(Step st) throws SQLException;

    /** after a failed step: leave no transaction open, so the connection stays usable */
    abstract void recover(Step st);

    /** release what the step made (statements), untimed */
    abstract void stepEnd(Step st);

    /** the backend(s) that served the step, or none */
    long[] serverPids(Step st) {
        return new long[0];
    }

    // ---- more clients: steps under load (Policy) ------------------------------------------------

    /** Another driver of the same method and endpoint (settings, URL, connection properties)
     * with no connection: one more client of a loaded step, or one pooled connection's. */
    abstract Driver client();

    /** Opens this driver's own connection for the step: the one the step's mode uses. */
    abstract void connect(Step st) throws SQLException;

    /** Uses a connection this driver did not open (a pooled one) for the step. */
    abstract void attach(Step st, Connection c);

    /** Closes the statements the step made, with no round trip of its own (the connection is
     * closed or goes back to a pool next). */
    abstract void release(Step st);

    /** How connect(st) connects, for a pool: the JDBC driver class, URL and properties. */
    abstract String jdbcDriverClass();

    abstract String jdbcUrl();

    abstract Properties connectProperties(Step st);

    /** what a pool's validation of one of these connections (JDBC4 isValid) sends */
    abstract String isValidDoes();

    // ---- shared by the drivers: connection properties, parameters, decoding ----------------------

    /** A client/server endpoint's JDBC URL: prefix (e.g. "jdbc:postgresql://"), host (an IPv6
     * address bracketed), port and the endpoint's database, percent-encoded. */
    static String serverUrl(String prefix, String host, String port, JsonNode ep) {
        String urlHost = host.contains(":") ? "[" + host + "]" : host;
        return prefix + urlHost + ":" + port + "/"
                + URLEncoder.encode(ep.path("database").asText(""), StandardCharsets.UTF_8).replace("+", "%20");
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

    /** Binds one row of adapted parameters (Long, String, LocalDateTime, Double, Boolean,
     * BigInteger, null); NULL as setNull with nullTypes[k], or Types.NULL when nullTypes is null. */
    static void bind(PreparedStatement p, Object[] values, int[] nullTypes) throws SQLException {
        for (int k = 0; k < values.length; k++) {
            Object v = values[k];
            int j = k + 1;
            if (v == null)
                p.setNull(j, nullTypes == null ? Types.NULL : nullTypes[k]);
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
            else if (v instanceof BigInteger x)
                p.setBigDecimal(j, new BigDecimal(x));
            else if (v instanceof BigDecimal x)
                p.setBigDecimal(j, x);
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
            D_BYTES = 13;          // getBytes

    /** Reads every row of rs (not closed here), decoding every value by dec; binary: per
     * column, whether its results are binary (read only for D_FLOAT4 columns). Returns the rows. */
    static long readRows(Step st, ResultSet rs, byte[] dec, boolean[] binary) throws SQLException {
        final int nc = dec.length;
        final Row row = st.row;
        long count = 0;
        while (rs.next()) {
            row.reset(nc);
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
                        if (v == 0 && rs.wasNull())
                            row.setNull(c);
                        else
                            row.setDouble(c, v);
                    }
                    case D_FLOAT -> {
                        float v = rs.getFloat(j);
                        if (v == 0 && rs.wasNull())
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
                    default -> row.set(c, Row.TEXT, rs.getString(j));
                }
            }
            st.emit(row);
            count++;
        }
        st.ncols = nc;
        return count;
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

    static String firstLine(String s) {
        if (s == null)
            return "";
        s = s.strip();
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl).strip();
    }
}
