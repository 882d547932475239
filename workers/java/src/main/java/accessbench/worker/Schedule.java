package accessbench.worker;

/** When each operation of an open-loop (rate) step is meant to start, relative to the trial's
 * start: the same offsets in every language (src/accessbench/protocol/schedule.py). Uniform
 * arrivals are evenly spaced; Poisson arrivals have exponential gaps drawn from splitmix64
 * (u from the top 53 bits, gap = −ln(1 − u) · 10^9 / rate), as pgbench -R draws them. */
final class Schedule {
    private final double meanGapNs;
    private final boolean poisson;
    private final SplitMix64 rng;
    private double at; // the accumulator is a double, as in the reference: offsets truncate it

    Schedule(double ratePerS, String arrival, long seed) throws WorkerError {
        if (!(ratePerS > 0) || Double.isInfinite(ratePerS))
            throw WorkerError.protocol("rate must be a positive number, not " + ratePerS);
        if (!arrival.equals("poisson") && !arrival.equals("uniform"))
            throw WorkerError.protocol("unknown arrival '" + arrival + "' (poisson, uniform)");
        meanGapNs = 1e9 / ratePerS;
        poisson = arrival.equals("poisson");
        rng = new SplitMix64(seed);
    }

    /** The offset in ns of the next operation (the first is at 0). StrictMath.log is fdlibm's:
     * the same bits on every JVM (Math.log may be an intrinsic that differs in the last bit). */
    long next() {
        double offset = at;
        at += poisson ? -StrictMath.log(1.0 - rng.unit()) * meanGapNs : meanGapNs;
        return (long) offset; // toward zero, as Python's int()
    }
}
