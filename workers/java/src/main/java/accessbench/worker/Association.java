package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** A load step's association (PROTOCOL.md, "Loading associations"): the parents' statement (the
 * step's sql, a select of every column of one table) and, per level below, the table whose column
 * references the level above's parent_column, with the drivers' statements for it (one, in,
 * joined: src/accessbench/suite/association.py writes them, so no worker composes SQL beyond
 * joining `?` markers into an IN list).
 *
 * The hand-written strategies every JDBC driver of this worker runs are here, once (drivers
 * supply one operation: run a bound statement, handing each decoded row over):
 * - lazy: the parents' statement, then per level `one` for each distinct parent_column value
 *   read at the level above (a statement per parent and per child: N+1);
 * - selectin: the parents' statement, then per level one `in` statement over those values (none
 *   when the level above read no rows);
 * - joined: the `joined` statement once, each row split by the levels' column counts, each
 *   entity kept once by its key (a level whose key is NULL in a row has no entity there).
 * Every entity read is handed to the step (checksummed in verification) as a row of its table's
 * columns in order, and counted: an operation's rows are its entities, its statements those sent. */
final class Association {
    static final int LAZY = 0, JOINED = 1, SELECTIN = 2;

    /** hello's settings["load"] of the drivers */
    static final String BY_HAND = "associations by hand, the message's statements each a new PreparedStatement, bound, "
            + "executed and closed (the extended mode's way; java-pgjdbc on its main connection, prepareThreshold=0, and "
            + "with fetchSize the whole load in one transaction so that it reads through a portal): lazy — the parents, "
            + "then a level's `one` per distinct parent_column value read at the level above (1 + parents + children "
            + "statements); selectin — per level one `in` statement, its markers joined by ', ' for those values (none "
            + "when the level above read no rows); joined — the `joined` statement once, each row split by the levels' "
            + "column counts; every entity once by its key; statements counted by the worker's code";
    static final String[] STRATEGIES = {"lazy", "joined", "selectin"};

    /** One level below the parents: its table's entity and the statements that read it. */
    static final class Level {
        final String table, column, parentColumn, one, inHead, inTail;
        final List<String> columns, types, key;
        int parentAt;   // the index of parentColumn among the level above's columns
        int columnAt;   // the index of column among this level's columns
        int[] keyAt;    // the key's columns among this level's

        Level(String table, String column, String parentColumn, List<String> columns, List<String> types,
                List<String> key, String one, String inHead, String inTail) {
            this.table = table;
            this.column = column;
            this.parentColumn = parentColumn;
            this.columns = columns;
            this.types = types;
            this.key = key;
            this.one = one;
            this.inHead = inHead;
            this.inTail = inTail;
        }

        /** this level's table as an entity description: its reference to the level above */
        Shape.Table entity(String above) {
            return new Shape.Table(table, columns, types, key,
                    java.util.Map.of(column, new Shape.Col(above, parentColumn)));
        }
    }

    final int strategy;
    final Level[] levels;
    final String joined;
    final String parentTable;
    final List<String> parentColumns, parentKey;
    final int[] parentKeyAt;

    private Association(int strategy, Level[] levels, String joined, Shape parents) {
        this.strategy = strategy;
        this.levels = levels;
        this.joined = joined;
        this.parentTable = parents.table();
        this.parentColumns = parents.tableColumns();
        this.parentKey = parents.key();
        this.parentKeyAt = indexes(parentColumns, parentKey);
    }

    /** The step message's load, or null (not a load step); the step's shape is its parents'. */
    static Association parse(JsonNode msg, Shape shape) throws WorkerError {
        JsonNode l = msg.get("load");
        if (l == null || l.isNull())
            throw WorkerError.protocol("a load step needs load: {strategy, levels, joined}");
        int strategy = Arrays.asList(STRATEGIES).indexOf(Fields.text(l, "strategy", ""));
        if (strategy < 0)
            throw WorkerError.protocol("load.strategy is lazy, joined or selectin");
        if (shape == null || !shape.mapped() || !shape.kind().equals(Shape.SELECT))
            throw WorkerError.protocol("a load step's shape is its parents' select, of a table of the suite");
        JsonNode ls = l.get("levels");
        if (ls == null || !ls.isArray() || ls.isEmpty())
            throw WorkerError.protocol("load.levels must list one level or more");
        Level[] levels = new Level[ls.size()];
        List<String> above = shape.tableColumns();
        for (int k = 0; k < levels.length; k++) {
            JsonNode x = ls.get(k);
            JsonNode in = x.get("in");
            if (in == null || !in.isArray() || in.size() != 2)
                throw WorkerError.protocol("load.levels[" + k + "].in is [head, tail]");
            Shape.Table t = Shape.table(Fields.text(x, "table", ""), tableOf(x));
            Level v = new Level(t.name(), Fields.text(x, "column", null), Fields.text(x, "parent_column", null),
                    t.columns(), t.types(), t.key(), Fields.text(x, "one", null), in.get(0).asText(), in.get(1).asText());
            v.parentAt = above.indexOf(v.parentColumn);
            v.columnAt = v.columns.indexOf(v.column);
            v.keyAt = indexes(v.columns, v.key);
            if (v.one == null || v.parentAt < 0 || v.columnAt < 0)
                throw WorkerError.protocol("load.levels[" + k + "]: column, parent_column (a column of the level above) and one");
            levels[k] = v;
            above = v.columns;
        }
        return new Association(strategy, levels, Fields.text(l, "joined", null), shape);
    }

    /** A level's entity in the form of shape.tables' values (columns, types, key). */
    private static JsonNode tableOf(JsonNode x) {
        com.fasterxml.jackson.databind.node.ObjectNode t = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        t.set("columns", x.get("table_columns"));
        t.set("types", x.get("table_types"));
        t.set("key", x.get("key"));
        return t;
    }

    private static int[] indexes(List<String> columns, List<String> names) {
        int[] at = new int[names.size()];
        for (int k = 0; k < at.length; k++)
            at[k] = columns.indexOf(names.get(k));
        return at;
    }

    /** the tables of the levels as entities, each referencing the level above */
    List<Shape.Table> levelTables() {
        List<Shape.Table> out = new ArrayList<>();
        String above = parentTable;
        for (Level v : levels) {
            out.add(v.entity(above));
            above = v.table;
        }
        return out;
    }

    String strategyName() {
        return STRATEGIES[strategy];
    }

    /** A level's `in` statement for n keys: head, the markers joined by ", ", tail. */
    static String in(String head, int n, String tail) {
        StringBuilder b = new StringBuilder(head.length() + tail.length() + 3 * n);
        b.append(head);
        for (int k = 0; k < n; k++)
            b.append(k == 0 ? "?" : ", ?");
        return b.append(tail).toString();
    }

    // ---- the drivers' hand-written strategies -----------------------------------------------------

    /** What a driver supplies: run one bound statement (its extended mode), decode every row into
     * a Row with the decoders of the statement's slot (0 the parents, 1 + k level k, levels + 1
     * the joined statement: each slot's result has its own columns) and hand each to rows. */
    interface Statements {
        void query(Step st, int slot, String sql, Object[] args, Rows rows) throws SQLException;
    }

    interface Rows {
        void row(Row r) throws SQLException;
    }

    /** One load operation by hand: every entity handed to the step once; returns the entities. */
    long run(Step st, Object[] args, Statements db) throws SQLException {
        Entities e = new Entities(st);
        if (strategy == JOINED) {
            joined(st, args, db, e);
            return e.count;
        }
        // the parents, then each level from the distinct parent_column values of the one above
        final Set<Object> first = new LinkedHashSet<>();
        final int[] at = {levels[0].parentAt};
        st.statements++;
        db.query(st, 0, st.sql, args, r -> {
            e.emit(r);
            Object v = r.value(at[0]);
            if (v != null)
                first.add(v);
        });
        Set<Object> values = first;
        for (int k = 0; k < levels.length; k++) {
            Level v = levels[k];
            Set<Object> next = new LinkedHashSet<>();
            at[0] = k + 1 < levels.length ? levels[k + 1].parentAt : -1;
            Rows each = r -> {
                e.emit(r);
                if (at[0] >= 0) {
                    Object x = r.value(at[0]);
                    if (x != null)
                        next.add(x);
                }
            };
            if (strategy == LAZY) {
                Object[] one = new Object[1];
                for (Object value : values) {
                    one[0] = value;
                    st.statements++;
                    db.query(st, k + 1, v.one, one, each);
                }
            } else if (!values.isEmpty()) {
                st.statements++;
                db.query(st, k + 1, in(v.inHead, values.size(), v.inTail), values.toArray(), each);
            }
            values = next;
        }
        return e.count;
    }

    /** joined: one statement; each row's parent, child and grandchild segments, each entity
     * kept once by its key. */
    private void joined(Step st, Object[] args, Statements db, Entities e) throws SQLException {
        final int nl = levels.length;
        final int[] from = new int[nl + 1], width = new int[nl + 1];
        final int[][] keyAt = new int[nl + 1][];
        width[0] = parentColumns.size();
        keyAt[0] = parentKeyAt;
        for (int k = 0; k < nl; k++) {
            from[k + 1] = from[k] + width[k];
            width[k + 1] = levels[k].columns.size();
            keyAt[k + 1] = levels[k].keyAt;
        }
        @SuppressWarnings("unchecked")
        final Set<Object>[] seen = new Set[nl + 1];
        for (int k = 0; k <= nl; k++)
            seen[k] = new HashSet<>();
        final Row part = new Row();
        st.statements++;
        db.query(st, nl + 1, joined, args, r -> {
            for (int k = 0; k <= nl; k++) {
                Object key = key(r, from[k], keyAt[k]);
                if (key == null || !seen[k].add(key))
                    continue;
                part.copy(r, from[k], width[k]);
                e.emit(part);
            }
        });
    }

    /** The key of the segment of r starting at from (its key columns at keyAt), or null when it
     * is NULL (no entity). */
    static Object key(Row r, int from, int[] keyAt) {
        if (keyAt.length == 1)
            return r.value(from + keyAt[0]);
        List<Object> k = new ArrayList<>(keyAt.length);
        boolean any = false;
        for (int c : keyAt) {
            Object v = r.value(from + c);
            any |= v != null;
            k.add(v);
        }
        return any ? k : null;
    }

    /** The entities an operation reads: each handed to the step, counted with its values. */
    static final class Entities {
        final Step st;
        long count;

        Entities(Step st) {
            this.st = st;
        }

        void emit(Row r) {
            st.emit(r);
            st.values += r.n;
            count++;
        }
    }
}
