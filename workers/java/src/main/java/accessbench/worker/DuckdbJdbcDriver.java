package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Properties;
import org.duckdb.DuckDBDriver;

/** java-duckdb: DuckDB's JDBC driver (the engine bundled in the jar, over JNI), in process. The
 * target's file is opened read-only (one writer or many readers per file: PROTOCOL.md, open). */
final class DuckdbJdbcDriver extends JdbcDriver {
    DuckdbJdbcDriver() {
    }

    private DuckdbJdbcDriver(DuckdbJdbcDriver of) {
        super(of);
    }

    @Override
    String driverName() {
        return "duckdb_jdbc (org.duckdb:duckdb_jdbc)";
    }

    private String version;

    /** The DuckDB the driver bundles (its jar carries no version of its own: duckdb_jdbc's
     * releases follow DuckDB's, pinned in pom.xml), from an in-memory database. */
    @Override
    String driverVersion() {
        if (version == null) {
            try (java.sql.Connection c = new DuckDBDriver().connect("jdbc:duckdb:", new Properties())) {
                java.sql.DatabaseMetaData md = c.getMetaData();
                version = "bundled DuckDB " + md.getDatabaseProductVersion();
            } catch (SQLException e) {
                version = "unknown (" + e.getMessage() + ")";
            }
        }
        return version;
    }

    @Override
    List<String> dbms() {
        return List.of("duckdb");
    }

    @Override
    String batchStyle() {
        return "addBatch per row + executeBatch on one PreparedStatement, inside setAutoCommit(false) … commit";
    }

    @Override
    void configure(String key, String value) throws WorkerError {
        throw WorkerError.unsupported("java-duckdb has no setting " + key + "=" + value);
    }

    @Override
    void settings(ObjectNode s) {
        s.put("library", "DuckDB bundled in the jar (its native library extracted to java.io.tmpdir and loaded once "
                + "per process), not the Python package's");
        s.put("open", "jdbc:duckdb:FILE with duckdb.read_only=true where the target says so (a file has one writer "
                + "or many readers); DuckDB's default threads (one per core)");
        s.put("read_only", "endpoint read_only (always true for DuckDB): duckdb.read_only=true, the file opened "
                + "read-only by DuckDB itself; a pool is set readOnly=true to match");
        s.put("literal", "a new Statement per operation: executeQuery/executeUpdate of the text with values inlined");
        s.put("extended", "a new PreparedStatement per operation: prepare + bind + execute + close");
        s.put("prepared", "one PreparedStatement per step, prepared in the first operation, then bind + execute");
        s.put("scan", "the step's Statement: executeQuery, every row read");
        s.put("parameters", "int setLong, bool setBoolean, float setDouble, decimal setBigDecimal, text setString, "
                + "date setObject(LocalDate), timestamp setObject(LocalDateTime), bytes setBytes, NULL setNull");
        s.put("decoding", "by the column's JDBC type: integers getLong (HUGEINT, UHUGEINT, UBIGINT — Types.OTHER — getObject(BigInteger), "
                + "its low 64 bits), DOUBLE getDouble, REAL getFloat as PostgreSQL "
                + "prints it, DECIMAL getBigDecimal, BOOLEAN getBoolean, DATE/TIMESTAMP getObject(LocalDate/"
                + "LocalDateTime), BLOB getBytes, the rest getString");
    }

    @Override
    void useEndpoint(JsonNode ep) throws WorkerError {
        String file = ep.path("file").asText("");
        if (file.isEmpty())
            throw WorkerError.protocol("the duckdb endpoint needs a file");
        props = new Properties();
        if (readOnly(ep))
            props.setProperty("duckdb.read_only", "true");
        url = "jdbc:duckdb:" + file;
        jdbc = new DuckDBDriver();
    }

    @Override
    void opened(ObjectNode answer) throws SQLException {
        answer.put("server_version", conn.getMetaData().getDatabaseProductVersion());
    }

    @Override
    Driver client() {
        return new DuckdbJdbcDriver(this);
    }

    @Override
    String jdbcDriverClass() {
        return DuckDBDriver.class.getName();
    }

    @Override
    boolean readOnly() {
        return props.containsKey("duckdb.read_only");
    }

    @Override
    String isValidDoes() {
        return "DuckDB JDBC's isValid (in process)";
    }

    /** By the column's JDBC type (DuckDB's metadata). */
    @Override
    byte[] decoders(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        byte[] decoders = new byte[md.getColumnCount()];
        for (int c = 0; c < decoders.length; c++) {
            decoders[c] = switch (md.getColumnType(c + 1)) {
                case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> D_INT;
                case Types.DOUBLE -> D_DOUBLE;
                case Types.FLOAT, Types.REAL -> D_FLOAT;
                case Types.DECIMAL, Types.NUMERIC -> D_DECIMAL;
                case Types.BOOLEAN, Types.BIT -> D_BOOL;
                case Types.DATE -> D_DATE;
                case Types.TIMESTAMP -> D_TIMESTAMP;
                case Types.TIMESTAMP_WITH_TIMEZONE -> D_TIMESTAMPTZ;
                case Types.TIME -> D_TIME;
                case Types.BLOB, Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY -> D_BYTES;
                // 128-bit and unsigned integers (a sum of integers is a HUGEINT): Types.OTHER, read
                // as BigInteger, an integer like any other (its low 64 bits)
                case Types.OTHER -> switch (md.getColumnTypeName(c + 1)) {
                    case "HUGEINT", "UHUGEINT", "UBIGINT" -> D_UINT64;
                    default -> D_TEXT;
                };
                default -> D_TEXT;
            };
        }
        return decoders;
    }
}
