package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;

/** The driver interface: what the host (Main) and the connection policies (Policy) call, and
 * nothing else. Step.parse parses a step and generates its parameters (adapt), then Main calls
 * stepBegin (untimed), op once per operation (timed or verified), and stepEnd (untimed). A
 * driver supplies operations, never loops. The JDBC drivers share their logic in JdbcDriver. */
abstract class Driver {
    /** the driver as packaged (hello's driver), e.g. "pgjdbc (org.postgresql:postgresql)" */
    abstract String driverName();

    /** its version, as the library reports it (hello's driver_version) */
    abstract String driverVersion();

    /** the DBMSs it reaches (capabilities.dbms): an open of another is unsupported */
    abstract List<String> dbms();

    /** what the method adds to hello's capabilities: a layer's shapes (PROTOCOL.md, Shapes) */
    void capabilities(ObjectNode caps) {
    }

    /** how a batch step is done, in words (capabilities.batch) */
    abstract String batchStyle();

    /** the exec modes it has (capabilities.modes); "record" also reads scans record by record */
    List<String> modes() {
        return List.of("literal", "extended", "prepared");
    }

    /** why a mode modes() lacks is not there (the unsupported answer's reason), or null */
    String noModeWhy(String mode) {
        return null;
    }

    /** a key=value setting from the method name; throws unsupported for an unknown one */
    abstract void configure(String key, String value) throws WorkerError;

    /** every setting that changes behaviour, pinned, in words a reader can check */
    abstract void settings(ObjectNode s);

    /** connects; puts connect_ns and, when known, server_pid and server_version in the answer */
    abstract void open(JsonNode endpoint, ObjectNode answer) throws SQLException, WorkerError;

    /** closes the session's connection(s), logging (not throwing) a failure */
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

    /** Whether a verification answer gives the statements its pass sent (Step.statements,
     * counted by the driver's code or the layer's own hook, for the verification pass only). */
    boolean countsStatements(Step st) {
        return false;
    }

    /** BEGIN of a commit_every group, on the connection the step uses (inside the operation's time) */
    abstract void txnBegin(Step st) throws SQLException;

    /** COMMIT of a commit_every group (inside the time of the group's last operation) */
    abstract void txnCommit(Step st) throws SQLException;

    /** after a failed step: leave no transaction open, so the connection stays usable */
    abstract void recover(Step st);

    /** release what the step made (statements), untimed */
    abstract void stepEnd(Step st);

    /** the backend(s) that served the step, or none */
    long[] serverPids(Step st) {
        return new long[0];
    }

    /** the sqlstate answered with a db error */
    String sqlstate(SQLException e) {
        return e.getSQLState();
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

    /** the JDBC URL of the endpoint */
    abstract String jdbcUrl();

    /** the connection properties of the connection the step uses */
    abstract Properties connectProperties(Step st);

    /** what a pool's validation of one of these connections (JDBC4 isValid) sends */
    abstract String isValidDoes();

    /** Whether its connections are read-only as the library sees them (DuckDB's and SQLite's
     * files opened read-only): a pool sets them so, as it sets every connection it makes to its
     * configured read-only status (a server's read_only is the session's own, not this). */
    boolean readOnly() {
        return false;
    }
}
