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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.ResultSetExtractor;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/** java-jdbctemplate+pgjdbc, java-jdbctemplate+mariadb: Spring's JdbcTemplate (spring-jdbc
 * alone: no Spring Boot, no application context) over the bare methods' JDBC drivers, used as
 * its users use it. Its API is SQL text plus a RowMapper: the step's own SQL run by query(sql,
 * args, argTypes, RowMapper) into records — the mapper made per result shape from the shape's
 * items, each column read by the getter of its declared type, as a user's RowMapper reads its
 * columns (so every shape feature is its API's, none a fallback) — every value read from the
 * record; update(sql, args, argTypes); a batch group batchUpdate(sql, rows, argTypes) in a
 * TransactionTemplate; a scan query(sql, RowMapper). It has no relations: a load is the
 * hand-written strategies through its calls (query per parent; NamedParameterJdbcTemplate's
 * list expansion for an IN; a ResultSetExtractor splitting joined rows). */
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
    private Mapper mapper;         // the step's RowMapper (a load's parents')
    private Mapper[] levelMappers; // a load: each level's RowMapper
    private Mapper joinedMapper;   // a joined load: the RowMapper of a whole joined row
    private TransactionStatus txn; // commit_every: the group's transaction

    /** A JdbcTemplate (and the NamedParameterJdbcTemplate over it) and its transaction manager
     * over one connection: a DataSource that hands out that connection and never closes it
     * (SingleConnectionDataSource, suppressClose=false: no proxy; it is a SmartDataSource whose
     * shouldClose says no for it). */
    private static final class Spring {
        final JdbcTemplate jdbc;
        final NamedParameterJdbcTemplate named;
        final DataSourceTransactionManager tm;
        final TransactionTemplate tx;

        Spring(Connection c) {
            SingleConnectionDataSource ds = new SingleConnectionDataSource(c, false);
            jdbc = new JdbcTemplate(ds);
            named = new NamedParameterJdbcTemplate(jdbc);
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

    /** Every feature: its API is the statement's text with a RowMapper (and for a load, the
     * hand-written strategies through its calls). */
    @Override
    void capabilities(ObjectNode caps) {
        ObjectNode shapes = caps.putObject("shapes");
        FEATURES.forEach(shapes.putArray("maps")::add);
        shapes.putObject("unsupported");
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
                + "(Object[]) per row; every value read from the record");
        s.put("shapes", "JdbcTemplate's API is SQL text plus a RowMapper: every shape (ranges, IN, IS NULL, LIKE, OR, "
                + "joins, aggregates, GROUP BY, ORDER BY, LIMIT/OFFSET, increments) runs as the statement's text, as "
                + "its users write it, none through another API (no \"api\": \"raw\"); the RowMapper is made per "
                + "result shape from the shape's items, when the step begins: each column read by the getter of its "
                + "type as the suite declares it (integers getLong, numeric getBigDecimal, char/varchar/text getString, "
                + "timestamp getObject(LocalDateTime), date getObject(LocalDate), double getDouble, real getFloat, "
                + "boolean " + (over.booleanIsInteger() ? "getLong (TINYINT(1))" : "getBoolean") + ", bytes getBytes), "
                + "count() getLong, min/max by their column's type, sum/avg (whose type the DBMS chooses) and any "
                + "column of an undeclared type by the getter the bare driver uses for the result's own column type "
                + "(chosen at the step's first row); a statement of no shape is mapped that way throughout");
        s.put("load", "JdbcTemplate has no relations, so a load is the hand-written strategies through its calls, "
                + "each level's rows mapped by a RowMapper of its table's declared types into records, every entity "
                + "once: lazy — query(parents, args, argTypes, mapper), then query(one, mapper, key) per parent (and "
                + "per child): the N+1 pattern; selectin — per level NamedParameterJdbcTemplate.query(\"… IN (:keys)\", "
                + "{keys: the distinct keys read}, mapper): Spring's own expansion of a collection parameter into "
                + "?, ?, … (the text's only change is the named parameter in the IN list); joined — query(joined, "
                + "args, argTypes, ResultSetExtractor) whose extractor maps each joined row and splits it into the "
                + "levels' records, keeping each once by its key; statements counted by the worker's code (one per "
                + "JdbcTemplate call) in the verification pass");
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
        txn = null;
        argTypes = nullTypes; // JdbcDriver.sqlType of each parameter's value type
        mapper = new Mapper(st.shape != null && st.shape.kind().equals(Shape.SELECT) ? items(st.shape) : null);
        levelMappers = null;
        joinedMapper = null;
        Association a = st.association;
        if (a != null) {
            mapper = new Mapper(typed(a.parentColumns.size(), st.shape.tableTypes()));
            levelMappers = new Mapper[a.levels.length];
            List<String> every = new ArrayList<>(st.shape.tableTypes());
            for (int k = 0; k < a.levels.length; k++) {
                levelMappers[k] = new Mapper(typed(a.levels[k].types.size(), a.levels[k].types));
                every.addAll(a.levels[k].types);
            }
            joinedMapper = new Mapper(typed(every.size(), every));
        }
    }

    /** The getter (a decoder) of a column of a declared SQL type, as a RowMapper written for the
     * table reads it; -1: the result's own column type decides (the bare driver's decoder). */
    private byte declared(String sqlType) {
        Class<?> t = sqlType == null ? null : Entities.javaType(sqlType, over.booleanIsInteger());
        if (t == null)
            return -1;
        if (t == Long.class)
            return D_INT;
        if (t == String.class)
            return D_TEXT;
        if (t == java.math.BigDecimal.class)
            return D_NUMERIC;
        if (t == Double.class)
            return D_DOUBLE;
        if (t == Float.class)
            return D_FLOAT;
        if (t == Boolean.class)
            return D_BOOL;
        if (t == LocalDateTime.class)
            return D_TIMESTAMP;
        if (t == LocalDate.class)
            return D_DATE;
        if (t == LocalTime.class)
            return D_TIME;
        return D_BYTES;
    }

    private byte[] typed(int n, List<String> types) {
        byte[] dec = new byte[n];
        for (int c = 0; c < n; c++)
            dec[c] = declared(types.get(c));
        return dec;
    }

    /** A select's RowMapper getters from its items: a column by its declared type, count()
     * getLong, min/max by their column's type, sum/avg by the result's own type. */
    private byte[] items(Shape sh) {
        List<Shape.Item> items = sh.items();
        if (items.isEmpty())
            return null;
        byte[] dec = new byte[items.size()];
        for (int c = 0; c < dec.length; c++) {
            Shape.Item it = items.get(c);
            if (!it.aggregate())
                dec[c] = declared(sh.typeOf(it.column()));
            else if (it.fn().equals("count"))
                dec[c] = D_INT;
            else if (it.fn().equals("min") || it.fn().equals("max"))
                dec[c] = declared(sh.typeOf(it.column()));
            else
                dec[c] = -1;
        }
        return dec;
    }

    /** A RowMapper of one result shape into records (Object[]): each column by its getter,
     * those without a declared one (typed[c] = -1, or no typed getters) chosen at its first row
     * from the result's own column types, as the bare driver chooses them. */
    private final class Mapper implements RowMapper<Object[]> {
        final byte[] typed;
        byte[] dec;
        boolean[] binary;

        Mapper(byte[] typed) {
            this.typed = typed;
        }

        @Override
        public Object[] mapRow(ResultSet rs, int rowNum) throws SQLException {
            if (dec == null)
                choose(rs);
            return JdbcTemplateDriver.this.mapRow(rs, dec, binary);
        }

        private void choose(ResultSet rs) throws SQLException {
            byte[] own = decoders(rs);
            if (typed != null && typed.length == own.length) {
                byte[] d = own.clone();
                for (int c = 0; c < d.length; c++)
                    if (typed[c] >= 0)
                        d[c] = typed[c];
                boolean float4 = false;
                for (byte x : d)
                    float4 |= x == D_FLOAT4;
                binary = float4 ? binaryColumns(rs) : null;
                dec = d;
            } else {
                binary = binaryColumns(rs);
                dec = own;
            }
        }
    }

    /** One row as a record: each column by its getter. */
    private Object[] mapRow(ResultSet rs, byte[] dec, boolean[] rowBinary) throws SQLException {
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
    private long emit(Step st, Mapper m, List<Object[]> records) throws SQLException {
        for (Object[] r : records)
            emit(st, m.dec, r, 0, r.length);
        if (m.dec != null)
            st.ncols = m.dec.length;
        return records.size();
    }

    /** One record's columns from..from+n as a row. */
    private static void emit(Step st, byte[] dec, Object[] r, int from, int n) throws SQLException {
        Row row = st.row;
        row.reset(n);
        for (int c = 0; c < n; c++) {
            Object v = r[from + c];
            if (v instanceof String x && dec[from + c] == D_NUMERIC)
                row.set(c, Row.DECIMAL, x);
            else
                put(row, c, v);
        }
        st.emit(row);
    }

    @Override
    long scanOp(Step st) throws SQLException {
        try {
            return emit(st, mapper, spring(st).jdbc.query(st.sql, mapper));
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
                return emit(st, mapper, t.query(st.sql, args, argTypes, mapper));
            return t.update(st.sql, args, argTypes);
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    /** A load by hand through JdbcTemplate's calls (JdbcTemplate has no relations): the parents,
     * then each level — lazy: query(one, mapper, key) per key read at the level above; selectin:
     * one NamedParameterJdbcTemplate query with the keys as a list parameter (Spring expands it
     * into the IN list's markers); joined: one query whose ResultSetExtractor splits each row
     * into the levels' records, each entity kept once by its key. Statements counted per call. */
    @Override
    long loadOp(Step st, int i) throws SQLException {
        final Association a = st.association;
        final Object[] args = st.params[i];
        try {
            Spring sp = spring(st);
            if (a.strategy == Association.JOINED)
                return joined(st, sp.jdbc, a, args);
            st.statements++;
            List<Object[]> above = sp.jdbc.query(st.sql, args, argTypes, mapper);
            long rows = entities(st, mapper, above);
            for (int k = 0; k < a.levels.length; k++) {
                Association.Level v = a.levels[k];
                Set<Object> keys = new LinkedHashSet<>();
                for (Object[] r : above)
                    if (r[v.parentAt] != null)
                        keys.add(r[v.parentAt]);
                Mapper m = levelMappers[k];
                List<Object[]> found;
                if (a.strategy == Association.LAZY) {
                    found = new ArrayList<>();
                    for (Object key : keys) {
                        st.statements++;
                        found.addAll(sp.jdbc.query(v.one, m, key));
                    }
                } else if (keys.isEmpty()) {
                    found = List.of();
                } else {
                    st.statements++;
                    found = sp.named.query(v.inHead + ":keys" + v.inTail, Map.of("keys", keys), m);
                }
                rows += entities(st, m, found);
                above = found;
            }
            return rows;
        } catch (RuntimeException e) {
            throw translate(e);
        }
    }

    private static long entities(Step st, Mapper m, List<Object[]> records) throws SQLException {
        for (Object[] r : records) {
            emit(st, m.dec, r, 0, r.length);
            st.values += r.length;
        }
        return records.size();
    }

    /** joined: one query, its ResultSetExtractor mapping each row and splitting it into the
     * parent's, the child's and the grandchild's records, each kept once by its key. */
    private long joined(Step st, JdbcTemplate t, Association a, Object[] args) throws SQLException {
        final int nl = a.levels.length;
        final int[] from = new int[nl + 1], width = new int[nl + 1];
        final int[][] keyAt = new int[nl + 1][];
        width[0] = a.parentColumns.size();
        keyAt[0] = a.parentKeyAt;
        for (int k = 0; k < nl; k++) {
            from[k + 1] = from[k] + width[k];
            width[k + 1] = a.levels[k].columns.size();
            keyAt[k + 1] = a.levels[k].keyAt;
        }
        final Mapper m = joinedMapper;
        ResultSetExtractor<List<List<Object[]>>> split = rs -> {
            List<List<Object[]>> levels = new ArrayList<>();
            List<Set<Object>> seen = new ArrayList<>();
            for (int k = 0; k <= nl; k++) {
                levels.add(new ArrayList<>());
                seen.add(new HashSet<>());
            }
            int n = 0;
            while (rs.next()) {
                Object[] r = m.mapRow(rs, n++);
                for (int k = 0; k <= nl; k++) {
                    Object key = key(r, from[k], keyAt[k]);
                    if (key != null && seen.get(k).add(key))
                        levels.get(k).add(r); // the entity: its segment of the joined record
                }
            }
            return levels;
        };
        st.statements++;
        List<List<Object[]>> levels = t.query(a.joined, args, argTypes, split);
        long rows = 0;
        for (int k = 0; k <= nl; k++) {
            for (Object[] r : levels.get(k)) {
                emit(st, m.dec, r, from[k], width[k]);
                st.values += width[k];
            }
            rows += levels.get(k).size();
        }
        return rows;
    }

    /** The key of a record's segment (its key columns at keyAt, from from), or null when NULL. */
    private static Object key(Object[] r, int from, int[] keyAt) {
        if (keyAt.length == 1)
            return r[from + keyAt[0]];
        List<Object> k = new ArrayList<>(keyAt.length);
        boolean any = false;
        for (int c : keyAt) {
            any |= r[from + c] != null;
            k.add(r[from + c]);
        }
        return any ? k : null;
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
