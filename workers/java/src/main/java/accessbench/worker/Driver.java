package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.SQLException;
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
