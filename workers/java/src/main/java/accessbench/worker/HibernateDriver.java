package accessbench.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import jakarta.persistence.Tuple;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.hibernate.Session;
import org.hibernate.SessionBuilder;
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
import org.hibernate.resource.jdbc.spi.StatementInspector;
import org.hibernate.service.UnknownUnwrapTypeException;

/** java-hibernate+pgjdbc, java-hibernate+mariadb: Hibernate ORM over the bare methods' JDBC
 * drivers, used as its users use it — JPA entities (one per table of the suite, made at run time
 * from the tables the steps name, with their associations: Entities), a new Session (persistence
 * context) per operation, and the step's shape done through Hibernate's own API: a select of
 * every column by primary key is session.find, any other select a JPA Criteria query (Criteria)
 * into entities (every column of one table) or tuples (some of its columns, or a join, an
 * aggregate, a group: Hibernate has no partial load of entities), an insert persist + commit, an update by key find, set the fields, commit (dirty
 * checking), a delete by key find, remove, commit, other updates and deletes Criteria mutation
 * queries (CriteriaUpdate, CriteriaDelete), a batch group persist per row in one transaction
 * (JDBC batching on); a load through the entities' @OneToMany Sets (lazily touched, join fetched,
 * or subselect fetched); a statement of no shape a native query, answered "api": "raw". Every
 * setting that changes behaviour is pinned (SETTINGS). */
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
        SETTINGS.put("hibernate.criteria.plan_cache_enabled", "false");    // Hibernate's default: a criteria query is translated per execution
        SETTINGS.put("hibernate.criteria.copy_tree", "false");             // Hibernate's default (native bootstrap): the tree is used as built
        SETTINGS.put("hibernate.criteria.value_handling_mode", "bind");    // Hibernate's default: values as JDBC parameters
        SETTINGS.put("hibernate.default_batch_fetch_size", "-1");          // no batch fetching (the lazy strategy is N+1)
        SETTINGS.put("hibernate.use_subselect_fetch", "false");            // subselect fetching only in a selectin load's sessions
        SETTINGS.put("hibernate.type.java_time_use_direct_jdbc", "true");   // LocalDateTime via setObject/getObject
        SETTINGS.put("hibernate.auto_quote_keyword", "true");
        SETTINGS.put("hibernate.connection.provider_disables_autocommit", "false");
        SETTINGS.put("hibernate.boot.allow_jdbc_metadata_access", "true");
    }

    /** What every client of the method shares: the tables the steps named so far, their entities
     * and the SessionFactory that maps them (rebuilt, untimed, when a step names a table or a
     * reference it does not map yet: every entity made again, so that associations join them). */
    private static final class Mapping {
        final Over over;
        final Map<String, Shape.Table> tables = new LinkedHashMap<>();
        Map<String, Entities.Entity_> entities = Map.of();
        final Map<String, String> refused = new LinkedHashMap<>(); // table → why it has no entity
        volatile SessionFactory factory;

        Mapping(Over over) {
            this.over = over;
        }

        /** The entities of the tables the step names (with those named before), the
         * SessionFactory built for them (again) when one is new. */
        synchronized Map<String, Entities.Entity_> entities(Collection<Shape.Table> named, Connection boot)
                throws WorkerError {
            boolean changed = factory == null;
            Map<String, Shape.Table> now = new LinkedHashMap<>(tables);
            for (Shape.Table t : named) {
                Shape.Table had = now.get(t.name());
                Shape.Table merged = t;
                if (had != null && had.columns().equals(t.columns()) && had.types().equals(t.types())
                        && had.key().equals(t.key())) {
                    Map<String, Shape.Col> refs = new LinkedHashMap<>(had.references());
                    refs.putAll(t.references());
                    merged = new Shape.Table(t.name(), t.columns(), t.types(), t.key(), refs);
                }
                if (!merged.equals(had)) {
                    now.put(t.name(), merged);
                    changed = true;
                }
            }
            if (!changed)
                return entities;
            if (boot == null)
                throw new WorkerError("internal", "no connection to build Hibernate's SessionFactory on", null);
            Map<String, String> why = new LinkedHashMap<>();
            List<Shape.Table> mappable = new ArrayList<>();
            for (Shape.Table t : now.values()) {
                String no = Entities.refusal(t, over.booleanIsInteger());
                if (no == null)
                    mappable.add(t);
                else
                    why.put(t.name(), no);
            }
            Map<String, Entities.Entity_> made = Entities.make(mappable, over.booleanIsInteger());
            SessionFactory built = build(made.values(), boot);
            if (factory != null)
                factory.close();
            factory = built; // all of it, or (an exception above) none of it
            entities = made;
            tables.clear();
            tables.putAll(now);
            refused.clear();
            refused.putAll(why);
            return made;
        }

        private SessionFactory build(Collection<Entities.Entity_> all, Connection boot) {
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
            tables.clear();
            entities = Map.of();
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

    /** How a step's operations run, chosen when it begins. */
    private enum Way { RAW, FIND, SELECT, PERSIST, SET_BY_KEY, REMOVE_BY_KEY, MUTATE, LOAD }

    // per step (made in stepBegin, before the clock)
    private Way way;
    private Entities.Entity_ entity; // the shape's table's entity
    private Criteria criteria;       // a Criteria select, update or delete
    private Class<?>[] setTypes;     // an update by key: per set column, its field's type
    private Field[] readFields;      // a find: the field of each column read, in order
    private Class<?>[] nullClasses;  // raw SQL: the Java class each parameter's NULL is bound as
    private Entities.Entity_[] levelEntities; // a load: each level's entity
    private Field[] levelSets;       // a load: per level, the @OneToMany Set of the level above's entity
    private List<String[]> fetches;  // a joined load: (entity, Set attribute) per level

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
        return "Hibernate binds every value (entity state, Criteria values and native query parameters go as JDBC "
                + "parameters); inlining values is not how it runs statements";
    }

    @Override
    String batchStyle() {
        return "a Session per group, persist per row, one transaction: Hibernate's JDBC batching "
                + "(hibernate.jdbc.batch_size=100, order_inserts) flushes the group's INSERTs at commit as "
                + "addBatch per row + executeBatch (one per 100 rows) on one PreparedStatement";
    }

    @Override
    void capabilities(ObjectNode caps) {
        ObjectNode shapes = caps.putObject("shapes");
        FEATURES.forEach(shapes.putArray("maps")::add);
        shapes.putObject("unsupported"); // every feature has its Criteria (or find/persist/association) form
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
        s.put("entities", "JPA entity classes generated at run time with ByteBuddy (the version Hibernate depends on) for "
                + "every table the steps have named so far (a step's shape.tables, a load's levels), from their columns, "
                + "types, key and references: @Entity, @Table, a public field per column with @Column, @Id on the key "
                + "(field access); a composite key an @IdClass (Serializable, equals/hashCode); field types as the "
                + "driver reads the column: integers Long, numeric BigDecimal, char/varchar/text String, timestamp "
                + "LocalDateTime, date LocalDate, double Double, real Float, bytes byte[], boolean "
                + (over.booleanIsInteger() ? "Long (TINYINT(1))" : "Boolean") + "; a column referencing another "
                + "mapped table's key (the suite's references) maps the association both ways, as applications map a "
                + "foreign key: @ManyToOne(fetch = LAZY) @JoinColumn(name = <column>, insertable = false, updatable = "
                + "false) on the referencing entity (the column stays a basic field, which inserts and updates write) "
                + "and @OneToMany(mappedBy = …) Set<referencing entity> on the referenced one (lazy, Hibernate's "
                + "PersistentSet; a Set rather than a List, since Hibernate cannot join-fetch nested bags); real "
                + "classes rather than dynamic-map entities: what applications map, and Hibernate's usual POJO path; "
                + "no bytecode enhancement, so dirty checking compares each entity with its snapshot at flush");
        s.put("session factory", "built when a step first names a table (or a reference) it does not map, untimed (the "
                + "step's set-up), with every entity made again so that the associations between them are mapped; its "
                + "boot reads the connection's DatabaseMetaData through a ConnectionProvider that hands it the worker's "
                + "main connection and never closes it; the tables exist (hbm2ddl none: nothing created, dropped or "
                + "validated)");
        s.put("session", "a new Session (persistence context) per operation, opened on the step's connection "
                + "(sessionFactory.withOptions().connection(c).openSession(): the application's own connection) and "
                + "closed after it: the identity map starts empty, so no read is answered from it; flush mode AUTO; no "
                + "second-level or query cache");
        s.put("queries", "the JPA Criteria API throughout (HibernateCriteriaBuilder from session.getCriteriaBuilder()), "
                + "the query built in each operation as a repository method builds it per call, then "
                + "session.createSelectionQuery(criteria) / createMutationQuery(criteria): no HQL text. Hibernate "
                + "translates the criteria tree to SQL at each execution (hibernate.criteria.plan_cache_enabled=false, "
                + "its default); marker values bound through cb.value (JDBC parameters, each converted to its "
                + "attribute's Java type), the statement's literals as cb.literal");
        s.put("reads", "no transaction (autocommit); a select of every column of one table (SELECT *, or each one "
                + "listed) whose where is exactly the primary key: session.find(Entity, id) (an @IdClass instance for a "
                + "composite key); any other select of every column of one table (plain, ranges, IN, IS NULL, LIKE, "
                + "OR, ORDER BY, a page), and such a scan: createQuery(Entity) … select(root) into entities, every "
                + "value read from the entity's field; a select of some of a table's columns (by key too: Hibernate "
                + "has no partial load of entities, so its users project), or with a join, an aggregate or GROUP BY: "
                + "a projection, only the items selected: createTupleQuery() with multiselect of the items "
                + "(root.get(attribute), cb.count(), cb.count/sum/avg "
                + "(path), cb.min/max for numbers and cb.least/greatest for other types: min()/max() in SQL), joins "
                + "through the mapped associations (from.join(\"<table>_by_<column>\", JoinType.LEFT|INNER) for the "
                + "@OneToMany side, from.join(\"<column>_ref\") for the @ManyToOne side), groupBy, orderBy(cb.asc|"
                + "cb.desc), setFirstResult/setMaxResults for OFFSET/LIMIT (Hibernate's SQL: OFFSET/FETCH on PostgreSQL, "
                + "LIMIT on MariaDB); each value read from the Tuple. JPA types sum() of an integer attribute as a "
                + "Long: where the DBMS's sum is an exact decimal (" + (over.booleanIsInteger() ? "MariaDB: every sum "
                + "of integers" : "PostgreSQL: a sum of bigint") + ") that Long is answered as the decimal the DBMS "
                + "gives; avg() of an exact number is a Double in JPA and answered unsupported (its digits are not "
                + "the DBMS's)");
        s.put("writes", "in a transaction per operation (session.beginTransaction … commit: autocommit off, COMMIT, "
                + "autocommit on, as Hibernate's JDBC transactions do): insert persist(new entity) then commit (the "
                + "INSERT flushed at commit through the JDBC batch, one row); update by primary key find, set the "
                + "fields, commit (a SELECT, then an UPDATE of every column when dirty checking finds a change; a row "
                + "set to the value it has is matched but not written, as the DBMS counts it); delete by primary key "
                + "find, remove, commit; any other update: CriteriaUpdate with set(path, value), an increment "
                + "set(path, cb.sum(path, value)), and any other delete CriteriaDelete, each "
                + "createMutationQuery(criteria).executeUpdate(), commit");
        s.put("load", "through the entities' @OneToMany Sets, in Hibernate's own words: lazy — the parents' Criteria "
                + "query, then each parent's Set touched (iterated: Hibernate initializes the PersistentSet with one "
                + "SELECT … WHERE <column> = ? per collection), each child's likewise: 1 + parents + children statements "
                + "(the N+1 pattern); joined — join fetch: root.fetch(\"<level 1 set>\", JoinType.LEFT).fetch(\"<level "
                + "2 set>\", JoinType.LEFT) in the parents' Criteria query, one SELECT with LEFT JOINs, Hibernate "
                + "de-duplicating the parents itself (no DISTINCT needed since Hibernate 6); selectin — Hibernate's "
                + "subselect fetching, enabled for the operation's Session (sessionFactory.withOptions()"
                + ".subselectFetchEnabled(true), what @Fetch(FetchMode.SUBSELECT) does per mapping): touching the first "
                + "parent's Set loads the Sets of every parent the query read in one SELECT … WHERE <column> IN "
                + "(<the parents' query as a subquery>), and the next level likewise from that one: one statement per "
                + "level, with Hibernate's subquery where SQLAlchemy's selectinload sends the keys read (Hibernate's "
                + "batch fetching, hibernate.default_batch_fetch_size, would send keys but in batches of its size); "
                + "every entity once per operation (the Session's identity map), read from its fields");
        s.put("statements", "counted for the verification pass only, by a StatementInspector (Hibernate's hook on "
                + "every SQL string it prepares) given to that pass's Sessions (withOptions().statementInspector); "
                + "timed Sessions have none; a batch step's JDBC batch is one prepared statement, so batch steps "
                + "answer no count");
        s.put("raw", "a statement of no shape (or of a table that is not the suite's): a native query "
                + "(createNativeQuery(sql, Object[].class), JDBC-style ? parameters bound by position with their Java "
                + "class, NULLs with the class of the parameter's type) or native mutation query, answered \"api\": "
                + "\"raw\"; values as Hibernate reads them by the result's JDBC types, converted to the protocol's types");
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

    /** the verification pass counts statements for every step but connect and batch */
    @Override
    boolean countsStatements(Step st) {
        return st.kind != Step.CONNECT && st.kind != Step.BATCH;
    }

    /** The tables the step names (its shape's and a load's levels), their entities (the
     * SessionFactory built for them when one is new), how the step's operations run, and
     * everything they use, made before the clock. */
    @Override
    void stepBegin(Step st) throws SQLException, WorkerError {
        super.stepBegin(st);
        way = Way.RAW;
        entity = null;
        criteria = null;
        readFields = null;
        nullClasses = null;
        st.api = null;
        if (st.types != null) {
            nullClasses = new Class<?>[st.types.length];
            for (int k = 0; k < nullClasses.length; k++)
                nullClasses[k] = javaClass(st.types[k]);
        }
        Shape sh = st.shape != null && st.shape.mapped() ? st.shape : null;
        if (st.kind == Step.BATCH && (sh == null || !sh.kind().equals(Shape.INSERT)))
            throw WorkerError.unsupported("a batch is an insert of entities (persist per row in one transaction); "
                    + "this statement is not one");
        if (st.kind == Step.CONNECT)
            return;
        Connection boot = conn != null ? conn : cached;
        List<Shape.Table> named = new ArrayList<>();
        if (st.shape != null)
            named.addAll(st.shape.tables().values());
        if (st.association != null)
            named.addAll(st.association.levelTables());
        Map<String, Entities.Entity_> entities = mapping.entities(named, boot);
        if (sh == null) { // raw SQL: native queries, on a SessionFactory of the entities so far
            if (st.kind == Step.LOAD)
                throw WorkerError.unsupported("a load's parents are a select of a table of the suite");
            st.api = "raw";
            return;
        }
        entity = entities.get(sh.table());
        if (entity == null) {
            String why = mapping.refused.get(sh.table());
            throw WorkerError.unsupported(why != null ? why : "table " + sh.table() + " is not mapped to an entity");
        }
        Entities.Entity_ e = entity;
        switch (sh.kind()) {
            case Shape.SELECT -> {
                if (st.kind == Step.LOAD) {
                    criteria = new Criteria(sh, entities, over);
                    load(st, entities);
                    way = Way.LOAD;
                } else if (sh.byKey() && Criteria.wholeRows(sh)) {
                    readFields = new Field[sh.columns().size()];
                    for (int k = 0; k < readFields.length; k++)
                        readFields[k] = column(e, sh.columns().get(k)); // checks the column
                    way = Way.FIND;
                } else {
                    criteria = new Criteria(sh, entities, over);
                    way = Way.SELECT;
                }
            }
            case Shape.INSERT -> {
                for (String c : sh.columns())
                    column(e, c);
                way = Way.PERSIST;
            }
            case Shape.UPDATE -> {
                if (updatesByKey(sh)) {
                    setTypes = new Class<?>[sh.columns().size()];
                    for (int k = 0; k < setTypes.length; k++)
                        setTypes[k] = column(e, sh.columns().get(k)).getType();
                    way = Way.SET_BY_KEY;
                } else {
                    criteria = new Criteria(sh, entities, over);
                    way = Way.MUTATE;
                }
            }
            default -> { // delete
                if (sh.byKey()) {
                    way = Way.REMOVE_BY_KEY;
                } else {
                    criteria = new Criteria(sh, entities, over);
                    way = Way.MUTATE;
                }
            }
        }
    }

    private static Field column(Entities.Entity_ e, String c) throws WorkerError {
        Field f = e.field(c);
        if (f == null)
            throw WorkerError.unsupported("column " + c + " is not one of table " + e.table);
        return f;
    }

    /** A load's levels: each one's entity, and the Set of the level above's entity that holds it. */
    private void load(Step st, Map<String, Entities.Entity_> entities) throws WorkerError {
        Association a = st.association;
        levelEntities = new Entities.Entity_[a.levels.length];
        levelSets = new Field[a.levels.length];
        fetches = new ArrayList<>();
        Entities.Entity_ above = entity;
        for (int k = 0; k < a.levels.length; k++) {
            Association.Level v = a.levels[k];
            Entities.Entity_ e = entities.get(v.table);
            String set = above.toMany(v.table, v.column);
            if (e == null || set == null)
                throw WorkerError.unsupported("table " + v.table + " is not mapped with an association to " + above.table
                        + (e == null && mapping.refused.containsKey(v.table) ? ": " + mapping.refused.get(v.table) : ""));
            levelEntities[k] = e;
            levelSets[k] = above.sets.get(set);
            fetches.add(new String[] {above.table, set});
            above = e;
        }
        if (a.strategy != Association.JOINED)
            fetches = List.of();
    }

    /** an update by primary key that sets no key column to a value: find, set, commit */
    private static boolean updatesByKey(Shape sh) {
        return sh.byKey() && sh.set().stream().noneMatch(Shape.Assign::increment)
                && sh.columns().stream().noneMatch(sh.key()::contains);
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
        final Shape sh = st.shape;
        final Entities.Entity_ e = entity;
        switch (way) {
            case FIND -> {
                return inSession(st, false, s -> emit(st, s.find(e.type, e.id(sh.where(), args, 0))));
            }
            case SELECT -> {
                if (criteria.entityResult)
                    return inSession(st, false, s -> {
                        SelectionQuery<?> q = s.createSelectionQuery(criteria.entities(s.getCriteriaBuilder(), args, List.of()));
                        criteria.page(q, args);
                        long rows = 0;
                        for (Object x : q.getResultList())
                            rows += emit(st, x);
                        return rows;
                    });
                return inSession(st, false, s -> {
                    SelectionQuery<Tuple> q = s.createSelectionQuery(criteria.tuples(s.getCriteriaBuilder(), args));
                    criteria.page(q, args);
                    long rows = 0;
                    for (Tuple t : q.getResultList())
                        rows += emit(st, t);
                    return rows;
                });
            }
            case PERSIST -> {
                return inSession(st, true, s -> {
                    s.persist(e.instance(sh.columns(), args, 0));
                    return 1L;
                });
            }
            case SET_BY_KEY -> {
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
            case REMOVE_BY_KEY -> {
                return inSession(st, true, s -> {
                    Object found = s.find(e.type, e.id(sh.where(), args, 0));
                    if (found == null)
                        return 0L;
                    s.remove(found);
                    return 1L;
                });
            }
            case MUTATE -> {
                return inSession(st, true, s -> {
                    MutationQuery q = sh.kind().equals(Shape.UPDATE)
                            ? s.createMutationQuery(criteria.update(s.getCriteriaBuilder(), args))
                            : s.createMutationQuery(criteria.delete(s.getCriteriaBuilder(), args));
                    return (long) q.executeUpdate();
                });
            }
            default -> { // RAW
                return st.fetch ? nativeRead(st, args) : nativeWrite(st, args);
            }
        }
    }

    /** A load (Association): the parents' Criteria query into entities (with join fetches for
     * joined), then every level through the Sets, each entity handed over once as a row of its
     * table's columns: lazy and selectin touch each Set (Hibernate loads it then: a SELECT per
     * Set, or for selectin a subselect fetch of every Set of that level at once). */
    @Override
    long loadOp(Step st, int i) throws SQLException {
        final Object[] args = st.params[i];
        final boolean subselect = st.association.strategy == Association.SELECTIN;
        return inSession(st, false, subselect, s -> {
            SelectionQuery<?> q = s.createSelectionQuery(criteria.entities(s.getCriteriaBuilder(), args, fetches));
            criteria.page(q, args);
            long rows = 0;
            for (Object parent : q.getResultList()) {
                rows += entity(st, entity, parent);
                rows += children(st, 0, parent);
            }
            return rows;
        });
    }

    /** The entities of level k under owner (its Set, loaded when first touched), and theirs. */
    private long children(Step st, int k, Object owner) throws ReflectiveOperationException, SQLException {
        Set<?> set = (Set<?>) levelSets[k].get(owner);
        if (set == null)
            return 0;
        long rows = 0;
        for (Object child : set) {
            rows += entity(st, levelEntities[k], child);
            if (k + 1 < levelSets.length)
                rows += children(st, k + 1, child);
        }
        return rows;
    }

    /** An entity as a row of its table's columns, each value read from its field. */
    private static long entity(Step st, Entities.Entity_ e, Object x) throws ReflectiveOperationException, SQLException {
        final Field[] f = e.columnFields;
        Row row = st.row;
        row.reset(f.length);
        for (int c = 0; c < f.length; c++)
            put(row, c, f[c].get(x));
        st.emit(row);
        st.values += f.length;
        return 1;
    }

    /** An entity (or none) as a row of the shape's items, each value read from its field. */
    private long emit(Step st, Object e) throws ReflectiveOperationException, SQLException {
        final Field[] fields = way == Way.FIND ? readFields : criteria.readFields;
        final int nc = fields.length;
        st.ncols = nc;
        if (e == null)
            return 0;
        Row row = st.row;
        row.reset(nc);
        for (int c = 0; c < nc; c++)
            put(row, c, fields[c].get(e));
        st.emit(row);
        return 1;
    }

    /** A projection's row: each item's value from the Tuple. */
    private long emit(Step st, Tuple t) throws SQLException {
        final int nc = st.shape.items().size();
        st.ncols = nc;
        Row row = st.row;
        row.reset(nc);
        for (int c = 0; c < nc; c++)
            put(row, c, criteria.value(c, t.get(c)));
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

    /** A Session on the step's connection; in the verification pass with a StatementInspector
     * counting the statements Hibernate prepares; subselect: subselect fetching on. */
    private Session open(Step st, boolean subselect) {
        SessionBuilder b = mapping.factory.withOptions().connection(conn(st));
        if (subselect)
            b = b.subselectFetchEnabled(true);
        if (st.verify)
            b = b.statementInspector((StatementInspector) sql -> {
                st.statements++;
                return sql;
            });
        return b.openSession();
    }

    private long inSession(Step st, boolean writes, Work w) throws SQLException {
        return inSession(st, writes, false, w);
    }

    /** One operation's work in a new Session (writes: in a transaction of its own), or in the
     * commit_every group's Session, cleared first (flushed after a write). */
    private long inSession(Step st, boolean writes, boolean subselect, Work w) throws SQLException {
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
        Session s = open(st, subselect);
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
        group = open(st, false);
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
