package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.List;
import java.util.Properties;
import org.mariadb.jdbc.util.VersionFactory;

/** java-mariadb: MariaDB Connector/J 3 (org.mariadb.jdbc), pure Java, with every behaviour that
 * would change a mode's meaning pinned (see settings()).
 *
 * One connection. Statement (COM_QUERY, text protocol) for literal, scans and record-level
 * access (HANDLER); PreparedStatement with useServerPrepStmts=true (COM_STMT_PREPARE /
 * COM_STMT_EXECUTE, binary protocol) and its prepare cache off for extended and prepared. */
final class MariadbDriver extends JdbcDriver {
    /** HANDLER … READ NEXT returns this many records per round trip in a record-level scan */
    static final int HANDLER_ROWS = 1000;
    /** the serving thread's OS id: the runner reads its CPU clock (one thread per connection) */
    static final String SERVER_TID = "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()";

    /** hello's read_only setting of java-mariadb and the layers over it */
    static final String READ_ONLY = "endpoint read_only: sessionVariables=tx_read_only=1, which Connector/J appends "
            + "to the SET query it sends after authentication on every connection it makes (open's, connect steps', "
            + "clients', pools'): the session is SET SESSION TRANSACTION READ ONLY's, a write fails with 1792 "
            + "(SQLSTATE 25006); absent or false: not set";

    private long tid;  // the serving thread of conn; 0 = not asked yet (a client's new driver, or closed)
    private String socket;

    // per step: stmt is literal's, a scan's and record's (escape processing off); ps is prepared's
    // or a batch's
    private boolean handlerOpen;  // the step's HANDLER is open on conn
    private String readFirst, readNext; // record scan: HANDLER h READ FIRST|NEXT LIMIT HANDLER_ROWS

    MariadbDriver() {
    }

    private MariadbDriver(MariadbDriver of) {
        super(of);
        socket = of.socket;
    }

    @Override
    String driverName() {
        return "MariaDB Connector/J (org.mariadb.jdbc:mariadb-java-client)";
    }

    @Override
    String driverVersion() {
        return VersionFactory.getInstance().getVersion();
    }

    @Override
    List<String> dbms() {
        return List.of("mariadb");
    }

    @Override
    List<String> modes() {
        return List.of("literal", "extended", "prepared", "record");
    }

    @Override
    String batchStyle() {
        return "addBatch per row + executeBatch on one server PreparedStatement (prepared in the first group), "
                + "one transaction per group: an INSERT goes as COM_STMT_BULK_EXECUTE (useBulkStmtsForInserts), every "
                + "row of the group in one packet and one round trip";
    }

    @Override
    void configure(String key, String value) throws WorkerError {
        throw WorkerError.unsupported("java-mariadb has no setting " + key + "=" + value);
    }

    @Override
    void settings(ObjectNode s) {
        tlsSettings(s);
        s.put("connection", "one, opened at open; unix path: localSocket=<socket file> (Connector/J's unix-socket "
                + "transport, JNA " + jnaVersion() + " calling socket/connect/send/recv of the C library: every read "
                + "and write a JNA call); tcp: host:port, Connector/J's java.net.Socket with TCP_NODELAY; TLS and "
                + "compression as the endpoint asks (see tls, compress); the endpoint's user and password "
                + "(mysql_native_password on both paths)");
        s.put("connection properties", "set (only what differs from the defaults: Connector/J parses each "
                + "property by reflection at every connect): useServerPrepStmts=true, cachePrepStmts=false, "
                + "tinyInt1isBit=false, transformedBitIsBoolean=false, yearIsDateType=false, "
                + "jdbcCompliantTruncation=false, autocommit=true; defaults relied upon, checked at open against "
                + "Connector/J's parsed configuration: useAffectedRows=false, useBulkStmts=false, "
                + "useBulkStmtsForInserts=true, rewriteBatchedStatements=false, disablePipeline=false, "
                + "allowMultiQueries=false, useCompression (see compress), defaultFetchSize=0, "
                + "useReadAheadInput=false, useResetConnection=false, sslMode, serverSslCert and "
                + "enabledSslProtocolSuites as tls says, trustStore unset, timezone unset, sessionVariables unset "
                + "(endpoint read_only: see read_only); "
                + "other defaults kept: connectTimeout 30 s (the connect runs in the calling thread), tcpKeepAlive=true (probes only "
                + "after the kernel's 2 h idle), allowLocalInfile=true (a capability flag: no LOAD DATA LOCAL is sent)");
        s.put("read_only", READ_ONLY);
        s.put("found rows", "useAffectedRows=false: Connector/J sets the client flag CLIENT_FOUND_ROWS, so an UPDATE "
                + "counts the rows it matched");
        s.put("session", "after authentication Connector/J sends one query of its own (every connect): SET "
                + "session_track_system_variables (autocommit, character_set_*, time_zone, tx_isolation), "
                + "session_track_schema=1, NAMES utf8mb4 (collation utf8mb4_general_ci); with "
                + "jdbcCompliantTruncation=false it leaves sql_mode as the server has it; no time zone is set (timezone "
                + "unset: LocalDateTime values are neither converted nor read through a zone)");
        s.put("connect", "org.mariadb.jdbc.Driver.connect with the same URL and properties (TCP or unix "
                + "connect, handshake, mysql_native_password, then the SET query above: two round trips after the "
                + "greeting), then close (COM_QUIT); per-request operations connect the same way; every connect "
                + "parses the URL and properties into a Configuration (reflection) and loads its codec and "
                + "authentication plugins (ServiceLoader): most of a connect's client CPU");
        s.put("pooled connections", "made by HikariCP through org.mariadb.jdbc.Driver with this method's URL and "
                + "properties; at the fill HikariCP reads the isolation level once (SELECT @@session.tx_isolation, "
                + "untimed); a borrow or a return sends nothing (autocommit and the other states HikariCP would reset are "
                + "never changed through its proxy), besides the validation (COM_PING) of a connection idle for over "
                + "500 ms");
        s.put("statement cache", "off (cachePrepStmts=false): closing a PreparedStatement sends COM_STMT_CLOSE at "
                + "once, so every step (and every extended operation) prepares afresh");
        s.put("autocommit", "on; a commit_every group and a batch group run inside setAutoCommit(false) ('set "
                + "autocommit=0', a round trip) … setAutoCommit(true) ('set autocommit=1', a round trip, which "
                + "commits the group): two round trips per transaction, as BEGIN … COMMIT");
        s.put("literal", "Statement.executeQuery/executeUpdate of the text with values inlined (MariaDB literal "
                + "rules: backslashes doubled, bytes as X'…'), escape processing off (the text is sent as it is): "
                + "COM_QUERY, text protocol; one Statement per step");
        s.put("extended", "a new PreparedStatement per operation (useServerPrepStmts=true): Connector/J writes "
                + "COM_STMT_PREPARE and COM_STMT_EXECUTE (statement id -1: the one just prepared) together and reads "
                + "both answers, one round trip, as mariadb_stmt_execute_direct; binary protocol; closed in the "
                + "operation (COM_STMT_CLOSE, no answer)");
        s.put("prepared", "one PreparedStatement per step, made in the first operation: COM_STMT_PREPARE with its "
                + "first COM_STMT_EXECUTE (one round trip), then COM_STMT_EXECUTE per operation, binary protocol; "
                + "closed after the step (COM_STMT_CLOSE), untimed");
        s.put("record", "HANDLER table OPEN AS ab_h<n> when the step begins (untimed; under per-request inside the "
                + "operation, on its new connection); per operation HANDLER … READ `index` = (key literals), or for a "
                + "scan READ FIRST then READ NEXT, LIMIT " + HANDLER_ROWS + " records per round trip, until a short "
                + "batch; HANDLER … CLOSE after the step; Statement.executeQuery (COM_QUERY), text protocol");
        s.put("scan", "Statement.executeQuery (COM_QUERY, text protocol), escape processing off, fetch size 0: the "
                + "whole result read before executeQuery returns");
        s.put("parameters", "by the parameter's type: int setLong (LONGLONG), bool setBoolean (TINYINT 1/0), float "
                + "setDouble (DOUBLE), decimal setBigDecimal (NEWDECIMAL, as its text), text setString (VAR_STRING), "
                + "date setObject(LocalDate) (DATE), timestamp setObject(LocalDateTime) (binary DATETIME with its "
                + "microseconds), bytes setBytes (BLOB); NULL via setNull with the JDBC type of the parameter's type, "
                + "which Connector/J does not use: every NULL goes alike, its bit set in the null bitmap and the "
                + "parameter declared VARCHAR (the server reads a NULL from the bitmap whatever the type); the SQL "
                + "text goes through Connector/J's JDBC-escape parser ({fn …}, {ts …}: the suites' statements have "
                + "none)");
        s.put("batch", batchStyle() + "; a group of one row is a plain COM_STMT_EXECUTE (Connector/J uses bulk for "
                + "two rows or more); other statements (useBulkStmts=false) go as one COM_STMT_EXECUTE per row, all "
                + "written before the answers are read; the statement is prepared with the first group's execute "
                + "(one round trip) and closed after the step");
        s.put("decoding", "by the column's JDBC type from the result's column definitions (no catalog query): "
                + "TINYINT/SMALLINT/INTEGER/BIGINT → getLong (BOOLEAN = TINYINT(1) is TINYINT with tinyInt1isBit=false: "
                + "an integer 0/1; BIGINT UNSIGNED → getObject(BigInteger), its 64 bits); "
                + "DOUBLE → getDouble; FLOAT → getFloat as its shortest decimal (the same in both protocols); "
                + "DECIMAL → getBigDecimal (plain text with its scale); DATETIME/TIMESTAMP → "
                + "getObject(LocalDateTime); DATE → LocalDate; TIME → LocalTime; BINARY/VARBINARY/BLOB/BIT → "
                + "getBytes; a JDBC BOOLEAN column (none with these properties) → getBoolean; text types and "
                + "anything else → getString");
        s.put("server_pid", "the serving thread's OS id: " + SERVER_TID + " (at open, untimed; for another client "
                + "after its trial)");
    }

    private static String jnaVersion() {
        try {
            return com.sun.jna.Native.VERSION;
        } catch (LinkageError e) {
            return "(not loadable: " + e + ")";
        }
    }

    // ---- connections --------------------------------------------------------------------------------

    /** The endpoint's TLS keys (PROTOCOL.md, open, in libpq's words) and compress as Connector/J's
     * own connection properties, added to p: sslMode=disable|trust|verify-ca|verify-full for
     * disable|require|verify-ca|verify-full (absent or prefer: left unset, Connector/J's default
     * disable: it has no opportunistic mode), serverSslCert=<the CA's PEM file> with verify-ca and
     * verify-full, enabledSslProtocolSuites=<the version> for tls_version, useCompression=true for
     * compress; sslnegotiation=direct is unsupported. The one TLS mapping of java-mariadb and the
     * layers over it. */
    static void tls(JsonNode ep, Properties p) throws WorkerError {
        TlsKeys keys = TlsKeys.of(ep);
        String mode = keys.mode(), rootcert = keys.rootcert(), version = keys.version(), negotiation = keys.negotiation();
        switch (mode) {
            case "", "prefer" -> {
            }
            case "disable" -> p.setProperty("sslMode", "disable");
            case "require" -> p.setProperty("sslMode", "trust");
            case "verify-ca", "verify-full" -> {
                p.setProperty("sslMode", mode);
                if (!rootcert.isEmpty())
                    p.setProperty("serverSslCert", rootcert);
            }
            default -> throw WorkerError.unsupported("Connector/J has no sslMode for sslmode=" + mode);
        }
        if (!version.isEmpty()) {
            if (!version.equals("TLSv1.2") && !version.equals("TLSv1.3"))
                throw WorkerError.unsupported("tls_version " + version + ": TLSv1.2 or TLSv1.3");
            p.setProperty("enabledSslProtocolSuites", version);
        }
        if (negotiation.equals("direct"))
            throw WorkerError.unsupported("Connector/J has no sslnegotiation=direct (MariaDB's protocol starts TLS "
                    + "only after the server's greeting, with an SSL request)");
        if (ep.path("compress").asBoolean(false))
            p.setProperty("useCompression", "true");
    }

    /** hello's tls and compress settings of java-mariadb and the layers over it */
    static void tlsSettings(ObjectNode s) {
        s.put("tls", "Connector/J's own connection properties: sslMode=disable for sslmode=disable (no SSL request, "
                + "no probing: Connector/J never tries TLS unasked), sslMode=trust for require (encrypted, no "
                + "certificate checked), sslMode=verify-ca (the chain only, no host name) and sslMode=verify-full (the "
                + "chain and the host name) with serverSslCert=<the endpoint's sslrootcert PEM file> (then only that "
                + "authority is trusted, no identity deferred to the password); absent or prefer: left unset "
                + "(Connector/J's default, disable); tls_version: enabledSslProtocolSuites=<it> (the only protocol "
                + "the SSLSocket enables: minimum and maximum); sslnegotiation=direct: unsupported (MariaDB's protocol "
                + "has no direct TLS). The TLS handshake is inside the connect's time; Connector/J caches the trust "
                + "manager made of serverSslCert across connects (keyed by the options and the file's modification "
                + "time and length) and makes a new SSLContext per connect, so no TLS session is resumed");
        s.put("compress", "useCompression=true for the endpoint's compress: the client flag CLIENT_COMPRESS, "
                + "the protocol's zlib compression (java.util.zip Deflater/Inflater) from the end of the handshake "
                + "on; Connector/J deflates a packet it sends only from 1536 bytes (smaller ones go uncompressed in "
                + "the compressed framing); otherwise off (useCompression=false, the default)");
    }

    private Properties props(JsonNode ep) throws WorkerError {
        Properties p = credentials(ep);
        tls(ep, p);
        if (socket != null)
            p.setProperty("localSocket", socket);
        // Only what differs from Connector/J's defaults: it parses every property by reflection
        // at every connect (each one costs client CPU there). The defaults that matter are
        // checked once at open (checkConfiguration).
        p.setProperty("useServerPrepStmts", "true");
        p.setProperty("cachePrepStmts", "false");
        p.setProperty("tinyInt1isBit", "false");
        p.setProperty("transformedBitIsBoolean", "false");
        p.setProperty("yearIsDateType", "false");
        p.setProperty("jdbcCompliantTruncation", "false");
        p.setProperty("autocommit", "true");
        // rides in Connector/J's own SET query after authentication: no round trip of its own
        if (readOnly(ep))
            p.setProperty("sessionVariables", "tx_read_only=1");
        return p;
    }

    /** The configuration Connector/J makes of the URL and properties, checked against what
     * settings() says (untimed, at open): the pinned values and the defaults relied upon. */
    private void checkConfiguration() throws SQLException, WorkerError {
        org.mariadb.jdbc.Configuration c = org.mariadb.jdbc.Configuration.parse(url, props);
        StringBuilder bad = new StringBuilder();
        expect(bad, "useServerPrepStmts", c.useServerPrepStmts(), true);
        expect(bad, "cachePrepStmts", c.cachePrepStmts(), false);
        expect(bad, "tinyInt1isBit", c.tinyInt1isBit(), false);
        expect(bad, "transformedBitIsBoolean", c.transformedBitIsBoolean(), false);
        expect(bad, "yearIsDateType", c.yearIsDateType(), false);
        expect(bad, "jdbcCompliantTruncation", c.jdbcCompliantTruncation(), false);
        expect(bad, "autocommit", c.autocommit(), Boolean.TRUE);
        expect(bad, "useAffectedRows", c.useAffectedRows(), false);
        expect(bad, "useBulkStmts", c.useBulkStmts(), false);
        expect(bad, "useBulkStmtsForInserts", c.useBulkStmtsForInserts(), true);
        expect(bad, "rewriteBatchedStatements", c.rewriteBatchedStatements(), false);
        expect(bad, "disablePipeline", c.disablePipeline(), false);
        expect(bad, "allowMultiQueries", c.allowMultiQueries(), false);
        expect(bad, "useCompression", c.useCompression(), props.getProperty("useCompression") != null);
        expect(bad, "defaultFetchSize", c.defaultFetchSize(), 0);
        expect(bad, "useReadAheadInput", c.useReadAheadInput(), false);
        expect(bad, "useResetConnection", c.useResetConnection(), false);
        expect(bad, "timezone", c.timezone(), null);
        expect(bad, "sessionVariables", c.sessionVariables(), props.getProperty("sessionVariables"));
        expect(bad, "sslMode", c.sslMode(),
                org.mariadb.jdbc.export.SslMode.from(props.getProperty("sslMode", "disable")));
        expect(bad, "serverSslCert", c.serverSslCert(), props.getProperty("serverSslCert"));
        expect(bad, "enabledSslProtocolSuites", c.enabledSslProtocolSuites(),
                props.getProperty("enabledSslProtocolSuites"));
        expect(bad, "trustStore", c.trustStore(), null);
        expect(bad, "localSocket", c.localSocket(), socket);
        if (bad.length() > 0)
            throw new WorkerError("internal", "Connector/J " + driverVersion() + " configures" + bad
                    + ", not what this worker pins and reports", null);
    }

    private static void expect(StringBuilder bad, String key, Object have, Object want) {
        if (!java.util.Objects.equals(have, want))
            bad.append(' ').append(key).append('=').append(have).append(" (want ").append(want).append(')');
    }

    @Override
    void useEndpoint(JsonNode ep) throws SQLException, WorkerError {
        String s = ep.path("socket").asText("");
        socket = s.isEmpty() ? null : s;
        if (socket != null) {
            try {
                com.sun.jna.Native.getDefaultStringEncoding(); // loads JNA's native library
            } catch (LinkageError e) {
                throw WorkerError.unsupported("unix sockets: Connector/J's localSocket needs JNA, which cannot load "
                        + "its native library: " + e);
            }
        }
        String host = socket != null ? "localhost" : ep.path("host").asText("localhost");
        url = serverUrl("jdbc:mariadb://", host, ep.path("port").asText("3306"), ep);
        props = props(ep);
        checkConfiguration();
        jdbc = new org.mariadb.jdbc.Driver(); // classes loaded before the clock
    }

    @Override
    void opened(ObjectNode answer) throws SQLException {
        tid = serverTid(conn);
        answer.put("server_pid", tid);
        answer.put("server_version", conn.getMetaData().getDatabaseProductVersion());
    }

    private static long serverTid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(SERVER_TID)) {
            return r.next() ? r.getLong(1) : 0;
        }
    }

    @Override
    void close() {
        super.close();
        tid = 0;
    }

    // ---- more clients (steps under load) --------------------------------------------------------

    /** Its connection's serving thread is asked for only when wanted (serverPids), never inside
     * an operation. */
    @Override
    Driver client() {
        return new MariadbDriver(this);
    }

    /** Closes the step's statements (a PreparedStatement's COM_STMT_CLOSE has no answer); the
     * HANDLER goes with the connection, which is closed or goes back to a pool next. */
    @Override
    void release(Step st) {
        super.release(st);
        handlerOpen = false;
    }

    @Override
    String jdbcDriverClass() {
        return org.mariadb.jdbc.Driver.class.getName();
    }

    @Override
    String isValidDoes() {
        return "Connector/J's isValid: COM_PING, one round trip";
    }

    @Override
    long[] serverPids(Step st) {
        if (conn == null)
            return new long[0];
        if (tid == 0) { // a client's connection: asked after its trial, untimed
            try {
                tid = serverTid(conn);
            } catch (SQLException e) {
                System.err.println("abworker-java: " + SERVER_TID + ": " + e);
                return new long[0];
            }
        }
        return new long[] {tid};
    }

    // ---- steps --------------------------------------------------------------------------------

    @Override
    void stepBegin(Step st) throws SQLException, WorkerError {
        super.stepBegin(st);
        handlerOpen = false;
        if (st.mode == Step.RECORD) {
            readFirst = "HANDLER " + st.handler + " READ FIRST LIMIT " + HANDLER_ROWS;
            readNext = "HANDLER " + st.handler + " READ NEXT LIMIT " + HANDLER_ROWS;
            if (conn != null)
                openHandler(st);
        }
    }

    /** HANDLER table OPEN AS the step's name, on this driver's connection. */
    private void openHandler(Step st) throws SQLException {
        try (Statement s = conn.createStatement()) {
            s.setEscapeProcessing(false);
            s.execute("HANDLER " + st.recordTable + " OPEN AS " + st.handler);
        }
        handlerOpen = true;
    }

    /** One Statement per step, escape processing off: the text goes as it is. */
    @Override
    Statement createStatement(Step st) throws SQLException {
        Statement s = conn.createStatement();
        s.setEscapeProcessing(false);
        return s;
    }

    /** A keyed HANDLER read, or a record-level scan; the HANDLER is opened here on a
     * per-request connection (inside its operation). */
    @Override
    long recordOp(Step st, int i) throws SQLException {
        if (!handlerOpen)
            openHandler(st);
        if (st.kind == Step.SCAN)
            return recordScan(st);
        return read(st, statement(st).executeQuery(st.texts[i]));
    }

    /** Every record of the table: READ FIRST, then READ NEXT until a batch comes back short. */
    private long recordScan(Step st) throws SQLException {
        Statement s = statement(st);
        long total = 0, got = read(st, s.executeQuery(readFirst));
        total += got;
        while (got == HANDLER_ROWS) {
            got = read(st, s.executeQuery(readNext));
            total += got;
        }
        return total;
    }

    /** By the column's JDBC type from the result's own column definitions (no catalog query). */
    @Override
    byte[] decoders(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        int nc = md.getColumnCount();
        byte[] decoders = new byte[nc];
        for (int c = 0; c < nc; c++) {
            int j = c + 1;
            decoders[c] = switch (md.getColumnType(j)) {
                case Types.TINYINT, Types.SMALLINT, Types.INTEGER -> D_INT;
                case Types.BIGINT -> md.isSigned(j) ? D_INT : D_UINT64;
                case Types.DOUBLE, Types.FLOAT -> D_DOUBLE;
                case Types.REAL -> D_FLOAT;
                case Types.DECIMAL, Types.NUMERIC -> D_DECIMAL;
                case Types.BOOLEAN -> D_BOOL;
                case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> D_TIMESTAMP;
                case Types.DATE -> D_DATE;
                case Types.TIME -> D_TIME;
                case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB, Types.BIT -> D_BYTES;
                default -> D_TEXT; // CHAR, VARCHAR, LONGVARCHAR (TEXT), CLOB, and anything else
            };
        }
        return decoders;
    }

    @Override
    void stepEnd(Step st) {
        boolean closeHandler = handlerOpen && conn != null;
        release(st); // a PreparedStatement's COM_STMT_CLOSE goes now (it has no answer)
        if (closeHandler) {
            try (Statement s = conn.createStatement()) {
                s.execute("HANDLER " + st.handler + " CLOSE");
            } catch (SQLException e) {
                System.err.println("abworker-java: HANDLER " + st.handler + " CLOSE: " + e);
            }
        }
    }
}
