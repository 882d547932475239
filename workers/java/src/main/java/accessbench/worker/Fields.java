package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;

/** A message's fields by type: absent (or null) gives the default, present but of another type
 * is a protocol error. */
final class Fields {
    private Fields() {
    }

    /** Integer field; a protocol error when present but not an integer. */
    static long integer(JsonNode msg, String key, long dflt) throws WorkerError {
        JsonNode v = msg.get(key);
        if (v == null || v.isNull())
            return dflt;
        if (v.isIntegralNumber() && v.canConvertToLong())
            return v.longValue();
        if (v.isNumber() && v.doubleValue() == Math.rint(v.doubleValue()))
            return (long) v.doubleValue();
        if (v.isTextual()) {
            try {
                return Long.parseLong(v.textValue().strip());
            } catch (NumberFormatException e) {
                // fall through
            }
        }
        throw WorkerError.protocol("field '" + key + "' must be an integer");
    }

    /** Number field (0 when absent); a protocol error when present but not a number. */
    static double number(JsonNode msg, String key) throws WorkerError {
        JsonNode v = msg.get(key);
        if (v == null || v.isNull())
            return 0;
        if (!v.isNumber())
            throw WorkerError.protocol("field '" + key + "' must be a number");
        return v.doubleValue();
    }

    /** String field; a protocol error when present but not a string. */
    static String text(JsonNode msg, String key, String dflt) throws WorkerError {
        JsonNode v = msg.get(key);
        if (v == null || v.isNull())
            return dflt;
        if (!v.isTextual())
            throw WorkerError.protocol("field '" + key + "' must be a string");
        return v.textValue();
    }

    /** Python's truth of a JSON value: absent, null, false, 0, "" and empty containers are false. */
    static boolean truthy(JsonNode v) {
        if (v == null || v.isNull() || v.isMissingNode())
            return false;
        if (v.isBoolean())
            return v.booleanValue();
        if (v.isNumber())
            return v.doubleValue() != 0;
        if (v.isTextual())
            return !v.textValue().isEmpty();
        return v.size() != 0;
    }
}
