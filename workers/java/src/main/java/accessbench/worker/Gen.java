package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.math.BigInteger;

/** One generator spec and its splitmix64 stream (PROTOCOL.md "Generators",
 * src/accessbench/protocol/generators.py). Values are made in order i = 0, 1, 2, …:
 * Long, String, GenTimestamp, null, or for choice/const whatever JSON value was given
 * (Long, BigInteger, Double, String, Boolean, null). */
final class Gen {
    private enum Kind { SEQ, UNIFORM, CHOICE, TEXT, TIMESTAMP, CONST }

    private final Kind kind;
    private final SplitMix64 rng;
    private final double nullP;
    // seq
    private long start = 1, step = 1, div = 1, mod = 0;
    // uniform
    private long lo, span; // span as unsigned; 0 = all 2^64 values
    // choice / const
    private Object[] choices;
    private JsonNode[] choiceNodes;
    // text
    private int[] pattern;
    // timestamp
    private long tsStart, stepUs = 1_000_000, jitterUs;

    /** The JSON value given for the last choice/const value (the generate op echoes it). */
    JsonNode lastNode;

    static long u64(JsonNode n, String what) throws WorkerError {
        if (n == null || n.isNull())
            return 0;
        if (!n.isIntegralNumber())
            throw WorkerError.protocol(what + " must be an integer");
        // Above 2^63 - 1 Jackson gives a BigInteger: its low 64 bits are the same u64.
        return n.bigIntegerValue().longValue();
    }

    private static long integer(JsonNode spec, String key, long dflt, boolean required) throws WorkerError {
        JsonNode n = spec.get(key);
        if (n == null || n.isNull()) {
            if (required)
                throw WorkerError.protocol("generator " + spec.path("kind").asText() + " needs '" + key + "'");
            return dflt;
        }
        if (n.isIntegralNumber() && n.canConvertToLong())
            return n.longValue();
        if (n.isNumber() && n.doubleValue() == Math.rint(n.doubleValue()))
            return (long) n.doubleValue();
        throw WorkerError.protocol("generator field '" + key + "' must be an integer, not " + n);
    }

    static Object jsonValue(JsonNode n) throws WorkerError {
        if (n == null || n.isNull())
            return null;
        if (n.isIntegralNumber())
            return n.canConvertToLong() ? (Object) n.longValue() : n.bigIntegerValue();
        if (n.isNumber())
            return n.doubleValue();
        if (n.isTextual())
            return n.textValue();
        if (n.isBoolean())
            return n.booleanValue();
        throw WorkerError.protocol("a generated value must be a number, string, boolean or null, not " + n);
    }

    Gen(JsonNode spec) throws WorkerError {
        if (spec == null || !spec.isObject())
            throw WorkerError.protocol("a generator spec is an object");
        String k = spec.path("kind").asText("");
        rng = new SplitMix64(u64(spec.get("seed"), "seed"));
        JsonNode np = spec.get("null");
        nullP = np == null || np.isNull() ? 0.0 : np.asDouble();
        switch (k) {
            case "seq" -> {
                kind = Kind.SEQ;
                start = integer(spec, "start", 1, false);
                step = integer(spec, "step", 1, false);
                div = integer(spec, "div", 1, false);
                mod = integer(spec, "mod", 0, false);
                if (div == 0)
                    throw WorkerError.protocol("seq: div must not be 0");
            }
            case "uniform" -> {
                kind = Kind.UNIFORM;
                lo = integer(spec, "lo", 0, true);
                long hi = integer(spec, "hi", 0, true);
                BigInteger s = BigInteger.valueOf(hi).subtract(BigInteger.valueOf(lo)).add(BigInteger.ONE);
                if (s.signum() <= 0)
                    throw WorkerError.protocol("uniform: hi must be >= lo");
                span = s.longValue(); // 2^64 → 0
            }
            case "choice" -> {
                kind = Kind.CHOICE;
                JsonNode vs = spec.get("values");
                if (vs == null || !vs.isArray() || vs.size() == 0)
                    throw WorkerError.protocol("choice needs a non-empty list of values");
                choices = new Object[vs.size()];
                choiceNodes = new JsonNode[vs.size()];
                for (int j = 0; j < vs.size(); j++) {
                    choiceNodes[j] = vs.get(j);
                    choices[j] = jsonValue(vs.get(j));
                }
            }
            case "text" -> {
                kind = Kind.TEXT;
                JsonNode p = spec.get("pattern");
                if (p == null || !p.isTextual())
                    throw WorkerError.protocol("text needs a pattern");
                pattern = p.textValue().codePoints().toArray();
            }
            case "timestamp" -> {
                kind = Kind.TIMESTAMP;
                JsonNode s = spec.get("start");
                if (s == null || !s.isTextual())
                    throw WorkerError.protocol("timestamp needs a start (ISO 8601 text)");
                tsStart = Times.parseIso(s.textValue());
                stepUs = integer(spec, "step_us", 1_000_000, false);
                jitterUs = integer(spec, "jitter_us", 0, false);
            }
            case "const" -> {
                kind = Kind.CONST;
                JsonNode v = spec.has("value") ? spec.get("value") : JsonNodeFactory.instance.nullNode();
                choiceNodes = new JsonNode[] {v};
                choices = new Object[] {jsonValue(v)};
            }
            default -> throw WorkerError.protocol("unknown generator kind '" + k + "'");
        }
    }

    /** Value i; called with i = 0, 1, 2, … in order (draws are consumed as they are made). */
    Object next(long i) {
        lastNode = null;
        // The null draw comes first; a NULL value makes no value draws.
        if (nullP != 0.0 && rng.unit() < nullP) {
            lastNode = JsonNodeFactory.instance.nullNode();
            return null;
        }
        switch (kind) {
            case SEQ: {
                long v = Math.floorDiv(start + i * step, div);
                return mod != 0 ? Math.floorMod(v, mod) : v;
            }
            case UNIFORM: {
                long r = rng.next();
                return span == 0 ? lo + r : lo + Long.remainderUnsigned(r, span);
            }
            case CHOICE: {
                int j = (int) Long.remainderUnsigned(rng.next(), choices.length);
                lastNode = choiceNodes[j];
                return choices[j];
            }
            case TEXT: {
                StringBuilder sb = new StringBuilder(pattern.length);
                for (int cp : pattern) {
                    if (cp == '#')
                        sb.append((char) ('0' + Long.remainderUnsigned(rng.next(), 10)));
                    else if (cp == '?')
                        sb.append((char) ('a' + Long.remainderUnsigned(rng.next(), 26)));
                    else
                        sb.appendCodePoint(cp);
                }
                return sb.toString();
            }
            case TIMESTAMP: {
                long offset = i * stepUs + (jitterUs != 0 ? Long.remainderUnsigned(rng.next(), jitterUs + 1) : 0);
                return new GenTimestamp(tsStart + offset);
            }
            case CONST:
            default:
                lastNode = choiceNodes[0];
                return choices[0];
        }
    }
}
