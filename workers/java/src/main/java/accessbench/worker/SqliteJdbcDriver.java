package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteException;
import org.sqlite.SQLiteJDBCLoader;

/** java-sqlite-jdbc: xerial's sqlite-jdbc (the SQLite C library bundled with a JNI binding),
 * in process. */
final class SqliteJdbcDriver extends JdbcDriver {
    static final int BUSY_TIMEOUT_MS = 5000; // what Python's sqlite3 and c-sqlite use

    private String sqliteVersion;
    private boolean readOnly; // the endpoint's read_only: the file opened SQLITE_OPEN_READONLY

    SqliteJdbcDriver() {
    }

    private SqliteJdbcDriver(SqliteJdbcDriver of) {
        super(of);
        sqliteVersion = of.sqliteVersion;
        readOnly = of.readOnly;
    }

    @Override
    String driverName() {
        return "sqlite-jdbc (org.xerial:sqlite-jdbc)";
    }

    private String sqliteVersion() {
        if (sqliteVersion == null) {
            try (Connection c = new org.sqlite.JDBC().connect("jdbc:sqlite::memory:", new Properties());
                    Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT sqlite_version()")) {
                r.next();
                sqliteVersion = r.getString(1);
            } catch (SQLException e) {
                sqliteVersion = "unknown (" + e.getMessage() + ")";
            }
        }
        return sqliteVersion;
    }

    @Override
    String driverVersion() {
        return SQLiteJDBCLoader.getVersion() + " (bundled SQLite " + sqliteVersion() + ")";
    }

    @Override
    List<String> dbms() {
        return List.of("sqlite");
    }

    @Override
    String batchStyle() {
        return "addBatch per row + executeBatch on one PreparedStatement (prepared in the first group), "
                + "inside setAutoCommit(false) … setAutoCommit(true): BEGIN … COMMIT per group";
    }

    @Override
    void configure(String key, String value) throws WorkerError {
        throw WorkerError.unsupported("java-sqlite-jdbc has no setting " + key + "=" + value);
    }

    @Override
    void settings(ObjectNode s) {
        s.put("library", "SQLite " + sqliteVersion() + " bundled in the jar (extracted to java.io.tmpdir and loaded "
                + "once per process), not the system's libsqlite3 that c-sqlite and py-sqlite3 use");
        s.put("open", "SQLiteConfig with busy_timeout=" + BUSY_TIMEOUT_MS + " ms (xerial's default is 3000; pinned to "
                + "c-sqlite's and Python's) and jdbc.get_generated_keys=false (xerial's default true runs "
                + "'SELECT last_insert_rowid()' after every INSERT); open mode READWRITE|CREATE|URI (xerial's default); "
                + "no pragma set: synchronous stays the library default FULL, journal_mode the file's WAL");
        s.put("read_only", "endpoint read_only: SQLiteConfig.setReadOnly(true), open mode READONLY|URI "
                + "(SQLITE_OPEN_READONLY) on every connection: a write fails with SQLITE_READONLY; a pool is set "
                + "readOnly=true to match (xerial refuses to change it on an open connection); absent or false: "
                + "READWRITE|CREATE|URI");
        s.put("autocommit", "on; a commit_every group and a batch group run inside setAutoCommit(false) ('begin;', "
                + "DEFERRED) … setAutoCommit(true) ('commit;')");
        s.put("literal", "a new Statement per operation: executeQuery/executeUpdate of the text with values inlined "
                + "(sqlite3_prepare_v2 + step + finalize)");
        s.put("extended", "a new PreparedStatement per operation: prepare + bind + step + finalize (close)");
        s.put("prepared", "one PreparedStatement per step, prepared in the first operation, then bind + step "
                + "(xerial resets it before each execution); closed (finalized) after the step");
        s.put("scan", "a new Statement per scan: executeQuery, every row stepped, closed");
        s.put("parameters", "by the parameter's type: int setLong (integer), bool setBoolean (xerial binds it as "
                + "integer 1/0: SQLite has no boolean), float setDouble (real), text setString, bytes setBytes (blob), "
                + "NULL setNull; SQLite has no timestamp, date or decimal type: timestamps bound as ISO text "
                + "'YYYY-MM-DD HH:MM:SS[.ffffff]', dates as 'YYYY-MM-DD' and decimals as their plain text (setString, "
                + "as the target stores them); setDate/setTimestamp/setBigDecimal are never used, so xerial's "
                + "date_class/date_string_format do not apply");
        s.put("decoding", "ResultSet.getObject per value, by the value's storage class (sqlite3_column_type): "
                + "Integer/Long → long, Double → double, String → text, byte[] → bytes, null");
        s.put("rows changed", "executeUpdate (sqlite3_changes)");
    }

    /** The xerial result code name (e.g. SQLITE_CONSTRAINT_PRIMARYKEY). */
    @Override
    String sqlstate(SQLException e) {
        if (e instanceof SQLiteException s && s.getResultCode() != null)
            return s.getResultCode().name();
        return e.getSQLState();
    }

    @Override
    void useEndpoint(JsonNode ep) throws WorkerError {
        String file = ep.path("file").asText("");
        if (file.isEmpty())
            throw WorkerError.protocol("the sqlite endpoint needs a file");
        try {
            SQLiteJDBCLoader.initialize(); // the native library is loaded before the clock
        } catch (Exception e) {
            throw WorkerError.unsupported("sqlite-jdbc cannot load its native library: " + e);
        }
        SQLiteConfig cfg = new SQLiteConfig();
        cfg.setBusyTimeout(BUSY_TIMEOUT_MS);
        cfg.setGetGeneratedKeys(false);
        readOnly = readOnly(ep);
        if (readOnly)
            cfg.setReadOnly(true);
        props = cfg.toProperties();
        url = "jdbc:sqlite:" + file;
        jdbc = new org.sqlite.JDBC();
    }

    @Override
    void opened(ObjectNode answer) throws SQLException {
        answer.put("server_version", conn.getMetaData().getDatabaseProductVersion());
    }

    // ---- more clients (steps under load) --------------------------------------------------------

    @Override
    Driver client() {
        return new SqliteJdbcDriver(this);
    }

    @Override
    String jdbcDriverClass() {
        return org.sqlite.JDBC.class.getName();
    }

    @Override
    boolean readOnly() {
        return readOnly;
    }

    @Override
    String isValidDoes() {
        return "sqlite-jdbc's isValid: 'select 1' on a new Statement (in process)";
    }

    /** SQLite has no timestamp, date or decimal type: those are text, as the target stores them
     * (PROTOCOL.md, Types). Booleans stay Boolean: setBoolean binds integer 1/0. */
    @Override
    Object adapt(Object v) {
        if (v instanceof GenTimestamp t)
            return Times.format(t.micros(), false);
        if (v instanceof LocalDate d)
            return Times.formatDate(d);
        if (v instanceof BigDecimal x)
            return x.toPlainString();
        return v;
    }

    /** A new Statement per scan. */
    @Override
    long scanOp(Step st) throws SQLException {
        try (Statement s = conn.createStatement()) {
            return read(st, s.executeQuery(st.sql));
        }
    }

    /** literal: a new Statement per operation (prepare + step + finalize). */
    @Override
    long literalOp(Step st, int i) throws SQLException {
        try (Statement s = conn.createStatement()) {
            return execute(st, s, st.texts[i]);
        }
    }

    /** Every value by its storage class (sqlite3_column_type): getObject gives Integer/Long,
     * Double, String, byte[] or null. */
    @Override
    byte[] decoders(ResultSet rs) throws SQLException {
        byte[] decoders = new byte[rs.getMetaData().getColumnCount()];
        Arrays.fill(decoders, D_VALUE);
        return decoders;
    }

    @Override
    void recover(Step st) {
        if (conn == null)
            return;
        rollbackIfOpen(conn);
        // a failed 'commit;' leaves xerial in autocommit with SQLite's transaction still open
        try (Statement s = conn.createStatement()) {
            s.execute("ROLLBACK");
        } catch (SQLException e) {
            // no transaction was open: the usual case
        }
    }
}
