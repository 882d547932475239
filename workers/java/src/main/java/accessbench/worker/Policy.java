package accessbench.worker;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** The connection policies of a loaded (or verified) step (PROTOCOL.md, "Steps under load"):
 * how one client runs operation i.
 *
 * persistent: the client's own connection for the whole trial (client 0 uses the session's,
 * from open; the others open theirs before the barrier). per-request: connect, make what the
 * operation needs, run it, close — all inside the operation's time. pooled: HikariCP, filled
 * before the barrier and shared by the clients; each operation borrows, runs, returns. */
final class Policy {
    static final int PERSISTENT = 0, PER_REQUEST = 1, POOLED = 2;
    static final String[] NAMES = {"persistent", "per-request", "pooled"};

    static int parse(String name) throws WorkerError {
        for (int p = 0; p < NAMES.length; p++)
            if (NAMES[p].equals(name))
                return p;
        throw WorkerError.unsupported("connection policy '" + name + "' is not built (persistent, per-request, pooled)");
    }

    private Policy() {
    }

    /** One client of a step under a policy. open and finish are untimed (before the barrier,
     * after the trial); op is the operation, inside its time. */
    abstract static class Client {
        final Step st;

        Client(Step st) {
            this.st = st;
        }

        /** before the barrier: the client's own connection, when it has one */
        void open() throws Exception {
        }

        /** operation i: rows read, or rows changed/written */
        abstract long op(int i) throws Exception;

        /** after a trial that ended well: a commit_every group the duration cut short is committed */
        void finish() throws SQLException {
        }

        /** after a failed trial: no transaction left open */
        void recover() {
        }

        /** the client's own connection closed (not the session's), what it made released */
        void close() {
        }

        /** the backend pid of the client's persistent connection, or 0 */
        long serverPid() {
            return 0;
        }

        /** Operation i on a connection of its own (per request, or borrowed): with commit_every
         * (only 1 is allowed there, see checkCommitEvery) it is its own transaction. */
        final long opAlone(Driver d, int i) throws Exception {
            if (st.commitEvery != 0)
                d.txnBegin(st);
            long count = d.op(st, i);
            if (st.commitEvery != 0)
                d.txnCommit(st);
            return count;
        }
    }

    /** The client's connection for the whole trial; commit_every groups as the plain loop makes
     * them (BEGIN before operation i with i % K == 0, COMMIT after the K-th or the last). */
    static final class Persistent extends Client {
        private final Driver d;
        private final boolean own; // opened here (not the session's connection)
        private boolean inTxn;

        Persistent(Driver d, Step st, boolean own) {
            super(st);
            this.d = d;
            this.own = own;
        }

        @Override
        void open() throws Exception {
            if (own) {
                d.connect(st);
                d.stepBegin(st);
            }
        }

        @Override
        long op(int i) throws Exception {
            int k = st.commitEvery;
            if (k != 0 && i % k == 0) {
                d.txnBegin(st);
                inTxn = true;
            }
            long count = d.op(st, i);
            if (k != 0 && ((i + 1) % k == 0 || i + 1 == st.nops)) {
                d.txnCommit(st);
                inTxn = false;
            }
            return count;
        }

        @Override
        void finish() throws SQLException {
            if (inTxn) {
                d.txnCommit(st);
                inTxn = false;
            }
        }

        @Override
        void recover() {
            d.recover(st);
            inTxn = false;
        }

        @Override
        void close() {
            if (own) { // the session's driver releases its statements in Main's stepEnd
                d.release(st);
                d.close();
            }
        }

        @Override
        long serverPid() {
            long[] pids = d.serverPids(st);
            return pids.length > 0 ? pids[0] : 0;
        }
    }

    /** A commit_every group cannot span operations that each have a connection of their own:
     * K = 1 (each operation its own transaction) is the only grouping. */
    static void checkCommitEvery(Step st, int policy) throws WorkerError {
        if (st.commitEvery > 1 && policy != PERSISTENT)
            throw WorkerError.unsupported("commit_every=" + st.commitEvery + " with policy " + NAMES[policy]
                    + ": a transaction cannot span operations that each get a connection of their own");
    }

    /** Connect, make what the operation needs (statements, preparation), run it, close: all
     * inside the operation's time (pgbench -C). The driver instance is this client's alone. */
    static final class PerRequest extends Client {
        private final Driver d;

        PerRequest(Driver d, Step st) {
            super(st);
            this.d = d;
        }

        @Override
        void open() throws Exception {
            d.stepBegin(st); // per step, not per request: the bind types of NULLs, checks
        }

        @Override
        long op(int i) throws Exception {
            d.connect(st);
            try {
                return opAlone(d, i);
            } finally {
                d.release(st);
                d.close();
            }
        }
    }

    /** Borrow a connection from the pool, run the operation on it, return it: inside the
     * operation's time. The statements live with the pooled connection (see Pool). */
    static final class Pooled extends Client {
        private final Pool pool;

        Pooled(Pool pool, Step st) {
            super(st);
            this.pool = pool;
        }

        @Override
        long op(int i) throws Exception {
            try (Connection c = pool.ds.getConnection()) {
                Driver d = pool.driverOf(c);
                try {
                    return opAlone(d, i);
                } catch (Exception e) { // the connection goes back to the pool usable
                    d.recover(st);
                    throw e;
                }
            }
        }
    }

    private static final AtomicInteger POOLS = new AtomicInteger();

    /** HikariCP, fixed size: maximumPoolSize = minimumIdle = pool_size, every connection made
     * before the barrier, with the pins of settings() — nothing the pool would do on its own
     * timer (keepalive queries, retiring connections) during a trial.
     *
     * Each pooled connection has a driver instance of its own, bound to the physical connection
     * (Hikari's proxy unwrapped): its statements are made on that connection, so they outlive a
     * borrow — a prepared step prepares once per pooled connection, in the operation that first
     * borrows it, as a persistent client prepares once per connection. (Statements made through
     * Hikari's proxy would be closed by Hikari at every return.) */
    static final class Pool implements AutoCloseable {
        final HikariDataSource ds;
        private final ConcurrentHashMap<Connection, Driver> drivers = new ConcurrentHashMap<>();
        private final Driver parent;
        private final Step st;

        Pool(Driver parent, Step st, int size) throws Exception {
            this.parent = parent;
            this.st = st;
            HikariConfig cfg = new HikariConfig();
            cfg.setPoolName("abworker-pool-" + POOLS.incrementAndGet());
            cfg.setDriverClassName(parent.jdbcDriverClass());
            cfg.setJdbcUrl(parent.jdbcUrl());
            cfg.setDataSourceProperties(parent.connectProperties(st)); // the same connection as persistent's
            cfg.setMaximumPoolSize(size);
            cfg.setMinimumIdle(size);
            cfg.setMaxLifetime(0);   // never retired during a trial
            cfg.setKeepaliveTime(0); // no keepalive query on a timer
            cfg.setLeakDetectionThreshold(0);
            cfg.setAutoCommit(true);
            cfg.setReadOnly(parent.readOnly());
            cfg.setRegisterMbeans(false);
            // connectionTestQuery unset: a borrow validates with JDBC4 isValid, and only a
            // connection idle for over 500 ms (Hikari's aliveBypassWindowMs)
            HikariDataSource made = new HikariDataSource(cfg);
            Connection[] held = new Connection[size];
            try {
                // fill: borrowing every connection at once waits until the pool has made them all
                for (int j = 0; j < size; j++)
                    held[j] = made.getConnection();
                for (Connection c : held)
                    driverOf(c);
            } catch (Exception | Error e) {
                JdbcDriver.closeQuietly(held);
                made.close();
                throw e;
            }
            JdbcDriver.closeQuietly(held);
            ds = made;
        }

        /** The driver instance of a borrowed connection; a connection the pool made since the
         * fill (one it replaced) gets its own on first use. */
        Driver driverOf(Connection borrowed) throws Exception {
            Connection physical = borrowed.unwrap(Connection.class);
            Driver d = drivers.get(physical);
            if (d == null) {
                d = parent.client();
                d.attach(st, physical);
                d.stepBegin(st);
                drivers.put(physical, d);
            }
            return d;
        }

        /** Releases every pooled connection's statements, then closes the pool (and with it the
         * connections). */
        @Override
        public void close() {
            for (Driver d : drivers.values())
                d.release(st);
            drivers.clear();
            ds.close();
        }

        /** HikariCP's version, from its Maven metadata (the shaded jar keeps no manifests). */
        static String version() {
            try (InputStream in = Pool.class.getResourceAsStream("/META-INF/maven/com.zaxxer/HikariCP/pom.properties")) {
                if (in != null) {
                    Properties p = new Properties();
                    p.load(in);
                    return p.getProperty("version", "unknown");
                }
            } catch (IOException e) {
                // unknown
            }
            return "unknown";
        }
    }
}
