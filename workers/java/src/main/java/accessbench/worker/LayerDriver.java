package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Blob;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Properties;

/** What the layer methods share (a library above a JDBC driver this worker measures bare,
 * named with it: java-hibernate+pgjdbc …): the bare method's connections (Over), the modes as
 * the driver has them under the layer, the values the layer hands back converted to the
 * protocol's types as the bare driver's are, and the connections of more clients. Each layer
 * supplies its operations (scan, exec, a batch group) through its own API, never loops. */
abstract class LayerDriver extends JdbcDriver {
    final Over over;
    Properties cachedProps; // the prepared mode's connection: the driver's statement cache on
    Connection cached;
    private long mainPid, cachedPid;

    /** Every feature of a shape (PROTOCOL.md, Shapes; suite/shape.py FEATURES), in its order. */
    static final List<String> FEATURES = List.of("select", "get", "where", "star", "compare", "between", "in", "null",
            "like", "or", "join", "left-join", "aggregate", "group", "order", "limit", "offset", "insert", "update",
            "increment", "delete", "load-lazy", "load-joined", "load-selectin");

    LayerDriver(Over over) {
        this.over = over;
    }

    LayerDriver(LayerDriver of) {
        super(of);
        over = of.over.client();
        cachedProps = of.cachedProps;
    }

    /** the layer's name and version, e.g. "Hibernate ORM 7.4.15.Final" */
    abstract String layerName();

    abstract String layerVersion();

    /** why literal mode is not the layer's (the unsupported answer's reason) */
    abstract String literalWhy();

    @Override
    String driverName() {
        return layerName() + " over " + over.bare.driverName();
    }

    @Override
    String driverVersion() {
        return layerVersion() + " (" + over.method() + " " + over.bare.driverVersion() + ")";
    }

    @Override
    List<String> dbms() {
        return over.dbms();
    }

    @Override
    List<String> modes() {
        return List.of("extended", "prepared");
    }

    @Override
    String noModeWhy(String mode) {
        return mode.equals("literal") ? literalWhy() : null;
    }

    @Override
    void configure(String key, String value) throws WorkerError {
        throw WorkerError.unsupported(layerName() + " over " + over.method() + " has no setting " + key + "=" + value);
    }

    @Override
    void settings(ObjectNode s) {
        s.put("over", over.method() + ": the layer runs on that method's JDBC driver, with its URL and connection "
                + "properties (see that method's settings)");
        over.settings(s);
        s.put("literal", "unsupported: " + literalWhy());
        s.put("connect", "a connect step is the driver's connect and close with the bare method's URL and properties: "
                + "the layer is handed connections (it opens none of its own) and adds no work to a connect");
    }

    // ---- connections -------------------------------------------------------------------------------

    @Override
    void useEndpoint(JsonNode ep) throws SQLException, WorkerError {
        over.bare.useEndpoint(ep);
        jdbc = over.bare.jdbc;
        url = over.bare.url;
        props = over.bare.props;
        cachedProps = over.cachedProps(props);
    }

    /** The prepared mode's connection, opened after connect_ns; both backends. */
    @Override
    void opened(ObjectNode answer) throws SQLException {
        cached = jdbc.connect(url, cachedProps);
        mainPid = over.serverPid(conn);
        cachedPid = over.serverPid(cached);
        answer.put("server_pid", mainPid);
        String version = over.serverVersion(conn);
        if (version != null)
            answer.put("server_version", version);
    }

    @Override
    void close() {
        super.close();
        closeQuietly(cached);
        cached = null;
        mainPid = cachedPid = 0;
    }

    static boolean usesCached(Step st) {
        return st.kind == Step.EXEC && st.mode == Step.PREPARED;
    }

    @Override
    Connection conn(Step st) {
        return usesCached(st) ? cached : conn;
    }

    @Override
    void connect(Step st) throws SQLException {
        if (usesCached(st)) {
            cached = jdbc.connect(url, cachedProps);
            cachedPid = 0;
        } else {
            conn = jdbc.connect(url, props);
            mainPid = 0;
        }
    }

    @Override
    void attach(Step st, Connection c) {
        if (usesCached(st)) {
            cached = c;
            cachedPid = 0;
        } else {
            conn = c;
            mainPid = 0;
        }
    }

    @Override
    Properties connectProperties(Step st) {
        return usesCached(st) ? cachedProps : props;
    }

    @Override
    String jdbcDriverClass() {
        return over.bare.jdbcDriverClass();
    }

    @Override
    String isValidDoes() {
        return over.bare.isValidDoes();
    }

    /** The backend of the step's connection (a client's asked after its trial, untimed). */
    @Override
    long[] serverPids(Step st) {
        boolean c = usesCached(st);
        Connection k = conn(st);
        if (k == null)
            return new long[0];
        try {
            if (c && cachedPid == 0)
                cachedPid = over.serverPid(k);
            else if (!c && mainPid == 0)
                mainPid = over.serverPid(k);
        } catch (SQLException e) {
            System.err.println("abworker-java: server pid: " + e);
            return new long[0];
        }
        return new long[] {c ? cachedPid : mainPid};
    }

    @Override
    void recover(Step st) {
        rollbackIfOpen(conn);
        rollbackIfOpen(cached);
    }

    /** The bare driver's decoder of each column (its own metadata), for rows read by raw SQL. */
    @Override
    byte[] decoders(ResultSet rs) throws SQLException {
        byte[] d = over.bare.decoders(rs);
        over.bare.decoders = d;
        return d;
    }

    @Override
    boolean[] binaryColumns(ResultSet rs) throws SQLException {
        return over.bare.binaryColumns(rs);
    }

    @Override
    long literalOp(Step st, int i) throws SQLException {
        throw new IllegalStateException("literal is not a mode of this layer"); // never sent: modes()
    }

    /** The first SQLException in a layer's exception chain (Hibernate's JDBCException, Spring's
     * DataAccessException wrap the driver's): answered as a db error with its SQLSTATE. */
    static SQLException sqlException(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException s)
                return s;
            if (t.getCause() == t)
                break;
        }
        return null;
    }

    /** A value the layer hands back, as the protocol's type, the way the bare driver reads it:
     * integers of every width as int, a 4-byte float as its shortest decimal (float4AsText),
     * timestamps as LocalDateTime (java.sql types through their local fields: the JVM's zone is
     * UTC), CHAR(1) Characters as text, BLOBs as bytes. */
    static void put(Row row, int c, Object v) throws SQLException {
        if (v == null)
            row.setNull(c);
        else if (v instanceof Long x)
            row.setLong(c, x);
        else if (v instanceof String)
            row.set(c, Row.TEXT, v);
        else if (v instanceof Integer x)
            row.setLong(c, x);
        else if (v instanceof LocalDateTime)
            row.set(c, Row.TIMESTAMP, v);
        else if (v instanceof Double x)
            row.setDouble(c, x);
        else if (v instanceof BigDecimal)
            row.set(c, Row.DECIMAL, v);
        else if (v instanceof Short x)
            row.setLong(c, x);
        else if (v instanceof Byte x)
            row.setLong(c, x);
        else if (v instanceof Boolean x)
            row.setBool(c, x);
        else if (v instanceof Float x)
            row.setDouble(c, float4AsText(x));
        else if (v instanceof byte[])
            row.set(c, Row.BYTES, v);
        else if (v instanceof LocalDate)
            row.set(c, Row.DATE, v);
        else if (v instanceof BigInteger x)
            row.setLong(c, x.longValue()); // its 64 bits, as the bare drivers read BIGINT UNSIGNED
        else if (v instanceof java.sql.Timestamp x)
            row.set(c, Row.TIMESTAMP, x.toLocalDateTime());
        else if (v instanceof java.sql.Date x)
            row.set(c, Row.DATE, x.toLocalDate());
        else if (v instanceof java.sql.Time x)
            row.set(c, Row.TIME, x.toLocalTime());
        else if (v instanceof LocalTime || v instanceof OffsetDateTime)
            row.set(c, v instanceof LocalTime ? Row.TIME : Row.TIMESTAMP, v);
        else if (v instanceof Character x)
            row.set(c, Row.TEXT, x.toString());
        else if (v instanceof Blob x)
            row.set(c, Row.BYTES, x.getBytes(1, (int) x.length()));
        else
            row.set(c, Row.TEXT, v.toString());
    }

    /** The Java class a parameter of a value type is (its NULLs are bound as this type). */
    static Class<?> javaClass(ValueType t) {
        return switch (t) {
            case INT -> Long.class;
            case BOOL -> Boolean.class;
            case FLOAT -> Double.class;
            case DECIMAL -> BigDecimal.class;
            case TEXT -> String.class;
            case DATE -> LocalDate.class;
            case TIMESTAMP -> LocalDateTime.class;
            case BYTES -> byte[].class;
        };
    }
}
