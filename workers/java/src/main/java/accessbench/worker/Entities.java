package accessbench.worker;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.FetchType;
import jakarta.persistence.Id;
import jakarta.persistence.IdClass;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.OneToMany;
import jakarta.persistence.Table;
import java.io.Serializable;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.annotation.AnnotationDescription;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import net.bytebuddy.implementation.EqualsMethod;
import net.bytebuddy.implementation.HashCodeMethod;
import net.bytebuddy.matcher.ElementMatchers;

/** JPA entity classes for the suite's tables, made at run time with ByteBuddy from each table's
 * columns, their SQL types as the suite declares them, its primary key and its references — real
 * annotated classes, as an application declares them: @Entity, @Table, a public field per column
 * with @Column (field access, from @Id on fields), @Id on the key's fields, and for a composite key
 * an @IdClass (a Serializable class of the key's fields with equals and hashCode).
 *
 * A column that references another mapped table's key (Shape.Table.references: the suite's
 * declared foreign keys) also gives the two entities their association, as a JPA application maps
 * a foreign key: on the referencing side a @ManyToOne(fetch = LAZY) @JoinColumn(name = column,
 * insertable = false, updatable = false) field of the referenced entity's type (the column itself
 * stays a basic field, which is what inserts and updates write), and on the referenced side the
 * inverse @OneToMany(mappedBy = …) Set of the referencing entities (a Set, not a List: Hibernate
 * cannot join-fetch two nested bags). The entities of every table are made together, each class
 * naming the others by name (ByteBuddy latent types) before any is loaded, and defined in this
 * package's class loader, so Hibernate finds them by name. */
final class Entities {
    private Entities() {
    }

    private static final AtomicInteger MADE = new AtomicInteger();

    /** One table's entity: its class, id class (composite keys), each column's field and its
     * associations' attributes. */
    static final class Entity_ {
        final String table, name;  // name: the entity name
        final Class<?> type, idClass;
        final List<String> key, columns;
        final Map<String, Field> fields = new HashMap<>();   // column → the entity's field
        final Map<String, String> attributes = new HashMap<>(); // column → attribute name
        final Map<String, Field> idFields = new HashMap<>(); // key column → the id class's field
        final Map<String, String> toOne = new HashMap<>();   // referencing column → its @ManyToOne attribute
        final Map<String, String> toMany = new HashMap<>();  // "table.column" referencing this → its @OneToMany Set
        final Map<String, Field> sets = new HashMap<>();     // @OneToMany attribute → its field
        Field[] columnFields;                                 // every column's field, in table order

        Entity_(String table, String name, Class<?> type, Class<?> idClass, List<String> key, List<String> columns) {
            this.table = table;
            this.name = name;
            this.type = type;
            this.idClass = idClass;
            this.key = key;
            this.columns = columns;
        }

        /** the field of a column */
        Field field(String column) {
            return fields.get(column);
        }

        /** the Java type of a column's field (null: not a column of this entity) */
        Class<?> typeOf(String column) {
            Field f = fields.get(column);
            return f == null ? null : f.getType();
        }

        /** the @OneToMany Set of the entities of table whose column references this one */
        String toMany(String table, String column) {
            return toMany.get(table + "." + column);
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

    /** An entity class by its name before it is made (a latent type): a public top-level class
     * of this package, so that the entities made together can name one another. */
    private static final class Named extends TypeDescription.Latent {
        Named(String name) {
            super(name, Modifier.PUBLIC, TypeDescription.Generic.OBJECT);
        }

        @Override
        public TypeDescription getDeclaringType() {
            return null; // top level
        }

        @Override
        public TypeDescription getEnclosingType() {
            return null;
        }

        @Override
        public net.bytebuddy.description.method.MethodDescription.InDefinedShape getEnclosingMethod() {
            return null;
        }

        @Override
        public boolean isAnonymousType() {
            return false;
        }

        @Override
        public boolean isLocalType() {
            return false;
        }
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

    /** A name not yet taken among an entity's attributes. */
    private static String fresh(String name, Collection<String> taken) {
        while (taken.contains(name))
            name = name + "_";
        return name;
    }

    /** Why a table has no entity here (no primary key, a column of a type with no field type),
     * or null. */
    static String refusal(Shape.Table t, boolean booleanIsInteger) {
        if (t.key().isEmpty())
            return "table " + t.name() + " has no primary key, and a JPA entity needs one";
        for (int k = 0; k < t.columns().size(); k++)
            if (javaType(t.types().get(k), booleanIsInteger) == null)
                return "column " + t.name() + "." + t.columns().get(k) + " is of type " + t.types().get(k)
                        + ", which has no entity field type here";
        return null;
    }

    /** The entities of the tables (each of which refusal accepts), made together: every
     * reference from one of them to another's one-column key an association both ways. */
    static Map<String, Entity_> make(Collection<Shape.Table> tables, boolean booleanIsInteger) {
        int n = MADE.incrementAndGet();
        String pkg = Entities.class.getPackageName();
        Map<String, Shape.Table> byName = new LinkedHashMap<>();
        Map<String, String> simple = new HashMap<>();
        Map<String, TypeDescription> latent = new HashMap<>();
        Map<String, List<String>> attrs = new HashMap<>();
        for (Shape.Table t : tables) {
            byName.put(t.name(), t);
            String name = "Entity" + n + "_" + identifier(t.name());
            while (simple.containsValue(name))
                name = name + "_";
            simple.put(t.name(), name);
            latent.put(t.name(), new Named(pkg + "." + name));
            List<String> a = new ArrayList<>();
            for (String c : t.columns())
                a.add(fresh(identifier(c), a));
            attrs.put(t.name(), a);
        }
        // the associations: referencing table → (column → its @ManyToOne attribute); referenced
        // table → ("table.column" → its @OneToMany attribute)
        record Assoc(String from, String column, String to, String referenced, String one, String many) {
        }
        List<Assoc> assocs = new ArrayList<>();
        Map<String, List<String>> taken = new HashMap<>();
        attrs.forEach((t, a) -> taken.put(t, new ArrayList<>(a)));
        for (Shape.Table t : byName.values()) {
            for (Map.Entry<String, Shape.Col> r : t.references().entrySet()) {
                Shape.Table to = byName.get(r.getValue().table());
                if (to == null || !to.key().equals(List.of(r.getValue().column())) || !t.columns().contains(r.getKey()))
                    continue;
                String one = fresh(identifier(r.getKey()) + "_ref", taken.get(t.name()));
                taken.get(t.name()).add(one);
                String many = fresh(identifier(t.name()) + "_by_" + identifier(r.getKey()), taken.get(to.name()));
                taken.get(to.name()).add(many);
                assocs.add(new Assoc(t.name(), r.getKey(), to.name(), r.getValue().column(), one, many));
            }
        }
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        Map<String, DynamicType.Unloaded<Object>> unloaded = new LinkedHashMap<>();
        Map<String, Class<?>> idClasses = new HashMap<>();
        for (Shape.Table t : byName.values()) {
            List<String> columns = t.columns(), a = attrs.get(t.name());
            List<Class<?>> types = new ArrayList<>();
            for (String type : t.types())
                types.add(javaType(type, booleanIsInteger));
            Class<?> idClass = null;
            if (t.key().size() > 1) {
                DynamicType.Builder<Object> id = new ByteBuddy().subclass(Object.class)
                        .name(pkg + "." + simple.get(t.name()) + "_Id").implement(Serializable.class);
                for (String k : t.key())
                    id = id.defineField(a.get(columns.indexOf(k)), types.get(columns.indexOf(k)), Visibility.PUBLIC);
                idClass = id.method(ElementMatchers.isEquals()).intercept(EqualsMethod.isolated())
                        .method(ElementMatchers.isHashCode()).intercept(HashCodeMethod.usingDefaultOffset())
                        .make().load(Entities.class.getClassLoader(), ClassLoadingStrategy.UsingLookup.of(lookup))
                        .getLoaded();
                idClasses.put(t.name(), idClass);
            }
            DynamicType.Builder<Object> b = new ByteBuddy().subclass(Object.class).name(latent.get(t.name()).getName())
                    .annotateType(AnnotationDescription.Builder.ofType(Entity.class).define("name", simple.get(t.name())).build(),
                            AnnotationDescription.Builder.ofType(Table.class).define("name", t.name()).build());
            if (idClass != null)
                b = b.annotateType(AnnotationDescription.Builder.ofType(IdClass.class).define("value", idClass).build());
            for (int k = 0; k < columns.size(); k++) {
                List<AnnotationDescription> annotations = new ArrayList<>();
                annotations.add(AnnotationDescription.Builder.ofType(Column.class).define("name", columns.get(k)).build());
                if (t.key().contains(columns.get(k)))
                    annotations.add(AnnotationDescription.Builder.ofType(Id.class).build());
                b = b.defineField(a.get(k), types.get(k), Visibility.PUBLIC).annotateField(annotations);
            }
            for (Assoc x : assocs) {
                if (x.from().equals(t.name())) // the referencing side: the referenced entity, lazily
                    b = b.defineField(x.one(), latent.get(x.to()), Visibility.PUBLIC).annotateField(
                            AnnotationDescription.Builder.ofType(ManyToOne.class).define("fetch", FetchType.LAZY).build(),
                            AnnotationDescription.Builder.ofType(JoinColumn.class).define("name", x.column())
                                    .define("referencedColumnName", x.referenced()).define("insertable", false)
                                    .define("updatable", false).build());
                if (x.to().equals(t.name())) // the referenced side: the Set of the entities referencing it
                    b = b.defineField(x.many(), TypeDescription.Generic.Builder.parameterizedType(
                            TypeDescription.ForLoadedType.of(Set.class), latent.get(x.from())).build(), Visibility.PUBLIC)
                            .annotateField(AnnotationDescription.Builder.ofType(OneToMany.class).define("mappedBy", x.one())
                                    .build());
            }
            unloaded.put(t.name(), b.make());
        }
        Map<String, Class<?>> loaded = new HashMap<>();
        for (Map.Entry<String, DynamicType.Unloaded<Object>> u : unloaded.entrySet())
            loaded.put(u.getKey(), u.getValue().load(Entities.class.getClassLoader(),
                    ClassLoadingStrategy.UsingLookup.of(lookup)).getLoaded());
        Map<String, Entity_> out = new LinkedHashMap<>();
        try {
            for (Shape.Table t : byName.values()) {
                Class<?> type = loaded.get(t.name()), idClass = idClasses.get(t.name());
                Entity_ e = new Entity_(t.name(), simple.get(t.name()), type, idClass, t.key(), t.columns());
                List<String> a = attrs.get(t.name());
                e.columnFields = new Field[t.columns().size()];
                for (int k = 0; k < t.columns().size(); k++) {
                    String c = t.columns().get(k);
                    e.fields.put(c, type.getField(a.get(k)));
                    e.columnFields[k] = e.fields.get(c);
                    e.attributes.put(c, a.get(k));
                    if (idClass != null && t.key().contains(c))
                        e.idFields.put(c, idClass.getField(a.get(k)));
                }
                out.put(t.name(), e);
            }
            for (Assoc x : assocs) {
                out.get(x.from()).toOne.put(x.column(), x.one());
                Entity_ to = out.get(x.to());
                to.toMany.put(x.from() + "." + x.column(), x.many());
                to.sets.put(x.many(), to.type.getField(x.many()));
            }
        } catch (NoSuchFieldException x) {
            throw new IllegalStateException(x);
        }
        return out;
    }
}
