package accessbench.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.Version;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.engine.jdbc.connections.spi.ConnectionProvider;
import org.hibernate.query.MutationQuery;
import org.hibernate.query.NativeQuery;
import org.hibernate.query.SelectionQuery;
import org.hibernate.service.UnknownUnwrapTypeException;

/** java-hibernate+pgjdbc, java-hibernate+mariadb: Hibernate ORM over the bare methods' JDBC
 * drivers, used as its users use it — JPA entities (one per table of the suite, made at run time
 * from the step's shape: Entities), a new Session (persistence context) per operation, and the
 * step's shape done through Hibernate's own API: a select by primary key is session.find, any
 * other select an HQL query into entities, an insert persist + commit, an update by key find,
 * set the fields, commit (dirty checking), other updates and deletes HQL mutation queries, a
 * batch group persist per row in one transaction (JDBC batching on); a statement of no plain
 * shape is a native query. Every setting that changes behaviour is pinned (SETTINGS). */
final class HibernateDriver extends LayerDriver {
    /** Hibernate's settings, pinned: every one that changes what the layer does per operation. */
    private static final Map<String, String> SETTINGS = new LinkedHashMap<>();
    static {
        SETTINGS.put("hibernate.hbm2ddl.auto", "none");                     // the tables exist: never created or dropped
        SETTINGS.put("hibernate.cache.use_second_level_cache", "false");
        SETTINGS.put("hibernate.cache.use_query_cache", "false");
        SETTINGS.put("hibernate.show_sql", "false");                        // statement logging off
        SETTINGS.put("hibernate.format_sql", "false");
        SETTINGS.put("hibernate.highlight_sql", "false");
        SETTINGS.put("hibernate.use_sql_comments", "false");
        SETTINGS.put("hibernate.generate_statistics", "false");
        SETTINGS.put("hibernate.session.events.log", "false");
        SETTINGS.put("hibernate.jdbc.log.warnings", "false");              // no getWarnings per statement
        SETTINGS.put("hibernate.jdbc.batch_size", "100");
        SETTINGS.put("hibernate.order_inserts", "true");
        SETTINGS.put("hibernate.order_updates", "true");
        SETTINGS.put("hibernate.query.plan_cache_enabled", "true");         // an HQL text is interpreted once
        SETTINGS.put("hibernate.query.plan_cache_max_size", "2048");
        SETTINGS.put("hibernate.type.java_time_use_direct_jdbc", "true");   // LocalDateTime via setObject/getObject
        SETTINGS.put("hibernate.auto_quote_keyword", "true");
        SETTINGS.put("hibernate.connection.provider_disables_autocommit", "false");
        SETTINGS.put("hibernate.boot.allow_jdbc_metadata_access", "true");
    }

    /** What every client of the method shares: the entities made so far and the SessionFactory
     * that maps them (rebuilt, untimed, when a step needs a table it does not map yet). */
    private static final class Mapping {
        final Over over;
        final Map<String, Entities.Entity_> entities = new LinkedHashMap<>();
        volatile SessionFactory factory;

        Mapping(Over over) {
            this.over = over;
        }

        /** The SessionFactory, built now (with the entities so far, maybe none) if there is none. */
        synchronized void ensure(Connection boot) throws WorkerError {
            if (factory != null)
                return;
            if (boot == null)
                throw new WorkerError("internal", "no connection to build Hibernate's SessionFactory on", null);
            factory = build(new ArrayList<>(entities.values()), boot);
        }

        synchronized Entities.Entity_ entity(Shape shape, Connection boot) throws WorkerError {
            Entities.Entity_ e = entities.get(shape.table());
            if (e != null)
                return e;
            if (boot == null)
                throw new WorkerError("internal", "no connection to build Hibernate's SessionFactory on", null);
            e = Entities.make(shape, over.booleanIsInteger());
            List<Entities.Entity_> all = new ArrayList<>(entities.values());
            all.add(e);
            SessionFactory made = build(all, boot);
            if (factory != null)
                factory.close();
            factory = made;
            entities.put(shape.table(), e);
            return e;
        }

        private SessionFactory build(List<Entities.Entity_> all, Connection boot) {
            StandardServiceRegistryBuilder rb = new StandardServiceRegistryBuilder();
            SETTINGS.forEach(rb::applySetting);
            rb.applySetting("hibernate.connection.provider_class", new Handed(boot));
            StandardServiceRegistry registry = rb.build();
            try {
                MetadataSources sources = new MetadataSources(registry);
                for (Entities.Entity_ e : all)
                    sources.addAnnotatedClass(e.type);
                return sources.buildMetadata().buildSessionFactory();
            } catch (RuntimeException x) {
                StandardServiceRegistryBuilder.destroy(registry);
                throw x;
            }
        }

        synchronized void close() {
            if (factory != null)
                factory.close();
            factory = null;
            entities.clear();
        }
    }

    /** Hands Hibernate's boot the worker's own connection (it reads the DatabaseMetaData) and
     * never closes it; sessions are each given the step's connection (SessionBuilder.connection). */
    private static final class Handed implements ConnectionProvider {
        private static final long serialVersionUID = 1L;
        private final transient Connection c;

        Handed(Connection c) {
            this.c = c;
        }

        @Override
        public Connection getConnection() {
            return c;
        }

        @Override
        public void closeConnection(Connection conn) {
        }

        @Override
        public boolean supportsAggressiveRelease() {
            return false;
        }

        @Override
        public boolean isUnwrappableAs(Class<?> type) {
            return false;
        }

        @Override
        public <T> T unwrap(Class<T> type) {
            throw new UnknownUnwrapTypeException(type);
        }
    }

    private final Mapping mapping;
    private final boolean owner; // the session's driver (not a client's): the mapping closes with it

    // per step (made in stepBegin, before the clock)
    private Entities.Entity_ entity; // the shape's table's entity; null: raw SQL (no plain shape)
    private String hql;              // select (not by key), update and delete not by key
    private Class<?>[] whereTypes;   // per where column: its attribute's type
    private Class<?>[] setTypes;     // per set column (update): its field's type
    private Field[] readFields;      // select: the field of each column read, in order
    private Class<?>[] nullClasses;  // raw SQL: the Java class each parameter's NULL is bound as

    // commit_every: the group's Session and Transaction (BEGIN … COMMIT)
    private Session group;
    private Transaction groupTx;

    HibernateDriver(Over over) {
        super(over);
        mapping = new Mapping(over);
        owner = true;
    }

    private HibernateDriver(HibernateDriver of) {
        super(of);
        mapping = of.mapping;
        owner = false;
    }

    @Override
    String layerName() {
        return "Hibernate ORM";
    }

    @Override
    String layerVersion() {
        return Version.getVersionString();
    }

    @Override
    String literalWhy() {
        return "Hibernate binds every value (entity state, HQL and native query parameters go as JDBC parameters); "
                + "inlining values is not how it runs statements";
    }

    @Override
    String batchStyle() {
        return "a Session per group, persist per row, one transaction: Hibernate's JDBC batching "
                + "(hibernate.jdbc.batch_size=100, order_inserts) flushes the group's INSERTs at commit as "
                + "addBatch per row + executeBatch (one per 100 rows) on one PreparedStatement";
    }

    @Override
    void settings(ObjectNode s) {
        super.settings(s);
        s.put("layer", "Hibernate ORM " + Version.getVersionString() + ", native bootstrap (StandardServiceRegistryBuilder, "
                + "MetadataSources, one SessionFactory shared by the worker's clients)");
        StringBuilder pins = new StringBuilder();
        SETTINGS.forEach((k, v) -> pins.append(pins.length() > 0 ? ", " : "").append(k).append('=').append(v));
        s.put("hibernate settings", pins + "; hibernate.dialect unset: Hibernate picks " + over.hibernateDialect()
                + " and its version from the connection's metadata at boot (naming it is deprecated); "
                + "hibernate.jdbc.fetch_size unset (the driver's: whole results)");
        s.put("entities", "JPA entity classes generated at run time with ByteBuddy (the version Hibernate depends on) when "
                + "a step first needs a table, from its shape's table_columns, table_types and key: @Entity, @Table, a "
                + "public field per column with @Column, @Id on the key (field access); a composite key an @IdClass "
                + "(Serializable, equals/hashCode); field types as the driver reads the column: integers Long, "
                + "numeric BigDecimal, char/varchar/text String, timestamp LocalDateTime, date LocalDate, double "
                + "Double, real Float, bytes byte[], boolean " + (over.booleanIsInteger() ? "Long (TINYINT(1))" : "Boolean")
                + "; real classes rather than dynamic-map entities: what applications map, and Hibernate's usual POJO "
                + "path; no bytecode enhancement, so dirty checking compares each entity with its snapshot at flush");
        s.put("session factory", "built when a step first needs a table's entity, untimed (the step's set-up), and "
                + "built again with every entity so far when a new table comes; its boot reads the connection's "
                + "DatabaseMetaData through a ConnectionProvider that hands it the worker's main connection and never "
                + "closes it; the tables exist (hbm2ddl none: nothing created, dropped or validated)");
        s.put("session", "a new Session (persistence context) per operation, opened on the step's connection "
                + "(sessionFactory.withOptions().connection(c).openSession(): the application's own connection) and "
                + "closed after it: the identity map starts empty, so no read is answered from it; flush mode AUTO; no "
                + "second-level or query cache");
        s.put("reads", "a select whose where is the primary key: session.find(Entity, id) (an @IdClass instance for "
                + "a composite key), no transaction (autocommit); any other select, and a scan: an HQL query "
                + "'from Entity e where e.col = :w0 …' (createSelectionQuery, getResultList) into entities, no "
                + "transaction; every value read from the entity's field; the HQL's interpretation is cached "
                + "(query plan cache), its SQL executed each time");
        s.put("writes", "in a transaction per operation (session.beginTransaction … commit: autocommit off, COMMIT, "
                + "autocommit on, as Hibernate's JDBC transactions do): insert persist(new entity) then commit (the "
                + "INSERT flushed at commit through the JDBC batch, one row); update by primary key find, set the "
                + "fields, commit (a SELECT, then an UPDATE of every column when dirty checking finds a change; a row "
                + "set to the value it has is matched but not written, as the DBMS counts it); delete by primary key "
                + "find, remove, commit; any other update or delete: an HQL mutation query (executeUpdate), commit");
        s.put("statements", "a statement of no plain shape (shape null, or a table that is not the suite's): a native "
                + "query (createNativeQuery(sql, Object[].class), JDBC-style ? parameters bound by position with "
                + "their Java class, NULLs with the class of the parameter's type) or native mutation query; values "
                + "as Hibernate reads them by the result's JDBC types, converted to the protocol's types");
        s.put("commit_every", "K operations share one Session and Transaction (beginTransaction before the first, "
                + "commit after the K-th), its persistence context cleared before each operation and flushed after "
                + "each write, so each operation still starts with an empty identity map");
        s.put("batch", batchStyle());
    }

    @Override
    Driver client() {
        return new HibernateDriver(this);
    }

    @Override
    void close() {
        closeGroup();
        super.close();
        if (owner)
            mapping.close();
    }

    // ---- steps --------------------------------------------------------------------------------

    private static Shape mapped(Step st) {
        return st.shape != null && st.shape.mapped() ? st.shape : null;
    }

    /** The shape's entity (the SessionFactory built for it when new), and everything the
     * operations of the step use, made before the clock. */
    @Override
    void stepBegin(Step st) throws SQLException, WorkerError {
        super.stepBegin(st);
        entity = null;
        hql = null;
        nullClasses = null;
        readFields = null;
        if (st.types != null) {
            nullClasses = new Class<?>[st.types.length];
            for (int k = 0; k < nullClasses.length; k++)
                nullClasses[k] = javaClass(st.types[k]);
        }
        Shape sh = mapped(st);
        if (st.kind == Step.BATCH && (sh == null || !sh.kind().equals(Shape.INSERT)))
            throw WorkerError.unsupported("a batch is an insert of entities (persist per row in one transaction); "
                    + "this statement is not one");
        if (st.kind == Step.CONNECT)
            return;
        Connection boot = conn != null ? conn : cached;
        if (sh == null) { // raw SQL: native queries, on a SessionFactory of the entities so far
            mapping.ensure(boot);
            return;
        }
        entity = mapping.entity(sh, boot);
        Entities.Entity_ e = entity;
        whereTypes = new Class<?>[sh.where().size()];
        StringBuilder where = new StringBuilder();
        for (int k = 0; k < sh.where().size(); k++) {
            String col = sh.where().get(k);
            if (e.field(col) == null)
                throw WorkerError.unsupported("column " + col + " is not one of table " + sh.table());
            whereTypes[k] = e.field(col).getType();
            where.append(k == 0 ? " where " : " and ").append("e.").append(e.attributes.get(col)).append(" = :w").append(k);
        }
        setTypes = new Class<?>[sh.columns().size()];
        for (int k = 0; k < sh.columns().size(); k++) {
            Field f = e.field(sh.columns().get(k));
            if (f == null)
                throw WorkerError.unsupported("column " + sh.columns().get(k) + " is not one of table " + sh.table());
            setTypes[k] = f.getType();
        }
        switch (sh.kind()) {
            case Shape.SELECT -> {
                readFields = new Field[sh.columns().size()];
                for (int k = 0; k < readFields.length; k++)
                    readFields[k] = e.field(sh.columns().get(k));
                if (!sh.byKey())
                    hql = "from " + e.name + " e" + where;
            }
            case Shape.UPDATE -> {
                if (!updatesByKey(sh)) {
                    StringBuilder set = new StringBuilder();
                    for (int k = 0; k < sh.columns().size(); k++)
                        set.append(k == 0 ? " set " : ", ").append("e.").append(e.attributes.get(sh.columns().get(k)))
                                .append(" = :s").append(k);
                    hql = "update " + e.name + " e" + set + where;
                }
            }
            case Shape.DELETE -> {
                if (!sh.byKey())
                    hql = "delete from " + e.name + " e" + where;
            }
            default -> {
            }
        }
    }

    /** an update by primary key that sets no key column: find, set, commit */
    private static boolean updatesByKey(Shape sh) {
        return sh.byKey() && sh.columns().stream().noneMatch(sh.key()::contains);
    }

    @Override
    long scanOp(Step st) throws SQLException {
        return exec(st, new Object[0]);
    }

    @Override
    long extendedOp(Step st, int i) throws SQLException {
        return exec(st, st.params[i]);
    }

    @Override
    long preparedOp(Step st, int i) throws SQLException {
        return exec(st, st.params[i]);
    }

    /** Batch group i: a Session, persist per row, commit (JDBC batching flushes the group). */
    @Override
    long batchOp(Step st, int i) throws SQLException {
        final int first = i * st.batch, last = Math.min(first + st.batch, st.n);
        final List<String> columns = st.shape.columns();
        return inSession(st, true, s -> {
            for (int r = first; r < last; r++)
                s.persist(entity.instance(columns, st.params[r], 0));
            return (long) (last - first);
        });
    }

    private long exec(Step st, Object[] args) throws SQLException {
        Shape sh = entity == null ? null : st.shape;
        if (sh == null)
            return st.fetch ? nativeRead(st, args) : nativeWrite(st, args);
        final Entities.Entity_ e = entity;
        switch (sh.kind()) {
            case Shape.SELECT -> {
                if (hql == null) { // by primary key
                    return inSession(st, false, s -> emit(st, s.find(e.type, e.id(sh.where(), args, 0))));
                }
                return inSession(st, false, s -> {
                    SelectionQuery<?> q = s.createSelectionQuery(hql, e.type);
                    for (int k = 0; k < whereTypes.length; k++)
                        q.setParameter("w" + k, Entities.as(whereTypes[k], args[k]));
                    long rows = 0;
                    for (Object x : q.getResultList())
                        rows += emit(st, x);
                    return rows;
                });
            }
            case Shape.INSERT -> {
                return inSession(st, true, s -> {
                    s.persist(e.instance(sh.columns(), args, 0));
                    return 1L;
                });
            }
            case Shape.UPDATE -> {
                if (hql == null) {
                    final int n = sh.columns().size();
                    return inSession(st, true, s -> {
                        Object found = s.find(e.type, e.id(sh.where(), args, n));
                        if (found == null)
                            return 0L;
                        for (int k = 0; k < n; k++)
                            e.field(sh.columns().get(k)).set(found, Entities.as(setTypes[k], args[k]));
                        return 1L;
                    });
                }
                return mutation(st, args, setTypes.length);
            }
            default -> { // delete
                if (hql == null) {
                    return inSession(st, true, s -> {
                        Object found = s.find(e.type, e.id(sh.where(), args, 0));
                        if (found == null)
                            return 0L;
                        s.remove(found);
                        return 1L;
                    });
                }
                return mutation(st, args, 0);
            }
        }
    }

    /** An HQL update or delete: the set values (:s0 …) then the where values (:w0 …). */
    private long mutation(Step st, Object[] args, int nset) throws SQLException {
        return inSession(st, true, s -> {
            MutationQuery q = s.createMutationQuery(hql);
            for (int k = 0; k < nset; k++)
                q.setParameter("s" + k, Entities.as(setTypes[k], args[k]));
            for (int k = 0; k < whereTypes.length; k++)
                q.setParameter("w" + k, Entities.as(whereTypes[k], args[nset + k]));
            return (long) q.executeUpdate();
        });
    }

    /** An entity (or none) as a row of the shape's columns, each value read from its field. */
    private long emit(Step st, Object e) throws ReflectiveOperationException, SQLException {
        final int nc = readFields.length;
        st.ncols = nc;
        if (e == null)
            return 0;
        Row row = st.row;
        row.reset(nc);
        for (int c = 0; c < nc; c++)
            put(row, c, readFields[c].get(e));
        st.emit(row);
        return 1;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void bindNative(org.hibernate.query.CommonQueryContract q, Object[] args) {
        for (int k = 0; k < args.length; k++) {
            if (args[k] == null)
                ((org.hibernate.query.NativeQuery) q).setParameter(k + 1, null, (Class) nullClasses[k]);
            else
                q.setParameter(k + 1, args[k]);
        }
    }

    private long nativeRead(Step st, Object[] args) throws SQLException {
        return inSession(st, false, s -> {
            NativeQuery<Object[]> q = s.createNativeQuery(st.sql, Object[].class);
            bindNative(q, args);
            long rows = 0;
            Row row = st.row;
            for (Object[] r : q.getResultList()) {
                row.reset(r.length);
                for (int c = 0; c < r.length; c++)
                    put(row, c, r[c]);
                st.emit(row);
                st.ncols = r.length;
                rows++;
            }
            return rows;
        });
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private long nativeWrite(Step st, Object[] args) throws SQLException {
        return inSession(st, true, s -> {
            MutationQuery q = s.createNativeMutationQuery(st.sql);
            for (int k = 0; k < args.length; k++) {
                if (args[k] == null)
                    q.setParameter(k + 1, null, (Class) nullClasses[k]);
                else
                    q.setParameter(k + 1, args[k]);
            }
            return (long) q.executeUpdate();
        });
    }

    // ---- sessions and transactions -------------------------------------------------------------

    private interface Work {
        long run(Session s) throws Exception;
    }

    private Session open(Step st) {
        return mapping.factory.withOptions().connection(conn(st)).openSession();
    }

    /** One operation's work in a new Session (writes: in a transaction of its own), or in the
     * commit_every group's Session, cleared first (flushed after a write). */
    private long inSession(Step st, boolean writes, Work w) throws SQLException {
        if (group != null) {
            try {
                group.clear();
                long r = w.run(group);
                if (writes)
                    group.flush();
                return r;
            } catch (Exception e) {
                throw translate(e);
            }
        }
        Session s = open(st);
        Transaction tx = null;
        try {
            if (writes)
                tx = s.beginTransaction();
            long r = w.run(s);
            if (tx != null)
                tx.commit();
            return r;
        } catch (Exception e) {
            if (tx != null && tx.isActive()) {
                try {
                    tx.rollback();
                } catch (RuntimeException x) {
                    System.err.println("abworker-java: rollback: " + x);
                }
            }
            throw translate(e);
        } finally {
            s.close();
        }
    }

    /** A database error as the driver's SQLException (a db answer with its SQLSTATE). */
    private static SQLException translate(Exception e) {
        SQLException s = sqlException(e);
        if (s != null)
            return s;
        if (e instanceof RuntimeException r)
            throw r;
        throw new IllegalStateException(e);
    }

    /** BEGIN of a commit_every group: its Session and Transaction. */
    @Override
    void txnBegin(Step st) throws SQLException {
        group = open(st);
        try {
            groupTx = group.beginTransaction();
        } catch (RuntimeException e) {
            closeGroup();
            throw translate(e);
        }
    }

    @Override
    void txnCommit(Step st) throws SQLException {
        try {
            groupTx.commit();
        } catch (RuntimeException e) {
            throw translate(e);
        } finally {
            closeGroup();
        }
    }

    private void closeGroup() {
        if (group == null)
            return;
        try {
            if (groupTx != null && groupTx.isActive())
                groupTx.rollback();
        } catch (RuntimeException e) {
            System.err.println("abworker-java: rollback: " + e);
        }
        try {
            group.close();
        } catch (RuntimeException e) {
            System.err.println("abworker-java: closing a Session: " + e);
        }
        group = null;
        groupTx = null;
    }

    @Override
    void recover(Step st) {
        closeGroup();
        super.recover(st);
    }
}
