package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** What a layer method's step statement does (PROTOCOL.md, the step's "shape"), worked out by
 * the runner (suite/shape.py): no worker parses SQL. A select, insert, update or delete of one
 * table; columns read (select), written (insert) or set (update), and the columns compared with
 * a marker (where), both in the order of the markers, i.e. of the step's parameters. For a table
 * of the suite also every column (tableColumns), its SQL type as the suite declares it
 * (tableTypes) and the primary key: what an ORM maps an entity from; null when the table is not
 * one of the suite's. A statement of no plain shape has no Shape (the step's shape is null). */
record Shape(String kind, String table, List<String> columns, List<String> where, List<String> tableColumns,
        List<String> tableTypes, List<String> key) {

    static final String SELECT = "select", INSERT = "insert", UPDATE = "update", DELETE = "delete";

    /** The step message's shape, or null (absent, or null: no plain shape). */
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
        return new Shape(kind, table, names(s, "columns", false), names(s, "where", false), tableColumns,
                tableTypes, names(s, "key", true));
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

    /** the where clause compares exactly the primary key (in any order): a get-by-key */
    boolean byKey() {
        return mapped() && !key.isEmpty() && where.size() == key.size() && where.containsAll(key);
    }

    /** the SQL type of a column of the table, as the suite declares it */
    String typeOf(String column) {
        int i = tableColumns.indexOf(column);
        return i < 0 ? null : tableTypes.get(i);
    }
}
