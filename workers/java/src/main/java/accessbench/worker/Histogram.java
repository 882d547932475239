package accessbench.worker;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The latency histogram of a loaded step (src/accessbench/protocol/histogram.py): bounded
 * memory, every operation counted, within 0.8% of the true value.
 *
 * Log-linear buckets over integer nanoseconds, computed with integer operations only so that
 * every language files a value in the same bucket: a value under 256 is its own bucket; above,
 * a value v of bit length L falls in bucket (L − 8)·128 + (v >> (L − 8)), its top eight bits.
 * Values of 2^40 ns or more count in overflow. The counts are a fixed array, so recording is
 * an index computation and an increment: no allocation per operation. */
final class Histogram {
    static final int MANTISSA_BITS = 8;
    static final int SUB = 1 << (MANTISSA_BITS - 1); // 128 buckets per power of two above the exact range
    static final int EXACT = 1 << MANTISSA_BITS;      // 0..255 are their own bucket
    static final long LIMIT = 1L << 40;               // from here on: overflow
    /** every bucket of a value under LIMIT (the highest is 32·128 + 255) */
    static final int BUCKETS = (40 - MANTISSA_BITS + 1) * SUB + EXACT;

    final long[] counts = new long[BUCKETS];
    long overflow;
    long min = Long.MAX_VALUE;
    long max;
    long sum; // of every value, ns (for the mean)

    /** The bucket of a latency in nanoseconds, 0 <= v < LIMIT. */
    static int index(long v) {
        if (v < EXACT)
            return (int) v;
        int shift = 64 - Long.numberOfLeadingZeros(v) - MANTISSA_BITS;
        return shift * SUB + (int) (v >>> shift);
    }

    void record(long v) {
        if (v < 0) // not from a monotonic clock; kept out of the negative range all the same
            v = 0;
        if (v >= LIMIT)
            overflow++;
        else
            counts[index(v)]++;
        if (v < min)
            min = v;
        if (v > max)
            max = v;
        sum += v;
    }

    void merge(Histogram o) {
        for (int b = 0; b < BUCKETS; b++)
            counts[b] += o.counts[b];
        overflow += o.overflow;
        min = Math.min(min, o.min);
        max = Math.max(max, o.max);
        sum += o.sum;
    }

    /** The wire form: [bucket, count] pairs of the buckets in use, ascending. */
    ObjectNode toJson(JsonNodeFactory f) {
        ObjectNode h = f.objectNode();
        ArrayNode buckets = h.putArray("buckets");
        long seen = overflow;
        for (int b = 0; b < BUCKETS; b++) {
            if (counts[b] != 0) {
                buckets.addArray().add(b).add(counts[b]);
                seen += counts[b];
            }
        }
        h.put("overflow", overflow);
        h.put("min", seen == 0 ? 0 : min);
        h.put("max", max);
        h.put("sum", sum);
        return h;
    }
}
