package accessbench.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import org.postgresql.PGConnection;

/** The driver under a layer method (java-hibernate+pgjdbc …): the bare method's own JDBC driver
 * makes the URL and connection properties (its useEndpoint, with every pin it reports), so a
 * layer's connections are exactly the ones the bare method opens; and what the modes are there,
 * under a layer that cannot say "prepare this statement" itself: extended is the bare method's
 * connection as it is, prepared a second connection with the driver's own statement cache on,
 * as a user of the layer configures the driver for server-prepared statements. */
abstract class Over {
    /** the bare method's driver: its endpoint (URL, properties) and its column decoders */
    final JdbcDriver bare;

    Over(JdbcDriver bare) {
        this.bare = bare;
    }

    /** the bare method, the catalog's over */
    abstract String method();

    /** the same driver for one more client (the bare driver's client: its URL and properties) */
    abstract Over client();

    /** the properties of the prepared mode's connection: the bare method's, with the driver's
     * statement cache on */
    abstract Properties cachedProps(Properties props);

    /** the backend (or serving thread) of a connection */
    abstract long serverPid(Connection c) throws SQLException;

    abstract String serverVersion(Connection c) throws SQLException;

    /** Hibernate's dialect for this DBMS */
    abstract String hibernateDialect();

    /** whether the bare driver reads a BOOLEAN column as an integer 0/1 (MariaDB's TINYINT(1)) */
    abstract boolean booleanIsInteger();

    /** whether the DBMS's sum() of a column of this declared integer type is an exact decimal
     * (numeric) rather than an integer: what a sum of integers read through a layer that types
     * it as a Long is converted to, so that it is the value the DBMS gives */
    abstract boolean exactSum(String sqlType);

    /** the connections and what extended and prepared are on them, in words */
    abstract void settings(ObjectNode s);

    List<String> dbms() {
        return bare.dbms();
    }

    static final class Pgjdbc extends Over {
        Pgjdbc() {
            super(new PgjdbcDriver());
        }

        private Pgjdbc(JdbcDriver bare) {
            super(bare);
        }

        @Override
        String method() {
            return "java-pgjdbc";
        }

        @Override
        Over client() {
            return new Pgjdbc((JdbcDriver) bare.client());
        }

        /** pgjdbc's statement cache at its defaults (256 queries, 5 MiB) and prepareThreshold=1:
         * a statement is a named server statement from its first execution, and a later
         * prepareStatement of the same text takes it from the cache (Bind/Execute only). */
        @Override
        Properties cachedProps(Properties props) {
            Properties p = new Properties();
            p.putAll(props);
            p.setProperty("prepareThreshold", "1");
            p.setProperty("preparedStatementCacheQueries", "256");
            p.setProperty("preparedStatementCacheSizeMiB", "5");
            return p;
        }

        @Override
        long serverPid(Connection c) throws SQLException {
            return c.unwrap(PGConnection.class).getBackendPID();
        }

        @Override
        String serverVersion(Connection c) throws SQLException {
            return c.unwrap(PGConnection.class).getParameterStatus("server_version");
        }

        @Override
        String hibernateDialect() {
            return "org.hibernate.dialect.PostgreSQLDialect";
        }

        @Override
        boolean booleanIsInteger() {
            return false;
        }

        /** PostgreSQL: sum(smallint|integer) is a bigint, sum(bigint) a numeric */
        @Override
        boolean exactSum(String sqlType) {
            String t = sqlType.toLowerCase(java.util.Locale.ROOT).strip();
            return t.equals("bigint") || t.equals("int8") || t.equals("bigserial");
        }

        @Override
        void settings(ObjectNode s) {
            PgjdbcDriver.tlsSettings(s); // java-pgjdbc's TLS properties, on every connection of the layer
            s.put("read_only", PgjdbcDriver.READ_ONLY);
            s.put("connections", "two, opened at open (untimed) with java-pgjdbc's URL and properties (its "
                    + "'connection properties' pins: prepareThreshold=0, statement cache off, binaryTransfer, "
                    + "the TLS properties (see tls), search_path in the startup packet, junixsocket for unix sockets): "
                    + "'main' for extended, scans, batches and connect steps; 'cached' for prepared, the same but "
                    + "prepareThreshold=1 and pgjdbc's statement cache at its defaults (preparedStatementCacheQueries=256, "
                    + "preparedStatementCacheSizeMiB=5); server_pids name the backend that served the step");
            s.put("extended", "the main connection: every statement the layer prepares is an unnamed statement, "
                    + "Parse/Bind/Describe/Execute/Sync at every execution (text results), as java-pgjdbc's extended");
            s.put("prepared", "the cached connection, as a user of the layer gets server-prepared statements from "
                    + "pgjdbc: the layer prepares and closes a PreparedStatement per execution, pgjdbc names it at its "
                    + "first execution and keeps it in its cache, so later executions of the same text are Bind/Execute "
                    + "(binary results for int, float, numeric, date/time, bytea from the second); the cache lives with "
                    + "the connection (the timed pass reuses what the verification pass prepared)");
            s.put("decoding", "values as pgjdbc gives them for the getter the layer calls (getLong, getString, "
                    + "getBigDecimal, getObject(LocalDateTime) …), converted to the protocol's types as java-pgjdbc does "
                    + "(a float4 as its shortest decimal; timestamps never through a zone)");
        }
    }

    static final class Mariadb extends Over {
        Mariadb() {
            super(new MariadbDriver());
        }

        private Mariadb(JdbcDriver bare) {
            super(bare);
        }

        @Override
        String method() {
            return "java-mariadb";
        }

        @Override
        Over client() {
            return new Mariadb((JdbcDriver) bare.client());
        }

        /** Connector/J's server-prepared statement cache on (cachePrepStmts=true, prepStmtCacheSize
         * 250 by default): closing a PreparedStatement keeps it prepared, and a later
         * prepareStatement of the same text reuses it (COM_STMT_EXECUTE only). */
        @Override
        Properties cachedProps(Properties props) {
            Properties p = new Properties();
            p.putAll(props);
            p.setProperty("cachePrepStmts", "true");
            return p;
        }

        @Override
        long serverPid(Connection c) throws SQLException {
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(MariadbDriver.SERVER_TID)) {
                return r.next() ? r.getLong(1) : 0;
            }
        }

        @Override
        String serverVersion(Connection c) throws SQLException {
            return c.getMetaData().getDatabaseProductVersion();
        }

        @Override
        String hibernateDialect() {
            return "org.hibernate.dialect.MariaDBDialect";
        }

        @Override
        boolean booleanIsInteger() {
            return true;
        }

        /** MariaDB: the sum of any exact number is a DECIMAL */
        @Override
        boolean exactSum(String sqlType) {
            return true;
        }

        @Override
        void settings(ObjectNode s) {
            MariadbDriver.tlsSettings(s); // java-mariadb's TLS and compression properties, on every connection
            s.put("read_only", MariadbDriver.READ_ONLY);
            s.put("connections", "two, opened at open (untimed) with java-mariadb's URL and properties (its pins: "
                    + "useServerPrepStmts=true, cachePrepStmts=false, tinyInt1isBit=false, autocommit, localSocket for "
                    + "the unix path, the TLS and compression properties (see tls, compress) …): 'main' for extended, "
                    + "scans, batches and connect steps; 'cached' for prepared, "
                    + "the same but cachePrepStmts=true (Connector/J's prepStmtCacheSize default, 250); server_pids "
                    + "name the serving thread of the step's connection");
            s.put("extended", "the main connection: every PreparedStatement the layer makes is COM_STMT_PREPARE + "
                    + "COM_STMT_EXECUTE in one round trip and COM_STMT_CLOSE when the layer closes it, as java-mariadb's "
                    + "extended (binary protocol)");
            s.put("prepared", "the cached connection, as a user of the layer gets server-prepared statements from "
                    + "Connector/J: the layer prepares and closes a PreparedStatement per execution, Connector/J keeps "
                    + "it prepared in its cache, so later executions of the same text are COM_STMT_EXECUTE only; the "
                    + "cache lives with the connection (the timed pass reuses what the verification pass prepared)");
            s.put("decoding", "values as Connector/J gives them for the getter the layer calls, converted to the "
                    + "protocol's types as java-mariadb does; BOOLEAN (TINYINT(1), tinyInt1isBit=false) is an integer "
                    + "0/1, as java-mariadb reads it");
        }
    }
}
