package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.StringJoiner;
import org.postgresql.PGConnection;
import org.postgresql.PGResultSetMetaData;
import org.postgresql.PGStatement;
import org.postgresql.jdbc.PgResultSet;
import org.postgresql.util.DriverInfo;

/** java-pgjdbc: the PostgreSQL JDBC driver (pgjdbc), with every behaviour that would change a
 * mode's meaning pinned (see settings()).
 *
 * Two connections are opened at open time: "main" (conn: preferQueryMode=extended,
 * prepareThreshold=0) for extended, prepared, scans and batches, and "simple"
 * (preferQueryMode=simple) for the literal mode. */
final class PgjdbcDriver extends JdbcDriver {
    // type OIDs (catalog/pg_type_d.h)
    private static final int BOOLOID = 16, BYTEAOID = 17, INT8OID = 20, INT2OID = 21, INT4OID = 23, OIDOID = 26,
            XIDOID = 28, CIDOID = 29, FLOAT4OID = 700, FLOAT8OID = 701, DATEOID = 1082, TIMEOID = 1083,
            TIMESTAMPOID = 1114, TIMESTAMPTZOID = 1184, NUMERICOID = 1700;
    private static final String APPLICATION_NAME = "abworker-java";
    /** hello's read_only setting of java-pgjdbc and the layers over it */
    static final String READ_ONLY = "endpoint read_only: options=-c default_transaction_read_only=on in the startup "
            + "packet (beside -c search_path=<schema> when there is a schema), on every connection the method opens; "
            + "absent or false: not sent";
    private static final String UNIX_FACTORY = "org.newsclub.net.unix.AFUNIXSocketFactory$FactoryArg";

    // settings from the method name
    private int fetchSize = 0;
    private boolean rewriteBatchedInserts = false;

    private Properties simpleProps; // props: the main connection's
    private Connection simple;      // conn: the main connection
    private long mainPid, simplePid;
    private boolean unixSocket;

    // per step: stmt is literal's (simple connection) or a scan's (main); ps is extended's,
    // prepared's or a batch's
    private boolean hasFloat4;

    PgjdbcDriver() {
    }

    private PgjdbcDriver(PgjdbcDriver of) {
        super(of);
        fetchSize = of.fetchSize;
        rewriteBatchedInserts = of.rewriteBatchedInserts;
        simpleProps = of.simpleProps;
        unixSocket = of.unixSocket;
    }

    @Override
    String driverName() {
        return "pgjdbc (org.postgresql:postgresql)";
    }

    @Override
    String driverVersion() {
        // read from the class loaded, not the constant javac copies in at compile time: a pgjdbc
        // jar put ahead of this worker's on the class path (a driver version,
        // src/accessbench/methods/versions.py) reports its own
        try {
            return (String) DriverInfo.class.getField("DRIVER_VERSION").get(null);
        } catch (ReflectiveOperationException e) {
            return "unknown (" + e + ")";
        }
    }

    @Override
    List<String> dbms() {
        return List.of("postgresql");
    }

    @Override
    String batchStyle() {
        return rewriteBatchedInserts
                ? "addBatch per row + executeBatch on one PreparedStatement, one transaction per group; "
                        + "reWriteBatchedInserts=true: pgjdbc rewrites the INSERT into multi-row VALUES"
                : "addBatch per row + executeBatch on one PreparedStatement (server-prepared in the first group), "
                        + "one transaction per group";
    }

    @Override
    void configure(String key, String value) throws WorkerError {
        switch (key) {
            case "fetchSize" -> {
                try {
                    fetchSize = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    fetchSize = -1;
                }
                if (fetchSize < 0)
                    throw WorkerError.unsupported("fetchSize must be an integer >= 0, not '" + value + "'");
            }
            case "reWriteBatchedInserts" -> {
                if (!value.equals("true") && !value.equals("false"))
                    throw WorkerError.unsupported("reWriteBatchedInserts is true or false, not '" + value + "'");
                rewriteBatchedInserts = value.equals("true");
            }
            default -> throw WorkerError.unsupported("java-pgjdbc has no setting " + key + "=" + value
                    + " (fetchSize=N, reWriteBatchedInserts=true|false)");
        }
    }

    @Override
    void settings(ObjectNode s) {
        s.put("connections", "two, both opened at open (untimed): 'main' (preferQueryMode=extended) for extended, "
                + "prepared, scans and batches; 'simple' (preferQueryMode=simple) for literal");
        tlsSettings(s);
        s.put("search_path", "options=-c search_path=<schema> (startup packet)");
        s.put("read_only", READ_ONLY);
        s.put("unix sockets", "junixsocket AFUNIXSocketFactory$FactoryArg with socketFactoryArg=<dir>/.s.PGSQL.<port> "
                + "when the endpoint's host is a directory (pgjdbc has no unix sockets of its own)");
        s.put("connection properties", "ApplicationName=" + APPLICATION_NAME + ", prepareThreshold=0 (main), "
                + "preparedStatementCacheQueries=0, preparedStatementCacheSizeMiB=0, defaultRowFetchSize=0, "
                + "binaryTransfer=true (default), tcpKeepAlive=false, tcpNoDelay=true, autosave=never, "
                + "adaptiveFetch=false, loginTimeout=0 (connect in the calling thread), "
                + "reWriteBatchedInserts=" + rewriteBatchedInserts + "; assumeMinServerVersion unset (default), so "
                + "pgjdbc sends SET application_name in a round trip of its own after the startup (every connect); "
                + "without a password (unix path) pgjdbc looks for a pgpass file at each connect (there is none)");
        s.put("session", "pgjdbc's startup packet sets DateStyle=ISO, client_encoding=UTF8, TimeZone=UTC (the JVM's, set at start)");
        s.put("statement cache", "off (preparedStatementCacheQueries=0): closing a statement releases its "
                + "server-side statement, so every step prepares afresh");
        s.put("autocommit", "on, except inside a commit_every group, a batch group and (fetchSize>0) a cursor read: "
                + "setAutoCommit(false) (pgjdbc sends BEGIN with the group's first statement, no round trip of its own), "
                + "commit() (COMMIT), setAutoCommit(true)");
        s.put("literal", "Statement.executeQuery/executeUpdate of the text with values inlined, on the simple "
                + "connection: simple query protocol ('Q'), text results; one Statement per step");
        s.put("extended", "one PreparedStatement per step (made in the first operation) with prepareThreshold=0: "
                + "unnamed statement, Parse/Bind/Describe/Execute/Sync every execution, text results");
        s.put("prepared", "one PreparedStatement per step (made in the first operation) with setPrepareThreshold(1): "
                + "named server statement parsed in the first execution, then Bind/Execute; pgjdbc asks for binary "
                + "results (its default binaryTransfer: int, float, numeric, date/time, bytea columns) from the second "
                + "execution on; closed after the step, and the Close flushed at once with isValid (an empty query), untimed");
        s.put("parameters", "by the parameter's type: int setLong (int8), bool setBoolean (bool), float setDouble "
                + "(float8), decimal setBigDecimal (numeric), text setString (varchar: stringtype default), date "
                + "setObject(LocalDate) (date), timestamp setObject(LocalDateTime) (timestamp), bytes setBytes (bytea); "
                + "NULL via setNull with the JDBC type of the parameter's type (BIGINT, BOOLEAN, DOUBLE, NUMERIC, "
                + "VARCHAR, DATE, TIMESTAMP, VARBINARY: the same OIDs, a timestamp's unspecified), so a named "
                + "statement is never re-prepared for a NULL");
        s.put("scan", fetchSize > 0
                ? "Statement.executeQuery on the main connection with setFetchSize(" + fetchSize + "): a portal read "
                        + fetchSize + " rows per Execute, inside a transaction (pgjdbc fetches with a cursor only with "
                        + "autocommit off)"
                : "Statement.executeQuery on the main connection (extended protocol, unnamed statement, text results), "
                        + "fetch size 0: the whole result buffered by pgjdbc");
        s.put("fetchSize", fetchSize > 0
                ? fetchSize + " rows per round trip for every statement that returns rows (scans, extended and "
                        + "prepared reads), each read in its own transaction unless commit_every opened one; literal reads "
                        + "are unsupported (the simple protocol has no row-limited Execute)"
                : "0 (whole result buffered)");
        s.put("batch", batchStyle() + "; the PreparedStatement uses setPrepareThreshold(1); per group pgjdbc sends "
                + "BEGIN, then Bind/Describe/Execute per row (Parse in the first group) and one Sync: one round trip, "
                + "then COMMIT" + (rewriteBatchedInserts ? "; the rewritten statements carry 2^k rows each (a group of 7 "
                + "is sent as 4 + 2 + 1), each a named statement; pgjdbc closes only the last one used when the "
                + "PreparedStatement closes, the others when they are garbage-collected" : ""));
        s.put("decoding", "by type OID of each column (PgResultSet.getColumnOID; ResultSetMetaData.getColumnTypeName "
                + "would query the catalog): int2/4/8/oid → getLong; float8 → getDouble; float4 → getDouble of the "
                + "text (text results) or the shortest decimal of getFloat (binary results), as a text-format driver "
                + "reads it; numeric → getBigDecimal (plain text with its scale); bool → getBoolean; timestamp → "
                + "getObject(LocalDateTime); timestamptz → getObject(OffsetDateTime); date → LocalDate; time → "
                + "LocalTime; bytea → getBytes; text types and anything else → getString");
    }

    // ---- connections --------------------------------------------------------------------------------

    /** The endpoint's TLS keys (PROTOCOL.md, open) as pgjdbc's own connection properties,
     * added to p: sslmode as it is (absent or prefer: left unset, pgjdbc's default prefer),
     * sslrootcert with verify-ca/verify-full (a PEM file, read by pgjdbc's default sslfactory,
     * LibPQFactory), sslNegotiation=direct. pgjdbc has no property for the TLS version:
     * tls_version is unsupported. The one TLS mapping of java-pgjdbc and the layers over it. */
    static void tls(JsonNode ep, Properties p) throws WorkerError {
        TlsKeys keys = TlsKeys.of(ep);
        String mode = keys.mode(), rootcert = keys.rootcert(), version = keys.version(), negotiation = keys.negotiation();
        switch (mode) {
            case "", "prefer" -> {
            }
            case "disable", "require", "verify-ca", "verify-full" -> p.setProperty("sslmode", mode);
            default -> throw WorkerError.unsupported("pgjdbc has no sslmode " + mode);
        }
        if (!rootcert.isEmpty() && keys.verifies())
            p.setProperty("sslrootcert", rootcert);
        if (!version.isEmpty())
            throw WorkerError.unsupported("pgjdbc has no TLS protocol version property (tls_version=" + version
                    + "): its LibPQFactory takes the JVM's default SSLContext protocols");
        switch (negotiation) {
            case "", "postgres" -> {
            }
            case "direct" -> p.setProperty("sslNegotiation", "direct");
            default -> throw WorkerError.unsupported("pgjdbc has no sslNegotiation " + negotiation);
        }
    }

    /** hello's tls setting of java-pgjdbc and the layers over it */
    static void tlsSettings(ObjectNode s) {
        s.put("tls", "pgjdbc's own connection properties, its default sslfactory (LibPQFactory): sslmode=disable|"
                + "require|verify-ca|verify-full as the endpoint's sslmode (disable: no SSLRequest is sent; absent or "
                + "prefer: left unset, pgjdbc's default prefer); sslrootcert=<the endpoint's PEM file> with verify-ca "
                + "and verify-full (require: pgjdbc checks no certificate; verify-ca: the chain only, no host name; "
                + "verify-full: the chain and the host name, PGjdbcHostnameVerifier); sslNegotiation=direct for "
                + "sslnegotiation=direct (TLS from the first byte, ALPN 'postgresql'); gssEncMode=disable; "
                + "tls_version: unsupported (pgjdbc has no property for the TLS version: the JVM's defaults, TLSv1.3 "
                + "and TLSv1.2, are offered). The TLS handshake is inside the connect's time; pgjdbc makes a new "
                + "LibPQFactory (reading sslrootcert, a new SSLContext) at every connect and offers no way to reuse "
                + "one through its properties, so no TLS session is resumed across connections");
    }

    private Properties props(JsonNode ep, Properties tls, boolean simpleMode) {
        Properties p = credentials(ep);
        p.putAll(tls);
        p.setProperty("gssEncMode", "disable");
        // startup-packet settings: no round trip of their own
        StringJoiner options = new StringJoiner(" ");
        String schema = ep.path("schema").asText("");
        if (!schema.isEmpty())
            options.add("-c search_path=" + schema);
        if (readOnly(ep))
            options.add("-c default_transaction_read_only=on");
        if (options.length() > 0)
            p.setProperty("options", options.toString());
        p.setProperty("ApplicationName", APPLICATION_NAME);
        p.setProperty("preferQueryMode", simpleMode ? "simple" : "extended");
        p.setProperty("prepareThreshold", "0");
        p.setProperty("preparedStatementCacheQueries", "0");
        p.setProperty("preparedStatementCacheSizeMiB", "0");
        p.setProperty("defaultRowFetchSize", "0");
        p.setProperty("binaryTransfer", "true");
        p.setProperty("tcpKeepAlive", "false");
        p.setProperty("tcpNoDelay", "true");
        p.setProperty("autosave", "never");
        p.setProperty("adaptiveFetch", "false");
        p.setProperty("loginTimeout", "0");
        p.setProperty("reWriteBatchedInserts", Boolean.toString(rewriteBatchedInserts));
        if (unixSocket) {
            p.setProperty("socketFactory", UNIX_FACTORY);
            p.setProperty("socketFactoryArg", ep.path("host").asText() + "/.s.PGSQL." + ep.path("port").asText());
        }
        return p;
    }

    @Override
    void useEndpoint(JsonNode ep) throws WorkerError {
        String host = ep.path("host").asText("");
        String port = ep.path("port").asText("5432");
        unixSocket = host.startsWith("/");
        if (unixSocket) {
            try {
                if (!org.newsclub.net.unix.AFUNIXSocket.isSupported())
                    throw WorkerError.unsupported("unix sockets: junixsocket is not supported on this platform");
            } catch (LinkageError e) {
                throw WorkerError.unsupported("unix sockets: junixsocket cannot load its native library: " + e);
            }
        }
        url = serverUrl("jdbc:postgresql://", unixSocket ? "localhost" : host, port, ep);
        Properties tls = new Properties();
        tls(ep, tls);
        props = props(ep, tls, false);
        simpleProps = props(ep, tls, true);
        jdbc = new org.postgresql.Driver(); // classes loaded before the clock
    }

    /** The simple connection, opened after connect_ns; both backends' pids. */
    @Override
    void opened(ObjectNode answer) throws SQLException {
        simple = jdbc.connect(url, simpleProps);
        PGConnection pg = conn.unwrap(PGConnection.class);
        mainPid = pg.getBackendPID();
        simplePid = simple.unwrap(PGConnection.class).getBackendPID();
        answer.put("server_pid", mainPid);
        String version = pg.getParameterStatus("server_version");
        if (version != null)
            answer.put("server_version", version);
    }

    @Override
    void close() {
        super.close();
        closeQuietly(simple);
        simple = null;
    }

    private static boolean usesSimple(Step st) {
        return st.kind == Step.EXEC && st.mode == Step.LITERAL;
    }

    @Override
    Connection conn(Step st) {
        return usesSimple(st) ? simple : conn;
    }

    // ---- more clients (steps under load) --------------------------------------------------------

    @Override
    Driver client() {
        return new PgjdbcDriver(this);
    }

    /** One connection, of the kind the step's mode uses (a client needs no second one). */
    @Override
    void connect(Step st) throws SQLException {
        if (usesSimple(st)) {
            simple = jdbc.connect(url, simpleProps);
            simplePid = simple.unwrap(PGConnection.class).getBackendPID();
        } else {
            super.connect(st);
            mainPid = conn.unwrap(PGConnection.class).getBackendPID();
        }
    }

    @Override
    void attach(Step st, Connection c) {
        if (usesSimple(st))
            simple = c;
        else
            super.attach(st, c);
    }

    @Override
    String jdbcDriverClass() {
        return org.postgresql.Driver.class.getName();
    }

    @Override
    Properties connectProperties(Step st) {
        return usesSimple(st) ? simpleProps : props;
    }

    @Override
    String isValidDoes() {
        return "pgjdbc's isValid: an empty query, one round trip";
    }

    @Override
    long[] serverPids(Step st) {
        return new long[] {conn(st) == simple ? simplePid : mainPid};
    }

    // ---- steps --------------------------------------------------------------------------------

    @Override
    void stepBegin(Step st) throws SQLException, WorkerError {
        super.stepBegin(st);
        hasFloat4 = false; // any result of the step's (a load's statements each have their own) has a float4
        if (fetchSize > 0 && st.kind == Step.EXEC && st.mode == Step.LITERAL && st.fetch)
            throw WorkerError.unsupported("fetchSize=" + fetchSize + " with literal reads: the simple query protocol "
                    + "has no row-limited Execute, so pgjdbc would read the whole result anyway");
    }

    /** A scan's Statement is on the main connection, with the fetch size; literal's on the
     * simple one. */
    @Override
    Statement createStatement(Step st) throws SQLException {
        Statement s = conn(st).createStatement();
        if (fetchSize > 0 && !usesSimple(st))
            s.setFetchSize(fetchSize);
        return s;
    }

    @Override
    long scanOp(Step st) throws SQLException {
        Statement s = statement(st);
        if (fetchSize > 0)
            return cursorRead(st, () -> s.executeQuery(st.sql));
        return read(st, s.executeQuery(st.sql));
    }

    /** extended: one PreparedStatement per step too (made in the first operation), whose
     * threshold 0 has pgjdbc Parse an unnamed statement at every execution. */
    @Override
    long extendedOp(Step st, int i) throws SQLException {
        return preparedOp(st, i);
    }

    /** The step's PreparedStatement on the main connection: prepare threshold 0 for extended
     * (unnamed, parsed every time), 1 for prepared and batch (named, parsed in the first
     * execution). */
    @Override
    PreparedStatement prepare(Step st) throws SQLException {
        PreparedStatement p = conn.prepareStatement(st.sql);
        p.unwrap(PGStatement.class).setPrepareThreshold(st.mode == Step.EXTENDED ? 0 : 1);
        if (fetchSize > 0)
            p.setFetchSize(fetchSize);
        return p;
    }

    /** A load's statement on the main connection (prepareThreshold=0: unnamed, parsed at every
     * execution, as extended), with the fetch size. */
    @Override
    PreparedStatement loadStatement(Step st, String sql) throws SQLException {
        PreparedStatement p = conn.prepareStatement(sql);
        if (fetchSize > 0)
            p.setFetchSize(fetchSize);
        return p;
    }

    /** With a fetch size, a load runs in one transaction (pgjdbc reads with a cursor only with
     * autocommit off), unless commit_every has one open. */
    @Override
    long loadOp(Step st, int i) throws SQLException, WorkerError {
        if (fetchSize == 0 || !conn.getAutoCommit())
            return super.loadOp(st, i);
        txnBegin(st);
        long rows = super.loadOp(st, i);
        txnCommit(st);
        return rows;
    }

    @Override
    long execute(Step st, PreparedStatement p) throws SQLException {
        if (!st.fetch)
            return p.executeUpdate();
        if (fetchSize > 0)
            return cursorRead(st, p::executeQuery);
        return read(st, p.executeQuery());
    }

    private interface Query {
        ResultSet run() throws SQLException;
    }

    /** pgjdbc reads with a cursor (fetchSize rows per Execute) only with autocommit off: one
     * transaction per read, unless commit_every has one open. */
    private long cursorRead(Step st, Query q) throws SQLException {
        boolean own = conn.getAutoCommit();
        if (own)
            txnBegin(st);
        long rows = read(st, q.run());
        if (own)
            txnCommit(st);
        return rows;
    }

    /** By type OID (PgResultSet.getColumnOID; ResultSetMetaData.getColumnTypeName would query
     * the catalog). */
    @Override
    byte[] decoders(ResultSet rs) throws SQLException {
        PgResultSet pg = rs.unwrap(PgResultSet.class);
        int nc = rs.getMetaData().getColumnCount();
        byte[] decoders = new byte[nc];
        for (int c = 0; c < nc; c++) {
            decoders[c] = switch (pg.getColumnOID(c + 1)) {
                case INT2OID, INT4OID, INT8OID, OIDOID, XIDOID, CIDOID -> D_INT;
                case FLOAT8OID -> D_DOUBLE;
                case FLOAT4OID -> D_FLOAT4;
                case NUMERICOID -> D_NUMERIC;
                case BOOLOID -> D_BOOL;
                case TIMESTAMPOID -> D_TIMESTAMP;
                case TIMESTAMPTZOID -> D_TIMESTAMPTZ;
                case DATEOID -> D_DATE;
                case TIMEOID -> D_TIME;
                case BYTEAOID -> D_BYTES;
                default -> D_TEXT; // char, name, text, bpchar, varchar, and anything else
            };
            hasFloat4 |= decoders[c] == D_FLOAT4;
        }
        return decoders;
    }

    /** pgjdbc switches a named statement to binary results after its first execution: a float4
     * column's decoder reads the format of each result. */
    @Override
    boolean[] binaryColumns(ResultSet rs) throws SQLException {
        if (!hasFloat4)
            return null;
        final int nc = decoders.length;
        PGResultSetMetaData md = rs.getMetaData().unwrap(PGResultSetMetaData.class);
        boolean[] binary = new boolean[nc];
        for (int c = 0; c < nc; c++)
            binary[c] = md.getFormat(c + 1) == 1;
        return binary;
    }

    /** COMMIT (pgjdbc's commit: a round trip), then autocommit back on. */
    @Override
    void txnCommit(Step st) throws SQLException {
        Connection c = conn(st);
        c.commit();
        c.setAutoCommit(true);
    }

    @Override
    void recover(Step st) {
        super.recover(st);
        rollbackIfOpen(simple);
    }

    /** release, then the Close of a named statement sent at once. (A client's release alone
     * leaves it to the connection's next message: the Terminate of a per-request connection, or
     * the next borrower's query.) */
    @Override
    void stepEnd(Step st) {
        boolean serverPrepared = ps != null && (st.kind == Step.BATCH || st.mode == Step.PREPARED);
        release(st);
        if (serverPrepared && conn != null) {
            // pgjdbc sends the Close of the released named statement with the connection's next
            // query; isValid sends that now (an empty query), so no step carries it.
            try {
                conn.isValid(10);
            } catch (SQLException e) {
                System.err.println("abworker-java: isValid: " + e);
            }
        }
    }
}
