package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What a step's statement does (PROTOCOL.md, "Shapes"), worked out by the runner
 * (suite/shape.py): no worker parses SQL. A select, insert, update or delete of one table.
 *
 * The plain form, as layers mapped it first: columns read (select), written (insert) or set
 * (update), and the columns compared with a marker by `=` (where), both in the order of the
 * markers, i.e. of the step's parameters; where is null whenever the statement is richer (a
 * range, OR, a literal, ordering, a page, a join, an aggregate, an increment). The full form:
 * features, the condition as a tree (filter), the result's items, joins, group, order, limit,
 * offset and the assignments (set). For the tables of the suite it names, each one's columns,
 * SQL types as the suite declares them, primary key and references (tables): what an ORM maps
 * its entities and their associations from; tableColumns, tableTypes and key are the shape's
 * own table's, null when it is not one of the suite's. A statement of no shape has no Shape. */
record Shape(String kind, String table, List<String> columns, List<String> where, List<String> tableColumns,
        List<String> tableTypes, List<String> key, List<String> features, Cond filter, List<Item> items,
        boolean star, List<Join> joins, List<Col> group, List<Order> order, Operand limit, Operand offset,
        List<Assign> set, Map<String, Table> tables) {

    static final String SELECT = "select", INSERT = "insert", UPDATE = "update", DELETE = "delete";

    /** A column of a table, by the table's name (an alias the statement gives is resolved). */
    record Col(String table, String column) {
    }

    /** A marker (params[param]) or a literal (value: Long, Double, String or Boolean). */
    record Operand(int param, Object value) {
        boolean isParam() {
            return param >= 0;
        }

        /** its value for one operation's parameters */
        Object of(Object[] args) {
            return param >= 0 ? args[param] : value;
        }
    }

    /** The condition tree: op "and" / "or" with terms, or a comparison (=, <>, <, <=, >, >=,
     * between, in, is null, is not null, like) of a column with its args. */
    record Cond(String op, List<Cond> terms, Col column, List<Operand> args) {
        boolean isAnd() {
            return op.equals("and");
        }

        boolean isOr() {
            return op.equals("or");
        }
    }

    /** A result column: a column (fn null) or an aggregate (count, sum, min, max, avg; count(*):
     * column null); as: the alias the statement gives, or null. */
    record Item(String fn, Col column, String as) {
        boolean aggregate() {
            return fn != null;
        }
    }

    /** An inner or left join of table, on a (a column of a table before it) = b (of table). */
    record Join(String type, String table, Col a, Col b) {
        boolean left() {
            return type.equals("left");
        }
    }

    record Order(Col column, boolean desc) {
    }

    /** An update's assignment: column = arg (op "="), or column = column + arg (op "+"). */
    record Assign(String column, String op, Operand arg) {
        boolean increment() {
            return op.equals("+");
        }
    }

    /** A table of the suite: what an ORM maps an entity from; references: column → the
     * referenced table's column (its one-column primary key). */
    record Table(String name, List<String> columns, List<String> types, List<String> key, Map<String, Col> references) {
        String typeOf(String column) {
            int i = columns.indexOf(column);
            return i < 0 ? null : types.get(i);
        }
    }

    /** The step message's shape, or null (absent, or null: no shape). */
    static Shape parse(JsonNode msg) throws WorkerError {
        JsonNode s = msg.get("shape");
        if (s == null || s.isNull())
            return null;
        if (!s.isObject())
            throw WorkerError.protocol("shape must be an object or null");
        String kind = Fields.text(s, "kind", null), table = Fields.text(s, "table", null);
        if (kind == null || table == null || !List.of(SELECT, INSERT, UPDATE, DELETE).contains(kind))
            throw WorkerError.protocol("a shape needs a kind (select, insert, update, delete) and a table");
        List<String> tableColumns = names(s, "table_columns", true);
        List<String> tableTypes = names(s, "table_types", true);
        if (tableColumns != null && (tableTypes == null || tableTypes.size() != tableColumns.size()))
            throw WorkerError.protocol("a shape's table_types must give one type per table column");
        List<String> features = names(s, "features", true);
        List<Item> items = new ArrayList<>();
        for (JsonNode x : list(s, "items")) {
            String fn = x.hasNonNull("fn") ? x.get("fn").asText() : null;
            Col c = x.hasNonNull("column") ? col(x) : null;
            if (fn == null && c == null)
                throw WorkerError.protocol("shape.items: a column or an aggregate");
            items.add(new Item(fn, c, x.hasNonNull("as") ? x.get("as").asText() : null));
        }
        List<Join> joins = new ArrayList<>();
        for (JsonNode x : list(s, "joins")) {
            JsonNode on = x.get("on");
            if (on == null || !on.isArray() || on.size() != 2)
                throw WorkerError.protocol("shape.joins: on is [a, b]");
            joins.add(new Join(Fields.text(x, "type", "inner"), Fields.text(x, "table", null), col(on.get(0)),
                    col(on.get(1))));
        }
        List<Col> group = new ArrayList<>();
        for (JsonNode x : list(s, "group"))
            group.add(col(x));
        List<Order> order = new ArrayList<>();
        for (JsonNode x : list(s, "order"))
            order.add(new Order(col(x), Fields.truthy(x.get("desc"))));
        List<Assign> set = new ArrayList<>();
        for (JsonNode x : list(s, "set"))
            set.add(new Assign(Fields.text(x, "column", null), Fields.text(x, "op", "="), operand(x.get("arg"))));
        Map<String, Table> tables = new LinkedHashMap<>();
        JsonNode ts = s.get("tables");
        if (ts != null && ts.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = ts.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                tables.put(e.getKey(), table(e.getKey(), e.getValue()));
            }
        }
        List<String> key = names(s, "key", true);
        if (tableColumns != null && key != null && !tables.containsKey(table)) // a runner without tables
            tables.put(table, new Table(table, tableColumns, tableTypes, key, Map.of()));
        return new Shape(kind, table, names(s, "columns", false), names(s, "where", true), tableColumns, tableTypes,
                key, features == null ? List.of() : features, cond(s.get("filter")), List.copyOf(items),
                Fields.truthy(s.get("star")), List.copyOf(joins), List.copyOf(group), List.copyOf(order),
                operand(s.get("limit")), operand(s.get("offset")), List.copyOf(set), Collections.unmodifiableMap(tables));
    }

    /** A table's entity description (shape.tables' values, a load level's table). */
    static Table table(String name, JsonNode t) throws WorkerError {
        List<String> columns = names(t, "columns", false), types = names(t, "types", false);
        if (columns.size() != types.size())
            throw WorkerError.protocol("shape.tables." + name + ": one type per column");
        Map<String, Col> refs = new LinkedHashMap<>();
        JsonNode r = t.get("references");
        if (r != null && r.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = r.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                refs.put(e.getKey(), col(e.getValue()));
            }
        }
        List<String> key = names(t, "key", true);
        return new Table(name, columns, types, key == null ? List.of() : key, Collections.unmodifiableMap(refs));
    }

    private static List<JsonNode> list(JsonNode s, String field) throws WorkerError {
        JsonNode v = s.get(field);
        if (v == null || v.isNull())
            return List.of();
        if (!v.isArray())
            throw WorkerError.protocol("shape." + field + " must be a list");
        List<JsonNode> out = new ArrayList<>(v.size());
        v.forEach(out::add);
        return out;
    }

    private static Col col(JsonNode x) throws WorkerError {
        if (x == null || !x.isObject() || !x.path("column").isTextual())
            throw WorkerError.protocol("a shape's column is {\"table\", \"column\"}");
        return new Col(x.path("table").asText(null), x.get("column").textValue());
    }

    private static Operand operand(JsonNode x) throws WorkerError {
        if (x == null || x.isNull())
            return null;
        if (x.has("param"))
            return new Operand((int) Fields.integer(x, "param", -1), null);
        JsonNode v = x.get("value");
        if (v == null)
            throw WorkerError.protocol("an operand is {\"param\": i} or {\"value\": v}");
        Object value = v.isNull() ? null : v.isIntegralNumber() ? (Object) v.longValue()
                : v.isNumber() ? (Object) v.doubleValue() : v.isBoolean() ? (Object) v.booleanValue() : v.asText();
        return new Operand(-1, value);
    }

    private static Cond cond(JsonNode x) throws WorkerError {
        if (x == null || x.isNull())
            return null;
        for (String op : new String[] {"and", "or"}) {
            if (x.has(op)) {
                List<Cond> terms = new ArrayList<>();
                for (JsonNode t : list(x, op))
                    terms.add(cond(t));
                return new Cond(op, List.copyOf(terms), null, List.of());
            }
        }
        List<Operand> args = new ArrayList<>();
        for (JsonNode a : list(x, "args"))
            args.add(operand(a));
        return new Cond(Fields.text(x, "op", "="), List.of(), col(x.get("column")), List.copyOf(args));
    }

    private static List<String> names(JsonNode s, String field, boolean optional) throws WorkerError {
        JsonNode v = s.get(field);
        if (v == null || v.isNull()) {
            if (optional)
                return null;
            return List.of();
        }
        if (!v.isArray())
            throw WorkerError.protocol("shape." + field + " must be a list of names");
        List<String> out = new ArrayList<>(v.size());
        for (JsonNode x : v) {
            if (!x.isTextual())
                throw WorkerError.protocol("shape." + field + " must be a list of names");
            out.add(x.textValue());
        }
        return List.copyOf(out);
    }

    /** the table is one of the suite's: its columns, types and key are known */
    boolean mapped() {
        return tableColumns != null && tableTypes != null && key != null;
    }

    /** the plain form: the condition is ANDed `column = ?` terms (where), nothing richer */
    boolean plain() {
        return where != null;
    }

    /** the where clause compares exactly the primary key (in any order): a get-by-key */
    boolean byKey() {
        return mapped() && plain() && !key.isEmpty() && where.size() == key.size() && where.containsAll(key);
    }

    boolean uses(String feature) {
        return features.contains(feature);
    }

    /** the SQL type of a column of the table, as the suite declares it */
    String typeOf(String column) {
        int i = tableColumns.indexOf(column);
        return i < 0 ? null : tableTypes.get(i);
    }

    /** the SQL type of a column of any table the shape names (null: not known) */
    String typeOf(Col c) {
        Table t = tables.get(c.table() == null ? table : c.table());
        return t == null ? null : t.typeOf(c.column());
    }
}
