package accessbench.worker;

/** splitmix64 (protocol/PROTOCOL.md, src/accessbench/protocol/prng.py): all arithmetic mod 2^64,
 * which is what Java's long arithmetic does; shifts are unsigned. */
final class SplitMix64 {
    private long state;

    SplitMix64(long seed) {
        state = seed;
    }

    long next() {
        state += 0x9E3779B97F4A7C15L;
        long z = state;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** A double in [0, 1) from the top 53 bits: exact in every IEEE-754 language. */
    double unit() {
        return (next() >>> 11) * 0x1.0p-53;
    }

    static final long FNV_OFFSET = 0xcbf29ce484222325L;
    static final long FNV_PRIME = 0x100000001b3L;
}
