package accessbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.LocalDate;

/** One generator spec and its splitmix64 stream (PROTOCOL.md "Generators",
 * src/accessbench/protocol/generators.py). Values are made in order i = 0, 1, 2, …, each of the
 * spec's type (ValueType: its Java class) or null. */
final class Gen {
    private enum Kind { SEQ, UNIFORM, CHOICE, TEXT, TIMESTAMP, CONST, FLOAT, DECIMAL, DATE, BYTES }

    /** the type of every value this spec makes */
    final ValueType type;

    private final Kind kind;
    private final SplitMix64 rng;
    private final double nullP;
    // seq
    private long start = 1, step = 1, div = 1, mod = 0;
    // uniform
    private long lo, span; // span as unsigned; 0 = all 2^64 values
    // choice / const: the values, already of the type
    private Object[] choices;
    // text
    private int[] pattern;
    // timestamp
    private long tsStart, stepUs = 1_000_000, jitterUs;
    // float: lo + unit() · (hi − lo), rounded to digits places when scale (10^digits) is not NaN
    private double floatLo, floatHi, scale = Double.NaN;
    // decimal: decLo + next() mod decSpan units of 10^-decScale (BigInteger: hi − lo may pass 2^64)
    private BigInteger decLo, decSpan;
    private int decScale;
    // date: days since 1970
    private long dayStart, stepDays = 1, jitterDays;
    // bytes
    private int length;

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

    /** An integer field that may pass 64 bits (a decimal's lo and hi count units of 10^-scale). */
    private static BigInteger bigInteger(JsonNode spec, String key) throws WorkerError {
        JsonNode n = spec.get(key);
        if (n == null || !n.isIntegralNumber())
            throw WorkerError.protocol("generator " + spec.path("kind").asText() + " needs '" + key + "' as an integer");
        return n.bigIntegerValue();
    }

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    private static BigInteger unsigned(long x) {
        BigInteger b = BigInteger.valueOf(x);
        return x < 0 ? b.add(TWO_64) : b;
    }

    private static double number(JsonNode spec, String key) throws WorkerError {
        JsonNode n = spec.get(key);
        if (n == null || !n.isNumber())
            throw WorkerError.protocol("generator " + spec.path("kind").asText() + " needs '" + key + "' as a number");
        return n.doubleValue();
    }

    Gen(JsonNode spec) throws WorkerError {
        if (spec == null || !spec.isObject())
            throw WorkerError.protocol("a generator spec is an object");
        String k = spec.path("kind").asText("");
        rng = new SplitMix64(u64(spec.get("seed"), "seed"));
        JsonNode np = spec.get("null");
        nullP = np == null || np.isNull() ? 0.0 : np.asDouble();
        kind = switch (k) {
            case "seq" -> Kind.SEQ;
            case "uniform" -> Kind.UNIFORM;
            case "choice" -> Kind.CHOICE;
            case "text" -> Kind.TEXT;
            case "timestamp" -> Kind.TIMESTAMP;
            case "const" -> Kind.CONST;
            case "float" -> Kind.FLOAT;
            case "decimal" -> Kind.DECIMAL;
            case "date" -> Kind.DATE;
            case "bytes" -> Kind.BYTES;
            default -> throw WorkerError.protocol("unknown generator kind '" + k + "'");
        };
        type = ValueType.of(spec, k);
        switch (kind) {
            case SEQ -> {
                start = integer(spec, "start", 1, false);
                step = integer(spec, "step", 1, false);
                div = integer(spec, "div", 1, false);
                mod = integer(spec, "mod", 0, false);
                if (div == 0)
                    throw WorkerError.protocol("seq: div must not be 0");
            }
            case UNIFORM -> {
                lo = integer(spec, "lo", 0, true);
                long hi = integer(spec, "hi", 0, true);
                BigInteger s = BigInteger.valueOf(hi).subtract(BigInteger.valueOf(lo)).add(BigInteger.ONE);
                if (s.signum() <= 0)
                    throw WorkerError.protocol("uniform: hi must be >= lo");
                span = s.longValue(); // 2^64 → 0
            }
            case CHOICE -> {
                JsonNode vs = spec.get("values");
                if (vs == null || !vs.isArray() || vs.size() == 0)
                    throw WorkerError.protocol("choice needs a non-empty list of values");
                choices = new Object[vs.size()];
                for (int j = 0; j < vs.size(); j++)
                    choices[j] = type.fromJson(vs.get(j));
            }
            case TEXT -> {
                JsonNode p = spec.get("pattern");
                if (p == null || !p.isTextual())
                    throw WorkerError.protocol("text needs a pattern");
                pattern = p.textValue().codePoints().toArray();
            }
            case TIMESTAMP -> {
                JsonNode s = spec.get("start");
                if (s == null || !s.isTextual())
                    throw WorkerError.protocol("timestamp needs a start (ISO 8601 text)");
                tsStart = Times.parseIso(s.textValue());
                stepUs = integer(spec, "step_us", 1_000_000, false);
                jitterUs = integer(spec, "jitter_us", 0, false);
            }
            case CONST -> choices = new Object[] {type.fromJson(spec.get("value"))};
            case FLOAT -> {
                floatLo = number(spec, "lo");
                floatHi = number(spec, "hi");
                JsonNode d = spec.get("digits");
                if (d != null && !d.isNull()) {
                    long digits = integer(spec, "digits", 0, true);
                    if (digits < 0 || digits > 22)
                        throw WorkerError.protocol("float: digits from 0 to 22 (10^digits exact), not " + digits);
                    scale = 1.0; // 10^digits by exact multiplications, as every worker makes it
                    for (long j = 0; j < digits; j++)
                        scale *= 10.0;
                }
            }
            case DECIMAL -> {
                decLo = bigInteger(spec, "lo");
                decSpan = bigInteger(spec, "hi").subtract(decLo).add(BigInteger.ONE);
                if (decSpan.signum() <= 0)
                    throw WorkerError.protocol("decimal: hi must be >= lo");
                long sc = integer(spec, "scale", 0, false);
                if (sc < 0 || sc > 1000)
                    throw WorkerError.protocol("decimal: scale from 0 to 1000, not " + sc);
                decScale = (int) sc;
            }
            case DATE -> {
                JsonNode s = spec.get("start");
                if (s == null || !s.isTextual())
                    throw WorkerError.protocol("date needs a start (YYYY-MM-DD)");
                dayStart = ((LocalDate) ValueType.DATE.fromJson(s)).toEpochDay();
                stepDays = integer(spec, "step_days", 1, false);
                jitterDays = integer(spec, "jitter_days", 0, false);
            }
            case BYTES -> {
                long len = integer(spec, "length", 0, true);
                if (len < 0 || len > Integer.MAX_VALUE - 8)
                    throw WorkerError.protocol("bytes: length must be >= 0, not " + len);
                length = (int) len;
            }
        }
    }

    /** Value i; called with i = 0, 1, 2, … in order (draws are consumed as they are made). */
    Object next(long i) {
        // The null draw comes first; a NULL value makes no value draws.
        if (nullP != 0.0 && rng.unit() < nullP)
            return null;
        switch (kind) {
            case SEQ: {
                long v = Math.floorDiv(start + i * step, div);
                return mod != 0 ? Math.floorMod(v, mod) : v;
            }
            case UNIFORM: {
                long r = rng.next();
                return span == 0 ? lo + r : lo + Long.remainderUnsigned(r, span);
            }
            case CHOICE:
                return choices[(int) Long.remainderUnsigned(rng.next(), choices.length)];
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
            case FLOAT: {
                double v = floatLo + rng.unit() * (floatHi - floatLo);
                return Double.isNaN(scale) ? v : Math.floor(v * scale + 0.5) / scale;
            }
            case DECIMAL: {
                long r = rng.next(); // a span of 2^64 or more: every draw is below it
                long m = decSpan.bitLength() > 64 ? r : Long.remainderUnsigned(r, decSpan.longValue());
                return new BigDecimal(decLo.add(unsigned(m)), decScale);
            }
            case DATE: {
                long offset = i * stepDays + (jitterDays != 0 ? Long.remainderUnsigned(rng.next(), jitterDays + 1) : 0);
                return LocalDate.ofEpochDay(dayStart + offset);
            }
            case BYTES: {
                byte[] b = new byte[length];
                for (int j = 0; j < length; j++)
                    b[j] = (byte) Long.remainderUnsigned(rng.next(), 256);
                return b;
            }
            case CONST:
            default:
                return choices[0];
        }
    }
}
