package accessbench.worker;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.annotation.AnnotationDescription;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import net.bytebuddy.implementation.EqualsMethod;
import net.bytebuddy.implementation.HashCodeMethod;
import net.bytebuddy.matcher.ElementMatchers;

/** JPA entity classes for the suite's tables, made at run time from a step's shape (its table's
 * columns, their SQL types as the suite declares them, and the primary key) with ByteBuddy —
 * real annotated classes, as an application declares them: @Entity, @Table, a public field per
 * column with @Column (field access, from @Id on fields), @Id on the key's fields, and for a
 * composite key an @IdClass (a Serializable class of the key's fields with equals and
 * hashCode). Defined in this package's class loader, so Hibernate finds them by name. */
final class Entities {
    private Entities() {
    }

    private static final AtomicInteger MADE = new AtomicInteger();

    /** One table's entity: its class, id class (composite keys) and each column's field. */
    static final class Entity_ {
        final String table, name;  // name: the entity name (HQL)
        final Class<?> type, idClass;
        final List<String> key;
        final Map<String, Field> fields = new HashMap<>();   // column → the entity's field
        final Map<String, String> attributes = new HashMap<>(); // column → attribute name (HQL)
        final Map<String, Field> idFields = new HashMap<>(); // key column → the id class's field

        Entity_(String table, String name, Class<?> type, Class<?> idClass, List<String> key) {
            this.table = table;
            this.name = name;
            this.type = type;
            this.idClass = idClass;
            this.key = key;
        }

        /** the field of a column */
        Field field(String column) {
            return fields.get(column);
        }

        /** A new instance with columns set from values (each converted to its field's type). */
        Object instance(List<String> columns, Object[] values, int from) throws ReflectiveOperationException {
            Object e = type.getDeclaredConstructor().newInstance();
            for (int k = 0; k < columns.size(); k++) {
                Field f = fields.get(columns.get(k));
                f.set(e, as(f.getType(), values[from + k]));
            }
            return e;
        }

        /** The identifier of the row whose key columns (where, in marker order) have the values
         * from values[from…]: the key's value, or an instance of the id class. */
        Object id(List<String> where, Object[] values, int from) throws ReflectiveOperationException {
            if (idClass == null) {
                Field f = fields.get(key.get(0));
                return as(f.getType(), values[from + where.indexOf(key.get(0))]);
            }
            Object id = idClass.getDeclaredConstructor().newInstance();
            for (int k = 0; k < where.size(); k++) {
                Field f = idFields.get(where.get(k));
                f.set(id, as(f.getType(), values[from + k]));
            }
            return id;
        }
    }

    /** The Java type of a column of a SQL type as the suite declares it (integer, char(10),
     * numeric(12,2), timestamp …): the type the bare driver reads it as. booleanIsInteger: the
     * driver reads BOOLEAN as an integer 0/1 (MariaDB's TINYINT(1)). Null: no mapping here. */
    static Class<?> javaType(String sqlType, boolean booleanIsInteger) {
        String t = sqlType.toLowerCase(Locale.ROOT).strip();
        int paren = t.indexOf('(');
        if (paren >= 0)
            t = t.substring(0, paren).strip();
        return switch (t) {
            case "integer", "int", "int2", "int4", "int8", "smallint", "bigint", "tinyint", "mediumint", "serial",
                    "bigserial" -> Long.class;
            case "boolean", "bool" -> booleanIsInteger ? Long.class : Boolean.class;
            case "double", "double precision", "float8", "float" -> Double.class;
            case "real", "float4" -> Float.class;
            case "numeric", "decimal" -> BigDecimal.class;
            case "char", "character", "varchar", "character varying", "text", "string", "nchar", "nvarchar" ->
                    String.class;
            case "timestamp", "datetime" -> LocalDateTime.class;
            case "date" -> LocalDate.class;
            case "time" -> LocalTime.class;
            case "bytes", "bytea", "blob", "longblob", "binary", "varbinary" -> byte[].class;
            default -> null;
        };
    }

    /** A parameter value as a field's type (the worker's value types to the entity's): a
     * boolean as 1/0 for an integer field, a double for a real field; the rest as they are. */
    static Object as(Class<?> type, Object v) {
        if (v == null || type.isInstance(v))
            return v;
        if (type == Long.class) {
            if (v instanceof Boolean b)
                return b ? 1L : 0L;
            if (v instanceof Number n)
                return n.longValue();
        }
        if (type == Float.class && v instanceof Number n)
            return n.floatValue();
        if (type == Double.class && v instanceof Number n)
            return n.doubleValue();
        if (type == BigDecimal.class && v instanceof Long n)
            return BigDecimal.valueOf(n);
        if (type == String.class)
            return v.toString();
        return v;
    }

    /** A Java identifier for a column or table name. */
    private static String identifier(String name) {
        StringBuilder b = new StringBuilder();
        for (char ch : name.toCharArray())
            b.append(Character.isLetterOrDigit(ch) && ch < 128 ? ch : '_');
        if (b.length() == 0 || !Character.isLetter(b.charAt(0)))
            b.insert(0, 'c');
        return b.toString();
    }

    /** The entity of the shape's table, made now; unsupported when the table has no primary key
     * or a column of a type with no mapping here. */
    static Entity_ make(Shape shape, boolean booleanIsInteger) throws WorkerError {
        String table = shape.table();
        if (shape.key().isEmpty())
            throw WorkerError.unsupported("table " + table + " has no primary key, and a JPA entity needs one");
        List<String> columns = shape.tableColumns();
        List<Class<?>> types = new ArrayList<>();
        List<String> attrs = new ArrayList<>();
        for (int k = 0; k < columns.size(); k++) {
            Class<?> t = javaType(shape.tableTypes().get(k), booleanIsInteger);
            if (t == null)
                throw WorkerError.unsupported("column " + table + "." + columns.get(k) + " is of type "
                        + shape.tableTypes().get(k) + ", which has no entity field type here");
            types.add(t);
            String a = identifier(columns.get(k));
            while (attrs.contains(a))
                a = a + "_";
            attrs.add(a);
        }
        int n = MADE.incrementAndGet();
        String simple = "Entity" + n + "_" + identifier(table);
        String pkg = Entities.class.getPackageName();
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        Class<?> idClass = null;
        if (shape.key().size() > 1) {
            DynamicType.Builder<Object> id = new ByteBuddy().subclass(Object.class).name(pkg + "." + simple + "_Id")
                    .implement(Serializable.class);
            for (String k : shape.key())
                id = id.defineField(attrs.get(columns.indexOf(k)), types.get(columns.indexOf(k)), Visibility.PUBLIC);
            idClass = id.method(ElementMatchers.isEquals()).intercept(EqualsMethod.isolated())
                    .method(ElementMatchers.isHashCode()).intercept(HashCodeMethod.usingDefaultOffset())
                    .make().load(Entities.class.getClassLoader(), ClassLoadingStrategy.UsingLookup.of(lookup))
                    .getLoaded();
        }
        DynamicType.Builder<Object> b = new ByteBuddy().subclass(Object.class).name(pkg + "." + simple)
                .annotateType(AnnotationDescription.Builder.ofType(Entity.class).define("name", simple).build(),
                        AnnotationDescription.Builder.ofType(Table.class).define("name", table).build());
        if (idClass != null)
            b = b.annotateType(AnnotationDescription.Builder.ofType(IdClass.class).define("value", idClass).build());
        for (int k = 0; k < columns.size(); k++) {
            List<AnnotationDescription> annotations = new ArrayList<>();
            annotations.add(AnnotationDescription.Builder.ofType(Column.class).define("name", columns.get(k)).build());
            if (shape.key().contains(columns.get(k)))
                annotations.add(AnnotationDescription.Builder.ofType(Id.class).build());
            b = b.defineField(attrs.get(k), types.get(k), Visibility.PUBLIC).annotateField(annotations);
        }
        Class<?> type = b.make().load(Entities.class.getClassLoader(), ClassLoadingStrategy.UsingLookup.of(lookup))
                .getLoaded();
        Entity_ e = new Entity_(table, simple, type, idClass, shape.key());
        try {
            for (int k = 0; k < columns.size(); k++) {
                e.fields.put(columns.get(k), type.getField(attrs.get(k)));
                e.attributes.put(columns.get(k), attrs.get(k));
                if (idClass != null && shape.key().contains(columns.get(k)))
                    e.idFields.put(columns.get(k), idClass.getField(attrs.get(k)));
            }
        } catch (NoSuchFieldException x) {
            throw new IllegalStateException(x);
        }
        return e;
    }
}
