package accessbench.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/** java-jdbctemplate+pgjdbc, java-jdbctemplate+mariadb: Spring's JdbcTemplate (spring-jdbc
 * alone: no Spring Boot, no application context) over the bare methods' JDBC drivers, used as
 * its users use it — the step's own SQL (a SQL-first layer: it builds no statement, so the
 * step's shape is not needed) run by query(sql, args, argTypes, RowMapper) into records, every
 * value read from the record; update(sql, args, argTypes); a batch group batchUpdate(sql, rows,
 * argTypes) in a TransactionTemplate; a scan query(sql, RowMapper). */
final class JdbcTemplateDriver extends LayerDriver {
    /** spring-jdbc's version as the pom names it (SpringVersion reads a jar manifest the shaded jar replaces). */
    static final String SPRING_VERSION = bundledVersion("spring-jdbc");

    static String bundledVersion(String library) {
        Properties versions = new Properties();
        try (var in = JdbcTemplateDriver.class.getResourceAsStream("versions.properties")) {
            versions.load(in);
        } catch (java.io.IOException | NullPointerException e) {
            throw new IllegalStateException("versions.properties missing from the worker's jar", e);
        }
        return versions.getProperty(library);
    }

    // the template of each of this client's connections (main, cached), made when first used
    private Connection mainOf, cachedOf;
    private Spring mainT, cachedT;

    // per step
    private int[] argTypes;        // the SQL type of each parameter (its value type's)
    private byte[] rowDecoders;    // the RowMapper's getter per column, chosen at the step's first row
    private boolean[] rowBinary;
    private TransactionStatus txn; // commit_every: the group's transaction

    /** A JdbcTemplate and its transaction manager over one connection: a DataSource that hands
     * out that connection and never closes it (SingleConnectionDataSource, suppressClose=false:
     * no proxy; it is a SmartDataSource whose shouldClose says no for it). */
    private static final class Spring {
        final JdbcTemplate jdbc;
        final DataSourceTransactionManager tm;
        final TransactionTemplate tx;

        Spring(Connection c) {
            SingleConnectionDataSource ds = new SingleConnectionDataSource(c, false);
            jdbc = new JdbcTemplate(ds);
            tm = new DataSourceTransactionManager(ds);
            tx = new TransactionTemplate(tm);
        }
    }

    JdbcTemplateDriver(Over over) {
        super(over);
    }

    private JdbcTemplateDriver(JdbcTemplateDriver of) {
        super(of);
    }

    @Override
    String layerName() {
        return "Spring JdbcTemplate";
    }

    @Override
    String layerVersion() {
        return "spring-jdbc " + SPRING_VERSION;
    }

    @Override
    String literalWhy() {
        return "JdbcTemplate binds every value it is given (query/update with arguments); running a text with values "
                + "inlined is what its API exists to avoid";
    }

    @Override
    String batchStyle() {
        return "batchUpdate(sql, rows, argTypes) in a TransactionTemplate (DataSourceTransactionManager) per group: "
                + "addBatch per row + executeBatch on one PreparedStatement";
    }

    @Override
    void settings(ObjectNode s) {
        super.settings(s);
        s.put("layer", "Spring JdbcTemplate (spring-jdbc " + SPRING_VERSION + ", with spring-tx; no Spring "
                + "Boot, no application context); JdbcTemplate defaults kept: fetchSize, maxRows and queryTimeout unset "
                + "(-1), ignoreWarnings=true (no getWarnings), exception translation by SQL error codes (an error's "
                + "SQLException answered with its SQLSTATE); logging through SLF4J at INFO (debug off: no statement log)");
        s.put("data source", "SingleConnectionDataSource(connection, suppressClose=false) per connection of this "
                + "client: JdbcTemplate's getConnection hands it the worker's connection (no proxy; Spring checks "
                + "isClosed) and never closes it (SmartDataSource.shouldClose false); one JdbcTemplate, "
                + "DataSourceTransactionManager and TransactionTemplate per connection, made when it is first used");
        s.put("reads", "the step's SQL: query(sql, RowMapper) for a scan (a Statement), query(sql, args, argTypes, "
                + "RowMapper) otherwise (a PreparedStatement made and closed per call), the mapper making a record "
                + "(Object[]) per row with the getter the bare driver uses for each column's type (chosen from the "
                + "result's metadata at the step's first row); every value read from the record");
        s.put("writes", "update(sql, args, argTypes): a PreparedStatement made, executed and closed per call, "
                + "autocommit (the layer opens no transaction of its own)");
        s.put("parameters", "args with their SQL types (argTypes from the parameter's type: BIGINT, BOOLEAN, DOUBLE, "
                + "NUMERIC, VARCHAR, DATE, TIMESTAMP, VARBINARY), so that StatementCreatorUtils binds each by its type "
                + "and a NULL as setNull of that type (without types Spring would ask the driver for the parameters' "
                + "metadata); values as the bare method adapts them (timestamps LocalDateTime)");
        s.put("commit_every", "a programmatic transaction per K operations: DataSourceTransactionManager.getTransaction "
                + "before the first (autocommit off), commit after the K-th (COMMIT, autocommit back on)");
        s.put("batch", batchStyle() + "; Spring asks the connection's DatabaseMetaData supportsBatchUpdates per call "
                + "(no round trip)");
    }

    @Override
    Driver client() {
        return new JdbcTemplateDriver(this);
    }

    /** The step's connection's template, made when it is first used (a per-request operation
     * makes one for its new connection, inside its time). */
    private Spring spring(Step st) {
        Connection c = conn(st);
        if (usesCached(st)) {
            if (cachedOf != c) {
                cachedT = new Spring(c);
                cachedOf = c;
            }
            return cachedT;
        }
        if (mainOf != c) {
            mainT = new Spring(c);
            mainOf = c;
        }
        return mainT;
    }

    @Override
    void stepBegin(Step st) throws SQLException, WorkerError {
        super.stepBegin(st);
        rowDecoders = null;
        rowBinary = null;
        txn = null;
        argTypes = nullTypes; // JdbcDriver.sqlType of each parameter's value type
    }

    private final RowMapper<Object[]> mapper = this::mapRow;

    /** One row as a record: each column by the getter the bare driver uses for its type. */
    private Object[] mapRow(ResultSet rs, int rowNum) throws SQLException {
        if (rowDecoders == null) {
            rowDecoders = decoders(rs);
            rowBinary = binaryColumns(rs);
        }
        final byte[] dec = rowDecoders;
        Object[] r = new Object[dec.length];
        for (int c = 0; c < dec.length; c++) {
            int j = c + 1;
            Object v = switch (dec[c]) {
                case D_INT -> {
                    long x = rs.getLong(j);
                    yield x == 0 && rs.wasNull() ? null : (Object) x;
                }
                case D_UINT64 -> rs.getObject(j, BigInteger.class);
                case D_DOUBLE -> {
                    double x = rs.getDouble(j);
                    yield x == 0 && rs.wasNull() ? null : (Object) x;
                }
                case D_FLOAT -> {
                    float x = rs.getFloat(j);
                    yield x == 0 && rs.wasNull() ? null : (Object) x;
                }
                case D_FLOAT4 -> {
                    if (rowBinary != null && rowBinary[c]) {
                        float x = rs.getFloat(j);
                        yield x == 0 && rs.wasNull() ? null : (Object) x;
                    }
                    double x = rs.getDouble(j);
                    yield x == 0 && rs.wasNull() ? null : (Object) x;
                }
                case D_DECIMAL -> rs.getBigDecimal(j);
                case D_NUMERIC -> {
                    try {
                        yield rs.getBigDecimal(j);
                    } catch (SQLException e) { // NaN, ±Infinity: their text
                        yield rs.getString(j);
                    }
                }
                case D_BOOL -> {
                    boolean x = rs.getBoolean(j);
                    yield !x && rs.wasNull() ? null : (Object) x;
                }
                case D_TIMESTAMP -> rs.getObject(j, LocalDateTime.class);
                case D_TIMESTAMPTZ -> rs.getObject(j, OffsetDateTime.class);
                case D_DATE -> rs.getObject(j, LocalDate.class);
                case D_TIME -> rs.getObject(j, LocalTime.class);
                case D_BYTES -> rs.getBytes(j);
                case D_VALUE -> rs.getObject(j);
                default -> rs.getString(j);
            };
            r[c] = v;
        }
        return r;
    }

    /** Every record read, each value from the record (a D_NUMERIC's text stays text: NaN). */
    private long emit(Step st, List<Object[]> records) throws SQLException {
        Row row = st.row;
        for (Object[] r : records) {
            row.reset(r.length);
            for (int c = 0; c < r.length; c++) {
                if (r[c] instanceof String x && rowDecoders[c] == D_NUMERIC)
                    row.set(c, Row.DECIMAL, x);
                else
                    put(row, c, r[c]);
            }
            st.emit(row);
        }
        if (rowDecoders != null)
            st.ncols = rowDecoders.length;
        return records.size();
    }

    @Override
    long scanOp(Step st) throws SQLException {
        try {
            return emit(st, spring(st).jdbc.query(st.sql, mapper));
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    @Override
    long extendedOp(Step st, int i) throws SQLException {
        return exec(st, st.params[i]);
    }

    @Override
    long preparedOp(Step st, int i) throws SQLException {
        return exec(st, st.params[i]);
    }

    private long exec(Step st, Object[] args) throws SQLException {
        try {
            JdbcTemplate t = spring(st).jdbc;
            if (st.fetch)
                return emit(st, t.query(st.sql, args, argTypes, mapper));
            return t.update(st.sql, args, argTypes);
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    /** Batch group i: batchUpdate of the group's rows in a transaction of its own. */
    @Override
    long batchOp(Step st, int i) throws SQLException {
        final int first = i * st.batch, last = Math.min(first + st.batch, st.n);
        final List<Object[]> rows = Arrays.asList(st.params).subList(first, last);
        try {
            Spring sp = spring(st);
            sp.tx.executeWithoutResult(status -> sp.jdbc.batchUpdate(st.sql, rows, argTypes));
        } catch (RuntimeException e) {
            throw translate(e);
        }
        return last - first;
    }

    @Override
    void txnBegin(Step st) throws SQLException {
        try {
            txn = spring(st).tm.getTransaction(new DefaultTransactionDefinition());
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    @Override
    void txnCommit(Step st) throws SQLException {
        TransactionStatus t = txn;
        txn = null;
        try {
            spring(st).tm.commit(t);
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    @Override
    void recover(Step st) {
        if (txn != null && !txn.isCompleted()) {
            try {
                spring(st).tm.rollback(txn);
            } catch (RuntimeException e) {
                System.err.println("abworker-java: rollback: " + e);
            }
        }
        txn = null;
        super.recover(st);
    }

    @Override
    void close() {
        super.close();
        mainOf = cachedOf = null;
        mainT = cachedT = null;
    }

    /** A database error as the driver's SQLException (Spring's DataAccessException wraps it). */
    private static SQLException translate(RuntimeException e) {
        SQLException s = sqlException(e);
        if (s != null)
            return s;
        throw e;
    }
}
