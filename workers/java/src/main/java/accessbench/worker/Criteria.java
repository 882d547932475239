package accessbench.worker;

import jakarta.persistence.Tuple;
import jakarta.persistence.criteria.CriteriaDelete;
import jakarta.persistence.criteria.CriteriaQuery;
import jakarta.persistence.criteria.CriteriaUpdate;
import jakarta.persistence.criteria.Expression;
import jakarta.persistence.criteria.Fetch;
import jakarta.persistence.criteria.From;
import jakarta.persistence.criteria.JoinType;
import jakarta.persistence.criteria.Order;
import jakarta.persistence.criteria.Path;
import jakarta.persistence.criteria.Predicate;
import jakarta.persistence.criteria.Root;
import jakarta.persistence.criteria.Selection;
import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.hibernate.query.SelectionQuery;
import org.hibernate.query.criteria.HibernateCriteriaBuilder;

/** A shape (PROTOCOL.md, Shapes) as Hibernate's JPA Criteria API builds it, one query per
 * operation, as an application's repository method builds it on each call:
 * - a select of every column of one table (star, or each one listed; no join, aggregate or group)
 *   reads entities — createQuery(Entity), from(Entity), select(root) — each value from its
 *   entity's field;
 * - any other select is a projection — a select of some of a table's columns too, since
 *   Hibernate has no partial load of entities that its users write: createTupleQuery() with
 *   multiselect of the items (paths,
 *   cb.count(), cb.count/sum/avg(path), cb.min/max (numbers) or cb.least/greatest (others)),
 *   joins through the entities' mapped associations (from.join("posts_by_user_id",
 *   JoinType.LEFT): the @OneToMany Set, or the @ManyToOne of the referencing side), groupBy;
 * - the condition: cb.and / cb.or of cb.equal, notEqual, lessThan, lessThanOrEqualTo,
 *   greaterThan, greaterThanOrEqualTo, between, path.in(…), isNull, isNotNull, like;
 *   orderBy(cb.asc / cb.desc); the page setFirstResult / setMaxResults on the query;
 * - an update CriteriaUpdate: set(path, value), an increment set(path, cb.sum(path, value));
 * - a delete CriteriaDelete.
 * A marker's value is bound (cb.value: a JDBC parameter, converted to its attribute's Java type),
 * a literal of the statement rendered as one (cb.literal). Everything the operations need but
 * the values is checked when the step begins (the constructor), so an operation builds only. */
final class Criteria {
    private final Shape sh;
    private final Map<String, Entities.Entity_> entities;
    final Entities.Entity_ root;
    final boolean entityResult;     // select: entities of the root (every column; no join, aggregate or group)
    final Field[] readFields;       // an entity result's field per item
    private final boolean[] decimalSum; // a projection's item: a sum of integers the DBMS gives as an exact decimal

    /** The shape's plan on the mapped entities; unsupported when it names a column, a table or a
     * join its entities do not map. over: the DBMS's typing of aggregates. */
    Criteria(Shape sh, Map<String, Entities.Entity_> entities, Over over) throws WorkerError {
        this.sh = sh;
        this.entities = entities;
        this.root = entity(sh.table());
        for (Shape.Join j : sh.joins()) {
            entity(j.table());
            join(j); // checks the association exists
        }
        if (sh.filter() != null)
            check(sh.filter());
        for (Shape.Order o : sh.order())
            type(o.column());
        for (Shape.Col g : sh.group())
            type(g);
        for (Shape.Assign a : sh.set())
            type(new Shape.Col(sh.table(), a.column()));
        boolean aggregates = sh.items().stream().anyMatch(Shape.Item::aggregate);
        entityResult = sh.kind().equals(Shape.SELECT) && sh.joins().isEmpty() && sh.group().isEmpty() && !aggregates
                && wholeRows(sh);
        readFields = new Field[entityResult ? sh.items().size() : 0];
        decimalSum = new boolean[sh.items().size()];
        for (int k = 0; k < sh.items().size(); k++) {
            Shape.Item it = sh.items().get(k);
            if (it.column() != null)
                type(it.column());
            if (entityResult)
                readFields[k] = root.field(it.column().column());
            if (it.aggregate() && it.column() != null) {
                String declared = sh.typeOf(it.column());
                Class<?> t = type(it.column());
                boolean integral = t == Long.class;
                if (it.fn().equals("avg") && t != Double.class && t != Float.class)
                    throw WorkerError.unsupported("avg of " + it.column().column() + " (" + declared + "): Hibernate's "
                            + "avg() is a Double (JPA), the DBMS's avg of an exact number an exact decimal, so the values "
                            + "read would not be the DBMS's");
                decimalSum[k] = it.fn().equals("sum") && integral && over.exactSum(declared);
            }
        }
    }

    /** a select of every column of its table (star, or each one listed): its rows are entities */
    static boolean wholeRows(Shape sh) {
        return sh.star() || sh.columns().containsAll(sh.tableColumns());
    }

    private Entities.Entity_ entity(String table) throws WorkerError {
        Entities.Entity_ e = entities.get(table);
        if (e == null)
            throw WorkerError.unsupported("table " + table + " is not mapped to an entity");
        return e;
    }

    /** the Java type of a column's attribute; unsupported when its entity has none */
    private Class<?> type(Shape.Col c) throws WorkerError {
        Entities.Entity_ e = entity(c.table() == null ? sh.table() : c.table());
        Class<?> t = e.typeOf(c.column());
        if (t == null)
            throw WorkerError.unsupported("column " + c.column() + " is not one of table " + e.table);
        return t;
    }

    private void check(Shape.Cond c) throws WorkerError {
        if (c.isAnd() || c.isOr()) {
            for (Shape.Cond t : c.terms())
                check(t);
            return;
        }
        type(c.column());
    }

    /** A join's association: (the entity joined from, its attribute) — the @OneToMany Set of the
     * table before it when the joined table references it, or the @ManyToOne of the table before
     * it when that one references the joined table. */
    private String[] join(Shape.Join j) throws WorkerError {
        Entities.Entity_ a = entity(j.a().table()), b = entity(j.table());
        String many = a.toMany(b.table, j.b().column());
        if (many != null && a.key.equals(List.of(j.a().column())))
            return new String[] {a.table, many};
        String one = a.toOne.get(j.a().column());
        if (one != null && b.key.equals(List.of(j.b().column())))
            return new String[] {a.table, one};
        throw WorkerError.unsupported("the join of " + j.table() + " on " + j.a().table() + "." + j.a().column() + " = "
                + j.table() + "." + j.b().column() + " follows no association the entities map");
    }

    // ---- one operation's query ------------------------------------------------------------------

    /** The values of one operation and the query's roots, for building its expressions. */
    private final class Build {
        final HibernateCriteriaBuilder cb;
        final Object[] args;
        final Map<String, From<?, ?>> froms = new HashMap<>();

        Build(HibernateCriteriaBuilder cb, Object[] args) {
            this.cb = cb;
            this.args = args;
        }

        @SuppressWarnings("rawtypes")
        Path path(Shape.Col c) {
            Entities.Entity_ e = entities.get(c.table() == null ? sh.table() : c.table());
            return froms.get(e.table).get(e.attributes.get(c.column()));
        }

        Class<?> typeOf(Shape.Col c) {
            Entities.Entity_ e = entities.get(c.table() == null ? sh.table() : c.table());
            return e.typeOf(c.column());
        }

        /** An operand as an expression of the type t: a marker's value bound, a literal as one. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        Expression operand(Shape.Operand o, Class<?> t) {
            Object v = Entities.as(t, o.of(args));
            if (v == null)
                return cb.nullLiteral((Class) t);
            return o.isParam() ? cb.value(v) : cb.literal(v);
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        Predicate predicate(Shape.Cond c) {
            if (c.isAnd() || c.isOr()) {
                Predicate[] terms = new Predicate[c.terms().size()];
                for (int k = 0; k < terms.length; k++)
                    terms[k] = predicate(c.terms().get(k));
                return c.isAnd() ? cb.and(terms) : cb.or(terms);
            }
            Path p = path(c.column());
            Class<?> t = typeOf(c.column());
            List<Shape.Operand> a = c.args();
            return switch (c.op()) {
                case "=" -> cb.equal(p, operand(a.get(0), t));
                case "<>" -> cb.notEqual(p, operand(a.get(0), t));
                case "<" -> cb.lessThan(p, operand(a.get(0), t));
                case "<=" -> cb.lessThanOrEqualTo(p, operand(a.get(0), t));
                case ">" -> cb.greaterThan(p, operand(a.get(0), t));
                case ">=" -> cb.greaterThanOrEqualTo(p, operand(a.get(0), t));
                case "between" -> cb.between(p, operand(a.get(0), t), operand(a.get(1), t));
                case "in" -> {
                    Expression[] values = new Expression[a.size()];
                    for (int k = 0; k < values.length; k++)
                        values[k] = operand(a.get(k), t);
                    yield p.in(values);
                }
                case "is null" -> cb.isNull(p);
                case "is not null" -> cb.isNotNull(p);
                case "like" -> cb.like(p, operand(a.get(0), String.class));
                default -> throw new IllegalStateException("no condition " + c.op());
            };
        }

        /** the root, the joins, the where */
        @SuppressWarnings({"unchecked", "rawtypes"})
        void from(jakarta.persistence.criteria.AbstractQuery q, Root r) throws WorkerError {
            froms.put(root.table, r);
            for (Shape.Join j : sh.joins()) {
                String[] via = join(j);
                froms.put(j.table(), froms.get(via[0]).join(via[1], j.left() ? JoinType.LEFT : JoinType.INNER));
            }
            if (sh.filter() != null)
                q.where(predicate(sh.filter()));
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        Selection item(Shape.Item it) {
            if (!it.aggregate())
                return path(it.column());
            if (it.column() == null)
                return cb.count(); // count(*)
            Path p = path(it.column());
            boolean number = Number.class.isAssignableFrom(typeOf(it.column()));
            return switch (it.fn()) {
                case "count" -> cb.count(p);
                case "sum" -> cb.sum(p);
                case "avg" -> cb.avg(p);
                case "min" -> number ? cb.min(p) : cb.least(p);
                default -> number ? cb.max(p) : cb.greatest(p); // max
            };
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        void order(CriteriaQuery q) {
            if (sh.order().isEmpty())
                return;
            List<Order> by = new ArrayList<>();
            for (Shape.Order o : sh.order())
                by.add(o.desc() ? cb.desc(path(o.column())) : cb.asc(path(o.column())));
            q.orderBy(by);
        }
    }

    /** The select of an entity result: the root's entities, and with fetches the levels of a
     * joined load (root.fetch(set, LEFT).fetch(set, LEFT) …: JOIN FETCH). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    CriteriaQuery<?> entities(HibernateCriteriaBuilder cb, Object[] args, List<String[]> fetches) throws WorkerError {
        Build b = new Build(cb, args);
        CriteriaQuery q = cb.createQuery(root.type);
        Root r = q.from(root.type);
        b.from(q, r);
        Fetch f = null;
        for (String[] set : fetches) // (entity table, its @OneToMany attribute), level by level
            f = f == null ? r.fetch(set[1], JoinType.LEFT) : f.fetch(set[1], JoinType.LEFT);
        q.select(r);
        b.order(q);
        return q;
    }

    /** The select of a projection: a Tuple per row. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    CriteriaQuery<Tuple> tuples(HibernateCriteriaBuilder cb, Object[] args) throws WorkerError {
        Build b = new Build(cb, args);
        CriteriaQuery<Tuple> q = cb.createTupleQuery();
        Root r = q.from(root.type);
        b.from(q, r);
        List<Selection<?>> items = new ArrayList<>();
        for (Shape.Item it : sh.items())
            items.add(b.item(it));
        q.multiselect(items);
        if (!sh.group().isEmpty()) {
            List<Expression<?>> by = new ArrayList<>();
            for (Shape.Col g : sh.group())
                by.add(b.path(g));
            q.groupBy(by);
        }
        b.order(q);
        return q;
    }

    /** limit and offset on the query (setFirstResult, setMaxResults) */
    void page(SelectionQuery<?> q, Object[] args) {
        if (sh.offset() != null)
            q.setFirstResult(((Number) Entities.as(Long.class, sh.offset().of(args))).intValue());
        if (sh.limit() != null)
            q.setMaxResults(((Number) Entities.as(Long.class, sh.limit().of(args))).intValue());
    }

    /** A projection's value k as the DBMS types it: a sum of integers that the DBMS gives as an
     * exact decimal (MariaDB's, PostgreSQL's of bigint) is the Long Hibernate reads (JPA's sum of
     * integers), as that decimal. */
    Object value(int k, Object v) {
        if (decimalSum[k] && v instanceof Long x)
            return BigDecimal.valueOf(x);
        return v;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    CriteriaUpdate<?> update(HibernateCriteriaBuilder cb, Object[] args) throws WorkerError {
        Build b = new Build(cb, args);
        CriteriaUpdate u = cb.createCriteriaUpdate(root.type);
        Root r = u.from(root.type);
        b.froms.put(root.table, r);
        for (Shape.Assign a : sh.set()) {
            Shape.Col c = new Shape.Col(sh.table(), a.column());
            Path p = b.path(c);
            Expression v = b.operand(a.arg(), b.typeOf(c));
            u.set(p, a.increment() ? cb.sum(p, v) : v);
        }
        if (sh.filter() != null)
            u.where(b.predicate(sh.filter()));
        return u;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    CriteriaDelete<?> delete(HibernateCriteriaBuilder cb, Object[] args) throws WorkerError {
        Build b = new Build(cb, args);
        CriteriaDelete d = cb.createCriteriaDelete(root.type);
        Root r = d.from(root.type);
        b.froms.put(root.table, r);
        if (sh.filter() != null)
            d.where(b.predicate(sh.filter()));
        return d;
    }
}
