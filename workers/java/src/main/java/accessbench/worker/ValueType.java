package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.util.HexFormat;

/** The type of a generated value (PROTOCOL.md "Generators", Types): every spec names one, and
 * each type has one Java class that carries its values from the generator to the binding —
 * the class is the tag, so a value is never typed by guessing from its JSON:
 *
 * <pre>
 * int        Long (BigInteger beyond 2^63 - 1: a choice or const of a uint64)
 * bool       Boolean
 * float      Double
 * decimal    BigDecimal (the scale it was made with)
 * text       String
 * date       LocalDate
 * timestamp  GenTimestamp
 * bytes      byte[]
 * </pre>
 *
 * Drivers adapt these classes to what they bind (Driver.adapt) and bind NULLs by the type
 * (JdbcDriver.sqlType); SqlText renders them as literals. */
enum ValueType {
    INT("int"), BOOL("bool"), FLOAT("float"), DECIMAL("decimal"), TEXT("text"), DATE("date"),
    TIMESTAMP("timestamp"), BYTES("bytes");

    /** the name in a spec's "type" */
    final String wire;

    ValueType(String wire) {
        this.wire = wire;
    }

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    static ValueType named(String name) throws WorkerError {
        for (ValueType t : values())
            if (t.wire.equals(name))
                return t;
        throw WorkerError.protocol("unknown value type '" + name + "'");
    }

    /** The type of a spec's values: its "type" (the runner always sends one; a kind with a
     * type of its own must not declare another); without it the kind's own type, or a choice's
     * or const's first value's, as generators.py value_type. */
    static ValueType of(JsonNode spec, String kind) throws WorkerError {
        JsonNode d = spec.get("type");
        ValueType declared = d != null && d.isTextual() && !d.textValue().isEmpty() ? named(d.textValue()) : null;
        if (kind.equals("choice") || kind.equals("const")) {
            if (declared != null)
                return declared;
            JsonNode first = kind.equals("const") ? spec.path("value") : spec.path("values").path(0);
            return first.isBoolean() ? BOOL : first.isIntegralNumber() ? INT : first.isNumber() ? FLOAT : TEXT;
        }
        ValueType own = kind.equals("seq") || kind.equals("uniform") ? INT : named(kind);
        if (declared != null && declared != own)
            throw WorkerError.protocol("a " + kind + " generator makes " + own.wire + " values, not " + declared.wire);
        return own;
    }

    /** A choice's or const's JSON value as this type's value: bools as JSON booleans, ints as
     * integers, floats as numbers (an integer is the same float), text as strings, and decimal,
     * date, timestamp and bytes as strings in their text form (plain digits, YYYY-MM-DD, ISO
     * 8601 without zone, hex). */
    Object fromJson(JsonNode n) throws WorkerError {
        if (n == null || n.isNull())
            return null;
        boolean fits = switch (this) {
            case BOOL -> n.isBoolean();
            case INT -> n.isIntegralNumber();
            case FLOAT -> n.isNumber();
            default -> n.isTextual(); // text, and the text forms of decimal, date, timestamp, bytes
        };
        if (!fits)
            throw WorkerError.protocol("not a " + wire + " value: " + n);
        try {
            return switch (this) {
                case BOOL -> n.booleanValue();
                case INT -> n.canConvertToLong() ? (Object) n.longValue() : n.bigIntegerValue();
                case FLOAT -> n.doubleValue();
                case TEXT -> n.textValue();
                case DECIMAL -> new BigDecimal(n.textValue());
                case DATE -> LocalDate.parse(n.textValue());
                case TIMESTAMP -> new GenTimestamp(Times.parseIso(n.textValue()));
                case BYTES -> HexFormat.of().parseHex(n.textValue());
            };
        } catch (IllegalArgumentException | DateTimeException e) { // NumberFormatException, bad hex
            throw WorkerError.protocol("not a " + wire + " value: " + n + " (" + e.getMessage() + ")");
        }
    }

    /** A value of this type as the generate op answers it: int as a number, bool as true/false,
     * text as a string, float as its IEEE-754 bits in 16 hex digits, decimal as plain text,
     * date YYYY-MM-DD, timestamp YYYY-MM-DDTHH:MM:SS.ffffff, bytes as lower-case hex. */
    JsonNode toJson(Object v) {
        if (v == null)
            return F.nullNode();
        return switch (this) {
            case INT -> v instanceof BigInteger x ? F.numberNode(x) : F.numberNode((Long) v);
            case BOOL -> F.booleanNode((Boolean) v);
            case FLOAT -> F.textNode(String.format("%016x", Double.doubleToRawLongBits((Double) v)));
            case DECIMAL -> F.textNode(((BigDecimal) v).toPlainString());
            case TEXT -> F.textNode((String) v);
            case DATE -> F.textNode(Times.formatDate((LocalDate) v));
            case TIMESTAMP -> F.textNode(Times.format(((GenTimestamp) v).micros(), true));
            case BYTES -> F.textNode(HexFormat.of().formatHex((byte[]) v));
        };
    }
}
